//! Classic ECN (RFC 3168).
//!
//! - Negotiation: [`EcnSetup`]; a peer that does not answer the ECN-setup SYN with an
//!   ECN-setup SYN-ACK leaves the connection without ECN (behaves as `none`).
//! - Data sender (§6.1.2): new data segments are ECT(0); retransmissions, pure ACKs and
//!   segments without payload are Not-ECT (§6.1.5, §6.1.4). `ect_on_retransmissions`
//!   ([`Rfc3168Config`], `ecn_params`) sends retransmissions ECT(0) as ns-2's TCP does
//!   (`tcp/tcp.cc` `output()` sets ECT on every data packet of an ECN sender), for
//!   reproductions of ns-2 results. An ECE reduces the window at most
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
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Rfc3168Config {
    /// Send retransmissions ECT(0) (ns-2's TCP; RFC 3168 §6.1.5 forbids it).
    pub ect_on_retransmissions: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Rfc3168 {
    pub cfg: Rfc3168Config,
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

    pub fn with_config(cfg: Rfc3168Config) -> Self {
        Rfc3168 {
            cfg,
            ..Self::default()
        }
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
        if (retransmission && !self.cfg.ect_on_retransmissions) || pkt.payload_len == 0 {
            pkt.ip.ecn = Ecn::NOT_ECT;
            return;
        }
        if retransmission {
            // ns-2: ECT, and CWR waits for new data.
            pkt.ip.ecn = Ecn::ECT0;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::codec::Handshake;
    use crate::wire::{Ipv4Repr, TcpRepr};

    fn data() -> Packet {
        Packet::new_tcp(
            Ipv4Repr::default(),
            TcpRepr {
                flags: TcpFlags(TcpFlags::ACK),
                ..Default::default()
            },
            1000,
        )
    }

    /// A data sender after the handshake with an ECN-capable receiver.
    fn negotiated(cfg: Rfc3168Config) -> Rfc3168 {
        let (mut a, mut b) = (Rfc3168::with_config(cfg), Rfc3168::new());
        let seg = |flags| {
            Packet::new_tcp(
                Ipv4Repr::default(),
                TcpRepr {
                    flags: TcpFlags(flags),
                    ..Default::default()
                },
                0,
            )
        };
        let mut syn = seg(TcpFlags::SYN);
        a.handshake_out(Handshake::Syn, &mut syn);
        b.handshake_in(Handshake::Syn, &syn);
        let mut synack = seg(TcpFlags::SYN | TcpFlags::ACK);
        b.handshake_out(Handshake::SynAck, &mut synack);
        a.handshake_in(Handshake::SynAck, &synack);
        assert!(a.negotiated());
        a
    }

    #[test]
    fn retransmissions_are_not_ect_unless_configured() {
        let info = TcpInfo::default();
        for (ns2, want) in [(false, Ecn::NOT_ECT), (true, Ecn::ECT0)] {
            let mut c = negotiated(Rfc3168Config {
                ect_on_retransmissions: ns2,
            });
            let mut p = data();
            c.data_out(&mut p, true, &info);
            assert_eq!(p.ip.ecn, want, "ect_on_retransmissions = {ns2}");
            let mut p = data();
            c.data_out(&mut p, false, &info);
            assert_eq!(p.ip.ecn, Ecn::ECT0);
        }
    }
}
