"""HTML reports: one self-contained file (figures embedded as base64 PNG, no scripts, no
external resources) that opens offline, with the same figures also written as PNG files.

``write_run_report(dir)`` reports one run directory; :mod:`ecnlab.experiments` builds its
reproduction report from the same pieces (:class:`Html`).
"""

from __future__ import annotations

import base64
import html
import math
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import polars as pl

from . import plots
from .fsutil import atomic_write_text

__all__ = ["Html", "write_run_report", "run_figures"]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #1d2330; background: #fff; }
h1 { font-size: 1.6em; border-bottom: 2px solid #3b6ea8; padding-bottom: .2em; }
h2 { font-size: 1.3em; margin-top: 1.8em; color: #24456e; }
h3 { font-size: 1.05em; margin-top: 1.2em; }
table { border-collapse: collapse; font-size: .82em; margin: .6em 0 1em; }
th, td { border: 1px solid #d5dae3; padding: .25em .55em; text-align: right; white-space: nowrap; }
div.tbl { overflow-x: auto; max-width: 100%; }
table.cmp th, table.cmp td { white-space: normal; }
table.cmp td.l { min-width: 9em; }
th { background: #eef2f8; }
td.l, th.l { text-align: left; }
figure { margin: 1em 0; }
figure img { max-width: 100%; border: 1px solid #e3e7ee; }
figcaption { font-size: .85em; color: #556; }
pre { background: #f6f8fb; border: 1px solid #e3e7ee; padding: .6em; font-size: .8em;
      overflow-x: auto; }
.yes { color: #176b2c; font-weight: 600; } .no { color: #a12020; font-weight: 600; }
.na { color: #777; } .note { color: #556; font-size: .9em; }
.meta td { text-align: left; }
"""


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int) and abs(v) >= 10_000_000:
        return f"{v:.4g}"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if v == 0:
            return "0"
        a = abs(v)
        if a >= 1e6 or a < 1e-3:
            return f"{v:.3g}"
        if a >= 100:
            return f"{v:.1f}"
        return f"{v:.4g}"
    return str(v)


class Html:
    """Builds a report page piece by piece; ``figure`` embeds a PNG and also writes it."""

    def __init__(self, title: str, fig_dir: Path | None = None) -> None:
        self.title = title
        self.parts: list[str] = []
        self.fig_dir = fig_dir
        self.figure_files: list[Path] = []

    def h(self, level: int, text: str, anchor: str | None = None) -> None:
        a = f' id="{html.escape(anchor)}"' if anchor else ""
        self.parts.append(f"<h{level}{a}>{html.escape(text)}</h{level}>")

    def p(self, text: str, cls: str | None = None) -> None:
        c = f' class="{cls}"' if cls else ""
        self.parts.append(f"<p{c}>{html.escape(text)}</p>")

    def raw(self, fragment: str) -> None:
        self.parts.append(fragment)

    def pre(self, text: str) -> None:
        self.parts.append(f"<pre>{html.escape(text)}</pre>")

    def figure(self, fig, name: str, caption: str = "") -> Path | None:
        data = plots.png_bytes(fig)
        path = None
        if self.fig_dir is not None:
            self.fig_dir.mkdir(parents=True, exist_ok=True)
            path = self.fig_dir / f"{name}.png"
            path.write_bytes(data)
            self.figure_files.append(path)
        b64 = base64.b64encode(data).decode("ascii")
        cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
        self.parts.append(
            f'<figure><img alt="{html.escape(caption or name)}" src="data:image/png;base64,{b64}">{cap}</figure>'
        )
        return path

    def table(
        self,
        df: pl.DataFrame,
        columns: Sequence[str] | None = None,
        max_rows: int = 200,
        caption: str = "",
    ) -> None:
        cols = [c for c in (columns or df.columns) if c in df.columns]
        if caption:
            self.parts.append(f"<h3>{html.escape(caption)}</h3>")
        if not cols or df.height == 0:
            self.p("(no rows)", "note")
            return
        head = "".join(
            f'<th class="{"l" if df.schema[c] == pl.String else ""}">{html.escape(c)}</th>' for c in cols
        )
        rows = []
        for r in df.select(cols).head(max_rows).iter_rows():
            cells = "".join(
                f'<td class="{"l" if isinstance(v, str) else ""}">{html.escape(_fmt(v))}</td>' for v in r
            )
            rows.append(f"<tr>{cells}</tr>")
        self.parts.append(f"<div class=\"tbl\"><table><tr>{head}</tr>{''.join(rows)}</table></div>")
        if df.height > max_rows:
            self.p(f"First {max_rows} of {df.height} rows; the full table is in the Parquet file.", "note")

    def kv(self, items: Iterable[tuple[str, Any]]) -> None:
        rows = "".join(
            f'<tr><th class="l">{html.escape(k)}</th><td>{html.escape(_fmt(v))}</td></tr>' for k, v in items
        )
        self.parts.append(f'<table class="meta">{rows}</table>')

    def render(self) -> str:
        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(self.title)}</title><style>{_CSS}</style></head><body>"
            f"<h1>{html.escape(self.title)}</h1>" + "\n".join(self.parts) + "</body></html>\n"
        )

    def write(self, path: Path) -> Path:
        return atomic_write_text(path, self.render())


# ----------------------------------------------------------------- run reports

PORT_COLUMNS = [
    "port", "rate_bps", "mean_rate_bps", "delay_s", "arrived_pkts", "enqueued_pkts", "dequeued_pkts", "dropped_pkts",
    "marked_pkts", "utilization", "mean_queue_pkts", "max_queue_pkts", "mean_sojourn_s",
    "p95_sojourn_s",
]  # fmt: skip
FLOW_COLUMNS = [
    "name", "transport", "scheme", "src", "dst", "start_s", "size_bytes", "bytes_delivered",
    "fct_s", "goodput_bps", "retransmissions", "rtos", "signals_l1", "signals_l2",
    "rtt_mean_s", "owd_mean_s", "init_cwnd",
]  # fmt: skip

#: Flow sample kinds drawn first, with their axis label and scale.
FLOW_KINDS = {
    "cwnd_bytes": ("cwnd (KB)", 1e-3),
    "delivery_bps": ("in-order delivery (Mbit/s)", 1e-6),
    "srtt_s": ("smoothed RTT (ms)", 1e3),
}
MAX_PORT_FIGURES = 6
MAX_OTHER_FLOW_KINDS = 6


RATE_WINDOW_S = 0.1


def _sample_interval(ts: pl.DataFrame) -> float | None:
    times = ts["time_s"].unique().sort().head(3).to_list() if ts.height else []
    return times[1] - times[0] if len(times) > 1 and times[1] > times[0] else None


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in s).strip("_")


def _non_empty_columns(df: pl.DataFrame, cols: Sequence[str]) -> list[str]:
    return [c for c in cols if c in df.columns and df[c].null_count() < df.height]


def _display_units(df: pl.DataFrame) -> pl.DataFrame:
    """One unit per quantity in report tables: Mbit/s, ms and per cent (the Parquet files
    keep bit/s, s and fractions)."""
    out = []
    for c in df.columns:
        col = pl.col(c)
        if c.endswith("_bps"):
            out.append((col / 1e6).round(3).alias(c[: -len("_bps")] + "_mbps"))
        elif c.endswith("_s") and df.schema[c].is_numeric():
            out.append((col * 1e3).round(3).alias(c[: -len("_s")] + "_ms"))
        elif c == "utilization":
            out.append((col * 100).round(2).alias("utilization_pct"))
        else:
            out.append(col)
    return df.select(out)


def run_figures(doc: Html, flows: pl.DataFrame, ports: pl.DataFrame, ts: pl.DataFrame, prefix: str = "") -> None:
    """Adds the standard figures of one run to ``doc``."""
    kinds = set(ts["kind"].unique().to_list()) if ts.height else set()

    # Queue length per sampled port, busiest first; idle ports are left out.
    if "queue_pkts" in kinds:
        q = ts.filter(pl.col("kind") == "queue_pkts").group_by("entity").agg(pl.col("value").max().alias("peak"))
        busy = q.filter(pl.col("peak") > 0).sort("peak", descending=True)["entity"].to_list()
        for port in busy[:MAX_PORT_FIGURES]:
            fig, _, _ = plots.time_series(
                ts, "queue_pkts", [port], title=f"Queue at {port}", ylabel="packets",
                extra_kind="queue_avg_pkts" if "queue_avg_pkts" in kinds else None,
            )  # fmt: skip
            doc.figure(fig, f"{prefix}queue_{_slug(port)}", f"Queue length (packets) at port {port} over time.")
        if len(busy) > MAX_PORT_FIGURES:
            doc.p(f"{len(busy) - MAX_PORT_FIGURES} more ports had a queue; their series are in timeseries.parquet.", "note")
        if not busy:
            doc.p("No sampled port ever held a queue.", "note")

    # Per-flow series: cwnd, throughput, RTT, then anything else the flows sampled.
    flow_names = set(flows["name"].to_list()) if flows.height else set()
    flow_kinds = [
        k for k in sorted(kinds) if ts.filter((pl.col("kind") == k)).head(1)["entity"].to_list()[0] in flow_names
    ] if flow_names else []  # fmt: skip
    ordered = [k for k in FLOW_KINDS if k in flow_kinds]
    others = [k for k in flow_kinds if k not in FLOW_KINDS][:MAX_OTHER_FLOW_KINDS]
    interval = _sample_interval(ts)
    # A flow has the same colour in every figure.
    flow_colors = plots.colors_for(flows["name"].to_list() if flows.height else [])
    for k in ordered + others:
        ylabel, scale = FLOW_KINDS.get(k, (k, 1.0))
        # Delivery comes in bursts (a filled loss hole releases many bytes at once), so the
        # rate is shown averaged over RATE_WINDOW_S.
        smooth = max(1, round(RATE_WINDOW_S / interval)) if k == "delivery_bps" and interval else 1
        fig, ax, drawn = plots.time_series(
            ts, k, None, title=f"{ylabel} per flow", ylabel=ylabel, scale=scale, smooth=smooth, colors=flow_colors
        )
        n = ts.filter(pl.col("kind") == k)["entity"].n_unique()
        more = f" ({len(drawn)} of {n} flows shown)" if n > len(drawn) else ""
        avg = f", averaged over {smooth * interval * 1e3:.0f} ms" if smooth > 1 else ""
        cap = ""
        if k == "delivery_bps" and ports.height and "utilization" in ports.columns:
            # The busiest port is the one whose capacity bounds the flows' sum.
            busiest = ports.sort("utilization", descending=True).row(0, named=True)
            ax.axhline(busiest["rate_bps"] * scale, color="#444", ls="--", lw=1, label=f"capacity of {busiest['port']}")
            ax.legend(fontsize=7)
            cap = f"; dashed: the capacity of the busiest port, {busiest['port']} ({busiest['rate_bps'] / 1e6:g} Mbit/s)"
        what = " (bytes handed to the receiving application per interval: after a loss is repaired, the bytes it held back arrive at once)" if k == "delivery_bps" else ""
        doc.figure(fig, f"{prefix}flow_{_slug(k)}", f"{ylabel} of each flow over time{what}{avg}{more}{cap}.")

    # Flow completion times.
    if flows.height and "fct_s" in flows.columns:
        done = flows.filter(pl.col("fct_s").is_not_null())
        if done.height:
            groups = {s: done.filter(pl.col("scheme") == s)["fct_s"].to_list() for s in done["scheme"].unique().sort()}
            fig, _ = plots.cdf(groups, title="Flow completion time", xlabel="FCT (s)",
                               logx=done["fct_s"].max() > 20 * max(done["fct_s"].min(), 1e-9))  # fmt: skip
            doc.figure(fig, f"{prefix}fct_cdf", f"CDF of flow completion time of the {done.height} finished flows, by scheme.")


def write_run_report(directory: str | os.PathLike[str]) -> Path:
    """Writes ``report.html`` and ``figures/*.png`` into a run directory."""
    from .results import read_run_json, read_table

    d = Path(directory)
    info = read_run_json(d)
    flows = read_table(d, "flows")
    ports = read_table(d, "ports")
    ts = read_table(d, "timeseries")
    name = (info.get("scenario") or {}).get("name") or d.name
    doc = Html(f"ecnlab run: {name}", fig_dir=d / "figures")
    pk = info.get("packets") or {}
    doc.kv(
        [
            ("scenario", name),
            ("seed", info.get("seed")),
            ("simulated time (s)", info.get("duration_s")),
            ("wall time (s)", info.get("wall_s")),
            ("events", info.get("events")),
            ("events per second", info.get("events_per_s")),
            ("packets created / delivered / dropped", f"{pk.get('created')} / {pk.get('delivered')} / {pk.get('dropped')}"),
            ("ecnlab version", info.get("ecnlab_version")),
        ]
    )  # fmt: skip
    doc.h(2, "Figures")
    run_figures(doc, flows, ports, ts)
    doc.h(2, "Ports")
    busy_ports = ports.filter(pl.col("arrived_pkts") > 0) if "arrived_pkts" in ports.columns else ports
    shown = _display_units(busy_ports.select(_non_empty_columns(busy_ports, PORT_COLUMNS)))
    doc.table(shown, caption="Rates in Mbit/s, times in ms, utilisation in %; every column is defined in docs/metrics.md")
    if busy_ports.height < ports.height:
        doc.p(f"{ports.height - busy_ports.height} ports that carried no packet are left out.", "note")
    doc.h(2, "Flows")
    doc.table(_display_units(flows.select(_non_empty_columns(flows, FLOW_COLUMNS))), caption="Rates in Mbit/s, times in ms")
    doc.h(2, "Scenario as run")
    doc.pre(info.get("scenario_toml", ""))
    return doc.write(d / "report.html")
