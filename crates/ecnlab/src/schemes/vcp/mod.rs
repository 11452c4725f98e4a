//! VCP — Variable-structure congestion Control Protocol (Xia, Subramanian, Stoica,
//! Kalyanaraman, "One more bit is enough"), the baseline of EECN, UNO and HFCC.
//!
//! - Router: [`marker::VcpMarker`] measures the load factor
//!   `ρ = (λ + κ_q·q̄) / (γ_l·C·t_ρ)` every `t_ρ` and writes its 2-bit region into ECT
//!   packets on dequeue, only ever raising the code along the path.
//! - Feedback: [`codec::VcpCodec`]: data carries `01`; the receiver echoes the code in
//!   (CWR, ECE) on every ACK; the sender decodes [`Signal::Load`](crate::cc::Signal::Load)
//!   per ACK.
//! - Sender: [`controller::Vcp`]: MI in low load, AI in high load, MD on overload followed by
//!   a freeze of one `t_ρ` and AI for one RTT; loss as TCP.
//!
//! # Codepoints
//!
//! [`LoadCode`] in the IP ECN field (RFC 3168 numbering): `01` low (ρ < 80 %), `10` high
//! (80 % ≤ ρ < 100 %), `11` overload (ρ ≥ 100 %); `00` Not-ECT (no VCP). A classic ECN
//! router's CE therefore reads as overload. Echo in the ACK's (CWR, ECE) bits: CWR carries
//! the high bit, ECE the low bit (the paper echoes the code in two TCP header bits; VCP has
//! no "window reduced" signal, so CWR is free).
//!
//! # Readings of the paper and the authors' ns-2 code
//!
//! Every ambiguous point, the reading implemented, and the parameter that selects it:
//!
//! - **q̄.** The queue (bytes) is sampled every `t_q` = 10 ms
//!   (`VcpMarkerConfig::t_q_s`); at the end of each `t_ρ` the mean of the interval's
//!   samples enters an EWMA with weight 0.25 on the new mean (`queue_weight`), as the ns-2
//!   code's comment states ("EWMA using 0.25 for current"; its integer macro, as written,
//!   evaluates to mean/16 through operator precedence — we follow the stated intent). A
//!   sample falling on an interval's end belongs to that interval.
//! - **λ** counts the bytes of every packet arriving at the port in the interval, including
//!   those the buffer then drops and ACKs (ns-2 counts in `enque` before DropTail decides).
//!   `C` is the link rate at the interval's end; `t_ρ` the interval's actual length.
//! - **γ_l** = 0.98 (`target_utilization`) as the paper; the ns-2 code used 0.95.
//! - **Code thresholds** on the real ρ: low < 0.8 ≤ high < 1.0 ≤ overload (`low_load`,
//!   `overload`). The ns-2 code first rounds to an integer percentage
//!   `⌊100·ρ + 1⌋` (so "low" ends at 79 %): `percent_rounding = true`.
//! - **Which packets are stamped:** ECT packets only (data; ACKs are Not-ECT), on dequeue,
//!   only raising the code; the code in force is the last interval's (low before the first).
//! - **MI** `cwnd += (1+ξ)^(rtt/t_ρ) − 1` segments per acknowledged segment, at most
//!   `max_segments_per_ack` per ACK (see below), ξ = 0.0625, `rtt/t_ρ` capped at 2.5 (ns-2's
//!   `MAX_RTT_BY_TRHO`); rtt is the smoothed RTT, 100 ms before the first sample (ns-2's
//!   `TYPICAL_RTT`, `VcpConfig::initial_rtt_s`).
//! - **AI** `cwnd += α·(rtt/t_ρ)²/cwnd` per acknowledged segment, at most
//!   `max_segments_per_ack` per ACK, α = 1.0, as the paper scales it (`AiScaling::Paper`).
//!   The ns-2 code scales by `rtt/t_d` with `t_d` = 100 ms, squared between 20 ms and 500 ms
//!   and linear outside (`AiScaling::Ns2`).
//! - **Segments an ACK counts for** (`VcpConfig::max_segments_per_ack`): MI and AI are given
//!   per RTT and applied per acknowledged segment, but an ACK counts for at most
//!   `max_segments_per_ack` segments: 2 by default ([`crate::cc::MAX_SEGMENTS_PER_ACK`],
//!   RFC 3465 §2.2's L = 2·SMSS, which keeps the per-RTT law per segment under delayed ACKs);
//!   1 in the HFCC and UNO experiments, ns-2's (`vcp-src.cc`'s `recv_newack_helper` calls
//!   `opencwnd()` once per new ACK, whatever it covers); `inf` for no limit. The limit bites
//!   where an ACK covers more: the cumulative ACK after a retransmission timeout's repair
//!   (hundreds of segments; counted in full it multiplied the window in one step), stretch
//!   ACKs, lost ACKs. The ACK that ends a fast recovery never reaches the law (no growth
//!   during fast recovery).
//! - **MD** `cwnd ×= β` (0.875), at least one segment, on the first overload ACK; then, as
//!   `vcp-src.cc`: for one `t_ρ` overload ACKs leave the window unchanged (low/high ACKs
//!   still apply MI/AI); for the next RTT (the smoothed RTT when the freeze ends) overload
//!   ACKs apply AI; after that an overload ACK triggers MD again. ns-2 rounds these timers
//!   to 10 ms; we do not.
//! - **No slow start**: VCP starts in MI (`vcp-src.cc` comments slow start out) from the
//!   connection's initial window (`TcpConfig::initial_window`; ns-2's `windowInit_` was 2
//!   segments). An ACK without a load code (none echoed) keeps the last code's increase.
//! - **Loss** as NewReno (`crate::cc::loss`): halves the smaller of flight size and window
//!   (RFC 5681, `ssthresh = max(min(flight, cwnd)/2, 2·MSS)`, `cwnd = ssthresh`; ns-2's
//!   `slowdown` halves the window, see `crate::cc::loss`), no growth and no load reaction
//!   during fast recovery, `cwnd = ssthresh` when it ends; timeout → 1 segment (ssthresh
//!   kept on a timeout without progress). ns-2's sender-side pacing of the first RTTs of
//!   long-RTT flows is not modelled.
//! - **Handshake:** SYN with ECE, CWR and AE; a VCP receiver answers the SYN-ACK with ECE and
//!   AE. Without agreement, data goes Not-ECT and no load is echoed.
//! - **Delayed ACKs:** the receiver echoes the highest code among the segments the ACK
//!   covers; increments are per acknowledged segment, at most `max_segments_per_ack` per ACK
//!   (2 by default; 1 in the HFCC and UNO experiments, ns-2's), so growth does not depend on
//!   the ACK ratio up to that many segments per ACK; above it (a receiver acknowledging more
//!   segments at once, lost ACKs, the ACK after a timeout's repair) it grows by the ACKs.

pub mod codec;
pub mod controller;
pub mod marker;

pub use codec::VcpCodec;
pub(crate) use controller::delegate_window_to_vcp;
pub use controller::{AiScaling, Vcp, VcpConfig};
pub use marker::{VcpMarker, VcpMarkerConfig};

use crate::wire::{Ecn, TcpFlags};

/// VCP's 2-bit load region. The discriminant is the ECN field value, so "raise along the
/// path" is a maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum LoadCode {
    /// ρ below 80 %: multiplicative increase.
    Low = 0b01,
    /// 80 % ≤ ρ < 100 %: additive increase.
    High = 0b10,
    /// ρ ≥ 100 %: multiplicative decrease.
    Overload = 0b11,
}

impl LoadCode {
    #[inline]
    pub fn from_bits(b: u8) -> Option<LoadCode> {
        match b & 0b11 {
            0b01 => Some(LoadCode::Low),
            0b10 => Some(LoadCode::High),
            0b11 => Some(LoadCode::Overload),
            _ => None,
        }
    }

    #[inline]
    pub fn bits(self) -> u8 {
        self as u8
    }

    /// The code a packet carries (`None` for Not-ECT).
    #[inline]
    pub fn from_ecn(e: Ecn) -> Option<LoadCode> {
        Self::from_bits(e.bits())
    }

    #[inline]
    pub fn ecn(self) -> Ecn {
        Ecn(self.bits())
    }

    /// The code echoed in an ACK's (CWR, ECE) bits.
    #[inline]
    pub fn from_echo(f: TcpFlags) -> Option<LoadCode> {
        Self::from_bits(((f.has(TcpFlags::CWR) as u8) << 1) | f.has(TcpFlags::ECE) as u8)
    }

    #[inline]
    pub fn write_echo(self, f: &mut TcpFlags) {
        f.set(TcpFlags::CWR, self.bits() & 0b10 != 0);
        f.set(TcpFlags::ECE, self.bits() & 0b01 != 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_ecn_and_echo_bits() {
        assert_eq!(LoadCode::Low.ecn(), Ecn::ECT1);
        assert_eq!(LoadCode::High.ecn(), Ecn::ECT0);
        assert_eq!(LoadCode::Overload.ecn(), Ecn::CE);
        assert_eq!(LoadCode::from_ecn(Ecn::NOT_ECT), None);
        for c in [LoadCode::Low, LoadCode::High, LoadCode::Overload] {
            assert_eq!(LoadCode::from_ecn(c.ecn()), Some(c));
            let mut f = TcpFlags(TcpFlags::ACK | TcpFlags::ECE | TcpFlags::CWR);
            c.write_echo(&mut f);
            assert_eq!(LoadCode::from_echo(f), Some(c));
        }
        assert_eq!(LoadCode::from_echo(TcpFlags(TcpFlags::ACK)), None);
        assert!(LoadCode::Low < LoadCode::High && LoadCode::High < LoadCode::Overload);
    }
}

#[cfg(test)]
mod e2e_tests;
