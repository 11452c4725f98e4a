//! UNO — Vasić, Kuntimaddi, Kostić, "One Bit Is Enough: a Framework for Deploying Explicit
//! Feedback Congestion Control Protocols": a 3-bit load level (and, with a second bit, the
//! routers' RTT scale) spread over the IP-ID residues of several packets, so one or two ECN
//! bits carry what would otherwise need a wider header.
//!
//! - Router: [`marker::UnoMarker`] measures the load factor with the family's
//!   [`LoadMeter`](crate::marker::load::LoadMeter) (κ_q = 0.25, γ = 0.98, t_ρ = 200 ms),
//!   quantises it into the 8 levels of Fig. 1 ([`level_of`]) and sets the UNO bit of a
//!   departing packet when `IP-ID mod 8` equals its level. With the second bit it also keeps
//!   the mean RTT of its flows and announces its `t_ρ` code (§II-B).
//! - Feedback: [`codec::UnoCodec`]: the receiver copies the IP-ID and the UNO bits into the
//!   ACK; the sender collects ACKs until every residue 0…7 has been covered and hands the
//!   highest level seen to its controller (a block: 8 packets with sequential IP-IDs, ~22 with
//!   random ones).
//! - Sender: [`controller::Ucp`] — UCP1 (VCP's controller over 8 levels), UCP2 (UCP1 with
//!   `t_ρ` learnt from the routers) and VCP3 (UCP1's controller fed the exact level in every
//!   packet by an idealised 3-bit header, [`Encoding::Header`]).
//!
//! # Codepoints (RFC 3168 numbering: 00 Not-ECT, 01 ECT(1), 10 ECT(0), 11 CE)
//!
//! The paper writes ECT(1) as `(10)₂` and ECT(0) as `(01)₂`, which is RFC 3168's bit order
//! reversed, so its strings are ambiguous. What it means is unambiguous: the sender stamps one
//! ECT codepoint, a UNO router flips it to the other, a legacy ECN router writes CE, so the
//! receiver tells all three apart. We use:
//!
//! - **1 bit** ([`Encoding::OneBit`]): the sender sends ECT(1) (`01`); a UNO router sets the
//!   bit by writing ECT(0) (`10`); a legacy ECN router's CE (`11`) means "congested", which the
//!   sender treats as overload. ECT(1) is the codepoint a classic router never writes, so an
//!   unmarked packet is recognisable, and a router that bleaches ECN (`00`) is detectable too.
//! - **2 bits** ([`Encoding::TwoBit`]): the high bit (`10`) is the load bit, the low bit (`01`)
//!   the RTT bit. Not interoperable with classic ECN routers (as §II-C says): the whole ECN
//!   field is UNO's on such a path, and routers stamp every packet. A data packet that
//!   carries neither bit leaves the sender as `00` (Not-ECT), about 15 of every 16: an AQM
//!   on the path drops it where it would mark an ECT packet. The paper only says 2-bit UNO
//!   "would still function" past routers that are not ECN/UNO-enabled; no experiment here
//!   puts UCP2 behind one.
//! - **Idealised header** ([`Encoding::Header`], VCP3): data is ECT(1); routers raise
//!   [`Meta::ideal_load`](crate::packet::Meta::ideal_load), a header field no real IP packet
//!   has.
//!
//! The ACK carries the echo in its own IP-ID (a copy of the reported data packet's) and the
//! TCP flags ECE (load bit), CWR (RTT bit) and AE (a CE arrived).
//!
//! # Readings of the paper
//!
//! - **Levels** (Fig. 1): six equal levels over [0, 80 %), one for [80, 100 %), one for
//!   ≥ 100 %. MI in levels 0–5 uses ξ(σ) = k·(1 − σ)/σ at the level's midpoint σ; the
//!   band's upper edge, as VCP's ns-2 sender takes its low band's, is `xi_sigma = "upper"`.
//! - **MI exponent**: the paper prints ξ_s = (1 + ξ)^(rtt/t_ρ − 1); read as VCP's
//!   (1 + ξ)^(rtt/t_ρ) − 1 (taken literally the printed form doubles the window per t_ρ
//!   whatever the load). MD's freeze of one t_ρ and AI for one RTT after it are VCP's
//!   (`vcp-src.cc`), not in the UNO paper.
//! - **Stamping rule**: a router sets the bit when the residue *equals* its level
//!   ([`StampRule::Equal`]); the paper's alternative, "set it if my load is higher than the
//!   IP-ID's code", is [`StampRule::AtOrBelow`] (residue ≤ level): the sender's maximum over set
//!   residues is then still the router's level, and a block no longer needs the exact residue.
//! - **Delayed ACKs**: an ACK reports the covered packet with the highest set load residue
//!   (§II-A's "maximum load seen in the last two packets"), else one that carries a router's
//!   RTT code, else the last one; the block's maximum is preserved, an RTT report can be lost
//!   (the sender keeps its last `t_ρ`).
//! - **Blocks**: the sender remembers each data segment's IP-ID; an ACK covers the segments it
//!   newly acknowledges; a block ends when its covered residues include all eight. Every
//!   ACK's report enters the block, duplicate ACKs' included (behind a hole they carry the
//!   reports of the packets the hole-filling ACK then covers at once). Blocks follow one
//!   another without overlapping (§II-A: the controller "waits until it receives 8 successive
//!   packets"; a maximum sliding over the last 8 ACKs, deciding on every ACK, is another
//!   reading, not built). Loss "overrides load information": recovery discards the block and
//!   the segments in flight.
//! - **No UNO router** (§II-C: the sender detects UNO routers by the bits they flip): a full
//!   block without a set bit means no UNO router only until one has been heard. Once heard,
//!   a silent block is one that straddled a change of the router's level (the old level's
//!   residue passed before the change, the new one's after it): it carries no level, the
//!   controller keeps acting on the last one and the next block decides; after
//!   [`codec::ROUTER_FORGOTTEN_AFTER`] silent blocks in a row the router is taken to be gone.
//!   With no UNO router the controller grows additively and takes CE as overload, i.e. AIMD
//!   on classic ECN marks ([`NO_ROUTER`]).
//! - **RTT channel** (UCP2): the sender's RTT code and the routers' `t_ρ` code index
//!   S = {80, 200, 400, …, 1400} ms. The sender tells its minimum RTT (the path's RTT
//!   without the queue, as §IV names flows' RTTs) as the element of S nearest it; routers
//!   average the codes' values (`m̄ = 0.02·RTT + 0.98·m̄`) and take as their load interval
//!   and announced code the smallest element of S at or above `m̄` — MLCP's rule ("in a way
//!   similar to MLCP", §III-B), which keeps `t_ρ` above most flows' RTT as §III-B asks
//!   (marker parameter `t_rho_rule = "nearest"` is the alternative); the sender takes the
//!   highest code seen over the 8 residues with IP-ID bit 3 set. With the smoothed RTT and
//!   the nearest element, a queue moving the flows' RTTs across 140 ms flapped `t_ρ`
//!   between 80 and 200 ms.

pub mod codec;
pub mod controller;
pub mod marker;

pub use codec::UnoCodec;
pub use controller::{Ucp, UcpConfig, XiSigma};
pub use marker::{UnoMarker, UnoMarkerConfig};

use serde::{Deserialize, Serialize};

/// How a UNO path carries its information.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// One ECN bit: load only (UCP1).
    #[default]
    OneBit,
    /// Two ECN bits: load and RTT (UCP2).
    TwoBit,
    /// The exact level in an idealised header of every packet (VCP3).
    Header,
}

/// When a router sets the load bit of a packet whose IP-ID residue is `r`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StampRule {
    /// `r == level` (§II-A).
    #[default]
    Equal,
    /// `r <= level` (the alternative the paper leaves for future work).
    AtOrBelow,
}

/// Number of load levels (3 bits).
pub const LEVELS: u8 = 8;
/// The level of load ≥ 100 %: multiplicative decrease.
pub const OVERLOAD: u8 = 7;
/// The level of load in [80 %, 100 %): additive increase.
pub const HIGH: u8 = 6;
/// A block decided without any router's bit: no UNO router on the path.
pub const NO_ROUTER: u8 = 8;
/// Levels that split the low-load region evenly.
pub const LOW_LEVELS: u8 = 6;

/// The set S of load intervals `t_ρ` the RTT channel can name, in milliseconds (§III-B).
pub use crate::marker::load::INTERVAL_SET_MS as T_RHO_SET_MS;

/// The level of load factor `rho` with the low region `[0, low_load)` split into six.
pub fn level_of(rho: f64, low_load: f64, overload: f64) -> u8 {
    if rho.is_nan() || rho >= overload {
        OVERLOAD
    } else if rho >= low_load {
        HIGH
    } else {
        ((rho.max(0.0) / low_load * LOW_LEVELS as f64) as u8).min(LOW_LEVELS - 1)
    }
}

/// The load factor a low level stands for: its midpoint.
pub fn level_midpoint(level: u8, low_load: f64) -> f64 {
    (level.min(LOW_LEVELS - 1) as f64 + 0.5) * low_load / LOW_LEVELS as f64
}

/// The upper edge of a low level's band.
pub fn level_upper_edge(level: u8, low_load: f64) -> f64 {
    (level.min(LOW_LEVELS - 1) as f64 + 1.0) * low_load / LOW_LEVELS as f64
}

/// The code of the element of S nearest `ms`.
pub use crate::marker::load::nearest_interval_code as t_rho_code;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_fig_1() {
        // Six equal levels over [0, 80 %): boundaries every 13.33 %.
        let b = 0.8 / 6.0;
        for l in 0..6u8 {
            let lo = l as f64 * b;
            assert_eq!(level_of(lo, 0.8, 1.0), l, "at {lo}");
            assert_eq!(level_of(lo + b * 0.999, 0.8, 1.0), l);
        }
        assert_eq!(level_of(0.0, 0.8, 1.0), 0);
        assert_eq!(level_of(0.1333, 0.8, 1.0), 0);
        assert_eq!(level_of(0.1334, 0.8, 1.0), 1);
        assert_eq!(level_of(0.7999, 0.8, 1.0), 5);
        assert_eq!(level_of(0.8, 0.8, 1.0), HIGH);
        assert_eq!(level_of(0.9999, 0.8, 1.0), HIGH);
        assert_eq!(level_of(1.0, 0.8, 1.0), OVERLOAD);
        assert_eq!(level_of(f64::INFINITY, 0.8, 1.0), OVERLOAD);
        assert_eq!(level_of(-0.1, 0.8, 1.0), 0);
        // Midpoints 6.67 %, 20 %, …, 73.3 %.
        assert!((level_midpoint(0, 0.8) - 0.8 / 12.0).abs() < 1e-12);
        assert!((level_midpoint(5, 0.8) - 0.8 * 11.0 / 12.0).abs() < 1e-12);
    }

    #[test]
    fn rtt_codes_snap_to_the_nearest_element_of_s() {
        assert_eq!(t_rho_code(0.0), 0);
        assert_eq!(t_rho_code(139.0), 0);
        assert_eq!(t_rho_code(141.0), 1);
        assert_eq!(t_rho_code(200.0), 1);
        assert_eq!(t_rho_code(1_000_000.0), 7);
        for (i, &s) in T_RHO_SET_MS.iter().enumerate() {
            assert_eq!(t_rho_code(s as f64) as usize, i);
        }
    }
}

#[cfg(test)]
mod e2e_tests;
