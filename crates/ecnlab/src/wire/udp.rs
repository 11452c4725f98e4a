//! UDP header (RFC 768).

use super::{checksum, ipv4::PROTO_UDP, WireError};

pub const HEADER_LEN: usize = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
}

impl UdpRepr {
    /// Parses a UDP datagram (header and payload, nothing after) sent from `src` to `dst`.
    /// The length field must equal `bytes.len()`; a checksum of 0 means "not computed" and is
    /// accepted, any other value is verified over the IPv4 pseudo-header, header and payload.
    ///
    /// Errors: fewer than 8 bytes or a length field beyond the buffer →
    /// [`WireError::Truncated`]; a length field below 8 or short of the buffer →
    /// [`WireError::Malformed`]; checksum mismatch → [`WireError::Checksum`].
    pub fn parse(bytes: &[u8], src: u32, dst: u32) -> Result<UdpRepr, WireError> {
        if bytes.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let len = u16::from_be_bytes([bytes[4], bytes[5]]) as usize;
        if len < HEADER_LEN {
            return Err(WireError::Malformed("UDP length below 8"));
        }
        if len > bytes.len() {
            return Err(WireError::Truncated);
        }
        if len < bytes.len() {
            return Err(WireError::Malformed(
                "UDP length disagrees with the IP length",
            ));
        }
        let sent = u16::from_be_bytes([bytes[6], bytes[7]]);
        if sent != 0 {
            let pseudo = checksum::pseudo_header_v4(src, dst, PROTO_UDP, len as u16);
            if checksum::combine(pseudo, checksum::sum(bytes)) != 0xffff {
                return Err(WireError::Checksum);
            }
        }
        Ok(UdpRepr {
            src_port: u16::from_be_bytes([bytes[0], bytes[1]]),
            dst_port: u16::from_be_bytes([bytes[2], bytes[3]]),
        })
    }

    /// Writes the 8-byte header into `buf[..8]`, with length `buf.len()` and the checksum over
    /// the IPv4 pseudo-header, header and payload. `buf` is the whole datagram: header followed
    /// by the payload, already in place (zeros in simulation). A computed checksum of 0 is sent
    /// as 0xffff (RFC 768).
    ///
    /// Panics if `buf` is shorter than 8 or longer than 65535 bytes.
    pub fn emit(&self, buf: &mut [u8], src: u32, dst: u32) {
        assert!(
            buf.len() >= HEADER_LEN && buf.len() <= u16::MAX as usize,
            "UDP datagram length out of range"
        );
        let len = buf.len() as u16;
        buf[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        buf[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        buf[4..6].copy_from_slice(&len.to_be_bytes());
        buf[6..8].copy_from_slice(&[0, 0]);
        let pseudo = checksum::pseudo_header_v4(src, dst, PROTO_UDP, len);
        let mut c = checksum::finish(checksum::combine(pseudo, checksum::sum(buf)));
        if c == 0 {
            c = 0xffff;
        }
        buf[6..8].copy_from_slice(&c.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: u32 = 0x0a00_0001;
    const B: u32 = 0x0a00_0002;

    fn reference_sum(src: u32, dst: u32, dgram: &[u8]) -> u16 {
        crate::wire::checksum::reference_pseudo_sum(src, dst, 17, dgram)
    }

    #[test]
    fn emit_byte_for_byte() {
        let u = UdpRepr {
            src_port: 5000,
            dst_port: 6000,
        };
        let mut buf = [0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4];
        u.emit(&mut buf, A, B);
        let expected = [0x13, 0x88, 0x17, 0x70, 0x00, 0x0c, 0xbc, 0xd5, 1, 2, 3, 4];
        assert_eq!(buf, expected);
        let mut zeroed = expected;
        zeroed[6] = 0;
        zeroed[7] = 0;
        assert_eq!(!reference_sum(A, B, &zeroed), 0xbcd5);
        assert_eq!(UdpRepr::parse(&buf, A, B), Ok(u));
    }

    #[test]
    fn zero_checksum_is_sent_as_ffff() {
        let u = UdpRepr {
            src_port: 1,
            dst_port: 2,
        };
        // Choose a payload word that brings the sum to 0xffff, so the computed checksum is 0.
        let mut buf = [0u8; 10];
        buf[0..2].copy_from_slice(&1u16.to_be_bytes());
        buf[2..4].copy_from_slice(&2u16.to_be_bytes());
        buf[4..6].copy_from_slice(&10u16.to_be_bytes());
        let w = 0xffff - reference_sum(A, B, &buf);
        buf[8..10].copy_from_slice(&w.to_be_bytes());
        u.emit(&mut buf, A, B);
        assert_eq!(buf[6..8], [0xff, 0xff]);
        assert_eq!(UdpRepr::parse(&buf, A, B), Ok(u));
    }

    #[test]
    fn roundtrip_and_no_checksum() {
        for len in [8usize, 9, 100, 1472] {
            let u = UdpRepr {
                src_port: len as u16,
                dst_port: 65535,
            };
            let mut buf = vec![0u8; len];
            u.emit(&mut buf, A, B);
            assert_eq!(u16::from_be_bytes([buf[4], buf[5]]) as usize, len);
            assert_eq!(UdpRepr::parse(&buf, A, B), Ok(u));
            // Checksum 0: not computed, accepted as is.
            buf[6] = 0;
            buf[7] = 0;
            buf[0] ^= 0x40;
            assert!(UdpRepr::parse(&buf, A, B).is_ok());
        }
    }

    #[test]
    fn errors() {
        let u = UdpRepr {
            src_port: 7,
            dst_port: 8,
        };
        let mut buf = [0u8; 20];
        u.emit(&mut buf, A, B);
        let mut bad = buf;
        bad[12] = 1;
        assert_eq!(UdpRepr::parse(&bad, A, B), Err(WireError::Checksum));
        assert_eq!(UdpRepr::parse(&buf, A, B + 1), Err(WireError::Checksum));
        assert_eq!(UdpRepr::parse(&buf[..7], A, B), Err(WireError::Truncated));
        assert_eq!(UdpRepr::parse(&buf[..19], A, B), Err(WireError::Truncated));
        let mut longer = [0u8; 24];
        longer[..20].copy_from_slice(&buf);
        assert!(matches!(
            UdpRepr::parse(&longer, A, B),
            Err(WireError::Malformed(_))
        ));
        let mut short_len = buf;
        short_len[4..6].copy_from_slice(&7u16.to_be_bytes());
        assert!(matches!(
            UdpRepr::parse(&short_len, A, B),
            Err(WireError::Malformed(_))
        ));
    }
}
