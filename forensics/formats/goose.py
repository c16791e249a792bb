"""Goose sessions: the SQLite store ``~/.local/share/goose/sessions/sessions.db`` (Goose 1.10 and later) and the
JSONL session files it replaced (``~/.local/share/goose/sessions/<name>.jsonl``, 2025).

The store's ``sessions`` table (``id``, ``name``/``description``, ``working_dir``, ``created_at``) and
``messages`` (``session_id``, ``role``, ``content_json``, ``created_timestamp``, ``metadata_json``); a JSONL file
is a metadata line (``working_dir``, ``description``, ``message_count``, token totals) and one message a line
(``role``, ``created``, ``content``). A message's content is a list of typed blocks (crates/goose/src/
conversation/message.rs):

* ``text``: the message's text (a user message of text is the person's);
* ``toolRequest`` {``id``, ``toolCall`` {``status``, ``value`` {``name``, ``arguments``}}}: a call;
* ``toolResponse`` {``id``, ``toolResult`` {``status``, ``value``}}: its result, a tool message (an error when the
  status says so or the value's ``isError``); Goose writes results on the user role;
* ``thinking``, ``redactedThinking``, ``image``, notifications and confirmations: ignored and counted.

Token counts are the session's totals only (no figure per response): not read. Seen on a real store (Goose
1.x, 2026, one session without messages) and built from the source; docs/formats.md.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe, connect_ro
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, listed, mapping, text_of

IGNORED = (
    "thinking",
    "redactedThinking",
    "image",
    "systemNotification",
    "toolConfirmationRequest",
    "frontendToolRequest",
    "contextLengthExceeded",
    "summarizationRequested",
)


def read(path: str, log: Log) -> list[Conversation]:
    if Path(path).read_bytes()[:16] == b"SQLite format 3\x00":
        return _store(path, log)
    meta: dict[str, Any] = {}
    msgs: list[tuple[str, dict[str, Any]]] = []
    for n, _raw, obj in log.json_lines(Path(path).read_bytes()):
        if "role" in obj and "content" in obj:
            msgs.append((f"{log.name}:{n}", obj))
        elif not msgs and not meta:
            meta = obj
            log.skip("session metadata")
        else:
            log.quarantine(f"{log.name}:{n}", "not a Goose message (role and content)", _raw)
    if not meta and not msgs:
        log.error = "no line is a Goose session record"
        return []
    return [_conversation(log, Path(path).stem, meta.get("description"), None, msgs)]


def _store(path: str, log: Log) -> list[Conversation]:
    con = connect_ro(path)
    try:
        cols = {r[1] for r in con.execute("PRAGMA table_info(sessions)")}
        title = "coalesce(nullif(name, ''), nullif(description, ''))" if "name" in cols else "description"
        sessions = con.execute(f"SELECT id, {title}, created_at FROM sessions ORDER BY created_at, id").fetchall()
        rows = con.execute(
            "SELECT id, session_id, role, content_json, created_timestamp FROM messages "
            "ORDER BY session_id, created_timestamp, id"
        ).fetchall()
    except (sqlite3.Error, UnicodeDecodeError) as e:  # a damaged schema's message is not always UTF-8
        log.error = f"cannot read the sessions and messages tables ({e})"
        return []
    finally:
        con.close()
    log.rows += len(sessions) + len(rows)
    log.skip("session row (-> conversations)", len(sessions))
    by_session: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for mid, sid, role, content, created in rows:
        where = f"messages:{mid}"
        try:
            blocks = values.loads(content)
        except (orjson.JSONDecodeError, ValueError, TypeError):
            log.quarantine(where, "content_json is not JSON", content if isinstance(content, (str, bytes)) else "")
            continue
        by_session.setdefault(str(sid), []).append((where, {"role": role, "content": blocks, "created": created}))
    out = [_conversation(log, str(sid), t, created, by_session.pop(str(sid), [])) for sid, t, created in sessions]
    out += [_conversation(log, sid, None, None, m) for sid, m in by_session.items()]
    return out


def _conversation(log: Log, sid: str, title: Any, created: Any, msgs: list[tuple[str, dict[str, Any]]]) -> Conversation:
    turns: list[Turn] = []
    for where, m in msgs:
        with log.guard(where, m):
            role, at = m.get("role"), m.get("created")
            if role not in ("user", "assistant"):
                log.quarantine(where, f"unknown message role {str(role)[:40]!r}", m)
                continue
            texts, calls, results = [], [], []
            for b in listed(m.get("content")):
                kind = mapping(b).get("type")
                if kind == "text" and isinstance(b.get("text"), str):
                    texts.append(b["text"])
                elif kind == "toolRequest":
                    value = mapping(mapping(b.get("toolCall")).get("value"))
                    calls.append(ToolCall(value.get("name"), value.get("arguments"), b.get("id")))
                elif kind == "toolResponse":
                    res = mapping(b.get("toolResult"))
                    v = res.get("value")
                    body = v.get("content") if isinstance(v, dict) else v
                    failed = res.get("status") == "error" or (isinstance(v, dict) and v.get("isError") is True)
                    err = res.get("error")
                    said = text_of(body, kinds=None) if body is not None else err if isinstance(err, str) else ""
                    results.append(
                        Turn("tool", said, answers=b.get("id"), at=at, is_error=failed, origin="tool_result")
                    )
                else:
                    log.ignore(f"{str(kind)[:40]} block")
            if texts or calls or not results:
                turns.append(
                    Turn(
                        role,
                        "\n".join(texts),
                        calls if role == "assistant" else [],
                        at=at,
                        origin="person" if role == "user" and texts else None,
                    )
                )
            turns.extend(results)
    return Conversation(
        sid, turns, title=title if isinstance(title, str) and title else None, provider="goose", created=created
    )


def _sniff(probe: Probe) -> bool:
    if probe.is_sqlite:
        t = probe.tables
        return {"session_id", "role", "content_json"} <= set(t.get("messages") or []) and "working_dir" in (
            t.get("sessions") or []
        )
    recs = [r for r in probe.records if isinstance(r, dict)]
    if not recs:
        return False
    first = recs[0]
    if "working_dir" in first and ("message_count" in first or "description" in first):
        return True
    return all("role" in r and "created" in r and isinstance(r.get("content"), list) for r in recs) and any(
        mapping(b).get("type") in ("toolRequest", "toolResponse") for r in recs for b in r["content"]
    )


FORMAT = Format(
    "goose",
    "Goose sessions: sessions.db (sessions and messages tables) and the 2025 JSONL session files",
    _sniff,
    read=read,
    suffixes=(".db", ".jsonl"),
    names=("sessions.db",),
)
