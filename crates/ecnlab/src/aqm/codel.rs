//! CoDel (RFC 8289): drops (or CE-marks) at dequeue once packets have waited more than
//! `target` for at least `interval`, then ever faster by the control law
//! `next = t + interval/√count` until the sojourn falls below target.
//!
//! [`CodelVars`] is the per-queue state machine of the RFC's pseudo-code (§5), shared with
//! FQ-CoDel, whose every flow queue runs one. Marking follows Linux: with `ecn` on, an
//! ECN-capable packet that would be dropped is marked CE and sent instead.

use super::droptail::DropTail;
use super::{DropReason, Limit, Qdisc, Verdict};
use crate::packet::{Packet, PacketPool, PktId};
use crate::time::{Time, MS};
use crate::units::Duration;
use crate::wire::Ecn;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    #[serde(default = "default_target")]
    pub target: Duration,
    #[serde(default = "default_interval")]
    pub interval: Duration,
    /// Buffer limit in packets (RFC 8289 leaves it to the implementation; Linux's 1000).
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Largest packet (MAXPACKET): CoDel never drops while at most this many bytes queue.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// CE-mark ECN-capable packets instead of dropping them.
    #[serde(default)]
    pub ecn: bool,
}

pub(crate) fn default_target() -> Duration {
    Duration(5 * MS)
}
pub(crate) fn default_interval() -> Duration {
    Duration(100 * MS)
}
fn default_limit() -> u32 {
    1000
}
pub(crate) fn default_mtu() -> u32 {
    1514
}

impl CodelConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.interval.0 == 0 {
            return Err("interval: must be positive".into());
        }
        if self.target.0 == 0 {
            return Err("target: must be positive".into());
        }
        if self.limit == 0 {
            return Err("limit: must be positive".into());
        }
        Ok(())
    }
}

/// The parameters one CoDel instance runs with.
#[derive(Clone, Copy, Debug)]
pub struct CodelParams {
    pub target: Time,
    pub interval: Time,
    pub mtu: u32,
    pub ecn: bool,
}

/// One queue's CoDel state (RFC 8289 §5.2's variables).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelVars {
    /// When the sojourn time first went above target and will have stayed there an
    /// interval (0: below target).
    first_above_time: Time,
    /// When the next drop is due while dropping.
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

/// What a CoDel queue hands to [`CodelVars::dequeue`]: its FIFO and the bytes queued
/// that the MAXPACKET test reads (the whole discipline's, as Linux's fq_codel does).
pub trait CodelQueue {
    fn pop(&mut self) -> Option<PktId>;
    /// Bytes still queued after the last pop.
    fn backlog_bytes(&self) -> u64;
}

impl CodelVars {
    /// Counts `n` packets dropped from this queue outside CoDel's own law (Linux's
    /// fq_codel_drop raises the fat flow's `count` by its overflow drops, so CoDel resumes
    /// at a higher drop rate).
    pub fn count_drops(&mut self, n: u32) {
        self.count = self.count.saturating_add(n);
    }

    fn control_law(&self, t: Time, interval: Time) -> Time {
        t + (interval as f64 / (self.count.max(1) as f64).sqrt()) as Time
    }

    /// RFC 8289's `dodequeue`: the next packet and whether it may be dropped.
    fn dodequeue(
        &mut self,
        now: Time,
        p: &CodelParams,
        q: &mut dyn CodelQueue,
        pool: &PacketPool,
    ) -> (Option<PktId>, bool) {
        let Some(id) = q.pop() else {
            self.first_above_time = 0;
            return (None, false);
        };
        let sojourn = now - pool.get(id).meta.enqueued_at;
        if sojourn < p.target || q.backlog_bytes() <= p.mtu as u64 {
            self.first_above_time = 0;
            return (Some(id), false);
        }
        if self.first_above_time == 0 {
            self.first_above_time = now + p.interval;
            (Some(id), false)
        } else {
            (Some(id), now >= self.first_above_time)
        }
    }

    /// Drops `id` (onto `dropped`) or, with ECN on and an ECN-capable packet, marks it CE;
    /// returns true when it was marked (and must be sent).
    fn drop_or_mark(
        p: &CodelParams,
        id: PktId,
        pool: &mut PacketPool,
        dropped: &mut Vec<(PktId, DropReason)>,
    ) -> bool {
        let pkt = pool.get_mut(id);
        if p.ecn && pkt.ip.ecn.is_ect() {
            pkt.ip.ecn = Ecn::CE;
            return true;
        }
        dropped.push((id, DropReason::Sojourn));
        false
    }

    /// RFC 8289's `dequeue` (§5.4), marking instead of dropping as Linux does with ECN.
    pub fn dequeue(
        &mut self,
        now: Time,
        p: &CodelParams,
        q: &mut dyn CodelQueue,
        pool: &mut PacketPool,
        dropped: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId> {
        let (mut pkt, mut ok_to_drop) = self.dodequeue(now, p, q, pool);
        if pkt.is_none() {
            self.dropping = false;
            return None;
        }
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                let id = pkt.expect("ok_to_drop implies a packet");
                self.count += 1;
                if Self::drop_or_mark(p, id, pool, dropped) {
                    self.drop_next = self.control_law(self.drop_next, p.interval);
                    return Some(id);
                }
                (pkt, ok_to_drop) = self.dodequeue(now, p, q, pool);
                if !ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next, p.interval);
                }
            }
        } else if ok_to_drop {
            let id = pkt.expect("ok_to_drop implies a packet");
            if !Self::drop_or_mark(p, id, pool, dropped) {
                (pkt, _) = self.dodequeue(now, p, q, pool);
            }
            self.dropping = true;
            // Re-entering soon after leaving: resume near the old drop rate.
            let delta = self.count - self.lastcount;
            if delta > 1 && now.saturating_sub(self.drop_next) < 16 * p.interval {
                self.count = delta;
            } else {
                self.count = 1;
            }
            self.drop_next = self.control_law(now, p.interval);
            self.lastcount = self.count;
        }
        pkt
    }
}

/// CoDel over one FIFO.
pub struct Codel {
    fifo: CodelFifo,
    params: CodelParams,
    vars: CodelVars,
    limit: u32,
}

struct CodelFifo(DropTail);

impl CodelQueue for CodelFifo {
    fn pop(&mut self) -> Option<PktId> {
        self.0.pop()
    }
    fn backlog_bytes(&self) -> u64 {
        self.0.bytes()
    }
}

impl Codel {
    pub fn new(cfg: &CodelConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(Codel {
            fifo: CodelFifo(DropTail::new(Limit::Packets(cfg.limit))),
            params: CodelParams {
                target: cfg.target.0,
                interval: cfg.interval.0,
                mtu: cfg.mtu,
                ecn: cfg.ecn,
            },
            vars: CodelVars::default(),
            limit: cfg.limit,
        })
    }
}

impl Qdisc for Codel {
    fn feedback(&self) -> Option<&'static str> {
        self.params.ecn.then_some("ce")
    }

    fn enqueue(&mut self, now: Time, id: PktId, pkt: &mut Packet) -> Verdict {
        self.fifo.0.enqueue(now, id, pkt)
    }

    fn dequeue(
        &mut self,
        now: Time,
        pool: &mut PacketPool,
        dropped: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId> {
        self.vars
            .dequeue(now, &self.params, &mut self.fifo, pool, dropped)
    }

    fn len(&self) -> usize {
        self.fifo.0.len()
    }
    fn bytes(&self) -> u64 {
        self.fifo.0.bytes()
    }
    fn limit(&self) -> Limit {
        Limit::Packets(self.limit)
    }
    fn reads_limit(&self) -> bool {
        false
    }
    fn for_each(&self, f: &mut dyn FnMut(PktId)) {
        self.fifo.0.for_each(f)
    }
}

#[cfg(test)]
mod tests;
