"""ecnlab's TCP beside reference stacks on the four TCP reference scenarios (scenarios/tcp/).

Three scenarios run against real Linux TCP through the emulation (`ecnlab emulate`, needs
root), the DCTCP one against ns-3 3.44's TcpDctcp (`bench/ns3/dumbbell.cc`, scenario
`dctcp10g`; needs the ns3 wheel, see bench/ns3/requirements.txt), and its form at emulation
rates (scenarios/emulate_dctcp_step.toml) against both: Linux running the BPF DCTCP (bpf/,
`make -C bpf`) and ns-3's TcpDctcp on the same scaled network. Every scenario runs N times
on each side (seeds 1..N; emulated runs differ by their timing noise, ns-3's by its run
number) and the table gives each metric's mean and range beside the references'.

    .venv/bin/python bench/tcp_reference.py --runs 3 --out bench/results/tcp-reference
    .venv/bin/python bench/tcp_reference.py --before /path/to/old/python   # add a column

`--scenario FILE` adds any other scenario file with Linux as its reference (e.g.
scenarios/emulate_mecn_classic.toml); `--sim-runs N` runs the simulation on more seeds than
the reference (simulated runs are cheap). The last column is the two-sided permutation test
of "same mean" for each metric (exact when the splits are few, else 20000 seeded
resamples): where a quantity spreads widely from run to run, a difference of means says
little without it.

`--before` names a Python path that holds another ecnlab build (its `ecnlab` package with
the compiled core); its simulations make a "before" column, so a change to the TCP can be
shown against the same references. Runs already in --out are reused with --reuse.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "python"))

import polars as pl  # noqa: E402

from ecnlab import ns3  # noqa: E402
from ecnlab import results as _results  # noqa: E402
from ecnlab.emulate.compare import p95_queue  # noqa: E402

#: scenario file stem → its references: "linux", or ("ns3", ns-3 scenario name, parameters).
SCENARIOS: dict[str, list[Any]] = {
    "parking_lot_red_ecn": ["linux"],
    "mixed_rtt_cubic": ["linux"],
    "bbr_deep_buffer": ["linux"],
    "dctcp_step_10g": [("ns3", "dctcp10g", {})],
    # dctcp10g's network scaled as the scenario file says (rates / 100, delays x 100).
    "emulate_dctcp_step": [
        "linux",
        (
            "ns3",
            "dctcp10g",
            {"access_rate": "250Mbps", "access_delay": "500us", "bottleneck_rate": "100Mbps", "bottleneck_delay": "2ms", "duration": 10, "sample_ms": 10},
        ),
    ],
}


def _scenario_path(stem: str) -> Path:
    p = ROOT / "scenarios" / "tcp" / f"{stem}.toml"
    return p if p.is_file() else ROOT / "scenarios" / f"{stem}.toml"


def _label(ref: Any) -> str:
    return "Linux" if ref == "linux" else "ns-3"

FLOW_METRICS = (
    ("goodput", "goodput Mb/s"),
    ("retransmissions", "retransmissions"),
    ("rtos", "timeouts"),
    ("recoveries", "fast recoveries"),
    ("loss_probes", "tail loss probes"),
    ("rtt_mean", "mean RTT ms"),
)
PORT_METRICS = (
    ("utilization", "utilisation"),
    ("drops", "drops"),
    ("marks", "CE marks"),
    ("all_marks", "marks, every level"),
    ("mean_queue", "mean queue pkts"),
    ("p95_queue", "p95 queue pkts"),
    ("load_factor", "UNO load factor, mean"),
    ("load_high_share", "UNO load in [0.8, 1), share of time"),
    ("load_overload_share", "UNO load >= 1, share of time"),
)


def _python(before: str | None) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ, PYTHONPATH=before or str(ROOT / "python"))
    return [sys.executable, "-m", "ecnlab"], env


def _run(cmd: list[str], env: dict[str, str]) -> None:
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr[-3000:]}")


def metrics_from_run(directory: Path, ports: list[str]) -> dict[str, Any]:
    """Per-flow and per-port figures of an ecnlab run directory (simulated or emulated)."""
    r = _results.read_run_dir(directory)
    flows: dict[str, dict[str, Any]] = {}
    for row in r.flows.iter_rows(named=True):
        rtt = row.get("rtt_mean_s")
        flows[row["name"]] = {
            "goodput": (row.get("goodput_bps") or 0.0) * 1e-6,
            "retransmissions": row.get("retransmissions"),
            "rtos": row.get("rtos"),
            "recoveries": row.get("recoveries"),
            "loss_probes": row.get("loss_probes"),
            "rtt_mean": None if rtt is None else rtt * 1e3,
        }
    out_ports: dict[str, dict[str, Any]] = {}
    uno = any("ucp1" in (s or "") for s in r.flows["scheme"])
    for port in ports:
        p = r.port(port)
        out_ports[port] = {
            "utilization": p.get("utilization"),
            "drops": p.get("dropped_pkts"),
            "marks": p.get("marked_ce"),
            "all_marks": p.get("marked_pkts"),
            "mean_queue": p.get("mean_queue_pkts"),
            "p95_queue": p95_queue(r, port),
            **(_load_factor(r, port) if uno else {}),
        }
    return {"flows": flows, "ports": out_ports, "senders": _senders(r, directory), "run": _run_facts(directory)}


def _load_factor(r: Any, port: str) -> dict[str, Any]:
    """A UNO router's load factor over the run (its marker gauge, sampled each measurement
    interval; the same code measures it on both sides): the mean, and the shares of samples
    in the high band [0.8, 1) and at overload (>= 1), Fig. 1's levels 6 and 7."""
    g = r.timeseries.filter((pl.col("kind") == "marker_gauge") & (pl.col("entity") == port))["value"]
    if g.len() == 0:
        return {}
    return {
        "load_factor": float(g.mean()),
        "load_high_share": float(((g >= 0.8) & (g < 1.0)).mean()),
        "load_overload_share": float((g >= 1.0).mean()),
    }


#: The senders' window reductions by cause, summed over the run's flows: the simulator's from
#: its controllers' running totals (the last sample of each flow's series), the emulation's
#: from its BPF controllers' counters (bpf/counters.h). ECN cuts are counted apart from loss
#: cuts on both sides, so the two compare like for like.
SENDER_METRICS = (
    ("ecn_cuts_l1", "ECN cuts, level 1 (incipient)"),
    ("ecn_cuts_l2", "ECN cuts, level 2 (moderate)"),
    ("loss_cuts", "loss cuts"),
    ("decisions", "UNO blocks decided"),
    ("overload_decisions", "UNO blocks decided overload (level 7)"),
)
SIM_SERIES = {"ecn_cuts_l1": "mecn_ecn_cuts_l1", "ecn_cuts_l2": "mecn_ecn_cuts_l2", "loss_cuts": "mecn_loss_cuts"}
BPF_COUNTERS = {"ecn_cuts_l1": "cuts_level1", "ecn_cuts_l2": "cuts_level2", "loss_cuts": "losses"}


def _senders(r: Any, directory: Path) -> dict[str, Any]:
    info = _results.read_run_json(directory)
    bpf = (info.get("emulation") or {}).get("bpf_controllers") or {}
    mecn = bpf.get("mecn")
    if mecn is not None:
        return {"all": {k: mecn.get(c) for k, c in BPF_COUNTERS.items()}}
    ucp1 = bpf.get("ucp1")
    if ucp1 is not None:
        return {"all": {"decisions": ucp1.get("estimates"), "overload_decisions": ucp1.get("uno_level7")}}
    if any("ucp1" in (s or "") for s in r.flows["scheme"]):
        # The simulator's per-flow decision counts (flows.parquet: feedback_decisions, and
        # signals_l1, which counts UNO's overload decisions).
        return {"all": {"decisions": float(r.flows["feedback_decisions"].sum()), "overload_decisions": float(r.flows["signals_l1"].sum())}}
    ts = r.timeseries
    if ts is None or ts.height == 0:
        return {}
    out: dict[str, Any] = {}
    for metric, kind in SIM_SERIES.items():
        last = ts.filter(pl.col("kind") == kind).group_by("entity").agg(pl.col("value").sort_by("time_s").last())
        if last.height:
            out[metric] = float(last["value"].sum())
    return {"all": out} if out else {}


def _run_facts(directory: Path) -> dict[str, Any]:
    """An emulated run's conditions: how late its forwarder was, the machine's load average
    when it ended (read by the bench after the run) and its BPF controllers' counters."""
    info = _results.read_run_json(directory)
    e = info.get("emulation") or {}
    facts = {k: e.get(k) for k in ("lateness_p99_s", "lateness_max_s") if k in e}
    load = directory / "loadavg"
    if load.is_file():
        facts["load1"] = float(load.read_text().split()[0])
    if e.get("bpf_controllers"):
        facts["bpf"] = e["bpf_controllers"]
    return facts


def metrics_from_ns3(report: dict[str, Any], flow_names: list[str], port: str) -> dict[str, Any]:
    flows = {}
    for name, f in zip(flow_names, report["flows"]):
        flows[name] = {
            "goodput": f["goodput_bps"] * 1e-6,
            "retransmissions": f["retransmissions"],
            "rtos": f.get("rtos"),
            "recoveries": None,
            "loss_probes": None,
            "rtt_mean": None,
        }
    b = report["bottleneck"]
    series = pl.Series(b.get("queue_series_pkts", []), dtype=pl.Float64)
    return {
        "flows": flows,
        "ports": {
            port: {
                "utilization": b.get("utilisation"),
                "drops": b["dropped"],
                "marks": b["marked"],
                "all_marks": b["marked"],
                "mean_queue": b["mean_queue_pkts"],
                "p95_queue": float(series.quantile(0.95)) if series.len() else None,
            }
        },
    }


def _sampled_ports(path: Path) -> list[str]:
    import tomllib

    with open(path, "rb") as fh:
        return list(tomllib.load(fh)["measure"]["sample_ports"])


def run_scenario(stem: str, path: Path, refs: list[Any], runs: int, sim_runs: int, out: Path, before: str | None, reuse: bool) -> dict[str, list]:
    ports = _sampled_ports(path)
    got: dict[str, list] = {"before": [], "ecnlab": [], **{_label(ref): [] for ref in refs}}
    for k in range(1, max(runs, sim_runs) + 1):
        sides = [("ecnlab", None)] + ([("before", before)] if before else [])
        for side, pypath in sides if k <= sim_runs else []:
            d = out / stem / f"{side}-{k}"
            if not (reuse and (d / "run.json").exists()):
                cmd, env = _python(pypath)
                _run(cmd + ["run", str(path), "--seed", str(k), "--quiet", "--out", str(d)], env)
            got[side].append(metrics_from_run(d, ports))
        if k > runs:
            continue
        for ref in refs:
            if ref == "linux":
                d = out / stem / f"linux-{k}"
                if not (reuse and (d / "run.json").exists()):
                    cmd, env = _python(None)
                    _run(cmd + ["emulate", str(path), "--seed", str(k), "--quiet", "--out", str(d)], env)
                    (d / "loadavg").write_text(Path("/proc/loadavg").read_text())
                got["Linux"].append(metrics_from_run(d, ports))
            else:
                f = out / stem / f"ns3-{k}.json"
                if not (reuse and f.exists()):
                    params = {"sample_ms": 1, **ref[2]}
                    report = ns3.run(ref[1], seed=1, run=k, queue_series=1, warmup=0, **params)
                    f.parent.mkdir(parents=True, exist_ok=True)
                    f.write_text(json.dumps(report) + "\n", encoding="utf-8")
                report = json.loads(f.read_text(encoding="utf-8"))
                names = list(got["ecnlab"][-1]["flows"])
                got["ns-3"].append(metrics_from_ns3(report, names, ports[0]))
        print(f"{stem}: run {k} done", file=sys.stderr)
    return got


def _values(runs: list[dict], kind: str, entity: str, metric: str) -> list[float]:
    vals = []
    for r in runs:
        v = r.get(kind, {}).get(entity, {}).get(metric)
        if v is not None:
            vals.append(float(v))
    return vals


def _cell(vals: list[float]) -> str:
    if not vals:
        return "–"
    m = statistics.fmean(vals)
    if len(vals) == 1:
        return f"{m:.4g}"
    return f"{m:.4g} ({min(vals):.4g}–{max(vals):.4g})"


def _diff(a: list[float], b: list[float]) -> str:
    if not a or not b:
        return "–"
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    if mb == 0:
        return "–" if ma == 0 else "∞"
    return f"{(ma / mb - 1) * 100:+.0f} %"


def permutation_p(a: list[float], b: list[float], resamples: int = 20000) -> float | None:
    """Two-sided permutation test of equal means: the share of the splits of a + b into
    groups of len(a) and len(b) whose difference of means is at least the observed one.
    Every split when they are at most ``resamples``, else that many drawn with a fixed seed."""
    if len(a) < 2 or len(b) < 2:
        return None
    pooled = a + b
    n, total = len(a), sum(pooled)
    observed = abs(statistics.fmean(a) - statistics.fmean(b))
    eps = 1e-9 * max(1.0, observed)

    def extreme(idx: tuple[int, ...] | list[int]) -> bool:
        sa = sum(pooled[i] for i in idx)
        return abs(sa / n - (total - sa) / len(b)) >= observed - eps

    if math.comb(len(pooled), n) <= resamples:
        splits = list(itertools.combinations(range(len(pooled)), n))
        return sum(extreme(c) for c in splits) / len(splits)
    rng = random.Random(0)
    hits = sum(extreme(rng.sample(range(len(pooled)), n)) for _ in range(resamples))
    return (hits + 1) / (resamples + 1)


def _p_cell(a: list[float], b: list[float]) -> str:
    p = permutation_p(a, b)
    return "–" if p is None else f"{p:.2g}"


def table(stem: str, refs: list[Any], got: dict[str, list]) -> str:
    names = [_label(ref) for ref in refs]
    have_before = bool(got["before"])
    p_head = "p (same mean)" if len(names) == 1 else "p"
    head = ["", "metric"] + (["ecnlab before"] if have_before else []) + ["ecnlab", *names]
    for n in names:
        head += ["ecnlab vs " + n, p_head]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]

    def row(what: str, label: str, kind: str, entity: str, metric: str) -> None:
        b = _values(got["before"], kind, entity, metric)
        e = _values(got["ecnlab"], kind, entity, metric)
        rs = [_values(got[n], kind, entity, metric) for n in names]
        if not (b or e or any(rs)):
            return
        cells = [what, label] + ([_cell(b)] if have_before else []) + [_cell(e)] + [_cell(r) for r in rs]
        for r in rs:
            cells += [_diff(e, r), _p_cell(e, r)]
        lines.append("| " + " | ".join(cells) + " |")

    flows = list(got["ecnlab"][0]["flows"])
    for name in flows:
        for metric, label in FLOW_METRICS:
            row(f"flow {name}", label, "flows", name, metric)
    for port in got["ecnlab"][0]["ports"]:
        for metric, label in PORT_METRICS:
            row(f"port {port}", label, "ports", port, metric)

    for metric, label in SENDER_METRICS:
        row("senders", label, "senders", "all", metric)

    def totals(runs: list[dict]) -> list[float]:
        out = []
        for r in runs:
            retx = sum(f["retransmissions"] or 0 for f in r["flows"].values())
            drops = sum(p["drops"] or 0 for p in r["ports"].values())
            out.append(retx / drops if drops else float("nan"))
        return [v for v in out if v == v]

    cells = ["all", "retransmissions / drops"] + ([_cell(totals(got["before"]))] if have_before else [])
    e, rs = totals(got["ecnlab"]), [totals(got[n]) for n in names]
    cells += [_cell(e)] + [_cell(r) for r in rs]
    for r in rs:
        cells += [_diff(e, r), _p_cell(e, r)]
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def per_run_table(got: dict[str, list]) -> str:
    """Each Linux run's conditions beside its figures: a run's numbers follow how long its
    forwarder was held off the CPU on a loaded machine."""
    runs = got.get("Linux") or []
    if not runs or not runs[0].get("run"):
        return ""
    port = next(iter(runs[0]["ports"]))
    head = ["Linux run", "utilisation", "marks, every level", "mean queue", "p95 queue", "forwarder late, p99 / max", "load average (1 min)"]
    bpf_keys = ("reductions", "cuts_level1", "cuts_level2", "losses", "losses_in_round")
    has_bpf = any(r["run"].get("bpf") for r in runs)
    uno = any("ucp1" in r["run"].get("bpf", {}) for r in runs)
    if uno:
        # UCP1: its MDs (reductions), losses, blocks decided, of them at levels 6-8, skipped.
        bpf_keys = ("reductions", "losses", "estimates", "uno_level6", "uno_level7", "uno_level8", "uno_blocks_skipped", "uno_ring_full")
    has_alpha = not uno and any(c.get("estimates") for r in runs for c in r["run"].get("bpf", {}).values())
    if has_bpf:
        head += ["BPF " + k for k in bpf_keys] + (["mean α"] if has_alpha else []) + (["mean level decided"] if uno else [])
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for k, r in enumerate(runs, 1):
        p, f = r["ports"][port], r["run"]
        late = f"{(f.get('lateness_p99_s') or 0) * 1e6:.0f} µs / {(f.get('lateness_max_s') or 0) * 1e3:.0f} ms"
        cells = [str(k), f"{p['utilization']:.3f}", str(p["all_marks"]), f"{p['mean_queue']:.1f}", f"{p['p95_queue']}", late, str(f.get("load1", "–"))]
        if has_bpf:
            c = next(iter(f.get("bpf", {}).values()), {})
            cells += [str(c.get(key, "–")) for key in bpf_keys]
            if has_alpha:
                cells.append(f"{c['estimate_sum'] / c['estimates'] / 1024:.3f}" if c.get("estimates") else "–")
            if uno:
                cells.append(f"{c['estimate_sum'] / c['estimates']:.2f}" if c.get("estimates") else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per side and scenario (default 3)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "tcp-reference")
    ap.add_argument("--before", help="Python path of another ecnlab build, for a 'before' column")
    ap.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="these scenarios only")
    ap.add_argument("--scenario", type=Path, action="append", default=[], metavar="FILE", help="another scenario file, against Linux (repeatable)")
    ap.add_argument("--sim-runs", type=int, help="simulated seeds per scenario (default: --runs)")
    ap.add_argument("--reuse", action="store_true", help="reuse runs already in --out")
    a = ap.parse_args(argv)
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    sim_runs = a.runs if a.sim_runs is None else a.sim_runs
    if sim_runs < 1:
        ap.error("--sim-runs must be at least 1")
    chosen: dict[str, tuple[Path, list[Any]]] = {}
    if a.only is not None or not a.scenario:
        chosen = {s: (_scenario_path(s), SCENARIOS[s]) for s in (a.only or SCENARIOS)}
    for f in a.scenario:
        if not f.is_file():
            ap.error(f"--scenario: no such file: {f}")
        chosen[f.stem] = (f.resolve(), SCENARIOS.get(f.stem, ["linux"]))
    if any("linux" in refs for _, refs in chosen.values()) and os.geteuid() != 0:
        ap.error("the Linux references need root (ecnlab emulate); use --only dctcp_step_10g")
    if any(ref != "linux" for _, refs in chosen.values() for ref in refs) and not ns3.available():
        ap.error("the ns-3 reference needs the ns3 wheel: pip install -r bench/ns3/requirements.txt")
    a.out.mkdir(parents=True, exist_ok=True)
    doc = ["# ecnlab's TCP beside Linux and ns-3", ""]
    everything = {}
    for stem, (path, ref) in chosen.items():
        got = everything[stem] = run_scenario(stem, path, ref, a.runs, sim_runs, a.out, a.before, a.reuse)
        runs = f"{a.runs} runs per side" if sim_runs == a.runs else f"{sim_runs} simulated seeds, {a.runs} reference runs"
        doc += [f"## {stem} ({runs})", "", table(stem, ref, got)]
        if per_run_table(got):
            doc += [per_run_table(got)]
    (a.out / "summary.json").write_text(json.dumps(everything, indent=1) + "\n", encoding="utf-8")
    text = "\n".join(doc)
    (a.out / "tables.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
