"""What `forensics query` and the MCP server (`forensics mcp`) share: SQL a user wrote, run under the warehouse's
lock-down."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import duckdb

from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import redact as mask_text
from forensics.warehouse import frame, open_warehouse
from forensics.warehouse.queries import check_read_only

if TYPE_CHECKING:
    import polars as pl


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
            raise ForensicsError(
                f"{mask_text(str(e).splitlines()[0])}; derived tables (sentinel_*, topic_*, "
                "drift_*, ...) appear after `forensics report` has run on this warehouse"
            ) from None
        except duckdb.Error as e:  # an error may quote a value: `SELECT content::INTEGER` prints the text
            raise ForensicsError(f"query failed: {mask_text(str(e).splitlines()[0])}") from None
