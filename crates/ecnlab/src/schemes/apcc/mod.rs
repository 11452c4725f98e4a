//! APCC — active precise congestion control at a campus Wi-Fi access point (Yang, Huang et
//! al.): the AP computes a target rate from the wireless capacity and its queue, shares it
//! among the active flows and writes each flow's share, as a window, into the receive window
//! of the client's ACKs. Senders are unmodified: their window is `min(cwnd, rwnd)`.
//!
//! - Target rate (eq. 1): `R = η·B − max((Q − K)·MSS / δ, 0)`, B the wireless port's rate
//!   now, Q its queue in packets (converted to bytes with the flows' MSS), η = 0.95,
//!   K = 20 packets, δ = 80 ms; never below 0.
//! - Shares: equal among active flows (the paper's evaluation, pHost's rule) or in
//!   proportion to each flow's RTT (eq. 2, `allocation = "rtt"`).
//! - Window: `w = max(2, ⌊r·RTT/MSS⌋)` segments, in the client's window-scale unit (rounded
//!   up so at least `w` segments are allowed), written only when below the client's own.
//! - Per-flow RTT: the wired part from the handshake's timing at the AP
//!   ([`crate::ap::Session::wired_rtt`]) plus the wireless part from the queue as Zhuge
//!   decomposes it: qLong = queued bytes / B, qShort = `head_delay`, tx = one MSS at B.
//!
//! # Readings of the paper
//!
//! - **Active flows, `expiry_rtts`.** §3.4: a flow with no data at the AP within its RTT
//!   is inactive ("expiration time is set to be the RTT value of the flow"); default 1 RTT.
//!   A window-limited flow sends its window once per RTT, so at one RTT it sits on the edge;
//!   2 is the reading that gives it slack. The AP keeps what it learnt from the handshake
//!   (window scale, wired RTT) after a flow goes idle, so a flow that resumes is managed
//!   again; the paper deletes the entry, which would leave it unmanaged.
//! - **qShort, `head_delay`.** Zhuge measures the head-of-line wait per packet; the AP here
//!   uses a constant, default 100 µs, the per-batch overhead of the wireless link model.
//! - **Q in packets.** Eq. 1's K is in packets; Q is the queue's packets times the MSS of the
//!   flow whose ACK is passing (what "packets → bytes via MSS" reads as).
//! - **B and the RTT.** B is the wireless port's rate in force (the paper's AP "roughly
//!   estimate[s]" it from CSI, §3.2): exact and immediate here. The wired part of a flow's RTT
//!   is measured once, at the handshake; qShort is the constant `head_delay`, so a packet's
//!   wait for the rest of its batch is not in the estimate. §3.4's check whether a flow can use
//!   its share (a flow in slow start) is not made: every active flow gets 1/N at once.
//! - **Connections not seen opening** (no SYN through this AP: the window scale is unknown)
//!   are left alone and counted, rather than guessed.

use crate::ap::{is_client_ack, lower_window, Direction, Sessions};
use crate::marker::PortView;
use crate::net::{Forward, NodeElement};
use crate::packet::{Packet, L4};
use crate::time::{to_secs, Time, MS, SEC, US};
use crate::units::Duration;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Allocation {
    /// Equal shares among the active flows.
    Equal,
    /// Shares in proportion to each flow's RTT (eq. 2).
    Rtt,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApccConfig {
    /// The AP's wireless egress port ("ap->wlan"): the queue and capacity eq. 1 reads.
    pub port: String,
    #[serde(default = "default_eta")]
    pub eta: f64,
    /// Queue threshold K, packets.
    #[serde(default = "default_k")]
    pub k: f64,
    /// Time to drain the queue to K.
    #[serde(default = "default_delta")]
    pub delta: Duration,
    #[serde(default = "default_allocation")]
    pub allocation: Allocation,
    /// Smallest window written, segments.
    #[serde(default = "default_min_window")]
    pub min_window: u32,
    /// A flow without downstream data for this many of its RTTs is inactive.
    #[serde(default = "default_expiry")]
    pub expiry_rtts: f64,
    /// Head-of-line wait (qShort) in the wireless part of the RTT.
    #[serde(default = "default_head_delay")]
    pub head_delay: Duration,
    /// MSS used before a connection has shown one.
    #[serde(default = "default_mss")]
    pub mss: u32,
}

fn default_eta() -> f64 {
    0.95
}
fn default_k() -> f64 {
    20.0
}
fn default_delta() -> Duration {
    Duration(80 * MS)
}
fn default_allocation() -> Allocation {
    Allocation::Equal
}
fn default_min_window() -> u32 {
    2
}
fn default_expiry() -> f64 {
    1.0
}
fn default_head_delay() -> Duration {
    Duration(100 * US)
}
fn default_mss() -> u32 {
    1448
}

impl ApccConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(format!("eta: must be in (0, 1], got {}", self.eta));
        }
        if !(self.k >= 0.0 && self.k.is_finite()) {
            return Err(format!(
                "k: must be a non-negative number of packets, got {}",
                self.k
            ));
        }
        if self.delta.0 == 0 {
            return Err("delta: must be positive".into());
        }
        if self.min_window == 0 {
            return Err("min_window: must be at least 1 segment".into());
        }
        if !(self.expiry_rtts > 0.0 && self.expiry_rtts.is_finite()) {
            return Err(format!(
                "expiry_rtts: must be positive, got {}",
                self.expiry_rtts
            ));
        }
        if self.mss == 0 {
            return Err("mss: must be positive".into());
        }
        Ok(())
    }
}

/// What the AP did, for the run's report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApccCounters {
    /// ACK windows lowered.
    pub rewritten: u64,
    /// ACKs whose own window was already at or below the AP's.
    pub receiver_lower: u64,
    /// ACKs of connections whose opening the AP did not see.
    pub unknown_scale: u64,
}

/// The eq. 1 target rate in bits per second: `η·B − max((Q − K)·mss·8/δ, 0)`, at least 0.
pub fn target_rate(cfg: &ApccConfig, capacity_bps: f64, queue_pkts: f64, mss: u32) -> f64 {
    let excess_bits = (queue_pkts - cfg.k).max(0.0) * mss as f64 * 8.0;
    (cfg.eta * capacity_bps - excess_bits / to_secs(cfg.delta.0)).max(0.0)
}

/// Window in segments for a share `rate_bps` over `rtt`: `max(min, ⌊r·RTT/MSS⌋)`.
pub fn window_segments(cfg: &ApccConfig, rate_bps: f64, rtt: Time, mss: u32) -> u64 {
    let w = (rate_bps * to_secs(rtt) / (8.0 * mss as f64)).floor();
    (w as u64).max(cfg.min_window as u64)
}

pub struct Apcc {
    cfg: ApccConfig,
    /// Index of the wireless port among the node's ports.
    port: usize,
    sessions: Sessions,
    /// Active flows and the sum of their RTTs, recounted at most every `RECOUNT`.
    active: u32,
    rtt_sum: f64,
    counted_at: Option<Time>,
    swept_at: Time,
    pub counters: ApccCounters,
}

/// Counting active flows scans the table; once per millisecond keeps that off the per-ACK
/// path with thousands of flows, well inside any flow's RTT.
const RECOUNT: Time = MS;
/// How often the table is swept, and how long a silent connection is remembered.
const SWEEP: Time = SEC;
const FORGET: Time = 60 * SEC;

impl Apcc {
    pub fn new(cfg: ApccConfig, port: usize) -> Result<Self, String> {
        cfg.validate()?;
        Ok(Apcc {
            cfg,
            port,
            sessions: Sessions::default(),
            active: 0,
            rtt_sum: 0.0,
            counted_at: None,
            swept_at: 0,
            counters: ApccCounters::default(),
        })
    }

    /// The flow's RTT estimate: wired part plus qLong + qShort + tx at the wireless port.
    fn rtt(&self, wired: Time, v: &PortView, mss: u32) -> Time {
        let tx = (mss as u128 * 8 * SEC as u128 / v.rate_bps.max(1) as u128) as Time;
        wired + v.drain_time() + self.cfg.head_delay.0 + tx
    }

    fn recount(&mut self, now: Time, v: &PortView) {
        if self.counted_at.is_some_and(|t| now < t + RECOUNT) {
            return;
        }
        self.counted_at = Some(now);
        let (mut n, mut sum) = (0u32, 0.0);
        let fallback = self.cfg.mss;
        let expiry = self.cfg.expiry_rtts;
        if now >= self.swept_at + SWEEP {
            self.swept_at = now;
            // Forget connections that closed, or went silent for a long time.
            self.sessions.table.retain(|s| {
                let idle = now.saturating_sub(s.last_data);
                !(s.closing && idle > SWEEP || idle > FORGET)
            });
        }
        for s in self.sessions.table.values() {
            if s.max_payload == 0 {
                continue;
            }
            let rtt = self.rtt(s.wired_rtt, v, s.mss(fallback));
            if (now - s.last_data) as f64 <= expiry * rtt as f64 {
                n += 1;
                sum += rtt as f64;
            }
        }
        self.active = n;
        self.rtt_sum = sum;
    }

    /// The ACK of connection `slot` passes upstream: lower its window to the flow's share.
    fn on_ack(&mut self, now: Time, slot: usize, t: &mut crate::wire::TcpRepr, v: &PortView) {
        let s = self.sessions.table.value(slot);
        let Some(shift) = s.client_window_shift() else {
            self.counters.unknown_scale += 1;
            return;
        };
        let mss = s.mss(self.cfg.mss);
        let wired = s.wired_rtt;
        let own_active = s.max_payload > 0;
        self.recount(now, v);
        let rtt = self.rtt(wired, v, mss);
        let n = self.active.max(own_active as u32).max(1);
        let r_total = target_rate(&self.cfg, v.rate_bps as f64, v.backlog_pkts as f64, mss);
        let r = match self.cfg.allocation {
            Allocation::Equal => r_total / n as f64,
            Allocation::Rtt => {
                let sum = if self.rtt_sum > 0.0 {
                    self.rtt_sum
                } else {
                    rtt as f64
                };
                (r_total * rtt as f64 / sum).min(r_total)
            }
        };
        let w = window_segments(&self.cfg, r, rtt, mss);
        if lower_window(t, w * mss as u64, shift) {
            self.counters.rewritten += 1;
        } else {
            self.counters.receiver_lower += 1;
        }
    }
}

impl NodeElement for Apcc {
    fn on_forward(
        &mut self,
        now: Time,
        out_port: usize,
        pkt: &mut Packet,
        ports: &[PortView],
    ) -> Forward {
        let Some((slot, dir)) = self.sessions.observe_leaving(now, out_port, self.port, pkt) else {
            return Forward::Pass;
        };
        if dir == Direction::Up {
            if let L4::Tcp(t) = &mut pkt.l4 {
                if is_client_ack(t) {
                    let v = &ports[self.port];
                    self.on_ack(now, slot, t, &v);
                }
            }
        }
        Forward::Pass
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("windows_lowered", c.rewritten),
            ("receiver_window_lower", c.receiver_lower),
            ("unknown_window_scale", c.unknown_scale),
            ("connections", self.sessions.table.len() as u64),
        ]
    }
}

#[cfg(test)]
mod tests;
