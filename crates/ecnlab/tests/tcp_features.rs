//! Receive window and window scaling, pacing, delivery-rate estimation, timestamp RTT
//! measurement, and the sampled time series of a flow.

use ecnlab::aqm::{DropTail, Limit};
use ecnlab::cc::{AckEvent, Controller, Signal};
use ecnlab::net::LinkSpec;
use ecnlab::tcp::codecs::NoEcn;
use ecnlab::tcp::testing::{thousand_byte_segments, Call, Dir, FixedWindow, Harness, Probe, Reno};
use ecnlab::tcp::{add_tcp_flow, TcpConfig, TcpFlowSpec};
use ecnlab::time::{to_secs, Time, MS, SEC};
use ecnlab::Sim;

const MSS: u64 = 1000;

fn harness(cfg: TcpConfig, size: Option<u64>, cc: Box<dyn Controller>) -> Harness {
    Harness::new(
        cfg,
        size,
        cc,
        Box::new(NoEcn),
        Box::new(NoEcn),
        10 * MS,
        false,
    )
}

/// Highest amount of data outstanding at any send, from the trace.
fn max_flight(h: &Harness) -> u64 {
    let mut acked = 1;
    let mut events: Vec<(Time, u8, u64)> = vec![];
    for t in h.arrived.iter().filter(|t| t.dir == Dir::BtoA) {
        events.push((t.time, 0, h.rel_ack_b(&t.pkt)));
    }
    for t in h
        .sent
        .iter()
        .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0)
    {
        events.push((t.time, 1, h.rel_seq_a(&t.pkt) + t.pkt.payload_len as u64));
    }
    events.sort();
    let mut max = 0;
    for (_, kind, v) in events {
        if kind == 0 {
            acked = acked.max(v);
        } else {
            max = max.max(v - acked);
        }
    }
    max
}

#[test]
fn the_receive_window_bounds_the_flight_with_and_without_scaling() {
    // A fixed buffer, advertised whole from the start.
    for (ws, buf) in [(false, 8_000u64), (true, 300_000)] {
        let cfg = TcpConfig {
            window_scaling: ws,
            rcv_buf: buf,
            rcv_autotune: false,
            // The window's bound alone: TSO deferral would keep the last frame's room unused.
            tso_defer: false,
            ..thousand_byte_segments()
        };
        let mut h = harness(cfg, Some(2_000_000), Box::new(FixedWindow(1000 * MSS)));
        h.run_clean(20 * SEC);
        assert_eq!(h.b.bytes_delivered(), 2_000_000);
        let m = max_flight(&h);
        assert!(
            m <= buf && m > buf - MSS,
            "window scaling {ws}: max flight {m}"
        );
        // The window field carries the buffer scaled down by the announced shift.
        let ack = h.sent.iter().rev().find(|t| t.dir == Dir::BtoA).unwrap();
        let shift = if ws { 3 } else { 0 };
        assert_eq!(ack.pkt.tcp().unwrap().window as u64, buf >> shift);
    }
}

/// A fixed window with a fixed pacing rate.
struct Paced(u64, f64);

impl Controller for Paced {
    fn name(&self) -> &'static str {
        "paced"
    }
    fn set_initial_window(&mut self, _: u64) {}
    fn on_ack(&mut self, _: &AckEvent) {}
    fn on_signal(&mut self, _: &AckEvent, _: Signal) {}
    fn on_loss(&mut self, _: Time, _: u64) {}
    fn on_rto(&mut self, _: Time, _: u64) {}
    fn window(&self) -> u64 {
        self.0
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn pacing_rate(&self) -> Option<f64> {
        Some(self.1)
    }
}

fn data_send_gaps(h: &Harness) -> Vec<Time> {
    let t: Vec<Time> = h
        .sent
        .iter()
        .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0)
        .map(|t| t.time)
        .collect();
    t.windows(2).map(|w| w[1] - w[0]).collect()
}

#[test]
fn pacing_spaces_segments_at_the_controller_rate_or_at_cwnd_over_srtt() {
    // Controller rate: 1 MB/s → one 1000-byte segment every 1 ms (payload bytes, as Linux
    // paces); the second segment half a gap after the first, which had waited for the
    // handshake (Linux's credit for a sender behind its schedule).
    let mut h = harness(
        thousand_byte_segments(),
        None,
        Box::new(Paced(100 * MSS, 1e6)),
    );
    h.run_clean(500 * MS);
    let gaps = data_send_gaps(&h);
    assert!(gaps.len() > 400);
    assert_eq!(gaps[0], 500_000_000);
    assert!(
        gaps[1..].iter().all(|&g| g == 1_000_000_000),
        "{:?}",
        &gaps[..5]
    );

    // cwnd/SRTT pacing: 20 segments per ~20 ms RTT, ×2 while below ssthresh.
    let cfg = TcpConfig {
        pace_cwnd: true,
        // Pacing alone: TSO deferral would hold segments back for a larger burst.
        tso_defer: false,
        ..thousand_byte_segments()
    };
    let mut h = harness(cfg, None, Box::new(FixedWindow(20 * MSS)));
    h.run_clean(SEC);
    let gaps = data_send_gaps(&h);
    let srtt = to_secs(h.a.rtt().srtt());
    let want = 1000.0 / (2.0 * 20_000.0 / srtt);
    // The window is the limit, so the sender is ACK-clocked: each delayed ACK frees two
    // segments, the first goes at once and the second half a pacing gap later (Linux's
    // credit for a sender behind its schedule) — never closer.
    let late = &gaps[gaps.len() / 2..];
    let min = late.iter().map(|&g| to_secs(g)).fold(f64::MAX, f64::min);
    assert!(
        (2.0 * min / want - 1.0).abs() < 0.02,
        "min gap {min} want {want}/2"
    );
    let half_gaps = late
        .iter()
        .filter(|&&g| (2.0 * to_secs(g) / want - 1.0).abs() < 0.02)
        .count();
    assert!(
        half_gaps * 10 > late.len() * 4,
        "{half_gaps} of {} gaps are half the pacing gap: {:?}",
        late.len(),
        &late[..10]
    );
}

#[test]
fn delivery_rate_samples_measure_the_bottleneck() {
    // 10 Mbit/s bottleneck, 40-segment window over a 25-segment BDP: the link stays busy.
    let (probe, log) = Probe::new(FixedWindow(40 * MSS));
    let mut h = harness(thousand_byte_segments(), None, Box::new(probe));
    h.rate_ab = 10_000_000;
    h.run_clean(3 * SEC);
    let log = log.borrow();
    let acks: Vec<&AckEvent> = log
        .iter()
        .filter_map(|c| match c {
            Call::Ack(ev) => Some(ev),
            _ => None,
        })
        .collect();
    let mut rates: Vec<f64> = acks
        .iter()
        .filter(|ev| ev.now > SEC)
        .filter_map(|ev| ev.delivery_rate)
        .collect();
    assert!(rates.len() > 1000);
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = rates[rates.len() / 2];
    // Payload bytes per second through a 10 Mbit/s link with 1040-byte packets.
    let link = 10e6 / 8.0 * 1000.0 / 1040.0;
    assert!(
        (median / link - 1.0).abs() < 0.01,
        "median {median} vs {link}"
    );
    // `delivered` counts every acknowledged byte, and a sample's prior count is older.
    for w in acks.windows(2) {
        assert!(w[1].delivered >= w[0].delivered + w[1].acked_bytes);
        assert!(w[1].prior_delivered <= w[1].delivered);
        assert!(!w[1].app_limited);
    }
}

#[test]
fn timestamps_give_rtt_samples_even_for_retransmitted_data() {
    let cfg = TcpConfig {
        timestamps: true,
        sack: false,
        delayed_ack: false,
        ..thousand_byte_segments()
    };
    let (probe, log) = Probe::new(FixedWindow(4 * MSS));
    let mut h = harness(cfg, None, Box::new(probe));
    h.rate_ab = 10_000_000;
    h.run(3 * SEC, &mut |h, dir, _| {
        !(dir == Dir::AtoB && h.now >= 500 * MS && h.now < 1000 * MS)
    });
    assert!(h.a.timestamps_enabled());
    assert!(h.a.timeouts() >= 1);
    let log = log.borrow();
    let after: Vec<Option<Time>> = log
        .iter()
        .filter_map(|c| match c {
            Call::Ack(ev) if ev.now > SEC => Some(ev.rtt),
            _ => None,
        })
        .collect();
    // The ACK of the timer retransmission echoes its timestamp: an exact sample.
    let r = after[0].expect("a timestamp sample");
    assert!((20 * MS..22 * MS).contains(&r), "rtt {r}");
    assert!(after.iter().all(|r| r.is_some()));
}

#[test]
fn a_flow_samples_its_window_rtt_and_rate() {
    let mut sim = Sim::new(3);
    let a = sim.add_host("a");
    let r = sim.add_router("r");
    let b = sim.add_host("b");
    let q = || Box::new(DropTail::new(Limit::Packets(50)));
    sim.connect(a, r, &LinkSpec::new(100_000_000, 5 * MS), q(), q());
    sim.connect(r, b, &LinkSpec::new(10_000_000, 5 * MS), q(), q());
    sim.set_sample_interval(100 * MS);
    let cfg = thousand_byte_segments();
    let spec = TcpFlowSpec {
        name: "bulk".into(),
        src: a,
        dst: b,
        size: None,
        start: 0,
        client_initiated: false,
        config: cfg.clone(),
    };
    add_tcp_flow(
        &mut sim,
        &spec,
        Box::new(Reno::new(cfg.mss)),
        Box::new(NoEcn),
        Box::new(NoEcn),
    )
    .unwrap();
    sim.run_until(10 * SEC);
    sim.conservation().unwrap();
    for kind in [
        "cwnd_bytes",
        "ssthresh_bytes",
        "srtt_s",
        "inflight_bytes",
        "delivery_bps",
    ] {
        assert!(sim.ts.series(kind, "bulk").len() > 50, "{kind}");
    }
    // Receiver rate samples average to the flow's goodput; the bottleneck is well used.
    let rates = sim.ts.series("delivery_bps", "bulk");
    let late: Vec<f64> = rates
        .iter()
        .filter(|(t, _)| *t > 2 * SEC)
        .map(|x| x.1)
        .collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!(mean > 0.85 * 10e6 * 1000.0 / 1040.0, "mean rate {mean}");
    let rec = &sim.flow_records()[0];
    assert!(
        rec.retransmissions.unwrap() > 0,
        "the 50-packet queue overflows"
    );
}
