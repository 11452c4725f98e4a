"""Paper experiments: the registry, the runner and the reproduction report.

Every module in this package (other than ``base``) is imported on first use; its
:class:`Experiment` subclasses decorated with :func:`register` become runnable as
``ecnlab reproduce <name>``. A name selects one experiment (``core.mdl``) or, as a prefix, all
of a paper's (``core`` → ``core.*``).
"""

from __future__ import annotations

import importlib
import json
import os
import math
import pkgutil
import re
import shutil
import threading
import time
from collections import Counter, deque
from contextlib import closing
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence, TextIO

from ..errors import ExperimentError, InternalError, ScenarioError
from ..fsutil import atomic_dir, check_replaceable, sole_writer
from ..report import Html
from ..results import Results, read_run_dir, validate, write_results_dir
import polars as pl

from ._provenance import join as join_provenance
from . import _identical
from ._identical import IdenticalRuns
from ._reuse import Reuse
from .base import (
    RECONSTRUCTED_RIVALS,
    OUTAGE_FRACTION,
    OUTAGE_S,
    STALL_UTILISATION,
    STARVED_FRACTION,
    Comparison,
    Context,
    Experiment,
    Reading,
    ReadingAxis,
    RunSet,
    Stat,
    for_seeds,
    bottleneck_declaration,
    percent_change,
    stall,
)
from .verdict import MIN_EFFECT, family_whole, holm

__all__ = [
    "Comparison",
    "Context",
    "Experiment",
    "Reading",
    "ReadingAxis",
    "RunSet",
    "Stat",
    "for_seeds",
    "percent_change",
    "register",
    "get",
    "select",
    "names",
    "describe_all",
    "run_many",
    "reproduce",
    "summary_markdown",
]

_REGISTRY: dict[str, Experiment] = {}
_FAILURES: list[tuple[str, str]] = []
_LOADED = False
_LOAD_LOCK = threading.Lock()


def register(cls: type[Experiment]) -> type[Experiment]:
    """Class decorator: makes the experiment runnable by its ``name``."""
    if not cls.name or "." not in cls.name:
        raise ValueError(f"{cls.__name__}.name must look like '<paper>.<experiment>', got {cls.name!r}")
    if cls.name in _REGISTRY and type(_REGISTRY[cls.name]) is not cls:
        raise ValueError(f"two experiments are named {cls.name!r}")
    _REGISTRY[cls.name] = cls()
    return cls


def _load() -> None:
    """Imports every experiment module once. A module that fails to import is reported
    (``load_failures``) and the others stay usable."""
    global _LOADED
    with _LOAD_LOCK:
        if _LOADED:
            return
        for m in pkgutil.iter_modules(__path__):
            if m.name == "base" or m.name.startswith("_"):
                continue
            try:
                importlib.import_module(f"{__name__}.{m.name}")
            except Exception as e:  # noqa: BLE001 - one broken module must not hide the rest
                _FAILURES.append((m.name, f"{type(e).__name__}: {e}"))
        _LOADED = True


def load_failures() -> list[tuple[str, str]]:
    _load()
    return list(_FAILURES)


def names() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def get(name: str) -> Experiment:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ExperimentError(_unknown(name)) from None


def _unknown(name: str) -> str:
    papers = sorted({n.split(".")[0] for n in _REGISTRY})
    return (
        f"unknown experiment {name!r}; papers: {', '.join(papers) or 'none'}; "
        "`ecnlab reproduce --list` lists every experiment"
    )


def select(name: str) -> list[Experiment]:
    """One experiment by exact name, or every experiment of a paper by prefix."""
    _load()
    if name in _REGISTRY:
        return [_REGISTRY[name]]
    chosen = [_REGISTRY[n] for n in sorted(_REGISTRY) if n.startswith(name + ".")]
    if not chosen:
        raise ExperimentError(_unknown(name))
    return chosen


def describe_all() -> list[tuple[str, str]]:
    return [(n, _REGISTRY[n].title) for n in names()]


# ------------------------------------------------------------------------ runner


def run_many(
    scenarios: Mapping[str, Any],
    out_dir: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    progress: bool = False,
    executor: Any = None,
    resume_dir: str | os.PathLike[str] | None = None,
    reuse: Reuse | None = None,
    skip_identical: bool = True,
    tally: IdenticalRuns | None = None,
) -> dict[str, Results]:
    """Runs many scenarios through the Dask executor (``executor``, or a local cluster of
    ``jobs`` workers started for the call) and returns their results by name, in the given
    order. Every scenario is validated before any runs. With ``out_dir`` every run is also
    written to ``out_dir/<name>/`` like ``ecnlab run``. With ``resume_dir`` each finished run
    is kept there (as ``<run key>/``, written the moment it finishes), and runs already there
    are read instead of run: an interrupted call loses no finished run. With ``reuse`` a run
    that an earlier reproduction holds with the same scenario TOML and build is read from
    there (:class:`Reuse`). With ``skip_identical`` (the default) runs that differ only in
    queue limits run in increasing order of them, and one that a finished run proves
    identical (its ports never needed the limits that differ, nor read them) is written
    from that run instead of simulated (:mod:`._identical`); ``tally`` counts the runs
    simulated, proven identical and read. The first failed run
    (or Ctrl-C) stops the runs still going and is raised. ``progress`` draws the
    done / running / failed line on stderr."""
    from ..sweeps import Executor, SweepProgress, run_key

    if tally is None:
        tally = IdenticalRuns(enabled=skip_identical)
    items = list(scenarios.items())
    tomls: dict[str, str] = {}
    for name, sc in items:
        try:
            tomls[name] = validate(sc)
        except ScenarioError as e:
            raise ScenarioError(f"{name}: {e.path}" if e.path else name, e.message) from None
    keys = {name: run_key(toml) for name, toml in tomls.items()}
    results: dict[str, Results] = {}
    resume = Path(resume_dir) if resume_dir is not None else None
    by_key: dict[str, list[str]] = {}
    for name, _ in items:
        by_key.setdefault(keys[name], []).append(name)
    todo: list[tuple[str, str]] = []
    read_from: dict[str, Path] = {}  # run key → the directory its results were read from
    for key, names_ in by_key.items():
        if resume is not None and (resume / key / "run.json").is_file():
            read_from[key] = resume / key
            if reuse is not None:
                # Kept by an interrupted attempt: counted where it came from (read from the
                # earlier reproduction, or run), as if this attempt had found it there.
                reuse.take(names_[0], tomls[names_[0]])
        elif reuse is not None and (earlier := reuse.take(names_[0], tomls[names_[0]])) is not None:
            if resume is not None:
                _link_tree(earlier, resume / key)
                read_from[key] = resume / key
            else:
                read_from[key] = earlier
        else:
            todo.append((key, tomls[names_[0]]))
            continue
        kept = read_run_dir(read_from[key], lazy=True)
        for n in names_:
            results[n] = kept
    tally.read += len(read_from)
    # Runs written from a proven-identical run: the directory holding that run's tables.
    tables_from: dict[str, Path | None] = {}
    schedule = _identical.Schedule(
        tally, {k: tomls[n[0]] for k, n in by_key.items()}, [k for k, _ in todo], lambda k: results[by_key[k][0]].meta
    )
    bar: SweepProgress | None = None

    def run_dir(key: str) -> Path | None:
        if key in read_from:
            return read_from[key]
        if resume is not None and (resume / key / "run.json").is_file():
            return resume / key
        return tables_from.get(key)

    def write_identical(key: str, src_key: str, why: str) -> None:
        """Writes the run ``key`` from the finished run ``src_key`` that proves it."""
        name, src_name = by_key[key][0], by_key[src_key][0]
        src = results[src_name]
        meta = _identical.identical_meta(src.meta, tally.limits(tomls[name]), {"run": src_name, "key": src_key}, why)
        held = run_dir(src_key)
        res = Results(src.flows, src.ports, None if held is not None else src.timeseries, meta, tomls[name], timeseries_from=held)
        if resume is not None:
            _write_identical(res, held, resume / key)
            res = Results(res.flows, res.ports, None, meta, res.scenario_toml, timeseries_from=resume / key)
            tables_from[key] = resume / key
        else:
            tables_from[key] = held
        for n in by_key[key]:
            results[n] = res
        tally.proven.append({"run": name, "identical_to": src_name, "reason": why})
        if bar is not None:
            bar.proven_identical()

    def next_runs(step: tuple[list[str], list[_identical.Proven]]) -> list[tuple[str, str]]:
        run, proven = step
        for p in proven:
            write_identical(*p)
        return [(k, tomls[by_key[k][0]]) for k in run]

    def done(key: str, outcome: dict[str, Any]) -> list[tuple[str, str]]:
        if outcome["status"] != "ok":
            raise InternalError(f"{by_key[key][0]}: {outcome.get('error')}")
        t = outcome["tables"]
        res = Results(t["flows"], t["ports"], t["timeseries"], outcome["meta"], outcome["scenario_toml"])
        if resume is not None:
            write_results_dir(res, resume / key)
            # Kept on disk: its samples are read again when asked, within the budget.
            res = Results(res.flows, res.ports, None, res.meta, res.scenario_toml, timeseries_from=resume / key)
        for n in by_key[key]:
            results[n] = res
        tally.simulated += 1
        return next_runs(schedule.finished(key, res.meta))

    if todo:
        ex = executor if executor is not None else Executor(workers=jobs)
        own = executor is None
        ex.start()
        try:
            bar = SweepProgress(total=len(by_key), slots=ex.slots(), enabled=progress)
            bar.done = bar.skipped = len(by_key) - len(todo)
            ex.map(next_runs(schedule.start()), done, bar)
        finally:
            if own:
                ex.close()
    if out_dir is not None:
        for name, _ in items:
            if executor is not None and executor.interrupt.is_set():
                from ..sweeps.executor import Interrupted

                raise Interrupted("the runs were stopped: their caller failed")
            target = Path(out_dir) / name
            src = read_from.get(keys[name]) or (resume / keys[name] if resume is not None else None)
            if src is not None and src.is_dir():
                _link_tree(src, target)
            elif keys[name] in tables_from:
                _write_identical(results[name], tables_from[keys[name]], target)
            else:
                write_results_dir(results[name], target)
    return {name: results[name] for name, _ in items}


def _write_identical(res: Results, tables: Path | None, target: Path) -> None:
    """Writes the run ``res``, proven identical to the run whose directory is ``tables``
    (None: held in memory only), into ``target``: that run's table files (linked), its own
    ``run.json``."""
    if tables is None:
        write_results_dir(res, target)
        return
    with atomic_dir(target) as tmp:
        for f in ("flows", "ports", "timeseries"):
            try:
                os.link(tables / f"{f}.parquet", tmp / f"{f}.parquet")
            except OSError:
                shutil.copy2(tables / f"{f}.parquet", tmp / f"{f}.parquet")
        info = res.run_info()
        info["pcap"] = []
        (tmp / "run.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


def _link_tree(src: Path, dst: Path) -> None:
    """``dst`` as a copy of ``src`` made of hard links (a plain copy across file systems)."""
    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dst, copy_function=link)


#: Experiments after the next are handed to the workers while fewer than this many runs
#: (the next experiment's included) are ahead of the judging (see :func:`reproduce`); the
#: last one handed out may pass it by its own size. Enough to cover the judging of the
#: largest experiment (HFCC's buffer sweep, 700 runs: about 3 minutes beside two workers),
#: few enough that what the runs ahead hold stays small (a run's flows and ports tables, at
#: most a few hundred kilobytes; its time series is kept on disk until judged).
AHEAD_RUNS = 500


class _Pipeline:
    """Runs the steps of a reproduction (each a :func:`run_many` call: one experiment's runs
    under one reading) one after another in a thread of its own, in the order submitted,
    while the caller judges the steps already run: on two cores the workers would otherwise
    wait while each experiment is judged. Each step's :meth:`result` is (its results, what it
    added to the tally's counts, its seconds). A failed step fails every step after it at
    once. Leaving on an exception (a failed run, a judging error, Ctrl-C) drops the steps not
    started and stops the one running (:attr:`Executor.interrupt`), and returns only once the
    thread has ended: nothing writes into the caller's temporary output after it is gone."""

    def __init__(self, executor: Any, log: TextIO | None, progress: bool) -> None:
        self._executor = executor
        self._pool: Any = None
        self._steps: list[Any] = []  # the steps submitted and not yet taken, waited for on leaving
        self._failed = threading.Event()
        self._error: BaseException | None = None  # the first step's failure
        self._log = log
        self._progress = progress
        self._said = threading.Lock()

    def __enter__(self) -> "_Pipeline":
        from concurrent.futures import ThreadPoolExecutor

        self._executor.interrupt.clear()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ecnlab-runs")
        return self

    def say(self, line: str) -> None:
        """One line of the log, from either thread, in one write; on a terminal the progress
        bar's line (which the runs' thread draws) is cleared first and drawn again at its next
        update."""
        if self._log is None:
            return
        # The bar is drawn on a terminal only; a log written to a file gets no control codes.
        clear = self._progress and getattr(self._log, "isatty", lambda: False)()
        with self._said:
            self._log.write(("\r\x1b[2K" if clear else "") + line + "\n")
            self._log.flush()

    def submit(self, label: str, head: str, todo: Mapping[str, Any], run: Any, tally: IdenticalRuns) -> Any:
        """Queues ``run()`` (which runs ``todo``), said as ``label: head`` when it starts and
        with its counts when it ends."""

        def step() -> tuple[dict[str, Results], dict[str, int], float]:
            if self._failed.is_set():
                raise InternalError(f"{label}: not run: a step before it failed")
            t0 = time.time()
            self.say(f"{label}: {head}")
            # Only this thread changes the tally while steps run: the difference is this step's.
            before = tally.counts()
            try:
                new = run() if todo else {}
            except BaseException as e:
                if self._error is None:
                    self._error = e
                self._failed.set()
                raise
            now = tally.counts()
            counted = {k: now[k] - before[k] for k in now}
            if todo:
                read = f", {counted['read']} read from kept runs" if counted["read"] else ""
                self.say(f"{label}: {len(todo)} runs, {counted['simulated']} simulated, {counted['proven_identical']} proven identical{read}")
            return new, counted, time.time() - t0

        fut = self._pool.submit(step)
        self._steps.append(fut)
        return fut

    def result(self, step: Any) -> tuple[dict[str, Results], dict[str, int], float]:
        """The step's outcome once it is done. Waits in short slices: a wait without a timeout
        is not interrupted by Ctrl-C here (polars' signal handler restarts it). The step taken
        is let go, so that its runs' results live no longer than the caller holds them. Once
        any step has failed, a step ahead of the judging included, this raises its failure:
        the experiments between are not judged for an output that will not be written."""
        from concurrent.futures import TimeoutError as Pending

        while True:
            if self._error is not None:
                raise self._error
            try:
                out = step.result(timeout=0.1)
            except Pending:
                continue
            self._steps.remove(step)
            return out

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self._failed.set()
            self._executor.interrupt.set()
            self._pool.shutdown(wait=False, cancel_futures=True)
        interrupted = None
        # Every step ended (or was cancelled) before the thread is let go; waited for in
        # slices, as in :meth:`result`, so that a second Ctrl-C is seen.
        while not all(f.done() for f in self._steps):
            try:
                time.sleep(0.1)
            except KeyboardInterrupt as e:
                # A second Ctrl-C while the runs stop: they are stopping; wait for the thread
                # all the same, then say it.
                interrupted = e
                self._failed.set()
                self._executor.interrupt.set()
        self._pool.shutdown(wait=True)
        if interrupted is not None and exc_type is None:
            raise interrupted


# -------------------------------------------------------------------- reproduce

VERDICT_CLASSES = ("holds", "contradicted", "inconclusive", "not comparable")
FIXED = "fixed by the mechanism"
_VERDICT_CSS = {"holds": "yes", "contradicted": "no", "inconclusive": "na", "not comparable": "na", FIXED: "na"}
#: How the headline counts, as the report's count tables say it.
HEADLINE_COUNTS = (
    "as the headline counts them (a family of claims over one axis once, by its verdict as one claim; a claim on "
    "the same per-seed values as an earlier one once); in their own columns, the claims whose outcome the "
    "mechanism fixes (declared, counted by what the runs say) and, of the others, the claims against a rival we "
    "reconstructed without its paper and, of the rest, the claims whose statement is ours, not the paper's"
)


def is_fixed(c: Mapping[str, Any]) -> bool:
    """Whether a comparison of summary.json is a claim the mechanism fixes (declared)."""
    return bool(c.get("fixed")) or c.get("verdict") == FIXED


def headline_group(c: Mapping[str, Any]) -> str:
    """Where the headline counts a comparison of summary.json: ``"fixed"`` (a claim whose
    outcome the mechanism fixes, declared), else ``"reconstructed"`` (against a rival we
    reconstructed without its paper), else ``"ours"`` (a statement that is ours, not the
    paper's: ``our_statement``), else ``"paper"`` (the headline itself)."""
    if is_fixed(c):
        return "fixed"
    if c.get("rival_reconstructed"):
        return "reconstructed"
    if c.get("our_statement"):
        return "ours"
    return "paper"


def headline_verdict(c: Mapping[str, Any]) -> str | None:
    """The verdict the headline counts for a comparison of summary.json, or None when it
    counts none for it: a family is counted once, by its verdict as one claim
    (:func:`.verdict.family_whole`, on the claim that ``counts_family``), a claim repeating an
    earlier one on the same per-seed values (``duplicate_of``) not again, a row without a
    claim not at all, a claim the mechanism fixes by what its runs say. Summaries written
    before families were counted once fall back to each claim's verdict under Holm's
    correction (``counted``)."""
    whole = c.get("family_whole")
    if c.get("family") and whole:
        return whole["verdict"] if c.get("counts_family") else None
    if c.get("duplicate_of") is not None:
        return None
    if is_fixed(c):
        return (c.get("decision") or {}).get("unflagged")
    return c.get("counted") or c.get("verdict")


def count_verdicts(comparisons: list[dict[str, Any]], reconstructed: bool = False, fixed: bool = False, ours: bool = False) -> dict[str, int]:
    """How many comparisons (as in summary.json) fall in each verdict class, as the headline
    counts them (:func:`headline_verdict`: a family once, a repeat not again), with three
    groups apart (:func:`headline_group`): ``fixed=True`` counts only the claims whose outcome
    the mechanism fixes (declared; by what their runs say), ``reconstructed=True`` only the
    others against a reconstructed rival, ``ours=True`` only the others whose statement is
    ours; none of them, the rest (the headline)."""
    want = "fixed" if fixed else "reconstructed" if reconstructed else "ours" if ours else "paper"
    out = {k: 0 for k in VERDICT_CLASSES}
    for c in comparisons:
        v = headline_verdict(c)
        if v in out and headline_group(c) == want:
            out[v] += 1
    return out


def headline_units(comparisons: list[dict[str, Any]]) -> dict[str, int]:
    """What the counts of :func:`count_verdicts` (every group) are made of: ``claims`` counted
    one by one, ``families`` counted once each, the ``claims_in_families`` those stand for, and
    the ``repeats`` not counted (a claim, or every claim of a family, on the same per-seed
    values as an earlier one). ``claims + claims_in_families + repeats`` is every decided claim.
    ``repeats_in_families`` says how many of the ``claims_in_families`` repeat an earlier claim's
    per-seed values inside a family that is still counted (the family counts once whatever its
    members repeat, so they take nothing from the counts, but a reader of "0 claims repeat" must
    not take every member for a distinct measurement)."""
    out = {"claims": 0, "families": 0, "claims_in_families": 0, "repeats_in_families": 0, "repeats": 0}
    counted: set[str] = set()
    for c in comparisons:
        if c.get("verdict") is None:
            continue
        if c.get("family") and c.get("family_whole"):
            if c.get("family_repeats"):
                out["repeats"] += 1
            else:
                out["claims_in_families"] += 1
                out["repeats_in_families"] += c.get("duplicate_of") is not None
                out["families"] += bool(c.get("counts_family"))
        elif c.get("duplicate_of") is not None:
            out["repeats"] += 1
        else:
            out["claims"] += 1
    return out


def count_constant(comparisons: list[dict[str, Any]]) -> int:
    """How many of the claims the headline counts (:func:`count_verdicts`: neither fixed, nor
    against a reconstructed rival, nor whose statement is ours; a repeat not again) hold or are
    contradicted, each by its own verdict, on arms that each took one value in every seed
    (flagged: the seeds repeat one outcome)."""
    return sum(
        1
        for c in comparisons
        if c.get("duplicate_of") is None and headline_group(c) == "paper"
        and (c.get("counted") or c.get("verdict")) in ("holds", "contradicted")
        and any("the seeds do not vary this comparison" in f for f in (c.get("decision") or {}).get("flags") or [])
    )


def _same_claim_key(c: Mapping[str, Any]) -> str | None:
    """What makes two comparisons the same claim on the same runs and values: the claim (a > b
    written as b < a, its target, tolerance, smallest effect: every field but its text), what
    it tests, its unit, what each arm counts, the rival, and both arms' per-seed values.
    Not the arms' configuration names: two configurations whose runs are byte-identical (a
    buffer the scheme never fills) give the same values, and a claim on them says nothing
    new. Identical per-seed values that vary over the seeds identify an arm's runs; an arm that
    takes one value in every seed (0 drops) does not, so such an arm is keyed by its
    configuration as well ("VCP drops < ECN's" and "EECN drops < ECN's" at 0 drops in every
    seed are two claims)."""
    kind, ps = c.get("kind"), c.get("per_seed")
    if not kind or not ps:
        return None  # without the values it was decided on, sameness cannot be told
    a, b = ps.get("a"), ps.get("b")
    if not any(v is not None for v in (a or {}).values()):
        return None  # no value: nothing is counted twice
    k = dict(kind)
    k.pop("text", None)
    arms = c.get("arms") or {}
    ra, rb = arms.get("a"), arms.get("b")
    measures = dict(c.get("measures") or {})
    ma, mb = measures.get("a"), measures.get("b")
    if k.get("kind") == "greater":
        k["kind"], a, b, ra, rb, ma, mb = "less", b, a, rb, ra, mb, ma
    def varies(v: Mapping[str, Any] | None) -> bool:
        return len({json.dumps(x) for x in (v or {}).values()}) > 1

    configs = [None if varies(a) else ra, None if varies(b) or b is None else rb]
    if not varies(a) and not ra:
        return None  # constant values of runs not named: nothing ties them to one run
    return json.dumps([k, c.get("tests"), c.get("unit"), ma, mb, c.get("rival"), a, b, configs], sort_keys=True, default=str)


def mark_duplicates(comparisons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Marks, in one experiment's comparisons (one reading), what the headline counts once:
    each comparison that repeats an earlier one's claim on the same per-seed values
    (``duplicate_of``: the earlier one's metric), and per family the claim that counts it
    (``counts_family``, its first; none when every claim of the family repeats an earlier one,
    ``family_repeats``)."""
    seen: dict[str, str] = {}
    for c in comparisons:
        key = _same_claim_key(c)
        if key is None:
            continue
        if key in seen:
            c["duplicate_of"] = seen[key]
        else:
            seen[key] = c["metric"]
    families: dict[str, list[dict[str, Any]]] = {}
    for c in comparisons:
        if c.get("family") and c.get("family_whole") and c.get("verdict") is not None:
            families.setdefault(c["family"], []).append(c)
    for members in families.values():
        repeats = all(c.get("duplicate_of") is not None for c in members)
        for i, c in enumerate(members):
            c["counts_family"] = i == 0 and not repeats
            if repeats:
                c["family_repeats"] = True
    return comparisons


def decide_families(comps: list[Comparison]) -> list[Comparison]:
    """Every family of claims (``claim(..., family=)``) decided also with Holm's correction,
    and as the one claim it makes (:func:`.verdict.family_whole`, ``family_whole``), which the
    headline counts once. A claim the mechanism fixes is none of its family's tests (Holm
    leaves it out) and is counted apart on its own. The family's other claims must be counted
    in one place: a family that mixes claims against a reconstructed rival, or claims whose
    statement is ours, with others is refused."""
    families: dict[str, list[int]] = {}
    for i, c in enumerate(comps):
        if c.family and c.decision is not None:
            families.setdefault(c.family, []).append(i)
    for name, idx in families.items():
        tested = [i for i in idx if not comps[i].fixed]
        groups = {(comps[i].rival_reconstructed, bool(comps[i].our_statement)) for i in tested}
        if len(groups) > 1:
            raise ExperimentError(
                f"family {name!r} mixes claims the headline counts apart (against a reconstructed rival, or with our_statement) with others: split it"
            )
        for i, d in zip(idx, holm([comps[i].decision for i in idx], name)):  # type: ignore[misc]
            comps[i].decision = d
        if tested:
            whole = family_whole(comps[i].decision.counted for i in tested)  # type: ignore[union-attr]
            for i in tested:
                comps[i].family_whole = whole
    return comps


def _counts_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{counts[k]} {k}" for k in VERDICT_CLASSES)


def _verdict_cell(c: Comparison) -> str:
    import html as h

    if c.decision is None:
        return '<td><span class="na">–</span></td><td class="l"></td><td class="l"></td>'
    d = c.decision
    whole = c.family_whole
    why = _why(d.to_json(), c.rival_reconstructed, c.rival, "; ".join(c.stall_unchecked))
    why += _counting_why(c.our_statement, c.family, None if whole is None else {"verdict": whole[0].value, "reason": whole[1]})
    family = ""
    if d.family_verdict is not None:
        family = f'<br><span class="{_VERDICT_CSS[d.family_verdict.value]}">{h.escape(d.family_verdict.value)}</span> <small>(Holm, {d.family_size})</small>'
    if whole is not None:
        family += f'<br><small>family:</small> <span class="{_VERDICT_CSS[whole[0].value]}">{h.escape(whole[0].value)}</span>'
    if c.our_statement:
        family += "<br><small>statement ours</small>"
    return (
        f'<td><span class="{_VERDICT_CSS[d.verdict.value]}">{h.escape(d.verdict.value)}</span>{family}</td>'
        f'<td class="l">{h.escape(d.tests)}</td>'
        f'<td class="l">{h.escape(_claim_and_why(d.claim, why))}</td>'
    )


def _counting_why(our_statement: str | None, family: str | None, whole: Mapping[str, Any] | None) -> str:
    """What the reader must know of how the headline counts a claim: its family as one claim
    (counted once, by that verdict) and a statement that is ours (counted apart)."""
    why = ""
    if family and whole:
        why += f"; the family '{family}' as one claim (counted once): {whole['verdict']}, {whole['reason']}"
    if our_statement:
        why += f"; the statement is ours, not the paper's ({our_statement}): counted apart"
    return why


def _claim_and_why(claim: str, why: str) -> str:
    """The why cell: the claim as text, then its reason (a row without a claim text, e.g. one
    not comparable, starts with the reason)."""
    return f"{claim}: {why}" if claim else why


def _why(d: Mapping[str, Any], reconstructed: bool = False, rival: str | None = None, unchecked: str = "") -> str:
    """A decision's reason with what else the reader must know: seeds left out, flags, the
    family's verdict, a reconstructed rival, stalls not checked."""
    why = d.get("reason", "")
    const = d.get("constant") or {}
    if const:
        why += "; " + " and ".join(f"{arm} = {_g(v)}" for arm, v in const.items()) + f" in every seed ({d.get('n')})"
    by_seed = _effect_by_seed(d)
    if by_seed:
        why += f"; {by_seed}"
    if d.get("excluded"):
        why += "; left out: " + "; ".join(f"seed {e['seed']}: {e['reason']}" for e in d["excluded"])
    for f in d.get("flags") or []:
        why += f"; FLAG {f}"
    if d.get("family_verdict"):
        why += f"; as one of the {d.get('family_size')} claims of family '{d.get('family')}' (Holm): {d['family_verdict']}"
    if reconstructed:
        why += f"; against {rival}, a rival we reconstructed ({RECONSTRUCTED_RIVALS.get(str(rival).lower(), '')})"
    if unchecked:
        why += f"; stalls and outages not checked ({unchecked})"
    return why


def _effect_by_seed(d: Mapping[str, Any]) -> str:
    """What the claim was decided on, seed by seed (a/b of a paired claim, a's value of a claim
    on one arm), to the digits its smallest counted difference or tolerance needs: the arms'
    mean [min – max] alone cannot show which seeds agreed."""
    effect = d.get("effect") or {}
    if not effect:
        return ""
    claim = str(d.get("claim") or "")
    what = "a/b" if " b" in claim or claim.startswith("a/b") else "a"
    m = d.get("min_effect")
    if not m:
        within = re.search(r"±([0-9.]+)%", claim)
        m = float(within.group(1)) / 100 if within else None
    digits = max(3, math.ceil(-math.log10(m)) + 2) if m and m > 0 else 4
    digits = min(digits, 6)
    values = [(k, _g(v, digits)) for k, v in effect.items()]
    if len(values) > 12:
        return ""
    return f"{what} by seed: " + ", ".join(f"{k}: {v}" for k, v in values)


def _comparison_table(doc: Html, comps: list[Comparison]) -> None:
    import html as h

    rows = []
    for c in comps:
        s = c.ours_stat()
        paper = c.paper if isinstance(c.paper, str) else ("" if c.paper is None else str(Stat.of([c.paper])))
        ours = "" if s is None else f"{s} (n = {s.n})"
        rows.append(
            "<tr>"
            f'<td class="l">{h.escape(c.metric)}</td>'
            f'<td class="l">{h.escape(c.claim)}</td>'
            f"<td>{h.escape(paper)}</td>"
            f"<td>{h.escape(ours)}</td>"
            f'<td class="l">{h.escape(c.unit)}</td>'
            + _verdict_cell(c)
            + f'<td class="l">{h.escape(c.note)}</td>'
            "</tr>"
        )
    doc.raw(
        '<div class="tbl"><table class="cmp"><tr><th class="l">metric</th><th class="l">claim</th><th>paper</th>'
        '<th>ecnlab: mean [min – max] over seeds</th><th class="l">unit</th><th>verdict</th><th class="l">tests</th>'
        '<th class="l">why (the rule: exact sign test over paired seeds)</th><th class="l">note</th></tr>'
        + "".join(rows)
        + "</table></div>"
    )


def _counts_cell(counts: Mapping[str, int]) -> str:
    return " / ".join(f'<span class="{_VERDICT_CSS[k]}">{counts[k]}</span>' for k in VERDICT_CLASSES)


def _overview(sections: list[dict[str, Any]], readings: list[str]) -> str:
    """The report's first table: each experiment with its verdict counts (per reading)."""
    import html as h

    head = "".join(f"<th>{h.escape(r)}</th>" for r in readings)
    rows = []
    for s in sections:
        name = h.escape(s["experiment"])
        cells = "".join(
            f"<td>{_counts_cell(count_verdicts(s['by_reading'][r])) if r in s['by_reading'] else '–'}</td>" for r in readings
        )
        stalls = len(s["stalls"])
        rec = _counts_cell(count_verdicts(s["by_reading"]["default"], reconstructed=True))
        fix = _counts_cell(count_verdicts(s["by_reading"]["default"], fixed=True))
        ours = _counts_cell(count_verdicts(s["by_reading"]["default"], ours=True))
        rows.append(
            f'<tr><td class="l"><a href="#{name}">{name}</a></td><td class="l">{h.escape(s["title"])}</td>'
            f"{cells}<td>{rec}</td><td>{fix}</td><td>{ours}</td><td>{len(s['runs'])}</td><td>{stalls}</td><td>{s['wall_s']:.1f}</td></tr>"
        )
    total = "".join(
        f"<td><b>{_counts_cell(count_verdicts([c for s in sections for c in s['by_reading'].get(r, [])]))}</b></td>" for r in readings
    )
    default = [c for s in sections for c in s["by_reading"]["default"]]
    rec_total = _counts_cell(count_verdicts(default, reconstructed=True))
    fix_total = _counts_cell(count_verdicts(default, fixed=True))
    ours_total = _counts_cell(count_verdicts(default, ours=True))
    return (
        '<p class="note">Claims per verdict: holds / contradicted / inconclusive / not comparable, '
        f"under each reading run (columns), {HEADLINE_COUNTS}.</p>"
        '<div class="tbl"><table class="cmp"><tr><th class="l">experiment</th><th class="l">what</th>'
        f"{head}<th>vs reconstructed rivals (default)</th><th>fixed by the mechanism (default)</th><th>statements ours (default)</th><th>runs</th><th>stalled runs</th><th>wall time (s)</th></tr>"
        + "".join(rows)
        + f'<tr><td class="l"><b>all</b></td><td class="l"></td>{total}<td><b>{rec_total}</b></td><td><b>{fix_total}</b></td><td><b>{ours_total}</b></td><td></td><td></td><td></td></tr></table></div>'
    )


def _reading_table(doc: Html, by_reading: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per claim, its verdict under each reading; returns the claims whose verdict depends on
    the reading."""
    import html as h

    readings = list(by_reading)
    metrics: dict[str, dict[str, str]] = {}
    for r, comps in by_reading.items():
        for c in comps:
            if c.get("verdict") is not None:
                metrics.setdefault(c["metric"], {})[r] = c["verdict"]
    depends = []
    rows = []
    for m, v in metrics.items():
        distinct = {v.get(r) for r in readings if v.get(r) is not None}
        differs = len(distinct) > 1
        if differs:
            depends.append({"metric": m, "verdicts": dict(v), "holds_under": [r for r in readings if v.get(r) == "holds"]})
        cells = "".join(
            f'<td><span class="{_VERDICT_CSS.get(v.get(r, ""), "na")}">{h.escape(v.get(r, "–"))}</span></td>' for r in readings
        )
        rows.append(f'<tr><td class="l">{"<b>" if differs else ""}{h.escape(m)}{"</b>" if differs else ""}</td>{cells}</tr>')
    doc.raw(
        '<div class="tbl"><table class="cmp"><tr><th class="l">claim (bold: the verdict depends on the reading)</th>'
        + "".join(f"<th>{h.escape(r)}</th>" for r in readings)
        + "</tr>"
        + "".join(rows)
        + "</table></div>"
    )
    return depends


def _readings_doc(exp: Experiment) -> str:
    return "; ".join(f"{a.name} ∈ {{{', '.join(map(str, a.values))}}}, default {a.default}" + (f" ({a.why})" if a.why else "") for a in exp.axes)


def scenario_key(sc: Any) -> str:
    """What makes two runs the same run: the scenario without its name."""
    from ..scenario import load_scenario

    return json.dumps({**load_scenario(sc).to_dict(), "name": None}, sort_keys=True)


def check_bottleneck(exp: Experiment, run_names: Iterable[str]) -> None:
    """An experiment names its bottleneck port(s) for every run, or says in
    ``no_bottleneck`` why none can be checked; anything else is an error."""
    declared, why = bottleneck_declaration(exp)
    if not declared:
        raise ExperimentError(f"{exp.name}: declares no bottleneck: override bottleneck(run_name) to name the port(s) whose capacity a stall is measured against, or set no_bottleneck to the reason none can be checked")
    if why:
        return
    for n in run_names:
        if not exp.bottleneck(n):
            raise ExperimentError(f"{exp.name}: bottleneck({n!r}) names no port; set no_bottleneck to the reason if no link of this experiment can be checked")


def check_readings_change_runs(exp: Experiment, per_reading: list[tuple[Reading, dict[str, Any]]], per_keys: list[dict[str, str]]) -> None:
    """A reading that changes run axes (``affects="runs"``) but leaves every run's scenario
    identical to the default reading's (``per_keys[0]``: run name → :func:`scenario_key`) is
    an error naming the axis."""
    axes = {a.name: a for a in exp.axes}
    for (rd, _), keys in list(zip(per_reading, per_keys))[1:]:
        changed = [axes[k] for k in rd.changed]
        if not changed or any(a.affects != "runs" for a in changed):
            continue
        if keys == per_keys[0]:
            names = ", ".join(f"{a.name} = {rd.changed[a.name]!r}" for a in changed)
            raise ExperimentError(
                f"{exp.name}: the reading {names} leaves every run's scenario identical to the default's: "
                "the axis changes nothing this experiment runs (declare it affects='analysis' if it changes only the analysis, or leave it off this experiment)"
            )


def check_readings_change_analysis(exp: Experiment, by_reading: Mapping[str, list[dict[str, Any]]], readings: Mapping[str, Reading]) -> None:
    """A reading of an analysis axis (``affects="analysis"``) must change at least one
    comparison: its per-seed values, its claim or its verdict."""
    def fingerprint(comps: list[dict[str, Any]]) -> str:
        return json.dumps([(c["metric"], c.get("per_seed"), c.get("kind"), c.get("verdict")) for c in comps], sort_keys=True, default=str)

    axes = {a.name: a for a in exp.axes}
    base = fingerprint(by_reading["default"])
    for name, comps in by_reading.items():
        rd = readings[name]
        changed = [axes[k] for k in rd.changed]
        if not changed or any(a.affects != "analysis" for a in changed):
            continue
        if fingerprint(comps) == base:
            names = ", ".join(f"{a.name} = {rd.changed[a.name]!r}" for a in changed)
            raise ExperimentError(f"{exp.name}: the reading {names} changes no comparison (per-seed values, claim or verdict): the axis does nothing here")


def check_claims_unique(exp: Experiment, by_reading: Mapping[str, list[dict[str, Any]]]) -> None:
    """No reading judges two claims under one metric: claims are paired across readings by
    their metric (:func:`check_claims_pair_across_readings`, :func:`_reading_table`), where a
    second claim of the same name would silently take the first's place. Such a claim set is
    an error naming the reading and the metrics."""
    for name, comps in by_reading.items():
        seen = Counter(c["metric"] for c in comps)
        twice = [m for m, n in seen.items() if n > 1]
        if twice:
            raise ExperimentError(
                f"{exp.name}: under the reading {name} " + "; ".join(f"{m!r} names {seen[m]} claims" for m in twice[:3])
                + (f" and {len(twice) - 3} more" if len(twice) > 3 else "")
                + ": a claim is paired across readings by its metric, so each claim of a reading needs its own"
            )


def check_claims_pair_across_readings(exp: Experiment, by_reading: Mapping[str, list[dict[str, Any]]]) -> None:
    """Every reading judges the same claims as the default reading: a claim is paired with
    itself across readings by its metric (:func:`_reading_table`), so a claim whose metric
    names a reading's value ("utilisation at 15 s (last 1 s)", "seconds to 90 %") has no
    counterpart under another reading, and a verdict that the reading flips would show as
    "–" in both columns instead of as depending on the reading. Such a claim set is an
    error naming the reading and the unpaired claims."""
    base = [c["metric"] for c in by_reading["default"]]
    for name, comps in by_reading.items():
        if name == "default":
            continue
        mine = [c["metric"] for c in comps]
        extra, missing = [m for m in mine if m not in set(base)], [m for m in base if m not in set(mine)]
        if extra or missing:
            show = lambda ms: "; ".join(repr(m) for m in ms[:3]) + (f" and {len(ms) - 3} more" if len(ms) > 3 else "")  # noqa: E731
            raise ExperimentError(
                f"{exp.name}: under the reading {name} "
                + " and ".join(
                    x
                    for x in (
                        f"{len(extra)} claim(s) have no counterpart under the default ({show(extra)})" if extra else "",
                        f"{len(missing)} of the default's claim(s) are not judged ({show(missing)})" if missing else "",
                    )
                    if x
                )
                + ": a claim is paired across readings by its metric, so its metric must not name a reading's value (put the value in its text)"
            )


def same_outputs(a: Results, b: Results) -> bool:
    """Two runs gave the same outputs: the same event count and equal flows, ports and time
    series tables (NaN equal to NaN, null to null; the time series read only when the rest
    agrees)."""
    return (
        a.meta.get("events") == b.meta.get("events")
        and a.flows.equals(b.flows)
        and a.ports.equals(b.ports)
        and a.timeseries.equals(b.timeseries)
    )


def reading_effects(exp: Experiment, per_reading: list[tuple[Reading, dict[str, Any]]], per_keys: list[dict[str, str]], results_of: Mapping[str, Mapping[str, Results]]) -> list[dict[str, Any]]:
    """What each reading of a run axis did to the runs it changed. A reading must change
    some run's scenario (:func:`check_readings_change_runs`), but a changed scenario can still
    run exactly as the default's (a threshold never reached, a timer that coincides with
    another): its verdicts then repeat the default's for a reason that is not robustness.
    Per reading, the runs whose scenario differs from the default reading's run of the same
    name (``changed``) and those of them whose outputs are the default run's
    (``same_outputs``: :func:`same_outputs`), with their names; ``acted`` is False when every
    changed run gave the default's outputs. Runs the default reading has no run of the same
    name for (a reading that renames or adds runs) cannot be compared: ``unpaired`` counts
    them, and a reading with no other run is listed with ``acted`` None."""
    default = results_of["default"]
    out = []
    for (rd, runs), keys in list(zip(per_reading, per_keys))[1:]:
        changed = [k for k in runs if k in per_keys[0] and keys[k] != per_keys[0][k]]
        unpaired = [k for k in runs if k not in per_keys[0]]
        if not changed:
            if unpaired:
                out.append({"reading": rd.name, "changed": 0, "same_outputs": 0, "acted": None, "same_output_runs": [], "unpaired": len(unpaired)})
            continue
        same = [k for k in changed if same_outputs(results_of[rd.name][k], default[k])]
        out.append(
            {
                "reading": rd.name,
                "changed": len(changed),
                "same_outputs": len(same),
                "acted": len(same) < len(changed),
                "same_output_runs": [k[len(exp.name) + 1 :] for k in same],
                "unpaired": len(unpaired),
            }
        )
    return out


def effects_table(summary: Mapping[str, Any], heading: str) -> list[str]:
    """summary.json's ``reading_effects`` of every experiment as a Markdown section (none when
    no reading of a run axis was run)."""
    rows = [(s["experiment"], e) for s in summary.get("experiments", []) for e in s.get("reading_effects") or []]
    if not rows:
        return []
    idle = sum(1 for _, e in rows if e["acted"] is False)
    out = [
        "",
        f"{heading} What each reading of a run axis did to the runs it changed ({idle} of {len(rows)} did not act)",
        "",
        "A reading that changes a run's scenario can still leave its outputs as the default reading's (the event count and the flows, ports and time series tables equal): "
        "where every run it changed did, the reading did not act on the runs, and a verdict the same as the default's is no sign of robustness "
        "(one that differs, differs by the analysis alone). Runs the default reading has none of the same name for are not compared (unpaired).",
        "",
        "| experiment | reading | runs changed | of them, the default's outputs | unpaired runs | acted on the runs |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    out += [
        f"| {x} | {e['reading']} | {e['changed']} | {e['same_outputs']} | {e.get('unpaired', 0)} | {'not compared' if e['acted'] is None else 'yes' if e['acted'] else '**no**'} |"
        for x, e in rows
    ]
    return out


def effects_sentence(e: Mapping[str, Any]) -> str:
    """One reading's :func:`reading_effects` entry as a sentence."""
    if e["acted"] is None:
        return f"{e['reading']}: its {e['unpaired']} run(s) have no run of the same name under the default reading and were not compared"
    if not e["acted"]:
        return f"{e['reading']}: changed the scenario of {e['changed']} run(s), and every one of them gave the default reading's outputs: the reading did not act on the runs (a verdict that differs under it differs by the analysis alone)"
    if e["same_outputs"]:
        return f"{e['reading']}: changed the scenario of {e['changed']} run(s); {e['same_outputs']} of them gave the default reading's outputs"
    return f"{e['reading']}: changed the scenario of {e['changed']} run(s), each with outputs of its own"


def reproduce(
    name: str,
    out: str | os.PathLike[str],
    quick: bool = False,
    seeds: int | None = None,
    jobs: int | None = None,
    progress: bool = False,
    log: TextIO | None = None,
    readings: str | None = None,
    scheduler: str | None = None,
    threads: bool = False,
    reuse: str | os.PathLike[str] | None = None,
    reuse_any_build: bool = False,
    skip_identical: bool = True,
) -> dict[str, Any]:
    """Runs one experiment or all of a paper's under the chosen readings (``None`` or
    ``"default"``: the default reading; ``"all"``: the default and every other value of each
    axis, one axis at a time; or ``"axis=value,…"``) and writes ``out/report.html``,
    ``out/summary.json``, ``out/summary.md`` (the verdicts as Markdown), ``out/figures/*.png`` and ``out/runs/<run>/`` (the default reading)
    and ``out/runs/<reading>/<run>/`` (runs another reading adds). A run whose scenario is the
    same under two readings is run once. ``out`` appears complete or not at all; until it
    does, finished runs are kept beside it in ``.<out>.resume/``, so an interrupted
    reproduction started again runs only what it had not finished. One process at a time
    writes an output (``.<out>.lock`` beside it): a second is refused (OutputError). Runs go through the Dask
    executor: a local cluster of ``jobs`` workers (processes, or threads with ``threads``),
    or the cluster whose scheduler is at ``scheduler``. With ``reuse`` (an earlier
    reproduction's directory) a run whose scenario TOML that reproduction holds byte for byte,
    written by this same simulator build, is read from it instead of run (:class:`Reuse`):
    the verdicts are judged again by today's analysis without running again what cannot have
    changed; summary.json says how many runs were reused and how many run (``"reuse"``). With
    ``reuse_any_build`` every run is read from ``reuse`` whatever build wrote it and nothing
    is run: a run it lacks (or holds with another scenario) fails the call, naming the run,
    before anything is read. With ``skip_identical`` (the default) a run that a finished run
    of the same scenario under other queue limits proves identical is written from it, not
    simulated (:func:`run_many`); summary.json counts them (``"identical_runs"``) and each
    one's run.json names its run and why.

    Before anything runs, every experiment must name its bottleneck (or say why none) and
    every reading of a run axis must change a run; after the analysis, every reading of an
    analysis axis must change a comparison. Each experiment's parameters are joined with
    their sources (:meth:`Experiment.provenance` and its host profile) over every run's
    fully-defaulted scenario; keys without a source are listed in the report and in
    summary.json (``provenance_missing``)."""
    from .verdict import ALPHA

    exps = select(name)
    check_replaceable(out)
    # Declare and validate every run of every experiment, under every reading, before
    # running any.
    plans = []
    for exp in exps:
        sd = exp.seeds(quick, seeds)
        try:
            chosen = Reading.choose(exp.axes, readings)
        except (KeyError, ValueError) as e:
            raise ExperimentError(f"{exp.name}: {e.args[0]}") from None
        per_reading = []
        for rd in chosen:
            runs = {f"{exp.name}-{k}": v for k, v in exp.runs(quick, sd, rd).items()}
            per_reading.append((rd, runs))
        check_bottleneck(exp, [k[len(exp.name) + 1 :] for _, runs in per_reading for k in runs])
        per_keys = [{k: scenario_key(v) for k, v in runs.items()} for _, runs in per_reading]
        check_readings_change_runs(exp, per_reading, per_keys)
        plans.append((exp, sd, per_reading, per_keys))
    if reuse_any_build and reuse is None:
        raise ExperimentError("reuse_any_build needs reuse (the reproduction whose runs are judged again)")
    earlier = Reuse(reuse, any_build=reuse_any_build) if reuse is not None else None
    if earlier is not None and earlier.any_build:
        # Every run the loop below would run must be there; a run another reading already
        # ran (the same scenario but for its name) is shared, not run, and so not asked for.
        for _, _, per_reading, per_keys in plans:
            seen: set[str] = set()
            for (rd, runs), keys in zip(per_reading, per_keys):
                for k, v in runs.items():
                    if keys[k] not in seen:
                        earlier.require(k, validate(v), rd.name)
                seen.update(keys.values())
    from ..sweeps import Executor

    out_path = Path(out).absolute()
    resume = out_path.parent / f".{out_path.name}.resume"
    executor = Executor(scheduler=scheduler, workers=jobs, threads=threads)
    tally = IdenticalRuns(enabled=skip_identical)
    started = time.time()
    all_readings: list[str] = []
    # One process at a time writes an output: the finished runs kept beside it are read back
    # while judging, and removed once the output holds them.
    with sole_writer(out_path, remove_after=resume), closing(executor), atomic_dir(out) as tmp, _Pipeline(executor, log, progress) as pipeline:
        # Each experiment's runs, reading by reading, are handed to the workers while the
        # experiments before are judged here (judging takes one core): the next experiment's
        # always, and those after it while fewer than AHEAD_RUNS runs are ahead of the
        # judging. With the next one's alone, the workers waited whenever judging an
        # experiment took longer than running the next (HFCC's default form stood idle about
        # 70 s before its efficiency and fairness runs; UNO's took 88-96 s against 82-83 s,
        # timed alternately); the bound keeps a paper's runs from all being held at once.
        # Each experiment's steps, in reading order, from the one being judged on; taken off
        # the front when its judging starts, so a judged experiment's runs are let go.
        steps: deque[Iterator[Any]] = deque()
        # Runs each experiment handed out holds (its readings', each run once).
        handed: list[int] = []

        def submit_steps(at: int) -> None:
            exp, sd, per_reading, per_keys = plans[at]
            seen: set[str] = set()
            mine = []
            count = 0
            for (rd, runs), keys in zip(per_reading, per_keys):
                # Two readings share a run when their scenarios differ at most in the name.
                todo = {k: v for k, v in runs.items() if keys[k] not in seen}
                seen.update(keys[k] for k in todo)
                count += len(todo)
                sub = "runs" if rd.name == "default" else f"runs/{_slug(rd.name)}"
                head = f"{len(runs)} runs ({len(sd)} seeds), {len(todo)} new …"
                mine.append(pipeline.submit(f"{exp.name} [{rd.name}]", head, todo, lambda todo=todo, sub=sub: run_many(todo, tmp / sub, progress=progress, executor=executor, resume_dir=resume, reuse=earlier, tally=tally), tally))
            steps.append(iter(mine))
            handed.append(count)

        def submit_ahead(judged: int) -> None:
            """Hands out experiments after ``judged`` (the one being judged; -1 before any):
            the next one, then more while fewer than AHEAD_RUNS runs are ahead."""
            while len(handed) < len(plans) and (len(handed) <= judged + 1 or sum(handed[judged + 1 :]) < AHEAD_RUNS):
                submit_steps(len(handed))

        if not (earlier is not None and earlier.any_build):
            # Started here, not in the runs' thread: the workers are started with Ctrl-C
            # ignored, which only the main thread can arrange.
            executor.start()
        submit_steps(0)
        doc = Html(f"ecnlab reproduce {name}" + (" (quick)" if quick else ""), fig_dir=tmp / "figures")
        doc.p(rule_text(ALPHA), "note")
        sections: list[dict[str, Any]] = []
        overview_at = len(doc.parts)
        depends_at = overview_at + 1
        all_depends: list[dict[str, Any]] = []
        for at, (exp, sd, per_reading, per_keys) in enumerate(plans):
            submit_ahead(at)
            mine = steps.popleft()
            judging = 0.0  # seconds spent here judging the experiment's runs
            running = 0.0  # and running them
            identical_runs = dict.fromkeys(tally.counts(), 0)
            done: dict[str, tuple[str, Results]] = {}  # scenario key → (run dir, results)
            by_reading: dict[str, list[dict[str, Any]]] = {}
            run_dirs: dict[str, dict[str, str]] = {}
            stalls: list[dict[str, Any]] = []
            starved: list[dict[str, Any]] = []
            outs: list[dict[str, Any]] = []
            #: Runs whose outages could not be checked, and why.
            blind: list[dict[str, Any]] = []
            default_comps: list[Comparison] = []
            results_of: dict[str, dict[str, Results]] = {}
            provenance: list[dict[str, Any]] = []
            provenance_missing: dict[str, list[str]] = {}
            readings_by_name = {rd.name: rd for rd, _ in per_reading}
            for (rd, runs), keys in zip(per_reading, per_keys):
                if rd.name not in all_readings:
                    all_readings.append(rd.name)
                sub = "runs" if rd.name == "default" else f"runs/{_slug(rd.name)}"
                new, counted, ran_s = pipeline.result(next(mine))
                t_judge = time.time()
                running += ran_s
                identical_runs = {k: identical_runs[k] + counted[k] for k in identical_runs}
                for k, r in new.items():
                    done[keys[k]] = (f"{sub}/{k}", r)
                results = {k: done[keys[k]][1] for k in runs}
                results_of[rd.name] = results
                run_dirs[rd.name] = {k: done[keys[k]][0] for k in runs}
                rs = RunSet({k[len(exp.name) + 1 :]: v for k, v in results.items()}, experiment=exp)
                prov = join_provenance({k: r.scenario_toml for k, r in results.items()}, exp.provenance(quick, rd), exp.hosts)
                if rd.name == "default":
                    provenance = [x.to_json() for x in prov.sources]
                if not prov.complete:
                    provenance_missing[rd.name] = prov.problems()
                draw = rd.name == "default"
                if draw:
                    doc.h(2, f"{exp.name}: {exp.title}", anchor=exp.name)
                    if exp.source:
                        doc.p(f"Source: {exp.source}", "note")
                    if exp.description:
                        doc.p(exp.description)
                    if exp.axes:
                        doc.p(f"Readings: {_readings_doc(exp)}.", "note")
                    section_start = len(doc.parts)
                    ctx = Context(quick=quick, seeds=sd, doc=doc, experiment=exp.name, fig_prefix=f"{exp.name}-", reading=rd)
                    comps = decide_families(exp.analyze(rs, ctx))
                    default_comps = comps
                    figures_and_notes = doc.parts[section_start:]
                    del doc.parts[section_start:]
                    _comparison_table(doc, comps)
                    doc.parts.extend(figures_and_notes)
                else:
                    scratch = Html("", fig_dir=None)
                    ctx = Context(quick=quick, seeds=sd, doc=scratch, experiment=exp.name, reading=rd, draw=False)
                    comps = decide_families(exp.analyze(rs, ctx))
                for run_name in rs:
                    # A run shared with an earlier reading is listed under that reading only.
                    if not run_dirs[rd.name][f"{exp.name}-{run_name}"].startswith(sub + "/"):
                        continue
                    st = rs.stall_of(run_name)
                    if st is not None:
                        stalls.append({"run": f"{exp.name}-{run_name}", "reading": rd.name, **st})
                    starved += [{"run": f"{exp.name}-{run_name}", "reading": rd.name, **x} for x in rs.starved_of(run_name)]
                    outs += [{"run": f"{exp.name}-{run_name}", "reading": rd.name, **o} for o in rs.outages_of(run_name)]
                    if why := rs.outages_unchecked(run_name):
                        blind.append({"run": f"{exp.name}-{run_name}", "reading": rd.name, "why": why})
                by_reading[rd.name] = mark_duplicates([c.to_json() for c in comps])
                if log:
                    pipeline.say(f"{exp.name} [{rd.name}]: {_counts_text(count_verdicts(by_reading[rd.name]))}")
                judging += time.time() - t_judge
            t_judge = time.time()
            check_readings_change_analysis(exp, by_reading, readings_by_name)
            check_claims_unique(exp, by_reading)
            check_claims_pair_across_readings(exp, by_reading)
            effects = reading_effects(exp, per_reading, per_keys, results_of)
            judging += time.time() - t_judge
            # What the experiment would take alone: its runs' time and its judging's (later
            # experiments' runs go on while this one is judged, so the sum over experiments is
            # more than the reproduction's wall time).
            wall = running + judging
            depends: list[dict[str, Any]] = []
            if len(by_reading) > 1:
                doc.h(3, f"{exp.name}: verdicts under each reading")
                depends = _reading_table(doc, by_reading)
                for d in depends:
                    d["experiment"] = exp.name
                all_depends += depends
            if effects:
                doc.p(
                    "What each reading of a run axis did to the runs it changed (outputs: the event count and the flows, ports and time series tables, against the default reading's run of the same name): "
                    + "; ".join(effects_sentence(e) for e in effects) + ".",
                    "note",
                )
            if stalls:
                doc.h(3, f"{exp.name}: stalled runs")
                doc.table(
                    pl.DataFrame(stalls).select("run", "reading", "port", "utilisation", "from_s", "to_s", "measured_by"),
                    caption=f"Runs in which the flows delivered less than {STALL_UTILISATION:.0%} of the bottleneck's capacity (its rate schedule, in payload bits) while a bulk flow was backlogged; a claim decided on one of them is inconclusive ('decided on stalled runs') unless it is about the stall.",
                )
            if outs:
                doc.h(3, f"{exp.name}: outages")
                doc.table(
                    pl.DataFrame(outs).select("run", "reading", "port", "from_s", "to_s", "span_s", "delivered"),
                    caption=f"Spans of at least {OUTAGE_S:g} s (and two of the flows' longest base RTT) in which the flows crossing the bottleneck delivered data in at most {OUTAGE_FRACTION:.0%} of the sampled intervals and less than {OUTAGE_FRACTION:.0%} of what it offered while a bulk flow was backlogged and the port's sampled queue was empty (delivered: the fraction over the span); they flag the claims whose measured span they overlap and decide none (the port's departures are not recorded).",
                )
            if blind:
                doc.p(f"Outages not checked in {len(blind)} run(s) (the claims on them say so): " + outages_unchecked_text(blind) + ".", "note")
            if starved:
                doc.h(3, f"{exp.name}: starved flows")
                doc.table(
                    pl.DataFrame(starved).select("run", "reading", "flow", "port", "of_share", "from_s", "to_s"),
                    caption=f"Bulk flows that delivered less than {STARVED_FRACTION:.0%} of their fair share while backlogged: their max-min fair rate on their own path (each link's capacity at its rate at each instant, shared among the bulk TCP flows crossing it in that direction, recomputed as flows start and end, in payload bits; short flows, UDP and ACKs load the links but take no part of the share, so where they are heavy the share is overstated); port: the link that fixed that share most of the time. The claims that use their runs are flagged.",
                )
            _provenance_section(doc, exp, provenance, provenance_missing)
            n_runs = len({d for dirs in run_dirs.values() for d in dirs.values()})
            skipped = (
                f" ({identical_runs['simulated']} simulated, {identical_runs['proven_identical']} proven identical to a run "
                "of the same scenario under other queue limits that never reached nor read them, and written from it: "
                "its run.json says which and why)"
                if identical_runs["proven_identical"]
                else ""
            )
            doc.p(
                f"{n_runs} runs{skipped}, {len(sd)} seed(s) each configuration, {wall:.1f} s: {running:.1f} s running them and {judging:.1f} s judging them "
                "(later experiments' runs going on meanwhile); the default reading's runs: "
                + ", ".join(sorted(set(run_dirs["default"].values()))),
                "note",
            )
            default_json = by_reading["default"]
            sections.append(
                {
                    "experiment": exp.name,
                    "title": exp.title,
                    "source": exp.source,
                    "seeds": sd,
                    "axes": [{"name": a.name, "values": list(a.values), "default": a.default, "why": a.why, "affects": a.affects} for a in exp.axes],
                    "hosts": exp.hosts.name if exp.hosts else None,
                    "bottleneck": bottleneck_declaration(exp)[1] or "declared",
                    "runs": sorted({d for dirs in run_dirs.values() for d in dirs.values()}),
                    "run_dirs": run_dirs,
                    "wall_s": wall,
                    "runs_s": running,
                    "judging_s": judging,
                    "identical_runs": identical_runs,
                    "comparisons": default_json,
                    "by_reading": by_reading,
                    "verdicts": {r: count_verdicts(c) for r, c in by_reading.items()},
                    "verdicts_vs_reconstructed": {r: count_verdicts(c, reconstructed=True) for r, c in by_reading.items()},
                    "verdicts_fixed_by_mechanism": {r: count_verdicts(c, fixed=True) for r, c in by_reading.items()},
                    "verdicts_our_statements": {r: count_verdicts(c, ours=True) for r, c in by_reading.items()},
                    "headline_units": {r: headline_units(c) for r, c in by_reading.items()},
                    "decided_on_constant_arms": {r: count_constant(c) for r, c in by_reading.items()},
                    "depends_on_reading": depends,
                    "reading_effects": effects,
                    "stalls": stalls,
                    "outages": outs,
                    "outages_unchecked": blind,
                    "starved": starved,
                    "provenance": provenance,
                    "provenance_missing": provenance_missing,
                }
            )
        doc.parts.insert(overview_at, _overview(sections, all_readings))
        if len(all_readings) > 1:
            import html as h

            items = "".join(
                f"<li>{h.escape(d['experiment'])}: {h.escape(d['metric'])} — "
                + ", ".join(f"{h.escape(r)}: {h.escape(v)}" for r, v in d["verdicts"].items())
                + "</li>"
                for d in all_depends
            )
            doc.parts.insert(
                depends_at,
                f"<h2>Claims whose verdict depends on the reading ({len(all_depends)})</h2>"
                + (f"<ul>{items}</ul>" if items else "<p>None: every claim has the same verdict under every reading run.</p>"),
            )
        summary = paper_summary(name, quick, sections, all_readings, tally.to_json(), time.time() - started)
        if earlier is not None:
            summary["reuse"] = earlier.to_json()
            if log:
                print(earlier.text(), file=log, flush=True)
        if log:
            print(tally.text(), file=log, flush=True)
        (tmp / "summary.json").write_text(json.dumps(summary, indent=2, allow_nan=False, default=str) + "\n", encoding="utf-8")
        (tmp / "summary.md").write_text(summary_markdown(summary), encoding="utf-8")
        doc.write(tmp / "report.html")
    return summary


def paper_summary(name: str, quick: bool, sections: list[dict[str, Any]], readings: list[str], identical_runs: dict[str, Any], wall_s: float) -> dict[str, Any]:
    """summary.json of a reproduction from its experiments' sections (as :func:`reproduce`
    writes them, in its order) and the readings run: the headline counts, the rule, and what
    every section's stalls, outages, starved flows and missing sources add up to."""
    from .verdict import ALPHA

    comparisons = [dict(c, experiment=s["experiment"]) for s in sections for c in s["comparisons"]]
    return {
        "experiment": name,
        "quick": quick,
        "readings": readings,
        "rule": {
            "test": "exact one-sided sign test over seeds paired by seed",
            "alpha": ALPHA,
            "min_effect": MIN_EFFECT,
            "stall_utilisation": STALL_UTILISATION,
            "outage_s": OUTAGE_S,
            "outage_fraction": OUTAGE_FRACTION,
            "starved_fraction": STARVED_FRACTION,
            "family_correction": "Holm",
            "family_counted": "once, by its verdict as one claim: holds when every comparable claim holds, contradicted when any is, otherwise inconclusive",
            "text": rule_text(ALPHA),
        },
        "verdicts": count_verdicts(comparisons),
        "verdicts_vs_reconstructed": count_verdicts(comparisons, reconstructed=True),
        "verdicts_fixed_by_mechanism": count_verdicts(comparisons, fixed=True),
        "verdicts_our_statements": count_verdicts(comparisons, ours=True),
        "headline_units": headline_units(comparisons),
        "decided_on_constant_arms": count_constant(comparisons),
        "reconstructed_rivals": dict(RECONSTRUCTED_RIVALS),
        "counted_once": sum(1 for c in comparisons if c.get("duplicate_of") is not None),
        "verdicts_by_reading": {
            r: count_verdicts([c for s in sections for c in s["by_reading"].get(r, [])]) for r in readings
        },
        "verdicts_fixed_by_mechanism_by_reading": {
            r: count_verdicts([c for s in sections for c in s["by_reading"].get(r, [])], fixed=True) for r in readings
        },
        "verdicts_our_statements_by_reading": {
            r: count_verdicts([c for s in sections for c in s["by_reading"].get(r, [])], ours=True) for r in readings
        },
        "depends_on_reading": [d for s in sections for d in s["depends_on_reading"]],
        "readings_that_did_not_act": [
            {"experiment": s["experiment"], **e} for s in sections for e in s["reading_effects"] if e["acted"] is False
        ],
        "stalls": [st for s in sections for st in s["stalls"]],
        "outages": [o for s in sections for o in s["outages"]],
        "outages_unchecked": [o for s in sections for o in s["outages_unchecked"]],
        "starved": [x for s in sections for x in s["starved"]],
        "provenance_missing": {s["experiment"]: s["provenance_missing"] for s in sections if s["provenance_missing"]},
        "comparisons": comparisons,
        "experiments": sections,
        "identical_runs": identical_runs,
        "wall_s": wall_s,
    }
def combine_summaries(name: str, parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One paper's summary.json from reproductions of its experiments run apart (each
    ``ecnlab reproduce <experiment>`` under the same readings), as :func:`reproduce` would
    have written it had it run them together: every experiment of the paper exactly once,
    the same form (quick or full) and rule in every part, the headline counted again over
    all of them. ``parts`` (the parts' summaries) keeps what each part was run as: its
    experiments, readings, runs read from elsewhere (``reuse``) and wall time. The counts of
    ``identical_runs`` add up the parts': a scenario two experiments share is simulated once
    when they run together and once in each part when they run apart."""
    want = [e.name for e in select(name)]
    sections: dict[str, dict[str, Any]] = {}
    for part in parts:
        for sec in part["experiments"]:
            if sec["experiment"] in sections:
                raise ExperimentError(f"{sec['experiment']}: in two parts")
            if sec["experiment"] not in want:
                raise ExperimentError(f"{sec['experiment']}: not an experiment of {name}")
            sections[sec["experiment"]] = sec
    if missing := [e for e in want if e not in sections]:
        raise ExperimentError(f"{name}: no part holds {', '.join(missing)}")
    for key in ("quick", "rule"):
        if len({json.dumps(p[key], sort_keys=True) for p in parts}) > 1:
            raise ExperimentError(f"{name}: the parts differ in {key!r}")
    # The readings in the order one reproduction would have met them: experiment by experiment.
    parts = sorted(parts, key=lambda p: min(want.index(s["experiment"]) for s in p["experiments"]))
    readings: list[str] = []
    for part in parts:
        readings += [r for r in part["readings"] if r not in readings]
    counts: dict[str, Any] = {}
    for part in parts:
        for k, v in part["identical_runs"].items():
            if isinstance(v, bool) or not isinstance(v, (int, list)):
                counts.setdefault(k, v)
            else:
                counts[k] = counts.get(k, 0 if isinstance(v, int) else []) + v
    summary = paper_summary(name, parts[0]["quick"], [sections[e] for e in want], readings, counts, sum(p["wall_s"] for p in parts))
    summary["parts"] = [
        {"experiments": [s["experiment"] for s in p["experiments"]], "readings": p["readings"], "reuse": p.get("reuse"), "wall_s": p["wall_s"]}
        for p in parts
    ]
    return summary



def rule_text(alpha: float) -> str:
    """The rule every verdict follows, as the report states it."""
    return (
        "Every number below comes from the runs under runs/; the paper's values are quoted from the source named "
        "in each section. Verdicts: every claim is decided by one rule over per-seed values paired by seed — an "
        f"exact one-sided sign test at level {alpha:g} — as holds, contradicted, inconclusive (ties, zero against "
        "zero in a direction claim, too few seeds, a split, or decided on stalled runs) or not comparable (no value, a quantity the "
        "paper measured differently, two arms that count different things, or two configurations whose runs are the same), with the reason; seeds left out of a claim are listed beside it. Each claim "
        "says what it tests: a direction (a < b), a level kept (a not below b, or not above it), a size (the paper's number within a tolerance its module "
        "declares; a ratio band that contains 1 is refused) or a value (a bound). In a direction claim a seed whose "
        f"two values differ by at most {MIN_EFFECT:.0%} of the larger (or the metric's own resolution, where it "
        "declares one) is a tie, and so is zero against zero; in a claim on counts that declares the count tie rule so is a seed whose counts "
        "differ by at most k·√(a + b) (k standard deviations of the difference of two Poisson counts). A level kept has no ties: "
        f"a seed agrees when a is on the claimed side of b or within the margin of it, measured the same way (by default {MIN_EFFECT:.0%} "
        "of the larger, the smallest difference the rule counts: a detection floor, not a loss the paper says it tolerates; a claim "
        "may declare its own, and each row states the margin it used), and goes against it only past the margin; zero against zero "
        "agrees. ∞ (a state never reached) is a value: against a finite value it is decided like any "
        "other pair. A run is flagged as stalled when, while a bulk flow was backlogged, the flows delivered less "
        f"than {STALL_UTILISATION:.0%} of what the bottleneck could carry then (the flows crossing it; its rate schedule over that time, in payload bits as delivery counts them: "
        "the link's bits times the payload part of the flows' packets); a claim decided on a stalled run is inconclusive "
        f"unless it is about the stall. Where for at least {OUTAGE_S:g} s (and two of the flows' longest base RTT) they delivered next to nothing (data in at most {OUTAGE_FRACTION:.0%} "
        f"of the sampled intervals and less than {OUTAGE_FRACTION:.0%} of what the link offered) while its sampled queue was empty, the run had an outage, which a run's average hides: "
        "it flags the claims whose measured span it overlaps and decides none (the port's departures are not recorded, so a link sending while receivers wait behind a loss cannot be ruled out); "
        "a run whose outages could not be checked (no delivery samples, no queue samples of the port, no bulk flow) is not said to have none: the claims on it say so. "
        f"Bulk flows below {STARVED_FRACTION:.0%} of their fair share (their max-min fair rate on their "
        "own path: each link's capacity at its rate at each instant shared among the bulk TCP flows crossing it in that "
        "direction, in payload bits; short flows, UDP and ACKs load the links but take no part of the share) are listed and "
        "flag the claims on their runs (flags annotate claims and never decide them). Claims over one axis (a family: a claim per min_th, per buffer size) are also "
        "decided with Holm's correction, and the headline counts the family once, as the one claim it makes over the "
        "axis: it holds when every comparable claim of the family holds under Holm's correction, is contradicted when "
        "any is contradicted (a point of the axis where the runs say the opposite at the family-wise level, which a "
        "statement over every point cannot survive), and is inconclusive otherwise, with the split (k hold, m "
        "contradicted, j inconclusive of n); every claim keeps its row and its own verdict. A claim decided on the "
        "same per-seed values as an earlier one (the same claim, unit and rival; identical runs under two "
        "configuration names, e.g. a buffer the scheme never fills) counts once. Claims against a rival we "
        "reconstructed without its paper are counted apart, and so, of the others, are claims whose statement is "
        "ours, not the paper's (a statement the paper does not make, or a bound or comparison we chose), each "
        "marked with the reason. An arm that takes one value "
        "in every seed is stated in the claim's row (\"a = 0 in every seed\"), and a claim that holds or is "
        "contradicted on arms that all do is flagged: the seeds repeat one outcome rather than sample several. A claim "
        "whose outcome the mechanism under test fixes (declared by its experiment, with the reason: no run of that "
        "mechanism can come out otherwise, e.g. a marker that drops only a full buffer against RED's early drops) is "
        "shown as fixed by the mechanism with what the runs say, and counted apart, by what the runs say, like the "
        "claims against reconstructed rivals."
    )


def _provenance_section(doc: Html, exp: Experiment, provenance: list[dict[str, Any]], missing: Mapping[str, list[str]]) -> None:
    """The experiment's parameters with their sources, and the keys without one."""
    import html as h

    doc.h(3, f"{exp.name}: where every parameter comes from" + (f" (hosts: {exp.hosts.name})" if exp.hosts else ""))
    if provenance:
        columns = ("parameter", "value", "source", "reference")
        doc.table(pl.DataFrame({k: ["" if p[k] is None else str(p[k]) for p in provenance] for k in columns}), caption="paper: §, figure or table; default: a named simulator's or kernel's default; assumption: ours, with the reason.")
    for rd, problems in missing.items():
        doc.raw(
            f'<p class="note"><span class="no">Parameters without a source</span> (reading {h.escape(rd)}, {len(problems)}): '
            + "; ".join(h.escape(x) for x in problems[:40])
            + (" …" if len(problems) > 40 else "")
            + "</p>"
        )


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """The verdicts of a reproduction as Markdown (what ``summary.md`` holds): the rule, the
    counts per experiment and reading (claims against reconstructed rivals apart), every
    claim's verdict with what it tests and its reason, the claims whose verdict depends on the
    reading, the stalled runs and starved flows, and the parameters without a source."""
    readings = list(summary.get("readings") or ["default"])
    rule = summary.get("rule") or {}

    def counts(c: Mapping[str, int]) -> str:
        return " / ".join(str(c.get(k, 0)) for k in VERDICT_CLASSES)

    def cell(x: Any) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    out = [
        f"# ecnlab reproduce {summary['experiment']}" + (" (quick)" if summary.get("quick") else ""),
        "",
        "Rule: " + (rule.get("text") or f"{rule.get('test', '')}, α = {rule.get('alpha', '')}"),
        "",
    ]
    reuse = summary.get("reuse")
    if reuse:
        out += [
            f"Runs: {reuse['reused']} read from the earlier reproduction {reuse['from']} (same scenario TOML, "
            + (
                "written by " + ", ".join(f"{k} ({n} runs)" for k, n in reuse["runs_from_builds"].items())
                if reuse.get("any_build")
                else f"same build {reuse['build']['source_hash']}"
            )
            + f"), {reuse['run']} run"
            + (" (" + ", ".join(f"{n} {k}" for k, n in reuse["not_taken"].items() if n) + ")" if reuse["run"] else "")
            + ".",
            "",
        ]
    out += [
        f"Claims per verdict (holds / contradicted / inconclusive / not comparable), {HEADLINE_COUNTS}:",
        "",
        "| experiment | " + " | ".join(readings) + " | vs reconstructed rivals (default) | fixed by the mechanism (default) | statements ours (default) | stalled runs |",
        "| --- | " + " | ".join("---" for _ in readings) + " | --- | --- | --- | --- |",
    ]
    for sec in summary.get("experiments", []):
        row = [counts(sec["verdicts"][r]) if r in sec.get("verdicts", {}) else "–" for r in readings]
        rec = (sec.get("verdicts_vs_reconstructed") or {}).get("default", {})
        fix = (sec.get("verdicts_fixed_by_mechanism") or {}).get("default", {})
        ours = (sec.get("verdicts_our_statements") or {}).get("default", {})
        out.append(f"| {sec['experiment']} | " + " | ".join(row) + f" | {counts(rec)} | {counts(fix)} | {counts(ours)} | {len(sec.get('stalls', []))} |")
    total = summary.get("verdicts_by_reading") or {}
    out.append(
        "| **all** | " + " | ".join(counts(total.get(r, {})) for r in readings)
        + f" | {counts(summary.get('verdicts_vs_reconstructed') or {})} | {counts(summary.get('verdicts_fixed_by_mechanism') or {})}"
        + f" | {counts(summary.get('verdicts_our_statements') or {})} | {len(summary.get('stalls', []))} |"
    )
    units = summary.get("headline_units")
    if units:
        out += ["", units_text(units) + "."]
    const = summary.get("decided_on_constant_arms")
    if const:
        out += ["", f"Of the default reading's counted claims, {const} hold or are contradicted on arms that each took one value in every seed (flagged in their rows: the seeds repeat one outcome)."]
    dep = summary.get("depends_on_reading") or []
    out += ["", f"## Claims whose verdict depends on the reading ({len(dep)})", ""]
    if len(readings) == 1:
        out.append("Only the default reading was run (`--readings all` runs the others).")
    elif dep:
        out += ["| experiment | claim | " + " | ".join(readings) + " |", "| --- | --- | " + " | ".join("---" for _ in readings) + " |"]
        out += [
            f"| {d['experiment']} | {cell(d['metric'])} | " + " | ".join(d["verdicts"].get(r, "–") for r in readings) + " |"
            for d in dep
        ]
    out += effects_table(summary, "##")
    out += ["", "## Every claim under the default reading", "", *claims_table(summary)]
    stalls = summary.get("stalls") or []
    if stalls:
        out += ["", f"## Stalled runs ({len(stalls)})", "", "| run | reading | port | utilisation |", "| --- | --- | --- | --- |"]
        out += [f"| {s['run']} | {s['reading']} | {s['port']} | {s['utilisation']:.3f} |" for s in stalls]
    outs = summary.get("outages") or []
    if outs:
        out += ["", f"## Outages ({len(outs)})", "", "| run | reading | port | from (s) | to (s) | delivered |", "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| {o['run']} | {o['reading']} | {o['port']} | {o['from_s']:.2f} | {o['to_s']:.2f} | {o['delivered']:.3f} |" for o in outs]
    blind = summary.get("outages_unchecked") or []
    if blind:
        out += ["", f"## Runs whose outages were not checked ({len(blind)})", "", outages_unchecked_text(blind)]
    starved = summary.get("starved") or []
    if starved:
        out += ["", f"## Starved flows ({len(starved)})", "", "| run | reading | flow | of its share |", "| --- | --- | --- | --- |"]
        out += [f"| {s['run']} | {s['reading']} | {s['flow']} | {s['of_share']:.3f} |" for s in starved]
    missing = summary.get("provenance_missing") or {}
    if missing:
        out += ["", "## Parameters without a source", ""]
        for exp, by in missing.items():
            for rd, problems in by.items():
                out.append(f"- {exp} ({rd}, {len(problems)}): " + "; ".join(cell(p) for p in problems[:30]) + (" …" if len(problems) > 30 else ""))
    return "\n".join(out) + "\n"


def outages_unchecked_text(blind: Sequence[Mapping[str, Any]]) -> str:
    """summary.json's ``outages_unchecked`` in a line: per reason, how many runs and under which
    readings ("no delivery samples: 20 runs (default, buffer=100)")."""
    by: dict[str, dict[str, None]] = {}
    n: dict[str, int] = {}
    for b in blind:
        by.setdefault(b["why"], {})[b["reading"]] = None
        n[b["why"]] = n.get(b["why"], 0) + 1
    return "; ".join(f"{why}: {n[why]} run(s) ({', '.join(by[why])})" for why in by)


def units_text(units: Mapping[str, int]) -> str:
    """What the counts are made of (summary.json's ``headline_units``), as a sentence."""
    within = units.get("repeats_in_families", 0)
    inside = f", {within} of them on the same per-seed values as an earlier claim" if within else ""
    return (
        f"Counted: {units['claims']} claims one by one and {units['families']} families once each (standing for "
        f"{units['claims_in_families']} claims{inside}); {units['repeats']} claims outside a counted family repeat an "
        "earlier claim on the same per-seed values and are not counted again"
    )


def _g(x: Any, digits: int = 4) -> str:
    """A number of summary.json (±∞ are the strings "inf", "-inf"; no value null) as text."""
    if x is None:
        return "no value"
    if x in ("inf", "-inf"):
        return "∞" if x == "inf" else "−∞"
    return f"{x:.{digits}g}" if isinstance(x, (int, float)) else str(x)


def claims_table(summary: Mapping[str, Any]) -> list[str]:
    """Every decided claim of a summary as the lines of a Markdown table: what it tests, the
    paper's statement, ours (mean [min – max] over seeds), its unit, the verdict (and its
    family's) and why (led by the claim as the experiment states it and as the rule decides
    it), and its note. summary.md and the papers' docs both print it."""

    def cell(x: Any) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    lines = [
        "| experiment | claim | tests | paper | ours: mean [min – max] over seeds | unit | verdict | why | note |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in summary.get("comparisons", []):
        if c.get("verdict") is None:
            continue
        d = c.get("decision") or {}
        unchecked = c.get("stall_check") if c.get("stall_check") not in (None, "checked") else ""
        why = _why(d, bool(c.get("rival_reconstructed")), c.get("rival"), unchecked)
        if c.get("duplicate_of") is not None:
            why += f"; counted once: the same claim on the same values as {c['duplicate_of']!r}"
        why += _counting_why(c.get("our_statement"), c.get("family"), c.get("family_whole"))
        # What the claim states (the experiment's text) and the rule's form of it, as the
        # HTML report's claim and why columns show them.
        why = _claim_and_why(" — ".join(x for x in (c.get("claim"), d.get("claim")) if x), why)
        verdict = c["verdict"] + (f" (Holm: {d['family_verdict']})" if d.get("family_verdict") else "")
        if c.get("family_whole"):
            verdict += f" (family: {c['family_whole']['verdict']})"
        if c.get("our_statement"):
            verdict += " [statement ours]"
        lines.append(
            f"| {c['experiment']} | {cell(c['metric'])} | {c.get('tests', '')} | {cell(c.get('paper'))} | {_ours_text(c.get('ours') or {})} "
            f"| {cell(c.get('unit') or '')} | {verdict} | {cell(why)} | {cell(c.get('note') or '')} |"
        )
    return lines


def _ours_text(o: Mapping[str, Any]) -> str:
    """summary.json's ``ours`` (mean, min, max, n, values) as the HTML report prints it."""
    if o.get("mean") is None and not o.get("values"):
        return ""
    values = [float(v) for v in o.get("values") or [] if v is not None]
    text = str(Stat.of(values + [None] * int(o.get("missing") or 0), o.get("infinite") or "∞")) if values else _g(o["mean"])
    return text + f" (n = {o['n']})"


def _slug(reading: str) -> str:
    return "reading-" + "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in reading.replace("=", "-"))
