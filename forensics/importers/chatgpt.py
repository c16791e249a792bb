"""ChatGPT data exports: ``conversations.json``, a list of conversations, each a tree of messages.

A conversation's ``mapping`` holds every node (``id``, ``message``, ``parent``, ``children``): editing a
prompt or regenerating an answer adds a sibling branch. The main path is the chain from the root to
``current_node`` (what the user last saw); the other nodes are kept off the main path. An assistant
message addressed to a tool (``recipient`` other than ``all``: ``python``, ``browser``, ``web.run``,
``dalle.text2im``...) is a call of that tool with the message's text as arguments, and the following
``tool`` message is its result. Hidden reasoning (``thoughts``, ``reasoning_recap``) is skipped and
counted; ``user_editable_context`` (custom instructions) is a system message.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.importers.model import Conversation, Log, ToolCall, Turn, text_of
from forensics.importers.records import chain
from forensics.importers.registry import Format, Probe, Side

HIDDEN = ("thoughts", "reasoning_recap")
SYSTEM_CONTENT = ("user_editable_context", "model_editable_context")
FAILED_STATUS = re.compile(r"failed|error|exception", re.IGNORECASE)


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_list(Path(path).read_bytes(), "a list of conversations (a ChatGPT export's conversations.json)")
    out = []
    for i, where, conv in log.objects(doc, log.name, "conversation"):
        if not isinstance(conv.get("mapping"), dict):
            log.quarantine(where, "a conversation without a mapping", conv)
            continue
        with log.guard(where, conv):
            out.append(_conversation(log, conv, i))
    return out


def _conversation(log: Log, conv: dict, i: int) -> Conversation:
    nodes = {k: v for k, v in conv["mapping"].items() if isinstance(v, dict)}
    main = _main_path(nodes, conv.get("current_node"))
    order = main + [k for k in _tree_order(nodes) if k not in set(main)]
    on_main = set(main)
    turns: list[Turn] = []
    last_kept: dict[str, str | None] = {}  # node -> nearest kept ancestor (skipped nodes are stepped over)
    model = conv.get("default_model_slug")
    for nid in order:
        node = nodes[nid]
        parent = node.get("parent") if isinstance(node.get("parent"), str) else None
        anc = last_kept.get(parent, parent) if parent in nodes else None
        m = node.get("message")
        if not isinstance(m, dict):
            last_kept[nid] = anc
            continue  # the empty root node, no message
        turn = _turn(log, m, nid)
        if turn is None:
            last_kept[nid] = anc
            continue
        turn.parent, turn.main = (anc or ""), nid in on_main
        turns.append(turn)
        last_kept[nid] = nid
        meta = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
        model = model or meta.get("model_slug")
    native = conv.get("conversation_id") or conv.get("id") or f"#{i}"
    return Conversation(native, turns, title=conv.get("title"), provider="openai", model=model,
                        created=conv.get("create_time"), updated=conv.get("update_time"))


def _turn(log: Log, m: dict, nid: str) -> Turn | None:
    author = m.get("author") if isinstance(m.get("author"), dict) else {}
    role = author.get("role")
    content = m.get("content") if isinstance(m.get("content"), dict) else {}
    ctype = content.get("content_type")
    if ctype in HIDDEN:
        log.skip(f"{ctype} (hidden reasoning)")
        return None
    text = _text(content)
    meta = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
    at = m.get("create_time")
    if ctype in SYSTEM_CONTENT:
        return Turn("system", text, id=nid, at=at)
    recipient = m.get("recipient")
    if role == "assistant" and isinstance(recipient, str) and recipient != "all":
        return Turn("assistant", "", calls=[ToolCall(recipient, text, m.get("id") or nid)], id=nid, at=at)
    if role == "tool":
        agg = meta.get("aggregate_result") if isinstance(meta.get("aggregate_result"), dict) else {}
        status = agg.get("status") if isinstance(agg.get("status"), str) else ""
        error = ctype == "system_error" or bool(FAILED_STATUS.search(status)) or None
        return Turn("tool", text, id=nid, at=at, is_error=error, tool=author.get("name"))  # the call's recipient
    if ctype not in (None, "text", "multimodal_text", "code", "execution_output"):
        log.ignore(f"content type {str(ctype)[:40]}")
    return Turn(role if isinstance(role, str) else "?", text, id=nid, at=at)


def _text(content: dict) -> str:
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(p if isinstance(p, str) else text_of(p.get("text")) if isinstance(p, dict) and "text" in p
                         else "" for p in parts).strip("\n")
    for key in ("text", "result", "summary", "user_instructions"):
        if isinstance(content.get(key), str):
            return content[key]
    return ""


def _main_path(nodes: dict[str, dict], current: Any) -> list[str]:
    """Root -> current_node (else the newest leaf), in order."""
    if not isinstance(current, str) or current not in nodes:
        childless = [k for k, v in nodes.items() if not v.get("children")]
        current = max(childless, key=lambda k: _time(nodes[k]), default=None)
    return chain(current, {k: v.get("parent") for k, v in nodes.items()})


def _tree_order(nodes: dict[str, dict]) -> list[str]:
    """Every node, parents before children (the off-path branches, in the order they were written)."""
    roots = [k for k, v in nodes.items() if v.get("parent") not in nodes]
    out, seen, stack = [], set(), list(reversed(roots))
    while stack:
        k = stack.pop()
        if k in seen or k not in nodes:
            continue
        seen.add(k)
        out.append(k)
        kids = nodes[k].get("children")
        stack.extend(reversed([c for c in kids if isinstance(c, str)] if isinstance(kids, list) else []))
    return out + [k for k in nodes if k not in seen]  # nodes in a cycle


def _time(node: dict) -> float:
    m = node.get("message")
    t = m.get("create_time") if isinstance(m, dict) else None
    return float(t) if isinstance(t, (int, float)) else 0.0


def _sniff(probe: Probe) -> bool:
    head = probe.head.lstrip()
    return head[:1] == b"[" and b'"mapping"' in probe.head and (
        b'"current_node"' in probe.head or b'"create_time"' in probe.head[:2048])


FORMAT = Format("chatgpt", "ChatGPT data export, conversations.json (the mapping tree: main path root -> current_node)",
                _sniff, read=read, suffixes=(".json",), sides=tuple(
                    Side(name, "conversations.json", holds, read=False) for name, holds in (
                        ("shared_conversations.json", "the links shared to conversations"),
                        ("message_feedback.json", "the ratings given to replies"), ("user.json", "the account"),
                        ("chat.html", "the same conversations as a web page"))))
