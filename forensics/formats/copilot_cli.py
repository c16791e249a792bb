"""GitHub Copilot CLI sessions: ``~/.copilot/session-state/<session id>/events.jsonl`` (and the VS Code Copilot
agent's sessions, written by the same ``copilot-agent`` producer).

Each line is one event ``{type, data, id, timestamp, parentId}`` (the CLI's ``session-events`` schema, the one
the Copilot SDK documents). What a conversation is made of:

* ``user.message``: the person's turn. ``data.content`` is what was typed (a slash command such as ``/init``
  stays as typed: the expanded template is ``data.transformedContent``, the model's view, not kept as the
  person's words). The VS Code agent writes the request inside ``<userRequest>`` after its own
  ``<reminder>``/``<attachments>``: the text inside ``<userRequest>`` is the person's. A ``user.message`` with a
  ``data.source`` is the CLI's, not the person's (harness): 1.0.72 writes ``source: system`` (empty) and
  ``source: instruction-discovery`` (an AGENTS.md it found, inside ``<system_reminder>``).
* ``system.message``: the system prompt (harness).
* ``assistant.message``: the model's text and its ``toolRequests`` (``toolCallId``, ``name``, ``arguments``);
  ``data.model`` names the model that wrote it; ``data.outputTokens`` (1.0.72) its output tokens, kept when the
  file has no ``session.shutdown`` (a session still running, or cut before it ended), whose totals hold them.
* ``tool.execution_complete``: a call's result (``success``; ``result.content`` or ``error.message``), linked by
  ``toolCallId``. ``tool.execution_start`` repeats the request: skipped.
* ``session.shutdown``: the session's tokens per model (``modelMetrics.<model>.usage``: ``inputTokens``, the
  cache's included, ``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens``). A resumed session writes one
  shutdown per run; each counts from the session's start (``sessionStartTime`` stays the first), so a run's
  usage is the difference from the shutdown before it. It is put on the last assistant message of that model.
* ``session.compaction_complete`` and ``session.truncation``: the context was cut (events).

Everything else (``session.start``/``resume``/``info``/``error``/``model_change``, ``assistant.turn_start``/
``turn_end``/``reasoning``, ``hook.*``, ``permission.*``, ``abort``, ``subagent.*``, and any type a later
version adds) holds no message: skipped and counted by type. Seen on real files of Copilot CLI 1.0.60
(2026-06), 1.0.72-1 (2026-07, a running session as the Entire CLI saved it) and of the VS Code agent
(``copilotVersion: unknown``, 2026-03/04); docs/formats.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, mapping, text_of

PRODUCER = "copilot-agent"
MESSAGE_TYPES = ("user.message", "assistant.message", "system.message", "tool.execution_complete")
KNOWN = MESSAGE_TYPES + (
    "session.start",
    "session.resume",
    "session.shutdown",
    "session.model_change",
    "assistant.turn_start",
    "tool.execution_start",
)
REQUEST = re.compile(r"<userRequest>\n?(.*?)\n?</userRequest>", re.DOTALL)
CUTS = {"session.compaction_complete": "compaction", "session.truncation": "truncation"}
USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    meta: dict[str, Any] = {}
    turns: list[Turn] = []
    events: list[Event] = []
    model: str | None = None
    totals: dict[str, dict[str, int]] = {}  # model -> the previous shutdown's counts
    usage: dict[str, Usage] = {}  # model -> this session's usage so far (summed over runs)
    own: list[tuple[Turn, Usage]] = []  # each response's own output tokens, used when no shutdown counted them
    for n, _raw, obj in log.json_lines(data):
        kind, body = obj.get("type"), mapping(obj.get("data"))
        if not isinstance(kind, str) or "data" not in obj:
            log.quarantine(f"{log.name}:{n}", "not a Copilot session event (type and data)", _raw)
            continue
        with log.guard(f"{log.name}:{n}", obj):
            at, eid = obj.get("timestamp"), obj.get("id")
            if kind == "session.start":
                meta = body
                model = _str(body.get("selectedModel")) or model
                log.skip(kind)
            elif kind in ("session.resume", "session.model_change"):
                model = _str(body.get("newModel")) or _str(body.get("selectedModel")) or model
                log.skip(kind)
            elif kind == "user.message":
                if _str(body.get("source")) in (None, "user"):
                    turns.append(Turn("user", _person(body), at=at, id=eid, origin="person"))
                else:  # the CLI's own message: an instruction file it found, a system notice
                    turns.append(Turn("user", text_of(body.get("content")), at=at, id=eid, origin="harness"))
            elif kind == "system.message":
                turns.append(Turn("system", text_of(body.get("content")), at=at, id=eid, origin="harness"))
            elif kind == "assistant.message":
                m = _str(body.get("model")) or model
                calls = [
                    ToolCall(_str(r.get("name")), r.get("arguments"), _str(r.get("toolCallId")))
                    for r in body.get("toolRequests") or []
                    if isinstance(r, dict)
                ]
                t = Turn("assistant", text_of(body.get("content")), calls, at=at, id=eid)
                t.about = m  # the model of this message, read back when the session's usage is placed
                out = body.get("outputTokens")
                if isinstance(out, int) and not isinstance(out, bool) and out > 0:
                    own.append((t, Usage(output_tokens=out, model=m)))
                turns.append(t)
            elif kind == "tool.execution_complete":
                turns.append(_result(body, at, eid))
            elif kind == "session.shutdown":
                _shutdown(body, totals, usage)
                log.skip("session.shutdown (-> message_usage)")
            elif kind in CUTS:
                events.append(
                    Event(
                        CUTS[kind],
                        len(turns),
                        detail={k: v for k, v in body.items() if isinstance(v, (int, str, bool))},
                    )
                )
                log.skip(f"{kind} (-> events)")
            else:
                log.skip(kind[:60])
    if not meta and not turns:
        log.error = "no line is a Copilot session event (session.start, user.message, ...)"
        return []
    if usage:
        _place(turns, usage, log)
    else:
        for t, u in own:
            t.usage.append(u)
    for t in turns:
        if t.role == "assistant":
            t.about = None
    first_model = next((u.model for u in usage.values()), None) or _str(meta.get("selectedModel"))
    sid = _str(meta.get("sessionId")) or Path(path).parent.name
    return [
        Conversation(
            sid,
            turns,
            provider="github-copilot",
            model=first_model,
            created=meta.get("startTime"),
            events=events,
        )
    ]


def _person(body: dict[str, Any]) -> str:
    """What the person typed: ``content``, or the ``<userRequest>`` the VS Code agent wraps it in."""
    text = text_of(body.get("content"))
    m = REQUEST.search(text)
    return m.group(1) if m else text


def _result(body: dict[str, Any], at: Any, eid: Any) -> Turn:
    ok = body.get("success")
    res, err = mapping(body.get("result")), mapping(body.get("error"))
    text = text_of(res.get("content")) if res else text_of(err.get("message")) if err else ""
    return Turn(
        "tool",
        text,
        answers=_str(body.get("toolCallId")),
        at=at,
        id=eid,
        is_error=(not ok) if isinstance(ok, bool) else None,
        origin="tool_result",
    )


def _shutdown(body: dict[str, Any], totals: dict[str, dict[str, int]], usage: dict[str, Usage]) -> None:
    """Add one run's tokens per model: the difference from the previous shutdown when this one counts from the
    session's start (no figure went down), else the figures as they stand."""
    for name, metrics in mapping(body.get("modelMetrics")).items():
        now = {
            k: int(v)
            for k, v in mapping(mapping(metrics).get("usage")).items()
            if k in USAGE_KEYS and isinstance(v, int) and not isinstance(v, bool)
        }
        before = totals.get(name, {})
        run = (
            {k: now.get(k, 0) - before.get(k, 0) for k in USAGE_KEYS}
            if all(now.get(k, 0) >= before.get(k, 0) for k in USAGE_KEYS)
            else {k: now.get(k, 0) for k in USAGE_KEYS}
        )
        totals[name] = now
        u = usage.setdefault(
            name,
            Usage(
                prompt_tokens=0, output_tokens=0, cache_read_input_tokens=0, cache_creation_input_tokens=0, model=name
            ),
        )
        u.prompt_tokens += run["inputTokens"]
        u.output_tokens += run["outputTokens"]
        u.cache_read_input_tokens += run["cacheReadTokens"]
        u.cache_creation_input_tokens += run["cacheWriteTokens"]


def _place(turns: list[Turn], usage: dict[str, Usage], log: Log) -> None:
    """Each model's usage on the last assistant message it wrote (else the last assistant message)."""
    for name, u in usage.items():
        if not any((u.prompt_tokens, u.output_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens)):
            continue
        target = next((t for t in reversed(turns) if t.role == "assistant" and t.about == name), None) or next(
            (t for t in reversed(turns) if t.role == "assistant"), None
        )
        if target is None:
            log.notes.append(f"tokens of {name} with no assistant message to hold them: not counted")
            continue
        target.usage.append(u)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _sniff(probe: Probe) -> bool:
    for rec in probe.records:
        if not isinstance(rec, dict) or not isinstance(rec.get("data"), dict):
            return False
        if rec.get("type") == "session.start":
            return rec["data"].get("producer") == PRODUCER or "copilotVersion" in rec["data"]
        if rec.get("type") not in KNOWN:
            return False
    return bool(probe.records) and probe.path.name == "events.jsonl"


FORMAT = Format(
    "copilot-cli",
    "GitHub Copilot CLI sessions, ~/.copilot/session-state/<id>/events.jsonl "
    "(user, assistant and tool events; tokens per model at shutdown)",
    _sniff,
    read=read,
    suffixes=(".jsonl",),
    sides=(
        Side("vscode.metadata.json", "events.jsonl", "the VS Code session's metadata", read=False),
        Side("vscode.requests.metadata.json", "events.jsonl", "the VS Code requests' metadata", read=False),
        Side("rewind-snapshots/index.json", "../events.jsonl", "file backups for /rewind", read=False),
    ),
    claims=("*/session-state/*/events.jsonl",),
)
