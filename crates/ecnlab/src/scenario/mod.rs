//! Scenario files: one schema (these serde types) read from TOML or JSON, validated with
//! errors that name the key path, built into a [`Sim`](crate::Sim) and run.

use crate::stats::Table;
use std::path::PathBuf;

/// A validation or parse error: the key path (`flows[3].cc`) and what is wrong / allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Progress of a running simulation, reported between chunks of simulated time.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub sim_time_s: f64,
    pub duration_s: f64,
    pub wall_s: f64,
    pub events: u64,
}

#[derive(Default)]
pub struct RunOptions<'a> {
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// Directory for pcap files of the ports the scenario asks to capture.
    pub pcap_dir: Option<PathBuf>,
    /// Called every few hundred milliseconds of wall time; return false to stop the run
    /// (interruption): the run then fails with [`RunError::Interrupted`].
    pub progress: Option<&'a mut dyn FnMut(Progress) -> bool>,
}

#[derive(Clone, Debug)]
pub struct RunMeta {
    pub seed: u64,
    pub duration_s: f64,
    pub wall_s: f64,
    pub events: u64,
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    /// Most packets alive at once (pool slots).
    pub peak_packets: u64,
}

pub struct RunOutput {
    pub flows: Table,
    pub ports: Table,
    pub timeseries: Table,
    pub meta: RunMeta,
    /// The scenario as run (defaults filled in, seed resolved), as TOML.
    pub scenario_toml: String,
}

#[derive(Debug)]
pub enum RunError {
    Invalid(ScenarioError),
    Io(String),
    Interrupted,
    /// An internal invariant failed (a bug): the message says which.
    Internal(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Invalid(e) => write!(f, "invalid scenario: {e}"),
            RunError::Io(e) => write!(f, "I/O error: {e}"),
            RunError::Interrupted => write!(f, "interrupted"),
            RunError::Internal(e) => write!(f, "internal error: {e}"),
        }
    }
}

impl std::error::Error for RunError {}
