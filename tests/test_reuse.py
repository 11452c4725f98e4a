"""Judging a reproduction again from an earlier one's runs (``reproduce --reuse``): a run is
taken only when its scenario TOML is the same byte for byte and it was written by this build;
anything else is run, and summary.json counts both."""

from __future__ import annotations

import json

import polars as pl
import pytest

import ecnlab
from ecnlab import _core, cli
from ecnlab import experiments as ex
from ecnlab.experiments.verdict import Claim


def udp(rate: str, seed: int = 1) -> ecnlab.Scenario:
    s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="1s", seed=seed)
    return s.add_udp_flow("l0", "r0", rate=rate, pattern="poisson", name="u")


class _Toy(ex.Experiment):
    name = "toyreuse.util"
    title = "utilisation equals offered load"
    source = "definition of utilisation"
    quick_seeds = 3
    axes = (
        ex.ReadingAxis("rate", ("5Mbps", "6Mbps"), "the stated load"),
        ex.ReadingAxis("tolerance", (0.1, 0.5), "a tight check", affects="analysis"),
    )

    def bottleneck(self, run_name):
        return "rl->rr"

    def runs(self, quick, seeds, reading):
        return ex.for_seeds({"half": udp(reading.rate)}, seeds)

    def analyze(self, runs, ctx):
        util = runs.per_seed("half", lambda r: r.port("rl->rr")["utilization"])
        return [ex.base.claim("utilisation", Claim("matches", target=0.5, within=ctx.reading.tolerance), util, paper=0.5, text="ρ = 0.5")]


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toyreuse.util", _Toy())


def run_jsons(out):
    return {p.parent.relative_to(out).as_posix(): p.read_bytes() for p in sorted((out / "runs").rglob("run.json"))}


def test_reuse_judges_again_without_running(tmp_path, toy):
    first = ex.reproduce("toyreuse", tmp_path / "first", quick=True, readings="all", jobs=1)
    again = ex.reproduce("toyreuse", tmp_path / "again", quick=True, readings="all", jobs=1, reuse=tmp_path / "first")
    # 3 seeds at 5 Mbit/s (the default and the tolerance reading share them) and 3 at 6 Mbit/s.
    assert again["reuse"]["reused"] == 6 and again["reuse"]["run"] == 0
    assert again["reuse"]["build"] == {"ecnlab_version": _core.__version__, "source_hash": _core.source_hash}
    assert "reuse" not in first
    # The runs are the earlier ones, byte for byte (a run again would have a new wall time and date).
    assert run_jsons(tmp_path / "again") == run_jsons(tmp_path / "first")
    assert again["comparisons"] == first["comparisons"] and again["verdicts_by_reading"] == first["verdicts_by_reading"]
    md = (tmp_path / "again" / "summary.md").read_text()
    assert f"Runs: 6 read from the earlier reproduction {tmp_path / 'first'}" in md and "0 run." in md
    # Judging again in place: the output may be the reproduction it reuses.
    inplace = ex.reproduce("toyreuse", tmp_path / "first", quick=True, readings="all", jobs=1, reuse=tmp_path / "first")
    assert inplace["reuse"]["reused"] == 6 and run_jsons(tmp_path / "first") == run_jsons(tmp_path / "again")


def test_reuse_runs_what_another_build_wrote(tmp_path, toy):
    ex.reproduce("toyreuse", tmp_path / "first", quick=True, jobs=1)
    f = tmp_path / "first" / "runs" / "toyreuse.util-half-s2" / "run.json"
    info = json.loads(f.read_text())
    info["source_hash"] = "0" * len(_core.source_hash)
    f.unlink()  # a new file: the hard links the reuse makes must not carry the edit elsewhere
    f.write_text(json.dumps(info, indent=2) + "\n")
    again = ex.reproduce("toyreuse", tmp_path / "again", quick=True, jobs=1, reuse=tmp_path / "first")
    r = again["reuse"]
    assert (r["reused"], r["run"]) == (2, 1)
    assert r["not_taken"] == {"scenario changed": 0, "other build": 1, "no such run": 0}
    assert r["other_builds"] == {f"{_core.__version__} {'0' * len(_core.source_hash)}": 1}
    rerun = json.loads((tmp_path / "again" / "runs" / "toyreuse.util-half-s2" / "run.json").read_text())
    assert rerun["source_hash"] == _core.source_hash and rerun["finished_at"] >= info["finished_at"]


def test_reuse_runs_a_changed_scenario(tmp_path, toy):
    ex.reproduce("toyreuse", tmp_path / "first", quick=True, jobs=1)
    # The reading runs the default's runs (reused) and the same run names at another rate:
    # those scenarios differ from the earlier ones and are run.
    again = ex.reproduce("toyreuse", tmp_path / "again", quick=True, jobs=1, readings="rate=6Mbps", reuse=tmp_path / "first")
    r = again["reuse"]
    assert (r["reused"], r["run"]) == (3, 3) and r["not_taken"] == {"scenario changed": 3, "other build": 0, "no such run": 0}
    # A new seed is a run the earlier reproduction does not have.
    more = ex.reproduce("toyreuse", tmp_path / "more", quick=True, jobs=1, seeds=4, reuse=tmp_path / "first")
    r = more["reuse"]
    assert (r["reused"], r["run"]) == (3, 1) and r["not_taken"]["no such run"] == 1


def test_reuse_of_a_directory_that_is_no_reproduction_exits_2(tmp_path, toy, capsys):
    (tmp_path / "junk").mkdir()
    code = cli.main(["reproduce", "toyreuse", "--quick", "--out", str(tmp_path / "out"), "--reuse", str(tmp_path / "junk")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--reuse" in err and "not a reproduction" in err
    assert not (tmp_path / "out").exists()


def _other_build(out, run):
    """Rewrites ``run``'s run.json as if another simulator build had written it."""
    f = out / "runs" / run / "run.json"
    info = json.loads(f.read_text())
    info["source_hash"] = "0" * len(_core.source_hash)
    f.unlink()
    f.write_text(json.dumps(info, indent=2) + "\n")
    return f.read_bytes()


def test_reuse_any_build_judges_another_builds_runs_and_runs_nothing(tmp_path, toy):
    first = ex.reproduce("toyreuse", tmp_path / "first", quick=True, readings="all", jobs=1)
    other = _other_build(tmp_path / "first", "toyreuse.util-half-s2")
    again = ex.reproduce("toyreuse", tmp_path / "again", quick=True, readings="all", jobs=1, reuse=tmp_path / "first", reuse_any_build=True)
    r = again["reuse"]
    assert (r["reused"], r["run"], r["any_build"]) == (6, 0, True)
    assert r["runs_from_builds"] == {f"{_core.__version__} {_core.source_hash}": 5, f"{_core.__version__} {'0' * len(_core.source_hash)}": 1}
    # The other build's run is read as it is, not run again.
    assert (tmp_path / "again" / "runs" / "toyreuse.util-half-s2" / "run.json").read_bytes() == other
    assert run_jsons(tmp_path / "again") == run_jsons(tmp_path / "first")
    assert again["verdicts_by_reading"] == first["verdicts_by_reading"]
    md = (tmp_path / "again" / "summary.md").read_text()
    assert f"written by {_core.__version__} {_core.source_hash} (5 runs), {_core.__version__} {'0' * len(_core.source_hash)} (1 runs))" in md
    # The normal --reuse still runs it.
    plain = ex.reproduce("toyreuse", tmp_path / "plain", quick=True, jobs=1, reuse=tmp_path / "first")
    assert (plain["reuse"]["reused"], plain["reuse"]["run"]) == (2, 1)


def test_reuse_any_build_exits_2_naming_a_run_it_lacks(tmp_path, toy, capsys):
    ex.reproduce("toyreuse", tmp_path / "first", quick=True, jobs=1)
    # A fourth seed is a run the recorded form does not hold: nothing is run, nothing written.
    code = cli.main(["reproduce", "toyreuse", "--quick", "--seeds", "4", "--jobs", "1", "--out", str(tmp_path / "out"),
                     "--reuse", str(tmp_path / "first"), "--reuse-any-build"])
    err = capsys.readouterr().err
    assert code == 2 and "toyreuse.util-half-s4" in err and "no such run" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / ".out.resume").exists()
    # Another rate: the same run names with other scenarios.
    code = cli.main(["reproduce", "toyreuse", "--quick", "--jobs", "1", "--readings", "rate=6Mbps", "--out", str(tmp_path / "out"),
                     "--reuse", str(tmp_path / "first"), "--reuse-any-build"])
    err = capsys.readouterr().err
    assert code == 2 and "toyreuse.util-half-s1" in err and "scenario changed" in err
    assert not (tmp_path / "out").exists()
    code = cli.main(["reproduce", "toyreuse", "--quick", "--out", str(tmp_path / "out"), "--reuse-any-build"])
    assert code == 2 and "--reuse-any-build needs --reuse" in capsys.readouterr().err


class _Shared(_Toy):
    """A reading that adds a configuration and leaves the other's scenario alone but for its
    name: that run is shared with the default reading's, not run again."""

    name = "toyshared.util"
    axes = (ex.ReadingAxis("more", ("no", "yes"), "a second load"),)

    def runs(self, quick, seeds, reading):
        base = {"half": udp("5Mbps")}
        if reading.more == "yes":
            base = {"half": udp("5Mbps").set("name", f"half [{reading.name}]"), "more": udp("6Mbps")}
        return ex.for_seeds(base, seeds)

    def analyze(self, runs, ctx):
        util = runs.per_seed("half", lambda r: r.port("rl->rr")["utilization"])
        return [ex.base.claim("utilisation", Claim("matches", target=0.5, within=0.1), util, paper=0.5, text="ρ = 0.5")]


def test_reuse_any_build_asks_only_for_the_runs_a_reading_adds(tmp_path, monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toyshared.util", _Shared())
    first = ex.reproduce("toyshared", tmp_path / "first", quick=True, readings="all", jobs=1)
    again = ex.reproduce("toyshared", tmp_path / "again", quick=True, readings="all", jobs=1, reuse=tmp_path / "first", reuse_any_build=True)
    assert (again["reuse"]["reused"], again["reuse"]["run"]) == (6, 0)
    assert again["verdicts_by_reading"] == first["verdicts_by_reading"]


def test_a_judgement_started_again_counts_the_runs_an_interrupted_one_kept(tmp_path, toy, monkeypatch):
    """An interrupted judgement keeps the runs it read in .<out>.resume/; started again it reads
    them from there, and summary.json still counts them as read from the earlier reproduction
    (it counted only the rest: a doc said 2730 of 5700 runs)."""
    ex.reproduce("toyreuse", tmp_path / "first", quick=True, readings="all", jobs=1)

    def interrupted(self, runs, ctx):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(_Toy, "analyze", interrupted)
        with pytest.raises(KeyboardInterrupt):
            ex.reproduce("toyreuse", tmp_path / "again", quick=True, readings="all", jobs=1, reuse=tmp_path / "first", reuse_any_build=True)
    assert any((tmp_path / ".again.resume").iterdir())
    again = ex.reproduce("toyreuse", tmp_path / "again", quick=True, readings="all", jobs=1, reuse=tmp_path / "first", reuse_any_build=True)
    r = again["reuse"]
    assert (r["reused"], r["run"]) == (6, 0) and sum(r["runs_from_builds"].values()) == 6
