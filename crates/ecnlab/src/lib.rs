//! ecnlab: a fast, deterministic packet-level laboratory for network-assisted congestion
//! control.
//!
//! Layers, bottom up: [`time`] and [`units`] (integer picoseconds; the durations, rates and
//! sizes configuration and simulation share), [`engine`] (events), [`wire`] (real header
//! fields, parse/emit), [`packet`] (pooled packets), [`net`] (nodes, ports, links, routing),
//! [`aqm`] (queue disciplines), [`marker`] (router feedback writers), [`tcp`] and [`cc`]
//! (transport with pluggable feedback codecs and congestion controllers), [`app`] (traffic),
//! [`stats`] (measurement), [`scenario`] (the TOML schema), [`schemes`] (one folder per
//! network-assisted scheme).

pub mod ap;
pub mod app;
pub mod aqm;
pub mod cc;
pub mod emu;
pub mod engine;
pub mod marker;
pub mod net;
pub mod packet;
pub mod scenario;
pub mod schemes;
pub mod stats;
pub mod tcp;
pub mod time;
pub mod units;
pub mod wire;

pub use net::Sim;
pub use time::Time;
