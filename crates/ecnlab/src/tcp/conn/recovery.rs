//! Loss recovery of the sending half: the recovery state ([`LossRecovery`], Linux's
//! `icsk_ca_state` with `high_seq`, `undo_marker`, `prr_*`, `rack` and the F-RTO flags) and
//! everything that changes it — entering and leaving fast recovery on an ACK
//! (`tcp_fastretrans_alert`, `tcp_enter_recovery`), the CWR round after a signal
//! (`tcp_enter_cwr`, `tcp_end_cwnd_reduction`), RACK's loss detection and its reordering
//! timer (`tcp_rack_mark_lost`, `tcp_rack_reo_timeout`), the retransmission timeout
//! (`tcp_retransmit_timer`, `tcp_enter_loss`) and F-RTO after it (`tcp_process_loss`), and
//! the window during a reduction (`tcp_cwnd_reduction`, PRR). The tail loss probe is
//! [`super::tlp`]'s; the segments it marks are the scoreboard's ([`crate::tcp::scoreboard`]).
//!
//! Readings:
//! - Fast retransmit on the DupThresh-th duplicate ACK (or RFC 6675 IsLost(HighACK+1)) only if
//!   the cumulative ACK has reached `recover` (RFC 6582 §3.2 step 2; RFC 6675 §5), where
//!   `recover` is one past the highest byte sent at the last fast retransmit or timeout.
//! - NewReno (RFC 6582, no SACK): window inflated by DupThresh·SMSS on entry and one SMSS per
//!   further duplicate; a partial ACK retransmits the next hole, deflates by the newly
//!   acknowledged bytes and adds back one SMSS if at least one SMSS was acknowledged; the
//!   timer is restarted on the first partial ACK only ("Impatient", §4, ns-2) or on every one
//!   ("Slow-but-Steady", ns-3), as `partial_ack_timer` says. The controller's
//!   own window follows its `on_loss` / `on_recovery_end`; the inflation is the connection's.
//! - SACK (RFC 6675): scoreboard, pipe, NextSeg rules 1–3 (rule 4, the optional rescue
//!   retransmission, is not implemented: a lost tail is repaired by the timeout).
//! - RACK (RFC 8985 §6, Linux's default; `rack`, on by default, see [`crate::tcp::rack`]):
//!   with SACK, in every state, a segment or a retransmission sent before one since delivered
//!   is lost once the reordering window has passed (0 in recovery and once DupThresh segments
//!   are SACKed, else min(min_rtt/4, SRTT), with a timer for what still waits); a loss it
//!   finds outside recovery starts fast recovery (Linux's `tcp_time_to_recover`, and
//!   `tcp_rack_reo_timeout` when the timer finds it), and a lost retransmission goes again
//!   before NextSeg's rules — without it only the timer repairs a retransmission that a
//!   queue dropped.
//! - Timeout (RFC 6298 §5, RFC 5681 §3.1): back off, `on_rto` (window 1 SMSS), retransmit
//!   from the first unacknowledged segment — go-back-N without SACK; with SACK every
//!   un-SACKed segment is marked lost and NextSeg repairs them under pipe (RFC 6675 §5.1
//!   keeps SACK information, there is no reneging here). No new fast retransmit until the
//!   data outstanding at the timeout is acknowledged (RFC 6582 step 1 after a timeout).
//!   The bytes handed to `on_rto` (RFC 5681 eq. 4's FlightSize, of which ssthresh may be
//!   "no more than" half) exclude what the receiver has SACKed: that data has left the
//!   network. Counting it would let a timeout *raise* ssthresh: when a retransmission is lost
//!   during SACK recovery, the sender keeps sending new data under pipe until the timer
//!   fires, and FlightSize then spans several windows (five in the `red100` dumbbell).
//! - F-RTO (RFC 5682 §3, SACK form, as Linux's `tcp_process_loss`; `frto`, on by default,
//!   with SACK only, not for a timeout during fast recovery): the timeout resends the first
//!   segment; if the next ACK advances SND.UNA below the timeout's high mark, new data goes
//!   out instead of the presumed-lost segments and the high mark moves to it; an ACK that
//!   newly acknowledges (cumulatively or by SACK) a segment sent before the mark and never
//!   retransmitted makes the timeout spurious: the lost marks are cleared, recovery ends and
//!   the controller undoes the timeout (`on_spurious_timeout`). SACK or duplicate ACKs after
//!   the new data say the loss was real, and recovery goes on as above.
//! - One reduction per window (RFC 3168 §6.1.2) is enforced for marks after marks and for
//!   marks after losses (the codecs see `TcpInfo::recovery_point`). For controllers with
//!   `Controller::cwr_state` (the baselines) the connection also keeps Linux's CWR state: a
//!   signal that lowered the window starts a round that lasts until an ACK goes beyond the
//!   data then sent (strictly, as Linux holds CWR until the CWR flag has surely arrived); in
//!   it `AckEvent::in_cwnd_reduction` is set (no growth, no further ECN response), and a loss
//!   found in it enters fast recovery without `on_loss` — the round's reduction stands and
//!   recovery ends where the round would have (`tcp_enter_recovery` from CWR). For other
//!   controllers a loss after a mark-triggered reduction calls `on_loss`, and whether that
//!   reduces again is the controller's decision.
//! - The window during a reduction round (CWR, and SACK fast recovery, for the same
//!   controllers): PRR (RFC 6937, Linux's `tcp_cwnd_reduction`, see [`crate::tcp::prr`]) by
//!   default; `cwnd_reduction = "immediate"` uses the controller's reduced window at once.
//!   Recovery without SACK keeps RFC 6582's inflation.

use super::input::AckSummary;
use super::{TcpConn, NO_CONTROLLER_WINDOW};
use crate::net::Ctx;
use crate::tcp::config::{CwndReduction, PartialAckTimer};
use crate::tcp::prr::Prr;
use crate::tcp::rack::Rack;
use crate::time::{Time, NEVER};

/// Loss-recovery state of the sending half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    Open,
    /// Linux's CWR state: after a signal lowered the window of a controller with
    /// [`Controller::cwr_state`](crate::cc::Controller::cwr_state), until an ACK goes beyond
    /// the data in flight then.
    Cwr,
    Fast,
    /// After a retransmission timeout, until the data outstanding then is acknowledged.
    Timeout,
}

/// The recovery state: which state the sender is in, where it ends, and the machinery that
/// runs inside it.
pub(super) struct LossRecovery {
    state: Recovery,
    /// RFC 6582's `recover`; in CWR, the data sent when the round began.
    recover: u64,
    dupacks: u32,
    /// NewReno window inflation (bytes, may go negative on deflation).
    inflation: i64,
    partial_ack_seen: bool,
    /// RFC 6675 HighRxt + 1 (segment number).
    rxt_next: u64,
    loss_reductions: u32,
    recovery_point: u64,
    /// The reduction round under way, when PRR sets the window.
    prr: Option<Prr>,
    /// F-RTO is watching the current timeout recovery.
    frto: bool,
    /// F-RTO step 2b: this ACK sends new data, not retransmissions.
    frto_new_data: bool,
    rack: Rack,
}

impl Default for LossRecovery {
    fn default() -> Self {
        Self::new()
    }
}

impl LossRecovery {
    pub(super) const fn new() -> Self {
        LossRecovery {
            state: Recovery::Open,
            recover: 1,
            dupacks: 0,
            inflation: 0,
            partial_ack_seen: false,
            rxt_next: 0,
            loss_reductions: 0,
            recovery_point: 0,
            prr: None,
            frto: false,
            frto_new_data: false,
            rack: Rack::new(),
        }
    }
}

impl LossRecovery {
    pub(super) fn state(&self) -> Recovery {
        self.state
    }

    pub(super) fn in_fast_or_timeout(&self) -> bool {
        matches!(self.state, Recovery::Fast | Recovery::Timeout)
    }

    /// Linux's CWR and Recovery states: the window is being reduced (no growth).
    pub(super) fn in_cwnd_reduction(&self) -> bool {
        matches!(self.state, Recovery::Cwr | Recovery::Fast)
    }

    pub(super) fn dupacks(&self) -> u32 {
        self.dupacks
    }

    pub(super) fn inflation(&self) -> i64 {
        self.inflation
    }

    pub(super) fn rxt_next(&self) -> u64 {
        self.rxt_next
    }

    pub(super) fn recovery_point(&self) -> u64 {
        self.recovery_point
    }

    pub(super) fn loss_reductions(&self) -> u32 {
        self.loss_reductions
    }

    pub(super) fn frto_new_data(&self) -> bool {
        self.frto_new_data
    }

    /// The timeout's high mark while F-RTO watches.
    pub(super) fn frto_high_mark(&self) -> Option<u64> {
        self.frto.then_some(self.recover)
    }

    pub(super) fn rack_mut(&mut self) -> &mut Rack {
        &mut self.rack
    }

    /// F-RTO's new data is sent on the ACK that allowed it only.
    pub(super) fn begin_ack(&mut self) {
        self.frto_new_data = false;
    }

    pub(super) fn count_dupack(&mut self, una_advanced: bool, is_dup: bool) {
        if una_advanced {
            self.dupacks = 0;
        } else if is_dup {
            self.dupacks += 1;
        }
    }

    pub(super) fn on_una_advanced(&mut self, base: u64) {
        self.rxt_next = self.rxt_next.max(base);
    }

    /// No retransmission has been sent yet (the connection is established).
    pub(super) fn reset_high_rxt(&mut self) {
        self.rxt_next = 0;
    }

    /// Segment `k` was retransmitted (with SACK: HighRxt moves past it).
    pub(super) fn on_retransmitted(&mut self, k: u64) {
        self.rxt_next = self.rxt_next.max(k + 1);
    }

    pub(super) fn on_sent(&mut self, bytes: u64) {
        if let Some(p) = self.prr.as_mut() {
            p.on_sent(bytes);
        }
    }

    pub(super) fn prr_on_ack(&mut self, acked: u64, pipe: u64, una_advanced: bool, lost: bool) {
        if let Some(p) = self.prr.as_mut() {
            p.on_ack(acked, pipe, una_advanced, lost);
        }
    }

    pub(super) fn prr_cwnd(&self) -> Option<u64> {
        self.prr.as_ref().map(|p| p.cwnd())
    }

    pub(super) fn end_fast_recovery(&mut self) {
        self.state = Recovery::Open;
        self.inflation = 0;
        self.prr = None;
    }

    /// A loss a tail loss probe repaired counts as a reduction; a CWR round under way ends
    /// with it.
    pub(super) fn on_probe_repair(&mut self, snd_max: u64) {
        self.loss_reductions += 1;
        self.recovery_point = snd_max;
        if self.state == Recovery::Cwr {
            self.state = Recovery::Open;
            self.prr = None;
        }
    }
}

impl TcpConn {
    /// The window the sender uses: PRR's during a reduction round, else the controller's.
    pub(super) fn cwnd(&self) -> u64 {
        if let Some(w) = self.tx().recovery.prr_cwnd() {
            return w;
        }
        self.controller_window()
    }

    /// The controller's window (as last read after a change; checked in debug builds).
    pub(super) fn controller_window(&self) -> u64 {
        debug_assert_eq!(
            self.cc_window,
            self.cc
                .as_ref()
                .map_or(NO_CONTROLLER_WINDOW, |c| c.window()),
            "the controller's window changed without being read again"
        );
        self.cc_window
    }

    /// Starts a reduction round from `prior_cwnd` down to the controller's window, by PRR
    /// unless the configuration says the window drops at once.
    fn start_prr(&mut self, prior_cwnd: u64) {
        let target = self.cc.as_ref().map_or(0, |c| c.window());
        self.tx_mut().recovery.prr = (self.cfg.cwnd_reduction == CwndReduction::Prr)
            .then(|| Prr::new(prior_cwnd, target, self.mss));
    }

    /// A signal lowered the window of a controller with `cwr_state`: the CWR round begins.
    pub(super) fn enter_cwr(&mut self, snd_max: u64, prior_cwnd: u64) {
        self.tx_mut().probe.clear();
        self.tx_mut().recovery.state = Recovery::Cwr;
        self.tx_mut().recovery.recover = snd_max;
        self.tx_mut().recovery.recovery_point = snd_max;
        self.start_prr(prior_cwnd);
    }

    /// Loss recovery on an ACK, entry side (Linux's `tcp_fastretrans_alert`): whether the
    /// ACK ends fast recovery, and whether it restarts the retransmission timer.
    pub(super) fn recover_on_ack(&mut self, ctx: &mut Ctx, a: &AckSummary) -> (bool, bool) {
        let ack = a.ack;
        let ends_fast_recovery =
            self.tx().recovery.state == Recovery::Fast && ack >= self.tx().recovery.recover;
        let mut restart_timer = a.advances();
        // Linux holds CWR until an ACK goes beyond its high_seq (so that the CWR flag has
        // reached the receiver); a loss found before that is repaired in the same round.
        if self.tx().recovery.state == Recovery::Cwr && ack > self.tx().recovery.recover {
            self.tx_mut().recovery.state = Recovery::Open;
            self.tx_mut().recovery.prr = None;
        }
        match self.tx().recovery.state {
            Recovery::Open | Recovery::Cwr => {
                let loss = self.tx().recovery.dupacks >= self.cfg.dupack_threshold
                    || (self.sack_ok
                        && (a.newly_lost || self.tx().sb.is_lost(self.tx().sb.base())));
                // Without SACK, duplicate ACKs at exactly `recover` are what the receiver's
                // copies of needless retransmissions draw (go-back-N after a spurious timeout
                // resends data it holds): RFC 6582 §3.2 step 1 asks the cumulative ACK to
                // cover *more* than `recover`, as ns-2's default (`bugFix_`: dupack_action
                // returns). A real loss of the segment at `recover` then waits for the timer,
                // as in ns-2. Linux instead holds a Reno connection's recovery state until
                // something above `high_seq` is ACKed (`tcp_try_undo_recovery`): no new
                // reduction either, but it still retransmits the head once enough duplicate
                // ACKs arrive; without SACK ecnlab follows ns-2 here (Linux hosts have SACK).
                // `recover` is 1 until something sets it.
                let recover = self.tx().recovery.recover;
                let may_recover = ack > recover
                    || (ack == recover && (self.sack_ok || recover == 1))
                    || self.tx().recovery.state == Recovery::Cwr;
                if loss && a.outstanding && may_recover && !self.tx().sb.is_empty() {
                    self.enter_fast_recovery(ctx, a.flight_before);
                }
            }
            Recovery::Fast if !self.sack_ok => {
                if a.advances() && ack < self.tx().recovery.recover {
                    let newly = (ack - a.prior_una) as i64;
                    self.tx_mut().recovery.inflation -= newly;
                    if newly >= self.mss as i64 {
                        self.tx_mut().recovery.inflation += self.mss as i64;
                    }
                    if self.tx().recovery.partial_ack_seen
                        && self.cfg.partial_ack_timer == PartialAckTimer::First
                    {
                        restart_timer = false;
                    }
                    self.tx_mut().recovery.partial_ack_seen = true;
                    if !self.tx().sb.is_empty() {
                        let k = self.tx().sb.base();
                        self.transmit(ctx, k, true);
                    }
                } else if a.is_dup {
                    self.tx_mut().recovery.inflation += self.mss as i64;
                }
            }
            Recovery::Fast => {}
            Recovery::Timeout => {
                if self.tx().recovery.frto {
                    self.frto_step(
                        ctx,
                        a.advances(),
                        a.original_acked,
                        a.newly_sacked > 0 || a.is_dup,
                    );
                }
                if self.tx().recovery.state == Recovery::Timeout
                    && ack >= self.tx().recovery.recover
                {
                    self.tx_mut().recovery.state = Recovery::Open;
                    self.tx_mut().recovery.frto = false;
                }
            }
        }
        (ends_fast_recovery, restart_timer)
    }

    fn enter_fast_recovery(&mut self, ctx: &mut Ctx, flight: u64) {
        let now = ctx.now;
        let from_cwr = self.tx().recovery.state == Recovery::Cwr;
        self.tx_mut().recovery.state = Recovery::Fast;
        self.forget_loss_probe();
        self.tx_mut().recovery.partial_ack_seen = false;
        self.tx_mut().stats.fast_retransmits += 1;
        if from_cwr {
            // RFC 3168 §6.1.2, Linux's tcp_enter_recovery from CWR: the window was already
            // reduced for this window of data; recovery ends where the CWR round would have.
            if !self.sack_ok {
                self.tx_mut().recovery.prr = None;
            }
            if let Some(cc) = self.cc.as_mut() {
                cc.on_loss_in_cwr(now);
            }
        } else {
            self.tx_mut().recovery.recover = self.snd_max_seq();
            self.tx_mut().recovery.recovery_point = self.tx().recovery.recover;
            self.tx_mut().recovery.loss_reductions += 1;
            if let Some(cc) = self.cc.as_mut() {
                let prior_cwnd = cc.window();
                cc.on_loss(now, flight);
                self.cc_window = cc.window();
                if self.sack_ok && cc.cwr_state() {
                    self.start_prr(prior_cwnd);
                }
            }
        }
        if !self.sack_ok {
            self.tx_mut().recovery.inflation = self.cfg.dupack_threshold as i64 * self.mss as i64;
        }
        self.tx_mut().recovery.rxt_next = self.tx().sb.base();
        if self.sack_ok {
            // The first segment presumed lost goes at once (RFC 6675 §5 step 4.2) — unless
            // its retransmission from the previous recovery is still in flight.
            let s = self.tx_mut();
            s.sb.mark_lost(s.sb.base());
            if let Some(k) = self.tx().sb.next_resend() {
                self.transmit(ctx, k, true);
            }
        } else {
            let k = self.tx().sb.base();
            self.transmit(ctx, k, true);
        }
    }

    /// RACK's reordering window (Linux's `tcp_rack_reo_wnd` while no reordering was seen).
    fn rack_reo_wnd(&self) -> Time {
        if self.tx().recovery.in_fast_or_timeout()
            || self.tx().sb.sacked_segs() >= self.cfg.dupack_threshold as u64
        {
            return 0;
        }
        (self.rtt.min_rtt() / 4).min(self.rtt.srtt())
    }

    /// RACK on an ACK that delivered a segment sent later than any delivered before: whether
    /// it found a loss; what still waits for its window arms the reordering timer.
    pub(super) fn rack_detect(&mut self, now: Time) -> bool {
        if !(self.cfg.rack && self.sack_ok && self.tx().recovery.rack.advanced()) {
            return false;
        }
        let reo_wnd = self.rack_reo_wnd();
        let s = self.tx_mut();
        let (lost, timer) = s.recovery.rack.detect(&mut s.sb, now, reo_wnd);
        self.tx_mut().timers.reo = timer.unwrap_or(NEVER);
        lost
    }

    /// The reordering timer fired: check again; a loss found outside recovery starts it.
    pub(super) fn rack_timeout(&mut self, ctx: &mut Ctx) {
        let reo_wnd = self.rack_reo_wnd();
        let s = self.tx_mut();
        let (lost, timer) = s.recovery.rack.detect(&mut s.sb, ctx.now, reo_wnd);
        self.tx_mut().timers.reo = timer.unwrap_or(NEVER);
        self.tx_mut().sb.prune_resend();
        if lost
            && matches!(self.tx().recovery.state, Recovery::Open | Recovery::Cwr)
            && !self.tx().sb.is_empty()
        {
            let flight = self.flight_size();
            self.enter_fast_recovery(ctx, flight);
        }
    }

    /// F-RTO on an ACK in timeout recovery (RFC 5682 §3.1, Linux's `tcp_process_loss`).
    fn frto_step(
        &mut self,
        ctx: &mut Ctx,
        una_advanced: bool,
        original_acked: bool,
        sack_or_dup: bool,
    ) {
        let ack = self.snd_una;
        if original_acked {
            // Step 3b: data sent before the timeout arrived without retransmission.
            self.tx_mut().recovery.frto = false;
            self.tx_mut().recovery.state = Recovery::Open;
            // Nothing outstanding at the timeout needs repair: fast recovery may start again.
            self.tx_mut().recovery.recover = ack;
            self.tx_mut().sb.unmark_lost();
            let s = self.tx_mut();
            s.recovery.rack.on_undo(s.sb.base());
            self.tx_mut().recovery.rxt_next = self.tx().sb.base();
            self.tx_mut().stats.spurious_rtos += 1;
            if let Some(cc) = self.cc.as_mut() {
                cc.on_spurious_timeout(ctx.now);
                self.cc_window = cc.window();
            }
        } else if self.snd_max_seq() > self.tx().recovery.recover {
            // New data went out in step 2b; SACK or duplicate ACKs now say the loss was real.
            if sack_or_dup {
                self.tx_mut().recovery.frto = false;
            }
        } else if una_advanced && ack < self.tx().recovery.recover {
            // Step 2b: probe with new data if the application and the peer's window allow.
            self.tx_mut().recovery.recover = self.snd_max_seq();
            self.tx_mut().recovery.recovery_point = self.tx().recovery.recover;
            if self.new_segment().is_some() {
                self.tx_mut().recovery.frto_new_data = true;
            } else {
                self.tx_mut().recovery.frto = false;
            }
        }
    }

    /// The retransmission timer fired (Linux's `tcp_retransmit_timer`, `tcp_enter_loss`).
    pub(super) fn on_rto(&mut self, ctx: &mut Ctx) {
        self.tx_mut().timers.rto = NEVER;
        self.tx_mut().timers.reo = NEVER;
        self.forget_loss_probe();
        if self.tx().sb.is_empty() {
            return;
        }
        let now = ctx.now;
        self.tx_mut().stats.rtos += 1;
        let outstanding = self.flight_size() - self.tx().sb.sacked_bytes();
        if let Some(cc) = self.cc.as_mut() {
            cc.on_rto(now, outstanding);
            self.cc_window = cc.window();
        }
        self.tx_mut().recovery.loss_reductions += 1;
        self.tx_mut().recovery.recover = self.snd_max_seq();
        self.tx_mut().recovery.recovery_point = self.tx().recovery.recover;
        self.rtt.backoff();
        // Linux keeps F-RTO off for a timeout during fast recovery (`tcp_enter_loss`).
        self.tx_mut().recovery.frto =
            self.cfg.frto && self.sack_ok && self.tx().recovery.state != Recovery::Fast;
        self.tx_mut().recovery.state = Recovery::Timeout;
        self.tx_mut().recovery.prr = None;
        self.tx_mut().recovery.inflation = 0;
        self.tx_mut().recovery.dupacks = 0;
        if self.sack_ok {
            self.tx_mut().sb.mark_all_lost();
            self.tx_mut().recovery.rack.on_timeout();
        } else {
            self.tx_mut().snd_nxt = self.tx().sb.base();
        }
        self.tx_mut().recovery.rxt_next = self.tx().sb.base();
        self.tx_mut().pacing.restart(now);
        self.tx_mut().timers.rto = now + self.rtt.rto();
        self.try_send(ctx);
    }
}
