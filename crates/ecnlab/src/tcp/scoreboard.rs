//! The sender's table of transmitted, not yet cumulatively acknowledged segments, with the
//! RFC 6675 scoreboard (SACKed, lost, retransmitted) and an incrementally maintained `pipe`.
//!
//! Segments have fixed boundaries (segment `k` starts at byte `1 + k·MSS` of the relative
//! sequence space), so the table is a ring of small records indexed by segment number and
//! SACK blocks map to whole segments. Readings of RFC 6675:
//! - IsLost(S) counts SACKed *segments* above S: S is lost when at least DupThresh segments
//!   above it are SACKed (the RFC's alternative "(DupThresh − 1)·SMSS bytes" gives the same
//!   answer with full-sized segments).
//! - SetPipe counts a retransmission as in flight per segment (a flag set when it is
//!   retransmitted and cleared when a timeout declares it lost again) rather than by
//!   comparison with HighRxt; the two agree except for segments NextSeg skipped.
//! - What NextSeg's rule 1 resends is, as in Linux, the lowest segment that is lost and has
//!   no retransmission in flight — not the lowest lost one above HighRxt. The two differ when
//!   a segment below HighRxt is found lost late (RFC 6675 would leave it to the timer) and
//!   when a recovery starts while the previous one's retransmissions are still in flight (the
//!   RFC would send them again).

use super::seq::IntervalSet;
use crate::time::Time;
use std::collections::VecDeque;

pub const SACKED: u8 = 1;
pub const LOST: u8 = 2;
/// A retransmission of this segment is counted in the pipe.
pub const RTX_IN_FLIGHT: u8 = 4;
/// Retransmitted at least once (Karn's rule: no RTT sample from it).
pub const RETRANSMITTED: u8 = 8;
/// Sent while the sender was application-limited (delivery-rate estimation).
pub const APP_LIMITED: u8 = 16;

/// What the sender remembers about one transmitted segment (draft-cheng-iccrg-delivery-rate-
/// estimation's per-packet state plus the scoreboard flags).
#[derive(Clone, Copy, Debug, Default)]
pub struct Seg {
    /// Latest transmission time.
    pub sent: Time,
    /// Connection's `delivered` / `delivered_time` / `first_sent_time` when last sent.
    pub delivered: u64,
    pub delivered_time: Time,
    pub first_sent_time: Time,
    /// Sequence-space length (payload, plus one for a FIN).
    pub len: u32,
    pub flags: u8,
}

impl Seg {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// This segment's share of the pipe (RFC 6675 SetPipe).
    #[inline]
    fn pipe_share(&self) -> u64 {
        if self.has(SACKED) {
            return 0;
        }
        let mut n = 0;
        if !self.has(LOST) {
            n += self.len as u64;
        }
        if self.has(RTX_IN_FLIGHT) {
            n += self.len as u64;
        }
        n
    }
}

#[derive(Default)]
pub struct Scoreboard {
    segs: VecDeque<Seg>,
    /// Segment number of `segs[0]`.
    base: u64,
    /// SACKed segment numbers (sender's view of the receiver's out-of-order data).
    sacked: IntervalSet,
    pipe: u64,
    sacked_bytes: u64,
    sacked_segs: u64,
    /// Segments below this have been checked against the IsLost rule.
    lost_scan: u64,
    /// Lost segments to be retransmitted, lowest first; entries that no longer need it
    /// (acknowledged, SACKed, sent again, lost marks cleared) are dropped when reached.
    resend: VecDeque<u64>,
}

impl Scoreboard {
    /// Empty, as `Default` makes it (`const`: a connection's idle sending half is a static).
    pub const fn new() -> Self {
        Scoreboard {
            segs: VecDeque::new(),
            base: 0,
            sacked: IntervalSet::new(),
            pipe: 0,
            sacked_bytes: 0,
            sacked_segs: 0,
            lost_scan: 0,
            resend: VecDeque::new(),
        }
    }

    /// Number of the first unacknowledged segment.
    #[inline]
    pub fn base(&self) -> u64 {
        self.base
    }
    /// Number of the next never-sent segment.
    #[inline]
    pub fn end(&self) -> u64 {
        self.base + self.segs.len() as u64
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    /// RFC 6675 pipe, in sequence bytes.
    #[inline]
    pub fn pipe(&self) -> u64 {
        self.pipe
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    /// SACKed segments not yet cumulatively acknowledged (Linux's `sacked_out`).
    pub fn sacked_segs(&self) -> u64 {
        self.sacked_segs
    }
    #[inline]
    pub fn get(&self, k: u64) -> &Seg {
        &self.segs[(k - self.base) as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, k: u64) -> &mut Seg {
        &mut self.segs[(k - self.base) as usize]
    }
    /// Highest SACKed segment + 1 (0 if none).
    pub fn high_sacked_end(&self) -> u64 {
        self.sacked.last().map_or(0, |(_, e)| e)
    }
    pub fn any_sacked(&self) -> bool {
        !self.sacked.is_empty()
    }

    /// A new segment (number `end()`) was transmitted.
    pub fn push(&mut self, seg: Seg) {
        self.pipe += seg.pipe_share();
        self.segs.push_back(seg);
    }

    /// Sets and clears flags of segment `k`, keeping the pipe in step; the new flags.
    fn set_flags(&mut self, k: u64, set: u8, clear: u8) -> u8 {
        let s = self.get_mut(k);
        let before = s.pipe_share();
        s.flags = (s.flags | set) & !clear;
        let (after, flags) = (s.pipe_share(), s.flags);
        self.pipe = self.pipe + after - before;
        flags
    }

    /// Segment `k` was retransmitted.
    pub fn on_retransmit(&mut self, k: u64) {
        self.set_flags(k, RTX_IN_FLIGHT | RETRANSMITTED, 0);
        self.prune_resend();
    }

    fn needs_resend(&self, k: u64) -> bool {
        k >= self.base && k < self.end() && {
            let s = self.get(k);
            s.has(LOST) && !s.has(SACKED) && !s.has(RTX_IN_FLIGHT)
        }
    }

    fn queue_resend(&mut self, k: u64) {
        let at = self.resend.partition_point(|&j| j < k);
        if self.resend.get(at) != Some(&k) {
            self.resend.insert(at, k);
        }
    }

    /// The lowest lost segment with no retransmission in flight.
    pub fn next_resend(&self) -> Option<u64> {
        self.resend.iter().copied().find(|&k| self.needs_resend(k))
    }

    /// Drops the entries at the front that no longer need a retransmission.
    pub fn prune_resend(&mut self) {
        while let Some(&k) = self.resend.front() {
            if self.needs_resend(k) {
                break;
            }
            self.resend.pop_front();
        }
    }

    /// Removes the first segment (cumulatively acknowledged) and returns it.
    #[inline]
    pub fn pop_front(&mut self) -> Option<Seg> {
        let s = self.segs.pop_front()?;
        // The segments the next ACKs take were written a round trip ago and have left the
        // cache: bring the one two places on in (see `crate::cache`).
        if let Some(ahead) = self.segs.get(2) {
            crate::cache::prefetch(ahead, std::mem::size_of::<Seg>());
        }
        self.pipe -= s.pipe_share();
        if s.has(SACKED) {
            self.sacked_bytes -= s.len as u64;
            self.sacked_segs -= 1;
        }
        self.base += 1;
        self.sacked.remove_below(self.base);
        Some(s)
    }

    /// Gives back memory a window that has shrunk no longer needs: a table or queue that
    /// holds less than an eighth of its allocation is cut to twice what it holds, so a flow
    /// pays for its present window, not for the largest it ever had, and the few
    /// reallocations are paid for by the segments the window lost in between.
    pub fn trim(&mut self) {
        fn trim<T>(q: &mut VecDeque<T>) {
            if q.capacity() >= 16 && q.len() < q.capacity() / 8 {
                q.shrink_to(2 * q.len());
            }
        }
        trim(&mut self.segs);
        trim(&mut self.resend);
    }

    /// Marks the segments in `[lo, hi)` SACKed; calls `f(k, &seg)` for each newly SACKed one.
    pub fn sack_range(&mut self, lo: u64, hi: u64, mut f: impl FnMut(u64, &Seg)) {
        let lo = lo.max(self.base);
        let hi = hi.min(self.end());
        if lo >= hi {
            return;
        }
        // Only the parts not SACKed before (SACK blocks repeat on every ACK).
        let mut gaps: [(u64, u64); 8] = [(0, 0); 8];
        let mut n = 0;
        let mut overflow = false;
        self.sacked.for_each_gap(lo, hi, |a, b| {
            if n < gaps.len() {
                gaps[n] = (a, b);
                n += 1;
            } else {
                overflow = true;
            }
        });
        if overflow {
            // More than eight holes inside one block: walk it segment by segment.
            for k in lo..hi {
                self.sack_one(k, &mut f);
            }
        } else {
            for &(a, b) in &gaps[..n] {
                for k in a..b {
                    self.sack_one(k, &mut f);
                }
            }
        }
        self.sacked.insert(lo, hi);
    }

    #[inline]
    fn sack_one(&mut self, k: u64, f: &mut impl FnMut(u64, &Seg)) {
        let s = self.get_mut(k);
        if s.has(SACKED) {
            return;
        }
        let share = s.pipe_share();
        s.flags |= SACKED;
        let seg = *s;
        self.pipe -= share;
        self.sacked_bytes += seg.len as u64;
        self.sacked_segs += 1;
        f(k, &seg);
    }

    /// RFC 6675 IsLost for every segment: marks lost the un-SACKed segments that have at least
    /// `dupthresh` SACKed segments above them. True if a segment was newly marked.
    pub fn update_lost(&mut self, dupthresh: u32) -> bool {
        let Some(limit) = self.sacked.nth_highest(dupthresh as u64) else {
            return false;
        };
        let from = self.lost_scan.max(self.base);
        let mut any = false;
        for k in from..limit.min(self.end()) {
            any |= self.mark_lost(k);
        }
        self.lost_scan = self.lost_scan.max(limit);
        any
    }

    /// Marks segment `k` lost (unless SACKed or already lost); true if newly marked.
    pub fn mark_lost(&mut self, k: u64) -> bool {
        let s = self.get(k);
        if s.has(SACKED) || s.has(LOST) {
            return false;
        }
        if self.set_flags(k, LOST, 0) & RTX_IN_FLIGHT == 0 {
            self.queue_resend(k);
        }
        true
    }

    /// The retransmission of segment `k` was lost: it is lost again and no longer in flight.
    pub fn retransmission_lost(&mut self, k: u64) {
        self.set_flags(k, LOST, RTX_IN_FLIGHT);
        self.queue_resend(k);
    }

    /// Is segment `k` lost by the scoreboard's rules?
    pub fn is_lost(&self, k: u64) -> bool {
        k >= self.base && k < self.end() && self.get(k).has(LOST)
    }

    /// Retransmission timeout: every un-SACKed segment is presumed lost and no retransmission
    /// is in flight any more.
    pub fn mark_all_lost(&mut self) {
        let mut pipe = 0;
        self.resend.clear();
        for (i, s) in self.segs.iter_mut().enumerate() {
            if !s.has(SACKED) {
                s.flags = (s.flags | LOST) & !RTX_IN_FLIGHT;
                self.resend.push_back(self.base + i as u64);
            }
            pipe += s.pipe_share();
        }
        self.pipe = pipe;
        self.lost_scan = self.end();
    }

    /// A timeout turned out spurious: nothing is presumed lost any more (Linux's undo clears
    /// the lost marks); the IsLost rule may mark segments again from the next SACK on.
    pub fn unmark_lost(&mut self) {
        let mut pipe = 0;
        for s in self.segs.iter_mut() {
            s.flags &= !LOST;
            pipe += s.pipe_share();
        }
        self.pipe = pipe;
        self.lost_scan = self.base;
        self.resend.clear();
    }

    /// The first un-SACKed segment at or after `from` and below `limit`.
    pub fn first_unsacked(&self, from: u64, limit: u64) -> Option<u64> {
        let mut k = from.max(self.base);
        let limit = limit.min(self.end());
        while k < limit {
            match self.sacked.containing(k) {
                Some((_, e)) => k = e,
                None => return Some(k),
            }
        }
        None
    }

    /// Recomputes the pipe from scratch (for checks).
    pub fn pipe_recomputed(&self) -> u64 {
        self.segs.iter().map(|s| s.pipe_share()).sum()
    }

    pub fn iter(&self) -> impl Iterator<Item = (u64, &Seg)> {
        let b = self.base;
        self.segs
            .iter()
            .enumerate()
            .map(move |(i, s)| (b + i as u64, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new();
        for _ in 0..n {
            b.push(Seg {
                len: 100,
                ..Default::default()
            });
        }
        b
    }

    #[test]
    fn pipe_follows_rfc6675_setpipe() {
        let mut b = board(10);
        assert_eq!(b.pipe(), 1000);
        let mut newly = vec![];
        b.sack_range(2, 5, |k, _| newly.push(k));
        assert_eq!(newly, vec![2, 3, 4]);
        // Repeated block: nothing new.
        b.sack_range(2, 5, |k, _| newly.push(k));
        assert_eq!(newly.len(), 3);
        assert_eq!(b.pipe(), 700);
        b.update_lost(3);
        // Three SACKed segments above 0 and 1: both lost; 5..9 are not.
        assert!(b.is_lost(0) && b.is_lost(1) && !b.is_lost(5));
        assert_eq!(b.pipe(), 500);
        b.on_retransmit(0);
        assert_eq!(b.pipe(), 600);
        // A retransmission of a segment that is not lost counts twice.
        b.on_retransmit(6);
        assert_eq!(b.pipe(), 700);
        assert_eq!(b.pipe(), b.pipe_recomputed());
        assert_eq!(b.first_unsacked(2, 10), Some(5));
        // 0 went again; 1 is the lost one still to resend.
        assert_eq!(b.next_resend(), Some(1));
        assert_eq!(b.first_unsacked(2, 5), None);
        b.pop_front();
        assert_eq!(b.pipe(), 600);
        assert_eq!(b.pipe(), b.pipe_recomputed());
        b.mark_all_lost();
        assert_eq!(b.pipe(), 0);
        assert!(b.is_lost(9));
        assert!(!b.is_lost(3)); // SACKed stays SACKed
    }
}
