"""Claude.ai data exports: ``conversations.json``, a list of conversations with their ``chat_messages``.

A conversation has ``uuid``, ``name``, ``created_at``, ``updated_at``; a message has ``uuid``, ``sender``
(``human`` or ``assistant``; ``system`` is read too), ``text``, ``content`` blocks (``text``, ``thinking``, ``tool_use``,
``tool_result``: web search, analysis and artifacts run inside one assistant message), ``attachments``
and, in newer exports, ``parent_message_uuid``. Each ``tool_use`` block is a call and each
``tool_result`` block a tool message after the assistant message. With parent links the messages form a
tree: the main path runs from the root to the newest message, other branches (edited prompts,
retries) are kept off it. The file is read one conversation at a time (``stream.export_items``); the
export's other files (``projects.json``, ``users.json``, ``memories.json``) hold no conversations and are
named in the run's note.

Built from the export's documentation and public readers of it (no real export was at hand): the 2024
layout (``text`` only), content blocks with ``start_timestamp``/``stop_timestamp`` (2025), and
``parent_message_uuid`` trees. A newer layout imports the messages it shares with these; an unknown
block is counted, a message of an unknown sender quarantined.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from forensics.formats.kit import stream
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, listed, text_of
from forensics.formats.kit.records import chain

SENDERS = {"human": "user", "assistant": "assistant", "user": "user", "system": "system"}
EXTRAS = ("projects.json", "users.json", "memories.json")  # the export's other files: no conversations
BLOCKS = ("text", "thinking", "tool_use", "tool_result", "image", "document", "voice_note")
ROOT = "00000000-4000-8000-0000-000000000000"  # the parent of a conversation's first message


def read(path: str, log: Log) -> Iterator[Conversation]:
    """Conversation by conversation, as the file is read (``stream.export_items``: an export runs to
    hundreds of MB and is never parsed whole)."""
    for i, where, conv in stream.export_items(
        path, log, "a list of conversations (a Claude.ai export's conversations.json)"
    ):
        if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
            log.quarantine(where, "not a conversation (an object with chat_messages)", conv)
            continue
        with log.guard(where, conv):
            yield _conversation(log, conv, where, i)
    beside = [name for name in EXTRAS if (Path(path).parent / name).is_file()]
    if beside:
        log.notes.append(f"beside it, not conversations: {', '.join(beside)}")


def _conversation(log: Log, conv: dict[str, Any], where: str, i: int) -> Conversation:
    msgs = []
    for j, m in enumerate(conv["chat_messages"]):
        if not isinstance(m, dict) or not isinstance(m.get("sender"), str) or m["sender"] not in SENDERS:
            log.quarantine(f"{where}.chat_messages[{j}]", "not a message from human, assistant or system", m)
            continue
        msgs.append(m)
    main = _main_path(msgs)
    turns: list[Turn] = []
    for m in sorted(msgs, key=lambda m: (m.get("uuid") not in main, main.get(m.get("uuid"), 0))):
        turns.extend(_turns(log, m, m.get("uuid") in main, tree=bool(_parent(m))))
    return Conversation(
        conv.get("uuid") or f"#{i}",
        turns,
        title=conv.get("name"),
        provider="anthropic",
        model=conv.get("model") if isinstance(conv.get("model"), str) else None,
        created=conv.get("created_at"),
        updated=conv.get("updated_at"),
    )


def _turns(log: Log, m: dict[str, Any], main: bool, tree: bool) -> list[Turn]:
    role, mid, at = SENDERS[m["sender"]], m.get("uuid"), m.get("created_at")
    blocks = [b for b in listed(m.get("content")) if isinstance(b, dict)]
    for b in blocks:
        if b.get("type") not in BLOCKS:
            log.ignore(f"{str(b.get('type'))[:40]} block")
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    text = "\n".join(texts) if blocks else text_of(m.get("text"))
    for a in listed(m.get("attachments")):
        if isinstance(a, dict) and isinstance(a.get("extracted_content"), str):
            text = f"{text}\n\n[{a.get('file_name', 'attachment')}]\n{a['extracted_content']}".strip("\n")
    calls = [
        ToolCall(b.get("name"), b.get("input"), b.get("id") or f"{mid}:call{k}")
        for k, b in enumerate(x for x in blocks if x.get("type") == "tool_use")
    ]
    turn = Turn(role, text, calls=calls if role == "assistant" else [], at=at, id=mid, main=main)
    if tree:
        turn.parent = "" if _parent(m) == ROOT else _parent(m)
    out = [turn]
    for k, b in enumerate(x for x in blocks if x.get("type") == "tool_result"):
        out.append(
            Turn(
                "tool",
                text_of(b.get("content"), kinds=None),
                answers=b.get("tool_use_id") or (calls[k].id if k < len(calls) else None),
                is_error=bool(b.get("is_error")) or None,
                at=b.get("stop_timestamp") or at,
                id=f"{mid}:result{k}",
                main=main,
            )
        )
    return out


def _parent(m: dict[str, Any]) -> str | None:
    p = m.get("parent_message_uuid")
    return p if isinstance(p, str) else None


def _main_path(msgs: list[dict[str, Any]]) -> dict[str | None, int]:
    """uuid -> order on the main path: all messages in order when they have no parent links, else the chain
    from the newest message up to the root."""
    if not any(_parent(m) for m in msgs):
        return {m.get("uuid"): k for k, m in enumerate(msgs)}
    leaf = max(msgs, key=lambda m: str(m.get("created_at") or ""), default=None)  # ISO-8601 sorts as text
    path = chain(leaf.get("uuid") if leaf else None, {m.get("uuid"): _parent(m) for m in msgs})
    return {u: k for k, u in enumerate(path)}


def _sniff(probe: Probe) -> bool:
    head = probe.head.lstrip()
    if head[:1] == b"[" and b'"chat_messages"' in probe.head and b'"uuid"' in probe.head:
        return True
    keys, whole = probe.first_keys  # an export cut off before its first chat_messages: known by how it starts
    return not whole and keys[:2] == ("uuid", "name") and len(keys) > 2 and keys[2] in ("summary", "created_at")


FORMAT = Format(
    "claude-ai",
    "Claude.ai data export, conversations.json (chat_messages, with branches when linked)",
    _sniff,
    read=read,
    suffixes=(".json",),
)
