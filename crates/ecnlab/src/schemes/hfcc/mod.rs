//! HFCC — congestion control on explicit hybrid feedback (Jiang, Jin, Chen): a load factor
//! and a per-flow fair-share factor overlaid on the two ECN bits.
//!
//! - Router: [`marker::HfccMarker`] measures the family's load factor over `t_p`
//!   (κ_q = 0.5, target 0.98), adapts `t_p` to the flows' mean RTT, estimates per-flow rates
//!   AFD-style and writes Algorithm 1's code into departing data packets, raising only. ACKs
//!   are served first by a strict-priority queue ([`crate::aqm::PrioQueue`], queue kind
//!   `prio`), which the scenario puts under the marker.
//! - Feedback: VCP's codec ([`crate::schemes::vcp::VcpCodec::hfcc`]): the code in the ECN
//!   field, echoed in (CWR, ECE); data segments also carry the sender's smoothed RTT, and the
//!   routers' `t_p` rides back with the code.
//! - Sender: [`controller::Hfcc`]: `01` RI, `10` A²I, `11` AMD then a freeze of one RTT.
//!
//! # Codepoints (Table II, Algorithm 1)
//!
//! [`OverlayCode`] in the IP ECN field (RFC 3168 numbering): `01` low load (ρ < 0.8), `10`
//! high load and the flow at or below its fair share, `11` overload or (from U_th on) high
//! load with the flow above its fair share; `00` Not-ECT (no HFCC). A classic ECN router's
//! CE reads as `11`.
//!
//! # Readings of the paper
//!
//! Every ambiguous point, the reading implemented, and the parameter that selects it:
//!
//! - **U_th** is set "according to the output link capacity dynamically" without a rule.
//!   Algorithm 1 as printed uses the fair-share factor over the whole high-load region
//!   (U_th = 0.8). There, with two flows, one is always above the other's share, so every
//!   time the load reaches 0.8 one flow decreases and the link settles below 80 % (10 Mb/s,
//!   40 ms: 69–78 % busy) — the loss of utilisation §IV-D warns of. The default is 0.9, the
//!   middle of the high-load region (`HfccMarkerConfig::u_th`); 0.8 and 0.95 are readings.
//! - **Fair share, `fair_share`.** `afd` (default): per-flow packet counts m_i per
//!   `fair_interval_s` = 10 ms (the window T of the RTT average), an EWMA with weight
//!   `rate_weight` = 0.1 (a memory of about 100 ms, one RTT at the paper's 80 ms), and m_fair
//!   by eq. 4 each interval with AFD's coefficients ν = 1.7, ϱ = 1.8 (ϱ > ν: the integral
//!   part falls while a standing queue persists) and Q_target = 5 packets, in packets. m_fair
//!   is bounded to [mean m_i, max m_i]. Above: while the load control keeps the queue under
//!   Q_target the integral part would otherwise grow without end and no flow would ever be
//!   told it is above its share. Below: eq. 4 is AFD's queue controller, but in HFCC the load
//!   factor controls the queue and SF only ranks flows; a fair share is never below the equal
//!   split of what the flows send (the mean, the paper's own implementation estimate).
//!   Bounded at 0 instead, any queue excursion above Q_target drove m_fair to 0, from where
//!   it climbs back by (ν − ϱ)·(Q − Q_target), 0.5 packet per 10 ms on an empty queue, so
//!   a lone flow read as above its own share for seconds: at 150 Mb/s, 80 ms it got `11` in
//!   every high-load sample and used 0.768 of the link alone (0.938 with the bound).
//!   `mean`: the paper's implementation sentence, m_f = (1/u)·Σ m_i over the u flows in the
//!   table. `sample_match`: the departing packet is compared with `sample_n`
//!   packets drawn uniformly from the data queue; a match of any means "above its share".
//!   A flow is above its share when m_i > m_fair (Table II: r_i > r_f → `11`), so one flow
//!   alone is never above its own share. §IV-B2's sentence ("if r_i < r_fair, the SF is 0;
//!   otherwise, it equals 1") puts equality above the share; with the mean as the estimate it
//!   would tell a lone flow `11` at every high load, so the table's rule is the one taken.
//!   The queue Q of eq. 4 is the port's backlog, ACKs in the priority band included (as
//!   whole packets); the load's λ counts ACK bytes as VCP's does.
//! - **Flows** are keyed by 5-tuple; one without packets for `flow_timeout_s` = 1 s leaves the
//!   table. Pure ACKs are not counted.
//! - **Adaptive t_p** (eqs. 11–12, `adapt_t_p`): the RTT each data packet carries is the
//!   sender's smoothed RTT in an imagined header field (`Meta::rtt_hint_us`), as XCP and MLCP
//!   carry it — an idealisation, no real header has the field. t_p is the smallest element of
//!   S = {80, 200, …, 1400} ms at or above RTT_d, from the next load interval on, with RTT_d
//!   taken to `t_p_resolution_ms` (default 1: whole milliseconds, the unit §IV-D gives S, T
//!   and the 1400-ms bound in; 0: exact). Compared exactly, the rule latches: after a queue
//!   excursion eq. 12's RTT_d falls back towards samples equal to 80 ms only from above
//!   (geometrically, settling a rounding error above), so t_p would stay 200 ms for the rest
//!   of a run; 80.07 ms (an 80 ms path plus serialisation) would be 200 ms too. At whole
//!   milliseconds both read 80 ms. `adapt_t_p = false` keeps 200 ms.
//! - **Units of eq. 12** (`rtt_units`): the falling gain θ = T·RTT_T/(φ·RTT_d) is T/φ times a
//!   ratio, so its value depends on the unit T is counted in. §IV-D writes T = 10 ms and
//!   compares RTT_d with 1400 and S = {80, …, 1400} in milliseconds: `ms` (default) evaluates
//!   the equation in the section's own numbers, θ = 10·RTT_T/(50·RTT_d) ≤ 0.2 per 10 ms
//!   (RTT_d follows a falling RTT within a few hundred milliseconds, about as fast as it
//!   rises — the section's "keep t_p as small as possible"). `s` counts T as 0.01: θ ≤ 2e-4
//!   per 10 ms, and t_p needs ~109 s to come down from 200 to 80 ms, longer than most of the
//!   paper's runs.
//! - **Sender t_p** (`HfccConfig::t_p`): eqs. 2–3 scale the increments by rtt/t_p "to
//!   eliminate the RTT unfairness" (§III), which needs the t_p of the routers the flow
//!   crosses; §IV-C1 assumes the flows' RTTs equal it and §IV-D takes t_p "like [12]" (MLCP),
//!   whose routers return their t_p to the senders. `path` (default): each router writes its
//!   t_p next to the code (an imagined 3-bit field, `Meta::ideal_interval`, MLCP's): the
//!   router that raises the code writes its own, one whose code equals the packet's writes its
//!   own only if its load factor (whole percent, a second imagined field) is higher — the
//!   bottleneck's t_p, as MLCP returns the most loaded router's; equal loads: the longer
//!   ([`TpTies`]; `longer` / `shorter` pick by the interval alone); the receiver echoes it
//!   with the code (among the segments an ACK covers: the highest code, ties the longer) and
//!   the sender scales by it (its own RTT's t_p until an ACK brings one; an ACK without one
//!   keeps the last returned). `own_rtt` (also read under its old name `adaptive`, so old
//!   scenario files replay as they ran) applies the routers' rule to the flow's own smoothed
//!   RTT: the same where every flow through a router has one RTT, but rtt/t_p then stays in
//!   (0.4, 1] whatever the RTT and the scaling cancels — on the paper's seven-link
//!   chain the 360-ms flows' rates grew 25 times slower than the 60-ms cross flows' and they
//!   were starved (0.1–0.5 Mb/s of a 15 Mb/s share). `fixed` uses 200 ms.
//! - **RI** (eq. 8): per acknowledged segment, at most `max_segments_per_ack` per ACK (2 by
//!   default; 1 in the HFCC experiments, ns-2's), `cwnd += α_s` (α_s of eq. 2, ×(1+α_s) per
//!   RTT, with VCP's cap of 2.5 on rtt/t_p), then `cwnd = max(cwnd, RTT_min·B_n/P_s)`
//!   (`ri_bandwidth`). B_n is TCP-Jersey's estimate of the rate the flow's ACKs return
//!   (eqs. 6–7); it starts at the window's rate, and π is bounded below by `pi_min` = 0.25
//!   ("the low bound should not be too large"; no value given). The term binds when the
//!   estimate runs ahead of the window: after a decrease, and whenever ACKs return compressed
//!   (a burst of ACKs reads as a high rate: with traffic both ways on a 0.2-BDP buffer it
//!   causes 14k drops a minute where `ri_bandwidth = false` has none). It is not applied while
//!   the connection recovers from a loss: the estimate then still holds the rate of the
//!   window that was lost. The count is `Hfcc::ri_jumps`. The paper gives eq. 8 "at any
//!   time t" and no cadence for the term ([`RiStep`]): `rtt` (default, ours: eq. 8's
//!   `cwnd + cwnd·α_s` is a step per RTT) takes it once per RTT, at the first `01` ACK one
//!   smoothed RTT after the last step, with the estimate at that ACK. In a ramp that ACK heads
//!   a window's burst of ACKs, after the idle gap, where B_n is lowest: the term does not bind
//!   there, and the ramp is eq. 2's step alone. `rtt_peak` takes it once per RTT with the
//!   largest estimate of the round (an unbroken run of `01` ACKs outside recovery and
//!   freezes since the last step); `ack` on every `01` ACK.
//! - **The RTT** the sender scales by and picks t_p from is its smoothed RTT, exact, or in
//!   whole ticks of `rtt_tick_s` rounded down (ns-2's TCP keeps it in 10 ms `tcpTick_`
//!   units): an 80 ms path plus serialisation (80.07 ms) then reads 80 ms. The sender's own
//!   t_p rule (`own_rtt`) compares at whole milliseconds, as the routers by default. The
//!   router's `rtt_tick_s` does the same to the RTT the packets carry.
//! - **A²I** (eqs. 9, 3, 13): `cwnd += β·(rtt/t_p)²/cwnd` per acknowledged segment, at most
//!   `max_segments_per_ack` per ACK (as RI), with
//!   `β = max(1, (B_n − B_min)/(B_max − B_min)·5)` over the flow's own extremes of B_n
//!   ("the global maximum and minimum values of B_n"), kept from the first ACK: B_min is
//!   then near the start-up estimate (the initial window's rate), so β ≈ 5·B_n/B_max.
//! - **AMD** (eqs. 10, 14): `cwnd = max(1, γ·cwnd)` with `γ = 0.875 − c_l·0.2` (eq. 14 as
//!   printed: a larger c_l gives a smaller γ, a deeper cut; the text's "cwnd should be reduced
//!   (large γ)" and its "upper bound and lower bound" names for γ_min and γ_max say the
//!   opposite, and the equation is taken); c_l is
//!   DCTCP's estimator (gain 1/16, windows of one smoothed RTT) of the fraction of
//!   acknowledged bytes coded `11`. After an AMD the window does not change for one smoothed
//!   RTT, whatever the codes ("cwnd must be frozen by one RTT").
//! - **Segments an ACK counts for** (`HfccConfig::max_segments_per_ack`): RI's and A²I's steps
//!   count at most that many of the segments an ACK covers, as VCP's mechanics
//!   ([`crate::schemes::vcp`]): 2 by default ([`crate::cc::MAX_SEGMENTS_PER_ACK`], RFC 3465's
//!   L); 1 in the HFCC experiments, ns-2's senders' one step per new ACK (the paper ran in
//!   ns-2); `inf` for no limit. It bites where an ACK covers more than that many segments: the
//!   cumulative ACK after a retransmission timeout's repair, stretch ACKs, lost ACKs. Eqs. 6–7's
//!   bandwidth estimate still takes the ACK's bytes in full.
//! - **No slow start**: as VCP, HFCC starts in RI from the initial window.
//! - **Loss** as NewReno ([`crate::cc::loss::RenoLoss`]), as VCP.
//! - **Delayed ACKs:** the receiver echoes the highest code of the segments an ACK covers.

pub mod controller;
pub mod marker;

pub use controller::{BandwidthEstimator, Hfcc, HfccConfig, RiStep, TpMode};
pub use marker::{HfccMarker, HfccMarkerConfig};

use crate::wire::Ecn;
use serde::{Deserialize, Serialize};

/// Algorithm 1's code. The discriminant is the ECN field value, so "raise along the path" is
/// a maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum OverlayCode {
    /// Low load: rapid increase.
    Low = 0b01,
    /// High load, at or below the fair share: adaptive additive increase.
    High = 0b10,
    /// Overload, or high load above the fair share: adaptive multiplicative decrease.
    Decrease = 0b11,
}

impl OverlayCode {
    #[inline]
    pub fn from_bits(b: u8) -> Option<OverlayCode> {
        match b & 0b11 {
            0b01 => Some(OverlayCode::Low),
            0b10 => Some(OverlayCode::High),
            0b11 => Some(OverlayCode::Decrease),
            _ => None,
        }
    }

    #[inline]
    pub fn bits(self) -> u8 {
        self as u8
    }

    #[inline]
    pub fn ecn(self) -> Ecn {
        Ecn(self.bits())
    }
}

/// How a router decides that a flow is above its fair share.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FairShare {
    /// AFD-style counts with m_fair by eq. 4.
    #[default]
    Afd,
    /// The mean of the flows' counts.
    Mean,
    /// Compare with packets drawn from the queue.
    SampleMatch,
}

/// Whose `t_p` a packet carries back when routers on its path give it the same code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TpTies {
    /// The more loaded router's — the bottleneck's, as MLCP's routers return the `t_p` of
    /// the most loaded router — by the load factor in whole percent (VCP's ns-2 router's
    /// unit) riding in a second imagined field (`Meta::ideal_load`, as MLCP's load field);
    /// equal loads: the longer.
    #[default]
    Load,
    /// The longer of the two (never scaled faster than any tied router's own flows).
    Longer,
    /// The shorter of the two.
    Shorter,
}

/// The unit eq. 12 counts its window `T` and the RTTs in (§IV-D writes T = 10 ms and compares
/// RTT_d with 1400 and the set S in milliseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttUnits {
    /// Milliseconds, as the section writes every number.
    #[default]
    Ms,
    /// Seconds.
    S,
}

impl RttUnits {
    /// The unit in seconds.
    pub fn seconds(self) -> f64 {
        match self {
            RttUnits::Ms => 1e-3,
            RttUnits::S => 1.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Algorithm 1 / Table II for every (load region, SF) pair, with U_th at 0.8 (the
    /// algorithm as printed) and at 0.9 (the default).
    #[test]
    fn overlay_code_for_every_region_and_share() {
        use OverlayCode::*;
        let c = HfccMarkerConfig {
            u_th: 0.8,
            ..Default::default()
        };
        let cases = [
            (0.0, false, Low),
            (0.5, true, Low),
            (0.799, true, Low),
            (0.8, false, High),
            (0.8, true, Decrease),
            (0.95, false, High),
            (0.95, true, Decrease),
            (1.0, false, Decrease),
            (1.0, true, Decrease),
            (7.0, false, Decrease),
            (f64::INFINITY, false, Decrease),
            (f64::NAN, false, Decrease),
        ];
        for (rho, sf, want) in cases {
            assert_eq!(c.overlay(rho, sf), want, "rho {rho} sf {sf}");
        }
        let c = HfccMarkerConfig::default();
        assert_eq!(c.overlay(0.85, true), High);
        assert_eq!(c.overlay(0.9, true), Decrease);
        assert_eq!(c.overlay(0.9, false), High);
    }
}

#[cfg(test)]
mod e2e_tests;
