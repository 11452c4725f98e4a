"""Results read lazily from their run directories (``read_run_dir(lazy=True)``, what
``reproduce`` judges): a time series that cannot be read when asked stops the analysis
instead of leaving seeds out of claims."""

from __future__ import annotations

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

