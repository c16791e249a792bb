"""forensics: offline conversation forensics for AI assistants and coding agents.

The supported Python API; every CLI command is a thin call into one of these.
"""
from forensics.errors import ExitCode, ForensicsError, SourceError, WarehouseError
from forensics.importers.run import IngestResult, SourceResult, ingest
from forensics.warehouse import DEFAULT_DB, Warehouse, open_warehouse

__all__ = ["DEFAULT_DB", "ExitCode", "ForensicsError", "IngestResult", "SourceError", "SourceResult", "Warehouse",
           "WarehouseError", "ingest", "open_warehouse"]
