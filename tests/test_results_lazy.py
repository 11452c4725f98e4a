"""Results read lazily from their run directories (``read_run_dir(lazy=True)``, what
``reproduce`` judges): a time series that cannot be read when asked stops the analysis
instead of leaving seeds out of claims."""

from __future__ import annotations

import os

import pytest

import ecnlab
from ecnlab.experiments.base import RunSet
from ecnlab.experiments.verdict import Claim, Excluded, per_seed


def small(seed: int, rate: str = "10Mbps") -> ecnlab.Scenario:
    s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate=rate, bottleneck_delay="5ms", duration="1s", seed=seed)
    s.add_udp_flow("l0", "r0", rate="12Mbps", name="a")
    return s


def mean_queue(r: ecnlab.Results) -> float:
    return float(r.series("queue_pkts")["value"].mean())


@pytest.fixture
def lazy_runs(tmp_path):
    for seed in range(1, 7):
        ecnlab.write_run_dir(small(seed), tmp_path / f"r{seed}")
    return {f"x-s{seed}": ecnlab.read_run_dir(tmp_path / f"r{seed}", lazy=True) for seed in range(1, 7)}


def test_a_missing_time_series_stops_the_analysis_instead_of_leaving_the_seed_out(tmp_path, lazy_runs):
    runs = RunSet(lazy_runs)
    whole = runs.per_seed("x", mean_queue)
    assert len(whole) == 6 and not any(isinstance(v, Excluded) for v in whole.values())
    for r in lazy_runs.values():
        r._timeseries = None  # as the budget drops it
    (tmp_path / "r3" / "timeseries.parquet").unlink()
    with pytest.raises(ecnlab.OutputError, match="r3/timeseries.parquet is missing"):
        RunSet(lazy_runs).per_seed("x", mean_queue)
    with pytest.raises(ecnlab.OutputError, match="r3/timeseries.parquet is missing"):
        per_seed(((int(k[3:]), r) for k, r in lazy_runs.items()), mean_queue)
    # What a metric itself cannot compute still leaves the seed out, with the reason.
    left = RunSet(lazy_runs).per_seed("x", lambda r: r.flow("nobody"))
    assert all(isinstance(v, Excluded) and "KeyError" in v.reason for v in left.values())
    assert Claim("greater").decide(whole, {s: 0.0 for s in whole}).n == 6


def test_an_assigned_time_series_survives_the_eviction_of_the_one_it_replaced(tmp_path, lazy_runs, monkeypatch):
    from ecnlab import results as results_mod

    r1, r2, r3 = (lazy_runs[f"x-s{s}"] for s in (1, 2, 3))
    one = r1.timeseries.estimated_size()
    monkeypatch.setattr(results_mod, "TIMESERIES_BUDGET_BYTES", one + one // 2)
    mine = r1.timeseries.head(3)
    r1.timeseries = mine
    r2.timeseries, r3.timeseries  # over the budget: the oldest entries are dropped
    assert r1.timeseries.equals(mine)
    assert results_mod._LOADED.bytes <= one + one // 2


def test_a_result_dying_while_the_cache_is_locked_does_not_deadlock(tmp_path):
    """The weak reference's callback runs wherever the result dies, also inside the cache's
    own locked section (a garbage collection while it admits a frame): it must not take the
    lock."""
    import threading

    from ecnlab import results as results_mod

    ecnlab.write_run_dir(small(1), tmp_path / "r")
    before = results_mod._LOADED.bytes
    box = [ecnlab.read_run_dir(tmp_path / "r", lazy=True)]
    box[0].timeseries
    assert results_mod._LOADED.bytes > before

    def die_under_the_lock() -> None:
        with results_mod._LOADED.lock:
            box.clear()

    t = threading.Thread(target=die_under_the_lock, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "the callback waited for the lock its own thread holds"
    assert results_mod._LOADED.bytes == before


def test_two_threads_loading_one_result_count_its_frame_once(tmp_path, monkeypatch):
    import threading

    from ecnlab import results as results_mod

    ecnlab.write_run_dir(small(1), tmp_path / "r")
    r = ecnlab.read_run_dir(tmp_path / "r", lazy=True)
    before = results_mod._LOADED.bytes
    both = threading.Barrier(2, timeout=10)
    real = results_mod.read_kept_series

    def read_together(d, identity):
        frame = real(d, identity)
        both.wait()
        return frame

    monkeypatch.setattr(results_mod, "read_kept_series", read_together)
    got: list = []
    ts = [threading.Thread(target=lambda: got.append(r.timeseries)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert len(got) == 2 and got[0] is got[1]
    assert results_mod._LOADED.bytes - before == got[0].estimated_size()
    del r
    assert results_mod._LOADED.bytes == before


def test_a_run_directory_replaced_under_its_lazy_results_is_refused_not_read(tmp_path):
    """Flows of one run with another run's samples: the directory replaced (atomically, as
    every ecnlab write does) after its results were opened."""
    d = tmp_path / "r"
    ecnlab.write_run_dir(small(1, rate="20Mbps"), d)
    r = ecnlab.read_run_dir(d, lazy=True)
    first = r.timeseries
    ecnlab.write_run_dir(small(1, rate="5Mbps"), d)  # another run where it was
    r._timeseries = None  # as the budget drops it
    with pytest.raises(ecnlab.OutputError, match="r/timeseries.parquet is not the file its run's results were read with"):
        r.timeseries
    # Removed: named, and said how it can happen.
    import shutil

    shutil.rmtree(d)
    with pytest.raises(ecnlab.OutputError, match="r/timeseries.parquet is missing: its run directory was removed"):
        r.timeseries
    assert first.height > 0


def test_a_lock_that_cannot_be_taken_names_the_lock_file(tmp_path, monkeypatch):
    """A file system that cannot lock (flock fails with ENOLCK, as on some NFS or FUSE
    mounts) is an OutputError (exit 2) naming the lock file. Before, the bare OSError
    escaped."""
    import errno
    import fcntl

    from ecnlab.fsutil import sole_writer

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with pytest.raises(ecnlab.OutputError, match=r"cannot lock .*\.repro\.lock: No locks available"):
        with sole_writer(tmp_path / "repro"):
            pass


def test_one_process_at_a_time_writes_an_output(tmp_path, cli):
    from ecnlab.fsutil import sole_writer

    out = tmp_path / "repro"
    with sole_writer(out) as lock:
        assert lock == tmp_path / ".repro.lock" and lock.read_text().strip() == str(os.getpid())
        with pytest.raises(ecnlab.OutputError, match="being written by another process"):
            with sole_writer(out):
                pass
        p = cli("reproduce", "core.mdl", "--quick", "--seeds", "2", "--out", str(out))
        assert p.returncode == 2, p.stderr
        assert f"{out} is being written by another process (last recorded pid {os.getpid()}), which holds {lock}" in p.stderr
        assert not out.exists()
    assert not lock.exists()
    with sole_writer(out):
        pass
