"""Continue.dev sessions: ``~/.continue/sessions/<session id>.json``, one conversation each.

A session is ``{"sessionId", "title", "workspaceDirectory", "history": [ChatHistoryItem]}``; each item holds a
``message`` (``user``, ``assistant``, ``thinking``, ``system`` or ``tool``: ``content`` a string or parts, an
assistant's ``toolCalls`` and ``usage``, a tool message's ``toolCallId``), the ``contextItems`` attached to
it, and for tool calls ``toolCallState``/``toolCallStates`` (status and ``output``). A call whose result
lives only in its state (versions before tool messages) gets a tool message from that output; ``errored``
and ``canceled`` results are errors. ``thinking`` messages are skipped and counted; a
``conversationSummary`` is a compaction; a reasoning model's ``reasoning`` beside its reply is counted, not
read. ``sessions.json`` beside the sessions (the index) is a side file: it gives each session's creation
time and is named in the run's note, never imported as a session.

Covered: the 2023 Python server's sessions (``session_state.history`` steps, or the older
``history.timeline``: a ``UserInputStep`` is the person's, a visible step's description the reply), 0.8.x
(2024: items ``{message, contextItems, editorState, promptLogs}``), 2025 (``reasoning``,
``isGatheringContext``, ``appliedRules``), agent mode 2025-26 (``toolCalls``/``toolCallStates`` with the
result in the state's ``output``, a top-level ``usage`` total, per-reply ``usage`` in Continue's camelCase
or a provider's snake_case). A newer layout imports what it shares with these; an unknown role is
quarantined with its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import (
    Conversation,
    Event,
    Log,
    ToolCall,
    Turn,
    Usage,
    listed,
    mapping,
    read_side,
    text_of,
)

ERRORED = ("errored", "canceled", "cancelled")
INDEX = "sessions.json"


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes())
    steps = _steps(doc)
    if steps is not None:
        return [_python_era(log, doc, steps, Path(path))]
    if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        log.error = "not a Continue session (sessionId and a history list)"
        return []
    sid = str(doc.get("sessionId") or Path(path).stem)
    turns: list[Turn] = []
    events: list[Event] = []
    answered: set[str | None] = set()
    states: dict[Any, dict[str, Any]] = {}  # call id -> its toolCallState
    for _, where, item in log.objects(doc["history"], f"{log.name}:history", "history item"):
        with log.guard(where, item):
            _item(log, item, turns, events, answered, states)
    out: list[Turn] = []
    for t in turns:
        out.append(t)
        if isinstance(t, _Assistant):
            out.extend(r for r in t.state_results if r.answers not in answered)
    at = {id(t): k for k, t in enumerate(out)}
    for ev in events:  # indices into turns -> into out
        ev.before = at[id(turns[ev.before])] if isinstance(ev.before, int) and ev.before < len(turns) else None
    if isinstance(doc.get("usage"), dict):  # the session's running total; each reply's own usage is read
        log.ignore("session usage total")
    return [
        Conversation(
            sid,
            out,
            title=doc.get("title"),
            created=_created(Path(path), sid, log),
            events=events,
            model=doc.get("chatModelTitle") if isinstance(doc.get("chatModelTitle"), str) else None,
        )
    ]


@dataclass
class _Assistant(Turn):
    state_results: list[Turn] = field(default_factory=list)  # used when no tool message answers the call


def _item(
    log: Log,
    item: dict[str, Any],
    turns: list[Turn],
    events: list[Event],
    answered: set[str | None],
    states: dict[Any, dict[str, Any]],
) -> None:
    m = message if isinstance(message := item.get("message"), dict) else item  # the oldest sessions: bare messages
    role = m.get("role")
    if isinstance(item.get("conversationSummary"), str):
        events.append(Event("compaction", len(turns), detail={"summary": item["conversationSummary"]}))
    if role == "thinking":
        log.skip("thinking")
        return
    if isinstance(item.get("reasoning"), dict):  # a reasoning model's thoughts beside its reply (2025)
        log.ignore("reasoning")
    text = text_of(m.get("content"))
    if role == "tool":
        cid = m.get("toolCallId")
        answered.add(cid)
        state = states.get(cid, {})
        turns.append(Turn("tool", text, answers=cid, is_error=state.get("status") in ERRORED or None))
        return
    if role != "assistant":
        turns.append(Turn(role if isinstance(role, str) else "?", text))
        return
    calls = [
        ToolCall(mapping(c.get("function")).get("name"), mapping(c.get("function")).get("arguments"), c.get("id"))
        for c in listed(m.get("toolCalls"))
        if isinstance(c, dict)
    ]
    mine = [s for s in item.get("toolCallStates") or [item.get("toolCallState")] if isinstance(s, dict)]
    states.update((s.get("toolCallId"), s) for s in mine)
    if not calls:
        calls = [
            ToolCall(
                mapping(mapping(s.get("toolCall")).get("function")).get("name"),
                mapping(mapping(s.get("toolCall")).get("function")).get("arguments"),
                s.get("toolCallId"),
            )
            for s in mine
        ]
    turn = _Assistant("assistant", text, calls=calls)
    u = given if isinstance(given := m.get("usage"), dict) else None
    if u is not None:  # core's Usage (camelCase); some 2025 builds wrote the provider's snake_case object
        details = mapping(u.get("promptTokensDetails") or u.get("prompt_tokens_details"))
        cached = details.get("cachedTokens", details.get("cached_tokens"))
        prompt = u.get("promptTokens", u.get("prompt_tokens"))
        turn.usage.append(
            Usage(
                prompt_tokens=prompt,
                output_tokens=u.get("completionTokens", u.get("completion_tokens")),
                cache_read_input_tokens=cached,
                cache_creation_input_tokens=details.get("cacheWriteTokens"),
                model=u.get("model") if isinstance(u.get("model"), str) else None,
            )
        )
    turns.append(turn)
    for s in mine:  # a result only its call's state holds (sessions from before tool messages): after the call
        out = s.get("output")
        if isinstance(out, list):
            turn.state_results.append(
                Turn(
                    "tool",
                    "\n".join(text_of(o.get("content")) for o in out if isinstance(o, dict)),
                    answers=s.get("toolCallId"),
                    is_error=s.get("status") in ERRORED,
                )
            )


def _steps(doc: Any) -> list[Any] | None:
    """The steps of a session of the 2023 Python server, or None: ``{session_state: {history: [step]}}``
    (late 2023) or ``{history: {timeline: [{step, depth}]}, session_info}`` (mid 2023)."""
    if not isinstance(doc, dict):
        return None
    state = doc.get("session_state")
    if isinstance(state, dict) and isinstance(history := state.get("history"), list):
        return history
    hist = doc.get("history")
    if isinstance(hist, dict) and isinstance(hist.get("timeline"), list):
        return [
            {**mapping(n.get("step")), "depth": n.get("depth")} if isinstance(n, dict) else n for n in hist["timeline"]
        ]
    return None


def _python_era(log: Log, doc: dict[str, Any], steps: list[Any], path: Path) -> Conversation:
    """Steps (``server/continuedev/core/main.py`` StepDescription): a ``UserInputStep`` is the person's
    input (its description), a visible step with a description the model's reply; hidden steps are the
    server's bookkeeping, skipped and counted."""
    turns: list[Turn] = []
    for _, _where, step in log.objects(steps, f"{log.name}:history", "step"):
        kind = step.get("step_type") or step.get("class_name")
        text = given if isinstance(given := step.get("description"), str) else ""
        if kind == "UserInputStep":
            turns.append(
                Turn("user", text or str(mapping(step.get("params")).get("user_input") or ""), origin="person")
            )
        elif step.get("hide") or not text.strip():
            log.skip(f"step {str(kind)[:40]} (hidden or empty)")
        else:
            turns.append(Turn("assistant", text, is_error=bool(step.get("error")) or None))
    info = mapping(doc.get("session_info"))
    sid = str(doc.get("session_id") or info.get("session_id") or path.stem)
    return Conversation(
        sid,
        turns,
        title=doc.get("title") or info.get("title"),
        created=info.get("date_created") or _created(path, sid, log),
    )


def _created(path: Path, sid: str, log: Log) -> Any:
    """The session's creation time from the index beside it (``sessions.json``, a side file read with it)."""
    index = path.parent / INDEX
    try:
        rows = values.loads(read_side(index))
    except (OSError, ValueError):
        return None
    log.notes.append(f"read with it: {INDEX} (the session index)")
    row = (
        next((r for r in rows if isinstance(r, dict) and r.get("sessionId") == sid), None)
        if isinstance(rows, list)
        else None
    )
    return row.get("dateCreated") if row else None


def _sniff(probe: Probe) -> bool:
    head = probe.head.lstrip()
    if head[:1] != b"{":
        return False
    if b'"session_state"' in probe.head[:4096] or b'"timeline"' in probe.head and b'"session_info"' in probe.head:
        return _steps(probe.document) is not None if probe.complete else True  # the 2023 Python server's
    return (
        b'"sessionId"' in probe.head[:8192]
        and b'"history"' in probe.head[:8192]
        and b'"projectHash"' not in probe.head[:4096]
    )


FORMAT = Format(
    "continue",
    "Continue.dev sessions, ~/.continue/sessions/<id>.json",
    _sniff,
    read=read,
    suffixes=(".json",),
    claims=("*/.continue/sessions/*.json",),
    sides=(
        Side(
            "sessions.json", "????????-????-????-????-????????????.json", "the index of the sessions: titles and dates"
        ),
    ),
)
