//! Proportional Rate Reduction (RFC 6937): how the sending window comes down from its value
//! before a reduction (`prior_cwnd`) to the controller's new ssthresh during one round trip,
//! in the CWR state after an ECN reduction and in SACK fast recovery.
//!
//! The rule is Linux's `tcp_cwnd_reduction` (net/ipv4/tcp_input.c, the form RFC 6937
//! describes as PRR-SSRB), in bytes instead of packets:
//! - while more than ssthresh is in flight, send `⌈ssthresh · delivered / prior_cwnd⌉ − out`
//!   in total (rounded up to whole segments), so the reduction is spread over the ACKs of one
//!   window;
//! - once at most ssthresh is in flight, send what was delivered (at least this ACK's
//!   delivery), one segment more when the ACK advanced SND.UNA and no new loss was found
//!   (slow start back up to ssthresh), never beyond ssthresh;
//! - the first ACK of a reduction always allows one segment (the fast retransmit).
//!
//! The window after each ACK is `pipe + sndcnt`; an ACK that delivered nothing leaves it.

/// The state of one reduction.
#[derive(Clone, Debug)]
pub struct Prr {
    mss: u64,
    prior_cwnd: u64,
    ssthresh: u64,
    /// Bytes delivered (cumulatively or by SACK) since the reduction began.
    delivered: u64,
    /// Bytes sent (new or retransmitted) since the reduction began.
    out: u64,
    cwnd: u64,
}

impl Prr {
    /// A reduction from `prior_cwnd` to `ssthresh` (bytes). Until the first ACK the window
    /// stays `prior_cwnd`, as Linux's does.
    pub fn new(prior_cwnd: u64, ssthresh: u64, mss: u64) -> Self {
        Prr {
            mss,
            prior_cwnd: prior_cwnd.max(1),
            ssthresh,
            delivered: 0,
            out: 0,
            cwnd: prior_cwnd,
        }
    }

    /// The sending window in bytes.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }

    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// An ACK delivered `delivered` bytes; `pipe` bytes are in flight after it.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, una_advanced: bool, newly_lost: bool) {
        if delivered == 0 {
            return;
        }
        self.delivered += delivered;
        let mut sndcnt = if pipe > self.ssthresh {
            // Rounded up to whole segments, as Linux's packet counts are.
            let segs = (self.ssthresh as u128 * self.delivered as u128)
                .div_ceil(self.prior_cwnd as u128 * self.mss as u128) as u64;
            (segs * self.mss).saturating_sub(self.out)
        } else {
            let mut n = self.delivered.saturating_sub(self.out).max(delivered);
            if una_advanced && !newly_lost {
                n += self.mss;
            }
            n.min(self.ssthresh - pipe)
        };
        if self.out == 0 {
            sndcnt = sndcnt.max(self.mss);
        }
        self.cwnd = pipe + sndcnt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn above_ssthresh_one_segment_per_two_acks_when_halving() {
        // prior_cwnd 20, ssthresh 10 (segments): ⌈10·d/20⌉ − out.
        let mut p = Prr::new(20 * MSS, 10 * MSS, MSS);
        assert_eq!(p.cwnd(), 20 * MSS);
        p.on_ack(MSS, 18 * MSS, false, true); // ⌈10/20⌉ − 0 = 1
        assert_eq!(p.cwnd(), 19 * MSS);
        p.on_sent(MSS);
        p.on_ack(MSS, 18 * MSS, false, false); // ⌈20/20⌉ − 1 = 0
        assert_eq!(p.cwnd(), 18 * MSS);
        p.on_ack(MSS, 17 * MSS, false, false); // ⌈30/20⌉ − 1 = 1
        assert_eq!(p.cwnd(), 18 * MSS);
        p.on_sent(MSS);
        p.on_ack(MSS, 17 * MSS, false, false); // ⌈40/20⌉ − 2 = 0
        assert_eq!(p.cwnd(), 17 * MSS);
        // An ACK that delivers nothing changes nothing.
        p.on_ack(0, 3 * MSS, true, false);
        assert_eq!(p.cwnd(), 17 * MSS);
    }

    #[test]
    fn the_first_ack_always_allows_one_segment_and_deep_cuts_spread_over_the_window() {
        // Already at ssthresh: conservation would send nothing, the first ACK sends one.
        let mut p = Prr::new(20 * MSS, 10 * MSS, MSS);
        p.on_ack(MSS, 10 * MSS, false, true);
        assert_eq!(p.cwnd(), 11 * MSS);
        p.on_sent(MSS);
        p.on_ack(MSS, 10 * MSS, false, false);
        assert_eq!(p.cwnd(), 10 * MSS);
        // A 2-segment target from 100: ⌈2 · 1 / 100⌉ = 1 segment already; then nothing more
        // until 50 segments are delivered, then the second.
        let mut p = Prr::new(100 * MSS, 2 * MSS, MSS);
        p.on_ack(MSS, 99 * MSS, false, true);
        assert_eq!(p.cwnd(), 100 * MSS);
        p.on_sent(MSS);
        for _ in 1..50 {
            p.on_ack(MSS, 99 * MSS, false, false);
            assert_eq!(p.cwnd(), 99 * MSS);
        }
        p.on_ack(MSS, 98 * MSS, false, false); // ⌈2 · 51 / 100⌉ = 2 − 1
        assert_eq!(p.cwnd(), 99 * MSS);
    }

    #[test]
    fn at_or_below_ssthresh_conservation_plus_slow_start_bounded_by_ssthresh() {
        let mut p = Prr::new(20 * MSS, 10 * MSS, MSS);
        p.on_sent(11 * MSS);
        // delivered 22 − out 11 = 11, +1 for the SND.UNA advance, capped at ssthresh − pipe = 1.
        p.on_ack(22 * MSS, 9 * MSS, true, false);
        assert_eq!(p.cwnd(), 10 * MSS);
        // Far below ssthresh: 24 delivered − 11 out + 1 = 14, capped at 10 − 5 = 5.
        p.on_ack(2 * MSS, 5 * MSS, true, false);
        assert_eq!(p.cwnd(), 10 * MSS);
        // No SND.UNA advance and nothing owed: only this ACK's delivery (2) goes out again.
        let mut p = Prr::new(20 * MSS, 10 * MSS, MSS);
        p.on_sent(20 * MSS);
        p.on_ack(19 * MSS, 5 * MSS, false, false); // max(19 − 20 → 0, 19) = 19, capped at 5
        assert_eq!(p.cwnd(), 10 * MSS);
        p.on_sent(5 * MSS);
        p.on_ack(2 * MSS, 5 * MSS, false, false); // max(21 − 25 → 0, 2) = 2
        assert_eq!(p.cwnd(), 7 * MSS);
        // A new loss found on an ACK that advanced SND.UNA: no slow-start segment.
        p.on_ack(MSS, 5 * MSS, true, true); // max(22 − 25 → 0, 1) = 1
        assert_eq!(p.cwnd(), 6 * MSS);
    }
}
