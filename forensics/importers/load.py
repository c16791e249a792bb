"""Loading one parsed batch (four Arrow tables) into the warehouse, and the DuckDB settings for doing it fast.

The Arrow tables are read through DuckDB's replacement scans (SQL names the Python locals ``_b_msg`` ...):
``con.register`` keeps every registered table alive until the connection closes, even after
``unregister`` (DuckDB 2.0), so a million-message import held all of its text in memory.
"""
from __future__ import annotations

import os

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

# A JsonText arrives as its JSON literal and is unescaped here, in DuckDB's threads.
TEXT = "coalesce(content, json_extract_string(content_json, '$'))"
DEFAULT_MEMORY_MB = 160  # with 4 MB parse tasks, the whole ingest stays under 500 MB (bench PSS)


def tune(con: duckdb.DuckDBPyConnection, largest_task: int = 0) -> None:
    """DuckDB settings for a bulk load, on this connection only.

    ``memory_limit`` makes DuckDB write finished row groups to the file while a transaction is still open
    instead of holding a whole source in memory until COMMIT (``FORENSICS_DUCKDB_MEMORY`` overrides it).
    It grows with the largest parse task (``largest_task`` bytes: one huge row or session file is one
    task), so a 120 MB message still fits: memory is bounded by the largest conversation, not the corpus.
    ``zstd_min_string_length``: DuckDB considers zstd only for strings averaging 4 KB, so message text
    (~650 bytes here) was stored uncompressed and the file was 1.7 x its source; from 64 bytes on, zstd
    competes with DuckDB's other methods and wins for text (ids and roles keep their dictionaries).
    Rows need not keep insertion order: every reader sorts.
    """
    limit = os.environ.get("FORENSICS_DUCKDB_MEMORY") or f"{max(DEFAULT_MEMORY_MB, 4 * (largest_task >> 20))}MB"
    con.execute(f"SET memory_limit = '{limit}'")
    con.execute("SET preserve_insertion_order = false")
    con.execute("SET zstd_min_string_length = 64")


def load_batch(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table], run_id: str, existing: list[str],
               replace_quarantine: list[str], partial_quarantine: str | None) -> dict[str, int]:
    """Insert one batch (``conv`` and ``quar`` carry a ``source_id`` column: a batch may hold many JSONL
    sources); replace the stored rows of the ``existing`` conversations. The stored quarantine of the
    sources in ``replace_quarantine`` (re-read whole) is replaced; for ``partial_quarantine`` (a SQLite
    source) only that of the rows this batch re-read. Returns, per existing conversation, how many of its
    messages were already stored, identical."""
    _b_msg, _b_call, _b_conv, _b_quar = tables["msg"], tables["call"], tables["conv"], tables["quar"]  # noqa: F841
    unchanged: dict[str, int] = {}
    if existing:
        con.execute("CREATE OR REPLACE TEMP TABLE _b_old AS SELECT unnest(?::VARCHAR[]) AS conversation_id",
                    [existing])
        unchanged = dict(con.execute(
            f"SELECT m.conversation_id, count(*) FROM messages m JOIN (SELECT *, {TEXT} AS text FROM _b_msg) s "
            "ON m.conversation_id = s.conversation_id AND m.seq = s.seq AND m.role = s.role AND m.content = s.text "
            "WHERE m.conversation_id IN (SELECT conversation_id FROM _b_old) GROUP BY 1").fetchall())
        for tbl in ("messages", "tool_calls", "events", "message_usage", "conversations"):
            con.execute(f"DELETE FROM {tbl} WHERE conversation_id IN (SELECT conversation_id FROM _b_old)")
    con.execute("INSERT INTO conversations (conversation_id, source_id, native_id, title, provider, model, "
                "created_at, updated_at, message_count, fingerprint) "
                "SELECT conversation_id, source_id, native_id, title, provider, model, "
                f"{_ts('created_at')}, {_ts('updated_at')}, message_count, fingerprint FROM _b_conv")
    # con.sql runs an INSERT at once and keeps what RETURNING gives: the stored size of each message,
    # for the tool calls whose result size the parser left to DuckDB
    _sizes = con.sql(  # noqa: F841  (read below by name)
        "INSERT INTO messages SELECT conversation_id, seq, position, native_id, parent_native_id, "
        "position IS NOT NULL, role, text, length(text), strlen(text), tool_call_count, "
        f"{_ts('created_at')}, tool_call_id FROM (SELECT *, {TEXT} AS text FROM _b_msg) "
        "RETURNING conversation_id, seq, content_bytes").to_arrow_table()
    con.execute("INSERT INTO tool_calls SELECT c.conversation_id, c.seq, c.position, c.call_index, c.call_id, "
                "c.name, c.arguments, c.result_seq, c.result_position, "
                "coalesce(c.result_bytes, CASE WHEN c.result_seq IS NOT NULL THEN m.content_bytes END), "
                "c.is_error FROM _b_call c LEFT JOIN _sizes m "
                "ON m.conversation_id = c.conversation_id AND m.seq = c.result_seq")
    if replace_quarantine:
        con.execute("DELETE FROM quarantine WHERE list_contains(?, source_id)", [replace_quarantine])
    if partial_quarantine:
        con.execute("DELETE FROM quarantine WHERE source_id = ? AND split_part(location, '[', 1) IN "
                    "(SELECT split_part(location, '[', 1) FROM _b_quar)", [partial_quarantine])
    if _b_quar.num_rows:
        con.execute("INSERT INTO quarantine SELECT source_id, ?, location, reason, raw, raw_bytes FROM _b_quar",
                    [run_id])
    return unchanged


def with_source(table: pa.Table, source_id: str) -> pa.Table:
    """``table`` with its unset ``source_id`` cells set to ``source_id``."""
    i = table.schema.get_field_index("source_id")
    return table.set_column(i, "source_id", pc.fill_null(table.column(i), source_id))


SOURCES = pa.schema([("source_id", pa.string()), ("path", pa.string()), ("format", pa.string()),
                     ("sha256", pa.string()), ("size", pa.int64()), ("mtime_ns", pa.int64()),
                     ("options", pa.string()), ("imported_at", pa.timestamp("us"))])
RUNS = pa.schema([("run_id", pa.string()), ("source_id", pa.string()), ("path", pa.string()),
                  ("format", pa.string()), ("status", pa.string()), ("started_at", pa.timestamp("us")),
                  ("finished_at", pa.timestamp("us")), *((c, pa.int64()) for c in (
                      "rows_read", "messages_read", "messages_imported", "messages_unchanged", "quarantined",
                      "conversations_new", "conversations_updated", "conversations_unchanged")),
                  ("note", pa.string())])


def write_sources(con: duckdb.DuckDBPyConnection, rows: list[tuple[object, ...]]) -> None:
    """Replace the ``sources`` rows of these sources: one statement for thousands of session files."""
    _rows = pa.Table.from_pylist([dict(zip(SOURCES.names, r)) for r in rows], schema=SOURCES)  # noqa: F841
    con.execute("DELETE FROM sources WHERE source_id IN (SELECT source_id FROM _rows)")
    con.execute("INSERT INTO sources SELECT * FROM _rows")


def write_runs(con: duckdb.DuckDBPyConnection, rows: list[tuple[object, ...]]) -> None:
    """Append ``import_runs`` rows."""
    _rows = pa.Table.from_pylist([dict(zip(RUNS.names, r)) for r in rows], schema=RUNS)  # noqa: F841
    con.execute("INSERT INTO import_runs SELECT * FROM _rows")


def _ts(col: str) -> str:
    return f"CASE WHEN {col} IS NULL THEN NULL ELSE make_timestamp(CAST({col} * 1000000 AS BIGINT)) END"
