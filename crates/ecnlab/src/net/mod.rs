//! The network: nodes (hosts, routers), egress ports, propagation pipes, static routes, and
//! the simulator that moves packets between them.

pub mod endpoint;
pub mod link;
pub mod port;
mod routes;
pub mod topology;
pub mod trace;

pub use endpoint::{Ctx, Endpoint, IpIdGen, IpIdMode, Samples};
pub use link::Pipe;
pub use port::{Batch, PortCounters, RateSchedule};

use crate::aqm::{DropReason, HeldQdisc, Qdisc, Verdict};
use crate::engine::{rng, Ev, EventQueue, TimerSlot};
use crate::marker::{Marker, PortView};
use crate::packet::{Packet, PacketPool, PktId};
use crate::stats::{ColumnData, FlowRecord, Histogram, Table, TimeSeries};
use crate::time::{to_secs, Time, NEVER};
use port::{BufferNeed, Port};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub type NodeId = u32;
pub type PortId = u32;
pub type EpId = u32;

/// IPv4 address of node `n`: 10.0.0.0/8 plus the node index.
pub fn node_addr(n: NodeId) -> u32 {
    0x0A00_0000 | (n + 1)
}

pub fn addr_node(a: u32) -> Option<NodeId> {
    (a & 0xFF00_0000 == 0x0A00_0000 && a & 0x00FF_FFFF != 0).then(|| (a & 0x00FF_FFFF) - 1)
}

/// What a node element does with a packet it forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    Pass,
    Drop,
    /// Hold the packet at the node until the given time, then forward it (ACK delaying,
    /// reordering).
    HoldUntil(Time),
    /// Forward the packet and an identical copy (duplication in impairment tests).
    Duplicate,
}

/// Code that sits on a node and sees every packet the node forwards, in both directions (an
/// access point's receive-window rewriting or ACK delaying). `ports` are views of the node's
/// egress ports, indexed like `Sim::node_ports`.
pub trait NodeElement {
    fn on_forward(
        &mut self,
        now: Time,
        out_port: usize,
        pkt: &mut Packet,
        ports: &[PortView],
    ) -> Forward;

    /// What the element did, by name, for the run's report.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// A host or a router.
///
/// In declared order (`repr(C)`, each node starting a cache line): what every packet's hop
/// reads (its address, where it goes next) fills the first line; a node is touched once per
/// packet with the rest of the run's traffic in between.
#[repr(C, align(64))]
pub struct Node {
    pub addr: u32,
    /// Its first egress port, `PortId::MAX` while it has none: the route of a node with one.
    first_port: PortId,
    pub is_host: bool,
    /// A host outside the simulation (emulation: a real network stack): packets addressed to
    /// it are handed out through [`Sim::take_egress`] instead of to endpoints, and its
    /// packets come in through [`Sim::inject`].
    pub external: bool,
    pub element: Option<Box<dyn NodeElement>>,
    /// Egress port by destination node (only for nodes with more than one port).
    routes: Vec<PortId>,
    pub ipid: IpIdGen,
    /// Private to the network, which keeps [`Node::first_port`] with it.
    ports: Vec<PortId>,
    held: BinaryHeap<Reverse<(Time, u64, u32, u32)>>,
    held_seq: u64,
    held_timer: TimerSlot,
    pub name: String,
}

impl Node {
    /// Its egress ports, in the order they were added.
    pub fn ports(&self) -> &[PortId] {
        &self.ports
    }
}

/// Link parameters for [`Sim::connect`].
#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub rate: RateSchedule,
    pub delay: Time,
    /// Link-layer bytes added to every packet's transmission (e.g. 2 for PPP, 38 for
    /// Ethernet with preamble and inter-frame gap); queues still count IP bytes.
    pub framing: u32,
    /// Batched service (aggregation), if any.
    pub batch: Option<Batch>,
}

impl LinkSpec {
    pub fn new(bps: u64, delay: Time) -> Self {
        LinkSpec {
            rate: RateSchedule::constant(bps),
            delay,
            framing: 0,
            batch: None,
        }
    }
}

/// A flow: two endpoints whose records make one row of the flows table.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    /// Where its name ends in [`Sim`]'s buffer of flow names (it starts where the previous
    /// flow's ends): see [`Sim::flow_name`].
    name_end: usize,
    pub src_ep: EpId,
    pub dst_ep: EpId,
}

/// Where flow `i`'s name lies in the buffer of flow names.
fn flow_name_range(flows: &[FlowInfo], i: usize) -> std::ops::Range<usize> {
    let start = if i == 0 { 0 } else { flows[i - 1].name_end };
    start..flows[i].name_end
}

/// What stands in for an endpoint freed after the run ([`Sim::take_flow_records`]); it
/// takes no memory.
struct Released;

impl Endpoint for Released {
    fn on_packet(&mut self, _: &mut Ctx, _: &Packet) {}
    fn on_timer(&mut self, _: &mut Ctx) {}
    fn deadline(&self) -> Time {
        NEVER
    }
    fn record(&self, _: Time, _: &mut FlowRecord) {}
}

/// The simulation: topology, components, event list.
pub struct Sim {
    pub events: EventQueue,
    pub pool: PacketPool,
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    pub pipes: Vec<Pipe>,
    pub endpoints: Vec<Box<dyn Endpoint>>,
    ep_node: Vec<NodeId>,
    ep_timer: Vec<TimerSlot>,
    pub flows: Vec<FlowInfo>,
    /// Every flow's name, one after the other. The names live as long as the simulation and
    /// the connections are freed before it (their records are taken one flow at a time):
    /// a name allocated beside each flow's connections would keep the allocator from
    /// handing their pages back.
    flow_names: String,
    pub ts: TimeSeries,
    pub seed: u64,
    sample_interval: Time,
    sample_flows: bool,
    started: bool,
    out: Vec<Packet>,
    dropped_scratch: Vec<(PktId, DropReason)>,
    views_scratch: Vec<PortView>,
    /// Packets that reached an external host, in delivery order, until the driver takes them.
    egress: Vec<(NodeId, PktId)>,
    /// Packets handed to endpoints or external hosts / dropped anywhere.
    pub delivered: u64,
    pub dropped: u64,
    ip_id_mode: IpIdMode,
    sample_kinds: SampleKinds,
    /// Sampled ports in index order, with their time-series entity once interned
    /// (`u32::MAX` before the first sample), so sampling touches only these ports.
    sampled_ports: Vec<(PortId, u32)>,
    /// Time-series entity of each flow once interned (`u32::MAX` before).
    flow_entity: Vec<u32>,
    /// Kind names endpoints report, by address of the static string, with their id.
    flow_kinds: Vec<(&'static str, u16)>,
    sample_buf: Samples,
}

#[derive(Default)]
struct SampleKinds {
    queue_pkts: u16,
    queue_bytes: u16,
    queue_avg: u16,
    marker: u16,
}

impl Sim {
    pub fn new(seed: u64) -> Self {
        let mut ts = TimeSeries::default();
        let sample_kinds = SampleKinds {
            queue_pkts: ts.kind_id("queue_pkts"),
            queue_bytes: ts.kind_id("queue_bytes"),
            queue_avg: ts.kind_id("queue_avg_pkts"),
            marker: ts.kind_id("marker_gauge"),
        };
        Sim {
            events: EventQueue::new(),
            pool: PacketPool::new(),
            nodes: Vec::new(),
            ports: Vec::new(),
            pipes: Vec::new(),
            endpoints: Vec::new(),
            ep_node: Vec::new(),
            ep_timer: Vec::new(),
            flows: Vec::new(),
            flow_names: String::new(),
            ts,
            seed,
            sample_interval: 0,
            sample_flows: true,
            started: false,
            out: Vec::with_capacity(64),
            dropped_scratch: Vec::new(),
            views_scratch: Vec::new(),
            egress: Vec::new(),
            delivered: 0,
            dropped: 0,
            ip_id_mode: IpIdMode::Sequential,
            sample_kinds,
            sampled_ports: Vec::new(),
            flow_entity: Vec::new(),
            flow_kinds: Vec::new(),
            sample_buf: Vec::new(),
        }
    }

    #[inline]
    pub fn now(&self) -> Time {
        self.events.now()
    }

    // ---------------------------------------------------------------- building

    /// IP-ID numbering for hosts added after this call.
    pub fn set_ip_id_mode(&mut self, m: IpIdMode) {
        self.ip_id_mode = m;
    }

    fn add_node(&mut self, name: &str, is_host: bool) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node {
            name: name.to_string(),
            addr: node_addr(id),
            is_host,
            external: false,
            first_port: PortId::MAX,
            ports: Vec::new(),
            routes: Vec::new(),
            ipid: IpIdGen::new(
                self.ip_id_mode,
                rng::stream(self.seed, rng::kind::HOST, id as u64),
            ),
            element: None,
            held: BinaryHeap::new(),
            held_seq: 0,
            held_timer: TimerSlot::default(),
        });
        id
    }

    pub fn add_host(&mut self, name: &str) -> NodeId {
        self.add_node(name, true)
    }

    pub fn add_router(&mut self, name: &str) -> NodeId {
        self.add_node(name, false)
    }

    /// Makes a host external (see [`Node::external`]); it must have no endpoints.
    pub fn set_external(&mut self, node: NodeId) {
        debug_assert!(self.nodes[node as usize].is_host);
        self.nodes[node as usize].external = true;
    }

    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as NodeId)
    }

    pub fn port_by_name(&self, name: &str) -> Option<PortId> {
        self.ports
            .iter()
            .position(|p| p.name == name)
            .map(|i| i as PortId)
    }

    /// Adds one direction of a link: an egress port on `from` feeding a pipe to `to`.
    pub fn add_port(
        &mut self,
        from: NodeId,
        to: NodeId,
        spec: &LinkSpec,
        mut qdisc: Box<dyn Qdisc>,
    ) -> PortId {
        let id = self.ports.len() as PortId;
        let link = self.pipes.len() as u32;
        self.pipes.push(Pipe::new(spec.delay, to));
        let mut rate = spec.rate.clone();
        qdisc.set_rate(rate.rate_at(0));
        let name = format!(
            "{}->{}",
            self.nodes[from as usize].name, self.nodes[to as usize].name
        );
        let need = BufferNeed::of(qdisc.as_ref());
        self.ports.push(Port {
            name,
            node: from,
            link,
            evicts: qdisc.evicts(),
            idle_noop: qdisc.idle_dequeue_is_noop(),
            queued: qdisc.len(),
            qdisc: HeldQdisc::new(qdisc),
            marker: None,
            rate,
            framing: spec.framing,
            busy: None,
            in_pipe: false,
            tx_end: 0,
            tx_seq: 0,
            tx_scheduled: false,
            batch: spec.batch.map(Box::new),
            batch_rest: Vec::with_capacity(spec.batch.map_or(0, |b| b.max_pkts as usize)),
            busy_since: 0,
            marker_timer: TimerSlot::default(),
            counters: PortCounters::default(),
            sojourn: None,
            pcap: None,
            records_departures: false,
            backlog_mark: 0,
            sampled: false,
            need,
        });
        let node = &mut self.nodes[from as usize];
        if node.ports.is_empty() {
            node.first_port = id;
        }
        node.ports.push(id);
        id
    }

    /// A full-duplex link: two ports with their own queue disciplines. Returns (a→b, b→a).
    pub fn connect(
        &mut self,
        a: NodeId,
        b: NodeId,
        spec: &LinkSpec,
        q_ab: Box<dyn Qdisc>,
        q_ba: Box<dyn Qdisc>,
    ) -> (PortId, PortId) {
        (
            self.add_port(a, b, spec, q_ab),
            self.add_port(b, a, spec, q_ba),
        )
    }

    pub fn set_marker(&mut self, port: PortId, m: Box<dyn Marker>) {
        self.ports[port as usize].marker = Some(m);
    }

    pub fn set_element(&mut self, node: NodeId, e: Box<dyn NodeElement>) {
        self.nodes[node as usize].element = Some(e);
    }

    /// Records every packet the port transmits into a pcap file (raw IPv4).
    pub fn enable_pcap(&mut self, port: PortId, path: &std::path::Path) -> std::io::Result<()> {
        let port = &mut self.ports[port as usize];
        port.pcap = Some(crate::packet::pcap::PcapWriter::create(path)?);
        port.records_departures = true;
        Ok(())
    }

    /// Sample this port's queue (and its marker's gauge) in the time series.
    pub fn sample_port(&mut self, port: PortId) {
        let p = &mut self.ports[port as usize];
        if !p.sampled {
            p.sampled = true;
            let at = self.sampled_ports.partition_point(|&(q, _)| q < port);
            self.sampled_ports.insert(at, (port, u32::MAX));
        }
    }

    /// Keep a histogram of queueing delays at this port.
    pub fn track_sojourn(&mut self, port: PortId) {
        let port = &mut self.ports[port as usize];
        port.sojourn = Some(Histogram::default());
        port.records_departures = true;
    }

    /// Stop sampling per-flow values (ports are still sampled).
    pub fn disable_flow_sampling(&mut self) {
        self.sample_flows = false;
    }

    /// Time-series sampling period (0: off).
    pub fn set_sample_interval(&mut self, every: Time) {
        self.sample_interval = every;
    }

    /// Id the next [`Sim::add_endpoint`] will return (to wire two endpoints to each other).
    pub fn next_endpoint_id(&self) -> EpId {
        self.endpoints.len() as EpId
    }

    pub fn add_endpoint(&mut self, node: NodeId, ep: Box<dyn Endpoint>) -> EpId {
        let id = self.endpoints.len() as EpId;
        self.endpoints.push(ep);
        self.ep_node.push(node);
        self.ep_timer.push(TimerSlot::default());
        if self.started {
            self.arm_endpoint(id);
        }
        id
    }

    pub fn add_flow(&mut self, name: &str, src_ep: EpId, dst_ep: EpId) -> u32 {
        self.flow_names.push_str(name);
        self.flows.push(FlowInfo {
            name_end: self.flow_names.len(),
            src_ep,
            dst_ep,
        });
        (self.flows.len() - 1) as u32
    }

    /// The name of flow `i`.
    pub fn flow_name(&self, i: usize) -> &str {
        &self.flow_names[flow_name_range(&self.flows, i)]
    }

    pub fn endpoint_node(&self, ep: EpId) -> NodeId {
        self.ep_node[ep as usize]
    }

    /// Is there a path from `a` to host `b`?
    pub fn has_route(&self, a: NodeId, b: NodeId) -> bool {
        self.path_ports(a, b).is_some()
    }

    /// The egress ports a packet from `a` to host `b` crosses, in order; None without a
    /// route.
    pub fn path_ports(&self, a: NodeId, b: NodeId) -> Option<Vec<PortId>> {
        let mut out = Vec::new();
        let mut cur = a;
        for _ in 0..=self.nodes.len() {
            if cur == b {
                return Some(out);
            }
            let p = self.route(cur, b)?;
            out.push(p);
            cur = self.pipes[self.ports[p as usize].link as usize].to;
        }
        None
    }

    #[inline]
    fn route(&self, node: NodeId, dst: NodeId) -> Option<PortId> {
        let n = &self.nodes[node as usize];
        if n.routes.is_empty() {
            debug_assert_eq!(
                n.ports.first().copied().unwrap_or(PortId::MAX),
                n.first_port
            );
            (n.first_port != PortId::MAX).then_some(n.first_port)
        } else {
            let p = *n.routes.get(dst as usize)?;
            (p != PortId::MAX).then_some(p)
        }
    }

    // ---------------------------------------------------------------- running

    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        if self.nodes.iter().all(|n| n.routes.is_empty()) {
            self.compute_routes();
        }
        for ep in 0..self.endpoints.len() {
            self.arm_endpoint(ep as EpId);
        }
        for p in 0..self.ports.len() {
            self.arm_marker(p as PortId);
            let now = self.now();
            if let Some(t) = self.ports[p].rate.next_change(now) {
                self.events.schedule(t, Ev::RateChange(p as u32));
            }
        }
        if self.sample_interval > 0 {
            self.events.schedule(0, Ev::Sample);
        }
    }

    /// Runs until simulated time `until` (inclusive). Can be called repeatedly with growing
    /// horizons (progress reporting, interruption).
    pub fn run_until(&mut self, until: Time) {
        self.start();
        while let Some((t, ev)) = self.events.pop_until(until) {
            match ev {
                Ev::TxDone(p) => self.tx_done(p),
                Ev::Deliver(l) => self.deliver(l),
                Ev::Endpoint(e) => {
                    if self.ep_timer[e as usize].fire(t) {
                        self.endpoint_timer(e)
                    }
                }
                Ev::PortTimer(p) => {
                    if self.ports[p as usize].marker_timer.fire(t) {
                        self.marker_timer(p)
                    }
                }
                Ev::Sample => self.sample(),
                Ev::RateChange(p) => self.rate_change(p),
                Ev::NodeRelease(n) => {
                    if self.nodes[n as usize].held_timer.fire(t) {
                        self.release_held(n)
                    }
                }
            }
        }
        self.events.advance_to(until);
        // What the run reads between slices (counters, the transmitter's state) is as if
        // every transmission due by now had ended in its event.
        for p in 0..self.ports.len() {
            self.settle(p as PortId);
        }
    }

    /// Ends the transmission on port `p` if it was put in the pipe when it started and its
    /// end's place in the event sequence has passed without an event (nothing was queued
    /// behind it): what its [`Ev::TxDone`] would have done there, done now. Everything that
    /// reads or changes a port's transmitter or discipline settles it first.
    #[inline(always)]
    fn settle(&mut self, p: PortId) {
        let port = &self.ports[p as usize];
        if port.in_pipe && !port.tx_scheduled && self.events.passed(port.tx_end, port.tx_seq) {
            self.settle_at(p, port.tx_end);
        }
    }

    #[inline(never)]
    fn settle_at(&mut self, p: PortId, end: Time) {
        self.finish_tx(p, end);
        debug_assert!(self.ports[p as usize].busy.is_none());
    }

    #[inline]
    fn arm_endpoint(&mut self, ep: EpId) {
        let want = self.endpoints[ep as usize].deadline();
        if want == NEVER {
            return;
        }
        let want = want.max(self.now());
        if let Some(t) = self.ep_timer[ep as usize].arm(want) {
            self.events.schedule(t, Ev::Endpoint(ep));
        }
    }

    /// Re-arms the port's marker timer; a port without a marker (most) returns at once.
    #[inline(always)]
    fn arm_marker(&mut self, p: PortId) {
        if self.ports[p as usize].marker.is_some() {
            self.arm_marker_timer(p);
        }
    }

    fn arm_marker_timer(&mut self, p: PortId) {
        let port = &mut self.ports[p as usize];
        if let Some(m) = &port.marker {
            let want = m.next_timer();
            if want != NEVER {
                if let Some(t) = port.marker_timer.arm(want.max(self.events.now())) {
                    self.events.schedule(t, Ev::PortTimer(p));
                }
            }
        }
    }

    /// A marker's timer moves only at the marker's own timer ([`Marker::next_timer`]), after
    /// which the port re-arms it; the packets between need not. Debug builds check that a
    /// packet's passage left nothing to arm.
    #[inline(always)]
    fn debug_check_marker_timer(&self, p: PortId) {
        if cfg!(debug_assertions) {
            let port = &self.ports[p as usize];
            if let Some(m) = &port.marker {
                let want = m.next_timer();
                assert!(
                    want == NEVER || port.marker_timer.armed_at() <= want.max(self.now()),
                    "port {}: the marker's timer moved to {want} ps on a packet (armed at {} ps)",
                    port.name,
                    port.marker_timer.armed_at()
                );
            }
        }
    }

    fn endpoint_timer(&mut self, ep: EpId) {
        let now = self.now();
        if self.endpoints[ep as usize].deadline() <= now {
            let node = self.ep_node[ep as usize] as usize;
            let mut out = std::mem::take(&mut self.out);
            {
                let n = &mut self.nodes[node];
                let mut ctx = Ctx::new(now, n.addr, &mut out, &mut n.ipid);
                self.endpoints[ep as usize].on_timer(&mut ctx);
            }
            self.flush(node as NodeId, &mut out);
            self.out = out;
        }
        self.arm_endpoint(ep);
    }

    /// A packet from an external host enters the network at the current time, as if the
    /// host's own stack had sent it: it is routed out of `node` like an endpoint's packet.
    /// The caller allocated it in [`Sim::pool`] (so it can keep data keyed by its slot).
    pub fn inject(&mut self, node: NodeId, id: PktId) {
        self.start();
        self.pool.get_mut(id).meta.sent_at = self.now();
        self.forward(node, id);
    }

    /// Moves the packets delivered to external hosts since the last call into `out`, in
    /// delivery order. They stay allocated until the caller frees them ([`PacketPool::free`]).
    pub fn take_egress(&mut self, out: &mut Vec<(NodeId, PktId)>) {
        out.append(&mut self.egress);
    }

    /// Sends the packets an endpoint produced.
    fn flush(&mut self, node: NodeId, out: &mut Vec<Packet>) {
        let now = self.now();
        // Each packet is copied once, from where the endpoint wrote it into its slot.
        for pkt in out.iter_mut() {
            pkt.meta.sent_at = now;
            let id = self.pool.alloc(*pkt);
            self.forward(node, id);
        }
        out.clear();
    }

    /// Routes a packet out of `node` (its source or a router on the way).
    #[inline]
    fn forward(&mut self, node: NodeId, id: PktId) {
        let dst = addr_node(self.pool.get(id).ip.dst);
        let port = dst.and_then(|d| self.route(node, d));
        let Some(port) = port else {
            self.drop_packet(id);
            return;
        };
        if self.nodes[node as usize].element.is_some() {
            self.forward_through_element(node, port, id);
        } else {
            self.port_arrive(port, id);
        }
    }

    /// [`Sim::forward`] at a node with an element, which sees the packet first.
    #[inline(never)]
    fn forward_through_element(&mut self, node: NodeId, port: PortId, id: PktId) {
        if self.nodes[node as usize].element.is_none() {
            return self.port_arrive(port, id);
        }
        // The element sees the node's ports as they are now.
        for i in 0..self.nodes[node as usize].ports.len() {
            self.settle(self.nodes[node as usize].ports[i]);
        }
        let n = &mut self.nodes[node as usize];
        let el = n.element.as_mut().expect("checked above");
        let now = self.events.now();
        let idx = n.ports.iter().position(|&p| p == port).unwrap();
        self.views_scratch.clear();
        for &p in &n.ports {
            let v = self.ports[p as usize].view(now);
            self.views_scratch.push(v);
        }
        let verdict = el.on_forward(now, idx, self.pool.get_mut(id), &self.views_scratch);
        for (&p, v) in n.ports.iter().zip(&self.views_scratch) {
            self.ports[p as usize].need.took_back(v);
        }
        match verdict {
            Forward::Pass => {}
            Forward::Drop => {
                self.drop_packet(id);
                return;
            }
            Forward::HoldUntil(t) if t > now => {
                n.held_seq += 1;
                n.held.push(Reverse((t, n.held_seq, id.0, port)));
                if let Some(at) = n.held_timer.arm(t) {
                    self.events.schedule(at, Ev::NodeRelease(node));
                }
                return;
            }
            Forward::HoldUntil(_) => {}
            Forward::Duplicate => {
                let copy = *self.pool.get(id);
                let dup = self.pool.alloc(copy);
                self.port_arrive(port, dup);
            }
        }
        self.port_arrive(port, id);
    }

    fn release_held(&mut self, node: NodeId) {
        let now = self.now();
        while let Some(&Reverse((t, _, id, port))) = self.nodes[node as usize].held.peek() {
            if t > now {
                break;
            }
            self.nodes[node as usize].held.pop();
            self.port_arrive(port, PktId(id));
        }
        let n = &mut self.nodes[node as usize];
        if let Some(&Reverse((t, ..))) = n.held.peek() {
            if let Some(at) = n.held_timer.arm(t) {
                self.events.schedule(at, Ev::NodeRelease(node));
            }
        }
    }

    #[inline]
    fn drop_packet(&mut self, id: PktId) {
        self.dropped += 1;
        self.pool.free(id);
    }

    /// What a port's transmitter touches besides the port, borrowed apart from the ports so
    /// that a packet's port is looked up once.
    fn tx_env(&mut self) -> (&mut Vec<Port>, TxEnv<'_>) {
        (
            &mut self.ports,
            TxEnv {
                pool: &mut self.pool,
                pipes: &mut self.pipes,
                dropped_scratch: &mut self.dropped_scratch,
                dropped: &mut self.dropped,
                events: &mut self.events,
            },
        )
    }

    /// A packet arrives at an egress port.
    fn port_arrive(&mut self, p: PortId, id: PktId) {
        self.settle(p);
        let now = self.now();
        let (ports, mut env) = self.tx_env();
        let port = &mut ports[p as usize];
        let pkt = env.pool.get_mut(id);
        port.counters.arrived_pkts += 1;
        // Marks written by the marker or the discipline on arrival are counted by comparing
        // with the codepoint the packet arrived with.
        let ecn_in = pkt.ip.ecn;
        port.with_marker(now, |m, v| m.on_arrival(v, pkt));
        pkt.meta.enqueued_at = now;
        port.integrate_backlog(now);
        port.note_arrival(pkt.wire_len());
        match port.qdisc.enqueue(now, id, pkt) {
            Verdict::Enqueued => {
                // A discipline that pushes packets out to take one in (FQ-CoDel) has already
                // let go of them: its length says how many it holds.
                port.queued = if port.evicts {
                    port.qdisc.len()
                } else {
                    port.queued + 1
                };
                port.counters.enq_pkts += 1;
                port.counters.enq_bytes += pkt.wire_len() as u64;
                if pkt.ip.ecn != ecn_in {
                    port.counters.marked[pkt.ip.ecn.bits() as usize] += 1;
                }
                pkt.meta.ecn_queued = pkt.ip.ecn;
                port.with_marker(now, |m, v| m.on_enqueued(v, pkt));
                if port.evicts {
                    free_evicted(port, &mut env);
                }
                let port = if port.busy.is_some() {
                    if port.in_pipe && !port.tx_scheduled {
                        // The transmission's end now has a packet to start: its event, in
                        // the place reserved for it when the transmission started.
                        env.events
                            .schedule_reserved(port.tx_end, port.tx_seq, Ev::TxDone(p));
                        port.tx_scheduled = true;
                    }
                    port
                } else if port.batch.is_none() {
                    // The backlog was integrated up to `now` above.
                    transmit_one(port, p, now, &mut env);
                    port
                } else {
                    self.transmit_batch(p, now);
                    &mut self.ports[p as usize]
                };
                // After a possible immediate start, so a packet that finds the link idle never
                // counts as queued.
                let q = port.backlog_pkts() as u32;
                port.counters.max_backlog = port.counters.max_backlog.max(q);
            }
            Verdict::Dropped(why) => {
                port.counters.drops[why.index()] += 1;
                port.counters.drop_bytes += pkt.wire_len() as u64;
                port.with_marker(now, |m, v| m.on_drop(v, pkt, why));
                self.drop_packet(id);
            }
        }
        self.debug_check_marker_timer(p);
    }

    /// Takes the next packet (or batch) from the discipline and puts it on the wire.
    fn start_tx(&mut self, p: PortId) {
        let now = self.now();
        let (ports, mut env) = self.tx_env();
        let port = &mut ports[p as usize];
        port.integrate_backlog(now);
        if port.batch.is_none() {
            transmit_one(port, p, now, &mut env);
        } else {
            self.transmit_batch(p, now);
        }
    }

    /// [`transmit_one`] on a batched port (the backlog integrated up to `now`).
    #[inline(never)]
    fn transmit_batch(&mut self, p: PortId, now: Time) {
        debug_assert!(self.ports[p as usize].busy.is_none());
        let Some((id, len)) = self.dequeue_one(p, now) else {
            return;
        };
        let port = &mut self.ports[p as usize];
        let (start, bytes) = match port.batch.as_deref().copied() {
            None => (now, len + port.framing),
            Some(b) => self.fill_batch(p, now, len, b),
        };
        let port = &mut self.ports[p as usize];
        let done = port.rate.finish_time(start, bytes);
        port.busy = Some(id);
        port.busy_since = now;
        port.counters.transmissions += 1;
        if done != NEVER {
            self.events.schedule(done, Ev::TxDone(p));
        }
    }

    /// Adds what is queued behind the batch's first packet (of `first_len` bytes), up to the
    /// budget; returns when the batch's bits start (after the overhead) and their bytes.
    #[inline(never)]
    fn fill_batch(&mut self, p: PortId, now: Time, first_len: u32, b: Batch) -> (Time, u32) {
        let port = &mut self.ports[p as usize];
        let framing = port.framing;
        let rate = port.rate.rate_at(now);
        let airtime = |bytes: u32| {
            if rate == 0 {
                0
            } else {
                crate::time::tx_time(bytes, rate)
            }
        };
        let full = |pkts: u32, bytes: u32| {
            pkts >= b.max_pkts
                || bytes as u64 >= b.max_bytes
                || (b.max_airtime > 0 && airtime(bytes) >= b.max_airtime)
        };
        let (mut pkts, mut bytes) = (1, first_len + framing);
        while !full(pkts, bytes) {
            let Some((next, l)) = self.dequeue_one(p, now) else {
                break;
            };
            self.ports[p as usize].batch_rest.push(next);
            pkts += 1;
            bytes += l + framing;
        }
        (now + b.overhead, bytes)
    }

    /// [`dequeue_from`] the port `p`.
    fn dequeue_one(&mut self, p: PortId, now: Time) -> Option<(PktId, u32)> {
        let (ports, mut env) = self.tx_env();
        dequeue_from(&mut ports[p as usize], now, &mut env)
    }

    fn tx_done(&mut self, p: PortId) {
        let now = self.now();
        self.finish_tx(p, now);
        self.debug_check_marker_timer(p);
    }

    /// The end, at `now`, of the transmission on port `p`: its packet (or batch) enters the
    /// pipe, unless it did when it started, and the next transmission starts if anything is
    /// queued.
    #[inline(always)]
    fn finish_tx(&mut self, p: PortId, now: Time) {
        let port = &mut self.ports[p as usize];
        let id = port.busy.take().expect("TxDone without a packet");
        port.counters.busy_time += now - port.busy_since;
        let link = port.link as usize;
        if port.in_pipe {
            port.in_pipe = false;
            port.tx_scheduled = false;
        } else {
            if let Some(at) = self.pipes[link].push(now, id) {
                self.events.schedule(at, Ev::Deliver(link as u32));
            }
            if !port.batch_rest.is_empty() {
                // Every packet of a batch arrives with the batch's end; the pipe's one pending
                // event is the head's.
                for &rest in &port.batch_rest {
                    self.pipes[link].push(now, rest);
                }
                port.batch_rest.clear();
            }
        }
        // With nothing queued a discipline whose empty dequeue changes nothing has nothing
        // to do: the backlog stays 0 (its integral gains nothing until the next change,
        // which integrates first).
        if !(port.idle_noop && port.qdisc.is_empty()) {
            if port.batch.is_none() {
                port.integrate_backlog(now);
                let (ports, mut env) = self.tx_env();
                transmit_one(&mut ports[p as usize], p, now, &mut env);
            } else {
                self.start_tx(p);
            }
        }
    }

    fn deliver(&mut self, l: u32) {
        let now = self.now();
        let pipe = &mut self.pipes[l as usize];
        let (at, id, next) = pipe.pop().expect("Deliver on an empty pipe");
        debug_assert_eq!(at, now);
        let to = pipe.to;
        if let Some((next, next_id)) = next {
            self.events.schedule(next, Ev::Deliver(l));
            self.pool.prefetch(next_id);
        }
        self.node_receive(to, id);
    }

    fn node_receive(&mut self, node: NodeId, id: PktId) {
        let pkt = self.pool.get_mut(id);
        if pkt.ip.dst == self.nodes[node as usize].addr {
            self.delivered += 1;
            if self.nodes[node as usize].external {
                self.egress.push((node, id));
                return;
            }
            let ep = pkt.meta.dst_ep;
            if (ep as usize) < self.endpoints.len() && self.ep_node[ep as usize] == node {
                let now = self.now();
                let mut out = std::mem::take(&mut self.out);
                {
                    let n = &mut self.nodes[node as usize];
                    let mut ctx = Ctx::new(now, n.addr, &mut out, &mut n.ipid);
                    // The endpoint reads the packet where it lies (no copy); its slot is
                    // freed before anything it sends is allocated, as if freed first.
                    self.endpoints[ep as usize].on_packet(&mut ctx, self.pool.get(id));
                }
                self.pool.free(id);
                self.flush(node, &mut out);
                self.out = out;
                self.arm_endpoint(ep);
            } else {
                self.pool.free(id);
            }
            return;
        }
        if pkt.ip.ttl <= 1 {
            self.drop_packet(id);
            return;
        }
        pkt.ip.ttl -= 1;
        self.forward(node, id);
    }

    fn marker_timer(&mut self, p: PortId) {
        self.settle(p);
        let now = self.now();
        let port = &mut self.ports[p as usize];
        let v = port.view(now);
        if let Some(m) = port.marker.as_mut() {
            if m.next_timer() <= now {
                m.on_timer(&v);
            }
        }
        port.need.took_back(&v);
        self.arm_marker(p);
    }

    fn rate_change(&mut self, p: PortId) {
        self.settle(p);
        let now = self.now();
        let port = &mut self.ports[p as usize];
        let r = port.rate.rate_at(now);
        port.qdisc.set_rate(r);
        if let Some(t) = port.rate.next_change(now) {
            self.events.schedule(t, Ev::RateChange(p));
        }
    }

    fn sample(&mut self) {
        for i in 0..self.sampled_ports.len() {
            self.settle(self.sampled_ports[i].0);
        }
        let now = self.now();
        let k = &self.sample_kinds;
        for (pi, ent) in self.sampled_ports.iter_mut() {
            let port = &self.ports[*pi as usize];
            if *ent == u32::MAX {
                *ent = self.ts.entity_id(&port.name);
            }
            let ent = *ent;
            self.ts
                .push(now, k.queue_pkts, ent, port.qdisc.len() as f64);
            self.ts
                .push(now, k.queue_bytes, ent, port.qdisc.bytes() as f64);
            if let Some(a) = port.qdisc.avg_queue() {
                self.ts.push(now, k.queue_avg, ent, a);
            }
            if let Some(g) = port.marker.as_ref().and_then(|m| m.gauge()) {
                self.ts.push(now, k.marker, ent, g);
            }
        }
        let n_flows = if self.sample_flows {
            self.flows.len()
        } else {
            0
        };
        if self.flow_entity.len() < n_flows {
            self.flow_entity.resize(n_flows, u32::MAX);
        }
        let mut buf = std::mem::take(&mut self.sample_buf);
        for f in 0..n_flows {
            let (src, dst) = (self.flows[f].src_ep, self.flows[f].dst_ep);
            buf.clear();
            self.endpoints[src as usize].sample(now, &mut buf);
            self.endpoints[dst as usize].sample(now, &mut buf);
            if buf.is_empty() {
                continue;
            }
            if self.flow_entity[f] == u32::MAX {
                let name = &self.flow_names[flow_name_range(&self.flows, f)];
                self.flow_entity[f] = self.ts.entity_id(name);
            }
            let ent = self.flow_entity[f];
            for &(kind, v) in &buf {
                let kid = match self.flow_kinds.iter().find(|(n, _)| std::ptr::eq(*n, kind)) {
                    Some(&(_, id)) => id,
                    None => {
                        let id = self.ts.kind_id(kind);
                        self.flow_kinds.push((kind, id));
                        id
                    }
                };
                self.ts.push(now, kid, ent, v);
            }
        }
        self.sample_buf = buf;
        self.events.schedule(now + self.sample_interval, Ev::Sample);
    }

    // ---------------------------------------------------------------- results

    /// Checks packet conservation: every packet created was delivered, dropped, or is still
    /// somewhere in the network (queue, transmitter, pipe, held at a node).
    pub fn conservation(&self) -> Result<(), String> {
        let mut in_net: u64 = 0;
        for p in &self.ports {
            // A packet whose transmission put it in the pipe at its start is counted there.
            in_net += p.qdisc.len() as u64
                + (p.busy.is_some() && !p.in_pipe) as u64
                + p.batch_rest.len() as u64;
        }
        for l in &self.pipes {
            in_net += l.len() as u64;
        }
        for n in &self.nodes {
            in_net += n.held.len() as u64;
        }
        // Delivered to an external host but not yet taken and freed by the driver.
        let awaiting = self.egress.len() as u64;
        let created = self.pool.allocated;
        if created != self.delivered + self.dropped + in_net
            || self.pool.live() != in_net + awaiting
        {
            return Err(format!(
                "packet conservation violated: created {created}, delivered {}, dropped {}, in network {in_net}, live in pool {}",
                self.delivered, self.dropped, self.pool.live()
            ));
        }
        let port_drops: u64 = self.ports.iter().map(|p| p.counters.dropped()).sum();
        if port_drops > self.dropped {
            return Err(format!(
                "port drop counters ({port_drops}) exceed total drops ({})",
                self.dropped
            ));
        }
        Ok(())
    }

    /// One row per port.
    pub fn ports_table(&self) -> Table {
        let now = self.now().max(1);
        let mut t = Table::new("ports");
        let ps = &self.ports;
        let i = |f: &dyn Fn(&Port) -> u64| {
            ColumnData::I64(ps.iter().map(|p| Some(f(p) as i64)).collect())
        };
        let fl = |f: &dyn Fn(&Port) -> Option<f64>| ColumnData::F64(ps.iter().map(f).collect());
        t.push(
            "port",
            ColumnData::Str(ps.iter().map(|p| p.name.clone()).collect()),
        );
        t.push(
            "node",
            ColumnData::Str(
                ps.iter()
                    .map(|p| self.nodes[p.node as usize].name.clone())
                    .collect(),
            ),
        );
        t.push("rate_bps", i(&|p| p.rate.steps()[0].1));
        // A time-varying link's rate_bps is its first; this is its mean over the run.
        t.push(
            "mean_rate_bps",
            fl(&|p| (now > 0).then(|| p.rate.capacity_bits(now) / to_secs(now))),
        );
        t.push(
            "delay_s",
            fl(&|p| Some(to_secs(self.pipes[p.link as usize].delay))),
        );
        t.push("arrived_pkts", i(&|p| p.counters.arrived_pkts));
        t.push("enqueued_pkts", i(&|p| p.counters.enq_pkts));
        t.push("enqueued_bytes", i(&|p| p.counters.enq_bytes));
        t.push("dequeued_pkts", i(&|p| p.counters.deq_pkts));
        t.push("dequeued_bytes", i(&|p| p.counters.deq_bytes));
        t.push("dropped_pkts", i(&|p| p.counters.dropped()));
        for r in DropReason::ALL {
            let name = format!("dropped_{}", r.name());
            t.push(&name, i(&|p| p.counters.drop(r)));
        }
        t.push("dropped_bytes", i(&|p| p.counters.drop_bytes));
        for (cp, name) in [(1, "marked_ect1"), (2, "marked_ect0"), (3, "marked_ce")] {
            t.push(name, i(&|p| p.counters.marked[cp]));
        }
        t.push("marked_pkts", i(&|p| p.counters.marked.iter().sum()));
        t.push("transmissions", i(&|p| p.counters.transmissions));
        t.push(
            "utilization",
            fl(&|p| Some(p.counters.busy_time as f64 / now as f64)),
        );
        t.push(
            "mean_queue_pkts",
            fl(&|p| {
                let extra = p.qdisc.len() as u128 * (now - p.backlog_mark.min(now)) as u128;
                Some((p.counters.backlog_integral + extra) as f64 / now as f64)
            }),
        );
        t.push("max_queue_pkts", i(&|p| p.counters.max_backlog as u64));
        t.push(
            "mean_sojourn_s",
            fl(&|p| {
                (p.counters.deq_pkts > 0).then(|| {
                    to_secs((p.counters.sojourn_sum / p.counters.deq_pkts as u128) as Time)
                })
            }),
        );
        t.push(
            "max_sojourn_s",
            fl(&|p| Some(to_secs(p.counters.sojourn_max))),
        );
        t.push(
            "p95_sojourn_s",
            fl(&|p| {
                p.sojourn
                    .as_ref()
                    .and_then(|h| h.quantile(0.95))
                    .map(|ns| ns as f64 * 1e-9)
            }),
        );
        t
    }

    /// One row per flow.
    pub fn flow_records(&self) -> Vec<FlowRecord> {
        (0..self.flows.len()).map(|i| self.flow_record(i)).collect()
    }

    /// The row of flow `i`.
    pub fn flow_record(&self, i: usize) -> FlowRecord {
        let f = &self.flows[i];
        let now = self.now();
        let mut r = FlowRecord {
            id: i as u32,
            name: self.flow_name(i).to_string(),
            src: self.nodes[self.ep_node[f.src_ep as usize] as usize]
                .name
                .clone(),
            dst: self.nodes[self.ep_node[f.dst_ep as usize] as usize]
                .name
                .clone(),
            ..Default::default()
        };
        self.endpoints[f.src_ep as usize].record(now, &mut r);
        self.endpoints[f.dst_ep as usize].record(now, &mut r);
        r
    }

    /// One row per flow, as [`Sim::flow_records`], freeing each endpoint once the last flow
    /// it belongs to is recorded: the rows take the connections' place (their pages go back
    /// to the system after every sixty-fourth of the flows), so the end of a run holds no more than its
    /// simulation did. Nothing may run or read an endpoint after this.
    pub fn take_flow_records(&mut self) -> Vec<FlowRecord> {
        // Often enough that the rows never outgrow what was freed, rarely enough that
        // walking the allocator's heap stays cheap with a million flows.
        let every = (self.flows.len() / 64).max(256);
        let mut last_use = vec![usize::MAX; self.endpoints.len()];
        for (i, f) in self.flows.iter().enumerate() {
            last_use[f.src_ep as usize] = i;
            last_use[f.dst_ep as usize] = i;
        }
        let mut rows = Vec::with_capacity(self.flows.len());
        for i in 0..self.flows.len() {
            rows.push(self.flow_record(i));
            for ep in [self.flows[i].src_ep, self.flows[i].dst_ep] {
                if last_use[ep as usize] == i {
                    self.endpoints[ep as usize] = Box::new(Released);
                }
            }
            if (i + 1) % every == 0 || i + 1 == self.flows.len() {
                crate::sysmem::return_free_memory();
            }
        }
        rows
    }

    /// Flushes pcap files; returns the first write error if any occurred.
    pub fn finish_pcaps(&mut self) -> std::io::Result<()> {
        for p in &mut self.ports {
            if let Some(w) = p.pcap.as_mut() {
                w.finish()?;
            }
        }
        Ok(())
    }
}

/// What a port's transmitter touches besides the port (see [`Sim::tx_env`]).
struct TxEnv<'a> {
    pool: &'a mut PacketPool,
    pipes: &'a mut Vec<Pipe>,
    dropped_scratch: &'a mut Vec<(PktId, DropReason)>,
    dropped: &'a mut u64,
    events: &'a mut EventQueue,
}

/// Puts the discipline's next packet on the wire of an unbatched port whose backlog is
/// integrated up to `now`.
#[inline(always)]
fn transmit_one(port: &mut Port, p: PortId, now: Time, env: &mut TxEnv) {
    debug_assert!(port.busy.is_none() && port.batch.is_none());
    let Some((id, len)) = dequeue_from(port, now, env) else {
        return;
    };
    let done = port.rate.finish_time(now, len + port.framing);
    port.busy = Some(id);
    port.busy_since = now;
    port.counters.transmissions += 1;
    if done == NEVER {
        return;
    }
    // With nothing queued behind it, and the link still carrying a packet that arrives after
    // this one's end, the packet enters the pipe now, as its end would put it: it follows
    // that packet, whose delivery schedules its own (the pipe is not empty at its end), so
    // nothing about the delivery changes. Its end is then an event only if a packet arrives
    // to wait behind it (see `Sim::port_arrive`), in the place in the event sequence its
    // event would have had, and is settled without one otherwise (`Sim::settle`).
    let pipe = &mut env.pipes[port.link as usize];
    if port.queued == 0 && pipe.last_arrival().is_some_and(|a| a > done) {
        let direct = pipe.push(done, id);
        debug_assert!(direct.is_none());
        port.in_pipe = true;
        port.tx_end = done;
        port.tx_seq = env.events.reserve();
        port.tx_scheduled = false;
    } else {
        env.events.schedule(done, Ev::TxDone(p));
    }
}

/// Releases one packet from the port's discipline for transmission, with the per-packet
/// accounting (drops at dequeue, dequeue marks, sojourn, capture). Returns it and its length.
#[inline(always)]
fn dequeue_from(port: &mut Port, now: Time, env: &mut TxEnv) -> Option<(PktId, u32)> {
    let next = port.qdisc.dequeue(now, env.pool, env.dropped_scratch);
    if !env.dropped_scratch.is_empty() {
        free_dequeue_drops(port, env);
    }
    let id = next?;
    port.queued -= 1;
    let pkt = env.pool.get_mut(id);
    port.with_marker(now, |m, v| m.on_dequeue(v, pkt));
    if pkt.ip.ecn != pkt.meta.ecn_queued {
        port.counters.marked[pkt.ip.ecn.bits() as usize] += 1;
    }
    pkt.meta.marker_owned = false;
    let len = pkt.wire_len();
    let wait = now - pkt.meta.enqueued_at;
    port.counters.deq_pkts += 1;
    port.counters.deq_bytes += len as u64;
    port.counters.sojourn_sum += wait as u128;
    port.counters.sojourn_max = port.counters.sojourn_max.max(wait);
    debug_assert_eq!(
        port.records_departures,
        port.sojourn.is_some() || port.pcap.is_some()
    );
    if port.records_departures {
        record_departure(port, pkt, now, wait);
    }
    Some((id, len))
}

/// Counts and frees what the discipline dropped while dequeuing.
#[inline(never)]
fn free_dequeue_drops(port: &mut Port, env: &mut TxEnv) {
    for (d, why) in env.dropped_scratch.drain(..) {
        port.queued -= 1;
        port.counters.drops[why.index()] += 1;
        port.counters.drop_bytes += env.pool.get(d).wire_len() as u64;
        *env.dropped += 1;
        env.pool.free(d);
    }
}

/// Counts and frees what the port's discipline pushed out to take a packet in.
#[inline(never)]
fn free_evicted(port: &mut Port, env: &mut TxEnv) {
    while let Some((d, why)) = port.qdisc.evicted() {
        port.counters.drops[why.index()] += 1;
        port.counters.drop_bytes += env.pool.get(d).wire_len() as u64;
        *env.dropped += 1;
        env.pool.free(d);
    }
}

/// The sojourn histogram and the capture, on the ports that keep them.
#[inline(never)]
fn record_departure(port: &mut Port, pkt: &Packet, now: Time, wait: Time) {
    if let Some(h) = port.sojourn.as_mut() {
        h.record(wait / 1000);
    }
    if let Some(w) = port.pcap.as_mut() {
        // A pcap write error must not stop a run; it is reported at the end.
        w.write(now, pkt);
    }
}
