//! The connection's timers and what fires them (Linux's `tcp_timer.c`): the application's
//! start and stop, the handshake's retransmission, RACK's reordering timer, the tail loss
//! probe, the retransmission timeout, the delayed ACK and the pacing schedule
//! (`tcp_write_timer_handler`, `tcp_delack_timer_handler`). It owns the sending half's
//! deadlines ([`Timers`]); each is armed by the file whose rule sets it, and this one fires
//! them in order and re-arms them after an ACK.
//!
//! Readings: the retransmission timer (RFC 6298 §5.1–5.3) is started when data is sent and it
//! is not running, stopped when everything is acknowledged, restarted on an ACK of new data —
//! and, with SACK, when the first unacknowledged segment is retransmitted (Linux's
//! `tcp_xmit_retransmit_queue`; otherwise a retransmission sent late in a long recovery may
//! get less than an RTT before the timer fires). As in Linux's single timer slot, a pending
//! reordering timer displaces the probe.

use super::{State, TcpConn};
use crate::net::Ctx;
use crate::time::{Time, NEVER};

/// The sending half's deadlines (`NEVER`: not armed).
pub(super) struct Timers {
    /// Retransmission timeout.
    pub rto: Time,
    /// RACK's reordering timer: segments sent before a delivered one wait for their window.
    pub reo: Time,
    /// The tail loss probe's timer.
    pub tlp: Time,
}

impl Default for Timers {
    fn default() -> Self {
        Self::new()
    }
}

impl Timers {
    pub(super) const fn new() -> Self {
        Timers {
            rto: NEVER,
            reo: NEVER,
            tlp: NEVER,
        }
    }
}

impl TcpConn {
    /// Fires every timer that is due, then sends what the window allows and the ACK due.
    pub(super) fn fire_timers(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        if now >= self.app_stop_at {
            self.stop_writing();
        }
        if self.state == State::Idle && now >= self.open_at {
            self.connect(ctx);
        }
        if self.opening.deadline() <= now {
            self.handshake_timeout(ctx);
        }
        if self.state != State::Established {
            return;
        }
        if self.tx().timers.reo <= now {
            self.tx_mut().timers.reo = NEVER;
            self.rack_timeout(ctx);
        }
        if self.tx().timers.tlp <= now {
            self.tx_mut().timers.tlp = NEVER;
            self.send_loss_probe(ctx);
        }
        if self.tx().timers.rto <= now {
            self.on_rto(ctx);
        }
        if self.rcv.delack_deadline <= now {
            self.rcv.delack_deadline = NEVER;
            if self.rcv.ack_pending() {
                self.rcv.ack_now = true;
            }
        }
        self.try_send(ctx);
        self.flush_ack(ctx);
    }

    /// The earliest deadline of the connection.
    pub(super) fn next_deadline(&self) -> Time {
        let mut d = self
            .open_at
            .min(self.opening.deadline())
            .min(self.app_stop_at);
        if self.state == State::Established {
            d = d
                .min(self.tx().timers.rto)
                .min(self.rcv.delack_deadline)
                .min(self.tx().timers.tlp)
                .min(self.tx().timers.reo);
            if let Some(t) = self.tx().pacing.wakeup() {
                d = d.min(t);
            }
        }
        d
    }

    /// After an ACK: everything acknowledged stops the timers; otherwise the RTO restarts
    /// if the ACK says so and the probe is armed again when it may be.
    pub(super) fn rearm_timers_on_ack(&mut self, now: Time, una_advanced: bool, restart_rto: bool) {
        if self.snd_una >= self.snd_max_seq() {
            // Without a sending half nothing was sent and no timer is armed.
            if let Some(s) = self.tx_made() {
                s.timers = Timers::default();
            }
        } else {
            if restart_rto {
                self.tx_mut().timers.rto = now + self.rtt.rto();
            }
            // Linux's single timer slot: a reordering timer displaces the probe.
            if self.tx().timers.reo != NEVER || !self.may_probe() {
                self.tx_mut().timers.tlp = NEVER;
            } else if una_advanced {
                self.schedule_loss_probe(now, true);
            }
        }
    }
}
