"""Input a hostile or careless user gives: never a wrong number, a hang, a traceback or a
machine run out of memory. Files are read only when they are regular and small enough; bad
files, paths and key paths are refused naming what is wrong; what a sweep or a scenario
implies is bounded before work starts; a sweep store that was damaged is noticed."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from pathlib import Path

import polars as pl
import pytest

import ecnlab
from ecnlab import ScenarioError
from ecnlab.errors import OutputError

from conftest import UDP_DUMBBELL, run_cli

SHORT = UDP_DUMBBELL.replace('duration = "2s"', 'duration = "0.2s"')


def _fifo(tmp_path: Path, name: str) -> Path:
    f = tmp_path / name
    os.mkfifo(f)
    return f


# ------------------------------------------------------------------ files


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_fifo_or_a_device_as_the_scenario_is_refused_at_once(command, tmp_path):
    # A FIFO blocked for ever; /dev/zero was read until memory ran out (3 GB in 1.8 s).
    out = ["--out", tmp_path / "o"] if command == "run" else []
    for path, says in ((_fifo(tmp_path, "s.toml"), "FIFO"), (Path("/dev/zero"), "character device")):
        r = run_cli(command, path, *out, timeout=30)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_fifo_as_the_sweep_file_is_refused(tmp_path):
    r = run_cli("sweep", _fifo(tmp_path, "s.toml"), "--out", tmp_path / "o", timeout=30)
    assert r.returncode == 2 and "FIFO" in r.stderr, r.stderr


def test_a_byte_order_mark_is_not_an_error(tmp_path):
    # It was reported as "line 1, column 1".
    f = tmp_path / "bom.toml"
    f.write_text("\ufeff" + SHORT, encoding="utf-8")
    r = run_cli("validate", f)
    assert r.returncode == 0, r.stderr
    assert ecnlab.validate(f)


def test_deeply_nested_toml_is_a_scenario_error(tmp_path):
    # tomllib recursed into a RecursionError: exit 1 with a raw exception.
    f = tmp_path / "deep.toml"
    f.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    r = run_cli("validate", f)
    assert r.returncode == 2 and "nest" in r.stderr and "RecursionError" not in r.stderr, r.stderr
    with pytest.raises(ScenarioError):
        ecnlab.Scenario.from_toml(f.read_text())


def test_a_garbled_run_json_is_named_by_report(tmp_path, udp_file):
    d = tmp_path / "run"
    assert run_cli("run", udp_file, "--out", d, "-q").returncode == 0
    (d / "run.json").write_text("{ not json")
    r = run_cli("report", d)
    assert r.returncode == 2 and "run.json" in r.stderr and "JSONDecodeError" not in r.stderr, r.stderr
    (d / "run.json").unlink()
    os.mkfifo(d / "run.json")
    r = run_cli("report", d, timeout=30)
    assert r.returncode == 2 and "run.json" in r.stderr, r.stderr
    with pytest.raises(OutputError, match="FIFO"):
        ecnlab.read_run_dir(d)


def test_a_report_that_cannot_be_written_is_exit_2_naming_the_directory(tmp_path, udp_file, monkeypatch, capsys):
    # As sweep does on a store it cannot write (root ignores permissions: the write fails
    # here as it would for a user on a read-only store).
    import ecnlab.report
    from ecnlab import cli

    d = tmp_path / "run"
    assert run_cli("run", udp_file, "--out", d, "-q").returncode == 0

    def denied(path, text):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(ecnlab.report, "atomic_write_text", denied)
    assert cli.main(["report", str(d)]) == 2
    assert f"cannot write the report in {d}" in capsys.readouterr().err


def test_report_html_has_the_permissions_of_a_new_file(tmp_path, udp_file):
    d = tmp_path / "run"
    assert run_cli("run", udp_file, "--out", d, "-q", "--report").returncode == 0
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((d / "report.html").stat().st_mode) == 0o666 & ~mask


# -------------------------------------------------------------- Python API


def test_a_path_with_an_equals_sign_is_a_path(tmp_path, monkeypatch):
    # "min_th=5/s.toml" was parsed as TOML text because it holds "=".
    d = tmp_path / "min_th=5"
    d.mkdir()
    (d / "s.toml").write_text(SHORT)
    monkeypatch.chdir(tmp_path)
    assert ecnlab.run("min_th=5/s.toml").flows.height == 1
    with pytest.raises(ScenarioError, match="no such scenario file"):
        ecnlab.run("min_th=6/s.toml")
    # One line of TOML text is still text.
    with pytest.raises(ScenarioError, match="duration"):
        ecnlab.validate('name = "x"')


def test_to_parquet_writes_whole_and_refuses_a_foreign_directory(tmp_path):
    res = ecnlab.run(SHORT)
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    with pytest.raises(OutputError, match="not an ecnlab result directory"):
        res.to_parquet(foreign)
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    out = res.to_parquet(tmp_path / "new")
    assert sorted(p.name for p in out.iterdir()) == ["flows.parquet", "ports.parquet", "run.json", "timeseries.parquet"]
    assert ecnlab.read_run_dir(out).flows.equals(res.flows)
    res.to_parquet(out)  # an earlier result is replaced


def test_a_builder_rate_without_a_unit_is_refused():
    # bottleneck_rate=20 was 20 bit/s, without a word.
    with pytest.raises(ScenarioError) as e:
        ecnlab.Scenario.dumbbell(bottleneck_rate=20)
    assert e.value.path == "topology.bottleneck.rate" and "20Mbps" in e.value.message
    with pytest.raises(ScenarioError) as e:
        ecnlab.Scenario.chain(2, link_delay=10)
    assert e.value.path == "topology.link.delay"
    with pytest.raises(ScenarioError) as e:
        ecnlab.Scenario.dumbbell().add_udp_flow("l0", "r0", rate=5e6)
    assert e.value.path == "flows[0].rate"


@pytest.mark.parametrize("path", ["topology..left", ".duration", "topology.", "flows.[0]"])
def test_a_key_path_with_an_empty_key_is_refused(path):
    # "topology..left" was read as topology.left.
    s = ecnlab.Scenario.dumbbell()
    with pytest.raises(ScenarioError, match="every key between its dots"):
        s.set(path, 3)


# ------------------------------------------------------------------ bounds


def test_a_sweep_of_a_million_points_is_refused_before_expanding(tmp_path):
    # It was silent for more than four minutes.
    f = tmp_path / "s.toml"
    base = tmp_path / "b.toml"
    base.write_text(SHORT)
    f.write_text(f'base = "{base}"\nseeds = 1000\n[grid]\n"flows[0].rate" = [{", ".join(f"{chr(34)}{i + 1}Mbps{chr(34)}" for i in range(1000))}]\n')
    t0 = time.monotonic()
    r = run_cli("sweep", f, "--out", tmp_path / "o")
    assert r.returncode == 2, r.stderr
    assert "1000000 runs" in r.stderr and "limits.runs" in r.stderr and "[limits] runs" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 60
    assert not (tmp_path / "o").exists()
    with pytest.raises(ScenarioError) as e:
        ecnlab.sweeps.load_sweep(f'base = "{base}"\nseeds = 200000\n')
    assert e.value.path == "sweep.seeds"
    spec = ecnlab.sweeps.spec.parse_sweep({"base": str(base), "seeds": 3, "limits": {"runs": 3}})
    assert len(spec.points) == 3
    with pytest.raises(ScenarioError, match="limits.runs"):
        ecnlab.sweeps.spec.parse_sweep({"base": str(base), "seeds": 4, "limits": {"runs": 3}})


def test_reproduce_seeds_and_mobility_trace_duration_are_bounded(tmp_path):
    r = run_cli("reproduce", "core.mdl", "--seeds", "100000", "--out", tmp_path / "r")
    assert r.returncode == 2 and "--seeds" in r.stderr, r.stderr
    t0 = time.monotonic()
    r = run_cli("mobility-trace", tmp_path / "t.trace", "--duration", "1e9")
    assert r.returncode == 2 and "--duration" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 30 and not (tmp_path / "t.trace").exists()


def test_a_trace_that_is_not_one_is_named_without_echoing_it(tmp_path):
    # As root (emulation), a trace path of /etc/shadow echoed its first line in the error.
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$s3cr3t:19000:0:99999:7:::\n")
    s = ecnlab.Scenario.dumbbell(duration="1s").add_udp_flow("l0", "r0", rate="1Mbps")
    s.set("topology.bottleneck", {"delay": "1ms", "trace": {"file": str(secret)}})
    with pytest.raises(ScenarioError) as e:
        s.validate()
    assert e.value.path == "topology.bottleneck.trace.file" and "line 1" in e.value.message
    assert "s3cr3t" not in str(e.value) and "root:" not in str(e.value)


def test_reproduce_names_the_contradicted_claims(monkeypatch, capsys, tmp_path):
    # The terminal printed verdict counts, not which claims were contradicted.
    from ecnlab import cli, experiments

    summary = {
        "verdicts": {"holds": 1, "contradicted": 1},
        "stalls": [],
        "readings": ["default"],
        "depends_on_reading": [],
        "comparisons": [
            {"experiment": "x.fig1", "claim": "A beats B", "verdict": "holds"},
            {"experiment": "x.fig2", "claim": "C drops fewer packets than D", "verdict": "contradicted"},
        ],
    }
    monkeypatch.setattr(experiments, "reproduce", lambda *a, **k: summary)
    assert cli.main(["reproduce", "x", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "contradicted: x.fig2: C drops fewer packets than D" in out and "A beats B" not in out


def test_reproduce_names_each_contradicted_claim_by_its_metric_as_the_count_counts_it(monkeypatch, capsys, tmp_path):
    # Two claims with one text ("Zhuge above P-Scheduler", of the delay and of the queue)
    # printed as the same line twice; a claim whose family held under Holm's correction, and
    # a repeat of a claim on the same values, were listed though the count left them out.
    from ecnlab import cli, experiments

    same = {"experiment": "apcc.bwdrop", "claim": "Zhuge above P-Scheduler", "verdict": "contradicted"}
    summary = {
        "verdicts": {"holds": 1, "contradicted": 2},
        "stalls": [],
        "readings": ["default"],
        "depends_on_reading": [],
        "comparisons": [
            dict(same, metric="peak delay: Zhuge vs P-Scheduler"),
            dict(same, metric="p95 AP queue: Zhuge vs P-Scheduler"),
            dict(same, metric="again", duplicate_of="peak delay: Zhuge vs P-Scheduler"),
            {"experiment": "x", "metric": "in a family", "claim": "c", "verdict": "contradicted", "counted": "inconclusive"},
            # A family counted once, by its verdict as one claim: named once, by the family.
            *(
                {"experiment": "x", "metric": f"at {i}", "claim": "c", "verdict": v, "counted": v, "family": "sweep",
                 "family_whole": {"verdict": "contradicted", "reason": "contradicted at 2 of its points"}, "counts_family": i == 0}
                for i, v in enumerate(("holds", "contradicted", "contradicted"))
            ),
        ],
    }
    monkeypatch.setattr(experiments, "reproduce", lambda *a, **k: summary)
    assert cli.main(["reproduce", "x", "--out", str(tmp_path / "r")]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("contradicted: ")]
    assert lines == [
        "contradicted: apcc.bwdrop: peak delay: Zhuge vs P-Scheduler (Zhuge above P-Scheduler)",
        "contradicted: apcc.bwdrop: p95 AP queue: Zhuge vs P-Scheduler (Zhuge above P-Scheduler)",
        "contradicted: x: family 'sweep' (contradicted at 2 of its points)",
    ]


def test_an_earlier_result_that_cannot_be_removed_is_said_and_removed_by_the_next_write(tmp_path, monkeypatch, capsys):
    # An old run directory that could not be deleted stayed behind as .r.old-* unsaid.
    from ecnlab import fsutil

    target = tmp_path / "r"
    for _ in range(2):
        with fsutil.atomic_dir(target) as d:
            (d / "run.json").write_text("{}")
    real = fsutil._remove_tree
    monkeypatch.setattr(fsutil, "_remove_tree", lambda p: None if ".old-" in p.name else real(p))
    with fsutil.atomic_dir(target) as d:
        (d / "run.json").write_text("{}")
    left = list(tmp_path.glob(".r.old-*"))
    assert len(left) == 1 and f"could not remove the earlier result set aside at {left[0]}" in capsys.readouterr().err
    monkeypatch.setattr(fsutil, "_remove_tree", real)
    monkeypatch.setattr(fsutil, "OLD_RESULT_AGE_S", 0.0)
    with fsutil.atomic_dir(target) as d:
        (d / "run.json").write_text("{}")
    assert not list(tmp_path.glob(".r.*")) and (target / "run.json").is_file()


def test_ctrl_c_while_a_result_directory_is_made_leaves_nothing(tmp_path, monkeypatch):
    # A Ctrl-C between making the temporary directory and handing it out (writing its owner
    # file) left a .NAME.partial-* behind: under load a reproduction interrupted at that
    # moment kept a half-made run beside its finished ones.
    from pathlib import Path

    import pytest

    from ecnlab import fsutil

    real = Path.write_text

    def interrupted(self, *a, **k):
        if self.name == fsutil.OWNER_FILE:
            raise KeyboardInterrupt
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "write_text", interrupted)
    with pytest.raises(KeyboardInterrupt):
        with fsutil.atomic_dir(tmp_path / "sub" / "r"):
            pass
    assert list(tmp_path.iterdir()) == []
