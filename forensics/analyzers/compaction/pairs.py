"""Needs as pairs: a fact mentioned at ``first`` and needed again at ``need`` (its next mention that is a need),
per conversation, kept in the warehouse table ``compaction_pairs``.

The replay, its sweep and `forensics tune` only need these pairs and the message sizes, so the facts are
extracted once per conversation and rules: a row is valid while its conversation keeps its fingerprint and its
``key`` (the rules and PAIRS_VERSION) is the current one; a conversation with no pair keeps one row with a NULL
kind, so it is not extracted again. Dropping the table is always safe.
"""

from __future__ import annotations

import hashlib
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers.compaction.facts import NEEDS, SOURCES, Fact
from forensics.analyzers.compaction.load import selected
from forensics.analyzers.compaction.rules import READ_TOOL, Rules
from forensics.kernel.arrow import stream

TABLE = "compaction_pairs"
PAIRS_VERSION = 3  # 2: constraints cut at the clause; 3: commands and figures, read commands raise no error
SCHEMA = {
    "conversation_id": pl.String,
    "fingerprint": pl.String,
    "key": pl.String,
    "kind": pl.String,
    "fact": pl.String,
    "first": pl.Int32,
    "need": pl.Int32,
    "channel": pl.String,
    "reread": pl.Boolean,
}
COLUMNS = (
    "conversation_id VARCHAR, fingerprint VARCHAR, key VARCHAR, kind VARCHAR, fact VARCHAR, first INTEGER, "
    "need INTEGER, channel VARCHAR, reread BOOLEAN"
)
Pair = tuple[str, str, int, int, str, bool]  # kind, fact, first, need, need channel, both are reads of the file


def rules_key(r: Rules) -> str:
    text = repr(
        (
            PAIRS_VERSION,
            r.constraint.pattern,
            r.opener.pattern,
            r.decision.pattern,
            r.task.pattern,
            r.error.pattern,
            r.not_triggers.pattern if r.not_triggers else "",
            r.repeat_share,
            r.tokenizer,
        )
    )
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def of(facts: list[Fact]) -> list[Pair]:
    """Every need that follows a mention of its fact."""
    out = []
    for f in facts:
        last = None  # the latest mention that states the fact
        for m in f.mentions:
            if (
                last is not None
                and m.position > last.position
                and m.channel in NEEDS[f.kind]
                and not (f.closed_at is not None and last.position <= f.closed_at < m.position)
            ):
                reread = (
                    f.kind == "file"
                    and last.channel == m.channel == "call"
                    and bool(READ_TOOL.search(last.how))
                    and bool(READ_TOOL.search(m.how))
                )
                out.append((f.kind, f.text[:200], last.position, m.position, m.channel, reread))
            if m.channel in SOURCES:
                last = m
    return out


def prepare(con: duckdb.DuckDBPyConnection, key: str) -> list[str]:
    """Create the table when missing, drop stale rows; the selected conversations that lack valid rows."""
    have = con.execute(
        "SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY column_index) FROM "
        "duckdb_columns() WHERE table_name = ? AND schema_name = 'main'",
        [TABLE],
    ).fetchall()[0][0]
    if have is not None and have != COLUMNS:
        con.execute(f"DROP TABLE {TABLE}")
    con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ({COLUMNS})")
    con.execute(
        f"DELETE FROM {TABLE} t WHERE key <> ? OR NOT EXISTS (SELECT 1 FROM conversations c WHERE "
        "c.conversation_id = t.conversation_id AND c.fingerprint IS NOT DISTINCT FROM t.fingerprint)",
        [key],
    )
    return [
        cid
        for (cid,) in con.execute(
            f"SELECT conversation_id FROM {selected(con)} WHERE conversation_id NOT IN (SELECT conversation_id FROM "
            f"{TABLE}) ORDER BY 1"
        ).fetchall()
    ]


def store(con: duckdb.DuckDBPyConnection, key: str, rows: dict[str, list[Pair]]) -> None:
    """Keep the pairs of these conversations (each with its current fingerprint)."""
    if not rows:
        return
    fp = dict(
        con.execute(
            "SELECT conversation_id, fingerprint FROM conversations WHERE conversation_id IN "
            "(SELECT unnest(?::VARCHAR[]))",
            [list(rows)],
        ).fetchall()
    )
    data: list[dict[str, Any]] = []
    for cid, pairs in rows.items():
        data += [
            {
                "conversation_id": cid,
                "fingerprint": fp.get(cid),
                "key": key,
                "kind": k,
                "fact": f,
                "first": a,
                "need": b,
                "channel": ch,
                "reread": rr,
            }
            for k, f, a, b, ch, rr in pairs
        ] or [
            {
                "conversation_id": cid,
                "fingerprint": fp.get(cid),
                "key": key,
                "kind": None,
                "fact": None,
                "first": None,
                "need": None,
                "channel": None,
                "reread": None,
            }
        ]
    con.register("_compaction_new_pairs", stream(pl.DataFrame(data, schema=SCHEMA)))
    con.execute(f"INSERT INTO {TABLE} SELECT * FROM _compaction_new_pairs")
    con.unregister("_compaction_new_pairs")
