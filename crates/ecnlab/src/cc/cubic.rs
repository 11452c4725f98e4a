//! CUBIC (RFC 9438).
//!
//! Window in congestion avoidance, in segments, t seconds into the current epoch:
//! `W_cubic(t) = C·(t − K)³ + W_max`, `K = ∛((W_max − cwnd_epoch)/C)` (eq. 2, which is
//! `∛(W_max·(1 − β)/C)` right after a reduction). Each ACK aims at `target = W_cubic(t + RTT)`
//! clamped to [cwnd, 1.5·cwnd] and adds `(target − cwnd)/cwnd` per acknowledged segment
//! (§4.4–4.5, the per-ACK rule scaled by the segments an ACK covers). The Reno-friendly
//! estimate `W_est += α·segments_acked/cwnd` (α = 3(1−β)/(1+β), 1 once W_est reaches
//! cwnd_prior, §4.3) takes over whenever `W_cubic(t) < W_est`.
//!
//! Readings, as parameters of [`CubicConfig`] or stated here:
//! - RTT in the target is `target_rtt`: the smallest RTT sample (`"min"`, default: Linux's
//!   and ns-3's `delay_min`) or the smoothed RTT (`"srtt"`, as RFC 9438 writes it; the latest
//!   sample before the first).
//! - While W_max is unknown (no congestion event yet, or none since a timeout) the window
//!   grows by at least 1/`cnt_clamp` of itself per RTT (Linux's and ns-3's `cnt` clamp of 20:
//!   5 % per RTT, because the curve from K = 0 is far slower than an unknown path allows);
//!   unset = RFC 9438's curve alone.
//! - The epoch starts at the first ACK of a congestion-avoidance stage. When W_max is
//!   undefined (the first stage without a congestion event, or the first after a timeout,
//!   §4.8) W_max = cwnd_epoch and K = 0.
//! - Reduction (§4.6): `ssthresh = max(X·β, 2·SMSS)` with X from `reduce_from` (FlightSize by
//!   default as the RFC writes it; cwnd as Linux does), cwnd = max(X·β, 2·SMSS) after a loss
//!   and max(X·β, 1·SMSS) after an ECN-Echo; fast convergence (§4.7) lowers W_max to
//!   cwnd·(1+β)/2 when cwnd had not regained the previous W_max.
//! - The Reno-friendly region never lowers cwnd on an ACK (cwnd = max(cwnd, W_est)).
//! - Fast recovery, ECN and timeout handling follow [`super::newreno`]: no growth during fast
//!   recovery and the connection's CWR round after an ECN reduction, cwnd = ssthresh at
//!   their end, one reduction per window, loss window of 1 SMSS after a timeout with
//!   ssthresh from β.
//! - Slow start is Reno's with byte counting (L = `abc_limit`), left early by `hystart`:
//!   `"linux"` (default) is Linux's HyStart ([`super::hystart_linux`]; ns-3's TcpCubic has it
//!   on by default too), in every slow start until it fires, again after a timeout;
//!   `"rfc9406"` is HyStart++ (RFC 9406, recommended by RFC 9438 §4.10), only in the initial
//!   slow start and with its own per-ACK limit; `"off"` (or `false`) stops slow start only at
//!   ssthresh or a congestion event.
//! - Time is not frozen while the sender is application-limited (§5.8 is not modelled), and
//!   spurious-congestion undo (§4.9) is not implemented.

use super::hystart::{HyStart, HystartConfig, Step};
use super::hystart_linux::{sample_counts, LinuxHyStart, LinuxHystartConfig};
use super::newreno::{check_mss, reduction_base, rfc5681_initial_window, ReduceFrom};
use super::{AckEvent, Controller, Signal};
use crate::time::{to_secs, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CubicConfig {
    /// C, in segments/s³.
    pub c: f64,
    /// β_cubic.
    pub beta: f64,
    pub fast_convergence: bool,
    /// Initial window in segments; unset = RFC 5681 §3.1.
    pub initial_window: Option<u32>,
    /// Initial ssthresh in bytes; unset = unbounded.
    pub initial_ssthresh: Option<u64>,
    /// RFC 3465 L in slow start, in segments.
    pub abc_limit: u32,
    /// RFC 3465 L in the slow start that follows a timeout, in segments.
    pub abc_limit_after_rto: u32,
    pub reduce_from: ReduceFrom,
    /// RTT added to t in the target W_cubic(t + RTT).
    pub target_rtt: TargetRtt,
    /// While W_max is unknown, grow at least cwnd/`cnt_clamp` per RTT; unset = no floor.
    pub cnt_clamp: Option<u32>,
    /// How slow start ends before a congestion event.
    pub hystart: HystartMode,
    /// HyStart++'s parameters (`hystart = "rfc9406"`).
    pub hystart_params: HystartConfig,
    /// Linux HyStart's parameters (`hystart = "linux"`).
    pub hystart_linux: LinuxHystartConfig,
}

/// `target_rtt`: the RTT CUBIC looks ahead by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetRtt {
    /// The smallest RTT sample (Linux, ns-3).
    Min,
    /// The smoothed RTT (RFC 9438 §4.2).
    Srtt,
}

/// `hystart`: `"linux"`, `"rfc9406"` or `"off"`; `true`/`false` mean `"rfc9406"`/`"off"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HystartMode {
    Off,
    Linux,
    Rfc9406,
}

impl<'de> Deserialize<'de> for HystartMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(false) => Ok(HystartMode::Off),
            serde_json::Value::Bool(true) => Ok(HystartMode::Rfc9406),
            serde_json::Value::String(s) => match s.as_str() {
                "off" => Ok(HystartMode::Off),
                "linux" => Ok(HystartMode::Linux),
                "rfc9406" => Ok(HystartMode::Rfc9406),
                _ => Err(D::Error::custom(format!(
                    "unknown hystart \"{s}\"; expected \"linux\", \"rfc9406\" or \"off\""
                ))),
            },
            v => Err(D::Error::custom(format!(
                "hystart must be \"linux\", \"rfc9406\", \"off\" or a boolean, not {v}"
            ))),
        }
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            initial_window: None,
            initial_ssthresh: None,
            abc_limit: 2,
            abc_limit_after_rto: 1,
            reduce_from: ReduceFrom::FlightSize,
            target_rtt: TargetRtt::Min,
            cnt_clamp: Some(20),
            hystart: HystartMode::Linux,
            hystart_params: HystartConfig::default(),
            hystart_linux: LinuxHystartConfig::default(),
        }
    }
}

impl CubicConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.c > 0.0 && self.c.is_finite()) {
            return Err(format!("c: {} must be positive", self.c));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("beta: {} is outside (0, 1)", self.beta));
        }
        if self.initial_window == Some(0) {
            return Err("initial_window: must be at least 1 segment".into());
        }
        if self.initial_ssthresh == Some(0) {
            return Err("initial_ssthresh: must be positive".into());
        }
        if self.abc_limit == 0 {
            return Err("abc_limit: must be at least 1 segment".into());
        }
        if self.cnt_clamp == Some(0) {
            return Err("cnt_clamp: must be at least 1".into());
        }
        if self.abc_limit_after_rto == 0 {
            return Err("abc_limit_after_rto: must be at least 1 segment".into());
        }
        self.hystart_params.validate()?;
        self.hystart_linux.validate()
    }
}

pub struct Cubic {
    mss: f64,
    c: f64,
    beta: f64,
    alpha_cubic: f64,
    fast_convergence: bool,
    reduce_from: ReduceFrom,
    abc_limit: u64,
    abc_limit_after_rto: u64,
    /// Bytes; fractional so that sub-byte per-ACK increments accumulate.
    cwnd: f64,
    ssthresh: u64,
    /// Segments; `None` until the first congestion avoidance and after a timeout.
    w_max: Option<f64>,
    /// W_max came from a congestion event (not from the window at an epoch's start).
    w_max_known: bool,
    target_rtt: TargetRtt,
    cnt_clamp: Option<f64>,
    /// Seconds.
    k: f64,
    epoch_start: Option<Time>,
    /// Segments.
    w_est: f64,
    /// cwnd (segments) when ssthresh was last reduced.
    cwnd_prior: f64,
    hystart: Option<HyStart>,
    linux_hystart: Option<LinuxHyStart>,
    /// Smallest RTT sample (Linux's `delay_min`; forgotten at a timeout), 0 before one.
    delay_min: Time,
    after_rto: bool,
    in_fast_recovery: bool,
    rto_without_progress: bool,
    /// (cwnd, ssthresh) before the last timeout, for its undo.
    before_timeout: Option<(f64, u64)>,
}

impl Cubic {
    pub fn new(mss: u32, cfg: CubicConfig) -> Result<Self, String> {
        check_mss(mss)?;
        cfg.validate()?;
        let m = mss as f64;
        let iw = match cfg.initial_window {
            Some(n) => n as u64 * mss as u64,
            None => rfc5681_initial_window(mss),
        };
        Ok(Cubic {
            mss: m,
            c: cfg.c,
            beta: cfg.beta,
            alpha_cubic: 3.0 * (1.0 - cfg.beta) / (1.0 + cfg.beta),
            fast_convergence: cfg.fast_convergence,
            reduce_from: cfg.reduce_from,
            abc_limit: cfg.abc_limit as u64 * mss as u64,
            abc_limit_after_rto: cfg.abc_limit_after_rto as u64 * mss as u64,
            cwnd: iw as f64,
            ssthresh: cfg.initial_ssthresh.unwrap_or(u64::MAX),
            w_max: None,
            w_max_known: false,
            target_rtt: cfg.target_rtt,
            cnt_clamp: cfg.cnt_clamp.map(f64::from),
            k: 0.0,
            epoch_start: None,
            w_est: 0.0,
            cwnd_prior: 0.0,
            hystart: (cfg.hystart == HystartMode::Rfc9406)
                .then(|| HyStart::new(cfg.hystart_params)),
            linux_hystart: (cfg.hystart == HystartMode::Linux)
                .then(|| LinuxHyStart::new(cfg.hystart_linux)),
            delay_min: 0,
            after_rto: false,
            in_fast_recovery: false,
            rto_without_progress: false,
            before_timeout: None,
        })
    }

    /// W_max in segments (`None` while undefined).
    pub fn w_max(&self) -> Option<f64> {
        self.w_max
    }

    /// K of the current epoch, in seconds.
    pub fn k(&self) -> f64 {
        self.k
    }

    fn w_cubic(&self, t: f64, w_max: f64) -> f64 {
        self.c * (t - self.k).powi(3) + w_max
    }

    fn in_slow_start(&self) -> bool {
        (self.cwnd as u64) < self.ssthresh
    }

    fn slow_start(&mut self, ev: &AckEvent) {
        let mut divisor = 1;
        let mut limit = if self.after_rto {
            self.abc_limit_after_rto
        } else {
            self.abc_limit
        };
        if let Some(h) = self.hystart.as_mut() {
            if !self.after_rto {
                match h.on_ack(ev) {
                    Step::Grow { divisor: d } => {
                        divisor = d;
                        limit = h.l_limit(self.mss as u64);
                    }
                    Step::EnterCa => {
                        self.ssthresh = self.cwnd as u64;
                        return;
                    }
                }
            }
        }
        let inc = ev.acked_bytes.min(limit) as f64 / divisor as f64;
        self.cwnd = (self.cwnd + inc).min(self.ssthresh as f64);
        if !self.in_slow_start() {
            self.after_rto = false;
        }
    }

    /// Linux's `cubictcp_acked`: the delay minimum, and HyStart while in slow start.
    fn on_rtt_sample(&mut self, ev: &AckEvent) {
        let Some(delay) = ev.rtt_last else {
            return;
        };
        if !sample_counts(self.epoch_start, ev.now) {
            return;
        }
        if self.delay_min == 0 || delay < self.delay_min {
            self.delay_min = delay;
        }
        let in_slow_start = self.in_slow_start();
        if let (true, Some(h)) = (in_slow_start, self.linux_hystart.as_mut()) {
            if h.on_ack(ev, delay, self.delay_min, self.cwnd as u64, self.mss as u64) {
                self.ssthresh = self.cwnd as u64;
            }
        }
    }

    fn congestion_avoidance(&mut self, ev: &AckEvent) {
        let cw = self.cwnd / self.mss;
        let now = ev.now;
        let start = match self.epoch_start {
            Some(s) => s,
            None => {
                self.epoch_start = Some(now);
                let w_max = *self.w_max.get_or_insert(cw);
                self.k = ((w_max - cw) / self.c).cbrt();
                self.w_est = cw;
                now
            }
        };
        let w_max = self.w_max.unwrap_or(cw);
        let t = to_secs(now.saturating_sub(start));
        let rtt = to_secs(match self.target_rtt {
            TargetRtt::Min if self.delay_min > 0 => self.delay_min,
            TargetRtt::Min if ev.min_rtt > 0 => ev.min_rtt,
            _ if ev.srtt > 0 => ev.srtt,
            _ => ev.rtt.unwrap_or(0),
        });
        let segs = ev.acked_bytes as f64 / self.mss;
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            self.alpha_cubic
        };
        self.w_est += alpha * segs / cw;
        let mut new = if self.w_cubic(t, w_max) < self.w_est {
            self.w_est.max(cw)
        } else {
            let target = self.w_cubic(t + rtt, w_max).clamp(cw, 1.5 * cw);
            cw + (target - cw) / cw * segs
        };
        if let (false, Some(n)) = (self.w_max_known, self.cnt_clamp) {
            new = new.max(cw + segs / n);
        }
        self.cwnd = new * self.mss;
    }

    /// Multiplicative decrease for a loss (`floor_segments` 2) or an ECN-Echo (1).
    fn reduce(&mut self, bytes_in_flight: u64, floor_segments: f64) {
        let cw = self.cwnd / self.mss;
        self.w_max = Some(match self.w_max {
            Some(prev) if self.fast_convergence && cw < prev => cw * (1.0 + self.beta) / 2.0,
            _ => cw,
        });
        self.cwnd_prior = cw;
        self.w_max_known = true;
        let base = reduction_base(self.reduce_from, bytes_in_flight, self.cwnd as u64) as f64;
        let s = base * self.beta;
        self.cwnd = s.max(floor_segments * self.mss);
        self.ssthresh = s.max(2.0 * self.mss) as u64;
        self.start_new_epoch();
        if let Some(h) = self.hystart.as_mut() {
            h.stop();
        }
    }

    fn start_new_epoch(&mut self) {
        self.epoch_start = None;
        self.w_est = 0.0;
    }
}

impl Controller for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.cwnd = bytes.max(self.mss as u64) as f64;
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if ev.acked_bytes > 0 {
            self.rto_without_progress = false;
        }
        self.on_rtt_sample(ev);
        if self.in_fast_recovery || ev.in_cwnd_reduction || ev.acked_bytes == 0 || ev.cwnd_unused {
            return;
        }
        if self.in_slow_start() {
            self.slow_start(ev);
        } else {
            self.congestion_avoidance(ev);
        }
    }

    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        if signal != Signal::Ecn || self.in_fast_recovery || ev.in_cwnd_reduction {
            return;
        }
        self.reduce(ev.bytes_in_flight, 1.0);
    }

    fn on_loss(&mut self, _now: Time, bytes_in_flight: u64) {
        if self.in_fast_recovery {
            return;
        }
        self.in_fast_recovery = true;
        self.reduce(bytes_in_flight, 2.0);
    }

    fn on_recovery_end(&mut self, _now: Time) {
        if self.in_fast_recovery {
            self.in_fast_recovery = false;
            self.cwnd = self.ssthresh as f64;
            self.start_new_epoch();
        }
    }

    fn on_rto(&mut self, _now: Time, bytes_in_flight: u64) {
        self.in_fast_recovery = false;
        if !self.rto_without_progress {
            self.before_timeout = Some((self.cwnd, self.ssthresh));
            let base = reduction_base(self.reduce_from, bytes_in_flight, self.cwnd as u64);
            self.ssthresh = (base as f64 * self.beta).max(2.0 * self.mss) as u64;
            self.cwnd_prior = self.cwnd / self.mss;
        }
        self.rto_without_progress = true;
        self.cwnd = self.mss;
        self.w_max = None;
        self.w_max_known = false;
        self.after_rto = true;
        self.start_new_epoch();
        if let Some(h) = self.hystart.as_mut() {
            h.stop();
        }
        if let Some(h) = self.linux_hystart.as_mut() {
            h.reset();
        }
        self.delay_min = 0;
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// Linux's undo: cwnd and ssthresh back; W_max and the epoch stay reset by the timeout
    /// (`bictcp_state` reset them on entering Loss, the undo does not restore them).
    fn on_spurious_timeout(&mut self, _now: Time) {
        if let Some((cwnd, ssthresh)) = self.before_timeout.take() {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = self.ssthresh.max(ssthresh);
            self.after_rto = false;
            self.rto_without_progress = false;
        }
    }

    fn cwr_state(&self) -> bool {
        true
    }

    fn sample(&self, out: &mut crate::net::Samples) {
        out.push(("cubic_w_max_bytes", self.w_max.unwrap_or(0.0) * self.mss));
        out.push(("cubic_k_s", self.k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::AckClock;
    use crate::time::{MS, SEC};

    const MSS: u64 = 1000;

    /// A CUBIC flow in congestion avoidance at `segs` segments.
    fn cubic_at(segs: u64, cfg: CubicConfig) -> Cubic {
        Cubic::new(
            MSS as u32,
            CubicConfig {
                initial_window: Some(segs as u32),
                initial_ssthresh: Some(segs * MSS),
                ..cfg
            },
        )
        .unwrap()
    }

    fn segs(cc: &Cubic) -> f64 {
        cc.cwnd / MSS as f64
    }

    #[test]
    fn window_after_loss_follows_w_cubic() {
        let mut cc = cubic_at(1000, CubicConfig::default());
        cc.on_loss(0, 1000 * MSS);
        cc.on_recovery_end(0);
        assert_eq!(cc.window(), 700 * MSS);
        // RFC 9438 eq. 2 right after a reduction: K = ∛(W_max·(1 − β)/C).
        let k = (1000.0f64 * 0.3 / 0.4).cbrt();
        let w = |t: f64| 0.4 * (t - k).powi(3) + 1000.0;
        // A long RTT keeps the Reno-friendly estimate (5.3 segments/s) below W_cubic.
        let rtt = 100 * MS;
        let mut clock = AckClock::new(SEC, rtt, MSS);
        let epoch = SEC + rtt / 700; // the first ACK's time, when the epoch starts
        let mut checked = 0;
        for t in [0.5, 1.0, 3.0, 6.0, k, 11.0, 13.0] {
            clock.run(&mut cc, epoch + crate::time::from_secs(t), |_, _| {});
            let elapsed = to_secs(clock.now - epoch);
            let expect = w(elapsed);
            let got = segs(&cc);
            assert!(
                (got - expect).abs() <= 0.005 * expect + 1.0,
                "t = {elapsed:.3}: cwnd {got:.1} vs W_cubic {expect:.1}"
            );
            checked += 1;
        }
        assert!((cc.k() - k).abs() < 1e-9);
        assert_eq!(checked, 7);
    }

    #[test]
    fn reno_friendly_region_dominates_at_small_bdp() {
        let mut cc = cubic_at(20, CubicConfig::default());
        cc.on_loss(0, 20 * MSS);
        cc.on_recovery_end(0);
        let k = (20.0f64 * 0.3 / 0.4).cbrt();
        let w_cubic = |t: f64| 0.4 * (t - k).powi(3) + 20.0;
        let alpha = 3.0 * 0.3 / 1.7;
        let rtt = 10 * MS;
        let mut clock = AckClock::new(0, rtt, MSS);
        // RFC 9438 §4.3: W_est gains α_cubic per RTT until it reaches cwnd_prior (20), then 1.
        let w_est = |rtts: f64| {
            let to_prior = 6.0 / alpha;
            if rtts <= to_prior {
                14.0 + alpha * rtts
            } else {
                20.0 + (rtts - to_prior)
            }
        };
        for rounds in [5u64, 10, 30, 60] {
            clock.run(&mut cc, rounds * rtt, |_, _| {});
            // The epoch began with the first ACK, a fraction of an RTT into round 1.
            let t = to_secs(clock.now) - to_secs(rtt) / 14.0;
            let got = segs(&cc);
            assert!(got > w_cubic(t) + 1.0, "round {rounds}: not Reno-friendly");
            let expect = w_est(rounds as f64);
            // The closed form counts α per RTT; per-ACK updates against a window that grows
            // within the round give a little less (O(α/W)).
            assert!(
                (got - expect).abs() < 0.02 * expect,
                "round {rounds}: cwnd {got:.2} vs W_est {expect:.2}"
            );
        }
    }

    #[test]
    fn beta_reduction_and_fast_convergence() {
        let mut cc = cubic_at(100, CubicConfig::default());
        cc.on_loss(0, 100 * MSS);
        assert_eq!(cc.window(), 70 * MSS);
        assert_eq!(cc.ssthresh(), 70 * MSS);
        assert_eq!(cc.w_max(), Some(100.0));
        cc.on_recovery_end(0);
        // Grow to 90 segments (below W_max), then lose again.
        let mut clock = AckClock::new(0, 50 * MS, MSS);
        while cc.window() < 90 * MSS {
            clock.round(&mut cc, &mut |_, _| {});
        }
        let cw = segs(&cc);
        assert!(cw < 100.0);
        cc.on_loss(clock.now, cc.window());
        let w_max = cw * 1.7 / 2.0;
        assert!((cc.w_max().unwrap() - w_max).abs() < 1e-9);
        assert!((segs(&cc) - 0.7 * cw).abs() < 1e-3);
        cc.on_recovery_end(clock.now);
        clock.round(&mut cc, &mut |_, _| {});
        let k = ((w_max - 0.7 * cw) / 0.4).cbrt();
        assert!((cc.k() - k).abs() < 1e-3, "K {} vs {k}", cc.k());

        // Without fast convergence W_max is the window at the loss.
        let mut cc = cubic_at(
            100,
            CubicConfig {
                fast_convergence: false,
                ..Default::default()
            },
        );
        cc.on_loss(0, 100 * MSS);
        cc.on_recovery_end(0);
        cc.on_loss(0, 80 * MSS);
        assert_eq!(cc.w_max(), Some(70.0));
    }

    #[test]
    fn ecn_reduces_like_loss_with_one_segment_floor() {
        let mut cc = cubic_at(100, CubicConfig::default());
        let ev = AckEvent {
            acked_bytes: MSS,
            bytes_in_flight: 100 * MSS,
            ..Default::default()
        };
        cc.on_signal(&ev, Signal::Ecn);
        // The connection starts its CWR round with this ACK: no growth on it.
        cc.on_ack(&AckEvent {
            in_cwnd_reduction: true,
            ..ev
        });
        assert_eq!(cc.window(), 70 * MSS);
        assert_eq!(cc.ssthresh(), 70 * MSS);
        let mut cc = cubic_at(2, CubicConfig::default());
        cc.on_signal(
            &AckEvent {
                bytes_in_flight: MSS,
                ..ev
            },
            Signal::Ecn,
        );
        assert_eq!(cc.window(), MSS);
        assert_eq!(cc.ssthresh(), 2 * MSS);
    }

    #[test]
    fn rto_restarts_with_loss_window_and_k_zero() {
        let mut cc = cubic_at(100, CubicConfig::default());
        cc.on_rto(0, 100 * MSS);
        assert_eq!(cc.window(), MSS);
        assert_eq!(cc.ssthresh(), 70 * MSS);
        assert_eq!(cc.w_max(), None);
        let mut clock = AckClock::new(0, 50 * MS, MSS);
        while cc.window() < cc.ssthresh() {
            clock.round(&mut cc, &mut |_, _| {});
        }
        clock.round(&mut cc, &mut |_, _| {});
        // First CA stage after a timeout: W_max = cwnd at its start, K = 0 (§4.8).
        assert_eq!(cc.w_max(), Some(70.0));
        assert_eq!(cc.k(), 0.0);
    }

    #[test]
    fn grows_five_percent_per_rtt_while_w_max_is_unknown() {
        // Congestion avoidance at 100 segments before any congestion event: W_cubic from
        // K = 0 adds C·t³ (0.4 segments after a second), Linux's cnt clamp cwnd/20 per RTT.
        let mut cc = cubic_at(100, CubicConfig::default());
        let mut clock = AckClock::new(0, 100 * MS, MSS);
        clock.round(&mut cc, &mut |_, _| {});
        assert!((segs(&cc) - 105.0).abs() < 1e-6, "{}", segs(&cc));
        let mut rfc = cubic_at(
            100,
            CubicConfig {
                cnt_clamp: None,
                ..Default::default()
            },
        );
        let mut clock = AckClock::new(0, 100 * MS, MSS);
        clock.round(&mut rfc, &mut |_, _| {});
        assert!(segs(&rfc) < 101.0, "{}", segs(&rfc));
        // After a congestion event W_max is known and the curve alone decides.
        cc.on_loss(SEC, 105 * MSS);
        cc.on_recovery_end(SEC);
        let w0 = segs(&cc);
        let mut clock = AckClock::new(SEC, 100 * MS, MSS);
        clock.round(&mut cc, &mut |_, _| {});
        assert!(segs(&cc) - w0 < w0 / 20.0, "{w0} → {}", segs(&cc));
    }

    #[test]
    fn hystart_leaves_slow_start_on_rtt_rise() {
        let mut cc = Cubic::new(
            MSS as u32,
            CubicConfig {
                initial_window: Some(10),
                hystart: HystartMode::Rfc9406,
                ..Default::default()
            },
        )
        .unwrap();
        let mut clock = AckClock::new(0, 40 * MS, MSS);
        clock.round(&mut cc, &mut |_, _| {});
        clock.round(&mut cc, &mut |_, _| {});
        assert_eq!(cc.window(), 40 * MSS);
        // The queue builds: +10 ms of RTT (threshold max(4, 40/8) = 5 ms).
        clock.rtt = 50 * MS;
        clock.round(&mut cc, &mut |_, _| {});
        // 8 samples at full rate, then 32 at a quarter: 40 + 8 + 32/4.
        assert_eq!(cc.window(), 56 * MSS);
        // The round CSS began in counts as its first; four more at ×1.25 per round, and the
        // fifth round start moves to congestion avoidance with ssthresh = cwnd.
        for _ in 0..5 {
            clock.round(&mut cc, &mut |_, _| {});
        }
        assert_eq!(cc.ssthresh(), (56_000.0 * 1.25f64.powi(4)) as u64);
        let without = {
            let mut cc = Cubic::new(
                MSS as u32,
                CubicConfig {
                    initial_window: Some(10),
                    hystart: HystartMode::Off,
                    ..Default::default()
                },
            )
            .unwrap();
            let mut clock = AckClock::new(0, 40 * MS, MSS);
            for _ in 0..8 {
                clock.round(&mut cc, &mut |_, _| {});
            }
            cc.ssthresh()
        };
        assert_eq!(without, u64::MAX);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = Cubic::new(
            1000,
            CubicConfig {
                beta: 1.0,
                ..Default::default()
            },
        )
        .err()
        .unwrap();
        assert!(e.starts_with("beta"), "{e}");
        let e = toml::from_str::<CubicConfig>("hystart_params = { css_rounds = 0 }")
            .map_err(|e| e.to_string())
            .and_then(|c| c.validate())
            .unwrap_err();
        assert!(e.contains("css_rounds"), "{e}");
    }
}
