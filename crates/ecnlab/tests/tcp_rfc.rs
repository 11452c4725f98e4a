//! RFC behaviours of the TCP connection, checked packet by packet with the two-endpoint
//! harness: fast retransmit (RFC 5681 §3.2), limited transmit (RFC 3042), NewReno partial
//! ACKs (RFC 6582), RTO back-off and Karn's rule (RFC 6298), delayed ACKs (RFC 5681 §4.2),
//! SACK generation (RFC 2018) and SACK recovery (RFC 6675).

use ecnlab::cc::AckEvent;
use ecnlab::packet::Packet;
use ecnlab::tcp::codecs::NoEcn;
use ecnlab::tcp::testing::{thousand_byte_segments, Call, Dir, FixedWindow, Harness, Probe};
use ecnlab::tcp::{RtoFloor, TcpConfig};
use ecnlab::time::{Time, MS, SEC};

const MSS: u64 = 1000;

/// Relative sequence number of the first byte of segment `k` (1-based data numbering).
fn seg(k: u64) -> u64 {
    1 + (k - 1) * MSS
}

fn harness(cfg: TcpConfig, cc: Box<dyn ecnlab::cc::Controller>) -> Harness {
    let mut h = Harness::new(
        cfg,
        None,
        cc,
        Box::new(NoEcn),
        Box::new(NoEcn),
        10 * MS,
        false,
    );
    h.rate_ab = 10_000_000;
    h
}

/// Times at which `a` sent the data segment starting at `rel`.
fn sends_of(h: &Harness, rel: u64) -> Vec<Time> {
    h.sent
        .iter()
        .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0 && h.rel_seq_a(&t.pkt) == rel)
        .map(|t| t.time)
        .collect()
}

/// Arrival times at `a` of ACKs carrying ACK number `rel`.
fn acks_of(h: &Harness, rel: u64) -> Vec<Time> {
    h.arrived
        .iter()
        .filter(|t| t.dir == Dir::BtoA && h.rel_ack_b(&t.pkt) == rel)
        .map(|t| t.time)
        .collect()
}

/// New data segments (above `above`) `a` sent at exactly `t`.
fn new_data_at(h: &Harness, t: Time, above: u64) -> usize {
    h.sent
        .iter()
        .filter(|x| {
            x.dir == Dir::AtoB
                && x.time == t
                && x.pkt.payload_len > 0
                && h.rel_seq_a(&x.pkt) > above
                && sends_of(h, h.rel_seq_a(&x.pkt)).len() == 1
        })
        .count()
}

/// Drops the first transmission of each listed data segment (relative sequence numbers).
fn drop_first(lost: &[u64]) -> impl FnMut(&Harness, Dir, &mut Packet) -> bool + '_ {
    let mut done = vec![false; lost.len()];
    move |h, dir, p| {
        if dir == Dir::AtoB && p.payload_len > 0 {
            let s = h.rel_seq_a(p);
            if let Some(i) = lost.iter().position(|&l| l == s) {
                if !done[i] {
                    done[i] = true;
                    return false;
                }
            }
        }
        true
    }
}

#[test]
fn fast_retransmit_on_exactly_the_third_duplicate_ack_and_limited_transmit() {
    for lt in [false, true] {
        let cfg = TcpConfig {
            sack: false,
            delayed_ack: false,
            limited_transmit: lt,
            ..thousand_byte_segments()
        };
        let mut h = harness(cfg, Box::new(FixedWindow(10 * MSS)));
        let lost = seg(21);
        h.run(2 * SEC, &mut drop_first(&[lost]));
        let acks = acks_of(&h, lost);
        // The first ACK with this number acknowledges segment 20; the rest are duplicates.
        let dups = &acks[1..];
        assert!(dups.len() >= 3, "{} duplicates", dups.len());
        let sends = sends_of(&h, lost);
        assert_eq!(sends.len(), 2, "one original, one retransmission");
        assert_eq!(
            sends[1], dups[2],
            "retransmitted on the third duplicate ACK"
        );
        // RFC 3042: one new segment on each of the first two duplicates (the window is full).
        let expect = if lt { 1 } else { 0 };
        assert_eq!(new_data_at(&h, dups[0], lost), expect, "lt {lt}, dup 1");
        assert_eq!(new_data_at(&h, dups[1], lost), expect, "lt {lt}, dup 2");
        assert_eq!(h.a.fast_retransmits(), 1);
        assert_eq!(h.a.timeouts(), 0);
    }
}

#[test]
fn newreno_partial_ack_retransmits_the_next_hole_at_once() {
    let cfg = TcpConfig {
        sack: false,
        delayed_ack: false,
        ..thousand_byte_segments()
    };
    let (probe, log) = Probe::new(FixedWindow(10 * MSS));
    let mut h = harness(cfg, Box::new(probe));
    let (l1, l2) = (seg(21), seg(24));
    h.run(2 * SEC, &mut drop_first(&[l1, l2]));
    let r1 = sends_of(&h, l1);
    let r2 = sends_of(&h, l2);
    assert_eq!((r1.len(), r2.len()), (2, 2));
    // The partial ACK (acknowledging up to the second hole) triggers its retransmission.
    let partial = acks_of(&h, l2)[0];
    assert!(partial > r1[1]);
    assert_eq!(r2[1], partial);
    assert_eq!(h.a.fast_retransmits(), 1, "one recovery episode");
    assert_eq!(h.a.timeouts(), 0);
    let log = log.borrow();
    let losses = log.iter().filter(|c| matches!(c, Call::Loss(..))).count();
    let ends: Vec<Time> = log
        .iter()
        .filter_map(|c| match c {
            Call::RecoveryEnd(t) => Some(*t),
            _ => None,
        })
        .collect();
    assert_eq!(losses, 1);
    assert_eq!(ends.len(), 1);
    // Recovery ends with the ACK that covers everything sent before it began.
    assert!(ends[0] > partial);
}

/// Sixteen holes in one window (every other segment from 21 to 51) take sixteen round trips
/// of about 21 ms to repair, one per partial ACK: longer than the 200 ms RTO. Restarting the
/// timer on every partial ACK (RFC 6582's Slow-but-Steady; Linux re-arms it on any ACK of
/// new data) repairs them all without a timeout; restarting it on the first only (Impatient,
/// ns-2's default) ends in one.
#[test]
fn newreno_partial_acks_restart_the_timer_as_configured() {
    use ecnlab::tcp::PartialAckTimer;
    let run = |timer: PartialAckTimer| {
        let cfg = TcpConfig {
            sack: false,
            delayed_ack: false,
            rto_floor: RtoFloor::Rfc6298,
            partial_ack_timer: timer,
            ..thousand_byte_segments()
        };
        let (probe, _log) = Probe::new(FixedWindow(60 * MSS));
        let mut h = harness(cfg, Box::new(probe));
        let holes: Vec<u64> = (21..=51).step_by(2).map(seg).collect();
        h.run(3 * SEC, &mut drop_first(&holes));
        let partials = holes[1..]
            .iter()
            .filter(|&&l| !acks_of(&h, l).is_empty())
            .count();
        (h.a.timeouts(), h.a.fast_retransmits(), partials)
    };
    assert_eq!(run(PartialAckTimer::Every), (0, 1, 15));
    assert_eq!(run(PartialAckTimer::First).0, 1);
}

#[test]
fn rto_backoff_doubles_and_karn_takes_no_sample_from_retransmissions() {
    let cfg = TcpConfig {
        sack: false,
        delayed_ack: false,
        rto_floor: RtoFloor::Rfc6298,
        ..thousand_byte_segments()
    };
    let run = |until: Time| {
        // A small fixed window keeps the RTT constant (no queue), so the RTO is the 200 ms
        // floor of RFC 6298 §2.4.
        let (probe, log) = Probe::new(FixedWindow(4 * MSS));
        let mut h = harness(cfg.clone(), Box::new(probe));
        // Blackout of the forward path between 0.5 s and 3.5 s.
        h.run(until, &mut |h, dir, _| {
            !(dir == Dir::AtoB && h.now >= 500 * MS && h.now < 3500 * MS)
        });
        (h, log)
    };
    let (h, log) = run(5 * SEC);
    let stuck = h
        .sent
        .iter()
        .find(|t| t.dir == Dir::AtoB && t.time >= 500 * MS && t.pkt.payload_len > 0)
        .map(|t| h.rel_seq_a(&t.pkt))
        .unwrap();
    let tx = sends_of(&h, stuck);
    assert!(tx.len() >= 5, "{tx:?}");
    let d: Vec<Time> = tx.windows(2).skip(1).map(|w| w[1] - w[0]).collect();
    // Intervals between timer retransmissions double (RFC 6298 §5.5): 2, 4, 8 × 200 ms.
    assert_eq!(h.a.rtt().min_rtt() / MS, 20);
    assert_eq!(d[0], 2 * 200 * MS);
    assert_eq!(d[1], 2 * d[0]);
    assert_eq!(d[2], 2 * d[1]);
    // The retransmission after the blackout is acknowledged: no RTT sample (Karn), SRTT
    // unchanged.
    let after = tx[4];
    let log = log.borrow();
    let acks: Vec<&AckEvent> = log
        .iter()
        .filter_map(|c| match c {
            Call::Ack(ev) => Some(ev),
            _ => None,
        })
        .collect();
    let before = acks.iter().rev().find(|ev| ev.now < after).unwrap();
    let first_after = acks.iter().find(|ev| ev.now > after).unwrap();
    assert_eq!(first_after.rtt, None);
    assert_eq!(first_after.srtt, before.srtt);
    // No sample was ever inflated by the blackout.
    assert!(acks.iter().filter_map(|ev| ev.rtt).all(|r| r < 30 * MS));
    // RFC 6298 §5.7: the backed-off RTO stays until a new sample: right after that ACK the
    // timer runs with 16 × 200 ms.
    let (h2, _) = run(first_after.now);
    assert_eq!(h2.a.rtt().backoffs, 4);
    assert_eq!(h2.a.rto_deadline(), first_after.now + 3200 * MS);
    // Later, new data gives samples again and the RTO returns to 200 ms.
    assert_eq!(h.a.rtt().backoffs, 0);
    assert_eq!(h.a.rtt().rto(), 200 * MS);
}

#[test]
fn delayed_ack_every_second_segment_or_after_the_timeout() {
    for (window, delayed) in [(MSS, true), (2 * MSS, false)] {
        // The defaults (Linux's): 40 ms delayed-ACK timeout, RTO at least SRTT + 200 ms, so a
        // lone segment never times out waiting for its delayed ACK. RFC 5681's receiver
        // alone: without Linux's quick ACKs for the first segments.
        let cfg = TcpConfig {
            quickack: false,
            ..thousand_byte_segments()
        };
        let mut h = harness(cfg, Box::new(FixedWindow(window)));
        h.run_clean(3 * SEC);
        let data: Vec<Time> = h
            .arrived
            .iter()
            .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0)
            .map(|t| t.time)
            .take(6)
            .collect();
        let acks: Vec<Time> = h
            .sent
            .iter()
            .filter(|t| t.dir == Dir::BtoA && t.time > data[0])
            .map(|t| t.time)
            .take(3)
            .collect();
        if delayed {
            // A lone segment is acknowledged when the 40 ms timer runs out.
            for i in 0..3 {
                assert_eq!(acks[i], data[i] + 40 * MS, "segment {i}");
            }
            assert_eq!(h.a.timeouts(), 0);
        } else {
            // The second of two segments is acknowledged on arrival.
            for i in 0..3 {
                assert_eq!(acks[i], data[2 * i + 1], "pair {i}");
            }
        }
    }
}

#[test]
fn sack_blocks_report_the_newest_segment_first_and_recovery_repairs_in_order() {
    // RFC 6675's rules alone (RACK would mark a hole lost with fewer SACKed segments above).
    let cfg = TcpConfig {
        sack: true,
        delayed_ack: true,
        rack: false,
        // RFC 5681 §4.2's receiver, without Linux's SACK compression.
        sack_compress_max: 0,
        ..thousand_byte_segments()
    };
    let (probe, log) = Probe::new(FixedWindow(20 * MSS));
    let mut h = harness(cfg, Box::new(probe));
    let lost = [seg(21), seg(23), seg(26)];
    h.run(3 * SEC, &mut drop_first(&lost));
    assert!(h.a.sack_enabled());
    // Receiver (RFC 2018 §4): every out-of-order arrival is acknowledged at once, and the
    // first block of that ACK contains the segment that just arrived.
    let mut checked = 0;
    let mut last_ack = 0;
    for arr in h
        .arrived
        .iter()
        .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0)
    {
        let s = h.rel_seq_a(&arr.pkt);
        let Some(ack) = h
            .sent
            .iter()
            .find(|t| t.dir == Dir::BtoA && t.time == arr.time)
        else {
            // No ACK at once: only for the next in-order segment (a delayed ACK).
            assert!(
                s <= last_ack + MSS,
                "segment {s} beyond {last_ack} not acknowledged"
            );
            continue;
        };
        let tcp = ack.pkt.tcp().unwrap();
        let rcv_nxt = h.rel_ack_b(&ack.pkt);
        last_ack = last_ack.max(rcv_nxt);
        if s > rcv_nxt {
            let (l, r) = tcp.sack_blocks()[0];
            let base = 0xFFFF_F000u32;
            let (l, r) = (l.wrapping_sub(base) as u64, r.wrapping_sub(base) as u64);
            assert!(
                l <= s && s + MSS <= r,
                "segment {s} not in first block {l}..{r}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 10);
    // A retransmission that fills a hole is acknowledged at once (RFC 5681 §4.2), despite
    // delayed ACKs.
    for &l in &lost {
        let arrival = h
            .arrived
            .iter()
            .find(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0 && h.rel_seq_a(&t.pkt) == l)
            .unwrap();
        let ack = h
            .sent
            .iter()
            .find(|t| t.dir == Dir::BtoA && t.time == arrival.time)
            .expect("immediate ACK for the gap-filling segment");
        assert!(h.rel_ack_b(&ack.pkt) > l);
    }
    // Sender (RFC 6675): each hole is retransmitted once, in order, and the second and third
    // as soon as DupThresh segments above them are SACKed.
    let rtx: Vec<(u64, Time)> = lost.iter().map(|&l| (l, sends_of(&h, l)[1])).collect();
    assert!(rtx.windows(2).all(|w| w[0].1 <= w[1].1), "{rtx:?}");
    for &(l, t) in &rtx {
        assert_eq!(sends_of(&h, l).len(), 2);
        // The ACK that arrived at t SACKs at least three segments above the hole.
        let ack = h
            .arrived
            .iter()
            .find(|x| x.dir == Dir::BtoA && x.time == t)
            .unwrap();
        let above: u64 = ack
            .pkt
            .tcp()
            .unwrap()
            .sack_blocks()
            .iter()
            .map(|&(a, b)| {
                let base = 0xFFFF_F000u32;
                let (a, b) = (a.wrapping_sub(base) as u64, b.wrapping_sub(base) as u64);
                (b.saturating_sub(a.max(l + MSS))) / MSS
            })
            .sum();
        assert!(above >= 3, "hole {l}: {above} segments SACKed above");
    }
    assert_eq!(h.a.timeouts(), 0);
    assert_eq!(h.a.retransmissions(), 3);
    let losses = log
        .borrow()
        .iter()
        .filter(|c| matches!(c, Call::Loss(..)))
        .count();
    assert_eq!(losses, 1, "one recovery episode for the three holes");
}
