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

Besides, every experiment declares

- its bottleneck: ``bottleneck(run_name)`` names the port(s) a stall is measured against, or
  ``no_bottleneck`` says why no link can be checked (neither is an error). A claim decided on
  a stalled run (its average below ``STALL_UTILISATION``, or an outage within the span the
  claim measures, ``per_seed(..., window=)``) is inconclusive unless made with
  ``about_stall=True``; starved flows flag it;
- where each parameter comes from: ``provenance(quick, reading)`` returns :class:`Source`
  values (``paper``, ``default``, ``assumption``) and ``hosts`` names the host profile
  (:data:`NS2_HOSTS`, :data:`NS3_HOSTS`, :data:`LINUX_HOSTS`) that covers the ``[tcp]`` keys it
  does not change; the framework joins them with every run's fully-defaulted scenario and
  lists the keys without a source;
- what each reading changes: a :class:`ReadingAxis` changes runs (``affects="runs"``, every
  other value must change a run) or only the analysis (``affects="analysis"``, every other
  value must change a comparison);
- per claim (:func:`claim`): the rival b is measured on (``rival``; those in
  :data:`RECONSTRUCTED_RIVALS` are counted apart), the family of claims over one axis it
  belongs to (``family``, decided also with Holm's correction and counted once) and, where
  the statement tested is ours rather than the paper's, why (``our_statement``, counted
  apart).

Nothing in a report is typed in by hand except the paper's published values, which each
comparison names as ``paper``.
"""

from __future__ import annotations

import copy
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import polars as pl

from ..errors import OutputError, ScenarioError
from ..report import Html
from ..results import Results
from ..scenario import Scenario, load_scenario
from ._provenance import (
    LINUX_HOSTS,
    NS2_HOSTS,
    NS3_HOSTS,
    HostProfile,
    Source,
    assumption,
    default,
    hosts_tcp,
    newreno_params,
    newreno_sources,
    paper,
)
from .verdict import Claim, Decision, Excluded, PerSeed, Verdict, can_fail, constant_flag, json_number, not_comparable

__all__ = [
    "LINUX_HOSTS",
    "NS2_HOSTS",
    "NS2_NEWRENO",
    "newreno_params",
    "newreno_sources",
    "NS3_HOSTS",
    "RECONSTRUCTED_RIVALS",
    "HostProfile",
    "SeedValues",
    "Source",
    "assumption",
    "claim",
    "default",
    "hosts_tcp",
    "paper",
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
    "outages",
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
    #: What an infinite value means here ("never", "none within the sweep"), as the text says it.
    infinite: str = "∞"

    @classmethod
    def of(cls, values: Iterable[Any], infinite: str = "∞") -> "Stat":
        given = list(values)
        v = tuple(float(x) for x in given if _is_number(x))
        missing = len(given) - len(v)
        if not v:
            return cls(math.nan, math.nan, math.nan, 0, (), missing, infinite)
        return cls(statistics.fmean(v), min(v), max(v), len(v), v, missing, infinite)

    @property
    def stdev(self) -> float:
        return statistics.stdev(self.values) if self.n > 1 else 0.0

    def map(self, f: Callable[[float], float]) -> "Stat":
        return Stat.of((f(x) for x in self.values), self.infinite)

    def to_json(self) -> dict[str, Any]:
        num = json_number
        out = {"mean": num(self.mean), "min": num(self.min), "max": num(self.max), "n": self.n, "missing": self.missing, "values": [num(v) for v in self.values]}
        if self.infinite != "∞":
            out["infinite"] = self.infinite
        return out

    def __str__(self) -> str:
        return self.text()

    def text(self, infinite: str | None = None) -> str:
        """Mean [min – max] with as many digits as tell its values apart (Jain's index at 0.9991
        and 0.9996 is not "1 [1 – 1]"); infinite values (a state never reached) are counted
        apart, named by ``infinite`` (e.g. "never"), and the finite ones summarised."""
        if self.n == 0:
            return "n/a" + (f" (no value in {self.missing} seeds)" if self.missing else "")
        infinite = self.infinite if infinite is None else infinite
        finite = [v for v in self.values if not math.isinf(v)]
        inf = [v for v in self.values if math.isinf(v)]
        seeds = self.n + self.missing
        if inf:
            sign = "" if all(v > 0 for v in inf) else ("−" if all(v < 0 for v in inf) else "±")
            said = infinite if infinite != "∞" else f"{sign}∞"
            text = f"{said} in {'all ' if len(inf) == seeds else ''}{len(inf)} of {seeds} seeds"
            if finite:
                text = f"{_spread_text(finite)} in the other {len(finite)}; " + text
        else:
            text = _spread_text(finite)
        if self.missing:
            text += f" ({self.n} of {seeds} seeds; {self.missing} without a value)"
        return text


def _spread_text(values: Sequence[float]) -> str:
    """Mean [min – max] of finite values, with the fewest significant digits (at least 3, at
    most 6) at which values that differ also print differently."""
    mean, lo, hi = statistics.fmean(values), min(values), max(values)
    if lo == hi:
        return _num(mean)
    for digits in range(3, 7):
        texts = [_num(mean, digits), _num(lo, digits), _num(hi, digits)]
        if texts[1] != texts[2] and (mean in (lo, hi) or texts[0] not in (texts[1], texts[2])):
            break
    return f"{texts[0]} [{texts[1]} – {texts[2]}]"


def _is_number(x: Any) -> bool:
    if x is None or isinstance(x, Excluded):
        return False
    try:
        return not math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def _num(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, in fixed point from 0.001 to 1e5 (integers whole)
    without trailing zeros."""
    if x == 0 or math.isnan(x) or math.isinf(x):
        return f"{x:g}"
    a = abs(x)
    if a >= 1e5 or a < 1e-3:
        return f"{x:.{digits}g}"
    decimals = max(0, digits - (math.floor(math.log10(a)) + 1))
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def percent_change(new: float, base: float) -> float:
    """(new − base) / base in percent (−70 means "70 % less")."""
    return (new - base) / base * 100.0 if base else math.nan


#: Rivals built without their own paper: the comparisons against them rest on our
#: reconstruction, carry ``"rival_reconstructed": true`` and are counted apart in the headline
#: (``verdicts_vs_reconstructed``).
RECONSTRUCTED_RIVALS: dict[str, str] = {
    "mlcp": "reconstructed from its abstract and HFCC's description: κ, the decrease factors and the load boundaries are ours",
    "bmcc": "reconstructed from its abstract and HFCC's description: the load boundaries and the decrease factors are ours",
    "clean": "reconstructed from one line of the APCC paper",
}


class SeedValues(dict):
    """Per-seed values of one configuration (what :meth:`RunSet.per_seed` returns): a dict
    ``{seed: value}`` that also knows the configuration it was measured on, the seeds whose
    run stalled (``stalled``: seed → what the stall rule measured), the seeds with starved
    flows (``starved``: seed → flow names) and how stalls were checked (``stall_check``: ""
    when the experiment's bottleneck was checked, else why not). A claim over it is flagged
    by these; a plain dict carries none of them, and the comparison says its stalls were not
    checked."""

    def __init__(
        self,
        values: Mapping[int, Any] = (),
        *,
        config: str = "",
        stalled: Mapping[int, str] | None = None,
        starved: Mapping[int, Sequence[str]] | None = None,
        stall_check: str = "",
        run_keys: Mapping[int, str] | None = None,
        measures: str = "",
        starvation_unchecked: Mapping[int, str] | None = None,
        outages: Mapping[int, str] | None = None,
        outages_unchecked: Mapping[int, str] | None = None,
    ) -> None:
        super().__init__(values)
        self.config = config
        #: What the values measure, where arms of one claim could measure it differently (a
        #: scheme's congestion marks against another's load codes): two arms declaring
        #: different quantities are not comparable. "" when not declared.
        self.measures = measures
        self.stalled = dict(stalled or {})
        self.starved = {k: list(v) for k, v in (starved or {}).items()}
        #: Per seed: why its run's flows could not be checked for starvation (a recorded
        #: scenario the build cannot rebuild).
        self.starvation_unchecked = dict(starvation_unchecked or {})
        #: Per seed: the outages (:func:`outages`) in the span the values measure. They flag
        #: the claim and never decide it: a port's departures are not recorded, so a silence
        #: with its queue sampled empty may still be a link sending while the receivers wait.
        self.outages = dict(outages or {})
        #: Per seed: why its run's outages could not be checked (no delivery samples, no queue
        #: samples of the port, no bulk flow): "no outage" is not said of it.
        self.outages_unchecked = dict(outages_unchecked or {})
        self.stall_check = stall_check
        #: Per seed: what identifies the run (its scenario without the name).
        self.run_keys = dict(run_keys or {})

    def derive(self, values: Mapping[int, Any], measures: str | None = None) -> "SeedValues":
        """New values over the same runs (a transform of these), keeping what is known about
        the runs (and what they measure, unless ``measures`` says anew)."""
        return SeedValues(values, config=self.config, stalled=self.stalled, starved=self.starved, stall_check=self.stall_check, run_keys=self.run_keys, measures=self.measures if measures is None else measures, starvation_unchecked=self.starvation_unchecked, outages=self.outages, outages_unchecked=self.outages_unchecked)

    @staticmethod
    def join(parts: Sequence["SeedValues"], g: Callable[[list[Any]], Any], config: str = "") -> "SeedValues":
        """Per seed, ``g`` of the seed's values in every part (configurations of one seed
        folded into one value: the largest error over the loads, the drops over every load),
        knowing every part's runs: a seed is stalled or starved when it is in any part; a seed
        missing a value in any part has none."""
        import hashlib

        seeds = sorted(set().union(*parts)) if parts else []
        values: dict[int, Any] = {}
        stalled: dict[int, str] = {}
        starved: dict[int, list[str]] = {}
        unchecked: dict[int, str] = {}
        quiet: dict[int, str] = {}
        blind: dict[int, str] = {}
        run_keys: dict[int, str] = {}
        for s in seeds:
            xs = [p.get(s) for p in parts]
            missing = [f"{p.config or 'a part'}: {x.reason if isinstance(x, Excluded) else 'no value'}" for p, x in zip(parts, xs) if x is None or isinstance(x, Excluded) or not _is_number(x)]
            values[s] = Excluded("; ".join(missing)) if missing else g(xs)
            st = [f"{p.config}: {p.stalled[s]}" for p in parts if s in p.stalled]
            if st:
                stalled[s] = "; ".join(st)
            sv = [f for p in parts for f in p.starved.get(s, [])]
            if sv:
                starved[s] = sv
            why = [f"{p.config}: {p.starvation_unchecked[s]}" for p in parts if s in p.starvation_unchecked]
            if why:
                unchecked[s] = "; ".join(why)
            out = [f"{p.config}: {p.outages[s]}" for p in parts if s in p.outages]
            if out:
                quiet[s] = "; ".join(out)
            no = [f"{p.config}: {p.outages_unchecked[s]}" for p in parts if s in p.outages_unchecked]
            if no:
                blind[s] = "; ".join(no)
            keys = [p.run_keys.get(s) for p in parts]
            if all(keys):
                run_keys[s] = hashlib.sha1("".join(keys).encode()).hexdigest()  # type: ignore[arg-type]
        checks = [p.stall_check for p in parts if p.stall_check]
        measures = {p.measures for p in parts}
        return SeedValues(values, config=config or "+".join(p.config for p in parts), stalled=stalled, starved=starved, stall_check=checks[0] if checks else "", run_keys=run_keys, measures=measures.pop() if len(measures) == 1 else "", starvation_unchecked=unchecked, outages=quiet, outages_unchecked=blind)


def _same_runs(a: PerSeed, b: PerSeed | None, used: set[int]) -> bool:
    """Whether two arms of different configurations were measured on the very same runs (the
    same scenario in every seed): such a claim compares a run with itself."""
    if not (isinstance(a, SeedValues) and isinstance(b, SeedValues)) or a.config == b.config or not used:
        return False
    return all(s in a.run_keys and a.run_keys.get(s) == b.run_keys.get(s) for s in used)


def seeds_text(seeds: Iterable[int]) -> str:
    """"seed 4", "seeds 1–10", "seeds 1–3, 5"."""
    xs = sorted(set(seeds))
    runs: list[list[int]] = []
    for x in xs:
        if runs and x == runs[-1][-1] + 1:
            runs[-1].append(x)
        else:
            runs.append([x])
    parts = [f"{r[0]}–{r[-1]}" if len(r) > 2 else ", ".join(str(x) for x in r) for r in runs]
    return ("seeds " if len(xs) > 1 else "seed ") + ", ".join(parts)


def _by_reason(where: str, why: Mapping[int, str], used: set[int]) -> list[str]:
    """One phrase per reason, with the seeds it holds for: "b (vcp): no queue samples of
    r1->r2 (seeds 1–10)"."""
    seeds: dict[str, list[int]] = {}
    for s in sorted(why):
        if s in used:
            seeds.setdefault(why[s], []).append(s)
    return [f"{where}: {reason} ({seeds_text(ss)})" for reason, ss in seeds.items()]


def _arm_flags(arm: str, values: PerSeed | None, used: set[int]) -> tuple[list[str], list[str], str | None, list[str], list[str], list[str]]:
    """(stall flags, starvation flags, why stalls were not checked, seeds whose starvation
    was not checked and why, outages in the measured span, why outages were not checked and
    in which seeds) of one arm."""
    if values is None:
        return [], [], None, [], [], []
    if not isinstance(values, SeedValues):
        return [], [], f"{arm}: the per-seed values were not taken by RunSet.per_seed", [], [], []
    where = f"{arm} ({values.config})" if values.config else arm
    stalls = [f"{where} seed {s}: {values.stalled[s]}" for s in sorted(values.stalled) if s in used]
    starved = [f"{where} seed {s}: {', '.join(values.starved[s])}" for s in sorted(values.starved) if s in used]
    unchecked = [f"{where} seed {s}: {values.starvation_unchecked[s]}" for s in sorted(values.starvation_unchecked) if s in used]
    quiet = [f"{where} seed {s}: {values.outages[s]}" for s in sorted(values.outages) if s in used]
    return stalls, starved, (values.stall_check or None), unchecked, quiet, _by_reason(where, values.outages_unchecked, used)


def measured(values: PerSeed | None) -> str:
    """What an arm's values measure, as declared (:attr:`SeedValues.measures`), "" if not."""
    return getattr(values, "measures", "") or ""


def _measured_differently(a: PerSeed, b: PerSeed | None) -> str | None:
    """Why two arms are not the same quantity (each declares what it measures and they
    differ), None when they are or when either does not say."""
    ma, mb = measured(a), measured(b)
    if b is None or not ma or not mb or ma == mb:
        return None
    return f"a and b measure different quantities: a ({getattr(a, 'config', '') or 'a'}) counts {ma}, b ({getattr(b, 'config', '') or 'b'}) counts {mb}"


def flag_decision(d: Decision, a: PerSeed, b: PerSeed | None, about_stall: bool = False) -> tuple[Decision, list[str]]:
    """The decision with the stalls, starved flows and outages of the runs it was decided on: a
    claim decided on a stalled run is inconclusive ("decided on stalled runs: …") unless it is
    about the stall; starved flows and outages in the measured span are flagged. Returns the decision and why stalls were not
    checked (per arm), if they were not."""
    from dataclasses import replace

    used = set(d.effect) | {s for s in (a or {}) if s not in dict(d.excluded)}
    differ = _measured_differently(a, b)
    if differ is not None:
        return replace(d, verdict=Verdict.NOT_COMPARABLE, reason=differ, flags=d.flags + (differ,), unflagged=d.verdict), []
    if _same_runs(a, b, used):
        reason = f"a ({a.config}) and b ({b.config}) are the same runs (identical scenarios in every seed): the claim compares a run with itself"  # type: ignore[union-attr]
        return replace(d, verdict=Verdict.NOT_COMPARABLE, reason=reason, flags=d.flags + (reason,), unflagged=d.verdict), []
    stalls, starved, unchecked, not_checked, quiet, blind = [], [], [], [], [], []
    for arm, v in (("a", a), ("b", b)):
        st, sv, why, nc, q, bl = _arm_flags(arm, v, used)
        stalls += st
        starved += sv
        not_checked += nc
        quiet += q
        blind += bl
        if why and why not in unchecked:
            unchecked.append(why)
    flags = []
    if stalls and not about_stall:
        flags.append("decided on stalled runs: " + "; ".join(stalls))
    if starved:
        flags.append("starved flows: " + "; ".join(starved))
    if not_checked:
        flags.append("starvation not checked: " + "; ".join(not_checked))
    if quiet:
        flags.append("outages in the measured span (the flows delivered next to nothing while the port's sampled queue was empty; its departures are not recorded, so this may be a link sending while receivers wait behind a loss: a flag, not a stall): " + "; ".join(quiet))
    if blind:
        flags.append("outages not checked: " + "; ".join(blind))
    if not flags:
        return d, unchecked
    if stalls and not about_stall and d.verdict in (Verdict.HOLDS, Verdict.CONTRADICTED):
        reason = f"decided on stalled runs ({len(stalls)}); the runs alone say {d.verdict.value}: {d.reason}"
        return replace(d, verdict=Verdict.INCONCLUSIVE, reason=reason, flags=d.flags + tuple(flags), unflagged=d.verdict), unchecked
    return replace(d, flags=d.flags + tuple(flags)), unchecked


@dataclass
class Comparison:
    """One published number or claim beside ours.

    ``decision`` is the verdict of the claim (:mod:`.verdict`); None for a row that only
    shows a number beside the paper's without claiming anything. ``ours`` defaults to the
    decision's per-seed effect (the paired ratio, or the values). Made by :func:`claim`, it
    also keeps the claim (``kind``), the per-seed values of its arms (``a``, ``b``), the rival
    b is measured on (``rival``), the family it is decided in (``family``), whether the
    claim is about a stall (``about_stall``) and why its statement is ours, not the paper's
    (``our_statement``)."""

    metric: str
    paper: float | str | None
    ours: Stat | float | None
    decision: Decision | None = None
    unit: str = ""
    claim: str = ""
    note: str = ""
    kind: Claim | None = None
    a: PerSeed | None = None
    b: PerSeed | None = None
    rival: str | None = None
    family: str | None = None
    about_stall: bool = False
    stall_unchecked: tuple[str, ...] = ()
    #: Whether the claim comes out contradicted on values built to contradict it
    #: (:func:`.verdict.can_fail`), and how.
    can_fail: tuple[bool, str] | None = None
    #: Why the statement this claim tests is ours and not the paper's (a statement the paper
    #: does not make, or a bound or comparison we chose); None for the paper's own.
    our_statement: str | None = None
    #: The family's verdict as the one claim it makes, with the reason
    #: (:func:`.verdict.family_whole`; set when the framework decides the families).
    family_whole: tuple[Verdict, str] | None = None

    def __post_init__(self) -> None:
        if self.ours is None and self.decision is not None and self.decision.effect:
            self.ours = Stat.of(self.decision.effect.values())

    @property
    def verdict(self) -> Verdict | None:
        return None if self.decision is None else self.decision.verdict

    @property
    def tests(self) -> str:
        if self.kind is not None:
            return self.kind.tests
        return self.decision.tests if self.decision is not None else ""

    @property
    def fixed(self) -> str | None:
        """Why the mechanism fixes this claim's outcome, where declared (:func:`claim`)."""
        return None if self.decision is None else self.decision.fixed

    @property
    def rival_reconstructed(self) -> bool:
        return self.rival is not None and self.rival.lower() in RECONSTRUCTED_RIVALS

    def ours_stat(self) -> Stat | None:
        if self.ours is None:
            return None
        return self.ours if isinstance(self.ours, Stat) else Stat.of([self.ours])

    def to_json(self) -> dict[str, Any]:
        s = self.ours_stat()

        def values(v: PerSeed | None) -> dict[str, Any] | None:
            if v is None:
                return None
            return {str(k): (None if x is None or isinstance(x, Excluded) else json_number(float(x))) for k, x in sorted(v.items())}

        arms = {arm: v.config for arm, v in (("a", self.a), ("b", self.b)) if isinstance(v, SeedValues) and v.config}
        measures = {arm: measured(v) for arm, v in (("a", self.a), ("b", self.b)) if measured(v)}
        return {
            "metric": self.metric,
            "paper": json_number(self.paper) if isinstance(self.paper, float) else self.paper,
            "ours": None if s is None else s.to_json(),
            "verdict": None if self.decision is None else self.decision.verdict.value,
            "counted": None if self.decision is None else self.decision.counted.value,
            "tests": self.tests,
            "decision": None if self.decision is None else self.decision.to_json(),
            "kind": None if self.kind is None else self.kind.to_json(),
            "unit": self.unit,
            "claim": self.claim,
            "note": self.note,
            "rival": self.rival,
            "rival_reconstructed": self.rival_reconstructed,
            "family": self.family,
            "our_statement": self.our_statement,
            "family_whole": None if self.family_whole is None else {"verdict": self.family_whole[0].value, "reason": self.family_whole[1]},
            "about_stall": self.about_stall,
            "arms": arms,
            "measures": measures or None,
            "per_seed": {"a": values(self.a), "b": values(self.b)} if self.kind is not None else None,
            "stall_check": "; ".join(self.stall_unchecked) if self.stall_unchecked else ("checked" if self.kind is not None else None),
            "can_fail": None if self.can_fail is None else {"ok": self.can_fail[0], "how": self.can_fail[1]},
            "fixed": self.fixed,
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
    rival: str | None = None,
    family: str | None = None,
    about_stall: bool = False,
    measures: tuple[str, str] | None = None,
    fixed: str | None = None,
    our_statement: str | None = None,
) -> Comparison:
    """A comparison whose claim ``kind`` is decided on per-seed values ``a`` (and ``b``).

    ``measures``: what each arm's values count, where one metric counts different things in
    different arms (``("congestion marks (CE)", "load codes")``); it overrides what the
    arms' :class:`SeedValues` declare. Two arms that declare different quantities are not
    comparable, whatever the runs say.

    ``rival``: the scheme ``b`` is measured on when it is a rival (those in
    :data:`RECONSTRUCTED_RIVALS` are counted apart); ``family``: the name of the family of
    claims over one axis this one belongs to (decided also with Holm's correction);
    ``about_stall``: the claim is about a stall, so stalled runs decide it. A seed whose run
    stalled (the experiment's ``bottleneck()``, :func:`stall`) makes the claim inconclusive
    otherwise; starved flows are flagged.

    ``fixed``: why the mechanism under test fixes the claim's outcome (in the paper's or the
    mechanism's terms; pass it under the readings whose mechanism does, None elsewhere): no run
    of that mechanism can come out otherwise (EECN's marker that drops only a full buffer
    against ECN's RED drops), so the claim is no finding. It is decided like any other, shown
    as "fixed by the mechanism" with what the runs say, and counted apart in the headline
    (``verdicts_fixed_by_mechanism``, by what the runs say). An arm that takes one value in
    every seed is stated in the row whether declared or not (:attr:`.verdict.Decision.constant`);
    a claim decided on arms that all do is flagged (:func:`.verdict.constant_flag`).

    ``our_statement``: why the statement the claim tests is ours, not the paper's (the paper
    does not make it, or the bound or comparison is ours: "the paper gives no value; 90 % is
    ours"). Such a claim is decided like any other, marked in its row and counted apart in the
    headline (``verdicts_our_statements``). Not to be confused with ``ours``, the statistic
    the row shows. The line between the two: a claim is ours when we supply one side of the
    comparison the paper does not name — a comparison it does not make, a rival it does not
    compare with, a reference level or a second, stricter bound beside the one that tests its
    statement. How a stated comparison is measured stays the paper's claim and is declared
    where it is chosen: a tolerance on a size the paper gives ("close to", "similar", each
    paper's tolerance constant), the threshold that defines an event the paper times (HFCC's
    ``fig1_level``), the one bound, a named constant of its module, at which a qualitative
    statement of the paper is tested ("a low queue": UNO's ``LOW_QUEUE``; the row says "the
    bound ours"), a window (a reading or a named constant)."""
    _check_our_statement(metric, our_statement, paper, text)
    if fixed is not None and not (isinstance(fixed, str) and fixed.strip()):
        raise ValueError(f"{metric}: fixed takes the reason the mechanism fixes the claim's outcome (a sentence), got {fixed!r}")
    if measures is not None:
        if not (isinstance(a, SeedValues) and isinstance(b, SeedValues)):
            raise TypeError(f"{metric}: measures= declares what each arm of RunSet.per_seed's values counts; pass SeedValues")
        a, b = a.derive(a, measures=measures[0]), b.derive(b, measures=measures[1])
    from dataclasses import replace

    d, unchecked = flag_decision(kind.decide(a, b), a, b, about_stall)
    fails = can_fail(kind, a, b)
    if fixed is not None:
        d = fix(d, fixed)
    else:
        const = constant_flag(d)
        if const:
            d = replace(d, flags=d.flags + (const,))
        if not fails[0]:
            d = replace(d, flags=d.flags + (f"cannot come out contradicted ({fails[1]})",))
    return Comparison(metric, paper, ours, d, unit, text, note, kind=kind, a=a, b=b, rival=rival, family=family, about_stall=about_stall, stall_unchecked=tuple(unchecked), can_fail=fails, our_statement=our_statement)


#: How a claim's source or text says the statement is not the paper's: "not in the paper",
#: "not from the paper", "our comparison", "our expectation".
_OURS_WORDING = re.compile(r"\bnot (in|from) the paper|\bour (comparison|expectation)", re.IGNORECASE)


def _check_our_statement(metric: str, why: str | None, paper: Any = None, text: str = "") -> None:
    if why is not None and not (isinstance(why, str) and why.strip()):
        raise ValueError(f"{metric}: our_statement takes the reason the statement is ours, not the paper's (a sentence), got {why!r}")
    # A claim whose source or text says the paper does not make it is ours: counted apart,
    # never in the paper's headline.
    if why is None:
        for what, words in (("source", paper), ("text", text)):
            if _OURS_WORDING.search(str(words or "")):
                raise ValueError(f"{metric}: its {what} says it is not the paper's ({words!r}): say why with our_statement")


def fix(d: Decision, why: str) -> Decision:
    """The decision of a claim the mechanism fixes (:func:`claim`'s ``fixed``): its verdict
    "fixed by the mechanism", the runs' verdict kept in ``unflagged`` and stated in the reason.
    A declaration the runs do not bear out (with two seeds or more, no arm took one value in
    every seed) is flagged."""
    from dataclasses import replace

    flags = d.flags
    if d.n >= 2 and not d.constant and d.verdict is not Verdict.NOT_COMPARABLE:
        flags += ("declared fixed by the mechanism, but no arm takes one value in every seed: check the declaration",)
    reason = f"fixed by the mechanism: {why}; the runs say {d.verdict.value}: {d.reason}"
    return replace(d, verdict=Verdict.FIXED, reason=reason, unflagged=d.verdict, fixed=why, flags=flags)


def incomparable(metric: str, reason: str, *, paper: float | str | None = None, kind: Claim | None = None, unit: str = "", text: str = "", ours: Stat | None = None, note: str = "", rival: str | None = None, our_statement: str | None = None) -> Comparison:
    """A claim that cannot be compared with the paper (a scheme missing from the build, a
    quantity measured over a different run length), with the reason."""
    _check_our_statement(metric, our_statement, paper, text)
    return Comparison(metric, paper, ours, not_comparable(kind, reason), unit, text, note, rival=rival, our_statement=our_statement)


# ---------------------------------------------------------------------- readings


@dataclass(frozen=True)
class ReadingAxis:
    """A point where a paper is ambiguous, as a named parameter: ``values[0]`` is the
    default reading (the one that follows the paper's prose and the mechanism's intent,
    ``why`` says how), the others are run beside it with ``--readings``. A value that
    changes nothing is an error naming the axis (``affects`` says what it must change)."""

    name: str
    values: tuple[Any, ...]
    why: str = ""
    #: "runs": every other value must change at least one run's scenario; "analysis": the
    #: axis changes only the analysis, and every other value must change at least one
    #: comparison's per-seed values.
    affects: str = "runs"

    def __post_init__(self) -> None:
        if self.affects not in ("runs", "analysis"):
            raise ValueError(f"reading {self.name}: affects is 'runs' or 'analysis', got {self.affects!r}")
        if not self.values:
            raise ValueError(f"reading {self.name}: no values")

    @property
    def default(self) -> Any:
        return self.values[0]


#: NewReno's loss and timeout responses on ns-2's hosts: ns-2's (the papers' simulator: half
#: the window at a loss or ECN echo, and at a timeout ns-2's TcpAgent::timeout rule) or RFC
#: 5681's (half the flight size; a timeout repeated without progress keeps ssthresh: ecnlab's
#: NewReno defaults). They part after a timeout during fast recovery, where the flight holds the
#: new data the recovery's window inflation let out (on mix.uno-legacy's no-ECN NewReno runs:
#: ssthresh ~1075 segments on a path that holds ~900, a timeout every 1.7 s), and after an ECN
#: response, whose ssthresh ns-2 keeps at a timeout. :func:`newreno_params` gives the
#: ``cc_params``, :func:`newreno_sources` their sources.
NS2_NEWRENO = ReadingAxis(
    "newreno",
    ("ns2", "rfc5681"),
    "NewReno's ssthresh at a loss, an ECN echo and a timeout: ns-2's (half the window, without the recovery's inflation; a timeout after an ECN response keeps its ssthresh, a repeated timeout halves a 1-segment window to 2) or RFC 5681's (half the flight size, which after a timeout in fast recovery counts the new data the inflation let out; a repeated timeout keeps ssthresh), ecnlab's NewReno defaults",
)


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


def _run_key(r: Results) -> str | None:
    """What identifies a run: its scenario without the name line (None for a stand-in
    without one, e.g. a test's constructed run)."""
    import hashlib

    toml = getattr(r, "scenario_toml", None)
    if not toml:
        return None
    text = "\n".join(line for line in toml.splitlines() if not line.startswith("name = "))
    return hashlib.sha1(text.encode()).hexdigest()


def _judged(r: Results, check: tuple[str, ...], find: Callable[[], Any]) -> Any:
    """What ``find`` finds in run ``r`` for ``check``, found once per run (:attr:`Results.judged`):
    the readings of a paper share most of their runs, and each reading's RunSet would judge
    them all again."""
    if check not in r.judged:
        r.judged[check] = find()
    # A copy: what one reading's analysis does with it stays out of the others'.
    return copy.deepcopy(r.judged[check])


class RunSet(Mapping[str, Results]):
    """The results of an experiment's runs, by run name, with helpers that gather them."""

    def __init__(self, results: Mapping[str, Results], experiment: "Experiment | None" = None) -> None:
        self._r = dict(results)
        self._exp = experiment
        self._stalls: dict[str, dict[str, Any] | None] = {}
        self._outages: dict[str, list[dict[str, Any]]] = {}
        self._outages_unchecked: dict[str, str] = {}
        self._starved: dict[str, list[dict[str, Any]]] = {}
        self._starvation_unchecked: dict[str, str] = {}

    def stall_check(self) -> str:
        """"" when the runs' stalls are checked, else why not."""
        if self._exp is None:
            return "no experiment to name the bottleneck"
        return bottleneck_declaration(self._exp)[1]

    def _judged_ports(self, run_name: str) -> list[str]:
        """The experiment's bottleneck port(s) of the run, each one the run has and one its
        bulk flows cross where it has any (ExperimentError naming the port and the run
        otherwise): the stall and outage rules judge the bulk flows crossing the port, so a
        port none of them crosses (a direction written the wrong way round) would read as "no
        stall, no outage" in every run."""
        from ..errors import ExperimentError

        assert self._exp is not None
        r = self._r[run_name]
        have = r.ports["port"].to_list()
        ports = _ports(self._exp.bottleneck(run_name))
        for port in ports:
            if port not in have:
                raise ExperimentError(f"{self._exp.name}: bottleneck({run_name!r}) is {port!r}, which run {run_name} has no port of (ports: {', '.join(have)})")
            bulk = r.flows.filter(is_bulk()) if r.flows.height else r.flows
            if bulk.height and not _crossing_bulk(r, port)[1].height:
                raise ExperimentError(
                    f"{self._exp.name}: bottleneck({run_name!r}) is {port!r}, which none of run {run_name}'s {bulk.height} bulk flow(s) crosses "
                    f"({', '.join(bulk['name'].to_list()[:5])}{' …' if bulk.height > 5 else ''}): its stalls and outages could not be checked; declare a port they cross"
                )
        return ports

    def stall_of(self, run_name: str) -> dict[str, Any] | None:
        """What the stall rule measured when the run stalled (:func:`stall` on the
        experiment's bottleneck port(s)), None when it did not or cannot be checked."""
        if run_name not in self._stalls:
            found = None
            if self._exp is not None and not self.stall_check():
                r = self._r[run_name]
                for port in self._judged_ports(run_name):
                    found = _judged(r, ("stall", port), lambda: stall(r, port))
                    if found is not None:
                        break
            self._stalls[run_name] = found
        return self._stalls[run_name]

    def outages_of(self, run_name: str) -> list[dict[str, Any]]:
        """The run's outages on the experiment's bottleneck port(s) (:func:`outages`), empty
        when it had none or its stalls cannot be checked. A port the run lacks, or one none of
        its bulk flows crosses, is an ExperimentError, as in :meth:`stall_of`."""
        if run_name not in self._outages:
            found: list[dict[str, Any]] = []
            blind: list[str] = []
            if self._exp is not None and not self.stall_check():
                r = self._r[run_name]
                for port in self._judged_ports(run_name):
                    got, why = _judged(r, ("outages", port), lambda: checked_outages(r, port))
                    found += got
                    if why:
                        blind.append(why)
            self._outages[run_name] = found
            if blind:
                self._outages_unchecked[run_name] = "; ".join(blind)
        return self._outages[run_name]

    def outages_unchecked(self, run_name: str) -> str:
        """Why the run's outages could not be checked on its bottleneck port(s) (no delivery
        samples, no queue samples of the port, no bulk flow: :func:`checked_outages`), "" when
        they were (or when its stalls are not checked at all: :meth:`stall_check` says why)."""
        self.outages_of(run_name)
        return self._outages_unchecked.get(run_name, "")

    def starved_of(self, run_name: str) -> list[dict[str, Any]]:
        """The run's backlogged flows far below their share (:func:`starved_flows`), in every
        experiment (the share needs only the flows and their paths, no declared bottleneck).
        A run whose recorded scenario the build cannot rebuild (its paths and links) is not
        checked: :meth:`starvation_unchecked` says why, and the claims on it are flagged."""
        if run_name not in self._starved:
            out: list[dict[str, Any]] = []
            r = self._r[run_name]
            if not r.scenario_toml:
                self._starvation_unchecked[run_name] = "the run records no scenario to rebuild its paths from"
            else:
                try:
                    out = _judged(r, ("starved",), lambda: starved_flows(r))
                except ScenarioError as e:
                    self._starvation_unchecked[run_name] = f"its recorded scenario does not build here: {e}"
                except ValueError as e:
                    # A bulk flow without a route, a link the share cannot use: said on the
                    # claims, not a reason to stop judging the other runs.
                    self._starvation_unchecked[run_name] = str(e)
            self._starved[run_name] = out
        return self._starved[run_name]

    def starvation_unchecked(self, run_name: str) -> str:
        """Why the run's flows were not checked for starvation, "" when they were."""
        self.starved_of(run_name)
        return self._starvation_unchecked.get(run_name, "")

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

    def per_seed(self, config: str, f: Callable[[Results], Any], measures: str = "", window: tuple[float, float | None] | None = None) -> SeedValues:
        """``{seed: f(run)}`` over the seeds of ``config``, the input of a claim. ``f`` may
        return None or :class:`Excluded` (with a reason), or raise ``KeyError``,
        ``ValueError``, ``ZeroDivisionError`` or ``TypeError``: the seed is then left out of
        the claim and listed with the reason. An :class:`~ecnlab.OutputError` (a run's
        recorded output missing or unreadable, e.g. a time series read when asked) is
        raised, not left out: it stops the reproduction naming the file. The result also marks the seeds whose run
        stalled and those with starved flows (:class:`SeedValues`), which flag the claims
        made on it. ``measures`` says what the values count where another configuration's
        arm of the same claim could count something else (see :func:`claim`). A run's outages
        (:func:`outages`) that overlap ``window`` = (from s, to s or None for the run's end),
        the span ``f`` measures (the whole run when None), flag the claim (they never decide
        it: the port's departures are not recorded, so a silence with its queue sampled empty
        cannot be told for certain from a link sending while receivers wait behind a loss)."""
        out: dict[int, Any] = {}
        stalled: dict[int, str] = {}
        starved: dict[int, list[str]] = {}
        unchecked: dict[int, str] = {}
        outage: dict[int, str] = {}
        blind: dict[int, str] = {}
        run_keys: dict[int, str] = {}
        for n, r in self._r.items():
            if config_of(n) != config:
                continue
            seed = seed_of(n)
            key = seed if seed is not None else 0
            rk = _run_key(r)
            if rk is not None:
                run_keys[key] = rk
            try:
                out[key] = f(r)
            except OutputError:
                # A recorded output that is missing or does not read (a time series read
                # lazily) is not a seed without a value: it stops the reproduction.
                raise
            except (KeyError, ValueError, ZeroDivisionError, TypeError) as e:
                out[key] = Excluded(f"{type(e).__name__}: {e}")
            st = self.stall_of(n)
            if st is not None:
                stalled[key] = f"{st['port']} carried {st['utilisation']:.0%} of its capacity from {st['from_s']:.1f} to {st['to_s']:.1f} s"
            w0, w1 = window if window is not None else (-math.inf, None)
            quiet = [o for o in self.outages_of(n) if o["to_s"] > w0 and (w1 is None or o["from_s"] < w1)]
            if quiet:
                outage[key] = outages_text(quiet)
            no = self.outages_unchecked(n)
            if no:
                blind[key] = no
            sv = self.starved_of(n)
            if sv:
                starved[key] = [x["flow"] for x in sv]
            why = self.starvation_unchecked(n)
            if why:
                unchecked[key] = why
        return SeedValues(out, config=config, stalled=stalled, starved=starved, stall_check=self.stall_check(), run_keys=run_keys, measures=measures, starvation_unchecked=unchecked, outages=outage, outages_unchecked=blind)

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


def bottleneck_declaration(exp: "Experiment") -> tuple[bool, str]:
    """(declared, why stalls are not checked): an experiment declares its bottleneck by
    overriding ``bottleneck()``, or says why none can be checked in ``no_bottleneck``."""
    overrides = type(exp).bottleneck is not Experiment.bottleneck
    if overrides:
        return True, ""
    if exp.no_bottleneck:
        return True, f"no bottleneck: {exp.no_bottleneck}"
    return False, f"{exp.name or type(exp).__name__} declares no bottleneck (bottleneck() or no_bottleneck): stalls not checked"

#: A run is flagged as a stall when, while a bulk flow is backlogged, the flows deliver less
#: than this fraction of the bottleneck's capacity.
STALL_UTILISATION = 0.5
#: A flow of at least this size (or without a size) is "bulk".
BULK_BYTES = 1_000_000


def is_bulk() -> pl.Expr:
    """The flows-table rows of bulk flows: no size (runs to the end) or at least ``BULK_BYTES``."""
    return pl.col("size_bytes").is_null() | (pl.col("size_bytes") >= BULK_BYTES)
#: The first second of a bulk flow (slow start) does not count towards a stall.
STALL_WARMUP_S = 1.0


def crossing_flows(r: Results, port: str) -> list[str]:
    """The flows whose path crosses ``port`` (:func:`_crossing`)."""
    return _crossing(r, port)[0]


def _crossing(r: Results, port: str) -> tuple[list[str], list[str]]:
    """(the flows whose path crosses ``port``, rebuilt from the run's scenario
    (:meth:`Results.flow_paths`); the flows left out because the scenario gives them no path).
    Every flow, none left out, when the run records no scenario, one this build cannot
    rebuild or one without the port: then what the port's own flows did cannot be told apart.
    A flow of the results the scenario has no route for (results and a scenario that do not
    match) is left out and named, not a reason to count every flow (reverse flows too) against
    the port."""
    names = r.flows["name"].to_list()
    if not r.scenario_toml:
        return names, []
    try:
        paths = r.flow_paths()
        if port not in r.port_links():
            return names, []
    except ScenarioError:
        return names, []
    return [n for n in names if port in paths.get(n, ())], [n for n in names if n not in paths]


def _crossing_bulk(r: Results, port: str) -> tuple[list[str], pl.DataFrame, list[str]]:
    """The flows crossing ``port`` (:func:`_crossing`), the flows table's rows of the bulk ones
    among them, which the stall and outage rules judge, and the flows left out for want of a
    path."""
    crossing, unrouted = _crossing(r, port)
    f = r.flows
    return crossing, f.filter(pl.col("name").is_in(crossing) & is_bulk()), unrouted


def stall(r: Results, port: str, threshold: float = STALL_UTILISATION) -> dict[str, Any] | None:
    """Whether the run stalled: the bytes the flows crossing ``port`` (:func:`crossing_flows`;
    on a chain, the flows of the other links deliver against their own links, and counted here
    they carried a stalled link over the line) delivered while one of them, a bulk flow, was
    backlogged (from its start + ``STALL_WARMUP_S`` until it finished or the run ended),
    over what ``port`` could have carried then (its rate schedule over that window,
    :meth:`Results.capacity_bits`, in payload bits as delivery counts them: times the payload
    part of the flows' packets, :func:`payload_fraction`, as the starved-flow share is), is
    below ``threshold``. Returns the
    measured figures when it did, None when it did not (or when the run has no bulk flow or
    no sampled flow rates and the port's own busy fraction over the run is above it)."""
    f = r.flows
    dur = float(r.meta["duration_s"])
    try:
        cap = float(r.port(port)["rate_bps"])
    except KeyError:
        return None
    if f.height == 0:
        return None
    crossing, bulk, unrouted = _crossing_bulk(r, port)
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
        inside = rate.filter(pl.col("entity").is_in(crossing) & (pl.col("time_s") > t0) & (pl.col("time_s") <= t1))
        delivered_bits = float(inside["value"].sum()) * interval
        # What the link offered over the window, its rate schedule integrated: a link whose
        # rate drops (600 → 180 → 600 Mb/s) judged at its first rate made a flow carrying
        # 65 % of what it could offer a stall.
        how = "flows' delivery rate samples"
        offered = None
        if r.scenario_toml:
            try:
                offered = r.capacity_bits(port, t0, t1) * _payload_part(r, port, bulk)
            except (ScenarioError, KeyError):
                pass
        if offered is None:
            # No recorded scenario, or one this build cannot rebuild (or without the port):
            # the link's mean rate over the run, which the ports table records, in its own
            # bits (no segment format to read).
            mean = r.port(port).get("mean_rate_bps")
            offered = float(mean if mean is not None else cap) * (t1 - t0)
            how += " against the link's mean rate over the run in wire bits (no recorded scenario that builds here)"
        if not offered:
            return None
        util = delivered_bits / offered
    else:
        if not cap:
            return None
        util = float(r.port(port)["utilization"])
        how = "bottleneck busy fraction over the run"
    if util >= threshold:
        return None
    if unrouted:
        how += f"; left out, as the run's scenario gives them no path: {', '.join(unrouted)}"
    return {"port": port, "utilisation": util, "from_s": t0, "to_s": t1, "threshold": threshold, "measured_by": how}


#: An outage: for at least ``OUTAGE_S`` the flows crossing the judged link deliver next to
#: nothing (``OUTAGE_FRACTION``) while one of them is backlogged (past its ``STALL_WARMUP_S``)
#: and the port's sampled queue is empty (:func:`outages`), a silence an average over the run
#: hides. One second is RFC 6298's minimum retransmission timeout (§2, rule 2.4; ns-3's
#: TcpSocketBase MinRto): a path at work pauses for a sample interval, a batch or an RTT, while
#: a link silent this long with data waiting has every flow on it sitting out a timeout.
#: Delivery is what receivers hand on in order, so a receiver holding data behind one lost
#: segment delivers nothing while the link sends at full rate (APCC's NewReno runs: the 12 MB
#: buffer full through the silence, the held data handed on in one burst after the
#: retransmission): hence the empty queue. It is a necessary sign of an idle link, not a proof
#: (the packet being sent, or a batch on the air, is not in the queue, and a link can carry a
#: light load with no queue), and the runs do not record a port's departures: outages are
#: listed and flag the claims whose measured span they overlap, and never decide them.
OUTAGE_S = 1.0
#: "Next to nothing", in time and in volume: data delivered in at most this fraction of the
#: sampled intervals, and less than this fraction of what the link offered. A retransmission
#: per timeout and the burst it releases from the receiver's reordering queue (APCC's NewReno
#: seed 3: 3 of 100 intervals, 1248 packets, 2.4 % of a second at 600 Mb/s) is next to nothing;
#: a window growing slowly into a large BDP (UNO's VCP at 1 Gb/s: 1.5–4.5 % of the link for
#: seconds) delivers in every interval and is not an outage (the stall rule judges its average).
OUTAGE_FRACTION = 0.05


def outages(r: Results, port: str, span_s: float = OUTAGE_S, fraction: float = OUTAGE_FRACTION) -> list[dict[str, Any]]:
    """The run's outages on ``port`` (:func:`checked_outages`); empty also where they could
    not be checked."""
    return checked_outages(r, port, span_s, fraction)[0]


def checked_outages(r: Results, port: str, span_s: float = OUTAGE_S, fraction: float = OUTAGE_FRACTION) -> tuple[list[dict[str, Any]], str]:
    """(the outages, why they could not be checked: "" when they were). The spans of at least ``span_s`` in which the flows whose path crosses ``port`` (every
    flow when the run records no scenario to rebuild the paths from) delivered data in at most
    ``fraction`` of their ``delivery_bps`` sampled intervals and less than ``fraction`` of what
    the link offered (its rate schedule in payload bits, as :func:`stall` counts it), while a
    bulk flow crossing it was backlogged (from its start + ``STALL_WARMUP_S`` until it
    finished or the run ended) and the link's rate was not 0: every window of ``span_s`` (or
    of two of the flows' longest base RTT, ``rtt_min_s``, where that is longer) of samples that
    quiet is one, overlapping ones merged, where the port's sampled queue (``queue_pkts``) is
    empty at every sample of the window: a queue holding packets is a link at work, and the
    silence is the receivers holding data behind a loss. Each: port, from_s, to_s (the sampled
    intervals' bounds), span_s, delivered (the fraction of the offered over the span). Not
    checked (none, and the reason) without delivery samples, without queue samples of the
    port (the link's work then cannot be told from the receivers' wait), without a bulk flow
    crossing the port, or without the port's rate to read; a run without flows has none."""
    import numpy as np

    f = r.flows
    ts = r.timeseries
    if f.height == 0:
        return [], ""
    rate = ts.filter(pl.col("kind") == "delivery_bps") if ts.height else ts
    if not rate.height:
        return [], "no delivery samples"
    dur = float(r.meta["duration_s"])
    crossing, bulk, _ = _crossing_bulk(r, port)
    if bulk.height == 0:
        if not f.filter(is_bulk()).height:
            return [], "no bulk flow in the run"
        return [], f"no bulk flow crosses {port}"
    queue = ts.filter((pl.col("kind") == "queue_pkts") & (pl.col("entity") == port))
    if not queue.height:
        return [], f"no queue samples of {port}"
    times = sorted(set(rate["time_s"].to_list()))
    interval = (times[1] - times[0]) if len(times) > 1 else dur
    t = np.array(times, dtype=float)
    # The queue at each delivery sample: the last queue sample at or before it (both are taken
    # on the run's one measurement interval).
    qt = queue.sort("time_s")
    at = np.searchsorted(qt["time_s"].to_numpy(), t + 1e-9, side="right") - 1
    waiting = np.where(at >= 0, qt["value"].to_numpy()[np.maximum(at, 0)], 0.0) > 0
    per = rate.filter(pl.col("entity").is_in(crossing)).group_by("time_s").agg(pl.col("value").sum())
    got = dict(zip(per["time_s"].to_list(), per["value"].to_list()))
    delivered = np.array([got.get(x, 0.0) for x in times]) * interval
    # What the link offered in each sample's interval (the one ending at its time).
    try:
        offered = np.array(r.rate_at(port, list(t - interval / 2))) * interval * _payload_part(r, port, bulk)
    except (ScenarioError, KeyError):
        mean = r.port(port).get("mean_rate_bps") if port in r.ports["port"].to_list() else None
        if not mean:
            return [], f"no rate of {port} to read"
        offered = np.full(len(t), float(mean) * interval)
    backlogged = np.zeros(len(t), dtype=bool)
    for a, b in zip(bulk["start_s"].to_list(), bulk["fct_s"].to_list()):
        backlogged |= (t - interval >= a + STALL_WARMUP_S - 1e-9) & (t <= (dur if b is None else a + b) + 1e-9)
    eligible = backlogged & (offered > 0) & ~waiting
    # A window-limited flow delivers once per round trip: on a long path (UNO's 1.5-s RTTs)
    # silence within two round trips is its ACK clock, not an outage.
    rtts = [x for x in (bulk["rtt_min_s"].to_list() if "rtt_min_s" in bulk.columns else []) if x is not None]
    span_s = max(span_s, 2 * max(rtts)) if rtts else span_s
    n = max(int(round(span_s / interval)), 1)
    quiet = np.zeros(len(t), dtype=bool)
    cd, co = np.concatenate([[0.0], np.cumsum(delivered)]), np.concatenate([[0.0], np.cumsum(offered)])
    ce = np.concatenate([[0], np.cumsum(eligible)])
    cs = np.concatenate([[0], np.cumsum(delivered > 0)])
    j = np.arange(n, len(t) + 1)
    # Samples j-n .. j-1: all eligible and contiguous in time, data in at most ``fraction`` of
    # them and less than ``fraction`` of what the link offered.
    ok = (
        (ce[j] - ce[j - n] == n)
        & (t[j - 1] - t[j - n] <= (n - 1) * interval * 1.5)
        & (cs[j] - cs[j - n] <= fraction * n)
        & (cd[j] - cd[j - n] < fraction * (co[j] - co[j - n]))
    )
    for end in j[ok]:
        quiet[end - n:end] = True
    out = []
    k = 0
    while k < len(t):
        if not quiet[k]:
            k += 1
            continue
        j = k
        while j + 1 < len(t) and quiet[j + 1]:
            j += 1
        span_offered = float(offered[k:j + 1].sum())
        out.append({"port": port, "from_s": float(t[k] - interval), "to_s": float(t[j]), "span_s": float(t[j] - t[k] + interval), "delivered": float(delivered[k:j + 1].sum()) / span_offered if span_offered else 0.0})
        k = j + 1
    return out, ""


def outages_text(spans: Sequence[Mapping[str, Any]]) -> str:
    """A run's outages in a phrase per port: one span with its bounds and what it delivered;
    several as their number, their seconds in all and the longest (a rival that sits out
    timeouts for most of a 200-s run has 20 or 30 of them; each is in summary.json's
    ``outages``)."""
    by: dict[str, list[Mapping[str, Any]]] = {}
    for o in spans:
        by.setdefault(o["port"], []).append(o)
    out = []
    for port, os_ in by.items():
        if len(os_) == 1:
            (o,) = os_
            out.append(f"{port}: 1 span, {o['from_s']:.2f}–{o['to_s']:.2f} s ({o['delivered']:.1%} of what it offered)")
            continue
        longest = max(os_, key=lambda o: (o["span_s"], -o["from_s"]))
        out.append(f"{port}: {len(os_)} spans, {sum(o['span_s'] for o in os_):.1f} s in all, longest {longest['from_s']:.2f}–{longest['to_s']:.2f} s")
    return "; ".join(out)


def _payload_part(r: Results, port: str, bulk: pl.DataFrame) -> float:
    """The payload part of the link's bits for the stall rule (delivery counts payload): the
    largest :func:`payload_fraction` among the bulk TCP flows whose path crosses ``port``
    (the most payload the link could carry; one segment format, the usual case, makes it
    exact), 1 when none does (UDP or nothing: no segment format to read)."""
    paths = r.flow_paths()
    tcp = bulk.filter(pl.col("transport") == "tcp") if "transport" in bulk.columns else bulk
    names = [n for n in tcp["name"].to_list() if port in paths.get(n, ())]
    if not names:
        return 1.0
    of = payload_fraction(r, names)
    return max(of(n, port) for n in names)


#: A backlogged flow is starved when it delivers less than this fraction of its fair share:
#: its max-min fair rate on its own path among the bulk flows active with it, summed over its
#: time (:func:`starved_flows`).
STARVED_FRACTION = 0.1


#: Bytes a TCP data segment carries besides its payload on the wire: the IPv4 header (20,
#: wire/ipv4.rs HEADER_LEN) and the TCP header (20, wire/tcp.rs HEADER_LEN); the timestamps
#: option adds 12 (10 padded to a 4-byte boundary, TcpRepr::options_len) where the flow's TCP
#: uses timestamps. Data segments carry no other option (SACK blocks ride on ACKs).
IP_TCP_HEADER_BYTES = 40
TIMESTAMPS_OPTION_BYTES = 12


def _segment_format(r: Results, names: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Each flow's (mss, header bytes of a data segment), from the run's scenario with its
    defaults filled in (the [tcp] table, the flow's own ``tcp`` over it)."""
    import tomllib

    from .. import _core

    # The scenario with its defaults filled in is read once per run: the stall, outage and
    # starvation checks each ask.
    t = _judged(r, ("scenario",), lambda: tomllib.loads(_core.validate(r.scenario_toml)))
    common = t.get("tcp", {})
    specs = {f.get("name"): f for f in t.get("flows", [])}
    out = {}
    for n in names:
        # A flow with a count is named "<name>.<k>".
        spec = specs.get(n) or specs.get(n.rsplit(".", 1)[0]) or {}
        tcp = {**common, **(spec.get("tcp") or {})}
        out[n] = (int(tcp["mss"]), IP_TCP_HEADER_BYTES + (TIMESTAMPS_OPTION_BYTES if tcp["timestamps"] else 0))
    return out


def payload_fraction(r: Results, names: Sequence[str]) -> Callable[[str, str], float]:
    """``of(flow, link)``: the flow's payload part of its packets on the link, mss / (mss +
    its IP and TCP headers + the link's framing; link "" for none). Delivery counts payload
    while links carry whole packets: every rule that holds one against the other (a flow's
    share, what a link offered) converts the link's bits with this. ScenarioError when the
    run's scenario does not read."""
    links = r.port_links()
    segment = _segment_format(r, names)

    def of(name: str, link: str) -> float:
        mss, header = segment[name]
        return mss / (mss + header + (links[link][1] if link else 0))

    return of


def _delivered_by(r: Results, until: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Payload bits each flow had delivered by its time, from its ``delivery_bps`` samples
    (each the rate over the interval that ends at its time); flows without samples are left
    out."""
    ts = r.timeseries
    if not ts.height:
        return {}
    rate = ts.filter(pl.col("kind") == "delivery_bps")
    if not rate.height:
        return {}
    times = rate["time_s"].unique().sort().to_list()
    interval = (times[1] - times[0]) if len(times) > 1 else float(r.meta["duration_s"])
    want = pl.DataFrame({"entity": [n for n, _ in until], "until": [float(t) for _, t in until]}, schema={"entity": pl.String, "until": pl.Float64})
    mine = rate.join(want, on="entity", how="inner")
    sums = mine.group_by("entity").agg((pl.col("value") * (pl.col("time_s") <= pl.col("until"))).sum().alias("bits"))
    return {n: float(b) * interval for n, b in sums.iter_rows()}


def _ports(declared: str | Sequence[str] | None) -> list[str]:
    if declared is None:
        return []
    return [declared] if isinstance(declared, str) else list(declared)


def starved_flows(r: Results, fraction: float = STARVED_FRACTION) -> list[dict[str, Any]]:
    """The bulk TCP flows of the run that, while backlogged (from their start +
    ``STALL_WARMUP_S`` until they finished or the run ended; what they delivered before is
    taken out by their delivery samples, and a flow without samples is judged from its start on
    both sides), delivered less than
    ``fraction`` of their fair share. A flow's fair share at an instant is its rate in the
    max-min fair allocation (:func:`.fairshare.max_min`) of the links' capacities among the
    bulk flows active then, each flow constrained by the egress ports its data crosses
    (:meth:`Results.flow_paths`: its own path, in its own direction) at the rate each link's
    schedule gives at that instant (:meth:`Results.port_links`; a time-varying link's
    ``rate_bps`` is only its first rate), in payload bits: the flow's part of each of its
    packets on the link that fixes its share, mss / (mss + 40 or 52 header bytes + the
    link's framing), as delivery counts payload; it is taken on 2000 instants of the run and summed over the flow's time. Flows in the
    other direction and flows that do not cross a link take nothing of its capacity; on one
    bottleneck crossed by every bulk flow in one direction the share is the bottleneck's
    capacity over the bulk flows active, as before. Short flows and UDP are not counted. A
    finite bulk flow that finished is not judged (its pace is its completion time; it takes
    its part of the links while it runs). A flow that delivered nothing is always starved. ``port`` is the link that fixed the flow's
    share (its bottleneck) for most of its time."""
    import numpy as np

    from .fairshare import max_min

    f = r.flows
    dur = float(r.meta["duration_s"])
    if f.height == 0:
        return []
    bulk = f.filter((pl.col("transport") == "tcp") & is_bulk())
    rows = bulk.select("name", "size_bytes", "start_s", "fct_s", "bytes_delivered").to_dicts()
    if not rows:
        return []
    paths = r.flow_paths()
    unrouted = [x["name"] for x in rows if x["name"] not in paths]
    if unrouted:
        raise ValueError(f"bulk flows without a route in the run's scenario: {', '.join(unrouted)}")
    links = r.port_links()
    payload_of = payload_fraction(r, [x["name"] for x in rows])
    spans = np.array([(x["start_s"], dur if x["fct_s"] is None else x["start_s"] + x["fct_s"]) for x in rows], dtype=float).reshape(-1, 2)
    dt = dur / 2000
    t = (np.arange(2000) + 0.5) * dt
    active = (spans[:, :1] <= t) & (t < spans[:, 1:])
    # A link's capacity follows its rate schedule (a wireless hop's drops), not its first
    # rate: the links' rates are constant between any two of their steps (an epoch).
    changes = np.array(sorted({at for steps, _ in links.values() for at, _ in steps[1:]}), dtype=float)
    epoch = np.searchsorted(changes, t, side="right")
    # The allocation changes only when a flow starts or ends or a link's rate changes: once
    # per set of active flows in each epoch.
    rate = np.zeros(active.shape)
    fixed_by = np.full(active.shape, "", dtype=object)
    sets, which = np.unique(np.column_stack([active.T, epoch]), axis=0, return_inverse=True)
    for k, key in enumerate(sets):
        flows = np.flatnonzero(key[:-1])
        if not len(flows):
            continue
        at = np.flatnonzero(which.reshape(-1) == k)
        at_t = float(t[at[0]])
        capacity = {p: float(r.rate_at(p, [at_t])[0]) for p in links}
        rates, links_by = max_min(capacity, [paths[rows[i]["name"]] for i in flows])
        # The allocation shares the links' bits on the wire; delivery counts payload: each
        # flow's share is its payload's part of its packets on the link that fixes it
        # (mss / (mss + headers + the link's framing)), so the two are counted alike.
        rates = [w * payload_of(rows[i]["name"], link) for w, i, link in zip(rates, flows, links_by)]
        rate[np.ix_(flows, at)] = np.array(rates)[:, None]
        fixed_by[np.ix_(flows, at)] = np.array(links_by, dtype=object)[:, None]
    share = rate * dt
    before = _delivered_by(r, [(x["name"], t0 + STALL_WARMUP_S) for x, (t0, _) in zip(rows, spans)])
    out = []
    for i, (x, (t0, t1)) in enumerate(zip(rows, spans)):
        a = t0 + STALL_WARMUP_S
        if t1 - a <= STALL_WARMUP_S:
            continue
        # A finite flow that finished sent all it had: its pace is its completion time, which
        # the claims measure, and most of its life may be the ramp up to its share (a 2.6-MB
        # flow on an idle 150 Mb/s, 80-ms path is under two bandwidth-delay products), not
        # starvation. It still takes its part of the links while it runs.
        if x["size_bytes"] is not None and x["fct_s"] is not None:
            continue
        # Delivery and share over the same span: from start + STALL_WARMUP_S, the flow's
        # delivery samples taking out what it delivered before; a flow without samples is
        # judged over its whole time, slow start included on both sides.
        delivered_bits = 8.0 * float(x["bytes_delivered"] or 0)
        if x["name"] in before:
            delivered_bits = max(delivered_bits - before[x["name"]], 0.0)
        else:
            a = t0
        inside = (t >= a) & (t < t1)
        share_bits = float(share[i][inside].sum())
        if delivered_bits == 0 or delivered_bits < fraction * share_bits:
            held = [p for p in fixed_by[i][inside] if p]
            port = max(set(held), key=lambda p: (held.count(p), p)) if held else ""
            out.append({"flow": x["name"], "port": port, "delivered_bits": delivered_bits, "share_bits": share_bits, "of_share": delivered_bits / share_bits if share_bits else 0.0, "from_s": float(a), "to_s": float(t1)})
    return out


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
    #: The TCP defaults of the simulator the paper used (NS2_HOSTS, NS3_HOSTS) or ecnlab's
    #: Linux-like ones (LINUX_HOSTS): the host profile whose sources cover the [tcp] keys the
    #: experiment does not declare itself.
    hosts: HostProfile | None = None
    #: Why no link of this experiment's runs can be checked for a stall, for an experiment
    #: without a ``bottleneck()``.
    no_bottleneck: str = ""

    def runs(self, quick: bool, seeds: list[int], reading: Reading) -> Mapping[str, Any]:
        raise NotImplementedError

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        raise NotImplementedError

    def bottleneck(self, run_name: str) -> str | Sequence[str] | None:
        """The port (or ports) whose utilisation decides whether a run stalled. Every
        experiment overrides it, or sets ``no_bottleneck`` to the reason none can be
        checked."""
        return None

    def provenance(self, quick: bool, reading: Reading) -> list[Source]:
        """Where every parameter of the runs comes from (:class:`Source`: ``paper``,
        ``default``, ``assumption``), the [tcp] keys of the host profile (``hosts``) aside
        unless the experiment deviates from them. The framework checks that every key of
        every run's fully-defaulted scenario has one."""
        return []

    def seeds(self, quick: bool, n: int | None = None) -> list[int]:
        count = n if n is not None else (self.quick_seeds if quick else self.full_seeds)
        return list(range(1, count + 1))
