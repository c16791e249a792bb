"""Opening the one DuckDB file everything reads and writes, migrating it on the way."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from forensics.kernel.arrow import sql_frame
from forensics.kernel.errors import WarehouseError
from forensics.kernel.redact import install_sql
from forensics.warehouse import DEFAULT_DB, derived, machine
from forensics.warehouse.migrations import MIGRATIONS

SCHEMA_VERSION = len(MIGRATIONS)


def frame(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
    """Run SQL and return a polars DataFrame (through the Arrow C stream, no row loop, no pyarrow)."""
    return sql_frame(con, sql, params)


def set_memory_limit(con: duckdb.DuckDBPyConnection, budget_mb: int) -> None:
    """DuckDB's memory limit on ``con``: the command's budget bounded by the machine, or ``FORENSICS_DUCKDB_MEMORY``
    (one override for ingest and report; ``machine.memory_limit``)."""
    con.execute(f"SET memory_limit = '{machine.memory_limit(budget_mb)}'")


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Warehouse:
    """A connection to the warehouse file, schema guaranteed current."""

    def __init__(self, path: str | os.PathLike[str], con: duckdb.DuckDBPyConnection, read_only: bool) -> None:
        self.path, self.con, self.read_only = Path(path), con, read_only
        # the key the last report was cached under when this writable open found it live (it is dead now)
        self.cache_key = None if read_only else derived.expire_report_cache(con)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def schema_version(self) -> int:
        return _version(self.con)


def open_warehouse(
    path: str | os.PathLike[str] = DEFAULT_DB, read_only: bool = False, *, sealed: bool = False
) -> Warehouse:
    """Open (creating and migrating when writable) the warehouse at ``path``. ``sealed`` (read-only): the
    connection reaches no file but the warehouse and its settings are locked (SEALED), for SQL a user wrote."""
    path = Path(path)
    if read_only and not path.exists():
        raise WarehouseError(f"{path}: no warehouse here; run `forensics ingest SOURCE --db {path}` first")
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    con = _connect(path, read_only, sealed and read_only)
    try:
        version = _version(con)
        if version > SCHEMA_VERSION:
            raise WarehouseError(
                f"{path}: made by a newer forensics (schema {version}, this one knows {SCHEMA_VERSION});"
                " upgrade forensics to read it"
            )
        if version < SCHEMA_VERSION:
            if read_only:  # upgrade in place once, then continue read-only
                con.close()
                open_warehouse(path).close()
                con = _connect(path, True, sealed)
            else:
                _migrate(con)
    except BaseException:
        con.close()
        raise
    return Warehouse(path, con, read_only)


# `forensics query` and the explorer's named queries: no statement may read or write a file beside the warehouse
# (COPY TO, EXPLAIN ANALYZE COPY, IMPORT/EXPORT DATABASE, read_csv, ATTACH, INSTALL, profiling output) or change
# a setting that would (PRAGMA enable_profiling, SET profiling_output). A user who wants to read other files
# runs DuckDB itself, or `forensics ingest`s them.
SEALED = {"enable_external_access": False, "lock_configuration": True}


def _connect(path: Path, read_only: bool, sealed: bool = False) -> duckdb.DuckDBPyConnection:
    try:
        # threads from the machine (its cores and CPU quota, or FORENSICS_DUCKDB_THREADS), not every host core;
        # the allocator's background threads give freed memory back to the system as queries end: without them a
        # report's main process kept 50-70 MB more between analyzers (docs/scale.md, "Issue 28 in stop 38")
        con = duckdb.connect(
            str(path),
            read_only=read_only,
            config={"threads": machine.threads(), "allocator_background_threads": True, **(SEALED if sealed else {})},
        )
    except duckdb.IOException as e:
        if "lock" in str(e).lower():
            raise WarehouseError(f"{path}: the warehouse is open in another process; close it and retry") from None
        raise WarehouseError(f"{path}: cannot open as a DuckDB warehouse ({_first_line(e)})") from None
    except duckdb.Error as e:
        raise WarehouseError(f"{path}: not a DuckDB warehouse ({_first_line(e)}); choose another --db") from None
    try:
        if not sealed:
            con.execute("SET enable_progress_bar = false")  # it would write mid-output, even into `> out.json`
    except duckdb.InvalidInputException:
        pass  # in Jupyter without ipywidgets DuckDB refuses to touch the setting; there is no bar to hide
    install_sql(con)  # forensics_redact(text): what analyzers derive terms from, what an export writes
    return con


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _version(con: duckdb.DuckDBPyConnection) -> int:
    has_meta = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'").fetchall()[0][0]
    if not has_meta:
        return 0
    rows = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    return int(rows[0][0]) if rows else 0


def _migrate(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name VARCHAR NOT NULL, applied_at TIMESTAMP)")
    done = {r[0] for r in con.execute("SELECT name FROM schema_migrations").fetchall()}
    for fn in MIGRATIONS:
        if fn.__name__ in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            fn(con)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?)", [fn.__name__, utcnow()])
            con.execute("DELETE FROM meta WHERE key = 'schema_version'")
            con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(MIGRATIONS.index(fn) + 1)])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
