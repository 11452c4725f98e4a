"""Scenarios from Python: load, build, change and validate them.

A scenario is the same tree whatever its source (TOML file, TOML text, dict, builder): the
simulator's schema is the only authority on what is valid, so :meth:`Scenario.validate` and
:meth:`Scenario.to_toml` ask the core rather than re-checking anything here.

>>> s = Scenario.dumbbell(left=2, right=2, bottleneck_rate="10Mbps", duration="5s")
>>> s.add_udp_flow("l0", "r0", rate="4Mbps").set("measure.interval", "100ms")  # doctest: +ELLIPSIS
<Scenario ...>
"""

from __future__ import annotations

import copy
import json
import math
import os
import tomllib
from pathlib import Path
from typing import Any, Mapping

from . import _core
from .errors import ScenarioError
from .fsutil import read_text

__all__ = ["Scenario", "load_scenario"]


def _path_parts(dotted: str) -> list[str | int]:
    """``"flows[2].rate"`` → ``["flows", 2, "rate"]``."""
    parts: list[str | int] = []
    if not dotted:
        return parts
    for i, piece in enumerate(dotted.split(".")):
        name, *indices = piece.split("[")
        if name:
            parts.append(name)
        elif i > 0 or not indices:
            # "topology..left", ".x", "x.", "x.[0]": a key left out, not a path to guess at.
            raise ScenarioError(dotted, "a key path names every key between its dots, like topology.bottleneck.rate or flows[0].rate")
        for ix in indices:
            if not ix.endswith("]") or not ix[:-1].isdigit():
                raise ScenarioError(dotted, "a key path looks like topology.bottleneck.rate or flows[0].rate")
            parts.append(int(ix[:-1]))
    return parts


def _show(walked: list[str | int]) -> str:
    out = ""
    for p in walked:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out or "the scenario"


def _step(node: Any, key: str | int, dotted: str, walked: list[str | int], create: Any) -> Any:
    """``node[key]`` on the way along ``dotted`` (creating ``create`` under a missing table
    key when it is not None), or a ScenarioError saying what the path ran into."""
    where = _show(walked)
    if isinstance(node, list):
        if not isinstance(key, int):
            raise ScenarioError(dotted, f"{where} is a list: index it, e.g. {where}[0]")
        if not -len(node) <= key < len(node):
            raise ScenarioError(dotted, f"{where} has {len(node)} entries, no [{key}]")
        return node[key] if create is not None else None
    if isinstance(node, dict):
        if isinstance(key, int):
            raise ScenarioError(dotted, f"{where} is a table, not a list: name a key")
        if create is None:
            return None
        if key not in node:
            node[key] = create
        return node[key]
    raise ScenarioError(dotted, f"{where} is a value ({node!r}), not a table or a list")


_UNIT_EXAMPLE = {"rate": "Mbps", "delay": "ms"}


def _with_unit(value: Any, key: str, what: str) -> Any:
    """A builder's rate or delay, refused as a bare number: ``bottleneck_rate=20`` would be
    20 bit/s (and a delay of 10, ten seconds) where a unit was surely meant."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        base = "bits per second" if what == "rate" else "seconds"
        raise ScenarioError(
            key,
            f"{value!r} has no unit, and a bare number is {base} here; write the unit, e.g. \"{value:g}{_UNIT_EXAMPLE[what]}\"",
        )
    return value


def _check_numbers(node: Any, path: str) -> None:
    """A NaN or infinite number anywhere is an error naming its key path."""
    if isinstance(node, float) and not math.isfinite(node):
        raise ScenarioError(path, f"must be a finite number, got {node}")
    if isinstance(node, dict):
        for k, v in node.items():
            _check_numbers(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _check_numbers(v, f"{path}[{i}]")


class Scenario:
    """A scenario as a plain tree of dicts and lists (the TOML structure)."""

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = copy.deepcopy(dict(data or {}))

    # ----------------------------------------------------------------- conversions

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Scenario":
        return cls(data)

    @classmethod
    def from_toml(cls, text: str) -> "Scenario":
        try:
            return cls(tomllib.loads(text.removeprefix("\ufeff")))
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError("", f"not valid TOML: {e}") from None
        except RecursionError:
            raise ScenarioError("", "not valid TOML: its tables or arrays nest too deeply") from None

    @classmethod
    def from_json(cls, text: str) -> "Scenario":
        try:
            data = json.loads(text.removeprefix("\ufeff"))
        except json.JSONDecodeError as e:
            raise ScenarioError("", f"not valid JSON: {e}") from None
        except RecursionError:
            raise ScenarioError("", "not valid JSON: its objects or arrays nest too deeply") from None
        if not isinstance(data, dict):
            raise ScenarioError("", "a scenario is a JSON object")
        return cls(data)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> "Scenario":
        p = Path(path)
        text = read_scenario_text(p)
        s = cls.from_json(text) if p.suffix.lower() == ".json" else cls.from_toml(text)
        _anchor_trace_files(s._data, p.resolve().parent)
        return s

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        _check_numbers(self._data, "")
        try:
            return json.dumps(self._data, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ScenarioError("", f"the scenario holds a value that is not plain data: {e}") from None

    def to_toml(self) -> str:
        """The scenario as normalised TOML (defaults filled in); raises ScenarioError when
        it is not valid."""
        return _core.validate(self.to_json(), "json")

    def validate(self) -> "Scenario":
        self.to_toml()
        return self

    def copy(self) -> "Scenario":
        return Scenario(self._data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and other._data == self._data

    def __repr__(self) -> str:
        name = self._data.get("name")
        kind = (self._data.get("topology") or {}).get("kind", "?")
        flows = len(self._data.get("flows") or [])
        return f"<Scenario {name or ''} topology={kind} flows={flows} duration={self._data.get('duration')}>"

    # ------------------------------------------------------------------- editing

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self._data
        for part in _path_parts(dotted):
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return default
        return node

    def set(self, dotted: str, value: Any) -> "Scenario":
        """Sets one value by key path (``topology.bottleneck_queue.min_th``,
        ``flows[0].rate``), creating tables on the way; returns self."""
        parts = _path_parts(dotted)
        if not parts:
            raise ScenarioError(dotted, "an empty key path; a key path looks like topology.bottleneck.rate or flows[0].rate")
        node: Any = self._data
        walked: list[str | int] = []
        for here, nxt in zip(parts, parts[1:]) if len(parts) > 1 else []:
            node = _step(node, here, dotted, walked, create=[] if isinstance(nxt, int) else {})
            walked.append(here)
        _step(node, parts[-1], dotted, walked, create=None)
        node[parts[-1]] = copy.deepcopy(value)
        return self

    def with_(self, **changes: Any) -> "Scenario":
        """A copy with top-level keys changed (``s.with_(seed=3, duration="2s")``)."""
        out = self.copy()
        for k, v in changes.items():
            out._data[k] = copy.deepcopy(v)
        return out

    def add_flow(self, src: str, dst: str, **params: Any) -> "Scenario":
        flow = {"src": src, "dst": dst}
        flow.update({k: v for k, v in params.items() if v is not None})
        self._data.setdefault("flows", []).append(flow)
        return self

    def add_udp_flow(self, src: str, dst: str, rate: str, **params: Any) -> "Scenario":
        n = len(self._data.get("flows") or [])
        return self.add_flow(src, dst, kind="udp", rate=_with_unit(rate, f"flows[{n}].rate", "rate"), **params)

    def add_tcp_flow(self, src: str, dst: str, cc: str | None = None, **params: Any) -> "Scenario":
        return self.add_flow(src, dst, kind="tcp", cc=cc, **params)

    def add_port(self, port: str, **params: Any) -> "Scenario":
        entry = {"port": port}
        entry.update({k: v for k, v in params.items() if v is not None})
        self._data.setdefault("ports", []).append(entry)
        return self

    # -------------------------------------------------------------- constructors

    @classmethod
    def dumbbell(
        cls,
        left: int = 1,
        right: int = 1,
        bottleneck_rate: str = "100Mbps",
        bottleneck_delay: str = "10ms",
        access_rate: str = "1Gbps",
        access_delay: str = "1ms",
        queue: Mapping[str, Any] | None = None,
        marker: Mapping[str, Any] | None = None,
        access_queue: Mapping[str, Any] | None = None,
        duration: str = "10s",
        seed: int = 1,
        name: str | None = None,
    ) -> "Scenario":
        """Hosts l0.. → router rl → bottleneck → router rr → hosts r0..; the bottleneck
        port is named ``rl->rr``."""
        topo: dict[str, Any] = {
            "kind": "dumbbell",
            "left": left,
            "right": right,
            "access": {
                "rate": _with_unit(access_rate, "topology.access.rate", "rate"),
                "delay": _with_unit(access_delay, "topology.access.delay", "delay"),
            },
            "bottleneck": {
                "rate": _with_unit(bottleneck_rate, "topology.bottleneck.rate", "rate"),
                "delay": _with_unit(bottleneck_delay, "topology.bottleneck.delay", "delay"),
            },
        }
        if queue is not None:
            topo["bottleneck_queue"] = dict(queue)
        if marker is not None:
            topo["bottleneck_marker"] = dict(marker)
        if access_queue is not None:
            topo["access_queue"] = dict(access_queue)
        data: dict[str, Any] = {"duration": duration, "seed": seed, "topology": topo}
        if name:
            data["name"] = name
        return cls(data)

    @classmethod
    def chain(
        cls,
        hops: int,
        link_rate: str = "100Mbps",
        link_delay: str = "10ms",
        end_hosts: int = 1,
        cross_hosts: int = 0,
        access_rate: str = "1Gbps",
        access_delay: str = "1ms",
        queue: Mapping[str, Any] | None = None,
        marker: Mapping[str, Any] | None = None,
        duration: str = "10s",
        seed: int = 1,
        name: str | None = None,
    ) -> "Scenario":
        """Routers c0..c{hops} in a line (parking lot); end hosts l*/r* and cross hosts
        x{router}_{j}."""
        topo: dict[str, Any] = {
            "kind": "chain",
            "hops": hops,
            "link": {
                "rate": _with_unit(link_rate, "topology.link.rate", "rate"),
                "delay": _with_unit(link_delay, "topology.link.delay", "delay"),
            },
            "access": {
                "rate": _with_unit(access_rate, "topology.access.rate", "rate"),
                "delay": _with_unit(access_delay, "topology.access.delay", "delay"),
            },
            "end_hosts": end_hosts,
            "cross_hosts": cross_hosts,
        }
        if queue is not None:
            topo["queue"] = dict(queue)
        if marker is not None:
            topo["marker"] = dict(marker)
        data: dict[str, Any] = {"duration": duration, "seed": seed, "topology": topo}
        if name:
            data["name"] = name
        return cls(data)


def is_toml_text(text: str) -> bool:
    """Whether a string given as a scenario is TOML text rather than a file's path: text has
    several lines, or a key/value line that names no existing file (``min_th=5/s.toml`` may
    well be a path)."""
    if "\n" in text:
        return True
    if "=" not in text or os.path.exists(text):
        return False
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        # Neither TOML nor an existing file: most likely a path mistyped.
        return not (text.endswith((".toml", ".json")) or os.sep in text)
    return True


def read_scenario_text(p: Path) -> str:
    """A scenario file's text; ScenarioError when it cannot be one (missing, a directory, a
    device or FIFO, too large, not UTF-8)."""
    try:
        return read_text(p, "scenario file")
    except FileNotFoundError:
        raise ScenarioError("", f"no such scenario file: {p}") from None
    except IsADirectoryError:
        raise ScenarioError("", f"{p} is a directory, not a scenario file") from None
    except ValueError as e:
        raise ScenarioError("", str(e)) from None
    except OSError as e:
        raise ScenarioError("", f"cannot read {p}: {e.strerror or e}") from None


def _relative_traces(node: Any) -> list[dict[str, Any]]:
    """The link ``trace`` tables under ``node`` whose ``file`` is a relative path."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        tr = node.get("trace")
        if isinstance(tr, dict) and isinstance(tr.get("file"), str) and not os.path.isabs(tr["file"]):
            found.append(tr)
        for v in node.values():
            found += _relative_traces(v)
    elif isinstance(node, list):
        for v in node:
            found += _relative_traces(v)
    return found


def has_relative_trace(data: Mapping[str, Any]) -> bool:
    return bool(_relative_traces(data))


def _anchor_trace_files(data: Any, base: Path) -> None:
    """Relative ``trace.file`` paths of links are taken from the scenario file's folder."""
    for tr in _relative_traces(data):
        tr["file"] = str(base / tr["file"])


def load_scenario(scenario: Any) -> Scenario:
    """Accepts a Scenario, a dict, a path (``str`` or ``PathLike``) or TOML text."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Mapping):
        return Scenario.from_dict(scenario)
    if isinstance(scenario, os.PathLike):
        return Scenario.from_file(scenario)
    if isinstance(scenario, str):
        if is_toml_text(scenario):
            return Scenario.from_toml(scenario)
        return Scenario.from_file(scenario)
    raise TypeError(
        f"a scenario is a Scenario, a dict, a path or TOML text, not {type(scenario).__name__}"
    )
