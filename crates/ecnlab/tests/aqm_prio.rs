//! A priority queue's bands push packets out as they would at a port of their own: an FQ-CoDel
//! data band over its limit drops from the fattest flow's head (Linux's fq_codel_drop), and
//! the port counts and frees those packets as it does under a plain FQ-CoDel.

use ecnlab::app::udp::{UdpPattern, UdpSink, UdpSource, UdpSourceConfig};
use ecnlab::aqm::{DropReason, DropTail, FqCodel, FqCodelConfig, Limit, PrioQueue, Qdisc};
use ecnlab::engine::rng;
use ecnlab::net::{node_addr, LinkSpec, PortCounters, Sim};
use ecnlab::time::{MS, SEC};
use ecnlab::wire::Ecn;

fn fifo(n: u32) -> Box<dyn Qdisc> {
    Box::new(DropTail::new(Limit::Packets(n)))
}

/// FQ-CoDel at a 50-packet limit (Linux's defaults otherwise).
fn fq_codel() -> Box<dyn Qdisc> {
    let cfg = FqCodelConfig {
        limit: 50,
        ..serde_json::from_str("{}").unwrap()
    };
    Box::new(FqCodel::new(&cfg, 7).unwrap())
}

/// Two CBR flows of 1000-byte Not-ECT packets, 12 and 4 Mb/s for 2 s, from two hosts through
/// a 10 Mb/s, 5 ms bottleneck under `queue` to one host; run to 3 s (the network has drained).
/// Returns the bottleneck's counters, the packets each flow sent and received, and the run.
fn overload(queue: Box<dyn Qdisc>) -> (PortCounters, [(u64, u64); 2], Sim) {
    let mut sim = Sim::new(3);
    let (s1, s2, r1, r2, d) = (
        sim.add_host("s1"),
        sim.add_host("s2"),
        sim.add_router("r1"),
        sim.add_router("r2"),
        sim.add_host("d"),
    );
    let access = LinkSpec::new(100_000_000, MS);
    sim.connect(s1, r1, &access, fifo(1000), fifo(1000));
    sim.connect(s2, r1, &access, fifo(1000), fifo(1000));
    let bottleneck_link = LinkSpec::new(10_000_000, 5 * MS);
    let (bottleneck, _) = sim.connect(r1, r2, &bottleneck_link, queue, fifo(1000));
    sim.connect(r2, d, &access, fifo(1000), fifo(1000));
    for (from, rate_bps) in [(s1, 12_000_000), (s2, 4_000_000)] {
        let sink = sim.add_endpoint(d, Box::new(UdpSink::default()));
        let flow = sim.add_flow("cbr", sim.next_endpoint_id(), sink);
        let cfg = UdpSourceConfig {
            rate_bps,
            packet_size: 1000,
            pattern: UdpPattern::Cbr,
            start: 0,
            stop: 2 * SEC,
            ecn: Ecn::NOT_ECT,
            on_off: None,
        };
        let rng = rng::stream(3, rng::kind::ENDPOINT, flow as u64);
        let src = UdpSource::new(cfg, node_addr(from), node_addr(d), sink, flow, rng);
        sim.add_endpoint(from, Box::new(src));
    }
    sim.run_until(3 * SEC);
    let flows = sim.flow_records();
    let counts = [0, 1].map(|i| {
        (
            flows[i].packets_sent.unwrap(),
            flows[i].packets_received.unwrap(),
        )
    });
    (sim.ports[bottleneck as usize].counters.clone(), counts, sim)
}

/// Only data crosses the bottleneck, so the priority queue's ACK band stays empty and the
/// port must see exactly what it sees under the FQ-CoDel band alone: the same drops, each
/// counted and freed (conservation), every packet sent either received or dropped there.
#[test]
fn a_priority_queue_hands_on_the_packets_its_fq_codel_band_pushes_out() {
    let (plain, plain_flows, sim) = overload(fq_codel());
    sim.conservation().unwrap();
    let (prio, prio_flows, sim) = overload(Box::new(PrioQueue::new(fifo(1000), fq_codel())));
    sim.conservation().unwrap();
    assert_eq!(sim.pool.live(), 0);
    eprintln!(
        "drops: plain {} ({} overflow), prio {} ({} overflow); flows {prio_flows:?}",
        plain.dropped(),
        plain.drop(DropReason::Overflow),
        prio.dropped(),
        prio.drop(DropReason::Overflow)
    );
    // 4000 packets offered in 2 s to a link that serves 2500 in that time: at least the 1450
    // beyond those and the band's 50 go. The band's limit is reached (in 0.08 s) long before
    // CoDel's 100 ms interval, so some go by overflow, the packets the band pushes out. The
    // 4 Mb/s flow stays below its 5 Mb/s fair share and loses nothing (RFC 8290 §1).
    let (sent, received) = prio_flows
        .iter()
        .fold((0, 0), |(s, r), &(fs, fr)| (s + fs, r + fr));
    assert_eq!((sent, prio.arrived_pkts), (4000, 4000));
    assert_eq!(prio.dropped(), sent - received);
    assert!(prio.dropped() >= 1450, "{prio:?}");
    assert!(prio.drop(DropReason::Overflow) > 0, "{prio:?}");
    assert_eq!(prio_flows[1], (1000, 1000));
    assert_eq!(prio_flows, plain_flows);
    assert_eq!(prio.drops, plain.drops);
    assert_eq!(prio.drop_bytes, plain.drop_bytes);
    assert_eq!(
        (prio.deq_pkts, prio.max_backlog),
        (plain.deq_pkts, plain.max_backlog)
    );
}
