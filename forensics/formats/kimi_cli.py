"""Kimi CLI sessions: ``~/.kimi/sessions/<work dir hash>/<session id>/wire.jsonl``, the session's event stream
(the wire protocol, ``kimi_cli/wire``), beside ``context.jsonl`` (what the model sees now, rewritten on
compaction and ``/revert``), ``context_sub_<n>.jsonl`` (sub-agents' contexts) and ``state.json``: side files.

The first line is ``{"type": "metadata", "protocol_version"}``; then ``{"timestamp", "message": {"type",
"payload"}}`` lines:

* ``TurnBegin`` ``user_input`` (a string or text parts): the person's turn;
* ``StepBegin`` opens one model response (an assistant message); ``ContentPart`` adds its ``text`` (``think``
  parts are reasoning, left out); ``ToolCall`` adds a call (``id``, ``function.name``, ``function.arguments``),
  and ``ToolCallPart`` the rest of its streamed arguments;
* ``ToolResult`` ``tool_call_id`` and ``return_value`` {``is_error``, ``output``, ``message``}: the result;
* ``StatusUpdate`` ``token_usage`` {``input_other`` (not from the cache), ``output``, ``input_cache_read``,
  ``input_cache_creation``} and ``message_id``: the usage of the step's response;
* ``SubagentEvent`` {``task_tool_call_id``, ``event``}: an event of the sub-agent the ``Task`` call started, its
  own conversation (``<session>:<call id>``, linked to the session); its first prompt was written by the parent
  model (harness);
* ``CompactionBegin``: the context was compacted (an event);
* ``TurnEnd``, ``StepInterrupted``, ``ApprovalRequest``/``ApprovalResponse``, ``metadata`` and any other type:
  skipped and counted.

A session of Kimi CLI 0.58 or earlier is its context file alone (``<dir hash>/<session id>.jsonl``, lines
``{"role": ...}``): kimi_context.py reads it.

Seen on real sessions of Kimi CLI (wire protocol 1.3, 2026-03; the 0.42 context file, 2025-10); docs/formats.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from forensics.formats import kimi_context
from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, mapping

SKIPPED = ("TurnEnd", "StepInterrupted", "ApprovalRequest", "ApprovalResponse", "CompactionEnd", "metadata")


@dataclass
class _Thread:
    id: str
    parent: str | None = None
    turns: list[Turn] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    step: Turn | None = None  # the assistant message the current step writes
    created: Any = None
    model: str | None = None


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    if _first_role(data):
        return kimi_context.read(path, log)  # a session of Kimi CLI 0.58 or earlier: its context file
    sid = Path(path).parent.name
    main = _Thread(sid)
    threads: dict[str, _Thread] = {sid: main}
    seen_wire = False
    for n, _raw, obj in log.json_lines(data):
        where = f"{log.name}:{n}"
        if obj.get("type") == "metadata":
            seen_wire = True
            log.skip("metadata")
            continue
        msg = mapping(obj.get("message"))
        if not isinstance(msg.get("type"), str):
            log.quarantine(where, "not a Kimi wire record (message.type)", _raw)
            continue
        seen_wire = True
        with log.guard(where, obj):
            at = obj.get("timestamp")
            thread, event = main, msg
            if msg["type"] == "SubagentEvent":
                payload = mapping(msg.get("payload"))
                cid = str(payload.get("task_tool_call_id") or "subagent")
                thread = threads.setdefault(f"{sid}:{cid}", _Thread(f"{sid}:{cid}", parent=sid))
                event = mapping(payload.get("event"))
            _apply(
                log, thread, str(event.get("type")), mapping(event.get("payload")), at, where, sub=thread is not main
            )
    if not seen_wire:
        log.error = "no line is a Kimi CLI wire record (metadata, TurnBegin, StepBegin, ...)"
        return []
    out = []
    for t in threads.values():
        out.append(
            Conversation(
                t.id,
                t.turns,
                provider="moonshot",
                model=t.model,
                created=t.created,
                parent=t.parent,
                events=t.events,
            )
        )
    return out


def _apply(log: Log, t: _Thread, kind: str, p: dict[str, Any], at: Any, where: str, sub: bool) -> None:
    t.created = t.created or at
    if kind == "TurnBegin":
        t.turns.append(
            Turn("user", _text(p.get("user_input")), at=at, id=f"{where}", origin="harness" if sub else "person")
        )
        t.step = None
    elif kind == "StepBegin":
        t.step = Turn("assistant", "", at=at, id=f"{where}")
        t.turns.append(t.step)
    elif kind == "ContentPart":
        if p.get("type") == "text" and isinstance(p.get("text"), str):
            _open(t, at, where).text += p["text"]
            log.skip("ContentPart (-> its step's message)")
        else:
            log.skip(f"ContentPart:{str(p.get('type'))[:30]}")
    elif kind == "ToolCall":
        fn = mapping(p.get("function"))
        _open(t, at, where).calls.append(ToolCall(fn.get("name"), fn.get("arguments"), p.get("id")))
        log.skip("ToolCall (-> its step's message)")
    elif kind == "ToolCallPart":
        step = t.step
        part = p.get("arguments_part")
        if step is not None and step.calls and isinstance(part, str):
            last = step.calls[-1]
            last.arguments = (last.arguments if isinstance(last.arguments, str) else "") + part
        log.skip("ToolCallPart (-> its call's arguments)")
    elif kind == "ToolResult":
        rv = mapping(p.get("return_value"))
        out = rv.get("output")
        text = out if isinstance(out, str) else _text(out)
        if not text and isinstance(rv.get("message"), str):
            text = rv["message"]
        err = rv.get("is_error")
        t.turns.append(
            Turn(
                "tool",
                text,
                answers=p.get("tool_call_id"),
                at=at,
                id=f"{where}",
                is_error=err if isinstance(err, bool) else None,
                origin="tool_result",
            )
        )
    elif kind == "StatusUpdate":
        u = mapping(p.get("token_usage"))
        if u and t.step is not None:
            t.step.usage.append(
                Usage(
                    input_tokens=u.get("input_other"),
                    output_tokens=u.get("output"),
                    cache_read_input_tokens=u.get("input_cache_read"),
                    cache_creation_input_tokens=u.get("input_cache_creation"),
                    message_id=p.get("message_id") if isinstance(p.get("message_id"), str) else None,
                )
            )
            log.skip("StatusUpdate (-> message_usage)")
        else:
            log.skip("StatusUpdate")
    elif kind == "CompactionBegin":
        t.events.append(Event("compaction", len(t.turns)))
        log.skip("CompactionBegin (-> events)")
    else:
        log.skip(kind[:60] if kind in SKIPPED else f"{kind[:60]} (not read)")


def _open(t: _Thread, at: Any, where: str) -> Turn:
    """The step's assistant message (one is opened when a part arrives outside a step)."""
    if t.step is None:
        t.step = Turn("assistant", "", at=at, id=f"{where}:step")
        t.turns.append(t.step)
    return t.step


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "\n".join(p["text"] for p in v if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _first_role(data: bytes) -> bool:
    """The first line is a context record (``{"role": ...}``), not a wire one."""
    first = data.lstrip().split(b"\n", 1)[0]
    try:
        obj = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(obj, dict) and "role" in obj and "message" not in obj


def _sniff(probe: Probe) -> bool:
    recs = [r for r in probe.records if isinstance(r, dict)]
    if not recs:
        return False
    if kimi_context.looks_like(probe):
        return True
    first = recs[0]
    if first.get("type") == "metadata" and "protocol_version" in first:
        return True
    return all(isinstance(mapping(r.get("message")).get("type"), str) and "timestamp" in r for r in recs) and any(
        mapping(r.get("message")).get("type") in ("TurnBegin", "StepBegin", "ContentPart") for r in recs
    )


FORMAT = Format(
    "kimi-cli",
    "Kimi CLI sessions, ~/.kimi/sessions/<dir hash>/<session>/wire.jsonl (turns, steps, "
    "tool calls and results, token usage, sub-agents); up to 0.58 <dir hash>/<session>.jsonl (the context)",
    _sniff,
    read=read,
    suffixes=(".jsonl",),
    sides=(
        Side("context.jsonl", "wire.jsonl", "the model's current context (rewritten on compaction)", read=False),
        Side("context_*.jsonl", "wire.jsonl", "an older or a sub-agent's context", read=False),
        Side("state.json", "wire.jsonl", "the session's approval state", read=False),
    ),
    claims=("*/.kimi/sessions/*/*/wire.jsonl", "*/.kimi/sessions/*/*.jsonl"),
)
