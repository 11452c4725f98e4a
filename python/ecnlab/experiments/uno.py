"""UNO — Vasić, Kuntimaddi, Kostić, "One Bit Is Enough: a Framework for Deploying Explicit
Feedback Congestion Control Protocols" (seed 001), §IV: UCP1 (one ECN bit, the load level
spread over IP-ID residues), UCP2 (two bits, plus the routers' t_ρ from the flows' mean RTT)
and VCP3 (the exact 3-bit level in every packet, an idealised header) against VCP, on one
bottleneck:

    s_k —(10·C)— r1 —(C)— r2 —(10·C)— d_k          bottleneck port ``r1->r2``

Experiments: ``uno.utilization`` (Fig. 4), ``uno.rtt`` (Fig. 5), ``uno.staggered`` (Fig. 6),
``uno.udp`` (Fig. 7), ``uno.fairness`` (Fig. 8); ``mix.uno-legacy`` puts UCP1 across a
legacy ECN router, across a path without ECN or UNO routers, and beside classic ECN flows.

The paper's figures carry no values in its text; the comparisons check the directions and
levels it states ("UCP1 slightly below 80 %", "VCP falls with capacity", "UCP1 practically
identical to VCP3", "UCP2 near-optimal shares, better than VCP3, UCP1, VCP").

Readings (each a constant here or a reading axis):

- Packets: 1000-byte data packets (``MSS`` 960 + 40 header bytes) and 40-byte ACKs (§IV).
- Buffer: max(BDP, 2 packets per flow) (§IV), BDP at the flows' mean RTT, DropTail.
- TCP: an ACK per segment, no SACK, no timestamps, initial window 2 (ns-2's VCP), minimum RTO
  0.2 s, a receive window that never limits.
- Routers: VCP's marker with its own parameters (κ_q = 0.5); UNO's with κ_q = 0.25, γ = 0.98,
  t_ρ = 200 ms (UCP2's routers adapt t_ρ to S = {80 … 1400} ms).
- Topology: access links run at 10× the bottleneck; the bottleneck's one-way delay is a quarter
  of the smallest RTT, each flow's access link makes up the rest of its RTT.
- Randomness: each seed draws every flow's start offset uniformly in [0, 50 ms) (and random
  IP-IDs when they are random); nothing else in these runs is random.
- IP-IDs (``ip_id`` axis): sequential per host, as the paper's figures (each source host runs
  one flow, so per host = per connection); ``random`` is the other reading the paper ran.
  ``uno.utilization`` runs UCP1 with both in every run set, since the paper states the results
  "are very similar".
- Stamping (``stamp_rule`` axis): the router sets the bit when the residue equals its level
  (§II-A); ``at_or_below`` is the alternative §II-A leaves for future work.
- UCP's AI (``ai_scaling`` axis): ``α·rtt/t_ρ`` per RTT as §III-A writes it (``linear``), or
  VCP's ``α·(rtt/t_ρ)²`` (``paper``, VCP's paper) — §III-A's "scaled in the same fashion as MI"
  allows both.
- UCP's MI exponent (``mi_rtt_cap`` axis): ``(1 + ξ)^min(rtt/t_ρ, cap) − 1`` per segment with
  VCP's cap 2.5 (its ns-2 ``MAX_RTT_BY_TRHO``; the paper states no cap), or 1. With ξ = 2.1 at
  level 0, a flow whose RTT is 2·t_ρ grows ×9.6 per RTT while the load it hears is an interval
  plus a round trip old: it overshoots the buffer many times over. Capping the exponent at 1
  removes the overshoot; Fig. 5's long-RTT claims depend on this reading.
- Figure parameters the paper does not give: Fig. 4's RTT (80 ms, VCP's) and flow count
  (``fig4_flows`` axis: 1, or 10 starting together); Fig. 7's capacity (45 Mb/s, as Figs. 5–6),
  RTT (80 ms) and when the UDP flow leaves (40 s, ``UDP_STOP_S``); Fig. 8's capacity (45 Mb/s)
  and RTTs (40 + 4k ms, k = 0…29: 40 … 156 ms).
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
from .base import SIMULATOR_HOSTS, Comparison, Context, Experiment, Reading, ReadingAxis, RunSet, Stat, by_seed, claim, from_text, ms_text, rate_text
from .verdict import Claim, Excluded

PORT = "r1->r2"
PACKET_BYTES = 1000
MSS = 960
MIN_RTO_S = 0.2
START_JITTER_S = 0.05
SAMPLE = "100ms"
UDP_START_S = 20.0
UDP_STOP_S = 40.0
UDP_RATE = 40e6
DYN_CAPACITY = 45e6


@dataclass(frozen=True)
class Scheme:
    key: str
    label: str
    cc: str
    marker: Mapping[str, Any]
    color: str


VCP = Scheme("vcp", "VCP", "vcp", {"kind": "vcp"}, "#5a9e4b")
UCP1 = Scheme("ucp1", "UCP1", "ucp1", {"kind": "uno"}, "#3b6ea8")
UCP2 = Scheme("ucp2", "UCP2", "ucp2", {"kind": "uno", "encoding": "two_bit"}, "#8e44ad")
VCP3 = Scheme("vcp3", "VCP3", "vcp3", {"kind": "uno", "encoding": "header"}, "#d08c2c")
SCHEMES = {s.key: s for s in (VCP, UCP1, UCP2, VCP3)}

AXES = (
    ReadingAxis("ip_id", ("sequential", "random"), "the paper ran both and shows sequential"),
    ReadingAxis("stamp_rule", ("equal", "at_or_below"), "§II-A: exact residue match, or the alternative left for future work"),
    ReadingAxis("ai_scaling", ("linear", "paper"), "§III-A: α·rtt/t_ρ as written, or VCP's (rtt/t_ρ)²"),
    ReadingAxis("mi_rtt_cap", (2.5, 1.0), "the cap on rtt/t_ρ in MI's exponent: VCP's ns-2 value, or 1; the paper states none"),
)






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
    rd = reading or Reading(AXES)
    n = len(rtts_ms)
    rng = random.Random(seed)
    starts = [(starts_s[k] if starts_s else 0.0) + rng.uniform(0.0, START_JITTER_S) for k in range(n)]
    min_rtt = min(rtts_ms)
    bottleneck_ms = min_rtt / 4.0
    bdp = capacity_bps * (sum(rtts_ms) / n) / 1e3 / (8 * PACKET_BYTES)
    buffer = max(int(math.ceil(bdp)), 2 * n)
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
            "queue": {"kind": "droptail", "limit": buffer},
            # ACKs only on the way back.
            "queue_ba": {"kind": "droptail", "limit": 100_000},
        }
    )
    marker = dict(scheme.marker)
    if marker["kind"] == "uno":
        marker["stamp_rule"] = rd.stamp_rule
    flows: list[dict[str, Any]] = []
    for k in range(n):
        f: dict[str, Any] = {"name": f"f{k}", "src": f"s{k}", "dst": f"d{k}", "cc": scheme.cc, "start": f"{starts[k]:.9f}s"}
        if scheme.key != "vcp":
            f["cc_params"] = {"ai_scaling": rd.ai_scaling, "max_rtt_ratio": float(rd.mi_rtt_cap)}
        flows.append(f)
    if udp:
        rate, t0, t1 = udp
        nodes += [{"name": "u", "kind": "host"}, {"name": "v", "kind": "host"}]
        links.append({"a": "u", "b": "r1", "rate": access, "delay": "1ms"})
        links.append({"a": "r2", "b": "v", "rate": access, "delay": "0ms"})
        flows.append({"name": "udp", "kind": "udp", "src": "u", "dst": "v", "rate": rate_text(rate), "packet_size": PACKET_BYTES, "start": f"{t0}s", "stop": f"{t1}s"})
    bdp_bytes = capacity_bps * max(rtts_ms) / 1e3 / 8
    data: dict[str, Any] = {
        "name": name or f"UNO {scheme.label}, {capacity_bps / 1e6:g} Mb/s, {n} flow(s)",
        "duration": f"{duration_s}s",
        "seed": seed,
        "topology": {"kind": "explicit", "nodes": nodes, "links": links},
        "ports": [{"port": PORT, "marker": marker}],
        "hosts": {"ip_id": ip_id or rd.ip_id},
        "tcp": {
            **SIMULATOR_HOSTS,
            "mss": MSS,
            "initial_window": 2,
            "rcv_buf": int(max(8 * bdp_bytes, 1 << 20)),
            "delayed_ack": False,
            "sack": False,
            "timestamps": False,
            "min_rto_s": MIN_RTO_S,
            "rto_floor": "rfc6298",
        },
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


def utilization_at(r: Results, t: float, capacity_bps: float) -> float:
    """Payload utilisation over the second before ``t``: delivery / (C · MSS / packet)."""
    return aggregate_bps(r, t - 1.0, t) / (capacity_bps * MSS / PACKET_BYTES)


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
    v = [x for x in r.flows["feedback_delay_mean_s"].to_list() if x is not None]
    return 1e3 * sum(v) / len(v) if v else None




SETUP_NOTE = (
    "Setup (module ecnlab.experiments.uno states every reading): one bottleneck r1→r2, DropTail "
    "buffer max(BDP, 2 packets per flow), 1000-byte data and 40-byte ACK packets, an ACK per "
    "segment, initial window 2, flows start at a per-seed offset in [0, 50 ms). VCP runs its own "
    "router (κ_q = 0.5); UCP1/UCP2/VCP3 run UNO's (κ_q = 0.25, 8 levels), VCP3 through an idealised "
    "3-bit header. Utilisation and throughput are payload delivery rates over C·960/1000."
)


# ------------------------------------------------------------------------ experiments


@register
class Utilization(Experiment):
    name = "uno.utilization"
    title = "Bottleneck utilisation at 15 s vs capacity (Fig. 4)"
    source = "UNO paper (seed 001) §IV-A, Fig. 4 and the text beside it"
    description = (
        "Capacity swept from 1 Mb/s to 1 Gb/s, RTT 80 ms, bulk flows from t ≈ 0; utilisation over "
        "the second before t = 15 s. The paper: \"UCP1 achieves slightly below 80 % utilization "
        "across link capacities ranging from 1 Mbps to 1 Gbps, whereas VCP utilization falls "
        "significantly as link capacity is increased\" and UCP1 \"is similar to\" VCP3. UCP1 runs "
        "with sequential and with random IP-IDs in every run set (\"the results are very "
        "similar\"); the load-information delay is reported per capacity (paper: 0.07 ms at 1 Gb/s)."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES + (ReadingAxis("fig4_flows", (1, 10), "Fig. 4's flow count is not given"),)
    RTT_MS = 80.0
    QUICK = (1e6, 10e6, 100e6, 1e9)
    FULL = (1e6, 2e6, 5e6, 10e6, 20e6, 50e6, 100e6, 200e6, 500e6, 1e9)

    def bottleneck(self, run_name: str) -> str | None:
        return None  # the ramp itself is the measurement

    def caps(self, quick: bool) -> tuple[float, ...]:
        return self.QUICK if quick else self.FULL

    @staticmethod
    def cfg(key: str, c: float) -> str:
        return f"{key}-{c / 1e6:g}M"

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        n = int(reading.fig4_flows)
        rtts = [self.RTT_MS] * n
        configs: dict[str, Callable[[int], Scenario]] = {}
        for c in self.caps(quick):
            for s in (VCP, UCP1, VCP3):
                configs[self.cfg(s.key, c)] = lambda seed, s=s, c=c: scenario(s, c, rtts, 15.0, seed=seed, reading=reading, ip_id="sequential")
            other = "random" if reading.ip_id == "sequential" else "sequential"
            configs[self.cfg("ucp1-" + other, c)] = lambda seed, c=c, o=other: scenario(UCP1, c, rtts, 15.0, seed=seed, reading=reading, ip_id=o)
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        caps = self.caps(ctx.quick)
        other = "random" if ctx.reading.ip_id == "sequential" else "sequential"
        comps: list[Comparison] = []
        stats: dict[str, list[Stat]] = {k: [] for k in ("vcp", "ucp1", "vcp3", "ucp1-" + other)}
        rows = []
        for c in caps:
            u = lambda r, c=c: utilization_at(r, 15.0, c)
            for k in stats:
                stats[k].append(runs.stat(self.cfg(k, c), u))
            ucp1 = runs.per_seed(self.cfg("ucp1", c), u)
            comps.append(
                claim(
                    f"UCP1 utilisation at 15 s, {c / 1e6:g} Mb/s", Claim("matches", 0.8, 0.1), ucp1,
                    paper=from_text("Fig. 4", "slightly below 80 %"), unit="fraction",
                    text="UCP1 near 80 % (±10 %) at every capacity", ours=runs.stat(self.cfg("ucp1", c), u),
                )
            )
            comps.append(
                claim(
                    f"UCP1 vs VCP3 utilisation, {c / 1e6:g} Mb/s", Claim("approx", within=0.1), ucp1,
                    runs.per_seed(self.cfg("vcp3", c), u), paper=from_text("Fig. 4", "UCP1 similar to VCP3"),
                    unit="fraction", text="UCP1 ≈ VCP3 (±10 %)", ours=runs.stat(self.cfg("ucp1", c), u),
                    note=f"VCP3 {runs.stat(self.cfg('vcp3', c), u)}",
                )
            )
            comps.append(
                claim(
                    f"UCP1 {ctx.reading.ip_id} vs {other} IP-IDs, {c / 1e6:g} Mb/s", Claim("approx", within=0.05), ucp1,
                    runs.per_seed(self.cfg("ucp1-" + other, c), u), paper=from_text("§IV", "results very similar"),
                    unit="fraction", text="IP-ID numbering does not matter (±5 %)", ours=runs.stat(self.cfg("ucp1", c), u),
                    note=f"{other}: {runs.stat(self.cfg('ucp1-' + other, c), u)}",
                )
            )
            if c >= 10e6:
                comps.append(
                    claim(
                        f"UCP1 vs VCP utilisation, {c / 1e6:g} Mb/s", Claim("greater"), ucp1,
                        runs.per_seed(self.cfg("vcp", c), u), paper=from_text("Fig. 4", "UCP1 above VCP"),
                        unit="fraction", text="UCP1 above VCP", ours=runs.stat(self.cfg("ucp1", c), u),
                        note=f"VCP {runs.stat(self.cfg('vcp', c), u)}",
                    )
                )
            rows.append(
                {
                    "capacity (Mb/s)": c / 1e6,
                    **{f"{k}": str(stats[k][-1]) for k in stats},
                    "UCP1 load-info delay (ms)": str(runs.stat(self.cfg("ucp1", c), feedback_delay_ms)),
                    f"UCP1 {other} delay (ms)": str(runs.stat(self.cfg("ucp1-" + other, c), feedback_delay_ms)),
                }
            )
        lo, hi = caps[0], caps[-1]
        u_lo = lambda r: utilization_at(r, 15.0, lo)
        u_hi = lambda r: utilization_at(r, 15.0, hi)
        vcp_lo = runs.per_seed(self.cfg("vcp", lo), u_lo)
        vcp_hi = runs.per_seed(self.cfg("vcp", hi), u_hi)
        comps.append(
            claim(
                f"VCP utilisation at {hi / 1e6:g} vs {lo / 1e6:g} Mb/s", Claim("less"), vcp_hi, vcp_lo,
                paper=from_text("Fig. 4", "VCP falls as capacity grows"), unit="fraction",
                text="VCP lower at the largest capacity than at the smallest", ours=runs.stat(self.cfg("vcp", hi), u_hi),
            )
        )
        delay_hi = runs.per_seed(self.cfg("ucp1", 1e9), feedback_delay_ms) if 1e9 in caps else {}
        if delay_hi:
            comps.append(
                claim(
                    "UCP1 load-information delay at 1 Gb/s", Claim("matches", 0.07, 0.25), delay_hi,
                    paper=0.07, unit="ms", text="0.07 ms mean delay at 1 Gb/s (±25 %)",
                    ours=runs.stat(self.cfg("ucp1", 1e9), feedback_delay_ms),
                    note="from the first ACK of a block to the decision, sequential IP-IDs",
                )
            )
        if ctx.draw:
            fig, ax = new_figure("Fig. 4: utilisation at 15 s", "capacity (Mb/s)", "utilisation")
            ax.set_xscale("log")
            xs = [c / 1e6 for c in caps]
            labels = {"vcp": (VCP.label, VCP.color), "ucp1": (f"UCP1 ({ctx.reading.ip_id})", UCP1.color), "vcp3": (VCP3.label, VCP3.color), "ucp1-" + other: (f"UCP1 ({other})", "#7fb3e0")}
            for k, (lab, col) in labels.items():
                ax.plot(xs, [s.mean for s in stats[k]], color=col, lw=1, alpha=0.6)
                errorbar_with_spread(ax, xs, stats[k], label=f"{lab} ({len(ctx.seeds)} seeds)", color=col)
            ax.axhline(0.8, color="#888", ls=":", lw=1)
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig4_utilization", "Payload utilisation over the second before 15 s; mean with min–max over seeds; dotted: the paper's 80 %.")
        ctx.table(pl.DataFrame(rows), caption="Utilisation at 15 s (mean [min – max] over seeds) and UCP1's load-information delay")
        return comps


@register
class Rtt(Experiment):
    name = "uno.rtt"
    title = "Throughput after 30 s vs RTT at 45 Mb/s (Fig. 5)"
    source = "UNO paper (seed 001) §IV-A, Fig. 5 and the text beside it"
    description = (
        "One bulk flow, 45 Mb/s, round-trip propagation delay swept from 1 ms to 1.5 s; throughput "
        "over the second before 30 s. The paper: \"UCP1 again achieves better throughput than VCP, "
        "and is practically identical to VCP3\"."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    QUICK = (1.0, 10.0, 80.0, 400.0, 1500.0)
    FULL = (1.0, 5.0, 10.0, 20.0, 50.0, 80.0, 100.0, 200.0, 400.0, 800.0, 1000.0, 1500.0)

    def rtts(self, quick: bool) -> tuple[float, ...]:
        return self.QUICK if quick else self.FULL

    @staticmethod
    def cfg(key: str, rtt: float) -> str:
        return f"{key}-{rtt:g}ms"

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        configs = {
            self.cfg(s.key, rtt): (lambda seed, s=s, rtt=rtt: scenario(s, DYN_CAPACITY, [rtt], 30.0, seed=seed, reading=reading))
            for rtt in self.rtts(quick)
            for s in (VCP, UCP1, VCP3)
        }
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        rtts = self.rtts(ctx.quick)
        mbps = lambda r: aggregate_bps(r, 29.0, 30.0) / 1e6
        stats = {k: [runs.stat(self.cfg(k, x), mbps) for x in rtts] for k in ("vcp", "ucp1", "vcp3")}
        comps = []
        for x in rtts:
            a = runs.per_seed(self.cfg("ucp1", x), mbps)
            comps.append(
                claim(
                    f"UCP1 vs VCP throughput, RTT {x:g} ms", Claim("greater"), a, runs.per_seed(self.cfg("vcp", x), mbps),
                    paper=from_text("Fig. 5", "UCP1 better than VCP"), unit="Mb/s", text="UCP1 above VCP",
                    ours=runs.stat(self.cfg("ucp1", x), mbps), note=f"VCP {runs.stat(self.cfg('vcp', x), mbps)}",
                )
            )
            comps.append(
                claim(
                    f"UCP1 vs VCP3 throughput, RTT {x:g} ms", Claim("approx", within=0.1), a, runs.per_seed(self.cfg("vcp3", x), mbps),
                    paper=from_text("Fig. 5", "practically identical"), unit="Mb/s", text="UCP1 ≈ VCP3 (±10 %)",
                    ours=runs.stat(self.cfg("ucp1", x), mbps), note=f"VCP3 {runs.stat(self.cfg('vcp3', x), mbps)}",
                )
            )
        if ctx.draw:
            fig, ax = new_figure("Fig. 5: throughput after 30 s, 45 Mb/s", "RTT (ms)", "throughput (Mb/s)")
            ax.set_xscale("log")
            for s in (VCP, UCP1, VCP3):
                ax.plot(rtts, [v.mean for v in stats[s.key]], color=s.color, lw=1, alpha=0.6)
                errorbar_with_spread(ax, rtts, stats[s.key], label=f"{s.label} ({len(ctx.seeds)} seeds)", color=s.color)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig5_rtt", "Payload throughput over the second before 30 s; mean with min–max over seeds.")
        ctx.table(
            pl.DataFrame([{"RTT (ms)": x, **{SCHEMES[k].label: str(stats[k][i]) for k in stats}} for i, x in enumerate(rtts)]),
            caption="Throughput after 30 s (Mb/s; mean [min – max] over seeds)",
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


@register
class Staggered(Experiment):
    name = "uno.staggered"
    title = "Convergence with staggered flows (Fig. 6)"
    source = "UNO paper (seed 001) §IV-B, Fig. 6 and the text beside it"
    description = (
        "Five flows with RTTs 40, 50, 60, 70, 80 ms on 45 Mb/s, started 100 s apart (the quick "
        "form: 30 s apart). Convergence time of a join: seconds until Jain's index of the active "
        "flows' 1-second throughputs reaches 0.9 (censored at the next join). The paper: \"UCP1 "
        "converges quicker than VCP to fair bandwidth allocation\"."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    RTTS = (40.0, 50.0, 60.0, 70.0, 80.0)

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def gap(self, quick: bool) -> float:
        return 30.0 if quick else 100.0

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        g = self.gap(quick)
        starts = [k * g for k in range(5)]
        configs = {s.key: (lambda seed, s=s: scenario(s, DYN_CAPACITY, self.RTTS, 5 * g, seed=seed, starts_s=starts, reading=reading)) for s in (VCP, UCP1)}
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        g = self.gap(ctx.quick)
        starts = [k * g for k in range(5)]
        conv = lambda r: sum(convergence_s(r, starts, 5 * g)) / 4
        comps = [
            claim(
                "mean convergence time after a join: UCP1 vs VCP", Claim("less"), runs.per_seed("ucp1", conv), runs.per_seed("vcp", conv),
                paper=from_text("Fig. 6", "UCP1 converges quicker than VCP"), unit="s", text="UCP1 converges faster",
                ours=runs.stat("ucp1", conv), note=f"VCP {runs.stat('vcp', conv)}; censored at the next join ({g:g} s)",
            )
        ]
        rows = []
        for key in ("vcp", "ucp1"):
            per_join = [runs.stat(key, lambda r, k=k: convergence_s(r, starts, 5 * g)[k]) for k in range(4)]
            rows.append({"scheme": SCHEMES[key].label, **{f"join {k + 2} (s)": str(per_join[k]) for k in range(4)}, "drops": str(runs.stat(key, lambda r: float(r.port(PORT)["dropped_pkts"])))})
        ctx.table(pl.DataFrame(rows), caption="Seconds to Jain ≥ 0.9 after each join (mean [min – max] over seeds) and bottleneck drops")
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


@register
class Udp(Experiment):
    name = "uno.udp"
    title = "Competing with a UDP flow (Fig. 7)"
    source = "UNO paper (seed 001) §IV-B, Fig. 7 and the text beside it"
    description = (
        f"One bulk flow (RTT 80 ms, 45 Mb/s); a {UDP_RATE / 1e6:g} Mb/s UDP flow from {UDP_START_S:g} s to "
        f"{UDP_STOP_S:g} s. The paper: UCP1 \"quickly adjusts its congestion window\"; \"once the UDP "
        "flow is gone, the MI phase rapidly brings the UCP1 flow to high utilization, with a low queue "
        "size\". Recovery time: from the UDP flow's stop until the TCP flow's throughput (100 ms "
        "samples) first reaches 80 % of the capacity."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    DURATION_S = 60.0

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        udp = (UDP_RATE, UDP_START_S, UDP_STOP_S)
        configs = {s.key: (lambda seed, s=s: scenario(s, DYN_CAPACITY, [80.0], self.DURATION_S, seed=seed, udp=udp, reading=reading)) for s in (VCP, UCP1)}
        return by_seed(configs, seeds)

    @staticmethod
    def recovery_s(r: Results) -> Any:
        ts = r.series("delivery_bps", "f0").filter(pl.col("time_s") > UDP_STOP_S).sort("time_s")
        hit = ts.filter(pl.col("value") >= 0.8 * DYN_CAPACITY * MSS / PACKET_BYTES)
        if hit.height == 0:
            return Excluded("never reached 80 % after the UDP flow left")
        return float(hit["time_s"][0]) - UDP_STOP_S

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        during = lambda r: (aggregate_bps(r, UDP_START_S + 2, UDP_STOP_S) + aggregate_bps(r, UDP_START_S + 2, UDP_STOP_S, ["udp"])) / (DYN_CAPACITY * MSS / PACKET_BYTES)
        qmean = lambda r: float(r.series("queue_pkts", PORT).filter((pl.col("time_s") > UDP_STOP_S) & (pl.col("time_s") <= self.DURATION_S))["value"].mean())
        comps = [
            claim(
                "recovery to 80 % after the UDP flow leaves: UCP1 vs VCP", Claim("less"), runs.per_seed("ucp1", self.recovery_s), runs.per_seed("vcp", self.recovery_s),
                paper=from_text("Fig. 7", "MI rapidly brings UCP1 back"), unit="s", text="UCP1 recovers faster than VCP",
                ours=runs.stat("ucp1", self.recovery_s), note=f"VCP {runs.stat('vcp', self.recovery_s)}",
            ),
            claim(
                "link use while the UDP flow runs (TCP + UDP), UCP1", Claim("at_least", 0.9), runs.per_seed("ucp1", during),
                paper=from_text("Fig. 7", "UCP1 adjusts quickly"), unit="fraction", text="the link stays ≥ 90 % used",
                ours=runs.stat("ucp1", during), note="from 2 s after the UDP flow starts to its stop",
            ),
        ]
        rows = [
            {
                "scheme": SCHEMES[k].label,
                "recovery (s)": str(runs.stat(k, self.recovery_s)),
                "use during UDP": str(runs.stat(k, during)),
                "mean queue after (pkts)": str(runs.stat(k, qmean)),
                "drops": str(runs.stat(k, lambda r: float(r.port(PORT)["dropped_pkts"]))),
            }
            for k in ("vcp", "ucp1")
        ]
        ctx.table(pl.DataFrame(rows), caption="UDP experiment (mean [min – max] over seeds)")
        if ctx.draw:
            fig, ax = new_figure("Fig. 7: a UDP flow joins and leaves (first seed)", "time (s)", "throughput (Mb/s)")
            for k in ("vcp", "ucp1"):
                d = runs[f"{k}-s{ctx.seeds[0]}"].series("delivery_bps", "f0").sort("time_s")
                ax.plot(d["time_s"], d["value"] / 1e6, lw=0.8, color=SCHEMES[k].color, label=f"{SCHEMES[k].label} TCP")
            ax.axvspan(UDP_START_S, UDP_STOP_S, color="#ddd", alpha=0.5, label="UDP on")
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig7_udp", "The TCP flow's throughput (100 ms samples), first seed.")
        return comps


@register
class Fairness(Experiment):
    name = "uno.fairness"
    title = "RTT fairness, 30 flows with RTTs 40–156 ms (Fig. 8)"
    source = "UNO paper (seed 001) §IV-C, Fig. 8 and the text beside it"
    description = (
        "30 bulk flows, RTT 40 + 4k ms (k = 0…29), 45 Mb/s; shares over the second half of the run "
        "(100 s; quick: 60 s). The paper: UCP2 \"achieves a near-optimal distribution of bottleneck "
        "capacity among the flows\", better than VCP3 and UCP1 and VCP. Fairness is Jain's index of "
        "the flows' throughputs."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    RTTS = tuple(40.0 + 4 * k for k in range(30))

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def duration(self, quick: bool) -> float:
        return 60.0 if quick else 100.0

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        d = self.duration(quick)
        configs = {s.key: (lambda seed, s=s: scenario(s, DYN_CAPACITY, self.RTTS, d, seed=seed, reading=reading)) for s in (VCP, UCP1, UCP2, VCP3)}
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        d = self.duration(ctx.quick)
        fair = lambda r: jain(shares(r, d / 2, d))
        ucp2 = runs.per_seed("ucp2", fair)
        comps = [
            claim(
                "Jain's index, UCP2", Claim("at_least", 0.95), ucp2, paper=from_text("Fig. 8", "near-optimal distribution"),
                text="UCP2 near-equal shares (Jain ≥ 0.95)", ours=runs.stat("ucp2", fair),
            )
        ]
        for k in ("vcp3", "ucp1", "vcp"):
            comps.append(
                claim(
                    f"Jain's index: UCP2 vs {SCHEMES[k].label}", Claim("greater"), ucp2, runs.per_seed(k, fair),
                    paper=from_text("Fig. 8", f"UCP2 fairer than {SCHEMES[k].label}"), text=f"UCP2 fairer than {SCHEMES[k].label}",
                    ours=runs.stat("ucp2", fair), note=f"{SCHEMES[k].label} {runs.stat(k, fair)}",
                )
            )
        t_rho = lambda r: float(r.series("t_rho_s").filter(pl.col("time_s") > d / 2)["value"].mean())
        rows = [
            {
                "scheme": SCHEMES[k].label,
                "Jain": str(runs.stat(k, fair)),
                "max/min share": str(runs.stat(k, lambda r: max(shares(r, d / 2, d)) / max(min(shares(r, d / 2, d)), 1.0))),
                "utilisation": str(runs.stat(k, lambda r: aggregate_bps(r, d / 2, d) / (DYN_CAPACITY * MSS / PACKET_BYTES))),
                "drops": str(runs.stat(k, lambda r: float(r.port(PORT)["dropped_pkts"]))),
                "senders' t_ρ (s)": str(runs.stat(k, t_rho)) if k != "vcp" else "0.2 (fixed)",
            }
            for k in ("vcp", "ucp1", "ucp2", "vcp3")
        ]
        ctx.table(pl.DataFrame(rows), caption="Fairness over the second half (mean [min – max] over seeds)")
        if ctx.draw:
            fig, ax = new_figure("Fig. 8: per-flow throughput vs RTT (mean over seeds)", "RTT (ms)", "throughput (Mb/s)")
            for k in ("vcp", "ucp1", "ucp2", "vcp3"):
                per = [runs.stat(k, lambda r, i=i: shares(r, d / 2, d)[i] / 1e6) for i in range(len(self.RTTS))]
                ax.plot(self.RTTS, [p.mean for p in per], "o-", ms=3, lw=0.8, color=SCHEMES[k].color, label=SCHEMES[k].label)
            ax.axhline(DYN_CAPACITY * MSS / PACKET_BYTES / 30 / 1e6, color="#888", ls=":", lw=1, label="equal share")
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig8_fairness", "Each flow's throughput over the second half against its RTT; dotted: the equal share.")
        return comps


# ------------------------------------------------------------------ UNO meets legacy routers

MIX_CASES = ("legacy-ecn", "no-ecn", "shared")


def legacy_scenario(case: str, flows: Sequence[str], duration_s: float, seed: int = 1, reading: Reading | None = None) -> Scenario:
    """s_k → r1 —100 Mb/s→ r2 —45 Mb/s→ r3 → d_k, RTT 80 ms. ``flows``: one controller per
    flow (``ucp1``, ``newreno+ecn``, ``newreno``). Cases: ``legacy-ecn``: a UNO router at r1
    (not congested), the 45 Mb/s hop a classic RED+ECN router; ``no-ecn``: no UNO router, the
    45 Mb/s hop DropTail; ``shared``: the 45 Mb/s hop is r1's, RED+ECN with UNO's marker."""
    rd = reading or Reading(AXES)
    rng = random.Random(seed)
    bdp = int(math.ceil(DYN_CAPACITY * 0.08 / (8 * PACKET_BYTES)))
    red = {"kind": "red", "limit": bdp, "min_th": 0.1 * bdp, "max_th": 0.3 * bdp, "max_p": 0.1, "gentle": True, "ecn": True, "mean_pkt_size": PACKET_BYTES}
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
    ports = [] if case == "no-ecn" else [{"port": "r1->r2", "marker": {"kind": "uno", "stamp_rule": rd.stamp_rule}}]
    fl = []
    for k, f in enumerate(flows):
        cc, _, ecn = f.partition("+")
        spec: dict[str, Any] = {"name": f"f{k}", "src": f"s{k}", "dst": f"d{k}", "cc": cc, "start": f"{rng.uniform(0, START_JITTER_S):.9f}s"}
        if ecn:
            spec["ecn"] = ecn
        if cc == "ucp1":
            spec["cc_params"] = {"ai_scaling": rd.ai_scaling, "max_rtt_ratio": float(rd.mi_rtt_cap)}
        fl.append(spec)
    data = {
        "name": f"UNO across legacy routers: {case}, {' + '.join(flows)}",
        "duration": f"{duration_s}s",
        "seed": seed,
        "topology": {"kind": "explicit", "nodes": nodes, "links": links},
        "ports": ports,
        "hosts": {"ip_id": rd.ip_id},
        "tcp": {**SIMULATOR_HOSTS, "mss": MSS, "initial_window": 2, "rcv_buf": 8 << 20, "delayed_ack": False, "sack": False, "timestamps": False, "min_rto_s": MIN_RTO_S, "rto_floor": "rfc6298"},
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
    source = "UNO paper (seed 001) §II-C (interoperability, left to future work there); no figure"
    description = (
        "Two UCP1 flows (RTT 80 ms) through 45 Mb/s: (1) behind a classic RED+ECN router, a "
        "lightly loaded UNO router upstream; (2) on a path with neither ECN nor UNO routers (DropTail); "
        "(3) sharing a RED+ECN bottleneck that also runs UNO's marker with two NewReno+ECN flows. The "
        "references are two NewReno+ECN flows (1, 3) and two NewReno flows without ECN (2). These are "
        "our expectations of a deployable scheme, not the paper's results: CE read as overload keeps "
        "UCP1 working behind a legacy router; with no UNO router UCP1 behaves as AIMD; UCP1 and "
        "classic ECN flows coexist."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES

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

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        d = self.duration(ctx.quick)
        cap = DYN_CAPACITY * MSS / PACKET_BYTES
        use = lambda r: aggregate_bps(r, 5.0, d) / cap
        drops = lambda case: (lambda r: float(r.port(mix_bottleneck(case))["dropped_pkts"]))
        ecn_share = lambda r: aggregate_bps(r, 5.0, d, ["f2", "f3"]) / max(aggregate_bps(r, 5.0, d), 1.0)
        mixed_fair = lambda r: jain(shares(r, 5.0, d))
        exp = "expected (not from the paper)"
        comps = [
            claim("UCP1 link use behind a legacy RED+ECN router", Claim("at_least", 0.8), runs.per_seed("legacy-ecn/ucp1", use), paper=exp, unit="fraction", text="CE read as overload keeps the link ≥ 80 % used", ours=runs.stat("legacy-ecn/ucp1", use)),
            claim(
                "drops behind a legacy RED+ECN router: UCP1 vs NewReno+ECN", Claim("less"), runs.per_seed("legacy-ecn/ucp1", drops("legacy-ecn")), runs.per_seed("legacy-ecn/reference", drops("legacy-ecn")),
                paper=exp, unit="packets", text="UCP1 loses fewer packets than classic ECN senders there", ours=runs.stat("legacy-ecn/ucp1", drops("legacy-ecn")), note=f"NewReno+ECN {runs.stat('legacy-ecn/reference', drops('legacy-ecn'))}",
            ),
            claim(
                "link use without ECN or UNO routers: UCP1 vs NewReno", Claim("approx", within=0.1), runs.per_seed("no-ecn/ucp1", use), runs.per_seed("no-ecn/reference", use),
                paper=exp, unit="fraction", text="UCP1 behaves as AIMD (±10 % of NewReno's use)", ours=runs.stat("no-ecn/ucp1", use), note=f"NewReno {runs.stat('no-ecn/reference', use)}",
            ),
            claim("Jain's index, 2 UCP1 + 2 NewReno+ECN on one RED+ECN+UNO bottleneck", Claim("at_least", 0.8), runs.per_seed("shared/mixed", mixed_fair), paper=exp, text="UCP1 and classic ECN flows coexist (Jain ≥ 0.8)", ours=runs.stat("shared/mixed", mixed_fair), note=f"ECN flows' share of the goodput {runs.stat('shared/mixed', ecn_share)}"),
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
