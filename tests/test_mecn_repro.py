"""The MECN paper's experiments (seed 002, §3): the runs are what the paper (and, where it is
silent, ns-2) specifies, the six scenarios run as files, the claims can come out contradicted
on per-seed values built to contradict them, and the quick reproduction decides every claim
with its smallest effect, its family and its sources. No test asserts the paper's verdicts: a
correct change that turns one must not fail here."""

from __future__ import annotations

import json
import math
import tomllib
from typing import Any

import polars as pl
import pytest

import ecnlab
from conftest import REPO
from ecnlab.experiments import decide_families, mecn
from ecnlab.experiments.base import NS2_HOSTS, RunSet
from ecnlab.experiments.verdict import Claim

SCENARIO_DIR = REPO / "scenarios" / "mecn"


def test_scenario_files_are_the_experiments_scenarios():
    files = sorted(SCENARIO_DIR.glob("*.toml"))
    expected = {mecn.scenario_file_name(k, s) for k in mecn.SETUPS for s in mecn.SCHEMES}
    assert {p.name for p in files} == expected
    for key in mecn.SETUPS:
        for scheme in mecn.SCHEMES:
            p = SCENARIO_DIR / mecn.scenario_file_name(key, scheme)
            data = tomllib.loads(p.read_text(encoding="utf-8"))
            assert data == mecn.scenario(key, scheme, mecn.QUEUE_MIN_TH).to_dict(), p.name


def defaulted(s: ecnlab.Scenario) -> dict:
    return tomllib.loads(ecnlab.validate(s))


def test_paper_topology_thresholds_and_window():
    s = mecn.scenario("s6-five-different-rtt", "mecn", 4).to_dict()
    links = {(l["a"], l["b"]): l for l in s["topology"]["links"]}
    q = links[("r1", "r2")]["queue"]
    assert (q["min_th"], q["mid_th"], q["max_th"], q["p1_max"], q["p2_max"], q["w_q"]) == (4, 8, 16, 0.1, 0.1, 0.002)
    red = mecn.scenario("s1-two-same-rtt", "ecn", 4).to_dict()["topology"]["links"][2]["queue"]
    assert (red["kind"], red["min_th"], red["max_th"], red["ecn"]) == ("red", 4, 8, True)
    assert s["tcp"]["rcv_buf"] == 25 * s["tcp"]["mss"] and s["tcp"]["mss"] + 40 == 1000
    assert all(f["cc_params"]["max_window"] == 25 for f in s["flows"])
    # Different RTTs come from the source links only; the fixed RTT is the paper's 59 ms.
    assert [links[(f"s{k}", "r1")]["delay"] for k in range(5)] == ["2ms", "7ms", "12ms", "17ms", "22ms"]
    assert abs(mecn.fixed_rtt_ms(2.0) - 59.0) < 0.5


def test_where_the_paper_is_silent_the_runs_are_ns2s():
    for scheme in mecn.SCHEMES:
        d = defaulted(mecn.scenario("s1-two-same-rtt", scheme, 5))
        tcp = d["tcp"]
        # ns-2's hosts: the window cut at once (no PRR), no F-RTO, RACK, TLP or SACK.
        assert (tcp["cwnd_reduction"], tcp["frto"], tcp["rack"], tcp["tlp"], tcp["sack"]) == ("immediate", False, False, False, False), scheme
        assert {k: v for k, v in tcp.items() if k not in ("mss", "rcv_buf", "limited_transmit")} == {
            k: v for k, v in NS2_HOSTS.tcp().items() if k not in ("mss", "rcv_buf", "limited_transmit")
        }
        bottleneck = next(l for l in d["topology"]["links"] if l["a"] == "r1")
        # ns-2's Queue limit_ 50 and mean_pktsize_ 500; every other queue ns-2's DropTail 50.
        assert (bottleneck["queue"]["limit"], bottleneck["queue"]["mean_pkt_size"]) == (50, 500)
        assert all(l[k]["limit"] == 50 for l in d["topology"]["links"] for k in ("queue", "queue_ba") if l[k]["kind"] == "droptail")
        # ns-2's TCP sends retransmissions ECT; both arms react from min(cwnd, window_) = cwnd.
        assert all(f["ecn_params"]["ect_on_retransmissions"] for f in d["flows"])
        assert all(f["cc_params"]["reduce_from"] == "cwnd" and f["cc_params"]["ca_increase"] == "per_ack" for f in d["flows"])
        if scheme == "ecn":
            assert bottleneck["queue"]["gentle"] is True
            assert all(f["cc_params"]["initial_ssthresh"] == 25 * mecn.MSS for f in d["flows"])
    # The readings change the runs they name.
    rd = mecn.Readings(buffer=200, ecn_gentle=False, ect_retransmissions=False, initial_window=1)
    d = defaulted(mecn.scenario("s1-two-same-rtt", "ecn", 5, readings=rd))
    q = next(l for l in d["topology"]["links"] if l["a"] == "r1")["queue"]
    assert (q["limit"], q["gentle"], d["tcp"]["initial_window"]) == (200, False, 1)
    assert not d["flows"][0]["ecn_params"]["ect_on_retransmissions"]


def test_every_parameter_has_a_source():
    from ecnlab.experiments import get
    from ecnlab.experiments._provenance import join
    from ecnlab.experiments.base import Reading

    for name in ("mecn.queue", "mecn.efficiency", "mecn.throughput", "mecn.drops", "mecn.scenarios"):
        e = get(name)
        assert e.hosts is NS2_HOSTS and e.bottleneck("any") == mecn.PORT
        for rd in Reading.choose(e.axes, "all"):
            runs = e.runs(True, [1], rd)
            p = join({k: ecnlab.validate(v) for k, v in runs.items()}, e.provenance(True, rd), e.hosts)
            assert p.complete, (name, rd.name, p.problems())


def test_the_six_scenarios_run_as_files():
    for key, setup in mecn.SETUPS.items():
        for scheme in mecn.SCHEMES:
            r = ecnlab.run(SCENARIO_DIR / mecn.scenario_file_name(key, scheme))
            assert r.flows.height == setup.n
            port = r.port(mecn.PORT)
            assert port["arrived_pkts"] > 0 and port["utilization"] > 0.5, (key, scheme)
            if scheme == "mecn":
                assert port["marked_ce"] + port["marked_ect1"] > 0, key  # marks at min_th 5 (moderate CE, incipient ECT(1))
            starts = r.flows["start_s"].to_list()
            assert starts == pytest.approx(list(setup.starts_s)), key
            if key == "s2-two-overlapping":
                # The first source stops writing at 9.5 s; the second never stops.
                assert r.flow("s1")["fct_s"] is None


# ------------------------------------------------- claims that can come out contradicted


class FakeRun:
    """What the claims read of a run: the bottleneck's drops and the flows' deliveries."""

    def __init__(self, dropped: float = 0.0, delivered: float = 0.0) -> None:
        self._port = {"dropped_pkts": dropped, "mean_queue_pkts": 0.0}
        self.flows = pl.DataFrame({"name": ["s0"], "bytes_delivered": [delivered]})
        self.meta = {"duration_s": mecn.DURATION_S}
        # No scenario: starvation is not checked on these runs (said on the claims).
        self.scenario_toml = ""

    def port(self, name: str) -> dict[str, Any]:
        return self._port


SEEDS = range(1, 6)
MS = (2.0, 4.0, 6.0, 10.0, 15.0)


def runset(values: dict[str, dict[float, float]], make) -> RunSet:
    """``values[variant key][min_th]`` for every seed, as a RunSet of fake runs."""
    return RunSet({f"{mecn._cfg(v, m)}-s{s}": make(x) for v in (mecn.ECN, mecn.MECN) for m, x in values[v.key].items() for s in SEEDS})


def test_zero_loss_point_comes_out_contradicted_when_ecn_reaches_it_first():
    runs = runset({"ecn": {2: 30, 4: 0, 6: 0, 10: 0, 15: 0}, "mecn": {2: 40, 4: 20, 6: 9, 10: 3, 15: 0}}, lambda d: FakeRun(dropped=d))
    z = {v.key: mecn.Drops._first_zero(runs, MS, v, "") for v in mecn.BASE}
    assert set(z["mecn"].values()) == {15.0} and set(z["ecn"].values()) == {4.0}
    assert Claim("less").decide(z["mecn"], z["ecn"]).verdict == "contradicted"
    assert Claim("less", min_effect=mecn.MUCH_LESS).decide(z["mecn"], z["ecn"]).verdict == "contradicted"
    # An arm that never reaches zero is ∞, which the other beats.
    runs = runset({"ecn": {m: 5 for m in MS}, "mecn": {2: 9, 4: 0, 6: 0, 10: 0, 15: 0}}, lambda d: FakeRun(dropped=d))
    z = {v.key: mecn.Drops._first_zero(runs, MS, v, "") for v in mecn.BASE}
    assert set(z["ecn"].values()) == {math.inf}
    assert Claim("less").decide(z["mecn"], z["ecn"]).verdict == "holds"


def test_best_efficiency_comes_out_contradicted_when_ecn_reaches_it_first():
    payload = mecn.BOTTLENECK_BPS * mecn.DURATION_S * mecn.MSS / mecn.PACKET_BYTES / 8
    runs = runset(
        {"ecn": {2: 0.90, 4: 0.97, 6: 0.97, 10: 0.97, 15: 0.97}, "mecn": {2: 0.80, 4: 0.90, 6: 0.95, 10: 0.97, 15: 0.97}},
        lambda e: FakeRun(delivered=e * payload),
    )
    rm, re = (mecn.best_min_th(runs, MS, v, mecn.Efficiency.PLATEAU) for v in (mecn.MECN, mecn.ECN))
    assert set(rm.values()) == {10.0} and set(re.values()) == {4.0}
    assert Claim("less").decide(rm, re).verdict == "contradicted"


def test_drop_claims_count_only_differences_that_matter():
    def verdict(ecn: float, mecn_: float) -> str:
        runs = runset({"ecn": {4: ecn}, "mecn": {4: mecn_}}, lambda d: FakeRun(dropped=d))
        return mecn.drops_claim(runs, mecn._cfg(mecn.MECN, 4), mecn._cfg(mecn.ECN, 4), "drops", "", "").verdict

    assert verdict(10, 5) == "holds"
    assert verdict(5, 10) == "contradicted"
    # One packet in 10 s, or 5 %, is no finding: a tie in every seed.
    assert verdict(1, 0) == "inconclusive" and verdict(0, 1) == "inconclusive"
    assert verdict(100, 95) == "inconclusive"


def test_a_family_is_decided_with_holm():
    runs = runset({"ecn": {m: 10 for m in MS}, "mecn": {2: 5, 4: 20, 6: 10, 10: 10, 15: 10}}, lambda d: FakeRun(dropped=d))
    comps = [mecn.drops_claim(runs, mecn._cfg(mecn.MECN, m), mecn._cfg(mecn.ECN, m), f"drops {m:g}", "", "", family="f") for m in MS]
    comps = decide_families(comps)
    assert [c.verdict.value for c in comps] == ["holds", "contradicted", "inconclusive", "inconclusive", "inconclusive"]
    # Five seeds (p = 1/32) do not survive Holm over five claims (α/5).
    assert [c.decision.family_verdict.value for c in comps[:2]] == ["inconclusive", "inconclusive"]
    assert all(c.decision.family_size == 5 for c in comps)
    # The family as one claim is the framework's verdict on every member (no row of its own).
    assert {c.family_whole[0].value for c in comps} == {"inconclusive"}
    assert "0 hold, 0 contradicted, 5 inconclusive of 5" in comps[0].family_whole[1]
    assert not hasattr(mecn, "family_summary") and not hasattr(mecn, "decide_families")


def test_convergence_time_on_a_hand_computed_step():
    # 20 packets until 3 s, then 10 (sampled every 10 ms over 10 s): the second-half mean is
    # 10, and the trailing 1-s mean 20·(4 − t) + 10·(t − 3) is within 2.5 of it from t = 3.75 s.
    t = [k / 100 for k in range(1, 1001)]
    q = [20.0 if x <= 3.0 else 10.0 for x in t]
    assert mecn.converge_time(t, q, 5.0) == pytest.approx(3.74)
    assert mecn.converge_time(t, [10.0] * len(t), 5.0) == 0.0


def test_drop_free_bound():
    # Two sources × 25 packets: an arrival finds at most 49; MECN forces drops from 4·min_th.
    assert mecn.drop_free("s1-two-same-rtt", "mecn", 15, mecn.Readings()) is not None
    assert mecn.drop_free("s1-two-same-rtt", "mecn", 12, mecn.Readings()) is None
    # ECN with gentle forces from 2·max_th = 4·min_th, without from 2·min_th.
    assert mecn.drop_free("s1-two-same-rtt", "ecn", 15, mecn.Readings()) is not None
    assert mecn.drop_free("s1-two-same-rtt", "ecn", 15, mecn.Readings(ecn_gentle=False)) is None
    # Not-ECT retransmissions can be dropped early; five sources can overflow 50 packets.
    assert mecn.drop_free("s1-two-same-rtt", "mecn", 15, mecn.Readings(ect_retransmissions=False)) is None
    assert mecn.drop_free("s6-five-different-rtt", "mecn", 30, mecn.Readings()) is None


# ---------------------------------------------------------------- the quick reproduction


@pytest.fixture(scope="module")
def summary(quick_reproduction):
    out, s = quick_reproduction("mecn")
    assert (out / "report.html").is_file()
    figures = {p.name for p in (out / "figures").glob("*.png")}
    for name in ("fig3a_ecn", "fig3b_mecn", "fig4_efficiency", "fig5_throughput", "fig6_drops", "fig7_drops"):
        assert any(name in f for f in figures), (name, figures)
    assert json.loads((out / "summary.json").read_text()) == s
    return s


def test_every_claim_is_decided_with_its_smallest_effect_and_family(summary):
    comps = [c for c in summary["comparisons"] if c.get("decision")]
    assert comps
    for c in comps:
        d = c["decision"]
        assert d["verdict"] in ("holds", "contradicted", "inconclusive", "not comparable"), c["metric"]
        if d["verdict"] != "not comparable" and d["tests"] == "direction":
            assert d["min_effect"] and d["min_effect"] >= 0.005, c["metric"]
    families = {c["family"] for c in comps if c.get("family")}
    assert {"fig4-efficiency", "fig5-throughput", "fig6-drops", "fig7-drops", "summary"} <= families
    for c in comps:
        if c.get("family") and c["decision"]["verdict"] != "not comparable":
            assert c["decision"]["family_verdict"] is not None, c["metric"]


def test_drop_claims_that_cannot_be_contradicted_are_not_comparable(summary):
    # Two sources, 50-packet buffer: MECN cannot drop from min_th 15 (4·15 > 49 packets).
    for m in (15, 25):
        (c,) = [c for c in summary["comparisons"] if c["metric"] == f"two sources: drops at min_th = {m}: MECN vs ECN"]
        assert c["verdict"] == "not comparable" and "cannot come out contradicted" in c["decision"]["reason"], c


def test_paper_claims_and_ours_are_told_apart(summary):
    # §3's summary applied to each scenario at one min_th is our statement (our_statement),
    # counted apart from the headline; the abstract's 'scalable' is the paper's, not comparable.
    ours = [c for c in summary["comparisons"] if c["experiment"] == "mecn.scenarios" and c.get("decision")]
    assert ours and all(c["our_statement"] == mecn.SUMMARY_OURS for c in ours if c["verdict"] != "not comparable"), [c["metric"] for c in ours if not c["our_statement"]]
    assert [c["metric"] for c in ours if not c["our_statement"]] == ["MECN's solution is scalable"]
    papers = [c for c in summary["comparisons"] if c["experiment"] != "mecn.scenarios" and c.get("decision")]
    assert papers and not any(c["our_statement"] for c in papers)
    n_ours = sum(summary["verdicts_our_statements"].values())
    assert n_ours == 1, summary["verdicts_our_statements"]  # the scenarios' one family, counted once
    assert all("read from the figure" not in str(c["paper"]) for c in summary["comparisons"])


def test_a_family_is_read_as_one_claim_by_the_framework_only(summary):
    # The framework gives every member its family's verdict as one claim (family_whole); no
    # row without a verdict repeats it. The one row without a decision checks the scenario.
    rows = [c for c in summary["comparisons"] if c["experiment"].startswith("mecn.")]
    assert [c["metric"] for c in rows if not c.get("decision")] == ["fixed RTT of the topology"]
    for c in rows:
        if c.get("family") and c["verdict"] != "not comparable":
            assert c["family_whole"] is not None, c["metric"]
