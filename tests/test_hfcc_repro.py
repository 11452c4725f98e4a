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
    assert got["seconds to 80 % utilisation: HFCC vs VCP"] == "holds"
    assert got["seconds to 80 % utilisation, one VCP flow at 100 Mb/s"] == "holds"


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
