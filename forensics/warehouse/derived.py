"""Derived tables: what a report writes back beside the imported rows (findings, keywords, drift episodes, the
compaction audit's facts, the report's runs). Each writer declares its own (``Table``: an analyzer in its
declaration, the report in ``forensics.report.tables``, which lists them all); this is one home for how they are
written, so that a warehouse written by an earlier release keeps reporting after a table gains, loses or retypes
a column.

A derived table's columns are the declared schema of the rows its analyzer hands over (a typed polars frame, read by
DuckDB through the Arrow C stream). Rows go in by column name, never by position, so the order of the columns does not matter. When
the table in the warehouse has other columns (names or types) than the rows, it was written by another version: it is dropped and recreated, since everything in it can be
computed again from the imported rows (a report recomputes the conversations it selects; the rows of others
come back with the next report that selects them). Imported tables are never touched here: their changes are
migrations (``forensics.warehouse.migrations``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl

from forensics.kernel.arrow import stream

# the whole-report cache: the table the last report is stored in (``forensics.report.cache``), and its columns: whoever opens the warehouse
# to write kills it (``expire_report_cache``)
REPORT_CACHE = "report_cache"
REPORT_CACHE_COLUMNS = (("key", "VARCHAR"), ("live", "BOOLEAN"), ("body", "BLOB"), ("pages", "BLOB"))
WRITTEN = ("selection", "whole", "cache", "log")


@dataclass(frozen=True)
class Table:
    """A derived table as its writer declares it (an analyzer in its declaration, ``Analyzer.tables``; the report
    its own): docs/warehouse.md lists them, `forensics export` reads them. ``written``: "selection", the selected
    conversations' rows replaced; "whole", recreated by each report of its analyzer; "cache", cached per
    conversation fingerprint and rules key, recomputed when either changes; "log", appended. ``reuse``: it holds
    only what a report keeps to reuse (no data of its own: an export leaves it out)."""

    name: str
    written: str
    what: str
    reuse: bool = False


SELECTED_ROWS = "conversation_id IN (SELECT conversation_id FROM sel_conversations)"
_ROWS = "_derived_rows"


def replace_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: pl.DataFrame,
    where: str = SELECTED_ROWS,
    params: list[Any] | None = None,
) -> None:
    """Delete the rows ``where`` holds (default: the selected conversations'; its ``?`` bound to ``params``) and
    insert ``rows`` by name."""
    _write(con, table, rows, where, params)


def append_rows(con: duckdb.DuckDBPyConnection, table: str, rows: pl.DataFrame) -> None:
    """Insert ``rows`` by name, keeping what is there (a log of report runs)."""
    _write(con, table, rows, None, None)


def expire_report_cache(con: duckdb.DuckDBPyConnection) -> str | None:
    """Mark the cached report dead (``forensics.report.cache``) and return the key it was live under, if it was:
    whoever opens the warehouse to write may change what that report read."""
    have = columns(con, REPORT_CACHE)
    if not have:
        return None
    if have != list(REPORT_CACHE_COLUMNS):  # made by another build: nothing in it can be read back
        con.execute(f"DROP TABLE {REPORT_CACHE}")
        return None
    rows = con.execute(f"UPDATE {REPORT_CACHE} SET live = false WHERE live RETURNING key").fetchall()
    return str(rows[0][0]) if rows else None


def columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]]:
    """(name, type) of a table of the warehouse, in order; empty when there is no such table."""
    return [
        (n, t)
        for n, t in con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' "
            "ORDER BY column_index",
            [table],
        ).fetchall()
    ]


def _write(
    con: duckdb.DuckDBPyConnection, table: str, rows: pl.DataFrame, where: str | None, params: list[Any] | None
) -> None:
    con.register(_ROWS, stream(rows))
    try:
        want = [(n, t) for n, t, *_ in con.execute(f"DESCRIBE SELECT * FROM {_ROWS}").fetchall()]
        have = columns(con, table)
        if have and sorted(have) != sorted(want):  # another version's columns: recompute, never misplace a value
            con.execute(f"DROP TABLE {table}")
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} AS SELECT * FROM {_ROWS} LIMIT 0")
        if where is not None:
            con.execute(f"DELETE FROM {table} WHERE {where}", params)
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {_ROWS}")
    finally:
        con.unregister(_ROWS)
