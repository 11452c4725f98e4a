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
import pkgutil
import sys
import threading
import time
import traceback
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Mapping, TextIO

from ..errors import ExperimentError, ScenarioError
from ..fsutil import atomic_dir, check_replaceable
from ..report import Html
from ..results import Results, run, validate, write_run_dir
from .base import Comparison, Context, Experiment, RunSet, Stat, for_seeds, percent_change

__all__ = [
    "Comparison",
    "Context",
    "Experiment",
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


def _default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def run_many(
    scenarios: Mapping[str, Any],
    out_dir: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    progress: Any = None,
) -> dict[str, Results]:
    """Runs many scenarios, ``jobs`` at a time in threads (each run releases the GIL), and
    returns their results by name, in the given order. With ``out_dir`` every run is also
    written to ``out_dir/<name>/`` like ``ecnlab run``. Every scenario is validated before
    any runs. The first failure (or Ctrl-C) stops the runs still going and is raised.
    ``progress`` is a :class:`ecnlab.progress.ProgressBar` or None."""
    items = list(scenarios.items())
    for name, sc in items:
        try:
            validate(sc)
        except ScenarioError as e:
            raise ScenarioError(f"{name}: {e.path}" if e.path else name, e.message) from None
    cancel = threading.Event()

    def one(name: str, sc: Any) -> Results:
        draw = progress.for_run(name) if progress is not None else None

        def cb(p: dict) -> bool:
            if cancel.is_set():
                return False
            if draw is not None:
                draw(p)
            return True

        if out_dir is not None:
            return write_run_dir(sc, Path(out_dir) / name, progress=cb)
        return run(sc, progress=cb)

    n_jobs = max(1, min(jobs or _default_jobs(), len(items) or 1))
    results: dict[str, Results] = {}
    pool = ThreadPoolExecutor(max_workers=n_jobs, thread_name_prefix="ecnlab-run")
    futures: dict = {}
    try:
        for name, sc in items:
            futures[pool.submit(one, name, sc)] = name
        # Wake up regularly: a signal may land on a worker thread, and Python runs its
        # handler (KeyboardInterrupt) only when the main thread runs Python code.
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_EXCEPTION)
            for f in done:
                if f.exception() is not None:
                    raise f.exception()  # type: ignore[misc]
    except BaseException:
        cancel.set()
        for f in futures:
            f.cancel()
        _drain(futures)
        raise
    finally:
        pool.shutdown(wait=False)
    for f, name in futures.items():
        results[name] = f.result()
    return {name: results[name] for name, _ in items}


def _drain(futures) -> None:
    """Waits until no run is still going (they stop at their next progress report, within
    a fraction of a second once cancelled), even if Ctrl-C is pressed again meanwhile: a
    run still writing must not race with the removal of the output directory."""
    while True:
        try:
            wait(futures)
            return
        except KeyboardInterrupt:
            continue


# -------------------------------------------------------------------- reproduce


def _verdict(v: bool | None) -> str:
    if v is True:
        return '<span class="yes">yes</span>'
    if v is False:
        return '<span class="no">no</span>'
    return '<span class="na">–</span>'


def _comparison_table(doc: Html, comps: list[Comparison]) -> None:
    import html as h

    rows = []
    for c in comps:
        s = c.ours_stat()
        paper = c.paper if isinstance(c.paper, str) else ("" if c.paper is None else str(Stat.of([c.paper])))
        rows.append(
            "<tr>"
            f'<td class="l">{h.escape(c.metric)}</td>'
            f'<td class="l">{h.escape(c.claim)}</td>'
            f"<td>{h.escape(paper)}</td>"
            f"<td>{h.escape('' if s is None else str(s))}</td>"
            f'<td class="l">{h.escape(c.unit)}</td>'
            f"<td>{_verdict(c.direction_holds)}</td>"
            f'<td class="l">{h.escape(c.note)}</td>'
            "</tr>"
        )
    doc.raw(
        '<div class="tbl"><table class="cmp"><tr><th class="l">metric</th><th class="l">claim</th><th>paper</th>'
        '<th>ecnlab: mean [min – max] over seeds</th><th class="l">unit</th><th>holds</th>'
        '<th class="l">note</th></tr>' + "".join(rows) + "</table></div>"
    )


def _overview(sections: list[dict[str, Any]]) -> str:
    """The report's first table: each experiment with how many of its comparisons hold."""
    import html as h

    rows = []
    for s in sections:
        comps = s["comparisons"]
        held = sum(1 for c in comps if c["direction_holds"] is True)
        known = sum(1 for c in comps if c["direction_holds"] is not None)
        name = h.escape(s["experiment"])
        rows.append(
            f'<tr><td class="l"><a href="#{name}">{name}</a></td><td class="l">{h.escape(s["title"])}</td>'
            f"<td>{held} / {known}</td><td>{len(s['runs'])}</td><td>{s['wall_s']:.1f}</td></tr>"
        )
    return (
        '<div class="tbl"><table class="cmp"><tr><th class="l">experiment</th><th class="l">what</th>'
        "<th>comparisons that hold</th><th>runs</th><th>wall time (s)</th></tr>" + "".join(rows) + "</table></div>"
    )


def reproduce(
    name: str,
    out: str | os.PathLike[str],
    quick: bool = False,
    seeds: int | None = None,
    jobs: int | None = None,
    progress: bool = False,
    log: TextIO | None = None,
) -> dict[str, Any]:
    """Runs one experiment or all of a paper's and writes ``out/report.html``,
    ``out/summary.json``, ``out/figures/*.png`` and ``out/runs/<run>/``; returns the summary.
    ``out`` appears complete or not at all."""
    exps = select(name)
    check_replaceable(out)
    # Declare and validate every run of every experiment before running any.
    plans = []
    for exp in exps:
        sd = exp.seeds(quick, seeds)
        runs = {f"{exp.name}-{k}": v for k, v in exp.runs(quick, sd).items()}
        plans.append((exp, sd, runs))
    bar = None
    if progress:
        from ..progress import ProgressBar

        bar = ProgressBar()
    started = time.time()
    with atomic_dir(out) as tmp:
        doc = Html(f"ecnlab reproduce {name}" + (" (quick)" if quick else ""), fig_dir=tmp / "figures")
        doc.p(
            f"{len(exps)} experiment(s), {'quick' if quick else 'full'} form. Every number below "
            "comes from the runs under runs/; the paper's values are quoted from the source named "
            "in each section.",
            "note",
        )
        sections: list[dict[str, Any]] = []
        overview_at = len(doc.parts)
        for exp, sd, runs in plans:
            if log:
                print(f"{exp.name}: {len(runs)} runs ({len(sd)} seeds) …", file=log, flush=True)
            t0 = time.time()
            try:
                results = run_many(runs, tmp / "runs", jobs=jobs, progress=bar)
            finally:
                if bar:
                    bar.close()
            wall = time.time() - t0
            doc.h(2, f"{exp.name}: {exp.title}", anchor=exp.name)
            if exp.source:
                doc.p(f"Source: {exp.source}", "note")
            if exp.description:
                doc.p(exp.description)
            section_start = len(doc.parts)
            ctx = Context(quick=quick, seeds=sd, doc=doc, experiment=exp.name, fig_prefix=f"{exp.name}-")
            rs = RunSet({k[len(exp.name) + 1 :]: v for k, v in results.items()})
            comps = exp.analyze(rs, ctx)
            # The comparison table goes first in the section, figures and notes after it.
            figures_and_notes = doc.parts[section_start:]
            del doc.parts[section_start:]
            _comparison_table(doc, comps)
            doc.parts.extend(figures_and_notes)
            doc.p(
                f"{len(runs)} runs, {len(sd)} seed(s) each configuration, {wall:.1f} s wall: "
                + ", ".join(f"runs/{r}" for r in runs),
                "note",
            )
            sections.append(
                {
                    "experiment": exp.name,
                    "title": exp.title,
                    "source": exp.source,
                    "seeds": sd,
                    "runs": list(runs),
                    "wall_s": wall,
                    "comparisons": [c.to_json() for c in comps],
                }
            )
            if log:
                held = sum(1 for c in comps if c.direction_holds is True)
                known = sum(1 for c in comps if c.direction_holds is not None)
                print(f"{exp.name}: {held}/{known} comparisons hold ({wall:.1f} s)", file=log, flush=True)
        doc.parts.insert(overview_at, _overview(sections))
        summary: dict[str, Any] = {
            "experiment": name,
            "quick": quick,
            "comparisons": [dict(c, experiment=s["experiment"]) for s in sections for c in s["comparisons"]],
            "experiments": sections,
            "wall_s": time.time() - started,
        }
        (tmp / "summary.json").write_text(json.dumps(summary, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        doc.write(tmp / "report.html")
    return summary
