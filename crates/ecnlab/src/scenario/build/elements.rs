//! The scenario's node elements (an access point's scheduler, a proxy), built after the
//! topology and before the flows.

use super::{err, Ctx};
use crate::scenario::registry;
use crate::scenario::ScenarioError;

/// Builds the scenario's node elements (after the topology, before the flows).
pub(super) fn build_elements(c: &mut Ctx) -> Result<(), ScenarioError> {
    for (i, e) in c.scenario.elements.iter().enumerate() {
        let path = format!("elements[{i}]");
        let node = c.node(&format!("{path}.node"), &e.node)?;
        if c.sim.nodes[node as usize].element.is_some() {
            return Err(err(
                format!("{path}.node"),
                format!("\"{}\" already has an element; a node carries one", e.node),
            ));
        }
        let sim = &c.sim;
        let port_index = |ppath: &str, name: &str| -> Result<usize, ScenarioError> {
            let n = &sim.nodes[node as usize];
            n.ports()
                .iter()
                .position(|&p| sim.ports[p as usize].name == name)
                .ok_or_else(|| {
                    let own: Vec<&str> = n
                        .ports()
                        .iter()
                        .map(|&p| sim.ports[p as usize].name.as_str())
                        .collect();
                    err(
                        ppath,
                        format!(
                            "\"{name}\" is not a port of \"{}\"; its ports are {}",
                            e.node,
                            own.join(", ")
                        ),
                    )
                })
        };
        let el = registry::element(&path, &e.component, c.seed, i as u64, &port_index)?;
        registry::record_field(&path, "node", e.node.clone().into());
        c.sim.set_element(node, el);
    }
    Ok(())
}
