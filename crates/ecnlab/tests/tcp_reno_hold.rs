//! Without SACK, the duplicate ACKs that answer a spurious timeout's needless retransmissions
//! must not start a fast recovery.
//!
//! After a spurious timeout (the ACKs were late, not lost), go-back-N resends data the
//! receiver already holds; each copy draws a duplicate ACK at exactly `recover` (one past the
//! highest byte sent when the timer fired). RFC 6582 §3.2 step 1 starts a new recovery only
//! when the cumulative ACK covers *more* than `recover`, as ns-2's default (`bugFix_`:
//! `highest_ack_ > recover_`); Linux (`tcp_try_undo_recovery`: a Reno connection holds its
//! state "until something *above* high_seq is ACKed ... to prevent false fast retransmits")
//! starts no new recovery either. SACK tells such duplicates apart, and is not concerned.

use ecnlab::packet::Packet;
use ecnlab::tcp::codecs::NoEcn;
use ecnlab::tcp::testing::{thousand_byte_segments, Dir, FixedWindow, Harness};
use ecnlab::tcp::TcpConfig;
use ecnlab::time::{MS, SEC};

/// An unlimited transfer with a constant 20-segment window (the connection's rules alone) over
/// 10 Mb/s and 20 ms RTT, whose path delay jumps to 600 ms for the packets sent from 1 to
/// 1.1 s: their ACKs arrive after the retransmission timer has fired.
fn spurious_timeout(sack: bool) -> Harness {
    let cfg = TcpConfig {
        sack,
        delayed_ack: false,
        rack: false,
        frto: false,
        ..thousand_byte_segments()
    };
    let mut h = Harness::new(
        cfg,
        None,
        Box::new(FixedWindow(20_000)),
        Box::new(NoEcn),
        Box::new(NoEcn),
        10 * MS,
        false,
    );
    h.rate_ab = 10_000_000;
    h.run_clean(SEC);
    h.delay = 600 * MS;
    h.run_clean(SEC + 100 * MS);
    h.delay = 10 * MS;
    h.run(4 * SEC, &mut |_: &Harness, _: Dir, _: &mut Packet| true);
    h
}

#[test]
fn duplicate_acks_at_recover_after_a_spurious_timeout_start_no_recovery() {
    let h = spurious_timeout(false);
    assert!(h.a.timeouts() >= 1, "the timer fired");
    let dups = h
        .arrived
        .iter()
        .filter(|x| x.dir == Dir::BtoA && x.time > SEC)
        .count();
    assert_eq!(
        h.a.fast_retransmits(),
        0,
        "timeouts {}, ACKs after 1 s {dups}",
        h.a.timeouts()
    );
}
