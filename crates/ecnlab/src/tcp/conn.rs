//! One TCP connection endpoint: handshake, sending from a simulated send buffer (counts, not
//! bytes), receiving with reassembly, ACK generation, loss recovery, timers, and the calls
//! into the feedback codec and the congestion controller.
//!
//! Sequence numbers are 64-bit and relative to each side's ISN inside the connection (the SYN
//! is 0, the first data byte 1), and the low 32 bits of `ISN + relative` on the wire.
//!
//! Readings and choices, each checked against its RFC:
//! - Sending: a full segment goes out when `flight + segment ≤ window` (bytes), as Linux's
//!   packet-counted window does; one segment is always allowed when nothing is in flight.
//!   Segments have fixed boundaries (see [`super::scoreboard`]).
//! - Duplicate ACK (RFC 5681 §2): outstanding data, no payload, no SYN/FIN, same ACK number,
//!   same window. With SACK (RFC 6675 §2) an ACK is a duplicate when it keeps the ACK number
//!   and SACKs data not SACKed before.
//! - Fast retransmit on the DupThresh-th duplicate ACK (or RFC 6675 IsLost(HighACK+1)) only if
//!   the cumulative ACK has reached `recover` (RFC 6582 §3.2 step 2; RFC 6675 §5), where
//!   `recover` is one past the highest byte sent at the last fast retransmit or timeout.
//! - NewReno (RFC 6582, no SACK): window inflated by DupThresh·SMSS on entry and one SMSS per
//!   further duplicate; a partial ACK retransmits the next hole, deflates by the newly
//!   acknowledged bytes and adds back one SMSS if at least one SMSS was acknowledged; the
//!   timer is restarted on the first partial ACK only ("Impatient", §4, ns-2) or on every one
//!   ("Slow-but-Steady", ns-3), as `partial_ack_timer` says. The controller's
//!   own window follows its `on_loss` / `on_recovery_end`; the inflation is the connection's.
//! - SACK (RFC 6675): scoreboard, pipe, NextSeg rules 1–3 (rule 4, the optional rescue
//!   retransmission, is not implemented: a lost tail is repaired by the timeout).
//! - RACK (RFC 8985 §6, Linux's default; `rack`, on by default, see [`super::rack`]): with
//!   SACK, in every state, a segment or a retransmission sent before one since delivered is
//!   lost once the reordering window has passed (0 in recovery and once DupThresh segments
//!   are SACKed, else min(min_rtt/4, SRTT), with a timer for what still waits); a loss it
//!   finds outside recovery starts fast recovery (Linux's `tcp_time_to_recover`, and
//!   `tcp_rack_reo_timeout` when the timer finds it), and a lost retransmission goes again
//!   before NextSeg's rules — without it only the timer repairs a retransmission that a
//!   queue dropped.
//! - Tail loss probe (RFC 8985 §7, Linux's `tcp_schedule_loss_probe` / `tcp_send_loss_probe`
//!   / `tcp_process_tlp_ack`; `tlp`, on by default, with SACK only, in the open and CWR
//!   states): after new data is sent or an ACK advances SND.UNA the probe timer is set to
//!   2·SRTT + 2 ms (2·SRTT + the minimum RTO with one segment outstanding; the initial RTO
//!   before any sample), never later than the RTO. When it fires, one new segment goes out
//!   regardless of cwnd if the application and the peer's window allow, else the last segment
//!   sent is retransmitted; the RTO is restarted and no second probe goes until this one is
//!   answered. A retransmitted probe followed by an ACK beyond the data then sent repaired a
//!   loss: the controller reduces once, at once (`on_loss` then `on_recovery_end`, Linux's
//!   CWR entered and left on the same ACK); a D-SACK of the probe's segment (or, with
//!   `dsack` off, a pure duplicate ACK at that point) says the original arrived too, and
//!   nothing is reduced.
//! - D-SACK (RFC 2883, `dsack`, on by default): the receiver reports a duplicate segment in
//!   the first SACK block of its next ACK; the sender recognises it (below the cumulative ACK,
//!   or inside the second block), takes no SACK information from it and uses it for the
//!   tail loss probe only — Linux's D-SACK undo of a spurious fast retransmit and its growth
//!   of RACK's reordering window are not modelled (the simulator reorders nothing).
//! - Timeout (RFC 6298 §5, RFC 5681 §3.1): back off, `on_rto` (window 1 SMSS), retransmit
//!   from the first unacknowledged segment — go-back-N without SACK; with SACK every
//!   un-SACKed segment is marked lost and NextSeg repairs them under pipe (RFC 6675 §5.1
//!   keeps SACK information, there is no reneging here). No new fast retransmit until the
//!   data outstanding at the timeout is acknowledged (RFC 6582 step 1 after a timeout).
//!   The bytes handed to `on_rto` (RFC 5681 eq. 4's FlightSize, of which ssthresh may be
//!   "no more than" half) exclude what the receiver has SACKed: that data has left the
//!   network. Counting it would let a timeout *raise* ssthresh: when a retransmission is lost
//!   during SACK recovery, the sender keeps sending new data under pipe until the timer
//!   fires, and FlightSize then spans several windows (five in the `red100` dumbbell).
//! - F-RTO (RFC 5682 §3, SACK form, as Linux's `tcp_process_loss`; `frto`, on by default,
//!   with SACK only, not for a timeout during fast recovery): the timeout resends the first
//!   segment; if the next ACK advances SND.UNA below the timeout's high mark, new data goes
//!   out instead of the presumed-lost segments and the high mark moves to it; an ACK that
//!   newly acknowledges (cumulatively or by SACK) a segment sent before the mark and never
//!   retransmitted makes the timeout spurious: the lost marks are cleared, recovery ends and
//!   the controller undoes the timeout (`on_spurious_timeout`). SACK or duplicate ACKs after
//!   the new data say the loss was real, and recovery goes on as above.
//! - Pacing (the controller's rate, or `pace_cwnd`'s), as Linux's `tcp_update_skb_after_send`:
//!   a segment delays the next by its payload bytes at the rate — the rates are in payload
//!   bytes (delivery rates, cwnd/SRTT), and the queued segment Linux paces has no headers
//!   yet — less up to half of that for the time the sender fell behind its schedule (after
//!   a wait for its window, a sender's second segment follows the first by half a gap).
//! - TSO deferral (`tso_defer`, Linux's `tcp_tso_should_defer`; `TcpConn::tso_defers`):
//!   new data goes out a frame at a time (about 1 ms at Linux's pacing rate); with room for
//!   less than a frame the sender waits for the next ACK if it is due within
//!   min(SRTT/2, 1 ms) and the last frame left within 1 ms. Retransmissions never wait.
//! - Timer (RFC 6298 §5.1–5.3): started when data is sent and it is not running, stopped
//!   when everything is acknowledged, restarted on an ACK of new data — and, with SACK, when
//!   the first unacknowledged segment is retransmitted (Linux's `tcp_xmit_retransmit_queue`;
//!   otherwise a retransmission sent late in a long recovery may get less than an RTT before
//!   the timer fires).
//! - RTT samples as Linux takes them: from the first segment (in sequence order) that the ACK
//!   newly acknowledges cumulatively, else from the first it newly SACKs, when the ACK covers
//!   no retransmitted segment (Karn); so a delayed ACK's sample includes the delay, as the
//!   RTO must (`rtt_sample_from = "last"`: the most recently sent of them instead). Only
//!   when the ACK's timing gives nothing (it covers a retransmission) and it advances the
//!   cumulative ACK does TSecr give the sample (RFC 7323 §4.1, 1 µs clock). The SYN /
//!   SYN-ACK exchange gives the first sample unless it was retransmitted; after a handshake
//!   retransmission without a sample the RTO is at least 3 s (RFC 6298 §5.7).
//! - Receiver: immediate ACK for out-of-order, duplicate or gap-filling segments, for a FIN,
//!   and when the codec asks; otherwise every `delack_segments` in-order segments or after
//!   `delack_timeout_s` (RFC 5681 §4.2); with `quickack`, Linux's quick-ACK mode (below).
//!   With SACK and delayed ACKs, Linux's SACK compression (`sack_compress_max`): of the
//!   out-of-order segments at one `rcv_nxt`, the first three are acknowledged at once and
//!   the rest by one ACK after min(1 ms, RTT/20), or at once when that many are withheld.
//! - Controller calls per ACK: entering fast recovery (`on_loss`) first, then the codec's
//!   signal (`on_signal`), then `on_ack` if the ACK acknowledged (or SACKed) new bytes, then
//!   `on_recovery_end` if the ACK ended fast recovery — so the ACK that ends recovery is
//!   reported as inside it.
//! - One reduction per window (RFC 3168 §6.1.2) is enforced for marks after marks and for
//!   marks after losses (the codecs see `TcpInfo::recovery_point`). For controllers with
//!   `Controller::cwr_state` (the baselines) the connection also keeps Linux's CWR state: a
//!   signal that lowered the window starts a round that lasts until an ACK goes beyond the
//!   data then sent (strictly, as Linux holds CWR until the CWR flag has surely arrived); in
//!   it `AckEvent::in_cwnd_reduction` is set (no growth, no further ECN response), and a loss
//!   found in it enters fast recovery without `on_loss` — the round's reduction stands and
//!   recovery ends where the round would have (`tcp_enter_recovery` from CWR). For other
//!   controllers a loss after a mark-triggered reduction calls `on_loss`, and whether that
//!   reduces again is the controller's decision.
//! - The window during a reduction round (CWR, and SACK fast recovery, for the same
//!   controllers): PRR (RFC 6937, Linux's `tcp_cwnd_reduction`, see [`super::prr`]) by
//!   default; `cwnd_reduction = "immediate"` uses the controller's reduced window at once.
//!   Recovery without SACK keeps RFC 6582's inflation.
//! - Whether the window is in use (Linux's `tcp_cwnd_validate` / `tcp_is_cwnd_limited`):
//!   after each sending opportunity the connection notes whether cwnd is what stopped it,
//!   kept for the round once true, and the round's largest flight; `AckEvent::cwnd_unused`
//!   tells the controller, and the baselines do not grow a window the receiver's window or
//!   the application held back (an access point that lowers rwnd sees Linux's sender).
//! - Client-initiated transfers: the data receiver opens; the sender starts sending when the
//!   handshake completes (no request bytes are modelled).

use super::codec::{Codec, Handshake, TcpInfo};
use super::config::{CwndReduction, PartialAckTimer, RtoFloor, RttSampleFrom, TcpConfig};
use super::prr::Prr;
use super::rack::Rack;
use super::rate::{RateSample, RateState};
use super::rcvbuf::RcvAutotune;
use super::recv::{Arrival, Receiver};
use super::rtt::RttEstimator;
use super::scoreboard::{Scoreboard, Seg, RETRANSMITTED, RTX_IN_FLIGHT, SACKED};
use super::seq::{ts_geq, unwrap32};
use crate::cc::{AckEvent, Controller, Signal};
use crate::net::{Ctx, Endpoint, Samples};
use crate::packet::Packet;
use crate::stats::{FlowRecord, Histogram};
use crate::time::{from_secs, to_secs, Time, MS, NEVER, NS, SEC, US};
use crate::wire::tcp::MAX_SACK_BLOCKS;
use crate::wire::{Ecn, Ipv4Repr, TcpFlags, TcpRepr};
use std::cell::Cell;

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

/// Loss-recovery state of the sending half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    Open,
    /// Linux's CWR state: after a signal lowered the window of a controller with
    /// [`Controller::cwr_state`], until an ACK goes beyond the data in flight then.
    Cwr,
    Fast,
    /// After a retransmission timeout, until the data outstanding then is acknowledged.
    Timeout,
}

/// Everything needed to build one endpoint of a connection.
pub struct ConnParams {
    pub cfg: TcpConfig,
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

#[derive(Default)]
struct SendStats {
    bytes_sent: u64,
    packets_sent: u64,
    retransmissions: u64,
    fast_retransmits: u64,
    rtos: u64,
    spurious_rtos: u64,
    loss_probes: u64,
    signals_l1: u64,
    signals_l2: u64,
    rtt_ns: Option<Histogram>,
    init_cwnd: Option<u64>,
}

pub struct TcpConn {
    cfg: TcpConfig,
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
    codec: Box<dyn Codec>,

    // Negotiated at the handshake.
    mss: u64,
    sack_ok: bool,
    ts_ok: bool,
    /// Shift applied to the peer's advertised window / to ours.
    snd_wscale: u8,
    rcv_wscale: u8,
    /// With autotuning: the right edge of the window last advertised (relative sequence).
    rcv_right_edge: u64,
    peer_offered_wscale: bool,
    ts_offset: u32,

    // Handshake.
    hs_deadline: Time,
    hs_sent_at: Time,
    hs_retx: u32,

    // Sending half.
    sb: Scoreboard,
    snd_una: u64,
    /// Go-back-N pointer (segment number) after a timeout without SACK; equals `sb.end()`
    /// otherwise.
    snd_nxt: u64,
    snd_wnd: u64,
    rtt: RttEstimator,
    rto_deadline: Time,
    recovery: Recovery,
    recover: u64,
    dupacks: u32,
    /// NewReno window inflation (bytes, may go negative on deflation).
    inflation: i64,
    partial_ack_seen: bool,
    /// RFC 6675 HighRxt + 1 (segment number).
    rxt_next: u64,
    loss_reductions: u32,
    recovery_point: u64,
    /// The reduction round under way, when PRR sets the window.
    prr: Option<Prr>,
    /// Linux's `tcp_cwnd_validate` state: the window was full in the current round
    /// (`is_cwnd_limited`), the most data in flight in it, and where the round ends.
    cwnd_limited: bool,
    max_flight: u64,
    cwnd_usage_end: u64,
    /// F-RTO is watching the current timeout recovery.
    frto: bool,
    rack: Rack,
    /// RACK's reordering timer: segments sent before a delivered one wait for their window.
    reo_deadline: Time,
    /// The tail loss probe's timer, and the probe outstanding: SND.NXT when it went and
    /// whether it was a retransmission (Linux's `tlp_high_seq`, `tlp_retrans`).
    tlp_deadline: Time,
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    /// F-RTO step 2b: this ACK sends new data, not retransmissions.
    frto_new_data: bool,
    rate: RateState,
    next_send_at: Time,
    pacing_wait: bool,
    /// When the last data segment was sent (Linux's `tcp_wstamp_ns`, for TSO deferral).
    last_xmit: Time,

    // Receiving half.
    rcv: Receiver,
    /// The advertised window under Linux's autotuning (`rcv_autotune`), from the handshake.
    autotune: Option<RcvAutotune>,
    last_delivery: Time,
    /// One-way delay of every data segment that arrived (the receiving side only), ns.
    owd_ns: Option<Histogram>,

    stats: SendStats,
    sample_delivered: Cell<u64>,
    sample_time: Cell<Time>,
}

const DEFAULT_PEER_MSS: u64 = 536;
/// Added to the probe timeout when more than one segment is outstanding (Linux's
/// `TCP_TIMEOUT_MIN_US`).
const TLP_SLACK: Time = 2 * crate::time::MS;
/// RFC 6298 §5.7: RTO after a handshake retransmission without an RTT sample.
const RTO_AFTER_SYN_LOSS: Time = 3 * SEC;
/// Linux's TCP_MAX_QUICKACKS.
const MAX_QUICKACKS: u32 = 16;

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
        TcpConn {
            mss: cfg.mss as u64,
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
            codec: p.codec,
            sack_ok: false,
            ts_ok: false,
            snd_wscale: 0,
            rcv_wscale: 0,
            rcv_right_edge: 0,
            peer_offered_wscale: false,
            ts_offset: p.iss.rotate_left(13),
            hs_deadline: NEVER,
            hs_sent_at: 0,
            hs_retx: 0,
            sb: Scoreboard::new(),
            snd_una: 1,
            snd_nxt: 0,
            snd_wnd: 0,
            rtt,
            rto_deadline: NEVER,
            recovery: Recovery::Open,
            recover: 1,
            dupacks: 0,
            inflation: 0,
            partial_ack_seen: false,
            rxt_next: 0,
            loss_reductions: 0,
            recovery_point: 0,
            prr: None,
            cwnd_limited: false,
            max_flight: 0,
            cwnd_usage_end: 0,
            frto: false,
            frto_new_data: false,
            rack: Rack::default(),
            reo_deadline: NEVER,
            tlp_deadline: NEVER,
            tlp_high_seq: None,
            tlp_retrans: false,
            rate: RateState::default(),
            next_send_at: 0,
            pacing_wait: false,
            last_xmit: 0,
            rcv: Receiver::default(),
            autotune: None,
            last_delivery: 0,
            owd_ns: (!has_cc).then(Histogram::default),
            stats: SendStats {
                rtt_ns: has_cc.then(Histogram::default),
                ..Default::default()
            },
            sample_delivered: Cell::new(0),
            sample_time: Cell::new(0),
            cfg,
        }
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
            self.send_bytes = Some((self.sb.end() + 1) * self.mss);
            self.app_closed = true;
        }
    }

    // ------------------------------------------------------------ public observers

    pub fn state(&self) -> State {
        self.state
    }
    pub fn recovery(&self) -> Recovery {
        self.recovery
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
        self.stats.retransmissions
    }
    pub fn fast_retransmits(&self) -> u64 {
        self.stats.fast_retransmits
    }
    pub fn timeouts(&self) -> u64 {
        self.stats.rtos
    }
    /// Timeouts F-RTO found spurious.
    pub fn spurious_timeouts(&self) -> u64 {
        self.stats.spurious_rtos
    }
    /// Tail loss probes sent.
    pub fn loss_probes(&self) -> u64 {
        self.stats.loss_probes
    }
    pub fn rto_deadline(&self) -> Time {
        self.rto_deadline
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// One past the highest sequence number sent (relative).
    pub fn snd_max(&self) -> u64 {
        self.seg_start(self.sb.end())
    }
    /// RFC 6675 pipe (bytes).
    pub fn pipe(&self) -> u64 {
        self.sb.pipe()
    }
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }
    /// Effective MSS after the handshake.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    // ------------------------------------------------------------ segment geometry

    fn n_segs(&self) -> u64 {
        match self.send_bytes {
            Some(0) => 1,
            Some(s) => s.div_ceil(self.mss),
            None => u64::MAX,
        }
    }

    /// Relative sequence number where segment `k` starts (for `k` = number of segments: one
    /// past the FIN).
    fn seg_start(&self, k: u64) -> u64 {
        match self.send_bytes {
            Some(s) if k >= self.n_segs() => s + 2,
            _ => 1 + k * self.mss,
        }
    }

    fn seg_payload(&self, k: u64) -> u32 {
        match self.send_bytes {
            Some(s) => s.saturating_sub(k * self.mss).min(self.mss) as u32,
            None => self.mss as u32,
        }
    }

    fn seg_has_fin(&self, k: u64) -> bool {
        self.send_bytes.is_some() && k + 1 == self.n_segs()
    }

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

    fn snd_max_seq(&self) -> u64 {
        self.seg_start(self.sb.end())
    }

    fn fin_acked(&self) -> bool {
        self.send_bytes.is_some() && self.snd_una >= self.seg_start(self.n_segs())
    }

    // ------------------------------------------------------------ helpers

    fn cwnd(&self) -> u64 {
        if let Some(p) = &self.prr {
            return p.cwnd();
        }
        self.cc.as_ref().map_or(u64::MAX / 4, |c| c.window())
    }

    fn in_fast_or_timeout_recovery(&self) -> bool {
        matches!(self.recovery, Recovery::Fast | Recovery::Timeout)
    }

    /// Starts a reduction round from `prior_cwnd` down to the controller's window, by PRR
    /// unless the configuration says the window drops at once.
    fn start_prr(&mut self, prior_cwnd: u64) {
        let target = self.cc.as_ref().map_or(0, |c| c.window());
        self.prr = (self.cfg.cwnd_reduction == CwndReduction::Prr)
            .then(|| Prr::new(prior_cwnd, target, self.mss));
    }

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
        if self.sack_ok {
            self.sb.pipe()
        } else if self.recovery == Recovery::Timeout {
            self.seg_start(self.snd_nxt).saturating_sub(self.snd_una)
        } else {
            self.flight_size()
        }
    }

    fn info(&self, now: Time, acked: u64) -> TcpInfo {
        TcpInfo {
            now,
            snd_una: self.snd_una,
            snd_nxt: self.snd_max_seq(),
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            cwnd: self.cwnd(),
            mss: self.mss as u32,
            acked_bytes: acked,
            in_recovery: self.in_fast_or_timeout_recovery(),
            recovery_point: self.recovery_point,
            loss_reductions: self.loss_reductions,
        }
    }

    /// An IP + TCP header pair for an outgoing segment, with ACK fields, window, options.
    fn header(&self, ctx: &mut Ctx, flags: u16, seq_rel: u64) -> (Ipv4Repr, TcpRepr) {
        let ip = Ipv4Repr {
            src: self.local_addr,
            dst: self.remote_addr,
            ecn: Ecn::NOT_ECT,
            ident: ctx.next_ip_id(
                self.remote_addr,
                (self.local_port as u32) << 16 | self.remote_port as u32,
            ),
            ttl: 64,
            ..Default::default()
        };
        let mut t = TcpRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: self.iss.wrapping_add(seq_rel as u32),
            flags: TcpFlags(flags),
            ..Default::default()
        };
        if flags & TcpFlags::ACK != 0 {
            t.ack = self.irs.wrapping_add(self.rcv.rcv_nxt as u32);
        }
        t.window = if flags & TcpFlags::SYN != 0 {
            self.cfg.rcv_buf.min(u16::MAX as u64) as u16
        } else {
            (self.rcv_window() >> self.rcv_wscale).min(u16::MAX as u64) as u16
        };
        if self.ts_ok {
            t.timestamp = Some((self.ts_now(ctx.now), self.rcv.ts_recent));
        }
        let dsack = self.rcv.dsack.filter(|_| self.cfg.dsack);
        if self.sack_ok && (self.rcv.has_ooo() || dsack.is_some()) && flags & TcpFlags::SYN == 0 {
            let max = if self.ts_ok { 3 } else { MAX_SACK_BLOCKS };
            let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
            let mut n = 0;
            if let Some(d) = dsack {
                blocks[0] = d;
                n = 1;
            }
            n += self.rcv.sack_blocks(max - n, &mut blocks[n..]);
            for (i, &(l, r)) in blocks[..n].iter().enumerate() {
                t.sack[i] = (
                    self.irs.wrapping_add(l as u32),
                    self.irs.wrapping_add(r as u32),
                );
            }
            t.sack_count = n as u8;
        }
        (ip, t)
    }

    fn finish_packet(&self, ip: Ipv4Repr, t: TcpRepr, payload: u32, now: Time) -> Packet {
        let mut p = Packet::new_tcp(ip, t, payload);
        p.meta.dst_ep = self.peer_ep;
        p.meta.flow = self.flow;
        p.meta.sent_at = now;
        p.meta.rtt_hint_us = (self.rtt.srtt() / US).min(u32::MAX as u64) as u32;
        p
    }

    // ------------------------------------------------------------ handshake

    fn send_syn(&mut self, ctx: &mut Ctx) {
        let (ip, mut t) = self.header(ctx, TcpFlags::SYN, 0);
        t.mss = Some(self.cfg.mss.min(u16::MAX as u32) as u16);
        if self.cfg.window_scaling {
            t.window_scale = Some(self.cfg.wscale_shift());
        }
        t.sack_permitted = self.cfg.sack;
        if self.cfg.timestamps {
            t.timestamp = Some((self.ts_now(ctx.now), 0));
        }
        let mut p = self.finish_packet(ip, t, 0, ctx.now);
        self.codec.handshake_out(Handshake::Syn, &mut p);
        self.hs_sent_at = ctx.now;
        self.hs_deadline = ctx.now + self.rtt.rto();
        ctx.send(p);
    }

    fn send_syn_ack(&mut self, ctx: &mut Ctx) {
        let (ip, mut t) = self.header(ctx, TcpFlags::SYN | TcpFlags::ACK, 0);
        t.mss = Some(self.cfg.mss.min(u16::MAX as u32) as u16);
        if self.wscale_agreed() {
            t.window_scale = Some(self.rcv_wscale);
        }
        t.sack_permitted = self.sack_ok;
        if !self.ts_ok {
            t.timestamp = None;
        }
        let mut p = self.finish_packet(ip, t, 0, ctx.now);
        self.codec.handshake_out(Handshake::SynAck, &mut p);
        self.hs_sent_at = ctx.now;
        self.hs_deadline = ctx.now + self.rtt.rto();
        self.on_ack_sent(&p);
        ctx.send(p);
    }

    fn wscale_agreed(&self) -> bool {
        self.cfg.window_scaling && self.peer_offered_wscale
    }

    /// Passive side: a SYN arrived.
    fn accept_syn(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        self.irs = t.seq;
        self.rcv.rcv_nxt = 1;
        self.rcv.last_ack_sent = 1;
        self.mss = (self.cfg.mss as u64).min(t.mss.map_or(DEFAULT_PEER_MSS, |m| m as u64));
        self.sack_ok = self.cfg.sack && t.sack_permitted;
        self.ts_ok = self.cfg.timestamps && t.timestamp.is_some();
        self.peer_offered_wscale = t.window_scale.is_some();
        if self.wscale_agreed() {
            self.snd_wscale = t.window_scale.unwrap_or(0).min(14);
            self.rcv_wscale = self.cfg.wscale_shift();
        }
        if let (true, Some((tsval, _))) = (self.ts_ok, t.timestamp) {
            self.rcv.ts_recent = tsval;
        }
        self.snd_wnd = t.window as u64;
        self.codec.handshake_in(Handshake::Syn, pkt);
        self.state = State::SynReceived;
        self.send_syn_ack(ctx);
    }

    /// Active side: the SYN-ACK arrived.
    fn on_syn_ack(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        self.irs = t.seq;
        self.rcv.rcv_nxt = 1;
        self.mss = (self.cfg.mss as u64).min(t.mss.map_or(DEFAULT_PEER_MSS, |m| m as u64));
        self.sack_ok = self.cfg.sack && t.sack_permitted;
        self.ts_ok = self.cfg.timestamps && t.timestamp.is_some();
        self.peer_offered_wscale = t.window_scale.is_some();
        if self.wscale_agreed() {
            self.snd_wscale = t.window_scale.unwrap_or(0).min(14);
            self.rcv_wscale = self.cfg.wscale_shift();
        }
        self.snd_wnd = t.window as u64;
        if let (true, Some((tsval, tsecr))) = (self.ts_ok, t.timestamp) {
            self.rcv.ts_recent = tsval;
            self.rtt_sample(self.ts_now(ctx.now).wrapping_sub(tsecr) as Time * US);
        } else if self.hs_retx == 0 {
            self.rtt_sample(ctx.now - self.hs_sent_at);
        }
        self.codec.handshake_in(Handshake::SynAck, pkt);
        self.establish(ctx.now);
        self.send_handshake_ack(ctx);
    }

    fn send_handshake_ack(&mut self, ctx: &mut Ctx) {
        let (ip, t) = self.header(ctx, TcpFlags::ACK, self.snd_max_seq());
        let mut p = self.finish_packet(ip, t, 0, ctx.now);
        self.codec.handshake_out(Handshake::Ack, &mut p);
        self.on_ack_sent(&p);
        ctx.send(p);
    }

    /// Passive side: the ACK of our SYN-ACK arrived (possibly on a data segment).
    fn on_handshake_ack(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        if let (true, Some((_, tsecr))) = (self.ts_ok, t.timestamp) {
            self.rtt_sample(self.ts_now(ctx.now).wrapping_sub(tsecr) as Time * US);
        } else if self.hs_retx == 0 {
            self.rtt_sample(ctx.now - self.hs_sent_at);
        }
        self.snd_wnd = (t.window as u64) << self.snd_wscale;
        self.codec.handshake_in(Handshake::Ack, pkt);
        self.establish(ctx.now);
    }

    fn establish(&mut self, now: Time) {
        self.state = State::Established;
        if self.cfg.rcv_autotune {
            self.autotune = Some(RcvAutotune::new(
                self.cfg.rcv_buf_initial,
                self.cfg.rcv_buf,
                self.cfg.rcv_space_ratio,
                self.mss,
                now,
            ));
        }
        self.hs_deadline = NEVER;
        if self.hs_retx > 0 && !self.rtt.has_sample() {
            self.rtt.raise_to(RTO_AFTER_SYN_LOSS);
        }
        let mut iw = self
            .codec
            .initial_window()
            .unwrap_or(self.cfg.initial_window)
            .max(1);
        if self.hs_retx > 0 && self.cfg.syn_loss_iw1 {
            iw = 1;
        }
        if let Some(cc) = self.cc.as_mut() {
            cc.set_initial_window(iw as u64 * self.mss);
            self.stats.init_cwnd = Some(iw as u64);
        }
        self.snd_nxt = 0;
        self.rxt_next = 0;
    }

    fn handshake_timeout(&mut self, ctx: &mut Ctx) {
        self.hs_deadline = NEVER;
        if self.hs_retx >= self.cfg.syn_retries {
            self.state = State::Failed;
            self.rto_deadline = NEVER;
            return;
        }
        self.hs_retx += 1;
        self.rtt.backoff();
        match self.state {
            State::SynSent => self.send_syn(ctx),
            State::SynReceived => self.send_syn_ack(ctx),
            _ => {}
        }
    }

    // ------------------------------------------------------------ receiving

    fn segment(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        if self.ts_ok {
            if let Some((tsval, _)) = t.timestamp {
                let seq = unwrap32(self.rcv.rcv_nxt, t.seq.wrapping_sub(self.irs));
                // RFC 7323 §4.3: only segments at or before the last ACK point update it.
                if ts_geq(tsval, self.rcv.ts_recent) && seq <= self.rcv.last_ack_sent {
                    self.rcv.ts_recent = tsval;
                }
            }
        }
        if t.flags.has(TcpFlags::ACK) {
            self.on_ack(ctx, pkt, t);
        }
        if pkt.payload_len > 0 || t.flags.has(TcpFlags::FIN) {
            self.on_data(ctx, pkt, t);
        }
    }

    fn on_data(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        let now = ctx.now;
        let s = unwrap32(self.rcv.rcv_nxt, t.seq.wrapping_sub(self.irs));
        let fin = t.flags.has(TcpFlags::FIN);
        let e = s + pkt.payload_len as u64 + fin as u64;
        if fin {
            self.rcv.fin_seq = Some(s + pkt.payload_len as u64);
        }
        if pkt.payload_len > 0 && self.codec.flush_before(pkt) && self.rcv.unacked_segs > 0 {
            self.send_ack(ctx);
        }
        if pkt.payload_len > 0 {
            if let Some(h) = self.owd_ns.as_mut() {
                h.record(now.saturating_sub(pkt.meta.sent_at) / NS);
            }
        }
        let mut immediate = pkt.payload_len > 0 && self.codec.data_in(pkt);
        let delivered_before = self.rcv.data_delivered();
        let had_fin = self.rcv.fin_received();
        let quickack = self.cfg.quickack && self.cfg.delayed_ack && pkt.payload_len > 0;
        let mut compress_until = None;
        match self.rcv.receive(s, e) {
            Arrival::InOrder { filled_gap } => {
                immediate |= filled_gap;
                self.rcv.unacked_segs += 1;
                if quickack {
                    // Linux's tcp_event_data_recv: the first data segment, and the first
                    // after a silence longer than the RTO, start the quick-ACK mode.
                    let last = self.rcv.last_data_at;
                    if last == NEVER || now - last > self.rtt.rto() {
                        self.rcv.enter_quickack(self.quickacks());
                    }
                    self.rcv.last_data_at = now;
                    immediate |= self.rcv.quick > 0;
                }
            }
            Arrival::OutOfOrder => {
                if self.sack_ok && !self.rcv.out_of_order_ack_now(self.cfg.sack_compress_max) {
                    compress_until = Some(now + self.sack_compress_delay());
                } else {
                    immediate = true;
                }
                if let Some(a) = self.autotune.as_mut() {
                    a.on_out_of_order(self.mss, self.rcv.ooo_span(), self.sack_ok);
                }
            }
            Arrival::Duplicate => {
                immediate = true;
                // Linux's tcp_data_queue: a segment wholly below rcv_nxt means our ACK was
                // lost or late; the following ACKs go out at once too.
                if quickack {
                    self.rcv.enter_quickack(MAX_QUICKACKS);
                }
            }
        }
        if let Some(a) = self.autotune.as_mut() {
            let echo = match (self.ts_ok, t.timestamp) {
                (true, Some((_, tsecr))) => {
                    let sent = tsecr.wrapping_sub(self.ts_offset) as Time * US;
                    (sent <= now).then_some((tsecr, sent))
                }
                _ => None,
            };
            a.on_segment(now, pkt.payload_len as u64, self.mss, echo);
        }
        if self.rcv.data_delivered() > delivered_before {
            self.last_delivery = now;
            if let Some(a) = self.autotune.as_mut() {
                a.on_delivered(now, self.rcv.data_delivered(), self.mss, self.ts_ok);
            }
        }
        if self.rcv.fin_received() && !had_fin {
            immediate = true;
            // The application reads the end of the stream and closes its side.
            self.app_closed = true;
        }
        if immediate || !self.cfg.delayed_ack || self.rcv.unacked_segs >= self.cfg.delack_segments {
            self.rcv.ack_now = true;
        } else if let Some(t) = compress_until {
            self.rcv.delack_deadline = self.rcv.delack_deadline.min(t);
        } else if self.rcv.delack_deadline == NEVER {
            self.rcv.delack_deadline = now + self.cfg.delack_timeout();
        }
    }

    /// The receive window we advertise, in bytes. With autotuning, Linux's
    /// `__tcp_select_window`: what the buffer has free once the data held out of order is
    /// charged to it, never moving the right edge of an earlier advertisement back.
    fn rcv_window(&self) -> u64 {
        match self.autotune.as_ref() {
            None => self.cfg.rcv_buf,
            Some(a) => {
                let free = a.window_holding(self.rcv.ooo_bytes()).min(self.cfg.rcv_buf);
                free.max(self.rcv_right_edge.saturating_sub(self.rcv.rcv_nxt))
            }
        }
    }

    /// `p`, carrying `rcv_nxt` and our window, is going out.
    fn on_ack_sent(&mut self, p: &Packet) {
        self.rcv.on_ack_sent();
        if let (Some(_), Some(t)) = (self.autotune.as_ref(), p.tcp()) {
            // A SYN's window is never scaled (RFC 7323 §2.2).
            let shift = if t.flags.has(TcpFlags::SYN) {
                0
            } else {
                self.rcv_wscale
            };
            let advertised = (t.window as u64) << shift;
            self.rcv_right_edge = self.rcv_right_edge.max(self.rcv.rcv_nxt + advertised);
        }
    }

    /// How long SACK compression may hold an ACK: 5 % of the RTT (the receiver's estimate,
    /// or SRTT if smaller or there is none), at most 1 ms (Linux's `tcp_comp_sack_delay_ns`).
    fn sack_compress_delay(&self) -> Time {
        let mut rtt = self.autotune.as_ref().map_or(0, |a| a.rtt());
        if self.rtt.has_sample() && (rtt == 0 || self.rtt.srtt() < rtt) {
            rtt = self.rtt.srtt();
        }
        if rtt == 0 {
            return MS;
        }
        (rtt / 20).min(MS)
    }

    /// Linux's `tcp_incr_quickack`: half the advertised window in segments (2 if that is
    /// none), at most 16.
    fn quickacks(&self) -> u32 {
        match (self.rcv_window() / (2 * self.mss.max(1))).min(MAX_QUICKACKS as u64) as u32 {
            0 => 2,
            n => n,
        }
    }

    fn send_ack(&mut self, ctx: &mut Ctx) {
        let (ip, t) = self.header(ctx, TcpFlags::ACK, self.snd_max_seq());
        let mut p = self.finish_packet(ip, t, 0, ctx.now);
        self.codec.ack_out(&mut p);
        self.on_ack_sent(&p);
        ctx.send(p);
    }

    fn flush_ack(&mut self, ctx: &mut Ctx) {
        if self.rcv.ack_now {
            self.send_ack(ctx);
        }
    }

    // ------------------------------------------------------------ ACK processing

    fn rtt_sample(&mut self, r: Time) -> Option<Time> {
        // A wrapped or absurd timestamp difference is no sample.
        if r == 0 || r > 3600 * SEC {
            return None;
        }
        self.rtt.on_sample(r);
        if let Some(h) = self.stats.rtt_ns.as_mut() {
            h.record(r / NS);
        }
        Some(r)
    }

    fn on_ack(&mut self, ctx: &mut Ctx, pkt: &Packet, t: &TcpRepr) {
        let now = ctx.now;
        let ack = self.rel_snd_seq(t.ack);
        let snd_max = self.snd_max_seq();
        if ack < self.snd_una || ack > snd_max {
            return;
        }
        let wnd = (t.window as u64) << self.snd_wscale;
        let window_changed = wnd != self.snd_wnd;
        self.snd_wnd = wnd;
        let prior_una = self.snd_una;
        let flight_before = snd_max - prior_una;

        let mut rs = RateSample::default();
        let mut acked = 0u64;
        // Linux's RTT samples (tcp_clean_rtx_queue, tcp_ack_update_rtt): from the first
        // segment in sequence order that this ACK newly acknowledges, cumulatively if it can,
        // else by SACK; never from a retransmitted one (Karn). The sample Linux hands the
        // congestion control (`ca_rtt_us`) is from the most recently sent segment newly
        // SACKed, else newly acknowledged cumulatively; `rtt_sample_from = "last"` takes the
        // estimator's from the most recently sent of either.
        let mut first_acked_sent: Option<Time> = None;
        let mut first_sacked: Option<(u64, Time)> = None;
        let mut last_acked_sent: Option<Time> = None;
        let mut last_sacked_sent: Option<Time> = None;
        // F-RTO: a segment sent before the timeout's high mark and never retransmitted is
        // newly acknowledged (Linux's FLAG_ORIG_SACK_ACKED).
        let high_seg = if self.frto {
            self.segs_below(self.recover)
        } else {
            0
        };
        let mut original_acked = false;
        self.frto_new_data = false;
        // RACK's test of a delivered retransmission: does the ACK echo an older timestamp?
        let echo = match (self.ts_ok, t.timestamp) {
            (true, Some((_, e))) if e != 0 => Some(e),
            _ => None,
        };
        let ts_offset = self.ts_offset;
        // Asked only of retransmitted segments.
        let echo_older = move |sent: Time| {
            echo.is_some_and(|e| !ts_geq(e, ((sent / US) as u32).wrapping_add(ts_offset)))
        };
        let rack_on = self.cfg.rack && self.sack_ok;
        let min_rtt = self.rtt.min_rtt();
        if ack > prior_una {
            let covered = self.segs_below(ack);
            // Karn: an ACK that covers any retransmitted segment is ambiguous as a whole (it
            // may have been triggered by the retransmission), so no sample from it.
            let mut ambiguous = false;
            while self.sb.base() < covered {
                let k = self.sb.base();
                let Some(seg) = self.sb.pop_front() else {
                    break;
                };
                ambiguous |= seg.has(RETRANSMITTED);
                original_acked |= !seg.has(RETRANSMITTED) && self.sb.base() <= high_seg;
                if !seg.has(SACKED) {
                    acked += seg.len as u64;
                    self.rate.on_delivered(now, &seg, &mut rs);
                    if rack_on {
                        let echoes_older = seg.has(RETRANSMITTED) && echo_older(seg.sent);
                        self.rack.on_delivered(k, &seg, now, min_rtt, echoes_older);
                    }
                    last_acked_sent = last_acked_sent.max(Some(seg.sent));
                    first_acked_sent = first_acked_sent.or(Some(seg.sent));
                }
            }
            if ambiguous {
                first_acked_sent = None;
                last_acked_sent = None;
            }
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(self.sb.base());
            self.rxt_next = self.rxt_next.max(self.sb.base());
        }
        let mut newly_sacked = 0u64;
        let mut newly_lost = false;
        let mut dsack_tlp = false;
        if self.sack_ok && t.sack_count > 0 {
            let blocks = t.sack_blocks();
            let mut blocks = blocks.iter();
            if let Some((l, r)) = self.dsack_block(blocks.as_slice()) {
                blocks.next();
                // Linux's FLAG_DSACK_TLP: one segment, ending where the probe left SND.NXT.
                dsack_tlp = r - l <= self.mss && self.tlp_high_seq == Some(r);
            }
            for &(l, r) in blocks {
                let l = self.rel_snd_seq(l).max(self.snd_una);
                let r = self.rel_snd_seq(r);
                if r <= l || r > snd_max {
                    continue;
                }
                let lo = self.seg_at_or_after(l);
                let hi = self.segs_below(r);
                let rate = &mut self.rate;
                let rack = &mut self.rack;
                self.sb.sack_range(lo, hi, |k, seg| {
                    newly_sacked += seg.len as u64;
                    rate.on_delivered(now, seg, &mut rs);
                    if rack_on {
                        let echoes_older = seg.has(RETRANSMITTED) && echo_older(seg.sent);
                        rack.on_delivered(k, seg, now, min_rtt, echoes_older);
                    }
                    if !seg.has(RETRANSMITTED) {
                        last_sacked_sent = last_sacked_sent.max(Some(seg.sent));
                        original_acked |= k < high_seg;
                        if first_sacked.is_none_or(|(f, _)| k < f) {
                            first_sacked = Some((k, seg.sent));
                        }
                    }
                });
            }
            if newly_sacked > 0 {
                newly_lost = self.sb.update_lost(self.cfg.dupack_threshold);
            }
        }
        acked += newly_sacked;

        // The timestamp echo only when the ACK's timing gave nothing (Linux prefers the
        // timing: TSecr may echo an older segment's TSval after delayed or lost ACKs).
        let sample_sent = match self.cfg.rtt_sample_from {
            RttSampleFrom::First => first_acked_sent.or(first_sacked.map(|(_, sent)| sent)),
            RttSampleFrom::Last => last_acked_sent.max(last_sacked_sent),
        };
        let rtt = match sample_sent {
            Some(sent) => self.rtt_sample(now - sent),
            None => match (self.ts_ok && ack > prior_una, t.timestamp) {
                (true, Some((_, tsecr))) if tsecr != 0 => {
                    self.rtt_sample(self.ts_now(now).wrapping_sub(tsecr) as Time * US)
                }
                _ => None,
            },
        };
        let rtt_last = match last_sacked_sent.or(last_acked_sent) {
            Some(sent) => Some(now - sent).filter(|&r| r > 0),
            _ => rtt,
        };
        let rate_sample = self.rate.finish(&rs, self.rtt.min_rtt());

        let outstanding = snd_max > prior_una;
        let is_dup = outstanding
            && ack == prior_una
            && if self.sack_ok {
                newly_sacked > 0
            } else {
                pkt.payload_len == 0
                    && !t.flags.has(TcpFlags::SYN | TcpFlags::FIN)
                    && !window_changed
            };
        if ack > prior_una {
            self.dupacks = 0;
        } else if is_dup {
            self.dupacks += 1;
        }

        // A retransmitted tail loss probe that repaired a loss: one reduction, ended at once.
        if self.tlp_high_seq.is_some() {
            let pure_dup =
                ack == prior_una && pkt.payload_len == 0 && !window_changed && newly_sacked == 0;
            if self.tlp_repaired_loss(ack, pure_dup, dsack_tlp) {
                self.tlp_reduction(now);
            }
        }
        if rack_on && self.rack.advanced() {
            let reo_wnd = self.rack_reo_wnd();
            let (lost, timer) = self.rack.detect(&mut self.sb, now, reo_wnd);
            newly_lost |= lost;
            self.reo_deadline = timer.unwrap_or(NEVER);
        }

        // Loss recovery, entry side.
        let ends_fast_recovery = self.recovery == Recovery::Fast && ack >= self.recover;
        let mut restart_timer = ack > prior_una;
        // Linux holds CWR until an ACK goes beyond its high_seq (so that the CWR flag has
        // reached the receiver); a loss found before that is repaired in the same round.
        if self.recovery == Recovery::Cwr && ack > self.recover {
            self.recovery = Recovery::Open;
            self.prr = None;
        }
        match self.recovery {
            Recovery::Open | Recovery::Cwr => {
                let loss = self.dupacks >= self.cfg.dupack_threshold
                    || (self.sack_ok && (newly_lost || self.sb.is_lost(self.sb.base())));
                let may_recover = ack >= self.recover || self.recovery == Recovery::Cwr;
                if loss && outstanding && may_recover && !self.sb.is_empty() {
                    self.enter_fast_recovery(ctx, flight_before);
                }
            }
            Recovery::Fast if !self.sack_ok => {
                if ack > prior_una && ack < self.recover {
                    let newly = (ack - prior_una) as i64;
                    self.inflation -= newly;
                    if newly >= self.mss as i64 {
                        self.inflation += self.mss as i64;
                    }
                    if self.partial_ack_seen && self.cfg.partial_ack_timer == PartialAckTimer::First
                    {
                        restart_timer = false;
                    }
                    self.partial_ack_seen = true;
                    if !self.sb.is_empty() {
                        let k = self.sb.base();
                        self.transmit(ctx, k, true);
                    }
                } else if is_dup {
                    self.inflation += self.mss as i64;
                }
            }
            Recovery::Fast => {}
            Recovery::Timeout => {
                if self.frto {
                    self.frto_step(
                        ctx,
                        ack > prior_una,
                        original_acked,
                        newly_sacked > 0 || is_dup,
                    );
                }
                if self.recovery == Recovery::Timeout && ack >= self.recover {
                    self.recovery = Recovery::Open;
                    self.frto = false;
                }
            }
        }
        self.sb.prune_resend();

        // The controller: signal, then the ACK.
        let info = self.info(now, acked);
        let signal = self.codec.ack_in(pkt, &info);
        let mut ev = AckEvent {
            now,
            acked_bytes: acked,
            rtt,
            rtt_last,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            bytes_in_flight: self.in_flight(),
            in_recovery: self.in_fast_or_timeout_recovery(),
            in_cwnd_reduction: matches!(self.recovery, Recovery::Cwr | Recovery::Fast),
            delivery_rate: rate_sample.map(|(_, r)| r),
            app_limited: rs.is_app_limited,
            delivered: self.rate.delivered,
            prior_delivered: rs.prior_delivered,
            cwnd_unused: !self.is_cwnd_limited(),
            ece: t.flags.has(TcpFlags::ECE),
        };
        let mut enters_cwr = None;
        if let Some(cc) = self.cc.as_mut() {
            let window_before = cc.window();
            if let Some(sig) = signal {
                match sig {
                    Signal::Ecn | Signal::Level(1) => self.stats.signals_l1 += 1,
                    Signal::Level(2) => self.stats.signals_l2 += 1,
                    Signal::Marked { marked_bytes, .. } if marked_bytes > 0 => {
                        self.stats.signals_l1 += 1
                    }
                    Signal::Load(c) | Signal::LoadInterval { code: c, .. }
                        if self.codec.is_overload(c) =>
                    {
                        self.stats.signals_l1 += 1
                    }
                    Signal::LoadFactor { low_milli, .. } if low_milli >= 1000 => {
                        self.stats.signals_l1 += 1
                    }
                    _ => {}
                }
                cc.on_signal(&ev, sig);
            }
            // A signal's reduction (made in on_signal, or by DCTCP in on_ack) starts the CWR
            // round; the ACK that carries it already counts as inside it.
            let open = self.recovery == Recovery::Open && cc.cwr_state();
            if open && cc.window() < window_before {
                enters_cwr = Some(window_before);
                ev.in_cwnd_reduction = true;
            }
            if acked > 0 {
                cc.on_ack(&ev);
            }
            if open && enters_cwr.is_none() && cc.window() < window_before {
                enters_cwr = Some(window_before);
            }
            if ends_fast_recovery {
                cc.on_recovery_end(now);
            }
        }
        if let Some(prior_cwnd) = enters_cwr {
            self.tlp_high_seq = None;
            self.recovery = Recovery::Cwr;
            self.recover = snd_max;
            self.recovery_point = snd_max;
            self.start_prr(prior_cwnd);
        }
        if ends_fast_recovery {
            self.recovery = Recovery::Open;
            self.inflation = 0;
            self.prr = None;
        }
        if acked > 0 {
            let pipe = self.in_flight();
            if let Some(p) = self.prr.as_mut() {
                p.on_ack(acked, pipe, ack > prior_una, newly_lost);
            }
        }

        if self.snd_una >= self.snd_max_seq() {
            self.rto_deadline = NEVER;
            self.tlp_deadline = NEVER;
            self.reo_deadline = NEVER;
        } else {
            if restart_timer {
                self.rto_deadline = now + self.rtt.rto();
            }
            // Linux's single timer slot: a reordering timer displaces the probe.
            if self.reo_deadline != NEVER || !self.may_probe() {
                self.tlp_deadline = NEVER;
            } else if ack > prior_una {
                self.schedule_loss_probe(now, true);
            }
        }
    }

    /// RACK's reordering window (Linux's `tcp_rack_reo_wnd` while no reordering was seen).
    fn rack_reo_wnd(&self) -> Time {
        if self.in_fast_or_timeout_recovery()
            || self.sb.sacked_segs() >= self.cfg.dupack_threshold as u64
        {
            return 0;
        }
        (self.rtt.min_rtt() / 4).min(self.rtt.srtt())
    }

    /// The first SACK block, unwrapped, if it is a D-SACK (RFC 2883 §4: below the cumulative
    /// ACK, or inside the second block).
    fn dsack_block(&self, blocks: &[(u32, u32)]) -> Option<(u64, u64)> {
        let &(l, r) = blocks.first()?;
        let (l, r) = (self.rel_snd_seq(l), self.rel_snd_seq(r));
        if r <= l {
            return None;
        }
        let inside_second = blocks
            .get(1)
            .is_some_and(|&(l2, r2)| self.rel_snd_seq(l2) <= l && r <= self.rel_snd_seq(r2));
        (r <= self.snd_una || inside_second).then_some((l, r))
    }

    /// The reordering timer fired: check again; a loss found outside recovery starts it.
    fn rack_timeout(&mut self, ctx: &mut Ctx) {
        let reo_wnd = self.rack_reo_wnd();
        let (lost, timer) = self.rack.detect(&mut self.sb, ctx.now, reo_wnd);
        self.reo_deadline = timer.unwrap_or(NEVER);
        self.sb.prune_resend();
        if lost && matches!(self.recovery, Recovery::Open | Recovery::Cwr) && !self.sb.is_empty() {
            let flight = self.flight_size();
            self.enter_fast_recovery(ctx, flight);
        }
    }

    /// Recovery or a timeout takes over from the probe (Linux clears `tlp_high_seq` when a
    /// reduction starts).
    fn forget_loss_probe(&mut self) {
        self.tlp_deadline = NEVER;
        self.tlp_high_seq = None;
    }

    /// Whether a tail loss probe may be armed (Linux: SACK, data outstanding, open or CWR).
    fn may_probe(&self) -> bool {
        self.cfg.tlp
            && self.sack_ok
            && !self.sb.is_empty()
            && matches!(self.recovery, Recovery::Open | Recovery::Cwr)
    }

    /// Arms the probe timer (Linux's `tcp_schedule_loss_probe`); `advancing_rto`: the RTO is
    /// being restarted now, so the cap is a full RTO rather than what is left of it.
    fn schedule_loss_probe(&mut self, now: Time, advancing_rto: bool) {
        if !self.may_probe() {
            self.tlp_deadline = NEVER;
            return;
        }
        let mut pto = if self.rtt.has_sample() {
            let outstanding_segs = self.sb.end() - self.sb.base();
            2 * self.rtt.srtt()
                + if outstanding_segs == 1 {
                    self.cfg.min_rto()
                } else {
                    TLP_SLACK
                }
        } else {
            self.cfg.initial_rto()
        };
        let rto_left = if advancing_rto {
            self.rtt.rto()
        } else {
            self.rto_deadline.saturating_sub(now)
        };
        if rto_left > 0 {
            pto = pto.min(rto_left);
        }
        self.tlp_deadline = now + pto;
    }

    /// The probe timer fired (Linux's `tcp_send_loss_probe`).
    fn send_loss_probe(&mut self, ctx: &mut Ctx) {
        if self.tlp_high_seq.is_some() || !self.may_probe() {
            return;
        }
        let (k, retx) = match self.new_segment() {
            Some(k) => (k, false),
            None => (self.sb.end() - 1, true),
        };
        self.transmit(ctx, k, retx);
        self.tlp_retrans = retx;
        self.tlp_high_seq = Some(self.snd_max_seq());
        self.stats.loss_probes += 1;
        self.rto_deadline = ctx.now + self.rtt.rto();
    }

    /// Linux's `tcp_process_tlp_ack`: whether this ACK shows that a retransmitted probe
    /// repaired a loss (it goes beyond the data sent when the probe went); a new-data probe
    /// is done with once acknowledged, and a D-SACK of the probe or a pure duplicate at its
    /// point means the original had arrived too.
    fn tlp_repaired_loss(&mut self, ack: u64, pure_dup: bool, dsack_tlp: bool) -> bool {
        let Some(high) = self.tlp_high_seq else {
            return false;
        };
        if ack < high {
            return false;
        }
        let repaired = self.tlp_retrans && !dsack_tlp && ack > high;
        if !self.tlp_retrans || dsack_tlp || repaired || pure_dup {
            self.tlp_high_seq = None;
        }
        repaired
    }

    /// The reduction for a loss a probe repaired: Linux enters CWR and leaves it on the same
    /// ACK with cwnd = ssthresh.
    fn tlp_reduction(&mut self, now: Time) {
        self.loss_reductions += 1;
        self.recovery_point = self.snd_max_seq();
        if self.recovery == Recovery::Cwr {
            self.recovery = Recovery::Open;
            self.prr = None;
        }
        let flight = self.flight_size();
        if let Some(cc) = self.cc.as_mut() {
            cc.on_loss(now, flight);
            cc.on_recovery_end(now);
        }
    }

    fn enter_fast_recovery(&mut self, ctx: &mut Ctx, flight: u64) {
        let now = ctx.now;
        let from_cwr = self.recovery == Recovery::Cwr;
        self.recovery = Recovery::Fast;
        self.forget_loss_probe();
        self.partial_ack_seen = false;
        self.stats.fast_retransmits += 1;
        if from_cwr {
            // RFC 3168 §6.1.2, Linux's tcp_enter_recovery from CWR: the window was already
            // reduced for this window of data; recovery ends where the CWR round would have.
            if !self.sack_ok {
                self.prr = None;
            }
        } else {
            self.recover = self.snd_max_seq();
            self.recovery_point = self.recover;
            self.loss_reductions += 1;
            if let Some(cc) = self.cc.as_mut() {
                let prior_cwnd = cc.window();
                cc.on_loss(now, flight);
                if self.sack_ok && cc.cwr_state() {
                    self.start_prr(prior_cwnd);
                }
            }
        }
        if !self.sack_ok {
            self.inflation = self.cfg.dupack_threshold as i64 * self.mss as i64;
        }
        self.rxt_next = self.sb.base();
        if self.sack_ok {
            // The first segment presumed lost goes at once (RFC 6675 §5 step 4.2) — unless
            // its retransmission from the previous recovery is still in flight.
            self.sb.mark_lost(self.sb.base());
            if let Some(k) = self.sb.next_resend() {
                self.transmit(ctx, k, true);
            }
        } else {
            let k = self.sb.base();
            self.transmit(ctx, k, true);
        }
    }

    /// F-RTO on an ACK in timeout recovery (RFC 5682 §3.1, Linux's `tcp_process_loss`).
    fn frto_step(
        &mut self,
        ctx: &mut Ctx,
        una_advanced: bool,
        original_acked: bool,
        sack_or_dup: bool,
    ) {
        let ack = self.snd_una;
        if original_acked {
            // Step 3b: data sent before the timeout arrived without retransmission.
            self.frto = false;
            self.recovery = Recovery::Open;
            // Nothing outstanding at the timeout needs repair: fast recovery may start again.
            self.recover = ack;
            self.sb.unmark_lost();
            self.rack.on_undo(self.sb.base());
            self.rxt_next = self.sb.base();
            self.stats.spurious_rtos += 1;
            if let Some(cc) = self.cc.as_mut() {
                cc.on_spurious_timeout(ctx.now);
            }
        } else if self.snd_max_seq() > self.recover {
            // New data went out in step 2b; SACK or duplicate ACKs now say the loss was real.
            if sack_or_dup {
                self.frto = false;
            }
        } else if una_advanced && ack < self.recover {
            // Step 2b: probe with new data if the application and the peer's window allow.
            self.recover = self.snd_max_seq();
            self.recovery_point = self.recover;
            if self.new_segment().is_some() {
                self.frto_new_data = true;
            } else {
                self.frto = false;
            }
        }
    }

    fn on_rto(&mut self, ctx: &mut Ctx) {
        self.rto_deadline = NEVER;
        self.reo_deadline = NEVER;
        self.forget_loss_probe();
        if self.sb.is_empty() {
            return;
        }
        let now = ctx.now;
        self.stats.rtos += 1;
        let outstanding = self.flight_size() - self.sb.sacked_bytes();
        if let Some(cc) = self.cc.as_mut() {
            cc.on_rto(now, outstanding);
        }
        self.loss_reductions += 1;
        self.recover = self.snd_max_seq();
        self.recovery_point = self.recover;
        self.rtt.backoff();
        // Linux keeps F-RTO off for a timeout during fast recovery (`tcp_enter_loss`).
        self.frto = self.cfg.frto && self.sack_ok && self.recovery != Recovery::Fast;
        self.recovery = Recovery::Timeout;
        self.prr = None;
        self.inflation = 0;
        self.dupacks = 0;
        if self.sack_ok {
            self.sb.mark_all_lost();
            self.rack.on_timeout();
        } else {
            self.snd_nxt = self.sb.base();
        }
        self.rxt_next = self.sb.base();
        self.next_send_at = now;
        self.rto_deadline = now + self.rtt.rto();
        self.try_send(ctx);
    }

    // ------------------------------------------------------------ sending

    fn pacing_rate(&self) -> Option<f64> {
        let cc = self.cc.as_ref()?;
        if let Some(r) = cc.pacing_rate() {
            return (r > 0.0).then_some(r);
        }
        if self.cfg.pace_cwnd && self.rtt.has_sample() {
            let ratio = if cc.window() < cc.ssthresh() {
                self.cfg.pacing_ss_ratio
            } else {
                self.cfg.pacing_ca_ratio
            };
            return Some(ratio * cc.window() as f64 / to_secs(self.rtt.srtt()));
        }
        None
    }

    /// The next new segment, if the application, the FIN rule and the peer's window allow.
    fn new_segment(&self) -> Option<u64> {
        let k = self.sb.end();
        if k >= self.n_segs() || (self.seg_has_fin(k) && !self.app_closed) {
            return None;
        }
        let end = self.seg_start(k) + self.seg_payload(k) as u64;
        if end > self.snd_una + self.snd_wnd && self.snd_una < self.snd_max_seq() {
            return None;
        }
        Some(k)
    }

    /// Which segment to send next (number, is a retransmission), if any.
    fn next_segment(&self) -> Option<(u64, bool)> {
        let cwnd = self.cwnd();
        match self.recovery {
            Recovery::Fast | Recovery::Timeout if self.sack_ok => {
                // RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS, NextSeg.
                let pipe = self.sb.pipe();
                if pipe > 0 && pipe + self.mss > cwnd {
                    return None;
                }
                if self.frto_new_data {
                    return self.new_segment().map(|k| (k, false));
                }
                if let Some(k) = self.sb.next_resend() {
                    return Some((k, true));
                }
                if let Some(k) = self.new_segment() {
                    return Some((k, false));
                }
                self.sb
                    .first_unsacked(self.rxt_next, self.sb.high_sacked_end())
                    .filter(|&k| !self.sb.get(k).has(RTX_IN_FLIGHT))
                    .map(|k| (k, true))
            }
            Recovery::Fast => {
                let k = self.new_segment()?;
                let wnd = (cwnd as i64 + self.inflation).max(self.mss as i64) as u64;
                (self.flight_size() + self.seg_len(k) <= wnd).then_some((k, false))
            }
            _ if self.snd_nxt < self.sb.end() => {
                let k = self.snd_nxt;
                let flight = self.seg_start(k).saturating_sub(self.snd_una);
                (flight == 0 || flight + self.seg_len(k) <= cwnd).then_some((k, true))
            }
            _ => {
                let k = self.new_segment()?;
                let flight = self.flight_size();
                let allowance = if self.cfg.limited_transmit && self.recovery == Recovery::Open {
                    self.dupacks.min(2) as u64 * self.mss
                } else {
                    0
                };
                (flight == 0 || flight + self.seg_len(k) <= cwnd.saturating_add(allowance))
                    .then_some((k, false))
            }
        }
    }

    fn try_send(&mut self, ctx: &mut Ctx) {
        if self.state != State::Established {
            return;
        }
        self.pacing_wait = false;
        let mut sent = false;
        let mut deferred_by_cwnd = false;
        // New segments left in the TSO frame being sent: deferral is decided per frame.
        let mut frame_left = 0;
        while let Some((k, retx)) = self.next_segment() {
            if ctx.now < self.next_send_at && self.pacing_rate().is_some() {
                self.pacing_wait = true;
                break;
            }
            if !retx && self.cfg.tso_defer {
                if frame_left == 0 {
                    let frame = self.tso_segs();
                    if let Some(by_cwnd) = self.tso_defers(ctx.now, k, frame) {
                        deferred_by_cwnd = by_cwnd;
                        break;
                    }
                    frame_left = frame;
                }
                frame_left -= 1;
            }
            self.transmit(ctx, k, retx);
            sent = true;
        }
        self.validate_cwnd(sent, deferred_by_cwnd);
        if sent && self.reo_deadline == NEVER {
            self.schedule_loss_probe(ctx.now, false);
        }
        if self.pacing_wait {
            return;
        }
        // Application-limited (delivery-rate draft §3.4): everything written has been sent,
        // no repair is pending and the window is not full.
        if self.send_bytes.is_some()
            && self.sb.end() >= self.n_segs()
            && self.recovery == Recovery::Open
            && self.in_flight() < self.cwnd()
        {
            let f = self.in_flight();
            self.rate.mark_app_limited(f);
        }
    }

    /// Linux's `tcp_cwnd_validate` after a sending opportunity: whether the window is what
    /// stopped the sender, remembered for the round (until SND.UNA passes the data then
    /// sent) once true, and the round's largest flight otherwise.
    fn validate_cwnd(&mut self, sent: bool, deferred_by_cwnd: bool) {
        if self.cc.is_none() {
            return;
        }
        let limited = deferred_by_cwnd || self.in_flight() + self.mss > self.cwnd();
        if !sent && !limited {
            return;
        }
        let outstanding = self.flight_size();
        if self.snd_una >= self.cwnd_usage_end
            || limited
            || (!self.cwnd_limited && outstanding > self.max_flight)
        {
            self.cwnd_limited = limited;
            self.max_flight = outstanding;
            self.cwnd_usage_end = self.snd_max_seq();
        }
    }

    /// Linux's `tcp_tso_should_defer` (6.18): whether new segment `k` waits for the next ACK
    /// so that the sender goes out in larger bursts, as a Linux sender building TSO/GSO
    /// frames does. It waits while the room the windows leave is below one frame of
    /// `frame` segments ([`Self::tso_segs`]) and below a third of the window, the last segment went out
    /// within 1 ms and the ACK of the oldest outstanding segment is due within
    /// min(SRTT/2, 1 ms); never in recovery, never for what the application has no more of.
    /// `Some(true)`: it waits for the congestion window (which the window validation counts
    /// as the window being in use, as Linux does).
    fn tso_defers(&self, now: Time, k: u64, frame: u64) -> Option<bool> {
        if self.cc.is_none()
            || self.recovery != Recovery::Open
            || now > self.last_xmit + MS
            || self.sb.is_empty()
        {
            return None;
        }
        let (cwnd, in_flight) = (self.cwnd(), self.in_flight());
        let start = self.seg_start(k);
        let cong_win = cwnd.checked_sub(in_flight)?;
        let send_win = (self.snd_una + self.snd_wnd).saturating_sub(start);
        let limit = cong_win.min(send_win);
        let frame = frame * self.mss;
        let all_written_fits =
            self.send_bytes.is_some() && self.seg_start(self.n_segs()) <= start + limit;
        if limit >= frame || limit >= self.snd_wnd.min(cwnd) / 3 || all_written_fits {
            return None;
        }
        let srtt = self.rtt.srtt();
        let ack_due = self.sb.get(self.sb.base()).sent + srtt;
        if ack_due > now + (srtt / 2).min(MS) {
            return None;
        }
        Some(cong_win < send_win)
    }

    /// Linux's `tcp_tso_autosize`: segments per TSO/GSO frame, about 1 ms at the pacing rate
    /// (`sk_pacing_rate >> 10`, plus 64 KB >> (min_rtt in µs >> 9) on short paths), at most
    /// 64 KB, at least 2. Without a pacing rate of the controller's, the rate is Linux's
    /// `tcp_update_pacing_rate`: `pacing_ss_ratio` (below half ssthresh) or `pacing_ca_ratio`
    /// × max(cwnd, data in flight) / SRTT.
    fn tso_segs(&self) -> u64 {
        const GSO_MAX: u64 = 65_536;
        let rate = match self.cc.as_ref().and_then(|c| c.pacing_rate()) {
            Some(r) => r,
            None => {
                let srtt = self.rtt.srtt();
                if srtt == 0 {
                    return 2;
                }
                let cwnd = self.cwnd();
                let ss = self.cc.as_ref().is_some_and(|c| cwnd < c.ssthresh() / 2);
                let ratio = if ss {
                    self.cfg.pacing_ss_ratio
                } else {
                    self.cfg.pacing_ca_ratio
                };
                ratio * cwnd.max(self.flight_size()) as f64 / to_secs(srtt)
            }
        };
        let mut bytes = (rate as u64) >> 10;
        let r = self.rtt.min_rtt() / US >> 9;
        if r < 32 {
            bytes += GSO_MAX >> r;
        }
        (bytes.min(GSO_MAX) / self.mss).max(2)
    }

    /// Linux's `tcp_is_cwnd_limited`: the window was full this round, or slow start has
    /// not yet reached twice the most data in flight.
    fn is_cwnd_limited(&self) -> bool {
        let Some(cc) = self.cc.as_ref() else {
            return true;
        };
        self.cwnd_limited || (cc.window() < cc.ssthresh() && cc.window() < 2 * self.max_flight)
    }

    fn transmit(&mut self, ctx: &mut Ctx, k: u64, retx: bool) {
        let now = ctx.now;
        let payload = self.seg_payload(k);
        let fin = self.seg_has_fin(k);
        let mut flags = TcpFlags::ACK;
        if fin {
            flags |= TcpFlags::FIN;
        }
        let (ip, t) = self.header(ctx, flags, self.seg_start(k));
        let mut p = self.finish_packet(ip, t, payload, now);
        self.codec.ack_out(&mut p);
        let info = self.info(now, 0);
        self.codec.data_out(&mut p, retx, &info);

        let nothing_in_flight = self.in_flight() == 0;
        if k == self.sb.end() {
            let mut seg = Seg {
                len: (payload + fin as u32),
                ..Default::default()
            };
            self.rate.on_send(now, nothing_in_flight, &mut seg);
            self.sb.push(seg);
        } else {
            let seg = self.sb.get_mut(k);
            self.rate.on_send(now, nothing_in_flight, seg);
            self.sb.on_retransmit(k);
        }
        if let Some(p) = self.prr.as_mut() {
            p.on_sent((payload + fin as u32) as u64);
        }
        if retx {
            self.stats.retransmissions += 1;
            if self.sack_ok {
                self.rxt_next = self.rxt_next.max(k + 1);
                if self.cfg.rack {
                    self.rack.on_retransmit(k, now);
                }
                // Linux's tcp_xmit_retransmit_queue: resending the first unacknowledged
                // segment restarts the timer, which then waits a full RTO for it.
                if k == self.sb.base() {
                    self.rto_deadline = now + self.rtt.rto();
                }
            }
        }
        if self.snd_nxt == k {
            self.snd_nxt = k + 1;
        }
        self.stats.bytes_sent += payload as u64;
        self.stats.packets_sent += 1;
        self.last_xmit = now;
        let in_flight = self.in_flight();
        if let Some(cc) = self.cc.as_mut() {
            cc.on_send(now, payload as u64, in_flight);
        }
        if self.rto_deadline == NEVER {
            self.rto_deadline = now + self.rtt.rto();
        }
        if let Some(rate) = self.pacing_rate() {
            let prior = self.next_send_at;
            let start = prior.max(now);
            let gap = from_secs(payload as f64 / rate);
            self.next_send_at = start + gap - (gap / 2).min(start - prior);
        }
        self.on_ack_sent(&p);
        ctx.send(p);
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
                    // Our SYN-ACK was lost: answer the retransmitted SYN.
                    self.codec.handshake_in(Handshake::Syn, pkt);
                    self.hs_retx += 1;
                    self.send_syn_ack(ctx);
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
        let now = ctx.now;
        if now >= self.app_stop_at {
            self.stop_writing();
        }
        if self.state == State::Idle && now >= self.open_at {
            self.open_at = NEVER;
            self.state = State::SynSent;
            self.send_syn(ctx);
        }
        if self.hs_deadline <= now {
            self.handshake_timeout(ctx);
        }
        if self.state != State::Established {
            return;
        }
        if self.reo_deadline <= now {
            self.reo_deadline = NEVER;
            self.rack_timeout(ctx);
        }
        if self.tlp_deadline <= now {
            self.tlp_deadline = NEVER;
            self.send_loss_probe(ctx);
        }
        if self.rto_deadline <= now {
            self.on_rto(ctx);
        }
        if self.rcv.delack_deadline <= now {
            self.rcv.delack_deadline = NEVER;
            if self.rcv.ack_pending() {
                self.rcv.ack_now = true;
            }
        }
        self.try_send(ctx);
        self.flush_ack(ctx);
    }

    fn deadline(&self) -> Time {
        let mut d = self.open_at.min(self.hs_deadline).min(self.app_stop_at);
        if self.state == State::Established {
            d = d
                .min(self.rto_deadline)
                .min(self.rcv.delack_deadline)
                .min(self.tlp_deadline)
                .min(self.reo_deadline);
            if self.pacing_wait {
                d = d.min(self.next_send_at);
            }
        }
        d
    }

    fn record(&self, now: Time, r: &mut FlowRecord) {
        if let Some(cc) = self.cc.as_ref() {
            r.transport = "tcp".into();
            r.scheme = format!("{}+{}", cc.name(), self.codec.name());
            r.start_s = Some(to_secs(self.app_start));
            r.size_bytes = self.send_bytes;
            r.bytes_sent = Some(self.stats.bytes_sent);
            r.packets_sent = Some(self.stats.packets_sent);
            r.retransmissions = Some(self.stats.retransmissions);
            r.rtos = Some(self.stats.rtos);
            r.recoveries = Some(self.stats.fast_retransmits);
            r.loss_probes = Some(self.stats.loss_probes);
            r.signals_l1 = Some(self.stats.signals_l1);
            r.signals_l2 = Some(self.stats.signals_l2);
            if let Some(h) = self.stats.rtt_ns.as_ref().filter(|h| h.count > 0) {
                r.rtt_min_s = Some(h.min as f64 * 1e-9);
                r.rtt_mean_s = h.mean().map(|ns| ns * 1e-9);
                r.rtt_p95_s = h.quantile(0.95).map(|ns| ns as f64 * 1e-9);
            }
            r.init_cwnd = self.stats.init_cwnd;
            if let Some((n, mean)) = self.codec.feedback_delay() {
                r.feedback_decisions = Some(n);
                r.feedback_delay_mean_s = (n > 0).then_some(mean);
            }
        } else {
            let delivered = self.rcv.data_delivered();
            r.bytes_delivered = Some(delivered);
            r.packets_received = Some(self.rcv.segs_received);
            r.duplicate_segments = Some(self.rcv.dup_segs);
            let done = self.rcv.fin_received();
            if done {
                r.fct_s = Some(to_secs(self.last_delivery.saturating_sub(self.app_start)));
            }
            let end = if done { self.last_delivery } else { now };
            let span = end.saturating_sub(self.app_start);
            if span > 0 {
                r.goodput_bps = Some(delivered as f64 * 8.0 / to_secs(span));
            }
            if let Some(h) = self.owd_ns.as_ref().filter(|h| h.count > 0) {
                r.owd_mean_s = h.mean().map(|ns| ns * 1e-9);
                r.owd_p95_s = h.quantile(0.95).map(|ns| ns as f64 * 1e-9);
                r.owd_max_s = Some(h.max as f64 * 1e-9);
            }
        }
    }

    fn sample(&self, now: Time, out: &mut Samples) {
        if let Some(cc) = self.cc.as_ref() {
            // The window the sender uses — PRR's during a reduction — as Linux's tcpi_snd_cwnd.
            out.push(("cwnd_bytes", self.cwnd() as f64));
            let ss = cc.ssthresh();
            if ss < u64::MAX / 2 {
                out.push(("ssthresh_bytes", ss as f64));
            }
            if self.rtt.has_sample() {
                out.push(("srtt_s", to_secs(self.rtt.srtt())));
            }
            out.push(("inflight_bytes", self.in_flight() as f64));
            cc.sample(out);
        } else {
            let delivered = self.rcv.data_delivered();
            let dt = now.saturating_sub(self.sample_time.get());
            if dt > 0 {
                let bytes = delivered - self.sample_delivered.get().min(delivered);
                out.push(("delivery_bps", bytes as f64 * 8.0 / to_secs(dt)));
            }
            self.sample_delivered.set(delivered);
            self.sample_time.set(now);
        }
    }

    fn finished(&self) -> bool {
        match self.send_bytes {
            None => false,
            Some(_) => self.fin_acked() && self.rcv.fin_received(),
        }
    }
}
