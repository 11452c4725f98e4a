"""The ``ecnlab`` command as a user runs it (separate processes): run, report, reproduce,
help, replacing earlier results, and interruption."""

from __future__ import annotations

import base64
import json
import re
import signal
import subprocess
import time

import polars as pl
import pytest

from conftest import ECNLAB, run_cli

SUBCOMMANDS = ["run", "validate", "report", "reproduce"]


@pytest.mark.parametrize("args", [["--help"], *[[c, "--help"] for c in SUBCOMMANDS]])
def test_help_everywhere(args):
    p = run_cli(*args)
    assert p.returncode == 0
    assert "usage: ecnlab" in p.stdout


def test_no_command_prints_usage_and_exits_2():
    p = run_cli()
    assert p.returncode == 2
    assert "usage: ecnlab" in p.stderr


def test_run_writes_the_documented_layout(cli, udp_file, tmp_path):
    out = tmp_path / "res"
    p = cli("run", udp_file, "--out", out, "--seed", "11")
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in out.iterdir()) == ["flows.parquet", "ports.parquet", "run.json", "timeseries.parquet"]
    info = json.loads((out / "run.json").read_text())
    assert info["seed"] == 11
    assert info["scenario"]["seed"] == 11 and "seed = 11" in info["scenario_toml"]
    assert info["events"] > 0 and info["wall_s"] > 0
    assert info["packets"]["created"] == info["packets"]["delivered"] + info["packets"]["dropped"] + (
        info["packets"]["created"] - info["packets"]["delivered"] - info["packets"]["dropped"]
    )
    assert info["ecnlab_version"]
    ts = pl.read_parquet(out / "timeseries.parquet")
    assert ts.columns == ["time_s", "kind", "entity", "value"]
    flows = pl.read_parquet(out / "flows.parquet")
    assert flows["name"].to_list() == ["cbr"]
    assert flows["goodput_bps"][0] == pytest.approx(4e6, rel=0.01)
    # No stray temporary directories beside the result.
    assert [x.name for x in tmp_path.iterdir() if x.name.startswith(".")] == []


def test_run_is_quiet_without_a_terminal_and_with_quiet(cli, udp_file, tmp_path):
    p = cli("run", udp_file, "--out", tmp_path / "a")
    assert p.stderr == ""  # no progress bar when stderr is not a terminal
    assert p.stdout.startswith("wrote ")
    p = cli("run", udp_file, "--out", tmp_path / "b", "--quiet")
    assert p.stdout == "" and p.stderr == ""


def test_run_replaces_an_earlier_result(cli, udp_file, tmp_path):
    out = tmp_path / "res"
    assert cli("run", udp_file, "--out", out, "--seed", "1").returncode == 0
    (out / "leftover.txt").write_text("from the first run")
    assert cli("run", udp_file, "--out", out, "--seed", "2").returncode == 0
    assert json.loads((out / "run.json").read_text())["seed"] == 2
    assert not (out / "leftover.txt").exists()


def test_pcap_files_land_in_the_run_directory(cli, udp_toml, tmp_path):
    scen = tmp_path / "s.toml"
    scen.write_text(udp_toml + '\n[measure]\npcap = ["rl->rr"]\n')
    out = tmp_path / "res"
    p = cli("run", scen, "--out", out, "-q")
    assert p.returncode == 0, p.stderr
    pcap = out / "pcap" / "rl_to_rr.pcap"
    assert pcap.stat().st_size > 24 + 1000 * 16
    assert json.loads((out / "run.json").read_text())["pcap"] == ["rl_to_rr.pcap"]


def test_validate_prints_the_normalised_scenario(cli, udp_file):
    p = cli("validate", udp_file, "--print")
    assert p.returncode == 0
    assert 'kind = "droptail"' in p.stdout and "interval = " in p.stdout


def test_validate_print_shows_every_default_and_run_json_stores_exactly_that(cli, tmp_path):
    """Every component written out with the values it runs with: RED's max_p, w_q, gentle
    and wait, the marker's and the controller's parameters, all of [tcp], MECN's window cap;
    printing the printed scenario again gives the same text, and run.json holds it."""
    scen = tmp_path / "s.toml"
    scen.write_text(
        'duration = "1s"\n[topology]\nkind = "dumbbell"\nleft = 2\nright = 2\n'
        'access = { rate = "1Gbps", delay = "1ms" }\nbottleneck = { rate = "10Mbps", delay = "10ms" }\n'
        'bottleneck_queue = { kind = "red", limit = 100, min_th = 20, max_th = 60, ecn = true }\n'
        'bottleneck_marker = { kind = "step", k = 20 }\n'
        '[[flows]]\nname = "d"\nsrc = "l0"\ndst = "r0"\ncc = "dctcp"\n'
        '[[flows]]\nname = "m"\nsrc = "l1"\ndst = "r1"\ncc = "mecn"\n'
    )
    p = cli("validate", scen, "--print")
    assert p.returncode == 0, p.stderr
    import tomllib

    doc = tomllib.loads(p.stdout)
    red = doc["topology"]["bottleneck_queue"]
    assert {"max_p", "w_q", "gentle", "wait", "hard_drop", "mean_pkt_size"} <= set(red)
    assert doc["topology"]["bottleneck_marker"] == {"kind": "step", "k": 20, "bytes": False}
    assert {"mss", "delack_timeout_s", "rcv_buf", "min_rto_s", "initial_window"} <= set(doc["tcp"])
    d, m = doc["flows"]
    assert d["ecn"] == "dctcp" and "g" in d["cc_params"]
    assert m["ecn"] == "mecn" and "beta1" in m["cc_params"]
    again = tmp_path / "again.toml"
    again.write_text(p.stdout)
    assert cli("validate", again, "--print").stdout == p.stdout
    assert cli("run", scen, "--out", tmp_path / "o", "--quiet").returncode == 0
    info = json.loads((tmp_path / "o" / "run.json").read_text())
    assert info["scenario_toml"] == p.stdout


TCP_SCENARIO = """
name = "tcp mix"
duration = "3s"
[topology]
kind = "dumbbell"
left = 2
right = 2
access = { rate = "1Gbps", delay = "1ms" }
bottleneck = { rate = "20Mbps", delay = "10ms" }
bottleneck_queue = { kind = "droptail", limit = 100 }
[[flows]]
name = "bulk"
src = "l0"
dst = "r0"
cc = "newreno"
[[flows]]
name = "short"
src = "l1"
dst = "r1"
cc = "newreno"
size = "50KB"
count = 5
stagger = "200ms"
"""


def test_report_has_every_figure_embedded_and_no_external_resource(cli, tmp_path):
    scen = tmp_path / "tcp.toml"
    scen.write_text(TCP_SCENARIO)
    out = tmp_path / "res"
    assert cli("run", scen, "--out", out, "-q").returncode == 0
    p = cli("report", out)
    assert p.returncode == 0, p.stderr
    html = (out / "report.html").read_text()
    pngs = sorted(x.name for x in (out / "figures").glob("*.png"))
    # Queue of the bottleneck, cwnd and throughput of the flows, FCT of the finished flows.
    for expected in ["queue_rl__rr.png", "flow_cwnd_bytes.png", "flow_delivery_bps.png", "fct_cdf.png"]:
        assert expected in pngs
    embedded = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(embedded) == len(pngs)
    assert {base64.b64decode(e) for e in embedded} == {(out / "figures" / n).read_bytes() for n in pngs}
    assert all(base64.b64decode(e).startswith(b"\x89PNG") for e in embedded)
    # Self-contained: nothing to fetch.
    assert not re.search(r'(src|href)="(?!data:|#)', html)
    # The tables of ports and flows are there.
    assert "rl-&gt;rr" in html and "short.4" in html and "dropped_pkts" in html


def test_report_of_a_udp_run_without_flow_samples(cli, udp_file, tmp_path):
    out = tmp_path / "res"
    assert cli("run", udp_file, "--out", out, "-q", "--report").returncode == 0
    assert (out / "report.html").is_file()


def test_reproduce_list_names_the_core_experiment(cli):
    p = cli("reproduce", "--list")
    assert p.returncode == 0
    assert re.search(r"^core\.mdl\s+M/D/1", p.stdout, re.M)


def test_reproduce_quick_writes_report_summary_and_runs(cli, tmp_path):
    out = tmp_path / "core"
    p = cli("reproduce", "core", "--quick", "--out", out, "--seeds", "2")
    assert p.returncode == 0, p.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["experiment"] == "core"
    comps = summary["comparisons"]
    assert comps and all({"metric", "paper", "ours", "verdict", "decision"} <= set(c) for c in comps)
    # Two seeds cannot reach the rule's 5 % level: every claim says so instead of passing.
    assert all(c["verdict"] == "inconclusive" and "fewer than 5" in c["decision"]["reason"] for c in comps), comps
    assert "claims (default reading): 0 holds, 0 contradicted, 7 inconclusive, 0 not comparable" in p.stdout
    waits = [c for c in comps if c["metric"].startswith("mean wait")]
    assert all(c["ours"]["n"] == 2 and c["ours"]["min"] <= c["ours"]["mean"] <= c["ours"]["max"] for c in waits)
    runs = sorted(x.name for x in (out / "runs").iterdir())
    assert len(runs) == 4 * 2 and runs[0] == "core.mdl-rho0.30-s1"
    for r in runs:
        assert {"flows.parquet", "ports.parquet", "timeseries.parquet", "run.json"} <= {x.name for x in (out / "runs" / r).iterdir()}
    html = (out / "report.html").read_text()
    assert not re.search(r'(src|href)="(?!data:|#)', html)
    assert '<a href="#core.mdl">core.mdl</a>' in html and '<span class="na">7</span>' in html
    assert "Pollaczek" in html and html.count("data:image/png;base64,") == len(list((out / "figures").glob("*.png"))) >= 2


def test_ctrl_c_stops_a_reproduction_keeps_its_finished_runs_and_the_same_command_resumes(tmp_path, start_cli):
    out = tmp_path / "core"
    args = ["reproduce", "core.mdl", "--out", str(out), "--jobs", "2", "--seeds", "2"]
    cmd = [*ECNLAB, *args]
    proc = start_cli(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    kept = tmp_path / ".core.resume"
    # Wait until some runs have finished, then interrupt.
    while len(list(kept.glob("*/run.json"))) < 2:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 130 and "interrupted" in err and "the same command resumes" in err and "Traceback" not in err, err
    # Nothing half-written: no output, no temporary directory, every kept run complete.
    assert sorted(p.name for p in tmp_path.iterdir()) == [".core.resume"]
    runs = sorted(kept.iterdir())
    assert runs and all(not d.name.startswith(".") and (d / "run.json").is_file() for d in runs)
    inodes = {json.loads((d / "run.json").read_text())["scenario_toml"]: (d / "flows.parquet").stat().st_ino for d in runs}
    # Again: the kept runs are used as they are (the same files), the rest run.
    done = subprocess.run(cmd + ["--quiet"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["core"]
    reused = 0
    for d in (out / "runs").iterdir():
        ino = inodes.get(json.loads((d / "run.json").read_text())["scenario_toml"])
        reused += ino == (d / "flows.parquet").stat().st_ino
    assert reused == len(inodes)


LONG_RUN = (
    'duration = "100000s"\n[topology]\nkind = "dumbbell"\nleft = 1\nright = 1\n'
    'access = { rate = "10Gbps", delay = "1ms" }\nbottleneck = { rate = "1Gbps", delay = "1ms" }\n'
    '[[flows]]\nkind = "udp"\nsrc = "l0"\ndst = "r0"\nrate = "900Mbps"\n'
    '[measure]\ninterval = "1s"\n'
    # Hours of events, meant: past the bound a run is refused by before it starts.
    '[limits]\nevents = 1e15\n'
)


def _start_long_run(tmp_path, start_cli, ignored: tuple[signal.Signals, ...] = ()) -> subprocess.Popen:
    """`ecnlab run` of a run that would take hours, started with the signals ``ignored``
    ignored, returned once it writes its temporary directory (tmp_path/.res.partial-*)."""
    scen = tmp_path / "long.toml"
    scen.write_text(LONG_RUN)
    proc = start_cli("run", scen, "--out", tmp_path / "res", ignored=ignored, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(x.name.startswith(".res.partial-") for x in tmp_path.iterdir()):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    time.sleep(0.3)
    return proc


@pytest.mark.parametrize("sig,says", [(signal.SIGINT, "interrupted"), (signal.SIGTERM, "stopped by SIGTERM"), (signal.SIGHUP, "stopped by SIGHUP")])
def test_ctrl_c_sigterm_and_sighup_stop_a_run_and_leave_no_directory(sig, says, tmp_path, start_cli):
    proc = _start_long_run(tmp_path, start_cli)
    t0 = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 5
    # 128 + the signal's number, as a shell reports it: a script tells a stop from a failure.
    assert proc.returncode == 128 + sig.value
    assert says in err and "Traceback" not in err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["long.toml"]


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGINT])
def test_a_signal_ignored_at_start_stays_ignored_and_sigterm_still_stops_the_run(sig, tmp_path, start_cli):
    """`nohup` starts a run with SIGHUP ignored so that it outlives its terminal; a script's
    background job (`ecnlab run ... &`) has SIGINT ignored so that the terminal's Ctrl-C is not
    its. Both stay ignored, as the shell keeps a signal ignored on entry (POSIX `trap`)."""
    proc = _start_long_run(tmp_path, start_cli, ignored=(sig,))
    proc.send_signal(sig)
    time.sleep(1.0)  # a handled signal stops the run within 0.1 s
    assert proc.poll() is None, proc.communicate()[1]
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM.value and "stopped by SIGTERM" in err, err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["long.toml"]


def test_a_partial_directory_left_by_a_killed_run_is_cleaned_by_the_next(tmp_path, udp_toml, start_cli):
    scen = tmp_path / "s.toml"
    scen.write_text(udp_toml)
    out = tmp_path / "res"
    proc = _start_long_run(tmp_path, start_cli)
    proc.kill()  # SIGKILL: no handler runs, the partial directory stays
    proc.wait()
    stale = [x for x in tmp_path.iterdir() if x.name.startswith(".res.partial-")]
    assert len(stale) == 1
    p = run_cli("run", scen, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["long.toml", "res", "s.toml"]
    assert not (out / ".ecnlab-owner").exists()


def test_a_flow_that_starts_after_the_run_is_a_warning_kept_in_run_json(tmp_path, udp_toml):
    scen = tmp_path / "late.toml"
    scen.write_text(udp_toml + '\n[[flows]]\nname = "late"\nkind = "udp"\nsrc = "l1"\ndst = "r1"\nrate = "1Mbps"\nstart = "5s"\n')
    p = run_cli("run", scen, "--out", tmp_path / "o", "--quiet")
    assert p.returncode == 0, p.stderr
    assert "warning: flows[1]: the flow starts at 5 s, not before the run ends (2 s): it sends nothing" in p.stderr
    info = json.loads((tmp_path / "o" / "run.json").read_text())
    assert info["warnings"] == ["flows[1]: the flow starts at 5 s, not before the run ends (2 s): it sends nothing"]
