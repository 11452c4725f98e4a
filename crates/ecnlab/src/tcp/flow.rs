//! TCP flows: two connected endpoints (data sender and data receiver) added to a simulation.
//!
//! Flow results (one row of the flows table) are filled by both sides:
//! - sender: scheme label `"<controller>+<codec>"`, start, size, payload bytes and segments
//!   sent (retransmissions included), retransmissions, timeouts, congestion signals, RTT
//!   statistics over every RTT sample taken, initial window (segments);
//! - receiver: bytes delivered in order to the application, data segments received
//!   (duplicates included), FCT, throughput.
//!
//! FCT = (time the last data byte is delivered in order to the receiving application) −
//! (the flow's start time), defined once the FIN has arrived in order (so the receiver knows
//! the stream is complete); the FIN exchange itself is not part of it. The start time is when
//! the opening side sends its first SYN, for both the sender-initiated and the
//! client-initiated case. Throughput = bytes delivered × 8 / (last delivery − start) for
//! finished flows, / (end of run − start) otherwise.
//!
//! Signals by level: `Ecn` and `Level(1)` count as level 1, `Level(2)` as level 2,
//! `Marked` with marked bytes > 0 as level 1, `Load(c)` as level 1 when the codec calls `c`
//! [overload](super::codec::Codec::is_overload), and `LoadFactor` as level 1 when its lower
//! bound is at or above 1.

use super::codec::Codec;
use super::config::TcpConfig;
use super::conn::{ConnParams, TcpConn};
use crate::cc::Controller;
use crate::engine::rng;
use crate::net::{node_addr, NodeId, Sim};
use crate::time::Time;
use rand::Rng as _;
use std::cell::RefCell;
use std::sync::Arc;

/// What a TCP flow is.
#[derive(Clone, Debug)]
pub struct TcpFlowSpec {
    pub name: String,
    /// Host that sends the data.
    pub src: NodeId,
    /// Host that receives the data.
    pub dst: NodeId,
    /// Application bytes to transfer; `None` = unlimited (bulk) transfer.
    pub size: Option<u64>,
    /// When the connection is opened.
    pub start: Time,
    /// The receiver opens the connection (a client downloading from a server, EECN's
    /// scenario 1); otherwise the sender does.
    pub client_initiated: bool,
    pub config: TcpConfig,
}

/// Well-known port of the listening side; the opening side uses an ephemeral port.
const SERVER_PORT: u16 = 5001;
const EPHEMERAL_BASE: u16 = 49152;

/// Adds a TCP flow: the controller and `sender_codec` go to the data sender,
/// `receiver_codec` to the data receiver. Returns the flow id.
pub fn add_tcp_flow(
    sim: &mut Sim,
    spec: &TcpFlowSpec,
    cc: Box<dyn Controller>,
    sender_codec: Box<dyn Codec>,
    receiver_codec: Box<dyn Codec>,
) -> Result<u32, String> {
    add_tcp_flow_until(sim, spec, None, cc, sender_codec, receiver_codec)
}

thread_local! {
    /// The configuration of the flow added last: the flows of a scenario mostly share one, and
    /// a connection keeps only a reference to it.
    static LAST_CONFIG: RefCell<Option<Arc<TcpConfig>>> = const { RefCell::new(None) };
}

/// One copy of a configuration for both sides of a flow, and for consecutive flows built
/// alike.
fn shared_config(cfg: &TcpConfig) -> Arc<TcpConfig> {
    LAST_CONFIG.with(|last| {
        let mut last = last.borrow_mut();
        match last.as_ref() {
            Some(c) if **c == *cfg => c.clone(),
            _ => {
                let c = Arc::new(cfg.clone());
                *last = Some(c.clone());
                c
            }
        }
    })
}

/// As [`add_tcp_flow`]; with `stop`, the application of an unlimited (bulk) transfer stops
/// writing at that time: the segment it is writing then is the last and carries the FIN.
pub fn add_tcp_flow_until(
    sim: &mut Sim,
    spec: &TcpFlowSpec,
    stop: Option<Time>,
    cc: Box<dyn Controller>,
    sender_codec: Box<dyn Codec>,
    receiver_codec: Box<dyn Codec>,
) -> Result<u32, String> {
    spec.config.validate()?;
    for (what, n) in [("src", spec.src), ("dst", spec.dst)] {
        match sim.nodes.get(n as usize) {
            Some(node) if node.is_host => {}
            Some(node) => return Err(format!("{what}: node {:?} is not a host", node.name)),
            None => return Err(format!("{what}: no node with index {n}")),
        }
    }
    if spec.src == spec.dst {
        return Err("dst: must differ from src".into());
    }
    if spec.size == Some(0) {
        return Err("size: must be at least 1 byte (or unset for a bulk transfer)".into());
    }
    if let Some(t) = stop {
        if spec.size.is_some() {
            return Err("stop: only for unlimited transfers (omit size)".into());
        }
        if t <= spec.start {
            return Err("stop: must be after start".into());
        }
    }
    let flow = sim.flows.len() as u32;
    let s_ep = sim.next_endpoint_id();
    let r_ep = s_ep + 1;
    let ephemeral = EPHEMERAL_BASE + (flow % 16_384) as u16;
    let (s_port, r_port) = if spec.client_initiated {
        (SERVER_PORT, ephemeral)
    } else {
        (ephemeral, SERVER_PORT)
    };
    let isn = |ep: u32| rng::stream(sim.seed, rng::kind::ENDPOINT, ep as u64).gen::<u32>();
    let cfg = shared_config(&spec.config);
    let mut sender = TcpConn::new(ConnParams {
        cfg: cfg.clone(),
        local_addr: node_addr(spec.src),
        remote_addr: node_addr(spec.dst),
        local_port: s_port,
        remote_port: r_port,
        peer_ep: r_ep,
        flow,
        iss: isn(s_ep),
        active_open_at: (!spec.client_initiated).then_some(spec.start),
        app_start: spec.start,
        send_bytes: spec.size,
        cc: Some(cc),
        codec: sender_codec,
    });
    if let Some(t) = stop {
        sender.stop_writing_at(t);
    }
    let receiver = TcpConn::new(ConnParams {
        cfg,
        local_addr: node_addr(spec.dst),
        remote_addr: node_addr(spec.src),
        local_port: r_port,
        remote_port: s_port,
        peer_ep: s_ep,
        flow,
        iss: isn(r_ep),
        active_open_at: spec.client_initiated.then_some(spec.start),
        app_start: spec.start,
        send_bytes: Some(0),
        cc: None,
        codec: receiver_codec,
    });
    let a = sim.add_endpoint(spec.src, Box::new(sender));
    let b = sim.add_endpoint(spec.dst, Box::new(receiver));
    debug_assert_eq!((a, b), (s_ep, r_ep));
    Ok(sim.add_flow(&spec.name, s_ep, r_ep))
}
