//! BBR v1 as specified in draft-cardwell-iccrg-bbr-congestion-control-00 (the algorithm of
//! Cardwell et al., ACM Queue 2016) with, by default, what Linux's `tcp_bbr.c` adds to it: a
//! model of the path (BtlBw, the windowed maximum of delivery-rate samples over 10 round
//! trips; RTprop, the minimum RTT over 10 s) drives the pacing rate (`pacing_gain·BtlBw`) and
//! the window (`cwnd_gain·BDP` plus the ACK-aggregation allowance and the quantization
//! budget), through the states Startup (gain 2/ln 2), Drain (1/that), ProbeBW (eight-phase
//! gain cycle 5/4, 3/4, 1 × 6, entered at a random phase other than 3/4) and ProbeRTT (cwnd
//! 4 segments for 200 ms and one round trip after 10 s without a lower RTT).
//!
//! Linux's additions, each a parameter (`BbrConfig::draft00()` turns them all off):
//! - `btlbw_filter = "minmax"`: Kathleen Nichols' three-sample windowed maximum
//!   ([`super::minmax`]), which can sit below the exact maximum; `"exact"` keeps one slot
//!   per round.
//! - `extra_acked_gain` (1): the window grows by the largest recent excess of bytes
//!   acknowledged over BtlBw·elapsed time (two alternating windows of 5 rounds, capped by
//!   the window and by BtlBw·100 ms, only once the pipe is full) — what keeps data in flight
//!   through ACK bursts and silences.
//! - `linux_quantization`: the window target is rounded up to an even number of segments and
//!   gets 2 more segments in the 5/4 phase.
//! - `pacing_margin` 1 %: pacing 1 % below the model's rate.
//! - Not modelled: the long-term bandwidth sampling that detects token-bucket policers
//!   (`lt_bw`), TSO autosizing (the send quantum follows the draft), and the
//!   earliest-departure-time correction of the in-flight estimate.
//!
//! Readings, as parameters of [`BbrConfig`] or stated here:
//! - The connection supplies per-ACK delivery-rate samples, `delivered` and `prior_delivered`
//!   (draft-cheng-iccrg-delivery-rate-estimation); rounds are counted from them.
//! - BtlBw changes only when a sample is admitted (non-app-limited, or app-limited but not
//!   below the estimate).
//! - RTprop follows the draft's combined filter: a sample at or below the estimate, or any
//!   sample once the estimate is `rtprop_filter_len` old, replaces it.
//! - The initial pacing rate is `high_gain·InitialCwnd/1 ms`, recomputed from SRTT at the
//!   first ACK that carries one, as the draft's init does "after the first non-zero RTT
//!   sample".
//! - `pacing_margin`: the pacing rate handed to the connection is `(1 − margin)` times the
//!   model's; 1 % as Linux (draft-00 writes none).
//! - ProbeRTT's "C.app_limited" marking is emulated here: samples of packets sent before the
//!   marked delivery count are treated as app-limited.
//! - The per-ACK count of newly lost packets does not exist in the controller interface, so
//!   `cwnd − packets_lost` in recovery is not applied; "packets_lost > 0" in the ProbeBW
//!   phase test means a loss was signalled since the previous ACK. On entering fast recovery
//!   cwnd = bytes in flight + 1 SMSS (packet conservation for one round trip); on a timeout
//!   cwnd = 1 SMSS; the saved cwnd is restored when recovery ends (`on_recovery_end`, or the
//!   first ACK that is no longer in recovery, which covers timeout recovery).
//! - Restart from idle: a send with nothing else in flight (`bytes_in_flight ≤ bytes`).
//! - ECN signals are ignored (BBR v1 does not respond to them); `ssthresh()` is unbounded.

use super::minmax::WindowedMax;
use super::newreno::check_mss;
use super::round::RoundCounter;
use super::{AckEvent, Controller, Signal};
use crate::engine::rng::{self, Rng};
use crate::time::{to_secs, Time, MS, SEC};
use crate::units::Duration;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// Random stream key for BBR's gain-cycle phase (see [`crate::engine::rng::stream`]).
const RNG_KIND: u64 = 0xBB_0001;

const GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BbrConfig {
    /// Initial window in segments (the transport's; 10 as RFC 6928).
    pub initial_window: u32,
    /// Startup gain; 2/ln 2.
    pub high_gain: f64,
    /// ProbeBW cwnd gain.
    pub cwnd_gain: f64,
    pub btlbw_filter_rounds: u32,
    pub rtprop_filter_len: Duration,
    pub probe_rtt_duration: Duration,
    /// BBRMinPipeCwnd in segments.
    pub min_pipe_cwnd: u32,
    /// Startup ends after `full_bw_rounds` rounds without `full_bw_growth`× more bandwidth.
    pub full_bw_growth: f64,
    pub full_bw_rounds: u32,
    pub pacing_margin: f64,
    pub btlbw_filter: BtlBwFilter,
    /// Gain on the ACK-aggregation estimate added to the window (Linux's
    /// `bbr_extra_acked_gain`, 1; 0 turns it off as in draft-00).
    pub extra_acked_gain: f64,
    /// Rounds per half of the aggregation estimate's two-slot window (Linux: 5).
    pub extra_acked_rounds: u32,
    /// Cap on the aggregation allowance: BtlBw times this (Linux: 100 ms).
    pub extra_acked_max: Duration,
    /// Linux's quantization budget: the window target rounded up to an even number of
    /// segments, plus 2 segments in the 5/4 phase of ProbeBW (draft-00 has neither).
    pub linux_quantization: bool,
}

/// How BtlBw's windowed maximum is kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BtlBwFilter {
    /// Kathleen Nichols' three-sample approximation, as Linux (`lib/win_minmax.c`).
    #[default]
    Minmax,
    /// The exact maximum over the window, one slot per round (the draft's pseudocode).
    Exact,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            initial_window: 10,
            high_gain: 2.0 / std::f64::consts::LN_2,
            cwnd_gain: 2.0,
            btlbw_filter_rounds: 10,
            rtprop_filter_len: Duration(10 * SEC),
            probe_rtt_duration: Duration(200 * MS),
            min_pipe_cwnd: 4,
            full_bw_growth: 1.25,
            full_bw_rounds: 3,
            pacing_margin: 0.01,
            btlbw_filter: BtlBwFilter::Minmax,
            extra_acked_gain: 1.0,
            extra_acked_rounds: 5,
            extra_acked_max: Duration(100 * MS),
            linux_quantization: true,
        }
    }
}

impl BbrConfig {
    /// draft-cardwell-iccrg-bbr-congestion-control-00 as written: the exact BtlBw filter, no
    /// ACK-aggregation allowance, no quantization extras, no pacing margin.
    pub fn draft00() -> Self {
        BbrConfig {
            pacing_margin: 0.0,
            btlbw_filter: BtlBwFilter::Exact,
            extra_acked_gain: 0.0,
            linux_quantization: false,
            ..Default::default()
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.initial_window == 0 {
            return Err("initial_window: must be at least 1 segment".into());
        }
        if !(self.high_gain > 1.0 && self.high_gain.is_finite()) {
            return Err(format!("high_gain: {} must be above 1", self.high_gain));
        }
        if !(self.cwnd_gain >= 1.0 && self.cwnd_gain.is_finite()) {
            return Err(format!("cwnd_gain: {} must be at least 1", self.cwnd_gain));
        }
        if self.btlbw_filter_rounds == 0 || self.btlbw_filter_rounds > 1000 {
            return Err("btlbw_filter_rounds: must be in 1..=1000".into());
        }
        if self.rtprop_filter_len.0 == 0 {
            return Err("rtprop_filter_len: must be positive".into());
        }
        if self.min_pipe_cwnd == 0 {
            return Err("min_pipe_cwnd: must be at least 1 segment".into());
        }
        if !(self.full_bw_growth > 1.0 && self.full_bw_growth.is_finite()) {
            return Err(format!(
                "full_bw_growth: {} must be above 1",
                self.full_bw_growth
            ));
        }
        if self.full_bw_rounds == 0 {
            return Err("full_bw_rounds: must be positive".into());
        }
        if !(self.extra_acked_gain.is_finite() && self.extra_acked_gain >= 0.0) {
            return Err(format!(
                "extra_acked_gain: {} must be non-negative",
                self.extra_acked_gain
            ));
        }
        if self.extra_acked_rounds == 0 {
            return Err("extra_acked_rounds: must be positive".into());
        }
        if !(0.0..1.0).contains(&self.pacing_margin) {
            return Err(format!(
                "pacing_margin: {} is outside [0, 1)",
                self.pacing_margin
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrState {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl BbrState {
    fn code(self) -> f64 {
        match self {
            BbrState::Startup => 0.0,
            BbrState::Drain => 1.0,
            BbrState::ProbeBw => 2.0,
            BbrState::ProbeRtt => 3.0,
        }
    }
}

/// Exact windowed maximum over the last `n` rounds: one slot per round.
#[derive(Clone, Debug)]
struct ExactMax {
    slots: Vec<(u64, f64)>,
}

impl ExactMax {
    fn new(rounds: u32) -> Self {
        ExactMax {
            slots: vec![(0, 0.0); rounds as usize],
        }
    }

    /// Adds a sample taken in `round` and returns the maximum over the window ending there.
    fn update(&mut self, round: u64, v: f64) -> f64 {
        let n = self.slots.len() as u64;
        let slot = &mut self.slots[(round % n) as usize];
        if slot.0 == round {
            slot.1 = slot.1.max(v);
        } else {
            *slot = (round, v);
        }
        self.slots
            .iter()
            .filter(|(r, _)| *r <= round && r + n > round)
            .map(|&(_, v)| v)
            .fold(0.0, f64::max)
    }
}

pub struct Bbr {
    cfg: BbrConfig,
    mss: u64,
    initial_cwnd: u64,
    min_pipe_cwnd: u64,
    rng: Rng,

    state: BbrState,
    pacing_gain: f64,
    cwnd_gain: f64,

    btlbw: f64,
    btlbw_exact: ExactMax,
    btlbw_minmax: WindowedMax,
    /// ACK aggregation (Linux's `bbr_update_ack_aggregation`): the largest excess of bytes
    /// acknowledged over BtlBw·time in each of two alternating windows of rounds.
    extra_acked: [u64; 2],
    extra_acked_idx: usize,
    extra_acked_win_rounds: u32,
    ack_epoch_stamp: Time,
    ack_epoch_acked: u64,
    rtprop: Option<Time>,
    rtprop_stamp: Time,
    rtprop_expired: bool,

    rounds: RoundCounter,
    round_start: bool,
    delivered: u64,

    filled_pipe: bool,
    full_bw: f64,
    full_bw_count: u32,

    cycle_index: usize,
    cycle_stamp: Time,

    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    /// Samples of packets sent before this delivery count are app-limited (ProbeRTT).
    app_limited_until: u64,

    prior_cwnd: u64,
    packet_conservation: bool,
    in_loss_recovery: bool,
    loss_since_last_ack: bool,
    idle_restart: bool,

    pacing_rate: f64,
    pacing_from_srtt: bool,
    send_quantum: u64,
    target_cwnd: u64,
    cwnd: u64,
}

impl Bbr {
    pub fn new(mss: u32, cfg: BbrConfig, seed: u64) -> Result<Self, String> {
        check_mss(mss)?;
        cfg.validate()?;
        let mss = mss as u64;
        let initial_cwnd = cfg.initial_window as u64 * mss;
        let mut b = Bbr {
            mss,
            initial_cwnd,
            min_pipe_cwnd: cfg.min_pipe_cwnd as u64 * mss,
            rng: rng::stream(seed, RNG_KIND, 0),
            state: BbrState::Startup,
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            btlbw: 0.0,
            btlbw_exact: ExactMax::new(cfg.btlbw_filter_rounds),
            btlbw_minmax: WindowedMax::default(),
            extra_acked: [0; 2],
            extra_acked_idx: 0,
            extra_acked_win_rounds: 0,
            ack_epoch_stamp: 0,
            ack_epoch_acked: 0,
            rtprop: None,
            rtprop_stamp: 0,
            rtprop_expired: false,
            rounds: RoundCounter::default(),
            round_start: false,
            delivered: 0,
            filled_pipe: false,
            full_bw: 0.0,
            full_bw_count: 0,
            cycle_index: 0,
            cycle_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            app_limited_until: 0,
            prior_cwnd: 0,
            packet_conservation: false,
            in_loss_recovery: false,
            loss_since_last_ack: false,
            idle_restart: false,
            pacing_rate: 0.0,
            pacing_from_srtt: false,
            send_quantum: mss,
            target_cwnd: initial_cwnd,
            cwnd: initial_cwnd,
            cfg,
        };
        b.init_pacing_rate(MS);
        b.set_send_quantum();
        Ok(b)
    }

    pub fn state(&self) -> BbrState {
        self.state
    }

    /// Bottleneck bandwidth estimate, bytes/s.
    pub fn btlbw(&self) -> f64 {
        self.btlbw
    }

    pub fn rtprop(&self) -> Option<Time> {
        self.rtprop
    }

    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    pub fn cycle_index(&self) -> usize {
        self.cycle_index
    }

    pub fn filled_pipe(&self) -> bool {
        self.filled_pipe
    }

    pub fn round_count(&self) -> u64 {
        self.rounds.count()
    }

    fn init_pacing_rate(&mut self, srtt: Time) {
        let nominal = self.initial_cwnd as f64 / to_secs(srtt);
        self.pacing_rate = self.pacing_gain * nominal;
    }

    /// BBRInflight(gain): bytes.
    fn inflight(&self, gain: f64) -> u64 {
        match self.rtprop {
            None => self.initial_cwnd,
            Some(rtprop) => {
                let bdp = self.btlbw * to_secs(rtprop);
                self.quantization_budget((gain * bdp) as u64)
            }
        }
    }

    /// Room for the sender's bursts: 3 send quanta; with Linux's budget also rounded up to
    /// an even number of segments and 2 more segments in the 5/4 phase.
    fn quantization_budget(&self, bytes: u64) -> u64 {
        let w = bytes + 3 * self.send_quantum;
        if !self.cfg.linux_quantization {
            return w;
        }
        let segments = w.div_ceil(self.mss);
        let mut w = (segments + segments % 2) * self.mss;
        if self.state == BbrState::ProbeBw && self.cycle_index == 0 {
            w += 2 * self.mss;
        }
        w
    }

    /// Linux's `bbr_update_ack_aggregation`, in bytes.
    fn update_ack_aggregation(&mut self, ev: &AckEvent) {
        if self.cfg.extra_acked_gain == 0.0 || ev.acked_bytes == 0 || ev.delivery_rate.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rounds = (self.extra_acked_win_rounds + 1).min(31);
            if self.extra_acked_win_rounds >= self.cfg.extra_acked_rounds {
                self.extra_acked_win_rounds = 0;
                self.extra_acked_idx ^= 1;
                self.extra_acked[self.extra_acked_idx] = 0;
            }
        }
        let epoch = to_secs(ev.now.saturating_sub(self.ack_epoch_stamp));
        let mut expected = (self.btlbw * epoch) as u64;
        // A fresh epoch when ACKs came no faster than BtlBw, or after 2^20 packets.
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + ev.acked_bytes >= (1 << 20) * self.mss
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = ev.now;
            expected = 0;
        }
        self.ack_epoch_acked += ev.acked_bytes;
        let extra = (self.ack_epoch_acked - expected).min(self.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_idx];
        *slot = (*slot).max(extra);
    }

    /// The window allowance for ACK aggregation (0 before the pipe is full).
    fn aggregation_cwnd(&self) -> u64 {
        if self.cfg.extra_acked_gain == 0.0 || !self.filled_pipe {
            return 0;
        }
        let extra = self.extra_acked[0].max(self.extra_acked[1]) as f64;
        let cap = self.btlbw * to_secs(self.cfg.extra_acked_max.0);
        (self.cfg.extra_acked_gain * extra).min(cap) as u64
    }

    fn save_cwnd(&self) -> u64 {
        if !self.in_loss_recovery && self.state != BbrState::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        }
    }

    fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    fn enter_startup(&mut self) {
        self.state = BbrState::Startup;
        self.pacing_gain = self.cfg.high_gain;
        self.cwnd_gain = self.cfg.high_gain;
    }

    fn enter_drain(&mut self) {
        self.state = BbrState::Drain;
        self.pacing_gain = 1.0 / self.cfg.high_gain;
        self.cwnd_gain = self.cfg.high_gain;
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.state = BbrState::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = self.cfg.cwnd_gain;
        self.cycle_index = GAIN_CYCLE.len() - 1 - self.rng.gen_range(0..=6);
        self.advance_cycle_phase(now);
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % GAIN_CYCLE.len();
        self.pacing_gain = GAIN_CYCLE[self.cycle_index];
    }

    fn is_next_cycle_phase(&self, ev: &AckEvent) -> bool {
        let rtprop = self.rtprop.unwrap_or(0);
        let is_full_length = ev.now.saturating_sub(self.cycle_stamp) > rtprop;
        let prior_inflight = ev.bytes_in_flight + ev.acked_bytes;
        if self.pacing_gain == 1.0 {
            is_full_length
        } else if self.pacing_gain > 1.0 {
            is_full_length
                && (self.loss_since_last_ack || prior_inflight >= self.inflight(self.pacing_gain))
        } else {
            is_full_length || prior_inflight <= self.inflight(1.0)
        }
    }

    fn enter_probe_rtt(&mut self) {
        self.state = BbrState::ProbeRtt;
        self.pacing_gain = 1.0;
        self.cwnd_gain = 1.0;
    }

    fn exit_probe_rtt(&mut self, now: Time) {
        if self.filled_pipe {
            self.enter_probe_bw(now);
        } else {
            self.enter_startup();
        }
    }

    fn update_btlbw(&mut self, ev: &AckEvent, app_limited: bool) {
        self.round_start = self.rounds.on_ack(ev);
        if self.round_start && self.packet_conservation {
            // One round trip of recovery has passed.
            self.packet_conservation = false;
        }
        if let Some(rate) = ev.delivery_rate {
            if rate >= self.btlbw || !app_limited {
                let round = self.rounds.count();
                self.btlbw = match self.cfg.btlbw_filter {
                    BtlBwFilter::Exact => self.btlbw_exact.update(round, rate),
                    BtlBwFilter::Minmax => {
                        let window = self.cfg.btlbw_filter_rounds as u64;
                        self.btlbw_minmax.update(window, round, rate)
                    }
                };
            }
        }
    }

    fn check_full_pipe(&mut self, app_limited: bool) {
        if self.filled_pipe || !self.round_start || app_limited {
            return;
        }
        if self.btlbw >= self.full_bw * self.cfg.full_bw_growth {
            self.full_bw = self.btlbw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        if self.full_bw_count >= self.cfg.full_bw_rounds {
            self.filled_pipe = true;
        }
    }

    fn check_drain(&mut self, ev: &AckEvent) {
        if self.state == BbrState::Startup && self.filled_pipe {
            self.enter_drain();
        }
        if self.state == BbrState::Drain && ev.bytes_in_flight <= self.inflight(1.0) {
            self.enter_probe_bw(ev.now);
        }
    }

    fn update_rtprop(&mut self, ev: &AckEvent) {
        self.rtprop_expired = ev.now
            > self
                .rtprop_stamp
                .saturating_add(self.cfg.rtprop_filter_len.0);
        if let Some(rtt) = ev.rtt {
            if self.rtprop.is_none_or(|r| rtt <= r) || self.rtprop_expired {
                self.rtprop = Some(rtt);
                self.rtprop_stamp = ev.now;
            }
        }
    }

    fn check_probe_rtt(&mut self, ev: &AckEvent) {
        if self.state != BbrState::ProbeRtt && self.rtprop_expired && !self.idle_restart {
            self.enter_probe_rtt();
            self.prior_cwnd = self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.state == BbrState::ProbeRtt {
            self.handle_probe_rtt(ev);
        }
        self.idle_restart = false;
    }

    fn handle_probe_rtt(&mut self, ev: &AckEvent) {
        self.app_limited_until = (self.delivered + ev.bytes_in_flight).max(1);
        match self.probe_rtt_done_stamp {
            None if ev.bytes_in_flight <= self.min_pipe_cwnd => {
                self.probe_rtt_done_stamp = Some(ev.now + self.cfg.probe_rtt_duration.0);
                self.probe_rtt_round_done = false;
                self.rounds.restart_at(self.delivered);
            }
            None => {}
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && ev.now > done {
                    self.rtprop_stamp = ev.now;
                    self.restore_cwnd();
                    self.exit_probe_rtt(ev.now);
                }
            }
        }
    }

    fn set_pacing_rate_with_gain(&mut self, gain: f64) {
        let rate = gain * self.btlbw;
        if self.filled_pipe || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    fn set_send_quantum(&mut self) {
        // 1.2 Mbps and 24 Mbps in bytes/s.
        self.send_quantum = if self.pacing_rate < 150_000.0 {
            self.mss
        } else if self.pacing_rate < 3_000_000.0 {
            2 * self.mss
        } else {
            ((self.pacing_rate * 1e-3) as u64).min(64 * 1024)
        };
    }

    fn set_cwnd(&mut self, ev: &AckEvent) {
        self.target_cwnd = match self.rtprop {
            None => self.initial_cwnd,
            Some(rtprop) => {
                let bdp = (self.cwnd_gain * self.btlbw * to_secs(rtprop)) as u64;
                self.quantization_budget(bdp + self.aggregation_cwnd())
            }
        };
        if self.packet_conservation {
            self.cwnd = self.cwnd.max(ev.bytes_in_flight + ev.acked_bytes);
        } else {
            if self.filled_pipe {
                self.cwnd = (self.cwnd + ev.acked_bytes).min(self.target_cwnd);
            } else if self.cwnd < self.target_cwnd || self.delivered < self.initial_cwnd {
                self.cwnd += ev.acked_bytes;
            }
            self.cwnd = self.cwnd.max(self.min_pipe_cwnd);
        }
        if self.state == BbrState::ProbeRtt {
            self.cwnd = self.cwnd.min(self.min_pipe_cwnd);
        }
    }

    fn exit_loss_recovery(&mut self) {
        self.in_loss_recovery = false;
        self.packet_conservation = false;
        self.restore_cwnd();
    }
}

impl Controller for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.initial_cwnd = bytes.max(self.mss);
        self.cwnd = self.initial_cwnd;
        if !self.pacing_from_srtt {
            self.init_pacing_rate(MS);
        }
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.delivered = ev.delivered;
        if !self.pacing_from_srtt && ev.srtt > 0 && self.btlbw == 0.0 {
            self.init_pacing_rate(ev.srtt);
            self.pacing_from_srtt = true;
        }
        if self.in_loss_recovery && !ev.in_recovery {
            self.exit_loss_recovery();
        }
        let app_limited = ev.app_limited || ev.prior_delivered < self.app_limited_until;

        self.update_btlbw(ev, app_limited);
        self.update_ack_aggregation(ev);
        if self.state == BbrState::ProbeBw && self.is_next_cycle_phase(ev) {
            self.advance_cycle_phase(ev.now);
        }
        self.check_full_pipe(app_limited);
        self.check_drain(ev);
        self.update_rtprop(ev);
        self.check_probe_rtt(ev);

        self.set_pacing_rate_with_gain(self.pacing_gain);
        self.set_send_quantum();
        self.set_cwnd(ev);
        self.loss_since_last_ack = false;
    }

    fn on_signal(&mut self, _ev: &AckEvent, _signal: Signal) {}

    fn on_loss(&mut self, _now: Time, bytes_in_flight: u64) {
        self.loss_since_last_ack = true;
        if self.in_loss_recovery {
            return;
        }
        self.prior_cwnd = self.save_cwnd();
        self.in_loss_recovery = true;
        self.cwnd = bytes_in_flight + self.mss;
        self.packet_conservation = true;
        self.rounds.restart_at(self.delivered);
    }

    fn on_recovery_end(&mut self, _now: Time) {
        if self.in_loss_recovery {
            self.exit_loss_recovery();
        }
    }

    fn on_rto(&mut self, _now: Time, _bytes_in_flight: u64) {
        self.loss_since_last_ack = true;
        self.prior_cwnd = self.save_cwnd();
        self.in_loss_recovery = true;
        self.packet_conservation = false;
        self.cwnd = self.mss;
    }

    fn on_send(&mut self, _now: Time, bytes: u64, bytes_in_flight: u64) {
        if bytes_in_flight <= bytes {
            self.idle_restart = true;
            if self.state == BbrState::ProbeBw {
                self.set_pacing_rate_with_gain(1.0);
            }
        }
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        u64::MAX
    }

    fn pacing_rate(&self) -> Option<f64> {
        Some(self.pacing_rate * (1.0 - self.cfg.pacing_margin))
    }

    fn sample(&self, out: &mut crate::net::Samples) {
        out.push(("bbr_state", self.state.code()));
        out.push(("bbr_btlbw_bytes_per_s", self.btlbw));
        out.push(("bbr_rtprop_s", self.rtprop.map_or(f64::NAN, to_secs)));
        out.push(("bbr_pacing_gain", self.pacing_gain));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::PathSim;

    const MSS: u64 = 1000;
    /// 10 Mb/s.
    const CAP: u64 = 1_250_000;
    const BASE: Time = 40 * MS;

    /// The draft's algorithm: these tests pin it; the Linux additions have their own.
    fn bbr(seed: u64) -> Bbr {
        Bbr::new(MSS as u32, BbrConfig::draft00(), seed).unwrap()
    }

    /// One observation per ACK.
    #[derive(Clone, Copy, Debug)]
    struct Obs {
        now: Time,
        state: BbrState,
        gain: f64,
        cycle_index: usize,
        btlbw: f64,
        rtprop: Option<Time>,
        cwnd: u64,
        inflight: u64,
        round: u64,
        pacing: f64,
    }

    fn run(cc: &mut Bbr, path: &mut PathSim, until: Time, log: &mut Vec<Obs>) {
        path.run(cc, until, |b, ev| {
            log.push(Obs {
                now: ev.now,
                state: b.state(),
                gain: b.pacing_gain(),
                cycle_index: b.cycle_index(),
                btlbw: b.btlbw(),
                rtprop: b.rtprop(),
                cwnd: b.window(),
                inflight: ev.bytes_in_flight,
                round: b.round_count(),
                pacing: b.pacing_rate().unwrap_or(0.0),
            })
        });
    }

    fn within(x: f64, target: f64, rel: f64) -> bool {
        (x - target).abs() <= rel * target
    }

    #[test]
    fn startup_fills_the_pipe_then_drains_and_estimates_the_path() {
        let mut cc = bbr(1);
        let mut path = PathSim::new(MSS, CAP, BASE);
        let mut log = Vec::new();
        run(&mut cc, &mut path, 2 * SEC, &mut log);

        // BtlBw at each round start while in Startup.
        let mut per_round: Vec<(u64, f64)> = Vec::new();
        let mut exit_round = None;
        for (i, o) in log.iter().enumerate() {
            let prev_round = if i == 0 { 0 } else { log[i - 1].round };
            let was_startup = i == 0 || log[i - 1].state == BbrState::Startup;
            if was_startup && o.round != prev_round {
                per_round.push((o.round, o.btlbw));
            }
            if o.state != BbrState::Startup && exit_round.is_none() {
                exit_round = Some(o.round);
            }
        }
        // The draft's full-pipe rule applied to those estimates: the pipe is full at the
        // third consecutive round start without 25 % growth over the last baseline.
        let mut full_bw = 0.0;
        let mut count = 0;
        let mut expect_exit = None;
        for &(round, bw) in &per_round {
            if bw >= 1.25 * full_bw {
                full_bw = bw;
                count = 0;
            } else {
                count += 1;
                if count == 3 {
                    expect_exit = Some(round);
                    break;
                }
            }
        }
        assert_eq!(exit_round, expect_exit, "rounds {per_round:?}");
        // The estimate only grows in Startup, and reaches the capacity before the exit.
        assert!(per_round.windows(2).all(|w| w[1].1 >= w[0].1));
        let n = per_round.len();
        assert!(
            within(per_round[n - 4].1, CAP as f64, 0.05),
            "{per_round:?}"
        );
        let exit = log.iter().find(|o| o.state != BbrState::Startup).unwrap();
        assert_eq!(exit.state, BbrState::Drain);
        assert!(within(exit.btlbw, CAP as f64, 0.05), "BtlBw {}", exit.btlbw);
        assert_eq!(exit.rtprop, Some(BASE));
        // Drain ends once in flight is down to one BDP (plus the send quanta).
        let probe = log.iter().find(|o| o.state == BbrState::ProbeBw).unwrap();
        let bdp = CAP * BASE / SEC;
        assert!(
            probe.inflight <= bdp + 3 * 2 * MSS,
            "in flight {}",
            probe.inflight
        );
        // Steady state: the model matches the path.
        let last = log.last().unwrap();
        assert!(within(last.btlbw, CAP as f64, 0.05));
        assert_eq!(last.rtprop, Some(BASE));
        // cwnd = 2·BDP + 3 quanta (2 MSS each below 24 Mb/s).
        assert_eq!(last.cwnd, 2 * bdp + 6 * MSS);
    }

    #[test]
    fn probe_bw_cycles_the_eight_gains() {
        let mut cc = bbr(7);
        let mut path = PathSim::new(MSS, CAP, BASE);
        let mut log = Vec::new();
        run(&mut cc, &mut path, 4 * SEC, &mut log);
        let probe: Vec<&Obs> = log
            .iter()
            .filter(|o| o.state == BbrState::ProbeBw)
            .collect();
        // Phase changes: (start time, index, gain).
        let mut phases: Vec<(Time, usize, f64)> = Vec::new();
        for o in &probe {
            if phases.last().map(|p| p.1) != Some(o.cycle_index) {
                phases.push((o.now, o.cycle_index, o.gain));
            }
        }
        assert_ne!(phases[0].1, 1, "ProbeBW never starts in the 3/4 phase");
        assert!(phases.len() >= 24, "{} phases", phases.len());
        for w in phases.windows(2) {
            assert_eq!(w[1].1, (w[0].1 + 1) % 8, "phases advance in order");
            assert_eq!(w[1].2, [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0][w[1].1]);
            // Each phase lasts at least RTprop; on this clean path, about RTprop.
            let len = w[1].0 - w[0].0;
            assert!(
                len > BASE && len < BASE + 2 * MS,
                "phase {} lasted {len}",
                w[0].1
            );
        }
        // Over whole cycles the mean pacing gain is 1.
        let first0 = phases.iter().position(|p| p.1 == 0).unwrap();
        let cycle = &phases[first0..first0 + 17];
        let span = (cycle[16].0 - cycle[0].0) as f64;
        let mean: f64 = cycle
            .windows(2)
            .map(|w| w[0].2 * (w[1].0 - w[0].0) as f64)
            .sum::<f64>()
            / span;
        assert!(within(mean, 1.0, 0.01), "mean gain {mean}");
        for o in &probe {
            assert!(within(o.btlbw, CAP as f64, 0.05));
            assert!(within(o.pacing, o.gain * o.btlbw, 1e-9));
        }
    }

    #[test]
    fn probe_bw_start_phase_is_seeded_and_never_three_quarters() {
        let start = |seed| {
            let mut cc = bbr(seed);
            let mut path = PathSim::new(MSS, CAP, BASE);
            let mut first = None;
            path.run(&mut cc, SEC, |b, _| {
                if b.state() == BbrState::ProbeBw && first.is_none() {
                    first = Some(b.cycle_index());
                }
            });
            first.unwrap()
        };
        let mut seen = [false; 8];
        for seed in 0..40 {
            let s = start(seed);
            assert_ne!(s, 1);
            seen[s] = true;
            assert_eq!(start(seed), s, "same seed, same phase");
        }
        assert_eq!(seen.iter().filter(|&&x| x).count(), 7, "{seen:?}");
    }

    #[test]
    fn probe_rtt_after_ten_seconds_without_a_lower_rtt() {
        let mut cc = bbr(3);
        let mut path = PathSim::new(MSS, CAP, BASE);
        let mut log = Vec::new();
        run(&mut cc, &mut path, 3 * SEC, &mut log);
        assert!(log.iter().all(|o| o.state != BbrState::ProbeRtt));
        // The route lengthens: no sample reaches 40 ms again.
        path.base_rtt = 50 * MS;
        let last_low = log
            .iter()
            .rev()
            .find(|o| o.rtprop == Some(BASE))
            .map(|o| o.now)
            .unwrap();
        let mut log = Vec::new();
        run(&mut cc, &mut path, 15 * SEC, &mut log);
        let enter = log
            .iter()
            .position(|o| o.state == BbrState::ProbeRtt)
            .unwrap();
        let t_enter = log[enter].now;
        // The estimate was last refreshed by a 40 ms sample at or before `last_low`.
        assert!(t_enter > 10 * SEC && t_enter <= last_low + 10 * SEC + 50 * MS);
        assert!(log[..enter].iter().all(|o| o.rtprop == Some(BASE)));
        let exit = enter
            + log[enter..]
                .iter()
                .position(|o| o.state != BbrState::ProbeRtt)
                .unwrap();
        for o in &log[enter..exit] {
            assert!(o.cwnd <= 4 * MSS, "cwnd {} in ProbeRTT", o.cwnd);
        }
        // In flight reached 4 packets, then 200 ms and one round trip passed.
        let low = enter
            + log[enter..]
                .iter()
                .position(|o| o.inflight <= 4 * MSS)
                .unwrap();
        let t_exit = log[exit].now;
        assert!(t_exit - log[low].now > 200 * MS);
        assert!(log[exit].round > log[low].round);
        assert_eq!(log[exit].state, BbrState::ProbeBw);
        assert_eq!(log[exit].rtprop, Some(50 * MS));
        assert!(log[exit].cwnd > 4 * MSS, "cwnd restored");
        let last = log.last().unwrap();
        assert!(within(last.btlbw, CAP as f64, 0.05));
        assert_eq!(last.cwnd, 2 * CAP * 50 * MS / SEC + 6 * MSS);
    }

    #[test]
    fn loss_recovery_conserves_then_restores() {
        let mut cc = bbr(1);
        let mut path = PathSim::new(MSS, CAP, BASE);
        let mut d = 0;
        path.run(&mut cc, 2 * SEC, |_, ev| d = ev.delivered);
        let cwnd = cc.window();
        let now = path.now;
        let ev = |inflight: u64, delivered: u64, prior: u64, in_recovery: bool| AckEvent {
            now,
            acked_bytes: MSS,
            rtt: None,
            rtt_last: None,
            srtt: BASE,
            min_rtt: BASE,
            bytes_in_flight: inflight,
            in_recovery,
            in_cwnd_reduction: in_recovery,
            delivery_rate: None,
            app_limited: false,
            delivered,
            prior_delivered: prior,
            cwnd_unused: false,
            ece: false,
        };
        cc.on_loss(now, 40 * MSS);
        assert_eq!(cc.window(), 41 * MSS);
        // Packet conservation for the first round trip: no more out than delivered.
        let before = d - 50 * MSS; // sent before recovery began
        cc.on_ack(&ev(30 * MSS, d + MSS, before, true));
        assert_eq!(cc.window(), 41 * MSS);
        cc.on_ack(&ev(45 * MSS, d + 2 * MSS, before, true));
        assert_eq!(cc.window(), 46 * MSS);
        // A packet sent during recovery is acknowledged: one round trip has passed, and the
        // window grows by what is delivered again.
        cc.on_ack(&ev(45 * MSS, d + 3 * MSS, d, true));
        assert_eq!(cc.window(), 47 * MSS);
        cc.on_recovery_end(now);
        assert_eq!(cc.window(), cwnd);

        cc.on_rto(now, 50 * MSS);
        assert_eq!(cc.window(), MSS);
        // Recovery from a timeout ends with the first ACK outside recovery.
        cc.on_ack(&ev(MSS, d + 4 * MSS, d + 3 * MSS, true));
        assert!(cc.window() < cwnd);
        cc.on_ack(&ev(MSS, d + 5 * MSS, d + 4 * MSS, false));
        assert_eq!(cc.window(), cwnd);
    }

    #[test]
    fn pacing_margin_and_parameters() {
        let cc = Bbr::new(1000, BbrConfig::default(), 0).unwrap();
        // Initial rate: high gain × 10 segments per millisecond, less Linux's 1 %.
        let expect = 2.0 / std::f64::consts::LN_2 * 10_000.0 / 1e-3 * 0.99;
        assert!(within(cc.pacing_rate().unwrap(), expect, 1e-12));
        let e = Bbr::new(
            1000,
            BbrConfig {
                cwnd_gain: 0.5,
                ..Default::default()
            },
            0,
        )
        .err()
        .unwrap();
        assert!(e.starts_with("cwnd_gain"), "{e}");
        let c: BbrConfig =
            serde_json::from_value(serde_json::json!({"probe_rtt_duration": "100ms"})).unwrap();
        assert_eq!(c.probe_rtt_duration.0, 100 * MS);
    }

    /// Linux's ACK-aggregation allowance by hand: BtlBw 1 MB/s, ACKs in a burst.
    #[test]
    fn ack_aggregation_adds_the_excess_acknowledged() {
        let mut b = Bbr::new(MSS as u32, BbrConfig::default(), 1).unwrap();
        b.btlbw = 1e6;
        b.cwnd = 100_000;
        let ack = |t: Time, bytes: u64| AckEvent {
            now: t,
            acked_bytes: bytes,
            delivery_rate: Some(1e6),
            ..Default::default()
        };
        b.update_ack_aggregation(&ack(0, 1000));
        assert_eq!(b.extra_acked, [1000, 0]);
        // 1 ms later 1000 bytes were expected and 1000 came: a new epoch starts here.
        b.update_ack_aggregation(&ack(MS, 5000));
        assert_eq!(b.extra_acked[0], 5000);
        // 5000 more 1 ms into the epoch: 10000 acknowledged, 1000 expected.
        b.update_ack_aggregation(&ack(2 * MS, 5000));
        assert_eq!(b.extra_acked[0], 9000);
        // ACKs slower than BtlBw start a new epoch and keep the maximum.
        b.update_ack_aggregation(&ack(20 * MS, 1000));
        assert_eq!(b.extra_acked[0], 9000);
        // Only once the pipe is full, capped at BtlBw · 100 ms.
        assert_eq!(b.aggregation_cwnd(), 0);
        b.filled_pipe = true;
        assert_eq!(b.aggregation_cwnd(), 9000);
        b.extra_acked[1] = 500_000;
        assert_eq!(b.aggregation_cwnd(), 100_000);
        // Every 5 rounds the other slot is cleared and becomes the current one.
        b.extra_acked[1] = 0;
        for _ in 0..5 {
            b.round_start = true;
            b.update_ack_aggregation(&ack(21 * MS, 1000));
        }
        assert_eq!(b.extra_acked_idx, 1);
        assert_eq!(b.extra_acked[0], 9000);
        // draft-00: none.
        let mut d = Bbr::new(MSS as u32, BbrConfig::draft00(), 1).unwrap();
        d.filled_pipe = true;
        d.btlbw = 1e6;
        d.update_ack_aggregation(&ack(0, 1000));
        assert_eq!(d.aggregation_cwnd(), 0);
    }

    /// Linux's quantization budget: 3 send quanta, rounded up to even segments, 2 more in
    /// the 5/4 phase; draft-00: 3 send quanta only.
    #[test]
    fn quantization_budget_as_linux() {
        let mut b = Bbr::new(MSS as u32, BbrConfig::default(), 1).unwrap();
        b.send_quantum = MSS;
        assert_eq!(b.quantization_budget(10_500), 14 * MSS);
        assert_eq!(b.quantization_budget(10_000), 14 * MSS);
        assert_eq!(b.quantization_budget(11_000), 14 * MSS);
        b.state = BbrState::ProbeBw;
        b.cycle_index = 0;
        assert_eq!(b.quantization_budget(11_000), 16 * MSS);
        b.cycle_index = 3;
        assert_eq!(b.quantization_budget(11_000), 14 * MSS);
        let mut d = Bbr::new(MSS as u32, BbrConfig::draft00(), 1).unwrap();
        d.send_quantum = MSS;
        assert_eq!(d.quantization_budget(10_500), 13_500);
    }
}
