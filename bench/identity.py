#!/usr/bin/env python3
"""Behaviour identity between two builds of ecnlab: a refactoring must not move one byte of
any result.

It runs a fixed set of simulations with the ecnlab installed in this Python (the benchmark
scenarios of bench/scenarios, every scenario under scenarios/, and the quick form of paper
reproductions) and writes a manifest: the SHA-256 of every Parquet table they wrote, of each
run's run.json and of each reproduction's summary.json — the last two as canonical JSON
without the fields that measure the machine rather than the simulation (wall time and its
parts, CPU time, events per second, the finishing time, the source hash and version of the
build, and the run key of a run proven identical to another, which hashes the build's
source). Two manifests are then compared entry by entry:

    .venv/bin/python bench/identity.py --out before.json              # on the old build
    make build
    .venv/bin/python bench/identity.py --out after.json --compare before.json

Exit status: 0 when every entry the two manifests share is identical (and, unless their
selections differ, none is missing), 1 otherwise, 2 for bad arguments.

--fast runs a subset meant to be cheap enough for every step (about a minute: the scenarios
but the two largest benchmarks, and two papers' quick reproductions); the full set (every
paper's quick form, dt1g-1000 and dt1g-10000 whole) is for before a change lands. A run that
fails is recorded with its error, so that two builds must also fail alike.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Fields that measure the machine or the build, not the simulation.
UNSTABLE = {"wall_s", "runs_s", "judging_s", "cpu_s", "events_per_s", "finished_at", "source_hash", "ecnlab_version", "peak_rss_kb"}

# Quick reproductions: every paper's quick form in the full set; these two in --fast (one
# network-assisted scheme end to end, one TCP baseline-heavy paper).
FAST_REPRODUCTIONS = ["mecn", "eecn"]
# Scenario files too long for --fast (simulated seconds × flows); they run in the full set.
SLOW_SCENARIOS = {"bench/dt1g-1000", "bench/dt1g-10000"}
# A million flows (minutes, gigabytes): in neither set.
HUGE_SCENARIOS = {"bench/dt1g-1m"}


def _strip(v: Any) -> Any:
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k in UNSTABLE:
                continue
            if k == "identical_to" and isinstance(x, dict):
                # A run proven identical to another names that run and its run key, which
                # hashes the build's source with the scenario: the name is a result, the key
                # names the build.
                x = {kk: xx for kk, xx in x.items() if kk != "key"}
            out[k] = _strip(x)
        return out
    if isinstance(v, list):
        return [_strip(x) for x in v]
    return v


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _local(text: str, work: Path) -> str:
    """Text without the paths of this checkout and of the scratch directory (run.json holds
    the resolved path of a scenario's trace file, for instance)."""
    return text.replace(str(ROOT), "<root>").replace(str(work), "<work>")


def hash_tree(d: Path, prefix: str, work: Path, into: dict[str, str]) -> None:
    """Hashes every Parquet table under `d` and the stable part of every run.json and
    summary.json."""
    for p in sorted(d.rglob("*")):
        if not p.is_file():
            continue
        key = f"{prefix}/{p.relative_to(d).as_posix()}"
        if p.suffix == ".parquet":
            into[key] = _sha(p.read_bytes())
        elif p.name in ("run.json", "summary.json"):
            doc = _strip(json.loads(p.read_text(encoding="utf-8")))
            text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
            into[key] = _sha(_local(text, work).encode())


def _failed(e: Exception, work: Path) -> str:
    """A run that fails is an entry too: both builds must fail alike."""
    return "failed: " + _local(f"{type(e).__name__}: {e}", work).splitlines()[0][:300]


def scenario_files(fast: bool) -> dict[str, Path]:
    files = {
        f"bench/{p.stem}": p
        for p in sorted((ROOT / "bench" / "scenarios").glob("*.toml"))
        if f"bench/{p.stem}" not in HUGE_SCENARIOS
    }
    for p in sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "scenarios").glob("*/*.toml")):
        text = p.read_text(encoding="utf-8")
        # Sweep files describe many runs; the sweep tests cover them.
        if "[sweep" in text or p.parent.name == "sweeps":
            continue
        files[p.relative_to(ROOT).with_suffix("").as_posix()] = p
    if fast:
        files = {k: v for k, v in files.items() if k not in SLOW_SCENARIOS}
    return files


def run_scenarios(files: dict[str, Path], work: Path, into: dict[str, str], log) -> None:
    import ecnlab

    for key, path in files.items():
        t0 = time.time()
        out = work / key
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            ecnlab.write_run_dir(path, out, warn=False)
        except Exception as e:  # noqa: BLE001 - recorded, compared like a result
            into[key] = _failed(e, work)
            print(f"  {key}: {into[key]}", file=log, flush=True)
            continue
        hash_tree(out, key, work, into)
        shutil.rmtree(out)
        print(f"  {key}: {time.time() - t0:.1f} s", file=log, flush=True)


def run_reproductions(papers: list[str], work: Path, into: dict[str, str], jobs: int, log) -> None:
    """The quick form of every experiment of these papers (or these experiments), one at a
    time, so that one that fails hides no other."""
    from ecnlab.experiments import names, reproduce

    for paper in papers:
        for name in [n for n in names() if n == paper or n.split(".")[0] == paper]:
            t0 = time.time()
            out = work / f"reproduce-{name}"
            key = f"reproduce/{name}"
            try:
                reproduce(name, out, quick=True, jobs=jobs, threads=True)
            except Exception as e:  # noqa: BLE001 - recorded, compared like a result
                into[key] = _failed(e, work)
                print(f"  reproduce {name} --quick: {into[key]}", file=log, flush=True)
                shutil.rmtree(out, ignore_errors=True)
                continue
            hash_tree(out, key, work, into)
            shutil.rmtree(out)
            print(f"  reproduce {name} --quick: {time.time() - t0:.1f} s", file=log, flush=True)


def compare(new: dict[str, Any], base: dict[str, Any], log) -> int:
    a, b = base["entries"], new["entries"]
    same_selection = base["selection"] == new["selection"]
    differ = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    only_base = sorted(a.keys() - b.keys())
    only_new = sorted(b.keys() - a.keys())
    shared = len(a.keys() & b.keys())
    print(f"compared {shared} entries: {shared - len(differ)} identical, {len(differ)} differ", file=log)
    for k in differ:
        print(f"  DIFFERS  {k}", file=log)
    missing = only_base + only_new
    for k in only_base:
        print(f"  only in the baseline  {k}", file=log)
    for k in only_new:
        print(f"  only in this build  {k}", file=log)
    if missing and not same_selection:
        print("  (the two manifests ran different selections: entries of one alone are not counted)", file=log)
    bad = bool(differ) or (bool(missing) and same_selection) or shared == 0
    print("IDENTICAL" if not bad else "NOT IDENTICAL", file=log)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", metavar="FILE", help="write the manifest here")
    ap.add_argument("--compare", metavar="BASE", help="compare with this manifest (of the build before)")
    ap.add_argument("--against", metavar="FILE", help="with --compare: compare this manifest instead of running anything")
    ap.add_argument("--fast", action="store_true", help="the cheap subset (see the module's docs)")
    ap.add_argument("--only", action="append", metavar="KEY", help="run only this scenario (its key, e.g. bench/dt1g) or paper or experiment (e.g. uno.rtt); repeatable")
    ap.add_argument("--jobs", type=int, default=1, metavar="N", help="reproduction runs in parallel (default 1)")
    ap.add_argument("--reproductions", metavar="NAMES", help="comma-separated experiments or papers instead of the default set")
    args = ap.parse_args(argv)
    if not args.out and not args.compare:
        ap.error("nothing to do: give --out, --compare or both")
    log = sys.stderr
    if args.against:
        if not args.compare:
            ap.error("--against needs --compare")
        new = json.loads(Path(args.against).read_text(encoding="utf-8"))
        base = json.loads(Path(args.compare).read_text(encoding="utf-8"))
        print(f"baseline {base.get('commit')} against {new.get('commit')}:", file=log)
        return compare(new, base, log)

    from ecnlab.experiments import names

    papers = sorted({n.split(".")[0] for n in names()})
    if args.reproductions is not None:
        repro = [r for r in args.reproductions.split(",") if r]
    else:
        repro = FAST_REPRODUCTIONS if args.fast else papers
    files = scenario_files(args.fast)
    if args.only:
        repro = [k for k in args.only if k not in files]
        files = {k: v for k, v in files.items() if k in args.only}
    selection = {"scenarios": sorted(files), "reproductions": sorted(repro)}

    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip())
    except OSError:
        commit, dirty = "", False
    entries: dict[str, str] = {}
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="ecnlab-identity-") as tmp:
        work = Path(tmp)
        print(f"{len(files)} scenarios, {len(repro)} quick reproductions", file=log, flush=True)
        run_scenarios(files, work, entries, log)
        run_reproductions(repro, work, entries, args.jobs, log)
    manifest = {
        "commit": commit + ("+changes" if dirty else ""),
        "selection": selection,
        "wall_s": round(time.time() - t0, 1),
        "entries": entries,
    }
    print(f"{len(entries)} entries in {manifest['wall_s']} s", file=log)
    if args.out:
        Path(args.out).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if args.compare:
        base = json.loads(Path(args.compare).read_text(encoding="utf-8"))
        print(f"baseline {base.get('commit')} against this build {manifest['commit']}:", file=log)
        return compare(manifest, base, log)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    sys.exit(main())
