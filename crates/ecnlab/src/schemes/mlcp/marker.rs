//! MLCP's router: VCP's load factor in 15 levels, and `t_p` from the flows' mean RTT.

use super::{code_of, TOP_CODE};
use crate::marker::load::{
    load_meter_config, AdaptiveInterval, IntervalRule, LoadMeter, LoadMeterConfig, INTERVAL_SET_MS,
};
use crate::marker::{Marker, PortState, PortView};
use crate::packet::Packet;
use crate::time::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MlcpMarkerConfig {
    /// Load-factor interval `t_p` in seconds (until the mean RTT sets it).
    pub t_p_s: f64,
    /// Queue sampling interval in seconds.
    pub t_q_s: f64,
    /// Weight of the standing queue in the load (VCP's κ_q).
    pub kappa_q: f64,
    /// Target utilisation γ_l.
    pub target_utilization: f64,
    /// EWMA weight of each interval's mean queue sample (VCP's reading).
    pub queue_weight: f64,
    /// Weight a of each packet's RTT in the mean RTT.
    pub rtt_weight: f64,
    /// Take `t_p` from S by `t_p_rule` (else keep `t_p_s`).
    pub adapt_t_p: bool,
    /// Which element of S the mean RTT selects: the smallest at or above it (HFCC §IV-D's
    /// account of MLCP's rule, `t_p = min{s ∈ S | s ≥ RTT}`: the interval outlasts most
    /// RTTs), or the nearest.
    pub t_p_rule: IntervalRule,
}

impl Default for MlcpMarkerConfig {
    fn default() -> Self {
        MlcpMarkerConfig {
            t_p_s: 0.2,
            t_q_s: 0.01,
            kappa_q: 0.5,
            target_utilization: 0.98,
            queue_weight: 0.25,
            rtt_weight: 0.02,
            adapt_t_p: true,
            t_p_rule: IntervalRule::AtOrAbove,
        }
    }
}

impl MlcpMarkerConfig {
    fn meter(&self) -> LoadMeterConfig {
        load_meter_config!(self, t_p_s)
    }

    pub fn validate(&self) -> Result<(), String> {
        self.meter().validate()?;
        AdaptiveInterval::validate_weight(self.rtt_weight)?;
        let shortest = INTERVAL_SET_MS[0] as f64 / 1e3;
        if self.adapt_t_p && self.t_q_s > shortest {
            return Err(format!(
                "t_q_s: {} must be at most the shortest adaptive t_p ({shortest} s)",
                self.t_q_s
            ));
        }
        Ok(())
    }
}

pub struct MlcpMarker {
    cfg: MlcpMarkerConfig,
    meter: LoadMeter,
    code: u8,
    interval: AdaptiveInterval,
}

impl MlcpMarker {
    pub fn new(cfg: MlcpMarkerConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(MlcpMarker {
            meter: LoadMeter::new(cfg.meter())?,
            interval: AdaptiveInterval::new(cfg.rtt_weight, cfg.t_p_s, cfg.t_p_rule),
            cfg,
            code: 1,
        })
    }

    /// The code written into departing packets (the last completed interval's).
    pub fn code(&self) -> u8 {
        self.code
    }

    pub fn mean_rtt_ms(&self) -> Option<f64> {
        self.interval.mean_ms()
    }

    /// The index in S of the `t_p` in force.
    pub fn interval_code(&self) -> u8 {
        self.interval.code()
    }
}

impl Marker for MlcpMarker {
    fn feedback(&self) -> &'static str {
        "mlcp"
    }

    #[inline]
    fn on_arrival(&mut self, _port: &dyn PortState, pkt: &mut Packet) {
        self.meter.on_arrival(pkt.wire_len());
        let rtt_us = pkt.meta.rtt_hint_us;
        if rtt_us > 0 {
            self.interval.observe(rtt_us as f64 / 1e3);
        }
    }

    #[inline]
    fn on_dequeue(&mut self, _port: &dyn PortState, pkt: &mut Packet) {
        if !pkt.ip.ecn.is_ect() {
            return;
        }
        let m = &mut pkt.meta;
        let own = self.interval.code() + 1;
        if self.code > m.ideal_load {
            m.ideal_load = self.code;
            m.ideal_interval = own;
        } else if self.code == m.ideal_load {
            m.ideal_interval = m.ideal_interval.max(own);
        }
    }

    fn next_timer(&self) -> Time {
        self.meter.next_timer()
    }

    fn on_timer(&mut self, v: &PortView) {
        if self.meter.on_timer(v) == 0 {
            return;
        }
        self.code = code_of(self.meter.load_factor());
        debug_assert!((1..=TOP_CODE).contains(&self.code));
        if self.cfg.adapt_t_p {
            self.interval.apply(&mut self.meter);
        }
    }

    fn gauge(&self) -> Option<f64> {
        Some(self.meter.load_factor())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marker::testing::{run_timers_until, udp, view};
    use crate::time::MS;
    use crate::wire::Ecn;

    fn pkt(ecn: Ecn, rtt_ms: u32) -> Packet {
        let mut p = udp(0, ecn);
        p.meta.rtt_hint_us = rtt_ms * 1000;
        p
    }

    /// Runs the first interval with `bytes` arriving on 10 Mb/s (γ·C·t_p = 245 kB at 200 ms).
    fn after_one_interval(m: &mut MlcpMarker, bytes: u32) {
        m.meter.on_arrival(bytes);
        run_timers_until(m, 200 * MS);
    }

    #[test]
    fn the_level_is_raised_along_the_path_with_its_interval() {
        let mut m = MlcpMarker::new(MlcpMarkerConfig {
            adapt_t_p: false,
            ..Default::default()
        })
        .unwrap();
        // 0.45 of γ·C·t_p → level [0.4, 0.5): code 5.
        after_one_interval(&mut m, (0.45 * 245_000.0) as u32);
        assert_eq!(m.code(), 5);
        let mut p = pkt(Ecn::ECT1, 0);
        m.on_dequeue(&view(0), &mut p);
        assert_eq!((p.meta.ideal_load, p.meta.ideal_interval), (5, 2));
        // A more loaded router upstream wins; a less loaded one downstream changes nothing.
        let mut p = pkt(Ecn::ECT1, 0);
        p.meta.ideal_load = 9;
        p.meta.ideal_interval = 1;
        m.on_dequeue(&view(0), &mut p);
        assert_eq!((p.meta.ideal_load, p.meta.ideal_interval), (9, 1));
        // Same level: the longer interval.
        let mut p = pkt(Ecn::ECT1, 0);
        p.meta.ideal_load = 5;
        p.meta.ideal_interval = 1;
        m.on_dequeue(&view(0), &mut p);
        assert_eq!(p.meta.ideal_interval, 2);
        // Not-ECT packets are left alone.
        let mut p = pkt(Ecn::NOT_ECT, 0);
        m.on_dequeue(&view(0), &mut p);
        assert_eq!(p.meta.ideal_load, 0);
    }

    #[test]
    fn the_interval_follows_the_mean_rtt() {
        let mut m = MlcpMarker::new(MlcpMarkerConfig::default()).unwrap();
        // First sample sets m̄ = 500 ms; then 0.02·300 + 0.98·500 = 496.
        m.on_arrival(&view(0), &mut pkt(Ecn::ECT1, 500));
        m.on_arrival(&view(0), &mut pkt(Ecn::ECT1, 300));
        assert!((m.mean_rtt_ms().unwrap() - 496.0).abs() < 1e-9);
        after_one_interval(&mut m, 0);
        // The smallest element of S at or above 496 ms: 600 ms (index 3).
        assert_eq!(m.interval_code(), 3);
        assert_eq!(m.meter.interval(), 600 * MS);
        assert_eq!(m.code(), code_of(m.meter.load_factor()));
    }

    #[test]
    fn the_interval_outlasts_an_rtt_with_queueing() {
        // 80 ms of propagation and 10 ms of queue: t_p = 200 ms, not the nearest 80 ms, which
        // is shorter than the RTT (HFCC §IV-D: t_p greater than most RTTs).
        let mut m = MlcpMarker::new(MlcpMarkerConfig::default()).unwrap();
        m.on_arrival(&view(0), &mut pkt(Ecn::ECT1, 90));
        after_one_interval(&mut m, 0);
        assert_eq!(m.meter.interval(), 200 * MS);
        // The nearest rule, kept as a reading.
        let mut m = MlcpMarker::new(MlcpMarkerConfig {
            t_p_rule: IntervalRule::Nearest,
            ..Default::default()
        })
        .unwrap();
        m.on_arrival(&view(0), &mut pkt(Ecn::ECT1, 90));
        after_one_interval(&mut m, 0);
        assert_eq!(m.meter.interval(), 80 * MS);
    }
}
