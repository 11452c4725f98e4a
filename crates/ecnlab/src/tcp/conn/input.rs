//! ACK processing (Linux's `tcp_input.c`): a segment in ESTABLISHED (`tcp_rcv_established`)
//! and the ACK it carries (`tcp_ack`), in named steps — what it newly acknowledges
//! cumulatively (`tcp_clean_rtx_queue`) and by SACK (`tcp_sacktag_write_queue`), the RTT
//! sample it gives (`tcp_ack_update_rtt`), whether it is a duplicate, then loss recovery
//! ([`super::recovery`], [`super::tlp`]), the codec and the congestion controller
//! (`tcp_cong_control`, `tcp_in_ack_event`), and the timers. It owns nothing across ACKs:
//! each ACK's findings live in a [`Delivered`] and an [`AckSummary`].
//!
//! Readings:
//! - Duplicate ACK (RFC 5681 §2): outstanding data, no payload, no SYN/FIN, same ACK number,
//!   same window. With SACK (RFC 6675 §2) an ACK is a duplicate when it keeps the ACK number
//!   and SACKs data not SACKed before.
//! - RTT samples as Linux takes them: from the first segment (in sequence order) that the ACK
//!   newly acknowledges cumulatively, else from the first it newly SACKs, when the ACK covers
//!   no retransmitted segment (Karn); so a delayed ACK's sample includes the delay, as the
//!   RTO must (`rtt_sample_from = "last"`: the most recently sent of them instead). Only
//!   when the ACK's timing gives nothing (it covers a retransmission) and it advances the
//!   cumulative ACK does TSecr give the sample (RFC 7323 §4.1, 1 µs clock).
//! - D-SACK (RFC 2883, `dsack`, on by default): the receiver reports a duplicate segment in
//!   the first SACK block of its next ACK; the sender recognises it (below the cumulative ACK,
//!   or inside the second block), takes no SACK information from it and uses it for the
//!   tail loss probe only — Linux's D-SACK undo of a spurious fast retransmit and its growth
//!   of RACK's reordering window are not modelled (the simulator reorders nothing).
//! - Controller calls per ACK: entering fast recovery (`on_loss`) first, then the codec's
//!   signal (`on_signal`), then `on_ack` if the ACK acknowledged (or SACKed) new bytes, then
//!   `on_recovery_end` if the ACK ended fast recovery — so the ACK that ends recovery is
//!   reported as inside it. A signal's reduction by a controller with
//!   `Controller::cwr_state` starts Linux's CWR round ([`super::recovery`]).

use super::{Recovery, TcpConn};
use crate::cc::AckEvent;
use crate::net::Ctx;
use crate::packet::Packet;
use crate::tcp::config::RttSampleFrom;
use crate::tcp::rate::RateSample;
use crate::tcp::scoreboard::{RETRANSMITTED, SACKED};
use crate::tcp::seq::{ts_geq, unwrap32};
use crate::time::{Time, NS, SEC, US};
use crate::wire::{TcpFlags, TcpRepr};

/// What one ACK newly delivered, segment by segment: filled by the cumulative step
/// ([`TcpConn::take_acked`]) and the SACK step ([`TcpConn::take_sacked`]).
#[derive(Default)]
struct Delivered {
    rs: RateSample,
    /// Bytes newly acknowledged cumulatively that had not been SACKed.
    acked: u64,
    /// Bytes newly SACKed.
    sacked: u64,
    // Linux's RTT samples (tcp_clean_rtx_queue, tcp_ack_update_rtt): from the first
    // segment in sequence order that this ACK newly acknowledges, cumulatively if it can,
    // else by SACK; never from a retransmitted one (Karn). The sample Linux hands the
    // congestion control (`ca_rtt_us`) is from the most recently sent segment newly
    // SACKed, else newly acknowledged cumulatively; `rtt_sample_from = "last"` takes the
    // estimator's from the most recently sent of either.
    first_acked_sent: Option<Time>,
    first_sacked: Option<(u64, Time)>,
    last_acked_sent: Option<Time>,
    last_sacked_sent: Option<Time>,
    /// F-RTO: a segment sent before the timeout's high mark and never retransmitted is
    /// newly acknowledged (Linux's FLAG_ORIG_SACK_ACKED).
    original_acked: bool,
    /// The SACK blocks made a segment lost (RFC 6675's IsLost).
    newly_lost: bool,
    /// Linux's FLAG_DSACK_TLP: a D-SACK of the tail loss probe's segment.
    dsack_tlp: bool,
}

/// How the delivery steps read each delivered segment for F-RTO and RACK.
#[derive(Clone, Copy)]
struct DeliveryRules {
    /// F-RTO's high mark as a segment number (0 when F-RTO is not watching).
    high_seg: u64,
    rack_on: bool,
    min_rtt: Time,
    /// The ACK's TSecr, if it echoes one.
    echo: Option<u32>,
    ts_offset: u32,
}

impl DeliveryRules {
    /// RACK's test of a delivered retransmission: does the ACK echo an older timestamp?
    /// Asked only of retransmitted segments.
    fn echo_older(&self, sent: Time) -> bool {
        self.echo
            .is_some_and(|e| !ts_geq(e, ((sent / US) as u32).wrapping_add(self.ts_offset)))
    }
}

/// One ACK as loss recovery and the controller read it.
pub(super) struct AckSummary {
    pub ack: u64,
    pub prior_una: u64,
    /// Data outstanding before this ACK (`snd_max − prior_una`).
    pub flight_before: u64,
    pub outstanding: bool,
    pub is_dup: bool,
    /// Bytes newly acknowledged, cumulatively or by SACK.
    pub acked: u64,
    pub newly_sacked: u64,
    pub newly_lost: bool,
    pub original_acked: bool,
}

impl AckSummary {
    pub fn advances(&self) -> bool {
        self.ack > self.prior_una
    }
}

impl TcpConn {
    /// A segment in ESTABLISHED: its timestamp, its ACK, its data.
    pub(super) fn segment(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        if self.ts_ok {
            if let Some((tsval, _)) = t.timestamp {
                let seq = unwrap32(self.rcv.rcv_nxt, t.seq.wrapping_sub(self.irs));
                // RFC 7323 §4.3: only segments at or before the last ACK point update it.
                if ts_geq(tsval, self.rcv.ts_recent) && seq <= self.rcv.last_ack_sent {
                    self.rcv.ts_recent = tsval;
                }
            }
        }
        if t.flags.has(TcpFlags::ACK) {
            self.on_ack(ctx, pkt, t);
        }
        if pkt.payload_len > 0 || t.flags.has(TcpFlags::FIN) {
            self.on_data(ctx, pkt, t);
        }
    }

    pub(super) fn rtt_sample(&mut self, r: Time) -> Option<Time> {
        // A wrapped or absurd timestamp difference is no sample.
        if r == 0 || r > 3600 * SEC {
            return None;
        }
        self.rtt.on_sample(r);
        if let Some(h) = self.stats.rtt_ns() {
            h.record(r / NS);
        }
        Some(r)
    }

    fn on_ack(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        let now = ctx.now;
        let ack = self.rel_snd_seq(t.ack);
        let snd_max = self.snd_max_seq();
        if ack < self.snd_una || ack > snd_max {
            return;
        }
        let wnd = (t.window as u64) << self.snd_wscale;
        let window_changed = wnd != self.snd_wnd;
        self.snd_wnd = wnd;
        if self.snd.is_none() && self.cc.is_none() {
            // A side that has sent nothing but its handshake and has no controller (a
            // transfer's receiver before its FIN): the ACK acknowledges nothing, so recovery,
            // the probe and the timers have nothing to do and only the codec hears it.
            let info = self.info(now, 0);
            self.codec.ack_in(pkt, &info);
            return;
        }
        let prior_una = self.snd_una;

        let mut d = Delivered::default();
        let rules = self.delivery_rules(t);
        // Without a sending half nothing but the handshake was sent: this ACK acknowledges
        // nothing and leaves the initial state as it is, which the writes below skip.
        if let Some(s) = self.tx_made() {
            s.recovery.begin_ack();
        }
        if ack > prior_una {
            self.take_acked(now, ack, rules, &mut d);
        }
        if self.sack_ok && t.sack_count > 0 && self.snd.is_some() {
            self.take_sacked(now, t, snd_max, rules, &mut d);
        }
        let acked = d.acked + d.sacked;
        let (rtt, rtt_last) = self.take_rtt_sample(now, ack > prior_una, t, &d);
        let min_rtt = self.rtt.min_rtt();
        let rate_sample = self.tx_made().and_then(|s| s.rate.finish(&d.rs, min_rtt));

        let outstanding = snd_max > prior_una;
        let is_dup = outstanding
            && ack == prior_una
            && if self.sack_ok {
                d.sacked > 0
            } else {
                pkt.payload_len == 0
                    && !t.flags.has(TcpFlags::SYN | TcpFlags::FIN)
                    && !window_changed
            };
        if ack > prior_una || is_dup {
            self.tx_mut().recovery.count_dupack(ack > prior_una, is_dup);
        }

        // A retransmitted tail loss probe that repaired a loss: one reduction, ended at once.
        let pure_dup = ack == prior_una && pkt.payload_len == 0 && !window_changed && d.sacked == 0;
        self.process_tlp_ack(now, ack, pure_dup, d.dsack_tlp);
        let rack_lost = self.rack_detect(now);

        let a = AckSummary {
            ack,
            prior_una,
            flight_before: snd_max - prior_una,
            outstanding,
            is_dup,
            acked,
            newly_sacked: d.sacked,
            newly_lost: d.newly_lost || rack_lost,
            original_acked: d.original_acked,
        };
        let (ends_fast_recovery, restart_timer) = self.recover_on_ack(ctx, &a);
        if let Some(s) = self.tx_made() {
            s.sb.prune_resend();
        }

        let ev = AckEvent {
            now,
            acked_bytes: acked,
            rtt,
            rtt_last,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            bytes_in_flight: self.in_flight(),
            in_recovery: self.tx().recovery.in_fast_or_timeout(),
            in_cwnd_reduction: self.tx().recovery.in_cwnd_reduction(),
            delivery_rate: rate_sample.map(|(_, r)| r),
            app_limited: d.rs.is_app_limited,
            delivered: self.tx().rate.delivered,
            prior_delivered: d.rs.prior_delivered,
            cwnd_unused: !self.is_cwnd_limited(),
            ece: t.flags.has(TcpFlags::ECE),
        };
        self.inform_controller(pkt, ev, &a, ends_fast_recovery, snd_max);
        self.rearm_timers_on_ack(now, ack > prior_una, restart_timer);
    }

    fn delivery_rules(&self, t: &TcpRepr) -> DeliveryRules {
        DeliveryRules {
            high_seg: match self.tx().recovery.frto_high_mark() {
                Some(recover) => self.segs_below(recover),
                None => 0,
            },
            rack_on: self.cfg.rack && self.sack_ok,
            min_rtt: self.rtt.min_rtt(),
            echo: match (self.ts_ok, t.timestamp) {
                (true, Some((_, e))) if e != 0 => Some(e),
                _ => None,
            },
            ts_offset: self.ts_offset,
        }
    }

    /// The cumulative ACK moved to `ack`: the segments below it leave the scoreboard.
    fn take_acked(&mut self, now: Time, ack: u64, rules: DeliveryRules, d: &mut Delivered) {
        let covered = self.segs_below(ack);
        // Karn: an ACK that covers any retransmitted segment is ambiguous as a whole (it
        // may have been triggered by the retransmission), so no sample from it.
        let mut ambiguous = false;
        let s = self.tx_mut();
        while s.sb.base() < covered {
            let k = s.sb.base();
            let Some(seg) = s.sb.pop_front() else {
                break;
            };
            ambiguous |= seg.has(RETRANSMITTED);
            d.original_acked |= !seg.has(RETRANSMITTED) && s.sb.base() <= rules.high_seg;
            if !seg.has(SACKED) {
                d.acked += seg.len as u64;
                s.rate.on_delivered(now, &seg, &mut d.rs);
                if rules.rack_on {
                    let echoes_older = seg.has(RETRANSMITTED) && rules.echo_older(seg.sent);
                    s.recovery
                        .rack_mut()
                        .on_delivered(k, &seg, now, rules.min_rtt, echoes_older);
                }
                d.last_acked_sent = d.last_acked_sent.max(Some(seg.sent));
                d.first_acked_sent = d.first_acked_sent.or(Some(seg.sent));
            }
        }
        if ambiguous {
            d.first_acked_sent = None;
            d.last_acked_sent = None;
        }
        s.sb.trim();
        s.snd_nxt = s.snd_nxt.max(s.sb.base());
        s.recovery.on_una_advanced(s.sb.base());
        self.snd_una = ack;
    }

    /// The ACK's SACK blocks: a D-SACK first, then each block marks its segments SACKed.
    fn take_sacked(
        &mut self,
        now: Time,
        t: &TcpRepr,
        snd_max: u64,
        rules: DeliveryRules,
        d: &mut Delivered,
    ) {
        let blocks = t.sack_blocks();
        let mut blocks = blocks.iter();
        if let Some((l, r)) = self.dsack_block(blocks.as_slice()) {
            blocks.next();
            // Linux's FLAG_DSACK_TLP: one segment, ending where the probe left SND.NXT.
            d.dsack_tlp = r - l <= self.mss && self.tx().probe.high_seq() == Some(r);
        }
        for &(l, r) in blocks {
            let l = self.rel_snd_seq(l).max(self.snd_una);
            let r = self.rel_snd_seq(r);
            if r <= l || r > snd_max {
                continue;
            }
            let lo = self.seg_at_or_after(l);
            let hi = self.segs_below(r);
            let s = self.tx_mut();
            let rate = &mut s.rate;
            let rack = s.recovery.rack_mut();
            s.sb.sack_range(lo, hi, |k, seg| {
                d.sacked += seg.len as u64;
                rate.on_delivered(now, seg, &mut d.rs);
                if rules.rack_on {
                    let echoes_older = seg.has(RETRANSMITTED) && rules.echo_older(seg.sent);
                    rack.on_delivered(k, seg, now, rules.min_rtt, echoes_older);
                }
                if !seg.has(RETRANSMITTED) {
                    d.last_sacked_sent = d.last_sacked_sent.max(Some(seg.sent));
                    d.original_acked |= k < rules.high_seg;
                    if d.first_sacked.is_none_or(|(f, _)| k < f) {
                        d.first_sacked = Some((k, seg.sent));
                    }
                }
            });
        }
        if d.sacked > 0 {
            let dupthresh = self.cfg.dupack_threshold;
            d.newly_lost = self.tx_mut().sb.update_lost(dupthresh);
        }
    }

    /// The first SACK block, unwrapped, if it is a D-SACK (RFC 2883 §4: below the cumulative
    /// ACK, or inside the second block).
    fn dsack_block(&self, blocks: &[(u32, u32)]) -> Option<(u64, u64)> {
        let &(l, r) = blocks.first()?;
        let (l, r) = (self.rel_snd_seq(l), self.rel_snd_seq(r));
        if r <= l {
            return None;
        }
        let inside_second = blocks
            .get(1)
            .is_some_and(|&(l2, r2)| self.rel_snd_seq(l2) <= l && r <= self.rel_snd_seq(r2));
        (r <= self.snd_una || inside_second).then_some((l, r))
    }

    /// The ACK's RTT samples: the estimator's (also returned first), and the controller's
    /// from the most recently sent segment delivered.
    fn take_rtt_sample(
        &mut self,
        now: Time,
        una_advanced: bool,
        t: &TcpRepr,
        d: &Delivered,
    ) -> (Option<Time>, Option<Time>) {
        // The timestamp echo only when the ACK's timing gave nothing (Linux prefers the
        // timing: TSecr may echo an older segment's TSval after delayed or lost ACKs).
        let sample_sent = match self.cfg.rtt_sample_from {
            RttSampleFrom::First => d.first_acked_sent.or(d.first_sacked.map(|(_, sent)| sent)),
            RttSampleFrom::Last => d.last_acked_sent.max(d.last_sacked_sent),
        };
        let rtt = match sample_sent {
            Some(sent) => self.rtt_sample(now - sent),
            None => match (self.ts_ok && una_advanced, t.timestamp) {
                (true, Some((_, tsecr))) if tsecr != 0 => {
                    self.rtt_sample(self.ts_now(now).wrapping_sub(tsecr) as Time * US)
                }
                _ => None,
            },
        };
        let rtt_last = match d.last_sacked_sent.or(d.last_acked_sent) {
            Some(sent) => Some(now - sent).filter(|&r| r > 0),
            _ => rtt,
        };
        (rtt, rtt_last)
    }

    /// The controller: the codec's signal, then the ACK; a signal's reduction may start the
    /// CWR round, and the ACK may end fast recovery.
    fn inform_controller(
        &mut self,
        pkt: &Packet,
        mut ev: AckEvent,
        a: &AckSummary,
        ends_fast_recovery: bool,
        snd_max: u64,
    ) {
        let now = ev.now;
        let info = self.info(now, a.acked);
        let signal = self.codec.ack_in(pkt, &info);
        let mut enters_cwr = None;
        let recovery_open = self.tx().recovery.state() == Recovery::Open;
        if let (Some(sig), true) = (signal, self.cc.is_some()) {
            if let Some(level) = super::stats::signal_level(sig, self.codec.as_ref()) {
                self.tx_mut().stats.count_signal(level);
            }
        }
        if let Some(cc) = self.cc.as_mut() {
            let window_before = self.cc_window;
            debug_assert_eq!(window_before, cc.window());
            if let Some(sig) = signal {
                cc.on_signal(&ev, sig);
            }
            // A signal's reduction (made in on_signal, or by DCTCP in on_ack) starts the CWR
            // round; the ACK that carries it already counts as inside it.
            let open = recovery_open && cc.cwr_state();
            if open && cc.window() < window_before {
                enters_cwr = Some(window_before);
                ev.in_cwnd_reduction = true;
            }
            if a.acked > 0 {
                cc.on_ack(&ev);
            }
            if open && enters_cwr.is_none() && cc.window() < window_before {
                enters_cwr = Some(window_before);
            }
            if ends_fast_recovery {
                cc.on_recovery_end(now);
            }
            self.cc_window = cc.window();
        }
        if let Some(prior_cwnd) = enters_cwr {
            self.enter_cwr(snd_max, prior_cwnd);
        }
        if ends_fast_recovery {
            self.tx_mut().recovery.end_fast_recovery();
        }
        if a.acked > 0 {
            let pipe = self.in_flight();
            self.tx_mut()
                .recovery
                .prr_on_ack(a.acked, pipe, a.advances(), a.newly_lost);
        }
    }
}
