//! Writing a router's changes back into a real packet's bytes.
//!
//! A forwarder parses a real packet ([`super::parse_packet`]), lets routers change the parsed
//! headers, and then needs the bytes to say the same thing. Re-emitting would lay TCP options
//! out our way and touch every byte; instead only the fields a router or an access point may
//! change are written (IP: DSCP, ECN, identification, TTL; TCP: flags, window) and each
//! checksum is updated from the words that changed (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m')),
//! so the payload is never read again.
//!
//! Any other difference (addresses, ports, sequence numbers, lengths, options) is refused
//! before a byte is written: a packet is rewritten completely or not at all.

use super::{Packet, L4};
use crate::wire::{checksum, ipv4};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RewriteError {
    /// A field changed that cannot be written back in place (named).
    Unsupported(&'static str),
    /// The bytes are not the packet `before` describes (too short, not IPv4, wrong protocol).
    Mismatch,
}

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RewriteError::Unsupported(what) => write!(f, "cannot rewrite {what} in place"),
            RewriteError::Mismatch => write!(f, "bytes do not match the parsed packet"),
        }
    }
}

impl std::error::Error for RewriteError {}

/// A checksum field after one 16-bit word it covers changed from `old` to `new` (RFC 1624,
/// eqn. 3).
#[inline]
pub fn update_checksum(hc: u16, old: u16, new: u16) -> u16 {
    !checksum::combine(checksum::combine(!hc, !old), new)
}

fn word(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Replaces the word at `at` and updates the checksum at `csum` to match.
fn set_word(b: &mut [u8], at: usize, new: u16, csum: usize) {
    let old = word(b, at);
    if old == new {
        return;
    }
    b[at..at + 2].copy_from_slice(&new.to_be_bytes());
    let hc = update_checksum(word(b, csum), old, new);
    b[csum..csum + 2].copy_from_slice(&hc.to_be_bytes());
}

/// Makes `bytes` (the real packet `before` was parsed from) carry `after`'s header fields.
pub fn rewrite(bytes: &mut [u8], before: &Packet, after: &Packet) -> Result<(), RewriteError> {
    let (b, a) = (&before.ip, &after.ip);
    if a.src != b.src || a.dst != b.dst {
        return Err(RewriteError::Unsupported("an IP address"));
    }
    if a.protocol != b.protocol || a.payload_len != b.payload_len {
        return Err(RewriteError::Unsupported("the IP protocol or length"));
    }
    if after.payload_len != before.payload_len {
        return Err(RewriteError::Unsupported("the payload length"));
    }
    let tcp = match (&before.l4, &after.l4) {
        (L4::Tcp(tb), L4::Tcp(ta)) => {
            fn fixed(t: &crate::wire::TcpRepr) -> impl PartialEq + '_ {
                (
                    t.src_port,
                    t.dst_port,
                    t.seq,
                    t.ack,
                    t.mss,
                    t.window_scale,
                    t.sack_permitted,
                    t.sack_blocks(),
                    t.timestamp,
                )
            }
            if fixed(ta) != fixed(tb) {
                return Err(RewriteError::Unsupported(
                    "TCP ports, sequence numbers or options",
                ));
            }
            Some(*ta)
        }
        (L4::Udp(ub), L4::Udp(ua)) => {
            if ua != ub {
                return Err(RewriteError::Unsupported("the UDP header"));
            }
            None
        }
        _ => return Err(RewriteError::Unsupported("the transport protocol")),
    };
    if bytes.len() < ipv4::HEADER_LEN || bytes[0] >> 4 != 4 {
        return Err(RewriteError::Mismatch);
    }
    let ihl = (bytes[0] & 0x0f) as usize * 4;
    let total = word(bytes, 2) as usize;
    if ihl < ipv4::HEADER_LEN
        || total != ihl + b.payload_len as usize
        || bytes.len() < total
        || bytes[9] != b.protocol
    {
        return Err(RewriteError::Mismatch);
    }
    if tcp.is_some() && total < ihl + 20 {
        return Err(RewriteError::Mismatch);
    }
    // Checked; from here on every write succeeds.
    const IP_CSUM: usize = 10;
    let tos = ((a.dscp as u16) << 2) | a.ecn.bits() as u16;
    set_word(bytes, 0, (word(bytes, 0) & 0xff00) | tos, IP_CSUM);
    set_word(bytes, 4, a.ident, IP_CSUM);
    set_word(bytes, 8, ((a.ttl as u16) << 8) | a.protocol as u16, IP_CSUM);
    if let Some(t) = tcp {
        let (flags, window, csum) = (ihl + 12, ihl + 14, ihl + 16);
        let offset_and_flags = (word(bytes, flags) & !crate::wire::TcpFlags::ALL)
            | (t.flags.0 & crate::wire::TcpFlags::ALL);
        set_word(bytes, flags, offset_and_flags, csum);
        set_word(bytes, window, t.window, csum);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{emit_packet, parse_packet};
    use crate::wire::{Ecn, Ipv4Repr, TcpFlags, TcpRepr, UdpRepr};

    fn tcp_packet() -> Packet {
        let ip = Ipv4Repr {
            src: 0x0a00_0001,
            dst: 0x0a00_0005,
            dscp: 0,
            ecn: Ecn::ECT0,
            ident: 0x1234,
            ttl: 64,
            ..Default::default()
        };
        let mut t = TcpRepr {
            src_port: 40000,
            dst_port: 5001,
            seq: 0xdead_beef,
            ack: 77,
            flags: TcpFlags(TcpFlags::ACK),
            window: 512,
            timestamp: Some((1, 2)),
            ..Default::default()
        };
        t.set_sack_blocks(&[(100, 200)]);
        Packet::new_tcp(ip, t, 1000)
    }

    #[test]
    fn incremental_update_matches_rfc1624_example() {
        // RFC 1624 §4: HC = 0xDD2F, m = 0x5555 → m' = 0x3285 gives HC' = 0x0000.
        assert_eq!(update_checksum(0xdd2f, 0x5555, 0x3285), 0x0000);
    }

    /// Every field a router may change, alone and together, rewritten in place gives exactly
    /// the bytes a fresh emit of the changed packet gives.
    #[test]
    fn rewritten_bytes_equal_a_fresh_emit() {
        let before = tcp_packet();
        type Change = Box<dyn Fn(&mut Packet)>;
        let changes: Vec<Change> = vec![
            Box::new(|p| p.ip.ecn = Ecn::CE),
            Box::new(|p| p.ip.ecn = Ecn::ECT1),
            Box::new(|p| p.ip.dscp = 0x2e),
            Box::new(|p| p.ip.ident = 0xffff),
            Box::new(|p| p.ip.ttl -= 3),
            Box::new(|p| p.tcp_mut().unwrap().window = 7),
            Box::new(|p| p.tcp_mut().unwrap().window = 0xffff),
            Box::new(|p| p.tcp_mut().unwrap().flags.set(TcpFlags::ECE, true)),
            Box::new(|p| {
                p.ip.ecn = Ecn::CE;
                p.ip.ident = 0;
                p.ip.ttl = 1;
                let t = p.tcp_mut().unwrap();
                t.window = 3;
                t.flags.set(TcpFlags::CWR, true);
            }),
        ];
        let mut raw = Vec::new();
        let mut want = Vec::new();
        for (i, change) in changes.iter().enumerate() {
            let mut after = before;
            change(&mut after);
            emit_packet(&before, &mut raw);
            emit_packet(&after, &mut want);
            rewrite(&mut raw, &before, &after).unwrap();
            assert_eq!(raw, want, "change {i}");
        }
    }

    /// A real stack's layout (NOP-aligned options, non-zero payload): the rewritten packet
    /// parses (both checksums verify) to the changed headers, and the payload is untouched.
    #[test]
    fn rewrite_keeps_a_real_layout_valid() {
        use etherparse::{PacketBuilder, TcpOptionElement};
        let payload: Vec<u8> = (0..1200u32).map(|i| (i * 7 + 3) as u8).collect();
        let builder = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 9], 64)
            .tcp(40001, 80, 1000, 4000)
            .ack(5)
            .options(&[
                TcpOptionElement::Noop,
                TcpOptionElement::Noop,
                TcpOptionElement::Timestamp(9, 8),
            ])
            .unwrap();
        let mut raw = Vec::new();
        builder.write(&mut raw, &payload).unwrap();
        let before = parse_packet(&raw).unwrap();
        let mut after = before;
        after.ip.ecn = Ecn::CE;
        after.ip.ttl = 61;
        after.tcp_mut().unwrap().window = 100;
        rewrite(&mut raw, &before, &after).unwrap();
        let back = parse_packet(&raw).unwrap();
        assert_eq!(back.ip, after.ip);
        assert_eq!(back.tcp().unwrap().window, 100);
        assert_eq!(&raw[raw.len() - payload.len()..], &payload[..]);
    }

    #[test]
    fn other_changes_are_refused_without_touching_the_bytes() {
        let before = tcp_packet();
        let mut raw = Vec::new();
        emit_packet(&before, &mut raw);
        let orig = raw.clone();
        let mut refuse = |change: &dyn Fn(&mut Packet)| {
            let mut after = before;
            after.ip.ecn = Ecn::CE; // a legitimate change alongside must not be half-written
            change(&mut after);
            let e = rewrite(&mut raw, &before, &after);
            assert!(matches!(e, Err(RewriteError::Unsupported(_))), "{e:?}");
            assert_eq!(raw, orig);
        };
        refuse(&|p| p.ip.dst ^= 1);
        refuse(&|p| p.tcp_mut().unwrap().seq += 1);
        refuse(&|p| p.tcp_mut().unwrap().src_port += 1);
        refuse(&|p| p.tcp_mut().unwrap().timestamp = None);
        refuse(&|p| {
            p.tcp_mut().unwrap().set_sack_blocks(&[]);
        });
        refuse(&|p| {
            p.payload_len += 1;
            p.fix_lengths();
        });
    }

    #[test]
    fn udp_packet_rewrites_ip_fields_only() {
        let ip = Ipv4Repr {
            src: 0x0a00_0001,
            dst: 0x0a00_0002,
            ecn: Ecn::ECT1,
            ttl: 9,
            ..Default::default()
        };
        let before = Packet::new_udp(
            ip,
            UdpRepr {
                src_port: 1,
                dst_port: 2,
            },
            100,
        );
        let mut after = before;
        after.ip.ecn = Ecn::CE;
        after.ip.ident = 42;
        let (mut raw, mut want) = (Vec::new(), Vec::new());
        emit_packet(&before, &mut raw);
        emit_packet(&after, &mut want);
        rewrite(&mut raw, &before, &after).unwrap();
        assert_eq!(raw, want);
    }

    #[test]
    fn bytes_of_another_packet_are_a_mismatch() {
        let before = tcp_packet();
        let mut after = before;
        after.ip.ecn = Ecn::CE;
        let mut raw = Vec::new();
        emit_packet(&before, &mut raw);
        raw.truncate(30);
        assert_eq!(
            rewrite(&mut raw, &before, &after),
            Err(RewriteError::Mismatch)
        );
    }
}
