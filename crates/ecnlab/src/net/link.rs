//! Propagation pipe: packets in flight on a link, in order, with one pending event (for the
//! head) however many are in flight.

use crate::cache::prefetch;
use crate::packet::PktId;
use crate::time::Time;

pub struct Pipe {
    pub delay: Time,
    /// Node at the far end.
    pub to: u32,
    /// Packets in flight with their arrival times, from `head` on: a first-in first-out list
    /// in a vector, whose arrivals cost a bounds check and an increment (a ring buffer's
    /// wrap-around costs more, on every packet of every hop).
    in_flight: Vec<(Time, PktId)>,
    head: usize,
}

impl Pipe {
    pub fn new(delay: Time, to: u32) -> Self {
        Pipe {
            delay,
            to,
            in_flight: Vec::new(),
            head: 0,
        }
    }

    /// Packets in flight.
    pub fn len(&self) -> usize {
        self.in_flight.len() - self.head
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Arrival time of the last packet in flight, if any.
    #[inline]
    pub fn last_arrival(&self) -> Option<Time> {
        (self.head < self.in_flight.len()).then(|| self.in_flight[self.in_flight.len() - 1].0)
    }

    /// Puts a packet on the wire at `now`; returns the arrival time if the caller must schedule
    /// a delivery event (the pipe was empty).
    #[inline]
    pub fn push(&mut self, now: Time, id: PktId) -> Option<Time> {
        let at = now + self.delay;
        let was_empty = self.head == self.in_flight.len();
        self.in_flight.push((at, id));
        // The next line of the list, for the pushes to come (see `AHEAD`).
        let ahead = self.in_flight.len() + AHEAD;
        prefetch(self.in_flight.as_ptr().wrapping_add(ahead), 16);
        was_empty.then_some(at)
    }

    /// Takes the head packet: its arrival time, the packet, and the next one with its arrival
    /// time if any (the caller then schedules the next delivery).
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, PktId, Option<(Time, PktId)>)> {
        let &(at, id) = self.in_flight.get(self.head)?;
        self.head += 1;
        // The list's line after the next packet's, for the pops to come.
        prefetch(self.in_flight.as_ptr().wrapping_add(self.head + AHEAD), 16);
        if let Some(&next) = self.in_flight.get(self.head) {
            if self.head >= COMPACT_AFTER && self.head >= self.in_flight.len() / 2 {
                self.compact();
            }
            Some((at, id, Some(next)))
        } else {
            self.in_flight.clear();
            self.head = 0;
            Some((at, id, None))
        }
    }

    /// Moves the packets in flight to the front: after at least as many have left as remain,
    /// so each packet is moved at most once on average and the vector holds at most twice
    /// the packets in flight.
    #[cold]
    fn compact(&mut self) {
        self.in_flight.drain(..self.head);
        self.head = 0;
    }
}

/// Departures from a pipe that never empties before its front part is reclaimed.
const COMPACT_AFTER: usize = 64;

/// How far ahead of its use a pipe's list is brought into the cache: one 64-byte line of
/// 16-byte entries. A pipe's list is touched once per packet on that link, with the rest of
/// the run's traffic in between, so each new line of it would otherwise be a cache miss.
const AHEAD: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_leave_in_order_and_each_pop_names_the_next_arrival() {
        // Pushes and pops interleaved so that the pipe empties at times and stays long
        // non-empty at others (past the compaction), checked against a plain queue.
        let mut p = Pipe::new(10, 0);
        let mut want = std::collections::VecDeque::new();
        let mut now = 0;
        let mut id = 0u32;
        for round in 0..2000u64 {
            let pushes = if round % 500 < 250 { 2 } else { round % 2 };
            for _ in 0..pushes {
                now += 1;
                let first = want.is_empty();
                assert_eq!(p.push(now, PktId(id)), first.then_some(now + 10));
                want.push_back((now + 10, id));
                id += 1;
            }
            let pops = if round % 500 < 250 { 1 } else { 2 };
            for _ in 0..pops {
                let got = p.pop();
                let w = want.pop_front();
                assert_eq!(got.map(|(t, i, _)| (t, i.0)), w);
                if let Some((.., next)) = got {
                    assert_eq!(next.map(|(t, i)| (t, i.0)), want.front().copied());
                }
                assert_eq!(p.len(), want.len());
            }
            assert!(p.in_flight.len() <= 2 * p.len() + COMPACT_AFTER + 2);
        }
        assert!(id > 1000);
    }
}
