"""The framework's guards, each on a constructed bad experiment: every number (∞ included)
survives summary.json; a claim decided on stalled runs is not decided; a reconstructed
rival's claims are counted apart; a claim the mechanism fixes is shown and counted apart, and
an arm constant in every seed is stated."""

from __future__ import annotations

import json
import math

import pytest

import ecnlab
from ecnlab import experiments as ex
from ecnlab.experiments.base import claim, incomparable
from ecnlab.experiments.verdict import Claim


def udp(rate: str = "5Mbps", seed: int = 1) -> ecnlab.Scenario:
    s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="1s", seed=seed)
    return s.add_udp_flow("l0", "r0", rate=rate, pattern="poisson", name="u")


class _Never(ex.Experiment):
    """One arm never reaches the state (∞ in every seed), the other does."""

    name = "toy.never"
    title = "a state one arm never reaches"
    quick_seeds = 5
    no_bottleneck = "UDP only: nothing to stall"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp()}, seeds)

    def analyze(self, runs, ctx):
        reached = runs.per_seed("half", lambda r: 15.0)
        never = runs.per_seed("half", lambda r: math.inf)
        return [claim("time to the state: reached vs never", Claim("less"), reached, never, ours=runs.stat("half", lambda r: math.inf))]


def test_infinity_survives_summary_json(tmp_path, monkeypatch):
    """Before: json.dumps(allow_nan=False) raised "Out of range float values are not JSON
    compliant" at the end of the reproduction, and the claim was a tie in every seed."""
    monkeypatch.setitem(ex._REGISTRY, "toy.never", _Never())
    summary = ex.reproduce("toy.never", tmp_path / "out", quick=True)
    (c,) = summary["comparisons"]
    assert c["verdict"] == "holds" and c["tests"] == "direction"
    assert c["ours"]["mean"] == "inf" and c["per_seed"]["b"]["1"] == "inf"
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == summary
    assert "| toy.never | time to the state" in (tmp_path / "out" / "summary.md").read_text()


# ------------------------------------------------------------------ constructed bad experiments


def tcp_dumbbell(rcv_buf: int | None = None, seed: int = 1) -> ecnlab.Scenario:
    """One bulk NewReno flow for 3 s; a 2000-byte receive window holds it to ~2 % of the
    link (a stall)."""
    d = {
        "duration": "3s",
        "seed": seed,
        "topology": {"kind": "dumbbell", "left": 1, "right": 1, "access": {"rate": "1Gbps", "delay": "1ms"}, "bottleneck": {"rate": "100Mbps", "delay": "5ms"}},
        "flows": [{"src": "l0", "dst": "r0", "cc": "newreno", "name": "bulk"}],
        "measure": {"interval": "10ms", "sample_flows": True},
    }
    if rcv_buf is not None:
        d["tcp"] = {"rcv_buf": rcv_buf}
    return ecnlab.Scenario.from_dict(d)


class _Base(ex.Experiment):
    title = "a constructed experiment"
    quick_seeds = 5

    def bottleneck(self, run_name):
        return "rl->rr"


class _StalledRival(_Base):
    """"a has less RTT than b": true in every seed, but b stalls (its window holds it to
    2 % of the link)."""

    name = "toy.stalled"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"ok": tcp_dumbbell(), "stuck": tcp_dumbbell(rcv_buf=2000)}, seeds)

    def analyze(self, runs, ctx):
        rtt = lambda r: r.flow("bulk")["rtt_mean_s"]  # noqa: E731
        goodput = lambda r: r.flow("bulk")["goodput_bps"]  # noqa: E731
        return [
            claim("mean RTT: ok vs stuck", Claim("less"), runs.per_seed("ok", rtt), runs.per_seed("stuck", rtt)),
            claim("goodput: ok vs stuck (the stall is the point)", Claim("greater"), runs.per_seed("ok", goodput), runs.per_seed("stuck", goodput), about_stall=True),
        ]


def test_a_claim_decided_on_stalled_runs_is_not_decided(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toy.stalled", _StalledRival())
    summary = ex.reproduce("toy.stalled", tmp_path / "out", quick=True)
    rtt, goodput = summary["comparisons"]
    assert rtt["verdict"] == "inconclusive" and rtt["decision"]["unflagged"] == "holds"
    assert rtt["decision"]["flags"][0].startswith("decided on stalled runs: b (stuck) seed 1: rl->rr carried")
    assert "decided on stalled runs (5)" in rtt["decision"]["reason"]
    # A claim about the stall is decided on it.
    assert goodput["verdict"] == "holds" and goodput["about_stall"] is True
    assert len(summary["stalls"]) == 5 and {s["run"] for s in summary["stalls"]} == {f"toy.stalled-stuck-s{i}" for i in range(1, 6)}
    # The starved flow is listed per run and flags the claims on its runs.
    assert {s["run"] for s in summary["starved"]} == {f"toy.stalled-stuck-s{i}" for i in range(1, 6)}
    assert any(f.startswith("starved flows: b (stuck) seed 1: bulk") for f in goodput["decision"]["flags"])
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "FLAG decided on stalled runs" in md and "## Starved flows (5)" in md


class _NoBottleneck(ex.Experiment):
    name = "toy.nobottleneck"
    title = "declares neither a bottleneck nor why it has none"
    quick_seeds = 5

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp()}, seeds)

    def analyze(self, runs, ctx):
        return []


def test_an_experiment_must_name_its_bottleneck(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toy.nobottleneck", _NoBottleneck())
    with pytest.raises(ecnlab.ExperimentError, match="toy.nobottleneck: declares no bottleneck"):
        ex.reproduce("toy.nobottleneck", tmp_path / "out", quick=True)

    class NoPortForARun(_NoBottleneck):
        def bottleneck(self, run_name):
            return None

    monkeypatch.setitem(ex._REGISTRY, "toy.nobottleneck", NoPortForARun())
    with pytest.raises(ecnlab.ExperimentError, match=r"bottleneck\('half-s1'\) names no port"):
        ex.reproduce("toy.nobottleneck", tmp_path / "out", quick=True)

    class WrongPort(_NoBottleneck):
        def bottleneck(self, run_name):
            return "r1->r2"

    monkeypatch.setitem(ex._REGISTRY, "toy.nobottleneck", WrongPort())
    with pytest.raises(ecnlab.ExperimentError, match="'r1->r2', which run half-s1 has no port of"):
        ex.reproduce("toy.nobottleneck", tmp_path / "out", quick=True)
    assert not (tmp_path / "out").exists()


class _DeadReading(_Base):
    """A reading the runs never read (as UNO's ip_id once was for one arm), and an analysis
    reading the analysis never reads."""

    name = "toy.dead"
    axes = (
        ex.ReadingAxis("ip_id", ("sequential", "random"), "the runs forget it"),
        ex.ReadingAxis("window", (1.0, 2.0), "the analysis forgets it", affects="analysis"),
    )

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp()}, seeds)

    def analyze(self, runs, ctx):
        util = runs.per_seed("half", lambda r: r.port("rl->rr")["utilization"])
        return [claim("utilisation", Claim("matches", target=0.5, within=0.1), util)]


def test_a_reading_must_change_a_run_or_a_comparison(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toy.dead", _DeadReading())
    with pytest.raises(ecnlab.ExperimentError, match="toy.dead: the reading ip_id = 'random' leaves every run's scenario identical"):
        ex.reproduce("toy.dead", tmp_path / "out", quick=True, readings="ip_id=random")
    with pytest.raises(ecnlab.ExperimentError, match="toy.dead: the reading window = 2.0 changes no comparison"):
        ex.reproduce("toy.dead", tmp_path / "out", quick=True, readings="window=2.0")
    # The default reading alone runs.
    assert ex.reproduce("toy.dead", tmp_path / "out", quick=True)["verdicts"]["holds"] == 1


class _SameRuns(_Base):
    """Two configurations that are the same runs, compared as if they differed."""

    name = "toy.same"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"random": udp(), "sequential": udp()}, seeds)

    def analyze(self, runs, ctx):
        util = lambda r: r.port("rl->rr")["utilization"]  # noqa: E731
        return [claim("random vs sequential", Claim("approx", within=0.05), runs.per_seed("random", util), runs.per_seed("sequential", util))]


def test_two_arms_on_the_same_runs_are_not_comparable(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toy.same", _SameRuns())
    (c,) = ex.reproduce("toy.same", tmp_path / "out", quick=True)["comparisons"]
    assert c["verdict"] == "not comparable" and c["decision"]["unflagged"] == "holds"
    assert "are the same runs" in c["decision"]["reason"]


class _MeasuredDifferently(_Base):
    """"a marks fewer packets than b", where a's count is congestion marks and b's is a load
    code written on every packet: a < b in every seed, and meaningless."""

    name = "toy.measures"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"marks": udp("2Mbps"), "codes": udp("6Mbps")}, seeds)

    def analyze(self, runs, ctx):
        count = lambda r: float(r.port("rl->rr")["dequeued_pkts"])  # noqa: E731
        marks, codes = runs.per_seed("marks", count, measures="congestion marks"), runs.per_seed("codes", count, measures="load codes")
        same = runs.per_seed("codes", count, measures="congestion marks")
        return [
            claim("declared on the values", Claim("less"), marks, codes),
            claim("declared on the claim", Claim("less"), runs.per_seed("marks", count), runs.per_seed("codes", count), measures=("congestion marks", "load codes")),
            claim("the same quantity", Claim("less"), marks, same),
        ]


def test_two_arms_that_measure_different_quantities_are_not_comparable(tmp_path, monkeypatch):
    """Before, each was decided ("holds": 5 of 5 seeds) like the claim on one quantity."""
    monkeypatch.setitem(ex._REGISTRY, "toy.measures", _MeasuredDifferently())
    a, b, same = ex.reproduce("toy.measures", tmp_path / "out", quick=True)["comparisons"]
    for c in (a, b):
        assert c["verdict"] == "not comparable" and c["decision"]["unflagged"] == "holds", c
        assert "counts congestion marks" in c["decision"]["reason"] and "counts load codes" in c["decision"]["reason"]
        assert c["measures"] == {"a": "congestion marks", "b": "load codes"}
    assert same["verdict"] == "holds" and same["measures"] == {"a": "congestion marks", "b": "congestion marks"}


class _Headline(_Base):
    """A family of thirteen claims at chance level (two 'holds' on five seeds), one claim made
    twice, and claims against a reconstructed rival."""

    name = "toy.headline"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp()}, seeds)

    def analyze(self, runs, ctx):
        one = runs.per_seed("half", lambda r: 1.0)

        def b(i):
            # Two arms above a in every seed (p = 1/32 each), eleven at chance (3 of 5).
            return runs.per_seed("half", lambda r: 2.0 + i if i < 2 or r.meta["seed"] in (1, 2, 4) else 0.5 / (i + 1))

        fam = [claim(f"x at min_th {i}", Claim("less"), one, b(i), family="per min_th") for i in range(13)]
        three = runs.per_seed("half", lambda r: 30.0)
        twice = [claim("a below b", Claim("less"), one, three), claim("b above a", Claim("greater"), three, one)]
        rival = [
            claim("HFCC vs MLCP", Claim("less"), one, runs.per_seed("half", lambda r: 40.0), rival="mlcp"),
            claim("HFCC vs VCP", Claim("less"), one, runs.per_seed("half", lambda r: 50.0), rival="vcp"),
        ]
        return fam + twice + rival


def test_the_headline_counts_families_duplicates_and_reconstructed_rivals_apart(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toy.headline", _Headline())
    s = ex.reproduce("toy.headline", tmp_path / "out", quick=True)
    comps = s["comparisons"]
    fam = [c for c in comps if c["family"] == "per min_th"]
    assert [c["verdict"] for c in fam[:2]] == ["holds", "holds"] and all(c["counted"] == "inconclusive" for c in fam)
    assert fam[0]["decision"]["family_size"] == 13
    assert comps[14]["duplicate_of"] == "a below b"
    assert comps[15]["rival_reconstructed"] is True and comps[16]["rival_reconstructed"] is False
    # The family of thirteen once, inconclusive; "a below b" once; HFCC vs VCP; MLCP apart.
    assert s["verdicts"] == {"holds": 2, "contradicted": 0, "inconclusive": 1, "not comparable": 0}
    assert s["verdicts_vs_reconstructed"] == {"holds": 1, "contradicted": 0, "inconclusive": 0, "not comparable": 0}
    assert s["counted_once"] == 1 and s["reconstructed_rivals"]["mlcp"]
    assert s["headline_units"] == {"claims": 3, "families": 1, "claims_in_families": 13, "repeats_in_families": 0, "repeats": 1}
    html = (tmp_path / "out" / "report.html").read_text()
    assert "(Holm, 13)" in html and "a rival we reconstructed" in html


class _Fixed(_Base):
    """A marker that drops nothing against RED's drops (varying by seed), declared fixed by the
    mechanism; the same undeclared; two constant arms; a declaration the runs do not bear out;
    a fixed claim in a family."""

    name = "toy.fixed"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"red": udp("9Mbps"), "marker": udp("2Mbps")}, seeds)

    def analyze(self, runs, ctx):
        drops = lambda r: float(r.port("rl->rr")["dequeued_pkts"])  # noqa: E731 (varies by seed: Poisson)
        never = runs.per_seed("marker", lambda r: 0.0)
        red = runs.per_seed("red", drops)
        why = "the marker drops only a full buffer, which these flows never fill"
        return [
            claim("drops: marker vs RED (declared)", Claim("less"), never, red, fixed=why),
            claim("drops: marker vs RED (undeclared)", Claim("less"), never, runs.per_seed("red", lambda r: drops(r) + 1)),
            claim("one outcome repeated", Claim("less"), runs.per_seed("marker", lambda r: 1.0), runs.per_seed("red", lambda r: 30.0)),
            claim("declared, but both arms vary", Claim("less"), runs.per_seed("marker", drops), runs.per_seed("red", lambda r: 3 * drops(r)), fixed=why),
            claim("fixed, in a family", Claim("less"), never, runs.per_seed("red", lambda r: drops(r) + 2), family="per load", fixed=why),
            claim("decided, in that family", Claim("less"), runs.per_seed("marker", drops), runs.per_seed("red", lambda r: 5 * drops(r)), family="per load"),
            claim("a count that cannot fail, declared", Claim("at_least", target=0.0), never, fixed=why),
        ]


def test_claims_the_mechanism_fixes_and_constant_arms_say_so(tmp_path, monkeypatch):
    """Before: "drops: marker vs RED" held 5 of 5 like any finding, and nothing in its row said
    the marker's arm was 0 in every seed; a claim that cannot come out contradicted could not
    be declared fixed (the can-fail check failed it)."""
    from ecnlab.experiments._standins import cannot_fail

    monkeypatch.setitem(ex._REGISTRY, "toy.fixed", _Fixed())
    s = ex.reproduce("toy.fixed", tmp_path / "out", quick=True)
    declared, undeclared, repeated, unborne, in_family, decided, bound = s["comparisons"]
    # Declared: shown as fixed, with what the runs say, and counted apart.
    assert declared["verdict"] == "fixed by the mechanism" and declared["decision"]["unflagged"] == "holds"
    assert declared["fixed"].startswith("the marker drops only") and "the runs say holds" in declared["decision"]["reason"]
    assert declared["decision"]["constant"] == {"a": 0.0}
    # Undeclared: decided as before, its row saying the constant arm.
    assert undeclared["verdict"] == "holds" and undeclared["decision"]["constant"] == {"a": 0.0}
    assert not any("seeds do not vary" in f for f in undeclared["decision"]["flags"])
    # Both arms constant: decided, and flagged (one outcome repeated).
    assert repeated["verdict"] == "holds" and repeated["decision"]["constant"] == {"a": 1.0, "b": 30.0}
    assert any("the seeds do not vary this comparison" in f for f in repeated["decision"]["flags"])
    # A declaration the runs do not bear out is flagged.
    assert unborne["verdict"] == "fixed by the mechanism" and any("check the declaration" in f for f in unborne["decision"]["flags"])
    # A fixed claim is not one of its family's tests.
    assert in_family["counted"] == "fixed by the mechanism" and decided["decision"]["family_size"] == 1
    # A fixed claim that cannot come out contradicted is not listed by the check.
    assert bound["can_fail"]["ok"] is False and bound["verdict"] == "fixed by the mechanism"
    assert not any("cannot come out contradicted" in f for f in bound["decision"]["flags"])
    assert s["verdicts"] == {"holds": 3, "contradicted": 0, "inconclusive": 0, "not comparable": 0}
    assert s["verdicts_fixed_by_mechanism"] == {"holds": 3, "contradicted": 0, "inconclusive": 1, "not comparable": 0}
    assert s["experiments"][0]["verdicts_fixed_by_mechanism"]["default"] == s["verdicts_fixed_by_mechanism"]
    assert s["decided_on_constant_arms"] == 1
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "a = 0 in every seed (5)" in md and "fixed by the mechanism (default)" in md and "| 3 / 0 / 1 / 0 |" in md
    assert "a = 1 and b = 30 in every seed (5)" in md
    html = (tmp_path / "out" / "report.html").read_text()
    assert "fixed by the mechanism (default)" in html
    # The can-fail check (every reading): the undeclared constant claims can fail; the fixed
    # bound is accepted because it is declared.
    exp = _Fixed()
    from ecnlab.experiments.base import Context, RunSet
    from ecnlab.report import Html
    from ecnlab.results import read_run_dir

    (section,) = s["experiments"]
    rs = RunSet({k[len(exp.name) + 1 :]: read_run_dir(tmp_path / "out" / d) for k, d in section["run_dirs"]["default"].items()}, experiment=exp)
    comps = exp.analyze(rs, Context(quick=True, seeds=section["seeds"], doc=Html("", fig_dir=None), experiment=exp.name, draw=False))
    assert cannot_fail(comps) == []
    comps[-1] = claim("a count that cannot fail", Claim("at_least", target=0.0), rs.per_seed("marker", lambda r: 0.0))
    assert len(cannot_fail(comps)) == 1


def test_a_fixed_claim_needs_its_reason():
    with pytest.raises(ValueError, match="fixed takes the reason"):
        claim("x", Claim("less"), {1: 0.0}, {1: 1.0}, fixed="")


class _Families(_Base):
    """A sweep over one axis is one finding: a family of ten claims that all hold, a family
    whose claims hold at nine points and are contradicted at one, and a family tied at every
    point but one."""

    name = "toy.families"
    quick_seeds = 10  # Holm over ten claims needs p <= 0.005: ten agreeing seeds (p = 1/1024)

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp()}, seeds)

    def analyze(self, runs, ctx):
        one = runs.per_seed("half", lambda r: 1.0)
        two = runs.per_seed("half", lambda r: 2.0)
        half = runs.per_seed("half", lambda r: 0.5)
        out = [claim(f"a below b at buffer {i}", Claim("less"), one, two, family="over buffers") for i in range(10)]
        out += [claim(f"a below c at buffer {i}", Claim("less"), one, two if i else half, family="one point against") for i in range(10)]
        out += [claim(f"a below d at buffer {i}", Claim("less"), one, one if i else two, family="ties") for i in range(10)]
        return out


def test_a_family_counts_once_by_its_verdict_as_one_claim(tmp_path, monkeypatch):
    """Before, each claim of a family counted by its own verdict under Holm's correction:
    10 + 9 + 1 holds and 1 contradicted and 9 inconclusive from three sweeps."""
    monkeypatch.setitem(ex._REGISTRY, "toy.families", _Families())
    s = ex.reproduce("toy.families", tmp_path / "out", quick=True)
    assert s["verdicts"] == {"holds": 1, "contradicted": 1, "inconclusive": 1, "not comparable": 0}
    # Nine of each family's ten claims repeat its first claim's per-seed values: the families
    # still count once each, and the sentence says how many of their members are repeats.
    assert s["headline_units"] == {"claims": 0, "families": 3, "claims_in_families": 30, "repeats_in_families": 27, "repeats": 0}
    assert "(standing for 30 claims, 27 of them on the same per-seed values as an earlier claim)" in ex.units_text(s["headline_units"])
    comps = s["comparisons"]
    # Every claim keeps its row and its own verdict; the family's verdict is beside it.
    assert len(comps) == 30 and [c["verdict"] for c in comps[10:12]] == ["contradicted", "holds"]
    whole = {c["family"]: c["family_whole"] for c in comps}
    assert whole["one point against"] == {"verdict": "contradicted", "reason": "contradicted at 1 of its points (family split: 9 hold, 1 contradicted, 0 inconclusive of 10)"}
    assert whole["ties"]["reason"] == "family split: 1 hold, 0 contradicted, 9 inconclusive of 10"
    assert [c["counts_family"] for c in comps[:3]] == [True, False, False]
    md = (tmp_path / "out" / "summary.md").read_text()
    rule = next(x for x in md.splitlines() if x.startswith("Rule: "))
    assert "counts the family once" in rule and "contradicted when any is contradicted" in rule
    assert "(family: contradicted)" in md and "Counted: 0 claims one by one and 3 families once each" in md


class _SameValues(_Base):
    """Two configurations whose runs are byte-identical (a buffer the UDP flow never fills,
    100 or 1000 packets), each compared with the same rival: one claim made twice under two
    configuration names."""

    name = "toy.samevalues"

    def runs(self, quick, seeds, reading):
        def buffered(limit):
            s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="1s", queue={"kind": "droptail", "limit": limit})
            return s.add_udp_flow("l0", "r0", rate="3Mbps", pattern="poisson", name="u")

        return ex.for_seeds({"x-100": buffered(100), "x-1000": buffered(1000), "y": udp("6Mbps")}, seeds)

    def analyze(self, runs, ctx):
        util = lambda r: r.port("rl->rr")["utilization"]  # noqa: E731
        y = runs.per_seed("y", util)
        return [
            claim("utilisation at 100 packets: x vs y", Claim("less"), runs.per_seed("x-100", util), y),
            claim("utilisation at 1000 packets: x vs y", Claim("less"), runs.per_seed("x-1000", util), y),
            claim("y above x at 1000 packets", Claim("greater"), y, runs.per_seed("x-1000", util)),
        ]


def test_a_claim_on_identical_runs_under_another_configuration_name_counts_once(tmp_path, monkeypatch):
    """Before, the key held the arms' configuration names: three holds for one finding."""
    monkeypatch.setitem(ex._REGISTRY, "toy.samevalues", _SameValues())
    s = ex.reproduce("toy.samevalues", tmp_path / "out", quick=True)
    a, b, c = s["comparisons"]
    assert a["per_seed"] == b["per_seed"] and len(set(a["per_seed"]["a"].values())) > 1  # the seeds vary it
    assert a["arms"]["a"] != b["arms"]["a"]
    assert b["duplicate_of"] == a["metric"] and c["duplicate_of"] == a["metric"]
    assert s["verdicts"] == {"holds": 1, "contradicted": 0, "inconclusive": 0, "not comparable": 0} and s["counted_once"] == 2


def test_constant_values_are_the_same_claim_only_on_the_same_configurations():
    """0 drops in every seed of two different configurations says nothing of their runs."""
    from ecnlab.experiments import mark_duplicates

    def row(metric, a, b, cfg_a):
        kind = Claim("less").to_json()
        return {"metric": metric, "kind": kind, "tests": "direction", "unit": "packets", "arms": {"a": cfg_a, "b": "y"}, "per_seed": {"a": a, "b": b}, "verdict": "holds"}

    zeros, fives, varied = {"1": 0.0, "2": 0.0}, {"1": 5.0, "2": 5.0}, {"1": 5.0, "2": 7.0}
    rows = mark_duplicates([row("p", zeros, fives, "x1"), row("q", zeros, fives, "x2"), row("r", zeros, fives, "x1")])
    assert [r.get("duplicate_of") for r in rows] == [None, None, "p"]
    # b's runs are the same (its values vary), a's are two configurations at 0 in every seed:
    # "VCP drops < ECN's" and "EECN drops < ECN's" are two claims.
    rows = mark_duplicates([row("p", zeros, varied, "x1"), row("q", zeros, varied, "x2"), row("r", varied, varied, "x3"), row("s", varied, varied, "x4")])
    assert [r.get("duplicate_of") for r in rows] == [None, None, None, "r"]


class _OurStatement(_Base):
    """A claim the paper makes and two it does not (a bound we chose), one of them in a
    family."""

    name = "toy.ourstatement"
    quick_seeds = 10

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp()}, seeds)

    def analyze(self, runs, ctx):
        util = runs.per_seed("half", lambda r: r.port("rl->rr")["utilization"])
        why = "the paper says only 'high utilisation'; the bound is ours"
        return [
            claim("utilisation", Claim("matches", target=0.5, within=0.1), util, paper=0.5),
            claim("utilisation above 40 %", Claim("at_least", target=0.4), util, our_statement=why),
            *(claim(f"utilisation above 30 % at {i}", Claim("at_least", target=0.3), util, our_statement=why, family="ours over i") for i in range(3)),
        ]


def test_claims_whose_statement_is_ours_are_marked_and_counted_apart(tmp_path, monkeypatch):
    """Before, claim() had no way to say so (``ours=`` is the statistic a row shows) and the
    bound we chose counted in the headline like the paper's number."""
    monkeypatch.setitem(ex._REGISTRY, "toy.ourstatement", _OurStatement())
    s = ex.reproduce("toy.ourstatement", tmp_path / "out", quick=True)
    paper, ours, *fam = s["comparisons"]
    assert paper["our_statement"] is None and ours["our_statement"].startswith("the paper says only")
    assert s["verdicts"] == {"holds": 1, "contradicted": 0, "inconclusive": 0, "not comparable": 0}
    assert s["verdicts_our_statements"] == {"holds": 2, "contradicted": 0, "inconclusive": 0, "not comparable": 0}
    (sec,) = s["experiments"]
    assert sec["verdicts_our_statements"]["default"] == s["verdicts_our_statements"]
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "holds [statement ours]" in md and "the statement is ours, not the paper's (the paper says only" in md
    assert "statements ours (default)" in md and "statement ours" in (tmp_path / "out" / "report.html").read_text()
    with pytest.raises(ValueError, match="our_statement takes the reason"):
        claim("x", Claim("at_least", target=0.4), {1: 0.5}, our_statement=True)
    # A claim whose source says the paper does not make it must say why it is ours, or it
    # would count in the paper's headline (UNO's "UCP1 vs VCP" recovery in Fig. 7 did).
    with pytest.raises(ValueError, match="not in the paper"):
        claim("x", Claim("at_least", target=0.4), {1: 0.5}, paper="not in the paper (ours): a comparison we add")
    claim("x", Claim("at_least", target=0.4), {1: 0.5}, paper="not in the paper (ours)", our_statement="a comparison we add")
    with pytest.raises(ValueError, match="its source says it is not the paper's"):
        claim("x", Claim("at_least", target=0.4), {1: 0.5}, paper="expected (not from the paper)")
    # The claim's text says so as well as its source can.
    with pytest.raises(ValueError, match="its text says it is not the paper's"):
        claim("x", Claim("less"), {1: 0.5}, {1: 0.7}, paper="Fig. 7", text="UCP1 recovers faster than VCP (our comparison)")
    with pytest.raises(ValueError, match="its text says"):
        incomparable("x", "no runs", paper="§II-C", text="our expectation of a deployable scheme")


def test_a_family_must_be_counted_in_one_place(tmp_path, monkeypatch):
    class Mixed(_OurStatement):
        name = "toy.mixed"

        def analyze(self, runs, ctx):
            util = runs.per_seed("half", lambda r: 0.5)
            return [
                claim("a", Claim("at_least", target=0.4), util, family="f"),
                claim("b", Claim("at_least", target=0.4), util, family="f", our_statement="ours"),
            ]

    monkeypatch.setitem(ex._REGISTRY, "toy.mixed", Mixed())
    with pytest.raises(ecnlab.ExperimentError, match="family 'f' mixes claims the headline counts apart"):
        ex.reproduce("toy.mixed", tmp_path / "out", quick=True)


class _Provenance(_Base):
    """Declares where its topology and flows come from, starts its TCP from ns-2's hosts,
    changes the segment size without saying so and forgets the rest."""

    name = "toy.provenance"
    hosts = ex.base.NS2_HOSTS

    def runs(self, quick, seeds, reading):
        s = tcp_dumbbell().set("tcp", ex.base.hosts_tcp(self.hosts, mss=960))
        return ex.for_seeds({"bulk": s}, seeds)

    def provenance(self, quick, reading):
        return [ex.base.paper("topology.*", None, "Fig. 1"), ex.base.paper("flows.*", None, "§4")]

    def analyze(self, runs, ctx):
        return []


def test_every_parameter_needs_a_source(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toy.provenance", _Provenance())
    s = ex.reproduce("toy.provenance", tmp_path / "out", quick=True)
    (sec,) = s["experiments"]
    problems = sec["provenance_missing"]["default"]
    assert any(p.startswith("duration: no source") for p in problems)
    assert any(p.startswith("tcp.mss: 960 in run") and "packetSize_" in p for p in problems)
    assert s["provenance_missing"] == {"toy.provenance": {"default": problems}}
    used = {p["parameter"]: p for p in sec["provenance"]}
    assert used["topology.*"]["source"] == "paper" and used["tcp.sack"]["reference"].startswith("ns-2.35")
    assert "Parameters without a source" in (tmp_path / "out" / "report.html").read_text()


class _NamedByReading(_Base):
    """An analysis reading whose value is in the claim's name (as HFCC's "seconds to 90 %"
    and UNO's "at 15 s (last 1 s)" were): the report could never pair the claim across
    readings, so a verdict the reading flips showed as no dependence."""

    name = "toy.named"
    no_bottleneck = "UDP only: nothing to stall"
    axes = (ex.ReadingAxis("level", (0.4, 0.6), "the level the claim holds the utilisation to", affects="analysis"),)

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp()}, seeds)

    def analyze(self, runs, ctx):
        level = ctx.reading["level"]
        util = runs.per_seed("half", lambda r: r.port("rl->rr")["utilization"])
        return [claim(f"utilisation at least {level:.0%}", Claim("at_least", level), util)]


def test_a_claim_is_paired_across_readings_by_a_name_no_reading_changes(tmp_path, monkeypatch):
    """Before, under level = 0.6 the claim (contradicted: the link carries 0.5) was "–" under
    the default and the default's (holds) "–" under 0.6: "Claims whose verdict depends on the
    reading (0)"."""
    monkeypatch.setitem(ex._REGISTRY, "toy.named", _NamedByReading())
    with pytest.raises(ecnlab.ExperimentError, match=r"toy.named: under the reading level=0.6 1 claim\(s\) have no counterpart under the default \('utilisation at least 60%'\)"):
        ex.reproduce("toy.named", tmp_path / "out", quick=True, readings="all")
    assert not (tmp_path / "out").exists()

    class Named(_NamedByReading):
        def analyze(self, runs, ctx):
            (c,) = super().analyze(runs, ctx)
            c.metric = "utilisation at least the level"
            return [c]

    monkeypatch.setitem(ex._REGISTRY, "toy.named", Named())
    s = ex.reproduce("toy.named", tmp_path / "out", quick=True, readings="all")
    assert s["depends_on_reading"] == [{"metric": "utilisation at least the level", "verdicts": {"default": "holds", "level=0.6": "contradicted"}, "holds_under": ["default"], "experiment": "toy.named"}]


class _IdleReading(_Base):
    """A run axis whose readings all change the scenario: a buffer of 2000 packets that 5 Mb/s
    of Poisson traffic into a 10 Mb/s link never fills, and one of 2 that it overflows."""

    name = "toy.idle"
    no_bottleneck = "UDP only: nothing to stall"
    axes = (ex.ReadingAxis("buffer", (1000, 2000, 2), "the bottleneck's buffer in packets"),)

    def runs(self, quick, seeds, reading):
        limit = reading["buffer"]
        out = {}
        for sd in seeds:
            s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="1s", seed=sd, queue={"kind": "droptail", "limit": limit})
            out[f"half-s{sd}"] = s.add_udp_flow("l0", "r0", rate="5Mbps", pattern="poisson", name="u")
        return out

    def analyze(self, runs, ctx):
        util = runs.per_seed("half", lambda r: r.port("rl->rr")["utilization"])
        return [claim("utilisation", Claim("matches", target=0.5, within=0.1), util)]


def test_a_reading_whose_changed_runs_give_the_default_outputs_is_said_not_to_act(tmp_path, monkeypatch):
    """Before, a reading was checked on its scenarios only: a buffer the traffic never fills
    was "run" and its verdicts read as robust to the buffer."""
    monkeypatch.setitem(ex._REGISTRY, "toy.idle", _IdleReading())
    s = ex.reproduce("toy.idle", tmp_path / "out", quick=True, readings="all")
    (sec,) = s["experiments"]
    by = {e["reading"]: e for e in sec["reading_effects"]}
    assert by["buffer=2000"] == {"reading": "buffer=2000", "changed": 5, "same_outputs": 5, "acted": False, "same_output_runs": [f"half-s{i}" for i in range(1, 6)], "unpaired": 0}
    assert by["buffer=2"]["acted"] is True and by["buffer=2"]["same_outputs"] == 0
    assert [(e["experiment"], e["reading"]) for e in s["readings_that_did_not_act"]] == [("toy.idle", "buffer=2000")]
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "(1 of 2 did not act)" in md and "| toy.idle | buffer=2000 | 5 | 5 | 0 | **no** |" in md
    assert "buffer=2000: changed the scenario of 5 run(s), and every one of them gave the default reading" in (tmp_path / "out" / "report.html").read_text()


def test_the_readme_names_every_reading_axis():
    """The README's list of reading axes had fallen behind the experiments (MECN's buffer and
    ecn_gentle, UNO's window, most of HFCC's were missing)."""
    from pathlib import Path

    for paper in ("eecn", "mecn", "uno", "mix", "hfcc", "apcc"):
        ex.select(paper)
    assert len({e.name.split(".")[0] for e in ex._REGISTRY.values()}) >= 6
    text = (Path(__file__).parents[1] / "README.md").read_text()
    para = text[text.index("**Readings.**") : text.index("its first value is the default")]
    missing = sorted({a.name for e in ex._REGISTRY.values() for a in e.axes if f"`{a.name}`" not in para})
    assert not missing, f"reading axes the README does not list: {missing}"
