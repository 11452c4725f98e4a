//! MECN end to end through the TCP connection, on the paper's topology (§3): sources —10 Mb/s,
//! 2 ms— R1 —1.5 Mb/s, 20 ms— R2 —10 Mb/s, 4 ms— sinks, Reno-style senders capped at 25
//! segments, 1000-byte segments, an ACK per segment. Checks that the pieces work together
//! (both levels marked, echoed and acted on; the link kept busy); the paper's figures are
//! reproduced by the experiments, not here.

use super::*;
use crate::aqm::{DropTail, Limit, Qdisc};
use crate::engine::rng;
use crate::net::{LinkSpec, NodeId, PortId, Sim};
use crate::stats::FlowRecord;
use crate::tcp::{add_tcp_flow, TcpConfig, TcpFlowSpec};
use crate::time::{MS, SEC};

const BOTTLENECK_BPS: u64 = 1_500_000;

fn droptail() -> Box<dyn Qdisc> {
    Box::new(DropTail::new(Limit::Packets(1000)))
}

/// Runs `n` bulk MECN flows for `secs` with `min_th`; returns the simulation, the bottleneck
/// port and the flow records.
fn run(n: usize, min_th: f64, secs: u64) -> (Sim, PortId, Vec<FlowRecord>) {
    let mut sim = Sim::new(7);
    let (r1, r2) = (sim.add_router("r1"), sim.add_router("r2"));
    let red = MecnRed::new(
        MecnRedConfig {
            min_th,
            limit: 100,
            ..Default::default()
        },
        rng::stream(7, rng::kind::QDISC, 0),
    )
    .unwrap();
    let (bottleneck, _) = sim.connect(
        r1,
        r2,
        &LinkSpec::new(BOTTLENECK_BPS, 20 * MS),
        Box::new(red),
        droptail(),
    );
    let hosts: Vec<(NodeId, NodeId)> = (0..n)
        .map(|i| {
            let s = sim.add_host(&format!("s{i}"));
            let d = sim.add_host(&format!("d{i}"));
            sim.connect(
                s,
                r1,
                &LinkSpec::new(10_000_000, 2 * MS),
                droptail(),
                droptail(),
            );
            sim.connect(
                r2,
                d,
                &LinkSpec::new(10_000_000, 4 * MS),
                droptail(),
                droptail(),
            );
            (s, d)
        })
        .collect();
    let tcp = TcpConfig {
        initial_window: 2,
        delayed_ack: false,
        sack: false,
        ..Default::default()
    };
    for (i, &(s, d)) in hosts.iter().enumerate() {
        let spec = TcpFlowSpec {
            name: format!("f{i}"),
            src: s,
            dst: d,
            size: None,
            start: 0,
            client_initiated: false,
            config: tcp.clone(),
        };
        // The paper's runs: "window = 25" (the captions of Figs. 4, 6 and 7).
        let paper_runs = MecnRenoConfig {
            max_window: Some(25),
            ..Default::default()
        };
        let cc = MecnReno::new(paper_runs, tcp.mss).unwrap();
        let codec = || Box::new(MecnCodec::new(MecnCodecConfig::default()));
        add_tcp_flow(&mut sim, &spec, Box::new(cc), codec(), codec()).unwrap();
    }
    sim.run_until(secs * SEC);
    sim.conservation().unwrap();
    let flows = sim.flow_records();
    (sim, bottleneck, flows)
}

#[test]
fn two_flows_both_levels_marked_echoed_and_acted_on() {
    let (sim, bottleneck, flows) = run(2, 5.0, 20);
    let c = &sim.ports[bottleneck as usize].counters;
    let (incipient, moderate) = (
        c.marked[codepoint::INCIPIENT.bits() as usize],
        c.marked[codepoint::MODERATE.bits() as usize],
    );
    let l1: u64 = flows.iter().map(|f| f.signals_l1.unwrap_or(0)).sum();
    let l2: u64 = flows.iter().map(|f| f.signals_l2.unwrap_or(0)).sum();
    let goodput: f64 = flows.iter().map(|f| f.goodput_bps.unwrap_or(0.0)).sum();
    let busy = c.busy_time as f64 / (20 * SEC) as f64;
    eprintln!(
        "marks {incipient}/{moderate}, signals {l1}/{l2}, drops {:?}, goodput {goodput:.0}, busy {busy:.3}",
        c.drops
    );
    assert!(incipient > 0 && moderate > 0);
    assert!(l1 > 0 && l2 > 0);
    // Every delivered signal answers a mark: at most one per mark.
    assert!(l1 <= incipient && l2 <= moderate);
    assert!(flows.iter().all(|f| f.bytes_delivered.unwrap_or(0) > 0));
    assert!(busy > 0.9, "link busy {busy}");
    assert!(goodput > 0.85 * BOTTLENECK_BPS as f64 * 1000.0 / 1040.0);
}
