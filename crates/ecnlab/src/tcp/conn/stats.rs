//! What the connection reports: its counters and distributions ([`Stats`]), the flow's row of
//! results at the end of a run, and the sampled time series — at the sender the window it
//! uses (PRR's during a reduction, as Linux's `tcpi_snd_cwnd`), ssthresh, SRTT and the data
//! in flight; at the receiver the delivery rate. [`crate::tcp::flow`] says which side fills
//! which column of the row.

use super::TcpConn;
use crate::cc::Signal;
use crate::net::Samples;
use crate::stats::{FlowRecord, Histogram};
use crate::tcp::codec::Codec;
use crate::time::{to_secs, Time};
use std::cell::Cell;

/// The connection's distributions and what both sides keep (each side fills its own); the
/// counters only a side that sends data keeps are in its sending half ([`SendStats`]).
#[derive(Default)]
pub(super) struct Stats {
    /// The sending side's distribution of every RTT sample taken, or the receiving side's of
    /// the one-way delay of every data segment that arrived, ns (one field: a side keeps one).
    delays_ns: Histogram,
    sends: bool,
    /// Initial congestion window (segments) set at the handshake; 0 before (it is at least 1).
    pub init_cwnd: u32,
    /// When data was last delivered in order to the application.
    pub last_delivery: Time,
    /// The delivery counter and time at the previous sample (the receiving side's rate).
    sample_delivered: Cell<u64>,
    sample_time: Cell<Time>,
}

/// The counters of a side that sends data: they live in its sending half, so a receiver
/// does not carry them.
pub(super) struct SendStats {
    pub bytes_sent: u64,
    pub packets_sent: u64,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub rtos: u64,
    pub spurious_rtos: u64,
    pub loss_probes: u64,
    pub signals_l1: u64,
    pub signals_l2: u64,
}

impl SendStats {
    /// All zero (`const`: a connection's idle sending half is a static).
    pub(super) const fn new() -> Self {
        SendStats {
            bytes_sent: 0,
            packets_sent: 0,
            retransmissions: 0,
            fast_retransmits: 0,
            rtos: 0,
            spurious_rtos: 0,
            loss_probes: 0,
            signals_l1: 0,
            signals_l2: 0,
        }
    }

    /// Counts a congestion signal that asked for a reduction at its level.
    pub(super) fn count_signal(&mut self, level: SignalLevel) {
        match level {
            SignalLevel::One => self.signals_l1 += 1,
            SignalLevel::Two => self.signals_l2 += 1,
        }
    }
}

/// The level at which a congestion signal is counted.
pub(super) enum SignalLevel {
    One,
    Two,
}

/// The level of a congestion signal that asked for a reduction: level 1 (ECN, incipient,
/// overload, a marked byte) or level 2; `None` for a signal that asked for none.
pub(super) fn signal_level(sig: Signal, codec: &dyn Codec) -> Option<SignalLevel> {
    match sig {
        Signal::Ecn | Signal::Level(1) => Some(SignalLevel::One),
        Signal::Level(2) => Some(SignalLevel::Two),
        Signal::Marked { marked_bytes, .. } if marked_bytes > 0 => Some(SignalLevel::One),
        Signal::Load(c) | Signal::LoadInterval { code: c, .. } if codec.is_overload(c) => {
            Some(SignalLevel::One)
        }
        Signal::LoadFactor { low_milli, .. } if low_milli >= 1000 => Some(SignalLevel::One),
        _ => None,
    }
}

impl Stats {
    /// The counters of a sending side (`sends`: it has a controller) or a receiving one.
    pub(super) fn new(sends: bool) -> Self {
        Stats {
            sends,
            ..Default::default()
        }
    }

    /// The RTT samples' distribution (the sending side only).
    pub(super) fn rtt_ns(&mut self) -> Option<&mut Histogram> {
        self.sends.then_some(&mut self.delays_ns)
    }

    /// This side's distribution (RTT or one-way delay), if it holds a sample.
    fn delays_seen(&self) -> Option<&Histogram> {
        Some(&self.delays_ns).filter(|h| h.count > 0)
    }

    /// The one-way delays' distribution (the receiving side only).
    pub(super) fn owd_ns(&mut self) -> Option<&mut Histogram> {
        (!self.sends).then_some(&mut self.delays_ns)
    }
}

impl TcpConn {
    pub(super) fn record_flow(&self, now: Time, r: &mut FlowRecord) {
        if let Some(cc) = self.cc.as_ref() {
            r.transport = "tcp".into();
            r.scheme = format!("{}+{}", cc.name(), self.codec.name());
            r.start_s = Some(to_secs(self.app_start));
            r.size_bytes = self.send_bytes;
            let st = &self.tx().stats;
            r.bytes_sent = Some(st.bytes_sent);
            r.packets_sent = Some(st.packets_sent);
            r.retransmissions = Some(st.retransmissions);
            r.rtos = Some(st.rtos);
            r.recoveries = Some(st.fast_retransmits);
            r.loss_probes = Some(st.loss_probes);
            r.signals_l1 = Some(st.signals_l1);
            r.signals_l2 = Some(st.signals_l2);
            if let Some(h) = self.stats.delays_seen() {
                r.rtt_min_s = Some(h.min as f64 * 1e-9);
                r.rtt_mean_s = h.mean().map(|ns| ns * 1e-9);
                r.rtt_p95_s = h.quantile(0.95).map(|ns| ns as f64 * 1e-9);
            }
            r.init_cwnd = (self.stats.init_cwnd > 0).then_some(self.stats.init_cwnd as u64);
            if let Some((n, mean)) = self.codec.feedback_delay() {
                r.feedback_decisions = Some(n);
                r.feedback_delay_mean_s = (n > 0).then_some(mean);
            }
        } else {
            let delivered = self.rcv.data_delivered();
            r.bytes_delivered = Some(delivered);
            r.packets_received = Some(self.rcv.segs_received);
            r.duplicate_segments = Some(self.rcv.dup_segs);
            let done = self.rcv.fin_received();
            let last_delivery = self.stats.last_delivery;
            if done {
                r.fct_s = Some(to_secs(last_delivery.saturating_sub(self.app_start)));
            }
            let end = if done { last_delivery } else { now };
            let span = end.saturating_sub(self.app_start);
            if span > 0 {
                r.goodput_bps = Some(delivered as f64 * 8.0 / to_secs(span));
            }
            if let Some(h) = self.stats.delays_seen() {
                r.owd_mean_s = h.mean().map(|ns| ns * 1e-9);
                r.owd_p95_s = h.quantile(0.95).map(|ns| ns as f64 * 1e-9);
                r.owd_max_s = Some(h.max as f64 * 1e-9);
            }
        }
    }

    pub(super) fn sample_flow(&self, now: Time, out: &mut Samples) {
        if let Some(cc) = self.cc.as_ref() {
            // The window the sender uses — PRR's during a reduction — as Linux's tcpi_snd_cwnd.
            out.push(("cwnd_bytes", self.cwnd() as f64));
            let ss = cc.ssthresh();
            if ss < u64::MAX / 2 {
                out.push(("ssthresh_bytes", ss as f64));
            }
            if self.rtt.has_sample() {
                out.push(("srtt_s", to_secs(self.rtt.srtt())));
            }
            out.push(("inflight_bytes", self.in_flight() as f64));
            cc.sample(out);
        } else {
            let delivered = self.rcv.data_delivered();
            let s = &self.stats;
            let dt = now.saturating_sub(s.sample_time.get());
            if dt > 0 {
                let bytes = delivered - s.sample_delivered.get().min(delivered);
                out.push(("delivery_bps", bytes as f64 * 8.0 / to_secs(dt)));
            }
            s.sample_delivered.set(delivered);
            s.sample_time.set(now);
        }
    }
}
