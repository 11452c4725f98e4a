"""Sanity experiments of the simulator itself against analytic results.

``core.mdl`` — M/D/1 queueing: Poisson arrivals of equal-size packets into a FIFO served at
a constant rate. The mean waiting time before service is Pollaczek–Khinchine's
``Wq = ρ / (2 μ (1 − ρ))`` (μ = service rate in packets/s, ρ = offered load), which plays the
role of the "paper" value. Our measurement is the bottleneck port's mean sojourn time (enqueue
to start of transmission). Also checked: utilisation equals ρ, and Little's law
``Lq = λ Wq`` between the time-averaged queue and the measured wait.

Modelling choices (named, since the analytic model is an idealisation):

- ``ACCESS_RATE``: the Poisson source sits behind an access link 100× faster than the
  bottleneck, so the arrival process at the bottleneck is Poisson up to spacing of one
  access transmission time (0.8 µs against 80 µs of service).
- ``BUFFER``: large enough that no packet is dropped (a dropped packet would make the queue
  M/D/1/K).
- Tolerance of the wait comparison: the run's statistical error. Waiting times are strongly
  correlated near ρ → 1, so the tolerance is wider there (``TOLERANCE``).
"""

from __future__ import annotations

from ..plots import errorbar_with_spread, new_figure, time_series
from ..scenario import Scenario
from . import register
from .base import LINUX_HOSTS, Comparison, Context, Experiment, RunSet, SeedValues, Source, Stat, assumption, claim, paper
from .verdict import Claim

BOTTLENECK_BPS = 100e6
ACCESS_RATE = "10Gbps"
PACKET_BYTES = 1000
BUFFER = 1_000_000
PORT = "rl->rr"


def pk_wait_s(rho: float) -> float:
    """Pollaczek–Khinchine mean wait of M/D/1."""
    mu = BOTTLENECK_BPS / (8 * PACKET_BYTES)
    return rho / (2 * mu * (1 - rho))


def tolerance(rho: float, quick: bool) -> float:
    """Relative tolerance of the mean wait: sampling error grows like 1/(1−ρ)."""
    base = 0.04 if quick else 0.015
    return base * max(1.0, 0.3 / (1 - rho))


def scenario(rho: float, duration: str) -> Scenario:
    s = Scenario.dumbbell(
        left=1,
        right=1,
        bottleneck_rate=f"{BOTTLENECK_BPS / 1e6:g}Mbps",
        bottleneck_delay="1ms",
        access_rate=ACCESS_RATE,
        access_delay="1ms",
        queue={"kind": "droptail", "limit": BUFFER},
        duration=duration,
        name=f"M/D/1 at rho={rho:g}",
    )
    s.add_udp_flow(
        "l0", "r0", rate=f"{rho * BOTTLENECK_BPS:.0f}bps", pattern="poisson", packet_size=PACKET_BYTES, name="poisson"
    )
    s.set("measure.sample_ports", [PORT])
    s.set("measure.interval", "10ms")
    return s


def little_error(r) -> float:
    """|Lq − λWq| / Lq at the bottleneck of one run (Little's law's relative error)."""
    p = r.port(PORT)
    lam = p["dequeued_pkts"] / r.meta["duration_s"]
    lq = p["mean_queue_pkts"]
    return abs(lq - lam * p["mean_sojourn_s"]) / max(lq, 1e-12)


@register
class MD1Wait(Experiment):
    name = "core.mdl"
    title = "M/D/1 queue: mean wait vs load against Pollaczek–Khinchine"
    source = "analytic: Pollaczek–Khinchine mean-value formula for M/D/1, Wq = ρ/(2μ(1−ρ))"
    description = (
        "One Poisson UDP source of 1000-byte packets through a 100 Mbit/s bottleneck with an "
        "unlimited FIFO, at offered loads ρ from light to heavy. The bottleneck's measured mean "
        "wait is compared with the analytic value; utilisation with ρ; the time-averaged queue "
        "with Little's law."
    )
    quick_seeds = 5
    full_seeds = 10
    no_bottleneck = "open-loop Poisson UDP below capacity: there is no backlogged flow to stall"
    hosts = LINUX_HOSTS

    def provenance(self, quick: bool, reading) -> list[Source]:
        model = "M/D/1 (Pollaczek–Khinchine)"
        return [
            assumption("duration", "20s" if quick else "120s", "long enough that the mean wait's sampling error is within the tolerance (module doc)"),
            paper("flows.kind", "udp", f"{model}: open-loop arrivals"),
            paper("flows.pattern", "poisson", f"{model}: Poisson arrivals"),
            paper("flows.rate", "ρ·C", f"{model}: the offered load ρ, swept"),
            assumption("flows.packet_size", f"{PACKET_BYTES}B", "one size, so service is deterministic; 1000 B gives 80 µs of service"),
            assumption("flows.name", "poisson", "a label"),
            assumption("flows.src", "l0", "the one source"),
            assumption("flows.dst", "r0", "the one sink"),
            assumption("hosts.ip_id", "sequential", "unused: no TCP, no UNO codec"),
            assumption("measure.*", None, "the bottleneck port sampled every 10 ms, for Little's law"),
            assumption("topology.kind", "dumbbell", "one source and one sink: a single server"),
            assumption("topology.left", 1, "one source"),
            assumption("topology.right", 1, "one sink"),
            assumption("topology.access.*", ACCESS_RATE, "100× the bottleneck, so arrivals stay Poisson up to one access transmission time (module doc)"),
            assumption("topology.access_queue.*", None, "ecnlab's default; never holds a packet (the access link is 100× faster than the arrivals)"),
            assumption("topology.bottleneck.rate", f"{BOTTLENECK_BPS:.0f}bps", "the server's rate μ·(packet size); any rate would do"),
            assumption("topology.bottleneck.delay", "1ms", "propagation does not enter the wait"),
            paper("topology.bottleneck_queue.*", f"droptail, {BUFFER} packets", f"{model}: an unlimited FIFO (no packet is dropped)"),
            assumption("topology.reverse_queue.*", None, "unused: no traffic in the reverse direction"),
        ]

    def loads(self, quick: bool) -> list[float]:
        return [0.3, 0.5, 0.7, 0.9] if quick else [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]

    def runs(self, quick: bool, seeds: list[int], reading):
        duration = "20s" if quick else "120s"
        out = {}
        for rho in self.loads(quick):
            base = scenario(rho, duration)
            for seed in seeds:
                out[f"rho{rho:.2f}-s{seed}"] = base.with_(seed=seed)
        return out

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        comps: list[Comparison] = []
        rhos, waits, pk = [], [], []
        little_parts, util_parts, drop_parts = [], [], []
        for rho in self.loads(ctx.quick):
            cfg = f"rho{rho:.2f}"
            wait_f = lambda r: r.port(PORT)["mean_sojourn_s"] * 1e3  # noqa: E731
            wait = runs.stat(cfg, wait_f)
            expect = pk_wait_s(rho) * 1e3
            tol = tolerance(rho, ctx.quick)
            comps.append(
                claim(
                    f"mean wait at ρ = {rho:g}",
                    Claim("matches", target=expect, within=tol),
                    runs.per_seed(cfg, wait_f),
                    paper=expect,
                    ours=wait,
                    unit="ms",
                    text=f"equals Wq = ρ/(2μ(1−ρ)) within {tol * 100:.0f} %",
                    note=f"error of the mean {100 * (wait.mean - expect) / expect:+.1f} %",
                )
            )
            rhos.append(rho)
            waits.append(wait)
            pk.append(expect)
            little_parts.append(runs.per_seed(cfg, little_error))
            util_parts.append(runs.per_seed(cfg, lambda r, rho=rho: abs(r.port(PORT)["utilization"] - rho)))
            drop_parts.append(runs.per_seed(cfg, lambda r: r.port(PORT)["dropped_pkts"]))
        util_err = SeedValues.join(util_parts, max, "every load")
        little_err = SeedValues.join(little_parts, max, "every load")
        drops = SeedValues.join(drop_parts, sum, "every load")
        util_tol = 0.02 if ctx.quick else 0.01
        comps.append(
            claim(
                "|utilisation − ρ|, largest over the loads of a seed",
                Claim("at_most", target=util_tol),
                util_err,
                paper=0.0,
                text=f"utilisation equals the offered load (within {util_tol:g})",
            )
        )
        comps.append(
            claim(
                "Little's law: |Lq − λWq| / Lq, largest over the loads of a seed",
                Claim("at_most", target=0.01),
                little_err,
                paper=0.0,
                text="time-averaged queue equals arrival rate × mean wait (within 1 %)",
            )
        )
        comps.append(
            claim(
                "packets dropped at the bottleneck, all loads of a seed",
                Claim("at_most", target=0.5),
                drops,
                paper=0,
                text="an unlimited FIFO drops nothing (fewer than one packet)",
            )
        )

        # Figure: wait vs load, analytic curve and our mean with min–max over seeds.
        import numpy as np

        fig, ax = new_figure("M/D/1 mean wait at the bottleneck", "offered load ρ", "mean wait (ms)")
        xs = np.linspace(0.05, max(rhos) + 0.02, 200)
        ax.plot(xs, [pk_wait_s(x) * 1e3 for x in xs], color="#9aa7b8", lw=2, label="Pollaczek–Khinchine")
        errorbar_with_spread(ax, rhos, waits, label=f"ecnlab ({len(ctx.seeds)} seeds)", color="#3b6ea8")
        ax.set_yscale("log")
        ax.legend()
        ctx.figure(fig, "wait_vs_load", "Mean wait before service against offered load (log scale).")

        heavy = f"rho{max(rhos):.2f}"
        r = runs.over_seeds(heavy)[0]
        fig, ax, _ = time_series(r.timeseries, "queue_pkts", [PORT], title=f"Bottleneck queue at ρ = {max(rhos):g}", ylabel="packets")
        ax.set_xlim(0, min(2.0, r.meta["duration_s"]))
        ctx.figure(fig, "queue_heavy", f"Queue length sampled every 10 ms at ρ = {max(rhos):g}, first seconds of one seed.")
        return comps
