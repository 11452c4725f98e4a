"""The same scenario simulated and emulated, side by side (``ecnlab emulate --compare-sim``).

The simulation runs the scenario as written (ecnlab's TCP with the scenario's controllers);
the emulation runs its network in the forwarder and its flows on Linux TCP. The table puts,
for every flow, goodput, retransmissions, timeouts and RTT, and for every sampled port,
utilisation, drops, CE marks and queue (mean, 95th percentile of the samples), beside each
other with their relative difference. What it cannot say is why they differ: the two TCPs
are different implementations (initial window, pacing, delayed ACKs, HyStart, PRR details)
and the emulation's packets carry real timing noise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl

from .. import results as _results
from ..fsutil import atomic_dir
from . import emulate

FLOW_METRICS = (
    ("goodput_bps", "goodput Mb/s", 1e-6),
    ("retransmissions", "retransmissions", 1.0),
    ("rtos", "timeouts", 1.0),
    ("recoveries", "fast recoveries", 1.0),
    ("loss_probes", "tail loss probes", 1.0),
    ("rtt_mean_s", "mean RTT ms", 1e3),
    ("fct_s", "FCT s", 1.0),
)
PORT_METRICS = (
    ("utilization", "utilisation", 1.0),
    ("dropped_pkts", "drops", 1.0),
    ("marked_ce", "CE marks", 1.0),
    ("mean_queue_pkts", "mean queue pkts", 1.0),
)


def p95_queue(r: _results.Results, port: str) -> float | None:
    """95th percentile of the port's sampled queue (packets); None without samples."""
    ts = r.timeseries.filter((pl.col("kind") == "queue_pkts") & (pl.col("entity") == port))
    return float(ts["value"].quantile(0.95)) if ts.height else None


def table(sim: _results.Results, emu: _results.Results) -> list[dict[str, Any]]:
    """Rows ``{what, metric, sim, emulation, diff}`` (diff: emulation / sim − 1)."""
    rows: list[dict[str, Any]] = []

    def add(what: str, metric: str, a: Any, b: Any, scale: float) -> None:
        a = None if a is None else a * scale
        b = None if b is None else b * scale
        diff = (b / a - 1.0) if a not in (None, 0) and b is not None else None
        rows.append({"what": what, "metric": metric, "sim": a, "emulation": b, "diff": diff})

    for name in sim.flows["name"].to_list():
        fs, fe = sim.flow(name), emu.flow(name)
        for col, label, scale in FLOW_METRICS:
            if fs.get(col) is None and fe.get(col) is None:
                continue
            add(f"flow {name}", label, fs.get(col), fe.get(col), scale)
    sampled = sorted(set(sim.timeseries.filter(pl.col("kind") == "queue_pkts")["entity"].to_list()))
    for port in sampled:
        ps, pe = sim.port(port), emu.port(port)
        for col, label, scale in PORT_METRICS:
            add(f"port {port}", label, ps.get(col), pe.get(col), scale)
        add(f"port {port}", "p95 queue pkts (samples)", p95_queue(sim, port), p95_queue(emu, port), 1.0)
    return rows


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def markdown(rows: list[dict[str, Any]], title: str) -> str:
    out = [f"# {title}: simulated and emulated", "", "| | metric | simulation | emulation (Linux TCP) | difference |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        d = "–" if r["diff"] is None else f"{r['diff'] * 100:+.1f} %"
        out.append(f"| {r['what']} | {r['metric']} | {_fmt(r['sim'])} | {_fmt(r['emulation'])} | {d} |")
    return "\n".join(out) + "\n"


def compare(scenario: Any, out_dir: str | os.PathLike[str], seed: int | None = None, force: bool = False) -> list[dict[str, Any]]:
    """Runs ``scenario`` both ways and writes ``out_dir/sim``, ``out_dir/emulation`` (each in
    the layout of ``ecnlab run``), ``out_dir/compare.md`` and ``out_dir/compare.json``, all at
    once or not at all."""
    with atomic_dir(out_dir) as tmp:
        sim = _results.run(scenario, seed=seed, pcap_dir=tmp / "sim" / "pcap", warn=False)
        _results._write_into(sim, _mk(tmp / "sim"), None)
        emu = emulate(scenario, seed=seed, pcap_dir=tmp / "emulation" / "pcap", force=force)
        _results._write_into(emu, _mk(tmp / "emulation"), {"mode": "emulation"})
        rows = table(sim, emu)
        title = sim.scenario().to_dict().get("name") or "scenario"
        (tmp / "compare.md").write_text(markdown(rows, title), encoding="utf-8")
        (tmp / "compare.json").write_text(json.dumps({"rows": rows, "emulation": {k: v for k, v in emu.meta.items() if k != "warnings"}}, indent=2) + "\n", encoding="utf-8")
    return rows


def _mk(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p
