//! RACK loss detection (RFC 8985 §6.2) during SACK recovery, as Linux runs it by default
//! (`tcp_recovery = 1`, `net/ipv4/tcp_recovery.c`): a segment is lost when a segment sent
//! after it has been delivered. Its purpose here is what the RFC 6675 rules alone cannot do:
//! find a *retransmission* that was lost, which otherwise only the retransmission timer
//! repairs.
//!
//! Readings:
//! - The reordering window is 0: Linux's value in recovery while no reordering has been seen,
//!   and the simulator never reorders one flow's packets (no D-SACK, so reordering is never
//!   seen either). With a zero window the RFC's time condition (`sent + RACK.rtt + reo_wnd ≤
//!   now`) holds for every segment sent before the most recently delivered one, so no
//!   reordering timer is needed; "sent before" is Linux's `tcp_rack_sent_after` order (time,
//!   then sequence).
//! - A delivered retransmission advances RACK only when the delivery cannot be the original's
//!   (RFC 8985 §6.2 step 2): not if the ACK echoes a timestamp older than the retransmission,
//!   nor if it came sooner than the minimum RTT after it.
//! - Detection runs only in fast or timeout recovery; recovery starts by the duplicate
//!   threshold as before (with no reordering Linux's RACK starts it at the same ACK).
//! - Segments are checked in transmission order without a time-sorted list: segments sent
//!   once are in sequence order, so one forward pointer walks them; retransmissions are
//!   remembered in the order they were sent.

use super::scoreboard::{Scoreboard, Seg, RETRANSMITTED, RTX_IN_FLIGHT, SACKED};
use crate::time::Time;
use std::collections::VecDeque;

#[derive(Default)]
pub struct Rack {
    /// (transmission time, segment) of the most recently sent delivered segment.
    latest: Option<(Time, u64)>,
    /// Retransmissions in the order sent: (segment, time). Entries go stale when the segment
    /// is acknowledged or sent again; they are dropped when reached.
    retransmitted: VecDeque<(u64, Time)>,
    /// Segments sent once, below this, have been checked.
    scan: u64,
}

impl Rack {
    /// A segment was newly delivered (cumulatively or by SACK) on an ACK at `now`;
    /// `echo_older` is true if the ACK's timestamp echo is older than the segment's latest
    /// transmission.
    pub fn on_delivered(&mut self, k: u64, seg: &Seg, now: Time, min_rtt: Time, echo_older: bool) {
        if seg.has(RETRANSMITTED) && (echo_older || now.saturating_sub(seg.sent) < min_rtt) {
            return;
        }
        if self.latest.is_none_or(|l| (seg.sent, k) > l) {
            self.latest = Some((seg.sent, k));
        }
    }

    /// Segment `k` was retransmitted at `now`.
    pub fn on_retransmit(&mut self, k: u64, now: Time) {
        self.retransmitted.push_back((k, now));
    }

    /// Marks lost every outstanding segment sent before the most recently delivered one;
    /// true if any was newly marked.
    pub fn detect(&mut self, sb: &mut Scoreboard) -> bool {
        let Some(latest) = self.latest else {
            return false;
        };
        let mut any = false;
        let mut k = self.scan.max(sb.base());
        while k < sb.end() {
            let s = sb.get(k);
            if !s.has(RETRANSMITTED) && !s.has(SACKED) {
                if (s.sent, k) >= latest {
                    break;
                }
                any |= sb.mark_lost(k);
            }
            k += 1;
        }
        self.scan = k;
        while let Some(&(k, sent)) = self.retransmitted.front() {
            if (sent, k) >= latest {
                break;
            }
            self.retransmitted.pop_front();
            if k < sb.base() {
                continue;
            }
            let s = sb.get(k);
            if s.sent == sent && !s.has(SACKED) && s.has(RTX_IN_FLIGHT) {
                sb.retransmission_lost(k);
                any = true;
            }
        }
        any
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
    use crate::tcp::scoreboard::LOST;

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
        assert!(r.detect(&mut b));
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
        assert!(r.detect(&mut b));
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
        assert!(!r.detect(&mut b));
        // A timestamp echo older than the resend says the same.
        b.sack_range(0, 1, |_, _| {});
        let s = *b.get(0);
        r.on_delivered(0, &s, 200, 50, true);
        assert!(!r.detect(&mut b));
        r.on_delivered(0, &s, 200, 50, false);
        assert!(r.detect(&mut b));
        assert!(b.is_lost(1) && b.is_lost(2));
    }
}
