//! HFCC's sender (§IV-C1, §IV-D): the overlay code of each ACK selects rapid increase (`01`,
//! eq. 8, with the available-bandwidth estimate of eqs. 6–7), adaptive additive increase
//! (`10`, eq. 9 with β of eq. 13) or adaptive multiplicative decrease (`11`, eq. 10 with γ of
//! eq. 14 from a DCTCP-style congestion degree), and a freeze of one RTT after each decrease.
//! Losses as NewReno. The window is kept in segments.

use super::OverlayCode;
use crate::cc::loss::RenoLoss;
use crate::cc::{check_max_segments_per_ack, AckEvent, Controller, Signal, MAX_SEGMENTS_PER_ACK};
use crate::marker::load::interval_at_or_above;
use crate::net::Samples;
use crate::time::{from_secs, to_secs, Time, MS};
use serde::{Deserialize, Serialize};

/// Which `t_p` the sender scales its increments by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TpMode {
    /// The `t_p` the routers return with the code (the router that set the highest code; among
    /// routers with that code the more loaded one, equal loads the longer: the marker's
    /// `t_p_ties`), as MLCP's routers return theirs (§IV-D: "a similar method like [12]"):
    /// every flow through a router then scales by that router's interval, which is what makes
    /// eqs. 2–3 RTT-fair. Until an ACK brings one (no HFCC router on the path), the flow's own
    /// RTT picks it as `own_rtt` does; after, an ACK without one keeps the last returned (a
    /// flow whose path loses its HFCC routers keeps it for good).
    #[default]
    Path,
    /// The routers' rule applied to the flow's own smoothed RTT: the smallest interval of S at
    /// or above it. The same as `path` when every flow through a router has one RTT; with
    /// different RTTs it cancels eqs. 2–3's RTT scaling (rtt/t_p stays in (0.4, 1]), and a
    /// flow's rate grows at β/t_p(rtt)²: a 360-ms flow 25 times slower than a 60-ms one.
    /// `adaptive`, its name before the routers returned their `t_p`, still reads as this mode,
    /// so scenario files written then (recorded runs' run.json) replay as they ran.
    #[serde(alias = "adaptive")]
    OwnRtt,
    /// `t_p_s`, as VCP's fixed `t_ρ`.
    Fixed,
}

/// How often RI takes eq. 8's bandwidth term `RTT_min·B_n/P_s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiStep {
    /// Once per RTT, as eq. 8's `cwnd + cwnd·α_s` is a step per RTT, with the estimate at the
    /// ACK that takes it: the first `01` ACK one smoothed RTT after the previous step. In a
    /// ramp that is the head of a window's burst of ACKs, after the idle gap, where B_n is
    /// lowest, and the term does not bind.
    #[default]
    Rtt,
    /// Once per RTT as `Rtt`, with the largest estimate since the previous step (the round's,
    /// at the end of its burst), whatever the ACK that takes it.
    RttPeak,
    /// On every ACK coded `01`.
    Ack,
}

/// How long the window stays frozen after a decrease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FreezeMode {
    /// One RTT, as §IV-C1 says.
    #[default]
    Rtt,
    /// One `t_p` (at least one RTT), as VCP freezes for one `t_ρ`: a router repeats the same
    /// decrease code for a whole interval, and with `t_p` above the RTT a one-RTT freeze lets
    /// that one overload be answered by two or three decreases.
    Interval,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HfccConfig {
    /// α: RI's multiplicative increase per `t_p` (eq. 2 scales it to the RTT).
    pub alpha: f64,
    /// Cap on `rtt/t_p` in RI's exponent (VCP's).
    pub max_rtt_ratio: f64,
    /// Take `max(·, RTT_min·B_n/P_s)` in RI (eq. 8's bandwidth term).
    pub ri_bandwidth: bool,
    /// How often the bandwidth term is taken.
    pub ri_step: RiStep,
    /// The RTT the sender scales by and picks `t_p` from is counted in whole ticks of this
    /// many seconds, rounded down (ns-2's TCP keeps its smoothed RTT in `tcpTick_` units);
    /// 0: exact.
    pub rtt_tick_s: f64,
    /// Lower and upper bounds of A²I's β (eq. 13).
    pub beta_min: f64,
    pub beta_max: f64,
    /// Bounds of AMD's γ (eq. 14).
    pub gamma_min: f64,
    pub gamma_max: f64,
    /// Gain g of the congestion degree's EWMA (DCTCP's 1/16).
    pub degree_gain: f64,
    /// Lower bound of the estimator's observation factor π (eq. 7).
    pub pi_min: f64,
    pub t_p: TpMode,
    /// `t_p` in seconds when fixed.
    pub t_p_s: f64,
    pub freeze: FreezeMode,
    /// RTT assumed before the first sample, in seconds.
    pub initial_rtt_s: f64,
    /// Segments an ACK counts for, at most, in RI's and A²I's per-segment steps
    /// (`cc::MAX_SEGMENTS_PER_ACK` = 2 by default, RFC 3465's L; 1 is ns-2's senders, one
    /// step per new ACK).
    pub max_segments_per_ack: f64,
    /// Cap on the window in segments; `None` for none.
    pub max_window: Option<u32>,
}

impl Default for HfccConfig {
    fn default() -> Self {
        HfccConfig {
            alpha: 0.0625,
            max_rtt_ratio: 2.5,
            ri_bandwidth: true,
            ri_step: RiStep::Rtt,
            rtt_tick_s: 0.0,
            beta_min: 1.0,
            beta_max: 5.0,
            gamma_min: 0.675,
            gamma_max: 0.875,
            degree_gain: 1.0 / 16.0,
            pi_min: 0.25,
            t_p: TpMode::Path,
            t_p_s: 0.2,
            freeze: FreezeMode::Rtt,
            initial_rtt_s: 0.1,
            max_segments_per_ack: MAX_SEGMENTS_PER_ACK,
            max_window: None,
        }
    }
}

impl HfccConfig {
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("alpha", self.alpha),
            ("max_rtt_ratio", self.max_rtt_ratio),
            ("pi_min", self.pi_min),
            ("t_p_s", self.t_p_s),
            ("initial_rtt_s", self.initial_rtt_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name}: {v} must be positive"));
            }
        }
        if !(self.beta_min > 0.0 && self.beta_max >= self.beta_min && self.beta_max.is_finite()) {
            return Err(format!(
                "beta_max: {} must be at least beta_min ({}) > 0",
                self.beta_max, self.beta_min
            ));
        }
        if !(self.gamma_min > 0.0 && self.gamma_min <= self.gamma_max && self.gamma_max < 1.0) {
            return Err(format!(
                "gamma_min: need 0 < gamma_min ({}) ≤ gamma_max ({}) < 1",
                self.gamma_min, self.gamma_max
            ));
        }
        if !(self.degree_gain > 0.0 && self.degree_gain <= 1.0) {
            return Err(format!(
                "degree_gain: {} is outside (0, 1]",
                self.degree_gain
            ));
        }
        if self.max_window == Some(0) {
            return Err("max_window: must be at least 1 segment".into());
        }
        if !(self.rtt_tick_s.is_finite() && self.rtt_tick_s >= 0.0) {
            return Err(format!(
                "rtt_tick_s: {} must be non-negative",
                self.rtt_tick_s
            ));
        }
        check_max_segments_per_ack(self.max_segments_per_ack)
    }
}

/// TCP-Jersey's available-bandwidth estimator with HFCC's adaptive observation window
/// (eqs. 6–7): `B_n = (π_n·RTT·B_{n−1} + L_n) / (π_n·RTT + (t_n − t_{n−1}))` with
/// `π_n = B_{n−1} / (cwnd_{n−1}·P_s/RTT)`, bounded below by `pi_min`. The first ACK starts
/// the estimate at the window's rate `cwnd·P_s/RTT` (π = 1).
#[derive(Clone, Debug, Default)]
pub struct BandwidthEstimator {
    /// B_n in bytes per second (0 before the first ACK).
    pub bytes_per_s: f64,
    last: Option<Time>,
    pub min: f64,
    pub max: f64,
}

impl BandwidthEstimator {
    /// An ACK at `now` acknowledged `bytes`; `window_bytes` is the window before it.
    pub fn on_ack(&mut self, now: Time, bytes: u64, rtt: Time, window_bytes: f64, pi_min: f64) {
        let rtt = to_secs(rtt.max(1));
        match self.last {
            None => {
                self.bytes_per_s = window_bytes / rtt;
                self.min = self.bytes_per_s;
                self.max = self.bytes_per_s;
            }
            Some(prev) => {
                let dt = to_secs(now.saturating_sub(prev));
                let window_rate = window_bytes / rtt;
                let pi = if window_rate > 0.0 {
                    (self.bytes_per_s / window_rate).max(pi_min)
                } else {
                    pi_min
                };
                let memory = pi * rtt;
                self.bytes_per_s = (memory * self.bytes_per_s + bytes as f64) / (memory + dt);
                self.min = self.min.min(self.bytes_per_s);
                self.max = self.max.max(self.bytes_per_s);
            }
        }
        self.last = Some(now);
    }

    /// Eq. 13's position of the current estimate between the extremes seen, in [0, 1].
    pub fn position(&self) -> f64 {
        if self.max > self.min {
            ((self.bytes_per_s - self.min) / (self.max - self.min)).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

/// Window in segments until the connection sets the initial window.
const WINDOW_BEFORE_SETUP: f64 = 2.0;

pub struct Hfcc {
    cfg: HfccConfig,
    mss: f64,
    cwnd: f64,
    cap: f64,
    initial_rtt: Time,
    /// `rtt_tick_s` as time (0: exact).
    tick: Time,
    /// RI takes the bandwidth term again from this time on.
    ri_due: Time,
    /// The largest bandwidth estimate since RI last took the term (`RiStep::RttPeak`), and the
    /// losses and timeouts counted when it started (one since ends the round).
    round_peak: f64,
    round_losses: u64,
    srtt: Time,
    min_rtt: Time,
    /// The `t_p` the latest ACK returned from the routers (`TpMode::Path`).
    path_t_p: Option<Time>,
    /// Code of the latest ACK that carried one, and whether the ACK being processed did.
    code: OverlayCode,
    coded: bool,
    /// No window change before this (one RTT after an AMD).
    frozen_until: Time,
    pub bandwidth: BandwidthEstimator,
    /// c_l: EWMA over windows of one RTT of the fraction of acknowledged bytes coded `11`.
    degree: f64,
    window_end: Time,
    window_acked: u64,
    window_decrease: u64,
    pub loss: RenoLoss,
    pub amds: u64,
    /// RI steps where the bandwidth term set the window (above the multiplicative step).
    pub ri_jumps: u64,
}

impl Hfcc {
    pub fn new(cfg: HfccConfig, mss: u32) -> Result<Self, String> {
        cfg.validate()?;
        if mss == 0 {
            return Err("mss: must be positive".into());
        }
        let cap = cfg.max_window.map_or(f64::INFINITY, |w| w as f64);
        Ok(Hfcc {
            mss: mss as f64,
            cwnd: WINDOW_BEFORE_SETUP.min(cap),
            cap,
            initial_rtt: from_secs(cfg.initial_rtt_s).max(1),
            tick: from_secs(cfg.rtt_tick_s),
            ri_due: 0,
            round_peak: 0.0,
            round_losses: 0,
            srtt: 0,
            min_rtt: 0,
            path_t_p: None,
            code: OverlayCode::Low,
            coded: false,
            frozen_until: 0,
            bandwidth: BandwidthEstimator::default(),
            degree: 0.0,
            window_end: 0,
            window_acked: 0,
            window_decrease: 0,
            loss: RenoLoss::default(),
            amds: 0,
            ri_jumps: 0,
            cfg,
        })
    }

    /// Window in segments (fractional).
    pub fn cwnd_segments(&self) -> f64 {
        self.cwnd
    }

    /// The RTT the sender works with: its smoothed RTT, in whole ticks when `rtt_tick_s` is
    /// set (at least one).
    fn rtt(&self) -> Time {
        let rtt = if self.srtt > 0 {
            self.srtt
        } else {
            self.initial_rtt
        };
        if self.tick > 0 {
            (rtt / self.tick).max(1) * self.tick
        } else {
            rtt
        }
    }

    /// The `t_p` the increments are scaled by, in seconds.
    pub fn t_p_s(&self) -> f64 {
        // At the routers' default resolution, whole milliseconds (HfccMarkerConfig).
        let own = || interval_at_or_above(to_secs(self.rtt()) * 1e3, 1.0) as f64 * to_secs(MS);
        match self.cfg.t_p {
            TpMode::Fixed => self.cfg.t_p_s,
            TpMode::Path => self.path_t_p.map_or_else(own, to_secs),
            TpMode::OwnRtt => own(),
        }
    }

    /// How long a decrease freezes the window.
    pub fn freeze_time(&self) -> Time {
        match self.cfg.freeze {
            FreezeMode::Rtt => self.rtt(),
            FreezeMode::Interval => self.rtt().max(from_secs(self.t_p_s())),
        }
    }

    /// α_s of eq. 2 per acknowledged segment.
    pub fn ri_increment(&self) -> f64 {
        let ratio = (to_secs(self.rtt()) / self.t_p_s()).min(self.cfg.max_rtt_ratio);
        (1.0 + self.cfg.alpha).powf(ratio) - 1.0
    }

    /// β of eq. 13.
    pub fn beta(&self) -> f64 {
        (self.bandwidth.position() * self.cfg.beta_max).max(self.cfg.beta_min)
    }

    /// β_s/cwnd of eqs. 3 and 9 per acknowledged segment.
    pub fn ai_increment(&self) -> f64 {
        let ratio = to_secs(self.rtt()) / self.t_p_s();
        self.beta() * ratio * ratio / self.cwnd
    }

    /// γ of eq. 14.
    pub fn gamma(&self) -> f64 {
        self.cfg.gamma_max - self.degree * (self.cfg.gamma_max - self.cfg.gamma_min)
    }

    /// c_l, the congestion degree in [0, 1].
    pub fn congestion_degree(&self) -> f64 {
        self.degree
    }

    fn note_rtt(&mut self, ev: &AckEvent) {
        if ev.srtt > 0 {
            self.srtt = ev.srtt;
        }
        if ev.min_rtt > 0 {
            self.min_rtt = ev.min_rtt;
        }
    }

    /// DCTCP's estimator over windows of one RTT.
    fn note_degree(&mut self, now: Time, acked: u64, decrease: bool) {
        self.window_acked += acked;
        if decrease {
            self.window_decrease += acked;
        }
        if now >= self.window_end {
            if self.window_acked > 0 {
                let f = self.window_decrease as f64 / self.window_acked as f64;
                let g = self.cfg.degree_gain;
                self.degree = (1.0 - g) * self.degree + g * f;
            }
            self.window_acked = 0;
            self.window_decrease = 0;
            self.window_end = now + self.rtt();
        }
    }
}

impl Controller for Hfcc {
    fn name(&self) -> &'static str {
        "hfcc"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.cwnd = (bytes as f64 / self.mss).max(1.0).min(self.cap);
    }

    fn on_signal(&mut self, _ev: &AckEvent, signal: Signal) {
        let Some((bits, t_p)) = signal.load_code() else {
            return;
        };
        let Some(code) = OverlayCode::from_bits(bits) else {
            return;
        };
        if let Some(t) = t_p {
            self.path_t_p = Some(t);
        }
        self.code = code;
        self.coded = true;
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.note_rtt(ev);
        let coded = std::mem::take(&mut self.coded);
        self.loss.on_ack(ev.acked_bytes);
        if ev.acked_bytes == 0 {
            return;
        }
        let window_bytes = self.cwnd * self.mss;
        self.bandwidth.on_ack(
            ev.now,
            ev.acked_bytes,
            self.rtt(),
            window_bytes,
            self.cfg.pi_min,
        );
        // The round's peak is taken over an unbroken run of `01` ACKs outside recovery and
        // freezes, with no loss or timeout since it started: what came before a decrease or a
        // loss is not the path's rate now.
        let losses = self.loss.losses + self.loss.timeouts;
        if losses != self.round_losses {
            self.round_losses = losses;
            self.round_peak = 0.0;
        }
        let rising = self.code == OverlayCode::Low && !ev.in_recovery;
        self.round_peak = if rising {
            self.round_peak.max(self.bandwidth.bytes_per_s)
        } else {
            0.0
        };
        let decrease = coded && self.code == OverlayCode::Decrease;
        self.note_degree(ev.now, ev.acked_bytes, decrease);
        if self.loss.in_fast_recovery || ev.now < self.frozen_until {
            self.round_peak = 0.0;
            return;
        }
        let segments = ev.law_segments(self.mss, self.cfg.max_segments_per_ack);
        match self.code {
            OverlayCode::Low => {
                self.cwnd += self.ri_increment() * segments;
                // Not while recovering from a timeout: the estimate still holds the rate of
                // the window that was lost, and jumping back to it resends that burst.
                let due = self.cfg.ri_step == RiStep::Ack || ev.now >= self.ri_due;
                if self.cfg.ri_bandwidth && self.min_rtt > 0 && !ev.in_recovery && due {
                    self.ri_due = ev.now + self.rtt();
                    let estimate = match self.cfg.ri_step {
                        RiStep::RttPeak => std::mem::take(&mut self.round_peak),
                        RiStep::Rtt | RiStep::Ack => self.bandwidth.bytes_per_s,
                    };
                    let target = to_secs(self.min_rtt) * estimate / self.mss;
                    if target > self.cwnd {
                        self.cwnd = target;
                        self.ri_jumps += 1;
                    }
                }
            }
            OverlayCode::High => self.cwnd += self.ai_increment() * segments,
            // An ACK without a code keeps the last increase, never repeats a decrease.
            OverlayCode::Decrease if !decrease => {}
            OverlayCode::Decrease => {
                self.cwnd = (self.gamma() * self.cwnd).max(1.0);
                self.frozen_until = ev.now + self.freeze_time();
                self.amds += 1;
            }
        }
        self.cwnd = self.cwnd.min(self.cap);
    }

    crate::cc::loss::reno_loss_methods!();

    fn sample(&self, out: &mut Samples) {
        out.push(("hfcc_code", self.code.bits() as f64));
        out.push(("hfcc_bandwidth_mbps", self.bandwidth.bytes_per_s * 8e-6));
        out.push(("hfcc_degree", self.degree));
        // Cumulative: §V-A1's "low-bandwidth flows have fewer MD phases" is read from it.
        out.push(("hfcc_amds", self.amds as f64));
        out.push(("t_p_s", self.t_p_s()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    /// Eqs. 6–7 on a hand-computed sequence (RTT 100 ms).
    #[test]
    fn bandwidth_estimator_by_hand() {
        let mut b = BandwidthEstimator::default();
        let rtt = 100 * MS;
        // First ACK: the window's rate, 10 kB / 0.1 s.
        b.on_ack(0, 1000, rtt, 10_000.0, 0.25);
        assert_eq!(b.bytes_per_s, 100_000.0);
        // Steady: π = 1, B = (0.1·100000 + 1000)/(0.1 + 0.01) = 100000.
        b.on_ack(10 * MS, 1000, rtt, 10_000.0, 0.25);
        assert!((b.bytes_per_s - 100_000.0).abs() < 1e-6);
        // The window doubled: π = 0.5, B = (0.05·100000 + 1000)/(0.05 + 0.005).
        b.on_ack(15 * MS, 1000, rtt, 20_000.0, 0.25);
        let b3 = 6000.0 / 0.055;
        assert!((b.bytes_per_s - b3).abs() < 1e-6);
        // No time between ACKs: B grows by L/(π·RTT) with π = b3/100000.
        b.on_ack(15 * MS, 1000, rtt, 10_000.0, 0.25);
        let memory = b3 / 100_000.0 * 0.1;
        let b4 = b3 + 1000.0 / memory;
        assert!((b.bytes_per_s - b4).abs() < 1e-6);
        // A window far above the estimate: π bounded by pi_min = 0.25.
        b.on_ack(25 * MS, 0, rtt, 1e6, 0.25);
        let b5 = 0.025 * b4 / (0.025 + 0.01);
        assert!((b.bytes_per_s - b5).abs() < 1e-6);
        assert_eq!((b.min, b.max), (b5, b4));
        assert!((b.position() - 0.0).abs() < 1e-12);
    }

    fn hfcc(segments: f64) -> Hfcc {
        let mut h = Hfcc::new(HfccConfig::default(), MSS).unwrap();
        h.cwnd = segments;
        h
    }

    fn ev(now: Time, srtt: Time) -> AckEvent {
        AckEvent {
            now,
            srtt,
            min_rtt: srtt,
            acked_bytes: MSS as u64,
            ..Default::default()
        }
    }

    fn ack(h: &mut Hfcc, e: &AckEvent, code: OverlayCode) -> f64 {
        let before = h.cwnd;
        h.on_signal(e, Signal::Load(code.bits()));
        h.on_ack(e);
        h.cwnd - before
    }

    #[test]
    fn beta_and_gamma_stay_in_their_bounds() {
        let mut h = hfcc(10.0);
        assert_eq!(h.beta(), 1.0);
        assert_eq!(h.gamma(), 0.875);
        h.bandwidth = BandwidthEstimator {
            bytes_per_s: 50.0,
            last: None,
            min: 10.0,
            max: 50.0,
        };
        assert_eq!(h.beta(), 5.0);
        h.bandwidth.bytes_per_s = 20.0;
        assert!((h.beta() - 1.25).abs() < 1e-12);
        h.bandwidth.bytes_per_s = 12.0;
        assert_eq!(h.beta(), 1.0);
        for degree in [0.0, 0.3, 1.0] {
            h.degree = degree;
            let g = h.gamma();
            assert!((0.675..=0.875).contains(&g));
            assert!((g - (0.875 - degree * 0.2)).abs() < 1e-12);
        }
        // The degree is DCTCP's EWMA: every byte coded `11` for a window moves it by 1/16.
        let mut h = hfcc(10.0);
        let rtt = 80 * MS;
        h.on_signal(&ev(0, rtt), Signal::Load(OverlayCode::Decrease.bits()));
        h.on_ack(&ev(0, rtt));
        assert!((h.congestion_degree() - 1.0 / 16.0).abs() < 1e-12);
    }

    /// RTT 80 ms, t_p snapped to 80 ms: RI ×1.0625 per RTT, A²I β/cwnd, AMD γ then a freeze
    /// of one RTT; t_p fixed at 200 ms scales as VCP.
    #[test]
    fn ri_a2i_amd_and_the_freeze() {
        let rtt = 80 * MS;
        let mut h = hfcc(10.0);
        // The first ACK only starts the estimator at the window's rate (no jump).
        let d = ack(&mut h, &ev(0, rtt), OverlayCode::Low);
        assert!((d - 0.0625).abs() < 1e-12, "{d}");
        assert_eq!(h.ri_jumps, 0);
        // The ACK comes early: B_n rises to its maximum so far and β to β_max = 5.
        let w = h.cwnd_segments();
        let d = ack(&mut h, &ev(MS, rtt), OverlayCode::High);
        assert_eq!(h.beta(), 5.0);
        assert!((d - 5.0 / w).abs() < 1e-12, "{d}");
        let before = h.cwnd_segments();
        let g = h.gamma();
        ack(&mut h, &ev(2 * MS, rtt), OverlayCode::Decrease);
        assert!((h.cwnd_segments() - before * g).abs() < 1e-9);
        assert_eq!(h.amds, 1);
        // Frozen for one RTT whatever the code.
        for code in [OverlayCode::Low, OverlayCode::High, OverlayCode::Decrease] {
            assert_eq!(ack(&mut h, &ev(50 * MS, rtt), code), 0.0);
        }
        assert_eq!(h.amds, 1);
        assert!(ack(&mut h, &ev(83 * MS, rtt), OverlayCode::High) > 0.0);
        // Fixed t_p = 200 ms: (1.0625)^0.4 − 1.
        let mut h = Hfcc::new(
            HfccConfig {
                t_p: TpMode::Fixed,
                ..Default::default()
            },
            MSS,
        )
        .unwrap();
        h.cwnd = 10.0;
        let d = ack(&mut h, &ev(0, rtt), OverlayCode::Low);
        assert!((d - (1.0625f64.powf(0.4) - 1.0)).abs() < 1e-12);
    }

    /// With `freeze = interval` a decrease holds the window for one `t_p`: an RTT of 85 ms
    /// snaps to 200 ms, so a second decrease code 100 ms later is ignored (the paper's one-RTT
    /// freeze would have applied it).
    #[test]
    fn interval_freeze_spans_the_routers_interval() {
        let rtt = 85 * MS;
        for (freeze, second_cut) in [(FreezeMode::Rtt, true), (FreezeMode::Interval, false)] {
            let mut h = Hfcc::new(
                HfccConfig {
                    freeze,
                    ..Default::default()
                },
                MSS,
            )
            .unwrap();
            h.cwnd = 100.0;
            assert_eq!(h.t_p_s(), 0.2);
            ack(&mut h, &ev(0, rtt), OverlayCode::Decrease);
            assert_eq!(h.amds, 1);
            ack(&mut h, &ev(100 * MS, rtt), OverlayCode::Decrease);
            assert_eq!(h.amds, if second_cut { 2 } else { 1 }, "{freeze:?}");
            ack(&mut h, &ev(201 * MS, rtt), OverlayCode::Decrease);
            assert_eq!(h.amds, if second_cut { 3 } else { 2 }, "{freeze:?}");
        }
    }

    /// After a decrease the estimate still reflects the old window: RI jumps back to
    /// RTT_min·B_n/P_s.
    #[test]
    fn ri_takes_the_bandwidth_estimate_when_it_is_larger() {
        let rtt = 80 * MS;
        let mut h = hfcc(100.0);
        // 100 segments per 80 ms: 1.25 MB/s; an ACK every 0.8 ms keeps it there.
        for k in 0..10 {
            ack(&mut h, &ev(k * 800_000_000, rtt), OverlayCode::High);
        }
        let rate = h.bandwidth.bytes_per_s;
        assert!((rate / 1.25e6 - 1.0).abs() < 0.02, "{rate}");
        h.cwnd = 50.0;
        // Not while the connection recovers from a loss.
        let recovering = AckEvent {
            in_recovery: true,
            ..ev(9 * MS, rtt)
        };
        ack(&mut h, &recovering, OverlayCode::Low);
        assert_eq!(h.ri_jumps, 0);
        assert!(h.cwnd_segments() < 51.0);
        h.cwnd = 50.0;
        ack(&mut h, &ev(9 * MS, rtt), OverlayCode::Low);
        assert_eq!(h.ri_jumps, 1);
        let want = 0.08 * h.bandwidth.bytes_per_s / 1000.0;
        assert!(
            (h.cwnd_segments() - want).abs() < 1e-9 && want > 90.0,
            "{want}"
        );
    }

    /// A sender with `ri_step = step`, a 10-segment window and its estimator started by a
    /// first ACK at 0 (code 10: no RI).
    fn ten_segments_estimating(step: RiStep, rtt: Time) -> Hfcc {
        let cfg = HfccConfig {
            ri_step: step,
            ..Default::default()
        };
        let mut h = Hfcc::new(cfg, MSS).unwrap();
        h.cwnd = 10.0;
        ack(&mut h, &ev(0, rtt), OverlayCode::High);
        h
    }

    /// Eq. 8's bandwidth term once per RTT: an ACK every millisecond (1 MB/s, eight times
    /// the 10-segment window's rate) keeps the estimate above the window for 170 ms; the
    /// window jumps to it on the first `01` ACK and then once per RTT (at 1, 81 and 161 ms),
    /// or whenever the estimate is above it with `ri_step = ack`.
    #[test]
    fn ri_takes_the_bandwidth_term_once_per_rtt() {
        let rtt = 80 * MS;
        for step in [RiStep::Rtt, RiStep::Ack] {
            let mut h = ten_segments_estimating(step, rtt);
            let mut at = Vec::new();
            for k in 1..=170u64 {
                let before = h.ri_jumps;
                ack(&mut h, &ev(k * MS, rtt), OverlayCode::Low);
                if h.ri_jumps > before {
                    at.push(k);
                }
            }
            match step {
                RiStep::Rtt => assert_eq!(at, [1, 81, 161]),
                RiStep::Ack => assert!(at.len() > 3, "{at:?}"),
                RiStep::RttPeak => unreachable!(),
            }
        }
    }

    /// A ramp's ACKs come back as a burst per RTT (here 10 ACKs 1 ms apart, then 71 ms
    /// idle): B_n peaks at the end of each burst and sags over the gap. `Rtt` takes the term
    /// at the head of a burst, where it is lowest; `RttPeak` takes the previous burst's peak,
    /// which is the largest estimate the round saw.
    #[test]
    fn ri_peak_takes_the_rounds_largest_estimate() {
        let rtt = 80 * MS;
        let run = |step| {
            let mut h = ten_segments_estimating(step, rtt);
            let mut steps = Vec::new();
            let mut peak = 0.0f64;
            for round in 0..4u64 {
                for i in 0..10u64 {
                    let before = h.ri_due;
                    ack(
                        &mut h,
                        &ev(round * rtt + (i + 1) * MS, rtt),
                        OverlayCode::Low,
                    );
                    if h.ri_due != before {
                        steps.push((round, i, peak));
                    }
                    peak = peak.max(h.bandwidth.bytes_per_s);
                }
            }
            (h, steps)
        };
        let (head, head_steps) = run(RiStep::Rtt);
        let (peak, peak_steps) = run(RiStep::RttPeak);
        // Both step at the head of each burst.
        let at = |s: &[(u64, u64, f64)]| s.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
        assert_eq!(at(&head_steps), [(0, 0), (1, 0), (2, 0), (3, 0)]);
        assert_eq!(at(&peak_steps), at(&head_steps));
        // The peak reading's window is the previous burst's largest estimate times min RTT.
        assert!(peak.cwnd > head.cwnd, "{} vs {}", peak.cwnd, head.cwnd);
        assert!(peak.ri_jumps > head.ri_jumps);
    }

    /// A timeout ends the round: the peak of the ACKs before it does not carry into the
    /// window after the repair (the first ACK after it takes its own estimate only).
    #[test]
    fn ri_peak_forgets_the_round_before_a_timeout() {
        let rtt = 80 * MS;
        let mut peak = ten_segments_estimating(RiStep::RttPeak, rtt);
        let mut head = ten_segments_estimating(RiStep::Rtt, rtt);
        for h in [&mut peak, &mut head] {
            // A fast burst of `01` ACKs raises the estimate (and the peak; the term is taken at
            // the first, then not for an RTT), then the timer fires.
            for i in 1..=10u64 {
                ack(h, &ev(i * MS, rtt), OverlayCode::Low);
            }
            h.on_rto(20 * MS, 10_000);
            assert_eq!(h.cwnd, 1.0);
            ack(h, &ev(rtt + 20 * MS, rtt), OverlayCode::Low);
        }
        assert_eq!(
            peak.cwnd, head.cwnd,
            "the peak reading took a pre-timeout estimate"
        );
    }

    /// Eqs. 2–3 scale the increments by the routers' `t_p`, "to eliminate the RTT unfairness"
    /// (§III): behind a router whose `t_p` is 80 ms, a 60-ms flow's A²I adds
    /// β·(60/80)² = 0.5625 segments per RTT and a 360-ms flow's β·(360/80)² = 20.25, so both
    /// rates grow by β/t_p² = 156.25 segments/s per second (0.5625/0.06², 20.25/0.36²). With
    /// `t_p` taken from each flow's own RTT (80 and 400 ms) the long flow's rate would grow 25
    /// times slower: 0.81/0.36² = 6.25. RI's exponent is capped at 2.5 (VCP's cap).
    #[test]
    fn increments_scale_by_the_t_p_the_routers_return() {
        let t_p = 80 * MS;
        let mut growth = Vec::new();
        for (rtt_ms, per_rtt, ri) in [(60, 0.5625, 0.75), (360, 20.25, 2.5)] {
            let rtt = rtt_ms * MS;
            let mut h = hfcc(10.0);
            h.on_signal(
                &ev(0, rtt),
                Signal::LoadInterval {
                    code: OverlayCode::High.bits(),
                    t_rho: t_p,
                },
            );
            h.on_ack(&ev(0, rtt));
            assert_eq!(h.t_p_s(), 0.08, "{rtt_ms} ms");
            assert_eq!(h.beta(), 1.0);
            let w = h.cwnd_segments();
            assert!(
                (h.ai_increment() * w - per_rtt).abs() < 1e-9,
                "{rtt_ms} ms: {}",
                h.ai_increment() * w
            );
            assert!(
                (h.ri_increment() - (1.0625f64.powf(ri) - 1.0)).abs() < 1e-12,
                "{rtt_ms} ms"
            );
            growth.push(per_rtt / (rtt_ms as f64 / 1e3).powi(2));
        }
        assert!(
            (growth[0] - 156.25).abs() < 1e-9 && (growth[1] - 156.25).abs() < 1e-9,
            "{growth:?}"
        );
        // Routers that return no interval (none on the path speaks it): the flow's own RTT
        // picks t_p, 360 ms → 400 ms.
        let mut h = hfcc(10.0);
        h.on_signal(&ev(0, 360 * MS), Signal::Load(OverlayCode::High.bits()));
        h.on_ack(&ev(0, 360 * MS));
        assert_eq!(h.t_p_s(), 0.4);
    }

    /// An ACK that brings no `t_p` (its segment crossed no router announcing one: none speaks
    /// HFCC, or a router's fixed `t_p` is outside S) keeps the last one the routers returned;
    /// the sender goes back to its own RTT's only before the first. RTT 360 ms (own: 400 ms).
    #[test]
    fn an_ack_without_t_p_keeps_the_last_one_returned() {
        let rtt = 360 * MS;
        let mut h = hfcc(10.0);
        let with = |t_rho| Signal::LoadInterval {
            code: OverlayCode::High.bits(),
            t_rho,
        };
        let without = Signal::Load(OverlayCode::High.bits());
        let mut t_p = Vec::new();
        for (k, signal) in [
            without,
            with(80 * MS),
            without,
            without,
            with(200 * MS),
            without,
        ]
        .into_iter()
        .enumerate()
        {
            let e = ev(k as Time * MS, rtt);
            h.on_signal(&e, signal);
            h.on_ack(&e);
            t_p.push(h.t_p_s());
        }
        assert_eq!(t_p, [0.4, 0.08, 0.08, 0.08, 0.2, 0.2]);
        // An ACK the codec turns into no signal at all changes nothing either.
        h.on_ack(&ev(10 * MS, rtt));
        assert_eq!(h.t_p_s(), 0.2);
    }

    /// `adaptive`, the name `own_rtt` had before the routers returned their `t_p`, still reads
    /// as `own_rtt`: scenario files written then replay as they ran (a recorded run.json names
    /// it), and the parameters are written back under the new name. An unknown name is an
    /// error naming the key.
    #[test]
    fn the_old_name_adaptive_reads_as_own_rtt() {
        use crate::scenario::registry::params;
        let p = |v: &str| serde_json::json!({ "t_p": v }).as_object().unwrap().clone();
        let cfg: HfccConfig = params("flows.cc_params", &p("adaptive")).unwrap();
        assert_eq!(cfg.t_p, TpMode::OwnRtt);
        assert_eq!(serde_json::to_value(cfg.t_p).unwrap(), "own_rtt");
        for (name, mode) in [
            ("path", TpMode::Path),
            ("own_rtt", TpMode::OwnRtt),
            ("fixed", TpMode::Fixed),
        ] {
            let cfg: HfccConfig = params("flows.cc_params", &p(name)).unwrap();
            assert_eq!(cfg.t_p, mode);
        }
        let e = params::<HfccConfig>("flows.cc_params", &p("own")).unwrap_err();
        assert_eq!(e.path, "flows.cc_params.t_p", "{e}");
    }

    /// With ns-2's 10 ms tick an RTT of 80.07 ms is 80 ms: t_p = 80 ms and rtt/t_p = 1, so RI
    /// is ×1.0625 per RTT; exact, the sender's own rule still reads it as 80 ms at a
    /// millisecond's resolution (rtt/t_p = 1.000875), and 80.6 ms as 200 ms (×1.0625^0.403).
    #[test]
    fn the_rtt_in_ticks_picks_t_p() {
        let us = crate::time::US;
        for (rtt, tick, t_p, inc) in [
            (80 * MS + 70 * us, 0.01, 0.08, 0.0625),
            (
                80 * MS + 70 * us,
                0.0,
                0.08,
                1.0625f64.powf(80.07 / 80.0) - 1.0,
            ),
            (
                80 * MS + 600 * us,
                0.0,
                0.2,
                1.0625f64.powf(0.0806 / 0.2) - 1.0,
            ),
        ] {
            let mut h = Hfcc::new(
                HfccConfig {
                    rtt_tick_s: tick,
                    t_p: TpMode::OwnRtt,
                    ..Default::default()
                },
                MSS,
            )
            .unwrap();
            h.cwnd = 10.0;
            h.on_ack(&ev(0, rtt));
            assert!((h.t_p_s() - t_p).abs() < 1e-12, "{tick}: {}", h.t_p_s());
            assert!((h.ri_increment() - inc).abs() < 1e-12, "{tick}");
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |c: HfccConfig| Hfcc::new(c, MSS).err().unwrap();
        let e = err(HfccConfig {
            beta_max: 0.5,
            ..Default::default()
        });
        assert!(e.starts_with("beta_max:"), "{e}");
        let e = err(HfccConfig {
            gamma_max: 1.0,
            ..Default::default()
        });
        assert!(e.starts_with("gamma_min:"), "{e}");
        let e = err(HfccConfig {
            pi_min: 0.0,
            ..Default::default()
        });
        assert!(e.starts_with("pi_min:"), "{e}");
    }

    #[test]
    fn a_cumulative_ack_counts_two_segments_at_most() {
        // An ACK ending a loss repair that covers 500 segments: two A²I steps, not 500
        // (cc::MAX_SEGMENTS_PER_ACK, RFC 3465's L = 2).
        let rtt = 80 * MS;
        let mut h = hfcc(10.0);
        let step = ack(&mut h, &ev(MS, rtt), OverlayCode::High);
        let mut h = hfcc(10.0);
        let big = AckEvent {
            acked_bytes: 500 * MSS as u64,
            ..ev(MS, rtt)
        };
        let d = ack(&mut h, &big, OverlayCode::High);
        assert!(
            step > 0.0 && (d - 2.0 * step).abs() < 1e-9,
            "{d} against {step}"
        );
        // ns-2's senders: one step per new ACK.
        let mut h = Hfcc::new(
            HfccConfig {
                max_segments_per_ack: 1.0,
                ..Default::default()
            },
            MSS,
        )
        .unwrap();
        h.cwnd = 10.0;
        let d = ack(&mut h, &big, OverlayCode::High);
        assert!((d - step).abs() < 1e-9, "{d} against {step}");
        let e = Hfcc::new(
            HfccConfig {
                max_segments_per_ack: 0.5,
                ..Default::default()
            },
            MSS,
        )
        .err()
        .unwrap();
        assert!(e.starts_with("max_segments_per_ack:"), "{e}");
    }
}
