//! First-in first-out buffer that drops arrivals when full.

use super::{DropReason, Limit, Qdisc, Verdict};
use crate::packet::{Packet, PacketPool, PktId};
use crate::time::Time;
use std::collections::VecDeque;

pub struct DropTail {
    q: VecDeque<(PktId, u32)>,
    bytes: u64,
    limit: Limit,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        DropTail {
            q: VecDeque::with_capacity(64),
            bytes: 0,
            limit,
        }
    }

    /// Appends without a limit check (for disciplines built on a FIFO).
    #[inline]
    pub fn push(&mut self, id: PktId, len: u32) {
        self.q.push_back((id, len));
        self.bytes += len as u64;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<PktId> {
        let (id, len) = self.q.pop_front()?;
        self.bytes -= len as u64;
        if self.q.is_empty() {
            // Back to the buffer's start: a queue that empties after each packet (an idle
            // link's) then writes one line, kept in the cache, instead of walking its whole
            // buffer, a line it last touched a buffer's worth of packets ago at each step.
            self.q.clear();
        }
        Some(id)
    }

    pub fn front(&self) -> Option<PktId> {
        self.q.front().map(|e| e.0)
    }

    /// [`DropTail::pop`], bringing the packet then at the front into the cache for its turn
    /// (see [`PacketPool::prefetch`]).
    #[inline]
    pub fn pop_ahead(&mut self, pool: &PacketPool) -> Option<PktId> {
        let id = self.pop();
        if let Some(&(next, _)) = self.q.front() {
            pool.prefetch(next);
        }
        // The queue's own line a line ahead (8-byte entries), touched only a queueing delay
        // after it was written.
        if let Some(ahead) = self.q.get(8) {
            crate::cache::prefetch(ahead, 8);
        }
        id
    }
}

impl Qdisc for DropTail {
    #[inline]
    fn enqueue(&mut self, _now: Time, id: PktId, pkt: &mut Packet) -> Verdict {
        let len = pkt.wire_len();
        if self.limit.overflows(self.q.len(), self.bytes, len) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.push(id, len);
        Verdict::Enqueued
    }

    #[inline]
    fn dequeue(
        &mut self,
        _now: Time,
        pool: &mut PacketPool,
        _d: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId> {
        self.pop_ahead(pool)
    }

    fn len(&self) -> usize {
        self.q.len()
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn limit(&self) -> Limit {
        self.limit
    }
    fn reads_limit(&self) -> bool {
        false
    }
    fn for_each(&self, f: &mut dyn FnMut(PktId)) {
        self.q.iter().for_each(|e| f(e.0))
    }
    fn idle_dequeue_is_noop(&self) -> bool {
        true
    }
    fn drop_tail_limit(&self) -> Option<Limit> {
        Some(self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Ipv4Repr, UdpRepr};

    fn pkt(payload: u32) -> Packet {
        Packet::new_udp(Ipv4Repr::default(), UdpRepr::default(), payload)
    }

    #[test]
    fn packet_limit() {
        let mut q = DropTail::new(Limit::Packets(2));
        let mut p = pkt(972);
        assert_eq!(q.enqueue(0, PktId(0), &mut p), Verdict::Enqueued);
        assert_eq!(q.enqueue(0, PktId(1), &mut p), Verdict::Enqueued);
        assert_eq!(
            q.enqueue(0, PktId(2), &mut p),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(q.bytes(), 2000);
        assert_eq!(q.pop(), Some(PktId(0)));
    }

    #[test]
    fn byte_limit() {
        let mut q = DropTail::new(Limit::Bytes(2500));
        let mut p = pkt(972); // 1000 B on the wire
        assert_eq!(q.enqueue(0, PktId(0), &mut p), Verdict::Enqueued);
        assert_eq!(q.enqueue(0, PktId(1), &mut p), Verdict::Enqueued);
        assert_eq!(
            q.enqueue(0, PktId(2), &mut p),
            Verdict::Dropped(DropReason::Overflow)
        );
        let mut small = pkt(472);
        assert_eq!(q.enqueue(0, PktId(3), &mut small), Verdict::Enqueued);
    }
}
