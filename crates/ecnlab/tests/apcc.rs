//! The access-point path: a sender obeys the receive window (min(cwnd, rwnd)), and APCC's
//! rewritten windows hold the AP's queue near K on the campus tree while the wireless hop
//! stays busy.

use ecnlab::scenario::{self, RunOptions, RunOutput};

fn run_toml(text: &str) -> RunOutput {
    scenario::run_toml(text).unwrap_or_else(|e| panic!("{e}"))
}

fn port(out: &RunOutput, name: &str, col: &str) -> f64 {
    out.port_value(name, col).expect("port")
}

fn campus(flows: usize, cc: &str, extra: &str) -> String {
    let mut t = format!(
        r#"
duration = "8s"
[topology]
kind = "campus"
clients = {flows}
wireless = {{ rate = "100Mbps", delay = "0s" }}
{extra}
"#
    );
    for i in 0..flows {
        t += &format!("[[flows]]\nsrc = \"s0\"\ndst = \"c{i}\"\ncc = \"{cc}\"\n");
    }
    t
}

/// A fixed receive window (no autotuning) caps the flow at that many bytes per round trip whatever its cwnd.
/// 20 segments on a 100 Mb/s path that could take 176 per RTT: goodput 20·1448·8 bits per
/// ~20.4 ms, never more than the window queued. 400 segments: the link is full and the AP holds the 224 the
/// path cannot (CUBIC alone would fill the 12 MB buffer).
#[test]
fn the_sender_obeys_the_receive_window() {
    let rtt = 2.0 * (10e-3 + 3.0 * 50e-6) + 1500.0 * 8.0 / 100e6;
    let small = run_toml(
        &(campus(1, "cubic", "") + "[tcp]\nmss = 1448\nrcv_autotune = false\nrcv_buf = 28960\n"),
    );
    let g = small.flows.f64("goodput_bps", 0).unwrap();
    let expect = 28960.0 * 8.0 / rtt;
    assert!((g / expect - 1.0).abs() < 0.05, "goodput {g} vs {expect}");
    // The window arrives as a burst at the AP (1 Gb/s in, 100 Mb/s out): never more queued.
    assert!(port(&small, "ap->wlan", "max_queue_pkts") <= 20.0);
    let big = run_toml(
        &(campus(1, "cubic", "") + "[tcp]\nmss = 1448\nrcv_autotune = false\nrcv_buf = 579200\n"),
    );
    let q = port(&big, "ap->wlan", "max_queue_pkts");
    let bdp = 100e6 * rtt / (8.0 * 1500.0);
    assert!(
        q <= 400.0 - bdp + 3.0 && q >= 400.0 - bdp - 10.0,
        "AP queue {q}, BDP {bdp}"
    );
    assert_eq!(port(&big, "ap->wlan", "dropped_pkts"), 0.0);
    assert!(port(&big, "ap->wlan", "utilization") > 0.95);
}

/// Two CUBIC downloads through a 100 Mb/s wireless hop: without APCC they grow into the AP's
/// 12 MB buffer (hundreds of packets on average over 8 s, HyStart having left slow start
/// early); with it the queue stays near K = 20 packets and the hop stays busy.
#[test]
fn apcc_holds_the_ap_queue_near_k() {
    let without = run_toml(&campus(2, "cubic", ""));
    let elements = r#"
[[elements]]
node = "ap"
kind = "apcc"
port = "ap->wlan"
"#;
    let with = run_toml(&(campus(2, "cubic", "") + elements));
    let (q0, q1) = (
        port(&without, "ap->wlan", "mean_queue_pkts"),
        port(&with, "ap->wlan", "mean_queue_pkts"),
    );
    let (u0, u1) = (
        port(&without, "ap->wlan", "utilization"),
        port(&with, "ap->wlan", "utilization"),
    );
    eprintln!("mean queue {q0:.0} → {q1:.1} packets, utilisation {u0:.3} → {u1:.3}");
    eprintln!("{:?}", with.meta.elements);
    assert!(q0 > 300.0);
    assert!(q1 < 40.0);
    assert!(u1 > 0.85);
    let lowered = with.meta.elements[0]
        .1
        .iter()
        .find(|c| c.0 == "windows_lowered");
    assert!(lowered.unwrap().1 > 1000);
}

/// The AP-side rivals on the same campus path. CLEAN's proxied marks hold the queue short
/// with the hop busy; Zhuge measures the 100 Mb/s dequeue rate and holds ACKs once the queue
/// grows (CUBIC's HyStart leaves slow start before it does, so only about a hundred in 8 s).
#[test]
fn ap_elements_side_by_side() {
    let run = |kind: &str| {
        let el = format!("[[elements]]\nnode = \"ap\"\nkind = \"{kind}\"\nport = \"ap->wlan\"\n");
        run_toml(&(campus(2, "cubic", "") + "[tcp]\nmss = 1448\n" + &el))
    };
    let counter =
        |o: &RunOutput, name: &str| o.meta.elements[0].1.iter().find(|c| c.0 == name).unwrap().1;
    let clean = run("clean");
    let (u, q) = (
        port(&clean, "ap->wlan", "utilization"),
        port(&clean, "ap->wlan", "mean_queue_pkts"),
    );
    eprintln!(
        "CLEAN: utilisation {u:.3}, mean queue {q:.1} packets, {:?}",
        clean.meta.elements
    );
    assert!(u > 0.85 && q < 40.0);
    assert!(counter(&clean, "window_cuts") > 10);
    let zhuge = run("zhuge");
    eprintln!("Zhuge: {:?}", zhuge.meta.elements);
    let rate = counter(&zhuge, "dequeue_rate_bps") as f64;
    assert!((rate / 100e6 - 1.0).abs() < 0.02, "dequeue rate {rate}");
    assert!(counter(&zhuge, "acks_delayed") > 50);
}

/// The scenario written next to the results reads back as the one that ran (the campus
/// tree's buffer stays a size; the AP's queue and the element come back resolved).
#[test]
fn a_campus_scenario_as_run_reads_back() {
    let el = "[[elements]]\nnode = \"ap\"\nkind = \"apcc\"\nport = \"ap->wlan\"\n";
    let text = campus(1, "cubic", "buffer = \"12MB\"") + el;
    let first = run_toml(&text.replace("8s", "200ms"));
    let again = scenario::parse_toml(&first.scenario_toml)
        .unwrap_or_else(|e| panic!("{e}\n{}", first.scenario_toml));
    let second = scenario::run(&again, RunOptions::default()).unwrap();
    assert_eq!(first.scenario_toml, second.scenario_toml);
    assert!(
        first.scenario_toml.contains("buffer = \"12000000B\""),
        "{}",
        first.scenario_toml
    );
}
