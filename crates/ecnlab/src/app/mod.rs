//! Applications and traffic sources that are not TCP.

pub mod udp;

pub use udp::{UdpPattern, UdpSink, UdpSource, UdpSourceConfig};
