//! BMCC's router: VCP's load factor, told one bit at a time against each packet's probe
//! threshold.

use super::{load_units, probe_threshold};
use crate::marker::load::{load_meter_config, LoadMeter, LoadMeterConfig};
use crate::marker::{Marker, PortState, PortView};
use crate::packet::Packet;
use crate::time::Time;
use crate::wire::Ecn;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BmccMarkerConfig {
    /// Load-factor interval `t_p` in seconds.
    pub t_p_s: f64,
    /// Queue sampling interval in seconds.
    pub t_q_s: f64,
    /// Weight of the standing queue in the load (VCP's κ_q).
    pub kappa_q: f64,
    /// Target utilisation γ_l.
    pub target_utilization: f64,
    /// EWMA weight of each interval's mean queue sample (VCP's reading).
    pub queue_weight: f64,
}

impl Default for BmccMarkerConfig {
    fn default() -> Self {
        BmccMarkerConfig {
            t_p_s: 0.2,
            t_q_s: 0.01,
            kappa_q: 0.5,
            target_utilization: 0.98,
            queue_weight: 0.25,
        }
    }
}

impl BmccMarkerConfig {
    fn meter(&self) -> LoadMeterConfig {
        load_meter_config!(self, t_p_s)
    }
}

pub struct BmccMarker {
    meter: LoadMeter,
    /// The last interval's load in threshold units (0 before the first: nothing is marked).
    load: u16,
}

impl BmccMarker {
    pub fn new(cfg: BmccMarkerConfig) -> Result<Self, String> {
        Ok(BmccMarker {
            meter: LoadMeter::new(cfg.meter())?,
            load: 0,
        })
    }

    pub fn load_factor(&self) -> f64 {
        self.meter.load_factor()
    }
}

impl Marker for BmccMarker {
    fn feedback(&self) -> &'static str {
        "bmcc"
    }

    #[inline]
    fn on_arrival(&mut self, _port: &dyn PortState, pkt: &mut Packet) {
        self.meter.on_arrival(pkt.wire_len());
    }

    #[inline]
    fn on_dequeue(&mut self, _port: &dyn PortState, pkt: &mut Packet) {
        if pkt.ip.ecn.is_ect() && self.load > probe_threshold(pkt.ip.ident) {
            pkt.ip.ecn = Ecn::CE;
        }
    }

    fn next_timer(&self) -> Time {
        self.meter.next_timer()
    }

    fn on_timer(&mut self, v: &PortView) {
        if self.meter.on_timer(v) > 0 {
            self.load = load_units(self.meter.load_factor());
        }
    }

    fn gauge(&self) -> Option<f64> {
        Some(self.meter.load_factor())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marker::testing::{run_timers_until, udp as pkt, view};
    use crate::time::MS;

    /// A marker whose first interval ran at load `rho` on 10 Mb/s.
    fn at_load(rho: f64) -> BmccMarker {
        let mut m = BmccMarker::new(BmccMarkerConfig::default()).unwrap();
        m.meter.on_arrival((rho * 245_000.0) as u32);
        run_timers_until(&mut m, 200 * MS);
        m
    }

    #[test]
    fn two_routers_mark_as_the_more_loaded_one() {
        let (mut a, mut b) = (at_load(0.5), at_load(1.2));
        let top = load_units(b.load_factor());
        for ident in (0..=u16::MAX).step_by(97) {
            for order in [false, true] {
                let mut p = pkt(ident, Ecn::ECT0);
                let (first, second) = if order {
                    (&mut a, &mut b)
                } else {
                    (&mut b, &mut a)
                };
                first.on_dequeue(&view(0), &mut p);
                second.on_dequeue(&view(0), &mut p);
                assert_eq!(p.ip.ecn == Ecn::CE, top > probe_threshold(ident), "{ident}");
            }
        }
    }

    #[test]
    fn packets_are_marked_when_the_load_exceeds_their_threshold() {
        let mut m = BmccMarker::new(BmccMarkerConfig::default()).unwrap();
        // Before the first interval nothing is marked, not even threshold 0.
        let mut p = pkt(0, Ecn::ECT0);
        m.on_dequeue(&view(0), &mut p);
        assert_eq!(p.ip.ecn, Ecn::ECT0);
        // 0.6 of γ·C·t_p (245 kB at 10 Mb/s, 200 ms) arrives: load 0.6 → 0.3 of the scale.
        m.meter.on_arrival((0.6 * 245_000.0) as u32);
        run_timers_until(&mut m, 200 * MS);
        assert!((m.load_factor() - 0.6).abs() < 1e-3);
        // IP-ID 2 probes 0.25 of the scale (load 0.5): marked; IP-ID 1 probes 1.0: not.
        for (ident, ecn, out) in [
            (2u16, Ecn::ECT0, Ecn::CE),
            (1, Ecn::ECT0, Ecn::ECT0),
            (2, Ecn::NOT_ECT, Ecn::NOT_ECT),
            (2, Ecn::ECT1, Ecn::CE),
        ] {
            let mut p = pkt(ident, ecn);
            m.on_dequeue(&view(200 * MS), &mut p);
            assert_eq!(p.ip.ecn, out, "ident {ident} {ecn:?}");
        }
    }
}
