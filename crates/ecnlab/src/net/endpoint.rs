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
use std::collections::HashMap;

/// How a host numbers the IPv4 Identification field of the packets it sends. Schemes that
/// spread information over IP-ID residues (UNO) depend on it, so every common stack behaviour
/// is a mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IpIdMode {
    /// One counter per host, incremented per packet, starting at 0 (classic BSD and older
    /// Windows behaviour).
    #[default]
    Sequential,
    /// One counter per connection (5-tuple), starting at a random value. This is what Linux
    /// does for TCP: its segments carry DF and come from a connected socket, so
    /// `ip_select_ident_segs` takes the socket's own counter, seeded randomly at connect.
    PerConnection,
    /// One counter per destination address, starting at a random value: Linux's numbering of
    /// packets that may be fragmented or have no connected socket (`__ip_select_ident`
    /// hashes the destination into a table of counters; ours keeps one counter per address
    /// and does not model the table's random skips).
    PerDestination,
    /// Uniformly random per packet (Solaris, OpenBSD).
    Random,
}

/// Per-host IP-ID generator.
pub struct IpIdGen {
    mode: IpIdMode,
    next: u16,
    /// Counters per connection or per destination, made on first use.
    counters: HashMap<u64, u16>,
    rng: Rng,
}

impl IpIdGen {
    pub fn new(mode: IpIdMode, rng: Rng) -> Self {
        IpIdGen {
            mode,
            next: 0,
            counters: HashMap::new(),
            rng,
        }
    }

    /// The IP-ID of the next packet to `dst` of connection `conn` (the host's local and
    /// remote ports, `local << 16 | remote`; 0 for connectionless sends).
    #[inline]
    pub fn next_id(&mut self, dst: u32, conn: u32) -> u16 {
        let key = match self.mode {
            IpIdMode::Sequential => {
                let v = self.next;
                self.next = self.next.wrapping_add(1);
                return v;
            }
            IpIdMode::Random => return self.rng.gen(),
            IpIdMode::PerConnection => (dst as u64) << 32 | conn as u64,
            IpIdMode::PerDestination => dst as u64,
        };
        let rng = &mut self.rng;
        let c = self.counters.entry(key).or_insert_with(|| rng.gen());
        let v = *c;
        *c = c.wrapping_add(1);
        v
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

    /// The IP-ID the host assigns to the next packet to `dst` of connection `conn` (the local
    /// and remote ports, `local << 16 | remote`). Take it right before `send`: schemes that
    /// encode information in IP-ID residues read it to decide the packet's other fields.
    #[inline]
    pub fn next_ip_id(&mut self, dst: u32, conn: u32) -> u16 {
        self.ipid.next_id(dst, conn)
    }

    /// Hands a packet to the host's network stack. The caller fills every header field,
    /// including `ip.ident` (from [`Ctx::next_ip_id`]) and `meta.dst_ep`.
    #[inline]
    pub fn send(&mut self, pkt: Packet) {
        self.out.push(pkt);
    }

    /// Hands the host's network stack a packet written where it is queued: the caller fills
    /// every header field of the returned packet as for [`Ctx::send`], before sending
    /// anything else. A packet built apart is copied in; one built here is not.
    #[inline]
    pub fn send_in_place(&mut self) -> &mut Packet {
        let i = self.out.len();
        self.out.push(Packet::default());
        &mut self.out[i]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng;

    fn gen(mode: IpIdMode) -> IpIdGen {
        IpIdGen::new(mode, rng::stream(7, rng::kind::HOST, 0))
    }

    #[test]
    fn ip_id_modes_number_as_their_stacks_do() {
        // Per host: one counter from 0 whatever the destination or connection.
        let mut g = gen(IpIdMode::Sequential);
        let ids: Vec<u16> = [(1, 1), (2, 1), (1, 2), (1, 1)]
            .iter()
            .map(|&(d, c)| g.next_id(d, c))
            .collect();
        assert_eq!(ids, vec![0, 1, 2, 3]);
        // Per connection: each 5-tuple counts on its own from a random start.
        let mut g = gen(IpIdMode::PerConnection);
        let a0 = g.next_id(1, 10);
        let b0 = g.next_id(1, 11);
        let a1 = g.next_id(1, 10);
        let c0 = g.next_id(2, 10);
        let b1 = g.next_id(1, 11);
        assert_eq!(a1, a0.wrapping_add(1));
        assert_eq!(b1, b0.wrapping_add(1));
        assert!(a0 != b0 && a0 != c0, "random starts {a0} {b0} {c0}");
        // Per destination: connections to one address share a counter.
        let mut g = gen(IpIdMode::PerDestination);
        let x0 = g.next_id(5, 1);
        let y = g.next_id(6, 1);
        let x1 = g.next_id(5, 2);
        assert_eq!(x1, x0.wrapping_add(1));
        assert_ne!(y, x0.wrapping_add(1));
        // Random: every residue mod 8 appears in 100 draws, and the draws are the stream's.
        let mut g = gen(IpIdMode::Random);
        let mut seen = 0u8;
        let draws: Vec<u16> = (0..100).map(|_| g.next_id(1, 1)).collect();
        for d in &draws {
            seen |= 1 << (d & 7);
        }
        assert_eq!(seen, 0xff);
        let mut h = gen(IpIdMode::Random);
        assert_eq!(draws, (0..100).map(|_| h.next_id(1, 1)).collect::<Vec<_>>());
    }
}
