//! Discrete-event core: a priority queue of small `Copy` events ordered by (time, insertion
//! sequence), so simultaneous events run in the order they were scheduled, and re-armable
//! timer slots that keep at most one live event per component.

pub mod rng;

use crate::time::{Time, NEVER};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What an event does when it fires. Every variant names the component it wakes; the
/// simulator dispatches with a `match`, no boxed closures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A port's transmitter finished serialising its current packet.
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

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // BinaryHeap is a max-heap: reverse so the earliest (time, seq) is on top.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// The event list.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    now: Time,
    /// Events popped so far (the "events" of events/s).
    pub executed: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `ev` at absolute time `at` (not before now).
    #[inline]
    pub fn schedule(&mut self, at: Time, ev: Ev) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        self.seq += 1;
        self.heap.push(Entry {
            time: at,
            seq: self.seq,
            ev,
        });
    }

    /// Pops the next event if it is due at or before `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, Ev)> {
        match self.heap.peek() {
            Some(e) if e.time <= until => {
                let e = self.heap.pop().unwrap();
                self.now = e.time;
                self.executed += 1;
                Some((e.time, e.ev))
            }
            _ => None,
        }
    }

    pub fn advance_to(&mut self, t: Time) {
        if t > self.now {
            self.now = t;
        }
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
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
