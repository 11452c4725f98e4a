"""Traffic on one emulated host: real Linux TCP connections as the scenario's flows.

Run inside the host's network namespace as a plain script (standard library only, so it
starts fast): reads its job as one JSON line on stdin, binds its listeners, prints ``ready``,
waits for ``go <t0_ns>`` (CLOCK_MONOTONIC of simulated time 0, the same clock in every
namespace), runs the flows and prints one JSON line of results.

A flow has a data sender (the scenario's ``src``) and a receiver; the side that connects is
the sender unless the flow is client-initiated. Each sender samples its socket's
``TCP_INFO`` (congestion window, smoothed RTT, retransmissions) and each receiver counts
delivered bytes per sampling interval.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_MAXSEG = getattr(socket, "TCP_MAXSEG", 2)
CHUNK = 64 * 1024
#: How long a blocked send or receive waits before the deadlines are checked again.
POLL_S = 0.05

# struct tcp_info (include/uapi/linux/tcp.h, Linux 6.10 and later): byte offsets of the
# fields read here.
_U32 = {
    "snd_mss": 16,
    "rtt_us": 68,
    "snd_ssthresh": 76,
    "snd_cwnd": 80,
    "total_retrans": 100,
    "min_rtt_us": 148,
    "data_segs_in": 152,
    "data_segs_out": 156,
    "delivered_ce": 196,
    # Duplicate segments the receiver reported by D-SACK (Linux receivers send them).
    "dsack_dups": 216,
}
_U64 = {"bytes_sent": 200, "bytes_retrans": 208}
_U16 = {"total_rto": 240}
TCP_INFO_LEN = 248


def tcp_info(sock: socket.socket) -> dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_LEN)
    out: dict[str, int] = {}
    for name, off in _U32.items():
        out[name] = struct.unpack_from("=I", raw, off)[0] if off + 4 <= len(raw) else 0
    for name, off in _U64.items():
        out[name] = struct.unpack_from("=Q", raw, off)[0] if off + 8 <= len(raw) else 0
    for name, off in _U16.items():
        out[name] = struct.unpack_from("=H", raw, off)[0] if off + 2 <= len(raw) else -1
    return out


class Flow:
    def __init__(self, job: dict, t0_ns_ref: list[int]) -> None:
        self.job = job
        self.t0 = t0_ns_ref
        self.listener: socket.socket | None = None
        self.result: dict = {"name": job["name"], "role": job["role"], "error": None}
        self.samples: list[tuple[float, str, float]] = []

    # Simulated time of a monotonic instant.
    def rel(self, ns: int) -> float:
        return (ns - self.t0[0]) * 1e-9

    def at(self, s: float) -> int:
        return self.t0[0] + int(s * 1e9)

    def bind(self) -> None:
        if self.job["initiator"]:
            return
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.prepare(ls)
        ls.bind(("0.0.0.0", self.job["port"]))
        ls.listen(1)
        ls.settimeout(POLL_S)
        self.listener = ls

    def prepare(self, s: socket.socket) -> None:
        # Every sender names its controller; a receiver only where the controller also
        # drives the receiver's echo (DCTCP's), so it must run on both ends.
        if self.job.get("cc"):
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, self.job["cc"].encode())
        if self.job.get("mss"):
            s.setsockopt(socket.IPPROTO_TCP, TCP_MAXSEG, int(self.job["mss"]))

    def connection(self, deadline_ns: int) -> socket.socket | None:
        start_ns = self.at(self.job["start_s"])
        if self.job["initiator"]:
            _sleep_until(start_ns)
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.prepare(s)
            s.settimeout(max(0.1, (deadline_ns - time.monotonic_ns()) * 1e-9))
            s.connect((self.job["peer"], self.job["port"]))
            return s
        assert self.listener is not None
        while time.monotonic_ns() < deadline_ns:
            try:
                s, _ = self.listener.accept()
                return s
            except socket.timeout:
                continue
        return None

    def run(self, end_ns: int) -> None:
        try:
            s = self.connection(end_ns)
            if s is None:
                self.result["error"] = "no connection before the end of the run"
                return
            s.settimeout(POLL_S)
            if self.job["role"] == "sender":
                self.send(s, end_ns)
            else:
                self.receive(s, end_ns)
        except OSError as e:
            self.result["error"] = f"{type(e).__name__}: {e}"

    def send(self, s: socket.socket, end_ns: int) -> None:
        job = self.job
        start = time.monotonic_ns()
        self.result["start_s"] = self.rel(start)
        stop_ns = min(end_ns, self.at(job["stop_s"])) if job.get("stop_s") is not None else end_ns
        left = job.get("size")
        buf = memoryview(bytearray(CHUNK))
        every = int(job["sample_interval_s"] * 1e9)
        next_sample = start
        while True:
            now = time.monotonic_ns()
            if now >= next_sample:
                self.sample(s, now)
                next_sample += every
            if now >= stop_ns or (left is not None and left <= 0):
                break
            n = CHUNK if left is None else min(CHUNK, left)
            try:
                k = s.send(buf[:n])
            except socket.timeout:
                continue
            if left is not None:
                left -= k
        if left is not None and left <= 0:
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            # Keep sampling until the receiver has everything (its close) or the run ends.
            while time.monotonic_ns() < end_ns:
                now = time.monotonic_ns()
                if now >= next_sample:
                    self.sample(s, now)
                    next_sample += every
                try:
                    if s.recv(1) == b"":
                        break
                except socket.timeout:
                    continue
        self.result["final"] = tcp_info(s)
        s.close()

    def sample(self, s: socket.socket, now: int) -> None:
        i = tcp_info(s)
        t = self.rel(now)
        self.samples.append((t, "cwnd_bytes", float(i["snd_cwnd"] * i["snd_mss"])))
        # TCP_INFINITE_SSTHRESH until the first reduction, as the simulator leaves it out.
        if i["snd_ssthresh"] < 0x7FFFFFFF:
            self.samples.append((t, "ssthresh_bytes", float(i["snd_ssthresh"] * i["snd_mss"])))
        if i["rtt_us"]:
            self.samples.append((t, "srtt_s", i["rtt_us"] * 1e-6))

    def receive(self, s: socket.socket, end_ns: int) -> None:
        start = time.monotonic_ns()
        got = 0
        last_ns = None
        every = int(self.job["sample_interval_s"] * 1e9)
        next_sample = start + every
        window = 0
        while True:
            now = time.monotonic_ns()
            while now >= next_sample:
                self.samples.append((self.rel(next_sample), "delivery_bps", window * 8 / (every * 1e-9)))
                window = 0
                next_sample += every
            if now >= end_ns:
                break
            try:
                chunk = s.recv(CHUNK)
            except socket.timeout:
                continue
            if not chunk:
                self.result["complete"] = True
                break
            got += len(chunk)
            window += len(chunk)
            last_ns = time.monotonic_ns()
        self.result["bytes_received"] = got
        self.result["last_byte_s"] = None if last_ns is None else self.rel(last_ns)
        self.result["final"] = tcp_info(s)
        s.close()


def _sleep_until(ns: int) -> None:
    while True:
        d = ns - time.monotonic_ns()
        if d <= 0:
            return
        time.sleep(min(d * 1e-9, 0.05))


def _proc_counters(path: str, wanted: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Named counters from a /proc/net/snmp-style file (a header line of names, then a line
    of values, per protocol), keyed `proto_Name`."""
    out: dict[str, int] = {}
    try:
        lines = open(path, encoding="ascii").read().splitlines()
    except OSError:
        return out
    for head, vals in zip(lines[::2], lines[1::2]):
        proto, names = head.split(":", 1)
        values = vals.split(":", 1)[1].split()
        row = dict(zip(names.split(), values))
        for name in wanted.get(proto, ()):
            if name in row:
                out[f"{proto.lower()}_{name}"] = int(row[name])
    return out


def stack_errors() -> dict[str, int]:
    """This namespace's count of received packets its IP and TCP layers refused as malformed
    (/proc/net/snmp: Ip InHdrErrors, Tcp InCsumErrors): a packet the forwarder
    rewrote badly would be counted here and never reach the socket."""
    return _proc_counters("/proc/net/snmp", {"Ip": ("InHdrErrors",), "Tcp": ("InCsumErrors",)})


def tcp_counters() -> dict[str, int]:
    """This namespace's loss-recovery events (/proc/net/netstat TcpExt): tail loss probes
    sent and the losses they repaired, SACK recoveries, timeouts — tcp_info has no per-socket
    count of probes."""
    names = (
        "TCPLossProbes", "TCPLossProbeRecovery", "TCPSackRecovery", "TCPRenoRecovery", "TCPTimeouts", "TCPSpuriousRTOs",
    )  # fmt: skip
    return _proc_counters("/proc/net/netstat", {"TcpExt": names})


def main() -> int:
    job = json.loads(sys.stdin.readline())
    t0 = [0]
    flows = [Flow(f, t0) for f in job["flows"]]
    for f in flows:
        f.bind()
    print("ready", flush=True)
    line = sys.stdin.readline().split()
    if len(line) != 2 or line[0] != "go":
        return 1
    t0[0] = int(line[1])
    end_ns = t0[0] + int(job["end_s"] * 1e9)
    threads = [threading.Thread(target=f.run, args=(end_ns,), daemon=True) for f in flows]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=max(0.0, (end_ns - time.monotonic_ns()) * 1e-9) + 2.0)
    out = [dict(f.result, samples=f.samples) for f in flows]
    print(json.dumps({"flows": out, "stack_errors": stack_errors(), "tcp_counters": tcp_counters()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
