"""forensics: offline conversation forensics for AI assistants and coding agents.

The supported Python API; every CLI command is a thin call into one of these. The importer and the
warehouse are loaded on first use (``forensics.ingest``, ``forensics.open_warehouse``): a report or a query should
not pay for the importers, and `forensics --help` not for DuckDB, at start-up.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from forensics.kernel.errors import ExitCode, ForensicsError, SourceError, WarehouseError
from forensics.warehouse import DEFAULT_DB

if TYPE_CHECKING:
    from forensics.api import findings, outcomes, usage
    from forensics.ingestion.accounting import IngestResult, SourceResult
    from forensics.ingestion.run import ingest
    from forensics.warehouse.core import Warehouse, open_warehouse

__all__ = [
    "DEFAULT_DB",
    "ExitCode",
    "ForensicsError",
    "IngestResult",
    "SourceError",
    "SourceResult",
    "Warehouse",
    "WarehouseError",
    "findings",
    "ingest",
    "open_warehouse",
    "outcomes",
    "usage",
]
_LAZY = {
    "IngestResult": "forensics.ingestion.accounting",
    "SourceResult": "forensics.ingestion.accounting",
    "ingest": "forensics.ingestion.run",
    "Warehouse": "forensics.warehouse.core",
    "open_warehouse": "forensics.warehouse.core",
    "findings": "forensics.api",
    "outcomes": "forensics.api",
    "usage": "forensics.api",
}  # the notebook's three tables, as polars DataFrames


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'forensics' has no attribute {name!r}")
