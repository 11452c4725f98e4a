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
import shutil
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any, Mapping, TextIO

from ..errors import ExperimentError, InternalError, ScenarioError
from ..fsutil import atomic_dir, check_replaceable
from ..report import Html
from ..results import Results, read_run_dir, validate, write_results_dir
import polars as pl

from .base import (
    STALL_UTILISATION,
    Comparison,
    Context,
    Experiment,
    Reading,
    ReadingAxis,
    RunSet,
    Stat,
    for_seeds,
    percent_change,
    stall,
)

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
) -> dict[str, Results]:
    """Runs many scenarios through the Dask executor (``executor``, or a local cluster of
    ``jobs`` workers started for the call) and returns their results by name, in the given
    order. Every scenario is validated before any runs. With ``out_dir`` every run is also
    written to ``out_dir/<name>/`` like ``ecnlab run``. With ``resume_dir`` each finished run
    is kept there (as ``<run key>/``, written the moment it finishes), and runs already there
    are read instead of run: an interrupted call loses no finished run. The first failed run
    (or Ctrl-C) stops the runs still going and is raised. ``progress`` draws the
    done / running / failed line on stderr."""
    from ..sweeps import Executor, SweepProgress, run_key

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
    for key, names_ in by_key.items():
        if resume is not None and (resume / key / "run.json").is_file():
            kept = read_run_dir(resume / key)
            for n in names_:
                results[n] = kept
        else:
            todo.append((key, tomls[names_[0]]))

    def done(key: str, outcome: dict[str, Any]) -> None:
        if outcome["status"] != "ok":
            raise InternalError(f"{by_key[key][0]}: {outcome.get('error')}")
        t = outcome["tables"]
        res = Results(t["flows"], t["ports"], t["timeseries"], outcome["meta"], outcome["scenario_toml"])
        if resume is not None:
            write_results_dir(res, resume / key)
        for n in by_key[key]:
            results[n] = res

    if todo:
        ex = executor if executor is not None else Executor(workers=jobs)
        own = executor is None
        ex.start()
        try:
            bar = SweepProgress(total=len(by_key), slots=ex.slots(), enabled=progress)
            bar.done = bar.skipped = len(by_key) - len(todo)
            ex.map(todo, done, bar)
        finally:
            if own:
                ex.close()
    if out_dir is not None:
        for name, _ in items:
            target = Path(out_dir) / name
            src = resume / keys[name] if resume is not None else None
            if src is not None and src.is_dir():
                _link_tree(src, target)
            else:
                write_results_dir(results[name], target)
    return {name: results[name] for name, _ in items}


def _link_tree(src: Path, dst: Path) -> None:
    """``dst`` as a copy of ``src`` made of hard links (a plain copy across file systems)."""
    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dst, copy_function=link)


# -------------------------------------------------------------------- reproduce

VERDICT_CLASSES = ("holds", "contradicted", "inconclusive", "not comparable")
_VERDICT_CSS = {"holds": "yes", "contradicted": "no", "inconclusive": "na", "not comparable": "na"}


def count_verdicts(comparisons: list[dict[str, Any]]) -> dict[str, int]:
    """How many comparisons (as in summary.json) fall in each verdict class; rows without a
    claim are not counted."""
    out = {k: 0 for k in VERDICT_CLASSES}
    for c in comparisons:
        if c.get("verdict") in out:
            out[c["verdict"]] += 1
    return out


def _counts_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{counts[k]} {k}" for k in VERDICT_CLASSES)


def _verdict_cell(c: Comparison) -> str:
    import html as h

    if c.decision is None:
        return '<td><span class="na">–</span></td><td class="l"></td>'
    d = c.decision
    why = d.reason
    if d.excluded:
        why += "; left out: " + "; ".join(f"seed {s}: {r}" for s, r in d.excluded)
    return (
        f'<td><span class="{_VERDICT_CSS[d.verdict.value]}">{h.escape(d.verdict.value)}</span></td>'
        f'<td class="l">{h.escape(d.claim)}: {h.escape(why)}</td>'
    )


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
        '<th>ecnlab: mean [min – max] over seeds</th><th class="l">unit</th><th>verdict</th>'
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
        rows.append(
            f'<tr><td class="l"><a href="#{name}">{name}</a></td><td class="l">{h.escape(s["title"])}</td>'
            f"{cells}<td>{len(s['runs'])}</td><td>{stalls}</td><td>{s['wall_s']:.1f}</td></tr>"
        )
    total = "".join(
        f"<td><b>{_counts_cell(count_verdicts([c for s in sections for c in s['by_reading'].get(r, [])]))}</b></td>" for r in readings
    )
    return (
        '<p class="note">Claims per verdict: holds / contradicted / inconclusive / not comparable, '
        "under each reading run (columns).</p>"
        '<div class="tbl"><table class="cmp"><tr><th class="l">experiment</th><th class="l">what</th>'
        f"{head}<th>runs</th><th>stalled runs</th><th>wall time (s)</th></tr>"
        + "".join(rows)
        + f'<tr><td class="l"><b>all</b></td><td class="l"></td>{total}<td></td><td></td><td></td></tr></table></div>'
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
) -> dict[str, Any]:
    """Runs one experiment or all of a paper's under the chosen readings (``None`` or
    ``"default"``: the default reading; ``"all"``: the default and every other value of each
    axis, one axis at a time; or ``"axis=value,…"``) and writes ``out/report.html``,
    ``out/summary.json``, ``out/summary.md`` (the verdicts as Markdown), ``out/figures/*.png`` and ``out/runs/<run>/`` (the default reading)
    and ``out/runs/<reading>/<run>/`` (runs another reading adds). A run whose scenario is the
    same under two readings is run once. ``out`` appears complete or not at all; until it
    does, finished runs are kept beside it in ``.<out>.resume/``, so an interrupted
    reproduction started again runs only what it had not finished. Runs go through the Dask
    executor: a local cluster of ``jobs`` workers (processes, or threads with ``threads``),
    or the cluster whose scheduler is at ``scheduler``."""
    from ..scenario import load_scenario
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
        plans.append((exp, sd, per_reading))
    from ..sweeps import Executor

    out_path = Path(out).absolute()
    resume = out_path.parent / f".{out_path.name}.resume"
    executor = Executor(scheduler=scheduler, workers=jobs, threads=threads)
    started = time.time()
    all_readings: list[str] = []
    with closing(executor), atomic_dir(out) as tmp:
        doc = Html(f"ecnlab reproduce {name}" + (" (quick)" if quick else ""), fig_dir=tmp / "figures")
        doc.p(
            f"{len(exps)} experiment(s), {'quick' if quick else 'full'} form. Every number below "
            "comes from the runs under runs/; the paper's values are quoted from the source named "
            "in each section. Verdicts: every claim is decided by one rule over per-seed values "
            f"paired by seed — an exact one-sided sign test at level {ALPHA:g} — as holds, "
            "contradicted, inconclusive (ties, zero against zero, too few seeds, a split) or not "
            "comparable (no value, or a quantity the paper measured differently), with the reason; "
            "seeds left out of a claim are listed beside it. A run is flagged as stalled when, "
            "while a bulk flow was backlogged, the flows delivered less than "
            f"{STALL_UTILISATION:.0%} of the bottleneck's capacity.",
            "note",
        )
        sections: list[dict[str, Any]] = []
        overview_at = len(doc.parts)
        depends_at = overview_at + 1
        all_depends: list[dict[str, Any]] = []
        for exp, sd, per_reading in plans:
            t0 = time.time()
            done: dict[str, tuple[str, Results]] = {}  # scenario key → (run dir, results)
            by_reading: dict[str, list[dict[str, Any]]] = {}
            run_dirs: dict[str, dict[str, str]] = {}
            stalls: list[dict[str, Any]] = []
            default_comps: list[Comparison] = []
            for rd, runs in per_reading:
                if rd.name not in all_readings:
                    all_readings.append(rd.name)
                # Two readings share a run when their scenarios differ at most in the name.
                keys = {k: json.dumps({**load_scenario(v).to_dict(), "name": None}, sort_keys=True) for k, v in runs.items()}
                todo = {k: v for k, v in runs.items() if keys[k] not in done}
                sub = "runs" if rd.name == "default" else f"runs/{_slug(rd.name)}"
                if log:
                    print(f"{exp.name} [{rd.name}]: {len(runs)} runs ({len(sd)} seeds), {len(todo)} new …", file=log, flush=True)
                new = run_many(todo, tmp / sub, progress=progress, executor=executor, resume_dir=resume) if todo else {}
                for k, r in new.items():
                    done[keys[k]] = (f"{sub}/{k}", r)
                results = {k: done[keys[k]][1] for k in runs}
                run_dirs[rd.name] = {k: done[keys[k]][0] for k in runs}
                rs = RunSet({k[len(exp.name) + 1 :]: v for k, v in results.items()})
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
                    comps = exp.analyze(rs, ctx)
                    default_comps = comps
                    figures_and_notes = doc.parts[section_start:]
                    del doc.parts[section_start:]
                    _comparison_table(doc, comps)
                    doc.parts.extend(figures_and_notes)
                    for run_name, r in rs.items():
                        port = exp.bottleneck(run_name)
                        st = stall(r, port) if port else None
                        if st is not None:
                            stalls.append({"run": f"{exp.name}-{run_name}", "reading": rd.name, **st})
                else:
                    scratch = Html("", fig_dir=None)
                    ctx = Context(quick=quick, seeds=sd, doc=scratch, experiment=exp.name, reading=rd, draw=False)
                    comps = exp.analyze(rs, ctx)
                    for run_name, r in rs.items():
                        port = exp.bottleneck(run_name)
                        st = stall(r, port) if port and run_dirs[rd.name][f"{exp.name}-{run_name}"].startswith(sub + "/") else None
                        if st is not None:
                            stalls.append({"run": f"{exp.name}-{run_name}", "reading": rd.name, **st})
                by_reading[rd.name] = [c.to_json() for c in comps]
                if log:
                    print(f"{exp.name} [{rd.name}]: {_counts_text(count_verdicts(by_reading[rd.name]))}", file=log, flush=True)
            wall = time.time() - t0
            depends: list[dict[str, Any]] = []
            if len(by_reading) > 1:
                doc.h(3, f"{exp.name}: verdicts under each reading")
                depends = _reading_table(doc, by_reading)
                for d in depends:
                    d["experiment"] = exp.name
                all_depends += depends
            if stalls:
                doc.h(3, f"{exp.name}: stalled runs")
                doc.table(
                    pl.DataFrame(stalls).select("run", "reading", "port", "utilisation", "from_s", "to_s", "measured_by"),
                    caption=f"Runs in which the flows delivered less than {STALL_UTILISATION:.0%} of the bottleneck's capacity while a bulk flow was backlogged; every claim that uses them still counts them.",
                )
            n_runs = len({d for dirs in run_dirs.values() for d in dirs.values()})
            doc.p(
                f"{n_runs} runs, {len(sd)} seed(s) each configuration, {wall:.1f} s wall; the default reading's runs: "
                + ", ".join(sorted(set(run_dirs["default"].values()))),
                "note",
            )
            sections.append(
                {
                    "experiment": exp.name,
                    "title": exp.title,
                    "source": exp.source,
                    "seeds": sd,
                    "axes": [{"name": a.name, "values": list(a.values), "default": a.default, "why": a.why} for a in exp.axes],
                    "runs": sorted({d for dirs in run_dirs.values() for d in dirs.values()}),
                    "run_dirs": run_dirs,
                    "wall_s": wall,
                    "comparisons": [c.to_json() for c in default_comps],
                    "by_reading": by_reading,
                    "verdicts": {r: count_verdicts(c) for r, c in by_reading.items()},
                    "depends_on_reading": depends,
                    "stalls": stalls,
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
        comparisons = [dict(c, experiment=s["experiment"]) for s in sections for c in s["comparisons"]]
        summary: dict[str, Any] = {
            "experiment": name,
            "quick": quick,
            "readings": all_readings,
            "rule": {"test": "exact one-sided sign test over seeds paired by seed", "alpha": ALPHA, "stall_utilisation": STALL_UTILISATION},
            "verdicts": count_verdicts(comparisons),
            "verdicts_by_reading": {
                r: count_verdicts([c for s in sections for c in s["by_reading"].get(r, [])]) for r in all_readings
            },
            "depends_on_reading": all_depends,
            "stalls": [st for s in sections for st in s["stalls"]],
            "comparisons": comparisons,
            "experiments": sections,
            "wall_s": time.time() - started,
        }
        (tmp / "summary.json").write_text(json.dumps(summary, indent=2, allow_nan=False, default=str) + "\n", encoding="utf-8")
        (tmp / "summary.md").write_text(summary_markdown(summary), encoding="utf-8")
        doc.write(tmp / "report.html")
    shutil.rmtree(resume, ignore_errors=True)
    return summary


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """The verdicts of a reproduction as Markdown (what ``summary.md`` holds): the rule, the
    counts per experiment and reading, every claim's verdict with its reason, the claims whose
    verdict depends on the reading, and the stalled runs."""
    readings = list(summary.get("readings") or ["default"])
    rule = summary.get("rule") or {}

    def counts(c: Mapping[str, int]) -> str:
        return " / ".join(str(c.get(k, 0)) for k in VERDICT_CLASSES)

    def cell(x: Any) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    out = [
        f"# ecnlab reproduce {summary['experiment']}" + (" (quick)" if summary.get("quick") else ""),
        "",
        f"Rule: {rule.get('test', '')}, α = {rule.get('alpha', '')}; a run is flagged as stalled below "
        f"{rule.get('stall_utilisation', 0):.0%} of the bottleneck while a bulk flow is backlogged.",
        "",
        "Claims per verdict (holds / contradicted / inconclusive / not comparable):",
        "",
        "| experiment | " + " | ".join(readings) + " | stalled runs |",
        "| --- | " + " | ".join("---" for _ in readings) + " | --- |",
    ]
    for sec in summary.get("experiments", []):
        row = [counts(sec["verdicts"][r]) if r in sec.get("verdicts", {}) else "–" for r in readings]
        out.append(f"| {sec['experiment']} | " + " | ".join(row) + f" | {len(sec.get('stalls', []))} |")
    total = summary.get("verdicts_by_reading") or {}
    out.append("| **all** | " + " | ".join(counts(total.get(r, {})) for r in readings) + f" | {len(summary.get('stalls', []))} |")
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
    out += ["", "## Every claim under the default reading", "", "| experiment | claim | paper | ours (mean [min – max]) | verdict | why |", "| --- | --- | --- | --- | --- | --- |"]
    for c in summary.get("comparisons", []):
        if c.get("verdict") is None:
            continue
        o = c.get("ours") or {}
        ours = "" if o.get("mean") is None else f"{_g(o['mean'])} [{_g(o['min'])} – {_g(o['max'])}] (n = {o['n']})"
        d = c.get("decision") or {}
        why = d.get("reason", "") + ("; left out: " + "; ".join(f"seed {e['seed']}: {e['reason']}" for e in d.get("excluded", [])) if d.get("excluded") else "")
        out.append(f"| {c['experiment']} | {cell(c['metric'])} | {cell(c.get('paper'))} | {ours} | {c['verdict']} | {cell(why)} |")
    stalls = summary.get("stalls") or []
    if stalls:
        out += ["", f"## Stalled runs ({len(stalls)})", "", "| run | reading | port | utilisation |", "| --- | --- | --- | --- |"]
        out += [f"| {s['run']} | {s['reading']} | {s['port']} | {s['utilisation']:.3f} |" for s in stalls]
    return "\n".join(out) + "\n"


def _g(x: Any) -> str:
    """A number of summary.json (±∞ are the strings "inf", "-inf") as text."""
    return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)


def _slug(reading: str) -> str:
    return "reading-" + "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in reading.replace("=", "-"))
