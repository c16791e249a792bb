"""Cursor chat history: ``state.vscdb`` (SQLite key/value tables ``ItemTable`` and ``cursorDiskKV``) under
``~/.config/Cursor/User`` (Linux) or ``~/Library/Application Support/Cursor/User`` (macOS), in
``globalStorage/`` and in each ``workspaceStorage/<id>/``.

Only the chat keys are read, never the others (some hold credentials). A Composer/Agent conversation is
``cursorDiskKV`` key ``composerData:<composer id>``: its messages ("bubbles") are either inline
(``conversation``, 2024) or listed in ``fullConversationHeadersOnly`` and stored one per key as
``bubbleId:<composer id>:<bubble id>`` (2025). A bubble of ``type`` 1 is the user's, of type 2 the
assistant's; an assistant bubble with ``toolFormerData`` is a tool call (``name``, ``rawArgs``,
``toolCallId``) holding its ``result`` and ``status``, so it becomes the call and a tool message;
``tokenCount`` is the bubble's usage. The older chat panel kept its tabs in ``ItemTable`` key
``workbench.panel.aichat.view.aichat.chatdata``. Empty assistant bubbles (streaming placeholders,
thinking) and the workspace index ``composer.composerData`` (the content lives in the global database) are
skipped and counted.
"""
from __future__ import annotations

import sqlite3
from typing import Any

from forensics.importers import values
from forensics.importers.model import Conversation, Log, ToolCall, Turn, Usage, listed, mapping, text_of
from forensics.importers.registry import Format, Probe
from forensics.importers.sqlite import connect_ro

CHAT_KEY = "workbench.panel.aichat.view.aichat.chatdata"
INDEX_KEY = "composer.composerData"


def read(path: str, log: Log) -> list[Conversation]:
    con = connect_ro(path)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        out = _composers(con, log) if "cursorDiskKV" in tables else []
        if "ItemTable" in tables:
            out += _chat_panel(con, log)
    except sqlite3.Error as e:
        log.error = f"cannot read the chat keys ({e})"
        return []
    finally:
        con.close()
    return out


def _range(con: sqlite3.Connection, table: str, prefix: str, limit: int = -1) -> list[tuple[str, Any]]:
    """Rows whose key starts with ``prefix`` (a range on the unique key: its index serves it)."""
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return con.execute(f"SELECT key, value FROM {table} WHERE key >= ? AND key < ? ORDER BY key LIMIT ?",
                       (prefix, end, limit)).fetchall()


def _composers(con: sqlite3.Connection, log: Log) -> list[Conversation]:
    bubbles: dict[str, dict[str, Any]] = {}
    for key, raw in _range(con, "cursorDiskKV", "bubbleId:"):
        log.rows += 1
        parts = key.split(":", 2)
        if len(parts) == 3:
            bubbles.setdefault(parts[1], {})[parts[2]] = raw
    out = []
    for key, raw in _range(con, "cursorDiskKV", "composerData:"):
        log.rows += 1
        cid = key.split(":", 1)[1]
        doc = _json(log, key, raw)
        if not isinstance(doc, dict):
            continue
        with log.guard(key, doc):
            mine = bubbles.pop(cid, {})
            if isinstance(doc.get("conversation"), list) and doc["conversation"]:
                items = doc["conversation"]
            else:
                heads = [h for h in listed(doc.get("fullConversationHeadersOnly")) if isinstance(h, dict)]
                items = [_json(log, f"bubbleId:{cid}:{h.get('bubbleId')}", mine.pop(str(h.get("bubbleId"))))
                         if str(h.get("bubbleId")) in mine else None for h in heads]
                missing = sum(b is None for b in items)
                if missing:
                    log.notes.append(f"{missing} bubbles listed by a composer are missing from the database")
            log.skip("bubble that no conversation lists", len(mine))
            turns = _turns(log, [b for b in items if isinstance(b, dict)])
            model = mapping(doc.get("modelConfig")).get("modelName") if isinstance(doc.get("modelConfig"), dict) else None
            out.append(Conversation(cid, turns, title=doc.get("name"), model=model, created=doc.get("createdAt"),
                                    updated=doc.get("lastUpdatedAt"), provider="cursor"))
    for rest in bubbles.values():
        log.skip("bubble of no composer", len(rest))
    return out


def _turns(log: Log, items: list[dict]) -> list[Turn]:
    turns: list[Turn] = []
    for b in items:
        kind = b.get("type")
        timing = b.get("timingInfo") if isinstance(b.get("timingInfo"), dict) else {}
        at = b.get("createdAt") or timing.get("clientStartTime")
        text = text_of(b.get("text") or b.get("rawText"))
        tool = b.get("toolFormerData") if isinstance(b.get("toolFormerData"), dict) else None
        if kind in (1, "user"):
            turns.append(Turn("user", text, at=at, id=b.get("bubbleId")))
            continue
        if kind not in (2, "ai"):
            log.quarantine(f"bubble {b.get('bubbleId')}", f"unknown bubble type {str(kind)[:20]!r}", b)
            continue
        if tool is None and not text.strip():
            log.skip("empty assistant bubble")
            continue
        turn = Turn("assistant", text, at=at, id=b.get("bubbleId"))
        tokens = b.get("tokenCount") if isinstance(b.get("tokenCount"), dict) else {}
        if tokens.get("inputTokens") or tokens.get("outputTokens"):
            turn.usage.append(Usage(input_tokens=tokens.get("inputTokens"), output_tokens=tokens.get("outputTokens"),
                                    model=mapping(b.get("modelInfo")).get("modelName")
                                    if isinstance(b.get("modelInfo"), dict) else None))
        turns.append(turn)
        if tool is not None:
            cid = tool.get("toolCallId") or f"{b.get('bubbleId')}:call"
            turn.calls.append(ToolCall(tool.get("name") or tool.get("tool"), tool.get("rawArgs") or tool.get("params"),
                                       cid))
            if tool.get("result") is not None or tool.get("status") in ("error", "completed"):
                turns.append(Turn("tool", _unquote(tool.get("result")), answers=cid, at=at,
                                  is_error=tool.get("status") == "error" or None, id=f"{b.get('bubbleId')}:result"))
    return turns


def _chat_panel(con: sqlite3.Connection, log: Log) -> list[Conversation]:
    out = []
    for key, raw in con.execute("SELECT key, value FROM ItemTable WHERE key IN (?, ?)", (CHAT_KEY, INDEX_KEY)):
        log.rows += 1
        if key == INDEX_KEY:
            log.skip("composer.composerData (the index of composers stored in the global database)")
            continue
        doc = _json(log, key, raw)
        for i, tab in enumerate(listed(doc.get("tabs")) if isinstance(doc, dict) else []):
            if not isinstance(tab, dict):
                continue
            with log.guard(f"{key}.tabs[{i}]", tab):
                items = [{**b, "type": 1 if b.get("type") == "user" else 2 if b.get("type") == "ai" else b.get("type")}
                         for b in listed(tab.get("bubbles")) if isinstance(b, dict)]
                out.append(Conversation(str(tab.get("tabId") or f"tab {i}"), _turns(log, items),
                                        title=tab.get("chatTitle"), created=tab.get("lastSendTime"), provider="cursor"))
    return out


def _json(log: Log, key: str, raw: Any) -> Any:
    try:
        return values.loads(raw if raw is not None else b"null")
    except ValueError as e:
        log.quarantine(key, values.json_reason(e), raw if isinstance(raw, (bytes, str)) else b"")
        return None


def _unquote(v: Any) -> str:
    """Results are stored as JSON text; a string result as its JSON."""
    if isinstance(v, str):
        try:
            d = values.loads(v)
        except ValueError:
            return v
        if isinstance(d, dict) and len(d) == 1:
            d = next(iter(d.values()))
        return d if isinstance(d, str) else text_of(d)
    return text_of(v)


def _sniff(probe: Probe) -> bool:
    tables = probe.tables
    if "cursorDiskKV" not in tables and "ItemTable" not in tables:
        return False
    try:
        con = connect_ro(probe.path)
        try:
            if "cursorDiskKV" in tables and _range(con, "cursorDiskKV", "composerData:", limit=1):
                return True
            return "ItemTable" in tables and con.execute(
                "SELECT 1 FROM ItemTable WHERE key IN (?, ?) LIMIT 1", (CHAT_KEY, INDEX_KEY)).fetchone() is not None
        finally:
            con.close()
    except sqlite3.Error:
        return False


FORMAT = Format("cursor", "Cursor state.vscdb (composerData / bubbleId keys, the older aichat chat data)", _sniff,
                read=read, suffixes=(".vscdb",), claims=("*.vscdb",))
