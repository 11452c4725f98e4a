//! Invalid scenarios are refused before running, with the key path and what is allowed.

use ecnlab::scenario::parse_toml;

const BASE: &str = r#"
duration = "1s"
[topology]
kind = "dumbbell"
left = 2
right = 2
access = { rate = "1Gbps", delay = "1ms" }
bottleneck = { rate = "100Mbps", delay = "10ms" }
bottleneck_queue = { kind = "red", limit = 100, min_th = 30, max_th = 60 }
[[flows]]
src = "l0"
dst = "r0"
cc = "newreno"
[[flows]]
kind = "udp"
src = "l1"
dst = "r1"
rate = "10Mbps"
"#;

fn error_of(edit: (&str, &str)) -> (String, String) {
    assert!(
        BASE.contains(edit.0),
        "test edit does not apply: {}",
        edit.0
    );
    let text = BASE.replacen(edit.0, edit.1, 1);
    match parse_toml(&text) {
        Ok(_) => panic!("accepted: {}", edit.1),
        Err(e) => (e.path, e.message),
    }
}

#[test]
fn base_is_valid() {
    parse_toml(BASE).unwrap();
}

#[test]
fn errors_name_the_key_and_what_is_allowed() {
    let cases: &[((&str, &str), &str, &str)] = &[
        (
            ("cc = \"newreno\"", "cc = \"cubc\""),
            "flows[0].cc",
            "expected one of newreno, cubic",
        ),
        (
            ("cc = \"newreno\"", "cc = \"newreno\"\necn = \"ecm\""),
            "flows[0].ecn",
            "expected one of none, ecn",
        ),
        (
            (
                "cc = \"newreno\"",
                "cc = \"newreno\"\ncc_params = { abc_limt = 2 }",
            ),
            "flows[0].cc_params.abc_limt",
            "unknown field",
        ),
        (
            ("cc = \"newreno\"", "cc = \"newreno\"\ntcp = { mss = 0 }"),
            "flows[0].tcp.mss",
            "",
        ),
        (
            ("min_th = 30", "min_th = 130"),
            "topology.bottleneck_queue.min_th",
            "not below the buffer limit",
        ),
        (
            ("kind = \"red\"", "kind = \"redd\""),
            "topology.bottleneck_queue.kind",
            "expected one of droptail, red",
        ),
        (
            ("rate = \"100Mbps\"", "rate = \"-100Mbps\""),
            "topology.bottleneck.rate",
            "positive",
        ),
        (
            ("rate = \"100Mbps\"", "rate = \"100 furlongs\""),
            "topology.bottleneck.rate",
            "unknown rate unit",
        ),
        (
            ("kind = \"dumbbell\"", "kind = \"dumbell\""),
            "topology.kind",
            "expected one of dumbbell, chain, campus, explicit",
        ),
        (("left = 2", "left = 0"), "topology.left", "at least 1"),
        (
            (
                "bottleneck = { rate = \"100Mbps\", delay = \"10ms\" }",
                "bottleneck = { delay = \"10ms\" }",
            ),
            "topology.bottleneck.rate",
            "give the link a rate",
        ),
        (
            (
                "bottleneck = { rate = \"100Mbps\", delay = \"10ms\" }",
                "bottleneck = { delay = \"10ms\", trace = { file = \"/nonexistent.trace\" } }",
            ),
            "topology.bottleneck.trace.file",
            "cannot read \"/nonexistent.trace\"",
        ),
        (
            (
                "bottleneck = { rate = \"100Mbps\", delay = \"10ms\" }",
                "bottleneck = { rate = \"100Mbps\", delay = \"10ms\", trace = { file = \"x\" } }",
            ),
            "topology.bottleneck.trace",
            "not both",
        ),
        (
            (
                "bottleneck = { rate = \"100Mbps\", delay = \"10ms\" }",
                "bottleneck = { rate = \"100Mbps\", delay = \"10ms\", batch = { max_pkts = 0 } }",
            ),
            "topology.bottleneck.batch.max_pkts",
            "must be 1 to 4096",
        ),
        (
            (
                "[[flows]]\nsrc = \"l0\"",
                "[[elements]]\nnode = \"rl\"\nkind = \"apc\"\n[[flows]]\nsrc = \"l0\"",
            ),
            "elements[0].kind",
            "expected one of apcc",
        ),
        (
            (
                "[[flows]]\nsrc = \"l0\"",
                "[[elements]]\nnode = \"rl\"\nkind = \"apcc\"\nport = \"rr->r0\"\n[[flows]]\nsrc = \"l0\"",
            ),
            "elements[0].port",
            "is not a port of \"rl\"; its ports are rl->rr",
        ),
        (
            (
                "[[flows]]\nsrc = \"l0\"",
                "[[elements]]\nnode = \"rl\"\nkind = \"apcc\"\nport = \"rl->rr\"\neta = 1.5\n[[flows]]\nsrc = \"l0\"",
            ),
            "elements[0].eta",
            "(0, 1]",
        ),
        (
            ("dst = \"r0\"", "dst = \"r9\""),
            "flows[0].dst",
            "unknown node \"r9\"",
        ),
        (
            ("dst = \"r0\"", "dst = \"rl\""),
            "flows[0].dst",
            "is a router",
        ),
        (
            ("dst = \"r0\"", "dst = \"l0\""),
            "flows[0].dst",
            "same host",
        ),
        (
            ("rate = \"10Mbps\"", "size = 100"),
            "flows[1].size",
            "TCP option",
        ),
        (
            ("duration = \"1s\"", "duration = \"0s\""),
            "duration",
            "positive",
        ),
        (
            ("duration = \"1s\"", "duration = \"1s\"\nbogus = 3"),
            "bogus",
            "unknown field `bogus`",
        ),
        (
            ("cc = \"newreno\"", "cc = \"newreno\"\nrate = \"1Mbps\""),
            "flows[0].rate",
            "UDP option",
        ),
        (
            (
                "[[flows]]\nkind",
                "[[ports]]\nport = \"rl->zz\"\n[[flows]]\nkind",
            ),
            "ports[0].port",
            "unknown port",
        ),
    ];
    for ((from, to), path, msg) in cases {
        let (p, m) = error_of((from, to));
        assert_eq!(&p, path, "for {to:?}: got {p}: {m}");
        assert!(m.contains(msg), "for {to:?}: message {m:?} lacks {msg:?}");
    }
}

/// The load-factor markers share one meter; each names its interval by its own key.
#[test]
fn load_factor_markers_name_their_own_interval_key() {
    for (kind, key) in [
        ("vcp", "t_rho_s"),
        ("uno", "t_rho_s"),
        ("hfcc", "t_p_s"),
        ("mlcp", "t_p_s"),
        ("bmcc", "t_p_s"),
    ] {
        for (value, path, msg) in [
            ("-1", key, "must be positive".to_string()),
            ("0.005", "t_q_s", format!("at most {key} (0.005)")),
        ] {
            let marker = format!(
                "[[ports]]\nport = \"rl->rr\"\nmarker = {{ kind = \"{kind}\", {key} = {value} }}\n"
            );
            let (p, m) = error_of(("[[flows]]\nkind", &format!("{marker}[[flows]]\nkind")));
            assert_eq!(p, format!("ports[0].marker.{path}"), "{kind}: {m}");
            assert!(m.contains(&msg), "{kind}: {m:?} lacks {msg:?}");
        }
    }
}

#[test]
fn unconnected_hosts_have_no_route() {
    let text = r#"
duration = "1s"
[topology]
kind = "explicit"
nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" }, { name = "c", kind = "host" }, { name = "r", kind = "router" } ]
links = [ { a = "a", b = "r", rate = "1Gbps", delay = "1ms" }, { a = "b", b = "r", rate = "1Gbps", delay = "1ms" } ]
[[flows]]
src = "a"
dst = "c"
"#;
    let e = parse_toml(text).unwrap_err();
    assert_eq!(e.path, "flows[0]");
    assert!(e.message.contains("no route"), "{e}");
}

/// A buffer far larger than the traffic could ever fill in a sane scenario: the run stops
/// with an error naming the port instead of exhausting memory.
#[test]
fn runaway_backlog_stops_the_run_with_a_clear_error() {
    let text = r#"
duration = "100s"
[topology]
kind = "dumbbell"
left = 1
right = 1
access = { rate = "10Gbps", delay = "1us" }
bottleneck = { rate = "1Mbps", delay = "1ms" }
bottleneck_queue = { kind = "droptail", limit = 4000000000 }
access_queue = { kind = "droptail", limit = 1000000 }
[[flows]]
kind = "udp"
src = "l0"
dst = "r0"
rate = "10Gbps"
"#;
    let s = parse_toml(text).unwrap();
    let opts = ecnlab::scenario::RunOptions {
        max_live_packets: Some(20_000),
        ..Default::default()
    };
    match ecnlab::scenario::run(&s, opts) {
        Err(ecnlab::scenario::RunError::Invalid(e)) => {
            assert!(e.message.contains("port rl->rr holds"), "{e}");
            assert!(e.message.contains("4000000000 packets"), "{e}");
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a runaway queue ran to the end"),
    }
}
