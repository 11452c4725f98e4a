//! Multilevel RED: RED's average and spacing with a third threshold. Below `min_th` nothing;
//! in [`min_th`, `mid_th`) MECN packets are marked incipient, in [`mid_th`, `max_th`)
//! moderate, each with its own linear probability; at or above `max_th` every packet is
//! dropped. Packets that are not MECN-capable are dropped where others would be marked.
//!
//! Thresholds are in packets; the buffer limit is in packets.

use super::Level;
use crate::aqm::red::{RedAverage, RedDecision, RedDropper};
use crate::aqm::{DropReason, DropTail, Limit, Qdisc, Verdict};
use crate::engine::rng::Rng;
use crate::packet::{Packet, PacketPool, PktId};
use crate::time::Time;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// How the moderate region's probability starts (see the module readings in [`super`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModerateRamp {
    /// 0 at `mid_th` rising to `p2_max` at `max_th` (the paper's "maximum probability").
    #[default]
    FromZero,
    /// `p1_max` at `mid_th` rising (or falling) to `p2_max` at `max_th`.
    ContinueFromP1max,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MecnRedConfig {
    /// Buffer size in packets.
    pub limit: u64,
    pub min_th: f64,
    /// Default `2·min_th`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mid_th: Option<f64>,
    /// Default `2·mid_th`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_th: Option<f64>,
    /// Highest incipient-mark probability (reached at `mid_th`).
    pub p1_max: f64,
    /// Highest moderate-mark probability (reached at `max_th`).
    pub p2_max: f64,
    pub moderate_ramp: ModerateRamp,
    /// EWMA weight of the average queue.
    pub w_q: f64,
    /// ns-2's `wait` spacing (marks at least 1/p_b packets apart).
    pub wait: bool,
    /// Bytes of a typical packet, for the idle-time correction of the average.
    pub mean_pkt_size: u32,
}

impl Default for MecnRedConfig {
    fn default() -> Self {
        MecnRedConfig {
            limit: 50,
            min_th: 5.0,
            mid_th: None,
            max_th: None,
            p1_max: 0.1,
            p2_max: 0.1,
            moderate_ramp: ModerateRamp::FromZero,
            w_q: 0.002,
            wait: true,
            mean_pkt_size: 1000,
        }
    }
}

impl MecnRedConfig {
    /// (`min_th`, `mid_th`, `max_th`) with the paper's defaults filled in.
    pub fn thresholds(&self) -> (f64, f64, f64) {
        let mid = self.mid_th.unwrap_or(2.0 * self.min_th);
        let max = self.max_th.unwrap_or(2.0 * mid);
        (self.min_th, mid, max)
    }

    /// Checks the parameters; errors name the field. `mid_th` and `max_th` may lie above the
    /// buffer, as ns-2's RED allows (`queue/red.cc`): the buffer then overflows before the
    /// average reaches them, and tail drops decide (the paper's sweep with ns-2's 50-packet
    /// `limit_` has `max_th = 4·min_th` up to 120 packets).
    pub fn validate(&self) -> Result<(), String> {
        let (min, mid, max) = self.thresholds();
        if self.limit == 0 {
            return Err("limit: must be positive".into());
        }
        if !(min.is_finite() && min >= 0.0) {
            return Err(format!("min_th: {min} is not a non-negative number"));
        }
        if !(mid.is_finite() && mid > min) {
            return Err(format!("mid_th: {mid} must be greater than min_th ({min})"));
        }
        if !(max.is_finite() && max > mid) {
            return Err(format!("max_th: {max} must be greater than mid_th ({mid})"));
        }
        if min >= self.limit as f64 {
            return Err(format!(
                "min_th: {min} is not below the buffer limit ({} packets)",
                self.limit
            ));
        }
        for (name, p) in [("p1_max", self.p1_max), ("p2_max", self.p2_max)] {
            if !(p > 0.0 && p <= 1.0) {
                return Err(format!("{name}: {p} is outside (0, 1]"));
            }
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(format!("w_q: {} is outside (0, 1]", self.w_q));
        }
        if self.mean_pkt_size == 0 {
            return Err("mean_pkt_size: must be positive".into());
        }
        Ok(())
    }

    /// The level an early decision writes at average `avg`, and that region's base
    /// probability `p_b` (before spacing). `None` below `min_th` and at or above `max_th`.
    pub fn region(&self, avg: f64) -> Option<(Level, f64)> {
        let (min, mid, max) = self.thresholds();
        if avg < min || avg >= max {
            None
        } else if avg < mid {
            Some((Level::Incipient, self.p1_max * (avg - min) / (mid - min)))
        } else {
            let x = (avg - mid) / (max - mid);
            let p = match self.moderate_ramp {
                ModerateRamp::FromZero => self.p2_max * x,
                ModerateRamp::ContinueFromP1max => self.p1_max + (self.p2_max - self.p1_max) * x,
            };
            Some((Level::Moderate, p))
        }
    }
}

pub struct MecnRed {
    cfg: MecnRedConfig,
    max_th: f64,
    fifo: DropTail,
    avg: RedAverage,
    dropper: RedDropper,
    rng: Rng,
    /// Holds the average fixed (tests of the marking law at a given average).
    pinned: Option<f64>,
    /// Marks written, by level.
    pub incipient_marks: u64,
    pub moderate_marks: u64,
    /// Not-MECN packets dropped where they would have been marked.
    pub early_drops: u64,
    /// Drops because the average was at or above `max_th`.
    pub forced_drops: u64,
}

impl MecnRed {
    pub fn new(cfg: MecnRedConfig, rng: Rng) -> Result<Self, String> {
        cfg.validate()?;
        let (_, _, max_th) = cfg.thresholds();
        Ok(MecnRed {
            fifo: DropTail::new(Limit::Packets(cfg.limit.min(u32::MAX as u64) as u32)),
            avg: RedAverage::new(cfg.w_q, cfg.mean_pkt_size),
            dropper: RedDropper::default(),
            max_th,
            cfg,
            rng,
            pinned: None,
            incipient_marks: 0,
            moderate_marks: 0,
            early_drops: 0,
            forced_drops: 0,
        })
    }

    pub fn config(&self) -> &MecnRedConfig {
        &self.cfg
    }

    /// Holds the average queue at `avg` (or releases it with `None`).
    pub fn pin_average(&mut self, avg: Option<f64>) {
        self.pinned = avg;
        if let Some(a) = avg {
            self.avg.avg = a;
        }
    }

    /// Early or forced decision for an arrival with average `avg`; writes the mark.
    #[inline]
    fn decide(&mut self, avg: f64, pkt: &mut Packet) -> Option<DropReason> {
        let region = self.cfg.region(avg);
        let (level, pb) = region.unwrap_or((Level::None, 0.0));
        let forced = avg >= self.max_th;
        let u: f64 = self.rng.gen();
        let mode = (self.cfg.wait, false, self.cfg.mean_pkt_size);
        let decision = self.dropper.decide_with(
            region.is_some(),
            forced,
            pb,
            self.fifo.len(),
            pkt.wire_len(),
            mode,
            u,
        );
        match decision {
            RedDecision::Accept => None,
            RedDecision::Early => {
                if !pkt.ip.ecn.is_ect() {
                    self.early_drops += 1;
                    return Some(DropReason::Early);
                }
                match level {
                    Level::Incipient => self.incipient_marks += 1,
                    _ => self.moderate_marks += 1,
                }
                let now_level = Level::from_ecn(pkt.ip.ecn).max(level);
                pkt.ip.ecn = now_level.ecn();
                None
            }
            RedDecision::Forced => {
                self.forced_drops += 1;
                self.dropper.reset();
                Some(DropReason::Forced)
            }
        }
    }
}

impl Qdisc for MecnRed {
    fn feedback(&self) -> Option<&'static str> {
        Some("mecn")
    }

    fn enqueue(&mut self, now: Time, id: PktId, pkt: &mut Packet) -> Verdict {
        let q = self.fifo.len() as f64;
        let avg = match self.pinned {
            Some(a) => a,
            None => self.avg.on_arrival(now, q),
        };
        if !pkt.meta.marker_owned {
            if let Some(why) = self.decide(avg, pkt) {
                return Verdict::Dropped(why);
            }
        }
        self.fifo.enqueue(now, id, pkt)
    }

    fn dequeue(
        &mut self,
        now: Time,
        _pool: &mut PacketPool,
        _d: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId> {
        let id = self.fifo.pop();
        self.avg.on_dequeue(now, id.is_some());
        id
    }

    fn len(&self) -> usize {
        self.fifo.len()
    }
    fn bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn limit(&self) -> Limit {
        self.fifo.limit()
    }
    fn reads_limit(&self) -> bool {
        false
    }
    fn set_rate(&mut self, bps: u64) {
        self.avg.set_rate(bps);
    }
    fn avg_queue(&self) -> Option<f64> {
        Some(self.avg.avg)
    }
    fn for_each(&self, f: &mut dyn FnMut(PktId)) {
        self.fifo.for_each(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng;
    use crate::schemes::mecn::codepoint;
    use crate::wire::{Ecn, Ipv4Repr, UdpRepr};

    fn pkt(ecn: Ecn) -> Packet {
        Packet::new_udp(
            Ipv4Repr {
                ecn,
                ..Default::default()
            },
            UdpRepr::default(),
            972,
        )
    }

    fn cfg(min_th: f64, p1: f64, p2: f64, wait: bool) -> MecnRedConfig {
        MecnRedConfig {
            limit: 1000,
            min_th,
            p1_max: p1,
            p2_max: p2,
            wait,
            ..MecnRedConfig::default()
        }
    }

    /// Offers `n` packets with codepoint `ecn` at a pinned average, keeping a few packets
    /// queued (RED only acts with more than one packet queued). Returns the verdicts and
    /// codepoints as (incipient marks, moderate marks, early drops, forced drops).
    fn run(q: &mut MecnRed, avg: f64, n: u32, ecn: impl Fn(u32) -> Ecn) -> [u64; 4] {
        let mut pool = PacketPool::new();
        let mut dropped = Vec::new();
        let mut out = [0u64; 4];
        q.pin_average(Some(avg));
        for i in 0..n {
            let mut p = pkt(ecn(i));
            match q.enqueue(i as Time, PktId(i), &mut p) {
                Verdict::Enqueued => match Level::from_ecn(p.ip.ecn) {
                    Level::Incipient if ecn(i) != p.ip.ecn => out[0] += 1,
                    Level::Moderate if ecn(i) != p.ip.ecn => out[1] += 1,
                    _ => {}
                },
                Verdict::Dropped(DropReason::Early) => out[2] += 1,
                Verdict::Dropped(DropReason::Forced) => out[3] += 1,
                Verdict::Dropped(_) => panic!("unexpected drop"),
            }
            while q.len() > 4 {
                q.dequeue(i as Time, &mut pool, &mut dropped);
            }
        }
        out
    }

    /// Long-run mark fraction at a fixed base probability `pb`, computed from ns-2's spacing
    /// rule written out here: after a mark the count restarts, the packet at count `c` is
    /// marked with p_a(c) (with `wait`: 0 while c·p_b < 1, p_b/(2 − c·p_b) below 2, then 1;
    /// without: p_b/(1 − c·p_b), then 1). The fraction is 1 / E[gap].
    fn spaced_fraction(pb: f64, wait: bool) -> f64 {
        let pa = |c: f64| {
            let x = c * pb;
            if wait {
                if x < 1.0 {
                    0.0
                } else if x < 2.0 {
                    pb / (2.0 - x)
                } else {
                    1.0
                }
            } else if x < 1.0 {
                pb / (1.0 - x)
            } else {
                1.0
            }
        };
        let (mut survive, mut gap) = (1.0f64, 0.0f64);
        let mut c = 1.0;
        while survive > 1e-15 {
            gap += survive;
            survive *= 1.0 - pa(c).min(1.0);
            c += 1.0;
        }
        1.0 / gap
    }

    fn assert_fraction(got: u64, n: u32, expect: f64, what: &str) {
        let f = got as f64 / n as f64;
        // Binomial spread bounds the renewal process's (its gaps vary less than geometric).
        let sd = (expect * (1.0 - expect) / n as f64).sqrt();
        assert!(
            (f - expect).abs() < 5.0 * sd,
            "{what}: fraction {f:.5}, expected {expect:.5} (sd {sd:.5})"
        );
    }

    #[test]
    fn incipient_region_mark_fraction_matches_spacing_law() {
        // min 10, mid 20, max 40; p_b = 0.1·(15−10)/(20−10) = 0.05, 1/p_b = 20: with `wait`
        // the gap is uniform on 20..39, so the fraction is 2·p_b/(3 − p_b) = 2/59.
        let c = cfg(10.0, 0.1, 0.1, true);
        let pb = 0.1 * (15.0 - 10.0) / (20.0 - 10.0);
        assert_eq!(c.region(15.0), Some((Level::Incipient, pb)));
        assert!((spaced_fraction(pb, true) - 2.0 / 59.0).abs() < 1e-9);
        let mut q = MecnRed::new(c, rng::stream(1, 1, 0)).unwrap();
        let n = 400_000;
        let [inc, modr, early, forced] = run(&mut q, 15.0, n, |_| codepoint::NO_CONGESTION);
        assert_eq!((modr, early, forced), (0, 0, 0));
        assert_fraction(inc, n, 2.0 / 59.0, "incipient, avg 15");
        assert_eq!(q.incipient_marks, inc);
    }

    #[test]
    fn moderate_region_ramp_starts_at_zero() {
        // Moderate region [20, 40): p_b = 0.1·(25−20)/(40−20) = 0.025 → fraction 2/119.
        let c = cfg(10.0, 0.1, 0.1, true);
        let pb = 0.1 * (25.0 - 20.0) / (40.0 - 20.0);
        assert_eq!(c.region(25.0), Some((Level::Moderate, pb)));
        // Just above mid_th the probability restarts near 0.
        assert!(c.region(20.0).unwrap().1 == 0.0);
        let mut q = MecnRed::new(c, rng::stream(1, 1, 1)).unwrap();
        let n = 400_000;
        let [inc, modr, early, forced] = run(&mut q, 25.0, n, |_| codepoint::NO_CONGESTION);
        assert_eq!((inc, early, forced), (0, 0, 0));
        assert_fraction(modr, n, 2.0 / 119.0, "moderate, avg 25");
    }

    #[test]
    fn moderate_ramp_continuing_from_p1max_and_no_wait() {
        // ContinueFromP1max with p1 0.1, p2 0.2 at avg 30: p_b = 0.1 + 0.1·0.5 = 0.15.
        let mut c = cfg(10.0, 0.1, 0.2, true);
        c.moderate_ramp = ModerateRamp::ContinueFromP1max;
        let (lvl, pb) = c.region(30.0).unwrap();
        assert_eq!(lvl, Level::Moderate);
        assert!((pb - 0.15).abs() < 1e-12);
        let mut q = MecnRed::new(c, rng::stream(2, 1, 0)).unwrap();
        let n = 300_000;
        let [_, modr, ..] = run(&mut q, 30.0, n, |_| codepoint::NO_CONGESTION);
        assert_fraction(modr, n, spaced_fraction(0.15, true), "moderate from p1max");

        // Without `wait`, incipient at avg 17.5: p_b = 0.075.
        let c = cfg(10.0, 0.1, 0.1, false);
        let mut q = MecnRed::new(c, rng::stream(2, 1, 1)).unwrap();
        let [inc, ..] = run(&mut q, 17.5, n, |_| codepoint::NO_CONGESTION);
        assert_fraction(inc, n, spaced_fraction(0.075, false), "incipient, no wait");
        // Check of the law itself: for integer 1/p_b = 20 the gap is uniform on 1..19
        // (ns-2 counts the arriving packet), mean 10, so the fraction is 2·p_b.
        assert!((spaced_fraction(0.05, false) - 0.1).abs() < 1e-9);
    }

    #[test]
    fn below_min_nothing_at_and_above_max_everything_dropped() {
        let c = cfg(10.0, 0.1, 0.1, true);
        let mut q = MecnRed::new(c, rng::stream(3, 1, 0)).unwrap();
        assert_eq!(
            run(&mut q, 9.99, 10_000, |_| codepoint::NO_CONGESTION),
            [0, 0, 0, 0]
        );
        for avg in [40.0, 55.0] {
            let [inc, modr, early, forced] = run(&mut q, avg, 10_000, |i| {
                if i % 2 == 0 {
                    codepoint::NO_CONGESTION
                } else {
                    Ecn::NOT_ECT
                }
            });
            assert_eq!((inc, modr, early), (0, 0, 0));
            // Only packets that find more than one queued are decided: all but the first two.
            assert!(forced >= 9_990, "avg {avg}: {forced} forced drops");
        }
        let [.., forced] = run(&mut q, 39.9, 10_000, |_| codepoint::NO_CONGESTION);
        assert_eq!(forced, 0);
    }

    #[test]
    fn not_mecn_dropped_where_mecn_marked_and_levels_only_rise() {
        // p1_max = 1 and avg just under mid_th: almost every decision is a mark.
        let c = cfg(10.0, 1.0, 1.0, false);
        let mut q = MecnRed::new(c.clone(), rng::stream(4, 1, 0)).unwrap();
        let n = 20_000;
        let [inc, _, early, _] = run(&mut q, 19.9, n, |i| {
            if i % 2 == 0 {
                codepoint::NO_CONGESTION
            } else {
                Ecn::NOT_ECT
            }
        });
        assert!(inc > 5_000 && early > 5_000, "marks {inc}, drops {early}");
        // Every early drop was a Not-ECT packet and every mark an ECT one: re-run and check
        // each verdict against the codepoint offered.
        let mut q = MecnRed::new(c, rng::stream(4, 1, 1)).unwrap();
        q.pin_average(Some(35.0)); // moderate region
        let mut pool = PacketPool::new();
        let mut dropped = Vec::new();
        for i in 0..2_000u32 {
            let offered = [
                Ecn::NOT_ECT,
                codepoint::NO_CONGESTION,
                codepoint::INCIPIENT,
                codepoint::MODERATE,
            ][i as usize % 4];
            let mut p = pkt(offered);
            match q.enqueue(0, PktId(i), &mut p) {
                Verdict::Dropped(DropReason::Early) => assert_eq!(offered, Ecn::NOT_ECT),
                Verdict::Enqueued => {
                    assert!(
                        Level::from_ecn(p.ip.ecn) >= Level::from_ecn(offered),
                        "a level was lowered"
                    );
                    if p.ip.ecn != offered {
                        assert_eq!(p.ip.ecn, codepoint::MODERATE);
                    }
                }
                v => panic!("{v:?}"),
            }
            while q.len() > 4 {
                q.dequeue(0, &mut pool, &mut dropped);
            }
        }
        assert!(q.moderate_marks > 100 && q.early_drops > 100);
        // An incipient decision never lowers a moderate packet.
        let mut q = MecnRed::new(cfg(10.0, 1.0, 1.0, false), rng::stream(4, 1, 2)).unwrap();
        q.pin_average(Some(19.9));
        let mut raised = 0;
        for i in 0..2_000u32 {
            let mut p = pkt(codepoint::MODERATE);
            assert_eq!(q.enqueue(0, PktId(i), &mut p), Verdict::Enqueued);
            assert_eq!(p.ip.ecn, codepoint::MODERATE);
            let mut p = pkt(codepoint::NO_CONGESTION);
            q.enqueue(0, PktId(i), &mut p);
            raised += (p.ip.ecn == codepoint::INCIPIENT) as u32;
            while q.len() > 4 {
                q.dequeue(0, &mut pool, &mut dropped);
            }
        }
        assert!(raised > 100);
    }

    #[test]
    fn average_follows_the_queue_when_not_pinned() {
        // Without pinning, the EWMA (w_q) of the instantaneous queue drives the regions:
        // a standing queue of 30 packets with w_q = 0.05 pulls the average past mid_th (20).
        let mut c = cfg(10.0, 0.1, 0.1, true);
        c.w_q = 0.05;
        let mut q = MecnRed::new(c, rng::stream(5, 1, 0)).unwrap();
        q.set_rate(8_000_000);
        let mut pool = PacketPool::new();
        let mut dropped = Vec::new();
        for i in 0..30u32 {
            q.enqueue(0, PktId(i), &mut pkt(codepoint::NO_CONGESTION));
        }
        for i in 30..400u32 {
            q.enqueue(0, PktId(i), &mut pkt(codepoint::NO_CONGESTION));
            q.dequeue(0, &mut pool, &mut dropped);
        }
        let avg = q.avg_queue().unwrap();
        assert!((avg - 30.0).abs() < 0.5, "avg {avg}");
        assert!(q.moderate_marks > 0);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = |c: MecnRedConfig| c.validate().unwrap_err();
        assert!(e(MecnRedConfig {
            min_th: 50.0,
            ..Default::default()
        })
        .starts_with("min_th"));
        // ns-2's configuration of the paper's sweep: max_th = 80 above a 50-packet buffer.
        assert!(MecnRedConfig {
            min_th: 20.0,
            ..Default::default()
        }
        .validate()
        .is_ok());
        assert!(e(MecnRedConfig {
            mid_th: Some(4.0),
            ..Default::default()
        })
        .starts_with("mid_th"));
        assert!(e(MecnRedConfig {
            p2_max: 0.0,
            ..Default::default()
        })
        .starts_with("p2_max"));
        assert!(MecnRed::new(
            MecnRedConfig {
                w_q: 2.0,
                ..Default::default()
            },
            rng::stream(0, 0, 0)
        )
        .is_err());
        let (min, mid, max) = MecnRedConfig::default().thresholds();
        assert_eq!((min, mid, max), (5.0, 10.0, 20.0));
    }
}
