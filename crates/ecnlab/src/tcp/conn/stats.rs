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

/// The connection's counters and distributions (each side fills its own).
#[derive(Default)]
pub(super) struct Stats {
    pub bytes_sent: u64,
    pub packets_sent: u64,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub rtos: u64,
    pub spurious_rtos: u64,
    pub loss_probes: u64,
    pub signals_l1: u64,
    pub signals_l2: u64,
    /// The sending side's distribution of every RTT sample taken, or the receiving side's of
    /// the one-way delay of every data segment that arrived, ns (one field: a side keeps one).
    delays_ns: Histogram,
    sends: bool,
    pub init_cwnd: Option<u64>,
    /// When data was last delivered in order to the application.
    pub last_delivery: Time,
    /// The delivery counter and time at the previous sample (the receiving side's rate).
    sample_delivered: Cell<u64>,
    sample_time: Cell<Time>,
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

    /// A congestion signal that asked for a reduction: level 1 (ECN, incipient, overload, a
    /// marked byte) or level 2.
    pub(super) fn count_signal(&mut self, sig: Signal, codec: &dyn Codec) {
        match sig {
            Signal::Ecn | Signal::Level(1) => self.signals_l1 += 1,
            Signal::Level(2) => self.signals_l2 += 1,
            Signal::Marked { marked_bytes, .. } if marked_bytes > 0 => self.signals_l1 += 1,
            Signal::Load(c) | Signal::LoadInterval { code: c, .. } if codec.is_overload(c) => {
                self.signals_l1 += 1
            }
            Signal::LoadFactor { low_milli, .. } if low_milli >= 1000 => self.signals_l1 += 1,
            _ => {}
        }
    }
}

impl TcpConn {
    pub(super) fn record_flow(&self, now: Time, r: &mut FlowRecord) {
        if let Some(cc) = self.cc.as_ref() {
            r.transport = "tcp".into();
            r.scheme = format!("{}+{}", cc.name(), self.codec.name());
            r.start_s = Some(to_secs(self.app_start));
            r.size_bytes = self.send_bytes;
            r.bytes_sent = Some(self.stats.bytes_sent);
            r.packets_sent = Some(self.stats.packets_sent);
            r.retransmissions = Some(self.stats.retransmissions);
            r.rtos = Some(self.stats.rtos);
            r.recoveries = Some(self.stats.fast_retransmits);
            r.loss_probes = Some(self.stats.loss_probes);
            r.signals_l1 = Some(self.stats.signals_l1);
            r.signals_l2 = Some(self.stats.signals_l2);
            if let Some(h) = self.stats.delays_seen() {
                r.rtt_min_s = Some(h.min as f64 * 1e-9);
                r.rtt_mean_s = h.mean().map(|ns| ns * 1e-9);
                r.rtt_p95_s = h.quantile(0.95).map(|ns| ns as f64 * 1e-9);
            }
            r.init_cwnd = self.stats.init_cwnd;
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
