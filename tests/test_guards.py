"""The framework's guards, each on a constructed bad experiment: every number (∞ included)
survives summary.json; a claim decided on stalled runs is not decided; a reconstructed
rival's claims are counted apart."""

from __future__ import annotations

import json
import math

import ecnlab
from ecnlab import experiments as ex
from ecnlab.experiments.base import claim
from ecnlab.experiments.verdict import Claim


def udp(rate: str = "5Mbps", seed: int = 1) -> ecnlab.Scenario:
    s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="1s", seed=seed)
    return s.add_udp_flow("l0", "r0", rate=rate, pattern="poisson", name="u")


class _Never(ex.Experiment):
    """One arm never reaches the state (∞ in every seed), the other does."""

    name = "toy.never"
    title = "a state one arm never reaches"
    quick_seeds = 5
    no_bottleneck = "UDP only: nothing to stall"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp()}, seeds)

    def analyze(self, runs, ctx):
        reached = runs.per_seed("half", lambda r: 15.0)
        never = runs.per_seed("half", lambda r: math.inf)
        return [claim("time to the state: reached vs never", Claim("less"), reached, never, ours=runs.stat("half", lambda r: math.inf))]


def test_infinity_survives_summary_json(tmp_path, monkeypatch):
    """Before: json.dumps(allow_nan=False) raised "Out of range float values are not JSON
    compliant" at the end of the reproduction, and the claim was a tie in every seed."""
    monkeypatch.setitem(ex._REGISTRY, "toy.never", _Never())
    summary = ex.reproduce("toy.never", tmp_path / "out", quick=True)
    (c,) = summary["comparisons"]
    assert c["verdict"] == "holds" and c["tests"] == "direction"
    assert c["ours"]["mean"] == "inf" and c["per_seed"]["b"]["1"] == "inf"
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == summary
    assert "| toy.never | time to the state" in (tmp_path / "out" / "summary.md").read_text()
