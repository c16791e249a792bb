"""Crush (charmbracelet/crush) sessions: the SQLite store ``crush.db`` it keeps in the project's ``.crush/`` folder.

Read from Crush's own store (``internal/db`` migrations, ``internal/message/message.go`` and ``content.go``):

* ``sessions`` (``id``, ``parent_session_id``, ``title``, ``message_count``, ``prompt_tokens``,
  ``completion_tokens``, ``cost``, ``summary_message_id``, ``created_at``): one conversation per row; a session
  with a parent is a sub-agent's (its task tool) or a title run, linked to it;
* ``messages`` (``id``, ``session_id``, ``role`` user/assistant/tool/system, ``parts``, ``model``, ``provider``,
  ``created_at``): ``parts`` is a JSON list of ``{"type", "data"}``: ``text`` {text}, ``reasoning`` (left out),
  ``image_url``, ``binary`` (left out, counted), ``tool_call`` {id, name, input (JSON text)}, ``tool_result``
  {tool_call_id, name, content, is_error}, ``finish`` {reason, message, details}: a reply that ended in
  ``error`` with no text keeps the error as its text;
* ``summary_message_id`` names the message holding the session's summary (Crush's summarize): a compaction event
  before it;
* ``files`` (snapshots of the files the agent edited) hold no message: counted. Tokens are only the session's
  totals, not per response: none are read.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe, Side, connect_ro
from forensics.formats.kit.model import (
    Conversation,
    Event,
    Log,
    ToolCall,
    Turn,
    listed,
    mapping,
)


def read(path: str, log: Log) -> list[Conversation]:
    con = connect_ro(path)
    try:
        cols = {r[1] for r in con.execute("PRAGMA table_info(sessions)")}
        summary = "summary_message_id" if "summary_message_id" in cols else "NULL"  # a later migration's column
        sessions = con.execute(
            f"SELECT id, parent_session_id, title, {summary}, created_at, updated_at FROM sessions "
            "ORDER BY created_at, id"
        ).fetchall()
        rows = con.execute(
            "SELECT id, session_id, role, parts, model, created_at FROM messages ORDER BY session_id, created_at, rowid"
        ).fetchall()
        files = con.execute("SELECT count(*) FROM files").fetchone()[0] if _has(con, "files") else 0
    except (sqlite3.Error, UnicodeDecodeError) as e:
        log.error = f"cannot read the sessions and messages tables ({e})"
        return []
    finally:
        con.close()
    log.rows += len(sessions) + len(rows) + files
    log.skip("session row (-> conversations)", len(sessions))
    log.skip("file snapshot", files)
    by_session: dict[str, list[tuple[str, str, Any, Any, Any, list[Any]]]] = {}
    for mid, sid, role, parts, model, created in rows:
        where = f"messages:{mid}"
        try:
            decoded = values.loads(parts)
        except (orjson.JSONDecodeError, ValueError, TypeError):
            log.quarantine(where, "parts is not JSON", parts if isinstance(parts, (str, bytes)) else "")
            continue
        by_session.setdefault(str(sid), []).append((where, str(mid), role, model, created, listed(decoded)))
    out = []
    for sid, parent, title, summary, created, updated in sessions:
        out.append(_conversation(log, str(sid), by_session.pop(str(sid), []), summary, title, parent, created, updated))
    for sid, msgs in by_session.items():  # messages of a session row that is gone
        out.append(_conversation(log, sid, msgs, None, None, None, None, None))
    return out


def _has(con: sqlite3.Connection, table: str) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None


def _conversation(
    log: Log,
    sid: str,
    msgs: list[tuple[str, str, Any, Any, Any, list[Any]]],
    summary: Any,
    title: Any,
    parent: Any,
    created: Any,
    updated: Any,
) -> Conversation:
    turns: list[Turn] = []
    events: list[Event] = []
    model = None
    for where, mid, role, m, at, parts in msgs:
        with log.guard(where, parts):
            if role not in ("user", "assistant", "tool", "system"):
                log.quarantine(where, f"unknown message role {str(role)[:40]!r}", parts)
                continue
            if mid == summary:
                events.append(Event("compaction", len(turns), trigger="summarize"))
            texts: list[str] = []
            calls: list[ToolCall] = []
            results: list[Turn] = []
            failure = None
            for p in parts:
                kind, data = mapping(p).get("type"), mapping(mapping(p).get("data"))
                if kind == "text" and isinstance(data.get("text"), str):
                    texts.append(data["text"])
                elif kind == "tool_call":
                    calls.append(ToolCall(data.get("name"), data.get("input"), data.get("id")))
                elif kind == "tool_result":
                    results.append(
                        Turn(
                            "tool",
                            str(data.get("content") or ""),
                            answers=data.get("tool_call_id"),
                            is_error=data["is_error"] if isinstance(data.get("is_error"), bool) else None,
                            at=at,
                            id=f"{mid}:{len(results)}",
                            origin="tool_result",
                            tool=data.get("name") or None,
                        )
                    )
                elif kind == "finish":
                    if data.get("reason") == "error":
                        failure = " ".join(str(data[k]) for k in ("message", "details") if data.get(k))
                else:
                    log.ignore(f"{str(kind)[:40]} part")
            if role == "tool":
                turns.extend(results)
                continue
            text = "\n".join(texts)
            if role == "assistant" and not text and not calls and failure:
                text = f"[error] {failure}"
            model = model or (m if role == "assistant" and isinstance(m, str) and m else None)
            turns.append(
                Turn(
                    role,
                    text,
                    calls if role == "assistant" else [],
                    at=at,
                    id=mid,
                    origin="person" if role == "user" else "harness" if role == "system" else None,
                )
            )
            turns.extend(results)  # a tool result on another role (not written by Crush today)
    return Conversation(
        sid,
        turns,
        title=title if isinstance(title, str) and title else None,
        provider="crush",
        model=model,
        created=created,
        updated=updated,
        parent=str(parent) if parent else None,
        events=events,
    )


def _sniff(probe: Probe) -> bool:
    if not probe.is_sqlite:
        return False
    t = probe.tables
    return {"session_id", "role", "parts"} <= set(t.get("messages") or []) and {
        "parent_session_id",
        "message_count",
    } <= set(t.get("sessions") or [])


FORMAT = Format(
    "crush",
    "Crush sessions, the project's .crush/crush.db (sessions and messages tables: text, tool calls and results, "
    "sub-agent sessions)",
    _sniff,
    read=read,
    suffixes=(".db",),
    names=("crush.db",),
    claims=("crush.db",),
    sides=(
        Side("crush.db-wal", "crush.db", "SQLite's write-ahead log (read by SQLite with the store)", read=False),
        Side("crush.db-shm", "crush.db", "SQLite's shared memory index", read=False),
    ),
)
