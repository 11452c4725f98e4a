//! HyStart++ (RFC 9406): leaves slow start when the minimum RTT of a round rises by more than
//! a threshold over the previous round's, then grows by a quarter of slow start's rate
//! (Conservative Slow Start, CSS) for a few rounds before congestion avoidance; a falling RTT
//! in CSS means the rise was spurious and slow start resumes.
//!
//! Readings: rounds are counted from delivery counts ([`super::round::RoundCounter`]) rather
//! than from SND.NXT, which ends a round on the same ACK up to one packet; only RTT samples
//! the connection produced (Karn's rule) count toward `n_rtt_sample`; the round in which CSS
//! begins counts as the first of `css_rounds`; the owner uses it only
//! in the initial slow start (after a timeout, plain slow start).

use super::round::RoundCounter;
use super::AckEvent;
use crate::time::{Time, MS};
use crate::units::Duration;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HystartConfig {
    pub min_rtt_thresh: Duration,
    pub max_rtt_thresh: Duration,
    pub min_rtt_divisor: u32,
    pub n_rtt_sample: u32,
    pub css_growth_divisor: u32,
    pub css_rounds: u32,
    /// Per-ACK growth limit in segments (RFC 9406 L: 8 without pacing); unset = unlimited
    /// (the RFC's value for paced senders).
    pub l_limit: Option<u32>,
}

impl Default for HystartConfig {
    fn default() -> Self {
        HystartConfig {
            min_rtt_thresh: Duration(4 * MS),
            max_rtt_thresh: Duration(16 * MS),
            min_rtt_divisor: 8,
            n_rtt_sample: 8,
            css_growth_divisor: 4,
            css_rounds: 5,
            l_limit: Some(8),
        }
    }
}

impl HystartConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.min_rtt_thresh > self.max_rtt_thresh {
            return Err("hystart.min_rtt_thresh: must not exceed max_rtt_thresh".into());
        }
        for (name, v) in [
            ("min_rtt_divisor", self.min_rtt_divisor),
            ("n_rtt_sample", self.n_rtt_sample),
            ("css_growth_divisor", self.css_growth_divisor),
            ("css_rounds", self.css_rounds),
        ] {
            if v == 0 {
                return Err(format!("hystart.{name}: must be positive"));
            }
        }
        if self.l_limit == Some(0) {
            return Err("hystart.l_limit: must be positive".into());
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    SlowStart,
    /// Conservative slow start, with the rounds started in it so far.
    Css(u32),
    /// Congestion avoidance (or a congestion event) ended the slow start for good.
    Done,
}

/// What the owner does with this ACK's bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Grow by min(acked, L·SMSS) / divisor.
    Grow { divisor: u32 },
    /// Leave slow start: ssthresh = cwnd.
    EnterCa,
}

#[derive(Clone, Debug)]
pub struct HyStart {
    cfg: HystartConfig,
    phase: Phase,
    rounds: RoundCounter,
    last_round_min_rtt: Time,
    current_round_min_rtt: Time,
    rtt_samples: u32,
    css_baseline_min_rtt: Time,
}

impl HyStart {
    pub fn new(cfg: HystartConfig) -> Self {
        HyStart {
            cfg,
            phase: Phase::SlowStart,
            rounds: RoundCounter::default(),
            last_round_min_rtt: Time::MAX,
            current_round_min_rtt: Time::MAX,
            rtt_samples: 0,
            css_baseline_min_rtt: Time::MAX,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Per-ACK growth limit in bytes.
    pub fn l_limit(&self, mss: u64) -> u64 {
        self.cfg.l_limit.map_or(u64::MAX, |l| l as u64 * mss)
    }

    /// A congestion event or a timeout: HyStart++ is over.
    pub fn stop(&mut self) {
        self.phase = Phase::Done;
    }

    /// One ACK in slow start.
    pub fn on_ack(&mut self, ev: &AckEvent) -> Step {
        if self.phase == Phase::Done {
            return Step::Grow { divisor: 1 };
        }
        if self.rounds.on_ack(ev) {
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = Time::MAX;
            self.rtt_samples = 0;
            if let Phase::Css(n) = self.phase {
                let n = n + 1;
                if n >= self.cfg.css_rounds {
                    self.phase = Phase::Done;
                    return Step::EnterCa;
                }
                self.phase = Phase::Css(n);
            }
        }
        // This ACK grows at the rate of the phase it arrived in; a switch applies from the
        // next one (RFC 9406 §4.2 updates cwnd before the checks).
        let step = match self.phase {
            Phase::Css(_) => Step::Grow {
                divisor: self.cfg.css_growth_divisor,
            },
            _ => Step::Grow { divisor: 1 },
        };
        if let Some(rtt) = ev.rtt {
            self.current_round_min_rtt = self.current_round_min_rtt.min(rtt);
            self.rtt_samples += 1;
        }
        let enough = self.rtt_samples >= self.cfg.n_rtt_sample;
        match self.phase {
            Phase::SlowStart => {
                if enough
                    && self.current_round_min_rtt != Time::MAX
                    && self.last_round_min_rtt != Time::MAX
                {
                    let thresh = (self.last_round_min_rtt / self.cfg.min_rtt_divisor as Time)
                        .clamp(self.cfg.min_rtt_thresh.0, self.cfg.max_rtt_thresh.0);
                    if self.current_round_min_rtt >= self.last_round_min_rtt.saturating_add(thresh)
                    {
                        self.css_baseline_min_rtt = self.current_round_min_rtt;
                        self.phase = Phase::Css(0);
                    }
                }
            }
            Phase::Css(_) => {
                if enough && self.current_round_min_rtt < self.css_baseline_min_rtt {
                    self.css_baseline_min_rtt = Time::MAX;
                    self.phase = Phase::SlowStart;
                }
            }
            Phase::Done => {}
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One round of `n` ACKs with RTT `rtt`, delivery counts advancing by 1 per packet.
    fn round(h: &mut HyStart, delivered: &mut u64, n: u64, rtt: Time) -> Vec<Step> {
        let start = *delivered;
        (0..n)
            .map(|_| {
                *delivered += 1;
                h.on_ack(&AckEvent {
                    rtt: Some(rtt),
                    delivered: *delivered,
                    // Every packet of this round was sent after the previous round's first
                    // ACK and before this round's first ACK.
                    prior_delivered: start,
                    ..Default::default()
                })
            })
            .collect()
    }

    #[test]
    fn rtt_rise_enters_css_and_css_rounds_end_slow_start() {
        let mut h = HyStart::new(HystartConfig::default());
        let mut d = 0;
        round(&mut h, &mut d, 10, 40 * MS);
        round(&mut h, &mut d, 20, 40 * MS);
        assert_eq!(h.phase(), Phase::SlowStart);
        // Threshold = clamp(40/8 = 5 ms, 4, 16): a 4 ms rise is not enough...
        round(&mut h, &mut d, 40, 44 * MS);
        assert_eq!(h.phase(), Phase::SlowStart);
        // ...nor is 49 ms over 44 ms (5 ms < 44/8 = 5.5 ms)...
        round(&mut h, &mut d, 40, 49 * MS);
        assert_eq!(h.phase(), Phase::SlowStart);
        // ...but 56 ms over 49 ms is (7 ms ≥ 6.125 ms), once 8 samples are in.
        let steps = round(&mut h, &mut d, 40, 56 * MS);
        assert_eq!(steps[7], Step::Grow { divisor: 1 });
        assert_eq!(steps[8], Step::Grow { divisor: 4 });
        assert_eq!(h.phase(), Phase::Css(0));
        for n in 1..5 {
            round(&mut h, &mut d, 40, 56 * MS);
            assert_eq!(h.phase(), Phase::Css(n));
        }
        let steps = round(&mut h, &mut d, 40, 56 * MS);
        assert_eq!(steps[0], Step::EnterCa);
        assert_eq!(h.phase(), Phase::Done);
    }

    #[test]
    fn rtt_fall_in_css_resumes_slow_start() {
        let mut h = HyStart::new(HystartConfig::default());
        let mut d = 0;
        round(&mut h, &mut d, 10, 20 * MS);
        round(&mut h, &mut d, 20, 30 * MS); // +10 ms ≥ max(20/8, 4) ms
        assert_eq!(h.phase(), Phase::Css(0));
        round(&mut h, &mut d, 20, 25 * MS);
        assert_eq!(h.phase(), Phase::SlowStart);
    }
}
