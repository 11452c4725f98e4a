//! Delivery-rate estimation after draft-cheng-iccrg-delivery-rate-estimation-02: per-packet
//! snapshots of the connection's delivery counters taken at transmission, and per-ACK rate
//! samples from the most recently sent packet the ACK delivers. Quantities are in bytes.

use super::scoreboard::{Seg, APP_LIMITED};
use crate::time::Time;

/// Connection-wide delivery state (the draft's C.* variables).
#[derive(Clone, Debug, Default)]
pub struct RateState {
    /// Bytes delivered (cumulatively ACKed or SACKed) so far.
    pub delivered: u64,
    pub delivered_time: Time,
    pub first_sent_time: Time,
    /// Non-zero while application-limited: the `delivered` value at which the last packet
    /// sent while application-limited will have been delivered.
    pub app_limited_until: u64,
}

/// A rate sample under construction for one ACK (the draft's rs.*).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    pub prior_delivered: u64,
    pub prior_time: Time,
    pub send_elapsed: Time,
    pub ack_elapsed: Time,
    pub is_app_limited: bool,
    /// Send time of the packet the sample is taken from.
    newest_sent: Time,
    has: bool,
}

impl RateState {
    /// As `Default` makes it (`const`: a connection's idle sending half is a static).
    pub const fn new() -> Self {
        RateState {
            delivered: 0,
            delivered_time: 0,
            first_sent_time: 0,
            app_limited_until: 0,
        }
    }

    /// Snapshot for a packet about to be sent. `nothing_in_flight`: SND.NXT == SND.UNA in the
    /// draft; the sending interval then restarts.
    pub fn on_send(&mut self, now: Time, nothing_in_flight: bool, seg: &mut Seg) {
        if nothing_in_flight {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        seg.first_sent_time = self.first_sent_time;
        seg.delivered_time = self.delivered_time;
        seg.delivered = self.delivered;
        seg.sent = now;
        if self.app_limited_until != 0 {
            seg.flags |= APP_LIMITED;
        } else {
            seg.flags &= !APP_LIMITED;
        }
    }

    /// A packet was delivered (newly cumulatively ACKed or SACKed) at `now`.
    pub fn on_delivered(&mut self, now: Time, seg: &Seg, rs: &mut RateSample) {
        self.delivered += seg.len as u64;
        self.delivered_time = now;
        // Prefer the most recently sent packet: it carries the freshest counters.
        if !rs.has
            || seg.sent > rs.newest_sent
            || (seg.sent == rs.newest_sent && seg.delivered > rs.prior_delivered)
        {
            rs.has = true;
            rs.prior_delivered = seg.delivered;
            rs.prior_time = seg.delivered_time;
            rs.is_app_limited = seg.has(APP_LIMITED);
            rs.send_elapsed = seg.sent.saturating_sub(seg.first_sent_time);
            rs.ack_elapsed = self.delivered_time.saturating_sub(seg.delivered_time);
            rs.newest_sent = seg.sent;
            self.first_sent_time = seg.sent;
        }
    }

    /// Ends the ACK's processing: clears the app-limited mark once its data is delivered and
    /// returns (delivered in the sample, rate in bytes/s) if the sample is valid. An interval
    /// shorter than `min_rtt` is discarded (the draft: ACK compression would inflate it).
    pub fn finish(&mut self, rs: &RateSample, min_rtt: Time) -> Option<(u64, f64)> {
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        if !rs.has {
            return None;
        }
        let delivered = self.delivered - rs.prior_delivered;
        let interval = rs.send_elapsed.max(rs.ack_elapsed);
        if interval == 0 || interval < min_rtt {
            return None;
        }
        Some((delivered, delivered as f64 * 1e12 / interval as f64))
    }

    /// The application has nothing to send and the window is not full: mark the flight
    /// application-limited (the draft's C.app_limited).
    pub fn mark_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited_until = (self.delivered + bytes_in_flight).max(1);
    }
}

impl RateSample {
    pub fn is_valid(&self) -> bool {
        self.has
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn steady_flow_measures_its_rate() {
        // One 1000-byte packet every 1 ms, each delivered 10 ms after it is sent.
        let mut c = RateState::default();
        let mut segs = vec![];
        let mut checked = 0;
        for i in 0..60u64 {
            let mut s = Seg {
                len: 1000,
                ..Default::default()
            };
            c.on_send(i * MS, i == 0, &mut s);
            segs.push(s);
            if i >= 10 {
                let mut rs = RateSample::default();
                let now = i * MS;
                c.on_delivered(now, &segs[(i - 10) as usize], &mut rs);
                let sample = c.finish(&rs, 5 * MS);
                // Packets sent once deliveries flow measure the steady rate exactly.
                if i >= 30 {
                    let (d, r) = sample.unwrap();
                    assert_eq!(d, 11_000); // 11 packets over 11 ms
                    assert!((r - 1e6).abs() / 1e6 < 1e-9, "rate {r}");
                    checked += 1;
                }
            }
        }
        assert_eq!(c.delivered, 50_000);
        assert_eq!(checked, 30);
    }
}
