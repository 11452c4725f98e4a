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
