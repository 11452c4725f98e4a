"""The mobility capacity model: seeded, within the MCS table's range, the medium's harmonic
mean; a mahimahi trace written from rates carries them."""

from __future__ import annotations

import statistics

from ecnlab.wireless import MCS_TABLE, MobilityModel, mahimahi_lines, phy_rate_mbps, rssi_dbm


def test_path_loss_and_mcs_by_hand():
    # 20 dBm − (46.7 + 30·log10(10)) = −56.7 dBm at 10 m: MCS 7 (−57 dBm), 720.6 Mb/s.
    assert abs(rssi_dbm(10.0) - (-56.7)) < 1e-9
    assert phy_rate_mbps(-56.7) == 720.6
    assert phy_rate_mbps(-80) == 0.0
    assert phy_rate_mbps(-40) == MCS_TABLE[-1][1]


def test_rates_are_seeded_and_bounded():
    m = MobilityModel()
    a, b, c = m.rates_bps(5, 1), m.rates_bps(5, 1), m.rates_bps(5, 2)
    assert a == b and a != c and len(a) == 500
    top = MCS_TABLE[-1][1] * 1e6 * m.efficiency
    floor = MCS_TABLE[0][1] * 1e6 * m.efficiency
    assert all(floor <= r <= top for r in a)
    assert statistics.pstdev(a) > 0.1 * statistics.mean(a)  # it fluctuates


def test_one_still_client_without_fading_is_its_mcs():
    m = MobilityModel(clients=1, speed_min=1e-9, speed_max=1e-9, fading_db=0.0)
    r = m.rates_bps(0.1, 3)
    assert len(set(r)) == 1 and r[0] in {mbps * 1e6 * 0.6 for _, mbps in MCS_TABLE}


def test_mahimahi_lines_carry_the_rates():
    # 24 Mb/s for 10 ms then 12 Mb/s for 10 ms: 2 then 1 opportunities per ms.
    lines = mahimahi_lines([24e6, 12e6], 0.01)
    assert lines.count(1) == 2 and lines.count(15) == 1 and lines[-1] == 20
    assert len(lines) == 30


def test_mobility_trace_command_writes_the_models_rates(tmp_path, capsys):
    from ecnlab.cli import main

    out = tmp_path / "walk.trace"
    assert main(["mobility-trace", str(out), "--duration", "2", "--seed", "7", "--quiet"]) == 0
    first = out.read_text()
    assert main(["mobility-trace", str(out), "--duration", "2", "--seed", "7", "--quiet"]) == 0
    assert out.read_text() == first  # seeded: the same file again
    lines = [int(x) for x in first.split()]
    rates = MobilityModel().rates_bps(2, 7)
    # The trace carries the model's mean rate (to one opportunity) and lasts 2 s.
    assert lines[-1] == 2000
    assert abs(len(lines) * 1500 * 8 / 2.0 - statistics.mean(rates)) <= 1500 * 8 / 2.0
    assert lines == mahimahi_lines(rates, 0.01)


def test_mobility_trace_command_refuses_bad_options_by_name(tmp_path, capsys):
    from ecnlab.cli import main

    out = tmp_path / "walk.trace"
    cases = [
        (["--speed-min", "2", "--speed-max", "1"], "--speed-min"),
        (["--efficiency", "1.5"], "--efficiency"),
        (["--fading-db", "-3"], "--fading-db"),
        (["--step", "0.0015"], "--step"),
        (["--step", "5", "--duration", "1"], "--step"),
    ]
    for extra, name in cases:
        assert main(["mobility-trace", str(out), *extra]) == 2, extra
        assert name in capsys.readouterr().err
        assert not out.exists()
    assert main(["mobility-trace", str(tmp_path / "missing" / "x.trace")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_airtime_fairness_carries_the_arithmetic_mean_of_the_clients_rates():
    """Equal frame shares give the harmonic mean (the anomaly); equal airtime the arithmetic
    mean: the same movement and losses (same seed), so arithmetic ≥ harmonic at every step,
    and equal where the two clients' rates are."""
    kw = dict(clients=2, fading_db=0.0, fixed_loss_db=1.0, tx_power_dbm=16.0206, speed_min=0.3, speed_max=0.7, pause_s=2.0)
    h = MobilityModel(**kw).rates_bps(5.0, 3)
    a = MobilityModel(**kw, airtime_fair=True).rates_bps(5.0, 3)
    assert all(x >= y * (1 - 1e-12) for x, y in zip(a, h))
    assert any(x > y * 1.01 for x, y in zip(a, h)), "the two clients never had different rates"


def test_ns3s_constant_loss_leaves_the_capacity_to_distance():
    """RandomPropagationLossModel's default is a constant 1 dB: with no fade, a client that
    pauses keeps its rate, so the capacity changes only as the clients move (here at most
    0.7 m/s over 10-ms steps: far fewer changes than with a 0–30 dB fade every step)."""
    quiet = MobilityModel(clients=1, fading_db=0.0, fixed_loss_db=1.0, speed_min=0.3, speed_max=0.7, pause_s=2.0).rates_bps(10.0, 1)
    faded = MobilityModel(clients=1).rates_bps(10.0, 1)
    changes = lambda xs: sum(1 for p, q in zip(xs, xs[1:]) if p != q)
    assert changes(quiet) < changes(faded) / 10
