"""What an experiment is, and the helpers every experiment module uses.

An experiment (one figure or table of a paper) is a subclass of :class:`Experiment`
registered with :func:`register`. It

1. declares its runs: ``runs(quick, seeds)`` returns ``{run name: scenario}`` (a dict or a
   :class:`ecnlab.Scenario`); :func:`for_seeds` expands configurations over seeds;
2. is run by the framework (runs in parallel threads: the simulator releases the GIL), every
   run written to ``DIR/runs/<experiment>-<run name>/`` in the layout of ``ecnlab run``;
3. analyses the results: ``analyze(runs, ctx)`` returns comparisons with the paper's
   numbers (:class:`Comparison`, ours aggregated over seeds as a :class:`Stat`), and adds
   figures, tables and notes to its report section through ``ctx``.

Nothing in a report is typed in by hand except the paper's published values, which each
comparison names as ``paper``.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import polars as pl

from ..report import Html
from ..results import Results
from ..scenario import Scenario, load_scenario

__all__ = [
    "Comparison",
    "Context",
    "Experiment",
    "RunSet",
    "Stat",
    "for_seeds",
    "percent_change",
    "seed_of",
    "config_of",
]


# --------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class Stat:
    """A quantity measured over several seeds: mean, min, max, and the values."""

    mean: float
    min: float
    max: float
    n: int
    values: tuple[float, ...] = ()

    @classmethod
    def of(cls, values: Iterable[float | None]) -> "Stat":
        v = tuple(float(x) for x in values if x is not None and not math.isnan(float(x)))
        if not v:
            return cls(math.nan, math.nan, math.nan, 0, ())
        return cls(statistics.fmean(v), min(v), max(v), len(v), v)

    @property
    def stdev(self) -> float:
        return statistics.stdev(self.values) if self.n > 1 else 0.0

    def map(self, f: Callable[[float], float]) -> "Stat":
        return Stat.of(f(x) for x in self.values)

    def to_json(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {"mean": num(self.mean), "min": num(self.min), "max": num(self.max), "n": self.n, "values": list(self.values)}

    def __str__(self) -> str:
        if self.n == 0:
            return "n/a"
        if self.n == 1 or self.min == self.max:
            return _num(self.mean)
        return f"{_num(self.mean)} [{_num(self.min)} – {_num(self.max)}]"


def _num(x: float) -> str:
    if x == 0 or math.isnan(x):
        return f"{x:g}"
    a = abs(x)
    if a >= 1e5 or a < 1e-3:
        return f"{x:.3g}"
    if a >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


def percent_change(new: float, base: float) -> float:
    """(new − base) / base in percent (−70 means "70 % less")."""
    return (new - base) / base * 100.0 if base else math.nan


@dataclass
class Comparison:
    """One published number beside ours. ``direction_holds`` says whether our result
    agrees with the paper's claim (e.g. "fewer drops than ECN"); None when the claim has no
    direction to check."""

    metric: str
    paper: float | str | None
    ours: Stat | float | None
    direction_holds: bool | None
    unit: str = ""
    claim: str = ""
    note: str = ""

    def ours_stat(self) -> Stat | None:
        if self.ours is None:
            return None
        return self.ours if isinstance(self.ours, Stat) else Stat.of([self.ours])

    def to_json(self) -> dict[str, Any]:
        s = self.ours_stat()
        return {
            "metric": self.metric,
            "paper": self.paper,
            "ours": None if s is None else s.to_json(),
            "direction_holds": self.direction_holds,
            "unit": self.unit,
            "claim": self.claim,
            "note": self.note,
        }


# ----------------------------------------------------------------------- run sets


def for_seeds(configs: Mapping[str, Any], seeds: Sequence[int]) -> dict[str, Scenario]:
    """Expands ``{config: scenario}`` into ``{"<config>-s<seed>": scenario with that seed}``."""
    out: dict[str, Scenario] = {}
    for name, sc in configs.items():
        base = load_scenario(sc)
        for seed in seeds:
            out[f"{name}-s{seed}"] = base.with_(seed=seed)
    return out


def seed_of(run_name: str) -> int | None:
    head, sep, tail = run_name.rpartition("-s")
    return int(tail) if sep and tail.isdigit() else None


def config_of(run_name: str) -> str:
    head, sep, tail = run_name.rpartition("-s")
    return head if sep and tail.isdigit() else run_name


class RunSet(Mapping[str, Results]):
    """The results of an experiment's runs, by run name, with helpers that gather them."""

    def __init__(self, results: Mapping[str, Results]) -> None:
        self._r = dict(results)

    def __getitem__(self, name: str) -> Results:
        return self._r[name]

    def __iter__(self):
        return iter(self._r)

    def __len__(self) -> int:
        return len(self._r)

    def configs(self) -> list[str]:
        """Configuration names in declaration order, seeds folded."""
        seen: dict[str, None] = {}
        for n in self._r:
            seen.setdefault(config_of(n), None)
        return list(seen)

    def over_seeds(self, config: str) -> list[Results]:
        """Every run of one configuration (one per seed)."""
        return [r for n, r in self._r.items() if config_of(n) == config]

    def stat(self, config: str, f: Callable[[Results], float | None]) -> Stat:
        """``f`` applied to each seed's run of ``config``, aggregated."""
        return Stat.of(f(r) for r in self.over_seeds(config))

    def table(self, name: str) -> pl.DataFrame:
        """One result table (``flows``, ``ports`` or ``timeseries``) of every run,
        concatenated, with columns ``run``, ``config`` and ``seed`` in front."""
        frames = []
        for run_name, r in self._r.items():
            df = getattr(r, name)
            frames.append(
                df.with_columns(
                    pl.lit(run_name).alias("run"),
                    pl.lit(config_of(run_name)).alias("config"),
                    pl.lit(seed_of(run_name), dtype=pl.Int64).alias("seed"),
                ).select("run", "config", "seed", *df.columns)
            )
        return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


# ------------------------------------------------------------------- experiments


@dataclass
class Context:
    """What ``analyze`` gets besides the results: whether the runs were quick, the seeds,
    and the report section to add figures, tables and notes to."""

    quick: bool
    seeds: list[int]
    doc: Html
    experiment: str
    fig_prefix: str = ""
    figures: list[Path] = field(default_factory=list)

    def figure(self, fig, name: str, caption: str = "") -> None:
        p = self.doc.figure(fig, f"{self.fig_prefix}{name}", caption)
        if p is not None:
            self.figures.append(p)

    def table(self, df: pl.DataFrame, caption: str = "", columns: Sequence[str] | None = None) -> None:
        self.doc.table(df, columns=columns, caption=caption)

    def note(self, text: str) -> None:
        self.doc.p(text, "note")


class Experiment:
    """Subclass, set the class attributes, implement ``runs`` and ``analyze``, and decorate
    with :func:`ecnlab.experiments.register`."""

    #: Registered name, ``<paper>.<experiment>`` (e.g. ``eecn.table4``).
    name: str = ""
    #: One line for ``ecnlab reproduce --list`` and the report heading.
    title: str = ""
    #: Where the paper's numbers come from (paper, figure or table).
    source: str = ""
    #: What is run and compared, for the report.
    description: str = ""
    #: Seeds per configuration in the quick and the full form.
    quick_seeds: int = 2
    full_seeds: int = 5

    def runs(self, quick: bool, seeds: list[int]) -> Mapping[str, Any]:
        raise NotImplementedError

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        raise NotImplementedError

    def seeds(self, quick: bool, n: int | None = None) -> list[int]:
        count = n if n is not None else (self.quick_seeds if quick else self.full_seeds)
        return list(range(1, count + 1))
