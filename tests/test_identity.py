"""bench/identity.py, the behaviour identity check between two builds: one build run twice
compares identical, and a result that moved is named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "bench" / "identity.py"


def _identity(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )


def test_a_build_is_identical_to_itself_and_a_moved_table_is_named(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    first = _identity("--only", "scenarios/udp_cbr", "--only", "bench/red100-ecn1", "--out", str(a))
    assert first.returncode == 0, first.stderr
    manifest = json.loads(a.read_text())
    tables = [k for k in manifest["entries"] if k.endswith(".parquet")]
    assert sorted(tables) == sorted(
        f"{run}/{t}.parquet" for run in ("scenarios/udp_cbr", "bench/red100-ecn1") for t in ("flows", "ports", "timeseries")
    )
    assert "bench/red100-ecn1/run.json" in manifest["entries"]

    second = _identity("--only", "scenarios/udp_cbr", "--only", "bench/red100-ecn1", "--out", str(b), "--compare", str(a))
    assert second.returncode == 0, second.stderr
    assert "8 identical, 0 differ" in second.stderr and "IDENTICAL" in second.stderr

    moved = dict(manifest, entries=dict(manifest["entries"], **{"bench/red100-ecn1/flows.parquet": "0" * 64}))
    a.write_text(json.dumps(moved))
    third = _identity("--compare", str(a), "--against", str(b))
    assert third.returncode == 1
    assert "DIFFERS  bench/red100-ecn1/flows.parquet" in third.stderr
    assert "NOT IDENTICAL" in third.stderr
