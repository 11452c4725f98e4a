//! Property-based fuzzing of the scenario schema: scenarios of every topology with values at
//! the edges of every numeric key (0, negative, NaN and infinities, 2^31, 2^32 ± 1, 2^53 + 1,
//! 2^63 − 1, 2^64 ± 1, tiny and huge units, wrong types) and a random structure (keys left
//! out, unknown keys, tables where numbers belong). The property: every scenario is either
//! refused with an error that names a key (or, for broken TOML, a line), or accepted, and
//! then its resolved form reads back to the same scenario, the network is built with exactly
//! the values given (buffer limits, rates, delays), and a short run completes. Never a
//! panic, a wrap, or a hang (each case has `CASE_TIMEOUT`).
//!
//! `ECNLAB_FUZZ_SCENARIOS` sets the number of cases (default 2000; more on demand:
//! `ECNLAB_FUZZ_SCENARIOS=100000 cargo test --release --test scenario_fuzz -- --nocapture`).
//! The cases come from a fixed seed, so a failure in the test suite is the same on every
//! machine; `ECNLAB_FUZZ_SEED` sets another (`random`: a new one, printed first, to explore).
//! A case's run is stopped at `MAX_LIVE_PACKETS` live packets (about 175 MB of packets),
//! well below the default bound, so that no case can exhaust a small test machine's memory;
//! a stopped run is one of the accepted outcomes.

use ecnlab::scenario::{self, parse_toml, resolved_toml, RunError, RunOptions, Topology};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::io::Write;
use std::sync::mpsc;
use std::time::Duration as WallTime;

/// Wall time one case may take (parse, build, and a run of at most 50 simulated ms; a
/// debug build under load): a case that takes longer hangs.
const CASE_TIMEOUT: WallTime = WallTime::from_secs(120);

/// The seed of the test suite's cases.
const DEFAULT_SEED: u64 = 0x5eed_ec17_1ab0_0001;

/// Packets alive at once beyond which a case's run stops (its error is an accepted outcome).
const MAX_LIVE_PACKETS: u64 = 1_000_000;

fn run_options() -> RunOptions<'static> {
    RunOptions {
        max_live_packets: Some(MAX_LIVE_PACKETS),
        ..RunOptions::default()
    }
}

/// `ECNLAB_FUZZ_SEED`: a number, or `random` for a new seed from the clock.
fn seed() -> u64 {
    match std::env::var("ECNLAB_FUZZ_SEED").ok().as_deref() {
        None | Some("") => DEFAULT_SEED,
        Some("random") => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(DEFAULT_SEED, |d| d.as_nanos() as u64),
        Some(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("ECNLAB_FUZZ_SEED: {v:?} is neither a number nor random")),
    }
}

fn cases() -> u32 {
    std::env::var("ECNLAB_FUZZ_SCENARIOS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

/// Integers at the edges of the types that hold them, as TOML writes them (TOML's integers
/// are 64-bit signed: the last two are syntax errors, as they would be in a user's file).
const INTS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "7",
    "100",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "4294967297",
    "9007199254740993",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551617",
];
const FLOATS: &[&str] = &[
    "0.0",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "5e-324",
    "1e-300",
    "0.001",
    "0.5",
    "1.5",
    "1e300",
    "4294967296.0",
    "1.8446744073709552e19",
];
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1e-20",
    "0.4",
    "1",
    "1.5",
    "1e6",
    "1e7",
    "1e20",
    "nan",
    "inf",
    "-inf",
    "18446744073709551617",
];
const TIME_UNITS: &[&str] = &["ps", "ns", "us", "ms", "s", "min", "", "h"];
const RATE_UNITS: &[&str] = &["bps", "kbps", "Mbps", "Gbps", "Tbps", "", "Pbps"];
const SIZE_UNITS: &[&str] = &["B", "KB", "KiB", "Mb", "GB", "b", "", "TB"];
const WRONG: &[&str] = &[
    "true",
    "\"x\"",
    "[]",
    "{}",
    "[1, 2]",
    "{ kind = \"droptail\" }",
    "\"\"",
];

/// A TOML value at an edge: a number, a quantity with a unit, or a wrong type.
fn edge() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(INTS).prop_map(String::from),
        3 => prop::sample::select(FLOATS).prop_map(String::from),
        2 => (prop::sample::select(NUMBERS), prop::sample::select(TIME_UNITS))
            .prop_map(|(n, u)| format!("\"{n}{u}\"")),
        2 => (prop::sample::select(NUMBERS), prop::sample::select(RATE_UNITS))
            .prop_map(|(n, u)| format!("\"{n}{u}\"")),
        2 => (prop::sample::select(NUMBERS), prop::sample::select(SIZE_UNITS))
            .prop_map(|(n, u)| format!("\"{n}{u}\"")),
        1 => prop::sample::select(WRONG).prop_map(String::from),
    ]
}

/// Scenario templates: every `{name}` is a slot with a sensible value that a case may replace
/// by an edge value or leave out.
const DUMBBELL: &str = r#"
duration = {duration}
seed = {seed}
[topology]
kind = "dumbbell"
left = {left}
right = {right}
access = { rate = {access_rate}, delay = {access_delay}, framing = {framing} }
bottleneck = { rate = {rate}, delay = {delay}, schedule = [{ at = {at}, rate = {rate2} }], batch = { max_pkts = {max_pkts}, max_bytes = {max_bytes}, max_airtime = {airtime}, overhead = {overhead} } }
bottleneck_queue = { kind = "red", limit = {limit}, min_th = {min_th}, max_th = {max_th}, max_p = {max_p}, w_q = {w_q}, mean_pkt_size = {mean_pkt} }
access_queue = { kind = "droptail", limit = {access_limit}, bytes = {bytes} }
[tcp]
mss = {mss}
initial_window = {iw}
[[flows]]
src = "l0"
dst = "r0"
size = {size}
start = {start}
count = {count}
stagger = {stagger}
start_jitter = {jitter}
[[flows]]
kind = "udp"
src = "l0"
dst = "r0"
rate = {udp_rate}
packet_size = {packet_size}
on = {on}
off = {off}
stop = {stop}
[[workloads]]
src = ["l0"]
dst = ["r0"]
arrival_rate = {arrival}
sizes = { dist = "pareto", mean = {mean}, shape = {shape} }
max_flows = {max_flows}
[measure]
interval = {interval}
[limits]
events = {events}
flows = {flows}
nodes = {nodes}
"#;

const CHAIN: &str = r#"
duration = {duration}
[topology]
kind = "chain"
hops = {hops}
end_hosts = {end_hosts}
cross_hosts = {cross_hosts}
link = { rate = {rate}, delay = {delay} }
access = { rate = {access_rate}, delay = {access_delay} }
queue = { kind = "droptail", limit = {limit} }
marker = { kind = "step", k = {threshold} }
[[flows]]
src = "l0"
dst = "r0"
ecn = "ecn"
cc = "newreno"
stop = {stop}
[measure]
interval = {interval}
[limits]
events = {events}
nodes = {nodes}
"#;

const CAMPUS: &str = r#"
duration = {duration}
[topology]
kind = "campus"
clients = {clients}
servers = {servers}
buffer = {buffer}
wan_delay = {delay}
wireless = { rate = {rate}, delay = {access_delay} }
ap_queue = { kind = "mecn", limit = {limit} }
[[flows]]
src = "s0"
dst = "c0"
cc = "cubic"
size = {size}
[limits]
events = {events}
nodes = {nodes}
"#;

const EXPLICIT: &str = r#"
duration = {duration}
[topology]
kind = "explicit"
nodes = [{ name = "a", kind = "host" }, { name = "r", kind = "router" }, { name = "b", kind = "host" }]
links = [{ a = "a", b = "r", rate = {access_rate}, delay = {access_delay} }, { a = "r", b = "b", rate = {rate}, delay = {delay}, queue = { kind = "codel", limit = {limit}, target = {target}, interval = {codel_interval} } }]
[[flows]]
src = "a"
dst = "b"
size = {size}
[limits]
events = {events}
"#;

/// Sensible values of the slots (a case starts from these).
const DEFAULTS: &[(&str, &str)] = &[
    ("duration", "\"20ms\""),
    ("seed", "1"),
    ("left", "1"),
    ("right", "1"),
    ("hops", "2"),
    ("end_hosts", "1"),
    ("cross_hosts", "1"),
    ("clients", "1"),
    ("servers", "1"),
    ("access_rate", "\"1Gbps\""),
    ("access_delay", "\"1ms\""),
    ("framing", "0"),
    ("rate", "\"10Mbps\""),
    ("rate2", "\"20Mbps\""),
    ("at", "\"5ms\""),
    ("delay", "\"2ms\""),
    ("max_pkts", "64"),
    ("max_bytes", "\"64KB\""),
    ("airtime", "\"5ms\""),
    ("overhead", "\"100us\""),
    ("limit", "100"),
    ("min_th", "5"),
    ("max_th", "15"),
    ("max_p", "0.1"),
    ("w_q", "0.002"),
    ("mean_pkt", "1000"),
    ("access_limit", "1000"),
    ("bytes", "false"),
    ("mss", "1448"),
    ("iw", "10"),
    ("size", "\"20KB\""),
    ("start", "\"1ms\""),
    ("count", "2"),
    ("stagger", "\"1ms\""),
    ("jitter", "\"1ms\""),
    ("udp_rate", "\"1Mbps\""),
    ("packet_size", "1000"),
    ("on", "\"5ms\""),
    ("off", "\"5ms\""),
    ("stop", "\"15ms\""),
    ("arrival", "100.0"),
    ("mean", "\"10KB\""),
    ("shape", "1.5"),
    ("max_flows", "5"),
    ("interval", "\"1ms\""),
    ("events", "5000000"),
    ("flows", "1000"),
    // Keeps a case's network small enough to build a few times a case in a debug build.
    ("nodes", "3000"),
    ("threshold", "20"),
    ("buffer", "\"1MB\""),
    ("target", "\"5ms\""),
    ("codel_interval", "\"100ms\""),
];

/// What a case changes: for each slot, keep it, replace it by an edge value, or leave the
/// key out; and maybe a key the schema does not have.
#[derive(Clone, Debug)]
enum Slot {
    Keep,
    Edge(String),
    Omit,
}

fn slots() -> impl Strategy<Value = Vec<Slot>> {
    prop::collection::vec(
        prop_oneof![
            60 => Just(Slot::Keep),
            3 => edge().prop_map(Slot::Edge),
            1 => Just(Slot::Omit),
        ],
        DEFAULTS.len(),
    )
}

/// Fills a template: a left-out slot drops its `key = {slot}` (inline or on its own line).
fn fill(template: &str, slots: &[Slot]) -> String {
    let mut text = template.to_string();
    for ((name, default), slot) in DEFAULTS.iter().zip(slots) {
        let hole = format!("{{{name}}}");
        if !text.contains(&hole) {
            continue;
        }
        match slot {
            Slot::Keep => text = text.replace(&hole, default),
            Slot::Edge(v) => text = text.replace(&hole, v),
            Slot::Omit => {
                let mut out = String::new();
                for line in text.lines() {
                    if let Some(at) = line.find(&hole) {
                        // `key = {slot}` on its own line, or inside an inline table.
                        let before = &line[..at];
                        let key_start = before
                            .trim_end()
                            .trim_end_matches('=')
                            .trim_end()
                            .rfind(|c: char| c == ' ' || c == '{' || c == ',')
                            .map_or(0, |i| i + 1);
                        if key_start == 0 {
                            continue;
                        }
                        let mut rest = &line[at + hole.len()..];
                        rest = rest.strip_prefix(',').unwrap_or(rest);
                        let head = line[..key_start].trim_end_matches([' ', ',']);
                        let sep = if head.ends_with('{') || rest.trim_start().starts_with('}') {
                            " "
                        } else {
                            ", "
                        };
                        out += &format!("{head}{sep}{}\n", rest.trim_start());
                    } else {
                        out += line;
                        out += "\n";
                    }
                }
                text = out;
            }
        }
    }
    text
}

#[derive(Clone, Debug)]
struct Case {
    template: usize,
    slots: Vec<Slot>,
    unknown_key: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (0..4usize, slots(), prop::bool::weighted(0.05)).prop_map(|(template, slots, unknown_key)| {
        Case {
            template,
            slots,
            unknown_key,
        }
    })
}

fn text_of(c: &Case) -> String {
    let t = [DUMBBELL, CHAIN, CAMPUS, EXPLICIT][c.template];
    let mut text = fill(t, &c.slots);
    if c.unknown_key {
        text = text.replacen("[topology]\n", "[topology]\nleft_hosts = 3\n", 1);
    }
    text
}

/// The property, for one scenario text.
fn check(text: &str) -> Result<&'static str, String> {
    let s = match parse_toml(text) {
        Err(e) => {
            // Broken TOML is named by its line; everything else by its key.
            if e.path.is_empty() && !e.message.starts_with("line ") {
                return Err(format!("refused without a key: {e}"));
            }
            if e.message.is_empty() {
                return Err(format!("refused without a reason at {}", e.path));
            }
            refused_alike_when_only_read(text, &e)?;
            return Ok("refused");
        }
        Ok(s) => s,
    };
    // The resolved form reads back to the same scenario, and resolves to itself.
    let resolved = resolved_toml(&s).map_err(|e| format!("accepted, then refused: {e}"))?;
    let again =
        parse_toml(&resolved).map_err(|e| format!("resolved form refused: {e}\n{resolved}"))?;
    let resolved_again = resolved_toml(&again).map_err(|e| format!("{e}"))?;
    if resolved_again != resolved {
        return Err(format!(
            "resolving twice differs:\n{resolved}\n---\n{resolved_again}"
        ));
    }
    if again.duration != s.duration || again.seed != s.seed || again.limits != s.limits {
        return Err("the resolved form changed duration, seed or limits".into());
    }
    // The network is built with exactly the values given.
    let built =
        scenario::build(&s, s.seed, None).map_err(|e| format!("validated, then refused: {e}"))?;
    check_built(&s, &built.sim)?;
    // A short run completes (the templates run 20 ms; a case may make it longer).
    if s.duration.0 <= 50 * ecnlab::time::MS {
        match scenario::run(&s, run_options()) {
            Ok(out) => {
                let echoed = parse_toml(&out.scenario_toml)
                    .map_err(|e| format!("run.json's scenario is refused: {e}"))?;
                if resolved_toml(&echoed).ok().as_deref() != Some(resolved.as_str()) {
                    return Err("the scenario as run differs from the scenario as validated".into());
                }
                return Ok("ran");
            }
            Err(RunError::Invalid(e)) if e.message.contains("packets at t =") => {
                return Ok("stopped")
            }
            Err(e) => return Err(format!("the run failed: {e}")),
        }
    }
    Ok("built")
}

/// A scenario validation refuses is refused with the same key and message where it is only
/// read and its run's build checks it (ecnlab-run and the Python front: one build), under its
/// own seed and under another.
fn refused_alike_when_only_read(text: &str, want: &scenario::ScenarioError) -> Result<(), String> {
    let s = match scenario::read_toml(text) {
        Err(e) => return same_error(&e, want, "reading"),
        Ok(s) => s,
    };
    let other_seed = s.seed ^ 1;
    match scenario::check_before_run(&s, Some(other_seed)) {
        Err(e) => same_error(&e, want, "the check under another seed")?,
        Ok(()) => {
            return Err(format!(
                "validation refused ({want}), the check under another seed passed"
            ))
        }
    }
    scenario::check_before_run(&s, None).map_err(|e| format!("checked under its own seed: {e}"))?;
    match scenario::run(&s, run_options()) {
        Err(RunError::Invalid(e)) => same_error(&e, want, "the run"),
        Err(e) => Err(format!(
            "validation refused ({want}), the run failed otherwise: {e}"
        )),
        Ok(_) => Err(format!("validation refused ({want}), the run ran")),
    }
}

fn same_error(
    got: &scenario::ScenarioError,
    want: &scenario::ScenarioError,
    by: &str,
) -> Result<(), String> {
    if (&got.path, &got.message) != (&want.path, &want.message) {
        return Err(format!(
            "validation refused ({want}), {by} refused otherwise ({got})"
        ));
    }
    Ok(())
}

/// Buffer limits, link rates and delays of the built network are the scenario's.
fn check_built(s: &scenario::Scenario, sim: &ecnlab::Sim) -> Result<(), String> {
    let port = |name: &str| sim.ports.iter().find(|p| p.name == name);
    let (name, link, queue) = match &s.topology {
        Topology::Dumbbell(d) => ("rl->rr", &d.bottleneck, Some(&d.bottleneck_queue)),
        Topology::Chain(c) => ("c0->c1", &c.link, Some(&c.queue)),
        _ => return Ok(()),
    };
    let p = port(name).ok_or_else(|| format!("no port {name}"))?;
    if let Some(rate) = link.rate {
        let first = p.rate.steps()[0].1;
        let want = link
            .schedule
            .first()
            .filter(|st| st.at.0 == 0)
            .map_or(rate.0, |st| st.rate.0);
        if first != want {
            return Err(format!(
                "{name} runs at {first} bit/s; the scenario says {want}"
            ));
        }
    }
    if let Some(q) = queue {
        if let Some(limit) = q.params.get("limit").and_then(|v| v.as_u64()) {
            let got = match p.qdisc.limit() {
                ecnlab::aqm::Limit::Packets(n) => n as u64,
                ecnlab::aqm::Limit::Bytes(b) => b,
            };
            if got != limit {
                return Err(format!(
                    "{name} holds {got}; the scenario's limit is {limit}"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_scenario_is_refused_by_key_or_runs_as_written() {
    let n = cases();
    let seed = seed();
    // Written past the test harness's capture before any case, so that a run that is killed
    // still names the seed that reproduces it.
    let _ = writeln!(
        std::io::stderr(),
        "scenario_fuzz: seed {seed} (ECNLAB_FUZZ_SEED), {n} cases"
    );
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        ..Config::default()
    });
    let tally = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::<
        &'static str,
        u32,
    >::new()));
    let t2 = tally.clone();
    let result = runner.run(&case(), move |c| {
        let text = text_of(&c);
        if let Some(f) = std::env::var_os("ECNLAB_FUZZ_LAST_CASE") {
            // Where a case that takes the process down (out of memory) can be read after.
            let _ = std::fs::write(f, &text);
        }
        let (tx, rx) = mpsc::channel();
        let t = text.clone();
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(|| check(&t)).unwrap_or_else(|p| {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                Err(format!("panicked: {msg}"))
            });
            let _ = tx.send(r);
        });
        match rx.recv_timeout(CASE_TIMEOUT) {
            Ok(Ok(kind)) => {
                *t2.lock().unwrap().entry(kind).or_default() += 1;
                Ok(())
            }
            Ok(Err(why)) => Err(TestCaseError::fail(format!("{why}\n--- scenario:\n{text}"))),
            Err(_) => Err(TestCaseError::fail(format!(
                "no answer in {CASE_TIMEOUT:?}\n--- scenario:\n{text}"
            ))),
        }
    });
    let counts = tally.lock().unwrap().clone();
    // Written past the test harness's capture, so CI logs show how many cases were tried.
    let _ = writeln!(
        std::io::stderr(),
        "scenario_fuzz: {n} cases: {}",
        counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn the_templates_are_valid_as_they_stand() {
    for t in [DUMBBELL, CHAIN, CAMPUS, EXPLICIT] {
        let keep = vec![Slot::Keep; DEFAULTS.len()];
        let text = fill(t, &keep);
        assert_eq!(check(&text), Ok("ran"), "{text}");
    }
    // A left-out key leaves valid TOML.
    let mut omit = vec![Slot::Keep; DEFAULTS.len()];
    for (i, (name, _)) in DEFAULTS.iter().enumerate() {
        if ["framing", "max_bytes", "on", "off", "start"].contains(name) {
            omit[i] = Slot::Omit;
        }
    }
    let text = fill(DUMBBELL, &omit);
    assert!(
        !text.contains("framing") && !text.contains("max_bytes"),
        "{text}"
    );
    assert_eq!(check(&text), Ok("ran"), "{text}");
}
