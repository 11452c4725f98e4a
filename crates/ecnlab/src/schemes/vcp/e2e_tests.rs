//! VCP end to end through the TCP connection: one bulk flow over a 2 Mb/s, 40 ms RTT
//! bottleneck with a VCP router and a DropTail buffer of two BDPs. Checks that the pieces work
//! together — MI from the initial window, the load codes echoed, overload reached and
//! answered — and VCP's promise at the bottleneck (high utilisation, no loss, a short queue).
//! The papers' figures are reproduced by the experiments, not here.

use super::*;
use crate::net::{LinkSpec, Sim};
use crate::schemes::test_line::{droptail, line, Line};
use crate::tcp::{add_tcp_flow, TcpConfig, TcpFlowSpec};
use crate::time::{MS, SEC};

#[test]
fn one_flow_fills_the_link_without_loss() {
    const C: u64 = 2_000_000;
    let secs = 30;
    let mut sim = Sim::new(3);
    // RTT 40 ms: BDP = 2 Mb/s · 40 ms = 10 kB, about 10 packets; buffer 20 packets.
    let Line { s, d, bottleneck } = line(&mut sim, &LinkSpec::new(C, 18 * MS), droptail(20));
    sim.set_marker(
        bottleneck,
        Box::new(VcpMarker::new(VcpMarkerConfig::default()).unwrap()),
    );
    let tcp = TcpConfig {
        initial_window: 2,
        delayed_ack: false,
        ..Default::default()
    };
    let spec = TcpFlowSpec {
        name: "vcp".into(),
        src: s,
        dst: d,
        size: None,
        start: 0,
        client_initiated: false,
        config: tcp.clone(),
    };
    let cc = Vcp::new(VcpConfig::default(), tcp.mss).unwrap();
    add_tcp_flow(
        &mut sim,
        &spec,
        Box::new(cc),
        Box::new(VcpCodec::new()),
        Box::new(VcpCodec::new()),
    )
    .unwrap();
    sim.set_sample_interval(100 * MS);
    sim.sample_port(bottleneck);
    sim.run_until(10 * SEC);
    let busy_ramp = sim.ports[bottleneck as usize].counters.busy_time;
    sim.run_until(secs * SEC);
    sim.conservation().unwrap();
    let f = &sim.flow_records()[0];
    let c = &sim.ports[bottleneck as usize].counters;
    let busy = c.busy_time as f64 / (secs * SEC) as f64;
    let busy_late = (c.busy_time - busy_ramp) as f64 / ((secs - 10) * SEC) as f64;
    let mean_queue = c.backlog_integral as f64 / (secs * SEC) as f64;
    eprintln!(
        "busy {busy:.3} (after 10 s {busy_late:.3}), drops {}, overload signals {:?}, mean queue {mean_queue:.2} pkts, max {}, marked {:?}, rtos {:?}",
        c.dropped(),
        f.signals_l1,
        c.max_backlog,
        c.marked,
        f.rtos
    );
    // The ramp from 2 segments at MI's 1.0625^(1/0.2 s) ≈ ×1.35 per second takes ~5 s.
    assert!(busy > 0.75, "link busy {busy}");
    assert!(busy_late > 0.85, "link busy after the ramp {busy_late}");
    assert_eq!(c.dropped(), 0);
    assert!(f.signals_l1.unwrap_or(0) > 0, "overload never reached");
    assert!(c.marked[0b10] > 0 && c.marked[0b11] > 0);
    assert!(mean_queue < 5.0);
}
