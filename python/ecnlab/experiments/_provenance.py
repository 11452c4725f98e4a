"""Where every parameter of an experiment's runs comes from.

A :class:`Source` names one parameter — a key path of the run's fully-defaulted scenario,
as ``ecnlab validate --print`` shows it (``tcp.min_rto_s``, ``flows.cc``,
``topology.links.queue.limit``; list indices are left out, so ``flows.cc`` covers every
flow's; a trailing ``.*`` covers a subtree) — its value, and where the value comes from:
``paper`` (a §, figure or table), ``default`` (a named simulator's or kernel's default, with
the file, attribute or constant) or ``assumption`` (ours, with the reason).

A host profile (:data:`NS2_HOSTS`, :data:`NS3_HOSTS`, :data:`LINUX_HOSTS`) is the ``[tcp]``
table of one simulator's or kernel's TCP defaults, each value a Source naming where that
simulator sets it. ns-2's come from ``tcl/lib/ns-default.tcl`` (``Agent/TCP``,
``Agent/TCPSink``) and ``tcp/tcp.cc`` of ns-2.35; ns-3's from the attributes of
``src/internet/model/tcp-socket.cc``, ``tcp-socket-base.cc``, ``tcp-socket-state.cc``,
``tcp-l4-protocol.cc`` and ``rtt-estimator.cc`` (ns-3.35, the release of the ns-3 papers'
time; ``InitialCwnd`` became 10 in ns-3.32, 1 before). Where the simulator has no such
mechanism the value turns it off, and says so.

:func:`join` checks a run's fully-defaulted scenario against an experiment's sources and its
host profile: every key must have a source, and a ``[tcp]`` value that differs from the
profile's must be declared by the experiment.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

__all__ = [
    "Source",
    "paper",
    "default",
    "assumption",
    "HostProfile",
    "NS2_HOSTS",
    "NS3_HOSTS",
    "LINUX_HOSTS",
    "FRAMEWORK_SOURCES",
    "hosts_tcp",
    "scenario_keys",
    "join",
    "Provenance",
]

KINDS = ("paper", "default", "assumption")


@dataclass(frozen=True)
class Source:
    """One parameter, its value and where it comes from (``source``: paper, default or
    assumption; ``reference``: the §/figure, the simulator's file and attribute, or the
    reason)."""

    parameter: str
    value: Any
    source: str
    reference: str

    def __post_init__(self) -> None:
        if self.source not in KINDS:
            raise ValueError(f"{self.parameter}: source must be one of {', '.join(KINDS)}, got {self.source!r}")
        if not self.parameter or self.parameter.startswith(".") or ".." in self.parameter:
            raise ValueError(f"not a key path: {self.parameter!r}")
        if not str(self.reference).strip():
            raise ValueError(f"{self.parameter}: a {self.source} needs its reference (§/figure, the default's file or constant, or the reason)")

    def covers(self, key: str) -> bool:
        """Whether this source is about ``key`` (a key path without list indices)."""
        p = self.parameter
        if p.endswith(".*"):
            return key == p[:-2] or key.startswith(p[:-1])
        return key == p

    def to_json(self) -> dict[str, Any]:
        from .verdict import json_number

        v = self.value
        v = json_number(v) if isinstance(v, float) else v
        if not isinstance(v, (str, int, float, bool, type(None), list)):
            v = str(v)
        return {"parameter": self.parameter, "value": v, "source": self.source, "reference": self.reference}


def paper(parameter: str, value: Any, ref: str) -> Source:
    """A value the paper gives (``ref``: §, figure or table)."""
    return Source(parameter, value, "paper", ref)


def default(parameter: str, value: Any, ref: str) -> Source:
    """A named simulator's or kernel's default (``ref``: the file and attribute/constant)."""
    return Source(parameter, value, "default", ref)


def assumption(parameter: str, value: Any, reason: str) -> Source:
    """Our choice where the paper and its simulator say nothing, with the reason."""
    return Source(parameter, value, "assumption", reason)


@dataclass(frozen=True)
class HostProfile:
    """The ``[tcp]`` table of one simulator's hosts, every value with its source."""

    name: str
    sources: tuple[Source, ...]

    def tcp(self) -> dict[str, Any]:
        """The ``[tcp]`` table (keys without the ``tcp.`` prefix)."""
        return {s.parameter.removeprefix("tcp."): s.value for s in self.sources}

    def source(self, key: str) -> Source | None:
        return next((s for s in self.sources if s.covers(key)), None)


def hosts_tcp(hosts: HostProfile, **changes: Any) -> dict[str, Any]:
    """A ``[tcp]`` table that starts from the profile (every key of ecnlab's TCP set, so the
    runs do not depend on ecnlab's defaults); ``changes`` are deviations, each of which the
    experiment declares as its own :class:`Source`."""
    out = hosts.tcp()
    unknown = sorted(set(changes) - set(out))
    if unknown:
        raise KeyError(f"not a [tcp] key: {', '.join(unknown)}")
    out.update(changes)
    return out


# ---------------------------------------------------------------------------- ns-2

_NS2 = "ns-2.35 tcl/lib/ns-default.tcl"
_NS2_TCP = "ns-2.35 tcp/tcp.cc"
_OFF_NS2 = "ns-2's one-way TCP has no such mechanism"

NS2_HOSTS = HostProfile(
    "ns-2",
    (
        default("tcp.mss", 1000, f"{_NS2}: Agent/TCP packetSize_ 1000 (payload bytes; headers tcpip_base_hdr_size_ 40 on top)"),
        default("tcp.initial_window", 2, f"{_NS2}: Agent/TCP windowInit_ 2 (default since 2001/5/26; 1 before)"),
        assumption("tcp.syn_loss_iw1", True, f"{_NS2_TCP}: a lost SYN is resent on the timeout and the window restarts from one segment after any timeout; RFC 5681 §3.1's rule is the same in effect"),
        default("tcp.min_rto_s", 0.2, f"{_NS2}: Agent/TCP minrto_ 0.2 (since 2004/10/14)"),
        default("tcp.initial_rto_s", 3.0, f"{_NS2}: Agent/TCP rtxcur_init_ 3.0 (since 2006/01/21)"),
        default("tcp.rto_floor", "rfc6298", f"{_NS2_TCP} rtt_timeout() with rfc2988_ true: max(minrto_, srtt + 4·rttvar)"),
        default("tcp.max_rto_s", 60.0, f"{_NS2}: Agent/TCP maxrto_ 60 (since 2007/03/28)"),
        default("tcp.clock_granularity_s", 0.01, f"{_NS2}: Agent/TCP tcpTick_ 0.01 (since 2002/03/07)"),
        assumption("tcp.syn_retries", 6, f"{_NS2}: Agent/TCP max_connects_ -1 retries the SYN without limit; 6 (63 s of backoff) is beyond every run"),
        default("tcp.delayed_ack", False, f"{_NS2}: Agent/TCPSink acknowledges every segment (delayed ACKs are the separate Agent/TCPSink/DelAck)"),
        default("tcp.delack_segments", 2, f"{_NS2}: Agent/TCPSink/DelAck acknowledges every second segment (used with delayed_ack only)"),
        default("tcp.delack_timeout_s", 0.1, f"{_NS2}: Agent/TCPSink/DelAck interval_ 100ms (used with delayed_ack only)"),
        default("tcp.quickack", False, _OFF_NS2 + " (Linux's quick-ACK mode)"),
        default("tcp.sack_compress_max", 0, _OFF_NS2 + " (every out-of-order segment is acknowledged at once)"),
        default("tcp.sack", False, f"{_NS2}: Agent/TCP, /Reno and /Newreno carry no SACK (SACK is the separate Agent/TCP/Sack1 with Agent/TCPSink/Sack1)"),
        default("tcp.dsack", False, f"{_NS2}: Agent/TCPSink generateDSacks_ false"),
        default("tcp.timestamps", False, f"{_NS2}: Agent/TCP timestamps_ false"),
        default("tcp.window_scaling", True, "ns-2 has no 16-bit window field: the only cap is Agent/TCP window_ (tcp.rcv_buf)"),
        default("tcp.rcv_autotune", False, _OFF_NS2 + " (receive-buffer autotuning)"),
        assumption("tcp.rcv_buf_initial", 131072, "unused: rcv_autotune is off"),
        assumption("tcp.rcv_space_ratio", 0.62, "unused: rcv_autotune is off"),
        default("tcp.rcv_buf", 20000, f"{_NS2}: Agent/TCP window_ 20 (packets) × packetSize_ 1000"),
        default("tcp.limited_transmit", True, f"{_NS2}: Agent/TCP singledup_ 1 (default since 2001/11/28; {_NS2_TCP} send_one(): RFC 3042)"),
        default("tcp.dupack_threshold", 3, f"{_NS2}: Agent/TCP numdupacks_ 3"),
        default("tcp.pace_cwnd", False, _OFF_NS2 + " (pacing)"),
        assumption("tcp.pacing_ss_ratio", 2.0, "unused: pace_cwnd is off"),
        assumption("tcp.pacing_ca_ratio", 1.2, "unused: pace_cwnd is off"),
        default("tcp.tso_defer", False, _OFF_NS2 + " (TSO deferral)"),
        default("tcp.cwnd_reduction", "immediate", f"{_NS2_TCP}: the window is halved at once on a loss or ECE (no PRR)"),
        assumption("tcp.rtt_sample_from", "first", f"{_NS2_TCP} times one segment per round trip (rtt_seq_); 'first' is the nearest of ecnlab's rules"),
        default("tcp.partial_ack_timer", "first", f"{_NS2}: Agent/TCP/Newreno newreno_changes1_ 1 (since 2003/05/05): tcp-newreno.cc partialnewack_helper() restarts the timer on the first partial ACK only"),
        default("tcp.frto", False, f"{_NS2}: Agent/TCP frto_enabled_ 0"),
        default("tcp.rack", False, _OFF_NS2 + " (RACK)"),
        default("tcp.tlp", False, _OFF_NS2 + " (tail loss probe)"),
    ),
)

#: ns-2's Reno-family senders (Agent/TCP/Reno, /Newreno, /Sack1) as NewReno's ``cc_params``,
#: and RFC 5681's as ecnlab's NewReno has them by default: the values of the ``newreno`` axis.
_NEWRENO_RULES = {
    "ns2": {"reduce_from": "cwnd", "rto_rule": "ns2"},
    "rfc5681": {"reduce_from": "flight_size", "rto_rule": "rfc5681"},
}


def newreno_params(rule: str) -> dict[str, Any]:
    """NewReno's ``cc_params`` for a value of the ``newreno`` axis (``ns2`` or ``rfc5681``)."""
    return dict(_NEWRENO_RULES[rule])


def newreno_sources(rule: str) -> list[Source]:
    """The sources of :func:`newreno_params`' keys under ``rule``, for runs whose receive
    window never binds (ns-2's min(cwnd_, window_) is then its cwnd_; MECN, whose window_ does,
    declares its own)."""
    if rule == "ns2":
        cap = "; window_ never binds in these runs"
        return [
            default(
                "flows.cc_params.reduce_from",
                "cwnd",
                f"{_NS2_TCP} slowdown() halves windowd() (precisionReduce_ true); for Reno and Newreno tcp-reno.cc's windowd() is "
                f"min(cwnd_ + dupwnd_, window_), whose dupwnd_ is 0 at a fast retransmit (set after the cut), untouched by an ECN "
                f"echo in recovery (ignored there) and cleared by RenoTcpAgent::timeout; Sack1 has no inflation{cap} (the newreno "
                "axis: RFC 5681 eq. 4's flight size)",
            ),
            default(
                "flows.cc_params.rto_rule",
                "ns2",
                f"{_NS2_TCP} TcpAgent::timeout: the first timeout after an ECN response (last_cwnd_action_ ECN; a loss in the CWR round "
                "ends it, as ns-2's fast retransmit there) keeps ssthresh; every timeout then becomes the last action, so any other "
                "halves, a repeated one too (its window is 1 segment: ssthresh 2). Not modelled: after a timeout "
                "ns-2 answers an ECN echo at once (ecn(): last action TIMEOUT), ecnlab not until the timeout's data is acknowledged "
                "(the newreno axis: RFC 5681 §3.1)",
            ),
        ]
    return [
        assumption("flows.cc_params.reduce_from", "flight_size", "RFC 5681 eq. 4: half the flight size (ecnlab's NewReno default; the newreno reading)"),
        assumption("flows.cc_params.rto_rule", "rfc5681", "RFC 5681 §3.1: a timeout repeated without progress keeps ssthresh (ecnlab's NewReno default; the newreno reading)"),
    ]


# ---------------------------------------------------------------------------- ns-3

_NS3 = "ns-3.35 src/internet/model/"
_OFF_NS3 = "ns-3.35's TcpSocketBase has no such mechanism"

NS3_HOSTS = HostProfile(
    "ns-3",
    (
        default("tcp.mss", 536, f"{_NS3}tcp-socket.cc: TcpSocket::SegmentSize 536"),
        default("tcp.initial_window", 10, f"{_NS3}tcp-socket.cc: TcpSocket::InitialCwnd 10 (since ns-3.32; 1 up to ns-3.31)"),
        default("tcp.syn_loss_iw1", False, f"{_NS3}tcp-socket-base.cc: the window is InitialCwnd after the handshake whatever it took"),
        default("tcp.min_rto_s", 1.0, f"{_NS3}tcp-socket-base.cc: TcpSocketBase::MinRto 1 s"),
        default("tcp.initial_rto_s", 3.0, f"{_NS3}tcp-socket.cc: TcpSocket::ConnTimeout 3 s (the SYN's timeout; data before a sample: rtt-estimator.cc InitialEstimation 1 s + 4·variation, floored at MinRto)"),
        default("tcp.rto_floor", "rfc6298", f"{_NS3}tcp-socket-base.cc: m_rto = Max(SRTT + Max(ClockGranularity, 4·RTTVAR), MinRto)"),
        default("tcp.max_rto_s", 60.0, f"{_NS3}tcp-socket-base.cc ReTxTimeout(): Min(2·RTO, 60 s)"),
        default("tcp.clock_granularity_s", 0.001, f"{_NS3}tcp-socket-base.cc: TcpSocketBase::ClockGranularity 1 ms"),
        default("tcp.syn_retries", 6, f"{_NS3}tcp-socket.cc: TcpSocket::ConnCount 6"),
        default("tcp.delayed_ack", True, f"{_NS3}tcp-socket.cc: TcpSocket::DelAckCount 2 (delayed ACKs on)"),
        default("tcp.delack_segments", 2, f"{_NS3}tcp-socket.cc: TcpSocket::DelAckCount 2"),
        default("tcp.delack_timeout_s", 0.2, f"{_NS3}tcp-socket.cc: TcpSocket::DelAckTimeout 0.2 s"),
        default("tcp.quickack", False, _OFF_NS3 + " (Linux's quick-ACK mode)"),
        default("tcp.sack_compress_max", 0, _OFF_NS3 + " (every out-of-order segment is acknowledged at once)"),
        default("tcp.sack", True, f"{_NS3}tcp-socket-base.cc: TcpSocketBase::Sack true"),
        default("tcp.dsack", False, _OFF_NS3 + " (D-SACK)"),
        default("tcp.timestamps", True, f"{_NS3}tcp-socket-base.cc: TcpSocketBase::Timestamp true"),
        default("tcp.window_scaling", True, f"{_NS3}tcp-socket-base.cc: TcpSocketBase::WindowScaling true"),
        default("tcp.rcv_autotune", False, _OFF_NS3 + " (receive-buffer autotuning)"),
        assumption("tcp.rcv_buf_initial", 131072, "unused: rcv_autotune is off"),
        assumption("tcp.rcv_space_ratio", 0.62, "unused: rcv_autotune is off"),
        default("tcp.rcv_buf", 131072, f"{_NS3}tcp-socket.cc: TcpSocket::RcvBufSize 131072"),
        default("tcp.limited_transmit", True, f"{_NS3}tcp-socket-base.cc: TcpSocketBase::LimitedTransmit true"),
        default("tcp.dupack_threshold", 3, f"{_NS3}tcp-socket-base.cc: TcpSocketBase::ReTxThreshold 3"),
        default("tcp.pace_cwnd", False, f"{_NS3}tcp-socket-state.cc: TcpSocketState::EnablePacing false"),
        default("tcp.pacing_ss_ratio", 2.0, f"{_NS3}tcp-socket-state.cc: TcpSocketState::PacingSsRatio 200 %"),
        default("tcp.pacing_ca_ratio", 1.2, f"{_NS3}tcp-socket-state.cc: TcpSocketState::PacingCaRatio 120 %"),
        default("tcp.tso_defer", False, _OFF_NS3 + " (TSO deferral)"),
        default("tcp.cwnd_reduction", "prr", f"{_NS3}tcp-l4-protocol.cc: TcpL4Protocol::RecoveryType TcpPrrRecovery"),
        default("tcp.rtt_sample_from", "first", f"{_NS3}tcp-socket-base.cc EstimateRtt(): the oldest entry of m_history"),
        default("tcp.partial_ack_timer", "every", f"{_NS3}tcp-socket-base.cc NewAck(): the retransmission timer restarts on every ACK of new data"),
        default("tcp.frto", False, _OFF_NS3 + " (F-RTO)"),
        default("tcp.rack", False, _OFF_NS3 + " (RACK)"),
        default("tcp.tlp", False, _OFF_NS3 + " (tail loss probe)"),
    ),
)

# --------------------------------------------------------------------------- Linux

_LX = "Linux include/net/tcp.h"
_CFG = "ecnlab crates/ecnlab/src/tcp/config.rs"

#: ecnlab's own defaults (what a scenario gets without a [tcp] table), each with the Linux
#: constant it follows, or the reason where it does not.
LINUX_HOSTS = HostProfile(
    "Linux",
    (
        default("tcp.mss", 1448, "Linux over a 1500-byte Ethernet MTU: 1500 − 20 (IP) − 20 (TCP) − 12 (timestamps)"),
        default("tcp.initial_window", 10, f"{_LX}: TCP_INIT_CWND 10"),
        default("tcp.syn_loss_iw1", True, "Linux net/ipv4/tcp_input.c tcp_init_transfer(): one segment after a lost SYN or SYN-ACK (RFC 5681 §3.1)"),
        default("tcp.min_rto_s", 0.2, f"{_LX}: TCP_RTO_MIN HZ/5"),
        default("tcp.initial_rto_s", 1.0, f"{_LX}: TCP_TIMEOUT_INIT 1·HZ (RFC 6298 §2.1)"),
        default("tcp.rto_floor", "linux", "Linux net/ipv4/tcp_input.c tcp_set_rto(): SRTT + max(rto_min, 4·RTTVAR)"),
        assumption("tcp.max_rto_s", 60.0, f"RFC 6298 §2.5's 60 s; {_LX} TCP_RTO_MAX is 120 s, which no run reaches ({_CFG})"),
        assumption("tcp.clock_granularity_s", 0.001, f"RFC 6298 §2's G as ns-3's 1 ms; Linux's jiffy is 1–4 ms and its RTO has no G term ({_CFG})"),
        default("tcp.syn_retries", 6, "Linux net.ipv4.tcp_syn_retries 6 (TCP_SYN_RETRIES)"),
        default("tcp.delayed_ack", True, "Linux: delayed ACKs on (net/ipv4/tcp_input.c __tcp_ack_snd_check)"),
        default("tcp.delack_segments", 2, "Linux net/ipv4/tcp_input.c __tcp_ack_snd_check(): more than one full segment received → ACK now"),
        default("tcp.delack_timeout_s", 0.04, f"{_LX}: TCP_ATO_MIN HZ/25 (a bulk receiver's delayed-ACK timeout)"),
        default("tcp.quickack", True, "Linux net/ipv4/tcp_input.c tcp_incr_quickack()"),
        default("tcp.sack_compress_max", 44, "Linux net.ipv4.tcp_comp_sack_nr 44"),
        default("tcp.sack", True, "Linux net.ipv4.tcp_sack 1"),
        default("tcp.dsack", True, "Linux net.ipv4.tcp_dsack 1"),
        default("tcp.timestamps", True, "Linux net.ipv4.tcp_timestamps 1"),
        default("tcp.window_scaling", True, "Linux net.ipv4.tcp_window_scaling 1"),
        default("tcp.rcv_autotune", True, "Linux net.ipv4.tcp_moderate_rcvbuf 1"),
        default("tcp.rcv_buf_initial", 131072, "Linux net.ipv4.tcp_rmem[1] 131072"),
        assumption("tcp.rcv_space_ratio", 0.62, f"Linux's scaling_ratio depends on the receiving device; 0.62 is the emulation's TUN devices' ({_CFG})"),
        default("tcp.rcv_buf", 32 << 20, "Linux net.ipv4.tcp_rmem[2] 33554432"),
        default("tcp.limited_transmit", True, "Linux: limited transmit (RFC 3042) always on"),
        default("tcp.dupack_threshold", 3, "Linux net.ipv4.tcp_reordering 3"),
        default("tcp.pace_cwnd", False, "Linux paces only with the fq qdisc or a pacing controller (sk_pacing_status)"),
        default("tcp.pacing_ss_ratio", 2.0, "Linux net.ipv4.tcp_pacing_ss_ratio 200"),
        default("tcp.pacing_ca_ratio", 1.2, "Linux net.ipv4.tcp_pacing_ca_ratio 120"),
        default("tcp.tso_defer", True, "Linux net/ipv4/tcp_output.c tcp_tso_should_defer()"),
        default("tcp.cwnd_reduction", "prr", "Linux net/ipv4/tcp_input.c tcp_cwnd_reduction() (PRR, RFC 6937)"),
        default("tcp.rtt_sample_from", "first", "Linux net/ipv4/tcp_input.c tcp_clean_rtx_queue(): first_ackt"),
        assumption("tcp.partial_ack_timer", "first", "Linux re-arms the timer on every ACK of new data but bounds non-SACK recovery with PRR, which this simulator's NewReno recovery does not: 'first' comes closer to Linux 6.18 measured in emulation (see PartialAckTimer in crates/ecnlab/src/tcp/config.rs)"),
        default("tcp.frto", True, "Linux net.ipv4.tcp_frto 2"),
        default("tcp.rack", True, "Linux net.ipv4.tcp_recovery 1 (RACK)"),
        default("tcp.tlp", True, "Linux net.ipv4.tcp_early_retrans 3 (TLP)"),
    ),
)

#: Keys the framework sets for every run: not parameters of the experiment.
FRAMEWORK_SOURCES: tuple[Source, ...] = (
    assumption("name", None, "the run's label: changes nothing in the run"),
    assumption("seed", None, "the framework's seeds 1..n, the unit of pairing of every claim"),
)


# ------------------------------------------------------------------------- the join


def scenario_keys(toml_text: str) -> dict[str, list[Any]]:
    """Every leaf key of a fully-defaulted scenario (``validate --print``'s TOML), list
    indices left out, with the values it takes (one per occurrence)."""
    out: dict[str, list[Any]] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            if not node and path:
                out.setdefault(path, []).append({})
            for k, v in node.items():
                walk(v, f"{path}.{k}" if path else k)
        elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
            for x in node:
                walk(x, path)
        else:
            out.setdefault(path, []).append(node)

    walk(tomllib.loads(toml_text), "")
    return out


@dataclass
class Provenance:
    """The join of an experiment's sources with its runs: the sources used (experiment's,
    then the host profile's, then the framework's), the keys without one, and the ``[tcp]``
    values that differ from the profile's without a declaration."""

    sources: list[Source]
    missing: dict[str, list[str]]  # key → runs that have it
    undeclared: dict[str, str]  # key → what differs

    @property
    def complete(self) -> bool:
        return not self.missing and not self.undeclared

    def problems(self) -> list[str]:
        out = [f"{k}: no source (e.g. run {runs[0]})" for k, runs in sorted(self.missing.items())]
        out += [f"{k}: {why}" for k, why in sorted(self.undeclared.items())]
        return out


def join(runs: Mapping[str, str], own: Sequence[Source], hosts: HostProfile | None) -> Provenance:
    """``runs``: {run name: fully-defaulted TOML}. Every key of every run must be covered by
    the experiment's own sources, its host profile or the framework's; a ``[tcp]`` key whose
    value differs from the host profile's needs a source of the experiment's own."""
    used: dict[str, Source] = {}
    missing: dict[str, list[str]] = {}
    undeclared: dict[str, str] = {}
    for run, toml in runs.items():
        for key, values in scenario_keys(toml).items():
            src = next((s for s in own if s.covers(key)), None)
            if src is None and hosts is not None:
                h = hosts.source(key)
                if h is not None:
                    if any(v != h.value for v in values):
                        differs = sorted({repr(v) for v in values if v != h.value})
                        undeclared.setdefault(key, f"{', '.join(differs)} in run {run}, the {hosts.name} profile has {h.value!r} ({h.reference}): declare the deviation")
                        continue
                    src = h
            if src is None:
                src = next((s for s in FRAMEWORK_SOURCES if s.covers(key)), None)
            if src is None:
                missing.setdefault(key, []).append(run)
                continue
            used.setdefault(src.parameter, src)
    ordered = [s for s in own if s.parameter in used]
    ordered += [s for s in (hosts.sources if hosts else ()) if s.parameter in used and s not in ordered]
    return Provenance(ordered, missing, undeclared)


def check_sources(sources: Iterable[Source]) -> None:
    """Two sources for one parameter are an error (which one holds?)."""
    seen: dict[str, Source] = {}
    for s in sources:
        if s.parameter in seen:
            raise ValueError(f"{s.parameter}: two sources ({seen[s.parameter].reference!r} and {s.reference!r})")
        seen[s.parameter] = s
