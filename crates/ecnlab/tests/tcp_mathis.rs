//! Reno throughput under random loss follows the law of Mathis, Semke, Mahdavi and Ott
//! ("The macroscopic behavior of the TCP congestion avoidance algorithm", CCR 1997):
//! `BW = MSS / RTT · C / √p`.
//!
//! Setup: one NewReno flow (RFC 5681/6582 window, SACK recovery), every segment acknowledged
//! (no delayed ACKs: b = 1, so the model's constant is C = √(3/2) ≈ 1.22), independent random
//! loss of data segments with probability p at a router, 1 Gbit/s links so that the window
//! is limited by loss and never by the link or a queue. RTT = the flow's mean RTT sample.
//! The constant √(3/2) is the model's for periodic loss (one loss per sawtooth); independent
//! losses make the sawtooth irregular and the measured constant comes out slightly larger
//! (here 1.07–1.13 × 1.22), so the check is ±15 % around 1.22, plus the 1/√p scaling itself:
//! the ratio may not drift by more than 10 % across a tenfold range of p.

use ecnlab::aqm::{DropTail, Limit};
use ecnlab::cc::newreno::{NewReno, NewRenoConfig};
use ecnlab::net::LinkSpec;
use ecnlab::tcp::codecs::NoEcn;
use ecnlab::tcp::testing::Impairment;
use ecnlab::tcp::{add_tcp_flow, TcpConfig, TcpFlowSpec};
use ecnlab::time::{Time, MS, SEC};
use ecnlab::Sim;

/// Returns (measured throughput / Mathis prediction with C = √(3/2), loss events).
fn ratio(p: f64, seed: u64, warmup: Time, duration: Time) -> (f64, u64) {
    let mut sim = Sim::new(seed);
    let a = sim.add_host("a");
    let r = sim.add_router("r");
    let b = sim.add_host("b");
    let q = || Box::new(DropTail::new(Limit::Packets(10_000)));
    let link = LinkSpec::new(1_000_000_000, 5 * MS);
    sim.connect(a, r, &link, q(), q());
    sim.connect(r, b, &link, q(), q());
    let mut imp = Impairment::new(seed, p, 0.0, 0.0, 0);
    imp.data_only = true;
    sim.set_element(r, Box::new(imp));
    let cfg = TcpConfig {
        delayed_ack: false,
        // The law's sender sends what each ACK frees; Linux's TSO deferral groups it.
        tso_defer: false,
        ..Default::default()
    };
    let spec = TcpFlowSpec {
        name: "reno".into(),
        src: a,
        dst: b,
        size: None,
        start: 0,
        client_initiated: false,
        config: cfg.clone(),
    };
    let cc = NewReno::new(cfg.mss, NewRenoConfig::default()).unwrap();
    add_tcp_flow(
        &mut sim,
        &spec,
        Box::new(cc),
        Box::new(NoEcn),
        Box::new(NoEcn),
    )
    .unwrap();
    sim.run_until(warmup);
    let before = sim.flow_records()[0].clone();
    sim.run_until(warmup + duration);
    sim.conservation().unwrap();
    let after = &sim.flow_records()[0];
    let bytes = after.bytes_delivered.unwrap() - before.bytes_delivered.unwrap();
    let bw = bytes as f64 / (duration as f64 / SEC as f64);
    let rtt = after.rtt_mean_s.unwrap();
    let predicted = cfg.mss as f64 / rtt * (1.5f64).sqrt() / p.sqrt();
    let losses = after.retransmissions.unwrap() - before.retransmissions.unwrap();
    (bw / predicted, losses)
}

#[test]
fn reno_throughput_follows_the_mathis_law() {
    // (p, simulated seconds): about 300 loss events each.
    let mut ratios = vec![];
    for (p, secs) in [(0.002, 90), (0.005, 60), (0.01, 40), (0.02, 25)] {
        let (r, losses) = ratio(p, 1, 2 * SEC, secs * SEC);
        eprintln!("p = {p}: throughput / Mathis(C = 1.22) = {r:.3} over {losses} losses");
        assert!((r - 1.0).abs() < 0.15, "p = {p}: ratio {r:.3}");
        assert!(losses > 200, "p = {p}: only {losses} losses");
        ratios.push(r);
    }
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), &r| (l.min(r), h.max(r)));
    assert!(
        hi / lo < 1.10,
        "throughput does not scale as 1/sqrt(p): {ratios:?}"
    );
}
