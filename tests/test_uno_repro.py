"""The UNO paper's experiments (seed 001, §IV) end to end in quick form, and UNO across legacy
routers. Asserted: what our runs support under the default readings — UCP1 above VCP at 100 Mb/s
and 1 Gb/s at 15 s, VCP falling with capacity, the load-information delay near the paper's
0.07 ms at 1 Gb/s and 22 packets per block with random IP-IDs, UCP1 recovering after the UDP
flow leaves and converging faster after joins, UCP2's near-equal shares. Reported, not
asserted: the long-RTT claims of Fig. 5, which depend on the MI exponent's cap (module doc of
``ecnlab.experiments.uno``). Also: every parameter of every run has a source, every reading
changes a run (or the analysis), and Fig. 7's link-use claim fails when TCP delivers nothing."""

from __future__ import annotations

import json

import polars as pl
import pytest

import ecnlab
from ecnlab.experiments import select, uno
from ecnlab.experiments._provenance import check_sources, join
from ecnlab.experiments.base import Reading
from ecnlab.experiments.verdict import Claim


def test_every_scheme_builds_and_the_feedback_columns_are_filled():
    for s in uno.SCHEMES.values():
        sc = uno.scenario(s, 10e6, [40.0, 80.0], 2.0, seed=3)
        ecnlab.validate(sc)
    r = ecnlab.run(uno.scenario(uno.UCP1, 10e6, [40.0], 5.0, seed=1, ip_id="random"))
    f = r.flow("f0")
    # Random IP-IDs: a block needs ~21.7 packets on average (coupon collector over 8).
    per_block = f["packets_sent"] / f["feedback_decisions"]
    assert 18 < per_block < 26, per_block
    assert 0 < f["feedback_delay_mean_s"] < 0.05
    r = ecnlab.run(uno.scenario(uno.VCP, 10e6, [40.0], 2.0, seed=1))
    assert r.flow("f0")["feedback_decisions"] is None


def test_start_offsets_are_drawn_from_the_seed():
    a = uno.scenario(uno.UCP1, 10e6, [40.0, 60.0], 1.0, seed=1).to_toml()
    assert a == uno.scenario(uno.UCP1, 10e6, [40.0, 60.0], 1.0, seed=1).to_toml()
    assert a != uno.scenario(uno.UCP1, 10e6, [40.0, 60.0], 1.0, seed=2).to_toml()


@pytest.fixture(scope="module")
def summary(quick_reproduction):
    out, s = quick_reproduction("uno")
    figures = {p.name for p in (out / "figures").glob("*.png")}
    for name in ("fig4_utilization", "fig5_rtt", "fig6_staggered", "fig7_udp", "fig8_fairness"):
        assert any(name in f for f in figures), (name, figures)
    assert json.loads((out / "summary.json").read_text()) == s
    return s


def _verdict(summary, experiment: str, metric: str) -> str:
    got = [c for c in summary["comparisons"] if c["experiment"] == experiment and c["metric"] == metric]
    assert len(got) == 1, (experiment, metric, [c["metric"] for c in summary["comparisons"] if c["experiment"] == experiment])
    return got[0]["verdict"]


def test_fig4_ucp1_above_vcp_which_falls_with_capacity(summary):
    for c in ("100", "1000"):
        assert _verdict(summary, "uno.utilization", f"UCP1 vs VCP utilisation, {c} Mb/s") == "holds"
    assert _verdict(summary, "uno.utilization", "VCP utilisation at 15 s, 1000 vs 1 Mb/s") == "holds"
    assert _verdict(summary, "uno.utilization", "UCP1 load-information delay at 1 Gb/s") == "holds"
    assert _verdict(summary, "uno.utilization", "UCP1 packets per load decision, random IP-IDs, 1000 Mb/s") == "holds"
    for c in ("1", "10", "100", "1000"):
        assert _verdict(summary, "uno.utilization", f"UCP1 vs VCP3 utilisation, {c} Mb/s") == "holds"
        assert _verdict(summary, "uno.utilization", f"UCP1 sequential vs random IP-IDs, {c} Mb/s") != "contradicted"


def test_dynamics_and_fairness(summary):
    assert _verdict(summary, "uno.udp", "recovery to 80 % after the UDP flow leaves, UCP1") == "holds"
    assert _verdict(summary, "uno.udp", "link use while the UDP flow runs (TCP + UDP, wire bits), UCP1") == "holds"
    # The join's losses cut the window before any load factor can: fixed by the mechanism.
    assert _verdict(summary, "uno.udp", "adjustment to the UDP flow: the queue it builds drained, UCP1") == "fixed by the mechanism"
    assert _verdict(summary, "uno.staggered", "mean convergence time after a join: UCP1 vs VCP") == "holds"
    assert _verdict(summary, "uno.fairness", "Jain's index, UCP2") == "holds"


def test_fig5_claims_are_all_decided(summary):
    got = [c for c in summary["comparisons"] if c["experiment"] == "uno.rtt"]
    assert len(got) == 10
    assert all(c["verdict"] in ("holds", "contradicted", "inconclusive") for c in got)


def test_legacy_mix_runs_and_reports(quick_reproduction):
    _, s = quick_reproduction("mix")
    got = [c for c in s["comparisons"] if c["experiment"] == "mix.uno-legacy"]
    assert len(got) == 4
    assert _verdict(s, "mix.uno-legacy", "UCP1 link use behind a legacy RED+ECN router") == "holds"


def test_ucp2_routers_t_rho_settles_with_queueing():
    """Fig. 8's 30 flows (RTTs 40–156 ms) keep a standing queue, so the senders' smoothed
    RTTs move across 140 ms, the midpoint of 80 and 200 ms. The routers' t_ρ must not follow
    (§III-B: S "avoids any fluctuations in t_ρ due to minor variations in flows' RTT"); it
    flapped between 80 and 200 ms, 40–80 times per sender in 30 s, when senders told their
    smoothed RTT and routers took the element of S nearest the mean."""
    sc = uno.scenario(uno.UCP2, 45e6, uno.Fairness.RTTS, 20.0, seed=1)
    sc.set("measure.interval", "10ms")
    r = ecnlab.run(sc)
    for f in ("f0", "f15", "f29"):
        v = r.series("t_rho_s", f).filter(pl.col("time_s") > 5.0).sort("time_s")["value"].to_list()
        assert set(v) == {0.2}, (f, sorted(set(v)))



def _quick_runs(exp, reading):
    return {k: ecnlab.validate(v) for k, v in exp.runs(True, [1], reading).items()}


def test_every_parameter_of_every_run_has_a_source():
    """Every key of every run's fully-defaulted scenario, under every reading, is covered by
    the experiment's sources or ns-2's host profile, and a [tcp] value that leaves the
    profile is declared."""
    for exp in select("uno") + select("mix.uno-legacy"):
        for rd in Reading.choose(exp.axes, "all"):
            sources = exp.provenance(True, rd)
            check_sources(sources)
            p = join(_quick_runs(exp, rd), sources, exp.hosts)
            assert p.complete, (exp.name, rd.name, p.problems())


def test_every_reading_changes_a_run_or_the_analysis():
    for exp in select("uno") + select("mix.uno-legacy"):
        base = _quick_runs(exp, Reading(exp.axes))
        for ax in exp.axes:
            for v in ax.values[1:]:
                got = _quick_runs(exp, Reading(exp.axes, {ax.name: v}))
                changed = any(got.get(k) != t for k, t in base.items())
                assert changed == (ax.affects == "runs"), (exp.name, ax.name, v)
    # Under ip_id=random, Fig. 4's UCP1 arm runs random IP-IDs and the other arm sequential
    # ones (it ran both with sequential IP-IDs, so the comparison compared identical runs).
    exp = uno.Utilization()
    runs = exp.runs(True, [1], Reading(exp.axes, {"ip_id": "random"}))
    assert runs["ucp1-1M-s1"].get("hosts.ip_id") == "random"
    assert runs["ucp1-sequential-1M-s1"].get("hosts.ip_id") == "sequential"
    assert runs["vcp-1M-s1"].get("hosts.ip_id") == "random"


def test_fig7_link_use_is_contradicted_when_tcp_delivers_nothing():
    """The link-use claim counts wire bits: the UDP flow alone fills 40/45 = 0.889 of the
    wire. It used to add UDP wire bytes to TCP payload bytes over the payload capacity, so the
    UDP flow alone scored 0.926 and a TCP flow that delivered nothing still got close."""
    sc = uno.scenario(uno.UCP1, uno.DYN_CAPACITY, [80.0], uno.UDP_STOP_S, seed=1, udp=(uno.UDP_RATE, uno.UDP_START_S, uno.UDP_STOP_S))
    sc.set("flows[0].start", "1000s")  # the TCP flow never starts
    with pytest.warns(ecnlab.RunWarning, match="sends nothing"):
        r = ecnlab.run(sc)
    alone = uno.wire_use(r, uno.UDP_START_S + 2, uno.UDP_STOP_S, uno.DYN_CAPACITY)
    assert abs(alone - uno.UDP_RATE / uno.DYN_CAPACITY) < 0.01, alone
    d = Claim("at_least", uno.UDP_LINK_USE).decide({s: alone for s in range(1, 6)})
    assert d.verdict.value == "contradicted", d.reason


def test_fig7_adjustment_and_recovery_count_a_seed_that_never_gets_there():
    """Fig. 7's "quickly adjusts its congestion window" is the queue the UDP flow's join builds,
    drained for 1 s; "rapidly … high utilization" the TCP flow back at 80 %. A seed where either
    never happens is ∞ and contradicts the claim (a recovery that never came was left out of
    it, so the worst outcome could not count against it); a join that builds no queue is left
    out with its reason, not scored as an instant adjustment."""
    horizon = uno.UDP_STOP_S + 5.0
    # A UDP flow faster than the link keeps the queue full whatever the TCP flow does.
    sc = uno.scenario(uno.UCP1, uno.DYN_CAPACITY, [80.0], horizon, seed=1, udp=(1.2 * uno.DYN_CAPACITY, uno.UDP_START_S, uno.UDP_STOP_S))
    assert uno.Udp.adjust_s(ecnlab.run(sc)) == float("inf")
    # A TCP flow that never starts never recovers, and the queue never rises.
    sc = uno.scenario(uno.UCP1, uno.DYN_CAPACITY, [80.0], horizon, seed=1, udp=(uno.UDP_RATE, uno.UDP_START_S, uno.UDP_STOP_S))
    sc.set("flows[0].start", "1000s")
    with pytest.warns(ecnlab.RunWarning, match="sends nothing"):
        r = ecnlab.run(sc)
    assert uno.Udp.recovery_s(r) == float("inf")
    assert "built no queue" in uno.Udp.adjust_s(r).reason
    d = Claim("at_most", uno.RAPID_RECOVERY_S).decide({s: float("inf") for s in range(1, 6)})
    assert d.verdict.value == "contradicted", d.reason
    # The default run adjusts and recovers within the bound.
    sc = uno.scenario(uno.UCP1, uno.DYN_CAPACITY, [80.0], horizon, seed=1, udp=(uno.UDP_RATE, uno.UDP_START_S, uno.UDP_STOP_S))
    r = ecnlab.run(sc)
    assert 0.0 < uno.Udp.adjust_s(r) <= uno.RAPID_RECOVERY_S and uno.Udp.recovery_s(r) <= uno.RAPID_RECOVERY_S
