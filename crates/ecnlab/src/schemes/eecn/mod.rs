//! EECN — Enhanced ECN, "A Multilevel Network-assisted Congestion Feedback Mechanism for
//! Network Congestion Control" (Ali, Hong, Kim; `seeds/000`).
//!
//! Routers predict their queue occupancy 100 ms ahead (eq. 1) and write one of two congestion
//! levels into the IP ECN field (Table 1); receivers echo the level in the TCP ECE/CWR pair
//! (Table 2), SYN and SYN-ACK included, so that each data sender picks its initial window
//! (10 / 5 / 1 segments) from what its first control packet met; the sender reacts to the
//! levels and to the RTT (Algorithms 1 and 2).
//!
//! - [`marker::Marker`] — the router predictor and marking rule (§4.3, §5).
//! - [`codec::Codec`] — handshake negotiation, echo and decoding (§4.1–4.2, Table 2).
//! - [`controller::Controller`] — the sender's window (§4.4, Algorithms 1–2), NewReno loss
//!   recovery underneath.
//!
//! # Codepoints
//!
//! Table 1 (IP ECN field, RFC 3168 numbering): `00` not EECN capable, `01` ECT(1) = capable,
//! `10` CL(1), `11` CL(2) — [`IpCode`]. Table 2 (TCP (ECE, CWR)): on SYN, SYN-ACK and ACK
//! packets `00` not capable, `01` capable / no congestion, `10` CL(1), `11` CL(2); on data
//! packets `01` is CWR — [`TcpCode`]. Every EECN meaning in the scheme goes through these two
//! enums and [`Level`]; only the RFC 3168 fallback in the codec reads ECE and CWR as the
//! single flags RFC 3168 defines.
//!
//! # How we read the paper (every reading is a named parameter, paper's value as default)
//!
//! Router ([`MarkerConfig`]):
//! - Eq. (1) is `CL = (q + (γ − α)·H) / Q_limit` with γ, α the arrival and departure rates in
//!   packets/s measured over the last `rate_window_s` (0.1 s) and `H = horizon_s` (0.1 s, the
//!   paper's "γ/10 − α/10"). `q` is the backlog in packets (not counting the packet on the
//!   wire) and `Q_limit` the port's buffer limit; byte-limited buffers convert with
//!   `mean_pkt_size`. The arriving packet counts in γ before its level is computed, and every
//!   packet (ECT or not, dropped or not) counts in γ: γ is the offered load. α counts packets
//!   leaving the queue for the transmitter.
//! - Levels: `CL < th1` none, `th1 ≤ CL < th2` CL(1), `CL ≥ th2` CL(2) (the paper's cases
//!   1–3; its case 1 "Th2 > CL < Th1" read as `CL < Th1`). `th1 = 0.3`, `th2 = 0.5`.
//! - The rates are kept in a ring of `rate_buckets` (100) per-bucket counters, no per-packet
//!   allocation; the oldest bucket is counted in proportion to its overlap with the window,
//!   which is exact for evenly spread arrivals and off by at most one bucket's count otherwise
//!   (≤ 1 % of a steady rate with 100 buckets). Before `rate_window_s` has elapsed the counts
//!   are still divided by the full window (the port was idle before time 0).
//! - Marking happens when the packet arrives (`mark_on = "arrival"`, the paper's "when a router
//!   receives a packet"); `"dequeue"` marks as the packet leaves, with the state of that
//!   moment.
//! - Packet rules (§4.3, §5): CL(2) passes untouched; CL(1) becomes CL(2) when the router is at
//!   level 2 and stays CL(1) otherwise; ECT(1) takes the router's level; Not-ECT is untouched.
//!   A classic ECN packet (ECT(0) = `10`) is thus treated as CL(1): it becomes CE at level 2
//!   and stays ECT(0) otherwise, which is what a classic receiver understands (Fig. 5).
//! - "EECN over RED" (the paper's setup): with `owns_ect = true` (default) the marker takes
//!   over the marking decision of every ECT packet (`marker_owned`), RED keeps its buffer
//!   limit for them and its early/forced drops for Not-ECT packets, so an ECT packet is
//!   dropped only by overflow. With `owns_ect = false` RED decides every packet as it would
//!   without the marker (early and forced drops of ECT packets too, and its own CE marks if
//!   it marks) and the marker writes its level into the packets RED keeps: §4.3's "packet
//!   dropping when there is still ample space in the queue" (Table 3) is then possible. "EECN
//!   over DropTail": the same marker on a DropTail queue. Which queue is the scenario's choice
//!   under the `eecn` marker.
//!
//! Handshake and echo ([`CodecConfig`]):
//! - SYN and SYN-ACK leave with IP ECT(1) and are markable; the passive side echoes the level
//!   its SYN met in the SYN-ACK's (ECE, CWR), the active side echoes the SYN-ACK's level in the
//!   handshake ACK. The side that sent the SYN takes its initial window from the SYN-ACK's
//!   echo, the other side from the ACK's echo: `initial_windows = [10, 5, 1]` segments for
//!   none / CL(1) / CL(2) (scenarios 1–3, Figs. 2–4). The handshake ACK and pure ACKs are
//!   Not-ECT, as in RFC 3168.
//! - `syn_flags = "table2"`: the SYN carries (ECE, CWR) = `01` (Table 2). A classic RFC 3168
//!   server reads that as a non-ECN SYN, so an EECN client then runs without ECN (the paper's
//!   "the sender would refrain from setting IP-ECT(1)"). `"ecn_setup"` sends `11` instead (an
//!   RFC 3168 ECN-setup SYN): an EECN server still recognises EECN by the SYN's non-zero IP
//!   field (classic SYNs are Not-ECT), a classic server accepts classic ECN.
//! - `fallback = "ecn"`: with a classic ECN peer (an RFC 3168 SYN reaches us, or our
//!   `ecn_setup` SYN got an RFC 3168 SYN-ACK), the connection runs RFC 3168: ECT(0) data, ECE
//!   until CWR, [`Signal::Ecn`](crate::cc::Signal::Ecn) to the controller (which the EECN
//!   controller treats as CL(2)). `"none"`: no ECN with non-EECN peers.
//! - Pure ACKs carry `01` when there is nothing to echo (Table 2). A segment is a "data packet"
//!   of Table 2 when it carries payload (every TCP segment after the SYN has the ACK flag, so
//!   the table's SYN/ACK columns are read as "control packet" vs "data packet"); on data
//!   packets `01` means CWR and the no-echo code is `00`. When a data segment also acknowledges
//!   (two-way transfers), a pending CL echo takes the two bits and the CWR waits for the next
//!   data segment.
//! - Receiver: a CL(1) packet makes the next `cl1_echo_acks` (3) ACKs carry at least CL(1); a
//!   CL(2) packet (or a classic router's CE, the same codepoint) makes every ACK carry CL(2)
//!   until a data packet with CWR arrives (RFC 3168 §6.1.3 order: CWR is processed before the
//!   arriving packet's own codepoint). `immediate_ack_on_mark` (false) asks the connection to
//!   acknowledge a marked packet at once instead of delaying.
//! - Sender: CL(2) is passed to the controller at most once per window of data, like RFC 3168's
//!   ECE (ignored until an ACK acknowledges beyond the `snd_nxt` of the last reaction), and the
//!   next new data packet carries CWR. CL(1) is passed on every ACK that carries it
//!   (`cl1_response = "every_ack"`, Algorithm 1 is per packet) or once per window
//!   (`"once_per_window"`); CL(1) needs no CWR since its echo stops by itself.
//! - Retransmissions are Not-ECT (`ect_on_retransmissions = false`, RFC 3168 §6.1.5).
//!
//! Sender ([`ControllerConfig`]):
//! - `cRTT` is the current RTT and `avgRTT` the mean of the cRTTs of the connection
//!   (`avg_rtt = "mean"`) or an EWMA with gain `ewma_gain` (`"ewma"`), including the current
//!   one (`avg_includes_current = true`). Before the first sample the sender behaves as if
//!   `cRTT < avgRTT` (plain NewReno growth).
//! - What cRTT is (`crtt`). `"sample"`: the ACK's own RTT sample, as the connection's
//!   estimator takes it (RFC 6298; with the default `rtt_sample_from = "first"`, Linux's
//!   `seq_rtt_us`, from the first segment the ACK newly acknowledges) — Algorithms 1 and 2 as
//!   printed, and what the paper experiments run. `"ca_sample"`: Linux's `ca_rtt_us`, from the
//!   most recently sent segment the ACK newly acknowledges (what Linux hands its congestion
//!   controls). `"round_min"` (the default): the least `ca_sample` over the last smoothed RTT —
//!   the RTT of the current round trip, min-filtered as Linux's Vegas takes it
//!   (`tcp_vegas.c`: "to try to avoid the effects of delayed ACKs"; Vegas is the paper's
//!   ref. [5]). Why the default is not the printed rule: the rule decays cwnd by `e^−β` on
//!   every ACK whose cRTT exceeds the connection's mean, while congestion avoidance adds only
//!   σ_ca·SZ per ACK, and a delayed-ACK receiver holds ACKs — a pair whose first segment ends
//!   a burst waits for the next burst (up to an RTT), a lone segment for the delayed-ACK timer
//!   (40 ms Linux, 200 ms ns-3). Each held sample reads the hold as queueing and decays cwnd
//!   by a few percent below ssthresh; slow start refills it to ssthresh and what congestion
//!   avoidance had gained above ssthresh is lost, so the window stays pinned at the ssthresh
//!   the first reduction left. One flow alone on an idle 100 Mb/s, 44 ms path, Linux-like
//!   hosts / hosts without quick ACKs: 13 % / 12 % of the link with `"sample"`, 88 % / 7 % with
//!   `"ca_sample"` (the 40 ms timer's holds remain; 97 % with a 10 ms timer), 90 % / 91 % with
//!   `"round_min"`. The min-filter delays a real rise of the RTT by at most one SRTT. (ns-3
//!   before 3.43 hands congestion controls the estimator's smoothed RTT as the "last RTT",
//!   `TcpSocketBase::EstimateRtt`: `m_lastRtt = m_rtt->GetEstimate()`; the paper does not say
//!   which its sender read; `"srtt"` is that reading.)
//! - Congestion avoidance's growth is not what holds a window: `+σ_ca·SZ` per ACK with one
//!   ACK per `b` segments (b = 2 with delayed ACKs) is `σ_ca·W/b` segments per round trip, a
//!   growth of 1 % per RTT (52 → 384 segments in ln(384/52)/ln(1.01) ≈ 200 RTTs ≈ 9 s at
//!   44 ms), which the runs show (+0.52 segment per RTT at 52 segments; 225 → 544 KB in 4 s
//!   with `"round_min"`).
//! - `β = cRTT − avgRTT` in seconds (`beta_unit = "s"`; `"ms"` makes the decay a thousand times
//!   stronger in the exponent).
//! - "Congested" means `cRTT > avgRTT` (`rtt_compare = "strict"`, the default): the prose of
//!   §4.4.2 says the RTT "exceeds" / is "greater than" the average, and it is the only reading
//!   under which a flow on a flat RTT can grow. Algorithms 1 and 2 print `cRTT ≥ avgRTT`
//!   (`"inclusive"`); with it an empty queue is a trap: the average converges to the flat
//!   sample, every ACK takes the congested branch, and the decay `e^−β` with β ≈ 0 leaves the
//!   window where it is for the rest of the connection. Below, "congested" stands for the
//!   chosen comparison.
//! - RTT samples enter cRTT and avgRTT at `rtt_resolution_s` (1 ms): rounded down to whole
//!   milliseconds, as a sender whose RTT clock is TCP's millisecond timestamp clock measures
//!   them (RFC 7323 §5.4). At the simulator's picosecond resolution the samples of a flow on an
//!   empty path still differ by microseconds (where a segment falls in a delayed-ACK pair), the
//!   long-run mean sits just below the most common sample, and with either comparison nearly
//!   every ACK counts as congested: the window stalls on an idle link. `0` compares exact
//!   samples.
//! - CL(2) (Alg. 1): `ssthresh = cwnd = max(cl2_floor_segments·SZ, cwnd/d)` with `d = 8` if
//!   congested, else `cwnd/(d/2)`. CL(1): `ssthresh = cwnd = cwnd·e^−β` if congested, else
//!   nothing. A floor stops a decrease; it never raises a window that is already below it
//!   (a congestion signal never increases cwnd). An ACK that delivered a signal does not also run
//!   Algorithm 2 (`grow_on_signal_ack = false`: §4.4.4 "the connection enters the congestion
//!   detection phase and updates its cWnd as described in Algorithm 1").
//! - Algorithm 2 runs once per ACK of new data outside loss recovery (as ns-3's NewReno,
//!   which counts ACKs, not acknowledged segments): slow start when `cwnd < ssthresh`,
//!   `cwnd += SZ·σ_ss` (σ_ss = 0.3) if `cRTT ≥ avgRTT`, else `cwnd += SZ`; congestion
//!   avoidance otherwise, `cwnd += SZ·σ_ca` (σ_ca = 0.02, a fixed increment per ACK as the
//!   paper writes it, not NewReno's SZ²/cwnd) if `cRTT < avgRTT`, else the **decay**
//!   `cwnd = cwnd·e^−β` on every such ACK. The decay changes only cwnd
//!   (`ca_decay_lowers_ssthresh = false`, Algorithm 2 line 12), so cwnd may fall below ssthresh
//!   and the next ACKs are in slow start again (`+SZ·σ_ss` while the RTT stays high): ssthresh
//!   acts as the level cwnd returns to. `true` lowers ssthresh with cwnd, keeping the sender in
//!   congestion avoidance.
//! - Decays (`e^−β`, CL(1) and congestion avoidance) never take cwnd below
//!   `decay_floor_segments` (2): §4.4.2 gives two segments as the least window after a CL(2)
//!   reduction and no floor for the decays; we apply the same two segments to every
//!   decrease, because a window under two segments (e.g. a CL(2) reduction to 2·SZ followed
//!   by one decaying ACK: 1.999·SZ) lets only one full segment be in flight, and a
//!   delayed-ACK receiver then holds its ACK for the delayed-ACK timeout every round trip
//!   (a 16 KB flow took 1.4 s that way). `1` is the literal reading: the decays stop at one
//!   segment.
//! - `initial_window_segments = 10` is the window before (or without) a handshake decision.
//! - Loss: the response of [`NewReno`](crate::cc::newreno::NewReno) (RFC 5681 / 6582): on fast
//!   retransmit `ssthresh = max(FlightSize/2, 2·SMSS)`, `cwnd = ssthresh` (inflation by
//!   duplicate ACKs is the connection's sending rule), no growth and no reaction to CL signals
//!   until `on_recovery_end` (RFC 3168: at most one reduction per window), then
//!   `cwnd = ssthresh`; on RTO the same ssthresh (kept on a timeout that follows a timeout
//!   without progress) and `cwnd = 1·SMSS`, after which Algorithm 2's slow start runs.

pub mod codec;
pub mod controller;
pub mod marker;

pub use codec::Codec;
pub use controller::Controller;
pub use marker::Marker;

use crate::wire::{Ecn, TcpFlags};
use serde::{Deserialize, Serialize};

/// A congestion level: what a router detected (§4.3) or what an endpoint echoes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    #[default]
    None = 0,
    Cl1 = 1,
    Cl2 = 2,
}

impl Level {
    /// The level a router at congestion ratio `cl` (eq. 1) is at.
    #[inline]
    pub fn from_ratio(cl: f64, th1: f64, th2: f64) -> Level {
        if cl >= th2 {
            Level::Cl2
        } else if cl >= th1 {
            Level::Cl1
        } else {
            Level::None
        }
    }

    /// 0, 1 or 2 (the value of [`Signal::Level`](crate::cc::Signal::Level)).
    #[inline]
    pub fn number(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Cl1 => "cl1",
            Level::Cl2 => "cl2",
        }
    }
}

/// Table 1: the meaning EECN gives the IP ECN field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IpCode {
    /// `00`: not EECN-capable transport.
    NotCapable,
    /// `01` (ECT(1)): EECN-capable, no congestion met so far.
    Capable,
    /// `10`: congestion level 1 (a classic sender's ECT(0) reads the same).
    Cl1,
    /// `11`: congestion level 2 (a classic router's CE reads the same).
    Cl2,
}

impl IpCode {
    #[inline]
    pub fn from_ecn(e: Ecn) -> IpCode {
        match e.bits() {
            0b00 => IpCode::NotCapable,
            0b01 => IpCode::Capable,
            0b10 => IpCode::Cl1,
            _ => IpCode::Cl2,
        }
    }

    #[inline]
    pub fn ecn(self) -> Ecn {
        match self {
            IpCode::NotCapable => Ecn::NOT_ECT,
            IpCode::Capable => Ecn::ECT1,
            IpCode::Cl1 => Ecn::ECT0,
            IpCode::Cl2 => Ecn::CE,
        }
    }

    /// The codepoint of a capable packet that met `level`.
    #[inline]
    pub fn with_level(level: Level) -> IpCode {
        match level {
            Level::None => IpCode::Capable,
            Level::Cl1 => IpCode::Cl1,
            Level::Cl2 => IpCode::Cl2,
        }
    }

    /// The level the packet carries (`None` for a Not-ECT packet, which carries nothing).
    #[inline]
    pub fn level(self) -> Option<Level> {
        match self {
            IpCode::NotCapable => None,
            IpCode::Capable => Some(Level::None),
            IpCode::Cl1 => Some(Level::Cl1),
            IpCode::Cl2 => Some(Level::Cl2),
        }
    }

    /// §4.3 and §5: the codepoint a router at `router` level forwards in place of `self`.
    /// Levels only rise along the path, and Not-ECT packets are never marked.
    #[inline]
    pub fn marked(self, router: Level) -> IpCode {
        match self.level() {
            None => IpCode::NotCapable,
            Some(carried) => IpCode::with_level(carried.max(router)),
        }
    }
}

/// Table 2: the meaning EECN gives the TCP (ECE, CWR) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TcpCode {
    /// `00`: in a SYN or SYN-ACK, not EECN capable; in a data packet, nothing.
    NotCapable,
    /// `01`: in a SYN, SYN-ACK or ACK, EECN capable with no congestion to echo; in a data
    /// packet, CWR (congestion window reduced).
    Capable,
    /// `10`: echo of congestion level 1 (SYN-ACK or ACK).
    Cl1,
    /// `11`: echo of congestion level 2 (SYN-ACK or ACK).
    Cl2,
}

impl TcpCode {
    /// On a data packet, `01` means congestion window reduced.
    pub const CWR: TcpCode = TcpCode::Capable;

    #[inline]
    pub fn read(flags: TcpFlags) -> TcpCode {
        match (flags.has(TcpFlags::ECE), flags.has(TcpFlags::CWR)) {
            (false, false) => TcpCode::NotCapable,
            (false, true) => TcpCode::Capable,
            (true, false) => TcpCode::Cl1,
            (true, true) => TcpCode::Cl2,
        }
    }

    #[inline]
    pub fn write(self, flags: &mut TcpFlags) {
        let (ece, cwr) = match self {
            TcpCode::NotCapable => (false, false),
            TcpCode::Capable => (false, true),
            TcpCode::Cl1 => (true, false),
            TcpCode::Cl2 => (true, true),
        };
        flags.set(TcpFlags::ECE, ece);
        flags.set(TcpFlags::CWR, cwr);
    }

    /// The echo of `level` on a SYN-ACK or ACK.
    #[inline]
    pub fn echo(level: Level) -> TcpCode {
        match level {
            Level::None => TcpCode::Capable,
            Level::Cl1 => TcpCode::Cl1,
            Level::Cl2 => TcpCode::Cl2,
        }
    }

    /// The level echoed by a SYN-ACK or ACK (`None` for `00`, which echoes nothing).
    #[inline]
    pub fn echoed(self) -> Option<Level> {
        match self {
            TcpCode::NotCapable => None,
            TcpCode::Capable => Some(Level::None),
            TcpCode::Cl1 => Some(Level::Cl1),
            TcpCode::Cl2 => Some(Level::Cl2),
        }
    }
}

// ---------------------------------------------------------------------------------- configs

/// When the router writes the level into a packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkOn {
    #[default]
    Arrival,
    Dequeue,
}

/// Router parameters (eq. 1, §4.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MarkerConfig {
    /// Threshold of congestion level 1.
    pub th1: f64,
    /// Threshold of congestion level 2.
    pub th2: f64,
    /// Prediction horizon of eq. (1), seconds (the paper's "/10").
    pub horizon_s: f64,
    /// Sliding window over which γ and α are measured, seconds.
    pub rate_window_s: f64,
    /// Counters the window is divided into.
    pub rate_buckets: u32,
    pub mark_on: MarkOn,
    /// Bytes per packet when the buffer limit is in bytes.
    pub mean_pkt_size: u32,
    /// Whether the marker takes over the queue's early/forced decision for ECT packets
    /// ("EECN over RED" with RED enforcing only its buffer for them: an ECT packet is dropped
    /// only by overflow), or leaves the queue beneath to drop (and mark) ECT packets as it
    /// does any other, the level written on those it keeps.
    pub owns_ect: bool,
}

impl Default for MarkerConfig {
    fn default() -> Self {
        MarkerConfig {
            th1: 0.3,
            th2: 0.5,
            horizon_s: 0.1,
            rate_window_s: 0.1,
            rate_buckets: 100,
            mark_on: MarkOn::Arrival,
            mean_pkt_size: 1000,
            owns_ect: true,
        }
    }
}

impl MarkerConfig {
    /// Checks the parameters; errors name the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.th1.is_finite() && self.th1 >= 0.0) {
            return Err(format!("th1: {} must be a non-negative number", self.th1));
        }
        if !(self.th2.is_finite() && self.th2 > self.th1) {
            return Err(format!(
                "th2: {} must be greater than th1 ({})",
                self.th2, self.th1
            ));
        }
        if !(self.horizon_s.is_finite() && self.horizon_s >= 0.0) {
            return Err(format!(
                "horizon_s: {} must be a non-negative number of seconds",
                self.horizon_s
            ));
        }
        if !(self.rate_window_s.is_finite() && self.rate_window_s > 0.0) {
            return Err(format!(
                "rate_window_s: {} must be a positive number of seconds",
                self.rate_window_s
            ));
        }
        if self.rate_window_s > 3600.0 {
            return Err(format!(
                "rate_window_s: {} is longer than an hour",
                self.rate_window_s
            ));
        }
        if self.rate_buckets == 0 || self.rate_buckets > 1_000_000 {
            return Err(format!(
                "rate_buckets: {} is outside 1..=1000000",
                self.rate_buckets
            ));
        }
        let window_ps = crate::time::from_secs(self.rate_window_s);
        if window_ps / (self.rate_buckets as u64) < crate::time::NS {
            return Err(format!(
                "rate_buckets: {} buckets over {} s are shorter than a nanosecond",
                self.rate_buckets, self.rate_window_s
            ));
        }
        if self.mean_pkt_size == 0 {
            return Err("mean_pkt_size: must be positive".into());
        }
        Ok(())
    }
}

/// How the SYN announces EECN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SynFlags {
    /// (ECE, CWR) = 01, as Table 2.
    #[default]
    Table2,
    /// (ECE, CWR) = 11, an RFC 3168 ECN-setup SYN, so a classic server can accept ECN.
    EcnSetup,
}

/// What to run with a peer that is not EECN capable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fallback {
    /// RFC 3168 ECN if the peer offers or accepts it.
    #[default]
    Ecn,
    /// No ECN at all.
    None,
}

/// How often the sender passes CL(1) to its controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cl1Response {
    #[default]
    EveryAck,
    OncePerWindow,
}

/// Handshake and echo parameters (§4.1–4.2, Table 2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CodecConfig {
    pub syn_flags: SynFlags,
    pub fallback: Fallback,
    /// Initial window in segments after a handshake that met no congestion, CL(1), CL(2).
    pub initial_windows: [u32; 3],
    /// ACKs that repeat a CL(1) echo.
    pub cl1_echo_acks: u8,
    pub cl1_response: Cl1Response,
    pub ect_on_retransmissions: bool,
    pub immediate_ack_on_mark: bool,
}

impl Default for CodecConfig {
    fn default() -> Self {
        CodecConfig {
            syn_flags: SynFlags::Table2,
            fallback: Fallback::Ecn,
            initial_windows: [10, 5, 1],
            cl1_echo_acks: 3,
            cl1_response: Cl1Response::EveryAck,
            ect_on_retransmissions: false,
            immediate_ack_on_mark: false,
        }
    }
}

impl CodecConfig {
    pub fn validate(&self) -> Result<(), String> {
        if let Some(&w) = self
            .initial_windows
            .iter()
            .find(|&&w| w == 0 || w > 1_000_000)
        {
            return Err(format!(
                "initial_windows: {w} segments is outside 1..=1000000"
            ));
        }
        Ok(())
    }

    /// Initial window in segments after a handshake that met `level`.
    #[inline]
    pub fn initial_window(&self, level: Level) -> u32 {
        self.initial_windows[level as usize]
    }
}

/// Which average RTT the sender compares the current RTT with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AvgRtt {
    /// Arithmetic mean of all samples of the connection.
    #[default]
    Mean,
    /// Exponentially weighted moving average with gain `ewma_gain`.
    Ewma,
}

/// How cRTT is compared with avgRTT to decide "congested".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttCompare {
    /// `cRTT > avgRTT` (the paper's prose).
    #[default]
    Strict,
    /// `cRTT ≥ avgRTT` (the paper's algorithms).
    Inclusive,
}

/// What cRTT, the "current RTT" Algorithms 1 and 2 compare with avgRTT, is on each ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurrentRtt {
    /// The sample the connection's RTT estimator takes from the ACK (RFC 6298; with the
    /// default `rtt_sample_from = "first"`, Linux's `seq_rtt_us`: the first segment the ACK
    /// newly acknowledges, so a delayed ACK's hold is in it).
    Sample,
    /// Linux's `ca_rtt_us`: the RTT of the most recently sent segment the ACK newly
    /// acknowledges, the sample Linux hands its congestion controls.
    CaSample,
    /// The least `ca_sample` over the last smoothed RTT: the RTT of the current round trip
    /// as Linux's Vegas (`tcp_vegas.c`) takes it, min-filtered "to try to avoid the effects
    /// of delayed ACKs".
    #[default]
    RoundMin,
    /// The connection's smoothed RTT (RFC 6298 SRTT, gain 1/8): what ns-3 before 3.43 hands
    /// its congestion controls as the "last RTT" (`TcpSocketBase::EstimateRtt`:
    /// `m_tcb->m_lastRtt = m_rtt->GetEstimate()`), so what a sender written as an ns-3
    /// `TcpCongestionOps` in 2023 read.
    Srtt,
}

/// The unit `β = cRTT − avgRTT` is expressed in before `e^−β`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BetaUnit {
    #[default]
    S,
    Ms,
}

impl BetaUnit {
    #[inline]
    pub fn per_second(self) -> f64 {
        match self {
            BetaUnit::S => 1.0,
            BetaUnit::Ms => 1e3,
        }
    }
}

/// Sender parameters (§4.4, Algorithms 1–2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerConfig {
    /// CL(2) divisor when `cRTT ≥ avgRTT` (half of it otherwise).
    pub d: f64,
    /// Slow-start smoothing factor σ when `cRTT ≥ avgRTT`.
    pub sigma_ss: f64,
    /// Congestion-avoidance increment factor σ when `cRTT < avgRTT`.
    pub sigma_ca: f64,
    pub avg_rtt: AvgRtt,
    pub rtt_compare: RttCompare,
    pub crtt: CurrentRtt,
    /// RTT samples are rounded down to a multiple of this before use, seconds (0: exact).
    pub rtt_resolution_s: f64,
    pub ewma_gain: f64,
    /// The average includes the sample it is compared with.
    pub avg_includes_current: bool,
    pub beta_unit: BetaUnit,
    /// Smallest window after a CL(2) reduction, segments.
    pub cl2_floor_segments: u32,
    /// Smallest window a decay (`e^−β`) leaves, segments.
    pub decay_floor_segments: u32,
    /// Window before (or without) a handshake decision, segments.
    pub initial_window_segments: u32,
    /// The congestion-avoidance decay lowers ssthresh too.
    pub ca_decay_lowers_ssthresh: bool,
    /// An ACK that delivered a CL signal also runs Algorithm 2.
    pub grow_on_signal_ack: bool,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            d: 8.0,
            sigma_ss: 0.3,
            sigma_ca: 0.02,
            avg_rtt: AvgRtt::Mean,
            rtt_compare: RttCompare::Strict,
            crtt: CurrentRtt::RoundMin,
            rtt_resolution_s: 0.001,
            ewma_gain: 0.125,
            avg_includes_current: true,
            beta_unit: BetaUnit::S,
            cl2_floor_segments: 2,
            decay_floor_segments: 2,
            initial_window_segments: 10,
            ca_decay_lowers_ssthresh: false,
            grow_on_signal_ack: false,
        }
    }
}

impl ControllerConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.d.is_finite() && self.d >= 2.0) {
            return Err(format!(
                "d: {} must be at least 2 (cwnd is divided by d and d/2)",
                self.d
            ));
        }
        for (name, s) in [("sigma_ss", self.sigma_ss), ("sigma_ca", self.sigma_ca)] {
            if !(s > 0.0 && s <= 1.0) {
                return Err(format!("{name}: {s} is outside (0, 1]"));
            }
        }
        if !(self.rtt_resolution_s.is_finite() && (0.0..=1.0).contains(&self.rtt_resolution_s)) {
            return Err(format!(
                "rtt_resolution_s: {} is outside [0, 1] seconds",
                self.rtt_resolution_s
            ));
        }
        if !(self.ewma_gain > 0.0 && self.ewma_gain <= 1.0) {
            return Err(format!("ewma_gain: {} is outside (0, 1]", self.ewma_gain));
        }
        if self.cl2_floor_segments == 0 {
            return Err("cl2_floor_segments: must be positive".into());
        }
        if self.decay_floor_segments == 0 {
            return Err("decay_floor_segments: must be positive".into());
        }
        if self.initial_window_segments == 0 || self.initial_window_segments > 1_000_000 {
            return Err(format!(
                "initial_window_segments: {} is outside 1..=1000000",
                self.initial_window_segments
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table1_round_trips_and_marking_rule() {
        for bits in 0..4u8 {
            assert_eq!(IpCode::from_ecn(Ecn(bits)).ecn(), Ecn(bits));
        }
        assert_eq!(IpCode::from_ecn(Ecn::ECT1), IpCode::Capable);
        assert_eq!(IpCode::from_ecn(Ecn::ECT0), IpCode::Cl1);
        assert_eq!(IpCode::from_ecn(Ecn::CE), IpCode::Cl2);
        use Level::*;
        // Capable takes the router's level.
        assert_eq!(IpCode::Capable.marked(None), IpCode::Capable);
        assert_eq!(IpCode::Capable.marked(Cl1), IpCode::Cl1);
        assert_eq!(IpCode::Capable.marked(Cl2), IpCode::Cl2);
        // CL(1) is only raised; CL(2) passes; Not-ECT never changes.
        assert_eq!(IpCode::Cl1.marked(None), IpCode::Cl1);
        assert_eq!(IpCode::Cl1.marked(Cl1), IpCode::Cl1);
        assert_eq!(IpCode::Cl1.marked(Cl2), IpCode::Cl2);
        for l in [None, Cl1, Cl2] {
            assert_eq!(IpCode::Cl2.marked(l), IpCode::Cl2);
            assert_eq!(IpCode::NotCapable.marked(l), IpCode::NotCapable);
        }
    }

    #[test]
    fn table2_round_trips() {
        for code in [
            TcpCode::NotCapable,
            TcpCode::Capable,
            TcpCode::Cl1,
            TcpCode::Cl2,
        ] {
            let mut f = TcpFlags(TcpFlags::ACK | TcpFlags::ECE | TcpFlags::CWR);
            code.write(&mut f);
            assert_eq!(TcpCode::read(f), code);
            assert!(f.has(TcpFlags::ACK), "other flags untouched");
        }
        let mut f = TcpFlags(TcpFlags::SYN);
        TcpCode::echo(Level::Cl1).write(&mut f);
        assert_eq!(f.0, TcpFlags::SYN | TcpFlags::ECE);
        TcpCode::CWR.write(&mut f);
        assert_eq!(f.0, TcpFlags::SYN | TcpFlags::CWR);
        for l in [Level::None, Level::Cl1, Level::Cl2] {
            assert_eq!(TcpCode::echo(l).echoed(), Some(l));
        }
        assert_eq!(TcpCode::NotCapable.echoed(), Option::None);
    }

    #[test]
    fn thresholds_are_inclusive_from_below() {
        let l = |cl| Level::from_ratio(cl, 0.3, 0.5);
        assert_eq!(l(0.0), Level::None);
        assert_eq!(l(0.2999999), Level::None);
        assert_eq!(l(0.3), Level::Cl1);
        assert_eq!(l(0.4999999), Level::Cl1);
        assert_eq!(l(0.5), Level::Cl2);
        assert_eq!(l(7.0), Level::Cl2);
        assert_eq!(l(-1.0), Level::None);
    }

    #[test]
    fn configs_validate_and_name_the_field() {
        assert!(MarkerConfig::default().validate().is_ok());
        assert!(CodecConfig::default().validate().is_ok());
        assert!(ControllerConfig::default().validate().is_ok());
        let bad = MarkerConfig {
            th2: 0.2,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("th2:"));
        let bad = MarkerConfig {
            rate_buckets: 0,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("rate_buckets:"));
        let bad = MarkerConfig {
            rate_window_s: f64::NAN,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("rate_window_s:"));
        let bad = CodecConfig {
            initial_windows: [10, 0, 1],
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("initial_windows:"));
        let bad = ControllerConfig {
            sigma_ss: 0.0,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("sigma_ss:"));
        let bad = ControllerConfig {
            d: 1.0,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("d:"));
        let bad = ControllerConfig {
            decay_floor_segments: 0,
            ..Default::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .starts_with("decay_floor_segments:"));
    }

    #[test]
    fn configs_read_from_toml_with_named_choices() {
        let m: MarkerConfig =
            toml::from_str("th1 = 0.5\nth2 = 0.7\nmark_on = \"dequeue\"").unwrap();
        assert_eq!((m.th1, m.th2, m.mark_on), (0.5, 0.7, MarkOn::Dequeue));
        let c: ControllerConfig = toml::from_str("avg_rtt = \"ewma\"\nbeta_unit = \"ms\"").unwrap();
        assert_eq!((c.avg_rtt, c.beta_unit), (AvgRtt::Ewma, BetaUnit::Ms));
        let k: CodecConfig =
            toml::from_str("syn_flags = \"ecn_setup\"\nfallback = \"none\"").unwrap();
        assert_eq!(
            (k.syn_flags, k.fallback),
            (SynFlags::EcnSetup, Fallback::None)
        );
        assert!(toml::from_str::<MarkerConfig>("th3 = 1.0").is_err());
        assert!(toml::from_str::<ControllerConfig>("beta_unit = \"us\"").is_err());
    }
}
