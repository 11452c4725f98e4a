#!/usr/bin/env python3
"""Profile-guided optimisation of the simulator's release build (standard library only).

The simulator is a loop of small, branchy steps (a packet at a port, an ACK at a sender); the
compiler lays them out better when it knows which branches run: built with a profile of a
training run, the benchmark's runs and HFCC's took 6-17 % less CPU (each measured), and
compute exactly the same thing (the profile moves code, not arithmetic; `bench/identity.py`
compares every output of two builds).

    python3 tools/pgo.py profile     # prints the profile's path (trains one if needed)
    python3 tools/pgo.py rustflags   # prints RUSTFLAGS for a build that uses it

`profile` builds an instrumented `ecnlab-run` (into target/pgo-gen), runs it on the
training scenarios below, and merges what they counted into target/pgo/<key>.profdata, the
key a hash of the compiler's version, the simulator's sources, Cargo.lock and the training
scenarios, so a profile is made again only when one of them changed (while editing the
simulator, ECNLAB_PGO=0 saves the training at each build). It needs
`llvm-profdata` of the compiler's own LLVM (the rustup component `llvm-tools`, added here
when rustup is there). Without it, or with ECNLAB_PGO=0, both commands print nothing and
exit 0, and the caller builds without a profile: the same simulator, slower. So does any
failure of the training, which it names.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
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


class PgoError(Exception):
    """Why no profile: the build goes on without one and says so."""


def log(msg: str) -> None:
    print(f"pgo: {msg}", file=sys.stderr, flush=True)


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, **kw)
    except FileNotFoundError as e:
        raise PgoError(f"{cmd[0]} not found") from e
    except subprocess.TimeoutExpired as e:
        raise PgoError(f"{' '.join(cmd[:3])} took more than {e.timeout:.0f} s") from e


def _rustc_vv() -> str:
    p = _run(["rustc", "-vV"], capture_output=True, text=True)
    if p.returncode != 0:
        raise PgoError("rustc -vV failed")
    return p.stdout


def _host() -> str:
    return next(line.split()[1] for line in _rustc_vv().splitlines() if line.startswith("host:"))


# When adding llvm-tools failed (offline, a toolchain without the component), it is not
# tried again for a day: every build would otherwise wait for rustup.
NO_TOOLS_MARK = "llvm-tools-unavailable"
RETRY_AFTER_S = 24 * 3600


def llvm_profdata() -> Path | None:
    """The compiler's own llvm-profdata (another LLVM's cannot read its profiles)."""
    sysroot = _run(["rustc", "--print", "sysroot"], capture_output=True, text=True).stdout.strip()
    tool = Path(sysroot) / "lib" / "rustlib" / _host() / "bin" / "llvm-profdata"
    mark = TARGET / "pgo" / NO_TOOLS_MARK
    recent = mark.is_file() and time.time() - mark.stat().st_mtime < RETRY_AFTER_S
    if not tool.is_file() and shutil.which("rustup") and not recent:
        log("adding the rustup component llvm-tools (for llvm-profdata)")
        try:
            _run(["rustup", "component", "add", "llvm-tools"], capture_output=True, timeout=300)
        except PgoError as e:
            log(str(e))
        if not tool.is_file():
            mark.parent.mkdir(parents=True, exist_ok=True)
            mark.write_text("rustup component add llvm-tools failed; tried again a day later\n")
    return tool if tool.is_file() else None


def key() -> str:
    """Changes with anything that changes what the training counts: the compiler, the
    simulator's sources, the lock file, the training scenarios and the traces they read, and
    flags given to the compiler."""
    h = hashlib.sha256(_rustc_vv().encode())
    h.update(os.environ.get("RUSTFLAGS", "").encode() + b"\0")
    files = sorted(
        p
        for root in ("crates/ecnlab/src", "crates/ecnlab/Cargo.toml", "Cargo.lock", "Cargo.toml", "scenarios/traces")
        for p in ([REPO / root] if (REPO / root).is_file() else (REPO / root).rglob("*"))
        if p.is_file()
    ) + [REPO / t for t in TRAINING]
    for p in files:
        h.update(str(p.relative_to(REPO)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def profile() -> Path | None:
    if os.environ.get("ECNLAB_PGO", "1") == "0":
        return None
    if os.environ.get("CARGO_ENCODED_RUSTFLAGS"):
        raise PgoError("CARGO_ENCODED_RUSTFLAGS is set, and the profile's flag cannot be added to it")
    if any(c.isspace() for c in str(TARGET)):
        raise PgoError(f"the target folder {TARGET} has a space, which RUSTFLAGS cannot carry")
    tool = llvm_profdata()
    if tool is None:
        raise PgoError("llvm-profdata not found (rustup component add llvm-tools)")
    out = TARGET / "pgo" / f"{key()}.profdata"
    if out.is_file():
        return out
    # Each training its own raw folder, and the profile written whole under a temporary
    # name, then renamed: an interrupted or concurrent build never leaves a partial profile
    # under the name the next build takes as done.
    raw = TARGET / "pgo" / f"raw-{os.getpid()}"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    try:
        host = _host()
        env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET / "pgo-gen"))
        env["RUSTFLAGS"] = (env.get("RUSTFLAGS", "") + f" -Cprofile-generate={raw}").strip()
        log(f"training a profile: an instrumented ecnlab-run ({TARGET / 'pgo-gen'})")
        # With --target, the flags reach the simulator and its dependencies, not the build
        # scripts and procedural macros that run on the way.
        build = _run(
            ["cargo", "build", "--release", "--locked", "--quiet", "--bin", "ecnlab-run", "--target", host],
            cwd=REPO,
            env=env,
        )
        if build.returncode != 0:
            raise PgoError("the instrumented build failed")
        exe = TARGET / "pgo-gen" / host / "release" / "ecnlab-run"
        log(f"training on {len(TRAINING)} scenarios")
        for t in TRAINING:
            # From the scenario's folder, where its relative paths (traces) point. The
            # instrumented build's warnings (value-profile counters running out on indirect
            # calls) are about the profile's detail, not the run: shown only if it fails.
            path = REPO / t
            run = _run(
                [str(exe), path.name], cwd=path.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                text=True, timeout=600,
            )
            if run.returncode != 0:
                sys.stderr.write(run.stderr[-4000:])
                raise PgoError(f"training on {t} failed (exit {run.returncode})")
        part = out.with_name(f"{out.name}.part-{os.getpid()}")
        merge = _run([str(tool), "merge", "-o", str(part), *map(str, sorted(raw.glob("*.profraw")))])
        if merge.returncode != 0:
            raise PgoError("llvm-profdata merge failed")
        os.replace(part, out)
        for old in (TARGET / "pgo").glob("*.profdata"):
            if old != out:
                old.unlink(missing_ok=True)
        return out
    finally:
        shutil.rmtree(raw, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("profile", "rustflags"):
        print("usage: tools/pgo.py profile|rustflags", file=sys.stderr)
        return 2
    try:
        p = profile()
    except PgoError as e:
        # The build goes on without a profile: the same simulator, slower.
        log(f"{e}: building without a profile (ECNLAB_PGO=0 skips this step)")
        return 0
    if p is not None:
        print(p if argv[0] == "profile" else f"-Cprofile-use={p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
