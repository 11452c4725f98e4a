"""Max-min fair shares of flows over the links they cross.

The fair share a starved flow is measured against (:func:`.base.starved_flows`) is the flow's
rate in the max-min fair allocation of the links' capacities among the flows active together,
each flow constrained by every link on its own path in its own direction. It is computed by
the bottleneck-link form of progressive filling (Bertsekas & Gallager, *Data Networks*, 2nd
ed., §6.5.2): the link with the least capacity left per flow not yet fixed is saturated
first, its flows are fixed at that level, their rate is taken off every other link they
cross, and so on until every flow is fixed. On one link every flow gets the capacity over the
number of flows; on a parking lot a flow across every link gets what its most crowded link
leaves it, and the flows of a less crowded link share what is left there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def max_min(capacity: Mapping[str, float], paths: Sequence[Sequence[str]]) -> tuple[list[float], list[str]]:
    """Each flow's max-min fair rate, flow ``i`` crossing the links ``paths[i]`` (each at
    most once) of capacities ``capacity`` (a link's rate, e.g. b/s), and the link that fixed
    it (its bottleneck: the first saturated link it crosses). Of links saturated at the same
    level the one met first in ``paths`` (in order, each path from its start) is taken, so the
    result is deterministic.
    ValueError for a flow that crosses no link (nothing bounds its share) or a link without
    a capacity."""
    for i, p in enumerate(paths):
        if not p:
            raise ValueError(f"flow {i} crosses no link: it has no max-min share")
        missing = [x for x in p if x not in capacity]
        if missing:
            raise ValueError(f"flow {i} crosses {', '.join(missing)}, which has no capacity")
    order: dict[str, int] = {}
    for p in paths:
        for x in p:
            order.setdefault(x, len(order))
    left = {x: float(capacity[x]) for x in order}
    on: dict[str, set[int]] = {x: set() for x in order}
    for i, p in enumerate(paths):
        for x in p:
            on[x].add(i)
    rate = [0.0] * len(paths)
    fixed_by: list[str] = [""] * len(paths)
    # max(…, 0): rounding can leave a link a hair below zero once its flows are fixed elsewhere.
    while any(on.values()):
        link = min((x for x in order if on[x]), key=lambda x: (max(left[x], 0.0) / len(on[x]), order[x]))
        level = max(left[link], 0.0) / len(on[link])
        for i in sorted(on[link]):
            rate[i], fixed_by[i] = level, link
            for x in paths[i]:
                on[x].discard(i)
                left[x] -= level
    return rate, fixed_by
