//! The window reduction at a retransmission timeout that ends a stalled SACK recovery.
//!
//! RFC 5681 eq. 4 sets ssthresh to no more than FlightSize / 2. When the fast retransmission
//! itself is lost, RFC 6675 recovery keeps sending new data under `pipe` until the timer
//! fires, so by then FlightSize spans many windows, most of it SACKed. The timeout must not
//! count the SACKed bytes (they have left the network): otherwise it would raise ssthresh
//! far above the one fast recovery chose for the same loss, and the slow start after it
//! would overshoot the path by that much.
//!
//! RACK (on by default) finds such a lost retransmission without the timer, so these tests
//! turn it off to make the timeout happen.

use ecnlab::cc::newreno::{CaIncrease, NewReno, NewRenoConfig};
use ecnlab::packet::Packet;
use ecnlab::tcp::codecs::NoEcn;
use ecnlab::tcp::testing::{thousand_byte_segments, Call, Dir, Harness, Probe};
use ecnlab::tcp::TcpConfig;
use ecnlab::time::{Time, MS, SEC};

const MSS: u64 = 1000;

/// Runs an unlimited SACK transfer over a 10 Mbps, 20 ms RTT path in which the first two
/// transmissions of segment 61 (the original and the fast retransmission) are lost.
fn stalled_recovery() -> (Harness, Vec<Call>) {
    let cfg = TcpConfig {
        sack: true,
        delayed_ack: false,
        rack: false,
        // A window that never binds, so recovery can send for a whole RTO past the hole.
        rcv_autotune: false,
        ..thousand_byte_segments()
    };
    let nr = NewReno::new(
        MSS as u32,
        NewRenoConfig {
            initial_window: Some(10),
            abc_limit: 1,
            ca_increase: CaIncrease::PerAck,
            ..Default::default()
        },
    )
    .unwrap();
    let (probe, log) = Probe::new(nr);
    let mut h = Harness::new(
        cfg,
        None,
        Box::new(probe),
        Box::new(NoEcn),
        Box::new(NoEcn),
        10 * MS,
        false,
    );
    h.rate_ab = 10_000_000;
    let lost = 1 + 60 * MSS;
    let mut drops = 0;
    h.run(2 * SEC, &mut |h: &Harness, dir, p: &mut Packet| {
        if dir == Dir::AtoB && p.payload_len > 0 && h.rel_seq_a(p) == lost && drops < 2 {
            drops += 1;
            return false;
        }
        true
    });
    let calls = log.borrow().clone();
    (h, calls)
}

/// One past the highest data byte `a` had sent before `t`.
fn snd_max_before(h: &Harness, t: Time) -> u64 {
    h.sent
        .iter()
        .filter(|x| x.dir == Dir::AtoB && x.time < t && x.pkt.payload_len > 0)
        .map(|x| h.rel_seq_a(&x.pkt) + x.pkt.payload_len as u64)
        .max()
        .unwrap()
}

#[test]
fn timeout_after_a_lost_fast_retransmission_counts_only_unsacked_data() {
    let (h, calls) = stalled_recovery();
    assert!(h.a.sack_enabled());
    assert_eq!(h.a.fast_retransmits(), 1);
    assert_eq!(
        h.a.timeouts(),
        1,
        "the lost fast retransmission is repaired by the timer"
    );
    let loss = calls
        .iter()
        .find_map(|c| match c {
            Call::Loss(t, b) => Some((*t, *b)),
            _ => None,
        })
        .unwrap();
    let (t_rto, base) = calls
        .iter()
        .find_map(|c| match c {
            Call::Rto(t, b) => Some((*t, *b)),
            _ => None,
        })
        .unwrap();
    // Between the two, recovery sent new data for a whole RTO: FlightSize grew to several
    // windows while the hole at segment 61 held the cumulative ACK.
    let flight_at_rto = snd_max_before(&h, t_rto) - (1 + 60 * MSS);
    assert!(t_rto - loss.0 >= 150 * MS);
    assert!(
        flight_at_rto > 3 * loss.1,
        "flight {flight_at_rto}, at loss {}",
        loss.1
    );
    // What the timeout halves is the data not yet acknowledged in any way: the hole plus
    // what recovery had in flight (at most its window of about half the flight at the loss).
    assert!(base >= MSS, "the hole itself is outstanding");
    assert!(
        base <= loss.1 / 2 + 3 * MSS,
        "base {base} vs flight at loss {}",
        loss.1
    );
}

#[test]
fn a_timeout_never_raises_ssthresh_above_the_recoverys() {
    let (h, calls) = stalled_recovery();
    let ssthresh_recovery = calls
        .iter()
        .find_map(|c| match c {
            Call::Loss(_, b) => Some((b / 2).max(2 * MSS)),
            _ => None,
        })
        .unwrap();
    let t_rto = calls
        .iter()
        .find_map(|c| match c {
            Call::Rto(t, _) => Some(*t),
            _ => None,
        })
        .unwrap();
    // The slow start after the timeout stops at the new ssthresh: the largest window before
    // the next loss is at most the recovery's ssthresh (no second loss happens here).
    let cc = h.a.controller().unwrap();
    assert!(
        cc.ssthresh() <= ssthresh_recovery,
        "ssthresh after the timeout {} > {} set by recovery",
        cc.ssthresh(),
        ssthresh_recovery
    );
    assert!(h.now > t_rto + SEC / 2);
    assert_eq!(h.a.timeouts(), 1);
}
