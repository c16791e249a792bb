"""Hermes Agent (NousResearch/hermes-agent) session logs: ``~/.hermes/sessions/session_<id>.json``.

Read from the writer, ``run_agent.py`` ``AIAgent._save_session_log`` (2026), which rewrites the file after each
turn: ``{"session_id", "model", "base_url", "platform", "session_start", "last_updated", "system_prompt",
"tools", "message_count", "messages"}``; ``messages`` are the chat messages exactly as the agent sent them
(OpenAI's shape: ``user``, ``assistant`` with ``tool_calls``, ``reasoning``, ``finish_reason``, ``tool`` with
``tool_call_id``; ``system`` messages it injected).

One conversation per file: ``session_id``, ``model``, ``session_start``/``last_updated``; the
``system_prompt`` is its first turn (harness). A ``user`` message is the person's, except the text Hermes
itself sends as the user (from ``run_agent.py``, ``agent/context_compressor.py``, ``tools/todo_tool.py``): the
background review prompts (``Review the conversation above and consider saving ...``), its nudges (``You just
executed tool calls but returned an empty response...``, ``You've reached the maximum number of tool-calling
iterations...``), ``[System: ...]`` notes, a compaction summary (``[CONTEXT COMPACTION — REFERENCE ONLY]``,
earlier ``[CONTEXT SUMMARY]:``; also a compaction event) and the preserved task list: those are ``harness``.
A skill the person invoked (``[SYSTEM: The user has invoked the "<skill>" skill ...]``, the skill's body, then
``The user has provided the following instruction alongside the skill invocation: ...``) stays the person's.
A tool result failed when it is Hermes' JSON error (``{"error": ...}``). No token count is in the file (Hermes
keeps them in its ``state.db``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, listed, mapping, text_of

_SKILL = '[SYSTEM: The user has invoked the "'
_HARNESS = re.compile(
    r"\s*(?:\[System: |\[SYSTEM: |Review the conversation above and consider saving |You just executed tool calls "
    r"but returned an empty response|You've reached the maximum number of tool-calling iterations|"
    r"\[CONTEXT COMPACTION|\[CONTEXT SUMMARY\]:|\[Your active task list was preserved)"
)
_COMPACTION = re.compile(r"\s*(?:\[CONTEXT COMPACTION|\[CONTEXT SUMMARY\]:)")
_HEAD = re.compile(rb'^\{\s*"session_id"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"model"\s*:')


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes(), null=[])  # JSON null: a document of another shape, said below
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        if doc is not None:
            log.error = "not a Hermes Agent session log (an object with session_id, model and messages)"
        return []
    turns: list[Turn] = []
    events: list[Event] = []
    if isinstance(doc.get("system_prompt"), str) and doc["system_prompt"]:
        turns.append(Turn("system", doc["system_prompt"], origin="harness"))
    for _, where, m in log.objects(doc["messages"], "messages", "message"):
        log.rows += 1
        with log.guard(where, m):
            role = m.get("role")
            text = text_of(m.get("content"))
            if role == "user":
                harness = bool(_HARNESS.match(text)) and not text.startswith(_SKILL)
                if _COMPACTION.match(text):
                    events.append(Event("compaction", len(turns), trigger="compress"))
                turns.append(Turn("user", text, origin="harness" if harness else "person"))
            elif role == "assistant":
                calls = []
                for c in map(mapping, listed(m.get("tool_calls"))):
                    fn = mapping(c.get("function"))
                    calls.append(ToolCall(fn.get("name"), fn.get("arguments"), c.get("id")))
                if m.get("reasoning"):
                    log.ignore("reasoning")
                turns.append(Turn("assistant", text, calls))
            elif role == "tool":
                answers = m.get("tool_call_id")
                turns.append(
                    Turn(
                        "tool",
                        text,
                        answers=answers if isinstance(answers, str) else None,
                        is_error=True if _error(text) else None,
                        origin="tool_result",
                        tool=m.get("tool_name") if isinstance(m.get("tool_name"), str) else None,
                    )
                )
            elif role == "system":
                turns.append(Turn("system", text, origin="harness"))
            else:
                log.quarantine(where, f"unknown message role {str(role)[:40]!r}", m)
    sid = doc.get("session_id")
    model = doc.get("model")
    return [
        Conversation(
            str(sid) if isinstance(sid, str) and sid else Path(path).stem,
            turns,
            provider="hermes",
            model=model if isinstance(model, str) and model else None,
            created=doc.get("session_start"),
            updated=doc.get("last_updated"),
            events=events,
        )
    ]


def _error(text: str) -> bool:
    """Hermes' tools answer a failure with a JSON object holding ``error``."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        v: Any = values.loads(text)
    except ValueError:
        return False
    return isinstance(v, dict) and bool(v.get("error"))


def _sniff(probe: Probe) -> bool:
    head = probe.head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return bool(_HEAD.match(head)) and b'"session_start"' in head[:4096] and b'"platform"' in head[:4096]


FORMAT = Format(
    "hermes",
    "Hermes Agent session logs, ~/.hermes/sessions/session_<id>.json (the system prompt, the chat messages with "
    "tool calls and results; Hermes' own review prompts and nudges as harness)",
    _sniff,
    read=read,
    suffixes=(".json",),
)
