//! The path most scheme tests run on: `s —100 Mb/s, 1 ms— r1 —bottleneck— r2 —100 Mb/s,
//! 1 ms— d`, every queue but the bottleneck's a 1000-packet DropTail.

use super::{LinkSpec, NodeId, PortId, Sim};
use crate::aqm::{DropTail, Limit, Qdisc};
use crate::time::MS;

pub(crate) struct Line {
    pub s: NodeId,
    pub d: NodeId,
    /// r1's port towards r2.
    pub bottleneck: PortId,
}

pub(crate) fn droptail(packets: u32) -> Box<dyn Qdisc> {
    Box::new(DropTail::new(Limit::Packets(packets)))
}

pub(crate) fn line(sim: &mut Sim, bottleneck: &LinkSpec, queue: Box<dyn Qdisc>) -> Line {
    let (s, r1, r2, d) = (
        sim.add_host("s"),
        sim.add_router("r1"),
        sim.add_router("r2"),
        sim.add_host("d"),
    );
    let access = LinkSpec::new(100_000_000, MS);
    sim.connect(s, r1, &access, droptail(1000), droptail(1000));
    let (bottleneck, _) = sim.connect(r1, r2, bottleneck, queue, droptail(1000));
    sim.connect(r2, d, &access, droptail(1000), droptail(1000));
    Line { s, d, bottleneck }
}
