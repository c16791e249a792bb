"""The DuckDB warehouse: one file, a versioned schema, the tables every analyzer reads.

The names below are loaded on first use (PEP 562): a light module of this package (``origin``, the migrations)
or a command that only prints its help must not pay for DuckDB and polars at start-up.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forensics.warehouse.core import SCHEMA_VERSION, Warehouse, frame, open_warehouse, set_memory_limit

DEFAULT_DB = "forensics.duckdb"
__all__ = ["DEFAULT_DB", "SCHEMA_VERSION", "Warehouse", "frame", "open_warehouse", "set_memory_limit"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(import_module("forensics.warehouse.core"), name)
    raise AttributeError(f"module 'forensics.warehouse' has no attribute {name!r}")
