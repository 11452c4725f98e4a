//! The receiving half's hooks: a data segment arrives (Linux's `tcp_data_queue`,
//! `tcp_event_data_recv`), when its ACK goes — at once, delayed, or held by SACK compression
//! (`__tcp_ack_snd_check`, `tcp_send_delayed_ack`, the quick-ACK mode) — and the window we
//! advertise (`tcp_select_window`). The reassembly and its counters are [`Receiver`]'s
//! (`crate::tcp::recv`), the buffer autotuning [`RcvAutotune`]'s; this file decides with
//! them.
//!
//! Readings: immediate ACK for out-of-order, duplicate or gap-filling segments, for a FIN,
//! and when the codec asks; otherwise every `delack_segments` in-order segments or after
//! `delack_timeout_s` (RFC 5681 §4.2); with `quickack`, Linux's quick-ACK mode (in `on_data`). With
//! SACK and delayed ACKs, Linux's SACK compression (`sack_compress_max`): of the
//! out-of-order segments at one `rcv_nxt`, the first three are acknowledged at once and the
//! rest by one ACK after min(1 ms, RTT/20), or at once when that many are withheld.
//!
//! [`Receiver`]: crate::tcp::recv::Receiver
//! [`RcvAutotune`]: crate::tcp::rcvbuf::RcvAutotune

use super::TcpConn;
use crate::net::Ctx;
use crate::packet::Packet;
use crate::tcp::recv::Arrival;
use crate::tcp::seq::unwrap32;
use crate::time::{Time, MS, NEVER, NS, US};
use crate::wire::{TcpFlags, TcpRepr};

/// Linux's TCP_MAX_QUICKACKS.
const MAX_QUICKACKS: u32 = 16;

impl TcpConn {
    pub(super) fn on_data(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        let now = ctx.now;
        let s = unwrap32(self.rcv.rcv_nxt, t.seq.wrapping_sub(self.irs));
        let fin = t.flags.has(TcpFlags::FIN);
        let e = s + pkt.payload_len as u64 + fin as u64;
        if fin {
            self.rcv.fin_seq = Some(s + pkt.payload_len as u64);
        }
        // The codec is asked only when an ACK is owed (its answer changes nothing otherwise).
        if pkt.payload_len > 0 && self.rcv.unacked_segs > 0 && self.codec.flush_before(pkt) {
            self.send_ack(ctx);
        }
        if pkt.payload_len > 0 {
            if let Some(h) = self.stats.owd_ns() {
                h.record(now.saturating_sub(pkt.meta.sent_at) / NS);
            }
        }
        let mut immediate = pkt.payload_len > 0 && self.codec.data_in(pkt);
        let delivered_before = self.rcv.data_delivered();
        let had_fin = self.rcv.fin_received();
        let quickack = self.cfg.quickack && self.cfg.delayed_ack && pkt.payload_len > 0;
        let mut compress_until = None;
        match self.rcv.receive(s, e) {
            Arrival::InOrder { filled_gap } => {
                immediate |= filled_gap;
                self.rcv.unacked_segs += 1;
                if quickack {
                    // Linux's tcp_event_data_recv: the first data segment, and the first
                    // after a silence longer than the RTO, start the quick-ACK mode.
                    let last = self.rcv.last_data_at;
                    if last == NEVER || now - last > self.rtt.rto() {
                        self.rcv.enter_quickack(self.quickacks());
                    }
                    self.rcv.last_data_at = now;
                    immediate |= self.rcv.quick > 0;
                }
            }
            Arrival::OutOfOrder => {
                if self.sack_ok && !self.rcv.out_of_order_ack_now(self.cfg.sack_compress_max) {
                    compress_until = Some(now + self.sack_compress_delay());
                } else {
                    immediate = true;
                }
                if let Some(a) = self.autotune.as_mut() {
                    a.on_out_of_order(self.mss, self.rcv.ooo_span(), self.sack_ok);
                }
            }
            Arrival::Duplicate => {
                immediate = true;
                // Linux's tcp_data_queue: a segment wholly below rcv_nxt means our ACK was
                // lost or late; the following ACKs go out at once too.
                if quickack {
                    self.rcv.enter_quickack(MAX_QUICKACKS);
                }
            }
        }
        if let Some(a) = self.autotune.as_mut() {
            let echo = match (self.ts_ok, t.timestamp) {
                (true, Some((_, tsecr))) => {
                    let sent = tsecr.wrapping_sub(self.ts_offset) as Time * US;
                    (sent <= now).then_some((tsecr, sent))
                }
                _ => None,
            };
            a.on_segment(now, pkt.payload_len as u64, self.mss, echo);
        }
        if self.rcv.data_delivered() > delivered_before {
            self.stats.last_delivery = now;
            if let Some(a) = self.autotune.as_mut() {
                a.on_delivered(now, self.rcv.data_delivered(), self.mss, self.ts_ok);
            }
        }
        if self.rcv.fin_received() && !had_fin {
            immediate = true;
            // The application reads the end of the stream and closes its side.
            self.app_closed = true;
        }
        if immediate || !self.cfg.delayed_ack || self.rcv.unacked_segs >= self.cfg.delack_segments {
            self.rcv.ack_now = true;
        } else if let Some(t) = compress_until {
            self.rcv.delack_deadline = self.rcv.delack_deadline.min(t);
        } else if self.rcv.delack_deadline == NEVER {
            self.rcv.delack_deadline = now + self.cfg.delack_timeout();
        }
    }

    /// The receive window we advertise, in bytes. With autotuning, Linux's
    /// `__tcp_select_window`: what the buffer has free once the data held out of order is
    /// charged to it, never moving the right edge of an earlier advertisement back.
    pub(super) fn rcv_window(&self) -> u64 {
        match self.autotune.as_ref() {
            None => self.cfg.rcv_buf,
            Some(a) => {
                let free = a.window_holding(self.rcv.ooo_bytes()).min(self.cfg.rcv_buf);
                free.max(a.right_edge.saturating_sub(self.rcv.rcv_nxt))
            }
        }
    }

    /// `p`, carrying `rcv_nxt` and our window, is going out.
    pub(super) fn on_ack_sent(&mut self, p: &Packet) {
        self.rcv.on_ack_sent();
        if let (Some(a), Some(t)) = (self.autotune.as_mut(), p.tcp()) {
            // A SYN's window is never scaled (RFC 7323 §2.2).
            let shift = if t.flags.has(TcpFlags::SYN) {
                0
            } else {
                self.rcv_wscale
            };
            let advertised = (t.window as u64) << shift;
            a.right_edge = a.right_edge.max(self.rcv.rcv_nxt + advertised);
        }
    }

    /// How long SACK compression may hold an ACK: 5 % of the RTT (the receiver's estimate,
    /// or SRTT if smaller or there is none), at most 1 ms (Linux's `tcp_comp_sack_delay_ns`).
    fn sack_compress_delay(&self) -> Time {
        let mut rtt = self.autotune.as_ref().map_or(0, |a| a.rtt());
        if self.rtt.has_sample() && (rtt == 0 || self.rtt.srtt() < rtt) {
            rtt = self.rtt.srtt();
        }
        if rtt == 0 {
            return MS;
        }
        (rtt / 20).min(MS)
    }

    /// Linux's `tcp_incr_quickack`: half the advertised window in segments (2 if that is
    /// none), at most 16.
    fn quickacks(&self) -> u32 {
        match (self.rcv_window() / (2 * self.mss.max(1))).min(MAX_QUICKACKS as u64) as u32 {
            0 => 2,
            n => n,
        }
    }

    pub(super) fn send_ack(&mut self, ctx: &mut Ctx) {
        let p = self.segment_packet(ctx, TcpFlags::ACK, self.snd_max_seq(), 0);
        self.codec.ack_out(p);
        self.on_ack_sent(p);
    }

    /// Sends the ACK the segments or timers of this event decided on, if any.
    pub(super) fn flush_ack(&mut self, ctx: &mut Ctx) {
        if self.rcv.ack_now {
            self.send_ack(ctx);
        }
    }
}
