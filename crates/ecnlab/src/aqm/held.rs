//! A queue discipline held by value when it is a plain FIFO (see [`HeldQdisc`]).

use super::{DropReason, DropTail, Qdisc, Verdict};
use crate::packet::{Packet, PacketPool, PktId};
use crate::time::Time;

/// A queue discipline held where it is used (a port's, a priority band's): a DropTail FIFO
/// (the access links of most topologies, HFCC's bands) by value and called directly, any
/// other discipline behind its trait object. The per-packet calls are matched here;
/// everything else goes to the discipline as a `dyn Qdisc` (Deref).
pub enum HeldQdisc {
    Fifo(DropTail),
    Other(Box<dyn Qdisc>),
}

impl HeldQdisc {
    pub fn new(q: Box<dyn Qdisc>) -> Self {
        match q.drop_tail_limit() {
            Some(limit) if q.is_empty() => HeldQdisc::Fifo(DropTail::new(limit)),
            _ => HeldQdisc::Other(q),
        }
    }

    #[inline(always)]
    pub fn enqueue(&mut self, now: Time, id: PktId, pkt: &mut Packet) -> Verdict {
        match self {
            HeldQdisc::Fifo(q) => q.enqueue(now, id, pkt),
            HeldQdisc::Other(q) => q.enqueue(now, id, pkt),
        }
    }

    #[inline(always)]
    pub fn dequeue(
        &mut self,
        now: Time,
        pool: &mut PacketPool,
        dropped: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId> {
        match self {
            HeldQdisc::Fifo(q) => q.dequeue(now, pool, dropped),
            HeldQdisc::Other(q) => q.dequeue(now, pool, dropped),
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        match self {
            HeldQdisc::Fifo(q) => q.len(),
            HeldQdisc::Other(q) => q.len(),
        }
    }

    #[inline(always)]
    pub fn bytes(&self) -> u64 {
        match self {
            HeldQdisc::Fifo(q) => q.bytes(),
            HeldQdisc::Other(q) => q.bytes(),
        }
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::ops::Deref for HeldQdisc {
    type Target = dyn Qdisc;
    fn deref(&self) -> &(dyn Qdisc + 'static) {
        match self {
            HeldQdisc::Fifo(q) => q,
            HeldQdisc::Other(q) => q.as_ref(),
        }
    }
}

impl std::ops::DerefMut for HeldQdisc {
    fn deref_mut(&mut self) -> &mut (dyn Qdisc + 'static) {
        match self {
            HeldQdisc::Fifo(q) => q,
            HeldQdisc::Other(q) => q.as_mut(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{Limit, PrioQueue};

    #[test]
    fn an_empty_drop_tail_is_held_by_value_and_any_other_discipline_boxed() {
        let q = HeldQdisc::new(Box::new(DropTail::new(Limit::Bytes(3000))));
        assert!(matches!(q, HeldQdisc::Fifo(_)));
        assert_eq!((q.limit(), q.len()), (Limit::Bytes(3000), 0));
        // One already holding packets keeps them (it stays as given).
        let mut held = DropTail::new(Limit::Packets(5));
        held.push(PktId(7), 100);
        let q = HeldQdisc::new(Box::new(held));
        assert!(matches!(q, HeldQdisc::Other(_)));
        assert_eq!((q.len(), q.bytes()), (1, 100));
        // A discipline built on DropTails is not one.
        let fifo = || Box::new(DropTail::new(Limit::Packets(5))) as Box<dyn Qdisc>;
        let q = HeldQdisc::new(Box::new(PrioQueue::new(fifo(), fifo())));
        assert!(matches!(q, HeldQdisc::Other(_)));
    }
}
