//! ecnlab: a fast, deterministic packet-level laboratory for network-assisted congestion
//! control.
//!
//! Layers, bottom up (each names only layers below it; `tests/layers.rs` holds the list and
//! checks every import against it): [`time`] (integer picoseconds) and [`wire`] (real header
//! fields, parse/emit); [`units`] (the durations, rates and sizes configuration and simulation
//! share), [`engine`] (events), [`stats`] (measurement) and [`packet`] (pooled packets);
//! [`aqm`] (queue disciplines); [`marker`] (router feedback writers); [`net`] (nodes, ports,
//! links, routing) and [`ap`] (the access point); [`cc`] (congestion controllers), [`app`]
//! (traffic) and [`emu`] (real stacks' packets in and out); [`tcp`] (transport with pluggable
//! feedback codecs); [`schemes`] (one folder per network-assisted scheme); [`scenario`] (the
//! TOML schema and the building of a run from it).

pub mod ap;
pub mod app;
pub mod aqm;
pub mod cache;
pub mod cc;
pub mod emu;
pub mod engine;
pub mod marker;
pub mod net;
pub mod packet;
pub mod scenario;
pub mod schemes;
pub mod stats;
pub mod sysmem;
pub mod tcp;
pub mod time;
pub mod units;
pub mod wire;

pub use net::Sim;
pub use time::Time;
