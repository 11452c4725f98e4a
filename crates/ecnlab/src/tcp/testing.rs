//! Tools for testing transports and codecs: a two-endpoint harness with exact control over
//! every packet, small reference controllers, and a network impairment element.

use super::codec::Codec;
use super::config::TcpConfig;
use super::conn::{ConnParams, TcpConn};
use crate::cc::{AckEvent, Controller, Signal};
use crate::engine::rng::{self, Rng};
use crate::marker::PortView;
use crate::net::{Ctx, Endpoint, Forward, IpIdGen, IpIdMode, NodeElement};
use crate::packet::Packet;
use crate::time::{tx_time, Time, NEVER};
use rand::Rng as _;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The defaults in the papers' packet format — 1000-byte segments, no timestamps (data
/// packets of 1040 bytes, pure ACKs of 40) — in which the tests' hand-computed cases are
/// written; everything else as [`TcpConfig::default`].
pub fn thousand_byte_segments() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        timestamps: false,
        ..TcpConfig::default()
    }
}

// ---------------------------------------------------------------- controllers

/// Textbook Reno window (RFC 5681): slow start +acked bytes, congestion avoidance
/// +SMSS²/cwnd per ACK, halving of FlightSize on loss and on ECN, one SMSS after a timeout;
/// no growth during fast recovery. A reference for tests, not a scheme.
pub struct Reno {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    in_recovery: bool,
    pub losses: u32,
    pub rtos: u32,
    pub signals: Vec<Signal>,
}

impl Reno {
    pub fn new(mss: u32) -> Self {
        Reno {
            mss: mss as u64,
            cwnd: 10 * mss as u64,
            ssthresh: u64::MAX,
            in_recovery: false,
            losses: 0,
            rtos: 0,
            signals: Vec::new(),
        }
    }
    fn halve(&mut self, flight: u64) {
        self.ssthresh = (flight / 2).max(2 * self.mss);
        self.cwnd = self.ssthresh;
    }
}

impl Controller for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn set_initial_window(&mut self, bytes: u64) {
        self.cwnd = bytes;
    }
    fn on_ack(&mut self, ev: &AckEvent) {
        if self.in_recovery {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += ev.acked_bytes.min(2 * self.mss);
        } else {
            self.cwnd += (self.mss * self.mss / self.cwnd).max(1);
        }
    }
    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        self.signals.push(signal);
        if signal == Signal::Ecn && !self.in_recovery {
            self.halve(ev.bytes_in_flight.max(self.cwnd));
        }
    }
    fn on_loss(&mut self, _now: Time, bytes_in_flight: u64) {
        self.losses += 1;
        self.in_recovery = true;
        self.halve(bytes_in_flight);
    }
    fn on_recovery_end(&mut self, _now: Time) {
        self.in_recovery = false;
        self.cwnd = self.ssthresh;
    }
    fn on_rto(&mut self, _now: Time, bytes_in_flight: u64) {
        self.rtos += 1;
        self.in_recovery = false;
        self.ssthresh = (bytes_in_flight / 2).max(2 * self.mss);
        self.cwnd = self.mss;
    }
    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
}

/// A constant window (bytes) that ignores every event: isolates the transport's own rules.
pub struct FixedWindow(pub u64);

impl Controller for FixedWindow {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn set_initial_window(&mut self, _bytes: u64) {}
    fn on_ack(&mut self, _ev: &AckEvent) {}
    fn on_signal(&mut self, _ev: &AckEvent, _signal: Signal) {}
    fn on_loss(&mut self, _now: Time, _bytes_in_flight: u64) {}
    fn on_rto(&mut self, _now: Time, _bytes_in_flight: u64) {}
    fn window(&self) -> u64 {
        self.0
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
}

/// One call into a controller, as [`Probe`] records it.
#[derive(Clone, Copy, Debug)]
pub enum Call {
    Ack(AckEvent),
    Signal(Time, Signal),
    Loss(Time, u64),
    RecoveryEnd(Time),
    Rto(Time, u64),
    /// A loss found in the CWR round (`Controller::on_loss_in_cwr`).
    LossInCwr(Time),
    SpuriousTimeout(Time),
    Send(Time, u64, u64),
}

/// Wraps a controller and records every call into a shared log.
pub struct Probe<C: Controller> {
    pub inner: C,
    pub log: std::rc::Rc<std::cell::RefCell<Vec<Call>>>,
}

impl<C: Controller> Probe<C> {
    pub fn new(inner: C) -> (Self, std::rc::Rc<std::cell::RefCell<Vec<Call>>>) {
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        (
            Probe {
                inner,
                log: log.clone(),
            },
            log,
        )
    }
}

impl<C: Controller> Controller for Probe<C> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn set_initial_window(&mut self, bytes: u64) {
        self.inner.set_initial_window(bytes)
    }
    fn on_ack(&mut self, ev: &AckEvent) {
        self.log.borrow_mut().push(Call::Ack(*ev));
        self.inner.on_ack(ev)
    }
    fn on_signal(&mut self, ev: &AckEvent, signal: Signal) {
        self.log.borrow_mut().push(Call::Signal(ev.now, signal));
        self.inner.on_signal(ev, signal)
    }
    fn on_loss(&mut self, now: Time, bytes_in_flight: u64) {
        self.log.borrow_mut().push(Call::Loss(now, bytes_in_flight));
        self.inner.on_loss(now, bytes_in_flight)
    }
    fn on_recovery_end(&mut self, now: Time) {
        self.log.borrow_mut().push(Call::RecoveryEnd(now));
        self.inner.on_recovery_end(now)
    }
    fn on_rto(&mut self, now: Time, bytes_in_flight: u64) {
        self.log.borrow_mut().push(Call::Rto(now, bytes_in_flight));
        self.inner.on_rto(now, bytes_in_flight)
    }
    fn on_loss_in_cwr(&mut self, now: Time) {
        self.log.borrow_mut().push(Call::LossInCwr(now));
        self.inner.on_loss_in_cwr(now)
    }
    fn on_spurious_timeout(&mut self, now: Time) {
        self.log.borrow_mut().push(Call::SpuriousTimeout(now));
        self.inner.on_spurious_timeout(now)
    }
    fn on_send(&mut self, now: Time, bytes: u64, bytes_in_flight: u64) {
        self.log
            .borrow_mut()
            .push(Call::Send(now, bytes, bytes_in_flight));
        self.inner.on_send(now, bytes, bytes_in_flight)
    }
    fn window(&self) -> u64 {
        self.inner.window()
    }
    fn ssthresh(&self) -> u64 {
        self.inner.ssthresh()
    }
    fn pacing_rate(&self) -> Option<f64> {
        self.inner.pacing_rate()
    }
    fn cwr_state(&self) -> bool {
        self.inner.cwr_state()
    }
}

// ---------------------------------------------------------------- impairment element

/// A node element that drops, duplicates and delays (reorders) forwarded packets at random.
pub struct Impairment {
    pub drop: f64,
    pub duplicate: f64,
    /// Probability that a packet is held back, and the longest hold.
    pub delay: f64,
    pub max_delay: Time,
    /// Only impair TCP segments carrying payload (data), leaving ACKs alone.
    pub data_only: bool,
    rng: Rng,
    pub dropped: u64,
    pub duplicated: u64,
    pub delayed: u64,
}

impl Impairment {
    pub fn new(seed: u64, drop: f64, duplicate: f64, delay: f64, max_delay: Time) -> Self {
        Impairment {
            drop,
            duplicate,
            delay,
            max_delay,
            data_only: false,
            rng: rng::stream(seed, rng::kind::LINK, 0xEE),
            dropped: 0,
            duplicated: 0,
            delayed: 0,
        }
    }
}

impl NodeElement for Impairment {
    fn on_forward(
        &mut self,
        now: Time,
        _out_port: usize,
        pkt: &mut Packet,
        _ports: &[PortView],
    ) -> Forward {
        if self.data_only && pkt.payload_len == 0 {
            return Forward::Pass;
        }
        let u: f64 = self.rng.gen();
        if u < self.drop {
            self.dropped += 1;
            return Forward::Drop;
        }
        let u: f64 = self.rng.gen();
        if u < self.duplicate {
            self.duplicated += 1;
            return Forward::Duplicate;
        }
        let u: f64 = self.rng.gen();
        if u < self.delay && self.max_delay > 0 {
            self.delayed += 1;
            return Forward::HoldUntil(now + self.rng.gen_range(1..=self.max_delay));
        }
        Forward::Pass
    }
}

// ---------------------------------------------------------------- two-endpoint harness

/// Which way a packet travels in the [`Harness`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// From the data sender `a` to the data receiver `b`.
    AtoB,
    BtoA,
}

/// A packet as the harness saw it.
#[derive(Clone, Copy, Debug)]
pub struct Traced {
    pub time: Time,
    pub dir: Dir,
    pub pkt: Packet,
    /// False if the filter dropped it.
    pub delivered: bool,
}

/// Two connection endpoints joined by a FIFO link with a one-way delay (which a test may
/// change between runs) and an optional rate per direction, driven event by event; a filter
/// sees (and may change or drop) every packet.
/// Every packet sent and every arrival is traced.
pub struct Harness {
    pub now: Time,
    pub a: TcpConn,
    pub b: TcpConn,
    pub delay: Time,
    /// Link rate in bit/s per direction (0: infinite).
    pub rate_ab: u64,
    pub rate_ba: u64,
    busy_ab: Time,
    busy_ba: Time,
    /// Latest arrival scheduled per direction: the link is FIFO even when `delay` changes.
    last_arrival: [Time; 2],
    wire: BinaryHeap<Reverse<(Time, u64, usize)>>,
    seq: u64,
    /// Every packet sent, in order.
    pub sent: Vec<Traced>,
    /// Every packet delivered, in arrival order.
    pub arrived: Vec<Traced>,
    ipid_a: IpIdGen,
    ipid_b: IpIdGen,
    out: Vec<Packet>,
}

/// Harness addresses (`a` is node 0, `b` node 1 in [`crate::net::node_addr`] numbering).
pub const ADDR_A: u32 = 0x0A00_0001;
pub const ADDR_B: u32 = 0x0A00_0002;

impl Harness {
    /// `a` sends `size` bytes (None: unlimited) to `b` with controller `cc`; `a` opens at 0
    /// unless `client_initiated`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: TcpConfig,
        size: Option<u64>,
        cc: Box<dyn Controller>,
        codec_a: Box<dyn Codec>,
        codec_b: Box<dyn Codec>,
        delay: Time,
        client_initiated: bool,
    ) -> Self {
        let cfg = std::sync::Arc::new(cfg);
        let a = TcpConn::new(ConnParams {
            cfg: cfg.clone(),
            local_addr: ADDR_A,
            remote_addr: ADDR_B,
            local_port: 5001,
            remote_port: 49152,
            peer_ep: 1,
            flow: 0,
            // Close to the 32-bit wrap, so every test crosses it.
            iss: 0xFFFF_F000,
            active_open_at: (!client_initiated).then_some(0),
            app_start: 0,
            send_bytes: size,
            cc: Some(cc),
            codec: codec_a,
        });
        let b = TcpConn::new(ConnParams {
            cfg,
            local_addr: ADDR_B,
            remote_addr: ADDR_A,
            local_port: 49152,
            remote_port: 5001,
            peer_ep: 0,
            flow: 0,
            iss: 0x7FFF_FFF0,
            active_open_at: client_initiated.then_some(0),
            app_start: 0,
            send_bytes: Some(0),
            cc: None,
            codec: codec_b,
        });
        Harness {
            now: 0,
            a,
            b,
            delay,
            rate_ab: 0,
            rate_ba: 0,
            busy_ab: 0,
            busy_ba: 0,
            last_arrival: [0; 2],
            wire: BinaryHeap::new(),
            seq: 0,
            sent: Vec::new(),
            arrived: Vec::new(),
            ipid_a: IpIdGen::new(IpIdMode::Sequential, rng::stream(1, rng::kind::HOST, 0)),
            ipid_b: IpIdGen::new(IpIdMode::Sequential, rng::stream(1, rng::kind::HOST, 1)),
            out: Vec::new(),
        }
    }

    fn emit(&mut self, dir: Dir, filter: &mut dyn FnMut(&Harness, Dir, &mut Packet) -> bool) {
        let pkts = std::mem::take(&mut self.out);
        for mut p in pkts.iter().copied() {
            let keep = filter(self, dir, &mut p);
            self.sent.push(Traced {
                time: self.now,
                dir,
                pkt: p,
                delivered: keep,
            });
            if !keep {
                continue;
            }
            let (rate, busy) = match dir {
                Dir::AtoB => (self.rate_ab, &mut self.busy_ab),
                Dir::BtoA => (self.rate_ba, &mut self.busy_ba),
            };
            let leave = if rate > 0 {
                let t = (*busy).max(self.now) + tx_time(p.wire_len(), rate);
                *busy = t;
                t
            } else {
                self.now
            };
            let idx = self.sent.len() - 1;
            self.seq += 1;
            let last = &mut self.last_arrival[(dir == Dir::BtoA) as usize];
            *last = (*last).max(leave + self.delay);
            self.wire.push(Reverse((*last, self.seq, idx)));
        }
        self.out = pkts;
        self.out.clear();
    }

    /// Runs until `until` or until nothing is left to do.
    pub fn run(&mut self, until: Time, filter: &mut dyn FnMut(&Harness, Dir, &mut Packet) -> bool) {
        loop {
            let wire_t = self.wire.peek().map_or(NEVER, |r| r.0 .0);
            let ta = self.a.deadline();
            let tb = self.b.deadline();
            let t = wire_t.min(ta).min(tb);
            if t == NEVER || t > until {
                self.now = self.now.max(until.min(t));
                return;
            }
            self.now = self.now.max(t);
            let now = self.now;
            if wire_t == t {
                let Reverse((_, _, idx)) = self.wire.pop().unwrap();
                let tr = self.sent[idx];
                self.arrived.push(Traced { time: now, ..tr });
                match tr.dir {
                    Dir::AtoB => {
                        let mut ctx = Ctx::new(now, ADDR_B, &mut self.out, &mut self.ipid_b);
                        self.b.on_packet(&mut ctx, &tr.pkt);
                        self.emit(Dir::BtoA, filter);
                    }
                    Dir::BtoA => {
                        let mut ctx = Ctx::new(now, ADDR_A, &mut self.out, &mut self.ipid_a);
                        self.a.on_packet(&mut ctx, &tr.pkt);
                        self.emit(Dir::AtoB, filter);
                    }
                }
            } else if ta == t {
                let mut ctx = Ctx::new(now, ADDR_A, &mut self.out, &mut self.ipid_a);
                self.a.on_timer(&mut ctx);
                self.emit(Dir::AtoB, filter);
            } else {
                let mut ctx = Ctx::new(now, ADDR_B, &mut self.out, &mut self.ipid_b);
                self.b.on_timer(&mut ctx);
                self.emit(Dir::BtoA, filter);
            }
            debug_assert_eq!(self.a.pipe(), self.a.scoreboard().pipe_recomputed());
        }
    }

    /// Runs with no interference.
    pub fn run_clean(&mut self, until: Time) {
        self.run(until, &mut |_, _, _| true);
    }

    /// Relative sequence number of a data segment from `a` (for filters and assertions).
    pub fn rel_seq_a(&self, p: &Packet) -> u64 {
        p.tcp()
            .map_or(0, |t| t.seq.wrapping_sub(0xFFFF_F000) as u64)
    }

    /// Relative ACK number of a segment from `b`.
    pub fn rel_ack_b(&self, p: &Packet) -> u64 {
        p.tcp()
            .map_or(0, |t| t.ack.wrapping_sub(0xFFFF_F000) as u64)
    }
}
