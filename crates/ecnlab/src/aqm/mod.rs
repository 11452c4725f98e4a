//! Queue disciplines: what a port's buffer accepts, marks, drops and releases.
//!
//! A discipline sees `now` and the packet and returns a verdict; it never touches the event
//! engine, so the same code can run on real packets with a wall clock.

pub mod codel;
pub mod droptail;
pub mod fq_codel;
pub mod held;
pub mod prio;
pub mod red;

pub use codel::{Codel, CodelConfig};
pub use droptail::DropTail;
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use held::HeldQdisc;
pub use prio::PrioQueue;
pub use red::{Red, RedConfig};

use crate::packet::{Packet, PacketPool, PktId};
use crate::time::Time;

/// Why a packet was dropped. Ports count drops by reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The buffer was full.
    Overflow,
    /// An AQM's probabilistic early drop (RED between the thresholds on a Not-ECT packet).
    Early,
    /// An AQM's forced drop (RED above max_th, or above 2·max_th with gentle).
    Forced,
    /// Dropped at dequeue by a delay-based AQM (CoDel).
    Sojourn,
    /// No route, TTL expired, or dropped by a node element.
    Other,
}

impl DropReason {
    pub const ALL: [DropReason; 5] = [
        DropReason::Overflow,
        DropReason::Early,
        DropReason::Forced,
        DropReason::Sojourn,
        DropReason::Other,
    ];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
            DropReason::Sojourn => "sojourn",
            DropReason::Other => "other",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted; the discipline holds the packet.
    Enqueued,
    Dropped(DropReason),
}

/// Buffer limit, in packets or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
}

impl Limit {
    /// A limit of `n` packets as a scenario gives it (a 64-bit integer): refused above what
    /// the discipline's counter holds, where a narrowing cast would wrap (2^32 would become 0
    /// and drop every packet).
    pub fn packets(n: u64) -> Result<Limit, String> {
        u32::try_from(n).map(Limit::Packets).map_err(|_| {
            format!(
                "limit: {n} packets is more than a packet limit holds (at most {}); \
                 give a limit in bytes for a larger buffer",
                u32::MAX
            )
        })
    }

    /// Would a queue holding `pkts`/`bytes` overflow by taking `len` more bytes?
    #[inline]
    pub fn overflows(self, pkts: usize, bytes: u64, len: u32) -> bool {
        match self {
            Limit::Packets(n) => pkts >= n as usize,
            Limit::Bytes(b) => bytes + len as u64 > b,
        }
    }
    /// The limit in packets (bytes converted with `mean_pkt` bytes per packet), as markers that
    /// reason in packets (EECN's Q_limit) need.
    pub fn in_packets(self, mean_pkt: u32) -> f64 {
        match self {
            Limit::Packets(n) => n as f64,
            Limit::Bytes(b) => b as f64 / mean_pkt.max(1) as f64,
        }
    }
}

/// A port's queue discipline.
pub trait Qdisc {
    /// Offers packet `id` (contents `pkt`, which the discipline may re-mark). On
    /// [`Verdict::Enqueued`] the discipline keeps `id`; on a drop the caller frees it.
    fn enqueue(&mut self, now: Time, id: PktId, pkt: &mut Packet) -> Verdict;

    /// Releases the next packet to transmit. Packets a discipline discards at dequeue are pushed
    /// onto `dropped` (the caller counts and frees them).
    fn dequeue(
        &mut self,
        now: Time,
        pool: &mut PacketPool,
        dropped: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId>;

    /// Packets held.
    fn len(&self) -> usize;
    /// Bytes held (IP length).
    fn bytes(&self) -> u64;
    fn limit(&self) -> Limit;
    /// Every buffer limit the discipline enforces (a priority queue's bands each have
    /// theirs), for the port's record of what the run needed of them (`net::port::BufferNeed`).
    fn limits(&self) -> Vec<Limit> {
        vec![self.limit()]
    }
    /// Whether a decision of the discipline reads a limit of [`Qdisc::limits`] other than to
    /// refuse (or push out to take) an arrival that would hold more than the limit, counted
    /// as the packets and bytes held plus the arrival's (RED's thresholds are their own
    /// parameters, not fractions of the limit, and read none). While it is false, a run
    /// whose arrivals never needed more than a limit is the same run under any limit at
    /// least that large. A discipline that does not say reads it.
    fn reads_limit(&self) -> bool {
        true
    }
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Tells the discipline the link rate (RED's idle-time correction needs it).
    fn set_rate(&mut self, _bps: u64) {}
    /// Internal state worth sampling over time (RED's average queue), if any.
    fn avg_queue(&self) -> Option<f64> {
        None
    }
    /// Visits every packet held (conservation checks, end-of-run accounting).
    fn for_each(&self, f: &mut dyn FnMut(PktId));
    /// A packet already held that the last [`Qdisc::enqueue`] pushed out to make room
    /// (FQ-CoDel drops from the fattest flow's head); the caller counts and frees it.
    fn evicted(&mut self) -> Option<(PktId, DropReason)> {
        None
    }
    /// Whether [`Qdisc::evicted`] can ever return a packet (so ports ask only those that can).
    fn evicts(&self) -> bool {
        false
    }
    /// The buffer limit of a plain [`DropTail`] (which a port then holds by value and calls
    /// without a virtual call per packet); None for every other discipline.
    fn drop_tail_limit(&self) -> Option<Limit> {
        None
    }
    /// Whether [`Qdisc::dequeue`] on an empty discipline changes nothing (no idle-time or
    /// state bookkeeping, as RED's and CoDel's have), so a port whose transmission ends with
    /// nothing queued need not ask (set with the discipline, read per transmission).
    fn idle_dequeue_is_noop(&self) -> bool {
        false
    }
    /// The congestion feedback the discipline writes into packets, named as a
    /// [`Marker::feedback`](crate::marker::Marker::feedback) is (`"ce"` for RFC 3168 CE
    /// marks); None if it only drops.
    fn feedback(&self) -> Option<&'static str> {
        None
    }
}
