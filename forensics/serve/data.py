"""What the explorer's pages read from the warehouse: read-only SQL, secrets masked in SQL before any text
leaves DuckDB (the page templates mask every rendered string once more).

Findings and per-conversation figures come from the tables `forensics report` keeps (``report.persist``):
the same analyzer code as the report, not a second copy. Without them the pages still list and show
conversations, and say how to get the findings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import PurePath
from typing import Any

import duckdb
import orjson

from forensics import analyzers
from forensics.kernel.selection import Selection
from forensics.report.persist import METRIC_WORDS as METRIC_WORDS
from forensics.report.persist import METRICS as METRICS
from forensics.text.escape import terminal
from forensics.warehouse import frame
from forensics.warehouse.labels import Label, conversation_labels

PAGE = 50  # conversations per page
FINDINGS_PAGE = 100
TRANSCRIPT_PAGE = 100  # messages per transcript window: a 743-message session is 8 windows, not one 30,000-px page
CONTEXT = 10  # messages shown before the one a link points at (a finding's evidence, a search hit)
TEXT_MAX = 4000  # characters of a message shown in the transcript (the message page shows it all)
SORTS = ["label", "created_at", "model", "agent", "outcome", "tokens_in", "tokens_out", "findings", "high", *METRICS]
OUTCOMES = {
    "passed": "o.success",
    "failed": "NOT o.success",
    "scored": "o.success IS NULL AND o.score IS NOT NULL",
    "unknown": "o.conversation_id IS NULL",
}  # the outcome filter's choices (docs/outcomes.md#where-outcomes-come-from)
# tokens sent (cached ones included, as docs/usage.md#what-the-columns-mean counts input) and received, per assistant message
TOKENS_IN = (
    "coalesce(u.input_tokens, 0) + coalesce(u.cache_read_input_tokens, 0) + coalesce(u.cache_creation_input_tokens, 0)"
)


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
    agent: str = ""
    outcome: str = ""
    sort: str = "findings"
    desc: bool = True
    page: int = 1

    def where(self) -> tuple[str, list[Any]]:
        """The report's own selection (``forensics.kernel.selection``), and the finding kind."""
        where, params = Selection(
            since=_date(self.since),
            until=_date(self.until),
            models=(self.model,) if self.model else (),
            sources=(self.source,) if self.source else (),
            formats=(self.agent,) if self.agent else (),
        ).where()
        if self.kind:
            where += " AND c.conversation_id IN (SELECT conversation_id FROM report_findings WHERE kind = ?)"
            params.append(self.kind)
        if self.outcome in OUTCOMES:
            where += f" AND {OUTCOMES[self.outcome]}"
        return where, params


def _date(text: str) -> str | None:
    """An ISO date or time from a form field; anything else filters nothing (the form shows it back)."""
    try:
        return datetime.fromisoformat(text).isoformat() if text else None
    except ValueError:
        return None


def choices(con: duckdb.DuckDBPyConnection) -> dict[str, list[Any]]:
    """What the conversation filters offer: sources (id, distinguishing label), agents (formats), models,
    finding kinds, outcomes."""
    kinds = (
        [r[0] for r in con.execute("SELECT DISTINCT kind FROM report_findings ORDER BY 1").fetchall()]
        if has(con, "report_findings")
        else []
    )
    sources = con.execute("SELECT source_id, path FROM sources").fetchall()
    names = source_names([p for _, p in sources])
    return {
        "sources": sorted(((sid, names[p]) for sid, p in sources), key=lambda x: x[1]),
        "agents": [r[0] for r in con.execute("SELECT DISTINCT format FROM sources ORDER BY 1").fetchall()],
        "models": [
            r[0]
            for r in con.execute(
                "SELECT DISTINCT model FROM conversations WHERE model IS NOT NULL ORDER BY 1"
            ).fetchall()
        ],
        "kinds": kinds,
        "outcomes": list(OUTCOMES),
    }


def source_names(paths: list[str]) -> dict[str, str]:
    """Each path's shortest distinguishing suffix: ``conversations.json`` while it is the only one, else as
    many trailing folders as tell it from the others (``httpie/3/conversations.json``); the full path for
    one that is a suffix of another."""
    split = {p: PurePath(p).parts for p in paths}
    out: dict[str, str] = {}
    depth, left = 1, set(split)
    while left:
        seen = Counter(split[p][-depth:] for p in split)
        for p in sorted(left):
            if seen[split[p][-depth:]] == 1 or depth >= len(split[p]):
                out[p] = "/".join(split[p][-depth:]).replace("//", "/")
                left.discard(p)
        depth += 1
    return out


def conversations(con: duckdb.DuckDBPyConnection, f: Filters) -> tuple[list[dict[str, Any]], int]:
    """One page of conversations with their agent, model, outcome, tokens, figures and finding counts, and how
    many match."""
    where, params = (f if reported(con) else replace(f, kind="")).where()  # no report: no finding kinds to filter by
    if reported(con):
        joined = (
            "LEFT JOIN report_conversations r USING (conversation_id) LEFT JOIN (SELECT conversation_id, "
            "count(*) FILTER (WHERE severity <> 'info') AS findings, count(*) FILTER (WHERE severity = 'high') "
            "AS high, list(DISTINCT kind ORDER BY kind) FILTER (WHERE severity <> 'info') AS kinds "
            "FROM report_findings GROUP BY 1) f USING (conversation_id)"
        )
        cols = "r.label, r.full_label, " + ", ".join(f"r.{m}" for m in METRICS) + ", f.findings, f.high, f.kinds"
    else:
        joined, cols = "", "NULL AS label"
    outcomes = "LEFT JOIN conversation_outcomes o USING (conversation_id)"
    total = con.execute(f"SELECT count(*) FROM conversations c {outcomes} WHERE {where}", params).fetchall()[0][0]
    sort = f.sort if f.sort in SORTS and (reported(con) or f.sort not in ("findings", "high", *METRICS)) else "label"
    key = {
        "created_at": "c.created_at",
        "model": "c.model",
        "agent": "s.format",
        "outcome": "o.success::INT * 2 + (o.score IS NOT NULL)::INT",
    }.get(sort, f'"{sort}"')
    order = f"{key} {'DESC' if f.desc else 'ASC'} NULLS LAST"
    usage = (
        f"LEFT JOIN (SELECT conversation_id, sum({TOKENS_IN})::BIGINT AS tokens_in, sum(u.output_tokens)::BIGINT AS tokens_out "
        "FROM message_usage u GROUP BY 1) u USING (conversation_id)"
    )
    rows = frame(
        con,
        f"SELECT c.conversation_id, c.native_id, c.model, c.created_at, s.path AS source, "
        f"s.format AS agent, o.success, o.score, u.tokens_in, u.tokens_out, {cols} "
        f"FROM conversations c LEFT JOIN sources s USING (source_id) {outcomes} {usage} {joined} "
        f"WHERE {where} ORDER BY {order}, c.conversation_id "
        f"LIMIT {PAGE} OFFSET {PAGE * (max(f.page, 1) - 1)}",
        params,
    ).to_dicts()
    if rows and rows[0]["label"] is None:  # no report yet: labels computed here, as the report would
        labels = labels_of(con)
        for r in rows:
            r["label"], r["full_label"] = labels[r["conversation_id"]].text, labels[r["conversation_id"]].full
    return rows, total


_LABELS: dict[tuple[Any, ...], dict[str, Label]] = {}


def labels_of(con: duckdb.DuckDBPyConnection) -> dict[str, Label]:
    """Every conversation's label (``forensics.warehouse.labels``), kept while the warehouse's conversations are the same
    ones: they are computed over all of them (a quarter of a second at a few thousand), and every page needs some."""
    key = tuple(
        con.execute(
            "SELECT (SELECT path FROM duckdb_databases() WHERE database_name = current_database()), (SELECT count(*) FROM conversations), (SELECT max(imported_at) "
            "FROM sources), (SELECT count(*) FROM sources)"
        ).fetchall()[0]
    )
    if key not in _LABELS:
        _LABELS.clear()
        _LABELS[key] = conversation_labels(con)
    return _LABELS[key]


def conversation(con: duckdb.DuckDBPyConnection, ref: str) -> dict[str, Any] | None:
    """A conversation by id or native id (the first when a native id repeats), with its label and figures."""
    rows = frame(
        con,
        "SELECT c.conversation_id, c.native_id, forensics_masked(c.title) AS title, c.model, "
        "c.provider, c.created_at, s.path AS source, s.format AS agent, o.success, o.score, "
        "json_extract_string(o.detail, '$.task') AS task FROM conversations c LEFT JOIN sources s "
        "USING (source_id) LEFT JOIN conversation_outcomes o USING (conversation_id) "
        "WHERE c.conversation_id = ? OR c.native_id = ? "
        "ORDER BY c.conversation_id = ? DESC, c.conversation_id LIMIT 1",
        [ref, ref, ref],
    ).to_dicts()
    if not rows:
        return None
    conv = rows[0]
    label = labels_of(con)[conv["conversation_id"]]
    conv["label"], conv["full_label"] = label.text, label.full
    conv["metrics"] = (
        frame(
            con,
            "SELECT * EXCLUDE (conversation_id, label, full_label) FROM report_conversations WHERE conversation_id = ?",
            [conv["conversation_id"]],
        ).to_dicts()[:1]
        if has(con, "report_conversations")
        else []
    )
    conv["messages"], conv["last"] = con.execute(
        "SELECT count(*), max(position) FROM messages WHERE conversation_id = ? AND on_main_path",
        [conv["conversation_id"]],
    ).fetchall()[0]
    conv["tokens_in"], conv["tokens_out"], conv["turns"] = con.execute(
        f"SELECT sum({TOKENS_IN})::BIGINT, sum(u.output_tokens)::BIGINT, count(*) FROM message_usage u WHERE conversation_id = ?",
        [conv["conversation_id"]],
    ).fetchall()[0]
    conv["siblings"] = siblings(con, conv["conversation_id"], conv["task"], conv["agent"])
    return conv


def siblings(con: duckdb.DuckDBPyConnection, cid: str, task: str | None, agent: str | None) -> list[dict[str, Any]]:
    """The other runs of the same task by the same agent (the outcome's task key: a tau-bench task, a
    SWE-bench instance, an Inspect sample), the run diff's candidates; task keys of two agents (two
    benchmarks numbering their tasks from 1) are not the same task."""
    if task is None:
        return []
    return frame(
        con,
        "SELECT o.conversation_id, c.native_id, c.model, o.success, o.score FROM conversation_outcomes o "
        "JOIN conversations c USING (conversation_id) JOIN sources s USING (source_id) "
        "WHERE json_extract_string(o.detail, '$.task') = ? AND s.format = ? AND o.conversation_id <> ? "
        "ORDER BY o.success = (SELECT success FROM conversation_outcomes WHERE conversation_id = ?), "
        "c.model, c.native_id, o.conversation_id LIMIT 20",
        [task, agent, cid, cid],
    ).to_dicts()


def findings(
    con: duckdb.DuckDBPyConnection,
    conversation_id: str | None = None,
    kind: str = "",
    severity: str = "",
    page: int = 1,
) -> tuple[list[dict[str, Any]], int]:
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
    rows = frame(
        con,
        f"SELECT f.*, {label} AS label FROM report_findings f {join} WHERE {where} ORDER BY "
        "CASE f.severity WHEN 'high' THEN 0 WHEN 'low' THEN 1 ELSE 2 END, f.corpus_norm, "
        f"f.percentile DESC NULLS LAST, f.kind, f.conversation_id {limit}",
        params,
    ).to_dicts()
    return rows, total


def digest(con: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    """The answer-first parts of the latest report (what to change, worst conversations, strongest findings)."""
    if not has(con, "report_runs"):
        return None
    row = con.execute(
        "SELECT generated_at, selection, digest FROM report_runs ORDER BY generated_at DESC LIMIT 1"
    ).fetchall()
    if not row:
        return None
    return {"generated_at": row[0][0], "selection": orjson.loads(row[0][1]), **orjson.loads(row[0][2])}


def transcript(con: duckdb.DuckDBPyConnection, cid: str, start: int = 0) -> list[dict[str, Any]]:
    """The main path from position ``start`` (TRANSCRIPT_PAGE messages): text masked and cut, origin, tokens of
    the turn and the model that wrote it where the log has them, each message's tool calls (with their result's
    position and size), the call a tool message answers, what happened to the context there (events: a compaction,
    a summary), and the per-message verdicts the analyzers declare (``Analyzer.marks``: its topic, its sentinel
    verdict)."""
    marks = [m for a in analyzers.declarations() for m in a.marks]  # per-message verdicts (topic, sentinel)
    held = [has(con, m.table) for m in marks]
    shown = "".join(
        f", j{i}.{c}" if ok else f", NULL AS {c}" for i, (m, ok) in enumerate(zip(marks, held)) for c in m.columns
    )
    joins = " ".join(
        f"LEFT JOIN {m.table} j{i} ON j{i}.conversation_id = ? AND j{i}.position = m.position"
        for i, (m, ok) in enumerate(zip(marks, held))
        if ok
    )
    rows = frame(
        con,
        f"""
        WITH page AS (
            SELECT position, role, origin, created_at, content_bytes, content_chars, content FROM messages
            WHERE conversation_id = ? AND on_main_path AND position >= ? ORDER BY position LIMIT {TRANSCRIPT_PAGE}
        ),
        calls AS (
            SELECT position, list({{'name': name, 'arguments': left(forensics_masked(arguments), 300),
                   'result_position': result_position, 'result_bytes': result_bytes,
                   'is_error': coalesce(is_error, false)}} ORDER BY call_index) AS calls
            FROM tool_calls WHERE conversation_id = ? AND position IN (SELECT position FROM page) GROUP BY 1
        ),
        answers AS (
            SELECT result_position AS position,
                   list({{'name': name, 'position': position, 'arguments': left(forensics_masked(arguments), 120)}}
                        ORDER BY position, call_index) AS answers
            FROM tool_calls WHERE conversation_id = ? AND result_position IN (SELECT position FROM page) GROUP BY 1
        ),
        usage AS (
            SELECT position, sum({TOKENS_IN})::BIGINT AS tokens_in, sum(u.output_tokens)::BIGINT AS tokens_out,
                   sum(u.cache_read_input_tokens)::BIGINT AS tokens_cached,
                   string_agg(DISTINCT u.model, ', ' ORDER BY u.model) AS model
            FROM message_usage u WHERE conversation_id = ? AND position IN (SELECT position FROM page) GROUP BY 1
        ),
        happened AS (
            SELECT position, list({{'kind': kind, 'trigger': trigger, 'pre_tokens': pre_tokens,
                   'post_tokens': post_tokens}} ORDER BY seq) AS events
            FROM events WHERE conversation_id = ? AND kind <> 'reasoning' AND position IN (SELECT position FROM page)
            GROUP BY 1
        )
        SELECT m.position, m.role, m.origin, strftime(m.created_at, '%Y-%m-%d %H:%M:%S') AS created_at,
               m.content_bytes, m.content_chars, left(forensics_masked(m.content), {TEXT_MAX}) AS text,
               length(m.content) - length(replace(m.content, chr(10), '')) + 1 AS lines,
               c.calls, a.answers, us.tokens_in, us.tokens_out, us.tokens_cached, us.model, h.events{shown}
        FROM page m LEFT JOIN calls c USING (position) LEFT JOIN answers a USING (position)
        LEFT JOIN usage us USING (position) LEFT JOIN happened h USING (position) {joins}
        ORDER BY m.position""",
        [cid, start, cid, cid, cid, cid] + [cid] * sum(held),
    )
    return rows.to_dicts()


def windows(con: duckdb.DuckDBPyConnection, cid: str) -> list[int]:
    """The first position of each transcript window (every TRANSCRIPT_PAGE-th main-path message)."""
    return [
        r[0]
        for r in con.execute(
            "SELECT position FROM (SELECT position, row_number() OVER (ORDER BY position) - 1 AS i FROM messages "
            f"WHERE conversation_id = ? AND on_main_path) WHERE i % {TRANSCRIPT_PAGE} = 0 ORDER BY 1",
            [cid],
        ).fetchall()
    ]


def message(con: duckdb.DuckDBPyConnection, cid: str, position: int) -> dict[str, Any] | None:
    rows = frame(
        con,
        "SELECT position, role, origin, content_bytes, forensics_masked(content) AS text FROM messages "
        "WHERE conversation_id = ? AND position = ? AND on_main_path",
        [cid, position],
    ).to_dicts()
    return rows[0] if rows else None


def task_pairs(con: duckdb.DuckDBPyConnection, limit: int = 200) -> list[dict[str, Any]]:
    """Tasks one agent ran at least twice with both a passed and a failed run, each with a passed and a
    failed run to diff (the first of each by model and native id): what /diff offers when asked for nothing."""
    return frame(
        con,
        """
        WITH runs AS (
            SELECT json_extract_string(o.detail, '$.task') AS task, s.format AS agent, o.conversation_id, o.success,
                   c.model, c.native_id
            FROM conversation_outcomes o JOIN conversations c USING (conversation_id) JOIN sources s USING (source_id)
            WHERE o.success IS NOT NULL AND json_extract_string(o.detail, '$.task') IS NOT NULL
        )
        SELECT task, agent, count(*) AS runs, count(*) FILTER (WHERE success) AS passed,
               arg_min(conversation_id, (model, native_id, conversation_id)) FILTER (WHERE success) AS a,
               arg_min(conversation_id, (model, native_id, conversation_id)) FILTER (WHERE NOT success) AS b
        FROM runs GROUP BY 1, 2 HAVING bool_or(success) AND bool_or(NOT success)
        ORDER BY agent, try_cast(task AS BIGINT) NULLS LAST, task LIMIT ?""",
        [limit],
    ).to_dicts()


WORST_RUNS = 15  # failed runs the home page lists with their decisive step (the report's own number)
CLUSTERS_SHOWN = 15
STEP_CHARS = 200  # characters of a decisive step's text on the home page (masked before the cut)


def what_went_wrong(con: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    """The last report's "What went wrong" (the ``what_went_wrong`` view the failures analyzer declares): the
    clusters largest first, and the failed runs of the most common failed signatures with their decisive step
    (position, agent, the rule that chose it, the step's text masked, escaped and cut), and where no failed run is
    listed because no run is graded, the report's sentence saying so (``ungraded``). None when no report wrote
    them, they are empty, or no analyzer declares the view."""
    read = analyzers.view("what_went_wrong")
    if read is None:
        return None
    clusters, worst = read(con, CLUSTERS_SHOWN, WORST_RUNS, STEP_CHARS * 4)
    labels = labels_of(con) if worst else {}
    for w in worst:
        said = terminal(" ".join((w["text"] or "").split()))  # a control or bidi character shown as its escape
        w["text"] = said if len(said) <= STEP_CHARS else said[: STEP_CHARS - 1] + "…"
        w["label"] = labels[w["conversation_id"]].text if w["conversation_id"] in labels else w["conversation_id"]
    if not clusters and not worst:
        return None
    ungraded = analyzers.view("ungraded") if not worst else None  # the report's sentence in place of its failed runs
    return {"clusters": clusters, "worst": worst, "ungraded": ungraded(con) if ungraded is not None else ""}
