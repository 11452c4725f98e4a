//! HFCC end to end through TCP: two flows share a 10 Mb/s, 40 ms RTT bottleneck under an
//! HFCC router with ACK priority; one is held far below its fair share by its window. In the
//! high-load region the router tells the large flow `11` and the small one `10`; the link
//! stays busy without loss.

use super::*;
use crate::aqm::PrioQueue;
use crate::engine::rng;
use crate::marker::{Marker, PortView};
use crate::net::{LinkSpec, Sim};
use crate::packet::Packet;
use crate::schemes::test_line::{droptail, fork, Fork};
use crate::schemes::vcp::VcpCodec;
use crate::tcp::{add_tcp_flow, TcpConfig, TcpFlowSpec};
use crate::time::{MS, SEC};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Counts the ECN codes of departing data packets by source address (never marks).
#[derive(Clone, Default)]
struct Codes(Rc<RefCell<HashMap<u32, [u64; 4]>>>);

impl Marker for Codes {
    fn feedback(&self) -> &'static str {
        "hfcc"
    }

    fn on_dequeue(&mut self, v: &PortView, pkt: &mut Packet) {
        if v.now >= 5 * SEC && !pkt.is_pure_ack() {
            self.0.borrow_mut().entry(pkt.ip.src).or_default()[pkt.ip.ecn.bits() as usize] += 1;
        }
    }
}

fn run(fair_share: FairShare, u_th: f64) -> ([u64; 4], [u64; 4], f64, u64) {
    let mut sim = Sim::new(11);
    // BDP 50 packets; buffer max(BDP, 2 per flow).
    let prio = Box::new(PrioQueue::new(droptail(1000), droptail(50)));
    let Fork {
        s1,
        s2,
        d,
        bottleneck,
        egress,
    } = fork(&mut sim, &LinkSpec::new(10_000_000, 18 * MS), prio);
    let cfg = HfccMarkerConfig {
        fair_share,
        u_th,
        ..Default::default()
    };
    let marker = HfccMarker::new(cfg, rng::stream(11, rng::kind::MARKER, 0)).unwrap();
    sim.set_marker(bottleneck, Box::new(marker));
    let codes = Codes::default();
    sim.set_marker(egress, Box::new(codes.clone()));
    for (name, src, cap) in [("large", s1, None), ("small", s2, Some(5))] {
        let tcp = TcpConfig {
            initial_window: 2,
            delayed_ack: false,
            ..Default::default()
        };
        let spec = TcpFlowSpec {
            name: name.into(),
            src,
            dst: d,
            size: None,
            start: 0,
            client_initiated: false,
            config: tcp.clone(),
        };
        let cc = HfccConfig {
            max_window: cap,
            ..Default::default()
        };
        let hfcc = Hfcc::new(cc, tcp.mss).unwrap();
        add_tcp_flow(
            &mut sim,
            &spec,
            Box::new(hfcc),
            Box::new(VcpCodec::hfcc()),
            Box::new(VcpCodec::hfcc()),
        )
        .unwrap();
    }
    sim.run_until(5 * SEC);
    let busy0 = sim.ports[bottleneck as usize].counters.busy_time;
    sim.run_until(30 * SEC);
    sim.conservation().unwrap();
    let c = &sim.ports[bottleneck as usize].counters;
    let busy = (c.busy_time - busy0) as f64 / (25 * SEC) as f64;
    let by_src = codes.0.borrow();
    let addr = |n| crate::net::node_addr(n);
    (by_src[&addr(s1)], by_src[&addr(s2)], busy, c.dropped())
}

#[test]
fn the_flow_above_its_share_is_told_to_decrease_and_the_one_below_to_increase() {
    let u_th = HfccMarkerConfig::default().u_th;
    for fair_share in [FairShare::Afd, FairShare::Mean] {
        let (large, small, busy, drops) = run(fair_share, u_th);
        eprintln!("{fair_share:?}: large {large:?} small {small:?} busy {busy:.3} drops {drops}");
        let share = |c: [u64; 4], code: usize| c[code] as f64 / c.iter().sum::<u64>() as f64;
        // Codes by source after the ramp: [Not-ECT, 01, 10, 11].
        assert!(share(large, 0b11) > 0.05, "{fair_share:?}: {large:?}");
        assert!(share(small, 0b11) < 0.01, "{fair_share:?}: {small:?}");
        assert!(share(small, 0b10) > 0.3, "{fair_share:?}: {small:?}");
        assert!(busy > 0.75, "{fair_share:?}: busy {busy}");
        assert_eq!(drops, 0);
    }
}
