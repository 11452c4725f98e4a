//! Bounds on what one run may use, checked before any work starts: nodes, flows, simulated
//! events, trace and pcap bytes, time-series rows. Each has a default that a laptop bears; a
//! scenario that needs more says so in its `[limits]` table (the one way to raise any of
//! them), so the scenario that needed it runs the same anywhere.

use super::ScenarioError;
use crate::units::Size;
use serde::{Deserialize, Serialize};

/// Hosts and routers of one run.
pub const NODES: u64 = 1_000_000;
/// Flows of one run (flows' copies and every flow a workload draws).
pub const FLOWS: u64 = 2_000_000;
/// Simulated events of one run, as estimated from the scenario's rates before it runs: about
/// half an hour of one core at this machine's 10–20 million events per second.
pub const EVENTS: u64 = 30_000_000_000;
/// Bytes of one trace file.
pub const TRACE_BYTES: u64 = 64 << 20;
/// Bytes of every pcap file of one run together, as estimated from the ports' traffic.
pub const PCAP_BYTES: u64 = 1 << 30;
/// Rows of the time series of one run.
pub const SAMPLE_ROWS: u64 = 200_000_000;

/// The `[limits]` table: any of its keys raises (or lowers) one bound for this scenario.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count"
    )]
    pub nodes: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count"
    )]
    pub flows: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count"
    )]
    pub events: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_bytes: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_bytes: Option<Size>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count"
    )]
    pub sample_rows: Option<u64>,
}

/// A count given as an integer, or as a number like `1e11` (TOML's integers have no
/// exponent) that is a whole number a 64-bit count holds.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = Option<u64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a whole number (like 2000000 or 1e11)")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            u64::try_from(v)
                .map(Some)
                .map_err(|_| E::custom(format!("must be positive, got {v}")))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
            if v.fract() == 0.0 && (0.0..1.8e19).contains(&v) {
                Ok(Some(v as u64))
            } else {
                Err(E::custom(format!(
                    "must be a whole number from 1 to 1.8e19, got {v}"
                )))
            }
        }
    }
    d.deserialize_any(V)
}

/// One bound: its key in `[limits]`, what it counts, and its value for this scenario.
#[derive(Clone, Copy, Debug)]
pub struct Bound {
    pub key: &'static str,
    pub value: u64,
}

impl Limits {
    pub fn is_default(&self) -> bool {
        *self == Limits::default()
    }

    /// Every limit given is positive (a zero would refuse every scenario).
    pub fn check(&self) -> Result<(), ScenarioError> {
        for (key, v) in [
            ("nodes", self.nodes),
            ("flows", self.flows),
            ("events", self.events),
            ("trace_bytes", self.trace_bytes.map(|s| s.0)),
            ("pcap_bytes", self.pcap_bytes.map(|s| s.0)),
            ("sample_rows", self.sample_rows),
        ] {
            if v == Some(0) {
                return Err(ScenarioError::new(
                    format!("limits.{key}"),
                    "must be positive (omit it for the default)",
                ));
            }
        }
        // Nodes and flows are numbered in 32 bits.
        for (key, v) in [("nodes", self.nodes), ("flows", self.flows)] {
            if v.is_some_and(|n| n > u32::MAX as u64) {
                return Err(ScenarioError::new(
                    format!("limits.{key}"),
                    format!(
                        "must be at most {} (the simulator numbers them in 32 bits)",
                        u32::MAX
                    ),
                ));
            }
        }
        Ok(())
    }

    pub fn nodes(&self) -> Bound {
        Bound {
            key: "nodes",
            value: self.nodes.unwrap_or(NODES),
        }
    }
    pub fn flows(&self) -> Bound {
        Bound {
            key: "flows",
            value: self.flows.unwrap_or(FLOWS),
        }
    }
    pub fn events(&self) -> Bound {
        Bound {
            key: "events",
            value: self.events.unwrap_or(EVENTS),
        }
    }
    pub fn trace_bytes(&self) -> Bound {
        Bound {
            key: "trace_bytes",
            value: self.trace_bytes.map_or(TRACE_BYTES, |s| s.0),
        }
    }
    pub fn pcap_bytes(&self) -> Bound {
        Bound {
            key: "pcap_bytes",
            value: self.pcap_bytes.map_or(PCAP_BYTES, |s| s.0),
        }
    }
    pub fn sample_rows(&self) -> Bound {
        Bound {
            key: "sample_rows",
            value: self.sample_rows.unwrap_or(SAMPLE_ROWS),
        }
    }
}

impl Bound {
    /// Ok when `figure` is within the bound; otherwise an error at `path` that says what
    /// the scenario implies (`implies`, a phrase naming the figure), the bound, and how to
    /// raise it.
    pub fn allows(&self, path: &str, figure: f64, implies: &str) -> Result<(), ScenarioError> {
        if figure <= self.value as f64 {
            return Ok(());
        }
        Err(ScenarioError::new(path, self.exceeded(implies)))
    }

    /// The message for a figure beyond the bound.
    pub fn exceeded(&self, implies: &str) -> String {
        format!(
            "{implies}, beyond the limit of {} (limits.{}); if the run is meant and the machine \
             can bear it, raise it in the scenario: [limits] {} = ...",
            self.value, self.key, self.key
        )
    }
}

/// A count for a message: "2000001", "3.2e+11" when it is large.
pub fn figure(x: f64) -> String {
    if x < 1e9 {
        format!("{}", x.round())
    } else {
        format!("{x:.2e}")
    }
}
