#!/usr/bin/env python3
"""Profile-guided optimisation of the simulator's release build (standard library only).

The simulator is a loop of small, branchy steps (a packet at a port, an ACK at a sender); the
compiler lays them out better when it knows which branches run: built with a profile of a
training run, every benchmark and paper run takes 7-15 % less CPU, and computes exactly the
same thing (the profile moves code, not arithmetic; `bench/identity.py` compares every output
of two builds).

    python3 tools/pgo.py profile     # prints the profile's path (trains one if needed)
    python3 tools/pgo.py rustflags   # prints RUSTFLAGS for a build that uses it

`profile` builds an instrumented `ecnlab-run` (into target/pgo-gen), runs it on the
training scenarios below, and merges what they counted into target/pgo/<key>.profdata, the
key a hash of the compiler's version, the simulator's sources, Cargo.lock and the training
scenarios, so a profile is made again only when one of them changed. It needs
`llvm-profdata` of the compiler's own LLVM (the rustup component `llvm-tools`, added here
when rustup is there). Without it, or with ECNLAB_PGO=0, both commands print nothing and
exit 0, and the caller builds without a profile: the same simulator, slower.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
if not TARGET.is_absolute():
    TARGET = REPO / TARGET

# What the profile is trained on: every queue discipline, marker and congestion controller
# the papers run, on the dumbbells the benchmark times. What is left out runs correctly, only
# without the layout a profile gives it.
TRAINING = [
    "bench/scenarios/red100-ecn0.toml",
    "bench/scenarios/red100-ecn1.toml",
    "bench/scenarios/dt1g.toml",
    "scenarios/dumbbell_ecn.toml",
    "scenarios/parking_lot.toml",
    "scenarios/web_workload.toml",
    "scenarios/tcp/mixed_rtt_cubic.toml",
    "scenarios/tcp/bbr_deep_buffer.toml",
    "scenarios/tcp/parking_lot_red_ecn.toml",
    "scenarios/emulate_eecn.toml",
    "scenarios/emulate_mecn.toml",
    "scenarios/emulate_uno.toml",
    "scenarios/mecn/s3-ten-same-rtt-mecn.toml",
    "scenarios/campus_apcc.toml",
    "tools/pgo/hfcc_dumbbell.toml",
    "tools/pgo/hfcc_chain.toml",
    "tools/pgo/mlcp_dumbbell.toml",
]


def log(msg: str) -> None:
    print(f"pgo: {msg}", file=sys.stderr, flush=True)


def _rustc_vv() -> str:
    return subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout


def llvm_profdata() -> Path | None:
    """The compiler's own llvm-profdata (another LLVM's cannot read its profiles)."""
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout.strip()
    host = next(line.split()[1] for line in _rustc_vv().splitlines() if line.startswith("host:"))
    tool = Path(sysroot) / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    if not tool.is_file() and shutil.which("rustup"):
        log("adding the rustup component llvm-tools (for llvm-profdata)")
        try:
            subprocess.run(["rustup", "component", "add", "llvm-tools"], capture_output=True, timeout=300)
        except subprocess.TimeoutExpired:
            log("rustup could not add llvm-tools within 5 minutes")
    return tool if tool.is_file() else None


def key() -> str:
    """Changes with anything that changes what the training counts."""
    h = hashlib.sha256(_rustc_vv().encode())
    files = sorted(
        p
        for root in ("crates/ecnlab/src", "crates/ecnlab/Cargo.toml", "Cargo.lock", "Cargo.toml")
        for p in ([REPO / root] if (REPO / root).is_file() else (REPO / root).rglob("*"))
        if p.is_file() and p.suffix in (".rs", ".toml", ".lock")
    ) + [REPO / t for t in TRAINING]
    for p in files:
        h.update(str(p.relative_to(REPO)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def profile() -> Path | None:
    if os.environ.get("ECNLAB_PGO", "1") == "0":
        return None
    tool = llvm_profdata()
    if tool is None:
        log("llvm-profdata not found (rustup component add llvm-tools): building without a profile")
        return None
    out = TARGET / "pgo" / f"{key()}.profdata"
    if out.is_file():
        return out
    raw = TARGET / "pgo" / "raw"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET / "pgo-gen"))
    env["RUSTFLAGS"] = (env.get("RUSTFLAGS", "") + f" -Cprofile-generate={raw}").strip()
    log(f"building an instrumented ecnlab-run ({TARGET / 'pgo-gen'})")
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "--quiet", "--bin", "ecnlab-run"], cwd=REPO, env=env, check=True
    )
    exe = TARGET / "pgo-gen" / "release" / "ecnlab-run"
    log(f"training on {len(TRAINING)} scenarios")
    for t in TRAINING:
        # From the scenario's folder, where its relative paths (traces) point.
        # The instrumented build's warnings (value-profile counters running out on indirect
        # calls) are about the profile's detail, not the run: shown only if the run fails.
        path = REPO / t
        run = subprocess.run([str(exe), path.name], cwd=path.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            sys.stderr.write(run.stderr)
            raise SystemExit(f"pgo: training on {t} failed (exit {run.returncode})")
    for old in (TARGET / "pgo").glob("*.profdata"):
        old.unlink()
    subprocess.run([str(tool), "merge", "-o", str(out), *map(str, sorted(raw.glob("*.profraw")))], check=True)
    shutil.rmtree(raw, ignore_errors=True)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("profile", "rustflags"):
        print("usage: tools/pgo.py profile|rustflags", file=sys.stderr)
        return 2
    p = profile()
    if p is not None:
        print(p if argv[0] == "profile" else f"-Cprofile-use={p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
