"""DuckDB and polars hand each other columns through the Arrow C stream interface, without pyarrow.

DuckDB 2.0 converts a polars frame it scans or registers through pyarrow, and fails without it; an object that only
has ``__arrow_c_stream__`` it reads through the C interface, so ``stream(df)`` wraps the frame. The other way,
``pl.DataFrame(relation)`` reads DuckDB's own stream (``relation_frame``). Nothing here imports pyarrow: it is not a runtime
dependency (only the ``spark`` extra brings it), and ``tests/test_no_pyarrow.py`` runs ingest and report with its
import blocked.
"""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl


class Stream:
    """A polars frame seen only through the Arrow C stream interface (what DuckDB scans without pyarrow). Each scan
    asks for a new stream, so a registered view can be read any number of times. A column of polars' Null type
    (every value None, no type given) goes as INTEGER, as DuckDB types a NULL it stores: DuckDB 2.0 refuses polars'
    Arrow null array ("a non-zero null count but no validity bitmap")."""

    __slots__ = ("df",)

    def __init__(self, df: pl.DataFrame) -> None:
        if not isinstance(df, pl.DataFrame):  # an Arrow table a plug-in hands over (pyarrow is then installed)
            df = pl.DataFrame(df)
        nulls = [n for n, t in df.schema.items() if t == pl.Null]
        self.df = df.with_columns(pl.col(nulls).cast(pl.Int32)) if nulls else df

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.df.__arrow_c_stream__(requested_schema)


def stream(df: pl.DataFrame) -> Stream:
    """``df`` for ``con.register(name, ...)`` or a replacement scan by variable name."""
    return Stream(df)


def relation_frame(rel: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    """A DuckDB relation's rows as a polars frame, read through its Arrow stream."""
    return pl.DataFrame(rel)


def sql_frame(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> pl.DataFrame:
    """Run SQL and return its rows as a polars frame."""
    return pl.DataFrame(con.sql(sql, params=params or None))


def register(con: duckdb.DuckDBPyConnection, name: str, df: pl.DataFrame) -> None:
    """Make ``df`` readable as the view ``name`` on ``con``."""
    con.register(name, Stream(df))


def string_lists(name: str, lists: list[list[str]]) -> pl.Series:
    """``pl.Series(name, lists, dtype=pl.List(pl.String))`` (the same series), built from the strings in one flat
    column grouped by row: polars makes a series of each inner list otherwise, five times the time (docs/scale.md)."""
    import numpy as np

    n = len(lists)
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=n)
    flat = pl.DataFrame(
        {
            "row": np.repeat(np.arange(n, dtype=np.int64), lengths),
            "v": pl.Series([s for v in lists for s in v], dtype=pl.String),
        }
    )
    grouped = flat.group_by("row", maintain_order=True).agg(pl.col("v"))
    rows = pl.DataFrame({"row": np.arange(n, dtype=np.int64)}).join(
        grouped, on="row", how="left", maintain_order="left"
    )
    return rows["v"].fill_null(pl.lit([], dtype=pl.List(pl.String))).alias(name)
