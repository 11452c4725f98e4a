"""Result tables from the core to Arrow and polars, without per-row Python work.

The core hands each column over as one ``bytes`` object in Arrow layout (8-byte little-endian
numbers, LSB-first validity bitmaps, dictionary codes for strings); Arrow wraps those buffers
without copying them and polars takes the Arrow table.
"""

from __future__ import annotations

import sys

import polars as pl
import pyarrow as pa

_NUMERIC = {"f64": pa.float64(), "i64": pa.int64()}

if sys.byteorder != "little":  # pragma: no cover - every supported platform is little-endian
    raise ImportError("ecnlab's result tables assume a little-endian machine")


def _column(col: dict, rows: int) -> pa.Array:
    kind = col["type"]
    if kind in _NUMERIC:
        validity = col["validity"]
        return pa.Array.from_buffers(
            _NUMERIC[kind],
            rows,
            [pa.py_buffer(validity) if validity is not None else None, pa.py_buffer(col["data"])],
        )
    if kind == "bool":
        return pa.Array.from_buffers(pa.bool_(), rows, [None, pa.py_buffer(col["data"])])
    if kind == "str":
        codes = pa.Array.from_buffers(pa.uint32(), rows, [None, pa.py_buffer(col["data"])])
        return pa.array(col["dictionary"], pa.string()).take(codes)
    raise TypeError(f"unknown column type {kind!r} from the core")


def to_arrow(table: dict) -> pa.Table:
    rows = table["rows"]
    cols = table["columns"]
    return pa.Table.from_arrays([_column(c, rows) for c in cols], names=[c["name"] for c in cols])


def to_polars(table: dict) -> pl.DataFrame:
    return pl.from_arrow(to_arrow(table))
