//! HFCC end to end through TCP: two flows share a 10 Mb/s, 40 ms RTT bottleneck under an
//! HFCC router with ACK priority; one is held far below its fair share by its window. In the
//! high-load region the router tells the large flow `11` and the small one `10`; the link
//! stays busy without loss. Two HFCC routers on one path with different `t_p` and loads: the
//! sender scales by the `t_p` the tie rule picks.

use super::*;
use crate::app::udp::{UdpPattern, UdpSink, UdpSource, UdpSourceConfig};
use crate::aqm::PrioQueue;
use crate::engine::rng;
use crate::marker::{Marker, PortState};
use crate::net::{node_addr, LinkSpec, NodeId, Sim};
use crate::packet::Packet;
use crate::schemes::test_line::{droptail, fork, Fork};
use crate::schemes::vcp::VcpCodec;
use crate::tcp::{add_tcp_flow, TcpConfig, TcpFlowSpec};
use crate::time::{MS, NEVER, SEC};
use crate::wire::Ecn;
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

    fn on_dequeue(&mut self, v: &dyn PortState, pkt: &mut Packet) {
        if v.now() >= 5 * SEC && !pkt.is_pure_ack() {
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

/// A CBR flow of 1000-byte packets from `from` to `to` for the whole run.
fn cbr(sim: &mut Sim, from: NodeId, to: NodeId, rate_bps: u64) {
    let sink = sim.add_endpoint(to, Box::new(UdpSink::default()));
    let flow = sim.add_flow("cbr", sim.next_endpoint_id(), sink);
    let src = UdpSource::new(
        UdpSourceConfig {
            rate_bps,
            packet_size: 1000,
            pattern: UdpPattern::Cbr,
            start: 0,
            stop: NEVER,
            ecn: Ecn::NOT_ECT,
            on_off: None,
        },
        node_addr(from),
        node_addr(to),
        sink,
        flow,
        rng::stream(9, rng::kind::ENDPOINT, flow as u64),
    );
    sim.add_endpoint(from, Box::new(src));
}

/// One HFCC router as the two-router test sets it: its fixed `t_p` (in S, so announced) and
/// the CBR load of its hop in tenths of a percent of the target rate ξ·C.
#[derive(Clone, Copy, Debug)]
struct Hop {
    t_p_ms: u64,
    cbr_permille: u64,
}

const HOP_BPS: u64 = 100_000_000;

/// `s → r1 → r2 → d` over two 100 Mb/s, 5 ms hops, each under an HFCC router with a fixed
/// `t_p`; a CBR flow loads only r1's hop (x → y), another only r2's (z → d). The HFCC flow's
/// window is capped at 2 segments (about 1 % of a hop), so its RTT (≈ 23 ms) stays below
/// 80 ms: from its own RTT it would take t_p = 80 ms, which no router announces. Returns the
/// sender's t_p samples (every 100 ms from 2 s to 4 s) and each router's load factor and the
/// code it gives the flow at the end.
fn two_hfcc_routers(hops: [Hop; 2], t_p: TpMode, delayed_ack: bool) -> (Vec<f64>, [(f64, u8); 2]) {
    let mut sim = Sim::new(6);
    let (s, r1, r2, d) = (
        sim.add_host("s"),
        sim.add_router("r1"),
        sim.add_router("r2"),
        sim.add_host("d"),
    );
    let (x, y, z) = (sim.add_host("x"), sim.add_host("y"), sim.add_host("z"));
    let access = LinkSpec::new(1_000_000_000, MS);
    let hop = LinkSpec::new(HOP_BPS, 5 * MS);
    let prio = || Box::new(PrioQueue::new(droptail(1000), droptail(1000)));
    sim.connect(s, r1, &access, droptail(1000), droptail(1000));
    sim.connect(x, r1, &access, droptail(1000), droptail(1000));
    let (p1, _) = sim.connect(r1, r2, &hop, prio(), prio());
    sim.connect(r2, y, &access, droptail(1000), droptail(1000));
    sim.connect(z, r2, &access, droptail(1000), droptail(1000));
    let (p2, _) = sim.connect(r2, d, &hop, prio(), prio());
    for (port, h) in [(p1, hops[0]), (p2, hops[1])] {
        let cfg = HfccMarkerConfig {
            t_p_s: h.t_p_ms as f64 / 1e3,
            adapt_t_p: false,
            fair_share: FairShare::Mean,
            ..Default::default()
        };
        let m = HfccMarker::new(cfg, rng::stream(6, rng::kind::MARKER, port as u64)).unwrap();
        sim.set_marker(port, Box::new(m));
    }
    let target = HfccMarkerConfig::default().target_utilization * HOP_BPS as f64;
    let rate = |h: Hop| (target * h.cbr_permille as f64 / 1000.0) as u64;
    cbr(&mut sim, x, y, rate(hops[0]));
    cbr(&mut sim, z, d, rate(hops[1]));
    let tcp = TcpConfig {
        initial_window: 2,
        delayed_ack,
        ..Default::default()
    };
    let spec = TcpFlowSpec {
        name: "hfcc".into(),
        src: s,
        dst: d,
        size: None,
        start: 0,
        client_initiated: false,
        config: tcp.clone(),
    };
    let cc = HfccConfig {
        t_p,
        max_window: Some(2),
        ..Default::default()
    };
    add_tcp_flow(
        &mut sim,
        &spec,
        Box::new(Hfcc::new(cc, tcp.mss).unwrap()),
        Box::new(VcpCodec::hfcc()),
        Box::new(VcpCodec::hfcc()),
    )
    .unwrap();
    sim.set_sample_interval(100 * MS);
    sim.run_until(4 * SEC);
    sim.conservation().unwrap();
    let t_p_s = sim
        .ts
        .series("t_p_s", "hfcc")
        .into_iter()
        .filter(|&(t, _)| t >= 2 * SEC)
        .map(|(_, v)| v)
        .collect();
    let router = |port: u32| {
        let m = sim.ports[port as usize].marker.as_ref().unwrap();
        let rho = m.gauge().unwrap();
        let code = HfccMarkerConfig::default().overlay(rho, false).bits();
        (rho, code)
    };
    (t_p_s, [router(p1), router(p2)])
}

/// Which router's `t_p` the sender scales by when two HFCC routers on its path give different
/// codes or loads (hand-worked, `t_p_ties = "load"`): the router with the higher code; on equal
/// codes the more loaded one (whole percent); on equal loads the longer. Each case is run with
/// the routers in both orders, with and without delayed ACKs. Loads: the CBR flow's share of
/// ξ·C plus the HFCC flow's ≈ 1 %, all below U_th = 0.9, so the fair-share bit never decides
/// a code. From its own RTT (≈ 23 ms, the old rule `t_p = "own_rtt"`) the sender would scale
/// by 80 ms in every case; "keep the longer" would give 400 ms in the first and 600 ms in the
/// third.
#[test]
fn the_sender_scales_by_the_t_p_the_tie_rule_picks_on_two_routers() {
    let hop = |t_p_ms, cbr_permille| Hop {
        t_p_ms,
        cbr_permille,
    };
    // (hops, want t_p in ms, codes, loads equal in whole percent)
    let cases = [
        // Equal codes (`10`): the more loaded router's 200 ms, not the longer 400 ms.
        ([hop(200, 870), hop(400, 830)], 200, [0b10, 0b10]),
        // Equal codes and loads: the longer, 400 ms.
        ([hop(200, 840), hop(400, 840)], 400, [0b10, 0b10]),
        // Different codes: the router that set `10`, not the longer 600 ms of the one at `01`.
        ([hop(200, 840), hop(600, 400)], 200, [0b10, 0b01]),
    ];
    for (hops, want_ms, codes) in cases {
        for order in [hops, [hops[1], hops[0]]] {
            let want_codes = if order[0].t_p_ms == hops[0].t_p_ms {
                codes
            } else {
                [codes[1], codes[0]]
            };
            for delayed_ack in [false, true] {
                let (got, routers) = two_hfcc_routers(order, TpMode::Path, delayed_ack);
                let what = format!("{order:?} delayed {delayed_ack}: routers {routers:?}");
                assert_eq!([routers[0].1, routers[1].1], want_codes, "{what}");
                let pct = |rho: f64| (rho * 100.0).round() as u8;
                let (l0, l1) = (pct(routers[0].0), pct(routers[1].0));
                if order[0].cbr_permille == order[1].cbr_permille {
                    assert_eq!(l0, l1, "{what}");
                } else {
                    assert_eq!(
                        l0 > l1,
                        order[0].cbr_permille > order[1].cbr_permille,
                        "{what}"
                    );
                }
                assert_eq!(got.len(), 21, "{what}");
                let want = want_ms as f64 / 1e3;
                assert!(
                    got.iter().all(|&v| v == want),
                    "{what}: t_p {got:?}, want {want}"
                );
            }
        }
    }
}
