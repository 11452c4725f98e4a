//! MLCP's sender: each ACK's level selects MI (ξ from the level), II, AI or MD (β from the
//! level); increments scale with `rtt/t_p` where `t_p` is the routers' interval the ACK
//! returns. The window mechanics (scaling, the freeze after MD, loss as NewReno) are
//! [`Vcp`]'s.

use super::{law_of, Law};
use crate::cc::{AckEvent, Controller, Signal, MAX_SEGMENTS_PER_ACK};
use crate::net::Samples;
use crate::schemes::vcp::{AiScaling, LoadCode, Vcp, VcpConfig};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MlcpConfig {
    /// MI gain κ in ξ(ρ) = κ·(1 − ρ)/ρ.
    pub kappa: f64,
    /// AI step α (segments per RTT at rtt = t_p).
    pub alpha: f64,
    /// II step: `ii_alpha/cwnd` segments per RTT at rtt = t_p.
    pub ii_alpha: f64,
    /// Inversely-proportional increase in its levels; false: AI there.
    pub ii: bool,
    /// `t_p` in seconds until the routers return one.
    pub t_p_s: f64,
    /// Cap on `rtt/t_p` in the MI exponent (VCP's).
    pub max_rtt_ratio: f64,
    /// How AI scales with rtt/t_p (linear, as UNO's controller took from MLCP).
    pub ai_scaling: AiScaling,
    /// RTT assumed before the first sample, in seconds.
    pub initial_rtt_s: f64,
    /// Segments an ACK counts for, at most, in the per-segment window laws (`cc::MAX_SEGMENTS_PER_ACK`
    /// = 2 by default, RFC 3465's L; 1 is ns-2's senders, one step per new ACK).
    pub max_segments_per_ack: f64,
    /// Cap on the window in segments; `None` for none.
    pub max_window: Option<u32>,
}

impl Default for MlcpConfig {
    fn default() -> Self {
        MlcpConfig {
            kappa: 0.15,
            alpha: 1.0,
            ii_alpha: 1.0,
            ii: true,
            t_p_s: 0.2,
            max_rtt_ratio: 2.5,
            ai_scaling: AiScaling::Linear,
            initial_rtt_s: 0.1,
            max_segments_per_ack: MAX_SEGMENTS_PER_ACK,
            max_window: None,
        }
    }
}

impl MlcpConfig {
    fn vcp(&self) -> VcpConfig {
        VcpConfig {
            xi: self.xi(0.65),
            alpha: self.alpha,
            beta: 0.875,
            t_rho_s: self.t_p_s,
            max_rtt_ratio: self.max_rtt_ratio,
            ai_scaling: self.ai_scaling,
            initial_rtt_s: self.initial_rtt_s,
            max_segments_per_ack: self.max_segments_per_ack,
            max_window: self.max_window,
        }
    }

    pub fn xi(&self, rho: f64) -> f64 {
        self.kappa * (1.0 - rho) / rho
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.kappa.is_finite() && self.kappa > 0.0) {
            return Err(format!("kappa: {} must be positive", self.kappa));
        }
        if !(self.ii_alpha.is_finite() && self.ii_alpha > 0.0) {
            return Err(format!("ii_alpha: {} must be positive", self.ii_alpha));
        }
        self.vcp().validate()
    }
}

pub struct Mlcp {
    cfg: MlcpConfig,
    vcp: Vcp,
    code: u8,
}

impl Mlcp {
    pub fn new(cfg: MlcpConfig, mss: u32) -> Result<Self, String> {
        cfg.validate()?;
        Ok(Mlcp {
            vcp: Vcp::new(cfg.vcp(), mss)?,
            cfg,
            // The gentlest MI level until the first ACK says otherwise (VCP's start).
            code: 7,
        })
    }

    pub fn cwnd_segments(&self) -> f64 {
        self.vcp.cwnd_segments()
    }

    pub fn mds(&self) -> u64 {
        self.vcp.mds
    }

    /// The VCP region a code acts as, with ξ, α or β set for it.
    fn select(&mut self, code: u8) -> LoadCode {
        match law_of(code) {
            Some(Law::Mi { rho }) => {
                self.vcp.set_mi_factor(self.cfg.xi(rho));
                LoadCode::Low
            }
            Some(Law::Ii) if self.cfg.ii => {
                let w = self.vcp.cwnd_segments().max(1.0);
                self.vcp.set_ai_step(self.cfg.ii_alpha / w);
                LoadCode::High
            }
            Some(Law::Md { beta }) => {
                self.vcp.set_md_factor(beta);
                // The AI that follows a decrease is plain AI.
                self.vcp.set_ai_step(self.cfg.alpha);
                LoadCode::Overload
            }
            // AI, and no MLCP router on the path.
            Some(Law::Ii) | Some(Law::Ai) | None => {
                self.vcp.set_ai_step(self.cfg.alpha);
                LoadCode::High
            }
        }
    }
}

impl Controller for Mlcp {
    fn name(&self) -> &'static str {
        "mlcp"
    }

    crate::schemes::vcp::delegate_window_to_vcp!();

    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        let Some((code, t_p)) = signal.load_code() else {
            return;
        };
        if let Some(t) = t_p {
            self.vcp.set_t_rho(t);
        }
        self.code = code;
        let region = self.select(code);
        self.vcp.on_signal(ev, Signal::Load(region.bits()));
    }

    fn sample(&self, out: &mut Samples) {
        out.push(("mlcp_level", self.code as f64));
        out.push(("t_p_s", self.vcp.t_rho_s()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Time, MS, SEC};

    const MSS: u32 = 1000;

    fn mlcp(cfg: MlcpConfig, segments: u64) -> Mlcp {
        let mut m = Mlcp::new(cfg, MSS).unwrap();
        m.set_initial_window(segments * MSS as u64);
        m
    }

    fn ev(now: Time, srtt: Time) -> AckEvent {
        AckEvent {
            now,
            srtt,
            acked_bytes: MSS as u64,
            ..Default::default()
        }
    }

    /// Window change of one ACK of one segment carrying `code` with `t_p` = 200 ms.
    fn step(m: &mut Mlcp, e: &AckEvent, code: u8) -> f64 {
        let before = m.cwnd_segments();
        m.on_signal(
            e,
            Signal::LoadInterval {
                code,
                t_rho: 200 * MS,
            },
        );
        m.on_ack(e);
        m.cwnd_segments() - before
    }

    #[test]
    fn each_level_moves_the_window_by_its_law() {
        // rtt = t_p: MI adds ξ per segment; level 1 (ρ 0.05): 0.15·0.95/0.05 = 2.85.
        let e = ev(SEC, 200 * MS);
        let d = step(&mut mlcp(MlcpConfig::default(), 10), &e, 1);
        assert!((d - 2.85).abs() < 1e-12, "{d}");
        // Level 7 (ρ 0.65): 0.15·0.35/0.65.
        let d = step(&mut mlcp(MlcpConfig::default(), 10), &e, 7);
        assert!((d - 0.15 * 0.35 / 0.65).abs() < 1e-12);
        // II (code 8) at 10 segments: (1/10) per RTT → (1/10)/10 per segment.
        let d = step(&mut mlcp(MlcpConfig::default(), 10), &e, 8);
        assert!((d - 0.01).abs() < 1e-12, "{d}");
        // ... and AI in its place when II is off.
        let no_ii = MlcpConfig {
            ii: false,
            ..Default::default()
        };
        let d = step(&mut mlcp(no_ii, 10), &e, 8);
        assert!((d - 0.1).abs() < 1e-12);
        // AI (codes 9, 10): α/cwnd per segment; at rtt 100 ms half (linear scaling).
        let d = step(&mut mlcp(MlcpConfig::default(), 10), &e, 9);
        assert!((d - 0.1).abs() < 1e-12);
        let d = step(&mut mlcp(MlcpConfig::default(), 10), &ev(SEC, 100 * MS), 10);
        assert!((d - 0.05).abs() < 1e-12);
        // MD by the level's β: code 11 → 0.875, code 15 → 0.675; then frozen one t_p.
        for (code, beta) in [(11u8, 0.875), (13, 0.775), (15, 0.675)] {
            let mut m = mlcp(MlcpConfig::default(), 100);
            step(&mut m, &e, code);
            assert!((m.cwnd_segments() - 100.0 * beta).abs() < 1e-9, "{code}");
            step(&mut m, &ev(SEC + 100 * MS, 200 * MS), 15);
            assert!((m.cwnd_segments() - 100.0 * beta).abs() < 1e-9);
            assert_eq!(m.mds(), 1);
        }
        // No MLCP router (code 0): AI.
        let d = step(&mut mlcp(MlcpConfig::default(), 10), &e, 0);
        assert!((d - 0.1).abs() < 1e-12);
    }

    #[test]
    fn the_routers_interval_scales_the_increase() {
        // t_p 400 ms from the routers, rtt 200 ms: MI exponent 0.5.
        let mut m = mlcp(MlcpConfig::default(), 10);
        let e = ev(SEC, 200 * MS);
        m.on_signal(
            &e,
            Signal::LoadInterval {
                code: 4,
                t_rho: 400 * MS,
            },
        );
        m.on_ack(&e);
        let xi: f64 = 0.15 * 0.65 / 0.35;
        assert!((m.cwnd_segments() - 10.0 - ((1.0 + xi).sqrt() - 1.0)).abs() < 1e-12);
    }
}
