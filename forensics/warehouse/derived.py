"""Derived tables: what a report writes back beside the imported rows (findings, keywords, drift episodes, the
compaction audit's facts, the report's runs). One home for how they are written, so that a warehouse written by
an earlier release keeps reporting after a table gains, loses or retypes a column.

A derived table's columns are the declared schema of the rows its analyzer hands over (an Arrow table built from
a typed frame). Rows go in by column name, never by position, so the order of the columns does not matter. When
the table in the warehouse has other columns (names or types) than the rows, it was written by another version: it is dropped and recreated, since everything in it can be
computed again from the imported rows (a report recomputes the conversations it selects; the rows of others
come back with the next report that selects them). Imported tables are never touched here: their changes are
migrations (``forensics.warehouse.migrations``).
"""
from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

# every derived table, who writes it and how (docs/warehouse.md lists them from here); "selection": the selected
# conversations' rows replaced; "whole": recreated by each report of the analyzer; "cache": kept per conversation
# fingerprint and rules key, recomputed when either changes; "log": appended
KEPT_TABLE = "report_kept"  # the last report kept whole (``forensics.report.kept``), and its columns
KEPT_COLUMNS = (("key", "VARCHAR"), ("live", "BOOLEAN"), ("body", "BLOB"), ("pages", "BLOB"))
TABLES: dict[str, tuple[str, str, str]] = {
    "report_findings": ("report", "selection", "every finding of the report's analyzers, with its positions"),
    "report_conversations": ("report", "selection", "per conversation: its label and the baseline figures"),
    "report_runs": ("report", "log", "one row per report: time, selection, analyzers, the digest as JSON"),
    "usage_runs": ("usage", "whole", "per run: agent, model, tokens (input with the cache, cached, output), cost"),
    "conversation_keywords": ("keywords", "selection", "per conversation: top keywords and distinctive terms"),
    "compression_results": ("compression", "whole", "each tool result replayed under the compression rule"),
    "message_terms": ("topics", "cache", "each judged message's terms"),
    "message_topics": ("topics", "whole", "each judged message's topic and confidence"),
    "topic_switches": ("topics", "whole", "the switch markers (drift type 4 reads them)"),
    "topic_corpus": ("topics", "cache", "the corpus state: message count, document frequencies, topic model"),
    "topic_verdicts": ("topics", "cache", "each conversation's verdicts, per fingerprint, settings and corpus state"),
    "compaction_pairs": ("compaction", "cache", "each fact's mentions and the needs that follow them"),
    "compaction_facts": ("compaction", "selection", "each fact held before a logged compaction and what became of it"),
    "compaction_replay": ("compaction", "selection", "the replayed compactions of the harness's rule"),
    "drift_findings": ("drift", "selection", "one row per conversation and drift kind: severity, rule, positions"),
    "sentinel_replies": ("sentinel", "whole", "each judged reply and its compliance state"),
    "sentinel_models": ("sentinel", "whole", "per model: replies, compliance, state"),
    "sentinel_conversations": ("sentinel", "whole", "per conversation: the sentinel's verdict"),
    "skill_routing": ("skills", "whole", "each request replayed against the trigger table"),
    "memory_findings": ("memory", "whole", "the decision-memory audit's findings"),
    "run_failures": ("failures", "selection", "per failed or problem-bearing run: how it ended, its recurring error "
                     "template, its cluster, its decisive step's position and agent"),
    "problem_findings": ("problems", "selection", "one row per problem a reviewer flags (SPEC §24): kind, the first "
                         "cited main-path position, every cited position, a verbatim quote, the rule and the norm"),
    "report_charts": ("report", "cache", "per chart: the SVG last drawn and the hash of its data and drawing code"),
    "reuse_done": ("report", "cache", "per kept fact and conversation: the fingerprint and config key its rows hold"),
    "reuse_corpus": ("report", "cache", "corpus-level results (TF-IDF) kept under a digest of their inputs"),
    KEPT_TABLE: ("report", "cache", "the last report whole, under a digest of all it read; dead after any other "
                    "writer opens the warehouse (``forensics.report.kept``)"),
    # the kept facts (``Fact(kept=True)``) and the compression replay: each its own columns, the rows of the conversations reuse_done lists
    **{f"reuse_{name}": ("report", "cache", f"the kept rows of the fact {name}") for name in (
        "baseline", "baseline_tool_sizes", "baseline_role_chars", "baseline_pushback", "drift_context", "drift_kinds",
        "tool_turns", "drift_interventions", "drift_rediscovery", "drift_lags", "drift_nags", "drift_echo",
        "keyword_counts", "data_quality", "compression_replay", "sentinel_judged")},
}
SELECTED_ROWS = "conversation_id IN (SELECT conversation_id FROM sel_conversations)"
_ROWS = "_derived_rows"


def replace_rows(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table, where: str = SELECTED_ROWS,
                 params: list[Any] | None = None) -> None:
    """Delete the rows ``where`` holds (default: the selected conversations'; its ``?`` bound to ``params``) and
    insert ``rows`` by name."""
    _write(con, table, rows, where, params)


def append_rows(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    """Insert ``rows`` by name, keeping what is there (a log of report runs)."""
    _write(con, table, rows, None, None)


def kill_kept(con: duckdb.DuckDBPyConnection) -> str | None:
    """Mark the kept report dead (``forensics.report.kept``) and return the key it was live under, if it was:
    whoever opens the warehouse to write may change what that report read."""
    have = columns(con, KEPT_TABLE)
    if not have:
        return None
    if have != list(KEPT_COLUMNS):  # made by another build: nothing in it can be read back
        con.execute(f"DROP TABLE {KEPT_TABLE}")
        return None
    rows = con.execute(f"UPDATE {KEPT_TABLE} SET live = false WHERE live RETURNING key").fetchall()
    return str(rows[0][0]) if rows else None


def columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]]:
    """(name, type) of a table of the warehouse, in order; empty when there is no such table."""
    return [(n, t) for n, t in con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' "
        "ORDER BY column_index", [table]).fetchall()]


def _write(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table, where: str | None,
           params: list[Any] | None) -> None:
    con.register(_ROWS, rows)
    try:
        want = [(n, t) for n, t, *_ in con.execute(f"DESCRIBE SELECT * FROM {_ROWS}").fetchall()]
        have = columns(con, table)
        if have and sorted(have) != sorted(want):  # another version's columns: recompute, never misplace a value
            con.execute(f"DROP TABLE {table}")
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} AS SELECT * FROM {_ROWS} LIMIT 0")
        if where is not None:
            con.execute(f"DELETE FROM {table} WHERE {where}", params)
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {_ROWS}")
    finally:
        con.unregister(_ROWS)
