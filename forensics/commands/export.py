"""`forensics export`: the warehouse as a hive-partitioned Parquet dataset, for engines beyond one machine.

Layout (documented in docs/scale.md): one folder per table, the tables `forensics report` derives (drift
findings, keywords, topics ...) included, not the caches a report reuses (``reuse_*``, ``report_charts``, ``report_cache``).
Every table with a ``conversation_id`` (``conversations``, ``messages``, ``tool_calls`` ...) is partitioned by
``source`` and ``month``, so all rows of a conversation sit in one partition; ``quarantine`` by ``source``; the
small bookkeeping tables are single files.

- ``source``: the SQLite file, or the folder holding the JSONL session files, as ``<name>-<8 hex>`` (a folder
  of 4000 sessions is one partition, not 4000 tiny ones);
- ``month``: the conversation's ``created_at`` as ``YYYY-MM`` (UTC), ``unknown`` when the source has none.

``views.sql`` beside the tables recreates every warehouse table as a view over the files, with the
warehouse's columns in the warehouse's order, so the SQL in ``queries/`` runs unchanged on DuckDB over
Parquet, locally or on object storage (set the variable ``forensics_parquet`` to the dataset's root).

Secrets are masked as in reports (``forensics.kernel.redact``): the dataset leaves the machine, the warehouse does not.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from forensics.kernel import redact
from forensics.kernel.errors import ForensicsError
from forensics.warehouse import DEFAULT_DB, open_warehouse

FORMATS = ("parquet",)
ROOT_VARIABLE = "forensics_parquet"
_SOURCE_PLACE = "CASE WHEN s.format = 'sqlite' THEN s.path ELSE parse_dirpath(s.path) END"  # file, or its folder
SOURCE_KEY = (
    f"coalesce(regexp_replace(regexp_extract(forensics_masked({_SOURCE_PLACE}), '([^/\\\\]*)[/\\\\]*$', 1),"
    f" '[^A-Za-z0-9_.-]', '_', 'g') || '-' || left(md5({_SOURCE_PLACE}), 8), 'unknown')"
)
MONTH = "coalesce(strftime(c.created_at, '%Y-%m'), 'unknown')"  # c: the row's conversation
FIRST = ("conversations", "messages", "tool_calls", "quarantine", "sources", "import_runs")  # listing order


@dataclass
class ExportResult:
    """Where the dataset went, how many rows each table has there, and each table's partition columns."""

    out: Path
    rows: dict[str, int] = field(default_factory=dict)
    partitions: dict[str, list[str]] = field(default_factory=dict)


def export(
    db: str | os.PathLike[str] = DEFAULT_DB,
    out: str | os.PathLike[str] = "export",
    fmt: str = "parquet",
    overwrite: bool = False,
) -> ExportResult:
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
        _install_masking(wh.con)
        layout = tables(wh.con)
        for table, keys in layout.items():
            result.rows[table] = _copy(wh.con, table, keys, out)
            result.partitions[table] = keys
        (out / "views.sql").write_text(views_sql(wh.con, layout))
    return result


def tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every table of the warehouse → its partition columns (none for the bookkeeping tables)."""
    from forensics.report.tables import cache_only

    caches = cache_only()
    names = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE'"
        ).fetchall()
        if r[0] not in caches
    ]  # the caches a report reuses: no data
    by_conversation = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'conversation_id'"
        ).fetchall()
    }
    names.sort(key=lambda t: (FIRST.index(t) if t in FIRST else len(FIRST), t))
    return {t: ["source", "month"] if t in by_conversation else ["source"] if t == "quarantine" else [] for t in names}


def _remove_export(out: Path) -> None:
    """Delete a previous export in ``out``; refuse any other folder (--overwrite never deletes what forensics
    did not write)."""
    if not (out / "views.sql").is_file():
        raise ForensicsError(
            f"{out}: holds files but no views.sql, so it is not a forensics export; choose another --out"
        )
    for p in out.iterdir():
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()


def _install_masking(con: duckdb.DuckDBPyConnection) -> None:
    """Secrets are masked in every export (docs/definitions.md#masking): text in SQL (the warehouse connection has
    ``forensics_masked``: JSON stays JSON), raw quarantined bytes (maybe not UTF-8) in Python, where rows are few."""
    con.create_function("forensics_redact_bytes", redact.redact_bytes, ["BLOB"], "BLOB")


def _masked_columns(con: duckdb.DuckDBPyConnection, table: str, alias: str) -> str:
    """``REPLACE (...)`` for ``alias.*``: each text, text-list and byte column of ``table`` with secrets masked."""
    kinds = {
        "VARCHAR": "forensics_masked({c})",
        "VARCHAR[]": "list_transform({c}, lambda x: forensics_masked(x))",
        "BLOB": "forensics_redact_bytes({c})",
    }
    cols = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'main' "
        "AND table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    masked = [kinds[t].format(c=f'{alias}."{c}"') + f' AS "{c}"' for c, t in cols if t in kinds]
    return f" REPLACE ({', '.join(masked)})" if masked else ""


def _select(con: duckdb.DuckDBPyConnection, table: str, keys: list[str]) -> str:
    """The rows of ``table``, secrets masked, plus its partition columns (outer joins: no row is left out)."""
    if table == "conversations":
        return (
            f"SELECT c.*{_masked_columns(con, table, 'c')}, {SOURCE_KEY} AS source, {MONTH} AS month "
            "FROM conversations c LEFT JOIN sources s USING (source_id)"
        )
    star = f"t.*{_masked_columns(con, table, 't')}"
    if "month" in keys:
        return (
            f"SELECT {star}, {SOURCE_KEY} AS source, {MONTH} AS month FROM {table} t "
            "LEFT JOIN conversations c USING (conversation_id) LEFT JOIN sources s ON s.source_id = c.source_id"
        )
    if keys:
        return f"SELECT {star}, {SOURCE_KEY} AS source FROM {table} t LEFT JOIN sources s USING (source_id)"
    return f"SELECT {star} FROM {table} t"


def _copy(con: duckdb.DuckDBPyConnection, table: str, keys: list[str], out: Path) -> int:
    """COPY one table. An empty partitioned table still gets one (empty) file in an ``unknown`` partition,
    so readers find its columns."""
    select = _select(con, table, keys)
    rows = int(con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])
    if keys and rows:
        con.execute(
            f"COPY ({select}) TO '{_sql_path(out / table)}' (FORMAT parquet, COMPRESSION zstd, "
            f"PARTITION_BY ({', '.join(keys)}))"
        )
        return rows
    folder = out.joinpath(table, *(f"{k}=unknown" for k in keys))
    folder.mkdir(parents=True)
    exclude = f" EXCLUDE ({', '.join(keys)})" if keys else ""
    con.execute(
        f"COPY (SELECT *{exclude} FROM ({select})) TO '{_sql_path(folder / 'data_0.parquet')}' "
        "(FORMAT parquet, COMPRESSION zstd)"
    )
    return rows


def _sql_path(p: Path) -> str:
    return str(p).replace("'", "''")


def _ident(name: str) -> str:
    """A column name quoted for SQL (a table may name a column ``check`` or ``order``)."""
    return '"' + name.replace('"', '""') + '"'


def views_sql(con: duckdb.DuckDBPyConnection, layout: dict[str, list[str]]) -> str:
    """SQL recreating each table as a view over the dataset at ``getvariable('forensics_parquet')``."""
    lines = [
        f"-- Views over a forensics Parquet export. First: SET VARIABLE {ROOT_VARIABLE} = '<dataset root>';",
        "-- (a local folder, or s3://bucket/prefix after LOAD httpfs). Then the SQL in queries/ runs as is.",
    ]
    for table, keys in layout.items():
        cols = [
            r[0]
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
                [table],
            ).fetchall()
        ]
        hive = ", hive_types = {" + ", ".join(f"'{k}': VARCHAR" for k in keys) + "}" if keys else ""
        lines.append(
            f"CREATE OR REPLACE VIEW {table} AS SELECT {', '.join(_ident(c) for c in cols)} FROM read_parquet("
            f"getvariable('{ROOT_VARIABLE}') || '/{table}/**/*.parquet', hive_partitioning = true, "
            f"union_by_name = true{hive});"
        )
    return "\n".join(lines) + "\n"


def open_export(root: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection where every warehouse table is a view over the dataset at ``root``."""
    con = duckdb.connect()
    redact.install_sql(con)
    con.execute(f"SET VARIABLE {ROOT_VARIABLE} = ?", [str(root)])
    con.execute((Path(root) / "views.sql").read_text())
    return con
