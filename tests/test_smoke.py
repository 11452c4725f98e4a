"""The package imports, runs a UDP scenario, and the CLI writes a run directory."""

import json

import ecnlab


def test_udp_cbr_throughput_equals_its_rate(udp_toml):
    r = ecnlab.run(udp_toml)
    f = r.flow("cbr")
    assert abs(f["goodput_bps"] - 4e6) / 4e6 < 0.01
    assert r.meta["packets_dropped"] == 0


def test_cli_run_writes_tables_and_run_json(cli, udp_file, tmp_path):
    out = tmp_path / "res"
    p = cli("run", udp_file, "--out", out)
    assert p.returncode == 0, p.stderr
    for name in ("flows.parquet", "ports.parquet", "timeseries.parquet", "run.json"):
        assert (out / name).is_file()
    info = json.loads((out / "run.json").read_text())
    assert info["seed"] == 7 and info["events"] > 0
