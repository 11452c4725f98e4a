"""Speed and memory benchmark: ecnlab beside ns-3 on the same dumbbell scenarios.

Runs each scenario of ``bench/scenarios/`` with ``ecnlab-run`` (the Rust binary, no Python
in the measured process) and, when the ``ns3`` wheel is installed, the same scenario with
the ns-3 reference program ``bench/ns3/dumbbell.cc`` (definitions in
``bench/ns3/SCENARIOS.md``). The two simulators run alternately, one process at a time,
``--repeat`` times each; every child is measured with ``os.wait4`` (peak RSS, CPU time) and
reports its own simulation-loop wall and CPU time. The report gives, per scenario, the
median times, peak RSS, events/s and bottleneck packets/s of both, the ratios measured in
the same run, and the key results of both simulations side by side, so a reader sees that
the two simulated the same thing.

Only the standard library is used, so this runs without the Python package's dependencies::

    python3 bench/run.py                 # everything, both simulators if ns-3 is there
    python3 bench/run.py --only dt1g --repeat 5
    python3 bench/run.py --smoke         # seconds: short runs, ecnlab only

Speed ratios are ns-3 time / ecnlab time of the simulation loop (setup and result output
excluded on both sides), on CPU time by default (``--clock wall`` for wall time): on a
machine shared with other work, wall time also counts the time the scheduler gave to
others, CPU time does not; on an idle machine the two agree for these single-threaded
programs.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import math
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["BenchScenario", "SCENARIOS", "add_arguments", "main", "run_from_args"]

#: Port name of the bottleneck (router rl towards router rr) in ecnlab's dumbbell.
BOTTLENECK_PORT = "rl->rr"


@dataclass(frozen=True)
class BenchScenario:
    """One benchmark scenario: the ecnlab file, the ns-3 equivalent and the goals."""

    name: str
    #: File under bench/scenarios/.
    toml: str
    #: What it is, for the report.
    title: str
    #: (ns-3 scenario, parameters) or None for ecnlab-only scenarios.
    ns3: tuple[str, dict[str, Any]] | None
    #: ecnlab must be at least this many times faster than ns-3 (None: no goal).
    speed_goal: float | None
    #: ns-3 is slow here: run it at most this many times whatever --repeat says.
    ns3_max_repeat: int | None = None
    #: Simulated duration of the --smoke version.
    smoke_duration: str = "0.2s"
    #: What a reader comparing the two simulations must know (from SCENARIOS.md).
    note: str | None = None
    #: False: ecnlab-run prints the flows' totals, not one row per flow (a million rows).
    flow_rows: bool = True
    #: False: run only when named with --only (minutes and gigabytes).
    by_default: bool = True
    #: ecnlab is slow here too: run it at most this many rounds whatever --repeat says.
    ecnlab_max_repeat: int | None = None


#: Memory goal: ecnlab's peak RSS at most 1/MEMORY_GOAL of ns-3's.
MEMORY_GOAL = 5.0

#: ecnlab runs shorter than this are repeated within a round (at most MAX_BATCH times).
MIN_ROUND_CPU_S = 0.5
MAX_BATCH = 10

SCENARIOS: tuple[BenchScenario, ...] = (
    BenchScenario(
        "red100-ecn0",
        "red100-ecn0.toml",
        "(a) 100 Mbps RED dumbbell, 2 bulk + 6 short NewReno flows, 10 s, drops",
        ("red100", {"ecn": 0}),
        100.0,
        smoke_duration="1.1s",
    ),
    BenchScenario(
        "red100-ecn1",
        "red100-ecn1.toml",
        "(a) 100 Mbps RED+ECN dumbbell, 2 bulk + 6 short NewReno flows, 10 s",
        ("red100", {"ecn": 1}),
        100.0,
        smoke_duration="1.1s",
        note=(
            "Known difference (SCENARIOS.md §3, ECN in ns-3 TCP): ns-3 reduces the window again "
            "for an ECE that arrives during loss recovery or after a timeout, so both bulk flows "
            "collapse to ssthresh = 2 segments after the initial overshoot and the bottleneck "
            "carries about a third less traffic than in ecnlab, which does not copy that. The "
            "speed-up per bottleneck packet is the fair ratio here."
        ),
    ),
    BenchScenario(
        "dt1g",
        "dt1g.toml",
        "(b) 1 Gbps / 20 ms drop-tail dumbbell, 10 bulk flows, 5 s",
        ("dt1g", {}),
        100.0,
        smoke_duration="0.3s",
    ),
    BenchScenario(
        "dt1g-1000",
        "dt1g-1000.toml",
        "(c) as (b) with 1000 flows on 1000 sender hosts, 5 s",
        ("dt1g-1000", {}),
        500.0,
        ns3_max_repeat=1,
        smoke_duration="0.15s",
    ),
    BenchScenario(
        "dt1g-10000",
        "dt1g-10000.toml",
        "as (c) with 10,000 flows (10 per host pair), ecnlab only",
        None,
        None,
        smoke_duration="0.1s",
    ),
    BenchScenario(
        "dt1g-1m",
        "dt1g-1m.toml",
        "as (c) with 1,000,000 flows (1000 per host pair), ecnlab only: memory",
        None,
        None,
        smoke_duration="0.05s",
        flow_rows=False,
        by_default=False,
        ecnlab_max_repeat=1,
    ),
)


class BenchError(RuntimeError):
    """A build or a run failed; the message says which and why."""


# --------------------------------------------------------------------------- locating things


def repo_root() -> Path:
    """The source checkout this file lives in (``ECNLAB_REPO`` overrides)."""
    env = os.environ.get("ECNLAB_REPO")
    candidates = [Path(env)] if env else []
    candidates += list(Path(__file__).resolve().parents)
    for c in candidates:
        if (c / "Cargo.toml").is_file() and (c / "bench" / "scenarios").is_dir():
            return c
    raise BenchError(
        "cannot find the ecnlab source checkout (Cargo.toml and bench/scenarios); "
        "run from a checkout or set ECNLAB_REPO"
    )


def _load_ns3_module():
    """ecnlab.ns3, imported without importing the ecnlab package (whose __init__ needs the
    compiled core and its dependencies)."""
    if __package__:
        from . import ns3  # type: ignore[import-not-found]

        return ns3
    path = Path(__file__).with_name("ns3.py")
    spec = importlib.util.spec_from_file_location("_ecnlab_ns3", path)
    if spec is None or spec.loader is None:
        raise BenchError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def build_ecnlab(repo: Path, log: Callable[[str], None], target: Path | None = None) -> Path:
    """``cargo build --release --bin ecnlab-run`` in the checkout `repo` (into `target` when
    given, else cargo's own target directory), profile-guided as ``make build`` builds the
    package when the checkout has ``tools/pgo.py`` and it finds a profile (into the
    ``pgo-use`` folder of that directory); returns the binary's path."""
    env = dict(os.environ)
    if target is not None:
        env["CARGO_TARGET_DIR"] = str(target)
    flags = ""
    pgo = repo / "tools" / "pgo.py"
    if pgo.is_file():
        # Its progress (training a profile takes minutes) goes straight to stderr.
        p = subprocess.run([sys.executable, str(pgo), "rustflags"], cwd=repo, stdout=subprocess.PIPE, text=True, env=env)
        if p.returncode != 0:
            raise BenchError(f"tools/pgo.py failed (exit {p.returncode})")
        flags = p.stdout.strip()
    if flags:
        env["RUSTFLAGS"] = (env.get("RUSTFLAGS", "") + " " + flags).strip()
        base = Path(env.get("CARGO_TARGET_DIR", repo / "target"))
        env["CARGO_TARGET_DIR"] = str((base if base.is_absolute() else repo / base) / "pgo-use")
    log(
        f"building ecnlab-run in {repo} (cargo build --release --bin ecnlab-run"
        + (", profile-guided)" if flags else ")")
    )
    proc = subprocess.run(
        ["cargo", "build", "--release", "--locked", "--bin", "ecnlab-run"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-30:])
        raise BenchError(f"cargo build of ecnlab-run failed (exit {proc.returncode}):\n{tail}")
    target = Path(env.get("CARGO_TARGET_DIR", repo / "target"))
    if not target.is_absolute():
        target = repo / target
    exe = target / "release" / "ecnlab-run"
    if not exe.is_file():
        raise BenchError(f"cargo build succeeded but {exe} is missing")
    _BUILT[exe.resolve()] = "release, profile-guided by tools/pgo.py" if flags else "release"
    return exe


#: How each binary this process built was made (`build_kind` reads it).
_BUILT: dict[Path, str] = {}


def build_kind(exe: Path) -> str:
    """How `exe` was made: as `build_ecnlab` built it in this process, else unknown (a binary
    given with --ecnlab-bin or --before)."""
    return _BUILT.get(Path(exe).resolve(), "given, build unknown")


def resolve_before(repo: Path, spec: str) -> tuple[str, Path | None]:
    """What ``--before`` names: an ``ecnlab-run`` binary (its path) or a git revision of the
    checkout (its full commit hash, built later by `build_before`). Raises ValueError saying
    why neither."""
    path = Path(spec)
    if path.is_file() and os.access(path, os.X_OK):
        return str(path.resolve()), path.resolve()
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"],
            cwd=repo,
            capture_output=True,
            text=True,
        )
    except OSError as e:
        raise ValueError(f"{spec!r} is not an executable file, and git cannot be run to read it as a revision ({e})") from e
    if proc.returncode != 0 or not proc.stdout.strip():
        what = "a file but not executable, nor" if path.is_file() else "neither an executable file nor"
        raise ValueError(f"{spec!r} is {what} a git revision of {repo}")
    return proc.stdout.strip(), None


def build_before(repo: Path, commit: str, log: Callable[[str], None]) -> Path:
    """Builds ``ecnlab-run`` of `commit` from a temporary worktree of the checkout, into
    ``target/bench-before`` (kept, so building the same or a near revision again is quick);
    returns a copy of the binary that outlives the next such build."""
    target = repo / "target" / "bench-before"
    target.mkdir(parents=True, exist_ok=True)
    # Worktrees an earlier, killed run left behind are forgotten first.
    subprocess.run(["git", "worktree", "prune"], cwd=repo, capture_output=True)
    with tempfile.TemporaryDirectory(prefix="ecnlab-before-") as tmp:
        src = Path(tmp) / "src"
        add = subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(src), commit],
            cwd=repo,
            capture_output=True,
            text=True,
        )
        if add.returncode != 0:
            raise BenchError(f"git worktree add of {commit} failed: {add.stderr.strip()}")
        try:
            exe = build_ecnlab(src, log, target)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(src)], cwd=repo, capture_output=True)
            subprocess.run(["git", "worktree", "prune"], cwd=repo, capture_output=True)
    # One copy per revision, replaced whole (a run still using the old file keeps it): a
    # copy per process would pile up, one for every benchmark run.
    kept = target / f"ecnlab-run-{commit[:12]}"
    part = kept.with_name(f"{kept.name}.part-{os.getpid()}")
    part.write_bytes(exe.read_bytes())
    part.chmod(0o755)
    os.replace(part, kept)
    _BUILT[kept.resolve()] = build_kind(exe)
    return kept


# --------------------------------------------------------------------------- one measured child


@dataclass
class Child:
    """What the OS says about one finished child process."""

    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    #: Peak resident set of the child's own program image (KiB), see `run_child`.
    peak_rss_kb: int
    #: How `peak_rss_kb` was obtained.
    peak_rss_source: str


def _vm_hwm_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _own_peak_rss_kb() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def run_child(cmd: list[str], timeout: float | None) -> Child:
    """Runs `cmd` alone and measures it with wait4 (rusage of exactly this child).

    Peak memory: Linux keeps, in a child's maximum RSS, the resident size of the process it
    was forked from at the moment it called exec, so wait4's figure is max(this Python
    process's peak, the program's own peak). When it exceeds our own peak it is the program's;
    otherwise the program's high-water mark (VmHWM) polled from /proc while it runs is used.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        parent_peak = _own_peak_rss_kb()
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        except OSError as e:
            raise BenchError(f"cannot run {cmd[0]}: {e}") from e
        timer = None
        timed_out = threading.Event()
        done = threading.Event()
        polled = [0]

        def poll() -> None:
            # VmHWM only grows; the last reading before exit misses at most 20 ms of growth.
            while not done.wait(0.02):
                v = _vm_hwm_kb(proc.pid)
                if v is not None:
                    polled[0] = max(polled[0], v)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        if timeout is not None:

            def kill() -> None:
                timed_out.set()
                try:
                    os.kill(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

            timer = threading.Timer(timeout, kill)
            timer.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        finally:
            done.set()
            if timer is not None:
                timer.cancel()
        wall = time.perf_counter() - t0
        poller.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if timed_out.is_set():
            raise BenchError(f"exceeded the {timeout:.0f} s timeout: {' '.join(cmd)}")
        out.seek(0)
        err.seek(0)
        # Linux reports ru_maxrss in KiB.
        if ru.ru_maxrss > parent_peak:
            peak, source = int(ru.ru_maxrss), "wait4"
        else:
            peak, source = polled[0], "polled VmHWM"
        return Child(
            returncode=proc.returncode,
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
            wall_s=wall,
            cpu_s=ru.ru_utime + ru.ru_stime,
            peak_rss_kb=peak,
            peak_rss_source=source,
        )


# --------------------------------------------------------------------------- one run per simulator


@dataclass
class Measured:
    """One run of one simulator: cost and key results."""

    sim: str
    #: Simulation loop only, as the simulator reports it.
    run_wall_s: float
    run_cpu_s: float | None
    #: The whole process (setup, parsing, output included), from wait4.
    proc_wall_s: float
    proc_cpu_s: float
    peak_rss_kb: int
    peak_rss_source: str
    events: int
    bottleneck_tx_pkts: int
    results: dict[str, Any]
    #: ecnlab: the process's memory on transparent huge pages when the loop ended (KiB).
    huge_pages_kb: int | None = None

    def time_s(self, clock: str) -> float:
        if clock == "cpu" and self.run_cpu_s is not None:
            return self.run_cpu_s
        return self.run_wall_s


def _flow_summary(tputs: list[float], fcts: list[float], n_flows: int) -> dict[str, Any]:
    s: dict[str, Any] = {"flows": n_flows}
    if tputs:
        s["flow_tput_mean_bps"] = statistics.fmean(tputs)
        s["flow_tput_min_bps"] = min(tputs)
        s["flow_tput_max_bps"] = max(tputs)
        sq = sum(x * x for x in tputs)
        s["jain_index"] = (sum(tputs) ** 2) / (len(tputs) * sq) if sq > 0 else None
    s["finished_flows"] = len(fcts)
    s["fct_mean_s"] = statistics.fmean(fcts) if fcts else None
    return s


def ecnlab_results(doc: dict[str, Any]) -> dict[str, Any]:
    """Key results of an ecnlab-run JSON summary, in the same terms as ns-3's."""
    ports = {p["port"]: p for p in doc["ports"]}
    b = ports.get(BOTTLENECK_PORT)
    if b is None:
        raise BenchError(f"ecnlab output has no port {BOTTLENECK_PORT!r}")
    flows = doc["flows"]
    dur = doc["duration_s"]
    others = sum(p["dropped_pkts"] for name, p in ports.items() if name != BOTTLENECK_PORT)
    bottleneck = {
        "bottleneck_drops": b["dropped_pkts"],
        "bottleneck_early_drops": b.get("dropped_early", 0) + b.get("dropped_forced", 0),
        "bottleneck_overflow_drops": b.get("dropped_overflow", 0),
        "bottleneck_marks": b["marked_pkts"],
        "bottleneck_tx_pkts": b["dequeued_pkts"],
        "mean_queue_pkts": b["mean_queue_pkts"],
        "utilisation": b["utilization"],
        "other_queue_drops": others,
    }
    if flows is None:
        # ecnlab-run --flow-totals: no per-flow distribution.
        t = doc["flow_totals"]
        return {
            "goodput_bps": t["bytes_delivered"] * 8 / dur,
            "flows": t["flows"],
            "finished_flows": t["finished_flows"],
            "fct_mean_s": None,
            "retransmissions": t["retransmissions"],
            **bottleneck,
        }
    delivered = sum(f.get("bytes_delivered") or 0 for f in flows)
    tputs = [f["goodput_bps"] for f in flows if f.get("goodput_bps") is not None]
    fcts = [f["fct_s"] for f in flows if f.get("fct_s") is not None]
    others = sum(p["dropped_pkts"] for name, p in ports.items() if name != BOTTLENECK_PORT)
    r = {
        "goodput_bps": delivered * 8 / dur,
        **_flow_summary(tputs, fcts, len(flows)),
        "retransmissions": sum(f.get("retransmissions") or 0 for f in flows),
        "bottleneck_drops": b["dropped_pkts"],
        "bottleneck_early_drops": b.get("dropped_early", 0) + b.get("dropped_forced", 0),
        "bottleneck_overflow_drops": b.get("dropped_overflow", 0),
        "bottleneck_marks": b["marked_pkts"],
        "bottleneck_tx_pkts": b["dequeued_pkts"],
        "mean_queue_pkts": b["mean_queue_pkts"],
        "utilisation": b["utilization"],
        "other_queue_drops": others,
    }
    return r


def ns3_results(doc: dict[str, Any]) -> dict[str, Any]:
    """Key results of the ns-3 program's JSON report (SCENARIOS.md §7)."""
    b = doc["bottleneck"]
    flows = doc["flows"]
    tputs = [f["goodput_bps"] for f in flows if f.get("goodput_bps") is not None]
    fcts = [f["fct_s"] for f in flows if f.get("fct_s") is not None]
    return {
        "goodput_bps": doc["goodput_bps"],
        **_flow_summary(tputs, fcts, len(flows)),
        "retransmissions": sum(f.get("retransmissions") or 0 for f in flows),
        "bottleneck_drops": b["dropped"],
        "bottleneck_early_drops": b.get("red_unforced_drops", 0) + b.get("red_forced_drops", 0),
        "bottleneck_overflow_drops": b.get("queue_limit_drops", 0),
        "bottleneck_marks": b["marked"],
        "bottleneck_tx_pkts": b["link_tx_packets"],
        "mean_queue_pkts": b["mean_queue_pkts"],
        "utilisation": b["utilisation"],
        "other_queue_drops": doc.get("other_queue_drops", 0),
    }


def with_duration(toml_text: str, duration: str) -> str:
    """The scenario with its top-level ``duration`` replaced (for the smoke versions)."""
    new, n = re.subn(r'(?m)^duration\s*=.*$', f'duration = "{duration}"', toml_text, count=1)
    if n != 1:
        raise BenchError("scenario has no top-level duration line to shorten")
    return new


def run_ecnlab(
    exe: Path, scenario_file: Path, timeout: float | None, flow_rows: bool = True, sim: str = "ecnlab"
) -> Measured:
    c = run_child([str(exe), str(scenario_file)] + ([] if flow_rows else ["--flow-totals"]), timeout)
    if c.returncode != 0:
        raise BenchError(f"ecnlab-run {scenario_file.name} failed (exit {c.returncode}): {c.stderr.strip()}")
    try:
        doc = json.loads(c.stdout)
    except json.JSONDecodeError as e:
        raise BenchError(f"ecnlab-run {scenario_file.name} printed no JSON: {e}") from e
    res = ecnlab_results(doc)
    return Measured(
        sim=sim,
        run_wall_s=doc["wall_s"],
        run_cpu_s=doc.get("cpu_s"),
        proc_wall_s=c.wall_s,
        proc_cpu_s=c.cpu_s,
        # The program's own high-water mark is exact; the OS figure is the fallback.
        peak_rss_kb=doc.get("peak_rss_kb") or c.peak_rss_kb,
        peak_rss_source="VmHWM (self)" if doc.get("peak_rss_kb") else c.peak_rss_source,
        events=doc["events"],
        bottleneck_tx_pkts=res["bottleneck_tx_pkts"],
        results=res,
        huge_pages_kb=doc.get("huge_pages_kb"),
    )


def run_ns3(exe: Path, scenario: str, params: dict[str, Any], timeout: float | None) -> Measured:
    with tempfile.TemporaryDirectory(prefix="ecnlab-bench-") as tmp:
        out = Path(tmp) / "ns3.json"
        cmd = [str(exe), f"--scenario={scenario}", f"--out={out}"]
        cmd += [f"--{k}={int(v) if isinstance(v, bool) else v}" for k, v in params.items()]
        c = run_child(cmd, timeout)
        if c.returncode != 0:
            tail = "\n".join((c.stderr or c.stdout).strip().splitlines()[-20:])
            raise BenchError(f"ns-3 {scenario} failed (exit {c.returncode}): {tail}")
        try:
            doc = json.loads(out.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise BenchError(f"ns-3 {scenario} produced no readable result: {e}") from e
    res = ns3_results(doc)
    return Measured(
        sim="ns3",
        run_wall_s=doc["wall_seconds"],
        run_cpu_s=doc.get("cpu_seconds"),
        proc_wall_s=c.wall_s,
        proc_cpu_s=c.cpu_s,
        peak_rss_kb=c.peak_rss_kb,
        peak_rss_source=c.peak_rss_source,
        events=doc["events"],
        bottleneck_tx_pkts=res["bottleneck_tx_pkts"],
        results=res,
    )


# --------------------------------------------------------------------------- summarising


#: Key results compared side by side, with how to print them; the ones marked True are
#: checked against the 10 % agreement band.
KEY_RESULTS: tuple[tuple[str, str, Callable[[Any], str], bool], ...] = (
    ("goodput_bps", "total goodput (Mbit/s)", lambda v: f"{v / 1e6:.2f}", True),
    ("utilisation", "bottleneck utilisation", lambda v: f"{v:.4f}", True),
    ("flow_tput_mean_bps", "per-flow throughput, mean (Mbit/s)", lambda v: f"{v / 1e6:.3f}", True),
    ("flow_tput_min_bps", "per-flow throughput, min (Mbit/s)", lambda v: f"{v / 1e6:.3f}", False),
    ("flow_tput_max_bps", "per-flow throughput, max (Mbit/s)", lambda v: f"{v / 1e6:.3f}", False),
    ("jain_index", "Jain fairness index", lambda v: f"{v:.4f}", False),
    ("finished_flows", "finished flows", lambda v: f"{v}", False),
    ("fct_mean_s", "mean FCT of finished flows (ms)", lambda v: f"{v * 1e3:.2f}", False),
    ("bottleneck_drops", "bottleneck drops", lambda v: f"{v}", True),
    ("bottleneck_early_drops", "  of which early (RED)", lambda v: f"{v}", False),
    ("bottleneck_overflow_drops", "  of which buffer overflow", lambda v: f"{v}", False),
    ("bottleneck_marks", "bottleneck CE marks", lambda v: f"{v}", True),
    ("retransmissions", "retransmitted segments", lambda v: f"{v}", False),
    ("mean_queue_pkts", "mean bottleneck queue (packets)", lambda v: f"{v:.2f}", True),
    ("bottleneck_tx_pkts", "bottleneck packets sent", lambda v: f"{v}", False),
    ("other_queue_drops", "drops at other queues", lambda v: f"{v}", False),
)

AGREEMENT_BAND = 0.10


def rel_diff(ours: Any, ref: Any) -> float | None:
    """(ours − ref) / |ref|; 0 when both are 0; None when undefined."""
    if ours is None or ref is None:
        return None
    if ref == 0:
        return 0.0 if ours == 0 else math.inf
    return (ours - ref) / abs(ref)


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


@dataclass
class ScenarioResult:
    scenario: BenchScenario
    duration: str | None
    runs: dict[str, list[Measured]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: The same runs, round by round (a round runs a short scenario several times).
    rounds: dict[str, list[list[Measured]]] = field(default_factory=dict)

    def median(self, sim: str, what: Callable[[Measured], float]) -> float | None:
        rs = self.runs.get(sim) or []
        return _median([what(r) for r in rs]) if rs else None

    def summary(self, clock: str) -> dict[str, Any]:
        out: dict[str, Any] = {"scenario": self.scenario.name, "title": self.scenario.title}
        for sim, rs in self.runs.items():
            if not rs:
                continue
            t = _median([r.time_s(clock) for r in rs])
            s = {
                "runs": len(rs),
                "run_wall_s": _median([r.run_wall_s for r in rs]),
                "run_cpu_s": _median([r.run_cpu_s for r in rs]) if all(r.run_cpu_s is not None for r in rs) else None,
                "proc_wall_s": _median([r.proc_wall_s for r in rs]),
                "proc_cpu_s": _median([r.proc_cpu_s for r in rs]),
                "peak_rss_kb": _median([r.peak_rss_kb for r in rs]),
                "huge_pages_kb": _median([r.huge_pages_kb for r in rs]) if all(r.huge_pages_kb is not None for r in rs) else None,
                "events": rs[0].events,
                "events_per_s": rs[0].events / t if t > 0 else None,
                "bottleneck_pkts_per_s": rs[0].bottleneck_tx_pkts / t if t > 0 else None,
                # Same scenario and seed: every repetition must give the same results.
                "repeatable": all(r.results == rs[0].results for r in rs),
                "results": rs[0].results,
            }
            out[sim] = s
        e, n = out.get("ecnlab"), out.get("ns3")
        if e and n:
            te = e["run_cpu_s"] if clock == "cpu" and e["run_cpu_s"] is not None else e["run_wall_s"]
            tn = n["run_cpu_s"] if clock == "cpu" and n["run_cpu_s"] is not None else n["run_wall_s"]
            out["speedup"] = tn / te if te > 0 else None
            # Per packet the bottleneck sent: fair where the two simulations carried different
            # amounts of traffic (red100 with ECN, where ns-3's flows back off further).
            pe, pn = e["results"]["bottleneck_tx_pkts"], n["results"]["bottleneck_tx_pkts"]
            out["speedup_per_packet"] = (tn / pn) / (te / pe) if te > 0 and pe and pn else None
            out["speedup_wall"] = n["run_wall_s"] / e["run_wall_s"] if e["run_wall_s"] > 0 else None
            out["memory_ratio"] = n["peak_rss_kb"] / e["peak_rss_kb"] if e["peak_rss_kb"] > 0 else None
            g = self.scenario.speed_goal
            out["speed_goal"] = g
            out["speed_goal_met"] = None if g is None or out["speedup"] is None else out["speedup"] >= g
            out["memory_goal"] = MEMORY_GOAL
            out["memory_goal_met"] = None if out["memory_ratio"] is None else out["memory_ratio"] >= MEMORY_GOAL
            cmp = {}
            for key, _, _, checked in KEY_RESULTS:
                a, b = e["results"].get(key), n["results"].get(key)
                d = rel_diff(a, b)
                cmp[key] = {
                    "ecnlab": a,
                    "ns3": b,
                    "rel_diff": d,
                    "outside_band": bool(checked and d is not None and abs(d) > AGREEMENT_BAND),
                }
            out["comparison"] = cmp
        b = out.get("before")
        if e and b:
            # One clock for both: CPU time unless a build does not report it (older ones).
            clk = "cpu" if clock == "cpu" and e["run_cpu_s"] is not None and b["run_cpu_s"] is not None else "wall"
            tb, ta = b[f"run_{clk}_s"], e[f"run_{clk}_s"]
            # Round by round (the two builds ran one after the other in each): the spread
            # says how far the machine's noise reaches.
            pairwise = sorted(
                _median([x.time_s(clk) for x in ra]) / _median([y.time_s(clk) for y in rb])
                for ra, rb in zip(self.rounds.get("ecnlab", []), self.rounds.get("before", []))
                if ra and rb
            )
            out["before_after"] = {
                "clock": clk,
                "before_s": tb,
                "after_s": ta,
                # Below 1: the build under test is faster.
                "after_over_before": ta / tb if tb > 0 else None,
                "pairwise": pairwise,
                "events_before": b["events"],
                "events_after": e["events"],
                "peak_rss_kb_before": b["peak_rss_kb"],
                "peak_rss_kb_after": e["peak_rss_kb"],
                # The key results (goodput, drops, marks, queue, flows) of both builds, each
                # the same in every repetition.
                "repeatable": bool(b["repeatable"] and e["repeatable"]),
                "same_results": bool(b["results"] == e["results"] and b["repeatable"] and e["repeatable"]),
                "differing_results": sorted(
                    k for k in set(b["results"]) | set(e["results"]) if b["results"].get(k) != e["results"].get(k)
                ),
            }
        out["notes"] = list(self.notes)
        return out


# --------------------------------------------------------------------------- report


def _fmt(v: float | None, spec: str) -> str:
    return "–" if v is None else format(v, spec)


def _mark(met: bool | None) -> str:
    return "–" if met is None else ("met" if met else "**not met**")


def _pct(d: float | None) -> str:
    if d is None:
        return "–"
    if math.isinf(d):
        return "n/a (ns-3: 0)"
    return f"{d * 100:+.1f} %"


def render_markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    clock = doc["clock"]
    lines = [
        f"# ecnlab vs ns-3 — {doc['date']} on {m['host']}",
        "",
        f"{m['cpu']}, {m['cores']} cores; load average {m['loadavg_start']} at start, "
        f"{m['loadavg_end']} at end. ecnlab {doc['ecnlab']['commit']} ({doc['ecnlab'].get('build', 'release')}); "
        + (f"ns-3 {doc['ns3']['version']}." if doc["ns3"].get("version") else f"ns-3: {doc['ns3']['status']}."),
        "",
        f"Times are medians of the simulation loop only (setup excluded on both sides) over "
        f"{doc['repeat']} alternating rounds (ecnlab runs shorter than {MIN_ROUND_CPU_S} s are "
        f"repeated within a round, up to {MAX_BATCH} times; 'runs' in the JSON); ratios use "
        f"**{clock} time** "
        f"({'CPU time of the process during the loop' if clock == 'cpu' else 'wall time'}). "
        "Peak RSS is the program's own high-water mark (VmHWM; wait4 where that is larger than "
        "the launching Python's, which Linux folds into a child's maximum).",
        "",
    ]
    if doc.get("smoke"):
        lines += ["**Smoke run**: shortened durations, ecnlab only; not a benchmark.", ""]
    lines += [
        "| scenario | ecnlab s (cpu / wall) | ns-3 s (cpu / wall) | speed-up | per bottleneck packet | goal | ecnlab RSS MB | ns-3 RSS MB | memory ratio (goal ≥ 5) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in doc["scenarios"]:
        e, n = s.get("ecnlab"), s.get("ns3")
        es = f"{_fmt(e and e['run_cpu_s'], '.3f')} / {_fmt(e and e['run_wall_s'], '.3f')}" if e else "–"
        ns = f"{_fmt(n['run_cpu_s'], '.2f')} / {_fmt(n['run_wall_s'], '.2f')}" if n else "–"
        sp = f"{s['speedup']:.0f}×" if s.get("speedup") else "–"
        spp = f"{s['speedup_per_packet']:.0f}×" if s.get("speedup_per_packet") else "–"
        goal = "–"
        if s.get("scenario_goal"):
            goal = f"≥ {s['scenario_goal']:.0f}×" + (f": {_mark(s.get('speed_goal_met'))}" if n else "")
        mr = f"{s['memory_ratio']:.1f}×: {_mark(s.get('memory_goal_met'))}" if s.get("memory_ratio") else "–"
        lines.append(
            f"| {s['scenario']} | {es} | {ns} | {sp} | {spp} | {goal} | "
            f"{_fmt(e and e['peak_rss_kb'] / 1024, '.1f')} | {_fmt(n and n['peak_rss_kb'] / 1024, '.1f')} | {mr} |"
        )
    lines += [
        "",
        "| scenario | ecnlab events | ecnlab Mevents/s | ns-3 events | ns-3 Mevents/s | ecnlab bottleneck kpkt/s | ns-3 bottleneck kpkt/s | repeatable (ecnlab / ns-3) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in doc["scenarios"]:
        e, n = s.get("ecnlab"), s.get("ns3")
        lines.append(
            f"| {s['scenario']} | {e['events'] if e else '–'} | {_fmt(e and e['events_per_s'] / 1e6, '.2f')} | "
            f"{n['events'] if n else '–'} | {_fmt(n and n['events_per_s'] / 1e6, '.3f')} | "
            f"{_fmt(e and e['bottleneck_pkts_per_s'] / 1e3, '.0f')} | {_fmt(n and n['bottleneck_pkts_per_s'] / 1e3, '.1f')} | "
            f"{'yes' if e and e['repeatable'] else ('no' if e else '–')} / {'yes' if n and n['repeatable'] else ('no' if n else '–')} |"
        )
    if any(s.get("before_after") for s in doc["scenarios"]):
        bf = doc["before"]
        lines += [
            "",
            f"## Before and after: {bf['label']} ({bf['build']}) → {doc['ecnlab']['commit']} "
            f"({doc['ecnlab'].get('build', 'release')})",
            "",
            f"The two builds ran one after the other in every round (the order swapped each round), "
            f"on the same machine as everything above; {clock} time of the loop unless a row says "
            "otherwise. 'Round by round' is the range of after/before over the rounds (each the "
            "medians of that round's runs). 'Same results': every key result of the report "
            "(goodput, per-flow throughput, drops, marks, queue, finished flows) equal, and the same "
            "in every repetition of each build.",
            "",
            "| scenario | before s | after s | after / before | round by round | events before → after | peak RSS MB before → after | same results |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for s in doc["scenarios"]:
            ba = s.get("before_after")
            if not ba:
                continue
            pw = ba["pairwise"]
            if ba["same_results"]:
                same = "yes"
            elif ba["differing_results"]:
                same = "no: " + ", ".join(ba["differing_results"])
            else:
                same = "no: a build's repetitions differ"
            wall = " (wall time)" if ba["clock"] != clock else ""
            lines.append(
                f"| {s['scenario']}{wall} | {ba['before_s']:.3f} | {ba['after_s']:.3f} | "
                f"{_fmt(ba['after_over_before'], '.3f')} | "
                + (f"{pw[0]:.3f}–{pw[-1]:.3f}" if pw else "–")
                + f" | {ba['events_before']} → {ba['events_after']} | "
                f"{ba['peak_rss_kb_before'] / 1024:.1f} → {ba['peak_rss_kb_after'] / 1024:.1f} | {same} |"
            )
    if doc.get("bytes_per_flow"):
        bpf = doc["bytes_per_flow"]
        lines += [
            "",
            f"Memory per TCP flow (ecnlab): {bpf['bytes_per_flow']:.0f} bytes "
            f"(peak RSS of {bpf['large']} minus {bpf['small']}, over {bpf['extra_flows']} more flows; "
            "both endpoints, their timers and their share of packets in flight).",
        ]
    huge = [(s["scenario"], s["ecnlab"]["huge_pages_kb"]) for s in doc["scenarios"] if (s.get("ecnlab") or {}).get("huge_pages_kb") is not None]
    if huge:
        lines += [
            "",
            "ecnlab's memory on transparent huge pages when the loop ended (its allocator asks for them, "
            "see `sysmem::HugePageHeap`; 0 where the system gives none): "
            + ", ".join(f"{name} {kb / 1024:.0f} MB" for name, kb in huge) + ".",
        ]
    if doc.get("million_flows"):
        m = doc["million_flows"]
        lines += [
            "",
            f"{m['flows']:,} flows ({m['scenario']}): peak RSS {m['peak_rss_kb'] / 2**20:.2f} GB, "
            f"{m['bytes_per_flow_all_in']:.0f} bytes per flow with everything the process held; "
            f"loop {_fmt(m['loop_cpu_s'], '.1f')} s CPU, {m['events']} events.",
        ]
    for s in doc["scenarios"]:
        if "comparison" not in s:
            continue
        lines += [
            "",
            f"## {s['scenario']}: {s['title']}",
            "",
            "| result | ecnlab | ns-3 | difference |",
            "| --- | --- | --- | --- |",
        ]
        for key, label, fmt, checked in KEY_RESULTS:
            c = s["comparison"][key]
            a = "–" if c["ecnlab"] is None else fmt(c["ecnlab"])
            b = "–" if c["ns3"] is None else fmt(c["ns3"])
            flag = " ⚠" if c["outside_band"] else ""
            lines.append(f"| {label} | {a} | {b} | {_pct(c['rel_diff'])}{flag} |")
        for note in s.get("notes", []):
            lines.append(f"\n{note}")
    compared = any(c["ns3"] is not None for s in doc["scenarios"] for c in (s.get("comparison") or {}).values())
    if compared:
        lines += [
            "",
            f"⚠: a key result that differs by more than {AGREEMENT_BAND * 100:.0f} %. Mean queue: "
            "ecnlab's is the time average of the backlog, ns-3's the mean of 1 ms samples.",
        ]
    lines.append("")
    for note in doc.get("notes", []):
        lines.append(f"- {note}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- driver


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit(repo: Path) -> str:
    try:
        p = subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=repo, capture_output=True, text=True
        )
        return p.stdout.strip() or "?"
    except OSError:
        return "?"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The benchmark's options (for ``ecnlab bench`` and the stand-alone script)."""
    names = ", ".join(s.name for s in SCENARIOS)
    p.add_argument("--repeat", type=int, default=3, help="runs per simulator and scenario (default 3)")
    p.add_argument(
        "--ns3-repeat",
        type=int,
        default=None,
        help="runs of ns-3 per scenario (default: --repeat, but 1 for dt1g-1000, which takes minutes)",
    )
    p.add_argument("--only", action="append", metavar="NAME", help=f"run only this scenario (repeatable): {names}; dt1g-1m (a million flows, minutes and gigabytes) runs only when named")
    p.add_argument("--smoke", action="store_true", help="tiny versions (short durations, ecnlab only), seconds in all")
    p.add_argument("--vs-ns3", action="store_true", help="require ns-3 (fail if the ns3 wheel is missing)")
    p.add_argument("--no-ns3", action="store_true", help="benchmark ecnlab alone")
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="time the ratios use (default cpu)")
    p.add_argument("--results-dir", type=Path, default=None, help="where to write results (default bench/results)")
    p.add_argument("--no-write", action="store_true", help="print the table only")
    p.add_argument("--ecnlab-bin", type=Path, default=None, help="use this ecnlab-run instead of building it")
    p.add_argument(
        "--before",
        metavar="REV|BIN",
        default=None,
        help="also time an earlier build, alternately with this one: an ecnlab-run binary (an executable "
        "file of that name wins) or a git revision of the checkout (built from a temporary worktree into "
        "target/bench-before); the report gets a before/after table",
    )
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds before a run is killed (default 3600)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def run_from_args(args: argparse.Namespace) -> int:
    log: Callable[[str], None] = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    if args.repeat < 1 or (args.ns3_repeat is not None and args.ns3_repeat < 0):
        print("error: --repeat must be at least 1 and --ns3-repeat non-negative", file=sys.stderr)
        return 2
    known = {s.name: s for s in SCENARIOS}
    chosen = [s for s in SCENARIOS if s.by_default]
    if args.only:
        bad = [n for n in args.only if n not in known]
        if bad:
            print(f"error: unknown scenario {', '.join(bad)}; expected one of {', '.join(known)}", file=sys.stderr)
            return 2
        chosen = [known[n] for n in args.only]
    if args.smoke and args.vs_ns3:
        print("error: --smoke runs ecnlab only; drop --vs-ns3", file=sys.stderr)
        return 2
    if args.ecnlab_bin is not None and not (args.ecnlab_bin.is_file() and os.access(args.ecnlab_bin, os.X_OK)):
        print(f"error: --ecnlab-bin: {args.ecnlab_bin} is not an executable file", file=sys.stderr)
        return 2
    before_label, before_exe, before_name = None, None, None
    if args.before is not None:
        try:
            before_label, before_exe = resolve_before(repo_root(), args.before)
        except (ValueError, BenchError) as e:
            print(f"error: --before: {e}", file=sys.stderr)
            return 2
        # Named by what was resolved now, not by what the name means when the run ends.
        if before_exe is not None:
            before_name = str(before_exe)
        elif before_label.startswith(args.before):
            before_name = before_label[:7]
        else:
            before_name = f"{args.before} ({before_label[:7]})"
    try:
        repo = repo_root()
        ns3 = _load_ns3_module()
        use_ns3 = not args.smoke and not args.no_ns3
        ns3_status = "not used (--smoke)" if args.smoke else "not used (--no-ns3)"
        ns3_exe = None
        if use_ns3:
            if ns3.available():
                log("building the ns-3 reference program")
                ns3_exe = ns3.build()
                ns3_status = "ok"
            elif args.vs_ns3:
                print(
                    "error: --vs-ns3 needs the ns3 wheel and a C++ compiler "
                    "(pip install -r bench/ns3/requirements.txt)",
                    file=sys.stderr,
                )
                return 2
            else:
                ns3_status = "not installed: ecnlab benchmarked alone (pip install -r bench/ns3/requirements.txt)"
                log("ns-3 is not installed: benchmarking ecnlab alone")
        exe = args.ecnlab_bin if args.ecnlab_bin else build_ecnlab(repo, log)
        if before_label is not None and before_exe is None:
            before_exe = build_before(repo, before_label, log)
        started = _dt.datetime.now()
        load0 = _loadavg()
        results: list[ScenarioResult] = []
        with tempfile.TemporaryDirectory(prefix="ecnlab-bench-") as tmp:
            if before_exe is not None:
                # The earlier build must read today's scenario files: found out in seconds, on
                # their short forms, before anything is timed.
                for sc in chosen:
                    short = Path(tmp) / f"preflight-{sc.toml}"
                    short.write_text(with_duration((repo / "bench" / "scenarios" / sc.toml).read_text(), sc.smoke_duration))
                    try:
                        run_ecnlab(before_exe, short, args.timeout, sc.flow_rows, sim="before")
                    except BenchError as e:
                        raise BenchError(f"the --before build cannot run {sc.name}: {e}") from e
            for sc in chosen:
                path = repo / "bench" / "scenarios" / sc.toml
                if args.smoke:
                    short = Path(tmp) / sc.toml
                    short.write_text(with_duration(path.read_text(), sc.smoke_duration))
                    path = short
                sr = ScenarioResult(sc, sc.smoke_duration if args.smoke else None, {"ecnlab": []})
                if before_exe is not None:
                    sr.runs["before"] = []
                if sc.note and not args.smoke:
                    sr.notes.append(sc.note)
                n_ns3 = 0
                if ns3_exe is not None and sc.ns3 is not None:
                    n_ns3 = args.ns3_repeat if args.ns3_repeat is not None else args.repeat
                    if args.ns3_repeat is None and sc.ns3_max_repeat is not None:
                        n_ns3 = min(n_ns3, sc.ns3_max_repeat)
                    if n_ns3:
                        sr.runs["ns3"] = []
                # Alternate the simulators, swapping who goes first each round so slow drifts
                # of the machine's speed fall on both alike.
                # A round runs ecnlab `batch` times: a run of a few tens of milliseconds is
                # at the mercy of whatever else the machine does in that instant, so short
                # runs are repeated until a round takes about MIN_ROUND_CPU_S.
                batch = 1
                # The earlier build (--before) runs beside this one, the two swapping order
                # each round too.
                for i in range(max(args.repeat, n_ns3)):
                    order = ["ecnlab", "before", "ns3"] if i % 2 == 0 else ["ns3", "before", "ecnlab"]
                    for sim in order:
                        n_ecnlab = min(args.repeat, sc.ecnlab_max_repeat or args.repeat)
                        if sim == "before" and before_exe is not None and i < n_ecnlab:
                            ms = [
                                run_ecnlab(before_exe, path, args.timeout, sc.flow_rows, sim="before")
                                for _ in range(batch)
                            ]
                        elif sim == "ecnlab" and i < n_ecnlab:
                            ms = []
                            while len(ms) < batch:
                                ms.append(run_ecnlab(exe, path, args.timeout, sc.flow_rows))
                                if i == 0 and len(ms) == 1 and not args.smoke:
                                    t = ms[0].time_s(args.clock)
                                    batch = max(1, min(MAX_BATCH, math.ceil(MIN_ROUND_CPU_S / max(t, 1e-3))))
                        elif sim == "ns3" and i < n_ns3:
                            assert ns3_exe is not None and sc.ns3 is not None
                            ms = [run_ns3(ns3_exe, sc.ns3[0], sc.ns3[1], args.timeout)]
                        else:
                            continue
                        sr.runs[sim].extend(ms)
                        sr.rounds.setdefault(sim, []).append(ms)
                        m = ms[len(ms) // 2]
                        log(
                            f"{sc.name:12s} {sim:6s} round {i + 1}: loop {m.run_wall_s:8.3f} s wall, "
                            f"{_fmt(m.run_cpu_s, '8.3f')} s cpu, {m.peak_rss_kb / 1024:7.1f} MB, "
                            f"{m.events} events" + (f" ({len(ms)} runs)" if len(ms) > 1 else "")
                        )
                results.append(sr)
        doc = make_document(args, repo, exe, ns3, ns3_status, started, load0, results, before_exe, before_name)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    md = render_markdown(doc)
    print(md)
    if not args.no_write:
        out_dir = args.results_dir or (repo / "bench" / "results")
        out_dir.mkdir(parents=True, exist_ok=True)
        stem = f"{doc['date']}-{doc['machine']['host']}" + ("-smoke" if args.smoke else "")
        record = record_path(out_dir, stem, keep_earlier=not args.smoke)
        record.write_text(json.dumps(doc, indent=1) + "\n")
        (out_dir / ("latest-smoke.md" if args.smoke else "latest.md")).write_text(md)
        log(f"wrote {record} and the markdown table beside it")
    return 0


def make_document(
    args, repo, exe, ns3, ns3_status, started, load0, results, before_exe=None, before_name=None
) -> dict[str, Any]:
    summaries = []
    for r in results:
        s = r.summary(args.clock)
        s["scenario_goal"] = r.scenario.speed_goal
        s["raw"] = {sim: [m.__dict__ for m in rs] for sim, rs in r.runs.items()}
        summaries.append(s)
    notes = []
    if any(s.get("ns3") is None and r.scenario.ns3 for s, r in zip(summaries, results)):
        notes.append(f"ns-3: {ns3_status}")
    rss = {s["scenario"]: s["ecnlab"]["peak_rss_kb"] for s in summaries if s.get("ecnlab")}
    bpf = None
    if "dt1g-1000" in rss and "dt1g-10000" in rss:
        # Same topology (1000 host pairs), 9000 more flows.
        bpf = {
            "small": "dt1g-1000",
            "large": "dt1g-10000",
            "extra_flows": 9000,
            "bytes_per_flow": (rss["dt1g-10000"] - rss["dt1g-1000"]) * 1024 / 9000,
        }
    million = None
    for sm in summaries:
        if sm["scenario"] == "dt1g-1m" and sm.get("ecnlab"):
            e = sm["ecnlab"]
            flows = e["results"]["flows"]
            million = {
                "scenario": "dt1g-1m",
                "flows": flows,
                "peak_rss_kb": e["peak_rss_kb"],
                # Everything the process held (topology, packets, event list) over all flows.
                "bytes_per_flow_all_in": e["peak_rss_kb"] * 1024 / flows,
                "loop_cpu_s": e.get("run_cpu_s"),
                "events": e["events"],
            }
    ns3_version = None
    if ns3_status == "ok":
        inst = ns3.locate()
        ns3_version = inst.version if inst else None
    return {
        "date": started.strftime("%Y-%m-%d"),
        "started": started.isoformat(timespec="seconds"),
        "smoke": bool(args.smoke),
        "repeat": args.repeat,
        "clock": args.clock,
        "machine": {
            "host": platform.node() or "unknown",
            "cpu": _cpu_model(),
            "cores": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_start": load0,
            "loadavg_end": _loadavg(),
        },
        "ecnlab": {"commit": _git_commit(repo), "binary": str(exe), "build": build_kind(exe)},
        "before": None
        if args.before is None
        else {"label": before_name, "binary": str(before_exe), "build": build_kind(before_exe)},
        "ns3": {"status": ns3_status, "version": ns3_version},
        "bytes_per_flow": bpf,
        "million_flows": million,
        "notes": notes,
        "scenarios": summaries,
    }


def record_path(out_dir: Path, stem: str, keep_earlier: bool) -> Path:
    """Where a benchmark's JSON record goes: ``STEM.json``, or with ``keep_earlier`` the first
    of ``STEM-2.json``, ``STEM-3.json``, ... not yet written, so that a second record of the
    same day on the same host is kept beside the first (a smoke run replaces its own)."""
    record = out_dir / f"{stem}.json"
    n = 2
    while keep_earlier and record.exists():
        record = out_dir / f"{stem}-{n}.json"
        n += 1
    return record


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="ecnlab bench",
        description="Speed and memory benchmark of ecnlab beside ns-3 on the reference dumbbells.",
    )
    add_arguments(p)
    return run_from_args(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
