//! Egress port: a queue discipline, an optional feedback marker, and a transmitter whose rate
//! may follow a piecewise-constant schedule. The link it feeds is a [`super::link::Pipe`].

use crate::aqm::{DropReason, HeldQdisc, Limit, Qdisc};
use crate::engine::TimerSlot;
use crate::marker::{Marker, PortState, PortView};
use crate::packet::pcap::PcapWriter;
use crate::packet::PktId;
use crate::stats::Histogram;
use crate::time::{to_secs, Time, NEVER, SEC};
use std::cell::Cell;

/// Link rate over time: `(from, bps)` steps, sorted, the first at time 0. A rate of 0 is an
/// outage: a packet in transmission waits for the next non-zero step.
#[derive(Clone, Debug, PartialEq)]
pub struct RateSchedule {
    steps: Vec<(Time, u64)>,
    /// Index of the step in force at the last query (queries are monotone in time).
    cursor: usize,
    /// Picoseconds per byte of a constant rate that divides a byte-second evenly (every
    /// usual link rate), else 0: a transmission's end is then a multiplication, exactly the
    /// division's result.
    byte_time: u64,
}

impl RateSchedule {
    pub fn constant(bps: u64) -> Self {
        Self::with_steps(vec![(0, bps)])
    }

    fn with_steps(steps: Vec<(Time, u64)>) -> Self {
        let byte_time = match steps[..] {
            [(_, bps)] if bps > 0 && (8 * SEC) % bps == 0 => 8 * SEC / bps,
            _ => 0,
        };
        RateSchedule {
            steps,
            cursor: 0,
            byte_time,
        }
    }

    /// Builds a schedule; `steps` must start at 0 and be strictly increasing in time.
    pub fn new(steps: Vec<(Time, u64)>) -> Result<Self, String> {
        if steps.first().map(|s| s.0) != Some(0) {
            return Err("the first step must start at time 0".into());
        }
        if steps.windows(2).any(|w| w[1].0 <= w[0].0) {
            return Err("step times must be strictly increasing".into());
        }
        Ok(Self::with_steps(steps))
    }

    pub fn steps(&self) -> &[(Time, u64)] {
        &self.steps
    }

    /// The highest rate of any step.
    pub fn peak_bps(&self) -> u64 {
        self.steps.iter().map(|s| s.1).max().unwrap_or(0)
    }

    /// Bits the link could carry over [0, `until`).
    pub fn capacity_bits(&self, until: Time) -> f64 {
        let mut bits = 0.0;
        for (i, &(from, bps)) in self.steps.iter().enumerate() {
            let to = self.steps.get(i + 1).map_or(until, |s| s.0).min(until);
            if to > from {
                bits += bps as f64 * to_secs(to - from);
            }
        }
        bits
    }

    fn seek(&mut self, t: Time) {
        while self.cursor + 1 < self.steps.len() && self.steps[self.cursor + 1].0 <= t {
            self.cursor += 1;
        }
    }

    /// Rate in force at `t` (monotone queries).
    #[inline]
    pub fn rate_at(&mut self, t: Time) -> u64 {
        self.seek(t);
        self.steps[self.cursor].1
    }

    /// Rate in force at `t`, not before the last query's, without moving the cursor (a reader
    /// that holds the schedule shared; the rate changes' own events move it).
    #[inline]
    pub fn rate_in_force(&self, t: Time) -> u64 {
        let mut i = self.cursor;
        while i + 1 < self.steps.len() && self.steps[i + 1].0 <= t {
            i += 1;
        }
        self.steps[i].1
    }

    /// Next change strictly after `t`, if any.
    pub fn next_change(&mut self, t: Time) -> Option<Time> {
        self.seek(t);
        self.steps.get(self.cursor + 1).map(|s| s.0)
    }

    /// When a transmission of `bytes` starting at `start` ends, integrating the schedule
    /// exactly (in bit·picoseconds) and rounding up to the next picosecond.
    #[inline(always)]
    pub fn finish_time(&mut self, start: Time, bytes: u32) -> Time {
        if self.byte_time != 0 {
            if let Some(t) = (bytes as u64).checked_mul(self.byte_time) {
                return start + t;
            }
        }
        // A constant-rate link (most) whose bit·picoseconds fit 64 bits (any packet under
        // 2 MB): the general integration's rounding in one native division.
        if let [(_, rate)] = self.steps[..] {
            if let Some(need) = (bytes as u64).checked_mul(8 * SEC) {
                if rate > 0 {
                    return start + need.div_ceil(rate);
                }
            }
        }
        self.finish_time_stepped(start, bytes)
    }

    #[inline(never)]
    fn finish_time_stepped(&mut self, start: Time, bytes: u32) -> Time {
        self.seek(start);
        // The step in force lasts for ever and the bit·picoseconds fit 64 bits: as above.
        if self.cursor + 1 == self.steps.len() {
            let rate = self.steps[self.cursor].1;
            if let Some(need) = (bytes as u64).checked_mul(8 * SEC) {
                if rate > 0 {
                    return start + need.div_ceil(rate);
                }
            }
        }
        let mut need = bytes as u128 * 8 * SEC as u128;
        let mut t = start;
        let mut i = self.cursor;
        loop {
            let rate = self.steps[i].1 as u128;
            let end = self.steps.get(i + 1).map(|s| s.0);
            match end {
                None => {
                    if rate == 0 {
                        return NEVER;
                    }
                    return t + ((need + rate - 1) / rate) as Time;
                }
                Some(end) => {
                    let cap = rate * (end - t) as u128;
                    if rate > 0 && cap >= need {
                        return t + ((need + rate - 1) / rate) as Time;
                    }
                    need -= cap;
                    t = end;
                    i += 1;
                }
            }
        }
    }
}

/// Batched service: at each transmission opportunity the transmitter takes what is queued,
/// up to a budget, and sends it as one transmission (802.11's aggregated frames): the batch
/// occupies the link for `overhead` plus its bits at the current rate, and all its packets
/// reach the far end together when it ends. A batch closes at the first packet that brings
/// it to `max_pkts`, to `max_bytes` or to `max_airtime` (so at least one packet is always
/// sent, and the packet that crosses a byte or airtime budget is still part of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    pub max_pkts: u32,
    pub max_bytes: u64,
    /// Airtime budget (bits at the rate in force when the batch starts), 0 = none.
    pub max_airtime: Time,
    /// Channel access, preamble and block acknowledgement per batch.
    pub overhead: Time,
}

/// Per-port counters. "Marked" counts packets whose ECN field left the port with a different
/// value than it arrived with, by the value written.
///
/// In declared order (`repr(C)`): what every packet's passage updates comes first, so that it
/// shares as few cache lines as it can (a port is touched once per packet with the rest of
/// the run's traffic in between: each of its lines is then a likely cache miss).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct PortCounters {
    /// Time-weighted sum of the backlog in packets (for the exact mean queue length).
    pub backlog_integral: u128,
    /// Sum of queueing delays of dequeued packets (arrival → start of transmission).
    pub sojourn_sum: u128,
    pub arrived_pkts: u64,
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    pub deq_pkts: u64,
    pub deq_bytes: u64,
    pub sojourn_max: Time,
    /// Time the transmitter was busy.
    pub busy_time: Time,
    /// Transmissions (batches on a batched port; packets otherwise).
    pub transmissions: u64,
    pub max_backlog: u32,
    pub marked: [u64; 4],
    pub drops: [u64; 5],
    pub drop_bytes: u64,
}

impl PortCounters {
    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }
    pub fn drop(&self, r: DropReason) -> u64 {
        self.drops[r.index()]
    }
}

/// What a run needed of a port's buffer limits: the most any arrival asked the discipline
/// to hold (the backlog it found plus itself, in packets, and in bytes where a limit is in
/// bytes), and whether anything read a limit for a decision (a marker, a node element, a
/// discipline that reads its own beyond refusing what overflows, see
/// [`Qdisc::reads_limit`]; a view handed out reads it when asked).
///
/// Every limit check compares what a discipline holds plus the arrival, which the port's
/// whole backlog bounds (a priority band holds part of it), with the limit. So while
/// `limit_read` stays false, a run with every arrival within `pkts` packets (`bytes`
/// bytes) is the same run, event for event, under any limits of at least that many: the
/// runner's proof that such a run need not be simulated again at a larger buffer.
///
/// No `Default`: a record must start from its discipline ([`BufferNeed::of`]), which may
/// read its limits from the start.
#[derive(Debug)]
pub struct BufferNeed {
    pub pkts: u32,
    /// Tracked only on a port with a limit in bytes (else 0).
    pub bytes: u64,
    pub tracks_bytes: bool,
    pub limit_read: Cell<bool>,
}

impl BufferNeed {
    /// Nothing needed yet of `q`'s limits; read from the start if `q` reads them itself.
    pub fn of(q: &dyn Qdisc) -> Self {
        BufferNeed {
            pkts: 0,
            bytes: 0,
            tracks_bytes: q.limits().iter().any(|l| matches!(l, Limit::Bytes(_))),
            limit_read: Cell::new(q.reads_limit()),
        }
    }

    /// Notes a view handed out (to a marker's timer, a node element): its limit read, if read.
    #[inline]
    pub fn took_back(&self, v: &PortView) {
        if v.limit_was_read() {
            self.limit_read.set(true);
        }
    }
}

/// An egress port: a transmitter, its discipline and its link's far end.
///
/// In declared order (`repr(C)`, each port starting a cache line): first what a packet's
/// arrival and departure read and write, then the counters, then what only setup, the
/// optional records and the end of the run use. A port is touched once per packet with the
/// rest of the run's traffic in between, so each line it spreads over is a likely miss.
#[repr(C, align(64))]
pub struct Port {
    /// Packets the discipline holds, counted as they pass through the port (enqueued,
    /// released, dropped at dequeue, pushed out): its length without a call into it (a
    /// virtual call for most disciplines), read several times per packet. Debug builds check
    /// it against the discipline.
    pub queued: usize,
    /// Packet on the wire, if any (the first of a batch).
    pub busy: Option<PktId>,
    /// When the transmission of a packet [`Port::in_pipe`] ends.
    pub tx_end: Time,
    /// Its end's place in the event sequence, reserved when it started.
    pub tx_seq: u64,
    pub busy_since: Time,
    /// Last time the backlog changed (for the time-weighted integral).
    pub backlog_mark: Time,
    pub marker: Option<Box<dyn Marker>>,
    pub qdisc: HeldQdisc,
    pub link: u32,
    /// Link-layer bytes added to each transmission.
    pub framing: u32,
    pub rate: RateSchedule,
    pub need: BufferNeed,
    /// The packet on the wire is already in the link's pipe, with its arrival time: put
    /// there when its transmission started, as it would have been when it ends (see
    /// `transmit_one`). Its end ([`Port::tx_end`]) is then an event only if something
    /// waits for it ([`Port::tx_scheduled`]).
    pub in_pipe: bool,
    /// Its end is scheduled as an event (a packet waits behind it).
    pub tx_scheduled: bool,
    /// The discipline may push out queued packets at enqueue (set with the discipline).
    pub evicts: bool,
    /// Dequeuing from the discipline when it is empty changes nothing (set with the
    /// discipline): a transmission that ends with nothing queued then skips the dequeue.
    pub idle_noop: bool,
    /// [`Port::sojourn`] or [`Port::pcap`] is kept: every departure is recorded.
    pub(super) records_departures: bool,
    /// Boxed: a batched port (Wi-Fi's) is rare, and its test is on every packet's path.
    pub batch: Option<Box<Batch>>,
    pub counters: PortCounters,
    pub node: u32,
    /// Sample this port's queue in time series.
    pub sampled: bool,
    pub marker_timer: TimerSlot,
    /// The rest of the batch on the wire, in order (capacity kept between batches).
    pub batch_rest: Vec<PktId>,
    /// Set by the network alone, which keeps [`Port::records_departures`] with them.
    pub(super) sojourn: Option<Histogram>,
    pub(super) pcap: Option<PcapWriter>,
    pub name: String,
}

impl Port {
    /// Replaces the queue discipline (before the run starts).
    pub fn set_qdisc(&mut self, q: Box<dyn Qdisc>) {
        self.evicts = q.evicts();
        self.idle_noop = q.idle_dequeue_is_noop();
        self.queued = q.len();
        self.need = BufferNeed::of(q.as_ref());
        self.qdisc = HeldQdisc::new(q);
    }

    /// Packets the discipline holds ([`Port::queued`]).
    #[inline(always)]
    pub fn backlog_pkts(&self) -> usize {
        debug_assert_eq!(
            self.queued,
            self.qdisc.len(),
            "port {}: the discipline's length changed outside the port",
            self.name
        );
        self.queued
    }

    #[inline]
    pub fn view(&mut self, now: Time) -> PortView {
        PortView::new(
            now,
            self.backlog_pkts() as u32,
            self.qdisc.bytes(),
            self.rate.rate_at(now),
            self.qdisc.limit(),
            self.counters.deq_bytes,
        )
    }

    /// Notes what an arrival of `len` bytes asks the discipline to hold (before it decides).
    #[inline(always)]
    pub fn note_arrival(&mut self, len: u32) {
        let pkts = (self.queued as u32).saturating_add(1);
        if pkts > self.need.pkts {
            self.need.pkts = pkts;
        }
        if self.need.tracks_bytes {
            self.note_arrival_bytes(len);
        }
    }

    #[inline(never)]
    fn note_arrival_bytes(&mut self, len: u32) {
        let bytes = self.qdisc.bytes() + len as u64;
        if bytes > self.need.bytes {
            self.need.bytes = bytes;
        }
    }

    /// Calls `f` with the marker (if any) and the port as it is at `now`.
    #[inline(always)]
    pub fn with_marker<R>(
        &mut self,
        now: Time,
        f: impl FnOnce(&mut dyn Marker, &dyn PortState) -> R,
    ) -> Option<R> {
        if self.marker.is_none() {
            return None;
        }
        Some(self.call_marker(now, f))
    }

    /// [`Port::with_marker`] on a port that has one (most have none: the check stays inline).
    #[inline(never)]
    fn call_marker<R>(
        &mut self,
        now: Time,
        f: impl FnOnce(&mut dyn Marker, &dyn PortState) -> R,
    ) -> R {
        debug_assert_eq!(self.queued, self.qdisc.len());
        let Port {
            marker,
            qdisc,
            queued,
            rate,
            counters,
            need,
            ..
        } = self;
        let port = LivePort {
            now,
            qdisc,
            queued: *queued,
            rate,
            dequeued_bytes: counters.deq_bytes,
            limit_read: &need.limit_read,
        };
        f(marker.as_deref_mut().unwrap(), &port)
    }

    /// Accounts the backlog before it changes at `now`.
    #[inline]
    pub fn integrate_backlog(&mut self, now: Time) {
        let q = self.backlog_pkts() as u128;
        self.counters.backlog_integral += q * (now - self.backlog_mark) as u128;
        self.backlog_mark = now;
    }
}

/// A port as its marker sees it during a packet's passage (see [`PortState`]).
struct LivePort<'a> {
    now: Time,
    qdisc: &'a HeldQdisc,
    queued: usize,
    rate: &'a RateSchedule,
    dequeued_bytes: u64,
    limit_read: &'a Cell<bool>,
}

impl PortState for LivePort<'_> {
    fn now(&self) -> Time {
        self.now
    }
    fn backlog_pkts(&self) -> u32 {
        self.queued as u32
    }
    fn backlog_bytes(&self) -> u64 {
        self.qdisc.bytes()
    }
    fn rate_bps(&self) -> u64 {
        self.rate.rate_in_force(self.now)
    }
    fn limit(&self) -> Limit {
        self.limit_read.set(true);
        self.qdisc.limit()
    }
    fn dequeued_bytes(&self) -> u64 {
        self.dequeued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, US};

    #[test]
    fn constant_rate_finish() {
        let mut r = RateSchedule::constant(100_000_000);
        assert_eq!(r.finish_time(5, 1000), 5 + 80 * US);
    }

    #[test]
    fn constant_rate_finish_is_the_rounded_up_division_for_every_rate() {
        // Rates that divide a byte-second (multiplied) and rates that do not (divided), up to
        // sizes whose bit-picoseconds no longer fit 64 bits (integrated in 128).
        for bps in [
            1,
            3,
            7_000,
            1_500_000,
            100_000_000,
            1_000_000_000,
            2_500_000_000,
            400_000_000_000,
        ] {
            let mut r = RateSchedule::constant(bps);
            for bytes in [0, 1, 40, 1500, 9000, 65_536, 2_305_843, 2_305_844, u32::MAX] {
                let want = 7 + (bytes as u128 * 8 * SEC as u128).div_ceil(bps as u128);
                if want > Time::MAX as u128 / 2 {
                    continue;
                }
                assert_eq!(
                    r.finish_time(7, bytes) as u128,
                    want,
                    "{bps} bps, {bytes} B"
                );
            }
        }
    }

    #[test]
    fn finish_spans_rate_change_and_outage() {
        // 8 Mbps until 1 ms, outage until 2 ms, then 16 Mbps.
        let mut r = RateSchedule::new(vec![(0, 8_000_000), (MS, 0), (2 * MS, 16_000_000)]).unwrap();
        // 1000 B = 8000 bits: 500 us at 8 Mbps fits before the change.
        assert_eq!(r.finish_time(0, 1000), MS);
        // Starting at 0.5 ms: 4000 bits before 1 ms, outage, 4000 bits at 16 Mbps = 250 us.
        let mut r2 =
            RateSchedule::new(vec![(0, 8_000_000), (MS, 0), (2 * MS, 16_000_000)]).unwrap();
        assert_eq!(r2.finish_time(MS / 2, 1000), 2 * MS + 250 * US);
        assert_eq!(r2.rate_at(2 * MS), 16_000_000);
    }

    #[test]
    fn only_drop_tail_dequeues_from_empty_without_effect() {
        use crate::aqm::{DropTail, Limit, Red, RedConfig};
        use crate::engine::rng;
        assert!(DropTail::new(Limit::Packets(5)).idle_dequeue_is_noop());
        // RED starts its idle period on an empty dequeue, as ns-2's REDQueue::deque sets idle_.
        let red = Red::new(RedConfig::default(), rng::stream(1, rng::kind::QDISC, 0));
        assert!(!red.idle_dequeue_is_noop());
    }

    #[test]
    fn the_rate_in_force_is_the_rate_at_without_moving_the_cursor() {
        let steps = vec![(0, 8_000_000), (MS, 0), (2 * MS, 16_000_000)];
        let mut moved = RateSchedule::new(steps.clone()).unwrap();
        let held = RateSchedule::new(steps).unwrap();
        for t in [0, MS / 2, MS, MS + 1, 2 * MS - 1, 2 * MS, 5 * MS] {
            assert_eq!(held.rate_in_force(t), moved.rate_at(t), "at {t} ps");
        }
        assert_eq!(held.cursor, 0);
    }

    #[test]
    fn bad_schedules_rejected() {
        assert!(RateSchedule::new(vec![(1, 5)]).is_err());
        assert!(RateSchedule::new(vec![(0, 5), (0, 6)]).is_err());
    }
}
