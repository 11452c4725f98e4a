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
