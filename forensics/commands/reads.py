"""The read-only lookups `forensics query`, `forensics usage` and the MCP server (`forensics mcp`) share: SQL a
user wrote, run under the warehouse's lock-down, and usage grouped by the analyzer's keys."""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import redact as mask_text
from forensics.warehouse import frame, open_warehouse
from forensics.warehouse.queries import check_read_only

if TYPE_CHECKING:
    import polars as pl

    from forensics.config import Config
    from forensics.kernel.selection import Selection


def read_only_sql(db: str | os.PathLike[str], sql: str) -> pl.DataFrame:
    """``sql`` on a sealed, read-only connection (no file but the warehouse reachable, its settings locked) after
    ``check_read_only``; the rows unmasked (the caller masks). A failure is one masked line (a ForensicsError)."""
    with open_warehouse(db, read_only=True, sealed=True) as wh:
        check_read_only(wh.con, sql)
        try:
            return frame(wh.con, sql)
        except duckdb.CatalogException as e:
            if "Table with name" not in str(e):
                raise ForensicsError(f"query failed: {mask_text(str(e).splitlines()[0])}") from None
            raise ForensicsError(f"{mask_text(str(e).splitlines()[0])}; derived tables (sentinel_*, topic_*, "
                                 "drift_*, ...) appear after `forensics report` has run on this warehouse") from None
        except duckdb.Error as e:  # an error may quote a value: `SELECT content::INTEGER` prints the text
            raise ForensicsError(f"query failed: {mask_text(str(e).splitlines()[0])}") from None


def usage(db: str | os.PathLike[str], by: str | list[str], cfg: Config, selection: Selection | None = None
          ) -> pl.DataFrame:
    """Usage grouped ``by`` the analyzer's keys (``"agent,model"``, ``["day"]``), or one row per run with
    ``by="conversation"`` (docs/usage.md)."""
    from forensics.analyzers import usage as usage_analyzer
    from forensics.analyzers.prices import table

    keys = [k.strip() for k in (by.split(",") if isinstance(by, str) else by) if k.strip()]
    if keys != ["conversation"] and not set(keys) <= set(usage_analyzer.GROUPS) or not keys:
        raise ForensicsError(f"cannot group usage by {','.join(keys) or 'nothing'!r}: choose among "
                             f"{', '.join(usage_analyzer.GROUPS)} (comma-separated), or conversation")
    if not Path(db).exists():
        raise ForensicsError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    with open_warehouse(db, read_only=True) as wh:
        if selection is not None:
            selection.materialize(wh.con)
        rows = usage_analyzer.runs(wh.con, table(cfg.prices), selected=selection is not None)
    return rows if keys == ["conversation"] else usage_analyzer.summarize(rows, keys)
