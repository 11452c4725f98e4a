//! Scenario files: one schema (these serde types) read from TOML or JSON, validated with
//! errors that name the key path, built into a [`Sim`](crate::Sim) and run.

mod budget;
mod build;
pub mod files;
pub mod health;
pub mod limits;
pub mod registry;
pub mod schema;
pub mod units;

pub use build::{
    build, build_for_emulation, host_paths, port_links, Built, PlannedFlow, SizeSampler,
};
pub use limits::Limits;
pub use schema::*;

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
    /// Packets alive at once beyond which the run stops with an error (default
    /// [`MAX_LIVE_PACKETS`]): a guard against buffers that grow until memory runs out.
    pub max_live_packets: Option<u64>,
    /// Runs in slices of this much simulated time (at least 1 ps) instead of slices sized to
    /// take about 20 ms of wall time each: the same calls on every run whatever the host's
    /// speed. A count of instructions (a run under valgrind, a hundred times slower)
    /// otherwise counts the ends of many more slices, each of which settles every port. A run
    /// that ends gives the same results either way; but what is done between slices waits
    /// for a slice's end: the progress report, the interruption and the guard against a
    /// runaway backlog ([`RunOptions::max_live_packets`]), which a long slice can let grow
    /// further, or miss if it drains before the slice ends.
    pub slice: Option<crate::time::Time>,
}

#[derive(Clone, Debug)]
pub struct RunMeta {
    pub seed: u64,
    pub duration_s: f64,
    pub wall_s: f64,
    /// CPU time of the process over the same span as `wall_s` (None where the platform does
    /// not tell); less disturbed than wall time by other work on the machine.
    pub cpu_s: Option<f64>,
    pub events: u64,
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    /// Most packets alive at once (pool slots).
    pub peak_packets: u64,
    /// The process's memory on transparent huge pages when the loop ended (KiB; None where
    /// the system does not tell): see [`crate::sysmem::HugePageHeap`].
    pub huge_pages_kb: Option<u64>,
    /// What the scenario does that is allowed but probably not meant.
    pub warnings: Vec<String>,
    /// Each node element's counters, by node name.
    pub elements: Vec<(String, Vec<(&'static str, u64)>)>,
    /// What the run needed of each port's buffer limits, in port order.
    pub buffers: Vec<PortBuffer>,
}

/// What a run needed of one port's buffer limits ([`crate::net::port::BufferNeed`]): the run
/// is the same under any other limits of the port that are at least the largest arrival's
/// need (packets, or bytes for a limit in bytes), unless `limit_read`.
#[derive(Clone, Debug, PartialEq)]
pub struct PortBuffer {
    pub port: String,
    /// Every limit the port's discipline enforces ([`crate::aqm::Qdisc::limits`]).
    pub limits: Vec<crate::aqm::Limit>,
    /// The most packets an arrival asked the port to hold (the backlog it found and itself).
    pub needed_pkts: u32,
    /// The same in bytes, where a limit is in bytes (else not tracked).
    pub needed_bytes: Option<u64>,
    /// Whether anything read a limit to decide (a marker, a node element, the discipline).
    pub limit_read: bool,
}

impl PortBuffer {
    fn of(p: &crate::net::port::Port) -> Self {
        PortBuffer {
            port: p.name.clone(),
            limits: p.qdisc.limits(),
            needed_pkts: p.need.pkts,
            needed_bytes: p.need.tracks_bytes.then_some(p.need.bytes),
            limit_read: p.need.limit_read.get(),
        }
    }
}

/// Each egress port's buffer limits as the scenario builds them (name, every limit of its
/// discipline), in port order: what a run's [`PortBuffer::limits`] would say, without running.
pub fn buffer_limits(s: &Scenario) -> Result<Vec<(String, Vec<crate::aqm::Limit>)>, ScenarioError> {
    let built = build(s, s.seed, None)?;
    Ok(built
        .sim
        .ports
        .iter()
        .map(|p| (p.name.clone(), p.qdisc.limits()))
        .collect())
}

pub struct RunOutput {
    pub flows: Table,
    pub ports: Table,
    pub timeseries: Table,
    pub meta: RunMeta,
    /// The scenario as run (defaults filled in, seed resolved), as TOML.
    pub scenario_toml: String,
}

impl RunOutput {
    /// The row of port `port` in the ports table.
    pub fn port_row(&self, port: &str) -> Option<usize> {
        (0..self.ports.rows()).find(|&r| self.ports.str("port", r) == Some(port))
    }

    /// Column `col` of port `port` in the ports table.
    pub fn port_value(&self, port: &str, col: &str) -> Option<f64> {
        self.ports.f64(col, self.port_row(port)?)
    }
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

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// serde's "missing field `x`" and "unknown field `x`, expected ..." name the key in their
/// message: the error names it in its path.
pub(crate) fn missing_field(path: &str, msg: &str) -> Option<ScenarioError> {
    let (rest, missing) = if let Some(r) = msg.strip_prefix("missing field `") {
        (r, true)
    } else {
        (msg.strip_prefix("unknown field `")?, false)
    };
    let (name, tail) = rest.split_once('`')?;
    // serde_path_to_error already ends some paths with the unknown key.
    let full = if path.is_empty() {
        name.to_string()
    } else if path == name || path.ends_with(&format!(".{name}")) {
        path.to_string()
    } else {
        format!("{path}.{name}")
    };
    let text = if missing {
        format!("missing (a required key){tail}")
    } else {
        msg.to_string()
    };
    Some(ScenarioError::new(full, text))
}

/// Joins a path and a message whose start may carry a deeper path (see `schema::SUBPATH`).
fn path_error(path: String, msg: String) -> ScenarioError {
    if let Some(e) = missing_field(&path, &msg) {
        return e;
    }
    let m = schema::SUBPATH;
    if let Some(rest) = msg.strip_prefix(m) {
        if let Some((sub, text)) = rest.split_once(m) {
            let full = if path.is_empty() {
                sub.to_string()
            } else {
                format!("{path}.{sub}")
            };
            if let Some(e) = missing_field(&full, text) {
                return e;
            }
            return ScenarioError::new(full, text.to_string());
        }
    }
    ScenarioError::new(path, msg)
}

/// Renders serde_path_to_error's path (`flows[3].cc`); empty at the root.
fn render_path(p: &serde_path_to_error::Path) -> String {
    let s = p.to_string();
    if s == "." {
        String::new()
    } else {
        s
    }
}

/// Parses and validates a TOML scenario.
pub fn parse_toml(text: &str) -> Result<Scenario, ScenarioError> {
    let s = read_toml(text)?;
    validate(&s)?;
    Ok(s)
}

/// Parses a TOML scenario without validating it: for a caller that runs it at once, whose
/// build checks what validation does (see [`check_before_run`]).
pub fn read_toml(text: &str) -> Result<Scenario, ScenarioError> {
    // A byte-order mark some editors write is not part of the TOML.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let de = toml::Deserializer::new(text);
    let s: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = render_path(e.path());
        let inner = e.into_inner();
        let mut msg = inner.message().to_string();
        if let Some(e) = missing_field(&path, &msg) {
            return e;
        }
        if path.is_empty() {
            if let Some(span) = inner.span() {
                let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                msg = format!("line {line}: {msg}");
            }
        }
        path_error(path, msg)
    })?;
    Ok(s)
}

/// Parses and validates a JSON scenario (what the Python front sends).
pub fn parse_json(text: &str) -> Result<Scenario, ScenarioError> {
    let s = read_json(text)?;
    validate(&s)?;
    Ok(s)
}

/// Parses a JSON scenario without validating it (as [`read_toml`]).
pub fn read_json(text: &str) -> Result<Scenario, ScenarioError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut de = serde_json::Deserializer::from_str(text);
    let s: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = render_path(e.path());
        let msg = e.into_inner().to_string();
        // serde_json appends " at line L column C", meaningless for a Python dict.
        let msg = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        path_error(path, msg)
    })?;
    Ok(s)
}

/// Checks everything that can be checked before running, by building the simulation.
pub fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    build(s, s.seed, None).map(|_| ())
}

/// What a scenario only read ([`read_toml`], [`read_json`]) needs before [`run`] under
/// `seed`: nothing under its own seed, since the run's build is validation's (the same
/// checks, every error before any file is made), so the simulation is built once; under
/// another seed, validation under its own, which parsing would have done.
pub fn check_before_run(s: &Scenario, seed: Option<u64>) -> Result<(), ScenarioError> {
    match seed {
        Some(x) if x != s.seed => validate(s),
        _ => Ok(()),
    }
}

/// The scenario as TOML with every component written out in full: each queue, marker,
/// controller, codec and TCP table with the values it was built with, defaults included.
pub fn resolved_toml(s: &Scenario) -> Result<String, ScenarioError> {
    let (built, resolved) = registry::recording(|| build(s, s.seed, None));
    built?;
    Ok(render_resolved(s, &resolved))
}

fn render_resolved(s: &Scenario, resolved: &[(String, serde_json::Value)]) -> String {
    let mut tree = match serde_json::to_value(s) {
        Ok(v) => v,
        Err(e) => return format!("# scenario could not be rendered: {e}\n"),
    };
    for (path, value) in resolved {
        set_path(&mut tree, path, strip_nulls(value.clone()));
    }
    let tree = strip_nulls(tree);
    toml::to_string(&tree)
        .unwrap_or_else(|e| format!("# scenario could not be rendered as TOML: {e}\n"))
}

/// TOML has no null: an unset optional value is left out.
fn strip_nulls(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k, strip_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// Sets `value` at a key path like `topology.links[2].queue_ba`, creating tables on the way.
fn set_path(tree: &mut serde_json::Value, path: &str, value: serde_json::Value) {
    use serde_json::Value;
    let mut node = tree;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let (name, index) = match part.split_once('[') {
            Some((n, rest)) => (n, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (*part, None),
        };
        let last = i + 1 == parts.len();
        if !node.is_object() {
            return;
        }
        let map = node.as_object_mut().expect("checked");
        if last && index.is_none() {
            map.insert(name.to_string(), value);
            return;
        }
        let child = map.entry(name.to_string()).or_insert_with(|| {
            if index.is_some() {
                Value::Array(Vec::new())
            } else {
                Value::Object(Default::default())
            }
        });
        node = match index {
            Some(k) => match child.as_array_mut().and_then(|a| a.get_mut(k)) {
                Some(x) => x,
                None => return,
            },
            None => child,
        };
        if last {
            *node = value;
            return;
        }
    }
}

impl Scenario {
    pub fn to_toml(&self) -> String {
        toml::to_string(self)
            .unwrap_or_else(|e| format!("# scenario could not be rendered as TOML: {e}\n"))
    }
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Runs a validated scenario.
/// Parses a scenario's TOML text and runs it with the default options.
pub fn run_toml(text: &str) -> Result<RunOutput, RunError> {
    run(
        &parse_toml(text).map_err(RunError::Invalid)?,
        RunOptions::default(),
    )
}

pub fn run(s: &Scenario, opts: RunOptions) -> Result<RunOutput, RunError> {
    run_inner(s, opts, true)
}

/// As [`run`], but `RunOutput::timeseries` is left empty: for callers that report only the
/// flows and ports tables (the benchmark runner), the long-format table of every sample would
/// be most of the process's memory. The samples are still taken, so the simulation does the
/// same work.
pub fn run_without_timeseries_table(s: &Scenario, opts: RunOptions) -> Result<RunOutput, RunError> {
    run_inner(s, opts, false)
}

/// Packets alive at once beyond which a run is stopped (about 3.5 GB of packets): only a
/// buffer limit far beyond what the traffic can fill in practice gets there, and the run
/// would otherwise exhaust memory.
pub const MAX_LIVE_PACKETS: u64 = 20_000_000;

/// The error for a run stopped by [`MAX_LIVE_PACKETS`], naming the port that holds most.
fn runaway_backlog(sim: &crate::Sim, max_live: u64) -> ScenarioError {
    let worst = sim.ports.iter().max_by_key(|p| p.qdisc.len());
    let detail = match worst {
        Some(p) => format!(
            "; port {} holds {} packets (its buffer limit is {})",
            p.name,
            p.qdisc.len(),
            match p.qdisc.limit() {
                crate::aqm::Limit::Packets(n) => format!("{n} packets"),
                crate::aqm::Limit::Bytes(b) => format!("{b} bytes"),
            }
        ),
        None => String::new(),
    };
    ScenarioError::new(
        "",
        format!(
            "the network held more than {max_live} packets at t = {:.3} s{detail}: \
             lower the buffer limit or the offered load",
            crate::time::to_secs(sim.now())
        ),
    )
}

fn run_inner(
    s: &Scenario,
    mut opts: RunOptions,
    timeseries_table: bool,
) -> Result<RunOutput, RunError> {
    let seed = opts.seed.unwrap_or(s.seed);
    let heap = crate::sysmem::RunHeap::begin();
    let (built, resolved_params) = registry::recording(|| build(s, seed, opts.pcap_dir.as_deref()));
    let mut built = built.map_err(RunError::Invalid)?;
    let sim = &mut built.sim;
    let end = s.duration.0;
    let max_live = opts.max_live_packets.unwrap_or(MAX_LIVE_PACKETS);
    let t0 = std::time::Instant::now();
    let cpu0 = process_cpu_s();
    let mut last_report = 0.0;
    // Run in slices of simulated time so progress can be reported and a run interrupted.
    // Slices adapt to the scenario's speed so each takes about SLICE_WALL_S of wall time:
    // a fixed fraction of the duration could take minutes in a long, busy run and leave
    // Ctrl-C unanswered (unless the caller fixes them: RunOptions::slice). Where a slice ends
    // does not change the results (events run in (time, sequence) order whatever the slicing).
    const SLICE_WALL_S: f64 = 0.02;
    // Start small (a busy scenario may run slowly) and grow: doubling reaches any size fast.
    let mut step = opts
        .slice
        .map_or((end / 1000).clamp(1, 10 * crate::time::US), |t| t.max(1));
    let mut reached = 0;
    let mut idle = health::IdleWatch::plan(sim, end);
    while reached < end {
        // Stopping where the idle-link watch reads a port changes nothing either.
        let until = end
            .min(reached.saturating_add(step))
            .min(idle.next_stop().unwrap_or(end).max(reached + 1));
        let slice_start = opts.slice.is_none().then(std::time::Instant::now);
        sim.run_until(until);
        reached = until;
        idle.observe(sim);
        if sim.pool.live() > max_live {
            return Err(RunError::Invalid(runaway_backlog(sim, max_live)));
        }
        if let Some(slice_start) = slice_start {
            let took = slice_start.elapsed().as_secs_f64();
            if took > 2.0 * SLICE_WALL_S {
                step = (step / 2).max(1);
            } else if took < SLICE_WALL_S / 2.0 {
                step = step.saturating_mul(2).min(end);
            }
        }
        let wall = t0.elapsed().as_secs_f64();
        if let Some(cb) = opts.progress.as_mut() {
            if wall - last_report >= 0.2 || reached == end {
                last_report = wall;
                let go = cb(Progress {
                    sim_time_s: crate::time::to_secs(until),
                    duration_s: s.duration.secs(),
                    wall_s: wall,
                    events: sim.events.executed,
                });
                if !go {
                    return Err(RunError::Interrupted);
                }
            }
        }
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_s = process_cpu_s().zip(cpu0).map(|(b, a)| b - a);
    let huge_pages_kb = crate::sysmem::huge_pages_kb();
    drop(heap);
    let _small_pages = crate::sysmem::SmallPagesOnly::begin();
    sim.conservation().map_err(RunError::Internal)?;
    sim.finish_pcaps()
        .map_err(|e| RunError::Io(format!("writing pcap: {e}")))?;
    let mut resolved = s.clone();
    resolved.seed = seed;
    let rows = sim.take_flow_records();
    let mut warnings = std::mem::take(&mut built.warnings);
    warnings.extend(idle.warnings(sim, &rows));
    let elements: Vec<(String, Vec<(&'static str, u64)>)> = sim
        .nodes
        .iter()
        .filter_map(|n| n.element.as_ref().map(|e| (n.name.clone(), e.counters())))
        .collect();
    warnings.extend(health::idle_elements(s, &elements));
    let buffers = sim.ports.iter().map(PortBuffer::of).collect();
    let ports = sim.ports_table();
    let timeseries = if timeseries_table {
        sim.ts.to_table()
    } else {
        Table::new("timeseries")
    };
    let meta = RunMeta {
        seed,
        duration_s: s.duration.secs(),
        wall_s,
        cpu_s,
        huge_pages_kb,
        events: sim.events.executed,
        packets_created: sim.pool.allocated,
        packets_delivered: sim.delivered,
        packets_dropped: sim.dropped,
        peak_packets: sim.pool.capacity_used() as u64,
        warnings,
        elements,
        buffers,
    };
    // The simulation is read: its memory goes back to the system before the flows' table
    // is built, so the results do not add to the run's peak.
    drop(built);
    crate::sysmem::return_free_memory();
    Ok(RunOutput {
        flows: crate::stats::FlowRecord::table(&rows),
        ports,
        timeseries,
        meta,
        scenario_toml: render_resolved(&resolved, &resolved_params),
    })
}

/// CPU time used by this process so far, in seconds.
#[cfg(target_os = "linux")]
fn process_cpu_s() -> Option<f64> {
    #[repr(C)]
    struct Timespec {
        tv_sec: std::ffi::c_long,
        tv_nsec: std::ffi::c_long,
    }
    extern "C" {
        fn clock_gettime(clock: std::ffi::c_int, tp: *mut Timespec) -> std::ffi::c_int;
    }
    const CLOCK_PROCESS_CPUTIME_ID: std::ffi::c_int = 2;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer and nothing else.
    let rc = unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

#[cfg(not(target_os = "linux"))]
fn process_cpu_s() -> Option<f64> {
    None
}
