//! UDP header (RFC 768).

pub const HEADER_LEN: usize = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
}

impl UdpRepr {
    pub fn parse(_bytes: &[u8], _src: u32, _dst: u32) -> Result<UdpRepr, super::WireError> {
        Err(super::WireError::Malformed(
            "UDP parsing not implemented yet",
        ))
    }
    pub fn emit(&self, _buf: &mut [u8], _src: u32, _dst: u32) {}
}
