//! UNO's senders (§III-A): VCP's controller over 8 levels. Levels 0–5 select MI with
//! `ξ(σ) = k·(1 − σ)/σ` at the level's midpoint σ, scaled `(1 + ξ)^(rtt/t_ρ) − 1` per
//! acknowledged segment, at most `max_segments_per_ack` per ACK (2 by default; 1 in the UNO
//! experiments, ns-2's); level 6 AI with `α·rtt/t_ρ` segments per RTT (linear, not VCP's
//! square, and not limited), applied per acknowledged segment under the same limit; level 7
//! MD by β, then VCP's freeze of one `t_ρ` and AI for one RTT. UCP2 takes `t_ρ` from the
//! routers when the RTT channel delivers it. The window mechanics (scaling, the limit per ACK,
//! freeze, loss as NewReno) are [`Vcp`]'s.

use super::{level_midpoint, level_upper_edge, HIGH, LOW_LEVELS, NO_ROUTER, OVERLOAD};
use crate::cc::{AckEvent, Controller, Signal, MAX_SEGMENTS_PER_ACK};
use crate::net::Samples;
use crate::schemes::vcp::{AiScaling, LoadCode, Vcp, VcpConfig};
use serde::{Deserialize, Serialize};

/// Which load factor σ a low level stands for in ξ(σ) = k·(1 − σ)/σ: the sender knows only
/// the level's band.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XiSigma {
    /// The band's midpoint (level 0: σ = 1/15, ξ = 2.1).
    #[default]
    Midpoint,
    /// The band's upper edge, as VCP's ns-2 sender computes its one MI factor from the low
    /// band's edge (`vcp-src.cc`: `xi_by_lf_ = k_·(100/g_lf[0] − 1)`, LF_0 = 80 %); level 0:
    /// σ = 2/15, ξ = 0.975.
    Upper,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UcpConfig {
    /// MI gain k in ξ(σ) = k·(1 − σ)/σ.
    pub k: f64,
    /// The σ of a low level in ξ(σ).
    pub xi_sigma: XiSigma,
    /// AI step α (segments per RTT at rtt = t_ρ).
    pub alpha: f64,
    /// MD multiplier β.
    pub beta: f64,
    /// `t_ρ` in seconds until (or unless) the routers tell another.
    pub t_rho_s: f64,
    /// Use the routers' `t_ρ` when the RTT channel delivers it (UCP2).
    pub learn_t_rho: bool,
    /// Cap on `rtt/t_ρ` in the MI exponent (VCP's).
    pub max_rtt_ratio: f64,
    /// How AI scales with rtt/t_ρ: linear as §III-A (`linear`), or VCP's square (`paper`).
    pub ai_scaling: AiScaling,
    /// The low-load boundary the levels split (for the midpoints).
    pub low_load: f64,
    /// The level assumed before the first decision (5: the gentlest MI, VCP's start).
    pub initial_level: u8,
    /// RTT assumed before the first sample, in seconds.
    pub initial_rtt_s: f64,
    /// Segments an ACK counts for, at most, in the per-segment window laws (`cc::MAX_SEGMENTS_PER_ACK`
    /// = 2 by default, RFC 3465's L; 1 is ns-2's senders, one step per new ACK).
    pub max_segments_per_ack: f64,
    /// Cap on the window in segments; `None` for none.
    pub max_window: Option<u32>,
}

impl Default for UcpConfig {
    fn default() -> Self {
        UcpConfig {
            k: 0.15,
            xi_sigma: XiSigma::Midpoint,
            alpha: 3.0,
            beta: 0.875,
            t_rho_s: 0.2,
            learn_t_rho: true,
            max_rtt_ratio: 2.5,
            ai_scaling: AiScaling::Linear,
            low_load: 0.8,
            initial_level: LOW_LEVELS - 1,
            initial_rtt_s: 0.1,
            max_segments_per_ack: MAX_SEGMENTS_PER_ACK,
            max_window: None,
        }
    }
}

impl UcpConfig {
    fn vcp(&self) -> VcpConfig {
        VcpConfig {
            xi: self.xi(self.initial_level.min(LOW_LEVELS - 1)),
            alpha: self.alpha,
            beta: self.beta,
            t_rho_s: self.t_rho_s,
            max_rtt_ratio: self.max_rtt_ratio,
            ai_scaling: self.ai_scaling,
            initial_rtt_s: self.initial_rtt_s,
            max_segments_per_ack: self.max_segments_per_ack,
            max_window: self.max_window,
        }
    }

    /// ξ of a low level.
    pub fn xi(&self, level: u8) -> f64 {
        let s = match self.xi_sigma {
            XiSigma::Midpoint => level_midpoint(level, self.low_load),
            XiSigma::Upper => level_upper_edge(level, self.low_load),
        };
        self.k * (1.0 - s) / s
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.k.is_finite() && self.k > 0.0) {
            return Err(format!("k: {} must be positive", self.k));
        }
        if !(self.low_load > 0.0 && self.low_load < 1.0) {
            return Err(format!("low_load: {} is outside (0, 1)", self.low_load));
        }
        if self.initial_level > OVERLOAD {
            return Err(format!(
                "initial_level: {} is not a level (0 to 7)",
                self.initial_level
            ));
        }
        self.vcp().validate()
    }
}

pub struct Ucp {
    name: &'static str,
    cfg: UcpConfig,
    vcp: Vcp,
    level: u8,
}

impl Ucp {
    /// `name`: "ucp1", "ucp2" or "vcp3" (the same controller; the codec differs).
    pub fn new(name: &'static str, cfg: UcpConfig, mss: u32) -> Result<Self, String> {
        cfg.validate()?;
        let vcp = Vcp::new(cfg.vcp(), mss)?;
        let level = cfg.initial_level;
        let mut u = Ucp {
            name,
            cfg,
            vcp,
            level,
        };
        u.select(level);
        Ok(u)
    }

    /// Window in segments.
    pub fn cwnd_segments(&self) -> f64 {
        self.vcp.cwnd_segments()
    }

    /// The `t_ρ` in force, in seconds.
    pub fn t_rho_s(&self) -> f64 {
        self.vcp.t_rho_s()
    }

    /// Multiplicative decreases so far.
    pub fn mds(&self) -> u64 {
        self.vcp.mds
    }

    /// The VCP region a level acts as, with ξ set for MI levels.
    fn select(&mut self, level: u8) -> LoadCode {
        match level {
            l if l < LOW_LEVELS => {
                self.vcp.set_mi_factor(self.cfg.xi(l));
                LoadCode::Low
            }
            HIGH | NO_ROUTER => LoadCode::High,
            _ => LoadCode::Overload,
        }
    }
}

impl Controller for Ucp {
    fn name(&self) -> &'static str {
        self.name
    }

    crate::schemes::vcp::delegate_window_to_vcp!();

    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        let Some((level, t_rho)) = signal.load_code() else {
            return;
        };
        if level > NO_ROUTER {
            return;
        }
        if let (true, Some(t)) = (self.cfg.learn_t_rho, t_rho) {
            self.vcp.set_t_rho(t);
        }
        self.level = level;
        let code = self.select(level);
        self.vcp.on_signal(ev, Signal::Load(code.bits()));
    }

    fn sample(&self, out: &mut Samples) {
        out.push(("uno_level", self.level as f64));
        out.push(("t_rho_s", self.vcp.t_rho_s()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Time, MS, SEC};

    const MSS: u32 = 1000;

    fn ucp(segments: u64) -> Ucp {
        let mut u = Ucp::new("ucp1", UcpConfig::default(), MSS).unwrap();
        u.set_initial_window(segments * MSS as u64);
        u
    }

    fn ev(now: Time, srtt: Time) -> AckEvent {
        AckEvent {
            now,
            srtt,
            acked_bytes: MSS as u64,
            ..Default::default()
        }
    }

    /// The window change of one ACK of one segment carrying `sig`.
    fn step(u: &mut Ucp, e: &AckEvent, sig: Option<Signal>) -> f64 {
        let before = u.cwnd_segments();
        if let Some(s) = sig {
            u.on_signal(e, s);
        }
        u.on_ack(e);
        u.cwnd_segments() - before
    }

    #[test]
    fn each_level_moves_the_window_as_section_iii_a() {
        // rtt = t_ρ = 200 ms, so scaling is 1: MI adds ξ(σ) per segment.
        let e = ev(SEC, 200 * MS);
        for level in 0..6u8 {
            let sigma = (level as f64 + 0.5) * 0.8 / 6.0;
            let xi = 0.15 * (1.0 - sigma) / sigma;
            let mut u = ucp(10);
            let d = step(&mut u, &e, Some(Signal::Load(level)));
            assert!((d - xi).abs() < 1e-12, "level {level}: {d} vs {xi}");
        }
        // By hand: level 0 → σ = 1/15, ξ = 0.15·14 = 2.1; level 5 → σ = 11/15, ξ = 0.0545…
        assert!((UcpConfig::default().xi(0) - 2.1).abs() < 1e-12);
        assert!((UcpConfig::default().xi(5) - 0.15 * 4.0 / 11.0).abs() < 1e-12);
        // At the bands' upper edges: level 0 → σ = 2/15, ξ = 0.15·6.5 = 0.975; level 5 →
        // σ = 0.8, ξ = 0.15·0.25 = 0.0375 (VCP's own ξ at k = 0.25 is 0.0625).
        let upper = UcpConfig {
            xi_sigma: XiSigma::Upper,
            ..Default::default()
        };
        assert!((upper.xi(0) - 0.975).abs() < 1e-12);
        assert!((upper.xi(5) - 0.0375).abs() < 1e-12);
        // rtt 100 ms: (1 + ξ)^0.5 − 1.
        let mut u = ucp(10);
        let d = step(&mut u, &ev(SEC, 100 * MS), Some(Signal::Load(0)));
        assert!((d - (3.1f64.sqrt() - 1.0)).abs() < 1e-12);
        // Level 6: AI α·(rtt/t_ρ)/cwnd per segment, linear in rtt: 3·0.5/10.
        let mut u = ucp(10);
        let d = step(&mut u, &ev(SEC, 100 * MS), Some(Signal::Load(HIGH)));
        assert!((d - 0.15).abs() < 1e-12, "{d}");
        // Level 7: MD to 0.875 · 10, then frozen for one t_ρ.
        let mut u = ucp(10);
        step(&mut u, &e, Some(Signal::Load(OVERLOAD)));
        assert!((u.cwnd_segments() - 8.75).abs() < 1e-12);
        assert_eq!(u.mds(), 1);
        step(
            &mut u,
            &ev(SEC + 100 * MS, 200 * MS),
            Some(Signal::Load(OVERLOAD)),
        );
        assert!((u.cwnd_segments() - 8.75).abs() < 1e-12);
        // No UNO router on the path: additive increase.
        let mut u = ucp(10);
        let d = step(&mut u, &e, Some(Signal::Load(NO_ROUTER)));
        assert!((d - 0.3).abs() < 1e-12, "{d}");
    }

    #[test]
    fn between_decisions_the_last_level_keeps_acting() {
        let e = ev(SEC, 200 * MS);
        let mut u = ucp(10);
        step(&mut u, &e, Some(Signal::Load(2)));
        let xi = UcpConfig::default().xi(2);
        let d = step(&mut u, &e, None);
        assert!((d - xi).abs() < 1e-12);
        // Before any decision: level 5's MI.
        let mut u = ucp(10);
        let d = step(&mut u, &e, None);
        assert!((d - UcpConfig::default().xi(5)).abs() < 1e-12);
    }

    #[test]
    fn ucp2_scales_by_the_routers_t_rho() {
        let mut u = Ucp::new("ucp2", UcpConfig::default(), MSS).unwrap();
        u.set_initial_window(10_000);
        // The routers say t_ρ = 80 ms; the flow's RTT is 40 ms: AI 3·0.5/10 per segment.
        let d = step(
            &mut u,
            &ev(SEC, 40 * MS),
            Some(Signal::LoadInterval {
                code: HIGH,
                t_rho: 80 * MS,
            }),
        );
        assert!((d - 0.15).abs() < 1e-12, "{d}");
        assert!((u.t_rho_s() - 0.08).abs() < 1e-12);
        // UCP1 ignores it.
        let cfg = UcpConfig {
            learn_t_rho: false,
            ..Default::default()
        };
        let mut u = Ucp::new("ucp1", cfg, MSS).unwrap();
        u.set_initial_window(10_000);
        let d = step(
            &mut u,
            &ev(SEC, 40 * MS),
            Some(Signal::LoadInterval {
                code: HIGH,
                t_rho: 80 * MS,
            }),
        );
        assert!((d - 0.06).abs() < 1e-12, "{d}");
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |c: UcpConfig| Ucp::new("ucp1", c, MSS).err().unwrap();
        assert!(err(UcpConfig {
            k: 0.0,
            ..Default::default()
        })
        .starts_with("k"));
        assert!(err(UcpConfig {
            initial_level: 9,
            ..Default::default()
        })
        .starts_with("initial_level"));
        assert!(err(UcpConfig {
            beta: 1.5,
            ..Default::default()
        })
        .starts_with("beta"));
    }
}
