//! Turns a [`Scenario`] into a ready-to-run [`Sim`], checking every reference and value on
//! the way; every error names the key path.

use super::budget::{self, Load};
use super::limits::{self, Limits};
use super::registry;
use super::schema::*;
use super::ScenarioError;
use crate::app::{UdpPattern, UdpSink, UdpSource, UdpSourceConfig};
use crate::engine::rng;
use crate::net::{topology, LinkSpec, NodeId, PortId, RateSchedule, Sim};
use crate::time::{Time, NEVER};
use crate::wire::Ecn;
use rand_distr::Distribution;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

/// A built simulation and what the run needs to know about it.
pub struct Built {
    pub sim: Sim,
    /// Legitimate but probably unintended choices, said once per run (and kept in run.json).
    pub warnings: Vec<String>,
}

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

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, msg)
}

/// Integers up to TOML's largest, 2^63 − 1: the scenario as run is written back as TOML
/// (run.json), and a larger one (from JSON, or a `--seed`) could not be, so run.json would
/// not say what ran.
fn check_integers(s: &Scenario, seed: u64) -> Result<(), ScenarioError> {
    fn walk(v: &serde_json::Value, path: &str) -> Option<(String, u64)> {
        match v {
            serde_json::Value::Number(n) => n
                .as_u64()
                .filter(|&u| u > i64::MAX as u64)
                .map(|u| (path.to_string(), u)),
            serde_json::Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, x)| walk(x, &format!("{path}[{i}]"))),
            serde_json::Value::Object(m) => m.iter().find_map(|(k, x)| {
                walk(
                    x,
                    &if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    },
                )
            }),
            _ => None,
        }
    }
    let mut tree = serde_json::to_value(s).unwrap_or_default();
    if let Some(m) = tree.as_object_mut() {
        m.insert("seed".into(), seed.into());
    }
    match walk(&tree, "") {
        Some((path, v)) => Err(err(
            path,
            format!(
                "{v} is beyond the largest integer a scenario file holds ({})",
                i64::MAX
            ),
        )),
        None => Ok(()),
    }
}

/// Link-layer bytes a link may add to a packet.
const MAX_FRAMING: u32 = 65_535;

/// The link a scenario's parameters describe; `until` is how far a trace is unrolled.
fn schedule(
    path: &str,
    l: &LinkParams,
    until: Time,
    limits: &Limits,
) -> Result<LinkSpec, ScenarioError> {
    let rate = match (&l.trace, l.rate) {
        (Some(_), Some(_)) => {
            return Err(err(
                format!("{path}.trace"),
                "a link's capacity comes from rate (and schedule) or from a trace, not both",
            ))
        }
        (Some(t), None) => {
            if !l.schedule.is_empty() {
                return Err(err(
                    format!("{path}.schedule"),
                    "a link with a trace takes its rate changes from the trace",
                ));
            }
            trace_schedule(&format!("{path}.trace"), t, until, limits)?
        }
        (None, None) => {
            return Err(err(
                format!("{path}.rate"),
                "missing: give the link a rate (e.g. \"100Mbps\") or a trace",
            ))
        }
        (None, Some(r)) => {
            let mut steps = vec![(0, r.0)];
            let mut last = 0;
            for (i, s) in l.schedule.iter().enumerate() {
                if s.at.0 <= last && !(i == 0 && s.at.0 == 0) {
                    return Err(err(
                        format!("{path}.schedule[{i}].at"),
                        "times must be strictly increasing and after 0",
                    ));
                }
                if s.at.0 == 0 {
                    steps[0].1 = s.rate.0;
                } else {
                    steps.push((s.at.0, s.rate.0));
                }
                last = s.at.0;
            }
            RateSchedule::new(steps).map_err(|m| err(format!("{path}.schedule"), m))?
        }
    };
    // Added to each packet's length (a u32) for its transmission time: 2^32 − 1 wrapped a
    // packet's bytes to almost nothing.
    if l.framing > MAX_FRAMING {
        return Err(err(
            format!("{path}.framing"),
            format!(
                "at most {MAX_FRAMING} bytes a packet (PPP adds 2, Ethernet 38), got {}",
                l.framing
            ),
        ));
    }
    let batch = match &l.batch {
        None => None,
        Some(b) => {
            if b.max_pkts == 0 || b.max_pkts > 4096 {
                return Err(err(
                    format!("{path}.batch.max_pkts"),
                    format!(
                        "must be 1 to 4096 (802.11ax aggregates at most 256), got {}",
                        b.max_pkts
                    ),
                ));
            }
            if b.max_bytes.is_some_and(|s| s.0 == 0) {
                return Err(err(format!("{path}.batch.max_bytes"), "must be positive"));
            }
            Some(crate::net::Batch {
                max_pkts: b.max_pkts,
                max_bytes: b.max_bytes.map_or(u64::MAX, |s| s.0),
                max_airtime: b.max_airtime.0,
                overhead: b.overhead.0,
            })
        }
    };
    Ok(LinkSpec {
        rate,
        delay: l.delay.0,
        framing: l.framing,
        batch,
    })
}

fn trace_schedule(
    path: &str,
    t: &crate::scenario::schema::TraceSpec,
    until: Time,
    limits: &Limits,
) -> Result<RateSchedule, ScenarioError> {
    if t.mtu == 0 {
        return Err(err(format!("{path}.mtu"), "must be positive"));
    }
    let cap = limits.trace_bytes();
    let text = super::files::read_text(Path::new(&t.file), cap.value, "trace").map_err(|m| {
        let m = if m.contains("beyond the") {
            format!("{m} (limits.trace_bytes; raise it in the scenario: [limits] trace_bytes = \"256MB\")")
        } else {
            m
        };
        err(format!("{path}.file"), m)
    })?;
    let tr = crate::net::trace::MahimahiTrace::parse(&text)
        .map_err(|m| err(format!("{path}.file"), format!("\"{}\" {m}", t.file)))?;
    tr.schedule(t.bin.0, t.mtu, until.max(1))
        .map_err(|m| registry::field_error(path, &m))
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
}

impl Ctx<'_> {
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

fn build_inner(
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
    let mut c = Ctx {
        sim: Sim::new(seed),
        seed,
        qdisc_index: 0,
        names: HashMap::new(),
        flow_names: Default::default(),
        warnings: Vec::new(),
        feedback_checked: Default::default(),
        feedback_warned: Default::default(),
        scenario: s,
        planned: emulation.then(Vec::new),
        budget: Default::default(),
    };
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

/// Bytes one time-series row takes at its peak: the core's sample, the long table built from
/// it, and its copy on the Python side.
const BYTES_PER_SAMPLE_ROW: f64 = 170.0;

/// The time series must fit both `limits.sample_rows` and 80 % of the memory available.
fn check_sample_rows(
    rows: f64,
    interval: crate::units::Duration,
    bound: limits::Bound,
    available: Option<f64>,
) -> Result<(), ScenarioError> {
    let implies = format!(
        "sampling every {interval} would record about {:.0} million rows",
        rows / 1e6
    );
    let fix = "use a longer interval, fewer sample_ports, or sample_flows = false";
    bound.allows("measure.interval", rows, &format!("{implies} ({fix})"))?;
    let by_memory = available.map_or(f64::INFINITY, |b| 0.8 * b / BYTES_PER_SAMPLE_ROW);
    if rows <= by_memory {
        return Ok(());
    }
    Err(err(
        "measure.interval",
        format!(
            "{implies} (~{:.1} GB; {:.1} GB of memory is available); {fix}",
            rows * BYTES_PER_SAMPLE_ROW / 1e9,
            available.unwrap_or(0.0) / 1e9
        ),
    ))
}

/// Memory this process may still use, in bytes: the smaller of the system's available memory
/// and what its cgroup's limit leaves (Linux; None elsewhere or when unreadable).
fn memory_available() -> Option<f64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let avail_kb: f64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    let mut avail = avail_kb * 1024.0;
    let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok();
    if let (Some(max), Some(cur)) = (read("memory.max"), read("memory.current")) {
        if let (Ok(max), Ok(cur)) = (max.trim().parse::<f64>(), cur.trim().parse::<f64>()) {
            avail = avail.min((max - cur).max(0.0));
        }
    }
    Some(avail)
}

fn build_topology(c: &mut Ctx) -> Result<(), ScenarioError> {
    let s = c.scenario;
    let until = s.duration.0;
    match &s.topology {
        Topology::Dumbbell(DumbbellSpec {
            left,
            right,
            access,
            bottleneck,
            bottleneck_queue,
            reverse_queue,
            bottleneck_marker,
            access_queue,
        }) => {
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
            let d =
                topology::dumbbell(&mut c.sim, *left, *right, &acc, &bn, fwd, rev, &mut factory);
            if let Some(m) = bottleneck_marker {
                let mk =
                    registry::marker("topology.bottleneck_marker", m, c.seed, d.bottleneck as u64)?;
                set_marker(c, "topology.bottleneck_marker", d.bottleneck, mk)?;
            }
        }
        Topology::Chain(ChainSpec {
            hops,
            link,
            access,
            end_hosts,
            cross_hosts,
            queue,
            marker,
            access_queue,
        }) => {
            if *hops == 0 {
                return Err(err("topology.hops", "must be at least 1"));
            }
            let nodes =
                (*hops as f64 + 1.0) * (*cross_hosts as f64 + 1.0) + 2.0 * *end_hosts as f64;
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
                    let mk = registry::marker("topology.marker", m, c.seed, p as u64)
                        .expect("validated above");
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
        }
        Topology::Campus(cs) => build_campus(c, cs, until)?,
        Topology::Explicit(ExplicitSpec { nodes, links }) => {
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
        }
    }
    Ok(())
}

/// Route entries (a node with several links keeps one per node) beyond which the tables
/// would take more than a gigabyte, and their computation as many steps.
const MAX_ROUTE_ENTRIES: f64 = 2.5e8;

/// The route tables of `tables` nodes with several links over `nodes` nodes fit: a chain of
/// 65 536 hops would need 34 GB of them.
fn check_routes(path: &str, tables: f64, nodes: f64) -> Result<(), ScenarioError> {
    let entries = tables * nodes;
    let bytes = entries * std::mem::size_of::<PortId>() as f64;
    let by_memory = memory_available().map_or(f64::INFINITY, |m| 0.5 * m);
    if entries <= MAX_ROUTE_ENTRIES && bytes <= by_memory {
        return Ok(());
    }
    Err(err(
        path,
        format!(
            "{} nodes with several links, each with a route to every one of {} nodes: {} route entries ({:.1} GB), beyond the {} the simulator keeps; use fewer routers or hops",
            limits::figure(tables),
            limits::figure(nodes),
            limits::figure(entries),
            bytes / 1e9,
            limits::figure(MAX_ROUTE_ENTRIES)
        ),
    ))
}

fn build_campus(c: &mut Ctx, cs: &CampusSpec, until: Time) -> Result<(), ScenarioError> {
    if cs.clients == 0 {
        return Err(err("topology.clients", "must be at least 1"));
    }
    if cs.servers == 0 {
        return Err(err("topology.servers", "must be at least 1"));
    }
    let nodes = cs.clients as f64 + cs.servers as f64 + 5.0;
    c.scenario.limits.nodes().allows(
        if cs.clients >= cs.servers {
            "topology.clients"
        } else {
            "topology.servers"
        },
        nodes,
        &format!("{} hosts and routers", limits::figure(nodes)),
    )?;
    if cs.buffer.0 == 0 {
        return Err(err("topology.buffer", "must be positive"));
    }
    let air = schedule("topology.wireless", &cs.wireless, until, &c.scenario.limits)?;
    // Plain buffers are built here (not through the registry, which would record them
    // under a key the scenario does not have); the AP's queue is the scenario's component.
    let bytes = cs.buffer.0;
    let buffer = || -> Box<dyn crate::aqm::Qdisc> {
        Box::new(crate::aqm::DropTail::new(crate::aqm::Limit::Bytes(bytes)))
    };
    let default_ap = Component {
        kind: "droptail".into(),
        params: serde_json::json!({"limit": bytes, "bytes": true})
            .as_object()
            .unwrap()
            .clone(),
    };
    let ap_queue = cs.ap_queue.as_ref().unwrap_or(&default_ap);
    let wired = |gbps: u64, delay: Time| LinkSpec::new(gbps * 1_000_000_000, delay);
    let lan = cs.lan_delay.0;
    let core = c.sim.add_router("core");
    let agg = c.sim.add_router("agg");
    let access = c.sim.add_router("access");
    let ap = c.sim.add_router("ap");
    let wlan = c.sim.add_router("wlan");
    let link = |c: &mut Ctx, a: NodeId, b: NodeId, spec: &LinkSpec| {
        c.sim.connect(a, b, spec, buffer(), buffer());
    };
    for i in 0..cs.servers {
        let s = c.sim.add_host(&format!("s{i}"));
        link(c, s, core, &wired(100, cs.wan_delay.0));
    }
    link(c, core, agg, &wired(40, lan));
    link(c, agg, access, &wired(10, lan));
    link(c, access, ap, &wired(1, lan));
    let q_ap = c.queue("topology.ap_queue", ap_queue)?;
    c.sim.connect(ap, wlan, &air, q_ap, buffer());
    for i in 0..cs.clients {
        let h = c.sim.add_host(&format!("c{i}"));
        link(c, wlan, h, &wired(100, 0));
    }
    Ok(())
}

/// Builds the scenario's node elements (after the topology, before the flows).
fn build_elements(c: &mut Ctx) -> Result<(), ScenarioError> {
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
            n.ports
                .iter()
                .position(|&p| sim.ports[p as usize].name == name)
                .ok_or_else(|| {
                    let own: Vec<&str> = n
                        .ports
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

/// Names of nodes, flows and workloads become parts of file names (pcap captures) and table
/// keys: 1 to 64 characters from A–Z, a–z, 0–9, `_`, `.`, `-` and `+`, starting with a
/// letter, a digit or `_`.
pub const NAME_RULE: &str =
    "1 to 64 characters from A-Z a-z 0-9 _ . - +, starting with a letter, a digit or _";

fn check_name(path: &str, what: &str, name: &str) -> Result<(), ScenarioError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'+'))
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(err(
            path,
            format!("{what} name {name:?} is not allowed: use {NAME_RULE}"),
        ))
    }
}

fn flow_name(f: &FlowSpec, index: usize, k: usize, count: usize) -> String {
    let base = f.name.clone().unwrap_or_else(|| format!("f{index}"));
    if base.contains("{k}") {
        base.replace("{k}", &k.to_string())
    } else if count > 1 {
        format!("{base}.{k}")
    } else {
        base
    }
}

fn add_flow_spec(c: &mut Ctx, path: &str, f: &FlowSpec, index: usize) -> Result<(), ScenarioError> {
    let count = f.count.unwrap_or(1);
    if count == 0 {
        return Err(err(format!("{path}.count"), "must be at least 1"));
    }
    if f.stagger.is_some() && f.count.is_none() {
        return Err(err(
            format!("{path}.stagger"),
            "spaces the starts of copies: give count too",
        ));
    }
    let jitter = f.start_jitter.map_or(0, |d| d.0);
    // The last copy's latest start, in 128 bits: a large stagger times a large count would
    // wrap the 64-bit clock and start copies early.
    let last_start = f.start.map_or(0, |d| d.0) as u128
        + f.stagger.map_or(0, |d| d.0) as u128 * (count as u128).saturating_sub(1)
        + jitter as u128;
    if last_start > super::units::MAX_DURATION as u128 {
        let key = if f.stagger.is_some() {
            "stagger"
        } else {
            "start_jitter"
        };
        return Err(err(
            format!("{path}.{key}"),
            format!(
                "start + stagger × (count − 1) + start_jitter is {} s, beyond the longest time a scenario may give ({} s)",
                last_start as f64 / crate::time::SEC as f64,
                crate::time::to_secs(super::units::MAX_DURATION)
            ),
        ));
    }
    let last_start = last_start as Time;
    // A shortened run of a longer scenario legitimately leaves late flows out: said, not
    // refused.
    if last_start >= c.scenario.duration.0 {
        c.warnings.push(format!(
            "{path}: {} starts at {} s, not before the run ends ({} s): it sends nothing",
            if count > 1 { "a copy" } else { "the flow" },
            crate::time::to_secs(last_start),
            c.scenario.duration.secs()
        ));
    }
    for k in 0..count {
        let name = flow_name(f, index, k, count);
        let npath = format!("{path}.name");
        check_name(&npath, "flow", &name)?;
        if !c.flow_names.insert(name.clone()) {
            return Err(err(npath, format!("duplicate flow name \"{name}\"")));
        }
    }
    // With `count` copies, "{k}" in src/dst is replaced by the copy's index (0-based).
    let mut pairs = Vec::with_capacity(count);
    for k in 0..count {
        let (sn, dn) = (
            f.src.replace("{k}", &k.to_string()),
            f.dst.replace("{k}", &k.to_string()),
        );
        let src = c.host(&format!("{path}.src"), &sn)?;
        let dst = c.host(&format!("{path}.dst"), &dn)?;
        if src == dst {
            return Err(err(
                format!("{path}.dst"),
                "source and destination are the same host",
            ));
        }
        if !c.sim.has_route(src, dst) || !c.sim.has_route(dst, src) {
            return Err(err(path, format!("no route between \"{sn}\" and \"{dn}\"")));
        }
        pairs.push((src, dst));
    }
    // Copy k's start: start + k·stagger + its jitter, drawn per flow entry and copy so that
    // adding a flow entry moves no other flow's start.
    let starts: Vec<Time> = {
        use rand::Rng as _;
        let base = f.start.map_or(0, |d| d.0);
        let stagger = f.stagger.map_or(0, |d| d.0);
        let mut r = rng::stream(c.seed, rng::kind::FLOW_START, index as u64);
        (0..count)
            .map(|k| {
                base + stagger * k as Time
                    + if jitter > 0 {
                        r.gen_range(0..jitter)
                    } else {
                        0
                    }
            })
            .collect()
    };
    match f.kind {
        FlowKind::Udp if c.planned.is_some() => {
            return Err(err(
                format!("{path}.kind"),
                "UDP flows are not supported in emulation (TCP flows only)",
            ))
        }
        FlowKind::Udp => {
            for (field, set) in [
                ("size", f.size.is_some()),
                ("cc", f.cc.is_some()),
                ("ecn", f.ecn.is_some()),
                ("cc_params", f.cc_params.is_some()),
                ("ecn_params", f.ecn_params.is_some()),
                ("tcp", f.tcp.is_some()),
                ("client_initiated", f.client_initiated.is_some()),
            ] {
                if set {
                    return Err(err(
                        format!("{path}.{field}"),
                        "is a TCP option; this flow has kind = \"udp\"",
                    ));
                }
            }
            let rate = f.rate.ok_or_else(|| {
                err(
                    format!("{path}.rate"),
                    "a UDP flow needs a rate, e.g. rate = \"10Mbps\"",
                )
            })?;
            let size = f.packet_size.map_or(1000, |s| s.0);
            if !(29..=65535).contains(&size) {
                return Err(err(
                    format!("{path}.packet_size"),
                    "must be between 29 and 65535 bytes",
                ));
            }
            let stop = f.stop.map_or(NEVER, |d| d.0);
            if starts.iter().any(|&s| stop <= s) {
                return Err(err(format!("{path}.stop"), "must be after start"));
            }
            let on_off = match (f.on, f.off) {
                (None, None) => None,
                (Some(on), Some(off)) if on.0 > 0 => Some((on.0, off.0)),
                (Some(_), Some(_)) => return Err(err(format!("{path}.on"), "must be positive")),
                _ => {
                    return Err(err(
                        format!("{path}.on"),
                        "on and off must be given together",
                    ))
                }
            };
            let ecn = match f.udp_ecn.as_deref() {
                None | Some("not-ect") => Ecn::NOT_ECT,
                Some("ect0") => Ecn::ECT0,
                Some("ect1") => Ecn::ECT1,
                Some(o) => {
                    return Err(err(
                        format!("{path}.udp_ecn"),
                        format!("unknown codepoint \"{o}\"; expected one of not-ect, ect0, ect1"),
                    ))
                }
            };
            let duty = on_off.map_or(1.0, |(on, off)| on as f64 / (on as f64 + off as f64));
            for (k, &(src, dst)) in pairs.iter().enumerate() {
                let until = stop.min(c.scenario.duration.0);
                if starts[k] < until {
                    c.budget.add(
                        &format!("{path}.rate"),
                        src,
                        dst,
                        Load::Rate {
                            bps: rate.0 as f64 * duty,
                            active_s: crate::time::to_secs(until - starts[k]),
                        },
                        size as f64,
                        size.saturating_sub(28) as f64,
                        false,
                    );
                }
                let cfg = UdpSourceConfig {
                    rate_bps: rate.0,
                    packet_size: size as u32,
                    pattern: f.pattern.unwrap_or(UdpPattern::Cbr),
                    start: starts[k],
                    stop,
                    ecn,
                    on_off,
                };
                let flow = c.sim.flows.len() as u32;
                let sink_ep = c.sim.next_endpoint_id() + 1;
                let rng = rng::stream(c.seed, rng::kind::ENDPOINT, flow as u64);
                let (sa, da) = (
                    c.sim.nodes[src as usize].addr,
                    c.sim.nodes[dst as usize].addr,
                );
                let src_ep = c.sim.add_endpoint(
                    src,
                    Box::new(UdpSource::new(cfg, sa, da, sink_ep, flow, rng)),
                );
                let dst_ep = c.sim.add_endpoint(dst, Box::new(UdpSink::new()));
                debug_assert_eq!(dst_ep, sink_ep);
                c.sim
                    .add_flow(&flow_name(f, index, k, count), src_ep, dst_ep);
            }
        }
        FlowKind::Tcp => {
            for (field, set) in [
                ("rate", f.rate.is_some()),
                ("packet_size", f.packet_size.is_some()),
                ("pattern", f.pattern.is_some()),
                ("on", f.on.is_some()),
                ("off", f.off.is_some()),
                ("udp_ecn", f.udp_ecn.is_some()),
            ] {
                if set {
                    return Err(err(
                        format!("{path}.{field}"),
                        "is a UDP option; this flow is TCP (set kind = \"udp\" for UDP)",
                    ));
                }
            }
            let stop = f.stop.map(|d| d.0);
            if let Some(t) = stop {
                if f.size.is_some() {
                    return Err(err(
                        format!("{path}.stop"),
                        "a TCP flow stops either by its size or at a time; omit one",
                    ));
                }
                if starts.iter().any(|&s| t <= s) {
                    return Err(err(
                        format!("{path}.stop"),
                        "must be after every copy's start",
                    ));
                }
            }
            let tcp = TcpFlowArgs {
                cc: f.cc.as_deref(),
                ecn: f.ecn.as_deref(),
                cc_params: f.cc_params.as_ref(),
                ecn_params: f.ecn_params.as_ref(),
                tcp: f.tcp.as_ref(),
                client_initiated: f.client_initiated.unwrap_or(false),
                stop,
            };
            for (k, &(src, dst)) in pairs.iter().enumerate() {
                let name = flow_name(f, index, k, count);
                add_tcp_flow(
                    c,
                    path,
                    &name,
                    src,
                    dst,
                    f.size.map(|s| s.0),
                    starts[k],
                    &tcp,
                )?;
            }
        }
    }
    Ok(())
}

struct TcpFlowArgs<'a> {
    cc: Option<&'a str>,
    ecn: Option<&'a str>,
    cc_params: Option<&'a Params>,
    ecn_params: Option<&'a Params>,
    tcp: Option<&'a Params>,
    client_initiated: bool,
    /// The application of a bulk transfer stops writing at this time.
    stop: Option<Time>,
}

/// Adds one TCP flow; `path` is the flow's (or workload's) key path.
#[allow(clippy::too_many_arguments)]
fn add_tcp_flow(
    c: &mut Ctx,
    path: &str,
    name: &str,
    src: NodeId,
    dst: NodeId,
    size: Option<u64>,
    start: Time,
    a: &TcpFlowArgs,
) -> Result<(), ScenarioError> {
    // Scenario-wide [tcp] first, then the flow's own table.
    let mut merged = c.scenario.tcp.clone();
    if let Some(t) = a.tcp {
        for (k, v) in t {
            merged.insert(k.clone(), v.clone());
        }
    }
    let tpath = if a.tcp.is_some() {
        format!("{path}.tcp")
    } else {
        "tcp".to_string()
    };
    let config: crate::tcp::config::TcpConfig = registry::params(&tpath, &merged)?;
    config
        .validate()
        .map_err(|m| registry::field_error(&tpath, &m))?;
    let cc_name = a.cc.unwrap_or("newreno");
    let flow_index = c.sim.flows.len() as u64;
    let cc = registry::controller(
        &format!("{path}.cc"),
        cc_name,
        a.cc_params,
        config.mss,
        c.seed ^ flow_index.wrapping_mul(0x9E37_79B9),
    )?;
    let codec_name = a.ecn.unwrap_or_else(|| registry::default_codec(cc_name));
    let epath = format!("{path}.ecn");
    registry::record(&format!("{path}.cc"), cc_name.into());
    registry::record(&epath, codec_name.into());
    if codec_name == "none" && registry::default_codec(cc_name) != "none" {
        return Err(err(
            epath,
            format!(
                "cc = \"{cc_name}\" reacts to congestion marks, and ecn = \"none\" would never deliver one: use ecn = \"{}\" (or omit ecn)",
                registry::default_codec(cc_name)
            ),
        ));
    }
    let own = registry::default_codec(cc_name);
    if own != "none" && codec_name != own {
        // DCTCP counts the fraction of marked bytes from a precise echo; RFC 3168's ECE
        // repeats one mark until CWR, and a scheme's controller reads only its own codec's
        // signal: either would run with the wrong reading and say nothing.
        return Err(err(
            epath,
            format!(
                "cc = \"{cc_name}\" reads the feedback of its own codec, and ecn = \"{codec_name}\" echoes something else: use ecn = \"{own}\" (or omit ecn)"
            ),
        ));
    }
    check_feedback_path(c, path, codec_name, src, dst);
    let sender_codec = registry::codec(&epath, codec_name, a.ecn_params)?;
    let receiver_codec = registry::codec(&epath, codec_name, a.ecn_params)?;
    if size == Some(0) {
        return Err(err(
            format!("{path}.size"),
            "must be at least 1 byte (omit it for an unlimited transfer)",
        ));
    }
    let until = a.stop.unwrap_or(NEVER).min(c.scenario.duration.0);
    if start < until {
        let load = match size {
            Some(b) => Load::Bytes(b as f64),
            None => Load::Rate {
                bps: f64::INFINITY,
                active_s: crate::time::to_secs(until - start),
            },
        };
        let headers = 40.0 + if config.timestamps { 12.0 } else { 0.0 };
        let mss = config.mss as f64;
        c.budget.add(path, src, dst, load, mss + headers, mss, true);
    }
    if let Some(plan) = c.planned.as_mut() {
        plan.push(PlannedFlow {
            path: path.to_string(),
            name: name.to_string(),
            src: c.sim.nodes[src as usize].name.clone(),
            dst: c.sim.nodes[dst as usize].name.clone(),
            start_s: crate::time::to_secs(start),
            size,
            stop_s: a.stop.map(crate::time::to_secs),
            cc: cc_name.to_string(),
            ecn: codec_name.to_string(),
            client_initiated: a.client_initiated,
            mss: config.mss,
            sack: config.sack,
            timestamps: config.timestamps,
        });
        return Ok(());
    }
    let spec = crate::tcp::flow::TcpFlowSpec {
        name: name.to_string(),
        src,
        dst,
        size,
        start,
        client_initiated: a.client_initiated,
        config,
    };
    crate::tcp::flow::add_tcp_flow_until(
        &mut c.sim,
        &spec,
        a.stop,
        cc,
        sender_codec,
        receiver_codec,
    )
    .map_err(|m| registry::field_error(path, &m))?;
    Ok(())
}

/// Warns (once per flow entry) when no port on the way from `src` to `dst` writes the
/// feedback the flow's codec reads: its sender would act on its own stamps alone (a VCP
/// sender reads "low load" forever) or never hear of congestion but by loss.
fn check_feedback_path(c: &mut Ctx, path: &str, codec: &str, src: NodeId, dst: NodeId) {
    let Some(reads) = registry::feedback_read_by(codec) else {
        return;
    };
    if c.feedback_warned.contains(path) || !c.feedback_checked.insert((src, dst, codec.to_string()))
    {
        return;
    }
    let Some(ports) = c.sim.path_ports(src, dst) else {
        return;
    };
    let writes = |p: PortId| {
        let port = &c.sim.ports[p as usize];
        [
            port.marker.as_ref().map(|m| m.feedback()),
            port.qdisc.feedback(),
        ]
        .into_iter()
        .flatten()
        .any(|f| reads.contains(&f))
    };
    // Elements on the nodes the flow crosses write feedback too (CLEAN's proxied CE).
    let on_path = |node: &str| {
        c.sim.nodes[src as usize].name == node
            || ports.iter().any(|&p| {
                let to = c.sim.pipes[c.sim.ports[p as usize].link as usize].to;
                c.sim.nodes[to as usize].name == node
            })
    };
    let element_writes = c.scenario.elements.iter().any(|e| {
        registry::element_feedback(&e.component.kind)
            .is_some_and(|f| reads.contains(&f) && on_path(&e.node))
    });
    if element_writes || ports.iter().any(|&p| writes(p)) {
        return;
    }
    let names: Vec<&str> = ports
        .iter()
        .map(|&p| c.sim.ports[p as usize].name.as_str())
        .collect();
    // "ce": RFC 3168 CE marks; the others: what that scheme's router writes.
    let wanted = format!("{} feedback", reads.join(" or "));
    c.warnings.push(format!(
        "{path}.ecn: \"{codec}\" reads {wanted}, but no port from {} to {} writes it ({}): the sender never hears the network's feedback",
        c.sim.nodes[src as usize].name,
        c.sim.nodes[dst as usize].name,
        names.join(", ")
    ));
    c.feedback_warned.insert(path.to_string());
}

/// A workload's Poisson arrivals: between which hosts, of what sizes, how often, when.
struct Arrivals {
    srcs: Vec<NodeId>,
    dsts: Vec<NodeId>,
    dist: SizeSampler,
    /// Flows per second.
    rate: f64,
    start: Time,
    stop: Time,
    max: u64,
}

impl Arrivals {
    /// Flows the workload draws on average (its `max_flows` at most).
    fn expected(&self) -> f64 {
        (self.rate * crate::time::to_secs(self.stop - self.start)).min(self.max as f64)
    }
}

fn arrivals(c: &Ctx, path: &str, w: &WorkloadSpec) -> Result<Arrivals, ScenarioError> {
    let srcs: Vec<NodeId> = w
        .src
        .iter()
        .enumerate()
        .map(|(i, n)| c.host(&format!("{path}.src[{i}]"), n))
        .collect::<Result<_, _>>()?;
    let dsts: Vec<NodeId> = w
        .dst
        .iter()
        .enumerate()
        .map(|(i, n)| c.host(&format!("{path}.dst[{i}]"), n))
        .collect::<Result<_, _>>()?;
    if srcs.is_empty() || dsts.is_empty() {
        return Err(err(
            format!("{path}.{}", if srcs.is_empty() { "src" } else { "dst" }),
            "needs at least one host",
        ));
    }
    let dist = SizeSampler::new(&format!("{path}.sizes"), &w.sizes)?;
    let rate = match (w.arrival_rate, w.load) {
        (Some(r), None) if r > 0.0 && r.is_finite() => r,
        (Some(_), None) => {
            return Err(err(
                format!("{path}.arrival_rate"),
                "must be a positive number of flows per second",
            ))
        }
        (None, Some(l)) if l > 0.0 && l.is_finite() => {
            let of = w.load_of.ok_or_else(|| {
                err(
                    format!("{path}.load_of"),
                    "a load needs the rate it is a fraction of, e.g. load_of = \"100Mbps\"",
                )
            })?;
            if !(dist.mean() >= 1.0) {
                return Err(err(
                    format!("{path}.sizes"),
                    format!(
                        "the mean size is {} bytes: a load needs a mean of at least one byte",
                        dist.mean()
                    ),
                ));
            }
            l * of.0 as f64 / (8.0 * dist.mean())
        }
        (None, Some(_)) => return Err(err(format!("{path}.load"), "must be a positive fraction")),
        _ => {
            return Err(err(
                path,
                "give exactly one of arrival_rate (flows/s) or load (with load_of)",
            ))
        }
    };
    let start = w.start.map_or(0, |d| d.0);
    let stop = w.stop.map_or(c.scenario.duration.0, |d| d.0);
    if stop <= start {
        return Err(err(format!("{path}.stop"), "must be after start"));
    }
    // Without max_flows a workload draws what its rate gives, within limits.flows.
    let max = w.max_flows.map_or(u64::MAX, |m| m as u64);
    Ok(Arrivals {
        srcs,
        dsts,
        dist,
        rate,
        start,
        stop,
        max,
    })
}

/// Simulated events a core runs per second, for a message (6–20 million on this project's
/// 2-core machines, depending on their load).
const EVENTS_PER_CPU_S: f64 = 10e6;

/// The events the traffic implies within `limits.events`, and the pcap files within
/// `limits.pcap_bytes`.
fn check_budget(c: &Ctx, pcap_ports: &[(String, PortId)]) -> Result<(), ScenarioError> {
    let s = c.scenario;
    let secs = s.duration.secs();
    let est = budget::estimate(&c.sim, &c.budget, secs);
    let bound = s.limits.events();
    if est.events > bound.value as f64 {
        let busiest = (0..c.sim.ports.len())
            .max_by(|&a, &b| est.port_packets[a].total_cmp(&est.port_packets[b]))
            .map(|p| {
                format!(
                    "; the busiest port, {}, sends {} packets a simulated second",
                    c.sim.ports[p].name,
                    limits::figure(est.port_packets[p] / secs)
                )
            })
            .unwrap_or_default();
        let cpu = est.events / EVENTS_PER_CPU_S;
        let implies = format!(
            "the traffic implies about {} simulated events ({} per simulated second, {} of them from {}{busiest}): about {} of CPU",
            limits::figure(est.events),
            limits::figure(est.events / secs),
            limits::figure(est.costliest.1),
            est.costliest.0,
            if cpu < 7200.0 {
                format!("{:.0} min", cpu / 60.0)
            } else {
                format!("{:.0} h", cpu / 3600.0)
            }
        );
        return Err(err(&est.costliest.0, bound.exceeded(&implies)));
    }
    let mut seen = std::collections::HashSet::new();
    let mut pcap = 0.0;
    let mut largest = (String::new(), 0.0);
    for (path, p) in pcap_ports {
        if seen.insert(*p) {
            let b = 24.0 + est.port_bytes[*p as usize];
            pcap += b;
            if b > largest.1 {
                largest = (path.clone(), b);
            }
        }
    }
    let bound = s.limits.pcap_bytes();
    bound.allows(
        &largest.0,
        pcap,
        &format!(
            "the captures would write about {:.2} GB ({:.2} GB from {})",
            pcap / 1e9,
            largest.1 / 1e9,
            largest.0
        ),
    )
}

/// Bytes one TCP flow takes while the scenario is built and run: its connection's two ends,
/// their buffers' bookkeeping, and its rows. Validating 400 000 flows of a workload peaked
/// at 1.37 GB (3.4 KB a flow); a run adds packets in flight and rows.
const BYTES_PER_FLOW: f64 = 6_000.0;

/// The flows the scenario asks for (copies, and what each workload draws on average) within
/// `limits.flows` and the memory available, before any is built.
fn check_flow_count(c: &Ctx) -> Result<(), ScenarioError> {
    let s = c.scenario;
    let mut total = 0.0;
    let mut most = (String::from("flows"), 0.0);
    for (i, f) in s.flows.iter().enumerate() {
        let n = f.count.unwrap_or(1) as f64;
        total += n;
        if n > most.1 {
            most = (format!("flows[{i}].count"), n);
        }
    }
    for (i, w) in s.workloads.iter().enumerate() {
        let path = format!("workloads[{i}]");
        let n = arrivals(c, &path, w)?.expected();
        total += n;
        if n > most.1 {
            let key = if w.arrival_rate.is_some() {
                "arrival_rate"
            } else {
                "load"
            };
            most = (format!("{path}.{key}"), n);
        }
    }
    let implies = format!(
        "{} flows in the run ({} from {})",
        limits::figure(total),
        limits::figure(most.1),
        most.0
    );
    s.limits.flows().allows(&most.0, total, &implies)?;
    if let Some(avail) = memory_available() {
        let need = total * BYTES_PER_FLOW;
        if need > 0.8 * avail {
            return Err(err(
                most.0,
                format!(
                    "{implies} need about {:.1} GB; {:.1} GB of memory is available",
                    need / 1e9,
                    avail / 1e9
                ),
            ));
        }
    }
    Ok(())
}

fn add_workload(
    c: &mut Ctx,
    path: &str,
    w: &WorkloadSpec,
    index: usize,
) -> Result<(), ScenarioError> {
    let Arrivals {
        srcs,
        dsts,
        dist,
        rate,
        start,
        stop,
        max,
    } = arrivals(c, path, w)?;
    let mut rng = rng::stream(c.seed, rng::kind::WORKLOAD, index as u64);
    let exp = rand_distr::Exp::new(rate).map_err(|e| err(path, e.to_string()))?;
    let args = TcpFlowArgs {
        cc: w.cc.as_deref(),
        ecn: w.ecn.as_deref(),
        cc_params: w.cc_params.as_ref(),
        ecn_params: w.ecn_params.as_ref(),
        tcp: w.tcp.as_ref(),
        client_initiated: w.client_initiated.unwrap_or(false),
        stop: None,
    };
    let base = w.name.clone().unwrap_or_else(|| format!("w{index}"));
    check_name(&format!("{path}.name"), "workload", &base)?;
    let mut t = start as f64 / 1e12;
    let mut k = 0usize;
    use rand::Rng as _;
    loop {
        t += exp.sample(&mut rng);
        let at = crate::time::from_secs(t);
        if at >= stop || k as u64 >= max {
            break;
        }
        // The draw may exceed its mean, which was checked.
        let bound = c.scenario.limits.flows();
        if c.sim.flows.len() as u64 >= bound.value {
            return Err(err(
                format!("{path}.max_flows"),
                bound.exceeded(&format!(
                    "the workload draws more than {} flows",
                    bound.value
                )),
            ));
        }
        let s = srcs[rng.gen_range(0..srcs.len())];
        let mut d = dsts[rng.gen_range(0..dsts.len())];
        if d == s {
            // Pick another destination when the lists overlap.
            match dsts.iter().find(|&&x| x != s) {
                Some(&x) => d = x,
                None => {
                    return Err(err(
                        format!("{path}.dst"),
                        "every destination equals the source",
                    ))
                }
            }
        }
        let size = dist.sample(&mut rng).max(1.0).round() as u64;
        let name = format!("{base}.{k}");
        if !c.flow_names.insert(name.clone()) {
            return Err(err(
                format!("{path}.name"),
                format!("duplicate flow name \"{name}\""),
            ));
        }
        add_tcp_flow(c, path, &name, s, d, Some(size), at, &args)?;
        k += 1;
    }
    Ok(())
}

/// Flow-size sampler.
pub struct SizeSampler {
    kind: SizeKind,
}

enum SizeKind {
    Fixed(f64),
    Pareto { scale: f64, shape: f64 },
    Exp(f64),
    Empirical(Vec<(f64, f64)>),
}

impl SizeSampler {
    pub fn new(path: &str, d: &SizeDist) -> Result<Self, ScenarioError> {
        let kind = match d {
            SizeDist::Fixed(FixedSize { size }) if size.0 > 0 => SizeKind::Fixed(size.0 as f64),
            SizeDist::Fixed(_) => return Err(err(format!("{path}.size"), "must be positive")),
            SizeDist::Pareto(ParetoSize { mean, shape }) => {
                if !(*shape > 1.0 && shape.is_finite()) {
                    return Err(err(
                        format!("{path}.shape"),
                        "must be greater than 1 (the mean is infinite otherwise)",
                    ));
                }
                if mean.0 == 0 {
                    return Err(err(format!("{path}.mean"), "must be positive"));
                }
                // Mean of Pareto(x_m, a) is a·x_m/(a−1).
                SizeKind::Pareto {
                    scale: mean.0 as f64 * (shape - 1.0) / shape,
                    shape: *shape,
                }
            }
            SizeDist::Exponential(ExponentialSize { mean }) if mean.0 > 0 => {
                SizeKind::Exp(mean.0 as f64)
            }
            SizeDist::Exponential(_) => {
                return Err(err(format!("{path}.mean"), "must be positive"))
            }
            SizeDist::Empirical(EmpiricalSize { cdf }) => {
                if cdf.len() < 2 {
                    return Err(err(format!("{path}.cdf"), "needs at least two points"));
                }
                for (i, w) in cdf.windows(2).enumerate() {
                    if !(w[1].0 >= w[0].0 && w[1].1 >= w[0].1) {
                        return Err(err(
                            format!("{path}.cdf[{}]", i + 1),
                            "sizes and probabilities must be non-decreasing",
                        ));
                    }
                }
                if cdf[0].0 < 0.0 || cdf[0].1 < 0.0 || (cdf[cdf.len() - 1].1 - 1.0).abs() > 1e-9 {
                    return Err(err(
                        format!("{path}.cdf"),
                        "must start at a non-negative size and end at probability 1",
                    ));
                }
                SizeKind::Empirical(cdf.clone())
            }
        };
        Ok(SizeSampler { kind })
    }

    pub fn mean(&self) -> f64 {
        match &self.kind {
            SizeKind::Fixed(s) => *s,
            SizeKind::Pareto { scale, shape } => shape * scale / (shape - 1.0),
            SizeKind::Exp(m) => *m,
            SizeKind::Empirical(c) => {
                // Piecewise-linear CDF: uniform within each segment.
                let mut m = c[0].0 * c[0].1;
                for w in c.windows(2) {
                    m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
                }
                m
            }
        }
    }

    pub fn sample(&self, rng: &mut rng::Rng) -> f64 {
        use rand::Rng as _;
        let u: f64 = rng.gen();
        match &self.kind {
            SizeKind::Fixed(s) => *s,
            SizeKind::Pareto { scale, shape } => scale / (1.0 - u).powf(1.0 / shape),
            SizeKind::Exp(m) => -m * (1.0 - u).ln(),
            SizeKind::Empirical(c) => {
                if u <= c[0].1 {
                    return c[0].0;
                }
                for w in c.windows(2) {
                    if u <= w[1].1 {
                        let span = w[1].1 - w[0].1;
                        let f = if span > 0.0 { (u - w[0].1) / span } else { 1.0 };
                        return w[0].0 + f * (w[1].0 - w[0].0);
                    }
                }
                c[c.len() - 1].0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Duration;

    #[test]
    fn time_series_rows_are_bounded_by_the_memory_available() {
        let every = Duration(10 * crate::time::US);
        // 100 M rows need ~17 GB: fine with 64 GB, refused with a 3 GB cap.
        let bound = Limits::default().sample_rows();
        assert!(check_sample_rows(1e8, every, bound, Some(64e9)).is_ok());
        let e = check_sample_rows(1e8, every, bound, Some(3e9)).unwrap_err();
        assert_eq!(e.path, "measure.interval");
        assert!(
            e.message
                .contains("100 million rows (~17.0 GB; 3.0 GB of memory is available)"),
            "{}",
            e.message
        );
        // Without a reading of memory only the fixed limit applies.
        assert!(check_sample_rows(1e8, every, bound, None).is_ok());
        let e = check_sample_rows(4e8, every, bound, None).unwrap_err();
        assert!(e.message.contains("limits.sample_rows"), "{}", e.message);
        let raised = Limits {
            sample_rows: Some(500_000_000),
            ..Limits::default()
        };
        assert!(check_sample_rows(4e8, every, raised.sample_rows(), None).is_ok());
        assert!(memory_available().is_some_and(|b| b > 0.0));
    }
}
