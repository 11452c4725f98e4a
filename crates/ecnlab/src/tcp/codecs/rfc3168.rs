//! Classic ECN (RFC 3168).
//!
//! - Negotiation: [`EcnSetup`]; a peer that does not answer the ECN-setup SYN with an
//!   ECN-setup SYN-ACK leaves the connection without ECN (behaves as `none`).
//! - Data sender (§6.1.2): new data segments are ECT(0); retransmissions, pure ACKs and
//!   segments without payload are Not-ECT (§6.1.5, §6.1.4). An ECE reduces the window at most
//!   once per window of data: [`Signal::Ecn`] is delivered only when the ACK acknowledges data
//!   sent after the previous reduction — for a mark or for a loss — and not during loss
//!   recovery. After any window reduction (mark, fast retransmit, timeout) the first new data
//!   segment carries CWR.
//! - Data receiver (§6.1.3): from the first CE-marked data segment, ECE on every ACK until a
//!   data segment with CWR arrives (a CWR segment that is itself CE keeps ECE on).

use super::{has_flag, set_flag, EcnSetup};
use crate::cc::Signal;
use crate::packet::Packet;
use crate::tcp::codec::{Codec, TcpInfo};
use crate::wire::{Ecn, TcpFlags};

#[derive(Clone, Debug, Default)]
pub struct Rfc3168 {
    pub setup: EcnSetup,
    /// Receiver: echo ECE on ACKs.
    ece: bool,
    /// Sender: `snd_nxt` at the last reduction (no new reaction until it is acknowledged).
    recover: u64,
    cwr_pending: bool,
    seen_reductions: u32,
}

impl Rfc3168 {
    pub fn new() -> Self {
        Self::default()
    }

    /// Picks up window reductions the connection made for losses.
    fn note_reductions(&mut self, info: &TcpInfo) {
        if info.loss_reductions != self.seen_reductions {
            self.seen_reductions = info.loss_reductions;
            self.cwr_pending = true;
            self.recover = self.recover.max(info.recovery_point);
        }
    }

    /// Receiver state (for tests and traces).
    pub fn echoing(&self) -> bool {
        self.ece
    }
}

impl Codec for Rfc3168 {
    fn name(&self) -> &'static str {
        "ecn"
    }
    crate::tcp::codecs::negotiation_via_setup!();

    fn data_out(&mut self, pkt: &mut Packet, retransmission: bool, info: &TcpInfo) {
        if !self.negotiated() {
            pkt.ip.ecn = Ecn::NOT_ECT;
            return;
        }
        self.note_reductions(info);
        if retransmission || pkt.payload_len == 0 {
            pkt.ip.ecn = Ecn::NOT_ECT;
            return;
        }
        pkt.ip.ecn = Ecn::ECT0;
        if self.cwr_pending {
            set_flag(pkt, TcpFlags::CWR, true);
            self.cwr_pending = false;
        }
    }

    fn ack_in(&mut self, pkt: &Packet, info: &TcpInfo) -> Option<Signal> {
        if !self.negotiated() {
            return None;
        }
        self.note_reductions(info);
        if !has_flag(pkt, TcpFlags::ECE) || info.in_recovery {
            return None;
        }
        if info.snd_una <= self.recover.max(info.recovery_point) {
            return None;
        }
        self.recover = info.snd_nxt;
        self.cwr_pending = true;
        Some(Signal::Ecn)
    }

    fn data_in(&mut self, pkt: &Packet) -> bool {
        if self.negotiated() {
            if has_flag(pkt, TcpFlags::CWR) {
                self.ece = false;
            }
            if pkt.ip.ecn == Ecn::CE {
                self.ece = true;
            }
        }
        false
    }

    fn ack_out(&mut self, pkt: &mut Packet) {
        if self.negotiated() && self.ece {
            set_flag(pkt, TcpFlags::ECE, true);
        }
    }
}
