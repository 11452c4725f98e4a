"""Property-based fuzzing of scenario input from Python (Hypothesis): scenarios built as
dicts, with values at the edges of every numeric key (0, negative, NaN and infinities,
2^31, 2^32 ± 1, 2^53 + 1, 2^63, 2^64 ± 1, tiny and huge units, wrong types), keys left out
or added, and key paths that are not paths.

The property: ``ecnlab validate`` exits 0, or exits 2 with one line naming the key (never
a traceback, an internal error or a hang); and a scenario that is accepted runs, and its
run.json echoes exactly the values given: every edited quantity reads back, by a unit parser
written here from the documentation (not the simulator's), as the value that was given,
and the bottleneck runs at the rate and delay given.

``ECNLAB_FUZZ_SCENARIOS`` sets the number of cases (default 2000 validated, a tenth of them
also run); the number tried is printed at the end of the session.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ecnlab
from ecnlab import ScenarioError, cli

from conftest import FUZZ_TALLY

CASES = int(os.environ.get("ECNLAB_FUZZ_SCENARIOS", "2000"))
FUZZ = settings(
    max_examples=CASES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)

# --------------------------------------------------------------- the base


def base() -> dict[str, Any]:
    return {
        "duration": "20ms",
        "seed": 1,
        "topology": {
            "kind": "dumbbell",
            "left": 2,
            "right": 2,
            "access": {"rate": "1Gbps", "delay": "1ms"},
            "bottleneck": {"rate": "10Mbps", "delay": "2ms"},
            "bottleneck_queue": {"kind": "red", "limit": 100, "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002},
        },
        "flows": [
            {"src": "l0", "dst": "r0", "size": "20KB", "start": "1ms", "count": 2, "stagger": "1ms"},
            {"kind": "udp", "src": "l1", "dst": "r1", "rate": "1Mbps", "packet_size": 1000, "stop": "15ms"},
        ],
        "workloads": [
            {"src": ["l0"], "dst": ["r1"], "arrival_rate": 100.0, "sizes": {"dist": "pareto", "mean": "10KB", "shape": 1.5}, "max_flows": 3}
        ],
        "tcp": {"mss": 1448, "initial_window": 10},
        "measure": {"interval": "1ms"},
        "limits": {"events": 5_000_000, "flows": 1000, "nodes": 3000},
    }


#: Every numeric key of the base, and what its value is.
KEYS: dict[str, str] = {
    "duration": "duration",
    "seed": "int",
    "topology.left": "int",
    "topology.right": "int",
    "topology.access.rate": "rate",
    "topology.access.delay": "duration",
    "topology.bottleneck.rate": "rate",
    "topology.bottleneck.delay": "duration",
    "topology.bottleneck_queue.limit": "int",
    "topology.bottleneck_queue.min_th": "float",
    "topology.bottleneck_queue.max_th": "float",
    "topology.bottleneck_queue.max_p": "float",
    "topology.bottleneck_queue.w_q": "float",
    "flows[0].size": "size",
    "flows[0].start": "duration",
    "flows[0].count": "int",
    "flows[0].stagger": "duration",
    "flows[1].rate": "rate",
    "flows[1].packet_size": "size",
    "flows[1].stop": "duration",
    "workloads[0].arrival_rate": "float",
    "workloads[0].sizes.mean": "size",
    "workloads[0].sizes.shape": "float",
    "workloads[0].max_flows": "int",
    "tcp.mss": "int",
    "tcp.initial_window": "int",
    "measure.interval": "duration",
    "limits.events": "int",
    "limits.flows": "int",
    "limits.nodes": "int",
}

EDGE_INTS = [0, -1, 1, 2, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**64 + 1, -(2**63), -(2**64)]
EDGE_FLOATS = [0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 1e-300, 0.001, 0.5, 1.5, 1e300, 4294967296.0, 1.8446744073709552e19]
NUMBERS = ["0", "-1", "1e-20", "0.4", "1", "1.5", "1e6", "1e7", "1e20", "nan", "inf", "18446744073709551617", ""]
UNITS = {
    "duration": ["ps", "ns", "us", "ms", "s", "min", "", "h"],
    "rate": ["bps", "kbps", "Mbps", "Gbps", "Tbps", "", "Pbps"],
    "size": ["B", "KB", "KiB", "Mb", "GB", "b", "", "TB"],
}
WRONG = [True, None, [], {}, "x", [1, 2], {"kind": "droptail"}]


def edge(kind: str) -> st.SearchStrategy[Any]:
    quantities = st.tuples(st.sampled_from(NUMBERS), st.sampled_from(UNITS.get(kind, ["", "ms", "Mbps", "KB"]))).map("".join)
    return st.one_of(
        st.sampled_from(EDGE_INTS),
        st.sampled_from(EDGE_FLOATS),
        st.integers(),
        st.floats(),
        quantities,
        st.sampled_from(WRONG),
    )


def plausible(kind: str) -> st.SearchStrategy[Any]:
    """A value a user would give, so that many cases run and their echo is checked."""
    if kind == "duration":
        return st.integers(1, 15).map(lambda n: f"{n}ms")
    if kind == "rate":
        return st.sampled_from(["1Mbps", "5Mbps", "20Mbps", "100Mbps", "1.5Mbps", "2500000", "1e7"])
    if kind == "size":
        return st.sampled_from(["1KB", "20KB", "1500", "64KiB", "1Mb", 1200])
    if kind == "float":
        return st.floats(0.001, 1.0)
    return st.integers(1, 200)


@st.composite
def scenarios(draw: Any, edges: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    """A scenario and the edits made to the base (key path → value; None: left out); an
    edit is an edge value `edges` times in four, a plausible one otherwise."""
    data = base()
    s = ecnlab.Scenario(data)
    edits: dict[str, Any] = {}
    keys = draw(st.lists(st.sampled_from(sorted(KEYS)), min_size=1, max_size=3, unique=True))
    for key in keys:
        if draw(st.integers(0, 9)) == 0:
            _remove(s._data, key)
            edits[key] = None
        else:
            v = draw(edge(KEYS[key]) if draw(st.integers(0, 3)) < edges else plausible(KEYS[key]))
            s.set(key, v)
            edits[key] = v
    if draw(st.integers(0, 19)) == 0:
        # A key the schema does not have, or a key path that is not one.
        path = draw(st.one_of(st.sampled_from(["topology.left_hosts", "flows[0].rate_bps", "measure.intervall", "limits.hosts"]), st.text(max_size=12)))
        try:
            s.set(path, 1)
            edits[path] = 1
        except ScenarioError as e:
            edits["<set>"] = e
    return s._data, edits


def _remove(data: dict[str, Any], dotted: str) -> None:
    from ecnlab.scenario import _path_parts

    *head, last = _path_parts(dotted)
    node: Any = data
    for p in head:
        node = node[p]
    del node[last]


# ------------------------------------------------- units, from the README


_NUM = re.compile(r"^([0-9.eE+-]*)(.*)$")
SCALES = {
    "duration": {"": 1e12, "s": 1e12, "ms": 1e9, "us": 1e6, "µs": 1e6, "ns": 1e3, "ps": 1.0, "min": 60e12},
    "rate": {"": 1.0, "bps": 1.0, "kbps": 1e3, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12},
    "size": {"": 1.0, "B": 1.0, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0, "MiB": 1048576.0, "GiB": 1073741824.0, "b": 0.125, "Kb": 125.0, "kb": 125.0, "Mb": 125e3, "Gb": 125e6},
}


def quantity(kind: str, v: Any) -> int | None:
    """The integer (ps, bit/s, bytes) a value means, or None where it is not valid."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    if isinstance(v, str):
        m = _NUM.match(v.strip())
        if not m:
            return None
        try:
            x = float(m.group(1))
        except ValueError:
            return None
        unit = m.group(2).strip()
        if unit not in SCALES[kind]:
            return None
        x *= SCALES[kind][unit]
    else:
        x = float(v) * (1e12 if kind == "duration" else 1.0)
    if math.isnan(x) or x < 0:
        return None
    if kind == "duration" and (x > 1e18 or 0 < x < 0.5):
        return None
    if kind == "rate" and not 0.5 <= x <= 1e15:
        return None
    if kind == "size" and not (math.isfinite(x) and x <= 1e18):
        return None
    return math.floor(x + 0.5)


def _get(data: Any, dotted: str) -> Any:
    from ecnlab.scenario import _path_parts

    for p in _path_parts(dotted):
        data = data[p]
    return data


# ------------------------------------------------------------- properties


def validate_cli(data: dict[str, Any], tmp: Path) -> tuple[int, str]:
    """``ecnlab validate`` on the scenario as a JSON file, in this process."""
    f = tmp / "fuzz.json"
    try:
        f.write_text(json.dumps(data, allow_nan=True))
    except (TypeError, ValueError) as e:  # pragma: no cover - the data is plain
        raise AssertionError(f"not JSON: {e}")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["validate", "-q", str(f)])
    return code, err.getvalue()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(scenarios(edges=3))
def test_every_scenario_is_refused_by_key_or_valid(scratch, case):
    data, edits = case
    code, err = validate_cli(data, scratch)
    FUZZ_TALLY["validated"] = FUZZ_TALLY.get("validated", 0) + 1
    assert code in (0, 2), f"exit {code}: {err}\n{edits}"
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        FUZZ_TALLY["refused"] = FUZZ_TALLY.get("refused", 0) + 1
        line = err.strip()
        assert line.count("\n") == 0 and line.startswith("error: "), err
        # "error: <key path>: <what>" (or, for the whole file, what is wrong with it).
        what = line[len("error: ") :]
        assert re.match(r"^('.*'|[^\s:']\S*): \S", what) or what.startswith(("not valid JSON", "a scenario is")), err
    else:
        for key, v in edits.items():
            if v is not None and KEYS.get(key) in ("duration", "rate", "size"):
                # The core accepted it: the documented grammar must too.
                assert quantity(KEYS[key], v) is not None, f"{key} = {v!r} accepted"


@settings(FUZZ, max_examples=max(1, CASES // 10))
@given(scenarios(edges=1))
def test_an_accepted_scenario_runs_and_echoes_the_values_given(case):
    data, edits = case
    try:
        res = ecnlab.run(data)
    except ScenarioError as e:
        FUZZ_TALLY["run refused"] = FUZZ_TALLY.get("run refused", 0) + 1
        assert e.path or e.message, e
        return
    FUZZ_TALLY["ran"] = FUZZ_TALLY.get("ran", 0) + 1
    echoed = res.run_info()["scenario"]
    for key, v in edits.items():
        kind = KEYS.get(key)
        if v is None or kind is None:
            continue
        got = _get(echoed, key)
        if kind in ("duration", "rate", "size"):
            assert quantity(kind, got) == quantity(kind, v), f"{key}: given {v!r}, run.json says {got!r}"
        elif kind == "float":
            assert float(got) == float(v), f"{key}: given {v!r}, run.json says {got!r}"
        else:
            assert isinstance(got, int) and got == v, f"{key}: given {v!r}, run.json says {got!r}"
    port = res.port("rl->rr")
    topo = echoed["topology"]["bottleneck"]
    assert port["rate_bps"] == quantity("rate", topo["rate"])
    assert round(port["delay_s"] * 1e12) == quantity("duration", topo["delay"])
