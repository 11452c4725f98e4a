//! DCTCP (RFC 8257): the sender estimates the fraction of its bytes that were CE-marked,
//! `α ← (1 − g)·α + g·F` once per observation window (one window of data, §3.3), and on marks
//! cuts the window by `α/2` instead of half, at most once per window of data. Growth, loss
//! recovery and timeouts are NewReno's ([`super::newreno`]), as §3.5 requires for losses.
//!
//! Readings:
//! - The counts come from [`Signal::Marked`] delivered with every ACK (the precise echo of
//!   §3.2); an ACK without a signal counts its bytes as unmarked. Classic [`Signal::Ecn`] is
//!   not DCTCP feedback and is ignored.
//! - Observation windows end when an ACK covers data sent after the previous window ended
//!   ([`super::round::RoundCounter`], the delivery-count form of §3.3's SND.NXT test); the ACK
//!   that ends a window counts in it, as in the RFC's step order.
//! - The reduction happens on the first marked ACK once the previous reduction's window has
//!   been acknowledged (RFC 3168's once per window, as Linux's CWR state), using α after this
//!   ACK's update: cwnd ← max(cwnd·(1 − α/2), 2·SMSS), ssthresh ← cwnd. Neither that ACK
//!   nor the later ACKs of the window grow it: the connection holds its CWR round (Linux's
//!   CWR state, [`Controller::cwr_state`]), and a loss in that round is not a second cut.
//! - α starts at `initial_alpha` = 1 (§3.3: conservative start); g = 1/16.

use super::newreno::{check_mss, CaIncrease, NewRenoConfig, ReduceFrom, RenoWindow};
use super::round::RoundCounter;
use super::{AckEvent, Controller, Signal};
use crate::time::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpConfig {
    /// EWMA gain of α.
    pub g: f64,
    pub initial_alpha: f64,
    /// Reno parameters (see [`NewRenoConfig`]).
    pub initial_window: Option<u32>,
    pub initial_ssthresh: Option<u64>,
    pub abc_limit: u32,
    pub abc_limit_after_rto: u32,
    pub ca_increase: CaIncrease,
    /// Base of the loss and timeout reductions.
    pub reduce_from: ReduceFrom,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        let r = NewRenoConfig::default();
        DctcpConfig {
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
            initial_window: r.initial_window,
            initial_ssthresh: r.initial_ssthresh,
            abc_limit: r.abc_limit,
            abc_limit_after_rto: r.abc_limit_after_rto,
            ca_increase: r.ca_increase,
            reduce_from: r.reduce_from,
        }
    }
}

impl DctcpConfig {
    fn reno(&self) -> NewRenoConfig {
        NewRenoConfig {
            initial_window: self.initial_window,
            initial_ssthresh: self.initial_ssthresh,
            abc_limit: self.abc_limit,
            abc_limit_after_rto: self.abc_limit_after_rto,
            ca_increase: self.ca_increase,
            reduce_from: self.reduce_from,
            // DCTCP's window only: its own timeout response is its controller's.
            rto_rule: Default::default(),
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("g: {} is outside (0, 1]", self.g));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(format!(
                "initial_alpha: {} is outside [0, 1]",
                self.initial_alpha
            ));
        }
        self.reno().validate()
    }
}

pub struct Dctcp {
    w: RenoWindow,
    g: f64,
    alpha: f64,
    reduce_from: ReduceFrom,
    rounds: RoundCounter,
    window_acked: u64,
    window_marked: u64,
    /// This ACK's signal, if one came (acked, marked).
    pending: Option<(u64, u64)>,
    /// No ECN reduction until an ACK covers data sent after this delivery count.
    cwr_until_delivered: Option<u64>,
    in_fast_recovery: bool,
    rto_without_progress: bool,
}

impl Dctcp {
    pub fn new(mss: u32, cfg: DctcpConfig) -> Result<Self, String> {
        check_mss(mss)?;
        cfg.validate()?;
        Ok(Dctcp {
            w: RenoWindow::new(mss, &cfg.reno()),
            g: cfg.g,
            alpha: cfg.initial_alpha,
            reduce_from: cfg.reduce_from,
            rounds: RoundCounter::default(),
            window_acked: 0,
            window_marked: 0,
            pending: None,
            cwr_until_delivered: None,
            in_fast_recovery: false,
            rto_without_progress: false,
        })
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    fn observe(&mut self, ev: &AckEvent, acked: u64, marked: u64) {
        self.window_acked += acked;
        self.window_marked += marked.min(acked);
        if self.rounds.on_ack(ev) && self.window_acked > 0 {
            let f = self.window_marked as f64 / self.window_acked as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.window_acked = 0;
            self.window_marked = 0;
        }
    }

    /// Applies the once-per-window ECN reduction; true if it happened.
    fn maybe_reduce(&mut self, ev: &AckEvent) -> bool {
        if let Some(until) = self.cwr_until_delivered {
            if ev.prior_delivered < until {
                return false;
            }
            self.cwr_until_delivered = None;
        }
        if self.in_fast_recovery || ev.in_cwnd_reduction {
            return false;
        }
        let cwnd = (self.w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
        self.w.reduce_to(cwnd);
        self.cwr_until_delivered = Some(ev.delivered);
        true
    }
}

impl Controller for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.w.set_cwnd(bytes);
    }

    fn on_signal(&mut self, _ev: &AckEvent, signal: Signal) {
        if let Signal::Marked {
            marked_bytes,
            acked_bytes,
        } = signal
        {
            // Summed, in case a signal ever comes with an ACK that `on_ack` does not see.
            let (a, m) = self.pending.unwrap_or((0, 0));
            self.pending = Some((a + acked_bytes, m + marked_bytes));
        }
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if ev.acked_bytes > 0 {
            self.rto_without_progress = false;
        }
        let (acked, marked) = self.pending.take().unwrap_or((ev.acked_bytes, 0));
        self.observe(ev, acked, marked);
        if marked > 0 && self.maybe_reduce(ev) {
            return;
        }
        if !self.in_fast_recovery && !ev.in_cwnd_reduction && !ev.cwnd_unused {
            self.w.grow(ev.acked_bytes);
        }
    }

    fn on_loss(&mut self, _now: Time, bytes_in_flight: u64) {
        if self.in_fast_recovery {
            return;
        }
        self.in_fast_recovery = true;
        let base = super::newreno::reduction_base(self.reduce_from, bytes_in_flight, self.w.cwnd);
        let s = self.w.halved(base);
        self.w.reduce_to(s);
    }

    fn on_recovery_end(&mut self, _now: Time) {
        if self.in_fast_recovery {
            self.in_fast_recovery = false;
            self.w.cwnd = self.w.ssthresh;
        }
    }

    fn on_rto(&mut self, _now: Time, bytes_in_flight: u64) {
        self.in_fast_recovery = false;
        let ssthresh = (!self.rto_without_progress).then(|| {
            let base =
                super::newreno::reduction_base(self.reduce_from, bytes_in_flight, self.w.cwnd);
            self.w.halved(base)
        });
        self.w.timeout(ssthresh);
        self.rto_without_progress = true;
    }

    fn window(&self) -> u64 {
        self.w.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }

    fn on_spurious_timeout(&mut self, _now: Time) {
        self.w.undo_timeout();
        self.rto_without_progress = false;
    }

    fn cwr_state(&self) -> bool {
        true
    }

    fn sample(&self, out: &mut crate::net::Samples) {
        out.push(("dctcp_alpha", self.alpha));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::AckClock;
    use crate::time::MS;

    const MSS: u64 = 1000;

    fn dctcp(iw: u32, ssthresh: Option<u64>) -> Dctcp {
        Dctcp::new(
            MSS as u32,
            DctcpConfig {
                initial_window: Some(iw),
                initial_ssthresh: ssthresh,
                ..Default::default()
            },
        )
        .unwrap()
    }

    /// Every ACK reports a fraction `f` of its bytes as marked.
    fn marking(f: f64) -> impl FnMut(&mut dyn Controller, &AckEvent) {
        move |cc, ev| {
            let marked = (ev.acked_bytes as f64 * f).round() as u64;
            cc.on_signal(
                ev,
                Signal::Marked {
                    marked_bytes: marked,
                    acked_bytes: ev.acked_bytes,
                },
            );
        }
    }

    #[test]
    fn alpha_follows_the_ewma_and_converges_to_the_marked_fraction() {
        let f = 0.25f64;
        let g = 1.0f64 / 16.0;
        let mut cc = dctcp(40, Some(40 * MSS));
        let mut clock = AckClock::new(0, 10 * MS, MSS);
        let mut each = marking(f);
        // The first ACK closes the first (empty-history) window: α = (1−g)·1 + g·f.
        let mut windows = 0;
        let mut alpha_after = Vec::new();
        for _ in 0..150 {
            clock.round(&mut cc, &mut each);
            windows += 1;
            alpha_after.push(cc.alpha());
        }
        // Closed form from α₀ = 1 with constant F: α_n = F + (1 − F)(1 − g)^n. Round r's
        // ACKs close window r (its first ACK), so after r rounds r windows have closed.
        for (r, &a) in alpha_after.iter().enumerate().take(20) {
            let n = (r + 1) as i32;
            let expect = f + (1.0 - f) * (1.0 - g).powi(n);
            assert!((a - expect).abs() < 0.02, "window {n}: α {a} vs {expect}");
        }
        let last = *alpha_after.last().unwrap();
        assert!(
            (last - f).abs() < 0.01 * f,
            "α {last} after {windows} windows"
        );
    }

    #[test]
    fn reduction_is_alpha_over_two_once_per_window() {
        let f = 0.1;
        let mut cc = dctcp(100, Some(100 * MSS));
        let mut clock = AckClock::new(0, 10 * MS, MSS);
        let mut each = marking(f);
        for _ in 0..100 {
            clock.round(&mut cc, &mut each);
        }
        let mut reductions = 0;
        let mut checked = 0;
        for _ in 0..20 {
            // One round trip by hand, to see each reduction as it happens.
            let mut in_round = 0;
            let window = cc.window();
            let n = window.div_ceil(MSS);
            let start_delivered = clock.delivered;
            for i in 0..n {
                clock.delivered += MSS;
                let ev = AckEvent {
                    now: clock.now + clock.rtt * (i + 1) / n,
                    acked_bytes: MSS,
                    rtt: Some(clock.rtt),
                    srtt: clock.rtt,
                    bytes_in_flight: window,
                    delivered: clock.delivered,
                    prior_delivered: start_delivered,
                    ..Default::default()
                };
                let before = cc.window();
                cc.on_signal(
                    &ev,
                    Signal::Marked {
                        marked_bytes: (MSS as f64 * f) as u64,
                        acked_bytes: MSS,
                    },
                );
                cc.on_ack(&ev);
                if cc.window() < before {
                    in_round += 1;
                    let expect = before as f64 * (1.0 - cc.alpha() / 2.0);
                    assert!((cc.window() as f64 - expect).abs() <= 1.0);
                    assert_eq!(cc.ssthresh(), cc.window());
                    checked += 1;
                }
            }
            clock.now += clock.rtt;
            assert!(in_round <= 1, "{in_round} reductions in one window");
            reductions += in_round;
        }
        assert!(
            reductions >= 19,
            "{reductions} reductions in 20 marked windows"
        );
        assert!(checked > 0);
        assert!((cc.alpha() - f).abs() < 0.01 * f);
        // Fixed point of +1 segment and ×(1 − α/2) per round trip: W = 2/α segments.
        let w = cc.window() as f64 / MSS as f64;
        assert!((w - 2.0 / f).abs() <= 1.5, "window {w} segments");
    }

    #[test]
    fn without_marks_it_grows_like_reno_and_alpha_decays() {
        let mut cc = dctcp(10, None);
        let mut clock = AckClock::new(0, 10 * MS, MSS);
        let mut each = marking(0.0);
        for r in 1..=4 {
            clock.round(&mut cc, &mut each);
            assert_eq!(cc.window(), (10 << r) * MSS);
        }
        let mut cc = dctcp(30, Some(30 * MSS));
        for r in 1..=10 {
            clock.round(&mut cc, &mut each);
            assert_eq!(cc.window(), (30 + r) * MSS);
            let expect = (15.0f64 / 16.0).powi(r as i32);
            assert!((cc.alpha() - expect).abs() < 1e-12);
        }
    }

    #[test]
    fn loss_and_timeout_are_newreno() {
        let mut cc = dctcp(40, None);
        cc.on_loss(0, 40 * MSS);
        assert_eq!(cc.window(), 20 * MSS);
        cc.on_recovery_end(0);
        assert_eq!(cc.window(), 20 * MSS);
        cc.on_rto(0, 20 * MSS);
        assert_eq!(cc.window(), MSS);
        assert_eq!(cc.ssthresh(), 10 * MSS);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = Dctcp::new(
            1000,
            DctcpConfig {
                g: 0.0,
                ..Default::default()
            },
        )
        .err()
        .unwrap();
        assert!(e.starts_with("g:"), "{e}");
        let e = Dctcp::new(
            1000,
            DctcpConfig {
                initial_alpha: 1.5,
                ..Default::default()
            },
        )
        .err()
        .unwrap();
        assert!(e.starts_with("initial_alpha"), "{e}");
    }
}
