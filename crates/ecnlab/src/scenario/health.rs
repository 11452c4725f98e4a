//! What a run says about itself when it probably did not do what its author meant: a
//! bottleneck left mostly idle while bulk flows were backlogged on it (a scheme that stalls or
//! never grows its window), and a node element that never acted. Both are warnings in the
//! run's metadata (run.json, `ecnlab.run`, a sweep's runs table), never errors: the run's
//! numbers stand, the reader is told what to look at.
//!
//! The idle-path check watches every bulk TCP flow (no size, or at least [`BULK_BYTES`]):
//! from its start plus [`WARMUP`] (slow start does not count) to the end of the run, the
//! fraction of time each port on its path was transmitting. A flow still unfinished at the
//! end was backlogged all that time, so some port on its path should have been busy: when
//! none was busy [`IDLE_BUSY_FRACTION`] of the time, the run warns (one warning per busiest
//! port, naming its flows). A flow that completed is not judged (it was not held back for
//! long), and runs with more than [`MAX_WATCHED`] bulk flows watch only the first ones.

use super::schema::Scenario;
use crate::net::{PortId, Sim};
use crate::stats::FlowRecord;
use crate::time::{to_secs, Time, SEC};
use std::collections::{BTreeMap, HashMap};

/// A TCP flow of at least this size (or without a size) is bulk: it is backlogged until it
/// ends, so its path should be busy.
pub const BULK_BYTES: u64 = 1_000_000;
/// Slow start of a bulk flow does not count.
pub const WARMUP: Time = SEC;
/// A backlogged flow none of whose ports was busy this fraction of the time is reported.
pub const IDLE_BUSY_FRACTION: f64 = 0.5;
/// Bulk flows watched at most (the first ones built); the rest are not judged.
pub const MAX_WATCHED: usize = 10_000;

/// One bulk flow watched: its path and the time from which it is judged.
struct Watched {
    flow: u32,
    /// Its path's index in [`IdleWatch::paths`] (flows between the same two hosts share one).
    path: u32,
    from: Time,
    /// Where its path's transmitting times at `from` start in [`IdleWatch::busy_at_from`]
    /// (`usize::MAX` until the run reaches `from`); flows on one path judged from the same
    /// time share them.
    busy_at: usize,
}

/// The idle-path watch of one run: planned before the run, told when the run reaches the
/// times it asks for ([`IdleWatch::next_stop`]), read at the end. A watched flow costs 24
/// bytes: paths and port readings are held once for every flow that shares them.
pub struct IdleWatch {
    /// By the time judging starts.
    watched: Vec<Watched>,
    /// The ports of each watched path.
    paths: Vec<Vec<PortId>>,
    /// Each path's ports' transmitting times at a judging start, one run per (path, time).
    busy_at_from: Vec<Time>,
    /// Index of the first flow not yet read.
    next: usize,
}

const _: () = assert!(std::mem::size_of::<Watched>() == 24);

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
    /// Finds every bulk TCP flow's path and the time from which it is judged.
    pub fn plan(sim: &Sim, end: Time) -> Self {
        // Path index of each pair of hosts (`None`: no path).
        let mut path_of: HashMap<(u32, u32), Option<u32>> = HashMap::new();
        let mut paths = Vec::new();
        let mut watched = Vec::new();
        // One record at a time: a million flows' records at once would be half a gigabyte.
        for (i, f) in sim.flows.iter().enumerate() {
            if watched.len() == MAX_WATCHED {
                break;
            }
            let r = sim.flow_record(i);
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
            let Some(path) = *path_of.entry((a, b)).or_insert_with(|| {
                let ports = sim.path_ports(a, b)?;
                paths.push(ports);
                // At most MAX_WATCHED paths.
                Some(u32::try_from(paths.len() - 1).expect("paths fit in u32"))
            }) else {
                continue;
            };
            watched.push(Watched {
                flow: i as u32,
                path,
                from,
                busy_at: usize::MAX,
            });
        }
        watched.sort_by_key(|w| (w.from, w.flow));
        IdleWatch {
            watched,
            paths,
            busy_at_from: Vec::new(),
            next: 0,
        }
    }

    /// The next simulated time the run must stop at so the watch can read its ports.
    pub fn next_stop(&self) -> Option<Time> {
        self.watched.get(self.next).map(|w| w.from)
    }

    /// Reads the ports of the flows whose judging starts now (the run has reached
    /// `sim.now()`).
    pub fn observe(&mut self, sim: &Sim) {
        let now = sim.now();
        // Where each path's readings at `now` start, once read.
        let mut read_now: HashMap<u32, usize> = HashMap::new();
        while let Some(w) = self.watched.get_mut(self.next) {
            if w.from > now {
                break;
            }
            w.busy_at = *read_now.entry(w.path).or_insert_with(|| {
                let at = self.busy_at_from.len();
                let ports = &self.paths[w.path as usize];
                self.busy_at_from
                    .extend(ports.iter().map(|&p| busy_time(sim, p)));
                at
            });
            self.next += 1;
        }
    }

    /// The warnings at the end of the run (`records`: the flows table's rows).
    pub fn warnings(&self, sim: &Sim, records: &[FlowRecord]) -> Vec<String> {
        let now = sim.now();
        // Busiest port → (its busy fraction, the flows, earliest judging start).
        let mut idle: BTreeMap<PortId, (f64, Vec<u32>, Time)> = BTreeMap::new();
        for w in &self.watched {
            let r = &records[w.flow as usize];
            let span = now.saturating_sub(w.from);
            if w.busy_at == usize::MAX || r.fct_s.is_some() || span < SEC {
                continue;
            }
            let ports = &self.paths[w.path as usize];
            let Some((port, busy)) = ports
                .iter()
                .zip(&self.busy_at_from[w.busy_at..w.busy_at + ports.len()])
                .map(|(&p, &b0)| (p, (busy_time(sim, p) - b0) as f64 / span as f64))
                .max_by(|x, y| x.1.total_cmp(&y.1))
            else {
                continue;
            };
            if busy >= IDLE_BUSY_FRACTION {
                continue;
            }
            let e = idle.entry(port).or_insert((busy, Vec::new(), w.from));
            e.0 = e.0.max(busy);
            e.1.push(w.flow);
            e.2 = e.2.min(w.from);
        }
        idle.into_iter()
            .map(|(port, (busy, flows, from))| {
                let rows: Vec<&FlowRecord> = flows.iter().map(|&i| &records[i as usize]).collect();
                let mut schemes: Vec<&str> = rows.iter().map(|r| r.scheme.as_str()).collect();
                schemes.sort_unstable();
                schemes.dedup();
                let names: Vec<&str> = rows.iter().take(4).map(|r| r.name.as_str()).collect();
                let more = if rows.len() > names.len() {
                    format!(" and {} more", rows.len() - names.len())
                } else {
                    String::new()
                };
                format!(
                    "bulk flow(s) {}{} ({}) were backlogged from {:.1} s to {:.1} s, yet no port on their path was busy more than {:.1} % of that time (the busiest: {}): the senders left their path mostly idle",
                    names.join(", "),
                    more,
                    schemes.join(", "),
                    to_secs(from),
                    to_secs(now),
                    busy * 100.0,
                    sim.ports[port as usize].name,
                )
            })
            .collect()
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
