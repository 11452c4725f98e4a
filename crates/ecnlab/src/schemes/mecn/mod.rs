//! MECN — multilevel ECN (Durresi, Sridharan, Liu, Goyal, Jain, "Traffic Management using
//! Multilevel Explicit Congestion Notification").
//!
//! - Router: [`qdisc::MecnRed`], RED with a third threshold; incipient and moderate marks,
//!   forced drops above `max_th`.
//! - Feedback: [`codec::MecnCodec`], RFC 3168 handshake, receiver echo of the level in
//!   (CWR, ECE), sender decoding into [`Signal::Level`](crate::cc::Signal::Level).
//! - Sender: [`controller::MecnReno`], Reno with graded decreases (×0.8, ×0.6, loss ×0.5).
//!
//! # Codepoints
//!
//! §2 and Table 1 name the IP bits as RFC 2481 did: bit 6 of the TOS octet is ECT, bit 7 is
//! CE, and Table 1 lists (CE bit, ECT bit): `01` no congestion, `10` incipient, `11`
//! moderate; `00` is not MECN-capable. In the 2-bit field of RFC 3168 ([`Ecn`], bit 6 the
//! high bit) these are: [`codepoint::NO_CONGESTION`] = ECT(0) (`10`, what the sender
//! writes), [`codepoint::INCIPIENT`] = ECT(1) (`01`), [`codepoint::MODERATE`] = CE (`11`).
//! A classic ECN sender's ECT(0) therefore reads as no congestion, a classic router's CE as
//! moderate, and a classic receiver ignores the incipient level (ECT(1) is no CE). Receiver
//! echo in (CWR, ECE) (Table 2): `00` none, `01` incipient, `11` moderate; `10` is not
//! defined by the paper and decodes as none.
//!
//! CWR is used both ways (§2): on a pure ACK it is the high bit of the echo; on a segment
//! carrying data it is the sender's "congestion window reduced". The echo is therefore read
//! only from segments without payload, i.e. one-way transfers as in the paper's runs.
//!
//! # Readings of the paper
//!
//! Every ambiguous point, the reading implemented, and the parameter that selects it:
//!
//! - **Probability in the moderate region.** The text says each region marks "with a maximum
//!   probability of P1max" (resp. P2max); with `P1max = P2max` (as simulated) a ramp that
//!   continued from P1max would be flat, which "maximum" does not describe. Reading: each
//!   region has its own ramp from 0 — incipient 0 → P1max over [min_th, mid_th), moderate
//!   0 → P2max over [mid_th, max_th). Alternative (`MecnRedConfig::moderate_ramp =
//!   ContinueFromP1max`): P1max → P2max over [mid_th, max_th).
//! - **Spacing.** One RED count (packets since the last mark) shared by both levels, ns-2
//!   `wait` spacing on by default (`MecnRedConfig::wait`), average with RED's idle-time
//!   correction, no `gentle` (the paper drops every packet above max_th).
//! - **Thresholds.** `mid_th = 2·min_th`, `max_th = 2·mid_th` unless given
//!   (`MecnRedConfig::mid_th`, `max_th`); `P1max = P2max = 0.1`. The paper gives no buffer
//!   size nor default `min_th`: defaults are ns-2's RED (`limit_` 50 packets, `thresh_` 5 of
//!   the paper's time); `mid_th` and `max_th` may lie above the buffer, as ns-2 allows (the
//!   buffer then overflows before the average reaches them).
//! - **Not-MECN packets** (Not-ECT) are dropped where an MECN packet would be marked; a mark
//!   never lowers a level already written upstream.
//! - **Receiver, "remember the first level".** §3: the receiver echoes the first level it
//!   sees; if a higher level arrives before CWR, it switches to echoing the higher one. Reading
//!   (`MecnCodecConfig::cwr_clears = FirstLevel`): a CWR acknowledges the level echoed first;
//!   if the receiver has since escalated, it keeps echoing the higher level until the next
//!   CWR. Alternative `All`: any CWR stops the echo (RFC 3168 style). As in RFC 3168, a CWR
//!   segment that is itself marked starts a new echo.
//! - **Sender reaction rate.** At most one reduction per window of data (RFC 3168): the codec
//!   delivers one signal per window (window = until a byte sent after the signal is
//!   acknowledged) and sets CWR on the next new segment; as the classic-ECN codec, a loss
//!   reduction's window counts too (no level signal during loss recovery or before the
//!   loss's recovery point is acknowledged; CWR after it); the controller reduces at most once
//!   per round (until a segment sent after the reduction is acknowledged, from
//!   `AckEvent::delivered`/`prior_delivered`), and a loss in the same round does not reduce
//!   again (RFC 3168 §6.1.2). Alternative [`Escalation::TopUp`] (set it in both
//!   `MecnCodecConfig::escalation` and `MecnRenoConfig::escalation`): a higher level (or a
//!   loss) within the round lowers the window to what that level alone would have given from
//!   the window before the round's first reduction.
//! - **Decrease factors.** Table 3: incipient −20 %, moderate −40 %, loss −50 %
//!   (`MecnRenoConfig::beta1/beta2/beta3` = 0.8/0.6/0.5 as multipliers), applied to the window
//!   (the paper: "cwnd is reduced"; ns-2 reduces `window()`) or, with
//!   `reduce_from = flight_size`, to the flight size (RFC 5681 eq. 4); `ssthresh` follows the
//!   reduced window so growth continues additively; never below 2 segments (NewReno's
//!   floor; ns-2 lets the window fall to 1 segment and then backs the timer off). Growth,
//!   fast recovery and timeouts are NewReno's (`crate::cc::newreno`), except that no ACK
//!   carrying a level echo grows the window: ns-2's Reno, which the paper modified, opens
//!   its window only on ACKs without ECN-Echo (`tcp/tcp.cc` `recv_newack_helper`). The
//!   initial window is the connection's (`TcpConfig::initial_window`; the paper's ns-2 runs
//!   used ns-2's `windowInit_`: 1 segment until ns-2's June 2001 defaults, 2 after — the
//!   reproduction, `python/ecnlab/experiments/mecn.py`, uses 1 and can run 2).
//! - **Window cap.** The protocol (§2, Table 3) has none: `MecnRenoConfig::max_window` is
//!   `None` by default. The paper's ns-2 runs used "window = 25" (ns-2's `window_`, the
//!   captions of Figs. 4, 6 and 7); `python/ecnlab/experiments/mecn.py` sets
//!   `max_window = 25` in its scenarios (with a 25-segment receive window).
//! - **Handshake** unchanged from RFC 3168 (the paper: "not modified"); retransmissions are
//!   sent Not-ECT as RFC 3168 requires, or MECN-capable as ns-2's TCP sends them
//!   (`MecnCodecConfig::ect_on_retransmissions`).

pub mod codec;
pub mod controller;
pub mod qdisc;

pub use codec::{CwrClears, MecnCodec, MecnCodecConfig};
pub use controller::{MecnReno, MecnRenoConfig};
pub use qdisc::{MecnRed, MecnRedConfig, ModerateRamp};

use crate::wire::{Ecn, TcpFlags};
use serde::{Deserialize, Serialize};

/// MECN's meaning of the IP ECN field (Table 1), as values of RFC 3168's 2-bit field.
pub mod codepoint {
    use crate::wire::Ecn;
    /// Table 1's ECT bit: bit 6 of the TOS octet, the field's high bit.
    pub const ECT_BIT: u8 = 0b10;
    /// Table 1's CE bit: bit 7 of the TOS octet, the field's low bit.
    pub const CE_BIT: u8 = 0b01;
    /// Neither bit: the transport is not MECN-capable.
    pub const NOT_MECN: Ecn = Ecn::NOT_ECT;
    /// (CE, ECT) = (0, 1): MECN-capable, no congestion seen (what the sender writes); ECT(0).
    pub const NO_CONGESTION: Ecn = Ecn(ECT_BIT);
    /// (CE, ECT) = (1, 0): incipient congestion; ECT(1).
    pub const INCIPIENT: Ecn = Ecn(CE_BIT);
    /// (CE, ECT) = (1, 1): moderate congestion; CE.
    pub const MODERATE: Ecn = Ecn(CE_BIT | ECT_BIT);
}

/// A congestion level as routers write it and receivers echo it. Ordered: a router only
/// raises a packet's level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    #[default]
    None = 0,
    Incipient = 1,
    Moderate = 2,
}

impl Level {
    /// The level a packet carries (Not-ECT and `01` carry none).
    #[inline]
    pub fn from_ecn(e: Ecn) -> Level {
        match e {
            codepoint::INCIPIENT => Level::Incipient,
            codepoint::MODERATE => Level::Moderate,
            _ => Level::None,
        }
    }

    /// The codepoint of an MECN-capable packet at this level.
    #[inline]
    pub fn ecn(self) -> Ecn {
        match self {
            Level::None => codepoint::NO_CONGESTION,
            Level::Incipient => codepoint::INCIPIENT,
            Level::Moderate => codepoint::MODERATE,
        }
    }

    /// The level echoed in an ACK's (CWR, ECE) bits (Table 2).
    #[inline]
    pub fn from_echo(f: TcpFlags) -> Level {
        match (f.has(TcpFlags::CWR), f.has(TcpFlags::ECE)) {
            (false, true) => Level::Incipient,
            (true, true) => Level::Moderate,
            _ => Level::None,
        }
    }

    /// Writes this level into an ACK's (CWR, ECE) bits.
    #[inline]
    pub fn write_echo(self, f: &mut TcpFlags) {
        f.set(TcpFlags::ECE, self != Level::None);
        f.set(TcpFlags::CWR, self == Level::Moderate);
    }

    /// The value carried by [`Signal::Level`](crate::cc::Signal::Level).
    #[inline]
    pub fn signal_value(self) -> u8 {
        self as u8
    }
}

/// What the sender does with a second congestion indication in the round of a reduction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Escalation {
    /// At most one reduction per round, whatever the level (PROTOCOLS reading).
    #[default]
    Ignore,
    /// A higher level (or a loss) within the round lowers the window to that level's target
    /// computed from the window before the round's first reduction.
    TopUp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codepoints_and_echo_round_trip() {
        for l in [Level::None, Level::Incipient, Level::Moderate] {
            assert_eq!(Level::from_ecn(l.ecn()), l);
            let mut f = TcpFlags(TcpFlags::ACK);
            l.write_echo(&mut f);
            assert_eq!(Level::from_echo(f), l);
            assert!(f.has(TcpFlags::ACK));
        }
        assert_eq!(Level::from_ecn(Ecn::NOT_ECT), Level::None);
        // RFC 3168 values: ECT(0) is "no congestion", ECT(1) incipient, CE moderate.
        assert_eq!(codepoint::NO_CONGESTION, Ecn::ECT0);
        assert_eq!(Level::from_ecn(Ecn::ECT0), Level::None);
        assert_eq!(Level::from_ecn(Ecn::ECT1), Level::Incipient);
        assert_eq!(Level::from_ecn(Ecn::CE), Level::Moderate);
        // (CWR, ECE) = 10 is undefined in Table 2.
        assert_eq!(Level::from_echo(TcpFlags(TcpFlags::CWR)), Level::None);
        assert!(Level::None < Level::Incipient && Level::Incipient < Level::Moderate);
    }

    /// The field of a packet at each level, read as §2 numbers the bits (ECT = bit 6, CE =
    /// bit 7 of the TOS octet, i.e. the octet's `0x02` and `0x01`), against Table 1 as
    /// printed: (CE bit, ECT bit) = (0, 1) no congestion, (1, 0) incipient, (1, 1) moderate.
    #[test]
    fn ip_field_is_table_1() {
        let table_1 = [
            (Level::None, 0, 1),
            (Level::Incipient, 1, 0),
            (Level::Moderate, 1, 1),
        ];
        for (level, ce, ect) in table_1 {
            // The TOS octet with the field in place (DSCP zero).
            let tos = level.ecn().bits();
            assert_eq!(tos & 1, ce, "{level:?}: CE bit (bit 7)");
            assert_eq!((tos >> 1) & 1, ect, "{level:?}: ECT bit (bit 6)");
            assert_eq!(Level::from_ecn(Ecn(tos)), level);
        }
        // Neither bit: not MECN-capable, no level.
        assert_eq!(Level::from_ecn(Ecn(0b00)), Level::None);
        // Table 2, (CWR, ECE): incipient 01, moderate 11.
        for (level, cwr, ece) in [
            (Level::Incipient, false, true),
            (Level::Moderate, true, true),
        ] {
            let mut f = TcpFlags(TcpFlags::ACK);
            level.write_echo(&mut f);
            assert_eq!(
                (f.has(TcpFlags::CWR), f.has(TcpFlags::ECE)),
                (cwr, ece),
                "{level:?}"
            );
        }
    }
}

#[cfg(test)]
mod e2e_tests;
