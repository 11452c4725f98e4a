"""Every example scenario in scenarios/ runs through the command and behaves as its comment
says."""

from __future__ import annotations

import json

import polars as pl
import pytest

from conftest import REPO, run_cli

EXAMPLES = sorted((REPO / "scenarios").glob("*.toml"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path, tmp_path):
    out = tmp_path / path.stem
    p = run_cli("run", path, "--out", out, "-q")
    assert p.returncode == 0, p.stderr
    info = json.loads((out / "run.json").read_text())
    assert info["events"] > 0
    flows = pl.read_parquet(out / "flows.parquet")
    assert flows.height > 0 and flows["bytes_delivered"].sum() > 0


def test_udp_example_captures_the_bottleneck(tmp_path):
    out = tmp_path / "udp"
    assert run_cli("run", REPO / "scenarios" / "udp_cbr.toml", "--out", out, "-q").returncode == 0
    ports = pl.read_parquet(out / "ports.parquet").filter(pl.col("port") == "rl->rr")
    assert (out / "pcap" / "rl_to_rr.pcap").stat().st_size == 24 + ports["dequeued_pkts"][0] * (16 + 1000)


def test_ecn_example_marks_instead_of_dropping_for_the_ecn_flow(tmp_path):
    out = tmp_path / "ecn"
    assert run_cli("run", REPO / "scenarios" / "dumbbell_ecn.toml", "--out", out, "-q").returncode == 0
    flows = pl.read_parquet(out / "flows.parquet")
    bn = pl.read_parquet(out / "ports.parquet").filter(pl.col("port") == "rl->rr").row(0, named=True)
    assert bn["marked_pkts"] > 0
    ecn = flows.filter(pl.col("name") == "ecn").row(0, named=True)
    noecn = flows.filter(pl.col("name") == "noecn").row(0, named=True)
    assert ecn["signals_l1"] > 0 and noecn["signals_l1"] == 0
    web = flows.filter(pl.col("name").str.starts_with("web."))
    assert web.height == 6 and web["fct_s"].null_count() == 0
