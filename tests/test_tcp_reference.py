"""bench/tcp_reference.py: the TCP reference scenarios and the table that sets ecnlab's TCP
beside Linux and ns-3 (the reference runs themselves need root and the ns3 wheel and are
made outside the tests)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import ecnlab

REPO = Path(__file__).resolve().parent.parent


def _load():
    path = REPO / "bench" / "tcp_reference.py"
    spec = importlib.util.spec_from_file_location("_tcp_reference_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


ref = _load()


def test_every_reference_scenario_exists_and_is_valid():
    files = sorted(p.stem for p in (REPO / "scenarios" / "tcp").glob("*.toml"))
    # Every reference scenario, and the DCTCP one at emulation rates beside them.
    assert sorted(files + ["emulate_dctcp_step"]) == sorted(ref.SCENARIOS)
    for stem in ref.SCENARIOS:
        ecnlab.validate(ref._scenario_path(stem))
    # The scaled ns-3 run is the scenario file's network.
    d = ecnlab.Scenario.from_file(ref._scenario_path("emulate_dctcp_step")).to_dict()
    ns3_params = ref.SCENARIOS["emulate_dctcp_step"][1][2]
    assert (d["topology"]["bottleneck"]["rate"], d["topology"]["access"]["rate"]) == (ns3_params["bottleneck_rate"], ns3_params["access_rate"])


def test_metrics_of_a_run_and_the_table(tmp_path: Path):
    s = ecnlab.Scenario.from_file(REPO / "scenarios" / "tcp" / "bbr_deep_buffer.toml")
    d = s.to_dict()
    d["duration"] = "1s"
    ecnlab.run(ecnlab.Scenario(d)).to_parquet(tmp_path / "r")
    m = ref.metrics_from_run(tmp_path / "r", ["rl->rr"])
    assert set(m["flows"]) == {"bbr.0", "bbr.1"}
    assert m["flows"]["bbr.0"]["goodput"] > 10
    assert m["ports"]["rl->rr"]["p95_queue"] is not None

    def run(goodput: float, retx: int, drops: int) -> dict:
        return {
            "flows": {"a": {"goodput": goodput, "retransmissions": retx, "rtos": 0, "rtt_mean": None}},
            "ports": {"p": {"drops": drops, "marks": 0, "mean_queue": 10.0, "p95_queue": 20.0}},
        }

    got = {"before": [], "ecnlab": [run(9, 10, 10), run(11, 30, 10)], "Linux": [run(10, 5, 5), run(10, 5, 5)]}
    text = ref.table("parking_lot_red_ecn", ["linux"], got)
    assert "| flow a | goodput Mb/s | 10 (9–11) | 10 (10–10) | +0 % | 1 |" in text
    # {10, 30} against {5, 5}: 2 of the 6 splits of the four values are as far apart.
    assert "| flow a | retransmissions | 20 (10–30) | 5 (5–5) | +300 % | 0.33 |" in text
    assert "| all | retransmissions / drops | 2 (1–3) | 1 (1–1) | +100 % | 1 |" in text
    assert "ecnlab before" not in text
    # Two references: each one's column, difference and test.
    got["ns-3"] = [run(12, 20, 10), run(12, 20, 10)]
    text = ref.table("emulate_dctcp_step", ["linux", ("ns3", "dctcp10g", {})], got)
    assert "| | metric | ecnlab | Linux | ns-3 | ecnlab vs Linux | p | ecnlab vs ns-3 | p |" in text.replace("|  |", "| |")
    assert "| flow a | goodput Mb/s | 10 (9–11) | 10 (10–10) | 12 (12–12) | +0 % | 1 | -17 % | 0.33 |" in text


def test_the_permutation_test_by_hand():
    # 20 splits of six values into three and three; only the observed one and its mirror
    # are as far apart as {1, 2, 3} against {4, 5, 6}.
    assert ref.permutation_p([1, 2, 3], [4, 5, 6]) == 0.1
    assert ref.permutation_p([5, 5], [5, 5]) == 1.0
    assert ref.permutation_p([1], [2, 3]) is None
    # Too many splits for all of them: seeded resamples, the same answer every time.
    a, b = [float(x) for x in range(12)], [float(x) + 6 for x in range(12)]
    p = ref.permutation_p(a, b)
    assert p == ref.permutation_p(a, b) and 0.0 < p < 0.05


def test_ns3_report_maps_to_the_scenario_flows():
    report = {
        "flows": [{"goodput_bps": 2e9, "retransmissions": 0, "rtos": 0}, {"goodput_bps": 1e6, "retransmissions": 9, "rtos": 9}],
        "bottleneck": {"dropped": 0, "marked": 100, "mean_queue_pkts": 61.9, "queue_series_pkts": [60, 66, 70]},
    }
    m = ref.metrics_from_ns3(report, ["dctcp.0", "dctcp.1"], "rl->rr")
    assert m["flows"]["dctcp.1"] == {"goodput": 1.0, "retransmissions": 9, "rtos": 9, "recoveries": None, "loss_probes": None, "rtt_mean": None}
    assert m["ports"]["rl->rr"]["marks"] == 100


def test_a_simulated_mecn_run_counts_its_ecn_cuts_apart_from_its_losses(tmp_path: Path):
    s = ecnlab.Scenario.from_file(REPO / "scenarios" / "emulate_mecn.toml").to_dict()
    s["duration"] = "5s"
    ecnlab.run(ecnlab.Scenario(s)).to_parquet(tmp_path / "r")
    m = ref.metrics_from_run(tmp_path / "r", ["rl->rr"])
    cuts = m["senders"]["all"]
    # The first flow's slow start overshoots into RED's drops: loss cuts, and ECN cuts of the
    # incipient level, counted apart (a simulated run has no emulation facts).
    assert cuts["loss_cuts"] >= 1 and cuts["ecn_cuts_l1"] > 10 and "ecn_cuts_l2" in cuts
    assert m["run"] == {}
    text = ref.table("emulate_mecn", ["linux"], {"before": [], "ecnlab": [m, m], "Linux": [m, m]})
    assert "| senders | loss cuts |" in text and "| senders | ECN cuts, level 1 (incipient) |" in text
