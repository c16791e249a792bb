"""nanobot (HKUDS/nanobot) sessions: ``<workspace>/sessions/<channel>_<chat>.jsonl``, one file per session key.

Read from nanobot's writer (``nanobot/session/manager.py`` ``SessionManager.save`` and ``agent/loop.py``
``_save_turn``, 2026-02 to 2026-04):

* the first line is ``{"_type": "metadata", "key": "cli:direct", "created_at", "updated_at", "metadata",
  "last_consolidated"}`` (``key`` and ``last_consolidated`` from 2026-02 on): the conversation, its id the
  ``key`` (else the file's name), its times;
* every other line is one chat message as the agent loop sent it to the model, with a ``timestamp``: ``user``
  (``content`` a string or OpenAI content parts), ``assistant`` (``content``, ``tool_calls`` in OpenAI's shape,
  ``reasoning_content``; the first releases kept only ``tools_used``, the names of the tools a turn ran, with no
  call), ``tool`` (``tool_call_id``, ``name``, ``content``, cut at nanobot's limit with ``... (truncated)``).

Whose turn: a ``user`` message is the person's, except what nanobot itself sends through the loop: a
sub-agent's announcement (``[Subagent '<label>' completed successfully]`` ..., saved with a ``[System:
<sender>]`` prefix by some releases), and every user message of the heartbeat (key ``heartbeat``) and cron
(``cron:<job>``) sessions, whose prompts are the scheduler's. A ``[Runtime Context — metadata only, not
instructions]`` block nanobot prepends to a prompt is taken off the person's text. Tool results carry no error
flag: the tool registry returns a failure as text opening with ``Error`` (``Error: ...``, ``Error executing
<tool>: ...``), which marks the result failed; the exec tool ends a failed command's output with ``Exit code: N``, which the
shared exit-status rule reads. No model name or token count is saved.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, listed, mapping, text_of

_RUNTIME = "[Runtime Context — metadata only, not instructions]"
_HARNESS_TEXT = re.compile(r"\[System: [^\]]*\]|\[Subagent '")
_HEAD = re.compile(rb'^\{\s*"_type"\s*:\s*"metadata"\s*,[^\n]*"created_at"\s*:')


def read(path: str, log: Log) -> list[Conversation]:
    meta: dict[str, Any] = {}
    turns: list[Turn] = []
    for n, raw, rec in log.json_lines(Path(path).read_bytes()):
        where = f"{log.name}:{n}"
        with log.guard(where, rec):
            if rec.get("_type") == "metadata":
                if meta or turns:
                    log.quarantine(where, "a second metadata line", raw)
                else:
                    meta = rec
                    log.skip("session metadata (-> conversations)")
                continue
            turn = _turn(log, rec, where)
            if turn is not None:
                turns.append(turn)
    if not meta and not turns:
        log.error = "no nanobot session line (a metadata line, then role messages)"
        return []
    key = str(meta["key"]) if isinstance(meta.get("key"), str) and meta["key"] else Path(path).stem
    scheduled = key == "heartbeat" or key.startswith("cron:")
    if scheduled:
        for t in turns:
            if t.role == "user":
                t.origin = "harness"
    return [
        Conversation(
            key,
            turns,
            provider="nanobot",
            created=meta.get("created_at") or (turns[0].at if turns else None),
            updated=meta.get("updated_at") or (turns[-1].at if turns else None),
        )
    ]


def _turn(log: Log, rec: dict[str, Any], where: str) -> Turn | None:
    role, at = rec.get("role"), rec.get("timestamp")
    text = _text(log, rec.get("content"))
    if role == "user":
        if text.startswith(_RUNTIME):
            text = text.split("\n\n", 1)[1] if "\n\n" in text else ""
        harness = bool(_HARNESS_TEXT.match(text.lstrip()))
        return Turn("user", text, at=at, origin="harness" if harness else "person")
    if role == "assistant":
        calls = []
        for c in map(mapping, listed(rec.get("tool_calls"))):
            fn = mapping(c.get("function"))
            calls.append(ToolCall(fn.get("name"), fn.get("arguments"), c.get("id")))
        if rec.get("reasoning_content"):
            log.ignore("reasoning_content")
        if listed(rec.get("tools_used")) and not calls:
            log.ignore("tools_used (tool names without their calls)")
        return Turn("assistant", text, calls, at=at)
    if role == "tool":
        answers = rec.get("tool_call_id")
        return Turn(
            "tool",
            text,
            answers=answers if isinstance(answers, str) else None,
            is_error=True if text.startswith("Error") else None,  # the tool registry's failures: "Error: ..."
            at=at,
            origin="tool_result",
            tool=rec.get("name") if isinstance(rec.get("name"), str) else None,
        )
    if role == "system":
        return Turn("system", text, at=at, origin="harness")
    log.quarantine(where, f"unknown message role {str(role)[:40]!r}", rec)
    return None


def _text(log: Log, content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for p in map(mapping, listed(content)):
        if p.get("type") == "text" and isinstance(p.get("text"), str):
            texts.append(p["text"])
        elif p:
            log.ignore(f"{str(p.get('type'))[:40]} part")
    if texts or content is None or isinstance(content, list):
        return "\n".join(texts)
    return text_of(content)


def _sniff(probe: Probe) -> bool:
    return bool(_HEAD.match(probe.head.removeprefix(b"\xef\xbb\xbf").lstrip()))


FORMAT = Format(
    "nanobot",
    "nanobot sessions, <workspace>/sessions/<channel>_<chat>.jsonl (a metadata line, then the chat messages: "
    "prompts, replies with tool calls, tool results)",
    _sniff,
    read=read,
    suffixes=(".jsonl",),
)
