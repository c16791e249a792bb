"""`forensics export`: the warehouse as a hive-partitioned Parquet dataset, for engines beyond one machine.

Layout (documented in docs/scale.md): one folder per table. The conversation tables (``conversations``,
``messages``, ``tool_calls``, ``events``, ``message_usage``) are partitioned by ``source`` and ``month``
so that every row of a conversation sits in one partition; ``quarantine`` by ``source``; the small
bookkeeping tables are single files.

- ``source``: the SQLite file, or the folder holding the JSONL session files, as ``<name>-<8 hex>`` (a folder
  of 4000 sessions is one partition, not 4000 tiny ones);
- ``month``: the conversation's ``created_at`` as ``YYYY-MM`` (UTC), ``unknown`` when the source has none.

``views.sql`` beside the tables recreates every warehouse table as a view over the files, with the
warehouse's columns in the warehouse's order, so the SQL in ``queries/`` runs unchanged on DuckDB over
Parquet, locally or on object storage (set the variable ``forensics_parquet`` to the dataset's root).
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from forensics.errors import ForensicsError
from forensics.warehouse import DEFAULT_DB, open_warehouse

FORMATS = ("parquet",)
ROOT_VARIABLE = "forensics_parquet"
# SQL key of a source's partition: its file (SQLite) or its folder (JSONL sessions), readable and stable.
SOURCE_KEY = ("regexp_replace(regexp_extract(CASE WHEN s.format = 'sqlite' THEN s.path ELSE parse_dirpath(s.path) END, "
              "'([^/\\\\]*)[/\\\\]*$', 1), '[^A-Za-z0-9_.-]', '_', 'g') || '-' || "
              "left(md5(CASE WHEN s.format = 'sqlite' THEN s.path ELSE parse_dirpath(s.path) END), 8)")
MONTH = "coalesce(strftime(c.created_at, '%Y-%m'), 'unknown')"  # c: the row's conversation
CONVERSATION_TABLES = ("conversations", "messages", "tool_calls", "events", "message_usage")
PLAIN_TABLES = ("sources", "import_runs", "meta", "schema_migrations")


@dataclass
class ExportResult:
    """Where the dataset went and how many rows each table has there."""

    out: Path
    rows: dict[str, int] = field(default_factory=dict)
    partitions: dict[str, list[str]] = field(default_factory=dict)


def export(db: str | os.PathLike[str] = DEFAULT_DB, out: str | os.PathLike[str] = "export", fmt: str = "parquet",
           overwrite: bool = False) -> ExportResult:
    """Write every warehouse table under ``out`` (see the module doc for the layout) and ``views.sql``."""
    if fmt not in FORMATS:
        raise ForensicsError(f"unknown --format {fmt!r}; choose {', '.join(FORMATS)}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ForensicsError(f"{out}: not a folder; choose a folder for --out")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise ForensicsError(f"{out}: folder is not empty; choose an empty one or pass --overwrite")
        _remove_export(out)
    out.mkdir(parents=True, exist_ok=True)
    result = ExportResult(out)
    with open_warehouse(db, read_only=True) as wh:
        con = wh.con
        for table in (*CONVERSATION_TABLES, "quarantine", *PLAIN_TABLES):
            result.rows[table] = _copy(con, table, out)
        (out / "views.sql").write_text(views_sql(con))
    for table, keys in _partitions().items():
        result.partitions[table] = keys
    return result


def _remove_export(out: Path) -> None:
    """Delete a previous export in ``out``; refuse a folder holding anything else (--overwrite never deletes
    what forensics did not write)."""
    ours = {*CONVERSATION_TABLES, "quarantine", *PLAIN_TABLES, "views.sql"}
    other = sorted(p.name for p in out.iterdir() if p.name not in ours)
    if other:
        raise ForensicsError(f"{out}: holds files that are not a forensics export ({', '.join(other[:3])}); "
                             "choose another --out")
    for p in out.iterdir():
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()


def _partitions() -> dict[str, list[str]]:
    return {**{t: ["source", "month"] for t in CONVERSATION_TABLES}, "quarantine": ["source"]}


def _select(table: str) -> str:
    """The rows of ``table`` plus its partition columns (outer joins: no row is left out)."""
    source = f"coalesce({SOURCE_KEY}, 'unknown') AS source"
    if table == "conversations":
        return (f"SELECT c.*, {source}, {MONTH} AS month FROM conversations c "
                "LEFT JOIN sources s USING (source_id)")
    if table in CONVERSATION_TABLES:
        return (f"SELECT t.*, {source}, {MONTH} AS month FROM {table} t "
                "LEFT JOIN conversations c USING (conversation_id) LEFT JOIN sources s ON s.source_id = c.source_id")
    if table == "quarantine":
        return f"SELECT t.*, {source} FROM quarantine t LEFT JOIN sources s USING (source_id)"
    return f"SELECT * FROM {table}"


def _copy(con: duckdb.DuckDBPyConnection, table: str, out: Path) -> int:
    """COPY one table. An empty partitioned table still gets one empty file in an ``unknown`` partition, so
    readers find its columns."""
    select = _select(table)
    rows = con.execute(f"SELECT count(*) FROM ({select})").fetchall()[0][0]
    keys = _partitions().get(table, [])
    if keys and rows:
        con.execute(f"COPY ({select}) TO '{_sql_path(out / table)}' (FORMAT parquet, COMPRESSION zstd, "
                    f"PARTITION_BY ({', '.join(keys)}))")
        return rows
    folder = out.joinpath(table, *(f"{k}=unknown" for k in keys))
    folder.mkdir(parents=True)
    exclude = f" EXCLUDE ({', '.join(keys)})" if keys else ""
    con.execute(f"COPY (SELECT *{exclude} FROM ({select})) TO '{_sql_path(folder / 'data_0.parquet')}' "
                "(FORMAT parquet, COMPRESSION zstd)")
    return rows


def _sql_path(p: Path) -> str:
    return str(p).replace("'", "''")


def views_sql(con: duckdb.DuckDBPyConnection) -> str:
    """SQL recreating each warehouse table as a view over the dataset at ``getvariable('forensics_parquet')``."""
    lines = [f"-- Views over a forensics Parquet export. First: SET VARIABLE {ROOT_VARIABLE} = '<dataset root>';",
             "-- (a local folder, or s3://bucket/prefix after LOAD httpfs). Then the SQL in queries/ runs as is."]
    for table in (*CONVERSATION_TABLES, "quarantine", *PLAIN_TABLES):
        cols = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                                          "ORDER BY ordinal_position", [table]).fetchall()]
        keys = _partitions().get(table, [])
        hive = ", hive_types = {" + ", ".join(f"'{k}': VARCHAR" for k in keys) + "}" if keys else ""
        lines.append(f"CREATE OR REPLACE VIEW {table} AS SELECT {', '.join(cols)} FROM read_parquet("
                     f"getvariable('{ROOT_VARIABLE}') || '/{table}/**/*.parquet', hive_partitioning = true, "
                     f"union_by_name = true{hive});")
    return "\n".join(lines) + "\n"


def open_export(root: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection where every warehouse table is a view over the dataset at ``root``."""
    con = duckdb.connect()
    con.execute(f"SET VARIABLE {ROOT_VARIABLE} = ?", [str(root)])
    con.execute((Path(root) / "views.sql").read_text())
    return con
