//! What the access-point schemes (APCC, CLEAN, Zhuge) share: the TCP connections an AP sees
//! pass, learnt from real header fields only (window scale and MSS from the handshake, the
//! wired round trip from its timing, when data last passed), and the one way they change a
//! receive window (lower it, never raise it, with the client's window scale honoured).
//!
//! Downstream is towards the wireless clients (the AP's controlled port); a connection is
//! keyed by the 5-tuple of its downstream packets, whichever side opened it.

use crate::marker::flows::FlowTable;
use crate::packet::{FlowKey, Packet, L4};
use crate::time::Time;
use crate::wire::{TcpFlags, TcpRepr};

/// Which way a packet crosses the AP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Towards the wireless clients (data of downloads).
    Down,
    /// From the clients (their ACKs).
    Up,
}

/// One TCP connection as the AP sees it.
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// Window-scale shifts offered in each side's SYN (None: not offered or not seen).
    pub server_shift: Option<u8>,
    pub client_shift: Option<u8>,
    server_syn_seen: bool,
    client_syn_seen: bool,
    /// Largest MSS option either side announced, and the largest downstream payload.
    pub mss_option: u16,
    pub max_payload: u32,
    /// Time the first SYN crossed the AP, and the SYN-ACK's (server-opened connections need
    /// both: their wired round trip is SYN-ACK up → handshake ACK down).
    syn_at: Time,
    syn_ack_at: Time,
    opened_by_client: bool,
    /// Server ↔ AP round trip from the handshake (0 until measured).
    pub wired_rtt: Time,
    /// Last time downstream data passed (0: never).
    pub last_data: Time,
    /// A FIN or RST has passed either way.
    pub closing: bool,
}

impl Session {
    /// Both SYNs seen: the window-scale agreement is known.
    pub fn handshake_seen(&self) -> bool {
        self.server_syn_seen && self.client_syn_seen
    }

    /// The shift applied to the windows the client advertises (RFC 7323 §2.2: only when
    /// both SYNs carried the option), if the handshake was seen.
    pub fn client_window_shift(&self) -> Option<u8> {
        if !self.handshake_seen() {
            return None;
        }
        Some(match (self.server_shift, self.client_shift) {
            (Some(_), Some(c)) => c.min(14),
            _ => 0,
        })
    }

    /// Segment size for converting windows to bytes: the largest downstream payload seen,
    /// else the handshake's MSS, else `fallback`.
    pub fn mss(&self, fallback: u32) -> u32 {
        if self.max_payload > 0 {
            self.max_payload
        } else if self.mss_option > 0 {
            self.mss_option as u32
        } else {
            fallback
        }
    }

    fn observe(&mut self, now: Time, dir: Direction, t: &TcpRepr, payload: u32) {
        let f = t.flags;
        if f.has(TcpFlags::SYN) {
            if let Some(m) = t.mss {
                self.mss_option = self.mss_option.max(m);
            }
            let from_client = dir == Direction::Up;
            if from_client {
                self.client_shift = t.window_scale;
                self.client_syn_seen = true;
            } else {
                self.server_shift = t.window_scale;
                self.server_syn_seen = true;
            }
            if !f.has(TcpFlags::ACK) {
                self.syn_at = now;
                self.opened_by_client = from_client;
            } else {
                self.syn_ack_at = now;
                // Client SYN up at syn_at, the server's SYN-ACK down now.
                if self.opened_by_client && dir == Direction::Down && self.wired_rtt == 0 {
                    self.wired_rtt = now - self.syn_at;
                }
            }
        } else if dir == Direction::Down
            && !self.opened_by_client
            && self.server_syn_seen
            && self.client_syn_seen
            && self.wired_rtt == 0
            && f.has(TcpFlags::ACK)
        {
            // Server-opened: the client's SYN-ACK went up at syn_ack_at; the server's first
            // ACK after it comes down now.
            self.wired_rtt = now - self.syn_ack_at;
        }
        if f.has(TcpFlags::FIN) || f.has(TcpFlags::RST) {
            self.closing = true;
        }
        if dir == Direction::Down && payload > 0 {
            self.last_data = now;
            self.max_payload = self.max_payload.max(payload);
        }
    }
}

/// A client's pure acknowledgement (not part of the handshake): what AP schemes act on.
pub fn is_client_ack(t: &TcpRepr) -> bool {
    t.flags.has(TcpFlags::ACK) && !t.flags.has(TcpFlags::SYN)
}

/// The connections an AP sees, by downstream 5-tuple.
#[derive(Default)]
pub struct Sessions {
    pub table: FlowTable<Session>,
}

impl Sessions {
    /// Learns from a packet leaving the AP by `out_port` (`air`: its wireless port); returns
    /// the connection's slot and the packet's direction (None for non-TCP packets).
    pub fn observe_leaving(
        &mut self,
        now: Time,
        out_port: usize,
        air: usize,
        pkt: &Packet,
    ) -> Option<(usize, Direction)> {
        let dir = if out_port == air {
            Direction::Down
        } else {
            Direction::Up
        };
        self.observe(now, dir, pkt).map(|slot| (slot, dir))
    }

    /// Learns from a TCP packet crossing the AP; returns the connection's slot (None for
    /// non-TCP packets). A connection enters the table with its first packet either way.
    pub fn observe(&mut self, now: Time, dir: Direction, pkt: &Packet) -> Option<usize> {
        let L4::Tcp(t) = &pkt.l4 else {
            return None;
        };
        let mut key = FlowKey::of(pkt);
        if dir == Direction::Up {
            key = FlowKey {
                src: key.dst,
                dst: key.src,
                src_port: key.dst_port,
                dst_port: key.src_port,
                protocol: key.protocol,
            };
        }
        let slot = self.table.slot(key);
        self.table
            .value_mut(slot)
            .observe(now, dir, t, pkt.payload_len);
        Some(slot)
    }
}

/// Lowers the receive window a client's ACK advertises to `bytes` (rounded up to the
/// window's unit, `1 << shift` bytes, so the sender is never allowed less than asked, and
/// capped at the field's 65535). Returns whether the field changed: a window the receiver
/// already set lower is left alone.
pub fn lower_window(t: &mut TcpRepr, bytes: u64, shift: u8) -> bool {
    let unit = 1u64 << shift.min(14);
    let field = bytes.div_ceil(unit).min(u16::MAX as u64) as u16;
    if field < t.window {
        t.window = field;
        true
    } else {
        false
    }
}

/// A TCP segment for the access-point elements' tests: the server is address 1 on port 80,
/// a client at address `a` uses port 5000 + `a`; a SYN carries an MSS option of 1460.
#[cfg(test)]
pub(crate) fn tcp_segment(
    src: u32,
    dst: u32,
    flags: u16,
    payload: u32,
    window: u16,
    window_scale: Option<u8>,
) -> Packet {
    let server = src == 1;
    let client = if server { dst } else { src } as u16;
    Packet::new_tcp(
        crate::wire::Ipv4Repr {
            src,
            dst,
            ..Default::default()
        },
        TcpRepr {
            src_port: if server { 80 } else { 5000 + client },
            dst_port: if server { 5000 + client } else { 80 },
            flags: TcpFlags(flags),
            window,
            window_scale,
            mss: (flags & TcpFlags::SYN != 0).then_some(1460),
            ..Default::default()
        },
        payload,
    )
}

/// [`tcp_segment`] between the server and client 2, with a full window; a SYN offers window
/// scale 0.
#[cfg(test)]
pub(crate) fn test_segment(from_server: bool, flags: u16, payload: u32) -> Packet {
    let (src, dst) = if from_server { (1, 2) } else { (2, 1) };
    let ws = (flags & TcpFlags::SYN != 0).then_some(0);
    tcp_segment(src, dst, flags, payload, 65535, ws)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn tcp(src: u32, dst: u32, flags: u16, payload: u32, ws: Option<u8>) -> Packet {
        tcp_segment(src, dst, flags, payload, 1000, ws)
    }

    const SYN: u16 = TcpFlags::SYN;
    const SYNACK: u16 = TcpFlags::SYN | TcpFlags::ACK;
    const ACK: u16 = TcpFlags::ACK;

    #[test]
    fn client_opened_connection_gives_wired_rtt_and_shift() {
        // Server is address 1, client 2. Client SYN up at 1 ms, SYN-ACK down at 21 ms.
        let mut s = Sessions::default();
        let a = s
            .observe(MS, Direction::Up, &tcp(2, 1, SYN, 0, Some(7)))
            .unwrap();
        assert_eq!(s.table.value(a).client_window_shift(), None);
        let b = s
            .observe(21 * MS, Direction::Down, &tcp(1, 2, SYNACK, 0, Some(9)))
            .unwrap();
        assert_eq!(a, b);
        let v = s.table.value(a);
        assert_eq!(v.wired_rtt, 20 * MS);
        assert_eq!(v.client_window_shift(), Some(7));
        s.observe(22 * MS, Direction::Down, &tcp(1, 2, ACK, 1448, None));
        assert_eq!(s.table.value(a).mss(536), 1448);
        assert_eq!(s.table.value(a).last_data, 22 * MS);
    }

    #[test]
    fn server_opened_connection_times_syn_ack_to_ack() {
        let mut s = Sessions::default();
        let a = s
            .observe(MS, Direction::Down, &tcp(1, 2, SYN, 0, Some(9)))
            .unwrap();
        s.observe(3 * MS, Direction::Up, &tcp(2, 1, SYNACK, 0, None));
        s.observe(23 * MS, Direction::Down, &tcp(1, 2, ACK, 0, None));
        let v = s.table.value(a);
        assert_eq!(v.wired_rtt, 20 * MS);
        // The client offered no scale: its windows are unscaled.
        assert_eq!(v.client_window_shift(), Some(0));
    }

    #[test]
    fn windows_are_lowered_in_the_clients_unit_and_never_raised() {
        let mut t = TcpRepr {
            window: 1000,
            ..Default::default()
        };
        // 2 × 1448 bytes at shift 11 (2048-byte units): 2 units (4096 bytes), not 1.
        assert!(lower_window(&mut t, 2 * 1448, 11));
        assert_eq!(t.window, 2);
        // Asking for more than the receiver offers leaves the field alone.
        assert!(!lower_window(&mut t, 1 << 30, 11));
        assert_eq!(t.window, 2);
        let mut u = TcpRepr {
            window: 65535,
            ..Default::default()
        };
        assert!(lower_window(&mut u, 10 * 1448, 0));
        assert_eq!(u.window, 14480);
    }
}
