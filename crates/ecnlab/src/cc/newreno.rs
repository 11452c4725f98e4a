//! NewReno: slow start and congestion avoidance of RFC 5681 with byte counting (RFC 3465),
//! the window side of fast recovery (RFC 6582), the classic ECN response (RFC 3168 §6.1.2) and
//! the retransmission-timeout response of RFC 5681 §3.1.
//!
//! Readings, each a named parameter of [`NewRenoConfig`]:
//! - `initial_window`: segments; unset means RFC 5681 §3.1's IW (4, 3 or 2 segments for
//!   SMSS ≤ 1095, ≤ 2190, larger). ns-3 and Linux use 10 (RFC 6928).
//! - `abc_limit`: slow start adds min(bytes acked, L·SMSS) per ACK, L = 2 (RFC 3465 §2.2).
//!   `abc_limit_after_rto` = 1 applies during the slow start that follows a timeout, where one
//!   ACK may cover segments the receiver already held (RFC 3465 §2.3).
//! - `ca_increase`: `byte_counting` (default; RFC 5681 §3.1's recommended form: +1 SMSS each
//!   time a full cwnd of bytes has been acknowledged, so delayed ACKs do not slow growth) or
//!   `per_ack` (RFC 5681 eq. 3: +max(1, SMSS·SMSS/cwnd) bytes per ACK).
//! - Slow start stops at ssthresh; what the crossing ACK earned beyond ssthresh counts toward
//!   congestion avoidance.
//! - `reduce_from`: the reduced ssthresh is max(X/2, 2·SMSS) with X = FlightSize as the
//!   connection reports it (RFC 5681 eq. 4, default) or X = cwnd (Linux, RFC 3168's "halve
//!   the congestion window").
//!
//! Fast recovery: on entry ssthresh is reduced and cwnd = ssthresh; on exit cwnd = ssthresh
//! (RFC 6582 §3.2 step 6, first option). The temporary inflation of RFC 6582 (3·SMSS plus one
//! SMSS per further duplicate ACK, deflation on partial ACKs) needs the duplicate-ACK count
//! and belongs to the connection's recovery code; the window here does not grow during fast
//! recovery.
//!
//! ECN (RFC 3168 §6.1.2): the same reduction as a loss, without retransmission, ignored during
//! fast recovery and in the connection's CWR round (the window was already reduced for this
//! window of data); the codec limits signals to one per window. The connection holds the
//! window through the CWR round and repairs a loss found in it without calling `on_loss`
//! (RFC 3168 §6.1.2, Linux's CWR state; see [`Controller::cwr_state`]); the round starts
//! with the ACK that carries the signal, so that ACK does not grow the window either.
//! cwnd does not go below 2·SMSS on ECN (the loss floor); RFC 3168's further backoff below one
//! segment is not modelled. Other signal kinds are not NewReno's and are ignored.
//!
//! Timeout (`rto_rule`): ssthresh = max(X/2, 2·SMSS), cwnd = the loss window (1 SMSS).
//! - `rfc5681` (default): a timeout that follows another timeout with no new data acknowledged
//!   in between keeps ssthresh (RFC 5681 §3.1: the segment was already retransmitted by the
//!   timer; Linux's tcp_enter_loss likewise).
//! - `ns2`: ns-2.35's TcpAgent::timeout. A timeout while the last reduction was an ECN
//!   response (no fast retransmit since) keeps ssthresh ("in recovery from a recent ECN, don't
//!   cut down ssthresh_"); a loss found in the connection's CWR round ends the ECN response as
//!   ns-2's fast retransmit there would (`on_loss_in_cwr`: ns-2 has no such round). Every
//!   timeout then becomes the last action, so any later timeout halves, a repeated one too (its
//!   window is 1 segment: ssthresh 2·SMSS).

use super::{AckEvent, Controller, Signal};
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// How congestion avoidance grows the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaIncrease {
    /// +1 SMSS per cwnd of acknowledged bytes (RFC 5681 §3.1, RFC 3465 §2.1).
    #[default]
    ByteCounting,
    /// +SMSS·SMSS/cwnd per ACK (RFC 5681 eq. 3).
    PerAck,
}

/// How a retransmission timeout sets ssthresh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RtoRule {
    /// RFC 5681 §3.1: halve, except at a timeout that repeats one without progress.
    #[default]
    Rfc5681,
    /// ns-2.35 TcpAgent::timeout: keep after an ECN response, else halve (repeats too).
    Ns2,
}

impl RtoRule {
    /// Whether a timeout keeps ssthresh: after a timeout without progress since (RFC 5681),
    /// or while the last reduction is an ECN response (ns-2, whose `last_cwnd_action_` the
    /// rule reads only for that: `ecn_cut_last`).
    pub(crate) fn keeps_ssthresh(self, rto_without_progress: bool, ecn_cut_last: bool) -> bool {
        match self {
            RtoRule::Rfc5681 => rto_without_progress,
            RtoRule::Ns2 => ecn_cut_last,
        }
    }
}

/// What a multiplicative reduction halves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReduceFrom {
    /// The bytes in flight when the congestion was detected (RFC 5681 eq. 4).
    #[default]
    FlightSize,
    /// The congestion window.
    Cwnd,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NewRenoConfig {
    /// Initial window in segments; unset = RFC 5681 §3.1.
    pub initial_window: Option<u32>,
    /// Initial ssthresh in bytes; unset = unbounded.
    pub initial_ssthresh: Option<u64>,
    /// RFC 3465 L, in segments.
    pub abc_limit: u32,
    /// RFC 3465 L in the slow start that follows a timeout, in segments.
    pub abc_limit_after_rto: u32,
    pub ca_increase: CaIncrease,
    pub reduce_from: ReduceFrom,
    pub rto_rule: RtoRule,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        NewRenoConfig {
            initial_window: None,
            initial_ssthresh: None,
            abc_limit: 2,
            abc_limit_after_rto: 1,
            ca_increase: CaIncrease::ByteCounting,
            reduce_from: ReduceFrom::FlightSize,
            rto_rule: RtoRule::Rfc5681,
        }
    }
}

impl NewRenoConfig {
    /// Checks the parameters; errors name the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.initial_window == Some(0) {
            return Err("initial_window: must be at least 1 segment".into());
        }
        if self.initial_ssthresh == Some(0) {
            return Err("initial_ssthresh: must be positive".into());
        }
        if self.abc_limit == 0 {
            return Err("abc_limit: must be at least 1 segment".into());
        }
        if self.abc_limit_after_rto == 0 {
            return Err("abc_limit_after_rto: must be at least 1 segment".into());
        }
        Ok(())
    }
}

/// RFC 5681 §3.1 initial window for a given SMSS, in bytes.
pub fn rfc5681_initial_window(mss: u32) -> u64 {
    let mss = mss as u64;
    if mss > 2190 {
        2 * mss
    } else if mss > 1095 {
        3 * mss
    } else {
        4 * mss
    }
}

pub(crate) fn check_mss(mss: u32) -> Result<(), String> {
    if mss == 0 {
        Err("mss: must be positive".into())
    } else {
        Ok(())
    }
}

/// The Reno window: slow start with byte counting, congestion avoidance, and the reductions.
/// Shared by the controllers that grow like Reno (NewReno, DCTCP).
#[derive(Clone, Debug)]
pub(crate) struct RenoWindow {
    pub mss: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Bytes acknowledged since the last +1 SMSS in congestion avoidance.
    ca_acked: u64,
    abc_limit: u64,
    abc_limit_after_rto: u64,
    ca_increase: CaIncrease,
    /// The current slow start follows a timeout.
    after_rto: bool,
    /// (cwnd, ssthresh) before the last timeout, for its undo.
    before_timeout: Option<(u64, u64)>,
}

impl RenoWindow {
    pub fn new(mss: u32, cfg: &NewRenoConfig) -> Self {
        let mss = mss as u64;
        RenoWindow {
            mss,
            cwnd: match cfg.initial_window {
                Some(n) => n as u64 * mss,
                None => rfc5681_initial_window(mss as u32),
            },
            ssthresh: cfg.initial_ssthresh.unwrap_or(u64::MAX),
            ca_acked: 0,
            abc_limit: cfg.abc_limit as u64 * mss,
            abc_limit_after_rto: cfg.abc_limit_after_rto as u64 * mss,
            ca_increase: cfg.ca_increase,
            after_rto: false,
            before_timeout: None,
        }
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Growth for `acked` newly acknowledged bytes.
    pub fn grow(&mut self, acked: u64) {
        if acked == 0 {
            return;
        }
        let mut acked = acked;
        if self.in_slow_start() {
            let limit = if self.after_rto {
                self.abc_limit_after_rto
            } else {
                self.abc_limit
            };
            let inc = acked.min(limit);
            let room = self.ssthresh - self.cwnd;
            if inc < room {
                self.cwnd += inc;
                return;
            }
            self.cwnd = self.ssthresh;
            self.after_rto = false;
            // What the ACK earned beyond ssthresh (within L) counts toward CA.
            acked = inc - room;
            if acked == 0 {
                return;
            }
        }
        self.congestion_avoidance(acked);
    }

    fn congestion_avoidance(&mut self, acked: u64) {
        match self.ca_increase {
            CaIncrease::ByteCounting => {
                self.ca_acked += acked;
                if self.ca_acked >= self.cwnd {
                    self.ca_acked -= self.cwnd;
                    self.cwnd += self.mss;
                    // One ACK never earns more than one segment.
                    self.ca_acked = self.ca_acked.min(self.cwnd - 1);
                }
            }
            CaIncrease::PerAck => {
                self.cwnd += (self.mss * self.mss / self.cwnd.max(1)).max(1);
            }
        }
    }

    /// RFC 5681 eq. 4 applied to `base` (FlightSize or cwnd).
    pub fn halved(&self, base: u64) -> u64 {
        (base / 2).max(2 * self.mss)
    }

    /// Multiplicative decrease to `ssthresh` (cwnd follows). The byte count toward the next
    /// congestion-avoidance segment survives (capped below the new window): a controller that
    /// reduces every round trip (DCTCP) must still gain one segment per round trip.
    pub fn reduce_to(&mut self, ssthresh: u64) {
        self.ssthresh = ssthresh.max(2 * self.mss);
        self.cwnd = self.ssthresh;
        self.ca_acked = self.ca_acked.min(self.cwnd - 1);
    }

    /// Timeout: the loss window; `ssthresh` unchanged when `None` (a repeated timeout, whose
    /// undo restores what came before the first).
    pub fn timeout(&mut self, ssthresh: Option<u64>) {
        if let Some(s) = ssthresh {
            self.before_timeout = Some((self.cwnd, self.ssthresh));
            self.ssthresh = s.max(2 * self.mss);
        }
        self.cwnd = self.mss;
        self.ca_acked = 0;
        self.after_rto = true;
    }

    /// The last timeout was spurious: cwnd and ssthresh back to at least their values
    /// before it (Linux's undo).
    pub fn undo_timeout(&mut self) {
        if let Some((cwnd, ssthresh)) = self.before_timeout.take() {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = self.ssthresh.max(ssthresh);
            self.ca_acked = 0;
            self.after_rto = false;
        }
    }

    pub fn set_cwnd(&mut self, bytes: u64) {
        self.cwnd = bytes.max(self.mss);
        self.ca_acked = 0;
    }
}

/// The reduction base chosen by `reduce_from`.
pub(crate) fn reduction_base(from: ReduceFrom, bytes_in_flight: u64, cwnd: u64) -> u64 {
    match from {
        ReduceFrom::FlightSize => bytes_in_flight,
        ReduceFrom::Cwnd => cwnd,
    }
}

pub struct NewReno {
    w: RenoWindow,
    reduce_from: ReduceFrom,
    rto_rule: RtoRule,
    in_fast_recovery: bool,
    /// The last event was a timeout and no new data has been acknowledged since.
    rto_without_progress: bool,
    /// The last reduction was an ECN response (for `rto_rule = ns2`).
    ecn_cut_last: bool,
}

impl NewReno {
    pub fn new(mss: u32, cfg: NewRenoConfig) -> Result<Self, String> {
        check_mss(mss)?;
        cfg.validate()?;
        Ok(NewReno {
            w: RenoWindow::new(mss, &cfg),
            reduce_from: cfg.reduce_from,
            rto_rule: cfg.rto_rule,
            in_fast_recovery: false,
            rto_without_progress: false,
            ecn_cut_last: false,
        })
    }

    fn reduce(&mut self, bytes_in_flight: u64) {
        let base = reduction_base(self.reduce_from, bytes_in_flight, self.w.cwnd);
        let s = self.w.halved(base);
        self.w.reduce_to(s);
    }
}

impl Controller for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.w.set_cwnd(bytes);
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if ev.acked_bytes > 0 {
            self.rto_without_progress = false;
        }
        if self.in_fast_recovery || ev.in_cwnd_reduction || ev.cwnd_unused {
            return;
        }
        self.w.grow(ev.acked_bytes);
    }

    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        if signal != Signal::Ecn || self.in_fast_recovery || ev.in_cwnd_reduction {
            return;
        }
        self.reduce(ev.bytes_in_flight);
        self.ecn_cut_last = true;
    }

    fn on_loss(&mut self, _now: Time, bytes_in_flight: u64) {
        if self.in_fast_recovery {
            return;
        }
        self.in_fast_recovery = true;
        self.reduce(bytes_in_flight);
        self.ecn_cut_last = false;
    }

    fn on_recovery_end(&mut self, _now: Time) {
        if self.in_fast_recovery {
            self.in_fast_recovery = false;
            self.w.cwnd = self.w.ssthresh;
        }
    }

    fn on_loss_in_cwr(&mut self, _now: Time) {
        // ns-2 has no CWR round: its fast retransmit here ends the ECN response for the
        // timeout rule. Without this, a loss always found in the round leaves every later
        // timeout keeping the ECN response's ssthresh.
        self.ecn_cut_last = false;
    }

    fn on_rto(&mut self, _now: Time, bytes_in_flight: u64) {
        self.in_fast_recovery = false;
        let keep = self
            .rto_rule
            .keeps_ssthresh(self.rto_without_progress, self.ecn_cut_last);
        // ns-2 sets the last action to the timeout after each of its branches: only the first
        // timeout after an ECN response keeps its ssthresh.
        self.ecn_cut_last = false;
        let ssthresh = if keep {
            None
        } else {
            let base = reduction_base(self.reduce_from, bytes_in_flight, self.w.cwnd);
            Some(self.w.halved(base))
        };
        self.w.timeout(ssthresh);
        self.rto_without_progress = true;
    }

    fn window(&self) -> u64 {
        self.w.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }

    fn on_spurious_timeout(&mut self, _now: Time) {
        self.w.undo_timeout();
        self.rto_without_progress = false;
    }

    fn cwr_state(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    const MSS: u64 = 1000;

    /// A Reno of `segments` segments as ns-2 runs it: halving the window, ns-2's timeout rule.
    fn ns2_reno(segments: u32) -> NewReno {
        reno(NewRenoConfig {
            initial_window: Some(segments),
            reduce_from: ReduceFrom::Cwnd,
            rto_rule: RtoRule::Ns2,
            ..Default::default()
        })
    }

    fn reno(cfg: NewRenoConfig) -> NewReno {
        NewReno::new(MSS as u32, cfg).unwrap()
    }

    fn ack(acked: u64, flight: u64) -> AckEvent {
        AckEvent {
            acked_bytes: acked,
            bytes_in_flight: flight,
            ..Default::default()
        }
    }

    /// One round trip: every segment of the current window is acknowledged, one ACK per
    /// `per_ack` segments.
    fn round(cc: &mut NewReno, per_ack: u64) {
        let segs = cc.window() / MSS;
        let mut left = segs;
        while left > 0 {
            let n = left.min(per_ack);
            cc.on_ack(&ack(n * MSS, cc.window()));
            left -= n;
        }
    }

    #[test]
    fn initial_window_follows_rfc5681() {
        assert_eq!(rfc5681_initial_window(1000), 4000);
        assert_eq!(rfc5681_initial_window(1460), 4380);
        assert_eq!(rfc5681_initial_window(3000), 6000);
        assert_eq!(reno(NewRenoConfig::default()).window(), 4 * MSS);
    }

    #[test]
    fn slow_start_doubles_per_rtt() {
        let mut cc = reno(NewRenoConfig {
            initial_window: Some(10),
            ..Default::default()
        });
        let mut expect = 10 * MSS;
        for _ in 0..6 {
            round(&mut cc, 1);
            expect *= 2;
            assert_eq!(cc.window(), expect);
        }
    }

    #[test]
    fn slow_start_with_delayed_acks_doubles_thanks_to_l2() {
        // An ACK for 2 segments earns 2 segments (L = 2): still doubling per RTT.
        let mut cc = reno(NewRenoConfig {
            initial_window: Some(10),
            ..Default::default()
        });
        round(&mut cc, 2);
        assert_eq!(cc.window(), 20 * MSS);
        // A stretch ACK of 4 segments only earns L = 2 segments.
        cc.on_ack(&ack(4 * MSS, 0));
        assert_eq!(cc.window(), 22 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_rtt() {
        for per_ack in [1, 2] {
            let mut cc = reno(NewRenoConfig {
                initial_window: Some(20),
                initial_ssthresh: Some(20 * MSS),
                ..Default::default()
            });
            for i in 1..=10 {
                round(&mut cc, per_ack);
                assert_eq!(cc.window(), (20 + i) * MSS, "delayed ack {per_ack}");
            }
        }
        // RFC 5681 eq. 3: about one MSS per RTT with one ACK per segment.
        let mut cc = reno(NewRenoConfig {
            initial_window: Some(20),
            initial_ssthresh: Some(20 * MSS),
            ca_increase: CaIncrease::PerAck,
            ..Default::default()
        });
        for _ in 0..10 {
            let before = cc.window();
            round(&mut cc, 1);
            let gained = cc.window() - before;
            // Integer segments per round and the per-ACK cwnd growth keep it a little under.
            assert!((900..=1000).contains(&gained), "gained {gained}");
        }
    }

    #[test]
    fn slow_start_hands_over_to_ca_at_ssthresh() {
        let mut cc = reno(NewRenoConfig {
            initial_window: Some(10),
            initial_ssthresh: Some(15 * MSS),
            ..Default::default()
        });
        round(&mut cc, 1);
        // 5 segments of slow start reach ssthresh; the other 5 count toward CA.
        assert_eq!(cc.window(), 15 * MSS);
        assert_eq!(cc.ssthresh(), 15 * MSS);
    }

    #[test]
    fn loss_halves_flight_and_recovery_exit_sets_ssthresh() {
        let mut cc = reno(NewRenoConfig {
            initial_window: Some(40),
            ..Default::default()
        });
        cc.on_loss(0, 40 * MSS);
        assert_eq!(cc.ssthresh(), 20 * MSS);
        assert_eq!(cc.window(), 20 * MSS);
        // No growth and no second reduction inside recovery.
        cc.on_ack(&ack(5 * MSS, 30 * MSS));
        cc.on_loss(0, 30 * MSS);
        assert_eq!(cc.window(), 20 * MSS);
        cc.on_recovery_end(0);
        assert_eq!(cc.window(), 20 * MSS);
        // Congestion avoidance afterwards.
        round(&mut cc, 1);
        assert_eq!(cc.window(), 21 * MSS);
        // Floor: 2 SMSS.
        cc.on_loss(0, 3 * MSS);
        assert_eq!(cc.ssthresh(), 2 * MSS);
    }

    #[test]
    fn ecn_halves_like_loss_and_skips_growth_on_that_ack() {
        let mut cc = reno(NewRenoConfig {
            initial_window: Some(40),
            ..Default::default()
        });
        let ev = ack(MSS, 40 * MSS);
        cc.on_signal(&ev, Signal::Ecn);
        // The connection starts its CWR round with this ACK.
        cc.on_ack(&AckEvent {
            in_cwnd_reduction: true,
            ..ev
        });
        assert_eq!(cc.window(), 20 * MSS);
        assert_eq!(cc.ssthresh(), 20 * MSS);
        // Past the round: growth resumes (CA now).
        round(&mut cc, 1);
        assert_eq!(cc.window(), 21 * MSS);
        // Multilevel signals are not NewReno's.
        cc.on_signal(&ev, Signal::Level(2));
        assert_eq!(cc.window(), 21 * MSS);
        // Cwnd-based variant.
        let mut cc = reno(NewRenoConfig {
            initial_window: Some(40),
            reduce_from: ReduceFrom::Cwnd,
            ..Default::default()
        });
        cc.on_signal(&ack(MSS, 10 * MSS), Signal::Ecn);
        assert_eq!(cc.window(), 20 * MSS);
    }

    #[test]
    fn rto_sets_loss_window_and_keeps_ssthresh_on_backoff() {
        let mut cc = reno(NewRenoConfig {
            initial_window: Some(40),
            ..Default::default()
        });
        cc.on_rto(200 * MS, 40 * MSS);
        assert_eq!(cc.window(), MSS);
        assert_eq!(cc.ssthresh(), 20 * MSS);
        // Backed-off timeout of the same segment: ssthresh held.
        cc.on_rto(600 * MS, MSS);
        assert_eq!(cc.ssthresh(), 20 * MSS);
        assert_eq!(cc.window(), MSS);
        // Slow start after the timeout: L = 1 SMSS per ACK.
        cc.on_ack(&ack(3 * MSS, 0));
        assert_eq!(cc.window(), 2 * MSS);
        // Recovery end after a timeout does not jump to ssthresh.
        cc.on_recovery_end(0);
        assert_eq!(cc.window(), 2 * MSS);
        // With progress in between, a new timeout recomputes ssthresh.
        cc.on_rto(0, 2 * MSS);
        assert_eq!(cc.ssthresh(), 2 * MSS);
    }

    /// ns-2.35 TcpAgent::timeout by hand: a 40-segment window cut by ECN to 20, then three
    /// timeouts: the first keeps ssthresh 20 (the ECN response's), the repeats halve the
    /// 1-segment window to the 2-segment floor (the last action is the timeout); after a fast
    /// retransmit (halved 20 → 10) timeouts halve too (RFC 5681 would keep 5 on the repeat).
    #[test]
    fn ns2_rto_rule_keeps_ssthresh_after_an_ecn_cut_and_halves_repeats() {
        let mut cc = ns2_reno(40);
        cc.on_signal(&ack(MSS, 40 * MSS), Signal::Ecn);
        assert_eq!((cc.window(), cc.ssthresh()), (20 * MSS, 20 * MSS));
        for (t, ssthresh) in [(1, 20), (2, 2), (3, 2)] {
            cc.on_rto(t * 200 * MS, MSS);
            assert_eq!((cc.window(), cc.ssthresh()), (MSS, ssthresh * MSS));
        }
        // Back to 20 segments (however it got there), then a fast retransmit.
        cc.set_initial_window(20 * MSS);
        assert_eq!(cc.window(), 20 * MSS);
        cc.on_loss(0, 20 * MSS);
        cc.on_recovery_end(0);
        assert_eq!((cc.window(), cc.ssthresh()), (10 * MSS, 10 * MSS));
        cc.on_rto(0, 10 * MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (MSS, 5 * MSS));
        cc.on_rto(0, MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (MSS, 2 * MSS));
        // A loss found in the CWR round after an ECN response ends it for the rule, as ns-2's
        // fast retransmit would: the next timeout halves.
        let mut cwr = ns2_reno(40);
        cwr.on_signal(&ack(MSS, 40 * MSS), Signal::Ecn);
        cwr.on_loss_in_cwr(0);
        cwr.on_rto(0, 20 * MSS);
        assert_eq!((cwr.window(), cwr.ssthresh()), (MSS, 10 * MSS));
        // Without it the ECN response would stand: ssthresh 20.
        let mut ecn = ns2_reno(40);
        ecn.on_signal(&ack(MSS, 40 * MSS), Signal::Ecn);
        ecn.on_rto(0, 20 * MSS);
        assert_eq!(ecn.ssthresh(), 20 * MSS);
        // RFC 5681 on the same events: the ECN response is halved again at the timeout, and
        // the repeat keeps its ssthresh.
        let mut rfc = reno(NewRenoConfig {
            initial_window: Some(40),
            reduce_from: ReduceFrom::Cwnd,
            ..Default::default()
        });
        rfc.on_signal(&ack(MSS, 40 * MSS), Signal::Ecn);
        rfc.on_rto(0, 20 * MSS);
        assert_eq!(rfc.ssthresh(), 10 * MSS);
        rfc.on_rto(0, MSS);
        assert_eq!(rfc.ssthresh(), 10 * MSS);
    }

    #[test]
    fn bad_parameters_are_named() {
        assert!(NewReno::new(0, NewRenoConfig::default())
            .err()
            .unwrap()
            .contains("mss"));
        let e = NewReno::new(
            1000,
            NewRenoConfig {
                abc_limit: 0,
                ..Default::default()
            },
        )
        .err()
        .unwrap();
        assert!(e.contains("abc_limit"));
        let e = toml::from_str::<NewRenoConfig>("bogus = 1").unwrap_err();
        assert!(e.to_string().contains("bogus"));
        let c: NewRenoConfig = toml::from_str("ca_increase = \"per_ack\"").unwrap();
        assert_eq!(c.ca_increase, CaIncrease::PerAck);
    }
}
