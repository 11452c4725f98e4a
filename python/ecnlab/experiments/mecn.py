"""MECN — Durresi, Sridharan, Liu, Goyal, Jain, "Traffic Management using Multilevel
Explicit Congestion Notification" (seed 002), §3: multilevel RED with graded Reno decreases
(MECN) against RED marking CE with Reno halving (classic ECN), on the paper's topology

    n sources —10 Mb/s, 2 ms— R1 —1.5 Mb/s, 20 ms— R2 —10 Mb/s, 4 ms— n sinks

(fixed RTT 59 ms; the bottleneck is the R1→R2 port, ``r1->r2``).

Experiments: ``mecn.queue`` (Figs. 3a/3b), ``mecn.efficiency`` (Fig. 4), ``mecn.throughput``
(Fig. 5), ``mecn.drops`` (Figs. 6 and 7). The six scenarios of §3 are :data:`SETUPS`;
:func:`scenario` builds any of them for either scheme, and ``scenarios/mecn/*.toml`` are the
same scenarios as files (:func:`write_scenario_files` writes them; a test checks they match).

The paper's figures are images whose values are not in its text; the text states directions
only ("MECN converges faster with less oscillation", "higher efficiency at every min_th", "fewer
losses, zero loss at a lower min_th"), so the comparisons check directions and the figures show
our curves for a reader to set beside the paper's. Numbers the text does state (RTT 59 ms,
window 25, w_q = 0.002, the threshold ratios, the decrease factors) are set or checked.

Readings of what the paper leaves open, each a named constant or a :class:`Readings` field:

- Packets: 1000-byte data packets on the wire (``MSS`` = 960 payload + 40 header bytes) and
  40-byte ACKs, as the paper's RTT of 59 ms implies (52 ms propagation + 6.9 ms of data
  serialisation + 0.3 ms of ACK serialisation).
- Window: the runs use ns-2's ``window_`` = 25 (``WINDOW_PKTS``): the receive window is 25
  segments for both schemes, and MECN's controller caps its window at 25 (``max_window``).
  ns-2 reduces min(cwnd, window_): NewReno reducing from the flight size (RFC 5681 eq. 4, its
  default) and MECN reducing its capped window both do that.
- TCP: the paper's senders are ns-2 Reno with an ACK per segment. Ours: NewReno loss recovery
  (RFC 6582; our stack has no plain-Reno recovery), no SACK, no delayed ACKs, no limited
  transmit, minimum RTO ``MIN_RTO_S`` = 0.2 s. Initial window ``Readings.initial_window`` = 1
  segment (ns-2's ``windowInit_`` until its June 2001 defaults; 2 after) — only the start-up
  depends on it.
- Classic ECN: ``cc = "newreno"``, ``ecn = "ecn"`` over RED in packet mode with
  ``max_th = 2·min_th``, ``max_p`` = ``P_MAX`` = 0.1 (ns-2's ``linterm_`` 10, and
  P1max = P2max = 0.1 for MECN), ``w_q`` = 0.002, ``wait`` on, ``gentle`` off (as MECN, every
  packet is dropped above max_th), ECT packets marked CE in the early region.
- MECN: ``cc = "mecn"`` over ``mecn`` (multilevel RED), ``mid_th = 2·min_th``,
  ``max_th = 2·mid_th``; the module readings of ``ecnlab::schemes::mecn`` (moderate ramp from
  0, the receiver's "first level" rule, one reduction per window), selectable through
  :class:`Readings`.
- Buffer: not given; ``BUFFER_PKTS`` = 200 holds every threshold swept (MECN's max_th is
  4·min_th), so drops are the RED decisions the paper counts rather than a buffer choice.
- Different RTTs (scenarios 5, 6): "changing the propagation delay between the source and R1";
  the values are not given. Ours: source-link delays ``DIFFERENT_RTT_DELAYS_MS`` (2, 22 ms for
  two sources: RTT 59 and 99 ms; 2, 7, 12, 17, 22 ms for five: RTT 59 … 99 ms).
- Fig. 3's min_th is not given: ``QUEUE_MIN_TH`` = 5 packets (ns-2's default ``thresh_``).
- Fig. 5's "one individual source" is the first (``s0``, starting at 0 s).
- Fig. 6's "configuration with two sources" is read as scenario 1 (same RTT, as Fig. 4's
  two sources); scenario 5 (different RTTs) is run beside it.
- Durations: the only one the paper states is scenario 2's 10 s; every run lasts
  ``DURATION_S`` = 10 s. Link efficiency is the bottleneck's busy fraction over the run.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import polars as pl

from ..plots import errorbar_with_spread, new_figure
from ..results import Results
from ..scenario import Scenario
from . import register
from .base import SIMULATOR_HOSTS, Comparison, Context, Experiment, Reading, ReadingAxis, RunSet, Stat, claim, for_seeds
from .verdict import Claim, Excluded

# ------------------------------------------------------------------ the paper's setup

ACCESS_RATE = "10Mbps"
SOURCE_DELAY_MS = 2.0
BOTTLENECK_RATE = "1.5Mbps"
BOTTLENECK_BPS = 1.5e6
BOTTLENECK_DELAY = "20ms"
SINK_DELAY_MS = 4.0
PORT = "r1->r2"
#: Fixed RTT the paper states (§3).
PAPER_RTT_MS = 59.0

PACKET_BYTES = 1000
HEADER_BYTES = 40
MSS = PACKET_BYTES - HEADER_BYTES
WINDOW_PKTS = 25
W_Q = 0.002
P_MAX = 0.1
MIN_RTO_S = 0.2
BUFFER_PKTS = 200
DURATION_S = 10.0
DIFFERENT_RTT_DELAYS_MS = {2: (2.0, 22.0), 5: (2.0, 7.0, 12.0, 17.0, 22.0)}
QUEUE_MIN_TH = 5.0

SCHEMES = ("ecn", "mecn")
LABEL = {"ecn": "ECN (RED + Reno)", "mecn": "MECN"}
COLOR = {"ecn": "#c0504d", "mecn": "#3b6ea8"}

#: min_th values (packets) of the sweeps.
FULL_MIN_THS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0)
QUICK_MIN_THS = (2.0, 4.0, 6.0, 10.0, 15.0, 25.0)


@dataclass(frozen=True)
class Setup:
    """One scenario of §3: sources, their start (and stop) times and source-link delays."""

    key: str
    title: str
    starts_s: tuple[float, ...]
    source_delays_ms: tuple[float, ...]
    stops_s: tuple[float | None, ...] | None = None

    @property
    def n(self) -> int:
        return len(self.starts_s)


SETUPS: dict[str, Setup] = {
    s.key: s
    for s in (
        Setup("s1-two-same-rtt", "1. Two connections with the same RTT", (0.0, 0.0), (SOURCE_DELAY_MS,) * 2),
        Setup(
            "s2-two-overlapping",
            "2. Two overlapping connections: 0–9.5 s and 0.5–10 s",
            (0.0, 0.5),
            (SOURCE_DELAY_MS,) * 2,
            (9.5, None),
        ),
        Setup("s3-ten-same-rtt", "3. Ten connections with the same RTT", (0.0,) * 10, (SOURCE_DELAY_MS,) * 10),
        Setup(
            "s4-ten-overlapping",
            "4. Ten overlapping connections, each starting 0.3 s after the previous",
            tuple(round(0.3 * k, 3) for k in range(10)),
            (SOURCE_DELAY_MS,) * 10,
        ),
        Setup("s5-two-different-rtt", "5. Two connections with different RTTs", (0.0, 0.0), DIFFERENT_RTT_DELAYS_MS[2]),
        Setup("s6-five-different-rtt", "6. Five connections with different RTTs", (0.0,) * 5, DIFFERENT_RTT_DELAYS_MS[5]),
    )
}


@dataclass(frozen=True)
class Readings:
    """Ambiguous points of the paper, as parameters (defaults: the readings documented in the
    module and in ``ecnlab::schemes::mecn``)."""

    #: Initial window in segments (ns-2 ``windowInit_``: 1 before June 2001, then 2).
    initial_window: int = 1
    #: MECN's moderate-region probability: "from_zero" or "continue_from_p1max".
    moderate_ramp: str = "from_zero"
    #: What a CWR stops the MECN receiver echoing: "first_level" or "all".
    cwr_clears: str = "first_level"
    #: A higher MECN level within a reduced window: "ignore" or "top_up".
    escalation: str = "ignore"

    def tag(self) -> str:
        """Short label of the readings that differ from the defaults ("" for none)."""
        d = Readings()
        return ",".join(f"{k}={getattr(self, k)}" for k in self.__dataclass_fields__ if getattr(self, k) != getattr(d, k))


#: The readings of :class:`Readings` as reading axes (first value: the default).
AXES = (
    ReadingAxis("moderate_ramp", ("from_zero", "continue_from_p1max"), "§2: the moderate region's probability rises like RED's, from 0"),
    ReadingAxis("cwr_clears", ("first_level", "all"), "§3's receiver remembers the first level it echoed"),
    ReadingAxis("escalation", ("ignore", "top_up"), "at most one reduction per window, as RFC 3168"),
    ReadingAxis("initial_window", (1, 2), "ns-2's windowInit_ before its June 2001 defaults"),
)


def readings_of(reading: Reading) -> Readings:
    """The :class:`Readings` a reading chooses."""
    return Readings(**{a.name: reading.get(a.name, a.default) for a in AXES})


def _ms(x: float) -> str:
    return f"{x:g}ms"


def _s(x: float) -> str:
    return f"{x:g}s"


def bottleneck_queue(scheme: str, min_th: float, readings: Readings = Readings()) -> dict[str, Any]:
    """The R1→R2 queue: RED marking CE (classic ECN, max_th = 2·min_th) or multilevel RED
    (mid_th = 2·min_th, max_th = 2·mid_th)."""
    if scheme == "ecn":
        return {
            "kind": "red",
            "limit": BUFFER_PKTS,
            "min_th": float(min_th),
            "max_th": 2.0 * min_th,
            "max_p": P_MAX,
            "w_q": W_Q,
            "gentle": False,
            "wait": True,
            "byte_mode": False,
            "ecn": True,
            "hard_drop": True,
            "mean_pkt_size": PACKET_BYTES,
        }
    if scheme == "mecn":
        return {
            "kind": "mecn",
            "limit": BUFFER_PKTS,
            "min_th": float(min_th),
            "mid_th": 2.0 * min_th,
            "max_th": 4.0 * min_th,
            "p1_max": P_MAX,
            "p2_max": P_MAX,
            "moderate_ramp": readings.moderate_ramp,
            "w_q": W_Q,
            "wait": True,
            "mean_pkt_size": PACKET_BYTES,
        }
    raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")


def _flow(setup: Setup, k: int, scheme: str, readings: Readings) -> dict[str, Any]:
    f: dict[str, Any] = {"name": f"s{k}", "src": f"s{k}", "dst": f"d{k}", "start": _s(setup.starts_s[k])}
    if setup.stops_s and setup.stops_s[k] is not None:
        f["stop"] = _s(setup.stops_s[k])
    if scheme == "ecn":
        f.update(cc="newreno", ecn="ecn")
    else:
        f.update(
            cc="mecn",
            ecn="mecn",
            cc_params={"max_window": WINDOW_PKTS, "escalation": readings.escalation},
            ecn_params={"cwr_clears": readings.cwr_clears, "escalation": readings.escalation},
        )
    return f


def scenario(
    setup: str | Setup,
    scheme: str,
    min_th: float,
    seed: int = 1,
    duration_s: float = DURATION_S,
    readings: Readings = Readings(),
    sample_interval: str = "10ms",
) -> Scenario:
    """One of §3's scenarios with one scheme at one ``min_th`` (packets)."""
    st = SETUPS[setup] if isinstance(setup, str) else setup
    nodes = [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
    links: list[dict[str, Any]] = []
    for k in range(st.n):
        nodes += [{"name": f"s{k}", "kind": "host"}, {"name": f"d{k}", "kind": "host"}]
        links.append({"a": f"s{k}", "b": "r1", "rate": ACCESS_RATE, "delay": _ms(st.source_delays_ms[k])})
    links.append(
        {
            "a": "r1",
            "b": "r2",
            "rate": BOTTLENECK_RATE,
            "delay": BOTTLENECK_DELAY,
            "queue": bottleneck_queue(scheme, min_th, readings),
            # ACKs only on the way back: never congested (under 5 % load).
            "queue_ba": {"kind": "droptail", "limit": 1000},
        }
    )
    for k in range(st.n):
        links.append({"a": "r2", "b": f"d{k}", "rate": ACCESS_RATE, "delay": _ms(SINK_DELAY_MS)})
    tag = readings.tag()
    data: dict[str, Any] = {
        "name": f"MECN §3 {st.title.split('. ', 1)[-1]} — {LABEL[scheme]}, min_th {min_th:g}" + (f" [{tag}]" if tag else ""),
        "duration": _s(duration_s),
        "seed": seed,
        "topology": {"kind": "explicit", "nodes": nodes, "links": links},
        "tcp": {
            **SIMULATOR_HOSTS,
            "mss": MSS,
            "initial_window": readings.initial_window,
            "rcv_buf": WINDOW_PKTS * MSS,
            "delayed_ack": False,
            "sack": False,
            "limited_transmit": False,
            "timestamps": False,
            "min_rto_s": MIN_RTO_S,
            "rto_floor": "rfc6298",
        },
        "measure": {"interval": sample_interval, "sample_ports": [PORT], "sample_flows": st.n <= 10},
        "flows": [_flow(st, k, scheme, readings) for k in range(st.n)],
    }
    return Scenario(data)


# ------------------------------------------------------------ scenario files (TOML)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _toml_lines(data: Mapping[str, Any], prefix: str = "") -> list[str]:
    def is_table_list(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)

    out = [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict) and not is_table_list(v)]
    for k, v in data.items():
        if isinstance(v, dict):
            out += ["", f"[{prefix}{k}]", *_toml_lines(v, f"{prefix}{k}.")]
    for k, v in data.items():
        if is_table_list(v):
            for item in v:
                out += ["", f"[[{prefix}{k}]]", *(f"{a} = {_toml_value(b)}" for a, b in item.items())]
    return out


def scenario_toml(setup: str, scheme: str, min_th: float = QUEUE_MIN_TH) -> str:
    """A §3 scenario as a commented TOML file."""
    st = SETUPS[setup]
    rtts = sorted({round(fixed_rtt_ms(d), 1) for d in st.source_delays_ms})
    head = [
        f"# MECN paper (seed 002) §3, scenario {st.title}.",
        f"# {LABEL[scheme]}; min_th = {min_th:g} packets (the experiments sweep it).",
        "# Sources —10 Mb/s— r1 —1.5 Mb/s, 20 ms— r2 —10 Mb/s, 4 ms— sinks; 1000-byte packets,",
        f"# window 25 packets, w_q = 0.002; RTT {', '.join(f'{r} ms' for r in rtts)}.",
        "# Written by ecnlab.experiments.mecn.write_scenario_files; readings in that module's doc.",
        "",
    ]
    return "\n".join(head + _toml_lines(scenario(setup, scheme, min_th).to_dict())) + "\n"


def scenario_file_name(setup: str, scheme: str) -> str:
    return f"{setup}-{scheme}.toml"


def write_scenario_files(directory: str | Path) -> list[Path]:
    """Writes every §3 scenario for both schemes into ``directory``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for key in SETUPS:
        for scheme in SCHEMES:
            p = d / scenario_file_name(key, scheme)
            p.write_text(scenario_toml(key, scheme), encoding="utf-8")
            out.append(p)
    return out


# ------------------------------------------------------------------------ metrics


def drops(r: Results) -> float:
    return float(r.port(PORT)["dropped_pkts"])


def efficiency(r: Results) -> float:
    """Bottleneck busy fraction over the run."""
    return float(r.port(PORT)["utilization"])


def goodput_efficiency(r: Results) -> float:
    """Payload delivered to the sinks over what the link could carry in whole packets."""
    dur = r.meta["duration_s"]
    delivered = sum(x or 0 for x in r.flows["bytes_delivered"].to_list())
    return delivered * 8 / (BOTTLENECK_BPS * dur * MSS / PACKET_BYTES)


def flow_throughput_mbps(name: str) -> Callable[[Results], float]:
    return lambda r: r.flow(name)["goodput_bps"] / 1e6


def fixed_rtt_ms(source_delay_ms: float) -> float:
    """Propagation there and back plus serialisation of one data packet and one ACK on the
    three links of a source's path (no queueing)."""
    rates = (10e6, BOTTLENECK_BPS, 10e6)
    serial = sum((PACKET_BYTES + HEADER_BYTES) * 8 / r for r in rates)
    return 2 * (source_delay_ms + 20.0 + SINK_DELAY_MS) + 1e3 * serial


def _series(r: Results, kind: str) -> tuple[list[float], list[float]]:
    s = r.series(kind, PORT)
    return s["time_s"].to_list(), s["value"].to_list()


def _std(v: Sequence[float]) -> float:
    if len(v) < 2:
        return math.nan
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))


#: The second half of a run is "after convergence" for the oscillation measures.
STEADY_FROM = 0.5
#: Settling band of the average queue: within this fraction of its steady mean (and at least
#: ``SETTLE_MIN_BAND_PKTS``).
SETTLE_BAND = 0.2
SETTLE_MIN_BAND_PKTS = 1.0


def queue_stats(r: Results) -> dict[str, float]:
    """Oscillation and convergence of the bottleneck queue: standard deviation of the
    instantaneous and the average queue over the second half of the run, their means, and the
    settling time of the average (the last time it was outside ±``SETTLE_BAND`` of its
    second-half mean)."""
    dur = r.meta["duration_s"]
    t, q = _series(r, "queue_pkts")
    ta, a = _series(r, "queue_avg_pkts")
    steady = [x for tt, x in zip(t, q) if tt >= STEADY_FROM * dur]
    steady_a = [x for tt, x in zip(ta, a) if tt >= STEADY_FROM * dur]
    m = sum(steady_a) / len(steady_a) if steady_a else math.nan
    band = max(SETTLE_BAND * m, SETTLE_MIN_BAND_PKTS)
    settle = 0.0
    for tt, x in zip(ta, a):
        if abs(x - m) > band:
            settle = tt
    q_mean = sum(steady) / len(steady) if steady else math.nan
    return {
        "q_std": _std(steady),
        "q_cv": _std(steady) / q_mean if q_mean else math.nan,
        "avg_std": _std(steady_a),
        "q_mean": q_mean,
        "avg_mean": m,
        "settle_s": settle,
    }


# ------------------------------------------------------------------------ helpers


@dataclass(frozen=True)
class Variant:
    """A scheme under one set of readings, as the experiments run and label it."""

    key: str
    scheme: str
    label: str
    color: str
    readings: Readings = Readings()


ECN = Variant("ecn", "ecn", "ECN (RED + Reno)", "#c0504d")
MECN = Variant("mecn", "mecn", "MECN", "#3b6ea8")
BASE = (ECN, MECN)


def variants(reading: Reading) -> tuple[Variant, ...]:
    """ECN and MECN under ``reading``."""
    rd = readings_of(reading)
    return tuple(replace(v, readings=rd) for v in BASE)


def _cfg(v: Variant, min_th: float, extra: str = "") -> str:
    return f"{v.key}{extra}-min{min_th:g}"


def _sweep_runs(
    setup: str,
    min_ths: Iterable[float],
    seeds: Sequence[int],
    variants: Sequence[Variant] = BASE,
    extra: str = "",
    interval: str = "100ms",
) -> dict[str, Scenario]:
    configs = {
        _cfg(v, m, extra): scenario(setup, v.scheme, m, readings=v.readings, sample_interval=interval)
        for v in variants
        for m in min_ths
    }
    return for_seeds(configs, seeds)


def _by_min_th(
    runs: RunSet, min_ths: Sequence[float], f: Callable[[Results], float], variants: Sequence[Variant] = BASE, extra: str = ""
) -> dict[str, list[Stat]]:
    return {v.key: [runs.stat(_cfg(v, m, extra), f) for m in min_ths] for v in variants}


def _sweep_figure(
    ctx: Context,
    min_ths: Sequence[float],
    stats: Mapping[str, list[Stat]],
    title: str,
    ylabel: str,
    name: str,
    caption: str,
    variants: Sequence[Variant] = BASE,
) -> None:
    fig, ax = new_figure(title, "min_th (packets)", ylabel)
    for v in variants:
        ax.plot(min_ths, [s.mean for s in stats[v.key]], color=v.color, lw=1, alpha=0.6)
        errorbar_with_spread(ax, min_ths, stats[v.key], label=f"{v.label} ({len(ctx.seeds)} seeds)", color=v.color)
    ax.legend(fontsize=8)
    ctx.figure(fig, name, caption)


def _sweep_table(
    ctx: Context, min_ths: Sequence[float], stats: Mapping[str, list[Stat]], what: str, caption: str, variants: Sequence[Variant] = BASE
) -> None:
    rows = []
    for i, m in enumerate(min_ths):
        row: dict[str, Any] = {"min_th": m}
        for v in variants:
            row[f"{v.label}: {what}"] = str(stats[v.key][i])
        for v in variants[1:]:
            row[f"{v.key} − ecn"] = stats[v.key][i].mean - stats[variants[0].key][i].mean
        rows.append(row)
    ctx.table(pl.DataFrame(rows), caption=caption)


def _interp(x: float, xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Linear interpolation of y at x over points sorted by xs; None outside their range."""
    pts = sorted(zip(xs, ys))
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return None


def _vs(other: str, a: Stat, b: Stat) -> str:
    """"ECN 12 [10 – 14]": the other scheme's values beside ours."""
    return f"{other} {b}"


def _paired(runs: RunSet, a: str, b: str, f: Callable[[Results], Any], kind: str, metric: str, paper: str, text: str, unit: str = "", note: str = "") -> Comparison:
    """A claim ``kind`` (less / greater) between two configurations, per seed; ours shows the
    first configuration's values."""
    return claim(metric, Claim(kind), runs.per_seed(a, f), runs.per_seed(b, f), paper=paper, unit=unit, text=text, ours=runs.stat(a, f), note=note)


def _paper(fig: str, claim: str) -> str:
    return f"{claim} ({fig}, read from the figure, approximate)"


SETUP_NOTE = (
    "Setup (module ecnlab.experiments.mecn states every reading): 1000-byte packets, 40-byte ACKs, "
    f"window {WINDOW_PKTS} packets (receive window; MECN's controller cap too), w_q = {W_Q}, "
    f"max_p = P1max = P2max = {P_MAX}, gentle off, buffer {BUFFER_PKTS} packets, {DURATION_S:g} s runs; "
    "TCP: NewReno recovery without SACK (the paper: ns-2 Reno), an ACK per segment, initial window "
    f"{Readings().initial_window}, minimum RTO {MIN_RTO_S} s; ECN = NewReno halving on CE over RED "
    "(max_th = 2·min_th); MECN = ×0.8 incipient, ×0.6 moderate, ×0.5 loss over multilevel RED "
    "(mid_th = 2·min_th, max_th = 4·min_th), moderate-region probability rising from 0. The paper's "
    "figures carry no values in its text: the comparisons check the directions it states."
)


# ---------------------------------------------------------------------- experiments


@register
class Queue(Experiment):
    name = "mecn.queue"
    title = "Queue length over time, two sources with the same RTT (Figs. 3a/3b)"
    source = "MECN paper (seed 002) §3, Figs. 3a and 3b and the text beside them"
    description = (
        "Scenario 1 (two bulk sources, RTT 59 ms) with classic ECN and with MECN; Fig. 3's "
        f"min_th is not given, the panels use {QUEUE_MIN_TH:g} packets and the whole sweep is run "
        "too. The paper: \"in case of MECN the queue length converge faster and with less "
        "oscillations compared to ECN\". Oscillation = standard deviation of the instantaneous "
        "and of the average queue over the second half of the run, absolute and relative to the "
        "mean queue, and at equal mean queue (ECN's curve interpolated at MECN's mean); "
        f"convergence = settling time of the average queue into ±{SETTLE_BAND:.0%} of its "
        "second-half mean."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def min_ths(self, quick: bool) -> tuple[float, ...]:
        return (2.0, QUEUE_MIN_TH, 10.0, 15.0) if quick else FULL_MIN_THS[:10]

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        return _sweep_runs("s1-two-same-rtt", self.min_ths(quick), seeds, variants(reading), interval="10ms")

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        ms = self.min_ths(ctx.quick)
        VARIANTS = BASE
        st = {(v.key, m): runs.per_seed(_cfg(v, m), queue_stats) for v in VARIANTS for m in ms}

        def stat(v: Variant, key: str, m: float = QUEUE_MIN_TH) -> Stat:
            return Stat.of(x[key] for x in st[(v.key, m)].values())

        def per(v: Variant, key: str, m: float = QUEUE_MIN_TH) -> dict[int, float]:
            return {seed: x[key] for seed, x in st[(v.key, m)].items()}

        comps = [
            Comparison(
                "fixed RTT of the topology",
                PAPER_RTT_MS,
                Stat.of([fixed_rtt_ms(SOURCE_DELAY_MS)]),
                unit="ms",
                claim="59 ms including transmission times (§3); a check of the scenario, not a run result",
                note="computed from the scenario's links: propagation plus serialisation of a 1000-byte packet and a 40-byte ACK on each link",
            )
        ]
        for key, what, text in (
            ("q_std", "std of the instantaneous queue", "MECN smaller (less oscillation)"),
            ("q_cv", "std / mean of the instantaneous queue", "MECN smaller (less oscillation)"),
            ("avg_std", "std of the average queue", "MECN smaller (less oscillation)"),
            ("settle_s", "settling time of the average queue", "MECN shorter (converges faster)"),
        ):
            comps.append(
                claim(
                    f"{what}, min_th {QUEUE_MIN_TH:g}: MECN vs ECN",
                    Claim("less"),
                    per(MECN, key),
                    per(ECN, key),
                    paper=_paper("Fig. 3", text),
                    unit="s" if key == "settle_s" else ("" if key == "q_cv" else "packets"),
                    text=text,
                    ours=stat(MECN, key),
                    note=_vs("ECN", stat(MECN, key), stat(ECN, key)) + ("; second half of the run" if key != "settle_s" else ""),
                )
            )
        # Per seed: ECN's oscillation interpolated at MECN's mean queue over ECN's min_th sweep.
        at_equal: dict[int, Any] = {}
        for seed, x in st[(MECN.key, QUEUE_MIN_TH)].items():
            pts = [(st[(ECN.key, m)].get(seed), m) for m in ms]
            xs = [p["q_mean"] for p, _ in pts if isinstance(p, dict)]
            ys = [p["q_std"] for p, _ in pts if isinstance(p, dict)]
            ref = _interp(x["q_mean"], xs, ys)
            at_equal[seed] = ref if ref is not None else Excluded(f"MECN's mean queue {x['q_mean']:.1f} is outside ECN's range over the sweep")
        comps.append(
            claim(
                f"std of the instantaneous queue at equal mean queue, min_th {QUEUE_MIN_TH:g}: MECN vs ECN",
                Claim("less"),
                per(MECN, "q_std"),
                at_equal,
                paper=_paper("Fig. 3", "MECN smaller (less oscillation)"),
                unit="packets",
                text="MECN smaller than ECN at the same mean queue (delay)",
                ours=stat(MECN, "q_std"),
                note="ECN's std interpolated, per seed, at MECN's mean queue over ECN's min_th sweep",
            )
        )
        for v in VARIANTS:
            comps.append(
                Comparison(
                    f"mean instantaneous queue, second half, min_th {QUEUE_MIN_TH:g}: {v.label}",
                    None,
                    stat(v, "q_mean"),
                    None,
                    unit="packets",
                    note="no claim in the paper",
                )
            )

        rows = []
        for v in VARIANTS:
            for m in ms:
                row = {"variant": v.label, "min_th": m}
                for key in ("q_mean", "q_std", "q_cv", "avg_mean", "avg_std", "settle_s"):
                    row[key] = str(stat(v, key, m))
                row["drops"] = str(runs.stat(_cfg(v, m), drops))
                rows.append(row)
        ctx.table(pl.DataFrame(rows), caption="Queue statistics over the second half (packets), settling time (s), drops; mean [min – max] over seeds")

        fig, ax = new_figure("Oscillation against mean queue, two sources (min_th swept)", "mean instantaneous queue (packets)", "std of the queue (packets)")
        for v in VARIANTS:
            xs = [stat(v, "q_mean", m).mean for m in ms]
            ys = [stat(v, "q_std", m).mean for m in ms]
            ax.plot(xs, ys, "o-", color=v.color, label=v.label, ms=4)
            for m, x, y in zip(ms, xs, ys):
                if m in (ms[0], QUEUE_MIN_TH, ms[-1]):
                    ax.annotate(f"{m:g}", (x, y), fontsize=7, color=v.color, xytext=(3, 3), textcoords="offset points")
        ax.legend(fontsize=8)
        ctx.figure(fig, "oscillation_vs_mean_queue", "Standard deviation of the instantaneous queue against its mean (second half of the run, mean over seeds), one point per min_th (labels: min_th).")

        for v, panel in ((ECN, "3a"), (MECN, "3b")):
            r = runs.over_seeds(_cfg(v, QUEUE_MIN_TH))[0]
            title = f"Fig. {panel[:2]}: queue, two sources, {v.label}, min_th {QUEUE_MIN_TH:g}"
            fig, ax = new_figure(title, "time (s)", "packets")
            t, q = _series(r, "queue_pkts")
            ta, a = _series(r, "queue_avg_pkts")
            ax.plot(t, q, lw=0.8, color="#9aa7b8", label="instantaneous")
            ax.plot(ta, a, lw=1.6, color=v.color, label="average (w_q = 0.002)")
            ths = [(1, "min_th"), (2, "max_th")] if v.scheme == "ecn" else [(1, "min_th"), (2, "mid_th"), (4, "max_th")]
            for f, lab in ths:
                ax.axhline(f * QUEUE_MIN_TH, ls=":", lw=0.8, color="#555")
                ax.text(0.02 * r.meta["duration_s"], f * QUEUE_MIN_TH, lab, fontsize=7, va="bottom", color="#555")
            ax.set_xlim(0, r.meta["duration_s"])
            ax.set_ylim(0, 42)
            ax.legend(fontsize=8, loc="upper right")
            ctx.figure(fig, f"fig{panel}_{v.key}", f"Bottleneck queue sampled every 10 ms, seed {r.meta['seed']} (the paper's Fig. {panel[:2]}).")
        return comps


@register
class Efficiency(Experiment):
    name = "mecn.efficiency"
    title = "Link efficiency vs min_th, two sources (Fig. 4)"
    source = "MECN paper (seed 002) §3, Fig. 4 and the text beside it"
    description = (
        "Scenario 1 (two sources, same RTT), min_th swept; link efficiency = the bottleneck's "
        "busy fraction over the 10 s run. The paper: MECN \"improved the link efficiency for all "
        "values of min_threshold\" and \"the best link efficiency in case of MECN is reached for "
        "a lower value of min_threshold\". \"Reaching the best\" is read as the smallest min_th "
        f"within {100 * 0.005:.1f} percentage points of the scheme's best efficiency (the curves "
        "flatten near 1)."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES

    def bottleneck(self, run_name: str) -> str | None:
        return PORT
    #: Efficiencies within this of a scheme's best count as reaching it.
    PLATEAU = 0.005

    def min_ths(self, quick: bool) -> tuple[float, ...]:
        return QUICK_MIN_THS if quick else FULL_MIN_THS

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        return _sweep_runs("s1-two-same-rtt", self.min_ths(quick), seeds, variants(reading))

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        ms = self.min_ths(ctx.quick)
        eff = _by_min_th(runs, ms, efficiency)
        good = _by_min_th(runs, ms, goodput_efficiency)
        comps = []
        for i, m in enumerate(ms):
            comps.append(
                _paired(
                    runs, _cfg(MECN, m), _cfg(ECN, m), efficiency, "greater",
                    f"link efficiency at min_th = {m:g}: MECN vs ECN",
                    _paper("Fig. 4", "MECN higher than ECN"),
                    "MECN higher than ECN at every min_th",
                    note=_vs("ECN", eff["mecn"][i], eff["ecn"][i]),
                )
            )

        def reach(v: Variant) -> dict[int, Any]:
            """Per seed, the smallest min_th within PLATEAU of that seed's best efficiency."""
            by_m = [runs.per_seed(_cfg(v, m), efficiency) for m in ms]
            out: dict[int, Any] = {}
            for seed in by_m[0]:
                vals = [d.get(seed) for d in by_m]
                if any(not isinstance(x, (int, float)) for x in vals):
                    out[seed] = Excluded("a min_th of the sweep has no value")
                    continue
                best = max(vals)
                out[seed] = next(m for m, x in zip(ms, vals) if x >= best - self.PLATEAU)
            return out

        comps.append(
            claim(
                "min_th where the best efficiency is reached: MECN vs ECN",
                Claim("less"),
                reach(MECN),
                reach(ECN),
                paper=_paper("Fig. 4", "MECN's lower than ECN's"),
                unit="packets",
                text="MECN reaches its best at a lower min_th",
                ours=Stat.of(reach(MECN).values()),
                note=f"ECN {Stat.of(reach(ECN).values())}",
            )
        )
        _sweep_figure(ctx, ms, eff, "Fig. 4: link efficiency, two sources", "link efficiency (busy fraction)", "fig4_efficiency", "Bottleneck busy fraction over 10 s against min_th; mean with min–max over seeds.")
        _sweep_table(ctx, ms, eff, "efficiency", "Link efficiency by min_th (mean [min – max] over seeds)")
        _sweep_table(ctx, ms, good, "goodput/capacity", "Goodput over capacity by min_th (payload delivered, for reference)")
        return comps


@register
class Throughput(Experiment):
    name = "mecn.throughput"
    title = "Throughput of one source vs min_th, ten overlapping sources (Fig. 5)"
    source = "MECN paper (seed 002) §3, Fig. 5 and the text beside it"
    description = (
        "Scenario 4 (ten sources starting 0.3 s apart, same RTT), min_th swept; the throughput of "
        "the first source (s0) over the run, and the mean per source. The paper: \"MECN provides "
        "better throughput than simple ECN\"."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def min_ths(self, quick: bool) -> tuple[float, ...]:
        return QUICK_MIN_THS if quick else FULL_MIN_THS

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        return _sweep_runs("s4-ten-overlapping", self.min_ths(quick), seeds, variants(reading))

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        ms = self.min_ths(ctx.quick)
        s0 = _by_min_th(runs, ms, flow_throughput_mbps("s0"))
        per_source = _by_min_th(runs, ms, lambda r: sum(r.flows["goodput_bps"].to_list()) / r.flows.height / 1e6)
        eff = _by_min_th(runs, ms, efficiency)
        comps = []
        for i, m in enumerate(ms):
            comps.append(
                _paired(
                    runs, _cfg(MECN, m), _cfg(ECN, m), flow_throughput_mbps("s0"), "greater",
                    f"throughput of source s0 at min_th = {m:g}: MECN vs ECN",
                    _paper("Fig. 5", "MECN higher than ECN"),
                    "MECN higher than ECN",
                    unit="Mb/s",
                    note=_vs("ECN", s0["mecn"][i], s0["ecn"][i]) + f"; mean per source ECN {per_source['ecn'][i].mean:.4f}, MECN {per_source['mecn'][i].mean:.4f}",
                )
            )
        _sweep_figure(ctx, ms, s0, "Fig. 5: throughput of one source (s0), ten overlapping sources", "throughput (Mb/s)", "fig5_throughput", "Throughput of the first source (starts at 0 s) over 10 s against min_th.")
        _sweep_table(ctx, ms, s0, "s0 throughput (Mb/s)", "Throughput of s0 by min_th")
        _sweep_table(ctx, ms, per_source, "mean per-source throughput (Mb/s)", "Mean throughput per source by min_th")
        _sweep_table(ctx, ms, eff, "link efficiency", "Link efficiency by min_th, ten sources")
        return comps


@register
class Drops(Experiment):
    name = "mecn.drops"
    title = "Drops vs min_th, two sources and five sources with different RTTs (Figs. 6, 7)"
    source = "MECN paper (seed 002) §3, Figs. 6 and 7 and the text beside them"
    description = (
        "Packets dropped at the bottleneck over the 10 s run against min_th: two sources (Fig. 6, "
        "read as scenario 1, same RTT; scenario 5, different RTTs, beside it) and five sources "
        "with different RTTs (Fig. 7, scenario 6). The paper: \"in case of MECN there are less "
        "losses than with simple ECN and MECN reaches the point of zero loss with less "
        "min_threshold than ECN\"; with five sources \"reaching the point of zero losses with much "
        "less min_threshold\"."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES

    def bottleneck(self, run_name: str) -> str | None:
        return PORT
    SETS = (
        ("fig6", "s1-two-same-rtt", "Fig. 6", "two sources, same RTT"),
        ("fig6rtt", "s5-two-different-rtt", "Fig. 6 (other reading)", "two sources, RTT 59/99 ms"),
        ("fig7", "s6-five-different-rtt", "Fig. 7", "five sources, RTT 59–99 ms"),
    )

    def min_ths(self, quick: bool) -> tuple[float, ...]:
        return QUICK_MIN_THS if quick else FULL_MIN_THS

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        out: dict[str, Scenario] = {}
        for tag, setup, _, _ in self.SETS:
            out.update(_sweep_runs(setup, self.min_ths(quick), seeds, variants(reading), extra=f"-{tag}"))
        return out

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        ms = self.min_ths(ctx.quick)
        comps = []
        for tag, setup, fig, what in self.SETS:
            d = _by_min_th(runs, ms, drops, extra=f"-{tag}")
            for i, m in enumerate(ms):
                comps.append(
                    _paired(
                        runs, _cfg(MECN, m, f"-{tag}"), _cfg(ECN, m, f"-{tag}"), drops, "less",
                        f"{what}: drops at min_th = {m:g}: MECN vs ECN",
                        _paper(fig, "MECN fewer than ECN"),
                        "MECN fewer than ECN",
                        unit="packets",
                        note=_vs("ECN", d["mecn"][i], d["ecn"][i]),
                    )
                )
            z = {v.key: self._first_zero(runs, ms, v, f"-{tag}") for v in BASE}
            comps.append(
                claim(
                    f"{what}: smallest min_th from which no drop: MECN vs ECN",
                    Claim("less"),
                    z["mecn"],
                    z["ecn"],
                    paper=_paper(fig, "MECN's lower than ECN's"),
                    unit="packets",
                    text="MECN reaches zero drops at a lower min_th (∞: not within the sweep)",
                    ours=Stat.of(z["mecn"].values()),
                    note=f"ECN {Stat.of(z['ecn'].values())}; per seed: the smallest min_th from which every larger one of the sweep dropped nothing",
                )
            )
            _sweep_figure(ctx, ms, d, f"{fig}: drops, {what}", "packets dropped in 10 s", f"{tag}_drops", f"Packets dropped at the bottleneck ({what}) against min_th.")
            _sweep_table(ctx, ms, d, "drops", f"Drops by min_th, {what}")
        return comps


    @staticmethod
    def _first_zero(runs: RunSet, ms: Sequence[float], v: Variant, extra: str) -> dict[int, float]:
        by_m = [runs.per_seed(_cfg(v, m, extra), drops) for m in ms]
        out: dict[int, float] = {}
        for seed in by_m[0]:
            best = math.inf
            for m, dm in reversed(list(zip(ms, by_m))):
                if dm.get(seed) == 0:
                    best = m
                else:
                    break
            out[seed] = best
        return out


def jain_fairness(r: Results) -> float:
    """Jain's index over the flows' throughputs (each over its own active time)."""
    x = [v or 0.0 for v in r.flows["goodput_bps"].to_list()]
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x)) if any(x) else math.nan


@register
class Scenarios(Experiment):
    name = "mecn.scenarios"
    title = "The six scenarios of §3 at one min_th"
    source = "MECN paper (seed 002) §3 (scenario list) and its summary: \"All our simulation experiments show that Multi-level ECN works better than simple ECN\"; abstract: \"less losses, better network utilization, better fairness\""
    description = (
        f"Each of §3's six scenarios with classic ECN and MECN at min_th = {QUEUE_MIN_TH:g} "
        "packets: drops, link efficiency, Jain's fairness index over the flows' throughputs, mean "
        "queue. The paper shows figures for only some of them; its summary and abstract claim "
        "fewer losses, higher utilisation and better fairness throughout. Scenario 2's first "
        "source stops writing at 9.5 s (its last segment carries the FIN)."
    )
    quick_seeds = 5
    full_seeds = 10
    axes = AXES

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        configs = {
            f"{v.key}-{key}": scenario(key, v.scheme, QUEUE_MIN_TH, readings=v.readings, sample_interval="100ms")
            for key in SETUPS
            for v in variants(reading)
        }
        return for_seeds(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        comps = []
        rows = []
        for key, st in SETUPS.items():
            got = {
                v.key: {
                    "drops": runs.stat(f"{v.key}-{key}", drops),
                    "eff": runs.stat(f"{v.key}-{key}", efficiency),
                    "jain": runs.stat(f"{v.key}-{key}", jain_fairness),
                    "queue": runs.stat(f"{v.key}-{key}", lambda r: r.port(PORT)["mean_queue_pkts"]),
                }
                for v in BASE
            }
            e, m = got["ecn"], got["mecn"]
            short = st.title.split(". ", 1)[-1]
            for what, k, f, kind, text in (
                ("drops", "drops", drops, "less", "MECN fewer than ECN"),
                ("link efficiency", "eff", efficiency, "greater", "MECN higher than ECN"),
                ("Jain fairness", "jain", jain_fairness, "greater", "MECN higher than ECN (abstract)"),
            ):
                comps.append(
                    _paired(
                        runs, f"mecn-{key}", f"ecn-{key}", f, kind,
                        f"{st.title.split('.')[0]}. {short}: {what}: MECN vs ECN",
                        f"{text.split(' (')[0]} (summary of §3; no figure for every scenario)",
                        text,
                        unit="packets" if k == "drops" else "",
                        note=_vs("ECN", m[k], e[k]),
                    )
                )
            for v in BASE:
                rows.append(
                    {
                        "scenario": st.title,
                        "scheme": v.label,
                        "drops": str(got[v.key]["drops"]),
                        "efficiency": str(got[v.key]["eff"]),
                        "Jain fairness": str(got[v.key]["jain"]),
                        "mean queue (packets)": str(got[v.key]["queue"]),
                    }
                )
        ctx.table(pl.DataFrame(rows), caption=f"The six scenarios at min_th = {QUEUE_MIN_TH:g} (mean [min – max] over seeds)")
        r = runs.over_seeds("mecn-s2-two-overlapping")[0]
        ctx.note(
            "Scenario 2, MECN, seed 1: source s0 completed at "
            f"{r.flow('s0')['fct_s']:.2f} s after stopping at 9.5 s; s1 ran 0.5–10 s at "
            f"{r.flow('s1')['goodput_bps'] / 1e6:.3f} Mb/s."
        )
        return comps
