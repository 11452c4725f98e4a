//! What a scenario's traffic will cost, reckoned from its rates before it runs: packets per
//! port, simulated events, pcap bytes. A UDP flow of 1000 Tbit/s or a TCP flow on a 600
//! Tbit/s trace would otherwise be found out only hours into the run.
//!
//! The flows that run until they stop (UDP, bulk TCP) share the ports' mean capacities
//! max-min fairly (each UDP flow at most at its own rate), as TCP flows sharing a bottleneck
//! roughly do; a finite TCP flow carries its bytes. Every port carries at most its capacity.
//! Each data packet crossing a port costs about [`EVENTS_PER_PACKET_HOP`] events, and a TCP
//! receiver acknowledges every other segment. The estimate assumes every flow runs at once
//! from its start, which for flows started one after another puts it within about a factor
//! of two; it is meant to refuse what is off by orders of magnitude, not to budget tightly.

use crate::net::{NodeId, PortId, Sim};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// Events per data packet and port it crosses (ACK hops counted as packets too). With 3
/// the estimate came to 1.1–1.9 times the events of the runs of scenarios/ (dumbbell, UDP,
/// parking lot, web workload, campus, the TCP references) and of the benchmark dumbbells
/// (3.2 for RED's), so it errs on the side of cost.
pub const EVENTS_PER_PACKET_HOP: f64 = 3.0;
/// Bytes of a pure ACK on the wire (IPv4 + TCP with timestamps).
const ACK_BYTES: f64 = 52.0;
/// Bytes of a pcap record's header.
const PCAP_RECORD: f64 = 16.0;

/// How much one flow sends.
#[derive(Clone, Copy, Debug)]
pub(super) enum Load {
    /// Until it stops: at most `bps` (infinite: as fast as the network lets it) for
    /// `active_s` seconds.
    Rate { bps: f64, active_s: f64 },
    /// `bytes` of payload, then done.
    Bytes(f64),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Demand {
    /// Index of the scenario key the flow comes from (`flows[2]`, `workloads[0]`).
    entry: u32,
    src: NodeId,
    dst: NodeId,
    load: Load,
    /// Bytes of a data packet on the wire, and of its payload.
    packet: f64,
    payload: f64,
    tcp: bool,
}

/// The flows of a scenario as the budget sees them.
#[derive(Default)]
pub(super) struct Flows {
    entries: Vec<String>,
    demands: Vec<Demand>,
}

impl Flows {
    /// Adds one flow of scenario key `entry`.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        entry: &str,
        src: NodeId,
        dst: NodeId,
        load: Load,
        packet: f64,
        payload: f64,
        tcp: bool,
    ) {
        if self.entries.last().map(String::as_str) != Some(entry) {
            self.entries.push(entry.to_string());
        }
        self.demands.push(Demand {
            entry: (self.entries.len() - 1) as u32,
            src,
            dst,
            load,
            packet,
            payload,
            tcp,
        });
    }
}

/// What the run will cost.
pub(super) struct Estimate {
    /// Packets each port transmits over the run (data and ACKs).
    pub port_packets: Vec<f64>,
    /// Bytes each port transmits over the run.
    pub port_bytes: Vec<f64>,
    pub events: f64,
    /// The scenario key whose flows cost the most events, and that many.
    pub costliest: (String, f64),
}

/// A max-min fair share of capacity for the flows with a rate, by progressive filling: the
/// port (or flow's own rate) that fills first fixes the rates of its flows, then the next.
fn max_min(caps: &[f64], paths: &[&[PortId]], wants: &[f64]) -> Vec<f64> {
    let nports = caps.len();
    let mut through: Vec<Vec<u32>> = vec![Vec::new(); nports];
    for (f, path) in paths.iter().enumerate() {
        for &p in *path {
            through[p as usize].push(f as u32);
        }
    }
    let mut left: Vec<f64> = caps.to_vec();
    let mut unfixed: Vec<u32> = through.iter().map(|t| t.len() as u32).collect();
    let mut version = vec![0u32; nports];
    let mut rate = vec![f64::NAN; paths.len()];

    #[derive(PartialEq)]
    struct Next(f64, bool, u32, u32);
    impl Eq for Next {}
    impl PartialOrd for Next {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Next {
        // The lowest level first (a min-heap).
        fn cmp(&self, o: &Self) -> Ordering {
            o.0.total_cmp(&self.0)
                .then(o.1.cmp(&self.1))
                .then(o.2.cmp(&self.2))
        }
    }
    let mut heap = BinaryHeap::new();
    for p in 0..nports {
        if unfixed[p] > 0 {
            heap.push(Next(left[p] / unfixed[p] as f64, true, p as u32, 0));
        }
    }
    for (f, &w) in wants.iter().enumerate() {
        if w.is_finite() {
            heap.push(Next(w, false, f as u32, 0));
        }
    }
    // The ports a step's fixed flows cross, each once: their new levels are pushed when the
    // step ends. An entry per fixed flow and port would be stale before it is popped (the
    // step's next flow changes the port again): a million flows on one bottleneck pushed
    // three million.
    let mut touched: Vec<u32> = Vec::new();
    let mut is_touched = vec![false; nports];
    let fix = |f: usize,
               level: f64,
               rate: &mut Vec<f64>,
               left: &mut Vec<f64>,
               unfixed: &mut Vec<u32>,
               version: &mut Vec<u32>,
               touched: &mut Vec<u32>,
               is_touched: &mut Vec<bool>| {
        rate[f] = level;
        for &q in paths[f] {
            let q = q as usize;
            left[q] = (left[q] - level).max(0.0);
            unfixed[q] -= 1;
            version[q] += 1;
            if !is_touched[q] {
                is_touched[q] = true;
                touched.push(q as u32);
            }
        }
    };
    while let Some(Next(level, is_port, id, ver)) = heap.pop() {
        let id = id as usize;
        if is_port {
            if ver != version[id] || unfixed[id] == 0 {
                continue;
            }
            for &f in &through[id] {
                let f = f as usize;
                if rate[f].is_nan() {
                    fix(
                        f,
                        level,
                        &mut rate,
                        &mut left,
                        &mut unfixed,
                        &mut version,
                        &mut touched,
                        &mut is_touched,
                    );
                }
            }
        } else if rate[id].is_nan() {
            fix(
                id,
                level,
                &mut rate,
                &mut left,
                &mut unfixed,
                &mut version,
                &mut touched,
                &mut is_touched,
            );
        }
        for q in touched.drain(..) {
            let q = q as usize;
            is_touched[q] = false;
            if unfixed[q] > 0 {
                heap.push(Next(
                    left[q] / unfixed[q] as f64,
                    true,
                    q as u32,
                    version[q],
                ));
            }
        }
    }
    // A flow with no port on its path (none here: source and destination differ).
    rate.iter()
        .map(|r| if r.is_nan() { 0.0 } else { *r })
        .collect()
}

/// Reckons what the run of `sim` with `flows` over `duration_s` will cost.
pub(super) fn estimate(sim: &Sim, flows: &Flows, duration_s: f64) -> Estimate {
    let nports = sim.ports.len();
    let until = crate::time::from_secs(duration_s);
    let cap_bits: Vec<f64> = sim
        .ports
        .iter()
        .map(|p| p.rate.capacity_bits(until))
        .collect();
    let mean_bps: Vec<f64> = cap_bits.iter().map(|b| b / duration_s).collect();
    // Each flow's path and its ACKs' path, as indices into the paths between pairs of hosts,
    // each found once (a million flows of the benchmark cross a thousand paths); path 0 is
    // empty (a UDP flow's ACKs).
    let mut paths_between: Vec<Vec<PortId>> = vec![Vec::new()];
    let mut path_of: HashMap<(NodeId, NodeId), u32> = HashMap::new();
    let mut path_index = |a: NodeId, b: NodeId| -> u32 {
        *path_of.entry((a, b)).or_insert_with(|| {
            paths_between.push(sim.path_ports(a, b).unwrap_or_default());
            // At most two paths per flow.
            u32::try_from(paths_between.len() - 1).expect("paths fit in u32")
        })
    };
    let mut fwd: Vec<u32> = Vec::with_capacity(flows.demands.len());
    let mut rev: Vec<u32> = Vec::with_capacity(flows.demands.len());
    for d in &flows.demands {
        fwd.push(path_index(d.src, d.dst));
        rev.push(if d.tcp { path_index(d.dst, d.src) } else { 0 });
    }
    let fwd = |f: usize| paths_between[fwd[f] as usize].as_slice();
    let rev = |f: usize| paths_between[rev[f] as usize].as_slice();
    // Rates of the flows that run until they stop.
    let rated: Vec<usize> = (0..flows.demands.len())
        .filter(|&f| matches!(flows.demands[f].load, Load::Rate { .. }))
        .collect();
    let paths: Vec<&[PortId]> = rated.iter().map(|&f| fwd(f)).collect();
    let wants: Vec<f64> = rated
        .iter()
        .map(|&f| match flows.demands[f].load {
            Load::Rate { bps, .. } => bps,
            Load::Bytes(_) => unreachable!(),
        })
        .collect();
    let shares = max_min(&mean_bps, &paths, &wants);
    let mut share = vec![0.0; flows.demands.len()];
    for (k, &f) in rated.iter().enumerate() {
        share[f] = shares[k];
    }
    // Data packets of each flow, and what the ports carry of them.
    let mut packets = vec![0.0; flows.demands.len()];
    let mut sent_bits = vec![0.0; nports];
    for (f, d) in flows.demands.iter().enumerate() {
        packets[f] = match d.load {
            Load::Rate { active_s, .. } => share[f] * active_s / (8.0 * d.packet),
            Load::Bytes(b) => (b / d.payload).ceil(),
        };
        for &p in fwd(f) {
            sent_bits[p as usize] += packets[f] * d.packet * 8.0;
        }
    }
    // A port carries its capacity at most: what the flows would send beyond it is not sent.
    let scale: Vec<f64> = (0..nports)
        .map(|p| {
            if sent_bits[p] > cap_bits[p] {
                cap_bits[p] / sent_bits[p]
            } else {
                1.0
            }
        })
        .collect();
    let mut port_packets = vec![0.0; nports];
    let mut port_bytes = vec![0.0; nports];
    let mut by_entry = vec![0.0; flows.entries.len()];
    for (f, d) in flows.demands.iter().enumerate() {
        let mut hops = 0.0;
        for &p in fwd(f) {
            let n = packets[f] * scale[p as usize];
            port_packets[p as usize] += n;
            port_bytes[p as usize] += n * (d.packet + PCAP_RECORD);
            hops += n;
        }
        // UDP packets made beyond what the first port takes are made and dropped there.
        if let (false, Load::Rate { bps, active_s }) = (d.tcp, d.load) {
            hops += (bps.min(1e18) * active_s / (8.0 * d.packet) - packets[f]).max(0.0);
        }
        let acks = packets[f] / 2.0;
        for &p in rev(f) {
            port_packets[p as usize] += acks;
            port_bytes[p as usize] += acks * (ACK_BYTES + PCAP_RECORD);
            hops += acks;
        }
        by_entry[d.entry as usize] += hops * EVENTS_PER_PACKET_HOP;
    }
    let events = by_entry.iter().sum();
    let costliest = by_entry
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or((String::new(), 0.0), |(i, &e)| {
            (flows.entries[i].clone(), e)
        });
    Estimate {
        port_packets,
        port_bytes,
        events,
        costliest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_min_shares_a_bottleneck_and_gives_the_rest_to_who_can_use_it() {
        // Ports 0 (10) and 1 (4): flows a and b cross both, c only port 0, d port 1 wanting 1.
        let caps = [10.0, 4.0];
        let (both, first, second) = ([0u32, 1], [0u32], [1u32]);
        let paths: Vec<&[PortId]> = vec![&both, &both, &first, &second];
        let wants = [f64::INFINITY, f64::INFINITY, f64::INFINITY, 1.0];
        let r = max_min(&caps, &paths, &wants);
        // d takes its 1; a and b split the 3 left on port 1; c takes port 0's remaining 7.
        assert_eq!(r, vec![1.5, 1.5, 7.0, 1.0]);
    }
}
