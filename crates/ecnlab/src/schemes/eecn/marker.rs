//! The EECN router: eq. (1)'s predicted queue occupancy and the marking rule of §4.3 / §5.
//! Readings and parameters: see the [module docs](super).

use super::{IpCode, Level, MarkOn, MarkerConfig};
use crate::aqm::Limit;
use crate::marker::PortState;
use crate::packet::Packet;
use crate::time::{self, Time};

/// Packets counted over a sliding window, in a ring of per-bucket counters.
///
/// The ring has one slot more than the window has buckets: the newest slot is the bucket
/// being filled (covering `[k·w, now]`), the oldest is the bucket the window's start falls
/// in, which is counted in proportion to the part of it still inside the window. The count is
/// exact when the oldest bucket's packets are evenly spread, and otherwise off by less than
/// that bucket's count.
#[derive(Clone, Debug)]
pub struct SlidingCount {
    /// Bucket width.
    width: Time,
    counts: Box<[u32]>,
    /// Absolute index (time / width) of the newest bucket.
    head: u64,
    /// Sum of all slots.
    total: u64,
}

impl SlidingCount {
    /// A window of `buckets` buckets of `width` each.
    pub fn new(width: Time, buckets: u32) -> Self {
        SlidingCount {
            width: width.max(1),
            counts: vec![0u32; buckets as usize + 1].into_boxed_slice(),
            head: 0,
            total: 0,
        }
    }

    /// Window length (buckets × width).
    pub fn window(&self) -> Time {
        self.width * (self.counts.len() as u64 - 1)
    }

    #[inline]
    fn slot(&self, bucket: u64) -> usize {
        (bucket % self.counts.len() as u64) as usize
    }

    /// Moves the window so that its newest bucket contains `now`, emptying the buckets that
    /// fall out. Time never goes back; an earlier `now` is treated as the current bucket.
    #[inline]
    fn advance(&mut self, now: Time) {
        let k = now / self.width;
        if k <= self.head {
            return;
        }
        let steps = k - self.head;
        if steps >= self.counts.len() as u64 {
            self.counts.iter_mut().for_each(|c| *c = 0);
            self.total = 0;
        } else {
            for b in self.head + 1..=k {
                let s = self.slot(b);
                self.total -= self.counts[s] as u64;
                self.counts[s] = 0;
            }
        }
        self.head = k;
    }

    /// Counts one packet at `now`.
    #[inline]
    pub fn add(&mut self, now: Time) {
        self.advance(now);
        let s = self.slot(self.head);
        if let Some(c) = self.counts[s].checked_add(1) {
            self.counts[s] = c;
            self.total += 1;
        }
    }

    /// Packets in the window ending at `now`.
    #[inline]
    pub fn count(&mut self, now: Time) -> f64 {
        self.advance(now);
        let into_newest = now.saturating_sub(self.head * self.width) as f64 / self.width as f64;
        let oldest = self.counts[self.slot(self.head + 1)] as f64;
        self.total as f64 - into_newest * oldest
    }
}

/// The EECN router marker of one egress port.
pub struct Marker {
    cfg: MarkerConfig,
    arrivals: SlidingCount,
    departures: SlidingCount,
    /// Prediction horizon / measurement window: turns window counts into eq. (1)'s
    /// `(γ − α)·H` without dividing by the window first.
    horizon_per_window: f64,
    window_s: f64,
    /// CL at the last arrival or departure (the gauge).
    last_cl: f64,
    /// Packets this marker wrote a new codepoint into, by level written (index 1, 2).
    pub marks: [u64; 3],
}

impl Marker {
    pub fn new(cfg: MarkerConfig) -> Result<Self, String> {
        cfg.validate()?;
        let window = time::from_secs(cfg.rate_window_s);
        let width = window / cfg.rate_buckets as u64;
        let arrivals = SlidingCount::new(width, cfg.rate_buckets);
        let effective = arrivals.window();
        Ok(Marker {
            departures: SlidingCount::new(width, cfg.rate_buckets),
            arrivals,
            horizon_per_window: time::from_secs(cfg.horizon_s) as f64 / effective as f64,
            window_s: time::to_secs(effective),
            last_cl: 0.0,
            marks: [0; 3],
            cfg,
        })
    }

    pub fn config(&self) -> &MarkerConfig {
        &self.cfg
    }

    /// γ: packets per second that arrived over the window ending at `now`.
    pub fn arrival_rate(&mut self, now: Time) -> f64 {
        self.arrivals.count(now) / self.window_s
    }

    /// α: packets per second that left the queue over the window ending at `now`.
    pub fn departure_rate(&mut self, now: Time) -> f64 {
        self.departures.count(now) / self.window_s
    }

    /// Eq. (1): `(q + (γ − α)·H) / Q_limit` for the port as `v` shows it.
    pub fn congestion_ratio(&mut self, v: &dyn PortState) -> f64 {
        let mean = self.cfg.mean_pkt_size;
        let (now, limit) = (v.now(), v.limit());
        let q = match limit {
            Limit::Packets(_) => v.backlog_pkts() as f64,
            Limit::Bytes(_) => v.backlog_bytes() as f64 / mean as f64,
        };
        let growth =
            (self.arrivals.count(now) - self.departures.count(now)) * self.horizon_per_window;
        let cl = (q + growth) / limit.in_packets(mean);
        self.last_cl = cl;
        cl
    }

    /// The level of the port as `v` shows it.
    pub fn level(&mut self, v: &dyn PortState) -> Level {
        let cl = self.congestion_ratio(v);
        Level::from_ratio(cl, self.cfg.th1, self.cfg.th2)
    }

    #[inline]
    fn mark(&mut self, v: &dyn PortState, pkt: &mut Packet) {
        let level = self.level(v);
        let before = IpCode::from_ecn(pkt.ip.ecn);
        let after = before.marked(level);
        if after != before {
            if let Some(l) = after.level() {
                self.marks[l as usize] += 1;
            }
            pkt.ip.ecn = after.ecn();
        }
    }
}

impl crate::marker::Marker for Marker {
    fn feedback(&self) -> &'static str {
        "eecn"
    }

    #[inline]
    fn on_arrival(&mut self, v: &dyn PortState, pkt: &mut Packet) {
        self.arrivals.add(v.now());
        if IpCode::from_ecn(pkt.ip.ecn).level().is_none() {
            // Not-ECT: the discipline below decides as usual.
            self.congestion_ratio(v);
            return;
        }
        pkt.meta.marker_owned = self.cfg.owns_ect;
        if self.cfg.mark_on == MarkOn::Arrival {
            self.mark(v, pkt);
        } else {
            self.congestion_ratio(v);
        }
    }

    #[inline]
    fn on_dequeue(&mut self, v: &dyn PortState, pkt: &mut Packet) {
        self.departures.add(v.now());
        if self.cfg.mark_on == MarkOn::Dequeue && IpCode::from_ecn(pkt.ip.ecn).level().is_some() {
            self.mark(v, pkt);
        } else {
            self.congestion_ratio(v);
        }
    }

    fn gauge(&self) -> Option<f64> {
        Some(self.last_cl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marker::{Marker as _, PortView};
    use crate::time::{MS, US};
    use crate::wire::{Ecn, Ipv4Repr, TcpRepr};

    fn view(now: Time, q: u32) -> PortView {
        PortView::new(now, q, q as u64 * 1040, 100_000_000, Limit::Packets(100), 0)
    }

    fn pkt(ecn: Ecn) -> Packet {
        Packet::new_tcp(
            Ipv4Repr {
                ecn,
                ..Default::default()
            },
            TcpRepr::default(),
            1000,
        )
    }

    fn marker() -> Marker {
        Marker::new(MarkerConfig::default()).unwrap()
    }

    /// Feeds arrivals at `arr_pps` and departures at `dep_pps`, evenly spaced and offset by
    /// half an interval, over [0, until), to a marker whose queue view says `q` packets.
    fn feed(m: &mut Marker, arr_pps: u64, dep_pps: u64, until: Time) {
        let ia = time::SEC / arr_pps;
        let id = time::SEC / dep_pps;
        let (mut ta, mut td) = (ia / 2, id / 2);
        while ta < until || td < until {
            if ta <= td && ta < until {
                m.on_arrival(&view(ta, 0), &mut pkt(Ecn::NOT_ECT));
                ta += ia;
            } else if td < until {
                m.on_dequeue(&view(td, 0), &mut pkt(Ecn::NOT_ECT));
                td += id;
            } else {
                break;
            }
        }
    }

    #[test]
    fn sliding_count_matches_exact_window_count() {
        // Irregular arrival times; the ring's count must be within one bucket's count of the
        // exact number of arrivals in (now − W, now].
        let mut rng = crate::engine::rng::stream(7, 0, 0);
        use rand::Rng as _;
        let mut c = SlidingCount::new(MS, 100);
        let mut times = Vec::new();
        let mut t: Time = 0;
        for _ in 0..20_000 {
            // Bursty: mostly 10 µs gaps, sometimes 3 ms pauses.
            t += if rng.gen_bool(0.01) {
                3 * MS
            } else {
                rng.gen_range(1..20) * US
            };
            c.add(t);
            times.push(t);
            if times.len() % 97 == 0 {
                let probe = t + rng.gen_range(0..MS);
                // Time only moves forward: later arrivals come after the probe.
                t = probe;
                let exact = times
                    .iter()
                    .filter(|&&x| x + 100 * MS > probe && x <= probe)
                    .count() as f64;
                let oldest_bucket = (probe / MS).saturating_sub(100);
                let in_oldest = times.iter().filter(|&&x| x / MS == oldest_bucket).count() as f64;
                let got = c.count(probe);
                assert!(
                    (got - exact).abs() <= in_oldest.max(1.0),
                    "got {got}, exact {exact}, oldest bucket holds {in_oldest}"
                );
            }
        }
        // Long silence empties the window.
        assert_eq!(c.count(t + 101 * MS), 0.0);
    }

    #[test]
    fn rates_and_level_follow_equation_1() {
        // γ = 1000 pkt/s, α = 800 pkt/s for 300 ms. Eq. (1) by hand, Q = 100 packets:
        //   (γ − α)·0.1 s = 20 packets of predicted growth, so
        //   q = 5  → (5 + 20)/100  = 0.25 → none
        //   q = 15 → (15 + 20)/100 = 0.35 → CL(1)   (0.15 without the rate term: none)
        //   q = 35 → (35 + 20)/100 = 0.55 → CL(2)   (0.35 without it: CL(1))
        let mut m = marker();
        let now = 300 * MS;
        feed(&mut m, 1000, 800, now);
        let gamma = m.arrival_rate(now);
        let alpha = m.departure_rate(now);
        // Accuracy of the ring: one packet per window, i.e. 10 pkt/s.
        assert!((gamma - 1000.0).abs() <= 10.0, "gamma {gamma}");
        assert!((alpha - 800.0).abs() <= 10.0, "alpha {alpha}");
        for (q, want_cl, want) in [
            (5, 0.25, Level::None),
            (15, 0.35, Level::Cl1),
            (35, 0.55, Level::Cl2),
        ] {
            let cl = m.congestion_ratio(&view(now, q));
            assert!((cl - want_cl).abs() <= 0.002, "q {q}: CL {cl}");
            assert_eq!(m.level(&view(now, q)), want, "q {q}");
        }
        // The same packet arrival at q = 15 is marked CL(1), at q = 35 CL(2).
        let mut p = pkt(Ecn::ECT1);
        m.on_arrival(&view(now, 15), &mut p);
        assert_eq!(p.ip.ecn, Ecn::ECT0);
        assert!(p.meta.marker_owned);
        let mut p = pkt(Ecn::ECT1);
        m.on_arrival(&view(now, 35), &mut p);
        assert_eq!(p.ip.ecn, Ecn::CE);
        // The gauge is the last CL computed; the two probe arrivals added 2 packets to γ's
        // window, i.e. +2·(0.1 s / 0.1 s)/100 = +0.02.
        assert!((m.gauge().unwrap() - 0.57).abs() <= 0.002);

        // A draining queue: γ = 800, α = 1000 → −20 packets predicted:
        //   q = 60 → (60 − 20)/100 = 0.40 → CL(1) although the queue is above Th2.
        let mut m = marker();
        feed(&mut m, 800, 1000, now);
        let cl = m.congestion_ratio(&view(now, 60));
        assert!((cl - 0.40).abs() <= 0.002, "CL {cl}");
        assert_eq!(m.level(&view(now, 60)), Level::Cl1);

        // When traffic stops the rates fall to zero one window later and CL = q/Q.
        let later = now + 100 * MS + MS;
        assert_eq!(m.arrival_rate(later), 0.0);
        assert_eq!(m.departure_rate(later), 0.0);
        assert_eq!(m.congestion_ratio(&view(later, 60)), 0.6);
    }

    #[test]
    fn paper_example_queue_60_of_100_is_level_2() {
        // §4.3: 60 packets of 100, equal arrival and departure rates → CL = 0.6 → CL(2).
        let mut m = marker();
        feed(&mut m, 5000, 5000, 200 * MS);
        let cl = m.congestion_ratio(&view(200 * MS, 60));
        assert!((cl - 0.6).abs() <= 0.005, "CL {cl}");
        let mut p = pkt(Ecn::ECT1);
        m.on_arrival(&view(200 * MS, 60), &mut p);
        assert_eq!(p.ip.ecn, Ecn::CE);
    }

    #[test]
    fn thresholds_at_the_boundaries() {
        // No traffic history: CL = q / 100 exactly.
        let mut m = marker();
        // The arrival itself counts in γ: use a zero horizon to isolate the queue term.
        let mut m0 = Marker::new(MarkerConfig {
            horizon_s: 0.0,
            ..Default::default()
        })
        .unwrap();
        for (q, want) in [
            (29, Ecn::ECT1),
            (30, Ecn::ECT0),
            (49, Ecn::ECT0),
            (50, Ecn::CE),
            (100, Ecn::CE),
        ] {
            let mut p = pkt(Ecn::ECT1);
            m0.on_arrival(&view(0, q), &mut p);
            assert_eq!(p.ip.ecn, want, "q = {q}");
        }
        // With the default horizon the single arrival adds 1 packet·(0.1 s / 0.1 s): q = 29 is
        // then exactly at Th1.
        let mut p = pkt(Ecn::ECT1);
        m.on_arrival(&view(0, 29), &mut p);
        assert_eq!(m.gauge(), Some(0.3));
        assert_eq!(p.ip.ecn, Ecn::ECT0);
    }

    #[test]
    fn cl1_upgraded_only_at_level_2_and_cl2_passes() {
        let mut m = Marker::new(MarkerConfig {
            horizon_s: 0.0,
            ..Default::default()
        })
        .unwrap();
        let mut run = |ecn, q| {
            let mut p = pkt(ecn);
            m.on_arrival(&view(0, q), &mut p);
            (p.ip.ecn, p.meta.marker_owned)
        };
        // CL(1) at an idle and at a level-1 router stays CL(1); at level 2 becomes CL(2).
        assert_eq!(run(Ecn::ECT0, 0), (Ecn::ECT0, true));
        assert_eq!(run(Ecn::ECT0, 40), (Ecn::ECT0, true));
        assert_eq!(run(Ecn::ECT0, 50), (Ecn::CE, true));
        // CL(2) passes untouched at every level (never lowered).
        for q in [0, 40, 90] {
            assert_eq!(run(Ecn::CE, q), (Ecn::CE, true));
        }
        // Not-ECT is never marked and RED keeps its decision.
        for q in [0, 40, 90] {
            assert_eq!(run(Ecn::NOT_ECT, q), (Ecn::NOT_ECT, false));
        }
    }

    #[test]
    fn marks_on_dequeue_when_asked() {
        let mut m = Marker::new(MarkerConfig {
            horizon_s: 0.0,
            mark_on: MarkOn::Dequeue,
            ..Default::default()
        })
        .unwrap();
        let mut p = pkt(Ecn::ECT1);
        m.on_arrival(&view(0, 70), &mut p);
        assert_eq!(p.ip.ecn, Ecn::ECT1, "not marked on arrival");
        assert!(p.meta.marker_owned, "but RED must not mark it either");
        m.on_dequeue(&view(MS, 35), &mut p);
        assert_eq!(p.ip.ecn, Ecn::ECT0, "level of the dequeue instant");
    }

    #[test]
    fn byte_limited_buffer_in_packets() {
        let mut m = Marker::new(MarkerConfig {
            horizon_s: 0.0,
            ..Default::default()
        })
        .unwrap();
        let v = PortView::new(0, 40, 40_000, 1, Limit::Bytes(100_000), 0);
        assert_eq!(m.congestion_ratio(&v), 0.4);
    }

    /// A 20 Mbps ECT(1) UDP flow into a 10 Mbps port (RED 100/30/60, marking off, as the
    /// paper's RED) for 2 s, with or without the EECN marker. Returns the port counters.
    fn overload(with_eecn: bool, red: bool, ecn: Ecn) -> crate::net::port::PortCounters {
        overload_with(with_eecn.then(MarkerConfig::default), red, ecn)
    }

    /// `overload` with the marker's configuration (None: no marker).
    fn overload_with(
        eecn_cfg: Option<MarkerConfig>,
        red: bool,
        ecn: Ecn,
    ) -> crate::net::port::PortCounters {
        use crate::app::{UdpPattern, UdpSink, UdpSource, UdpSourceConfig};
        use crate::aqm::{DropTail, Qdisc, Red, RedConfig};
        use crate::net::{LinkSpec, Sim};
        let mut sim = Sim::new(1);
        let (a, r, b) = (sim.add_host("a"), sim.add_router("r"), sim.add_host("b"));
        let q = |red: bool, i| -> Box<dyn Qdisc> {
            if red {
                Box::new(Red::new(
                    RedConfig::default(),
                    crate::engine::rng::stream(1, 1, i),
                ))
            } else {
                Box::new(DropTail::new(Limit::Packets(100)))
            }
        };
        let big = || Box::new(DropTail::new(Limit::Packets(10_000)));
        sim.connect(a, r, &LinkSpec::new(1_000_000_000, MS), big(), big());
        let (bottleneck, _) = sim.connect(r, b, &LinkSpec::new(10_000_000, MS), q(red, 0), big());
        if let Some(cfg) = eecn_cfg {
            sim.set_marker(bottleneck, Box::new(Marker::new(cfg).unwrap()));
        }
        sim.compute_routes();
        let cfg = UdpSourceConfig {
            rate_bps: 20_000_000,
            packet_size: 1000,
            pattern: UdpPattern::Cbr,
            start: 0,
            stop: 2 * time::SEC,
            ecn,
            on_off: None,
        };
        let sink = sim.next_endpoint_id() + 1;
        let (sa, da) = (sim.nodes[a as usize].addr, sim.nodes[b as usize].addr);
        let rng = crate::engine::rng::stream(1, 3, 0);
        let src = sim.add_endpoint(a, Box::new(UdpSource::new(cfg, sa, da, sink, 0, rng)));
        let dst = sim.add_endpoint(b, Box::new(UdpSink::new()));
        sim.add_flow("udp", src, dst);
        sim.run_until(2 * time::SEC);
        sim.ports[bottleneck as usize].counters.clone()
    }

    #[test]
    fn eecn_over_red_takes_the_marking_decision_for_ect_only() {
        use crate::aqm::DropReason;
        // RED alone early-drops the ECT flow (its ECN marking is off).
        let plain = overload(false, true, Ecn::ECT1);
        assert!(plain.drop(DropReason::Early) > 0);
        // EECN over RED: RED only enforces its buffer for ECT packets; EECN marks them,
        // CL(2) once the predicted occupancy passes 0.5.
        let eecn = overload(true, true, Ecn::ECT1);
        assert_eq!(eecn.drop(DropReason::Early), 0);
        assert_eq!(eecn.drop(DropReason::Forced), 0);
        assert!(eecn.drop(DropReason::Overflow) > 0, "20 Mbps into 10 Mbps");
        assert!(eecn.marked[Ecn::CE.bits() as usize] > 1000);
        // Not-ECT traffic keeps RED's early drops and is never marked.
        let not_ect = overload(true, true, Ecn::NOT_ECT);
        assert!(not_ect.drop(DropReason::Early) > 0);
        assert_eq!(not_ect.marked.iter().sum::<u64>(), 0);
        // EECN over DropTail: the same marks, overflow drops only.
        let dt = overload(true, false, Ecn::ECT1);
        assert!(dt.marked[Ecn::CE.bits() as usize] > 1000);
        assert_eq!(dt.dropped(), dt.drop(DropReason::Overflow));
    }

    #[test]
    fn eecn_over_red_leaving_ect_to_red_drops_early_and_still_marks() {
        use crate::aqm::DropReason;
        // owns_ect = false: RED (marking off, as for New Reno) early-drops the ECT flow as it
        // would without the marker, and the marker writes its level into what RED keeps.
        let cfg = MarkerConfig {
            owns_ect: false,
            ..Default::default()
        };
        let red_drops = overload_with(Some(cfg.clone()), true, Ecn::ECT1);
        let plain = overload(false, true, Ecn::ECT1);
        assert!(red_drops.drop(DropReason::Early) > 0);
        assert_eq!(
            red_drops.drop(DropReason::Early),
            plain.drop(DropReason::Early)
        );
        assert!(red_drops.marked[Ecn::CE.bits() as usize] > 1000);
        let p = || pkt(Ecn::ECT1);
        let mut m = Marker::new(cfg).unwrap();
        let mut q = p();
        m.on_arrival(&view(0, 60), &mut q);
        assert!(!q.meta.marker_owned, "RED keeps its decision");
        assert_eq!(q.ip.ecn, Ecn::CE);
    }

    #[test]
    fn bad_config_is_an_error_not_a_panic() {
        let e = Marker::new(MarkerConfig {
            th1: 0.6,
            th2: 0.5,
            ..Default::default()
        });
        assert!(e.err().unwrap().starts_with("th2:"));
    }
}
