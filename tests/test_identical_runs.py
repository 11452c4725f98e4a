"""Runs not simulated because a finished run proves them identical (experiments._identical):
a buffer sweep reproduced with and without skipping gives the same bytes in every table, the
same run.json but for the provenance of the skipped runs, and the same verdicts; a run whose
smaller-buffer neighbour overflowed, or whose limit a marker read, is simulated."""

from __future__ import annotations

import json

import polars as pl
import pytest

import ecnlab
from ecnlab import experiments as ex
from ecnlab.experiments import _identical
from ecnlab.experiments.verdict import Claim

LIMITS = (4, 40, 400)
#: run.json fields that measure the machine (bench/identity.py's), and the provenance of a
#: run written from the run that proves it.
UNSTABLE = {"wall_s", "cpu_s", "events_per_s", "finished_at"}
PROVENANCE = {"identical_to", "identical_reason"}


def poisson(limit: int, seed: int = 1) -> ecnlab.Scenario:
    """Poisson arrivals at 80 % of a 10 Mb/s bottleneck with a ``limit``-packet DropTail:
    4 packets overflow; 40 hold the M/D/1 queue of a second (a few tens at most)."""
    s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="1s", seed=seed, queue={"kind": "droptail", "limit": limit})
    return s.add_udp_flow("l0", "r0", rate="8Mbps", pattern="poisson", name="u")


def eecn(limit: int, seed: int = 1) -> ecnlab.Scenario:
    """An EECN router, whose congestion level divides by the buffer limit (EECN's Eq. (1))."""
    s = ecnlab.Scenario.dumbbell(
        left=1,
        right=1,
        bottleneck_rate="10Mbps",
        duration="1s",
        seed=seed,
        queue={"kind": "red", "limit": limit, "min_th": 30, "max_th": 60, "ecn": True},
        marker={"kind": "eecn"},
    )
    return s.add_tcp_flow("l0", "r0", cc="eecn", ecn="eecn", name="t")


class _Toy(ex.Experiment):
    name = "toyident.buffer"
    title = "utilisation over buffer sizes"
    source = "definition of utilisation"
    quick_seeds = 2

    def bottleneck(self, run_name):
        return "rl->rr"

    def runs(self, quick, seeds, reading):
        configs = {f"udp-{b}": poisson(b) for b in LIMITS} | {f"eecn-{b}": eecn(b) for b in (100, 1000)}
        return ex.for_seeds(configs, seeds)

    def analyze(self, runs, ctx):
        util = lambda r: r.port("rl->rr")["utilization"]
        return [
            ex.base.claim(f"utilisation at {b}", Claim("matches", target=0.8, within=0.1), runs.per_seed(f"udp-{b}", util), paper=0.8, text="ρ = 0.8")
            for b in LIMITS
        ]


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(ex._REGISTRY, "toyident.buffer", _Toy())


def _stable(info: dict) -> dict:
    return {k: v for k, v in info.items() if k not in UNSTABLE | PROVENANCE}


def test_skipped_runs_are_byte_identical_to_simulated_ones(tmp_path, toy):
    skip = ex.reproduce("toyident", tmp_path / "skip", quick=True, jobs=1)
    full = ex.reproduce("toyident", tmp_path / "full", quick=True, jobs=1, skip_identical=False)
    runs = sorted(p.name for p in (tmp_path / "full" / "runs").iterdir())
    assert len(runs) == 2 * (len(LIMITS) + 2)
    proven = {}
    for name in runs:
        a, b = tmp_path / "skip" / "runs" / name, tmp_path / "full" / "runs" / name
        for t in ("flows", "ports", "timeseries"):
            assert (a / f"{t}.parquet").read_bytes() == (b / f"{t}.parquet").read_bytes(), f"{name}: {t}"
        ja, jb = json.loads((a / "run.json").read_text()), json.loads((b / "run.json").read_text())
        assert _stable(ja) == _stable(jb), name
        assert not PROVENANCE & set(jb), name
        if "identical_to" in ja:
            proven[name] = ja
    # The test means something: runs were skipped, each said from which run and why.
    assert skip["identical_runs"]["proven_identical"] == len(proven) >= 1
    assert full["identical_runs"]["proven_identical"] == 0 and not full["identical_runs"]["enabled"]
    assert skip["identical_runs"]["simulated"] + len(proven) == len(runs)
    for name, info in proven.items():
        src = info["identical_to"]["run"]
        assert (tmp_path / "skip" / "runs" / src / "run.json").is_file()
        assert "rl->rr needed at most" in info["identical_reason"]
        assert info["scenario"]["topology"]["bottleneck_queue"]["limit"] != json.loads((tmp_path / "skip" / "runs" / src / "run.json").read_text())["scenario"]["topology"]["bottleneck_queue"]["limit"]
    # Every claim's verdict and numbers alike.
    strip = lambda s: [{k: v for k, v in c.items()} for c in s["comparisons"]]
    assert strip(skip) == strip(full)
    assert skip["verdicts"] == full["verdicts"]

    # A run whose smaller neighbour overflowed is simulated: 4 packets overflow under
    # Poisson arrivals at ρ = 0.8, and the 40-packet runs were run, not written.
    for seed in (1, 2):
        small = json.loads((tmp_path / "skip" / "runs" / f"toyident.buffer-udp-4-s{seed}" / "run.json").read_text())
        assert small["buffers"]["rl->rr"]["needed_packets"] > 4
        assert f"toyident.buffer-udp-40-s{seed}" not in proven
    # EECN's router reads the limit: its runs are all simulated, whatever they needed.
    assert not any(n.startswith("toyident.buffer-eecn") for n in proven)
    big = json.loads((tmp_path / "skip" / "runs" / "toyident.buffer-eecn-100-s1" / "run.json").read_text())
    assert big["buffers"]["rl->rr"]["limit_read"] is True

    # Judged again from these runs (--reuse): every run is taken, the written ones too, and
    # nothing is simulated or proven again.
    again = ex.reproduce("toyident", tmp_path / "again", quick=True, jobs=1, reuse=tmp_path / "skip")
    assert again["reuse"]["reused"] == len(runs) and again["reuse"]["run"] == 0
    assert (again["identical_runs"]["simulated"], again["identical_runs"]["proven_identical"]) == (0, 0)
    assert strip(again) == strip(skip)
    for name in proven:
        assert (tmp_path / "again" / "runs" / name / "run.json").read_bytes() == (tmp_path / "skip" / "runs" / name / "run.json").read_bytes()


def test_the_proof_asks_every_changed_port():
    rec = lambda need, read=False, unit="packets", limit=100: {
        "limits": [{unit: limit}],
        "needed_packets": need,
        "needed_bytes": need if unit == "bytes" else None,
        "limit_read": read,
    }
    same = {"b": rec(1)}
    # Needed 50 of 100: the same run at 200, and at 60; not at 40 (it would have dropped).
    assert _identical.proof({"a": rec(50), **same}, {"a": [{"packets": 200}], "b": [{"packets": 100}]})
    assert _identical.proof({"a": rec(50), **same}, {"a": [{"packets": 60}], "b": [{"packets": 100}]})
    assert _identical.proof({"a": rec(50), **same}, {"a": [{"packets": 40}], "b": [{"packets": 100}]}) is None
    # Reached (needed 101 > 100: an overflow), read, another unit: no proof.
    assert _identical.proof({"a": rec(101), **same}, {"a": [{"packets": 200}], "b": [{"packets": 100}]}) is None
    assert _identical.proof({"a": rec(50, read=True), **same}, {"a": [{"packets": 200}], "b": [{"packets": 100}]}) is None
    assert _identical.proof({"a": rec(50), **same}, {"a": [{"bytes": 200_000}], "b": [{"packets": 100}]}) is None
    # Bytes against a byte limit.
    assert _identical.proof({"a": rec(5000, unit="bytes", limit=6000)}, {"a": [{"bytes": 9000}]})
    # An unchanged port is not asked; no changed port at all proves nothing.
    assert _identical.proof({"a": rec(50), "b": rec(999, read=True)}, {"a": [{"packets": 200}], "b": [{"packets": 100}]})
    assert _identical.proof({"a": rec(50)}, {"a": [{"packets": 100}]}) is None
    assert _identical.proof(None, {"a": [{"packets": 100}]}) is None


def test_chains_group_scenarios_differing_only_in_queue_limits():
    t = lambda s: ecnlab.validate(s)
    a = {
        "x400": t(poisson(400)),
        "x4": t(poisson(4).with_(name="other label")),
        "x40": t(poisson(40)),
        "seed2": t(poisson(40, seed=2)),
        "rate": t(poisson(40).set("flows[0].rate", "7Mbps")),
    }
    assert _identical.chains(a) == [["x4", "x40", "x400"]]


def test_a_kept_run_proves_the_next_after_an_interruption(tmp_path):
    """An interrupted sweep kept its 4- and 40-packet runs; started again, it simulates
    nothing: the kept 40-packet run proves the 400-packet one, which is written with the
    tables a simulation gives."""
    from ecnlab.sweeps import Executor

    sc = {f"u{b}": poisson(b) for b in LIMITS}
    with Executor(workers=1, threads=True) as pool:
        ex.run_many({k: sc[k] for k in ("u4", "u40")}, resume_dir=tmp_path / "kept", executor=pool)
        tally = _identical.IdenticalRuns()
        ex.run_many(sc, out_dir=tmp_path / "again", resume_dir=tmp_path / "kept", executor=pool, tally=tally)
        ex.run_many(sc, out_dir=tmp_path / "full", executor=pool, skip_identical=False)
    assert (tally.read, tally.simulated, tally.identical) == (2, 0, 1)
    info = json.loads((tmp_path / "again" / "u400" / "run.json").read_text())
    assert info["identical_to"]["run"] == "u40"
    assert info["buffers"]["rl->rr"]["limits"] == [{"packets": 400}]
    full = json.loads((tmp_path / "full" / "u400" / "run.json").read_text())
    assert _stable(info) == _stable(full)
    for t in ("flows", "ports", "timeseries"):
        assert (tmp_path / "again" / "u400" / f"{t}.parquet").read_bytes() == (tmp_path / "full" / "u400" / f"{t}.parquet").read_bytes()


# ------------------------------------------------------------------------ sweeps

def buffer_sweep(values: list[int], seeds: list[int], rate: str = "8Mbps") -> dict:
    """The Poisson dumbbell (:func:`poisson`) at ``rate`` over bottleneck buffers ``values``."""
    base = poisson(100).set("flows[0].rate", rate).to_dict()
    return {"name": "buffers", "seeds": seeds, "base": base, "grid": {"buffer": {"key": "topology.bottleneck_queue.limit", "values": values}}}


def _sweep_tables(out) -> dict:
    return {f"{t}/{f.name}": f.read_bytes() for t in ("flows", "ports", "timeseries") for f in sorted((out / t).glob("*.parquet"))}


def test_a_sweep_writes_points_a_finished_run_proves_from_it(tmp_path):
    """Poisson arrivals at 80 % of the bottleneck: 4 packets overflow, 40 never do, so per
    seed the 100-packet point is written from the 40-packet run and the 400-packet one from
    the 100-packet one (the nearest finished run); their files are those a full simulation
    writes, and the runs rows say from which run and why."""
    from ecnlab import sweeps as sw

    spec = buffer_sweep([400, 4, 40, 100], [1, 2])
    skip = sw.run_sweep(spec, tmp_path / "skip", workers=2, threads=True)
    full = sw.run_sweep(spec, tmp_path / "full", workers=2, threads=True, skip_identical=False)
    assert (skip.total, skip.ok, skip.failed, full.ok) == (8, 8, 0, 8)
    assert (skip.simulated, len(skip.identical)) == (4, 4)
    assert (full.simulated, full.identical) == (8, [])
    # In the order of the points, whatever the order runs finished in.
    assert [(p, src) for p, src, _ in skip.identical] == [
        (f"buffer={b}, seed={s}", f"buffer={src}, seed={s}") for b, src in ((400, 100), (100, 40)) for s in (1, 2)
    ]
    assert all(why.startswith("limit never reached, never read: rl->rr needed at most ") for _, _, why in skip.identical)
    assert _sweep_tables(tmp_path / "skip") == _sweep_tables(tmp_path / "full")
    runs = pl.read_parquet(tmp_path / "skip" / "runs" / "*.parquet").sort("buffer", "seed")
    proven = runs.filter(pl.col("identical_to").is_not_null())
    assert sorted(proven["buffer"].to_list()) == [100, 100, 400, 400]
    by_key = dict(zip(runs["run_key"], runs.select("buffer", "seed").rows()))
    for row in proven.iter_rows(named=True):
        assert by_key[row["identical_to"]] == ({100: 40, 400: 100}[row["buffer"]], row["seed"])
        assert row["wall_s"] == 0.0 and row["identical_reason"].startswith("limit never reached")
        assert json.loads(row["buffers_json"])["rl->rr"]["limits"] == [{"packets": row["buffer"]}]
    assert pl.read_parquet(tmp_path / "full" / "runs" / "*.parquet")["identical_to"].is_null().all()
    # Another executor, other completion orders: the same points proven, by the same runs.
    one = sw.run_sweep(spec, tmp_path / "one", workers=1, threads=True)
    assert one.identical == skip.identical
    prov = lambda d: pl.read_parquet(d / "runs" / "*.parquet").sort("run_key").select("run_key", "identical_to", "identical_reason", "buffers_json")
    assert prov(tmp_path / "one").equals(prov(tmp_path / "skip"))

    # Larger buffers added later: the stored 400-packet points prove them, nothing simulated.
    more = sw.run_sweep(buffer_sweep([400, 4, 40, 100, 1000], [1, 2]), tmp_path / "skip", workers=1, threads=True)
    assert (more.skipped, more.ran, more.simulated) == (8, 2, 0)
    assert [src for _, src, _ in more.identical] == ["buffer=400, seed=1", "buffer=400, seed=2"]


def test_a_sweep_whose_limits_are_reached_simulates_every_point(tmp_path):
    """At 120 % of the bottleneck every buffer overflows: no point proves another."""
    from ecnlab import sweeps as sw

    s = sw.run_sweep(buffer_sweep([4, 40], [1], rate="12Mbps"), tmp_path / "s", workers=1, threads=True)
    assert (s.ok, s.simulated, s.identical) == (2, 2, [])
    assert pl.read_parquet(tmp_path / "s" / "runs" / "*.parquet")["identical_to"].is_null().all()
