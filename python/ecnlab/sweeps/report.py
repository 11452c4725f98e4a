"""The report of a sweep store: for each chosen metric, its mean over seeds with the min–max
spread, as lines over one axis (one line per combination of the others) and, when two axes
vary, as a heatmap; and the same numbers as a table.

A metric is ``table.column`` with an optional per-run reduction: ``ports.dropped_pkts`` (at
the chosen port), ``flows.goodput_bps:sum`` (flows of a run summed; ``mean`` by default,
also ``min``, ``max``, ``p95``).
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any, Sequence

import polars as pl

from .. import plots
from ..errors import OutputError
from ..report import Html
from .store import Store

__all__ = ["write_sweep_report", "DEFAULT_METRICS"]

DEFAULT_METRICS = (
    "ports.dropped_pkts",
    "ports.marked_pkts",
    "ports.mean_queue_pkts",
    "ports.p95_sojourn_s",
    "ports.utilization",
    "flows.goodput_bps:sum",
    "flows.fct_s:mean",
)
REDUCTIONS = {
    "mean": pl.Expr.mean,
    "sum": pl.Expr.sum,
    "min": pl.Expr.min,
    "max": pl.Expr.max,
    "p95": lambda e: e.quantile(0.95),
}
#: Most lines in one figure; beyond that the figure draws one panel per value of an axis.
MAX_LINES = 10


def _parse_metric(m: str) -> tuple[str, str, str]:
    head, _, how = m.partition(":")
    table, _, col = head.partition(".")
    if table not in ("ports", "flows") or not col:
        raise OutputError(f"metric {m!r}: write table.column[:reduction] with table ports or flows, e.g. ports.dropped_pkts or flows.goodput_bps:sum")
    how = how or ("mean" if table == "flows" else "value")
    if table == "flows" and how not in REDUCTIONS:
        raise OutputError(f"metric {m!r}: the reduction over a run's flows is one of {', '.join(REDUCTIONS)}")
    if table == "ports" and how != "value":
        raise OutputError(f"metric {m!r}: a port metric is taken at one port (--port); it has no reduction")
    return table, col, how


def per_run(store: Store, metrics: Sequence[str], port: str | None) -> tuple[pl.DataFrame, str | None]:
    """One row per run: the axis values and each metric."""
    desc = store.description() or {}
    axes = [a["name"] for a in desc.get("axes", [])]
    runs = store.scan("runs").filter(pl.col("status") == "ok").select("run_key", *axes).collect()
    out = runs
    ports = store.scan("ports").collect() if any(m.startswith("ports.") for m in metrics) else None
    if ports is not None and port is None and ports.height:
        # The bottleneck: the port busiest on average over the runs.
        port = ports.group_by("port").agg(pl.col("utilization").mean()).sort(["utilization", "port"], descending=[True, False])["port"][0]
    if ports is not None and port is not None and port not in set(ports["port"]):
        raise OutputError(f"no port named {port!r} in this sweep; ports: {', '.join(sorted(set(ports['port']))[:12])}")
    flows = store.scan("flows").collect() if any(m.startswith("flows.") for m in metrics) else None
    for m in metrics:
        table, col, how = _parse_metric(m)
        df = ports if table == "ports" else flows
        if df is None or col not in df.columns:
            known = ", ".join(c for c in (df.columns if df is not None else []) if c != "run_key" and c not in axes)
            raise OutputError(f"metric {m!r}: the {table} table has no column {col!r}; it has: {known}")
        if table == "ports":
            vals = df.filter(pl.col("port") == port).select("run_key", pl.col(col).cast(pl.Float64).alias(m))
        else:
            vals = df.group_by("run_key").agg(REDUCTIONS[how](pl.col(col).cast(pl.Float64)).alias(m))
        out = out.join(vals, on="run_key", how="left")
    return out, port


def summarise(rows: pl.DataFrame, axes: Sequence[str], metrics: Sequence[str]) -> pl.DataFrame:
    """Mean, min, max and n over seeds for every combination of the other axes."""
    by = [a for a in axes if a != "seed"]
    aggs = []
    for m in metrics:
        aggs += [pl.col(m).mean().alias(f"{m} mean"), pl.col(m).min().alias(f"{m} min"), pl.col(m).max().alias(f"{m} max")]
    aggs.append(pl.len().alias("seeds"))
    if not by:
        return rows.select(aggs)
    return rows.group_by(by).agg(aggs).sort(by)


def _varying(rows: pl.DataFrame, axes: Sequence[str]) -> list[str]:
    return [a for a in axes if a != "seed" and rows[a].n_unique() > 1]


def _is_numeric(rows: pl.DataFrame, a: str) -> bool:
    return rows.schema[a].is_numeric()


def _lines(doc: Html, summ: pl.DataFrame, m: str, x: str, others: list[str], name: str) -> None:
    import numpy as np

    groups = summ.select(others).unique(maintain_order=True).rows() if others else [()]
    panels_by = others[0] if len(groups) > MAX_LINES and len(others) > 1 else None
    panel_values = summ[panels_by].unique(maintain_order=True).to_list() if panels_by else [None]
    for pv in panel_values[:6]:
        sub = summ if pv is None else summ.filter(pl.col(panels_by) == pv)
        rest = [o for o in others if o != panels_by]
        keys = sub.select(rest).unique(maintain_order=True).rows() if rest else [()]
        title = m + (f" — {panels_by} = {pv}" if panels_by else "")
        fig, ax = plots.new_figure(title=title, xlabel=x, ylabel=m)
        numeric = sub.schema[x].is_numeric()
        cats = sub[x].unique(maintain_order=True).to_list()
        for i, key in enumerate(keys[:MAX_LINES]):
            line = sub
            for o, v in zip(rest, key):
                line = line.filter(pl.col(o) == v)
            line = line.sort(x)
            xs = line[x].to_list() if numeric else [cats.index(v) for v in line[x].to_list()]
            mean = np.array(line[f"{m} mean"].to_list(), dtype=float)
            lo = np.maximum(mean - np.array(line[f"{m} min"].to_list(), dtype=float), 0)
            hi = np.maximum(np.array(line[f"{m} max"].to_list(), dtype=float) - mean, 0)
            label = ", ".join(f"{o}={v}" for o, v in zip(rest, key)) or m
            ax.errorbar(xs, mean, yerr=[lo, hi], marker="o", capsize=3, label=label)
        if not numeric:
            ax.set_xticks(range(len(cats)), [str(c) for c in cats])
        if len(keys) > 1:
            plots.legend_outside(ax)
        caption = f"{m}: mean over seeds, bars from the smallest to the largest seed's value"
        if len(keys) > MAX_LINES:
            caption += f"; the first {MAX_LINES} of {len(keys)} lines"
        doc.figure(fig, f"{name}-{_slug(str(pv))}" if pv is not None else name, caption)


def _heatmap(doc: Html, summ: pl.DataFrame, m: str, x: str, y: str, name: str) -> None:
    import numpy as np

    xs = sorted(summ[x].unique().to_list())
    ys = sorted(summ[y].unique().to_list())
    grid = np.full((len(ys), len(xs)), np.nan)
    low = np.full((len(ys), len(xs)), np.nan)
    high = np.full((len(ys), len(xs)), np.nan)
    # Other axes (if any) are averaged, and each cell also shows the range over them: a mean
    # alone would hide one combination that collapsed.
    others = summ.group_by(x, y).agg(pl.len().alias("n")).get_column("n").max() or 1
    col = pl.col(f"{m} mean")
    cells = summ.group_by(x, y).agg(col.mean().alias("mean"), col.min().alias("lo"), col.max().alias("hi"))
    for xv, yv, v, lo_v, hi_v in cells.select(x, y, "mean", "lo", "hi").iter_rows():
        i, j = ys.index(yv), xs.index(xv)
        grid[i, j] = np.nan if v is None else v
        low[i, j] = np.nan if lo_v is None else lo_v
        high[i, j] = np.nan if hi_v is None else hi_v
    fig, ax = plots.new_figure(title=m, xlabel=x, ylabel=y, size=(6.4, 4.2))
    ax.grid(False)
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    lo, hi = np.nanmin(grid), np.nanmax(grid)
    for i in range(len(ys)):
        for j in range(len(xs)):
            if not np.isnan(grid[i, j]):
                light = hi > lo and (grid[i, j] - lo) / (hi - lo) > 0.6
                text = f"{grid[i, j]:.3g}"
                if others > 1 and low[i, j] != high[i, j]:
                    text += f"\n{low[i, j]:.3g}–{high[i, j]:.3g}"
                ax.text(j, i, text, ha="center", va="center", fontsize=6 if others > 1 else 7, color="k" if light else "w")
    fig.colorbar(im, ax=ax)
    caption = f"{m}: mean over seeds for each {x} and {y}"
    if others > 1:
        caption += "; averaged over the other axes, with the range over them under each mean (the lowest and highest of their combinations)"
    doc.figure(fig, f"{name}-heatmap", caption)


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in s)


def write_sweep_report(directory: str | os.PathLike[str], metrics: Sequence[str] | None = None, port: str | None = None) -> Path:
    """Writes ``report.html`` and ``figures/*.png`` into a sweep store."""
    store = Store(directory)
    desc = store.description()
    if desc is None:
        raise OutputError(f"{directory} is not a sweep store (it has no sweep.json)")
    axes = [a["name"] for a in desc.get("axes", [])]
    damage = store.damage()
    if damage:
        key, why = next(iter(sorted(damage.items())))
        points = {p.get("run_key"): p for p in desc.get("points", [])}
        values = {k: v for k, v in points.get(key, {}).items() if k != "run_key"}
        run = ", ".join(f"{k}={v!r}" for k, v in values.items()) or key
        more = f" ({len(damage) - 1} more damaged runs)" if len(damage) > 1 else ""
        raise OutputError(
            f"{directory}: the run {run} (key {key}) is damaged: {why}{more}; the same `ecnlab sweep` command runs damaged runs again"
        )
    runs = store.scan("runs").collect()
    if runs.height == 0:
        raise OutputError(f"{directory} holds no finished run yet")
    chosen = list(metrics) if metrics else None
    rows, port = per_run(store, chosen or DEFAULT_METRICS, port)
    if chosen is None:
        # The default metrics that measured something.
        chosen = [m for m in DEFAULT_METRICS if rows[m].drop_nulls().drop_nans().len() > 0 and rows[m].max() != 0]
    d = Path(directory)
    doc = Html(f"ecnlab sweep: {desc.get('name', d.name)}", fig_dir=d / "figures")
    ok = runs.filter(pl.col("status") == "ok")
    failed = runs.filter(pl.col("status") != "ok")
    doc.kv(
        [
            ("axes", ", ".join(f"{a['name']} ({len(a['values'])} values)" for a in desc.get("axes", []))),
            ("runs in the sweep", desc.get("runs")),
            ("finished / failed", f"{ok.height} / {failed.height}"),
            # Written from a run that proves them identical (the runs table's identical_to).
            ("finished runs proven identical to another, not simulated", int(ok["identical_to"].is_not_null().sum())),
            ("wall time of the runs (s, summed)", float(runs["wall_s"].sum())),
            ("events (summed)", int(ok["events"].sum())),
            ("port of the port metrics", port or "–"),
        ]
    )
    if desc.get("runs") and ok.height < desc["runs"]:
        doc.p(f"{desc['runs'] - ok.height} runs of the sweep are not in the store (not run yet, or failed): the figures show what is.", "note")
    summ = summarise(rows, axes, chosen)
    vary = _varying(rows, axes)
    numeric = [a for a in vary if _is_numeric(rows, a)]
    for m in chosen:
        doc.h(2, m, anchor=_slug(m))
        if not vary:
            doc.p("No axis other than the seed varies: see the table.", "note")
            continue
        x = max(numeric, key=lambda a: rows[a].n_unique()) if numeric else vary[0]
        others = [a for a in vary if a != x]
        _lines(doc, summ, m, x, others, _slug(m))
        if len(vary) >= 2:
            y = next(a for a in vary if a != x)
            _heatmap(doc, summ, m, x, y, _slug(m))
    doc.h(2, "Every combination")
    shown = summ.select([c for c in summ.columns if not c.endswith(" min") and not c.endswith(" max")])
    doc.table(shown, caption="Means over seeds (the figures show the spread)", max_rows=500)
    if failed.height:
        doc.h(2, "Failed runs")
        doc.table(failed.select(["run_key", *axes, "error"]))
    doc.p(
        "Read the store: "
        + html.escape(f"pl.scan_parquet('{d}/flows/*.parquet'), duckdb.sql(\"SELECT * FROM '{d}/ports/*.parquet'\")"),
        "note",
    )
    return doc.write(d / "report.html")
