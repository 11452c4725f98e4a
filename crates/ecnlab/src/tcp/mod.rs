//! TCP: one implementation with the real machinery (handshake with option and ECN-style
//! negotiation, NewReno and SACK loss recovery, RFC 6298 RTO, delayed ACKs, receive window,
//! pacing) and two plug points: the feedback [`codec`] and the congestion
//! [`Controller`](crate::cc::Controller).

pub mod codec;
