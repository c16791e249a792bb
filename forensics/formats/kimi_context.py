"""Kimi CLI's context file, the whole session of Kimi CLI up to 0.58 (to 2025-11): one JSONL file per session,
``~/.kimi/sessions/<work dir hash>/<session id>.jsonl`` (from 0.59 the same lines are the session folder's
``context.jsonl``, a side file of its ``wire.jsonl``; kimi_cli.py reads that one). Each line is a message as the
model sees it, or a marker (``kimi_cli/soul/context.py``):

* ``{"role": "user", "content"}``: the person's prompt; one whose text parts are all ``<system>…</system>``
  (``CHECKPOINT n``, a D-Mail) was written by Kimi CLI (harness), and so is every prompt of a sub-agent's file
  (``<session id>_sub_<n>.jsonl``, written by the parent model; its conversation is linked to the session);
* ``{"role": "assistant", "content", "tool_calls"}``: one model response (``text`` parts; ``think`` parts are
  reasoning, left out) and its calls (``id``, ``function.name``, ``function.arguments``);
* ``{"role": "tool", "tool_call_id", "content"}``: a call's result, failed when its first part is
  ``<system>ERROR: …</system>`` (``soul/message.py`` ``tool_result_to_messages``, 0.43 and later); up to 0.42 a
  failure read ``<system>{message}</system>`` like a success: in a file with no ``ERROR:`` mark the results are
  left to the content rules (``is_error`` unknown);
* ``{"role": "_usage", "token_count"}``: written twice a step, before the response with the step's input tokens
  (``usage.input``, the cache's included) and after it with input + output (``usage.total``): the response's
  usage is the pair; a ``_usage`` that follows no response (after a compaction) is the context's size, no spend;
* ``{"role": "_checkpoint", "id"}``: a checkpoint ``/revert`` and D-Mail go back to (skipped, counted);
* ``{"role": "_system_prompt", "content"}`` (0.80+ ``context.jsonl``): the system prompt (harness).

The file has no timestamp, model or work folder. Seen on a real Kimi CLI 0.42 session (fixtures/real/kimi_cli).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.kit.declare import Probe
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, Usage, mapping, text_of

MARKERS = ("_checkpoint", "_usage", "_system_prompt")
# a sub-agent's context beside its session's: <session id>_sub_<n>.jsonl (the Task tool), or another tool's
# (<session id>_read_<n>.jsonl in a fork of 0.42); <session id>_<n>.jsonl is an older context rotated by /revert
SUB_AGENT = re.compile(r"^(?P<session>.+)_(?P<kind>[a-z]+)_(?P<n>[0-9]+)$")
ROLES = ("user", "assistant", "tool", "system", *MARKERS)


def looks_like(probe: Probe) -> bool:
    """Every record is a message or marker of the context file, and one at least is a marker."""
    recs = [r for r in probe.records if isinstance(r, dict)]
    return (
        bool(recs)
        and all(r.get("role") in ROLES for r in recs)
        and any(r.get("role") in ("_checkpoint", "_usage") for r in recs)
    )


def _system_only(content: Any) -> bool:
    """Text written by Kimi CLI itself: every text part wrapped in <system> tags."""
    parts = [p for p in (content if isinstance(content, list) else [content]) if p]
    texts = [p if isinstance(p, str) else mapping(p).get("text") for p in parts]
    return bool(texts) and all(
        isinstance(t, str) and t.strip().startswith("<system>") and t.strip().endswith("</system>") for t in texts
    )


def _failed(content: Any) -> bool:
    first = content[0] if isinstance(content, list) and content else content
    text = first if isinstance(first, str) else mapping(first).get("text")
    return isinstance(text, str) and text.startswith("<system>ERROR:")


def _flags_errors(data: bytes) -> bool:
    """Kimi CLI 0.43 and later mark a failed call's result ``<system>ERROR: …``; up to 0.42 a failure read
    ``<system>{message}</system>`` like a success, so a file with no such mark says nothing either way."""
    return b'"<system>ERROR:' in data


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    sid = Path(path).stem
    sub = SUB_AGENT.match(sid)
    turns: list[Turn] = []
    step_input: int | None = None  # the last _usage written before a response: its input tokens
    answered: Turn | None = None  # the response whose closing _usage is still to come
    flagged = _flags_errors(data)
    for n, raw, obj in log.json_lines(data):
        where = f"{log.name}:{n}"
        role = obj.get("role")
        if role not in ROLES:
            log.quarantine(where, "not a Kimi CLI context record (role)", raw)
            continue
        with log.guard(where, obj):
            content = obj.get("content")
            if role == "_checkpoint":
                log.skip("_checkpoint")
            elif role == "_usage":
                count = obj.get("token_count")
                if not isinstance(count, int):
                    log.skip("_usage (no token_count)")
                elif answered is not None and step_input is not None and step_input <= count:
                    answered.usage.append(Usage(prompt_tokens=step_input, output_tokens=count - step_input))
                    answered, step_input = None, None
                    log.skip("_usage (-> message_usage)")
                else:
                    answered, step_input = None, count
                    log.skip("_usage")
            elif role in ("_system_prompt", "system"):
                turns.append(Turn("system", text_of(content), id=where, origin="harness"))
            elif role == "user":
                origin = "harness" if sub or _system_only(content) else "person"
                turns.append(Turn("user", text_of(content), id=where, origin=origin))
            elif role == "assistant":
                calls = []
                for c in obj.get("tool_calls") or []:
                    fn = mapping(mapping(c).get("function"))
                    calls.append(ToolCall(fn.get("name"), fn.get("arguments"), mapping(c).get("id")))
                answered = Turn("assistant", text_of(content), calls=calls, id=where)
                turns.append(answered)
            else:  # tool
                turns.append(
                    Turn(
                        "tool",
                        text_of(content),
                        answers=obj.get("tool_call_id"),
                        is_error=_failed(content) if flagged else None,
                        id=where,
                        origin="tool_result",
                    )
                )
    if not turns:
        log.error = "no line is a Kimi CLI context message (user, assistant, tool)"
        return []
    asked = [t.text for t in turns if t.role == "user" and t.text.strip()]  # a sub-agent's: its task
    title = next((t.text for t in turns if t.origin == "person" and t.text.strip()), asked[0] if asked else None)
    parent = sub["session"] if sub else None
    return [Conversation(sid, turns, title=title[:200] if title else None, provider="moonshot", parent=parent)]
