//! EECN's handshake, receiver echo and sender decoding (§4.1–4.2, Table 2), with fallback to
//! RFC 3168 ECN or to no ECN for peers that are not EECN capable. Readings and parameters:
//! see the [module docs](super).

use super::{Cl1Response, CodecConfig, Fallback, IpCode, Level, SynFlags, TcpCode};
use crate::cc::Signal;
use crate::packet::Packet;
use crate::tcp::codec::{Handshake, TcpInfo};
use crate::wire::{Ecn, TcpFlags};

/// What the handshake settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Handshake not finished.
    Pending,
    Eecn,
    /// RFC 3168 with a classic ECN peer.
    ClassicEcn,
    NoEcn,
}

/// Suppresses repeated reactions within one window of data (RFC 3168 §6.1.2): after a
/// reaction at `snd_nxt = s`, echoes are ignored until an ACK acknowledges beyond `s`.
#[derive(Clone, Copy, Debug, Default)]
struct OncePerWindow {
    after: Option<u64>,
}

impl OncePerWindow {
    #[inline]
    fn allow(&mut self, info: &TcpInfo) -> bool {
        if self.after.is_some_and(|s| info.snd_una <= s) {
            return false;
        }
        self.after = Some(info.snd_nxt);
        true
    }
}

pub struct Codec {
    cfg: CodecConfig,
    mode: Mode,
    /// Level the handshake decided for our sending direction.
    handshake_level: Option<Level>,
    /// Level our peer's handshake packet (SYN or SYN-ACK) met, echoed in our next one.
    peer_handshake_level: Level,
    // Data receiver.
    /// CL(2) (classic: CE) seen and no CWR since.
    echo_cl2: bool,
    /// ACKs still to carry at least CL(1).
    echo_cl1_left: u8,
    // Data sender.
    cwr_pending: bool,
    cl2_window: OncePerWindow,
    cl1_window: OncePerWindow,
}

impl Codec {
    pub fn new(cfg: CodecConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(Codec {
            cfg,
            mode: Mode::Pending,
            handshake_level: None,
            peer_handshake_level: Level::None,
            echo_cl2: false,
            echo_cl1_left: 0,
            cwr_pending: false,
            cl2_window: OncePerWindow::default(),
            cl1_window: OncePerWindow::default(),
        })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The level our sending direction's handshake packet met, as echoed by the peer.
    pub fn handshake_level(&self) -> Option<Level> {
        self.handshake_level
    }

    fn flags_mut(pkt: &mut Packet) -> Option<&mut TcpFlags> {
        pkt.tcp_mut().map(|t| &mut t.flags)
    }

    fn flags(pkt: &Packet) -> TcpFlags {
        pkt.tcp().map(|t| t.flags).unwrap_or_default()
    }

    /// The level this receiver echoes on its next ACK (consumes one CL(1) repetition).
    fn next_echo(&mut self) -> Level {
        let cl1 = self.echo_cl1_left > 0;
        self.echo_cl1_left = self.echo_cl1_left.saturating_sub(1);
        if self.echo_cl2 {
            Level::Cl2
        } else if cl1 {
            Level::Cl1
        } else {
            Level::None
        }
    }

    fn fallback_mode(&self) -> Mode {
        match self.cfg.fallback {
            Fallback::Ecn => Mode::ClassicEcn,
            Fallback::None => Mode::NoEcn,
        }
    }
}

/// RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR; an ECN-setup SYN-ACK has ECE only.
fn is_rfc3168_syn(f: TcpFlags) -> bool {
    f.has(TcpFlags::ECE) && f.has(TcpFlags::CWR)
}
fn is_rfc3168_syn_ack(f: TcpFlags) -> bool {
    f.has(TcpFlags::ECE) && !f.has(TcpFlags::CWR)
}

impl crate::tcp::codec::Codec for Codec {
    fn name(&self) -> &'static str {
        "eecn"
    }

    fn handshake_out(&mut self, kind: Handshake, pkt: &mut Packet) {
        let (ip, code) = match (kind, self.mode) {
            (Handshake::Syn, _) => {
                let code = match self.cfg.syn_flags {
                    SynFlags::Table2 => TcpCode::Capable,
                    SynFlags::EcnSetup => TcpCode::Cl2, // ECE + CWR
                };
                (IpCode::Capable.ecn(), code)
            }
            (Handshake::SynAck, Mode::Eecn) => (
                IpCode::Capable.ecn(),
                TcpCode::echo(self.peer_handshake_level),
            ),
            // RFC 3168 ECN-setup SYN-ACK: ECE only, Not-ECT.
            (Handshake::SynAck, Mode::ClassicEcn) => (Ecn::NOT_ECT, TcpCode::Cl1),
            (Handshake::Ack, Mode::Eecn) => {
                (Ecn::NOT_ECT, TcpCode::echo(self.peer_handshake_level))
            }
            _ => (Ecn::NOT_ECT, TcpCode::NotCapable),
        };
        pkt.ip.ecn = ip;
        if let Some(f) = Self::flags_mut(pkt) {
            code.write(f);
        }
    }

    fn handshake_in(&mut self, kind: Handshake, pkt: &Packet) {
        let f = Self::flags(pkt);
        let ip = IpCode::from_ecn(pkt.ip.ecn);
        match kind {
            Handshake::Syn => {
                // EECN SYNs leave ECT(1) (classic SYNs are Not-ECT) and carry CWR.
                self.mode = match ip.level() {
                    Some(l) if f.has(TcpFlags::CWR) && !f.has(TcpFlags::AE) => {
                        self.peer_handshake_level = l;
                        Mode::Eecn
                    }
                    _ if is_rfc3168_syn(f) => self.fallback_mode(),
                    _ => Mode::NoEcn,
                };
            }
            Handshake::SynAck => {
                let echoed = TcpCode::read(f).echoed();
                self.mode = match (ip.level(), echoed) {
                    (Some(l), Some(ours)) => {
                        self.peer_handshake_level = l;
                        self.handshake_level = Some(ours);
                        Mode::Eecn
                    }
                    (None, _)
                        if self.cfg.syn_flags == SynFlags::EcnSetup && is_rfc3168_syn_ack(f) =>
                    {
                        self.fallback_mode()
                    }
                    _ => Mode::NoEcn,
                };
            }
            Handshake::Ack => {
                if self.mode == Mode::Eecn {
                    // The echo of our SYN-ACK's level; a segment without one met nothing.
                    let ours = TcpCode::read(f).echoed().unwrap_or(Level::None);
                    self.handshake_level = Some(ours);
                }
            }
        }
    }

    fn negotiated(&self) -> bool {
        self.mode == Mode::Eecn
    }

    fn initial_window(&self) -> Option<u32> {
        match self.mode {
            Mode::Eecn => self.handshake_level.map(|l| self.cfg.initial_window(l)),
            _ => None,
        }
    }

    fn data_out(&mut self, pkt: &mut Packet, retransmission: bool, _info: &TcpInfo) {
        let ect = !retransmission || self.cfg.ect_on_retransmissions;
        match self.mode {
            Mode::Eecn => {
                pkt.ip.ecn = if ect {
                    IpCode::Capable.ecn()
                } else {
                    IpCode::NotCapable.ecn()
                };
                let Some(f) = Self::flags_mut(pkt) else {
                    return;
                };
                if matches!(TcpCode::read(*f), TcpCode::Cl1 | TcpCode::Cl2) {
                    // A piggybacked echo holds the two bits; the CWR waits.
                    return;
                }
                let cwr = self.cwr_pending && !retransmission;
                if cwr {
                    self.cwr_pending = false;
                }
                let code = if cwr {
                    TcpCode::CWR
                } else {
                    TcpCode::NotCapable
                };
                code.write(f);
            }
            Mode::ClassicEcn => {
                pkt.ip.ecn = if ect { Ecn::ECT0 } else { Ecn::NOT_ECT };
                let cwr = self.cwr_pending && !retransmission;
                if cwr {
                    self.cwr_pending = false;
                }
                if let Some(f) = Self::flags_mut(pkt) {
                    f.set(TcpFlags::CWR, cwr);
                }
            }
            Mode::NoEcn | Mode::Pending => {
                pkt.ip.ecn = Ecn::NOT_ECT;
                if let Some(f) = Self::flags_mut(pkt) {
                    TcpCode::NotCapable.write(f);
                }
            }
        }
    }

    fn ack_in(&mut self, pkt: &Packet, info: &TcpInfo) -> Option<Signal> {
        let f = Self::flags(pkt);
        match self.mode {
            Mode::Eecn => match TcpCode::read(f) {
                TcpCode::Cl2 if self.cl2_window.allow(info) => {
                    self.cwr_pending = true;
                    Some(Signal::Level(Level::Cl2.number()))
                }
                TcpCode::Cl1
                    if self.cfg.cl1_response == Cl1Response::EveryAck
                        || self.cl1_window.allow(info) =>
                {
                    Some(Signal::Level(Level::Cl1.number()))
                }
                _ => None,
            },
            Mode::ClassicEcn if f.has(TcpFlags::ECE) && self.cl2_window.allow(info) => {
                self.cwr_pending = true;
                Some(Signal::Ecn)
            }
            _ => None,
        }
    }

    fn data_in(&mut self, pkt: &Packet) -> bool {
        let f = Self::flags(pkt);
        match self.mode {
            Mode::Eecn => {
                if TcpCode::read(f) == TcpCode::CWR {
                    self.echo_cl2 = false;
                }
                match IpCode::from_ecn(pkt.ip.ecn) {
                    IpCode::Cl2 => self.echo_cl2 = true,
                    IpCode::Cl1 => self.echo_cl1_left = self.cfg.cl1_echo_acks,
                    _ => return false,
                }
                self.cfg.immediate_ack_on_mark
            }
            Mode::ClassicEcn => {
                if f.has(TcpFlags::CWR) {
                    self.echo_cl2 = false;
                }
                if pkt.ip.ecn == Ecn::CE {
                    self.echo_cl2 = true;
                    return self.cfg.immediate_ack_on_mark;
                }
                false
            }
            Mode::NoEcn | Mode::Pending => false,
        }
    }

    fn ack_out(&mut self, pkt: &mut Packet) {
        let carries_data = pkt.payload_len > 0;
        match self.mode {
            Mode::Eecn => {
                let level = self.next_echo();
                if !carries_data {
                    pkt.ip.ecn = Ecn::NOT_ECT;
                }
                let Some(f) = Self::flags_mut(pkt) else {
                    return;
                };
                if carries_data {
                    // Data packets' bits mean CWR unless an echo needs them.
                    if level == Level::None {
                        return;
                    }
                    if TcpCode::read(*f) == TcpCode::CWR {
                        self.cwr_pending = true;
                    }
                }
                TcpCode::echo(level).write(f);
            }
            Mode::ClassicEcn => {
                let ece = self.echo_cl2;
                if let Some(f) = Self::flags_mut(pkt) {
                    f.set(TcpFlags::ECE, ece);
                }
            }
            Mode::NoEcn | Mode::Pending => {
                if !carries_data {
                    if let Some(f) = Self::flags_mut(pkt) {
                        TcpCode::NotCapable.write(f);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Limit;
    use crate::marker::{Marker as _, PortView};
    use crate::schemes::eecn::{Marker, MarkerConfig};
    use crate::tcp::codec::Codec as _;
    use crate::wire::{Ipv4Repr, TcpRepr};

    const MSS: u64 = 1000;

    fn seg(flags: u16, payload: u32) -> Packet {
        Packet::new_tcp(
            Ipv4Repr::default(),
            TcpRepr {
                flags: TcpFlags(flags),
                ..Default::default()
            },
            payload,
        )
    }

    fn code(p: &Packet) -> TcpCode {
        TcpCode::read(p.tcp().unwrap().flags)
    }

    fn eecn() -> Codec {
        Codec::new(CodecConfig::default()).unwrap()
    }

    /// A router whose queue holds `q` of 100 packets (no traffic history, zero horizon): the
    /// real EECN marker at level none (q < 30), CL(1) (30..50) or CL(2) (≥ 50).
    fn router(q: u32) -> impl FnMut(&mut Packet) {
        let mut m = Marker::new(MarkerConfig {
            horizon_s: 0.0,
            ..Default::default()
        })
        .unwrap();
        move |p: &mut Packet| {
            let v = PortView::new(0, q, 0, 1, Limit::Packets(100), 0);
            m.on_arrival(&v, p);
        }
    }

    const SYN: u16 = TcpFlags::SYN;
    const SYNACK: u16 = TcpFlags::SYN | TcpFlags::ACK;
    const ACK: u16 = TcpFlags::ACK;

    /// Runs the three-way handshake between `client` and `server`, the SYN crossing a router
    /// with `q_syn` packets queued, the SYN-ACK one with `q_synack`. Returns the three
    /// packets as received.
    fn handshake(client: &mut Codec, server: &mut Codec, q_syn: u32, q_synack: u32) -> [Packet; 3] {
        let mut syn = seg(SYN, 0);
        client.handshake_out(Handshake::Syn, &mut syn);
        router(q_syn)(&mut syn);
        server.handshake_in(Handshake::Syn, &syn);
        let mut synack = seg(SYNACK, 0);
        server.handshake_out(Handshake::SynAck, &mut synack);
        router(q_synack)(&mut synack);
        client.handshake_in(Handshake::SynAck, &synack);
        let mut ack = seg(ACK, 0);
        client.handshake_out(Handshake::Ack, &mut ack);
        server.handshake_in(Handshake::Ack, &ack);
        [syn, synack, ack]
    }

    fn info(snd_una: u64, snd_nxt: u64) -> TcpInfo {
        TcpInfo {
            snd_una,
            snd_nxt,
            mss: MSS as u32,
            ..Default::default()
        }
    }

    #[test]
    fn scenario_1_no_congestion_server_sends_10() {
        // Fig. 2: the receiver A opens, the data sender B answers; nothing is congested.
        let (mut a, mut b) = (eecn(), eecn());
        let [syn, synack, ack] = handshake(&mut a, &mut b, 0, 0);
        // SYN: IP ECT(1), TCP 01. SYN-ACK: IP ECT(1), TCP 01 (capable, SYN met nothing).
        // ACK: TCP 01 (capable, SYN-ACK met nothing), Not-ECT.
        assert_eq!((syn.ip.ecn, code(&syn)), (Ecn::ECT1, TcpCode::Capable));
        assert_eq!(
            (synack.ip.ecn, code(&synack)),
            (Ecn::ECT1, TcpCode::Capable)
        );
        assert_eq!((ack.ip.ecn, code(&ack)), (Ecn::NOT_ECT, TcpCode::Capable));
        assert!(a.negotiated() && b.negotiated());
        assert_eq!(b.initial_window(), Some(10));
        assert_eq!(a.initial_window(), Some(10));

        // B sends ten segments; the eighth meets level 2.
        let mut acks = Vec::new();
        for i in 0..10u64 {
            let mut d = seg(ACK, MSS as u32);
            b.data_out(&mut d, false, &info(0, i * MSS));
            assert_eq!(d.ip.ecn, Ecn::ECT1);
            assert_eq!(code(&d), TcpCode::NotCapable, "no CWR yet");
            router(if i == 7 { 60 } else { 0 })(&mut d);
            a.data_in(&d);
            let mut k = seg(ACK, 0);
            a.ack_out(&mut k);
            acks.push(code(&k));
        }
        use TcpCode::*;
        assert_eq!(
            acks,
            [Capable, Capable, Capable, Capable, Capable, Capable, Capable, Cl2, Cl2, Cl2]
        );
        // B reacts to the first CL(2) echo only (once per window).
        let mut signals = Vec::new();
        for (i, c) in acks.iter().enumerate() {
            let mut k = seg(ACK, 0);
            c.write(&mut k.tcp_mut().unwrap().flags);
            let una = (i as u64 + 1) * MSS;
            signals.push(b.ack_in(&k, &info(una, 10 * MSS)));
        }
        let l2 = Some(Signal::Level(2));
        assert_eq!(signals[..7], [None; 7]);
        assert_eq!(signals[7..], [l2, None, None]);
        // The next new data segment carries CWR, and only that one; a retransmission does
        // not carry it and is Not-ECT.
        let mut r = seg(ACK, MSS as u32);
        b.data_out(&mut r, true, &info(8 * MSS, 10 * MSS));
        assert_eq!((r.ip.ecn, code(&r)), (Ecn::NOT_ECT, NotCapable));
        let mut d = seg(ACK, MSS as u32);
        b.data_out(&mut d, false, &info(10 * MSS, 10 * MSS));
        assert_eq!(code(&d), TcpCode::CWR);
        let mut d2 = seg(ACK, MSS as u32);
        b.data_out(&mut d2, false, &info(10 * MSS, 11 * MSS));
        assert_eq!(code(&d2), NotCapable);
        // A stops echoing CL(2) once the CWR arrives.
        a.data_in(&d);
        let mut k = seg(ACK, 0);
        a.ack_out(&mut k);
        assert_eq!(code(&k), Capable);
    }

    #[test]
    fn scenario_2_syn_at_cl1_client_sends_5() {
        // Fig. 3: the data sender B opens; its SYN meets level 1.
        let (mut b, mut a) = (eecn(), eecn());
        let [syn, synack, ack] = handshake(&mut b, &mut a, 40, 0);
        assert_eq!(syn.ip.ecn, Ecn::ECT0, "SYN marked CL(1)");
        assert_eq!((synack.ip.ecn, code(&synack)), (Ecn::ECT1, TcpCode::Cl1));
        assert_eq!(code(&ack), TcpCode::Capable);
        assert_eq!(b.initial_window(), Some(5));
        assert_eq!(a.initial_window(), Some(10));
    }

    #[test]
    fn scenario_3_syn_cl1_synack_cl2() {
        // Fig. 4: both sides send data; the SYN meets level 1 and the SYN-ACK level 2.
        let (mut opener, mut answerer) = (eecn(), eecn());
        let [syn, synack, ack] = handshake(&mut opener, &mut answerer, 40, 70);
        assert_eq!(syn.ip.ecn, Ecn::ECT0);
        // The SYN-ACK arrives with IP CL(2) and TCP CL(1).
        assert_eq!((synack.ip.ecn, code(&synack)), (Ecn::CE, TcpCode::Cl1));
        // The ACK echoes CL(2).
        assert_eq!(code(&ack), TcpCode::Cl2);
        assert_eq!(opener.initial_window(), Some(5));
        assert_eq!(answerer.initial_window(), Some(1));
    }

    #[test]
    fn syn_at_cl2_gives_one_segment() {
        let (mut c, mut s) = (eecn(), eecn());
        let [_, synack, _] = handshake(&mut c, &mut s, 90, 0);
        assert_eq!(code(&synack), TcpCode::Cl2);
        assert_eq!(c.initial_window(), Some(1));
        assert_eq!(s.initial_window(), Some(10));
    }

    /// A classic RFC 3168 endpoint's handshake packets.
    fn classic_syn() -> Packet {
        seg(SYN | TcpFlags::ECE | TcpFlags::CWR, 0)
    }
    fn classic_synack() -> Packet {
        seg(SYNACK | TcpFlags::ECE, 0)
    }

    #[test]
    fn classic_ecn_client_gets_rfc3168_from_an_eecn_server() {
        let mut s = eecn();
        s.handshake_in(Handshake::Syn, &classic_syn());
        let mut synack = seg(SYNACK, 0);
        s.handshake_out(Handshake::SynAck, &mut synack);
        // RFC 3168 §6.1.1: ECN-setup SYN-ACK is ECE only, and not ECT.
        assert_eq!(synack.ip.ecn, Ecn::NOT_ECT);
        let f = synack.tcp().unwrap().flags;
        assert!(f.has(TcpFlags::ECE) && !f.has(TcpFlags::CWR));
        s.handshake_in(Handshake::Ack, &seg(ACK, 0));
        assert_eq!(s.mode(), Mode::ClassicEcn);
        assert!(!s.negotiated());
        assert_eq!(s.initial_window(), None);
        // Data: ECT(0). An ECE echo reduces once per window and CWR follows.
        let mut d = seg(ACK, MSS as u32);
        s.data_out(&mut d, false, &info(0, 0));
        assert_eq!(d.ip.ecn, Ecn::ECT0);
        let ece = seg(ACK | TcpFlags::ECE, 0);
        assert_eq!(s.ack_in(&ece, &info(MSS, 5 * MSS)), Some(Signal::Ecn));
        assert_eq!(s.ack_in(&ece, &info(2 * MSS, 5 * MSS)), None);
        let mut d = seg(ACK, MSS as u32);
        s.data_out(&mut d, false, &info(2 * MSS, 5 * MSS));
        assert!(d.tcp().unwrap().flags.has(TcpFlags::CWR));
        assert_eq!(s.ack_in(&ece, &info(6 * MSS, 6 * MSS)), Some(Signal::Ecn));

        // As a receiver of classic data: 10 (ECT(0)) is not a mark, CE is echoed until CWR.
        let mut r = eecn();
        r.handshake_in(Handshake::Syn, &classic_syn());
        let mut data = seg(ACK, MSS as u32);
        data.ip.ecn = Ecn::ECT0;
        r.data_in(&data);
        let mut k = seg(ACK, 0);
        r.ack_out(&mut k);
        assert!(!k.tcp().unwrap().flags.has(TcpFlags::ECE));
        data.ip.ecn = Ecn::CE;
        r.data_in(&data);
        for _ in 0..5 {
            let mut k = seg(ACK, 0);
            r.ack_out(&mut k);
            assert!(k.tcp().unwrap().flags.has(TcpFlags::ECE));
        }
        let mut cwr = seg(ACK | TcpFlags::CWR, MSS as u32);
        cwr.ip.ecn = Ecn::ECT0;
        r.data_in(&cwr);
        let mut k = seg(ACK, 0);
        r.ack_out(&mut k);
        assert!(!k.tcp().unwrap().flags.has(TcpFlags::ECE));
    }

    #[test]
    fn classic_server_fallback_depends_on_syn_flags() {
        // Table 2 SYN (01): a classic server sees no ECN-setup SYN and answers 00 → no ECN.
        let mut c = eecn();
        let mut syn = seg(SYN, 0);
        c.handshake_out(Handshake::Syn, &mut syn);
        assert_eq!(code(&syn), TcpCode::Capable);
        c.handshake_in(Handshake::SynAck, &seg(SYNACK, 0));
        assert_eq!(c.mode(), Mode::NoEcn);
        // ECN-setup SYN (11): the classic server accepts RFC 3168.
        let mut c = Codec::new(CodecConfig {
            syn_flags: SynFlags::EcnSetup,
            ..Default::default()
        })
        .unwrap();
        let mut syn = seg(SYN, 0);
        c.handshake_out(Handshake::Syn, &mut syn);
        assert_eq!((syn.ip.ecn, code(&syn)), (Ecn::ECT1, TcpCode::Cl2));
        c.handshake_in(Handshake::SynAck, &classic_synack());
        assert_eq!(c.mode(), Mode::ClassicEcn);
        assert_eq!(c.initial_window(), None);
        let mut ack = seg(ACK, 0);
        c.handshake_out(Handshake::Ack, &mut ack);
        assert_eq!(code(&ack), TcpCode::NotCapable, "RFC 3168 final ACK");
        // An EECN server still recognises an ECN-setup SYN from EECN by its IP codepoint.
        let mut s = eecn();
        s.handshake_in(Handshake::Syn, &syn);
        assert_eq!(s.mode(), Mode::Eecn);
        // fallback = none: a classic client is answered without ECN.
        let mut s = Codec::new(CodecConfig {
            fallback: Fallback::None,
            ..Default::default()
        })
        .unwrap();
        s.handshake_in(Handshake::Syn, &classic_syn());
        let mut synack = seg(SYNACK, 0);
        s.handshake_out(Handshake::SynAck, &mut synack);
        assert_eq!(
            (synack.ip.ecn, code(&synack)),
            (Ecn::NOT_ECT, TcpCode::NotCapable)
        );
        assert_eq!(s.mode(), Mode::NoEcn);
    }

    #[test]
    fn no_ecn_peer_means_no_ecn() {
        // As server: a plain SYN.
        let mut s = eecn();
        s.handshake_in(Handshake::Syn, &seg(SYN, 0));
        let mut synack = seg(SYNACK, 0);
        s.handshake_out(Handshake::SynAck, &mut synack);
        assert_eq!(
            (synack.ip.ecn, code(&synack)),
            (Ecn::NOT_ECT, TcpCode::NotCapable)
        );
        // As client: a plain SYN-ACK.
        let mut c = eecn();
        let mut syn = seg(SYN, 0);
        c.handshake_out(Handshake::Syn, &mut syn);
        c.handshake_in(Handshake::SynAck, &seg(SYNACK, 0));
        for k in [&mut s, &mut c] {
            assert_eq!(k.mode(), Mode::NoEcn);
            assert!(!k.negotiated());
            assert_eq!(k.initial_window(), None);
            let mut d = seg(ACK, MSS as u32);
            k.data_out(&mut d, false, &info(0, 0));
            assert_eq!((d.ip.ecn, code(&d)), (Ecn::NOT_ECT, TcpCode::NotCapable));
            // Even a CE-marked packet (impossible from a Not-ECT sender) is not echoed.
            let mut x = seg(ACK, MSS as u32);
            x.ip.ecn = Ecn::CE;
            assert!(!k.data_in(&x));
            let mut a = seg(ACK, 0);
            k.ack_out(&mut a);
            assert_eq!(code(&a), TcpCode::NotCapable);
            assert_eq!(
                k.ack_in(&seg(ACK | TcpFlags::ECE, 0), &info(MSS, MSS)),
                None
            );
        }
    }

    fn connected_pair() -> (Codec, Codec) {
        let (mut a, mut b) = (eecn(), eecn());
        handshake(&mut a, &mut b, 0, 0);
        (a, b)
    }

    fn data(ecn: Ecn, flags: u16) -> Packet {
        let mut d = seg(ACK | flags, MSS as u32);
        d.ip.ecn = ecn;
        d
    }

    fn next_ack(r: &mut Codec) -> TcpCode {
        let mut k = seg(ACK, 0);
        r.ack_out(&mut k);
        assert_eq!(k.ip.ecn, Ecn::NOT_ECT, "pure ACKs are Not-ECT");
        code(&k)
    }

    #[test]
    fn cl1_is_echoed_on_exactly_three_acks() {
        let (mut r, _) = connected_pair();
        r.data_in(&data(Ecn::ECT0, 0));
        let seq: Vec<_> = (0..5).map(|_| next_ack(&mut r)).collect();
        use TcpCode::*;
        assert_eq!(seq, [Cl1, Cl1, Cl1, Capable, Capable]);
        // A new CL(1) restarts the count; unmarked data does not.
        r.data_in(&data(Ecn::ECT0, 0));
        next_ack(&mut r);
        r.data_in(&data(Ecn::ECT1, 0));
        let seq: Vec<_> = (0..3).map(|_| next_ack(&mut r)).collect();
        assert_eq!(seq, [Cl1, Cl1, Capable]);
    }

    #[test]
    fn cl2_is_echoed_until_cwr_and_dominates_cl1() {
        let (mut r, _) = connected_pair();
        r.data_in(&data(Ecn::ECT0, 0));
        r.data_in(&data(Ecn::CE, 0));
        use TcpCode::*;
        for _ in 0..10 {
            assert_eq!(next_ack(&mut r), Cl2);
        }
        // CWR clears CL(2); the CL(1) repetitions were used up under it.
        r.data_in(&data(Ecn::ECT1, TcpFlags::CWR));
        assert_eq!(next_ack(&mut r), Capable);
        // A CWR packet that is itself CL(2): the echo restarts (CWR processed first).
        r.data_in(&data(Ecn::CE, 0));
        r.data_in(&data(Ecn::CE, TcpFlags::CWR));
        assert_eq!(next_ack(&mut r), Cl2);
        // A classic router's CE on an EECN packet is CL(2).
        let (mut r, _) = connected_pair();
        r.data_in(&data(Ecn::CE, 0));
        assert_eq!(next_ack(&mut r), Cl2);
    }

    #[test]
    fn one_cl2_reduction_per_window() {
        let (_, mut s) = connected_pair();
        let cl2 = {
            let mut k = seg(ACK, 0);
            TcpCode::Cl2.write(&mut k.tcp_mut().unwrap().flags);
            k
        };
        // Reaction at snd_nxt = 20 segments.
        assert_eq!(s.ack_in(&cl2, &info(MSS, 20 * MSS)), Some(Signal::Level(2)));
        // Echoes for data sent before the reaction are ignored, including the ACK of
        // exactly snd_nxt.
        for una in [2, 10, 19, 20] {
            assert_eq!(
                s.ack_in(&cl2, &info(una * MSS, 25 * MSS)),
                None,
                "una {una}"
            );
        }
        // Beyond it, a new reaction (new window, up to 30).
        assert_eq!(
            s.ack_in(&cl2, &info(21 * MSS, 30 * MSS)),
            Some(Signal::Level(2))
        );
        assert_eq!(s.ack_in(&cl2, &info(29 * MSS, 31 * MSS)), None);
        // CL(1) is passed on every ACK by default...
        let cl1 = {
            let mut k = seg(ACK, 0);
            TcpCode::Cl1.write(&mut k.tcp_mut().unwrap().flags);
            k
        };
        for una in 22..25 {
            assert_eq!(
                s.ack_in(&cl1, &info(una * MSS, 31 * MSS)),
                Some(Signal::Level(1))
            );
        }
        // ...or once per window when asked.
        let mut a = Codec::new(CodecConfig {
            cl1_response: Cl1Response::OncePerWindow,
            ..Default::default()
        })
        .unwrap();
        let mut b = eecn();
        handshake(&mut a, &mut b, 0, 0);
        assert_eq!(a.ack_in(&cl1, &info(MSS, 10 * MSS)), Some(Signal::Level(1)));
        assert_eq!(a.ack_in(&cl1, &info(5 * MSS, 10 * MSS)), None);
        assert_eq!(
            a.ack_in(&cl1, &info(11 * MSS, 12 * MSS)),
            Some(Signal::Level(1))
        );
        // No echo: no signal; a peer's data segment with CWR (01) is not a level.
        let mut cwr_seg = seg(ACK, MSS as u32);
        TcpCode::CWR.write(&mut cwr_seg.tcp_mut().unwrap().flags);
        assert_eq!(s.ack_in(&cwr_seg, &info(40 * MSS, 40 * MSS)), None);
    }

    #[test]
    fn piggybacked_echo_defers_cwr() {
        // Two-way transfer: the endpoint both reacted (CWR pending) and owes a CL(2) echo.
        let (mut a, _) = connected_pair();
        let mut cl2 = seg(ACK, 0);
        TcpCode::Cl2.write(&mut cl2.tcp_mut().unwrap().flags);
        assert!(a.ack_in(&cl2, &info(MSS, 5 * MSS)).is_some());
        a.data_in(&data(Ecn::CE, 0));
        // Data + ACK: the echo takes the bits, the CWR waits.
        let mut s = seg(ACK, MSS as u32);
        a.data_out(&mut s, false, &info(MSS, 5 * MSS));
        assert_eq!(code(&s), TcpCode::CWR);
        a.ack_out(&mut s);
        assert_eq!(code(&s), TcpCode::Cl2);
        // Once the echo is over, the next data segment carries the CWR.
        a.data_in(&data(Ecn::ECT1, TcpFlags::CWR));
        let mut s = seg(ACK, MSS as u32);
        a.data_out(&mut s, false, &info(MSS, 6 * MSS));
        a.ack_out(&mut s);
        assert_eq!(code(&s), TcpCode::CWR);
    }

    #[test]
    fn immediate_ack_on_mark_is_optional() {
        let (mut r, _) = connected_pair();
        assert!(!r.data_in(&data(Ecn::CE, 0)));
        let mut a = Codec::new(CodecConfig {
            immediate_ack_on_mark: true,
            ..Default::default()
        })
        .unwrap();
        let mut b = eecn();
        handshake(&mut b, &mut a, 0, 0);
        assert!(a.data_in(&data(Ecn::ECT0, 0)));
        assert!(!a.data_in(&data(Ecn::ECT1, 0)));
    }
}
