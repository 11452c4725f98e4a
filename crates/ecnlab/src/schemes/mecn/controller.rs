//! MECN's sender: Reno (RFC 5681 growth, RFC 6582 loss response) with graded decreases —
//! incipient ×β1, moderate ×β2, loss ×β3 — at most one reduction per round, and a window cap.
//!
//! A *round* starts at a reduction and ends when a segment sent after it is acknowledged
//! (`AckEvent::prior_delivered` ≥ `delivered` at the reduction), which is RFC 3168's "once per
//! window of data". A loss detected within the round of an earlier reduction does not reduce
//! again (RFC 3168 §6.1.2) unless [`Escalation::TopUp`] is chosen.

use super::Escalation;
use crate::cc::{AckEvent, Controller, Signal};
use crate::time::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MecnRenoConfig {
    /// Window multiplier on incipient congestion (paper: −20 %).
    pub beta1: f64,
    /// Window multiplier on moderate congestion (paper: −40 %).
    pub beta2: f64,
    /// Multiplier of the flight size on loss (paper: −50 %).
    pub beta3: f64,
    /// Cap on the window in segments (the paper's runs: 25); `None` for no cap.
    pub max_window: Option<u32>,
    /// Initial window in segments (ns-2's `windowInit_`), unless the handshake sets one.
    pub initial_window: u32,
    /// A second, higher indication within a round: ignored, or lowers the window to its own
    /// target. Set the codec's `escalation` to the same value.
    pub escalation: Escalation,
}

impl Default for MecnRenoConfig {
    fn default() -> Self {
        MecnRenoConfig {
            beta1: 0.8,
            beta2: 0.6,
            beta3: 0.5,
            max_window: Some(25),
            initial_window: 2,
            escalation: Escalation::Ignore,
        }
    }
}

impl MecnRenoConfig {
    pub fn validate(&self) -> Result<(), String> {
        for (name, b) in [
            ("beta1", self.beta1),
            ("beta2", self.beta2),
            ("beta3", self.beta3),
        ] {
            if !(b > 0.0 && b < 1.0) {
                return Err(format!("{name}: {b} is outside (0, 1)"));
            }
        }
        if self.max_window == Some(0) {
            return Err("max_window: must be at least 1 segment".into());
        }
        if self.initial_window == 0 {
            return Err("initial_window: must be at least 1 segment".into());
        }
        Ok(())
    }
}

/// Indication levels, in increasing severity (index into the multipliers).
const INCIPIENT: usize = 1;
const MODERATE: usize = 2;
const LOSS: usize = 3;

#[derive(Clone, Copy, Debug)]
struct Round {
    /// `delivered` at the reduction: the round ends at an ACK of a segment sent after it.
    mark: u64,
    /// The window the round's first reduction started from.
    w0: f64,
    /// The most severe indication acted on in this round.
    level: usize,
}

pub struct MecnReno {
    cfg: MecnRenoConfig,
    mss: f64,
    /// In bytes, fractional so that per-ACK increments accumulate.
    cwnd: f64,
    ssthresh: f64,
    cap: f64,
    round: Option<Round>,
    /// From the latest ACK, for reductions not triggered by an ACK (loss, timeout).
    last_prior_delivered: u64,
    last_delivered: u64,
    /// Reductions made, by cause: [_, incipient, moderate, loss]; timeouts separately.
    pub reductions: [u64; 4],
    pub timeouts: u64,
}

impl MecnReno {
    pub fn new(cfg: MecnRenoConfig, mss: u32) -> Result<Self, String> {
        cfg.validate()?;
        if mss == 0 {
            return Err("mss: must be positive".into());
        }
        let mss = mss as f64;
        let cap = cfg.max_window.map_or(f64::INFINITY, |w| w as f64 * mss);
        Ok(MecnReno {
            cwnd: (cfg.initial_window as f64 * mss).min(cap),
            ssthresh: f64::INFINITY,
            cap,
            mss,
            cfg,
            round: None,
            last_prior_delivered: 0,
            last_delivered: 0,
            reductions: [0; 4],
            timeouts: 0,
        })
    }

    fn factor(&self, level: usize) -> f64 {
        match level {
            INCIPIENT => self.cfg.beta1,
            MODERATE => self.cfg.beta2,
            _ => self.cfg.beta3,
        }
    }

    /// Acts on an indication of severity `level`. `prior` tells whether the round of an
    /// earlier reduction is still open; `mark` starts a new round; `base` is the window the
    /// multiplier applies to.
    fn reduce(&mut self, level: usize, prior: u64, mark: u64, base: f64) {
        let floor = if level == LOSS {
            2.0 * self.mss
        } else {
            self.mss
        };
        let factor = self.factor(level);
        if let Some(r) = self.round.as_mut().filter(|r| prior < r.mark) {
            if self.cfg.escalation == Escalation::TopUp && level > r.level {
                let target = (r.w0 * factor).max(floor);
                r.level = level;
                self.cwnd = self.cwnd.min(target);
                self.ssthresh = self.cwnd;
                self.reductions[level] += 1;
            }
            return;
        }
        let target = (base * factor).max(floor);
        self.round = Some(Round {
            mark,
            w0: base,
            level,
        });
        self.cwnd = target.min(self.cap);
        self.ssthresh = self.cwnd;
        self.reductions[level] += 1;
    }
}

impl Controller for MecnReno {
    fn name(&self) -> &'static str {
        "mecn"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.cwnd = (bytes as f64).max(self.mss).min(self.cap);
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.last_prior_delivered = ev.prior_delivered;
        self.last_delivered = ev.delivered;
        if ev.in_recovery || ev.acked_bytes == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += (ev.acked_bytes as f64).min(self.mss);
        } else {
            self.cwnd += self.mss * self.mss / self.cwnd;
        }
        self.cwnd = self.cwnd.min(self.cap);
    }

    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        if ev.in_recovery {
            // Fast recovery already reduced for this window.
            return;
        }
        let level = match signal {
            Signal::Level(1) => INCIPIENT,
            Signal::Level(2) => MODERATE,
            _ => return,
        };
        let base = self.cwnd.min(self.cap);
        self.reduce(level, ev.prior_delivered, ev.delivered, base);
    }

    fn on_loss(&mut self, _now: Time, bytes_in_flight: u64) {
        let prior = self.last_prior_delivered;
        let mark = self.last_delivered;
        self.reduce(LOSS, prior, mark, bytes_in_flight as f64);
    }

    fn on_recovery_end(&mut self, _now: Time) {
        self.cwnd = self.ssthresh.min(self.cap);
    }

    fn on_rto(&mut self, _now: Time, bytes_in_flight: u64) {
        self.timeouts += 1;
        self.ssthresh = (bytes_in_flight as f64 * self.cfg.beta3).max(2.0 * self.mss);
        self.cwnd = self.mss;
        self.round = Some(Round {
            mark: self.last_delivered,
            w0: bytes_in_flight as f64,
            level: LOSS,
        });
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn ssthresh(&self) -> u64 {
        if self.ssthresh.is_finite() {
            self.ssthresh as u64
        } else {
            u64::MAX
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn cc(cfg: MecnRenoConfig) -> MecnReno {
        MecnReno::new(cfg, MSS as u32).unwrap()
    }

    /// An ACK of one segment; `prior` is `delivered` when the acknowledged segment was sent.
    fn ack(delivered: u64, prior: u64) -> AckEvent {
        AckEvent {
            acked_bytes: MSS,
            delivered,
            prior_delivered: prior,
            ..Default::default()
        }
    }

    fn segs(c: &MecnReno) -> f64 {
        c.cwnd / MSS as f64
    }

    #[test]
    fn window_after_each_signal() {
        let mut c = cc(MecnRenoConfig::default());
        c.set_initial_window(20 * MSS);
        c.ssthresh = 20.0 * MSS as f64; // congestion avoidance
                                        // Incipient: ×0.8.
        c.on_signal(&ack(100_000, 90_000), Signal::Level(1));
        assert!((segs(&c) - 16.0).abs() < 1e-9);
        assert_eq!(c.ssthresh(), 16 * MSS);
        // Next round (a segment sent after the reduction is acknowledged): moderate ×0.6.
        c.on_signal(&ack(110_000, 100_000), Signal::Level(2));
        assert!((segs(&c) - 9.6).abs() < 1e-9);
        // Next round: loss halves the flight size (RFC 5681), never below 2 segments.
        c.on_ack(&ack(120_000, 110_000));
        c.on_loss(0, 9 * MSS);
        assert_eq!(c.window(), 4500);
        c.on_recovery_end(0);
        assert_eq!(c.window(), 4500);
        c.on_ack(&ack(130_000, 125_000));
        c.on_loss(0, 3 * MSS);
        assert_eq!(c.window(), 2 * MSS);
        assert_eq!(c.reductions, [0, 1, 1, 2]);
        // Timeout: one segment.
        c.on_rto(0, 4 * MSS);
        assert_eq!(c.window(), MSS);
        assert_eq!(c.ssthresh(), 2 * MSS);
    }

    #[test]
    fn one_reduction_per_round() {
        let mut c = cc(MecnRenoConfig::default());
        c.set_initial_window(20 * MSS);
        c.ssthresh = 20.0 * MSS as f64;
        c.on_signal(&ack(100_000, 90_000), Signal::Level(1));
        assert!((segs(&c) - 16.0).abs() < 1e-9);
        // ACKs of segments sent before the reduction: still the same round.
        c.on_signal(&ack(101_000, 99_000), Signal::Level(1));
        c.on_signal(&ack(102_000, 99_500), Signal::Level(2));
        c.on_ack(&ack(103_000, 99_900));
        let w = c.cwnd;
        c.on_loss(0, 16 * MSS);
        assert_eq!(c.cwnd, w, "a loss in the same round must not reduce again");
        // Signals during fast recovery are ignored.
        let mut in_rec = ack(200_000, 150_000);
        in_rec.in_recovery = true;
        c.on_signal(&in_rec, Signal::Level(2));
        assert_eq!(c.cwnd, w);
        // The first ACK of a segment sent after the reduction opens the next round.
        c.on_signal(&ack(104_000, 100_000), Signal::Level(1));
        assert!((c.cwnd - w * 0.8).abs() < 1e-6);
        assert_eq!(c.reductions, [0, 2, 0, 0]);
    }

    #[test]
    fn escalation_top_up_lowers_to_the_higher_level_target() {
        let mut c = cc(MecnRenoConfig {
            escalation: Escalation::TopUp,
            ..Default::default()
        });
        c.set_initial_window(20 * MSS);
        c.ssthresh = 20.0 * MSS as f64;
        c.on_signal(&ack(100_000, 90_000), Signal::Level(1));
        assert!((segs(&c) - 16.0).abs() < 1e-9);
        // Moderate within the round: to 0.6 × 20, not 0.6 × 16.
        c.on_signal(&ack(101_000, 95_000), Signal::Level(2));
        assert!((segs(&c) - 12.0).abs() < 1e-9);
        // Incipient within the round: nothing.
        c.on_signal(&ack(102_000, 96_000), Signal::Level(1));
        assert!((segs(&c) - 12.0).abs() < 1e-9);
        // A loss within the round: to 0.5 × 20.
        c.on_ack(&ack(103_000, 97_000));
        c.on_loss(0, 12 * MSS);
        assert!((segs(&c) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn growth_and_window_cap() {
        let mut c = cc(MecnRenoConfig::default());
        assert_eq!(c.window(), 2 * MSS);
        // Slow start: one segment per ACK of a segment, up to the 25-segment cap.
        let mut d = 0;
        for i in 0..23 {
            d += MSS;
            c.on_ack(&ack(d, d - MSS));
            assert_eq!(c.window(), (3 + i) * MSS);
        }
        for _ in 0..100 {
            d += MSS;
            c.on_ack(&ack(d, d - MSS));
        }
        assert_eq!(c.window(), 25 * MSS);
        // Reductions start from the capped window.
        c.on_signal(&ack(d + MSS, d), Signal::Level(1));
        assert_eq!(c.window(), 20 * MSS);
        // Congestion avoidance: MSS²/cwnd per ACK.
        d += 2 * MSS;
        c.on_ack(&ack(d, d - MSS));
        assert!((c.cwnd - (20_000.0 + 1000.0 * 1000.0 / 20_000.0)).abs() < 1e-9);
        // Uncapped: the window grows past 25 segments.
        let mut u = cc(MecnRenoConfig {
            max_window: None,
            ..Default::default()
        });
        for i in 1..=40 {
            u.on_ack(&ack(i * MSS, (i - 1) * MSS));
        }
        assert_eq!(u.window(), 42 * MSS);
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |cfg| MecnReno::new(cfg, 1000).err().unwrap();
        assert!(err(MecnRenoConfig {
            beta2: 1.2,
            ..Default::default()
        })
        .starts_with("beta2"));
        assert!(err(MecnRenoConfig {
            max_window: Some(0),
            ..Default::default()
        })
        .starts_with("max_window"));
        assert!(MecnReno::new(MecnRenoConfig::default(), 0).is_err());
    }
}
