"""The HFCC paper's experiments (seed 003, §V): every run of every experiment's quick form is a
valid scenario, and the efficiency experiment end to end. Asserted: what our runs support under
the default readings — HFCC reaches 80 % of the link before VCP, and one VCP flow at 100 Mb/s /
80 ms needs about Fig. 1's 21 s. The other experiments take minutes and run outside CI
(``ecnlab reproduce hfcc``)."""

from __future__ import annotations

import ecnlab
from ecnlab.experiments import get, reproduce
from ecnlab.experiments.base import Reading

NAMES = ("hfcc.efficiency", "hfcc.fairness", "hfcc.fct", "hfcc.buffer", "hfcc.demand", "hfcc.multibottleneck")


def test_every_quick_run_is_a_valid_scenario_under_every_reading():
    for name in NAMES:
        e = get(name)
        for rd in Reading.choose(e.axes, "all"):
            runs = e.runs(True, e.seeds(True, 1), rd)
            assert runs, name
            for sc in runs.values():
                ecnlab.validate(sc)


def test_efficiency_quick(tmp_path):
    s = reproduce("hfcc.efficiency", tmp_path / "out", quick=True, jobs=2)
    got = {c["metric"]: c["verdict"] for c in s["comparisons"]}
    assert got["seconds to high utilisation (fig1_level): HFCC vs VCP"] == "holds"
    assert got["seconds to high utilisation (fig1_level), one VCP flow at 100 Mb/s"] == "holds"


def test_mlcp_and_bmcc_fill_the_link_without_loss(tmp_path):
    """The rivals as rebuilt: two flows reach 80 % of 150 Mb/s within 5 s and lose nothing."""
    from ecnlab.experiments import hfcc

    e = get("hfcc.efficiency")
    rd = Reading.choose(e.axes, None)[0]
    for scheme in (hfcc.MLCP, hfcc.BMCC):
        sc = hfcc.dumbbell(scheme, [hfcc.Bulk(), hfcc.Bulk()], 20.0, seed=1, reading=rd)
        r = ecnlab.run(sc)
        assert hfcc.time_to_utilization(r, 0.8) <= 5.0, scheme.key
        assert hfcc.drops(r) == 0, scheme.key
        assert hfcc.aggregate_bps(r, 10.0, 20.0) / hfcc.payload_capacity() > 0.85, scheme.key


def test_bad_rival_parameters_name_their_key():
    import pytest

    from ecnlab.experiments import hfcc

    rd = Reading.choose(get("hfcc.efficiency").axes, None)[0]
    sc = hfcc.dumbbell(hfcc.BMCC, [hfcc.Bulk()], 5.0, seed=1, reading=rd)
    sc.set("flows[0].cc_params", {"beta_min": 0.95})
    with pytest.raises(ecnlab.ScenarioError, match=r"flows\[0\]\.cc_params\.beta_min"):
        ecnlab.validate(sc)
    sc = hfcc.dumbbell(hfcc.MLCP, [hfcc.Bulk()], 5.0, seed=1, reading=rd)
    sc.set("flows[0].cc_params", {"kappa": -1})
    with pytest.raises(ecnlab.ScenarioError, match=r"flows\[0\]\.cc_params\.kappa"):
        ecnlab.validate(sc)


def test_ns2_red_automatic_configuration_by_hand():
    """red.cc's REDQueue::initialize_params with ns-2's defaults (thresh_ = maxthresh_ = 0,
    q_weight_ = −1, targetdelay_ 5 ms): 150 Mb/s, 20 ms with mean_pktsize_ 500 and 1000, and a
    slow link where neither floor (5 packets, 100 ms) is idle."""
    import math

    from ecnlab.experiments import hfcc

    lo, hi, w = hfcc.ns2_red_auto(150e6, 0.02, 500)
    assert (lo, hi) == (93.75, 281.25) and w == 1 - math.exp(-1 / 37500)
    lo, hi, w = hfcc.ns2_red_auto(150e6, 0.02, 1000)
    assert (lo, hi) == (46.875, 140.625) and abs(w - 5.333e-5) < 1e-8
    # 1.5 Mb/s, 100 ms: ptc 375 packets/s; rtt 3·(0.1 + 1/375) = 0.308 s; min_th floor 5.
    lo, hi, w = hfcc.ns2_red_auto(1.5e6, 0.1, 500)
    assert (lo, hi) == (5.0, 15.0)
    assert abs(w - (1 - math.exp(-1 / (10 * 3 * (0.1 + 1 / 375) * 375)))) < 1e-15


def test_an_unfinished_flow_counts_censored_and_keeps_its_seed():
    """A flow still sending when the run ends counts with its FCT censored at the end (a lower
    bound), so the seed keeps its value; the flow is listed."""
    from ecnlab.experiments import hfcc

    rd = Reading.choose(get("hfcc.fct").axes, None)[0]
    w = {"name": "two", "arrival_rate": 1.0, "sizes": {"dist": "fixed", "size": 30_000_000}, "max_flows": 1, "start": "0s"}
    sc = hfcc.dumbbell(hfcc.HFCC, [], 3.0, seed=1, reading=rd, workload=w, sample_flows=False)
    r = ecnlab.run(sc)
    assert hfcc.unfinished(r) == r.flows["name"].to_list()
    start = float(r.flows["start_s"][0])
    assert hfcc.Fct.mean_fct(r) == 3.0 - start


# ------------------------------------------------------------- claims on constructed runs


def _run(rates: dict[str, "callable"], end: float, ports: dict[str, float] | None = None):
    """A run built by hand: each flow's delivery rate (bits/s) per 100 ms sample as a function
    of time, and ports with a constant queue; no simulation."""
    import polars as pl

    from ecnlab.results import Results

    rows = []
    for k in range(1, int(round(end / 0.1)) + 1):
        t = round(k * 0.1, 1)
        rows += [(t, "delivery_bps", f, float(rate(t))) for f, rate in rates.items()]
    ports = ports or {}
    rows += [(round(k * 0.1, 1), "queue_pkts", p, q) for p, q in ports.items() for k in range(1, int(round(end / 0.1)) + 1)]
    ts = pl.DataFrame(rows, schema=["time_s", "kind", "entity", "value"], orient="row")
    n = len(rates)
    flows = pl.DataFrame(
        {"name": list(rates), "transport": ["tcp"] * n, "size_bytes": [None] * n, "start_s": [0.0] * n, "fct_s": [None] * n, "packets_sent": [1000] * n, "retransmissions": [0] * n, "rtos": [0] * n},
        schema_overrides={"size_bytes": pl.Int64, "fct_s": pl.Float64},
    )
    m = max(1, len(ports))
    port_rows = pl.DataFrame({"port": list(ports) or ["none"], "dropped_pkts": [0] * m, "arrived_pkts": [1000] * m, "rate_bps": [150e6] * m, "mean_rate_bps": [150e6] * m})
    return Results(flows, port_rows, ts, {"duration_s": end}, "")


def _analyze(name: str, runs: dict, reading: dict | None = None, stalls: bool = False):
    from ecnlab.experiments.base import Context, RunSet
    from ecnlab.report import Html

    e = get(name)
    seeds = sorted({int(k.rpartition("-s")[2]) for k in runs})
    ctx = Context(quick=True, seeds=seeds, doc=Html("t"), experiment=name, reading=Reading(e.axes, reading or {}), draw=False)
    return {c.metric: c for c in e.analyze(RunSet(runs, e if stalls else None), ctx)}


def _demand_runs(level: dict[str, tuple[float, float, float]], onset: dict[str, float] | None = None):
    """hfcc.demand's quick form (join 30 s, leave 60 s, end 90 s) with each scheme's payload
    utilisation before the join, with the 100 flows, and the seconds it takes, after they
    leave, to climb back from 20 % to its level before the join; ``onset`` the utilisation of
    the 5 s after the join (the level with the 100 flows if not given)."""
    from ecnlab.experiments import hfcc

    cap = hfcc.payload_capacity()
    runs = {}
    for s in hfcc.ALL:
        pre, during, back = level.get(s.key, (0.8, 0.8, 5.0))
        first = (onset or {}).get(s.key, during)

        def rate(t, pre=pre, during=during, back=back, first=first):
            if t <= 30:
                return pre * cap
            if t <= 35:
                return first * cap
            if t <= 60:
                return during * cap
            return (0.2 if t <= 60 + back - 1 else pre) * cap

        for seed in range(1, 6):
            runs[f"{s.key}-s{seed}"] = _run({"f0": rate}, 90.0, {hfcc.PORT: 5.0})
    return runs


def test_fig7_high_utilisation_is_tested_against_hfccs_own_level():
    """Fig. 7's "ensure the high utilization … when the burstiness occurs": HFCC's utilisation
    with the 100 flows against its own level before the join (it holds at 0.85 → 0.89, where
    the 90 % bound of ours — kept, declared ours and counted apart — is contradicted), and
    contradicted when the burst pulls it down. Before, only the bound of ours was tested (0.893
    against 0.9), counted with the paper's claims."""
    from ecnlab.experiments import hfcc

    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.89, 3.0), "vcp": (0.83, 0.94, 10.0)}))
    assert got[hfcc.KEPT_METRIC].verdict.value == "holds"
    ours = next(c for m, c in got.items() if m.startswith("utilisation with 105 flows ≥ 90%"))
    assert "a bound of ours" in ours.metric and ours.verdict.value == "contradicted"
    back = next(c for m, c in got.items() if m.startswith("seconds back to 95% of its level before the join"))
    assert "(ours)" in back.metric and back.verdict.value == "holds" and back.rival == "vcp"
    # The bound, the comparison with VCP and the reference level of "kept" are ours and say so
    # (counted apart in the headline): the paper names no reference level; its "high" is
    # tested at fig1_level (test_fig7_high_utilisation_is_the_papers_claim_at_the_modules_level).
    assert ours.our_statement and back.our_statement
    assert "the reference level is ours" in got[hfcc.KEPT_METRIC].our_statement
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.80, 10.0), "vcp": (0.83, 0.94, 3.0)}))
    assert got[hfcc.KEPT_METRIC].verdict.value == "contradicted"
    assert next(c for m, c in got.items() if m.startswith("seconds back to 95%")).verdict.value == "contradicted"
    # The level kept (within the smallest effect that counts, 2 %) is what the paper says: it
    # holds (as a direction claim it was a tie, inconclusive, in every seed of the full form:
    # 0.853 against 0.845); 3 % below is a fall.
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.86, 3.0)}))
    assert got[hfcc.KEPT_METRIC].verdict.value == "holds"
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.845, 3.0)}))
    assert got[hfcc.KEPT_METRIC].verdict.value == "holds"
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.82, 3.0)}))
    assert got[hfcc.KEPT_METRIC].verdict.value == "contradicted"


def test_fig7_the_burst_itself_is_tested():
    """"When the burstiness occurs": the 5 s after the join are tested with the level with the
    100 flows (the lower of the two against the level before). A dip at the join (0.85 → 0.70
    for 5 s) with the level kept afterwards contradicts it; before, the window started 5 s after
    the join and the dip was never read (the claim held). A rise at the join leaves the level
    with the 100 flows to decide."""
    from ecnlab.experiments import hfcc

    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.86, 3.0)}, onset={"hfcc": 0.70}))
    assert got[hfcc.KEPT_METRIC].verdict.value == "contradicted"
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.86, 3.0)}, onset={"hfcc": 0.84}))
    assert got[hfcc.KEPT_METRIC].verdict.value == "holds"
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.80, 3.0)}, onset={"hfcc": 0.95}))
    assert got[hfcc.KEPT_METRIC].verdict.value == "contradicted"


def test_fig7_the_flows_leaving_is_tested():
    """The caption's "responsive to sudden … demand changes" covers the 100 flows leaving too:
    the 5 s after they leave are held against the level before the join (ours, counted apart).
    A run that falls to 20 % of the link for 5 s after the leave is contradicted; one back at
    its level within 1 s holds. Before, no claim read the leave but the time to recover."""
    from ecnlab.experiments import hfcc

    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.86, 6.0)}))
    leave = got[hfcc.LEAVE_METRIC]
    assert leave.verdict.value == "contradicted" and leave.our_statement and "responsive" in leave.our_statement
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.86, 1.0)}))
    assert got[hfcc.LEAVE_METRIC].verdict.value == "holds"


def test_fig7_recovery_is_timed_to_the_schemes_own_level():
    """The recovery is timed to 95 % of the scheme's own level before the join: a scheme whose
    steady state is below 90 % of the link is timed all the same (before, "back at 90 %"
    timed a transient overshoot of HFCC's 0.85 steady state, or nothing)."""
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.80, 0.85, 4.0), "vcp": (0.83, 0.94, 12.0)}))
    back = next(c for m, c in got.items() if m.startswith("seconds back to 95%"))
    assert back.verdict.value == "holds"
    assert sorted(set(back.a.values())) == [4.0] and sorted(set(back.b.values())) == [12.0]


def test_fairness_tests_by_hand():
    """Two rates 1.5 : 1 are fair by Jain ≥ 0.95 (0.96) but not by Jain ≥ 0.99 nor within
    10 %; 1.05 : 1 is fair by all three; a flow that sends nothing is fair by none."""
    from ecnlab.experiments import hfcc

    t = {k: f for k, (_, f) in hfcc.FAIR_TESTS.items()}
    assert (t["jain_0.95"]([60, 40]), t["jain_0.99"]([60, 40]), t["rates_10pct"]([60, 40])) == (True, False, False)
    assert all(f([42, 40]) for f in t.values())
    assert not any(f([40, 0]) for f in t.values())
    assert hfcc.FAIR_AXIS.default == "rates_10pct" and hfcc.FAIR_AXIS.affects == "analysis"


def _fairness_runs(fig1_meets_at: float, never: tuple[str, ...] = ()):
    """hfcc.fairness's quick form (join 50 s, end 150 s): every pair's rates 60 : 40 after the
    join until ``fig1_meets_at`` for Fig. 1's VCP pair (HFCC's meet 5 s after the join, the
    others' at 140 s), equal after."""
    from ecnlab.experiments import hfcc

    runs = {}
    for key, meet in (("hfcc", 55.0), ("vcp", 140.0), ("mlcp", 140.0), ("bmcc", 140.0), ("vcp-fig1", fig1_meets_at)):
        meet = 1e9 if key in never else meet
        rates = {
            "f0": lambda t, meet=meet: 100e6 if t <= 50 else (60e6 if t <= meet else 50e6),
            "f1": lambda t, meet=meet: 0.0 if t <= 50 else (40e6 if t <= meet else 50e6),
        }
        for seed in range(1, 6):
            runs[f"{key}-s{seed}"] = _run(rates, 150.0, {hfcc.PORT: 5.0})
    return runs


def test_fig1_fairness_verdict_follows_the_fair_level_reading():
    """Fig. 1's VCP pair whose rates stay 60 : 40 until 80 s after the join and meet then: fair
    81 s after the join by the default reading (the rates within 10 %: the curves meet) and by
    Jain ≥ 0.99, within a second of the join by Jain ≥ 0.95 (0.96 at 60 : 40), which cannot
    tell these pairs apart. Each reading names its test in the claims' texts (not their metrics:
    test_a_claims_metric_is_the_same_under_every_analysis_reading)."""
    from ecnlab.experiments import hfcc

    # A bin is fair from the first whole second of equal rates: meeting at 130 s is 81 s after the join.
    for reading, name, fig1 in ((None, "the rates within 10 %", 81.0), ({"fair_level": "jain_0.95"}, "Jain ≥ 0.95", 1.0), ({"fair_level": "jain_0.99"}, "Jain ≥ 0.99", 81.0)):
        got = _analyze("hfcc.fairness", _fairness_runs(130.0), reading)
        c = got["seconds to fair (fair_level) after the join, one VCP pair at 100 Mb/s"]
        assert c.verdict.value == "not comparable"  # the quick form ends before the paper's 175 s
        vs = got["seconds to fair (fair_level) after the join: HFCC vs VCP"]
        assert name in vs.claim
        assert set(vs.b.values()) == {91.0 if name != "Jain ≥ 0.95" else 1.0}, (name, vs.b)
        assert set(vs.a.values()) == {6.0 if name != "Jain ≥ 0.95" else 1.0}, (name, vs.a)
        assert vs.verdict.value == ("holds" if name != "Jain ≥ 0.95" else "inconclusive")
        fig1_run = _fairness_runs(130.0)["vcp-fig1-s1"]
        assert hfcc.fair_after(fig1_run, 50.0, 150.0, hfcc.FAIR_TESTS[(reading or {}).get("fair_level", "rates_10pct")][1]) == fig1


def _chain_runs(long_share: dict[str, float]):
    """hfcc.multibottleneck's quick form (40 s): the 5 forward long flows together at
    ``long_share`` of every link's payload capacity, the cross flows filling it to 90 %."""
    from ecnlab.experiments import hfcc

    cap = hfcc.payload_capacity()
    ports = {f"r{i}->r{i + 1}": 5.0 for i in range(7)} | {f"r{i + 1}->r{i}": 0.0 for i in range(7)}
    runs = {}
    for s in hfcc.ALL:
        share = long_share.get(s.key, 0.1)
        rates = {f"long-f{k}": (lambda t, share=share: share * cap / 5) for k in range(5)}
        rates.update({f"cross-{i}-{k}": (lambda t, share=share: (0.9 - share) * cap / 5) for i in range(7) for k in range(5)})
        for seed in range(1, 6):
            runs[f"{s.key}-s{seed}"] = _run(rates, 40.0, ports)
    return runs


def test_fig8_long_flows_share_is_a_claim():
    """Fig. 8's "HFCC is better than other protocols" and the abstract's fairness: HFCC's
    forward long flows against their max-min share, half of every link. Contradicted where
    they starve (our 10-seed runs: 0.009 of a link against VCP's 0.136), holding where they
    are nearer that share; a share above it counts as far from fair as one as far below."""
    got = _analyze("hfcc.multibottleneck", _chain_runs({"hfcc": 0.01, "vcp": 0.13, "reno": 0.04}))
    name = "forward long flows' share, fraction of their max-min share: HFCC vs {}"
    assert got[name.format("VCP")].verdict.value == "contradicted"
    assert got[name.format("Reno+ECN-RED")].verdict.value == "contradicted"
    assert got[name.format("MLCP")].rival == "mlcp"
    # Fig. 8's text gives no quantity: utilisation is the paper's 'better', the long flows'
    # share our reading of the abstract's fairness, counted apart.
    assert got[name.format("VCP")].our_statement and not got["mean link utilisation: HFCC vs VCP"].our_statement
    got = _analyze("hfcc.multibottleneck", _chain_runs({"hfcc": 0.45, "vcp": 0.13, "reno": 0.7}))
    assert got[name.format("VCP")].verdict.value == "holds"
    # 0.7 is 0.2 above the share, 0.45 only 0.05 below it.
    assert got[name.format("Reno+ECN-RED")].verdict.value == "holds"
    assert "starved flows" in got["mean link utilisation: HFCC vs VCP"].note


def _efficiency_runs(reach: dict[str, float | None]):
    """hfcc.efficiency (40 s): each configuration's utilisation 0.5 until ``reach[key]``
    seconds, 0.95 after (None: 0.75 throughout, never at 80 %)."""
    from ecnlab.experiments import hfcc

    runs = {}
    for key in ("hfcc", "vcp", "mlcp", "bmcc", "vcp-fig1"):
        at = reach.get(key, 3.0)
        cap = hfcc.payload_capacity(100e6 if key == "vcp-fig1" else hfcc.CAPACITY)
        rate = (lambda t, at=at, cap=cap: (0.75 if at is None else (0.5 if t <= at else 0.95)) * cap)
        for seed in range(1, 6):
            runs[f"{key}-s{seed}"] = _run({"f0": rate}, 40.0, {hfcc.PORT: 5.0, hfcc.REVERSE: 0.0})
    return runs


def test_a_level_never_reached_is_infinite_and_decided():
    """A scheme that never reaches the level in the run takes ∞, decided against a finite time
    like any other value: HFCC never at 80 % against VCP at 21 s is contradicted ("faster"),
    and Fig. 1's VCP flow that never gets there contradicts "about 21 s". Before, the seed was
    left out ("never reached 80 %") and both claims were not comparable."""
    import math

    from ecnlab.experiments import hfcc

    got = _analyze("hfcc.efficiency", _efficiency_runs({"hfcc": None, "vcp": 21.0, "vcp-fig1": None}))
    vs = next(c for m, c in got.items() if "HFCC vs VCP" in m)
    assert set(vs.a.values()) == {math.inf} and vs.verdict.value == "contradicted"
    fig1 = next(c for m, c in got.items() if "one VCP flow" in m)
    assert fig1.verdict.value == "contradicted"
    close = next(c for m, c in got.items() if "HFCC vs MLCP" in m)
    assert close.verdict.value == "contradicted"
    # Both never there: a tie (inconclusive), not a win.
    got = _analyze("hfcc.efficiency", _efficiency_runs({"hfcc": None, "vcp": None}))
    assert next(c for m, c in got.items() if "HFCC vs VCP" in m).verdict.value == "inconclusive"


def test_fig7_not_back_by_the_runs_end_is_infinite():
    """Fig. 7's recovery: a scheme not back at 95 % of its level before the 100 flows joined by
    the run's end takes ∞ and loses to a rival that is back (before: left out, not comparable)."""
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.86, 60.0), "vcp": (0.83, 0.94, 10.0)}))
    back = next(c for m, c in got.items() if m.startswith("seconds back to 95%"))
    assert back.verdict.value == "contradicted"


def test_a_claims_metric_is_the_same_under_every_analysis_reading():
    """The report pairs a claim across readings by its metric: a metric that carries the
    reading's value (before: "seconds to 80 % utilisation", "seconds to Jain ≥ 0.95 after the
    join") made every fig1_level and fair_level claim a new one under the other value, so a
    verdict that flips with the reading was never listed as depending on it. The level stays
    in each claim's text."""
    got = {lv: _analyze("hfcc.efficiency", _efficiency_runs({"vcp": 21.0}), {"fig1_level": lv}) for lv in (0.8, 0.9)}
    assert set(got[0.8]) == set(got[0.9])
    assert all("80 %" in c.claim for c in got[0.8].values()) and all("90 %" in c.claim for c in got[0.9].values())
    got = {lv: _analyze("hfcc.fairness", _fairness_runs(130.0), {"fair_level": lv}) for lv in ("rates_10pct", "jain_0.95", "jain_0.99")}
    assert set(got["rates_10pct"]) == set(got["jain_0.95"]) == set(got["jain_0.99"])


def test_fig7_high_utilisation_is_the_papers_claim_at_the_modules_level():
    """Fig. 7's "ensure the high utilization … when the burstiness occurs" and the caption's
    "responsive to sudden … demand changes" are the paper's claims, tested at the module's one
    level for "high link utilization" (fig1_level, 80 %, as in Figs. 1 and 4a): through the
    join and in the 5 s after the 100 flows leave. Before, Fig. 7 had only claims of ours (a
    reference level, a 90 % bound) and none in the headline. The leave's reading (the 5 s after
    it, at the join's level) is ours, so that claim is counted apart."""
    from ecnlab.experiments import hfcc

    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.86, 6.0)}))
    join, leave = got[hfcc.HIGH_JOIN_METRIC], got[hfcc.HIGH_LEAVE_METRIC]
    assert join.verdict.value == "holds" and not join.our_statement and "80 %" in join.claim
    assert leave.verdict.value == "contradicted" and "5 s after it" in leave.our_statement
    # A dip at the join below 80 % contradicts it; a leave taken up at once holds.
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.86, 1.0)}, onset={"hfcc": 0.70}))
    assert got[hfcc.HIGH_JOIN_METRIC].verdict.value == "contradicted"
    assert got[hfcc.HIGH_LEAVE_METRIC].verdict.value == "holds"
    # The same level as Fig. 4a's: under fig1_level = 0.9, 0.86 is not high.
    got = _analyze("hfcc.demand", _demand_runs({"hfcc": (0.85, 0.86, 1.0)}), {"fig1_level": 0.9})
    assert got[hfcc.HIGH_JOIN_METRIC].verdict.value == "contradicted" and "90 %" in got[hfcc.HIGH_JOIN_METRIC].claim


def test_fig8_stalls_are_checked_on_every_link():
    """Fig. 8's chain: stalls and outages are judged on each of the seven forward links, not
    the first alone (link 7 runs lower than the others for several schemes)."""
    from ecnlab.experiments import hfcc

    e = get("hfcc.multibottleneck")
    assert list(e.bottleneck("hfcc-s1")) == [f"r{i}->r{i + 1}" for i in range(hfcc.MultiBottleneck.LINKS)]


def test_an_arm_censored_in_every_seed_says_what_the_claim_can_come_out():
    """Fig. 4b: VCP's pair never fair within the run (censored at its end in every seed), so
    HFCC's time is at most VCP's in every seed and "HFCC fair sooner" can hold or tie, never be
    contradicted; the row says so. "MLCP fair later than VCP" then cannot hold."""
    got = _analyze("hfcc.fairness", _fairness_runs(130.0, never=("vcp",)))
    vs = got["seconds to fair (fair_level) after the join: HFCC vs VCP"]
    assert "b censored at the run's end (100 s after the join) in every seed" in vs.note and "not come out contradicted" in vs.note
    worst = got["seconds to fair (fair_level) after the join: MLCP vs VCP"]
    assert "can come out contradicted or tie, not hold" in worst.note
    assert "in every seed" not in got["seconds to fair (fair_level) after the join: HFCC vs MLCP"].note


def test_a_start_up_outage_does_not_stall_the_claims_after_the_warm_up():
    """Every scheme's windows grow from 2 packets: the link carries next to nothing for the
    first seconds (an outage by the framework's rule; HFCC 1.2–3.6 s in the recorded Fig. 7
    runs). The claims measure after the warm-up §V ignores, so their runs are not stalled by
    it; an outage after the 100 flows leave stalls only the claims that read those seconds,
    and those are about it (decided). Before, every claim on these runs was inconclusive."""
    from ecnlab.experiments import hfcc

    cap = hfcc.payload_capacity()

    def rate(t, dip_after_leave):
        if t <= 3:
            return 0.001 * cap
        if t <= 30:
            return 0.85 * cap
        if t <= 60:
            return 0.86 * cap
        return (0.01 if dip_after_leave and t <= 66 else 0.85) * cap

    runs = {}
    for s in hfcc.ALL:
        for seed in range(1, 6):
            runs[f"{s.key}-s{seed}"] = _run({"f0": lambda t, s=s: rate(t, s is hfcc.HFCC)}, 90.0, {hfcc.PORT: 5.0})
    got = _analyze("hfcc.demand", runs, stalls=True)
    assert got[hfcc.HIGH_JOIN_METRIC].verdict.value == "holds" and got[hfcc.KEPT_METRIC].verdict.value == "holds"
    assert got[hfcc.HIGH_LEAVE_METRIC].verdict.value == "contradicted" and got[hfcc.LEAVE_METRIC].verdict.value == "contradicted"


def test_loss_counts_every_port_of_the_run():
    """The family's "negligible packet loss" claims count every drop of a run, the reverse
    links and the hosts' own queues included, per data packet sent: a scheme that loses at its
    hosts or on the reverse path loses too (Fig. 8's HFCC lost thousands of packets at its
    reverse flows' access queues while its forward bottlenecks dropped nothing)."""
    import polars as pl

    from ecnlab.experiments import hfcc

    r = _run({"f0": lambda t: 1e6}, 10.0, {hfcc.PORT: 1.0})
    ports = pl.DataFrame({"port": [hfcc.PORT, hfcc.REVERSE, "r0R->r7"], "dropped_pkts": [0, 30, 70], "arrived_pkts": [1000, 1000, 1000]})
    r = type(r)(r.flows.with_columns(pl.lit(2000).alias("packets_sent")), ports, r.timeseries, r.meta, "")
    assert hfcc.drops(r) == 0.0
    assert hfcc.loss_anywhere(r) == 100 / 2000


def test_fewer_md_phases_for_the_low_bandwidth_flow_can_fail():
    """§V-A1's "low-bandwidth flows have fewer MD phases": the incumbent's AMDs in the 30 s
    after Fig. 4b's join against the newcomer's, from the senders' cumulative count. Holds when
    the incumbent cuts more, contradicted when the newcomer does."""
    import polars as pl

    from ecnlab.experiments import hfcc

    def runs(f0_rate: float, f1_rate: float):
        out = _fairness_runs(130.0)
        for k, r in out.items():
            rows = [(round(j * 0.1, 1), "hfcc_amds", f, float(int(rate * j * 0.1))) for j in range(1, 1501) for f, rate in (("f0", f0_rate), ("f1", f1_rate))]
            extra = pl.DataFrame(rows, schema=["time_s", "kind", "entity", "value"], orient="row")
            out[k] = type(r)(r.flows, r.ports, pl.concat([r.timeseries, extra]), r.meta, "")
        return out

    metric = f"AMDs in the {hfcc.MD_WINDOW_S:g} s after the join: HFCC's first flow vs its second"
    got = _analyze("hfcc.fairness", runs(4.0, 2.0))[metric]
    assert got.verdict.value == "holds" and set(got.a.values()) == {120.0} and set(got.b.values()) == {60.0}
    assert _analyze("hfcc.fairness", runs(2.0, 4.0))[metric].verdict.value == "contradicted"
