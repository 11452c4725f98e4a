//! Feedback codecs: how a scheme negotiates itself in the handshake, what codepoint data
//! packets carry, what the receiver echoes in ACKs from what the network wrote, and how the
//! sender decodes ACKs into [`Signal`]s for its controller.
//!
//! One codec object lives in each TCP endpoint and plays both roles (data sender and data
//! receiver); a one-way transfer uses one role on each side. Codecs see whole packets, so
//! schemes that use the IP-ID (UNO) or a per-packet RTT field (HFCC) fit the same trait.

use crate::cc::Signal;
use crate::packet::Packet;
use crate::time::Time;

/// The three packets of the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handshake {
    Syn,
    SynAck,
    /// The ACK that completes the handshake (sent by the active opener).
    Ack,
}

/// What the connection tells the codec about its state when a packet goes out or an ACK
/// comes in. Sequence numbers are 64-bit, unwrapped.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfo {
    pub now: Time,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub srtt: Time,
    pub min_rtt: Time,
    pub cwnd: u64,
    pub mss: u32,
    /// For an incoming ACK: bytes it newly acknowledges.
    pub acked_bytes: u64,
    /// The sender is in loss recovery (fast recovery or after a timeout): its window was
    /// already reduced for the data now in flight.
    pub in_recovery: bool,
    /// `snd_nxt` when the sender last reduced its window for a loss (fast retransmit or
    /// timeout); 0 before any. A classic-ECN sender does not react again before this is
    /// acknowledged (RFC 3168 §6.1.2: one reduction per window for losses and marks together).
    pub recovery_point: u64,
    /// Window reductions for losses so far; a change tells the codec a reduction happened
    /// (RFC 3168 §6.1.2: CWR on the first new data segment after any reduction).
    pub loss_reductions: u32,
}

pub trait Codec {
    fn name(&self) -> &'static str;

    // ---- handshake
    /// Fills codepoints and flags of an outgoing handshake packet.
    fn handshake_out(&mut self, kind: Handshake, pkt: &mut Packet);
    /// Reads an incoming handshake packet.
    fn handshake_in(&mut self, kind: Handshake, pkt: &Packet);
    /// After the handshake: did the peers agree to use this scheme's feedback? (false → the
    /// codec behaves as "no ECN": Not-ECT data, no echo, no signals, unless it falls back to
    /// something else itself.)
    fn negotiated(&self) -> bool;
    /// Initial window in segments decided by the handshake (EECN: 10 / 5 / 1), if any.
    fn initial_window(&self) -> Option<u32> {
        None
    }

    // ---- data sender
    /// Sets the codepoint / flags of an outgoing data segment (`ip.ident` is already set).
    fn data_out(&mut self, pkt: &mut Packet, retransmission: bool, info: &TcpInfo);
    /// Decodes an incoming ACK into at most one congestion signal.
    fn ack_in(&mut self, pkt: &Packet, info: &TcpInfo) -> Option<Signal>;

    // ---- data receiver
    /// Called before [`Codec::data_in`] for an arriving data segment: true if ACKs owed for
    /// earlier segments must go out first, still carrying the current echo (DCTCP, RFC 8257
    /// §3.2: when the CE state changes, the delayed ACK is sent with the old ECE value).
    fn flush_before(&self, _pkt: &Packet) -> bool {
        false
    }
    /// Notes the codepoint of an arriving data segment. Returns true if the receiver should
    /// acknowledge immediately rather than delay (e.g. DCTCP when the CE state changes).
    fn data_in(&mut self, pkt: &Packet) -> bool;
    /// Sets the echo flags of an outgoing ACK.
    fn ack_out(&mut self, pkt: &mut Packet);

    /// The [`Signal::Load`] code that means "congested" in this scheme (its top code), for
    /// the per-flow count of congestion signals; None if the scheme sends no load codes.
    fn load_top_code(&self) -> Option<u8> {
        None
    }

    /// Whether load code `code` means "congested" (the top code unless a scheme has several
    /// overload levels).
    fn is_overload(&self, code: u8) -> bool {
        Some(code) == self.load_top_code()
    }

    /// Schemes that assemble their feedback over several ACKs (UNO's blocks): how many
    /// decisions the sender made and their mean delay in seconds, from the first ACK that
    /// contributed to a decision to the decision.
    fn feedback_delay(&self) -> Option<(u64, f64)> {
        None
    }
}
