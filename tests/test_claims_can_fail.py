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
the bound), a claim tested on another figure's runs, or a claim the paper does not make.
Those need a reader with the paper beside the code.

Every other reading's claims are checked too, without running that reading: its analysis is
given the default reading's runs as stand-ins for its own (:mod:`ecnlab.experiments._standins`),
which makes the claims that reading makes (a tolerance that is a reading, a claim made under
one value only); the same stand-in analysis checks that every claim of every reading takes its
per-seed values from ``RunSet.per_seed`` (a plain dict knows nothing of its runs' stalls).

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


# ------------------------------------------------------------------ every reading


def default_runs(out, section) -> dict:
    """The default reading's runs of one experiment of a reproduction, by run name."""
    from ecnlab.results import read_run_dir

    prefix = section["experiment"] + "-"
    return {k[len(prefix):]: read_run_dir(out / d) for k, d in section["run_dirs"]["default"].items()}


def under_every_reading(paper: str, quick_reproduction):
    """(experiment, reading, comparisons) for every reading value of every experiment of the
    paper, each analysed on the default reading's runs standing in for its own
    (:mod:`ecnlab.experiments._standins`): nothing more is run."""
    from ecnlab.experiments._standins import comparisons_under
    from ecnlab.experiments.base import Reading

    if paper not in _ANALYSED:
        out, summary = quick_reproduction(paper, **PAPERS[paper])
        made = []
        for section in summary["experiments"]:
            exp = ex.get(section["experiment"])
            runs = default_runs(out, section)
            for rd in Reading.choose(exp.axes, "all"):
                made.append((exp, rd, comparisons_under(exp, runs, True, section["seeds"], rd)))
        _ANALYSED[paper] = made
    return _ANALYSED[paper]


#: Each paper's readings analysed once per session (two tests read them).
_ANALYSED: dict[str, list] = {}


@pytest.mark.parametrize("paper", [marks(p) for p in PAPERS])
def test_every_claim_under_every_reading_can_come_out_contradicted(paper, quick_reproduction):
    """The claims each reading makes (a tolerance that is a reading, a claim made under one
    value only) are checked like the default's. Before, only the default reading's were."""
    from ecnlab.experiments._standins import cannot_fail

    found, readings = [], 0
    for exp, rd, comps in under_every_reading(paper, quick_reproduction):
        readings += 1
        found += [f"{exp.name} [{rd.name}]: {x}" for x in cannot_fail(comps)]
    assert readings, f"{paper}: no reading analysed"
    assert not found, f"{len(found)} claim(s) of {paper} cannot come out contradicted under some reading:\n" + "\n".join(found)


@pytest.mark.parametrize("paper", [marks(p) for p in PAPERS])
def test_every_claim_takes_its_values_from_per_seed(paper, quick_reproduction):
    """A claim whose per-seed values are a plain dict (not RunSet.per_seed's SeedValues, nor
    their derive()) knows nothing of its runs' stalls and starved flows: every claim of every
    reading must take them from RunSet.per_seed."""
    from ecnlab.experiments._standins import stalls_unchecked

    found = []
    for exp, rd, comps in under_every_reading(paper, quick_reproduction):
        found += [f"{exp.name} [{rd.name}]: {x}" for x in stalls_unchecked(comps)]
    assert not found, f"{len(found)} claim(s) of {paper} bypass RunSet.per_seed:\n" + "\n".join(sorted(set(found)))


# ------------------------------------------------------------------ the check itself


class _ReadingBound(ex.Experiment):
    """A count claimed ≥ a bound that is a reading: ≥ 0.5 by default, ≥ 0 (which a count
    always is) under ``bound = 0``; and, under ``taken = plain``, a claim on a plain dict."""

    name = "toy.reading_bound"
    title = "a claim that only one reading makes unfalsifiable"
    quick_seeds = 5
    no_bottleneck = "UDP only: nothing to stall"
    axes = (
        ex.ReadingAxis("bound", (0.5, 0.0), "a bound", affects="analysis"),
        ex.ReadingAxis("taken", ("per_seed", "plain"), "how the values are taken", affects="analysis"),
        ex.ReadingAxis("rival", ("tagged", "untagged"), "whether the claim on MLCP's runs says so", affects="analysis"),
    )

    def runs(self, quick, seeds, reading):
        import ecnlab

        def udp(rate):
            return ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="1s").add_udp_flow("l0", "r0", rate=rate, name="u")

        return ex.for_seeds({"udp": udp("5Mbps"), "mlcp": udp("8Mbps")}, seeds)

    def analyze(self, runs, ctx):
        from ecnlab.experiments.base import claim

        v = runs.per_seed("udp", lambda r: r.port("rl->rr")["utilization"])
        if ctx.reading.taken == "plain":
            v = dict(v)
        m = runs.per_seed("mlcp", lambda r: r.port("rl->rr")["utilization"])
        return [
            claim("link use", Claim("at_least", target=ctx.reading.bound), v),
            claim("link use below MLCP's", Claim("less"), runs.per_seed("udp", lambda r: r.port("rl->rr")["utilization"]), m, rival="mlcp" if ctx.reading.rival == "tagged" else None),
        ]


def test_the_check_finds_what_only_another_reading_gets_wrong(tmp_path, monkeypatch):
    from ecnlab.experiments._standins import cannot_fail, comparisons_under, rivals_untagged, stalls_unchecked
    from ecnlab.experiments.base import Reading
    from ecnlab.results import read_run_dir

    exp = _ReadingBound()
    monkeypatch.setitem(ex._REGISTRY, exp.name, exp)
    summary = ex.reproduce(exp.name, tmp_path / "out", quick=True)
    (section,) = summary["experiments"]
    # The default reading's claim can fail: the quick form's own check passes it.
    assert all(c["can_fail"]["ok"] for c in summary["comparisons"])
    runs = {k[len(exp.name) + 1 :]: read_run_dir(tmp_path / "out" / d) for k, d in section["run_dirs"]["default"].items()}
    found = {rd.name: (cannot_fail(cs), stalls_unchecked(cs), rivals_untagged(cs)) for rd in Reading.choose(exp.axes, "all") for cs in [comparisons_under(exp, runs, True, section["seeds"], rd)]}
    assert found["default"] == ([], [], [])
    assert len(found["bound=0.0"][0]) == 1 and "a ≥ 0" in found["bound=0.0"][0][0]
    assert found["taken=plain"][0] == [] and len(found["taken=plain"][1]) == 1
    assert found["rival=untagged"][:2] == ([], []) and len(found["rival=untagged"][2]) == 1 and "(mlcp) runs mlcp" in found["rival=untagged"][2][0]


@pytest.mark.parametrize("paper", [marks(p) for p in PAPERS])
def test_every_claim_on_a_reconstructed_rival_says_so(paper, quick_reproduction):
    """A claim with an arm on MLCP's, BMCC's or CLEAN's runs (rivals we built without their
    papers) carries rival=, so the headline counts it apart, under every reading."""
    from ecnlab.experiments._standins import rivals_untagged

    found = []
    for exp, rd, comps in under_every_reading(paper, quick_reproduction):
        found += [f"{exp.name} [{rd.name}]: {x}" for x in rivals_untagged(comps)]
    assert not found, f"{len(found)} claim(s) of {paper} on a reconstructed rival's runs are counted as any other:\n" + "\n".join(sorted(set(found)))
