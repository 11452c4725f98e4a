//! Linux's HyStart (`net/ipv4/tcp_cubic.c`, 6.x): CUBIC leaves slow start (ssthresh = cwnd)
//! when, in one round, either
//! - the **ACK train** — ACKs arriving no more than `ack_delta` apart since the round's first
//!   ACK — lasts longer than half of (the minimum delay + an aggregation cushion), i.e. the
//!   window already spans half the path's RTT at the rate the ACKs return; or
//! - the **delay** — the smallest of the round's first `min_samples` RTT samples, and of every
//!   later one — exceeds the minimum delay by `clamp(min_delay/8, 4 ms, 16 ms)`.
//!
//! Checked only at windows of `low_window` segments or more. The cushion is Linux's
//! `hystart_ack_delay`: the time to send four GSO-sized bursts at the pacing rate Linux
//! computes in slow start (2·cwnd/srtt), capped at 1 ms. Unlike HyStart++ (RFC 9406,
//! [`super::hystart`]) there is no conservative phase: the exit is final until a timeout
//! resets it.
//!
//! Readings: rounds are counted from delivery counts ([`super::round::RoundCounter`]) where
//! Linux compares SND.UNA with the SND.NXT of the round's start — the same ACK ends a round
//! in both; the sample is the RTT of the most recently sent segment the ACK delivered
//! (Linux's `ca_rtt_us`, [`AckEvent::rtt_last`]); senders here are not paced, so the
//! threshold is halved as Linux does without pacing.

use super::round::RoundCounter;
use super::AckEvent;
use crate::time::{Time, MS, SEC};
use crate::units::Duration;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinuxHystartConfig {
    /// Detect by the ACK train.
    pub ack_train: bool,
    /// Detect by the rise in delay.
    pub delay: bool,
    /// Smallest window (segments) at which either detection runs.
    pub low_window: u32,
    /// Largest gap between two ACKs of one train.
    pub ack_delta: Duration,
    /// Bounds of the delay threshold (min_delay/8 clamped into them).
    pub delay_thresh_min: Duration,
    pub delay_thresh_max: Duration,
    /// RTT samples a round takes before its minimum is compared.
    pub min_samples: u32,
    /// GSO burst size (bytes) of the aggregation cushion.
    pub gso_max_size: u32,
}

impl Default for LinuxHystartConfig {
    fn default() -> Self {
        LinuxHystartConfig {
            ack_train: true,
            delay: true,
            low_window: 16,
            ack_delta: Duration(2 * MS),
            delay_thresh_min: Duration(4 * MS),
            delay_thresh_max: Duration(16 * MS),
            min_samples: 8,
            gso_max_size: 65536,
        }
    }
}

impl LinuxHystartConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.delay_thresh_min > self.delay_thresh_max {
            return Err("hystart_linux.delay_thresh_min: must not exceed delay_thresh_max".into());
        }
        if self.min_samples == 0 {
            return Err("hystart_linux.min_samples: must be positive".into());
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct LinuxHyStart {
    cfg: LinuxHystartConfig,
    found: bool,
    rounds: RoundCounter,
    round_start: Time,
    last_ack: Time,
    curr_rtt: Time,
    sample_cnt: u32,
}

impl LinuxHyStart {
    pub fn new(cfg: LinuxHystartConfig) -> Self {
        LinuxHyStart {
            cfg,
            found: false,
            rounds: RoundCounter::default(),
            round_start: 0,
            last_ack: 0,
            curr_rtt: Time::MAX,
            sample_cnt: 0,
        }
    }

    /// Slow start was left by a detection (and stays left until [`Self::reset`]).
    pub fn found(&self) -> bool {
        self.found
    }

    /// A timeout: detection starts over (Linux's `bictcp_reset` in the Loss state).
    pub fn reset(&mut self) {
        self.found = false;
        self.curr_rtt = Time::MAX;
        self.sample_cnt = 0;
        // The train of the round under way is broken: the next ACK is more than
        // `ack_delta` after any ACK of it.
        self.last_ack = 0;
        self.round_start = 0;
    }

    /// One ACK in slow start with RTT sample `delay`, at window `cwnd_segments`, given the
    /// controller's minimum delay. True if slow start ends here.
    pub fn on_ack(
        &mut self,
        ev: &AckEvent,
        delay: Time,
        delay_min: Time,
        cwnd_bytes: u64,
        mss: u64,
    ) -> bool {
        if self.found {
            return false;
        }
        if self.rounds.on_ack(ev) {
            self.round_start = ev.now;
            self.last_ack = ev.now;
            self.curr_rtt = Time::MAX;
            self.sample_cnt = 0;
        }
        if cwnd_bytes < self.cfg.low_window as u64 * mss {
            return false;
        }
        if self.cfg.ack_train && ev.now.saturating_sub(self.last_ack) <= self.cfg.ack_delta.0 {
            self.last_ack = ev.now;
            let threshold = (delay_min + self.ack_delay(cwnd_bytes, ev.srtt)) / 2;
            if ev.now - self.round_start > threshold {
                self.found = true;
            }
        }
        if self.cfg.delay {
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < self.cfg.min_samples {
                self.sample_cnt += 1;
            } else {
                let thresh =
                    (delay_min / 8).clamp(self.cfg.delay_thresh_min.0, self.cfg.delay_thresh_max.0);
                if self.curr_rtt > delay_min + thresh {
                    self.found = true;
                }
            }
        }
        self.found
    }

    /// Linux's `hystart_ack_delay`: four GSO bursts at slow start's pacing rate
    /// (2·cwnd/srtt), at most 1 ms; none before the first RTT estimate.
    fn ack_delay(&self, cwnd_bytes: u64, srtt: Time) -> Time {
        if srtt == 0 || cwnd_bytes == 0 {
            return 0;
        }
        let burst = 4 * self.cfg.gso_max_size as u128;
        // burst / (2·cwnd/srtt) seconds, in picoseconds.
        let t = burst * srtt as u128 / (2 * cwnd_bytes as u128);
        (t.min(MS as u128)) as Time
    }
}

/// Samples right after a congestion event are left out (Linux: for a second after CUBIC's
/// epoch starts), so a queue still draining does not set the minimum delay.
pub fn sample_counts(epoch_start: Option<Time>, now: Time) -> bool {
    match epoch_start {
        Some(s) => now.saturating_sub(s) >= SEC,
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::US;

    const MSS: u64 = 1000;

    struct Round {
        delivered: u64,
    }

    impl Round {
        /// `n` ACKs of one round, `gap` apart from `t0`, each with RTT `rtt`; returns the
        /// index of the ACK that ended slow start.
        fn run(
            &mut self,
            h: &mut LinuxHyStart,
            t0: Time,
            n: u64,
            gap: Time,
            rtt: Time,
            delay_min: Time,
            cwnd: u64,
        ) -> Option<u64> {
            let start = self.delivered;
            for i in 0..n {
                self.delivered += 1;
                let ev = AckEvent {
                    now: t0 + i * gap,
                    srtt: delay_min,
                    delivered: self.delivered,
                    prior_delivered: start,
                    ..Default::default()
                };
                if h.on_ack(&ev, rtt, delay_min, cwnd * MSS, MSS) {
                    return Some(i);
                }
            }
            None
        }
    }

    fn only(ack_train: bool, delay: bool) -> LinuxHyStart {
        LinuxHyStart::new(LinuxHystartConfig {
            ack_train,
            delay,
            ..Default::default()
        })
    }

    #[test]
    fn ack_train_ends_slow_start_past_half_the_min_delay_plus_cushion() {
        // 20 ms min delay, cwnd 40 segments: cushion = 4·65536 B / (2·40 000 B / 20 ms)
        // = 65.5 ms → capped at 1 ms; threshold (20 + 1)/2 = 10.5 ms. ACKs 0.25 ms apart:
        // the ACK at 10.75 ms (index 43) is the first past it.
        let mut h = only(true, false);
        let mut r = Round { delivered: 0 };
        let hit = r.run(&mut h, 0, 60, 250 * US, 20 * MS, 20 * MS, 40);
        assert_eq!(hit, Some(43));
        assert!(h.found());
    }

    #[test]
    fn a_gap_in_the_train_stops_it_for_the_round() {
        let mut h = only(true, false);
        let mut r = Round { delivered: 0 };
        // 3 ms between ACKs: longer than ack_delta (2 ms), so no train in this round.
        assert_eq!(r.run(&mut h, 0, 20, 3 * MS, 20 * MS, 20 * MS, 40), None);
        // The next round's train starts at its first ACK.
        let t = 100 * MS;
        assert_eq!(
            r.run(&mut h, t, 60, 250 * US, 20 * MS, 20 * MS, 40),
            Some(43)
        );
    }

    #[test]
    fn below_the_low_window_nothing_is_detected() {
        let mut h = only(true, true);
        let mut r = Round { delivered: 0 };
        assert_eq!(r.run(&mut h, 0, 60, 250 * US, 40 * MS, 20 * MS, 15), None);
    }

    #[test]
    fn delay_rise_after_eight_samples_ends_slow_start() {
        // min delay 40 ms → threshold clamp(5 ms, 4, 16) = 5 ms. Samples at 45 ms do not
        // exceed it; at 45.001 ms the ninth sample (index 8) is the first compared.
        let mut h = only(false, true);
        let mut r = Round { delivered: 0 };
        assert_eq!(r.run(&mut h, 0, 30, 250 * US, 45 * MS, 40 * MS, 40), None);
        let hit = r.run(&mut h, SEC, 30, 250 * US, 45 * MS + MS / 1000, 40 * MS, 40);
        assert_eq!(hit, Some(8));
    }

    #[test]
    fn delay_threshold_is_clamped_to_four_and_sixteen_ms() {
        // min delay 8 ms: 8/8 = 1 ms → 4 ms. 11.9 ms stays, 12.1 ms exits.
        let mut h = only(false, true);
        let mut r = Round { delivered: 0 };
        assert_eq!(
            r.run(&mut h, 0, 20, 250 * US, 11_900 * US, 8 * MS, 40),
            None
        );
        assert_eq!(
            r.run(&mut h, SEC, 20, 250 * US, 12_100 * US, 8 * MS, 40),
            Some(8)
        );
        // min delay 200 ms: 25 ms → 16 ms.
        let mut h = only(false, true);
        let mut r = Round { delivered: 0 };
        assert_eq!(r.run(&mut h, 0, 20, 3 * MS, 215 * MS, 200 * MS, 40), None);
        assert_eq!(
            r.run(&mut h, SEC, 20, 3 * MS, 217 * MS, 200 * MS, 40),
            Some(8)
        );
    }

    #[test]
    fn the_cushion_shrinks_at_high_rates() {
        // srtt 100 µs, cwnd 100 segments of 1000 B: 2·100 kB / 100 µs = 2 GB/s; four 64 KiB
        // bursts take 131 µs < 1 ms.
        let h = only(true, false);
        let d = h.ack_delay(100 * MSS, 100 * US);
        assert_eq!(d, 4 * 65536 * 100 * US / (2 * 100 * MSS));
        assert_eq!(h.ack_delay(10 * MSS, 20 * MS), MS);
    }

    #[test]
    fn reset_after_a_timeout_detects_again() {
        let mut h = only(true, false);
        let mut r = Round { delivered: 0 };
        assert!(r
            .run(&mut h, 0, 60, 250 * US, 20 * MS, 20 * MS, 40)
            .is_some());
        assert_eq!(r.run(&mut h, SEC, 60, 250 * US, 20 * MS, 20 * MS, 40), None);
        h.reset();
        assert!(r
            .run(&mut h, 2 * SEC, 60, 250 * US, 20 * MS, 20 * MS, 40)
            .is_some());
    }

    #[test]
    fn samples_within_a_second_of_an_epoch_do_not_count() {
        assert!(sample_counts(None, 5 * SEC));
        assert!(!sample_counts(Some(5 * SEC), 5 * SEC + 999 * MS));
        assert!(sample_counts(Some(5 * SEC), 6 * SEC));
    }
}
