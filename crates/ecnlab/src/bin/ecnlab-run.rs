//! Runs one scenario file and prints a JSON summary (run metadata, port counters, flow rows)
//! on stdout. No Python involved: this is what speed and memory benchmarks measure.
//!
//! Usage: `ecnlab-run SCENARIO.toml [--seed N] [--pcap-dir DIR] [--timeseries FILE.csv]`
//!
//! `--pcap-dir` is where the ports a scenario captures (`[[ports]] pcap = true`) write their
//! pcap files; `--timeseries` writes the sampled time series (queue, cwnd, ...) as CSV with
//! the columns `time_s,kind,entity,value`.

use ecnlab::scenario::{self, RunOptions};
use ecnlab::stats::{ColumnData, Table};
use std::process::ExitCode;

fn table_json(t: &Table) -> serde_json::Value {
    let mut rows = Vec::with_capacity(t.rows());
    for r in 0..t.rows() {
        let mut obj = serde_json::Map::new();
        for c in &t.columns {
            let v = match &c.data {
                ColumnData::I64(v) => v[r].map_or(serde_json::Value::Null, |x| x.into()),
                ColumnData::F64(v) => v[r].map_or(serde_json::Value::Null, |x| x.into()),
                ColumnData::Str(v) => v[r].clone().into(),
                ColumnData::Bool(v) => v[r].into(),
            };
            obj.insert(c.name.clone(), v);
        }
        rows.push(serde_json::Value::Object(obj));
    }
    serde_json::Value::Array(rows)
}

/// The process's peak resident set (VmHWM, KiB) on Linux. Unlike `getrusage`'s maximum, it
/// covers only this program's image, not the memory of the process that started it.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

const USAGE: &str =
    "usage: ecnlab-run SCENARIO.toml [--seed N] [--pcap-dir DIR] [--timeseries FILE.csv]";

/// The time series table as CSV (`time_s,kind,entity,value`).
fn write_timeseries_csv(t: &Table, path: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(w, "time_s,kind,entity,value")?;
    let (
        Some(ColumnData::F64(time)),
        Some(ColumnData::Str(kind)),
        Some(ColumnData::Str(entity)),
        Some(ColumnData::F64(value)),
    ) = (
        t.column("time_s"),
        t.column("kind"),
        t.column("entity"),
        t.column("value"),
    )
    else {
        return Err(std::io::Error::other(
            "time series table has unexpected columns",
        ));
    };
    for r in 0..t.rows() {
        let f = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
        writeln!(
            w,
            "{},{},{},{}",
            f(time[r]),
            kind[r],
            entity[r],
            f(value[r])
        )?;
    }
    w.flush()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let mut path = None;
    let mut seed = None;
    let mut pcap_dir = None;
    let mut timeseries = None;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--seed" => {
                i += 1;
                match args.get(i).and_then(|s| s.parse().ok()) {
                    Some(s) => seed = Some(s),
                    None => {
                        eprintln!("error: --seed needs an integer");
                        return ExitCode::from(2);
                    }
                }
            }
            "--pcap-dir" | "--timeseries" => {
                let flag = args[i].clone();
                i += 1;
                let Some(v) = args.get(i) else {
                    eprintln!("error: {flag} needs a path");
                    return ExitCode::from(2);
                };
                if flag == "--pcap-dir" {
                    pcap_dir = Some(std::path::PathBuf::from(v));
                } else {
                    timeseries = Some(v.clone());
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}\nRuns the scenario and prints a JSON summary.");
                return ExitCode::SUCCESS;
            }
            p if path.is_none() => path = Some(p.to_string()),
            other => {
                eprintln!("error: unexpected argument {other:?}");
                return ExitCode::from(2);
            }
        }
        i += 1;
    }
    let Some(path) = path else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let s = match scenario::parse_toml(&text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let out = match scenario::run(
        &s,
        RunOptions {
            seed,
            pcap_dir,
            ..Default::default()
        },
    ) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if let Some(path) = timeseries {
        if let Err(e) = write_timeseries_csv(&out.timeseries, &path) {
            eprintln!("error: cannot write {path}: {e}");
            return ExitCode::from(1);
        }
    }
    let m = &out.meta;
    let summary = serde_json::json!({
        "seed": m.seed,
        "duration_s": m.duration_s,
        "wall_s": m.wall_s,
        "cpu_s": m.cpu_s,
        "events": m.events,
        "packets_created": m.packets_created,
        "packets_delivered": m.packets_delivered,
        "packets_dropped": m.packets_dropped,
        "peak_packets": m.peak_packets,
        "peak_rss_kb": peak_rss_kb(),
        "ports": table_json(&out.ports),
        "flows": table_json(&out.flows),
    });
    println!("{summary}");
    ExitCode::SUCCESS
}
