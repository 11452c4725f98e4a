"""A reproduction hands every experiment's runs to the workers at once and judges each
experiment while the next one's run: on two cores the workers do not wait for the judging.
A judging that fails stops the runs still going and leaves no output behind."""

from __future__ import annotations

import threading
import time

import pytest

import ecnlab
from ecnlab import experiments as ex
from ecnlab.errors import ExperimentError
from ecnlab.experiments.verdict import Claim
from ecnlab.sweeps.executor import Interrupted


def udp(rate: str, seed: int = 1) -> ecnlab.Scenario:
    s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="1s", seed=seed)
    return s.add_udp_flow("l0", "r0", rate=rate, pattern="poisson", name="u")


class _Toy(ex.Experiment):
    title = "utilisation equals offered load"
    source = "definition of utilisation"
    quick_seeds = 2

    def __init__(self, name: str, rate: str, judge) -> None:
        self.name = name
        self.rate = rate
        self.judge = judge

    def bottleneck(self, run_name):
        return "rl->rr"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp(self.rate)}, seeds)

    def analyze(self, runs, ctx):
        self.judge()
        util = runs.per_seed("half", lambda r: r.port("rl->rr")["utilization"])
        return [ex.base.claim("utilisation", Claim("matches", target=0.5, within=0.1), util, paper=0.5, text="ρ = 0.5")]


@pytest.fixture
def started(monkeypatch):
    """{experiment: Event set when its runs start}, through run_many."""
    events = {"toypipe.a": threading.Event(), "toypipe.b": threading.Event()}
    real = ex.run_many

    def run_many(todo, *args, **kw):
        for name, e in events.items():
            if any(k.startswith(name + "-") for k in todo):
                e.set()
        return real(todo, *args, **kw)

    monkeypatch.setattr(ex, "run_many", run_many)
    return events


def test_the_next_experiments_runs_start_while_one_is_judged(tmp_path, monkeypatch, started):
    seen = []
    monkeypatch.setitem(ex._REGISTRY, "toypipe.a", _Toy("toypipe.a", "5Mbps", lambda: seen.append(started["toypipe.b"].wait(60))))
    monkeypatch.setitem(ex._REGISTRY, "toypipe.b", _Toy("toypipe.b", "5.5Mbps", lambda: None))
    s = ex.reproduce("toypipe", tmp_path / "out", quick=True, jobs=1)
    # Judging toypipe.a found toypipe.b's runs started (a wait of a minute, in vain, otherwise).
    assert seen == [True]
    assert [e["experiment"] for e in s["experiments"]] == ["toypipe.a", "toypipe.b"]
    assert s["identical_runs"]["simulated"] == 4
    for sec in s["experiments"]:
        assert sec["identical_runs"]["simulated"] == 2 and sec["wall_s"] > 0
    assert sorted(p.name for p in (tmp_path / "out" / "runs").iterdir()) == [f"toypipe.{e}-half-s{k}" for e in "ab" for k in (1, 2)]


def test_a_failed_judging_stops_the_runs_going_and_leaves_no_output(tmp_path, monkeypatch):
    failing = threading.Event()
    ended = []
    real = ex.run_many

    def run_many(todo, *args, **kw):
        if any(k.startswith("toypipe.b-") for k in todo):
            # toypipe.b's runs go on while toypipe.a's judging fails.
            failing.wait(60)
            time.sleep(0.2)
            try:
                return real(todo, *args, **kw)
            except BaseException as e:
                ended.append(type(e))
                raise
        return real(todo, *args, **kw)

    def fail():
        failing.set()
        raise ExperimentError("toypipe.a: judging failed")

    monkeypatch.setattr(ex, "run_many", run_many)
    monkeypatch.setitem(ex._REGISTRY, "toypipe.a", _Toy("toypipe.a", "5Mbps", fail))
    monkeypatch.setitem(ex._REGISTRY, "toypipe.b", _Toy("toypipe.b", "5.5Mbps", lambda: None))
    with pytest.raises(ExperimentError, match="judging failed"):
        ex.reproduce("toypipe", tmp_path / "out", quick=True, jobs=1)
    assert ended == [Interrupted]
    assert not (tmp_path / "out").exists()
    assert not any(t.name.startswith("ecnlab-runs") for t in threading.enumerate())
    # What is left beside the output: the runs kept for a second attempt, nothing half-written.
    assert [p.name for p in tmp_path.iterdir()] in ([], [".out.resume"])
