#!/usr/bin/env python3
"""Sweep throughput: runs per second of `ecnlab sweep` for N short runs with 1 and 2 local
workers, as processes and as threads, and the overhead per run against the simulation itself
and against a bare `ecnlab run` of one of them.

    .venv/bin/python bench/sweep_throughput.py [--runs 200] [--duration 0.5s] [--out DIR]

Prints a Markdown table and writes it to bench/results/sweep-<runs>x<duration>.md (the
checked-in bench/results/sweep-latest.md joins the tables of `--runs 200 --duration 0.5s` and
`--runs 100 --duration 5s`). Each configuration writes a fresh store; the machine should be
otherwise idle.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

import ecnlab
from ecnlab import sweeps

HERE = Path(__file__).resolve().parent


def sweep_toml(runs: int, duration: str) -> str:
    return f"""
name = "throughput"
seeds = {runs}
[base]
duration = "{duration}"
[base.topology]
kind = "dumbbell"
left = 2
right = 2
access = {{ rate = "1Gbps", delay = "1ms" }}
bottleneck = {{ rate = "100Mbps", delay = "10ms" }}
bottleneck_queue = {{ kind = "red", limit = 100, min_th = 30, max_th = 60, ecn = true }}
[[base.flows]]
src = "l0"
dst = "r0"
cc = "newreno"
ecn = "ecn"
[[base.flows]]
src = "l1"
dst = "r1"
cc = "cubic"
ecn = "ecn"
[base.measure]
interval = "10ms"
sample_ports = ["rl->rr"]
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--duration", default="0.5s")
    ap.add_argument("--out", type=Path, default=None, help="scratch directory (default: a temporary one)")
    args = ap.parse_args()
    scratch = args.out or Path(tempfile.mkdtemp(prefix="ecnlab-sweep-bench-"))
    text = sweep_toml(args.runs, args.duration)
    (scratch / "sweep.toml").write_text(text)
    rows = []
    sim_wall = None
    for threads in (False, True):
        for workers in (1, 2):
            out = scratch / f"{'threads' if threads else 'processes'}-{workers}"
            shutil.rmtree(out, ignore_errors=True)
            t0 = time.perf_counter()
            with sweeps.Executor(workers=workers, threads=threads) as ex:
                t1 = time.perf_counter()
                s = sweeps.run_sweep(scratch / "sweep.toml", out, executor=ex)
                t2 = time.perf_counter()
            assert s.ok == args.runs, s
            runs = ecnlab.read_sweep(out, "runs").collect()
            sim = float(runs["wall_s"].mean())
            sim_wall = sim if sim_wall is None else min(sim_wall, sim)
            rows.append(
                {
                    "workers": f"{workers} {'threads' if threads else 'processes'}",
                    "cluster start (s)": t1 - t0,
                    "sweep wall (s)": t2 - t1,
                    "runs/s": args.runs / (t2 - t1),
                    "simulation per run (ms)": sim * 1e3,
                    "wall per run × workers (ms)": (t2 - t1) / args.runs * workers * 1e3,
                    "overhead per run (ms)": ((t2 - t1) / args.runs * workers - sim) * 1e3,
                }
            )
    # A bare `ecnlab run` of one of the runs: process start, import, validation, run, write.
    spec = sweeps.load_sweep(scratch / "sweep.toml")
    one = scratch / "one.toml"
    one.write_text(spec.points[0].toml)
    bare = []
    for i in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ecnlab", "run", str(one), "--out", str(scratch / f"one-{i}"), "-q"], check=True)
        bare.append(time.perf_counter() - t0)
    bare_s = sorted(bare)[len(bare) // 2]
    df = pl.DataFrame(rows)
    lines = [
        f"# Sweep throughput: {args.runs} runs of {args.duration} (2 TCP flows, 100 Mb/s RED dumbbell)",
        "",
        f"Machine: {os.cpu_count()} cores. A bare `ecnlab run` of one of these runs (a new process: start, "
        f"import, validate, run, write Parquet) takes {bare_s * 1e3:.0f} ms (median of 5); the simulation "
        f"itself {sim_wall * 1e3:.1f} ms.",
        "",
        "| " + " | ".join(df.columns) + " |",
        "| " + " | ".join("---" for _ in df.columns) + " |",
    ]
    for r in df.iter_rows():
        lines.append("| " + " | ".join(v if isinstance(v, str) else f"{v:.3g}" for v in r) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / f"sweep-{args.runs}x{args.duration}.md").write_text(text)
    if args.out is None:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
