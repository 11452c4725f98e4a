//! RACK loss detection (RFC 8985 §6.2) as Linux runs it by default (`tcp_recovery = 1`,
//! `net/ipv4/tcp_recovery.c`): a segment is lost when a segment sent after it has been
//! delivered and the reordering window has passed since. It finds what the RFC 6675 rules
//! cannot: a *retransmission* that was lost (otherwise only the retransmission timer repairs
//! it), and a loss with fewer than DupThresh segments SACKed above it — a tail, once a tail
//! loss probe ([`super::conn`]) has drawn a SACK for it.
//!
//! Readings:
//! - The reordering window is Linux's while no reordering has been seen (the simulator never
//!   reorders one flow's packets and sends no D-SACK): 0 in fast or timeout recovery and once
//!   DupThresh segments are SACKed; otherwise min(min_rtt / 4, SRTT). A segment sent before
//!   the most recently delivered one ("before": Linux's `tcp_skb_sent_after` order, time
//!   then sequence) is lost once `sent + RACK.rtt + window ≤ now`, where RACK.rtt is the RTT
//!   of the most recently sent segment the last ACK delivered (RFC 8985 §6.2 steps 2 and 5;
//!   Linux's `rack.rtt_us`) — after a delay spike it carries the spike, so segments sent
//!   during it are not declared lost early.
//! - What is not yet lost by that rule arms the reordering timer for when the last of it
//!   would be, plus Linux's 2 ms timer slack (`TCP_TIMEOUT_MIN_US`); when it fires the check
//!   runs again (`tcp_rack_reo_timeout`).
//! - A delivered retransmission advances RACK only when the delivery cannot be the original's
//!   (RFC 8985 §6.2 step 2): not if the ACK echoes a timestamp older than the retransmission,
//!   nor if it came sooner than the minimum RTT after it.
//! - Segments are checked in transmission order without a time-sorted list: segments sent
//!   once are in sequence order, so one forward pointer walks them; retransmissions are
//!   remembered in the order they were sent.

use super::scoreboard::{Scoreboard, Seg, LOST, RETRANSMITTED, RTX_IN_FLIGHT, SACKED};
use crate::time::{Time, MS};
use std::collections::VecDeque;

/// Linux's slack on the reordering timer (`TCP_TIMEOUT_MIN_US`).
const TIMER_SLACK: Time = 2 * MS;

#[derive(Default)]
pub struct Rack {
    /// (transmission time, segment) of the most recently sent delivered segment.
    latest: Option<(Time, u64)>,
    /// RACK.rtt: the RTT of the most recently sent segment that the latest ACK delivered
    /// (RFC 8985 §6.2 step 2 processes an ACK's segments in transmission order and keeps the
    /// last one's; it need not be the segment in `latest`), and that ACK's time.
    rtt: Time,
    rtt_at: Time,
    /// A delivery since the last check (Linux's `rack.advanced`).
    advanced: bool,
    /// Retransmissions in the order sent: (segment, time). Entries go stale when the segment
    /// is acknowledged or sent again; they are dropped when reached.
    retransmitted: VecDeque<(u64, Time)>,
    /// Segments sent once, below this, have been checked.
    scan: u64,
}

impl Rack {
    /// As `Default` makes it (`const`: a connection's idle sending half is a static).
    pub const fn new() -> Self {
        Rack {
            latest: None,
            rtt: 0,
            rtt_at: 0,
            advanced: false,
            retransmitted: VecDeque::new(),
            scan: 0,
        }
    }

    /// A segment was newly delivered (cumulatively or by SACK) on an ACK at `now`;
    /// `echo_older` is true if the ACK's timestamp echo is older than the segment's latest
    /// transmission.
    pub fn on_delivered(&mut self, k: u64, seg: &Seg, now: Time, min_rtt: Time, echo_older: bool) {
        if seg.has(RETRANSMITTED) && (echo_older || now.saturating_sub(seg.sent) < min_rtt) {
            return;
        }
        self.advanced = true;
        let rtt = now.saturating_sub(seg.sent);
        if self.rtt_at != now {
            self.rtt_at = now;
            self.rtt = rtt;
        } else {
            self.rtt = self.rtt.min(rtt);
        }
        if self.latest.is_none_or(|l| (seg.sent, k) > l) {
            self.latest = Some((seg.sent, k));
        }
    }

    /// Whether a segment was delivered since the last check.
    pub fn advanced(&self) -> bool {
        self.advanced
    }

    /// Segment `k` was retransmitted at `now`.
    pub fn on_retransmit(&mut self, k: u64, now: Time) {
        self.retransmitted.push_back((k, now));
    }

    /// Marks lost every outstanding segment sent before the most recently delivered one whose
    /// reordering window `reo_wnd` has passed at `now`. Returns whether any was newly marked
    /// and, if some are not lost yet, when the reordering timer should fire.
    pub fn detect(
        &mut self,
        sb: &mut Scoreboard,
        now: Time,
        reo_wnd: Time,
    ) -> (bool, Option<Time>) {
        self.advanced = false;
        let Some(latest) = self.latest else {
            return (false, None);
        };
        // Retransmissions since acknowledged, resent or lost again are dropped first. Then,
        // with nothing SACKed and no retransmission in flight, everything sent before the
        // latest delivery has been acknowledged: the common case of an ACK in order.
        while let Some(&(k, sent)) = self.retransmitted.front() {
            if k >= sb.base() && {
                let s = sb.get(k);
                s.sent == sent && !s.has(SACKED) && s.has(RTX_IN_FLIGHT)
            } {
                break;
            }
            self.retransmitted.pop_front();
        }
        if !sb.any_sacked() && self.retransmitted.is_empty() {
            self.scan = self.scan.max(sb.base());
            return (false, None);
        }
        let expiry = |sent: Time| sent + self.rtt + reo_wnd;
        let mut any = false;
        let mut last_pending: Option<Time> = None;
        // Segments sent once: the pointer stops at the first one still waiting, the walk
        // goes on to the last one sent before `latest` for the timer.
        let mut k = self.scan.max(sb.base());
        let mut waiting = false;
        while k < sb.end() {
            let s = sb.get(k);
            if !s.has(RETRANSMITTED) && !s.has(SACKED) {
                if (s.sent, k) >= latest {
                    break;
                }
                if expiry(s.sent) <= now {
                    any |= sb.mark_lost(k);
                } else if !sb.get(k).has(LOST) {
                    waiting = true;
                    last_pending = last_pending.max(Some(s.sent));
                }
            }
            k += 1;
            if !waiting {
                self.scan = k;
            }
        }
        let mut i = 0;
        while let Some(&(k, sent)) = self.retransmitted.get(i) {
            if (sent, k) >= latest {
                break;
            }
            let live = k >= sb.base() && {
                let s = sb.get(k);
                s.sent == sent && !s.has(SACKED) && s.has(RTX_IN_FLIGHT)
            };
            if live && expiry(sent) > now {
                last_pending = last_pending.max(Some(sent));
                i += 1;
                continue;
            }
            if live {
                sb.retransmission_lost(k);
                any = true;
            }
            self.retransmitted.remove(i);
        }
        (any, last_pending.map(|sent| expiry(sent) + TIMER_SLACK))
    }

    /// A timeout marked everything lost: no retransmission is in flight any more.
    pub fn on_timeout(&mut self) {
        self.retransmitted.clear();
    }

    /// A timeout turned out spurious and the lost marks were cleared: check again from the
    /// first outstanding segment.
    pub fn on_undo(&mut self, base: u64) {
        self.scan = base;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new();
        for i in 0..n {
            b.push(Seg {
                sent: 10 + i,
                len: 100,
                ..Default::default()
            });
        }
        b
    }

    #[test]
    fn a_later_delivery_marks_earlier_sends_lost() {
        let mut b = board(10);
        let mut r = Rack::default();
        // 4 arrives (SACKed): 0..3, sent before it, are lost; 5.. are not.
        b.sack_range(4, 5, |k, s| r.on_delivered(k, s, 100, 50, false));
        assert!(r.detect(&mut b, 1_000, 0).0);
        assert!((0..4).all(|k| b.is_lost(k)) && !b.is_lost(5));
        assert_eq!(b.pipe(), 500);
        // Resend 1 at t = 200; new segment 10 at t = 201 is then delivered: 1's resend was
        // lost too, and is next to go again.
        b.get_mut(1).sent = 200;
        b.get_mut(1).flags |= RETRANSMITTED;
        b.on_retransmit(1);
        r.on_retransmit(1, 200);
        b.push(Seg {
            sent: 201,
            len: 100,
            ..Default::default()
        });
        assert_eq!(b.pipe(), 700);
        b.prune_resend();
        assert_eq!(b.next_resend(), Some(0));
        b.sack_range(0, 1, |_, _| {});
        b.sack_range(2, 4, |_, _| {});
        assert_eq!(b.next_resend(), None);
        b.sack_range(10, 11, |k, s| r.on_delivered(k, s, 300, 50, false));
        assert!(r.detect(&mut b, 1_000, 0).0);
        // 5..9 were sent before 10, and 1's resend too.
        assert_eq!(b.next_resend(), Some(1));
        assert!(b.get(1).has(LOST) && !b.get(1).has(RTX_IN_FLIGHT));
        assert_eq!(b.pipe(), b.pipe_recomputed());
        // Sending it again takes it off the list.
        b.get_mut(1).sent = 301;
        b.on_retransmit(1);
        r.on_retransmit(1, 301);
        assert_eq!(b.next_resend(), Some(5));
    }

    #[test]
    fn a_retransmission_delivered_too_soon_is_the_original() {
        let mut b = board(3);
        let mut r = Rack::default();
        b.get_mut(0).sent = 90;
        b.get_mut(0).flags |= RETRANSMITTED;
        // ACKed 5 after its resend with a 50 minimum RTT: the original arrived; RACK keeps
        // nothing from it and 1, 2 (sent at 11, 12) stay.
        b.sack_range(0, 1, |k, s| r.on_delivered(k, s, 95, 50, false));
        assert!(!r.detect(&mut b, 1_000, 0).0);
        // A timestamp echo older than the resend says the same.
        b.sack_range(0, 1, |_, _| {});
        let s = *b.get(0);
        r.on_delivered(0, &s, 200, 50, true);
        assert!(!r.detect(&mut b, 1_000, 0).0);
        r.on_delivered(0, &s, 200, 50, false);
        assert!(r.detect(&mut b, 1_000, 0).0);
        assert!(b.is_lost(1) && b.is_lost(2));
    }

    #[test]
    fn a_reordering_window_holds_losses_until_it_passes() {
        let mut b = board(6);
        let mut r = Rack::default();
        // Segments 0..3 were sent at 10..13; 4 (sent at 14) is SACKed at 100: RACK.rtt = 86.
        b.sack_range(4, 5, |k, s| r.on_delivered(k, s, 100, 50, false));
        // With a window of 20 nothing is lost yet; the timer is for the last of them, 3:
        // 13 + 86 + 20, plus the slack.
        assert_eq!(r.detect(&mut b, 100, 20), (false, Some(119 + TIMER_SLACK)));
        assert!(!b.is_lost(0));
        // At 117, 0 (expiring at 116) and 1 (117) are lost; 2 and 3 still wait.
        assert_eq!(r.detect(&mut b, 117, 20), (true, Some(119 + TIMER_SLACK)));
        assert!(b.is_lost(0) && b.is_lost(1) && !b.is_lost(2) && !b.is_lost(3));
        // At 119 the rest; 5, sent after 4, is never a candidate.
        assert_eq!(r.detect(&mut b, 119, 20), (true, None));
        assert!(b.is_lost(2) && b.is_lost(3) && !b.is_lost(5));
        assert_eq!(b.pipe(), b.pipe_recomputed());
    }

    #[test]
    fn the_rtt_is_the_latest_sent_segment_of_the_last_ack() {
        let mut b = board(6);
        let mut r = Rack::default();
        // 3 (sent at 13) is SACKed at 40: the reference, RACK.rtt = 27.
        b.sack_range(3, 4, |k, s| r.on_delivered(k, s, 40, 5, false));
        // One ACK at 500 delivers 1 and 2 (sent at 11 and 12), which took long: RACK.rtt =
        // 488 from 2, though 3 stays the reference. 0 is lost only at 10 + 488.
        b.sack_range(1, 3, |k, s| r.on_delivered(k, s, 500, 5, false));
        assert_eq!(r.detect(&mut b, 497, 0), (false, Some(498 + TIMER_SLACK)));
        assert_eq!(r.detect(&mut b, 498, 0), (true, None));
        assert!(b.is_lost(0));
    }
}
