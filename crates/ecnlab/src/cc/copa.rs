//! Copa (Arun and Balakrishnan, NSDI 2018), default mode: the sender aims at the target rate
//! `λt = 1/(δ·dq)` packets per second, dq the queueing delay it measures, and moves its window
//! towards it.
//!
//! On every ACK:
//! - RTTmin is the least RTT sample of the last 10 s, RTTstanding the least of the last
//!   srtt/2, and dq = RTTstanding − RTTmin;
//! - the current rate is λ = cwnd/RTTstanding; if λ ≤ λt (or dq = 0) the window grows by
//!   v/(δ·cwnd) packets per packet acknowledged, else it shrinks by as much (no lower than
//!   `min_window`), so it moves about v/δ packets per round trip;
//! - the velocity v starts at 1; once per window (a round of delivered data) the window is
//!   compared with its value a window before: the same direction as last time doubles v, but
//!   only once the direction has held for three RTTs (srtt); a change of direction resets v
//!   to 1, as does a step against the current direction while v > 1.
//!
//! Slow start: the window doubles each round trip (it grows by what each ACK acknowledges)
//! until the first ACK that finds λ > λt. Packets are paced at 2·cwnd/RTTstanding. δ = 0.5
//! (the paper's default mode). Losses do not change the window (default mode reacts to
//! delay only); a timeout leaves one segment.
//!
//! # Readings
//!
//! - Competitive mode (δ adapted by AIMD when buffer-filling flows hold the queue) is not
//!   modelled: the flows here share a queue only with other flows of the same sender kind.
//! - The change per ACK is at most the window (the Zhuge authors' ns-3 model's cap), and the
//!   window never falls below `min_window` = 4 segments (that model's kMinCwndSegment); the
//!   paper gives neither.
//! - srtt is the connection's (RFC 6298); that ns-3 model uses the last sample in its place
//!   and updates once per half srtt, where the paper updates on every ACK, as here.

use super::newreno::check_mss;
use super::round::RoundCounter;
use super::{AckEvent, Controller, Signal};
use crate::time::{to_secs, Time, SEC};
use crate::units::Duration;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CopaConfig {
    /// Initial window in segments (the paper: 10).
    pub initial_window: u32,
    /// δ of the target rate 1/(δ·dq), in packets⁻¹ (default mode 0.5).
    pub delta: f64,
    /// Span of the RTTmin filter.
    pub min_rtt_window: Duration,
    /// Smallest window, segments.
    pub min_window: u32,
    /// Pacing rate over cwnd/RTTstanding.
    pub pacing_gain: f64,
}

impl Default for CopaConfig {
    fn default() -> Self {
        CopaConfig {
            initial_window: 10,
            delta: 0.5,
            min_rtt_window: Duration(10 * SEC),
            min_window: 4,
            pacing_gain: 2.0,
        }
    }
}

/// The least sample of a sliding time window: a deque of candidates increasing in value.
#[derive(Clone, Debug, Default)]
struct WindowedMin {
    q: VecDeque<(Time, Time)>,
}

impl WindowedMin {
    fn push(&mut self, now: Time, v: Time) {
        while self.q.back().is_some_and(|b| b.1 >= v) {
            self.q.pop_back();
        }
        self.q.push_back((now, v));
    }

    /// The least sample taken within `window` of `now` (the newest if all are older).
    fn get(&mut self, now: Time, window: Time) -> Option<Time> {
        while self.q.len() > 1 && now.saturating_sub(self.q[0].0) > window {
            self.q.pop_front();
        }
        self.q.front().map(|e| e.1)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    None,
    Up,
    Down,
}

pub struct Copa {
    cfg: CopaConfig,
    mss: f64,
    /// Window in bytes.
    cwnd: f64,
    slow_start: bool,
    rtt_min: WindowedMin,
    rtt_standing: WindowedMin,
    standing: Option<Time>,
    velocity: f64,
    direction: Direction,
    direction_since: Time,
    window_cwnd: f64,
    rounds: RoundCounter,
}

impl Copa {
    pub fn new(mss: u32, cfg: CopaConfig) -> Result<Self, String> {
        check_mss(mss)?;
        if !(cfg.delta > 0.0 && cfg.delta.is_finite()) {
            return Err(format!("delta: must be positive, got {}", cfg.delta));
        }
        if cfg.initial_window == 0 || cfg.min_window == 0 {
            return Err("initial_window: windows must be at least one segment".into());
        }
        if cfg.min_rtt_window.0 == 0 {
            return Err("min_rtt_window: must be positive".into());
        }
        if !(cfg.pacing_gain > 0.0 && cfg.pacing_gain.is_finite()) {
            return Err(format!(
                "pacing_gain: must be positive, got {}",
                cfg.pacing_gain
            ));
        }
        let mss = mss as f64;
        let cwnd = cfg.initial_window as f64 * mss;
        Ok(Copa {
            cfg,
            mss,
            cwnd,
            slow_start: true,
            rtt_min: WindowedMin::default(),
            rtt_standing: WindowedMin::default(),
            standing: None,
            velocity: 1.0,
            direction: Direction::None,
            direction_since: 0,
            window_cwnd: cwnd,
            rounds: RoundCounter::default(),
        })
    }

    /// Whether the rate cwnd/RTTstanding is at most the target 1/(δ·dq).
    fn below_target(&self, standing: Time, min: Time) -> bool {
        let dq = standing.saturating_sub(min);
        if dq == 0 {
            return true;
        }
        let target = 1.0 / (self.cfg.delta * to_secs(dq));
        let rate = self.cwnd / self.mss / to_secs(standing);
        rate <= target
    }

    fn turn(&mut self, now: Time, to: Direction) {
        self.direction = to;
        self.velocity = 1.0;
        self.direction_since = now;
        self.window_cwnd = self.cwnd;
    }

    /// Once per window: the direction the window moved over it, and the velocity.
    fn end_of_window(&mut self, now: Time, srtt: Time) {
        let moved = if self.cwnd > self.window_cwnd {
            Direction::Up
        } else {
            Direction::Down
        };
        if moved == self.direction {
            if now.saturating_sub(self.direction_since) > 3 * srtt {
                self.velocity *= 2.0;
            }
        } else {
            self.velocity = 1.0;
            self.direction = moved;
            self.direction_since = now;
        }
        self.window_cwnd = self.cwnd;
    }

    pub fn velocity(&self) -> f64 {
        self.velocity
    }

    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }
}

impl Controller for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    fn set_initial_window(&mut self, bytes: u64) {
        self.cwnd = bytes as f64;
        self.window_cwnd = self.cwnd;
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if let Some(rtt) = ev.rtt {
            self.rtt_min.push(ev.now, rtt);
            self.rtt_standing.push(ev.now, rtt);
        }
        let Some(min) = self.rtt_min.get(ev.now, self.cfg.min_rtt_window.0) else {
            return;
        };
        let srtt = if ev.srtt > 0 { ev.srtt } else { min };
        let Some(standing) = self.rtt_standing.get(ev.now, srtt / 2) else {
            return;
        };
        self.standing = Some(standing);
        let up = self.below_target(standing, min);
        let new_window = self.rounds.on_ack(ev);
        if self.slow_start {
            if up {
                self.cwnd += ev.acked_bytes as f64;
                if new_window {
                    self.window_cwnd = self.cwnd;
                }
                return;
            }
            self.slow_start = false;
            self.turn(ev.now, Direction::Down);
        } else if new_window {
            self.end_of_window(ev.now, srtt);
        }
        let acked_pkts = ev.acked_bytes as f64 / self.mss;
        let pkts = self.cwnd / self.mss;
        let change =
            (acked_pkts * self.velocity / (self.cfg.delta * pkts) * self.mss).min(self.cwnd);
        if up {
            if self.direction != Direction::Up && self.velocity > 1.0 {
                self.turn(ev.now, Direction::Up);
            }
            self.cwnd += change;
        } else {
            if self.direction != Direction::Down && self.velocity > 1.0 {
                self.turn(ev.now, Direction::Down);
            }
            self.cwnd = (self.cwnd - change).max(self.cfg.min_window as f64 * self.mss);
        }
    }

    fn on_signal(&mut self, _ev: &AckEvent, _signal: Signal) {}

    fn on_loss(&mut self, _now: Time, _bytes_in_flight: u64) {}

    fn on_rto(&mut self, now: Time, _bytes_in_flight: u64) {
        self.cwnd = self.mss;
        self.turn(now, Direction::None);
    }

    fn window(&self) -> u64 {
        self.cwnd.max(self.mss) as u64
    }

    fn ssthresh(&self) -> u64 {
        u64::MAX
    }

    fn pacing_rate(&self) -> Option<f64> {
        let s = self.standing?;
        (s > 0).then(|| self.cfg.pacing_gain * self.cwnd / to_secs(s))
    }

    fn sample(&self, out: &mut crate::net::Samples) {
        out.push(("copa_velocity", self.velocity));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::{AckClock, PathSim};
    use crate::time::MS;

    const MSS: u64 = 1000;

    fn copa() -> Copa {
        Copa::new(MSS as u32, CopaConfig::default()).unwrap()
    }

    fn ack(now: Time, rtt: Time, srtt: Time) -> AckEvent {
        AckEvent {
            now,
            acked_bytes: MSS,
            rtt: Some(rtt),
            srtt,
            ..Default::default()
        }
    }

    /// With no queueing delay the target rate is unbounded: slow start doubles the window
    /// every round trip (10 → 20 → 40 → 80 segments).
    #[test]
    fn slow_start_doubles_per_round_trip_while_no_queue_forms() {
        let mut cc = copa();
        let mut clock = AckClock::new(0, 40 * MS, MSS);
        let mut at_round = vec![cc.window()];
        for _ in 0..3 {
            clock.round(&mut cc, &mut |_, _| {});
            at_round.push(cc.window());
        }
        assert_eq!(at_round, vec![10_000, 20_000, 40_000, 80_000]);
        assert!(cc.in_slow_start());
    }

    /// The target on hand-computed numbers: RTTmin 40 ms, RTTstanding 50 ms (dq = 10 ms), so
    /// λt = 1/(0.5 · 0.01 s) = 200 packets/s. A window of 5 segments sends 5/0.05 s = 100
    /// packets/s, below it: each ACK adds v/(δ·cwnd) = 1/(0.5·5) = 0.4 segment. At 20
    /// segments (400 packets/s) it is above: each ACK takes 1/(0.5·20) = 0.1 segment.
    #[test]
    fn the_window_moves_towards_one_over_delta_dq() {
        for (segments, expect) in [(5u64, 5_400u64), (20, 19_900)] {
            let mut cc = copa();
            cc.slow_start = false;
            cc.set_initial_window(segments * MSS);
            // Two samples that acknowledge nothing: 40 ms, and 50 ms 10 ms later.
            cc.on_ack(&AckEvent {
                acked_bytes: 0,
                ..ack(SEC, 40 * MS, 50 * MS)
            });
            cc.on_ack(&AckEvent {
                acked_bytes: 0,
                ..ack(SEC + 10 * MS, 50 * MS, 50 * MS)
            });
            let before = cc.window();
            assert_eq!(before, segments * MSS);
            // 30 ms on, the 40-ms sample is out of the standing window, not of RTTmin's.
            cc.on_ack(&ack(SEC + 30 * MS, 50 * MS, 50 * MS));
            assert_eq!(cc.window(), expect, "{segments} segments");
        }
    }

    /// One flow alone on a 10 Mb/s, 40 ms path: Copa's equilibrium puts dq = 1/(δ·λ), a
    /// standing queue of 1/δ = 2 packets, around which its window oscillates. Over 10–20 s
    /// it keeps the link busy with a queue of about that.
    #[test]
    fn one_flow_fills_the_link_with_a_queue_of_a_few_packets() {
        let mut cc = copa();
        let cap = 1_250_000;
        let base = 40 * MS;
        let mut path = PathSim::new(MSS, cap, base);
        let (mut acks, mut queue_sum, mut from) = (0u64, 0.0, None);
        path.run(&mut cc, 20 * SEC, |_, ev| {
            if ev.now >= 10 * SEC {
                from.get_or_insert(ev.delivered);
                acks += 1;
                let tx = (MSS * SEC / cap) as f64;
                queue_sum += (ev.rtt.unwrap() - base) as f64 / tx;
            }
        });
        let rate = acks * MSS / 10;
        assert!(rate as f64 > 0.9 * cap as f64, "{rate} B/s");
        let mean_queue = queue_sum / acks as f64;
        // 2.47 packets: the 2 of the equilibrium and the oscillation around it.
        assert!(
            (1.5..4.0).contains(&mean_queue),
            "mean queue {mean_queue} packets"
        );
    }

    #[test]
    fn a_timeout_leaves_one_segment_and_losses_leave_the_window() {
        let mut cc = copa();
        cc.on_loss(SEC, 10_000);
        assert_eq!(cc.window(), 10_000);
        cc.on_rto(SEC, 10_000);
        assert_eq!(cc.window(), MSS);
    }
}
