//! Unresponsive UDP traffic: constant-bit-rate, Poisson and on/off sources, and a sink that
//! records one-way delay.

use crate::engine::rng::Rng;
use crate::net::{Ctx, Endpoint, Samples};
use crate::packet::Packet;
use crate::stats::{FlowRecord, Histogram};
use crate::time::{from_secs, to_secs, tx_time, Time, NEVER};
use crate::wire::{Ecn, Ipv4Repr, UdpRepr};
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UdpPattern {
    /// Evenly spaced packets.
    Cbr,
    /// Exponential inter-departure times with the same mean rate.
    Poisson,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UdpSourceConfig {
    pub rate_bps: u64,
    /// IP packet size in bytes (headers included).
    pub packet_size: u32,
    pub pattern: UdpPattern,
    pub start: Time,
    pub stop: Time,
    pub ecn: Ecn,
    /// On/off: send for `on`, pause for `off`, repeat (None: always on).
    pub on_off: Option<(Time, Time)>,
}

pub struct UdpSource {
    cfg: UdpSourceConfig,
    src: u32,
    dst: u32,
    dst_ep: u32,
    flow: u32,
    next: Time,
    rng: Rng,
    exp: Option<Exp<f64>>,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
}

impl UdpSource {
    pub fn new(cfg: UdpSourceConfig, src: u32, dst: u32, dst_ep: u32, flow: u32, rng: Rng) -> Self {
        let mean = tx_time(cfg.packet_size, cfg.rate_bps.max(1));
        let exp =
            (cfg.pattern == UdpPattern::Poisson).then(|| Exp::new(1.0 / to_secs(mean)).unwrap());
        UdpSource {
            next: cfg.start,
            cfg,
            src,
            dst,
            dst_ep,
            flow,
            rng,
            exp,
            sent_pkts: 0,
            sent_bytes: 0,
        }
    }

    fn gap(&mut self) -> Time {
        match &self.exp {
            Some(e) => from_secs(e.sample(&mut self.rng)).max(1),
            None => tx_time(self.cfg.packet_size, self.cfg.rate_bps),
        }
    }

    /// Skips the off periods of an on/off pattern.
    fn align_on(&self, t: Time) -> Time {
        match self.cfg.on_off {
            Some((on, off)) if t >= self.cfg.start => {
                let period = on + off;
                let k = (t - self.cfg.start) / period;
                let phase = (t - self.cfg.start) % period;
                if phase < on {
                    t
                } else {
                    self.cfg
                        .start
                        .saturating_add((k + 1).saturating_mul(period))
                }
            }
            _ => t,
        }
    }
}

const UDP_HEADERS: u32 = 28;

impl Endpoint for UdpSource {
    fn on_packet(&mut self, _ctx: &mut Ctx, _pkt: &Packet) {}

    fn on_timer(&mut self, ctx: &mut Ctx) {
        while self.next <= ctx.now {
            let ip = Ipv4Repr {
                src: self.src,
                dst: self.dst,
                ecn: self.cfg.ecn,
                ttl: 64,
                ident: ctx.next_ip_id(self.dst, 9 << 16 | 9),
                ..Default::default()
            };
            let mut p = Packet::new_udp(
                ip,
                UdpRepr {
                    src_port: 9,
                    dst_port: 9,
                },
                self.cfg.packet_size.saturating_sub(UDP_HEADERS),
            );
            p.meta.dst_ep = self.dst_ep;
            p.meta.flow = self.flow;
            self.sent_pkts += 1;
            self.sent_bytes += p.wire_len() as u64;
            ctx.send(p);
            let g = self.gap();
            // A Poisson gap's tail at a rate of a few bits per second may be months: a time
            // past the clock's end means never, not a wrap to the past.
            self.next = self.align_on(self.next.saturating_add(g));
        }
        if self.next >= self.cfg.stop {
            self.next = NEVER;
        }
    }

    fn deadline(&self) -> Time {
        self.next
    }

    fn record(&self, _now: Time, r: &mut FlowRecord) {
        r.transport = "udp".into();
        r.scheme = match self.cfg.pattern {
            UdpPattern::Cbr => "cbr".into(),
            UdpPattern::Poisson => "poisson".into(),
        };
        r.start_s = Some(to_secs(self.cfg.start));
        r.packets_sent = Some(self.sent_pkts);
        r.bytes_sent = Some(self.sent_bytes);
    }

    fn finished(&self) -> bool {
        self.next == NEVER
    }
}

#[derive(Default)]
pub struct UdpSink {
    pub received_pkts: u64,
    pub received_bytes: u64,
    first: Option<Time>,
    last: Time,
    /// One-way delays in nanoseconds.
    pub owd: Histogram,
    /// Bytes received since the last sample (for the rate series).
    window_bytes: std::cell::Cell<u64>,
    last_sample: std::cell::Cell<Time>,
}

impl UdpSink {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Endpoint for UdpSink {
    fn on_packet(&mut self, ctx: &mut Ctx, pkt: &Packet) {
        self.received_pkts += 1;
        self.received_bytes += pkt.wire_len() as u64;
        self.window_bytes
            .set(self.window_bytes.get() + pkt.wire_len() as u64);
        self.first.get_or_insert(ctx.now);
        self.last = ctx.now;
        self.owd.record((ctx.now - pkt.meta.sent_at) / 1000);
    }

    fn on_timer(&mut self, _ctx: &mut Ctx) {}

    fn deadline(&self) -> Time {
        NEVER
    }

    fn record(&self, now: Time, r: &mut FlowRecord) {
        r.packets_received = Some(self.received_pkts);
        r.bytes_delivered = Some(self.received_bytes);
        if let Some(start) = r.start_s {
            let span = to_secs(now) - start;
            if span > 0.0 {
                r.goodput_bps = Some(self.received_bytes as f64 * 8.0 / span);
            }
        }
        r.owd_mean_s = self.owd.mean().map(|ns| ns * 1e-9);
        r.owd_p95_s = self.owd.quantile(0.95).map(|ns| ns as f64 * 1e-9);
        r.owd_max_s = (self.owd.count > 0).then(|| self.owd.max as f64 * 1e-9);
    }

    fn sample(&self, now: Time, out: &mut Samples) {
        let dt = now.saturating_sub(self.last_sample.get());
        if dt > 0 {
            out.push((
                "delivery_bps",
                self.window_bytes.get() as f64 * 8.0 / to_secs(dt),
            ));
        }
        self.window_bytes.set(0);
        self.last_sample.set(now);
    }
}
