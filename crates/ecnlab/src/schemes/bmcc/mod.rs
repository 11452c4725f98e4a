//! BMCC — Binary Marking Congestion Control (Qazi, Andrew & Znati, "Congestion control using
//! efficient explicit feedback", INFOCOM 2009; "Congestion control with multipacket
//! feedback", ToN 2012), a rival of HFCC (seed 003).
//!
//! - Router: [`marker::BmccMarker`] measures VCP's load factor every `t_p` and marks an ECT
//!   packet CE when the load exceeds the packet's *probe threshold*, a number the packet's
//!   IP-ID determines (ADPM, Adaptive Deterministic Packet Marking). Marks accumulate along the
//!   path, so a packet comes out marked exactly when the most loaded link's load exceeds its
//!   threshold.
//! - Feedback: [`codec::BmccCodec`]: the receiver copies the IP-ID and the mark of the data
//!   into its pure ACKs; the sender's [`adpm::Adpm`] turns the marks of many packets into
//!   bounds on the path's load factor, delivered as
//!   [`Signal::LoadFactor`](crate::cc::Signal::LoadFactor).
//! - Sender: [`controller::Bmcc`]: multiplicative increase in low load with
//!   `ξ(ρ) = κ·(1 − ρ)/ρ`, additive increase in high load, multiplicative decrease in
//!   overload by a factor that falls as the overload grows; VCP's freeze after a decrease;
//!   loss as TCP.
//!
//! # What this is built from
//!
//! The BMCC papers were not at hand beyond their abstracts; HFCC's and UNO's papers describe
//! BMCC as ADPM over the IP-ID and ECN bits giving a high-resolution (16-bit) load estimate
//! that drives MI / AI / MD. The rest is our reading, stated here:
//!
//! - **Probe thresholds**: a packet with IP-ID `i` probes threshold `reverse_bits(i)/2¹⁶` of
//!   the load scale ([`LOAD_SCALE`] = 2, so loads up to 200 % are told apart). For IP-IDs
//!   that step by one the thresholds form the van der Corput sequence: any `2^k`
//!   consecutive packets probe every multiple of `2^-k`, a binary search; random IP-IDs give
//!   random thresholds.
//! - **ADPM estimate** at the sender: a mark says `load > threshold`, no mark
//!   `load ≤ threshold`; the bounds tighten with each report, and a report that contradicts
//!   them (the load moved) resets the bound it contradicts.
//! - **Decisions**: a region (MI below η = 0.8, AI in `[0.8, 1)`, MD at or above 1) as soon as
//!   the bounds lie inside it, else from the bounds' midpoint once they are at most 0.1
//!   apart — but MD only on bounds that prove overload (low ≥ 1): narrow bounds straddling 1
//!   decide AI, since a midpoint above 1 there is most often an upper bound not yet
//!   tightened, and it cut the flow with the fewest reports (the smallest) most often — else
//!   the previous decision stands. MI's ξ at the midpoint (at least 0.05), κ =
//!   0.35; AI α = 1 per RTT, linear in `rtt/t_p`; MD β from 0.875 at load 1 down to 0.675 at
//!   1.3 and above (the range of HFCC's adaptive decrease); `t_p` = 200 ms (VCP's). MI and
//!   AI are applied per acknowledged segment, at most `max_segments_per_ack` per ACK (2 by
//!   default; 1 in the HFCC experiments, ns-2's), on [`Vcp`](crate::schemes::vcp::Vcp)'s
//!   mechanics.
//! - **Delayed ACKs** cover several segments but carry one report: of two marked reports the
//!   higher threshold, of two unmarked the lower, of a marked and an unmarked each in turn.
//! - A classic ECN router's CE reads as a mark whatever the threshold: the estimate rises.

pub mod adpm;
pub mod codec;
pub mod controller;
pub mod marker;

pub use adpm::Adpm;
pub use codec::BmccCodec;
pub use controller::{Bmcc, BmccConfig};
pub use marker::{BmccMarker, BmccMarkerConfig};

/// The load factor a probe threshold of 2¹⁶ stands for.
pub const LOAD_SCALE: f64 = 2.0;

/// The threshold a packet with IP-ID `ident` probes, in 2⁻¹⁶ of [`LOAD_SCALE`].
#[inline]
pub fn probe_threshold(ident: u16) -> u16 {
    ident.reverse_bits()
}

/// A load factor in 2⁻¹⁶ of [`LOAD_SCALE`], saturating.
#[inline]
pub fn load_units(rho: f64) -> u16 {
    if rho.is_nan() {
        return u16::MAX;
    }
    (rho / LOAD_SCALE * 65536.0).clamp(0.0, 65535.0) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_ip_ids_search_the_thresholds_binary() {
        let t: Vec<u16> = (0u16..4).map(probe_threshold).collect();
        assert_eq!(t, [0, 0x8000, 0x4000, 0xC000]);
        // Any 16 consecutive IP-IDs probe every multiple of 2^-4.
        let mut seen: Vec<u16> = (1000u16..1016).map(|i| probe_threshold(i) >> 12).collect();
        seen.sort();
        assert_eq!(seen, (0u16..16).collect::<Vec<_>>());
        assert_eq!(load_units(1.0), 32768);
        assert_eq!(load_units(5.0), u16::MAX);
        assert_eq!(load_units(-1.0), 0);
    }
}

#[cfg(test)]
mod e2e_tests;
