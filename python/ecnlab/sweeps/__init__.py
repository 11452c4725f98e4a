"""Sweeps: many runs of one base scenario over axes of key paths, on Dask, into one
Parquet store that resumes.

>>> lf = ecnlab.sweep("scenarios/sweeps/red_ecn.toml", out="out/red")  # doctest: +SKIP
>>> lf.group_by("scheme", "min_th").agg(pl.col("drops").mean()).collect()  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import polars as pl

from ..errors import OutputError
from .executor import Executor, SweepProgress, run_scenario
from .spec import Axis, Point, SweepSpec, load_sweep, run_key
from .store import TABLES, Store

__all__ = [
    "Axis",
    "Executor",
    "Point",
    "Store",
    "SweepSpec",
    "SweepSummary",
    "load_sweep",
    "read_sweep",
    "run_key",
    "run_scenario",
    "run_sweep",
    "sweep",
]


COMMIT_THREADS = 3


@dataclass
class SweepSummary:
    total: int
    skipped: int
    ran: int
    ok: int
    failed: int
    failures: list[tuple[str, str]]
    #: Runs of this call that warned, with their warnings.
    warned: list[tuple[str, list[str]]] = field(default_factory=list)
    #: Runs found damaged in the store (point, what was wrong), run again.
    damaged: list[tuple[str, str]] = field(default_factory=list)
    #: Of the runs done now (``ran``): those simulated, and those proven identical to a
    #: finished run of the same scenario under other queue limits and written from it
    #: (:mod:`ecnlab.experiments._identical`), each as (point, its proving point, why).
    simulated: int = 0
    identical: list[tuple[str, str, str]] = field(default_factory=list)


def run_sweep(
    source: Any,
    out: str | os.PathLike[str],
    scheduler: str | None = None,
    workers: int | None = None,
    threads: bool = False,
    retry: str = "all",
    progress: bool = False,
    log: TextIO | None = None,
    executor: Executor | None = None,
    skip_identical: bool = True,
) -> SweepSummary:
    """Runs every point of a sweep not yet done in ``out`` (``retry="failed"``: only the
    points that failed before) and commits each run to the store as it finishes. Every
    scenario is validated before anything runs. With ``skip_identical`` (the default) the
    points that differ only in queue limits run in increasing order of them, and one that a
    finished run (of this call, or in the store) proves identical — its ports never needed
    the limits that differ, nor read them — is written from that run's tables instead of
    simulated, its ``runs`` row naming the run (``identical_to``) and why
    (``identical_reason``), as ``ecnlab reproduce`` does (:mod:`ecnlab.experiments._identical`)."""
    from ..experiments._identical import IdenticalRuns, Schedule

    if retry not in ("all", "failed"):
        raise ValueError("retry is 'all' or 'failed'")
    spec = load_sweep(source, log=log)
    store = Store(out)
    store.open(_description(spec), spec.source)
    try:
        checked = store.check()
        damage = {k: why for k, (_, why) in checked.items() if why}
        status = {k: ("damaged" if why else st) for k, (st, why) in checked.items()}
        damaged = [(p.describe(), damage[p.key]) for p in spec.points if p.key in damage]
        # A damaged run is not done: its files go, and it runs again whatever `retry` says.
        store.remove_runs(damage)
        if retry == "failed":
            todo = [p for p in spec.points if status.get(p.key) in ("failed", "damaged")]
        else:
            todo = [p for p in spec.points if status.get(p.key) != "ok"]
    except BaseException:
        store.close()
        raise
    skipped = len(spec.points) - len(todo)
    points = {p.key: p for p in spec.points}
    counts = {"ok": 0, "failed": 0}
    failures: list[tuple[str, str]] = []
    warned: list[tuple[str, list[str]]] = []
    tally = IdenticalRuns(enabled=skip_identical)
    # A point done before is finished: its row's meta proves what it can (a failed one nothing).
    schedule = Schedule(
        tally, {k: p.toml for k, p in points.items()}, [p.key for p in todo], lambda k: store.meta(k) if status.get(k) == "ok" else None
    )
    bar: SweepProgress | None = None

    # Writing a run's Parquet files takes milliseconds, as long as a short run: a few
    # threads write while the next results arrive (polars writes without the GIL).
    writers = ThreadPoolExecutor(max_workers=COMMIT_THREADS, thread_name_prefix="ecnlab-commit")
    pending: list[Future] = []
    committing: dict[str, Future] = {}

    def commit(key: str, job: Future) -> None:
        committing[key] = job
        pending.append(job)
        while pending and pending[0].done():
            pending.pop(0).result()

    def write_identical(key: str, src: str, why: str) -> None:
        """Commits the point ``key`` from the finished run ``src`` that proves it: its tables
        once the run's are in the store (the commits of one thread pool start in order)."""
        meta = schedule.meta(key)
        before = committing.get(src)
        commit(key, writers.submit(_commit_identical, store, before, key, points[key].values, src, meta, points[key].toml))
        counts["ok"] += 1
        tally.proven.append({"run": points[key].describe(), "identical_to": points[src].describe(), "reason": why})
        if bar is not None:
            bar.proven_identical()

    def next_runs(step: tuple[list[str], list[Any]]) -> list[tuple[str, str]]:
        run, proven = step
        for p in proven:
            write_identical(*p)
        return [(k, points[k].toml) for k in run]

    def done(key: str, outcome: dict[str, Any]) -> list[tuple[str, str]]:
        commit(key, writers.submit(store.commit, key, points[key].values, outcome))
        ok = outcome["status"] == "ok"
        counts["ok" if ok else "failed"] += 1
        tally.simulated += 1
        if not ok:
            failures.append((points[key].describe(), outcome.get("error", "")))
        elif (outcome.get("meta") or {}).get("warnings"):
            warned.append((points[key].describe(), list(outcome["meta"]["warnings"])))
        return next_runs(schedule.finished(key, outcome.get("meta") if ok else None))

    if log:
        for point, why in damaged:
            print(f"{spec.name}: the run {point} in {out} is damaged ({why}); running it again", file=log, flush=True)
        print(f"{spec.name}: {len(spec.points)} runs, {skipped} already in {out}, {len(todo)} to run", file=log, flush=True)
    try:
        if todo:
            own = executor is None
            ex = executor or Executor(scheduler=scheduler, workers=workers, threads=threads).__enter__()
            try:
                bar = SweepProgress(total=len(spec.points), slots=ex.slots(), enabled=progress)
                bar.skipped = bar.done = skipped
                ex.map(next_runs(schedule.start()), done, bar)
            finally:
                if own:
                    ex.close()
    finally:
        # Every run handed over is committed before this returns, even on Ctrl-C.
        writers.shutdown(wait=True)
        store.close()
    for f in pending:
        f.result()
    # In the order of the sweep's points, whatever the order runs finished in.
    order = {p.describe(): i for i, p in enumerate(spec.points)}
    identical = sorted(((d["run"], d["identical_to"], d["reason"]) for d in tally.proven), key=lambda x: order[x[0]])
    return SweepSummary(
        len(spec.points), skipped, len(todo), counts["ok"], counts["failed"], failures, warned, damaged, tally.simulated, identical
    )


def _commit_identical(store: Store, before: Future | None, key: str, values: dict[str, Any], src: str, meta: Any, toml: str) -> None:
    if before is not None:
        before.result()
    store.commit_identical(key, values, src, meta, toml)


def _description(spec: SweepSpec) -> dict[str, Any]:
    d = spec.describe()
    d["points"] = [{"run_key": p.key, **p.values} for p in spec.points]
    return d


def read_sweep(out: str | os.PathLike[str], table: str = "flows") -> pl.LazyFrame:
    """One table (``runs``, ``flows``, ``ports``, ``timeseries``) of every run in a sweep
    store, the axis values as columns."""
    store = Store(out)
    if store.description() is None:
        raise OutputError(f"{out} is not an ecnlab sweep store (it has no sweep.json)")
    return store.scan(table)


def sweep(
    source: Any,
    out: str | os.PathLike[str],
    table: str = "flows",
    scheduler: str | None = None,
    workers: int | None = None,
    threads: bool = False,
    progress: bool | None = None,
    skip_identical: bool = True,
) -> pl.LazyFrame:
    """Runs (or resumes) a sweep into the store ``out`` and returns one of its tables as a
    lazy polars frame. ``source`` is a sweep file, its TOML text or a dict;
    ``skip_identical`` as :func:`run_sweep`'s."""
    if table not in ("runs",) + TABLES:
        raise ValueError(f"no table {table!r}; tables: runs, {', '.join(TABLES)}")
    show = sys.stderr.isatty() if progress is None else progress
    run_sweep(source, out, scheduler=scheduler, workers=workers, threads=threads, progress=show, skip_identical=skip_identical)
    return read_sweep(out, table)
