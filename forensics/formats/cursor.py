"""Cursor chat history: ``state.vscdb`` (SQLite key/value tables ``ItemTable`` and ``cursorDiskKV``) under
``~/.config/Cursor/User`` (Linux) or ``~/Library/Application Support/Cursor/User`` (macOS), in
``globalStorage/`` and in each ``workspaceStorage/<id>/``.

Only the chat keys are read, never the others (some hold credentials). Every place a version kept them:

* ``cursorDiskKV`` ``composerData:<composer id>`` (global database, 2024-26): a Composer/Agent conversation,
  its messages ("bubbles") inline (``conversation``, 2024), in ``conversationMap``, or listed in
  ``fullConversationHeadersOnly`` and stored one per key as ``bubbleId:<composer id>:<bubble id>`` (2025-26).
* ``ItemTable`` ``workbench.panel.aichat.view.aichat.chatdata`` (workspace, 2023-24): the chat panel's tabs.
* ``ItemTable`` ``composer.composerData`` (workspace): composers kept inline with their ``conversation``
  (late 2024); from 2025 only their ids, names and times, the messages being in the global database (said
  in the run's note).
* ``ItemTable`` ``aiService.prompts`` (workspace): the prompts the person typed (``text``,
  ``commandType``), without replies; those no conversation holds (above, or a composer this workspace lists
  whose messages are in ``User/globalStorage/state.vscdb``, read for that only) become one conversation of
  the person's turns, timed by ``aiService.generations`` (``unixMs``, ``textDescription``) where the texts match.

A conversation kept in two places (the same id) is read once. A bubble of ``type`` 1 is the user's, of type
2 the assistant's; an assistant bubble with ``toolFormerData`` is a tool call (``name``, ``rawArgs``,
``toolCallId``) holding its ``result`` and ``status``, so it becomes the call and a tool message;
``tokenCount`` is the bubble's usage. Empty assistant bubbles (streaming placeholders, thinking) are skipped
and counted. A newer layout's unknown keys are not read; an unknown bubble type is quarantined.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe, connect_ro
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, Usage, listed, mapping, text_of

CHAT_KEY = "workbench.panel.aichat.view.aichat.chatdata"
INDEX_KEY = "composer.composerData"
PROMPTS_KEY, GENERATIONS_KEY = "aiService.prompts", "aiService.generations"
KEYS = (CHAT_KEY, INDEX_KEY, PROMPTS_KEY, GENERATIONS_KEY)


def read(path: str, log: Log) -> list[Conversation]:
    con = connect_ro(path)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in tables & {"cursorDiskKV", "ItemTable"}:  # a key no range finds: counted, not read
            (odd,) = con.execute(f"SELECT count(*) FROM {table} WHERE typeof(key) != 'text'").fetchone()
            log.rows += odd
            log.skip(f"{table} key that is not text (a number, a blob or NULL)", odd)
        out = _composers(con, log) if "cursorDiskKV" in tables else []
        if "ItemTable" in tables:
            out += _item_table(con, log, {c.id for c in out}, Path(path))
        if not log.rows:
            log.notes.append("no chat key in this database (its other keys, settings and credentials, are not read)")
    except sqlite3.Error as e:
        log.error = f"cannot read the chat keys ({e})"
        return []
    finally:
        con.close()
    return out


def _range(con: sqlite3.Connection, table: str, prefix: str, limit: int = -1) -> sqlite3.Cursor:
    """Rows (key, value) whose key starts with ``prefix``, as a cursor (a range on the unique key: its index
    serves it, and a global database of GBs is never read at once)."""
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return con.execute(
        f"SELECT key, value FROM {table} WHERE key >= ? AND key < ? ORDER BY key LIMIT ?", (prefix, end, limit)
    )


def _composers(con: sqlite3.Connection, log: Log) -> list[Conversation]:
    """Each composer with its own bubbles (read per composer, by key range); bubbles no composer owns are
    counted."""
    (total,) = con.execute(
        "SELECT count(*) FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;'"
    ).fetchone()
    owned = 0
    out: list[Conversation] = []
    seen: set[str] = set()
    for key, raw in _range(con, "cursorDiskKV", "composerData:"):
        log.rows += 1
        cid = key.split(":", 1)[1]
        doc = _json(log, key, raw)
        if not isinstance(doc, dict):
            continue
        mine = {k.split(":", 2)[2]: v for k, v in _range(con, "cursorDiskKV", f"bubbleId:{cid}:")}
        owned += len(mine)
        log.rows += len(mine)
        with log.guard(key, doc):
            if isinstance(doc.get("conversation"), list) and doc["conversation"]:
                items = doc["conversation"]
            else:
                heads = [h for h in listed(doc.get("fullConversationHeadersOnly")) if isinstance(h, dict)]
                inline = mapping(doc.get("conversationMap"))  # bubbles kept in the composer itself (2025 builds)
                items = [
                    _json(log, f"bubbleId:{cid}:{h.get('bubbleId')}", mine.pop(str(h.get("bubbleId"))))
                    if str(h.get("bubbleId")) in mine
                    else inline.get(str(h.get("bubbleId")))
                    for h in heads
                ]
                missing = sum(b is None for b in items)
                if missing:
                    log.notes.append(f"{missing} bubbles listed by a composer are missing from the database")
            log.skip("bubble that no conversation lists", len(mine))
            turns = _turns(log, [b for b in items if isinstance(b, dict)])
            model = (
                mapping(doc.get("modelConfig")).get("modelName") if isinstance(doc.get("modelConfig"), dict) else None
            )
            _keep(
                log,
                out,
                seen,
                Conversation(
                    cid,
                    turns,
                    title=doc.get("name"),
                    model=model,
                    created=doc.get("createdAt"),
                    updated=doc.get("lastUpdatedAt"),
                    provider="cursor",
                ),
            )
    log.rows += total - owned
    log.skip("bubble of no composer", total - owned)
    return out


def _turns(log: Log, items: list[dict[str, Any]]) -> list[Turn]:
    turns: list[Turn] = []
    for b in items:
        kind = b.get("type")
        timing = mapping(b.get("timingInfo"))
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
        tokens = mapping(b.get("tokenCount"))
        if tokens.get("inputTokens") or tokens.get("outputTokens"):
            turn.usage.append(
                Usage(
                    input_tokens=tokens.get("inputTokens"),
                    output_tokens=tokens.get("outputTokens"),
                    model=mapping(b.get("modelInfo")).get("modelName")
                    if isinstance(b.get("modelInfo"), dict)
                    else None,
                )
            )
        turns.append(turn)
        if tool is not None:
            cid = tool.get("toolCallId") or f"{b.get('bubbleId')}:call"
            turn.calls.append(
                ToolCall(tool.get("name") or tool.get("tool"), tool.get("rawArgs") or tool.get("params"), cid)
            )
            if tool.get("result") is not None or tool.get("status") in ("error", "completed"):
                turns.append(
                    Turn(
                        "tool",
                        _unquote(tool.get("result")),
                        answers=cid,
                        at=at,
                        is_error=tool.get("status") == "error" or None,
                        id=f"{b.get('bubbleId')}:result",
                    )
                )
    return turns


def _item_table(con: sqlite3.Connection, log: Log, seen: set[str], path: Path) -> list[Conversation]:
    """The workspace keys: the chat panel's tabs, composers kept inline in ``composer.composerData`` (2024
    builds; later ones list only ids there, their messages being in the global database), and the prompt
    history ``aiService.prompts`` (the person's words; replies are not kept with it)."""
    rows = dict(con.execute(f"SELECT key, value FROM ItemTable WHERE key IN ({', '.join('?' * len(KEYS))})", KEYS))
    out: list[Conversation] = []
    for key in KEYS:
        if key in rows:
            log.rows += 1
    doc = _json(log, CHAT_KEY, rows[CHAT_KEY]) if CHAT_KEY in rows else None
    for i, tab in enumerate(listed(doc.get("tabs")) if isinstance(doc, dict) else []):
        if not isinstance(tab, dict):
            continue
        with log.guard(f"{CHAT_KEY}.tabs[{i}]", tab):
            items = [
                {**b, "type": 1 if b.get("type") == "user" else 2 if b.get("type") == "ai" else b.get("type")}
                for b in listed(tab.get("bubbles"))
                if isinstance(b, dict)
            ]
            _keep(
                log,
                out,
                seen,
                Conversation(
                    str(tab.get("tabId") or f"tab {i}"),
                    _turns(log, items),
                    title=tab.get("chatTitle"),
                    created=tab.get("lastSendTime"),
                    provider="cursor",
                ),
            )
    index = _json(log, INDEX_KEY, rows[INDEX_KEY]) if INDEX_KEY in rows else None
    elsewhere: list[str] = []  # composers whose messages are in the global database
    for i, c in enumerate(listed(index.get("allComposers")) if isinstance(index, dict) else []):
        if not isinstance(c, dict):
            continue
        if not (isinstance(c.get("conversation"), list) and c["conversation"]):
            if c.get("composerId") not in seen:
                elsewhere.append(str(c.get("composerId")))
            continue
        with log.guard(f"{INDEX_KEY}.allComposers[{i}]", c):
            _keep(
                log,
                out,
                seen,
                Conversation(
                    str(c.get("composerId") or f"composer {i}"),
                    _turns(log, [b for b in c["conversation"] if isinstance(b, dict)]),
                    title=c.get("name"),
                    created=c.get("createdAt"),
                    updated=c.get("lastUpdatedAt"),
                    provider="cursor",
                ),
            )
    if elsewhere:
        log.notes.append(
            f"{len(elsewhere)} composers listed in {INDEX_KEY} keep their messages in the global "
            "database (globalStorage/state.vscdb): import that file for them"
        )
    said = {t.text.strip() for c in out for t in c.turns if t.role == "user"} | _said_elsewhere(log, path, elsewhere)
    prompts = _prompts(log, rows, said)
    if prompts is not None:
        _keep(log, out, seen, prompts)
    return out


def _said_elsewhere(log: Log, path: Path, composers: list[str]) -> set[str]:
    """What the person said in this workspace's composers whose messages are in the global database beside it
    (``User/globalStorage/state.vscdb``, read only for that): their prompts are imported with that file."""
    other = path.parent.parent.parent / "globalStorage" / "state.vscdb"
    if not composers or path.parent.parent.name != "workspaceStorage" or not other.is_file():
        return set()
    said: set[str] = set()
    try:
        con = connect_ro(other)
        try:
            for cid in composers:
                for _, raw in _range(con, "cursorDiskKV", f"bubbleId:{cid}:"):
                    try:
                        b = values.loads(raw or b"null")
                    except ValueError:
                        continue  # that file's own import quarantines it
                    if isinstance(b, dict) and b.get("type") == 1 and isinstance(b.get("text"), str):
                        said.add(b["text"].strip())
        finally:
            con.close()
    except sqlite3.Error:
        return set()
    log.notes.append(
        "read with it: ../../globalStorage/state.vscdb (the person's words in this workspace's "
        "composers, so that its prompts are not counted twice)"
    )
    return said


def _prompts(log: Log, rows: dict[str, Any], known: set[str]) -> Conversation | None:
    """The prompts typed in this workspace that no conversation holds (``known``: what the person said in
    them), in the order Cursor kept them, timed by the generation they started (``aiService.generations``,
    matched by their text)."""
    prompts = _json(log, PROMPTS_KEY, rows[PROMPTS_KEY]) if PROMPTS_KEY in rows else None
    gens = _json(log, GENERATIONS_KEY, rows[GENERATIONS_KEY]) if GENERATIONS_KEY in rows else None
    when: dict[str, Any] = {}
    for g in listed(gens):
        if isinstance(g, dict) and isinstance(g.get("textDescription"), str) and g.get("type") != "apply":
            when.setdefault(g["textDescription"].strip(), g.get("unixMs"))
    log.skip(f"{GENERATIONS_KEY} entries (-> the prompts' times)", len(listed(gens)))
    turns = []
    for i, p in enumerate(listed(prompts)):
        text = p.get("text") if isinstance(p, dict) else None
        if not isinstance(text, str) or not text.strip():
            log.quarantine(f"{PROMPTS_KEY}[{i}]", "a prompt without text", p)
        elif text.strip() in known:
            log.skip(f"{PROMPTS_KEY} entry held by a conversation")
        else:
            turns.append(Turn("user", text, at=when.get(text.strip()), id=str(i), origin="person"))
    if not turns:
        return None
    log.notes.append(
        f"{PROMPTS_KEY}: {len(turns)} prompts without their replies (kept in the global database) "
        "imported as one conversation"
    )
    return Conversation(PROMPTS_KEY, turns, title="Cursor prompts typed in this workspace", provider="cursor")


def _keep(log: Log, out: list[Conversation], seen: set[str], conv: Conversation) -> None:
    """A conversation once, wherever Cursor kept copies of it (the same id in two places is one); a chat
    with no message (a new tab, a draft composer) is none."""
    if not conv.turns:
        log.skip("chat with no message (a new tab or a draft composer)")
    elif conv.id not in seen:
        seen.add(conv.id)
        out.append(conv)


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
            if "cursorDiskKV" in tables and _range(con, "cursorDiskKV", "composerData:", limit=1).fetchone():
                return True
            return (
                "ItemTable" in tables
                and con.execute(
                    f"SELECT 1 FROM ItemTable WHERE key IN ({', '.join('?' * len(KEYS))}) LIMIT 1", KEYS
                ).fetchone()
                is not None
            )
        finally:
            con.close()
    except sqlite3.Error:
        return False


FORMAT = Format(
    "cursor",
    "Cursor state.vscdb (composerData / bubbleId keys, the older aichat chat data)",
    _sniff,
    read=read,
    suffixes=(".vscdb",),
    claims=("*.vscdb",),
)
