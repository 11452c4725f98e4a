//! IPv4 header (RFC 791) without options.

use super::Ecn;

pub const HEADER_LEN: usize = 20;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src: u32,
    pub dst: u32,
    /// Differentiated services code point (6 bits).
    pub dscp: u8,
    pub ecn: Ecn,
    pub ident: u16,
    pub ttl: u8,
    pub protocol: u8,
    /// Length of everything after the IP header (transport header + payload), in bytes.
    pub payload_len: u16,
}

impl Ipv4Repr {
    pub fn total_len(&self) -> usize {
        HEADER_LEN + self.payload_len as usize
    }
}

impl Ipv4Repr {
    pub fn parse(_bytes: &[u8]) -> Result<Ipv4Repr, super::WireError> {
        Err(super::WireError::Malformed(
            "IPv4 parsing not implemented yet",
        ))
    }
    pub fn emit(&self, _buf: &mut [u8]) {}
}
