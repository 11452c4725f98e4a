//! Topology builders: dumbbell and multi-hop chain (parking lot).

use super::{LinkSpec, NodeId, PortId, Sim};
use crate::aqm::Qdisc;

/// Builds queue disciplines for ports as the topology is laid out.
pub type QdiscFactory<'a> = dyn FnMut(&str) -> Box<dyn Qdisc> + 'a;

/// The nodes and ports of a dumbbell.
#[derive(Clone, Debug)]
pub struct Dumbbell {
    pub left: Vec<NodeId>,
    pub right: Vec<NodeId>,
    pub router_left: NodeId,
    pub router_right: NodeId,
    /// left router → right router (forward bottleneck) and back.
    pub bottleneck: PortId,
    pub bottleneck_rev: PortId,
}

/// `n_left` hosts — access — router L — bottleneck — router R — access — `n_right` hosts.
/// Hosts are named `l0..`, `r0..`; routers `rl`, `rr`. `access_qdisc` is called with the port
/// name for every access port; the bottleneck's forward and reverse disciplines are given.
pub fn dumbbell(
    sim: &mut Sim,
    n_left: usize,
    n_right: usize,
    access: &LinkSpec,
    bottleneck: &LinkSpec,
    bottleneck_fwd: Box<dyn Qdisc>,
    bottleneck_rev: Box<dyn Qdisc>,
    access_qdisc: &mut QdiscFactory,
) -> Dumbbell {
    let rl = sim.add_router("rl");
    let rr = sim.add_router("rr");
    let (fwd, rev) = sim.connect(rl, rr, bottleneck, bottleneck_fwd, bottleneck_rev);
    let mut attach = |sim: &mut Sim, prefix: &str, n: usize, router: NodeId| -> Vec<NodeId> {
        (0..n)
            .map(|i| {
                let h = sim.add_host(&format!("{prefix}{i}"));
                let hn = sim.nodes[h as usize].name.clone();
                let rn = sim.nodes[router as usize].name.clone();
                let qa = access_qdisc(&format!("{hn}->{rn}"));
                let qb = access_qdisc(&format!("{rn}->{hn}"));
                sim.connect(h, router, access, qa, qb);
                h
            })
            .collect()
    };
    let left = attach(sim, "l", n_left, rl);
    let right = attach(sim, "r", n_right, rr);
    Dumbbell {
        left,
        right,
        router_left: rl,
        router_right: rr,
        bottleneck: fwd,
        bottleneck_rev: rev,
    }
}

/// A chain of `hops + 1` routers `c0..c{hops}` joined by `hops` links, for multi-hop and
/// parking-lot topologies. Returns the routers and the forward ports (c_i → c_{i+1}).
pub fn chain(
    sim: &mut Sim,
    hops: usize,
    link: &LinkSpec,
    qdisc: &mut QdiscFactory,
) -> (Vec<NodeId>, Vec<PortId>) {
    let routers: Vec<NodeId> = (0..=hops)
        .map(|i| sim.add_router(&format!("c{i}")))
        .collect();
    let mut fwd = Vec::new();
    for w in routers.windows(2) {
        let (a, b) = (w[0], w[1]);
        let na = sim.nodes[a as usize].name.clone();
        let nb = sim.nodes[b as usize].name.clone();
        let qa = qdisc(&format!("{na}->{nb}"));
        let qb = qdisc(&format!("{nb}->{na}"));
        fwd.push(sim.connect(a, b, link, qa, qb).0);
    }
    (routers, fwd)
}
