"""Which conversations came from the seed harness (docs/definitions.md#words): its own rules (compaction at max_tokens keeping
keep_recent messages, tool-result summarizing) are replayed, and its knobs tuned, on its own logs only. Replaying
them over Claude Code or a ChatGPT export would judge an agent by a rule it never had."""

from __future__ import annotations

import duckdb

from forensics.config import HARNESS_FORMATS
from forensics.kernel.selection import SELECTED

HARNESS = "sel_harness"  # the selection's conversations of the harness's formats (a temp table)


def by_format(con: duckdb.DuckDBPyConnection, table: str = SELECTED) -> dict[str, int]:
    """Conversations of ``table`` per source format, the most first."""
    return dict(
        con.execute(
            f"SELECT s.format, count(*) FROM conversations c JOIN sources s USING (source_id) "
            f"WHERE c.conversation_id IN (SELECT conversation_id FROM {table}) "
            "GROUP BY 1 ORDER BY 2 DESC, 1"
        ).fetchall()
    )


def materialize(
    con: duckdb.DuckDBPyConnection,
    formats: tuple[str, ...] = HARNESS_FORMATS,
    table: str = SELECTED,
    name: str = HARNESS,
) -> int:
    """TEMP TABLE ``name``: the conversations of ``table`` whose source has one of ``formats``; returns its size."""
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT c.conversation_id FROM conversations c JOIN sources "
        f"s USING (source_id) WHERE c.conversation_id IN (SELECT conversation_id FROM {table}) AND s.format IN "
        "(SELECT unnest(?::VARCHAR[]))",
        [list(formats)],
    )
    return int(con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0])


def elsewhere(counts: dict[str, int], formats: tuple[str, ...] = HARNESS_FORMATS) -> str:
    """What the conversations not of ``formats`` are: ``claude-code 41, codex 12``."""
    return ", ".join(f"{f} {n}" for f, n in counts.items() if f not in formats) or "none"
