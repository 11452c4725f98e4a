//! VCP feedback: data segments carry the low-load code `01`; routers raise it; the receiver
//! echoes the highest code of the segments an ACK covers in (CWR, ECE); the sender turns
//! every ACK of new data into [`Signal::Load`]. HFCC's variant also carries the sender's RTT
//! to the routers and the routers' `t_p` back ([`Signal::LoadInterval`]).

use super::LoadCode;
use crate::cc::Signal;
use crate::marker::load::INTERVAL_SET_MS;
use crate::packet::Packet;
use crate::tcp::codec::{Codec, Handshake, TcpInfo};
use crate::time::{Time, MS, US};
use crate::wire::{Ecn, TcpFlags};

/// The load-factor family's handshake (VCP, UNO): the SYN carries ECE, CWR and AE; a
/// receiver that speaks the scheme answers with ECE and AE; anything else falls back.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoadSetup {
    /// The peer's SYN asked for the scheme (passive side).
    peer_asked: bool,
    negotiated: bool,
}

const SETUP: u16 = TcpFlags::ECE | TcpFlags::CWR | TcpFlags::AE;

impl LoadSetup {
    /// A setup that has negotiated (for tests of what follows the handshake).
    #[cfg(test)]
    pub(crate) fn done() -> Self {
        LoadSetup {
            peer_asked: true,
            negotiated: true,
        }
    }

    pub(crate) fn negotiated(&self) -> bool {
        self.negotiated
    }

    pub(crate) fn handshake_out(&mut self, kind: Handshake, pkt: &mut Packet) {
        pkt.ip.ecn = Ecn::NOT_ECT;
        let Some(t) = pkt.tcp_mut() else { return };
        match kind {
            Handshake::Syn => t.flags.set(SETUP, true),
            Handshake::SynAck => {
                t.flags.set(SETUP, false);
                t.flags.set(TcpFlags::ECE | TcpFlags::AE, self.peer_asked);
            }
            Handshake::Ack => {}
        }
    }

    pub(crate) fn handshake_in(&mut self, kind: Handshake, pkt: &Packet) {
        let Some(t) = pkt.tcp() else { return };
        let f = t.flags;
        match kind {
            Handshake::Syn => {
                self.peer_asked = f.0 & SETUP == SETUP;
                self.negotiated = self.peer_asked;
            }
            Handshake::SynAck => {
                self.negotiated =
                    f.has(TcpFlags::ECE) && f.has(TcpFlags::AE) && !f.has(TcpFlags::CWR)
            }
            Handshake::Ack => {}
        }
    }
}

pub struct VcpCodec {
    setup: LoadSetup,
    /// Data segments carry the sender's smoothed RTT for the routers (HFCC's adaptive `t_p`;
    /// an imagined header field, as XCP and MLCP have).
    rtt_hint: bool,
    /// The routers' `t_p` rides back with the code (HFCC: MLCP's imagined 3-bit interval
    /// field, [`crate::packet::Meta::ideal_interval`]).
    returns_interval: bool,
    // ---- data receiver
    /// Highest code among the segments received since the last ACK, with the interval field
    /// of that segment (ties: the longer; 0 when absent).
    pending: Option<(LoadCode, u8)>,
    /// Code and interval of the last segment received (echoed again by ACKs that cover
    /// nothing new).
    last: Option<(LoadCode, u8)>,
    /// Load signals delivered, by code bits.
    pub signals: [u64; 4],
}

impl Default for VcpCodec {
    fn default() -> Self {
        Self::new()
    }
}

impl VcpCodec {
    pub fn new() -> Self {
        VcpCodec {
            setup: LoadSetup::default(),
            rtt_hint: false,
            returns_interval: false,
            pending: None,
            last: None,
            signals: [0; 4],
        }
    }
}

impl VcpCodec {
    /// HFCC's feedback: VCP's two-bit code and echo (the overlay code of Algorithm 1 uses
    /// the same bits and is raised the same way), plus the sender's smoothed RTT on data and
    /// the `t_p` the routers wrote beside the code (the router that set it; among routers with
    /// that code, the one the marker's `t_p_ties` picks), echoed with it.
    pub fn hfcc() -> Self {
        VcpCodec {
            rtt_hint: true,
            returns_interval: true,
            ..Self::new()
        }
    }
}

impl Codec for VcpCodec {
    fn name(&self) -> &'static str {
        if self.rtt_hint {
            "hfcc"
        } else {
            "vcp"
        }
    }

    crate::tcp::codecs::negotiation_via_setup!();

    fn data_out(&mut self, pkt: &mut Packet, _retransmission: bool, info: &TcpInfo) {
        // Retransmissions carry the code too: the load they collect is as valid (ns-2 stamps
        // every segment it outputs).
        pkt.ip.ecn = if self.negotiated() {
            LoadCode::Low.ecn()
        } else {
            Ecn::NOT_ECT
        };
        if self.rtt_hint && self.negotiated() {
            pkt.meta.rtt_hint_us = (info.srtt / US).min(u32::MAX as Time) as u32;
        }
        if self.returns_interval {
            pkt.meta.ideal_interval = 0;
            pkt.meta.ideal_load = 0;
        }
    }

    fn ack_in(&mut self, pkt: &Packet, info: &TcpInfo) -> Option<Signal> {
        if !self.negotiated() || info.acked_bytes == 0 {
            // Only ACKs of new data drive the window (duplicates go to loss recovery).
            return None;
        }
        let code = LoadCode::from_echo(pkt.tcp()?.flags)?;
        self.signals[code.bits() as usize] += 1;
        let interval = pkt.meta.ideal_interval as usize;
        Some(match INTERVAL_SET_MS.get(interval.wrapping_sub(1)) {
            Some(&ms) if self.returns_interval => Signal::LoadInterval {
                code: code.bits(),
                t_rho: ms as Time * MS,
            },
            _ => Signal::Load(code.bits()),
        })
    }

    fn data_in(&mut self, pkt: &Packet) -> bool {
        if self.negotiated() {
            if let Some(c) = LoadCode::from_ecn(pkt.ip.ecn) {
                let f = Some((c, pkt.meta.ideal_interval));
                self.pending = self.pending.max(f);
                self.last = f;
            }
        }
        false
    }

    fn load_top_code(&self) -> Option<u8> {
        Some(LoadCode::Overload.bits())
    }

    fn ack_out(&mut self, pkt: &mut Packet) {
        if !self.negotiated() {
            return;
        }
        let code = self.pending.take().or(self.last);
        if let (Some((c, interval)), Some(t)) = (code, pkt.tcp_mut()) {
            c.write_echo(&mut t.flags);
            if self.returns_interval {
                pkt.meta.ideal_interval = interval;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Ipv4Repr, TcpRepr};

    fn seg(payload: u32, ecn: Ecn, flags: u16) -> Packet {
        Packet::new_tcp(
            Ipv4Repr {
                ecn,
                ..Default::default()
            },
            TcpRepr {
                flags: TcpFlags(flags),
                ..Default::default()
            },
            payload,
        )
    }

    fn pair() -> (VcpCodec, VcpCodec) {
        let (mut a, mut b) = (VcpCodec::new(), VcpCodec::new());
        let mut syn = seg(0, Ecn::NOT_ECT, TcpFlags::SYN);
        a.handshake_out(Handshake::Syn, &mut syn);
        b.handshake_in(Handshake::Syn, &syn);
        let mut sa = seg(0, Ecn::NOT_ECT, TcpFlags::SYN | TcpFlags::ACK);
        b.handshake_out(Handshake::SynAck, &mut sa);
        a.handshake_in(Handshake::SynAck, &sa);
        (a, b)
    }

    fn acked(n: u64) -> TcpInfo {
        TcpInfo {
            acked_bytes: n,
            ..Default::default()
        }
    }

    #[test]
    fn handshake_and_fallback() {
        let (a, b) = pair();
        assert!(a.negotiated() && b.negotiated());
        // A classic ECN responder (SYN-ACK with ECE only) is not a VCP receiver.
        let mut a = VcpCodec::new();
        a.handshake_in(
            Handshake::SynAck,
            &seg(
                0,
                Ecn::NOT_ECT,
                TcpFlags::SYN | TcpFlags::ACK | TcpFlags::ECE,
            ),
        );
        assert!(!a.negotiated());
        let mut d = seg(1000, Ecn::ECT1, TcpFlags::ACK);
        a.data_out(&mut d, false, &TcpInfo::default());
        assert_eq!(d.ip.ecn, Ecn::NOT_ECT);
        // A classic ECN SYN (ECE|CWR without AE) does not negotiate VCP.
        let mut b = VcpCodec::new();
        b.handshake_in(
            Handshake::Syn,
            &seg(
                0,
                Ecn::NOT_ECT,
                TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR,
            ),
        );
        assert!(!b.negotiated());
    }

    #[test]
    fn receiver_echoes_every_ack_and_sender_decodes_each() {
        let (mut tx, mut rx) = pair();
        let mut d = seg(1000, Ecn::NOT_ECT, TcpFlags::ACK);
        tx.data_out(&mut d, false, &TcpInfo::default());
        assert_eq!(d.ip.ecn, LoadCode::Low.ecn());
        tx.data_out(&mut d, true, &TcpInfo::default());
        assert_eq!(d.ip.ecn, LoadCode::Low.ecn());
        let echo = |rx: &mut VcpCodec, codes: &[LoadCode]| {
            for c in codes {
                rx.data_in(&seg(1000, c.ecn(), TcpFlags::ACK));
            }
            let mut a = seg(0, Ecn::NOT_ECT, TcpFlags::ACK);
            rx.ack_out(&mut a);
            a
        };
        for c in [
            LoadCode::High,
            LoadCode::Low,
            LoadCode::Overload,
            LoadCode::Low,
        ] {
            let a = echo(&mut rx, &[c]);
            assert_eq!(LoadCode::from_echo(a.tcp().unwrap().flags), Some(c));
            assert_eq!(tx.ack_in(&a, &acked(1000)), Some(Signal::Load(c.bits())));
        }
        // A delayed ACK covering two segments echoes the higher code.
        let a = echo(&mut rx, &[LoadCode::Overload, LoadCode::Low]);
        assert_eq!(tx.ack_in(&a, &acked(2000)), Some(Signal::Load(0b11)));
        // An ACK that covers nothing new repeats the last segment's code; the sender ignores
        // duplicates.
        let a = echo(&mut rx, &[]);
        assert_eq!(
            LoadCode::from_echo(a.tcp().unwrap().flags),
            Some(LoadCode::Low)
        );
        assert_eq!(tx.ack_in(&a, &acked(0)), None);
        assert_eq!(tx.signals, [0, 2, 1, 2]);
    }
    /// HFCC's variant: data leaves with no interval; the receiver echoes the interval of the
    /// segment with the highest code (ties: the longer) and the sender returns it as the
    /// routers' `t_p`; VCP's codec echoes none.
    #[test]
    fn hfcc_echoes_the_routers_interval_with_the_code() {
        let (mut tx, mut rx) = {
            let (mut a, mut b) = (VcpCodec::hfcc(), VcpCodec::hfcc());
            let mut syn = seg(0, Ecn::NOT_ECT, TcpFlags::SYN);
            a.handshake_out(Handshake::Syn, &mut syn);
            b.handshake_in(Handshake::Syn, &syn);
            let mut sa = seg(0, Ecn::NOT_ECT, TcpFlags::SYN | TcpFlags::ACK);
            b.handshake_out(Handshake::SynAck, &mut sa);
            a.handshake_in(Handshake::SynAck, &sa);
            (a, b)
        };
        let mut d = seg(1000, Ecn::NOT_ECT, TcpFlags::ACK);
        d.meta.ideal_interval = 5;
        tx.data_out(&mut d, false, &TcpInfo::default());
        assert_eq!(d.meta.ideal_interval, 0);
        let echo = |rx: &mut VcpCodec, segs: &[(LoadCode, u8)]| {
            for &(c, i) in segs {
                let mut d = seg(1000, c.ecn(), TcpFlags::ACK);
                d.meta.ideal_interval = i;
                rx.data_in(&d);
            }
            let mut a = seg(0, Ecn::NOT_ECT, TcpFlags::ACK);
            rx.ack_out(&mut a);
            a
        };
        // (segments an ACK covers: code and interval each) -> the code and t_p returned.
        let cases: [(&[(LoadCode, u8)], u64, u8, u64); 3] = [
            (&[(LoadCode::High, 1)], 1000, 0b10, 80),
            (
                &[(LoadCode::Overload, 1), (LoadCode::High, 3)],
                2000,
                0b11,
                80,
            ),
            (&[(LoadCode::High, 1), (LoadCode::High, 3)], 2000, 0b10, 400),
        ];
        for (segs, bytes, code, t_rho_ms) in cases {
            let a = echo(&mut rx, segs);
            assert_eq!(
                tx.ack_in(&a, &acked(bytes)),
                Some(Signal::LoadInterval {
                    code,
                    t_rho: t_rho_ms * MS
                }),
                "{segs:?}"
            );
        }
        // No interval on the path: the code alone.
        let a = echo(&mut rx, &[(LoadCode::Low, 0)]);
        assert_eq!(tx.ack_in(&a, &acked(1000)), Some(Signal::Load(0b01)));
        // VCP neither clears nor echoes the field.
        let (mut vtx, mut vrx) = pair();
        let a = echo(&mut vrx, &[(LoadCode::High, 2)]);
        assert_eq!(a.meta.ideal_interval, 0);
        let mut a = a;
        a.meta.ideal_interval = 2;
        assert_eq!(vtx.ack_in(&a, &acked(1000)), Some(Signal::Load(0b10)));
    }
}
