"""The DuckDB warehouse: one file, a versioned schema, the tables every analyzer reads."""
from forensics.warehouse.core import DEFAULT_DB, SCHEMA_VERSION, Warehouse, frame, open_warehouse, set_memory_limit

__all__ = ["DEFAULT_DB", "SCHEMA_VERSION", "Warehouse", "frame", "open_warehouse", "set_memory_limit"]
