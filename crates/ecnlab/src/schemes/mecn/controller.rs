//! MECN's sender: NewReno's window ([`RenoWindow`]: RFC 5681 growth with byte counting, the
//! window side of RFC 6582 fast recovery, RFC 5681 timeouts) with graded decreases —
//! incipient ×β1, moderate ×β2, loss ×β3 — at most one reduction per round, and a window cap.
//!
//! A *round* starts at a reduction and ends when a segment sent after it is acknowledged
//! (`AckEvent::prior_delivered` ≥ `delivered` at the reduction), which is RFC 3168's "once per
//! window of data". A loss detected within the round of an earlier reduction does not reduce
//! again (RFC 3168 §6.1.2) unless [`Escalation::TopUp`] is chosen. Reductions never go below
//! 2·SMSS.
//!
//! No ACK that carries a level echo (ECE set: incipient or moderate) grows the window, whether
//! or not it reduced it: the paper's sender is ns-2's Reno modified, and ns-2's Reno opens
//! its window only on ACKs without ECN-Echo (`tcp/tcp.cc` `recv_newack_helper`). The receiver
//! echoes until it sees CWR (and, under `cwr_clears = first_level`, a higher level until the
//! next CWR), so the window stays where the reduction put it for about a round trip, as
//! classic ECN's Reno does.

use super::Escalation;
use crate::cc::newreno::{
    check_mss, reduction_base, CaIncrease, NewRenoConfig, ReduceFrom, RenoWindow, RtoRule,
};
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
    /// Window multiplier on loss (paper: −50 %).
    pub beta3: f64,
    /// What the multipliers apply to: the window (the paper: "cwnd is reduced", ns-2's
    /// `window()`) or the flight size (RFC 5681 eq. 4).
    pub reduce_from: ReduceFrom,
    /// Cap on the window in segments; `None` (the protocol's default) for no cap. The paper's
    /// ns-2 runs used 25 ("window = 25", ns-2's `window_`), which its experiments set.
    pub max_window: Option<u32>,
    /// Congestion-avoidance growth (NewReno's parameter).
    pub ca_increase: CaIncrease,
    /// A second, higher indication within a round: ignored, or lowers the window to its own
    /// target. Set the codec's `escalation` to the same value.
    pub escalation: Escalation,
    /// How a timeout sets ssthresh (NewReno's parameter): RFC 5681's, or ns-2's, which keeps
    /// the ssthresh of a level response (incipient or moderate) as of an ECN response.
    pub rto_rule: RtoRule,
}

impl Default for MecnRenoConfig {
    fn default() -> Self {
        MecnRenoConfig {
            beta1: 0.8,
            beta2: 0.6,
            beta3: 0.5,
            reduce_from: ReduceFrom::Cwnd,
            max_window: None,
            ca_increase: CaIncrease::ByteCounting,
            escalation: Escalation::Ignore,
            rto_rule: RtoRule::Rfc5681,
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
        Ok(())
    }
}

/// Window in segments until the connection sets the initial window at the end of the
/// handshake (`TcpConfig::initial_window`).
const WINDOW_BEFORE_SETUP: u32 = 2;

/// Indication levels, in increasing severity (index into the multipliers).
const INCIPIENT: usize = 1;
const MODERATE: usize = 2;
const LOSS: usize = 3;

#[derive(Clone, Copy, Debug)]
struct Round {
    /// `delivered` at the reduction: the round ends at an ACK of a segment sent after it.
    mark: u64,
    /// The base the round's first reduction applied its multiplier to.
    w0: u64,
    /// The most severe indication acted on in this round.
    level: usize,
}

pub struct MecnReno {
    cfg: MecnRenoConfig,
    w: RenoWindow,
    cap: u64,
    round: Option<Round>,
    /// Fast recovery, from `on_loss` to `on_recovery_end`.
    in_fast_recovery: bool,
    /// The last event was a timeout and no new data has been acknowledged since.
    rto_without_progress: bool,
    /// The last reduction was a level response (for `rto_rule = ns2`).
    ecn_cut_last: bool,
    /// The ACK being processed carried a signal that reduced the window.
    reduced_on_this_ack: bool,
    /// From the latest ACK, for reductions not triggered by an ACK (loss, timeout).
    last_prior_delivered: u64,
    last_delivered: u64,
    /// Reductions made, by cause: [_, incipient, moderate, loss]; timeouts separately.
    pub reductions: [u64; 4],
    pub timeouts: u64,
}

impl MecnReno {
    pub fn new(cfg: MecnRenoConfig, mss: u32) -> Result<Self, String> {
        check_mss(mss)?;
        cfg.validate()?;
        let reno = NewRenoConfig {
            initial_window: Some(WINDOW_BEFORE_SETUP),
            ca_increase: cfg.ca_increase,
            reduce_from: cfg.reduce_from,
            ..NewRenoConfig::default()
        };
        let mut w = RenoWindow::new(mss, &reno);
        let cap = cfg
            .max_window
            .map_or(u64::MAX, |n| (n as u64).saturating_mul(mss as u64));
        w.cwnd = w.cwnd.min(cap);
        Ok(MecnReno {
            cfg,
            w,
            cap,
            round: None,
            in_fast_recovery: false,
            rto_without_progress: false,
            ecn_cut_last: false,
            reduced_on_this_ack: false,
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

    fn base(&self, bytes_in_flight: u64) -> u64 {
        reduction_base(self.cfg.reduce_from, bytes_in_flight, self.w.cwnd).min(self.cap)
    }

    /// Acts on an indication of severity `level`; true if the window was reduced. `prior`
    /// tells whether the round of an earlier reduction is still open; `mark` starts a new
    /// round; `base` is what the multiplier applies to.
    fn reduce(&mut self, level: usize, prior: u64, mark: u64, base: u64) -> bool {
        let factor = self.factor(level);
        if let Some(r) = self.round.as_mut().filter(|r| prior < r.mark) {
            if self.cfg.escalation != Escalation::TopUp || level <= r.level {
                return false;
            }
            r.level = level;
            let target = (r.w0 as f64 * factor) as u64;
            if target < self.w.cwnd {
                self.w.reduce_to(target);
            }
        } else {
            self.round = Some(Round {
                mark,
                w0: base,
                level,
            });
            self.w.reduce_to((base as f64 * factor) as u64);
        }
        self.reductions[level] += 1;
        true
    }
}

impl Controller for MecnReno {
    fn name(&self) -> &'static str {
        "mecn"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.w.set_cwnd(bytes.min(self.cap));
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.last_prior_delivered = ev.prior_delivered;
        self.last_delivered = ev.delivered;
        if ev.acked_bytes > 0 {
            self.rto_without_progress = false;
        }
        if std::mem::take(&mut self.reduced_on_this_ack) || self.in_fast_recovery || ev.ece {
            return;
        }
        self.w.grow(ev.acked_bytes);
        self.w.cwnd = self.w.cwnd.min(self.cap);
    }

    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        if self.in_fast_recovery || ev.in_recovery {
            // Fast recovery already reduced for this window.
            return;
        }
        let level = match signal {
            Signal::Level(1) => INCIPIENT,
            Signal::Level(2) => MODERATE,
            _ => return,
        };
        let base = self.base(ev.bytes_in_flight);
        self.reduced_on_this_ack = self.reduce(level, ev.prior_delivered, ev.delivered, base);
        if self.reduced_on_this_ack {
            self.ecn_cut_last = true;
        }
    }

    fn on_loss(&mut self, _now: Time, bytes_in_flight: u64) {
        if self.in_fast_recovery {
            return;
        }
        self.in_fast_recovery = true;
        let base = self.base(bytes_in_flight);
        self.reduce(LOSS, self.last_prior_delivered, self.last_delivered, base);
        self.ecn_cut_last = false;
    }

    fn on_recovery_end(&mut self, _now: Time) {
        // RFC 6582 §3.2 step 6, full acknowledgment: cwnd = ssthresh.
        if self.in_fast_recovery {
            self.in_fast_recovery = false;
            self.w.cwnd = self.w.ssthresh.min(self.cap);
        }
    }

    fn on_rto(&mut self, _now: Time, bytes_in_flight: u64) {
        self.timeouts += 1;
        self.in_fast_recovery = false;
        let base = self.base(bytes_in_flight);
        // RFC 5681 §3.1: a timeout of an already retransmitted segment keeps ssthresh; ns-2
        // keeps a level response's instead (NewReno's `rto_rule`).
        let keep = self
            .cfg
            .rto_rule
            .keeps_ssthresh(self.rto_without_progress, self.ecn_cut_last);
        // As NewReno's: the timeout is the last action now, whichever branch it took.
        self.ecn_cut_last = false;
        let ssthresh = (!keep).then_some((base as f64 * self.cfg.beta3) as u64);
        self.w.timeout(ssthresh);
        self.rto_without_progress = true;
        self.round = Some(Round {
            mark: self.last_delivered,
            w0: base,
            level: LOSS,
        });
    }

    fn window(&self) -> u64 {
        self.w.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }

    /// Reductions made so far, by cause (running totals): ECN's by level apart from losses',
    /// so they compare with what a real MECN sender counts (bpf/mecn's cuts by level).
    fn sample(&self, out: &mut crate::net::Samples) {
        out.push(("mecn_ecn_cuts_l1", self.reductions[INCIPIENT] as f64));
        out.push(("mecn_ecn_cuts_l2", self.reductions[MODERATE] as f64));
        out.push(("mecn_loss_cuts", self.reductions[LOSS] as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn cc(cfg: MecnRenoConfig) -> MecnReno {
        MecnReno::new(cfg, MSS as u32).unwrap()
    }

    /// A controller in congestion avoidance at `segments`.
    fn at(cfg: MecnRenoConfig, segments: u64) -> MecnReno {
        let mut c = cc(cfg);
        c.set_initial_window(segments * MSS);
        c.w.ssthresh = segments * MSS;
        c
    }

    /// One ACK of a segment: `prior` is `delivered` when the acknowledged segment was sent.
    /// The signal (if any) is delivered before the ACK, as the connection does.
    fn ack(c: &mut MecnReno, delivered: u64, prior: u64, signal: Option<u8>) {
        let ev = AckEvent {
            acked_bytes: MSS,
            bytes_in_flight: c.window(),
            delivered,
            prior_delivered: prior,
            ece: signal.is_some(),
            ..Default::default()
        };
        if let Some(l) = signal {
            c.on_signal(&ev, Signal::Level(l));
        }
        c.on_ack(&ev);
    }

    /// ns-2's timeout rule: a timeout after an incipient response (20 → 16 segments) keeps
    /// ssthresh 16, the next halves its 1-segment window to the floor of 2; after a loss the
    /// timeout halves (β3).
    #[test]
    fn ns2_rto_rule_keeps_a_level_responses_ssthresh() {
        let cfg = MecnRenoConfig {
            rto_rule: RtoRule::Ns2,
            ..Default::default()
        };
        let mut c = at(cfg, 20);
        ack(&mut c, 100_000, 90_000, Some(1));
        assert_eq!(c.ssthresh(), 16 * MSS);
        c.on_rto(0, 16 * MSS);
        assert_eq!((c.window(), c.ssthresh()), (MSS, 16 * MSS));
        c.on_rto(0, MSS);
        assert_eq!((c.window(), c.ssthresh()), (MSS, 2 * MSS));
        let mut c = at(
            MecnRenoConfig {
                rto_rule: RtoRule::Ns2,
                ..Default::default()
            },
            20,
        );
        c.on_loss(0, 20 * MSS);
        c.on_recovery_end(0);
        c.on_rto(0, 10 * MSS);
        assert_eq!((c.window(), c.ssthresh()), (MSS, 5 * MSS));
        // RFC 5681 halves the level response's window at the timeout.
        let mut c = at(MecnRenoConfig::default(), 20);
        ack(&mut c, 100_000, 90_000, Some(1));
        c.on_rto(0, 16 * MSS);
        assert_eq!(c.ssthresh(), 8 * MSS);
    }

    #[test]
    fn window_after_each_signal() {
        let mut c = at(MecnRenoConfig::default(), 20);
        // Incipient: ×0.8; the ACK that carried it does not grow the window.
        ack(&mut c, 100_000, 90_000, Some(1));
        assert_eq!((c.window(), c.ssthresh()), (16_000, 16_000));
        // Next round (a segment sent after the reduction is acknowledged): moderate ×0.6.
        ack(&mut c, 110_000, 100_000, Some(2));
        assert_eq!(c.window(), 9_600);
        // Next round: a loss halves the window; recovery ends at ssthresh.
        ack(&mut c, 120_000, 110_000, None);
        c.on_loss(0, 9 * MSS);
        assert_eq!(c.window(), 4_800);
        c.on_recovery_end(0);
        assert_eq!(c.window(), 4_800);
        ack(&mut c, 130_000, 125_000, None);
        c.on_loss(0, 4 * MSS);
        c.on_recovery_end(0);
        assert_eq!(c.window(), 2_400);
        // Never below 2 segments.
        ack(&mut c, 140_000, 135_000, Some(2));
        assert_eq!(c.window(), 2 * MSS);
        assert_eq!(c.reductions, [0, 1, 2, 2]);
        let mut out = crate::net::Samples::default();
        c.sample(&mut out);
        assert_eq!(
            out.iter().map(|&(k, v)| (k, v as u64)).collect::<Vec<_>>(),
            [
                ("mecn_ecn_cuts_l1", 1),
                ("mecn_ecn_cuts_l2", 2),
                ("mecn_loss_cuts", 2)
            ]
        );
        // Timeout: one segment, ssthresh from the halved window (at least 2 segments).
        c.on_rto(0, 4 * MSS);
        assert_eq!((c.window(), c.ssthresh()), (MSS, 2 * MSS));
        // RFC 5681's base: the flight size.
        let mut c = at(
            MecnRenoConfig {
                reduce_from: ReduceFrom::FlightSize,
                ..Default::default()
            },
            20,
        );
        c.on_loss(0, 9 * MSS);
        assert_eq!(c.window(), 4_500);
    }

    #[test]
    fn one_reduction_per_round() {
        let mut c = at(MecnRenoConfig::default(), 20);
        ack(&mut c, 100_000, 90_000, Some(1));
        assert_eq!(c.window(), 16_000);
        // ACKs of segments sent before the reduction: still the same round.
        ack(&mut c, 101_000, 99_000, Some(1));
        ack(&mut c, 102_000, 99_500, Some(2));
        ack(&mut c, 103_000, 99_900, None);
        assert_eq!(c.window(), 16_000);
        // A loss in the same round: fast recovery, but no second reduction (RFC 3168 §6.1.2).
        c.on_loss(0, 16 * MSS);
        assert_eq!((c.window(), c.ssthresh()), (16_000, 16_000));
        // Signals during fast recovery are ignored.
        ack(&mut c, 117_000, 110_000, Some(2));
        assert_eq!(c.window(), 16_000);
        c.on_recovery_end(0);
        // The first ACK of a segment sent after the reduction opens the next round.
        ack(&mut c, 118_000, 100_000, Some(1));
        assert_eq!(c.window(), 12_800);
        assert_eq!(c.reductions, [0, 2, 0, 0]);
    }

    /// An ACK of the round after a reduction that still carries the echo (the receiver echoes
    /// until CWR arrives) but no signal: ns-2's Reno opens no window on it; an ACK without the
    /// echo does.
    #[test]
    fn no_growth_on_acks_that_carry_the_echo() {
        let mut c = at(MecnRenoConfig::default(), 20);
        ack(&mut c, 100_000, 90_000, Some(1));
        assert_eq!(c.window(), 16_000);
        let echoed = |delivered, prior| AckEvent {
            acked_bytes: 16 * MSS,
            bytes_in_flight: 16 * MSS,
            delivered,
            prior_delivered: prior,
            ece: true,
            ..Default::default()
        };
        // A whole window of acknowledged bytes with the echo on: congestion avoidance would
        // add a segment, ns-2 adds nothing.
        c.on_ack(&echoed(116_000, 99_000));
        assert_eq!(c.window(), 16_000);
        let mut clear = echoed(132_000, 116_000);
        clear.ece = false;
        c.on_ack(&clear);
        assert_eq!(c.window(), 17_000);
    }

    #[test]
    fn escalation_top_up_lowers_to_the_higher_level_target() {
        let mut c = at(
            MecnRenoConfig {
                escalation: Escalation::TopUp,
                ..Default::default()
            },
            20,
        );
        ack(&mut c, 100_000, 90_000, Some(1));
        assert_eq!(c.window(), 16_000);
        // Moderate within the round: to 0.6 × 20, not 0.6 × 16.
        ack(&mut c, 101_000, 95_000, Some(2));
        assert_eq!(c.window(), 12_000);
        // Incipient within the round: nothing.
        ack(&mut c, 102_000, 96_000, Some(1));
        assert_eq!(c.window(), 12_000);
        // A loss within the round: to 0.5 × 20.
        c.on_loss(0, 12 * MSS);
        assert_eq!(c.window(), 10_000);
        assert_eq!(c.reductions, [0, 1, 1, 1]);
    }

    #[test]
    fn growth_and_window_cap() {
        // The paper's runs: "window = 25" (ns-2's window_, Figs. 4, 6, 7).
        let capped = MecnRenoConfig {
            max_window: Some(25),
            ..Default::default()
        };
        let mut c = cc(capped.clone());
        assert_eq!(c.window(), 2 * MSS);
        // Slow start: one segment per acknowledged segment, up to the 25-segment cap.
        let mut d = 0;
        for i in 0..23 {
            d += MSS;
            ack(&mut c, d, d - MSS, None);
            assert_eq!(c.window(), (3 + i) * MSS);
        }
        for _ in 0..100 {
            d += MSS;
            ack(&mut c, d, d - MSS, None);
        }
        assert_eq!(c.window(), 25 * MSS);
        // Reductions start from the capped window.
        d += MSS;
        ack(&mut c, d, d - MSS, Some(1));
        assert_eq!(c.window(), 20 * MSS);
        // Congestion avoidance: one segment per window of acknowledged bytes.
        for _ in 0..20 {
            d += MSS;
            ack(&mut c, d, d - MSS, None);
        }
        assert_eq!(c.window(), 21 * MSS);
        // A handshake-set initial window is capped too.
        let mut h = cc(capped);
        h.set_initial_window(40 * MSS);
        assert_eq!(h.window(), 25 * MSS);
    }

    #[test]
    fn the_protocol_has_no_window_cap() {
        // §2 and Table 3 describe no cap; 25 segments is the paper's ns-2 runs' setting, which
        // its experiments set. By default the window grows past 25 segments.
        assert_eq!(MecnRenoConfig::default().max_window, None);
        let mut u = cc(MecnRenoConfig::default());
        for i in 1..=40 {
            ack(&mut u, i * MSS, (i - 1) * MSS, None);
        }
        assert_eq!(u.window(), 42 * MSS);
        let mut h = cc(MecnRenoConfig::default());
        h.set_initial_window(40 * MSS);
        assert_eq!(h.window(), 40 * MSS);
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
