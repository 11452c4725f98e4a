//! TCP end to end: handshake, option negotiation, transfer, teardown, flow records.

use ecnlab::aqm::{DropTail, Limit};
use ecnlab::net::Endpoint;
use ecnlab::net::LinkSpec;
use ecnlab::tcp::codecs::{NoEcn, Rfc3168};
use ecnlab::tcp::testing::{thousand_byte_segments, Dir, Harness, Reno};
use ecnlab::tcp::{add_tcp_flow, State, TcpConfig, TcpFlowSpec};
use ecnlab::time::{MS, SEC};
use ecnlab::wire::TcpFlags;
use ecnlab::Sim;

fn harness(cfg: TcpConfig, size: Option<u64>, client_initiated: bool) -> Harness {
    Harness::new(
        cfg.clone(),
        size,
        Box::new(Reno::new(cfg.mss)),
        Box::new(NoEcn),
        Box::new(NoEcn),
        10 * MS,
        client_initiated,
    )
}

#[test]
fn handshake_negotiates_options_and_transfers_across_the_wrap() {
    for (sack, ts, ws) in [
        (true, true, true),
        (false, false, false),
        (true, false, true),
    ] {
        let cfg = TcpConfig {
            sack,
            timestamps: ts,
            window_scaling: ws,
            rcv_buf: if ws { 64 << 20 } else { 65535 },
            ..thousand_byte_segments()
        };
        let mut h = harness(cfg, Some(300_000), false);
        h.run_clean(10 * SEC);
        assert_eq!(h.a.state(), State::Established);
        assert_eq!(h.a.sack_enabled(), sack);
        assert_eq!(h.b.sack_enabled(), sack);
        assert_eq!(h.a.timestamps_enabled(), ts);
        assert_eq!(h.b.bytes_delivered(), 300_000);
        assert!(h.a.finished() && h.b.finished());
        assert_eq!(h.a.retransmissions(), 0);
        // The first three packets are SYN, SYN-ACK, ACK.
        let f = |i: usize| h.sent[i].pkt.tcp().unwrap().flags;
        assert!(f(0).has(TcpFlags::SYN) && !f(0).has(TcpFlags::ACK));
        assert!(f(1).has(TcpFlags::SYN | TcpFlags::ACK));
        assert_eq!(h.sent[1].dir, Dir::BtoA);
        assert!(!f(2).has(TcpFlags::SYN) && f(2).has(TcpFlags::ACK));
        let syn = h.sent[0].pkt.tcp().unwrap();
        assert_eq!(syn.mss, Some(1000));
        assert_eq!(syn.sack_permitted, sack);
        assert_eq!(syn.window_scale.is_some(), ws);
        // Data segments: 1000 payload bytes, 64-bit sequence space crossing the 32-bit wrap
        // (ISN 0xFFFFF000), every IP-ID distinct and increasing per host.
        let data: Vec<_> = h.sent.iter().filter(|t| t.pkt.payload_len > 0).collect();
        assert_eq!(data.len(), 300);
        assert!(data
            .iter()
            .all(|t| t.pkt.payload_len == 1000 && t.pkt.ip.ttl == 64));
        let ids: Vec<u16> = h
            .sent
            .iter()
            .filter(|t| t.dir == Dir::AtoB)
            .map(|t| t.pkt.ip.ident)
            .collect();
        assert!(ids.windows(2).all(|w| w[1] == w[0].wrapping_add(1)));
        // Handshake RTT: 20 ms.
        assert_eq!(h.a.rtt().min_rtt(), 20 * MS);
    }
}

#[test]
fn client_initiated_download_and_fin_exchange() {
    let mut h = harness(thousand_byte_segments(), Some(50_000), true);
    h.run_clean(10 * SEC);
    // b (the receiver) sent the SYN.
    assert_eq!(h.sent[0].dir, Dir::BtoA);
    assert!(h.sent[0].pkt.tcp().unwrap().flags.has(TcpFlags::SYN));
    assert_eq!(h.b.bytes_delivered(), 50_000);
    assert!(h.a.finished() && h.b.finished());
    // Both FINs went out once.
    let fins: Vec<Dir> = h
        .sent
        .iter()
        .filter(|t| t.pkt.tcp().unwrap().flags.has(TcpFlags::FIN))
        .map(|t| t.dir)
        .collect();
    assert_eq!(fins, vec![Dir::AtoB, Dir::BtoA]);
}

#[test]
fn flows_in_a_sim_fill_their_records_and_conserve_packets() {
    let mut sim = Sim::new(7);
    let a = sim.add_host("a");
    let r = sim.add_router("r");
    let b = sim.add_host("b");
    let q = || Box::new(DropTail::new(Limit::Packets(1000)));
    sim.connect(a, r, &LinkSpec::new(100_000_000, 5 * MS), q(), q());
    sim.connect(r, b, &LinkSpec::new(10_000_000, 5 * MS), q(), q());
    let cfg = thousand_byte_segments();
    let mut ids = vec![];
    for (i, ci) in [false, true].into_iter().enumerate() {
        let spec = TcpFlowSpec {
            name: format!("f{i}"),
            src: a,
            dst: b,
            size: Some(200_000),
            start: (i as u64) * 100 * MS,
            client_initiated: ci,
            config: cfg.clone(),
        };
        let id = add_tcp_flow(
            &mut sim,
            &spec,
            Box::new(Reno::new(cfg.mss)),
            Box::new(Rfc3168::new()),
            Box::new(Rfc3168::new()),
        )
        .unwrap();
        ids.push(id);
    }
    sim.run_until(5 * SEC);
    sim.conservation().unwrap();
    let recs = sim.flow_records();
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r.scheme, "reno+ecn");
        assert_eq!(r.transport, "tcp");
        assert_eq!(r.bytes_delivered, Some(200_000), "flow {i}");
        assert_eq!(r.size_bytes, Some(200_000));
        assert_eq!(r.init_cwnd, Some(10));
        let fct = r.fct_s.unwrap();
        // 200 KB at ≤ 10 Mbit/s takes at least 160 ms plus handshake.
        assert!(fct > 0.18 && fct < 2.0, "fct {fct}");
        let thr = r.goodput_bps.unwrap();
        assert!((thr - 200_000.0 * 8.0 / fct).abs() < 1.0);
        assert!(r.rtt_min_s.unwrap() >= 0.020);
        assert!(r.rtt_mean_s.unwrap() >= r.rtt_min_s.unwrap());
    }
    assert!(sim.endpoints.iter().all(|e| e.finished()));
    // Bad input is an error naming the field.
    let bad = TcpFlowSpec {
        name: "x".into(),
        src: a,
        dst: r,
        size: None,
        start: 0,
        client_initiated: false,
        config: cfg.clone(),
    };
    let e = add_tcp_flow(
        &mut sim,
        &bad,
        Box::new(Reno::new(1000)),
        Box::new(NoEcn),
        Box::new(NoEcn),
    )
    .unwrap_err();
    assert!(e.starts_with("dst"), "{e}");
}

#[test]
fn a_flow_beyond_4_gib_crosses_the_32_bit_sequence_space() {
    // 60 000-byte segments keep the packet count small: 4.5 GB is 75 000 segments, so the
    // 32-bit wire sequence numbers wrap once, with SACK recovery of random losses around it.
    let mut sim = Sim::new(11);
    let a = sim.add_host("a");
    let r = sim.add_router("r");
    let b = sim.add_host("b");
    let q = || Box::new(DropTail::new(Limit::Packets(10_000)));
    let link = LinkSpec::new(100_000_000_000, MS);
    sim.connect(a, r, &link, q(), q());
    sim.connect(r, b, &link, q(), q());
    let mut imp = ecnlab::tcp::testing::Impairment::new(11, 0.001, 0.0, 0.0, 0);
    imp.data_only = true;
    sim.set_element(r, Box::new(imp));
    let cfg = TcpConfig {
        mss: 60_000,
        ..thousand_byte_segments()
    };
    let size = 4_500_000_000u64 + 12_345;
    let spec = TcpFlowSpec {
        name: "big".into(),
        src: a,
        dst: b,
        size: Some(size),
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
    let mut t = 0;
    while !sim.endpoints.iter().all(|e| e.finished()) && t < 100 * SEC {
        t += SEC;
        sim.run_until(t);
    }
    sim.conservation().unwrap();
    let rec = &sim.flow_records()[0];
    assert_eq!(rec.bytes_delivered, Some(size));
    assert!(rec.retransmissions.unwrap() > 20);
    assert!(rec.fct_s.is_some());
}

#[test]
fn handshake_gives_up_after_syn_retries_with_doubling_timeouts() {
    let cfg = TcpConfig {
        syn_retries: 3,
        ..thousand_byte_segments()
    };
    let mut h = harness(cfg, Some(10_000), false);
    h.run(600 * SEC, &mut |_, dir, _| dir == Dir::BtoA);
    let syn_times: Vec<u64> = h.sent.iter().map(|t| t.time).collect();
    // SYN at 0, retried after 1, 2 and 4 s; then the connection fails.
    assert_eq!(syn_times, vec![0, SEC, 3 * SEC, 7 * SEC]);
    assert_eq!(h.a.state(), State::Failed);
    assert_eq!(h.a.deadline(), ecnlab::time::NEVER);
    let mut r = ecnlab::stats::FlowRecord::default();
    h.b.record(h.now, &mut r);
    assert_eq!((r.bytes_delivered, r.fct_s), (Some(0), None));
}
