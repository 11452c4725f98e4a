//! The cumulative ACK that ends a retransmission timeout's repair, through a real connection,
//! for the load-factor family's window laws (VCP's, which UCP, MLCP and BMCC share, and
//! HFCC's own sender).
//!
//! Without SACK, a timeout leads to go-back-N: the retransmission of the hole is answered by
//! one cumulative ACK covering everything the receiver held beyond it, many segments at once.
//! A law given per RTT and applied per acknowledged segment would take that whole window as
//! growth (the defect that sent a rival's window from 1 to 5 861 segments in half a second);
//! each scheme's `max_segments_per_ack` bounds it. The unit tests call the controllers
//! directly; this checks that the connection's ACK reaches them the same way.

use ecnlab::cc::{AckEvent, Controller, Signal};
use ecnlab::packet::Packet;
use ecnlab::schemes::hfcc::{Hfcc, HfccConfig};
use ecnlab::schemes::vcp::{Vcp, VcpCodec, VcpConfig};
use ecnlab::tcp::testing::{thousand_byte_segments, Dir, Harness};
use ecnlab::tcp::TcpConfig;
use ecnlab::time::{Time, MS, SEC};
use std::cell::RefCell;
use std::rc::Rc;

const MSS: u64 = 1000;

/// One ACK as the controller saw it: bytes acknowledged, window before and after, and
/// whether a timeout came before it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Step {
    acked: u64,
    before: u64,
    after: u64,
    after_rto: bool,
}

/// Records the window around every ACK.
struct Watch {
    inner: Box<dyn Controller>,
    rto_seen: bool,
    log: Rc<RefCell<Vec<Step>>>,
}

impl Controller for Watch {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn set_initial_window(&mut self, bytes: u64) {
        self.inner.set_initial_window(bytes)
    }
    fn on_ack(&mut self, ev: &AckEvent) {
        let before = self.inner.window();
        self.inner.on_ack(ev);
        self.log.borrow_mut().push(Step {
            acked: ev.acked_bytes,
            before,
            after: self.inner.window(),
            after_rto: self.rto_seen,
        });
    }
    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        self.inner.on_signal(ev, signal)
    }
    fn on_loss(&mut self, now: Time, bytes_in_flight: u64) {
        self.inner.on_loss(now, bytes_in_flight)
    }
    fn on_recovery_end(&mut self, now: Time) {
        self.inner.on_recovery_end(now)
    }
    fn on_rto(&mut self, now: Time, bytes_in_flight: u64) {
        self.rto_seen = true;
        self.inner.on_rto(now, bytes_in_flight)
    }
    fn on_spurious_timeout(&mut self, now: Time) {
        self.inner.on_spurious_timeout(now)
    }
    fn on_send(&mut self, now: Time, bytes: u64, bytes_in_flight: u64) {
        self.inner.on_send(now, bytes, bytes_in_flight)
    }
    fn window(&self) -> u64 {
        self.inner.window()
    }
    fn ssthresh(&self) -> u64 {
        self.inner.ssthresh()
    }
    fn pacing_rate(&self) -> Option<f64> {
        self.inner.pacing_rate()
    }
    fn cwr_state(&self) -> bool {
        self.inner.cwr_state()
    }
}

/// An unlimited transfer without SACK over a 10 Mb/s, 20 ms RTT path, no router (the senders
/// act at their default level), in which segment 61's original and its fast retransmission are
/// lost: the timer repairs it. Returns every ACK the controller saw and the timeouts.
fn repaired_by_the_timer(cc: Box<dyn Controller>, hfcc_codec: bool) -> (Vec<Step>, u64) {
    let cfg = TcpConfig {
        sack: false,
        delayed_ack: false,
        rack: false,
        rcv_autotune: false,
        ..thousand_byte_segments()
    };
    let log = Rc::new(RefCell::new(Vec::new()));
    let watch = Watch {
        inner: cc,
        rto_seen: false,
        log: log.clone(),
    };
    let codec = || {
        Box::new(if hfcc_codec {
            VcpCodec::hfcc()
        } else {
            VcpCodec::new()
        })
    };
    let mut h = Harness::new(cfg, None, Box::new(watch), codec(), codec(), 10 * MS, false);
    h.rate_ab = 10_000_000;
    let lost = 1 + 60 * MSS;
    let mut drops = 0;
    h.run(4 * SEC, &mut |h: &Harness, dir, p: &mut Packet| {
        if dir == Dir::AtoB && p.payload_len > 0 && h.rel_seq_a(p) == lost && drops < 2 {
            drops += 1;
            return false;
        }
        true
    });
    let steps = log.borrow().clone();
    (steps, h.a.timeouts())
}

/// The repair ACK: the first after the timeout that acknowledges more than two segments.
fn repair(steps: &[Step]) -> (usize, Step) {
    steps
        .iter()
        .copied()
        .enumerate()
        .find(|(_, s)| s.after_rto && s.acked > 2 * MSS)
        .expect("a cumulative ACK after the timeout covering several segments")
}

/// Runs the same loss with the limit at 2 (the default) and with none, and compares the
/// repair ACK's growth: identical histories before it, growth in proportion 2 : segments.
fn check(build: &dyn Fn(f64) -> Box<dyn Controller>, hfcc_codec: bool) {
    let (limited, rtos) = repaired_by_the_timer(build(2.0), hfcc_codec);
    let (unlimited, _) = repaired_by_the_timer(build(f64::INFINITY), hfcc_codec);
    assert_eq!(
        rtos, 1,
        "the lost fast retransmission is repaired by the timer"
    );
    let (i, at) = repair(&limited);
    let (j, free) = repair(&unlimited);
    assert_eq!(i, j);
    assert_eq!(
        limited[..i],
        unlimited[..i],
        "no earlier ACK covered more than two segments"
    );
    assert_eq!((at.acked, at.before), (free.acked, free.before));
    let segments = at.acked / MSS;
    assert!(segments >= 20, "the repair ACK covers {segments} segments");
    let grown = at.after as f64 - at.before as f64;
    let grown_free = free.after as f64 - free.before as f64;
    assert!(grown > 0.0, "the window grows on the repair ACK ({at:?})");
    // The window is whole bytes: allow a byte of truncation on each side.
    let expected = grown_free * 2.0 / segments as f64;
    assert!(
        (grown - expected).abs() <= 2.0,
        "limited growth {grown} B, unlimited {grown_free} B over {segments} segments"
    );
}

#[test]
fn vcp_counts_a_timeouts_repair_ack_for_two_segments() {
    check(
        &|max| {
            let cfg = VcpConfig {
                max_segments_per_ack: max,
                ..VcpConfig::default()
            };
            Box::new(Vcp::new(cfg, MSS as u32).unwrap())
        },
        false,
    );
}

#[test]
fn hfcc_counts_a_timeouts_repair_ack_for_two_segments() {
    // The rapid increase's per-segment step only: its bandwidth term is checked below.
    check(
        &|max| {
            let cfg = HfccConfig {
                max_segments_per_ack: max,
                ri_bandwidth: false,
                ..HfccConfig::default()
            };
            Box::new(Hfcc::new(cfg, MSS as u32).unwrap())
        },
        true,
    );
}

/// HFCC's rapid increase also sets the window to min RTT × the bandwidth estimate (eqs. 6–7,
/// TCP-Jersey's estimator over acknowledged bytes), and the repair ACK's bytes enter that
/// estimate in full: the limit does not apply to it (declared in hfcc/mod.rs). What bounds the
/// jump is the estimator's memory: here it stays under the path's 25-segment BDP.
#[test]
fn hfccs_bandwidth_term_takes_the_repair_ack_whole_and_stays_under_the_bdp() {
    let build = |max| -> Box<dyn Controller> {
        let cfg = HfccConfig {
            max_segments_per_ack: max,
            ..HfccConfig::default()
        };
        Box::new(Hfcc::new(cfg, MSS as u32).unwrap())
    };
    let (limited, _) = repaired_by_the_timer(build(2.0), true);
    let (unlimited, _) = repaired_by_the_timer(build(f64::INFINITY), true);
    let (_, at) = repair(&limited);
    let (_, free) = repair(&unlimited);
    assert_eq!(
        at, free,
        "the bandwidth term sets the window whatever the limit"
    );
    let bdp = 10_000_000 / 8 * 20 * MS / SEC;
    assert!(
        at.after > at.before + 4 * MSS && at.after < bdp,
        "{at:?}, BDP {bdp} B"
    );
}
