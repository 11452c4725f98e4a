//! The three-way handshake: opening actively (Linux's `tcp_connect`) or passively
//! (`tcp_conn_request`), the options it negotiates (MSS, window scaling, SACK-permitted,
//! timestamps; the codec's own negotiation rides on the same segments), its retransmission
//! with back-off until `syn_retries` (`tcp_retransmit_timer` on a SYN), and the move to
//! ESTABLISHED with the first RTT sample and the initial window (`tcp_finish_connect`,
//! `tcp_init_transfer`). It owns the opening's timer and retry count ([`Opening`]).
//!
//! Readings: the SYN / SYN-ACK exchange gives the first RTT sample unless it was
//! retransmitted (then only a timestamp echo gives one); after a handshake retransmission
//! without a sample the RTO is at least 3 s (RFC 6298 §5.7), and with `syn_loss_iw1` the
//! initial window is one segment (RFC 5681 §3.1).

use super::{State, TcpConn};
use crate::net::Ctx;
use crate::packet::Packet;
use crate::tcp::codec::Handshake;
use crate::tcp::rcvbuf::RcvAutotune;
use crate::time::{Time, NEVER, SEC, US};
use crate::wire::{TcpFlags, TcpRepr};

const DEFAULT_PEER_MSS: u64 = 536;
/// RFC 6298 §5.7: RTO after a handshake retransmission without an RTT sample.
const RTO_AFTER_SYN_LOSS: Time = 3 * SEC;

/// The handshake's retransmission timer and what it has sent.
pub(super) struct Opening {
    deadline: Time,
    sent_at: Time,
    retx: u32,
}

impl Default for Opening {
    fn default() -> Self {
        Opening {
            deadline: NEVER,
            sent_at: 0,
            retx: 0,
        }
    }
}

impl Opening {
    pub(super) fn deadline(&self) -> Time {
        self.deadline
    }
}

impl TcpConn {
    /// The active opener's start time has come.
    pub(super) fn connect(&mut self, ctx: &mut Ctx) {
        self.open_at = NEVER;
        self.state = State::SynSent;
        self.send_syn(ctx);
    }

    fn send_syn(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        let p = self.segment_packet(ctx, TcpFlags::SYN, 0, 0);
        let t = p.tcp_mut().expect("a TCP segment");
        t.mss = Some(self.cfg.mss.min(u16::MAX as u32) as u16);
        if self.cfg.window_scaling {
            t.window_scale = Some(self.cfg.wscale_shift());
        }
        t.sack_permitted = self.cfg.sack;
        if self.cfg.timestamps {
            t.timestamp = Some((self.ts_now(now), 0));
        }
        p.fix_lengths();
        self.codec.handshake_out(Handshake::Syn, p);
        self.opening.sent_at = now;
        self.opening.deadline = now + self.rtt.rto();
    }

    fn send_syn_ack(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        let p = self.segment_packet(ctx, TcpFlags::SYN | TcpFlags::ACK, 0, 0);
        let t = p.tcp_mut().expect("a TCP segment");
        t.mss = Some(self.cfg.mss.min(u16::MAX as u32) as u16);
        if self.wscale_agreed() {
            t.window_scale = Some(self.rcv_wscale);
        }
        t.sack_permitted = self.sack_ok;
        if !self.ts_ok {
            t.timestamp = None;
        }
        p.fix_lengths();
        self.codec.handshake_out(Handshake::SynAck, p);
        self.opening.sent_at = now;
        self.opening.deadline = now + self.rtt.rto();
        self.on_ack_sent(p);
    }

    fn wscale_agreed(&self) -> bool {
        self.cfg.window_scaling && self.peer_offered_wscale
    }

    /// Passive side: a SYN arrived.
    pub(super) fn accept_syn(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        self.irs = t.seq;
        self.rcv.rcv_nxt = 1;
        self.rcv.last_ack_sent = 1;
        self.set_mss((self.cfg.mss as u64).min(t.mss.map_or(DEFAULT_PEER_MSS, |m| m as u64)));
        self.sack_ok = self.cfg.sack && t.sack_permitted;
        self.ts_ok = self.cfg.timestamps && t.timestamp.is_some();
        self.peer_offered_wscale = t.window_scale.is_some();
        if self.wscale_agreed() {
            self.snd_wscale = t.window_scale.unwrap_or(0).min(14);
            self.rcv_wscale = self.cfg.wscale_shift();
        }
        if let (true, Some((tsval, _))) = (self.ts_ok, t.timestamp) {
            self.rcv.ts_recent = tsval;
        }
        self.snd_wnd = t.window as u64;
        self.codec.handshake_in(Handshake::Syn, pkt);
        self.state = State::SynReceived;
        self.send_syn_ack(ctx);
    }

    /// Passive side: the SYN came again — our SYN-ACK was lost; answer it.
    pub(super) fn on_syn_again(&mut self, ctx: &mut Ctx, pkt: &Packet) {
        self.codec.handshake_in(Handshake::Syn, pkt);
        self.opening.retx += 1;
        self.send_syn_ack(ctx);
    }

    /// Active side: the SYN-ACK arrived.
    pub(super) fn on_syn_ack(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        self.irs = t.seq;
        self.rcv.rcv_nxt = 1;
        self.set_mss((self.cfg.mss as u64).min(t.mss.map_or(DEFAULT_PEER_MSS, |m| m as u64)));
        self.sack_ok = self.cfg.sack && t.sack_permitted;
        self.ts_ok = self.cfg.timestamps && t.timestamp.is_some();
        self.peer_offered_wscale = t.window_scale.is_some();
        if self.wscale_agreed() {
            self.snd_wscale = t.window_scale.unwrap_or(0).min(14);
            self.rcv_wscale = self.cfg.wscale_shift();
        }
        self.snd_wnd = t.window as u64;
        if let (true, Some((tsval, tsecr))) = (self.ts_ok, t.timestamp) {
            self.rcv.ts_recent = tsval;
            self.rtt_sample(self.ts_now(ctx.now).wrapping_sub(tsecr) as Time * US);
        } else if self.opening.retx == 0 {
            self.rtt_sample(ctx.now - self.opening.sent_at);
        }
        self.codec.handshake_in(Handshake::SynAck, pkt);
        self.establish(ctx.now);
        self.send_handshake_ack(ctx);
    }

    pub(super) fn send_handshake_ack(&mut self, ctx: &mut Ctx) {
        let p = self.segment_packet(ctx, TcpFlags::ACK, self.snd_max_seq(), 0);
        self.codec.handshake_out(Handshake::Ack, p);
        self.on_ack_sent(p);
    }

    /// Passive side: the ACK of our SYN-ACK arrived (possibly on a data segment).
    pub(super) fn on_handshake_ack(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        if let (true, Some((_, tsecr))) = (self.ts_ok, t.timestamp) {
            self.rtt_sample(self.ts_now(ctx.now).wrapping_sub(tsecr) as Time * US);
        } else if self.opening.retx == 0 {
            self.rtt_sample(ctx.now - self.opening.sent_at);
        }
        self.snd_wnd = (t.window as u64) << self.snd_wscale;
        self.codec.handshake_in(Handshake::Ack, pkt);
        self.establish(ctx.now);
    }

    fn establish(&mut self, now: Time) {
        self.state = State::Established;
        if self.cfg.rcv_autotune {
            // Boxed: only connections with autotuning pay for its state.
            self.autotune = Some(Box::new(RcvAutotune::new(
                self.cfg.rcv_buf_initial,
                self.cfg.rcv_buf,
                self.cfg.rcv_space_ratio,
                self.mss,
                now,
            )));
        }
        self.opening.deadline = NEVER;
        if self.opening.retx > 0 && !self.rtt.has_sample() {
            self.rtt.raise_to(RTO_AFTER_SYN_LOSS);
        }
        let mut iw = self
            .codec
            .initial_window()
            .unwrap_or(self.cfg.initial_window)
            .max(1);
        if self.opening.retx > 0 && self.cfg.syn_loss_iw1 {
            iw = 1;
        }
        if let Some(cc) = self.cc.as_mut() {
            cc.set_initial_window(iw as u64 * self.mss);
            self.cc_window = cc.window();
            self.stats.init_cwnd = iw;
        }
        // No data has been sent yet: the initial state holds this already.
        if let Some(s) = self.tx_made() {
            s.snd_nxt = 0;
            s.recovery.reset_high_rxt();
        }
    }

    /// The handshake's timer fired: send the SYN (or SYN-ACK) again, or give up.
    pub(super) fn handshake_timeout(&mut self, ctx: &mut Ctx) {
        self.opening.deadline = NEVER;
        if self.opening.retx >= self.cfg.syn_retries {
            self.state = State::Failed;
            if let Some(s) = self.tx_made() {
                s.timers.rto = NEVER;
            }
            return;
        }
        self.opening.retx += 1;
        self.rtt.backoff();
        match self.state {
            State::SynSent => self.send_syn(ctx),
            State::SynReceived => self.send_syn_ack(ctx),
            _ => {}
        }
    }
}
