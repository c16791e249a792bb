"""Importers: every log format read into the warehouse, lossless (each line or row imported, skipped and
counted, or quarantined with its raw bytes and a reason).

``registry`` lists the formats (built-in and plug-ins through the ``forensics.formats`` entry point) and picks one
per file; ``model`` is what a format yields (Conversation, Turn, ToolCall, ...); ``run`` is the orchestrator that
`forensics ingest` calls; each other module is one format.
"""
