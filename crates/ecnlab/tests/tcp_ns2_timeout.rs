//! ns-2's timeout rule (`rto_rule = ns2`) through a whole connection: what the timer sets
//! ssthresh to depends on the last reduction before it, which the connection reports to the
//! controller from its CWR round and its recoveries.
//!
//! ns-2.35's TcpAgent::timeout keeps ssthresh while the last window action was an ECN
//! response, halves otherwise, and makes the timeout the last action. ns-2 has no CWR round:
//! a loss found in the round after an ECN response is a fast retransmit there, which ends the
//! ECN response; the connection tells the controller so through `on_loss_in_cwr`.
//!
//! Each case marks segment 30 CE (one ECN response, in slow start) and later drops every data
//! segment sent in a window of time, so the timer fires with no duplicate ACKs before it.

use ecnlab::cc::newreno::{NewReno, NewRenoConfig, ReduceFrom, RtoRule};
use ecnlab::packet::Packet;
use ecnlab::tcp::codecs::by_name;
use ecnlab::tcp::testing::{thousand_byte_segments, Call, Dir, Harness, Probe};
use ecnlab::tcp::TcpConfig;
use ecnlab::time::{Time, MS, SEC};
use ecnlab::wire::Ecn;

const MSS: u64 = 1000;

fn seg(k: u64) -> u64 {
    1 + (k - 1) * MSS
}

/// ssthresh and cwnd just before a timeout, and ssthresh just after it (bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Around {
    ssthresh: u64,
    cwnd: u64,
    ssthresh_after: u64,
}

struct Run {
    h: Harness,
    calls: Vec<Call>,
}

impl Run {
    /// When the timer fired.
    fn timeouts(&self) -> Vec<Time> {
        self.calls
            .iter()
            .filter_map(|c| match c {
                Call::Rto(t, _) => Some(*t),
                _ => None,
            })
            .collect()
    }
    fn count(&self, f: impl Fn(&Call) -> bool) -> usize {
        self.calls.iter().filter(|c| f(c)).count()
    }
}

fn ns2_newreno() -> NewReno {
    NewReno::new(
        MSS as u32,
        NewRenoConfig {
            initial_window: Some(2),
            reduce_from: ReduceFrom::Cwnd,
            rto_rule: RtoRule::Ns2,
            ..Default::default()
        },
    )
    .unwrap()
}

/// An unlimited transfer over 10 Mbit/s and 20 ms RTT (ns-2's NewReno: no SACK, no RACK or
/// loss probe). Segment 30's first copy is marked CE; the first copy of each segment in
/// `drop_once` is lost; every data segment sent in `[blackout.0, blackout.1)` is lost. The
/// run stops at `until`. Beside the run: for each timeout, ssthresh and cwnd just before
/// it and ssthresh just after, in bytes.
fn run(drop_once: &[u64], blackout: (Time, Time), until: Time) -> (Run, Vec<Around>) {
    let cfg = TcpConfig {
        delayed_ack: false,
        sack: false,
        rack: false,
        tlp: false,
        frto: false,
        ..thousand_byte_segments()
    };
    let (probe, log) = Probe::new(ns2_newreno());
    let mut h = Harness::new(
        cfg,
        None,
        Box::new(probe),
        by_name("ecn").unwrap(),
        by_name("ecn").unwrap(),
        10 * MS,
        false,
    );
    h.rate_ab = 10_000_000;
    let mut marked = false;
    let mut dropped = vec![false; drop_once.len()];
    // Read from the controller every millisecond: nothing is acknowledged in the last one
    // before a timeout, so the values then are those the timer found.
    let mut around_rto = Vec::new();
    let mut seen_rtos = 0;
    let mut last = (0, 0);
    let step = MS;
    let mut t = 0;
    while t < until {
        t += step;
        h.run(t, &mut |h: &Harness, dir, p: &mut Packet| {
            if dir != Dir::AtoB || p.payload_len == 0 {
                return true;
            }
            let s = h.rel_seq_a(p);
            if h.now >= blackout.0 && h.now < blackout.1 {
                return false;
            }
            if s == seg(30) && !marked {
                marked = true;
                p.ip.ecn = Ecn::CE;
            }
            if let Some(i) = drop_once.iter().position(|&k| seg(k) == s) {
                if !dropped[i] {
                    dropped[i] = true;
                    return false;
                }
            }
            true
        });
        let cc = h.a.controller().unwrap();
        let (ssthresh, cwnd) = (cc.ssthresh(), cc.window());
        let rtos = log
            .borrow()
            .iter()
            .filter(|c| matches!(c, Call::Rto(..)))
            .count();
        if rtos > seen_rtos {
            assert_eq!(rtos, seen_rtos + 1, "one timeout per millisecond at most");
            around_rto.push(Around {
                ssthresh: last.0,
                cwnd: last.1,
                ssthresh_after: ssthresh,
            });
            seen_rtos = rtos;
        }
        last = (ssthresh, cwnd);
    }
    let calls = log.borrow().clone();
    (Run { h, calls }, around_rto)
}

#[test]
fn a_timeout_after_an_ecn_response_keeps_its_ssthresh() {
    // The blackout starts long after the ECN response; nothing else is lost before it, and
    // the first retransmission by the timer gets through.
    let (r, around) = run(&[], (SEC, SEC + 100 * MS), 3 * SEC);
    assert_eq!(r.count(|c| matches!(c, Call::Signal(..))), 1);
    assert_eq!(
        r.count(|c| matches!(c, Call::Loss(..))),
        0,
        "no fast retransmit"
    );
    assert_eq!(r.count(|c| matches!(c, Call::LossInCwr(..))), 0);
    assert_eq!(r.timeouts().len(), 1);
    assert_eq!(r.h.a.fast_retransmits(), 0);
    let a = around[0];
    // Congestion avoidance took the window well past twice the ECN response's ssthresh, so
    // keeping and halving differ.
    assert!(a.cwnd / 2 > a.ssthresh + 2 * MSS, "{a:?}");
    assert_eq!(
        a.ssthresh_after, a.ssthresh,
        "ns-2 keeps the ECN response's ssthresh"
    );
}

#[test]
fn a_loss_in_the_cwr_round_ends_the_ecn_response_for_the_timer() {
    // Segment 40 was sent before the ECN echo came back (slow start from 2 segments reaches
    // 40 outstanding by then) and is lost: fast recovery begins inside the CWR round, with
    // no second reduction. For the timer it is ns-2's fast retransmit: the timeout halves.
    let (r, around) = run(&[40], (SEC, SEC + 100 * MS), 3 * SEC);
    let signal = r
        .calls
        .iter()
        .find_map(|c| match c {
            Call::Signal(t, _) => Some(*t),
            _ => None,
        })
        .unwrap();
    let in_cwr: Vec<Time> = r
        .calls
        .iter()
        .filter_map(|c| match c {
            Call::LossInCwr(t) => Some(*t),
            _ => None,
        })
        .collect();
    assert_eq!(in_cwr.len(), 1, "{in_cwr:?}");
    assert!(in_cwr[0] > signal && in_cwr[0] < signal + 40 * MS);
    assert_eq!(
        r.count(|c| matches!(c, Call::Loss(..))),
        0,
        "the CWR round's reduction stands"
    );
    assert_eq!(r.h.a.fast_retransmits(), 1);
    assert_eq!(r.timeouts().len(), 1);
    let a = around[0];
    assert!(a.cwnd / 2 > a.ssthresh + 2 * MSS, "{a:?}");
    assert_eq!(
        a.ssthresh_after,
        a.cwnd / 2,
        "the timeout halves the window (ns-2's slowdown from cwnd): {a:?}"
    );
}

#[test]
fn only_the_first_timeout_after_an_ecn_response_keeps_ssthresh() {
    // A blackout longer than the first backoff: the timer's first retransmission is lost too.
    // The first timeout keeps the ECN response's ssthresh; it is then the last action, so the
    // second halves the 1-segment window (ssthresh 2 segments, ns-2's floor).
    let (r, around) = run(&[], (SEC, SEC + 700 * MS), 4 * SEC);
    assert_eq!(r.count(|c| matches!(c, Call::Loss(..))), 0);
    assert_eq!(r.timeouts().len(), 2, "{:?}", r.timeouts());
    let (first, second) = (around[0], around[1]);
    assert!(first.cwnd / 2 > first.ssthresh + 2 * MSS, "{first:?}");
    assert_eq!(
        first.ssthresh_after, first.ssthresh,
        "the first keeps ssthresh"
    );
    assert_eq!(
        (second.cwnd, second.ssthresh_after),
        (MSS, 2 * MSS),
        "the repeated timeout halves the 1-segment window to ns-2's floor of 2"
    );
}
