"""Open WebUI databases: ``webui.db`` (SQLite), table ``chat``, one row per conversation.

Only the ``chat`` table is read (never the ``auth``, ``user`` or key tables beside it). Its ``chat``
column is JSON whose ``history`` holds every message by id (``parentId``, ``childrenIds``, ``role``,
``content``, ``timestamp``, ``model``, ``usage``) and ``currentId``, the message the user last saw: the
main path is the chain from the root to it, and regenerated answers and edited prompts are the other
branches, kept off it. Native tool calls are written into the assistant's content as
``<details type="tool_calls" name=… arguments=… result=…>`` blocks: each is a call and its result a tool
message after the assistant message; ``<details type="reasoning">`` blocks (a reasoning model's thoughts, 0.5+)
are cut from the text and counted. ``usage`` is the response's usage (OpenAI's or Ollama's counters).
"""

from __future__ import annotations

import html
import re
import sqlite3
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe, connect_ro
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, Usage, listed, mapping, text_of
from forensics.formats.kit.records import chain

DETAILS = re.compile(r'<details\s+type="(tool_calls|code_interpreter)"(?P<attrs>[^>]*)>.*?</details>\s*', re.DOTALL)
ATTR = re.compile(r'(\w+)="([^"]*)"')
REASONING = re.compile(r'<details\s+type="reasoning"[^>]*>.*?</details>\s*', re.DOTALL)


def read(path: str, log: Log) -> list[Conversation]:
    con = connect_ro(path)
    try:
        cols = {r[1] for r in con.execute("PRAGMA table_info(chat)")}
        want = [c for c in ("id", "title", "chat", "created_at", "updated_at") if c in cols]
        rows = con.execute(f"SELECT rowid, {', '.join(want)} FROM chat ORDER BY rowid").fetchall()
    except sqlite3.Error as e:
        log.error = f"cannot read table chat ({e})"
        return []
    finally:
        con.close()
    out = []
    for r in rows:
        log.rows += 1
        row = dict(zip(["rowid", *want], r))
        where = f"chat:{row['rowid']}"
        try:
            doc = values.loads(row.get("chat") or b"")
        except ValueError as e:
            log.quarantine(where, f"chat is not JSON ({str(e)[:80]})", row.get("chat") or "")
            continue
        if not isinstance(doc, dict):
            log.quarantine(where, "chat is not a JSON object", row.get("chat") or "")
            continue
        with log.guard(where, doc):
            out.append(_conversation(log, row, doc))
    return out


def _conversation(log: Log, row: dict[str, Any], doc: dict[str, Any]) -> Conversation:
    hist = mapping(doc.get("history"))
    nodes = mapping(hist.get("messages"))
    current = hist.get("currentId")
    if not nodes and isinstance(doc.get("messages"), list):  # early versions: only the main path, as a list
        prev = None
        for i, m in enumerate(doc["messages"]):
            if isinstance(m, dict):
                nodes[str(m.get("id", i))] = {**m, "parentId": prev}
                prev = current = str(m.get("id", i))
    main = _chain(nodes, current)
    turns: list[Turn] = []
    for nid in main + [k for k in nodes if k not in set(main)]:
        m = nodes[nid]
        if not isinstance(m, dict):
            log.quarantine(f"chat:{row['rowid']}#{nid}", "message is not a JSON object", m)
            continue
        turns.extend(_turns(log, m, nid, nid in set(main)))
    models = listed(doc.get("models"))
    return Conversation(
        str(row.get("id") or row["rowid"]),
        turns,
        title=row.get("title") or doc.get("title"),
        model=next((x for x in models if isinstance(x, str)), None),
        created=row.get("created_at") or doc.get("timestamp"),
        updated=row.get("updated_at"),
    )


def _turns(log: Log, m: dict[str, Any], nid: str, main: bool) -> list[Turn]:
    role, at = m.get("role"), m.get("timestamp")
    text = text_of(m.get("content"))
    if role == "assistant" and REASONING.search(text):  # a reasoning model's thoughts, written before the reply
        log.ignore("reasoning block")
        text = REASONING.sub("", text).strip()
    parent = m.get("parentId")
    turn = Turn(
        role if isinstance(role, str) else "?",
        text,
        id=nid,
        at=at,
        main=main,
        parent="" if parent is None else str(parent),
    )
    if role != "assistant":
        return [turn]
    results = []
    for k, d in enumerate(DETAILS.finditer(text)):
        attrs = {a: html.unescape(v) for a, v in ATTR.findall(d.group("attrs"))}
        cid = attrs.get("id") or f"{nid}:call{k}"
        name = attrs.get("name") or d.group(1)
        turn.calls.append(ToolCall(name, attrs.get("arguments") or attrs.get("code"), cid))
        if attrs.get("done") != "false":
            results.append(
                Turn(
                    "tool",
                    _unquote(attrs.get("result") or attrs.get("output") or ""),
                    answers=cid,
                    id=f"{nid}:result{k}",
                    at=at,
                    main=main,
                )
            )
    if results:
        turn.text = DETAILS.sub("", text).strip()
    u = m.get("usage") if isinstance(m.get("usage"), dict) else None
    if u is not None:
        details = mapping(u.get("prompt_tokens_details"))
        cached = details.get("cached_tokens")
        prompt = u.get("prompt_tokens", u.get("prompt_eval_count"))
        turn.usage.append(
            Usage(
                prompt_tokens=prompt,
                output_tokens=u.get("completion_tokens", u.get("eval_count")),
                cache_read_input_tokens=cached,
                model=m.get("model"),
            )
        )
    return [turn, *results]


def _unquote(result: str) -> str:
    """Results are stored JSON-encoded (a string result as a JSON string)."""
    try:
        v = values.loads(result)
    except ValueError:
        return result
    return v if isinstance(v, str) else text_of(v)


def _chain(nodes: dict[str, Any], current: Any) -> list[str]:
    if not isinstance(current, str) or current not in nodes:
        current = next(reversed(nodes), None)  # the last written message
    return chain(current, {k: m.get("parentId") if isinstance(m, dict) else None for k, m in nodes.items()})


def _sniff(probe: Probe) -> bool:
    cols = probe.tables.get("chat") or []
    return bool(cols) and "chat" in cols and ("user_id" in cols or "title" in cols)


FORMAT = Format(
    "open-webui",
    "Open WebUI webui.db (table chat: a JSON history tree with currentId)",
    _sniff,
    read=read,
    suffixes=(".db", ".sqlite", ".sqlite3"),
)
