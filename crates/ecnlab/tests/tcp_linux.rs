//! The reduction round as Linux runs it (net/ipv4/tcp_input.c): after an ECN reduction the
//! connection holds the CWR state until the data then in flight is acknowledged — no window
//! growth, no second reduction for a loss in that window (RFC 3168 §6.1.2) — and in CWR and
//! SACK recovery the window comes down by PRR (RFC 6937) rather than stopping the sender.

use ecnlab::cc::cubic::{Cubic, CubicConfig};
use ecnlab::cc::dctcp::{Dctcp, DctcpConfig};
use ecnlab::cc::newreno::{NewReno, NewRenoConfig};
use ecnlab::cc::Controller;
use ecnlab::packet::Packet;
use ecnlab::tcp::codecs::by_name;
use ecnlab::tcp::testing::{thousand_byte_segments, Call, Dir, FixedWindow, Harness, Probe};
use ecnlab::tcp::{CwndReduction, Recovery, TcpConfig};
use ecnlab::time::{Time, MS, SEC};
use ecnlab::wire::Ecn;

const MSS: u64 = 1000;

fn seg(k: u64) -> u64 {
    1 + (k - 1) * MSS
}

/// `a` sends `size` bytes (None: unlimited) to `b` over 10 Mbit/s and a 20 ms RTT.
fn path(cfg: TcpConfig, size: Option<u64>, cc: Box<dyn Controller>, codec: &str) -> Harness {
    let mut h = Harness::new(
        cfg,
        size,
        cc,
        by_name(codec).unwrap(),
        by_name(codec).unwrap(),
        10 * MS,
        false,
    );
    h.rate_ab = 10_000_000;
    h
}

/// (time, recovery state, controller window, controller ssthresh) after each event of `a`.
type Trace = Vec<(Time, Recovery, u64, u64)>;

/// An unlimited transfer over 10 Mbit/s and 20 ms RTT whose segment `mark` (if any) is
/// CE-marked and whose segment `drop` is lost (first transmissions).
fn mark_then_drop(
    cc: Box<dyn Controller>,
    codec: &str,
    mark: Option<u64>,
    drop: u64,
    reduction: CwndReduction,
) -> (Harness, Trace) {
    let cfg = TcpConfig {
        cwnd_reduction: reduction,
        ..thousand_byte_segments()
    };
    let mut h = path(cfg, None, cc, codec);
    let mut trace = Trace::new();
    let (mut marked, mut dropped) = (false, false);
    h.run(2 * SEC, &mut |h: &Harness, dir, p: &mut Packet| {
        let cc = h.a.controller().unwrap();
        trace.push((h.now, h.a.recovery(), cc.window(), cc.ssthresh()));
        if dir != Dir::AtoB || p.payload_len == 0 {
            return true;
        }
        let s = h.rel_seq_a(p);
        if Some(s) == mark.map(seg) && !marked {
            marked = true;
            p.ip.ecn = Ecn::CE;
        }
        if s == seg(drop) && !dropped {
            dropped = true;
            return false;
        }
        true
    });
    (h, trace)
}

/// A mark at segment 40 and a loss at segment 46, in the same window of data.
fn check_one_reduction<C: Controller + 'static>(name: &str, codec: &str, cc: C) {
    let (probe, log) = Probe::new(cc);
    let (h, trace) = mark_then_drop(Box::new(probe), codec, Some(40), 46, CwndReduction::Prr);
    // The mark's reduction is the only one: the loss found in its round calls no on_loss.
    assert!(
        !log.borrow().iter().any(|c| matches!(c, Call::Loss(..))),
        "{name}: on_loss called for a loss in the CWR round"
    );
    assert_eq!(h.a.fast_retransmits(), 1, "{name}");
    assert_eq!(h.a.retransmissions(), 1, "{name}");
    let cwr_at = trace.iter().position(|t| t.1 == Recovery::Cwr).unwrap();
    let fast_at = trace.iter().position(|t| t.1 == Recovery::Fast).unwrap();
    let open_again = fast_at
        + trace[fast_at..]
            .iter()
            .position(|t| t.1 == Recovery::Open)
            .unwrap();
    assert!(cwr_at < fast_at, "{name}: CWR then recovery");
    let (_, _, w, ss) = trace[cwr_at];
    assert!(w <= ss, "{name}: reduced window {w} above ssthresh {ss}");
    for &(t, st, win, sst) in &trace[cwr_at..open_again] {
        assert!(
            matches!(st, Recovery::Cwr | Recovery::Fast),
            "{name} at {t}: {st:?}"
        );
        assert_eq!(
            (win, sst),
            (w, ss),
            "{name} at {t}: the window moved in the round"
        );
    }
    // Open again, the window grows.
    assert!(
        trace.last().unwrap().2 > w,
        "{name}: no growth after the round"
    );
}

#[test]
fn a_loss_in_the_cwr_round_is_repaired_without_a_second_reduction_or_growth() {
    check_one_reduction(
        "newreno",
        "ecn",
        NewReno::new(1000, NewRenoConfig::default()).unwrap(),
    );
    check_one_reduction(
        "cubic",
        "ecn",
        Cubic::new(1000, CubicConfig::default()).unwrap(),
    );
    check_one_reduction(
        "dctcp",
        "dctcp",
        Dctcp::new(1000, DctcpConfig::default()).unwrap(),
    );
}

#[test]
fn prr_spreads_the_cut_where_an_immediate_cut_stops_the_sender() {
    // NewReno in congestion avoidance loses one segment: ssthresh = FlightSize / 2. PRR sends
    // one new segment for about every two delivered from the first duplicate ACK on; the
    // immediate cut sends nothing until half the window has drained. Both end the round with
    // the same window and send about the same amount in it.
    let mut sent_in_round = vec![];
    for reduction in [CwndReduction::Prr, CwndReduction::Immediate] {
        let cc = NewReno::new(
            1000,
            NewRenoConfig {
                initial_ssthresh: Some(30 * MSS),
                ..Default::default()
            },
        )
        .unwrap();
        let (h, trace) = mark_then_drop(Box::new(cc), "none", None, 200, reduction);
        let fast_at = trace.iter().position(|t| t.1 == Recovery::Fast).unwrap();
        let t_fast = trace[fast_at].0;
        let t_end = trace[fast_at..]
            .iter()
            .find(|t| t.1 == Recovery::Open)
            .unwrap()
            .0;
        // New data segments sent during recovery, and the ACKs that arrived before the first.
        let new_data: Vec<Time> = h
            .sent
            .iter()
            .filter(|t| t.dir == Dir::AtoB && t.time > t_fast && t.time < t_end)
            .filter(|t| t.pkt.payload_len > 0 && h.rel_seq_a(&t.pkt) != seg(200))
            .map(|t| t.time)
            .collect();
        let acks_before_first = h
            .arrived
            .iter()
            .filter(|t| t.dir == Dir::BtoA && t.time > t_fast && t.time <= new_data[0])
            .count();
        match reduction {
            CwndReduction::Prr => assert!(
                acks_before_first <= 3,
                "PRR waited {acks_before_first} ACKs"
            ),
            CwndReduction::Immediate => {
                assert!(
                    acks_before_first >= 5,
                    "immediate cut waited {acks_before_first} ACKs"
                )
            }
        }
        sent_in_round.push(new_data.len() as i64);
    }
    assert!(
        (sent_in_round[0] - sent_in_round[1]).abs() <= 2,
        "segments sent in the round: PRR {} vs immediate {}",
        sent_in_round[0],
        sent_in_round[1]
    );
}

#[test]
fn rtt_samples_come_from_the_first_newly_acknowledged_segment() {
    // Delayed ACKs cover two segments: the sample runs from the earlier one's transmission,
    // so it includes the wait for the second (Linux's seq_rtt from first_ackt).
    let (probe, log) = Probe::new(NewReno::new(1000, NewRenoConfig::default()).unwrap());
    let mut h = path(
        thousand_byte_segments(),
        Some(400 * MSS),
        Box::new(probe),
        "none",
    );
    h.run_clean(5 * SEC);
    let sent_at = |seq: u64| {
        h.sent
            .iter()
            .find(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0 && h.rel_seq_a(&t.pkt) == seq)
            .map(|t| t.time)
            .unwrap()
    };
    let acks: Vec<(Time, u64)> = h
        .arrived
        .iter()
        .filter(|t| t.dir == Dir::BtoA)
        .map(|t| (t.time, h.rel_ack_b(&t.pkt)))
        .collect();
    let mut checked = 0;
    let mut two_segment_acks = 0;
    for c in log.borrow().iter() {
        let Call::Ack(ev) = c else { continue };
        let Some(rtt) = ev.rtt else { continue };
        let i = acks.iter().position(|&(t, _)| t == ev.now).unwrap();
        let (prev, this) = (acks[i - 1].1, acks[i].1);
        assert_eq!(
            rtt,
            ev.now - sent_at(prev),
            "ACK of {prev}..{this} at {}",
            ev.now
        );
        two_segment_acks += (this - prev == 2 * MSS) as u32;
        checked += 1;
    }
    assert!(
        checked > 100 && two_segment_acks > 100,
        "{checked} samples, {two_segment_acks} of two segments"
    );
}

/// A bulk NewReno transfer, window-limited to 20 segments (below the path's 25: no queue,
/// RTO ≈ 220 ms), whose packets sent in [1 s, 1 s + `span`) take `delay` − 10 ms longer —
/// a delay spike, nothing lost or reordered; runs until `until`.
fn delay_spike(cfg: TcpConfig, delay: Time, span: Time, until: Time) -> (Harness, Vec<Call>, u64) {
    let cfg = TcpConfig {
        rcv_buf: 20 * MSS,
        rcv_autotune: false,
        ..cfg
    };
    let (probe, log) = Probe::new(NewReno::new(1000, NewRenoConfig::default()).unwrap());
    let mut h = path(cfg, None, Box::new(probe), "none");
    h.run_clean(SEC);
    let window_before = h.a.controller().unwrap().window();
    h.delay = delay;
    h.run_clean(SEC + span);
    h.delay = 10 * MS;
    h.run_clean(until);
    let calls = log.borrow().clone();
    (h, calls, window_before)
}

/// A spike of 400 ms over one round trip and more: the timer fires although nothing was lost
/// (the tail loss probe off, so that the timer is what answers the silence).
fn timeout_spike(frto: bool) -> (Harness, Vec<Call>, u64) {
    let cfg = TcpConfig {
        frto,
        tlp: false,
        ..thousand_byte_segments()
    };
    delay_spike(cfg, 410 * MS, 30 * MS, 3 * SEC)
}

#[test]
fn frto_finds_a_spurious_timeout_and_undoes_it() {
    let (h, calls, window_before) = timeout_spike(true);
    assert_eq!(h.a.timeouts(), 1);
    assert_eq!(h.a.spurious_timeouts(), 1);
    // Only the head was resent; the window came back to where it was.
    assert_eq!(h.a.retransmissions(), 1);
    let undo_at = calls
        .iter()
        .position(|c| matches!(c, Call::SpuriousTimeout(_)))
        .unwrap();
    assert!(calls[..undo_at].iter().any(|c| matches!(c, Call::Rto(..))));
    assert!(h.a.controller().unwrap().window() >= window_before);

    // Without F-RTO the same spike resends everything that was in flight.
    let (h, calls, _) = timeout_spike(false);
    assert_eq!(h.a.timeouts(), 1);
    assert_eq!(h.a.spurious_timeouts(), 0);
    assert!(!calls.iter().any(|c| matches!(c, Call::SpuriousTimeout(_))));
    assert!(
        h.a.retransmissions() > 10,
        "{} retransmissions",
        h.a.retransmissions()
    );
}

/// A bulk NewReno transfer whose data segments starting at `lost` are dropped on their first
/// `times` transmissions each.
fn lose(rack: bool, lost: &[(u64, usize)]) -> Harness {
    let cfg = TcpConfig {
        rack,
        ..thousand_byte_segments()
    };
    let cc = NewReno::new(1000, NewRenoConfig::default()).unwrap();
    let mut h = path(cfg, None, Box::new(cc), "none");
    let mut seen = vec![0usize; lost.len()];
    h.run(3 * SEC, &mut |h: &Harness, dir, p: &mut Packet| {
        if dir != Dir::AtoB || p.payload_len == 0 {
            return true;
        }
        let s = h.rel_seq_a(p);
        match lost.iter().position(|&(l, _)| seg(l) == s) {
            Some(i) => {
                seen[i] += 1;
                seen[i] > lost[i].1
            }
            None => true,
        }
    });
    h
}

fn sends(h: &Harness, k: u64) -> Vec<Time> {
    h.sent
        .iter()
        .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0 && h.rel_seq_a(&t.pkt) == seg(k))
        .map(|t| t.time)
        .collect()
}

#[test]
fn rack_finds_a_lost_retransmission_without_a_timeout() {
    // Segment 30 is lost, and so is its retransmission: RACK sees that segments sent after
    // the retransmission arrived and sends it a third time, one round trip later.
    let h = lose(true, &[(30, 2)]);
    assert_eq!(h.a.timeouts(), 0);
    assert_eq!(h.a.retransmissions(), 2);
    let t = sends(&h, 30);
    assert_eq!(t.len(), 3);
    let rtt = t[2] - t[1];
    assert!(
        rtt > 20 * MS && rtt < 40 * MS,
        "resent again after {rtt} ps"
    );

    // RFC 6675's rules alone leave the lost retransmission to the timer.
    let h = lose(false, &[(30, 2)]);
    assert_eq!(h.a.timeouts(), 1);
    assert!(sends(&h, 30)[2] - sends(&h, 30)[1] >= 200 * MS);
}

#[test]
fn rack_repairs_many_holes_once_each_in_one_recovery() {
    // Every other segment of 30..49 is lost, and the first retransmissions of 34 and 40.
    let mut lost: Vec<(u64, usize)> = (30..50).step_by(2).map(|k| (k, 1)).collect();
    lost[2].1 = 2;
    lost[5].1 = 2;
    let h = lose(true, &lost);
    assert_eq!(h.a.timeouts(), 0);
    assert_eq!(h.a.fast_retransmits(), 1);
    // Ten holes, two lost retransmissions: twelve retransmissions, none of data that arrived.
    assert_eq!(h.a.retransmissions(), 12);
    for &(k, n) in &lost {
        assert_eq!(sends(&h, k).len(), n + 1, "segment {k}");
    }
}

#[test]
fn a_window_the_receiver_holds_back_does_not_grow() {
    // The receiver's 20 segments are below the path's 25: the sender never fills cwnd. As
    // Linux (tcp_is_cwnd_limited), slow start stops at twice the flight and congestion
    // avoidance does not grow at all, for Reno and CUBIC alike.
    for cc in [
        Box::new(NewReno::new(1000, NewRenoConfig::default()).unwrap()) as Box<dyn Controller>,
        Box::new(Cubic::new(1000, CubicConfig::default()).unwrap()),
    ] {
        let name = cc.name();
        let cfg = TcpConfig {
            rcv_buf: 20 * MSS,
            rcv_autotune: false,
            ..thousand_byte_segments()
        };
        let mut h = path(cfg, None, cc, "none");
        h.run_clean(5 * SEC);
        let w = h.a.controller().unwrap().window();
        assert!(w <= 41 * MSS, "{name}: window {w}");
        assert!(w >= 20 * MSS, "{name}: window {w}");
        // The transfer still runs at the receiver's window: 20 segments per 20 ms RTT.
        let rate = h.b.bytes_delivered() as f64 * 8.0 / 5.0;
        assert!(rate > 7.0e6, "{name}: {rate} bit/s");
    }
}

/// One CUBIC flow into a one-BDP DropTail buffer (50 Mb/s, 24 ms, 100 packets), 3 s:
/// (drops, goodput).
fn cubic_into_one_bdp(hystart: &str) -> (f64, f64) {
    let text = format!(
        r#"
duration = "3s"
[topology]
kind = "dumbbell"
left = 1
right = 1
access = {{ rate = "1Gbps", delay = "1ms" }}
bottleneck = {{ rate = "50Mbps", delay = "10ms" }}
bottleneck_queue = {{ kind = "droptail", limit = 100 }}
[tcp]
mss = 1448
[[flows]]
src = "l0"
dst = "r0"
cc = "cubic"
cc_params = {{ hystart = "{hystart}" }}
"#
    );
    let out = ecnlab::scenario::run_toml(&text).unwrap();
    (
        out.port_value("rl->rr", "dropped_pkts").unwrap(),
        out.flows.f64("goodput_bps", 0).unwrap(),
    )
}

#[test]
fn linux_hystart_leaves_slow_start_before_the_buffer_overflows() {
    // Linux 6.18 CUBIC on this path (the same scenario through `ecnlab emulate`): slow start
    // ends at about 135 segments (the ACK train of a round passes half the minimum RTT),
    // then the 5 %-per-RTT clamp (W_max still unknown) fills the 100-packet buffer in about a
    // second and the first loss costs 11 packets; goodput 46.6 Mb/s in 3 s. Without HyStart
    // slow start overshoots the buffer by about a window.
    let (drops, goodput) = cubic_into_one_bdp("linux");
    assert!((5.0..=20.0).contains(&drops), "{drops}");
    assert!(goodput > 44e6, "{goodput}");
    let (drops_off, _) = cubic_into_one_bdp("off");
    assert!(drops_off > 50.0, "{drops_off}");
}

/// A NewReno transfer of `segments` full segments over 10 Mbit/s and 20 ms RTT, with a probe
/// on the controller; `drop(h, dir, p, n)` decides per packet, `n` counting the packet's
/// earlier transmissions (data) or 0 (ACKs).
fn tail_run(
    cfg: TcpConfig,
    segments: Option<u64>,
    until: Time,
    drop: &dyn Fn(&Harness, Dir, &Packet, usize) -> bool,
) -> (Harness, Vec<Call>, Vec<(Time, Time)>) {
    let (probe, log) = Probe::new(NewReno::new(1000, NewRenoConfig::default()).unwrap());
    let mut h = path(cfg, segments.map(|n| n * MSS), Box::new(probe), "none");
    let mut times_sent = std::collections::HashMap::<u64, usize>::new();
    // (probe time, SRTT then) for every data packet sent while a probe timer was due now.
    let mut probes = Vec::new();
    h.run(until, &mut |h: &Harness, dir, p: &mut Packet| {
        let n = if dir == Dir::AtoB && p.payload_len > 0 {
            let c = times_sent.entry(h.rel_seq_a(p)).or_default();
            *c += 1;
            if h.a.loss_probes() as usize > probes.len() {
                probes.push((h.now, h.a.rtt().srtt()));
            }
            *c - 1
        } else {
            0
        };
        !drop(h, dir, p, n)
    });
    let calls = log.borrow().clone();
    (h, calls, probes)
}

#[test]
fn a_lost_tail_is_found_by_a_probe_not_by_the_timeout() {
    // The last three of 100 segments are lost once. The probe resends the last one after
    // 2·SRTT + 2 ms of silence; its SACK lets RACK find the other two after its reordering
    // window, and fast recovery repairs them: no timeout.
    let tail = |h: &Harness, dir, p: &Packet, n: usize| {
        dir == Dir::AtoB && n == 0 && p.payload_len > 0 && h.rel_seq_a(p) >= seg(98)
    };
    let (h, calls, probes) = tail_run(thousand_byte_segments(), Some(100), 3 * SEC, &tail);
    assert!(h.a.state() == ecnlab::tcp::State::Established && h.b.bytes_delivered() == 100 * MSS);
    assert_eq!(h.a.timeouts(), 0);
    assert_eq!(h.a.loss_probes(), 1);
    assert_eq!(h.a.retransmissions(), 3);
    assert_eq!(sends(&h, 100).len(), 2);
    // The probe went 2·SRTT + 2 ms after the last ACK that advanced SND.UNA.
    let (t_probe, srtt) = probes[0];
    let last_ack = h
        .arrived
        .iter()
        .filter(|t| t.dir == Dir::BtoA && t.time < t_probe)
        .map(|t| t.time)
        .max()
        .unwrap();
    assert_eq!(t_probe - last_ack, 2 * srtt + 2 * MS);
    // 98 and 99 were sent long before the probe, so its SACK makes RACK declare them lost
    // at once (their reordering window has long passed): both go again on that ACK.
    let t_sack = h
        .arrived
        .iter()
        .find(|t| t.dir == Dir::BtoA && t.time > t_probe && t.pkt.tcp().unwrap().sack_count > 0)
        .unwrap()
        .time;
    assert_eq!((sends(&h, 98)[1], sends(&h, 99)[1]), (t_sack, t_sack));
    // One reduction, by fast recovery, as RACK found the loss.
    let losses = calls.iter().filter(|c| matches!(c, Call::Loss(..))).count();
    assert_eq!(losses, 1);

    // Without the probe the timer repairs the tail, 200 ms and more later.
    let cfg = TcpConfig {
        tlp: false,
        ..thousand_byte_segments()
    };
    let (h2, _, _) = tail_run(cfg, Some(100), 3 * SEC, &tail);
    assert_eq!(h2.a.timeouts(), 1);
    assert_eq!(h2.a.loss_probes(), 0);
    let last_arrival = |h: &Harness| {
        h.arrived
            .iter()
            .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0)
            .map(|t| t.time)
            .max()
            .unwrap()
    };
    let gain = last_arrival(&h2) - last_arrival(&h);
    assert!(gain > 150 * MS, "the probe saved {gain} ps");
}

#[test]
fn a_probe_answered_by_the_original_reduces_nothing() {
    // The window-limited transfer's packets sent in [1 s, 1.01 s) take 60 ms longer: the
    // probe fires during the silence and resends the last segment, which had not been lost.
    // The duplicate's ACK tells the sender so.
    let (h, calls, window_before) =
        delay_spike(thousand_byte_segments(), 70 * MS, 10 * MS, 2 * SEC);
    assert_eq!(h.a.loss_probes(), 1);
    assert_eq!(h.a.retransmissions(), 1);
    assert_eq!(h.a.timeouts(), 0);
    assert!(!calls.iter().any(|c| matches!(c, Call::Loss(..))));
    assert!(h.a.controller().unwrap().window() >= window_before);
}

#[test]
fn a_probe_that_repairs_a_loss_reduces_once_at_once() {
    // Window-limited to 20 segments: segment 60 is lost and so are the ACKs of 41..59, so
    // the sender hears nothing after sending 60. The probe resends 60, the ACK that follows
    // covers everything sent, and the first ACK beyond it shows the probe repaired a loss:
    // one reduction (Linux: CWR entered and left at once), no recovery, no timeout.
    let cfg = TcpConfig {
        rcv_buf: 20 * MSS,
        rcv_autotune: false,
        ..thousand_byte_segments()
    };
    let lose = |h: &Harness, dir, p: &Packet, n: usize| match dir {
        Dir::AtoB => n == 0 && p.payload_len > 0 && h.rel_seq_a(p) == seg(60),
        Dir::BtoA => {
            let a = h.rel_ack_b(p);
            a > seg(41) && a <= seg(60)
        }
    };
    let (h, calls, _) = tail_run(cfg, None, 2 * SEC, &lose);
    assert_eq!(h.a.loss_probes(), 1);
    assert_eq!(h.a.timeouts(), 0);
    assert_eq!(h.a.fast_retransmits(), 0);
    assert_eq!(sends(&h, 60).len(), 2);
    let losses: Vec<usize> = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c, Call::Loss(..)))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(losses.len(), 1);
    assert!(matches!(calls[losses[0] + 1], Call::RecoveryEnd(_)));
}

#[test]
fn a_dsack_for_the_probe_says_nothing_was_lost() {
    // As above, but segment 60 arrives: only the ACKs of 41..60 are lost (those sent before
    // the probe). The probe's copy
    // of 60 is a duplicate, and the receiver's D-SACK for it tells the sender that nothing
    // was lost, although that ACK is the first to advance SND.UNA. Without D-SACK the sender
    // cannot tell, and reduces once (as Linux with `tcp_dsack = 0`).
    let lose = |h: &Harness, dir, p: &Packet, _: usize| {
        dir == Dir::BtoA && {
            let a = h.rel_ack_b(p);
            a > seg(41) && a <= seg(61) && h.a.loss_probes() == 0
        }
    };
    for dsack in [true, false] {
        let cfg = TcpConfig {
            rcv_buf: 20 * MSS,
            rcv_autotune: false,
            dsack,
            ..thousand_byte_segments()
        };
        let (h, calls, _) = tail_run(cfg, None, 2 * SEC, &lose);
        assert_eq!(h.a.loss_probes(), 1);
        assert_eq!(h.a.timeouts(), 0);
        assert_eq!(sends(&h, 60).len(), 2);
        let losses = calls.iter().filter(|c| matches!(c, Call::Loss(..))).count();
        assert_eq!(losses, !dsack as usize, "dsack = {dsack}");
    }
}

#[test]
fn a_hole_with_two_segments_after_it_waits_for_racks_reordering_window() {
    // Segment 98 of 100 is lost once: 99 and 100 arrive and are SACKed, two segments, below
    // the duplicate threshold. RACK holds 98 for min(min_rtt/4, SRTT) after the RTT of the
    // last delivery, then (Linux's timer slack: + 2 ms) declares it lost and fast recovery
    // resends it — no probe, no timeout.
    let hole = |h: &Harness, dir, p: &Packet, n: usize| {
        dir == Dir::AtoB && n == 0 && p.payload_len > 0 && h.rel_seq_a(p) == seg(98)
    };
    let (h, calls, _) = tail_run(thousand_byte_segments(), Some(100), 3 * SEC, &hole);
    assert_eq!(h.b.bytes_delivered(), 100 * MSS);
    assert_eq!(
        (h.a.timeouts(), h.a.loss_probes(), h.a.retransmissions()),
        (0, 0, 1)
    );
    let sack_of_100 = h
        .arrived
        .iter()
        .filter(|t| t.dir == Dir::BtoA && t.pkt.tcp().unwrap().sack_count > 0)
        .find(|t| {
            let tcp = t.pkt.tcp().unwrap();
            tcp.sack_blocks()
                .iter()
                .any(|&(_, r)| r.wrapping_sub(0xFFFF_F000) as u64 >= seg(100) + MSS)
        })
        .unwrap()
        .time;
    let rack_rtt = sack_of_100 - sends(&h, 100)[0];
    let reo_wnd = (h.a.rtt().min_rtt() / 4).min(h.a.rtt().srtt());
    assert_eq!(
        sends(&h, 98)[1],
        sends(&h, 98)[0] + rack_rtt + reo_wnd + 2 * MS
    );
    assert_eq!(
        calls.iter().filter(|c| matches!(c, Call::Loss(..))).count(),
        1
    );

    // RFC 6675's rules alone (RACK off) cannot count three SACKed segments here: the probe
    // resends 100, which adds no new SACK, and the timer repairs the hole.
    let cfg = TcpConfig {
        rack: false,
        ..thousand_byte_segments()
    };
    let (h2, _, _) = tail_run(cfg, Some(100), 3 * SEC, &hole);
    assert_eq!(h2.a.timeouts(), 1);
}

#[test]
fn an_autotuned_receiver_opens_its_window_as_data_is_read() {
    // Linux's receive-buffer autotuning: the first ACKs offer about the handshake's 64 KB,
    // the window then follows what is read per round trip, and the sender never has more
    // in flight than the window it was offered.
    let cfg = TcpConfig {
        rcv_autotune: true,
        ..thousand_byte_segments()
    };
    let cc = NewReno::new(1000, NewRenoConfig::default()).unwrap();
    let mut h = path(cfg, None, Box::new(cc), "none");
    let mut offered = Vec::new();
    let mut worst_excess = i64::MIN;
    let mut wnd = u64::MAX;
    h.run(3 * SEC, &mut |h: &Harness, dir, p: &mut Packet| {
        let t = p.tcp().unwrap();
        match dir {
            Dir::BtoA if !t.flags.has(ecnlab::wire::TcpFlags::SYN) => {
                // The harness's receiver scales by 2^10 (32 MiB buffer).
                wnd = (t.window as u64) << 10;
                offered.push((h.now, wnd, h.rel_ack_b(p)));
            }
            Dir::AtoB if p.payload_len > 0 && wnd != u64::MAX => {
                let end = h.rel_seq_a(p) + p.payload_len as u64;
                let acked = offered.last().map_or(1, |o| o.2);
                worst_excess = worst_excess.max(end as i64 - (acked + wnd) as i64);
            }
            _ => {}
        }
        true
    });
    // The first ACK (quick-ACK mode) covers one segment: 65535 + 2 MSS, in 1 KiB units.
    let first = offered[0].1;
    assert_eq!(first, (65_535 + 2 * MSS) >> 10 << 10);
    let last = offered.last().unwrap().1;
    // Above the initial buffer's 131072 × 0.62 = 81264: it grew with what was read.
    assert!(last > 100_000, "window after 3 s: {last}");
    assert!(
        worst_excess <= 0,
        "sent {worst_excess} bytes beyond the offered window"
    );
}

/// Segments acknowledged by each pure ACK of a 60-segment transfer.
fn acked_segments(cfg: TcpConfig) -> Vec<u64> {
    let cc = NewReno::new(1000, NewRenoConfig::default()).unwrap();
    let mut h = path(cfg, Some(60 * MSS), Box::new(cc), "none");
    let mut acks = Vec::new();
    h.run(3 * SEC, &mut |h: &Harness, dir, p: &mut Packet| {
        let t = p.tcp().unwrap();
        if dir == Dir::BtoA && p.payload_len == 0 && !t.flags.has(ecnlab::wire::TcpFlags::SYN) {
            let segs = (h.rel_ack_b(p) - 1) / MSS;
            if acks.last() != Some(&segs) && segs > 0 {
                acks.push(segs);
            }
        }
        true
    });
    acks
}

#[test]
fn quick_acks_for_the_first_segments_then_one_ack_per_two() {
    // Linux's tcp_incr_quickack on the first data segment: half the offered window in
    // segments, at most 16, are acknowledged one by one; then every second segment.
    let quick = acked_segments(thousand_byte_segments());
    let mut want: Vec<u64> = (1..=16).collect();
    want.extend((18..=60).step_by(2));
    assert_eq!(quick, want);
    // Without it, every second segment from the start (RFC 5681).
    let plain = acked_segments(TcpConfig {
        quickack: false,
        ..thousand_byte_segments()
    });
    assert_eq!(plain, (2..=60).step_by(2).collect::<Vec<_>>());
    // A 6000-byte window: 6000 / (2 × 1000) = 3 quick ACKs.
    let small = acked_segments(TcpConfig {
        rcv_autotune: false,
        rcv_buf: 6000,
        ..thousand_byte_segments()
    });
    assert_eq!(&small[..4], &[1, 2, 3, 5]);
}

/// Out-of-order arrivals at `b` while segment 30 is missing, and `b`'s ACKs meanwhile.
fn acks_while_a_hole_is_open(cfg: TcpConfig) -> (Vec<Time>, Vec<Time>) {
    let cc = NewReno::new(1000, NewRenoConfig::default()).unwrap();
    let mut h = path(cfg, Some(200 * MSS), Box::new(cc), "none");
    let mut dropped = false;
    h.run(3 * SEC, &mut |h: &Harness, dir, p: &mut Packet| {
        let first = dir == Dir::AtoB && p.payload_len > 0 && h.rel_seq_a(p) == seg(30);
        let drop = first && !dropped;
        dropped |= first;
        !drop
    });
    let refill = h
        .arrived
        .iter()
        .find(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0 && h.rel_seq_a(&t.pkt) == seg(30))
        .unwrap()
        .time;
    let ooo: Vec<Time> = h
        .arrived
        .iter()
        .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0 && t.time < refill)
        .filter(|t| h.rel_seq_a(&t.pkt) > seg(30))
        .map(|t| t.time)
        .collect();
    let acks: Vec<Time> = h
        .sent
        .iter()
        .filter(|t| t.dir == Dir::BtoA && t.time < refill && h.rel_ack_b(&t.pkt) == seg(30))
        .map(|t| t.time)
        .collect();
    (ooo, acks)
}

#[test]
fn sack_compression_acknowledges_three_out_of_order_segments_then_one_per_millisecond() {
    // Linux's __tcp_ack_snd_check: at one rcv_nxt the first three out-of-order segments are
    // acknowledged at once (the sender's duplicate threshold); later ones wait for the
    // compression timer, min(1 ms, RTT/20) = 1 ms on this 20 ms path, which sends one ACK
    // for all withheld. Segments arrive every 0.832 ms (1040 bytes at 10 Mb/s), so each
    // later ACK covers two.
    let (ooo, acks) = acks_while_a_hole_is_open(thousand_byte_segments());
    assert!(ooo.len() > 15, "{} out-of-order arrivals", ooo.len());
    assert_eq!(&acks[..3], &ooo[..3]);
    let mut withheld = ooo[3..].iter().peekable();
    for &ack in &acks[3..] {
        let first = *withheld.next().expect("an ACK with nothing withheld");
        assert_eq!(ack, first + MS);
        while withheld.next_if(|&&t| t <= ack).is_some() {}
    }
    assert!(withheld
        .next()
        .is_none_or(|&t| t + MS > *ooo.last().unwrap()));
    assert!(
        acks.len() < 3 + ooo.len() / 2 + 2,
        "{} ACKs for {} segments",
        acks.len(),
        ooo.len()
    );
    // Without compression (RFC 5681 §4.2, ns-3) every one is acknowledged at once.
    let (ooo, acks) = acks_while_a_hole_is_open(TcpConfig {
        sack_compress_max: 0,
        ..thousand_byte_segments()
    });
    assert_eq!(acks, ooo);
}

/// Sizes of the groups of data segments `a` sends at one instant after 1 s, with a window of
/// 200 segments on a 100 Mb/s path of 20 ms (BDP 240 segments: no queue).
fn send_bursts(cfg: TcpConfig) -> Vec<usize> {
    let mut h = path(cfg, None, Box::new(FixedWindow(200 * MSS)), "none");
    h.rate_ab = 100_000_000;
    h.run_clean(2 * SEC);
    let times: Vec<Time> = h
        .sent
        .iter()
        .filter(|t| t.dir == Dir::AtoB && t.pkt.payload_len > 0 && t.time > SEC)
        .map(|t| t.time)
        .collect();
    times.chunk_by(|a, b| a == b).map(|g| g.len()).collect()
}

#[test]
fn tso_deferral_sends_what_a_millisecond_of_acks_frees_at_once() {
    // Linux's tcp_tso_should_defer: the pacing rate Linux computes (2 × 200 segments per
    // 20 ms, slow start's ratio, the window being below half of ssthresh) makes frames of
    // 20 MB/s >> 10 = 19 531 bytes, 19 segments. A delayed ACK frees 2 — below one frame
    // and a third of the window — while the previous frame left within 1 ms and the next
    // ACK is due at once, so the sender waits; the first ACK more than 1 ms after the last
    // frame (ACKs every 2 × 83.2 µs: the 7th) lets out the 14 segments freed by then.
    let mut bursts = send_bursts(thousand_byte_segments());
    bursts.sort_unstable();
    assert_eq!(
        bursts[bursts.len() / 2],
        14,
        "{:?}",
        &bursts[bursts.len() / 2..][..20]
    );
    assert!(
        *bursts.last().unwrap() <= 19,
        "{:?}",
        &bursts[bursts.len() - 5..]
    );
    // Without it, each ACK's two segments go at once.
    let mut plain = send_bursts(TcpConfig {
        tso_defer: false,
        ..thousand_byte_segments()
    });
    plain.sort_unstable();
    assert_eq!(plain[plain.len() / 2], 2);
}

#[test]
fn the_right_edge_of_the_offered_window_never_moves_back() {
    // Linux's tcp_select_window: data held beyond a hole uses up the buffer, so the free
    // space shrinks — here the buffer (200 000 bytes, a window clamp of 124 000) cannot grow
    // to hold it — but the right edge of the window offered never moves back: the window
    // shrinks by what the sender has already filled.
    let cc = NewReno::new(1000, NewRenoConfig::default()).unwrap();
    let cfg = TcpConfig {
        rcv_buf: 200_000,
        ..thousand_byte_segments()
    };
    let mut h = path(cfg, None, Box::new(cc), "none");
    let mut dropped = false;
    let mut shift = 0;
    // (ACK number, right edge) of every ACK of b after the handshake.
    let mut edges: Vec<(u64, u64)> = Vec::new();
    h.run(3 * SEC, &mut |h: &Harness, dir, p: &mut Packet| {
        let t = p.tcp().unwrap();
        if dir == Dir::BtoA && t.flags.has(ecnlab::wire::TcpFlags::SYN) {
            shift = t.window_scale.unwrap_or(0);
        } else if dir == Dir::BtoA {
            let ack = h.rel_ack_b(p);
            edges.push((ack, ack + ((t.window as u64) << shift)));
        }
        let first = dir == Dir::AtoB && p.payload_len > 0 && h.rel_seq_a(p) == seg(300);
        let drop = first && !dropped;
        dropped |= first;
        !drop
    });
    let during: Vec<u64> = edges
        .iter()
        .filter(|e| e.0 == seg(300))
        .map(|e| e.1 - e.0)
        .collect();
    assert!(
        during.len() > 50,
        "{} ACKs while the hole was open",
        during.len()
    );
    // Over 50 segments held, the window offered stays where its first edge put it.
    assert!(during.iter().all(|&w| w == during[0]), "{during:?}");
    assert!(
        edges.windows(2).all(|w| w[1].1 >= w[0].1),
        "a right edge moved back"
    );
}
