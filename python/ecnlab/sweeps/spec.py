"""A sweep: one base scenario and the axes that vary it, expanded into runs.

A sweep file (TOML) names the base scenario and its axes::

    name = "red-min-th"
    base = "../dumbbell_ecn.toml"        # a path (relative to this file), or a [base] table
    seeds = 3                            # seeds 1..3 as an axis (or a list: [1, 5, 9])

    [grid]                               # every combination of these
    "topology.bottleneck_queue.min_th" = [5, 15, 30]
    limit = { key = "topology.bottleneck_queue.limit", values = [100, 200] }

    [zip]                                # these vary together (equal lengths): one axis
    "topology.bottleneck.rate" = ["10Mbps", "100Mbps"]
    "topology.bottleneck.delay" = ["20ms", "5ms"]

    [variants.scheme]                    # a named choice, each label a set of changes
    ecn = { "flows[*].ecn" = "ecn" }
    eecn = { "flows[*].cc" = "eecn", "flows[*].ecn" = "eecn", "topology.bottleneck_marker" = { kind = "eecn", th1 = 20, th2 = 40 } }

    [random]                             # `samples` points drawn with `seed`
    samples = 20
    seed = 7
    "topology.bottleneck_queue.max_p" = { uniform = [0.01, 0.5] }   # or log_uniform, int, choice

Key paths are the scenario's (``flows[0].cc``); ``[*]`` sets every element of a list. The runs
are the product of variants × grid × zip × random samples × seeds: at most 100 000 unless
the sweep's ``[limits]`` table says ``runs = N``. Every axis is a column of
the result tables, named by its key path, its alias (``limit`` above), the variant's name, or
``seed``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
import math
import os
import random
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .. import _core
from ..errors import ScenarioError
from ..fsutil import read_text
from ..scenario import Scenario, _path_parts
from .store import RUN_COLUMNS

__all__ = ["Axis", "Point", "SweepSpec", "load_sweep", "run_key"]

TOP_KEYS = ("name", "base", "seeds", "grid", "zip", "variants", "random", "limits")
#: Runs of one sweep unless its ``[limits]`` table says ``runs = N``: each is validated before
#: anything runs, and its row and files stay in the store.
MAX_RUNS = 100_000
DISTRIBUTIONS = ("uniform", "log_uniform", "int", "choice")


def run_key(normalised_toml: str) -> str:
    """The identity of a run: the hash of its fully-defaulted scenario, of the ecnlab version
    and of the simulator's source it was built from (``_core.source_hash``): a changed
    simulator re-runs everything, even under the same version number."""
    h = hashlib.sha256()
    h.update(f"ecnlab {_core.__version__} {_core.source_hash}\n".encode())
    h.update(normalised_toml.encode())
    return h.hexdigest()[:20]


@dataclass
class Axis:
    """One column of the sweep: its name, what it sets, and its values (``labels`` are what
    the column holds; ``changes[i]`` are the key path → value settings of value i)."""

    name: str
    kind: str  # grid | zip | variants | random | seeds
    labels: list[Any]
    changes: list[dict[str, Any]]


@dataclass
class Point:
    """One run of a sweep: the axis values and the scenario they give."""

    values: dict[str, Any]
    scenario: dict[str, Any]
    toml: str = ""
    key: str = ""

    def describe(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.values.items()) or "the base scenario"


@dataclass
class SweepSpec:
    name: str
    base: dict[str, Any]
    axes: list[Axis]
    source: str = ""
    points: list[Point] = field(default_factory=list)

    @property
    def columns(self) -> list[str]:
        return [a.name for a in self.axes]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "axes": [{"name": a.name, "kind": a.kind, "values": a.labels} for a in self.axes],
            "runs": len(self.points),
        }


def _err(key: str, message: str) -> ScenarioError:
    return ScenarioError(f"sweep.{key}" if key else "sweep", message)


# ------------------------------------------------------------------ key paths


def _in_place(data: dict[str, Any]) -> Scenario:
    """A Scenario over ``data`` itself (the constructor copies)."""
    s = Scenario.__new__(Scenario)
    s._data = data
    return s


def set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Sets ``dotted`` in ``data``; ``[*]`` stands for every element of a list."""
    if "[*]" not in dotted:
        _in_place(data).set(dotted, value)
        return
    head, _, tail = dotted.partition("[*]")
    items = _in_place(data).get(head)
    if not isinstance(items, list):
        raise ScenarioError(dotted, f"{head} is not a list in the base scenario, so {head}[*] sets nothing")
    if not items:
        raise ScenarioError(dotted, f"{head} is empty in the base scenario, so {head}[*] sets nothing")
    tail = tail[1:] if tail.startswith(".") else tail
    for i in range(len(items)):
        set_path(data, f"{head}[{i}]" + (f".{tail}" if tail and not tail.startswith("[") else tail), value)


def _check_path(key: str, where: str) -> None:
    if not isinstance(key, str) or not key:
        raise _err(where, "a key path is a non-empty string like topology.bottleneck.rate or flows[*].cc")
    try:
        _path_parts(key.replace("[*]", "[0]"))
    except ScenarioError as e:
        raise _err(where, f"{key!r}: {e.message}") from None


# ---------------------------------------------------------------------- parse


def _values(v: Any, where: str) -> list[Any]:
    if not isinstance(v, list) or not v:
        raise _err(where, f"needs a non-empty list of values, got {v!r}")
    return list(v)


def _label(v: Any) -> Any:
    """What a column holds for a value: plain values as they are, tables and lists as JSON."""
    if isinstance(v, (bool, int, float, str)):
        return v
    return json.dumps(v, sort_keys=True)


def _column_labels(labels: list[Any]) -> list[Any]:
    """One type per column: ints and floats together become floats; anything else mixed
    becomes text."""
    kinds = {type(x) for x in labels}
    if kinds <= {int, float} and float in kinds:
        return [float(x) for x in labels]
    if len(kinds) > 1:
        return [x if isinstance(x, str) else json.dumps(x) for x in labels]
    return labels


def _grid_axis(name: str, spec: Any) -> Axis:
    where = f"grid.{name}"
    if isinstance(spec, dict):
        unknown = set(spec) - {"key", "values"}
        if unknown or "key" not in spec or "values" not in spec:
            raise _err(where, "an aliased axis is { key = \"<key path>\", values = [...] }")
        key, vals = spec["key"], _values(spec["values"], f"{where}.values")
    else:
        key, vals = name, _values(spec, where)
    _check_path(key, where)
    return Axis(name, "grid", _column_labels([_label(v) for v in vals]), [{key: v} for v in vals])


def _zip_axis(table: Any) -> Axis:
    if not isinstance(table, dict) or not table:
        raise _err("zip", "is a table of key path = [values] with lists of one length")
    lengths = {}
    for key, vals in table.items():
        _check_path(key, f"zip.{key}")
        lengths[key] = len(_values(vals, f"zip.{key}"))
    if len(set(lengths.values())) != 1:
        raise _err("zip", "every list must have the same length; got " + ", ".join(f"{k}: {n}" for k, n in lengths.items()))
    n = next(iter(lengths.values()))
    keys = list(table)
    name = "+".join(keys)
    labels = [
        json.dumps([_label(table[k][i]) for k in keys]) if len(keys) > 1 else _label(table[keys[0]][i]) for i in range(n)
    ]
    return Axis(name, "zip", _column_labels(labels), [{k: table[k][i] for k in keys} for i in range(n)])


def _variant_axis(name: str, table: Any) -> Axis:
    where = f"variants.{name}"
    if not isinstance(table, dict) or not table:
        raise _err(where, "is a table of label = { key path = value, … }")
    labels, changes = [], []
    for label, sets in table.items():
        if not isinstance(sets, dict):
            raise _err(f"{where}.{label}", "is a table of key path = value (an empty table keeps the base)")
        for key in sets:
            _check_path(key, f"{where}.{label}")
        labels.append(label)
        changes.append(dict(sets))
    return Axis(name, "variants", labels, changes)


def _draw(rng: random.Random, key: str, dist: Any) -> Any:
    where = f"random.{key}"
    if not isinstance(dist, dict) or len(dist) != 1 or next(iter(dist)) not in DISTRIBUTIONS:
        raise _err(where, f"is one of {{ {' | '.join(d + ' = [...]' for d in DISTRIBUTIONS)} }}, got {dist!r}")
    kind, arg = next(iter(dist.items()))
    if kind == "choice":
        return rng.choice(_values(arg, f"{where}.choice"))
    if not (isinstance(arg, list) and len(arg) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in arg) and arg[0] <= arg[1]):
        raise _err(f"{where}.{kind}", f"is [low, high] with low ≤ high, got {arg!r}")
    lo, hi = arg
    if kind == "uniform":
        return rng.uniform(lo, hi)
    if kind == "int":
        if not all(isinstance(x, int) for x in arg):
            raise _err(f"{where}.int", f"takes integer bounds, got {arg!r}")
        return rng.randint(lo, hi)
    if lo <= 0:
        raise _err(f"{where}.log_uniform", f"needs positive bounds, got {arg!r}")
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def _random_axes(table: Any) -> list[Axis]:
    if not isinstance(table, dict):
        raise _err("random", "is a table: samples = N, seed = S, and key path = { uniform | log_uniform | int | choice = … }")
    samples, seed = table.get("samples"), table.get("seed", 1)
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
        raise _err("random.samples", f"is a positive integer, got {samples!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise _err("random.seed", f"is an integer, got {seed!r}")
    dists = {k: v for k, v in table.items() if k not in ("samples", "seed")}
    if not dists:
        raise _err("random", "names no key path to draw")
    for key in dists:
        _check_path(key, f"random.{key}")
    rng = random.Random(seed)
    draws = [{k: _draw(rng, k, d) for k, d in dists.items()} for _ in range(samples)]
    # One axis per key, but they vary together: the product of random axes is not taken.
    return [Axis(k, "random", [_label(d[k]) for d in draws], [{k: d[k]} for d in draws]) for k in dists]


def _runs_limit(table: Any) -> int:
    if table is None:
        return MAX_RUNS
    if not isinstance(table, dict) or set(table) - {"runs"}:
        raise _err("limits", "is a table with one key, runs = N (the most runs the sweep may have)")
    n = table.get("runs", MAX_RUNS)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise _err("limits.runs", f"is a positive integer, got {n!r}")
    return n


def _check_runs(data: Mapping[str, Any], limit: int) -> None:
    """The number of runs the axes give, from their sizes alone, before any is drawn or
    built: a sweep of a million points would otherwise spend minutes silently."""
    sizes: list[tuple[str, int]] = []
    for vname, table in (data.get("variants") or {}).items():
        if isinstance(table, dict):
            sizes.append((f"variants.{vname}", len(table)))
    grid = data.get("grid") or {}
    if isinstance(grid, dict):
        for key, spec in grid.items():
            vals = spec.get("values") if isinstance(spec, dict) else spec
            if isinstance(vals, list):
                sizes.append((f"grid.{key}", len(vals)))
    z = data.get("zip")
    if isinstance(z, dict) and z:
        first = next(iter(z.values()))
        if isinstance(first, list):
            sizes.append(("zip", len(first)))
    r = data.get("random")
    if isinstance(r, dict) and isinstance(r.get("samples"), int) and not isinstance(r.get("samples"), bool):
        sizes.append(("random.samples", r["samples"]))
    seeds = data.get("seeds")
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        sizes.append(("seeds", seeds))
    elif isinstance(seeds, list):
        sizes.append(("seeds", len(seeds)))
    runs = math.prod(max(n, 0) for _, n in sizes)
    if runs > limit:
        largest = max(sizes, key=lambda kv: kv[1])[0]
        product = " × ".join(f"{k}: {n}" for k, n in sizes)
        raise _err(
            largest,
            f"the axes give {runs} runs ({product}), beyond the limit of {limit} (limits.runs); if the sweep is meant, "
            "raise it in the sweep file: [limits] runs = ...",
        )


def _seeds_axis(v: Any) -> Axis:
    if isinstance(v, int) and not isinstance(v, bool) and v >= 1:
        seeds = list(range(1, v + 1))
    elif isinstance(v, list) and v and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**63 for s in v):
        seeds = list(v)
    else:
        raise _err("seeds", f"is a count (seeds 1..N) or a list of seeds from 0 to 2^63 − 1, got {v!r}")
    if len(set(seeds)) != len(seeds):
        raise _err("seeds", "lists a seed twice")
    return Axis("seed", "seeds", seeds, [{"seed": s} for s in seeds])


_PROBE = """
duration = "1ms"
[topology]
kind = "dumbbell"
left = 1
right = 1
access = { rate = "1Gbps", delay = "1ms" }
bottleneck = { rate = "1Gbps", delay = "1ms" }
[[flows]]
src = "l0"
dst = "r0"
"""


@functools.cache
def result_columns() -> dict[str, frozenset[str]]:
    """The columns of the result tables (the core's, plus the store's ``run_key``), found by
    a run of one millisecond."""
    out = _core.run(_PROBE, "toml", seed=None, pcap_dir=None, progress=None)
    cols = {t: frozenset(c["name"] for c in out[t]["columns"]) | {"run_key"} for t in ("flows", "ports", "timeseries")}
    cols["runs"] = frozenset(RUN_COLUMNS)
    return cols


def parse_sweep(data: Mapping[str, Any], base_dir: Path | None = None, source: str = "") -> SweepSpec:
    """A sweep from its parsed TOML; raises ScenarioError naming the offending key."""
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise _err(unknown[0], f"unknown key; a sweep has: {', '.join(TOP_KEYS)}")
    if "base" not in data:
        raise _err("base", "is missing: a path to a scenario file or a [base] table")
    b = data["base"]
    if isinstance(b, str):
        p = Path(b)
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        try:
            base = Scenario.from_file(p).to_dict()
        except ScenarioError as e:
            raise _err("base", e.message) from None
    elif isinstance(b, dict):
        base = copy.deepcopy(dict(b))
    else:
        raise _err("base", f"is a path or a table, got {b!r}")
    _check_runs(data, _runs_limit(data.get("limits")))
    name = data.get("name", base.get("name") or "sweep")
    if not isinstance(name, str) or not name:
        raise _err("name", f"is a non-empty string, got {name!r}")
    axes: list[Axis] = []
    for vname, table in (data.get("variants") or {}).items():
        axes.append(_variant_axis(vname, table))
    grid = data.get("grid") or {}
    if not isinstance(grid, dict):
        raise _err("grid", "is a table of key path = [values]")
    for key, spec in grid.items():
        axes.append(_grid_axis(key, spec))
    if "zip" in data:
        axes.append(_zip_axis(data["zip"]))
    random_axes = _random_axes(data["random"]) if "random" in data else []
    axes += random_axes
    if "seeds" in data:
        axes.append(_seeds_axis(data["seeds"]))
    names = [a.name for a in axes]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise _err("", f"two axes are named {sorted(dup)[0]!r}; give one an alias")
    columns = result_columns()
    for a in axes:
        for table, cols in columns.items():
            if a.name in cols:
                where = {"grid": f"grid.{a.name}", "variants": f"variants.{a.name}"}.get(a.kind, a.kind)
                raise _err(where, f"the {table} table has a column named {a.name!r}; name the axis otherwise")
    spec = SweepSpec(name=name, base=base, axes=axes, source=source)
    spec.points = _expand(spec, random_axes)
    return spec


def _expand(spec: SweepSpec, random_axes: list[Axis]) -> list[Point]:
    # Random axes are drawn together: sample i sets every random key to its i-th draw.
    factors: list[list[tuple[dict[str, Any], dict[str, Any]]]] = []
    for a in spec.axes:
        if a.kind == "random" and a is not random_axes[0]:
            continue
        if a.kind == "random":
            n = len(a.labels)
            factors.append(
                [
                    ({r.name: r.labels[i] for r in random_axes}, {k: v for r in random_axes for k, v in r.changes[i].items()})
                    for i in range(n)
                ]
            )
        else:
            factors.append([({a.name: a.labels[i]}, a.changes[i]) for i in range(len(a.labels))])
    points = []
    for combo in itertools.product(*factors):
        values: dict[str, Any] = {}
        data = copy.deepcopy(spec.base)
        data["name"] = spec.name
        for vals, changes in combo:
            values.update(vals)
            for key, v in changes.items():
                try:
                    set_path(data, key, copy.deepcopy(v))
                except ScenarioError as e:
                    raise ScenarioError(f"sweep point {_describe(values)}: {e.path}", e.message) from None
        points.append(Point(values=values, scenario=data))
    return points


def _describe(values: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v!r}" for k, v in values.items()) + "}"


def validate_points(spec: SweepSpec, log: Any = None) -> None:
    """Validates every point's scenario (defaults filled in by the core) and keys it; the
    first invalid one raises ScenarioError naming its axis values and the key. Two points
    giving the same scenario are an error too (their rows could not be told apart)."""
    seen: dict[str, Point] = {}
    if log is not None and len(spec.points) >= 1000:
        print(f"{spec.name}: validating {len(spec.points)} scenarios before any runs", file=log, flush=True)
    for pt in spec.points:
        try:
            pt.toml = _core.validate(Scenario(pt.scenario).to_json(), "json")
        except ScenarioError as e:
            raise ScenarioError(f"sweep point {_describe(pt.values)}: {e.path}" if e.path else f"sweep point {_describe(pt.values)}", e.message) from None
        pt.key = run_key(pt.toml)
        if pt.key in seen:
            raise ScenarioError(
                f"sweep point {_describe(pt.values)}",
                f"gives the same scenario as {_describe(seen[pt.key].values)}; an axis value has no effect there",
            )
        seen[pt.key] = pt


def load_sweep(source: Any, log: Any = None) -> SweepSpec:
    """A validated sweep from a path, TOML text or a dict (``log``: where to say that many
    scenarios are being validated)."""
    if isinstance(source, SweepSpec):
        spec = source
    elif isinstance(source, Mapping):
        spec = parse_sweep(source, Path.cwd())
    else:
        text_source = isinstance(source, str) and ("\n" in source or ("=" in source and not os.path.exists(source)))
        if text_source:
            text, base_dir = source, Path.cwd()
        else:
            p = Path(os.fspath(source))
            try:
                text = read_text(p, "sweep file")
            except FileNotFoundError:
                raise ScenarioError("", f"no such sweep file: {p}") from None
            except (OSError, ValueError) as e:
                raise ScenarioError("", f"cannot read {p}: {getattr(e, 'strerror', None) or e}") from None
            base_dir = p.parent
        try:
            data = tomllib.loads(text.removeprefix("\ufeff"))
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError("sweep", f"not valid TOML: {e}") from None
        except RecursionError:
            raise ScenarioError("sweep", "not valid TOML: its tables or arrays nest too deeply") from None
        spec = parse_sweep(data, base_dir, source=text)
    if spec.points and not spec.points[0].key:
        validate_points(spec, log)
    return spec
