"""Secrets: what ingest masked (issue 27), from ``secrets_found``: which kinds, in which fields, how many per
source and per agent (the format that read it). Never a value: the warehouse never had one.

The figures are metrics, so `forensics check` fails when more secrets appear than the baseline holds
(``secrets.*`` is "lower, no tolerance" in its defaults). Sources read with ``--keep-secrets`` are listed:
their text was stored as read, and nothing was recorded for them.
"""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from forensics.analyzers.base import Context, Section, Table
from forensics.analyzers.declare import Analyzer, CheckRule
from forensics.kernel.selection import SELECTED

NAME = "secrets"
TITLE = "Secrets masked at ingest"
KEPT = "%secrets kept (--keep-secrets)%"  # the note an ingest with --keep-secrets leaves on its run rows


def scan(con: duckdb.DuckDBPyConnection, selected: str | None = None) -> dict[str, Any]:
    """The finds as counts: totals, by kind, field, agent and source (``selected``: a table of conversation ids
    that restricts the finds that belong to a conversation). Used by the report and by `forensics secrets`."""
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'secrets_found'").fetchall()[0][0]:
        return {}
    where = (
        f"WHERE f.conversation_id IS NULL OR f.conversation_id IN (SELECT conversation_id FROM {selected})"
        if selected
        else ""
    )
    con.execute(
        "CREATE OR REPLACE TEMP VIEW _secrets AS SELECT f.*, s.format, s.path FROM secrets_found f "
        f"LEFT JOIN sources s USING (source_id) {where}"
    )

    def rows(sql: str) -> list[dict[str, Any]]:
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    total = rows(
        "SELECT count(*) AS found, count(DISTINCT fingerprint) AS distinct_secrets, "
        "count(DISTINCT source_id) AS sources, count(DISTINCT conversation_id) AS conversations "
        "FROM _secrets"
    )[0]
    kept = [
        r["path"]
        for r in rows(
            "SELECT DISTINCT s.path FROM sources s JOIN (SELECT source_id, arg_max(note, finished_at) AS note "
            "FROM import_runs WHERE status = 'imported' GROUP BY 1) r USING (source_id) "
            f"WHERE r.note LIKE '{KEPT}' ORDER BY 1"
        )
    ]
    return {
        **total,
        "kept_sources": kept,
        "by_kind": rows(
            "SELECT kind, count(*) AS found, count(DISTINCT fingerprint) AS distinct_secrets FROM _secrets "
            "GROUP BY 1 ORDER BY 2 DESC, 1"
        ),
        "by_field": rows("SELECT field, count(*) AS found FROM _secrets GROUP BY 1 ORDER BY 2 DESC, 1"),
        "by_agent": rows(
            "SELECT coalesce(format, '?') AS agent, count(*) AS found, count(DISTINCT source_id) AS "
            "sources, string_agg(DISTINCT kind, ', ' ORDER BY kind) AS kinds FROM _secrets "
            "GROUP BY 1 ORDER BY 2 DESC, 1"
        ),
        "by_source": rows(
            "SELECT coalesce(path, source_id) AS source, coalesce(format, '?') AS agent, count(*) AS "
            "found, count(DISTINCT conversation_id) AS conversations, string_agg(DISTINCT kind, ', ' "
            "ORDER BY kind) AS kinds FROM _secrets GROUP BY 1, 2 ORDER BY 3 DESC, 1"
        ),
    }


def metrics(found: dict[str, Any]) -> dict[str, Any]:
    """The figures `forensics check` compares: totals and finds per kind."""
    return {
        "found": found["found"],
        "distinct": found["distinct_secrets"],
        "sources": found["sources"],
        "kinds": {r["kind"]: r["found"] for r in found["by_kind"]},
    }


def describe(found: dict[str, Any]) -> str:
    """One paragraph: what was masked, where most of it was, and what was kept."""
    if not found["found"]:
        text = "No secret was found at ingest in the selected conversations' sources."
    else:
        kinds = ", ".join(f"{r['kind']} ×{r['found']}" for r in found["by_kind"][:6])
        top = found["by_agent"][0]
        text = (
            f"{found['found']} secrets ({found['distinct_secrets']} distinct) in {found['sources']} sources "
            f"were masked before anything was stored: {kinds}. Most were in {top['agent']} logs "
            f"({top['found']}). Values are never stored; `forensics secrets` lists where each kind was."
        )
    if found["kept_sources"]:
        text += (
            f" {len(found['kept_sources'])} sources were read with --keep-secrets: their text is stored as "
            "read and nothing was recorded for them."
        )
    return text


def run(ctx: Context) -> Section:
    found = scan(ctx.con, SELECTED)
    if not found:
        return Section.idle(
            NAME,
            TITLE,
            "the warehouse has no secrets_found table (made before secrets were "
            "masked at ingest); re-import its sources",
        )
    tables = [
        Table(key, caption, pl.DataFrame(found[key], infer_schema_length=None))
        for key, caption in (
            ("by_kind", "Secrets by kind"),
            ("by_agent", "Secrets by agent (format)"),
            ("by_field", "Secrets by field"),
            ("by_source", "Secrets by source"),
        )
        if found[key]
    ]
    return Section(NAME, TITLE, describe(found), metrics(found), tables)


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    checks=(CheckRule("secrets.*", "lower", 0.0, False),),
)
