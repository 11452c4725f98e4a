"""Network namespaces for emulated hosts, made with iproute2 and always removed.

Every namespace is named ``ecnlab-<pid>-<host>`` after the process that made it, so a later
run (or ``ecnlab emulate --cleanup``) can find and remove what a killed run left behind: a
namespace whose process is gone is stale. What else a run makes that outlives it when it is
killed (its traffic agents, its result's temporary directory) it notes in a ledger,
``/run/ecnlab/<pid>.json``, which the same cleanup reads. TUN devices need no cleanup: they
vanish with the forwarder's file descriptors, wherever they were moved.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

from ..errors import EmulationError
from ..fsutil import OWNER_FILE, _boot_id, _remove_tree, atomic_write_text, pid_alive
from . import bpf

PREFIX = "ecnlab-"


def check_host() -> None:
    """Raises EmulationError unless namespaces and TUN devices can be made here."""
    if os.geteuid() != 0:
        raise EmulationError("emulation needs root (it makes network namespaces and TUN devices); run it as root")
    if shutil.which("ip") is None:
        raise EmulationError("emulation needs the ip command (iproute2)")
    if not os.path.exists("/dev/net/tun"):
        raise EmulationError("emulation needs TUN devices: /dev/net/tun is missing (modprobe tun)")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise EmulationError(f"ip {' '.join(args)}: {r.stderr.strip() or 'failed'}")
    return r


def namespaces() -> list[str]:
    r = _ip("netns", "list", check=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def _owner_alive(name: str) -> bool:
    try:
        pid = int(name[len(PREFIX) :].split("-", 1)[0])
    except ValueError:
        return False
    return pid_alive(pid)


def delete(name: str) -> None:
    """Kills what runs in a namespace, then removes it."""
    pids = _ip("netns", "pids", name, check=False).stdout.split()
    for p in pids:
        try:
            os.kill(int(p), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    _ip("netns", "del", name, check=False)


def cleanup_stale(all_: bool = False) -> list[str]:
    """Removes namespaces of ecnlab runs whose process is gone (every ecnlab namespace with
    ``all_``), what their ledgers say they left (agents, temporary result directories) and
    the BPF controllers they registered; returns what it removed."""
    gone = [n for n in namespaces() if n.startswith(PREFIX) and (all_ or not _owner_alive(n))]
    for n in gone:
        delete(n)
    return gone + Ledger.clean_stale() + bpf.cleanup_stale(all_)


#: Where running emulations keep their ledgers (a tmpfs: cleared at boot, as the namespaces).
LEDGERS = Path("/run/ecnlab")


def _is_agent(pid: int) -> bool:
    """Whether process ``pid`` is an emulation's traffic agent (a reused id is left alone)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(part.endswith(b"emulate/agent.py") for part in cmd)


class Ledger:
    """What one emulation made that would outlive it if it were killed."""

    def __init__(self) -> None:
        self.path = LEDGERS / f"{os.getpid()}.json"
        self.data: dict[str, Any] = {"pid": os.getpid(), "boot": _boot_id(), "agents": [], "partial": None}

    def note(self, **changes: Any) -> None:
        self.data.update(changes)
        try:
            LEDGERS.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(self.data))
        except OSError as e:
            raise EmulationError(f"cannot write the emulation's ledger {self.path}: {e.strerror or e}") from None

    def close(self) -> None:
        self.path.unlink(missing_ok=True)

    @staticmethod
    def clean_stale() -> list[str]:
        """Kills the agents and removes the temporary result directories that the ledgers of
        emulations whose process is gone list; returns what it removed."""
        removed: list[str] = []
        for f in sorted(LEDGERS.glob("*.json")) if LEDGERS.is_dir() else []:
            try:
                d = json.loads(f.read_text(encoding="utf-8"))
                pid, boot = int(d["pid"]), str(d["boot"])
            except (OSError, ValueError, KeyError, TypeError):
                f.unlink(missing_ok=True)
                continue
            if boot == _boot_id() and pid_alive(pid):
                continue
            for a in d.get("agents") or []:
                if isinstance(a, int) and _is_agent(a):
                    try:
                        os.kill(a, signal.SIGKILL)
                        removed.append(f"agent {a}")
                    except ProcessLookupError:
                        pass
            partial = d.get("partial")
            if isinstance(partial, str):
                p = Path(partial)
                try:
                    owner = (p / OWNER_FILE).read_text(encoding="utf-8").split()[0]
                except (OSError, IndexError):
                    owner = ""
                # Only a directory the dead run was writing: never one it merely wrote into.
                if owner == str(pid):
                    _remove_tree(p)
                    removed.append(str(p))
            f.unlink(missing_ok=True)
        return removed


class Lab:
    """The namespaces of one emulation run."""

    def __init__(self) -> None:
        self.prefix = f"{PREFIX}{os.getpid()}-"
        self.made: list[str] = []
        self.devices: dict[str, str] = {}

    def ns(self, host: str) -> str:
        return self.prefix + host

    def add_host(self, host: str, tun: str, addr: str, *, ecn_to: list[str], sack: bool, timestamps: bool) -> str:
        """A namespace for ``host`` with TUN device ``tun`` as its only interface at ``addr``
        (10.0.0.0/8 reaches every other host through it); ECN requested towards the
        addresses in ``ecn_to`` (a route feature, so other destinations are unaffected)."""
        ns = self.ns(host)
        _ip("netns", "add", ns)
        self.made.append(ns)
        _ip("link", "set", tun, "netns", ns)
        # Before the device is up, so it never sends IPv6 neighbour discovery.
        self.sysctl(
            ns,
            {
                "net.ipv6.conf.all.disable_ipv6": 1,
                "net.ipv6.conf.default.disable_ipv6": 1,
                # 2: answer ECN when asked, ask only where a route says so.
                "net.ipv4.tcp_ecn": 2,
                "net.ipv4.tcp_sack": int(sack),
                "net.ipv4.tcp_timestamps": int(timestamps),
            },
        )
        _ip("-n", ns, "link", "set", "lo", "up")
        # A long device queue: a packet the host sends while the forwarder is busy waits (its
        # delay shows in the forwarder's lateness) rather than being lost where the scenario
        # has no queue; what is still lost there is counted (device_drops).
        _ip("-n", ns, "link", "set", tun, "mtu", "1500", "txqueuelen", "10000", "up")
        self.devices[host] = tun
        _ip("-n", ns, "addr", "add", f"{addr}/8", "dev", tun)
        for dst in ecn_to:
            _ip("-n", ns, "route", "add", f"{dst}/32", "dev", tun, "features", "ecn")
        return ns

    def device_drops(self) -> dict[str, int]:
        """Packets each host's device dropped before the forwarder read them."""
        out = {}
        for host, tun in self.devices.items():
            r = _ip("-n", self.ns(host), "-j", "-s", "link", "show", "dev", tun, check=False)
            try:
                out[host] = int(json.loads(r.stdout)[0]["stats64"]["tx"]["dropped"])
            except (ValueError, LookupError, TypeError):
                out[host] = -1
        return out

    @staticmethod
    def sysctl(ns: str, values: dict[str, int]) -> None:
        for k, v in values.items():
            path = "/proc/sys/" + k.replace(".", "/")
            r = subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", f"echo {v} > {path}"], capture_output=True, text=True)
            if r.returncode != 0:
                raise EmulationError(f"setting {k} = {v} in {ns}: {r.stderr.strip()}")

    def close(self) -> None:
        for ns in reversed(self.made):
            delete(ns)
        self.made.clear()
