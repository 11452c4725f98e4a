//! Runs one scenario file and prints a JSON summary (run metadata, port counters, flow rows)
//! on stdout. No Python involved: this is what speed and memory benchmarks measure.
//!
//! Usage: `ecnlab-run SCENARIO.toml [--seed N] [--pcap-dir DIR] [--timeseries FILE.csv]
//! [--flow-totals] [--slice DURATION]`
//!
//! `--pcap-dir` is where the ports a scenario captures (`[[ports]] pcap = true`) write their
//! pcap files; `--timeseries` writes the sampled time series (queue, cwnd, ...) as CSV with
//! the columns `time_s,kind,entity,value`. `--flow-totals` prints the flows' totals
//! (`flow_totals`: flows, bytes delivered, finished flows, retransmissions) instead of one row
//! per flow (`flows` is then null): a million rows would be most of the output's size.
//! `--slice` runs the loop in slices of that much simulated time (e.g. `1s`) instead of
//! slices sized to the wall clock, so that a count of its instructions repeats whatever the
//! host's speed ([`ecnlab::scenario::RunOptions::slice`]).
//!
//! Its allocator marks its heap for transparent huge pages ([`ecnlab::sysmem::HugePageHeap`]).

use ecnlab::scenario::{self, RunOptions, RunOutput};
use ecnlab::stats::{ColumnData, Table};
use std::io::Write;
use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: ecnlab::sysmem::HugePageHeap = ecnlab::sysmem::HugePageHeap;

/// Writes a table as a JSON array of row objects, one value at a time: building the whole
/// document in memory first would weigh more than the simulation of 10,000 flows itself.
fn write_table(w: &mut impl Write, t: &Table) -> std::io::Result<()> {
    w.write_all(b"[")?;
    for r in 0..t.rows() {
        if r > 0 {
            w.write_all(b",")?;
        }
        w.write_all(b"{")?;
        for (i, c) in t.columns.iter().enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            serde_json::to_writer(&mut *w, &c.name)?;
            w.write_all(b":")?;
            match &c.data {
                ColumnData::I64(v) => serde_json::to_writer(&mut *w, &v[r])?,
                // Non-finite floats have no JSON form: null, as serde_json's Value gives.
                ColumnData::F64(v) => {
                    serde_json::to_writer(&mut *w, &v[r].filter(|x| x.is_finite()))?
                }
                ColumnData::Str(v) => serde_json::to_writer(&mut *w, &v[r])?,
                ColumnData::Bool(v) => serde_json::to_writer(&mut *w, &v[r])?,
            }
        }
        w.write_all(b"}")?;
    }
    w.write_all(b"]")
}

/// The flows' totals: how many, data bytes delivered, how many finished, retransmissions.
fn write_flow_totals(w: &mut impl Write, t: &Table) -> std::io::Result<()> {
    let col = |name: &str| t.columns.iter().find(|c| c.name == name).map(|c| &c.data);
    let sum = |name: &str| match col(name) {
        Some(ColumnData::I64(v)) => v.iter().flatten().sum::<i64>(),
        _ => 0,
    };
    let finished = match col("fct_s") {
        Some(ColumnData::F64(v)) => v.iter().flatten().count(),
        _ => 0,
    };
    let totals = serde_json::json!({
        "flows": t.rows(),
        "bytes_delivered": sum("bytes_delivered"),
        "finished_flows": finished,
        "retransmissions": sum("retransmissions"),
    });
    serde_json::to_writer(&mut *w, &totals)?;
    Ok(())
}

fn write_summary(w: &mut impl Write, out: &RunOutput, flow_totals: bool) -> std::io::Result<()> {
    let m = &out.meta;
    let head = serde_json::json!({
        "seed": m.seed,
        "duration_s": m.duration_s,
        "wall_s": m.wall_s,
        "cpu_s": m.cpu_s,
        "huge_pages_kb": m.huge_pages_kb,
        "events": m.events,
        "packets_created": m.packets_created,
        "packets_delivered": m.packets_delivered,
        "packets_dropped": m.packets_dropped,
        "peak_packets": m.peak_packets,
        "warnings": m.warnings,
    });
    let head = serde_json::to_string(&head)?;
    // The object without its closing brace, then the tables, then the memory figure taken
    // last so that it covers everything the program did.
    w.write_all(head[..head.len() - 1].as_bytes())?;
    w.write_all(b",\"ports\":")?;
    write_table(w, &out.ports)?;
    if flow_totals {
        w.write_all(b",\"flows\":null,\"flow_totals\":")?;
        write_flow_totals(w, &out.flows)?;
    } else {
        w.write_all(b",\"flows\":")?;
        write_table(w, &out.flows)?;
    }
    w.write_all(b",\"peak_rss_kb\":")?;
    serde_json::to_writer(&mut *w, &peak_rss_kb())?;
    w.write_all(b"}\n")?;
    w.flush()
}

/// The process's peak resident set (VmHWM, KiB) on Linux. Unlike `getrusage`'s maximum, it
/// covers only this program's image, not the memory of the process that started it.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

const USAGE: &str =
    "usage: ecnlab-run SCENARIO.toml [--seed N] [--pcap-dir DIR] [--timeseries FILE.csv] [--flow-totals] [--slice DURATION]";

/// The time series table as CSV (`time_s,kind,entity,value`).
fn write_timeseries_csv(t: &Table, path: &str) -> std::io::Result<()> {
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

/// Most slices `--slice` may cut a run into: each ends with every port settled, and a slice
/// of a picosecond would make a run of seconds last for days.
const MAX_SLICES: u64 = 1_000_000;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let mut path = None;
    let mut seed = None;
    let mut pcap_dir = None;
    let mut timeseries = None;
    let mut flow_totals = false;
    let mut slice = None;
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
            "--slice" => {
                i += 1;
                match args.get(i).map(|s| ecnlab::units::Duration::parse(s)) {
                    Some(Ok(d)) if d.0 > 0 => slice = Some(d.0),
                    Some(Ok(_)) => {
                        eprintln!("error: --slice must be longer than 0");
                        return ExitCode::from(2);
                    }
                    Some(Err(e)) => {
                        eprintln!("error: --slice: {e}");
                        return ExitCode::from(2);
                    }
                    None => {
                        eprintln!("error: --slice needs a duration (e.g. 1s)");
                        return ExitCode::from(2);
                    }
                }
            }
            "--flow-totals" => flow_totals = true,
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
    let text = match scenario::files::read_text(
        std::path::Path::new(&path),
        scenario::files::SCENARIO_BYTES,
        "scenario file",
    ) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // Read, and checked by the run's own build (one build, not a validation build first).
    let s = match scenario::read_toml(&text).and_then(|s| {
        scenario::check_before_run(&s, seed)?;
        Ok(s)
    }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(t) = slice {
        let slices = s.duration.0.div_ceil(t);
        if slices > MAX_SLICES {
            eprintln!(
                "error: --slice {}: cuts the run's {} into {slices} slices (at most {MAX_SLICES})",
                ecnlab::units::Duration(t),
                s.duration
            );
            return ExitCode::from(2);
        }
    }
    let opts = RunOptions {
        seed,
        pcap_dir,
        slice,
        ..Default::default()
    };
    // The long-format table of every sample is built only when it is written.
    let out = match if timeseries.is_some() {
        scenario::run(&s, opts)
    } else {
        scenario::run_without_timeseries_table(&s, opts)
    } {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            let invalid = matches!(e, scenario::RunError::Invalid(_));
            return ExitCode::from(if invalid { 2 } else { 1 });
        }
    };
    if let Some(path) = timeseries {
        if let Err(e) = write_timeseries_csv(&out.timeseries, &path) {
            eprintln!("error: cannot write {path}: {e}");
            return ExitCode::from(1);
        }
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    if let Err(e) = write_summary(&mut w, &out, flow_totals) {
        eprintln!("error: writing the summary: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
