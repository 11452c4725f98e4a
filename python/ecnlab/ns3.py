"""Run ecnlab's reference scenarios on ns-3.

The ns-3 side of ecnlab's validation and speed benchmarks is a C++ program,
``bench/ns3/dumbbell.cc``, compiled against the ``ns3`` wheel from PyPI (which ships
ns-3's headers and shared libraries).  This module finds the wheel, compiles the
program when needed and runs it, returning its JSON report as a dict::

    from ecnlab import ns3
    if ns3.available():
        r = ns3.run("red100", ecn=1)
        r["bottleneck"]["marked"], r["wall_seconds"], r["events"]

Only the standard library is used, and ns-3's Python bindings are never imported
(they take many seconds to load).  Scenario definitions: ``bench/ns3/SCENARIOS.md``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "SCENARIOS",
    "PARAMS",
    "Ns3Error",
    "Ns3Install",
    "available",
    "locate",
    "source_dir",
    "binary",
    "build",
    "run",
]

#: Scenario names the program accepts.
SCENARIOS = ("red100", "dt1g", "dt1g-1000", "dctcp10g")

#: Parameters ``run`` passes on as ``--name=value`` (see SCENARIOS.md for meanings).
PARAMS = {
    "ecn": "0/1: RED marks instead of dropping and TCP negotiates ECN (red100 only)",
    "flows": "number of flows and of hosts per side (dt1g, dctcp10g)",
    "duration": "simulated seconds",
    "seed": "ns-3 RngSeedManager seed",
    "run": "ns-3 RngSeedManager run number",
    "sample_ms": "bottleneck queue sampling interval in ms (default 1)",
    "warmup": "seconds left out of the *_after_warmup figures (default 1)",
    "light": "no per-packet sink traces; FCT only for flows up to 1 MB",
    "queue_series": "include the sampled bottleneck queue length series",
    "pcap": "file name prefix for pcap captures of the bottleneck link (both ends)",
    "tcp_log": "path of a CSV file to receive per-flow cwnd/ssthresh/state/RTO changes",
    "access_rate": "access link rate, ns-3 syntax (e.g. '1Gbps')",
    "access_delay": "access link delay, ns-3 syntax (e.g. '1ms')",
    "bottleneck_rate": "bottleneck rate, ns-3 syntax",
    "bottleneck_delay": "bottleneck delay, ns-3 syntax",
    "queue_packets": "bottleneck queue limit in packets",
    "min_th": "RED minimum threshold in packets",
    "max_th": "RED maximum threshold in packets",
    "send_size": "bytes the sending application writes per call (default: 64 KiB below 100 flows, else 1 MiB)",
    "routing": "'global' (canonical) or 'nix' (ns-3 nix-vector routing)",
}

_PROGRAM = "dumbbell"


class Ns3Error(RuntimeError):
    """The ns-3 wheel is missing, the program failed to build, or a run failed."""


@dataclass(frozen=True)
class Ns3Install:
    """Where the ``ns3`` wheel keeps what a C++ program needs."""

    version: str
    prefix: Path
    include_dir: Path
    lib_dir: Path


def _wheel_prefixes() -> list[Path]:
    spec = importlib.util.find_spec("ns3")
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [Path(p) for p in spec.submodule_search_locations]
    if spec.origin:
        return [Path(spec.origin).parent]
    return []


def locate() -> Ns3Install | None:
    """Find the installed ``ns3`` wheel's headers and libraries, or None.

    Uses the import system's finder and the package metadata only; nothing is imported.
    """
    try:
        version = importlib.metadata.version("ns3")
    except importlib.metadata.PackageNotFoundError:
        return None
    for prefix in _wheel_prefixes():
        include_dir = prefix / "include"
        if not (include_dir / "ns3" / "simulator.h").is_file():
            continue
        for lib_dir in (prefix / "lib64", prefix / "lib"):
            if any(lib_dir.glob("libns3.*-core.so")):
                return Ns3Install(version, prefix.resolve(), include_dir.resolve(), lib_dir.resolve())
    return None


def available() -> bool:
    """True when the ns3 wheel is installed with its headers and libraries and a C++
    compiler is on PATH (so :func:`build` can work)."""
    return locate() is not None and shutil.which(os.environ.get("CXX", "g++")) is not None


def source_dir() -> Path:
    """The folder with dumbbell.cc and build.sh.

    ``ECNLAB_NS3_DIR`` overrides it; otherwise it is ``bench/ns3`` of the source tree
    this module lives in.
    """
    env = os.environ.get("ECNLAB_NS3_DIR")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve()
    candidates += [p / "bench" / "ns3" for p in here.parents]
    for c in candidates:
        if (c / f"{_PROGRAM}.cc").is_file() and (c / "build.sh").is_file():
            return c
    raise Ns3Error(
        "cannot find bench/ns3/dumbbell.cc; run from an ecnlab source checkout "
        "or set ECNLAB_NS3_DIR to that folder"
    )


def binary() -> Path:
    """Path of the compiled program (it may not exist yet)."""
    return source_dir() / "build" / _PROGRAM


def _up_to_date(src: Path, inst: Ns3Install) -> bool:
    exe = src / "build" / _PROGRAM
    stamp = src / "build" / f"{_PROGRAM}.stamp"
    if not (exe.is_file() and stamp.is_file()):
        return False
    newest_input = max((src / f"{_PROGRAM}.cc").stat().st_mtime, (src / "build.sh").stat().st_mtime)
    if exe.stat().st_mtime <= newest_input:
        return False
    want = f"{inst.version}|{inst.include_dir}|{os.environ.get('CXX', 'g++')}"
    return stamp.read_text().strip() == want


def build(force: bool = False) -> Path:
    """Compile the ns-3 program if it is missing or older than its source; return its path."""
    inst = locate()
    if inst is None:
        raise Ns3Error(
            "the ns3 wheel is not installed (pip install -r bench/ns3/requirements.txt)"
        )
    src = source_dir()
    if not force and _up_to_date(src, inst):
        return src / "build" / _PROGRAM
    env = dict(os.environ, PYTHON=sys.executable)
    cmd = ["bash", str(src / "build.sh")] + (["--force"] if force else [])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise Ns3Error(
            f"building {src / (_PROGRAM + '.cc')} failed (exit {proc.returncode}):\n"
            + _tail(proc.stderr or proc.stdout)
        )
    exe = src / "build" / _PROGRAM
    if not exe.is_file():
        raise Ns3Error(f"build.sh succeeded but {exe} is missing")
    return exe


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _arg(name: str, value: Any) -> str:
    if isinstance(value, bool):
        value = int(value)
    return f"--{name}={value}"


def run(scenario: str, *, timeout: float | None = None, extra_args: tuple[str, ...] | list[str] = (), **params: Any) -> dict:
    """Run one scenario on ns-3 and return the program's JSON report as a dict.

    ``params`` are the names in :data:`PARAMS` (e.g. ``ecn=1``, ``flows=100``,
    ``duration=2.0``).  ``extra_args`` go to the program unchanged, e.g.
    ``["--ns3::TcpSocketBase::Sack=false"]`` to change any ns-3 attribute default.
    Raises :class:`Ns3Error` with the program's own message when a run fails,
    and :class:`ValueError` for an unknown scenario or parameter.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; expected one of {', '.join(SCENARIOS)}")
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(unknown)}; allowed: {', '.join(sorted(PARAMS))}"
        )
    exe = build()
    with tempfile.TemporaryDirectory(prefix="ecnlab-ns3-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [str(exe), f"--scenario={scenario}", f"--out={out}"]
        cmd += [_arg(k, v) for k, v in params.items() if v is not None]
        cmd += list(extra_args)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise Ns3Error(f"ns-3 run of {scenario} exceeded {timeout} s: {' '.join(cmd)}") from e
        if proc.returncode != 0:
            raise Ns3Error(
                f"ns-3 run of {scenario} failed (exit {proc.returncode}): {' '.join(cmd)}\n"
                + _tail(proc.stderr or proc.stdout)
            )
        try:
            return json.loads(out.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise Ns3Error(f"ns-3 run of {scenario} produced no readable result: {e}") from e


def _main(argv: list[str]) -> int:
    """``python -m ecnlab.ns3 SCENARIO [name=value ...]``: print the JSON report."""
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m ecnlab.ns3 {" + ",".join(SCENARIOS) + "} [name=value ...]")
        for k, v in PARAMS.items():
            print(f"  {k:17s} {v}")
        return 0 if argv else 2
    params: dict[str, Any] = {}
    for a in argv[1:]:
        name, sep, value = a.partition("=")
        if not sep:
            print(f"error: expected name=value, got {a!r}", file=sys.stderr)
            return 2
        params[name.lstrip("-")] = value
    try:
        result = run(argv[0], **params)
    except (Ns3Error, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
