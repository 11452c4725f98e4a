"""Every reading's claims, analysed on that reading's own runs or on stand-ins for them.

A reading of an analysis axis runs nothing new: the default reading's runs are its own. A
reading of a run axis changes the runs, and may change which claims an experiment makes and
how (a tolerance that is a reading, a claim made only under one value, a branch on what the
runs measured). :func:`own_runs` gives such a reading its own runs: those whose scenario is one
of the default reading's are taken from it, the others are run (one seed is enough for the
check: :func:`.verdict.can_fail` cycles the measured values to ten seeds). Where running them
costs too much, the default reading's run of the same name (or, where the reading renames its
runs, the default run whose name differs in the fewest parts) stands in for each of them
(:func:`stand_in`): the claims are then the reading's, made on values that stand in for its
own. That is enough for :func:`.verdict.can_fail`, whose outcome depends on the claim's kind
and bounds, not on the values measured (b moved past a by more than the smallest effect, the
null ratio, a value set to zero, or raised past the bound; the one exception, an ``at_most``
claim on values below −(|bound| + 1), which no construction raises past the bound), as long as
the reading's analysis makes the same claims on its own runs as on the stand-ins: a branch on
what the runs measured can make or drop a claim. :func:`claims_differ` checks that where the
own runs are run. The verdicts of either mean nothing here; the claims' kinds, bounds and
tolerances, and how their per-seed values were taken, are the reading's.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..report import Html
from ..results import Results
from .base import Comparison, Context, Experiment, Reading, RunSet, seed_of


def stand_in(name: str, available: Mapping[str, Results]) -> Results:
    """The run of ``available`` that stands in for run ``name``: the one of that name, else
    the one of the same seed whose name differs from it in the fewest "-"-separated parts."""
    if name in available:
        return available[name]
    parts = name.split("-")
    seed = seed_of(name)

    def distance(other: str) -> tuple[int, int]:
        o = other.split("-")
        return (sum(x != y for x, y in zip(parts, o)) + abs(len(parts) - len(o)), 0 if seed_of(other) == seed else 1)

    if not available:
        raise KeyError(f"no run to stand in for {name!r}")
    return available[min(available, key=distance)]


def own_runs(plans: Sequence[tuple[Experiment, Mapping[str, Results], Reading, Sequence[int]]], quick: bool, jobs: int = 2) -> list[dict[str, Results] | None]:
    """For each (experiment, its default reading's runs by name, reading, seeds) of ``plans``:
    that reading's own runs of those seeds by name, or None where it changes none (its own
    runs are the default's). A run whose scenario is one of the default reading's is taken
    from those; the others are run together, each scenario once (one executor for all: a
    local cluster takes seconds to start)."""
    from . import run_many, scenario_key

    todo: dict[str, object] = {}  # scenario key → scenario
    names: dict[str, str] = {}  # scenario key → the run name it is run under (errors name it)
    planned: list[tuple[dict[str, str], dict[str, str], Mapping[str, Results]] | None] = []
    defaults: dict[tuple[str, tuple[int, ...]], dict[str, str]] = {}
    for exp, default, reading, seeds in plans:
        at = (exp.name, tuple(seeds))
        if at not in defaults:
            defaults[at] = {scenario_key(sc): n for n, sc in exp.runs(quick, list(seeds), Reading(exp.axes)).items()}
        by_key = defaults[at]
        mine = exp.runs(quick, list(seeds), reading)
        keys = {n: scenario_key(sc) for n, sc in mine.items()}
        new = {k: n for n, k in keys.items() if k not in by_key}
        if not new:
            planned.append(None)
            continue
        for k, n in new.items():
            if k not in todo:
                todo[k], names[k] = mine[n], f"{exp.name}-{n} [{reading.name}]"
        planned.append((keys, by_key, default))
    ran = run_many({names[k]: sc for k, sc in todo.items()}, jobs=jobs) if todo else {}
    made = {k: ran[names[k]] for k in todo}
    return [None if p is None else {n: p[2][p[1][k]] if k in p[1] else made[k] for n, k in p[0].items()} for p in planned]


def claims_differ(own: Sequence[Comparison], standing_in: Sequence[Comparison]) -> list[str]:
    """Where a reading's claims on its own runs differ from its claims on stand-ins: a claim
    made on one and not the other, or made with another kind, bound, tolerance or smallest
    effect (what :func:`.verdict.can_fail` depends on). Claims are compared whole (every
    field of the :class:`.verdict.Claim`, not its rounded text), and claims sharing a metric
    name are each kept (a list per name, not one)."""

    def claims(comps: Sequence[Comparison]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for c in comps:
            if c.kind is not None:
                out.setdefault(c.metric, []).append(repr(c.kind))
        return {m: sorted(v) for m, v in out.items()}

    a, b = claims(own), claims(standing_in)
    out = [f"{m}: on its own runs only ({a[m]})" for m in sorted(set(a) - set(b))]
    out += [f"{m}: on stand-ins only ({b[m]})" for m in sorted(set(b) - set(a))]
    out += [f"{m}: {a[m]} on its own runs, {b[m]} on stand-ins" for m in sorted(set(a) & set(b)) if a[m] != b[m]]
    return out


def comparisons_under(exp: Experiment, available: Mapping[str, Results], quick: bool, seeds: Sequence[int], reading: Reading) -> list[Comparison]:
    """The comparisons ``exp`` makes under ``reading`` for ``seeds``, analysed on
    ``available`` (run name without the experiment's prefix → results): the reading's own runs
    (:func:`own_runs`), or runs that stand in for them (e.g. the default reading's). Nothing is
    run; figures are not drawn."""
    from . import decide_families

    names = list(exp.runs(quick, list(seeds), reading))
    rs = RunSet({n: stand_in(n, available) for n in names}, experiment=exp)
    ctx = Context(quick=quick, seeds=list(seeds), doc=Html("", fig_dir=None), experiment=exp.name, reading=reading, draw=False)
    return decide_families(exp.analyze(rs, ctx))


def cannot_fail(comps: Sequence[Comparison]) -> list[str]:
    """The claims among ``comps`` that do not come out contradicted on values built to
    contradict them, each with what was tried; a claim its experiment declares fixed by the
    mechanism (``claim(..., fixed=)``) is no finding and is not listed."""
    return [f"{c.metric} ({c.kind.text()}): {c.can_fail[1]}" for c in comps if c.kind is not None and c.can_fail is not None and not c.can_fail[0] and not c.fixed]


def stalls_unchecked(comps: Sequence[Comparison]) -> list[str]:
    """The claims among ``comps`` whose per-seed values bypassed :meth:`RunSet.per_seed` (a
    plain dict: their runs' stalls and starved flows are not known), with which arm."""
    return [f"{c.metric}: {'; '.join(w for w in c.stall_unchecked if 'not taken by RunSet.per_seed' in w)}" for c in comps if c.kind is not None and any("not taken by RunSet.per_seed" in w for w in c.stall_unchecked)]



def rivals_untagged(comps: Sequence[Comparison]) -> list[str]:
    """The claims among ``comps`` with an arm measured on a reconstructed rival's runs (its
    name a part of the arm's configuration) that do not say so (``rival=``): they would be
    counted with the claims against rivals built from their own papers."""
    import re

    from .base import RECONSTRUCTED_RIVALS, SeedValues

    out = []
    for c in comps:
        if c.kind is None or c.rival_reconstructed:
            continue
        for arm, v in (("a", c.a), ("b", c.b)):
            parts = set(re.split(r"[-/_+]", v.config.lower())) if isinstance(v, SeedValues) else set()
            hit = sorted(parts & set(RECONSTRUCTED_RIVALS))
            if hit:
                out.append(f"{c.metric}: {arm} ({v.config}) runs {hit[0]}, rival={c.rival!r}")
                break
    return out
