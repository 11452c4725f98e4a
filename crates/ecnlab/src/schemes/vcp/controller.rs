//! VCP's sender: the load code of each ACK selects multiplicative increase (low),
//! additive increase (high) or multiplicative decrease (overload), with the increments
//! scaled by the flow's RTT; after an MD the window ignores overload for one `t_ρ` and then
//! grows additively on overload for one RTT (`vcp-src.cc`). Losses are handled as TCP.
//! The window is kept in segments.

use super::LoadCode;
use crate::cc::loss::RenoLoss;
use crate::cc::{check_max_segments_per_ack, AckEvent, Controller, Signal, MAX_SEGMENTS_PER_ACK};
use crate::net::Samples;
use crate::time::{from_secs, to_secs, Time};
use serde::{Deserialize, Serialize};

/// How the AI increment scales with the RTT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AiScaling {
    /// `α·(rtt/t_ρ)²` (the paper).
    #[default]
    Paper,
    /// `α·s(rtt/t_d)` with `t_d` = 100 ms, `s(x) = x²` for 0.2 ≤ x ≤ 5, `0.2·x` below,
    /// `x − 5 + 25` above (the ns-2 code).
    Ns2,
    /// `α·(rtt/t_ρ)` (UNO's UCP controllers, §III-A).
    Linear,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VcpConfig {
    /// MI factor ξ per `t_ρ`.
    pub xi: f64,
    /// AI step α (segments per `t_ρ`-scaled RTT).
    pub alpha: f64,
    /// MD multiplier β.
    pub beta: f64,
    /// The routers' load interval `t_ρ` in seconds (scaling and the MD freeze).
    pub t_rho_s: f64,
    /// Cap on `rtt/t_ρ` in the MI exponent.
    pub max_rtt_ratio: f64,
    pub ai_scaling: AiScaling,
    /// RTT assumed before the first sample, in seconds.
    pub initial_rtt_s: f64,
    /// Segments an ACK counts for, at most, in the per-segment window laws (`cc::MAX_SEGMENTS_PER_ACK`
    /// = 2 by default, RFC 3465's L; 1 is ns-2's senders, one step per new ACK).
    pub max_segments_per_ack: f64,
    /// Cap on the window in segments; `None` for none.
    pub max_window: Option<u32>,
}

impl Default for VcpConfig {
    fn default() -> Self {
        VcpConfig {
            xi: 0.0625,
            alpha: 1.0,
            beta: 0.875,
            t_rho_s: 0.2,
            max_rtt_ratio: 2.5,
            ai_scaling: AiScaling::Paper,
            initial_rtt_s: 0.1,
            max_segments_per_ack: MAX_SEGMENTS_PER_ACK,
            max_window: None,
        }
    }
}

impl VcpConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.xi.is_finite() && self.xi > 0.0) {
            return Err(format!("xi: {} must be positive", self.xi));
        }
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(format!("alpha: {} must be positive", self.alpha));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("beta: {} is outside (0, 1)", self.beta));
        }
        if !(self.t_rho_s.is_finite() && self.t_rho_s > 0.0) {
            return Err(format!("t_rho_s: {} must be positive", self.t_rho_s));
        }
        if !(self.max_rtt_ratio.is_finite() && self.max_rtt_ratio > 0.0) {
            return Err(format!(
                "max_rtt_ratio: {} must be positive",
                self.max_rtt_ratio
            ));
        }
        if !(self.initial_rtt_s.is_finite() && self.initial_rtt_s > 0.0) {
            return Err(format!(
                "initial_rtt_s: {} must be positive",
                self.initial_rtt_s
            ));
        }
        if self.max_window == Some(0) {
            return Err("max_window: must be at least 1 segment".into());
        }
        check_max_segments_per_ack(self.max_segments_per_ack)
    }
}

/// The [`Controller`] methods of a scheme whose window mechanics are a `vcp: Vcp` field's
/// (MI/AI/MD with the RTT scaling and the freeze, loss as NewReno): everything but `name`,
/// `on_signal` and `sample`.
macro_rules! delegate_window_to_vcp {
    () => {
        fn set_initial_window(&mut self, bytes: u64) {
            self.vcp.set_initial_window(bytes);
        }

        fn on_ack(&mut self, ev: &$crate::cc::AckEvent) {
            self.vcp.on_ack(ev);
        }

        fn on_loss(&mut self, now: $crate::time::Time, bytes_in_flight: u64) {
            self.vcp.on_loss(now, bytes_in_flight);
        }

        fn on_recovery_end(&mut self, now: $crate::time::Time) {
            self.vcp.on_recovery_end(now);
        }

        fn on_rto(&mut self, now: $crate::time::Time, bytes_in_flight: u64) {
            self.vcp.on_rto(now, bytes_in_flight);
        }

        fn window(&self) -> u64 {
            self.vcp.window()
        }

        fn ssthresh(&self) -> u64 {
            self.vcp.ssthresh()
        }
    };
}
pub(crate) use delegate_window_to_vcp;

/// Window in segments until the connection sets the initial window at the end of the
/// handshake (`TcpConfig::initial_window`).
const WINDOW_BEFORE_SETUP: f64 = 2.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Mi,
    Ai,
    /// No change (the ACK that caused an MD, or overload during the freeze).
    Hold,
}

/// Where the sender is after its last multiplicative decrease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    /// Overload is ignored until `until` (one `t_ρ` after the MD).
    Freeze {
        until: Time,
    },
    /// Overload means AI until `until` (one RTT after the freeze).
    AiAfterMd {
        until: Time,
    },
}

pub struct Vcp {
    cfg: VcpConfig,
    mss: f64,
    /// Window in segments.
    cwnd: f64,
    cap: f64,
    t_rho: Time,
    initial_rtt: Time,
    srtt: Time,
    /// Code of the latest ACK that carried one.
    code: LoadCode,
    /// What the ACK being processed does (set by its signal).
    action: Option<Action>,
    phase: Phase,
    /// Losses as NewReno.
    pub loss: RenoLoss,
    pub mds: u64,
}

impl Vcp {
    pub fn new(cfg: VcpConfig, mss: u32) -> Result<Self, String> {
        cfg.validate()?;
        if mss == 0 {
            return Err("mss: must be positive".into());
        }
        let cap = cfg.max_window.map_or(f64::INFINITY, |w| w as f64);
        Ok(Vcp {
            mss: mss as f64,
            cwnd: WINDOW_BEFORE_SETUP.min(cap),
            cap,
            t_rho: from_secs(cfg.t_rho_s).max(1),
            initial_rtt: from_secs(cfg.initial_rtt_s).max(1),
            srtt: 0,
            code: LoadCode::Low,
            action: None,
            phase: Phase::Idle,
            loss: RenoLoss::default(),
            cfg,
            mds: 0,
        })
    }

    /// Window in segments (fractional).
    pub fn cwnd_segments(&self) -> f64 {
        self.cwnd
    }

    fn rtt(&self) -> Time {
        if self.srtt > 0 {
            self.srtt
        } else {
            self.initial_rtt
        }
    }

    /// Sets ξ for the MI steps that follow (UNO's controllers take it from the load level).
    pub fn set_mi_factor(&mut self, xi: f64) {
        self.cfg.xi = xi;
    }

    /// Sets the AI step α for the AI steps that follow (MLCP's inversely-proportional
    /// increase is an AI step that shrinks with the window).
    pub fn set_ai_step(&mut self, alpha: f64) {
        self.cfg.alpha = alpha;
    }

    /// Sets the MD multiplier β for the next decrease (MLCP's and BMCC's β depend on how far
    /// the load is above capacity).
    pub fn set_md_factor(&mut self, beta: f64) {
        self.cfg.beta = beta;
    }

    /// Sets `t_ρ`, the RTT scaling and the MD freeze (UCP2 learns it from the routers).
    pub fn set_t_rho(&mut self, t_rho: Time) {
        self.t_rho = t_rho.max(1);
        self.cfg.t_rho_s = to_secs(self.t_rho);
    }

    /// The `t_ρ` in force, in seconds.
    pub fn t_rho_s(&self) -> f64 {
        self.cfg.t_rho_s
    }

    /// MI increment per acknowledged segment: `(1+ξ)^min(rtt/t_ρ, cap) − 1`.
    pub fn mi_increment(&self) -> f64 {
        let ratio = (to_secs(self.rtt()) / self.cfg.t_rho_s).min(self.cfg.max_rtt_ratio);
        (1.0 + self.cfg.xi).powf(ratio) - 1.0
    }

    /// AI increment per acknowledged segment at the current window.
    pub fn ai_increment(&self) -> f64 {
        let rtt = to_secs(self.rtt());
        let scale = match self.cfg.ai_scaling {
            AiScaling::Paper => (rtt / self.cfg.t_rho_s).powi(2),
            AiScaling::Linear => rtt / self.cfg.t_rho_s,
            AiScaling::Ns2 => {
                const T_D: f64 = 0.1;
                const LEFT: f64 = 0.02 / T_D;
                const RIGHT: f64 = 0.5 / T_D;
                let x = rtt / T_D;
                if x <= LEFT {
                    x * LEFT
                } else if x <= RIGHT {
                    x * x
                } else {
                    x - RIGHT + RIGHT * RIGHT
                }
            }
        };
        self.cfg.alpha * scale / self.cwnd
    }

    /// Moves through the post-MD phases as time passes.
    fn advance(&mut self, now: Time) {
        loop {
            self.phase = match self.phase {
                Phase::Freeze { until } if now >= until => Phase::AiAfterMd {
                    until: until + self.rtt(),
                },
                Phase::AiAfterMd { until } if now >= until => Phase::Idle,
                _ => return,
            };
        }
    }

    fn note_rtt(&mut self, ev: &AckEvent) {
        if ev.srtt > 0 {
            self.srtt = ev.srtt;
        }
    }
}

impl Controller for Vcp {
    fn name(&self) -> &'static str {
        "vcp"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.cwnd = (bytes as f64 / self.mss).max(1.0).min(self.cap);
    }

    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        let Signal::Load(bits) = signal else { return };
        let Some(code) = LoadCode::from_bits(bits) else {
            return;
        };
        self.note_rtt(ev);
        self.code = code;
        if self.loss.in_fast_recovery {
            return;
        }
        self.advance(ev.now);
        self.action = Some(match code {
            LoadCode::Low => Action::Mi,
            LoadCode::High => Action::Ai,
            LoadCode::Overload => match self.phase {
                Phase::Idle => {
                    self.cwnd = (self.cwnd * self.cfg.beta).max(1.0);
                    self.phase = Phase::Freeze {
                        until: ev.now + self.t_rho,
                    };
                    self.mds += 1;
                    Action::Hold
                }
                Phase::Freeze { .. } => Action::Hold,
                Phase::AiAfterMd { .. } => Action::Ai,
            },
        });
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.note_rtt(ev);
        let action = self.action.take();
        self.loss.on_ack(ev.acked_bytes);
        if self.loss.in_fast_recovery || ev.acked_bytes == 0 {
            return;
        }
        self.advance(ev.now);
        // Without a code on this ACK, keep increasing as the last code said (never an MD).
        let action = action.unwrap_or(match (self.code, self.phase) {
            (LoadCode::Low, _) => Action::Mi,
            (LoadCode::High, _) | (LoadCode::Overload, Phase::AiAfterMd { .. }) => Action::Ai,
            (LoadCode::Overload, _) => Action::Hold,
        });
        let segments = ev.law_segments(self.mss, self.cfg.max_segments_per_ack);
        match action {
            Action::Mi => self.cwnd += self.mi_increment() * segments,
            Action::Ai => self.cwnd += self.ai_increment() * segments,
            Action::Hold => {}
        }
        self.cwnd = self.cwnd.min(self.cap);
    }

    crate::cc::loss::reno_loss_methods!();

    fn sample(&self, out: &mut Samples) {
        out.push(("vcp_load_code", self.code.bits() as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC};

    const MSS: u64 = 1000;

    fn vcp(cfg: VcpConfig, segments: f64) -> Vcp {
        let mut v = Vcp::new(cfg, MSS as u32).unwrap();
        v.cwnd = segments;
        v
    }

    fn ev(now: Time, srtt: Time, segs: u64) -> AckEvent {
        AckEvent {
            now,
            srtt,
            acked_bytes: segs * MSS,
            ..Default::default()
        }
    }

    /// One ACK carrying `code`: signal, then the ACK itself. Returns the window change.
    fn ack(v: &mut Vcp, e: &AckEvent, code: LoadCode) -> f64 {
        let before = v.cwnd;
        v.on_signal(e, Signal::Load(code.bits()));
        v.on_ack(e);
        v.cwnd - before
    }

    #[test]
    fn mi_increment_is_the_scaled_xi() {
        let mut v = vcp(VcpConfig::default(), 10.0);
        // rtt 100 ms: (1.0625)^0.5 − 1.
        let d = ack(&mut v, &ev(SEC, 100 * MS, 1), LoadCode::Low);
        assert!((d - 0.030_776_406_404_415_1).abs() < 1e-12, "{d}");
        // rtt 200 ms = t_ρ: exactly ξ per segment; two segments acknowledged: twice.
        let d = ack(&mut v, &ev(SEC, 200 * MS, 2), LoadCode::Low);
        assert!((d - 2.0 * 0.0625).abs() < 1e-12);
        // rtt 1 s: the exponent is capped at 2.5.
        let d = ack(&mut v, &ev(SEC, SEC, 1), LoadCode::Low);
        assert!((d - (1.0625f64.powf(2.5) - 1.0)).abs() < 1e-12);
        assert!((d - 0.163_650).abs() < 1e-6);
        // One RTT of MI at rtt = t_ρ, one ACK per segment: the window grows by (1 + ξ).
        let mut v = vcp(VcpConfig::default(), 16.0);
        for _ in 0..16 {
            ack(&mut v, &ev(SEC, 200 * MS, 1), LoadCode::Low);
        }
        assert!((v.cwnd - 17.0).abs() < 1e-12);
    }

    #[test]
    fn a_cumulative_ack_counts_two_segments_at_most() {
        // An ACK that covers 500 segments (the repair after a timeout): two MI steps, not
        // 500 (RFC 3465's L = 2, the default).
        let mut v = vcp(VcpConfig::default(), 10.0);
        let d = ack(&mut v, &ev(SEC, 200 * MS, 500), LoadCode::Low);
        assert!((d - 2.0 * 0.0625).abs() < 1e-12, "{d}");
        // A window of one segment, as after a timeout: AI does not jump by α·500 either.
        let mut v = vcp(VcpConfig::default(), 1.0);
        let d = ack(&mut v, &ev(SEC, 200 * MS, 500), LoadCode::High);
        assert!((d - 2.0).abs() < 1e-12, "{d}");
        // ns-2's VCP sender (one step per new ACK): max_segments_per_ack = 1.
        let ns2 = VcpConfig {
            max_segments_per_ack: 1.0,
            ..Default::default()
        };
        let mut v = vcp(ns2.clone(), 10.0);
        let d = ack(&mut v, &ev(SEC, 200 * MS, 500), LoadCode::Low);
        assert!((d - 0.0625).abs() < 1e-12, "{d}");
        // No limit (inf): every covered segment, as before the limit.
        let free = VcpConfig {
            max_segments_per_ack: f64::INFINITY,
            ..Default::default()
        };
        let mut v = vcp(free, 10.0);
        let d = ack(&mut v, &ev(SEC, 200 * MS, 500), LoadCode::Low);
        assert!((d - 500.0 * 0.0625).abs() < 1e-9, "{d}");
        let e = Vcp::new(
            VcpConfig {
                max_segments_per_ack: 0.0,
                ..Default::default()
            },
            MSS as u32,
        )
        .err()
        .unwrap();
        assert!(e.starts_with("max_segments_per_ack:"), "{e}");
    }

    #[test]
    fn ai_increment_scales_with_rtt_squared() {
        let mut v = vcp(VcpConfig::default(), 10.0);
        // α·(rtt/t_ρ)²/cwnd: 100 ms → 0.25/10.
        let d = ack(&mut v, &ev(SEC, 100 * MS, 1), LoadCode::High);
        assert!((d - 0.025).abs() < 1e-12);
        let mut v = vcp(VcpConfig::default(), 10.0);
        let d = ack(&mut v, &ev(SEC, 300 * MS, 1), LoadCode::High);
        assert!((d - 2.25 / 10.0).abs() < 1e-12);
        // ns-2's scaling: (rtt/100 ms)² between 20 and 500 ms, linear outside.
        let ns2 = VcpConfig {
            ai_scaling: AiScaling::Ns2,
            ..Default::default()
        };
        for (rtt, scale) in [
            (100 * MS, 1.0),
            (10 * MS, 0.1 * 0.2),
            (SEC, 10.0 - 5.0 + 25.0),
        ] {
            let mut v = vcp(ns2.clone(), 10.0);
            let d = ack(&mut v, &ev(SEC, rtt, 1), LoadCode::High);
            assert!((d - scale / 10.0).abs() < 1e-12, "rtt {rtt}: {d}");
        }
        // Over one RTT of AI (one ACK per segment) the window grows by about α·(rtt/t_ρ)².
        let mut v = vcp(VcpConfig::default(), 50.0);
        for _ in 0..50 {
            ack(&mut v, &ev(SEC, 200 * MS, 1), LoadCode::High);
        }
        assert!((v.cwnd - 51.0).abs() < 0.01);
    }

    #[test]
    fn md_then_freeze_for_t_rho_then_ai_for_one_rtt() {
        let rtt = 100 * MS;
        let mut v = vcp(VcpConfig::default(), 16.0);
        let t0 = 10 * SEC;
        // First overload: ×0.875, no increase on that ACK.
        let d = ack(&mut v, &ev(t0, rtt, 1), LoadCode::Overload);
        assert!((v.cwnd - 14.0).abs() < 1e-12, "{d}");
        assert_eq!(v.mds, 1);
        // Within t_ρ (200 ms): overload changes nothing ...
        for t in [t0 + MS, t0 + 100 * MS, t0 + 199 * MS] {
            assert_eq!(ack(&mut v, &ev(t, rtt, 1), LoadCode::Overload), 0.0);
        }
        // ... while low and high ACKs still increase (vcp-src.cc freezes only overload).
        let d = ack(&mut v, &ev(t0 + 150 * MS, rtt, 1), LoadCode::Low);
        assert!((d - (1.0625f64.sqrt() - 1.0)).abs() < 1e-12);
        let w = v.cwnd;
        // From t_ρ to t_ρ + rtt: overload means AI.
        let d = ack(&mut v, &ev(t0 + 200 * MS, rtt, 1), LoadCode::Overload);
        assert!((d - 0.25 / w).abs() < 1e-12);
        let d = ack(&mut v, &ev(t0 + 299 * MS, rtt, 1), LoadCode::Overload);
        assert!(d > 0.0);
        assert_eq!(v.mds, 1);
        // After that, overload decreases again.
        let w = v.cwnd;
        ack(&mut v, &ev(t0 + 300 * MS, rtt, 1), LoadCode::Overload);
        assert!((v.cwnd - 0.875 * w).abs() < 1e-12);
        assert_eq!(v.mds, 2);
        // Overload ACKs long after a freeze each start a new MD cycle.
        ack(&mut v, &ev(t0 + 2 * SEC, rtt, 1), LoadCode::Overload);
        assert_eq!(v.mds, 3);
        // The window never goes below one segment.
        let mut v = vcp(VcpConfig::default(), 1.0);
        ack(&mut v, &ev(t0, rtt, 1), LoadCode::Overload);
        assert_eq!(v.window(), MSS);
    }

    #[test]
    fn loss_halves_like_tcp_and_recovery_freezes_growth() {
        let mut v = vcp(VcpConfig::default(), 20.0);
        v.on_loss(0, 20 * MSS);
        assert_eq!(v.window(), 10 * MSS);
        assert_eq!(v.ssthresh(), 10 * MSS);
        // During fast recovery neither load codes nor ACKs change the window, and a second
        // loss indication does not halve again.
        let e = ev(SEC, 100 * MS, 1);
        assert_eq!(ack(&mut v, &e, LoadCode::Overload), 0.0);
        assert_eq!(ack(&mut v, &e, LoadCode::Low), 0.0);
        v.on_loss(0, 10 * MSS);
        assert_eq!(v.window(), 10 * MSS);
        assert_eq!((v.mds, v.loss.losses), (0, 1));
        v.on_recovery_end(SEC);
        assert_eq!(v.window(), 10 * MSS);
        v.on_rto(SEC, 6 * MSS);
        assert_eq!((v.window(), v.ssthresh()), (MSS, 3 * MSS));
        // A second timeout without progress keeps ssthresh (RFC 5681 §3.1).
        v.on_rto(2 * SEC, MSS);
        assert_eq!(v.ssthresh(), 3 * MSS);
        // No slow start: the next low-load ACK is an MI step.
        let d = ack(&mut v, &ev(2 * SEC, 200 * MS, 1), LoadCode::Low);
        assert!((d - 0.0625).abs() < 1e-12);
    }

    #[test]
    fn ack_without_code_keeps_the_last_increase_and_cap_holds() {
        let mut v = vcp(
            VcpConfig {
                max_window: Some(12),
                ..Default::default()
            },
            10.0,
        );
        ack(&mut v, &ev(SEC, 200 * MS, 1), LoadCode::High);
        let w = v.cwnd;
        v.on_ack(&ev(SEC, 200 * MS, 1));
        assert!((v.cwnd - (w + 1.0 / w)).abs() < 1e-12);
        for _ in 0..200 {
            ack(&mut v, &ev(SEC, 200 * MS, 1), LoadCode::Low);
        }
        assert_eq!(v.window(), 12 * MSS);
        assert!(Vcp::new(
            VcpConfig {
                beta: 1.5,
                ..Default::default()
            },
            1000
        )
        .err()
        .unwrap()
        .starts_with("beta"));
    }
}
