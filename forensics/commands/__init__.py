"""The commands' library code below ``forensics.api``: `forensics check`, `show`, `export`, the ingest
summary and the query output writers."""
