//! `ecnlab-run`, the benchmark's and the profile's binary: its `--slice` option (fixed slices
//! of simulated time) leaves the printed results alone, and a bad value exits 2 naming it.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
}

fn run(name: &str, args: &[&str]) -> Output {
    // One folder per call: the tests run at once in one process.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ecnlab-run-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ecnlab-run"))
        .arg(scenario(name))
        .args(["--pcap-dir", dir.to_str().unwrap()])
        .args(args)
        .output()
        .expect("ecnlab-run starts");
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// The printed summary without what differs from run to run (times, memory).
fn results(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let obj = doc.as_object_mut().unwrap();
    for k in [
        "wall_s",
        "cpu_s",
        "peak_rss_kb",
        "huge_pages_kb",
        "events_per_s",
    ] {
        obj.remove(k);
    }
    doc
}

/// A UDP flow with its packets captured, and DCTCP flows through a marking queue beside UDP.
#[test]
fn fixed_slices_print_the_same_results() {
    for name in ["udp_cbr.toml", "web_workload.toml"] {
        let whole = results(&run(name, &[]));
        assert!(whole["events"].as_u64().unwrap() > 1000, "{name}");
        for slice in ["1s", "3ms", "5s"] {
            assert_eq!(
                results(&run(name, &["--slice", slice])),
                whole,
                "{name} --slice {slice}"
            );
        }
    }
}

#[test]
fn a_bad_slice_exits_2_naming_it() {
    for (args, says) in [
        (&["--slice"][..], "--slice needs a duration"),
        (&["--slice", "0s"][..], "--slice must be longer than 0"),
        (
            &["--slice", "-1s"][..],
            "--slice: duration must be non-negative",
        ),
        (&["--slice", "nan"][..], "--slice: expected a duration"),
        (
            &["--slice", "1e30s"][..],
            "--slice: duration 1e30s is too long",
        ),
        // Five seconds in picoseconds: 5e12 slices, refused before the run.
        (
            &["--slice", "1ps"][..],
            "into 5000000000000 slices (at most 1000000)",
        ),
    ] {
        let out = run("udp_cbr.toml", args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
