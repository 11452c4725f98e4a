"""Running scenarios and holding their results.

``run()`` hands the scenario to the core (which releases the GIL while it simulates, so runs
in several threads proceed in parallel) and wraps the three result tables as polars frames.
``write_run_dir()`` writes one run in the layout of ``ecnlab run``: Parquet tables, pcap
files and ``run.json``, all at once or not at all.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import threading
import time
import warnings
import weakref
from collections import OrderedDict, deque
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import polars as pl

from . import _core, _tables
from .errors import OutputError
from .fsutil import atomic_dir, read_text
from .scenario import Scenario, has_relative_trace, is_toml_text, load_scenario, read_scenario_text

__all__ = ["Results", "run", "write_run_dir", "read_run_dir", "ProgressFn"]

#: Called about every 0.2 s of wall time with ``{"sim_time_s", "duration_s", "wall_s",
#: "events"}``; returning ``False`` stops the run (KeyboardInterrupt), raising stops it too.
ProgressFn = Callable[[dict], Any]

TABLES = ("flows", "ports", "timeseries")


#: Bytes of time series (polars' estimated size of the frames) that results read from their
#: run directories keep loaded at once, all of them together, least recently used dropped
#: first. It bounds the frames this cache holds, not the process's memory: a dropped frame
#: still referenced elsewhere stays in memory, and flows, ports and results kept in memory
#: are not counted. A paper's full form judges thousands of runs of up to 30 MB of samples
#: each; held at once they took 17 GB.
TIMESERIES_BUDGET_BYTES = 1 << 30


class _LoadedSeries:
    """The time series loaded from run directories, least recently used first: over the
    budget, the oldest is dropped (its results read it again when asked).

    A result that dies is forgotten by a weak reference's callback, which only queues it:
    the callback can run inside :meth:`admit` (a garbage collection while it holds the lock),
    so it takes no lock; every method that reads the entries first forgets what is queued."""

    def __init__(self) -> None:
        self.held: OrderedDict[int, tuple[weakref.ref[Results], int]] = OrderedDict()
        self._bytes = 0
        self._dead: deque[tuple[int, weakref.ref[Results]]] = deque()
        self.lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """The estimated size of the frames held now."""
        with self.lock:
            self._forget_dead()
            return self._bytes

    def admit(self, res: Results, frame: pl.DataFrame) -> pl.DataFrame:
        """Gives ``res`` the frame it read from its directory and holds it within the budget;
        returns the frame ``res`` now has (another thread's, or one assigned meanwhile, if it
        has one: a result is admitted once)."""
        with self.lock:
            self._forget_dead()
            if res._timeseries is not None:
                return res._timeseries
            res._timeseries = frame
            if res._timeseries_from is None:
                return frame  # its frame was assigned while this one was read
            key = id(res)
            if (entry := self.held.pop(key, None)) is not None:
                self._bytes -= entry[1]
            size = frame.estimated_size()
            self.held[key] = (weakref.ref(res, lambda ref, key=key: self._dead.append((key, ref))), size)
            self._bytes += size
            while self._bytes > TIMESERIES_BUDGET_BYTES and len(self.held) > 1:
                _, (ref, n) = self.held.popitem(last=False)
                self._bytes -= n
                if (old := ref()) is not None and old._timeseries_from is not None:
                    old._timeseries = None
            return frame

    def touch(self, res: Results) -> None:
        with self.lock:
            if (entry := self.held.get(id(res))) is not None and entry[0]() is res:
                self.held.move_to_end(id(res))

    def assign(self, res: Results, frame: pl.DataFrame) -> None:
        """Gives ``res`` a frame of its own (no longer read from its directory): its entry
        goes, so no eviction drops that frame."""
        with self.lock:
            self._forget_dead()
            res._timeseries = frame
            res._timeseries_from = None
            if (entry := self.held.get(id(res))) is not None and entry[0]() is res:
                del self.held[id(res)]
                self._bytes -= entry[1]

    def _forget_dead(self) -> None:
        while self._dead:
            key, ref = self._dead.popleft()
            if (entry := self.held.get(key)) is not None and entry[0] is ref:
                del self.held[key]
                self._bytes -= entry[1]


_LOADED = _LoadedSeries()


#: Fields of ``run.json`` a run may lack: ``buffers`` (what it needed of each port's buffer
#: limits, from the simulator; runs written before it was recorded lack it) and, for a run
#: not simulated, ``identical_to`` and ``identical_reason`` (experiments._identical).
RUN_JSON_OPTIONAL = ("buffers", "identical_to", "identical_reason")


class Results:
    """What one run produced: ``flows`` (one row per flow), ``ports`` (one row per egress
    port: counters, utilisation, queue and sojourn statistics), ``timeseries`` (long format:
    ``time_s, kind, entity, value``), ``meta`` (seed, wall time, events, packet counts) and
    ``scenario_toml`` (the scenario as run, defaults filled in).

    Results read from a run directory with ``lazy=True`` (:func:`read_run_dir`) read their
    time series when first asked and may drop it again under :data:`TIMESERIES_BUDGET_BYTES`:
    the directory must stay while they are used (a read of a file that is gone, or of
    another file than the one they were opened with, raises OutputError naming it)."""

    def __init__(
        self,
        flows: pl.DataFrame,
        ports: pl.DataFrame,
        timeseries: pl.DataFrame | None,
        meta: dict[str, Any],
        scenario_toml: str,
        timeseries_from: Path | None = None,
        timeseries_file: tuple[int, ...] | None = None,
    ) -> None:
        if timeseries is None and timeseries_from is None:
            raise ValueError("Results need their time series or the run directory holding it")
        self.flows = flows
        self.ports = ports
        self._timeseries = timeseries
        self._timeseries_from = timeseries_from
        #: The time series file these results were opened with (:func:`_file_identity`):
        #: a later read of another file there (the directory replaced, the file rewritten)
        #: would pair this run's flows with another run's samples, and is refused.
        self._timeseries_file = timeseries_file
        if timeseries is None and timeseries_file is None:
            self._timeseries_file = _file_identity(Path(timeseries_from) / "timeseries.parquet")
        self.meta = meta
        self.scenario_toml = scenario_toml
        self._paths: dict[str, list[str]] | None = None
        self._links: dict[str, tuple[list[tuple[float, int]], int]] | None = None
        #: What the reproductions' run checks (stall, outages, starvation) found in this run,
        #: by check and port: a run shared by several readings of a paper is judged once, not
        #: once per reading (the checks read its time series, which may have to be read back
        #: from disk each time). Results are not changed once made, so the findings hold.
        self.judged: dict[tuple[str, ...], Any] = {}

    @property
    def timeseries(self) -> pl.DataFrame:
        ts = self._timeseries
        if ts is not None:
            if self._timeseries_from is not None:
                _LOADED.touch(self)
            return ts
        src = self._timeseries_from
        assert src is not None, "a result without its time series has the directory holding it"
        return _LOADED.admit(self, read_kept_series(src, self._timeseries_file))

    @timeseries.setter
    def timeseries(self, frame: pl.DataFrame) -> None:
        _LOADED.assign(self, frame)
        self.judged.clear()

    @classmethod
    def _from_core(cls, out: dict) -> "Results":
        return cls(
            _tables.to_polars(out["flows"]),
            _tables.to_polars(out["ports"]),
            _tables.to_polars(out["timeseries"]),
            dict(out["meta"]),
            out["scenario_toml"],
        )

    def __repr__(self) -> str:
        m = self.meta
        return (
            f"<Results flows={self.flows.height} ports={self.ports.height} "
            f"samples={self.timeseries.height} events={m.get('events')} wall={m.get('wall_s', 0):.3f}s>"
        )

    # ----------------------------------------------------------------- lookups

    def flow(self, name: str) -> dict[str, Any]:
        """One flow's row as a dict."""
        rows = self.flows.filter(pl.col("name") == name)
        if rows.height != 1:
            raise KeyError(f"no flow named {name!r}; flows: {self.flows['name'].to_list()[:10]}")
        return rows.row(0, named=True)

    def port(self, name: str) -> dict[str, Any]:
        """One port's row (``"rl->rr"``) as a dict."""
        rows = self.ports.filter(pl.col("port") == name)
        if rows.height != 1:
            raise KeyError(f"no port named {name!r}; ports: {self.ports['port'].to_list()[:10]}")
        return rows.row(0, named=True)

    def flow_paths(self) -> dict[str, list[str]]:
        """Each flow's path: the egress ports (``"r0->r1"``), in order, that its data
        packets cross from its source host to its destination host. Routes are not recorded
        in a run: they are recomputed from the run's scenario by the simulator's own routing
        (static fewest-hop routes, ties to the lowest port index), so they are the ones the run
        forwarded by. ScenarioError when the scenario does not read (e.g. results built by
        hand without one); a flow whose hosts have no route is left out."""
        if self._paths is None:
            pairs = sorted(set(zip(self.flows["src"].to_list(), self.flows["dst"].to_list())))
            found = dict(zip(pairs, _core.host_paths(self.scenario_toml, pairs)))
            self._paths = {n: found[(a, b)] for n, a, b in self.flows.select("name", "src", "dst").iter_rows() if found[(a, b)] is not None}
        return dict(self._paths)

    def port_links(self) -> dict[str, tuple[list[tuple[float, int]], int]]:
        """Each egress port's link: ``{port: ([(from_s, bps), …], framing_bytes)}``, its rate
        schedule (the first step at 0) and the link-layer bytes it adds to every packet. The
        ports table's ``rate_bps`` is a time-varying link's first rate only; the schedule is
        rebuilt from the run's scenario as :meth:`flow_paths` rebuilds routes. ScenarioError
        when the scenario does not read."""
        if self._links is None:
            self._links = {name: (list(steps), framing) for name, steps, framing in _core.port_links(self.scenario_toml)}
        return dict(self._links)

    def rate_at(self, port: str, times: Sequence[float]) -> list[float]:
        """The link rate (b/s) of ``port`` in force at each of ``times`` (seconds)."""
        steps = self.port_links()[port][0]
        starts = [t for t, _ in steps]
        return [float(steps[max(bisect.bisect_right(starts, t) - 1, 0)][1]) for t in times]

    def capacity_bits(self, port: str, t0: float, t1: float) -> float:
        """The bits ``port``'s link could carry over [t0, t1), its rate schedule integrated."""
        steps = self.port_links()[port][0]
        bits = 0.0
        for i, (start, bps) in enumerate(steps):
            end = steps[i + 1][0] if i + 1 < len(steps) else math.inf
            lo, hi = max(start, t0), min(end, t1)
            if hi > lo:
                bits += bps * (hi - lo)
        return bits

    def series(self, kind: str, entity: str | None = None) -> pl.DataFrame:
        """Samples of one kind (``queue_pkts``, ``rate_bps``, ``cwnd_bytes`` …), optionally
        of one port or flow: columns ``time_s, entity, value``."""
        kinds = self.timeseries["kind"].unique().sort().to_list() if self.timeseries.height else []
        if kind not in kinds:
            raise KeyError(f"no samples of kind {kind!r}; this run sampled: {', '.join(kinds) or 'nothing'}")
        ts = self.timeseries.filter(pl.col("kind") == kind)
        if entity is not None:
            ts = ts.filter(pl.col("entity") == entity)
            if ts.height == 0:
                known = self.timeseries.filter(pl.col("kind") == kind)["entity"].unique().sort().to_list()
                raise KeyError(f"no {kind} samples of {entity!r}; sampled: {', '.join(known[:20])}")
        return ts.select("time_s", "entity", "value")

    def scenario(self) -> Scenario:
        return Scenario.from_toml(self.scenario_toml)

    def run_info(self) -> dict[str, Any]:
        """What ``run.json`` holds."""
        m = self.meta
        wall = m.get("wall_s") or 0.0
        info = {
            "ecnlab_version": _core.__version__,
            "source_hash": _core.source_hash,
            "seed": m.get("seed"),
            "duration_s": m.get("duration_s"),
            "wall_s": wall,
            "events": m.get("events"),
            "events_per_s": (m.get("events", 0) / wall) if wall > 0 else None,
            "packets": {
                "created": m.get("packets_created"),
                "delivered": m.get("packets_delivered"),
                "dropped": m.get("packets_dropped"),
                "peak_in_flight": m.get("peak_packets"),
            },
            "rows": {"flows": self.flows.height, "ports": self.ports.height, "timeseries": self.timeseries.height},
            "warnings": list(m.get("warnings") or []),
            "elements": dict(m.get("elements") or {}),
            "scenario": Scenario.from_toml(self.scenario_toml).to_dict(),
            "scenario_toml": self.scenario_toml,
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        # What the run needed of each port's buffer limits (absent from older runs), and for
        # a run not simulated, the run it is proven identical to (experiments._identical).
        for k in RUN_JSON_OPTIONAL:
            if m.get(k) is not None:
                info[k] = m[k]
        return info

    # ----------------------------------------------------------------- output

    def to_parquet(self, directory: str | os.PathLike[str]) -> Path:
        """Writes ``flows.parquet``, ``ports.parquet``, ``timeseries.parquet`` and
        ``run.json`` into ``directory``, as ``ecnlab run`` does: all at once or not at all,
        replacing an earlier result there; a directory holding anything else is refused
        (OutputError)."""
        with atomic_dir(directory) as tmp:
            _write_into(self, tmp, None)
        return Path(directory)


def _scenario_text(scenario: Any) -> tuple[str, str]:
    """(text, format) for the core. Files and TOML text go to the core untouched so its
    messages can point at lines; dicts and builders go as JSON."""
    if isinstance(scenario, (str, os.PathLike)) and not isinstance(scenario, Scenario):
        if isinstance(scenario, str) and is_toml_text(scenario):
            return scenario, "toml"
        p = Path(scenario)
        s = Scenario.from_file(p)  # raises ScenarioError for a missing/unreadable file
        if p.suffix.lower() == ".json":
            return s.to_json(), "json"
        text = read_scenario_text(p)
        # A relative trace path is the file's folder's: from_file made it absolute.
        if has_relative_trace(Scenario.from_toml(text).to_dict()):
            return s.to_json(), "json"
        return text, "toml"
    return load_scenario(scenario).to_json(), "json"


def validate(scenario: Any) -> str:
    """Checks a scenario without running it; returns it as normalised TOML, raises
    :class:`ecnlab.ScenarioError` naming the offending key."""
    text, fmt = _scenario_text(scenario)
    return _core.validate(text, fmt)


def run(
    scenario: Any,
    seed: int | None = None,
    pcap_dir: str | os.PathLike[str] | None = None,
    progress: ProgressFn | None = None,
    warn: bool = True,
) -> Results:
    """Runs a scenario (a path, TOML text, a dict or a :class:`Scenario`) and returns its
    :class:`Results`. ``seed`` overrides the scenario's; ``pcap_dir`` receives the pcap files
    of the ports the scenario captures. Ctrl-C interrupts a run (KeyboardInterrupt). The
    run's warnings (``meta["warnings"]``) are issued as :class:`~ecnlab.RunWarning` unless
    ``warn`` is False (callers that report them themselves; the :mod:`warnings` module's
    filters are process-wide, so threads cannot catch their own)."""
    text, fmt = _scenario_text(scenario)
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= 2**63 - 1):
        from .errors import ScenarioError

        raise ScenarioError("seed", f"must be an integer from 0 to 2^63 − 1 (the largest a scenario file holds), got {seed!r}")
    out = _core.run(
        text,
        fmt,
        seed=seed,
        pcap_dir=None if pcap_dir is None else os.fspath(pcap_dir),
        progress=progress,
    )
    res = Results._from_core(out)
    if warn:
        from .errors import RunWarning

        for w in res.meta.get("warnings") or []:
            warnings.warn(w, RunWarning, stacklevel=2)
    return res


def write_run_dir(
    scenario: Any,
    out_dir: str | os.PathLike[str],
    seed: int | None = None,
    progress: ProgressFn | None = None,
    extra: Mapping[str, Any] | None = None,
    warn: bool = True,
) -> Results:
    """Runs a scenario and writes ``out_dir`` in the layout of ``ecnlab run``:
    ``flows.parquet``, ``ports.parquet``, ``timeseries.parquet``, ``pcap/*.pcap`` (when the
    scenario captures) and ``run.json``. The directory appears complete or not at all.
    ``warn``: as :func:`run`."""
    with atomic_dir(out_dir) as tmp:
        res = run(scenario, seed=seed, pcap_dir=tmp / "pcap", progress=progress, warn=warn)
        _write_into(res, tmp, extra)
    return res


def write_results_dir(res: Results, out_dir: str | os.PathLike[str], extra: Mapping[str, Any] | None = None) -> None:
    """Writes the results of a finished run in the layout of ``ecnlab run`` (no pcap files),
    all at once or not at all."""
    with atomic_dir(out_dir) as tmp:
        _write_into(res, tmp, extra)


def _write_into(res: Results, tmp: Path, extra: Mapping[str, Any] | None) -> None:
    for name in TABLES:
        getattr(res, name).write_parquet(tmp / f"{name}.parquet")
    info = res.run_info()
    pcap = tmp / "pcap"
    info["pcap"] = sorted(p.name for p in pcap.glob("*.pcap")) if pcap.is_dir() else []
    if extra:
        info.update(extra)
    (tmp / "run.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


def read_run_dir(directory: str | os.PathLike[str], lazy: bool = False) -> Results:
    """Loads a directory written by ``ecnlab run`` (or ``write_run_dir``); OutputError
    naming the file when one is missing or does not read. ``lazy``: the time series is read
    when first asked for and may be dropped again (:data:`TIMESERIES_BUDGET_BYTES`); its file
    must be there now, and stay (the same file: one replaced or rewritten since is refused
    when read) while the results are used."""
    d = Path(directory)
    # The series' file as the other tables are read beside it, and unchanged after: the
    # directory was not replaced in between.
    kept = _file_identity(d / "timeseries.parquet") if lazy else None
    info = read_run_json(d)
    frames: dict[str, pl.DataFrame | None] = {}
    for name in TABLES:
        if lazy and name == "timeseries":
            if _file_identity(d / "timeseries.parquet") != kept:
                raise OutputError(f"{d / 'timeseries.parquet'} changed while its run directory was read: another process is writing {d}")
            frames[name] = None
        else:
            frames[name] = read_table(d, name)
    pk = info.get("packets", {})
    meta = {
        "seed": info.get("seed"),
        "duration_s": info.get("duration_s"),
        "wall_s": info.get("wall_s"),
        "events": info.get("events"),
        "packets_created": pk.get("created"),
        "packets_delivered": pk.get("delivered"),
        "packets_dropped": pk.get("dropped"),
        "peak_packets": pk.get("peak_in_flight"),
        "elements": info.get("elements", {}),
        **{k: info[k] for k in RUN_JSON_OPTIONAL if k in info},
    }
    return Results(frames["flows"], frames["ports"], frames["timeseries"], meta, info.get("scenario_toml", ""), timeseries_from=d if lazy else None, timeseries_file=kept)


def read_run_json(d: Path) -> dict[str, Any]:
    """A run directory's ``run.json``; OutputError naming the file when it cannot be read
    or is not what ``ecnlab run`` writes."""
    f = d / "run.json"
    try:
        info = json.loads(read_text(f, "run.json"))
    except FileNotFoundError:
        raise OutputError(f"{d} is not a run directory (it has no run.json)") from None
    except (OSError, ValueError) as e:
        # json.JSONDecodeError is a ValueError.
        raise OutputError(f"{f} is not a readable run.json ({getattr(e, 'strerror', None) or e}); write the run again with `ecnlab run`") from None
    except RecursionError:
        raise OutputError(f"{f} is not a readable run.json (it nests too deeply)") from None
    if not isinstance(info, dict):
        raise OutputError(f"{f} is not a run.json written by ecnlab (not a JSON object)")
    return info


def read_table(d: Path, name: str) -> pl.DataFrame:
    """One result table of a run directory; OutputError naming the file when it does not
    read."""
    f = d / f"{name}.parquet"
    try:
        return pl.read_parquet(f)
    except FileNotFoundError:
        raise OutputError(f"{f} is missing; write the run again with `ecnlab run`") from None
    except Exception as e:  # noqa: BLE001 - polars raises its own kinds for a damaged file
        raise OutputError(f"{f} does not read ({str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}); write the run again with `ecnlab run`") from None


def _file_identity(f: Path) -> tuple[int, ...]:
    """What tells a file from another written at the same path: its device, inode, size and
    modification time; OutputError naming it when it is missing or cannot be read."""
    try:
        st = f.stat()
    except FileNotFoundError:
        raise OutputError(f"{f} is missing; write the run again with `ecnlab run`") from None
    except OSError as e:
        raise OutputError(f"{f} cannot be read ({e.strerror or e})") from None
    return _identity(st)


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read_kept_series(d: Path, identity: tuple[int, ...] | None) -> pl.DataFrame:
    """The time series of a run directory whose results were read lazily, from the very file
    they were opened with (``identity``, :func:`_file_identity`): OutputError naming the file
    when it is gone or another file stands there now (the directory replaced or rewritten
    while its results were used), which would give this run's results another run's
    samples."""
    f = d / "timeseries.parquet"
    try:
        fh = open(f, "rb")
    except FileNotFoundError:
        raise OutputError(f"{f} is missing: its run directory was removed while its results were used (was another process writing it?)") from None
    except OSError as e:
        raise OutputError(f"{f} cannot be read ({e.strerror or e})") from None
    with fh:
        if identity is not None and _identity(os.fstat(fh.fileno())) != identity:
            raise OutputError(
                f"{f} is not the file its run's results were read with: the run directory was replaced or rewritten "
                "while they were used (was another process writing it?); its samples would be another run's"
            )
        try:
            return pl.read_parquet(fh)
        except Exception as e:  # noqa: BLE001 - polars raises its own kinds for a damaged file
            raise OutputError(f"{f} does not read ({str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}); write the run again with `ecnlab run`") from None
