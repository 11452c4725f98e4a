"""The experiments framework: registry and selection, seeds, aggregation, the parallel
runner (results in order, failures stop the rest, nothing half-written), and the
M/D/1 sanity experiment against Pollaczek–Khinchine."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

import ecnlab
from ecnlab import experiments as ex
from ecnlab.experiments import core
from ecnlab.experiments.verdict import Claim


def udp(rate: str, seed: int = 1) -> ecnlab.Scenario:
    s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="1s", seed=seed)
    return s.add_udp_flow("l0", "r0", rate=rate, pattern="poisson", name="u")


def test_stat_aggregates_and_ignores_missing_values():
    s = ex.Stat.of([1.0, None, 3.0, float("nan"), 2.0])
    assert (s.mean, s.min, s.max, s.n) == (2.0, 1.0, 3.0, 3)
    # Every aggregate says how many seeds had no value.
    assert str(s) == "2 [1 – 3] (3 of 5 seeds; 2 without a value)"
    assert str(ex.Stat.of([1.0, 3.0, 2.0])) == "2 [1 – 3]"
    assert ex.Stat.of([]).n == 0 and math.isnan(ex.Stat.of([]).mean)
    assert s.to_json() == {"mean": 2.0, "min": 1.0, "max": 3.0, "n": 3, "missing": 2, "values": [1.0, 3.0, 2.0]}
    assert ex.percent_change(30, 100) == -70


def test_for_seeds_expands_and_runset_folds_back():
    runs = ex.for_seeds({"lo": udp("1Mbps"), "hi": udp("8Mbps")}, [1, 2, 3])
    assert list(runs) == ["lo-s1", "lo-s2", "lo-s3", "hi-s1", "hi-s2", "hi-s3"]
    assert runs["hi-s2"].get("seed") == 2
    rs = ex.RunSet(ex.run_many(runs, jobs=2))
    assert rs.configs() == ["lo", "hi"]
    assert len(rs.over_seeds("hi")) == 3
    util = rs.stat("hi", lambda r: r.port("rl->rr")["utilization"])
    assert util.n == 3 and 0.7 < util.min <= util.max < 0.9
    # Poisson arrivals differ by seed.
    assert len(set(util.values)) == 3
    flows = rs.table("flows")
    assert flows.columns[:3] == ["run", "config", "seed"]
    assert flows.height == 6 and sorted(flows["seed"].unique().to_list()) == [1, 2, 3]


def test_run_many_keeps_order_and_matches_sequential_runs():
    runs = {f"r{i}": udp(f"{i + 1}Mbps") for i in range(6)}
    par = ex.run_many(runs, jobs=3)
    assert list(par) == list(runs)
    for name, sc in runs.items():
        assert par[name].flows.equals(ecnlab.run(sc).flows)


def test_run_many_validates_everything_first_and_writes_nothing_on_error(tmp_path):
    runs = {"good": udp("1Mbps"), "bad": udp("1Mbps").set("flows[0].rate", "-1Mbps")}
    with pytest.raises(ecnlab.ScenarioError) as e:
        ex.run_many(runs, out_dir=tmp_path / "runs")
    assert e.value.path == "bad: flows[0].rate"
    assert not (tmp_path / "runs").exists()


class _Toy(ex.Experiment):
    name = "toy.util"
    title = "utilisation equals offered load"
    source = "definition of utilisation"
    quick_seeds = 5
    axes = (
        ex.ReadingAxis("rate", ("5Mbps", "6Mbps"), "the stated load"),
        ex.ReadingAxis("tolerance", (0.1, 0.5), "a tight check", affects="analysis"),
    )

    def bottleneck(self, run_name):
        return "rl->rr"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp(reading.rate)}, seeds)

    def analyze(self, runs, ctx):
        ctx.note("a note")
        ctx.table(pl.DataFrame({"a": [1]}), caption="a table")
        util = runs.per_seed("half", lambda r: r.port("rl->rr")["utilization"])
        return [
            ex.base.claim("utilisation", Claim("matches", target=0.5, within=ctx.reading.tolerance), util, paper=0.5, text="ρ = 0.5"),
            ex.Comparison("a number without a claim", 1.0, 1.0),
        ]


def test_registered_experiment_runs_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toy.util", _Toy())
    assert "toy.util" in ex.names()
    assert [e.name for e in ex.select("toy")] == ["toy.util"]
    summary = ex.reproduce("toy", tmp_path / "out", quick=True)
    assert summary["experiment"] == "toy"
    c, plain = summary["comparisons"]
    assert c["metric"] == "utilisation" and c["paper"] == 0.5 and c["verdict"] == "holds"
    assert c["ours"]["n"] == 5 and c["experiment"] == "toy.util"
    assert c["decision"]["n"] == 5 and c["decision"]["agree"] == 5 and "sign test" in c["decision"]["reason"]
    assert plain["verdict"] is None and plain["decision"] is None
    assert summary["verdicts"] == {"holds": 1, "contradicted": 0, "inconclusive": 0, "not comparable": 0}
    assert summary["readings"] == ["default"] and summary["stalls"] == []
    out = tmp_path / "out"
    assert json.loads((out / "summary.json").read_text()) == summary
    assert sorted(p.name for p in (out / "runs").iterdir()) == [f"toy.util-half-s{i}" for i in range(1, 6)]
    html = (out / "report.html").read_text()
    assert "toy.util: utilisation equals offered load" in html and "a note" in html and "a table" in html
    # The comparison table comes before the section's notes.
    assert html.index("utilisation</td>") < html.index("a note")


def test_readings_run_side_by_side_and_share_identical_runs(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toy.util", _Toy())
    summary = ex.reproduce("toy", tmp_path / "out", quick=True, readings="all")
    assert summary["readings"] == ["default", "rate=6Mbps", "tolerance=0.5"]
    (sec,) = summary["experiments"]
    by = {r: [c["verdict"] for c in cs if c["verdict"]] for r, cs in sec["by_reading"].items()}
    # 6 Mbit/s on a 10 Mbit/s link is 60 %: outside 0.5 ± 10 %; the loose tolerance accepts 50 %.
    assert by == {"default": ["holds"], "rate=6Mbps": ["contradicted"], "tolerance=0.5": ["holds"]}
    assert summary["depends_on_reading"] == [
        {"metric": "utilisation", "verdicts": {"default": "holds", "rate=6Mbps": "contradicted", "tolerance=0.5": "holds"}, "holds_under": ["default", "tolerance=0.5"], "experiment": "toy.util"}
    ]
    # The tolerance reading changes only the analysis: its runs are the default's, run once.
    runs = tmp_path / "out" / "runs"
    assert sorted(p.name for p in runs.iterdir() if p.is_dir() and p.name.startswith("toy")) == [f"toy.util-half-s{i}" for i in range(1, 6)]
    assert len(list((runs / "reading-rate-6Mbps").iterdir())) == 5
    assert not (runs / "reading-tolerance-0.5").exists()
    assert set(sec["run_dirs"]["tolerance=0.5"].values()) == set(sec["run_dirs"]["default"].values())
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Claims whose verdict depends on the reading (1)" in html
    md = (tmp_path / "out" / "summary.md").read_text()
    # the three readings, then the reconstructed rivals, fixed by the mechanism, statements ours, stalled runs
    assert "| toy.util | 1 / 0 / 0 / 0 | 0 / 1 / 0 / 0 | 1 / 0 / 0 / 0 | 0 / 0 / 0 / 0 | 0 / 0 / 0 / 0 | 0 / 0 / 0 / 0 | 0 |" in md
    assert "| toy.util | utilisation | holds | contradicted | holds |" in md
    assert md == ex.summary_markdown(summary)


def test_bad_readings_are_named(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toy.util", _Toy())
    with pytest.raises(ecnlab.ExperimentError, match="unknown reading 'speed'; readings: rate, tolerance"):
        ex.reproduce("toy", tmp_path / "out", quick=True, readings="speed=1")
    with pytest.raises(ecnlab.ExperimentError, match="rate = '7Mbps': expected one of 5Mbps, 6Mbps"):
        ex.reproduce("toy", tmp_path / "out", quick=True, readings="rate=7Mbps")
    assert not (tmp_path / "out").exists()


def _without_wall(x):
    """A summary with its times left out: the one thing two runs of it may differ in."""
    if isinstance(x, dict):
        return {k: _without_wall(v) for k, v in x.items() if k not in ("wall_s", "runs_s", "judging_s")}
    if isinstance(x, list):
        return [_without_wall(v) for v in x]
    return x


def test_experiments_reproduced_apart_combine_into_the_papers_summary(tmp_path, monkeypatch):
    """A paper's experiments run one at a time (as a long form is run over several sittings)
    give, combined, the summary of running them together: the headline counted over both,
    the readings in the same order, every list the same."""

    class Other(_Toy):
        name = "toy.other"
        axes = (ex.ReadingAxis("rate", ("8Mbps", "7Mbps"), "the stated load"), _Toy.axes[1])

    monkeypatch.setitem(ex._REGISTRY, "toy.util", _Toy())
    monkeypatch.setitem(ex._REGISTRY, "toy.other", Other())
    whole = ex.reproduce("toy", tmp_path / "whole", quick=True, readings="all")
    assert whole["readings"] == ["default", "rate=7Mbps", "tolerance=0.5", "rate=6Mbps"]
    parts = [ex.reproduce(n, tmp_path / n, quick=True, readings="all") for n in ("toy.util", "toy.other")]
    combined = ex.combine_summaries("toy", parts[::-1])
    assert [p["experiments"] for p in combined.pop("parts")] == [["toy.other"], ["toy.util"]]
    assert _without_wall(combined) == _without_wall(whole)
    assert combined["verdicts"]["contradicted"] == 1 and combined["verdicts"]["holds"] == 1
    with pytest.raises(ecnlab.ExperimentError, match="toy: no part holds toy.util"):
        ex.combine_summaries("toy", parts[1:])
    with pytest.raises(ecnlab.ExperimentError, match="toy.other: in two parts"):
        ex.combine_summaries("toy", [parts[1], parts[1], parts[0]])
    quick_and_full = [parts[0], dict(parts[1], quick=False)]
    with pytest.raises(ecnlab.ExperimentError, match="the parts differ in 'quick'"):
        ex.combine_summaries("toy", quick_and_full)


def test_a_stalled_run_is_flagged():
    """A bulk flow held to 2 % of the bottleneck by its receive window is a stall; the same
    flow with an ample window is not."""
    base = {
        "duration": "3s",
        "topology": {"kind": "dumbbell", "left": 1, "right": 1, "access": {"rate": "1Gbps", "delay": "1ms"}, "bottleneck": {"rate": "100Mbps", "delay": "5ms"}},
        "flows": [{"src": "l0", "dst": "r0", "cc": "newreno"}],
        "measure": {"interval": "10ms", "sample_flows": True},
    }
    starved = dict(base, tcp={"rcv_buf": 2000})
    assert ex.stall(ecnlab.run(base), "rl->rr") is None
    st = ex.stall(ecnlab.run(starved), "rl->rr")
    assert st is not None and st["utilisation"] < 0.05 and st["measured_by"] == "flows' delivery rate samples"


def test_unknown_experiment_names_the_papers():
    with pytest.raises(ecnlab.ExperimentError, match="unknown experiment 'nope'.*core"):
        ex.select("nope")


def test_a_failing_experiment_leaves_no_output(tmp_path, monkeypatch):
    class Broken(_Toy):
        name = "toy.broken"

        def analyze(self, runs, ctx):
            raise RuntimeError("analysis bug")

    monkeypatch.setitem(ex._REGISTRY, "toy.broken", Broken())
    with pytest.raises(RuntimeError, match="analysis bug"):
        ex.reproduce("toy.broken", tmp_path / "out", quick=True)
    # No output; the finished runs are kept (each complete) for the next attempt.
    assert [p.name for p in tmp_path.iterdir()] == [".out.resume"]
    kept = list((tmp_path / ".out.resume").iterdir())
    assert kept and all((d / "run.json").is_file() for d in kept)


def test_md1_wait_matches_pollaczek_khinchine():
    """Independent of the framework: one long run per load, measured mean wait within a
    few per cent of ρ/(2μ(1−ρ))."""
    for rho, tol in [(0.5, 0.03), (0.8, 0.05)]:
        r = ecnlab.run(core.scenario(rho, "60s"), seed=3)
        p = r.port(core.PORT)
        expect = core.pk_wait_s(rho)
        assert p["mean_sojourn_s"] == pytest.approx(expect, rel=tol)
        assert p["utilization"] == pytest.approx(rho, abs=0.01)
        assert p["dropped_pkts"] == 0
        # M/D/1 waits half as long as M/M/1 at the same load.
        mm1 = rho / (core.BOTTLENECK_BPS / 8000 * (1 - rho))
        assert p["mean_sojourn_s"] / mm1 == pytest.approx(0.5, rel=tol)
