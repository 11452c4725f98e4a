//! A bulk TCP flow whose application stops writing at a given time (`stop` on a TCP flow, as
//! an ns-2 FTP source stopped mid-run): the transfer ends with a FIN shortly after, everything
//! written is delivered, and the link is then left to the other flow.

use ecnlab::scenario::{self, RunOptions};

const TWO_FLOWS: &str = r#"
duration = "4s"
seed = 3
[topology]
kind = "dumbbell"
left = 2
right = 2
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
bottleneck_queue = { kind = "droptail", limit = 100 }
[tcp]
initial_window = 2
[[flows]]
name = "stopped"
src = "l0"
dst = "r0"
stop = "{stop}"
[[flows]]
name = "bulk"
src = "l1"
dst = "r1"
start = "500ms"
"#;

fn run(stop: &str) -> scenario::RunOutput {
    let s =
        scenario::parse_toml(&TWO_FLOWS.replace("{stop}", stop)).unwrap_or_else(|e| panic!("{e}"));
    scenario::run(&s, RunOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn flow_row(out: &scenario::RunOutput, name: &str) -> usize {
    (0..out.flows.rows())
        .find(|&r| out.flows.str("name", r) == Some(name))
        .expect("flow")
}

#[test]
fn stopped_bulk_flow_finishes_soon_after_its_stop_and_delivers_what_it_wrote() {
    let out = run("2s");
    let a = flow_row(&out, "stopped");
    let b = flow_row(&out, "bulk");
    let fct = out
        .flows
        .f64("fct_s", a)
        .expect("the stopped flow completed");
    // The last segment is written at 2 s; the window in flight then (and its repair, if
    // some of it was lost) drains within a few round trips.
    assert!(fct > 2.0 && fct < 3.0, "fct {fct}");
    let size = out
        .flows
        .f64("size_bytes", a)
        .expect("size set at the stop");
    let delivered = out.flows.f64("bytes_delivered", a).unwrap();
    assert_eq!(size, delivered);
    assert_eq!(size % 1448.0, 0.0, "whole segments: {size}");
    // Nothing written after 2 s: at most what 2 s of the 10 Mb/s link carried (1500-byte
    // packets of 1448 payload bytes) plus a buffer and a window in flight.
    assert!(
        size < 2.0 * 10e6 / 8.0 * 1448.0 / 1500.0 + 300_000.0,
        "size {size}"
    );
    let later = run("3s");
    let size3 = later
        .flows
        .f64("size_bytes", flow_row(&later, "stopped"))
        .unwrap();
    assert!(
        size3 > size + 300_000.0,
        "stop at 3 s wrote {size3}, at 2 s {size}"
    );
    // The other flow keeps going, and gets more of the link the earlier the first stops.
    assert!(out.flows.f64("fct_s", b).is_none());
    let got =
        |o: &scenario::RunOutput| o.flows.f64("bytes_delivered", flow_row(o, "bulk")).unwrap();
    assert!(got(&out) > got(&later), "{} vs {}", got(&out), got(&later));
}

#[test]
fn stop_is_checked() {
    let bad = |toml: String, key: &str| {
        let e = scenario::parse_toml(&toml).and_then(|s| scenario::validate(&s).map(|_| s));
        let e = e.unwrap_err();
        assert_eq!(e.path, key, "{e}");
    };
    bad(TWO_FLOWS.replace("{stop}", "0s"), "flows[0].stop");
    bad(
        TWO_FLOWS.replace("stop = \"{stop}\"", "stop = \"1s\"\nsize = 5000"),
        "flows[0].stop",
    );
}
