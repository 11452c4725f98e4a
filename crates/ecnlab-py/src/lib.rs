//! `ecnlab._core`: the simulator seen from Python. Conversion only: scenario text in, result
//! tables out as Arrow-layout buffers (one `bytes` per column plus a validity bitmap), so the
//! Python side builds Arrow arrays and polars frames without touching individual rows.
//!
//! Errors: a scenario problem raises `ecnlab.errors.ScenarioError` (path + message); a Rust
//! panic or a failed internal check raises `ecnlab.errors.InternalError` with the message;
//! an interrupted run raises `KeyboardInterrupt` (or whatever the progress callback raised).

#[cfg(target_os = "linux")]
mod emulate;

use ecnlab::scenario::{self, Progress, RunError, RunOptions, Scenario, ScenarioError};
use ecnlab::stats::{ColumnData, Table};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Once;

thread_local! {
    /// Where and why the last panic on this thread happened (filled by the panic hook).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Records panics instead of printing them: the message reaches Python in the exception.
/// `ECNLAB_PANIC_STDERR=1` also prints them the usual way.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let msg = panic_payload_text(info.payload());
            let text = match info.location() {
                Some(l) => format!("{msg} (at {}:{})", l.file(), l.line()),
                None => msg,
            };
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
            if std::env::var_os("ECNLAB_PANIC_STDERR").is_some() {
                default(info);
            }
        }));
    });
}

fn panic_payload_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}

/// Runs `f`, turning a panic into an error text.
fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_panic_hook();
    LAST_PANIC.with(|p| *p.borrow_mut() = None);
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| panic_payload_text(payload.as_ref()))
    })
}

fn errors_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("ecnlab.errors")
}

fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    match errors_module(py).and_then(|m| m.getattr("ScenarioError")) {
        Ok(cls) => match cls.call1((e.path.as_str(), e.message.as_str())) {
            Ok(obj) => PyErr::from_value(obj),
            Err(err) => err,
        },
        Err(_) => PyValueError::new_err(e.to_string()),
    }
}

fn internal_error(py: Python<'_>, message: &str) -> PyErr {
    match errors_module(py).and_then(|m| m.getattr("InternalError")) {
        Ok(cls) => match cls.call1((message,)) {
            Ok(obj) => PyErr::from_value(obj),
            Err(err) => err,
        },
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err(message.to_string()),
    }
}

fn panic_error(py: Python<'_>, message: &str) -> PyErr {
    internal_error(py, &format!("the simulator panicked: {message}"))
}

/// Reads a scenario without validating it: each caller's build validates it.
fn read(text: &str, fmt: &str) -> Result<Scenario, ScenarioError> {
    match fmt {
        "toml" => scenario::read_toml(text),
        "json" => scenario::read_json(text),
        other => Err(ScenarioError::new(
            "",
            format!("unknown scenario format \"{other}\"; expected toml or json"),
        )),
    }
}

/// Parses and validates a scenario.
fn parse(text: &str, fmt: &str) -> Result<Scenario, ScenarioError> {
    let s = read(text, fmt)?;
    scenario::validate(&s)?;
    Ok(s)
}

/// Parses and validates a scenario; returns it as normalised TOML (defaults filled in).
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml"))]
fn validate(py: Python<'_>, text: &str, fmt: &str) -> PyResult<String> {
    let out =
        py.detach(|| guard(|| read(text, fmt).and_then(|s| ecnlab::scenario::resolved_toml(&s))));
    match out {
        Ok(Ok(toml)) => Ok(toml),
        Ok(Err(e)) => Err(scenario_error(py, &e)),
        Err(p) => Err(panic_error(py, &p)),
    }
}

/// The egress ports (names, in order) from host `src` to host `dst` for each pair in the
/// scenario's network, as its runs route (None: no route, or not two hosts); only the
/// topology is built.
#[pyfunction]
#[pyo3(signature = (text, pairs, fmt = "toml"))]
fn host_paths(
    py: Python<'_>,
    text: &str,
    pairs: Vec<(String, String)>,
    fmt: &str,
) -> PyResult<Vec<Option<Vec<String>>>> {
    let out =
        py.detach(|| guard(|| read(text, fmt).and_then(|s| scenario::host_paths(&s, &pairs))));
    match out {
        Ok(Ok(paths)) => Ok(paths),
        Ok(Err(e)) => Err(scenario_error(py, &e)),
        Err(p) => Err(panic_error(py, &p)),
    }
}

/// Each egress port's link in the scenario's network: `(name, [(from_s, bps)], framing)`,
/// the rate schedule and the link-layer bytes per packet; only the topology is built.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml"))]
fn port_links(
    py: Python<'_>,
    text: &str,
    fmt: &str,
) -> PyResult<Vec<(String, Vec<(f64, u64)>, u32)>> {
    let out = py.detach(|| guard(|| read(text, fmt).and_then(|s| scenario::port_links(&s))));
    match out {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(scenario_error(py, &e)),
        Err(p) => Err(panic_error(py, &p)),
    }
}

/// Why a run stopped early, as seen from the progress callback.
enum Stop {
    /// The callback raised (or a signal handler did, e.g. KeyboardInterrupt).
    Raised(PyErr),
    /// The callback returned False.
    Declined,
}

/// Parses, validates and runs a scenario with the GIL released; the GIL is taken back only
/// to call `progress` and to let Python's signal handlers run (Ctrl-C stops the run).
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", seed = None, pcap_dir = None, progress = None))]
fn run(
    py: Python<'_>,
    text: &str,
    fmt: &str,
    seed: Option<u64>,
    pcap_dir: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let mut stop: Option<Stop> = None;
    let outcome = py.detach(|| {
        guard(|| {
            let s = read(text, fmt)
                .and_then(|s| {
                    scenario::check_before_run(&s, seed)?;
                    Ok(s)
                })
                .map_err(RunError::Invalid)?;
            let mut on_progress = |p: Progress| -> bool {
                Python::attach(|py| match report_progress(py, progress.as_ref(), p) {
                    Ok(true) => true,
                    Ok(false) => {
                        stop = Some(Stop::Declined);
                        false
                    }
                    Err(e) => {
                        stop = Some(Stop::Raised(e));
                        false
                    }
                })
            };
            scenario::run(
                &s,
                RunOptions {
                    seed,
                    pcap_dir,
                    progress: Some(&mut on_progress),
                    ..Default::default()
                },
            )
        })
    });
    let out = match outcome {
        Err(p) => return Err(panic_error(py, &p)),
        Ok(Err(RunError::Invalid(e))) => return Err(scenario_error(py, &e)),
        Ok(Err(RunError::Io(e))) => return Err(PyOSError::new_err(e)),
        Ok(Err(RunError::Internal(e))) => return Err(internal_error(py, &e)),
        Ok(Err(RunError::Interrupted)) => {
            return Err(match stop {
                Some(Stop::Raised(e)) => e,
                _ => PyKeyboardInterrupt::new_err("the run was stopped by its progress callback"),
            })
        }
        Ok(Ok(out)) => out,
    };
    // The tables become Python objects on memory the run just handed back: on small pages,
    // as the run's end built them (see `SmallPagesOnly`; nothing unless the heap may be on
    // huge pages all the same, `sysmem::heap_may_be_huge`: the module's allocator is the
    // plain one).
    let _small_pages = ecnlab::sysmem::SmallPagesOnly::begin();
    let d = PyDict::new(py);
    d.set_item("flows", table_to_py(py, &out.flows)?)?;
    d.set_item("ports", table_to_py(py, &out.ports)?)?;
    d.set_item("timeseries", table_to_py(py, &out.timeseries)?)?;
    let m = PyDict::new(py);
    let meta = &out.meta;
    m.set_item("seed", meta.seed)?;
    m.set_item("duration_s", meta.duration_s)?;
    m.set_item("wall_s", meta.wall_s)?;
    m.set_item("events", meta.events)?;
    m.set_item("packets_created", meta.packets_created)?;
    m.set_item("packets_delivered", meta.packets_delivered)?;
    m.set_item("packets_dropped", meta.packets_dropped)?;
    m.set_item("peak_packets", meta.peak_packets)?;
    m.set_item("warnings", meta.warnings.clone())?;
    m.set_item("elements", elements_dict(py, &meta.elements)?)?;
    m.set_item("buffers", buffers_dict(py, &meta.buffers)?)?;
    d.set_item("meta", m)?;
    d.set_item("scenario_toml", out.scenario_toml)?;
    Ok(d.unbind())
}

/// A buffer limit as `{"packets": n}` or `{"bytes": n}`.
fn limit_dict<'py>(py: Python<'py>, l: &ecnlab::aqm::Limit) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match *l {
        ecnlab::aqm::Limit::Packets(n) => d.set_item("packets", n)?,
        ecnlab::aqm::Limit::Bytes(n) => d.set_item("bytes", n)?,
    }
    Ok(d)
}

/// What a run needed of each port's buffer limits, as `{port: {"limits": [...],
/// "needed_packets", "needed_bytes" (None where no limit is in bytes), "limit_read"}}`.
fn buffers_dict<'py>(
    py: Python<'py>,
    buffers: &[scenario::PortBuffer],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for b in buffers {
        let d = PyDict::new(py);
        let limits = b
            .limits
            .iter()
            .map(|l| limit_dict(py, l))
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("limits", limits)?;
        d.set_item("needed_packets", b.needed_pkts)?;
        d.set_item("needed_bytes", b.needed_bytes)?;
        d.set_item("limit_read", b.limit_read)?;
        out.set_item(&b.port, d)?;
    }
    Ok(out)
}

/// Each egress port's buffer limits as the scenario builds them, `{port: [{"packets": n} or
/// {"bytes": n}, ...]}` in port order (the network and its disciplines built, nothing run).
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml"))]
fn buffer_limits(py: Python<'_>, text: &str, fmt: &str) -> PyResult<Py<PyDict>> {
    let out = py.detach(|| guard(|| read(text, fmt).and_then(|s| scenario::buffer_limits(&s))));
    let ports = match out {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return Err(scenario_error(py, &e)),
        Err(p) => return Err(panic_error(py, &p)),
    };
    let d = PyDict::new(py);
    for (name, limits) in &ports {
        let l = limits
            .iter()
            .map(|l| limit_dict(py, l))
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item(name, l)?;
    }
    Ok(d.unbind())
}

/// Node elements' counters as `{node: {counter: value}}`.
pub(crate) fn elements_dict<'py>(
    py: Python<'py>,
    elements: &[(String, Vec<(&'static str, u64)>)],
) -> PyResult<Bound<'py, PyDict>> {
    let els = PyDict::new(py);
    for (node, counters) in elements {
        let c = PyDict::new(py);
        for (k, v) in counters {
            c.set_item(*k, *v)?;
        }
        els.set_item(node, c)?;
    }
    Ok(els)
}

/// Checks for pending signals, then calls the user's callback; Ok(false) stops the run.
fn report_progress(py: Python<'_>, cb: Option<&Py<PyAny>>, p: Progress) -> PyResult<bool> {
    py.check_signals()?;
    let Some(cb) = cb else { return Ok(true) };
    let d = PyDict::new(py);
    d.set_item("sim_time_s", p.sim_time_s)?;
    d.set_item("duration_s", p.duration_s)?;
    d.set_item("wall_s", p.wall_s)?;
    d.set_item("events", p.events)?;
    let r = cb.bind(py).call1((d,))?;
    // Only an explicit False stops the run; None (no return statement) goes on.
    let is_false = r.is_instance_of::<pyo3::types::PyBool>() && !r.is_truthy()?;
    Ok(!is_false)
}

/// LSB-first validity bitmap (Arrow layout), or None when every value is present.
fn validity<T>(v: &[Option<T>]) -> Option<Vec<u8>> {
    if v.iter().all(|x| x.is_some()) {
        return None;
    }
    let mut bits = vec![0u8; v.len().div_ceil(8)];
    for (i, x) in v.iter().enumerate() {
        if x.is_some() {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    Some(bits)
}

fn bitmap(v: &[bool]) -> Vec<u8> {
    let mut bits = vec![0u8; v.len().div_ceil(8)];
    for (i, &x) in v.iter().enumerate() {
        if x {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    bits
}

/// Little-endian 8-byte values written straight into a new `bytes` object.
fn bytes_of_8<'py, T: Copy>(
    py: Python<'py>,
    v: &[Option<T>],
    zero: T,
    to_le: impl Fn(T) -> [u8; 8],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, v.len() * 8, |buf| {
        for (chunk, x) in buf.chunks_exact_mut(8).zip(v) {
            chunk.copy_from_slice(&to_le(x.unwrap_or(zero)));
        }
        Ok(())
    })
}

/// One table as `{"name", "rows", "columns": [{"name", "type", "data", "validity",
/// "dictionary"}]}`: f64/i64 as 8-byte little-endian values, bool as a bitmap, strings
/// dictionary-encoded (u32 little-endian codes into the `dictionary` list).
fn table_to_py<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let cols = PyList::empty(py);
    for c in &t.columns {
        let d = PyDict::new(py);
        d.set_item("name", &c.name)?;
        let none = py.None();
        match &c.data {
            ColumnData::F64(v) => {
                d.set_item("type", "f64")?;
                d.set_item("data", bytes_of_8(py, v, 0.0, f64::to_le_bytes)?)?;
                match validity(v) {
                    Some(b) => d.set_item("validity", PyBytes::new(py, &b))?,
                    None => d.set_item("validity", &none)?,
                }
            }
            ColumnData::I64(v) => {
                d.set_item("type", "i64")?;
                d.set_item("data", bytes_of_8(py, v, 0, i64::to_le_bytes)?)?;
                match validity(v) {
                    Some(b) => d.set_item("validity", PyBytes::new(py, &b))?,
                    None => d.set_item("validity", &none)?,
                }
            }
            ColumnData::Bool(v) => {
                d.set_item("type", "bool")?;
                d.set_item("data", PyBytes::new(py, &bitmap(v)))?;
                d.set_item("validity", &none)?;
            }
            ColumnData::Str(v) => {
                d.set_item("type", "str")?;
                let mut index: HashMap<&str, u32> = HashMap::new();
                let mut dict: Vec<&str> = Vec::new();
                let codes = PyBytes::new_with(py, v.len() * 4, |buf| {
                    for (chunk, s) in buf.chunks_exact_mut(4).zip(v) {
                        let code = *index.entry(s.as_str()).or_insert_with(|| {
                            dict.push(s.as_str());
                            (dict.len() - 1) as u32
                        });
                        chunk.copy_from_slice(&code.to_le_bytes());
                    }
                    Ok(())
                })?;
                d.set_item("data", codes)?;
                d.set_item("validity", &none)?;
                d.set_item("dictionary", PyList::new(py, &dict)?)?;
            }
        }
        cols.append(d)?;
    }
    let out = PyDict::new(py);
    out.set_item("name", &t.name)?;
    out.set_item("rows", t.rows())?;
    out.set_item("columns", cols)?;
    Ok(out)
}

/// Panics inside the same guard as `run`, so tests can check that a panic reaches Python
/// as an ordinary exception carrying its message.
#[pyfunction]
fn _panic_for_test(py: Python<'_>, message: String) -> PyResult<()> {
    match py.detach(|| guard(|| -> () { panic!("{message}") })) {
        Ok(()) => Ok(()),
        Err(p) => Err(panic_error(py, &p)),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("source_hash", env!("ECNLAB_SOURCE_HASH"))?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(host_paths, m)?)?;
    m.add_function(wrap_pyfunction!(port_links, m)?)?;
    m.add_function(wrap_pyfunction!(buffer_limits, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    #[cfg(target_os = "linux")]
    {
        m.add_function(wrap_pyfunction!(emulate::emulation_plan, m)?)?;
        m.add_function(wrap_pyfunction!(emulate::emulate, m)?)?;
    }
    Ok(())
}
