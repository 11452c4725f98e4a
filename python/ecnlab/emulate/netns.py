"""Network namespaces for emulated hosts, made with iproute2 and always removed.

Every namespace is named ``ecnlab-<pid>-<host>`` after the process that made it, so a later
run (or ``ecnlab emulate --cleanup``) can find and remove what a killed run left behind: a
namespace whose process is gone is stale. TUN devices need no cleanup: they vanish with the
forwarder's file descriptors, wherever they were moved.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess

from ..errors import EmulationError
from ..fsutil import pid_alive

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
    ``all_``); returns their names."""
    gone = [n for n in namespaces() if n.startswith(PREFIX) and (all_ or not _owner_alive(n))]
    for n in gone:
        delete(n)
    return gone


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
