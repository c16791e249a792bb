"""What the audit reads from the warehouse, a batch of conversations at a time (memory bounded by a batch).

DuckDB picks the candidate rows (tool-call targets out of the JSON arguments, the first error line of an error
result or a command's output, assistant messages that may state something) so Python only reads what can
hold a fact. Compaction events come from ``events`` whatever format logged them (kind ``compaction``); a
``summary`` event is Claude Code's session title, not a compaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb
import orjson

from forensics.analyzers.compaction.facts import PATH_ARGS, PATTERN_ARGS, Call, Messages
from forensics.analyzers.compaction.rules import COMMAND_TOOL, HARNESS_TEXT, Rules
from forensics.config import ConfigError
from forensics.kernel.selection import SELECTED
from forensics.warehouse.tool_errors import HARNESS_HEADER

BATCH = 500  # conversations per batch
TEXT_MAX = 20_000  # characters of a message read for facts (a longer one is a pasted block past that)
SUMMARY_MAX = 200_000  # characters of a compaction summary read
KEPT_MAX = 1_000_000  # characters of the messages a compaction keeps, read to judge what they carry (the latest)
DETAIL_KEYS = ("summary", "message", "content", "text")  # where a format's event detail keeps the summary text
# the lines a harness writes above a command's output (Claude Code's "Exit code 1", Codex's exit code, wall time and
# unified-exec chunk headers): taken off before the first error line is looked for, so the error is the output's
RESULT_HEADERS = rf"(?m)^{HARNESS_HEADER}[ \t]*(?:\n|$)"
SUMMARY_SLACK = 3  # the summary message is at the compaction or one of the next two (after harness lines only)


@dataclass
class Compaction:
    position: int  # the first message after it (the summary, when the format writes it as a message)
    trigger: str | None = None
    pre_tokens: int | None = None
    post_tokens: int | None = None
    summary: str | None = None
    summary_position: int | None = None  # the summary is this message (Claude Code)
    kept_users: bool = False  # the format keeps the user messages before it (Codex replacement history)
    kept_assistant: bool = False  # ... and the assistant's answers (a Codex replacement history that lists them)
    answers: frozenset[int] = frozenset()  # then: the positions of those answers (an assistant message that ends
    # its turn: the next message on the main path is the person's, or the compaction; not the commentary between calls)
    kept_text: str | None = None  # what those kept messages say, to judge a fact by (as a summary is)
    kept_messages: int | None = None  # the log says how many old messages the new context kept (Gemini CLI)
    window: int | None = None  # then: the first position of the messages kept (the compaction's own: none kept)
    opaque: str | None = None  # the log holds a summary no one can read: "encrypted" or "empty"

    @property
    def summary_state(self) -> str:
        """``text`` (a summary to judge by), ``opaque`` (encrypted or empty) or ``none`` (no summary logged)."""
        return "text" if self.summary else "opaque" if self.opaque else "none"


@dataclass
class Conversation:
    conversation_id: str
    native_id: str
    format: str
    msgs: Messages = field(default_factory=Messages)
    compactions: list[Compaction] = field(default_factory=list)
    off_path_events: int = 0  # compaction events not on the main path: not audited
    texts: dict[int, tuple[str, str]] = field(default_factory=dict)  # after the first compaction: role, text


ARG_GROUPS = {"path": PATH_ARGS, "pattern": PATTERN_ARGS, "command": ("command", "cmd")}  # each the first key set


def _args() -> tuple[str, list[str]]:
    """The JSON paths of every argument read, and per group its value: the first of its keys that is set (a
    coalesce). One extraction of a list of paths parses each argument once; a call per key cost DuckDB's JSON
    functions a few MB of working memory each (a hundred MB for these 19 keys on two threads)."""
    paths, picks, at = [], [], 1
    for column, names in ARG_GROUPS.items():
        paths += [f"$.{n}" for n in names]
        picks.append(
            f"forensics_scrubbed(list_filter(v[{at}:{at + len(names) - 1}], lambda x: x IS NOT NULL)[1]) AS {column}"
        )
        at += len(names)
    return ", ".join(picks), paths


def selected(con: duckdb.DuckDBPyConnection) -> str:
    """The table of the conversations in scope: the selection when one is materialised, else all."""
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = ?", [SELECTED])
    return SELECTED if exists.fetchall()[0][0] else "conversations"


def batches(
    con: duckdb.DuckDBPyConnection, r: Rules, only: list[str], size: int = BATCH
) -> Iterator[list[Conversation]]:
    """The conversations ``only`` names, ``size`` at a time, in native-id order. What can hold a fact is cut from
    the messages in one pass (``_stage``: a join per batch would read every message's text once per batch)."""
    ids = con.execute(
        "SELECT c.conversation_id, c.native_id, coalesce(s.format, '') FROM conversations c "
        "LEFT JOIN sources s USING (source_id) WHERE c.conversation_id IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY c.native_id, c.conversation_id",
        [only],
    ).fetchall()
    if not ids:
        return
    try:
        _stage(con, r, [i[0] for i in ids])
        for start in range(0, len(ids), size):
            part = ids[start : start + size]
            con.execute(
                "CREATE OR REPLACE TEMP TABLE _compaction_batch AS SELECT unnest(?::VARCHAR[]) AS conversation_id",
                [[p[0] for p in part]],
            )
            convs = {cid: Conversation(cid, native, fmt) for cid, native, fmt in part}
            _fill(con, r, convs)
            yield list(convs.values())
    except duckdb.InvalidInputException as e:  # a pattern Python accepts and RE2 does not
        raise ConfigError(f"[compaction] patterns: DuckDB cannot run one ({str(e).splitlines()[0]})") from None
    finally:
        for t in STAGED:
            con.execute(f"DROP TABLE IF EXISTS {t}")


STAGED = ("_compaction_todo", "_compaction_batch", "_compaction_calls", "_compaction_errors", "_compaction_texts")


def _stage(con: duckdb.DuckDBPyConnection, r: Rules, ids: list[str]) -> None:
    """Temp tables of the candidate rows: tool-call targets, first error lines, user texts and assistant
    statements, questions and code spans; secrets taken out."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _compaction_todo AS SELECT unnest(?::VARCHAR[]) AS conversation_id", [ids]
    )
    todo = "JOIN _compaction_todo USING (conversation_id)"
    picks, paths = _args()
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _compaction_calls AS
        SELECT conversation_id, position, call_index, name, result_position, {picks},
               CASE WHEN regexp_matches(name, '(?i)todo|plan') THEN forensics_scrubbed(arguments) END AS todo, is_error
        FROM (SELECT t.*, CASE WHEN json_valid(t.arguments) THEN json_extract_string(t.arguments, ?) END AS v
              FROM tool_calls t {todo} WHERE t.position IS NOT NULL)""",
        [paths],
    )
    # each error pattern alone (RE2 runs one alternation of them all fifty times slower); the earliest line wins
    pats = r.error_patterns
    any_hit = " OR ".join("regexp_matches(c, ?)" for _ in pats) or "false"
    lines = ", ".join("regexp_extract(c, ?, 0)" for _ in pats) or "''"
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _compaction_errors AS
        WITH r AS (  -- one row per result message (parallel calls share one in some formats)
            SELECT t.conversation_id, t.result_position, bool_or(t.is_error) AS is_error
            FROM tool_calls t {todo} WHERE t.is_error OR regexp_matches(t.name, ?) GROUP BY 1, 2),
        m AS (SELECT r.*, regexp_replace(left(m.content, {TEXT_MAX}), '{RESULT_HEADERS}', '', 'g') AS c FROM r
              JOIN messages m ON m.conversation_id = r.conversation_id AND m.position = r.result_position
              WHERE m.on_main_path)
        SELECT conversation_id, result_position AS position, forensics_scrubbed(
                   CASE WHEN {any_hit} THEN list_sort(list_filter([struct_pack(at := instr(c, x), line := x)
                                                                    FOR x IN [{lines}]], lambda s: s.line <> ''))[1].line
                        WHEN is_error THEN regexp_extract(left(c, 2000), '\\S[^\\n]*', 0) END) AS line
        FROM m""",
        [COMMAND_TOOL.pattern, *[f"(?im){p}" for p in pats], *[f"(?im)[^\\n]*(?:{p})[^\\n]*" for p in pats]],
    )
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _compaction_texts AS
        SELECT conversation_id, position, role,
               CASE WHEN role = 'user' THEN forensics_scrubbed(left(content, {TEXT_MAX}))
                    -- an assistant message: only its sentences that state something or ask
                    WHEN stated THEN forensics_scrubbed(array_to_string(list_concat(
                        regexp_extract_all(left(content, {TEXT_MAX}), ?), regexp_extract_all(left(content,
                        {TEXT_MAX}), '[^。！？!?；;\\n]+[?？](?:\\s|$)')), chr(10))) END AS text, stated,
               CASE WHEN role = 'assistant' THEN list_transform(
                   regexp_extract_all(content, '`([^`\\n]{{2,160}})`', 1), lambda x: forensics_scrubbed(x)) END AS spans
        FROM (SELECT m.*, CASE role WHEN 'user' THEN regexp_matches(content, ?) ELSE regexp_matches(content, ?) END
                          OR regexp_matches(content, '[?？](?:\\s|$)') AS stated
              FROM messages m {todo} WHERE on_main_path AND NOT blank AND role IN ('user', 'assistant'))
        WHERE role = 'user' OR stated OR contains(content, '`')""",
        [r.snippet_sql, r.user_sql, r.statement_sql],
    )


def _fill(con: duckdb.DuckDBPyConnection, r: Rules, convs: dict[str, Conversation]) -> None:
    b = "JOIN _compaction_batch USING (conversation_id)"
    for cid, pos, name, path, pattern, command, todo, err, res in con.execute(
        f"SELECT conversation_id, position, name, path, pattern, command, todo, is_error, result_position "
        f"FROM _compaction_calls {b} ORDER BY 1, 2, call_index"
    ).fetchall():
        convs[cid].msgs.calls.append(Call(pos, name or "", path, pattern, command, todo, bool(err), res))
    for cid, pos, line in con.execute(
        f"SELECT conversation_id, position, line FROM _compaction_errors {b} WHERE line <> '' ORDER BY 1, 2"
    ).fetchall():
        convs[cid].msgs.errors.append((pos, line))
    for cid, pos, role, text, stated, spans in con.execute(
        f"SELECT conversation_id, position, role, text, stated, spans FROM _compaction_texts {b} ORDER BY 1, 2"
    ).fetchall():
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
        objs = [_detail(d) for d in details]
        # Codex rebuilds the context from the summary and the recent user messages (its replacement history;
        # a newer one keeps the assistant's answers too, and the summary encrypted)
        counts = [o["kept_messages"] for o in objs if isinstance(o.get("kept_messages"), int)]
        c.compactions.append(
            Compaction(
                pos,
                trigger,
                pre,
                post,
                summary,
                kept_users=c.format == "codex",
                kept_assistant=any("assistant" in (o.get("kept_roles") or ()) for o in objs),
                opaque=_opaque(objs),
                kept_messages=min(counts) if counts else None,
            )
        )
    audited = [cid for cid, c in convs.items() if c.compactions]
    if not audited:
        return
    _answers(con, [c for c in convs.values() if any(k.kept_assistant for k in c.compactions)])
    _windows(con, [c for c in convs.values() if any(k.kept_messages is not None for k in c.compactions)])
    for cid, pos, role, text in con.execute(
        f"""
            SELECT m.conversation_id, m.position, m.role, forensics_scrubbed(left(m.content, {SUMMARY_MAX}))
            FROM messages m JOIN (SELECT conversation_id, min(position) AS first FROM events
                                  WHERE kind = 'compaction' AND conversation_id IN (SELECT unnest(?::VARCHAR[]))
                                  GROUP BY 1) e USING (conversation_id)
            WHERE m.on_main_path AND m.position >= e.first AND m.role IN ('user', 'assistant', 'system')
                  AND NOT m.blank ORDER BY 1, 2""",
        [audited],
    ).fetchall():
        convs[cid].texts[pos] = (role, text)
    for c in (convs[cid] for cid in audited):
        for k in c.compactions:  # the summary as a message at the compaction (Claude Code's isCompactSummary)
            for p in range(k.position, k.position + SUMMARY_SLACK):
                role, text = c.texts.get(p, ("", ""))
                if role in ("user", "system") and r.summary.match(text):
                    k.summary, k.summary_position = k.summary or text, p
                    break
                if role == "assistant" or role and not HARNESS_TEXT.match(text):
                    break  # only a harness line comes before the summary: a user's "Summary: ..." later is none
        c.msgs.skip = frozenset(k.summary_position for k in c.compactions if k.summary_position is not None)
        c.msgs.users = [u for u in c.msgs.users if u[0] not in c.msgs.skip]


def _answers(con: duckdb.DuckDBPyConnection, convs: list[Conversation]) -> None:
    """The assistant's answers a Codex replacement history keeps, and the text of all it keeps (the person's
    messages and those answers): an answer is a message that ends a turn before the compaction (the next main-path
    message but a system line is the person's, or comes after the compaction; not the commentary between calls)."""
    if not convs:
        return
    msgs: dict[str, list[tuple[int, str, int | None, str | None, str]]] = {}
    for cid, pos, role, nxt, next_role, text in con.execute(
        f"""
            SELECT conversation_id, position, role, lead(position) OVER w, lead(role) OVER w,
                   forensics_scrubbed(left(content, {TEXT_MAX}))
            FROM messages WHERE on_main_path AND NOT blank AND role IN ('user', 'assistant')
                  AND conversation_id IN (SELECT unnest(?::VARCHAR[]))
            WINDOW w AS (PARTITION BY conversation_id ORDER BY position)
            ORDER BY conversation_id, position""",
        [[c.conversation_id for c in convs]],
    ).fetchall():
        msgs.setdefault(cid, []).append((pos, role, nxt, next_role, text))
    for c in convs:
        for k in c.compactions:
            if not k.kept_assistant:
                continue
            before = [m for m in msgs.get(c.conversation_id, []) if m[0] < k.position]
            k.answers = frozenset(
                p
                for p, role, nxt, nrole, _ in before
                if role == "assistant" and (nxt is None or nxt >= k.position or nrole == "user")
            )
            kept = [t for p, role, *_, t in before if role == "user" and not HARNESS_TEXT.match(t) or p in k.answers]
            k.kept_text = "\n".join(kept)[-KEPT_MAX:]


def _windows(con: duckdb.DuckDBPyConnection, convs: list[Conversation]) -> None:
    """Where the messages a compaction kept begin, when the log counts them: the ``kept_messages``-th last person
    or assistant message before it (its tool results go with it); none kept: the compaction itself."""
    if not convs:
        return
    spoken: dict[str, list[int]] = {}
    for cid, pos in con.execute(
        """
            SELECT conversation_id, position FROM messages WHERE on_main_path AND role IN ('user', 'assistant')
            AND conversation_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY 1, 2""",
        [[c.conversation_id for c in convs]],
    ).fetchall():
        spoken.setdefault(cid, []).append(pos)
    for c in convs:
        for k in c.compactions:
            if k.kept_messages is not None:
                before = [p for p in spoken.get(c.conversation_id, []) if p < k.position]
                k.window = (
                    before[-k.kept_messages]
                    if 0 < k.kept_messages <= len(before)
                    else before[0]
                    if k.kept_messages and before
                    else k.position
                )


def _detail(detail: str | None) -> dict[str, Any]:
    try:
        obj = orjson.loads(detail) if detail else None
    except orjson.JSONDecodeError:
        return {}
    return obj if isinstance(obj, dict) else {}


def _opaque(objs: list[dict[str, Any]]) -> str | None:
    """Why the summary the log holds cannot be read: ``encrypted`` (Codex's replacement history carries only an
    ``encrypted_content``, or a newer rollout's ``compaction`` item), ``empty`` (the summary field is there and
    blank); None when no detail says a summary was written."""
    if any(o.get("encrypted") is True or str(o.get("source", "")).startswith("response_item:compaction") for o in objs):
        return "encrypted"
    if any(isinstance(o.get(k), str) and not o[k].strip() for o in objs for k in ("summary", "message")):
        return "empty"
    return None


def _detail_summary(detail: str | None) -> str | None:
    """The summary a format keeps in the event itself (Codex ``compacted.message``, Continue, OpenHands, Cline)."""
    obj = _detail(detail)
    if not obj:
        return None
    for k in DETAIL_KEYS:
        v = obj.get(k)
        if isinstance(v, str) and len(v.strip()) >= 40 and not v.lower().startswith("conversation compacted"):
            return v[:SUMMARY_MAX]
    return None
