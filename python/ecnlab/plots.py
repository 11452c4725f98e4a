"""Figures for reports and experiments (matplotlib, without pyplot's global state, so figures
can be drawn from several threads)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = [
    "new_figure",
    "save_png",
    "time_series",
    "cdf",
    "errorbar_with_spread",
    "paper_vs_ours_bars",
    "legend_outside",
]

#: Most lines drawn in one time-series figure; more are summarised in the caption.
MAX_LINES = 16


def new_figure(title: str = "", xlabel: str = "", ylabel: str = "", size=(7.0, 3.6)):
    """A figure with one set of axes, styled alike across ecnlab: returns (fig, ax)."""
    fig = Figure(figsize=size, dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    if title:
        ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def save_png(fig: Figure, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, format="png")
    return p


def png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def colors_for(names: Sequence[str]) -> dict[str, Any]:
    """A fixed colour per name (in the given order), so one entity keeps its colour in every
    figure."""
    import matplotlib

    cycle = matplotlib.colormaps["tab20"].colors if len(names) > 10 else matplotlib.colormaps["tab10"].colors
    return {n: cycle[i % len(cycle)] for i, n in enumerate(names)}


def time_series(
    ts: pl.DataFrame,
    kind: str,
    entities: Sequence[str] | None = None,
    title: str = "",
    ylabel: str = "",
    scale: float = 1.0,
    extra_kind: str | None = None,
    smooth: int = 1,
    colors: Mapping[str, Any] | None = None,
):
    """Lines of one sample kind over time, one per entity (port or flow). ``extra_kind``
    adds a dashed line per entity (e.g. RED's average queue beside the instantaneous one).
    ``smooth`` > 1 draws the rolling mean over that many samples. Returns (fig, ax, drawn
    entity names)."""
    sel = ts.filter(pl.col("kind") == kind)
    names = entities if entities is not None else sel["entity"].unique(maintain_order=True).to_list()
    names = list(names)[:MAX_LINES]
    fig, ax = new_figure(title, "time (s)", ylabel)
    for name in names:
        part = sel.filter(pl.col("entity") == name)
        values = part["value"]
        if smooth > 1:
            values = values.rolling_mean(smooth, min_samples=1)
        style = {"color": colors[name]} if colors and name in colors else {}
        line = ax.plot(part["time_s"].to_numpy(), values.to_numpy() * scale, lw=1.0, label=name, **style)[0]
        if extra_kind:
            ex = ts.filter((pl.col("kind") == extra_kind) & (pl.col("entity") == name))
            if ex.height:
                ax.plot(
                    ex["time_s"].to_numpy(),
                    ex["value"].to_numpy() * scale,
                    lw=1.0,
                    ls="--",
                    color=line.get_color(),
                    label=f"{name} ({extra_kind})",
                )
    if names:
        ax.legend(fontsize=7, ncols=2 if len(names) > 6 else 1, loc="best")
    ax.set_xlim(left=0)
    return fig, ax, names


def cdf(
    series: dict[str, Iterable[float]], title: str = "", xlabel: str = "", logx: bool = False
):
    """Empirical CDFs, one step line per label. Returns (fig, ax)."""
    import numpy as np

    fig, ax = new_figure(title, xlabel, "fraction ≤ x")
    for label, values in series.items():
        v = np.sort(np.asarray([x for x in values if x is not None], dtype=float))
        if v.size == 0:
            continue
        y = np.arange(1, v.size + 1) / v.size
        ax.step(v, y, where="post", label=f"{label} (n={v.size})")
    if logx:
        ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower right")
    return fig, ax


def errorbar_with_spread(ax, x, stats, label: str, **kw):
    """Means with min–max bars, from a list of :class:`ecnlab.experiments.Stat`."""
    import numpy as np

    mean = np.array([s.mean for s in stats], dtype=float)
    # The mean of equal values can differ from them in the last bit: clip at zero.
    lo = np.maximum(mean - np.array([s.min for s in stats], dtype=float), 0.0)
    hi = np.maximum(np.array([s.max for s in stats], dtype=float) - mean, 0.0)
    return ax.errorbar(x, mean, yerr=[lo, hi], fmt="o", capsize=3, label=label, **kw)


def paper_vs_ours_bars(labels: Sequence[str], paper: Sequence[float | None], ours, title: str = "", ylabel: str = ""):
    """Grouped bars: the paper's value beside ours (mean with min–max) for each label.
    Returns (fig, ax)."""
    import numpy as np

    fig, ax = new_figure(title, "", ylabel)
    x = np.arange(len(labels))
    w = 0.38
    pv = [np.nan if v is None else v for v in paper]
    ax.bar(x - w / 2, pv, w, label="paper", color="#9aa7b8")
    mean = np.array([s.mean for s in ours], dtype=float)
    err = [mean - np.array([s.min for s in ours]), np.array([s.max for s in ours]) - mean]
    ax.bar(x + w / 2, mean, w, yerr=err, capsize=3, label="ecnlab", color="#3b6ea8")
    ax.set_xticks(x, labels, rotation=20 if max(map(len, labels), default=0) > 8 else 0)
    ax.legend(fontsize=8)
    return fig, ax


def legend_outside(ax: Any, fontsize: int = 7) -> None:
    """The legend to the right of the axes, where it covers no data (``loc="best"`` still
    covers lines when every corner holds some)."""
    ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
