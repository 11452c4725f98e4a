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
