//! The receiving half of a connection: reassembly (in-order point plus out-of-order
//! intervals), SACK block generation (RFC 2018 §4) with D-SACK (RFC 2883: the next ACK after
//! a duplicate segment reports it in its first block, Linux's `tcp_dsack_set`) and the
//! delayed-ACK counters.

use super::seq::IntervalSet;
use crate::time::{Time, NEVER};

/// How an arriving segment relates to what was already received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Advanced the in-order point; `filled_gap` if out-of-order data was waiting (RFC 5681
    /// §4.2: acknowledge at once).
    InOrder { filled_gap: bool },
    /// Beyond a hole (acknowledge at once: a duplicate ACK with SACK blocks).
    OutOfOrder,
    /// Entirely received before (acknowledge at once).
    Duplicate,
}

/// Linux's TCP_FASTRETRANS_THRESH: out-of-order segments acknowledged at once before SACK
/// compression starts.
const DUP_ACKS_BEFORE_COMPRESSION: u32 = 3;

/// Remembered SACK "recency" entries: a sequence number inside each recently reported block.
const RECENT: usize = 8;
const _: () = assert!(RECENT <= u8::MAX as usize);

pub struct Receiver {
    /// Next expected sequence number (relative to the peer's ISN; the SYN is 0).
    pub rcv_nxt: u64,
    ooo: IntervalSet,
    /// A sequence number inside each recently reported block, newest first; made at the first
    /// out-of-order segment (a receiver that never sees one does not pay for it).
    recent: Option<Box<[u64; RECENT]>>,
    /// Entries of `recent` in use (at most [`RECENT`]).
    n_recent: u8,
    /// Relative sequence number of the peer's FIN, once seen.
    pub fin_seq: Option<u64>,
    /// In-order data segments received since the last ACK we sent.
    pub unacked_segs: u32,
    /// When a delayed ACK is due (NEVER: none pending).
    pub delack_deadline: Time,
    /// An ACK must go out before this event's processing ends.
    pub ack_now: bool,
    /// ACKs still to send at once in Linux's quick-ACK mode (`icsk_ack.quick`).
    pub quick: u32,
    /// ACKs for out-of-order segments withheld by SACK compression (`compressed_ack`).
    pub compressed: u32,
    /// Out-of-order segments acknowledged at once at the current `rcv_nxt`
    /// (`dup_ack_counter`), and that `rcv_nxt`.
    dup_acks: u32,
    dup_acks_at: u64,
    /// When the last in-order data segment arrived (Linux's `lrcvtime`); NEVER before one.
    pub last_data_at: Time,
    /// `rcv_nxt` carried by the last ACK we sent (RFC 7323 Last.ACK.sent).
    pub last_ack_sent: u64,
    /// RFC 7323 TS.Recent.
    pub ts_recent: u32,
    /// A duplicate segment's range, for the first SACK block of the next ACK (RFC 2883).
    pub dsack: Option<(u64, u64)>,
    pub segs_received: u64,
    pub dup_segs: u64,
    pub ooo_segs: u64,
}

impl Default for Receiver {
    fn default() -> Self {
        Receiver {
            rcv_nxt: 0,
            ooo: IntervalSet::new(),
            recent: None,
            n_recent: 0,
            fin_seq: None,
            unacked_segs: 0,
            delack_deadline: NEVER,
            ack_now: false,
            quick: 0,
            compressed: 0,
            dup_acks: 0,
            dup_acks_at: 0,
            last_data_at: NEVER,
            last_ack_sent: 0,
            ts_recent: 0,
            dsack: None,
            segs_received: 0,
            dup_segs: 0,
            ooo_segs: 0,
        }
    }
}

impl Receiver {
    /// Accounts the sequence range `[s, e)` of an arriving segment (a FIN counts one).
    pub fn receive(&mut self, s: u64, e: u64) -> Arrival {
        self.segs_received += 1;
        if e <= self.rcv_nxt {
            self.dup_segs += 1;
            self.dsack = Some((s, e));
            return Arrival::Duplicate;
        }
        if s > self.rcv_nxt {
            self.ooo_segs += 1;
            if self.ooo.containing(s).is_some_and(|(_, b)| b >= e) {
                self.dup_segs += 1;
                self.dsack = Some((s, e));
            }
            let (bs, be) = self.ooo.insert(s, e);
            // The block holding the newest segment goes first (RFC 2018 §4); entries that now
            // point into the same block are dropped so older blocks keep their slots.
            let recent = self.recent.get_or_insert_with(|| Box::new([0; RECENT]));
            let mut w = 0;
            for r in 0..self.n_recent as usize {
                let x = recent[r];
                if !(bs <= x && x < be) {
                    recent[w] = x;
                    w += 1;
                }
            }
            // At most RECENT - 1, which fits (checked below).
            self.n_recent = w.min(RECENT - 1) as u8;
            recent.copy_within(0..self.n_recent as usize, 1);
            recent[0] = s;
            self.n_recent += 1;
            return Arrival::OutOfOrder;
        }
        if s < self.rcv_nxt {
            self.dsack = Some((s, self.rcv_nxt));
        }
        let filled_gap = !self.ooo.is_empty();
        self.rcv_nxt = e;
        while let Some((_, b)) = self.ooo.pop_front_if_starts_by(self.rcv_nxt) {
            self.rcv_nxt = self.rcv_nxt.max(b);
        }
        Arrival::InOrder { filled_gap }
    }

    /// Fills `out` with up to `max` SACK blocks, most recently changed first (RFC 2018 §4),
    /// then any other held blocks from the highest down. Returns the count.
    pub fn sack_blocks(&self, max: usize, out: &mut [(u64, u64)]) -> usize {
        let max = max.min(out.len());
        let mut n = 0;
        let recent = self
            .recent
            .as_deref()
            .map_or(&[][..], |r| &r[..self.n_recent as usize]);
        for &x in recent {
            if n == max {
                return n;
            }
            if let Some(b) = self.ooo.containing(x) {
                if !out[..n].contains(&b) {
                    out[n] = b;
                    n += 1;
                }
            }
        }
        for b in self.ooo.iter_rev() {
            if n == max {
                break;
            }
            if !out[..n].contains(&b) {
                out[n] = b;
                n += 1;
            }
        }
        n
    }

    /// The peer's FIN has been received in order.
    pub fn fin_received(&self) -> bool {
        self.fin_seq.is_some_and(|f| self.rcv_nxt > f)
    }

    /// Data bytes delivered in order to the application (sequence 1 is the first data byte).
    pub fn data_delivered(&self) -> u64 {
        let upto = match self.fin_seq {
            Some(f) => self.rcv_nxt.min(f),
            None => self.rcv_nxt,
        };
        upto.saturating_sub(1)
    }

    pub fn has_ooo(&self) -> bool {
        !self.ooo.is_empty()
    }

    /// Bytes held out of order.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo.covered()
    }

    /// From rcv_nxt to the end of the highest out-of-order data (0 if none).
    pub fn ooo_span(&self) -> u64 {
        self.ooo
            .last()
            .map_or(0, |(_, e)| e.saturating_sub(self.rcv_nxt))
    }

    /// A delayed or immediate ACK is owed.
    pub fn ack_pending(&self) -> bool {
        self.ack_now || self.unacked_segs > 0 || self.compressed > 0
    }

    /// Linux's SACK compression (`__tcp_ack_snd_check` with data held out of order): whether
    /// an out-of-order segment's ACK goes at once. The first three at one `rcv_nxt` do (the
    /// sender's duplicate-ACK threshold), later ones are withheld until `max` have been or
    /// the compression timer fires; `max` 0 acknowledges every one at once.
    pub fn out_of_order_ack_now(&mut self, max: u32) -> bool {
        if max == 0 || self.compressed >= max {
            return true;
        }
        if self.dup_acks_at != self.rcv_nxt {
            self.dup_acks_at = self.rcv_nxt;
            self.dup_acks = 0;
        }
        if self.dup_acks < DUP_ACKS_BEFORE_COMPRESSION {
            self.dup_acks += 1;
            return true;
        }
        self.compressed += 1;
        false
    }

    /// Linux's `tcp_incr_quickack`: the next `n` ACKs go out at once (never fewer than
    /// already owed).
    pub fn enter_quickack(&mut self, n: u32) {
        self.quick = self.quick.max(n);
    }

    /// An ACK carrying `rcv_nxt` went out (pure or piggybacked).
    pub fn on_ack_sent(&mut self) {
        self.quick = self.quick.saturating_sub(1);
        self.unacked_segs = 0;
        self.compressed = 0;
        self.delack_deadline = NEVER;
        self.ack_now = false;
        self.last_ack_sent = self.rcv_nxt;
        self.dsack = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reassembly_and_sack_blocks_most_recent_first() {
        let mut r = Receiver {
            rcv_nxt: 1,
            ..Default::default()
        };
        assert_eq!(r.receive(1, 101), Arrival::InOrder { filled_gap: false });
        // Lose 101..201, then 201..301 and 301..401 arrive; lose 401..501; 501..601 arrives.
        assert_eq!(r.receive(201, 301), Arrival::OutOfOrder);
        assert_eq!(r.receive(301, 401), Arrival::OutOfOrder);
        assert_eq!(r.receive(501, 601), Arrival::OutOfOrder);
        let mut b = [(0, 0); 4];
        let n = r.sack_blocks(4, &mut b);
        assert_eq!(&b[..n], &[(501, 601), (201, 401)]);
        // A segment of the older block arrives again: it becomes the first block.
        assert_eq!(r.receive(701, 801), Arrival::OutOfOrder);
        assert_eq!(r.receive(301, 401), Arrival::OutOfOrder);
        let n = r.sack_blocks(4, &mut b);
        assert_eq!(&b[..n], &[(201, 401), (701, 801), (501, 601)]);
        let n = r.sack_blocks(2, &mut b);
        assert_eq!(n, 2);
        assert_eq!(r.receive(1, 101), Arrival::Duplicate);
        assert_eq!(r.dsack, Some((1, 101)));
        r.on_ack_sent();
        assert_eq!(r.dsack, None);
        // A segment inside a held block is a duplicate too (the block follows it in the ACK).
        assert_eq!(r.receive(301, 401), Arrival::OutOfOrder);
        assert_eq!(r.dsack, Some((301, 401)));
        // Filling the first hole delivers through 401.
        assert_eq!(r.receive(101, 201), Arrival::InOrder { filled_gap: true });
        assert_eq!(r.rcv_nxt, 401);
        let n = r.sack_blocks(4, &mut b);
        assert_eq!(&b[..n], &[(701, 801), (501, 601)]);
        // FIN at 801 out of order, then the holes.
        r.fin_seq = Some(801);
        assert_eq!(r.receive(801, 802), Arrival::OutOfOrder);
        r.receive(401, 501);
        assert!(!r.fin_received());
        r.receive(601, 701);
        assert!(r.fin_received());
        assert_eq!(r.data_delivered(), 800);
        assert!(!r.has_ooo());
    }

    #[test]
    fn sack_compression_withholds_after_three_and_up_to_its_limit() {
        let mut r = Receiver::default();
        let now = |r: &mut Receiver| r.out_of_order_ack_now(2);
        // Three at once, then two withheld, then the limit sends one.
        assert_eq!([now(&mut r), now(&mut r), now(&mut r)], [true; 3]);
        assert_eq!(
            [now(&mut r), now(&mut r), now(&mut r)],
            [false, false, true]
        );
        r.on_ack_sent();
        assert!(!now(&mut r), "still past three at this rcv_nxt");
        // A new rcv_nxt starts the count of immediate ACKs again.
        r.rcv_nxt = 5;
        r.on_ack_sent();
        assert_eq!(
            [now(&mut r), now(&mut r), now(&mut r), now(&mut r)],
            [true, true, true, false]
        );
        // Limit 0: no compression.
        assert!(r.out_of_order_ack_now(0));
    }
}
