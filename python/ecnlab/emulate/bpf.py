"""The schemes' controllers in BPF: loaded for one emulation run, never left behind.

A controller the kernel lacks (DCTCP on kernels without ``tcp_dctcp``) runs on the emulated
hosts as a BPF ``tcp_congestion_ops`` built from ``bpf/`` (``make -C bpf``: the objects,
compiled against this kernel's BTF, and ``ecnlab-bpf``, the loader). For each run the loader
registers every controller the run needs under a name of the run's own
(``e<pid>_<scheme>``, so concurrent runs never meet) through a BPF link pinned at
``/sys/fs/bpf/ecnlab/<pid>/<scheme>/link`` beside its counters. A controller stays registered
exactly as long as its pinned link: the run removes its directory when it ends, and a run
killed with SIGKILL leaves one that the next run, or ``ecnlab emulate --cleanup``, removes
(a directory whose process is gone is stale), as it does the run's namespaces.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from ..errors import EmulationError
from ..fsutil import pid_alive

#: Our controller → the BPF object that implements it in bpf/build/.
OBJECTS = {"dctcp": "dctcp.bpf.o", "mecn": "mecn.bpf.o", "eecn": "eecn.bpf.o", "ucp1": "uno.bpf.o"}
#: The feedback codec each BPF controller speaks on Linux. DCTCP's echo (RFC 8257 §3.2) is
#: its receiver's controller's, so both ends of a flow run it; MECN's and EECN's codepoints,
#: handshake and echo are written by tc programs on every host's interface (the object's
#: *_ingress / *_egress). EECN's tc programs take the connections to the listening ports they
#: are given (its handshake passes before any controller runs).
CODECS = {"dctcp": "dctcp", "mecn": "mecn", "eecn": "eecn", "ucp1": "uno"}
RECEIVER_RUNS_IT = {"dctcp"}
NEEDS_PORTS = {"eecn"}
#: Controllers whose data sender must open the connection.
SENDER_OPENS = {"eecn"}
#: The counters every controller keeps (bpf/counters.h, same order).
COUNTERS = (
    "connections",
    "connections_without_ecn",
    "acks",
    "acks_ece",
    "reductions",
    "losses",
    "estimates",
    "estimate_sum",
    "delivered",
    "delivered_marked",
    "ce_changes",
    "early_acks",
    "cuts_level1",
    "cuts_level2",
    "data_recoded",
    "data_in",
    "data_in_marked",
    "echoes_written",
    "handshake_level1",
    "handshake_level2",
    "congested_acks",
    "losses_in_round",
    "ce_changes_ack_checked",
    "ce_changes_ack_late",
    "data_in_moderate",
    *(f"uno_level{n}" for n in range(9)),
    "uno_blocks_skipped",
    "uno_ring_full",
    "data_in_ce",
    "uno_acks_mi",
    "uno_acks_ai",
    "uno_acks_hold",
    "flows_untracked",
)
#: What each BPF controller does with a connection that did not negotiate ECN (or that its
#: map of connections had no room for): the run's warning says it.
WITHOUT_FEEDBACK = {
    "dctcp": "DCTCP's rules with no marks (Linux's tcp_dctcp would have handed them to Reno; a BPF controller cannot hand itself over)",
    "mecn": "Reno (MECN's growth, with no echo to cut on), halved on a loss",
    "eecn": "EECN's window rules with no echo (its RTT reading and losses alone)",
    "ucp1": "UCP1 with no feedback: MI at its initial level 5 for the whole connection, halved on a loss (as the simulator's UCP1 when UNO is not negotiated)",
}


def warnings(controllers: dict[str, dict]) -> list[str]:
    """The run's warnings from its controllers' counters (``Controllers.counters``):
    connections that ran without the scheme's feedback, and why."""
    out = []
    for cc, c in controllers.items():
        what = WITHOUT_FEEDBACK.get(cc, "its rules with no feedback")
        if c.get("connections_without_ecn"):
            out.append(f"the BPF {cc} ran {c['connections_without_ecn']} connection(s) without ECN: {what}")
        if c.get("flows_untracked"):
            out.append(
                f"the BPF {cc} found no room in its map of connections for {c['flows_untracked']} connection(s) "
                f"that negotiated ECN; they ran as {what}"
            )
        if c.get("uno_ring_full"):
            out.append(
                f"the BPF {cc}'s senders found their ring of 512 frames in flight full {c['uno_ring_full']} time(s): "
                f"those frames' segments were not counted into UNO's blocks, which took longer to decide"
            )
    return out


BPFFS = Path("/sys/fs/bpf")
PIN_ROOT = BPFFS / "ecnlab"


def build_dir() -> Path:
    """Where the built objects and the loader are (``ECNLAB_BPF_DIR`` overrides)."""
    env = os.environ.get("ECNLAB_BPF_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "bpf" / "build"


def unavailable(cc: str) -> str | None:
    """Why controller ``cc`` cannot run as BPF here, or None when it can."""
    d = build_dir()
    if not (d / "ecnlab-bpf").is_file() or not (d / OBJECTS[cc]).is_file():
        return f"its BPF controller is not built ({d}: run `make -C bpf`, which needs clang, bpftool and libbpf-dev)"
    if not Path("/sys/kernel/btf/vmlinux").is_file():
        return "this kernel has no BTF (/sys/kernel/btf/vmlinux), which BPF controllers need"
    return kernel_unfit()


#: The first kernel with struct_ops links (BPF_LINK_CREATE on a struct_ops map), which the
#: loader registers every controller through.
STRUCT_OPS_LINKS = (6, 4)


def kernel_unfit(release: str | None = None, jit: Path = Path("/proc/sys/net/core/bpf_jit_enable")) -> str | None:
    """Why this kernel cannot register the controllers (too old for struct_ops links, or no
    BPF JIT, without which struct_ops programs do not load), or None."""
    release = release or os.uname().release
    m = re.match(r"(\d+)\.(\d+)", release)
    if m and (int(m[1]), int(m[2])) < STRUCT_OPS_LINKS:
        return (
            f"this kernel ({release}) predates struct_ops links (Linux "
            f"{STRUCT_OPS_LINKS[0]}.{STRUCT_OPS_LINKS[1]}), which BPF controllers are registered through"
        )
    try:
        enabled = jit.read_text().strip()
    except OSError:
        return f"this kernel has no BPF JIT ({jit} is missing), which BPF controllers need"
    if enabled == "0":
        return f"the BPF JIT is off ({jit} = 0: sysctl net.core.bpf_jit_enable=1), which BPF controllers need"
    return None


def _bpffs_mounted() -> bool:
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(len(m.split()) > 2 and m.split()[1] == str(BPFFS) and m.split()[2] == "bpf" for m in mounts)


def _mount_bpffs() -> None:
    if _bpffs_mounted():
        return
    BPFFS.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "bpf", "bpf", str(BPFFS)], capture_output=True, text=True)
    if r.returncode != 0:
        raise EmulationError(f"cannot mount the BPF filesystem at {BPFFS}: {r.stderr.strip() or 'mount failed'}")


def _remove(pin_dir: Path) -> None:
    """Unpins everything under ``pin_dir`` (unregistering its controllers) and removes it."""
    for d in sorted([pin_dir, *pin_dir.rglob("*")], key=lambda p: len(p.parts), reverse=True):
        try:
            d.rmdir() if d.is_dir() else d.unlink()
        except FileNotFoundError:
            pass


class Controllers:
    """The BPF controllers of one emulation run."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.dir = PIN_ROOT / str(self.pid)
        self.names: dict[str, str] = {}

    def load(self, cc: str, interfaces: list[tuple[str, str]] = (), ports: list[int] = ()) -> str:
        """Registers controller ``cc`` for this run, with its tc programs (if it has any) on
        each (namespace, device) of ``interfaces`` and, for a scheme that needs them, the
        listening ``ports`` of its connections; returns the name sockets select it by."""
        if cc in self.names:
            return self.names[cc]
        why = unavailable(cc)
        if why:
            raise EmulationError(f"{cc}: {why}")
        _mount_bpffs()
        self.dir.mkdir(parents=True, exist_ok=True)
        name = f"e{self.pid}_{cc}"
        d = build_dir()
        hosts = [f"/run/netns/{ns}:{dev}" for ns, dev in interfaces] + [f"port:{p}" for p in ports]
        r = subprocess.run([str(d / "ecnlab-bpf"), "load", str(d / OBJECTS[cc]), name, str(self.dir / cc), *hosts], capture_output=True, text=True)
        if r.returncode != 0:
            _remove(self.dir / cc)
            raise EmulationError(f"loading the BPF controller {cc}: {r.stderr.strip()[-2000:] or 'failed'}")
        self.names[cc] = name
        return name

    def counters(self) -> dict[str, dict]:
        """Each loaded controller's registered name and counters, summed over its
        connections in this run."""
        out: dict[str, dict] = {}
        for cc in self.names:
            r = subprocess.run([str(build_dir() / "ecnlab-bpf"), "counters", str(self.dir / cc / "counters")], capture_output=True, text=True)
            try:
                values = json.loads(r.stdout)
            except ValueError:
                raise EmulationError(f"reading the counters of the BPF controller {cc}: {r.stderr.strip() or 'no output'}") from None
            out[cc] = {"name": self.names[cc], **dict(zip(COUNTERS, values))}
        return out

    def close(self) -> None:
        """Unregisters every controller of this run."""
        if self.dir.exists():
            _remove(self.dir)
        self.names.clear()


def cleanup_stale(all_: bool = False) -> list[str]:
    """Unregisters the controllers of runs whose process is gone (of every run with
    ``all_``); returns what it removed."""
    removed = []
    if not PIN_ROOT.is_dir():
        return removed
    for d in sorted(PIN_ROOT.iterdir()):
        try:
            pid = int(d.name)
        except ValueError:
            continue
        if all_ or not pid_alive(pid):
            _remove(d)
            removed.append(f"BPF controllers {d}")
    return removed


def registered() -> list[str]:
    """The ecnlab controllers the kernel offers now (for tests and checks)."""
    try:
        names = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []
    return [n for n in names if n.startswith("e") and "_" in n and n[1 : n.index("_")].isdigit()]
