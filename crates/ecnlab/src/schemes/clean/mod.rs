//! CLEAN (Huang et al., IWQoS 2021) as the APCC paper describes it (§2.2.2, §4.2.1 (d)): an
//! ECN proxy at the access point. The AP marks what would be CE at its wireless queue, keeps
//! the marks to itself (hosts need no ECN), estimates each flow's congestion extent as DCTCP
//! does and enforces the resulting window through the receive window of the client's ACKs;
//! after a reduction the window grows back along CUBIC's curve.
//!
//! Per flow, once per round (its RTT at the AP: wired part from the handshake plus the
//! queue's drain time):
//! - F = marked / all downstream data packets of the round, a packet being marked when it
//!   finds `k` or more packets queued (DCTCP's step marking), and α ← (1 − g)·α + g·F;
//! - a round with marks: `W ← W·(1 − α/2)`, remembered as CUBIC's W_max before the cut;
//! - a round without: one segment more (DCTCP's additive increase), or CUBIC's curve
//!   `W(t) = C·(t − K)³ + W_max` from the last cut when that is larger (K = ∛(W_max·(α/2)/C),
//!   C = 0.4 segments/s³).
//!
//! The window starts unlimited (the AP leaves the flow alone) and is first set, at the first
//! marked round, to the bytes the flow delivered into the AP in that round.
//!
//! # Readings
//!
//! The CLEAN paper is not at hand; the above is what the APCC paper states plus DCTCP's and
//! CUBIC's own rules. The marks are taken at the AP's wireless queue, the campus bottleneck
//! (§2.1); the APCC paper's "CLEAN enables ECN for the switch" (§4.2.1 d) and CLEAN's title
//! ("minimize switch queue length") speak of a switch. g = 1/16. The marking threshold `k`, unset, follows DCTCP's guideline
//! K > C·RTT/7 (Alizadeh et al., SIGCOMM 2010, §3.4) per flow: C the wireless port's rate
//! now, RTT the flow's wired round trip, in packets of the marked packet's size (145 packets
//! at 600 Mb/s and 20.3 ms). A fixed K below what senders put into the queue at once misreads
//! their bursts as congestion: at K = 20, Linux senders' TSO frames (about 1 ms of their
//! pacing rate, 26 segments at 300 Mb/s) are marked every round, and two CLEAN flows on a
//! 600 Mb/s campus hop carried 0.23 of it.
//! Growth by CUBIC's curve alone restarts at every cut; with DCTCP's small cuts (α/2 of a
//! few per cent) it held two flows near 40 segments for seconds on a 170-segment path (56 %
//! of a 100 Mb/s hop), so the additive increase stays underneath it.

use crate::ap::{is_client_ack, lower_window, Direction, Sessions};
use crate::marker::PortView;
use crate::net::{Forward, NodeElement};
use crate::packet::{Packet, L4};
use crate::time::{to_secs, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CleanConfig {
    /// The AP's wireless egress port.
    pub port: String,
    /// Marking threshold, packets queued (unset: DCTCP's C·RTT/7 per flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// DCTCP's estimation gain.
    #[serde(default = "default_g")]
    pub g: f64,
    /// CUBIC's C, segments per second cubed.
    #[serde(default = "default_c")]
    pub c: f64,
    /// MSS before a connection has shown one.
    #[serde(default = "default_mss")]
    pub mss: u32,
}

fn default_g() -> f64 {
    1.0 / 16.0
}
fn default_c() -> f64 {
    0.4
}
fn default_mss() -> u32 {
    1448
}

#[derive(Clone, Default)]
struct FlowWindow {
    alpha: f64,
    /// Enforced window in segments (None: not yet controlling).
    w: Option<f64>,
    w_max: f64,
    /// Start of CUBIC growth (the last cut) and its K in seconds.
    epoch: Time,
    k_s: f64,
    round_start: Time,
    round_pkts: u32,
    round_marked: u32,
    round_bytes: u64,
}

pub struct Clean {
    cfg: CleanConfig,
    port: usize,
    sessions: Sessions,
    flows: Vec<FlowWindow>,
    pub marked: u64,
    pub cuts: u64,
    pub rewritten: u64,
}

impl Clean {
    pub fn new(cfg: CleanConfig, port: usize) -> Result<Self, String> {
        if !(cfg.g > 0.0 && cfg.g <= 1.0) {
            return Err(format!("g: must be in (0, 1], got {}", cfg.g));
        }
        if !(cfg.c > 0.0 && cfg.c.is_finite()) {
            return Err(format!("c: must be positive, got {}", cfg.c));
        }
        if cfg.mss == 0 {
            return Err("mss: must be positive".into());
        }
        if cfg.k == Some(0) {
            return Err("k: must be at least one packet".into());
        }
        Ok(Clean {
            cfg,
            port,
            sessions: Sessions::default(),
            flows: Vec::new(),
            marked: 0,
            cuts: 0,
            rewritten: 0,
        })
    }

    /// The marking threshold for a packet of `len` bytes of a flow whose wired round trip is
    /// `wired`: the configured one, or ⌈C·RTT/7⌉ packets.
    fn threshold(&self, wired: Time, v: &PortView, len: u32) -> u32 {
        self.cfg.k.unwrap_or_else(|| {
            let bdp_pkts = v.rate_bps as f64 * to_secs(wired) / (8.0 * len.max(1) as f64);
            ((bdp_pkts / 7.0).ceil() as u32).max(1)
        })
    }

    fn round_time(&self, wired: Time, v: &PortView) -> Time {
        (wired + v.drain_time()).max(crate::time::MS)
    }

    /// Ends a round: updates α and the window.
    fn end_round(&mut self, slot: usize, now: Time, mss: u32) {
        let c = self.cfg.c;
        let g = self.cfg.g;
        let f = &mut self.flows[slot];
        let frac = if f.round_pkts > 0 {
            f.round_marked as f64 / f.round_pkts as f64
        } else {
            0.0
        };
        f.alpha = (1.0 - g) * f.alpha + g * frac;
        if f.round_marked > 0 {
            let w = f.w.unwrap_or((f.round_bytes as f64 / mss as f64).max(2.0));
            f.w_max = w;
            let cut = (w * (1.0 - f.alpha / 2.0)).max(2.0);
            f.w = Some(cut);
            f.epoch = now;
            f.k_s = (f.w_max * (f.alpha / 2.0) / c).cbrt();
            self.cuts += 1;
        } else if let Some(w) = f.w {
            // DCTCP's additive increase, or CUBIC's curve from the last cut when it is ahead
            // (recovery after a deep cut).
            let t = to_secs(now - f.epoch) - f.k_s;
            let cubic = c * t * t * t + f.w_max;
            f.w = Some(cubic.max(w + 1.0));
        }
        f.round_start = now;
        f.round_pkts = 0;
        f.round_marked = 0;
        f.round_bytes = 0;
    }
}

impl NodeElement for Clean {
    fn on_forward(
        &mut self,
        now: Time,
        out_port: usize,
        pkt: &mut Packet,
        ports: &[PortView],
    ) -> Forward {
        let v = &ports[self.port];
        let Some((slot, dir)) = self.sessions.observe_leaving(now, out_port, self.port, pkt) else {
            return Forward::Pass;
        };
        if self.flows.len() <= slot {
            self.flows.resize(slot + 1, FlowWindow::default());
        }
        let s = self.sessions.table.value(slot);
        let (mss, wired, shift) = (s.mss(self.cfg.mss), s.wired_rtt, s.client_window_shift());
        let round = self.round_time(wired, &v);
        if now >= self.flows[slot].round_start + round {
            self.end_round(slot, now, mss);
        }
        if dir == Direction::Down {
            if pkt.payload_len > 0 {
                let k = self.threshold(wired, &v, pkt.wire_len());
                let f = &mut self.flows[slot];
                f.round_pkts += 1;
                f.round_bytes += pkt.payload_len as u64;
                if v.backlog_pkts >= k {
                    f.round_marked += 1;
                    self.marked += 1;
                }
            }
            return Forward::Pass;
        }
        let L4::Tcp(t) = &mut pkt.l4 else {
            return Forward::Pass;
        };
        if !is_client_ack(t) {
            return Forward::Pass;
        }
        if let (Some(w), Some(shift)) = (self.flows[slot].w, shift) {
            if lower_window(t, (w * mss as f64) as u64, shift) {
                self.rewritten += 1;
            }
        }
        Forward::Pass
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("packets_marked", self.marked),
            ("window_cuts", self.cuts),
            ("windows_lowered", self.rewritten),
            ("connections", self.sessions.table.len() as u64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Limit;
    use crate::time::MS;
    use crate::wire::TcpFlags;

    use crate::ap::test_segment as pkt;

    fn views(now: Time, q: u32) -> [PortView; 2] {
        let v = || PortView::new(now, q, 0, 100_000_000, Limit::Packets(1000), 0);
        [v(), v()]
    }

    /// A round of 10 packets, 5 of them marked: α = 0.5/16, the window is first set to the
    /// round's 10 segments and cut to 10·(1 − α/2); the next unmarked round grows along the
    /// cubic from there; ACKs carry the window in bytes.
    #[test]
    fn a_marked_round_cuts_the_window_dctcp_style() {
        let cfg: CleanConfig = serde_json::from_str(r#"{"port": "ap->wlan", "k": 20}"#).unwrap();
        let mut e = Clean::new(cfg, 1).unwrap();
        let syn = TcpFlags::SYN;
        e.on_forward(0, 0, &mut pkt(false, syn, 0), &views(0, 0));
        let synack = TcpFlags::SYN | TcpFlags::ACK;
        e.on_forward(20 * MS, 1, &mut pkt(true, synack, 0), &views(20 * MS, 0));
        // Round 1 starts at 20 ms (the handshake ended the empty first round).
        for i in 0..10 {
            let q = if i < 5 { 25 } else { 0 };
            let t = 21 * MS + i * 100_000;
            e.on_forward(t, 1, &mut pkt(true, TcpFlags::ACK, 1000), &views(t, q));
        }
        // 20 ms later an ACK ends the round.
        let mut ack = pkt(false, TcpFlags::ACK, 0);
        e.on_forward(41 * MS, 0, &mut ack, &views(41 * MS, 0));
        let alpha = 0.5 / 16.0;
        let w = 10.0 * (1.0 - alpha / 2.0);
        let L4::Tcp(t) = ack.l4 else { unreachable!() };
        assert_eq!(t.window as u64, (w * 1000.0) as u64);
        assert_eq!(e.cuts, 1);
        // An ACK 1 s later ends an unmarked round: W_max + C·(1 − K)³ with K = ∛(10·α/2 / 0.4),
        // or one segment more.
        let later = 41 * MS + crate::time::SEC;
        let mut ack2 = pkt(false, TcpFlags::ACK, 0);
        e.on_forward(later, 0, &mut ack2, &views(later, 0));
        let k = (10.0 * (alpha / 2.0) / 0.4f64).cbrt();
        let t_s = 1.0 - k;
        let cubic = 0.4 * t_s * t_s * t_s + 10.0;
        // One unmarked round: a segment more is ahead of the curve, still near W_max a
        // second after a cut this small.
        let reno = w + 1.0;
        let expect = cubic.max(reno);
        assert!(reno > cubic);
        let L4::Tcp(t2) = ack2.l4 else { unreachable!() };
        assert_eq!(t2.window as u64, (expect * 1000.0) as u64);
    }

    /// Unset, K is DCTCP's C·RTT/7 for the flow: at 100 Mb/s with a 20 ms wired round trip
    /// and 1040-byte packets, 100e6 · 0.02 / (8 · 1040) / 7 = 34.3, so 35 packets. A packet
    /// finding 34 queued is not marked, one finding 35 is.
    #[test]
    fn unset_k_is_dctcps_c_rtt_over_seven() {
        let cfg: CleanConfig = serde_json::from_str(r#"{"port": "ap->wlan"}"#).unwrap();
        let mut e = Clean::new(cfg, 1).unwrap();
        e.on_forward(0, 0, &mut pkt(false, TcpFlags::SYN, 0), &views(0, 0));
        let synack = TcpFlags::SYN | TcpFlags::ACK;
        e.on_forward(20 * MS, 1, &mut pkt(true, synack, 0), &views(20 * MS, 0));
        let mut data = pkt(true, TcpFlags::ACK, 1000);
        assert_eq!(data.wire_len(), 1040);
        e.on_forward(21 * MS, 1, &mut data, &views(21 * MS, 34));
        assert_eq!(e.marked, 0);
        e.on_forward(21 * MS, 1, &mut data, &views(21 * MS, 35));
        assert_eq!(e.marked, 1);
    }
}
