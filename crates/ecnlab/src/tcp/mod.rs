//! TCP: one implementation with the real machinery (handshake with option and ECN-style
//! negotiation, NewReno and SACK loss recovery, RFC 6298 RTO, delayed ACKs, receive window,
//! pacing, delivery-rate estimation) and two plug points: the feedback [`codec`] and the
//! congestion [`Controller`](crate::cc::Controller).
//!
//! - [`conn`]: the connection endpoint, one file per concern after Linux's split of TCP
//!   (each lists the readings of the RFCs it makes).
//! - [`flow`]: adding a flow (two connected endpoints) to a simulation.
//! - [`codecs`]: the baseline codecs (none, RFC 3168 ECN, DCTCP).

pub mod codec;
pub mod codecs;
pub mod config;
pub mod conn;
pub mod flow;
pub mod prr;
pub mod rack;
pub mod rate;
pub mod rcvbuf;
pub mod recv;
pub mod rtt;
pub mod scoreboard;
pub mod seq;
pub mod testing;

pub use config::{CwndReduction, PartialAckTimer, RtoFloor, RttSampleFrom, TcpConfig};
pub use conn::{ConnParams, Recovery, State, TcpConn};
pub use flow::{add_tcp_flow, TcpFlowSpec};
