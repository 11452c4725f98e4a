//! Discrete-event core: a priority queue (radix heap) of 24-byte `Copy` events ordered by
//! (time, sequence), so simultaneous events run in the order they were scheduled (or in the
//! place reserved for them), and re-armable timer slots that keep at most one live event per
//! component.

pub mod rng;

use crate::time::{Time, NEVER};

/// What an event does when it fires. Every variant names the component it wakes; the
/// simulator dispatches with a `match`, no boxed closures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A port's transmitter finished serialising its current packet (scheduled only when
    /// that end has something to do at its time, see `net::transmit_one`).
    TxDone(u32),
    /// The head packet of a link's propagation pipe reaches the far end.
    Deliver(u32),
    /// A port's feedback marker asked to be woken (periodic measurements).
    PortTimer(u32),
    /// A transport endpoint's timer (RTO, delayed ACK, pacing, application start).
    Endpoint(u32),
    /// Periodic sampling of time series.
    Sample,
    /// A port's link rate changes (piecewise-constant schedules).
    RateChange(u32),
    /// A node element's held packets are due (packets delayed at a node, e.g. ACK delaying).
    NodeRelease(u32),
}

/// 24 bytes: the time, the event's place in the sequence of events scheduled (its tie-break
/// among events at the same time), and the event (a 4-byte kind and a 4-byte component id).
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    ev: Ev,
}

const _: () = assert!(std::mem::size_of::<Entry>() == 24);

/// Bits of time per digit of the radix heap, and digits per level.
const DIGIT_BITS: u32 = 8;
const DIGITS: usize = 1 << DIGIT_BITS;
/// Levels: one per digit of a 64-bit time.
const LEVELS: usize = (64 / DIGIT_BITS) as usize;
const BUCKETS: usize = LEVELS * DIGITS;

/// The event list: a radix heap on event time (base 256) with insertion order among equal
/// times.
///
/// Event times never go below the last one popped (nothing is scheduled in the past), which
/// a radix heap needs. An event at time `t` waits in bucket (level `L`, digit `d`): `L` is
/// the highest base-256 digit in which `t` differs from the last popped time and `d` is
/// `t`'s digit there. Buckets in (level, digit) order hold ever later times, so the earliest
/// event is in the first non-empty bucket, found through a two-level bitmap. Popping takes
/// the front of the bucket of events at exactly the last popped time; when that is empty,
/// the first non-empty bucket's lone event is taken at once, or a bucket of several is
/// redistributed around its earliest time, which moves each of its events to a strictly
/// lower level. So an event moves at most once per level its delay spans (a 10 ms delay in
/// picoseconds spans five), with sequential memory access, where a binary heap of thousands
/// of events spends its time on cache misses.
///
/// A bucket of a few events (at most `NEAR_MAX`) is not redistributed but sorted whole by
/// (time, sequence) into the near list, which is popped from the front; until it is
/// consumed, every event scheduled within that bucket's range is inserted there in its
/// place. Everything else is later than the range, and the last popped time stays within
/// it, so the buckets of those events do not change. With the tens of events a typical run
/// has pending, most events pass through this short list, which stays in the cache, instead
/// of through a bucket at each level below the one they were scheduled in. A list that
/// grows past `NEAR_CAP` (a busy range) is put back into the buckets, and with more than
/// `NEAR_PENDING` events pending (thousands of flows) the queue is a radix heap alone.
///
/// Order: events pop in (time, sequence) order, the sequence being the order in which they
/// were scheduled. A component may also reserve a place in the sequence without scheduling
/// anything ([`EventQueue::reserve`]) and schedule its event there later, if it turns out to
/// be needed ([`EventQueue::schedule_reserved`]): the event then runs exactly where it
/// would have run had it been scheduled at the reservation. Every bucket holds its events in
/// insertion order, which is sequence order but for such late events and for the events of a
/// spilled near list (put back in (time, sequence) order). A scheduled event is appended to
/// its bucket. A redistribution empties the first non-empty bucket, in order,
/// into buckets below it, which are all empty then (it was the first non-empty one, and the
/// current-time bucket has been consumed): each receives a subsequence of an ordered list,
/// and everything scheduled afterwards comes later. Only events of equal time need their
/// sequence compared, and those meet in the current-time bucket or in the near list, which
/// is sorted on both: a redistribution sorts what it moves to the current-time bucket when
/// it arrives out of sequence, a bucket taken into the near list is sorted by time alone
/// only when it holds its events in sequence order, and a late event at the current time is
/// inserted in its place among those still to run.
pub struct EventQueue {
    /// Events at time `last`, in insertion order from `head` on; or, while `near_end` is not
    /// 0, the near list: the events of a small bucket taken whole and every event since
    /// scheduled before `near_end` (the end of that bucket's range), sorted by (time,
    /// sequence) from `head` on.
    now_bucket: Vec<Entry>,
    head: usize,
    near_end: Time,
    /// A fixed-size array, so that an index built below `BUCKETS` needs no bounds check.
    buckets: Box<[Vec<Entry>; BUCKETS]>,
    /// Bit `b % 64` of word `b / 64` set when bucket `b` is non-empty; bit `w` of `summary`
    /// set when word `w` is non-zero.
    occupied: [u64; BUCKETS / 64],
    summary: u32,
    /// Time of the last event popped (the radix heap's reference point).
    last: Time,
    /// Events scheduled so far (those pending are the ones not yet popped).
    scheduled: u64,
    /// Places in the sequence handed out so far (scheduled events and reservations).
    next_seq: u64,
    /// Sequence number of the event popped last; `u64::MAX` between runs (see
    /// [`EventQueue::passed`]).
    cur_seq: u64,
    now: Time,
    /// Events popped so far (the "events" of events/s).
    pub executed: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            now_bucket: Vec::new(),
            head: 0,
            near_end: 0,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; BUCKETS / 64],
            summary: 0,
            last: 0,
            scheduled: 0,
            next_seq: 0,
            cur_seq: u64::MAX,
            now: 0,
            executed: 0,
        }
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Bucket of time `t` > `last`. The level is below `LEVELS` for any `t` ≠ `last`; the
    /// mask says so to the compiler, which then drops the bounds checks on the bucket and
    /// bitmap arrays.
    #[inline(always)]
    fn bucket_of(&self, t: Time) -> usize {
        let level = ((63 - (t ^ self.last).leading_zeros()) / DIGIT_BITS) as usize & (LEVELS - 1);
        let digit = (t >> (level as u32 * DIGIT_BITS)) as usize & (DIGITS - 1);
        level * DIGITS + digit
    }

    #[inline(always)]
    fn put(&mut self, e: Entry) {
        if e.time < self.near_end {
            self.put_near_newest(e);
        } else if e.time == self.last {
            self.now_bucket.push(e);
        } else {
            self.put_later(e);
        }
    }

    /// Inserts `e` in its place in the near list.
    #[inline(always)]
    fn put_near(&mut self, e: Entry) {
        self.insert_near(e, |x| (x.time, x.seq) > (e.time, e.seq));
    }

    /// [`EventQueue::put_near`] for an event scheduled now, whose place in the sequence is
    /// after every event pending: only a later time puts an event behind it.
    #[inline(always)]
    fn put_near_newest(&mut self, e: Entry) {
        debug_assert_eq!(e.seq + 1, self.next_seq, "not the newest event");
        self.insert_near(e, |x| x.time > e.time);
    }

    /// Insertion sort's step: the events `goes_after` puts behind `e` move up by one, from the
    /// end of the near list.
    #[inline(always)]
    fn insert_near(&mut self, e: Entry, goes_after: impl Fn(&Entry) -> bool) {
        self.compact_near();
        self.now_bucket.push(e);
        let near = &mut self.now_bucket[self.head..];
        let mut i = near.len() - 1;
        while i > 0 && goes_after(&near[i - 1]) {
            near[i] = near[i - 1];
            i -= 1;
        }
        near[i] = e;
        if near.len() > NEAR_CAP {
            self.spill_near();
        }
    }

    /// Drops the near list's events already run, so that a list long in use stays short.
    #[inline(always)]
    fn compact_near(&mut self) {
        if self.head >= NEAR_CAP {
            self.now_bucket.copy_within(self.head.., 0);
            self.now_bucket.truncate(self.now_bucket.len() - self.head);
            self.head = 0;
        }
    }

    /// Puts the near list's events back into the buckets (those at the current time into the
    /// current-time bucket, in order) when the range turns out to be a busy one: inserting
    /// into a long sorted list would cost more than the buckets.
    #[cold]
    #[inline(never)]
    fn spill_near(&mut self) {
        self.near_end = 0;
        // Those at the current time come first, in sequence order: they stay.
        let now = self.head + self.now_bucket[self.head..].partition_point(|e| e.time == self.last);
        let mut later = self.now_bucket.split_off(now);
        for &e in &later {
            self.put_later(e);
        }
        later.clear();
    }

    #[inline(always)]
    fn put_later(&mut self, e: Entry) {
        let b = self.bucket_of(e.time);
        self.buckets[b].push(e);
        self.occupied[b / 64] |= 1 << (b % 64);
        self.summary |= 1 << (b / 64);
    }

    /// Schedules `ev` at absolute time `at` (not before now).
    #[inline]
    pub fn schedule(&mut self, at: Time, ev: Ev) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        // `now` ≥ `last` always, so `at` ≥ `last` as the radix heap needs; clamp anyway so a
        // release build given a past time fires it next instead of corrupting the order.
        let at = at.max(self.last);
        self.scheduled += 1;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.put(Entry { time: at, seq, ev });
    }

    /// Reserves the next place in the sequence, as if an event were scheduled now, without
    /// scheduling one: [`EventQueue::schedule_reserved`] may schedule it there later.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Schedules `ev` at `at` in the place `seq` reserved by [`EventQueue::reserve`]: it runs
    /// after the events of time `at` scheduled before the reservation and before those
    /// scheduled after it. The place must still be ahead: not [`EventQueue::passed`]; and it
    /// takes one event (two in one place would tie on both keys).
    #[inline(never)]
    pub fn schedule_reserved(&mut self, at: Time, seq: u64, ev: Ev) {
        debug_assert!(!self.passed(at, seq), "reserved place already passed");
        debug_assert!(at >= self.last);
        self.scheduled += 1;
        let e = Entry { time: at, seq, ev };
        if at < self.near_end {
            self.put_near(e);
        } else if at == self.last {
            // Among the events still to run at this time, in sequence order.
            let rest = &self.now_bucket[self.head..];
            let i = self.head + rest.partition_point(|x| x.seq < seq);
            self.now_bucket.insert(i, e);
        } else {
            self.put_later(e);
        }
    }

    /// Has the run passed the place (`at`, `seq`) (time, then sequence): would an event
    /// there have run already? Between runs ([`EventQueue::advance_to`]) every place at or
    /// before the current time has passed.
    #[inline(always)]
    pub fn passed(&self, at: Time, seq: u64) -> bool {
        at < self.now || (at == self.now && seq < self.cur_seq)
    }

    #[inline]
    fn first_bucket(&self) -> Option<usize> {
        if self.summary == 0 {
            return None;
        }
        let w = self.summary.trailing_zeros() as usize;
        // Word `w` is non-zero when its summary bit is set: the mask changes nothing but
        // bounds the index for the compiler.
        Some(w * 64 + (self.occupied[w].trailing_zeros() as usize & 63))
    }

    #[inline(always)]
    fn clear_occupied(&mut self, b: usize) {
        self.occupied[b / 64] &= !(1 << (b % 64));
        if self.occupied[b / 64] == 0 {
            self.summary &= !(1 << (b / 64));
        }
    }

    /// Pops the next event if it is due at or before `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, Ev)> {
        let e = if self.head < self.now_bucket.len() {
            let e = self.now_bucket[self.head];
            if e.time > until {
                return None;
            }
            self.head += 1;
            if self.head == self.now_bucket.len() {
                // The near list, if it was one, is consumed.
                self.near_end = 0;
            }
            self.last = e.time;
            e
        } else {
            self.pop_from_buckets(until)?
        };
        self.now = e.time;
        self.cur_seq = e.seq;
        self.executed += 1;
        Some((e.time, e.ev))
    }

    /// [`EventQueue::pop_until`] once the events at the last popped time are consumed: takes
    /// the first event of the first non-empty bucket if due at or before `until`.
    #[inline]
    fn pop_from_buckets(&mut self, until: Time) -> Option<Entry> {
        self.now_bucket.clear();
        self.head = 0;
        let b = self.first_bucket()?;
        let bucket = &mut self.buckets[b];
        if let [e] = bucket[..] {
            // A lone event (the common case when the near future is sparse) is next: it is
            // returned at once, without passing through the current-time bucket.
            if e.time > until {
                return None;
            }
            bucket.clear();
            if bucket.capacity() >= TRIM_MIN {
                trim_bucket(bucket, 1);
            }
            self.last = e.time;
            self.clear_occupied(b);
            return Some(e);
        }
        let min = bucket.iter().map(|e| e.time).min().unwrap_or(NEVER);
        if min > until {
            // Leave everything in place: the reference point must not pass a time at which
            // something may still be scheduled.
            return None;
        }
        let level = b / DIGITS;
        let near_hi = min | ((1u64 << (level as u32 * DIGIT_BITS)) - 1);
        // The bucket's range ends at `near_hi`: its digits below the bucket's level are free.
        if bucket.len() <= NEAR_MAX
            && near_hi < NEVER
            && self.scheduled - self.executed <= NEAR_PENDING
        {
            let held = bucket.len();
            self.now_bucket.extend_from_slice(bucket);
            bucket.clear();
            trim_bucket(bucket, held);
            self.clear_occupied(b);
            // A bucket holds its events in sequence order unless a late event or a spilled
            // near list was put in it; in order, a stable sort on time alone leaves them in
            // (time, sequence) order.
            if self.now_bucket.is_sorted_by_key(|e| e.seq) {
                self.now_bucket.sort_by_key(|e| e.time);
            } else {
                self.now_bucket.sort_unstable_by_key(|e| (e.time, e.seq));
            }
            self.near_end = near_hi + 1;
            self.head = 1;
            self.last = min;
            return Some(self.now_bucket[0]);
        }
        self.last = min;
        self.clear_occupied(b);
        let mut moving = std::mem::take(&mut self.buckets[b]);
        // The near list is consumed, so no event moved here is put into it (where the
        // newest-event insertion would misplace it).
        debug_assert_eq!(self.near_end, 0);
        for &e in moving.iter() {
            self.put(e);
        }
        let moved = moving.len();
        moving.clear();
        // A late event, or a spilled near list's events, may sit behind events scheduled
        // after their places.
        if !self.now_bucket.is_sorted_by_key(|e| e.seq) {
            self.now_bucket.sort_by_key(|e| e.seq);
        }
        // Give the bucket its allocation back, so steady state allocates nothing.
        trim_bucket(&mut moving, moved);
        self.buckets[b] = moving;
        // The earliest events went to the current-time bucket, in insertion order.
        self.head = 1;
        Some(self.now_bucket[0])
    }

    /// Moves the clock to `t` (not back) once the events up to `t` have run: every place at
    /// or before `t` has then passed.
    pub fn advance_to(&mut self, t: Time) {
        if t > self.now {
            self.now = t;
        }
        self.cur_seq = u64::MAX;
    }

    pub fn pending(&self) -> usize {
        (self.scheduled - self.executed) as usize
    }

    pub fn peek_time(&self) -> Option<Time> {
        if self.head < self.now_bucket.len() {
            return Some(self.now_bucket[self.head].time);
        }
        let b = self.first_bucket()?;
        self.buckets[b].iter().map(|e| e.time).min()
    }
}

/// Most events in a bucket that is sorted whole into the near list rather than redistributed.
const NEAR_MAX: usize = 16;
/// Most events the near list holds before it is put back into the buckets.
const NEAR_CAP: usize = 32;
/// Most events pending for a bucket to be sorted into the near list: with more (thousands of
/// flows), its range would fill it with events scheduled later, each inserted by a search.
const NEAR_PENDING: u64 = 1024;

/// Capacity below which a bucket's allocation is never cut.
const TRIM_MIN: usize = 32;

/// Cuts the allocation of a bucket that just held `held` events to twice that when it is more
/// than four times larger: each bucket would otherwise keep the most it ever held, and over a
/// run with many flows the buckets' high-water marks add up to many times the events pending
/// at once. A bucket is cut only after it held few events, and grows again by doubling, so the
/// reallocations cost less than moving the events that passed through.
#[inline]
fn trim_bucket(v: &mut Vec<Entry>, held: usize) {
    if v.capacity() >= TRIM_MIN && held < v.capacity() / 4 {
        v.shrink_to(2 * held);
    }
}

/// A component's timer: it says when it wants to be woken (`want`), the slot remembers which
/// event is in the queue (`armed`). Moving a deadline later costs nothing (the early event
/// fires, finds nothing due and re-arms); moving it earlier adds one event and the old one
/// becomes stale and is recognised as such when it fires.
#[derive(Clone, Copy, Debug)]
pub struct TimerSlot {
    armed: Time,
}

impl Default for TimerSlot {
    fn default() -> Self {
        TimerSlot { armed: NEVER }
    }
}

impl TimerSlot {
    /// Makes sure an event is queued no later than `want`. Returns the time to schedule an event
    /// at, if one is needed.
    #[inline]
    pub fn arm(&mut self, want: Time) -> Option<Time> {
        if want < self.armed {
            self.armed = want;
            Some(want)
        } else {
            None
        }
    }

    /// Called when an event for this slot fires at `t`: true if it is the live one (the slot is
    /// then disarmed), false if it is stale.
    #[inline]
    pub fn fire(&mut self, t: Time) -> bool {
        if t == self.armed {
            self.armed = NEVER;
            true
        } else {
            false
        }
    }

    pub fn armed_at(&self) -> Time {
        self.armed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marsaglia's xorshift64 from `x`: the tests' stream of pseudo-random numbers.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn ties_keep_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(10, Ev::Sample);
        q.schedule(5, Ev::TxDone(1));
        q.schedule(10, Ev::TxDone(2));
        q.schedule(10, Ev::Deliver(3));
        let got: Vec<_> = std::iter::from_fn(|| q.pop_until(NEVER)).collect();
        assert_eq!(
            got,
            vec![
                (5, Ev::TxDone(1)),
                (10, Ev::Sample),
                (10, Ev::TxDone(2)),
                (10, Ev::Deliver(3))
            ]
        );
        assert_eq!(q.executed, 4);
    }

    #[test]
    fn pops_in_time_then_insertion_order() {
        // Many ties and an interleaving of pushes and pops, checked against a sort.
        let mut q = EventQueue::new();
        let mut want = Vec::new();
        let mut got = Vec::new();
        let mut x: u64 = 12345;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut id = 0u32;
        for round in 0..200 {
            for _ in 0..(next() % 40) {
                let at = q.now() + next() % 50;
                q.schedule(at, Ev::Endpoint(id));
                want.push((at, id));
                id += 1;
            }
            for _ in 0..(next() % 40 + (round == 199) as u64 * 10_000) {
                match q.pop_until(NEVER) {
                    Some((t, Ev::Endpoint(i))) => got.push((t, i)),
                    Some(other) => panic!("unexpected {other:?}"),
                    None => break,
                }
            }
        }
        // Insertion ids grow with insertion order, so (time, id) is the expected order
        // among the events that were pending together; overall the popped times never
        // decrease and each time's ties come out by id.
        assert_eq!(got.len(), want.len());
        for w in got.windows(2) {
            assert!(
                w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1),
                "{w:?}"
            );
        }
        want.sort();
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(sorted, want);
    }

    #[test]
    fn ties_keep_insertion_order_across_levels() {
        // Delays spanning every level of the radix heap, with many ties at each time, popped
        // in interleaved batches: each pop must be the pending event with the smallest
        // (time, insertion id), as a heap keyed on both gives.
        let mut q = EventQueue::new();
        let mut pending = std::collections::BTreeSet::new();
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let mut id = 0u32;
        let mut popped = 0;
        for _ in 0..300 {
            for _ in 0..(next() % 60) {
                let span = next() % 44;
                // Few distinct times per span: ties are common at every magnitude.
                let at = q.now() + ((next() % 4) << span);
                q.schedule(at, Ev::Endpoint(id));
                pending.insert((at, id));
                id += 1;
            }
            for _ in 0..(next() % 60) {
                let want = pending.pop_first();
                let got = q.pop_until(NEVER).map(|(t, ev)| match ev {
                    Ev::Endpoint(i) => (t, i),
                    other => panic!("unexpected {other:?}"),
                });
                assert_eq!(got, want);
                popped += got.is_some() as u32;
            }
        }
        while let Some(want) = pending.pop_first() {
            assert_eq!(q.pop_until(NEVER), Some((want.0, Ev::Endpoint(want.1))));
        }
        assert!(q.pop_until(NEVER).is_none());
        assert!(popped > 1000 && id > 5000, "{popped} {id}");
    }

    /// Schedules some of the `reserved` places (those whose bit of `coin` is clear) and drops
    /// the passed ones; returns how many were scheduled.
    fn schedule_some_reserved(
        q: &mut EventQueue,
        reserved: &mut Vec<(Time, u64, u32)>,
        pending: &mut std::collections::BTreeSet<(Time, u64, u32)>,
        coin: u64,
    ) -> u32 {
        let mut scheduled = 0;
        reserved.retain(|&(at, s, i)| {
            if q.passed(at, s) {
                return false;
            }
            if (coin >> (s % 61)) & 1 == 0 {
                q.schedule_reserved(at, s, Ev::Endpoint(i));
                pending.insert((at, s, i));
                scheduled += 1;
                return false;
            }
            true
        });
        scheduled
    }

    /// Pops one event and checks it is the pending one with the smallest (time, place).
    fn pop_checked(q: &mut EventQueue, pending: &mut std::collections::BTreeSet<(Time, u64, u32)>) {
        let want = pending.pop_first().map(|(t, _, i)| (t, i));
        let got = q.pop_until(NEVER).map(|(t, ev)| match ev {
            Ev::Endpoint(i) => (t, i),
            other => panic!("unexpected {other:?}"),
        });
        assert_eq!(got, want);
    }

    #[test]
    fn reserved_places_run_where_they_were_reserved() {
        // Events scheduled at once and places reserved for events scheduled later (or never),
        // at few distinct times so that ties are common, popped in interleaved batches: each
        // pop must be the pending event with the smallest (time, place in the sequence), as
        // if every reserved event had been scheduled when its place was reserved.
        let mut q = EventQueue::new();
        let mut pending = std::collections::BTreeSet::new();
        // Reserved places not yet scheduled: (time, seq, id).
        let mut reserved: Vec<(Time, u64, u32)> = Vec::new();
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut seq = 0u64;
        let mut id = 0u32;
        let mut late = 0;
        for _ in 0..400 {
            for _ in 0..(next() % 30) {
                let span = next() % 20;
                let at = q.now() + ((next() % 4) << span);
                if next() % 3 == 0 {
                    assert_eq!(q.reserve(), seq);
                    reserved.push((at, seq, id));
                } else {
                    q.schedule(at, Ev::Endpoint(id));
                    pending.insert((at, seq, id));
                }
                seq += 1;
                id += 1;
            }
            // Schedule some reserved events in their places, drop the passed ones.
            let coin = next();
            late += schedule_some_reserved(&mut q, &mut reserved, &mut pending, coin);
            for _ in 0..(next() % 30) {
                pop_checked(&mut q, &mut pending);
            }
        }
        while let Some((t, _, i)) = pending.pop_first() {
            assert_eq!(q.pop_until(NEVER), Some((t, Ev::Endpoint(i))));
        }
        assert!(q.pop_until(NEVER).is_none());
        assert!(late > 500 && id > 4000, "{late} {id}");
    }

    #[test]
    fn near_list_keeps_the_order_and_spills() {
        // Small buckets go whole into the near list, which then takes every event scheduled
        // within their range, some in reserved places, until it overflows into the buckets
        // again: each pop must still be the pending event with the smallest (time, place).
        let mut q = EventQueue::new();
        let mut pending = std::collections::BTreeSet::new();
        let mut reserved: Vec<(Time, u64, u32)> = Vec::new();
        let mut next = xorshift(0xD1B5_4A32_D192_ED03);
        let (mut seq, mut id) = (0u64, 0u32);
        let (mut used, mut spills) = (0, 0);
        for round in 0..3000 {
            // Bursts into a narrow window ahead, now and then a far one.
            let width = if round % 7 == 0 {
                1 << 30
            } else {
                1 << (next() % 20)
            };
            for _ in 0..(next() % 48) {
                let at = q.now() + next() % width;
                let full = q.near_end != 0 && q.now_bucket.len() - q.head == NEAR_CAP;
                if next() % 4 == 0 {
                    assert_eq!(q.reserve(), seq);
                    reserved.push((at, seq, id));
                } else {
                    q.schedule(at, Ev::Endpoint(id));
                    pending.insert((at, seq, id));
                    spills += (full && q.near_end == 0) as u32;
                }
                seq += 1;
                id += 1;
            }
            let coin = next();
            schedule_some_reserved(&mut q, &mut reserved, &mut pending, coin);
            for _ in 0..(next() % 52) {
                pop_checked(&mut q, &mut pending);
                used += (q.near_end != 0) as u32;
            }
        }
        while let Some((t, _, i)) = pending.pop_first() {
            assert_eq!(q.pop_until(NEVER), Some((t, Ev::Endpoint(i))));
        }
        assert!(q.pop_until(NEVER).is_none());
        assert!(used > 10_000 && spills > 50, "{used} {spills}");
    }

    #[test]
    fn places_pass_in_time_then_sequence_order() {
        let mut q = EventQueue::new();
        q.schedule(10, Ev::Sample);
        let r = q.reserve();
        q.schedule(10, Ev::TxDone(1));
        assert!(!q.passed(10, r));
        assert_eq!(q.pop_until(NEVER), Some((10, Ev::Sample)));
        assert!(!q.passed(10, r));
        q.schedule_reserved(10, r, Ev::TxDone(0));
        assert_eq!(q.pop_until(NEVER), Some((10, Ev::TxDone(0))));
        assert_eq!(q.pop_until(NEVER), Some((10, Ev::TxDone(1))));
        assert!(q.passed(10, r));
        assert!(!q.passed(11, 0));
        q.advance_to(20);
        assert!(q.passed(20, u64::MAX - 1));
    }

    #[test]
    fn pop_until_respects_horizon() {
        let mut q = EventQueue::new();
        q.schedule(100, Ev::Sample);
        assert!(q.pop_until(99).is_none());
        assert_eq!(q.pop_until(100), Some((100, Ev::Sample)));
    }

    #[test]
    fn timer_slot_rearm() {
        let mut t = TimerSlot::default();
        assert_eq!(t.arm(100), Some(100));
        assert_eq!(t.arm(200), None); // later: the 100 event will re-arm
        assert_eq!(t.arm(50), Some(50)); // earlier: new event, 100 becomes stale
        assert!(t.fire(50));
        assert!(!t.fire(100));
        assert_eq!(t.arm(200), Some(200));
    }
}
