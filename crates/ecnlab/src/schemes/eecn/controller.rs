//! The EECN sender (§4.4): Algorithm 1 on CL(1)/CL(2), Algorithm 2 per ACK, NewReno loss
//! recovery underneath. Readings and parameters: see the [module docs](super).

use super::{AvgRtt, ControllerConfig, CurrentRtt, Level, RttCompare};
use crate::cc::minmax::WindowedMax;
use crate::cc::{AckEvent, Signal};
use crate::time::{self, Time};

/// Average of the connection's RTT samples, in seconds.
#[derive(Clone, Copy, Debug)]
struct RttAverage {
    mode: AvgRtt,
    gain: f64,
    samples: u64,
    avg: f64,
}

impl RttAverage {
    fn value(&self) -> Option<f64> {
        (self.samples > 0).then_some(self.avg)
    }

    /// The average if `s` were added.
    fn with(&self, s: f64) -> f64 {
        if self.samples == 0 {
            return s;
        }
        match self.mode {
            AvgRtt::Mean => self.avg + (s - self.avg) / (self.samples + 1) as f64,
            AvgRtt::Ewma => self.avg + self.gain * (s - self.avg),
        }
    }

    fn add(&mut self, s: f64) {
        self.avg = self.with(s);
        self.samples += 1;
    }
}

pub struct Controller {
    cfg: ControllerConfig,
    mss: f64,
    /// Window and threshold in bytes (fractional: σ-scaled increments are fractions of SZ).
    cwnd: f64,
    ssthresh: f64,
    rtt: RttAverage,
    /// Latest cRTT, seconds.
    c_rtt: Option<f64>,
    /// `crtt = "round_min"`: the windowed minimum of the negated samples (seconds) over the
    /// last smoothed RTT (picoseconds).
    round_min: Option<WindowedMax>,
    /// Fast recovery, from `on_loss` to `on_recovery_end` (as [`NewReno`]).
    ///
    /// [`NewReno`]: crate::cc::newreno::NewReno
    in_fast_recovery: bool,
    /// The last event was a timeout and no new data has been acknowledged since.
    rto_without_progress: bool,
    /// `rtt_resolution_s` in picoseconds.
    rtt_resolution: Time,
    /// `now` of the last ACK that delivered a signal (that ACK skips Algorithm 2).
    signal_at: Option<Time>,
    /// Responses taken, by level (index 1, 2), for statistics.
    pub responses: [u64; 3],
}

/// The RTT comparison of one ACK: cRTT and avgRTT in seconds.
#[derive(Clone, Copy, Debug)]
struct RttView {
    c: f64,
    avg: f64,
    compare: RttCompare,
}

impl RttView {
    #[inline]
    fn congested(&self) -> bool {
        match self.compare {
            RttCompare::Strict => self.c > self.avg,
            RttCompare::Inclusive => self.c >= self.avg,
        }
    }
}

impl Controller {
    /// A controller for segments of `mss` bytes.
    pub fn new(cfg: ControllerConfig, mss: u32) -> Result<Self, String> {
        cfg.validate()?;
        if mss == 0 {
            return Err("mss: must be positive".into());
        }
        let mss = mss as f64;
        Ok(Controller {
            cwnd: cfg.initial_window_segments as f64 * mss,
            ssthresh: f64::INFINITY,
            rtt: RttAverage {
                mode: cfg.avg_rtt,
                gain: cfg.ewma_gain,
                samples: 0,
                avg: 0.0,
            },
            c_rtt: None,
            round_min: None,
            in_fast_recovery: false,
            rto_without_progress: false,
            signal_at: None,
            rtt_resolution: time::from_secs(cfg.rtt_resolution_s),
            responses: [0; 3],
            mss,
            cfg,
        })
    }

    /// Window in bytes, unrounded.
    pub fn cwnd_exact(&self) -> f64 {
        self.cwnd
    }

    /// avgRTT in seconds (committed samples only).
    pub fn avg_rtt(&self) -> Option<f64> {
        self.rtt.value()
    }

    /// cRTT and avgRTT for the ACK `ev`, before its sample is committed. `None` before any
    /// sample: the sender then takes the uncongested branches.
    fn rtt_view(&self, ev: &AckEvent) -> Option<RttView> {
        let sample = self.sample(ev);
        let c = sample.or(self.c_rtt)?;
        let avg = match sample {
            Some(s) if self.cfg.avg_includes_current => self.rtt.with(s),
            _ => self.rtt.value()?,
        };
        Some(RttView {
            c,
            avg,
            compare: self.cfg.rtt_compare,
        })
    }

    /// The ACK's cRTT in seconds, at the configured resolution, before it is committed.
    fn sample(&self, ev: &AckEvent) -> Option<f64> {
        self.current(ev).map(|(c, _)| c)
    }

    /// cRTT of the ACK `ev` and the round-minimum filter that includes it.
    fn current(&self, ev: &AckEvent) -> Option<(f64, Option<WindowedMax>)> {
        let rtt = match self.cfg.crtt {
            CurrentRtt::Sample => ev.rtt,
            CurrentRtt::CaSample | CurrentRtt::RoundMin => ev.rtt_last,
            // Only an ACK with a sample updates the SRTT.
            CurrentRtt::Srtt => ev.rtt.map(|_| ev.srtt).filter(|&s| s > 0),
        }?;
        let res = self.rtt_resolution;
        let s = time::to_secs(if res > 0 { rtt / res * res } else { rtt });
        if self.cfg.crtt != CurrentRtt::RoundMin {
            return Some((s, None));
        }
        let window = if ev.srtt > 0 { ev.srtt } else { rtt };
        Some(match self.round_min.clone() {
            Some(mut f) => (-f.update(window, ev.now, -s), Some(f)),
            None => (s, Some(WindowedMax::starting_at(ev.now, -s))),
        })
    }

    /// `e^−β` with β = cRTT − avgRTT in the configured unit.
    #[inline]
    fn decay(&self, r: RttView) -> f64 {
        (-(r.c - r.avg) * self.cfg.beta_unit.per_second()).exp()
    }

    /// `w` stopped at `segments` segments, or at the current window if that is already
    /// lower: a decrease never raises the window.
    #[inline]
    fn floored(&self, w: f64, segments: u32) -> f64 {
        w.max((segments as f64 * self.mss).min(self.cwnd))
    }

    /// The least window a decay (`e^−β`) leaves.
    #[inline]
    fn decay_floor(&self, w: f64) -> f64 {
        self.floored(w, self.cfg.decay_floor_segments)
    }

    /// Algorithm 1, CL(2).
    fn on_cl2(&mut self, r: Option<RttView>) {
        let congested = r.is_some_and(|r| r.congested());
        let d = if congested {
            self.cfg.d
        } else {
            self.cfg.d / 2.0
        };
        let w = self.floored(self.cwnd / d, self.cfg.cl2_floor_segments);
        self.ssthresh = w;
        self.cwnd = w;
        self.responses[2] += 1;
    }

    /// Algorithm 1, CL(1).
    fn on_cl1(&mut self, r: Option<RttView>) {
        if let Some(r) = r.filter(|r| r.congested()) {
            let w = self.decay_floor(self.cwnd * self.decay(r));
            self.ssthresh = w;
            self.cwnd = w;
            self.responses[1] += 1;
        }
    }

    /// Algorithm 2 for one ACK.
    fn grow(&mut self, r: Option<RttView>) {
        let congested = r.is_some_and(|r| r.congested());
        if self.cwnd < self.ssthresh {
            self.cwnd += if congested {
                self.mss * self.cfg.sigma_ss
            } else {
                self.mss
            };
        } else if let Some(r) = r.filter(|_| congested) {
            self.cwnd = self.decay_floor(self.cwnd * self.decay(r));
            if self.cfg.ca_decay_lowers_ssthresh {
                self.ssthresh = self.cwnd;
            }
        } else {
            self.cwnd += self.mss * self.cfg.sigma_ca;
        }
    }

    /// RFC 5681 eq. (4): ssthresh after a loss.
    fn loss_threshold(&self, bytes_in_flight: u64) -> f64 {
        (bytes_in_flight as f64 / 2.0).max(2.0 * self.mss)
    }
}

impl crate::cc::Controller for Controller {
    fn name(&self) -> &'static str {
        "eecn"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.cwnd = bytes.max(1) as f64;
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        let r = self.rtt_view(ev);
        if let Some((s, filter)) = self.current(ev) {
            self.rtt.add(s);
            self.c_rtt = Some(s);
            self.round_min = filter;
        }
        if ev.acked_bytes > 0 {
            self.rto_without_progress = false;
        }
        let signalled = self.signal_at == Some(ev.now);
        self.signal_at = None;
        if self.in_fast_recovery {
            return;
        }
        if signalled && !self.cfg.grow_on_signal_ack {
            return;
        }
        self.grow(r);
    }

    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        if self.in_fast_recovery {
            // Already reduced for this window by the loss response (RFC 3168 §6.1.2).
            return;
        }
        let level = match signal {
            Signal::Level(1) => Level::Cl1,
            // A classic peer's ECE means CE somewhere: EECN's CL(2).
            Signal::Level(2) | Signal::Ecn => Level::Cl2,
            _ => return,
        };
        let r = self.rtt_view(ev);
        match level {
            Level::Cl2 => self.on_cl2(r),
            Level::Cl1 => self.on_cl1(r),
            Level::None => {}
        }
        self.signal_at = Some(ev.now);
    }

    fn on_loss(&mut self, _now: Time, bytes_in_flight: u64) {
        if self.in_fast_recovery {
            return;
        }
        self.ssthresh = self.loss_threshold(bytes_in_flight);
        self.cwnd = self.ssthresh;
        self.in_fast_recovery = true;
    }

    fn on_recovery_end(&mut self, _now: Time) {
        // RFC 6582 §3.2 step 6, full acknowledgment: cwnd = ssthresh.
        if self.in_fast_recovery {
            self.in_fast_recovery = false;
            self.cwnd = self.ssthresh;
        }
    }

    fn on_rto(&mut self, _now: Time, bytes_in_flight: u64) {
        self.in_fast_recovery = false;
        // RFC 5681 §3.1: a timeout of an already retransmitted segment keeps ssthresh.
        if !self.rto_without_progress {
            self.ssthresh = self.loss_threshold(bytes_in_flight);
        }
        self.cwnd = self.mss;
        self.rto_without_progress = true;
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn ssthresh(&self) -> u64 {
        if self.ssthresh.is_finite() {
            self.ssthresh as u64
        } else {
            u64::MAX
        }
    }

    fn sample(&self, out: &mut crate::net::Samples) {
        if let Some(a) = self.rtt.value() {
            out.push(("avg_rtt_s", a));
        }
        if let (Some(c), Some(a)) = (self.c_rtt, self.rtt.value()) {
            out.push(("beta", (c - a) * self.cfg.beta_unit.per_second()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::Controller as _;
    use crate::schemes::eecn::{BetaUnit, CurrentRtt};
    use crate::time::MS;

    const SZ: f64 = 1000.0;

    /// cRTT is the ACK's own RTT sample, as Algorithms 1 and 2 read.
    fn per_sample() -> ControllerConfig {
        ControllerConfig {
            crtt: CurrentRtt::Sample,
            ..Default::default()
        }
    }

    /// The comparison the paper's algorithms print (`cRTT ≥ avgRTT`): the hand-computed cases
    /// below follow them step by step, ties included.
    fn printed() -> ControllerConfig {
        ControllerConfig {
            rtt_compare: RttCompare::Inclusive,
            ..per_sample()
        }
    }

    fn ctl(cfg: ControllerConfig) -> Controller {
        Controller::new(cfg, SZ as u32).unwrap()
    }

    /// An ACK at `t_ms` carrying an RTT sample of `rtt_ms` (or none).
    fn ack(t_ms: u64, rtt_ms: Option<u64>) -> AckEvent {
        AckEvent {
            now: t_ms * MS,
            acked_bytes: SZ as u64,
            rtt: rtt_ms.map(|r| r * MS),
            rtt_last: rtt_ms.map(|r| r * MS),
            ..Default::default()
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn slow_start_full_or_sigma_by_rtt() {
        let mut c = ctl(printed());
        c.set_initial_window(10_000);
        // No sample yet: plain slow start, +SZ.
        c.on_ack(&ack(1, None));
        assert!(close(c.cwnd_exact(), 11_000.0));
        // First sample 100 ms: avg (incl. current) = 100 = cRTT → cRTT ≥ avgRTT → +0.3·SZ.
        c.on_ack(&ack(2, Some(100)));
        assert!(close(c.cwnd_exact(), 11_300.0));
        // 80 ms: avg = (100 + 80)/2 = 90 > 80 → +SZ.
        c.on_ack(&ack(3, Some(80)));
        assert!(close(c.cwnd_exact(), 12_300.0));
        // 120 ms: avg = 100 ≤ 120 → +0.3·SZ.
        c.on_ack(&ack(4, Some(120)));
        assert!(close(c.cwnd_exact(), 12_600.0));
        // No sample on this ACK: cRTT stays 120, avg 100 → +0.3·SZ.
        c.on_ack(&ack(5, None));
        assert!(close(c.cwnd_exact(), 12_900.0));
        assert_eq!(c.window(), 12_900);
        assert!(close(c.avg_rtt().unwrap(), 0.1));
    }

    #[test]
    fn a_flat_rtt_lets_the_window_grow() {
        // One flow on an empty path: every sample is 24 ms, so avgRTT = cRTT on every ACK.
        // Strictly, cRTT does not exceed avgRTT: slow start adds SZ per ACK, then congestion
        // avoidance σ_ca·SZ per ACK, and the window keeps growing.
        let mut c = ctl(per_sample());
        c.set_initial_window(10_000);
        for t in 1..=20 {
            c.on_ack(&ack(t, Some(24)));
        }
        assert!(close(c.cwnd_exact(), 30_000.0));
        c.on_rto(21 * MS, 30_000); // ssthresh 15 000, cwnd 1 SZ
        for t in 22..=35 {
            c.on_ack(&ack(t, Some(24)));
        }
        // 14 ACKs of slow start up to 15 SZ, then congestion avoidance.
        assert!(close(c.cwnd_exact(), 15_000.0));
        for t in 36..=135 {
            c.on_ack(&ack(t, Some(24)));
        }
        assert!(close(c.cwnd_exact(), 15_000.0 + 100.0 * 0.02 * SZ));
        // The algorithms' printed `≥` freezes it instead: β = 0 decays by e^0 = 1 per ACK.
        let mut frozen = ctl(printed());
        frozen.set_initial_window(16_000);
        frozen.on_rto(MS, 32_000); // ssthresh 16 000
        frozen.set_initial_window(16_000);
        for t in 2..=1000 {
            frozen.on_ack(&ack(t, Some(24)));
        }
        assert!(
            close(frozen.cwnd_exact(), 16_000.0),
            "{}",
            frozen.cwnd_exact()
        );
    }

    #[test]
    fn microsecond_jitter_on_an_empty_path_is_no_congestion_at_a_millisecond_clock() {
        // An empty 24 ms path: most samples 24.19 ms, one in thirty 24.10 ms (where a segment
        // falls in a delayed-ACK pair). The long-run mean sits just below 24.19 ms.
        let jittered = |t: u64| {
            let rtt = Some(if t % 30 == 0 { 24_100 } else { 24_190 } * crate::time::US);
            AckEvent {
                now: t * MS,
                acked_bytes: SZ as u64,
                rtt,
                rtt_last: rtt,
                ..Default::default()
            }
        };
        let run = |cfg: ControllerConfig| {
            let mut c = ctl(cfg);
            c.set_initial_window(16_000);
            c.on_rto(0, 32_000); // ssthresh 16 000: congestion avoidance from the start
            c.set_initial_window(16_000);
            for t in 1..=3000 {
                c.on_ack(&jittered(t));
            }
            c.cwnd_exact()
        };
        // At 1 ms every sample reads 24 ms: flat, so the window grows by σ_ca·SZ per ACK.
        assert!(close(run(per_sample()), 16_000.0 + 3000.0 * 20.0));
        // Exact samples: 29 ACKs in 30 are "above the average" and decay; the window barely moves.
        let exact = run(ControllerConfig {
            rtt_resolution_s: 0.0,
            ..per_sample()
        });
        assert!(exact < 16_000.0 + 3000.0 * 20.0 / 20.0, "{exact}");
    }

    #[test]
    fn a_delayed_acks_hold_is_no_congestion_with_linuxs_ca_sample() {
        // An idle 44 ms path, a delayed-ACK receiver and odd trains: every fourth ACK
        // acknowledges a segment the receiver held 40 ms for its partner. The estimator's
        // sample (the first segment acknowledged) reads 84 ms, Linux's ca_rtt (the last) 44.
        let held = |t: u64| AckEvent {
            rtt: Some(if t % 4 == 0 { 84 } else { 44 } * MS),
            ..ack(t, Some(44))
        };
        let run = |crtt| {
            let mut c = ctl(ControllerConfig {
                crtt,
                ..Default::default()
            });
            c.on_rto(0, 104_000); // ssthresh 52 000: congestion avoidance from the start
            c.set_initial_window(52_000);
            for t in 1..=400 {
                c.on_ack(&held(t));
            }
            c.cwnd_exact()
        };
        // ca: every sample is 44 ms, flat; +σ_ca·SZ on each of the 400 ACKs.
        assert!(close(run(CurrentRtt::CaSample), 52_000.0 + 400.0 * 20.0));
        // estimator: the mean settles near 54 ms and each held sample decays cwnd by about
        // e^−0.03, below ssthresh (52 000); slow start refills it to ssthresh and the
        // congestion-avoidance growth gained above ssthresh is lost: the window is pinned there.
        let w = run(CurrentRtt::Sample);
        assert!(w < 52_000.0 * 1.02, "{w}");
    }

    #[test]
    fn round_min_ignores_a_held_ack_and_sees_a_rise_that_lasts_a_round_trip() {
        // An ACK every millisecond on a 44 ms path (SRTT 44 ms), in congestion avoidance.
        let at = |t: u64, ca_ms: u64| AckEvent {
            srtt: 44 * MS,
            rtt_last: Some(ca_ms * MS),
            ..ack(t, Some(ca_ms))
        };
        let start = |crtt| {
            let mut c = ctl(ControllerConfig {
                crtt,
                ..Default::default()
            });
            c.on_rto(0, 104_000); // ssthresh 52 000
            c.set_initial_window(52_000);
            c
        };
        // Every fourth ACK was sent by the delayed-ACK timer for a lone segment: even Linux's
        // ca_rtt reads 84 ms. The round's minimum stays 44 ms: +σ_ca·SZ on every ACK.
        let mut round = start(CurrentRtt::RoundMin);
        let mut ca = start(CurrentRtt::CaSample);
        for t in 1..=400 {
            let ms = if t % 4 == 0 { 84 } else { 44 };
            round.on_ack(&at(t, ms));
            ca.on_ack(&at(t, ms));
        }
        assert!(close(round.cwnd_exact(), 52_000.0 + 400.0 * 20.0));
        assert!(ca.cwnd_exact() < 52_000.0 * 1.02, "{}", ca.cwnd_exact());
        // A queue that adds 16 ms for good: cRTT rises when the last 44 ms sample is more than
        // an SRTT old, at the ACK of t = 145 ms, and the window decays from then on.
        let mut c = start(CurrentRtt::RoundMin);
        for t in 1..=144 {
            c.on_ack(&at(t, if t <= 100 { 44 } else { 60 }));
        }
        let w = 52_000.0 + 144.0 * 20.0;
        assert!(close(c.cwnd_exact(), w), "{}", c.cwnd_exact());
        c.on_ack(&at(145, 60));
        let avg: f64 = (144.0 * 0.044 + 0.060) / 145.0;
        assert!(close(c.cwnd_exact(), w * (-(0.060 - avg)).exp()));
    }

    #[test]
    fn srtt_reading_compares_the_smoothed_rtt() {
        // ns-3's "last RTT" before 3.43: the smoothed RTT, taken when the ACK has a sample.
        let mut c = ctl(ControllerConfig {
            crtt: CurrentRtt::Srtt,
            ..Default::default()
        });
        c.on_rto(0, 40_000); // ssthresh 20 000
        c.set_initial_window(20_000);
        let at = |t: u64, sample: Option<u64>, srtt_ms: u64| AckEvent {
            srtt: srtt_ms * MS,
            ..ack(t, sample)
        };
        // A held 84 ms sample moves the SRTT from 44 to 49 ms: cRTT 49 > avg (44 + 49)/2.
        c.on_ack(&at(1, Some(44), 44));
        c.on_ack(&at(2, Some(84), 49));
        let avg: f64 = (0.044 + 0.049) / 2.0;
        assert!(close(c.avg_rtt().unwrap(), avg));
        assert!(close(
            c.cwnd_exact(),
            (20_000.0 + 20.0) * (-(0.049 - avg)).exp()
        ));
        // An ACK without a sample leaves cRTT and the average as they were: the decay left
        // cwnd below ssthresh, and slow start with cRTT above the average adds σ_ss·SZ.
        let w = c.cwnd_exact();
        c.on_ack(&at(3, None, 60));
        assert!(close(c.avg_rtt().unwrap(), avg));
        assert!(close(c.cwnd_exact(), w + 300.0));
    }

    #[test]
    fn a_congestion_signal_never_raises_the_window() {
        for cfg in [ControllerConfig::default(), per_sample(), printed()] {
            // After a timeout the window is one segment, below both two-segment floors.
            let mut c = ctl(cfg.clone());
            c.on_ack(&ack(1, Some(50)));
            c.on_rto(2 * MS, 20_000);
            assert!(close(c.cwnd_exact(), SZ));
            c.on_signal(&ack(3, Some(80)), Signal::Level(2));
            assert!(
                c.cwnd_exact() <= SZ,
                "CL(2) raised cwnd to {}",
                c.cwnd_exact()
            );
            c.on_signal(&ack(4, Some(90)), Signal::Level(1));
            assert!(
                c.cwnd_exact() <= SZ,
                "CL(1) raised cwnd to {}",
                c.cwnd_exact()
            );
            // A slow-start window of 1.5 SZ (σ-scaled growth) decayed by a high RTT stays ≤.
            let mut d = ctl(cfg);
            d.set_initial_window(1_500);
            d.on_ack(&ack(1, Some(50)));
            let before = d.cwnd_exact();
            d.on_signal(&ack(2, Some(200)), Signal::Level(1));
            assert!(d.cwnd_exact() <= before);
        }
    }

    #[test]
    fn cl2_divides_by_d_or_half_d_with_floor() {
        // Samples 100, 100 → avg 100 ms. CL(2) with cRTT 140 (avg incl. = 113.3): d = 8.
        let mut c = ctl(printed());
        c.set_initial_window(64_000);
        c.on_ack(&ack(1, Some(100)));
        c.on_ack(&ack(2, Some(100)));
        let w = c.cwnd_exact();
        assert!(close(w, 64_000.0 + 2.0 * 300.0)); // two ACKs at cRTT = avg: +0.3·SZ each
        c.on_signal(&ack(3, Some(140)), Signal::Level(2));
        assert!(close(c.cwnd_exact(), w / 8.0));
        assert_eq!(c.ssthresh(), (w / 8.0) as u64);
        // The same ACK does not also grow the window.
        c.on_ack(&ack(3, Some(140)));
        assert!(close(c.cwnd_exact(), w / 8.0));
        // Samples 100, 100, 140 and now 90: avg 107.5 ms > cRTT → d/2 = 4:
        // 8075 / 4 = 2018.75.
        c.on_signal(&ack(4, Some(90)), Signal::Level(2));
        assert!(close(c.cwnd_exact(), w / 8.0 / 4.0));
        // Again (samples 100, 100, 140, 90 and now 90: avg 104 ms > 90): 2018.75/4 = 504.7
        // → floor 2·SZ.
        c.on_ack(&ack(4, Some(90)));
        c.on_signal(&ack(5, Some(90)), Signal::Level(2));
        assert!(close(c.cwnd_exact(), 2.0 * SZ));
        assert_eq!(c.ssthresh(), 2000);
        // A classic ECE counts as CL(2).
        let mut k = ctl(printed());
        k.set_initial_window(40_000);
        k.on_signal(&ack(1, Some(50)), Signal::Ecn);
        assert!(
            close(k.cwnd_exact(), 5_000.0),
            "cRTT = avg (one sample) → d = 8"
        );
    }

    #[test]
    fn cl1_decays_by_e_minus_beta_only_when_rtt_high() {
        let mut c = ctl(printed());
        c.set_initial_window(50_000);
        for t in 1..=4 {
            c.on_ack(&ack(t, Some(100)));
        }
        let w = c.cwnd_exact(); // 50000 + 4·300
        assert!(close(w, 51_200.0));
        // cRTT 350 ms: avg incl. = (400 + 350)/5 = 150 ms → β = 0.2 s → ×e^−0.2.
        c.on_signal(&ack(5, Some(350)), Signal::Level(1));
        let want = w * (-0.2f64).exp();
        assert!(close(c.cwnd_exact(), want), "{} vs {want}", c.cwnd_exact());
        assert_eq!(c.ssthresh(), want as u64);
        c.on_ack(&ack(5, Some(350)));
        assert!(
            close(c.cwnd_exact(), want),
            "no Algorithm 2 on the signalled ACK"
        );
        // cRTT 60 ms < avg: CL(1) changes nothing (neither window nor threshold).
        let ss = c.ssthresh();
        c.on_signal(&ack(6, Some(60)), Signal::Level(1));
        assert!(close(c.cwnd_exact(), want));
        assert_eq!(c.ssthresh(), ss);
        // In milliseconds, β = 200 → the window collapses to the decay floor: two segments,
        // or one in the literal reading.
        for (floor, want) in [(2, 2.0 * SZ), (1, SZ)] {
            let mut m = ctl(ControllerConfig {
                beta_unit: BetaUnit::Ms,
                decay_floor_segments: floor,
                ..printed()
            });
            m.set_initial_window(50_000);
            for t in 1..=4 {
                m.on_ack(&ack(t, Some(100)));
            }
            m.on_signal(&ack(5, Some(350)), Signal::Level(1));
            assert!(close(m.cwnd_exact(), want));
        }
    }

    #[test]
    fn a_decay_after_a_cl2_floor_keeps_two_whole_segments() {
        // CL(2) takes the window to its 2·SZ floor; the next ACK, with cRTT above the average,
        // decays it. By default it stays at 2·SZ, so a second segment can join the one in
        // flight (a delayed-ACK receiver answers two); the literal reading leaves 1999 bytes,
        // one whole segment.
        for (floor, window) in [(2, 2000), (1, 1999)] {
            let mut c = ctl(ControllerConfig {
                decay_floor_segments: floor,
                ..printed()
            });
            c.set_initial_window(5_000);
            c.on_ack(&ack(1, Some(4)));
            c.on_signal(&ack(2, Some(5)), Signal::Level(2));
            c.on_ack(&ack(2, Some(5)));
            assert!(close(c.cwnd_exact(), 2.0 * SZ));
            c.on_ack(&ack(3, Some(5)));
            assert_eq!(c.window(), window, "decay_floor_segments = {floor}");
        }
    }

    #[test]
    fn congestion_avoidance_grows_sigma_or_decays_per_ack() {
        let mut c = ctl(printed());
        c.set_initial_window(20_000);
        c.on_ack(&ack(1, Some(100)));
        c.on_ack(&ack(2, Some(100)));
        // Enter CA: CL(2) at cRTT = avg (100) → d = 8 → 20600/8 = 2575 = ssthresh = cwnd.
        c.on_signal(&ack(3, Some(100)), Signal::Level(2));
        assert!(close(c.cwnd_exact(), 2575.0));
        c.on_ack(&ack(3, Some(100)));
        // cRTT 50 < avg (350/4 = 87.5): +0.02·SZ = +20 per ACK.
        c.on_ack(&ack(4, Some(50)));
        assert!(close(c.cwnd_exact(), 2595.0));
        // cRTT 50, avg (400/5 = 80) → +20.
        c.on_ack(&ack(5, Some(50)));
        assert!(close(c.cwnd_exact(), 2615.0));
        // cRTT 200 ms, avg (400 + 200)/6 = 100 → β = 0.1 → ×e^−0.1, ssthresh unchanged.
        c.on_ack(&ack(6, Some(200)));
        let decayed = 2615.0 * (-0.1f64).exp();
        assert!(close(c.cwnd_exact(), decayed));
        assert_eq!(c.ssthresh(), 2575);
        // Now cwnd (2366.2) < ssthresh: the next ACK is slow start; cRTT 200 ≥ avg
        // (800/7 = 114.3) → +0.3·SZ.
        c.on_ack(&ack(7, Some(200)));
        assert!(close(c.cwnd_exact(), decayed + 300.0));
        // And above ssthresh again: CA decay with β = 0.2 − 1.0/8 = 0.075.
        c.on_ack(&ack(8, Some(200)));
        assert!(close(c.cwnd_exact(), (decayed + 300.0) * (-0.075f64).exp()));
    }

    #[test]
    fn ca_decay_can_lower_ssthresh() {
        let mut c = ctl(ControllerConfig {
            ca_decay_lowers_ssthresh: true,
            decay_floor_segments: 1,
            ..printed()
        });
        c.set_initial_window(16_000);
        c.on_signal(&ack(1, Some(100)), Signal::Level(2)); // → 2000, CA
        c.on_ack(&ack(1, Some(100)));
        c.on_ack(&ack(2, Some(400))); // avg 250, β = 0.15
        let w = 2000.0 * (-0.15f64).exp();
        assert!(close(c.cwnd_exact(), w));
        assert_eq!(c.ssthresh(), w as u64);
        // Still CA: cRTT 40 < avg (540/3 = 180) → +20, not +SZ.
        c.on_ack(&ack(3, Some(40)));
        assert!(close(c.cwnd_exact(), w + 20.0));
    }

    #[test]
    fn ewma_average_and_exclusive_comparison() {
        let mut c = ctl(ControllerConfig {
            avg_rtt: AvgRtt::Ewma,
            ewma_gain: 0.5,
            avg_includes_current: false,
            ..printed()
        });
        c.set_initial_window(10_000);
        // First sample: no average to compare with yet → +SZ.
        c.on_ack(&ack(1, Some(100)));
        assert!(close(c.cwnd_exact(), 11_000.0));
        // 200 vs avg 100 → +0.3; avg becomes 150.
        c.on_ack(&ack(2, Some(200)));
        assert!(close(c.cwnd_exact(), 11_300.0));
        assert!(close(c.avg_rtt().unwrap(), 0.15));
        // 140 vs 150 → +SZ; avg 145.
        c.on_ack(&ack(3, Some(140)));
        assert!(close(c.cwnd_exact(), 12_300.0));
        assert!(close(c.avg_rtt().unwrap(), 0.145));
    }

    #[test]
    fn newreno_loss_and_timeout() {
        let mut c = ctl(printed());
        c.set_initial_window(30_000);
        c.on_ack(&ack(1, Some(100)));
        // Fast retransmit with 30 kB in flight: ssthresh = cwnd = 15 kB.
        c.on_loss(2 * MS, 30_000);
        assert_eq!((c.window(), c.ssthresh()), (15_000, 15_000));
        // During recovery: no growth, no reaction to CL signals.
        let mut e = ack(3, Some(100));
        e.in_recovery = true;
        c.on_signal(&e, Signal::Level(2));
        c.on_ack(&e);
        assert_eq!(c.window(), 15_000);
        c.on_recovery_end(4 * MS);
        assert_eq!(c.window(), 15_000);
        // Then CA per Algorithm 2 (cRTT 50 < avg): +20.
        c.on_ack(&ack(5, Some(50)));
        assert_eq!(c.window(), 15_020);
        // RTO: ssthresh = max(flight/2, 2·SMSS) = 2 SMSS for a tiny flight, cwnd = 1 SMSS.
        c.on_rto(6 * MS, 3_000);
        assert_eq!((c.window(), c.ssthresh()), (1_000, 2_000));
        // A second timeout before any progress keeps ssthresh (RFC 5681 §3.1).
        c.on_rto(7 * MS, 100_000);
        assert_eq!((c.window(), c.ssthresh()), (1_000, 2_000));
        // Slow start after the timeout (the connection may flag RTO recovery; growth goes
        // on): cRTT 50 vs avg (incl.) 75 → +SZ.
        let mut e = ack(8, Some(50));
        e.in_recovery = true;
        c.on_ack(&e);
        assert_eq!(c.window(), 2_000);
        // Progress was made: the next timeout halves the flight again.
        c.on_rto(9 * MS, 100_000);
        assert_eq!((c.window(), c.ssthresh()), (1_000, 50_000));
    }

    #[test]
    fn grow_on_signal_ack_when_asked_and_bad_params() {
        let mut c = ctl(ControllerConfig {
            grow_on_signal_ack: true,
            ..printed()
        });
        c.set_initial_window(16_000);
        c.on_signal(&ack(1, Some(100)), Signal::Level(2));
        c.on_ack(&ack(1, Some(100)));
        // 2000 (CA, cRTT = avg → β = 0 → factor 1).
        assert!(close(c.cwnd_exact(), 2000.0));
        assert!(Controller::new(ControllerConfig::default(), 0).is_err());
        let e = Controller::new(
            ControllerConfig {
                ewma_gain: 2.0,
                ..printed()
            },
            1000,
        );
        assert!(e.err().unwrap().starts_with("ewma_gain:"));
        // Unknown signals are ignored.
        let w = c.window();
        c.on_signal(&ack(2, None), Signal::Load(3));
        assert_eq!(c.window(), w);
    }
}
