"""A reproduction judges each experiment while the runs of the next ones go on (the next
one's always, those after it while few runs are ahead): on two cores the workers do not wait
for the judging. A judging that fails stops the runs still going and leaves no output
behind."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

import ecnlab
from ecnlab import experiments as ex
from ecnlab.errors import ExperimentError
from ecnlab.experiments.verdict import Claim
from ecnlab.sweeps.executor import Interrupted
from test_experiments import _without_wall
from test_reuse import udp


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
    events = {f"toypipe.{e}": threading.Event() for e in "abc"}
    real = ex.run_many

    def run_many(todo, *args, **kw):
        for name, e in events.items():
            if any(k.startswith(name + "-") for k in todo):
                e.set()
        return real(todo, *args, **kw)

    monkeypatch.setattr(ex, "run_many", run_many)
    return events


@pytest.fixture
def order(monkeypatch):
    """What the reproduction's main thread did, in order: ("handed", experiment) when it
    hands an experiment's runs to the runs' thread, ("judged", experiment) when it starts
    judging one (the toys' ``judge`` append those)."""
    seen: list[tuple[str, str]] = []
    real = ex._Pipeline.submit

    def submit(self, label, *args, **kw):
        seen.append(("handed", label.split(" ")[0]))
        return real(self, label, *args, **kw)

    monkeypatch.setattr(ex._Pipeline, "submit", submit)
    return seen


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


def test_runs_of_later_experiments_go_on_while_few_are_ahead(tmp_path, monkeypatch, order):
    """Experiments after the next are handed out while fewer than AHEAD_RUNS runs are ahead of
    the judging: with a bound of 3, toypipe.b's two runs are fewer, so toypipe.c's runs are
    handed out before toypipe.a is judged; with 2 they are not, and toypipe.c waits until
    toypipe.b is next to be judged (as with a bound of 0: the next experiment's runs are
    handed out in any case)."""
    for bound, want in (
        (3, ["handed a", "handed b", "handed c", "judged a", "judged b", "judged c"]),
        (2, ["handed a", "handed b", "judged a", "handed c", "judged b", "judged c"]),
        # The next experiment's runs always, whatever the bound.
        (0, ["handed a", "handed b", "judged a", "handed c", "judged b", "judged c"]),
    ):
        monkeypatch.setattr(ex, "AHEAD_RUNS", bound)
        order.clear()
        for e in "abc":
            judge = lambda e=e: order.append(("judged", f"toypipe.{e}"))
            monkeypatch.setitem(ex._REGISTRY, f"toypipe.{e}", _Toy(f"toypipe.{e}", {"a": "5Mbps", "b": "5.5Mbps", "c": "6Mbps"}[e], judge))
        s = ex.reproduce("toypipe", tmp_path / f"out{bound}", quick=True, jobs=1)
        assert [f"{what} {e.removeprefix('toypipe.')}" for what, e in order] == want, bound
        assert [e["experiment"] for e in s["experiments"]] == ["toypipe.a", "toypipe.b", "toypipe.c"]
        assert s["identical_runs"]["simulated"] == 6


def b_runs_until_stopped(monkeypatch, ended: list) -> None:
    """toypipe.b's runs take a minute unless the reproduction stops them first (its
    executor's interrupt); how they ended goes into ``ended``."""
    real = ex.run_many

    def run_many(todo, *args, **kw):
        if any(k.startswith("toypipe.b-") for k in todo):
            kw["executor"].interrupt.wait(60)
            try:
                return real(todo, *args, **kw)
            except BaseException as e:
                ended.append(type(e))
                raise
        return real(todo, *args, **kw)

    monkeypatch.setattr(ex, "run_many", run_many)


def test_a_failed_judging_stops_the_runs_going_and_leaves_no_output(tmp_path, monkeypatch, order):
    ended = []
    b_runs_until_stopped(monkeypatch, ended)

    def fail():
        raise ExperimentError("toypipe.a: judging failed")

    # toypipe.c's runs are handed out ahead too, behind toypipe.b's: they never start.
    c_ran = []
    b_or_later = ex.run_many

    def run_many(todo, *args, **kw):
        c_ran.extend(k for k in todo if k.startswith("toypipe.c-"))
        return b_or_later(todo, *args, **kw)

    monkeypatch.setattr(ex, "run_many", run_many)
    monkeypatch.setitem(ex._REGISTRY, "toypipe.a", _Toy("toypipe.a", "5Mbps", fail))
    monkeypatch.setitem(ex._REGISTRY, "toypipe.b", _Toy("toypipe.b", "5.5Mbps", lambda: None))
    monkeypatch.setitem(ex._REGISTRY, "toypipe.c", _Toy("toypipe.c", "6Mbps", lambda: None))
    with pytest.raises(ExperimentError, match="judging failed"):
        ex.reproduce("toypipe", tmp_path / "out", quick=True, jobs=1)
    # toypipe.c was handed out (behind toypipe.b) before the judging failed, and never ran.
    assert ("handed", "toypipe.c") in order and c_ran == []
    assert ended == [Interrupted]
    assert not (tmp_path / "out").exists()
    assert not any(t.name.startswith("ecnlab-runs") for t in threading.enumerate())
    # What is left beside the output: the runs kept for a second attempt, nothing half-written.
    assert [p.name for p in tmp_path.iterdir()] in ([], [".out.resume"])


def test_ctrl_c_while_a_step_runs_stops_it_at_once(tmp_path, monkeypatch):
    """Ctrl-C reaches the judging thread, which waits for toypipe.b's runs: it stops them
    at once, not when they end (a plain wait on the step would not be interrupted)."""
    ended = []
    b_runs_until_stopped(monkeypatch, ended)
    # Ctrl-C once the judging thread waits for toypipe.b's step (its second wait): the wait a
    # plain Future.result() would sit through.
    waits = []
    result = ex._Pipeline.result

    def wait(self, step):
        waits.append(step)
        if len(waits) == 2:
            # To the process, as a terminal sends it (raise() in a thread would go to that
            # thread alone, and be held there where the signal is blocked).
            threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        return result(self, step)

    monkeypatch.setattr(ex._Pipeline, "result", wait)
    # A job a non-interactive shell starts in the background (`cmd &`, as CI may be run)
    # starts with SIGINT ignored, and Python leaves an ignored signal ignored: give it
    # Python's handler, as a terminal session has. Otherwise it is left as it is, polars'
    # own handler included.
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    monkeypatch.setitem(ex._REGISTRY, "toypipe.a", _Toy("toypipe.a", "5Mbps", lambda: None))
    monkeypatch.setitem(ex._REGISTRY, "toypipe.b", _Toy("toypipe.b", "5.5Mbps", lambda: None))
    t0 = time.time()
    try:
        with pytest.raises(KeyboardInterrupt):
            ex.reproduce("toypipe", tmp_path / "out", quick=True, jobs=1)
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    assert time.time() - t0 < 30 and len(waits) == 2
    assert ended == [Interrupted]
    assert not (tmp_path / "out").exists()
    assert not any(t.name.startswith("ecnlab-runs") for t in threading.enumerate())


def test_a_failed_run_stops_the_reproduction_before_later_experiments_run(tmp_path, monkeypatch):
    called = []
    real = ex.run_many

    def run_many(todo, *args, **kw):
        exp = next(iter(todo)).split("-")[0]
        called.append(exp)
        if exp == "toypipe.b":
            raise ecnlab.InternalError("toypipe.b-half-s1: the run failed")
        return real(todo, *args, **kw)

    monkeypatch.setattr(ex, "run_many", run_many)
    for e, rate in (("a", "5Mbps"), ("b", "5.5Mbps"), ("c", "6Mbps")):
        monkeypatch.setitem(ex._REGISTRY, f"toypipe.{e}", _Toy(f"toypipe.{e}", rate, lambda: None))
    with pytest.raises(ecnlab.InternalError, match="the run failed"):
        ex.reproduce("toypipe", tmp_path / "out", quick=True, jobs=1)
    # toypipe.c's runs never ran: a step after a failed one fails without running.
    assert called == ["toypipe.a", "toypipe.b"]
    assert not (tmp_path / "out").exists()


def test_a_run_failed_ahead_stops_the_reproduction_before_the_experiments_between_are_judged(tmp_path, monkeypatch):
    """toypipe.c's run fails while toypipe.a is judged (its runs were handed out ahead):
    toypipe.b is not judged for an output that will not be written, and nothing is left."""
    failed = threading.Event()
    real = ex.run_many

    def run_many(todo, *args, **kw):
        if any(k.startswith("toypipe.c-") for k in todo):
            failed.set()
            raise ecnlab.InternalError("toypipe.c-half-s1: the run failed")
        return real(todo, *args, **kw)

    monkeypatch.setattr(ex, "run_many", run_many)
    judged = []
    monkeypatch.setitem(ex._REGISTRY, "toypipe.a", _Toy("toypipe.a", "5Mbps", lambda: judged.append(("a", failed.wait(60)))))
    monkeypatch.setitem(ex._REGISTRY, "toypipe.b", _Toy("toypipe.b", "5.5Mbps", lambda: judged.append(("b", True))))
    monkeypatch.setitem(ex._REGISTRY, "toypipe.c", _Toy("toypipe.c", "6Mbps", lambda: judged.append(("c", True))))
    with pytest.raises(ecnlab.InternalError, match="toypipe.c-half-s1: the run failed"):
        ex.reproduce("toypipe", tmp_path / "out", quick=True, jobs=1)
    assert judged == [("a", True)]
    assert not (tmp_path / "out").exists()
    assert not any(t.name.startswith("ecnlab-runs") for t in threading.enumerate())


class _Read(_Toy):
    axes = (ex.ReadingAxis("rate", ("5Mbps", "6Mbps"), "the stated load"), ex.ReadingAxis("tolerance", (0.1, 0.5), "a tight check", affects="analysis"))

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp(reading.rate)}, seeds)

    def analyze(self, runs, ctx):
        util = runs.per_seed("half", lambda r: r.port("rl->rr")["utilization"])
        return [ex.base.claim("utilisation", Claim("matches", target=0.5, within=ctx.reading.tolerance), util, paper=0.5, text="ρ = 0.5")]


def test_the_same_output_as_one_step_after_another(tmp_path, monkeypatch):
    """Run one step at a time (each awaited before the next is handed over), a reproduction
    under every reading writes the same summary and runs, but for its times."""
    monkeypatch.setitem(ex._REGISTRY, "toypipe.a", _Read("toypipe.a", "", lambda: None))
    monkeypatch.setitem(ex._REGISTRY, "toypipe.b", _Read("toypipe.b", "", lambda: None))
    overlapped = ex.reproduce("toypipe", tmp_path / "overlapped", quick=True, jobs=1, readings="all")
    submit = ex._Pipeline.submit

    def one_at_a_time(self, *args, **kw):
        step = submit(self, *args, **kw)
        step.result()
        return step

    monkeypatch.setattr(ex._Pipeline, "submit", one_at_a_time)
    alone = ex.reproduce("toypipe", tmp_path / "alone", quick=True, jobs=1, readings="all")
    assert _without_wall(overlapped) == _without_wall(alone)
    # toypipe.b's scenarios are toypipe.a's: run once, read back for the second experiment.
    assert (overlapped["identical_runs"]["simulated"], overlapped["identical_runs"]["read"]) == (4, 4)
    for out in ("overlapped", "alone"):
        assert sorted(p.parent.relative_to(tmp_path / out).as_posix() for p in (tmp_path / out / "runs").rglob("run.json")) == sorted(
            f"runs/{sub}toypipe.{e}-half-s{k}" for e in "ab" for k in (1, 2) for sub in ("", "reading-rate-6Mbps/")
        )
    for sec in overlapped["experiments"]:
        assert sec["wall_s"] == pytest.approx(sec["runs_s"] + sec["judging_s"])


def test_an_experiment_judged_lets_its_runs_go(tmp_path, monkeypatch):
    """Once an experiment is judged, nothing of the reproduction holds its runs' results: a
    paper's runs are not all in memory at once (only the experiment judged and those
    running ahead)."""
    import gc
    import weakref

    held: dict[str, list] = {"toypipe.a": [], "toypipe.b": []}
    real = ex.run_many

    def run_many(todo, *args, **kw):
        out = real(todo, *args, **kw)
        for name, refs in held.items():
            refs.extend(weakref.ref(r) for k, r in out.items() if k.startswith(name + "-"))
        return out

    monkeypatch.setattr(ex, "run_many", run_many)
    alive_while_b_judged = []

    def judge_b():
        gc.collect()
        alive_while_b_judged.append(sum(ref() is not None for ref in held["toypipe.a"]))

    monkeypatch.setitem(ex._REGISTRY, "toypipe.a", _Toy("toypipe.a", "5Mbps", lambda: None))
    monkeypatch.setitem(ex._REGISTRY, "toypipe.b", _Toy("toypipe.b", "5.5Mbps", judge_b))
    ex.reproduce("toypipe", tmp_path / "out", quick=True, jobs=1)
    assert len(held["toypipe.a"]) == 2 and len(held["toypipe.b"]) == 2
    assert alive_while_b_judged == [0]
