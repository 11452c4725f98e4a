"""bench/profile.py, where the simulator's time goes by count: its reading of callgrind's
output on a file written by hand, and (where valgrind is installed) a short run counted twice,
which gives the same instructions to within a millionth."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "bench" / "profile.py"


def _load():
    spec = importlib.util.spec_from_file_location("_profile_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


# Two functions: `loop` with its own cost on two lines (one from an inlined file) and a call
# into `work`, whose inclusive cost (the line after calls=) is not the loop's own; `work`
# named by its compressed id on its second mention.
CALLGRIND = """\
# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 1110 300 60 0 13 1 0 4 1

ob=(1) /bin/x
fl=(1) a.rs
fn=(1) ecnlab::net::Sim::run_until
10 100 30 5 0 3
fi=(2) b.rs
+2 10 0 1
cfl=(1)
cfn=(2) ecnlab::net::Sim::port_arrive
calls=7 40
*  1000 270 54 0 10 1 0 4 1
fl=(1)
fn=(2)
40 600 200 30 0 6 1 0 3 1
-1 400 70 24 0 4 0 0 1
totals: 1110 300 60 0 13 1 0 4 1
"""


def test_self_costs_leave_out_what_the_callee_did() -> None:
    prof = _load().parse_callgrind(CALLGRIND)
    assert prof.totals["Ir"] == 1110 and prof.totals["DLmr"] == 4
    loop = prof.functions["ecnlab::net::Sim::run_until"]
    work = prof.functions["ecnlab::net::Sim::port_arrive"]
    assert (loop["Ir"], loop["Dr"], loop["Dw"], loop["D1mr"]) == (110, 30, 6, 3)
    assert (work["Ir"], work["D1mr"], work["D1mw"], work["DLmr"], work["DLmw"]) == (1000, 10, 1, 4, 1)
    # Every instruction counted once: the self costs add up to the totals.
    for ev in ("Ir", "Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw"):
        assert sum(f.get(ev, 0) for f in prof.functions.values()) == prof.totals[ev], ev


def test_a_function_id_used_before_it_is_named_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\(9\)"):
        _load().parse_callgrind("events: Ir\nfn=(9)\n1 5\n")


def test_unknown_runs_exit_2_naming_them() -> None:
    p = subprocess.run([sys.executable, str(SCRIPT), "--runs", "red100-ecn1,nope"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "'nope'" in p.stderr


def test_one_build_counts_the_same_instructions_twice(tmp_path: Path) -> None:
    for tool in ("valgrind", "setarch"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    prof = _load()
    bench = prof._load_bench()
    exe = bench.build_ecnlab(REPO, lambda s: None)
    out = tmp_path / "p"
    p = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "red100-ecn1", "--ecnlab-bin", str(exe), "--before", str(exe), "--out", str(out)],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.with_suffix(".json").read_text())
    (run,) = doc["runs"]
    after, before = run["after"], run["before"]
    assert after["events"] == before["events"] > 0
    # The same instructions (fixed slices, memory where it was the first time) but for a few
    # tens in glibc's allocator; slices sized to the wall clock, which end more or less often
    # on each run, moved them by four in a million.
    assert before["totals"]["Ir"] > 0
    assert abs(after["totals"]["Ir"] - before["totals"]["Ir"]) <= 1e-6 * before["totals"]["Ir"]
    # The loop's own function and what it calls are all there, and nothing else.
    names = [f["function"] for f in after["functions"]]
    assert "ecnlab::net::Sim::run_until" in names
    assert not any("main" == n or n.endswith("::main") for n in names)
    assert abs(sum(f["share"] for f in after["functions"]) - 1.0) < 1e-9
    assert after["per_event"]["instructions"] > 100
    md = out.with_suffix(".md").read_text()
    assert "| red100-ecn1 | 10s |" in md and "| 1.000 |" in md
