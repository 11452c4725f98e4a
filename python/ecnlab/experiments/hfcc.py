"""HFCC — Jiang, Jin, Chen, "HFCC: An Adaptive Congestion Control Algorithm based on Explicit
Hybrid Feedbacks" (seed 003), §V: HFCC against VCP and TCP with ECN-RED on one bottleneck and
on a chain of seven:

    s_k —(10·C)— r1 —(C)— r2 —(10·C)— d_k          bottleneck ports ``r1->r2`` and ``r2->r1``

Experiments: ``hfcc.efficiency`` (Fig. 4a and Fig. 1's VCP ramp), ``hfcc.fairness`` (Fig. 4b
and Fig. 1's late join), ``hfcc.fct`` (Fig. 5), ``hfcc.buffer`` (Fig. 6), ``hfcc.demand``
(Fig. 7), ``hfcc.multibottleneck`` (Fig. 8).

The paper compares HFCC with VCP, MLCP and BMCC (the load-factor family) and with Reno, SACK,
CUBIC and CTCP over ECN-enabled RED; CTCP is optional and absent. The figures carry no values in
the text: the comparisons check the directions the text states (each with its smallest effect
that counts) and, as sizes within ``SIZE_TOL``, the numbers it gives: VCP's ~21 s ramp and
~225 s fairness in Fig. 1, −40 % and −36 % average FCT against VCP and MLCP at 30000 packets.

**MLCP and BMCC are our reconstructions**, not the protocols of their papers, which were not at
hand beyond their abstracts (claims against them carry ``rival="mlcp"``/``"bmcc"`` and are
counted apart). From their abstracts and what the HFCC and UNO papers say of them we take:
MLCP's 4-bit load factor (15 levels), its MI / inversely-proportional-increase / AI / MD laws
and the routers' mean RTT announced in 3 bits; BMCC's ADPM marking over the IP-ID giving a
high-resolution load estimate that drives MI / AI / MD. Everything else is ours and listed in
the simulator's ``schemes::mlcp`` and ``schemes::bmcc`` docs: MLCP's level boundaries (MI in
seven 10 % steps below 0.7, II in [0.7, 0.8), AI in [0.8, 1), MD levels at 1.0 / 1.05 / 1.1 /
1.2 / 1.3), its MI gain κ = 0.15 and MD factors 0.875 … 0.675; BMCC's κ = 0.35, its load
boundaries (η = 0.8, overload at 1), its MD factor falling from 0.875 at load 1 to 0.675 at
1.3, the decision rule on the estimate's bounds (a decrease only when they prove overload).
MLCP's inversely-proportional increase (the level [0.7, 0.8)) is never visited in the Fig. 4b
runs, so "the inversely-proportional increase of MLCP makes it become the worst one" tests
other parts of our MLCP than the one the paper names.

Readings (each a constant here, with its source in ``provenance()``, or a reading axis):

- Hosts: ns-2's TCP (``NS2_HOSTS``: an ACK per segment, initial window 2, minimum RTO 0.2 s,
  no SACK, no timestamps, the window cut at once, no RACK, TLP or F-RTO), the paper's
  simulator. Deviations: 1000-byte data packets (``MSS`` 960 + 40 header bytes, §V — ns-2's
  ``packetSize_`` 1000 would be 1040 on the wire), a receive window that never limits (ns-2's
  ``window_`` 20 would cap every flow at 20 packets; the paper's flows fill 150 Mb/s), SACK
  for "SACK" and CUBIC (ns-2's CUBIC is the TCP-Linux agent, with Linux's SACK scoreboard).
- Buffer: max(BDP, 2 packets per flow) at the bottleneck (§V), the BDP at the dumbbell's
  80 ms (100 Mb/s in Fig. 1) and at the chain's long flows' 360 ms. HFCC's routers serve ACKs from a strict-priority band ahead of a DropTail
  data band of that size (§IV-C2); VCP's a DropTail queue; the TCPs' RED with ECN.
- RED for the TCP baselines, ``red`` axis. The paper: "the default values of ns-2" with ECN.
  ns-2.35's defaults (``ns-default.tcl``: ``thresh_`` 0, ``maxthresh_`` 0, ``q_weight_`` −1,
  ``mean_pktsize_`` 500, ``targetdelay_`` 5 ms, ``linterm_`` 10, ``gentle_`` true) select
  ``red.cc``'s automatic configuration (``REDQueue::initialize_params``): with the packet time
  constant ptc = C / (8·mean_pktsize), min_th = max(5, targetdelay·ptc/2), max_th = 3·min_th,
  w_q = 1 − exp(−1/(10·max(0.1 s, 3·(link delay + 1/ptc))·ptc)). ``ns2`` (default): exactly
  that, 93.75 / 281.25 packets and w_q 2.7e-5 at 150 Mb/s; ``ns2_pkt1000``: the same rule with
  ``mean_pktsize_`` set to the paper's 1000-byte packets, 46.9 / 140.6 packets, w_q 5.3e-5;
  ``fixed``: 20 % / 60 % of the buffer, w_q 0.002 (this module's earlier choice, which no
  simulator makes). ns-2.35's ``use_mark_p_`` is modelled (RED's ``mark_p`` 0.1, red.cc
  ``drop_early``): an ECT packet is dropped, not marked, while the marking probability exceeds
  ``mark_p_`` (averages between max_th and 2·max_th). In byte mode the buffer is ns-2's
  ``qlim_ · mean_pktsize_`` bytes: "0.2 BDP" (300 packets of 1000 B for HFCC and the
  load-factor rivals) holds 150 of the TCPs' 1000-byte packets, and from ~1.4 BDP the TCPs'
  buffer never fills (their RED keeps the average under 2·max_th), so their Fig. 6 curve is
  flat there by construction (CUBIC's runs are byte-identical from 1.4 BDP on).
- "TCP Reno" runs as ecnlab's NewReno (RFC 6582), where the paper's ns-2 runs
  ``Agent/TCP/Reno``: they differ only with several losses in one window (Reno leaves fast
  recovery at the first partial ACK, and another loss of that window costs a second halving or
  a timeout; NewReno stays in recovery and resends it), which RED with ECN
  makes rare; ecnlab's TCP always recovers by NewReno's partial-ACK rule.
- Randomness: each seed draws every flow's start offset uniformly in [0, 50 ms) and the
  random workloads; RED's early decisions and sample-match's draws come from per-port streams
  of the same seed.
- MLCP and BMCC run over DropTail at the buffer above, as VCP; their routers mark both
  directions. Only HFCC's routers serve ACKs first (§IV-C2); the ``ack_priority`` axis gives
  every load-factor scheme that queue (``family``): under two-way traffic (Fig. 6) the rivals'
  ACKs queue behind reverse data, arrive in bursts, and the rebuilt MLCP and BMCC lose heavily
  over DropTail and nothing with the priority queue. MLCP's II phase is the ``mlcp_ii`` axis
  (``inverse``: an increase of 1/cwnd per RTT, the reading of "inversely-proportional
  increase"; ``ai``: AI in its place).
- HFCC's readings (``hfcc`` module doc of the simulator states each): ``u_th`` axis (0.9
  default; 0.8 is Algorithm 1 as printed, 0.95), ``fair_share`` axis (``afd`` by eq. 4 bounded
  to [mean, max] of the flows' counts, ``mean`` of the flows' counts, ``sample_match``), ``t_p``
  axis (``adaptive`` by eqs. 11–12 at the routers, returned to the senders with the code as
  MLCP's routers return theirs, or ``fixed`` 200 ms), ``sender_t_p`` axis (with the adaptive t_p,
  ``path``: the routers' t_p returned with the code, or ``own_rtt``: the routers' rule on the
  sender's own RTT, RTT-unfair on paths of different RTTs), ``rtt_units`` axis (eq. 12's falling gain T·RTT_T/(φ·RTT_d) is not
  dimensionless: ``ms``, the section's own numbers — T = 10 and RTT_d compared with 1400 and
  S = {80, …, 1400}, all milliseconds — or ``s``, T = 0.01, with which t_p needs ~109 s to come
  down from 200 to 80 ms), ``ri_bandwidth`` axis (eq. 8's bandwidth term, or RI's
  multiplicative step alone: the term is TCP-Jersey's estimate of the rate ACKs return at, which
  ACK compression under two-way traffic inflates — it is not applied while recovering from a
  timeout), ``amd_freeze`` axis.
- "High link utilization" (Fig. 1's 21 s, Fig. 4a, Fig. 7): one level for the whole module, 80 %
  of the link — the start of the high-load region, where VCP and HFCC stop multiplying (Table I;
  Fig. 1's text calls ρ_l > 0.8 the first flow's steady state): the time until the 1-second
  payload utilisation first reaches it (Figs. 1, 4a; ∞ if it never does), Fig. 7's utilisation
  at or above it. ``fig1_level`` = 0.9 reads it as 90 % (an analysis reading: the same runs).
- Parameters the paper does not give: Fig. 4b's run length, 300 s (Fig. 1's fairness comes at
  ~225 s; quick form 150 s; the join at 50 s is the paper's); Fig. 5's arrival rate, an offered
  load of 50 % (``FCT_LOAD``); Fig. 6's and Fig. 8's metrics (the text names none: utilisation,
  and the family's queue and loss); how the multi-bottleneck RTTs (360 ms end to end, 60 ms
  across one link: §V-B) split between links (access delays 20 ms and 5 ms, ours).
- A flow of Fig. 5 that has not finished when its run ends counts with its FCT censored at the
  run's end (a lower bound on its FCT; the runs last 1.5× the arrivals plus 30 s): the seed keeps
  its other 99 flows, and every censored flow is listed in the report. Fig. 5's runs keep their
  first ten seconds (§V discards them elsewhere): every flow's FCT counts.
- HFCC's senders and routers: eq. 8's bandwidth term once per RTT at the first ``01`` ACK one
  smoothed RTT after the last step (``ri_step`` = ``rtt``, ours: the paper gives no cadence; in a
  ramp that ACK heads a burst, where the estimate is lowest, and the term does not bind — the
  default ramp is eq. 2's step at t_p = 80 ms; ``rtt_peak``, the round's largest estimate, and
  ``ack``, every ACK, are the readings), the RTT in ns-2's 10 ms ticks (``rtt_tick``; exact is
  the reading: 80.07 ms, which the routers' whole-millisecond comparison still reads as 80 ms,
  and RTT samples no longer equal to 80 ms, so eq. 8's term binds more often), t_p compared in
  whole milliseconds (``t_p_resolution``; exact is the reading: after the first queue excursion
  t_p latches at 200 ms for the rest of a run). MLCP's routers (our reconstruction) take the smallest element of
  S at or above an EWMA of the RTTs their senders carry (UNO's EWMA, eq. 12's rule, which HFCC
  says it borrows from MLCP, not eqs. 11–12's gains): the senders' smoothed RTTs include the
  queue, so on the 80-ms dumbbell t_p is 200 ms (the nearest element, the rule before, gave
  80 ms, shorter than the RTT).
- VCP as its authors' ns-2 code (``vcp`` axis): the paper's ns-2 "has been extended with HFCC
  and integrated with other LFCC protocols including VCP". Not modelled: its sender's pacing of
  windows up to 64 segments, its 10 ms timer rounding, and ns-2's RTT in ``tcpTick_`` units for
  VCP: vcp-src.cc's ``rtt_update`` reads ``rtt_`` = ticks × tcp_tick_, our VCP scales its MI
  and AI by the exact smoothed RTT, while HFCC's senders read ticks (``rtt_tick``). The
  treatment is asymmetric; the effect on VCP is small (with Fig. 6's VCP queue of 2–29 ms, ns-2's
  (rtt/100 ms)² for the AI is up to ~20 % below ours). Left so: the tick is a change to VCP's
  scheme and would change every recorded VCP run. Modelled, as a reading: vcp-src.cc's
  ``recv_newack_helper`` calls ``opencwnd()`` once per new ACK, one MI or AI step whatever the
  ACK covers, where ecnlab's load-factor schemes apply their laws per acknowledged segment;
  every family sender here (HFCC, VCP, MLCP, BMCC) counts at most ``max_segments_per_ack``
  segments per ACK, 1 by default (ns-2's one step per new ACK), 2 under the ``ack_segments``
  axis (RFC 3465's L, the schemes' own default). With ``NS2_HOSTS``' ACK per segment the two
  differ only where an ACK covers more than one segment: after a timeout's repair, a lost ACK.
- Fig. 8: the chain's buffers are one BDP at the long flows' 360 ms (§V's "one BDP"; the
  longest RTPD is ours), "five long-lived flows … in forward and reverse directions" is five each
  way; stalls and outages are checked on each of the seven forward links (they do not carry
  the same load: link 7 runs lower for VCP, the rebuilt MLCP and BMCC, and CUBIC). The stall
  rule (base.stall) counts every flow's delivery against one link's capacity, so on the chain,
  45 flows over seven links, it cannot fire; the outage rule counts the flows crossing each
  link.
- Claims: directions as the text states them, with their smallest effect (``TIME_EFFECT`` for
  times counted in 1-second bins, the framework's 2 % otherwise); sizes within ``SIZE_TOL``; our
  own bounds named once (``CLOSE_TOL``, ``SIMILAR_TOL``, ``SLIGHTLY``, ``FAIR_HOLD_S``,
  ``HIGH_UTIL``, ``RECOVER_FRACTION``); the family's "low persistent queue length, negligible
  packet loss" (abstract, §I) as HFCC's mean queue and drop rate against each TCP on the Fig. 6
  and Fig. 8 runs (the comparison is ours: ``our_statement``, counted apart). Fairness (Figs. 1, 4b) is the ``fair_level`` reading: the two rates within
  10 % by default — the paper reads fairness off Fig. 1's cwnd curves meeting — or Jain's index
  ≥ 0.95 or ≥ 0.99. Fig. 7's "ensure the high utilization … when the burstiness occurs" is HFCC's
  utilisation in the 5 s after the join and from then until the 100 flows leave, the lower of
  the two at or above the module's "high link utilization" (``fig1_level``), and the caption's
  "responsive to sudden … demand changes" the utilisation of the 5 s after they leave at or above
  the same level (the join's is the paper's claim, its 5-s window ours; the leave's reading —
  window and level — is ours, and that claim is counted apart: every scheme growing by MI from a
  1/105 share fails a 5-s window). Beside them, ours and named so
  (counted apart: ``our_statement``): both windows held against HFCC's own level before the join
  (a level kept; the paper names no reference level), the utilisation with the 100 flows ≥
  ``HIGH_UTIL``, and "HFCC back at ``RECOVER_FRACTION`` of its own level before the join sooner
  than VCP" (the paper compares no protocol there). Fig. 8's "better than other protocols" is the mean link utilisation and, for
  the abstract's fairness, the forward long flows' share against their max-min share (half of
  every link); a claim on runs with starved flows (below 10 % of their max-min share on their own
  path) is flagged. Not tested: §IV-D's "better
  performance when β varies in [1, 5]" and "the adaptive γ can improve the performance" (the
  paper shows no result), §IV-D's "when RTT lies in [2.0, 2.5] times of t_p, the queue backlog
  is avoidable" (no run sets an RTT against t_p), U_th's trade-off and "the fixed t_p is ill-suited when RTT is too
  large or the link bandwidth is too small" (no figure; the ``u_th`` and ``t_p`` axes run the
  alternatives beside the default), Fig. 7's "adjust cwnd agilely" (no window is measured),
  Fig. 6's "better than that of VCP" on the queue and drops (against VCP only utilisation is
  tested; the queue and drop claims are against the TCPs, ours; the table gives VCP's queue and
  drops beside HFCC's).
- What decides HFCC's numbers (declared in every report's notes): its utilisation is about
  U_th·ξ of a link's bytes, 0.882 with our U_th = 0.9 and ξ = 0.98, less the reverse flows'
  ACKs under two-way traffic (λ counts ACK bytes) — 0.85–0.86 of the payload capacity in the
  dumbbells of a few flows (Figs. 4a, 6), our choice through U_th, not the paper's setup; above it
  with a lone flow (Fig. 4b before the join: 0.90) and with Fig. 7's 105 flows (0.90, over a
  standing queue of ~48 packets), and 0.80 on Fig. 8's chain (c3e4437's runs); its advantage over VCP and the TCPs in
  Fig. 6 comes from the ACK priority band §IV-C2 gives HFCC (the ``ack_priority`` axis gives it
  to the load-factor rivals); the hosts' 1000-packet access queues (ours) favour HFCC.
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
    assumption,
    by_seed,
    claim,
    default,
    from_text,
    hosts_tcp,
    incomparable,
    newreno_params,
    newreno_sources,
    ms_text,
    paper,
    rate_text,
)
from .uno import aggregate_bps, jain, shares
from .verdict import MIN_EFFECT, Claim

PORT = "r1->r2"
REVERSE = "r2->r1"
PACKET_BYTES = 1000
MSS = 960
START_JITTER_S = 0.05
SAMPLE = "100ms"
CAPACITY = 150e6
RTT_MS = 80.0
WARMUP_S = 10.0
#: The span the claims after the warm-up measure (§V: "the data in the first ten seconds are
#: ignored"), given to ``per_seed`` so that an outage there makes a claim's run stalled and one
#: in the start-up does not: every scheme's windows grow from 2 packets, and on the recorded
#: runs the link carries under 5 % of its capacity for 1–13 s at the start (HFCC 1.1–3.8 s,
#: VCP to 13.6 s in Fig. 4b), which no claim after the warm-up reads.
AFTER_WARMUP = (WARMUP_S, None)
FCT_LOAD = 0.5

#: Tolerance of every size the paper states (21 s, 225 s, −40 %, −36 %): they are rounded
#: readings of its own figures ("21s or so", "until 225s or so"). A quarter keeps every band
#: clear of no effect: the widest ratio band, 0.64 ± 25 %, ends at 0.80.
SIZE_TOL = 0.25
#: Smallest relative difference a time-to-a-level claim counts: the times are counted in
#: 1-second bins and the fastest are 2–4 s, where one bin is 25–50 %.
TIME_EFFECT = 0.25
#: "Close to" (Fig. 4a: HFCC's convergence to efficiency "is close to that of MLCP and BMCC"):
#: within ±50 % of the rival's time — ours; at 2–3 s one 1-second bin is 33–50 %.
CLOSE_TOL = 0.5
#: "Similar" (Fig. 6: HFCC "similar to that of MLCP and BMCC"): utilisation within ±5 % — ours.
SIMILAR_TOL = 0.05
#: "Slightly better than BMCC" (Fig. 5): HFCC's average FCT 1–19 % below BMCC's, the ratio
#: 0.9 ± 10 % — our reading of "slightly".
SLIGHTLY = (0.9, 0.1)
#: Fairness (Figs. 1, 4b): the flows' 1-second throughputs pass the ``fair_level`` reading's
#: test (FAIR_TESTS) and keep passing it for FAIR_HOLD_S seconds (Fig. 1: "the two flows get
#: intra-flows fairness" — a state reached and kept; the hold is ours).
FAIR_HOLD_S = 5
#: A bound of ours on Fig. 7's utilisation with the 100 flows: 90 % of the link. The paper's
#: "high utilization" is the module's one level for it, the ``fig1_level`` reading (80 %,
#: :data:`FIG1_AXIS`), tested as the paper's claim; this stricter bound is ours.
HIGH_UTIL = 0.9
#: Fig. 7's recovery after the 100 flows leave: back at this fraction of the scheme's own
#: level before the join (10 s to the join) — ours. Not the whole level: the 1-second bins
#: scatter around their mean, so reaching the mean itself would time a fluctuation.
RECOVER_FRACTION = 0.95
#: Fig. 7: the first seconds after the 100 flows join (their slow starts: at 80 ms a window of
#: 1.4 Mb/s is reached in well under 1 s) are read apart from the level with the 105 flows
#: that follows. 5 s is ours; the paper draws the whole 100–200 s phase.
JOIN_ONSET_S = 5.0
#: Fig. 7 after the 100 flows leave: the lowest 1-second utilisation in this many seconds (a
#: figure, not a claim): the trough "seconds back to 95 %" alone does not show.
LEAVE_TROUGH_S = 10
#: Fig. 8: each link carries the 5 forward long flows and its own 5 cross flows, all
#: backlogged, so the long flows' max-min fair share is half of every link.
LONG_FAIR_SHARE = 0.5
#: ns-2's default queue of every link the experiment does not size (Queue set limit_ 50),
#: the access_queue = ns2 reading; ACCESS_QUEUE is ours (the default reading, see the axis).
NS2_QUEUE_LIMIT = 50
ACCESS_QUEUE = 1000
#: ns-2's TCP keeps its smoothed RTT in ticks of tcpTick_ (Agent/TCP tcpTick_ 0.01).
NS2_TCP_TICK_S = 0.01


@dataclass(frozen=True)
class Scheme:
    key: str
    label: str
    cc: str
    color: str
    ecn: str | None = None
    sack: bool = False

    @property
    def rival(self) -> str | None:
        """The name a claim against this scheme carries (``rival=``)."""
        return None if self.key == "hfcc" else self.key


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
TCPS = (RENO, SACK, CUBIC)
#: HFCC's rivals whose results the paper calls "similar" rather than worse (Fig. 6).
PEERS = (MLCP, BMCC)

#: Axes of every experiment (each runs HFCC and the three load-factor rivals).
FAMILY_AXES = (
    ReadingAxis("u_th", (0.9, 0.8, 0.95), "U_th is set 'dynamically' without a rule; 0.8 is Algorithm 1 as printed"),
    ReadingAxis("fair_share", ("afd", "mean", "sample_match"), "eq. 4's m_fair (bounded to the flows' mean and largest count), the mean of the flows' counts (§IV-B2's implementation sentence), or sample-match"),
    ReadingAxis("t_p", ("adaptive", "fixed"), "t_p adapted by the routers to their flows' RTTs (eqs. 11–12), or VCP's fixed 200 ms at routers and senders"),
    ReadingAxis("sender_t_p", ("path", "own_rtt"), "with adapted t_p, the t_p HFCC's senders scale eqs. 2–3 by: the one the routers return with the code (the paper does not say how a sender learns it; MLCP's routers return theirs), or the routers' rule applied to the sender's own RTT (RTT-unfair where flows of different RTTs share a router: a 360-ms flow's rate grows 25 times slower than a 60-ms one's)"),
    ReadingAxis("rtt_units", ("ms", "s"), "eq. 12's falling gain T·RTT_T/(φ·RTT_d) is not dimensionless: evaluated in the section's milliseconds (T = 10, RTT_d against 1400 and S), or in seconds (T = 0.01: t_p needs ~109 s to fall from 200 to 80 ms)"),
    ReadingAxis("ri_bandwidth", (True, False), "eq. 8's bandwidth term RTT_min·B_n/P_s in RI, or RI's multiplicative step alone"),
    ReadingAxis("ri_step", ("rtt", "rtt_peak", "ack"), "eq. 8's bandwidth term once per RTT with the estimate at the ACK that takes it (the head of a window's burst of ACKs in a ramp, where B_n is lowest: the term does not bind there), once per RTT with the round's largest estimate (the end of its burst), or on every ACK coded 01 ('at any time t')"),
    ReadingAxis("t_p_resolution", (1.0, 0.0), "the resolution in milliseconds at which the routers compare eq. 12's RTT_d with S: whole milliseconds (the section's own unit), or exact — eq. 12's mean falls back towards samples equal to an element only from above and never reaches it, so after the first queue excursion t_p stays at the next element (200 ms on the 80-ms dumbbells) for the rest of a run; the routers' comparison only: the senders' own rule (sender_t_p = own_rtt) keeps whole milliseconds, and MLCP's routers (our reconstruction) a nanosecond"),
    ReadingAxis("rtt_tick", ("ns2", "exact"), "the RTT HFCC's senders scale by, pick t_p from and carry to the routers, in ns-2's 10 ms tcpTick_ units rounded down (an 80-ms path reads 80 ms), or exact (80.07 ms: still 80 ms at the routers' whole-millisecond comparison, t_p_resolution)"),
    ReadingAxis("vcp", ("ns2", "paper"), "VCP as the authors' ns-2 code that HFCC's simulator integrated (AI scaled by (rtt/100 ms)², γ_l 0.95, ρ rounded to whole percent), or as the VCP paper (AI by (rtt/t_ρ)², γ_l 0.98)"),
    ReadingAxis("access_queue", ("large", "ns2"), "the hosts' access links queue 1000 packets, or ns-2's default 50 (Queue limit_): with 50, HFCC's RI jump (eq. 8) sends a window's worth at once and loses thousands of packets at its own host (efficiency runs: 0.21 of the link, ~5000 host drops per seed), which Fig. 4a rules out — the paper's hosts did not drop those bursts"),
    ReadingAxis("mlcp_ii", ("inverse", "ai"), "MLCP's inversely-proportional increase as 1/cwnd per RTT, or AI in its place"),
    ReadingAxis("amd_freeze", ("rtt", "interval"), "the window frozen one RTT after AMD (§IV-C1), or one t_p as VCP freezes for one t_ρ: the router repeats its decrease code for a whole t_p"),
    ReadingAxis("ack_priority", ("hfcc", "family"), "ACKs served first at HFCC's routers only (§IV-C2), or at every load-factor scheme's routers"),
    ReadingAxis("ack_segments", (1, 2), "the segments an ACK counts for, at most, in the family's per-segment window laws (HFCC's RI and A²I, VCP's, MLCP's and BMCC's MI and AI): one step per new ACK as ns-2's senders (VCP's vcp-src.cc opencwnd), or two, RFC 3465's L (ecnlab's default for these schemes); the ACK after a timeout's repair covers hundreds of segments and, counted in full, multiplied the rivals' windows by thousands"),
    ReadingAxis("mlcp_t_p", ("at_or_above", "nearest"), "MLCP's routers take t_p as the smallest element of S at or above their flows' mean RTT (§IV-D's rule for the method it takes 'like [12]', MLCP), or the element nearest it (shorter than the RTT once it holds a queue: 80 ms on 80-ms paths)"),
)
#: The TCP baselines' RED: ns-2's automatic configuration (its defaults), with ns-2's
#: mean_pktsize_ or the paper's packet size, or fixed fractions of the buffer.
RED_AXIS = ReadingAxis(
    "red",
    ("ns2", "ns2_pkt1000", "fixed"),
    "'the default values of ns-2' (ns-2.35): byte mode, mean_pktsize_ 500 (thresholds 93.75/281.25 mean-size packets = 46.9/140.6 kB, w_q 2.7e-5 at 150 Mb/s, the buffer qlim·500 bytes), ECT dropped above mark_p_ 0.1; the same with mean_pktsize_ set to the paper's 1000-byte packets (46.9/140.6 packets, w_q 5.3e-5, the buffer in packets); or packet mode at 20 %/60 % of the buffer with w_q 0.002 (ours before)",
)
#: Experiments that run the TCP baselines as well.
AXES = FAMILY_AXES + (RED_AXIS, NS2_NEWRENO)
#: When two or more flows "get intra-flows fairness" (Figs. 1, 4b), on their 1-second
#: throughputs: label and test per reading of the ``fair_level`` axis.
FAIR_TESTS: dict[str, tuple[str, Callable[[Sequence[float]], bool]]] = {
    "rates_10pct": ("the rates within 10 %", lambda v: max(v) > 0 and min(v) >= 0.9 * max(v)),
    "jain_0.95": ("Jain ≥ 0.95", lambda v: jain(list(v)) >= 0.95),
    "jain_0.99": ("Jain ≥ 0.99", lambda v: jain(list(v)) >= 0.99),
}
FAIR_AXIS = ReadingAxis(
    "fair_level",
    tuple(FAIR_TESTS),
    "when the flows are fair: the paper reads it off Fig. 1's cwnd curves ('until 225s or so, the two flows get "
    "intra-flows fairness', where the two curves meet), so the default asks the rates themselves to meet: the slowest "
    "within 10 % of the fastest (ours: the closest of the three to curves that meet); Jain ≥ 0.95 (this module's "
    "earlier test) accepts two rates 1.6 : 1 apart and Jain ≥ 0.99 1.22 : 1, curves still apart",
    affects="analysis",
)
#: The module's one level for the paper's "high link utilization" (Fig. 1's 21 s, Fig. 4a's
#: ramp, Fig. 7's "ensure the high utilization … when the burstiness occurs"): the threshold
#: that defines the event the paper states, declared, so the claims stay the paper's.
FIG1_AXIS = ReadingAxis(
    "fig1_level",
    (0.8, 0.9),
    "'high link utilization' (Figs. 1, 4a and 7): 80 %, where the high-load region starts (Table I; Fig. 1's text: steady state ρ_l > 0.8), or 90 %",
    affects="analysis",
)

# ------------------------------------------------------------------------------- RED

#: ns-2.35's RED defaults (tcl/lib/ns-default.tcl, Queue/RED), the paper's "default values
#: of ns-2": thresh_ = maxthresh_ = 0 and q_weight_ = −1 select red.cc's automatic rule.
NS2_RED_MEAN_PKTSIZE = 500
NS2_RED_TARGET_DELAY_S = 0.005
NS2_RED_MAX_P = 0.1  # 1 / linterm_ 10
NS2_RED_MARK_P = 0.1  # mark_p_ with use_mark_p_ true
#: Our earlier choice, kept as the ``red = fixed`` reading.
FIXED_RED_W_Q = 0.002


def ns2_red_auto(rate_bps: float, link_delay_s: float, mean_pktsize: int) -> tuple[float, float, float]:
    """(min_th, max_th, w_q) by ns-2.35's ``REDQueue::initialize_params`` (red.cc) with
    ``thresh_ = maxthresh_ = 0`` and ``q_weight_ = -1``: ptc = C/(8·mean_pktsize) packets/s;
    min_th = max(5, targetdelay·ptc/2); max_th = 3·min_th; w_q = 1 − exp(−1/(10·rtt·ptc)) with
    rtt = max(0.1 s, 3·(link delay + 1/ptc))."""
    ptc = rate_bps / (8.0 * mean_pktsize)
    rtt = max(0.1, 3.0 * (link_delay_s + 1.0 / ptc))
    w_q = 1.0 - math.exp(-1.0 / (10.0 * rtt * ptc))
    min_th = max(5.0, NS2_RED_TARGET_DELAY_S * ptc / 2.0)
    return min_th, 3.0 * min_th, w_q


def red_queue(buffer: int, rate_bps: float, link_delay_s: float, rd: Reading) -> dict[str, Any]:
    common = {"kind": "red", "max_p": NS2_RED_MAX_P, "gentle": True, "wait": True, "ecn": True, "hard_drop": True}
    if rd.red == "fixed":
        return {**common, "limit": buffer, "byte_mode": False, "min_th": max(1.0, 0.2 * buffer), "max_th": max(3.0, 0.6 * buffer), "w_q": FIXED_RED_W_Q, "mean_pkt_size": PACKET_BYTES}
    size = NS2_RED_MEAN_PKTSIZE if rd.red == "ns2" else PACKET_BYTES
    min_th, max_th, w_q = ns2_red_auto(rate_bps, link_delay_s, size)
    # ns-2.35 (bytes_, queue_in_bytes_ true): the queue in bytes against thresholds of
    # mean-size packets, the limit qlim_·mean_pktsize_ bytes, the probability scaled by
    # size/mean_pktsize_ (red.cc enque, modify_p).
    return {**common, "limit": buffer * size, "byte_mode": True, "min_th": min_th, "max_th": max_th, "w_q": w_q, "mean_pkt_size": size, "mark_p": NS2_RED_MARK_P}


def bottleneck_queue(scheme: Scheme, buffer: int, rd: Reading, rate_bps: float, link_delay_s: float) -> dict[str, Any]:
    prio = scheme.key == "hfcc" or (rd.ack_priority == "family" and scheme in FAMILY)
    if prio:
        return {"kind": "prio", "ack": {"kind": "droptail", "limit": 100_000}, "data": {"kind": "droptail", "limit": buffer}}
    if scheme in FAMILY:
        return {"kind": "droptail", "limit": buffer}
    return red_queue(buffer, rate_bps, link_delay_s, rd)


def marker(scheme: Scheme, rd: Reading) -> dict[str, Any] | None:
    if scheme.key == "hfcc":
        return {"kind": "hfcc", "u_th": float(rd.u_th), "fair_share": rd.fair_share, "adapt_t_p": rd.t_p == "adaptive", "rtt_units": rd.rtt_units, "rtt_tick_s": rtt_tick(rd), "t_p_resolution_ms": float(rd.t_p_resolution), "t_p_ties": "load"}
    if scheme.key == "vcp" and rd.vcp == "ns2":
        return {"kind": "vcp", "target_utilization": VCP_NS2_TARGET, "percent_rounding": True}
    if scheme.key == "mlcp":
        return {"kind": "mlcp", "t_p_rule": rd.mlcp_t_p}
    if scheme.key in ("vcp", "bmcc"):
        return {"kind": scheme.key}
    return None


def cc_params(scheme: Scheme, rd: Reading) -> dict[str, Any] | None:
    if scheme in (RENO, SACK):
        return newreno_params(rd.newreno)
    if scheme not in FAMILY:
        return None
    p: dict[str, Any] = {"max_segments_per_ack": float(rd.ack_segments)}
    if scheme.key == "hfcc":
        p.update({"t_p": sender_t_p(rd), "ri_bandwidth": bool(rd.ri_bandwidth), "ri_step": rd.ri_step, "freeze": rd.amd_freeze, "rtt_tick_s": rtt_tick(rd)})
    if scheme.key == "vcp" and rd.vcp == "ns2":
        p["ai_scaling"] = "ns2"
    if scheme.key == "mlcp":
        p["ii"] = rd.mlcp_ii == "inverse"
    return p


def sender_t_p(rd: Reading) -> str:
    """The t_p HFCC's senders scale eqs. 2–3 by: with the ``adaptive`` t_p, the routers' t_p
    returned with the code (``path``) or the routers' rule on the sender's own RTT
    (``own_rtt``, the ``sender_t_p`` axis); VCP's fixed 200 ms with the ``fixed`` reading."""
    return rd.sender_t_p if rd.t_p == "adaptive" else "fixed"


#: VCP's ns-2 code (vcp-queue.cc): target utilisation 0.95 (the VCP paper's is 0.98).
VCP_NS2_TARGET = 0.95


def rtt_tick(rd: Reading) -> float:
    return NS2_TCP_TICK_S if rd.rtt_tick == "ns2" else 0.0


def access_queue(rd: Reading) -> dict[str, Any]:
    return {"kind": "droptail", "limit": NS2_QUEUE_LIMIT if rd.access_queue == "ns2" else ACCESS_QUEUE}


def flow_spec(scheme: Scheme, rd: Reading, name: str, src: str, dst: str, start: float, *, stop: float | None = None, size: int | None = None) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name, "src": src, "dst": dst, "cc": scheme.cc, "start": f"{start:.9f}s"}
    if scheme.ecn:
        f["ecn"] = scheme.ecn
    if (p := cc_params(scheme, rd)) is not None:
        f["cc_params"] = p
    if stop is not None:
        f["stop"] = f"{stop:.9f}s"
    if size is not None:
        f["size"] = size
    return f


def tcp_table(scheme: Scheme, bdp_bytes: float) -> dict[str, Any]:
    """ns-2's TCP with this module's deviations (each declared in :func:`common_sources`)."""
    return hosts_tcp(NS2_HOSTS, mss=MSS, rcv_buf=receive_buffer(bdp_bytes), sack=scheme.sack)


def receive_buffer(bdp_bytes: float) -> int:
    return int(max(8 * bdp_bytes, 1 << 20))


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
        links.append({"a": f"s{k}", "b": "r1", "rate": access, "delay": edge, "queue": access_queue(reading), "queue_ba": access_queue(reading)})
        links.append({"a": "r2", "b": f"d{k}", "rate": access, "delay": "0ms", "queue": access_queue(reading), "queue_ba": access_queue(reading)})
    q = bottleneck_queue(scheme, buffer, reading, capacity_bps, bottleneck_ms / 1e3)
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
        "tcp": tcp_table(scheme, capacity_bps * rtt_ms / 1e3 / 8),
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
        data["workloads"] = [w]
    return Scenario(data)


def chain(scheme: Scheme, duration_s: float, *, seed: int, reading: Reading, links: int = 7, capacity_bps: float = CAPACITY) -> Scenario:
    """Routers r0 … r7 joined by 7 links of 150 Mb/s / 20 ms; 5 long flows each way across all
    of them (access 20 ms: RTT 360 ms) and 5 cross flows per link (access 5 ms: RTT 60 ms)."""
    rng = random.Random(seed)
    access = rate_text(10 * capacity_bps)
    nodes = [{"name": f"r{i}", "kind": "router"} for i in range(links + 1)]
    topo: list[dict[str, Any]] = []
    n_long = 10
    bdp_long = capacity_bps * 0.36 / (8 * PACKET_BYTES)
    flows: list[dict[str, Any]] = []
    for i in range(links):
        n_here = n_long + 5
        buffer = max(int(math.ceil(bdp_long)), 2 * n_here)
        q = bottleneck_queue(scheme, buffer, reading, capacity_bps, 0.020)
        topo.append({"a": f"r{i}", "b": f"r{i + 1}", "rate": rate_text(capacity_bps), "delay": "20ms", "queue": q, "queue_ba": q})
    for k in range(5):
        for side, (a, b) in (("f", ("L", "R")), ("r", ("R", "L"))):
            src, dst = f"{side}{k}{a}", f"{side}{k}{b}"
            nodes += [{"name": src, "kind": "host"}, {"name": dst, "kind": "host"}]
            for h, r in ((src, "r0" if a == "L" else f"r{links}"), (dst, f"r{links}" if b == "R" else "r0")):
                topo.append({"a": h, "b": r, "rate": access, "delay": "20ms", "queue": access_queue(reading), "queue_ba": access_queue(reading)})
            flows.append(flow_spec(scheme, reading, f"long-{side}{k}", src, dst, rng.uniform(0.0, START_JITTER_S)))
    for i in range(links):
        for k in range(5):
            src, dst = f"c{i}-{k}s", f"c{i}-{k}d"
            nodes += [{"name": src, "kind": "host"}, {"name": dst, "kind": "host"}]
            topo.append({"a": src, "b": f"r{i}", "rate": access, "delay": "5ms", "queue": access_queue(reading), "queue_ba": access_queue(reading)})
            topo.append({"a": f"r{i + 1}", "b": dst, "rate": access, "delay": "5ms", "queue": access_queue(reading), "queue_ba": access_queue(reading)})
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
        "tcp": tcp_table(scheme, capacity_bps * 0.36 / 8),
        "measure": {"interval": SAMPLE, "sample_ports": [f"r{i}->r{i + 1}" for i in range(links)], "sample_flows": True},
        "flows": flows,
    }
    return Scenario(data)


# ------------------------------------------------------------------------ provenance

_S5 = "§V"
_VCP = "VCP (Xia et al., ToN 2008) as §III and Table I of the HFCC paper give it"
_MLCP_R = "our MLCP reconstruction (schemes::mlcp module doc)"
_BMCC_R = "our BMCC reconstruction (schemes::bmcc module doc)"
_NS2_RED = "ns-2.35 tcl/lib/ns-default.tcl Queue/RED"
_RED_CC = "ns-2.35 queue/red.cc REDQueue::initialize_params"
_ECNLAB = "ecnlab's default for this controller"


def common_sources(rd: Reading, *, red: bool) -> list[Source]:
    """Where every parameter all the HFCC experiments share comes from; ``red``: the
    experiment runs the TCP baselines over RED."""
    out = [
        # -------------------------------------------------------------- hosts ([tcp])
        paper("tcp.mss", MSS, f"{_S5}: 'the size of data packets is 1000 bytes, while the size of ACK packets is 40 bytes' — 960 payload + 40 header bytes (ns-2's packetSize_ 1000 would be 1040 on the wire)"),
        assumption("tcp.rcv_buf", "max(8·BDP, 1 MiB)", "a receive window that never limits: ns-2's window_ 20 would cap every flow at 20 packets (2 Mb/s at 80 ms), and the paper's flows fill 150 Mb/s, so its scripts raised it"),
        paper("tcp.sack", "SACK+ECN-RED and CUBIC+ECN-RED runs only", f"{_S5}: 'TCP SACK' (ns-2's Agent/TCP/Sack1); CUBIC: ns-2's CUBIC is the TCP-Linux agent, which keeps Linux's SACK scoreboard (assumption)"),
        # -------------------------------------------------------------- topology
        assumption("hosts.ip_id", "sequential", "ns-2's packets carry no IP-ID; BMCC's marking (ADPM) reads one: a counter per host, one per packet (ecnlab's default). Every host sends one flow except in Fig. 5 (hfcc.fct), whose 100 workload flows share one host pair: each flow's IP-IDs skip the other flows' packets in between, so the rebuilt BMCC's probe thresholds there are not the per-flow van der Corput sequence (schemes::bmcc) but closer to random ones; only BMCC reads the IP-ID"),
        assumption("topology.kind", "explicit", "the dumbbell and the chain are built link by link here"),
        paper("topology.nodes.*", "hosts and routers", f"{_S5}-A (one bottleneck, one host pair per long flow), §V-B (seven bottleneck links)"),
        assumption("topology.links.a", "link ends", "the topology of §V-A/§V-B"),
        assumption("topology.links.b", "link ends", "the topology of §V-A/§V-B"),
        paper("topology.links.rate", "150 Mb/s bottlenecks (100 Mb/s in Fig. 1); access 10·C", f"{_S5}-A: 150 Mb/s; §III Fig. 1: 100 Mb/s; §V-B: 150 Mb/s; access links 10× the bottleneck (assumption: never the bottleneck)"),
        paper("topology.links.delay", "RTPD 80 ms: bottleneck 20 ms, access 20 ms + 0 ms; chain 20 ms links, access 20 / 5 ms", f"{_S5}-A: RTPD 80 ms (its split between links is ours); §V-B: links 20 ms, RTPD 360 ms (long) and 60 ms (cross), access delays ours"),
        paper("topology.links.queue.kind", "bottlenecks: prio (HFCC), droptail (VCP, MLCP, BMCC), red (TCPs); access links droptail", "§IV-C2: HFCC's routers serve ACKs first; §V: 'TCP Reno, TCP SACK, CUBIC … with the ECN-enabled RED'; the rivals' queue and the access links' are not given (DropTail, ns-2's default queue; the ack_priority axis)"),
        paper("topology.links.queue.limit", f"bottlenecks max(BDP, 2 per flow) or the Fig. 6 fraction of a BDP (RED in byte mode: that many packets × mean_pktsize_ bytes, as ns-2, so with red = ns2 '0.2 BDP' holds 150 of the TCPs' 1000-byte packets where HFCC and VCP get 300, and from ~1.4 BDP the TCPs' buffer never fills); access links {NS2_QUEUE_LIMIT if rd.access_queue == 'ns2' else ACCESS_QUEUE}", f"{_S5}: 'the bottleneck queue limit is one BDP, or two packets per-flow, whichever is larger'; §V-A3: 0.2–2.0 BDP; the BDP of the chain at the long flows' 360 ms RTPD (§V-B; ours: the longest RTPD); access links: {'ns-2.35 tcl/lib/ns-default.tcl Queue set limit_ 50 (the access_queue axis)' if rd.access_queue == 'ns2' else 'ours, not ns-2 default 50: with 50 HFCC loses its RI bursts at its own host, which Fig. 4a rules out (the access_queue axis); sized so that the scheme under test works, it favours HFCC'}"),
        default("topology.links.queue.bytes", False, "ns-2.35 Queue/DropTail queue_in_bytes_ false (limits in packets)"),
        assumption("topology.links.queue.ack.kind", "droptail", "§IV-C2 names the ACK band, not its discipline"),
        assumption("topology.links.queue.ack.limit", 100_000, "ACKs are never dropped at the priority band (its size is not given): buffer on top of the bottleneck queue limit that VCP and the TCPs do not get (MLCP and BMCC neither, but under ack_priority = family), which favours HFCC; Fig. 6's advantage over VCP and the TCPs comes from this band (the ack_priority axis)"),
        default("topology.links.queue.ack.bytes", False, "ns-2.35 Queue/DropTail queue_in_bytes_ false"),
        paper("topology.links.queue.data.kind", "droptail", "§IV-C2: HFCC's data band holds packets that 'can not be timely forwarded' (ns-2's DropTail)"),
        paper("topology.links.queue.data.limit", "the buffer above", _S5),
        default("topology.links.queue.data.bytes", False, "ns-2.35 Queue/DropTail queue_in_bytes_ false"),
        # ------------------------------------------------------------ flows and ports
        paper("flows.cc", "the scheme of the run; 'TCP Reno' and 'TCP SACK' as newreno", f"{_S5}: HFCC, VCP, MLCP, BMCC, Reno, SACK, CUBIC (CTCP is not built); 'TCP Reno' runs as ecnlab's NewReno (RFC 6582) where ns-2 runs Agent/TCP/Reno, which leaves fast recovery at the first partial ACK: they differ only with several losses in one window (ours: ecnlab's TCP always recovers by NewReno's partial-ACK rule)"),
        paper("flows.ecn", "the scheme's own codec; 'ecn' (RFC 3168) for the TCPs", f"{_S5}: the TCPs 'in conjunction with the ECN-enabled RED'"),
        assumption("flows.kind", "tcp", "every flow of §V is a TCP transfer"),
        assumption("flows.name", "labels", "names only"),
        assumption("flows.src", "host pairs", "one host pair per long flow"),
        assumption("flows.dst", "host pairs", "one host pair per long flow"),
        assumption("flows.start", f"the figure's start + U[0, {START_JITTER_S * 1e3:g} ms)", "a per-seed offset so seeds differ (the paper runs one simulation per point)"),
        assumption("ports.port", "both directions of every bottleneck", "the load-factor routers mark both directions (reverse traffic in Fig. 6 and Fig. 8)"),
        paper("ports.marker.kind", "the scheme's router (hfcc, vcp, mlcp, bmcc)", "§IV-C2 (HFCC), §III (VCP); MLCP and BMCC: our reconstructions"),
        # ---------------------------------------------------------- load factor (eq. 1)
        paper("ports.marker.kappa_q", 0.5, "§III eq. 1: κ_q 'fixed to 0.5 in [11]' (every scheme of the family uses VCP's load factor)"),
        paper("ports.marker.target_utilization", "0.98; VCP 0.95 with vcp = ns2", "§III eq. 1: ξ_l 'e.g. 0.98'; VCP's ns-2 code (vcp-queue.cc) uses 0.95 (the vcp axis). λ of eq. 1 counts every byte that arrives, ACKs included (schemes::hfcc doc): under two-way traffic the reverse flows' ACKs take their share of the target"),
        paper("ports.marker.t_q_s", 0.01, "§III: q(t) sampled 'every t_q (e.g. 10ms)'"),
        default("ports.marker.queue_weight", 0.25, "VCP's ns-2 code (vcp-queue.cc): the EWMA of the interval's queue samples (the paper says 'a low-pass filter')"),
        paper("ports.marker.low_load", 0.8, "Table I/II: low load 0 ≤ ρ < 0.8"),
        paper("ports.marker.overload", 1.0, "Table I/II: overload ρ ≥ 1.0"),
        paper("ports.marker.t_p_s", 0.2, "§IV-B1: t_p 'e.g. 200ms' (HFCC's start value before it adapts; MLCP's and BMCC's interval: VCP's 200 ms, ours)"),
        paper("ports.marker.t_rho_s", 0.2, "§III: 't_ρ (200ms in the implementation of VCP)'"),
        default("ports.marker.percent_rounding", rd.vcp == "ns2", "VCP's ns-2 code (vcp-queue.cc) classifies ⌊100·ρ + 1⌋ (the vcp axis: ns2 rounds, paper does not)"),
        # ------------------------------------------------------------- HFCC's router
        assumption("ports.marker.u_th", float(rd.u_th), f"§IV-D sets U_th 'according to the output link capacity dynamically' with no rule; Table II has a U_th distinct from 0.8, and at 0.8 (Algorithm 1 as printed) one of two flows is always told to decrease, so the link settles below 80 % — the loss §IV-D warns of; 0.9, the middle of the high-load region (the u_th axis). It sets HFCC's utilisation: HFCC holds a link at about U_th·ξ = {float(rd.u_th) * HFCC_XI:.3f} of its bytes (λ counts ACK bytes, so under two-way traffic less the reverse ACKs' share); with 0.9 the 0.85–0.86 of the payload capacity of HFCC's dumbbell runs with a few flows follows from this choice, not from the paper"),
        paper("ports.marker.adapt_t_p", rd.t_p == "adaptive", "§IV-D eqs. 11–12 (the t_p axis); MLCP's routers adapt t_p to the mean RTT as UNO describes"),
        paper("ports.marker.rtt_window_s", 0.01, "§IV-D (1): 'the control interval T=10ms'"),
        paper("ports.marker.phi", 50.0, "§IV-D (2): 'In [12], φ = 50'"),
        paper("ports.marker.rtt_units", rd.rtt_units, "§IV-D: T = 10 ms, RTT_d against 1400 and S in ms (the rtt_units axis)"),
        default("ports.marker.rtt_tick_s", rtt_tick(rd), "ns-2.35 tcl/lib/ns-default.tcl Agent/TCP tcpTick_ 0.01: the sender's smoothed RTT, which the packets carry, is kept in whole ticks (the rtt_tick axis)"),
        default("flows.cc_params.rtt_tick_s", rtt_tick(rd), "ns-2.35 Agent/TCP tcpTick_ 0.01: the RTT an ns-2 sender scales by (VCP's vcp-src.cc reads t_srtt_ >> T_SRTT_BITS ticks) (the rtt_tick axis)"),
        assumption("flows.cc_params.ri_step", rd.ri_step, "§IV-C1 gives eq. 8 'at any time t' with α_s 'the increased ratio of cwnd in one RTT' and no cadence for the bandwidth term: once per RTT, at the first 01 ACK one smoothed RTT after the previous step (ours). In a ramp that ACK heads a window's burst, where B_n is lowest, and the term does not bind: HFCC's default ramp is eq. 2's step at t_p = 80 ms. The round's largest estimate ('rtt_peak') and every ACK ('ack') are the ri_step axis"),
        assumption("ports.marker.t_p_resolution_ms", float(rd.t_p_resolution), "§IV-D gives S, T and the 1400-ms bound in whole milliseconds and no resolution for t_p = min{s ∈ S | s ≥ RTT_d}: RTT_d is compared in whole milliseconds (ours). Compared exactly the rule latches: eq. 12's mean returns towards samples equal to 80 ms only from above, so after the first queue excursion t_p would stay at 200 ms for the rest of a run (the t_p_resolution axis, 0: exact). The senders' own rule (sender_t_p = own_rtt) compares in whole milliseconds too"),
        paper("ports.marker.fair_share", rd.fair_share, "§IV-B2: eq. 4 (AFD's m_fair), 'in implementation' the mean, or sample-match (the fair_share axis)"),
        assumption("ports.marker.fair_interval_s", 0.01, "AFD's interval is not given; the 10 ms window T of §IV-D"),
        assumption("ports.marker.rate_weight", 0.1, "m_i's EWMA weight is not given: a memory of ~100 ms, one RTT at 80 ms"),
        assumption("ports.marker.nu", 1.7, "eq. 4's ν is not given: AFD's a = 1.7 as we recall it from Pan et al. 2003 ([27]), not checked against that paper, here on packet counts where AFD counts bytes"),
        assumption("ports.marker.varrho", 1.8, "eq. 4's ϱ is not given: AFD's b = 1.8 as we recall it ([27]), not checked; ϱ > ν makes the integral part fall while a standing queue persists"),
        assumption("ports.marker.q_target_pkts", 5.0, "Q_target of eq. 4 is not given: 5 packets"),
        assumption("ports.marker.flow_timeout_s", 1.0, "the flow table's expiry is not given"),
        assumption("ports.marker.sample_n", 1, "sample-match's n is 'user-defined' (§IV-B2)"),
        # ------------------------------------------------------------- MLCP's router
        default("ports.marker.rtt_weight", 0.02, f"{_MLCP_R}: the mean-RTT weight a = 0.02 UNO gives for MLCP's routers"),
        # ------------------------------------------------------------ controllers
        assumption("flows.cc_params.t_p", sender_t_p(rd), "eqs. 2–3 need the routers' t_p to be RTT-fair (§III), and the paper does not say how a sender learns it; §IV-D takes t_p 'like [12]' (MLCP), whose routers return theirs (the UNO paper): 'path', the t_p of the router that set the code (among routers with that code, the one t_p_ties picks), returned with it in an imagined 3-bit field (MLCP's; HFCC's paper has only the 2 ECN bits); the sender_t_p axis' 'own_rtt': the routers' rule on the sender's own RTT; the t_p axis' 'fixed': 200 ms"),
        assumption("ports.marker.t_p_ties", "load", "routers with the same code: the packet keeps the t_p of the more loaded one (load in whole percent, VCP's ns-2 unit, in a second imagined field), the bottleneck's, as MLCP returns the most loaded router's; equal loads: the longer. 'longer' / 'shorter' pick by the interval alone, whichever router is the bottleneck"),
        paper("flows.cc_params.ri_bandwidth", bool(rd.ri_bandwidth), "§IV-C1 eq. 8's bandwidth term (the ri_bandwidth axis)"),
        paper("flows.cc_params.freeze", rd.amd_freeze, "§IV-C1: 'cwnd must be frozen by one RTT after the AMD action' (the amd_freeze axis)"),
        paper("flows.cc_params.alpha", "HFCC 0.0625 (RI); VCP/MLCP/BMCC 1.0 (AI)", "§IV-C1: α 'default value is 0.0625'; Table I: VCP's AI step (α = 1 in [11]); MLCP/BMCC: ours"),
        paper("flows.cc_params.beta_min", "HFCC 1 (β of A²I); BMCC 0.675 (MD)", f"§IV-D eq. 13: β in [1, 5]; BMCC: {_BMCC_R}"),
        paper("flows.cc_params.beta_max", "HFCC 5; BMCC 0.875", f"§IV-D: 'better performance when β varies in [1, 5]'; BMCC: {_BMCC_R}"),
        paper("flows.cc_params.gamma_min", 0.675, "§IV-D eq. 14: γ_min = 0.675"),
        paper("flows.cc_params.gamma_max", 0.875, "§IV-D eq. 14: γ_max = 0.875"),
        default("flows.cc_params.degree_gain", 1 / 16, "§IV-D: c_l 'like [25]' — DCTCP's g = 1/16"),
        assumption("flows.cc_params.pi_min", 0.25, "§V-A1: the bandwidth estimator's 'low bound should not too large' — no value given"),
        paper("flows.cc_params.t_p_s", 0.2, "§IV-D: VCP's t_p 200 ms (HFCC's fixed t_p; BMCC's interval, ours)"),
        paper("flows.cc_params.t_rho_s", 0.2, "§III: VCP's t_ρ 200 ms"),
        default("flows.cc_params.max_rtt_ratio", 2.5, "VCP's ns-2 code caps rtt/t_ρ in the MI exponent at 2.5 (HFCC's RI inherits VCP's MI)"),
        assumption("flows.cc_params.initial_rtt_s", 0.1, "the RTT a load-factor sender assumes before its first sample (not given)"),
        paper("flows.cc_params.xi", 0.0625, "§III Problem 1: VCP's 'MI factor (α=0.0625)'"),
        paper("flows.cc_params.beta", "VCP 0.875; CUBIC 0.7", "§III Problem 2: VCP 'fixes the MD factor to 0.875'; CUBIC: Linux tcp_cubic.c beta 717/1024 (ns-2's TCP-Linux agent runs Linux's code)"),
        paper("flows.cc_params.ai_scaling", "VCP 'ns2' ((rtt/100 ms)², vcp = ns2) or 'paper' ((rtt/t_ρ)², §III eq. 3); MLCP/BMCC 'linear'", f"VCP's ns-2 code vcp-src.cc (the VCP the paper's ns-2 integrated; the vcp axis); {_MLCP_R}, {_BMCC_R}"),
        assumption("flows.cc_params.kappa", "MLCP 0.15, BMCC 0.35", f"{_MLCP_R}; {_BMCC_R}"),
        assumption("flows.cc_params.ii", rd.mlcp_ii == "inverse", f"{_MLCP_R}: the inversely-proportional increase (the mlcp_ii axis)"),
        default("flows.cc_params.max_segments_per_ack", float(rd.ack_segments), "ns-2's senders take one window step per new ACK whatever it covers (VCP's vcp-src.cc opencwnd; HFCC, MLCP and BMCC were run in ns-2): 1 for HFCC, VCP, MLCP and BMCC; ecnlab's default for these schemes is 2 (RFC 3465's L, for delayed-ACK hosts) (the ack_segments axis). It matters after a timeout: the ACK of the repair covers hundreds of segments"),
        assumption("ports.marker.t_p_rule", rd.mlcp_t_p, "MLCP's routers (our reconstruction): §IV-D's t_p = min{s ∈ S | s ≥ RTT_d}, given for HFCC's own t_p, applied to MLCP because HFCC takes the method 'like [12]' (MLCP) — our inference; the nearest element is the mlcp_t_p axis"),
        assumption("flows.cc_params.ii_alpha", 1.0, _MLCP_R),
        assumption("flows.cc_params.mi_load_floor", 0.05, _BMCC_R),
        assumption("flows.cc_params.low_load", 0.8, f"{_BMCC_R} (η = 0.8, VCP's boundary)"),
        assumption("flows.cc_params.md_span", 0.3, _BMCC_R),
        assumption("flows.cc_params.resolution", 0.1, _BMCC_R),
    ]
    if red and rd.red != "fixed":
        out.append(default("topology.links.queue.mark_p", NS2_RED_MARK_P, f"{_NS2_RED} use_mark_p_ true, mark_p_ 0.1 (red.cc drop_early: an ECT packet is dropped, not marked, while the probability exceeds mark_p_)"))
    if red:
        size = {"ns2": NS2_RED_MEAN_PKTSIZE, "ns2_pkt1000": PACKET_BYTES, "fixed": PACKET_BYTES}[rd.red]
        auto = rd.red != "fixed"
        out += [
            (default if auto else assumption)("topology.links.queue.min_th", f"max(5, targetdelay·ptc/2), ptc = C/(8·{size} B)" if auto else "20 % of the buffer", f"{_RED_CC} with thresh_ 0 ({_NS2_RED}); the red axis" if auto else "ours (no simulator's default): the red = fixed reading"),
            (default if auto else assumption)("topology.links.queue.max_th", "3·min_th" if auto else "60 % of the buffer", f"{_RED_CC} with maxthresh_ 0 ({_NS2_RED})" if auto else "ours: the red = fixed reading"),
            (default if auto else assumption)("topology.links.queue.w_q", "1 − exp(−1/(10·max(0.1, 3·(delay + 1/ptc))·ptc))" if auto else FIXED_RED_W_Q, f"{_RED_CC} with q_weight_ −1 ({_NS2_RED})" if auto else "ours: the red = fixed reading"),
            (default if rd.red == "ns2" else paper)("topology.links.queue.mean_pkt_size", size, f"{_NS2_RED} mean_pktsize_ 500" if rd.red == "ns2" else f"{_S5}: 1000-byte data packets (the red axis)"),
            default("topology.links.queue.max_p", NS2_RED_MAX_P, f"{_NS2_RED} linterm_ 10"),
            default("topology.links.queue.gentle", True, f"{_NS2_RED} gentle_ true"),
            default("topology.links.queue.wait", True, f"{_NS2_RED} wait_ true"),
            paper("topology.links.queue.ecn", True, f"{_S5}: 'ECN-enabled RED' (ns-2's setbit_ true; its default is false)"),
            default("topology.links.queue.hard_drop", True, f"{_RED_CC}: forced drops above 2·max_th with gentle_"),
            (default if auto else assumption)("topology.links.queue.byte_mode", auto, f"{_NS2_RED} bytes_ true, queue_in_bytes_ true (ns-2.35's defaults since 2004)" if auto else "packet mode: the red = fixed reading"),
            assumption("flows.cc_params.abc_limit", 2, "ecnlab's NewReno and CUBIC (RFC 3465 L = 2): with an ACK per segment every ACK covers one segment, as ns-2's per-ACK increase"),
            assumption("flows.cc_params.abc_limit_after_rto", 1, "RFC 3465 §2.3 after a timeout; ns-2 counts ACKs, which with an ACK per segment is the same"),
            assumption("flows.cc_params.ca_increase", "byte_counting", "NewReno's 1 MSS per window in congestion avoidance; with an ACK per segment it is ns-2's 1/cwnd per ACK"),
            *newreno_sources(rd.newreno),
            default("flows.cc_params.c", 0.4, "Linux tcp_cubic.c bic_scale 41 (C = 0.4), which ns-2's TCP-Linux CUBIC runs"),
            default("flows.cc_params.fast_convergence", True, "Linux tcp_cubic.c fast_convergence 1"),
            default("flows.cc_params.cnt_clamp", 20, "Linux tcp_cubic.c: cnt at least 20 while W_max is unknown"),
            default("flows.cc_params.target_rtt", "min", "Linux tcp_cubic.c: delay_min"),
            default("flows.cc_params.hystart", "linux", "Linux tcp_cubic.c hystart 1"),
            default("flows.cc_params.hystart_linux.*", "Linux tcp_cubic.c", "hystart_detect 3, hystart_low_window 16, hystart_ack_delta_us 2000, HYSTART_MIN_SAMPLES 8, delay thresholds 4–16 ms"),
            default("flows.cc_params.hystart_params.*", "unused", "RFC 9406's parameters, unused with hystart = linux"),
        ]
    return out


def _queue_ba(sources: list[Source]) -> list[Source]:
    """The reverse direction of every link holds the same queue as the forward one."""
    out = []
    for s in sources:
        out.append(s)
        if s.parameter.startswith("topology.links.queue."):
            out.append(Source(s.parameter.replace("topology.links.queue.", "topology.links.queue_ba.", 1), s.value, s.source, s.reference + " (both directions)"))
    return out


class HfccExperiment(Experiment):
    """The HFCC paper's experiments: ns-2's hosts, and where every parameter comes from."""

    hosts = NS2_HOSTS
    quick_seeds = 5
    full_seeds = 10
    axes = AXES
    #: Whether the runs include the TCP baselines over RED.
    runs_red = True

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        """The experiment's own parameters (duration, flows, measurement)."""
        return []

    def provenance(self, quick: bool, reading: Reading) -> list[Source]:
        return _queue_ba(self.own_sources(quick, reading) + common_sources(reading, red=self.runs_red))


def measure_sources(sample_flows: bool = True) -> list[Source]:
    return [
        assumption("measure.interval", SAMPLE, "rates and queues sampled every 100 ms (the figures' resolution)"),
        assumption("measure.sample_ports", "the bottleneck ports", "what the figures plot"),
        assumption("measure.sample_flows", sample_flows, "per-flow rates where a figure needs them"),
    ]


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


def time_to_utilization(r: Results, level: float, after: float = 0.0, flows: Sequence[str] | None = None, capacity_bps: float = CAPACITY) -> float:
    """Seconds after ``after`` until the 1-second utilisation first reaches ``level``; ∞ when
    it never does in the run. ∞ is a value (verdict.py decides ∞ against a finite time like
    any other pair, ∞ against ∞ is a tie): a scheme that never gets there is the first thing a
    "faster" or "about 21 s" claim must catch, where leaving the seed out made the claim not
    comparable. Not censored at the run's end as :func:`fair_after` is: a time censored at
    the end ties with a rival's crossing shortly before it (within ``TIME_EFFECT``), so
    "never" would read as "late"; ∞ is what the run shows, a level not reached in it."""
    u = utilization_series(r, flows, capacity_bps).filter((pl.col("sec") > after) & (pl.col("util") >= level))
    if u.height == 0:
        return math.inf
    return float(u["sec"][0]) - after


def fair_after(r: Results, t0: float, end: float, fair: Callable[[Sequence[float]], bool] = FAIR_TESTS[FAIR_AXIS.default][1], hold_s: int = FAIR_HOLD_S) -> float:
    """Seconds after ``t0`` until the flows' 1-second throughputs pass ``fair`` (a test of
    :data:`FAIR_TESTS`) and keep passing it for ``hold_s`` bins (the first of them counts;
    censored at ``end``)."""
    ts = r.series("delivery_bps").with_columns(pl.col("time_s").ceil().alias("sec"))
    per = ts.group_by("sec", "entity").agg(pl.col("value").mean())
    rate = {(float(sec), e): float(v) for sec, e, v in zip(per["sec"], per["entity"], per["value"])}
    names = [n for n, t in zip(r.flows["name"], r.flows["transport"]) if t == "tcp"]
    run = 0
    for sec in range(int(math.ceil(t0)) + 1, int(end) + 1):
        run = run + 1 if fair([rate.get((float(sec), f), 0.0) for f in names]) else 0
        if run >= hold_s:
            return sec - hold_s + 1 - t0
    return end - t0


def censored_note(a: Mapping[int, Any], b: Mapping[int, Any], end: float, kind: str) -> str:
    """What a claim on :func:`fair_after` times can come out as when an arm is censored at
    ``end`` (the run's end) in every seed: the other arm's times are at most ``end`` too, so
    every seed has that arm at or past the other and the claim cannot go one way ("" when no
    arm is censored in every seed)."""

    def censored(v: Mapping[int, Any]) -> bool:
        xs = [x for x in v.values() if isinstance(x, (int, float))]
        return bool(xs) and all(x >= end for x in xs)

    ca, cb = censored(a), censored(b)
    if not (ca or cb):
        return ""
    if ca and cb:
        return f"both arms censored at the run's end ({end:g} s after the join) in every seed: every seed is a tie"
    # b censored: a ≤ b in every seed; a censored: a ≥ b.
    a_below = cb
    outcome = "can hold or tie, not come out contradicted" if a_below == (kind == "less") else "can come out contradicted or tie, not hold"
    return f"{'b' if cb else 'a'} censored at the run's end ({end:g} s after the join) in every seed: every seed has a {'≤' if a_below else '≥'} b, so the claim {outcome}"


def mean_utilization(r: Results, t0: float, t1: float) -> float:
    return aggregate_bps(r, t0, t1) / payload_capacity()


def mean_queue(r: Results, port: str, t0: float, t1: float) -> float:
    q = r.series("queue_pkts", port).filter((pl.col("time_s") > t0) & (pl.col("time_s") <= t1))["value"]
    return float(q.mean()) if len(q) else math.nan


def drops(r: Results, port: str = PORT) -> float:
    return float(r.port(port)["dropped_pkts"])


def loss_anywhere(r: Results) -> float:
    """Packets dropped at every port of the run, both directions and the hosts' own queues
    (data and ACKs), per data packet the flows sent (retransmissions included): the loss a
    flow sees wherever it happens, not only at the bottlenecks the figures draw."""
    return float(r.ports["dropped_pkts"].sum()) / max(1.0, float(r.flows["packets_sent"].sum()))


def retransmissions(r: Results) -> float:
    return float(r.flows["retransmissions"].sum())


def drops_elsewhere(r: Results, bottlenecks: Sequence[str]) -> float:
    """Packets dropped at every port but ``bottlenecks`` (the hosts' access queues)."""
    p = r.ports
    return float(p.filter(~pl.col("port").is_in(list(bottlenecks)))["dropped_pkts"].sum())


SETUP_NOTE = (
    "Setup (module ecnlab.experiments.hfcc states every reading; the provenance table below gives every "
    "parameter's source): one bottleneck r1⇄r2 of 150 Mb/s and 80 ms round-trip propagation delay unless "
    "stated, buffer max(BDP, 2 packets per flow), 1000-byte data and 40-byte ACK packets, ns-2's TCP (an "
    "ACK per segment, initial window 2), flows start at a per-seed offset in [0, 50 ms). HFCC's routers "
    "serve ACKs first from a band that never drops (§IV-C2: buffer the rivals without it do not get); VCP's, MLCP's and "
    "BMCC's are DropTail (ACKs first too under ack_priority = family); the TCPs run over RED with ECN at ns-2's "
    "automatic thresholds, in byte mode; 'TCP Reno' is ecnlab's NewReno (ns-2's Agent/TCP/Reno leaves recovery at a "
    "partial ACK). The hosts' access links queue 1000 packets (ours; ns-2's 50 is the access_queue reading): sized so "
    "that HFCC's RI bursts are not lost at its own host, a choice that favours HFCC. MLCP and BMCC are our "
    "reconstructions from their abstracts and the HFCC and UNO papers' descriptions (the module doc lists what is "
    "ours): claims against them are counted apart."
)
#: ξ of eq. 1 for HFCC's routers (ports.marker.target_utilization).
HFCC_XI = 0.98


def u_th_note(u_th: float) -> str:
    """Why HFCC's utilisation is what it is: our U_th, not the paper's setup."""
    return (
        f"HFCC's utilisation follows our U_th = {u_th:g} (the u_th axis; the paper sets U_th 'dynamically' with no rule): "
        "above U_th its routers tell every flow over its fair share to decrease (Table II), and eq. 1 divides the bytes "
        f"that arrive by ξ·C with ξ = {HFCC_XI:g}, so HFCC holds a link at about U_th·ξ = {u_th * HFCC_XI:.3f} of its bytes. "
        "Under two-way traffic that includes the reverse flows' ACKs (λ counts every byte that arrives: 40 for every "
        "1000 of reverse data), which the forward data then lacks. Every HFCC utilisation level in these tables is set "
        "so, by our U_th, not by the paper."
    )


def _reading_note(ctx: Context) -> None:
    ctx.note(SETUP_NOTE)
    ctx.note(u_th_note(float(ctx.reading.get("u_th", 0.9))))


def _level(ctx: Context) -> float:
    """The paper's "high link utilization" under the reading (:data:`FIG1_AXIS`)."""
    return float(ctx.reading.get(FIG1_AXIS.name, FIG1_AXIS.default))


#: Why the queue and drop-rate claims against each TCP (:func:`family_claims`) are ours: the
#: abstract and §I describe load-factor schemes in general ("low persistent queue length,
#: negligible packet loss"); no figure's text compares HFCC's queue or drops with a TCP's, and
#: "below the TCP's" is our reading of "low" and "negligible" (a TCP's drop rate of 4e-4 is
#: itself negligible).
DERIVED_FROM_ABSTRACT = (
    "the abstract's description of load-factor schemes in general ('low persistent queue length, negligible packet "
    "loss'); no figure's text compares HFCC's queue or drops with a TCP's, and 'below the TCP's' is our reading"
)


def family_claims(runs: RunSet, hfcc_cfg: str, rival_cfg: str, s: Scheme, queue: Callable[[Results], float], loss: Callable[[Results], float], where: str, fig: str) -> list[Comparison]:
    """The load-factor family's own claims against a TCP over RED on one set of runs: "low
    persistent queue length, negligible packet loss" (abstract, §I) — HFCC's mean queue and
    drop rate below the TCP's. The figures' metrics are not named in the text: these are
    the paper's general claims, tested where the figures' runs allow, and the comparison with
    each TCP is ours (``DERIVED_FROM_ABSTRACT``: counted apart). The queue is measured after
    the warm-up at the figure's bottlenecks; the loss is every drop of the run, at every port
    (both directions, the hosts' own queues: a scheme's losses at its hosts or on the reverse
    links are losses too), per data packet sent (the ports table has no drops over time), and
    a start-up ramp below 5 % of the link drops nothing, so the stall window is the queue's."""
    return [
        claim(
            f"mean queue, {where}: HFCC vs {s.label}", Claim("less"), runs.per_seed(hfcc_cfg, queue, window=AFTER_WARMUP), runs.per_seed(rival_cfg, queue, window=AFTER_WARMUP),
            paper=from_text(f"abstract, §I; {fig}'s runs", "low persistent queue length"), unit="packets", text=f"HFCC's queue below {s.label}'s",
            ours=runs.stat(hfcc_cfg, queue), note=f"{s.label} {runs.stat(rival_cfg, queue)}", rival=s.rival, family=f"mean queue ({fig}): HFCC vs {s.label}",
            our_statement=DERIVED_FROM_ABSTRACT,
        ),
        claim(
            f"drop rate, {where}: HFCC vs {s.label}", Claim("less"), runs.per_seed(hfcc_cfg, loss, window=AFTER_WARMUP), runs.per_seed(rival_cfg, loss, window=AFTER_WARMUP),
            paper=from_text(f"abstract, §I; {fig}'s runs", "negligible packet loss"), unit="fraction", text=f"HFCC drops less than {s.label} (every port of the run, per data packet sent)",
            ours=runs.stat(hfcc_cfg, loss), note=f"{s.label} {runs.stat(rival_cfg, loss)}", rival=s.rival, family=f"drop rate ({fig}): HFCC vs {s.label}",
            our_statement=DERIVED_FROM_ABSTRACT,
        ),
    ]


# ------------------------------------------------------------------------ experiments


@register
class Efficiency(HfccExperiment):
    name = "hfcc.efficiency"
    title = "Convergence to efficiency: two flows, the first 40 s (Fig. 4a, Fig. 1)"
    source = "HFCC paper (seed 003) §III Fig. 1 and §V-A1, Fig. 4(a) and the text beside them"
    description = (
        "Two long-lived flows from t ≈ 0 on 150 Mb/s, 80 ms; seconds until the 1-second utilisation "
        "first reaches 80 % — \"high link utilization\": the start of the high-load region, where VCP and "
        "HFCC stop multiplying (Table I; Fig. 1's text calls ρ_l > 0.8 the steady state); the fig1_level "
        "reading takes 90 %. The paper: HFCC's convergence to efficiency \"is close to that of MLCP and "
        "BMCC and faster than that of VCP\". Fig. 1: one VCP flow on 100 Mb/s, 80 ms needs \"21s or so "
        "to achieve the high link utilization\" (tested as a size)."
    )
    axes = FAMILY_AXES + (FIG1_AXIS,)
    runs_red = False
    no_bottleneck = "the ramp itself is the measurement"
    DURATION_S = 40.0

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        return [
            paper("duration", f"{self.DURATION_S:g}s", "§V-A1: 'We collect the result data of the first 40 seconds' (Fig. 1's VCP ramp, 21 s, ends inside it)"),
            assumption("flows.start", "both at 0 (+ the per-seed offset)", "§V-A1 says 'two long-lived flows' for Fig. 4a and that Fig. 4b uses 'the same setting' with a flow starting at 50 s: Fig. 4a is probably the first 40 s of that run, one flow alone; both start at 0 here (ours). With the second flow at 50 s the times to 80 % move by 1-2 s (HFCC 10 s, VCP 23-25 s, MLCP and BMCC 2 s on seeds 1-2) and no verdict changes"),
            *measure_sources(),
        ]

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        two = [Bulk(), Bulk()]
        configs: dict[str, Callable[[int], Scenario]] = {
            s.key: (lambda seed, s=s: dumbbell(s, two, self.DURATION_S, seed=seed, reading=reading)) for s in FAMILY
        }
        configs["vcp-fig1"] = lambda seed: dumbbell(VCP, [Bulk()], self.DURATION_S, seed=seed, reading=reading, capacity_bps=100e6)
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        _reading_note(ctx)
        level = _level(ctx)
        pct = f"{level * 100:g} %"
        # The metric names the quantity, not the reading's level (in the texts): the same claim
        # keeps one name under every fig1_level, so the report pairs it across readings.
        high = "seconds to high utilisation (fig1_level)"
        to_level = lambda r: time_to_utilization(r, level)
        fig1 = lambda r: time_to_utilization(r, level, capacity_bps=100e6)
        comps = [
            claim(
                f"{high}: HFCC vs VCP", Claim("less", min_effect=TIME_EFFECT), runs.per_seed("hfcc", to_level), runs.per_seed("vcp", to_level),
                paper=from_text("Fig. 4a", "HFCC faster than VCP"), unit="s", text=f"HFCC reaches {pct} of the link sooner (fig1_level)",
                ours=runs.stat("hfcc", to_level), note=f"VCP {runs.stat('vcp', to_level)}", rival="vcp",
            ),
            *(
                claim(
                    f"{high}: HFCC vs {s.label}", Claim("approx", within=CLOSE_TOL), runs.per_seed("hfcc", to_level), runs.per_seed(s.key, to_level),
                    paper=from_text("Fig. 4a", f"HFCC close to {s.label}"), unit="s", text=f"seconds to {pct} of the link (fig1_level) close to {s.label}'s (ratio within ±{CLOSE_TOL * 100:g} %, ours)",
                    ours=runs.stat("hfcc", to_level), note=f"{s.label} {runs.stat(s.key, to_level)}", rival=s.rival,
                )
                for s in PEERS
            ),
            claim(
                f"{high}, one VCP flow at 100 Mb/s", Claim("matches", 21.0, SIZE_TOL), runs.per_seed("vcp-fig1", fig1),
                paper=21.0, unit="s", text=f"{pct} of the link (fig1_level) in about 21 s (±{SIZE_TOL * 100:g} %)", ours=runs.stat("vcp-fig1", fig1), rival="vcp",
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
                    "drops at the hosts": str(runs.stat(k, lambda r: drops_elsewhere(r, (PORT, REVERSE)))),
                }
            )
        ctx.table(pl.DataFrame(rows), caption="Ramp to efficiency (mean [min – max] over seeds)")
        if ctx.draw:
            fig, ax = new_figure("Fig. 4a: utilisation, two flows (first seed)", "time (s)", "utilisation")
            for s in FAMILY:
                u = utilization_series(runs[f"{s.key}-s{ctx.seeds[0]}"])
                ax.plot(u["sec"], u["util"], color=s.color, label=s.label)
            ax.axhline(level, color="#888", ls=":", lw=1)
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig4a_efficiency", f"Payload utilisation in 1 s bins, first seed; dotted: {pct}.")
        return comps


@register
class Fairness(HfccExperiment):
    name = "hfcc.fairness"
    title = "Convergence to fairness: a second flow at 50 s (Fig. 4b, Fig. 1)"
    source = "HFCC paper (seed 003) §III Fig. 1 and §V-A1, Fig. 4(b) and the text beside them"
    description = (
        "One flow from t ≈ 0, a second from 50 s, 150 Mb/s, 80 ms; seconds after the join until the two "
        f"flows' 1-second throughputs are fair and stay so {FAIR_HOLD_S} s (ours) — fair by the fair_level reading: by default "
        "the slower within 10 % of the faster, the closest reading to Fig. 1's cwnd curves meeting; Jain ≥ 0.95 "
        "and ≥ 0.99 are the others. The paper: \"HFCC has the "
        "faster convergence of intra-flow fairness than other protocols\" and \"the inversely-proportional "
        "increase of MLCP makes it become the worst one\"; Fig. 1 (100 Mb/s): the two VCP "
        "flows \"get intra-flows fairness\" only \"until 225s or so\" (175 s after the join; a size, full "
        "form only: the quick form ends 100 s after the join)."
    )
    axes = FAMILY_AXES + (FAIR_AXIS,)
    runs_red = False
    JOIN_S = 50.0

    def duration(self, quick: bool) -> float:
        return 150.0 if quick else 300.0

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        return [
            (assumption if quick else paper)("duration", f"{self.duration(quick):g}s", "quick form: 100 s after the join" if quick else "§III Fig. 1: fair 'until 225s or so' — 300 s holds it; §V: 'all experiments last at least 200s'"),
            paper("flows.start", "0 and 50 s (+ the per-seed offset)", "§V-A1: 'when a flow starts at 50 second'; §III Fig. 1: 'the second flow starts at 50s'"),
            *measure_sources(),
        ]

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
        level = ctx.reading.get("fair_level", FAIR_AXIS.default)
        fair_label, fair_test = FAIR_TESTS[level]
        conv = lambda r: fair_after(r, self.JOIN_S, d, fair_test)
        # The metric names the quantity, not the reading's test (in the texts and notes): the
        # same claim keeps one name under every fair_level, so the report pairs it across readings.
        fair_metric = "seconds to fair (fair_level) after the join"
        censored = f"censored at {d - self.JOIN_S:g} s; fair: {fair_label} for {FAIR_HOLD_S} s (the fair_level reading {level})"
        ctx.note(
            f"Fair: {fair_label} in every 1-second bin for {FAIR_HOLD_S} s (reading fair_level = {level}). The paper reads "
            "fairness off Fig. 1's cwnd curves meeting; the default asks the slower rate within 10 % of the faster, the "
            "closest of the readings to that. The table gives the time by every reading's test: the verdicts, Fig. 1's "
            "~175 s above all, depend on which."
        )
        # Measured from the join on: the start-up's ramp (VCP's pair under 5 % of the link to
        # 13.6 s) is not what these claims read.
        since_join = (self.JOIN_S, None)
        t = {k: runs.per_seed(k, conv, window=since_join) for k in ("hfcc", "vcp", "mlcp", "bmcc")}
        end = d - self.JOIN_S

        def notes(*parts: str) -> str:
            return "; ".join(p for p in parts if p)

        comps = [
            *(
                claim(
                    f"{fair_metric}: HFCC vs {s.label}", Claim("less", min_effect=TIME_EFFECT), t["hfcc"], t[s.key],
                    paper=from_text("Fig. 4b", f"HFCC converges to fairness faster than {s.label}"), unit="s", text=f"HFCC fair ({fair_label}) sooner",
                    ours=runs.stat("hfcc", conv), note=notes(f"{s.label} {runs.stat(s.key, conv)}", censored, censored_note(t["hfcc"], t[s.key], end, "less")), rival=s.rival,
                )
                for s in (VCP, *PEERS)
            ),
            *(
                claim(
                    f"{fair_metric}: MLCP vs {s.label}", Claim("greater", min_effect=TIME_EFFECT), t["mlcp"], t[s.key],
                    paper=from_text("Fig. 4b", "MLCP is the worst"), unit="s", text=f"MLCP fair ({fair_label}) later than {s.label}",
                    ours=runs.stat("mlcp", conv),
                    note=notes(f"{s.label} {runs.stat(s.key, conv)}", censored, censored_note(t["mlcp"], t[s.key], end, "greater"), "our MLCP's inversely-proportional increase (load in [0.7, 0.8)) is not what runs here"),
                    rival="mlcp",
                )
                for s in (VCP, BMCC)
            ),
        ]
        # §V-A1: "Low-bandwidth flows have fewer MD phases while high-bandwidth flows would
        # undergo more MD action" (HFCC's fair-share code): over the MD_WINDOW_S after the join,
        # while the incumbent still holds the larger rate, its AMDs against the newcomer's.
        amds = lambda flow: lambda r: amds_between(r, flow, self.JOIN_S, self.JOIN_S + MD_WINDOW_S)
        comps.append(
            claim(
                f"AMDs in the {MD_WINDOW_S:g} s after the join: HFCC's first flow vs its second", Claim("greater"),
                runs.per_seed("hfcc", amds("f0"), window=since_join), runs.per_seed("hfcc", amds("f1"), window=since_join),
                paper=from_text("§V-A1", "Low-bandwidth flows have fewer MD phases while high-bandwidth flows would undergo more MD action"), unit="AMDs",
                text=f"the incumbent (the high-bandwidth flow after the join) cuts more often than the newcomer in the {MD_WINDOW_S:g} s after the join (the window is ours)",
                ours=runs.stat("hfcc", amds("f0")), note=f"second flow {runs.stat('hfcc', amds('f1'))}",
            )
        )
        metric = f"{fair_metric}, one VCP pair at 100 Mb/s"
        if ctx.quick:
            comps.append(incomparable(metric, f"the quick form ends {d - self.JOIN_S:g} s after the join, before the paper's 175 s", paper=175.0, kind=Claim("matches", 175.0, SIZE_TOL), unit="s", rival="vcp"))
        else:
            comps.append(
                claim(
                    metric, Claim("matches", 175.0, SIZE_TOL), runs.per_seed("vcp-fig1", conv, window=since_join),
                    paper=175.0, unit="s", text=f"fair ({fair_label}) at about 225 s, 175 s after the join (±{SIZE_TOL * 100:g} %)", ours=runs.stat("vcp-fig1", conv),
                    note=censored, rival="vcp",
                )
            )
        rows = [
            {
                "run": k,
                **{f"to {lab} (s)": str(runs.stat(k, lambda r, t=t: fair_after(r, self.JOIN_S, d, t))) for lab, t in FAIR_TESTS.values()},
                "Jain, last 50 s": str(runs.stat(k, lambda r: jain(shares(r, d - 50, d)))),
                "utilisation after the join": str(runs.stat(k, lambda r, k=k: aggregate_bps(r, self.JOIN_S, d) / payload_capacity(100e6 if k == "vcp-fig1" else CAPACITY))),
                "one flow alone, 10–50 s": str(runs.stat(k, lambda r, k=k: aggregate_bps(r, WARMUP_S, self.JOIN_S) / payload_capacity(100e6 if k == "vcp-fig1" else CAPACITY))),
                "drops": str(runs.stat(k, drops)),
                "drops at the hosts": str(runs.stat(k, lambda r: drops_elsewhere(r, (PORT, REVERSE)))),
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


#: §V-A1's "fewer MD phases" for the low-bandwidth flow: counted over this many seconds after
#: Fig. 4b's join, which covers the phase where the two rates differ (on c3e4437's full form
#: HFCC's rates first meet 7–10 s after the join; the AMD gap is made in the first ~10 s and the
#: counts run level once the rates are equal, so a longer window only dilutes it) — ours.
MD_WINDOW_S = 30.0


def amds_between(r: Results, flow: str, t0: float, t1: float) -> float:
    """The AMDs an HFCC sender made in (t0, t1], from its cumulative count sampled over time;
    NaN (not comparable) for runs that did not sample it."""
    try:
        ts = r.series("hfcc_amds", flow)
    except KeyError:
        return math.nan
    at = lambda t: float(ts.filter(pl.col("time_s") <= t)["value"].max() or 0.0)
    return at(t1) - at(t0)


def _as_workload(sources: list[Source]) -> list[Source]:
    """The workload's flows take the scheme, codec and controller parameters the bulk flows
    would."""
    out = []
    for s in sources:
        out.append(s)
        if s.parameter.startswith(("flows.cc", "flows.ecn")):
            out.append(Source("workloads." + s.parameter.removeprefix("flows."), s.value, s.source, s.reference))
    return out


def unfinished(r: Results) -> list[str]:
    """The TCP flows of a run that had not finished when it ended."""
    f = r.flows.filter((pl.col("transport") == "tcp") & pl.col("fct_s").is_null())
    return f["name"].to_list()


@register
class Fct(HfccExperiment):
    name = "hfcc.fct"
    title = "Average flow completion time vs mean flow size (Fig. 5)"
    source = "HFCC paper (seed 003) §V-A2, Fig. 5 and the text beside it"
    description = (
        "100 flows with Pareto sizes (shape 1.2, mean 30 … 30000 packets of 1000 B) arriving as a "
        f"Poisson process at an offered load of {FCT_LOAD:.0%} of 150 Mb/s, 80 ms. The paper: HFCC has the "
        "minimal average FCT among the load-factor protocols (Fig. 5 compares only those; the TCPs are in the table for reference); \"compared with VCP and MLCP, the average FCT is reduced by 40% and 36% "
        "respectively when the flow size is 30000 packets\" (tested as sizes). A flow unfinished at the "
        "run's end counts with its FCT censored there, and is listed."
    )
    no_bottleneck = "finite flows: the link idles between them"
    QUICK = (30, 3000, 30000)
    FULL = (30, 100, 300, 1000, 3000, 10000, 30000)
    FLOWS = 100

    def means(self, quick: bool) -> tuple[int, ...]:
        return self.QUICK if quick else self.FULL

    @staticmethod
    def cfg(key: str, mean: int) -> str:
        return f"{key}-{mean}pkts"

    def duration(self, mean: int) -> float:
        rate = FCT_LOAD * CAPACITY / (mean * MSS * 8)
        return max(60.0, 1.5 * self.FLOWS / rate + 30.0)

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        return [
            assumption("duration", "max(60 s, 1.5 × the arrivals' span + 30 s)", "long enough for nearly every flow to finish; the rest are censored at the end and listed"),
            paper("workloads.max_flows", self.FLOWS, "§V-A2: 'with the flow num 100'"),
            paper("workloads.sizes.dist", "pareto", "§V-A2: 'the flow size obeys the pareto distribution'"),
            assumption("workloads.sizes.mean", f"{', '.join(map(str, self.means(quick)))} packets of {MSS} B", "§V-A2 gives the range, mean 'in [30, 30000] packets', not the points: seven means spread over it are ours"),
            paper("workloads.sizes.shape", 1.2, "§V-A2: 'the shape equals to 1.2'"),
            assumption("workloads.arrival_rate", f"{FCT_LOAD:.0%} of 150 Mb/s / mean size", "§V-A2: Poisson arrivals at a rate it does not give; an offered load of 50 %"),
            assumption("workloads.name", "pareto", "a label"),
            assumption("workloads.src", "one host pair", "the workload's flows share one host pair"),
            assumption("workloads.dst", "one host pair", "the workload's flows share one host pair"),
            assumption("workloads.start", "0s", "arrivals from the start"),
            *measure_sources(sample_flows=False),
        ]

    def provenance(self, quick: bool, reading: Reading) -> list[Source]:
        return _as_workload(super().provenance(quick, reading))

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
    def mean_fct(r: Results) -> float:
        """The mean FCT of the run's TCP flows, a flow unfinished at the run's end counted
        with its FCT censored there (a lower bound)."""
        f = r.flows.filter(pl.col("transport") == "tcp")
        end = float(r.meta["duration_s"])
        fcts = [fct if fct is not None else end - start for fct, start in zip(f["fct_s"].to_list(), f["start_s"].to_list())]
        return float(sum(fcts) / len(fcts)) if fcts else math.nan

    def censored(self, runs: RunSet, configs: Sequence[str]) -> str:
        out = []
        for c in configs:
            for r_name in runs:
                if r_name.rpartition("-s")[0] == c and (names := unfinished(runs[r_name])):
                    out.append(f"{r_name}: {len(names)} ({', '.join(names[:3])}{', …' if len(names) > 3 else ''})")
        return "censored at the run's end: " + "; ".join(out) if out else ""

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        _reading_note(ctx)
        means = self.means(ctx.quick)
        comps: list[Comparison] = []
        rows = []
        for m in means:
            a = runs.per_seed(self.cfg("hfcc", m), self.mean_fct)
            for s in FAMILY[1:]:
                cens = self.censored(runs, [self.cfg("hfcc", m), self.cfg(s.key, m)])
                comps.append(
                    claim(
                        f"average FCT, mean {m} packets: HFCC vs {s.label}", Claim("less"), a, runs.per_seed(self.cfg(s.key, m), self.mean_fct),
                        paper=from_text("Fig. 5", "HFCC has the minimal average FCT"), unit="s", text=f"HFCC below {s.label}",
                        ours=runs.stat(self.cfg("hfcc", m), self.mean_fct), note="; ".join(x for x in (f"{s.label} {runs.stat(self.cfg(s.key, m), self.mean_fct)}", cens) if x),
                        rival=s.rival, family=f"average FCT: HFCC vs {s.label}",
                    )
                )
            rows.append({"mean size (pkts)": m, **{s.label: str(runs.stat(self.cfg(s.key, m), self.mean_fct)) for s in ALL}, "unfinished flows": sum(len(unfinished(runs[n])) for n in runs if n.rpartition("-s")[0].endswith(f"-{m}pkts"))})
        for m in means:
            comps.append(
                claim(
                    f"average FCT HFCC / BMCC, mean {m} packets", Claim("ratio", SLIGHTLY[0], within=SLIGHTLY[1]),
                    runs.per_seed(self.cfg("hfcc", m), self.mean_fct), runs.per_seed(self.cfg("bmcc", m), self.mean_fct),
                    paper=from_text("Fig. 5", "HFCC slightly better than BMCC"), unit="ratio", text=f"'slightly better': ratio {SLIGHTLY[0]:g} ± {SLIGHTLY[1] * 100:g} % (ours)",
                    note=self.censored(runs, [self.cfg("hfcc", m), self.cfg("bmcc", m)]), rival="bmcc", family="average FCT HFCC / BMCC: slightly better",
                )
            )
        top = max(means)
        for s, ratio in ((VCP, 0.60), (MLCP, 0.64)):
            comps.append(
                claim(
                    f"average FCT HFCC / {s.label}, mean {top} packets", Claim("ratio", ratio, within=SIZE_TOL),
                    runs.per_seed(self.cfg("hfcc", top), self.mean_fct), runs.per_seed(self.cfg(s.key, top), self.mean_fct),
                    paper=ratio, unit="ratio", text=f"−{(1 - ratio) * 100:.0f} % (ratio {ratio:g} ± {SIZE_TOL * 100:g} %)", ours=None,
                    note=self.censored(runs, [self.cfg("hfcc", top), self.cfg(s.key, top)]), rival=s.rival,
                )
            )
        ctx.table(pl.DataFrame(rows), caption="Average FCT in seconds (mean [min – max] over seeds; unfinished flows censored at the run's end)")
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
class Buffer(HfccExperiment):
    name = "hfcc.buffer"
    title = "Buffer size from 0.2 to 2.0 BDP, 10 + 10 FTP flows (Fig. 6)"
    source = "HFCC paper (seed 003) §V-A3, Fig. 6 and the text beside it"
    description = (
        "Ten forward and ten reverse long-lived flows on 150 Mb/s, 80 ms; the bottleneck buffer from "
        "0.2 to 2.0 BDP. Utilisation, mean queue and drops at the forward port after 10 s. The paper: "
        "\"the performance of HFCC is similar to that of MLCP and BMCC and better than that of VCP and "
        "other TCPs\" (the figure's metrics are not named in the text: we compare utilisation, and the mean queue and drops "
        "against the TCPs)."
    )
    QUICK = (0.2, 1.0, 2.0)
    FULL = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

    def duration(self, quick: bool) -> float:
        return 60.0 if quick else 200.0

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def sizes(self, quick: bool) -> tuple[float, ...]:
        return self.QUICK if quick else self.FULL

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        return [
            (assumption if quick else paper)("duration", f"{self.duration(quick):g}s", "quick form" if quick else "§V: 'all experiments last at least 200s'"),
            paper("flows.start", "0 (+ the per-seed offset)", "§V-A3: 10 FTP flows each way, long-lived"),
            *measure_sources(),
        ]

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
        prio = "VCP's and the TCPs'" if ctx.reading.get("ack_priority") == "hfcc" else "the TCPs'"
        ctx.note(
            "HFCC's routers serve ACKs from a priority band ahead of data (§IV-C2, as the paper gives HFCC); "
            f"{prio} queue them behind the reverse flows' data, so their ACKs return late and in bursts under this two-way "
            "traffic. HFCC's advantage over VCP and the TCPs in this figure comes from that band, which the paper gives HFCC "
            "alone, not from its sender: the ack_priority = family reading gives VCP (and MLCP, BMCC) the same band; no "
            "reading gives it to the TCPs, which fill far more of a link without reverse traffic (Figs. 7 and 8). The band "
            "is also buffer on top of the bottleneck's limit (ACKs never drop) that a rival without it does not get."
        )
        ctx.note(
            "The TCPs' RED is ns-2's byte mode (red = ns2): the limit is that many packets of mean_pktsize_ 500 bytes, so "
            "'0.2 BDP' holds 150 of the TCPs' 1000-byte packets where HFCC and VCP get 300; from ~1.4 BDP RED keeps the TCPs' "
            "queue below the limit, so their runs no longer change with it (the TCPs' curve is flat there by construction)."
        )
        comps: list[Comparison] = []
        rows = []
        for b in self.sizes(ctx.quick):
            a = runs.per_seed(self.cfg("hfcc", b), util, window=AFTER_WARMUP)
            for s in ALL[1:]:
                similar = s in PEERS
                comps.append(
                    claim(
                        f"forward utilisation, {b:g} BDP: HFCC vs {s.label}",
                        Claim("approx", within=SIMILAR_TOL) if similar else Claim("greater"),
                        a, runs.per_seed(self.cfg(s.key, b), util, window=AFTER_WARMUP),
                        paper=from_text("Fig. 6", f"HFCC {'similar to' if similar else 'better than'} {s.label}"), unit="fraction",
                        text=f"HFCC within ±{SIMILAR_TOL * 100:g} % of {s.label} (ours)" if similar else f"HFCC above {s.label}",
                        ours=runs.stat(self.cfg("hfcc", b), util),
                        note=f"{s.label} {runs.stat(self.cfg(s.key, b), util)}" + ("" if similar or (s is VCP and ctx.reading.get("ack_priority") == "family") else f"; HFCC's ACKs go first, {s.label}'s queue behind reverse data (the ack_priority axis)"),
                        rival=s.rival, family=f"forward utilisation over buffers: HFCC vs {s.label}",
                        # A utilisation claim measures the very shortfall a stall is: a scheme
                        # whose runs stall loses it, and that is the finding, not a broken run.
                        about_stall=True,
                    )
                )
            queue = lambda r: mean_queue(r, PORT, WARMUP_S, d)
            for s in TCPS:
                comps += family_claims(runs, self.cfg("hfcc", b), self.cfg(s.key, b), s, queue, loss_anywhere, f"{b:g} BDP", "Fig. 6")
            for s in ALL:
                rows.append(
                    {
                        "buffer (BDP)": b,
                        "scheme": s.label,
                        "utilisation": str(runs.stat(self.cfg(s.key, b), util)),
                        "mean queue (pkts)": str(runs.stat(self.cfg(s.key, b), lambda r: mean_queue(r, PORT, WARMUP_S, d))),
                        "drops": str(runs.stat(self.cfg(s.key, b), drops)),
                        "drops at the hosts": str(runs.stat(self.cfg(s.key, b), lambda r: drops_elsewhere(r, (PORT, REVERSE)))),
                        "drops anywhere per data packet": str(runs.stat(self.cfg(s.key, b), loss_anywhere)),
                        "retransmissions": str(runs.stat(self.cfg(s.key, b), retransmissions)),
                    }
                )
        ctx.table(pl.DataFrame(rows), caption="Forward bottleneck after 10 s (mean [min – max] over seeds); drops and retransmissions over the whole run, every port (both directions, the hosts)")
        if ctx.draw:
            fig, ax = new_figure("Fig. 6: utilisation vs buffer", "buffer (BDP)", "forward utilisation")
            xs = list(self.sizes(ctx.quick))
            for s in ALL:
                errorbar_with_spread(ax, xs, [runs.stat(self.cfg(s.key, b), util) for b in xs], label=s.label, color=s.color)
            ax.legend(fontsize=8)
            ctx.figure(fig, "fig6_buffer", "Forward payload utilisation after 10 s; mean with min–max over seeds.")
        return comps


#: Fig. 7's claim: the burst's first seconds (the 100 slow starts) and the level with the 100 flows.
KEPT_METRIC = "utilisation with 105 flows (the lower of the join's first 5 s and the rest) vs 5 flows before the join, HFCC"

#: Fig. 7's other demand change: the 5 s after the 100 flows leave.
LEAVE_METRIC = "utilisation in the 5 s after the 100 flows leave vs 5 flows before the join, HFCC"

#: Fig. 7's statement as the paper makes it: the same two windows against the module's "high
#: link utilization" (``fig1_level``; the level is in the claims' texts, not their metrics).
HIGH_JOIN_METRIC = "utilisation with 105 flows (the lower of the join's first 5 s and the rest) vs high utilisation (fig1_level), HFCC"
HIGH_LEAVE_METRIC = "utilisation in the 5 s after the 100 flows leave vs high utilisation (fig1_level), HFCC"


@register
class Demand(HfccExperiment):
    name = "hfcc.demand"
    title = "Sudden demand changes: 5 flows, 100 more from 100 to 200 s (Fig. 7)"
    source = "HFCC paper (seed 003) §V-A4, Fig. 7 and the text beside it"
    description = (
        "Five long-lived flows from 0.1 s to 300 s and 100 more from 100 s to 200 s, 150 Mb/s, 80 ms "
        "(quick form: 0.1–90 s and 30–60 s). The paper: HFCC \"can adjust cwnd agilely and ensure the high "
        "utilization of bottleneck link when the burstiness occurs\" — tested as HFCC's utilisation in the 5 s "
        "after the join and with the 100 flows from then on, the lower of the two at or above 80 % of the link, the "
        "module's 'high link utilization' (fig1_level, as in Figs. 1 and 4a); the caption's 'responsive to sudden … "
        "demand changes' as the utilisation of the 5 s after the 100 flows leave at or above the same level. Ours, beside "
        "it: both windows held against HFCC's own level before the join (10 s to the join; the paper names no reference "
        f"level), the utilisation with the 100 flows ≥ {HIGH_UTIL:.0%} of the link, and seconds after the 100 flows leave until the "
        f"1-second utilisation is back at {RECOVER_FRACTION:.0%} of the scheme's own level before the join, "
        "HFCC against VCP (the paper compares no protocol here)."
    )
    axes = AXES + (FIG1_AXIS,)

    def times(self, quick: bool) -> tuple[float, float, float]:
        return (30.0, 60.0, 90.0) if quick else (100.0, 200.0, 300.0)

    def bottleneck(self, run_name: str) -> str | None:
        return PORT

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        join, leave, end = self.times(quick)
        kind = assumption if quick else paper
        ref = "quick form: the paper's phases scaled to 30 s" if quick else "§V-A4: 'five long-lived flows start at 0.1 s and stop at 300 s. One hundred flows start at 100 s and stop at 200 s'"
        return [
            kind("duration", f"{end:g}s", ref),
            kind("flows.start", f"0.1 s and {join:g} s (+ the per-seed offset)", ref),
            kind("flows.stop", f"{end:g} s and {leave:g} s", ref),
            *measure_sources(),
        ]

    def runs(self, quick: bool, seeds: list[int], reading: Reading):
        join, leave, end = self.times(quick)
        flows = [Bulk(start=0.1, stop=end) for _ in range(5)] + [Bulk(start=join, stop=leave) for _ in range(100)]
        configs = {s.key: (lambda seed, s=s: dumbbell(s, flows, end, seed=seed, reading=reading)) for s in ALL}
        return by_seed(configs, seeds)

    def analyze(self, runs: RunSet, ctx: Context) -> list[Comparison]:
        _reading_note(ctx)
        join, leave, end = self.times(ctx.quick)
        during = lambda r: mean_utilization(r, join + JOIN_ONSET_S, leave)
        # The burst itself: the 100 flows' slow starts, which the window with the 105 flows
        # leaves out.
        onset = lambda r: mean_utilization(r, join, join + JOIN_ONSET_S)
        incumbents, newcomers = [f"f{k}" for k in range(5)], [f"f{k}" for k in range(5, 105)]
        each = lambda names: lambda r: aggregate_bps(r, join + JOIN_ONSET_S, leave, names) / len(names) / 1e6

        def trough(r: Results) -> float:
            u = utilization_series(r).filter((pl.col("sec") > leave) & (pl.col("sec") <= leave + LEAVE_TROUGH_S))
            return float(u["util"].min()) if u.height else math.nan
        # The other demand change: the 5 s after the 100 flows leave, the 5 incumbents alone again.
        gone = lambda r: mean_utilization(r, leave, leave + JOIN_ONSET_S)
        before = lambda r: mean_utilization(r, WARMUP_S, join)
        back = f"{RECOVER_FRACTION:.0%} of its level before the join"
        # ∞ where the scheme is not back by the run's end (time_to_utilization): decided
        # against the rival's time like any other value, not left out.
        after = lambda r: time_to_utilization(r, RECOVER_FRACTION * before(r), after=leave)
        level = _level(ctx)
        pct = f"{level * 100:g} %"
        ctx.note(
            "HFCC's level is set by its U_th (see the setup note): about U_th·ξ with the 5 flows, above it with the 100 "
            "(over a standing queue); the table gives both. "
            f"The paper's 'high utilization' is read as {pct} of the link, the module's one level for it (fig1_level, as in Figs. 1 "
            f"and 4a). The {HIGH_UTIL:.0%} bound below is ours, not the paper's, and decided "
            f"against a level U_th sets it tests our U_th = {float(ctx.reading.get('u_th', 0.9)):g} (the u_th axis) as much as HFCC."
        )
        # Both windows at once: the lower of the two must not fall below the level before the join.
        lower = lambda r: min(onset(r), during(r))
        margin = f"kept (at most {MIN_EFFECT:.0%} of the larger below it) or above holds, more than {MIN_EFFECT:.0%} below it is contradicted"

        # Each arm's stall window is the span it measures: an outage in the start-up ramp
        # (HFCC 1.2–3.6 s, VCP to 8.3 s) is in none of them. After the 100 flows leave the link
        # empties (HFCC's runs on 7e7d318: under 5 % of it for 5–8 s, an outage; with t_p at 80 ms
        # the lowest second is 8.6 %); the claims on those
        # seconds are about exactly that (about_stall), the others measure before it.
        before_join, with_them, after_leave = (WARMUP_S, join), (join, leave), (leave, None)

        def kept(metric: str, level: Callable[[Results], float], window: tuple[float, float | None], what: str, statement: str, why: str, note: str) -> Comparison:
            """HFCC's utilisation over ``what`` held against its own level before the join."""
            return claim(
                metric, Claim("not_below"), runs.per_seed("hfcc", level, window=window), runs.per_seed("hfcc", before, window=before_join),
                paper=from_text("Fig. 7", statement), unit="fraction", text=f"{what}, not below the level before the join: {margin}",
                ours=runs.stat("hfcc", level), note=note, our_statement=why, about_stall=window == after_leave,
            )

        comps = [
            claim(
                HIGH_JOIN_METRIC, Claim("at_least", level), runs.per_seed("hfcc", lower, window=with_them),
                paper=from_text("Fig. 7", "ensure the high utilization of bottleneck link when the burstiness occurs"), unit="fraction",
                text=f"the lower of the utilisation in the 5 s after the join and from then until the 100 flows leave ≥ {pct} of the link "
                "(fig1_level: the start of the high-load region, the module's 'high link utilization' as in Figs. 1 and 4a; the 5-s window is ours)",
                ours=runs.stat("hfcc", lower), note=f"join to join + 5 s {runs.stat('hfcc', onset)}; from then {runs.stat('hfcc', during)}",
            ),
            # The leave, read from the caption's "responsive to sudden, traffic demand changes"
            # (both changes Fig. 7 makes: §V-A4 "when the number of flows changes suddenly"; 100
            # flows start and 100 stop): after a fall in demand, responding is the 5 incumbents
            # taking up the link the 100 left. The statement is ours by claim()'s rule, not for
            # its window but for its level: the paper's "high utilization" is said of the join
            # ("when the burstiness occurs"), and carrying it to the leave supplies a reference
            # level the paper does not give for it. HFCC is back near 80 % within 5–6 s in every
            # seed, so the 5-s mean (about 0.35) is decided by that reading.
            claim(
                HIGH_LEAVE_METRIC, Claim("at_least", level), runs.per_seed("hfcc", gone, window=after_leave), about_stall=True,
                paper=from_text("Fig. 7 caption", "HFCC is robust against and responsive to sudden, traffic demand changes"), unit="fraction",
                text=f"the utilisation of the 5 s after the 100 flows leave ≥ {pct} of the link (fig1_level, as through the join; "
                "read from the caption's 'responsive to sudden … demand changes'; the 5-s window is ours)",
                ours=runs.stat("hfcc", gone), note=f"before the join {runs.stat('hfcc', before)}; VCP {runs.stat('vcp', gone)}",
                our_statement="the caption's 'responsive to sudden … demand changes' gives neither a window nor a level, and the text's "
                "'when the burstiness occurs' names the join alone: reading the leave as the 5 s after it (JOIN_ONSET_S) at the "
                "join's level is ours. It decides the verdict: any scheme that grows by MI from a 1/105 share needs longer than "
                "5 s to fill the link again",
            ),
            kept(
                KEPT_METRIC, lower, with_them, "the lower of the utilisation in the 5 s after the join and from then until the 100 flows leave",
                "ensure the high utilization of bottleneck link when the burstiness occurs",
                "the reference level is ours: the paper names none beside 'high' (tested as the paper's claim at fig1_level); "
                "holding HFCC's utilisation through the burst against its own level before the join is our reading of "
                "'ensure the high utilization … when the burstiness occurs'",
                f"join to join + 5 s {runs.stat('hfcc', onset)}; from then {runs.stat('hfcc', during)}; before the join {runs.stat('hfcc', before)}",
            ),
            kept(
                LEAVE_METRIC, gone, after_leave, "the utilisation in the 5 s after the 100 flows leave",
                "HFCC is robust against and responsive to sudden, traffic demand changes (caption); HFCC can adjust cwnd agilely",
                "Fig. 7's caption says HFCC is 'responsive to sudden … demand changes' (tested as the paper's claim at fig1_level) "
                "and names no reference level: holding the utilisation of the 5 s after the 100 flows leave against the level "
                "before the join is ours",
                f"before the join {runs.stat('hfcc', before)}; VCP {runs.stat('vcp', gone)}",
            ),
            claim(
                f"utilisation with 105 flows ≥ {HIGH_UTIL:.0%} (a bound of ours), HFCC", Claim("at_least", HIGH_UTIL), runs.per_seed("hfcc", during, window=with_them),
                paper=from_text("Fig. 7", "high utilization (the paper's claim is tested at fig1_level; this bound is ours)"), unit="fraction",
                text=f"≥ {HIGH_UTIL * 100:g} % from 5 s after the join — the bound is ours, not the paper's; against HFCC's U_th it tests our U_th as much as HFCC",
                ours=runs.stat("hfcc", during),
                our_statement=f"the paper says 'high utilization' and gives no number; its claim is tested at the module's level for it (fig1_level): the stricter bound {HIGH_UTIL:.0%} is ours",
            ),
            claim(
                f"seconds back to {back} after the 100 flows leave: HFCC vs VCP (ours)", Claim("less", min_effect=TIME_EFFECT), runs.per_seed("hfcc", after, window=after_leave), runs.per_seed("vcp", after, window=after_leave), about_stall=True,
                paper=from_text("Fig. 7", "HFCC adjusts agilely (no protocol compared: the comparison is ours)"), unit="s",
                text=f"HFCC back at {back} sooner than VCP (ours: the paper compares no protocol here; the fraction {RECOVER_FRACTION:g} is ours)",
                ours=runs.stat("hfcc", after), note=f"VCP {runs.stat('vcp', after)}", rival="vcp",
                our_statement=f"Fig. 7 compares no protocol after the flows leave: the comparison with VCP and the fraction {RECOVER_FRACTION:g} are ours",
            ),
        ]
        rows = [
            {
                "scheme": s.label,
                "utilisation 10 s–join": str(runs.stat(s.key, before)),
                "join to join + 5 s": str(runs.stat(s.key, onset)),
                "with 105 flows": str(runs.stat(s.key, during)),
                "each of the 5 / each of the 100, with 105 (Mb/s)": f"{runs.stat(s.key, each(incumbents))} / {runs.stat(s.key, each(newcomers))}",
                "leave to leave + 5 s": str(runs.stat(s.key, gone)),
                f"lowest 1-s utilisation, {LEAVE_TROUGH_S} s after they leave": str(runs.stat(s.key, trough)),
                f"back to {RECOVER_FRACTION:.0%} of 10 s–join (s)": str(runs.stat(s.key, after)),
                "mean queue with 105 (pkts)": str(runs.stat(s.key, lambda r: mean_queue(r, PORT, join, leave))),
                "drops": str(runs.stat(s.key, drops)),
                "drops at the hosts": str(runs.stat(s.key, lambda r: drops_elsewhere(r, (PORT, REVERSE)))),
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


@register
class MultiBottleneck(HfccExperiment):
    name = "hfcc.multibottleneck"
    title = "Seven congested bottlenecks of 150 Mb/s (Fig. 8)"
    source = "HFCC paper (seed 003) §V-B, Fig. 8 and the text beside it"
    description = (
        "A chain of 7 links of 150 Mb/s / 20 ms; 5 long-lived flows across all of them in each "
        "direction (RTT 360 ms) and 5 cross flows on each link (RTT 60 ms). Utilisation of every link "
        "and the long flows' share after 10 s. The paper: \"HFCC is better than other protocols\" "
        "(the figure's metrics are not named in the text: we compare the mean link utilisation, and — for the "
        "abstract's and §I's fairness — the forward long flows' share of a link against their max-min share, half "
        "of every link)."
    )
    LINKS = 7

    def duration(self, quick: bool) -> float:
        return 40.0 if quick else 200.0

    def bottleneck(self, run_name: str) -> list[str]:
        # Every forward link: they do not carry the same load (link 7 runs lower than the
        # others for VCP, the rebuilt MLCP and BMCC, and CUBIC), and a run may stall or lose
        # its flows for a while on any one of them.
        return self.ports()

    def ports(self) -> list[str]:
        return [f"r{i}->r{i + 1}" for i in range(self.LINKS)]

    def own_sources(self, quick: bool, reading: Reading) -> list[Source]:
        return [
            (assumption if quick else paper)("duration", f"{self.duration(quick):g}s", "quick form" if quick else "§V: 'all experiments last at least 200s'"),
            paper("flows.start", "0 (+ the per-seed offset)", "§V-B: long-lived and FTP flows"),
            *measure_sources(),
        ]

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
        # The long flows' share as a fraction of their max-min share; past that share more is not
        # fairer, so a share above it counts as far from fair as one as far below.
        of_fair = lambda r: 1.0 - abs(long_share(r) / LONG_FAIR_SHARE - 1.0)
        a = runs.per_seed("hfcc", mean_util, window=AFTER_WARMUP)
        starved = (
            "a claim on runs with starved flows (backlogged flows below 10 % of their max-min fair share on their own path) is flagged in its row; "
            "where HFCC's forward long flows starve, its links' utilisation is its cross flows'"
        )
        comps = [
            claim(
                f"mean link utilisation: HFCC vs {s.label}", Claim("greater"), a, runs.per_seed(s.key, mean_util, window=AFTER_WARMUP),
                paper=from_text("Fig. 8", f"HFCC better than {s.label}"), unit="fraction", text=f"HFCC above {s.label}",
                ours=runs.stat("hfcc", mean_util), note=f"{s.label} {runs.stat(s.key, mean_util)}; {starved}", rival=s.rival,
                about_stall=True,  # as Fig. 6's: the utilisation a stall takes is what it compares
            )
            for s in ALL[1:]
        ]
        comps += [
            claim(
                f"forward long flows' share, fraction of their max-min share: HFCC vs {s.label}", Claim("greater"), runs.per_seed("hfcc", of_fair, window=AFTER_WARMUP), runs.per_seed(s.key, of_fair, window=AFTER_WARMUP),
                paper=from_text("Fig. 8; abstract, §I", f"HFCC better than {s.label}; fairness"), unit="fraction",
                text=f"HFCC's 5 long flows nearer their max-min share ({LONG_FAIR_SHARE:g} of a link: 5 long and 5 cross flows on each) than {s.label}'s",
                ours=runs.stat("hfcc", of_fair), note=f"share of a link: HFCC {runs.stat('hfcc', long_share)}, {s.label} {runs.stat(s.key, long_share)}", rival=s.rival,
                our_statement="Fig. 8's text says only 'HFCC is better than other protocols' and the figure's quantity is not in the text: "
                "'better' is tested on utilisation, the quantity of the paper's other figures; the long flows' share is our reading of the "
                "abstract's and §I's fairness on these runs",
            )
            for s in ALL[1:]
        ]
        queue = lambda r: sum(mean_queue(r, p, WARMUP_S, d) for p in self.ports()) / self.LINKS
        for s in TCPS:
            comps += family_claims(runs, "hfcc", s.key, s, queue, loss_anywhere, "seven links", "Fig. 8")
        rows = [
            {
                "scheme": s.label,
                **{f"link {i + 1}": str(runs.stat(s.key, lambda r, i=i: self.link_util(r, i, d))) for i in range(self.LINKS)},
                "long flows' share of a link": str(runs.stat(s.key, long_share)),
                "drops (forward links)": str(runs.stat(s.key, lambda r: sum(drops(r, f"r{i}->r{i + 1}") for i in range(self.LINKS)))),
                "drops (reverse links)": str(runs.stat(s.key, lambda r: sum(drops(r, f"r{i + 1}->r{i}") for i in range(self.LINKS)))),
                "mean queue per link (pkts)": str(runs.stat(s.key, queue)),
                "drops at the hosts": str(runs.stat(s.key, lambda r: drops_elsewhere(r, [f"r{i}->r{i + 1}" for i in range(self.LINKS)] + [f"r{i + 1}->r{i}" for i in range(self.LINKS)]))),
                "drops anywhere per data packet": str(runs.stat(s.key, loss_anywhere)),
                "retransmissions": str(runs.stat(s.key, retransmissions)),
                "timeouts": str(runs.stat(s.key, lambda r: float(r.flows["rtos"].sum()))),
            }
            for s in ALL
        ]
        ctx.table(pl.DataFrame(rows), caption="Forward utilisation of each link after 10 s (mean [min – max] over seeds)")
        return comps
