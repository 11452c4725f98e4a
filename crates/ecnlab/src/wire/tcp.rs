//! TCP header (RFC 9293) with the options the simulator uses: MSS, window scale (RFC 7323),
//! SACK-permitted and SACK blocks (RFC 2018), timestamps (RFC 7323).

pub const HEADER_LEN: usize = 20;
pub const MAX_SACK_BLOCKS: usize = 4;

/// TCP flags in the 12-bit layout of the header's bytes 12–13 (low 9 bits used):
/// AE (formerly NS, RFC 9768) is bit 8, CWR bit 7, ECE bit 6, URG, ACK, PSH, RST, SYN, FIN.
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
    /// (left, right) edges; only the first `sack_count` are present.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    pub sack_count: u8,
    /// (TSval, TSecr)
    pub timestamp: Option<(u32, u32)>,
}

impl TcpRepr {
    /// Length of the options as emitted, padded to a multiple of 4 bytes.
    pub fn options_len(&self) -> usize {
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
        if self.sack_count > 0 {
            n += 2 + 8 * self.sack_count as usize;
        }
        (n + 3) & !3
    }

    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options_len()
    }

    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_count as usize]
    }
}

impl TcpRepr {
    pub fn parse(_bytes: &[u8], _src: u32, _dst: u32) -> Result<TcpRepr, super::WireError> {
        Err(super::WireError::Malformed(
            "TCP parsing not implemented yet",
        ))
    }
    pub fn emit(&self, _buf: &mut [u8], _src: u32, _dst: u32) {}
}
