//! Static shortest-path routes: fewest hops, ties broken by the lowest port index, so
//! routes are deterministic.
//!
//! A breadth-first search from every destination host costs hosts × nodes: 37 s to validate
//! a dumbbell of 32 000 hosts. Most hosts hang off one node by their only link, and every
//! path to such a host runs through that node, so a node's route to the host is its route
//! to the node it hangs off (and, at that node, the link to the host): one search per node
//! that hosts hang off, not one per host.

use super::{NodeId, PortId, Sim};
use std::collections::{HashMap, VecDeque};

/// Hops from every node to one node (`u32::MAX`: no path), searched backwards from it.
struct Search {
    dist: Vec<u32>,
    queue: VecDeque<usize>,
}

impl Search {
    fn new(n: usize) -> Self {
        Search {
            dist: vec![u32::MAX; n],
            queue: VecDeque::new(),
        }
    }

    fn from(&mut self, sim: &Sim, into: &[Vec<PortId>], dst: usize) {
        self.dist.iter_mut().for_each(|d| *d = u32::MAX);
        self.dist[dst] = 0;
        self.queue.clear();
        self.queue.push_back(dst);
        while let Some(v) = self.queue.pop_front() {
            for &pid in &into[v] {
                let u = sim.ports[pid as usize].node as usize;
                if self.dist[u] == u32::MAX {
                    self.dist[u] = self.dist[v] + 1;
                    self.queue.push_back(u);
                }
            }
        }
    }

    /// The port by which `u` gets one hop closer (the first such in its port order).
    fn next_port(&self, sim: &Sim, u: usize) -> Option<PortId> {
        let d = self.dist[u];
        if d == u32::MAX || d == 0 {
            return None;
        }
        sim.nodes[u]
            .ports
            .iter()
            .copied()
            .find(|&pid| self.dist[sim.far_end(pid) as usize] == d - 1)
    }
}

impl Sim {
    /// The node port `pid` leads to.
    fn far_end(&self, pid: PortId) -> NodeId {
        self.pipes[self.ports[pid as usize].link as usize].to
    }

    /// Computes static shortest-path routes (fewest hops; ties broken by lowest port index,
    /// so routes are deterministic). Called by `run` if not called before.
    pub fn compute_routes(&mut self) {
        let n = self.nodes.len();
        // Reverse adjacency: for each node, the ports that lead into it.
        let mut into: Vec<Vec<PortId>> = vec![Vec::new(); n];
        for pid in 0..self.ports.len() {
            into[self.far_end(pid as PortId) as usize].push(pid as PortId);
        }
        // Nodes with a route table (more than one port); the others have one way out.
        let tables: Vec<usize> = (0..n).filter(|&u| self.nodes[u].ports.len() > 1).collect();
        let mut routes: Vec<Vec<PortId>> = vec![Vec::new(); n];
        for &u in &tables {
            routes[u] = vec![PortId::MAX; n];
        }
        let mut search = Search::new(n);
        // Per node hosts hang off: each table's next port towards it.
        let mut towards: HashMap<usize, Vec<Option<PortId>>> = HashMap::new();
        for dst in 0..n {
            if !self.nodes[dst].is_host {
                continue;
            }
            match self.nodes[dst].ports.as_slice() {
                // Nothing reaches a host without links.
                [] => {}
                &[only] => {
                    let hub = self.far_end(only) as usize;
                    let via = towards.entry(hub).or_insert_with(|| {
                        search.from(self, &into, hub);
                        tables.iter().map(|&u| search.next_port(self, u)).collect()
                    });
                    for (k, &u) in tables.iter().enumerate() {
                        let port = if u == hub {
                            // The hub's link to the host: the first of its ports that leads
                            // there, as the search from the host would pick (a node's ports
                            // are numbered in its order; scanning the hub's ports instead
                            // would make every host cost as many steps as the hub has hosts).
                            into[dst]
                                .iter()
                                .copied()
                                .filter(|&pid| self.ports[pid as usize].node as usize == hub)
                                .min()
                        } else if u == dst {
                            None
                        } else {
                            via[k]
                        };
                        routes[u][dst] = port.unwrap_or(PortId::MAX);
                    }
                }
                _ => {
                    search.from(self, &into, dst);
                    for &u in &tables {
                        if u != dst {
                            routes[u][dst] = search.next_port(self, u).unwrap_or(PortId::MAX);
                        }
                    }
                }
            }
        }
        for (node, r) in self.nodes.iter_mut().zip(routes) {
            node.routes = r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{DropTail, Limit};
    use crate::net::LinkSpec;
    use rand::{Rng, SeedableRng};

    /// The search from every destination host, as routes were first computed.
    fn one_search_per_host(sim: &Sim) -> Vec<Vec<PortId>> {
        let n = sim.nodes.len();
        let mut into: Vec<Vec<PortId>> = vec![Vec::new(); n];
        for pid in 0..sim.ports.len() {
            into[sim.far_end(pid as PortId) as usize].push(pid as PortId);
        }
        let mut out: Vec<Vec<PortId>> = (0..n)
            .map(|u| {
                if sim.nodes[u].ports.len() > 1 {
                    vec![PortId::MAX; n]
                } else {
                    Vec::new()
                }
            })
            .collect();
        let mut search = Search::new(n);
        for dst in (0..n).filter(|&d| sim.nodes[d].is_host) {
            search.from(sim, &into, dst);
            for u in 0..n {
                if u != dst && !out[u].is_empty() {
                    out[u][dst] = search.next_port(sim, u).unwrap_or(PortId::MAX);
                }
            }
        }
        out
    }

    #[test]
    fn routes_are_those_of_one_search_per_host() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let q = || Box::new(DropTail::new(Limit::Packets(10))) as Box<dyn crate::aqm::Qdisc>;
        let spec = LinkSpec::new(1_000_000, 0);
        for case in 0..200 {
            let mut sim = Sim::new(1);
            let routers: Vec<NodeId> = (0..rng.gen_range(1..8))
                .map(|i| sim.add_router(&format!("r{i}")))
                .collect();
            let mut joined = std::collections::HashSet::new();
            for _ in 0..rng.gen_range(0..14) {
                let (a, b) = (
                    routers[rng.gen_range(0..routers.len())],
                    routers[rng.gen_range(0..routers.len())],
                );
                if a != b && joined.insert((a.min(b), a.max(b))) {
                    sim.connect(a, b, &spec, q(), q());
                }
            }
            let hosts: Vec<NodeId> = (0..rng.gen_range(1..12))
                .map(|i| sim.add_host(&format!("h{i}")))
                .collect();
            for &h in &hosts {
                // Most hang off one router; some have two links, some none, some hang off
                // another host.
                let links = [0, 1, 1, 1, 1, 2][rng.gen_range(0..6)];
                for _ in 0..links {
                    let to = if rng.gen_bool(0.1) {
                        hosts[rng.gen_range(0..hosts.len())]
                    } else {
                        routers[rng.gen_range(0..routers.len())]
                    };
                    if to != h && joined.insert((h.min(to), h.max(to))) {
                        sim.connect(h, to, &spec, q(), q());
                    }
                }
            }
            sim.compute_routes();
            let want = one_search_per_host(&sim);
            for (u, node) in sim.nodes.iter().enumerate() {
                assert_eq!(node.routes, want[u], "case {case}, node {u}");
            }
        }
    }
}
