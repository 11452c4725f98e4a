//! The scenario schema. These serde types are the single source of truth for TOML files, JSON
//! from Python, and the TOML written back next to results.
//!
//! Component parameters (queues, markers, controllers, TCP options) are kept as generic tables
//! here and checked by the component's own config type when the scenario is built, so a
//! scheme adds its parameters without touching this file.

use crate::net::IpIdMode;
use crate::units::{Duration, Rate, Size};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub type Params = Map<String, Value>;

fn default_seed() -> u64 {
    1
}
fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Simulated time to run.
    pub duration: Duration,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub topology: Topology,
    /// Per-port settings that override the topology's (queue, marker, capture, sampling).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadSpec>,
    #[serde(default)]
    pub measure: Measure,
    #[serde(default)]
    pub hosts: HostSpec,
    /// Code on nodes that sees every packet they forward (an access point's APCC, Zhuge,
    /// CLEAN): `[{node = "ap", kind = "apcc", port = "ap->wlan"}]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elements: Vec<ElementSpec>,
    /// TCP options applied to every TCP flow (a flow's own `tcp` table overrides them).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub tcp: Params,
    /// Bounds on what the run may use, beyond which it is refused before it starts.
    #[serde(default, skip_serializing_if = "super::limits::Limits::is_default")]
    pub limits: super::limits::Limits,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// IP-ID numbering of every host: "sequential" or "random".
    #[serde(default)]
    pub ip_id: IpIdMode,
}

/// Rate and propagation delay of a link: a constant `rate`, optionally changed by a
/// piecewise-constant `schedule`, or a mahimahi `trace`; optionally batched service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    pub delay: Duration,
    /// Link-layer bytes added to each packet's transmission time (2 for PPP as ns-3's
    /// point-to-point links); default 0.
    #[serde(default, skip_serializing_if = "is_default")]
    pub framing: u32,
    /// Rate changes: `[{at = "4s", rate = "180Mbps"}, ...]`, times increasing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<RateStep>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchSpec>,
}

/// Capacity from a mahimahi trace file (one line per MTU-sized delivery opportunity, in
/// milliseconds, repeating), counted per `bin` into a rate schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Path of the trace; a relative path is taken from the scenario file's folder.
    pub file: String,
    #[serde(default = "default_trace_bin")]
    pub bin: Duration,
    /// Bytes per delivery opportunity.
    #[serde(default = "default_trace_mtu")]
    pub mtu: u32,
}

fn default_trace_bin() -> Duration {
    Duration(crate::time::MS)
}
fn default_trace_mtu() -> u32 {
    1500
}

/// Batched service, as 802.11ax aggregates frames per transmission opportunity: each
/// transmission takes what is queued up to a budget and costs `overhead` on top of its bits.
/// Defaults: 64 packets, no byte budget, 5.484 ms of airtime (802.11ax's longest PPDU),
/// 100 us of overhead (contention, preamble, block acknowledgement).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchSpec {
    #[serde(default = "default_batch_pkts")]
    pub max_pkts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<Size>,
    #[serde(default = "default_batch_airtime")]
    pub max_airtime: Duration,
    #[serde(default = "default_batch_overhead")]
    pub overhead: Duration,
}

fn default_batch_pkts() -> u32 {
    64
}
fn default_batch_airtime() -> Duration {
    Duration(5_484 * crate::time::US)
}
fn default_batch_overhead() -> Duration {
    Duration(100 * crate::time::US)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    pub at: Duration,
    pub rate: Rate,
}

/// A node element: the node it sits on, its kind and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElementSpec {
    pub node: String,
    #[serde(flatten)]
    pub component: Component,
}

/// A component chosen by `kind` with its parameters alongside: `{kind = "red", min_th = 30}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Component {
    pub kind: String,
    #[serde(flatten)]
    pub params: Params,
}

impl Component {
    pub fn new(kind: &str) -> Self {
        Component {
            kind: kind.to_string(),
            params: Map::new(),
        }
    }
    pub fn droptail(limit: u64) -> Self {
        let mut c = Component::new("droptail");
        c.params.insert("limit".into(), Value::from(limit));
        c
    }
}

fn default_access_queue() -> Component {
    Component::droptail(1000)
}
fn default_bottleneck_queue() -> Component {
    Component::droptail(100)
}

/// The network's shape, chosen by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Topology {
    Dumbbell(DumbbellSpec),
    Chain(ChainSpec),
    Campus(CampusSpec),
    Explicit(ExplicitSpec),
}

/// The campus tree of an AP study: servers s0.. —100 Gb/s, `wan_delay`— core —40 Gb/s—
/// agg —10 Gb/s— access —1 Gb/s— ap —`wireless`— wlan — clients c0.. (`lan_delay` on each
/// campus link). `wlan` is the shared medium: the AP's one wireless queue is the port
/// "ap->wlan"; the medium reaches every client at 100 Gb/s with no delay. Every queue holds
/// `buffer` bytes (DropTail) unless `ap_queue` says otherwise for the AP's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampusSpec {
    #[serde(default = "default_servers")]
    pub servers: usize,
    pub clients: usize,
    /// The wireless hop, both ways (its rate, schedule or trace, and batched service).
    pub wireless: LinkParams,
    #[serde(default = "default_wan_delay")]
    pub wan_delay: Duration,
    #[serde(default = "default_lan_delay")]
    pub lan_delay: Duration,
    #[serde(default = "default_campus_buffer")]
    pub buffer: Size,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ap_queue: Option<Component>,
}

fn default_servers() -> usize {
    1
}
fn default_wan_delay() -> Duration {
    Duration(10 * crate::time::MS)
}
fn default_lan_delay() -> Duration {
    Duration(50 * crate::time::US)
}
fn default_campus_buffer() -> Size {
    Size(12_000_000)
}

/// `left` hosts l0.. — access — router rl — bottleneck — router rr — access — `right`
/// hosts r0...
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellSpec {
    pub left: usize,
    pub right: usize,
    pub access: LinkParams,
    pub bottleneck: LinkParams,
    #[serde(default = "default_bottleneck_queue")]
    pub bottleneck_queue: Component,
    /// Queue of the reverse bottleneck direction (rr→rl); default: same as forward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_queue: Option<Component>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_marker: Option<Component>,
    #[serde(default = "default_access_queue")]
    pub access_queue: Component,
}

/// Routers c0..c{hops} in a line; `end_hosts` hosts l0.. on c0 and r0.. on c{hops};
/// `cross_hosts` hosts x{i}_{j} on every router c{i} (parking-lot cross traffic).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainSpec {
    pub hops: usize,
    pub link: LinkParams,
    pub access: LinkParams,
    #[serde(default)]
    pub end_hosts: usize,
    #[serde(default)]
    pub cross_hosts: usize,
    #[serde(default = "default_bottleneck_queue")]
    pub queue: Component,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<Component>,
    #[serde(default = "default_access_queue")]
    pub access_queue: Component,
}

/// Nodes and links listed one by one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitSpec {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpecToml>,
}

/// Marks an error message that carries a key path below the field being deserialised;
/// `parse_toml`/`parse_json` move it into the error's path.
pub(crate) const SUBPATH: &str = "\u{1}";

/// Deserialises an internally tagged value by hand, so that errors inside the chosen variant
/// keep their key path (serde's own tagged enums lose it).
fn tagged<'de, D, T>(
    d: D,
    tag: &str,
    variants: &[&str],
    pick: impl FnOnce(
        &str,
        serde_json::Value,
    ) -> Option<Result<T, serde_path_to_error::Error<serde_json::Error>>>,
) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::de::Error;
    let mut m = Map::<String, Value>::deserialize(d)?;
    let kind = match m.remove(tag) {
        Some(Value::String(k)) => k,
        Some(_) => {
            return Err(D::Error::custom(format!(
                "{SUBPATH}{tag}{SUBPATH}must be a string"
            )))
        }
        None => {
            return Err(D::Error::custom(format!(
                "missing field `{tag}`; expected one of {}",
                variants.join(", ")
            )))
        }
    };
    match pick(&kind, Value::Object(m)) {
        None => Err(D::Error::custom(format!(
            "{SUBPATH}{tag}{SUBPATH}unknown {tag} \"{kind}\"; expected one of {}",
            variants.join(", ")
        ))),
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => {
            let p = e.path().to_string();
            let inner = e.into_inner().to_string();
            if p == "." {
                Err(D::Error::custom(inner))
            } else {
                Err(D::Error::custom(format!("{SUBPATH}{p}{SUBPATH}{inner}")))
            }
        }
    }
}

fn sub<T: serde::de::DeserializeOwned>(
    v: Value,
) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(v)
}

impl<'de> Deserialize<'de> for Topology {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged(
            d,
            "kind",
            &["dumbbell", "chain", "campus", "explicit"],
            |k, v| match k {
                "dumbbell" => Some(sub(v).map(Topology::Dumbbell)),
                "chain" => Some(sub(v).map(Topology::Chain)),
                "campus" => Some(sub(v).map(Topology::Campus)),
                "explicit" => Some(sub(v).map(Topology::Explicit)),
                _ => None,
            },
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpecToml {
    pub a: String,
    pub b: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    pub delay: Duration,
    #[serde(default, skip_serializing_if = "is_default")]
    pub framing: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<RateStep>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchSpec>,
    /// Queue of the a→b port (default: DropTail 1000 packets).
    #[serde(default = "default_access_queue")]
    pub queue: Component,
    /// Queue of the b→a port (default: same as `queue`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ba: Option<Component>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    /// Port name "from->to", e.g. "rl->rr".
    pub port: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Component>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<Component>,
    /// Write every transmitted packet to pcap/<port>.pcap.
    #[serde(default, skip_serializing_if = "is_default")]
    pub pcap: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    #[default]
    Tcp,
    Udp,
}

/// One flow (or `count` copies: "{k}" in `src`/`dst`/`name` becomes the copy's index, and
/// copy k starts at `start + k·stagger`, plus a draw from `[0, start_jitter)` of its own
/// when that is given). TCP fields and UDP fields are exclusive.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub kind: FlowKind,
    pub src: String,
    pub dst: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Gap between the starts of the `count` copies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stagger: Option<Duration>,
    /// Each copy starts later by a uniform draw from `[0, start_jitter)`, from the run's seed
    /// (so seeds differ where nothing else in a scenario is random).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_jitter: Option<Duration>,
    // ---- TCP
    /// Bytes to transfer (TCP); absent = unlimited (bulk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    /// Congestion controller (TCP): newreno, cubic, dctcp, bbr, or a scheme's controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    /// Feedback codec (TCP): none, ecn, dctcp, or a scheme's; default: the controller's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc_params: Option<Params>,
    /// Parameters of the feedback codec (schemes' codecs have some).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_params: Option<Params>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<Params>,
    /// The receiver opens the connection (client download: SYN from dst, data from src).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_initiated: Option<bool>,
    // ---- UDP
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// UDP packet size in bytes, IP headers included (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Size>,
    /// "cbr" (default) or "poisson".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<crate::app::UdpPattern>,
    /// UDP: stop sending. TCP without a size: the application stops writing (the segment
    /// being written is the last and carries the FIN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// On/off UDP: send for `on`, pause for `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<Duration>,
    /// UDP packets' ECN codepoint: "not-ect" (default), "ect0", "ect1".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_ecn: Option<String>,
}

/// Flows generated by a random process: Poisson arrivals of TCP flows with sizes from a
/// distribution, between random (src, dst) pairs from the lists.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub src: Vec<String>,
    pub dst: Vec<String>,
    /// Mean arrival rate in flows per second ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival_rate: Option<f64>,
    /// ... or an offered load as a fraction of `load_of` (bits/s of mean size × rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_of: Option<Rate>,
    pub sizes: SizeDist,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// Upper bound on the number of flows generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_flows: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc_params: Option<Params>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_params: Option<Params>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<Params>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_initiated: Option<bool>,
}

/// A flow-size distribution, chosen by `dist`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "dist", rename_all = "lowercase")]
pub enum SizeDist {
    Fixed(FixedSize),
    /// Pareto with the given mean and shape (> 1).
    Pareto(ParetoSize),
    Exponential(ExponentialSize),
    /// Piecewise-linear CDF: `[[bytes, cumulative probability], ...]`, increasing, ending at 1.
    Empirical(EmpiricalSize),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedSize {
    pub size: Size,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParetoSize {
    pub mean: Size,
    pub shape: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExponentialSize {
    pub mean: Size,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmpiricalSize {
    pub cdf: Vec<(f64, f64)>,
}

impl<'de> Deserialize<'de> for SizeDist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged(
            d,
            "dist",
            &["fixed", "pareto", "exponential", "empirical"],
            |k, v| match k {
                "fixed" => Some(sub(v).map(SizeDist::Fixed)),
                "pareto" => Some(sub(v).map(SizeDist::Pareto)),
                "exponential" => Some(sub(v).map(SizeDist::Exponential)),
                "empirical" => Some(sub(v).map(SizeDist::Empirical)),
                _ => None,
            },
        )
    }
}

fn default_interval() -> Duration {
    Duration(10 * crate::time::MS)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// Sampling period of the time series.
    #[serde(default = "default_interval")]
    pub interval: Duration,
    /// Ports whose queue is sampled; default: every port that leaves a router.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_ports: Option<Vec<String>>,
    /// Sample per-flow cwnd, RTT and rate; default: on when there are at most 64 flows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_flows: Option<bool>,
    /// Ports whose packets are written to pcap files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<String>,
}

impl Default for Measure {
    fn default() -> Self {
        Measure {
            interval: default_interval(),
            sample_ports: None,
            sample_flows: None,
            pcap: Vec::new(),
        }
    }
}
