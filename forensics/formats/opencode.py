"""OpenCode sessions: the SQLite store ``~/.local/share/opencode/opencode.db`` (OpenCode 1.2 and later, 2026), and
``opencode export <session>`` files (one session as JSON).

The store's tables ``session`` (``id``, ``parent_id``: the session that spawned a sub-agent's, ``title``,
``version``, ``time_created``), ``message`` (``id``, ``session_id``, ``time_created``, ``data``) and ``part``
(``id``, ``message_id``, ``session_id``, ``data``) hold JSON in ``data`` (packages/opencode/src/session/
message-v2.ts). An export is ``{"info": <session>, "messages": [{"info": <message>, "parts": [<part>]}]}``, the
same objects. One conversation per session, its messages in the order they were created:

* a ``user`` message is the person's turn: its ``text`` parts, less those marked ``synthetic`` (text OpenCode
  adds itself, kept as a harness turn); ``file`` parts are named in the text;
* an ``assistant`` message is one turn: its ``text`` parts, and a call for each ``tool`` part (``callID``,
  ``tool``, ``state.input``); a tool part whose ``state.status`` is ``completed`` or ``error`` also gives the
  result (``state.output`` or ``state.error``), right after the message: an error when the status says so or,
  for the bash tool (``completed`` whatever the command's exit), when ``state.metadata.exit`` is not 0;
  ``reasoning``, ``step-start``, ``step-finish``, ``snapshot``, ``patch`` and ``agent`` parts are folded into it
  (skipped and counted);
* tokens are the assistant message's ``tokens``: ``input`` (without the cache), ``output`` + ``reasoning``,
  ``cache.read``, ``cache.write``, with its ``modelID``; a ``compaction`` part (the context was summarized) is an
  event.

Every row read is a message, a result, or skipped and counted; the store is opened read-only (its write-ahead
log, when present, is read by SQLite). The store's other tables (accounts, permissions, events, todos) hold no
conversation and are never read. Seen on a real store of OpenCode 1.17 (2026-06); docs/formats.md.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe, connect_ro
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, mapping

FOLDED = ("reasoning", "step-start", "step-finish", "snapshot", "patch", "agent", "retry", "subtask")
DONE = ("completed", "error")


def read(path: str, log: Log) -> list[Conversation]:
    if Path(path).read_bytes()[:16] == b"SQLite format 3\x00":
        return _store(path, log)
    doc = log.json_document(Path(path).read_bytes())
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        if doc is not None:
            log.error = "not an OpenCode export (an object with info and messages)"
        return []
    info = mapping(doc.get("info"))
    msgs = []
    for _, where, m in log.objects(doc["messages"], f"{log.name}.messages", "message"):
        with log.guard(where, m):
            parts = [(f"{where}.parts[{k}]", p) for k, p in enumerate(m.get("parts") or [])]
            msgs.append((where, mapping(m.get("info")), parts))
    return [_conversation(log, info, msgs)]


def _store(path: str, log: Log) -> list[Conversation]:
    con = connect_ro(path)
    try:
        sessions = con.execute(
            "SELECT id, parent_id, title, version, time_created FROM session ORDER BY time_created, id"
        ).fetchall()
        rows = con.execute("SELECT id, session_id, data FROM message ORDER BY session_id, time_created, id").fetchall()
        part_rows = con.execute("SELECT id, message_id, data FROM part ORDER BY message_id, id").fetchall()
    except (sqlite3.Error, UnicodeDecodeError) as e:  # a damaged schema's message is not always UTF-8
        log.error = f"cannot read the session, message and part tables ({e})"
        return []
    finally:
        con.close()
    log.rows += len(sessions) + len(rows) + len(part_rows)
    log.skip("session row (-> conversations)", len(sessions))
    parts: dict[str, list[tuple[str, Any]]] = {}
    for pid, mid, data in part_rows:
        parts.setdefault(mid, []).append((f"part:{pid}", _json(log, f"part:{pid}", data)))
    by_session: dict[str, list[tuple[str, dict[str, Any], list[tuple[str, Any]]]]] = {}
    for mid, sid, data in rows:
        m = _json(log, f"message:{mid}", data)
        if m is None:
            log.skip("part of a quarantined message", len(parts.pop(mid, [])))
            continue
        m.setdefault("id", mid)
        by_session.setdefault(sid, []).append((f"message:{mid}", m, parts.pop(mid, [])))
    for mid, orphans in parts.items():
        for where, p in orphans:
            log.quarantine(where, f"part of no message ({mid[:40]})", p if p is not None else b"")
    out = []
    for sid, parent, title, version, created in sessions:
        info = {"id": sid, "parentID": parent, "title": title, "version": version, "time": {"created": created}}
        out.append(_conversation(log, info, by_session.pop(sid, [])))
    for sid, msgs in by_session.items():  # messages of a session the store no longer lists
        out.append(_conversation(log, {"id": sid}, msgs))
    return out


def _json(log: Log, where: str, data: Any) -> dict[str, Any] | None:
    try:
        v = values.loads(data)
    except (orjson.JSONDecodeError, ValueError, TypeError):
        log.quarantine(where, "data is not JSON", data if isinstance(data, (str, bytes)) else repr(data))
        return None
    if not isinstance(v, dict):
        log.quarantine(where, "data is not a JSON object", v)
        return None
    return v


def _conversation(
    log: Log, info: dict[str, Any], msgs: Iterable[tuple[str, dict[str, Any], list[tuple[str, Any]]]]
) -> Conversation:
    turns: list[Turn] = []
    events: list[Event] = []
    model = None
    for where, m, parts in msgs:
        with log.guard(where, m):
            role, at = m.get("role"), mapping(m.get("time")).get("created")
            good = []
            for pw, p in parts:
                if isinstance(p, dict) and isinstance(p.get("type"), str):
                    good.append(p)
                elif p is not None:
                    log.quarantine(pw, "part is not an object with a type", p)
            if role == "user":
                turns.extend(_user(log, m, good, at, events, len(turns)))
            elif role == "assistant":
                model = m.get("modelID") if isinstance(m.get("modelID"), str) else model
                turns.extend(_assistant(log, m, good, at))
            else:
                log.quarantine(where, f"unknown message role {str(role)[:40]!r}", m)
                log.skip("part of a quarantined message", len(good))
    t = mapping(info.get("time"))
    parent = info.get("parentID") if isinstance(info.get("parentID"), str) else None
    return Conversation(
        str(info.get("id") or log.name),
        turns,
        title=info.get("title"),
        provider="opencode",
        model=model,
        created=t.get("created"),
        updated=t.get("updated"),
        parent=parent,
        events=events,
    )


def _user(log: Log, m: dict[str, Any], parts: list[dict[str, Any]], at: Any, events: list[Event], n: int) -> list[Turn]:
    said: list[str] = []
    added: list[str] = []
    files: list[str] = []
    for p in parts:
        kind = p["type"]
        if kind == "text" and isinstance(p.get("text"), str):
            (added if p.get("synthetic") else said).append(p["text"])
        elif kind == "file":
            files.append(str(p.get("filename") or p.get("url") or "file"))
        elif kind == "compaction":
            events.append(
                Event("compaction", n, trigger="auto" if p.get("auto") else "manual", detail={"message": m.get("id")})
            )
        else:
            log.ignore(f"user part {kind[:40]}")
        log.skip(f"part:{kind[:40]} (in its message)")
    text = "\n".join(said + [f"[file: {f}]" for f in files])
    out = [Turn("user", text, at=at, id=m.get("id"), origin="person" if said or files else "harness")]
    if added and (said or files):
        out.append(Turn("user", "\n".join(added), at=at, id=f"{m.get('id')}:synthetic", origin="harness"))
    elif added:
        out[0].text = "\n".join(added)
    return out


def _assistant(log: Log, m: dict[str, Any], parts: list[dict[str, Any]], at: Any) -> list[Turn]:
    texts, calls, results = [], [], []
    for p in parts:
        kind = p["type"]
        if kind == "tool":
            state = mapping(p.get("state"))
            cid = p.get("callID") if isinstance(p.get("callID"), str) else p.get("id")
            calls.append(ToolCall(p.get("tool"), state.get("input"), cid))
            status = state.get("status")
            if status in DONE:
                out = state.get("output") if status == "completed" else state.get("error")
                code = mapping(state.get("metadata")).get("exit")  # the bash tool: completed, whatever its exit
                failed = status == "error" or (isinstance(code, int) and not isinstance(code, bool) and code != 0)
                results.append(
                    Turn(
                        "tool",
                        out if isinstance(out, str) else "" if out is None else str(out),
                        answers=cid,
                        is_error=failed,
                        at=mapping(state.get("time")).get("end") or at,
                        id=p.get("id"),
                        origin="tool_result",
                    )
                )
            else:
                log.skip(f"part:tool ({str(status)[:20]}: no result)")
            continue
        if kind == "text" and isinstance(p.get("text"), str):
            texts.append(p["text"])
        elif kind not in FOLDED:
            log.ignore(f"assistant part {kind[:40]}")
        log.skip(f"part:{kind[:40]} (in its message)")
    turn = Turn("assistant", "\n".join(texts), calls, at=at, id=m.get("id"))
    tok = mapping(m.get("tokens"))
    if tok:
        cache = mapping(tok.get("cache"))
        out_tokens = [tok.get("output"), tok.get("reasoning")]
        turn.usage.append(
            Usage(
                input_tokens=tok.get("input"),
                output_tokens=sum(v for v in out_tokens if isinstance(v, int)),
                cache_read_input_tokens=cache.get("read"),
                cache_creation_input_tokens=cache.get("write"),
                message_id=m.get("id"),
                model=m.get("modelID"),
            )
        )
    if isinstance(m.get("error"), dict) and not texts and not calls:
        turn.text = str(mapping(m["error"].get("data")).get("message") or m["error"].get("name") or "")
    return [turn, *results]


def _sniff(probe: Probe) -> bool:
    if probe.is_sqlite:
        t = probe.tables
        return (
            {"id", "session_id", "data"} <= set(t.get("message") or [])
            and {"id", "message_id", "data"} <= set(t.get("part") or [])
            and "slug" in (t.get("session") or [])
        )
    doc = probe.document
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list) and isinstance(doc.get("info"), dict):
        first = next(iter(doc["messages"]), None)
        return (
            isinstance(first, dict)
            and isinstance(first.get("parts"), list)
            and str(mapping(first.get("info")).get("id", "")).startswith("msg_")
        )
    # an export longer than the head (most real ones: 150 KB to 4 MB): the session's info, then its messages
    return doc is None and bool(EXPORT_HEAD.match(probe.head))


# `opencode export` (JSON.stringify with two-space indent): the session's info opening with its ses_ id, then
# the first message's info (whose own msg_ id can come after a summary of diffs longer than the head)
EXPORT_HEAD = re.compile(
    rb'\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_[^"]*"[^\[]*?"messages"\s*:\s*\[\s*\{\s*"info"', re.DOTALL
)


FORMAT = Format(
    "opencode",
    "OpenCode sessions: the opencode.db store (session, message and part tables) and `opencode export` JSON",
    _sniff,
    read=read,
    suffixes=(".db", ".json"),
    names=("opencode.db",),
    claims=("opencode.db",),
)
