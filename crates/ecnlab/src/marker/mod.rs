//! Feedback markers: router-side components that watch an egress port (arrivals, departures,
//! backlog, capacity), may keep periodic measurements, and write congestion information into
//! packets. Every network-assisted scheme's router is a marker (EECN's predictor, VCP's load
//! factor, UNO's IP-ID stamping, HFCC's overlay); the queue discipline under it stays generic.
//!
//! Like queue disciplines, markers get `now` and a packet and return; they never call the
//! event engine (their timer is a deadline the port turns into an event).

pub mod flows;
pub mod load;
pub mod step;

pub use step::StepMarker;

use crate::aqm::{DropReason, Limit};
use crate::packet::Packet;
use crate::time::{Time, NEVER};
use std::cell::Cell;

/// What a marker may know about its port at a given instant.
///
/// The buffer limit is read through [`PortState::limit`], which notes the reading: a run
/// whose decisions never read its ports' limits (and whose arrivals never needed more than
/// them) is the same run under larger limits, which the runner then need not simulate.
#[derive(Debug)]
pub struct PortView {
    pub now: Time,
    /// Packets and bytes waiting in the queue discipline (not counting the one on the wire).
    pub backlog_pkts: u32,
    pub backlog_bytes: u64,
    /// Current link rate in bits per second.
    pub rate_bps: u64,
    /// The discipline's buffer limit (read by [`PortState::limit`] only).
    limit: Limit,
    /// Whether anything read `limit` (the port takes it back after the view was used).
    limit_read: Cell<bool>,
    /// Bytes the port has released for transmission since the start (a departure counter,
    /// for schemes that measure the dequeue rate).
    pub dequeued_bytes: u64,
}

impl PortView {
    pub fn new(
        now: Time,
        backlog_pkts: u32,
        backlog_bytes: u64,
        rate_bps: u64,
        limit: Limit,
        dequeued_bytes: u64,
    ) -> Self {
        PortView {
            now,
            backlog_pkts,
            backlog_bytes,
            rate_bps,
            limit,
            limit_read: Cell::new(false),
            dequeued_bytes,
        }
    }

    /// How long the queued bytes take to leave at the current rate.
    pub fn drain_time(&self) -> Time {
        (self.backlog_bytes as u128 * 8 * crate::time::SEC as u128 / self.rate_bps.max(1) as u128)
            as Time
    }

    /// Whether [`PortState::limit`] was called on this view.
    pub fn limit_was_read(&self) -> bool {
        self.limit_read.get()
    }
}

/// A marker's look at its port during a packet's passage, each reading taken when the marker
/// asks for it: the per-packet hooks run at every packet of a marked port and most markers
/// read nothing there, while a snapshot costs a call into the discipline for each of its
/// length, bytes and limit ([`PortView`] is the snapshot, and reads itself).
pub trait PortState {
    fn now(&self) -> Time;
    /// Packets waiting in the queue discipline (not counting the one on the wire).
    fn backlog_pkts(&self) -> u32;
    /// Bytes waiting in the queue discipline.
    fn backlog_bytes(&self) -> u64;
    /// Current link rate in bits per second.
    fn rate_bps(&self) -> u64;
    /// The discipline's buffer limit.
    fn limit(&self) -> Limit;
    /// Bytes the port has released for transmission since the start.
    fn dequeued_bytes(&self) -> u64;
    /// Every reading at once (the limit among them, so it counts as read).
    fn view(&self) -> PortView {
        PortView::new(
            self.now(),
            self.backlog_pkts(),
            self.backlog_bytes(),
            self.rate_bps(),
            self.limit(),
            self.dequeued_bytes(),
        )
    }
}

impl PortState for PortView {
    fn now(&self) -> Time {
        self.now
    }
    fn backlog_pkts(&self) -> u32 {
        self.backlog_pkts
    }
    fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }
    fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    fn limit(&self) -> Limit {
        self.limit_read.set(true);
        self.limit
    }
    fn dequeued_bytes(&self) -> u64 {
        self.dequeued_bytes
    }
}

pub trait Marker {
    /// The feedback the marker writes, by the name of the codecs' family that reads it
    /// (`"ce"` for RFC 3168 CE marks, else the scheme's name: `"vcp"`, `"uno"`, ...): a
    /// flow whose codec reads none of what its path writes is told so when it is built.
    fn feedback(&self) -> &'static str;
    /// A packet arrives at the port, before the queue discipline decides. A marker that takes
    /// over the congestion-marking decision for this packet sets `pkt.meta.marker_owned`.
    fn on_arrival(&mut self, _port: &dyn PortState, _pkt: &mut Packet) {}
    /// The discipline accepted the packet (`port` already counts it).
    fn on_enqueued(&mut self, _port: &dyn PortState, _pkt: &Packet) {}
    /// The packet was dropped at this port.
    fn on_drop(&mut self, _port: &dyn PortState, _pkt: &Packet, _why: DropReason) {}
    /// The packet leaves the queue for the transmitter (`port` no longer counts it). Markers
    /// that mark on dequeue (VCP) write here.
    fn on_dequeue(&mut self, _port: &dyn PortState, _pkt: &mut Packet) {}
    /// When the marker next wants `on_timer` ([`NEVER`] for never). The port reads it at the
    /// start and after each `on_timer`: only `on_timer` may move it (the per-packet hooks
    /// run at every packet and leave it alone; debug builds check).
    fn next_timer(&self) -> Time {
        NEVER
    }
    fn on_timer(&mut self, _v: &PortView) {}
    /// A value worth sampling over time (load factor, predicted level), if any.
    fn gauge(&self) -> Option<f64> {
        None
    }
    /// Whether the marker's thresholds can be reached under the port's buffer limit
    /// ("field: why not" when they cannot).
    fn fits(&self, _limit: Limit) -> Result<(), String> {
        Ok(())
    }
}

/// What the load-factor markers' unit tests share: an idle 10 Mb/s port, a UDP packet, and
/// running a marker's timers.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Marker, PortView};
    use crate::aqm::Limit;
    use crate::packet::Packet;
    use crate::time::Time;
    use crate::wire::{Ecn, Ipv4Repr, UdpRepr};

    /// An empty 10 Mb/s port with a 1000-packet buffer (γ·C·t_ρ = 245 kB at 200 ms, γ 0.98).
    pub(crate) fn view(now: Time) -> PortView {
        PortView::new(now, 0, 0, 10_000_000, Limit::Packets(1000), 0)
    }

    /// A 1000-byte UDP packet.
    pub(crate) fn udp(ident: u16, ecn: Ecn) -> Packet {
        Packet::new_udp(
            Ipv4Repr {
                ecn,
                ident,
                ..Default::default()
            },
            UdpRepr::default(),
            972,
        )
    }

    /// Fires the marker's timers on [`view`] until one at or after `until` has run.
    pub(crate) fn run_timers_until(m: &mut impl Marker, until: Time) {
        let mut t = 0;
        while t < until {
            t = m.next_timer();
            m.on_timer(&view(t));
        }
    }
}
