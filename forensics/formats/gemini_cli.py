"""Gemini CLI chats: ``~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json`` or ``.jsonl``.

The JSON form (2025) is one ``ConversationRecord``: ``sessionId``, ``projectHash``, ``startTime``,
``lastUpdated``, ``messages`` and an optional ``summary``. The JSONL form (2026) appends records: a metadata
line, message records (a record repeating an id replaces that message: tool calls and tokens arrive after
the text), ``{"$set": {...}}`` metadata updates (``$set.messages`` re-syncs the whole history) and
``{"$rewindTo": id}``, which drops that message and everything after it: they stay, off the main path. A
sub-agent writes ``chats/<parent session id>/<session id>.jsonl`` with ``kind: "subagent"``.

A user message's ``displayContent`` (2026), where there is one, is what the person typed, and ``content`` what the
CLI expanded it to (the contents of ``@``-referenced files, a custom command's prompt): its text is the former.

A ``gemini`` message holds its tool calls with their results (``toolCalls[].result``, function responses),
so each result becomes a tool message right after its call. ``info``/``error``/``warning`` messages are the
CLI's own notices: skipped and counted. A user message is the person's, except the next-speaker check's
``System: Please continue.`` and chat compression's ``<state_snapshot>`` summary (harness) and a ``[Function Response: name]`` carrying a tool's extra output.

Two other files sit in the project folder (packages/core/src/core/logger.ts):

* ``checkpoint-<tag>.json`` (``/chat save``): the chat as the Gemini API holds it, a ``Content[]`` list (or
  ``{"history": Content[]}`` in later versions) of ``role: user|model`` with ``parts`` of ``text``,
  ``functionCall`` and ``functionResponse`` (``thought`` parts and ``thoughtSignature`` are the model's
  reasoning: dropped). A response answers the call of the same id, else the oldest open call of its name. The
  first user content, "This is the Gemini CLI. We are setting up the context…" (inside ``<session_context>``
  in 2026 versions), is the CLI's own.
* ``logs.json``: the prompt log, every input the person typed (``{sessionId, messageId, type: "user",
  message, timestamp}``), one conversation of person messages per session. A session whose recording sits in
  ``chats/`` beside it (``session-<time>-<first 8 of its id>.json``) is read there, its prompts skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, listed, text_of

NOTICES = ("info", "error", "warning")
# getEnvironmentContext, the first user content (wrapped in <session_context> from 2026)
PREAMBLE = ("This is the Gemini CLI. We are setting up the context", "<session_context>")
CONTINUE = "System: Please continue."  # the next-speaker check's nudge (checkNextSpeaker)
SNAPSHOT = "<state_snapshot>"  # chat compression's summary, a user turn the CLI writes into the history
FUNCTION_RESPONSE = "[Function Response:"


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    head = data[:4096].removeprefix(values.BOM).lstrip()
    if head[:1] == b"[" or Path(path).name.startswith("checkpoint-"):
        parsed = log.json_document(data)
        if parsed == [] or (isinstance(parsed, dict) and parsed.get("history") == []):
            log.notes.append("empty: no prompt or message in this file")
            return []
        if isinstance(parsed, dict) and isinstance(parsed.get("history"), list):
            return [_checkpoint_conversation(path, log, parsed["history"])]
        if isinstance(parsed, list) and parsed and all(isinstance(e, dict) and "sessionId" in e for e in parsed):
            return _prompt_log(path, log, parsed)
        if isinstance(parsed, list):
            return [_checkpoint_conversation(path, log, parsed)]
        if parsed is not None:
            log.error = "not a Gemini CLI checkpoint (Content[]) or prompt log"
        return []
    doc = _document(data)
    if doc is not None:  # the JSON form (several JSONL lines never parse as one document)
        log.rows += 1
        return [_conversation(path, log, doc, list(enumerate(doc["messages"])), set(), [], doc_form=True)]
    meta: dict[str, Any] = {}
    records: dict[str, tuple[int, dict[str, Any]]] = {}  # id -> (line, latest record), in first-seen order
    off: set[str] = set()
    events: list[tuple[str, Event]] = []  # (id of the message it precedes, event)
    for n, _raw, obj in log.json_lines(data):
        if isinstance(obj.get("$rewindTo"), str):
            ids = list(records)
            cut = ids.index(obj["$rewindTo"]) if obj["$rewindTo"] in ids else 0
            off.update(i for i in ids[cut:])
            log.skip("$rewindTo (-> messages off the main path)")
        elif isinstance(obj.get("$set"), dict):
            upd = obj["$set"]
            meta.update({k: v for k, v in upd.items() if k != "messages"})
            if isinstance(upd.get("messages"), list):
                _checkpoint(records, off, events, upd["messages"], n)
            log.skip("$set")
        elif isinstance(obj.get("id"), str):
            if obj["id"] in records and obj["id"] not in off:
                log.skip("message update (same id)")
                records[obj["id"]] = (records[obj["id"]][0], obj)
            else:
                records.pop(obj["id"], None)  # a rewound message written again is a new one
                off.discard(obj["id"])
                records[obj["id"]] = (n, obj)
        elif "sessionId" in obj:
            meta.update(obj)
            log.skip("metadata")
        else:
            log.skip(f"record without id ({', '.join(sorted(obj))[:40]})")
    if not meta and not records:
        log.error = "no line is a Gemini CLI record (sessionId, message id, $set, $rewindTo)"
        return []
    return [_conversation(path, log, meta, [(n, r) for n, r in records.values()], off, events)]


def _checkpoint(
    records: dict[str, tuple[int, dict[str, Any]]],
    off: set[str],
    events: list[tuple[str, Event]],
    msgs: list[Any],
    n: int,
) -> None:
    """``$set.messages``: the history as the CLI now holds it. Messages it keeps take its version; new ones
    (a compression summary) are added; a history that lost messages is a compaction."""
    kept = {m["id"] for m in msgs if isinstance(m, dict) and isinstance(m.get("id"), str)}
    dropped = [i for i in records if i not in kept and i not in off]
    still = sum(i in kept for i in records if i not in off)  # the old messages the new history keeps
    for m in msgs:
        if isinstance(m, dict) and isinstance(m.get("id"), str):
            records[m["id"]] = (records.get(m["id"], (n, m))[0], m)
    if dropped:
        first_new = next((m["id"] for m in msgs if isinstance(m, dict) and m.get("id") not in dropped), "")
        events.append(
            (
                first_new,
                Event("compaction", detail={"dropped_messages": len(dropped), "kept_messages": still, "line": n}),
            )
        )


def _conversation(
    path: str,
    log: Log,
    meta: dict[str, Any],
    msgs: list[tuple[int, Any]],
    off: set[str],
    events: list[tuple[str, Event]],
    doc_form: bool = False,
) -> Conversation:
    turns: list[Turn] = []
    index: dict[str, int] = {}
    for n, m in msgs:
        where = f"{log.name}[{n}]" if doc_form else f"{log.name}:{n}"
        if not isinstance(m, dict):
            log.quarantine(where, "message is not a JSON object", m)
            continue
        with log.guard(where, m):
            kind = m.get("type")
            if kind in NOTICES:
                log.skip(f"{kind} notice")
                continue
            if kind not in ("user", "gemini"):
                log.quarantine(where, f"unknown message type {str(kind)[:40]!r}", m)
                continue
            index[str(m.get("id"))] = len(turns)
            turns.extend(_turns(m, m.get("id") in off))
    _continue_after_rewinds(turns)
    conv_events = []
    for before, ev in events:
        ev.before = index.get(before)
        conv_events.append(ev)
    model = next((t.usage[0].model for t in turns if t.usage and t.usage[0].model), None)
    return Conversation(
        str(meta.get("sessionId") or Path(path).stem),
        turns,
        title=meta.get("summary"),
        provider="google",
        model=model,
        created=meta.get("startTime"),
        updated=meta.get("lastUpdated"),
        parent=_parent(path, meta),
        events=conv_events,
    )


def _continue_after_rewinds(turns: list[Turn]) -> None:
    """The first message after a rewind continues from the last message still on the main path."""
    last_main: Turn | None = None
    after_off = False
    for t in turns:
        if t.main:
            if after_off:
                t.parent = str(last_main.id) if last_main is not None else ""
            last_main = t
        after_off = not t.main


def _user_origin(text: str) -> str:
    opening = text.lstrip()
    if opening.startswith(FUNCTION_RESPONSE):
        return "tool_result"
    if opening.startswith((CONTINUE, SNAPSHOT, *PREAMBLE)):
        return "harness"
    return "person"


def _turns(m: dict[str, Any], off: bool) -> list[Turn]:
    """A message, and for a ``gemini`` one the tool message of each call that has a result."""
    mid, at = m.get("id"), m.get("timestamp")
    if m.get("type") == "user":
        # displayContent (2026): what the person typed, where content is its expansion (@-file contents, a custom
        # command's prompt): the person's words
        shown = m.get("displayContent")
        text = text_of(shown if shown is not None else m.get("content"))
        return [Turn("user", text, at=at, id=mid, main=not off, origin=_user_origin(text))]
    calls = [c for c in listed(m.get("toolCalls")) if isinstance(c, dict)]
    turn = Turn(
        "assistant",
        text_of(m.get("content")),
        at=at,
        id=mid,
        main=not off,
        calls=[ToolCall(c.get("name"), c.get("args"), c.get("id")) for c in calls],
    )
    tokens = m.get("tokens")
    if isinstance(tokens, dict):
        get: Callable[[str], Any] = tokens.get  # a count is summed only when both are ints (_nums)
        inp, cached, tool = get("input"), get("cached"), get("tool")
        out, thoughts = get("output"), get("thoughts")
        turn.usage.append(
            Usage(  # total = input + output + thoughts + tool (toolUsePromptTokenCount: input too)
                prompt_tokens=inp + tool if _nums(inp, tool) else inp,
                output_tokens=out + thoughts if _nums(out, thoughts) else out,
                cache_read_input_tokens=cached,
                model=m.get("model"),
            )
        )
    out = [turn]
    for c in calls:
        if c.get("result") is None and c.get("resultDisplay") is None:
            continue  # still running, or cancelled before it ran: the call stays unanswered
        status = c.get("status")
        out.append(
            Turn(
                "tool",
                _result_text(c),
                answers=c.get("id"),
                at=c.get("timestamp") or at,
                id=f"{mid}:{c.get('id')}",
                main=not off,
                is_error=True if status == "error" else False if status == "success" else None,
            )
        )
    return out


def _result_text(call: dict[str, Any]) -> str:
    """The text the model was given: the function responses' output (or error), else the display text."""
    parts = call.get("result")
    parts = parts if isinstance(parts, list) else [parts] if parts is not None else []
    texts = []
    for p in parts:
        fr = p.get("functionResponse") if isinstance(p, dict) else None
        if isinstance(fr, dict):
            resp = fr.get("response")
            if isinstance(resp, dict) and isinstance(resp.get("output"), str):
                texts.append(resp["output"])
            elif isinstance(resp, dict) and isinstance(resp.get("error"), str):
                texts.append(resp["error"])
            else:
                texts.append(text_of(resp))
        elif p is not None:
            texts.append(text_of(p))
    if texts:
        return "\n".join(texts)
    shown = call.get("resultDisplay")
    return shown if isinstance(shown, str) else text_of(shown)


def _checkpoint_conversation(path: str, log: Log, contents: list[Any]) -> Conversation:
    """A ``/chat save`` checkpoint: Gemini API contents, calls answered by id or by name."""
    turns: list[Turn] = []
    open_calls: list[ToolCall] = []
    for i, where, c in log.objects(contents, log.name, "content"):
        with log.guard(where, c):
            parts = [p for p in listed(c.get("parts")) if isinstance(p, dict)]
            if c.get("role") == "model":
                text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
                calls = [
                    ToolCall(_str(fc.get("name")), fc.get("args"), _str(fc.get("id")))
                    for p in parts
                    if isinstance(fc := p.get("functionCall"), dict)
                ]
                turns.append(Turn("assistant", text, calls=calls, id=str(i)))
                open_calls.extend(calls)
                continue
            if c.get("role") != "user":
                log.quarantine(where, f"unknown role {str(c.get('role'))[:40]!r}", c)
                continue
            texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
            if texts:
                text = "\n".join(texts)
                turns.append(Turn("user", text, id=str(i), origin=_user_origin(text)))
            for k, p in enumerate(parts):
                fr = p.get("functionResponse")
                if isinstance(fr, dict):
                    turns.append(_response(fr, open_calls, f"{i}:{k}"))
    return Conversation(Path(path).stem, turns, provider="google")


def _response(fr: dict[str, Any], open_calls: list[ToolCall], nid: str) -> Turn:
    """The tool message of one function response; the call it answers leaves ``open_calls``."""
    rid, name = _str(fr.get("id")), fr.get("name")
    call = next((c for c in open_calls if rid is not None and c.id == rid), None) or next(
        (c for c in open_calls if c.id is None and c.name == name), None
    )
    if call is not None:
        open_calls.remove(call)
        call.id = call.id or rid or f"call-{nid}"
    resp = fr.get("response")
    error = isinstance(resp, dict) and "error" in resp
    text = _result_text({"result": [{"functionResponse": fr}]})
    return Turn("tool", text, answers=call.id if call is not None else rid, is_error=error, id=nid)


def _prompt_log(path: str, log: Log, entries: list[Any]) -> list[Conversation]:
    """``logs.json``: the person's inputs, one conversation per session not recorded in ``chats/``."""
    chats = Path(path).parent / "chats"
    recorded = {f.stem.rsplit("-", 1)[-1] for f in chats.glob("session-*.json*")} if chats.is_dir() else set()
    sessions: dict[str, list[Turn]] = {}
    for _i, where, e in log.objects(entries, log.name, "entry"):
        with log.guard(where, e):
            sid, text = e.get("sessionId"), e.get("message")
            if not isinstance(sid, str) or not isinstance(text, str):
                log.quarantine(where, "entry without a sessionId or message", e)
            elif sid[:8] in recorded:
                log.skip("prompts of sessions recorded in chats/ (read there)")
            elif e.get("type", "user") != "user":
                log.skip(f"entry of type {str(e.get('type'))[:40]}")
            else:
                sessions.setdefault(sid, []).append(
                    Turn("user", text, at=e.get("timestamp"), id=f"{sid}:{e.get('messageId')}", origin="person")
                )
    if sessions:
        log.notes.append("prompt log: the person's inputs only (no replies in this file)")
    return [
        Conversation(sid, turns, title="Gemini CLI prompt log", provider="google", created=turns[0].at)
        for sid, turns in sessions.items()
    ]


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _parent(path: str, meta: dict[str, Any]) -> str | None:
    """A sub-agent's file sits in ``chats/<parent session id>/``."""
    folder = Path(path).parent
    if meta.get("kind") == "subagent" and folder.name != "chats":
        return folder.name
    return None


def _nums(*vs: Any) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in vs)


def _document(data: bytes) -> dict[str, Any] | None:
    try:
        doc = values.loads(data, deep=True)
    except ValueError:  # JSONL, or not JSON at all (then each line is judged on its own)
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("messages"), list) else None


def _sniff(probe: Probe) -> bool:
    if probe.is_sqlite or probe.is_zip:
        return False
    head = probe.head[:4096]
    if b'"sessionId"' in head and b'"projectHash"' in head:
        return True
    start = head.lstrip()[:1]
    if start == b"[" and b'"sessionId"' in head and b'"messageId"' in head:
        return True  # logs.json
    if (
        start == b"["
        and b'"parts"' in head
        and (re.search(rb'"role"\s*:\s*"model"', probe.head) or probe.path.name.startswith("checkpoint-"))
    ):
        return True  # a checkpoint: Gemini API Content[] (the API's roles are user and model)
    if probe.path.name.startswith("checkpoint-") and start == b"{" and b'"history"' in head and b'"parts"' in head:
        return True
    return any(isinstance(r, dict) and ("$rewindTo" in r or "$set" in r) for r in probe.records)


FORMAT = Format(
    "gemini-cli",
    "Gemini CLI chats, ~/.gemini/tmp/<project>/chats/session-*.json and .jsonl "
    "(and checkpoint-*.json, logs.json: the prompts of sessions the chats do not hold)",
    _sniff,
    read=read,
    claims=("*/.gemini/tmp/*/chats/*.json", "*/.gemini/tmp/*/chats/*.jsonl", "*/.gemini/tmp/*/checkpoint-*.json"),
)
