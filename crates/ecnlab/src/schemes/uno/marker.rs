//! UNO's router: the family's load factor quantised into 8 levels, written one bit at a time
//! into the packets whose IP-ID residue matches (§II-A); with two bits, also the flows' mean
//! RTT in, and the router's `t_ρ` code out (§II-B).

use super::{level_of, Encoding, StampRule, HIGH, T_RHO_SET_MS};
use crate::marker::load::{
    load_meter_config, validate_bands, AdaptiveInterval, IntervalRule, LoadMeter, LoadMeterConfig,
};
use crate::marker::{Marker, PortState, PortView};
use crate::packet::Packet;
use crate::time::Time;
use crate::wire::Ecn;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UnoMarkerConfig {
    /// Load-factor interval t_ρ in seconds (the start value when it adapts).
    pub t_rho_s: f64,
    /// Queue sampling interval t_q in seconds.
    pub t_q_s: f64,
    /// Weight of the standing queue in the load (the paper's k_q = 0.25).
    pub kappa_q: f64,
    /// Target utilisation γ.
    pub target_utilization: f64,
    /// EWMA weight of each interval's mean queue sample in q̄ (VCP's reading).
    pub queue_weight: f64,
    /// Load below this is split into six low levels.
    pub low_load: f64,
    /// Load at or above this is overload.
    pub overload: f64,
    pub encoding: Encoding,
    pub stamp_rule: StampRule,
    /// Weight a of each RTT sample in the mean RTT m̄ (two bits only).
    pub rtt_weight: f64,
    /// With two bits, take the load interval t_ρ from S for m̄ (else keep `t_rho_s`).
    pub adapt_t_rho: bool,
    /// Which element of S: the smallest at or above m̄ (`at_or_above`, MLCP's rule) or the
    /// nearest (`nearest`).
    pub t_rho_rule: IntervalRule,
}

impl Default for UnoMarkerConfig {
    fn default() -> Self {
        UnoMarkerConfig {
            t_rho_s: 0.2,
            t_q_s: 0.01,
            kappa_q: 0.25,
            target_utilization: 0.98,
            queue_weight: 0.25,
            low_load: 0.8,
            overload: 1.0,
            encoding: Encoding::OneBit,
            stamp_rule: StampRule::Equal,
            rtt_weight: 0.02,
            adapt_t_rho: true,
            t_rho_rule: IntervalRule::AtOrAbove,
        }
    }
}

impl UnoMarkerConfig {
    pub fn meter(&self) -> LoadMeterConfig {
        load_meter_config!(self, t_rho_s)
    }

    pub fn validate(&self) -> Result<(), String> {
        self.meter().validate()?;
        validate_bands(self.low_load, self.overload)?;
        AdaptiveInterval::validate_weight(self.rtt_weight)?;
        if self.adapt_t_rho && self.encoding == Encoding::TwoBit {
            let min = T_RHO_SET_MS[0] as f64 / 1e3;
            if self.t_q_s > min {
                return Err(format!(
                    "t_q_s: {} must be at most the shortest adaptive t_rho ({min} s)",
                    self.t_q_s
                ));
            }
        }
        Ok(())
    }
}

pub struct UnoMarker {
    cfg: UnoMarkerConfig,
    meter: LoadMeter,
    level: u8,
    /// m̄ and this router's `t_ρ` in S; its samples come through the RTT bit.
    interval: AdaptiveInterval,
}

impl UnoMarker {
    pub fn new(cfg: UnoMarkerConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(UnoMarker {
            meter: LoadMeter::new(cfg.meter())?,
            interval: AdaptiveInterval::new(cfg.rtt_weight, cfg.t_rho_s, cfg.t_rho_rule),
            cfg,
            level: 0,
        })
    }

    /// The level stamped into departing packets (that of the last completed interval).
    pub fn level(&self) -> u8 {
        self.level
    }

    pub fn load_factor(&self) -> f64 {
        self.meter.load_factor()
    }

    /// m̄ in milliseconds, once a sender has told one.
    pub fn mean_rtt_ms(&self) -> Option<f64> {
        self.interval.mean_ms()
    }

    /// The `t_ρ` code this router announces (two bits).
    pub fn t_rho_code(&self) -> u8 {
        self.interval.code()
    }

    /// The load interval now in force.
    pub fn interval(&self) -> Time {
        self.meter.interval()
    }

    #[inline]
    fn stamps(&self, residue: u8) -> bool {
        match self.cfg.stamp_rule {
            StampRule::Equal => residue == self.level,
            StampRule::AtOrBelow => residue <= self.level,
        }
    }
}

impl Marker for UnoMarker {
    fn feedback(&self) -> &'static str {
        match self.cfg.encoding {
            Encoding::OneBit => "uno",
            Encoding::TwoBit => "uno2",
            Encoding::Header => "vcp3",
        }
    }

    #[inline]
    fn on_arrival(&mut self, _port: &dyn PortState, pkt: &mut Packet) {
        self.meter.on_arrival(pkt.wire_len());
        // A sender's RTT code: IP-ID bit 3 clear and the RTT bit set.
        if self.cfg.encoding == Encoding::TwoBit
            && pkt.ip.ident & 0b1000 == 0
            && pkt.ip.ecn.bits() & 0b01 != 0
        {
            self.interval
                .observe(T_RHO_SET_MS[(pkt.ip.ident & 0b111) as usize] as f64);
        }
    }

    #[inline]
    fn on_dequeue(&mut self, _port: &dyn PortState, pkt: &mut Packet) {
        let residue = (pkt.ip.ident & 0b111) as u8;
        match self.cfg.encoding {
            Encoding::OneBit => {
                if pkt.ip.ecn == Ecn::ECT1 && self.stamps(residue) {
                    pkt.ip.ecn = Ecn::ECT0;
                }
            }
            Encoding::TwoBit => {
                let mut bits = pkt.ip.ecn.bits();
                if self.stamps(residue) {
                    bits |= 0b10;
                }
                if pkt.ip.ident & 0b1000 != 0 && residue == self.interval.code() {
                    bits |= 0b01;
                }
                pkt.ip.ecn = Ecn(bits);
            }
            Encoding::Header => {
                if pkt.ip.ecn.is_ect() {
                    pkt.meta.ideal_load = pkt.meta.ideal_load.max(self.level + 1);
                }
            }
        }
    }

    fn next_timer(&self) -> Time {
        self.meter.next_timer()
    }

    fn on_timer(&mut self, v: &PortView) {
        if self.meter.on_timer(v) == 0 {
            return;
        }
        self.level = level_of(
            self.meter.load_factor(),
            self.cfg.low_load,
            self.cfg.overload,
        );
        debug_assert!(self.level <= HIGH + 1);
        if self.cfg.encoding == Encoding::TwoBit && self.cfg.adapt_t_rho {
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
    use crate::marker::testing::{run_timers_until, udp as pkt, view};
    use crate::time::MS;

    /// A marker whose first interval saw `bytes` arrive on a 10 Mb/s link (γ·C·t_ρ = 245 kB).
    fn at_load(cfg: UnoMarkerConfig, bytes: u32) -> UnoMarker {
        let mut m = UnoMarker::new(cfg).unwrap();
        m.meter.on_arrival(bytes);
        run_timers_until(&mut m, 200 * MS);
        m
    }

    #[test]
    fn the_level_is_stamped_only_on_its_residue() {
        // ρ = 0.5 → level ⌊0.5/0.8·6⌋ = 3.
        let mut m = at_load(UnoMarkerConfig::default(), 122_500);
        assert!((m.load_factor() - 0.5).abs() < 1e-12);
        assert_eq!(m.level(), 3);
        for ident in 0..64u16 {
            let mut p = pkt(ident, Ecn::ECT1);
            m.on_dequeue(&view(0), &mut p);
            let want = if ident % 8 == 3 { Ecn::ECT0 } else { Ecn::ECT1 };
            assert_eq!(p.ip.ecn, want, "ident {ident}");
            // Packets that are not UNO's (ECT(0), CE, Not-ECT) pass untouched.
            for e in [Ecn::NOT_ECT, Ecn::ECT0, Ecn::CE] {
                let mut p = pkt(ident, e);
                m.on_dequeue(&view(0), &mut p);
                assert_eq!(p.ip.ecn, e);
            }
        }
        // The alternative rule stamps every residue up to the level.
        let mut m = at_load(
            UnoMarkerConfig {
                stamp_rule: StampRule::AtOrBelow,
                ..Default::default()
            },
            122_500,
        );
        let set: Vec<u16> = (0..8)
            .filter(|&i| {
                let mut p = pkt(i, Ecn::ECT1);
                m.on_dequeue(&view(0), &mut p);
                p.ip.ecn == Ecn::ECT0
            })
            .collect();
        assert_eq!(set, vec![0, 1, 2, 3]);
        // Overload (ρ = 1.1) is level 7; high load (ρ = 0.9) level 6.
        assert_eq!(at_load(UnoMarkerConfig::default(), 269_500).level(), 7);
        assert_eq!(at_load(UnoMarkerConfig::default(), 220_500).level(), 6);
    }

    #[test]
    fn the_idealised_header_carries_the_maximum_level() {
        let cfg = UnoMarkerConfig {
            encoding: Encoding::Header,
            ..Default::default()
        };
        let mut low = at_load(cfg.clone(), 24_500); // ρ = 0.1 → level 0
        let mut high = at_load(cfg, 220_500); // level 6
        let mut p = pkt(5, Ecn::ECT1);
        low.on_dequeue(&view(0), &mut p);
        assert_eq!(p.meta.ideal_load, 1);
        high.on_dequeue(&view(0), &mut p);
        low.on_dequeue(&view(0), &mut p);
        assert_eq!(p.meta.ideal_load, 7);
        assert_eq!(p.ip.ecn, Ecn::ECT1);
    }

    #[test]
    fn the_rtt_channel_averages_senders_and_announces_t_rho() {
        let cfg = UnoMarkerConfig {
            encoding: Encoding::TwoBit,
            ..Default::default()
        };
        let mut m = UnoMarker::new(cfg).unwrap();
        assert_eq!(m.t_rho_code(), 1); // 200 ms until told otherwise
                                       // Senders say 80 ms (code 0) on bit-3-clear packets; other packets say nothing.
        for ident in 0..160u16 {
            let bit = ident & 0b1111 == 0;
            let mut p = pkt(ident, if bit { Ecn::ECT1 } else { Ecn::NOT_ECT });
            m.on_arrival(&view(0), &mut p);
        }
        assert_eq!(m.interval.samples, 10);
        assert!((m.mean_rtt_ms().unwrap() - 80.0).abs() < 1e-9);
        // At the interval's end the router adopts 80 ms and announces code 0 on residue 8.
        let end_interval = |m: &mut UnoMarker, until: Time| {
            let mut t = m.next_timer();
            while t <= until {
                m.on_timer(&view(t));
                t = m.next_timer();
            }
        };
        end_interval(&mut m, 200 * MS);
        assert_eq!(m.t_rho_code(), 0);
        assert_eq!(m.interval(), 80 * MS);
        // 160 kB arrived: ρ = 0.653, level 4, stamped on residue 4 whatever bit 3 says.
        assert_eq!(m.level(), 4);
        let bits = |m: &mut UnoMarker, ident: u16| {
            let mut p = pkt(ident, Ecn::NOT_ECT);
            m.on_dequeue(&view(0), &mut p);
            p.ip.ecn.bits()
        };
        assert_eq!(bits(&mut m, 8), 0b01);
        assert_eq!(bits(&mut m, 0), 0b00);
        assert_eq!(bits(&mut m, 12), 0b10);
        assert_eq!(bits(&mut m, 4), 0b10);
        assert_eq!(bits(&mut m, 9), 0b00);
        // One sender at 600 ms: m̄ = 0.02·600 + 0.98·80 = 90.4. The interval becomes the
        // smallest element of S at or above the mean, 200 ms (MLCP's rule), which is what
        // the router announces; the nearest element would have stayed 80 ms.
        let mut nearest = UnoMarker::new(UnoMarkerConfig {
            encoding: Encoding::TwoBit,
            t_rho_rule: IntervalRule::Nearest,
            ..Default::default()
        })
        .unwrap();
        for m in [&mut m, &mut nearest] {
            for ident in (0..160u16).step_by(16) {
                m.on_arrival(&view(0), &mut pkt(ident, Ecn::ECT1));
            }
            m.on_arrival(&view(0), &mut pkt(3, Ecn::ECT1));
        }
        assert!((m.mean_rtt_ms().unwrap() - 90.4).abs() < 1e-9);
        end_interval(&mut m, 400 * MS);
        end_interval(&mut nearest, 400 * MS);
        assert_eq!(m.t_rho_code(), 1);
        assert_eq!(m.interval(), 200 * MS);
        assert_eq!(bits(&mut m, 9), 0b01);
        assert_eq!(nearest.t_rho_code(), 0);
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |c: UnoMarkerConfig| UnoMarker::new(c).err().unwrap();
        assert!(err(UnoMarkerConfig {
            kappa_q: -1.0,
            ..Default::default()
        })
        .starts_with("kappa_q"));
        assert!(err(UnoMarkerConfig {
            rtt_weight: 0.0,
            ..Default::default()
        })
        .starts_with("rtt_weight"));
        assert!(err(UnoMarkerConfig {
            encoding: Encoding::TwoBit,
            t_q_s: 0.1,
            ..Default::default()
        })
        .starts_with("t_q_s"));
    }
}
