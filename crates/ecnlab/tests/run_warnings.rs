//! What a run says about itself: a bottleneck left idle by backlogged bulk flows, a flow
//! whose path writes none of the feedback its codec reads, an element that never acted.

use ecnlab::scenario::{self, RunOutput};

fn run_toml(text: &str) -> RunOutput {
    scenario::run_toml(text).unwrap_or_else(|e| panic!("{e}"))
}

/// One flow on a 100 Mb/s, 20 ms dumbbell (1 ms access links), 400-packet buffer.
fn dumbbell(queue: &str, marker: &str, flow: &str, tcp: &str) -> String {
    format!(
        r#"
duration = "10s"
[topology]
kind = "dumbbell"
left = 1
right = 1
access = {{ rate = "1Gbps", delay = "1ms" }}
bottleneck = {{ rate = "100Mbps", delay = "20ms" }}
bottleneck_queue = {queue}
{marker}
[[flows]]
src = "l0"
dst = "r0"
{flow}
[tcp]
mss = 1448
{tcp}
"#
    )
}

const DROPTAIL: &str = r#"{ kind = "droptail", limit = 400 }"#;

fn idle_warnings(out: &RunOutput) -> Vec<&String> {
    out.meta
        .warnings
        .iter()
        .filter(|w| w.contains("mostly idle"))
        .collect()
}

/// The busy percentage a warning states ("busy more than 5.4 % of that time").
fn busy_percent(w: &str) -> f64 {
    let rest = &w[w.find("busy more than ").expect("busy figure") + 15..];
    rest[..rest.find(" %").unwrap()].parse().unwrap()
}

/// A fixed 20-segment receive window on a path of about 44 ms holds the sender at
/// 20 · 1500 bytes per round trip: 5.45 % of 100 Mb/s, far below half. The warning names
/// the bottleneck and measures what the window allows.
#[test]
fn a_window_limited_bulk_flow_is_said_to_leave_its_bottleneck_idle() {
    let out = run_toml(&dumbbell(
        DROPTAIL,
        "",
        r#"cc = "newreno""#,
        "rcv_autotune = false\nrcv_buf = 28960",
    ));
    let w = idle_warnings(&out);
    assert_eq!(w.len(), 1, "{:?}", out.meta.warnings);
    assert!(w[0].contains("(the busiest: rl->rr)"), "{}", w[0]);
    let rtt = 2.0 * (1e-3 + 20e-3 + 1e-3) + 1500.0 * 8.0 * (2.0 / 1e9 + 1.0 / 100e6);
    let expect = 20.0 * 1500.0 * 8.0 / rtt / 100e6 * 100.0;
    let got = busy_percent(w[0]);
    assert!(
        (got - expect).abs() < 0.3,
        "busy {got} % against {expect:.2} %"
    );
    assert!(w[0].contains("from 1.0 s to 10.0 s"), "{}", w[0]);
}

/// The same flow with a window that can cover the path fills the link: no warning. A
/// window-limited flow that finishes is not judged (it was not held back for long).
#[test]
fn no_idle_warning_for_a_full_link_or_a_finished_flow() {
    let full = run_toml(&dumbbell(DROPTAIL, "", r#"cc = "newreno""#, ""));
    assert!(idle_warnings(&full).is_empty(), "{:?}", full.meta.warnings);
    assert!(full.port_value("rl->rr", "utilization").unwrap() > 0.8);
    let finished = run_toml(&dumbbell(
        DROPTAIL,
        "",
        "cc = \"newreno\"\nsize = \"2MB\"",
        "rcv_autotune = false\nrcv_buf = 28960",
    ));
    assert!(finished.flows.f64("fct_s", 0).is_some());
    assert!(
        idle_warnings(&finished).is_empty(),
        "{:?}",
        finished.meta.warnings
    );
}

fn feedback_warnings(out: &RunOutput) -> Vec<&String> {
    out.meta
        .warnings
        .iter()
        .filter(|w| w.contains("never hears"))
        .collect()
}

/// A VCP sender over routers without a VCP marker reads its own "low load" stamp forever;
/// DCTCP over a DropTail path never sees a CE mark. Both are said when the flow is built;
/// with the marker (or an ECN AQM) on the path, nothing is said.
#[test]
fn a_flow_whose_path_writes_none_of_its_feedback_is_said() {
    let bare = run_toml(&dumbbell(DROPTAIL, "", r#"cc = "vcp""#, ""));
    let w = feedback_warnings(&bare);
    assert_eq!(w.len(), 1, "{:?}", bare.meta.warnings);
    assert!(
        w[0].starts_with("flows[0].ecn: \"vcp\" reads vcp or ce feedback")
            && w[0].contains("(l0->rl, rl->rr, rr->r0)"),
        "{}",
        w[0]
    );
    let marked = run_toml(&dumbbell(
        DROPTAIL,
        r#"bottleneck_marker = { kind = "vcp" }"#,
        r#"cc = "vcp""#,
        "",
    ));
    assert!(
        feedback_warnings(&marked).is_empty(),
        "{:?}",
        marked.meta.warnings
    );

    let dctcp = run_toml(&dumbbell(DROPTAIL, "", r#"cc = "dctcp""#, ""));
    assert_eq!(
        feedback_warnings(&dctcp).len(),
        1,
        "{:?}",
        dctcp.meta.warnings
    );
    let red = r#"{ kind = "red", limit = 400, min_th = 30, max_th = 90, ecn = true }"#;
    let dctcp_red = run_toml(&dumbbell(red, "", r#"cc = "dctcp""#, ""));
    assert!(
        feedback_warnings(&dctcp_red).is_empty(),
        "{:?}",
        dctcp_red.meta.warnings
    );
    // Loss-based senders read nothing: nothing to say.
    let reno = run_toml(&dumbbell(DROPTAIL, "", r#"cc = "newreno""#, ""));
    assert!(
        feedback_warnings(&reno).is_empty(),
        "{:?}",
        reno.meta.warnings
    );
}

fn campus(element: &str, flows: usize, flow: &str) -> String {
    let mut t = format!(
        r#"
duration = "3s"
[topology]
kind = "campus"
clients = 1
wireless = {{ rate = "100Mbps", delay = "0s" }}
[[elements]]
node = "ap"
kind = "{element}"
port = "ap->wlan"
"#
    );
    for _ in 0..flows {
        t += &format!("[[flows]]\nsrc = \"s0\"\ndst = \"c0\"\n{flow}\n");
    }
    t
}

/// CLEAN at the access point writes CE itself: ECN flows through it hear the network.
#[test]
fn an_element_that_writes_feedback_counts_as_the_paths_feedback() {
    let out = run_toml(&campus("clean", 1, "cc = \"newreno\"\necn = \"ecn\""));
    assert!(
        feedback_warnings(&out).is_empty(),
        "{:?}",
        out.meta.warnings
    );
    let without = run_toml(&campus("apcc", 1, "cc = \"newreno\"\necn = \"ecn\""));
    assert_eq!(
        feedback_warnings(&without).len(),
        1,
        "{:?}",
        without.meta.warnings
    );
}

/// An APCC element that no connection crosses lowers no window: said, with its counters.
#[test]
fn an_element_that_never_acted_is_said() {
    let idle = run_toml(&campus("apcc", 0, ""));
    let w: Vec<&String> = idle
        .meta
        .warnings
        .iter()
        .filter(|w| w.contains("never acted"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", idle.meta.warnings);
    assert!(
        w[0].starts_with("elements[0] (apcc on ap) never acted over the run (windows_lowered = 0"),
        "{}",
        w[0]
    );
    let busy = run_toml(&campus("apcc", 1, "cc = \"cubic\""));
    assert!(
        !busy.meta.warnings.iter().any(|w| w.contains("never acted")),
        "{:?}",
        busy.meta.warnings
    );
}

/// Two bulk flows one after the other (the first a 5 MB transfer that completes, the second
/// starting at 6 s): each is judged from its own start, so the idle gap between them is no
/// stall. A flow behind a slow access link that a busy shared bottleneck holds back is not
/// idle either: its path's busiest port is what counts, not its slowest.
#[test]
fn no_idle_warning_between_flows_or_behind_a_slow_access_link() {
    let one_after_another = run_toml(&dumbbell(
        DROPTAIL,
        "",
        "cc = \"newreno\"\nsize = \"5MB\"\n[[flows]]\nsrc = \"l0\"\ndst = \"r0\"\ncc = \"newreno\"\nstart = \"6s\"",
        "",
    ));
    assert!(one_after_another.flows.f64("fct_s", 0).is_some());
    assert!(
        idle_warnings(&one_after_another).is_empty(),
        "{:?}",
        one_after_another.meta.warnings
    );

    // l0 reaches the 10 Mb/s bottleneck through a 5 Mb/s access link; l1's flow keeps the
    // bottleneck busy, so l0's flow gets less than its access rate.
    let slow_access = run_toml(
        r#"
duration = "10s"
[topology]
kind = "explicit"
nodes = [{ name = "l0", kind = "host" }, { name = "l1", kind = "host" }, { name = "r0", kind = "host" },
         { name = "a", kind = "router" }, { name = "b", kind = "router" }]
links = [{ a = "l0", b = "a", rate = "5Mbps", delay = "1ms" },
         { a = "l1", b = "a", rate = "1Gbps", delay = "1ms" },
         { a = "a", b = "b", rate = "10Mbps", delay = "20ms", queue = { kind = "droptail", limit = 100 } },
         { a = "b", b = "r0", rate = "1Gbps", delay = "1ms" }]
[[flows]]
src = "l0"
dst = "r0"
cc = "newreno"
[[flows]]
src = "l1"
dst = "r0"
cc = "newreno"
count = 4
"#,
    );
    assert!(slow_access.port_value("a->b", "utilization").unwrap() > 0.9);
    assert!(
        idle_warnings(&slow_access).is_empty(),
        "{:?}",
        slow_access.meta.warnings
    );
}

/// MECN over a classic RED/ECN router reads its CE as "moderate": it hears the network.
/// VCP3's level travels in its own header: a one-bit UNO router does not write it.
#[test]
fn the_feedback_check_knows_what_each_codec_reads() {
    let red = r#"{ kind = "red", limit = 400, min_th = 30, max_th = 90, ecn = true }"#;
    let mecn = run_toml(&dumbbell(red, "", r#"cc = "mecn""#, ""));
    assert!(
        feedback_warnings(&mecn).is_empty(),
        "{:?}",
        mecn.meta.warnings
    );
    let vcp3 = run_toml(&dumbbell(
        DROPTAIL,
        r#"bottleneck_marker = { kind = "uno" }"#,
        r#"cc = "vcp3""#,
        "",
    ));
    assert_eq!(
        feedback_warnings(&vcp3).len(),
        1,
        "{:?}",
        vcp3.meta.warnings
    );
    let ecn_over_uno = run_toml(&dumbbell(
        DROPTAIL,
        r#"bottleneck_marker = { kind = "uno" }"#,
        "cc = \"newreno\"\necn = \"ecn\"",
        "",
    ));
    assert_eq!(
        feedback_warnings(&ecn_over_uno).len(),
        1,
        "{:?}",
        ecn_over_uno.meta.warnings
    );
}
