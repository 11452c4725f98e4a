//! ECN codecs over the real connection: RFC 3168 negotiation and fallback, the ECE/CWR
//! exchange with one reduction per window, DCTCP's receiver state machine (RFC 8257 §3.2)
//! with the sender's exact accounting of marked bytes, and DCTCP with a step marker holding
//! the queue at the threshold as its analysis predicts.

use ecnlab::aqm::{DropTail, Limit};
use ecnlab::cc::dctcp::{Dctcp, DctcpConfig};
use ecnlab::cc::newreno::{NewReno, NewRenoConfig};
use ecnlab::cc::{Controller, Signal};
use ecnlab::marker::step::{StepConfig, StepMarker};
use ecnlab::net::Endpoint;
use ecnlab::net::LinkSpec;
use ecnlab::packet::Packet;
use ecnlab::stats::FlowRecord;
use ecnlab::tcp::codecs::by_name;
use ecnlab::tcp::testing::{thousand_byte_segments, Call, Dir, FixedWindow, Harness, Probe, Reno};
use ecnlab::tcp::{add_tcp_flow, TcpFlowSpec};
use ecnlab::tcp::{CwndReduction, TcpConfig};
use ecnlab::time::US;
use ecnlab::time::{Time, MS, SEC};
use ecnlab::wire::{Ecn, TcpFlags};
use ecnlab::Sim;

const MSS: u64 = 1000;

fn seg(k: u64) -> u64 {
    1 + (k - 1) * MSS
}

fn flags(p: &Packet) -> TcpFlags {
    p.tcp().unwrap().flags
}

fn harness(
    cfg: TcpConfig,
    size: Option<u64>,
    cc: Box<dyn ecnlab::cc::Controller>,
    a: &str,
    b: &str,
) -> Harness {
    let mut h = Harness::new(
        cfg,
        size,
        cc,
        by_name(a).unwrap(),
        by_name(b).unwrap(),
        10 * MS,
        false,
    );
    h.rate_ab = 10_000_000;
    h
}

#[test]
fn negotiation_and_fallback_to_no_ecn() {
    for (ca, cb, agreed) in [
        ("ecn", "ecn", true),
        ("ecn", "none", false),
        ("none", "ecn", false),
        ("dctcp", "dctcp", true),
        ("dctcp", "none", false),
    ] {
        let cc = Box::new(Reno::new(1000));
        let mut h = harness(thousand_byte_segments(), Some(60_000), cc, ca, cb);
        h.run_clean(10 * SEC);
        assert_eq!(h.b.bytes_delivered(), 60_000, "{ca}/{cb}");
        assert_eq!(h.a.codec().negotiated(), agreed, "{ca}/{cb} sender");
        assert_eq!(h.b.codec().negotiated(), agreed, "{ca}/{cb} receiver");
        let syn = &h.sent[0].pkt;
        let syn_ack = &h.sent[1].pkt;
        assert!(flags(syn).has(TcpFlags::SYN) && flags(syn_ack).has(TcpFlags::SYN));
        // ECN-setup SYN: ECE and CWR; ECN-setup SYN-ACK: ECE only; both Not-ECT.
        let offered = ca != "none";
        assert_eq!(flags(syn).has(TcpFlags::ECE), offered);
        assert_eq!(flags(syn).has(TcpFlags::CWR), offered);
        assert_eq!(flags(syn_ack).has(TcpFlags::ECE), agreed);
        assert!(!flags(syn_ack).has(TcpFlags::CWR));
        assert_eq!((syn.ip.ecn, syn_ack.ip.ecn), (Ecn::NOT_ECT, Ecn::NOT_ECT));
        for t in &h.sent[2..] {
            let want = if agreed && t.dir == Dir::AtoB && t.pkt.payload_len > 0 {
                Ecn::ECT0
            } else {
                Ecn::NOT_ECT
            };
            assert_eq!(t.pkt.ip.ecn, want, "{ca}/{cb} {:?}", t.dir);
        }
    }
}

#[test]
fn lost_ecn_setup_syn_is_retried_without_ecn() {
    let cc = Box::new(Reno::new(1000));
    let mut h = harness(thousand_byte_segments(), Some(30_000), cc, "ecn", "ecn");
    let mut first = true;
    h.run(20 * SEC, &mut |_, dir, p| {
        let drop = first && dir == Dir::AtoB && flags(p).has(TcpFlags::SYN);
        first &= !drop;
        !drop
    });
    let syns: Vec<&Packet> = h
        .sent
        .iter()
        .filter(|t| t.dir == Dir::AtoB && flags(&t.pkt).has(TcpFlags::SYN))
        .map(|t| &t.pkt)
        .collect();
    assert_eq!(syns.len(), 2);
    assert!(flags(syns[0]).has(TcpFlags::ECE | TcpFlags::CWR));
    assert!(!flags(syns[1]).has(TcpFlags::ECE) && !flags(syns[1]).has(TcpFlags::CWR));
    assert!(!h.a.codec().negotiated() && !h.b.codec().negotiated());
    assert_eq!(h.b.bytes_delivered(), 30_000);
    // RFC 5681 §3.1: after a lost SYN the initial window is one segment.
    let mut r = FlowRecord::default();
    h.a.record(h.now, &mut r);
    assert_eq!(r.init_cwnd, Some(1));
    // Retried after the initial RTO of 1 s.
    let t_syn2 = h
        .sent
        .iter()
        .filter(|t| flags(&t.pkt).has(TcpFlags::SYN))
        .nth(1);
    assert_eq!(t_syn2.unwrap().time, SEC);
}

/// Marks the first transmission of the listed data segments CE.
fn mark_first(marked: &[u64]) -> impl FnMut(&Harness, Dir, &mut Packet) -> bool + '_ {
    let mut done = vec![false; marked.len()];
    move |h, dir, p| {
        if dir == Dir::AtoB && p.payload_len > 0 {
            let s = h.rel_seq_a(p);
            if let Some(i) = marked.iter().position(|&m| m == s) {
                if !done[i] {
                    done[i] = true;
                    assert!(p.ip.ecn.is_ect());
                    p.ip.ecn = Ecn::CE;
                }
            }
        }
        true
    }
}

#[test]
fn ece_until_cwr_and_one_reduction_per_window() {
    let cfg = TcpConfig {
        delayed_ack: false,
        ..thousand_byte_segments()
    };
    let (probe, log) = Probe::new(Reno::new(1000));
    let mut h = harness(cfg, None, Box::new(probe), "ecn", "ecn");
    // Two marks in one window, a third much later.
    let marks = [seg(30), seg(32), seg(400)];
    h.run(3 * SEC, &mut mark_first(&marks));
    assert!(h.a.codec().negotiated());

    // Receiver: ECE on every ACK from the first CE arrival until a CWR arrives (RFC 3168
    // §6.1.3), replayed against B's arrivals and ACKs in time order.
    let mut events: Vec<(Time, u8, &Packet)> = vec![];
    for t in h.arrived.iter().filter(|t| t.dir == Dir::AtoB) {
        events.push((t.time, 0, &t.pkt));
    }
    for t in h.sent.iter().filter(|t| t.dir == Dir::BtoA) {
        events.push((t.time, 1, &t.pkt));
    }
    events.sort_by_key(|e| (e.0, e.1));
    let mut ece = false;
    let (mut acks_with_ece, mut cwr_seen) = (0, 0);
    for (_, kind, p) in events {
        if kind == 0 {
            if flags(p).has(TcpFlags::CWR) && p.payload_len > 0 {
                ece = false;
                cwr_seen += 1;
            }
            if p.ip.ecn == Ecn::CE {
                ece = true;
            }
        } else if !flags(p).has(TcpFlags::SYN) {
            assert_eq!(flags(p).has(TcpFlags::ECE), ece);
            acks_with_ece += ece as u32;
        }
    }
    assert!(acks_with_ece > 5, "ECE repeated until CWR: {acks_with_ece}");
    assert_eq!(cwr_seen, 2);

    // Sender: one Ecn signal per window of data, and CWR on the first new data segment
    // after each reduction, once.
    let signals: Vec<Time> = log
        .borrow()
        .iter()
        .filter_map(|c| match c {
            Call::Signal(t, Signal::Ecn) => Some(*t),
            _ => None,
        })
        .collect();
    assert_eq!(signals.len(), 2, "{signals:?}");
    let cwr: Vec<(Time, u64)> = h
        .sent
        .iter()
        .filter(|t| t.dir == Dir::AtoB && flags(&t.pkt).has(TcpFlags::CWR) && t.pkt.payload_len > 0)
        .map(|t| (t.time, h.rel_seq_a(&t.pkt)))
        .collect();
    assert_eq!(cwr.len(), 2);
    for (&s, &(t, seq)) in signals.iter().zip(&cwr) {
        let first_new_after = h
            .sent
            .iter()
            .filter(|x| x.dir == Dir::AtoB && x.time >= s && x.pkt.payload_len > 0)
            .find(|x| {
                let q = h.rel_seq_a(&x.pkt);
                !h.sent
                    .iter()
                    .any(|y| y.time < x.time && y.dir == Dir::AtoB && h.rel_seq_a(&y.pkt) == q)
            })
            .unwrap();
        assert_eq!(
            (first_new_after.time, h.rel_seq_a(&first_new_after.pkt)),
            (t, seq)
        );
    }
    let mut r = FlowRecord::default();
    h.a.record(h.now, &mut r);
    assert_eq!(r.signals_l1, Some(2));
}

#[test]
fn dctcp_receiver_state_machine_and_exact_marked_bytes() {
    // RFC 8257's receiver alone, without Linux's quick ACKs at the start.
    let cfg = TcpConfig {
        delayed_ack: true,
        delack_segments: 2,
        quickack: false,
        ..thousand_byte_segments()
    };
    let (probe, log) = Probe::new(FixedWindow(20 * MSS));
    let mut h = harness(cfg, None, Box::new(probe), "dctcp", "dctcp");
    let ce: Vec<u64> = [10, 11, 12, 13, 14, 20, 22, 23, 30, 31, 32, 33, 34, 35, 36]
        .iter()
        .map(|&k| seg(k))
        .collect();
    h.run(2 * SEC, &mut mark_first(&ce));
    assert!(h.a.codec().negotiated() && h.b.codec().negotiated());

    // RFC 8257 Figure 1 as a reference model: (ACK number, ECE) of every ACK B must send.
    let mut expect: Vec<(u64, bool)> = vec![];
    let (mut state, mut pending, mut rcv_nxt) = (false, 0, 1u64);
    for t in h
        .arrived
        .iter()
        .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0)
    {
        let c = t.pkt.ip.ecn == Ecn::CE;
        if c != state {
            if pending > 0 {
                expect.push((rcv_nxt, state));
            }
            state = c;
            rcv_nxt += MSS;
            expect.push((rcv_nxt, state));
            pending = 0;
        } else {
            rcv_nxt += MSS;
            pending += 1;
            if pending == 2 {
                expect.push((rcv_nxt, state));
                pending = 0;
            }
        }
    }
    let got: Vec<(u64, bool)> = h
        .sent
        .iter()
        .filter(|t| t.dir == Dir::BtoA && !flags(&t.pkt).has(TcpFlags::SYN))
        .map(|t| (h.rel_ack_b(&t.pkt), flags(&t.pkt).has(TcpFlags::ECE)))
        .collect();
    let n = expect.len().min(got.len());
    assert!(n > 100);
    assert_eq!(&got[..n], &expect[..n]);

    // The sender sees exactly the marked bytes.
    let (mut marked, mut acked) = (0, 0);
    for c in log.borrow().iter() {
        if let Call::Signal(
            _,
            Signal::Marked {
                marked_bytes,
                acked_bytes,
            },
        ) = c
        {
            marked += marked_bytes;
            acked += acked_bytes;
        }
    }
    assert_eq!(marked, ce.len() as u64 * MSS);
    assert_eq!(acked, h.a.snd_una() - 1);
}

/// Two long flows through a 100 Mbit/s bottleneck with a step marker at K packets; returns
/// (mean, standard deviation, maximum) of the sampled queue after warm-up, the goodput
/// (bit/s), and the packets dropped at the bottleneck.
fn step_marked_dumbbell(
    scheme: &str,
    k: u64,
    reduction: CwndReduction,
) -> (f64, f64, f64, f64, u64) {
    let mut sim = Sim::new(1);
    let q = |n| Box::new(DropTail::new(Limit::Packets(n)));
    let db = ecnlab::net::topology::dumbbell(
        &mut sim,
        2,
        2,
        &LinkSpec::new(1_000_000_000, 100 * US),
        &LinkSpec::new(100_000_000, 200 * US),
        q(300),
        q(300),
        &mut |_| q(1000),
    );
    sim.set_marker(
        db.bottleneck,
        Box::new(StepMarker::new(StepConfig { k, bytes: false })),
    );
    sim.sample_port(db.bottleneck);
    sim.set_sample_interval(MS / 2);
    let cfg = TcpConfig {
        cwnd_reduction: reduction,
        // The analysis's sender sends what each ACK frees; Linux's TSO deferral groups it.
        tso_defer: false,
        ..thousand_byte_segments()
    };
    for i in 0..2 {
        let spec = TcpFlowSpec {
            name: format!("f{i}"),
            src: db.left[i],
            dst: db.right[i],
            size: None,
            start: 0,
            client_initiated: false,
            config: cfg.clone(),
        };
        let cc: Box<dyn Controller> = if scheme == "dctcp" {
            Box::new(Dctcp::new(cfg.mss, DctcpConfig::default()).unwrap())
        } else {
            Box::new(NewReno::new(cfg.mss, NewRenoConfig::default()).unwrap())
        };
        let codec = || by_name(scheme).unwrap();
        add_tcp_flow(&mut sim, &spec, cc, codec(), codec()).unwrap();
    }
    let (warm, end) = (500 * MS, 1500 * MS);
    sim.run_until(warm);
    let before: u64 = sim
        .flow_records()
        .iter()
        .map(|r| r.bytes_delivered.unwrap())
        .sum();
    sim.run_until(end);
    sim.conservation().unwrap();
    let after: u64 = sim
        .flow_records()
        .iter()
        .map(|r| r.bytes_delivered.unwrap())
        .sum();
    let port = &sim.ports[db.bottleneck as usize];
    let qs: Vec<f64> = sim
        .ts
        .series("queue_pkts", &port.name)
        .iter()
        .filter(|x| x.0 > warm)
        .map(|x| x.1)
        .collect();
    let mean = qs.iter().sum::<f64>() / qs.len() as f64;
    let sd = (qs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / qs.len() as f64).sqrt();
    let max = qs.iter().cloned().fold(0.0, f64::max);
    let goodput = (after - before) as f64 * 8.0 / to_s(end - warm);
    (mean, sd, max, goodput, port.counters.dropped())
}

fn to_s(t: Time) -> f64 {
    ecnlab::time::to_secs(t)
}

#[test]
fn dctcp_holds_the_queue_at_the_step_threshold() {
    // Alizadeh, Javanmard and Prabhakar ("Analysis of DCTCP", SIGMETRICS 2011): with N
    // synchronised flows the queue peaks at K + N and oscillates with an amplitude of about
    // ½·√(2N(C·RTT + K)) ≈ 6 packets here (C·RTT ≈ 12 packets, K = 20, N = 2); with
    // K > C·RTT/7 the link stays fully used. The analysis cuts the window at once; so does
    // `cwnd_reduction = immediate`. Classic ECN halves its window on each mark and drains the
    // queue far below K.
    let k = 20;
    let link = 100e6 * 1000.0 / 1040.0;
    // PRR (the default, Linux's) lets the window down over the round and brings it back to
    // ssthresh one segment ahead of each ACK that advances SND.UNA: the peak may pass the
    // model's by a packet, the mean stays at K.
    let mut prr = (0.0, 0.0);
    for (reduction, peak_over_model, sd_bound) in [
        (CwndReduction::Immediate, 0, 2.5),
        (CwndReduction::Prr, 1, 3.0),
    ] {
        let (mean, sd, max, goodput, drops) = step_marked_dumbbell("dctcp", k, reduction);
        assert!(
            max <= (k + 2 + 1 + peak_over_model) as f64,
            "{reduction:?}: max queue {max}"
        );
        assert!(
            mean > k as f64 - 4.0 && mean < k as f64 + 1.0,
            "{reduction:?}: mean queue {mean}"
        );
        assert!(sd < sd_bound, "{reduction:?}: queue sd {sd}");
        assert!(goodput > 0.99 * link, "{reduction:?}: goodput {goodput}");
        assert_eq!(drops, 0, "{reduction:?}");
        prr = (mean, sd);
    }
    let (p_mean, p_sd) = prr;
    let (e_mean, e_sd, _, e_goodput, e_drops) = step_marked_dumbbell("ecn", k, CwndReduction::Prr);
    assert!(e_sd > 2.0 * p_sd, "ECN queue sd {e_sd} vs DCTCP {p_sd}");
    assert!(e_mean < p_mean - 3.0);
    assert!(e_goodput > 0.98 * link, "ECN goodput {e_goodput} of {link}");
    assert_eq!(e_drops, 0);
}
