"""The speed benchmark's smoke mode: every benchmark scenario, shortened, on ecnlab alone.

It runs the harness the way a user does (``python3 bench/run.py --smoke``), in a separate
process without the ecnlab package's dependencies, and checks that what it reports is a
real simulation of the scenario: traffic crossed the bottleneck, repeated runs of the same
seed agree exactly, and the written files say the same as the printed table.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = ["red100-ecn0", "red100-ecn1", "dt1g", "dt1g-1000", "dt1g-10000"]


def _load_bench():
    path = REPO / "python" / "ecnlab" / "bench.py"
    spec = importlib.util.spec_from_file_location("_bench_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _huge_pages_on_request() -> bool:
    """2 MiB transparent huge pages given on request (madvise) to a glibc process started
    from here (whose heap the simulator's allocator marks for them)."""
    import platform

    thp = Path("/sys/kernel/mm/transparent_hugepage")
    try:
        mode = (thp / "enabled").read_text()
        size = (thp / "hpage_pmd_size").read_text().strip()
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    inherited_off = any(line.startswith("THP_enabled:") and line.endswith("0") for line in status.splitlines())
    return "[madvise]" in mode and size == "2097152" and not inherited_off and platform.libc_ver()[0] == "glibc"


def test_smoke_runs_every_scenario_repeatably(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "--smoke", "--repeat", "2",
         "--results-dir", str(tmp_path), "--quiet"],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    files = sorted(tmp_path.glob("*-smoke.json"))
    assert len(files) == 1, list(tmp_path.iterdir())
    doc = json.loads(files[0].read_text())
    assert doc["smoke"] is True
    assert [s["scenario"] for s in doc["scenarios"]] == SCENARIOS
    for s in doc["scenarios"]:
        e = s["ecnlab"]
        assert e["runs"] == 2
        # Same scenario, same seed: identical results.
        assert e["repeatable"], s["scenario"]
        r = e["results"]
        assert r["bottleneck_tx_pkts"] > 0 and r["goodput_bps"] > 0, s["scenario"]
        assert r["other_queue_drops"] == 0, s["scenario"]
        assert e["events"] > 0 and e["run_wall_s"] > 0 and e["peak_rss_kb"] > 0
        # ecnlab alone: nothing is compared, no goal is judged.
        assert "ns3" not in s and "speedup" not in s
    assert doc["bytes_per_flow"]["extra_flows"] == 9000
    # The simulator's allocator asks for transparent huge pages: where the system gives them
    # on request, the 10,000 flows' state (tens of MB) is on them.
    huge = {s["scenario"]: s["ecnlab"]["huge_pages_kb"] for s in doc["scenarios"]}
    if _huge_pages_on_request():
        assert huge["dt1g-10000"] and huge["dt1g-10000"] >= 4096, huge
    md = (tmp_path / "latest-smoke.md").read_text()
    assert md in proc.stdout
    for name in SCENARIOS:
        assert f"| {name} |" in md


def test_relative_difference_and_duration_override() -> None:
    b = _load_bench()
    assert b.rel_diff(110, 100) == 0.1
    assert b.rel_diff(0, 0) == 0.0
    assert b.rel_diff(5, 0) == float("inf")
    assert b.rel_diff(None, 3) is None
    text = 'name = "x"\nduration = "10s"\n[topology]\nduration = "keep"\n'
    assert b.with_duration(text, "0.5s") == 'name = "x"\nduration = "0.5s"\n[topology]\nduration = "keep"\n'


def test_results_of_both_simulators_use_the_same_terms() -> None:
    """The key results are computed from each simulator's own report, in the same units."""
    b = _load_bench()
    ecn = {
        "duration_s": 2.0,
        "ports": [
            {"port": "rl->rr", "dropped_pkts": 7, "dropped_early": 3, "dropped_forced": 0,
             "dropped_overflow": 4, "marked_pkts": 5, "dequeued_pkts": 1000,
             "mean_queue_pkts": 12.5, "utilization": 0.9},
            {"port": "rr->rl", "dropped_pkts": 0},
        ],
        "flows": [
            {"bytes_delivered": 1_000_000, "goodput_bps": 4e6, "fct_s": None, "retransmissions": 2},
            {"bytes_delivered": 250_000, "goodput_bps": 1e6, "fct_s": 0.5, "retransmissions": 1},
        ],
    }
    ns = {
        "goodput_bps": 5e6,
        "other_queue_drops": 0,
        "bottleneck": {"dropped": 7, "red_unforced_drops": 3, "red_forced_drops": 0,
                       "queue_limit_drops": 4, "marked": 5, "link_tx_packets": 1000,
                       "mean_queue_pkts": 12.5, "utilisation": 0.9},
        "flows": [
            {"goodput_bps": 4e6, "fct_s": None, "retransmissions": 2},
            {"goodput_bps": 1e6, "fct_s": 0.5, "retransmissions": 1},
        ],
    }
    a, n = b.ecnlab_results(ecn), b.ns3_results(ns)
    assert a == n
    assert a["goodput_bps"] == 5e6
    assert abs(a["jain_index"] - 25 / 34) < 1e-12
    assert a["finished_flows"] == 1 and a["fct_mean_s"] == 0.5


def test_the_scenario_files_are_what_their_generator_writes() -> None:
    # The files are committed and the generator is the definition: an edit to one alone
    # (a TCP key pinned in the files but not in the generator) would be lost, silently, at
    # the next regeneration.
    path = REPO / "bench" / "scenarios" / "generate.py"
    spec = importlib.util.spec_from_file_location("_bench_scenarios_generate", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    files = gen.files()
    # dt1g-1m runs only when named (a million flows): not in the smoke set.
    assert sorted(n.removesuffix(".toml") for n in files) == sorted(SCENARIOS + ["dt1g-1m"])
    for name, text in files.items():
        assert (REPO / "bench" / "scenarios" / name).read_text() == text, name


def test_before_and_after_runs_two_builds_side_by_side(tmp_path: Path) -> None:
    """``--before`` times an earlier build alternately with this one and says whether the two
    simulated the same thing: the same binary twice gives the same results and events; a build
    whose results differ is named as such, key by key."""
    b = _load_bench()
    exe = b.build_ecnlab(REPO, lambda s: None)
    # A "build" that reports one more bottleneck drop than the real one.
    other = tmp_path / "other-build"
    other.write_text(
        "#!" + sys.executable + "\n"
        "import json, subprocess, sys\n"
        f"out = subprocess.run([{str(exe)!r}] + sys.argv[1:], capture_output=True, text=True, check=True).stdout\n"
        "doc = json.loads(out)\n"
        "for p in doc['ports']:\n"
        "    if p['port'] == 'rl->rr':\n"
        "        p['dropped_pkts'] += 1\n"
        "print(json.dumps(doc))\n"
    )
    other.chmod(0o755)
    for before, same in ((exe, True), (other, False)):
        out = tmp_path / f"results-{before.name}"
        proc = subprocess.run(
            [sys.executable, str(REPO / "bench" / "run.py"), "--smoke", "--only", "red100-ecn0",
             "--repeat", "2", "--ecnlab-bin", str(exe), "--before", str(before),
             "--results-dir", str(out), "--quiet"],
            capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(next(out.glob("*-smoke.json")).read_text())
        assert doc["before"]["binary"] == str(before.resolve())
        [s] = doc["scenarios"]
        assert s["before"]["runs"] == s["ecnlab"]["runs"] == 2
        ba = s["before_after"]
        assert ba["events_before"] == ba["events_after"] > 0
        assert len(ba["pairwise"]) == 2 and ba["after_over_before"] > 0
        assert ba["same_results"] is same
        assert ba["differing_results"] == ([] if same else ["bottleneck_drops"])
        md = (out / "latest-smoke.md").read_text()
        assert "## Before and after" in md
        assert ("| yes |" if same else "| no: bottleneck_drops |") in md


def test_before_must_name_a_build(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "--smoke", "--before", "no-such-revision",
         "--results-dir", str(tmp_path), "--quiet"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert "--before" in proc.stderr and "no-such-revision" in proc.stderr
    assert not list(tmp_path.iterdir())


def _load_pgo():
    path = REPO / "tools" / "pgo.py"
    spec = importlib.util.spec_from_file_location("_pgo_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_profile_trains_on_files_that_exist_and_can_be_turned_off() -> None:
    pgo = _load_pgo()
    missing = [t for t in pgo.TRAINING if not (REPO / t).is_file()]
    assert not missing
    # The key is stable, and moves with the training set, so a profile is made again when
    # the set changes.
    k = pgo.key()
    assert len(k) == 16 and k == pgo.key()
    pgo.TRAINING = pgo.TRAINING[:-1]
    assert pgo.key() != k
    off = subprocess.run(
        [sys.executable, str(REPO / "tools" / "pgo.py"), "rustflags"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "ECNLAB_PGO": "0"},
    )
    assert off.returncode == 0 and off.stdout == ""
    bad = subprocess.run([sys.executable, str(REPO / "tools" / "pgo.py"), "nonsense"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_the_training_scenarios_load_in_this_simulator() -> None:
    # A training scenario the simulator no longer reads would only make `make build` fall
    # back to a build without a profile, with a warning: here it fails.
    import ecnlab

    for t in _load_pgo().TRAINING:
        path = REPO / t
        cwd = os.getcwd()
        os.chdir(path.parent)  # traces are read relative to the scenario's folder
        try:
            ecnlab.Scenario.from_file(path.name)
        finally:
            os.chdir(cwd)


def test_a_revision_before_is_built_from_a_worktree_that_goes_away(tmp_path: Path, monkeypatch) -> None:
    """`--before REV` checks the revision out in a temporary worktree, builds there, keeps the
    binary and removes the worktree (the build itself is stood in for: it takes minutes)."""
    b = _load_bench()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    label, exe = b.resolve_before(REPO, "HEAD")
    assert label == head and exe is None
    seen = {}

    def fake_build(src: Path, log, target=None) -> Path:
        seen["rev"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True).stdout.strip()
        seen["target"] = target
        out = tmp_path / "built-ecnlab-run"
        out.write_text("#!/bin/sh\n")
        b._BUILT[out.resolve()] = "release"
        return out

    monkeypatch.setattr(b, "build_ecnlab", fake_build)
    worktrees = lambda: subprocess.run(["git", "worktree", "list"], cwd=REPO, capture_output=True, text=True).stdout
    before = worktrees()
    kept = b.build_before(REPO, head, lambda s: None)
    assert seen["rev"] == head and seen["target"] == REPO / "target" / "bench-before"
    assert kept.is_file() and kept.parent == REPO / "target" / "bench-before" and b.build_kind(kept) == "release"
    assert worktrees() == before
    kept.unlink()


def test_the_report_says_how_each_build_was_made() -> None:
    b = _load_bench()
    assert b.build_kind(Path("/opt/ecnlab-run")) == "given, build unknown"
    exe = b.build_ecnlab(REPO, lambda s: None)
    pgo = subprocess.run([sys.executable, str(REPO / "tools" / "pgo.py"), "rustflags"], capture_output=True, text=True)
    want = "release, profile-guided by tools/pgo.py" if pgo.stdout.strip() else "release"
    assert b.build_kind(exe) == want


def test_a_second_record_of_the_day_is_kept_beside_the_first(tmp_path: Path) -> None:
    """Two benchmark records of one day on one host: the second goes beside the first, not
    over it; a smoke run's record is replaced."""
    bench = _load_bench()
    first = bench.record_path(tmp_path, "2026-11-28-vm", keep_earlier=True)
    assert first.name == "2026-11-28-vm.json"
    first.write_text("{}")
    second = bench.record_path(tmp_path, "2026-11-28-vm", keep_earlier=True)
    assert second.name == "2026-11-28-vm-2.json"
    second.write_text("{}")
    assert bench.record_path(tmp_path, "2026-11-28-vm", keep_earlier=True).name == "2026-11-28-vm-3.json"
    (tmp_path / "2026-11-28-vm-smoke.json").write_text("{}")
    assert bench.record_path(tmp_path, "2026-11-28-vm-smoke", keep_earlier=False).name == "2026-11-28-vm-smoke.json"
