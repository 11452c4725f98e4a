//! What a run says about itself when it probably did not do what its author meant: a
//! bottleneck left mostly idle while bulk flows were backlogged on it (a scheme that stalls or
//! never grows its window), and a node element that never acted. Both are warnings in the
//! run's metadata (run.json, `ecnlab.run`, a sweep's runs table), never errors: the run's
//! numbers stand, the reader is told what to look at.
//!
//! The idle-link check watches, for every bulk TCP flow (no size, or at least
//! [`BULK_BYTES`]), the slowest port on its path. For each such port, from the first of its
//! bulk flows' starts plus [`WARMUP`] (slow start does not count) to the end of the run, it
//! measures the fraction of time the port was transmitting. Below [`IDLE_BUSY_FRACTION`] the
//! run warns. Only ports with a bulk flow still unfinished at the end are judged: a flow that
//! completed was not held back for long.

use super::schema::Scenario;
use crate::net::{PortId, Sim};
use crate::stats::FlowRecord;
use crate::time::{to_secs, Time, SEC};
use std::collections::HashMap;

/// A TCP flow of at least this size (or without a size) is bulk: it is backlogged until it
/// ends, so its bottleneck should be busy.
pub const BULK_BYTES: u64 = 1_000_000;
/// Slow start of the first bulk flow on a port does not count.
pub const WARMUP: Time = SEC;
/// A port busy less than this fraction of the time while bulk flows are backlogged on it is
/// reported.
pub const IDLE_BUSY_FRACTION: f64 = 0.5;

/// One port watched for idleness: the bulk flows whose slowest link it is, from when.
struct Watched {
    port: PortId,
    from: Time,
    flows: Vec<u32>,
    /// The port's transmitting time at `from` (None until the run reaches `from`).
    busy_at_from: Option<Time>,
}

/// The idle-link watch of one run: planned before the run, told when the run reaches the
/// times it asks for ([`IdleWatch::next_stop`]), read at the end.
pub struct IdleWatch {
    watched: Vec<Watched>,
}

/// A port's transmitting time up to now, counting a transmission in progress.
fn busy_time(sim: &Sim, port: PortId) -> Time {
    let p = &sim.ports[port as usize];
    let running = if p.busy.is_some() {
        sim.now().saturating_sub(p.busy_since)
    } else {
        0
    };
    p.counters.busy_time + running
}

impl IdleWatch {
    /// Finds every bulk TCP flow's slowest port (the one with the least capacity over the
    /// run; the first of equals) and the time from which it is judged.
    pub fn plan(sim: &Sim, end: Time) -> Self {
        let mut by_port: HashMap<PortId, Watched> = HashMap::new();
        let mut path_cache: HashMap<(u32, u32), Option<PortId>> = HashMap::new();
        for (i, (f, r)) in sim.flows.iter().zip(sim.flow_records()).enumerate() {
            let bulk = r.size_bytes.map_or(true, |s| s >= BULK_BYTES);
            if r.transport != "tcp" || !bulk {
                continue;
            }
            let Some(start) = r.start_s else { continue };
            let from = ((start * SEC as f64) as Time).saturating_add(WARMUP);
            if from >= end {
                continue;
            }
            let (a, b) = (sim.endpoint_node(f.src_ep), sim.endpoint_node(f.dst_ep));
            let slowest = *path_cache.entry((a, b)).or_insert_with(|| {
                let ports = sim.path_ports(a, b)?;
                ports.into_iter().min_by(|&x, &y| {
                    let cap = |p: PortId| sim.ports[p as usize].rate.capacity_bits(end);
                    cap(x).total_cmp(&cap(y))
                })
            });
            let Some(port) = slowest else { continue };
            let w = by_port.entry(port).or_insert(Watched {
                port,
                from,
                flows: Vec::new(),
                busy_at_from: None,
            });
            w.from = w.from.min(from);
            w.flows.push(i as u32);
        }
        let mut watched: Vec<Watched> = by_port.into_values().collect();
        watched.sort_by_key(|w| (w.from, w.port));
        IdleWatch { watched }
    }

    /// The next simulated time the run must stop at so the watch can read a port.
    pub fn next_stop(&self) -> Option<Time> {
        self.watched
            .iter()
            .filter(|w| w.busy_at_from.is_none())
            .map(|w| w.from)
            .min()
    }

    /// Reads the ports whose judging starts now (the run has reached `sim.now()`).
    pub fn observe(&mut self, sim: &Sim) {
        let now = sim.now();
        for w in self.watched.iter_mut() {
            if w.busy_at_from.is_none() && w.from <= now {
                w.busy_at_from = Some(busy_time(sim, w.port));
            }
        }
    }

    /// The warnings at the end of the run (`records`: the flows table's rows).
    pub fn warnings(&self, sim: &Sim, records: &[FlowRecord]) -> Vec<String> {
        let now = sim.now();
        let mut out = Vec::new();
        for w in &self.watched {
            let Some(busy0) = w.busy_at_from else {
                continue;
            };
            let unfinished: Vec<&FlowRecord> = w
                .flows
                .iter()
                .map(|&i| &records[i as usize])
                .filter(|r| r.fct_s.is_none())
                .collect();
            let span = now.saturating_sub(w.from);
            if unfinished.is_empty() || span < SEC {
                continue;
            }
            let busy = (busy_time(sim, w.port) - busy0) as f64 / span as f64;
            if busy >= IDLE_BUSY_FRACTION {
                continue;
            }
            let mut schemes: Vec<&str> = unfinished.iter().map(|r| r.scheme.as_str()).collect();
            schemes.sort_unstable();
            schemes.dedup();
            let names: Vec<&str> = unfinished.iter().take(4).map(|r| r.name.as_str()).collect();
            let more = if unfinished.len() > names.len() {
                format!(" and {} more", unfinished.len() - names.len())
            } else {
                String::new()
            };
            out.push(format!(
                "port {} was busy {:.1} % of the time from {:.1} s to {:.1} s while bulk flow(s) {}{} ({}) were backlogged on it: the senders left their bottleneck mostly idle",
                sim.ports[w.port as usize].name,
                busy * 100.0,
                to_secs(w.from),
                to_secs(now),
                names.join(", "),
                more,
                schemes.join(", "),
            ));
        }
        out
    }
}

/// Elements that never acted over a run: `elements` are the nodes' counters in node order
/// of the scenario's `[[elements]]` (by node name).
pub fn idle_elements(s: &Scenario, elements: &[(String, Vec<(&'static str, u64)>)]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, e) in s.elements.iter().enumerate() {
        let Some((_, counters)) = elements.iter().find(|(node, _)| *node == e.node) else {
            continue;
        };
        let acts = super::registry::element_actions(&e.component.kind);
        if acts.is_empty() {
            continue;
        }
        let value = |name: &str| counters.iter().find(|(k, _)| *k == name).map_or(0, |c| c.1);
        if acts.iter().any(|a| value(a) > 0) {
            continue;
        }
        let said: Vec<String> = counters.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        out.push(format!(
            "elements[{i}] ({} on {}) never acted over the run ({})",
            e.component.kind,
            e.node,
            said.join(", ")
        ));
    }
    out
}
