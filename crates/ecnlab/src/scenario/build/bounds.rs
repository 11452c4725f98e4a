//! What a run may cost, checked before any work starts: integers a scenario file can hold,
//! route tables, flows, simulated events, capture files and time-series rows, each within its
//! `limits` entry and the memory available.

use super::workloads::arrivals;
use super::{err, Ctx};
use crate::net::PortId;
use crate::scenario::budget;
use crate::scenario::limits;
use crate::scenario::schema::Scenario;
use crate::scenario::ScenarioError;

/// Integers up to TOML's largest, 2^63 − 1: the scenario as run is written back as TOML
/// (run.json), and a larger one (from JSON, or a `--seed`) could not be, so run.json would
/// not say what ran.
pub(super) fn check_integers(s: &Scenario, seed: u64) -> Result<(), ScenarioError> {
    fn walk(v: &serde_json::Value, path: &str) -> Option<(String, u64)> {
        match v {
            serde_json::Value::Number(n) => n
                .as_u64()
                .filter(|&u| u > i64::MAX as u64)
                .map(|u| (path.to_string(), u)),
            serde_json::Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, x)| walk(x, &format!("{path}[{i}]"))),
            serde_json::Value::Object(m) => m.iter().find_map(|(k, x)| {
                walk(
                    x,
                    &if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    },
                )
            }),
            _ => None,
        }
    }
    let mut tree = serde_json::to_value(s).unwrap_or_default();
    if let Some(m) = tree.as_object_mut() {
        m.insert("seed".into(), seed.into());
    }
    match walk(&tree, "") {
        Some((path, v)) => Err(err(
            path,
            format!(
                "{v} is beyond the largest integer a scenario file holds ({})",
                i64::MAX
            ),
        )),
        None => Ok(()),
    }
}

/// Route entries (a node with several links keeps one per node) beyond which the tables
/// would take more than a gigabyte, and their computation as many steps.
const MAX_ROUTE_ENTRIES: f64 = 2.5e8;

/// The route tables of `tables` nodes with several links over `nodes` nodes fit: a chain of
/// 65 536 hops would need 34 GB of them.
pub(super) fn check_routes(path: &str, tables: f64, nodes: f64) -> Result<(), ScenarioError> {
    let entries = tables * nodes;
    let bytes = entries * std::mem::size_of::<PortId>() as f64;
    let by_memory = memory_available().map_or(f64::INFINITY, |m| 0.5 * m);
    if entries <= MAX_ROUTE_ENTRIES && bytes <= by_memory {
        return Ok(());
    }
    Err(err(
        path,
        format!(
            "{} nodes with several links, each with a route to every one of {} nodes: {} route entries ({:.1} GB), beyond the {} the simulator keeps; use fewer routers or hops",
            limits::figure(tables),
            limits::figure(nodes),
            limits::figure(entries),
            bytes / 1e9,
            limits::figure(MAX_ROUTE_ENTRIES)
        ),
    ))
}

/// Simulated events a core runs per second, for a message (6–20 million on this project's
/// 2-core machines, depending on their load).
const EVENTS_PER_CPU_S: f64 = 10e6;

/// The events the traffic implies within `limits.events`, and the pcap files within
/// `limits.pcap_bytes`.
pub(super) fn check_budget(c: &Ctx, pcap_ports: &[(String, PortId)]) -> Result<(), ScenarioError> {
    let s = c.scenario;
    let secs = s.duration.secs();
    let est = budget::estimate(&c.sim, &c.budget, secs);
    let bound = s.limits.events();
    if est.events > bound.value as f64 {
        let busiest = (0..c.sim.ports.len())
            .max_by(|&a, &b| est.port_packets[a].total_cmp(&est.port_packets[b]))
            .map(|p| {
                format!(
                    "; the busiest port, {}, sends {} packets a simulated second",
                    c.sim.ports[p].name,
                    limits::figure(est.port_packets[p] / secs)
                )
            })
            .unwrap_or_default();
        let cpu = est.events / EVENTS_PER_CPU_S;
        let implies = format!(
            "the traffic implies about {} simulated events ({} per simulated second, {} of them from {}{busiest}): about {} of CPU",
            limits::figure(est.events),
            limits::figure(est.events / secs),
            limits::figure(est.costliest.1),
            est.costliest.0,
            if cpu < 7200.0 {
                format!("{:.0} min", cpu / 60.0)
            } else {
                format!("{:.0} h", cpu / 3600.0)
            }
        );
        return Err(err(&est.costliest.0, bound.exceeded(&implies)));
    }
    let mut seen = std::collections::HashSet::new();
    let mut pcap = 0.0;
    let mut largest = (String::new(), 0.0);
    for (path, p) in pcap_ports {
        if seen.insert(*p) {
            let b = 24.0 + est.port_bytes[*p as usize];
            pcap += b;
            if b > largest.1 {
                largest = (path.clone(), b);
            }
        }
    }
    let bound = s.limits.pcap_bytes();
    bound.allows(
        &largest.0,
        pcap,
        &format!(
            "the captures would write about {:.2} GB ({:.2} GB from {})",
            pcap / 1e9,
            largest.1 / 1e9,
            largest.0
        ),
    )
}

/// Bytes one TCP flow takes while the scenario is built and run: its connection's two ends,
/// their buffers' bookkeeping, and its rows. Validating 400 000 flows of a workload peaked
/// at 1.37 GB (3.4 KB a flow); a run adds packets in flight and rows.
const BYTES_PER_FLOW: f64 = 6_000.0;

/// The flows the scenario asks for (copies, and what each workload draws on average) within
/// `limits.flows` and the memory available, before any is built.
pub(super) fn check_flow_count(c: &Ctx) -> Result<(), ScenarioError> {
    let s = c.scenario;
    let mut total = 0.0;
    let mut most = (String::from("flows"), 0.0);
    for (i, f) in s.flows.iter().enumerate() {
        let n = f.count.unwrap_or(1) as f64;
        total += n;
        if n > most.1 {
            most = (format!("flows[{i}].count"), n);
        }
    }
    for (i, w) in s.workloads.iter().enumerate() {
        let path = format!("workloads[{i}]");
        let n = arrivals(c, &path, w)?.expected();
        total += n;
        if n > most.1 {
            let key = if w.arrival_rate.is_some() {
                "arrival_rate"
            } else {
                "load"
            };
            most = (format!("{path}.{key}"), n);
        }
    }
    let implies = format!(
        "{} flows in the run ({} from {})",
        limits::figure(total),
        limits::figure(most.1),
        most.0
    );
    s.limits.flows().allows(&most.0, total, &implies)?;
    if let Some(avail) = memory_available() {
        let need = total * BYTES_PER_FLOW;
        if need > 0.8 * avail {
            return Err(err(
                most.0,
                format!(
                    "{implies} need about {:.1} GB; {:.1} GB of memory is available",
                    need / 1e9,
                    avail / 1e9
                ),
            ));
        }
    }
    Ok(())
}

/// Bytes one time-series row takes at its peak: the core's sample, the long table built from
/// it, and its copy on the Python side.
const BYTES_PER_SAMPLE_ROW: f64 = 170.0;

/// The time series must fit both `limits.sample_rows` and 80 % of the memory available.
pub(super) fn check_sample_rows(
    rows: f64,
    interval: crate::units::Duration,
    bound: limits::Bound,
    available: Option<f64>,
) -> Result<(), ScenarioError> {
    let implies = format!(
        "sampling every {interval} would record about {:.0} million rows",
        rows / 1e6
    );
    let fix = "use a longer interval, fewer sample_ports, or sample_flows = false";
    bound.allows("measure.interval", rows, &format!("{implies} ({fix})"))?;
    let by_memory = available.map_or(f64::INFINITY, |b| 0.8 * b / BYTES_PER_SAMPLE_ROW);
    if rows <= by_memory {
        return Ok(());
    }
    Err(err(
        "measure.interval",
        format!(
            "{implies} (~{:.1} GB; {:.1} GB of memory is available); {fix}",
            rows * BYTES_PER_SAMPLE_ROW / 1e9,
            available.unwrap_or(0.0) / 1e9
        ),
    ))
}

/// Memory this process may still use, in bytes: the smaller of the system's available memory
/// and what its cgroup's limit leaves (Linux; None elsewhere or when unreadable).
pub(super) fn memory_available() -> Option<f64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let avail_kb: f64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    let mut avail = avail_kb * 1024.0;
    let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok();
    if let (Some(max), Some(cur)) = (read("memory.max"), read("memory.current")) {
        if let (Ok(max), Ok(cur)) = (max.trim().parse::<f64>(), cur.trim().parse::<f64>()) {
            avail = avail.min((max - cur).max(0.0));
        }
    }
    Some(avail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::limits::Limits;
    use crate::units::Duration;

    #[test]
    fn time_series_rows_are_bounded_by_the_memory_available() {
        let every = Duration(10 * crate::time::US);
        // 100 M rows need ~17 GB: fine with 64 GB, refused with a 3 GB cap.
        let bound = Limits::default().sample_rows();
        assert!(check_sample_rows(1e8, every, bound, Some(64e9)).is_ok());
        let e = check_sample_rows(1e8, every, bound, Some(3e9)).unwrap_err();
        assert_eq!(e.path, "measure.interval");
        assert!(
            e.message
                .contains("100 million rows (~17.0 GB; 3.0 GB of memory is available)"),
            "{}",
            e.message
        );
        // Without a reading of memory only the fixed limit applies.
        assert!(check_sample_rows(1e8, every, bound, None).is_ok());
        let e = check_sample_rows(4e8, every, bound, None).unwrap_err();
        assert!(e.message.contains("limits.sample_rows"), "{}", e.message);
        let raised = Limits {
            sample_rows: Some(500_000_000),
            ..Limits::default()
        };
        assert!(check_sample_rows(4e8, every, raised.sample_rows(), None).is_ok());
        assert!(memory_available().is_some_and(|b| b > 0.0));
    }
}
