"""What the explorer's pages read from the warehouse: read-only SQL, secrets masked in SQL before any text
leaves DuckDB (the page templates mask every rendered string once more).

Findings and per-conversation figures come from the tables `forensics report` keeps (``report.persist``):
the same analyzer code as the report, not a second copy. Without them the pages still list and show
conversations, and say how to get the findings.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import orjson

from forensics.labels import conversation_labels
from forensics.report.persist import METRICS as METRICS
from forensics.selection import Selection
from forensics.warehouse import frame

PAGE = 50  # conversations per page
FINDINGS_PAGE = 100
TRANSCRIPT_PAGE = 500  # messages per transcript page
TEXT_MAX = 4000  # characters of a message shown in the transcript (the message page shows it all)
SORTS = ["label", "created_at", "model", "findings", "high", *METRICS]


def has(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [table]).fetchall()[0][0] > 0)


def reported(con: duckdb.DuckDBPyConnection) -> bool:
    return has(con, "report_findings") and has(con, "report_conversations")


@dataclass
class Filters:
    source: str = ""
    model: str = ""
    since: str = ""
    until: str = ""
    kind: str = ""
    sort: str = "findings"
    desc: bool = True
    page: int = 1

    def where(self) -> tuple[str, list[Any]]:
        """The report's own selection (``forensics.selection``), and the finding kind."""
        where, params = Selection(since=_date(self.since), until=_date(self.until),
                                  models=(self.model,) if self.model else (),
                                  sources=(self.source,) if self.source else ()).where()
        if self.kind:
            where += " AND c.conversation_id IN (SELECT conversation_id FROM report_findings WHERE kind = ?)"
            params.append(self.kind)
        return where, params


def _date(text: str) -> str | None:
    """An ISO date or time from a form field; anything else filters nothing (the form shows it back)."""
    try:
        return datetime.fromisoformat(text).isoformat() if text else None
    except ValueError:
        return None


def choices(con: duckdb.DuckDBPyConnection) -> dict[str, list[Any]]:
    """What the conversation filters offer: sources (id, path), models, finding kinds."""
    kinds = [r[0] for r in con.execute("SELECT DISTINCT kind FROM report_findings ORDER BY 1").fetchall()] if has(
        con, "report_findings") else []
    return {"sources": con.execute("SELECT source_id, path FROM sources ORDER BY path").fetchall(),
            "models": [r[0] for r in con.execute("SELECT DISTINCT model FROM conversations WHERE model IS NOT NULL "
                                                 "ORDER BY 1").fetchall()],
            "kinds": kinds}


def conversations(con: duckdb.DuckDBPyConnection, f: Filters) -> tuple[list[dict[str, Any]], int]:
    """One page of conversations with their figures and finding counts, and how many match."""
    where, params = f.where()
    if reported(con):
        joined = ("LEFT JOIN report_conversations r USING (conversation_id) LEFT JOIN (SELECT conversation_id, "
                  "count(*) FILTER (WHERE severity <> 'info') AS findings, count(*) FILTER (WHERE severity = 'high') "
                  "AS high, list(DISTINCT kind ORDER BY kind) FILTER (WHERE severity <> 'info') AS kinds "
                  "FROM report_findings GROUP BY 1) f USING (conversation_id)")
        cols = "r.label, r.full_label, " + ", ".join(f"r.{m}" for m in METRICS) + ", f.findings, f.high, f.kinds"
    else:
        joined, cols = "", "NULL AS label"
    total = con.execute(f"SELECT count(*) FROM conversations c WHERE {where}", params).fetchall()[0][0]
    sort = f.sort if f.sort in SORTS else "label"
    order = f"{'c.' if sort in ('created_at', 'model') else ''}\"{sort}\" {'DESC' if f.desc else 'ASC'} NULLS LAST"
    rows = frame(con, f"SELECT c.conversation_id, c.native_id, c.model, c.created_at, s.path AS source, {cols} "
                      f"FROM conversations c LEFT JOIN sources s USING (source_id) {joined} WHERE {where} "
                      f"ORDER BY {order}, c.conversation_id LIMIT {PAGE} OFFSET {PAGE * (max(f.page, 1) - 1)}",
                 params).to_dicts()
    if rows and rows[0]["label"] is None:  # no report yet: labels computed here, as the report would
        labels = conversation_labels(con)
        for r in rows:
            r["label"], r["full_label"] = labels[r["conversation_id"]].text, labels[r["conversation_id"]].full
    return rows, total


def conversation(con: duckdb.DuckDBPyConnection, ref: str) -> dict[str, Any] | None:
    """A conversation by id or native id (the first when a native id repeats), with its label and figures."""
    rows = frame(con, "SELECT c.conversation_id, c.native_id, forensics_masked(c.title) AS title, c.model, "
                      "c.provider, c.created_at, s.path AS source FROM conversations c LEFT JOIN sources s "
                      "USING (source_id) WHERE c.conversation_id = ? OR c.native_id = ? "
                      "ORDER BY c.conversation_id = ? DESC, c.conversation_id LIMIT 1", [ref, ref, ref]).to_dicts()
    if not rows:
        return None
    conv = rows[0]
    label = conversation_labels(con)[conv["conversation_id"]]
    conv["label"], conv["full_label"] = label.text, label.full
    conv["metrics"] = frame(con, "SELECT * EXCLUDE (conversation_id, label, full_label) FROM report_conversations "
                                 "WHERE conversation_id = ?", [conv["conversation_id"]]).to_dicts()[:1] if has(
        con, "report_conversations") else []
    conv["messages"] = con.execute("SELECT count(*) FROM messages WHERE conversation_id = ? AND on_main_path",
                                   [conv["conversation_id"]]).fetchall()[0][0]
    return conv


def findings(con: duckdb.DuckDBPyConnection, conversation_id: str | None = None, kind: str = "", severity: str = "",
             page: int = 1) -> tuple[list[dict[str, Any]], int]:
    """Findings strongest first (severity, then how far out in the corpus), filtered, one page."""
    if not has(con, "report_findings"):
        return [], 0
    parts, params = ["TRUE"], []
    for col, val in (("f.conversation_id", conversation_id), ("f.kind", kind), ("f.severity", severity)):
        if val:
            parts.append(f"{col} = ?")
            params.append(val)
    where = " AND ".join(parts)
    total = con.execute(f"SELECT count(*) FROM report_findings f WHERE {where}", params).fetchall()[0][0]
    limit = "" if conversation_id else f"LIMIT {FINDINGS_PAGE} OFFSET {FINDINGS_PAGE * (max(page, 1) - 1)}"
    label = "r.label" if has(con, "report_conversations") else "f.native_id"
    join = "LEFT JOIN report_conversations r USING (conversation_id)" if label == "r.label" else ""
    rows = frame(con, f"SELECT f.*, {label} AS label FROM report_findings f {join} WHERE {where} ORDER BY "
                      "CASE f.severity WHEN 'high' THEN 0 WHEN 'low' THEN 1 ELSE 2 END, f.corpus_norm, "
                      f"f.percentile DESC NULLS LAST, f.kind, f.conversation_id {limit}", params).to_dicts()
    return rows, total


def digest(con: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    """The answer-first parts of the latest report (what to change, worst conversations, strongest findings)."""
    if not has(con, "report_runs"):
        return None
    row = con.execute("SELECT generated_at, selection, digest FROM report_runs ORDER BY generated_at DESC "
                      "LIMIT 1").fetchall()
    if not row:
        return None
    return {"generated_at": row[0][0], "selection": orjson.loads(row[0][1]), **orjson.loads(row[0][2])}


def transcript(con: duckdb.DuckDBPyConnection, cid: str, start: int = 0) -> list[dict[str, Any]]:
    """The main path from ``start`` (TRANSCRIPT_PAGE messages): text masked and cut, each message's tool calls
    (with their result's position and size), the call a tool message answers, its topic and sentinel verdict."""
    topics = "LEFT JOIN message_topics mt USING (conversation_id, position)" if has(con, "message_topics") else ""
    sentinel = "LEFT JOIN sentinel_replies sr USING (conversation_id, position)" if has(con, "sentinel_replies") else ""
    rows = frame(con, f"""
        WITH calls AS (
            SELECT conversation_id, position, list({{'name': name, 'arguments': left(forensics_masked(arguments), 300),
                   'result_position': result_position, 'result_bytes': result_bytes,
                   'is_error': coalesce(is_error, false)}} ORDER BY call_index) AS calls
            FROM tool_calls WHERE conversation_id = ? AND position IS NOT NULL GROUP BY 1, 2
        ),
        answers AS (
            SELECT conversation_id, result_position AS position,
                   list({{'name': name, 'position': position, 'arguments': left(forensics_masked(arguments), 120)}}
                        ORDER BY position, call_index) AS answers
            FROM tool_calls WHERE conversation_id = ? AND result_position IS NOT NULL GROUP BY 1, 2
        )
        SELECT m.position, m.role, strftime(m.created_at, '%Y-%m-%d %H:%M:%S') AS created_at, m.content_bytes,
               m.content_chars, left(forensics_masked(m.content), {TEXT_MAX}) AS text, c.calls, a.answers,
               {'mt.topic, mt.marker, mt.confidence' if topics else 'NULL AS topic, NULL AS marker, NULL AS confidence'},
               {'sr.status, sr.drifted' if sentinel else 'NULL AS status, NULL AS drifted'}
        FROM messages m LEFT JOIN calls c USING (conversation_id, position)
        LEFT JOIN answers a USING (conversation_id, position) {topics} {sentinel}
        WHERE m.conversation_id = ? AND m.on_main_path AND m.position >= ?
        ORDER BY m.position LIMIT {TRANSCRIPT_PAGE}""", [cid, cid, cid, start])
    return rows.to_dicts()


def message(con: duckdb.DuckDBPyConnection, cid: str, position: int) -> dict[str, Any] | None:
    rows = frame(con, "SELECT position, role, content_bytes, forensics_masked(content) AS text FROM messages "
                      "WHERE conversation_id = ? AND position = ? AND on_main_path", [cid, position]).to_dicts()
    return rows[0] if rows else None
