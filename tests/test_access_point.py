"""The access-point example: a mahimahi trace found beside the scenario file whatever the
working directory, APCC's counters in run.json, and the AP's queue it keeps short (the same
scenario without the element grows a standing queue of hundreds of packets)."""

from __future__ import annotations

import json

import polars as pl

from conftest import REPO, run_cli
from ecnlab import Scenario

EXAMPLE = REPO / "scenarios" / "campus_apcc.toml"


def _ap_port(out):
    return pl.read_parquet(out / "ports.parquet").filter(pl.col("port") == "ap->wlan").row(0, named=True)


def test_trace_is_read_beside_the_scenario_and_apcc_keeps_the_queue_short(tmp_path):
    out = tmp_path / "apcc"
    p = run_cli("run", EXAMPLE, "--out", out, "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    info = json.loads((out / "run.json").read_text())
    ap = info["elements"]["ap"]
    assert ap["windows_lowered"] > 1000 and ap["unknown_window_scale"] == 0
    port = _ap_port(out)
    # The trace's mean, half a second at 48 Mb/s and half at 24, less the 2 opportunities
    # that fall at 10 s (the end of the run): 36 Mb/s − 2·12 000 bits / 10 s.
    assert port["mean_rate_bps"] == 36e6 - 2400
    assert port["mean_queue_pkts"] < 30 and port["dropped_pkts"] == 0
    # Batched service: fewer transmissions than packets.
    assert port["transmissions"] < port["dequeued_pkts"] / 2


def test_without_apcc_the_queue_grows(tmp_path):
    s = Scenario.from_file(EXAMPLE)
    data = s.to_dict()
    del data["elements"]
    scen = tmp_path / "no_apcc.json"
    scen.write_text(json.dumps(data))
    out = tmp_path / "plain"
    p = run_cli("run", scen, "--out", out, "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    # 729 packets on average over the 10 s (APCC: under 30).
    assert _ap_port(out)["mean_queue_pkts"] > 500


def test_a_missing_trace_names_the_key(tmp_path):
    scen = tmp_path / "s.toml"
    scen.write_text(EXAMPLE.read_text().replace("traces/wifi-48-24.trace", "traces/absent.trace"))
    p = run_cli("run", scen, "--out", tmp_path / "o", "-q")
    assert p.returncode != 0
    assert "topology.wireless.trace.file" in p.stderr and "absent.trace" in p.stderr
    assert not (tmp_path / "o").exists()
