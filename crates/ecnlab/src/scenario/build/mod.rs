//! Turns a [`Scenario`] into a ready-to-run [`Sim`], checking every reference and value on
//! the way; every error names the key path. This file holds the order of the work — bounds,
//! topology, routes, elements, port overrides, flows and workloads, captures, measurement —
//! and each thing built has its own file:
//! - [`topology`]: the network of each topology kind, and [`links`] the links they are made of;
//! - [`elements`]: the nodes' elements;
//! - [`flows`], [`tcp_flow`] and [`workloads`]: the traffic;
//! - [`emulation`]: the plan of TCP flows for real stacks;
//! - [`bounds`]: what the run may cost, checked before it starts.

mod bounds;
mod elements;
mod emulation;
mod flows;
mod links;
mod tcp_flow;
mod topology;
mod workloads;

pub use emulation::{build_for_emulation, PlannedFlow};
pub use workloads::SizeSampler;

use super::registry;
use super::schema::*;
use super::ScenarioError;
use crate::net::{NodeId, PortId, Sim};
use bounds::{check_budget, check_flow_count, check_integers, check_sample_rows, memory_available};
use elements::build_elements;
use flows::add_flow_spec;
use std::collections::HashMap;
use std::path::Path;
use topology::build_topology;
use workloads::add_workload;

/// A built simulation and what the run needs to know about it.
pub struct Built {
    pub sim: Sim,
    /// Legitimate but probably unintended choices, said once per run (and kept in run.json).
    pub warnings: Vec<String>,
}

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, msg)
}

struct Ctx<'a> {
    sim: Sim,
    seed: u64,
    qdisc_index: u64,
    names: HashMap<String, NodeId>,
    /// Flow names taken so far (every flow's name is unique).
    flow_names: std::collections::HashSet<String>,
    warnings: Vec<String>,
    /// (source, destination, codec) triples whose path was checked for the codec's feedback,
    /// and the flow entries already warned about.
    feedback_checked: std::collections::HashSet<(NodeId, NodeId, String)>,
    feedback_warned: std::collections::HashSet<String>,
    scenario: &'a Scenario,
    /// Emulation: TCP flows are planned here instead of being given simulated endpoints.
    planned: Option<Vec<PlannedFlow>>,
    /// The flows as the budget of the run reckons them.
    budget: super::budget::Flows,
    /// The TCP configuration resolved last, with the key path and the flow's own `tcp` table
    /// it was resolved from: the flows of one entry or workload share it, and resolving it
    /// once spares each of them a JSON round trip (most of the build of many flows).
    tcp_config: Option<tcp_flow::ResolvedTcp>,
}

impl<'a> Ctx<'a> {
    fn new(scenario: &'a Scenario, seed: u64, emulation: bool) -> Self {
        Ctx {
            sim: Sim::new(seed),
            seed,
            qdisc_index: 0,
            names: HashMap::new(),
            flow_names: Default::default(),
            warnings: Vec::new(),
            feedback_checked: Default::default(),
            feedback_warned: Default::default(),
            scenario,
            planned: emulation.then(Vec::new),
            budget: Default::default(),
            tcp_config: None,
        }
    }

    fn queue(
        &mut self,
        path: &str,
        c: &Component,
    ) -> Result<Box<dyn crate::aqm::Qdisc>, ScenarioError> {
        self.qdisc_index += 1;
        registry::queue(path, c, self.seed, self.qdisc_index)
    }

    fn node(&self, path: &str, name: &str) -> Result<NodeId, ScenarioError> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| err(path, format!("unknown node \"{name}\"")))
    }

    fn host(&self, path: &str, name: &str) -> Result<NodeId, ScenarioError> {
        let n = self.node(path, name)?;
        if !self.sim.nodes[n as usize].is_host {
            return Err(err(
                path,
                format!("\"{name}\" is a router; flows start and end at hosts"),
            ));
        }
        Ok(n)
    }

    fn port(&self, path: &str, name: &str) -> Result<PortId, ScenarioError> {
        self.sim.port_by_name(name).ok_or_else(|| {
            let some: Vec<&str> = self
                .sim
                .ports
                .iter()
                .take(6)
                .map(|p| p.name.as_str())
                .collect();
            err(
                path,
                format!(
                    "unknown port \"{name}\"; ports are named \"from->to\", e.g. {}",
                    some.join(", ")
                ),
            )
        })
    }
}

pub fn build(s: &Scenario, seed: u64, pcap_dir: Option<&Path>) -> Result<Built, ScenarioError> {
    build_inner(s, seed, pcap_dir, false).map(|(b, _)| b)
}

/// The egress ports, by name and in order, that a packet from host `src` to host `dst`
/// crosses in the scenario's network, for each `(src, dst)` pair: the routes a run of the
/// scenario forwards by (the topology and [`Sim::compute_routes`], nothing else built). None
/// for a pair whose names are not both hosts or that has no route.
pub fn host_paths(
    s: &Scenario,
    pairs: &[(String, String)],
) -> Result<Vec<Option<Vec<String>>>, ScenarioError> {
    // The same guards as a run's build: a recorded scenario read back is input too.
    s.limits.check()?;
    check_integers(s, s.seed)?;
    let mut c = Ctx::new(s, s.seed, false);
    build_topology(&mut c)?;
    c.sim.compute_routes();
    let sim = &c.sim;
    let hosts: HashMap<&str, NodeId> = (sim.nodes.iter().enumerate())
        .filter(|(_, n)| n.is_host)
        .map(|(i, n)| (n.name.as_str(), i as NodeId))
        .collect();
    let host = |name: &str| hosts.get(name).copied();
    Ok(pairs
        .iter()
        .map(|(a, b)| {
            let ports = sim.path_ports(host(a)?, host(b)?)?;
            Some(
                ports
                    .into_iter()
                    .map(|p| sim.ports[p as usize].name.clone())
                    .collect(),
            )
        })
        .collect())
}

/// Each egress port's link as the scenario builds it: its name, its rate schedule as
/// `(from_s, bps)` steps (the first at 0; a trace unrolled over the run) and the link-layer
/// bytes it adds to each packet (`framing`). What a run's ports table cannot say of a
/// time-varying link, whose `rate_bps` is its first rate.
pub fn port_links(s: &Scenario) -> Result<Vec<(String, Vec<(f64, u64)>, u32)>, ScenarioError> {
    s.limits.check()?;
    check_integers(s, s.seed)?;
    let mut c = Ctx::new(s, s.seed, false);
    build_topology(&mut c)?;
    Ok(c.sim
        .ports
        .iter()
        .map(|p| {
            let steps = p
                .rate
                .steps()
                .iter()
                .map(|&(t, bps)| (crate::time::to_secs(t), bps))
                .collect();
            (p.name.clone(), steps, p.framing)
        })
        .collect())
}

pub(super) fn build_inner(
    s: &Scenario,
    seed: u64,
    pcap_dir: Option<&Path>,
    emulation: bool,
) -> Result<(Built, Option<Vec<PlannedFlow>>), ScenarioError> {
    if s.duration.0 == 0 {
        return Err(err("duration", "must be positive"));
    }
    s.limits.check()?;
    check_integers(s, seed)?;
    let mut c = Ctx::new(s, seed, emulation);
    c.sim.set_ip_id_mode(s.hosts.ip_id);
    // The scenario-wide TCP defaults, resolved even when no flow uses them alone.
    let _: crate::tcp::config::TcpConfig = registry::params("tcp", &s.tcp)?;
    build_topology(&mut c)?;
    for (i, n) in c.sim.nodes.iter().enumerate() {
        c.names.insert(n.name.clone(), i as NodeId);
    }
    c.sim.compute_routes();
    build_elements(&mut c)?;

    // Per-port overrides.
    for (i, ps) in s.ports.iter().enumerate() {
        let path = format!("ports[{i}]");
        let p = c.port(&format!("{path}.port"), &ps.port)?;
        if let Some(q) = &ps.queue {
            let mut q = c.queue(&format!("{path}.queue"), q)?;
            let port = &mut c.sim.ports[p as usize];
            q.set_rate(port.rate.steps()[0].1);
            port.set_qdisc(q);
        }
        if let Some(m) = &ps.marker {
            let m = registry::marker(&format!("{path}.marker"), m, seed, p as u64)?;
            set_marker(&mut c, &format!("{path}.marker"), p, m)?;
        }
    }

    // Flows: counted (and their memory reckoned) before any is built.
    check_flow_count(&c)?;
    for (i, f) in s.flows.iter().enumerate() {
        add_flow_spec(&mut c, &format!("flows[{i}]"), f, i)?;
    }
    for (i, w) in s.workloads.iter().enumerate() {
        add_workload(&mut c, &format!("workloads[{i}]"), w, i)?;
    }

    // Capture.
    let mut pcap_ports: Vec<(String, PortId)> = Vec::new();
    for (i, ps) in s.ports.iter().enumerate() {
        if ps.pcap {
            pcap_ports.push((
                format!("ports[{i}].pcap"),
                c.port(&format!("ports[{i}].port"), &ps.port)?,
            ));
        }
    }
    for (i, name) in s.measure.pcap.iter().enumerate() {
        let path = format!("measure.pcap[{i}]");
        pcap_ports.push((path.clone(), c.port(&path, name)?));
    }
    // What the traffic will cost, before the run starts or a pcap file is made.
    check_budget(&c, &pcap_ports)?;

    // Measurement.
    let m = &s.measure;
    if m.interval.0 == 0 {
        return Err(err("measure.interval", "must be positive"));
    }
    let sampled: Vec<PortId> = match &m.sample_ports {
        Some(list) => list
            .iter()
            .enumerate()
            .map(|(i, n)| c.port(&format!("measure.sample_ports[{i}]"), n))
            .collect::<Result<_, _>>()?,
        None => (0..c.sim.ports.len() as PortId)
            .filter(|&p| !c.sim.nodes[c.sim.ports[p as usize].node as usize].is_host)
            .collect(),
    };
    let sample_flows = m.sample_flows.unwrap_or(c.sim.flows.len() <= 64);
    let per_sample = sampled.len() as f64 * 4.0
        + if sample_flows {
            c.sim.flows.len() as f64 * 8.0
        } else {
            0.0
        };
    let rows = per_sample * (s.duration.0 as f64 / m.interval.0 as f64);
    check_sample_rows(rows, m.interval, s.limits.sample_rows(), memory_available())?;
    for p in sampled {
        c.sim.sample_port(p);
        c.sim.track_sojourn(p);
    }
    if !sample_flows {
        c.sim.disable_flow_sampling();
    }
    c.sim.set_sample_interval(m.interval.0);

    // The pcap files last: every error of the scenario is found before any file is made
    // (the run's build is its validation).
    if !pcap_ports.is_empty() {
        if let Some(dir) = pcap_dir {
            std::fs::create_dir_all(dir).map_err(|e| {
                err(
                    "measure.pcap",
                    format!("cannot create {}: {e}", dir.display()),
                )
            })?;
            for (path, p) in pcap_ports {
                let base = format!(
                    "{}.pcap",
                    c.sim.ports[p as usize].name.replace("->", "_to_")
                );
                // Node names are checked (`NAME_RULE`), so this holds; a file name with a
                // separator or "..", whatever its origin, is never written.
                if base.contains(['/', '\\']) || base.starts_with('.') {
                    return Err(err(
                        path,
                        format!("pcap file name {base:?} would leave the output directory"),
                    ));
                }
                let file = dir.join(base);
                c.sim
                    .enable_pcap(p, &file)
                    .map_err(|e| err(path, format!("cannot create {}: {e}", file.display())))?;
            }
        }
    }
    Ok((
        Built {
            sim: c.sim,
            warnings: c.warnings,
        },
        c.planned,
    ))
}

/// Puts a marker on a port whose buffer lets its thresholds be reached.
fn set_marker(
    c: &mut Ctx,
    path: &str,
    port: PortId,
    m: Box<dyn crate::marker::Marker>,
) -> Result<(), ScenarioError> {
    m.fits(c.sim.ports[port as usize].qdisc.limit())
        .map_err(|e| registry::field_error(path, &e))?;
    c.sim.set_marker(port, m);
    Ok(())
}
