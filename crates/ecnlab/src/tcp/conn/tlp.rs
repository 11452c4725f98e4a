//! The tail loss probe (RFC 8985 §7): when the probe may be armed and when its timer is due
//! (Linux's `tcp_schedule_loss_probe`), what it sends (`tcp_send_loss_probe`), and what the
//! ACKs after it say (`tcp_process_tlp_ack`). It owns the probe outstanding ([`LossProbe`],
//! Linux's `tlp_high_seq` and `tlp_retrans`); its timer is one of [`super::timer`]'s.
//!
//! Readings (`tlp`, on by default, with SACK only, in the open and CWR states): after new
//! data is sent or an ACK advances SND.UNA the probe timer is set to 2·SRTT + 2 ms (2·SRTT +
//! the minimum RTO with one segment outstanding; the initial RTO before any sample), never
//! later than the RTO. When it fires, one new segment goes out regardless of cwnd if the
//! application and the peer's window allow, else the last segment sent is retransmitted; the
//! RTO is restarted and no second probe goes until this one is answered. A retransmitted
//! probe followed by an ACK beyond the data then sent repaired a loss: the controller reduces
//! once, at once (`on_loss` then `on_recovery_end`, Linux's CWR entered and left on the same
//! ACK); a D-SACK of the probe's segment (or, with `dsack` off, a pure duplicate ACK at that
//! point) says the original arrived too, and nothing is reduced.

use super::{Recovery, TcpConn};
use crate::net::Ctx;
use crate::time::{Time, NEVER};

/// Added to the probe timeout when more than one segment is outstanding (Linux's
/// `TCP_TIMEOUT_MIN_US`).
const TLP_SLACK: Time = 2 * crate::time::MS;

/// The probe outstanding: SND.NXT when it went and whether it was a retransmission (Linux's
/// `tlp_high_seq`, `tlp_retrans`).
#[derive(Default)]
pub(super) struct LossProbe {
    high_seq: Option<u64>,
    retrans: bool,
}

impl LossProbe {
    pub(super) const fn new() -> Self {
        LossProbe {
            high_seq: None,
            retrans: false,
        }
    }

    pub(super) fn high_seq(&self) -> Option<u64> {
        self.high_seq
    }

    /// A reduction starts: the probe outstanding is no longer watched (Linux clears
    /// `tlp_high_seq`).
    pub(super) fn clear(&mut self) {
        self.high_seq = None;
    }
}

impl TcpConn {
    /// Recovery or a timeout takes over from the probe (Linux clears `tlp_high_seq` when a
    /// reduction starts).
    pub(super) fn forget_loss_probe(&mut self) {
        self.tx_mut().timers.tlp = NEVER;
        self.tx_mut().probe.clear();
    }

    /// Whether a tail loss probe may be armed (Linux: SACK, data outstanding, open or CWR).
    pub(super) fn may_probe(&self) -> bool {
        self.cfg.tlp
            && self.sack_ok
            && !self.tx().sb.is_empty()
            && matches!(self.tx().recovery.state(), Recovery::Open | Recovery::Cwr)
    }

    /// Arms the probe timer (Linux's `tcp_schedule_loss_probe`); `advancing_rto`: the RTO is
    /// being restarted now, so the cap is a full RTO rather than what is left of it.
    #[inline]
    pub(super) fn schedule_loss_probe(&mut self, now: Time, advancing_rto: bool) {
        if !self.may_probe() {
            self.tx_mut().timers.tlp = NEVER;
            return;
        }
        let mut pto = if self.rtt.has_sample() {
            let outstanding_segs = self.tx().sb.end() - self.tx().sb.base();
            2 * self.rtt.srtt()
                + if outstanding_segs == 1 {
                    self.cfg.min_rto()
                } else {
                    TLP_SLACK
                }
        } else {
            self.cfg.initial_rto()
        };
        let rto_left = if advancing_rto {
            self.rtt.rto()
        } else {
            self.tx().timers.rto.saturating_sub(now)
        };
        if rto_left > 0 {
            pto = pto.min(rto_left);
        }
        self.tx_mut().timers.tlp = now + pto;
    }

    /// The probe timer fired (Linux's `tcp_send_loss_probe`).
    pub(super) fn send_loss_probe(&mut self, ctx: &mut Ctx) {
        if self.tx().probe.high_seq.is_some() || !self.may_probe() {
            return;
        }
        let (k, retx) = match self.new_segment() {
            Some(k) => (k, false),
            None => (self.tx().sb.end() - 1, true),
        };
        self.transmit(ctx, k, retx);
        self.tx_mut().probe.retrans = retx;
        self.tx_mut().probe.high_seq = Some(self.snd_max_seq());
        self.tx_mut().stats.loss_probes += 1;
        self.tx_mut().timers.rto = ctx.now + self.rtt.rto();
    }

    /// An ACK while a probe is outstanding: a retransmitted probe that repaired a loss
    /// costs one reduction, ended at once.
    pub(super) fn process_tlp_ack(&mut self, now: Time, ack: u64, pure_dup: bool, dsack_tlp: bool) {
        if self.tlp_repaired_loss(ack, pure_dup, dsack_tlp) {
            self.tlp_reduction(now);
        }
    }

    /// Linux's `tcp_process_tlp_ack`: whether this ACK shows that a retransmitted probe
    /// repaired a loss (it goes beyond the data sent when the probe went); a new-data probe
    /// is done with once acknowledged, and a D-SACK of the probe or a pure duplicate at its
    /// point means the original had arrived too.
    fn tlp_repaired_loss(&mut self, ack: u64, pure_dup: bool, dsack_tlp: bool) -> bool {
        let Some(high) = self.tx().probe.high_seq else {
            return false;
        };
        if ack < high {
            return false;
        }
        let repaired = self.tx().probe.retrans && !dsack_tlp && ack > high;
        if !self.tx().probe.retrans || dsack_tlp || repaired || pure_dup {
            self.tx_mut().probe.high_seq = None;
        }
        repaired
    }

    /// The reduction for a loss a probe repaired: Linux enters CWR and leaves it on the same
    /// ACK with cwnd = ssthresh.
    fn tlp_reduction(&mut self, now: Time) {
        let snd_max = self.snd_max_seq();
        self.tx_mut().recovery.on_probe_repair(snd_max);
        let flight = self.flight_size();
        if let Some(cc) = self.cc.as_mut() {
            cc.on_loss(now, flight);
            cc.on_recovery_end(now);
            self.cc_window = cc.window();
        }
    }
}
