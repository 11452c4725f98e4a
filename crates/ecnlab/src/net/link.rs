//! Propagation pipe: packets in flight on a link, in order, with one pending event (for the
//! head) however many are in flight.

use crate::packet::PktId;
use crate::time::Time;
use std::collections::VecDeque;

pub struct Pipe {
    pub delay: Time,
    /// Node at the far end.
    pub to: u32,
    pub in_flight: VecDeque<(Time, PktId)>,
}

impl Pipe {
    pub fn new(delay: Time, to: u32) -> Self {
        Pipe {
            delay,
            to,
            in_flight: VecDeque::new(),
        }
    }

    /// Puts a packet on the wire at `now`; returns the arrival time if the caller must schedule
    /// a delivery event (the pipe was empty).
    #[inline]
    pub fn push(&mut self, now: Time, id: PktId) -> Option<Time> {
        let at = now + self.delay;
        let was_empty = self.in_flight.is_empty();
        self.in_flight.push_back((at, id));
        was_empty.then_some(at)
    }
}
