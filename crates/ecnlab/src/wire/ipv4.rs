//! IPv4 header (RFC 791).
//!
//! Emitted headers never carry options: 20 bytes, Don't Fragment set, fragment offset 0.
//! Parsing accepts (and skips) options, verifying the header checksum over the whole header;
//! fragments (More Fragments set or a non-zero offset) are rejected, since a [`Ipv4Repr`] cannot
//! describe them and their transport header could not be checked.

use super::{checksum, Ecn, WireError};

pub const HEADER_LEN: usize = 20;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// Don't Fragment, in the flags/fragment-offset word.
const FLAG_DF: u16 = 0x4000;
/// More Fragments, in the flags/fragment-offset word.
const FLAG_MF: u16 = 0x2000;
const FRAG_OFFSET_MASK: u16 = 0x1fff;

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
    /// Parses an IPv4 header at the start of `bytes` (which may extend past the packet's total
    /// length, e.g. link-layer padding). See [`Ipv4Repr::parse_with_header_len`].
    pub fn parse(bytes: &[u8]) -> Result<Ipv4Repr, WireError> {
        Self::parse_with_header_len(bytes).map(|(ip, _)| ip)
    }

    /// Parses an IPv4 header and also returns its length in bytes (20 plus any options, which
    /// are skipped). The transport header starts at that offset and the packet ends at
    /// `header_len + payload_len`.
    ///
    /// Errors: fewer bytes than the header or the total length → [`WireError::Truncated`];
    /// version ≠ 4, IHL < 5, total length < header length, or a fragment →
    /// [`WireError::Malformed`]; wrong header checksum → [`WireError::Checksum`].
    pub fn parse_with_header_len(bytes: &[u8]) -> Result<(Ipv4Repr, usize), WireError> {
        if bytes.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if bytes[0] >> 4 != 4 {
            return Err(WireError::Malformed("IP version is not 4"));
        }
        let header_len = ((bytes[0] & 0x0f) as usize) * 4;
        if header_len < HEADER_LEN {
            return Err(WireError::Malformed("IPv4 header length below 20 bytes"));
        }
        if bytes.len() < header_len {
            return Err(WireError::Truncated);
        }
        let total_len = u16::from_be_bytes([bytes[2], bytes[3]]) as usize;
        if total_len < header_len {
            return Err(WireError::Malformed(
                "IPv4 total length below the header length",
            ));
        }
        if bytes.len() < total_len {
            return Err(WireError::Truncated);
        }
        if checksum::sum(&bytes[..header_len]) != 0xffff {
            return Err(WireError::Checksum);
        }
        let frag = u16::from_be_bytes([bytes[6], bytes[7]]);
        if frag & FLAG_MF != 0 || frag & FRAG_OFFSET_MASK != 0 {
            return Err(WireError::Malformed("IPv4 fragment"));
        }
        let ip = Ipv4Repr {
            src: u32::from_be_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]),
            dst: u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]),
            dscp: bytes[1] >> 2,
            ecn: Ecn(bytes[1] & 0b11),
            ident: u16::from_be_bytes([bytes[4], bytes[5]]),
            ttl: bytes[8],
            protocol: bytes[9],
            payload_len: (total_len - header_len) as u16,
        };
        Ok((ip, header_len))
    }

    /// Writes the 20-byte header into `buf[..20]`: version 4, IHL 5, DSCP and ECN, total length
    /// `20 + payload_len`, identification, DF set, fragment offset 0, TTL, protocol, header
    /// checksum, addresses. Only the low 6 bits of `dscp` are used.
    ///
    /// Panics if `buf` is shorter than 20 bytes.
    pub fn emit(&self, buf: &mut [u8]) {
        let h = &mut buf[..HEADER_LEN];
        h[0] = 0x45;
        h[1] = (self.dscp << 2) | self.ecn.bits();
        h[2..4].copy_from_slice(&(self.total_len() as u16).to_be_bytes());
        h[4..6].copy_from_slice(&self.ident.to_be_bytes());
        h[6..8].copy_from_slice(&FLAG_DF.to_be_bytes());
        h[8] = self.ttl;
        h[9] = self.protocol;
        h[10..12].copy_from_slice(&[0, 0]);
        h[12..16].copy_from_slice(&self.src.to_be_bytes());
        h[16..20].copy_from_slice(&self.dst.to_be_bytes());
        let c = checksum::finish(checksum::sum(h));
        h[10..12].copy_from_slice(&c.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent checksum: sum the ten 16-bit words in a u32, fold twice, complement.
    fn header_checksum(h: &[u8; 20]) -> u16 {
        let mut s: u32 = 0;
        for i in (0..20).step_by(2) {
            if i != 10 {
                s += u16::from_be_bytes([h[i], h[i + 1]]) as u32;
            }
        }
        s = (s & 0xffff) + (s >> 16);
        s = (s & 0xffff) + (s >> 16);
        !(s as u16)
    }

    fn sample() -> Ipv4Repr {
        Ipv4Repr {
            src: 0xc0a8_0001,
            dst: 0xc0a8_00c7,
            dscp: 0,
            ecn: Ecn::NOT_ECT,
            ident: 0,
            ttl: 64,
            protocol: PROTO_UDP,
            payload_len: 0x73 - 20,
        }
    }

    #[test]
    fn emit_known_vector() {
        // The widely used worked example of the IPv4 header checksum (checksum 0xb861).
        let expected: [u8; 20] = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        let mut buf = [0xaau8; 20];
        sample().emit(&mut buf);
        assert_eq!(buf, expected);
        assert_eq!(header_checksum(&expected), 0xb861);
        let mut bytes = [0u8; 0x73];
        bytes[..20].copy_from_slice(&buf);
        assert_eq!(Ipv4Repr::parse(&bytes), Ok(sample()));
    }

    #[test]
    fn emit_all_fields_byte_for_byte() {
        let ip = Ipv4Repr {
            src: 0x0a01_0203,
            dst: 0x0a04_0506,
            dscp: 46,
            ecn: Ecn::CE,
            ident: 0xbeef,
            ttl: 17,
            protocol: PROTO_TCP,
            payload_len: 1480,
        };
        let mut expected: [u8; 20] = [
            0x45,
            (46 << 2) | 0b11,
            0x05,
            0xdc, // 1500
            0xbe,
            0xef,
            0x40,
            0x00,
            17,
            6,
            0,
            0,
            10,
            1,
            2,
            3,
            10,
            4,
            5,
            6,
        ];
        let c = header_checksum(&expected);
        expected[10..12].copy_from_slice(&c.to_be_bytes());
        let mut buf = [0u8; 20];
        ip.emit(&mut buf);
        assert_eq!(buf, expected);
    }

    #[test]
    fn roundtrip_ecn_dscp_ident_ttl() {
        let mut bytes = vec![0u8; 100];
        for ecn in 0..4u8 {
            for dscp in [0u8, 1, 10, 34, 46, 63] {
                for (ident, ttl) in [(0u16, 0u8), (1, 1), (0x8000, 64), (0xffff, 255)] {
                    let ip = Ipv4Repr {
                        src: 0x0102_0304,
                        dst: 0xfffe_fdfc,
                        dscp,
                        ecn: Ecn(ecn),
                        ident,
                        ttl,
                        protocol: PROTO_TCP,
                        payload_len: 80,
                    };
                    ip.emit(&mut bytes);
                    assert_eq!(Ipv4Repr::parse(&bytes), Ok(ip));
                }
            }
        }
    }

    #[test]
    fn corrupted_checksum_is_rejected() {
        let mut bytes = [0u8; 0x73];
        sample().emit(&mut bytes);
        for i in [1usize, 5, 8, 10, 11, 15, 19] {
            let mut b = bytes;
            b[i] ^= 0x01;
            assert_eq!(Ipv4Repr::parse(&b), Err(WireError::Checksum), "byte {i}");
        }
    }

    #[test]
    fn truncated_is_rejected() {
        let mut bytes = [0u8; 0x73];
        sample().emit(&mut bytes);
        for n in [0usize, 1, 19, 20, 0x72] {
            assert_eq!(
                Ipv4Repr::parse(&bytes[..n]),
                Err(WireError::Truncated),
                "{n}"
            );
        }
        // Trailing bytes past the total length (link padding) are fine.
        let mut longer = [0u8; 0x80];
        longer[..0x73].copy_from_slice(&bytes);
        assert_eq!(Ipv4Repr::parse(&longer), Ok(sample()));
    }

    fn refresh_checksum(h: &mut [u8]) {
        let n = ((h[0] & 0x0f) as usize) * 4;
        h[10] = 0;
        h[11] = 0;
        let c = checksum::finish(checksum::sum(&h[..n]));
        h[10..12].copy_from_slice(&c.to_be_bytes());
    }

    #[test]
    fn malformed_headers_are_rejected() {
        let mut bytes = [0u8; 0x73];
        sample().emit(&mut bytes);
        let mut v6 = bytes;
        v6[0] = 0x65;
        refresh_checksum(&mut v6);
        assert!(matches!(Ipv4Repr::parse(&v6), Err(WireError::Malformed(_))));
        let mut short_ihl = bytes;
        short_ihl[0] = 0x44;
        assert!(matches!(
            Ipv4Repr::parse(&short_ihl),
            Err(WireError::Malformed(_))
        ));
        let mut short_total = bytes;
        short_total[2..4].copy_from_slice(&19u16.to_be_bytes());
        refresh_checksum(&mut short_total);
        assert!(matches!(
            Ipv4Repr::parse(&short_total),
            Err(WireError::Malformed(_))
        ));
        for frag in [0x2000u16, 0x0001, 0x4001] {
            let mut f = bytes;
            f[6..8].copy_from_slice(&frag.to_be_bytes());
            refresh_checksum(&mut f);
            assert!(matches!(Ipv4Repr::parse(&f), Err(WireError::Malformed(_))));
        }
        // DF clear is accepted (the Repr does not carry it).
        let mut no_df = bytes;
        no_df[6] = 0;
        refresh_checksum(&mut no_df);
        assert_eq!(Ipv4Repr::parse(&no_df), Ok(sample()));
    }

    #[test]
    fn options_are_skipped() {
        // IHL 6: one 4-byte option word (NOP NOP NOP EOL) between the header and the payload.
        let mut bytes = [0u8; 24 + 8];
        sample().emit(&mut bytes);
        bytes[0] = 0x46;
        bytes[2..4].copy_from_slice(&32u16.to_be_bytes());
        bytes[20..24].copy_from_slice(&[1, 1, 1, 0]);
        refresh_checksum(&mut bytes);
        let (ip, hl) = Ipv4Repr::parse_with_header_len(&bytes).unwrap();
        assert_eq!(hl, 24);
        assert_eq!(ip.payload_len, 8);
        assert_eq!(ip.src, sample().src);
        // An options area longer than the buffer is truncation.
        assert_eq!(Ipv4Repr::parse(&bytes[..22]), Err(WireError::Truncated));
    }
}
