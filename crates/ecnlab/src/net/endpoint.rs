//! Transport endpoints (TCP connections, UDP sources and sinks) as the network sees them:
//! they receive packets addressed to them, send packets through a context, and keep one
//! deadline the simulator turns into a timer event. They never touch the event engine, so a
//! transport can be driven by a real clock later.

use crate::engine::rng::Rng;
use crate::packet::Packet;
use crate::stats::FlowRecord;
use crate::time::Time;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// How a host numbers the IPv4 Identification field of the packets it sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IpIdMode {
    /// One counter per host, incremented per packet (classic BSD/Windows behaviour).
    #[default]
    Sequential,
    /// Uniformly random per packet.
    Random,
}

/// Per-host IP-ID generator.
pub struct IpIdGen {
    mode: IpIdMode,
    next: u16,
    rng: Rng,
}

impl IpIdGen {
    pub fn new(mode: IpIdMode, rng: Rng) -> Self {
        IpIdGen { mode, next: 0, rng }
    }

    #[inline]
    pub fn next_id(&mut self) -> u16 {
        match self.mode {
            IpIdMode::Sequential => {
                let v = self.next;
                self.next = self.next.wrapping_add(1);
                v
            }
            IpIdMode::Random => self.rng.gen(),
        }
    }
}

/// What an endpoint may do while handling an event.
pub struct Ctx<'a> {
    pub now: Time,
    /// Address of the endpoint's host.
    pub addr: u32,
    out: &'a mut Vec<Packet>,
    ipid: &'a mut IpIdGen,
}

impl<'a> Ctx<'a> {
    pub fn new(now: Time, addr: u32, out: &'a mut Vec<Packet>, ipid: &'a mut IpIdGen) -> Self {
        Ctx {
            now,
            addr,
            out,
            ipid,
        }
    }

    /// The IP-ID the host assigns to the next packet (take it right before `send`; schemes that
    /// encode information in IP-ID residues read it to decide the packet's other fields).
    #[inline]
    pub fn next_ip_id(&mut self) -> u16 {
        self.ipid.next_id()
    }

    /// Hands a packet to the host's network stack. The caller fills every header field,
    /// including `ip.ident` (from [`Ctx::next_ip_id`]) and `meta.dst_ep`.
    #[inline]
    pub fn send(&mut self, pkt: Packet) {
        self.out.push(pkt);
    }
}

/// Sink for sampled values: `(kind, value)` pairs, e.g. `("cwnd_bytes", 14600.0)`.
pub type Samples = Vec<(&'static str, f64)>;

pub trait Endpoint {
    /// A packet addressed to this endpoint arrived.
    fn on_packet(&mut self, ctx: &mut Ctx, pkt: &Packet);
    /// The deadline returned by [`Endpoint::deadline`] was reached.
    fn on_timer(&mut self, ctx: &mut Ctx);
    /// When the endpoint next needs `on_timer` (`time::NEVER` for never). Read after every
    /// call into the endpoint.
    fn deadline(&self) -> Time;
    /// Fills this side's part of the flow's record at the end of the run (`now` = end).
    fn record(&self, now: Time, rec: &mut FlowRecord);
    /// Values to sample periodically (cwnd, RTT, rate, ...).
    fn sample(&self, _now: Time, _out: &mut Samples) {}
    /// Has the application finished (all data delivered / all packets sent)?
    fn finished(&self) -> bool {
        false
    }
}
