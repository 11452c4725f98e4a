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
) -> SweepSummary:
    """Runs every point of a sweep not yet done in ``out`` (``retry="failed"``: only the
    points that failed before) and commits each run to the store as it finishes. Every
    scenario is validated before anything runs."""
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
    by_key = {p.key: p for p in todo}
    counts = {"ok": 0, "failed": 0}
    failures: list[tuple[str, str]] = []
    warned: list[tuple[str, list[str]]] = []

    # Writing a run's Parquet files takes milliseconds, as long as a short run: a few
    # threads write while the next results arrive (polars writes without the GIL).
    writers = ThreadPoolExecutor(max_workers=COMMIT_THREADS, thread_name_prefix="ecnlab-commit")
    pending: list[Future] = []

    def done(key: str, outcome: dict[str, Any]) -> None:
        pending.append(writers.submit(store.commit, key, by_key[key].values, outcome))
        while pending and pending[0].done():
            pending.pop(0).result()
        counts["ok" if outcome["status"] == "ok" else "failed"] += 1
        if outcome["status"] != "ok":
            failures.append((by_key[key].describe(), outcome.get("error", "")))
        elif (outcome.get("meta") or {}).get("warnings"):
            warned.append((by_key[key].describe(), list(outcome["meta"]["warnings"])))

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
                ex.map(((p.key, p.toml) for p in todo), done, bar)
            finally:
                if own:
                    ex.close()
    finally:
        # Every run handed over is committed before this returns, even on Ctrl-C.
        writers.shutdown(wait=True)
        store.close()
    for f in pending:
        f.result()
    return SweepSummary(len(spec.points), skipped, len(todo), counts["ok"], counts["failed"], failures, warned, damaged)


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
) -> pl.LazyFrame:
    """Runs (or resumes) a sweep into the store ``out`` and returns one of its tables as a
    lazy polars frame. ``source`` is a sweep file, its TOML text or a dict."""
    if table not in ("runs",) + TABLES:
        raise ValueError(f"no table {table!r}; tables: runs, {', '.join(TABLES)}")
    show = sys.stderr.isatty() if progress is None else progress
    run_sweep(source, out, scheduler=scheduler, workers=workers, threads=threads, progress=show)
    return read_sweep(out, table)
