"""The pi coding agent's sessions (badlogic/pi-mono, ``~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl``) and
OpenClaw's, which runs pi's agent and writes the same file (``~/.openclaw/agents/<agent>/sessions/<id>.jsonl``).

Read from pi's own description of the file (``packages/coding-agent/docs/session.md``, session-manager.ts):

* the first line is the header ``{"type": "session", "version", "id", "timestamp", "cwd"}`` (version 1, 2025,
  also ``provider``, ``modelId``, ``thinkingLevel``; a fork names ``parentSession`` or ``branchedFrom``);
* then entries ``{"type", "id", "parentId", "timestamp", ...}`` forming a tree (version 1 has no ids: a linear
  log). The current leaf is the last entry written; the main path runs from it up the ``parentId`` chain;
* ``message`` entries hold pi-ai's messages: ``user`` (the person's), ``assistant`` (content blocks ``text``,
  ``thinking`` (left out), ``toolCall`` {id, name, arguments}; ``provider``, ``model``, ``usage`` {input (no cache),
  output, cacheRead, cacheWrite}, ``stopReason``, ``errorMessage``), ``toolResult`` (``toolCallId``,
  ``isError``), and pi's own: ``bashExecution`` (a command the person ran with ``!``: its output goes to the model),
  ``custom`` (an extension's message), ``branchSummary``, ``compactionSummary`` (harness text);
* ``compaction`` (``summary``, ``tokensBefore``) is an event and the summary the model is given, ``branch_summary``
  and ``custom_message`` harness text; ``session_info`` names the session (title); ``model_change``,
  ``thinking_level_change``, ``custom`` (extension state), ``label`` hold no message (skipped, counted).

OpenClaw is told apart by what only it writes: ``custom`` entries ``model-snapshot`` and ``openclaw:*`` /
``openclaw.*``, messages of provider ``openclaw``, the sender envelope of its channels, or a path under
``agents/<agent>/sessions/``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import (
    Conversation,
    Event,
    Log,
    ToolCall,
    Turn,
    Usage,
    listed,
    mapping,
    text_of,
)

ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        # Oh My Pi (a pi fork, 2026): the system prompt, a title set later, a credential's hash, rules injected
        "session_init",
        "title_change",
        "credential_pin",
        "ttsr_injection",
    }
)
SKIPPED = (
    "model_change",
    "thinking_level_change",
    "custom",
    "label",
    "session_info",
    "title_change",
    "credential_pin",
    "ttsr_injection",
)
# Oh My Pi writes a title line before the header, padded so it can be rewritten in place; it is in no tree
TITLE_LINE = "title"
HARNESS_ROLES = {"custom": "custom message", "branchSummary": "branch summary", "compactionSummary": "compaction"}
OPENCLAW_MARKS = (
    b'"customType":"model-snapshot"',
    b'"customType":"openclaw',
    b'"provider":"openclaw"',
    b"Sender (untrusted metadata)",
)
OPENCLAW_PATH = re.compile(r"(?:^|/)(?:\.openclaw[^/]*|\.clawdbot|\.moltbot)/agents/[^/]+/sessions/[^/]+\.jsonl$")


def read(path: str, log: Log) -> list[Conversation]:
    entries: list[tuple[str, dict[str, Any]]] = []  # (where, entry) in file order
    header: dict[str, Any] = {}
    header_title: str | None = None
    for n, _, obj in log.json_lines(Path(path).read_bytes()):
        where = f"{log.name}:{n}"
        kind = obj.get("type")
        if not isinstance(kind, str):  # a list or an object of a damaged line: that line alone
            log.quarantine(where, f"entry type is not a string ({type(kind).__name__})", obj)
            continue
        if kind == "session" and not header and not entries:
            header = obj
        elif kind == TITLE_LINE and not header and not entries:
            if isinstance(obj.get("title"), str) and obj["title"].strip():
                header_title = obj["title"]
            log.skip("title line")
        elif kind in ENTRY_TYPES:
            entries.append((where, obj))
        else:
            log.quarantine(where, f"unknown entry type {str(kind)[:40]!r}", obj)
    if not header and not entries:
        if log.rows:
            log.error = "no session header and no entry: not a pi session file"
        return []
    tree = any(isinstance(e.get("id"), str) for _, e in entries)
    ids = [str(e["id"]) if tree and isinstance(e.get("id"), str) else f"e{i}" for i, (_, e) in enumerate(entries)]
    parents = {
        nid: (
            (str(e["parentId"]) if isinstance(e.get("parentId"), str) else None)
            if tree
            else (ids[i - 1] if i else None)
        )
        for i, (nid, (_, e)) in enumerate(zip(ids, entries))
    }
    main: set[str] = set()
    cur = ids[-1] if ids else None
    while cur is not None and cur not in main:
        main.add(cur)
        cur = parents.get(cur)
    turn_of: dict[str, str] = {}  # entry id -> id of the nearest turn at or above it

    def nearest(nid: str | None) -> str:
        seen = []
        while nid is not None and nid not in turn_of and nid in parents:
            seen.append(nid)
            nid = parents[nid]
        found = turn_of.get(nid, "") if nid is not None else ""
        for s in seen:
            turn_of.setdefault(s, found)
        return found

    turns: list[Turn] = []
    events: list[Event] = []
    title = header_title
    model = None
    for nid, (where, e) in zip(ids, entries):
        with log.guard(where, e):
            kind = e["type"]
            at = e.get("timestamp")
            new: list[Turn] = []
            if kind == "message":
                new = _message(mapping(e["message"]), nid, at, log)
                if not new:
                    log.quarantine(where, "message entry with no message", e)
            elif kind == "compaction":
                events.append(Event("compaction", len(turns), pre_tokens=e.get("tokensBefore")))
                new = [Turn("user", text_of(e.get("summary")), id=nid, at=at, origin="harness")]
            elif kind == "session_init" and isinstance(e.get("systemPrompt"), str):  # Oh My Pi: the system prompt
                new = [Turn("system", e["systemPrompt"], id=nid, at=at, origin="harness")]
            elif kind in ("branch_summary", "custom_message"):
                text = text_of(e.get("summary") if kind == "branch_summary" else e.get("content"))
                new = [Turn("user", text, id=nid, at=at, origin="harness")]
            else:
                if kind == "session_info" and isinstance(e.get("name"), str):
                    title = e["name"]
                elif kind == "title_change" and isinstance(e.get("title"), str) and e["title"].strip():
                    title = e["title"]
                log.skip(kind)
            if not new:
                turn_of[nid] = nearest(parents.get(nid))
                continue
            up = nearest(parents.get(nid))
            for k, t in enumerate(new):
                t.parent = up if k == 0 else new[k - 1].id
                t.main = nid in main
            turn_of[nid] = str(new[-1].id)
            turns.extend(new)
            model = model or next((u.model for t in new for u in t.usage if u.model), None)
    session_id = str(header.get("id") or Path(path).stem)
    return [
        Conversation(
            session_id,
            turns,
            title=title,
            provider=header.get("provider") if isinstance(header.get("provider"), str) else None,
            model=model or (header.get("modelId") if isinstance(header.get("modelId"), str) else None),
            created=header.get("timestamp"),
            workdir=header.get("cwd") if isinstance(header.get("cwd"), str) else None,
            events=events,
        )
    ]


def _message(m: dict[str, Any], nid: str, at: Any, log: Log) -> list[Turn]:
    role = m.get("role")
    content = m.get("content")
    if role == "user":
        return [Turn("user", text_of(content), id=nid, at=at, origin="person")]
    if role == "assistant":
        calls = []
        for block in listed(content):
            kind = mapping(block).get("type")
            if kind == "toolCall":
                calls.append(ToolCall(block.get("name"), block.get("arguments"), block.get("id")))
            elif kind not in ("text", None):
                log.ignore(f"{kind} block")
        text = text_of(content)
        if not text and not calls and isinstance(m.get("errorMessage"), str):
            text = f"[{m.get('stopReason') or 'error'}] {m['errorMessage']}"
        t = Turn("assistant", text, calls, id=nid, at=at)
        u = mapping(m.get("usage"))
        if u:
            t.usage.append(
                Usage(
                    input_tokens=u.get("input"),
                    output_tokens=u.get("output"),
                    cache_read_input_tokens=u.get("cacheRead"),
                    cache_creation_input_tokens=u.get("cacheWrite"),
                    model=m.get("model") if isinstance(m.get("model"), str) else None,
                )
            )
        return [t]
    if role == "toolResult":
        return [
            Turn(
                "tool",
                text_of(content),
                answers=m.get("toolCallId"),
                is_error=m["isError"] if isinstance(m.get("isError"), bool) else None,
                id=nid,
                at=at,
                origin="tool_result",
                tool=m.get("toolName") if isinstance(m.get("toolName"), str) else None,
            )
        ]
    if role == "developer":  # Oh My Pi's reminders to the model (``<system-reminder>``): its own text
        return [Turn("system", text_of(content), id=nid, at=at, origin="harness")]
    if role == "bashExecution":  # the person's `!command`: the command and its output go to the model
        text = f"!{m.get('command', '')}\n{m.get('output', '')}"
        return [Turn("user", text, id=nid, at=at, origin="harness")]
    if role in HARNESS_ROLES:
        text = text_of(m.get("summary") if "summary" in m else content)
        return [Turn("user", text, id=nid, at=at, origin="harness")]
    return []


def _pi_shaped(probe: Probe) -> bool:
    recs = [r for r in probe.records if isinstance(r, dict)]
    if not recs:
        return False
    if recs[0].get("type") == TITLE_LINE and len(recs) > 1:  # Oh My Pi: the title line, then the header
        recs = recs[1:]
    first = recs[0]
    if not (
        first.get("type") == "session"
        and isinstance(first.get("id"), str)
        and isinstance(first.get("timestamp"), str)
        and isinstance(first.get("cwd"), str)
    ):
        return False
    rest = [r for r in recs[1:] if isinstance(r.get("type"), str)]  # a damaged line's type tells nothing
    # a role beside a type is a chat message's, except Oh My Pi's temporary model switch (``role: temporary``)
    return all(r.get("type") in ENTRY_TYPES and ("role" not in r or r["type"] == "model_change") for r in rest) and all(
        isinstance(r.get("message"), dict) for r in rest if r.get("type") == "message"
    )


def _is_openclaw(probe: Probe) -> bool:
    return bool(OPENCLAW_PATH.search(probe.path.as_posix())) or any(m in probe.head for m in OPENCLAW_MARKS)


PI = Format(
    "pi",
    "pi coding agent sessions, ~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl (a header, then an entry tree: "
    "messages, tool results, compactions, model changes)",
    lambda probe: _pi_shaped(probe) and not _is_openclaw(probe),
    read=read,
    suffixes=(".jsonl",),
    claims=("*/.pi/agent/sessions/*/*.jsonl",),
)
OPENCLAW = Format(
    "openclaw",
    "OpenClaw (Clawdbot) sessions, ~/.openclaw/agents/<agent>/sessions/<id>.jsonl (pi's session file, "
    "written through OpenClaw's gateway and channels)",
    lambda probe: _pi_shaped(probe) and _is_openclaw(probe),
    read=read,
    suffixes=(".jsonl",),
    claims=("*/.openclaw*/agents/*/sessions/*.jsonl",),
)
