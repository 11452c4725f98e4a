//! A whole simulated packet as real bytes: the IPv4 header, the transport header with its
//! options and a zero-filled payload, with correct checksums — and back.

use super::{Packet, L4};
use crate::wire::{ipv4, udp, Ipv4Repr, TcpRepr, UdpRepr, WireError};

/// Serialises a simulated packet to real bytes (IPv4 header, transport header with options,
/// zero-filled payload), with correct checksums.
pub fn emit_packet(pkt: &Packet, buf: &mut Vec<u8>) {
    buf.clear();
    let total = pkt.wire_len() as usize;
    buf.resize(total, 0);
    pkt.ip.emit(&mut buf[..ipv4::HEADER_LEN]);
    let l4 = &mut buf[ipv4::HEADER_LEN..];
    match &pkt.l4 {
        L4::Tcp(t) => t.emit(l4, pkt.ip.src, pkt.ip.dst),
        L4::Udp(u) => u.emit(l4, pkt.ip.src, pkt.ip.dst),
    }
}

/// Parses bytes produced by [`emit_packet`] (or a real stack) back into a packet: the headers
/// and the payload length. Checksums are verified. IPv4 options are skipped (the packet then
/// re-emits without them); bytes past the IP total length are ignored.
pub fn parse_packet(bytes: &[u8]) -> Result<Packet, WireError> {
    let (ip, header_len) = Ipv4Repr::parse_with_header_len(bytes)?;
    let l4 = &bytes[header_len..header_len + ip.payload_len as usize];
    // `Packet::new_*` derive `ip.payload_len` from the parsed headers (`fix_lengths`), so the
    // packet always re-emits consistently, even when a real stack laid its TCP options out
    // differently (e.g. alignment NOPs) and the re-emitted header is shorter.
    match ip.protocol {
        ipv4::PROTO_TCP => {
            let t = TcpRepr::parse(l4, ip.src, ip.dst)?;
            let wire_header = (l4[12] >> 4) as usize * 4;
            Ok(Packet::new_tcp(ip, t, (l4.len() - wire_header) as u32))
        }
        ipv4::PROTO_UDP => {
            let u = UdpRepr::parse(l4, ip.src, ip.dst)?;
            Ok(Packet::new_udp(ip, u, (l4.len() - udp::HEADER_LEN) as u32))
        }
        _ => Err(WireError::Malformed("unsupported protocol")),
    }
}
