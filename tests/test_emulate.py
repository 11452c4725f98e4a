"""Emulation: the scenario's routers forwarding real Linux TCP between network namespaces.

The plan checks run anywhere; the runs need root, /dev/net/tun and iproute2 and skip with a
plain message without them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import netns_unavailable

import ecnlab
from ecnlab.emulate import emulate, netns, plan
from ecnlab.errors import EmulationError, ScenarioError


def can_emulate() -> str | None:
    if os.geteuid() != 0:
        return "emulation tests need root (network namespaces, TUN devices)"
    if shutil.which("ip") is None:
        return "emulation tests need iproute2's ip command"
    if not os.path.exists("/dev/net/tun"):
        return "emulation tests need /dev/net/tun"
    if netns_unavailable():
        return "emulation tests need network namespaces (ip netns add failed)"
    return None


needs_root = pytest.mark.skipif(can_emulate() is not None, reason=can_emulate() or "")


def dumbbell(flows: list[dict], *, rate: str = "20Mbps", duration: str = "4s", queue: dict | None = None) -> ecnlab.Scenario:
    n = max(2, len(flows))
    return ecnlab.Scenario(
        {
            "name": "emulation test",
            "duration": duration,
            "seed": 1,
            "topology": {
                "kind": "dumbbell",
                "left": n,
                "right": n,
                "access": {"rate": "1Gbps", "delay": "1ms"},
                "bottleneck": {"rate": rate, "delay": "10ms"},
                "bottleneck_queue": queue or {"kind": "red", "limit": 100, "min_th": 5, "max_th": 15, "ecn": True},
            },
            "flows": flows,
            "measure": {"interval": "100ms", "sample_ports": ["rl->rr"]},
        }
    )


def ns_left() -> list[str]:
    """Namespaces left behind: this process's, or those of a process that is gone. A live
    emulation of another process (a concurrent run on the same machine) is not ours to judge."""
    own = f"{netns.PREFIX}{os.getpid()}-"
    return [n for n in netns.namespaces() if n.startswith(own) or (n.startswith(netns.PREFIX) and not netns._owner_alive(n))]


def ns_of(pid: int) -> list[str]:
    """The namespaces of one emulation process (a CLI run the test started)."""
    return [n for n in netns.namespaces() if n.startswith(f"{netns.PREFIX}{pid}-")]


# ----------------------------------------------------------------------- plans (anywhere)


@pytest.mark.parametrize(
    "flow, path, says",
    [
        ({"cc": "vcp", "ecn": "vcp"}, "flows[0].cc", "not a Linux congestion control"),
        ({"cc": "newreno", "ecn": "mecn"}, "flows[0].ecn", "not something a Linux stack speaks"),
        ({"kind": "udp", "rate": "1Mbps"}, "flows[0].kind", "UDP flows are not supported"),
    ],
)
def test_what_linux_cannot_run_is_refused_by_key(flow, path, says):
    f = {"name": "a", "src": "l0", "dst": "r0", **flow}
    with pytest.raises(ScenarioError) as e:
        plan(dumbbell([f]))
    assert e.value.path == path
    assert says in e.value.message


def test_more_load_than_the_forwarder_holds_is_refused_unless_forced():
    s = dumbbell([{"name": "a", "src": "l0", "dst": "r0", "cc": "cubic"}], rate="900Mbps")
    with pytest.raises(ScenarioError) as e:
        plan(s)
    assert e.value.path == "topology" and "900 Mb/s" in e.value.message
    # The refusal said "force it" without naming the option.
    assert "--force" in e.value.message and "force=True" in e.value.message
    assert "forced" in plan(s, force=True)["warnings"][0]


def test_plan_maps_controllers_and_counts_shared_bottlenecks_once():
    p = plan(
        dumbbell(
            [
                {"name": "a", "src": "l0", "dst": "r0", "cc": "newreno", "ecn": "ecn"},
                {"name": "b", "src": "l1", "dst": "r1", "cc": "bbr"},
            ]
        )
    )
    assert [f["linux_cc"] for f in p["flows"]] == ["reno", "bbr"]
    assert [f["ecn_on"] for f in p["flows"]] == [True, False]
    assert p["max_load_bps"] == 20_000_000


def test_linux_counters_are_read_per_namespace_and_given_to_a_lone_sender(tmp_path: Path):
    from ecnlab.emulate import _host_count
    from ecnlab.emulate.agent import _proc_counters

    netstat = tmp_path / "netstat"
    netstat.write_text(
        "TcpExt: SyncookiesSent TCPLossProbes TCPSackRecovery TCPRenoRecovery\n"
        "TcpExt: 0 3 5 1\n"
        "IpExt: InNoRoutes\nIpExt: 7\n",
        encoding="ascii",
    )
    c = _proc_counters(str(netstat), {"TcpExt": ("TCPLossProbes", "TCPSackRecovery", "TCPRenoRecovery", "TCPTimeouts")})
    assert c == {"tcpext_TCPLossProbes": 3, "tcpext_TCPSackRecovery": 5, "tcpext_TCPRenoRecovery": 1}
    counters = {"a": c, "b": c}
    senders = {"a": 1, "b": 2}
    assert _host_count(counters, senders, "a", "TCPSackRecovery", "TCPRenoRecovery") == 6
    assert _host_count(counters, senders, "a", "TCPLossProbes") == 3
    # Two flows from one host: the namespace's count cannot be split between them.
    assert _host_count(counters, senders, "b", "TCPLossProbes") is None
    # A kernel without the counter: unknown, not zero.
    assert _host_count(counters, senders, "a", "TCPTimeouts") is None


def test_without_root_emulation_says_so(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(EmulationError, match="needs root"):
        emulate(dumbbell([{"name": "a", "src": "l0", "dst": "r0", "cc": "cubic"}]))


# ----------------------------------------------------------------------- runs (root)


@needs_root
def test_linux_cubic_through_red_ecn_sees_marks_and_fills_the_link():
    r = emulate(dumbbell([{"name": "a", "src": "l0", "dst": "r0", "cc": "cubic", "ecn": "ecn", "tcp": {"mss": 1448}}]))
    f = r.flow("a")
    port = r.port("rl->rr")
    # Marks written by the forwarder reached a real receiver, which echoed them: the sender
    # counts CE-echoed deliveries. Its packets were rewritten with valid checksums, or the
    # receiving kernel would have dropped them and nothing would be delivered.
    assert port["marked_ce"] > 0
    assert f["ce_acked_pkts"] > 0
    # The link is full when the forwarder keeps time; on a loaded machine it idles while the
    # forwarder is held off the CPU (0.74 was seen at a load average of 16 on 2 cores), so the
    # strict figure is asked only of a run whose forwarder was never more than 5 ms late and
    # seldom late at all: its 99th percentile under 1 ms (23 µs on an idle machine; 3.9 ms, the
    # link at 0.84, beside six busy loops; a run at 0.836 had its largest lateness at 8.8 ms,
    # one at 0.840 at 6.2 ms beside a test suite and two simulations).
    late = r.meta["lateness_max_s"]
    punctual = late < 0.005 and (r.meta["lateness_p99_s"] or 0.0) < 0.001
    assert port["utilization"] > (0.85 if punctual else 0.6), (port["utilization"], late)
    assert f["bytes_delivered"] > (0.7 if punctual else 0.5) * 20e6 / 8 * 4, (f["bytes_delivered"], late)
    # No packet was refused, malformed or lost between the taps.
    m = r.meta
    assert m["tx_refused"] == 0 and m["tx_failed"] == 0 and m["rx_dropped_checksum"] == 0
    assert f["rtt_min_s"] >= 0.024, "no packet may leave the emulated path before its propagation delay"
    assert r.series("cwnd_bytes", "a").height > 10
    assert r.series("queue_pkts", "rl->rr").height > 10
    assert ns_left() == []


@needs_root
def test_two_linux_controllers_share_the_link_and_a_finite_flow_finishes():
    r = emulate(
        dumbbell(
            [
                {"name": "bulk", "src": "l0", "dst": "r0", "cc": "newreno", "ecn": "ecn"},
                {"name": "short", "src": "l1", "dst": "r1", "cc": "cubic", "ecn": "ecn", "size": "200KB", "start": "1s"},
            ]
        )
    )
    short = r.flow("short")
    assert short["bytes_delivered"] == 200_000
    assert short["fct_s"] is not None and 0.05 < short["fct_s"] < 2.5
    assert r.flow("bulk")["goodput_bps"] > 5e6


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ecnlab", *args]


@needs_root
def test_ctrl_c_leaves_no_namespace_and_no_result(tmp_path: Path, start_cli):
    scen = tmp_path / "s.toml"
    scen.write_text(dumbbell([{"name": "a", "src": "l0", "dst": "r0", "cc": "cubic"}], duration="30s").to_toml())
    out = tmp_path / "out"
    p = start_cli("emulate", scen, "--out", out, "-q", stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not ns_of(p.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ns_of(p.pid), "the emulation never built its namespaces"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=20)
    assert p.returncode != 0
    assert "interrupted" in err
    assert ns_of(p.pid) == [] and ns_left() == []
    assert not out.exists()


@needs_root
def test_a_killed_run_is_cleaned_up_by_the_next(tmp_path: Path):
    scen = tmp_path / "s.toml"
    scen.write_text(dumbbell([{"name": "a", "src": "l0", "dst": "r0", "cc": "cubic"}], duration="30s").to_toml())
    p = subprocess.Popen(_cli("emulate", str(scen), "--out", str(tmp_path / "out"), "-q"))
    deadline = time.monotonic() + 20
    while len(ns_of(p.pid)) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    p.kill()
    p.wait()
    left = ns_of(p.pid)
    assert left and set(left) <= set(ns_left()), "a killed run leaves its namespaces behind"
    r = subprocess.run(_cli("emulate", "--cleanup"), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert ns_of(p.pid) == [] and ns_left() == []


@needs_root
def test_compare_sim_writes_both_runs_and_the_table(tmp_path: Path):
    from ecnlab.emulate.compare import compare

    s = dumbbell([{"name": "a", "src": "l0", "dst": "r0", "cc": "newreno", "ecn": "ecn"}], duration="3s")
    rows = compare(s, tmp_path / "cmp")
    for d in ("sim", "emulation"):
        assert (tmp_path / "cmp" / d / "flows.parquet").is_file()
    md = (tmp_path / "cmp" / "compare.md").read_text()
    assert "| flow a | goodput Mb/s |" in md and "| port rl->rr | CE marks |" in md
    good = next(r for r in rows if r["what"] == "flow a" and r["metric"] == "goodput Mb/s")
    # Both TCPs fill most of a 20 Mb/s link in 3 s.
    assert good["sim"] > 12 and good["emulation"] > 12, good
    # A comparison is a result directory: the same command replaces it.
    compare(s, tmp_path / "cmp")
    assert (tmp_path / "cmp" / "compare.md").is_file()


def campus(apcc: bool) -> ecnlab.Scenario:
    d = {
        "name": "emulation test, campus",
        "duration": "6s",
        "seed": 1,
        "topology": {"kind": "campus", "clients": 1, "wireless": {"rate": "20Mbps", "delay": "0s"}},
        "tcp": {"mss": 1448},
        "flows": [{"name": "down", "src": "s0", "dst": "c0", "cc": "cubic"}],
        "measure": {"interval": "100ms", "sample_ports": ["ap->wlan"]},
    }
    if apcc:
        d["elements"] = [{"node": "ap", "kind": "apcc", "port": "ap->wlan"}]
    return ecnlab.Scenario(d)


@needs_root
def test_apcc_rewrites_real_acks_and_a_linux_sender_obeys():
    # The AP writes its window into the client's ACKs in place (checksums updated): had one
    # been malformed the server's kernel would have dropped it and the download stalled.
    # Linux CUBIC obeys the window: the AP's queue stays near K = 20 packets, where without
    # APCC the same sender builds hundreds in the 12 MB buffer.
    r = emulate(campus(apcc=True))
    m = r.meta
    assert m["elements"]["ap"]["windows_lowered"] > 100
    assert m["tx_refused"] == 0 and m["tx_failed"] == 0 and m["rx_dropped_checksum"] == 0
    # The servers' and clients' kernels refused none of the rewritten packets.
    assert m["host_stack_errors"] == 0, m["host_stack_errors_by_host"]
    assert set(m["host_stack_errors_by_host"]["s0"]) >= {"tcp_InCsumErrors", "ip_InHdrErrors"}
    port = r.port("ap->wlan")
    assert port["mean_queue_pkts"] < 40
    assert r.flow("down")["goodput_bps"] > 0.7 * 20e6
    without = emulate(campus(apcc=False))
    plain = without.port("ap->wlan")
    # Hundreds when the forwarder keeps time; a forwarder held off the CPU on a loaded machine
    # (129 was seen at a load average of 16 on 2 cores) still leaves several times APCC's.
    punctual = without.meta["lateness_max_s"] < 0.010
    assert plain["mean_queue_pkts"] > (150 if punctual else max(100, 3 * port["mean_queue_pkts"])), (
        plain["mean_queue_pkts"],
        without.meta["lateness_max_s"],
    )
    assert ns_left() == []


def _pcap(path: Path, ids: list[int], *, link: int = 101, tos: int = 0) -> None:
    import struct

    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, link))
    for k, ident in enumerate(ids):
        tcp = struct.pack("!HHIIBBHHH", 20000, 5001, k, 0, 5 << 4, 0x10, 65535, 0, 0) + b"x" * 100
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(tcp), ident, 0, 64, 6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        pkt = (b"\x00\x21" if link == 9 else b"") + ip + tcp
        out += struct.pack("<IIII", 0, k, len(pkt), len(pkt)) + pkt
    path.write_bytes(bytes(out))


def test_ip_id_blocks_from_a_capture(tmp_path: Path):
    from ecnlab.emulate.ipid import flow_stats

    # 12 consecutive IDs from 65533 (wrapping to 0), one lost, 12 more. Residues 5 6 7 0 1 2
    # 3 4 | 5 6 7 0 _ 2 3 4 5 6 7 0 1 | 2 3 4 5: blocks of 8 and 12, four left over.
    ids = [(65533 + i) & 0xFFFF for i in range(12)] + [(65533 + 13 + i) & 0xFFFF for i in range(12)]
    _pcap(tmp_path / "p.pcap", ids)
    (r,) = flow_stats(tmp_path / "p.pcap")
    assert r["packets"] == 24
    assert abs(r["plus_one"] - 22 / 23) < 1e-12
    assert r["blocks"] == 2 and r["block_max"] == 12 and r["block_eight"] == 0.5


def test_pcap_reader_takes_ppp_captures_and_ecn_bits(tmp_path: Path):
    from ecnlab.pcapfile import tcp_segments

    _pcap(tmp_path / "ppp.pcap", [7, 8], link=9, tos=3)
    segs = list(tcp_segments(tmp_path / "ppp.pcap"))
    assert [(t.ip_id, t.ecn, t.payload, t.sport) for t in segs] == [(7, 3, 100, 20000), (8, 3, 100, 20000)]
    (tmp_path / "bad.pcap").write_bytes(b"\0" * 24)
    with pytest.raises(ValueError, match="not a pcap file"):
        list(tcp_segments(tmp_path / "bad.pcap"))


def test_cleanup_after_a_killed_run_kills_its_agents_and_removes_its_partial_result(tmp_path, monkeypatch):
    # --cleanup removed a killed run's namespaces only: its traffic agents went on, and its
    # .partial result directory stayed. The run's ledger names them.
    from ecnlab.fsutil import OWNER_FILE

    monkeypatch.setattr(netns, "LEDGERS", tmp_path / "ledgers")
    (tmp_path / "ledgers").mkdir()
    dead = []
    for _ in range(2):
        p = subprocess.Popen(["true"])
        p.wait()
        dead.append(p.pid)
    fake_agent = tmp_path / "emulate" / "agent.py"
    fake_agent.parent.mkdir()
    fake_agent.write_text("import time\ntime.sleep(60)\n")
    agent = subprocess.Popen([sys.executable, str(fake_agent)])
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    for p in (agent, bystander):
        deadline = time.monotonic() + 10
        while b"python" not in Path(f"/proc/{p.pid}/cmdline").read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
    partial = tmp_path / ".out.partial-x"
    partial.mkdir()
    (partial / OWNER_FILE).write_text(f"{dead[0]} boot\n")
    # A directory the other dead run only wrote into (another owner): not its to remove.
    theirs = tmp_path / ".other.partial-y"
    theirs.mkdir()
    (theirs / OWNER_FILE).write_text("1 boot\n")
    ledgers = [
        {"pid": dead[0], "boot": "another boot", "agents": [agent.pid, bystander.pid], "partial": str(partial)},
        {"pid": dead[1], "boot": "another boot", "agents": [], "partial": str(theirs)},
    ]
    for d in ledgers:
        (tmp_path / "ledgers" / f"{d['pid']}.json").write_text(json.dumps(d))
    # A live run's ledger is left alone.
    live = tmp_path / "ledgers" / f"{os.getpid()}.json"
    live.write_text(json.dumps({"pid": os.getpid(), "boot": netns._boot_id(), "agents": [bystander.pid], "partial": None}))
    try:
        gone = netns.Ledger.clean_stale()
        assert agent.wait(timeout=10) != 0
        assert bystander.poll() is None  # not an agent: left alone
        assert not partial.exists() and theirs.exists()
        assert f"agent {agent.pid}" in gone and str(partial) in gone
        assert [f.name for f in (tmp_path / "ledgers").glob("*.json")] == [live.name]
    finally:
        for p in (agent, bystander):
            if p.poll() is None:
                p.kill()
                p.wait()
