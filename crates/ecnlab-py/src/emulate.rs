//! Emulation from Python: the plan of a scenario (its hosts and TCP flows, for the Python
//! side to start real traffic) and the forwarder run, with the GIL released while packets
//! flow. Namespaces, addresses and traffic are the Python side's; the TUN devices are made
//! here and vanish with the run.

use super::{guard, internal_error, panic_error, parse, scenario_error, table_to_py};
use ecnlab::emu::tun::{monotonic_ns, set_timer_slack_ns, thread_cpu_ns, Tun, TunIo};
use ecnlab::emu::{Forwarder, RxDrop};
use ecnlab::net::NodeId;
use ecnlab::scenario::{build_for_emulation, ScenarioError};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

/// A scenario built for emulation, as JSON: its hosts (name, address), its TCP flows and the
/// most data they can put through the forwarder; a scenario error if it cannot be emulated.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", seed = None))]
pub fn emulation_plan(
    py: Python<'_>,
    text: &str,
    fmt: &str,
    seed: Option<u64>,
) -> PyResult<String> {
    let out = py.detach(|| {
        guard(|| -> Result<String, ScenarioError> {
            let s = parse(text, fmt)?;
            let seed = seed.unwrap_or(s.seed);
            let (built, flows) = build_for_emulation(&s, seed, None)?;
            let sim = &built.sim;
            let hosts: Vec<_> = sim
                .nodes
                .iter()
                .filter(|n| n.is_host)
                .map(|n| {
                    serde_json::json!({
                        "name": n.name,
                        "addr": std::net::Ipv4Addr::from(n.addr).to_string(),
                    })
                })
                .collect();
            // The most data the forwarder can be asked to carry: each flow at most at the
            // slowest port on its path, flows sharing that port counted once.
            let peak = |p: u32| sim.ports[p as usize].rate.peak_bps();
            let mut narrowest: Vec<u32> = flows
                .iter()
                .filter_map(|f| {
                    let (a, b) = (sim.node_by_name(&f.src)?, sim.node_by_name(&f.dst)?);
                    sim.path_ports(a, b)?.into_iter().min_by_key(|&p| peak(p))
                })
                .collect();
            narrowest.sort_unstable();
            narrowest.dedup();
            let max_load: u64 = narrowest.iter().map(|&p| peak(p)).sum();
            Ok(serde_json::json!({
                "max_load_bps": max_load,
                "seed": seed,
                "duration_s": s.duration.secs(),
                "sample_interval_s": s.measure.interval.secs(),
                "hosts": hosts,
                "flows": flows,
                "warnings": built.warnings,
            })
            .to_string())
        })
    });
    match out {
        Ok(Ok(j)) => Ok(j),
        Ok(Err(e)) => Err(scenario_error(py, &e)),
        Err(p) => Err(panic_error(py, &p)),
    }
}

enum Failure {
    Invalid(ScenarioError),
    Os(String),
    Raised(PyErr),
    Internal(String),
}

/// Builds the scenario's network, makes one TUN device per host (named `tap_prefix` + the
/// host's index among hosts), calls `setup(taps)` — a list of `{"host", "addr", "tun"}` —
/// which must put each device in its host's namespace, start the traffic and return the
/// CLOCK_MONOTONIC nanosecond at which simulated time 0 is; then forwards until the
/// scenario's duration has passed. `progress(elapsed_s)` is called about every 20 ms; a
/// False return or an exception (Ctrl-C) stops early.
#[pyfunction]
#[pyo3(signature = (text, tap_prefix, setup, fmt = "toml", seed = None, pcap_dir = None, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn emulate(
    py: Python<'_>,
    text: &str,
    tap_prefix: &str,
    setup: Py<PyAny>,
    fmt: &str,
    seed: Option<u64>,
    pcap_dir: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let mut stopped_by: Option<PyErr> = None;
    let mut declined = false;
    let outcome =
        py.detach(|| {
            guard(|| {
                let s = parse(text, fmt).map_err(Failure::Invalid)?;
                let seed = seed.unwrap_or(s.seed);
                let (built, _) =
                    build_for_emulation(&s, seed, pcap_dir.as_deref()).map_err(Failure::Invalid)?;
                let sim = built.sim;
                let hosts: Vec<NodeId> = (0..sim.nodes.len() as NodeId)
                    .filter(|&n| sim.nodes[n as usize].is_host)
                    .collect();
                let mut tuns = Vec::with_capacity(hosts.len());
                for (i, _) in hosts.iter().enumerate() {
                    let name = format!("{tap_prefix}{i}");
                    tuns.push(Tun::create(&name).map_err(|e| {
                        Failure::Os(format!("cannot create TUN device {name}: {e}"))
                    })?);
                }
                let start_ns = Python::attach(|py| -> PyResult<u64> {
                    let taps = PyList::empty(py);
                    for (k, &n) in hosts.iter().enumerate() {
                        let d = PyDict::new(py);
                        d.set_item("host", &sim.nodes[n as usize].name)?;
                        d.set_item(
                            "addr",
                            std::net::Ipv4Addr::from(sim.nodes[n as usize].addr).to_string(),
                        )?;
                        d.set_item("tun", &tuns[k].name)?;
                        taps.append(d)?;
                    }
                    setup.bind(py).call1((taps,))?.extract::<u64>()
                })
                .map_err(Failure::Raised)?;
                let slack = set_timer_slack_ns(1);
                let cpu0 = thread_cpu_ns();
                let mut f = Forwarder::new(sim, TunIo::new(tuns), hosts);
                let end = s.duration.0;
                let mut stop = || {
                    Python::attach(|py| {
                        if let Err(e) = py.check_signals() {
                            stopped_by = Some(e);
                            return true;
                        }
                        let Some(cb) = progress.as_ref() else {
                            return false;
                        };
                        let elapsed = monotonic_ns().saturating_sub(start_ns) as f64 * 1e-9;
                        match cb.bind(py).call1((elapsed,)) {
                            Ok(r) => {
                                let no = r.is_instance_of::<pyo3::types::PyBool>()
                                    && !r.is_truthy().unwrap_or(true);
                                declined |= no;
                                no
                            }
                            Err(e) => {
                                stopped_by = Some(e);
                                true
                            }
                        }
                    })
                };
                let ran = f.run(start_ns, end, &mut stop);
                let cpu_ns = thread_cpu_ns() - cpu0;
                let wall_ns = monotonic_ns().saturating_sub(start_ns);
                set_timer_slack_ns(slack);
                ran.map_err(|e| Failure::Internal(e.to_string()))?;
                f.sim.conservation().map_err(Failure::Internal)?;
                f.sim
                    .finish_pcaps()
                    .map_err(|e| Failure::Os(format!("writing pcap: {e}")))?;
                let dropped = f.sim.dropped;
                let elements: Vec<(String, Vec<(&'static str, u64)>)> = f
                    .sim
                    .nodes
                    .iter()
                    .filter_map(|n| n.element.as_ref().map(|e| (n.name.clone(), e.counters())))
                    .collect();
                Ok((
                    f.sim.ports_table(),
                    f.sim.ts.to_table(),
                    f.stats,
                    dropped,
                    seed,
                    cpu_ns,
                    wall_ns,
                    built.warnings,
                    elements,
                ))
            })
        });
    let (ports, timeseries, st, dropped, seed, cpu_ns, wall_ns, warnings, elements) = match outcome
    {
        Err(p) => return Err(panic_error(py, &p)),
        Ok(Err(Failure::Invalid(e))) => return Err(scenario_error(py, &e)),
        Ok(Err(Failure::Os(e))) => return Err(PyOSError::new_err(e)),
        Ok(Err(Failure::Raised(e))) => return Err(e),
        Ok(Err(Failure::Internal(e))) => return Err(internal_error(py, &e)),
        Ok(Ok(x)) => x,
    };
    if let Some(e) = stopped_by {
        return Err(e);
    }
    if declined {
        return Err(PyKeyboardInterrupt::new_err(
            "the emulation was stopped by its progress callback",
        ));
    }
    let d = PyDict::new(py);
    d.set_item("ports", table_to_py(py, &ports)?)?;
    d.set_item("timeseries", table_to_py(py, &timeseries)?)?;
    let m = PyDict::new(py);
    m.set_item("seed", seed)?;
    m.set_item("wall_s", wall_ns as f64 * 1e-9)?;
    m.set_item("forwarder_cpu_s", cpu_ns as f64 * 1e-9)?;
    m.set_item("rx_pkts", st.rx_pkts)?;
    m.set_item("rx_bytes", st.rx_bytes)?;
    for why in RxDrop::ALL {
        m.set_item(format!("rx_dropped_{}", why.name()), st.rx_dropped(why))?;
    }
    m.set_item("tx_pkts", st.tx_pkts)?;
    m.set_item("tx_bytes", st.tx_bytes)?;
    m.set_item("tx_refused", st.tx_refused)?;
    m.set_item("tx_failed", st.tx_failed)?;
    let q = |p: f64| st.lateness_ns.quantile(p).map(|v| v as f64 * 1e-9);
    m.set_item("lateness_p50_s", q(0.5))?;
    m.set_item("lateness_p99_s", q(0.99))?;
    m.set_item("lateness_max_s", st.max_lateness_ns as f64 * 1e-9)?;
    m.set_item("late_events", st.lateness_ns.count)?;
    m.set_item("sleeps", st.sleeps)?;
    m.set_item("loops", st.loops)?;
    m.set_item("packets_dropped", dropped)?;
    m.set_item("warnings", warnings)?;
    m.set_item("elements", crate::elements_dict(py, &elements)?)?;
    d.set_item("meta", m)?;
    Ok(d.unbind())
}
