//! Zhuge (Meng et al., SIGCOMM 2022) for TCP: the access point predicts how long each
//! downstream packet will wait in its wireless queue and, when the prediction grows, delays
//! the client's ACKs by the growth, so the sender's ACK clock slows as soon as the queue
//! starts to build instead of one queueing delay later.
//!
//! - Fortune teller, per downstream data packet: `qLong + tx`, qLong = queued bytes / the
//!   measured dequeue rate, tx = the packet's bytes at that rate. The dequeue rate is the
//!   bytes the port released over the last `rate_window` of 1 ms slots, counting only slots
//!   in which the queue was not idle (a floor of 512 kb/s). A packet that could still be
//!   aggregated with the head (queue below `aggregation_wait` worth of bytes and not
//!   shrinking) is predicted no queueing delay.
//! - Per flow, the change of the prediction from its previous data packet goes into a
//!   history of `history` (40 ms): an increase as a delay, a decrease as a token, each capped
//!   at `max_delay`.
//! - Each client ACK of the flow: a delay drawn at random from the history's increases, no
//!   less than what keeps ACKs in order, minus the tokens it consumes (a token spent whole
//!   leaves the pool), scaled down when fewer packets passed in the last history span than
//!   in the one before; the ACK leaves at most `max_delay` after it arrived. With no
//!   increase in the span, an ACK held behind another leaves right after it, so a chain of
//!   held ACKs drains by one ACK spacing per ACK instead of keeping its old delay.
//!
//! # Readings
//!
//! The description follows the authors' public ns-3 model of Zhuge for TCP over a
//! point-to-point downlink (the mode their model uses without a Wi-Fi MAC); this code is
//! written from that reading, not taken from it. Where it is more than a reading:
//!
//! - Their model serves one flow; here the fortune teller is the AP's (one queue) and each
//!   flow keeps its own history and ACK clock.
//! - Head-of-line time (qShort) is 0, as their point-to-point mode sets it; the batch
//!   overhead of the wireless model shows in the measured dequeue rate instead.
//! - `max_delay` = 10 ms is their constant (they note it should be the path's min RTT).

use crate::ap::{is_client_ack, Direction, Sessions};
use crate::engine::rng::Rng;
use crate::marker::PortView;
use crate::net::{Forward, NodeElement};
use crate::packet::{Packet, L4};
use crate::time::{Time, MS, SEC};
use crate::units::Duration;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZhugeConfig {
    /// The AP's wireless egress port.
    pub port: String,
    /// Span of the dequeue-rate measurement (1 ms slots).
    #[serde(default = "default_rate_window")]
    pub rate_window: Duration,
    /// How long a delay change stays in a flow's history.
    #[serde(default = "default_history")]
    pub history: Duration,
    /// Largest delay added to one ACK, and largest change recorded.
    #[serde(default = "default_max_delay")]
    pub max_delay: Duration,
    /// Aggregation: a queue holding less than this much at the dequeue rate, and not
    /// shrinking, predicts no queueing delay (0: off).
    #[serde(default = "default_aggregation_wait")]
    pub aggregation_wait: Duration,
}

fn default_rate_window() -> Duration {
    Duration(200 * MS)
}
fn default_history() -> Duration {
    Duration(40 * MS)
}
fn default_max_delay() -> Duration {
    Duration(10 * MS)
}
fn default_aggregation_wait() -> Duration {
    Duration(5 * MS)
}

const SLOT: Time = MS;
const MIN_RATE_BPS: f64 = 512_000.0;

/// The dequeue rate over the last slots that were not idle.
struct DequeueRate {
    /// (bytes released in the slot, the queue was busy in it)
    slots: VecDeque<(u64, bool)>,
    max_slots: usize,
    slot_start: Time,
    bytes_at_slot_start: u64,
    busy_in_slot: bool,
    rate_bps: f64,
}

impl DequeueRate {
    fn new(window: Time) -> Self {
        DequeueRate {
            slots: VecDeque::new(),
            max_slots: (window / SLOT).max(1) as usize,
            slot_start: 0,
            bytes_at_slot_start: 0,
            busy_in_slot: false,
            rate_bps: MIN_RATE_BPS,
        }
    }

    /// Closes the slots that ended by `v.now`. Slots between two observations share the
    /// bytes released in between evenly (the element sees the port only when packets pass).
    fn observe(&mut self, v: &PortView) {
        let busy_now = v.backlog_pkts > 0;
        if v.now >= self.slot_start + SLOT {
            let n = ((v.now - self.slot_start) / SLOT).max(1);
            let bytes = v.dequeued_bytes - self.bytes_at_slot_start;
            let busy = self.busy_in_slot || bytes > 0;
            for k in 0..n {
                let share = bytes / n + u64::from(k < bytes % n);
                self.slots.push_back((share, busy));
            }
            while self.slots.len() > self.max_slots {
                self.slots.pop_front();
            }
            self.slot_start += n * SLOT;
            self.bytes_at_slot_start = v.dequeued_bytes;
            self.busy_in_slot = busy_now;
            let (bytes, busy_slots) = self
                .slots
                .iter()
                .filter(|s| s.1)
                .fold((0u64, 0u64), |a, s| (a.0 + s.0, a.1 + 1));
            if busy_slots > 0 {
                let secs = (busy_slots * SLOT) as f64 / SEC as f64;
                self.rate_bps = (bytes as f64 * 8.0 / secs).max(MIN_RATE_BPS);
            }
        } else {
            self.busy_in_slot |= busy_now;
        }
    }
}

#[derive(Default, Clone)]
struct FlowClock {
    /// (when, growth in ps ≥ 0) within the history span: the pool delays are drawn from.
    delays: VecDeque<(Time, i64)>,
    /// (when, decrease in ps > 0) not yet spent, oldest first.
    tokens: VecDeque<(Time, i64)>,
    /// When each token that has been spent whole was recorded: out of the pool, but still
    /// counted among the span's changes until it ages.
    spent: VecDeque<Time>,
    /// Entries aged out within the span before (for the packet-rate scaling).
    previous: VecDeque<Time>,
    last_prediction: Option<Time>,
    last_queue_bytes: u64,
    last_ack_arrival: Time,
    last_ack_sent: Time,
    acks_seen: bool,
}

impl FlowClock {
    /// Moves what is older than `span` to `previous` (delays, then tokens, then spent
    /// tokens, as the reference ages its three lists) and forgets what is older than two.
    fn age(&mut self, now: Time, span: Time) {
        let old = |t: Time| now - t > span;
        while let Some(&(t, _)) = self.delays.front().filter(|e| old(e.0)) {
            self.delays.pop_front();
            self.previous.push_back(t);
        }
        while let Some(&(t, _)) = self.tokens.front().filter(|e| old(e.0)) {
            self.tokens.pop_front();
            self.previous.push_back(t);
        }
        while let Some(&t) = self.spent.front().filter(|t| old(**t)) {
            self.spent.pop_front();
            self.previous.push_back(t);
        }
        while let Some(&t) = self.previous.front() {
            if now - t <= 2 * span {
                break;
            }
            self.previous.pop_front();
        }
    }

    /// Records a change of the prediction: growth as a delay, decrease as a token. The
    /// reference files changes above −1 µs as delays because its predictions are whole
    /// milliseconds (so: zero and up); ours are in picoseconds, so the split is at zero.
    fn record(&mut self, now: Time, delta: i64) {
        if delta >= 0 {
            self.delays.push_back((now, delta));
        } else {
            self.tokens.push_back((now, -delta));
        }
    }

    /// The change to add to the next ACK's departure, no less than `min` (ps; `min` ≤ 0,
    /// and so may be the result: with no delay in the span a held ACK may leave as early
    /// as the one before it).
    fn sample(&mut self, now: Time, span: Time, min: i64, rng: &mut Rng) -> i64 {
        self.age(now, span);
        if self.delays.is_empty() {
            return min;
        }
        let pick = rand::Rng::gen_range(rng, 0..self.delays.len());
        let mut d = self.delays[pick].1.max(min);
        // Tokens pay for the delay, oldest first; one spent whole leaves the list. One
        // that is not (d ≤ its value) absorbs d, a negative d included, which it banks.
        while let Some(tok) = self.tokens.front_mut() {
            if tok.1 < d {
                d -= tok.1;
                self.spent.push_back(tok.0);
                self.tokens.pop_front();
            } else {
                tok.1 -= d;
                d = 0;
                break;
            }
        }
        let recent = self.delays.len() + self.tokens.len() + self.spent.len();
        let before = self.previous.len();
        if before > recent {
            d = (d as f64 * recent as f64 / before as f64) as i64;
        }
        d
    }
}

pub struct Zhuge {
    cfg: ZhugeConfig,
    port: usize,
    sessions: Sessions,
    clocks: Vec<FlowClock>,
    rate: DequeueRate,
    rng: Rng,
    pub delayed_acks: u64,
    pub delay_sum: Time,
}

impl Zhuge {
    pub fn new(cfg: ZhugeConfig, port: usize, rng: Rng) -> Result<Self, String> {
        if cfg.rate_window.0 < SLOT {
            return Err("rate_window: must be at least 1ms".into());
        }
        if cfg.history.0 == 0 {
            return Err("history: must be positive".into());
        }
        let rate = DequeueRate::new(cfg.rate_window.0);
        Ok(Zhuge {
            cfg,
            port,
            sessions: Sessions::default(),
            clocks: Vec::new(),
            rate,
            rng,
            delayed_acks: 0,
            delay_sum: 0,
        })
    }

    /// The fortune teller: predicted wait of a packet of `bytes` joining the queue now.
    fn predict(&self, v: &PortView, bytes: u32, last_queue_bytes: u64) -> Time {
        let rate = self.rate.rate_bps;
        let q = v.backlog_bytes;
        let agg = self.cfg.aggregation_wait.0 as f64 / SEC as f64 * rate / 8.0;
        let q_long =
            if self.cfg.aggregation_wait.0 > 0 && (q as f64) <= agg && q >= last_queue_bytes {
                0.0
            } else {
                q as f64 * 8.0 / rate
            };
        let tx = bytes as f64 * 8.0 / rate;
        ((q_long + tx) * SEC as f64).round() as Time
    }

    fn ensure_clock(&mut self, slot: usize) {
        if self.clocks.len() <= slot {
            self.clocks.resize(slot + 1, FlowClock::default());
        }
    }
}

impl NodeElement for Zhuge {
    fn on_forward(
        &mut self,
        now: Time,
        out_port: usize,
        pkt: &mut Packet,
        ports: &[PortView],
    ) -> Forward {
        let v = &ports[self.port];
        self.rate.observe(&v);
        let Some((slot, dir)) = self.sessions.observe_leaving(now, out_port, self.port, pkt) else {
            return Forward::Pass;
        };
        // Slots move when the table forgets flows; Zhuge's table never forgets (its state
        // is a few hundred bytes a flow), so a slot stays a flow's.
        let L4::Tcp(t) = &pkt.l4 else {
            return Forward::Pass;
        };
        let (max_delay, span) = (self.cfg.max_delay.0 as i64, self.cfg.history.0);
        self.ensure_clock(slot);
        if dir == Direction::Down {
            if pkt.payload_len == 0 {
                return Forward::Pass;
            }
            let prediction = self.predict(&v, pkt.wire_len(), self.clocks[slot].last_queue_bytes);
            let c = &mut self.clocks[slot];
            c.age(now, span);
            if let Some(last) = c.last_prediction {
                if !(v.backlog_bytes == 0 && c.last_queue_bytes == 0) {
                    let delta = (prediction as i64 - last as i64).clamp(-max_delay, max_delay);
                    c.record(now, delta);
                }
            }
            c.last_prediction = Some(prediction);
            c.last_queue_bytes = v.backlog_bytes;
            return Forward::Pass;
        }
        if !is_client_ack(t) {
            return Forward::Pass;
        }
        let (c, rng) = (&mut self.clocks[slot], &mut self.rng);
        let send_at = if !c.acks_seen {
            c.acks_seen = true;
            now
        } else if now > c.last_ack_sent {
            // A new burst: these ACKs already carry the queue's growth.
            now + c.sample(now, span, 0, rng).max(0) as Time
        } else {
            // Held behind the previous ACK: keep its spacing plus the sampled change, but
            // never leave before it (the floor `min` = its departure − this spacing ≤ 0).
            let follow = now + (c.last_ack_sent - c.last_ack_arrival);
            let min = c.last_ack_sent as i64 - follow as i64;
            (follow as i64 + c.sample(now, span, min, rng)) as Time
        };
        let send_at = send_at.min(now + max_delay as Time);
        c.last_ack_arrival = now;
        c.last_ack_sent = send_at;
        if send_at > now {
            self.delayed_acks += 1;
            self.delay_sum += send_at - now;
            return Forward::HoldUntil(send_at);
        }
        Forward::Pass
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("acks_delayed", self.delayed_acks),
            ("ack_delay_total_us", self.delay_sum / crate::time::US),
            ("dequeue_rate_bps", self.rate.rate_bps as u64),
            ("connections", self.sessions.table.len() as u64),
        ]
    }
}

#[cfg(test)]
mod tests;
