"""Emulation: the scenario's routers forward real Linux TCP between network namespaces.

``emulate(scenario)`` builds one namespace per host with a TUN device as its interface, runs
the scenario's network (the simulator's ports, queue disciplines, markers and links) in one
forwarder on the wall clock, and the scenario's TCP flows as real connections of the
kernel's reno, cubic or bbr. It returns :class:`ecnlab.Results` in the layout of a
simulation run: the ports and their time series from the forwarder, the flows from the
applications and ``TCP_INFO``.

What the kernel does differs from what the scenario's ``[tcp]`` table says; the flows use
Linux's defaults except the MSS (``TCP_MAXSEG``), SACK and timestamps (per host), and ECN
(per destination route). Everything else the table sets is listed in the run's warnings.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import polars as pl

from .. import _core
from ..errors import ScenarioError
from ..results import Results, _scenario_text
from ..fsutil import OWNER_FILE
from . import bpf
from .netns import EmulationError, Lab, Ledger, check_host, cleanup_stale

__all__ = ["emulate", "plan", "EmulationError", "LINUX_CC", "MAX_LOAD_BPS"]

#: Our controller names → the kernel's.
LINUX_CC = {"newreno": "reno", "reno": "reno", "cubic": "cubic", "bbr": "bbr"}
#: Our controllers that run on the emulated hosts as BPF (bpf/), loaded for the run.
BPF_CC = tuple(bpf.OBJECTS)
#: Feedback codecs a Linux stack speaks: none, or RFC 3168 ECN.
LINUX_ECN = {"none": False, "ecn": True}
#: The most data the forwarder is trusted to carry at once on this kind of machine (2 cores;
#: docs/emulation.md has the measurement: one CUBIC flow gets 0.97 of a 600 Mb/s link's
#: capacity and 0.68 of a 1 Gb/s one). A scenario whose flows could ask for more is refused
#: unless forced.
MAX_LOAD_BPS = 600_000_000
#: Flow i's listening port on its host.
FLOW_PORT_BASE = 20000
#: Time between the agents' "go" and simulated time 0.
START_LEAD_S = 0.3
AGENT = Path(__file__).with_name("agent.py")


def plan(scenario: Any, seed: int | None = None, force: bool = False) -> dict:
    """The scenario as the emulation will run it: hosts, ports, and the TCP flows with the
    Linux controller each maps to. Raises ScenarioError for what Linux cannot run, and for
    more load than the forwarder holds (``force``: a warning instead)."""
    text, fmt = _scenario_text(scenario)
    p = json.loads(_core.emulation_plan(text, fmt, seed))
    params_changed = _bpf_params_changed(text, fmt)
    available = _available_cc()
    pairs: dict[tuple[str, str], bool] = {}
    host_opts: dict[str, tuple[bool, bool]] = {}
    for f in p["flows"]:
        path = f["path"]
        linux = LINUX_CC.get(f["cc"])
        f["bpf"] = f["cc"] in BPF_CC
        if f["bpf"]:
            why = bpf.unavailable(f["cc"])
            if why:
                raise ScenarioError(f"{path}.cc", f"\"{f['cc']}\" runs on emulated hosts as BPF, but {why}")
            if f["ecn"] != bpf.CODECS[f["cc"]]:
                raise ScenarioError(f"{path}.ecn", f"the BPF {f['cc']} speaks ecn = \"{bpf.CODECS[f['cc']]}\" on Linux, not \"{f['ecn']}\"")
            if path in params_changed:
                raise ScenarioError(f"{path}.cc_params", f"the BPF {f['cc']} runs its own defaults on Linux (bpf/); cc_params other than the defaults do not reach it")
            if f["cc"] in bpf.SENDER_OPENS and f["client_initiated"]:
                raise ScenarioError(f"{path}.client_initiated", f"the BPF {f['cc']} runs flows whose data sender opens the connection only")
            # The run's own registered name is set when the controller is loaded.
            f["linux_cc"] = None
            f["ecn_on"] = True
        elif linux is None:
            raise ScenarioError(
                f"{path}.cc",
                f"\"{f['cc']}\" is not a Linux congestion control; emulation runs the kernel's TCP "
                f"({', '.join(sorted(set(LINUX_CC)))}) and, as BPF, {', '.join(BPF_CC)}",
            )
        elif available is not None and linux not in available:
            raise ScenarioError(f"{path}.cc", f"this kernel does not offer {linux} (it offers {', '.join(sorted(available))})")
        elif f["ecn"] not in LINUX_ECN:
            raise ScenarioError(
                f"{path}.ecn",
                f"\"{f['ecn']}\" is not something a Linux stack speaks; emulated hosts use ecn = \"ecn\" (RFC 3168) or \"none\"",
            )
        if not f["bpf"]:
            f["linux_cc"] = linux
            f["ecn_on"] = LINUX_ECN[f["ecn"]]
        key = (f["src"], f["dst"])
        if pairs.setdefault(key, f["ecn_on"]) != f["ecn_on"]:
            raise ScenarioError(f"{path}.ecn", f"flows from {f['src']} to {f['dst']} must agree on ECN (it is set per destination route)")
        for host in (f["src"], f["dst"]):
            opts = (f["sack"], f["timestamps"])
            if host_opts.setdefault(host, opts) != opts:
                raise ScenarioError(f"{path}.tcp", f"flows at host {host} must agree on sack and timestamps (they are set per host)")
    p.setdefault("warnings", [])
    if p["max_load_bps"] > MAX_LOAD_BPS:
        why = (
            f"the flows could carry {p['max_load_bps'] / 1e6:g} Mb/s through the forwarder (each at the slowest port "
            f"on its path); it keeps time up to {MAX_LOAD_BPS / 1e6:g} Mb/s on this machine"
        )
        if not force:
            raise ScenarioError("topology", why + " (run it anyway with --force, or force=True from Python, and read its lateness figures)")
        p["warnings"].append(why + "; forced")
    p["ecn_pairs"] = pairs
    p["host_opts"] = host_opts
    return p


def _bpf_params_changed(text: str, fmt: str) -> set[str]:
    """The key paths ("flows[i]") of BPF flows whose cc_params differ from their controller's
    defaults: the scenario normalised (defaults filled in) with and without those tables. A
    normalised scenario (``Scenario.to_toml``) writes every default out, which is no request."""
    import copy
    import tomllib

    data = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    flows = data.get("flows") if isinstance(data, dict) else None
    asked = [i for i, f in enumerate(flows or []) if isinstance(f, dict) and f.get("cc") in BPF_CC and f.get("cc_params")]
    if not asked:
        return set()
    bare = copy.deepcopy(data)
    for i in asked:
        del bare["flows"][i]["cc_params"]

    def normalised(d: dict) -> list:
        return tomllib.loads(_core.validate(json.dumps(d, default=str), "json")).get("flows", [])

    given, defaults = normalised(data), normalised(bare)
    return {f"flows[{i}]" for i in asked if given[i].get("cc_params") != defaults[i].get("cc_params")}


def _available_cc() -> set[str] | None:
    try:
        return set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())
    except OSError:
        return None


class _Agents:
    """One traffic agent per host, started in its namespace (and noted in the run's ledger,
    so a cleanup after a killed run finds them)."""

    def __init__(self, ledger: Ledger) -> None:
        self.procs: dict[str, subprocess.Popen] = {}
        self.ledger = ledger

    def start(self, host: str, ns: str, job: dict) -> None:
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-I", str(AGENT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.procs[host] = p
        self.ledger.note(agents=[q.pid for q in self.procs.values()])
        assert p.stdin is not None
        p.stdin.write(json.dumps(job) + "\n")
        p.stdin.flush()

    def wait_ready(self, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        for host, p in self.procs.items():
            assert p.stdout is not None
            ready, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
            line = p.stdout.readline().strip() if ready else ""
            if line != "ready":
                # Its error output, once it has surely ended.
                p.kill()
                err = p.stderr.read() if p.stderr else ""
                raise EmulationError(f"traffic on host {host} did not start: {err.strip() or line or f'no answer in {timeout_s:g} s'}")

    def go(self, t0_ns: int) -> None:
        for p in self.procs.values():
            assert p.stdin is not None
            p.stdin.write(f"go {t0_ns}\n")
            p.stdin.flush()

    def results(self, timeout_s: float) -> dict[str, dict]:
        out: dict[str, dict] = {}
        deadline = time.monotonic() + timeout_s
        for host, p in self.procs.items():
            try:
                so, se = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                so, se = p.communicate()
            lines = [ln for ln in (so or "").splitlines() if ln.startswith("{")]
            out[host] = json.loads(lines[-1]) if lines else {"flows": [], "error": (se or "").strip()[-500:]}
        return out

    def kill(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()


def emulate(
    scenario: Any,
    seed: int | None = None,
    pcap_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[float], Any] | None = None,
    force: bool = False,
) -> Results:
    """Runs a scenario on real Linux TCP (see the module doc). Needs root. Ctrl-C stops it;
    every namespace it made is removed whatever happens."""
    text, fmt = _scenario_text(scenario)
    p = plan(scenario, seed, force)
    check_host()
    cleanup_stale()
    duration = float(p["duration_s"])
    interval = float(p["sample_interval_s"])
    ledger = Ledger()
    # The result directory being written around this run, if any: ecnlab's own temporary
    # one (never a directory of the caller's).
    partial = Path(pcap_dir).absolute().parent if pcap_dir is not None else None
    ledger.note(partial=str(partial) if partial is not None and (partial / OWNER_FILE).is_file() else None)
    lab = Lab()
    agents = _Agents(ledger)
    controllers = bpf.Controllers()
    flows = p["flows"]

    def setup(taps: list[dict]) -> int:
        addr = {t["host"]: t["addr"] for t in taps}
        made: dict[str, str] = {}
        for t in taps:
            host = t["host"]
            ecn_to = sorted({addr[d] for (s, d), on in p["ecn_pairs"].items() if on and s == host})
            sack, ts = p["host_opts"].get(host, (True, True))
            made[host] = lab.add_host(host, t["tun"], t["addr"], ecn_to=ecn_to, sack=sack, timestamps=ts)
        # The BPF controllers, once every host's interface exists (a scheme's header work
        # runs on each of them), before any socket selects them.
        interfaces = [(made[t["host"]], t["tun"]) for t in taps]
        for f in flows:
            if f["bpf"]:
                ports = [FLOW_PORT_BASE + i for i, g in enumerate(flows) if g["cc"] == f["cc"]] if f["cc"] in bpf.NEEDS_PORTS else []
                f["linux_cc"] = controllers.load(f["cc"], interfaces, ports)
        jobs: dict[str, list[dict]] = {t["host"]: [] for t in taps}
        for i, f in enumerate(flows):
            port = FLOW_PORT_BASE + i
            common = {"name": f["name"], "port": port, "start_s": f["start_s"], "mss": f["mss"], "sample_interval_s": interval}
            jobs[f["src"]].append(
                dict(common, role="sender", initiator=not f["client_initiated"], peer=addr[f["dst"]], size=f["size"], stop_s=f["stop_s"], cc=f["linux_cc"])
            )
            receiver_cc = f["linux_cc"] if f["bpf"] and f["cc"] in bpf.RECEIVER_RUNS_IT else None
            jobs[f["dst"]].append(dict(common, role="receiver", initiator=f["client_initiated"], peer=addr[f["src"]], cc=receiver_cc))
        for host, ns in made.items():
            if jobs[host]:
                agents.start(host, ns, {"flows": jobs[host], "end_s": duration})
        agents.wait_ready()
        t0 = time.monotonic_ns() + int(START_LEAD_S * 1e9)
        agents.go(t0)
        return t0

    prefix = f"ecl{os.getpid() % 100000}h"
    counters: dict[str, dict[str, int]] = {}
    try:
        out = _core.emulate(
            text,
            prefix,
            setup,
            fmt,
            seed=seed,
            pcap_dir=None if pcap_dir is None else os.fspath(pcap_dir),
            progress=progress,
        )
        reports = agents.results(timeout_s=5.0)
        device_drops = lab.device_drops()
        counters = controllers.counters()
    finally:
        agents.kill()
        lab.close()
        controllers.close()
        ledger.close()
    out["meta"]["device_drops"] = sum(max(0, v) for v in device_drops.values())
    out["meta"]["device_drops_by_host"] = device_drops
    out["meta"]["bpf_controllers"] = counters
    return _results(p, out, reports, text, fmt, duration)


def _host_count(counters: dict[str, dict[str, int]], senders: dict[str, int], host: str, *names: str) -> int | None:
    """The sum of a host's TcpExt counters `names`, if the host sends one flow only."""
    c = counters.get(host, {})
    if senders.get(host) != 1 or not any(f"tcpext_{n}" in c for n in names):
        return None
    return sum(c.get(f"tcpext_{n}", 0) for n in names)


def _results(p: dict, out: dict, reports: dict[str, dict], text: str, fmt: str, duration: float) -> Results:
    from .. import _tables

    by_name: dict[str, dict[str, dict]] = {}
    samples: list[tuple[float, str, str, float]] = []
    errors: list[str] = []
    for host, rep in reports.items():
        if rep.get("error"):
            errors.append(f"traffic on {host}: {rep['error']}")
        for r in rep.get("flows", []):
            by_name.setdefault(r["name"], {})[r["role"]] = r
            if r.get("error"):
                errors.append(f"flow {r['name']} ({r['role']}): {r['error']}")
            for t, kind, v in r.get("samples", []):
                samples.append((t, kind, r["name"], v))
    # Linux counts recoveries and tail loss probes per namespace only: a flow gets its host's
    # counts when it is the only flow that host sends.
    senders: dict[str, int] = {}
    for f in p["flows"]:
        senders[f["src"]] = senders.get(f["src"], 0) + 1
    counters = {host: rep.get("tcp_counters", {}) for host, rep in reports.items()}
    rows = []
    for i, f in enumerate(p["flows"]):
        s = by_name.get(f["name"], {}).get("sender", {})
        r = by_name.get(f["name"], {}).get("receiver", {})
        sf, rf = s.get("final") or {}, r.get("final") or {}
        got = r.get("bytes_received")
        start = f["start_s"]
        done = f["size"] is not None and got is not None and got >= f["size"] and r.get("complete")
        last = r.get("last_byte_s")
        fct = (last - start) if done and last is not None else None
        span = (last if done else duration) - start
        rtts = [v for (t, k, n, v) in samples if n == f["name"] and k == "srtt_s"]
        rows.append(
            {
                "flow": i,
                "name": f["name"],
                "transport": "tcp",
                "scheme": f"linux-bpf-{f['cc']}" if f["bpf"] else f"linux-{f['linux_cc']}" + ("+ecn" if f["ecn_on"] else ""),
                "src": f["src"],
                "dst": f["dst"],
                "start_s": start,
                "size_bytes": f["size"],
                "bytes_sent": sf.get("bytes_sent"),
                "bytes_delivered": got,
                "packets_sent": sf.get("data_segs_out"),
                "packets_received": rf.get("data_segs_in"),
                "fct_s": fct,
                "goodput_bps": (got * 8 / span) if got is not None and span > 0 else None,
                "retransmissions": sf.get("total_retrans"),
                "duplicate_segments": sf.get("dsack_dups"),
                "rtos": sf.get("total_rto") if sf.get("total_rto", -1) >= 0 else None,
                "recoveries": _host_count(counters, senders, f["src"], "TCPSackRecovery", "TCPRenoRecovery"),
                "loss_probes": _host_count(counters, senders, f["src"], "TCPLossProbes"),
                "signals_l1": None,
                "signals_l2": None,
                "rtt_min_s": sf["min_rtt_us"] * 1e-6 if sf.get("min_rtt_us") else None,
                "rtt_mean_s": sum(rtts) / len(rtts) if rtts else None,
                "rtt_p95_s": sorted(rtts)[min(len(rtts) - 1, int(0.95 * len(rtts)))] if rtts else None,
                "ce_acked_pkts": sf.get("delivered_ce"),
                "bytes_retransmitted": sf.get("bytes_retrans"),
            }
        )
    flows = pl.DataFrame(
        rows,
        schema={
            "flow": pl.Int64, "name": pl.Utf8, "transport": pl.Utf8, "scheme": pl.Utf8, "src": pl.Utf8, "dst": pl.Utf8,
            "start_s": pl.Float64, "size_bytes": pl.Int64, "bytes_sent": pl.Int64, "bytes_delivered": pl.Int64,
            "packets_sent": pl.Int64, "packets_received": pl.Int64, "duplicate_segments": pl.Int64, "fct_s": pl.Float64, "goodput_bps": pl.Float64,
            "retransmissions": pl.Int64, "rtos": pl.Int64, "recoveries": pl.Int64, "loss_probes": pl.Int64, "signals_l1": pl.Int64, "signals_l2": pl.Int64,
            "rtt_min_s": pl.Float64, "rtt_mean_s": pl.Float64, "rtt_p95_s": pl.Float64,
            "ce_acked_pkts": pl.Int64, "bytes_retransmitted": pl.Int64,
        },
    )
    ts = _tables.to_polars(out["timeseries"])
    if samples:
        extra = pl.DataFrame(
            {
                "time_s": [s[0] for s in samples],
                "kind": [s[1] for s in samples],
                "entity": [s[2] for s in samples],
                "value": [s[3] for s in samples],
            }
        )
        ts = pl.concat([ts, extra.select([pl.col(c).cast(ts.schema[c]) for c in ts.columns])]) if ts.height else extra
    meta = dict(out["meta"])
    meta.update({"duration_s": duration, "mode": "emulation", "flow_errors": errors})
    # Packets the hosts' own stacks refused as malformed (bad checksums, bad headers).
    stack = {host: rep.get("stack_errors", {}) for host, rep in reports.items()}
    meta["host_stack_errors"] = sum(sum(v.values()) for v in stack.values())
    meta["host_stack_errors_by_host"] = stack
    meta["host_tcp_counters"] = counters
    errors.extend(bpf.warnings(meta.get("bpf_controllers") or {}))
    meta["warnings"] = list(p["warnings"]) + list(meta.get("warnings") or []) + errors
    toml = _core.validate(text, fmt)
    return Results(flows, _tables.to_polars(out["ports"]), ts, meta, toml)
