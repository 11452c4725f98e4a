//! The dumbbell: `left` hosts and `right` hosts on either side of one bottleneck between two
//! routers ([`crate::net::topology::dumbbell`]), with its queues, reverse queue, access
//! queues and an optional marker on the bottleneck.

use crate::net::topology;
use crate::scenario::build::links::schedule;
use crate::scenario::build::{err, set_marker, Ctx};
use crate::scenario::limits;
use crate::scenario::registry;
use crate::scenario::schema::DumbbellSpec;
use crate::scenario::ScenarioError;
use crate::time::Time;

pub(super) fn build(c: &mut Ctx, spec: &DumbbellSpec, until: Time) -> Result<(), ScenarioError> {
    let s = c.scenario;
    let DumbbellSpec {
        left,
        right,
        access,
        bottleneck,
        bottleneck_queue,
        reverse_queue,
        bottleneck_marker,
        access_queue,
    } = spec;
    if *left == 0 || *right == 0 {
        return Err(err(
            if *left == 0 {
                "topology.left"
            } else {
                "topology.right"
            },
            "must be at least 1",
        ));
    }
    let nodes = *left as f64 + *right as f64 + 2.0;
    s.limits.nodes().allows(
        if left >= right {
            "topology.left"
        } else {
            "topology.right"
        },
        nodes,
        &format!("{} hosts and routers", limits::figure(nodes)),
    )?;
    let acc = schedule("topology.access", access, until, &s.limits)?;
    let bn = schedule("topology.bottleneck", bottleneck, until, &s.limits)?;
    let fwd = c.queue("topology.bottleneck_queue", bottleneck_queue)?;
    let rev = c.queue(
        "topology.reverse_queue",
        reverse_queue.as_ref().unwrap_or(bottleneck_queue),
    )?;
    // Validate the access queue once, then build one per port.
    c.queue("topology.access_queue", access_queue)?;
    let (seed, base) = (c.seed, c.qdisc_index);
    let mut k = 0u64;
    let mut factory = |_name: &str| {
        k += 1;
        registry::queue(
            "topology.access_queue",
            access_queue,
            seed,
            base + 1_000_000 + k,
        )
        .expect("validated above")
    };
    let d = topology::dumbbell(&mut c.sim, *left, *right, &acc, &bn, fwd, rev, &mut factory);
    if let Some(m) = bottleneck_marker {
        let mk = registry::marker("topology.bottleneck_marker", m, c.seed, d.bottleneck as u64)?;
        set_marker(c, "topology.bottleneck_marker", d.bottleneck, mk)?;
    }
    Ok(())
}
