//! The chain (parking lot): `hops` routers in a line with a queue (and an optional marker) on
//! every forward hop, `end_hosts` at both ends and `cross_hosts` at every router
//! ([`crate::net::topology::chain`]).

use crate::net::{topology, NodeId, Sim};
use crate::scenario::build::bounds::check_routes;
use crate::scenario::build::links::schedule;
use crate::scenario::build::{err, set_marker, Ctx};
use crate::scenario::limits;
use crate::scenario::registry;
use crate::scenario::schema::ChainSpec;
use crate::scenario::ScenarioError;
use crate::time::Time;

pub(super) fn build(c: &mut Ctx, spec: &ChainSpec, until: Time) -> Result<(), ScenarioError> {
    let s = c.scenario;
    let ChainSpec {
        hops,
        link,
        access,
        end_hosts,
        cross_hosts,
        queue,
        marker,
        access_queue,
    } = spec;
    if *hops == 0 {
        return Err(err("topology.hops", "must be at least 1"));
    }
    let nodes = (*hops as f64 + 1.0) * (*cross_hosts as f64 + 1.0) + 2.0 * *end_hosts as f64;
    s.limits.nodes().allows(
        if cross_hosts >= end_hosts {
            "topology.cross_hosts"
        } else {
            "topology.end_hosts"
        },
        nodes,
        &format!("{} hosts and routers", limits::figure(nodes)),
    )?;
    check_routes("topology.hops", *hops as f64 + 1.0, nodes)?;
    let l = schedule("topology.link", link, until, &s.limits)?;
    let acc = schedule("topology.access", access, until, &s.limits)?;
    c.queue("topology.queue", queue)?;
    c.queue("topology.access_queue", access_queue)?;
    if let Some(m) = marker {
        registry::marker("topology.marker", m, c.seed, 0)?;
    }
    let (seed, base) = (c.seed, c.qdisc_index);
    let mut k = 0u64;
    let mut qf = |_n: &str| {
        k += 1;
        registry::queue("topology.queue", queue, seed, base + k).expect("validated above")
    };
    let (routers, fwd) = topology::chain(&mut c.sim, *hops, &l, &mut qf);
    if let Some(m) = marker {
        for &p in &fwd {
            let mk =
                registry::marker("topology.marker", m, c.seed, p as u64).expect("validated above");
            set_marker(c, "topology.marker", p, mk)?;
        }
    }
    let mut k2 = 0u64;
    let mut attach = |sim: &mut Sim, name: String, r: NodeId| {
        k2 += 2;
        let h = sim.add_host(&name);
        let qa = registry::queue(
            "topology.access_queue",
            access_queue,
            seed,
            base + 2_000_000 + k2,
        )
        .expect("validated");
        let qb = registry::queue(
            "topology.access_queue",
            access_queue,
            seed,
            base + 2_000_001 + k2,
        )
        .expect("validated");
        sim.connect(h, r, &acc, qa, qb);
    };
    for i in 0..*end_hosts {
        attach(&mut c.sim, format!("l{i}"), routers[0]);
        attach(&mut c.sim, format!("r{i}"), routers[*hops]);
    }
    for (ri, &r) in routers.iter().enumerate() {
        for j in 0..*cross_hosts {
            attach(&mut c.sim, format!("x{ri}_{j}"), r);
        }
    }
    Ok(())
}
