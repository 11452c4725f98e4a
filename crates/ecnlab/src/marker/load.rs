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
use crate::time::{from_secs, to_secs, Time};

/// Parameters of a [`LoadMeter`]; schemes expose them under their own names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadMeterConfig {
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

impl LoadMeterConfig {
    /// "field: why" for the first bad value.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.t_rho_s.is_finite() && self.t_rho_s > 0.0) {
            return Err(format!("t_rho_s: {} must be positive", self.t_rho_s));
        }
        if !(self.t_q_s > 0.0 && self.t_q_s <= self.t_rho_s) {
            return Err(format!(
                "t_q_s: {} must be positive and at most t_rho_s ({})",
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
