//! Input a hostile (or careless) user gives never becomes a wrong number or exhausts the
//! machine: integers beyond their type are refused rather than wrapped, files are read only
//! when they are regular and small enough, and what a scenario implies (nodes, flows,
//! events, pcap bytes) is bounded before any work starts, with a message that names the key,
//! the figure and the `[limits]` key that raises it.

use ecnlab::scenario::{parse_toml, run, RunOptions, ScenarioError};

fn dumbbell(extra_topology: &str, rest: &str) -> String {
    format!(
        r#"
duration = "1s"
[topology]
kind = "dumbbell"
left = 1
right = 1
access = {{ rate = "1Gbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}
{extra_topology}
{rest}
"#
    )
}

const ONE_FLOW: &str = "[[flows]]\nsrc = \"l0\"\ndst = \"r0\"\n";

fn refused(text: &str) -> ScenarioError {
    match parse_toml(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// A packet limit of 2^32 wrapped to 0 in RED (every packet dropped) and 2^32 + 100 to 100;
/// DropTail and MECN capped it at 2^32 − 1 while run.json said 2^32. All are refused.
#[test]
fn packet_limits_beyond_32_bits_are_refused_not_wrapped() {
    for queue in [
        "{ kind = \"red\", limit = 4294967296, min_th = 5, max_th = 15 }",
        "{ kind = \"red\", limit = 4294967396, min_th = 5, max_th = 15 }",
        "{ kind = \"droptail\", limit = 4294967296 }",
        "{ kind = \"mecn\", limit = 4294967296 }",
    ] {
        let e = refused(&dumbbell(&format!("bottleneck_queue = {queue}"), ONE_FLOW));
        assert_eq!(e.path, "topology.bottleneck_queue.limit", "{queue}: {e}");
        assert!(
            e.message.contains("at most 4294967295"),
            "{queue}: {}",
            e.message
        );
    }
    // The largest that fits runs, and in byte mode (a 64-bit count) far larger ones do.
    parse_toml(&dumbbell(
        "bottleneck_queue = { kind = \"red\", limit = 4294967295, min_th = 5, max_th = 15 }",
        ONE_FLOW,
    ))
    .unwrap();
    parse_toml(&dumbbell(
        "bottleneck_queue = { kind = \"droptail\", limit = 4294967296, bytes = true }",
        ONE_FLOW,
    ))
    .unwrap();
}

fn temp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ecnlab-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn traced(file: &std::path::Path, limits: &str) -> String {
    dumbbell("", &format!("{ONE_FLOW}{limits}")).replace(
        "bottleneck = { rate = \"10Mbps\", delay = \"10ms\" }",
        &format!(
            "bottleneck = {{ delay = \"10ms\", trace = {{ file = \"{}\" }} }}",
            file.display()
        ),
    )
}

/// One opportunity, then a period of 213 days: the picosecond times wrapped past 2^64 and
/// the 1-s run got an 82.6 Mb/s link. Now the link carries that one packet.
#[test]
fn a_trace_whose_period_overflows_the_clock_carries_what_it_says() {
    let f = temp("long.trace");
    std::fs::write(&f, "1\n18446744074\n").unwrap();
    let s = parse_toml(&traced(&f, "")).unwrap();
    let out = run(&s, RunOptions::default()).unwrap();
    let sent = out.port_value("rl->rr", "dequeued_pkts").unwrap();
    assert!(sent <= 1.0, "the link sent {sent} packets");
}

/// `/dev/zero` as a trace was read until the OOM killer came (23.5 GB), a FIFO blocked for
/// ever; a large trace is refused by size, with the key that raises the cap.
#[cfg(target_os = "linux")]
#[test]
fn trace_files_are_regular_and_bounded() {
    let e = refused(&traced(std::path::Path::new("/dev/zero"), ""));
    assert_eq!(e.path, "topology.bottleneck.trace.file");
    assert!(e.message.contains("character device"), "{}", e.message);
    let fifo = temp("trace.fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let e = refused(&traced(&fifo, ""));
    assert!(e.message.contains("FIFO"), "{}", e.message);
    let big = temp("big.trace");
    std::fs::write(&big, "1\n".repeat(600)).unwrap();
    let e = refused(&traced(&big, "[limits]\ntrace_bytes = \"1KB\""));
    assert!(
        e.message.contains("beyond the 1000 bytes") && e.message.contains("limits.trace_bytes"),
        "{}",
        e.message
    );
    parse_toml(&traced(&big, "[limits]\ntrace_bytes = \"2KB\"")).unwrap();
}

/// 5·10^5 flows took 3.5 GB while they were built, before the 2 M cap was reached; the
/// count (a workload's from its rate) is now checked before the first is built.
#[test]
fn flows_are_counted_before_they_are_built() {
    let e = refused(&dumbbell(
        "",
        "[[workloads]]\nsrc = [\"l0\"]\ndst = [\"r0\"]\narrival_rate = 1e9\nsizes = { dist = \"fixed\", size = \"10KB\" }\n",
    ));
    assert_eq!(e.path, "workloads[0].arrival_rate");
    assert!(
        e.message.contains("1.00e9 flows") && e.message.contains("limits.flows"),
        "{}",
        e.message
    );
    let e = refused(&dumbbell(
        "",
        &format!("{ONE_FLOW}count = 3\n[limits]\nflows = 2\n"),
    ));
    assert_eq!(e.path, "flows[0].count");
    assert!(e.message.contains("[limits] flows"), "{}", e.message);
}

/// A 1000 Tbit/s UDP flow was accepted (about two hours a simulated second).
#[test]
fn events_implied_by_rates_are_bounded_before_the_run() {
    let udp = "[[flows]]\nkind = \"udp\"\nsrc = \"l0\"\ndst = \"r0\"\nrate = \"1000Tbps\"\n";
    let e = refused(&dumbbell("", udp));
    assert_eq!(e.path, "flows[0].rate");
    assert!(
        e.message.contains("events") && e.message.contains("limits.events"),
        "{}",
        e.message
    );
    // TCP fills whatever its path carries: a 600 Tbit/s link for ten minutes.
    let fast = dumbbell("", ONE_FLOW)
        .replace("10Mbps", "600Tbps")
        .replace("1Gbps", "900Tbps")
        .replace("duration = \"1s\"", "duration = \"600s\"");
    let e = refused(&fast);
    assert_eq!(e.path, "flows[0]");
    assert!(e.message.contains("the busiest port"), "{}", e.message);
}

/// 30 s of capture at 1 Gbit/s wrote 3.6 GB.
#[test]
fn pcap_bytes_are_bounded_before_the_run() {
    let text = dumbbell("", &format!("{ONE_FLOW}[measure]\npcap = [\"rl->rr\"]\n"))
        .replace("10Mbps", "1Gbps")
        .replace("duration = \"1s\"", "duration = \"30s\"");
    let e = refused(&text);
    assert_eq!(e.path, "measure.pcap[0]");
    assert!(e.message.contains("limits.pcap_bytes"), "{}", e.message);
    parse_toml(&format!("{text}\n[limits]\npcap_bytes = \"5GB\"\n")).unwrap();
}

/// A scenario only read (ecnlab-run's and the Python front's path: the run's build is the
/// validation) and refused makes no pcap file, whichever check refuses it: the files are made
/// after every check.
#[test]
fn a_refused_run_makes_no_pcap_file() {
    let dir = std::env::temp_dir().join(format!("ecnlab-refused-pcap-{}", std::process::id()));
    let text = dumbbell(
        "",
        &format!("{ONE_FLOW}[measure]\npcap = [\"rl->rr\"]\nsample_ports = [\"nowhere\"]\n"),
    );
    let s = ecnlab::scenario::read_toml(&text).unwrap();
    let opts = RunOptions {
        pcap_dir: Some(dir.clone()),
        ..Default::default()
    };
    match run(&s, opts) {
        Err(ecnlab::scenario::RunError::Invalid(e)) => {
            assert_eq!(e.path, "measure.sample_ports[0]", "{e}")
        }
        Err(e) => panic!("refused otherwise: {e}"),
        Ok(_) => panic!("ran"),
    }
    let made = dir.exists();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!made, "{} was made", dir.display());
    assert_eq!(refused(&text).path, "measure.sample_ports[0]");
}

/// Hosts: the bound is checked from the topology's numbers, without overflow.
#[test]
fn node_counts_are_checked_without_overflow() {
    // TOML integers end at 2^63 − 1.
    let e = refused(&dumbbell("", "").replace("left = 1", "left = 9223372036854775807"));
    assert_eq!(e.path, "topology.left");
    assert!(e.message.contains("limits.nodes"), "{}", e.message);
}

/// start + stagger × (count − 1) wrapped the clock and started copies early.
#[test]
fn staggered_starts_do_not_wrap() {
    let e = refused(&dumbbell(
        "",
        &format!("{ONE_FLOW}count = 3\nstagger = \"1000000s\"\n"),
    ));
    assert_eq!(e.path, "flows[0].stagger");
}

/// Limits are positive and within what the simulator numbers.
#[test]
fn limits_are_checked() {
    let e = refused(&dumbbell("", "[limits]\nevents = 0\n"));
    assert_eq!(e.path, "limits.events");
    let e = refused(&dumbbell("", "[limits]\nflows = 5000000000\n"));
    assert_eq!(e.path, "limits.flows");
    let e = refused(&dumbbell("", "[limits]\nhosts = 5\n"));
    assert!(e.path.starts_with("limits"), "{e}");
    let e = refused(&dumbbell("", "[limits]\nevents = 1.5\n"));
    assert_eq!(e.path, "limits.events");
    // A count may be written with an exponent.
    let s = parse_toml(&dumbbell("", "[limits]\nevents = 1e11\n")).unwrap();
    assert_eq!(s.limits.events, Some(100_000_000_000));
}

/// DCTCP with RFC 3168 echo ran (its mark fraction read from a latched ECE) while
/// `ecn = "none"` was refused.
#[test]
fn a_controller_runs_only_with_the_feedback_it_reads() {
    for (cc, ecn) in [
        ("dctcp", "ecn"),
        ("eecn", "ecn"),
        ("ucp1", "uno2"),
        ("vcp", "dctcp"),
    ] {
        let e = refused(&dumbbell(
            "",
            &format!("{ONE_FLOW}cc = \"{cc}\"\necn = \"{ecn}\"\n"),
        ));
        assert_eq!(e.path, "flows[0].ecn", "{cc}/{ecn}");
        assert!(e.message.contains("its own codec"), "{}", e.message);
    }
    for (cc, ecn) in [
        ("dctcp", "dctcp"),
        ("newreno", "ecn"),
        ("cubic", "dctcp"),
        ("newreno", "none"),
    ] {
        parse_toml(&dumbbell(
            "",
            &format!("{ONE_FLOW}cc = \"{cc}\"\necn = \"{ecn}\"\n"),
        ))
        .unwrap();
    }
}

/// Found by scenario_fuzz: `framing = 4294967295` wrapped a packet's length on the wire (a
/// u32) to almost nothing.
#[test]
fn framing_is_bounded() {
    let text = dumbbell("", ONE_FLOW).replace(
        "access = { rate = \"1Gbps\", delay = \"1ms\" }",
        "access = { rate = \"1Gbps\", delay = \"1ms\", framing = 4294967295 }",
    );
    let e = refused(&text);
    assert_eq!(e.path, "topology.access.framing");
    parse_toml(&text.replace("4294967295", "38")).unwrap();
}

/// A seed or a count above 2^63 − 1 (JSON, `--seed`) ran, but the scenario as run could not
/// be written back as TOML: run.json's scenario said "could not be rendered".
#[test]
fn integers_beyond_what_toml_holds_are_refused() {
    let json = r#"{"duration": "1s", "seed": 9223372036854775808,
        "topology": {"kind": "dumbbell", "left": 1, "right": 1,
            "access": {"rate": "1Gbps", "delay": "1ms"}, "bottleneck": {"rate": "10Mbps", "delay": "1ms"}}}"#;
    let e = ecnlab::scenario::parse_json(json).unwrap_err();
    assert_eq!(e.path, "seed");
    let json = json.replace("9223372036854775808", "1").replace(
        "\"delay\": \"1ms\"}}}",
        "\"delay\": \"1ms\"}, \"bottleneck_queue\": {\"kind\": \"droptail\", \"bytes\": true, \"limit\": 18446744073709551615}}}",
    );
    let e = ecnlab::scenario::parse_json(&json).unwrap_err();
    assert_eq!(e.path, "topology.bottleneck_queue.limit", "{e}");
    let s = ecnlab::scenario::parse_json(&json.replace("18446744073709551615", "100")).unwrap();
    let e = run(
        &s,
        RunOptions {
            seed: Some(u64::MAX),
            ..Default::default()
        },
    )
    .err()
    .expect("refused");
    assert!(e.to_string().contains("seed"), "{e}");
}

/// Found by the Python fuzzing: serde_json's fast float parsing read 0.9884320570288233 as
/// 0.9884320570288232, so a RED max_p given from Python was not the one used.
#[test]
fn floats_from_json_are_the_floats_given() {
    let json = r#"{"duration": "1s",
        "topology": {"kind": "dumbbell", "left": 1, "right": 1,
            "access": {"rate": "1Gbps", "delay": "1ms"}, "bottleneck": {"rate": "10Mbps", "delay": "1ms"},
            "bottleneck_queue": {"kind": "red", "limit": 100, "min_th": 5, "max_th": 15, "max_p": 0.9884320570288233}}}"#;
    let s = ecnlab::scenario::parse_json(json).unwrap();
    let max_p = s.to_json();
    assert!(max_p.contains("0.9884320570288233"), "{max_p}");
    let toml = ecnlab::scenario::resolved_toml(&s).unwrap();
    assert!(toml.contains("max_p = 0.9884320570288233"), "{toml}");
}
