//! VCP's router: every `t_ρ` the load factor `ρ = (λ + κ_q·q̄) / (γ_l·C·t_ρ)` of the
//! port's link ([`LoadMeter`]), encoded into a [`LoadCode`] that departing ECT packets carry
//! (raised only).

use super::LoadCode;
use crate::marker::load::{load_meter_config, validate_bands, LoadMeter, LoadMeterConfig};
use crate::marker::{Marker, PortState, PortView};
use crate::packet::Packet;
use crate::time::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VcpMarkerConfig {
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
    /// ρ below this is low load.
    pub low_load: f64,
    /// ρ at or above this is overload.
    pub overload: f64,
    /// Classify `⌊100·ρ + 1⌋ / 100` instead of ρ, as the ns-2 code does.
    pub percent_rounding: bool,
}

impl Default for VcpMarkerConfig {
    fn default() -> Self {
        VcpMarkerConfig {
            t_rho_s: 0.2,
            t_q_s: 0.01,
            kappa_q: 0.5,
            target_utilization: 0.98,
            queue_weight: 0.25,
            low_load: 0.8,
            overload: 1.0,
            percent_rounding: false,
        }
    }
}

impl VcpMarkerConfig {
    /// The measurement part of the configuration.
    pub fn meter(&self) -> LoadMeterConfig {
        load_meter_config!(self, t_rho_s)
    }

    pub fn validate(&self) -> Result<(), String> {
        self.meter().validate()?;
        validate_bands(self.low_load, self.overload)?;
        Ok(())
    }

    /// The region of load factor `rho`.
    pub fn classify(&self, rho: f64) -> LoadCode {
        let r = if self.percent_rounding && rho.is_finite() {
            (100.0 * rho + 1.0).floor() / 100.0
        } else {
            rho
        };
        if r < self.low_load {
            LoadCode::Low
        } else if r < self.overload {
            LoadCode::High
        } else {
            LoadCode::Overload
        }
    }
}

pub struct VcpMarker {
    cfg: VcpMarkerConfig,
    meter: LoadMeter,
    code: LoadCode,
    /// Intervals completed.
    pub intervals: u64,
}

impl VcpMarker {
    /// A marker whose ticks start at time 0.
    pub fn new(cfg: VcpMarkerConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(VcpMarker {
            meter: LoadMeter::new(cfg.meter())?,
            cfg,
            code: LoadCode::Low,
            intervals: 0,
        })
    }

    /// ρ of the last completed interval.
    pub fn load_factor(&self) -> f64 {
        self.meter.load_factor()
    }

    /// The code departing packets are raised to.
    pub fn code(&self) -> LoadCode {
        self.code
    }

    /// q̄ in bytes.
    pub fn queue_average(&self) -> f64 {
        self.meter.queue_average()
    }
}

impl Marker for VcpMarker {
    fn feedback(&self) -> &'static str {
        "vcp"
    }

    #[inline]
    fn on_arrival(&mut self, _port: &dyn PortState, pkt: &mut Packet) {
        self.meter.on_arrival(pkt.wire_len());
    }

    #[inline]
    fn on_dequeue(&mut self, _port: &dyn PortState, pkt: &mut Packet) {
        if pkt.ip.ecn.is_ect() && pkt.ip.ecn.bits() < self.code.bits() {
            pkt.ip.ecn = self.code.ecn();
        }
    }

    fn next_timer(&self) -> Time {
        self.meter.next_timer()
    }

    fn on_timer(&mut self, v: &PortView) {
        if self.meter.on_timer(v) > 0 {
            self.code = self.cfg.classify(self.meter.load_factor());
            self.intervals = self.meter.intervals;
        }
    }

    fn gauge(&self) -> Option<f64> {
        Some(self.meter.load_factor())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Limit;
    use crate::time::MS;
    use crate::wire::{Ecn, Ipv4Repr, UdpRepr};

    const C: u64 = 10_000_000; // 10 Mb/s: γ·C·t_ρ = 0.98 · 1.25 MB/s · 0.2 s = 245,000 B

    fn view(now: Time, backlog: u64) -> PortView {
        PortView::new(
            now,
            (backlog / 1000) as u32,
            backlog,
            C,
            Limit::Packets(1000),
            0,
        )
    }

    fn pkt(ecn: Ecn, wire: u32) -> Packet {
        Packet::new_udp(
            Ipv4Repr {
                ecn,
                ..Default::default()
            },
            UdpRepr::default(),
            wire - 28,
        )
    }

    /// One t_ρ interval from `start`: `n` arrivals of `size` bytes evenly spread, the queue
    /// holding `backlog(t)` bytes, timers fired when due.
    fn interval(m: &mut VcpMarker, start: Time, n: u64, size: u32, backlog: impl Fn(Time) -> u64) {
        let end = start + 200 * MS;
        let mut i = 0;
        loop {
            let ta = if i < n {
                start + (2 * i + 1) * 100 * MS / n
            } else {
                Time::MAX
            };
            let tt = m.next_timer();
            if tt.min(ta) > end {
                break;
            }
            if tt <= ta {
                m.on_timer(&view(tt, backlog(tt)));
            } else {
                m.on_arrival(&view(ta, backlog(ta)), &mut pkt(Ecn::ECT1, size));
                i += 1;
            }
        }
    }

    #[test]
    fn load_factor_by_hand() {
        let cap = 0.98 * 1.25e6 * 0.2;
        assert!((cap - 245_000.0f64).abs() < 1e-6);
        // 90 %: 218 kB arrive, the queue holds 20 kB at every sample: q̄ = 0.25·20 kB.
        let mut m = VcpMarker::new(VcpMarkerConfig::default()).unwrap();
        interval(&mut m, 0, 218, 1000, |_| 20_000);
        assert_eq!(m.queue_average(), 5_000.0);
        let rho = (218_000.0 + 0.5 * 5_000.0) / 245_000.0;
        assert!((rho - 0.9f64).abs() < 1e-12);
        assert!((m.load_factor() - rho).abs() < 1e-12, "{}", m.load_factor());
        assert_eq!(m.code(), LoadCode::High);
        assert_eq!(m.gauge(), Some(m.load_factor()));
        // 110 %: 275 packets of 980 B = 269,500 B, empty queue.
        let mut m = VcpMarker::new(VcpMarkerConfig::default()).unwrap();
        interval(&mut m, 0, 275, 980, |_| 0);
        assert!((m.load_factor() - 1.1).abs() < 1e-12);
        assert_eq!(m.code(), LoadCode::Overload);
        // 50 %: 125 packets of 980 B = 122,500 B.
        let mut m = VcpMarker::new(VcpMarkerConfig::default()).unwrap();
        interval(&mut m, 0, 125, 980, |_| 0);
        assert!((m.load_factor() - 0.5).abs() < 1e-12);
        assert_eq!(m.code(), LoadCode::Low);
        // The standing-queue term alone, over successive intervals: q̄_k = B·(1 − 0.75^k).
        let mut m = VcpMarker::new(VcpMarkerConfig::default()).unwrap();
        let b = 400_000.0;
        for k in 1..=6 {
            interval(&mut m, (k - 1) * 200 * MS, 0, 1000, |_| b as u64);
            let q = b * (1.0 - 0.75f64.powi(k as i32));
            assert!((m.queue_average() - q).abs() < 1e-6);
            assert!((m.load_factor() - 0.5 * q / 245_000.0).abs() < 1e-12);
        }
        // 0.5·q̄ crosses 0.8·245 kB (q̄ = 392 kB)? No: q̄_6 = 400·(1 − 0.178) = 328.8 kB.
        assert_eq!(m.code(), LoadCode::Low);
        assert_eq!(m.intervals, 6);
    }

    #[test]
    fn queue_is_sampled_every_10_ms() {
        let mut m = VcpMarker::new(VcpMarkerConfig::default()).unwrap();
        // Between ticks nothing is sampled, whatever the queue.
        m.on_timer(&view(5 * MS, 10_000_000));
        assert_eq!(m.next_timer(), 10 * MS);
        // The queue at the k-th tick (k·10 ms) is k kB; it is something else in between.
        let mut ticks = Vec::new();
        while m.next_timer() <= 200 * MS {
            let t = m.next_timer();
            ticks.push(t / MS);
            m.on_timer(&view(t, 1000 * (t / (10 * MS))));
        }
        assert_eq!(ticks, (1..=20).map(|k| 10 * k).collect::<Vec<_>>());
        // 20 samples 1..20 kB, mean 10.5 kB; the interval's end sample belongs to it.
        assert_eq!(m.queue_average(), 0.25 * 10_500.0);
        assert!((m.load_factor() - 0.5 * 2_625.0 / 245_000.0).abs() < 1e-12);
        assert_eq!(m.next_timer(), 210 * MS);
        // A late call catches up on every tick it missed.
        m.on_timer(&view(1000 * MS, 0));
        assert_eq!(m.intervals, 5);
        assert_eq!(m.next_timer(), 1010 * MS);
    }

    #[test]
    fn ns2_percent_rounding_moves_the_low_boundary() {
        let plain = VcpMarkerConfig::default();
        let ns2 = VcpMarkerConfig {
            percent_rounding: true,
            ..Default::default()
        };
        assert_eq!(plain.classify(0.795), LoadCode::Low);
        assert_eq!(ns2.classify(0.795), LoadCode::High);
        assert_eq!(ns2.classify(0.789), LoadCode::Low);
        assert_eq!(plain.classify(0.9999), LoadCode::High);
        assert_eq!(ns2.classify(0.9999), LoadCode::Overload);
        assert_eq!(plain.classify(1.0), LoadCode::Overload);
    }

    #[test]
    fn codes_only_rise_along_two_markers_in_series() {
        let at = |n: u64| {
            let mut m = VcpMarker::new(VcpMarkerConfig::default()).unwrap();
            interval(&mut m, 0, n, 980, |_| 0);
            m
        };
        let (low, high, over) = (at(125), at(225), at(275));
        assert_eq!(
            (low.code(), high.code(), over.code()),
            (LoadCode::Low, LoadCode::High, LoadCode::Overload)
        );
        let through = |first: &mut VcpMarker, second: &mut VcpMarker, ecn: Ecn| {
            let mut p = pkt(ecn, 1000);
            first.on_dequeue(&view(0, 0), &mut p);
            second.on_dequeue(&view(0, 0), &mut p);
            p.ip.ecn
        };
        let (mut low, mut high, mut over) = (low, high, over);
        assert_eq!(
            through(&mut high, &mut low, Ecn::ECT1),
            LoadCode::High.ecn()
        );
        assert_eq!(
            through(&mut low, &mut high, Ecn::ECT1),
            LoadCode::High.ecn()
        );
        assert_eq!(
            through(&mut low, &mut over, Ecn::ECT1),
            LoadCode::Overload.ecn()
        );
        assert_eq!(
            through(&mut over, &mut low, Ecn::ECT1),
            LoadCode::Overload.ecn()
        );
        let mut low2 = at(125);
        assert_eq!(through(&mut low, &mut low2, Ecn::ECT1), LoadCode::Low.ecn());
        // Not-ECT packets (ACKs, non-VCP traffic) are never stamped.
        assert_eq!(through(&mut over, &mut high, Ecn::NOT_ECT), Ecn::NOT_ECT);
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |c: VcpMarkerConfig| VcpMarker::new(c).err().unwrap();
        assert!(err(VcpMarkerConfig {
            t_q_s: 0.5,
            ..Default::default()
        })
        .starts_with("t_q_s"));
        assert!(err(VcpMarkerConfig {
            target_utilization: 0.0,
            ..Default::default()
        })
        .starts_with("target_utilization"));
        assert!(err(VcpMarkerConfig {
            overload: 0.5,
            ..Default::default()
        })
        .starts_with("overload"));
    }

    /// The marker on a real port: a constant-rate UDP flow through a 10 Mb/s link. Packets
    /// reaching the sink after the first interval carry the code of ρ = r / (γ·C) (plus the
    /// queue term once the link is overloaded).
    #[test]
    fn on_a_port_cbr_load_gives_the_expected_code() {
        use crate::app::udp::{UdpPattern, UdpSource, UdpSourceConfig};
        use crate::aqm::DropTail;
        use crate::engine::rng;
        use crate::net::{node_addr, Ctx, Endpoint, LinkSpec, Sim};
        use crate::stats::FlowRecord;
        use crate::time::{NEVER, SEC};
        use std::cell::RefCell;
        use std::rc::Rc;

        struct CodeSink(Rc<RefCell<[u64; 4]>>);
        impl Endpoint for CodeSink {
            fn on_packet(&mut self, ctx: &mut Ctx, pkt: &Packet) {
                if ctx.now > 250 * MS {
                    self.0.borrow_mut()[pkt.ip.ecn.bits() as usize] += 1;
                }
            }
            fn on_timer(&mut self, _ctx: &mut Ctx) {}
            fn deadline(&self) -> Time {
                NEVER
            }
            fn record(&self, _now: Time, _rec: &mut FlowRecord) {}
        }

        for (rate, want) in [
            (5_000_000, LoadCode::Low),
            (9_000_000, LoadCode::High),
            (11_000_000, LoadCode::Overload),
        ] {
            let mut sim = Sim::new(1);
            let (h0, r, h1) = (sim.add_host("h0"), sim.add_router("r"), sim.add_host("h1"));
            let q = || Box::new(DropTail::new(Limit::Packets(1000)));
            sim.connect(h0, r, &LinkSpec::new(100_000_000, MS), q(), q());
            let (bottleneck, _) = sim.connect(r, h1, &LinkSpec::new(C, MS), q(), q());
            let marker = VcpMarker::new(VcpMarkerConfig::default()).unwrap();
            sim.set_marker(bottleneck, Box::new(marker));
            let seen = Rc::new(RefCell::new([0u64; 4]));
            let sink = sim.add_endpoint(h1, Box::new(CodeSink(seen.clone())));
            let flow = sim.add_flow("cbr", sim.next_endpoint_id(), sink);
            let src = UdpSource::new(
                UdpSourceConfig {
                    rate_bps: rate,
                    packet_size: 1000,
                    pattern: UdpPattern::Cbr,
                    start: 0,
                    stop: 2 * SEC,
                    ecn: Ecn::ECT1,
                    on_off: None,
                },
                node_addr(h0),
                node_addr(h1),
                sink,
                flow,
                rng::stream(1, rng::kind::ENDPOINT, 0),
            );
            sim.add_endpoint(h0, Box::new(src));
            sim.run_until(SEC);
            let seen = *seen.borrow();
            let total: u64 = seen.iter().sum();
            assert!(total > 100);
            assert_eq!(seen[want.bits() as usize], total, "rate {rate}: {seen:?}");
            let rho = sim.ports[bottleneck as usize]
                .marker
                .as_ref()
                .unwrap()
                .gauge()
                .unwrap();
            if rate < C {
                // λ per interval = rate/8 · 0.2 s, one packet either way.
                let expect = rate as f64 / (0.98 * C as f64);
                assert!(
                    (rho - expect).abs() < 1000.0 / 245_000.0 + 1e-9,
                    "{rho} vs {expect}"
                );
            } else {
                assert!(rho > rate as f64 / (0.98 * C as f64));
            }
        }
    }
}
