//! DCTCP's precise congestion echo (RFC 8257).
//!
//! - Negotiation as RFC 3168 ([`EcnSetup`]).
//! - Data receiver (§3.2): ECE on an ACK mirrors the CE state of the last data segment
//!   received (DCTCP.CE). When a segment's CE bit differs from DCTCP.CE and a delayed ACK is
//!   owed, that ACK goes out first with the old ECE value; then DCTCP.CE flips and the new
//!   segment is acknowledged at once (Figure 1 of RFC 8257; Linux does the same).
//! - Data sender: every ACK that acknowledges new bytes becomes
//!   `Signal::Marked { marked_bytes, acked_bytes }` with marked = acked when ECE is set, 0
//!   otherwise (the controller's α estimator of §3.3 counts them). Data segments, including
//!   retransmissions, are ECT(0) — as Linux's DCTCP, which makes the whole connection
//!   ECN-capable; pure ACKs stay Not-ECT (RFC 3168's rule; a reading). No CWR is sent: the
//!   DCTCP receiver does not use it.

use super::{has_flag, set_flag, EcnSetup};
use crate::cc::Signal;
use crate::packet::Packet;
use crate::tcp::codec::{Codec, TcpInfo};
use crate::wire::{Ecn, TcpFlags};

#[derive(Clone, Debug, Default)]
pub struct Dctcp {
    pub setup: EcnSetup,
    /// DCTCP.CE: the CE state of the last data segment received.
    ce_state: bool,
}

impl Dctcp {
    pub fn new() -> Self {
        Self::default()
    }

    fn is_ce(pkt: &Packet) -> bool {
        pkt.ip.ecn == Ecn::CE
    }
}

impl Codec for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }
    crate::tcp::codecs::negotiation_via_setup!();

    fn data_out(&mut self, pkt: &mut Packet, _retransmission: bool, _info: &TcpInfo) {
        pkt.ip.ecn = if self.negotiated() && pkt.payload_len > 0 {
            Ecn::ECT0
        } else {
            Ecn::NOT_ECT
        };
    }

    fn ack_in(&mut self, pkt: &Packet, info: &TcpInfo) -> Option<Signal> {
        if !self.negotiated() || info.acked_bytes == 0 {
            return None;
        }
        let marked = if has_flag(pkt, TcpFlags::ECE) {
            info.acked_bytes
        } else {
            0
        };
        Some(Signal::Marked {
            marked_bytes: marked,
            acked_bytes: info.acked_bytes,
        })
    }

    fn flush_before(&self, pkt: &Packet) -> bool {
        self.negotiated() && Self::is_ce(pkt) != self.ce_state
    }

    fn data_in(&mut self, pkt: &Packet) -> bool {
        if !self.negotiated() {
            return false;
        }
        let ce = Self::is_ce(pkt);
        let changed = ce != self.ce_state;
        self.ce_state = ce;
        changed
    }

    fn ack_out(&mut self, pkt: &mut Packet) {
        if self.negotiated() {
            set_flag(pkt, TcpFlags::ECE, self.ce_state);
        }
    }
}
