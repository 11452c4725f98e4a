//! The baseline feedback codecs: no ECN, classic ECN (RFC 3168) and DCTCP's precise echo
//! (RFC 8257). Schemes bring their own codecs in their folders.

pub mod dctcp;
pub mod none;
pub mod rfc3168;

pub use dctcp::Dctcp;
pub use none::NoEcn;
pub use rfc3168::Rfc3168;

use super::codec::{Codec, Handshake};
use crate::packet::Packet;
use crate::wire::{Ecn, TcpFlags};

/// Names accepted by [`by_name`].
pub const NAMES: &[&str] = &["none", "ecn", "dctcp"];

/// A baseline codec by name: `none`, `ecn` (alias `rfc3168`) or `dctcp`.
pub fn by_name(name: &str) -> Result<Box<dyn Codec>, String> {
    match name {
        "none" => Ok(Box::new(NoEcn)),
        "ecn" | "rfc3168" => Ok(Box::new(Rfc3168::default())),
        "dctcp" => Ok(Box::new(Dctcp::default())),
        _ => Err(format!(
            "unknown feedback codec {name:?}; known: {}",
            NAMES.join(", ")
        )),
    }
}

/// The [`Codec`] methods of negotiation for a codec whose handshake is a `setup` field's
/// ([`EcnSetup`], or a scheme's own with the same three methods): `handshake_out`,
/// `handshake_in`, `negotiated`.
macro_rules! negotiation_via_setup {
    () => {
        fn handshake_out(
            &mut self,
            kind: $crate::tcp::codec::Handshake,
            pkt: &mut $crate::packet::Packet,
        ) {
            self.setup.handshake_out(kind, pkt);
        }

        fn handshake_in(
            &mut self,
            kind: $crate::tcp::codec::Handshake,
            pkt: &$crate::packet::Packet,
        ) {
            self.setup.handshake_in(kind, pkt);
        }

        fn negotiated(&self) -> bool {
            self.setup.negotiated()
        }
    };
}
pub(crate) use negotiation_via_setup;

#[inline]
pub(crate) fn set_flag(pkt: &mut Packet, flag: u16, on: bool) {
    if let Some(t) = pkt.tcp_mut() {
        t.flags.set(flag, on);
    }
}

#[inline]
pub(crate) fn has_flag(pkt: &Packet, flag: u16) -> bool {
    pkt.tcp().is_some_and(|t| t.flags.has(flag))
}

/// RFC 3168 §6.1.1 ECN negotiation, shared by the classic-ECN and DCTCP codecs: an
/// "ECN-setup SYN" carries ECE and CWR, an "ECN-setup SYN-ACK" carries ECE only; SYN and
/// SYN-ACK themselves are Not-ECT. A SYN that has to be retransmitted goes without ECN-setup
/// flags (§6.1.1.1 allows this fallback, as Linux does), in case a middlebox drops them.
#[derive(Clone, Debug, Default)]
pub struct EcnSetup {
    ok: bool,
    syns_sent: u32,
    /// Keep offering ECN on retransmitted SYNs.
    pub no_syn_fallback: bool,
}

impl EcnSetup {
    pub fn negotiated(&self) -> bool {
        self.ok
    }

    pub fn handshake_out(&mut self, kind: Handshake, pkt: &mut Packet) {
        pkt.ip.ecn = Ecn::NOT_ECT;
        match kind {
            Handshake::Syn => {
                self.syns_sent += 1;
                let offer = self.syns_sent == 1 || self.no_syn_fallback;
                set_flag(pkt, TcpFlags::ECE | TcpFlags::CWR, offer);
            }
            Handshake::SynAck => {
                set_flag(pkt, TcpFlags::CWR, false);
                set_flag(pkt, TcpFlags::ECE, self.ok);
            }
            Handshake::Ack => {}
        }
    }

    pub fn handshake_in(&mut self, kind: Handshake, pkt: &Packet) {
        let ece = has_flag(pkt, TcpFlags::ECE);
        let cwr = has_flag(pkt, TcpFlags::CWR);
        match kind {
            Handshake::Syn => self.ok = ece && cwr,
            Handshake::SynAck => self.ok = ece && !cwr,
            Handshake::Ack => {}
        }
    }
}
