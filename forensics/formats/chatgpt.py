"""ChatGPT data exports: ``conversations.json``, a list of conversations, each a tree of messages.

The file is read conversation by conversation (``stream.array_items``): an export of hundreds of MB is
never parsed whole; from a conversation that is not JSON on, the rest of the file is quarantined. A conversation's ``mapping`` holds every node (``id``, ``message``, ``parent``,
``children``): editing a prompt or regenerating an answer adds a sibling branch. The main path is the chain
from the root to ``current_node`` (what the user last saw); the other nodes are kept off the main path. An
assistant message addressed to a tool (``recipient`` other than ``all``: ``python``, ``browser``,
``web.run``, ``dalle.text2im``, ``canmore.create_textdoc``, ``bio``...) is a call of that tool with the
message's text as arguments; a ``tool`` message answers the nearest such call above it addressed to the
tool it names (``author.name``), else it stays unlinked. A user message is the person's unless ChatGPT hid
it (``is_visually_hidden_from_conversation``: context it added). Hidden reasoning (``thoughts``,
``reasoning_recap``) is skipped and counted; ``user_editable_context`` (custom instructions) is a system
message. ``shared_conversations.json`` beside the export (the links the person shared) is not a log: it is
named, with its count, in the run's note; it, ``model_comparisons.json`` and ``message_feedback.json``
named or met on their own import nothing and say why (no generic format tries them).

Covered: the 2023 layout (conversation keys ``title, create_time, update_time, mapping, current_node, id``)
and the 2025 one (``conversation_id``, ``default_model_slug``, ``gizmo_id``/``gizmo_type``, ``async_status``,
``is_archived``…, the ``tool`` role). A newer layout imports the mapping tree it shares with these; an
item without a mapping is quarantined with its bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from forensics.formats.kit import stream, values
from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, mapping, read_side, text_of
from forensics.formats.kit.records import chain

HIDDEN = ("thoughts", "reasoning_recap")
SYSTEM_CONTENT = ("user_editable_context", "model_editable_context")
# a code run that failed, or that never ended: `cancelled` when the sandbox was reset under it ("Code execution
# state reset.", the real export of fixtures/real/chatgpt) or the person stopped it
FAILED_STATUS = re.compile(r"failed|error|exception|cancel", re.IGNORECASE)
SHARED, MAIN = "shared_conversations.json", "conversations.json"
FIRST_KEYS = ("title", "create_time", "update_time", "mapping")  # how a conversation starts (2023 and 2025 layouts)
EXTRAS = {
    SHARED: "the links the person shared",
    "model_comparisons.json": "the answers the person compared",
    "message_feedback.json": "the person's ratings of replies",
}  # user.json, chat.html: no format reads them


def read(path: str, log: Log) -> Iterator[Conversation]:
    """Conversation by conversation, as the file is read (an export runs to hundreds of MB)."""
    if _extra(Path(path)):
        log.rows += 1
        log.notes.append(
            f"{EXTRAS[Path(path).name]} of the ChatGPT export beside it ({MAIN} holds the "
            "conversations): not a log, nothing imported"
        )
        return
    for i, where, conv in stream.export_items(
        path, log, "a list of conversations (a ChatGPT export's conversations.json)"
    ):
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            log.quarantine(where, "not a conversation (an object with a mapping)", conv)
            continue
        with log.guard(where, conv):
            yield _conversation(log, conv, i)
    _shared(Path(path), log)


def _shared(path: Path, log: Log) -> None:
    """``shared_conversations.json`` beside the export lists the links the person shared (id, conversation
    id, title): not conversations; said in the run's note with its count."""
    side = path.parent / SHARED
    try:
        links = values.loads(read_side(side))
    except (OSError, ValueError):
        return
    n = len(links) if isinstance(links, list) else 0
    log.notes.append(f"read with it: {SHARED} ({n} shared links, not conversations)")


def _conversation(log: Log, conv: dict[str, Any], i: int) -> Conversation:
    nodes = {k: v for k, v in conv["mapping"].items() if isinstance(v, dict)}
    main = _main_path(nodes, conv.get("current_node"))
    order = main + [k for k in _tree_order(nodes) if k not in set(main)]
    on_main = set(main)
    turns: list[Turn] = []
    last_kept: dict[str | None, str | None] = {}  # node -> nearest kept ancestor (skipped nodes are stepped over)
    model = conv.get("default_model_slug")
    for nid in order:
        node = nodes[nid]
        parent = up if isinstance(up := node.get("parent"), str) else None
        anc = last_kept.get(parent, parent) if parent in nodes else None
        m = node.get("message")
        if not isinstance(m, dict):
            last_kept[nid] = anc
            continue  # the empty root node, no message
        turn = _turn(log, m, nid)
        if turn is None:
            last_kept[nid] = anc
            continue
        if turn.role == "tool":
            turn.answers = _call_of(nodes, nid, m)
        turn.parent, turn.main = (anc or ""), nid in on_main
        turns.append(turn)
        last_kept[nid] = nid
        meta = mapping(m.get("metadata"))
        model = model or meta.get("model_slug")
    native = conv.get("conversation_id") or conv.get("id") or f"#{i}"
    return Conversation(
        native,
        turns,
        title=conv.get("title"),
        provider="openai",
        model=model,
        created=conv.get("create_time"),
        updated=conv.get("update_time"),
    )


def _turn(log: Log, m: dict[str, Any], nid: str) -> Turn | None:
    author = mapping(m.get("author"))
    role = author.get("role")
    content = mapping(m.get("content"))
    ctype = content.get("content_type")
    if ctype in HIDDEN:
        log.skip(f"{ctype} (hidden reasoning)")
        return None
    text = _text(content)
    meta = mapping(m.get("metadata"))
    at = m.get("create_time")
    if ctype in SYSTEM_CONTENT:
        return Turn("system", text, id=nid, at=at)
    if role == "user":  # the person's, unless ChatGPT hid it from the conversation (context it added itself)
        hidden = meta.get("is_visually_hidden_from_conversation")
        if ctype not in (None, "text", "multimodal_text"):
            log.ignore(f"content type {str(ctype)[:40]}")
        return Turn("user", text, id=nid, at=at, origin="harness" if hidden else "person")
    recipient = m.get("recipient")
    if role == "assistant" and isinstance(recipient, str) and recipient != "all":
        return Turn("assistant", "", calls=[ToolCall(recipient, text, m.get("id") or nid)], id=nid, at=at)
    if role == "tool":
        agg = mapping(meta.get("aggregate_result"))
        status = given if isinstance(given := agg.get("status"), str) else ""
        error = ctype == "system_error" or bool(FAILED_STATUS.search(status)) or None
        return Turn("tool", text, id=nid, at=at, is_error=error, tool=author.get("name"))  # the call's recipient
    if ctype not in (None, "text", "multimodal_text", "code", "execution_output"):
        log.ignore(f"content type {str(ctype)[:40]}")
    return Turn(role if isinstance(role, str) else "?", text, id=nid, at=at)


def _call_of(nodes: dict[str, dict[str, Any]], nid: str, m: dict[str, Any]) -> str:
    """The call a tool message answers: the nearest message above it (never past the person's turn)
    addressed to the tool it names (``author.name``; ``web`` answers ``web.run``). None found: the tool's name,
    which no call has as id, so the result stays unlinked."""
    name = str(mapping(m.get("author")).get("name") or "")
    seen, cur = set(), nodes[nid].get("parent")
    while isinstance(cur, str) and cur in nodes and cur not in seen:
        seen.add(cur)
        up = mapping(nodes[cur].get("message"))
        role, to = mapping(up.get("author")).get("role"), up.get("recipient")
        if role == "user":
            break
        if (
            role == "assistant"
            and isinstance(to, str)
            and to != "all"
            and (not name or to == name or to.split(".")[0] == name.split(".")[0])
        ):
            return str(up.get("id") or cur)
        cur = nodes[cur].get("parent")
    return f"unanswered: {name or 'tool'}"


def _text(content: dict[str, Any]) -> str:
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(
            p if isinstance(p, str) else text_of(p.get("text")) if isinstance(p, dict) and "text" in p else ""
            for p in parts
        ).strip("\n")
    for key in ("text", "result", "summary", "user_instructions"):
        if isinstance(value := content.get(key), str):
            return value
    return ""


def _main_path(nodes: dict[str, dict[str, Any]], current: Any) -> list[str]:
    """Root -> current_node (else the newest leaf), in order."""
    if not isinstance(current, str) or current not in nodes:
        childless = [k for k, v in nodes.items() if not v.get("children")]
        current = max(childless, key=lambda k: _time(nodes[k]), default=None)
    return chain(current, {k: v.get("parent") for k, v in nodes.items()})


def _tree_order(nodes: dict[str, dict[str, Any]]) -> list[str]:
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


def _time(node: dict[str, Any]) -> float:
    m = node.get("message")
    t = m.get("create_time") if isinstance(m, dict) else None
    return float(t) if isinstance(t, (int, float)) else 0.0


def _extra(path: Path) -> bool:
    """One of the export's other files, beside its conversations.json."""
    return path.name in EXTRAS and (path.parent / MAIN).is_file()


def _sniff(probe: Probe) -> bool:
    if _extra(probe.path):  # told apart here so that no generic format tries (and fails) to read it
        return True
    head = probe.head.lstrip()
    if (
        head[:1] == b"["
        and b'"mapping"' in probe.head
        and (b'"current_node"' in probe.head or b'"create_time"' in probe.head[:2048])
    ):
        return True
    keys, whole = probe.first_keys  # an export cut off before its first mapping: known by how it starts
    return not whole and len(keys) >= 2 and keys == FIRST_KEYS[: len(keys)]


FORMAT = Format(
    "chatgpt",
    "ChatGPT data export, conversations.json (the mapping tree: main path root -> current_node)",
    _sniff,
    read=read,
    suffixes=(".json",),
    sides=tuple(
        Side(name, "conversations.json", holds, read=False)
        for name, holds in (
            ("shared_conversations.json", "the links shared to conversations"),
            ("message_feedback.json", "the ratings given to replies"),
            ("user.json", "the account"),
            ("model_comparisons.json", "the answers compared side by side"),
            ("chat.html", "the same conversations as a web page"),
        )
    ),
)
