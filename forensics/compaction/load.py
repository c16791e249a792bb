"""What the audit reads from the warehouse, a batch of conversations at a time (memory bounded by a batch).

DuckDB picks the candidate rows (tool-call targets out of the JSON arguments, the first error line of an error
result or a command's output, assistant messages that may state something) so Python only reads what can
hold a fact. Compaction events come from ``events`` whatever format logged them (kind ``compaction``); a
``summary`` event is Claude Code's session title, not a compaction.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import duckdb
import orjson

from forensics.compaction.facts import PATH_ARGS, PATTERN_ARGS, Call, Messages
from forensics.compaction.rules import COMMAND_TOOL, HARNESS_TEXT, Rules
from forensics.config import ConfigError
from forensics.selection import SELECTED

BATCH = 500  # conversations per batch
TEXT_MAX = 20_000  # characters of a message read for facts (a longer one is a pasted block past that)
SUMMARY_MAX = 200_000  # characters of a compaction summary read
DETAIL_KEYS = ("summary", "message", "content", "text")  # where a format's event detail keeps the summary text


@dataclass
class Compaction:
    position: int  # the first message after it (the summary, when the format writes it as a message)
    trigger: str | None = None
    pre_tokens: int | None = None
    post_tokens: int | None = None
    summary: str | None = None
    summary_position: int | None = None  # the summary is this message (Claude Code)
    kept_users: bool = False  # the format keeps the user messages before it (Codex replacement history)


@dataclass
class Conversation:
    conversation_id: str
    native_id: str
    format: str
    msgs: Messages = field(default_factory=Messages)
    compactions: list[Compaction] = field(default_factory=list)
    off_path_events: int = 0  # compaction events not on the main path: not audited
    texts: dict[int, tuple[str, str]] = field(default_factory=dict)  # after the first compaction: role, text


def _args(names: tuple[str, ...]) -> str:
    return ("forensics_scrubbed(coalesce(" + ", ".join(f"json_extract_string(t.arguments, '$.{n}')" for n in names)
            + "))")


def selected(con: duckdb.DuckDBPyConnection) -> str:
    """The table of the conversations in scope: the selection when one is materialised, else all."""
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = ?", [SELECTED])
    return SELECTED if exists.fetchall()[0][0] else "conversations"


def batches(con: duckdb.DuckDBPyConnection, r: Rules, only: list[str], size: int = BATCH) -> Iterator[list[Conversation]]:
    """The conversations ``only`` names, ``size`` at a time, in native-id order."""
    ids = con.execute("SELECT c.conversation_id, c.native_id, coalesce(s.format, '') FROM conversations c "
                      "LEFT JOIN sources s USING (source_id) WHERE c.conversation_id IN (SELECT unnest(?::VARCHAR[])) "
                      "ORDER BY c.native_id, c.conversation_id", [only]).fetchall()
    for start in range(0, len(ids), size):
        part = ids[start:start + size]
        con.execute("CREATE OR REPLACE TEMP TABLE _compaction_batch AS SELECT unnest(?::VARCHAR[]) AS conversation_id",
                    [[p[0] for p in part]])
        convs = {cid: Conversation(cid, native, fmt) for cid, native, fmt in part}
        try:
            _fill(con, r, convs)
        except duckdb.InvalidInputException as e:  # a pattern Python accepts and RE2 does not
            raise ConfigError(f"[compaction] patterns: DuckDB cannot run one ({str(e).splitlines()[0]})") from None
        yield list(convs.values())
    con.execute("DROP TABLE IF EXISTS _compaction_batch")


def _fill(con: duckdb.DuckDBPyConnection, r: Rules, convs: dict[str, Conversation]) -> None:
    b = "JOIN _compaction_batch USING (conversation_id)"
    for cid, pos, name, path, pattern, command, todo, err in con.execute(f"""
            SELECT t.conversation_id, t.position, t.name,
                   CASE WHEN json_valid(t.arguments) THEN {_args(PATH_ARGS)} END,
                   CASE WHEN json_valid(t.arguments) THEN {_args(PATTERN_ARGS)} END,
                   CASE WHEN json_valid(t.arguments) THEN {_args(('command', 'cmd'))} END,
                   CASE WHEN regexp_matches(t.name, '(?i)todo|plan') THEN forensics_scrubbed(t.arguments) END,
                   t.is_error
            FROM tool_calls t {b} WHERE t.position IS NOT NULL ORDER BY 1, 2, t.call_index""").fetchall():
        convs[cid].msgs.calls.append(Call(pos, name or "", path, pattern, command, todo, bool(err)))
    for cid, pos, line in con.execute(f"""
            SELECT t.conversation_id, t.result_position,
                   forensics_scrubbed(coalesce(nullif(regexp_extract(left(m.content, {TEXT_MAX}), ?, 0), ''),
                            CASE WHEN bool_or(t.is_error) THEN regexp_extract(left(m.content, 2000), '\\S[^\\n]*', 0) END))
            FROM tool_calls t {b}
            JOIN messages m ON m.conversation_id = t.conversation_id AND m.position = t.result_position
            WHERE m.on_main_path AND (t.is_error OR regexp_matches(t.name, ?))
            GROUP BY t.conversation_id, t.result_position, m.content ORDER BY 1, 2""",
                                         [f"[^\\n]*(?:{r.error_sql})[^\\n]*", COMMAND_TOOL.pattern]).fetchall():
        if line:
            convs[cid].msgs.errors.append((pos, line))
    for cid, pos, role, text, stated, spans in con.execute(f"""
            SELECT conversation_id, position, role,
                   CASE WHEN role = 'user' THEN forensics_scrubbed(left(content, {TEXT_MAX}))
                        -- an assistant message: only its sentences that state something or ask
                        WHEN stated THEN forensics_scrubbed(array_to_string(list_concat(
                            regexp_extract_all(left(content, {TEXT_MAX}), ?), regexp_extract_all(left(content,
                            {TEXT_MAX}), '[^。！？!?；;\\n]+[?？](?:\\s|$)')), chr(10))) END, stated,
                   CASE WHEN role = 'assistant' THEN
                       regexp_extract_all(forensics_scrubbed(content), '`([^`\\n]{{2,160}})`', 1) END
            FROM (SELECT *, CASE role WHEN 'user' THEN regexp_matches(content, ?) ELSE regexp_matches(content, ?) END
                            OR regexp_matches(content, '[?？](?:\\s|$)') AS stated
                  FROM messages {b} WHERE on_main_path AND NOT blank AND role IN ('user', 'assistant'))
            WHERE role = 'user' OR stated OR contains(content, '`')
            ORDER BY 1, 2""", [r.snippet_sql, r.user_sql, r.statement_sql]).fetchall():
        c = convs[cid]
        if role == "user":
            if not HARNESS_TEXT.match(text):
                c.msgs.users.append((pos, text, stated))
        else:
            c.msgs.assistant.append((pos, spans or [], text or None))
    _events(con, r, convs)


def _events(con: duckdb.DuckDBPyConnection, r: Rules, convs: dict[str, Conversation]) -> None:
    """Compaction events, their summaries and the texts after them (only conversations that have one)."""
    rows = con.execute("""
        SELECT e.conversation_id, e.position, any_value(e.trigger), max(e.pre_tokens), max(e.post_tokens),
               list(e.detail)
        FROM events e JOIN _compaction_batch USING (conversation_id)
        WHERE e.kind = 'compaction' GROUP BY 1, 2 ORDER BY 1, 2 NULLS LAST""").fetchall()
    for cid, pos, trigger, pre, post, details in rows:
        c = convs[cid]
        if pos is None:
            c.off_path_events += 1
            continue
        summary = next((s for d in details for s in [_detail_summary(d)] if s), None)
        if summary:
            summary = con.execute("SELECT forensics_scrubbed(?)", [summary]).fetchall()[0][0]
        # Codex rebuilds the context from the summary and the recent user messages (its replacement history)
        c.compactions.append(Compaction(pos, trigger, pre, post, summary, kept_users=c.format == "codex"))
    audited = [cid for cid, c in convs.items() if c.compactions]
    if not audited:
        return
    for cid, pos, role, text in con.execute(f"""
            SELECT m.conversation_id, m.position, m.role, forensics_scrubbed(left(m.content, {SUMMARY_MAX}))
            FROM messages m JOIN (SELECT conversation_id, min(position) AS first FROM events
                                  WHERE kind = 'compaction' AND conversation_id IN (SELECT unnest(?::VARCHAR[]))
                                  GROUP BY 1) e USING (conversation_id)
            WHERE m.on_main_path AND m.position >= e.first AND m.role IN ('user', 'assistant', 'system')
                  AND NOT m.blank ORDER BY 1, 2""", [audited]).fetchall():
        convs[cid].texts[pos] = (role, text)
    for c in (convs[cid] for cid in audited):
        for k in c.compactions:  # the summary as a message at the compaction (Claude Code's isCompactSummary)
            role, text = c.texts.get(k.position, ("", ""))
            if role in ("user", "system") and r.summary.match(text):
                k.summary, k.summary_position = k.summary or text, k.position
        c.msgs.skip = frozenset(k.summary_position for k in c.compactions if k.summary_position is not None)
        c.msgs.users = [u for u in c.msgs.users if u[0] not in c.msgs.skip]


def _detail_summary(detail: str | None) -> str | None:
    """The summary a format keeps in the event itself (Codex ``compacted.message``, Continue, OpenHands, Cline)."""
    try:
        obj = orjson.loads(detail) if detail else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    for k in DETAIL_KEYS:
        v = obj.get(k)
        if isinstance(v, str) and len(v.strip()) >= 40 and not v.lower().startswith("conversation compacted"):
            return v[:SUMMARY_MAX]
    return None

