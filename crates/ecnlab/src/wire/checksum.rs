//! The Internet checksum (RFC 1071): the 16-bit one's-complement of the one's-complement sum of
//! the data taken as big-endian 16-bit words, an odd trailing byte padded with zero.
//!
//! [`sum`] returns the folded (not complemented) sum so that pieces (pseudo-header, header,
//! payload) can be combined with [`combine`] before [`finish`] complements the total.

/// One's-complement sum of `data` as big-endian 16-bit words, folded to 16 bits.
pub fn sum(data: &[u8]) -> u16 {
    let mut acc: u64 = 0;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        // Four words at once: adding 32-bit halves keeps the carries in the upper bits, which
        // folding adds back in (end-around carry).
        let w = u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        acc += (w >> 32) + (w & 0xffff_ffff);
    }
    let mut rest = chunks.remainder().chunks_exact(2);
    for c in &mut rest {
        acc += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = rest.remainder() {
        acc += (*last as u64) << 8;
    }
    fold(acc)
}

/// Folds a wide one's-complement accumulator to 16 bits.
#[inline]
pub fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// One's-complement addition of two folded sums.
#[inline]
pub fn combine(a: u16, b: u16) -> u16 {
    fold(a as u64 + b as u64)
}

/// The checksum field value for a folded sum: its one's complement.
#[inline]
pub fn finish(s: u16) -> u16 {
    !s
}

/// Folded sum of the IPv4 pseudo-header (RFC 9293 §3.1, RFC 768): source, destination, zero,
/// protocol, and the transport length (header + data).
pub fn pseudo_header_v4(src: u32, dst: u32, protocol: u8, len: u16) -> u16 {
    let acc = (src >> 16) as u64
        + (src & 0xffff) as u64
        + (dst >> 16) as u64
        + (dst & 0xffff) as u64
        + protocol as u64
        + len as u64;
    fold(acc)
}

/// Independent reference for tests: pseudo-header and segment laid out in one buffer and summed
/// word by word with an end-around carry after every addition; returns the folded sum (not
/// complemented).
#[cfg(test)]
pub(crate) fn reference_pseudo_sum(src: u32, dst: u32, protocol: u8, seg: &[u8]) -> u16 {
    let mut v = Vec::new();
    v.extend_from_slice(&src.to_be_bytes());
    v.extend_from_slice(&dst.to_be_bytes());
    v.extend_from_slice(&[0, protocol]);
    v.extend_from_slice(&(seg.len() as u16).to_be_bytes());
    v.extend_from_slice(seg);
    if v.len() % 2 == 1 {
        v.push(0);
    }
    let mut s: u32 = 0;
    for w in v.chunks(2) {
        s += u16::from_be_bytes([w[0], w[1]]) as u32;
        if s > 0xffff {
            s -= 0xffff;
        }
    }
    s as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Word-by-word reference with an end-around carry after every addition.
    fn reference(data: &[u8]) -> u16 {
        let mut s: u32 = 0;
        let mut i = 0;
        while i < data.len() {
            let hi = data[i] as u32;
            let lo = if i + 1 < data.len() {
                data[i + 1] as u32
            } else {
                0
            };
            s += (hi << 8) | lo;
            if s > 0xffff {
                s = (s & 0xffff) + 1;
            }
            i += 2;
        }
        s as u16
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2.
        assert_eq!(
            sum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0xddf2
        );
        assert_eq!(finish(0xddf2), 0x220d);
    }

    #[test]
    fn matches_reference_on_all_lengths() {
        let mut data = [0u8; 67];
        let mut x: u32 = 0x1234_5678;
        for b in data.iter_mut() {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            *b = (x >> 16) as u8;
        }
        for n in 0..=data.len() {
            assert_eq!(sum(&data[..n]), reference(&data[..n]), "length {n}");
        }
        let ones = [0xffu8; 33];
        for n in 0..=ones.len() {
            assert_eq!(sum(&ones[..n]), reference(&ones[..n]), "ones, length {n}");
        }
    }

    #[test]
    fn pseudo_header_matches_bytes() {
        let (src, dst) = (0x0a00_0001u32, 0xc0a8_01feu32);
        let mut b = [0u8; 12];
        b[0..4].copy_from_slice(&src.to_be_bytes());
        b[4..8].copy_from_slice(&dst.to_be_bytes());
        b[9] = 6;
        b[10..12].copy_from_slice(&1234u16.to_be_bytes());
        assert_eq!(pseudo_header_v4(src, dst, 6, 1234), reference(&b));
    }
}
