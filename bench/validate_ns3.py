#!/usr/bin/env python3
"""ecnlab beside ns-3 on the canonical dumbbells (bench/ns3/SCENARIOS.md).

Runs `red100` with ECN off and on and `dt1g` (10 flows) on both simulators over several
seeds and writes a side-by-side report with the spread over seeds, every difference above
10 % flagged:

    python3 bench/validate_ns3.py                  # 10 seeds -> bench/results/ns3-validation.{md,json}
    python3 bench/validate_ns3.py --seeds 3 --jobs 1 --scenarios red100-ecn0
    python3 bench/validate_ns3.py --mimic --ladder # also the ns-3-mimicking diagnostic build

Needs the `ns3` wheel (bench/ns3/requirements.txt; the program is compiled on first use)
and builds `ecnlab-run` in release mode (`--no-build` uses target/release as it is).
Standard library only. The causes of the differences are in bench/ns3-differences.md.

Seeds: ns-3 run k uses `RngSeedManager` seed 1, run k (the only random element is RED's
draw); ecnlab run k uses `--seed k`. `dt1g` has no random element in either simulator, so
ns-3 runs it once; ecnlab runs it for every seed, which shows that it too is deterministic.

Definitions match SCENARIOS.md §7 on both sides: throughput of an unfinished flow is its
bytes over (duration − start); the mean queue is the queue-discipline backlog sampled every
1 ms (t = 1 ms … duration); utilisation counts wire bytes (with PPP framing). Two
definitions differ and are reported as they are:
- ns-3's queue-disc backlog excludes the packet in the device's 1-packet queue; ecnlab's
  port has no device queue, so a busy port reads one packet more in ecnlab for the same
  number of packets held.
- `marks` counts CE-marked packets that left the bottleneck (ns-3: counted in its pcap of
  the bottleneck; ecnlab: the port's counter). ns-3's own counter (`marks_decided`) also
  counts packets RED marked and the full buffer then dropped.
- timeouts (`rtos`): ecnlab counts every expiry; for ns-3 every doubling of the RTO in its
  TCP log (each expiry doubles it, RFC 6298 §5.5).

ns-3 runs in which a flow is caught in ns-3's loss-state stall (≥ 10 timeouts: one segment
per timeout for the rest of the run; see bench/ns3-differences.md) are reported apart: Δ
uses the other runs, and the table also shows ns-3 over all runs.

Variants rerun ecnlab with one documented change, to measure what a difference accounts for:
- `buffer+1` (always): bottleneck buffer one packet larger, the room of ns-3's device queue.
- `--mimic`: a diagnostic build (bench/ns3-mimic.patch applied to a copy of the committed
  tree, built into target/ns3-mimic) with six ns-3 TCP behaviours switched on.
- `--ladder` (with `--mimic`): the same build with the behaviours switched on one by one,
  and with ecnlab's timeout reduction as it was before it stopped counting SACKed data.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import importlib.util
import io
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_DIR = ROOT / "bench" / "scenarios"
DEFAULT_OUT = ROOT / "bench" / "results"
ECNLAB_BIN = ROOT / "target" / "release" / "ecnlab-run"
MIMIC_PATCH = ROOT / "bench" / "ns3-mimic.patch"
MIMIC_TARGET = ROOT / "target" / "ns3-mimic"
BOTTLENECK = "rl->rr"
THRESHOLD = 0.10

#: name -> (ns-3 scenario, ns-3 params, ecnlab TOML, uses randomness)
SCENARIOS = {
    "red100-ecn0": ("red100", {"ecn": 0}, "red100-ecn0.toml", True),
    "red100-ecn1": ("red100", {"ecn": 1}, "red100-ecn1.toml", True),
    "dt1g": ("dt1g", {}, "dt1g.toml", False),
}

#: The ns-3 behaviours the mimic build can switch on, in the order the ladder adds them
#: (environment of the diagnostic build; bench/ns3-mimic.patch says what each does).
MIMIC_STEPS = [
    ("loss-pipe", {"XP_LOSS_PIPE": "1"}),
    ("impatient", {"XP_IMPATIENT": "1"}),
    ("ns3-pipe", {"XP_NS3_PIPE": "1"}),
    ("loss-growth", {"XP_LOSS_GROWTH": "1"}),
    ("ecn-in-recovery", {"XP_ECN_RECOVERY": "1"}),
    ("rto-pipe", {"XP_RTO_BASE": "2"}),
]
MIMIC_ALL = {k: v for _, env in MIMIC_STEPS for k, v in env.items()}


def variant_table(mimic: bool, ladder: bool) -> dict[str, tuple[str | None, dict, str]]:
    """name -> (scenario edit, environment, which binary)."""
    v = {"buffer+1": ("buffer+1", {}, "main")}
    if mimic:
        v["mimic"] = (None, MIMIC_ALL, "mimic")
    if mimic and ladder:
        v["pre-fix"] = (None, {"XP_RTO_BASE": "3"}, "mimic")
        env: dict = {}
        for i, (step, e) in enumerate(MIMIC_STEPS, 1):
            env = {**env, **e}
            if i < len(MIMIC_STEPS):
                v[f"m{i}"] = (None, dict(env), "mimic")
        v["mimic+buffer+1"] = ("buffer+1", MIMIC_ALL, "mimic")
    return v


LADDER_METRICS = {
    "red100": ["utilisation", "drops", "drops_early", "drops_overflow", "marks", "mean_queue_pkts",
               "bulk0.throughput_mbps", "bulk1.throughput_mbps", "bulk0.retransmissions",
               "bulk1.retransmissions", "bulk0.rtos", "short.mean_fct_s"],
    "dt1g": ["utilisation", "drops", "mean_queue_pkts", "all.retransmissions", "jain_fairness"],
}


def load_by_path(name: str, as_name: str):
    """A standard-library module of python/ecnlab by path: importing the ecnlab package would
    need its compiled core."""
    if as_name in sys.modules:
        return sys.modules[as_name]
    spec = importlib.util.spec_from_file_location(as_name, ROOT / "python" / "ecnlab" / name)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_ns3_module():
    return load_by_path("ns3.py", "ecnlab_ns3_runner")


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


def pcap_ce_data_packets(path: Path) -> int:
    """CE-marked data packets (TCP payload > 0) in a pcap of the bottleneck (each capture holds
    every packet that crossed the link once)."""
    pcap = load_by_path("pcapfile.py", "ecnlab_pcapfile")
    return sum(1 for t in pcap.tcp_segments(path) if t.payload > 0 and t.ecn == 3)


def run_ns3(ns3, name: str, seed: int) -> dict:
    scenario, params, _, _ = SCENARIOS[name]
    ecn = bool(params.get("ecn"))
    with tempfile.TemporaryDirectory(prefix="ns3val-") as tmp:
        log = Path(tmp) / "tcp.csv"
        extra = {"pcap": str(Path(tmp) / "bn")} if ecn else {}
        t0 = time.monotonic()
        r = ns3.run(scenario, seed=1, run=seed, queue_series=0, tcp_log=str(log), **extra, **params)
        wall = time.monotonic() - t0
        rtos = ns3_timeouts(log)
        caps = sorted(Path(tmp).glob("bn-*.pcap"))
        ce = pcap_ce_data_packets(caps[0]) if ecn and caps else None
    b = r["bottleneck"]
    m = {
        "utilisation": b["utilisation"],
        "goodput_mbps": r["goodput_bps"] / 1e6,
        "drops": b["dropped"],
        "drops_early": b.get("red_unforced_drops", 0),
        "drops_forced": b.get("red_forced_drops", 0),
        "drops_overflow": b["queue_limit_drops"],
        "marks": ce if ecn else b["marked"],
        "marks_decided": b["marked"],
        "mean_queue_pkts": b["mean_queue_pkts"],
        "max_queue_pkts": b["max_queue_pkts"],
    }
    flows = {}
    for f in r["flows"]:
        flows[flow_name(name, f["id"])] = {
            "throughput_mbps": f["goodput_bps"] / 1e6,
            "fct_s": f["fct_s"],
            "retransmissions": f["retransmissions"],
            "rtos": rtos.get(f["id"], 0),
        }
    return {"bottleneck": m, "flows": flows, "wall_s": wall}


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


def scenario_text(name: str, edit: str | None) -> str:
    text = (SCENARIO_DIR / SCENARIOS[name][2]).read_text()
    if edit == "buffer+1":
        # The bottleneck queue is the only `bottleneck_queue` line; its `limit` grows by one.
        line = re.search(r"^bottleneck_queue = .*$", text, re.M)
        if not line:
            raise SystemExit(f"{name}: no bottleneck_queue line to change")
        new = re.sub(r"limit = (\d+)", lambda m: f"limit = {int(m.group(1)) + 1}", line.group(0), 1)
        text = text[: line.start()] + new + text[line.end():]
    elif edit is not None:
        raise SystemExit(f"unknown scenario edit {edit!r}")
    return text


def run_ecnlab(binary: Path, name: str, seed: int, edit: str | None = None,
               env: dict | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="ecnlabval-") as tmp:
        toml = Path(tmp) / "scenario.toml"
        toml.write_text(scenario_text(name, edit))
        series = Path(tmp) / "series.csv"
        t0 = time.monotonic()
        proc = subprocess.run(
            [str(binary), str(toml), "--seed", str(seed), "--timeseries", str(series)],
            capture_output=True, text=True, env={**os.environ, **(env or {})},
        )
        wall = time.monotonic() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"ecnlab-run {name} seed {seed} failed: {proc.stderr.strip()}")
        r = json.loads(proc.stdout)
        qs = []
        with open(series, newline="") as f:
            for row in csv.DictReader(f):
                # SCENARIOS.md §7: samples at t = 1, 2, … ms (not the one at t = 0).
                if (row["kind"] == "queue_pkts" and row["entity"] == BOTTLENECK
                        and float(row["time_s"]) > 0.0005):
                    qs.append(float(row["value"]))
    dur = r["duration_s"]
    port = next(p for p in r["ports"] if p["port"] == BOTTLENECK)
    m = {
        "utilisation": port["utilization"],
        "goodput_mbps": sum(f["bytes_delivered"] or 0 for f in r["flows"]) * 8 / dur / 1e6,
        "drops": port["dropped_pkts"],
        "drops_early": port["dropped_early"],
        "drops_forced": port["dropped_forced"],
        "drops_overflow": port["dropped_overflow"],
        "marks": port["marked_pkts"],
        "marks_decided": None,
        "mean_queue_pkts": sum(qs) / len(qs) if qs else 0.0,
        "max_queue_pkts": port["max_queue_pkts"],
    }
    flows = {}
    for f in r["flows"]:
        flows[f["name"]] = {
            "throughput_mbps": f["goodput_bps"] / 1e6,
            "fct_s": f["fct_s"],
            "retransmissions": f["retransmissions"],
            "rtos": f["rtos"],
        }
    return {"bottleneck": m, "flows": flows, "wall_s": wall}


def cargo_build(cwd: Path, target_dir: Path | None = None) -> None:
    cmd = ["cargo", "build", "--release", "--bin", "ecnlab-run"]
    if target_dir is not None:
        cmd += ["--target-dir", str(target_dir)]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stderr[-3000:]}")


def build_mimic() -> Path:
    """The committed tree (git HEAD) with bench/ns3-mimic.patch applied, in
    target/ns3-mimic/src, built into target/ns3-mimic (dependencies stay built between runs)."""
    src = MIMIC_TARGET / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if member.name.startswith("/") or ".." in Path(member.name).parts:
                raise SystemExit(f"unexpected path in git archive: {member.name}")
        tar.extractall(src)
    # The copy sits inside this repository's target/: keep git from finding the repository,
    # or `git apply` would silently skip paths outside the current directory.
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(src.parent)}
    proc = subprocess.run(["git", "apply", "--verbose", str(MIMIC_PATCH)], cwd=src, env=env,
                          capture_output=True, text=True)
    if proc.returncode == 0 and "Applied patch" not in proc.stderr:
        raise SystemExit(f"git apply did not apply {MIMIC_PATCH}:\n{proc.stderr}")
    if proc.returncode != 0:
        raise SystemExit(f"{MIMIC_PATCH} does not apply to HEAD any more:\n{proc.stderr}")
    cargo_build(src, MIMIC_TARGET)
    return MIMIC_TARGET / "release" / "ecnlab-run"


# ------------------------------------------------------------------ statistics and report


def metric_rows(name: str, runs: list[dict]) -> dict[str, list]:
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
    for r in runs:
        if name.startswith("red100"):
            shorts = [f for n, f in r["flows"].items() if n.startswith("short")]
            ok = [f["fct_s"] for f in shorts if f["fct_s"] is not None]
            out.setdefault("short.mean_fct_s", []).append(sum(ok) / len(ok) if ok else None)
            for k in ("retransmissions", "rtos"):
                out.setdefault(f"short.{k}", []).append(sum(f[k] for f in shorts))
        else:
            tp = [f["throughput_mbps"] for f in r["flows"].values()]
            out.setdefault("jain_fairness", []).append(sum(tp) ** 2 / (len(tp) * sum(x * x for x in tp)))
            out.setdefault("all.retransmissions", []).append(
                sum(f["retransmissions"] for f in r["flows"].values()))
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


def rel_diff(ref: dict | None, x: dict | None) -> float | None:
    """(x − ref) / ref of the means; inf when ref is 0 and x is not."""
    if ref is None or x is None:
        return None
    if ref["mean"] == 0:
        return 0.0 if x["mean"] == 0 else math.inf
    return (x["mean"] - ref["mean"]) / abs(ref["mean"])


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
            row["variants"][v] = {"stats": sv, "rel_diff": None if dv is None or math.isinf(dv) else dv,
                                  "flag": dv is not None and (math.isinf(dv) or abs(dv) > THRESHOLD)}
        rows.append(row)
    return rows


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


def pct(d: float | None, flag: bool) -> str:
    if flag and d is None:
        return "**new**"
    if d is None:
        return "–"
    txt = f"{d * 100:+.1f} %"
    return f"**{txt}**" if flag else txt


MAIN_VARIANTS = ("buffer+1", "mimic")


def render(report: dict) -> str:
    lines = [
        "# ecnlab beside ns-3 on the canonical dumbbells",
        "",
        "Generated by `python3 bench/validate_ns3.py"
        + (" --mimic" if report["mimic"] else "") + (" --ladder" if report["ladder"] else "")
        + f"` (seeds 1–{report['seeds']}; ns-3 {report['ns3_version']}; ecnlab {report['ecnlab_commit']}). "
        "Scenarios: `bench/ns3/SCENARIOS.md`; causes of the differences: `bench/ns3-differences.md`. "
        "Each cell: mean over seeds (min–max). Δ = (x − ns-3) / ns-3 of the means, against ns-3 "
        f"without stalled runs; **bold** when |Δ| > {THRESHOLD:.0%}. ‘overlap’: do the ranges "
        "over seeds of ns-3 and ecnlab overlap. `buffer+1`: ecnlab with a bottleneck buffer one "
        "packet larger (ns-3's device queue). `mimic`: ecnlab's diagnostic build with six ns-3 "
        "TCP behaviours switched on (`bench/ns3-mimic.patch`), not ecnlab's behaviour.",
        "",
    ]
    for name, sc in report["scenarios"].items():
        lines += [f"## {name}", ""]
        if sc.get("note"):
            lines += [sc["note"], ""]
        n_all, n_ok = sc["ns3_runs"], sc["ns3_runs_without_stall"]
        if n_ok < n_all:
            lines += [f"ns-3 stalled (a flow with ≥ {STALL_TIMEOUTS} timeouts) in {n_all - n_ok} of "
                      f"{n_all} runs: seeds {', '.join(map(str, sc['ns3_stalled_seeds']))}. "
                      "Column ‘ns-3’ and Δ use the other runs; ‘ns-3 all’ includes them.", ""]
        shown = [v for v in MAIN_VARIANTS if v in sc["variants"]]
        head = ("| metric | ns-3 all | ns-3 | ecnlab | Δ | overlap |"
                + "".join(f" {v} | Δ |" for v in shown))
        lines += [head, "|" + " --- |" * (6 + 2 * len(shown))]
        for row in sc["rows"]:
            m = row["metric"]
            cells = [m, fmt_stats(row["ns3_all"], m), fmt_stats(row["ns3"], m),
                     fmt_stats(row["ecnlab"], m), pct(row["rel_diff"], row["flag"]),
                     "yes" if row["ranges_overlap"] else ("–" if row["ecnlab"] is None else "no")]
            for v in shown:
                vv = row["variants"][v]
                cells += [fmt_stats(vv["stats"], m), pct(vv["rel_diff"], vv["flag"])]
            lines.append("| " + " | ".join(cells) + " |")
        flagged = [r["metric"] for r in sc["rows"] if r["flag"]]
        lines += ["", f"ecnlab differs from ns-3 by more than {THRESHOLD:.0%} in: "
                  + (", ".join(f"`{f}`" for f in flagged) or "nothing") + "."]
        if "mimic" in sc["variants"]:
            left = [r["metric"] for r in sc["rows"] if r["variants"]["mimic"]["flag"]]
            lines += [f"The mimic build differs by more than {THRESHOLD:.0%} in: "
                      + (", ".join(f"`{f}`" for f in left) or "nothing") + "."]
        lines += ["", f"Wall time per run: ns-3 {sc['wall_s']['ns3']:.1f} s, ecnlab "
                  f"{sc['wall_s']['ecnlab']:.2f} s (mean; runs in parallel share the machine).", ""]
        ladder = [v for v in sc["variants"] if v not in MAIN_VARIANTS]
        if ladder:
            keys = LADDER_METRICS["dt1g" if name == "dt1g" else "red100"]
            steps = [v for v in ladder if re.fullmatch(r"m\d+", v)]
            cols = ["pre-fix", "ecnlab"] + steps + ["mimic", "mimic+buffer+1"]
            lines += [f"Attribution ({name}): mean over seeds (Δ against ns-3). `pre-fix`: the "
                      "timeout halved FlightSize with SACKed data; "
                      + ", ".join(f"`m{i}`" for i in range(1, len(MIMIC_STEPS)))
                      + ": ns-3 behaviours switched on cumulatively ("
                      + ", ".join(f"{s}" for s, _ in MIMIC_STEPS[:-1])
                      + f"); `mimic`: all six (+ {MIMIC_STEPS[-1][0]}).", "",
                      "| metric | ns-3 | " + " | ".join(cols) + " |",
                      "|" + " --- |" * (len(cols) + 2)]
            by = {r["metric"]: r for r in sc["rows"]}
            for m in keys:
                r = by.get(m)
                if r is None:
                    continue
                cells = [m, fmt(r["ns3"]["mean"] if r["ns3"] else None, m)]
                for c in cols:
                    if c == "ecnlab":
                        s, d, fl = r["ecnlab"], r["rel_diff"], r["flag"]
                    else:
                        vv = r["variants"][c]
                        s, d, fl = vv["stats"], vv["rel_diff"], vv["flag"]
                    cells.append(f"{fmt(s['mean'] if s else None, m)} ({pct(d, fl)})")
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
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
    ap.add_argument("--mimic", action="store_true",
                    help="also run the diagnostic build that mimics ns-3's TCP (bench/ns3-mimic.patch)")
    ap.add_argument("--ladder", action="store_true",
                    help="with --mimic: switch the mimicked behaviours on one by one")
    ap.add_argument("--jobs", type=int, default=2, help="simulations run at once (default 2)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    ap.add_argument("--no-build", action="store_true", help="use target/release/ecnlab-run as it is")
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1:
        ap.error("--seeds and --jobs must be at least 1")
    if args.ladder and not args.mimic:
        ap.error("--ladder needs --mimic")

    ns3 = load_ns3_module()
    if not ns3.available():
        print("ns-3 is not available: pip install -r bench/ns3/requirements.txt (and a C++20 g++)",
              file=sys.stderr)
        return 2
    ns3.build()
    if not args.no_build:
        cargo_build(ROOT)
    binaries = {"main": ECNLAB_BIN}
    if not ECNLAB_BIN.is_file():
        print(f"{ECNLAB_BIN} does not exist (cargo build --release --bin ecnlab-run)", file=sys.stderr)
        return 2
    if args.mimic:
        print("building the ns-3-mimicking diagnostic build (target/ns3-mimic)", file=sys.stderr)
        binaries["mimic"] = build_mimic()
    variants = variant_table(args.mimic, args.ladder)

    seeds = list(range(1, args.seeds + 1))
    jobs = []  # (key, fn, args); key = (scenario, simulator, variant, seed)
    for name in args.scenarios:
        ns3_seeds = seeds if SCENARIOS[name][3] else [1]
        jobs += [((name, "ns3", None, s), run_ns3, (ns3, name, s)) for s in ns3_seeds]
        jobs += [((name, "ecnlab", None, s), run_ecnlab, (binaries["main"], name, s)) for s in seeds]
        for v, (edit, env, which) in variants.items():
            jobs += [((name, "ecnlab", v, s), run_ecnlab, (binaries[which], name, s, edit, env))
                     for s in seeds]
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
              "ecnlab_commit": git_commit(), "mimic": args.mimic, "ladder": args.ladder,
              "mimic_env": MIMIC_ALL if args.mimic else None, "scenarios": {}}
    for name in args.scenarios:
        def pick(sim, v):
            keys = sorted((k for k in results if k[0] == name and k[1] == sim and k[2] == v),
                          key=lambda k: k[3])
            return [k[3] for k in keys], [results[k] for k in keys]
        ns3_seeds, ns3_runs = pick("ns3", None)
        _, eco_runs = pick("ecnlab", None)
        var_runs = {v: pick("ecnlab", v)[1] for v in variants}
        sc = {
            "rows": compare(ns3_runs, eco_runs, name, var_runs),
            "ns3_runs": len(ns3_runs),
            "ns3_runs_without_stall": sum(not stalled(r) for r in ns3_runs),
            "ns3_stalled_seeds": [s for s, r in zip(ns3_seeds, ns3_runs) if stalled(r)],
            "variants": list(variants),
            "wall_s": {"ns3": statistics.fmean(r["wall_s"] for r in ns3_runs),
                       "ecnlab": statistics.fmean(r["wall_s"] for r in eco_runs)},
            # Every run of both simulators; the variants only as the statistics in `rows`.
            "runs": {"ns3": dict(zip(map(str, ns3_seeds), ns3_runs)),
                     "ecnlab": dict(zip(map(str, seeds), eco_runs))},
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
