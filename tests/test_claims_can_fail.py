"""Every claim of every registered experiment can come out contradicted.

Each claim of the default reading's quick form is evaluated again on per-seed values built
from the measured ones to contradict it (:func:`ecnlab.experiments.verdict.contradicting`):
a direction claim with its arms swapped (and, where the arms tie, b moved to the wrong side
of a past the smallest effect that counts); a size claim on the null effect a = b (an
equality claim on a/b far outside its band); a value claim with the measured quantity halved
or set to zero (``at_least``, ``matches``) or doubled and raised past the bound
(``at_most``); a count is never made negative (a raised past b instead). A claim that holds or
stays inconclusive on all of them fails here, unless its experiment declares that the mechanism
fixes its outcome (``claim(..., fixed="<why>")``: shown as "fixed by the mechanism" and counted
apart, no finding).

What it catches: a rule that cannot reach "contradicted" (∞ against a finite value read as a
tie, as the tie rule once did; a smallest effect no difference can pass), a size band that
holds the null effect, a bound the measured quantity satisfies whatever it does (≥ 0 on a
count), and that the summary carries what is needed to recompute each claim (its kind and
per-seed values).

What it cannot catch: a claim whose outcome the mechanism fixes while the values built against
it stay values a run could give in principle (EECN's drops under a marker that drops only a
full buffer its own CL(2) keeps from filling): those are found by reading the mechanism beside
the full forms' arms constant in every seed (every row states such an arm) and declared
``fixed``; a measurement function that measures the wrong thing (UNO Fig. 7's UDP
wire bytes added to TCP payload over payload capacity, which the UDP flow alone pushes past
the bound), a claim tested on another figure's runs, or a claim the paper does not make.
Those need a reader with the paper beside the code.

Every other reading's claims are checked too: a reading of an analysis axis on the default
reading's runs (its own), a reading of a run axis on its own runs of one seed (run here, the
values cycled to ten seeds by the check), or, where that costs too much (``OWN_RUNS_SLOW``),
on the default reading's runs standing in for its own (:mod:`ecnlab.experiments._standins`);
where both are made, the claims on its own runs and on stand-ins are compared
(``test_stand_ins_make_the_claims_of_the_own_runs``). The same analysis checks that every
claim of every reading takes its per-seed values from ``RunSet.per_seed`` (a plain dict knows
nothing of its runs' stalls).

The experiments whose quick form is already run by their paper's tests share it
(``quick_reproduction``); APCC's runs here with one seed per configuration (the claims are
the same; the values are cycled to ten seeds). HFCC's quick form takes many minutes on two
cores, so it runs here only with ``ECNLAB_SLOW_TESTS=1``; in every run the same check is made
on the claims of its recorded every-reading form (bench/results/parts/, ten seeds, every
reading, nothing run), and every reproduction evaluates it on each of its claims and flags
those that cannot fail in the report ("cannot come out contradicted")."""

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
    return Claim(kind["kind"], target=number(kind.get("target")), within=kind.get("within"), min_effect=kind.get("min_effect") if kind.get("tests") in Claim.MARGINED else None, null_ok=kind.get("null_ok") or False, count_spread=kind.get("count_spread"))


#: Papers whose quick form is too slow for every CI run, with its cost.
SLOW = {"hfcc": "quick form: many minutes on two cores"}


def marks(p: str):
    m = []
    if p in CANNOT_FAIL:
        m.append(pytest.mark.xfail(strict=False, reason=CANNOT_FAIL[p]))
    if p in SLOW and not os.environ.get("ECNLAB_SLOW_TESTS"):
        m.append(pytest.mark.skip(reason=f"{SLOW[p]}; run with ECNLAB_SLOW_TESTS=1"))
    return pytest.param(p, marks=m)


def recheck(comps, where: str) -> tuple[int, list[str]]:
    """Decides each recorded claim again on values built against it (``can_fail`` on its
    per-seed values): how many were checked, and those that cannot come out contradicted. A
    claim passes because it can, or because its experiment declares that the mechanism fixes
    its outcome (then it is counted apart, no finding). The recomputed answer must be the one
    the summary recorded."""
    cannot, checked = [], 0
    for c in comps:
        if not c.get("kind"):
            continue
        claim = as_claim(c["kind"])
        ps = c["per_seed"]
        a = {int(s): number(v) for s, v in ps["a"].items()}
        b = None if ps["b"] is None else {int(s): number(v) for s, v in ps["b"].items()}
        ok, how = can_fail(claim, a, b)
        assert ok == c["can_fail"]["ok"], (where, c.get("experiment"), c["metric"])
        checked += 1
        if not ok and not c.get("fixed"):
            cannot.append(f"{c.get('experiment', where)}: {c['metric']} ({claim.text()}): {how}")
    return checked, cannot


@pytest.mark.parametrize("paper", [marks(p) for p in PAPERS])
def test_every_claim_can_come_out_contradicted(paper, quick_reproduction):
    _, summary = quick_reproduction(paper, **PAPERS[paper])
    checked, cannot = recheck(summary["comparisons"], paper)
    assert checked, f"{paper}: no claim evaluated"
    assert not cannot, f"{len(cannot)} claim(s) of {paper} cannot come out contradicted:\n" + "\n".join(cannot)


def _recorded_summaries():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "bench" / "results" / "parts"
    return sorted(root.glob("*/*.summary.json.gz"))


@pytest.mark.parametrize("path", [pytest.param(p, id=f"{p.parent.name}/{p.name.split('.summary')[0]}") for p in _recorded_summaries()])
def test_every_recorded_claim_can_come_out_contradicted(path):
    """The recorded full forms' summaries (bench/results/parts/: HFCC's every-reading form, the
    paper whose quick form is too slow for the check above in every CI run) carry each claim's
    kind and per-seed values under every reading: the same check on them, at ten seeds, with
    nothing run. A recorded claim that cannot fail (or whose recorded ``can_fail`` the check no
    longer gives) fails here."""
    import gzip
    import json

    summary = json.loads(gzip.decompress(path.read_bytes()))
    checked, cannot = 0, []
    for section in summary["experiments"]:
        for reading, comps in section["by_reading"].items():
            n, bad = recheck(comps, f"{section['experiment']} [{reading}]")
            checked += n
            cannot += bad
    assert checked, f"{path.name}: no claim evaluated"
    assert not cannot, f"{len(cannot)} recorded claim(s) cannot come out contradicted:\n" + "\n".join(cannot)


# ------------------------------------------------------------------ every reading


def default_runs(out, section) -> dict:
    """The default reading's runs of one experiment of a reproduction, by run name."""
    from ecnlab.results import read_run_dir

    prefix = section["experiment"] + "-"
    return {k[len(prefix):]: read_run_dir(out / d) for k, d in section["run_dirs"]["default"].items()}


#: Papers whose run-axis readings are too costly to run here, even one seed of each: their
#: claims are checked on the default reading's runs standing in for each reading's own
#: (``_standins.stand_in``), unless ECNLAB_SLOW_TESTS=1. The cost measured with `ecnlab
#: reproduce <paper> --quick --seeds 1 --readings all` on 2 shared cores (load 7): UNO 109 s,
#: APCC 146 s (EECN 29 s, MECN 18 s, mix 13 s, core 0: every reading is an analysis one).
OWN_RUNS_SLOW = {"uno": "its run-axis readings' own runs take ~1.8 min (one seed)", "apcc": "its run-axis readings' own runs take ~2.4 min (one seed)"}


def own_runs_here(paper: str) -> bool:
    return paper not in OWN_RUNS_SLOW or bool(os.environ.get("ECNLAB_SLOW_TESTS"))


def under_every_reading(paper: str, quick_reproduction):
    """(experiment, reading, comparisons) for every reading value of every experiment of the
    paper. A reading of an analysis axis is analysed on the default reading's runs (its own);
    a reading that changes the runs on its own runs of one seed (the default's where a
    scenario is the same, the others run here once: :func:`_standins.own_runs`; the check
    cycles the values to ten seeds), or, for the papers of ``OWN_RUNS_SLOW``, on the default
    reading's runs standing in for them. Before, every reading was analysed on stand-ins, so a
    run axis's claims (EECN's marker_owns) were made on another reading's runs."""
    from ecnlab.experiments._standins import claims_differ, comparisons_under, own_runs
    from ecnlab.experiments.base import Reading

    if paper not in _ANALYSED:
        out, summary = quick_reproduction(paper, **PAPERS[paper])
        plans = []
        for section in summary["experiments"]:
            exp = ex.get(section["experiment"])
            runs = default_runs(out, section)
            for rd in Reading.choose(exp.axes, "all"):
                plans.append((exp, runs, rd, section["seeds"]))
        # One seed of every reading's own runs, all run at once; the analysis readings (and
        # the run-axis readings of OWN_RUNS_SLOW's papers) have None: the default's runs.
        mine = own_runs([(e, r, rd, seeds[:1]) for e, r, rd, seeds in plans], True) if own_runs_here(paper) else [None] * len(plans)
        made, differ, compared = [], [], 0
        for (exp, runs, rd, seeds), own in zip(plans, mine):
            if own is None:
                made.append((exp, rd, comparisons_under(exp, runs, True, seeds, rd)))
                continue
            one = seeds[:1]
            comps = comparisons_under(exp, own, True, one, rd)
            compared += 1
            differ += [f"{exp.name} [{rd.name}]: {x}" for x in claims_differ(comps, comparisons_under(exp, runs, True, one, rd))]
            made.append((exp, rd, comps))
        _ANALYSED[paper] = made
        _DIFFER[paper] = (compared, differ)
    return _ANALYSED[paper]


#: Each paper's readings analysed once per session (four tests read them).
_ANALYSED: dict[str, list] = {}
#: Per paper, where a run-axis reading's claims on its own runs differ from those on stand-ins.
_DIFFER: dict[str, tuple[int, list[str]]] = {}


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


@pytest.mark.parametrize("paper", [marks(p) for p in PAPERS])
def test_stand_ins_make_the_claims_of_the_own_runs(paper, quick_reproduction):
    """Where a run-axis reading's own runs are run, its analysis makes the same claims (kind,
    bound, tolerance, smallest effect) on them as on the default reading's runs standing in:
    the evidence that the stand-ins of OWN_RUNS_SLOW's papers check the claims those readings
    make. A claim made only on one of them is listed."""
    if not own_runs_here(paper):
        pytest.skip(f"{OWN_RUNS_SLOW[paper]}; run with ECNLAB_SLOW_TESTS=1")
    under_every_reading(paper, quick_reproduction)
    compared, found = _DIFFER[paper]
    if not compared:
        pytest.skip(f"{paper}: no reading changes the runs")
    assert not found, f"{len(found)} claim(s) of {paper} differ between a reading's own runs and stand-ins:\n" + "\n".join(found)


# ------------------------------------------------------------------ the check itself


def test_can_fail_depends_on_the_claim_not_the_values():
    """Why stand-ins check a reading's claims (OWN_RUNS_SLOW's papers): whether a claim can
    come out contradicted depends on its kind and bounds, not on the values measured — any
    number of seeds, zeros, ∞, missing values, negative values, tied arms — but for an at_most
    claim on values below −(|bound| + 1), which no construction raises past the bound."""
    import math
    import random

    from ecnlab.experiments.verdict import can_fail

    rng = random.Random(7)

    def value(negative: bool):
        r = rng.random()
        if r < 0.1:
            return 0.0
        if r < 0.15:
            return math.inf
        if r < 0.2:
            return None
        v = rng.lognormvariate(0, 2)
        return -v if negative and rng.random() < 0.2 else v

    claims = [
        Claim("less"), Claim("greater"), Claim("less", min_effect=0.3), Claim("ratio", target=0.27, within=0.5),
        Claim("ratio", target=3.0, within=0.25), Claim("approx", within=0.1), Claim("matches", target=16.1, within=0.1),
        Claim("matches", target=-2.0, within=0.1), Claim("at_least", target=0.5), Claim("at_most", target=0.2),
    ]
    for c in claims:
        for _ in range(200):
            a = {s: value(c.kind != "at_most") for s in range(1, rng.randint(1, 10) + 1)}
            b = {s: a[s] if rng.random() < 0.3 else value(True) for s in a} if c.paired else None
            assert can_fail(c, a, b)[0], (c.text(), a, b)
    assert not can_fail(Claim("at_most", target=0.2), {s: -5.0 for s in range(1, 6)})[0]


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


def test_claims_differ_sees_a_claim_set_that_differs():
    """The check behind stand-ins: claims made on a reading's own runs against those made on
    stand-ins. It must see a claim made on one side only, a claim whose kind differs in a field
    its rounded text hides (a target 0.30001 vs 0.3, a count tie rule), and a second claim under
    a metric name already used. Before, nothing exercised it: ``claims_differ = lambda *a: []``
    passed every test."""
    from ecnlab.experiments._standins import claims_differ
    from ecnlab.experiments.base import Comparison
    from ecnlab.experiments.verdict import Claim

    def comp(metric, kind):
        return Comparison(metric, None, None, kind=kind)

    base = [comp("drops", Claim("less")), comp("ratio", Claim("ratio", target=0.3, within=0.25))]
    assert claims_differ(base, list(base)) == []
    assert any("on its own runs only" in x for x in claims_differ(base + [comp("marks", Claim("less"))], base))
    assert any("on stand-ins only" in x for x in claims_differ(base, base + [comp("marks", Claim("less"))]))
    assert claims_differ([base[0], comp("ratio", Claim("ratio", target=0.30001, within=0.25))], base)
    assert claims_differ([comp("drops", Claim("less", count_spread=2.0)), base[1]], base)
    assert claims_differ(base + [comp("drops", Claim("greater"))], base)


@pytest.mark.parametrize("paper", [marks(p) for p in PAPERS])
def test_every_reading_judges_the_defaults_claims_each_under_its_own_metric(paper, quick_reproduction):
    """The guards a reproduction applies after every reading's runs and analysis, applied here
    to every reading's claims (on stand-ins where OWN_RUNS_SLOW): each reading judges the
    default's claims (paired by metric) and no two claims of a reading share a metric (the
    second would take the first's place in the table of verdicts by reading). Before, a full
    form met them first, after hours of runs."""
    by_exp: dict[str, tuple] = {}
    for exp, rd, comps in under_every_reading(paper, quick_reproduction):
        by_exp.setdefault(exp.name, (exp, {}))[1][rd.name] = [{"metric": c.metric} for c in comps]
    assert by_exp
    for exp, by_reading in by_exp.values():
        ex.check_claims_unique(exp, by_reading)
        ex.check_claims_pair_across_readings(exp, by_reading)


def test_the_reading_guards_refuse_a_repeated_or_unpaired_metric():
    """What the test above relies on: a metric named twice within a reading, or one a reading
    judges that the default does not, is an error naming the reading."""
    from ecnlab.errors import ExperimentError

    exp = _ReadingBound()
    ok = {"default": [{"metric": "a"}, {"metric": "b"}], "bound=0.0": [{"metric": "b"}, {"metric": "a"}]}
    ex.check_claims_unique(exp, ok)
    ex.check_claims_pair_across_readings(exp, ok)
    with pytest.raises(ExperimentError, match=r"under the reading bound=0.0 'a' names 2 claims"):
        ex.check_claims_unique(exp, {**ok, "bound=0.0": [{"metric": "a"}, {"metric": "a"}, {"metric": "b"}]})
    with pytest.raises(ExperimentError, match=r"under the reading bound=0.0 1 claim\(s\) have no counterpart"):
        ex.check_claims_pair_across_readings(exp, {**ok, "bound=0.0": [{"metric": "a"}, {"metric": "b"}, {"metric": "c at 0.0"}]})
