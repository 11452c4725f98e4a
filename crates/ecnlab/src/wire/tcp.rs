//! TCP header (RFC 9293) with the options the simulator uses: MSS, window scale (RFC 7323),
//! SACK-permitted and SACK blocks (RFC 2018), timestamps (RFC 7323).
//!
//! # Option layout
//!
//! [`TcpRepr::emit`] writes the options present in this fixed order, each at its natural
//! length and without alignment padding between them:
//!
//! | option          | kind | length |
//! |-----------------|------|--------|
//! | MSS             | 2    | 4      |
//! | window scale    | 3    | 3      |
//! | SACK-permitted  | 4    | 2      |
//! | timestamps      | 8    | 10     |
//! | SACK blocks     | 5    | 2 + 8n |
//!
//! then pads to a multiple of 4 bytes with NOPs (kind 1) followed by one EOL (kind 0): one pad
//! byte is `EOL`, two are `NOP EOL`, three `NOP NOP EOL`. [`TcpRepr::options_len`] is exactly
//! the number of bytes written.
//!
//! The options area is at most [`MAX_OPTIONS_LEN`] (40) bytes. SACK blocks take what the other
//! options leave: [`TcpRepr::sack_capacity`] is 4 blocks alone, 3 with timestamps, 2 on a
//! segment that also carries MSS, window scale, SACK-permitted and timestamps. When
//! `sack_count` exceeds the capacity only the first `sack_capacity()` blocks are sent (RFC 2018
//! asks that the first block report the most recent data, so keep the most important first);
//! [`TcpRepr::sack_blocks`], [`TcpRepr::options_len`] and [`TcpRepr::header_len`] all reflect
//! the cap. [`TcpRepr::set_sack_blocks`] stores blocks already capped.
//!
//! [`TcpRepr::parse`] reads options in any order: NOP and EOL are honoured, unknown kinds are
//! skipped by their length, a repeated known option keeps its last value, and a length that is
//! below 2, runs past the header or is wrong for a known kind gives [`WireError::Malformed`].

use super::{checksum, ipv4::PROTO_TCP, WireError};

pub const HEADER_LEN: usize = 20;
pub const MAX_SACK_BLOCKS: usize = 4;
/// Largest options area: data offset 15 words minus the fixed 20 bytes.
pub const MAX_OPTIONS_LEN: usize = 40;

const KIND_EOL: u8 = 0;
const KIND_NOP: u8 = 1;
const KIND_MSS: u8 = 2;
const KIND_WSCALE: u8 = 3;
const KIND_SACK_PERMITTED: u8 = 4;
const KIND_SACK: u8 = 5;
const KIND_TIMESTAMP: u8 = 8;

/// TCP flags in the 12-bit layout of the header's bytes 12–13 (low 9 bits used):
/// AE (formerly NS, RFC 9768) is bit 8, CWR bit 7, ECE bit 6, URG, ACK, PSH, RST, SYN, FIN.
/// The three reserved bits above AE (0xe00) follow RFC 9293 §3.1: emitted as zero, ignored on
/// parse; only the nine defined flags ([`TcpFlags::ALL`]) are on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct TcpFlags(pub u16);

impl TcpFlags {
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const URG: u16 = 0x020;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;
    pub const AE: u16 = 0x100;
    /// The nine defined flags.
    pub const ALL: u16 = 0x1ff;

    #[inline]
    pub fn has(self, f: u16) -> bool {
        self.0 & f != 0
    }
    #[inline]
    pub fn set(&mut self, f: u16, on: bool) {
        if on {
            self.0 |= f
        } else {
            self.0 &= !f
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    /// The 16-bit window field as sent (already scaled down by the sender's shift).
    pub window: u16,
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    /// (left, right) edges; only the first `sack_count` are present (and at most
    /// [`TcpRepr::sack_capacity`] of those go on the wire). Unused entries are zero in parsed
    /// headers.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    pub sack_count: u8,
    /// (TSval, TSecr)
    pub timestamp: Option<(u32, u32)>,
}

impl TcpRepr {
    /// Unpadded length of the options other than SACK blocks.
    fn fixed_options_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 3;
        }
        if self.sack_permitted {
            n += 2;
        }
        if self.timestamp.is_some() {
            n += 10;
        }
        n
    }

    /// How many SACK blocks fit in the 40-byte options area beside the other options present:
    /// 4 alone, 3 with timestamps, 2 with MSS + window scale + SACK-permitted + timestamps.
    pub fn sack_capacity(&self) -> usize {
        let free = MAX_OPTIONS_LEN - self.fixed_options_len();
        if free < 10 {
            0
        } else {
            ((free - 2) / 8).min(MAX_SACK_BLOCKS)
        }
    }

    /// Length of the options as emitted, padded to a multiple of 4 bytes (at most 40).
    pub fn options_len(&self) -> usize {
        let mut n = self.fixed_options_len();
        let blocks = self.sack_blocks().len();
        if blocks > 0 {
            n += 2 + 8 * blocks;
        }
        (n + 3) & !3
    }

    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options_len()
    }

    /// The SACK blocks that go on the wire: the first `min(sack_count, sack_capacity())`.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        let n = (self.sack_count as usize).min(self.sack_capacity());
        &self.sack[..n]
    }

    /// Stores up to [`TcpRepr::sack_capacity`] blocks from `blocks` (first ones first), zeroes
    /// the unused entries and returns how many were stored. Set the other options first: the
    /// capacity depends on them.
    pub fn set_sack_blocks(&mut self, blocks: &[(u32, u32)]) -> usize {
        let n = blocks.len().min(self.sack_capacity());
        self.sack = [(0, 0); MAX_SACK_BLOCKS];
        self.sack[..n].copy_from_slice(&blocks[..n]);
        self.sack_count = n as u8;
        n
    }
}

impl TcpRepr {
    /// Parses a TCP segment (header and payload, nothing after) sent from `src` to `dst`,
    /// verifying the checksum over the IPv4 pseudo-header, header and payload.
    ///
    /// Errors: shorter than 20 bytes or than the data offset → [`WireError::Truncated`]; data
    /// offset below 5 or bad option lengths → [`WireError::Malformed`]; checksum mismatch →
    /// [`WireError::Checksum`].
    pub fn parse(bytes: &[u8], src: u32, dst: u32) -> Result<TcpRepr, WireError> {
        if bytes.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let word = u16::from_be_bytes([bytes[12], bytes[13]]);
        let header_len = (word >> 12) as usize * 4;
        if header_len < HEADER_LEN {
            return Err(WireError::Malformed("TCP data offset below 5"));
        }
        if bytes.len() < header_len {
            return Err(WireError::Truncated);
        }
        if bytes.len() > u16::MAX as usize {
            return Err(WireError::Malformed("TCP segment longer than 65535 bytes"));
        }
        let pseudo = checksum::pseudo_header_v4(src, dst, PROTO_TCP, bytes.len() as u16);
        if checksum::combine(pseudo, checksum::sum(bytes)) != 0xffff {
            return Err(WireError::Checksum);
        }
        let mut t = TcpRepr {
            src_port: u16::from_be_bytes([bytes[0], bytes[1]]),
            dst_port: u16::from_be_bytes([bytes[2], bytes[3]]),
            seq: u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
            ack: u32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]),
            flags: TcpFlags(word & TcpFlags::ALL),
            window: u16::from_be_bytes([bytes[14], bytes[15]]),
            ..TcpRepr::default()
        };
        t.parse_options(&bytes[HEADER_LEN..header_len])?;
        Ok(t)
    }

    fn parse_options(&mut self, mut opts: &[u8]) -> Result<(), WireError> {
        let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        while let Some(&kind) = opts.first() {
            match kind {
                KIND_EOL => break,
                KIND_NOP => {
                    opts = &opts[1..];
                    continue;
                }
                _ => {}
            }
            let len = *opts
                .get(1)
                .ok_or(WireError::Malformed("TCP option without its length"))?
                as usize;
            if len < 2 {
                return Err(WireError::Malformed("TCP option length below 2"));
            }
            if len > opts.len() {
                return Err(WireError::Malformed("TCP option runs past the header"));
            }
            let body = &opts[2..len];
            match kind {
                KIND_MSS => {
                    if len != 4 {
                        return Err(WireError::Malformed("TCP MSS option length is not 4"));
                    }
                    self.mss = Some(u16::from_be_bytes([body[0], body[1]]));
                }
                KIND_WSCALE => {
                    if len != 3 {
                        return Err(WireError::Malformed(
                            "TCP window scale option length is not 3",
                        ));
                    }
                    self.window_scale = Some(body[0]);
                }
                KIND_SACK_PERMITTED => {
                    if len != 2 {
                        return Err(WireError::Malformed(
                            "TCP SACK-permitted option length is not 2",
                        ));
                    }
                    self.sack_permitted = true;
                }
                KIND_TIMESTAMP => {
                    if len != 10 {
                        return Err(WireError::Malformed(
                            "TCP timestamps option length is not 10",
                        ));
                    }
                    self.timestamp = Some((be32(&body[0..4]), be32(&body[4..8])));
                }
                KIND_SACK => {
                    if len < 10 || !(len - 2).is_multiple_of(8) {
                        return Err(WireError::Malformed("TCP SACK option length is not 2 + 8n"));
                    }
                    // 40 option bytes hold at most 4 blocks, so this always fits.
                    let n = (len - 2) / 8;
                    self.sack = [(0, 0); MAX_SACK_BLOCKS];
                    for (i, b) in body.chunks_exact(8).enumerate() {
                        self.sack[i] = (be32(&b[0..4]), be32(&b[4..8]));
                    }
                    self.sack_count = n as u8;
                }
                _ => {} // unknown kind: skipped by its length
            }
            opts = &opts[len..];
        }
        Ok(())
    }

    /// Writes the header into `buf[..header_len()]` and fills in the checksum. `buf` is the
    /// whole segment: header followed by the payload, which must already be in place (zeros in
    /// simulation) since the checksum covers it. Urgent pointer 0; options as in the module
    /// documentation.
    ///
    /// Panics if `buf` is shorter than [`TcpRepr::header_len`] or longer than 65535 bytes.
    pub fn emit(&self, buf: &mut [u8], src: u32, dst: u32) {
        assert!(
            buf.len() <= u16::MAX as usize,
            "TCP segment longer than 65535 bytes"
        );
        let header_len = self.header_len();
        let h = &mut buf[..header_len];
        h[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        h[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        h[4..8].copy_from_slice(&self.seq.to_be_bytes());
        h[8..12].copy_from_slice(&self.ack.to_be_bytes());
        let word = ((header_len as u16 / 4) << 12) | (self.flags.0 & TcpFlags::ALL);
        h[12..14].copy_from_slice(&word.to_be_bytes());
        h[14..16].copy_from_slice(&self.window.to_be_bytes());
        h[16..20].copy_from_slice(&[0, 0, 0, 0]); // checksum (filled below), urgent pointer
        let written = self.emit_options(&mut h[HEADER_LEN..]);
        debug_assert_eq!(written, header_len - HEADER_LEN);
        let pseudo = checksum::pseudo_header_v4(src, dst, PROTO_TCP, buf.len() as u16);
        let c = checksum::finish(checksum::combine(pseudo, checksum::sum(buf)));
        buf[16..18].copy_from_slice(&c.to_be_bytes());
    }

    /// Writes the options and their padding into `o` (exactly `options_len()` bytes long);
    /// returns the number of bytes written.
    fn emit_options(&self, o: &mut [u8]) -> usize {
        let mut i = 0;
        if let Some(mss) = self.mss {
            o[i..i + 2].copy_from_slice(&[KIND_MSS, 4]);
            o[i + 2..i + 4].copy_from_slice(&mss.to_be_bytes());
            i += 4;
        }
        if let Some(shift) = self.window_scale {
            o[i..i + 3].copy_from_slice(&[KIND_WSCALE, 3, shift]);
            i += 3;
        }
        if self.sack_permitted {
            o[i..i + 2].copy_from_slice(&[KIND_SACK_PERMITTED, 2]);
            i += 2;
        }
        if let Some((tsval, tsecr)) = self.timestamp {
            o[i..i + 2].copy_from_slice(&[KIND_TIMESTAMP, 10]);
            o[i + 2..i + 6].copy_from_slice(&tsval.to_be_bytes());
            o[i + 6..i + 10].copy_from_slice(&tsecr.to_be_bytes());
            i += 10;
        }
        let blocks = self.sack_blocks();
        if !blocks.is_empty() {
            o[i..i + 2].copy_from_slice(&[KIND_SACK, (2 + 8 * blocks.len()) as u8]);
            i += 2;
            for &(left, right) in blocks {
                o[i..i + 4].copy_from_slice(&left.to_be_bytes());
                o[i + 4..i + 8].copy_from_slice(&right.to_be_bytes());
                i += 8;
            }
        }
        let padded = (i + 3) & !3;
        if padded > i {
            o[i..padded - 1].fill(KIND_NOP);
            o[padded - 1] = KIND_EOL;
        }
        padded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: u32 = 0x0a00_0001;
    const B: u32 = 0x0a00_0002;

    /// The checksum field value from the independent reference sum.
    fn reference_checksum(src: u32, dst: u32, seg: &[u8]) -> u16 {
        !crate::wire::checksum::reference_pseudo_sum(src, dst, 6, seg)
    }

    fn emit_vec(t: &TcpRepr, payload: usize, src: u32, dst: u32) -> Vec<u8> {
        let mut buf = vec![0u8; t.header_len() + payload];
        t.emit(&mut buf, src, dst);
        buf
    }

    fn syn() -> TcpRepr {
        TcpRepr {
            src_port: 40000,
            dst_port: 5201,
            seq: 0x0102_0304,
            ack: 0,
            flags: TcpFlags(TcpFlags::AE | TcpFlags::CWR | TcpFlags::ECE | TcpFlags::SYN),
            window: 65535,
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            timestamp: Some((0x1122_3344, 0)),
            ..TcpRepr::default()
        }
    }

    #[test]
    fn emit_syn_with_all_handshake_options() {
        #[rustfmt::skip]
        let expected: [u8; 40] = [
            0x9c, 0x40, 0x14, 0x51,             // ports 40000 -> 5201
            0x01, 0x02, 0x03, 0x04,             // seq
            0x00, 0x00, 0x00, 0x00,             // ack
            0xa1, 0xc2,                         // data offset 10, AE | CWR ECE SYN
            0xff, 0xff,                         // window
            0x11, 0x69,                         // checksum
            0x00, 0x00,                         // urgent pointer
            0x02, 0x04, 0x05, 0xb4,             // MSS 1460
            0x03, 0x03, 0x07,                   // window scale 7
            0x04, 0x02,                         // SACK-permitted
            0x08, 0x0a, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x00, // timestamps
            0x00,                               // EOL
        ];
        let t = syn();
        assert_eq!(t.options_len(), 20);
        let buf = emit_vec(&t, 0, A, B);
        assert_eq!(buf[..], expected[..]);
        let mut zeroed = expected;
        zeroed[16] = 0;
        zeroed[17] = 0;
        assert_eq!(reference_checksum(A, B, &zeroed), 0x1169);
        assert_eq!(TcpRepr::parse(&buf, A, B), Ok(t));
    }

    #[test]
    fn emit_ack_with_timestamps_sack_and_payload() {
        let mut t = TcpRepr {
            src_port: 5201,
            dst_port: 40000,
            seq: 0x8000_0000,
            ack: 0xffff_fffe,
            flags: TcpFlags(TcpFlags::ACK | TcpFlags::ECE),
            window: 1234,
            timestamp: Some((0xdead_beef, 0x0102_0304)),
            ..TcpRepr::default()
        };
        assert_eq!(
            t.set_sack_blocks(&[(1000, 2000), (3000, 4000), (0xffff_fff0, 0x10)]),
            3
        );
        #[rustfmt::skip]
        let mut expected: Vec<u8> = vec![
            0x14, 0x51, 0x9c, 0x40,
            0x80, 0x00, 0x00, 0x00,
            0xff, 0xff, 0xff, 0xfe,
            0xe0, 0x50,                         // data offset 14, ECE ACK
            0x04, 0xd2,                         // window 1234
            0x00, 0x28,                         // checksum
            0x00, 0x00,
            0x08, 0x0a, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04,
            0x05, 0x1a,                         // SACK, 3 blocks
            0x00, 0x00, 0x03, 0xe8, 0x00, 0x00, 0x07, 0xd0,
            0x00, 0x00, 0x0b, 0xb8, 0x00, 0x00, 0x0f, 0xa0,
            0xff, 0xff, 0xff, 0xf0, 0x00, 0x00, 0x00, 0x10,
        ];
        expected.extend_from_slice(&[0u8; 10]); // payload
        assert_eq!(t.header_len(), 56);
        let buf = emit_vec(&t, 10, B, A);
        assert_eq!(buf, expected);
        expected[16] = 0;
        expected[17] = 0;
        assert_eq!(reference_checksum(B, A, &expected), 0x0028);
        assert_eq!(TcpRepr::parse(&buf, B, A), Ok(t));
    }

    #[test]
    fn emit_single_sack_block_padded_with_nop_eol() {
        let mut t = TcpRepr {
            src_port: 1,
            dst_port: 2,
            seq: 3,
            ack: 4,
            flags: TcpFlags(TcpFlags::FIN | TcpFlags::PSH | TcpFlags::ACK | TcpFlags::CWR),
            window: 0,
            ..TcpRepr::default()
        };
        t.set_sack_blocks(&[(7, 9)]);
        #[rustfmt::skip]
        let expected: [u8; 32] = [
            0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4,
            0x80, 0x99,                         // data offset 8, CWR ACK PSH FIN
            0, 0,
            0x65, 0x19,                         // checksum
            0, 0,
            0x05, 0x0a, 0, 0, 0, 7, 0, 0, 0, 9,
            0x01, 0x00,                         // NOP EOL
        ];
        let buf = emit_vec(&t, 0, A, B);
        assert_eq!(buf[..], expected[..]);
        assert_eq!(TcpRepr::parse(&buf, A, B), Ok(t));
    }

    #[test]
    fn checksum_matches_reference_for_odd_payloads() {
        let t = syn();
        for payload in [0usize, 1, 2, 3, 7, 1447, 1448] {
            let mut buf = vec![0u8; t.header_len() + payload];
            for (i, b) in buf[t.header_len()..].iter_mut().enumerate() {
                *b = (i * 37 + 11) as u8;
            }
            t.emit(&mut buf, A, B);
            let sent = u16::from_be_bytes([buf[16], buf[17]]);
            buf[16] = 0;
            buf[17] = 0;
            assert_eq!(sent, reference_checksum(A, B, &buf), "payload {payload}");
            buf[16..18].copy_from_slice(&sent.to_be_bytes());
            assert_eq!(TcpRepr::parse(&buf, A, B), Ok(t));
        }
    }

    #[test]
    fn roundtrip_every_flag_combination() {
        for f in 0..=TcpFlags::ALL {
            let t = TcpRepr {
                src_port: 80,
                dst_port: 443,
                seq: f as u32 * 7919,
                ack: !(f as u32),
                flags: TcpFlags(f),
                window: f ^ 0x5a5a,
                ..TcpRepr::default()
            };
            let buf = emit_vec(&t, 3, A, B);
            let back = TcpRepr::parse(&buf, A, B).unwrap();
            assert_eq!(back, t, "flags {f:#x}");
            for (bit, name) in [
                (TcpFlags::AE, "AE"),
                (TcpFlags::CWR, "CWR"),
                (TcpFlags::ECE, "ECE"),
                (TcpFlags::SYN, "SYN"),
            ] {
                assert_eq!(back.flags.has(bit), f & bit != 0, "{name} in {f:#x}");
            }
        }
        // Reserved and undefined bits are not emitted, and reserved bits are ignored on parse.
        let t = TcpRepr {
            flags: TcpFlags(0xfe00 | TcpFlags::ACK),
            ..TcpRepr::default()
        };
        let mut buf = emit_vec(&t, 0, A, B);
        assert_eq!(buf[12..14], [0x50, 0x10]);
        let back = TcpRepr::parse(&buf, A, B).unwrap();
        assert_eq!(back.flags, TcpFlags(TcpFlags::ACK));
        buf[12] |= 0x0e;
        let sum = reference_checksum(A, B, &{
            let mut z = buf.clone();
            z[16] = 0;
            z[17] = 0;
            z
        });
        buf[16..18].copy_from_slice(&sum.to_be_bytes());
        let back = TcpRepr::parse(&buf, A, B).unwrap();
        assert_eq!(back.flags, TcpFlags(TcpFlags::ACK));
    }

    #[test]
    fn roundtrip_every_option_combination() {
        let blocks = [
            (10u32, 20u32),
            (30, 40),
            (u32::MAX - 5, 3),
            (1 << 31, (1 << 31) + 8),
        ];
        for mask in 0..16u32 {
            for nsack in 0..=MAX_SACK_BLOCKS {
                let mut t = TcpRepr {
                    src_port: 9,
                    dst_port: 10,
                    seq: 11,
                    ack: 12,
                    flags: TcpFlags(TcpFlags::ACK),
                    window: 100,
                    mss: (mask & 1 != 0).then_some(536),
                    window_scale: (mask & 2 != 0).then_some(14),
                    sack_permitted: mask & 4 != 0,
                    timestamp: (mask & 8 != 0).then_some((u32::MAX, 1)),
                    ..TcpRepr::default()
                };
                let stored = t.set_sack_blocks(&blocks[..nsack]);
                assert_eq!(stored, nsack.min(t.sack_capacity()));
                assert!(t.options_len() <= MAX_OPTIONS_LEN);
                assert_eq!(t.options_len() % 4, 0);
                let buf = emit_vec(&t, 5, A, B);
                assert_eq!(buf[12] >> 4, (t.header_len() / 4) as u8);
                assert_eq!(
                    TcpRepr::parse(&buf, A, B),
                    Ok(t),
                    "mask {mask} sack {nsack}"
                );
            }
        }
    }

    #[test]
    fn sack_capacity_and_cap() {
        let mut t = TcpRepr::default();
        assert_eq!(t.sack_capacity(), 4);
        t.timestamp = Some((1, 2));
        assert_eq!(t.sack_capacity(), 3);
        t.mss = Some(1460);
        t.window_scale = Some(7);
        t.sack_permitted = true;
        assert_eq!(t.sack_capacity(), 2);
        // sack_count above the capacity: only the first blocks are sent, and every length
        // agrees with what is written.
        t.sack = [(1, 2), (3, 4), (5, 6), (7, 8)];
        t.sack_count = 4;
        assert_eq!(t.sack_blocks(), &[(1, 2), (3, 4)]);
        assert_eq!(t.options_len(), 40);
        let buf = emit_vec(&t, 0, A, B);
        assert_eq!(buf.len(), 60);
        let back = TcpRepr::parse(&buf, A, B).unwrap();
        assert_eq!(back.sack_blocks(), &[(1, 2), (3, 4)]);
        assert_eq!(back.sack_count, 2);
        assert_eq!(back.sack[2..], [(0, 0), (0, 0)]);
        // With timestamps only: 3 blocks (36 bytes); without: 4 blocks (34 -> 36 bytes).
        let mut t = TcpRepr {
            timestamp: Some((1, 2)),
            sack: [(1, 2), (3, 4), (5, 6), (7, 8)],
            sack_count: 4,
            ..TcpRepr::default()
        };
        assert_eq!(t.sack_blocks().len(), 3);
        assert_eq!(t.options_len(), 36);
        t.timestamp = None;
        assert_eq!(t.sack_blocks().len(), 4);
        assert_eq!(t.options_len(), 36);
        // A sack_count beyond the array is harmless.
        t.sack_count = 200;
        assert_eq!(t.sack_blocks().len(), 4);
    }

    #[test]
    fn corrupted_checksum_is_rejected() {
        let buf = emit_vec(&syn(), 4, A, B);
        for i in [0usize, 5, 13, 16, 17, 25, 39, 41, 43] {
            let mut b = buf.clone();
            b[i] ^= 0x10;
            assert_eq!(
                TcpRepr::parse(&b, A, B),
                Err(WireError::Checksum),
                "byte {i}"
            );
        }
        // Wrong addresses in the pseudo-header.
        assert_eq!(TcpRepr::parse(&buf, B, A).err(), None); // swapping keeps the sum
        assert_eq!(TcpRepr::parse(&buf, A, B + 1), Err(WireError::Checksum));
    }

    #[test]
    fn truncated_is_rejected() {
        let buf = emit_vec(&syn(), 0, A, B);
        for n in [0usize, 1, 19, 20, 21, 39] {
            assert_eq!(
                TcpRepr::parse(&buf[..n], A, B),
                Err(WireError::Truncated),
                "{n}"
            );
        }
    }

    /// Builds a segment with the given raw options (a multiple of 4 bytes) and a valid
    /// checksum.
    fn with_raw_options(opts: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 20 + opts.len()];
        b[0..2].copy_from_slice(&1000u16.to_be_bytes());
        b[2..4].copy_from_slice(&2000u16.to_be_bytes());
        b[12] = (((20 + opts.len()) / 4) << 4) as u8;
        b[13] = 0x10;
        b[20..].copy_from_slice(opts);
        let c = reference_checksum(A, B, &b);
        b[16..18].copy_from_slice(&c.to_be_bytes());
        b
    }

    #[test]
    fn options_parse_tolerantly() {
        // Linux-style layout: MSS, SACK-permitted, timestamps, NOP, window scale; then an
        // unknown option (kind 30, length 4) and EOL followed by junk that must be ignored.
        #[rustfmt::skip]
        let opts = [
            2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 3, 3, 9,
            30, 4, 0xaa, 0xbb, 0, 0xff, 0xff, 0xff,
        ];
        let t = TcpRepr::parse(&with_raw_options(&opts), A, B).unwrap();
        assert_eq!(t.mss, Some(1460));
        assert!(t.sack_permitted);
        assert_eq!(t.timestamp, Some((1, 2)));
        assert_eq!(t.window_scale, Some(9));
        assert_eq!(t.sack_count, 0);
        assert_eq!((t.src_port, t.dst_port), (1000, 2000));
        // NOP-aligned timestamps and SACK, as most stacks send them.
        #[rustfmt::skip]
        let opts = [
            1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 6,
            1, 1, 5, 18, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4,
        ];
        let t = TcpRepr::parse(&with_raw_options(&opts), A, B).unwrap();
        assert_eq!(t.timestamp, Some((5, 6)));
        assert_eq!(t.sack_blocks(), &[(1, 2), (3, 4)]);
    }

    #[test]
    fn malformed_options_are_rejected() {
        let bad: [&[u8]; 9] = [
            &[2, 3, 0, 0],                          // MSS with length 3
            &[3, 4, 7, 0],                          // window scale with length 4
            &[4, 3, 0, 0],                          // SACK-permitted with length 3
            &[8, 8, 0, 0, 0, 0, 0, 0],              // timestamps with length 8
            &[5, 2, 0, 0],                          // SACK without blocks
            &[5, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], // SACK length not 2 + 8n
            &[30, 1, 0, 0],                         // length below 2
            &[30, 8, 0, 0],                         // runs past the header
            &[1, 1, 1, 30],                         // kind without its length
        ];
        for opts in bad {
            assert!(
                matches!(
                    TcpRepr::parse(&with_raw_options(opts), A, B),
                    Err(WireError::Malformed(_))
                ),
                "{opts:?}"
            );
        }
        let mut b = with_raw_options(&[]);
        b[12] = 4 << 4;
        assert!(matches!(
            TcpRepr::parse(&b, A, B),
            Err(WireError::Malformed(_))
        ));
    }
}
