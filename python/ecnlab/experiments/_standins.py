"""Every reading's claims without running its runs: the analysis of a reading on stand-in runs.

A reading of a run axis changes the runs, and may change which claims an experiment makes and
how (a tolerance that is a reading, a claim made only under one value). Whether each of those
claims can come out contradicted depends on the claim and not on what the runs measured: the
check (:func:`.verdict.can_fail`) builds its own values. So every reading's claims can be
checked without running that reading: its ``analyze`` is given, for each of its runs, the
default reading's run of the same name (or, where the reading renames its runs, the default
run whose name differs in the fewest parts), and the comparisons it returns are the claims
that reading makes, decided on values that stand in for its own. Their verdicts mean nothing;
their kinds, bounds and tolerances, and how their per-seed values were taken, are the
reading's.
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


def comparisons_under(exp: Experiment, available: Mapping[str, Results], quick: bool, seeds: Sequence[int], reading: Reading) -> list[Comparison]:
    """The comparisons ``exp`` makes under ``reading``, analysed on stand-ins for that
    reading's runs (``available``: run name without the experiment's prefix → results, e.g.
    the default reading's runs). Nothing is run; figures are not drawn."""
    from . import decide_families

    names = list(exp.runs(quick, list(seeds), reading))
    rs = RunSet({n: stand_in(n, available) for n in names}, experiment=exp)
    ctx = Context(quick=quick, seeds=list(seeds), doc=Html("", fig_dir=None), experiment=exp.name, reading=reading, draw=False)
    return decide_families(exp.analyze(rs, ctx))


def cannot_fail(comps: Sequence[Comparison]) -> list[str]:
    """The claims among ``comps`` that do not come out contradicted on values built to
    contradict them, each with what was tried."""
    return [f"{c.metric} ({c.kind.text()}): {c.can_fail[1]}" for c in comps if c.kind is not None and c.can_fail is not None and not c.can_fail[0]]


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
