"""Data quality first (issue 24): how much of each source's text is there to be analysed, said before any finding.

A source can reach us with its text already gone: redacted by a log sanitizer (``[REDACTED_TEXT len=3021 sha=…]``,
``[REDACTED_ARGUMENTS]``: ``forensics.kernel.redact.PLACEHOLDER``), empty (no text and no tool call), or cut by the
tool that wrote it (``TRUNCATED``: the markers agents put where they cut a tool's output). Counted per source on
the selected conversations' main paths and shown at the top of every report format (``summarize``); redacted text
is taken out of everything analyzers derive terms from (``forensics_scrubbed``), so it is never a keyword or a
finding's evidence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from forensics.analyzers.facts import Fact, arrow
from forensics.config import Config
from forensics.kernel.arrow import stream
from forensics.kernel.redact import PLACEHOLDER

if TYPE_CHECKING:
    from forensics.analyzers.base import Context

# Where a tool says it cut text, each with the tool that writes it (RE2 and Python ``re`` alike).
TRUNCATED = "|".join(
    [
        r"…\d+ tokens truncated…",
        r"\[\.\.\. omitted \d+ of \d+ lines \.\.\.\]",  # Codex CLI (codex-rs truncate)
        r"\[\d+ characters truncated",  # OpenHands (observation truncation)
        r"<response clipped>",  # SWE-agent / OpenHands str_replace_editor
        r"\[\d+ lines truncated\]",  # Claude Code (long Bash output)
        r"\[(?:content|output) truncated\]",
        r"\.\.\.\s?\[truncated\]",  # log sanitizers and exporters
    ]
)


def per_conversation(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Per selected conversation: its source and its main path's messages, redacted, wholly redacted, empty, cut."""
    return arrow(
        con,
        """
        WITH m AS (
            SELECT conversation_id, c.source_id, content, blank, tool_call_count,
                   contains(lower(content), 'redacted') AND regexp_matches(content, ?) AS redacted
            FROM messages JOIN sel_conversations USING (conversation_id)
            JOIN conversations c USING (conversation_id) WHERE on_main_path)
        SELECT conversation_id, any_value(source_id) AS source_id, count(*) AS messages,
               count(*) FILTER (WHERE redacted) AS redacted,
               count(*) FILTER (WHERE redacted AND trim(regexp_replace(content, ?, '', 'g')) = '') AS wholly_redacted,
               count(*) FILTER (WHERE blank AND tool_call_count = 0) AS empty,
               count(*) FILTER (WHERE regexp_matches(content, ?)) AS truncated
        FROM m GROUP BY 1""",
        [PLACEHOLDER, PLACEHOLDER, TRUNCATED],
    )


# declared with the baseline analyzer's facts (the report's head is counted over the same main paths)
FACT = Fact("data_quality", per_conversation, ("conversation_id",), cached=True)


def summarize(ctx: Context) -> dict[str, Any]:
    """{"sources": [{source, format, messages, redacted, wholly_redacted, empty, truncated}], "totals": {...}}
    for the selected conversations (``sel_conversations``); sources with none of the three are left out."""
    keys = ("messages", "redacted", "wholly_redacted", "empty", "truncated")
    ctx.con.register("_quality_rows", stream(ctx.fact("data_quality")))
    try:
        rows = ctx.con.execute(
            f"SELECT s.path, s.format, {', '.join(f'sum({k})' for k in keys)} FROM _quality_rows "
            "JOIN sources s USING (source_id) GROUP BY 1, 2 ORDER BY 1"
        ).fetchall()
    finally:
        ctx.con.unregister("_quality_rows")
    sources = [
        {"source": path, "format": fmt, **dict(zip(keys, (int(x) for x in counts)))} for path, fmt, *counts in rows
    ]
    totals = {k: sum(s[k] for s in sources) for k in keys}
    return {
        "sources": [s for s in sources if s["redacted"] or s["empty"] or s["truncated"]],
        "sources_read": len(sources),
        "totals": totals,
    }


def lines(q: dict[str, Any]) -> tuple[str, list[str], list[list[str]]]:
    """The report's data-quality block: a sentence, and a table (head, rows) of the sources concerned."""
    t = q["totals"]
    if not (t["redacted"] or t["empty"] or t["truncated"]):
        return (
            f"All {t['messages']:,} messages of {q['sources_read']} sources have their text: none redacted at "
            "the source, empty or truncated.",
            [],
            [],
        )
    text = (
        f"Of {t['messages']:,} messages in {q['sources_read']} sources: {t['redacted']:,} redacted at the source "
        f"({t['wholly_redacted']:,} wholly: no finding or keyword reads them), {t['empty']:,} empty, "
        f"{t['truncated']:,} cut by the tool that wrote them."
    )
    head = ["source", "format", "messages", "redacted", "wholly redacted", "empty", "truncated"]
    return (
        text,
        head,
        [
            [
                s["source"],
                s["format"],
                *(f"{s[k]:,}" for k in ("messages", "redacted", "wholly_redacted", "empty", "truncated")),
            ]
            for s in q["sources"]
        ],
    )
