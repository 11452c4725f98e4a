//! Congestion controllers: the sender's window (and optional pacing rate) as a function of
//! ACKs, congestion signals, losses and timeouts. One small trait, one file per algorithm, in
//! the spirit of quinn's `congestion::Controller`; schemes' controllers live in their folders
//! under `schemes/` and implement the same trait.
//!
//! Baselines: [`newreno`] (RFC 5681/3465/6582/3168), [`cubic`] (RFC 9438, optional
//! [`hystart`]++ of RFC 9406), [`dctcp`] (RFC 8257), [`bbr`] (BBR v1, draft-cardwell-00),
//! [`copa`] (Copa's default mode, NSDI 2018),
//! built by name with [`by_name`]. DCTCP, BBR and HyStart++ count round trips from
//! [`AckEvent::delivered`] / [`AckEvent::prior_delivered`] ([`round`]), so the connection must
//! fill them; BBR also needs the delivery-rate fields and paces with [`Controller::pacing_rate`].
//! Controllers keep their own fast-recovery state between `on_loss` and `on_recovery_end`;
//! [`AckEvent::in_recovery`] only tells BBR when timeout recovery is over. Controllers with
//! [`Controller::cwr_state`] read [`AckEvent::in_cwnd_reduction`] instead of their own flags
//! to hold the window, as Linux's CWR and Recovery states do.

pub mod bbr;
pub mod copa;
pub mod cubic;
pub mod dctcp;
pub mod hystart;
pub mod hystart_linux;
pub mod loss;
pub mod minmax;
pub mod newreno;
pub mod round;
#[cfg(test)]
mod testkit;

use crate::time::Time;

/// A congestion signal decoded from an ACK by the sender's feedback codec (the transport's
/// `Codec`, one floor up). Codecs deliver a signal at most as often as the scheme's
/// rules allow (e.g. RFC 3168: once per window of data), so controllers react to each one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Classic ECN: the network marked CE (RFC 3168 ECE echo).
    Ecn,
    /// A multilevel congestion level (EECN CL(1)/CL(2), MECN incipient = 1 / moderate = 2).
    Level(u8),
    /// DCTCP-style precise feedback: of the bytes this ACK acknowledges, how many were marked.
    Marked { marked_bytes: u64, acked_bytes: u64 },
    /// An explicit load code (VCP's 2-bit region, UNO's 3-bit level, HFCC's overlay code).
    Load(u8),
    /// A load code with the load interval `t_ρ` the path's routers use (UNO's 2-bit RTT
    /// channel tells senders the routers' interval, chosen from the flows' mean RTT).
    LoadInterval { code: u8, t_rho: Time },
    /// Bounds on the path's load factor, estimated from the marks of several packets (BMCC's
    /// ADPM): the highest link's load lies in `[low, high]`.
    /// In thousandths.
    LoadFactor { low_milli: u32, high_milli: u32 },
}

impl Signal {
    /// A load code and the routers' interval when the signal carries one: `Load` and
    /// `LoadInterval` (the controllers of UNO and MLCP read both alike).
    pub fn load_code(self) -> Option<(u8, Option<Time>)> {
        match self {
            Signal::Load(code) => Some((code, None)),
            Signal::LoadInterval { code, t_rho } => Some((code, Some(t_rho))),
            _ => None,
        }
    }
}

/// Everything a controller may want to know about one ACK.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckEvent {
    pub now: Time,
    /// Bytes newly acknowledged (cumulatively, plus newly SACKed when SACK is on).
    pub acked_bytes: u64,
    /// RTT sample from this ACK, if it yields one (Karn's rule / timestamps).
    pub rtt: Option<Time>,
    /// RTT of the most recently sent segment this ACK newly delivered (Linux's `ca_rtt_us`,
    /// the sample Linux passes to its congestion controls); `rtt` when the timing gives none.
    pub rtt_last: Option<Time>,
    /// Smoothed RTT and minimum RTT seen so far (0 before the first sample).
    pub srtt: Time,
    pub min_rtt: Time,
    /// Bytes in flight after processing this ACK.
    pub bytes_in_flight: u64,
    /// The connection is in fast recovery (or RTO recovery).
    pub in_recovery: bool,
    /// The connection is bringing the window down after a reduction: the CWR state (for
    /// controllers with [`Controller::cwr_state`]) or fast recovery. Linux grows no window
    /// then (`tcp_may_raise_cwnd`), and answers no ECN echo.
    pub in_cwnd_reduction: bool,
    /// Delivery-rate sample (bytes/s) for rate-based controllers, and whether the sender was
    /// application-limited when the acknowledged data was sent.
    pub delivery_rate: Option<f64>,
    pub app_limited: bool,
    /// Total bytes delivered so far in the connection (BBR's round counting).
    pub delivered: u64,
    /// `delivered` when the packet acknowledged by this ACK was sent.
    pub prior_delivered: u64,
    /// The ACK carries ECN-Echo (the TCP ECE flag: classic ECN's echo, MECN's incipient and
    /// moderate levels), whether or not its codec delivered a signal for it. ns-2's Reno opens
    /// no window on such an ACK (`tcp/tcp.cc` `recv_newack_helper`).
    pub ece: bool,
    /// The sender did not fill its window in the last round trip — the receive window or the
    /// application held it back — and is not in a slow start that has used half of it
    /// (Linux's `!tcp_is_cwnd_limited`): Linux's Reno, CUBIC and DCTCP do not grow then.
    pub cwnd_unused: bool,
}

/// Segments an ACK counts for, at most, by default, in a window law given per RTT and applied
/// per acknowledged segment (the load-factor family's MI, AI and rapid increase; each scheme's
/// `max_segments_per_ack`). The cumulative ACK that follows a retransmission timeout's repair
/// covers hundreds of segments the path delivered long before; counted in full it multiplied
/// the window in one step. The ACK that ends a fast recovery never reaches these laws: they do
/// not grow the window in fast recovery, and the connection ends it after the ACK. 2 is
/// RFC 3465 §2.2's limit L = 2 SMSS per ACK, which keeps a per-RTT law per segment under
/// delayed ACKs (the default hosts'); ns-2's senders (VCP's `vcp-src.cc` `opencwnd` among
/// them) take one step per new ACK, whatever it covers: 1, which the HFCC and UNO experiments
/// set.
pub const MAX_SEGMENTS_PER_ACK: f64 = 2.0;

impl AckEvent {
    /// The segments this ACK counts for in a per-segment window law: the bytes it newly
    /// acknowledges in segments of `mss` bytes, at most `max` (a scheme's
    /// `max_segments_per_ack`, [`MAX_SEGMENTS_PER_ACK`] by default).
    pub fn law_segments(&self, mss: f64, max: f64) -> f64 {
        (self.acked_bytes as f64 / mss).min(max)
    }
}

/// Checks a scheme's `max_segments_per_ack`: at least one segment (`inf`: no limit).
pub fn check_max_segments_per_ack(max: f64) -> Result<(), String> {
    if max >= 1.0 {
        Ok(())
    } else {
        Err(format!(
            "max_segments_per_ack: {max} must be at least 1 (inf: no limit)"
        ))
    }
}

/// Sender congestion control. Windows are in bytes.
pub trait Controller {
    fn name(&self) -> &'static str;
    /// Called when the handshake decided the initial window (EECN's 10/5/1 segments).
    fn set_initial_window(&mut self, bytes: u64);
    /// An ACK that acknowledges new data (not called for pure duplicates).
    fn on_ack(&mut self, ev: &AckEvent);
    /// A congestion signal carried by the ACK `ev` (delivered before `on_ack` for that ACK).
    fn on_signal(&mut self, ev: &AckEvent, signal: Signal);
    /// Loss detected by duplicate ACKs / SACK: fast recovery starts.
    fn on_loss(&mut self, now: Time, bytes_in_flight: u64);
    /// Fast recovery ended (the recovery point was acknowledged).
    fn on_recovery_end(&mut self, _now: Time) {}
    /// Retransmission timeout.
    fn on_rto(&mut self, now: Time, bytes_in_flight: u64);
    /// F-RTO (RFC 5682) found the last timeout spurious: data sent before it, never
    /// retransmitted, was acknowledged. The baselines undo the timeout's reduction as Linux
    /// does (`tcp_undo_cwnd_reduction`: cwnd and ssthresh back to at least their values
    /// before it); by default the reduction stands.
    fn on_spurious_timeout(&mut self, _now: Time) {}
    /// A data segment was sent (rate-based controllers track sending).
    fn on_send(&mut self, _now: Time, _bytes: u64, _bytes_in_flight: u64) {}
    /// Congestion window in bytes.
    fn window(&self) -> u64;
    /// Slow-start threshold in bytes (u64::MAX when unset).
    fn ssthresh(&self) -> u64;
    /// Pacing rate in bytes per second, if the controller paces.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    /// Whether the connection runs Linux's reduction round for this controller: a signal
    /// that lowers the window puts the connection in the CWR state until the data then in
    /// flight is acknowledged (`AckEvent::in_cwnd_reduction` is set; a loss found in that
    /// window is repaired without a second reduction, `on_loss` is not called), and in CWR
    /// and SACK recovery the window comes down by PRR (RFC 6937) unless the connection's
    /// `cwnd_reduction` says otherwise. The baselines that reduce on signals (NewReno, CUBIC,
    /// DCTCP) do; controllers that time their own reductions (freeze periods, per-ACK laws)
    /// do not.
    fn cwr_state(&self) -> bool {
        false
    }
    /// A loss found in the CWR round: fast recovery begins without `on_loss` (the round's
    /// reduction stands). For a controller that keeps what its last reduction answered
    /// (NewReno's `rto_rule = ns2`: ns-2, which has no CWR round, would have made a fast
    /// retransmit here; MECN's sender has no CWR round and sees such a loss as `on_loss`).
    fn on_loss_in_cwr(&mut self, _now: Time) {}
    /// Extra values worth sampling over time (e.g. DCTCP's alpha, BBR's state).
    fn sample(&self, _out: &mut crate::net::Samples) {}
}

/// The baseline controllers by name (schemes register their own controllers elsewhere).
pub const BASELINE_NAMES: &[&str] = &["newreno", "cubic", "dctcp", "bbr", "copa"];

/// Builds a baseline controller from its name, the MSS in bytes, its parameter table (the
/// fields of its config struct, as the scenario layer holds them; unset fields take their
/// defaults) and a seed for controllers that draw random numbers. Errors name the offending
/// parameter (`cubic.hystart_params.css_rounds: ...`) or list the known names.
pub fn by_name(
    name: &str,
    mss: u32,
    params: Option<&serde_json::Value>,
    seed: u64,
) -> Result<Box<dyn Controller>, String> {
    let prefixed = |e: String| format!("{name}.{e}");
    Ok(match name {
        "newreno" => Box::new(newreno::NewReno::new(mss, config(name, params)?).map_err(prefixed)?),
        "cubic" => Box::new(cubic::Cubic::new(mss, config(name, params)?).map_err(prefixed)?),
        "dctcp" => Box::new(dctcp::Dctcp::new(mss, config(name, params)?).map_err(prefixed)?),
        "bbr" => Box::new(bbr::Bbr::new(mss, config(name, params)?, seed).map_err(prefixed)?),
        "copa" => Box::new(copa::Copa::new(mss, config(name, params)?).map_err(prefixed)?),
        _ => {
            return Err(format!(
                "unknown congestion controller {name:?}; known: {}",
                BASELINE_NAMES.join(", ")
            ))
        }
    })
}

/// A baseline controller's parameters with every default filled in.
pub fn resolved_config(
    name: &str,
    params: &serde_json::Value,
) -> Result<serde_json::Value, String> {
    fn full<T: serde::de::DeserializeOwned + serde::Serialize + Default>(
        name: &str,
        p: &serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        serde_json::to_value(config::<T>(name, Some(p))?).map_err(|e| e.to_string())
    }
    match name {
        "newreno" => full::<newreno::NewRenoConfig>(name, params),
        "cubic" => full::<cubic::CubicConfig>(name, params),
        "dctcp" => full::<dctcp::DctcpConfig>(name, params),
        "bbr" => full::<bbr::BbrConfig>(name, params),
        "copa" => full::<copa::CopaConfig>(name, params),
        _ => Err(format!("unknown congestion controller {name:?}")),
    }
}

fn config<T: serde::de::DeserializeOwned + Default>(
    name: &str,
    params: Option<&serde_json::Value>,
) -> Result<T, String> {
    let Some(v) = params else {
        return Ok(T::default());
    };
    serde_path_to_error::deserialize::<_, T>(v.clone()).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!("{name}: {}", e.into_inner())
        } else {
            format!("{name}.{path}: {}", e.into_inner())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_name_builds_baselines_and_names_the_known_ones() {
        for name in BASELINE_NAMES {
            let cc = by_name(name, 1000, None, 1).unwrap();
            assert_eq!(cc.name(), *name);
            assert!(cc.window() > 0);
        }
        let e = by_name("reno2", 1000, None, 1).err().unwrap();
        for name in BASELINE_NAMES {
            assert!(e.contains(name), "{e}");
        }
        let p = serde_json::json!({"initial_window": 10});
        assert_eq!(
            by_name("newreno", 1000, Some(&p), 1).unwrap().window(),
            10_000
        );
        let p = serde_json::json!({"initial_windw": 10});
        let e = by_name("newreno", 1000, Some(&p), 1).err().unwrap();
        assert!(e.contains("initial_windw"), "{e}");
        let p = serde_json::json!({"abc_limit": 0});
        let e = by_name("newreno", 1000, Some(&p), 1).err().unwrap();
        assert!(e.starts_with("newreno.abc_limit"), "{e}");
        let p = serde_json::json!({"hystart_params": {"min_rtt_thresh": "oops"}});
        let e = by_name("cubic", 1000, Some(&p), 1).err().unwrap();
        assert!(e.starts_with("cubic.hystart_params.min_rtt_thresh"), "{e}");
        let p = serde_json::json!({"hystart": true, "hystart_params": {"min_rtt_thresh": "2ms"}});
        assert!(by_name("cubic", 1000, Some(&p), 1).is_ok());
        assert!(by_name("cubic", 0, None, 1).err().unwrap().contains("mss"));
    }
}
