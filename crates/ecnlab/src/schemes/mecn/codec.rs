//! MECN feedback: RFC 3168 negotiation, the receiver's level echo in (CWR, ECE) with §3's
//! "remember the first level, move to a higher one before CWR" rule, and the sender's
//! decoding into [`Signal::Level`] at most once per window of data.
//!
//! As the classic-ECN codec (RFC 3168 §6.1.2), the window of a loss reduction counts too: no
//! signal is delivered during loss recovery or before the data outstanding at the last loss
//! reduction is acknowledged, and the first new segment after any reduction (level or loss)
//! carries CWR. New data segments are MECN-capable ([`codepoint::NO_CONGESTION`], ECT(0));
//! retransmissions and segments without payload are Not-ECT.

use super::{codepoint, Escalation, Level};
use crate::cc::Signal;
use crate::packet::Packet;
use crate::tcp::codec::{Codec, TcpInfo};
use crate::tcp::codecs::EcnSetup;
use crate::wire::{Ecn, TcpFlags};
use serde::{Deserialize, Serialize};

/// What a CWR from the sender stops the receiver echoing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CwrClears {
    /// The level echoed first; a higher level seen since keeps being echoed until the next
    /// CWR (§3's "remembers which level was marked first").
    #[default]
    FirstLevel,
    /// Everything (RFC 3168's rule).
    All,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MecnCodecConfig {
    pub cwr_clears: CwrClears,
    /// Whether a higher level echoed within the window of a delivered signal is delivered
    /// too (`TopUp`) or waits for the next window (`Ignore`). Set the controller's
    /// `escalation` to the same value.
    pub escalation: Escalation,
    /// Send retransmissions MECN-capable (RFC 3168 forbids it).
    pub ect_on_retransmissions: bool,
}

pub struct MecnCodec {
    cfg: MecnCodecConfig,
    setup: EcnSetup,
    // ---- data sender
    /// Loss reductions the connection has reported so far.
    seen_loss_reductions: u32,
    /// `snd_nxt` when the last signal was delivered: echoes are ignored until a byte sent
    /// after it is acknowledged.
    recover: Option<u64>,
    /// Level delivered in the current window.
    window_level: Level,
    /// Set CWR on the next new data segment.
    cwr_pending: bool,
    // ---- data receiver
    /// Level currently echoed.
    echo: Level,
    /// Level echoed first since the echo last stopped.
    first: Level,
    /// Signals delivered, by level (index 1 incipient, 2 moderate).
    pub signals: [u64; 3],
}

impl MecnCodec {
    pub fn new(cfg: MecnCodecConfig) -> Self {
        MecnCodec {
            cfg,
            setup: EcnSetup::default(),
            seen_loss_reductions: 0,
            recover: None,
            window_level: Level::None,
            cwr_pending: false,
            echo: Level::None,
            first: Level::None,
            signals: [0; 3],
        }
    }

    /// The level the receiver currently echoes.
    pub fn echo_level(&self) -> Level {
        self.echo
    }

    /// Picks up window reductions the connection made for losses: CWR follows, and their
    /// window counts as the window of a reduction.
    fn note_loss_reductions(&mut self, info: &TcpInfo) {
        if info.loss_reductions != self.seen_loss_reductions {
            self.seen_loss_reductions = info.loss_reductions;
            self.cwr_pending = true;
            self.recover = Some(self.recover.unwrap_or(0).max(info.recovery_point));
            self.window_level = Level::Moderate;
        }
    }
}

impl Codec for MecnCodec {
    fn name(&self) -> &'static str {
        "mecn"
    }

    crate::tcp::codecs::negotiation_via_setup!();

    fn data_out(&mut self, pkt: &mut Packet, retransmission: bool, info: &TcpInfo) {
        if !self.negotiated() {
            pkt.ip.ecn = Ecn::NOT_ECT;
            return;
        }
        self.note_loss_reductions(info);
        if pkt.payload_len == 0 || (retransmission && !self.cfg.ect_on_retransmissions) {
            pkt.ip.ecn = codepoint::NOT_MECN;
        } else {
            pkt.ip.ecn = codepoint::NO_CONGESTION;
        }
        if self.cwr_pending && !retransmission && pkt.payload_len > 0 {
            if let Some(t) = pkt.tcp_mut() {
                t.flags.set(TcpFlags::CWR, true);
                self.cwr_pending = false;
            }
        }
    }

    fn ack_in(&mut self, pkt: &Packet, info: &TcpInfo) -> Option<Signal> {
        if !self.negotiated() {
            return None;
        }
        self.note_loss_reductions(info);
        if pkt.payload_len > 0 || info.in_recovery {
            // On a segment carrying data, CWR is the peer's "window reduced" (§2); during
            // loss recovery the window was already reduced.
            return None;
        }
        let level = Level::from_echo(pkt.tcp()?.flags);
        if level == Level::None {
            return None;
        }
        let new_window = self.recover.is_none_or(|r| info.snd_una > r);
        if new_window {
            self.recover = Some(info.snd_nxt);
            self.window_level = level;
        } else if self.cfg.escalation == Escalation::TopUp && level > self.window_level {
            self.window_level = level;
        } else {
            return None;
        }
        self.cwr_pending = true;
        self.signals[level as usize] += 1;
        Some(Signal::Level(level.signal_value()))
    }

    fn data_in(&mut self, pkt: &Packet) -> bool {
        if !self.negotiated() {
            return false;
        }
        let cwr = pkt.payload_len > 0 && pkt.tcp().is_some_and(|t| t.flags.has(TcpFlags::CWR));
        if cwr {
            match self.cfg.cwr_clears {
                CwrClears::FirstLevel if self.echo > self.first => self.first = self.echo,
                _ => {
                    self.echo = Level::None;
                    self.first = Level::None;
                }
            }
        }
        // As in RFC 3168, the mark of the CWR segment itself counts after the reset.
        let seen = Level::from_ecn(pkt.ip.ecn);
        if seen > self.echo {
            if self.echo == Level::None {
                self.first = seen;
            }
            self.echo = seen;
        }
        false
    }

    fn ack_out(&mut self, pkt: &mut Packet) {
        if !self.negotiated() {
            return;
        }
        if let Some(t) = pkt.tcp_mut() {
            self.echo.write_echo(&mut t.flags);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::codec::Handshake;
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

    /// Client (data sender) and server (data receiver) after the handshake.
    fn pair(cfg: MecnCodecConfig) -> (MecnCodec, MecnCodec) {
        let (mut a, mut b) = (MecnCodec::new(cfg.clone()), MecnCodec::new(cfg));
        let mut syn = seg(0, Ecn::NOT_ECT, TcpFlags::SYN);
        a.handshake_out(Handshake::Syn, &mut syn);
        b.handshake_in(Handshake::Syn, &syn);
        let mut synack = seg(0, Ecn::NOT_ECT, TcpFlags::SYN | TcpFlags::ACK);
        b.handshake_out(Handshake::SynAck, &mut synack);
        a.handshake_in(Handshake::SynAck, &synack);
        assert!(!synack.tcp().unwrap().flags.has(TcpFlags::CWR));
        (a, b)
    }

    /// The receiver takes a data segment with codepoint `ecn` (and CWR if asked) and returns
    /// the level its next ACK echoes.
    fn deliver(rx: &mut MecnCodec, ecn: Ecn, cwr: bool) -> Level {
        let flags = TcpFlags::ACK | if cwr { TcpFlags::CWR } else { 0 };
        rx.data_in(&seg(1000, ecn, flags));
        let mut ack = seg(0, Ecn::NOT_ECT, TcpFlags::ACK);
        rx.ack_out(&mut ack);
        Level::from_echo(ack.tcp().unwrap().flags)
    }

    use codepoint::{INCIPIENT as INC, MODERATE as MOD, NO_CONGESTION as OK};
    use Level::{Incipient as L1, Moderate as L2, None as L0};

    #[test]
    fn handshake_is_rfc3168_and_falls_back() {
        let (a, b) = pair(MecnCodecConfig::default());
        assert!(a.negotiated() && b.negotiated());
        // A peer that does not ask for ECN: no ECE in the SYN-ACK, both sides Not-ECT.
        let mut b = MecnCodec::new(MecnCodecConfig::default());
        b.handshake_in(Handshake::Syn, &seg(0, Ecn::NOT_ECT, TcpFlags::SYN));
        let mut synack = seg(0, Ecn::NOT_ECT, TcpFlags::SYN | TcpFlags::ACK);
        b.handshake_out(Handshake::SynAck, &mut synack);
        assert!(!synack.tcp().unwrap().flags.has(TcpFlags::ECE));
        let mut a = MecnCodec::new(MecnCodecConfig::default());
        a.handshake_in(Handshake::SynAck, &synack);
        assert!(!a.negotiated() && !b.negotiated());
        let mut d = seg(1000, Ecn::ECT1, TcpFlags::ACK);
        a.data_out(&mut d, false, &TcpInfo::default());
        assert_eq!(d.ip.ecn, Ecn::NOT_ECT);
    }

    #[test]
    fn receiver_echo_sequence_first_level_then_higher_before_cwr() {
        let (_, mut rx) = pair(MecnCodecConfig::default());
        // Unmarked, then incipient: the echo is sticky until CWR.
        let seq = [
            (OK, false, L0),
            (INC, false, L1),
            (OK, false, L1),
            (OK, false, L1),
            (OK, true, L0), // CWR stops the echo
            (OK, false, L0),
            // Incipient first, then moderate before CWR: switch to moderate.
            (INC, false, L1),
            (MOD, false, L2),
            (INC, false, L2), // never back down before CWR
            // The CWR answers the first level (incipient); moderate is still echoed.
            (OK, true, L2),
            (OK, false, L2),
            // The next CWR answers moderate.
            (OK, true, L0),
            // A CWR segment that is itself marked starts a new echo.
            (INC, false, L1),
            (MOD, true, L2),
            (OK, true, L0),
            // Not-ECT segments (retransmissions) carry no level.
            (Ecn::NOT_ECT, false, L0),
        ];
        for (i, &(ecn, cwr, want)) in seq.iter().enumerate() {
            assert_eq!(deliver(&mut rx, ecn, cwr), want, "step {i}");
        }
    }

    #[test]
    fn receiver_cwr_clears_all_alternative() {
        let (_, mut rx) = pair(MecnCodecConfig {
            cwr_clears: CwrClears::All,
            ..Default::default()
        });
        assert_eq!(deliver(&mut rx, INC, false), L1);
        assert_eq!(deliver(&mut rx, MOD, false), L2);
        assert_eq!(deliver(&mut rx, OK, true), L0);
    }

    fn info(una: u64, nxt: u64) -> TcpInfo {
        TcpInfo {
            snd_una: una,
            snd_nxt: nxt,
            acked_bytes: 1000,
            ..Default::default()
        }
    }

    fn ack(level: Level) -> Packet {
        let mut p = seg(0, Ecn::NOT_ECT, TcpFlags::ACK);
        level.write_echo(&mut p.tcp_mut().unwrap().flags);
        p
    }

    fn cwr_of(tx: &mut MecnCodec, retx: bool) -> (bool, Ecn) {
        let mut d = seg(1000, Ecn::NOT_ECT, TcpFlags::ACK);
        tx.data_out(&mut d, retx, &TcpInfo::default());
        (d.tcp().unwrap().flags.has(TcpFlags::CWR), d.ip.ecn)
    }

    #[test]
    fn sender_decodes_once_per_window_and_sets_cwr() {
        let (mut tx, _) = pair(MecnCodecConfig::default());
        assert_eq!(cwr_of(&mut tx, false), (false, OK));
        assert_eq!(tx.ack_in(&ack(L0), &info(1000, 20_000)), None);
        assert_eq!(
            tx.ack_in(&ack(L1), &info(2000, 20_000)),
            Some(Signal::Level(1))
        );
        // The rest of the window: nothing more, even a higher level.
        assert_eq!(tx.ack_in(&ack(L1), &info(3000, 21_000)), None);
        assert_eq!(tx.ack_in(&ack(L2), &info(20_000, 22_000)), None);
        // CWR on the next new segment only; retransmissions go out Not-ECT without it.
        assert_eq!(cwr_of(&mut tx, true), (false, Ecn::NOT_ECT));
        assert_eq!(cwr_of(&mut tx, false), (true, OK));
        assert_eq!(cwr_of(&mut tx, false), (false, OK));
        // A byte sent after the signal is acknowledged: the next window.
        assert_eq!(
            tx.ack_in(&ack(L2), &info(20_001, 30_000)),
            Some(Signal::Level(2))
        );
        // Echo bits on a segment that carries data are the peer's CWR, not an echo.
        let mut d = seg(500, Ecn::NOT_ECT, TcpFlags::ACK);
        L2.write_echo(&mut d.tcp_mut().unwrap().flags);
        assert_eq!(tx.ack_in(&d, &info(40_000, 50_000)), None);
        assert_eq!(tx.signals, [0, 1, 1]);
    }

    #[test]
    fn sender_escalation_top_up_delivers_a_higher_level_once() {
        let (mut tx, _) = pair(MecnCodecConfig {
            escalation: Escalation::TopUp,
            ..Default::default()
        });
        assert_eq!(
            tx.ack_in(&ack(L1), &info(1000, 20_000)),
            Some(Signal::Level(1))
        );
        assert!(cwr_of(&mut tx, false).0);
        assert_eq!(tx.ack_in(&ack(L1), &info(2000, 20_000)), None);
        assert_eq!(
            tx.ack_in(&ack(L2), &info(3000, 21_000)),
            Some(Signal::Level(2))
        );
        assert!(cwr_of(&mut tx, false).0);
        assert_eq!(tx.ack_in(&ack(L2), &info(4000, 21_000)), None);
    }

    #[test]
    fn loss_reductions_share_the_window_and_send_cwr() {
        let (mut tx, _) = pair(MecnCodecConfig::default());
        // During loss recovery echoes are not delivered (the window was already reduced).
        let mut i = info(1000, 20_000);
        i.in_recovery = true;
        assert_eq!(tx.ack_in(&ack(L2), &i), None);
        // The connection reports a loss reduction with recovery point 20 000: CWR on the next
        // new segment, and no level signal until data beyond the recovery point is acked.
        let mut i = info(5000, 25_000);
        i.loss_reductions = 1;
        i.recovery_point = 20_000;
        assert_eq!(tx.ack_in(&ack(L1), &i), None);
        assert_eq!(cwr_of(&mut tx, false), (true, OK));
        i.snd_una = 20_000;
        assert_eq!(tx.ack_in(&ack(L1), &i), None);
        i.snd_una = 20_001;
        assert_eq!(tx.ack_in(&ack(L1), &i), Some(Signal::Level(1)));
        // Segments without payload (pure ACKs from this side) are Not-ECT.
        let mut p = seg(0, Ecn::ECT1, TcpFlags::ACK);
        tx.data_out(&mut p, false, &TcpInfo::default());
        assert_eq!(p.ip.ecn, Ecn::NOT_ECT);
    }

    /// Sender and receiver with ten segments in flight and a router that marks segment 1
    /// incipient and segment 3 moderate: the receiver escalates before the sender's CWR
    /// arrives. With the default reading the CWR only answers the first level, so the
    /// moderate level reaches the sender in the next window; with `All` it is lost.
    fn run_window(cwr_clears: CwrClears) -> (Vec<(usize, Signal)>, Level) {
        let (mut tx, mut rx) = pair(MecnCodecConfig {
            cwr_clears,
            ..Default::default()
        });
        let mut in_flight = std::collections::VecDeque::new();
        let mut nxt = 0u64;
        let send =
            |tx: &mut MecnCodec, q: &mut std::collections::VecDeque<Packet>, nxt: &mut u64| {
                let mut d = seg(1000, Ecn::NOT_ECT, TcpFlags::ACK);
                tx.data_out(&mut d, false, &TcpInfo::default());
                *nxt += 1000;
                q.push_back(d);
            };
        for _ in 0..10 {
            send(&mut tx, &mut in_flight, &mut nxt);
        }
        let mut una = 0u64;
        let mut signals = Vec::new();
        for step in 0..25 {
            let mut d = in_flight.pop_front().unwrap();
            let mark = match step {
                1 => INC,
                3 => MOD,
                _ => OK,
            };
            d.ip.ecn = Level::from_ecn(d.ip.ecn).max(Level::from_ecn(mark)).ecn();
            rx.data_in(&d);
            let mut a = seg(0, Ecn::NOT_ECT, TcpFlags::ACK);
            rx.ack_out(&mut a);
            una += 1000;
            if let Some(s) = tx.ack_in(&a, &info(una, nxt)) {
                signals.push((step, s));
            }
            send(&mut tx, &mut in_flight, &mut nxt);
        }
        (signals, rx.echo_level())
    }

    #[test]
    fn end_to_end_escalation_before_cwr() {
        let (signals, echo) = run_window(CwrClears::FirstLevel);
        // Step 1: incipient. Step 11: the CWR sent at step 1 arrives; moderate is still
        // echoed, and that ACK acknowledges a segment sent after the first signal.
        assert_eq!(signals, vec![(1, Signal::Level(1)), (11, Signal::Level(2))]);
        // The CWR sent at step 11 arrived at step 21 and stopped the echo.
        assert_eq!(echo, L0);
        let (signals, _) = run_window(CwrClears::All);
        assert_eq!(signals, vec![(1, Signal::Level(1))]);
    }
}
