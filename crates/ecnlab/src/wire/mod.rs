//! Header models that carry the fields the schemes read and write, with symmetric parse/emit to
//! real bytes (for pcap and for emulation on real packets).
//!
//! A `*Repr` is a plain value; the simulator moves it around inside a packet, one floor up,
//! where a whole packet is written to bytes and read back.

pub mod checksum;
pub mod ecn;
pub mod ipv4;
pub mod tcp;
pub mod udp;

pub use ecn::Ecn;
pub use ipv4::Ipv4Repr;
pub use tcp::{TcpFlags, TcpRepr};
pub use udp::UdpRepr;

/// Errors from parsing bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    Truncated,
    Malformed(&'static str),
    Checksum,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Truncated => write!(f, "packet truncated"),
            WireError::Malformed(what) => write!(f, "malformed packet: {what}"),
            WireError::Checksum => write!(f, "bad checksum"),
        }
    }
}

impl std::error::Error for WireError {}
