"""HFCC — Jiang, Jin, Chen, "HFCC: An Adaptive Congestion Control Algorithm based on Explicit
Hybrid Feedbacks" (seed 003), §V: HFCC against VCP and TCP with ECN-RED on one bottleneck and
on a chain of seven:

    s_k —(10·C)— r1 —(C)— r2 —(10·C)— d_k          bottleneck ports ``r1->r2`` and ``r2->r1``

Experiments: ``hfcc.efficiency`` (Fig. 4a and Fig. 1's VCP ramp), ``hfcc.fairness`` (Fig. 4b
and Fig. 1's late join), ``hfcc.fct`` (Fig. 5), ``hfcc.buffer`` (Fig. 6), ``hfcc.demand``
(Fig. 7), ``hfcc.multibottleneck`` (Fig. 8).

The paper compares HFCC with VCP, MLCP and BMCC (the load-factor family) and with Reno, SACK,
CUBIC and CTCP over ECN-enabled RED; CTCP is optional and absent. MLCP and BMCC are built from
their papers' abstracts and what the HFCC and UNO papers say of them (the ``mlcp`` and
``bmcc`` module docs of the simulator list every assumption): claims against them test our
reconstruction as much as HFCC. The figures carry no values in the text: the comparisons check
the directions the text states and the numbers it gives (VCP's ~21 s ramp and ~225 s fairness
in Fig. 1; −40 % and −36 % average FCT against VCP and MLCP at 30000 packets).

Readings (each a constant here or a reading axis):

- Packets: 1000-byte data packets (``MSS`` 960 + 40 header bytes) and 40-byte ACKs (§V).
- Buffer: max(BDP, 2 packets per flow) at the bottleneck (§V), BDP at the flows' mean
  propagation RTT. HFCC's routers serve ACKs from a strict-priority band ahead of a DropTail
  data band of that size (§IV-C2); VCP's a DropTail queue; the TCPs' RED with ECN.
- RED for the TCP baselines ("default values of ns-2", which derives its thresholds from the
  link): min_th = 20 % and max_th = 60 % of the buffer, max_p 0.1, w_q 0.002, gentle, in
  packets (``RED``).
- TCP: an ACK per segment, initial window 2 (ns-2's), minimum RTO 0.2 s, a receive window
  that never limits; SACK only for "SACK". Reno is NewReno (ns-2's Reno agent differs in
  recovery from several losses, which ECN-RED makes rare).
- Randomness: each seed draws every flow's start offset uniformly in [0, 50 ms) and the
  random workloads; nothing else in these runs is random.
- MLCP and BMCC run over DropTail at the buffer above, as VCP; their routers mark both
  directions. Only HFCC's routers serve ACKs first (§IV-C2); the ``ack_priority`` axis gives
  every load-factor scheme that queue (``family``): under two-way traffic (Fig. 6) the rivals'
  ACKs queue behind reverse data, arrive in bursts, and the rebuilt MLCP and BMCC lose heavily
  over DropTail and nothing with the priority queue. MLCP's II phase is the ``mlcp_ii`` axis (``inverse``: an increase of
  1/cwnd per RTT, the reading of "inversely-proportional increase"; ``ai``: AI in its place).
- HFCC's readings (``hfcc`` module doc of the simulator states each): ``u_th`` axis (0.9
  default; 0.8 is Algorithm 1 as printed, 0.95), ``fair_share`` axis (``afd`` by eq. 4,
  ``mean`` of the flows' counts, ``sample_match``), ``t_p`` axis (``adaptive`` by eqs.
  11–12 at the routers and the same rule on the sender's RTT, or ``fixed`` 200 ms),
  ``ri_bandwidth`` axis (eq. 8's bandwidth term, or RI's multiplicative step alone: the term is
  TCP-Jersey's estimate of the rate ACKs return at, which ACK compression under two-way traffic
  inflates — it is not applied while recovering from a timeout).
- Parameters the paper does not give: Fig. 4's second flow starts at 50 s and runs 300 s
  (Fig. 1's setting; quick form 150 s); Fig. 5's arrival rate gives an offered load of 50 %
  (``FCT_LOAD``); Fig. 6 reports utilisation, mean queue and drops (the text names none); the
  multi-bottleneck RTTs are 360 ms end to end and 60 ms across one link (access delays 20 ms
  and 5 ms).
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
from .base import SIMULATOR_HOSTS, Comparison, Context, Experiment, Reading, ReadingAxis, RunSet, by_seed, claim, from_text, ms_text, rate_text
from .uno import aggregate_bps, jain, shares
from .verdict import Claim, Excluded

PORT = "r1->r2"
REVERSE = "r2->r1"
PACKET_BYTES = 1000
MSS = 960
MIN_RTO_S = 0.2
START_JITTER_S = 0.05
SAMPLE = "100ms"
CAPACITY = 150e6
RTT_MS = 80.0
WARMUP_S = 10.0
FCT_LOAD = 0.5


@dataclass(frozen=True)
class Scheme:
    key: str
    label: str
    cc: str
    color: str
    ecn: str | None = None
    sack: bool = False


HFCC = Scheme("hfcc", "HFCC", "hfcc", "#c0392b")
VCP = Scheme("vcp", "VCP", "vcp", "#5a9e4b")
RENO = Scheme("reno", "Reno+ECN-RED", "newreno", "#7f8c8d", ecn="ecn")
SACK = Scheme("sack", "SACK+ECN-RED", "newreno", "#34495e", ecn="ecn", sack=True)
CUBIC = Scheme("cubic", "CUBIC+ECN-RED", "cubic", "#d08c2c", ecn="ecn", sack=True)
MLCP = Scheme("mlcp", "MLCP", "mlcp", "#8e44ad")
BMCC = Scheme("bmcc", "BMCC", "bmcc", "#2980b9")
SCHEMES = {s.key: s for s in (HFCC, VCP, MLCP, BMCC, RENO, SACK, CUBIC)}
FAMILY = (HFCC, VCP, MLCP, BMCC)
ALL = (HFCC, VCP, MLCP, BMCC, RENO, SACK, CUBIC)
#: HFCC's rivals whose results the paper calls "similar" rather than worse (Fig. 6).
PEERS = (MLCP, BMCC)

AXES = (
    ReadingAxis("u_th", (0.9, 0.8, 0.95), "U_th is set 'dynamically' without a rule; 0.8 is Algorithm 1 as printed"),
    ReadingAxis("fair_share", ("afd", "mean", "sample_match"), "eq. 4's m_fair, the mean of the flows' counts (§IV-B2's implementation sentence), or sample-match"),
    ReadingAxis("t_p", ("adaptive", "fixed"), "t_p from the flows' RTT (eqs. 11–12) or VCP's fixed 200 ms"),
    ReadingAxis("ri_bandwidth", (True, False), "eq. 8's bandwidth term RTT_min·B_n/P_s in RI, or RI's multiplicative step alone"),
    ReadingAxis("mlcp_ii", ("inverse", "ai"), "MLCP's inversely-proportional increase as 1/cwnd per RTT, or AI in its place"),
    ReadingAxis("amd_freeze", ("rtt", "interval"), "the window frozen one RTT after AMD (§IV-C1), or one t_p as VCP freezes for one t_ρ: the router repeats its decrease code for a whole t_p"),
    ReadingAxis("ack_priority", ("hfcc", "family"), "ACKs served first at HFCC's routers only (§IV-C2), or at every load-factor scheme's routers"),
)

RED = {"max_p": 0.1, "w_q": 0.002, "gentle": True, "ecn": True, "mean_pkt_size": PACKET_BYTES}


def bottleneck_queue(scheme: Scheme, buffer: int, rd: Reading) -> dict[str, Any]:
    prio = scheme.key == "hfcc" or (rd.ack_priority == "family" and scheme in FAMILY)
    if prio:
        return {"kind": "prio", "ack": {"kind": "droptail", "limit": 100_000}, "data": {"kind": "droptail", "limit": buffer}}
    if scheme in FAMILY:
        return {"kind": "droptail", "limit": buffer}
    return {"kind": "red", "limit": buffer, "min_th": max(1.0, 0.2 * buffer), "max_th": max(3.0, 0.6 * buffer), **RED}


def marker(scheme: Scheme, rd: Reading) -> dict[str, Any] | None:
    if scheme.key == "hfcc":
        return {"kind": "hfcc", "u_th": float(rd.u_th), "fair_share": rd.fair_share, "adapt_t_p": rd.t_p == "adaptive"}
    if scheme.key in ("vcp", "mlcp", "bmcc"):
        return {"kind": scheme.key}
    return None


def cc_params(scheme: Scheme, rd: Reading) -> dict[str, Any] | None:
    if scheme.key == "hfcc":
        return {"t_p": rd.t_p, "ri_bandwidth": bool(rd.ri_bandwidth), "freeze": rd.amd_freeze}
    if scheme.key == "mlcp":
        return {"ii": rd.mlcp_ii == "inverse"}
    return None


def flow_spec(scheme: Scheme, rd: Reading, name: str, src: str, dst: str, start: float, *, stop: float | None = None, size: int | None = None) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name, "src": src, "dst": dst, "cc": scheme.cc, "start": f"{start:.9f}s"}
    if scheme.ecn:
        f["ecn"] = scheme.ecn
    if (p := cc_params(scheme, rd)) is not None:
        f["cc_params"] = p
    if scheme.sack:
        f["tcp"] = {"sack": True}
    if stop is not None:
        f["stop"] = f"{stop:.9f}s"
    if size is not None:
        f["size"] = size
    return f


def tcp_defaults(bdp_bytes: float) -> dict[str, Any]:
    return {
        **SIMULATOR_HOSTS,
        "mss": MSS,
        "initial_window": 2,
        "rcv_buf": int(max(8 * bdp_bytes, 1 << 20)),
        "delayed_ack": False,
        "sack": False,
        "timestamps": False,
        "min_rto_s": MIN_RTO_S,
        "rto_floor": "rfc6298",
    }


@dataclass
class Bulk:
    """A long-lived flow on the dumbbell: direction, start and stop."""

    start: float = 0.0
    stop: float | None = None
    reverse: bool = False


def dumbbell(
    scheme: Scheme,
    bulk: Sequence[Bulk],
    duration_s: float,
    *,
    seed: int,
    reading: Reading,
    capacity_bps: float = CAPACITY,
    rtt_ms: float = RTT_MS,
    buffer_bdp: float | None = None,
    workload: Mapping[str, Any] | None = None,
    sample_flows: bool = True,
    name: str = "",
) -> Scenario:
    """Bulk flows (forward or reverse) of ``scheme`` through one bottleneck, each on its own
    host pair; ``workload`` adds random flows from one more host pair. The buffer is
    max(BDP, 2 per flow), or ``buffer_bdp`` BDPs."""
    rng = random.Random(seed)
    n = len(bulk) + (int(workload.get("max_flows", 0)) if workload else 0)
    bottleneck_ms = rtt_ms / 4.0
    bdp_pkts = capacity_bps * rtt_ms / 1e3 / (8 * PACKET_BYTES)
    buffer = max(1, int(math.ceil(buffer_bdp * bdp_pkts))) if buffer_bdp else max(int(math.ceil(bdp_pkts)), 2 * n)
    access = rate_text(10 * capacity_bps)
    edge = ms_text(rtt_ms / 2.0 - bottleneck_ms)
    nodes = [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
    links: list[dict[str, Any]] = []
    flows: list[dict[str, Any]] = []
    pairs = len(bulk) + (1 if workload else 0)
    for k in range(pairs):
        nodes += [{"name": f"s{k}", "kind": "host"}, {"name": f"d{k}", "kind": "host"}]
        links.append({"a": f"s{k}", "b": "r1", "rate": access, "delay": edge})
        links.append({"a": "r2", "b": f"d{k}", "rate": access, "delay": "0ms"})
    q = bottleneck_queue(scheme, buffer, reading)
    links.append({"a": "r1", "b": "r2", "rate": rate_text(capacity_bps), "delay": ms_text(bottleneck_ms), "queue": q, "queue_ba": q})
    for k, b in enumerate(bulk):
        src, dst = (f"d{k}", f"s{k}") if b.reverse else (f"s{k}", f"d{k}")
        start = b.start + rng.uniform(0.0, START_JITTER_S)
        flows.append(flow_spec(scheme, reading, f"{'r' if b.reverse else 'f'}{k}", src, dst, start, stop=b.stop))
    mk = marker(scheme, reading)
    ports = [{"port": p, "marker": mk} for p in (PORT, REVERSE)] if mk else []
    data: dict[str, Any] = {
        "name": name or f"HFCC experiments: {scheme.label}, {capacity_bps / 1e6:g} Mb/s",
        "duration": f"{duration_s}s",
        "seed": seed,
        "topology": {"kind": "explicit", "nodes": nodes, "links": links},
        "ports": ports,
        "tcp": tcp_defaults(capacity_bps * rtt_ms / 1e3 / 8),
        "measure": {"interval": SAMPLE, "sample_ports": [PORT, REVERSE], "sample_flows": sample_flows},
        "flows": flows,
    }
    if workload:
        w = dict(workload)
        k = len(bulk)
        w.update({"src": [f"s{k}"], "dst": [f"d{k}"], "cc": scheme.cc})
        if scheme.ecn:
            w["ecn"] = scheme.ecn
        if (p := cc_params(scheme, reading)) is not None:
            w["cc_params"] = p
        if scheme.sack:
            w["tcp"] = {"sack": True}
        data["workloads"] = [w]
    return Scenario(data)


# ------------------------------------------------------------------------- metrics


def payload_capacity(capacity_bps: float = CAPACITY) -> float:
    return capacity_bps * MSS / PACKET_BYTES


def utilization_series(r: Results, flows: Sequence[str] | None = None, capacity_bps: float = CAPACITY) -> pl.DataFrame:
    """Per 1-second bin (``sec`` = the bin's end), the payload utilisation of ``flows``."""
    ts = r.series("delivery_bps").with_columns(pl.col("time_s").ceil().alias("sec"))
    if flows is not None:
        ts = ts.filter(pl.col("entity").is_in(list(flows)))
    per = ts.group_by("sec", "time_s").agg(pl.col("value").sum()).group_by("sec").agg(pl.col("value").mean())
    return per.sort("sec").with_columns((pl.col("value") / payload_capacity(capacity_bps)).alias("util"))


def time_to_utilization(r: Results, level: float, after: float = 0.0, flows: Sequence[str] | None = None, capacity_bps: float = CAPACITY) -> Any:
    u = utilization_series(r, flows, capacity_bps).filter((pl.col("sec") > after) & (pl.col("util") >= level))
    if u.height == 0:
        return Excluded(f"never reached {level:.0%} of the link")
    return float(u["sec"][0]) - after


def fair_after(r: Results, t0: float, end: float, threshold: float) -> float:
    """Seconds after ``t0`` until Jain's index of the flows' 1-second throughputs first
    reaches ``threshold`` (censored at ``end``)."""
    ts = r.series("delivery_bps").with_columns(pl.col("time_s").ceil().alias("sec"))
    per = ts.group_by("sec", "entity").agg(pl.col("value").mean())
    names = [n for n, t in zip(r.flows["name"], r.flows["transport"]) if t == "tcp"]
    for sec in range(int(math.ceil(t0)) + 1, int(end) + 1):
        row = per.filter(pl.col("sec") == sec)
        vals = dict(zip(row["entity"], row["value"]))
        if jain([float(vals.get(f, 0.0)) for f in names]) >= threshold:
            return sec - t0
    return end - t0


def mean_utilization(r: Results, t0: float, t1: float) -> float:
    return aggregate_bps(r, t0, t1) / payload_capacity()


def mean_queue(r: Results, port: str, t0: float, t1: float) -> float:
    q = r.series("queue_pkts", port).filter((pl.col("time_s") > t0) & (pl.col("time_s") <= t1))["value"]
    return float(q.mean()) if len(q) else math.nan


def drops(r: Results, port: str = PORT) -> float:
    return float(r.port(port)["dropped_pkts"])


SETUP_NOTE = (
    "Setup (module ecnlab.experiments.hfcc states every reading): one bottleneck r1⇄r2 of 150 Mb/s "
    "and 80 ms round-trip propagation delay unless stated, buffer max(BDP, 2 packets per flow), "
    "1000-byte data and 40-byte ACK packets, an ACK per segment, initial window 2, flows start at a "
    "per-seed offset in [0, 50 ms). HFCC's routers serve ACKs first; VCP's, MLCP's and BMCC's are "
    "DropTail; the TCPs run over RED with ECN. MLCP and BMCC are rebuilt from their abstracts and the "
    "HFCC and UNO papers' descriptions (assumptions in the simulator's mlcp and bmcc modules): claims "
    "against them test that reconstruction too."
)


def _reading_note(ctx: Context) -> None:
    ctx.note(SETUP_NOTE)


# ------------------------------------------------------------------------ experiments


@register
class Efficiency(Experiment):
    name = "hfcc.efficiency"
    title = "Convergence to efficiency: two flows, the first 40 s (Fig. 4a, Fig. 1)"
    source = "HFCC paper (seed 003) §III Fig. 1 and §V-A1, Fig. 4(a) and the text beside them"
    description = (
        "Two long-lived flows from t ≈ 0 on 150 Mb/s, 80 ms; seconds until the 1-second utilisation "
        "first reaches 80 % (the end of the low-load region, where VCP and HFCC stop multiplying). The paper: HFCC's convergence to efficiency \"is close to that of MLCP and "
        "BMCC and faster than that of VCP\". Fig. 1: one VCP flow on 100 Mb/s, 80 ms needs \"21 s or so "
        "to achieve the high link utilization\" (here: until 90 % of the link)."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    DURATION_S = 40.0

    def bottleneck(self, run_name: str) -> str | None:
        return None  # the ramp itself is the measurement

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        two = [Bulk(), Bulk()]
        configs: dict[str, Callable[[int], Scenario]] = {
            s.key: (lambda seed, s=s: dumbbell(s, two, self.DURATION_S, seed=seed, reading=reading)) for s in FAMILY
        }
        configs["vcp-fig1"] = lambda seed: dumbbell(VCP, [Bulk()], self.DURATION_S, seed=seed, reading=reading, capacity_bps=100e6)
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        _reading_note(ctx)
        t80 = lambda r: time_to_utilization(r, 0.8)
        fig1 = lambda r: time_to_utilization(r, 0.8, capacity_bps=100e6)
        comps = [
            claim(
                "seconds to 80 % utilisation: HFCC vs VCP", Claim("less"), runs.per_seed("hfcc", t80), runs.per_seed("vcp", t80),
                paper=from_text("Fig. 4a", "HFCC faster than VCP"), unit="s", text="HFCC reaches 80 % sooner",
                ours=runs.stat("hfcc", t80), note=f"VCP {runs.stat('vcp', t80)}",
            ),
            *(
                claim(
                    f"seconds to 80 % utilisation: HFCC vs {s.label}", Claim("approx", within=0.5), runs.per_seed("hfcc", t80), runs.per_seed(s.key, t80),
                    paper=from_text("Fig. 4a", f"HFCC close to {s.label}"), unit="s", text=f"close to {s.label} (ratio within ±50 %)",
                    ours=runs.stat("hfcc", t80), note=f"{s.label} {runs.stat(s.key, t80)}",
                )
                for s in PEERS
            ),
            claim(
                "seconds to 80 % utilisation, one VCP flow at 100 Mb/s", Claim("matches", 21.0, 0.25), runs.per_seed("vcp-fig1", fig1),
                paper=21.0, unit="s", text="about 21 s (±25 %)", ours=runs.stat("vcp-fig1", fig1),
            ),
        ]
        rows = []
        for k, cap in [(s.key, CAPACITY) for s in FAMILY] + [("vcp-fig1", 100e6)]:
            rows.append(
                {
                    "run": k,
                    "to 80 % (s)": str(runs.stat(k, lambda r, cap=cap: time_to_utilization(r, 0.8, capacity_bps=cap))),
                    "to 90 % (s)": str(runs.stat(k, lambda r, cap=cap: time_to_utilization(r, 0.9, capacity_bps=cap))),
                    "utilisation 10–40 s": str(runs.stat(k, lambda r, cap=cap: aggregate_bps(r, WARMUP_S, self.DURATION_S) / payload_capacity(cap))),
                    "drops": str(runs.stat(k, drops)),
                }
            )
        ctx.table(pl.DataFrame(rows), caption="Ramp to efficiency (mean [min – max] over seeds)")
        if ctx.draw:
            fig, ax = new_figure("Fig. 4a: utilisation, two flows (first seed)", "time (s)", "utilisation")
            for s in FAMILY:
                u = utilization_series(runs[f"{s.key}-s{ctx.seeds[0]}"])
                ax.plot(u["sec"], u["util"], color=s.color, label=s.label)
            ax.axhline(0.8, color="#888", ls=":", lw=1)
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig4a_efficiency", "Payload utilisation in 1 s bins, first seed; dotted: 80 %.")
        return comps


@register
class Fairness(Experiment):
    name = "hfcc.fairness"
    title = "Convergence to fairness: a second flow at 50 s (Fig. 4b, Fig. 1)"
    source = "HFCC paper (seed 003) §III Fig. 1 and §V-A1, Fig. 4(b) and the text beside them"
    description = (
        "One flow from t ≈ 0, a second from 50 s, 150 Mb/s, 80 ms; seconds after the join until Jain's "
        "index of the two flows' 1-second throughputs first reaches 0.95. The paper: \"HFCC has the "
        "faster convergence of intra-flow fairness than other protocols\" and \"the inversely-proportional "
        "increase of MLCP makes it become the worst one\"; Fig. 1 (100 Mb/s): the two VCP "
        "flows \"get intra-flows fairness\" only \"until 225s or so\" (175 s after the join)."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    JOIN_S = 50.0

    def duration(self, quick: bool) -> float:
        return 150.0 if quick else 300.0

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        d = self.duration(quick)
        flows = [Bulk(), Bulk(start=self.JOIN_S)]
        configs = {s.key: (lambda seed, s=s: dumbbell(s, flows, d, seed=seed, reading=reading)) for s in FAMILY}
        # Fig. 1's late join is at 100 Mb/s.
        configs["vcp-fig1"] = lambda seed: dumbbell(VCP, flows, d, seed=seed, reading=reading, capacity_bps=100e6)
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        _reading_note(ctx)
        d = self.duration(ctx.quick)
        conv = lambda r: fair_after(r, self.JOIN_S, d, 0.95)
        comps = [
            claim(
                "seconds to Jain ≥ 0.95 after the join: HFCC vs VCP", Claim("less"), runs.per_seed("hfcc", conv), runs.per_seed("vcp", conv),
                paper=from_text("Fig. 4b", "HFCC converges to fairness faster than VCP"), unit="s", text="HFCC fair sooner",
                ours=runs.stat("hfcc", conv), note=f"VCP {runs.stat('vcp', conv)}; censored at {d - self.JOIN_S:g} s",
            ),
            *(
                claim(
                    f"seconds to Jain ≥ 0.95 after the join: HFCC vs {s.label}", Claim("less"), runs.per_seed("hfcc", conv), runs.per_seed(s.key, conv),
                    paper=from_text("Fig. 4b", f"HFCC converges to fairness faster than {s.label}"), unit="s", text="HFCC fair sooner",
                    ours=runs.stat("hfcc", conv), note=f"{s.label} {runs.stat(s.key, conv)}; censored at {d - self.JOIN_S:g} s",
                )
                for s in PEERS
            ),
            *(
                claim(
                    f"seconds to Jain ≥ 0.95 after the join: MLCP vs {s.label}", Claim("greater"), runs.per_seed("mlcp", conv), runs.per_seed(s.key, conv),
                    paper=from_text("Fig. 4b", "MLCP is the worst"), unit="s", text=f"MLCP fair later than {s.label}",
                    ours=runs.stat("mlcp", conv), note=f"{s.label} {runs.stat(s.key, conv)}; censored at {d - self.JOIN_S:g} s",
                )
                for s in (VCP, BMCC)
            ),
        ]
        if not ctx.quick:
            comps.append(
                claim(
                    "seconds to Jain ≥ 0.95 after the join, one VCP pair at 100 Mb/s", Claim("matches", 175.0, 0.3), runs.per_seed("vcp-fig1", conv),
                    paper=175.0, unit="s", text="fair at about 225 s, 175 s after the join (±30 %)", ours=runs.stat("vcp-fig1", conv),
                    note=f"censored at {d - self.JOIN_S:g} s",
                )
            )
        rows = [
            {
                "run": k,
                "to Jain ≥ 0.95 (s)": str(runs.stat(k, conv)),
                "Jain, last 50 s": str(runs.stat(k, lambda r: jain(shares(r, d - 50, d)))),
                "utilisation after the join": str(runs.stat(k, lambda r, k=k: aggregate_bps(r, self.JOIN_S, d) / payload_capacity(100e6 if k == "vcp-fig1" else CAPACITY))),
                "drops": str(runs.stat(k, drops)),
            }
            for k in [s.key for s in FAMILY] + ["vcp-fig1"]
        ]
        ctx.table(pl.DataFrame(rows), caption="Convergence to fairness (mean [min – max] over seeds; vcp-fig1: 100 Mb/s)")
        if ctx.draw:
            fig, ax = new_figure("Fig. 4b: throughputs (first seed)", "time (s)", "throughput (Mb/s)")
            for s in FAMILY:
                ts = runs[f"{s.key}-s{ctx.seeds[0]}"].series("delivery_bps").with_columns(pl.col("time_s").ceil().alias("sec"))
                per = ts.group_by("sec", "entity").agg(pl.col("value").mean()).sort("sec")
                for f, ls in (("f0", "-"), ("f1", "--")):
                    p = per.filter(pl.col("entity") == f)
                    ax.plot(p["sec"], p["value"] / 1e6, color=s.color, ls=ls, lw=0.8, label=f"{s.label} {f}")
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig4b_fairness", "Each flow's throughput in 1 s bins, first seed.")
        return comps


@register
class Fct(Experiment):
    name = "hfcc.fct"
    title = "Average flow completion time vs mean flow size (Fig. 5)"
    source = "HFCC paper (seed 003) §V-A2, Fig. 5 and the text beside it"
    description = (
        "100 flows with Pareto sizes (shape 1.2, mean 30 … 30000 packets of 1000 B) arriving as a "
        f"Poisson process at an offered load of {FCT_LOAD:.0%} of 150 Mb/s, 80 ms. The paper: HFCC has the "
        "minimal average FCT among the load-factor protocols (Fig. 5 compares only those; the TCPs are in the table for reference); \"compared with VCP and MLCP, the average FCT is reduced by 40% and 36% "
        "respectively when the flow size is 30000 packets\"."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    QUICK = (30, 3000, 30000)
    FULL = (30, 100, 300, 1000, 3000, 10000, 30000)
    FLOWS = 100

    def bottleneck(self, run_name: str) -> str | None:
        return None  # finite flows: the link idles between them

    def means(self, quick: bool) -> tuple[int, ...]:
        return self.QUICK if quick else self.FULL

    @staticmethod
    def cfg(key: str, mean: int) -> str:
        return f"{key}-{mean}pkts"

    def duration(self, mean: int) -> float:
        rate = FCT_LOAD * CAPACITY / (mean * MSS * 8)
        return max(60.0, 1.5 * self.FLOWS / rate + 30.0)

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        configs: dict[str, Callable[[int], Scenario]] = {}
        for m in self.means(quick):
            w = {
                "name": "pareto",
                "arrival_rate": FCT_LOAD * CAPACITY / (m * MSS * 8),
                "sizes": {"dist": "pareto", "mean": m * MSS, "shape": 1.2},
                "max_flows": self.FLOWS,
                "start": "0s",
            }
            for s in ALL:
                configs[self.cfg(s.key, m)] = lambda seed, s=s, w=w, m=m: dumbbell(
                    s, [], self.duration(m), seed=seed, reading=reading, workload=w, sample_flows=False
                )
        return by_seed(configs, seeds)

    @staticmethod
    def mean_fct(r: Results) -> Any:
        f = r.flows.filter(pl.col("transport") == "tcp")
        done = f["fct_s"].drop_nulls()
        if done.len() < f.height:
            return Excluded(f"{f.height - done.len()} of {f.height} flows unfinished")
        return float(done.mean())

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        _reading_note(ctx)
        means = self.means(ctx.quick)
        comps: list[Comparison] = []
        rows = []
        for m in means:
            a = runs.per_seed(self.cfg("hfcc", m), self.mean_fct)
            for s in FAMILY[1:]:
                comps.append(
                    claim(
                        f"average FCT, mean {m} packets: HFCC vs {s.label}", Claim("less"), a, runs.per_seed(self.cfg(s.key, m), self.mean_fct),
                        paper=from_text("Fig. 5", "HFCC has the minimal average FCT"), unit="s", text=f"HFCC below {s.label}",
                        ours=runs.stat(self.cfg("hfcc", m), self.mean_fct), note=f"{s.label} {runs.stat(self.cfg(s.key, m), self.mean_fct)}",
                    )
                )
            rows.append({"mean size (pkts)": m, **{s.label: str(runs.stat(self.cfg(s.key, m), self.mean_fct)) for s in ALL}})
        top = max(means)
        comps.append(
            claim(
                f"average FCT HFCC / VCP, mean {top} packets", Claim("ratio", 0.6, within=0.25),
                runs.per_seed(self.cfg("hfcc", top), self.mean_fct), runs.per_seed(self.cfg("vcp", top), self.mean_fct),
                paper=0.6, unit="ratio", text="−40 % (ratio 0.6 ± 25 %)", ours=runs.stat(self.cfg("hfcc", top), self.mean_fct),
            )
        )
        comps.append(
            claim(
                f"average FCT HFCC / MLCP, mean {top} packets", Claim("ratio", 0.64, within=0.25),
                runs.per_seed(self.cfg("hfcc", top), self.mean_fct), runs.per_seed(self.cfg("mlcp", top), self.mean_fct),
                paper=0.64, unit="ratio", text="−36 % (ratio 0.64 ± 25 %)", ours=runs.stat(self.cfg("hfcc", top), self.mean_fct),
            )
        )
        ctx.table(pl.DataFrame(rows), caption="Average FCT in seconds (mean [min – max] over seeds)")
        if ctx.draw:
            fig, ax = new_figure("Fig. 5: average FCT", "mean flow size (packets)", "average FCT (s)")
            ax.set_xscale("log")
            ax.set_yscale("log")
            for s in ALL:
                st = [runs.stat(self.cfg(s.key, m), self.mean_fct) for m in means]
                errorbar_with_spread(ax, list(means), st, label=s.label, color=s.color)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig5_fct", "Average FCT of the 100 flows; mean with min–max over seeds.")
        return comps


@register
class Buffer(Experiment):
    name = "hfcc.buffer"
    title = "Buffer size from 0.2 to 2.0 BDP, 10 + 10 FTP flows (Fig. 6)"
    source = "HFCC paper (seed 003) §V-A3, Fig. 6 and the text beside it"
    description = (
        "Ten forward and ten reverse long-lived flows on 150 Mb/s, 80 ms; the bottleneck buffer from "
        "0.2 to 2.0 BDP. Utilisation, mean queue and drops at the forward port after 10 s. The paper: "
        "\"the performance of HFCC is similar to that of MLCP and BMCC and better than that of VCP and "
        "other TCPs\" (the figure's metrics are not named in the text: we compare utilisation and drops)."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    QUICK = (0.2, 1.0, 2.0)
    FULL = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

    def duration(self, quick: bool) -> float:
        return 60.0 if quick else 200.0

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def sizes(self, quick: bool) -> tuple[float, ...]:
        return self.QUICK if quick else self.FULL

    @staticmethod
    def cfg(key: str, b: float) -> str:
        return f"{key}-{b:g}bdp"

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        d = self.duration(quick)
        flows = [Bulk() for _ in range(10)] + [Bulk(reverse=True) for _ in range(10)]
        configs = {
            self.cfg(s.key, b): (lambda seed, s=s, b=b: dumbbell(s, flows, d, seed=seed, reading=reading, buffer_bdp=b))
            for b in self.sizes(quick)
            for s in ALL
        }
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        _reading_note(ctx)
        d = self.duration(ctx.quick)
        fwd = [f"f{k}" for k in range(10)]
        util = lambda r: aggregate_bps(r, WARMUP_S, d, fwd) / payload_capacity()
        comps: list[Comparison] = []
        rows = []
        for b in self.sizes(ctx.quick):
            a = runs.per_seed(self.cfg("hfcc", b), util)
            for s in ALL[1:]:
                similar = s in PEERS
                comps.append(
                    claim(
                        f"forward utilisation, {b:g} BDP: HFCC vs {s.label}",
                        Claim("approx", within=0.05) if similar else Claim("greater"),
                        a, runs.per_seed(self.cfg(s.key, b), util),
                        paper=from_text("Fig. 6", f"HFCC {'similar to' if similar else 'better than'} {s.label}"), unit="fraction",
                        text=f"HFCC within ±5 % of {s.label}" if similar else f"HFCC above {s.label}",
                        ours=runs.stat(self.cfg("hfcc", b), util), note=f"{s.label} {runs.stat(self.cfg(s.key, b), util)}",
                    )
                )
            for s in ALL:
                rows.append(
                    {
                        "buffer (BDP)": b,
                        "scheme": s.label,
                        "utilisation": str(runs.stat(self.cfg(s.key, b), util)),
                        "mean queue (pkts)": str(runs.stat(self.cfg(s.key, b), lambda r: mean_queue(r, PORT, WARMUP_S, d))),
                        "drops": str(runs.stat(self.cfg(s.key, b), drops)),
                    }
                )
        ctx.table(pl.DataFrame(rows), caption="Forward bottleneck after 10 s (mean [min – max] over seeds)")
        if ctx.draw:
            fig, ax = new_figure("Fig. 6: utilisation vs buffer", "buffer (BDP)", "forward utilisation")
            xs = list(self.sizes(ctx.quick))
            for s in ALL:
                errorbar_with_spread(ax, xs, [runs.stat(self.cfg(s.key, b), util) for b in xs], label=s.label, color=s.color)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig6_buffer", "Forward payload utilisation after 10 s; mean with min–max over seeds.")
        return comps


@register
class Demand(Experiment):
    name = "hfcc.demand"
    title = "Sudden demand changes: 5 flows, 100 more from 100 to 200 s (Fig. 7)"
    source = "HFCC paper (seed 003) §V-A4, Fig. 7 and the text beside it"
    description = (
        "Five long-lived flows from 0.1 s to 300 s and 100 more from 100 s to 200 s, 150 Mb/s, 80 ms "
        "(quick form: 0.1–90 s and 30–60 s). The paper: HFCC \"can adjust cwnd agilely and ensure the high "
        "utilization of bottleneck link when the burstiness occurs\". Utilisation in each phase; seconds "
        "after the 100 flows leave until the 1-second utilisation is back at 90 %."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES

    def times(self, quick: bool) -> tuple[float, float, float]:
        return (30.0, 60.0, 90.0) if quick else (100.0, 200.0, 300.0)

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        join, leave, end = self.times(quick)
        flows = [Bulk(start=0.1, stop=end) for _ in range(5)] + [Bulk(start=join, stop=leave) for _ in range(100)]
        configs = {s.key: (lambda seed, s=s: dumbbell(s, flows, end, seed=seed, reading=reading)) for s in ALL}
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        _reading_note(ctx)
        join, leave, end = self.times(ctx.quick)
        during = lambda r: mean_utilization(r, join + 5, leave)
        after = lambda r: time_to_utilization(r, 0.9, after=leave)
        comps = [
            claim(
                "utilisation with 105 flows, HFCC", Claim("at_least", 0.9), runs.per_seed("hfcc", during),
                paper=from_text("Fig. 7", "high utilisation when the burst arrives"), unit="fraction", text="≥ 90 % from 5 s after the join",
                ours=runs.stat("hfcc", during),
            ),
            claim(
                "seconds back to 90 % after the 100 flows leave: HFCC vs VCP", Claim("less"), runs.per_seed("hfcc", after), runs.per_seed("vcp", after),
                paper=from_text("Fig. 7", "HFCC adjusts agilely"), unit="s", text="HFCC recovers sooner than VCP",
                ours=runs.stat("hfcc", after), note=f"VCP {runs.stat('vcp', after)}",
            ),
        ]
        rows = [
            {
                "scheme": s.label,
                "utilisation 10 s–join": str(runs.stat(s.key, lambda r: mean_utilization(r, WARMUP_S, join))),
                "with 105 flows": str(runs.stat(s.key, during)),
                "back to 90 % (s)": str(runs.stat(s.key, after)),
                "mean queue with 105 (pkts)": str(runs.stat(s.key, lambda r: mean_queue(r, PORT, join, leave))),
                "drops": str(runs.stat(s.key, drops)),
            }
            for s in ALL
        ]
        ctx.table(pl.DataFrame(rows), caption="Sudden demand changes (mean [min – max] over seeds)")
        if ctx.draw:
            fig, ax = new_figure("Fig. 7: utilisation (first seed)", "time (s)", "utilisation")
            for s in ALL:
                u = utilization_series(runs[f"{s.key}-s{ctx.seeds[0]}"])
                ax.plot(u["sec"], u["util"], color=s.color, lw=0.8, label=s.label)
            ax.axvspan(join, leave, color="#ddd", alpha=0.5)
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig7_demand", "Payload utilisation in 1 s bins, first seed; grey: 100 more flows.")
        return comps


def chain(scheme: Scheme, duration_s: float, *, seed: int, reading: Reading, links: int = 7, capacity_bps: float = CAPACITY) -> Scenario:
    """Routers r0 … r7 joined by 7 links of 150 Mb/s / 20 ms; 5 long flows each way across all
    of them (access 20 ms: RTT 360 ms) and 5 cross flows per link (access 5 ms: RTT 60 ms)."""
    rng = random.Random(seed)
    access = rate_text(10 * capacity_bps)
    nodes = [{"name": f"r{i}", "kind": "router"} for i in range(links + 1)]
    topo: list[dict[str, Any]] = []
    n_long, n_cross = 10, 5 * links
    bdp_long = capacity_bps * 0.36 / (8 * PACKET_BYTES)
    flows: list[dict[str, Any]] = []
    for i in range(links):
        n_here = n_long + 5
        buffer = max(int(math.ceil(bdp_long)), 2 * n_here)
        q = bottleneck_queue(scheme, buffer, reading)
        topo.append({"a": f"r{i}", "b": f"r{i + 1}", "rate": rate_text(capacity_bps), "delay": "20ms", "queue": q, "queue_ba": q})
    for k in range(5):
        for side, (a, b) in (("f", ("L", "R")), ("r", ("R", "L"))):
            src, dst = f"{side}{k}{a}", f"{side}{k}{b}"
            nodes += [{"name": src, "kind": "host"}, {"name": dst, "kind": "host"}]
            for h, r in ((src, "r0" if a == "L" else f"r{links}"), (dst, f"r{links}" if b == "R" else "r0")):
                topo.append({"a": h, "b": r, "rate": access, "delay": "20ms"})
            flows.append(flow_spec(scheme, reading, f"long-{side}{k}", src, dst, rng.uniform(0.0, START_JITTER_S)))
    for i in range(links):
        for k in range(5):
            src, dst = f"c{i}-{k}s", f"c{i}-{k}d"
            nodes += [{"name": src, "kind": "host"}, {"name": dst, "kind": "host"}]
            topo.append({"a": src, "b": f"r{i}", "rate": access, "delay": "5ms"})
            topo.append({"a": f"r{i + 1}", "b": dst, "rate": access, "delay": "5ms"})
            flows.append(flow_spec(scheme, reading, f"cross-{i}-{k}", src, dst, rng.uniform(0.0, START_JITTER_S)))
    mk = marker(scheme, reading)
    ports = []
    if mk:
        for i in range(links):
            ports += [{"port": f"r{i}->r{i + 1}", "marker": mk}, {"port": f"r{i + 1}->r{i}", "marker": mk}]
    data = {
        "name": f"HFCC multi-bottleneck: {scheme.label}",
        "duration": f"{duration_s}s",
        "seed": seed,
        "topology": {"kind": "explicit", "nodes": nodes, "links": topo},
        "ports": ports,
        "tcp": tcp_defaults(capacity_bps * 0.36 / 8),
        "measure": {"interval": SAMPLE, "sample_ports": [f"r{i}->r{i + 1}" for i in range(links)], "sample_flows": True},
        "flows": flows,
    }
    return Scenario(data)


@register
class MultiBottleneck(Experiment):
    name = "hfcc.multibottleneck"
    title = "Seven congested bottlenecks of 150 Mb/s (Fig. 8)"
    source = "HFCC paper (seed 003) §V-B, Fig. 8 and the text beside it"
    description = (
        "A chain of 7 links of 150 Mb/s / 20 ms; 5 long-lived flows across all of them in each "
        "direction (RTT 360 ms) and 5 cross flows on each link (RTT 60 ms). Utilisation of every link "
        "and the long flows' share after 10 s. The paper: \"HFCC is better than other protocols\" "
        "(the figure's metrics are not named in the text: we compare the mean link utilisation)."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    LINKS = 7

    def duration(self, quick: bool) -> float:
        return 40.0 if quick else 200.0

    def bottleneck(self, run_name: str) -> str | None:
        return "r0->r1"

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        d = self.duration(quick)
        configs = {s.key: (lambda seed, s=s: chain(s, d, seed=seed, reading=reading, links=self.LINKS)) for s in ALL}
        return by_seed(configs, seeds)

    def link_util(self, r: Results, i: int, d: float) -> float:
        names = [f"long-f{k}" for k in range(5)] + [f"cross-{i}-{k}" for k in range(5)]
        return aggregate_bps(r, WARMUP_S, d, names) / payload_capacity()

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        _reading_note(ctx)
        d = self.duration(ctx.quick)
        mean_util = lambda r: sum(self.link_util(r, i, d) for i in range(self.LINKS)) / self.LINKS
        long_share = lambda r: aggregate_bps(r, WARMUP_S, d, [f"long-f{k}" for k in range(5)]) / payload_capacity()
        a = runs.per_seed("hfcc", mean_util)
        comps = [
            claim(
                f"mean link utilisation: HFCC vs {s.label}", Claim("greater"), a, runs.per_seed(s.key, mean_util),
                paper=from_text("Fig. 8", f"HFCC better than {s.label}"), unit="fraction", text=f"HFCC above {s.label}",
                ours=runs.stat("hfcc", mean_util), note=f"{s.label} {runs.stat(s.key, mean_util)}",
            )
            for s in ALL[1:]
        ]
        rows = [
            {
                "scheme": s.label,
                **{f"link {i + 1}": str(runs.stat(s.key, lambda r, i=i: self.link_util(r, i, d))) for i in range(self.LINKS)},
                "long flows' share of a link": str(runs.stat(s.key, long_share)),
                "drops (all links)": str(runs.stat(s.key, lambda r: sum(drops(r, f"r{i}->r{i + 1}") for i in range(self.LINKS)))),
            }
            for s in ALL
        ]
        ctx.table(pl.DataFrame(rows), caption="Forward utilisation of each link after 10 s (mean [min – max] over seeds)")
        return comps
