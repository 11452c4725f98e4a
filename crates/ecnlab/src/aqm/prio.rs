//! Strict priority over two bands, each its own queue discipline: pure TCP ACKs go to the
//! first band, everything else to the second, and the second is served only when the first is
//! empty. HFCC's routers protect ACKs this way (§IV-C2 of its paper); any scheme can use it.
//!
//! Each band enforces its own buffer limit; [`Qdisc::limit`] reports the data band's, which
//! is the one markers reason about. What a band pushes out to take a packet in (FQ-CoDel's
//! drops from its fattest flow) is handed on to the port, which counts and frees it as it does
//! under that discipline alone.

use super::{DropReason, HeldQdisc, Limit, Qdisc, Verdict};
use crate::packet::{Packet, PacketPool, PktId};
use crate::time::Time;

/// Each band is held by value when it is a DropTail (HFCC's are), so that the per-packet
/// calls reach it without a virtual call.
pub struct PrioQueue {
    ack: HeldQdisc,
    data: HeldQdisc,
    /// Packets dequeued from the ACK band while the data band held packets (served ahead).
    pub acks_ahead: u64,
}

impl PrioQueue {
    pub fn new(ack: Box<dyn Qdisc>, data: Box<dyn Qdisc>) -> Self {
        PrioQueue {
            ack: HeldQdisc::new(ack),
            data: HeldQdisc::new(data),
            acks_ahead: 0,
        }
    }
}

impl Qdisc for PrioQueue {
    fn feedback(&self) -> Option<&'static str> {
        self.data.feedback().or(self.ack.feedback())
    }

    #[inline]
    fn enqueue(&mut self, now: Time, id: PktId, pkt: &mut Packet) -> Verdict {
        if pkt.is_pure_ack() {
            self.ack.enqueue(now, id, pkt)
        } else {
            self.data.enqueue(now, id, pkt)
        }
    }

    #[inline]
    fn dequeue(
        &mut self,
        now: Time,
        pool: &mut PacketPool,
        dropped: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId> {
        if let Some(id) = self.ack.dequeue(now, pool, dropped) {
            if !self.data.is_empty() {
                self.acks_ahead += 1;
            }
            return Some(id);
        }
        self.data.dequeue(now, pool, dropped)
    }

    fn len(&self) -> usize {
        self.ack.len() + self.data.len()
    }
    fn bytes(&self) -> u64 {
        self.ack.bytes() + self.data.bytes()
    }
    fn limit(&self) -> Limit {
        self.data.limit()
    }
    fn limits(&self) -> Vec<Limit> {
        let mut l = self.ack.limits();
        l.extend(self.data.limits());
        l
    }
    fn reads_limit(&self) -> bool {
        self.ack.reads_limit() || self.data.reads_limit()
    }
    fn set_rate(&mut self, bps: u64) {
        self.ack.set_rate(bps);
        self.data.set_rate(bps);
    }
    fn avg_queue(&self) -> Option<f64> {
        self.data.avg_queue()
    }
    fn for_each(&self, f: &mut dyn FnMut(PktId)) {
        self.ack.for_each(f);
        self.data.for_each(f);
    }
    fn evicted(&mut self) -> Option<(PktId, DropReason)> {
        self.ack.evicted().or_else(|| self.data.evicted())
    }
    fn evicts(&self) -> bool {
        self.ack.evicts() || self.data.evicts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::DropTail;
    use crate::wire::{Ipv4Repr, TcpFlags, TcpRepr};

    fn seg(payload: u32, flags: u16) -> Packet {
        Packet::new_tcp(
            Ipv4Repr::default(),
            TcpRepr {
                flags: TcpFlags(flags),
                ..Default::default()
            },
            payload,
        )
    }

    #[test]
    fn acks_leave_first_and_each_band_keeps_its_limit() {
        let band = |n| Box::new(DropTail::new(Limit::Packets(n))) as Box<dyn Qdisc>;
        let mut q = PrioQueue::new(band(2), band(3));
        let mut pool = PacketPool::new();
        let mut order = Vec::new();
        let kinds = [
            seg(1000, TcpFlags::ACK),
            seg(1000, TcpFlags::ACK),
            seg(0, TcpFlags::ACK),
            seg(0, TcpFlags::SYN),
            seg(0, TcpFlags::ACK),
            seg(0, TcpFlags::ACK | TcpFlags::FIN),
            seg(0, TcpFlags::ACK),
        ];
        let mut verdicts = Vec::new();
        for mut p in kinds {
            let id = pool.alloc(p);
            verdicts.push(q.enqueue(0, id, &mut p));
        }
        // Data band: two data segments, the SYN, the FIN (the fourth overflows its 3);
        // ACK band: two pure ACKs (the third overflows its 2).
        use Verdict::*;
        assert_eq!(
            verdicts,
            [
                Enqueued,
                Enqueued,
                Enqueued,
                Enqueued,
                Enqueued,
                Dropped(DropReason::Overflow),
                Dropped(DropReason::Overflow)
            ]
        );
        assert_eq!(q.len(), 5);
        assert_eq!(q.limit(), Limit::Packets(3));
        let mut d = Vec::new();
        while let Some(id) = q.dequeue(0, &mut pool, &mut d) {
            order.push(id.0);
        }
        assert_eq!(order, [2, 4, 0, 1, 3]);
        assert_eq!(q.acks_ahead, 2);
        assert!(q.is_empty() && q.bytes() == 0);
    }
}
