//! TCP connection parameters. Times are in seconds (TOML numbers), sizes in bytes.

use crate::time::{from_secs, Time};
use serde::{Deserialize, Serialize};

/// How `min_rto_s` bounds the retransmission timeout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoFloor {
    /// RFC 6298 §2.4: RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)). With a 200 ms floor and
    /// 200 ms delayed ACKs a lone segment can time out before its ACK comes (ns-3 avoids this
    /// with a 1 s floor). The ns-2 and ns-3 papers' reading.
    Rfc6298,
    /// Linux (`tcp_set_rto`): RTO = SRTT + max(min_rto, 4·RTTVAR) (the variance term is
    /// floored), so the RTO always exceeds the RTT by at least min_rto. The default.
    #[default]
    Linux,
}

/// How the sending window comes down to the controller's new ssthresh after a reduction, for
/// controllers that leave the reduction round to the connection
/// ([`crate::cc::Controller::cwr_state`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CwndReduction {
    /// Proportional Rate Reduction (RFC 6937) in the CWR state and SACK recovery, as Linux
    /// and ns-3 do.
    #[default]
    Prr,
    /// The window is the controller's at once: nothing is sent until the data in flight has
    /// drained below it (RFC 5681 / RFC 6675 as written; the ns-2 era's behaviour).
    Immediate,
}

/// Which partial ACKs of NewReno recovery (no SACK) restart the retransmission timer
/// (RFC 6582 §4).
///
/// Linux re-arms the timer on every ACK that acknowledges data (`tcp_ack`,
/// `FLAG_SET_XMIT_TIMER`) but bounds what recovery sends with PRR, so a retransmission
/// dropped behind new data ends in a timeout all the same; this simulator's NewReno
/// recovery inflates the window instead (RFC 6582) and, with `every`, repairs a slow-start
/// overshoot one hole per round trip without one. Against Linux 6.18 in emulation (one
/// Reno flow without SACK, 20 Mb/s, 44 ms, 100-packet DropTail, 20 s): Linux 13.9 Mb/s,
/// 567 retransmissions, 1 timeout; `first` 17.0 Mb/s, 528, 2; `every` 9.6 Mb/s, 245, 0
/// after a 10-s crawl. So `first` is the default until non-SACK recovery follows Linux's
/// PRR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PartialAckTimer {
    /// The first one only ("Impatient"): ns-2's `Agent/TCP/Newreno` with `newreno_changes1_`
    /// 1, its default since 2003. A window with many losses ends in a timeout.
    #[default]
    First,
    /// Every one ("Slow-but-Steady"), as ns-3's `TcpSocketBase::NewAck` restarts it: a
    /// window with many losses is repaired one hole per round trip without a timeout.
    Every,
}

/// Which newly acknowledged segment an ACK's RTT sample is taken from (never a retransmitted
/// one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RttSampleFrom {
    /// The first in sequence order (Linux's `first_ackt`, ns-3's oldest history entry): a
    /// delayed ACK's sample includes the delay.
    #[default]
    First,
    /// The most recently sent (the smallest sample; this simulator's rule before it followed
    /// Linux, kept for the experiments reproduced under it).
    Last,
}

/// Parameters of a TCP connection. Every field has a default (below); a scenario sets only
/// what it changes, and an unknown key is an error. The timing defaults are Linux's (RTO
/// floor on the variance term, 200 ms minimum RTO, 40 ms delayed-ACK timeout, initial window
/// 10, PRR), and so is the packet format: 1448-byte segments with timestamps, so full data
/// packets are 1500 bytes (an Ethernet MTU) and pure ACKs 52. The paper experiments set
/// their TCP in full (their papers' 1000-byte segments without timestamps, among the rest),
/// so they do not follow these defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Payload bytes per full segment (the SMSS of RFC 5681; headers come on top).
    /// Default 1448 (Linux over a 1500-byte MTU with timestamps; the papers use 1000).
    pub mss: u32,
    /// Initial congestion window in segments (RFC 6928: 10, as Linux and ns-3). A scheme's
    /// codec may override it at the handshake (EECN: 10 / 5 / 1).
    pub initial_window: u32,
    /// After a SYN or SYN-ACK had to be retransmitted the initial window is one segment
    /// (RFC 5681 §3.1). Default true.
    pub syn_loss_iw1: bool,
    /// Lower bound of the retransmission timeout. Default 0.2 s (Linux); ns-3 uses 1 s and
    /// RFC 6298 §2.4 says 1 s.
    pub min_rto_s: f64,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto_s: f64,
    /// Where the floor applies (see [`RtoFloor`]). Default `linux`.
    pub rto_floor: RtoFloor,
    /// Upper bound of the RTO (RFC 6298 §2.5 allows ≥ 60 s). Default 60 s.
    pub max_rto_s: f64,
    /// Clock granularity G of RFC 6298 §2 (RTO ≥ SRTT + G). Default 1 ms (ns-3's default).
    pub clock_granularity_s: f64,
    /// SYN (or SYN-ACK) retransmissions before the connection gives up. Default 6 (Linux).
    pub syn_retries: u32,
    /// Delayed acknowledgments (RFC 5681 §4.2, RFC 9293 §3.8.6.3). Default on.
    pub delayed_ack: bool,
    /// With delayed ACKs: acknowledge at least every this many in-order data segments
    /// (RFC 5681: every second full-sized segment). Default 2.
    pub delack_segments: u32,
    /// With delayed ACKs: the longest an ACK is held. Default 0.04 s (Linux's TCP_ATO_MIN,
    /// the delayed-ACK timeout of a bulk receiver; ns-3 uses 0.2 s, RFC 5681 allows at most
    /// 0.5 s).
    pub delack_timeout_s: f64,
    /// With delayed ACKs: Linux's quick-ACK mode. The first data segments of a connection,
    /// those after a silence longer than the RTO, and those after a duplicate segment are
    /// acknowledged at once, up to half the advertised window in segments and at most 16
    /// (`tcp_incr_quickack`). Not modelled: the two quick ACKs Linux adds on the first CE
    /// mark since the sender's last CWR (`__tcp_ecn_check_ce`); built as Linux has it, they
    /// lowered two classic-ECN NewReno flows' utilisation on a 1 ms path with step marking
    /// at 20 packets from 99.6 % to 97.7 %, which is not yet understood, and against Linux
    /// they gained nothing clear (parking lot: CE marks on the shared hop +69 % where
    /// without them +48 %; MECN on classic hosts: drops +40 % where +33 %). Default on.
    pub quickack: bool,
    /// With SACK and delayed ACKs: Linux's SACK compression (`tcp_comp_sack_nr`). Of the
    /// out-of-order segments that arrive while `rcv_nxt` stays put, the first three are
    /// acknowledged at once (the sender's duplicate-ACK threshold); the ACKs of the rest are
    /// withheld, up to this many, and one ACK goes min(1 ms, RTT/20) after the first
    /// withheld (`tcp_comp_sack_delay_ns`). 0: every out-of-order segment is acknowledged at
    /// once (RFC 5681 §4.2, ns-3). Default 44, as Linux.
    pub sack_compress_max: u32,
    /// Selective acknowledgments (RFC 2018) with RFC 6675 loss recovery when both ends agree;
    /// otherwise NewReno recovery (RFC 6582). Default on.
    pub sack: bool,
    /// D-SACK (RFC 2883, Linux's `tcp_dsack = 1`): with SACK, the receiver reports a
    /// duplicate segment in the first SACK block of its next ACK, and the sender reads it
    /// (a duplicate of a tail loss probe means nothing was lost). Default on.
    pub dsack: bool,
    /// Timestamps option (RFC 7323): RTT samples from TSecr when both ends agree, otherwise
    /// from segments that were never retransmitted (Karn). Each segment carries 12 more
    /// header bytes. Default on, as Linux (the papers' setups have none: pure ACKs of 40
    /// bytes).
    pub timestamps: bool,
    /// Window scaling (RFC 7323 §2). Default on.
    pub window_scaling: bool,
    /// Linux's receive-buffer autotuning (see [`super::rcvbuf`]): the advertised window
    /// starts from `rcv_buf_initial` and grows with what was read per round trip, up to
    /// `rcv_buf`. Off: the whole `rcv_buf` is advertised from the start, as ns-2's and
    /// ns-3's hosts do (the paper experiments and the ns-3 benchmark scenarios turn it off).
    /// Default on, as Linux.
    pub rcv_autotune: bool,
    /// With `rcv_autotune`: the initial buffer (Linux's `tcp_rmem[1]`; `rcv_buf` if that is
    /// smaller). Default 131072.
    pub rcv_buf_initial: u64,
    /// With `rcv_autotune`: window bytes per buffer byte (Linux's `scaling_ratio`, set by the
    /// receiving device's buffer sizes). Default 0.62 (the emulation's TUN devices).
    pub rcv_space_ratio: f64,
    /// Receive buffer in bytes: with `rcv_autotune`, the most the buffer grows to; without,
    /// the receive window advertised from the start (the application reads in-order data at
    /// once and out-of-order data is not charged against it, so it is always the whole
    /// buffer). Default 32 MiB (Linux's `tcp_rmem[2]`).
    pub rcv_buf: u64,
    /// Limited transmit (RFC 3042): one new segment on each of the first two duplicate ACKs.
    /// Default on.
    pub limited_transmit: bool,
    /// Duplicate ACKs (or SACKed segments above a hole, RFC 6675 IsLost) that signal loss.
    /// Default 3.
    pub dupack_threshold: u32,
    /// Pace at `ratio × cwnd / SRTT` when the controller gives no pacing rate of its own
    /// (the controller's rate, when it has one, is always used). Default off.
    pub pace_cwnd: bool,
    /// Pacing ratios for `pace_cwnd` in slow start and congestion avoidance (Linux's
    /// `tcp_pacing_ss_ratio` = 200 % and `tcp_pacing_ca_ratio` = 120 %).
    pub pacing_ss_ratio: f64,
    pub pacing_ca_ratio: f64,
    /// Linux's TSO deferral (`tcp_tso_should_defer`): a sender whose windows leave room for
    /// less than one TSO/GSO frame (about 1 ms at its pacing rate, at least 2 segments) and
    /// less than a third of the window waits for the next ACK if it is due within
    /// min(SRTT/2, 1 ms) and the last segment left within 1 ms, so it sends in bursts of a
    /// frame where an ns-3 sender sends what each ACK frees. Default on, as Linux.
    pub tso_defer: bool,
    /// See [`CwndReduction`]. Default `prr`.
    pub cwnd_reduction: CwndReduction,
    /// See [`RttSampleFrom`]. Default `first`.
    pub rtt_sample_from: RttSampleFrom,
    /// See [`PartialAckTimer`]. Default `first`.
    pub partial_ack_timer: PartialAckTimer,
    /// F-RTO (RFC 5682 §3, the SACK-enhanced form, as Linux's `tcp_frto`): after a timeout
    /// the sender probes with new data before resending the rest, and declares the timeout
    /// spurious — undoing its reduction — when data sent before it and never retransmitted is
    /// acknowledged. With SACK only. Default on.
    pub frto: bool,
    /// RACK loss detection with SACK (RFC 8985 §6.2, as Linux's default `tcp_recovery = 1`;
    /// see [`super::rack`]): a segment, or a retransmission, sent before one that has since
    /// been delivered is lost once the reordering window has passed — in recovery at once,
    /// before it within min(min_rtt/4, SRTT) until DupThresh segments are SACKed. Off: RFC
    /// 6675's duplicate threshold only, and a lost retransmission waits for the timeout.
    /// Default on.
    pub rack: bool,
    /// Tail loss probe (RFC 8985 §7, Linux's `tcp_early_retrans = 3`): with SACK, outside
    /// recovery, a sender that has heard nothing for about two round trips sends one segment
    /// (new if it can, else the last) so that a lost tail is found by SACK rather than by the
    /// timeout. Default on.
    pub tlp: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            initial_window: 10,
            syn_loss_iw1: true,
            min_rto_s: 0.2,
            rto_floor: RtoFloor::Linux,
            initial_rto_s: 1.0,
            max_rto_s: 60.0,
            clock_granularity_s: 0.001,
            syn_retries: 6,
            delayed_ack: true,
            delack_segments: 2,
            delack_timeout_s: 0.04,
            quickack: true,
            sack_compress_max: 44,
            sack: true,
            dsack: true,
            timestamps: true,
            window_scaling: true,
            rcv_autotune: true,
            rcv_buf_initial: 131_072,
            rcv_space_ratio: 0.62,
            rcv_buf: 32 << 20,
            limited_transmit: true,
            dupack_threshold: 3,
            pace_cwnd: false,
            pacing_ss_ratio: 2.0,
            pacing_ca_ratio: 1.2,
            tso_defer: true,
            cwnd_reduction: CwndReduction::Prr,
            rtt_sample_from: RttSampleFrom::First,
            partial_ack_timer: PartialAckTimer::First,
            frto: true,
            rack: true,
            tlp: true,
        }
    }
}

fn positive_secs(name: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 && v < 1e6 {
        Ok(())
    } else {
        Err(format!(
            "{name}: must be a positive number of seconds, got {v}"
        ))
    }
}

impl TcpConfig {
    /// Checks the parameters; an error names the field and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if self.mss < 1 || self.mss > 65_000 {
            return Err(format!("mss: must be 1..=65000 bytes, got {}", self.mss));
        }
        if self.initial_window == 0 {
            return Err("initial_window: must be at least 1 segment".into());
        }
        positive_secs("min_rto_s", self.min_rto_s)?;
        positive_secs("initial_rto_s", self.initial_rto_s)?;
        positive_secs("max_rto_s", self.max_rto_s)?;
        positive_secs("delack_timeout_s", self.delack_timeout_s)?;
        if !(self.clock_granularity_s.is_finite() && self.clock_granularity_s >= 0.0) {
            return Err(format!(
                "clock_granularity_s: must be a non-negative number of seconds, got {}",
                self.clock_granularity_s
            ));
        }
        if self.min_rto_s > self.max_rto_s {
            return Err(format!(
                "min_rto_s: {} is above max_rto_s ({})",
                self.min_rto_s, self.max_rto_s
            ));
        }
        if self.delack_segments == 0 {
            return Err("delack_segments: must be at least 1".into());
        }
        if self.dupack_threshold == 0 {
            return Err("dupack_threshold: must be at least 1".into());
        }
        if self.rcv_buf < self.mss as u64 {
            return Err(format!(
                "rcv_buf: must hold at least one segment ({} bytes), got {}",
                self.mss, self.rcv_buf
            ));
        }
        if self.rcv_buf > (u16::MAX as u64) << 14 {
            return Err(format!(
                "rcv_buf: at most {} bytes (window scale 14), got {}",
                (u16::MAX as u64) << 14,
                self.rcv_buf
            ));
        }
        if !self.window_scaling && self.rcv_buf > u16::MAX as u64 {
            return Err(format!(
                "rcv_buf: without window_scaling at most 65535 bytes, got {}",
                self.rcv_buf
            ));
        }
        if !(self.rcv_space_ratio > 0.0 && self.rcv_space_ratio <= 1.0) {
            return Err(format!(
                "rcv_space_ratio: must be in (0, 1], got {}",
                self.rcv_space_ratio
            ));
        }
        if self.rcv_buf_initial < self.mss as u64 {
            return Err(format!(
                "rcv_buf_initial: must hold at least one segment ({} bytes), got {}",
                self.mss, self.rcv_buf_initial
            ));
        }
        for (name, v) in [
            ("pacing_ss_ratio", self.pacing_ss_ratio),
            ("pacing_ca_ratio", self.pacing_ca_ratio),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name}: must be a positive ratio, got {v}"));
            }
        }
        Ok(())
    }

    pub(crate) fn min_rto(&self) -> Time {
        from_secs(self.min_rto_s)
    }
    pub(crate) fn initial_rto(&self) -> Time {
        from_secs(self.initial_rto_s)
    }
    pub(crate) fn max_rto(&self) -> Time {
        from_secs(self.max_rto_s)
    }
    pub(crate) fn granularity(&self) -> Time {
        from_secs(self.clock_granularity_s)
    }
    pub(crate) fn delack_timeout(&self) -> Time {
        from_secs(self.delack_timeout_s)
    }

    /// The window-scale shift we offer: the smallest that lets the buffer fit 16 bits.
    pub(crate) fn wscale_shift(&self) -> u8 {
        let mut s = 0u8;
        while (self.rcv_buf >> s) > u16::MAX as u64 && s < 14 {
            s += 1;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_round_trip_through_toml() {
        let c = TcpConfig::default();
        c.validate().unwrap();
        let s = toml::to_string(&c).unwrap();
        let back: TcpConfig = toml::from_str(&s).unwrap();
        assert_eq!(back, c);
        assert_eq!(c.wscale_shift(), 10); // 32 MiB >> 10 = 32768, as Linux with tcp_rmem[2] = 32 MiB
    }

    #[test]
    fn errors_name_the_field() {
        let e = toml::from_str::<TcpConfig>("msss = 3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("msss"), "{e}");
        let c: TcpConfig = toml::from_str("min_rto_s = 2.0\nmax_rto_s = 1.0").unwrap();
        assert!(c.validate().unwrap_err().starts_with("min_rto_s"));
        let c: TcpConfig = toml::from_str("mss = 0").unwrap();
        assert!(c.validate().unwrap_err().starts_with("mss"));
        let c: TcpConfig = toml::from_str("delack_timeout_s = -1").unwrap();
        assert!(c.validate().unwrap_err().starts_with("delack_timeout_s"));
        let c: TcpConfig = toml::from_str("window_scaling = false").unwrap();
        assert!(c.validate().unwrap_err().starts_with("rcv_buf"));
        let c: TcpConfig = toml::from_str("rcv_space_ratio = 1.5").unwrap();
        assert!(c.validate().unwrap_err().starts_with("rcv_space_ratio"));
        let c: TcpConfig = toml::from_str("rcv_buf_initial = 10").unwrap();
        assert!(c.validate().unwrap_err().starts_with("rcv_buf_initial"));
    }
}
