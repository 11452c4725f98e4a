//! MLCP — Multi-Level feedback Congestion control Protocol (Qazi & Znati, "On the design of
//! load factor based congestion control protocols for next-generation networks", INFOCOM
//! 2008 / Computer Networks 2011), a rival of HFCC (seed 003) and the source of UNO's RTT
//! channel (seed 001).
//!
//! - Router: [`marker::MlcpMarker`] measures VCP's load factor
//!   `ρ = (λ + κ_q·q̄) / (γ_l·C·t_p)`, quantises it into 15 levels and writes the level into
//!   a 4-bit header field of every ECT packet, only raising it along the path; it keeps the
//!   mean RTT of the packets it forwards (`m̄ = a·rtt + (1 − a)·m̄`, a = 0.02, from the RTT the
//!   sender carries in the header) and takes `t_p` as the smallest element of the set S at
//!   or above `m̄`, announced in a 3-bit field next to the level.
//! - Feedback: [`codec::MlcpCodec`]: the receiver echoes the highest level of the data an ACK
//!   covers and its router's `t_p`.
//! - Sender: [`controller::Mlcp`]: multiplicative increase in low load (ξ from the level),
//!   inversely-proportional increase in moderate load, additive increase in high load,
//!   multiplicative decrease by a factor that falls with the level of overload; VCP's freeze
//!   after a decrease; increments scaled by `rtt/t_p`; loss as TCP.
//!
//! # What this is built from
//!
//! MLCP's paper was not at hand. The implementation follows what the HFCC and UNO papers say
//! of it and the MLCP abstract: a 4-bit load factor (15 levels plus "no MLCP router"), the
//! routers' mean RTT carried back in 3 bits (UNO: `a = 0.02`, the set S), an MI / II / AI /
//! MD controller whose decrease has several levels, and the load factor of VCP. Everything
//! else is our reading, stated here and selectable where it matters:
//!
//! - **Levels** ([`LEVELS`]): MI over `[0, 0.7)` in seven 10 % steps, II over
//!   `[0.7, 0.8)`, AI over `[0.8, 0.9)` and `[0.9, 1.0)`, MD over `[1.0, 1.05)`,
//!   `[1.05, 1.1)`, `[1.1, 1.2)`, `[1.2, 1.3)` and `≥ 1.3`.
//! - **MI** `ξ(ρ) = κ·(1 − ρ)/ρ` at the level's midpoint with κ = 0.15 (UNO's controller,
//!   which names MLCP as the source of its controller features), applied as VCP's
//!   `(1 + ξ)^(rtt/t_p) − 1` per acknowledged segment, at most `max_segments_per_ack` per ACK
//!   (2 by default; 1 in the HFCC experiments, ns-2's; as every controller on
//!   [`Vcp`](crate::schemes::vcp::Vcp)'s mechanics, II and AI too). That is ×3.85 per `t_p` at
//!   the lowest level: ×1.8 per RTT on an 80-ms path whose `t_p` is 200 ms, ×5 per RTT when
//!   `t_p` was the nearest element of S (80 ms, shorter than the RTT with any queue); BMCC's
//!   κ = 0.35 here (×7.65 per `t_p`, the load known two intervals late) overshot 150 Mb/s,
//!   80 ms by ×60 and collapsed into timeouts.
//! - **II** adds `α_II·(rtt/t_p)/cwnd` segments per RTT (an increase inversely proportional
//!   to the window; `ii_alpha` = 1), **AI** `α·rtt/t_p` per RTT (α = 1, linear in `rtt/t_p`
//!   as UNO's controller, which took it from MLCP). `ii = false` runs AI in II's place.
//! - **MD** β = 0.875, 0.825, 0.775, 0.725, 0.675 by overload level: the range of HFCC's
//!   adaptive decrease (eq. 14), which the HFCC authors present as the load-factor family's.
//! - **Mean RTT and `t_p`** as UNO §II-B (which borrowed them from MLCP), and the rule HFCC
//!   §IV-D gives for the method it takes from MLCP: the smallest element of S at or above the
//!   mean, so that `t_p` outlasts most RTTs (`t_p_rule`; `nearest`, the element nearest the
//!   mean, gave 80 ms on 80-ms paths with any queue: a `t_p` shorter than the RTT, loads
//!   measured on parts of ACK-compressed windows: 0.19, then 2.3 0.1 s later); the
//!   router of the highest level names the `t_p` a packet returns (ties: the longer).
//! - **Header fields** are imagined (MLCP uses the whole ToS byte, which no real path keeps):
//!   the level and `t_p` code ride in simulator annotations next to the packet, like UNO's
//!   idealised VCP3. A classic ECN router's CE reads as the highest overload level.

pub mod codec;
pub mod controller;
pub mod marker;

pub use codec::MlcpCodec;
pub use controller::{Mlcp, MlcpConfig};
pub use marker::{MlcpMarker, MlcpMarkerConfig};

/// What a load level asks the sender to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Law {
    /// Multiplicative increase with ξ taken at this load factor.
    Mi { rho: f64 },
    /// Inversely-proportional increase.
    Ii,
    /// Additive increase.
    Ai,
    /// Multiplicative decrease by β.
    Md { beta: f64 },
}

/// The levels, lowest first: the load factor each starts at and its law. Level `i` is code
/// `i + 1` on the wire (code 0: no MLCP router).
pub const LEVELS: [(f64, Law); 15] = [
    (0.0, Law::Mi { rho: 0.05 }),
    (0.1, Law::Mi { rho: 0.15 }),
    (0.2, Law::Mi { rho: 0.25 }),
    (0.3, Law::Mi { rho: 0.35 }),
    (0.4, Law::Mi { rho: 0.45 }),
    (0.5, Law::Mi { rho: 0.55 }),
    (0.6, Law::Mi { rho: 0.65 }),
    (0.7, Law::Ii),
    (0.8, Law::Ai),
    (0.9, Law::Ai),
    (1.0, Law::Md { beta: 0.875 }),
    (1.05, Law::Md { beta: 0.825 }),
    (1.1, Law::Md { beta: 0.775 }),
    (1.2, Law::Md { beta: 0.725 }),
    (1.3, Law::Md { beta: 0.675 }),
];

/// The highest code: the deepest overload.
pub const TOP_CODE: u8 = LEVELS.len() as u8;

/// The wire code (1–15) of load factor `rho`.
pub fn code_of(rho: f64) -> u8 {
    if rho.is_nan() {
        return TOP_CODE;
    }
    LEVELS
        .iter()
        .rposition(|&(from, _)| rho >= from)
        .unwrap_or(0) as u8
        + 1
}

/// The law of a wire code (`None` for 0, no MLCP router, and codes beyond the table).
pub fn law_of(code: u8) -> Option<Law> {
    LEVELS.get((code as usize).checked_sub(1)?).map(|&(_, l)| l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_factors_map_to_levels() {
        assert_eq!(code_of(0.0), 1);
        assert_eq!(code_of(0.099), 1);
        assert_eq!(code_of(0.1), 2);
        assert_eq!(code_of(0.75), 8);
        assert_eq!(law_of(8), Some(Law::Ii));
        assert_eq!(law_of(code_of(0.85)), Some(Law::Ai));
        assert_eq!(law_of(code_of(0.99)), Some(Law::Ai));
        assert_eq!(law_of(code_of(1.0)), Some(Law::Md { beta: 0.875 }));
        assert_eq!(law_of(code_of(1.15)), Some(Law::Md { beta: 0.775 }));
        assert_eq!(code_of(7.0), TOP_CODE);
        assert_eq!(code_of(f64::NAN), TOP_CODE);
        assert_eq!(law_of(0), None);
        assert_eq!(law_of(16), None);
        // Increasing thresholds, a midpoint inside each MI level.
        for w in LEVELS.windows(2) {
            assert!(w[0].0 < w[1].0);
            if let Law::Mi { rho } = w[0].1 {
                assert!(rho > w[0].0 && rho < w[1].0);
            }
        }
    }
}

#[cfg(test)]
mod e2e_tests;
