//! Names a scenario can use for queue disciplines, markers, congestion controllers and
//! feedback codecs, and how each is built from its parameter table. This is the one place
//! that knows every scheme by name; the core only knows the traits.

use super::schema::{Component, Params};
use super::ScenarioError;
use crate::aqm::{DropTail, Limit, Qdisc, Red, RedConfig};
use crate::engine::rng::{self, Rng};
use crate::marker::step::{StepConfig, StepMarker};
use crate::marker::Marker;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;

/// What a scenario build resolved, by key path, in the order paths were first seen. A path
/// recorded again (every copy of a flow, every flow of a workload: thousands of the same
/// table) replaces its value in place, so a run of a million flows keeps one entry.
#[derive(Default)]
struct Resolved {
    entries: Vec<(String, serde_json::Value)>,
    index: std::collections::HashMap<String, usize>,
    /// The baseline controller recorded last: (parameters' key path, name, parameters).
    last_controller: Option<(String, String, Params)>,
}

/// Whether a baseline controller's resolved parameters need recording: only while a build is
/// recorded, and not again right after the same path, name and table (every flow of a
/// workload: the record would be the same).
fn controller_needs_record(ppath: &str, name: &str, p: &Params) -> bool {
    RESOLVED.with(|r| {
        let mut r = r.borrow_mut();
        let Some(v) = r.as_mut() else {
            return false;
        };
        if let Some((lp, ln, lparams)) = &v.last_controller {
            if lp == ppath && ln == name && lparams == p {
                return false;
            }
        }
        v.last_controller = Some((ppath.to_string(), name.to_string(), p.clone()));
        true
    })
}

thread_local! {
    /// While a scenario is built: every component's parameters as they were resolved (given
    /// values and defaults), by key path. Every component parses through [`params`], so
    /// recording there covers all of them without passing a recorder to each constructor.
    static RESOLVED: RefCell<Option<Resolved>> = const { RefCell::new(None) };
}

/// Runs `f` (a scenario build) and returns what it resolved, by key path.
pub fn recording<R>(f: impl FnOnce() -> R) -> (R, Vec<(String, serde_json::Value)>) {
    let outer = RESOLVED.with(|r| r.borrow_mut().replace(Resolved::default()));
    let out = f();
    let got = RESOLVED
        .with(|r| std::mem::replace(&mut *r.borrow_mut(), outer))
        .unwrap_or_default();
    (out, got.entries)
}

/// Records the value a key path resolved to (when a build is being recorded).
pub fn record(path: &str, value: serde_json::Value) {
    RESOLVED.with(|r| {
        if let Some(v) = r.borrow_mut().as_mut() {
            match v.index.get(path) {
                Some(&i) => v.entries[i].1 = value,
                None => {
                    v.index.insert(path.to_string(), v.entries.len());
                    v.entries.push((path.to_string(), value));
                }
            }
        }
    });
}

/// Adds the component's `kind` to what `path` resolved to.
fn record_kind(path: &str, kind: &str) {
    record_field(path, "kind", kind.into());
}

/// Adds `key = value` to what `path` resolved to (a table the component's own config does
/// not hold, such as the node an element sits on).
pub fn record_field(path: &str, key: &str, value: serde_json::Value) {
    RESOLVED.with(|r| {
        if let Some(v) = r.borrow_mut().as_mut() {
            if let Some(&i) = v.index.get(path) {
                if let serde_json::Value::Object(m) = &mut v.entries[i].1 {
                    m.insert(key.into(), value);
                }
            }
        }
    });
}

pub const QUEUES: &[&str] = &["droptail", "red", "codel", "fq_codel", "mecn", "prio"];
pub const MARKERS: &[&str] = &["step", "eecn", "vcp", "uno", "hfcc", "mlcp", "bmcc"];

/// Deserialises a component's parameters into its config type; errors carry `path`.
pub fn params<T: DeserializeOwned + Serialize>(path: &str, p: &Params) -> Result<T, ScenarioError> {
    let v = serde_json::Value::Object(p.clone());
    let cfg = serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let sub = e.path().to_string();
        let full = if sub == "." {
            path.to_string()
        } else {
            format!("{path}.{sub}")
        };
        let msg = e.into_inner().to_string();
        super::missing_field(&full, &msg).unwrap_or_else(|| ScenarioError::new(full, msg))
    })?;
    if let Ok(v) = serde_json::to_value(&cfg) {
        record(path, v);
    }
    Ok(cfg)
}

fn unknown(path: &str, what: &str, name: &str, allowed: &[&str]) -> ScenarioError {
    ScenarioError::new(
        format!("{path}.kind"),
        format!(
            "unknown {what} \"{name}\"; expected one of {}",
            allowed.join(", ")
        ),
    )
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DropTailConfig {
    #[serde(default = "default_limit")]
    limit: u64,
    /// Limit in bytes rather than packets.
    #[serde(default)]
    bytes: bool,
}

fn default_limit() -> u64 {
    1000
}

/// Builds a queue discipline. `index` keys its random stream.
pub fn queue(
    path: &str,
    c: &Component,
    seed: u64,
    index: u64,
) -> Result<Box<dyn Qdisc>, ScenarioError> {
    let rng: Rng = rng::stream(seed, rng::kind::QDISC, index);
    let q = queue_of_kind(path, c, rng)?;
    record_kind(path, &c.kind);
    Ok(q)
}

fn queue_of_kind(path: &str, c: &Component, rng: Rng) -> Result<Box<dyn Qdisc>, ScenarioError> {
    match c.kind.as_str() {
        "droptail" => {
            let cfg: DropTailConfig = params(path, &c.params)?;
            if cfg.limit == 0 {
                return Err(ScenarioError::new(
                    format!("{path}.limit"),
                    "must be positive",
                ));
            }
            let limit = if cfg.bytes {
                Limit::Bytes(cfg.limit)
            } else {
                Limit::packets(cfg.limit).map_err(|m| field_error(path, &m))?
            };
            Ok(Box::new(DropTail::new(limit)))
        }
        "red" => {
            let cfg: RedConfig = params(path, &c.params)?;
            cfg.validate().map_err(|m| field_error(path, &m))?;
            Ok(Box::new(Red::new(cfg, rng)))
        }
        "codel" => {
            let cfg: crate::aqm::CodelConfig = params(path, &c.params)?;
            Ok(Box::new(
                crate::aqm::Codel::new(&cfg).map_err(|m| field_error(path, &m))?,
            ))
        }
        "fq_codel" => {
            let cfg: crate::aqm::FqCodelConfig = params(path, &c.params)?;
            let perturbation: u64 = rand::Rng::gen(&mut rng.clone());
            Ok(Box::new(
                crate::aqm::FqCodel::new(&cfg, perturbation).map_err(|m| field_error(path, &m))?,
            ))
        }
        "mecn" => {
            let cfg: crate::schemes::mecn::MecnRedConfig = params(path, &c.params)?;
            // The discipline would cap a larger limit silently: the value run.json shows would
            // not be the one used.
            Limit::packets(cfg.limit).map_err(|m| field_error(path, &m))?;
            let q =
                crate::schemes::mecn::MecnRed::new(cfg, rng).map_err(|m| field_error(path, &m))?;
            Ok(Box::new(q))
        }
        "prio" => {
            let cfg: PrioConfig = params(path, &c.params)?;
            let base: u64 = rand::Rng::gen(&mut rng.clone());
            let band = |name: &str, c: &Component, n: u64| {
                if c.kind == "prio" {
                    return Err(ScenarioError::new(
                        format!("{path}.{name}.kind"),
                        "a band cannot itself be \"prio\"",
                    ));
                }
                let bpath = format!("{path}.{name}");
                let q = queue_of_kind(&bpath, c, rng::stream(base, rng::kind::QDISC, n))?;
                record_kind(&bpath, &c.kind);
                Ok(q)
            };
            let ack = band("ack", &cfg.ack, 1)?;
            let data = band("data", &cfg.data, 2)?;
            Ok(Box::new(crate::aqm::PrioQueue::new(ack, data)))
        }
        other => Err(unknown(path, "queue discipline", other, QUEUES)),
    }
}

/// `{kind = "prio", ack = {kind = ...}, data = {kind = ...}}`: pure ACKs served first.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PrioConfig {
    #[serde(default = "default_ack_band")]
    ack: Component,
    data: Component,
}

fn default_ack_band() -> Component {
    Component::droptail(1000)
}

/// Builds a feedback marker for a port.
pub fn marker(
    path: &str,
    c: &Component,
    seed: u64,
    index: u64,
) -> Result<Box<dyn Marker>, ScenarioError> {
    let m = marker_of_kind(path, c, rng::stream(seed, rng::kind::MARKER, index))?;
    record_kind(path, &c.kind);
    Ok(m)
}

fn marker_of_kind(path: &str, c: &Component, rng: Rng) -> Result<Box<dyn Marker>, ScenarioError> {
    match c.kind.as_str() {
        "step" => {
            let cfg: StepConfig = params(path, &c.params)?;
            Ok(Box::new(StepMarker::new(cfg)))
        }
        "eecn" => {
            let cfg: crate::schemes::eecn::MarkerConfig = params(path, &c.params)?;
            let m = crate::schemes::eecn::Marker::new(cfg).map_err(|m| field_error(path, &m))?;
            Ok(Box::new(m))
        }
        "vcp" => {
            let cfg: crate::schemes::vcp::VcpMarkerConfig = params(path, &c.params)?;
            let m = crate::schemes::vcp::VcpMarker::new(cfg).map_err(|m| field_error(path, &m))?;
            Ok(Box::new(m))
        }
        "uno" => {
            let cfg: crate::schemes::uno::UnoMarkerConfig = params(path, &c.params)?;
            let m = crate::schemes::uno::UnoMarker::new(cfg).map_err(|m| field_error(path, &m))?;
            Ok(Box::new(m))
        }
        "hfcc" => {
            let cfg: crate::schemes::hfcc::HfccMarkerConfig = params(path, &c.params)?;
            let m = crate::schemes::hfcc::HfccMarker::new(cfg, rng)
                .map_err(|m| field_error(path, &m))?;
            Ok(Box::new(m))
        }
        "mlcp" => {
            let cfg: crate::schemes::mlcp::MlcpMarkerConfig = params(path, &c.params)?;
            let m =
                crate::schemes::mlcp::MlcpMarker::new(cfg).map_err(|m| field_error(path, &m))?;
            Ok(Box::new(m))
        }
        "bmcc" => {
            let cfg: crate::schemes::bmcc::BmccMarkerConfig = params(path, &c.params)?;
            let m =
                crate::schemes::bmcc::BmccMarker::new(cfg).map_err(|m| field_error(path, &m))?;
            Ok(Box::new(m))
        }
        other => Err(unknown(path, "marker", other, MARKERS)),
    }
}

pub const ELEMENTS: &[&str] = &["apcc", "zhuge", "clean"];

/// Builds a node element; `port_index` finds one of the node's ports by name (a key path
/// for its error).
pub fn element(
    path: &str,
    c: &Component,
    seed: u64,
    index: u64,
    port_index: &dyn Fn(&str, &str) -> Result<usize, ScenarioError>,
) -> Result<Box<dyn crate::net::NodeElement>, ScenarioError> {
    let e: Box<dyn crate::net::NodeElement> = match c.kind.as_str() {
        "apcc" => {
            let cfg: crate::schemes::apcc::ApccConfig = params(path, &c.params)?;
            let port = port_index(&format!("{path}.port"), &cfg.port)?;
            Box::new(crate::schemes::apcc::Apcc::new(cfg, port).map_err(|m| field_error(path, &m))?)
        }
        "clean" => {
            let cfg: crate::schemes::clean::CleanConfig = params(path, &c.params)?;
            let port = port_index(&format!("{path}.port"), &cfg.port)?;
            Box::new(
                crate::schemes::clean::Clean::new(cfg, port).map_err(|m| field_error(path, &m))?,
            )
        }
        "zhuge" => {
            let cfg: crate::schemes::zhuge::ZhugeConfig = params(path, &c.params)?;
            let port = port_index(&format!("{path}.port"), &cfg.port)?;
            let rng = rng::stream(seed, rng::kind::ELEMENT, index);
            Box::new(
                crate::schemes::zhuge::Zhuge::new(cfg, port, rng)
                    .map_err(|m| field_error(path, &m))?,
            )
        }
        other => return Err(unknown(path, "node element", other, ELEMENTS)),
    };
    record_kind(path, &c.kind);
    Ok(e)
}

/// What a codec reads of what ports write ([`Marker::feedback`](crate::marker::Marker::feedback),
/// [`Qdisc::feedback`](crate::aqm::Qdisc::feedback)): None for a codec that reads nothing;
/// Classic ECN and DCTCP read CE from whatever writes it: an ECN AQM, and every scheme's
/// router that writes its top code (11) on a classic ECN packet (EECN, MECN, VCP, HFCC,
/// MLCP, BMCC; UNO's routers write no CE). Every scheme reads a classic router's CE as its
/// top level (EECN's CL(2), MECN's moderate, the load schemes' overload), except VCP3, whose
/// level travels in an idealised header only its own router writes.
pub fn feedback_read_by(codec: &str) -> Option<&'static [&'static str]> {
    match codec {
        "ecn" | "dctcp" => Some(&["ce", "eecn", "mecn", "vcp", "hfcc", "mlcp", "bmcc"]),
        "eecn" => Some(&["eecn", "ce"]),
        "mecn" => Some(&["mecn", "ce"]),
        "vcp" => Some(&["vcp", "ce"]),
        "uno" | "uno2" => Some(&["uno", "uno2", "ce"]),
        "vcp3" => Some(&["vcp3"]),
        "hfcc" => Some(&["hfcc", "ce"]),
        "mlcp" => Some(&["mlcp", "ce"]),
        "bmcc" => Some(&["bmcc", "ce"]),
        _ => None,
    }
}

/// The feedback an element kind writes into the packets it forwards, named as
/// [`feedback_read_by`] names it (CLEAN proxies congestion as CE marks).
pub fn element_feedback(kind: &str) -> Option<&'static str> {
    match kind {
        "clean" => Some("ce"),
        _ => None,
    }
}

/// The counters of an element kind that count what it does to traffic (any of them above
/// zero: it acted over the run).
pub fn element_actions(kind: &str) -> &'static [&'static str] {
    match kind {
        "apcc" => &["windows_lowered"],
        "zhuge" => &["acks_delayed"],
        "clean" => &["packets_marked", "windows_lowered"],
        _ => &[],
    }
}

/// Congestion controllers a flow's `cc` may name.
pub const CONTROLLERS: &[&str] = &[
    "newreno", "cubic", "dctcp", "bbr", "copa", "eecn", "mecn", "vcp", "ucp1", "ucp2", "vcp3",
    "hfcc", "mlcp", "bmcc",
];
/// Feedback codecs a flow's `ecn` may name.
pub const CODECS: &[&str] = &[
    "none", "ecn", "dctcp", "eecn", "mecn", "vcp", "uno", "uno2", "vcp3", "hfcc", "mlcp", "bmcc",
];

/// The codec a controller uses when the flow names none: a scheme's controller speaks its
/// own feedback; DCTCP needs its precise echo; the loss-based baselines run without ECN.
pub fn default_codec(cc: &str) -> &'static str {
    match cc {
        "dctcp" => "dctcp",
        "eecn" => "eecn",
        "mecn" => "mecn",
        "vcp" => "vcp",
        "ucp1" => "uno",
        "ucp2" => "uno2",
        "vcp3" => "vcp3",
        "hfcc" => "hfcc",
        "mlcp" => "mlcp",
        "bmcc" => "bmcc",
        _ => "none",
    }
}

/// A scheme's controller from its parameter table (`ppath` names it in errors) and `new`.
fn scheme_controller<C, T>(
    ppath: &str,
    p: &Params,
    mss: u32,
    new: impl FnOnce(C, u32) -> Result<T, String>,
) -> Result<Box<dyn crate::cc::Controller>, ScenarioError>
where
    C: DeserializeOwned + Serialize,
    T: crate::cc::Controller + 'static,
{
    let cfg: C = params(ppath, p)?;
    Ok(Box::new(new(cfg, mss).map_err(|m| field_error(ppath, &m))?))
}

/// Builds a congestion controller; `path` names the flow's `cc` key.
pub fn controller(
    path: &str,
    name: &str,
    cc_params: Option<&Params>,
    mss: u32,
    seed: u64,
) -> Result<Box<dyn crate::cc::Controller>, ScenarioError> {
    let ppath = path.replace(".cc", ".cc_params");
    let empty = Params::new();
    let p = cc_params.unwrap_or(&empty);
    match name {
        "newreno" | "cubic" | "dctcp" | "bbr" | "copa" => {
            let v = serde_json::Value::Object(p.clone());
            if controller_needs_record(&ppath, name, p) {
                if let Ok(resolved) = crate::cc::resolved_config(name, &v) {
                    record(&ppath, resolved);
                }
            }
            crate::cc::by_name(name, mss, Some(&v), seed).map_err(|m| {
                // by_name prefixes parameter errors with "<name>.".
                match m.strip_prefix(&format!("{name}.")) {
                    Some(rest) => field_error(&ppath, rest),
                    None => ScenarioError::new(&ppath, m),
                }
            })
        }
        "eecn" => scheme_controller(&ppath, p, mss, crate::schemes::eecn::Controller::new),
        "mecn" => scheme_controller(&ppath, p, mss, crate::schemes::mecn::MecnReno::new),
        "vcp" => scheme_controller(&ppath, p, mss, crate::schemes::vcp::Vcp::new),
        "hfcc" => scheme_controller(&ppath, p, mss, crate::schemes::hfcc::Hfcc::new),
        "mlcp" => scheme_controller(&ppath, p, mss, crate::schemes::mlcp::Mlcp::new),
        "bmcc" => scheme_controller(&ppath, p, mss, crate::schemes::bmcc::Bmcc::new),
        "ucp1" | "ucp2" | "vcp3" => {
            let name = match name {
                "ucp1" => "ucp1",
                "ucp2" => "ucp2",
                _ => "vcp3",
            };
            scheme_controller(&ppath, p, mss, |cfg, mss| {
                crate::schemes::uno::Ucp::new(name, cfg, mss)
            })
        }
        other => Err(ScenarioError::new(
            path,
            format!(
                "unknown congestion controller \"{other}\"; expected one of {}",
                CONTROLLERS.join(", ")
            ),
        )),
    }
}

/// Builds a feedback codec; `path` names the flow's `ecn` key.
pub fn codec(
    path: &str,
    name: &str,
    ecn_params: Option<&Params>,
) -> Result<Box<dyn crate::tcp::codec::Codec>, ScenarioError> {
    let ppath = path.replace(".ecn", ".ecn_params");
    let empty = Params::new();
    let p = ecn_params.unwrap_or(&empty);
    match name {
        "ecn" | "rfc3168" if !p.is_empty() => {
            let cfg: crate::tcp::codecs::rfc3168::Rfc3168Config = params(&ppath, p)?;
            Ok(Box::new(crate::tcp::codecs::Rfc3168::with_config(cfg)))
        }
        "none" | "ecn" | "dctcp" => {
            if !p.is_empty() {
                return Err(ScenarioError::new(
                    &ppath,
                    format!("codec \"{name}\" takes no parameters"),
                ));
            }
            crate::tcp::codecs::by_name(name).map_err(|m| ScenarioError::new(path, m))
        }
        "eecn" => {
            let cfg: crate::schemes::eecn::CodecConfig = params(&ppath, p)?;
            Ok(Box::new(
                crate::schemes::eecn::Codec::new(cfg).map_err(|m| field_error(&ppath, &m))?,
            ))
        }
        "mecn" => {
            let cfg: crate::schemes::mecn::MecnCodecConfig = params(&ppath, p)?;
            Ok(Box::new(crate::schemes::mecn::MecnCodec::new(cfg)))
        }
        "vcp" | "hfcc" => {
            if !p.is_empty() {
                return Err(ScenarioError::new(
                    &ppath,
                    format!("codec \"{name}\" takes no parameters"),
                ));
            }
            Ok(Box::new(if name == "hfcc" {
                crate::schemes::vcp::VcpCodec::hfcc()
            } else {
                crate::schemes::vcp::VcpCodec::new()
            }))
        }
        "mlcp" | "bmcc" => {
            if !p.is_empty() {
                return Err(ScenarioError::new(
                    &ppath,
                    format!("codec \"{name}\" takes no parameters"),
                ));
            }
            Ok(if name == "mlcp" {
                Box::new(crate::schemes::mlcp::MlcpCodec::new())
            } else {
                Box::new(crate::schemes::bmcc::BmccCodec::new())
            })
        }
        "uno" | "uno2" | "vcp3" => {
            use crate::schemes::uno::{Encoding, UnoCodec};
            if !p.is_empty() {
                return Err(ScenarioError::new(
                    &ppath,
                    format!("codec \"{name}\" takes no parameters"),
                ));
            }
            let enc = match name {
                "uno" => Encoding::OneBit,
                "uno2" => Encoding::TwoBit,
                _ => Encoding::Header,
            };
            Ok(Box::new(UnoCodec::new(enc)))
        }
        other => Err(ScenarioError::new(
            path,
            format!(
                "unknown feedback codec \"{other}\"; expected one of {}",
                CODECS.join(", ")
            ),
        )),
    }
}

/// Turns a component's "field: message" validation error into a path error.
pub fn field_error(path: &str, m: &str) -> ScenarioError {
    match m.split_once(": ") {
        Some((field, msg)) if !field.contains(' ') => {
            ScenarioError::new(format!("{path}.{field}"), msg)
        }
        _ => ScenarioError::new(path, m),
    }
}
