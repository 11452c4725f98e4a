"""Sweeps: axis expansion and validation, the store's schema and one-line reads, resume,
retry of failed runs, a worker killed mid-sweep, Ctrl-C."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import polars as pl
import pytest

import ecnlab
from ecnlab import ScenarioError, sweeps as sw
from ecnlab.sweeps import executor as sweep_executor

from conftest import ECNLAB, run_cli

BASE = """
duration = "{duration}"
[base.topology]
kind = "dumbbell"
left = 2
right = 2
access = {{ rate = "1Gbps", delay = "1ms" }}
bottleneck = {{ rate = "{rate}", delay = "5ms" }}
bottleneck_queue = {{ kind = "red", limit = 100, min_th = 10, max_th = 30, ecn = true }}
[[base.flows]]
src = "l0"
dst = "r0"
cc = "newreno"
ecn = "ecn"
[[base.flows]]
src = "l1"
dst = "r1"
cc = "cubic"
ecn = "ecn"
"""


def sweep_text(axes: str, duration: str = "1s", rate: str = "20Mbps", head: str = 'name = "t"\nseeds = 2\n') -> str:
    return head + "[base]\n" + f'duration = "{duration}"\n' + BASE.split("\n", 2)[2].format(rate=rate) + axes


GRID = """
[grid]
min_th = { key = "topology.bottleneck_queue.min_th", values = [5, 15] }
"flows[*].ecn" = ["ecn", "none"]
"""


# ------------------------------------------------------------------ expansion


def test_axes_expand_to_the_product_with_the_values_as_columns():
    text = sweep_text(
        GRID
        + """
[zip]
"topology.bottleneck.rate" = ["10Mbps", "30Mbps"]
"topology.bottleneck.delay" = ["20ms", "2ms"]

[variants.cc]
reno = {}
cubic = { "flows[*].cc" = "cubic", "flows[*].ecn" = "ecn" }
"""
    )
    spec = sw.load_sweep(text)
    # variants × grid (min_th, ecn) × zip × seeds, in that order.
    assert spec.columns == ["cc", "min_th", "flows[*].ecn", "topology.bottleneck.rate+topology.bottleneck.delay", "seed"]
    assert len(spec.points) == 2 * 2 * 2 * 2 * 2
    p = spec.points[-1]
    assert p.values == {
        "cc": "cubic",
        "min_th": 15,
        "flows[*].ecn": "none",
        "topology.bottleneck.rate+topology.bottleneck.delay": '["30Mbps", "2ms"]',
        "seed": 2,
    }
    s = p.scenario
    # [*] set every flow; the later grid axis overrides the variant's ecn.
    assert [f["cc"] for f in s["flows"]] == ["cubic", "cubic"] and [f["ecn"] for f in s["flows"]] == ["none", "none"]
    assert s["topology"]["bottleneck"] == {"rate": "30Mbps", "delay": "2ms"}
    assert s["topology"]["bottleneck_queue"]["min_th"] == 15 and s["seed"] == 2
    assert len({q.key for q in spec.points}) == len(spec.points)


def test_random_axes_are_drawn_together_and_reproducibly():
    text = sweep_text(
        """
[random]
samples = 4
seed = 11
"topology.bottleneck_queue.max_p" = { uniform = [0.05, 0.5] }
"topology.bottleneck_queue.limit" = { int = [60, 200] }
""",
        head='seeds = [3]\n',
    )
    a, b = sw.load_sweep(text), sw.load_sweep(text)
    assert len(a.points) == 4 and [p.values for p in a.points] == [p.values for p in b.points]
    for p in a.points:
        q = p.scenario["topology"]["bottleneck_queue"]
        assert 0.05 <= q["max_p"] <= 0.5 and 60 <= q["limit"] <= 200 and isinstance(q["limit"], int)
        assert p.values["topology.bottleneck_queue.max_p"] == q["max_p"]


@pytest.mark.parametrize(
    "axes,key,says",
    [
        ('[grid]\n"topology.bottleneck_queue.min_th" = [5, 50]\n', "sweep point {topology.bottleneck_queue.min_th=50, seed=1}: topology.bottleneck_queue", "max_th"),
        ('[grid]\n"flows[*].cc" = ["newreno", "warp"]\n', "sweep point {flows[*].cc='warp', seed=1}: flows[0].cc", "newreno"),
        ('[zip]\na = [1, 2]\nb = [1]\n', "sweep.zip", "same length"),
        ('[random]\nsamples = 2\n"duration" = { normal = [1, 2] }\n', "sweep.random.duration", "uniform"),
        ('[grid]\n"topology.bottleneck_queue.min_th" = []\n', "sweep.grid.topology.bottleneck_queue.min_th", "non-empty list"),
        ('[grid]\n"flows[7].cc" = ["cubic"]\n', "sweep point {flows[7].cc='cubic'}: flows[7].cc", "2 entries"),
        ('[grid]\n"topology.bottleneck_queue.wq" = [0.1, 0.2]\n', "sweep point {topology.bottleneck_queue.wq=0.1, seed=1}: topology.bottleneck_queue.wq", "unknown"),
        ('[grid]\n"topology.bottleneck_queue.kind" = ["droptail", "droptail "]\n', "sweep point", "droptail"),
    ],
)
def test_every_point_is_validated_first_and_the_error_names_axis_values_and_key(axes, key, says):
    with pytest.raises(ScenarioError) as e:
        sw.load_sweep(sweep_text(axes, head='seeds = 1\n'))
    assert str(e.value).startswith(key) and says in str(e.value), str(e.value)


def test_an_axis_named_like_a_result_column_is_an_error():
    with pytest.raises(ScenarioError, match="sweep.variants.scheme: the flows table has a column named 'scheme'"):
        sw.load_sweep(sweep_text('[variants.scheme]\nreno = {}\n'))


def test_two_points_with_the_same_scenario_are_an_error():
    with pytest.raises(ScenarioError, match="gives the same scenario as"):
        sw.load_sweep(sweep_text('[grid]\n"topology.bottleneck_queue.min_th" = [10, 10.0]\n', head="seeds = 1\n"))


def test_the_cli_exits_2_on_a_bad_point_and_writes_nothing(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(sweep_text('[grid]\n"topology.bottleneck_queue.min_th" = [5, 50]\n'))
    r = run_cli("sweep", f, "--out", tmp_path / "out")
    assert r.returncode == 2 and "min_th=50" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()
    f.write_text('base = "missing.toml"\n')
    r = run_cli("sweep", f, "--out", tmp_path / "out")
    assert r.returncode == 2 and "sweep.base" in r.stderr and "missing.toml" in r.stderr


# ---------------------------------------------------------------- the store


@pytest.fixture(scope="module")
def grid_store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "store"
    summary = sw.run_sweep(sweep_text(GRID), out, workers=2)
    assert (summary.total, summary.ok, summary.failed) == (8, 8, 0)
    return out


def test_the_store_reads_in_one_line_with_polars_pyarrow_and_duckdb(grid_store):
    import duckdb
    import pyarrow.dataset as ds

    flows = pl.scan_parquet(f"{grid_store}/flows/*.parquet").collect()
    assert flows.height == 16 and flows.columns[:4] == ["run_key", "min_th", "flows[*].ecn", "seed"]
    assert flows.schema["min_th"] == pl.Int64 and flows.schema["seed"] == pl.Int64
    table = ds.dataset(grid_store / "flows").to_table()
    assert table.num_rows == 16 and "flows[*].ecn" in table.column_names
    n, mean = duckdb.sql(f"SELECT count(*), avg(goodput_bps) FROM '{grid_store}/flows/*.parquet' WHERE min_th = 5").fetchall()[0]
    assert n == 8 and mean == pytest.approx(flows.filter(pl.col("min_th") == 5)["goodput_bps"].mean())
    runs = ecnlab.read_sweep(grid_store, "runs").collect()
    assert runs.height == 8 and set(runs["status"]) == {"ok"}
    for col in ("run_key", "min_th", "seed", "status", "error", "wall_s", "events", "packets_dropped", "ecnlab_version", "scenario_toml"):
        assert col in runs.columns
    assert (runs["events"] > 0).all()
    # The key is the hash of the scenario as run (with every default) and of the version.
    r = runs.row(0, named=True)
    assert r["run_key"] == sw.run_key(r["scenario_toml"])
    assert r["source_hash"] == ecnlab._core.source_hash and len(r["source_hash"]) == 16
    ts = ecnlab.read_sweep(grid_store, "timeseries").select("run_key", "seed").unique().collect()
    assert ts.height in (0, 8)


WINDOWS = """
name = "windows"
seeds = 1
[base]
duration = "3s"
[base.topology]
kind = "dumbbell"
left = 1
right = 1
access = { rate = "1Gbps", delay = "1ms" }
bottleneck = { rate = "100Mbps", delay = "20ms" }
bottleneck_queue = { kind = "droptail", limit = 400 }
[[base.flows]]
src = "l0"
dst = "r0"
cc = "newreno"
[base.tcp]
rcv_autotune = false
[grid]
"tcp.rcv_buf" = [28960, 4000000]
"""


def test_a_run_that_left_its_bottleneck_idle_warns_in_the_runs_table_and_on_the_terminal(tmp_path):
    """A 20-segment window holds a bulk flow at ~5 % of 100 Mb/s: that run's row carries the
    warning, the other's is empty, and `ecnlab sweep` prints it."""
    (tmp_path / "w.toml").write_text(WINDOWS)
    r = run_cli("sweep", str(tmp_path / "w.toml"), "--out", str(tmp_path / "store"), "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "warning: " in r.stderr and "the busiest: rl->rr" in r.stderr and "mostly idle" in r.stderr
    runs = ecnlab.read_sweep(tmp_path / "store", "runs").sort("tcp.rcv_buf").collect()
    small, big = runs["warnings"].to_list()
    assert "(the busiest: rl->rr)" in small and "mostly idle" in small
    assert big == ""


def test_a_sweep_gives_the_numbers_of_single_runs(grid_store):
    spec = sw.load_sweep(sweep_text(GRID))
    p = spec.points[5]
    alone = ecnlab.run(p.scenario)
    stored = ecnlab.read_sweep(grid_store).filter(pl.col("run_key") == p.key).drop("run_key", *spec.columns).collect()
    assert stored.equals(alone.flows)


# ------------------------------------------------------- resume, retry, faults


def _snapshot(out: Path) -> dict[str, pl.DataFrame]:
    """Every table of a store, rows in a fixed order, without the columns a run's timing
    sets."""
    got = {}
    for t in ("flows", "ports", "timeseries"):
        df = ecnlab.read_sweep(out, t).collect()
        got[t] = df.sort(df.columns)
    runs = ecnlab.read_sweep(out, "runs").collect().drop("wall_s", "finished_at")
    got["runs"] = runs.sort("run_key")
    return got


def test_resume_runs_only_what_is_missing_and_removes_half_committed_runs(grid_store, tmp_path):
    import shutil

    out = tmp_path / "store"
    shutil.copytree(grid_store, out)
    keys = sorted(p.stem for p in (out / "runs").glob("*.parquet"))
    # Two runs gone; a third whose row is missing (a writer killed between two renames).
    for k in keys[:2]:
        for t in ("runs", "flows", "ports", "timeseries"):
            (out / t / f"{k}.parquet").unlink(missing_ok=True)
    (out / "runs" / f"{keys[2]}.parquet").unlink()
    untouched = (out / "flows" / f"{keys[3]}.parquet").stat().st_mtime_ns
    summary = sw.run_sweep(sweep_text(GRID), out, workers=1, threads=True)
    assert (summary.skipped, summary.ran, summary.ok) == (5, 3, 3)
    assert (out / "flows" / f"{keys[3]}.parquet").stat().st_mtime_ns == untouched
    want, got = _snapshot(grid_store), _snapshot(out)
    for t in want:
        assert got[t].equals(want[t]), t
    again = sw.run_sweep(sweep_text(GRID), out, workers=1, threads=True)
    assert (again.skipped, again.ran) == (8, 0)


def test_a_failed_run_is_recorded_and_retry_failed_runs_only_it(tmp_path, monkeypatch):
    real = sweep_executor.run_scenario
    bad_seed = {"on": True}

    def flaky(toml: str):
        if bad_seed["on"] and "seed = 2\n" in toml:
            return {"status": "failed", "error": "InternalError: simulated failure", "meta": {}}
        return real(toml)

    monkeypatch.setattr(sweep_executor, "run_scenario", flaky)
    text = sweep_text('[grid]\n"topology.bottleneck_queue.min_th" = [5, 15]\n')
    out = tmp_path / "store"
    first = sw.run_sweep(text, out, workers=2, threads=True)
    assert (first.ok, first.failed) == (2, 2) and "simulated failure" in first.failures[0][1]
    runs = ecnlab.read_sweep(out, "runs").collect()
    failed = runs.filter(pl.col("status") == "failed")
    assert failed["seed"].to_list() == [2, 2] and failed["error"].str.contains("simulated").all()
    assert ecnlab.read_sweep(out).collect()["seed"].unique().to_list() == [1]
    bad_seed["on"] = False
    # A new axis value is not run by --retry failed.
    wider = text.replace("[5, 15]", "[5, 15, 20]")
    retried = sw.run_sweep(wider, out, workers=2, threads=True, retry="failed")
    assert (retried.ran, retried.ok, retried.failed) == (2, 2, 0)
    runs = ecnlab.read_sweep(out, "runs").collect()
    assert runs.height == 4 and set(runs["status"]) == {"ok"}
    assert sw.run_sweep(wider, out, workers=2, threads=True).ran == 2


def test_a_worker_killed_mid_sweep_loses_nothing(grid_store, tmp_path):
    """Two worker processes; one is killed (SIGKILL) while it runs: its run is run again
    elsewhere and the store ends complete and identical to an undisturbed sweep."""
    text = sweep_text(GRID, duration="8s", rate="100Mbps")
    calm = tmp_path / "calm"
    sw.run_sweep(text, calm, workers=2)
    out = tmp_path / "killed"
    killed = {}
    with sw.Executor(workers=2) as ex:
        before = ex.worker_pids()

        def kill_one():
            deadline = time.monotonic() + 60
            while not list((out / "runs").glob("*.parquet")) and time.monotonic() < deadline:
                time.sleep(0.02)
            pid = sorted(before.values())[0]
            os.kill(pid, signal.SIGKILL)
            killed["pid"] = pid

        t = threading.Thread(target=kill_one)
        t.start()
        summary = sw.run_sweep(text, out, executor=ex)
        t.join()
        after = ex.worker_pids()
    assert killed["pid"] not in after.values()
    assert (summary.ok, summary.failed) == (8, 0)
    want, got = _snapshot(calm), _snapshot(out)
    for name in want:
        assert got[name].equals(want[name]), name


def test_ctrl_c_leaves_a_store_the_same_command_resumes(tmp_path, start_cli):
    f = tmp_path / "s.toml"
    f.write_text(sweep_text(GRID, duration="15s", rate="200Mbps"))
    out = tmp_path / "out"
    proc = start_cli("sweep", f, "--out", out, "--workers", "2", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list((out / "runs").glob("*.parquet")):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    # As a terminal does: to the whole process group (the workers too).
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "the same command resumes" in err, err
    assert "Traceback" not in err, err
    done = len(list((out / "runs").glob("*.parquet")))
    assert 1 <= done < 8 and not (out / ".staging").exists()
    for t in ("flows", "ports"):
        assert len(list((out / t).glob("*.parquet"))) == done
    r = run_cli("sweep", f, "--out", out, "--workers", "2")
    assert r.returncode == 0 and f"{done} were already done, {8 - done} ran now, 0 failed" in r.stdout, r.stdout + r.stderr


def test_sweep_api_returns_a_lazy_frame(tmp_path):
    lf = ecnlab.sweep(sweep_text('[grid]\n"topology.bottleneck_queue.min_th" = [5]\n', head="seeds = 1\n"), tmp_path / "s", workers=1, threads=True)
    assert isinstance(lf, pl.LazyFrame)
    assert lf.select("topology.bottleneck_queue.min_th", "name").collect().height == 2


def test_the_report_of_a_store_plots_each_metric_over_the_axes(grid_store, tmp_path):
    import shutil

    out = tmp_path / "store"
    shutil.copytree(grid_store, out)
    r = run_cli("report", out)
    assert r.returncode == 0, r.stderr
    html = (out / "report.html").read_text()
    figs = sorted(p.name for p in (out / "figures").glob("*.png"))
    # Lines over min_th (one per ecn value) and a min_th × ecn heatmap per metric.
    assert "ports.dropped_pkts.png" in figs and "ports.dropped_pkts-heatmap.png" in figs
    assert html.count("data:image/png;base64,") == len(figs)
    assert "Every combination" in html and "rl-&gt;rr" in html
    r = run_cli("report", out, "--metric", "flows.goodput_bps:median")
    assert r.returncode == 2 and "mean, sum, min, max" in r.stderr
    r = run_cli("report", out, "--metric", "ports.drops")
    assert r.returncode == 2 and "no column 'drops'" in r.stderr and "dropped_pkts" in r.stderr
    r = run_cli("report", out, "--metric", "flows.fct_s", "--port", "nowhere")
    assert r.returncode == 0
    r = run_cli("report", out, "--metric", "ports.utilization", "--port", "nowhere")
    assert r.returncode == 2 and "no port named 'nowhere'" in r.stderr


@pytest.mark.parametrize("name", ["red_ecn.toml", "dctcp_k.toml"])
def test_the_example_sweeps_are_valid(name):
    spec = sw.load_sweep(Path(__file__).resolve().parent.parent / "scenarios" / "sweeps" / name)
    assert len(spec.points) >= 60 and "seed" in spec.columns


def test_a_sweep_and_a_reproduction_run_on_an_existing_cluster(tmp_path):
    from distributed import LocalCluster

    f = tmp_path / "s.toml"
    f.write_text(sweep_text('[grid]\n"topology.bottleneck_queue.min_th" = [5, 15]\n', head="seeds = 1\n"))
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", dashboard_address=":0") as cluster:
        r = run_cli("sweep", f, "--out", tmp_path / "out", "--scheduler", cluster.scheduler_address)
        assert r.returncode == 0 and "2 ran now" in r.stdout, r.stdout + r.stderr
        r = run_cli("reproduce", "core.mdl", "--quick", "--out", tmp_path / "core", "--scheduler", cluster.scheduler_address, "-q")
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "core" / "report.html").is_file()
    r = run_cli("sweep", f, "--out", tmp_path / "other", "--scheduler", "tcp://127.0.0.1:9")
    assert r.returncode == 2 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in r.stderr, r.stderr


def test_two_sweeps_cannot_write_one_store(tmp_path):
    a = sw.Store(tmp_path / "s")
    a.open({"axes": [{"name": "seed"}]})
    with pytest.raises(ecnlab.OutputError, match="another sweep is writing"):
        sw.Store(tmp_path / "s").open({"axes": [{"name": "seed"}]})
    a.close()
    b = sw.Store(tmp_path / "s")
    b.open({"axes": [{"name": "seed"}]})
    with pytest.raises(ecnlab.OutputError, match="holds a sweep over axes"):
        sw.Store(tmp_path / "s").open({"axes": [{"name": "K"}]})
    b.close()


def test_runs_of_another_build_or_of_removed_points_leave_the_tables(grid_store, tmp_path, monkeypatch):
    import shutil

    out = tmp_path / "store"
    shutil.copytree(grid_store, out)
    # Fewer points: the others move to superseded/ and the tables hold exactly the sweep's.
    fewer = sweep_text(GRID.replace("[5, 15]", "[5]"))
    assert sw.run_sweep(fewer, out, workers=1, threads=True).ran == 0
    assert ecnlab.read_sweep(out, "runs").collect().height == 4
    assert len(list((out / "superseded" / "flows").glob("*.parquet"))) == 4
    assert set(pl.scan_parquet(f"{out}/flows/*.parquet").collect()["min_th"]) == {5}
    # Back to all points: they return without running.
    assert sw.run_sweep(sweep_text(GRID), out, workers=1, threads=True).ran == 0
    assert ecnlab.read_sweep(out, "runs").collect().height == 8
    # Another build of the simulator: every run is run again, none counted twice.
    monkeypatch.setattr(ecnlab._core, "source_hash", "0" * 16)
    again = sw.run_sweep(sweep_text(GRID), out, workers=1, threads=True)
    assert (again.ran, again.ok) == (8, 8)
    runs = ecnlab.read_sweep(out, "runs").collect()
    assert runs.height == 8 and set(runs["source_hash"]) == {"0" * 16}
    assert ecnlab.read_sweep(out).collect().height == 16


# ------------------------------------------------------------- a damaged store


def _truncate(f: Path, keep: int = 100) -> None:
    data = f.read_bytes()
    f.write_bytes(data[:keep])


def test_a_damaged_run_is_run_again_and_said_so(grid_store, tmp_path):
    # A truncated flows file went unnoticed ("already done"), and the report then failed
    # with a Parquet error naming neither the file nor the run.
    out = tmp_path / "store"
    shutil.copytree(grid_store, out)
    keys = sorted(p.stem for p in (out / "runs").glob("*.parquet"))
    _truncate(out / "flows" / f"{keys[0]}.parquet")
    (out / "ports" / f"{keys[1]}.parquet").unlink()
    r = run_cli("report", out)
    assert r.returncode == 2 and "damaged" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert f"flows/{keys[0]}.parquet" in r.stderr or f"ports/{keys[1]}.parquet" in r.stderr, r.stderr
    summary = sw.run_sweep(sweep_text(GRID), out, workers=1, threads=True)
    assert (summary.skipped, summary.ran, summary.ok) == (6, 2, 2)
    assert len(summary.damaged) == 2
    whys = " ".join(why for _, why in summary.damaged)
    assert f"flows/{keys[0]}.parquet does not read" in whys and f"ports/{keys[1]}.parquet is missing" in whys
    want, got = _snapshot(grid_store), _snapshot(out)
    for t in want:
        assert got[t].equals(want[t]), t
    assert sw.Store(out).damage() == {}


def test_a_table_that_lost_rows_is_damage_and_the_cli_says_so(grid_store, tmp_path):
    out = tmp_path / "store"
    shutil.copytree(grid_store, out)
    key = sorted(p.stem for p in (out / "runs").glob("*.parquet"))[3]
    f = out / "flows" / f"{key}.parquet"
    pl.read_parquet(f).head(1).write_parquet(f)
    assert "holds 1 rows; 2 were written" in sw.Store(out).damage()[key]
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(sweep_text(GRID))
    r = run_cli("sweep", sweep_file, "--out", out, "--workers", "1", "--threads")
    assert r.returncode == 0, r.stderr
    assert "is damaged" in r.stdout and "running it again" in r.stdout, r.stdout
    assert "1 ran now" in r.stdout


def test_a_truncated_runs_file_does_not_block_resuming(grid_store, tmp_path):
    out = tmp_path / "store"
    shutil.copytree(grid_store, out)
    key = sorted(p.stem for p in (out / "runs").glob("*.parquet"))[0]
    _truncate(out / "runs" / f"{key}.parquet", 10)
    summary = sw.run_sweep(sweep_text(GRID), out, workers=1, threads=True)
    assert (summary.ran, summary.ok) == (1, 1) and summary.damaged
    assert f"runs/{key}.parquet does not read" in summary.damaged[0][1]
    assert not (out / ".staging").exists()


SLOW_SCRATCH = '''
import time
import distributed.core

class _SlowWorkSpace(distributed.core.WorkSpace):
    """Dask's scratch space as slow to create as on a loaded machine (> 1 s)."""

    def __init__(self, *args, **kwargs):
        time.sleep(1.1)
        super().__init__(*args, **kwargs)

distributed.core.WorkSpace = _SlowWorkSpace
'''


@pytest.mark.parametrize("mode", [["--threads"], []], ids=["threads", "processes"])
def test_dasks_own_warnings_stay_off_the_terminal_and_ours_stay_on(tmp_path, mode):
    """Before, a scratch space slow to create printed Dask's raw "UserWarning: Creating
    scratch directories is taking a surprisingly long time" (two lines, from the client and
    from each worker process) among the sweep's output."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SLOW_SCRATCH)
    (tmp_path / "w.toml").write_text(WINDOWS)
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    env.pop("PYTHONWARNINGS", None)
    cmd = [*ECNLAB, "sweep", str(tmp_path / "w.toml"), "--out", str(tmp_path / "store"), "--workers", "1", "--quiet", *mode]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "scratch" not in r.stderr and "UserWarning" not in r.stderr, r.stderr
    assert "warning: " in r.stderr and "mostly idle" in r.stderr, r.stderr
