"""Invalid scenarios: each is refused before anything runs, with a message that names the
offending key, exit code 2, no traceback, and no output directory left behind.

Each case is a TOML scenario and the key path the message must start with. Cases go through
``ecnlab run`` in-process (the same ``main`` the command runs) and through the API
(``ecnlab.validate`` → ``ScenarioError.path``); a few also go through the installed command
in a separate process.
"""

from __future__ import annotations

import pytest

import ecnlab
from ecnlab.cli import main

from conftest import run_cli

HEAD = 'duration = "1s"\n'
DUMBBELL = """
[topology]
kind = "dumbbell"
left = 2
right = 2
access = { rate = "1Gbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
"""
UDP = """
[[flows]]
kind = "udp"
src = "l0"
dst = "r0"
rate = "1Mbps"
"""
TCP = """
[[flows]]
src = "l0"
dst = "r0"
cc = "newreno"
"""


EXPLICIT = """
[topology]
kind = "explicit"
nodes = [{{ name = "{a}", kind = "host" }}, {{ name = "b", kind = "host" }}]
links = [{{ a = "{a}", b = "b", rate = "1Mbps", delay = "1ms" }}]
[measure]
pcap = ["{a}->b"]
"""


def dumbbell(**over: str) -> str:
    """The dumbbell with some lines of the [topology] table replaced or added."""
    lines = DUMBBELL.strip().splitlines()
    for key, value in over.items():
        line = f"{key} = {value}"
        for i, old in enumerate(lines):
            if old.startswith(f"{key} ="):
                lines[i] = line
                break
        else:
            lines.append(line)
    return "\n" + "\n".join(lines) + "\n"


def udp(**over: str) -> str:
    body = "\n[[flows]]\n" + "".join(
        f"{k} = {v}\n" for k, v in {"kind": '"udp"', "src": '"l0"', "dst": '"r0"', "rate": '"1Mbps"', **over}.items() if v is not None
    )
    return body


# (name, scenario, key path the message starts with[, text the message must also hold]).
# A TOML syntax error has no key path: the message gives the line. A missing key is named.
CASES: list[tuple] = [
    ("unknown_top_level_key", HEAD + 'colour = "red"\n' + DUMBBELL + UDP, "colour"),
    ("missing_duration", DUMBBELL + UDP, "duration", "missing (a required key)"),
    ("zero_duration", 'duration = "0s"\n' + DUMBBELL + UDP, "duration"),
    ("bad_time_unit", 'duration = "3 fortnights"\n' + DUMBBELL + UDP, "duration"),
    ("bad_delay_unit", HEAD + dumbbell(bottleneck='{ rate = "10Mbps", delay = "10 parsecs" }') + UDP, "topology.bottleneck.delay", "parsecs"),
    ("bad_rate_unit", HEAD + dumbbell(access='{ rate = "1 furlong", delay = "1ms" }') + UDP, "topology.access.rate", "furlong"),
    ("negative_link_rate", HEAD + dumbbell(bottleneck='{ rate = "-10Mbps", delay = "10ms" }') + UDP, "topology.bottleneck.rate", "must be positive"),
    ("negative_flow_rate", HEAD + DUMBBELL + udp(rate='"-4Mbps"'), "flows[0].rate"),
    ("unknown_topology_kind", HEAD + '[topology]\nkind = "ring"\n' + UDP, "topology.kind", "dumbbell, chain, campus, explicit"),
    ("zero_left_hosts", HEAD + dumbbell(left="0") + UDP, "topology.left"),
    ("text_for_a_number", HEAD + dumbbell(left='"three"') + UDP, "topology.left", '"three"'),
    ("unknown_queue_kind", HEAD + dumbbell(bottleneck_queue='{ kind = "fifo" }') + UDP, "topology.bottleneck_queue.kind"),
    ("droptail_zero_limit", HEAD + dumbbell(bottleneck_queue='{ kind = "droptail", limit = 0 }') + UDP, "topology.bottleneck_queue.limit"),
    ("unknown_queue_param", HEAD + dumbbell(bottleneck_queue='{ kind = "droptail", size = 5 }') + UDP, "topology.bottleneck_queue"),
    ("red_min_th_above_buffer", HEAD + dumbbell(bottleneck_queue='{ kind = "red", min_th = 200, max_th = 300, limit = 100 }') + UDP, "topology.bottleneck_queue"),
    ("red_max_below_min", HEAD + dumbbell(bottleneck_queue='{ kind = "red", min_th = 60, max_th = 30, limit = 100 }') + UDP, "topology.bottleneck_queue"),
    ("unknown_marker_kind", HEAD + dumbbell(bottleneck_marker='{ kind = "psychic" }') + UDP, "topology.bottleneck_marker.kind"),
    ("schedule_not_increasing", HEAD + dumbbell(bottleneck='{ rate = "10Mbps", delay = "1ms", schedule = [{ at = "2s", rate = "5Mbps" }, { at = "1s", rate = "8Mbps" }] }') + UDP, "topology.bottleneck.schedule[1].at"),
    ("link_to_unknown_node", HEAD + '[topology]\nkind = "explicit"\nnodes = [{ name = "a", kind = "host" }, { name = "b", kind = "host" }]\nlinks = [{ a = "a", b = "z", rate = "1Mbps", delay = "1ms" }]\n', "topology.links[0].b"),
    ("duplicate_node_name", HEAD + '[topology]\nkind = "explicit"\nnodes = [{ name = "a", kind = "host" }, { name = "a", kind = "router" }]\nlinks = []\n', "topology.nodes[1].name"),
    ("flow_between_unconnected_hosts", HEAD + '[topology]\nkind = "explicit"\nnodes = [{ name = "a", kind = "host" }, { name = "b", kind = "host" }, { name = "c", kind = "host" }, { name = "d", kind = "host" }]\nlinks = [{ a = "a", b = "b", rate = "1Mbps", delay = "1ms" }]\n' + udp(src='"a"', dst='"c"'), "flows[0]"),
    ("flow_from_unknown_host", HEAD + DUMBBELL + udp(src='"l9"'), "flows[0].src"),
    ("flow_to_a_router", HEAD + DUMBBELL + udp(dst='"rr"'), "flows[0].dst"),
    ("flow_to_itself", HEAD + DUMBBELL + udp(dst='"l0"'), "flows[0].dst"),
    ("udp_flow_without_rate", HEAD + DUMBBELL + udp(rate=None), "flows[0].rate"),
    ("tcp_option_on_udp_flow", HEAD + DUMBBELL + udp(cc='"newreno"'), "flows[0].cc"),
    ("udp_option_on_tcp_flow", HEAD + DUMBBELL + TCP + 'rate = "1Mbps"\n', "flows[0].rate"),
    ("unknown_flow_kind", HEAD + DUMBBELL + udp(kind='"sctp"'), "flows[0].kind"),
    ("unknown_flow_key", HEAD + DUMBBELL + udp(colour='"red"'), "flows[0].colour"),
    ("udp_packet_too_small", HEAD + DUMBBELL + udp(packet_size="10"), "flows[0].packet_size"),
    ("udp_stop_before_start", HEAD + DUMBBELL + udp(start='"0.8s"', stop='"0.5s"'), "flows[0].stop"),
    ("udp_unknown_codepoint", HEAD + DUMBBELL + udp(udp_ecn='"ce"'), "flows[0].udp_ecn"),
    ("zero_count", HEAD + DUMBBELL + udp(count="0"), "flows[0].count"),
    ("unknown_congestion_controller", HEAD + DUMBBELL + TCP.replace('"newreno"', '"warp-drive"'), "flows[0].cc"),
    ("unknown_port_override", HEAD + DUMBBELL + UDP + '[[ports]]\nport = "x->y"\nqueue = { kind = "droptail", limit = 5 }\n', "ports[0].port"),
    ("unknown_sampled_port", HEAD + DUMBBELL + UDP + '[measure]\nsample_ports = ["rl->nowhere"]\n', "measure.sample_ports[0]"),
    ("unknown_pcap_port", HEAD + DUMBBELL + UDP + '[measure]\npcap = ["l0->l1"]\n', "measure.pcap[0]"),
    ("zero_sample_interval", HEAD + DUMBBELL + UDP + '[measure]\ninterval = "0s"\n', "measure.interval"),
    ("unknown_ip_id_mode", HEAD + DUMBBELL + UDP + '[hosts]\nip_id = "fibonacci"\n', "hosts.ip_id"),
    ("workload_without_rate", HEAD + DUMBBELL + '[[workloads]]\nsrc = ["l0"]\ndst = ["r0"]\nsizes = { dist = "fixed", size = "10KB" }\n', "workloads[0]"),
    ("pareto_shape_at_most_one", HEAD + DUMBBELL + '[[workloads]]\nsrc = ["l0"]\ndst = ["r0"]\narrival_rate = 10.0\nsizes = { dist = "pareto", mean = "10KB", shape = 1.0 }\n', "workloads[0].sizes.shape"),
    ("toml_syntax_error", HEAD + "[topology\nkind = 3\n", "", "line 2"),
    # Names become file names (pcap) and table keys: a documented character set.
    ("node_name_with_a_space", HEAD + EXPLICIT.format(a="a b") + udp(src='"a b"', dst='"b"'), "topology.nodes[0].name"),
    ("node_name_with_dots_and_slashes", HEAD + EXPLICIT.format(a="../../pwned") + udp(src='"../../pwned"', dst='"b"'), "topology.nodes[0].name", "is not allowed: use 1 to 64 characters"),
    ("node_name_absolute_path", HEAD + EXPLICIT.format(a="/abs/evil") + udp(src='"/abs/evil"', dst='"b"'), "topology.nodes[0].name", "is not allowed"),
    ("node_name_starting_with_a_dot", HEAD + EXPLICIT.format(a=".hidden") + udp(src='".hidden"', dst='"b"'), "topology.nodes[0].name"),
    ("node_name_with_an_arrow", HEAD + EXPLICIT.format(a="x->y") + udp(src='"x->y"', dst='"b"'), "topology.nodes[0].name"),
    ("node_name_empty", HEAD + EXPLICIT.format(a="") + udp(src='""', dst='"b"'), "topology.nodes[0].name"),
    ("node_name_too_long", HEAD + EXPLICIT.format(a="n" * 65) + udp(src=f'"{"n" * 65}"', dst='"b"'), "topology.nodes[0].name"),
    ("flow_name_with_a_slash", HEAD + DUMBBELL + udp(name='"a/b"'), "flows[0].name", "flow name"),
    ("duplicate_flow_names", HEAD + DUMBBELL + udp(name='"x"') + udp(name='"x"'), "flows[1].name", 'duplicate flow name "x"'),
    ("duplicate_names_from_copies", HEAD + DUMBBELL + udp(name='"x"', count="2") + udp(name='"x.1"'), "flows[1].name", "duplicate"),
    ("parallel_links", HEAD + '[topology]\nkind = "explicit"\nnodes = [{ name = "a", kind = "host" }, { name = "b", kind = "host" }]\nlinks = [{ a = "a", b = "b", rate = "1Mbps", delay = "1ms" }, { a = "b", b = "a", rate = "2Mbps", delay = "1ms" }]\n', "topology.links[1].b", "already joins"),
    ("red_min_th_at_the_buffer", HEAD + dumbbell(bottleneck_queue='{ kind = "red", min_th = 100, max_th = 150, limit = 100 }') + UDP, "topology.bottleneck_queue", "not below the buffer limit"),
    ("step_marker_k_above_the_buffer", HEAD + dumbbell(bottleneck_queue='{ kind = "droptail", limit = 50 }', bottleneck_marker='{ kind = "step", k = 80 }') + UDP, "topology.bottleneck_marker.k", "not below the buffer limit (50 packets)"),
    ("dctcp_without_ecn", HEAD + DUMBBELL + TCP.replace('"newreno"', '"dctcp"') + 'ecn = "none"\n', "flows[0].ecn", 'use ecn = "dctcp"'),
    ("eecn_without_ecn", HEAD + DUMBBELL + TCP.replace('"newreno"', '"eecn"') + 'ecn = "none"\n', "flows[0].ecn", "never deliver"),
    ("stagger_without_count", HEAD + DUMBBELL + udp(stagger='"10ms"'), "flows[0].stagger", "give count"),
    ("duration_below_a_picosecond", 'duration = "0.1ps"\n' + DUMBBELL + UDP, "duration", "resolution of 1 ps"),
    ("delay_below_a_picosecond", HEAD + dumbbell(bottleneck='{ rate = "10Mbps", delay = "0.4ps" }') + UDP, "topology.bottleneck.delay", "resolution"),
    ("duration_overflows", 'duration = "1e400s"\n' + DUMBBELL + UDP, "duration", "too long"),
    ("duration_nan", "duration = nan\n" + DUMBBELL + UDP, "duration", "must be a number"),
    ("rate_nan", HEAD + DUMBBELL + udp(rate="nan"), "flows[0].rate", 'got "NaN"'),
]


def test_there_are_at_least_twenty_cases():
    assert len(CASES) >= 20
    assert len({c[0] for c in CASES}) == len(CASES)


def _starts_with_path(text: str, path: str) -> bool:
    return text.startswith(f"error: {path}") if path else text.startswith("error: ")


@pytest.mark.parametrize("name,toml,path,needle", [(*c, "")[:4] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_scenario_exit_2_names_key_and_writes_nothing(name, toml, path, needle, tmp_path, capsys):
    scen = tmp_path / f"{name}.toml"
    scen.write_text(toml)
    out = tmp_path / "out" / "result"
    code = main(["run", str(scen), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert _starts_with_path(err, path), f"expected the message to name {path!r}: {err!r}"
    assert needle in err
    assert "Traceback" not in err
    assert not out.exists() and not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == [scen.name]
    # The API names the same key.
    with pytest.raises(ecnlab.ScenarioError) as e:
        ecnlab.validate(toml)
    assert e.value.path.startswith(path) if path else True
    assert e.value.message


@pytest.mark.parametrize("name", ["negative_flow_rate", "unknown_queue_kind", "udp_flow_without_rate"])
def test_invalid_scenario_through_the_installed_command(name, tmp_path):
    _, toml, path = next(c for c in CASES if c[0] == name)[:3]
    scen = tmp_path / "s.toml"
    scen.write_text(toml)
    p = run_cli("run", scen, "--out", tmp_path / "o")
    assert p.returncode == 2
    assert p.stderr.startswith(f"error: {path}")
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "o").exists()


def test_json_scenario_errors_name_the_key(tmp_path, capsys):
    scen = tmp_path / "s.json"
    scen.write_text('{"duration": "1s", "topology": {"kind": "dumbbell", "left": 1, "right": 1, '
                    '"access": {"rate": "1Gbps", "delay": "1ms"}, "bottleneck": {"rate": "1Mbps", "delay": "1ms"}}, '
                    '"flows": [{"kind": "udp", "src": "l0", "dst": "r0"}]}')  # fmt: skip
    assert main(["run", str(scen), "--out", str(tmp_path / "o"), "-q"]) == 2
    assert capsys.readouterr().err.startswith("error: flows[0].rate")


@pytest.mark.parametrize(
    "args,needle",
    [
        (["run", "/nonexistent/scenario.toml", "--out", "OUT"], "no such scenario file"),
        (["run", "DIR_AS_SCENARIO", "--out", "OUT"], "is a directory"),
        (["report", "/nonexistent/run"], "not a run directory"),
        (["reproduce", "no-such-paper", "--quick", "--out", "OUT"], "unknown experiment"),
        (["reproduce", "core.mdl"], "--out"),
        (["run", "SCEN", "--out", "OUT", "--seed", "-3"], "non-negative integer"),
        (["run", "SCEN", "--out", "NOT_A_RESULT_DIR"], "not an ecnlab result directory"),
        (["run", "SCEN", "--out", "LINK_TO_ELSEWHERE"], "exists and is not a directory"),
        (["run", "SCEN", "--out", "OUT", "--seed", "9223372036854775808"], "up to 2^63 − 1"),
    ],
)
def test_user_errors_exit_2_without_traceback(args, needle, tmp_path, udp_toml):
    scen = tmp_path / "s.toml"
    scen.write_text(udp_toml)
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "link").symlink_to(elsewhere)
    subst = {
        "OUT": str(tmp_path / "out"),
        "DIR_AS_SCENARIO": str(tmp_path),
        "SCEN": str(scen),
        "NOT_A_RESULT_DIR": str(foreign),
        "LINK_TO_ELSEWHERE": str(tmp_path / "link"),
    }
    p = run_cli(*[subst.get(a, a) for a in args])
    assert p.returncode == 2, p.stderr
    assert needle in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()
    assert (foreign / "thesis.tex").read_text() == "precious"
    assert list(elsewhere.iterdir()) == []
