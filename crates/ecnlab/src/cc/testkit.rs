//! Synthetic ACK streams for controller tests.

use super::{AckEvent, Controller};
use crate::time::Time;

/// An ACK clock on a path of constant RTT: each round trip acknowledges exactly the window
/// that was open at its start, in segment-sized ACKs (the last one carrying the remainder)
/// spread evenly over the round trip. Round counting fields are filled so that each round
/// begins with its first ACK.
pub struct AckClock {
    pub now: Time,
    pub rtt: Time,
    pub mss: u64,
    pub delivered: u64,
}

impl AckClock {
    pub fn new(now: Time, rtt: Time, mss: u64) -> Self {
        AckClock {
            now,
            rtt,
            mss,
            delivered: 0,
        }
    }

    /// Runs whole round trips until `until`. `each` sees every ACK before `on_ack` (it may
    /// deliver a signal for it).
    pub fn run(
        &mut self,
        cc: &mut dyn Controller,
        until: Time,
        mut each: impl FnMut(&mut dyn Controller, &AckEvent),
    ) {
        while self.now < until {
            self.round(cc, &mut each);
        }
    }

    /// One round trip.
    pub fn round(
        &mut self,
        cc: &mut dyn Controller,
        each: &mut impl FnMut(&mut dyn Controller, &AckEvent),
    ) {
        let window = cc.window().max(1);
        let n = window.div_ceil(self.mss);
        let start_delivered = self.delivered;
        let start = self.now;
        let mut left = window;
        for i in 0..n {
            let acked = left.min(self.mss);
            left -= acked;
            self.delivered += acked;
            let ev = AckEvent {
                now: start + self.rtt * (i + 1) / n,
                acked_bytes: acked,
                rtt: Some(self.rtt),
                srtt: self.rtt,
                min_rtt: self.rtt,
                bytes_in_flight: cc.window(),
                delivered: self.delivered,
                prior_delivered: start_delivered,
                ..Default::default()
            };
            each(cc, &ev);
            cc.on_ack(&ev);
        }
        self.now = start + self.rtt;
    }
}

/// A bulk sender behind one FIFO bottleneck of constant capacity with an unbounded buffer:
/// a packet sent at `s` starts service at `max(s, link free)`, the link is busy for
/// `mss/capacity`, and its ACK returns `base_rtt` after service starts — so the RTT is
/// `base_rtt + queueing delay` and the delivery rate is at most the capacity. The sender
/// obeys the controller's window and pacing rate, never runs out of data, and computes
/// delivery-rate samples per draft-cheng-iccrg-delivery-rate-estimation.
pub struct PathSim {
    pub now: Time,
    pub mss: u64,
    /// Bottleneck service time of one packet.
    pub tx_time: Time,
    /// Propagation RTT applied to packets sent from now on.
    pub base_rtt: Time,
    link_free_at: Time,
    inflight: std::collections::VecDeque<Sent>,
    inflight_bytes: u64,
    next_send_at: Time,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    srtt: Time,
    min_rtt: Time,
}

struct Sent {
    sent: Time,
    ack_at: Time,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
}

impl PathSim {
    pub fn new(mss: u64, capacity_bytes_per_s: u64, base_rtt: Time) -> Self {
        PathSim {
            now: 0,
            mss,
            tx_time: mss * crate::time::SEC / capacity_bytes_per_s,
            base_rtt,
            link_free_at: 0,
            inflight: Default::default(),
            inflight_bytes: 0,
            next_send_at: 0,
            delivered: 0,
            delivered_time: 0,
            first_sent_time: 0,
            srtt: 0,
            min_rtt: Time::MAX,
        }
    }

    /// Runs until `until`; `on_ack` sees every ACK after the controller processed it.
    pub fn run<C: Controller>(
        &mut self,
        cc: &mut C,
        until: Time,
        mut on_ack: impl FnMut(&C, &AckEvent),
    ) {
        loop {
            let t_ack = self.inflight.front().map_or(Time::MAX, |p| p.ack_at);
            let t_send = if self.inflight_bytes + self.mss <= cc.window() {
                self.now.max(self.next_send_at)
            } else {
                Time::MAX
            };
            let t = t_ack.min(t_send);
            if t >= until {
                self.now = until;
                return;
            }
            self.now = t;
            if t_ack <= t_send {
                let ev = self.ack();
                cc.on_ack(&ev);
                on_ack(cc, &ev);
            } else {
                self.send(cc);
            }
        }
    }

    fn send<C: Controller>(&mut self, cc: &mut C) {
        if self.inflight.is_empty() {
            self.first_sent_time = self.now;
            self.delivered_time = self.now;
        }
        let start = self.now.max(self.link_free_at);
        self.link_free_at = start + self.tx_time;
        self.inflight.push_back(Sent {
            sent: self.now,
            ack_at: start + self.base_rtt,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
        });
        self.inflight_bytes += self.mss;
        cc.on_send(self.now, self.mss, self.inflight_bytes);
        self.next_send_at = match cc.pacing_rate() {
            Some(r) if r > 0.0 => self.now + (self.mss as f64 / r * 1e12) as Time,
            _ => self.now,
        };
    }

    fn ack(&mut self) -> AckEvent {
        let Some(p) = self.inflight.pop_front() else {
            unreachable!("ACK without a packet in flight")
        };
        self.inflight_bytes -= self.mss;
        self.delivered += self.mss;
        self.delivered_time = self.now;
        self.first_sent_time = p.sent;
        let send_elapsed = p.sent - p.first_sent_time;
        let ack_elapsed = self.now - p.delivered_time;
        let interval = send_elapsed.max(ack_elapsed);
        let rtt = self.now - p.sent;
        self.min_rtt = self.min_rtt.min(rtt);
        self.srtt = if self.srtt == 0 {
            rtt
        } else {
            (7 * self.srtt + rtt) / 8
        };
        // Intervals shorter than the minimum RTT give unreliable samples (the draft's rule).
        let delivery_rate = (interval >= self.min_rtt)
            .then(|| (self.delivered - p.delivered) as f64 / crate::time::to_secs(interval));
        AckEvent {
            now: self.now,
            acked_bytes: self.mss,
            rtt: Some(rtt),
            rtt_last: Some(rtt),
            srtt: self.srtt,
            min_rtt: self.min_rtt,
            bytes_in_flight: self.inflight_bytes,
            in_recovery: false,
            in_cwnd_reduction: false,
            delivery_rate,
            app_limited: false,
            delivered: self.delivered,
            prior_delivered: p.delivered,
            cwnd_unused: false,
            ece: false,
        }
    }
}
