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
use serde::Deserialize;

pub const QUEUES: &[&str] = &["droptail", "red"];
pub const MARKERS: &[&str] = &["step", "eecn"];

/// Deserialises a component's parameters into its config type; errors carry `path`.
pub fn params<T: DeserializeOwned>(path: &str, p: &Params) -> Result<T, ScenarioError> {
    let v = serde_json::Value::Object(p.clone());
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let sub = e.path().to_string();
        let full = if sub == "." {
            path.to_string()
        } else {
            format!("{path}.{sub}")
        };
        ScenarioError::new(full, e.into_inner().to_string())
    })
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

#[derive(Deserialize)]
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
                Limit::Packets(cfg.limit.min(u32::MAX as u64) as u32)
            };
            Ok(Box::new(DropTail::new(limit)))
        }
        "red" => {
            let cfg: RedConfig = params(path, &c.params)?;
            cfg.validate().map_err(|m| field_error(path, &m))?;
            Ok(Box::new(Red::new(cfg, rng)))
        }
        other => Err(unknown(path, "queue discipline", other, QUEUES)),
    }
}

/// Builds a feedback marker for a port.
pub fn marker(
    path: &str,
    c: &Component,
    _seed: u64,
    _index: u64,
) -> Result<Box<dyn Marker>, ScenarioError> {
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
        other => Err(unknown(path, "marker", other, MARKERS)),
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
