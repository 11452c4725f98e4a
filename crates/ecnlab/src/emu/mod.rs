//! Emulation: the simulator's network (ports, queue disciplines, markers, node elements,
//! links) forwarding real packets between real network stacks, on the wall clock.
//!
//! The [`Sim`] is built from a scenario as for a simulation run, with every host *external*
//! ([`crate::net::Node::external`]): a packet a real host sends is parsed
//! ([`crate::packet::parse_packet`]), injected at its host node and travels the simulated
//! topology — the same `Port` and `NodeElement` code, its events run when the wall clock
//! reaches their time — and when it reaches its destination host its original bytes, with the
//! routers' changes written in place ([`crate::packet::rewrite`]), go to that host's stack.
//! Payload bytes are never copied into the simulator: they wait in a slot keyed by the
//! packet's pool index.
//!
//! How packets get in and out is the [`Io`] trait: TUN devices on Linux ([`tun::TunIo`]), a
//! scripted clock and packet source in tests.

#[cfg(target_os = "linux")]
pub mod tun;

use crate::net::{addr_node, NodeId, Sim};
use crate::packet::{self, Packet, PktId};
use crate::stats::Histogram;
use crate::time::Time;
use crate::wire::{self, WireError};

/// Where the forwarder's packets and time come from.
pub trait Io {
    /// Reads one waiting packet of tap `tap` into `buf`; `Ok(None)` when none is waiting.
    fn recv(&mut self, tap: usize, buf: &mut [u8]) -> std::io::Result<Option<usize>>;
    /// Called once per turn of the forwarder's loop, before the taps are read: an `Io` that
    /// learns which taps hold packets in one call (a poll) does it here.
    fn refresh(&mut self) {}
    /// Hands a packet to tap `tap`'s host.
    fn send(&mut self, tap: usize, bytes: &[u8]) -> std::io::Result<()>;
    /// Monotonic time in nanoseconds.
    fn now_ns(&mut self) -> u64;
    /// Blocks until a tap may have a packet or the clock reaches `until_ns`.
    fn wait(&mut self, until_ns: u64);
}

/// Why a packet from a host was not forwarded (its value indexes [`EmuStats::rx_dropped`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxDrop {
    /// Not IPv4 (IPv6 neighbour discovery, for instance).
    NotIpv4,
    Truncated,
    Malformed,
    Checksum,
    /// IPv4 but neither TCP nor UDP (ICMP, for instance).
    Protocol,
    /// Its source address is not the host it came from.
    ForeignSource,
    /// Its destination is not a host of the topology.
    NoRoute,
}

impl RxDrop {
    pub const ALL: [RxDrop; 7] = [
        RxDrop::NotIpv4,
        RxDrop::Truncated,
        RxDrop::Malformed,
        RxDrop::Checksum,
        RxDrop::Protocol,
        RxDrop::ForeignSource,
        RxDrop::NoRoute,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RxDrop::NotIpv4 => "not_ipv4",
            RxDrop::Truncated => "truncated",
            RxDrop::Malformed => "malformed",
            RxDrop::Checksum => "checksum",
            RxDrop::Protocol => "protocol",
            RxDrop::ForeignSource => "foreign_source",
            RxDrop::NoRoute => "no_route",
        }
    }
}

/// What the forwarder did, beyond the ports' own counters.
#[derive(Clone, Debug, Default)]
pub struct EmuStats {
    pub rx_pkts: u64,
    pub rx_bytes: u64,
    /// Packets from hosts not forwarded, by [`RxDrop`] (indexed like `RxDrop::ALL`).
    pub rx_dropped: [u64; RxDrop::ALL.len()],
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Packets whose routers' changes could not be written back (dropped whole).
    pub tx_refused: u64,
    /// Packets the destination host's device did not take (its queue full).
    pub tx_failed: u64,
    /// How late events ran against their simulated time, in nanoseconds.
    pub lateness_ns: Histogram,
    pub max_lateness_ns: u64,
    /// Times the forwarder slept waiting for a packet or an event.
    pub sleeps: u64,
    /// Turns of the main loop.
    pub loops: u64,
}

impl EmuStats {
    pub fn rx_dropped(&self, why: RxDrop) -> u64 {
        self.rx_dropped[why as usize]
    }
}

/// The real bytes of a packet in the simulator and the headers they were parsed to.
#[derive(Default)]
struct RawSlot {
    bytes: Vec<u8>,
    parsed: Packet,
}

/// Below this the forwarder does not sleep for the next event (a sleep overshoots by tens of
/// microseconds), it polls.
const SPIN_NS: u64 = 20_000;
/// The longest sleep: the stop condition is checked at least this often.
const MAX_SLEEP_NS: u64 = 20_000_000;
/// Packets read from one tap per turn of the loop, so one busy host cannot starve the others.
const RX_BUDGET: usize = 64;
/// Largest packet a tap delivers (an IPv4 datagram).
const MAX_PACKET: usize = 65_535;

#[derive(Debug)]
pub enum EmuError {
    /// A node element duplicated a packet: its copy has no bytes to send.
    Duplicated,
    Internal(String),
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::Duplicated => write!(
                f,
                "a node element duplicated a packet; emulation forwards real packets and cannot send a copy it has no bytes for"
            ),
            EmuError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for EmuError {}

pub struct Forwarder<I: Io> {
    pub sim: Sim,
    pub io: I,
    /// Host node of each tap.
    taps: Vec<NodeId>,
    /// Tap of each node (`u32::MAX`: none).
    tap_of_node: Vec<u32>,
    raw: Vec<RawSlot>,
    egress: Vec<(NodeId, PktId)>,
    buf: Vec<u8>,
    pub stats: EmuStats,
    /// Wall-clock time of simulated time 0.
    start_ns: u64,
    injected: u64,
}

impl<I: Io> Forwarder<I> {
    /// `taps[i]` is the external host node whose packets tap `i` carries.
    pub fn new(sim: Sim, io: I, taps: Vec<NodeId>) -> Self {
        let mut tap_of_node = vec![u32::MAX; sim.nodes.len()];
        for (i, &n) in taps.iter().enumerate() {
            tap_of_node[n as usize] = i as u32;
        }
        Forwarder {
            sim,
            io,
            taps,
            tap_of_node,
            raw: Vec::new(),
            egress: Vec::with_capacity(256),
            buf: vec![0; MAX_PACKET],
            stats: EmuStats::default(),
            start_ns: 0,
            injected: 0,
        }
    }

    /// Simulated time of wall-clock `ns`.
    fn sim_time(&self, ns: u64) -> Time {
        ns.saturating_sub(self.start_ns) * 1000
    }

    /// Forwards from wall-clock `start_ns` (simulated time 0) until simulated time `end` or
    /// until `stop` returns true (asked at least every 20 ms).
    pub fn run(
        &mut self,
        start_ns: u64,
        end: Time,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<(), EmuError> {
        self.start_ns = start_ns;
        while self.io.now_ns() < start_ns {
            self.io.wait(start_ns);
        }
        let mut next_stop_check = 0;
        loop {
            self.stats.loops += 1;
            let now_ns = self.io.now_ns();
            let now = self.sim_time(now_ns).min(end);
            if now_ns >= next_stop_check {
                if stop() {
                    break;
                }
                next_stop_check = now_ns + MAX_SLEEP_NS;
            }
            if let Some(due) = self.sim.events.peek_time() {
                if due <= now {
                    let late = (now - due) / 1000;
                    self.stats.lateness_ns.record(late);
                    self.stats.max_lateness_ns = self.stats.max_lateness_ns.max(late);
                }
            }
            self.sim.run_until(now);
            self.send_egress()?;
            if now >= end {
                break;
            }
            let got = self.receive_all(end);
            if self.sim.pool.allocated != self.injected {
                return Err(EmuError::Duplicated);
            }
            if got > 0 {
                self.send_egress()?;
                continue;
            }
            let next = self.sim.events.peek_time().unwrap_or(end).min(end);
            let next_ns = self.start_ns + next / 1000;
            let now_ns = self.io.now_ns();
            if next_ns > now_ns + SPIN_NS {
                self.stats.sleeps += 1;
                let wake = (next_ns - SPIN_NS / 2).min(now_ns + MAX_SLEEP_NS);
                self.io.wait(wake);
            }
        }
        self.send_egress()?;
        Ok(())
    }

    /// Reads what the taps hold (up to a budget each) and injects each packet at the
    /// simulated time it is read (never past `end`); returns how many packets were read.
    fn receive_all(&mut self, end: Time) -> usize {
        let mut got = 0;
        self.io.refresh();
        for tap in 0..self.taps.len() {
            for _ in 0..RX_BUDGET {
                let n = match self.io.recv(tap, &mut self.buf) {
                    Ok(Some(n)) => n,
                    Ok(None) | Err(_) => break,
                };
                got += 1;
                // The clock has moved while earlier packets and events were handled: a packet
                // enters at the time it is read, after every event due before then, never
                // in the past (it would then leave early).
                let now_ns = self.io.now_ns();
                let now = self.sim_time(now_ns).min(end);
                if now > self.sim.now() {
                    self.sim.run_until(now);
                }
                self.receive(tap, n);
            }
        }
        got
    }

    fn receive(&mut self, tap: usize, n: usize) {
        self.stats.rx_pkts += 1;
        self.stats.rx_bytes += n as u64;
        let node = self.taps[tap];
        let bytes = &self.buf[..n];
        let parsed = match parse_real(bytes) {
            Ok(p) => p,
            Err(why) => return self.count_rx_drop(why),
        };
        if parsed.ip.src != self.sim.nodes[node as usize].addr {
            return self.count_rx_drop(RxDrop::ForeignSource);
        }
        let known = addr_node(parsed.ip.dst).is_some_and(|d| {
            (d as usize) < self.sim.nodes.len() && self.sim.nodes[d as usize].external
        });
        if !known {
            return self.count_rx_drop(RxDrop::NoRoute);
        }
        let id = self.sim.pool.alloc(parsed);
        self.injected += 1;
        let i = id.0 as usize;
        if self.raw.len() <= i {
            self.raw.resize_with(i + 1, RawSlot::default);
        }
        let slot = &mut self.raw[i];
        slot.bytes.clear();
        let total = u16::from_be_bytes([bytes[2], bytes[3]]) as usize;
        slot.bytes.extend_from_slice(&bytes[..total]);
        slot.parsed = parsed;
        self.sim.inject(node, id);
    }

    fn count_rx_drop(&mut self, why: RxDrop) {
        self.stats.rx_dropped[why as usize] += 1;
    }

    fn send_egress(&mut self) -> Result<(), EmuError> {
        self.sim.take_egress(&mut self.egress);
        for k in 0..self.egress.len() {
            let (node, id) = self.egress[k];
            let tap = self.tap_of_node[node as usize];
            let slot = &mut self.raw[id.0 as usize];
            let pkt = self.sim.pool.get(id);
            if tap == u32::MAX {
                return Err(EmuError::Internal(format!(
                    "a packet reached node {node}, which has no tap"
                )));
            }
            match packet::rewrite::rewrite(&mut slot.bytes, &slot.parsed, pkt) {
                Err(_) => self.stats.tx_refused += 1,
                Ok(()) => match self.io.send(tap as usize, &slot.bytes) {
                    Ok(()) => {
                        self.stats.tx_pkts += 1;
                        self.stats.tx_bytes += slot.bytes.len() as u64;
                    }
                    Err(_) => self.stats.tx_failed += 1,
                },
            }
            self.sim.pool.free(id);
        }
        self.egress.clear();
        Ok(())
    }
}

/// Parses a real packet. Unlike [`packet::parse_packet`] the packet keeps its real length (a
/// real stack may lay options out with more padding than ours), so links serialise the bytes
/// that are really sent and the rewrite finds the bytes it expects.
pub fn parse_real(bytes: &[u8]) -> Result<Packet, RxDrop> {
    if bytes.first().map(|b| b >> 4) != Some(4) {
        return Err(RxDrop::NotIpv4);
    }
    if bytes
        .get(9)
        .is_some_and(|&p| p != wire::ipv4::PROTO_TCP && p != wire::ipv4::PROTO_UDP)
    {
        return Err(RxDrop::Protocol);
    }
    let mut p = packet::parse_packet(bytes).map_err(|e| match e {
        WireError::Truncated => RxDrop::Truncated,
        WireError::Checksum => RxDrop::Checksum,
        WireError::Malformed(_) => RxDrop::Malformed,
    })?;
    let ihl = (bytes[0] & 0x0f) as usize * 4;
    let total = u16::from_be_bytes([bytes[2], bytes[3]]) as usize;
    p.ip.payload_len = (total - ihl) as u16;
    Ok(p)
}

#[cfg(test)]
mod tests;
