"""Every claim of every registered experiment can come out contradicted.

Each claim of the default reading's quick form is evaluated again on per-seed values built
from the measured ones to contradict it (:func:`ecnlab.experiments.verdict.contradicting`):
a direction claim with its arms swapped (and, where the arms tie, b moved to the wrong side
of a past the smallest effect that counts); a size claim on the null effect a = b (an
equality claim on a/b far outside its band); a value claim with the measured quantity halved
or set to zero (``at_least``, ``matches``) or doubled and raised past the bound
(``at_most``). A claim that holds or stays inconclusive on all of them fails here.

What it catches: a rule that cannot reach "contradicted" (∞ against a finite value read as a
tie, as the tie rule once did; a smallest effect no difference can pass), a size band that
holds the null effect, a bound the measured quantity satisfies whatever it does (≥ 0 on a
count), and that the summary carries what is needed to recompute each claim (its kind and
per-seed values).

What it cannot catch: a measurement function that measures the wrong thing (UNO Fig. 7's UDP
wire bytes added to TCP payload over payload capacity, which the UDP flow alone pushes past
the bound), a claim tested on another figure's runs, a claim the paper does not make, or
another reading's claims (only the default reading is evaluated). Those need a reader with
the paper beside the code.

The experiments whose quick form is already run by their paper's tests share it
(``quick_reproduction``); APCC's runs here with one seed per configuration (the claims are
the same; the values are cycled to ten seeds). HFCC's quick form takes many minutes on two
cores, so it runs here only with ``ECNLAB_SLOW_TESTS=1``; every reproduction still evaluates
the same check on each of its claims and flags those that cannot fail in the report
("cannot come out contradicted")."""

from __future__ import annotations

import os

import pytest

from ecnlab import experiments as ex
from ecnlab.experiments.verdict import Claim, can_fail

#: Every paper prefix of the registry, with the options of its quick reproduction here.
PAPERS = {"core": {}, "eecn": {}, "mecn": {}, "uno": {}, "mix": {}, "hfcc": {"seeds": 1}, "apcc": {"seeds": 1}}

#: Papers with claims that cannot come out contradicted, until their modules fix them.
CANNOT_FAIL: dict[str, str] = {}


def test_every_registered_experiment_is_evaluated():
    assert {n.split(".")[0] for n in ex.names()} <= set(PAPERS)


def number(x):
    return None if x is None else float(x)


def as_claim(kind: dict) -> Claim:
    return Claim(kind["kind"], target=number(kind.get("target")), within=kind.get("within"), min_effect=kind.get("min_effect") if kind.get("tests") == "direction" else None, null_ok=kind.get("null_ok") or False)


#: Papers whose quick form is too slow for every CI run, with its cost.
SLOW = {"hfcc": "quick form: many minutes on two cores"}


def marks(p: str):
    m = []
    if p in CANNOT_FAIL:
        m.append(pytest.mark.xfail(strict=False, reason=CANNOT_FAIL[p]))
    if p in SLOW and not os.environ.get("ECNLAB_SLOW_TESTS"):
        m.append(pytest.mark.skip(reason=f"{SLOW[p]}; run with ECNLAB_SLOW_TESTS=1"))
    return pytest.param(p, marks=m)


@pytest.mark.parametrize("paper", [marks(p) for p in PAPERS])
def test_every_claim_can_come_out_contradicted(paper, quick_reproduction):
    _, summary = quick_reproduction(paper, **PAPERS[paper])
    cannot, checked = [], 0
    for c in summary["comparisons"]:
        if not c.get("kind"):
            continue
        claim = as_claim(c["kind"])
        ps = c["per_seed"]
        a = {int(s): number(v) for s, v in ps["a"].items()}
        b = None if ps["b"] is None else {int(s): number(v) for s, v in ps["b"].items()}
        ok, how = can_fail(claim, a, b)
        assert ok == c["can_fail"]["ok"], (c["experiment"], c["metric"])
        checked += 1
        if not ok:
            cannot.append(f"{c['experiment']}: {c['metric']} ({claim.text()}): {how}")
    assert checked, f"{paper}: no claim evaluated"
    assert not cannot, f"{len(cannot)} claim(s) of {paper} cannot come out contradicted:\n" + "\n".join(cannot)
