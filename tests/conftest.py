"""Shared fixtures: small UDP scenarios that run in milliseconds and a CLI runner that runs
the installed ``ecnlab`` command the way a user would (a separate process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BINDINGS = REPO / "crates" / "ecnlab-py"

_FNV_OFFSET, _FNV_PRIME, _U64 = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def _fnv1a(h: int, data: bytes) -> int:
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & _U64
    return h


def simulator_source_hash(bindings: Path = BINDINGS) -> str:
    """The hash crates/ecnlab-py/build.rs embeds as ``_core.source_hash``, of the sources as
    they are now: FNV-1a over each .rs/.toml file's path relative to the bindings' crate and
    its bytes, in the order of Rust's Path comparison (by component, ``..`` first)."""
    rels = []
    for root in ("src", "../ecnlab/src", "../ecnlab/Cargo.toml", "Cargo.toml"):
        d = bindings / root
        if d.is_dir():
            rels += [Path(root) / f.relative_to(d) for f in d.rglob("*") if f.suffix in (".rs", ".toml") and f.is_file()]
        else:
            rels.append(Path(root))
    rels.sort(key=lambda r: tuple((0, "") if part == ".." else (1, part) for part in r.parts))
    h = _FNV_OFFSET
    for r in rels:
        h = _fnv1a(h, str(r).encode())
        f = bindings / r
        h = _fnv1a(h, f.read_bytes() if f.is_file() else b"")
    return f"{h:016x}"


def pytest_sessionstart(session) -> None:
    # Every test runs the installed simulator: one built from other sources (a checkout
    # without `make build`) tests code that is not the tree's. An emulation then mixes the
    # tree's BPF objects with the old forwarder (an MECN router with other codepoints read
    # no incipient marks at the receivers), which looks like a bug in the tree.
    if not BINDINGS.is_dir():
        return
    from ecnlab import _core

    now = simulator_source_hash()
    if _core.source_hash != now:
        pytest.exit(
            f"the simulator in {Path(_core.__file__).name} was built from other sources "
            f"(source_hash {_core.source_hash}, the tree's {now}): run `make build`",
            returncode=2,
        )


def netns_unavailable() -> str | None:
    """Why network namespaces cannot be made here (tried with a name of this process's own,
    so concurrent test runs never meet), or None."""
    name = f"ecnlab-probe-{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True)
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None if r.returncode == 0 else "network namespaces cannot be made here (ip netns add failed)"


def bpf_run_unavailable(cc: str) -> str | None:
    """Why a run with BPF controller ``cc`` cannot be made here, or None."""
    from ecnlab.emulate import bpf

    if os.geteuid() != 0:
        return "BPF controller runs need root"
    return netns_unavailable() or bpf.unavailable(cc)


def kernel_c_compiler() -> str:
    """A C compiler that finds the kernel's UAPI headers (<linux/types.h>, which the BPF
    programs' arithmetic headers are written against); skips the test without one."""
    import shutil

    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("the BPF arithmetic tests need a C compiler (cc)")
    r = subprocess.run([cc, "-E", "-x", "c", "-"], input="#include <linux/types.h>\n", capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("the BPF arithmetic tests need <linux/types.h> (Debian: linux-libc-dev)")
    return cc


#: Cases the scenario fuzz tests tried, by outcome: printed at the end of the session.
FUZZ_TALLY: dict[str, int] = {}


def pytest_terminal_summary(terminalreporter) -> None:
    if FUZZ_TALLY:
        terminalreporter.write_line("scenario fuzzing: " + ", ".join(f"{n} {what}" for what, n in FUZZ_TALLY.items()))
ECNLAB = [sys.executable, "-m", "ecnlab"]


def ecnlab_started(ignored: tuple[signal.Signals, ...] = ()) -> list[str]:
    """The ``ecnlab`` command as a shell starts it: SIGINT, SIGHUP and SIGTERM at their
    defaults, as a terminal's foreground command has them, and the signals ``ignored`` ignored
    (`nohup` ignores SIGHUP, a script's background job SIGINT), whatever this process has: the
    suite run under `nohup` hands its children SIGHUP ignored, and the SIGHUP case then timed out. A child inherits an ignored
    signal and Python then leaves SIGINT ignored: pytest run as a script's background job
    (`make test &`) starts with it ignored, polars' import puts a handler of its own there
    (reset to the default in a child) and the first in-process Executor puts the ignore back,
    so a Ctrl-C test passed alone and failed after an in-process sweep. An exec from a
    wrapper, not ``preexec_fn``: this process may have threads (Dask's) when it forks."""
    setup = "".join(f"signal.signal({int(s)}, signal.SIG_IGN); " for s in ignored)
    return [
        sys.executable,
        "-c",
        "import os, signal, sys; "
        + "".join(f"signal.signal({int(s)}, signal.SIG_DFL); " for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM))
        + setup
        + "os.execv(sys.executable, [sys.executable, '-m', 'ecnlab', *sys.argv[1:]])",
    ]


UDP_DUMBBELL = """
duration = "2s"
seed = 7

[topology]
kind = "dumbbell"
left = 2
right = 2
access = { rate = "1Gbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
bottleneck_queue = { kind = "droptail", limit = 100 }

[[flows]]
name = "cbr"
kind = "udp"
src = "l0"
dst = "r0"
rate = "4Mbps"
"""


@pytest.fixture
def udp_toml() -> str:
    return UDP_DUMBBELL


@pytest.fixture
def udp_file(tmp_path: Path) -> Path:
    p = tmp_path / "udp.toml"
    p.write_text(UDP_DUMBBELL)
    return p


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("ECNLAB_DEBUG", None)
    return subprocess.run(
        [*ECNLAB, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def start_cli():
    """``start_cli(*args, ignored=(), **popen_options)``: ``ecnlab args`` started as a shell
    starts it (:func:`ecnlab_started`). One still running when the test ends gets SIGTERM
    (its process group too when it leads one), then SIGKILL: a stop test that fails must not
    leave a run of hours on a core for the rest of the suite."""
    started: list[subprocess.Popen] = []

    def start(*args: str, ignored: tuple[signal.Signals, ...] = (), **popen_options) -> subprocess.Popen:
        proc = subprocess.Popen([*ecnlab_started(ignored), *map(str, args)], **popen_options)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is not None:
            continue
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if os.getpgid(proc.pid) == proc.pid:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
            try:
                proc.communicate(timeout=10)
                break
            except subprocess.TimeoutExpired:
                pass


@pytest.fixture(scope="session")
def quick_reproduction(tmp_path_factory):
    """``quick_reproduction(name, **options)`` → (out dir, summary) of ``ecnlab reproduce
    name --quick`` with two workers, made once per session and shared by every test module
    that asks for the same one."""
    from ecnlab.experiments import reproduce

    made: dict = {}

    def get(name: str, **options):
        key = (name, tuple(sorted(options.items())))
        if key not in made:
            out = tmp_path_factory.mktemp(name.replace(".", "_")) / "out"
            made[key] = (out, reproduce(name, out, quick=True, jobs=2, **options))
        return made[key]

    return get
