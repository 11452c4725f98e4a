//! The emulation plan: the network of a scenario with every host external, and its TCP flows
//! as a plan for real stacks instead of simulated endpoints.

use super::{build_inner, Built};
use crate::net::NodeId;
use crate::scenario::schema::Scenario;
use crate::scenario::ScenarioError;
use serde::Serialize;
use std::path::Path;

/// A TCP flow as the scenario asks for it, for a driver that runs it on a real stack
/// (emulation) instead of the simulator's TCP.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlannedFlow {
    /// Key path of the flow or workload that made it (for errors).
    pub path: String,
    pub name: String,
    pub src: String,
    pub dst: String,
    pub start_s: f64,
    /// Bytes to send; None: until `stop_s` or the end of the run.
    pub size: Option<u64>,
    pub stop_s: Option<f64>,
    /// The scenario's controller and feedback codec names.
    pub cc: String,
    pub ecn: String,
    pub client_initiated: bool,
    pub mss: u32,
    pub sack: bool,
    pub timestamps: bool,
}

/// Builds the network of a scenario for emulation: every host is external (a real stack
/// sends and receives its packets) and the TCP flows are returned as a plan, checked as
/// [`build`] checks them, instead of being simulated. UDP flows are refused.
pub fn build_for_emulation(
    s: &Scenario,
    seed: u64,
    pcap_dir: Option<&Path>,
) -> Result<(Built, Vec<PlannedFlow>), ScenarioError> {
    let (mut built, planned) = build_inner(s, seed, pcap_dir, true)?;
    for n in 0..built.sim.nodes.len() {
        if built.sim.nodes[n].is_host {
            built.sim.set_external(n as NodeId);
        }
    }
    Ok((built, planned.unwrap_or_default()))
}
