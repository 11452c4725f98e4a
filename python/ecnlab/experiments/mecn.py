"""MECN — Durresi, Sridharan, Liu, Goyal, Jain, "Traffic Management using Multilevel
Explicit Congestion Notification" (seed 002), §3: multilevel RED with graded Reno decreases
(MECN) against RED marking CE with Reno halving (classic ECN), on the paper's topology

    n sources —10 Mb/s, 2 ms— R1 —1.5 Mb/s, 20 ms— R2 —10 Mb/s, 4 ms— n sinks

(fixed RTT 59 ms; the bottleneck is the R1→R2 port, ``r1->r2``).

Experiments: ``mecn.queue`` (Figs. 3a/3b), ``mecn.efficiency`` (Fig. 4), ``mecn.throughput``
(Fig. 5), ``mecn.drops`` (Figs. 6 and 7), and ``mecn.scenarios``, the six scenarios of §3 at
one min_th: our operationalisation of the paper's summary sentence, beyond its figures. The
six scenarios are :data:`SETUPS`; :func:`scenario` builds any of them for either scheme, and
``scenarios/mecn/*.toml`` are the same scenarios as files (:func:`write_scenario_files` writes
them; a test checks they match).

The paper's figures are images whose values are not in its text; the text states directions
("MECN converges faster with less oscillation", "higher efficiency for all values of
min_threshold", "fewer losses, zero loss at a lower min_th") and two sizes in words (Fig. 7:
"considerable" fewer losses, zero loss at "much less" min_th), so the comparisons check those,
each direction with its smallest effect that counts (module constants), each claim over the
min_th sweep as a family with Holm's correction. Numbers the text does state (RTT 59 ms,
1000/40-byte packets, window 25, w_q = 0.002, the threshold ratios, the decrease factors) are
set or checked; every other parameter has its source in :meth:`MecnExperiment.provenance`.

Where the paper is silent, the default reading is ns-2's default (the paper's simulator:
``tcl/lib/ns-default.tcl``, ``queue/red.cc``, ``tcp/tcp.cc``), and our former choice is the
alternative reading (:class:`Readings`, :data:`AXES`):

- Hosts: ns-2's (``NS2_HOSTS``): an ACK per segment, no SACK, no timestamps, the window cut
  at once on a mark or a loss (no PRR, no F-RTO, RACK or TLP), initial window 2 (ns-2's
  ``windowInit_`` since 2001/5/26; ``initial_window`` axis: 1 before). Deviations, each a
  source: 1000-byte packets on the wire (``MSS`` = 960 payload + 40 header bytes: ns-2 counted
  no headers before 2001/11/28, and the paper's RTT of 59 ms is 52 ms of propagation + 6.9 ms
  of a 1000-byte packet's and 0.3 ms of a 40-byte ACK's serialisation); a receive window of
  25 packets (the figures' "window = 25"; ns-2's ``window_``, which caps min(cwnd, window));
  no limited transmit (ns-2's ``singledup_`` became 1 only on 2001/11/28, after the paper,
  which cites RFC 2481 and not RFC 3168 of Sept. 2001).
- Both arms react to congestion as ns-2's Reno: a mark cuts the window at once from
  min(cwnd, window_), at most once per window of data, and no ACK carrying ECN-Echo grows the
  window (``tcp.cc`` ``recv_newack_helper``). Classic ECN is ``newreno`` with
  ``reduce_from = "cwnd"``, ns-2's initial ssthresh = ``window_`` and its 1/cwnd increase per
  ACK (``per_ack``); its connection holds the window from the mark until an ACK goes beyond
  the data then sent, the ACKs that carry ns-2's echo. MECN's sender opens no window on an
  ACK carrying a level echo (``ecnlab::schemes::mecn``). Loss recovery is NewReno's (RFC 6582)
  in both arms where ns-2's Reno leaves fast recovery at the first partial ACK and waits for a
  timeout for the next loss (not modelled: the claims that depend on it are listed in the
  report). NewReno's window may exceed the receive window by one segment where ns-2's
  window() caps it, so its cut can be half a segment larger.
- Buffer: not given; ns-2's ``Queue limit_`` 50 packets (``buffer`` axis: 200, which holds
  every threshold swept, our former choice). A threshold above the buffer is allowed, as in
  ns-2: the buffer then overflows before the average reaches it.
- Classic ECN's RED: packet mode, ``max_th = 2·min_th`` (§3), ``max_p`` = 0.1 (ns-2's
  ``linterm_`` 10; P1max = P2max = 0.1 for MECN), ``w_q`` = 0.002 (the figures' titles),
  ``wait`` on, ``mean_pktsize_`` 500 (the idle-time correction), ``gentle`` on (ns-2's
  ``gentle_`` changed from false to true on 2001/4/23, at the paper's time; ``ecn_gentle``
  axis: off, as MECN's "all dropped above max_th"): ECT packets are marked between max_th and
  2·max_th and forced drops start at 2·max_th = 4·min_th, where MECN's start too.
- ECT on retransmissions: ns-2's TCP marks every data packet ECT, retransmissions included
  (``tcp.cc`` ``output()``); ``ect_retransmissions`` axis: RFC 3168's Not-ECT. Both arms.
  The handshake is RFC 3168's (SYN and SYN-ACK Not-ECT, as ns-2's since ``syn_`` became true
  on 2001/5/17); a SYN the RED drops is counted in ``dropped_early``.
- MECN: ``mid_th = 2·min_th``, ``max_th = 2·mid_th``; the module readings of
  ``ecnlab::schemes::mecn`` (the moderate-region probability from 0, ``moderate_ramp``: which
  makes the marking probability fall from P1max to 0 at mid_th — non-monotone — where
  ``continue_from_p1max`` keeps it at P1max; the receiver's "first level" rule,
  ``cwr_clears``: switching to the higher level at the CWR instead is the same sender
  behaviour under ``escalation = ignore``; one reduction per window, ``escalation``). Its
  window never falls below 2 segments (ns-2's Reno lets it reach 1 and backs the timer off).
- Different RTTs (scenarios 5, 6): "changing the propagation delay between the source and R1";
  the values are not given. Ours: source-link delays 2–22 ms (RTT 59–99 ms;
  ``rtt_spread`` axis: 2–82 ms, RTT 59–219 ms).
- Fig. 3's min_th is not given: ``QUEUE_MIN_TH`` = 5 packets (ns-2's ``thresh_`` before
  12/2001).
- Fig. 4's "link efficiency" is not defined: payload delivered over what the link can carry
  in payload over the run (retransmissions and headers do not count); the busy fraction is
  tabled beside it.
- Fig. 5's "one individual source" among ten: a source's throughput is a share of a saturated
  link, so the claim is decided on the mean over the ten sources (the aggregate: no source is
  picked); the first source (s0) is the figure. Fig. 5's title lacks "window = 25"
  (``fig5_window`` axis: ns-2's ``window_`` 20).
- Fig. 6's "configuration with two sources" is scenario 1 (same RTT, as Fig. 4's two
  sources); ``fig6_rtt`` axis: scenario 5 (different RTTs). Fig. 7's caption says
  "Throughput in ten sources simulation" while its title is "Drops Vs Threshold … window =25"
  and the text speaks of losses with five sources with different RTTs: we follow the text
  (scenario 6).
- Durations and starts: every run lasts ``DURATION_S`` = 10 s (the only duration given, scenario
  2's); scenarios 1, 3, 5 and 6 start every flow at 0 s and scenario 4 runs every flow to the
  end (the paper gives no start or stop for them).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import polars as pl

from ..plots import errorbar_with_spread, new_figure
from ..results import Results
from ..scenario import Scenario
from . import register
from .base import (
    NS2_HOSTS,
    Comparison,
    Context,
    Experiment,
    Reading,
    ReadingAxis,
    RunSet,
    SeedValues,
    Source,
    Stat,
    assumption,
    claim,
    default,
    for_seeds,
    from_text,
    hosts_tcp,
    incomparable,
    newreno_params,
    paper,
)
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
#: The figures' "window = 25" (packets).
WINDOW_PKTS = 25
#: ns-2's Agent/TCP window_, the reading of Fig. 5, whose title lacks "window = 25".
NS2_WINDOW_PKTS = 20
W_Q = 0.002
#: ns-2's Queue/RED linterm_ 10; the paper: P1max = P2max.
P_MAX = 0.1
#: ns-2's Queue limit_ (every queue of the topology).
NS2_BUFFER_PKTS = 50
#: Our former buffer: holds every threshold swept (MECN's max_th = 4·min_th up to 120).
LARGE_BUFFER_PKTS = 200
#: ns-2's Queue/RED mean_pktsize_ (the idle-time correction of the average).
NS2_MEAN_PKTSIZE = 500
DURATION_S = 10.0
#: Source-link delays of scenarios 5 (two sources) and 6 (five), by ``rtt_spread`` reading.
DIFFERENT_RTT_DELAYS_MS = {
    "59-99ms": {2: (2.0, 22.0), 5: (2.0, 7.0, 12.0, 17.0, 22.0)},
    "59-219ms": {2: (2.0, 82.0), 5: (2.0, 22.0, 42.0, 62.0, 82.0)},
}
QUEUE_MIN_TH = 5.0

# ----------------------------------------------------- the smallest effects that count

#: Link efficiency and throughput: half a percent (the curves of Fig. 4 flatten near 1; a
#: smaller gap is below a figure's resolution).
EFFICIENCY_MIN_EFFECT = 0.005
#: Drops: a pair of counts differs when it differs by at least DROPS_FLOOR_PKTS packets and
#: by DROPS_MIN_EFFECT of the larger (one packet in 10 s is no finding).
DROPS_FLOOR_PKTS = 2
DROPS_MIN_EFFECT = 0.10
#: Queue oscillation, convergence time and delay: a tenth (two queue traces closer than that
#: look alike in a figure such as Fig. 3).
QUEUE_MIN_EFFECT = 0.10
#: Fig. 7's words as sizes (ours; the paper gives no number): "considerable" fewer losses is
#: more than 30 % fewer; zero loss at "much less" min_threshold is a min_th more than 40 % lower.
CONSIDERABLE = 0.30
MUCH_LESS = 0.40

SCHEMES = ("ecn", "mecn")
LABEL = {"ecn": "ECN (RED + Reno)", "mecn": "MECN"}
COLOR = {"ecn": "#c0504d", "mecn": "#3b6ea8"}

#: min_th values (packets) of the sweeps.
FULL_MIN_THS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0)
QUICK_MIN_THS = (2.0, 4.0, 6.0, 10.0, 15.0, 25.0)


@dataclass(frozen=True)
class Setup:
    """One scenario of §3: sources, their start (and stop) times and source-link delays
    (``None``: the ``rtt_spread`` reading's)."""

    key: str
    title: str
    starts_s: tuple[float, ...]
    source_delays_ms: tuple[float, ...] | None
    stops_s: tuple[float | None, ...] | None = None

    @property
    def n(self) -> int:
        return len(self.starts_s)

    def delays_ms(self, rtt_spread: str) -> tuple[float, ...]:
        return self.source_delays_ms if self.source_delays_ms is not None else DIFFERENT_RTT_DELAYS_MS[rtt_spread][self.n]


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
        Setup("s5-two-different-rtt", "5. Two connections with different RTTs", (0.0, 0.0), None),
        Setup("s6-five-different-rtt", "6. Five connections with different RTTs", (0.0,) * 5, None),
    )
}


@dataclass(frozen=True)
class Readings:
    """Points the paper leaves open, as parameters (defaults: ns-2's default where the paper
    is silent, see the module doc; the other values in :data:`AXES`)."""

    #: Bottleneck buffer in packets.
    buffer: int = NS2_BUFFER_PKTS
    #: Classic ECN's RED marks between max_th and 2·max_th (ns-2's gentle_).
    ecn_gentle: bool = True
    #: Retransmissions ECT (ns-2) or Not-ECT (RFC 3168), both arms.
    ect_retransmissions: bool = True
    #: Initial window in segments (ns-2 windowInit_: 2 since 2001/5/26, 1 before).
    initial_window: int = 2
    #: MECN's moderate-region probability: "from_zero" or "continue_from_p1max".
    moderate_ramp: str = "from_zero"
    #: What a CWR stops the MECN receiver echoing: "first_level" or "all".
    cwr_clears: str = "first_level"
    #: A higher MECN level within a reduced window: "ignore" or "top_up".
    escalation: str = "ignore"
    #: Source-link delays of the different-RTT scenarios (a key of DIFFERENT_RTT_DELAYS_MS).
    rtt_spread: str = "59-99ms"
    #: Receive window (and MECN's cap) of Fig. 5's runs, in packets.
    fig5_window: int = WINDOW_PKTS
    #: Fig. 6's two sources: "same" RTT (scenario 1) or "different" (scenario 5).
    fig6_rtt: str = "same"

    def tag(self) -> str:
        """Short label of the readings that differ from the defaults ("" for none)."""
        d = Readings()
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self) if getattr(self, f.name) != getattr(d, f.name))


#: Every reading as an axis (first value: the default). Each experiment lists those that
#: change its runs.
AXES: dict[str, ReadingAxis] = {
    a.name: a
    for a in (
        ReadingAxis("buffer", (NS2_BUFFER_PKTS, LARGE_BUFFER_PKTS), "not given: ns-2's Queue limit_ 50 (ns-default.tcl); 200 holds every threshold swept"),
        ReadingAxis("ecn_gentle", (True, False), "not given for classic ECN's RED: ns-2's gentle_ true (changed from false on 2001/4/23, at the paper's time); false before, as MECN's RED"),
        ReadingAxis("ect_retransmissions", (True, False), "not given: ns-2's TCP sends retransmissions ECT (tcp.cc output()); RFC 3168 §6.1.5 sends them Not-ECT"),
        ReadingAxis("initial_window", (2, 1), "not given: ns-2's windowInit_ 2 (since 2001/5/26; 1 before)"),
        ReadingAxis("moderate_ramp", ("from_zero", "continue_from_p1max"), "§2: the moderate region's probability rises like RED's, from 0"),
        ReadingAxis("cwr_clears", ("first_level", "all"), "§3's receiver remembers the first level it echoed"),
        ReadingAxis("escalation", ("ignore", "top_up"), "at most one reduction per window, as RFC 3168 and ns-2's Reno"),
        ReadingAxis("rtt_spread", tuple(DIFFERENT_RTT_DELAYS_MS), "§3 gives no RTTs for scenarios 5 and 6: source links of 2–22 ms (RTT 59–99 ms) or 2–82 ms (59–219 ms)"),
        ReadingAxis("fig5_window", (WINDOW_PKTS, NS2_WINDOW_PKTS), "Fig. 5's title lacks the other figures' 'window = 25'; 20 is ns-2's window_"),
        ReadingAxis("fig6_rtt", ("same", "different"), "Fig. 6's 'configuration with two sources': same RTT as Fig. 4's, or scenario 5's different RTTs"),
    )
}
#: The readings every experiment's runs depend on.
COMMON_AXES = ("buffer", "ecn_gentle", "ect_retransmissions", "initial_window", "moderate_ramp", "cwr_clears", "escalation")


def axes(*extra: str) -> tuple[ReadingAxis, ...]:
    return tuple(AXES[n] for n in COMMON_AXES + extra)


def readings_of(reading: Reading) -> Readings:
    """The :class:`Readings` a reading chooses (axes it does not have keep their default)."""
    return Readings(**{name: reading.get(name, a.default) for name, a in AXES.items()})


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
            "limit": readings.buffer,
            "min_th": float(min_th),
            "max_th": 2.0 * min_th,
            "max_p": P_MAX,
            "w_q": W_Q,
            "gentle": readings.ecn_gentle,
            "wait": True,
            "byte_mode": False,
            "ecn": True,
            "hard_drop": True,
            "mean_pkt_size": NS2_MEAN_PKTSIZE,
        }
    if scheme == "mecn":
        return {
            "kind": "mecn",
            "limit": readings.buffer,
            "min_th": float(min_th),
            "mid_th": 2.0 * min_th,
            "max_th": 4.0 * min_th,
            "p1_max": P_MAX,
            "p2_max": P_MAX,
            "moderate_ramp": readings.moderate_ramp,
            "w_q": W_Q,
            "wait": True,
            "mean_pkt_size": NS2_MEAN_PKTSIZE,
        }
    raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")


def forced_drop_threshold(scheme: str, min_th: float, readings: Readings = Readings()) -> float:
    """The average queue (packets) from which the bottleneck drops every packet: MECN's max_th,
    classic ECN's max_th (2·max_th with gentle)."""
    if scheme == "mecn":
        return 4.0 * min_th
    return 2.0 * min_th * (2.0 if readings.ecn_gentle else 1.0)


def _flow(setup: Setup, k: int, scheme: str, readings: Readings, window: int) -> dict[str, Any]:
    f: dict[str, Any] = {"name": f"s{k}", "src": f"s{k}", "dst": f"d{k}", "start": _s(setup.starts_s[k])}
    if setup.stops_s and setup.stops_s[k] is not None:
        f["stop"] = _s(setup.stops_s[k])
    if scheme == "ecn":
        f.update(
            cc="newreno",
            cc_params={**newreno_params("ns2"), "ca_increase": "per_ack", "initial_ssthresh": window * MSS},
            ecn="ecn",
            ecn_params={"ect_on_retransmissions": readings.ect_retransmissions},
        )
    else:
        f.update(
            cc="mecn",
            cc_params={"max_window": window, "escalation": readings.escalation, "ca_increase": "per_ack", "rto_rule": "ns2"},
            ecn="mecn",
            ecn_params={"cwr_clears": readings.cwr_clears, "escalation": readings.escalation, "ect_on_retransmissions": readings.ect_retransmissions},
        )
    return f


def _droptail() -> dict[str, Any]:
    return {"kind": "droptail", "limit": NS2_BUFFER_PKTS}


def scenario(
    setup: str | Setup,
    scheme: str,
    min_th: float,
    seed: int = 1,
    duration_s: float = DURATION_S,
    readings: Readings = Readings(),
    sample_interval: str = "10ms",
    window: int = WINDOW_PKTS,
) -> Scenario:
    """One of §3's scenarios with one scheme at one ``min_th`` (packets); ``window``: the
    receive window and MECN's cap in packets."""
    st = SETUPS[setup] if isinstance(setup, str) else setup
    nodes = [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
    links: list[dict[str, Any]] = []
    delays = st.delays_ms(readings.rtt_spread)
    for k in range(st.n):
        nodes += [{"name": f"s{k}", "kind": "host"}, {"name": f"d{k}", "kind": "host"}]
        links.append({"a": f"s{k}", "b": "r1", "rate": ACCESS_RATE, "delay": _ms(delays[k]), "queue": _droptail(), "queue_ba": _droptail()})
    links.append(
        {
            "a": "r1",
            "b": "r2",
            "rate": BOTTLENECK_RATE,
            "delay": BOTTLENECK_DELAY,
            "queue": bottleneck_queue(scheme, min_th, readings),
            # ACKs only on the way back: never congested (under 5 % load).
            "queue_ba": _droptail(),
        }
    )
    for k in range(st.n):
        links.append({"a": "r2", "b": f"d{k}", "rate": ACCESS_RATE, "delay": _ms(SINK_DELAY_MS), "queue": _droptail(), "queue_ba": _droptail()})
    tag = readings.tag()
    data: dict[str, Any] = {
        "name": f"MECN §3 {st.title.split('. ', 1)[-1]} — {LABEL[scheme]}, min_th {min_th:g}" + (f" [{tag}]" if tag else ""),
        "duration": _s(duration_s),
        "seed": seed,
        "topology": {"kind": "explicit", "nodes": nodes, "links": links},
        "tcp": hosts_tcp(NS2_HOSTS, mss=MSS, initial_window=readings.initial_window, rcv_buf=window * MSS, limited_transmit=False),
        "measure": {"interval": sample_interval, "sample_ports": [PORT], "sample_flows": st.n <= 10},
        "flows": [_flow(st, k, scheme, readings, window) for k in range(st.n)],
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
    rtts = sorted({round(fixed_rtt_ms(d), 1) for d in st.delays_ms(Readings().rtt_spread)})
    head = [
        f"# MECN paper (seed 002) §3, scenario {st.title}.",
        f"# {LABEL[scheme]}; min_th = {min_th:g} packets (the experiments sweep it).",
        "# Sources —10 Mb/s— r1 —1.5 Mb/s, 20 ms— r2 —10 Mb/s, 4 ms— sinks; 1000-byte packets,",
        f"# window 25 packets, w_q = 0.002; RTT {', '.join(f'{r} ms' for r in rtts)}; ns-2's hosts and queues.",
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


def drops_by_cause(r: Results) -> dict[str, float]:
    """Bottleneck drops: buffer overflow, early (Not-ECT packets where ECT ones are marked:
    SYNs, and retransmissions under RFC 3168) and forced (the average above the forced-drop
    threshold)."""
    p = r.port(PORT)
    return {k: float(p[f"dropped_{k}"]) for k in ("overflow", "early", "forced")}


def efficiency(r: Results) -> float:
    """Bottleneck busy fraction over the run (retransmissions and headers included)."""
    return float(r.port(PORT)["utilization"])


def goodput_efficiency(r: Results) -> float:
    """Fig. 4's link efficiency: payload delivered to the sinks over the payload the link
    could carry in whole packets over the run."""
    dur = r.meta["duration_s"]
    delivered = sum(x or 0 for x in r.flows["bytes_delivered"].to_list())
    return delivered * 8 / (BOTTLENECK_BPS * dur * MSS / PACKET_BYTES)


def source_throughput_mbps(name: str) -> Callable[[Results], float]:
    """One source's payload throughput over the run (Mb/s)."""
    return lambda r: (r.flow(name)["bytes_delivered"] or 0) * 8 / r.meta["duration_s"] / 1e6


def mean_source_throughput_mbps(r: Results) -> float:
    """The mean over the sources of their payload throughput over the run (Mb/s)."""
    return sum(x or 0 for x in r.flows["bytes_delivered"].to_list()) * 8 / r.meta["duration_s"] / 1e6 / r.flows.height


def mean_queue(r: Results) -> float:
    """Mean bottleneck queue over the run (packets): the queueing delay in packet times."""
    return float(r.port(PORT)["mean_queue_pkts"])


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
#: Convergence: the instantaneous queue's moving mean over CONVERGE_WINDOW_S (about 17 RTTs)
#: stays within ±CONVERGE_BAND_PKTS (half of Fig. 3's min_th, the same for both arms) of its
#: second-half mean from then on.
CONVERGE_WINDOW_S = 1.0
CONVERGE_BAND_PKTS = 2.5
#: Settling band of the average queue (a detail column): within this fraction of its steady
#: mean (and at least ``SETTLE_MIN_BAND_PKTS``).
SETTLE_BAND = 0.2
SETTLE_MIN_BAND_PKTS = 1.0


def converge_time(t: Sequence[float], q: Sequence[float], steady_from: float) -> float:
    """The last time the moving mean of ``q`` over ``CONVERGE_WINDOW_S`` (trailing) was more than
    ``CONVERGE_BAND_PKTS`` from the mean of ``q`` after ``steady_from``; 0 if never."""
    steady = [x for tt, x in zip(t, q) if tt >= steady_from]
    if not steady:
        return math.nan
    m = sum(steady) / len(steady)
    last = 0.0
    lo, acc = 0, 0.0
    for hi, (tt, x) in enumerate(zip(t, q)):
        acc += x
        while t[lo] <= tt - CONVERGE_WINDOW_S:
            acc -= q[lo]
            lo += 1
        if tt < t[0] + CONVERGE_WINDOW_S:
            continue
        if abs(acc / (hi - lo + 1) - m) > CONVERGE_BAND_PKTS:
            last = tt
    return last


def queue_stats(r: Results) -> dict[str, float]:
    """Oscillation and convergence of the bottleneck queue: the standard deviation of the
    instantaneous queue over the second half of the run (Fig. 3's oscillation) and its
    convergence time (:func:`converge_time`); as details, the same for the average queue, the
    means, and the settling time of the average (the last time it was outside ±``SETTLE_BAND``
    of its second-half mean)."""
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
        "converge_s": converge_time(t, q, STEADY_FROM * dur),
        "q_cv": _std(steady) / q_mean if q_mean else math.nan,
        "avg_std": _std(steady_a),
        "q_mean": q_mean,
        "avg_mean": m,
        "settle_avg_s": settle,
    }


def drop_free(setup: str, scheme: str, min_th: float, readings: Readings = Readings(), window: int = WINDOW_PKTS) -> str | None:
    """Why no packet of this configuration can be dropped at the bottleneck, or None when one
    can. Every packet in the queue is an unacknowledged segment within its sender's window, so
    an arrival finds at most n·window − 1 packets, the average is never above that, and a
    buffer of at least n·window never overflows; with every data packet ECT (ns-2's
    retransmissions), RED drops only at or above the forced-drop threshold. SYNs and the
    handshake's ACK (Not-ECT) arrive at an empty queue when every flow starts at 0 s."""
    st = SETUPS[setup]
    if any(st.starts_s) or st.stops_s or not readings.ect_retransmissions:
        return None
    in_flight = st.n * window
    if in_flight > readings.buffer:
        return None
    reach = in_flight - 1
    forced = forced_drop_threshold(scheme, min_th, readings)
    if reach >= forced:
        return None
    return f"{LABEL[scheme]}: the average queue stays at most {reach} packets ({st.n} × {window} in flight), below the forced-drop threshold {forced:g}, every data packet is ECT and a {readings.buffer}-packet buffer cannot overflow"


# ------------------------------------------------------------------------ helpers


@dataclass(frozen=True)
class Variant:
    """A scheme under one set of readings, as the experiments run and label it."""

    key: str
    scheme: str
    label: str
    color: str
    readings: Readings = Readings()


ECN = Variant("ecn", "ecn", LABEL["ecn"], COLOR["ecn"])
MECN = Variant("mecn", "mecn", LABEL["mecn"], COLOR["mecn"])
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
    window: int = WINDOW_PKTS,
) -> dict[str, Scenario]:
    configs = {
        _cfg(v, m, extra): scenario(setup, v.scheme, m, readings=v.readings, sample_interval=interval, window=window)
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


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not math.isnan(float(x))


def floor_ties(a: Mapping[int, Any], b: SeedValues, floor: float) -> SeedValues:
    """``b`` with each seed's value set to ``a``'s where the two differ by less than ``floor``
    (an absolute smallest difference, beside the claim's relative one, which the verdict rule
    does not take): those seeds score as ties."""
    return b.derive({s: (a[s] if _number(a.get(s)) and _number(y) and abs(float(a[s]) - float(y)) < floor else y) for s, y in b.items()})


def best_min_th(runs: RunSet, ms: Sequence[float], v: Variant, plateau: float, extra: str = "") -> SeedValues:
    """Per seed, the smallest min_th whose link efficiency is within ``plateau`` of that seed's
    best over the sweep (Fig. 4's "the best link efficiency is reached")."""
    by_m = [runs.per_seed(_cfg(v, m, extra), goodput_efficiency) for m in ms]
    out: dict[int, Any] = {}
    for seed in by_m[0]:
        vals = [d.get(seed) for d in by_m]
        if not all(_number(x) for x in vals):
            out[seed] = Excluded("a min_th of the sweep has no value")
            continue
        best = max(vals)
        out[seed] = next(m for m, x in zip(ms, vals) if x >= best - plateau)
    return by_m[0].derive(out)


def drops_claim(runs: RunSet, a: str, b: str, metric: str, paper_text: str, text: str, note: str = "", family: str | None = None, our_statement: str | None = None) -> Comparison:
    """MECN's drops (configuration ``a``) fewer than ECN's (``b``), per seed, with the
    drop counts' smallest difference (``DROPS_FLOOR_PKTS`` and ``DROPS_MIN_EFFECT``)."""
    da, db = runs.per_seed(a, drops), runs.per_seed(b, drops)
    floor = f"pairs closer than {DROPS_FLOOR_PKTS} packets are ties (ECN's value shown as MECN's there)"
    return claim(
        metric,
        Claim("less", min_effect=DROPS_MIN_EFFECT),
        da,
        floor_ties(da, db, DROPS_FLOOR_PKTS),
        paper=paper_text,
        unit="packets",
        text=text,
        ours=runs.stat(a, drops),
        note=f"ECN {runs.stat(b, drops)}; {floor}" + (f"; {note}" if note else ""),
        family=family,
        our_statement=our_statement,
    )


#: Why ``mecn.scenarios``' claims are ours (``our_statement``): counted apart from the figures'.
SUMMARY_OURS = (
    "§3's summary and the abstract say it of all the experiments at once, and the paper shows it for some "
    "scenarios only (no figure for scenarios 2, 3 and 5, none of fairness): applying it to each scenario and each "
    f"of drops, link efficiency and Jain's index at one min_th ({QUEUE_MIN_TH:g} packets) is our reading"
)


SETUP_NOTE = (
    "Setup (the module ecnlab.experiments.mecn states every reading, the provenance table every parameter's "
    "source): 1000-byte packets, 40-byte ACKs, window 25 packets (receive window; MECN's window cap too), "
    f"w_q = {W_Q}, max_p = P1max = P2max = {P_MAX}, 10 s runs, ns-2's hosts (an ACK per segment, no SACK, "
    "initial window 2, minimum RTO 0.2 s) and defaults where the paper is silent: a 50-packet buffer, classic "
    "ECN's RED with gentle_, retransmissions ECT. Both arms react as ns-2's Reno: the window cut at once from "
    "min(cwnd, 25) at most once per window, no growth on ACKs carrying the echo; loss recovery is NewReno's in "
    "both (ns-2's Reno waits for a timeout for a second loss in a window). ECN = ×0.5 on CE over RED "
    "(max_th = 2·min_th); MECN = ×0.8 incipient, ×0.6 moderate, ×0.5 loss over multilevel RED (mid_th = "
    "2·min_th, max_th = 4·min_th), moderate-region probability rising from 0. The paper's figures carry no "
    "values in its text: the comparisons check the directions (and Fig. 7's two sizes in words) it states."
)


# ---------------------------------------------------------------------- provenance

_NS2 = "ns-2.35 tcl/lib/ns-default.tcl"
_RED = "ns-2.35 queue/red.cc"
_TCP = "ns-2.35 tcp/tcp.cc"
_S3 = "§3 (Simulation Configuration)"


def sources(rd: Readings, window: int = WINDOW_PKTS) -> list[Source]:
    """Where every parameter of the runs comes from under readings ``rd`` (the [tcp] keys
    beyond these are ns-2's, ``NS2_HOSTS``)."""
    gentle_ref = f"{_NS2}: Queue/RED gentle_ true ('changed from false to true on Apr 23, 2001'); the ecn_gentle axis"
    out = [
        paper("duration", _s(DURATION_S), "§3 scenario 2 runs 0–10 s, the only duration the paper gives; every scenario runs as long"),
        assumption("hosts.ip_id", "sequential", "no element of these runs reads the IP-ID"),
        assumption("measure.interval", "10 ms (Fig. 3's queue) or 100 ms", "the figures' resolution: Fig. 3 plots the queue packet by packet"),
        assumption("measure.sample_ports", [PORT], "the bottleneck, whose queue the figures plot"),
        assumption("measure.sample_flows", True, "per-source rates for the stall check and the throughput figure"),
        paper("flows.kind", "tcp", f"{_S3}: an FTP application over TCP on each source"),
        paper("flows.name", "s0 … s(n−1)", f"{_S3}: sources S1 … Sn"),
        paper("flows.src", "s0 … s(n−1)", f"{_S3}: sources S1 … Sn, one flow each"),
        paper("flows.dst", "d0 … d(n−1)", f"{_S3}: destinations D1 … Dn"),
        paper("flows.start", "0 s; scenario 2: 0 and 0.5 s; scenario 4: every 0.3 s", "§3 scenarios 2 and 4; scenarios 1, 3, 5, 6 give no start: all at 0 s (ours)"),
        paper("flows.stop", "scenario 2's first source at 9.5 s", "§3 scenario 2; no other scenario stops a source (scenario 4: ours)"),
        paper("flows.cc", "newreno (ECN), mecn (MECN)", "§3: 'Reno TCP is used as the transport agent (the modifications were made to the Reno TCP)'; ecnlab's newreno has NewReno's loss recovery (RFC 6582), not Reno's"),
        paper("flows.ecn", "ecn (ECN), mecn (MECN)", "§3: classic ECN against multilevel ECN"),
        # ------------------------------------------------------------ the senders
        paper("flows.cc_params.beta1", 0.8, "Table 3: incipient congestion −20 %"),
        paper("flows.cc_params.beta2", 0.6, "Table 3: moderate congestion −40 %"),
        paper("flows.cc_params.beta3", 0.5, "Table 3: packet drop −50 %"),
        paper("flows.cc_params.max_window", window, "the figures' titles: 'window = 25' (ns-2's window_, which caps the window the sender uses); the fig5_window axis"),
        default("flows.cc_params.reduce_from", "cwnd", f"{_TCP} slowdown(): the cut applies to window() = min(cwnd_, window_) (MECN's window is capped at window_)"),
        default(
            "flows.cc_params.rto_rule",
            "ns2",
            f"{_TCP} TcpAgent::timeout: the first timeout after an ECN response (last_cwnd_action_ ECN) keeps ssthresh; every "
            "timeout then becomes the last action, so any other halves, a repeated one too (ECN's NewReno). MECN's sender (its code is not published) is taken to answer "
            "its levels through the same path, as a modified ecn() would, so a timeout keeps a level response's ssthresh in both arms "
            "(ours). Not modelled: after a timeout ns-2 answers an ECN echo at once, ecnlab not until the timeout's data is acknowledged",
        ),
        default("flows.cc_params.ca_increase", "per_ack", f"{_NS2}: Agent/TCP windowOption_ 1, {_TCP} opencwnd(): cwnd_ += 1/cwnd_ per new ACK"),
        default("flows.cc_params.initial_ssthresh", window * MSS, f"{_TCP} reset(): ssthresh_ = window_ (ECN's NewReno; MECN's window is capped there)"),
        assumption("flows.cc_params.abc_limit", 2, "RFC 3465's L: with an ACK per segment each ACK covers one segment, as ns-2's one segment per ACK"),
        assumption("flows.cc_params.abc_limit_after_rto", 1, "RFC 3465 §2.3 after a timeout; ns-2 counts ACKs, the same with an ACK per segment"),
        paper("flows.cc_params.escalation", rd.escalation, "§3 (one reaction per window of data, as RFC 2481); the escalation axis"),
        default("flows.ecn_params.ect_on_retransmissions", rd.ect_retransmissions, f"{_TCP} output(): an ECN sender sets ECT on every data packet; the ect_retransmissions axis"),
        paper("flows.ecn_params.cwr_clears", rd.cwr_clears, "§3: 'the receiver remember, which level was marked first'; the cwr_clears axis"),
        paper("flows.ecn_params.escalation", rd.escalation, "as the sender's (the escalation axis)"),
        # ------------------------------------------------------------ topology
        paper("topology.kind", "explicit", f"{_S3}, Fig. 2: sources — R1 — R2 — destinations"),
        paper("topology.nodes.name", "s_k, d_k, r1, r2", f"{_S3}, Fig. 2"),
        paper("topology.nodes.kind", "host, router", f"{_S3}, Fig. 2"),
        paper("topology.links.a", "s_k, r1, r2", f"{_S3}, Fig. 2"),
        paper("topology.links.b", "r1, r2, d_k", f"{_S3}, Fig. 2"),
        paper("topology.links.rate", "10 Mb/s access, 1.5 Mb/s R1–R2", _S3),
        paper(
            "topology.links.delay",
            "2 ms (sources), 20 ms (R1–R2), 4 ms (destinations); scenarios 5, 6: sources " + ", ".join(f"{d:g}" for d in DIFFERENT_RTT_DELAYS_MS[rd.rtt_spread][5]) + " ms",
            f"{_S3}; different RTTs 'changing the propagation delay between the source and router R1' with no values: the rtt_spread axis",
        ),
        default("topology.links.queue.kind", "droptail; R1→R2: red (ECN) or mecn", f"{_NS2}: DropTail queues; §3: RED with ECN, RED with mid_thresh (MECN) at R1"),
        default("topology.links.queue.limit", rd.buffer, f"{_NS2}: Queue limit_ 50 on every queue; the buffer axis for R1→R2"),
        default("topology.links.queue.bytes", False, f"{_NS2}: queues count packets"),
        paper("topology.links.queue.min_th", "swept (Fig. 3: 5)", "Figs. 4–7 sweep min_threshold; Fig. 3's is not given: ns-2's thresh_ 5 (before 12/2001)"),
        paper("topology.links.queue.mid_th", "2·min_th", "§3: 'mid_th = 2·min_th'"),
        paper("topology.links.queue.max_th", "2·min_th (ECN), 4·min_th (MECN)", "§3: 'max_th = 2·mid_th' (MECN), 'for simple ECN max_th = 2·min_th'"),
        default("topology.links.queue.max_p", P_MAX, f"{_NS2}: Queue/RED linterm_ 10 (classic ECN)"),
        default("topology.links.queue.p1_max", P_MAX, f"§3: P1max = P2max, no value: ns-2's RED maximum {P_MAX} ({_NS2} linterm_ 10)"),
        default("topology.links.queue.p2_max", P_MAX, "§3: P1max = P2max"),
        paper("topology.links.queue.moderate_ramp", rd.moderate_ramp, "§2 / Fig. 1 (an image): the moderate region's 'maximum probability of P2max'; the moderate_ramp axis"),
        paper("topology.links.queue.w_q", W_Q, "the titles of Figs. 4–7: 'qw=0.002' (ns-2's q_weight_ 0.002 before 12/2001)"),
        (default if rd.ecn_gentle else assumption)("topology.links.queue.gentle", rd.ecn_gentle, gentle_ref if rd.ecn_gentle else "ns-2's gentle_ before 2001/4/23, and MECN's 'all packets dropped above max_th' (§2); the ecn_gentle axis"),
        default("topology.links.queue.wait", True, f"{_NS2}: Queue/RED wait_ true"),
        default("topology.links.queue.byte_mode", False, f"{_NS2}: Queue/RED bytes_ false before 10/2004"),
        paper("topology.links.queue.ecn", True, "§3: classic ECN marks CE (ns-2's setbit_ true)"),
        default("topology.links.queue.hard_drop", True, f"{_RED}: a forced drop drops ECT packets too (ns-2 of 2001 had no use_mark_p_; between max_th and 2·max_th with gentle_ it marked them, as ours)"),
        default("topology.links.queue.mean_pkt_size", NS2_MEAN_PKTSIZE, f"{_NS2}: Queue/RED mean_pktsize_ 500 (the average's decay over idle time)"),
        # ------------------------------------------------------------ hosts
        paper("tcp.mss", MSS, f"{_S3}: 'The packet size is 1000 bytes' on the wire (ns-2 counted no TCP/IP header before useHeaders_ of 2001/11/28) and the fixed RTT of 59 ms, which holds a 1000-byte packet's serialisation"),
        paper("tcp.rcv_buf", window * MSS, "the figures' titles: 'window = 25' packets (ns-2's window_; its default 20); the fig5_window axis"),
        default("tcp.limited_transmit", False, f"{_NS2}: Agent/TCP singledup_ 1 only since 2001/11/28, after the paper (which cites RFC 2481, not RFC 3168 of Sept. 2001)"),
    ]
    if rd.initial_window != NS2_HOSTS.tcp()["initial_window"]:
        out.append(default("tcp.initial_window", rd.initial_window, f"{_NS2}: Agent/TCP windowInit_ 1 before 2001/5/26; the initial_window axis"))
    return out + [
        default("topology.links.queue_ba.kind", "droptail", f"{_NS2}: DropTail (the reverse direction carries ACKs only, never congested)"),
        default("topology.links.queue_ba.limit", NS2_BUFFER_PKTS, f"{_NS2}: Queue limit_ 50"),
        default("topology.links.queue_ba.bytes", False, f"{_NS2}: queues count packets"),
    ]


class MecnExperiment(Experiment):
    """The MECN paper's experiments: ns-2's hosts, the R1→R2 bottleneck, every parameter's
    source."""

    hosts = NS2_HOSTS
    quick_seeds = 5
    full_seeds = 10
    axes = axes()

    def bottleneck(self, run_name: str) -> str:
        return PORT

    def window(self, reading: Reading) -> int:
        return WINDOW_PKTS

    def provenance(self, quick: bool, reading: Reading) -> list[Source]:
        return sources(readings_of(reading), self.window(reading))


# ---------------------------------------------------------------------- experiments


@register
class Queue(MecnExperiment):
    name = "mecn.queue"
    title = "Queue length over time, two sources with the same RTT (Figs. 3a/3b)"
    source = "MECN paper (seed 002) §3, Figs. 3a and 3b and the text beside them"
    description = (
        "Scenario 1 (two bulk sources, RTT 59 ms) with classic ECN and with MECN; Fig. 3's "
        f"min_th is not given, the panels use {QUEUE_MIN_TH:g} packets and a few other min_th run "
        "beside them. The paper: \"in case of MECN the queue length converge faster and with less "
        "oscillations compared to ECN\". Declared before the runs, one metric each: oscillation = "
        "the standard deviation of the instantaneous queue over the second half of the run; "
        f"convergence = the last time the queue's {CONVERGE_WINDOW_S:g}-s moving mean was more than "
        f"{CONVERGE_BAND_PKTS:g} packets (the same band for both arms) from its second-half mean. "
        "The other measures (relative to the mean, of the average queue, the average's settling) "
        "are tabled, not claimed."
    )

    def min_ths(self, quick: bool) -> tuple[float, ...]:
        return (2.0, QUEUE_MIN_TH, 10.0, 15.0) if quick else FULL_MIN_THS[:10]

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        return _sweep_runs("s1-two-same-rtt", self.min_ths(quick), seeds, variants(reading), interval="10ms")

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        ms = self.min_ths(ctx.quick)
        st = {(v.key, m): runs.per_seed(_cfg(v, m), queue_stats) for v in BASE for m in ms}

        def stat(v: Variant, key: str, m: float = QUEUE_MIN_TH) -> Stat:
            return Stat.of(x[key] for x in st[(v.key, m)].values() if isinstance(x, dict))

        def per(v: Variant, key: str, m: float = QUEUE_MIN_TH) -> SeedValues:
            vals = st[(v.key, m)]
            return vals.derive({seed: (x[key] if isinstance(x, dict) else x) for seed, x in vals.items()})

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
        for key, what, text, unit in (
            ("q_std", "std of the instantaneous queue, second half", "MECN smaller (less oscillation)", "packets"),
            ("converge_s", f"convergence time of the queue (its {CONVERGE_WINDOW_S:g}-s mean within ±{CONVERGE_BAND_PKTS:g} packets)", "MECN shorter (converges faster)", "s"),
        ):
            comps.append(
                claim(
                    f"{what}, min_th {QUEUE_MIN_TH:g}: MECN vs ECN",
                    Claim("less", min_effect=QUEUE_MIN_EFFECT),
                    per(MECN, key),
                    per(ECN, key),
                    paper=from_text("Fig. 3", text),
                    unit=unit,
                    text=text,
                    ours=stat(MECN, key),
                    note=f"ECN {stat(ECN, key)}; a difference counts from {QUEUE_MIN_EFFECT:.0%}",
                )
            )

        rows = []
        for v in BASE:
            for m in ms:
                row = {"variant": v.label, "min_th": m}
                for key in ("q_mean", "q_std", "converge_s", "q_cv", "avg_mean", "avg_std", "settle_avg_s"):
                    row[key] = str(stat(v, key, m))
                row["drops"] = str(runs.stat(_cfg(v, m), drops))
                rows.append(row)
        ctx.table(
            pl.DataFrame(rows),
            caption="Queue statistics over the second half (packets), convergence and the average's settling time (s), drops; mean [min – max] over seeds. "
            "Only q_std and converge_s at min_th 5 are claims; q_cv divides by each arm's own mean (MECN's thresholds, and so its mean, are twice ECN's), "
            "and the average's statistics follow an EWMA with a time constant of about 2.6 s.",
        )

        fig, ax = new_figure("Oscillation against mean queue, two sources (min_th swept)", "mean instantaneous queue (packets)", "std of the queue (packets)")
        for v in BASE:
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
            ax.set_ylim(0, 52)
            ax.legend(fontsize=8, loc="upper right")
            ctx.figure(fig, f"fig{panel}_{v.key}", f"Bottleneck queue sampled every 10 ms, seed {r.meta['seed']} (the paper's Fig. {panel[:2]}).")
        return comps


@register
class Efficiency(MecnExperiment):
    name = "mecn.efficiency"
    title = "Link efficiency vs min_th, two sources (Fig. 4)"
    source = "MECN paper (seed 002) §3, Fig. 4 and the text beside it"
    description = (
        "Scenario 1 (two sources, same RTT), min_th swept; link efficiency = payload delivered over "
        "the payload the link can carry over the 10 s run (the busy fraction, which counts "
        "retransmissions, is tabled beside it). The paper: MECN \"improved the link efficiency for "
        "all values of min_threshold\" (a family, one claim per min_th, with Holm's correction) "
        "and \"the best link efficiency in case of MECN is reached for a lower value of "
        "min_threshold, that means with less delays\". \"Reaching the best\" is the smallest "
        f"min_th within {100 * 0.005:.1f} percentage points of the scheme's best efficiency (the "
        "curves flatten near 1); the delay is the mean queue there."
    )
    #: Efficiencies within this of a scheme's best count as reaching it.
    PLATEAU = 0.005

    def min_ths(self, quick: bool) -> tuple[float, ...]:
        return QUICK_MIN_THS if quick else FULL_MIN_THS

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        return _sweep_runs("s1-two-same-rtt", self.min_ths(quick), seeds, variants(reading))

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        ms = self.min_ths(ctx.quick)
        good = _by_min_th(runs, ms, goodput_efficiency)
        busy = _by_min_th(runs, ms, efficiency)
        comps = []
        for i, m in enumerate(ms):
            comps.append(
                claim(
                    f"link efficiency at min_th = {m:g}: MECN vs ECN",
                    Claim("greater", min_effect=EFFICIENCY_MIN_EFFECT),
                    runs.per_seed(_cfg(MECN, m), goodput_efficiency),
                    runs.per_seed(_cfg(ECN, m), goodput_efficiency),
                    paper=from_text("Fig. 4", "MECN higher than ECN for all values of min_threshold"),
                    text="MECN higher than ECN at every min_th",
                    ours=good["mecn"][i],
                    note=f"ECN {good['ecn'][i]}; busy fraction MECN {busy['mecn'][i]}, ECN {busy['ecn'][i]}",
                    family="fig4-efficiency",
                )
            )

        def reach(v: Variant) -> SeedValues:
            return best_min_th(runs, ms, v, self.PLATEAU)

        def delay_at_best(v: Variant, at: Mapping[int, Any]) -> SeedValues:
            """Per seed, the mean queue (packets) at the min_th where the seed reached its best."""
            out: dict[int, Any] = {}
            for seed, m in at.items():
                out[seed] = runs.per_seed(_cfg(v, m), mean_queue).get(seed) if _number(m) else Excluded("no best min_th")
            return reach(v).derive(out)

        rm, re = reach(MECN), reach(ECN)
        comps.append(
            claim(
                "min_th where the best efficiency is reached: MECN vs ECN",
                Claim("less"),
                rm,
                re,
                paper=from_text("Fig. 4", "MECN's lower than ECN's"),
                unit="packets",
                text="MECN reaches its best at a lower min_th",
                ours=Stat.of(rm.values()),
                note=f"ECN {Stat.of(re.values())}",
            )
        )
        qm, qe = delay_at_best(MECN, rm), delay_at_best(ECN, re)
        comps.append(
            claim(
                "mean queue where each reaches its best efficiency: MECN vs ECN",
                Claim("less", min_effect=QUEUE_MIN_EFFECT),
                qm,
                qe,
                paper=from_text("Fig. 4", "'that means with less delays introduced to the packets'"),
                unit="packets",
                text="MECN's best efficiency comes with less delay",
                ours=Stat.of(qm.values()),
                note=f"ECN {Stat.of(qe.values())}; the mean bottleneck queue over the run at each seed's best min_th (a packet time is 5.3 ms)",
            )
        )
        _sweep_figure(ctx, ms, good, "Fig. 4: link efficiency, two sources", "link efficiency (payload delivered / capacity)", "fig4_efficiency", "Payload delivered over the link's payload capacity in 10 s against min_th; mean with min–max over seeds.")
        _sweep_table(ctx, ms, good, "efficiency", "Link efficiency (payload delivered over capacity) by min_th (mean [min – max] over seeds)")
        _sweep_table(ctx, ms, busy, "busy fraction", "Bottleneck busy fraction by min_th (counts retransmissions and headers; for reference)")
        _sweep_table(ctx, ms, _by_min_th(runs, ms, mean_queue), "mean queue (packets)", "Mean bottleneck queue by min_th")
        return comps


@register
class Throughput(MecnExperiment):
    name = "mecn.throughput"
    title = "Throughput per source vs min_th, ten overlapping sources (Fig. 5)"
    source = "MECN paper (seed 002) §3, Fig. 5 and the text beside it"
    description = (
        "Scenario 4 (ten sources starting 0.3 s apart, same RTT), min_th swept. The paper: \"the "
        "throughput of one individual source … Again MECN provides better throughput than simple "
        "ECN\". Ten sources share a saturated link, so one source's throughput is a share; the claim "
        "is decided on the mean over the ten sources' throughputs over the run (which source the "
        "paper plotted is not said), per min_th, as a family with Holm's correction; the first "
        "source (s0, alone for 0.3 s) is the figure."
    )
    axes = axes("fig5_window")

    def window(self, reading: Reading) -> int:
        return readings_of(reading).fig5_window

    def min_ths(self, quick: bool) -> tuple[float, ...]:
        return QUICK_MIN_THS if quick else FULL_MIN_THS

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        return _sweep_runs("s4-ten-overlapping", self.min_ths(quick), seeds, variants(reading), window=self.window(reading))

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        ms = self.min_ths(ctx.quick)
        mean = _by_min_th(runs, ms, mean_source_throughput_mbps)
        s0 = _by_min_th(runs, ms, source_throughput_mbps("s0"))
        comps = []
        for i, m in enumerate(ms):
            comps.append(
                claim(
                    f"mean throughput per source at min_th = {m:g}: MECN vs ECN",
                    Claim("greater", min_effect=EFFICIENCY_MIN_EFFECT),
                    runs.per_seed(_cfg(MECN, m), mean_source_throughput_mbps),
                    runs.per_seed(_cfg(ECN, m), mean_source_throughput_mbps),
                    paper=from_text("Fig. 5", "MECN provides better throughput"),
                    unit="Mb/s",
                    text="MECN higher than ECN",
                    ours=mean["mecn"][i],
                    note=f"ECN {mean['ecn'][i]}; s0 (the figure): MECN {s0['mecn'][i]}, ECN {s0['ecn'][i]}",
                    family="fig5-throughput",
                )
            )
        _sweep_figure(ctx, ms, s0, "Fig. 5: throughput of one source (s0), ten overlapping sources", "throughput (Mb/s)", "fig5_throughput", "Payload throughput of the first source (starts at 0 s) over 10 s against min_th.")
        _sweep_table(ctx, ms, mean, "mean per-source throughput (Mb/s)", "Mean throughput per source by min_th (the claim)")
        _sweep_table(ctx, ms, s0, "s0 throughput (Mb/s)", "Throughput of s0 by min_th (the figure)")
        _drops_by_cause_table(ctx, runs, ms, "", "ten overlapping sources: a SYN that RED drops (Not-ECT) is an early drop")
        return comps


def _drops_by_cause_table(ctx: Context, runs: RunSet, ms: Sequence[float], extra: str, what: str) -> None:
    rows = []
    for m in ms:
        row: dict[str, Any] = {"min_th": m}
        for v in BASE:
            for cause in ("overflow", "early", "forced"):
                row[f"{v.key} {cause}"] = str(runs.stat(_cfg(v, m, extra), lambda r, c=cause: drops_by_cause(r)[c]))
        rows.append(row)
    ctx.table(pl.DataFrame(rows), caption=f"Bottleneck drops by cause ({what}); mean [min – max] over seeds")


@register
class Drops(MecnExperiment):
    name = "mecn.drops"
    title = "Drops vs min_th, two sources and five sources with different RTTs (Figs. 6, 7)"
    source = "MECN paper (seed 002) §3, Figs. 6 and 7 and the text beside them"
    description = (
        "Packets dropped at the bottleneck over the 10 s run against min_th: two sources (Fig. 6, "
        "scenario 1, same RTT; the fig6_rtt reading: scenario 5) and five sources with different "
        "RTTs (Fig. 7, scenario 6). The paper: \"in case of MECN there are less losses than with "
        "simple ECN and MECN reaches the point of zero loss with less min_threshold than ECN\"; "
        "with five sources \"the improvements of MECN compared to ECN is considerable in having "
        "less losses and reaching the point of zero losses with much less min_threshold, that "
        f"means with much less delay\". Fewer losses: a family over min_th (Holm), a pair of counts "
        f"differing from {DROPS_FLOOR_PKTS} packets and {DROPS_MIN_EFFECT:.0%}; where MECN cannot drop "
        "at all (its forced-drop threshold above the largest possible queue) the claim cannot be "
        f"contradicted and is not comparable. Fig. 7's words as sizes (ours): 'considerable' = more "
        f"than {CONSIDERABLE:.0%} fewer drops over the sweep, 'much less' min_th = more than "
        f"{MUCH_LESS:.0%} lower."
    )
    axes = axes("rtt_spread", "fig6_rtt")

    def sets(self, reading: Reading) -> tuple[tuple[str, str, str, str, str], ...]:
        """Each figure's (tag, scenario, figure, sources, their RTTs). A claim is named by its
        sources alone: the report pairs a claim across readings by its name, and the RTTs are
        what the rtt_spread and fig6_rtt readings change (said in the claim's text)."""
        rd = readings_of(reading)
        spread = rd.rtt_spread.replace("-", "–").replace("ms", " ms")
        fig6 = ("fig6", "s1-two-same-rtt", "Fig. 6", "two sources", "same RTT") if rd.fig6_rtt == "same" else ("fig6", "s5-two-different-rtt", "Fig. 6", "two sources", f"RTT {spread}")
        return (fig6, ("fig7", "s6-five-different-rtt", "Fig. 7", "five sources", f"RTT {spread}"))

    def min_ths(self, quick: bool) -> tuple[float, ...]:
        return QUICK_MIN_THS if quick else FULL_MIN_THS

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        out: dict[str, Scenario] = {}
        for tag, setup, *_ in self.sets(reading):
            out.update(_sweep_runs(setup, self.min_ths(quick), seeds, variants(reading), extra=f"-{tag}"))
        return out

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        ms = self.min_ths(ctx.quick)
        rd = readings_of(ctx.reading)
        comps: list[Comparison] = []
        for tag, setup, fig, who, rtts in self.sets(ctx.reading):
            what = f"{who}, {rtts}"
            x = f"-{tag}"
            d = _by_min_th(runs, ms, drops, extra=x)
            for i, m in enumerate(ms):
                a, b = _cfg(MECN, m, x), _cfg(ECN, m, x)
                metric = f"{who}: drops at min_th = {m:g}: MECN vs ECN"
                text = f"MECN fewer than ECN ({rtts})"
                paper_text = from_text(fig, "MECN fewer losses than ECN")
                free = {v.key: drop_free(setup, v.scheme, m, rd) for v in BASE}
                dropped_anyway = {v.key: d[v.key][i].max > 0 for v in BASE}
                if free["mecn"] and not dropped_anyway["mecn"]:
                    why = free["mecn"] + (f"; so is {free['ecn']}" if free["ecn"] else "")
                    comps.append(incomparable(metric, f"cannot come out contradicted: MECN cannot drop here ({why})", paper=paper_text, kind=Claim("less", min_effect=DROPS_MIN_EFFECT), unit="packets", text=text, ours=d["mecn"][i], note=f"ECN {d['ecn'][i]}"))
                    continue
                note = "the bound said MECN could not drop; it did, so the claim is decided" if free["mecn"] else ""
                comps.append(drops_claim(runs, a, b, metric, paper_text, text, note=note, family=f"{tag}-drops"))
            z = {v.key: self._first_zero(runs, ms, v, x) for v in BASE}
            never = "no drop-free min_th in the sweep"
            zero_note = f"ECN {Stat.of(z['ecn'].values(), never)}; per seed: the smallest min_th from which every larger one of the sweep dropped nothing (∞: none)"
            comps.append(
                claim(
                    f"{who}: smallest min_th from which no drop: MECN vs ECN",
                    Claim("less"),
                    z["mecn"],
                    z["ecn"],
                    paper=from_text(fig, "MECN's lower than ECN's"),
                    unit="packets",
                    text=f"MECN reaches zero drops at a lower min_th (∞: not within the sweep; {rtts})",
                    ours=Stat.of(z["mecn"].values(), never),
                    note=zero_note,
                )
            )
            if tag == "fig7":
                comps.append(
                    claim(
                        f"{who}: smallest min_th from which no drop, 'much less': MECN vs ECN",
                        Claim("less", min_effect=MUCH_LESS),
                        z["mecn"],
                        z["ecn"],
                        paper=from_text(fig, "zero losses with much less min_threshold"),
                        unit="packets",
                        text=f"MECN's zero-loss min_th more than {MUCH_LESS:.0%} lower ('much less', our threshold; {rtts})",
                        ours=Stat.of(z["mecn"].values(), never),
                        note=zero_note,
                    )
                )
                tot = {v.key: self._total(runs, ms, v, x) for v in BASE}
                comps.append(
                    claim(
                        f"{who}: drops summed over the min_th sweep, 'considerable': MECN vs ECN",
                        Claim("less", min_effect=CONSIDERABLE),
                        tot["mecn"],
                        tot["ecn"],
                        paper=from_text(fig, "considerable improvement in having less losses"),
                        unit="packets",
                        text=f"MECN more than {CONSIDERABLE:.0%} fewer drops over the sweep ('considerable', our threshold; {rtts})",
                        ours=Stat.of(tot["mecn"].values()),
                        note=f"ECN {Stat.of(tot['ecn'].values())}",
                    )
                )
            structural = ", ".join(f"{v.label}: drop-free from min_th {next((m for m in ms if drop_free(setup, v.scheme, m, rd)), '–')}" for v in BASE)
            ctx.note(f"{fig} ({what}): forced drops start at an average queue of 4·min_th for MECN and {'4' if rd.ecn_gentle else '2'}·min_th for ECN; by the bound of drop_free() ({structural}).")
            _sweep_figure(ctx, ms, d, f"{fig}: drops, {what}", "packets dropped in 10 s", f"{tag}_drops", f"Packets dropped at the bottleneck ({what}) against min_th.")
            _sweep_table(ctx, ms, d, "drops", f"Drops by min_th, {what}")
            _drops_by_cause_table(ctx, runs, ms, x, what)
        return comps

    @staticmethod
    def _first_zero(runs: RunSet, ms: Sequence[float], v: Variant, extra: str) -> SeedValues:
        by_m = [runs.per_seed(_cfg(v, m, extra), drops) for m in ms]
        out: dict[int, Any] = {}
        for seed in by_m[0]:
            best = math.inf
            for m, dm in reversed(list(zip(ms, by_m))):
                if dm.get(seed) == 0:
                    best = m
                else:
                    break
            out[seed] = best
        return by_m[0].derive(out)

    @staticmethod
    def _total(runs: RunSet, ms: Sequence[float], v: Variant, extra: str) -> SeedValues:
        by_m = [runs.per_seed(_cfg(v, m, extra), drops) for m in ms]
        out: dict[int, Any] = {}
        for seed in by_m[0]:
            vals = [d.get(seed) for d in by_m]
            out[seed] = sum(vals) if all(_number(x) for x in vals) else Excluded("a min_th of the sweep has no value")
        return by_m[0].derive(out)


def jain_fairness(r: Results) -> float:
    """Jain's index over the flows' throughputs (each over its own active time)."""
    x = [v or 0.0 for v in r.flows["goodput_bps"].to_list()]
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x)) if any(x) else math.nan


@register
class Scenarios(MecnExperiment):
    name = "mecn.scenarios"
    title = "Beyond the paper's figures: the six scenarios of §3 at one min_th (ours)"
    source = "MECN paper (seed 002) §3 (scenario list) and its summary: \"All our simulation experiments show that Multi-level ECN works better than simple ECN\"; abstract: \"less losses, better network utilization, better fairness, and the solution is scalable\""
    description = (
        f"Each of §3's six scenarios with classic ECN and MECN at min_th = {QUEUE_MIN_TH:g} "
        "packets: drops, link efficiency, Jain's fairness index over the flows' throughputs. The "
        "paper shows figures for only some scenarios (none for 2, 3 and 5) and one min_th is ours: "
        "these claims are our operationalisation of its summary sentence and abstract, counted "
        "apart from the figures' claims (one family, Holm). Fairness is tested here only, at this "
        "min_th. The abstract's 'scalable' has no experiment or quantity in the paper and is not "
        "comparable. Scenario 2's first source stops writing at 9.5 s (its last segment carries "
        "the FIN)."
    )
    axes = axes("rtt_spread")

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        configs = {
            f"{v.key}-{key}": scenario(key, v.scheme, QUEUE_MIN_TH, readings=v.readings, sample_interval="100ms")
            for key in SETUPS
            for v in variants(reading)
        }
        return for_seeds(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        ctx.note(SETUP_NOTE)
        comps: list[Comparison] = []
        rows = []
        for key, st in SETUPS.items():
            got = {
                v.key: {
                    "drops": runs.stat(f"{v.key}-{key}", drops),
                    "eff": runs.stat(f"{v.key}-{key}", goodput_efficiency),
                    "jain": runs.stat(f"{v.key}-{key}", jain_fairness),
                    "queue": runs.stat(f"{v.key}-{key}", mean_queue),
                }
                for v in BASE
            }
            short = f"{st.title.split('.')[0]}. {st.title.split('. ', 1)[-1]}"
            comps.append(drops_claim(runs, f"mecn-{key}", f"ecn-{key}", f"{short}: drops: MECN vs ECN", "MECN fewer losses (summary of §3, abstract; no figure for every scenario)", "MECN fewer than ECN", family="summary", our_statement=SUMMARY_OURS))
            for what, k, f, min_effect, text in (
                ("link efficiency", "eff", goodput_efficiency, EFFICIENCY_MIN_EFFECT, "MECN higher than ECN"),
                ("Jain fairness", "jain", jain_fairness, None, "MECN higher than ECN (abstract)"),
            ):
                comps.append(
                    claim(
                        f"{short}: {what}: MECN vs ECN",
                        Claim("greater", min_effect=min_effect),
                        runs.per_seed(f"mecn-{key}", f),
                        runs.per_seed(f"ecn-{key}", f),
                        paper=f"{text.split(' (')[0]} (summary of §3, abstract; no figure for every scenario)",
                        text=text,
                        ours=got["mecn"][k],
                        note=f"ECN {got['ecn'][k]}",
                        family="summary",
                        our_statement=SUMMARY_OURS,
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
        comps.append(
            incomparable(
                "MECN's solution is scalable",
                "the paper gives no experiment or quantity for scalability (its scenarios have 2, 5 and 10 sources on one link, with no claim across them)",
                paper="'the solution is scalable' (abstract)",
                text="scalable",
            )
        )
        ctx.table(pl.DataFrame(rows), caption=f"The six scenarios at min_th = {QUEUE_MIN_TH:g} (mean [min – max] over seeds)")
        r = runs.over_seeds("mecn-s2-two-overlapping")[0]
        fct = r.flow("s0")["fct_s"]
        ctx.note(
            "Scenario 2, MECN, seed 1: source s0 "
            + (f"completed at {fct:.2f} s after stopping at 9.5 s" if fct is not None else "had not completed its transfer by 10 s")
            + f"; s1 ran 0.5–10 s at {r.flow('s1')['goodput_bps'] / 1e6:.3f} Mb/s."
        )
        return comps
