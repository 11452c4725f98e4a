//! The send path (Linux's `tcp_output.c`): which segment goes next under the window and the
//! recovery state's rules (`tcp_write_xmit`, `tcp_xmit_retransmit_queue`), pacing
//! (`tcp_update_skb_after_send`), TSO deferral (`tcp_tso_should_defer`, `tcp_tso_autosize`),
//! whether the window is in use (`tcp_cwnd_validate`, `tcp_is_cwnd_limited`), and one
//! segment's headers and transmission (`tcp_transmit_skb`). It owns the pacing schedule
//! ([`Pacing`]) and the window's use in the current round ([`CwndUse`]).
//!
//! Readings:
//! - Sending: a full segment goes out when `flight + segment ≤ window` (bytes), as Linux's
//!   packet-counted window does; one segment is always allowed when nothing is in flight.
//! - Pacing (the controller's rate, or `pace_cwnd`'s), as Linux's `tcp_update_skb_after_send`:
//!   a segment delays the next by its payload bytes at the rate — the rates are in payload
//!   bytes (delivery rates, cwnd/SRTT), and the queued segment Linux paces has no headers
//!   yet — less up to half of that for the time the sender fell behind its schedule (after
//!   a wait for its window, a sender's second segment follows the first by half a gap).
//! - TSO deferral (`tso_defer`, Linux's `tcp_tso_should_defer`; `TcpConn::tso_defers`):
//!   new data goes out a frame at a time (about 1 ms at Linux's pacing rate); with room for
//!   less than a frame the sender waits for the next ACK if it is due within
//!   min(SRTT/2, 1 ms) and the last frame left within 1 ms. Retransmissions never wait.
//! - Whether the window is in use (Linux's `tcp_cwnd_validate` / `tcp_is_cwnd_limited`):
//!   after each sending opportunity the connection notes whether cwnd is what stopped it,
//!   kept for the round once true, and the round's largest flight; `AckEvent::cwnd_unused`
//!   tells the controller, and the baselines do not grow a window the receiver's window or
//!   the application held back (an access point that lowers rwnd sees Linux's sender).

use super::{Recovery, State, TcpConn};
use crate::net::Ctx;
use crate::packet::{Meta, Packet, L4};
use crate::tcp::scoreboard::{Seg, RTX_IN_FLIGHT};
use crate::time::{from_secs, to_secs, Time, MS, NEVER, US};
use crate::wire::tcp::MAX_SACK_BLOCKS;
use crate::wire::{Ecn, Ipv4Repr, TcpFlags, TcpRepr};

/// The pacing schedule.
#[derive(Default)]
pub(super) struct Pacing {
    /// When the next segment may go at the pacing rate.
    next_send_at: Time,
    /// The sender stopped for the pacing schedule (its timer is the schedule's).
    wait: bool,
    /// When the last data segment was sent (Linux's `tcp_wstamp_ns`, for TSO deferral).
    last_xmit: Time,
}

impl Pacing {
    pub(super) const fn new() -> Self {
        Pacing {
            next_send_at: 0,
            wait: false,
            last_xmit: 0,
        }
    }

    /// When the sender waits for the schedule, the time it may go on.
    pub(super) fn wakeup(&self) -> Option<Time> {
        self.wait.then_some(self.next_send_at)
    }

    /// A timeout's retransmission goes at once.
    pub(super) fn restart(&mut self, now: Time) {
        self.next_send_at = now;
    }
}

/// Linux's `tcp_cwnd_validate` state: the window was full in the current round
/// (`is_cwnd_limited`), the most data in flight in it, and where the round ends.
#[derive(Default)]
pub(super) struct CwndUse {
    limited: bool,
    max_flight: u64,
    round_end: u64,
}

impl CwndUse {
    pub(super) const fn new() -> Self {
        CwndUse {
            limited: false,
            max_flight: 0,
            round_end: 0,
        }
    }
}

impl TcpConn {
    /// An outgoing segment of `payload` bytes starting at `seq_rel`: IP and TCP headers with
    /// the ACK fields, window and options, and the simulator's metadata, built where it is
    /// sent ([`Ctx::send_in_place`]: the headers are not assembled apart and copied in). The
    /// caller finishes it before sending anything else.
    pub(super) fn segment_packet<'c>(
        &self,
        ctx: &'c mut Ctx,
        flags: u16,
        seq_rel: u64,
        payload: u32,
    ) -> &'c mut Packet {
        let now = ctx.now;
        let ident = ctx.next_ip_id(
            self.remote_addr,
            (self.local_port as u32) << 16 | self.remote_port as u32,
        );
        let p = ctx.send_in_place();
        *p = Packet {
            ip: Ipv4Repr {
                src: self.local_addr,
                dst: self.remote_addr,
                ecn: Ecn::NOT_ECT,
                ident,
                ttl: 64,
                ..Default::default()
            },
            l4: L4::Tcp(TcpRepr {
                src_port: self.local_port,
                dst_port: self.remote_port,
                seq: self.iss.wrapping_add(seq_rel as u32),
                flags: TcpFlags(flags),
                ..Default::default()
            }),
            payload_len: payload,
            meta: Meta {
                dst_ep: self.peer_ep,
                flow: self.flow,
                sent_at: now,
                rtt_hint_us: (self.rtt.srtt() / US).min(u32::MAX as u64) as u32,
                ..Meta::default()
            },
        };
        if let L4::Tcp(t) = &mut p.l4 {
            self.fill_header(now, flags, t);
        }
        p.fix_lengths();
        p
    }

    /// The TCP header's ACK fields, window and options.
    fn fill_header(&self, now: Time, flags: u16, t: &mut TcpRepr) {
        if flags & TcpFlags::ACK != 0 {
            t.ack = self.irs.wrapping_add(self.rcv.rcv_nxt as u32);
        }
        t.window = if flags & TcpFlags::SYN != 0 {
            self.cfg.rcv_buf.min(u16::MAX as u64) as u16
        } else {
            (self.rcv_window() >> self.rcv_wscale).min(u16::MAX as u64) as u16
        };
        if self.ts_ok {
            t.timestamp = Some((self.ts_now(now), self.rcv.ts_recent));
        }
        let dsack = self.rcv.dsack.filter(|_| self.cfg.dsack);
        if self.sack_ok && (self.rcv.has_ooo() || dsack.is_some()) && flags & TcpFlags::SYN == 0 {
            let max = if self.ts_ok { 3 } else { MAX_SACK_BLOCKS };
            let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
            let mut n = 0;
            if let Some(d) = dsack {
                blocks[0] = d;
                n = 1;
            }
            n += self.rcv.sack_blocks(max - n, &mut blocks[n..]);
            for (i, &(l, r)) in blocks[..n].iter().enumerate() {
                t.sack[i] = (
                    self.irs.wrapping_add(l as u32),
                    self.irs.wrapping_add(r as u32),
                );
            }
            t.sack_count = n as u8;
        }
    }

    fn pacing_rate(&self) -> Option<f64> {
        let cc = self.cc.as_ref()?;
        if let Some(r) = cc.pacing_rate() {
            return (r > 0.0).then_some(r);
        }
        if self.cfg.pace_cwnd && self.rtt.has_sample() {
            let window = self.controller_window();
            let ratio = if window < cc.ssthresh() {
                self.cfg.pacing_ss_ratio
            } else {
                self.cfg.pacing_ca_ratio
            };
            return Some(ratio * window as f64 / to_secs(self.rtt.srtt()));
        }
        None
    }

    /// The next new segment, if the application, the FIN rule and the peer's window allow.
    pub(super) fn new_segment(&self) -> Option<u64> {
        let k = self.tx().sb.end();
        if k >= self.n_segs() || (self.seg_has_fin(k) && !self.app_closed) {
            return None;
        }
        let start = self.seg_start(k);
        let end = start + self.seg_payload(k) as u64;
        // `start` is SND.MAX: segment `k` is the first not yet sent.
        if end > self.snd_una + self.snd_wnd && self.snd_una < start {
            return None;
        }
        Some(k)
    }

    /// Which segment to send next (number, is a retransmission), if any.
    fn next_segment(&self) -> Option<(u64, bool)> {
        let cwnd = self.cwnd();
        let s = self.tx();
        match s.recovery.state() {
            Recovery::Fast | Recovery::Timeout if self.sack_ok => {
                // RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS, NextSeg.
                let pipe = s.sb.pipe();
                if pipe > 0 && pipe + self.mss > cwnd {
                    return None;
                }
                if s.recovery.frto_new_data() {
                    return self.new_segment().map(|k| (k, false));
                }
                if let Some(k) = s.sb.next_resend() {
                    return Some((k, true));
                }
                if let Some(k) = self.new_segment() {
                    return Some((k, false));
                }
                s.sb.first_unsacked(s.recovery.rxt_next(), s.sb.high_sacked_end())
                    .filter(|&k| !s.sb.get(k).has(RTX_IN_FLIGHT))
                    .map(|k| (k, true))
            }
            Recovery::Fast => {
                let k = self.new_segment()?;
                let wnd = (cwnd as i64 + s.recovery.inflation()).max(self.mss as i64) as u64;
                (self.flight_size() + self.seg_len(k) <= wnd).then_some((k, false))
            }
            _ if s.snd_nxt < s.sb.end() => {
                let k = s.snd_nxt;
                let flight = self.seg_start(k).saturating_sub(self.snd_una);
                (flight == 0 || flight + self.seg_len(k) <= cwnd).then_some((k, true))
            }
            state => {
                let k = self.new_segment()?;
                let flight = self.flight_size();
                let allowance = if self.cfg.limited_transmit && state == Recovery::Open {
                    s.recovery.dupacks().min(2) as u64 * self.mss
                } else {
                    0
                };
                (flight == 0 || flight + self.seg_len(k) <= cwnd.saturating_add(allowance))
                    .then_some((k, false))
            }
        }
    }

    /// A sending opportunity: segments go while the window, pacing and TSO deferral allow.
    pub(super) fn try_send(&mut self, ctx: &mut Ctx) {
        if self.state != State::Established {
            return;
        }
        // A transfer's receiver before its application closes (at every data segment it
        // gets): its only segment is the FIN, held until then, it has no window to validate,
        // and without a sending half it is not pacing, so nothing below would change.
        if self.snd.is_none() && self.cc.is_none() && self.send_bytes == Some(0) && !self.app_closed
        {
            return;
        }
        // Written only if made: a side that has sent nothing is not waiting.
        if let Some(s) = self.tx_made() {
            s.pacing.wait = false;
        }
        let mut sent = false;
        let mut deferred_by_cwnd = false;
        // New segments left in the TSO frame being sent: deferral is decided per frame.
        let mut frame_left = 0;
        while let Some((k, retx)) = self.next_segment() {
            if ctx.now < self.tx().pacing.next_send_at && self.pacing_rate().is_some() {
                self.tx_mut().pacing.wait = true;
                break;
            }
            if !retx && self.cfg.tso_defer {
                if frame_left == 0 {
                    let frame = self.tso_segs();
                    if let Some(by_cwnd) = self.tso_defers(ctx.now, k, frame) {
                        deferred_by_cwnd = by_cwnd;
                        break;
                    }
                    frame_left = frame;
                }
                frame_left -= 1;
            }
            self.transmit(ctx, k, retx);
            sent = true;
        }
        self.validate_cwnd(sent, deferred_by_cwnd);
        if sent && self.tx().timers.reo == NEVER {
            self.schedule_loss_probe(ctx.now, false);
        }
        if self.tx().pacing.wait {
            return;
        }
        // Application-limited (delivery-rate draft §3.4): everything written has been sent,
        // no repair is pending and the window is not full.
        if self.send_bytes.is_some()
            && self.tx().sb.end() >= self.n_segs()
            && self.tx().recovery.state() == Recovery::Open
            && self.in_flight() < self.cwnd()
        {
            let f = self.in_flight();
            self.tx_mut().rate.mark_app_limited(f);
        }
    }

    /// Linux's `tcp_cwnd_validate` after a sending opportunity: whether the window is what
    /// stopped the sender, remembered for the round (until SND.UNA passes the data then
    /// sent) once true, and the round's largest flight otherwise.
    fn validate_cwnd(&mut self, sent: bool, deferred_by_cwnd: bool) {
        if self.cc.is_none() {
            return;
        }
        let limited = deferred_by_cwnd || self.in_flight() + self.mss > self.cwnd();
        if !sent && !limited {
            return;
        }
        let outstanding = self.flight_size();
        let u = &self.tx().cwnd_use;
        if self.snd_una >= u.round_end || limited || (!u.limited && outstanding > u.max_flight) {
            self.tx_mut().cwnd_use = CwndUse {
                limited,
                max_flight: outstanding,
                round_end: self.snd_max_seq(),
            };
        }
    }

    /// Linux's `tcp_tso_should_defer` (6.18): whether new segment `k` waits for the next ACK
    /// so that the sender goes out in larger bursts, as a Linux sender building TSO/GSO
    /// frames does. It waits while the room the windows leave is below one frame of
    /// `frame` segments ([`Self::tso_segs`]) and below a third of the window, the last segment went out
    /// within 1 ms and the ACK of the oldest outstanding segment is due within
    /// min(SRTT/2, 1 ms); never in recovery, never for what the application has no more of.
    /// `Some(true)`: it waits for the congestion window (which the window validation counts
    /// as the window being in use, as Linux does).
    fn tso_defers(&self, now: Time, k: u64, frame: u64) -> Option<bool> {
        if self.cc.is_none()
            || self.tx().recovery.state() != Recovery::Open
            || now > self.tx().pacing.last_xmit + MS
            || self.tx().sb.is_empty()
        {
            return None;
        }
        let (cwnd, in_flight) = (self.cwnd(), self.in_flight());
        let start = self.seg_start(k);
        let cong_win = cwnd.checked_sub(in_flight)?;
        let send_win = (self.snd_una + self.snd_wnd).saturating_sub(start);
        let limit = cong_win.min(send_win);
        let frame = frame * self.mss;
        let all_written_fits =
            self.send_bytes.is_some() && self.seg_start(self.n_segs()) <= start + limit;
        if limit >= frame || limit >= self.snd_wnd.min(cwnd) / 3 || all_written_fits {
            return None;
        }
        let srtt = self.rtt.srtt();
        let ack_due = self.tx().sb.get(self.tx().sb.base()).sent + srtt;
        if ack_due > now + (srtt / 2).min(MS) {
            return None;
        }
        Some(cong_win < send_win)
    }

    /// Linux's `tcp_tso_autosize`: segments per TSO/GSO frame, about 1 ms at the pacing rate
    /// (`sk_pacing_rate >> 10`, plus 64 KB >> (min_rtt in µs >> 9) on short paths), at most
    /// 64 KB, at least 2. Without a pacing rate of the controller's, the rate is Linux's
    /// `tcp_update_pacing_rate`: `pacing_ss_ratio` (below half ssthresh) or `pacing_ca_ratio`
    /// × max(cwnd, data in flight) / SRTT.
    fn tso_segs(&self) -> u64 {
        const GSO_MAX: u64 = 65_536;
        let rate = match self.cc.as_ref().and_then(|c| c.pacing_rate()) {
            Some(r) => r,
            None => {
                let srtt = self.rtt.srtt();
                if srtt == 0 {
                    return 2;
                }
                let cwnd = self.cwnd();
                let ss = self.cc.as_ref().is_some_and(|c| cwnd < c.ssthresh() / 2);
                let ratio = if ss {
                    self.cfg.pacing_ss_ratio
                } else {
                    self.cfg.pacing_ca_ratio
                };
                ratio * cwnd.max(self.flight_size()) as f64 / to_secs(srtt)
            }
        };
        let mut bytes = (rate as u64) >> 10;
        let r = self.rtt.min_rtt() / US >> 9;
        if r < 32 {
            bytes += GSO_MAX >> r;
        }
        (bytes.min(GSO_MAX) / self.mss).max(2)
    }

    /// Linux's `tcp_is_cwnd_limited`: the window was full this round, or slow start has
    /// not yet reached twice the most data in flight.
    pub(super) fn is_cwnd_limited(&self) -> bool {
        let Some(cc) = self.cc.as_ref() else {
            return true;
        };
        let window = self.controller_window();
        self.tx().cwnd_use.limited
            || (window < cc.ssthresh() && window < 2 * self.tx().cwnd_use.max_flight)
    }

    /// Segment `k` goes out, new or again.
    pub(super) fn transmit(&mut self, ctx: &mut Ctx, k: u64, retx: bool) {
        let now = ctx.now;
        let payload = self.seg_payload(k);
        let fin = self.seg_has_fin(k);
        let mut flags = TcpFlags::ACK;
        if fin {
            flags |= TcpFlags::FIN;
        }
        let p = self.segment_packet(ctx, flags, self.seg_start(k), payload);
        self.codec.ack_out(p);
        let info = self.info(now, 0);
        self.codec.data_out(p, retx, &info);

        let nothing_in_flight = self.in_flight() == 0;
        let (sack_ok, rack, rto) = (self.sack_ok, self.cfg.rack, self.rtt.rto());
        let s = self.tx_mut();
        if k == s.sb.end() {
            let mut seg = Seg {
                len: (payload + fin as u32),
                ..Default::default()
            };
            s.rate.on_send(now, nothing_in_flight, &mut seg);
            s.sb.push(seg);
        } else {
            s.rate.on_send(now, nothing_in_flight, s.sb.get_mut(k));
            s.sb.on_retransmit(k);
        }
        s.recovery.on_sent((payload + fin as u32) as u64);
        if retx && sack_ok {
            s.recovery.on_retransmitted(k);
            if rack {
                s.recovery.rack_mut().on_retransmit(k, now);
            }
            // Linux's tcp_xmit_retransmit_queue: resending the first unacknowledged
            // segment restarts the timer, which then waits a full RTO for it.
            if k == s.sb.base() {
                s.timers.rto = now + rto;
            }
        }
        if s.snd_nxt == k {
            s.snd_nxt = k + 1;
        }
        s.pacing.last_xmit = now;
        if retx {
            s.stats.retransmissions += 1;
        }
        s.stats.bytes_sent += payload as u64;
        s.stats.packets_sent += 1;
        let in_flight = self.in_flight();
        if let Some(cc) = self.cc.as_mut() {
            cc.on_send(now, payload as u64, in_flight);
            self.cc_window = cc.window();
        }
        if self.tx().timers.rto == NEVER {
            self.tx_mut().timers.rto = now + rto;
        }
        if let Some(rate) = self.pacing_rate() {
            let prior = self.tx().pacing.next_send_at;
            let start = prior.max(now);
            let gap = from_secs(payload as f64 / rate);
            self.tx_mut().pacing.next_send_at = start + gap - (gap / 2).min(start - prior);
        }
        self.on_ack_sent(p);
    }
}
