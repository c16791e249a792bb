"""The ingest pipeline: every log format read into the warehouse, lossless (each line or row imported, skipped
and counted, or quarantined with its raw bytes and a reason).

``catalog`` names the built-in formats (so the CLI offers them without importing one); ``registry`` lists them
(built-in and plug-ins through the ``forensics.formats`` entry point) and picks one per file; ``discover`` expands
paths into sources; ``run`` is the orchestrator `forensics ingest` calls; ``load`` writes the parsed batches into
DuckDB; ``mask`` masks secrets on the way. The formats themselves are ``forensics.formats``.
"""
