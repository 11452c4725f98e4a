#!/usr/bin/env python3
"""Every paper's full form, timed: one command runs `ecnlab reproduce <paper>` (the full form:
each experiment's full seeds and durations, default reading) and `--readings all` (every other
value of each reading beside the default), and writes results/reproductions.md and
results/reproductions.json: per paper and form the wall time, the CPU time of the whole
process tree, the runs, the simulated seconds, the jobs and cores used, the commit, the
simulator build, the date and the verdict headline.

    .venv/bin/python bench/reproductions.py --plan                   # runs and simulated seconds, nothing run
    nice -n 19 .venv/bin/python bench/reproductions.py --out-root DIR --jobs 2
    .venv/bin/python bench/reproductions.py --only uno --form default --out-root DIR
    .venv/bin/python bench/reproductions.py --status --out-root DIR  # progress of a form being run
    .venv/bin/python bench/reproductions.py --write-docs uno --out-root DIR

The default forms are run first, then every reading, each cheapest first (by the expected
wall time once the paper's default form is measured, else by the plan's simulated seconds;
the parts of a form run experiment by experiment likewise, from the default form's wall time
per run of each experiment). `--readings all` is run
with `--reuse` of the paper's default form: the default reading's runs are the same scenarios
on the same build, read instead of run again, so its time is what the other readings add, and
the table shows the sum beside it. A form already recorded for this commit and build is
skipped with `--resume`; an interrupted form started again resumes from the runs ecnlab kept
(`.<out>.resume/`), and its time adds the attempts up.

`--rejudge PAPER` judges a paper's recorded forms again with today's analysis, from their own
runs whatever simulator build wrote them (`reproduce --reuse DIR --reuse-any-build`, into
`<paper>-<form>-rejudged/`): nothing is run, and a run the form lacks fails it (exit 2, naming
the run). The record and the doc name the builds the runs came from and the commit that
judged them.

A form too long for one sitting is run with `--by-experiment`: experiment by experiment, each
recorded as a part when it finishes, its summary.json kept compressed in `parts/` beside the
record (it outlives the runs' directory); `--resume` keeps the parts done on the same simulator
build with the same scenarios (a digest of every run's scenario), whatever commit ran them, and
the form is done when every experiment has a part. Its
tables are the parts' summaries combined (`ecnlab.experiments.combine_summaries`), as one
process would have written them; the doc names each part's commit.

    .venv/bin/python bench/reproductions.py --only hfcc --form all --by-experiment --resume --out-root DIR

`--write-docs PAPER` replaces the generated part of docs/reproductions/<paper>.md (between
its BEGIN/END GENERATED markers) with the verdict tables of the form's summary.json (every
reading when it was run, else the default), leaving the prose around them alone. `--from DIR`
takes another reproduction's summary.json (e.g. one judged again with `--reuse`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
#: The papers' reproductions: the name given to `ecnlab reproduce` and the doc it fills.
PAPERS = {
    "eecn": ("eecn", "eecn.md"),
    "mecn": ("mecn", "mecn.md"),
    "uno": ("uno", "uno.md"),
    "hfcc": ("hfcc", "hfcc.md"),
    "apcc": ("apcc", "apcc.md"),
    "mix-uno": ("mix.uno-legacy", "mix-uno.md"),
}
FORMS = ("default", "all")
BEGIN = "<!-- BEGIN GENERATED"
END = "<!-- END GENERATED -->"
VERDICTS = ("holds", "contradicted", "inconclusive", "not comparable")


# ---------------------------------------------------------------------------- plan


def _seconds(text: Any) -> float:
    """A scenario duration ("100.0s", "250ms") in seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(ps|ns|us|µs|ms|s|min|h)\s*", str(text))
    if not m:
        raise ValueError(f"cannot read the duration {text!r}")
    scale = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
    return float(m.group(1)) * scale[m.group(2)]


def plan(paper: str, form: str) -> dict[str, Any]:
    """What `ecnlab reproduce` would run, counted as it counts (per experiment, a run whose
    scenario an earlier reading already ran is not run again), without running anything:
    runs and simulated seconds per experiment and in all."""
    from ecnlab import experiments as ex
    from ecnlab.experiments.base import Reading
    from ecnlab.scenario import load_scenario

    name = PAPERS[paper][0]
    exps = []
    simulated: set[str] = set()  # the whole scenario, its name included: what is run once
    for exp in ex.select(name):
        seeds = exp.seeds(False)
        readings = Reading.choose(exp.axes, "all" if form == "all" else None)
        seen: set[str] = set()
        runs = sims = 0
        sim = 0.0
        per_reading = {}
        for rd in readings:
            new = 0
            for run_name, sc in exp.runs(False, seeds, rd).items():
                d = load_scenario(sc).to_dict()
                # A run whose scenario an earlier reading ran (the name aside) is not run again.
                if (key := json.dumps({**d, "name": None}, sort_keys=True)) in seen:
                    continue
                seen.add(key)
                new += 1
                if (whole := json.dumps(d, sort_keys=True)) not in simulated:
                    simulated.add(whole)
                    sims += 1
                    sim += _seconds(d["duration"])
            per_reading[rd.name] = new
            runs += new
        exps.append({"experiment": exp.name, "seeds": len(seeds), "readings": len(readings), "runs": runs, "simulations": sims, "sim_s": sim, "runs_by_reading": per_reading})
    return {
        "paper": paper,
        "form": form,
        "command": command(paper, form),
        "runs": sum(e["runs"] for e in exps),
        "simulations": sum(e["simulations"] for e in exps),
        "sim_s": sum(e["sim_s"] for e in exps),
        "experiments": exps,
    }


def estimate(data: dict[str, Any], paper: str, form: str) -> float | None:
    """Wall seconds a form should take, from its paper's measured default form: its wall time
    per simulated second times the simulated seconds the form adds (`all` reads the default
    reading's runs from the default form)."""
    d, p = data["forms"].get(f"{paper}/default"), data["plan"].get(f"{paper}/{form}")
    if not d or d.get("status") != "done" or not d.get("sim_s") or not p:
        return None
    new = p["sim_s"] - (data["plan"][f"{paper}/default"]["sim_s"] if form == "all" else 0.0)
    return d["wall_s"] / d["sim_s"] * new


def command(paper: str, form: str, experiment: str | None = None) -> str:
    return f"ecnlab reproduce {experiment or PAPERS[paper][0]}" + (" --readings all" if form == "all" else "")


# ----------------------------------------------------------------------------- run


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def build() -> dict[str, str]:
    from ecnlab import _core

    # What is run and judged: the code, not the docs and records this script writes.
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)docs", ":(exclude)bench/results"))
    return {"commit": git("rev-parse", "--short=7", "HEAD") + ("+dirty" if dirty else ""), "ecnlab_version": _core.__version__, "source_hash": _core.source_hash}


def landed(commit: str) -> str:
    """``commit`` as it is in this branch's history: a commit of a branch rebased since is
    found again by its subject (the same change, another hash)."""
    bare, dirty = commit.removesuffix("+dirty"), commit.endswith("+dirty")
    if subprocess.run(["git", "merge-base", "--is-ancestor", bare, "HEAD"], cwd=ROOT, capture_output=True).returncode == 0:
        return commit
    try:
        subject = git("log", "-1", "--format=%s", bare)
    except subprocess.CalledProcessError:
        return commit
    for line in git("log", "-300", "--format=%h%x00%s", "HEAD").splitlines():
        h, _, s = line.partition("\0")
        if s == subject:
            return h + ("+dirty" if dirty else "")
    return commit


def out_dir(root: Path, paper: str, form: str) -> Path:
    return root / f"{paper}-{form}"


def part_dir(root: Path, paper: str, form: str, experiment: str) -> Path:
    return root / f"{paper}-{form}-parts" / experiment


# --------------------------------------------------------------------------- parts
#
# A form too long for one sitting is run experiment by experiment (`--by-experiment`): each
# experiment's reproduction is a part, recorded when it finishes with its summary.json kept
# (compressed) under parts/ beside the record, so the parts outlive the runs' directory and the form is
# done once every experiment has a part from the same simulator build. Its verdicts are the
# parts' summaries combined (ecnlab.experiments.combine_summaries): the same tables one
# process would have written; the doc names each part's commit.


def scenarios_digest(experiment: str, form: str) -> str:
    """A digest of every scenario the experiment's part of ``form`` runs (each reading's runs,
    named): a part is kept across commits only while its runs are the same."""
    import hashlib

    from ecnlab import experiments as ex
    from ecnlab.experiments.base import Reading
    from ecnlab.scenario import load_scenario

    exp = ex.get(experiment)
    h = hashlib.sha256()
    for rd in Reading.choose(exp.axes, "all" if form == "all" else None):
        for name, sc in sorted(exp.runs(False, exp.seeds(False), rd).items()):
            h.update(json.dumps([rd.name, name, load_scenario(sc).to_dict()], sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def part_file(paper: str, form: str, experiment: str) -> str:
    """Where a part's summary is kept, relative to the record's directory."""
    return f"parts/{paper}-{form}/{experiment}.summary.json.gz"


def keep_part(records: Path, paper: str, form: str, experiment: str, out: Path) -> str:
    rel = part_file(paper, form, experiment)
    dest = records / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".tmp")
    # mtime 0: the same summary gives the same bytes.
    with open(out / "summary.json", "rb") as src, gzip.GzipFile(filename="", mode="wb", fileobj=open(tmp, "wb"), mtime=0) as gz:
        gz.write(src.read())
    tmp.replace(dest)
    return rel


#: The counts a record keeps of a summary's verdicts (a run's, a judgement's again, a form's parts').
RECORDED_VERDICTS = ("verdicts", "verdicts_fixed_by_mechanism", "verdicts_vs_reconstructed", "verdicts_our_statements", "verdicts_by_reading")


def recorded_verdicts(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: summary.get(k) for k in RECORDED_VERDICTS}


def read_part(records: Path, entry: dict[str, Any]) -> dict[str, Any]:
    with gzip.open(records / entry["summary"], "rt", encoding="utf-8") as f:
        return json.load(f)


def combined(records: Path, paper: str, parts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The form's summary from its parts' kept summaries."""
    from ecnlab.experiments import combine_summaries

    return combine_summaries(PAPERS[paper][0], [read_part(records, parts[e]) for e in sorted(parts)])


def form_of_parts(records: Path, paper: str, form: str, parts: dict[str, dict[str, Any]], experiments: list[str]) -> dict[str, Any]:
    """The form's record from its parts' records: done when every experiment has a done part
    (all of one simulator build); times, runs and simulated seconds summed; the verdicts of
    the combined summary."""
    done = {e: parts[e] for e in experiments if parts.get(e, {}).get("status") == "done"}
    first = min((p["started"] for p in parts.values()), default=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    builds = sorted({p["source_hash"] for p in done.values()})
    entry: dict[str, Any] = {
        "paper": paper,
        "form": form,
        "command": command(paper, form) + " (experiment by experiment)",
        "by_experiment": True,
        "parts": parts,
        "started": first,
        "commit": ", ".join(sorted({landed(p["commit"]) for p in done.values()})) or "–",
        "source_hash": ", ".join(builds) or "–",
        "ecnlab_version": next((p["ecnlab_version"] for p in done.values()), ""),
        "jobs": max((p["jobs"] for p in parts.values()), default=0),
        "cores": max((p["cores"] for p in parts.values()), default=0),
        "nice": ", ".join(sorted({str(p.get("nice", "")) for p in parts.values()})),
        "attempts": sum(p.get("attempts", 1) for p in parts.values()),
    }
    for k in ("wall_s", "cpu_s", "cpu_s_rusage", "runs", "simulations", "runs_reused", "runs_run", "sim_s", "run_loop_s", "stalls"):
        entry[k] = sum(p.get(k) or 0 for p in parts.values() if p.get("status") == "done" or k in ("wall_s", "cpu_s"))
    if len(done) < len(experiments):
        entry["status"] = f"{len(done)} of {len(experiments)} experiments"
        entry["parts_missing"] = [e for e in experiments if e not in done]
        return entry
    if len(builds) > 1:
        entry["status"] = "parts of different builds"
        return entry
    s = combined(records, paper, done)
    entry.update(
        status="done",
        seeds=sorted({len(sec["seeds"]) for sec in s["experiments"]}),
        readings=s["readings"],
        **recorded_verdicts(s),
        depends_on_reading=len(s.get("depends_on_reading") or []),
        stalls=len(s.get("stalls") or []),
    )
    return entry


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def tree_cpu(pid: int, seen: dict[int, float]) -> None:
    """Adds to ``seen`` (pid → user + system CPU seconds) the process ``pid`` and every
    descendant alive now. The Dask workers that run the simulations are not waited for by
    the process that started them, so rusage of children misses them: they are read from
    /proc while they live (a process ending between two reads loses at most one interval)."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        seen[p.pid] = max(seen.get(p.pid, 0.0), t.user + t.system)


def run_form(paper: str, form: str, root: Path, jobs: int, ecnlab: str, earlier: dict[str, Any] | None, experiment: str | None = None) -> dict[str, Any]:
    """Runs one form (or, with ``experiment``, that experiment's part of it) as its own
    process tree and measures it: wall clock, and user + system CPU of every process of the
    tree (read each second; the Dask workers run the simulations)."""
    out = part_dir(root, paper, form, experiment) if experiment else out_dir(root, paper, form)
    argv = [ecnlab, "reproduce", experiment or PAPERS[paper][0], "--out", str(out), "--jobs", str(jobs)]
    reuse = None
    if form == "all":
        dflt = out_dir(root, paper, "default")
        if (dflt / "summary.json").is_file():
            argv += ["--readings", "all", "--reuse", str(dflt)]
            reuse = str(dflt)
        else:
            argv += ["--readings", "all"]
    log = root / (f"{paper}-{form}-{experiment}.log" if experiment else f"{paper}-{form}.log")
    resumed = (out.parent / f".{out.name}.resume").is_dir()
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    at = build()
    t0 = time.monotonic()
    cpu: dict[int, float] = {}
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"# {started}: {' '.join(argv)}\n")
        f.flush()
        proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
        interrupted = False
        while True:
            try:
                tree_cpu(proc.pid, cpu)
                pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                time.sleep(1.0)
            except KeyboardInterrupt:
                # Stopped (Ctrl-C or SIGTERM): reproduce keeps its finished runs for the next
                # attempt when interrupted, and this attempt's time is recorded to add up.
                interrupted = True
                proc.send_signal(signal.SIGINT)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    # rusage of the launched process would count its reaped children again: the polls alone.
    children_cpu = ru.ru_utime + ru.ru_stime
    entry: dict[str, Any] = {
        "paper": paper,
        "form": form,
        "command": command(paper, form, experiment) + (f" --reuse {reuse}" if reuse else ""),
        "out": str(out),
        "jobs": jobs,
        "cores": cores(),
        "nice": os.nice(0),
        "started": started,
        **at,
        "status": "interrupted" if interrupted else "done" if code == 0 else f"exit {code}",
        "wall_s": wall,
        "cpu_s": sum(cpu.values()),
        "processes": len(cpu),
        "cpu_s_rusage": children_cpu,
        "max_rss_mb": ru.ru_maxrss / 1024,
        "resumed": resumed,
    }
    if earlier and earlier.get("status") != "done":
        # Attempts of the same form add up: the runs the earlier ones finished were kept.
        entry["attempts"] = earlier.get("attempts", 1) + 1
        entry["wall_s"] += earlier.get("wall_s", 0.0)
        entry["cpu_s"] += earlier.get("cpu_s", 0.0)
    if code == 0 and not interrupted:
        entry.update(measured(out))
    else:
        kept = out.parent / f".{out.name}.resume"
        entry["runs_kept"] = len(list(kept.glob("*/run.json"))) if kept.is_dir() else 0
    return entry


def measured(out: Path) -> dict[str, Any]:
    """What a finished reproduction ran and found: its runs (those run now and those read
    from an earlier reproduction), their simulated seconds and simulation time, and the
    verdict headline of summary.json."""
    s = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    dirs = sorted({d for sec in s["experiments"] for d in sec["runs"]})
    sim = loop = 0.0
    seen: set[str] = set()
    for d in dirs:
        info = json.loads((out / d / "run.json").read_text(encoding="utf-8"))
        # Two run names of one scenario (a figure's runs shared by another claim) are one
        # simulation: counted, and their time summed, once.
        key = info.get("scenario_toml") or d
        if key in seen:
            continue
        seen.add(key)
        sim += info.get("duration_s") or 0.0
        loop += info.get("wall_s") or 0.0
    reuse = s.get("reuse") or {}
    return {
        "runs": len(dirs),
        "simulations": len(seen),
        "runs_reused": reuse.get("reused", 0),
        "runs_run": reuse.get("run", len(seen)),
        "sim_s": sim,
        "run_loop_s": loop,
        "seeds": sorted({len(sec["seeds"]) for sec in s["experiments"]}),
        "readings": s["readings"],
        **recorded_verdicts(s),
        "depends_on_reading": len(s.get("depends_on_reading") or []),
        "stalls": len(s.get("stalls") or []),
        "reproduce_wall_s": s.get("wall_s"),
    }


# ------------------------------------------------------------------------- records


def load(path: Path) -> dict[str, Any]:
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"plan": {}, "forms": {}}


def save(data: dict[str, Any], path: Path) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    path.with_suffix(".md").write_text(markdown(data), encoding="utf-8")


def _hms(s: float | None) -> str:
    if s is None:
        return "–"
    s = float(s)
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min" if s >= 3600 else (f"{int(s // 60)} min {int(s % 60):02d} s" if s >= 60 else f"{s:.1f} s")


def _counts(c: dict[str, int] | None) -> str:
    return "–" if not c else " / ".join(str(c.get(k, 0)) for k in VERDICTS)


def markdown(data: dict[str, Any]) -> str:
    """results/reproductions.md from the records."""
    out = [
        "# Every paper's full form, timed",
        "",
        "Written by `bench/reproductions.py` (see its docstring to regenerate). Each form is one `ecnlab reproduce` "
        "process tree (`--jobs` Dask workers, one simulation each); CPU time is user + system time of the tree "
        "(the workers included); the loop time is the sum of every run's own simulation time (`run.json` `wall_s`). "
        "`all` is run with `--reuse` of the default form (the default reading's runs are the same scenarios on the "
        "same build and are read, not run again): its own time is what the other readings add, and "
        "*every reading* is the sum of both. Verdicts: holds / contradicted / inconclusive / not comparable as the "
        "headline counts them; apart from them the claims whose outcome the mechanism fixes (what their runs say), "
        "claims against rivals we reconstructed without their paper, and of the rest the statements that are ours, "
        "not the paper's ('–' in a record written before they were recorded).",
        "",
        "## Plan (nothing run: counted from the experiments' registered scenarios)",
        "",
        "| paper | form | command | runs | simulations | simulated time | wall time expected | experiments (runs) |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for key in sorted(data["plan"], key=lambda k: (data["plan"][k]["sim_s"])):
        p = data["plan"][key]
        exps = ", ".join(f"{e['experiment']} ({e['runs']})" for e in p["experiments"])
        est = estimate(data, p["paper"], p["form"])
        out.append(f"| {p['paper']} | {p['form']} | `{p['command']}` | {p['runs']} | {p.get('simulations', '–')} | {_hms(p['sim_s'])} | {'–' if est is None else '≈ ' + _hms(est)} | {exps} |")
    out += [
        "",
        "The expected wall time scales the paper's measured default form (its wall time per simulated second, "
        "on the same machine under the same load) to the simulated seconds the form adds; `–` until the default "
        "form is measured. The cost per simulated second differs by paper (link rates, flow counts), so the plan's "
        "simulated time alone does not order the forms by cost.",
    ]
    out += [
        "",
        "## Measured",
        "",
        "Runs: the reproduction's run directories (a scenario two claims share has two names); run / read: the "
        "simulations run, and read from the default form; the simulated and loop times count each simulation once.",
        "",
        "| paper | form | status | wall | CPU | runs (run / read) | simulated time | loop time | jobs / cores | nice | seeds | commit | build | date | verdicts, default reading | fixed by the mechanism | vs reconstructed rivals | statements ours | verdicts, every reading (summed over readings) |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    forms = data["forms"]
    stale = []
    for key in sorted(forms, key=lambda k: (list(PAPERS).index(forms[k]["paper"]), FORMS.index(forms[k]["form"]))):
        e = forms[key]
        judged = e.get("rejudged")
        if judged and "verdicts" in judged:
            # Judged again from its own runs: the verdicts its doc shows are that judgement's.
            e = {**e, **recorded_verdicts(judged), "status": f"{e['status']}, judged again at {landed(judged['commit'])}"}
        elif judged:
            stale.append(f"{key} (judged again at {landed(judged['commit'])}; its doc has that judgement's verdicts)")
        every = None
        if e.get("verdicts_by_reading") and e["form"] == "all":
            every = {k: sum(v.get(k, 0) for v in e["verdicts_by_reading"].values()) for k in VERDICTS}
        runs = f"{e.get('runs', '–')} ({e.get('runs_run', '–')} / {e.get('runs_reused', 0)})"
        commit = landed(e["commit"])
        out.append(
            f"| {e['paper']} | {e['form']} | {e['status']} | {_hms(e.get('wall_s'))} | {_hms(e.get('cpu_s'))} | {runs} | "
            f"{_hms(e.get('sim_s'))} | {_hms(e.get('run_loop_s'))} | {e['jobs']} / {e['cores']} | {e.get('nice', '')} | "
            f"{', '.join(map(str, e.get('seeds', []))) or '–'} | {commit} | {e['source_hash'][:12]} | {e['started'][:16]} | "
            f"{_counts(e.get('verdicts'))} | {_counts(e.get('verdicts_fixed_by_mechanism'))} | {_counts(e.get('verdicts_vs_reconstructed'))} | {_counts(e.get('verdicts_our_statements'))} | {_counts(every)} |"
        )
    if stale:
        out += ["", "The verdicts in these rows are their run's: the form was judged again from its runs before a judgement's verdicts were recorded, and its doc shows that judgement's: " + "; ".join(stale) + "."]
    totals = []
    for paper in PAPERS:
        d, a = forms.get(f"{paper}/default"), forms.get(f"{paper}/all")
        if a and a["status"] == "done" and not a.get("runs_reused"):
            # Nothing read from the default form (none, or another build's): the form is whole.
            totals.append(f"| {paper} | (in the form) | – | {_hms(a['wall_s'])} | {_hms(a['cpu_s'])} | {a['runs_run']} |")
        elif d and a and d["status"] == a["status"] == "done":
            totals.append(f"| {paper} | {_hms(d['wall_s'])} | {_hms(a['wall_s'])} | {_hms(d['wall_s'] + a['wall_s'])} | {_hms(d['cpu_s'] + a['cpu_s'])} | {d['runs_run'] + a['runs_run']} |")
    if totals:
        out += ["", "## Every reading, in all (the default form plus what the other readings add)", "", "| paper | default form | other readings | every reading: wall | CPU | simulations run |", "| --- | ---: | ---: | ---: | ---: | ---: |", *totals]
    notes = data.get("notes") or []
    if notes:
        out += ["", "## Forms not finished", "", *[f"- {n}" for n in notes]]
    return "\n".join(out) + "\n"


def status(root: Path, data: dict[str, Any]) -> str:
    """Progress of the forms being run: runs finished (kept in `.<out>.resume/` until the
    form completes) against the plan."""
    lines = []
    for key, p in data["plan"].items():
        paper, form = key.split("/")
        out = out_dir(root, paper, form)
        rec = data["forms"].get(key) or {}
        if rec.get("by_experiment"):
            lines.append(f"{key}: {rec['status']} (experiment by experiment; missing: {', '.join(rec.get('parts_missing') or []) or 'none'})")
            for d in sorted(part_dir(root, paper, form, "x").parent.glob(".*.resume")):
                lines.append(f"{key} {d.name[1:-len('.resume')]}: {len(list(d.glob('*/run.json')))} runs kept")
            continue
        kept = out.parent / f".{out.name}.resume"
        if (out / "summary.json").is_file():
            lines.append(f"{key}: done")
        elif kept.is_dir():
            n = len(list(kept.glob("*/run.json")))
            age = time.time() - min((f.stat().st_mtime for f in kept.glob("*/run.json")), default=time.time())
            lines.append(f"{key}: {n} of {p['runs']} runs kept ({_hms(age)} since the first finished)")
    return "\n".join(lines) or "nothing under way"


# ------------------------------------------------------------------------------ docs


def doc_block(summary: dict[str, Any], source: str, header: str) -> str:
    """The generated part of a paper's doc: the headline, the counts per reading and
    experiment, the claims whose verdict depends on the reading, every claim under the
    default reading, stalled runs and starved flows by configuration, parameters without a
    source."""
    from ecnlab.experiments import VERDICT_CLASSES, claims_table, effects_table, units_text

    def cell(x: Any) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    readings = list(summary["readings"])
    exps = summary["experiments"]
    lines = [f"{BEGIN}: {header} -->", ""]
    head = summary["verdicts"]
    rec = summary.get("verdicts_vs_reconstructed") or {}
    fix = summary.get("verdicts_fixed_by_mechanism") or {}
    const = summary.get("decided_on_constant_arms") or 0
    ours = summary.get("verdicts_our_statements") or {}
    lines += [
        f"**Headline, the default reading ({source}):** " + ", ".join(f"{head[k]} {k}" for k in VERDICT_CLASSES)
        + (f" ({const} of the holds and contradicted decided on arms constant in every seed)" if const else "")
        + (f"; fixed by the mechanism apart (what the runs say): " + ", ".join(f"{fix[k]} {k}" for k in VERDICT_CLASSES) if sum(fix.values()) else "")
        + (f"; against reconstructed rivals apart: " + ", ".join(f"{rec[k]} {k}" for k in VERDICT_CLASSES) if sum(rec.values()) else "")
        + (f"; statements ours apart: " + ", ".join(f"{ours[k]} {k}" for k in VERDICT_CLASSES) if sum(ours.values()) else "")
        # The units say how many repeats were not counted again; older summaries only counted_once.
        + (
            "; " + units_text(summary["headline_units"]).replace("Counted:", "counted:", 1)
            if summary.get("headline_units")
            else f"; {summary.get('counted_once', 0)} claims counted once (same claim, same per-seed values)"
        )
        + "; stalled runs: "
        + f"{len(summary.get('stalls') or [])} (every reading).",
        "",
        "Rule: " + summary["rule"]["text"],
        "",
    ]
    # Counts per reading (rows) and experiment (columns): a table as wide as the paper's experiments.
    names = [s["experiment"] for s in exps]
    lines += [
        "Claims per verdict (holds / contradicted / inconclusive / not comparable), as the headline counts them; "
        "the last columns the claims whose outcome the mechanism fixes (declared; by what the runs say), of the "
        "others the claims against reconstructed rivals and, of the rest, the claims whose statement is ours:",
        "",
        "| reading | " + " | ".join(names) + " | **all** | fixed by the mechanism | vs reconstructed rivals | statements ours |",
        "| --- | " + " | ".join("---" for _ in names) + " | --- | --- | --- | --- |",
    ]
    for r in readings:
        row = [_counts(s["verdicts"].get(r)) if r in s["verdicts"] else "–" for s in exps]
        recr = {k: sum((s.get("verdicts_vs_reconstructed") or {}).get(r, {}).get(k, 0) for s in exps) for k in VERDICT_CLASSES}
        fixr = {k: sum((s.get("verdicts_fixed_by_mechanism") or {}).get(r, {}).get(k, 0) for s in exps) for k in VERDICT_CLASSES}
        oursr = {k: sum((s.get("verdicts_our_statements") or {}).get(r, {}).get(k, 0) for s in exps) for k in VERDICT_CLASSES}
        lines.append(f"| {r} | " + " | ".join(row) + f" | **{_counts(summary['verdicts_by_reading'].get(r))}** | {_counts(fixr)} | {_counts(recr)} | {_counts(oursr)} |")
    lines.append("| runs (every reading) | " + " | ".join(str(len(s["runs"])) for s in exps) + f" | {sum(len(s['runs']) for s in exps)} | | | |")
    lines.append("| stalled runs (every reading) | " + " | ".join(str(len(s["stalls"])) for s in exps) + f" | {sum(len(s['stalls']) for s in exps)} | | | |")
    dep = summary.get("depends_on_reading") or []
    lines += ["", f"#### Claims whose verdict depends on the reading ({len(dep)})", ""]
    if len(readings) == 1:
        lines.append("Only the default reading was run.")
    elif dep:
        lines += ["| experiment | claim | default | under the other readings (where it differs) |", "| --- | --- | --- | --- |"]
        for d in dep:
            base = d["verdicts"].get("default", "–")
            other = "; ".join(f"{r}: {v}" for r, v in d["verdicts"].items() if r != "default" and v != base)
            lines.append(f"| {d['experiment']} | {cell(d['metric'])} | {base} | {cell(other)} |")
    else:
        lines.append("None: every claim has the same verdict under every reading run.")
    lines += effects_table(summary, "####")
    lines += ["", "#### Every claim under the default reading", "", *claims_table(summary)]
    for title, rows, value in (("Stalled runs", summary.get("stalls") or [], "utilisation"), ("Starved flows", summary.get("starved") or [], "of_share")):
        if not rows:
            continue
        groups: dict[tuple[str, str], list[float]] = {}
        for s in rows:
            conf = re.sub(r"-s\d+$", "", s["run"])
            groups.setdefault((conf, s["reading"]), []).append(float(s[value]))
        what = "utilisation of the bottleneck" if value == "utilisation" else "fraction of its fair share (per flow)"
        lines += ["", f"#### {title} ({len(rows)}, by configuration and reading)", "", f"| configuration | reading | {'runs' if value == 'utilisation' else 'flows'} | {what}: min – max |", "| --- | --- | ---: | --- |"]
        for (conf, r), v in groups.items():
            lines.append(f"| {conf} | {r} | {len(v)} | {min(v):.3f} – {max(v):.3f} |")
    outs = summary.get("outages") or []
    if outs:
        spans: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for o in outs:
            spans.setdefault((re.sub(r"-s\d+$", "", o["run"]), o["reading"]), []).append(o)
        lines += ["", f"#### Outages ({len(outs)} in {len({(o['run'], o['reading']) for o in outs})} runs, by configuration and reading)", "", "They flag the claims whose measured span they overlap and decide none (see the rule).", "", "| configuration | reading | runs | from – to (s) | span (s): min – max |", "| --- | --- | ---: | --- | --- |"]
        for (conf, r), os_ in spans.items():
            lines.append(f"| {conf} | {r} | {len({o['run'] for o in os_})} | {min(o['from_s'] for o in os_):.2f} – {max(o['to_s'] for o in os_):.2f} | {min(o['span_s'] for o in os_):.2f} – {max(o['span_s'] for o in os_):.2f} |")
    missing = summary.get("provenance_missing") or {}
    if missing:
        lines += ["", "#### Parameters without a source", ""]
        for exp, by in missing.items():
            for r, problems in by.items():
                lines.append(f"- {exp} ({r}, {len(problems)}): " + "; ".join(cell(p) for p in problems[:10]) + (" …" if len(problems) > 10 else ""))
    lines += ["", END]
    return "\n".join(lines)


def rejudge(paper: str, form: str, root: Path, jobs: int, ecnlab: str) -> dict[str, Any]:
    """Judges a recorded form again with today's analysis from its own runs, whatever build
    wrote them: `ecnlab reproduce … --reuse DIR --reuse-any-build` of its output into
    ``<paper>-<form>-rejudged/``. Nothing is run: a run the form lacks, or holds with another
    scenario, fails it (exit 2, naming the run)."""
    src, out = out_dir(root, paper, form), root / f"{paper}-{form}-rejudged"
    argv = [ecnlab, "reproduce", PAPERS[paper][0], "--out", str(out), "--jobs", str(jobs), "--reuse", str(src), "--reuse-any-build"] + (["--readings", "all"] if form == "all" else [])
    at = build()
    t0 = time.monotonic()
    with open(root / f"{paper}-{form}-rejudged.log", "a", encoding="utf-8") as f:
        f.write(f"# {time.strftime('%Y-%m-%dT%H:%M:%S%z')}: {' '.join(argv)}\n")
        f.flush()
        code = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT).returncode
    if code != 0:
        raise SystemExit(f"{paper}/{form}: judging again failed (exit {code}); see {root / f'{paper}-{form}-rejudged.log'}")
    s = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    reuse = s["reuse"]
    # ``source_hash`` is the build that judged (it ran nothing); the runs' builds are apart.
    # The verdicts are this judgement's: the record's own are the run's, kept beside them.
    return {
        **at,
        "out": str(out),
        "wall_s": time.monotonic() - t0,
        "reused": reuse["reused"],
        "run": reuse["run"],
        "not_taken": reuse["not_taken"],
        "run_builds": reuse.get("runs_from_builds", {}),
        **recorded_verdicts(s),
    }


def write_doc(paper: str, summary: dict[str, Any], entry: dict[str, Any] | None, judged: dict[str, Any] | None = None) -> Path:
    """Replaces the generated block of the paper's doc with the tables of ``summary`` (a
    summary.json, judged at ``judged``'s commit, or now's; or a form's parts combined); the
    prose outside the markers is left as it is."""
    b = judged or build()
    seeds = sorted({len(s["seeds"]) for s in summary["experiments"]})
    cmd = f"ecnlab reproduce {summary['experiment']}" + (" --quick" if summary.get("quick") else "") + (" --readings all" if len(summary["readings"]) > 1 else "")
    reuse = summary.get("reuse")
    runs = f"{sum(len(s['runs']) for s in summary['experiments'])} runs"
    if reuse and reuse.get("any_build"):
        built = ", ".join(f"{k.split()[-1][:12]} ({n} distinct runs)" for k, n in reuse["runs_from_builds"].items())
        runs += f", read from {Path(reuse['from']).name}/ (same scenario; readings share runs), run on simulator source {built}"
    elif reuse:
        runs += f", {reuse['reused']} of them read from {Path(reuse['from']).name}/ (same scenario, same build), {reuse['run']} run"
        if entry and entry.get("attempts", 1) > 1 and not entry.get("rejudged"):
            runs += f" in the last of {entry['attempts']} attempts (the others' runs kept for it)"
    source = f"{'quick' if summary.get('quick') else 'full'} form, {'/'.join(map(str, seeds))} seeds, " + (f"the default and {len(summary['readings']) - 1} other readings" if len(summary["readings"]) > 1 else "the default reading alone")
    parts = summary.get("parts")
    if parts and entry and entry.get("by_experiment"):
        # Run experiment by experiment: each part's own reuse, commit and date.
        runs = f"{sum(len(s['runs']) for s in summary['experiments'])} runs, run experiment by experiment: " + "; ".join(
            f"{e} at commit {landed(pe['commit'])} ({pe['started'][:10]}, {pe.get('runs_reused', 0)} runs read from the default form)"
            for e, pe in sorted(entry["parts"].items())
        )
    header = (
        f"written by `bench/reproductions.py --write-docs {paper}` from the summary.json of `{cmd}` ({source}; {runs}) "
        + (
            f"judged by the analysis of commit {landed(b['commit'])}"
            if reuse and reuse.get("any_build")
            else f"each part judged at its own commit, simulator source {entry['source_hash'][:12]}"
            if parts and entry and entry.get("by_experiment")
            else f"judged at commit {landed(b['commit'])}, simulator source {b['source_hash'][:12]}"
        )
        + f", written {time.strftime('%Y-%m-%d')}"
        + (f"; the runs were timed in bench/results/reproductions.md (run at {landed(entry['commit'])}, {entry['started'][:10]})" if entry else "")
        + ". Everything down to END GENERATED is regenerated; the prose outside it is written by hand"
    )
    doc = ROOT / "docs" / "reproductions" / PAPERS[paper][1]
    text = doc.read_text(encoding="utf-8")
    block = doc_block(summary, source, header)
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        raise SystemExit(f"{doc}: no {BEGIN} … {END} markers: put them where the generated tables go")
    doc.write_text(text[:i] + block + text[j + len(END):], encoding="utf-8")
    return doc


# ------------------------------------------------------------------------------ main


def part_costs(root: Path, paper: str, form: str, plan_entry: dict[str, Any]) -> dict[str, tuple[bool, float]]:
    """Each experiment's expected cost in a part of ``form``, to run the cheapest first: the
    wall seconds per run its default form took under ``root`` times the runs the part adds
    (the default reading's are read from the default form), where that form's summary.json
    is there; else its simulated seconds (which rank a seven-link chain's runs, several times
    dearer per simulated second than a dumbbell's, too early). Keys sort measured ones first."""
    measured: dict[str, tuple[float, int]] = {}
    summary = out_dir(root, paper, "default") / "summary.json"
    if summary.is_file():
        for sec in json.loads(summary.read_text(encoding="utf-8")).get("experiments", []):
            if sec.get("runs") and sec.get("wall_s") is not None:
                measured[sec["experiment"]] = (sec["wall_s"], len(sec["runs"]))
    costs: dict[str, tuple[bool, float]] = {}
    for e in plan_entry.get("experiments", []):
        m = measured.get(e["experiment"])
        if m:
            wall, runs = m
            new = e["runs"] - (e.get("runs_by_reading", {}).get("default", 0) if form == "all" else 0)
            costs[e["experiment"]] = (False, wall / runs * new)
        else:
            costs[e["experiment"]] = (True, e["sim_s"])
    return costs


def run_parts(paper: str, form: str, root: Path, args: argparse.Namespace, ecnlab: str, b: dict[str, str]) -> int:
    """The form experiment by experiment, cheapest first (`part_costs`); each part recorded
    (and its summary kept) as it finishes, and the form's record made again from its parts."""
    key = f"{paper}/{form}"
    data = load(args.record)
    costs = part_costs(root, paper, form, data["plan"].get(key, {}))
    from ecnlab.experiments import select

    experiments = [e.name for e in select(PAPERS[paper][0])]
    for exp in sorted(experiments, key=lambda e: costs.get(e, (True, 0.0))):
        data = load(args.record)
        parts = dict((data["forms"].get(key) or {}).get("parts") or {})
        earlier = parts.get(exp)
        digest = scenarios_digest(exp, form)
        if (
            args.resume
            and earlier
            and earlier["status"] == "done"
            and earlier["source_hash"] == b["source_hash"]
            and earlier.get("scenarios") == digest
            and (args.record.parent / earlier["summary"]).is_file()
        ):
            print(f"{key} {exp}: done at {earlier['commit']} on this build with the same scenarios, kept")
            continue
        if earlier and earlier["status"] == "done":
            earlier = None  # another build's: run again, its time not added
        print(f"{key} {exp}: {command(paper, form, exp)} → {part_dir(root, paper, form, exp)} …", flush=True)
        entry = run_form(paper, form, root, args.jobs, ecnlab, earlier, experiment=exp)
        entry["scenarios"] = digest
        if entry["status"] == "done":
            entry["summary"] = keep_part(args.record.parent, paper, form, exp, part_dir(root, paper, form, exp))
        data = load(args.record)
        parts = dict((data["forms"].get(key) or {}).get("parts") or {})
        parts[exp] = entry
        data["forms"][key] = form_of_parts(args.record.parent, paper, form, parts, experiments)
        save(data, args.record)
        print(f"{key} {exp}: {entry['status']}, {_hms(entry['wall_s'])} wall, {_hms(entry['cpu_s'])} CPU, {entry.get('runs', '–')} runs, verdicts {_counts(entry.get('verdicts'))}", flush=True)
        if entry["status"] != "done":
            return 1
    data = load(args.record)
    data["forms"][key] = e = form_of_parts(args.record.parent, paper, form, dict(data["forms"][key]["parts"]), experiments)
    save(data, args.record)
    print(f"{key}: {e['status']} ({len(e['parts'])} parts), {_hms(e['wall_s'])} wall, {_hms(e['cpu_s'])} CPU, verdicts {_counts(e.get('verdicts'))}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plan", action="store_true", help="count runs and simulated seconds of every form; run nothing")
    ap.add_argument("--only", action="append", choices=list(PAPERS), help="this paper (repeatable; default: all)")
    ap.add_argument("--form", action="append", choices=FORMS, help="this form (repeatable; default: both)")
    ap.add_argument("--out-root", type=Path, default=Path("reproductions-out"), help="where the reproductions are written (DIR/<paper>-<form>/)")
    ap.add_argument("--jobs", type=int, default=cores(), help="runs in parallel (default: the cores)")
    ap.add_argument("--resume", action="store_true", help="skip the forms already recorded as done with this commit and build")
    ap.add_argument("--status", action="store_true", help="progress of the forms under --out-root")
    ap.add_argument("--write-docs", nargs="+", metavar="PAPER", choices=list(PAPERS), help="regenerate these papers' docs from their recorded forms")
    ap.add_argument("--rejudge", nargs="+", metavar="PAPER", choices=list(PAPERS), help="judge these papers' recorded forms again with today's analysis from their own runs, whatever build wrote them, running nothing (reproduce --reuse --reuse-any-build), recorded for --write-docs")
    ap.add_argument("--from", dest="from_dir", type=Path, help="with one --write-docs paper: the reproduction to take the tables from")
    ap.add_argument("--note", action="append", default=[], help="a line for 'Forms not finished' (replaces the earlier ones)")
    ap.add_argument("--by-experiment", action="store_true", help="run the every-reading form one experiment at a time, each recorded as a part when it finishes (its summary kept in parts/ beside the record); with --resume a part done on this simulator build with the same scenarios is kept, whatever commit ran it; the form is done when every experiment has a part")
    ap.add_argument("--record", type=Path, default=RESULTS / "reproductions.json")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    data = load(args.record)
    papers = args.only or list(PAPERS)
    forms = args.form or list(FORMS)
    ecnlab = str(Path(sys.executable).parent / "ecnlab")
    if args.note:
        data["notes"] = args.note
        save(data, args.record)
    if args.status:
        print(status(args.out_root.absolute(), data))
        return 0
    if args.rejudge:
        for paper in args.rejudge:
            for form in forms:
                key = f"{paper}/{form}"
                e = data["forms"].get(key)
                if not e or e["status"] != "done":
                    continue
                if e.get("by_experiment"):
                    print(f"{key}: run experiment by experiment; its parts' runs are judged where they ran, not again")
                    continue
                judged = rejudge(paper, form, args.out_root.absolute(), args.jobs, ecnlab)
                data = load(args.record)
                data["forms"][key]["rejudged"] = judged
                save(data, args.record)
                print(f"{key}: judged again at {judged['commit']}: {judged['reused']} runs read (written by {', '.join(f'{k} ({n})' for k, n in judged['run_builds'].items())}), {judged['run']} run ({_hms(judged['wall_s'])})")
        return 0
    if args.write_docs:
        if args.from_dir and len(args.write_docs) != 1:
            ap.error("--from goes with one --write-docs paper")
        for paper in args.write_docs:
            entry = next((e for f in reversed(FORMS) if (e := data["forms"].get(f"{paper}/{f}")) and e["status"] == "done"), None)
            judged = (entry or {}).get("rejudged")
            if entry and entry.get("by_experiment") and not args.from_dir:
                print(f"wrote {write_doc(paper, combined(args.record.parent, paper, entry['parts']), entry, entry)}")
                continue
            src = args.from_dir or (Path(judged["out"]) if judged else Path(entry["out"]) if entry else None)
            if src is None:
                ap.error(f"{paper}: no recorded form and no --from")
            summary = json.loads((src / "summary.json").read_text(encoding="utf-8"))
            # The analysis that wrote the summary: the judgement again's commit, else the run's.
            print(f"wrote {write_doc(paper, summary, entry, None if args.from_dir else (judged or entry))}")
        return 0
    if args.plan or not data["plan"]:
        for paper in papers:
            for form in forms:
                t0 = time.monotonic()
                data["plan"][f"{paper}/{form}"] = p = plan(paper, form)
                print(f"{paper} {form}: {p['runs']} runs, {_hms(p['sim_s'])} simulated ({time.monotonic() - t0:.1f} s to count)", flush=True)
        save(data, args.record)
        if args.plan:
            return 0
    root = args.out_root.absolute()
    root.mkdir(parents=True, exist_ok=True)
    # Every default form first, then every reading; each cheapest first: by the expected wall
    # time once the paper's default form is measured, else by the plan's simulated seconds.
    def cost(pf: tuple[str, str]) -> tuple[int, int, float]:
        est = estimate(data, *pf)
        return (FORMS.index(pf[1]), est is None, est if est is not None else data["plan"].get(f"{pf[0]}/{pf[1]}", {}).get("sim_s", 0))

    order = sorted(((p, f) for p in papers for f in forms), key=cost)
    b = build()
    for paper, form in order:
        key = f"{paper}/{form}"
        earlier = data["forms"].get(key)
        if args.resume and earlier and earlier["status"] == "done" and earlier["commit"] == b["commit"] and earlier["source_hash"] == b["source_hash"]:
            print(f"{key}: done at {b['commit']}, skipped")
            continue
        if args.by_experiment and form == "all":
            if run_parts(paper, form, root, args, ecnlab, b) != 0:
                return 1
            continue
        print(f"{key}: {command(paper, form)} → {out_dir(root, paper, form)} …", flush=True)
        entry = run_form(paper, form, root, args.jobs, ecnlab, earlier)
        data = load(args.record)  # another invocation may have recorded meanwhile
        data["forms"][key] = entry
        save(data, args.record)
        print(f"{key}: {entry['status']}, {_hms(entry['wall_s'])} wall, {_hms(entry['cpu_s'])} CPU, {entry.get('runs', '–')} runs, verdicts {_counts(entry.get('verdicts'))}", flush=True)
        if entry["status"] != "done":
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
