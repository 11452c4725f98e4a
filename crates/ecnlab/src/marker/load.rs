//! The load-factor estimator of the load-factor family (VCP, UNO, HFCC): every interval
//! `t_ρ` a port's load factor `ρ = (λ + κ_q·q̄) / (γ_l·C·t_ρ)`, with λ the bytes that arrived
//! in the interval and q̄ an EWMA of the queue sampled every `t_q`. Schemes differ in how
//! they encode ρ into packets, not in how they measure it, so the measurement lives here
//! once and each scheme's marker owns one.
//!
//! Readings shared by the family (VCP's `vcp-queue.cc` is the reference implementation):
//! - λ counts every packet arriving at the port, including those the buffer then drops and
//!   ACKs (ns-2 counts in `enque`, before DropTail decides).
//! - At the end of each interval the mean of its queue samples enters q̄ with weight
//!   `queue_weight`; a sample falling on an interval's end belongs to that interval.
//! - `C` is the link rate at the interval's end; `t_ρ` the interval's actual length.
//! - The interval may change between intervals ([`LoadMeter::set_interval`]: UNO's and
//!   HFCC's routers adapt `t_ρ` to the flows' mean RTT); the change applies from the next
//!   interval on.

use super::PortView;
use crate::time::{from_secs, to_secs, Time, MS};
use serde::{Deserialize, Serialize};

/// Parameters of a [`LoadMeter`]; schemes expose them under their own names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadMeterConfig {
    /// The scheme's key for the interval (`t_rho_s`, `t_p_s`), named in errors.
    pub interval_key: &'static str,
    /// Load-factor interval t_ρ in seconds.
    pub t_rho_s: f64,
    /// Queue sampling interval t_q in seconds.
    pub t_q_s: f64,
    /// Weight κ_q of the standing queue in the load.
    pub kappa_q: f64,
    /// Target utilisation γ_l.
    pub target_utilization: f64,
    /// EWMA weight of each interval's mean queue sample in q̄.
    pub queue_weight: f64,
}

/// The [`LoadMeterConfig`] of a scheme's marker configuration that holds the meter's fields
/// under their usual names and the interval under `$interval`.
macro_rules! load_meter_config {
    ($cfg:expr, $interval:ident) => {
        $crate::marker::load::LoadMeterConfig {
            interval_key: stringify!($interval),
            t_rho_s: $cfg.$interval,
            t_q_s: $cfg.t_q_s,
            kappa_q: $cfg.kappa_q,
            target_utilization: $cfg.target_utilization,
            queue_weight: $cfg.queue_weight,
        }
    };
}
pub(crate) use load_meter_config;

impl LoadMeterConfig {
    /// "field: why" for the first bad value.
    pub fn validate(&self) -> Result<(), String> {
        let key = self.interval_key;
        if !(self.t_rho_s.is_finite() && self.t_rho_s > 0.0) {
            return Err(format!("{key}: {} must be positive", self.t_rho_s));
        }
        if !(self.t_q_s > 0.0 && self.t_q_s <= self.t_rho_s) {
            return Err(format!(
                "t_q_s: {} must be positive and at most {key} ({})",
                self.t_q_s, self.t_rho_s
            ));
        }
        if !(self.kappa_q.is_finite() && self.kappa_q >= 0.0) {
            return Err(format!("kappa_q: {} must be non-negative", self.kappa_q));
        }
        if !(self.target_utilization > 0.0 && self.target_utilization <= 1.0) {
            return Err(format!(
                "target_utilization: {} is outside (0, 1]",
                self.target_utilization
            ));
        }
        if !(self.queue_weight > 0.0 && self.queue_weight <= 1.0) {
            return Err(format!(
                "queue_weight: {} is outside (0, 1]",
                self.queue_weight
            ));
        }
        Ok(())
    }
}

/// The load bands both VCP's and UNO's routers quantise into: `low_load` ends the low band,
/// `overload` starts the overload band.
pub fn validate_bands(low_load: f64, overload: f64) -> Result<(), String> {
    if !(low_load > 0.0 && overload > low_load && overload.is_finite()) {
        return Err(format!(
            "overload: {overload} must be greater than low_load ({low_load}) > 0"
        ));
    }
    Ok(())
}

/// The load intervals the family's routers choose from when they adapt `t_ρ` to the flows'
/// RTT, in milliseconds (MLCP; UNO's set S, §III-B; HFCC's S, §IV-D).
pub const INTERVAL_SET_MS: [u32; 8] = [80, 200, 400, 600, 800, 1000, 1200, 1400];

/// The index of the smallest interval of the set at or above `ms`, the last when none is.
fn index_at_or_above(ms: f64) -> usize {
    INTERVAL_SET_MS
        .iter()
        .position(|&s| s as f64 >= ms)
        .unwrap_or(INTERVAL_SET_MS.len() - 1)
}

/// The smallest interval of the set at or above `ms`, the largest when none is (HFCC §IV-D:
/// `t_p = min{s ∈ S | s ≥ RTT_d}`, 1400 ms above), with `ms` taken to the nearest multiple of
/// `resolution_ms` (0: exact). Eq. 12's mean falls back towards samples equal to an element
/// only geometrically, from above: compared exactly it never returns to the element it left
/// after a queue excursion, and `t_p` stays at the next one for the rest of a run.
pub fn interval_at_or_above(ms: f64, resolution_ms: f64) -> u32 {
    let ms = if resolution_ms > 0.0 {
        (ms / resolution_ms).round() * resolution_ms
    } else {
        ms
    };
    INTERVAL_SET_MS[index_at_or_above(ms)]
}

/// The index in the set of the interval nearest `ms`: the code UCP2's senders carry for their
/// RTT (three bits, UNO §III-B), and the routers' `IntervalRule::Nearest`, the alternative to
/// MLCP's rule (at or above).
pub fn nearest_interval_code(ms: f64) -> u8 {
    let mut best = 0;
    for (i, &s) in INTERVAL_SET_MS.iter().enumerate() {
        if (s as f64 - ms).abs() < (INTERVAL_SET_MS[best] as f64 - ms).abs() {
            best = i;
        }
    }
    best as u8
}

/// The index in the set of the smallest interval at or above `ms` (the largest when none
/// is). A mean of equal samples can land a rounding error above its element (0.02·80 +
/// 0.98·80 is not exactly 80 in binary), so `ms` is taken at a nanosecond's resolution
/// (MLCP's routers; HFCC's compare at `HfccMarkerConfig::t_p_resolution_ms`, whole
/// milliseconds by default, through [`interval_at_or_above`]).
pub fn interval_code_at_or_above(ms: f64) -> u8 {
    index_at_or_above(ms - 1e-6) as u8
}

/// How a router picks its interval from [`INTERVAL_SET_MS`] given its flows' mean RTT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalRule {
    /// The smallest element at or above the mean: MLCP's rule, as HFCC §IV-D spells it out
    /// (`t_p = min{s ∈ S | s ≥ RTT}`); the interval is then longer than most flows' RTT,
    /// the first of the two conditions UNO §III-B puts on `t_ρ`, and a mean that moves
    /// between two elements keeps the upper one.
    #[default]
    AtOrAbove,
    /// The element nearest the mean: a mean near the midpoint of two elements moves the
    /// interval back and forth across it.
    Nearest,
}

impl IntervalRule {
    pub fn code(self, mean_ms: f64) -> u8 {
        match self {
            IntervalRule::AtOrAbove => interval_code_at_or_above(mean_ms),
            IntervalRule::Nearest => nearest_interval_code(mean_ms),
        }
    }
}

/// A router's interval adapted to its flows (UNO §III-B, MLCP): the mean of the RTTs its
/// senders announce — an EWMA of weight `weight`, started at the first sample — and the
/// element of [`INTERVAL_SET_MS`] the [`IntervalRule`] picks for it, which
/// [`apply`](Self::apply) gives the meter.
#[derive(Clone, Debug)]
pub struct AdaptiveInterval {
    weight: f64,
    rule: IntervalRule,
    mean_ms: Option<f64>,
    code: u8,
    /// RTT samples received.
    pub samples: u64,
}

impl AdaptiveInterval {
    /// Starts at the interval `rule` picks for `initial_s`.
    pub fn new(weight: f64, initial_s: f64, rule: IntervalRule) -> Self {
        AdaptiveInterval {
            weight,
            rule,
            mean_ms: None,
            code: rule.code(initial_s * 1e3),
            samples: 0,
        }
    }

    /// Checks the `rtt_weight` of a marker's configuration.
    pub fn validate_weight(weight: f64) -> Result<(), String> {
        if weight > 0.0 && weight <= 1.0 {
            Ok(())
        } else {
            Err(format!("rtt_weight: {weight} is outside (0, 1]"))
        }
    }

    #[inline]
    pub fn observe(&mut self, rtt_ms: f64) {
        let a = self.weight;
        self.mean_ms = Some(self.mean_ms.map_or(rtt_ms, |m| a * rtt_ms + (1.0 - a) * m));
        self.samples += 1;
    }

    /// The mean RTT in milliseconds, once a sender has announced one.
    pub fn mean_ms(&self) -> Option<f64> {
        self.mean_ms
    }

    /// The index in the set of the interval in force.
    pub fn code(&self) -> u8 {
        self.code
    }

    /// Moves `meter` to the interval the rule picks for the mean (nothing before the first
    /// sample).
    pub fn apply(&mut self, meter: &mut LoadMeter) {
        if let Some(m) = self.mean_ms {
            self.code = self.rule.code(m);
            meter.set_interval(INTERVAL_SET_MS[self.code as usize] as Time * MS);
        }
    }
}

/// MLCP's smoothed mean RTT of the packets crossing a port (HFCC eqs. 11–12): every window
/// `T` the mean `RTT_T` of the RTTs the packets carried; then
/// `RTT_d += θ·(RTT_T − RTT_d)` with `θ = T/RTT_d` when `RTT_T ≥ RTT_d` (rise fast) and
/// `θ = T·RTT_T/(φ·RTT_d)` otherwise (fall slowly). θ is capped at 1 (RTTs shorter than `T`).
/// The first window with packets sets `RTT_d`; windows without packets change nothing.
///
/// The falling gain is not dimensionless (it is `T/φ` times a ratio): its value depends on
/// the unit `T` is counted in, `unit_s` seconds (1e-3: milliseconds, 1: seconds).
#[derive(Clone, Debug)]
pub struct MeanRtt {
    window: Time,
    phi: f64,
    /// `T` in the unit eq. 12 counts it in.
    window_units: f64,
    next_end: Time,
    sum_us: u64,
    n: u64,
    /// `RTT_d` in seconds; 0 before the first window with packets.
    rtt_d: f64,
}

impl MeanRtt {
    pub fn new(window: Time, phi: f64, unit_s: f64) -> Self {
        MeanRtt {
            window: window.max(1),
            phi,
            window_units: to_secs(window.max(1)) / unit_s,
            next_end: window.max(1),
            sum_us: 0,
            n: 0,
            rtt_d: 0.0,
        }
    }

    /// A packet carrying an RTT of `rtt_us` microseconds (0: none) crossed the port.
    #[inline]
    pub fn on_packet(&mut self, rtt_us: u32) {
        if rtt_us > 0 {
            self.sum_us += rtt_us as u64;
            self.n += 1;
        }
    }

    pub fn next_timer(&self) -> Time {
        self.next_end
    }

    /// Closes every window ended by `now`; true if `RTT_d` changed.
    pub fn on_timer(&mut self, now: Time) -> bool {
        let mut changed = false;
        while self.next_end <= now {
            self.next_end += self.window;
            if self.n == 0 {
                continue;
            }
            let rtt_t = self.sum_us as f64 / self.n as f64 / 1e6;
            self.sum_us = 0;
            self.n = 0;
            changed = true;
            if self.rtt_d == 0.0 {
                self.rtt_d = rtt_t;
                continue;
            }
            let theta = if rtt_t >= self.rtt_d {
                to_secs(self.window) / self.rtt_d
            } else {
                self.window_units * rtt_t / (self.phi * self.rtt_d)
            };
            self.rtt_d += theta.min(1.0) * (rtt_t - self.rtt_d);
        }
        changed
    }

    /// `RTT_d` in seconds (0 before any packet carried an RTT).
    pub fn seconds(&self) -> f64 {
        self.rtt_d
    }
}

pub struct LoadMeter {
    cfg: LoadMeterConfig,
    t_rho: Time,
    t_q: Time,
    next_sample: Time,
    next_end: Time,
    interval_start: Time,
    /// Bytes arrived in the current interval (λ).
    arrived: u64,
    /// Queue samples of the current interval, in bytes.
    sample_sum: u64,
    samples: u32,
    /// q̄ in bytes.
    queue_avg: f64,
    rho: f64,
    /// Intervals completed.
    pub intervals: u64,
}

impl LoadMeter {
    /// A meter whose ticks start at time 0.
    pub fn new(cfg: LoadMeterConfig) -> Result<Self, String> {
        cfg.validate()?;
        let t_rho = from_secs(cfg.t_rho_s).max(1);
        let t_q = from_secs(cfg.t_q_s).max(1);
        Ok(LoadMeter {
            cfg,
            t_rho,
            t_q,
            next_sample: t_q,
            next_end: t_rho,
            interval_start: 0,
            arrived: 0,
            sample_sum: 0,
            samples: 0,
            queue_avg: 0.0,
            rho: 0.0,
            intervals: 0,
        })
    }

    /// ρ of the last completed interval (0 before the first).
    #[inline]
    pub fn load_factor(&self) -> f64 {
        self.rho
    }

    /// q̄ in bytes.
    pub fn queue_average(&self) -> f64 {
        self.queue_avg
    }

    /// The interval now in force.
    pub fn interval(&self) -> Time {
        self.t_rho
    }

    /// Makes the intervals after the current one `t_rho` long.
    pub fn set_interval(&mut self, t_rho: Time) {
        self.t_rho = t_rho.max(1);
    }

    /// A packet of `bytes` on the wire arrived at the port.
    #[inline]
    pub fn on_arrival(&mut self, bytes: u32) {
        self.arrived += bytes as u64;
    }

    pub fn next_timer(&self) -> Time {
        self.next_sample.min(self.next_end)
    }

    /// Runs every tick due at `v.now`; returns how many intervals ended.
    pub fn on_timer(&mut self, v: &PortView) -> u32 {
        let mut ended = 0;
        loop {
            let t = self.next_timer();
            if t > v.now {
                return ended;
            }
            if self.next_sample == t {
                self.sample_sum += v.backlog_bytes;
                self.samples += 1;
                self.next_sample += self.t_q;
            }
            if self.next_end == t {
                self.end_interval(t, v.rate_bps);
                self.next_end += self.t_rho;
                ended += 1;
            }
        }
    }

    fn end_interval(&mut self, end: Time, rate_bps: u64) {
        let mean = if self.samples > 0 {
            self.sample_sum as f64 / self.samples as f64
        } else {
            0.0
        };
        let w = self.cfg.queue_weight;
        self.queue_avg = (1.0 - w) * self.queue_avg + w * mean;
        let load = self.arrived as f64 + self.cfg.kappa_q * self.queue_avg;
        let capacity = self.cfg.target_utilization * rate_bps as f64 / 8.0
            * to_secs(end - self.interval_start);
        self.rho = if capacity > 0.0 {
            load / capacity
        } else if load > 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        self.arrived = 0;
        self.sample_sum = 0;
        self.samples = 0;
        self.interval_start = end;
        self.intervals += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn intervals_snap_up_to_the_set() {
        assert_eq!(interval_at_or_above(0.0, 0.0), 80);
        assert_eq!(interval_at_or_above(80.0, 0.0), 80);
        assert_eq!(interval_at_or_above(80.5, 0.0), 200);
        assert_eq!(interval_at_or_above(399.0, 0.0), 400);
        assert_eq!(interval_at_or_above(1400.0, 0.0), 1400);
        assert_eq!(interval_at_or_above(5000.0, 0.0), 1400);
        // At a millisecond's resolution: 80.49 is 80, 80.5 is 81.
        assert_eq!(interval_at_or_above(80.000_000_000_000_03, 0.0), 200);
        assert_eq!(interval_at_or_above(80.000_000_000_000_03, 1.0), 80);
        assert_eq!(interval_at_or_above(80.49, 1.0), 80);
        assert_eq!(interval_at_or_above(80.5, 1.0), 200);
        assert_eq!(interval_at_or_above(199.6, 1.0), 200);
        // The code form, with a mean of equal samples a rounding error above its element.
        let mut m = 80.0f64;
        for _ in 0..1000 {
            m = 0.02 * 80.0 + 0.98 * m;
        }
        assert_eq!(interval_code_at_or_above(m), 0);
        assert_eq!(interval_code_at_or_above(80.001), 1);
        assert_eq!(interval_code_at_or_above(140.0), 1);
        assert_eq!(interval_code_at_or_above(1e6), 7);
        assert_eq!(IntervalRule::Nearest.code(139.0), 0);
        assert_eq!(IntervalRule::AtOrAbove.code(139.0), 1);
    }

    /// Eqs. 11–12 by hand with T = 10 ms, φ = 50, the falling gain in seconds.
    #[test]
    fn mean_rtt_rises_fast_and_falls_slowly() {
        let mut m = MeanRtt::new(10 * MS, 50.0, 1.0);
        m.on_packet(80_000);
        m.on_packet(0); // carries no RTT
        m.on_packet(80_000);
        assert!(m.on_timer(10 * MS));
        assert_eq!(m.seconds(), 0.08);
        // RTT_T = 100 ms ≥ RTT_d: θ = 0.01/0.08 = 0.125 → 0.08 + 0.125·0.02.
        m.on_packet(100_000);
        m.on_timer(20 * MS);
        assert!((m.seconds() - 0.0825).abs() < 1e-12);
        // RTT_T = 50 ms < RTT_d: θ = 0.01·0.05/(50·0.0825).
        m.on_packet(50_000);
        m.on_timer(30 * MS);
        let theta = 0.01 * 0.05 / (50.0 * 0.0825);
        assert!((m.seconds() - (0.0825 - theta * 0.0325)).abs() < 1e-15);
        // A window without packets changes nothing; several windows close at once.
        let before = m.seconds();
        assert!(!m.on_timer(60 * MS));
        assert_eq!(m.seconds(), before);
        assert_eq!(m.next_timer(), 70 * MS);
    }

    /// The falling gain in milliseconds (T = 10, RTTs in ms, as HFCC §IV-D writes them):
    /// RTT_d = 82.5 ms, RTT_T = 50 ms → θ = 10·50/(50·82.5) = 0.1212…; the rising gain is
    /// the same ratio in either unit.
    #[test]
    fn mean_rtt_falling_gain_in_milliseconds() {
        let mut m = MeanRtt::new(10 * MS, 50.0, 1e-3);
        m.on_packet(80_000);
        m.on_timer(10 * MS);
        m.on_packet(100_000);
        m.on_timer(20 * MS);
        assert!((m.seconds() - 0.0825).abs() < 1e-12);
        m.on_packet(50_000);
        m.on_timer(30 * MS);
        let theta = 10.0 * 50.0 / (50.0 * 82.5);
        assert!((m.seconds() - (0.0825 - theta * 0.0325)).abs() < 1e-15);
    }
}
