"""The result store of a sweep: one Parquet dataset per table, one file per run.

Layout of ``DIR``::

    sweep.toml                  the sweep as given (when it came from a file or text)
    sweep.json                  its axes, and every run's key and axis values
    runs/<key>.parquet          one row per run: status, error, wall time, events, packets,
                                the scenario (normalised TOML) and the axis values; for a
                                run written from another that proves it identical, that
                                run's key and why (identical_to, identical_reason)
    flows/<key>.parquet         the run's tables, each row with the run's key and axis values
    ports/<key>.parquet
    timeseries/<key>.parquet
    superseded/<table>/         runs that are not points of the sweep as last run (removed
                                points; runs of another build of the simulator)

so each table reads in one line, axis values as columns::

    pl.scan_parquet("DIR/flows/*.parquet")
    pyarrow.dataset.dataset("DIR/flows")
    duckdb.sql("SELECT * FROM 'DIR/flows/*.parquet'")

A run is committed by renaming its files into place from ``DIR/.staging/``, its ``runs`` row
last; a run whose row is missing is not done, and its table files (left by a process killed
between two renames) are removed when the store is next opened. Only ``status = 'ok'`` rows
have table files; their row counts are in the row (``rows_flows``, ``rows_ports``,
``rows_timeseries``), so a run is done only while each of its files reads and holds the rows
it was written with. A damaged run (a file truncated, removed or unreadable, its row
unreadable) is not done: the next sweep runs it again and says so.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import polars as pl
import pyarrow.parquet as pq

from .. import _core
from ..errors import OutputError

__all__ = ["Store", "TABLES", "RESERVED"]

TABLES = ("flows", "ports", "timeseries")
#: Columns every table row carries besides its own; axis names must differ from them.
RESERVED = ("run_key",)
RUN_COLUMNS = (
    "run_key",
    "status",
    "error",
    "wall_s",
    "events",
    "duration_s",
    "packets_created",
    "packets_delivered",
    "packets_dropped",
    "warnings",
    "ecnlab_version",
    "source_hash",
    "finished_at",
    "scenario_toml",
    "rows_flows",
    "rows_ports",
    "rows_timeseries",
    "identical_to",
    "identical_reason",
    "buffers_json",
)
#: Columns of the runs table that rows committed before them lack (null there).
LATER_RUN_COLUMNS = {"warnings": pl.String, "identical_to": pl.String, "identical_reason": pl.String, "buffers_json": pl.String}
MARKER = "sweep.json"


class Store:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._lock: Any = None

    # ------------------------------------------------------------------ layout

    def path(self, table: str, key: str) -> Path:
        return self.root / table / f"{key}.parquet"

    @property
    def staging(self) -> Path:
        return self.root / ".staging"

    def open(self, description: Mapping[str, Any], sweep_text: str = "") -> None:
        """Creates the store (or reopens it for the same axes) and removes what an
        interrupted writer left."""
        r = self.root
        if r.exists() and not r.is_dir():
            raise OutputError(f"{r} exists and is not a directory")
        if r.is_dir() and any(r.iterdir()) and not (r / MARKER).is_file():
            raise OutputError(f"{r} exists and is not an ecnlab sweep store; choose another directory or remove it")
        old = self.description()
        if old is not None:
            was = [a["name"] for a in old.get("axes", [])]
            now = [a["name"] for a in description.get("axes", [])]
            if was != now:
                raise OutputError(
                    f"{r} holds a sweep over axes {was}, not {now}; its rows could not be read together — "
                    "choose another directory"
                )
        try:
            for t in ("runs",) + TABLES:
                (r / t).mkdir(parents=True, exist_ok=True)
            self._lock = open(r / ".lock", "w")
        except OSError as e:
            raise OutputError(f"cannot write in {r}: {e.strerror or e}") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise OutputError(f"another sweep is writing {r}; wait for it, or choose another directory") from None
        try:
            if self.staging.exists():
                shutil.rmtree(self.staging)
            self.staging.mkdir()
            self._orphans()
            if "points" in description:
                self._supersede({p["run_key"] for p in description["points"]})
            self._write_text(
                MARKER,
                json.dumps(dict(description, ecnlab_version=_core.__version__, source_hash=_core.source_hash), indent=2, default=str) + "\n",
            )
            if sweep_text:
                self._write_text("sweep.toml", sweep_text)
        except OSError as e:
            self.close()
            raise OutputError(f"cannot write in {r}: {e.strerror or e} ({e.filename or r})") from None
        except BaseException:
            self.close()
            raise

    def _write_text(self, name: str, text: str) -> None:
        tmp = self.staging / name
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.root / name)

    def _orphans(self) -> None:
        committed = {f.stem for f in (self.root / "runs").glob("*.parquet")}
        for t in TABLES:
            for f in (self.root / t).glob("*.parquet"):
                if f.stem not in committed:
                    f.unlink(missing_ok=True)

    def _supersede(self, current: set[str]) -> None:
        """Moves the runs that are not points of the current sweep (points since removed, or
        runs of another build of the simulator) to ``superseded/``, so that a table's files
        are exactly the current sweep's; brings back those that are points again. A run
        leaves with its row first and comes back with its row last."""
        old = self.root / "superseded"
        for t in ("runs",) + TABLES:
            for f in list((self.root / t).glob("*.parquet")):
                if f.stem not in current:
                    (old / t).mkdir(parents=True, exist_ok=True)
                    os.replace(f, old / t / f.name)
        for t in TABLES + ("runs",):
            for f in list((old / t).glob("*.parquet")) if (old / t).is_dir() else []:
                if f.stem in current:
                    os.replace(f, self.root / t / f.name)

    def description(self) -> dict[str, Any] | None:
        try:
            return json.loads((self.root / MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    # ------------------------------------------------------------------- reads

    def statuses(self) -> dict[str, str]:
        """run key → status of every committed run; ``damaged`` for a run whose row or
        table files do not read back as written (:meth:`damage` says why)."""
        return {k: ("damaged" if why else st) for k, (st, why) in self.check().items()}

    def damage(self) -> dict[str, str]:
        """run key → what is wrong with it, for every damaged run."""
        return {k: why for k, (_, why) in self.check().items() if why}

    def check(self) -> dict[str, tuple[str, str]]:
        """run key → (status, what is wrong: empty for a sound run) of every committed run:
        its row reads, and (for a run that succeeded) each table file reads and holds the
        rows it was written with."""
        runs = self.root / "runs"
        out: dict[str, tuple[str, str]] = {}
        for f in sorted(runs.glob("*.parquet")) if runs.is_dir() else []:
            key = f.stem
            try:
                cols = [c for c in ("run_key", "status", "rows_flows", "rows_ports", "rows_timeseries") if c in pq.read_schema(f).names]
                row = pl.read_parquet(f, columns=cols).row(0, named=True)
            except Exception as e:  # noqa: BLE001 - any failure to read the row is damage
                out[key] = ("damaged", f"{self._rel(f)} does not read ({_short(e)})")
                continue
            status = str(row.get("status"))
            out[key] = (status, self._tables_damage(key, row) if status == "ok" else "")
        return out

    def _tables_damage(self, key: str, row: Mapping[str, Any]) -> str:
        for t in TABLES:
            f = self.path(t, key)
            if not f.is_file():
                return f"{self._rel(f)} is missing"
            try:
                rows = pq.read_metadata(f).num_rows
            except Exception as e:  # noqa: BLE001 - a truncated or garbled file
                return f"{self._rel(f)} does not read ({_short(e)})"
            want = row.get(f"rows_{t}")
            if want is not None and rows != want:
                return f"{self._rel(f)} holds {rows} rows; {want} were written"
        return ""

    def _rel(self, f: Path) -> str:
        try:
            return str(f.relative_to(self.root))
        except ValueError:
            return str(f)

    def scan(self, table: str) -> pl.LazyFrame:
        """One table of every committed run, axis values as columns."""
        if table not in ("runs",) + TABLES:
            raise ValueError(f"no table {table!r}; tables: runs, {', '.join(TABLES)}")
        files = sorted((self.root / table).glob("*.parquet"))
        if not files:
            return pl.LazyFrame()
        if table == "runs":
            # Runs committed before a column existed still read (null there).
            schema = dict(pl.read_parquet_schema(files[0]))
            for col, dtype in LATER_RUN_COLUMNS.items():
                schema.setdefault(col, dtype)
            return pl.scan_parquet(files, schema=schema, missing_columns="insert")
        return pl.scan_parquet(files)

    # ------------------------------------------------------------------ writes

    def commit(self, key: str, values: Mapping[str, Any], outcome: Mapping[str, Any]) -> None:
        """Writes one run (its tables when it succeeded, its row in any case) all at once."""
        stage = self.staging / key
        if stage.exists():
            shutil.rmtree(stage)
        stage.mkdir()
        axis_cols = [_lit(v).alias(k) for k, v in values.items()]
        moves: list[tuple[Path, Path]] = []
        ok = outcome["status"] == "ok"
        rows: dict[str, int | None] = {t: None for t in TABLES}
        if ok:
            for t in TABLES:
                df: pl.DataFrame = outcome["tables"][t]
                rows[t] = df.height
                clash = [k for k in values if k in df.columns]
                if clash:
                    raise OutputError(f"the axis {clash[0]!r} has the name of a column of the {t} table; give it an alias")
                df = df.select(pl.lit(key).alias("run_key"), *axis_cols, pl.all())
                df.write_parquet(stage / f"{t}.parquet")
                moves.append((stage / f"{t}.parquet", self.path(t, key)))
        meta = outcome.get("meta") or {}
        row = {
            "run_key": key,
            "status": outcome["status"],
            "error": outcome.get("error") or "",
            "wall_s": float(meta.get("wall_s") or 0.0),
            "events": int(meta.get("events") or 0),
            "duration_s": float(meta.get("duration_s") or 0.0),
            "packets_created": int(meta.get("packets_created") or 0),
            "packets_delivered": int(meta.get("packets_delivered") or 0),
            "packets_dropped": int(meta.get("packets_dropped") or 0),
            # One line per warning of the run (empty: none), as run.json lists them.
            "warnings": "\n".join(meta.get("warnings") or []),
            "ecnlab_version": _core.__version__,
            "source_hash": _core.source_hash,
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "scenario_toml": outcome.get("scenario_toml") or "",
            **{f"rows_{t}": rows[t] for t in TABLES},
            # Written from the run with this key instead of simulated, and why (null: simulated).
            "identical_to": meta.get("identical_to"),
            "identical_reason": meta.get("identical_reason"),
            # run.json's `buffers`: what each port needed and whether a limit was read, so a
            # later sweep can prove a run identical to this one.
            "buffers_json": json.dumps(meta["buffers"], sort_keys=True) if meta.get("buffers") else None,
        }
        runs = pl.DataFrame([row], schema_overrides={**{f"rows_{t}": pl.Int64 for t in TABLES}, **LATER_RUN_COLUMNS}).select(
            pl.col("run_key"), *axis_cols, pl.exclude("run_key")
        )
        runs.write_parquet(stage / "runs.parquet")
        if not ok:
            for t in TABLES:
                self.path(t, key).unlink(missing_ok=True)
        for src, dst in moves:
            os.replace(src, dst)
        os.replace(stage / "runs.parquet", self.path("runs", key))
        shutil.rmtree(stage, ignore_errors=True)

    def commit_identical(self, key: str, values: Mapping[str, Any], src: str, meta: Mapping[str, Any], toml: str) -> None:
        """Writes the run ``key`` (axis ``values``) from the committed run ``src`` that is
        proven the same run (``meta``: :func:`ecnlab.experiments._identical.identical_meta`):
        ``src``'s tables under this run's key and axis values, as a simulation of it writes
        them, and its own row."""
        tables = {t: pl.read_parquet(self.path(t, src)).drop("run_key", *values) for t in TABLES}
        self.commit(key, values, {"status": "ok", "tables": tables, "meta": meta, "scenario_toml": toml})

    def meta(self, key: str) -> dict[str, Any] | None:
        """What the row of a committed run says of it, as a run's ``meta`` (its counts,
        warnings and ``buffers``), or None when it has no row."""
        try:
            row = pl.read_parquet(self.path("runs", key)).row(0, named=True)
        except (OSError, pl.exceptions.PolarsError):
            return None
        meta = {k: row.get(k) for k in ("events", "duration_s", "packets_created", "packets_delivered", "packets_dropped")}
        meta["warnings"] = [w for w in (row.get("warnings") or "").split("\n") if w]
        if row.get("buffers_json"):
            meta["buffers"] = json.loads(row["buffers_json"])
        return meta

    def close(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def remove_runs(self, keys: Iterable[str]) -> None:
        for k in keys:
            self.path("runs", k).unlink(missing_ok=True)
            for t in TABLES:
                self.path(t, k).unlink(missing_ok=True)


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text[:200]


def _lit(v: Any) -> pl.Expr:
    # Integers as Int64 whatever their size, so every file of a table has one schema.
    if isinstance(v, bool):
        return pl.lit(v, dtype=pl.Boolean)
    if isinstance(v, int):
        return pl.lit(v, dtype=pl.Int64 if -(2**63) <= v < 2**63 else pl.UInt64)
    if isinstance(v, float):
        return pl.lit(v, dtype=pl.Float64)
    return pl.lit(str(v), dtype=pl.String)
