//! Random Early Detection (Floyd & Jacobson 1993) with the refinements of the ns-2/ns-3
//! implementations: idle-time correction of the average, count-based spacing of drops, the
//! `wait` option, `gentle`, packet and byte mode, ECN marking of ECT packets, optional hard
//! drop above the maximum threshold.
//!
//! Thresholds are in packets in both modes; in byte mode the queue is measured as
//! bytes / `mean_pkt_size` and the early probability is scaled by size / `mean_pkt_size`
//! (ns-2's convention).

use super::{DropReason, DropTail, Limit, Qdisc, Verdict};
use crate::engine::rng::Rng;
use crate::packet::{Packet, PacketPool, PktId};
use crate::time::{Time, SEC};
use crate::wire::Ecn;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// Buffer size in packets (packet mode) or bytes (byte mode).
    pub limit: u64,
    pub min_th: f64,
    pub max_th: f64,
    /// Maximum early-drop probability at `max_th` (ns-3's 1/LInterm).
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub w_q: f64,
    pub gentle: bool,
    pub wait: bool,
    pub byte_mode: bool,
    /// Mark ECT packets with CE instead of dropping them early.
    pub ecn: bool,
    /// Drop even ECT packets when the average is above max_th (2·max_th if gentle).
    pub hard_drop: bool,
    /// Bytes of a typical packet: idle-time correction and byte mode.
    pub mean_pkt_size: u32,
    /// Mark an ECT packet early only while the base probability is at most this; above it
    /// the packet is dropped (ns-2's `use_mark_p_`/`mark_p_`, on by default in ns-2.35 with
    /// 0.1: with gentle, ECT packets are dropped once the average passes max_th). Unset:
    /// every early decision on an ECT packet marks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark_p: Option<f64>,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit: 100,
            min_th: 30.0,
            max_th: 60.0,
            max_p: 0.02,
            w_q: 0.002,
            gentle: true,
            wait: true,
            byte_mode: false,
            ecn: false,
            hard_drop: true,
            mean_pkt_size: 1040,
            mark_p: None,
        }
    }
}

impl RedConfig {
    /// Checks the parameters; errors name the field. A `max_th` above the buffer is allowed,
    /// as ns-2 allows it (`queue/red.cc` checks no threshold against `limit_`): the buffer
    /// then overflows before the average reaches the forced region, and tail drops decide.
    pub fn validate(&self) -> Result<(), String> {
        if self.limit == 0 {
            return Err("limit: must be positive".into());
        }
        if !self.byte_mode {
            Limit::packets(self.limit)?;
        }
        let cap = if self.byte_mode {
            self.limit as f64 / self.mean_pkt_size as f64
        } else {
            self.limit as f64
        };
        if !(self.min_th >= 0.0) {
            return Err(format!("min_th: {} must be non-negative", self.min_th));
        }
        if self.min_th >= cap {
            return Err(format!(
                "min_th: {} is not below the buffer limit ({cap} packets)",
                self.min_th
            ));
        }
        if !(self.max_th > self.min_th) {
            return Err(format!(
                "max_th: must be greater than min_th ({} <= {})",
                self.max_th, self.min_th
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("max_p: {} is outside (0, 1]", self.max_p));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(format!("w_q: {} is outside (0, 1]", self.w_q));
        }
        if self.mean_pkt_size == 0 {
            return Err("mean_pkt_size: must be positive".into());
        }
        if let Some(m) = self.mark_p {
            if !(m > 0.0 && m <= 1.0) {
                return Err(format!("mark_p: {m} is outside (0, 1]"));
            }
        }
        Ok(())
    }
}

/// The average-queue estimator shared by RED-family disciplines: EWMA on arrival with the
/// idle-time correction (the average decays as if `ptc·idle` empty-queue arrivals happened).
#[derive(Clone, Debug)]
pub struct RedAverage {
    pub avg: f64,
    w_q: f64,
    idle_since: Option<Time>,
    /// Typical packets per second the link can send (bandwidth / (8 · mean size)).
    ptc: f64,
    mean_pkt_size: u32,
}

impl RedAverage {
    pub fn new(w_q: f64, mean_pkt_size: u32) -> Self {
        RedAverage {
            avg: 0.0,
            w_q,
            idle_since: Some(0),
            ptc: 0.0,
            mean_pkt_size,
        }
    }

    pub fn set_rate(&mut self, bps: u64) {
        self.ptc = bps as f64 / (8.0 * self.mean_pkt_size as f64);
    }

    /// Updates the average with the instantaneous queue `q` seen by an arrival at `now`.
    #[inline]
    pub fn on_arrival(&mut self, now: Time, q: f64) -> f64 {
        let mut m = 0.0;
        if let Some(t0) = self.idle_since.take() {
            m = (self.ptc * (now.saturating_sub(t0)) as f64 / SEC as f64).floor();
        }
        // Busy queue (m = 0): x¹ = x exactly, without a pow() call per packet.
        let decay = if m == 0.0 {
            1.0 - self.w_q
        } else {
            (1.0 - self.w_q).powf(m + 1.0)
        };
        self.avg = self.avg * decay + self.w_q * q;
        self.avg
    }

    /// The transmitter found the queue empty at `now`: the idle period starts.
    #[inline]
    pub fn on_empty(&mut self, now: Time) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    #[inline]
    pub fn on_busy(&mut self) {
        self.idle_since = None;
    }

    /// Bookkeeping for a dequeue attempt at `now`: an empty queue starts (or continues) an
    /// idle period, a packet ends it.
    #[inline]
    pub fn on_dequeue(&mut self, now: Time, found: bool) {
        if found {
            self.on_busy()
        } else {
            self.on_empty(now)
        }
    }
}

/// The early-decision part of RED: probability from the average and count-based spacing.
#[derive(Clone, Debug)]
pub struct RedDropper {
    /// Packets (or bytes, in byte mode) since the last early drop/mark.
    count: i64,
    count_bytes: u64,
    /// Whether the average was already in the early region at the previous arrival.
    old: bool,
}

impl Default for RedDropper {
    fn default() -> Self {
        RedDropper {
            count: 0,
            count_bytes: 0,
            old: false,
        }
    }
}

/// What RED decides for an arrival, before the buffer limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedDecision {
    Accept,
    Early,
    Forced,
}

impl RedDropper {
    /// `p_b`, the initial probability at average `avg` with thresholds and `max_p` (linear from
    /// 0 at min_th to max_p at max_th; with gentle, from max_p to 1 between max_th and 2·max_th).
    pub fn base_probability(avg: f64, min_th: f64, max_th: f64, max_p: f64, gentle: bool) -> f64 {
        if avg < min_th {
            0.0
        } else if avg < max_th {
            max_p * (avg - min_th) / (max_th - min_th)
        } else if gentle && avg < 2.0 * max_th {
            max_p + (1.0 - max_p) * (avg - max_th) / max_th
        } else {
            1.0
        }
    }

    /// The spaced probability `p_a` for a packet of `size` bytes, given `p_b`.
    pub fn spaced_probability(
        &self,
        pb: f64,
        wait: bool,
        byte_mode: bool,
        size: u32,
        mean: u32,
    ) -> f64 {
        let count = if byte_mode {
            (self.count_bytes / mean as u64) as f64
        } else {
            self.count as f64
        };
        let mut p = if wait {
            if count * pb < 1.0 {
                0.0
            } else if count * pb < 2.0 {
                pb / (2.0 - count * pb)
            } else {
                1.0
            }
        } else if count * pb < 1.0 {
            pb / (1.0 - count * pb)
        } else {
            1.0
        };
        if byte_mode && p < 1.0 {
            p = p * size as f64 / mean as f64;
        }
        p.min(1.0)
    }

    /// Decision for an arrival of `size` bytes with average `avg` and `qlen` packets queued.
    #[allow(clippy::too_many_arguments)]
    pub fn decide(
        &mut self,
        cfg: &RedConfig,
        avg: f64,
        qlen: usize,
        size: u32,
        u: f64,
    ) -> RedDecision {
        let forced = if cfg.gentle {
            avg >= 2.0 * cfg.max_th
        } else {
            avg >= cfg.max_th
        };
        let pb = Self::base_probability(avg, cfg.min_th, cfg.max_th, cfg.max_p, cfg.gentle);
        self.decide_with(
            avg >= cfg.min_th,
            forced,
            pb,
            qlen,
            size,
            (cfg.wait, cfg.byte_mode, cfg.mean_pkt_size),
            u,
        )
    }

    /// The spacing step on its own, for RED-family disciplines with their own probability law
    /// (multilevel RED): `early` — the average is at or above the lowest threshold; `forced` —
    /// it is in the forced-drop region; `pb` — the base probability there. `mode` is
    /// (`wait`, `byte_mode`, `mean_pkt_size`).
    #[allow(clippy::too_many_arguments)]
    pub fn decide_with(
        &mut self,
        early: bool,
        forced: bool,
        pb: f64,
        qlen: usize,
        size: u32,
        mode: (bool, bool, u32),
        u: f64,
    ) -> RedDecision {
        let (wait, byte_mode, mean) = mode;
        self.count += 1;
        self.count_bytes += size as u64;
        if (early || forced) && qlen > 1 {
            if forced {
                return RedDecision::Forced;
            }
            if !self.old {
                // Just entered the early region: start spacing from here.
                self.old = true;
                self.count = 1;
                self.count_bytes = size as u64;
                return RedDecision::Accept;
            }
            let pa = self.spaced_probability(pb, wait, byte_mode, size, mean);
            if u <= pa {
                self.count = 0;
                self.count_bytes = 0;
                return RedDecision::Early;
            }
            RedDecision::Accept
        } else {
            self.old = false;
            RedDecision::Accept
        }
    }

    /// A forced drop resets the spacing too (ns-2 behaviour).
    pub fn reset(&mut self) {
        self.count = 0;
        self.count_bytes = 0;
    }
}

pub struct Red {
    cfg: RedConfig,
    fifo: DropTail,
    avg: RedAverage,
    dropper: RedDropper,
    rng: Rng,
    /// Early marks/drops and forced drops decided (for tests and statistics).
    pub early: u64,
    pub forced: u64,
}

impl Red {
    pub fn new(cfg: RedConfig, rng: Rng) -> Self {
        // `validate` refused a packet limit beyond u32; saturate rather than wrap for a
        // config built in code without it.
        let limit = if cfg.byte_mode {
            Limit::Bytes(cfg.limit)
        } else {
            Limit::packets(cfg.limit).unwrap_or(Limit::Packets(u32::MAX))
        };
        Red {
            fifo: DropTail::new(limit),
            avg: RedAverage::new(cfg.w_q, cfg.mean_pkt_size),
            dropper: RedDropper::default(),
            cfg,
            rng,
            early: 0,
            forced: 0,
        }
    }

    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    fn queue_measure(&self) -> f64 {
        if self.cfg.byte_mode {
            self.fifo.bytes() as f64 / self.cfg.mean_pkt_size as f64
        } else {
            self.fifo.len() as f64
        }
    }

    /// Whether an early decision at average `avg` may mark rather than drop (`mark_p`).
    fn marks_at(&self, avg: f64) -> bool {
        let c = &self.cfg;
        self.cfg.mark_p.is_none_or(|m| {
            RedDropper::base_probability(avg, c.min_th, c.max_th, c.max_p, c.gentle) <= m
        })
    }

    /// Forces the average (tests of the marking probability at a fixed average).
    pub fn set_average(&mut self, avg: f64) {
        self.avg.avg = avg;
    }
}

impl Qdisc for Red {
    fn feedback(&self) -> Option<&'static str> {
        self.cfg.ecn.then_some("ce")
    }

    fn enqueue(&mut self, now: Time, id: PktId, pkt: &mut Packet) -> Verdict {
        let q = self.queue_measure();
        let avg = self.avg.on_arrival(now, q);
        let size = pkt.wire_len();
        if !pkt.meta.marker_owned {
            let u: f64 = self.rng.gen();
            match self
                .dropper
                .decide(&self.cfg, avg, self.fifo.len(), size, u)
            {
                RedDecision::Accept => {}
                RedDecision::Early => {
                    self.early += 1;
                    if self.cfg.ecn && pkt.ip.ecn.is_ect() && self.marks_at(avg) {
                        pkt.ip.ecn = Ecn::CE;
                    } else {
                        return Verdict::Dropped(DropReason::Early);
                    }
                }
                RedDecision::Forced => {
                    self.forced += 1;
                    self.dropper.reset();
                    if self.cfg.hard_drop || !self.cfg.ecn || !pkt.ip.ecn.is_ect() {
                        return Verdict::Dropped(DropReason::Forced);
                    }
                    pkt.ip.ecn = Ecn::CE;
                }
            }
        }
        self.fifo.enqueue(now, id, pkt)
    }

    fn dequeue(
        &mut self,
        now: Time,
        pool: &mut PacketPool,
        _d: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId> {
        let id = self.fifo.pop_ahead(pool);
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
    use crate::wire::{Ipv4Repr, UdpRepr};

    #[test]
    fn base_probability_formula() {
        let p = |a| RedDropper::base_probability(a, 30.0, 60.0, 0.1, false);
        assert_eq!(p(29.9), 0.0);
        assert!((p(45.0) - 0.05).abs() < 1e-12);
        assert_eq!(p(60.0), 1.0);
        let g = |a| RedDropper::base_probability(a, 30.0, 60.0, 0.1, true);
        assert!((g(90.0) - 0.55).abs() < 1e-12);
        assert_eq!(g(120.0), 1.0);
    }

    /// With `wait` off, the spaced probability makes the gap between marks uniform on
    /// 1..1/p_b, so the long-run mark fraction is 2·p_b/(1+p_b) (Floyd & Jacobson §7).
    #[test]
    fn mark_rate_at_fixed_average_matches_formula() {
        for &(avg, wait) in &[(40.0, false), (50.0, false), (45.0, true)] {
            let cfg = RedConfig {
                ecn: true,
                wait,
                limit: 1000,
                max_p: 0.1,
                ..RedConfig::default()
            };
            let mut red = Red::new(cfg.clone(), rng::stream(1, 1, 0));
            let n = 400_000;
            let mut marks = 0u64;
            let mut pool = PacketPool::new();
            let mut dropped = Vec::new();
            // Keep a few packets queued so `qlen > 1` holds; pin the average each arrival.
            for i in 0..n {
                let mut p = Packet::new_udp(
                    Ipv4Repr {
                        ecn: Ecn::ECT0,
                        ..Default::default()
                    },
                    UdpRepr::default(),
                    1012,
                );
                red.set_average(avg);
                red.avg.w_q = 0.0;
                let v = red.enqueue(i, PktId(i as u32), &mut p);
                assert_eq!(v, Verdict::Enqueued);
                if p.ip.ecn == Ecn::CE {
                    marks += 1;
                }
                if red.len() > 4 {
                    red.dequeue(i, &mut pool, &mut dropped);
                }
            }
            // Expected gap between marks from the spacing rule: the count after a mark restarts
            // at 1 and a packet at count c is marked with p_a(c).
            let pb = RedDropper::base_probability(avg, 30.0, 60.0, 0.1, false);
            let (mut survive, mut gap) = (1.0, 0.0);
            let mut d = RedDropper::default();
            for c in 1..100_000 {
                d.count = c;
                gap += survive;
                survive *= 1.0 - d.spaced_probability(pb, wait, false, 1040, 1040);
                if survive < 1e-15 {
                    break;
                }
            }
            let expect = 1.0 / gap;
            if !wait {
                // Floyd & Jacobson: the gap is uniform on 1..1/p_b - 1, so the rate is 2·p_b.
                assert!((expect - 2.0 * pb).abs() < 0.02 * pb || (1.0 / pb).fract() > 1e-9);
            }
            let got = marks as f64 / n as f64;
            let sd = (expect * (1.0 - expect) / n as f64).sqrt();
            assert!(
                (got - expect).abs() < 5.0 * sd + 0.002 * expect,
                "avg {avg} wait {wait}: {got} vs {expect}"
            );
        }
    }

    /// ns-2's `use_mark_p_` with `mark_p_` 0.1 (red.cc `drop_early`: mark only while
    /// `v_prob1 ≤ mark_p`): with max_p 0.1 and gentle, an ECT packet is marked at an average
    /// below max_th (p_b ≤ 0.1) and dropped between max_th and 2·max_th (p_b > 0.1); without
    /// `mark_p` it is marked in both.
    #[test]
    fn mark_p_drops_ect_packets_above_it() {
        for (mark_p, avg, want_mark) in [
            (Some(0.1), 59.0, true),
            (Some(0.1), 60.0, true),
            (Some(0.1), 90.0, false),
            (None, 90.0, true),
        ] {
            let cfg = RedConfig {
                ecn: true,
                limit: 1000,
                max_p: 0.1,
                min_th: 30.0,
                max_th: 60.0,
                gentle: true,
                mark_p,
                ..RedConfig::default()
            };
            let mut red = Red::new(cfg, rng::stream(1, 1, 0));
            let (mut marked, mut dropped) = (0, 0);
            for i in 0..2000u64 {
                let mut p = Packet::new_udp(
                    Ipv4Repr {
                        ecn: Ecn::ECT0,
                        ..Default::default()
                    },
                    UdpRepr::default(),
                    1012,
                );
                red.set_average(avg);
                red.avg.w_q = 0.0;
                match red.enqueue(i, PktId(i as u32), &mut p) {
                    Verdict::Dropped(DropReason::Early) => dropped += 1,
                    Verdict::Enqueued if p.ip.ecn == Ecn::CE => marked += 1,
                    _ => {}
                }
                while red.len() > 4 {
                    red.dequeue(i, &mut PacketPool::new(), &mut Vec::new());
                }
            }
            assert!(
                marked + dropped > 50,
                "{mark_p:?} {avg}: {marked} {dropped}"
            );
            if want_mark {
                assert_eq!(dropped, 0, "{mark_p:?} {avg}");
            } else {
                assert_eq!(marked, 0, "{mark_p:?} {avg}");
            }
        }
        let bad = RedConfig {
            mark_p: Some(0.0),
            ..RedConfig::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("mark_p:"));
    }

    #[test]
    fn idle_time_decays_average() {
        let mut a = RedAverage::new(0.002, 1000);
        a.set_rate(8_000_000); // 1000 packets/s
        a.avg = 50.0;
        a.on_empty(0);
        let avg = a.on_arrival(SEC, 0.0); // 1 s idle = 1000 packet times
        let expect = 50.0 * (1.0f64 - 0.002).powf(1001.0);
        assert!((avg - expect).abs() < 1e-9);
    }

    #[test]
    fn not_ect_is_dropped_ect_is_marked() {
        let cfg = RedConfig {
            ecn: true,
            max_p: 1.0,
            wait: false,
            limit: 1000,
            ..RedConfig::default()
        };
        let mut red = Red::new(cfg, rng::stream(1, 1, 0));
        red.avg.w_q = 0.0;
        let mut seen = (0, 0);
        for i in 0..1000u32 {
            red.set_average(59.0);
            let ecn = if i % 2 == 0 { Ecn::ECT0 } else { Ecn::NOT_ECT };
            let mut p = Packet::new_udp(
                Ipv4Repr {
                    ecn,
                    ..Default::default()
                },
                UdpRepr::default(),
                100,
            );
            match red.enqueue(0, PktId(i), &mut p) {
                Verdict::Dropped(DropReason::Early) => {
                    assert_eq!(ecn, Ecn::NOT_ECT);
                    seen.0 += 1
                }
                Verdict::Enqueued if p.ip.ecn == Ecn::CE => seen.1 += 1,
                _ => {}
            }
        }
        assert!(seen.0 > 0 && seen.1 > 0);
    }
}
