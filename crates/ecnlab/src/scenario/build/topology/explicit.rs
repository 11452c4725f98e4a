//! An explicit topology: the nodes and links the scenario lists, one queue per direction of
//! each link.

use crate::net::NodeId;
use crate::scenario::build::bounds::check_routes;
use crate::scenario::build::flows::check_name;
use crate::scenario::build::links::schedule;
use crate::scenario::build::{err, Ctx};
use crate::scenario::schema::{ExplicitSpec, LinkParams, NodeKind};
use crate::scenario::ScenarioError;
use crate::time::Time;
use std::collections::HashMap;

pub(super) fn build(c: &mut Ctx, spec: &ExplicitSpec, until: Time) -> Result<(), ScenarioError> {
    let s = c.scenario;
    let ExplicitSpec { nodes, links } = spec;
    s.limits.nodes().allows(
        "topology.nodes",
        nodes.len() as f64,
        &format!("{} nodes", nodes.len()),
    )?;
    // Nodes with more than one link keep a route to every node.
    let mut degree: HashMap<&str, u32> = HashMap::new();
    for l in links {
        *degree.entry(l.a.as_str()).or_default() += 1;
        *degree.entry(l.b.as_str()).or_default() += 1;
    }
    let tables = degree.values().filter(|&&d| d > 1).count();
    check_routes("topology.links", tables as f64, nodes.len() as f64)?;
    for (i, n) in nodes.iter().enumerate() {
        let path = format!("topology.nodes[{i}].name");
        check_name(&path, "node", &n.name)?;
        if c.names.contains_key(&n.name) {
            return Err(err(path, format!("duplicate node name \"{}\"", n.name)));
        }
        let id = match n.kind {
            NodeKind::Host => c.sim.add_host(&n.name),
            NodeKind::Router => c.sim.add_router(&n.name),
        };
        c.names.insert(n.name.clone(), id);
    }
    let mut joined: HashMap<(NodeId, NodeId), usize> = HashMap::new();
    for (i, l) in links.iter().enumerate() {
        let path = format!("topology.links[{i}]");
        let a = c.node(&format!("{path}.a"), &l.a)?;
        let b = c.node(&format!("{path}.b"), &l.b)?;
        if a == b {
            return Err(err(
                format!("{path}.b"),
                "a link must join two different nodes",
            ));
        }
        // Ports are named "from->to": a second link between the same nodes would
        // give two ports one name.
        if let Some(first) = joined.insert((a.min(b), a.max(b)), i) {
            return Err(err(
                format!("{path}.b"),
                format!(
                    "topology.links[{first}] already joins \"{}\" and \"{}\"; parallel links are not supported",
                    l.a, l.b
                ),
            ));
        }
        let spec = schedule(
            &path,
            &LinkParams {
                rate: l.rate,
                delay: l.delay,
                framing: l.framing,
                schedule: l.schedule.clone(),
                trace: l.trace.clone(),
                batch: l.batch.clone(),
            },
            until,
            &s.limits,
        )?;
        let qa = c.queue(&format!("{path}.queue"), &l.queue)?;
        let qb = c.queue(
            &format!("{path}.queue_ba"),
            l.queue_ba.as_ref().unwrap_or(&l.queue),
        )?;
        c.sim.connect(a, b, &spec, qa, qb);
    }
    Ok(())
}
