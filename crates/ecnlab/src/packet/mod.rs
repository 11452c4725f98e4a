//! The simulated packet and the pooled arena packets live in while they travel.
//!
//! A packet is a plain value with real header fields ([`crate::wire`]) plus simulator metadata
//! that no real header carries. Components pass [`PktId`]s (4 bytes) and the arena recycles
//! slots through a free list, so steady state allocates nothing.
//!
//! - [`bytes`]: a whole packet written as real bytes and read back;
//! - [`rewrite`]: a router's changes written into a real packet's bytes in place;
//! - [`pcap`]: capture files of packets as a port sent them.

pub mod bytes;
pub mod pcap;
pub mod rewrite;

pub use bytes::{emit_packet, parse_packet};

use crate::time::Time;
use crate::wire::{ipv4, tcp, udp, Ipv4Repr, TcpRepr, UdpRepr};

/// Transport header of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L4 {
    Tcp(TcpRepr),
    Udp(UdpRepr),
}

impl Default for L4 {
    fn default() -> Self {
        L4::Udp(UdpRepr::default())
    }
}

/// Simulator-only annotations. None of these is on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Endpoint that receives this packet at its destination host (demultiplexing without a
    /// port lookup; the real ports are in the header too).
    pub dst_ep: u32,
    /// Flow index, for per-flow accounting at ports (u32::MAX: none).
    pub flow: u32,
    /// When the source handed the packet to the network.
    pub sent_at: Time,
    /// When the packet entered the queue it currently sits in (sojourn time).
    pub enqueued_at: Time,
    /// The sender's smoothed RTT in microseconds, for routers that need per-packet RTT (HFCC,
    /// as XCP and MLCP carry it in a header); 0 when the sender does not set it.
    pub rtt_hint_us: u32,
    /// An imagined load header (UNO's idealised VCP3 carries its router's exact load level in
    /// every packet: 0 when absent, else level + 1; MLCP its 4-bit level; HFCC the load, in
    /// whole percent, of the router whose `t_p` rides in `ideal_interval`). Not on any real
    /// wire.
    pub ideal_load: u8,
    /// An imagined 3-bit interval header riding with `ideal_load` (MLCP's routers return the
    /// load interval they chose from the flows' mean RTT): 0 when absent, else code + 1.
    pub ideal_interval: u8,
    /// Set by a feedback marker on arrival when it takes over the congestion-marking decision
    /// for this packet at this port (e.g. EECN over RED): the queue discipline then only
    /// enforces its buffer limit. Cleared when the packet leaves the port.
    pub marker_owned: bool,
    /// The ECN codepoint the packet was queued with at its current port, so a mark written
    /// while it leaves (by the discipline or the marker) is counted once.
    pub ecn_queued: crate::wire::Ecn,
}

impl Default for Meta {
    fn default() -> Self {
        Meta {
            dst_ep: u32::MAX,
            flow: u32::MAX,
            sent_at: 0,
            enqueued_at: 0,
            rtt_hint_us: 0,
            ideal_load: 0,
            ideal_interval: 0,
            marker_owned: false,
            ecn_queued: crate::wire::Ecn::NOT_ECT,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    pub ip: Ipv4Repr,
    pub l4: L4,
    /// Application payload bytes (not on the wire in simulation; pcap writes zeros).
    pub payload_len: u32,
    pub meta: Meta,
}

impl Packet {
    /// Builds a TCP packet and fills in the IP length and protocol.
    pub fn new_tcp(ip: Ipv4Repr, tcp: TcpRepr, payload_len: u32) -> Packet {
        let mut p = Packet {
            ip,
            l4: L4::Tcp(tcp),
            payload_len,
            meta: Meta::default(),
        };
        p.fix_lengths();
        p
    }

    pub fn new_udp(ip: Ipv4Repr, udp: UdpRepr, payload_len: u32) -> Packet {
        let mut p = Packet {
            ip,
            l4: L4::Udp(udp),
            payload_len,
            meta: Meta::default(),
        };
        p.fix_lengths();
        p
    }

    /// Recomputes `ip.payload_len` and `ip.protocol` after the transport header changed
    /// (e.g. SACK blocks added).
    pub fn fix_lengths(&mut self) {
        let (proto, l4len) = match &self.l4 {
            L4::Tcp(t) => (ipv4::PROTO_TCP, t.header_len()),
            L4::Udp(_) => (ipv4::PROTO_UDP, udp::HEADER_LEN),
        };
        self.ip.protocol = proto;
        self.ip.payload_len = (l4len + self.payload_len as usize) as u16;
    }

    /// Bytes on the wire at the IP layer (what a link serialises).
    #[inline]
    pub fn wire_len(&self) -> u32 {
        (ipv4::HEADER_LEN + self.ip.payload_len as usize) as u32
    }

    #[inline]
    pub fn tcp(&self) -> Option<&TcpRepr> {
        match &self.l4 {
            L4::Tcp(t) => Some(t),
            _ => None,
        }
    }

    #[inline]
    pub fn tcp_mut(&mut self) -> Option<&mut TcpRepr> {
        match &mut self.l4 {
            L4::Tcp(t) => Some(t),
            _ => None,
        }
    }

    /// A pure ACK: TCP with no payload and neither SYN nor FIN (served first by ACK-priority
    /// queues).
    #[inline]
    pub fn is_pure_ack(&self) -> bool {
        match &self.l4 {
            L4::Tcp(t) => {
                self.payload_len == 0 && !t.flags.has(tcp::TcpFlags::SYN | tcp::TcpFlags::FIN)
            }
            _ => false,
        }
    }
}

/// A packet's flow by the 5-tuple of its real headers (not the simulator's flow index), so
/// that per-flow state works on packets from a real network too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub src: u32,
    pub dst: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub protocol: u8,
}

impl FlowKey {
    pub fn of(pkt: &Packet) -> FlowKey {
        let (src_port, dst_port) = match &pkt.l4 {
            L4::Tcp(t) => (t.src_port, t.dst_port),
            L4::Udp(u) => (u.src_port, u.dst_port),
        };
        FlowKey {
            src: pkt.ip.src,
            dst: pkt.ip.dst,
            src_port,
            dst_port,
            protocol: pkt.ip.protocol,
        }
    }
}

/// Index of a packet in the [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PktId(pub u32);

/// Arena of packets with a free list. Slots are reused LIFO, which keeps hot packets in cache.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// Total allocations ever made (for conservation checks and allocation statistics).
    pub allocated: u64,
    pub freed: u64,
}

impl PacketPool {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.allocated += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                PktId(i)
            }
            None => {
                self.slots.push(p);
                PktId((self.slots.len() - 1) as u32)
            }
        }
    }

    #[inline]
    pub fn free(&mut self, id: PktId) {
        self.freed += 1;
        self.free.push(id.0);
    }

    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id.0 as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }

    /// Brings packet `id`'s slot into the cache ahead of a known later use (the next packet
    /// out of a queue or a pipe); see [`crate::cache`]. An id past the pool's end is ignored.
    #[inline(always)]
    pub fn prefetch(&self, id: PktId) {
        if let Some(slot) = self.slots.get(id.0 as usize) {
            crate::cache::prefetch(slot, std::mem::size_of::<Packet>());
        }
    }

    /// Packets currently alive (allocated and not freed).
    pub fn live(&self) -> u64 {
        self.allocated - self.freed
    }

    /// Slots ever created: the high-water mark of packets alive at once.
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}
