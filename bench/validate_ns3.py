#!/usr/bin/env python3
"""ecnlab beside ns-3 on the canonical dumbbells (bench/ns3/SCENARIOS.md).

Runs `red100` with ECN off and on and `dt1g` (10 flows) on both simulators over several
seeds and writes a side-by-side report with the spread over seeds and every difference
above a threshold flagged:

    python3 bench/validate_ns3.py                 # 10 seeds, writes bench/results/ns3-validation.{md,json}
    python3 bench/validate_ns3.py --seeds 3 --jobs 1
    python3 bench/validate_ns3.py --scenarios red100-ecn0 --variants buffer+1

Needs the `ns3` wheel (bench/ns3/requirements.txt; the program is compiled on first use)
and a release build of `ecnlab-run` (built here unless `--no-build`). Standard library only.

Seeds: ns-3 run k uses `RngSeedManager` seed 1, run k (the only random element is RED's
draw); ecnlab run k uses `--seed k`. `dt1g` has no random element in either simulator, so
ns-3 runs it once; ecnlab runs it for every seed, which shows that it too is deterministic.

Definitions match SCENARIOS.md §7 on both sides: throughput of an unfinished flow is its
bytes over (duration − start); the mean queue is the queue-discipline backlog sampled every
1 ms (t = 1 ms … duration); utilisation counts wire bytes (with PPP framing). ns-3's queue
disc backlog excludes the packet in the device's 1-packet queue, ecnlab's excludes only the
packet on the wire (there is no device queue), so a busy port reads one packet more in
ecnlab for the same number of packets held.

ns-3 runs in which a flow is caught in ns-3's loss-state stall (one segment per timeout for
the rest of the run; see bench/ns3-differences.md) are reported apart: the comparison uses
the other runs, and the table also shows ns-3 over all runs.

Variants (`--variants`) rerun ecnlab with one documented change to the scenario, to measure
how much a modelling difference accounts for:
- `buffer+1`: bottleneck buffer one packet larger, the room of ns-3's device queue.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import importlib.util
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_DIR = ROOT / "bench" / "scenarios"
DEFAULT_OUT = ROOT / "bench" / "results"
ECNLAB_BIN = ROOT / "target" / "release" / "ecnlab-run"
BOTTLENECK = "rl->rr"
THRESHOLD = 0.10

#: name -> (ns-3 scenario, ns-3 params, ecnlab TOML, uses randomness)
SCENARIOS = {
    "red100-ecn0": ("red100", {"ecn": 0}, "red100-ecn0.toml", True),
    "red100-ecn1": ("red100", {"ecn": 1}, "red100-ecn1.toml", True),
    "dt1g": ("dt1g", {}, "dt1g.toml", False),
}

VARIANTS = ("buffer+1",)


def load_ns3_module():
    """python/ecnlab/ns3.py by path: importing the ecnlab package would need its compiled core."""
    path = ROOT / "python" / "ecnlab" / "ns3.py"
    spec = importlib.util.spec_from_file_location("ecnlab_ns3_runner", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------ ns-3 side


def ns3_timeouts(log_path: Path) -> dict[int, int]:
    """Retransmission timeouts per flow from the program's TCP log: every expiry doubles the
    RTO (RFC 6298 §5.5), while a new RTT sample recomputes it from the estimator."""
    last: dict[int, float] = {}
    count: dict[int, int] = {}
    with open(log_path, newline="") as f:
        for row in csv.DictReader(f):
            if row["what"] != "rto":
                continue
            flow, rto = int(row["flow"]), float(row["value"])
            prev = last.get(flow)
            if prev is not None and math.isclose(rto, min(2 * prev, 60.0), rel_tol=1e-9):
                count[flow] = count.get(flow, 0) + 1
            last[flow] = rto
    return count


def run_ns3(ns3, name: str, seed: int) -> dict:
    scenario, params, _, _ = SCENARIOS[name]
    with tempfile.TemporaryDirectory(prefix="ns3val-") as tmp:
        log = Path(tmp) / "tcp.csv"
        t0 = time.monotonic()
        r = ns3.run(scenario, seed=1, run=seed, queue_series=0, tcp_log=str(log), **params)
        wall = time.monotonic() - t0
        rtos = ns3_timeouts(log)
    b = r["bottleneck"]
    dur = r["params"]["duration_s"]
    m = {
        "utilisation": b["utilisation"],
        "goodput_mbps": r["goodput_bps"] / 1e6,
        "drops": b["dropped"],
        "drops_early": b.get("red_unforced_drops", 0),
        "drops_forced": b.get("red_forced_drops", 0),
        "drops_overflow": b["queue_limit_drops"],
        "marks": b["marked"],
        "mean_queue_pkts": b["mean_queue_pkts"],
        "max_queue_pkts": b["max_queue_pkts"],
    }
    flows = {}
    for f in r["flows"]:
        flows[flow_name(name, f["id"])] = {
            "throughput_mbps": f["throughput_bps"] / 1e6,
            "fct_s": f["fct_s"],
            "retransmissions": f["retransmissions"],
            "rtos": rtos.get(f["id"], 0),
        }
    return {"bottleneck": m, "flows": flows, "wall_s": wall, "duration_s": dur}


#: A flow with this many retransmission timeouts in one run is in ns-3's loss-state stall:
#: leaving the Loss state on an ACK that reaches exactly the recovery point adds nothing to
#: a 1-segment window, and with a 200 ms MinRto equal to the 200 ms delayed-ACK timeout the
#: lone segment then sent always times out before its ACK returns (see
#: bench/ns3-differences.md). Healthy runs of either simulator have a handful at most.
STALL_TIMEOUTS = 10


def stalled(run: dict) -> bool:
    return any(f["rtos"] >= STALL_TIMEOUTS for f in run["flows"].values())


def flow_name(scenario: str, i: int) -> str:
    """ecnlab's flow names for the canonical scenarios (the ns-3 program numbers them)."""
    if scenario.startswith("red100"):
        return f"bulk{i}" if i < 2 else f"short{i}"
    return f"f{i}"


# ------------------------------------------------------------------ ecnlab side


def scenario_text(name: str, variant: str | None) -> str:
    text = (SCENARIO_DIR / SCENARIOS[name][2]).read_text()
    if variant == "buffer+1":
        # The bottleneck queue is the only `bottleneck_queue` line; its `limit` grows by one.
        line = re.search(r"^bottleneck_queue = .*$", text, re.M)
        if not line:
            raise SystemExit(f"{name}: no bottleneck_queue line to change")
        new = re.sub(r"limit = (\d+)", lambda m: f"limit = {int(m.group(1)) + 1}", line.group(0), 1)
        text = text[: line.start()] + new + text[line.end():]
    elif variant is not None:
        raise SystemExit(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    return text


def run_ecnlab(binary: Path, name: str, seed: int, variant: str | None = None,
               env: dict | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="ecnlabval-") as tmp:
        toml = Path(tmp) / "scenario.toml"
        toml.write_text(scenario_text(name, variant))
        series = Path(tmp) / "series.csv"
        t0 = time.monotonic()
        proc = subprocess.run(
            [str(binary), str(toml), "--seed", str(seed), "--timeseries", str(series)],
            capture_output=True, text=True, env=None if env is None else {**os.environ, **env},
        )
        wall = time.monotonic() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"ecnlab-run {name} seed {seed} failed: {proc.stderr.strip()}")
        r = json.loads(proc.stdout)
        samples = []
        with open(series, newline="") as f:
            for row in csv.DictReader(f):
                if row["kind"] == "queue_pkts" and row["entity"] == BOTTLENECK:
                    samples.append((float(row["time_s"]), float(row["value"])))
    dur = r["duration_s"]
    # SCENARIOS.md §7: samples at t = 1, 2, … ms up to the duration (not the one at t = 0).
    qs = [v for t, v in samples if t > 0.0005]
    port = next(p for p in r["ports"] if p["port"] == BOTTLENECK)
    m = {
        "utilisation": port["utilization"],
        "goodput_mbps": sum(f["bytes_delivered"] or 0 for f in r["flows"]) * 8 / dur / 1e6,
        "drops": port["dropped_pkts"],
        "drops_early": port["dropped_early"],
        "drops_forced": port["dropped_forced"],
        "drops_overflow": port["dropped_overflow"],
        "marks": port["marked_pkts"],
        "mean_queue_pkts": sum(qs) / len(qs) if qs else 0.0,
        "max_queue_pkts": port["max_queue_pkts"],
    }
    flows = {}
    for f in r["flows"]:
        flows[f["name"]] = {
            "throughput_mbps": f["throughput_bps"] / 1e6,
            "fct_s": f["fct_s"],
            "retransmissions": f["retransmissions"],
            "rtos": f["rtos"],
        }
    return {"bottleneck": m, "flows": flows, "wall_s": wall, "duration_s": dur}


def build_ecnlab() -> Path:
    proc = subprocess.run(
        ["cargo", "build", "--release", "--bin", "ecnlab-run"], cwd=ROOT,
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise SystemExit("cargo build --release --bin ecnlab-run failed:\n" + proc.stderr[-3000:])
    return ECNLAB_BIN


# ------------------------------------------------------------------ statistics and report


def metric_rows(name: str, runs: list[dict]) -> dict[str, list[float | None]]:
    """Flattens runs into metric -> values (one per run)."""
    out: dict[str, list] = {}
    for r in runs:
        for k, v in r["bottleneck"].items():
            out.setdefault(k, []).append(v)
        for fname, f in r["flows"].items():
            short = name.startswith("red100") and fname.startswith("short")
            # Short flows: their FCT here, their retransmissions and timeouts summed below.
            keys = ["fct_s"] if short else ["throughput_mbps", "retransmissions", "rtos"]
            for k in keys:
                out.setdefault(f"{fname}.{k}", []).append(f[k])
    if name.startswith("red100"):
        for r in runs:
            fcts = [f["fct_s"] for n, f in r["flows"].items() if n.startswith("short")]
            ok = [x for x in fcts if x is not None]
            out.setdefault("short.mean_fct_s", []).append(sum(ok) / len(ok) if ok else None)
            for k in ("retransmissions", "rtos"):
                out.setdefault(f"short.{k}", []).append(
                    sum(f[k] for n, f in r["flows"].items() if n.startswith("short")))
    else:
        for r in runs:
            tp = [f["throughput_mbps"] for f in r["flows"].values()]
            out.setdefault("jain_fairness", []).append(sum(tp) ** 2 / (len(tp) * sum(x * x for x in tp)))
            out.setdefault("all.retransmissions", []).append(sum(f["retransmissions"] for f in r["flows"].values()))
    return out


def stats(vals: list) -> dict | None:
    xs = [v for v in vals if v is not None]
    if not xs:
        return None
    return {
        "n": len(xs),
        "missing": len(vals) - len(xs),
        "mean": statistics.fmean(xs),
        "sd": statistics.stdev(xs) if len(xs) > 1 else 0.0,
        "min": min(xs),
        "max": max(xs),
    }


def rel_diff(ns3: dict | None, eco: dict | None) -> float | None:
    if ns3 is None or eco is None:
        return None
    if ns3["mean"] == 0:
        return 0.0 if eco["mean"] == 0 else math.inf
    return (eco["mean"] - ns3["mean"]) / abs(ns3["mean"])


def fmt(x: float | None, metric: str) -> str:
    if x is None:
        return "–"
    if metric.endswith("fct_s"):
        return f"{x * 1000:.1f} ms"
    if metric in ("utilisation", "jain_fairness"):
        return f"{x:.3f}"
    if abs(x) >= 100 or float(x).is_integer():
        return f"{x:.0f}"
    return f"{x:.2f}"


def fmt_stats(s: dict | None, metric: str) -> str:
    if s is None:
        return "–"
    txt = fmt(s["mean"], metric)
    if s["n"] > 1 and s["max"] != s["min"]:
        txt += f" ({fmt(s['min'], metric)}–{fmt(s['max'], metric)})"
    if s["missing"]:
        txt += f" [{s['missing']} unfinished]"
    return txt


def overlap(a: dict | None, b: dict | None) -> bool:
    return a is not None and b is not None and a["min"] <= b["max"] and b["min"] <= a["max"]


def compare(ns3_runs: list[dict], eco_runs: list[dict], name: str,
            variants: dict[str, list[dict]]) -> list[dict]:
    """One row per metric. The reference is ns-3 over the runs without the loss-state stall
    (all runs when every run stalls); the row also keeps ns-3 over all runs."""
    healthy = [r for r in ns3_runs if not stalled(r)] or ns3_runs
    a_all = metric_rows(name, ns3_runs)
    a = metric_rows(name, healthy)
    b = metric_rows(name, eco_runs)
    vs = {v: metric_rows(name, runs) for v, runs in variants.items()}
    rows = []
    for metric in a:
        sa, sb = stats(a[metric]), stats(b.get(metric, []))
        d = rel_diff(sa, sb)
        row = {
            "metric": metric,
            "ns3_all": stats(a_all[metric]),
            "ns3": sa,
            "ecnlab": sb,
            "rel_diff": None if d is None or math.isinf(d) else d,
            "flag": d is not None and (math.isinf(d) or abs(d) > THRESHOLD),
            "ranges_overlap": overlap(sa, sb),
            "variants": {},
        }
        for v, m in vs.items():
            sv = stats(m.get(metric, []))
            dv = rel_diff(sa, sv)
            row["variants"][v] = {"stats": sv, "rel_diff": None if dv is None or math.isinf(dv) else dv}
        rows.append(row)
    return rows


def pct(d: float | None, inf: bool = False) -> str:
    if inf:
        return "new"
    return "–" if d is None else f"{d * 100:+.1f} %"


def render(report: dict) -> str:
    lines = [
        "# ecnlab beside ns-3 on the canonical dumbbells",
        "",
        "Generated by `python3 bench/validate_ns3.py` "
        f"(seeds 1–{report['seeds']}; ns-3 {report['ns3_version']}; ecnlab {report['ecnlab_commit']}). "
        "Scenarios: `bench/ns3/SCENARIOS.md`. Each cell: mean over seeds (min–max). "
        f"Δ = (ecnlab − ns-3) / ns-3 of the means; **bold** when |Δ| > {THRESHOLD:.0%}; "
        "‘overlap’ says whether the two ranges over seeds overlap. "
        "The causes of the differences are in `bench/ns3-differences.md`.",
        "",
    ]
    for name, sc in report["scenarios"].items():
        lines += [f"## {name}", ""]
        note = sc.get("note")
        if note:
            lines += [note, ""]
        variants = list(sc["variants"])
        n_all, n_ok = sc["ns3_runs"], sc["ns3_runs_without_stall"]
        if n_ok < n_all:
            lines += [f"ns-3 stalled (a flow with ≥ {STALL_TIMEOUTS} timeouts) in {n_all - n_ok} of "
                      f"{n_all} runs: seeds {', '.join(map(str, sc['ns3_stalled_seeds']))}. "
                      "Column ‘ns-3’ and Δ use the other runs; ‘ns-3 all’ includes them.", ""]
        head = ("| metric | ns-3 all | ns-3 | ecnlab | Δ | overlap |"
                + "".join(f" ecnlab {v} | Δ |" for v in variants))
        lines += [head, "|" + " --- |" * (6 + 2 * len(variants))]
        for row in sc["rows"]:
            m = row["metric"]
            inf = row["flag"] and row["rel_diff"] is None
            d = pct(row["rel_diff"], inf)
            if row["flag"]:
                d = f"**{d}**"
            cells = [m, fmt_stats(row["ns3_all"], m), fmt_stats(row["ns3"], m),
                     fmt_stats(row["ecnlab"], m), d, "yes" if row["ranges_overlap"] else "no"]
            for v in variants:
                vv = row["variants"][v]
                cells += [fmt_stats(vv["stats"], m), pct(vv["rel_diff"])]
            lines.append("| " + " | ".join(cells) + " |")
        flagged = [r["metric"] for r in sc["rows"] if r["flag"]]
        lines += ["", f"Differences above {THRESHOLD:.0%}: " + (", ".join(f"`{f}`" for f in flagged) or "none") + ".", ""]
        lines += [f"Wall time per run: ns-3 {sc['wall_s']['ns3']:.1f} s, ecnlab {sc['wall_s']['ecnlab']:.2f} s "
                  "(mean; runs in parallel share the machine).", ""]
    return "\n".join(lines)


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return out + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="seeds (ns-3 runs) per scenario, default 10")
    ap.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS))
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS),
                    help="ecnlab variants to run beside (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="simulations run at once (default 2)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    ap.add_argument("--ecnlab-bin", type=Path, default=None, help="ecnlab-run to use (default: build it)")
    ap.add_argument("--no-build", action="store_true", help="use target/release/ecnlab-run as it is")
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1:
        ap.error("--seeds and --jobs must be at least 1")

    ns3 = load_ns3_module()
    if not ns3.available():
        print("ns-3 is not available: pip install -r bench/ns3/requirements.txt (and a C++20 g++)",
              file=sys.stderr)
        return 2
    ns3.build()
    binary = args.ecnlab_bin or (ECNLAB_BIN if args.no_build else build_ecnlab())
    if not binary.is_file():
        print(f"{binary} does not exist (cargo build --release --bin ecnlab-run)", file=sys.stderr)
        return 2

    seeds = list(range(1, args.seeds + 1))
    jobs = []  # (key, fn, args)
    for name in args.scenarios:
        ns3_seeds = seeds if SCENARIOS[name][3] else [1]
        jobs += [((name, "ns3", None, s), run_ns3, (ns3, name, s)) for s in ns3_seeds]
        jobs += [((name, "ecnlab", None, s), run_ecnlab, (binary, name, s)) for s in seeds]
        for v in args.variants:
            jobs += [((name, "ecnlab", v, s), run_ecnlab, (binary, name, s, v)) for s in seeds]
    # Slow ns-3 runs first so the pool stays busy.
    jobs.sort(key=lambda j: (j[0][1] != "ns3", j[0][0] != "dt1g"))
    results: dict = {}
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = {pool.submit(fn, *a): key for key, fn, a in jobs}
        for i, fut in enumerate(cf.as_completed(futs), 1):
            key = futs[fut]
            results[key] = fut.result()
            print(f"[{i}/{len(jobs)}] {key[0]} {key[1]}{' ' + key[2] if key[2] else ''} seed {key[3]}",
                  file=sys.stderr)

    report = {"seeds": args.seeds, "threshold": THRESHOLD, "ns3_version": ns3.locate().version,
              "ecnlab_commit": git_commit(), "scenarios": {}}
    for name in args.scenarios:
        pick = lambda sim, v: [results[k] for k in sorted(results, key=lambda k: k[3])
                               if k[0] == name and k[1] == sim and k[2] == v]
        ns3_runs, eco_runs = pick("ns3", None), pick("ecnlab", None)
        variants = {v: pick("ecnlab", v) for v in args.variants}
        seeds_of = [k[3] for k in sorted(results, key=lambda k: k[3])
                    if k[0] == name and k[1] == "ns3"]
        sc = {
            "rows": compare(ns3_runs, eco_runs, name, variants),
            "ns3_runs": len(ns3_runs),
            "ns3_runs_without_stall": sum(not stalled(r) for r in ns3_runs),
            "ns3_stalled_seeds": [s for s, r in zip(seeds_of, ns3_runs) if stalled(r)],
            "variants": list(args.variants),
            "wall_s": {"ns3": statistics.fmean(r["wall_s"] for r in ns3_runs),
                       "ecnlab": statistics.fmean(r["wall_s"] for r in eco_runs)},
            "runs": {"ns3": ns3_runs, "ecnlab": eco_runs, **{f"ecnlab {v}": r for v, r in variants.items()}},
        }
        if not SCENARIOS[name][3]:
            sc["note"] = ("No random element: ns-3 ran once; ecnlab ran once per seed "
                          "(a range would show that its seed changes something).")
        report["scenarios"][name] = sc
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ns3-validation.json").write_text(json.dumps(report, indent=1) + "\n")
    (args.out / "ns3-validation.md").write_text(render(report) + "\n")
    print(f"wrote {args.out / 'ns3-validation.md'} and ns3-validation.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
