//! One TCP connection endpoint: the connection's state, what it was built with, the geometry
//! of its send stream and its entry points (a packet arrives, a timer fires), which hand each
//! event to the file that owns its concern. The files follow Linux's own split of TCP, and
//! each lists the readings of the RFCs it makes:
//! - [`handshake`]: the three-way handshake and the options it negotiates (`tcp_connect`,
//!   `tcp_rcv_synsent_state_process`, `tcp_conn_request`);
//! - [`output`]: the send path — which segment goes next, the window, pacing, TSO deferral,
//!   headers (`tcp_output.c`: `tcp_write_xmit`, `tcp_transmit_skb`);
//! - [`input`]: ACK processing and RTT sampling (`tcp_input.c`: `tcp_ack`,
//!   `tcp_clean_rtx_queue`, `tcp_sacktag_write_queue`, `tcp_ack_update_rtt`) and the calls
//!   into the feedback codec and the congestion controller;
//! - [`recovery`]: loss recovery — NewReno, SACK, RACK, PRR, F-RTO, the timeout
//!   (`tcp_fastretrans_alert`, `tcp_enter_recovery`, `tcp_process_loss`, `tcp_enter_loss`,
//!   `tcp_recovery.c`), and [`tlp`], the tail loss probe;
//! - [`timer`]: the timers and what fires them (`tcp_timer.c`);
//! - [`receive`]: the receiving half's hooks — reassembly, delayed and quick ACKs, SACK
//!   compression, the advertised window (`tcp_data_queue`, `__tcp_ack_snd_check`,
//!   `tcp_select_window`);
//! - [`stats`]: the flow's row of results and its sampled time series.
//!
//! The send buffer is simulated (counts, not bytes). Sequence numbers are 64-bit and relative
//! to each side's ISN inside the connection (the SYN is 0, the first data byte 1), and the low
//! 32 bits of `ISN + relative` on the wire. Segments have fixed boundaries (see
//! [`super::scoreboard`]): segment `k` starts at byte `1 + k·MSS`, the last one is short and
//! carries the FIN. Client-initiated transfers: the data receiver opens; the sender starts
//! sending when the handshake completes (no request bytes are modelled).

mod handshake;
mod input;
mod output;
mod receive;
mod recovery;
mod stats;
mod timer;
mod tlp;

pub use recovery::Recovery;

use super::codec::{Codec, TcpInfo};
use super::config::{RtoFloor, TcpConfig};
use super::rate::RateState;
use super::rcvbuf::RcvAutotune;
use super::recv::Receiver;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::seq::unwrap32;
use crate::cc::Controller;
use crate::net::{Ctx, Endpoint, Samples};
use crate::packet::Packet;
use crate::stats::FlowRecord;
use crate::time::{Time, NEVER, US};
use crate::wire::TcpFlags;
use handshake::Opening;
use output::{CwndUse, Pacing};
use recovery::LossRecovery;
use stats::{SendStats, Stats};
use std::sync::Arc;
use timer::Timers;
use tlp::LossProbe;

/// Connection state (the subset of RFC 9293's states a simulated transfer goes through).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Active opener before its start time.
    Idle,
    Listen,
    SynSent,
    SynReceived,
    Established,
    /// The handshake gave up after `syn_retries`.
    Failed,
}

/// Everything needed to build one endpoint of a connection.
pub struct ConnParams {
    /// Shared by the connection's two sides (and any other connection built alike).
    pub cfg: Arc<TcpConfig>,
    pub local_addr: u32,
    pub remote_addr: u32,
    pub local_port: u16,
    pub remote_port: u16,
    /// Endpoint id of the peer (packets are addressed to it).
    pub peer_ep: u32,
    /// Flow index stamped on packets.
    pub flow: u32,
    /// Initial send sequence number (wire).
    pub iss: u32,
    /// `Some(t)`: actively open at `t`; `None`: listen.
    pub active_open_at: Option<Time>,
    /// When the application started (for FCT and throughput).
    pub app_start: Time,
    /// Bytes this side's application sends: `None` unlimited, `Some(0)` none (it only
    /// closes after the peer does).
    pub send_bytes: Option<u64>,
    /// The congestion controller; `None` for a side that sends no data (its FIN is not
    /// window-limited).
    pub cc: Option<Box<dyn Controller>>,
    pub codec: Box<dyn Codec>,
}

/// The window of a side without a controller (a receiver's): no limit.
const NO_CONTROLLER_WINDOW: u64 = u64::MAX / 4;

/// The state only a side that sends data (or its FIN) uses: the scoreboard and the
/// recovery, loss-probe, pacing and window-use machinery and their timers. The receiving side
/// of a transfer sends nothing but its handshake and ACKs until its FIN, so it makes this on
/// its first write and reads the initial state until then: a flow's receiver pays a pointer
/// for about 450 bytes. Every write goes through [`TcpConn::tx_mut`]; a write on a path a
/// pure receiver takes (an ACK, a sending opportunity) that would leave the initial state as
/// it is, is skipped while there is none, so results are those of a connection that had
/// it from the start.
struct SendHalf {
    sb: Scoreboard,
    /// Go-back-N pointer (segment number) after a timeout without SACK; equals `sb.end()`
    /// otherwise.
    snd_nxt: u64,
    rate: RateState,
    recovery: LossRecovery,
    probe: LossProbe,
    timers: Timers,
    pacing: Pacing,
    cwnd_use: CwndUse,
    stats: SendStats,
}

impl SendHalf {
    /// The state a connection starts with (each part as its `Default` makes it).
    const fn new() -> Self {
        SendHalf {
            sb: Scoreboard::new(),
            snd_nxt: 0,
            rate: RateState::new(),
            recovery: LossRecovery::new(),
            probe: LossProbe::new(),
            timers: Timers::new(),
            pacing: Pacing::new(),
            cwnd_use: CwndUse::new(),
            stats: SendStats::new(),
        }
    }
}

/// What a side without its sending half reads.
static IDLE_SEND_HALF: SendHalf = SendHalf::new();

pub struct TcpConn {
    cfg: Arc<TcpConfig>,
    local_addr: u32,
    remote_addr: u32,
    local_port: u16,
    remote_port: u16,
    peer_ep: u32,
    flow: u32,
    iss: u32,
    irs: u32,
    state: State,
    open_at: Time,
    app_start: Time,
    send_bytes: Option<u64>,
    /// The application has closed: the FIN may go once all data is sent.
    app_closed: bool,
    /// When an unlimited sender's application stops writing (`NEVER`: it does not).
    app_stop_at: Time,
    cc: Option<Box<dyn Controller>>,
    /// The controller's window, read again after every call that may change it: the sender
    /// asks for it several times per ACK and per segment, a virtual call each
    /// ([`NO_CONTROLLER_WINDOW`] without a controller).
    cc_window: u64,
    codec: Box<dyn Codec>,

    // Negotiated at the handshake.
    mss: u64,
    /// Segments of the send stream, `send_bytes` over `mss` (`u64::MAX` unlimited): kept with
    /// them by [`Self::set_geometry`], as every segment, ACK and SACK block reads it.
    n_segs: u64,
    sack_ok: bool,
    ts_ok: bool,
    /// Shift applied to the peer's advertised window / to ours.
    snd_wscale: u8,
    rcv_wscale: u8,
    peer_offered_wscale: bool,
    ts_offset: u32,
    opening: Opening,

    // Sending half: what both sides use here, the rest in `snd`.
    snd_una: u64,
    snd_wnd: u64,
    rtt: RttEstimator,
    /// Made when first written (see [`SendHalf`]): `None` for a side that has sent nothing
    /// but its handshake, which reads [`SendHalf::default`].
    snd: Option<Box<SendHalf>>,

    // Receiving half.
    rcv: Receiver,
    /// The advertised window under Linux's autotuning (`rcv_autotune`), from the handshake.
    autotune: Option<Box<RcvAutotune>>,

    stats: Stats,
}

impl TcpConn {
    pub fn new(p: ConnParams) -> Self {
        let cfg = p.cfg;
        let mut rtt = RttEstimator::new(
            cfg.initial_rto(),
            cfg.min_rto(),
            cfg.max_rto(),
            cfg.granularity(),
        );
        rtt.floor_on_variance = cfg.rto_floor == RtoFloor::Linux;
        let (state, open_at) = match p.active_open_at {
            Some(t) => (State::Idle, t),
            None => (State::Listen, NEVER),
        };
        let has_cc = p.cc.is_some();
        let cc_window = p.cc.as_ref().map_or(NO_CONTROLLER_WINDOW, |c| c.window());
        let mut c = TcpConn {
            mss: cfg.mss as u64,
            n_segs: 0,
            local_addr: p.local_addr,
            remote_addr: p.remote_addr,
            local_port: p.local_port,
            remote_port: p.remote_port,
            peer_ep: p.peer_ep,
            flow: p.flow,
            iss: p.iss,
            irs: 0,
            state,
            open_at,
            app_start: p.app_start,
            send_bytes: p.send_bytes,
            app_closed: matches!(p.send_bytes, Some(n) if n > 0),
            app_stop_at: NEVER,
            cc: p.cc,
            cc_window,
            codec: p.codec,
            sack_ok: false,
            ts_ok: false,
            snd_wscale: 0,
            rcv_wscale: 0,
            peer_offered_wscale: false,
            ts_offset: p.iss.rotate_left(13),
            opening: Opening::default(),
            snd_una: 1,
            snd_wnd: 0,
            rtt,
            snd: None,
            rcv: Receiver::default(),
            autotune: None,
            stats: Stats::new(has_cc),
            cfg,
        };
        c.set_geometry();
        c
    }

    /// An unlimited sender's application stops writing at `t` (an FTP source stopped): the
    /// segment it is writing then is the last, and carries the FIN. Ignored for a sender with
    /// a size.
    pub fn stop_writing_at(&mut self, t: Time) {
        if self.send_bytes.is_none() {
            self.app_stop_at = t;
        }
    }

    fn stop_writing(&mut self) {
        self.app_stop_at = NEVER;
        if self.send_bytes.is_none() {
            // Every segment sent so far was full; the one being written becomes the last.
            self.send_bytes = Some((self.tx().sb.end() + 1) * self.mss);
            self.set_geometry();
            self.app_closed = true;
        }
    }

    /// The sending half, to read.
    #[inline(always)]
    fn tx(&self) -> &SendHalf {
        match &self.snd {
            Some(s) => s,
            None => &IDLE_SEND_HALF,
        }
    }

    /// The sending half, to write: made on the first write.
    #[inline(always)]
    fn tx_mut(&mut self) -> &mut SendHalf {
        if self.snd.is_none() {
            self.make_send_half();
        }
        match self.snd.as_deref_mut() {
            Some(s) => s,
            None => unreachable!("made above"),
        }
    }

    #[cold]
    #[inline(never)]
    fn make_send_half(&mut self) {
        self.snd = Some(Box::new(SendHalf::new()));
    }

    /// The sending half if it exists: for writes that leave the initial state unchanged.
    #[inline(always)]
    fn tx_made(&mut self) -> Option<&mut SendHalf> {
        self.snd.as_deref_mut()
    }

    // ------------------------------------------------------------ public observers

    pub fn state(&self) -> State {
        self.state
    }
    pub fn recovery(&self) -> Recovery {
        self.tx().recovery.state()
    }
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    pub fn timestamps_enabled(&self) -> bool {
        self.ts_ok
    }
    pub fn codec(&self) -> &dyn Codec {
        self.codec.as_ref()
    }
    pub fn controller(&self) -> Option<&dyn Controller> {
        self.cc.as_deref()
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Data bytes delivered in order to this side's application.
    pub fn bytes_delivered(&self) -> u64 {
        self.rcv.data_delivered()
    }
    pub fn retransmissions(&self) -> u64 {
        self.tx().stats.retransmissions
    }
    pub fn fast_retransmits(&self) -> u64 {
        self.tx().stats.fast_retransmits
    }
    pub fn timeouts(&self) -> u64 {
        self.tx().stats.rtos
    }
    /// Timeouts F-RTO found spurious.
    pub fn spurious_timeouts(&self) -> u64 {
        self.tx().stats.spurious_rtos
    }
    /// Tail loss probes sent.
    pub fn loss_probes(&self) -> u64 {
        self.tx().stats.loss_probes
    }
    pub fn rto_deadline(&self) -> Time {
        self.tx().timers.rto
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// One past the highest sequence number sent (relative).
    pub fn snd_max(&self) -> u64 {
        self.seg_start(self.tx().sb.end())
    }
    /// RFC 6675 pipe (bytes).
    pub fn pipe(&self) -> u64 {
        self.tx().sb.pipe()
    }
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.tx().sb
    }
    /// Effective MSS after the handshake.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    // ------------------------------------------------------------ segment geometry

    /// Recomputes what the segment geometry caches, after `mss` or `send_bytes` changed.
    fn set_geometry(&mut self) {
        self.n_segs = match self.send_bytes {
            Some(0) => 1,
            Some(s) => s.div_ceil(self.mss),
            None => u64::MAX,
        };
    }

    /// The handshake settled the MSS.
    fn set_mss(&mut self, mss: u64) {
        self.mss = mss;
        self.set_geometry();
    }

    #[inline(always)]
    fn n_segs(&self) -> u64 {
        self.n_segs
    }

    /// Relative sequence number where segment `k` starts (for `k` = number of segments: one
    /// past the FIN).
    #[inline(always)]
    fn seg_start(&self, k: u64) -> u64 {
        if k < self.n_segs {
            return 1 + k * self.mss;
        }
        match self.send_bytes {
            Some(s) => s + 2,
            None => 1 + k * self.mss,
        }
    }

    /// Every segment but a sized stream's last is full.
    #[inline(always)]
    fn seg_payload(&self, k: u64) -> u32 {
        if k + 1 < self.n_segs {
            return self.mss as u32;
        }
        match self.send_bytes {
            Some(s) => s.saturating_sub(k * self.mss).min(self.mss) as u32,
            None => self.mss as u32,
        }
    }

    /// An unlimited stream's `n_segs` is `u64::MAX`, which no segment number reaches.
    #[inline(always)]
    fn seg_has_fin(&self, k: u64) -> bool {
        k + 1 == self.n_segs
    }

    #[inline(always)]
    fn seg_len(&self, k: u64) -> u64 {
        self.seg_payload(k) as u64 + self.seg_has_fin(k) as u64
    }

    /// Number of segments entirely below `seq`.
    fn segs_below(&self, seq: u64) -> u64 {
        if seq == 0 {
            return 0;
        }
        match self.send_bytes {
            Some(s) if seq >= s + 2 => self.n_segs(),
            Some(_) => ((seq - 1) / self.mss).min(self.n_segs() - 1),
            None => (seq - 1) / self.mss,
        }
    }

    /// First segment starting at or after `seq`.
    fn seg_at_or_after(&self, seq: u64) -> u64 {
        (seq.saturating_sub(1))
            .div_ceil(self.mss)
            .min(self.n_segs())
    }

    #[inline(always)]
    fn snd_max_seq(&self) -> u64 {
        self.seg_start(self.tx().sb.end())
    }

    fn fin_acked(&self) -> bool {
        self.send_bytes.is_some() && self.snd_una >= self.seg_start(self.n_segs())
    }

    // ------------------------------------------------------------ helpers

    /// A sequence number of our sending half from the wire, relative to our ISN.
    fn rel_snd_seq(&self, wire: u32) -> u64 {
        unwrap32(self.snd_una, wire.wrapping_sub(self.iss))
    }

    fn ts_now(&self, now: Time) -> u32 {
        ((now / US) as u32).wrapping_add(self.ts_offset)
    }

    fn flight_size(&self) -> u64 {
        self.snd_max_seq() - self.snd_una
    }

    /// Bytes the sender believes are in the network.
    fn in_flight(&self) -> u64 {
        let s = self.tx();
        if self.sack_ok {
            s.sb.pipe()
        } else if s.recovery.state() == Recovery::Timeout {
            self.seg_start(s.snd_nxt).saturating_sub(self.snd_una)
        } else {
            self.seg_start(s.sb.end()) - self.snd_una
        }
    }

    fn info(&self, now: Time, acked: u64) -> TcpInfo {
        let s = self.tx();
        TcpInfo {
            now,
            snd_una: self.snd_una,
            snd_nxt: self.seg_start(s.sb.end()),
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            cwnd: self.cwnd(),
            mss: self.mss as u32,
            acked_bytes: acked,
            in_recovery: s.recovery.in_fast_or_timeout(),
            recovery_point: s.recovery.recovery_point(),
            loss_reductions: s.recovery.loss_reductions(),
        }
    }
}

impl Endpoint for TcpConn {
    fn on_packet(&mut self, ctx: &mut Ctx, pkt: &Packet) {
        let Some(t) = pkt.tcp().copied() else {
            return;
        };
        if t.flags.has(TcpFlags::RST) {
            return;
        }
        let syn = t.flags.has(TcpFlags::SYN);
        let ack = t.flags.has(TcpFlags::ACK);
        match self.state {
            State::Idle | State::Failed => return,
            State::Listen => {
                if syn && !ack {
                    self.accept_syn(ctx, pkt, &t);
                }
                return;
            }
            State::SynSent => {
                if syn && ack && t.ack == self.iss.wrapping_add(1) {
                    self.on_syn_ack(ctx, pkt, &t);
                    self.try_send(ctx);
                }
                return;
            }
            State::SynReceived => {
                if syn && !ack {
                    self.on_syn_again(ctx, pkt);
                    return;
                }
                if !(ack && t.ack == self.iss.wrapping_add(1)) {
                    return;
                }
                self.on_handshake_ack(ctx, pkt, &t);
            }
            State::Established => {
                if syn {
                    // The peer did not get our handshake ACK.
                    if ack {
                        self.send_handshake_ack(ctx);
                    }
                    return;
                }
            }
        }
        self.segment(ctx, pkt, &t);
        self.try_send(ctx);
        self.flush_ack(ctx);
    }

    fn on_timer(&mut self, ctx: &mut Ctx) {
        self.fire_timers(ctx);
    }

    fn deadline(&self) -> Time {
        self.next_deadline()
    }

    fn record(&self, now: Time, r: &mut FlowRecord) {
        self.record_flow(now, r);
    }

    fn sample(&self, now: Time, out: &mut Samples) {
        self.sample_flow(now, out);
    }

    fn finished(&self) -> bool {
        match self.send_bytes {
            None => false,
            Some(_) => self.fin_acked() && self.rcv.fin_received(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::net::Endpoint;
    use crate::packet::L4;
    use crate::tcp::codecs::Rfc3168;
    use crate::tcp::testing::{thousand_byte_segments, Dir, Harness, Reno};
    use crate::tcp::TcpConfig;
    use crate::time::{MS, SEC};
    use crate::wire::TcpFlags;

    fn harness(cfg: TcpConfig, size: Option<u64>, client_initiated: bool) -> Harness {
        Harness::new(
            cfg.clone(),
            size,
            Box::new(Reno::new(cfg.mss)),
            Box::new(Rfc3168::default()),
            Box::new(Rfc3168::default()),
            10 * MS,
            client_initiated,
        )
    }

    #[test]
    fn a_receiver_makes_no_sending_half_until_its_fin() {
        for (sack, client_initiated) in [(true, false), (false, false), (true, true)] {
            let cfg = TcpConfig {
                sack,
                ..thousand_byte_segments()
            };
            // A bulk transfer with every 40th data segment lost: the receiver sends
            // duplicate (and SACK) ACKs and gets retransmissions, and never a FIN.
            let mut h = harness(cfg.clone(), None, client_initiated);
            let mut n = 0;
            h.run(2 * SEC, &mut |_, dir, p| {
                n += (dir == Dir::AtoB && p.payload_len > 0) as u32;
                !(dir == Dir::AtoB && p.payload_len > 0 && n % 40 == 0)
            });
            let (r, d) = (h.a.retransmissions(), h.b.bytes_delivered());
            assert!(r > 0 && d > 200_000, "{r} {d}");
            assert!(h.a.snd.is_some() && h.b.snd.is_none());
            // A sized transfer: the receiver makes it to send its FIN.
            let mut h = harness(cfg, Some(200_000), client_initiated);
            h.run_clean(10 * SEC);
            assert!(h.a.finished() && h.b.finished());
            assert!(h.b.snd.is_some());
        }
    }

    /// What each side of a flow holds inline (64-bit targets): every side a `TcpConn`, a side
    /// that sends data its `SendHalf` too. The memory benchmark (dt1g-10000 against dt1g-1000)
    /// counts both sides of every flow, so growing either is a decision to state, not a
    /// side effect; shrinking one lowers its figure here.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_connection_keeps_to_its_size() {
        use super::stats::Stats;
        use super::{SendHalf, TcpConn};
        use crate::tcp::recv::Receiver;
        use crate::tcp::rtt::RttEstimator;
        use std::mem::size_of;
        assert!(size_of::<TcpConn>() <= 528, "{}", size_of::<TcpConn>());
        assert!(size_of::<SendHalf>() <= 528, "{}", size_of::<SendHalf>());
        // The parts both sides hold.
        assert!(size_of::<Receiver>() <= 160, "{}", size_of::<Receiver>());
        assert!(size_of::<Stats>() <= 96, "{}", size_of::<Stats>());
        assert!(
            size_of::<RttEstimator>() <= 72,
            "{}",
            size_of::<RttEstimator>()
        );
    }

    #[test]
    fn a_sized_stream_is_cut_by_the_mss_the_handshake_settles() {
        // Both sides are configured for 1000-byte segments and b announces 600 in its SYN or
        // SYN-ACK: a's 10 000 bytes go as 16 segments of 600 and a last one of 400 that
        // carries the FIN, whichever side opens.
        for client_initiated in [false, true] {
            let mut h = harness(thousand_byte_segments(), Some(10_000), client_initiated);
            h.run(10 * SEC, &mut |_, dir, p| {
                if let (Dir::BtoA, L4::Tcp(t)) = (dir, &mut p.l4) {
                    if t.mss.is_some() {
                        t.mss = Some(600);
                    }
                }
                true
            });
            assert!(h.a.finished() && h.b.finished());
            assert_eq!((h.a.mss(), h.b.bytes_delivered()), (600, 10_000));
            let mut segs: Vec<(u64, u32, bool)> = h
                .sent
                .iter()
                .filter(|s| s.dir == Dir::AtoB)
                .filter_map(|s| {
                    let t = s.pkt.tcp()?;
                    let fin = t.flags.has(TcpFlags::FIN);
                    (s.pkt.payload_len > 0 || fin)
                        .then(|| (h.rel_seq_a(&s.pkt), s.pkt.payload_len, fin))
                })
                .collect();
            segs.dedup();
            assert_eq!(segs.len(), 17, "{segs:?}");
            for (k, &(seq, len, fin)) in segs.iter().enumerate() {
                let last = k == 16;
                assert_eq!(
                    (seq, len, fin),
                    (1 + 600 * k as u64, if last { 400 } else { 600 }, last)
                );
            }
        }
    }
}
