"""UNO — Vasić, Kuntimaddi, Kostić, "One Bit Is Enough: a Framework for Deploying Explicit
Feedback Congestion Control Protocols" (seed 001), §IV: UCP1 (one ECN bit, the load level
spread over IP-ID residues), UCP2 (two bits, plus the routers' t_ρ from the flows' mean RTT)
and VCP3 (the exact 3-bit level in every packet, an idealised header) against VCP, on one
bottleneck:

    s_k —(10·C)— r1 —(C)— r2 —(10·C)— d_k          bottleneck port ``r1->r2``

Experiments: ``uno.utilization`` (Fig. 4), ``uno.rtt`` (Fig. 5), ``uno.staggered`` (Fig. 6),
``uno.udp`` (Fig. 7), ``uno.fairness`` (Fig. 8); ``mix.uno-legacy`` puts UCP1 across a
legacy ECN router, across a path without ECN or UNO routers, and beside classic ECN flows.

The paper's figures carry no values in its text. The comparisons test the directions it
states (each with its smallest effect that counts), the sizes it states (0.07 ms, 22 packets)
within ``SIZE_TOL`` (the ``size_tol`` reading), "slightly below 80 %" as the band [70 %, 80 %]
(ours), and the levels it names ("low queue", "negligible loss", "near-optimal") against
bounds declared here as ours. Every parameter of every run has a
source (:meth:`UnoExperiment.provenance`; the report prints the table).

Readings (each a constant here, declared in the provenance, or a reading axis):

- Hosts: ns-2's TCP (``NS2_HOSTS``: Reno-like, no SACK, an ACK per segment, initial window 2,
  min RTO 0.2 s, initial RTO 3 s, 10-ms timer tick), with two deviations: 1000-byte data
  packets on the wire (MSS 960 + 40 header bytes, §IV; ns-2's packetSize_ 1000 is payload)
  and a receive window that never limits. ns-2's VCP sender is a Reno agent; ecnlab's is
  NewReno. ns-2's VCP scales MI and AI by an RTT counted in 10-ms ticks (so a 1-ms path
  scales as 10 ms), and paces the first RTTs of long-RTT flows (pacing_for_big_rtt_); ours
  scales by the measured RTT and does not pace (its w_ factor is 1, as ns-2's default).
  ns-2's VCP sender (vcp-src.cc ``recv_newack_helper`` → ``opencwnd()``) takes one MI or AI
  step per new ACK, whatever it covers, and the UCPs were built on it; ecnlab's UCP and VCP
  apply their laws per acknowledged segment and count at most ``max_segments_per_ack`` per
  ACK: 1 by default here (ns-2's step per ACK), 2 under the ``ack_segments`` axis (RFC 3465's
  L, the schemes' own default). With an ACK per segment the two differ only where an ACK
  covers more than one segment, as after a timeout's repair.
- Buffer: max(BDP, 2 packets per flow) (§IV), the BDP at the flows' mean RTT, DropTail.
- Routers: VCP's marker as VCP's ns-2 code (``vcp`` axis, default ``ns2``: γ = 0.95, the
  load rounded to whole percent; ``paper``: VCP's paper, γ = 0.98); UNO's with κ_q = 0.25
  (§III-B), γ = 0.98 (VCP's paper, whose σ formula §III-B copies; VCP's ns-2 code has 0.95),
  t_ρ = 200 ms; UCP2's routers take t_ρ from S = {80 … 1400} ms for the mean RTT
  (``t_rho_rule``: the smallest element at or above it, MLCP's rule; or the nearest).
- VCP's sender as its ns-2 code (``vcp = ns2``): AI scaled by (rtt/100 ms)² between 20 and
  500 ms, linearly outside (the "parameter limiting" §IV-C describes); ``vcp = paper``:
  (rtt/t_ρ)² everywhere.
- Topology: access links run at 10× the bottleneck; the bottleneck's one-way delay is a quarter
  of the smallest RTT, each flow's access link makes up the rest of its RTT; no reverse
  traffic.
- Randomness: each seed draws every flow's start offset uniformly in [0, 200 ms), one load
  interval, so the seeds differ in the phase of the flows against the routers' intervals (and
  in random IP-IDs when they are random); nothing else in these runs is random, and each
  host's sequential IP-IDs start at 0.
- IP-IDs (``ip_id`` axis): sequential per host, as the paper's figures (each source host runs
  one flow, so per host = per connection); ``random`` is the other reading the paper ran.
  ``uno.utilization`` runs UCP1 with both in every run set, since the paper states the results
  "are very similar".
- Stamping (``stamp_rule`` axis): the router sets the bit when the residue equals its level
  (§II-A); ``at_or_below`` is the alternative §II-A leaves for future work.
- UCP's MI (``xi_sigma`` axis): ξ(σ) = 0.15·(1 − σ)/σ at the level's midpoint σ, or at the
  band's upper edge as VCP's ns-2 sender takes its ξ from its low band's edge (level 0: ξ = 2.1
  or 0.975).
- UCP's AI (``ai_scaling`` axis): ``α·rtt/t_ρ`` per RTT as §III-A writes it (``linear``), or
  VCP's ``α·(rtt/t_ρ)²`` (``vcp_square``, VCP's paper) — §III-A's "scaled in the same fashion as
  MI" allows both.
- UCP's MI exponent (``mi_rtt_cap`` axis): ``(1 + ξ)^min(rtt/t_ρ, cap) − 1`` per segment with
  VCP's cap 2.5 (its ns-2 ``MAX_RTT_BY_TRHO``; the paper states no cap), or 1. With ξ = 2.1 at
  level 0, a flow whose RTT is 2·t_ρ grows ×9.6 per RTT while the load it hears is an interval
  plus a round trip old: it overshoots the buffer many times over.
- "At time = 15 s" and "after 30 s" (``window`` axis, analysis only): the delivery rate over
  the last max(1 s, 3 RTTs) before that time (``recent``; at 1.5 s RTT a 1-s window can hold
  no flight at all), or the mean from the start (``from_start``, the bytes over C·t an ns-2
  script often reports).
- Sizes (``size_tol`` axis, analysis only): the 0.07 ms and 22 packets the paper states hold
  within ±25 %, or ±10 %.
- Figure parameters the paper does not give: Fig. 4's RTT (80 ms, VCP's) and flow count
  (``fig4_flows``: 1, or 10 starting together); Fig. 5's flow count (``fig5_flows``: 1 or 10);
  Fig. 6's RTT values (40, 50, …, 80 ms in that order of joining) and end (the fifth flow runs
  as long as the others' gap); Fig. 7's capacity (45 Mb/s, as Figs. 5–6), RTT (80 ms) and when
  the UDP flow leaves (40 s, ``UDP_STOP_S``); Fig. 8's capacity (45 Mb/s) and RTTs
  (40 + 4k ms, k = 0…29: 40 … 156 ms); Fig. 6's convergence criterion (``convergence_jain``:
  Jain's index of the active flows' 1-s throughputs ≥ 0.9, or 0.95).
- Measured: receiver goodput (payload bytes delivered), not the bottleneck's busy fraction the
  paper plots; without losses the two differ by the header share only (payload over
  C·960/1000), with losses goodput leaves out retransmissions.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import polars as pl

from ..plots import errorbar_with_spread, new_figure
from ..results import Results
from ..scenario import Scenario
from . import register
from .base import (
    NS2_HOSTS,
    NS2_NEWRENO,
    Comparison,
    Context,
    Experiment,
    Reading,
    ReadingAxis,
    RunSet,
    Source,
    Stat,
    assumption,
    by_seed,
    claim,
    default,
    from_text,
    hosts_tcp,
    ms_text,
    newreno_params,
    newreno_sources,
    paper,
    rate_text,
)
from .verdict import Claim, Excluded

PORT = "r1->r2"
PACKET_BYTES = 1000
MSS = 960
START_JITTER_S = 0.2
SAMPLE = "100ms"
UDP_START_S = 20.0
UDP_STOP_S = 40.0
UDP_RATE = 40e6
DYN_CAPACITY = 45e6
#: UCP1's and VCP's load interval (§III-B: "we set t_ρ = 200ms, as VCP").
T_RHO_S = 0.2

#: The tolerance of every size the paper states (0.07 ms, 22 packets): they are read from its
#: text, given to one or two significant digits, on setups whose unstated parameters (RTT,
#: flow count, capacity) are ours. ±25 % keeps 0.07 ms apart from what 22 instead of 8
#: packets per block would give (×2.7), and 22 packets apart from 8. The default of the
#: ``size_tol`` reading (±10 % its stricter alternative).
SIZE_TOL = 0.25
#: The smallest difference of Jain's index a direction claim counts: 1 − J = CV²/(1 + CV²),
#: so near 1 a relative gap of 0.01 is the shares' coefficient of variation growing to ~10 %;
#: 0.9991 against 0.9997 (CVs of 3 % and 1.7 %) is a tie.
JAIN_MIN_EFFECT = 0.01
#: "Low queue" (§IV-A "low persistent queue length", §IV-B "a low queue size", abstract
#: "similar low queue size"): the mean queue at most this fraction of the buffer (ours: the
#: paper gives no number; a standing queue of a tenth of a BDP adds a tenth of an RTT).
LOW_QUEUE = 0.1
#: "Negligible packet loss" (abstract), "low packet drop rate" (§IV-A): at most this
#: fraction of the bottleneck's arrivals dropped (ours).
NEGLIGIBLE_LOSS = 0.001
#: "High utilization" after a UDP flow leaves, and the recovery level (ours).
HIGH_UTIL = 0.8
#: "Rapidly" back to HIGH_UTIL after the UDP flow leaves, and "quickly" adjusting the window
#: when it joins (ours: 25 load intervals, one reading of both words).
RAPID_RECOVERY_S = 5.0
#: The link stays used while the UDP flow runs (ours): the UDP flow alone fills 40/45 = 0.889
#: of the wire; the bound asks the TCP flow for about half of what it leaves.
UDP_LINK_USE = 0.95
#: Link use while the UDP flow runs is measured from this long after it starts (ours): the
#: adjustment itself (the queue the join builds, drained) is measured apart.
UDP_SETTLE_S = 2.0
#: The queue counts as drained after the UDP flow's join when it stays at or below LOW_QUEUE of
#: the buffer for this long (ours: five load intervals, so one empty sample between bursts is
#: not a drain).
DRAINED_FOR_S = 1.0
#: Why the adjustment to the UDP flow is fixed by the mechanism, not by UCP1: 40 Mb/s joining a
#: full 45 Mb/s link fills the 450-packet buffer in 450·8000 bit / 40 Mb/s = 90 ms, under one
#: 200-ms load interval, so the losses cut every window before any load factor can.
UDP_ADJUST_FIXED = (
    "the UDP flow fills the 450-packet DropTail buffer in about 90 ms, less than one 200-ms load interval, so "
    "the TCP flow's window is cut by the losses of the join (a halving, then a timeout) before UNO's or VCP's "
    "load factor can act: any loss-responsive sender drains the queue in the same time"
)


@dataclass(frozen=True)
class Scheme:
    key: str
    label: str
    cc: str
    color: str


VCP = Scheme("vcp", "VCP", "vcp", "#5a9e4b")
UCP1 = Scheme("ucp1", "UCP1", "ucp1", "#3b6ea8")
UCP2 = Scheme("ucp2", "UCP2", "ucp2", "#8e44ad")
VCP3 = Scheme("vcp3", "VCP3", "vcp3", "#d08c2c")
SCHEMES = {s.key: s for s in (VCP, UCP1, UCP2, VCP3)}

IP_ID = ReadingAxis("ip_id", ("sequential", "random"), "the paper ran both and shows sequential")
STAMP_RULE = ReadingAxis("stamp_rule", ("equal", "at_or_below"), "§II-A: exact residue match, or the alternative left for future work")
AI_SCALING = ReadingAxis("ai_scaling", ("linear", "vcp_square"), "§III-A: α·rtt/t_ρ as written, or VCP's paper's (rtt/t_ρ)²")
MI_RTT_CAP = ReadingAxis("mi_rtt_cap", (2.5, 1.0), "the cap on rtt/t_ρ in MI's exponent: VCP's ns-2 value, or 1; the paper states none")
XI_SIGMA = ReadingAxis("xi_sigma", ("midpoint", "upper"), "§III-A's σ for a level: its band's midpoint, or its upper edge as VCP's ns-2 sender")
VCP_AXIS = ReadingAxis("vcp", ("ns2", "paper"), "the VCP the paper's ns-2 runs compared against (its authors' ns-2 code), or VCP's paper")
ACK_SEGMENTS = ReadingAxis("ack_segments", (1, 2), "the segments an ACK counts for, at most, in MI's and AI's per-segment steps: one step per new ACK as ns-2's senders (VCP's vcp-src.cc opencwnd, on which the UCPs were built), or two, RFC 3465's L (ecnlab's default for these schemes)")
T_RHO_RULE = ReadingAxis("t_rho_rule", ("at_or_above", "nearest"), "§III-B 'in a way similar to MLCP': the smallest element of S at or above the mean RTT (MLCP), or the nearest")
WINDOW = ReadingAxis("window", ("recent", "from_start"), "'at time = 15 s' / 'after 30 s': the last max(1 s, 3 RTTs), or the mean from the start", affects="analysis")
SIZE_TOL_AXIS = ReadingAxis("size_tol", (SIZE_TOL, 0.1), "the tolerance of the sizes the paper states (0.07 ms, 22 packets): ±25 %, or ±10 %", affects="analysis")
CONVERGENCE_JAIN = ReadingAxis("convergence_jain", (0.9, 0.95), "Fig. 6's 'converges to fair bandwidth allocation' as Jain's index of the 1-s throughputs ≥ 0.9, or ≥ 0.95", affects="analysis")

#: The axes that change the UCP runs, and VCP's.
UCP_AXES = (IP_ID, STAMP_RULE, AI_SCALING, MI_RTT_CAP, XI_SIGMA, ACK_SEGMENTS)
AXES = UCP_AXES + (VCP_AXIS,)


def _rd(reading: Reading | None, axes: Sequence[ReadingAxis] = AXES + (T_RHO_RULE, NS2_NEWRENO)) -> Mapping[str, Any]:
    """Every axis's value: the reading's where it has the axis, else the default."""
    out = {a.name: a.default for a in axes}
    if reading is not None:
        out.update({k: reading[k] for k in reading})
    return out


def marker(scheme: Scheme, reading: Reading | None = None) -> dict[str, Any]:
    """The bottleneck router's marker for ``scheme`` under ``reading``."""
    rd = _rd(reading)
    if scheme.key == "vcp":
        ns2 = rd["vcp"] == "ns2"
        return {"kind": "vcp", "target_utilization": 0.95 if ns2 else 0.98, "percent_rounding": ns2}
    m: dict[str, Any] = {"kind": "uno", "stamp_rule": rd["stamp_rule"]}
    if scheme.key == "ucp2":
        m.update(encoding="two_bit", t_rho_rule=rd["t_rho_rule"])
    elif scheme.key == "vcp3":
        m["encoding"] = "header"
    return m


def cc_params(scheme: Scheme, reading: Reading | None = None) -> dict[str, Any]:
    """The sender's parameters for ``scheme`` under ``reading``."""
    rd = _rd(reading)
    if scheme.key == "vcp":
        return {"ai_scaling": "ns2" if rd["vcp"] == "ns2" else "paper", "max_segments_per_ack": float(rd["ack_segments"])}
    return {
        "ai_scaling": {"linear": "linear", "vcp_square": "paper"}[rd["ai_scaling"]],
        "max_rtt_ratio": float(rd["mi_rtt_cap"]),
        "xi_sigma": rd["xi_sigma"],
        "max_segments_per_ack": float(rd["ack_segments"]),
    }


def buffer_pkts(capacity_bps: float, rtts_ms: Sequence[float]) -> int:
    """max(BDP, 2 packets per flow) (§IV), the BDP at the flows' mean RTT."""
    n = len(rtts_ms)
    bdp = capacity_bps * (sum(rtts_ms) / n) / 1e3 / (8 * PACKET_BYTES)
    return max(int(math.ceil(bdp)), 2 * n)


def tcp_table(capacity_bps: float, rtts_ms: Sequence[float]) -> dict[str, Any]:
    """ns-2's hosts with 1000-byte data packets on the wire and a receive window that never
    limits."""
    bdp_bytes = capacity_bps * max(rtts_ms) / 1e3 / 8
    return hosts_tcp(NS2_HOSTS, mss=MSS, rcv_buf=int(max(8 * bdp_bytes, 1 << 20)))


def scenario(
    scheme: Scheme,
    capacity_bps: float,
    rtts_ms: Sequence[float],
    duration_s: float,
    *,
    seed: int = 1,
    starts_s: Sequence[float] | None = None,
    reading: Reading | None = None,
    ip_id: str | None = None,
    udp: tuple[float, float, float] | None = None,
    name: str = "",
    sample_flows: bool = True,
) -> Scenario:
    """``len(rtts_ms)`` bulk flows of ``scheme`` through one bottleneck; ``udp`` = (rate,
    start, stop) adds a constant-rate UDP flow."""
    rd = _rd(reading)
    n = len(rtts_ms)
    rng = random.Random(seed)
    starts = [(starts_s[k] if starts_s else 0.0) + rng.uniform(0.0, START_JITTER_S) for k in range(n)]
    bottleneck_ms = min(rtts_ms) / 4.0
    access = rate_text(10 * capacity_bps)
    nodes = [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
    links: list[dict[str, Any]] = []
    for k, rtt in enumerate(rtts_ms):
        nodes += [{"name": f"s{k}", "kind": "host"}, {"name": f"d{k}", "kind": "host"}]
        links.append({"a": f"s{k}", "b": "r1", "rate": access, "delay": ms_text(rtt / 2.0 - bottleneck_ms)})
        links.append({"a": "r2", "b": f"d{k}", "rate": access, "delay": "0ms"})
    links.append(
        {
            "a": "r1",
            "b": "r2",
            "rate": rate_text(capacity_bps),
            "delay": ms_text(bottleneck_ms),
            "queue": {"kind": "droptail", "limit": buffer_pkts(capacity_bps, rtts_ms)},
            # ACKs only on the way back.
            "queue_ba": {"kind": "droptail", "limit": 100_000},
        }
    )
    flows: list[dict[str, Any]] = [
        {"name": f"f{k}", "src": f"s{k}", "dst": f"d{k}", "cc": scheme.cc, "start": f"{starts[k]:.9f}s", "cc_params": cc_params(scheme, reading)} for k in range(n)
    ]
    if udp:
        rate, t0, t1 = udp
        nodes += [{"name": "u", "kind": "host"}, {"name": "v", "kind": "host"}]
        links.append({"a": "u", "b": "r1", "rate": access, "delay": "1ms"})
        links.append({"a": "r2", "b": "v", "rate": access, "delay": "0ms"})
        flows.append({"name": "udp", "kind": "udp", "src": "u", "dst": "v", "rate": rate_text(rate), "packet_size": PACKET_BYTES, "start": f"{t0}s", "stop": f"{t1}s"})
    data: dict[str, Any] = {
        "name": name or f"UNO {scheme.label}, {capacity_bps / 1e6:g} Mb/s, {n} flow(s)",
        "duration": f"{duration_s}s",
        "seed": seed,
        "topology": {"kind": "explicit", "nodes": nodes, "links": links},
        "ports": [{"port": PORT, "marker": marker(scheme, reading)}],
        "hosts": {"ip_id": ip_id or rd["ip_id"]},
        "tcp": tcp_table(capacity_bps, rtts_ms),
        "measure": {"interval": SAMPLE, "sample_ports": [PORT], "sample_flows": sample_flows},
        "flows": flows,
    }
    return Scenario(data)


# ------------------------------------------------------------------------- metrics


def aggregate_bps(r: Results, t0: float, t1: float, flows: Sequence[str] | None = None) -> float:
    """Mean delivery rate (payload bits/s) of ``flows`` (all TCP flows) over (t0, t1]."""
    ts = r.series("delivery_bps").filter((pl.col("time_s") > t0 + 1e-9) & (pl.col("time_s") <= t1 + 1e-9))
    names = flows if flows is not None else [n for n, t in zip(r.flows["name"], r.flows["transport"]) if t == "tcp"]
    ts = ts.filter(pl.col("entity").is_in(list(names)))
    if ts.height == 0:
        return 0.0
    per_t = ts.group_by("time_s").agg(pl.col("value").sum())
    bins = round((t1 - t0) / 0.1)
    return float(per_t["value"].sum()) / max(bins, 1)


def payload_capacity(capacity_bps: float) -> float:
    return capacity_bps * MSS / PACKET_BYTES


def window_s(rtt_ms: float) -> float:
    """The ``recent`` window before a measurement time: at least 1 s and three RTTs."""
    return max(1.0, 3.0 * rtt_ms / 1e3)


def rate_at(r: Results, t: float, rtt_ms: float, window: str) -> float:
    """The TCP flows' payload delivery rate "at" time ``t`` under the ``window`` reading."""
    t0 = 0.0 if window == "from_start" else t - window_s(rtt_ms)
    return aggregate_bps(r, t0, t)


def shares(r: Results, t0: float, t1: float) -> list[float]:
    ts = r.series("delivery_bps").filter((pl.col("time_s") > t0 + 1e-9) & (pl.col("time_s") <= t1 + 1e-9))
    per = ts.group_by("entity").agg(pl.col("value").mean())
    names = [n for n, t in zip(r.flows["name"], r.flows["transport"]) if t == "tcp"]
    got = dict(zip(per["entity"], per["value"]))
    return [float(got.get(n, 0.0)) for n in names]


def jain(xs: Sequence[float]) -> float:
    s, q = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else math.nan


def feedback_delay_ms(r: Results) -> float | None:
    """UNO's load-information delay: from a block's first ACK to its decision (every
    decision of the run, the ramp included), mean over the flows."""
    v = [x for x in r.flows["feedback_delay_mean_s"].to_list() if x is not None]
    return 1e3 * sum(v) / len(v) if v else None


def packets_per_decision(r: Results) -> float | None:
    """Data packets sent per load decision (the block length: 8 with sequential IP-IDs,
    8·H₈ ≈ 21.7 expected with random ones)."""
    f = r.flows.filter(pl.col("transport") == "tcp")
    sent, dec = f["packets_sent"].sum(), f["feedback_decisions"].sum()
    return float(sent) / float(dec) if dec else None


def mean_queue_fraction(r: Results, t0: float, t1: float, buffer: int) -> float:
    """The bottleneck's mean queue over (t0, t1], as a fraction of its ``buffer``."""
    q = r.series("queue_pkts", PORT).filter((pl.col("time_s") > t0 + 1e-9) & (pl.col("time_s") <= t1 + 1e-9))["value"].mean()
    return float(q) / float(buffer)


def mean_load(r: Results, t0: float, t1: float) -> float:
    """The router's mean load factor ρ over (t0, t1]."""
    return float(r.series("marker_gauge", PORT).filter((pl.col("time_s") > t0 + 1e-9) & (pl.col("time_s") <= t1 + 1e-9))["value"].mean())


def drop_fraction(r: Results) -> float:
    p = r.port(PORT)
    return float(p["dropped_pkts"]) / max(float(p["arrived_pkts"]), 1.0)


# ------------------------------------------------------------------------ provenance

_S4 = "§IV"
_VCP_NS2 = "VCP's ns-2 code (vcp-src.cc, vcp-queue.cc), the VCP the paper's ns-2 runs compared against"


def common_sources(rd: Reading, *, udp: bool = False) -> list[Source]:
    """Where the parameters every UNO experiment shares come from (the [tcp] keys not
    listed here are ns-2's, from ``NS2_HOSTS``)."""
    v = _rd(rd)
    ns2_vcp = v["vcp"] == "ns2"
    out = [
        # ---------------------------------------------------------------- hosts
        paper("tcp.mss", MSS, f"{_S4}: 'The data packet size is 1000 bytes, while the ACK packet size is 40 bytes' — 960 payload + 40 header bytes on the wire (ns-2's packetSize_ 1000 is payload: 1040 on the wire)"),
        assumption("tcp.rcv_buf", "max(8·BDP at the largest RTT, 1 MiB)", "a receive window that never limits: ns-2's window_ 20 would cap a flow at 20 packets (2 Mb/s at 80 ms) while the paper's flows fill up to 1 Gb/s, so its scripts raised it"),
        paper("hosts.ip_id", v["ip_id"], f"{_S4}: 'implemented … with both monotonically increasing and random IPIDs … we show the graphs obtained with the monotonically increasing IPIDs' (the ip_id axis; a counter per host from 0, one flow per host)"),
        # -------------------------------------------------------------- topology
        assumption("topology.kind", "explicit", "the single bottleneck is built link by link"),
        assumption("topology.nodes.*", "two routers, a host pair per flow", f"{_S4}-B 'the single bottleneck link'; a host pair per flow, so each host's IP-IDs are one connection's"),
        assumption("topology.links.a", "link ends", "the single-bottleneck topology"),
        assumption("topology.links.b", "link ends", "the single-bottleneck topology"),
        paper("topology.links.rate", "C (the figure's); access links 10·C", "Figs. 4–8 give C; access links 10× C are ours (never the bottleneck)"),
        paper("topology.links.delay", "the flows' RTTs: bottleneck min RTT/4 one way, each access link the rest, 0 on the receivers' side", "Figs. 4–8 give the round-trip propagation delays; their split between links is ours"),
        default("topology.links.queue.kind", "droptail", "ns-2.35: a duplex-link's queue is the script's choice and the paper names no AQM; Queue/DropTail, ns-2's plain queue"),
        paper("topology.links.queue.limit", "max(BDP, 2 per flow) at the bottleneck; 1000 on access links", f"{_S4}: 'The bottleneck buffer size is set to the bandwidth-delay product, or two packets per-flow, whichever is larger' (the BDP at the flows' mean RTT: ours); access links: ecnlab's 1000 packets, never filled at 10·C"),
        default("topology.links.queue.bytes", False, "ns-2.35 Queue/DropTail queue_in_bytes_ false"),
        assumption("topology.links.queue_ba.*", "DropTail; 100 000 packets on the bottleneck's ACK path, 1000 elsewhere", "ACKs are never dropped (the paper has no reverse traffic)"),
        paper("ports.port", PORT, f"{_S4}: the bottleneck router runs the scheme's marker"),
        # ---------------------------------------------------------------- flows
        paper("flows.cc", "ucp1, ucp2, vcp3, vcp", f"{_S4}: UCP1, UCP2, VCP3 and VCP"),
        paper("flows.ecn", "the scheme's codec (uno, uno2, vcp3, vcp)", "§II-A/B (UNO's 1 and 2 bits), §IV (VCP3's 3-bit header), VCP's 2 bits"),
        assumption("flows.kind", "tcp (udp: Fig. 7)", f"{_S4}: 'long-lived FTP-like flows'; Fig. 7's UDP flow"),
        assumption("flows.name", "labels", "names only"),
        assumption("flows.src", "host pairs", "one host pair per flow"),
        assumption("flows.dst", "host pairs", "one host pair per flow"),
        assumption("flows.start", f"the figure's start + U[0, {START_JITTER_S * 1e3:g} ms)", "a per-seed offset over one load interval, so seeds differ in the flows' phase against the routers' intervals (the paper ran one simulation per point)"),
        paper("flows.cc_params.k", 0.15, "§III-A: ξ(σ) = k·(1 − σ)/σ, k = 0.15"),
        assumption("flows.cc_params.xi_sigma", v["xi_sigma"], "§III-A's σ of a level the sender only knows by its band: the midpoint; the band's upper edge as VCP's ns-2 sender (xi_by_lf_ = k_·(100/LF_0 − 1)) is the xi_sigma axis"),
        paper("flows.cc_params.alpha", "UCP 3.0; VCP 1.0", "§III-A: α = 3.0; VCP's paper: α = 1.0"),
        paper("flows.cc_params.beta", 0.875, "§III-A: β = 0.875 (VCP's as well)"),
        paper("flows.cc_params.ai_scaling", f"UCP {cc_params(UCP1, rd)['ai_scaling']}; VCP {'ns2' if ns2_vcp else 'paper'}", f"§III-A: α_s = α·rtt/t_ρ (the ai_scaling axis: VCP's paper's square); VCP: {_VCP_NS2 + ': (rtt/100 ms)² between 20 and 500 ms, linear outside' if ns2_vcp else 'its paper: (rtt/t_ρ)²'} (the vcp axis)"),
        default("flows.cc_params.max_segments_per_ack", float(v["ack_segments"]), "ns-2's senders take one window step per new ACK whatever it covers (VCP's vcp-src.cc opencwnd, which the UCPs were built on): 1; ecnlab's default for these schemes is 2 (RFC 3465's L, for delayed-ACK hosts) (the ack_segments axis). It matters after a timeout: the ACK of the repair covers the whole repaired window"),
        default("flows.cc_params.max_rtt_ratio", float(v["mi_rtt_cap"]), "VCP's ns-2 code MAX_RTT_BY_TRHO 2.5 (the paper states no cap; the mi_rtt_cap axis)"),
        paper("flows.cc_params.t_rho_s", T_RHO_S, "§III-B: 'we set t_ρ = 200ms, as VCP'"),
        paper("flows.cc_params.learn_t_rho", True, "§III-B: UCP2's senders scale by the routers' t_ρ (UCP1's and VCP3's routers announce none)"),
        paper("flows.cc_params.low_load", 0.8, "Fig. 1: six levels over [0, 80 %)"),
        assumption("flows.cc_params.initial_level", 5, "the level acted on before the first decision: the gentlest MI, as VCP starts in MI with its one ξ"),
        default("flows.cc_params.initial_rtt_s", 0.1, "VCP's ns-2 code TYPICAL_RTT 100 ms (the RTT before a sample)"),
        paper("flows.cc_params.xi", 0.0625, "VCP's ξ (its paper; ns-2: xi_by_lf_ = 0.25·(100/80 − 1))"),
        # --------------------------------------------------------------- routers
        paper("ports.marker.kind", "uno (UCP1, UCP2, VCP3); vcp", "§III-B: UNO's router; VCP's"),
        paper("ports.marker.encoding", "one_bit (UCP1), two_bit (UCP2), header (VCP3)", "§II-A, §II-B; §IV: VCP3 'includes link load in every packet by using 3 bits in the IP header'"),
        paper("ports.marker.kappa_q", "UNO 0.25; VCP 0.5", "§III-B: 'k controls how fast the persistent queue length drains (0.25)'; VCP's paper: κ_q = 0.5"),
        assumption("ports.marker.target_utilization", f"UNO 0.98; VCP {0.95 if ns2_vcp else 0.98}", f"§III-B writes γ_l without a value: UNO's routers take VCP's paper's 0.98; VCP: {'its ns-2 code 0.95' if ns2_vcp else 'its paper 0.98'} (the vcp axis)"),
        (default if ns2_vcp else assumption)("ports.marker.percent_rounding", f"VCP {ns2_vcp}; UNO false", f"VCP: {'its ns-2 code rounds ρ to ⌊100ρ + 1⌋ %' if ns2_vcp else 'its paper classifies ρ itself'} (the vcp axis); UNO's levels are on ρ (Fig. 1)"),
        paper("ports.marker.low_load", 0.8, "Fig. 1 / VCP: low load below 80 %"),
        paper("ports.marker.overload", 1.0, "Fig. 1 / VCP: overload at 100 %"),
        paper("ports.marker.t_rho_s", T_RHO_S, "§III-B: t_ρ = 200 ms (UCP2's routers start there)"),
        default("ports.marker.t_q_s", 0.01, "§III-B 'borrowed from VCP': the queue sampled every 10 ms (vcp-queue.cc)"),
        default("ports.marker.queue_weight", 0.25, "§III-B 'borrowed from VCP': vcp-queue.cc's EWMA of the interval's queue samples"),
        paper("ports.marker.stamp_rule", v["stamp_rule"], "§II-A: 'When the load matches those bits, the router sets the ECN bit' (the stamp_rule axis: the alternative left for future work)"),
        paper("ports.marker.rtt_weight", 0.02, "§III-B: m̄ = a·RTT + (1 − a)·m̄, a = 0.02"),
        paper("ports.marker.adapt_t_rho", True, "§III-B: UCP2's routers choose t_ρ from S"),
        paper("ports.marker.t_rho_rule", v["t_rho_rule"], "§III-B: 'in a way similar to MLCP' — MLCP's smallest element of S at or above the mean (as HFCC §IV-D spells it out), which keeps t_ρ above most flows' RTT (§III-B's first condition); the t_rho_rule axis"),
        # ------------------------------------------------------------ measuring
        assumption("measure.interval", SAMPLE, "rates and queues sampled every 100 ms (the figures' resolution)"),
        assumption("measure.sample_ports", [PORT], "the bottleneck"),
        assumption("measure.sample_flows", True, "per-flow rates for the figures"),
    ]
    if udp:
        out += [
            paper("flows.rate", rate_text(UDP_RATE), "§IV-B: 'a UDP flow with a streaming rate of 40 Mbps'"),
            paper("flows.packet_size", f"{PACKET_BYTES}B", f"{_S4}: 1000-byte data packets"),
            assumption("flows.stop", f"{UDP_STOP_S:g}s", "§IV-B: the UDP flow starts 'after 20 s' and is 'gone' later; when is not given"),
        ]
    return out


class UnoExperiment(Experiment):
    """UNO's experiments: ns-2's hosts, the bottleneck checked for stalls, and where every
    parameter comes from."""

    hosts = NS2_HOSTS
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    has_udp = False

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        raise NotImplementedError

    def provenance(self, quick: bool, reading: Reading) -> list[Source]:
        own = self.own_sources(quick, reading)
        have = {s.parameter for s in own}
        return own + [s for s in common_sources(reading, udp=self.has_udp) if s.parameter not in have]


SETUP_NOTE = (
    "Setup (module ecnlab.experiments.uno states every reading; the provenance table every "
    "parameter's source): one bottleneck r1→r2, DropTail buffer max(BDP, 2 packets per flow), "
    "1000-byte data and 40-byte ACK packets, ns-2's TCP hosts (an ACK per segment, initial window "
    "2), flows start at a per-seed offset in [0, 200 ms). VCP runs as its ns-2 code (its own "
    "router, κ_q = 0.5, γ = 0.95); UCP1/UCP2/VCP3 run UNO's router (κ_q = 0.25, 8 levels), VCP3 "
    "through an idealised 3-bit header. Utilisation and throughput are payload delivery rates "
    "over C·960/1000."
)


# ------------------------------------------------------------------------ experiments


@register
class Utilization(UnoExperiment):
    name = "uno.utilization"
    title = "Bottleneck utilisation at 15 s vs capacity (Fig. 4)"
    source = "UNO paper (seed 001) §IV-A, Fig. 4 and the text beside it; §II-A for the load-information delay"
    description = (
        "Capacity swept from 1 Mb/s to 1 Gb/s, RTT 80 ms, bulk flows from t ≈ 0; utilisation at "
        "t = 15 s (the ``window`` reading). The paper: \"UCP1 achieves slightly below 80 % "
        "utilization across link capacities ranging from 1 Mbps to 1 Gbps, whereas VCP "
        "utilization falls significantly as link capacity is increased\" and UCP1 \"is similar "
        "to\" VCP3. UCP1 runs with sequential and with random IP-IDs in every run set (\"the "
        "results are very similar\"); §II-A's sizes: 0.07 ms mean load-information delay at "
        "1 Gb/s, 22 packets per block with random IP-IDs."
    )
    axes = AXES + (WINDOW, ReadingAxis("fig4_flows", (1, 10), "Fig. 4's flow count is not given"), SIZE_TOL_AXIS)
    RTT_MS = 80.0
    DURATION_S = 15.0
    QUICK = (1e6, 10e6, 100e6, 1e9)
    FULL = (1e6, 2e6, 5e6, 10e6, 20e6, 50e6, 100e6, 200e6, 500e6, 1e9)

    def caps(self, quick: bool) -> tuple[float, ...]:
        return self.QUICK if quick else self.FULL

    @staticmethod
    def cfg(key: str, c: float) -> str:
        return f"{key}-{c / 1e6:g}M"

    @staticmethod
    def other(reading: Reading) -> str:
        return "random" if reading.ip_id == "sequential" else "sequential"

    def arm(self, ip_id: str, reading: Reading, c: float) -> str:
        """The UCP1 configuration run with ``ip_id``."""
        return self.cfg("ucp1", c) if ip_id == reading.ip_id else self.cfg("ucp1-" + ip_id, c)

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        n = int(reading.fig4_flows)
        rtts = [self.RTT_MS] * n
        d = self.DURATION_S
        configs: dict[str, Callable[[int], Scenario]] = {}
        for c in self.caps(quick):
            for s in (VCP, UCP1, VCP3):
                configs[self.cfg(s.key, c)] = lambda seed, s=s, c=c: scenario(s, c, rtts, d, seed=seed, reading=reading)
            o = self.other(reading)
            configs[self.cfg("ucp1-" + o, c)] = lambda seed, c=c, o=o: scenario(UCP1, c, rtts, d, seed=seed, reading=reading, ip_id=o)
        return by_seed(configs, seeds)

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        return [
            paper("duration", f"{self.DURATION_S:g}s", "§IV-A: 'the bottleneck utilization at time = 15 s'"),
            paper("topology.links.rate", f"C ∈ {{{', '.join(f'{c / 1e6:g}' for c in self.caps(quick))}}} Mb/s; access 10·C", "Fig. 4: 1 Mb/s to 1 Gb/s (the points between are ours); access links 10× C (ours)"),
            assumption("topology.links.delay", f"RTT {self.RTT_MS:g} ms: bottleneck 20 ms one way, access 20 ms", "Fig. 4's RTT is not given: VCP's 80 ms"),
            assumption("topology.nodes.*", f"{reading.fig4_flows} host pair(s)", "Fig. 4's flow count is not given (the fig4_flows axis)"),
            paper("hosts.ip_id", "sequential and random, both in every run set", "§IV: both were run, 'the results are very similar'"),
        ]

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        caps = self.caps(ctx.quick)
        rd = ctx.reading
        win = rd.window
        tol = float(rd.size_tol)
        at = f"at 15 s ({'last 1 s' if win == 'recent' else 'mean from the start'})"
        # The claims keep one name under every window reading (the report pairs a claim across
        # readings by its name); the window is said in their text.
        over = f"; {at[3:]}"
        util = lambda c: (lambda r: rate_at(r, self.DURATION_S, self.RTT_MS, win) / payload_capacity(c))
        comps: list[Comparison] = []
        keys = {"VCP": "vcp", "UCP1 sequential": None, "UCP1 random": None, "VCP3": "vcp3"}
        stats: dict[str, list[Stat]] = {k: [] for k in keys}
        rows = []
        for c in caps:
            u = util(c)
            seq, rnd = self.arm("sequential", rd, c), self.arm("random", rd, c)
            cfgs = {"VCP": self.cfg("vcp", c), "UCP1 sequential": seq, "UCP1 random": rnd, "VCP3": self.cfg("vcp3", c)}
            for k, cfg in cfgs.items():
                stats[k].append(runs.stat(cfg, u))
            main = self.cfg("ucp1", c)
            ucp1 = runs.per_seed(main, u)
            mb = f"{c / 1e6:g} Mb/s"
            comps += [
                claim(
                    f"UCP1 utilisation at 15 s, {mb}", Claim("matches", 0.75, 1 / 15), ucp1,
                    paper=from_text("Fig. 4", "slightly below 80 %"), unit="fraction", family="Fig. 4: UCP1 slightly below 80 %",
                    text=f"UCP1 in [70 %, 80 %] ('slightly below 80 %', the band ours){over}", ours=runs.stat(main, u),
                ),
                claim(
                    f"UCP1 vs VCP3 utilisation, {mb}", Claim("approx", within=0.1), ucp1, runs.per_seed(self.cfg("vcp3", c), u),
                    paper=from_text("Fig. 4", "UCP1 similar to VCP3"), unit="fraction", text="UCP1 ≈ VCP3 (±10 %)", rival="vcp3",
                    family="Fig. 4: UCP1 ≈ VCP3", ours=runs.stat(main, u), note=f"VCP3 {runs.stat(self.cfg('vcp3', c), u)}",
                ),
                claim(
                    f"UCP1 vs VCP utilisation, {mb}", Claim("greater"), ucp1, runs.per_seed(self.cfg("vcp", c), u),
                    paper=from_text("Fig. 4", "UCP1 above VCP"), unit="fraction", text="UCP1 above VCP", rival="vcp", family="Fig. 4: UCP1 above VCP",
                    about_stall=True, ours=runs.stat(main, u),
                    note=f"VCP {runs.stat(self.cfg('vcp', c), u)}; VCP's slow ramp, which the stall rule flags, is what the claim is about",
                ),
                claim(
                    f"UCP1 sequential vs random IP-IDs, {mb}", Claim("approx", within=0.05), runs.per_seed(seq, u), runs.per_seed(rnd, u),
                    paper=from_text("§IV", "results very similar"), unit="fraction", text="IP-ID numbering does not matter (±5 %)",
                    family="§IV: sequential ≈ random IP-IDs", ours=runs.stat(seq, u), note=f"random: {runs.stat(rnd, u)}",
                ),
            ]
            rows.append(
                {
                    "capacity (Mb/s)": c / 1e6,
                    **{k: str(stats[k][-1]) for k in stats},
                    "delay seq. (ms)": str(runs.stat(seq, feedback_delay_ms)),
                    "delay random (ms)": str(runs.stat(rnd, feedback_delay_ms)),
                    "packets/decision seq.": str(runs.stat(seq, packets_per_decision)),
                    "packets/decision random": str(runs.stat(rnd, packets_per_decision)),
                }
            )
        lo, hi = caps[0], caps[-1]
        comps.append(
            claim(
                f"VCP utilisation at 15 s, {hi / 1e6:g} vs {lo / 1e6:g} Mb/s", Claim("less", min_effect=0.5),
                runs.per_seed(self.cfg("vcp", hi), util(hi)), runs.per_seed(self.cfg("vcp", lo), util(lo)),
                paper=from_text("Fig. 4", "VCP falls significantly as capacity grows"), unit="fraction", about_stall=True,
                text=f"VCP at the largest capacity below half its utilisation at the smallest ('significantly': ours){over}",
                ours=runs.stat(self.cfg("vcp", hi), util(hi)), note=f"at {lo / 1e6:g} Mb/s: {runs.stat(self.cfg('vcp', lo), util(lo))}",
            )
        )
        seq_hi, rnd_hi = self.arm("sequential", rd, hi), self.arm("random", rd, hi)
        if hi == 1e9:
            comps.append(
                claim(
                    "UCP1 load-information delay at 1 Gb/s", Claim("matches", 0.07, tol), runs.per_seed(seq_hi, feedback_delay_ms),
                    paper=0.07, unit="ms", text=f"0.07 ms mean delay at 1 Gb/s (±{tol:.0%})", ours=runs.stat(seq_hi, feedback_delay_ms),
                    note="sequential IP-IDs; from a block's first ACK to its decision, every decision of the run: about 7 packet times (8 µs each at 1 Gb/s) plus the ACKs' jitter",
                )
            )
        frac = lambda r: feedback_delay_ms(r) / self.RTT_MS if feedback_delay_ms(r) is not None else None
        comps += [
            claim(
                f"UCP1 packets per load decision, random IP-IDs, {hi / 1e6:g} Mb/s", Claim("matches", 22.0, tol), runs.per_seed(rnd_hi, packets_per_decision),
                paper=22.0, unit="packets", text=f"'in expectation, 22 packets will capture all possible 3-bit load encodings' (±{tol:.0%})",
                ours=runs.stat(rnd_hi, packets_per_decision), note=f"coupon collector over 8 residues: 8·H₈ = 21.7; sequential IP-IDs: {runs.stat(seq_hi, packets_per_decision)}",
            ),
            claim(
                f"UCP1 load-information delay over the RTT, random IP-IDs, {hi / 1e6:g} Mb/s", Claim("at_most", 0.1), runs.per_seed(rnd_hi, frac),
                paper=from_text("§II-A", "a small fraction of the RTT"), unit="fraction of the RTT", text="the delay is at most a tenth of the RTT ('small fraction': ours)",
                ours=runs.stat(rnd_hi, frac), note=f"random IP-IDs wait for ~22 packets, the longest blocks; delay {runs.stat(rnd_hi, feedback_delay_ms)} ms",
            ),
        ]
        if ctx.draw:
            fig, ax = new_figure("Fig. 4: utilisation at 15 s", "capacity (Mb/s)", "utilisation")
            ax.set_xscale("log")
            xs = [c / 1e6 for c in caps]
            colors = {"VCP": VCP.color, "UCP1 sequential": UCP1.color, "UCP1 random": "#7fb3e0", "VCP3": VCP3.color}
            for k, col in colors.items():
                ax.plot(xs, [s.mean for s in stats[k]], color=col, lw=1, alpha=0.6)
                errorbar_with_spread(ax, xs, stats[k], label=f"{k} ({len(ctx.seeds)} seeds)", color=col)
            ax.axhline(0.8, color="#888", ls=":", lw=1)
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig4_utilization", f"Payload utilisation {at}; mean with min–max over seeds; dotted: the paper's 80 %.")
        ctx.table(pl.DataFrame(rows), caption=f"Utilisation {at} (mean [min – max] over seeds), UCP1's load-information delay and packets per decision")
        return comps


@register
class Rtt(UnoExperiment):
    name = "uno.rtt"
    title = "Throughput after 30 s vs RTT at 45 Mb/s (Fig. 5)"
    source = "UNO paper (seed 001) §IV-A, Fig. 5 and the text beside it"
    description = (
        "Bulk flow(s), 45 Mb/s, round-trip propagation delay swept from 1 ms to 1.5 s; throughput "
        "after 30 s (the ``window`` reading). The paper: \"UCP1 again achieves better throughput "
        "than VCP, and is practically identical to VCP3\". The runs are 30 s, 20 RTTs at 1.5 s: "
        "VCP's MI (×1.16 per RTT from 2 packets) cannot fill the link in them, which is the "
        "claim; UCP1 and VCP3 overshoot at long RTTs (module doc, mi_rtt_cap)."
    )
    axes = AXES + (WINDOW, ReadingAxis("fig5_flows", (1, 10), "Fig. 5's flow count is not given"))
    DURATION_S = 30.0
    QUICK = (1.0, 10.0, 80.0, 400.0, 1500.0)
    FULL = (1.0, 5.0, 10.0, 20.0, 50.0, 80.0, 100.0, 200.0, 400.0, 800.0, 1000.0, 1500.0)

    def rtts(self, quick: bool) -> tuple[float, ...]:
        return self.QUICK if quick else self.FULL

    @staticmethod
    def cfg(key: str, rtt: float) -> str:
        return f"{key}-{rtt:g}ms"

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        n = int(reading.fig5_flows)
        configs = {
            self.cfg(s.key, rtt): (lambda seed, s=s, rtt=rtt: scenario(s, DYN_CAPACITY, [rtt] * n, self.DURATION_S, seed=seed, reading=reading))
            for rtt in self.rtts(quick)
            for s in (VCP, UCP1, VCP3)
        }
        return by_seed(configs, seeds)

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        return [
            paper("duration", f"{self.DURATION_S:g}s", "§IV-A: 'the results obtained in this setup after 30 seconds'"),
            paper("topology.links.rate", "45 Mb/s; access 450 Mb/s", "§IV-A: 'We then fix the bottleneck capacity to 45 Mbps'; access links 10× C (ours)"),
            paper("topology.links.delay", f"RTT ∈ {{{', '.join(f'{x:g}' for x in self.rtts(quick))}}} ms: bottleneck RTT/4 one way, access the rest", "§IV-A: 'vary the round-trip propagation delay from 1 ms to 1.5 s' (the points between and the split are ours)"),
            assumption("topology.nodes.*", f"{reading.fig5_flows} host pair(s)", "Fig. 5's flow count is not given (the fig5_flows axis)"),
        ]

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        rtts = self.rtts(ctx.quick)
        win = ctx.reading.window
        mbps = lambda x: (lambda r: rate_at(r, self.DURATION_S, x, win) / 1e6)
        stats = {k: [runs.stat(self.cfg(k, x), mbps(x)) for x in rtts] for k in ("vcp", "ucp1", "vcp3")}
        comps = []
        for x in rtts:
            m = mbps(x)
            a = runs.per_seed(self.cfg("ucp1", x), m)
            comps += [
                claim(
                    f"UCP1 vs VCP throughput, RTT {x:g} ms", Claim("greater"), a, runs.per_seed(self.cfg("vcp", x), m),
                    paper=from_text("Fig. 5", "UCP1 better than VCP"), unit="Mb/s", text="UCP1 above VCP", rival="vcp", family="Fig. 5: UCP1 above VCP",
                    about_stall=True, ours=runs.stat(self.cfg("ucp1", x), m),
                    note=f"VCP {runs.stat(self.cfg('vcp', x), m)}; a run that fills less than half the link is what the claim compares",
                ),
                claim(
                    f"UCP1 vs VCP3 throughput, RTT {x:g} ms", Claim("approx", within=0.1), a, runs.per_seed(self.cfg("vcp3", x), m),
                    paper=from_text("Fig. 5", "practically identical"), unit="Mb/s", text="UCP1 ≈ VCP3 (±10 %)", rival="vcp3", family="Fig. 5: UCP1 ≈ VCP3",
                    ours=runs.stat(self.cfg("ucp1", x), m), note=f"VCP3 {runs.stat(self.cfg('vcp3', x), m)}",
                ),
            ]
        if ctx.draw:
            fig, ax = new_figure("Fig. 5: throughput after 30 s, 45 Mb/s", "RTT (ms)", "throughput (Mb/s)")
            ax.set_xscale("log")
            for s in (VCP, UCP1, VCP3):
                ax.plot(rtts, [v.mean for v in stats[s.key]], color=s.color, lw=1, alpha=0.6)
                errorbar_with_spread(ax, rtts, stats[s.key], label=f"{s.label} ({len(ctx.seeds)} seeds)", color=s.color)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig5_rtt", "Payload throughput after 30 s; mean with min–max over seeds.")
        ctx.table(
            pl.DataFrame(
                [
                    {
                        "RTT (ms)": x,
                        **{SCHEMES[k].label: str(stats[k][i]) for k in stats},
                        **{f"{SCHEMES[k].label} RTOs": str(runs.stat(self.cfg(k, x), lambda r: float(sum(v or 0 for v in r.flows["rtos"].to_list())))) for k in ("ucp1", "vcp3")},
                    }
                    for i, x in enumerate(rtts)
                ]
            ),
            caption=f"Throughput after 30 s ({'last max(1 s, 3 RTTs)' if win == 'recent' else 'mean from the start'}; Mb/s; mean [min – max] over seeds) and timeouts",
        )
        return comps


def convergence_s(r: Results, starts: Sequence[float], end: float, threshold: float = 0.9) -> list[float]:
    """For each flow after the first: seconds from its start until Jain's index of the active
    flows' 1-second throughputs first reaches ``threshold`` (the time to the next start, or the
    end, if it never does)."""
    ts = r.series("delivery_bps").with_columns(pl.col("time_s").ceil().alias("sec"))
    per = ts.group_by("sec", "entity").agg(pl.col("value").mean())
    out = []
    for k in range(1, len(starts)):
        t0 = starts[k]
        t1 = starts[k + 1] if k + 1 < len(starts) else end
        active = [f"f{i}" for i in range(k + 1)]
        got = t1 - t0
        for sec in range(int(math.ceil(t0)) + 1, int(t1) + 1):
            row = per.filter(pl.col("sec") == sec)
            vals = dict(zip(row["entity"], row["value"]))
            xs = [float(vals.get(f, 0.0)) for f in active]
            if jain(xs) >= threshold:
                got = sec - t0
                break
        out.append(got)
    return out


def low_queue_claim(runs: RunSet, key: str, f: Callable[[Results], float], where: str, paper_text: str, fig: str) -> Comparison:
    """The claim that a scheme's mean queue is low: at most ``LOW_QUEUE`` of the buffer."""
    return claim(
        f"mean queue {where}, {SCHEMES[key].label}", Claim("at_most", LOW_QUEUE), runs.per_seed(key, f),
        paper=from_text(fig, paper_text), unit="fraction of the buffer", ours=runs.stat(key, f),
        text=f"a low queue: at most {LOW_QUEUE:.0%} of the buffer (the bound ours)",
    )


@register
class Staggered(UnoExperiment):
    name = "uno.staggered"
    title = "Convergence with staggered flows (Fig. 6)"
    source = "UNO paper (seed 001) §IV-B, Fig. 6 and the text beside it; §IV-A for the steady state"
    description = (
        "Five flows with RTTs 40, 50, 60, 70, 80 ms on 45 Mb/s, started 100 s apart (the quick "
        "form: 30 s apart). Convergence time of a join: seconds until Jain's index of the active "
        "flows' 1-second throughputs reaches the ``convergence_jain`` level (censored at the next "
        "join). The paper: \"UCP1 converges quicker than VCP to fair bandwidth allocation\"; "
        "\"our controller uses a greater AI coefficient which slightly increases the queue "
        "length\"; and, for every run from here on, \"high utilization, low persistent queue "
        "length, low packet drop rate\". Queue and drops over the last gap (all five flows)."
    )
    RTTS = (40.0, 50.0, 60.0, 70.0, 80.0)
    axes = AXES + (CONVERGENCE_JAIN,)

    def gap(self, quick: bool) -> float:
        return 30.0 if quick else 100.0

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        g = self.gap(quick)
        starts = [k * g for k in range(5)]
        configs = {s.key: (lambda seed, s=s: scenario(s, DYN_CAPACITY, self.RTTS, 5 * g, seed=seed, starts_s=starts, reading=reading)) for s in (VCP, UCP1)}
        return by_seed(configs, seeds)

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        g = self.gap(quick)
        return [
            paper("duration", f"{5 * g:g}s", f"§IV-B: flows 'introduced into the system with start times separated by 100 seconds' (the fifth runs one gap{'; the quick form: 30-s gaps' if quick else ''})"),
            paper("topology.links.rate", "45 Mb/s; access 450 Mb/s", "§IV-B: 'a single bottleneck link with a bandwidth of 45 Mbps'; access 10× C (ours)"),
            paper("topology.links.delay", "RTTs 40, 50, 60, 70, 80 ms", "§IV-B: '5 flows with RTTs in range [40 ms, 80 ms]' (evenly spaced, joining shortest first: ours)"),
            paper("flows.start", f"k·{g:g} s + U[0, {START_JITTER_S * 1e3:g} ms)", "§IV-B: start times 100 s apart (the per-seed offset ours)"),
        ]

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        g = self.gap(ctx.quick)
        level = float(ctx.reading.convergence_jain)
        starts = [k * g for k in range(5)]
        conv = lambda r: sum(convergence_s(r, starts, 5 * g, level)) / 4
        buf = buffer_pkts(DYN_CAPACITY, self.RTTS)
        queue = lambda r: mean_queue_fraction(r, 4 * g, 5 * g, buf)
        comps = [
            claim(
                "mean convergence time after a join: UCP1 vs VCP", Claim("less"), runs.per_seed("ucp1", conv), runs.per_seed("vcp", conv),
                paper=from_text("Fig. 6", "UCP1 converges quicker than VCP"), unit="s", text=f"UCP1 converges faster (Jain ≥ {level:g})", rival="vcp",
                ours=runs.stat("ucp1", conv), note=f"VCP {runs.stat('vcp', conv)}; censored at the next join ({g:g} s)",
            ),
            claim(
                "mean queue with five flows: UCP1 vs VCP", Claim("greater"), runs.per_seed("ucp1", queue), runs.per_seed("vcp", queue),
                paper=from_text("§IV-B", "a greater AI coefficient which slightly increases the queue length"), unit="fraction of the buffer", rival="vcp",
                text="UCP1's queue above VCP's", ours=runs.stat("ucp1", queue), note=f"VCP {runs.stat('vcp', queue)}; buffer {buf} packets",
            ),
            low_queue_claim(runs, "ucp1", queue, "with five flows", "low persistent queue length", "§IV-A"),
            low_queue_claim(runs, "vcp", queue, "with five flows", "low persistent queue length", "§IV-A"),
            claim(
                "bottleneck drops over arrivals, UCP1", Claim("at_most", NEGLIGIBLE_LOSS), runs.per_seed("ucp1", drop_fraction),
                paper=from_text("§IV-A", "low packet drop rate"), unit="fraction", ours=runs.stat("ucp1", drop_fraction),
                text=f"negligible loss: at most {NEGLIGIBLE_LOSS:.1%} of the arrivals dropped (the bound ours)", note=f"VCP {runs.stat('vcp', drop_fraction)}",
            ),
        ]
        rows = []
        for key in ("vcp", "ucp1"):
            per_join = [runs.stat(key, lambda r, k=k: convergence_s(r, starts, 5 * g, level)[k]) for k in range(4)]
            rows.append(
                {
                    "scheme": SCHEMES[key].label,
                    **{f"join {k + 2} (s)": str(per_join[k]) for k in range(4)},
                    "mean queue, 5 flows (pkts)": str(runs.stat(key, lambda r: queue(r) * buf)),
                    "drops": str(runs.stat(key, lambda r: float(r.port(PORT)["dropped_pkts"]))),
                }
            )
        ctx.table(pl.DataFrame(rows), caption=f"Seconds to Jain ≥ {level:g} after each join (mean [min – max] over seeds), the mean queue over the last gap and bottleneck drops")
        if ctx.draw:
            fig, axes = new_figure("Fig. 6: staggered flows (first seed)", "time (s)", "throughput (Mb/s)", size=(7.0, 5.0))
            fig.clf()
            for i, key in enumerate(("vcp", "ucp1")):
                ax = fig.add_subplot(2, 1, i + 1)
                r = runs[f"{key}-s{ctx.seeds[0]}"]
                ts = r.series("delivery_bps").with_columns(pl.col("time_s").ceil().alias("sec")).group_by("sec", "entity").agg(pl.col("value").mean()).sort("sec")
                for f in range(5):
                    d = ts.filter(pl.col("entity") == f"f{f}")
                    ax.plot(d["sec"], d["value"] / 1e6, lw=0.8, label=f"f{f} ({self.RTTS[f]:g} ms)")
                ax.set_title(SCHEMES[key].label, fontsize=9)
                ax.set_ylabel("Mb/s")
                if i == 0:
                    ax.legend(fontsize=7, ncol=5)
            ax.set_xlabel("time (s)")
            ctx.figure(fig, "fig6_staggered", "Per-flow throughput (1 s means), first seed.")
        return comps


def wire_use(r: Results, t0: float, t1: float, capacity_bps: float) -> float:
    """The link's use over (t0, t1] in wire bits: the TCP flows' payload delivery scaled to
    1000-byte packets (960 payload + 40 header bytes) plus the UDP flow's delivery (its
    1000-byte packets are counted whole), over C."""
    tcp = aggregate_bps(r, t0, t1) * PACKET_BYTES / MSS
    udp = aggregate_bps(r, t0, t1, ["udp"])
    return (tcp + udp) / capacity_bps


@register
class Udp(UnoExperiment):
    name = "uno.udp"
    title = "Competing with a UDP flow (Fig. 7)"
    source = "UNO paper (seed 001) §IV-B, Fig. 7 and the text beside it"
    description = (
        f"One bulk flow (RTT 80 ms, 45 Mb/s), 100 s (§IV-A: 'at least 100 s'); a {UDP_RATE / 1e6:g} Mb/s "
        f"UDP flow from {UDP_START_S:g} s to {UDP_STOP_S:g} s. The paper: UCP1 \"quickly adjusts its "
        "congestion window\"; \"once the UDP flow is gone, the MI phase rapidly brings the UCP1 flow "
        "to high utilization, with a low queue size\". Link use while the UDP flow runs is in wire "
        "bits (TCP payload scaled to 1000-byte packets, plus the UDP flow's packets) over C; "
        "adjustment time: from the UDP flow's start until the bottleneck queue (100 ms samples), "
        "having risen above 10 % of the buffer, stays at or below it for 1 s (∞ if that never "
        "happens before the UDP flow stops); recovery time: from the "
        "UDP flow's stop until the TCP flow's throughput (100 ms samples) first reaches 80 % of the "
        "capacity (∞ if never); after it, the last 50 s."
    )
    has_udp = True
    DURATION_S = 100.0
    AFTER_S = 50.0

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        udp = (UDP_RATE, UDP_START_S, UDP_STOP_S)
        configs = {s.key: (lambda seed, s=s: scenario(s, DYN_CAPACITY, [80.0], self.DURATION_S, seed=seed, udp=udp, reading=reading)) for s in (VCP, UCP1)}
        return by_seed(configs, seeds)

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        return [
            paper("duration", f"{self.DURATION_S:g}s", "§IV-A: 'for the remainder of the experiments we run for at least 100 s'"),
            assumption("topology.links.rate", "45 Mb/s; access 450 Mb/s", "Fig. 7's capacity is not given: Figs. 5–6's 45 Mb/s (access 10× C)"),
            assumption("topology.links.delay", "RTT 80 ms; the UDP source 1 ms from r1", "Fig. 7's RTT is not given: VCP's 80 ms"),
            paper("flows.start", f"TCP U[0, {START_JITTER_S * 1e3:g} ms); UDP {UDP_START_S:g} s", "§IV-B: 'after 20 s from the beginning of the experiment, we introduced a UDP flow' (the TCP offset ours)"),
            assumption("flows.cc", "ucp1; vcp", "§IV-B: Fig. 7's text is about UCP1; the VCP run beside it is ours (the table and our recovery comparison)"),
        ]

    @staticmethod
    def recovery_s(r: Results) -> float:
        """Seconds from the UDP flow's stop to the TCP flow's first 100 ms sample at
        HIGH_UTIL of the capacity; ∞ if none (the worst outcome counts against the claim)."""
        ts = r.series("delivery_bps", "f0").filter(pl.col("time_s") > UDP_STOP_S).sort("time_s")
        hit = ts.filter(pl.col("value") >= HIGH_UTIL * payload_capacity(DYN_CAPACITY))
        return float(hit["time_s"][0]) - UDP_STOP_S if hit.height else math.inf

    @staticmethod
    def adjust_s(r: Results) -> Any:
        """Seconds from the UDP flow's start until the bottleneck queue, once risen above
        LOW_QUEUE of the buffer, stays at or below it for DRAINED_FOR_S (100 ms samples): the
        TCP window cut to make room for the UDP flow. ∞ if that does not happen before the
        UDP flow stops; left out (with the reason) when the queue already stood above the
        level at the join, or the join built none."""
        low = LOW_QUEUE * buffer_pkts(DYN_CAPACITY, [80.0])
        q = r.series("queue_pkts", PORT).sort("time_s")
        before = q.filter(pl.col("time_s") <= UDP_START_S + 1e-9)
        if before.height and float(before["value"][-1]) > low:
            return Excluded(f"the queue stood above {LOW_QUEUE:.0%} of the buffer before the UDP flow joined")
        during = q.filter((pl.col("time_s") > UDP_START_S + 1e-9) & (pl.col("time_s") <= UDP_STOP_S + 1e-9))
        t, v = during["time_s"].to_list(), during["value"].to_list()
        rose = next((i for i, x in enumerate(v) if x > low), None)
        if rose is None:
            return Excluded(f"the UDP flow's join built no queue above {LOW_QUEUE:.0%} of the buffer")
        for i in range(rose + 1, len(v)):
            if v[i] > low:
                continue
            j = i
            while j < len(v) and v[j] <= low and t[j] - t[i] < DRAINED_FOR_S - 1e-9:
                j += 1
            if j < len(v) and v[j] <= low:
                return t[i] - UDP_START_S
        return math.inf

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        d, after = self.DURATION_S, self.DURATION_S - self.AFTER_S
        during = lambda r: wire_use(r, UDP_START_S + UDP_SETTLE_S, UDP_STOP_S, DYN_CAPACITY)
        util_after = lambda r: aggregate_bps(r, after, d) / payload_capacity(DYN_CAPACITY)
        buf = buffer_pkts(DYN_CAPACITY, [80.0])
        queue_after = lambda r: mean_queue_fraction(r, after, d, buf)
        comps = [
            claim(
                "link use while the UDP flow runs (TCP + UDP, wire bits), UCP1", Claim("at_least", UDP_LINK_USE), runs.per_seed("ucp1", during),
                paper=from_text("Fig. 7", "UCP1 performs well in the presence of UDP flows, and quickly adjusts its congestion window"), unit="fraction of C",
                text=f"the link stays ≥ {UDP_LINK_USE:.0%} used from {UDP_SETTLE_S:g} s after the UDP flow starts to its stop "
                f"(the UDP flow alone: {UDP_RATE / DYN_CAPACITY:.3f}; the bound and the {UDP_SETTLE_S:g} s ours)",
                ours=runs.stat("ucp1", during), note=f"VCP {runs.stat('vcp', during)}",
            ),
            claim(
                "adjustment to the UDP flow: the queue it builds drained, UCP1", Claim("at_most", RAPID_RECOVERY_S), runs.per_seed("ucp1", self.adjust_s),
                paper=from_text("Fig. 7", "quickly adjusts its congestion window"), unit="s", ours=runs.stat("ucp1", self.adjust_s),
                text=f"the bottleneck queue back at ≤ {LOW_QUEUE:.0%} of the buffer, for {DRAINED_FOR_S:g} s, within {RAPID_RECOVERY_S:g} s "
                "of the UDP flow's start ('quickly': ours, 25 load intervals)",
                note=f"VCP {runs.stat('vcp', self.adjust_s)}", fixed=UDP_ADJUST_FIXED,
            ),
            claim(
                "recovery to 80 % after the UDP flow leaves, UCP1", Claim("at_most", RAPID_RECOVERY_S), runs.per_seed("ucp1", self.recovery_s),
                paper=from_text("Fig. 7", "the MI phase rapidly brings the UCP1 flow to high utilization"), unit="s", ours=runs.stat("ucp1", self.recovery_s),
                text=f"back to {HIGH_UTIL:.0%} within {RAPID_RECOVERY_S:g} s ('rapidly': ours, 25 load intervals; a seed that never gets there: ∞)",
            ),
            claim(
                "utilisation after the UDP flow left, UCP1", Claim("at_least", HIGH_UTIL), runs.per_seed("ucp1", util_after),
                paper=from_text("Fig. 7", "high utilization"), unit="fraction", ours=runs.stat("ucp1", util_after),
                text=f"≥ {HIGH_UTIL:.0%} of the link over the last {self.AFTER_S:g} s (the bound ours)",
            ),
            low_queue_claim(runs, "ucp1", queue_after, f"over the last {self.AFTER_S:g} s", "with a low queue size", "Fig. 7"),
            claim(
                "recovery to 80 % after the UDP flow leaves: UCP1 vs VCP", Claim("less"), runs.per_seed("ucp1", self.recovery_s), runs.per_seed("vcp", self.recovery_s),
                paper="not in the paper (ours): Fig. 7's text speaks of UCP1 alone", unit="s", text="UCP1 recovers faster than VCP (our comparison)", rival="vcp",
                our_statement="Fig. 7's text speaks of UCP1's recovery alone; the comparison with VCP is ours",
                ours=runs.stat("ucp1", self.recovery_s), note=f"VCP {runs.stat('vcp', self.recovery_s)}",
            ),
        ]
        rows = [
            {
                "scheme": SCHEMES[k].label,
                "adjustment (s)": str(runs.stat(k, self.adjust_s)),
                "recovery (s)": str(runs.stat(k, self.recovery_s)),
                "link use during UDP (wire)": str(runs.stat(k, during)),
                f"utilisation, last {self.AFTER_S:g} s": str(runs.stat(k, util_after)),
                f"mean queue, last {self.AFTER_S:g} s (pkts)": str(runs.stat(k, lambda r: queue_after(r) * buf)),
                "drops": str(runs.stat(k, lambda r: float(r.port(PORT)["dropped_pkts"]))),
            }
            for k in ("vcp", "ucp1")
        ]
        ctx.table(pl.DataFrame(rows), caption=f"UDP experiment (mean [min – max] over seeds); buffer {buf} packets")
        if ctx.draw:
            fig, ax = new_figure("Fig. 7: a UDP flow joins and leaves (first seed)", "time (s)", "throughput (Mb/s)")
            for k in ("vcp", "ucp1"):
                dd = runs[f"{k}-s{ctx.seeds[0]}"].series("delivery_bps", "f0").sort("time_s")
                ax.plot(dd["time_s"], dd["value"] / 1e6, lw=0.8, color=SCHEMES[k].color, label=f"{SCHEMES[k].label} TCP")
            ax.axvspan(UDP_START_S, UDP_STOP_S, color="#ddd", alpha=0.5, label="UDP on")
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig7_udp", "The TCP flow's throughput (100 ms samples), first seed.")
        return comps


@register
class Fairness(UnoExperiment):
    name = "uno.fairness"
    title = "RTT fairness, 30 flows with RTTs 40–156 ms (Fig. 8)"
    source = "UNO paper (seed 001) §IV-C, Fig. 8 and the text beside it; §IV-A for the steady state"
    description = (
        "30 bulk flows, RTT 40 + 4k ms (k = 0…29), 45 Mb/s; shares over the second half of the run "
        "(100 s; quick: 60 s). The paper: UCP2 \"achieves a near-optimal distribution of bottleneck "
        "capacity among the flows\", better than VCP3 and UCP1 (\"that behaves similarly\"); VCP "
        "\"cannot achieve sufficient fairness even in the case of flows with small RTT variation\". "
        "Fairness is Jain's index of the flows' throughputs; a difference of Jain's index counts "
        f"from {JAIN_MIN_EFFECT:.0%} (relative). Queue and drops over the same half (§IV-A's steady state)."
    )
    axes = AXES + (T_RHO_RULE,)
    RTTS = tuple(40.0 + 4 * k for k in range(30))
    #: "Near-optimal" and "sufficient" fairness (ours: the paper gives no number).
    FAIR = 0.95

    def duration(self, quick: bool) -> float:
        return 60.0 if quick else 100.0

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        d = self.duration(quick)
        configs = {s.key: (lambda seed, s=s: scenario(s, DYN_CAPACITY, self.RTTS, d, seed=seed, reading=reading)) for s in (VCP, UCP1, UCP2, VCP3)}
        return by_seed(configs, seeds)

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        d = self.duration(quick)
        return [
            (assumption if quick else paper)("duration", f"{d:g}s", "the quick form: 60 s" if quick else "§IV-A: 'for the remainder of the experiments we run for at least 100 s'"),
            assumption("topology.links.rate", "45 Mb/s; access 450 Mb/s", "Fig. 8's capacity is not given: Figs. 5–6's 45 Mb/s (access 10× C)"),
            paper("topology.links.delay", "RTTs 40 + 4k ms, k = 0…29", "§IV-C: '30 FTP flows with RTTs ranging from 40 ms to 156 ms' (evenly spaced: ours)"),
        ]

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        d = self.duration(ctx.quick)
        half = d / 2
        fair = lambda r: jain(shares(r, half, d))
        buf = buffer_pkts(DYN_CAPACITY, self.RTTS)
        queue = lambda r: mean_queue_fraction(r, half, d, buf)
        util = lambda r: aggregate_bps(r, half, d) / payload_capacity(DYN_CAPACITY)
        ucp2 = runs.per_seed("ucp2", fair)
        comps = [
            claim(
                "Jain's index, UCP2", Claim("at_least", self.FAIR), ucp2, paper=from_text("Fig. 8", "near-optimal distribution"),
                text=f"UCP2 near-equal shares (Jain ≥ {self.FAIR:g}: ours)", ours=runs.stat("ucp2", fair),
            )
        ]
        for k in ("vcp3", "ucp1", "vcp"):
            comps.append(
                claim(
                    f"Jain's index: UCP2 vs {SCHEMES[k].label}", Claim("greater", min_effect=JAIN_MIN_EFFECT), ucp2, runs.per_seed(k, fair),
                    paper=from_text("Fig. 8", f"UCP2 fairer than {SCHEMES[k].label}"), text=f"UCP2 fairer than {SCHEMES[k].label} (by ≥ {JAIN_MIN_EFFECT:.0%})",
                    rival=k, family="Fig. 8: UCP2 fairer", ours=runs.stat("ucp2", fair), note=f"{SCHEMES[k].label} {runs.stat(k, fair)}",
                )
            )
        comps += [
            claim(
                "Jain's index, VCP", Claim("at_most", self.FAIR), runs.per_seed("vcp", fair),
                paper=from_text("§IV-C", "VCP cannot achieve sufficient fairness even in the case of flows with small RTT variation"),
                text=f"VCP's shares short of near-equal (Jain < {self.FAIR:g}: ours)", ours=runs.stat("vcp", fair),
            ),
            claim(
                "Jain's index: UCP1 vs VCP3", Claim("approx", within=JAIN_MIN_EFFECT), runs.per_seed("ucp1", fair), runs.per_seed("vcp3", fair),
                paper=from_text("§IV-C", "UCP1 behaves similarly [to VCP3]"), text=f"UCP1 ≈ VCP3 (±{JAIN_MIN_EFFECT:.0%})", rival="vcp3",
                ours=runs.stat("ucp1", fair), note=f"VCP3 {runs.stat('vcp3', fair)}",
            ),
            claim(
                "utilisation over the second half: UCP2 vs UCP1", Claim("approx", within=0.05), runs.per_seed("ucp2", util), runs.per_seed("ucp1", util),
                paper=from_text("abstract", "keeping all the good characteristics of the 1-bit protocol"), unit="fraction", text="UCP2's utilisation ≈ UCP1's (±5 %)",
                ours=runs.stat("ucp2", util), note=f"UCP1 {runs.stat('ucp1', util)}",
            ),
            low_queue_claim(runs, "ucp1", queue, "over the second half", "low persistent queue length", "§IV-A"),
            low_queue_claim(runs, "ucp2", queue, "over the second half", "low persistent queue length", "§IV-A"),
            claim(
                "bottleneck drops over arrivals, UCP2", Claim("at_most", NEGLIGIBLE_LOSS), runs.per_seed("ucp2", drop_fraction),
                paper=from_text("§IV-A", "low packet drop rate"), unit="fraction", ours=runs.stat("ucp2", drop_fraction),
                text=f"negligible loss: at most {NEGLIGIBLE_LOSS:.1%} of the arrivals dropped (the bound ours)", note=f"UCP1 {runs.stat('ucp1', drop_fraction)}",
            ),
        ]
        t_rho = lambda r: float(r.series("t_rho_s").filter(pl.col("time_s") > half)["value"].mean())
        rows = [
            {
                "scheme": SCHEMES[k].label,
                "Jain": str(runs.stat(k, fair)),
                "max/min share": str(runs.stat(k, lambda r: max(shares(r, half, d)) / max(min(shares(r, half, d)), 1.0))),
                "utilisation": str(runs.stat(k, util)),
                "router ρ": str(runs.stat(k, lambda r: mean_load(r, half, d))),
                "mean queue (pkts)": str(runs.stat(k, lambda r: queue(r) * buf)),
                "drops": str(runs.stat(k, lambda r: float(r.port(PORT)["dropped_pkts"]))),
                "senders' t_ρ (s)": str(runs.stat(k, t_rho)) if k != "vcp" else "0.2 (fixed)",
            }
            for k in ("vcp", "ucp1", "ucp2", "vcp3")
        ]
        ctx.table(pl.DataFrame(rows), caption=f"Fairness and the steady state over the second half (mean [min – max] over seeds); buffer {buf} packets")
        if ctx.draw:
            fig, ax = new_figure("Fig. 8: per-flow throughput vs RTT (mean over seeds)", "RTT (ms)", "throughput (Mb/s)")
            for k in ("vcp", "ucp1", "ucp2", "vcp3"):
                per = [runs.stat(k, lambda r, i=i: shares(r, half, d)[i] / 1e6) for i in range(len(self.RTTS))]
                ax.plot(self.RTTS, [p.mean for p in per], "o-", ms=3, lw=0.8, color=SCHEMES[k].color, label=SCHEMES[k].label)
            ax.axhline(payload_capacity(DYN_CAPACITY) / 30 / 1e6, color="#888", ls=":", lw=1, label="equal share")
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig8_fairness", "Each flow's throughput over the second half against its RTT; dotted: the equal share.")
        return comps


# ------------------------------------------------------------------ UNO meets legacy routers

MIX_CASES = ("legacy-ecn", "no-ecn", "shared")
#: The legacy router's RED, as a fraction of its BDP buffer (ours: no paper experiment).
MIX_RED = {"min_th": 0.1, "max_th": 0.3, "max_p": 0.1}
MIX_AXES = UCP_AXES + (NS2_NEWRENO,)


def legacy_scenario(case: str, flows: Sequence[str], duration_s: float, seed: int = 1, reading: Reading | None = None) -> Scenario:
    """s_k → r1 —100 Mb/s→ r2 —45 Mb/s→ r3 → d_k, RTT 80 ms. ``flows``: one controller per
    flow (``ucp1``, ``newreno+ecn``, ``newreno``). Cases: ``legacy-ecn``: a UNO router at r1
    (not congested), the 45 Mb/s hop a classic RED+ECN router; ``no-ecn``: no UNO router, the
    45 Mb/s hop DropTail; ``shared``: the 45 Mb/s hop is r1's, RED+ECN with UNO's marker."""
    rd = _rd(reading)
    rng = random.Random(seed)
    bdp = int(math.ceil(DYN_CAPACITY * 0.08 / (8 * PACKET_BYTES)))
    red = {"kind": "red", "limit": bdp, "min_th": MIX_RED["min_th"] * bdp, "max_th": MIX_RED["max_th"] * bdp, "max_p": MIX_RED["max_p"], "gentle": True, "ecn": True, "mean_pkt_size": PACKET_BYTES}
    fast, slow = "100Mbps", rate_text(DYN_CAPACITY)
    nodes = [{"name": n, "kind": "router"} for n in ("r1", "r2", "r3")]
    links: list[dict[str, Any]] = []
    for k in range(len(flows)):
        nodes += [{"name": f"s{k}", "kind": "host"}, {"name": f"d{k}", "kind": "host"}]
        links.append({"a": f"s{k}", "b": "r1", "rate": "1Gbps", "delay": "10ms"})
        links.append({"a": "r3", "b": f"d{k}", "rate": "1Gbps", "delay": "0ms"})
    back = {"kind": "droptail", "limit": 100_000}
    if case == "shared":
        links.append({"a": "r1", "b": "r2", "rate": slow, "delay": "20ms", "queue": red, "queue_ba": back})
        links.append({"a": "r2", "b": "r3", "rate": fast, "delay": "10ms", "queue": {"kind": "droptail", "limit": 1000}, "queue_ba": back})
    else:
        links.append({"a": "r1", "b": "r2", "rate": fast, "delay": "20ms", "queue": {"kind": "droptail", "limit": 1000}, "queue_ba": back})
        q = red if case == "legacy-ecn" else {"kind": "droptail", "limit": bdp}
        links.append({"a": "r2", "b": "r3", "rate": slow, "delay": "10ms", "queue": q, "queue_ba": back})
    ports = [] if case == "no-ecn" else [{"port": "r1->r2", "marker": {"kind": "uno", "stamp_rule": rd["stamp_rule"]}}]
    fl = []
    for k, f in enumerate(flows):
        cc, _, ecn = f.partition("+")
        spec: dict[str, Any] = {"name": f"f{k}", "src": f"s{k}", "dst": f"d{k}", "cc": cc, "start": f"{rng.uniform(0, START_JITTER_S):.9f}s"}
        if ecn:
            spec["ecn"] = ecn
        if cc == "ucp1":
            spec["cc_params"] = cc_params(UCP1, reading)
        else:
            spec["cc_params"] = newreno_params(rd["newreno"])
        fl.append(spec)
    data = {
        "name": f"UNO across legacy routers: {case}, {' + '.join(flows)}",
        "duration": f"{duration_s}s",
        "seed": seed,
        "topology": {"kind": "explicit", "nodes": nodes, "links": links},
        "ports": ports,
        "hosts": {"ip_id": rd["ip_id"]},
        "tcp": hosts_tcp(NS2_HOSTS, mss=MSS, rcv_buf=8 << 20),
        "measure": {"interval": SAMPLE, "sample_ports": [mix_bottleneck(case)], "sample_flows": True},
        "flows": fl,
    }
    return Scenario(data)


def mix_bottleneck(case: str) -> str:
    return "r1->r2" if case == "shared" else "r2->r3"


@register
class UnoLegacy(Experiment):
    name = "mix.uno-legacy"
    title = "UNO across legacy routers and beside classic ECN flows"
    source = "UNO paper (seed 001) §II-C (interoperability with ECN routers, argued) and §VI (its evaluation left to future work); no figure"
    description = (
        "Two UCP1 flows (RTT 80 ms) through 45 Mb/s: (1) behind a classic RED+ECN router, a "
        "lightly loaded UNO router upstream; (2) on a path with neither ECN nor UNO routers (DropTail); "
        "(3) sharing a RED+ECN bottleneck that also runs UNO's marker with two NewReno+ECN flows. The "
        "references are two NewReno+ECN flows (1, 3) and two NewReno flows without ECN (2). These are "
        "our expectations of a deployable scheme, not the paper's results: CE read as overload keeps "
        "UCP1 working behind a legacy router; with no UNO router UCP1 grows additively (α·rtt/t_ρ per "
        "RTT), decreases by β = 0.875 on CE and halves on a loss, as VCP's sender does — ours: the "
        "paper states no reaction of UCP1 to a loss or to CE from a legacy router; UCP1 and classic "
        "ECN flows coexist."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = MIX_AXES
    hosts = NS2_HOSTS

    def duration(self, quick: bool) -> float:
        return 30.0 if quick else 60.0

    def bottleneck(self, run_name: str) -> str | None:
        return mix_bottleneck(run_name.split("/")[0])

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        d = self.duration(quick)
        sets = {
            "legacy-ecn/ucp1": ("legacy-ecn", ["ucp1", "ucp1"]),
            "legacy-ecn/reference": ("legacy-ecn", ["newreno+ecn", "newreno+ecn"]),
            "no-ecn/ucp1": ("no-ecn", ["ucp1", "ucp1"]),
            "no-ecn/reference": ("no-ecn", ["newreno", "newreno"]),
            "shared/mixed": ("shared", ["ucp1", "ucp1", "newreno+ecn", "newreno+ecn"]),
        }
        configs = {k: (lambda seed, c=c, f=f: legacy_scenario(c, f, d, seed, reading)) for k, (c, f) in sets.items()}
        return by_seed(configs, seeds)

    def provenance(self, quick: bool, reading: Reading) -> list[Source]:
        v = _rd(reading)
        ours = "ours: no paper experiment (§II-C argues interoperability with ECN routers; §VI leaves its evaluation to future work)"
        own = [
            assumption("duration", f"{self.duration(quick):g}s", ours + "; shorter than §IV-A's 'at least 100 s' for steady state: the link use is read from 5 s, the ramp included"),
            assumption("topology.links.rate", "45 Mb/s bottleneck, 100 Mb/s and 1 Gb/s elsewhere", ours),
            assumption("topology.links.delay", "RTT 80 ms", ours),
            assumption("topology.nodes.*", "three routers, a host pair per flow", ours),
            assumption("topology.links.queue.kind", "red at the legacy hop (droptail without ECN), droptail elsewhere", ours),
            assumption("topology.links.queue.limit", "one BDP (450 packets) at the bottleneck, 1000 elsewhere", ours),
            assumption("topology.links.queue.min_th", f"{MIX_RED['min_th']:g}·BDP", ours + "; ns-2's automatic RED thresholds are the other choice"),
            assumption("topology.links.queue.max_th", f"{MIX_RED['max_th']:g}·BDP", ours),
            assumption("topology.links.queue.max_p", MIX_RED["max_p"], ours + " (ns-2's linterm_ 10)"),
            assumption("topology.links.queue.gentle", True, ours + " (ns-2's gentle_ true)"),
            assumption("topology.links.queue.ecn", True, "a classic ECN router marks CE"),
            assumption("topology.links.queue.mean_pkt_size", PACKET_BYTES, "1000-byte packets (§IV)"),
            default("topology.links.queue.*", "ecnlab's RED defaults", "the rest of the legacy router's RED: ecnlab's defaults (w_q, wait, byte mode)"),
            assumption("topology.links.queue_ba.*", "DropTail, 100 000 packets on the ACK paths", "ACKs are never dropped"),
            assumption("flows.cc", "ucp1, newreno", ours + ": UCP1 against NewReno with and without ECN"),
            assumption("flows.ecn", "uno (UCP1), ecn or none (NewReno)", ours),
            *newreno_sources(v["newreno"]),
            assumption("flows.start", f"U[0, {START_JITTER_S * 1e3:g} ms)", "a per-seed offset over one load interval (no figure gives a start)"),
            assumption("tcp.rcv_buf", "8 MiB", "a receive window that never limits (8 MiB ≫ the path's BDP, 450 kB)"),
            assumption("ports.*", "UNO's marker with its uno.* defaults at r1", ours),
            assumption("measure.*", "the bottleneck, 100 ms", "what the table reads"),
        ]
        have = {s.parameter for s in own}
        # UCP1's parameters keep the uno.* sources (§III); what they leave is NewReno's.
        rest = default("flows.cc_params.*", "NewReno's ecnlab defaults", "RFC 5681/6582 (byte counting: RFC 3465) as ecnlab implements them")
        return own + [s for s in common_sources(reading) if s.parameter not in have] + [rest]

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        d = self.duration(ctx.quick)
        cap = payload_capacity(DYN_CAPACITY)
        use = lambda r: aggregate_bps(r, 5.0, d) / cap
        drops = lambda case: (lambda r: float(r.port(mix_bottleneck(case))["dropped_pkts"]))
        ecn_share = lambda r: aggregate_bps(r, 5.0, d, ["f2", "f3"]) / max(aggregate_bps(r, 5.0, d), 1.0)
        mixed_fair = lambda r: jain(shares(r, 5.0, d))
        exp = "expected (not from the paper)"
        # No paper ran UNO beside legacy routers (§II-C argues it works; §VI leaves it to future work):
        # every claim here is our expectation, counted apart from any paper's headline.
        ours = "UNO's paper argues interoperability with legacy ECN routers (§II-C) and leaves its evaluation to future work (§VI): the expectation is ours"
        comps = [
            claim("UCP1 link use behind a legacy RED+ECN router", Claim("at_least", 0.8), runs.per_seed("legacy-ecn/ucp1", use), paper=exp, our_statement=ours, unit="fraction", text="CE read as overload keeps the link ≥ 80 % used", ours=runs.stat("legacy-ecn/ucp1", use)),
            claim(
                "drops behind a legacy RED+ECN router: UCP1 vs NewReno+ECN", Claim("less"), runs.per_seed("legacy-ecn/ucp1", drops("legacy-ecn")), runs.per_seed("legacy-ecn/reference", drops("legacy-ecn")),
                paper=exp, our_statement=ours, unit="packets", text="UCP1 loses fewer packets than classic ECN senders there", rival="newreno", ours=runs.stat("legacy-ecn/ucp1", drops("legacy-ecn")), note=f"NewReno+ECN {runs.stat('legacy-ecn/reference', drops('legacy-ecn'))}",
            ),
            claim(
                "link use without ECN or UNO routers: UCP1 vs NewReno", Claim("approx", within=0.1), runs.per_seed("no-ecn/ucp1", use), runs.per_seed("no-ecn/reference", use),
                paper=exp, our_statement=ours, unit="fraction", text="UCP1 behaves as AIMD (±10 % of NewReno's use)", rival="newreno", ours=runs.stat("no-ecn/ucp1", use), note=f"NewReno {runs.stat('no-ecn/reference', use)}",
            ),
            claim("Jain's index, 2 UCP1 + 2 NewReno+ECN on one RED+ECN+UNO bottleneck", Claim("at_least", 0.8), runs.per_seed("shared/mixed", mixed_fair), paper=exp, our_statement=ours, text="UCP1 and classic ECN flows coexist (Jain ≥ 0.8)", ours=runs.stat("shared/mixed", mixed_fair), note=f"ECN flows' share of the goodput {runs.stat('shared/mixed', ecn_share)}"),
        ]
        rows = []
        for k in runs.configs():
            case = k.split("/")[0]
            rows.append(
                {
                    "case / flows": k,
                    "link use": str(runs.stat(k, use)),
                    "drops": str(runs.stat(k, drops(case))),
                    "CE marks": str(runs.stat(k, lambda r, c=case: float(r.port(mix_bottleneck(c))["marked_ce"]))),
                    "mean queue (pkts)": str(runs.stat(k, lambda r, c=case: float(r.port(mix_bottleneck(c))["mean_queue_pkts"]))),
                    "RTOs": str(runs.stat(k, lambda r: float(sum(x or 0 for x in r.flows["rtos"].to_list())))),
                }
            )
        ctx.table(pl.DataFrame(rows), caption="UNO across legacy routers (mean [min – max] over seeds); link use from 5 s to the end")
        return comps
