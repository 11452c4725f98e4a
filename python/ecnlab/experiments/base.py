"""What an experiment is, and the helpers every experiment module uses.

An experiment (one figure or table of a paper) is a subclass of :class:`Experiment`
registered with :func:`register`. It

1. declares the ambiguous readings of its paper as :class:`ReadingAxis` values
   (``axes``): each a named parameter whose first value is the default reading;
2. declares its runs: ``runs(quick, seeds, reading)`` returns ``{run name: scenario}`` (a dict
   or a :class:`ecnlab.Scenario`) for one :class:`Reading`; :func:`for_seeds` expands
   configurations over seeds;
3. is run by the framework (runs in parallel threads: the simulator releases the GIL), every
   run written to ``DIR/runs/<experiment>-<run name>/`` in the layout of ``ecnlab run``;
4. analyses the results: ``analyze(runs, ctx)`` returns comparisons with the paper
   (:class:`Comparison`), each claim decided by the one rule of :mod:`.verdict` over per-seed
   values (:meth:`RunSet.per_seed`), and adds figures, tables and notes to its report
   section through ``ctx``.

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
from .verdict import Claim, Decision, Excluded, PerSeed, Verdict, not_comparable

__all__ = [
    "by_seed",
    "from_text",
    "ms_text",
    "rate_text",
    "Comparison",
    "Context",
    "Experiment",
    "Reading",
    "ReadingAxis",
    "RunSet",
    "Stat",
    "stall",
    "for_seeds",
    "percent_change",
    "seed_of",
    "config_of",
]


# --------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class Stat:
    """A quantity measured over several seeds: mean, min, max, and the values; ``missing``
    counts the seeds that had no value (an unfinished flow, a zero denominator), which the
    text form always states."""

    mean: float
    min: float
    max: float
    n: int
    values: tuple[float, ...] = ()
    missing: int = 0

    @classmethod
    def of(cls, values: Iterable[Any]) -> "Stat":
        given = list(values)
        v = tuple(float(x) for x in given if _is_number(x))
        missing = len(given) - len(v)
        if not v:
            return cls(math.nan, math.nan, math.nan, 0, (), missing)
        return cls(statistics.fmean(v), min(v), max(v), len(v), v, missing)

    @property
    def stdev(self) -> float:
        return statistics.stdev(self.values) if self.n > 1 else 0.0

    def map(self, f: Callable[[float], float]) -> "Stat":
        return Stat.of(f(x) for x in self.values)

    def to_json(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {"mean": num(self.mean), "min": num(self.min), "max": num(self.max), "n": self.n, "missing": self.missing, "values": list(self.values)}

    def __str__(self) -> str:
        if self.n == 0:
            return "n/a" + (f" (no value in {self.missing} seeds)" if self.missing else "")
        text = _num(self.mean) if self.n == 1 or self.min == self.max else f"{_num(self.mean)} [{_num(self.min)} – {_num(self.max)}]"
        if self.missing:
            text += f" ({self.n} of {self.n + self.missing} seeds; {self.missing} without a value)"
        return text


def _is_number(x: Any) -> bool:
    if x is None or isinstance(x, Excluded):
        return False
    try:
        return not math.isnan(float(x))
    except (TypeError, ValueError):
        return False


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
    """One published number or claim beside ours.

    ``decision`` is the verdict of the claim (:mod:`.verdict`); None for a row that only
    shows a number beside the paper's without claiming anything. ``ours`` defaults to the
    decision's per-seed effect (the paired ratio, or the values)."""

    metric: str
    paper: float | str | None
    ours: Stat | float | None
    decision: Decision | None = None
    unit: str = ""
    claim: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if self.ours is None and self.decision is not None and self.decision.effect:
            self.ours = Stat.of(self.decision.effect.values())

    @property
    def verdict(self) -> Verdict | None:
        return None if self.decision is None else self.decision.verdict

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
            "verdict": None if self.decision is None else self.decision.verdict.value,
            "decision": None if self.decision is None else self.decision.to_json(),
            "unit": self.unit,
            "claim": self.claim,
            "note": self.note,
        }


def claim(
    metric: str,
    kind: Claim,
    a: PerSeed,
    b: PerSeed | None = None,
    *,
    paper: float | str | None = None,
    unit: str = "",
    text: str = "",
    note: str = "",
    ours: Stat | None = None,
) -> Comparison:
    """A comparison whose claim ``kind`` is decided on per-seed values ``a`` (and ``b``)."""
    return Comparison(metric, paper, ours, kind.decide(a, b), unit, text, note)


def incomparable(metric: str, reason: str, *, paper: float | str | None = None, kind: Claim | None = None, unit: str = "", text: str = "", ours: Stat | None = None, note: str = "") -> Comparison:
    """A claim that cannot be compared with the paper (a scheme missing from the build, a
    quantity measured over a different run length), with the reason."""
    return Comparison(metric, paper, ours, not_comparable(kind, reason), unit, text, note)


# ---------------------------------------------------------------------- readings


@dataclass(frozen=True)
class ReadingAxis:
    """A point where a paper is ambiguous, as a named parameter: ``values[0]`` is the
    default reading (the one that follows the paper's prose and the mechanism's intent,
    ``why`` says how), the others are run beside it with ``--readings``."""

    name: str
    values: tuple[Any, ...]
    why: str = ""

    @property
    def default(self) -> Any:
        return self.values[0]


class Reading(Mapping[str, Any]):
    """One value per axis. ``name`` is ``"default"`` or ``"<axis>=<value>"`` for a reading
    that changes one axis from the defaults."""

    def __init__(self, axes: Sequence[ReadingAxis], changed: Mapping[str, Any] | None = None) -> None:
        self._v = {a.name: a.default for a in axes}
        changed = dict(changed or {})
        for k, v in changed.items():
            ax = next((a for a in axes if a.name == k), None)
            if ax is None:
                raise KeyError(f"unknown reading {k!r}; readings: {', '.join(a.name for a in axes) or 'none'}")
            if v not in ax.values:
                raise ValueError(f"reading {k} = {v!r}: expected one of {', '.join(map(str, ax.values))}")
            self._v[k] = v
        diff = {k: v for k, v in changed.items() if v != next(a for a in axes if a.name == k).default}
        self.changed = diff
        self.name = "default" if not diff else ",".join(f"{k}={v}" for k, v in diff.items())

    def __getitem__(self, k: str) -> Any:
        return self._v[k]

    def __getattr__(self, k: str) -> Any:
        try:
            return self.__dict__["_v"][k]
        except KeyError:
            raise AttributeError(k) from None

    def __iter__(self):
        return iter(self._v)

    def __len__(self) -> int:
        return len(self._v)

    def __repr__(self) -> str:
        return f"Reading({self.name})"

    @staticmethod
    def choose(axes: Sequence[ReadingAxis], which: str | None) -> list["Reading"]:
        """The readings ``--readings`` names: ``default`` (or None), ``all`` (the default and
        every other value of each axis, one axis at a time), or a comma list of
        ``axis=value``."""
        if which in (None, "", "default"):
            return [Reading(axes)]
        if which == "all":
            out = [Reading(axes)]
            for a in axes:
                out += [Reading(axes, {a.name: v}) for v in a.values[1:]]
            return out
        out = [Reading(axes)]
        for item in which.split(","):
            k, sep, v = item.strip().partition("=")
            if not sep:
                raise ValueError(f"--readings: {item!r} is not axis=value (or 'all', 'default')")
            ax = next((a for a in axes if a.name == k), None)
            if ax is None:
                raise KeyError(f"unknown reading {k!r}; readings: {', '.join(a.name for a in axes) or 'none'}")
            value = next((x for x in ax.values if str(x) == v), None)
            if value is None:
                raise ValueError(f"reading {k} = {v!r}: expected one of {', '.join(map(str, ax.values))}")
            r = Reading(axes, {k: value})
            if r.name not in {x.name for x in out}:
                out.append(r)
        return out


# ----------------------------------------------------------------------- run sets


def for_seeds(configs: Mapping[str, Any], seeds: Sequence[int]) -> dict[str, Scenario]:
    """Expands ``{config: scenario}`` into ``{"<config>-s<seed>": scenario with that seed}``."""
    out: dict[str, Scenario] = {}
    for name, sc in configs.items():
        base = load_scenario(sc)
        for seed in seeds:
            out[f"{name}-s{seed}"] = base.with_(seed=seed)
    return out


def by_seed(configs: Mapping[str, Callable[[int], Scenario]], seeds: Sequence[int]) -> dict[str, Scenario]:
    """``{"<config>-s<seed>": scenario}``, each config building its scenario from the seed
    (experiments that draw start offsets or workloads from it)."""
    return {f"{name}-s{s}": make(s) for name, make in configs.items() for s in seeds}


def rate_text(bps: float) -> str:
    """A rate as the scenario schema writes it."""
    return f"{bps:.0f}bps"


def ms_text(ms: float) -> str:
    """A duration in milliseconds as the scenario schema writes it."""
    return f"{ms:.6g}ms"


def from_text(fig: str, text: str) -> str:
    """A paper value that is a statement of its text beside a figure."""
    return f"{text} ({fig}; read from the text)"


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

    def per_seed(self, config: str, f: Callable[[Results], Any]) -> dict[int, Any]:
        """``{seed: f(run)}`` over the seeds of ``config``, the input of a claim. ``f`` may
        return None or :class:`Excluded` (with a reason), or raise ``KeyError``,
        ``ValueError``, ``ZeroDivisionError`` or ``TypeError``: the seed is then left out of
        the claim and listed with the reason."""
        out: dict[int, Any] = {}
        for n, r in self._r.items():
            if config_of(n) != config:
                continue
            seed = seed_of(n)
            key = seed if seed is not None else 0
            try:
                out[key] = f(r)
            except (KeyError, ValueError, ZeroDivisionError, TypeError) as e:
                out[key] = Excluded(f"{type(e).__name__}: {e}")
        return out

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


# ------------------------------------------------------------------------ hosts

#: The TCP of the papers' simulators (ns-2, ns-3) has none of the Linux behaviours that are
#: ecnlab's defaults: no quick-ACK mode, no SACK compression, no TSO deferral, no
#: receive-buffer autotuning (the experiments set a fixed `rcv_buf`). Every paper experiment
#: starts its `[tcp]` table from this.
SIMULATOR_HOSTS: dict[str, Any] = {"quickack": False, "sack_compress_max": 0, "tso_defer": False, "rcv_autotune": False}


# ------------------------------------------------------------------------ stalls

#: A run is flagged as a stall when, while a bulk flow is backlogged, the flows deliver less
#: than this fraction of the bottleneck's capacity.
STALL_UTILISATION = 0.5
#: A flow of at least this size (or without a size) is "bulk".
BULK_BYTES = 1_000_000
#: The first second of a bulk flow (slow start) does not count towards a stall.
STALL_WARMUP_S = 1.0


def stall(r: Results, port: str, threshold: float = STALL_UTILISATION) -> dict[str, Any] | None:
    """Whether the run stalled: the bytes the flows delivered while a bulk flow was
    backlogged (from its start + ``STALL_WARMUP_S`` until it finished or the run ended),
    over what ``port`` could have carried then, is below ``threshold``. Returns the
    measured figures when it did, None when it did not (or when the run has no bulk flow or
    no sampled flow rates and the port's own busy fraction over the run is above it)."""
    f = r.flows
    dur = float(r.meta["duration_s"])
    try:
        cap = float(r.port(port)["rate_bps"])
    except KeyError:
        return None
    if f.height == 0 or not cap:
        return None
    bulk = f.filter(pl.col("size_bytes").is_null() | (pl.col("size_bytes") >= BULK_BYTES))
    if bulk.height == 0:
        return None
    t0 = min(bulk["start_s"].to_list()) + STALL_WARMUP_S
    ends = [dur if fct is None else s + fct for s, fct in zip(bulk["start_s"].to_list(), bulk["fct_s"].to_list())]
    t1 = max(ends)
    if t1 - t0 <= STALL_WARMUP_S:
        return None
    rate = r.timeseries.filter(pl.col("kind") == "delivery_bps")
    if rate.height:
        times = sorted(set(rate["time_s"].to_list()))
        interval = (times[1] - times[0]) if len(times) > 1 else dur
        inside = rate.filter((pl.col("time_s") > t0) & (pl.col("time_s") <= t1))
        delivered_bits = float(inside["value"].sum()) * interval
        util = delivered_bits / (cap * (t1 - t0))
        how = "flows' delivery rate samples"
    else:
        util = float(r.port(port)["utilization"])
        how = "bottleneck busy fraction over the run"
    if util >= threshold:
        return None
    return {"port": port, "utilisation": util, "from_s": t0, "to_s": t1, "threshold": threshold, "measured_by": how}


# ------------------------------------------------------------------- experiments


@dataclass
class Context:
    """What ``analyze`` gets besides the results: whether the runs were quick, the seeds,
    the reading the runs were made under, and the report section to add figures, tables and
    notes to (``draw`` is False when the analysis is made for the verdicts of another
    reading only: figures are then not rendered)."""

    quick: bool
    seeds: list[int]
    doc: Html
    experiment: str
    fig_prefix: str = ""
    figures: list[Path] = field(default_factory=list)
    reading: Reading = field(default_factory=lambda: Reading(()))
    draw: bool = True

    def figure(self, fig, name: str, caption: str = "") -> None:
        if not self.draw:
            import matplotlib.pyplot as plt

            plt.close(fig)
            return
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
    #: The paper's ambiguous readings this experiment's runs or analysis depend on.
    axes: tuple[ReadingAxis, ...] = ()

    def runs(self, quick: bool, seeds: list[int], reading: Reading) -> Mapping[str, Any]:
        raise NotImplementedError

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        raise NotImplementedError

    def bottleneck(self, run_name: str) -> str | None:
        """The port whose utilisation decides whether a run stalled (None: not checked)."""
        return None

    def seeds(self, quick: bool, n: int | None = None) -> list[int]:
        count = n if n is not None else (self.quick_seeds if quick else self.full_seeds)
        return list(range(1, count + 1))
