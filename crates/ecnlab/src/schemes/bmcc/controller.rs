//! BMCC's sender: the bounds on the path's load select MI (ξ at the estimate), AI or MD (β
//! falling with the overload); bounds too wide to tell keep the last decision. The window
//! mechanics (RTT scaling, the freeze after MD, loss as NewReno) are [`Vcp`]'s.

use crate::cc::{AckEvent, Controller, Signal, MAX_SEGMENTS_PER_ACK};
use crate::net::Samples;
use crate::schemes::vcp::{AiScaling, LoadCode, Vcp, VcpConfig};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BmccConfig {
    /// MI gain κ in ξ(ρ) = κ·(1 − ρ)/ρ.
    pub kappa: f64,
    /// ξ is taken at no less than this load (the estimate can be near 0).
    pub mi_load_floor: f64,
    /// Load at which MI gives way to AI (η).
    pub low_load: f64,
    /// AI step α (segments per RTT at rtt = t_p).
    pub alpha: f64,
    /// MD multiplier at load 1.
    pub beta_max: f64,
    /// MD multiplier at load `1 + md_span` and above.
    pub beta_min: f64,
    pub md_span: f64,
    /// Bounds at most this far apart decide by their midpoint.
    pub resolution: f64,
    /// The routers' `t_p` in seconds (RTT scaling and the freeze).
    pub t_p_s: f64,
    /// Cap on `rtt/t_p` in the MI exponent (VCP's).
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

impl Default for BmccConfig {
    fn default() -> Self {
        BmccConfig {
            kappa: 0.35,
            mi_load_floor: 0.05,
            low_load: 0.8,
            alpha: 1.0,
            beta_max: 0.875,
            beta_min: 0.675,
            md_span: 0.3,
            resolution: 0.1,
            t_p_s: 0.2,
            max_rtt_ratio: 2.5,
            ai_scaling: AiScaling::Linear,
            initial_rtt_s: 0.1,
            max_segments_per_ack: MAX_SEGMENTS_PER_ACK,
            max_window: None,
        }
    }
}

impl BmccConfig {
    fn vcp(&self) -> VcpConfig {
        VcpConfig {
            xi: self.xi(0.65),
            alpha: self.alpha,
            beta: self.beta_max,
            t_rho_s: self.t_p_s,
            max_rtt_ratio: self.max_rtt_ratio,
            ai_scaling: self.ai_scaling,
            initial_rtt_s: self.initial_rtt_s,
            max_segments_per_ack: self.max_segments_per_ack,
            max_window: self.max_window,
        }
    }

    pub fn xi(&self, rho: f64) -> f64 {
        let r = rho.max(self.mi_load_floor);
        self.kappa * (1.0 - r) / r
    }

    pub fn beta(&self, rho: f64) -> f64 {
        let x = ((rho - 1.0) / self.md_span).clamp(0.0, 1.0);
        self.beta_max - (self.beta_max - self.beta_min) * x
    }

    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("kappa", self.kappa),
            ("mi_load_floor", self.mi_load_floor),
            ("md_span", self.md_span),
            ("resolution", self.resolution),
        ];
        for (k, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{k}: {v} must be positive"));
            }
        }
        if !(self.low_load > self.mi_load_floor && self.low_load < 1.0) {
            return Err(format!(
                "low_load: {} must lie between mi_load_floor and 1",
                self.low_load
            ));
        }
        if !(self.beta_max > 0.0 && self.beta_max < 1.0) {
            return Err(format!("beta_max: {} is outside (0, 1)", self.beta_max));
        }
        if !(self.beta_min > 0.0 && self.beta_min <= self.beta_max) {
            return Err(format!(
                "beta_min: {} is outside (0, beta_max = {}]",
                self.beta_min, self.beta_max
            ));
        }
        self.vcp().validate()
    }
}

pub struct Bmcc {
    cfg: BmccConfig,
    vcp: Vcp,
    /// The load the last decision was taken at (NaN before the first).
    decided_at: f64,
    /// Decisions left to the previous one because the bounds were too wide.
    pub undecided: u64,
}

impl Bmcc {
    pub fn new(cfg: BmccConfig, mss: u32) -> Result<Self, String> {
        cfg.validate()?;
        Ok(Bmcc {
            vcp: Vcp::new(cfg.vcp(), mss)?,
            cfg,
            decided_at: f64::NAN,
            undecided: 0,
        })
    }

    pub fn cwnd_segments(&self) -> f64 {
        self.vcp.cwnd_segments()
    }

    pub fn mds(&self) -> u64 {
        self.vcp.mds
    }

    /// The region the bounds `[low, high]` decide, with the load its law is taken at.
    fn decide(&self, low: f64, high: f64) -> Option<(LoadCode, f64)> {
        let mid = 0.5 * (low + high);
        let eta = self.cfg.low_load;
        if high <= eta {
            Some((LoadCode::Low, mid))
        } else if low >= 1.0 {
            Some((LoadCode::Overload, mid))
        } else if low >= eta && high <= 1.0 {
            Some((LoadCode::High, mid))
        } else if high - low <= self.cfg.resolution {
            // A decrease needs bounds that prove overload (`low ≥ 1` above): bounds that
            // straddle 1 say only that the load is near it, and a midpoint above 1 there is
            // most often an upper bound not yet tightened. Read as overload, it cut the flow
            // with the fewest reports (the smallest) far more often than the others: two
            // flows at 100 Mb/s shared 76/13 Mb/s, 28 of the small flow's 34 decreases with
            // the router's load below 1.
            let code = if mid < eta {
                LoadCode::Low
            } else {
                LoadCode::High
            };
            Some((code, mid))
        } else {
            None
        }
    }
}

impl Controller for Bmcc {
    fn name(&self) -> &'static str {
        "bmcc"
    }

    crate::schemes::vcp::delegate_window_to_vcp!();

    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        let Signal::LoadFactor {
            low_milli,
            high_milli,
        } = signal
        else {
            return;
        };
        let Some((code, rho)) = self.decide(low_milli as f64 / 1e3, high_milli as f64 / 1e3) else {
            self.undecided += 1;
            return;
        };
        self.decided_at = rho;
        match code {
            LoadCode::Low => self.vcp.set_mi_factor(self.cfg.xi(rho)),
            LoadCode::Overload => self.vcp.set_md_factor(self.cfg.beta(rho)),
            LoadCode::High => {}
        }
        self.vcp.on_signal(ev, Signal::Load(code.bits()));
    }

    fn sample(&self, out: &mut Samples) {
        out.push(("bmcc_load_estimate", self.decided_at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Time, MS, SEC};

    const MSS: u32 = 1000;

    fn bmcc(segments: u64) -> Bmcc {
        let mut b = Bmcc::new(BmccConfig::default(), MSS).unwrap();
        b.set_initial_window(segments * MSS as u64);
        b
    }

    /// Window change of one ACK of one segment with load bounds `[lo, hi]` (thousandths), rtt
    /// = t_p = 200 ms.
    fn step(b: &mut Bmcc, now: Time, lo: u32, hi: u32) -> f64 {
        let e = AckEvent {
            now,
            srtt: 200 * MS,
            acked_bytes: MSS as u64,
            ..Default::default()
        };
        let before = b.cwnd_segments();
        b.on_signal(
            &e,
            Signal::LoadFactor {
                low_milli: lo,
                high_milli: hi,
            },
        );
        b.on_ack(&e);
        b.cwnd_segments() - before
    }

    #[test]
    fn the_bounds_select_the_law() {
        // Bounds inside the low region, however wide: MI with ξ at the midpoint.
        let d = step(&mut bmcc(10), SEC, 0, 400);
        assert!((d - 0.35 * 0.8 / 0.2).abs() < 1e-12, "{d}");
        // Near zero the floor holds ξ at 0.35·0.95/0.05 = 6.65.
        let d = step(&mut bmcc(10), SEC, 0, 20);
        assert!((d - 6.65).abs() < 1e-12);
        // Inside [0.8, 1): AI α/cwnd per segment.
        let d = step(&mut bmcc(10), SEC, 850, 990);
        assert!((d - 0.1).abs() < 1e-12);
        // Overload: β from the midpoint: 1.15 → 0.875 − 0.2·0.5 = 0.775; 1.5 → 0.675.
        for (lo, hi, beta) in [
            (1100u32, 1200u32, 0.775),
            (1400, 1600, 0.675),
            (1000, 1000, 0.875),
        ] {
            let mut b = bmcc(100);
            step(&mut b, SEC, lo, hi);
            assert!((b.cwnd_segments() - 100.0 * beta).abs() < 1e-9, "{lo}-{hi}");
            assert_eq!(b.mds(), 1);
        }
        // Straddling bounds narrower than the resolution decide by the midpoint: 0.78–0.86
        // → 0.82, AI.
        let d = step(&mut bmcc(10), SEC, 780, 860);
        assert!((d - 0.1).abs() < 1e-12);
        // Straddling 1, even with the midpoint above it (0.96–1.05 → 1.005): AI, never a
        // decrease without a bound that proves overload.
        let mut b = bmcc(10);
        let d = step(&mut b, SEC, 960, 1050);
        assert!((d - 0.1).abs() < 1e-12, "{d}");
        assert_eq!(b.mds(), 0);
        // Wide straddling bounds keep the last decision (MI at 0.2 here).
        let mut b = bmcc(10);
        step(&mut b, SEC, 0, 400);
        let d = step(&mut b, SEC, 300, 1500);
        assert!((d - 0.35 * 0.8 / 0.2).abs() < 1e-12);
        assert_eq!(b.undecided, 1);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = Bmcc::new(
            BmccConfig {
                beta_min: 0.9,
                ..Default::default()
            },
            MSS,
        )
        .err()
        .unwrap();
        assert!(e.starts_with("beta_min: 0.9 is outside"), "{e}");
        let e = Bmcc::new(
            BmccConfig {
                low_load: 1.2,
                ..Default::default()
            },
            MSS,
        )
        .err()
        .unwrap();
        assert!(e.starts_with("low_load"), "{e}");
    }
}
