"""Letta (formerly MemGPT) agent files, ``.af``: an agent exported with its message history.

Read from Letta's writers, two generations:

* **AgentFileSchema** (Letta 0.11 on, ``letta/schemas/agent_file.py``, 2025-10 onwards): ``{"agents": [...],
  "groups", "blocks", "files", "sources", "tools", "mcp_servers", "metadata", "created_at"}``; each agent
  (``AgentSchema``: ``id`` such as ``agent-0``, ``name``, ``agent_type``, ``llm_config``, ``in_context_message_ids``)
  holds its ``messages`` (``MessageSchema``: ``id``, ``role``, ``content`` parts, ``name``, ``model``,
  ``tool_calls``, ``tool_call_id``, ``tool_returns``, ``created_at``, the approval fields). A group's
  ``manager_config.manager_agent_id`` names the agent the others (a sleep-time memory agent) work for;
* **AgentSchema v1** (Letta 0.6-0.7, ``letta/serialize_schemas``, 2025): one agent as the whole document, its keys
  in alphabetical order (``agent_type``, ``core_memory``, ``created_at``, ... ``messages``, ``version``).

Some published files hold the JSON document as one JSON string (an export written with ``json.dump`` of the
response text): it is decoded once more.

Each agent is a conversation, its messages in the order of their ``created_at`` (Letta 0.6's export lists them
out of order, a tool return before its call; the whole stored history: messages evicted from the context are
kept). Whose turn: a ``user`` message whose text is Letta's JSON envelope ``{"type":
"user_message", "message": ...}`` is the person's (the ``message`` is its text); the other envelopes
(``login``, ``heartbeat``, ``system_alert``: Letta's own events and summaries) are ``harness``, and a
``system_alert`` holding the summary of evicted messages is a compaction event. A plain-text user message is
the person's, less the ``<system-reminder>`` parts the client adds (Letta Code); only reminders: ``harness``.
``system`` messages (the prompt, rebuilt after each memory edit) are ``harness``, and so is every user message
of a sleep-time agent (``agent_type`` ``sleeptime_agent``, ``voice_sleeptime_agent``): the transcripts its
manager sends it. An assistant's
``tool_calls`` are its calls; a MemGPT-style agent (one that calls ``send_message``) talks to the person through
that tool, whose ``message`` argument is the reply's text, and its messages' own text is its inner monologue,
left out and counted; ``reasoning`` parts are left out. A ``tool`` message answers ``tool_call_id``; it failed when a
``tool_returns`` entry says ``status: error`` or Letta's result envelope says ``"status": "Failed"``. The
author's ``name`` (the agent's name) is the message's speaker. No token counts are stored in the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, listed, mapping

_PERSON_ENVELOPE = "user_message"
_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.S)
_HIDDEN = re.compile(r"prior messages(?: \((\d+) of (\d+) total messages\))? have been hidden from view")
_V2_HEAD = re.compile(
    rb'^\{\s*"agents"\s*:\s*\[\s*(\]|\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*"|null)\s*,\s*"memory_blocks")'
)
_V1_HEAD = re.compile(rb'^\{\s*"agent_type"\s*:\s*("(?:[^"\\]|\\.)*"|null)\s*,\s*"core_memory"\s*:')


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_document(Path(path).read_bytes(), null=[])  # JSON null: a document of another shape, said below
    if isinstance(doc, str):  # the document written as one JSON string
        try:
            doc = values.loads(doc, deep=True)
        except (orjson.JSONDecodeError, ValueError):
            log.error = "a JSON string that holds no Letta agent file"
            return []
    if isinstance(doc, dict) and isinstance(doc.get("agents"), list):
        agents = list(log.objects(doc["agents"], "agents", "agent"))
        managers = _managers(doc.get("groups"))
        version = "agent file"
    elif isinstance(doc, dict) and isinstance(doc.get("messages"), list) and "agent_type" in doc:
        agents = [(0, "agent", doc)]
        managers = {}
        version = str(doc.get("version") or "v1")
    else:
        if doc is not None:
            log.error = "not a Letta agent file (an object with agents, or an agent with agent_type and messages)"
        return []
    out = []
    for i, where, agent in agents:
        with log.guard(where, agent):
            out.append(_agent(log, agent, where, str(agent.get("id") or f"agent-{i}"), managers, version))
    return out


def _managers(groups: Any) -> dict[str, str]:
    """Each agent of a group -> the agent it works for (the group's manager)."""
    out: dict[str, str] = {}
    for g in listed(groups):
        g = mapping(g)
        manager = mapping(g.get("manager_config")).get("manager_agent_id")
        if isinstance(manager, str) and manager:
            for a in listed(g.get("agent_ids")):
                if isinstance(a, str) and a != manager:
                    out[a] = manager
    return out


def _agent(
    log: Log, agent: dict[str, Any], where: str, aid: str, managers: dict[str, str], version: str
) -> Conversation:
    turns: list[Turn] = []
    events: list[Event] = []
    models: list[str] = []
    sleeptime = str(agent.get("agent_type")).endswith("sleeptime_agent")
    talks = any(  # a MemGPT-style agent: it speaks through send_message, its own text is its inner monologue
        mapping(mapping(c).get("function")).get("name") == "send_message"
        for m in listed(agent.get("messages"))
        for c in listed(mapping(m).get("tool_calls"))
    )
    for _, at_, m in _chronological(log.objects(agent.get("messages"), f"{where}.messages", "message")):
        log.rows += 1
        with log.guard(at_, m):
            role = m.get("role")
            mid = m.get("id") if isinstance(m.get("id"), str) else None
            at = m.get("created_at")
            speaker = m.get("name") if isinstance(m.get("name"), str) and m.get("name") else None
            if isinstance(m.get("model"), str) and m["model"] and role == "assistant":
                models.append(m["model"])
            parts = [p.get("text") for p in map(mapping, listed(m.get("content"))) if p.get("type") == "text"]
            texts: list[str] = [t for t in parts if isinstance(t, str)]
            for p in map(mapping, listed(m.get("content"))):
                if p.get("type") not in ("text", None):
                    log.ignore(f"{str(p.get('type'))[:40]} part")
            if role == "user" and sleeptime:  # fed transcripts by its manager, never the person
                turns.append(Turn("user", "\n".join(texts), at=at, id=mid, origin="harness"))
            elif role == "user":
                turns.append(_user(texts, at, mid, events, len(turns)))
            elif role == "system":
                turns.append(Turn("system", "\n".join(texts), at=at, id=mid, origin="harness"))
            elif role in ("assistant", "approval") and (m.get("tool_calls") or role == "assistant"):
                calls, said = [], []
                for c in map(mapping, listed(m.get("tool_calls"))):
                    fn = mapping(c.get("function"))
                    calls.append(ToolCall(fn.get("name"), fn.get("arguments"), c.get("id")))
                    if fn.get("name") == "send_message":
                        reply = mapping(_json(fn.get("arguments"))).get("message")
                        if isinstance(reply, str):
                            said.append(reply)
                if talks and texts:
                    log.ignore("inner monologue (the agent speaks through send_message)")
                text = "\n".join(said if talks else texts)
                turns.append(Turn("assistant", text, calls, at=at, id=mid, speaker=speaker))
            elif role == "approval":  # the person's answer to an approval request
                ok = m.get("approve")
                why = m.get("denial_reason")
                text = "approved" if ok is True else f"denied: {why}" if why else "denied" if ok is False else ""
                turns.append(Turn("user", text, at=at, id=mid, origin="person"))
            elif role in ("tool", "function"):
                turns.append(
                    Turn(
                        "tool",
                        "\n".join(texts),
                        answers=m.get("tool_call_id") if isinstance(m.get("tool_call_id"), str) else None,
                        is_error=_failed(m, texts),
                        at=at,
                        id=mid,
                        origin="tool_result",
                        tool=speaker if role == "function" else None,
                    )
                )
            else:
                log.quarantine(at_, f"unknown message role {str(role)[:40]!r}", m)
    llm = mapping(agent.get("llm_config"))
    name = agent.get("name")
    return Conversation(
        aid,
        turns,
        title=name if isinstance(name, str) and name else None,
        provider="letta",
        model=models[0] if models else llm.get("model") if isinstance(llm.get("model"), str) else None,
        created=agent.get("created_at") or (turns[0].at if turns else None),
        updated=agent.get("updated_at") or (turns[-1].at if turns else None),
        parent=managers.get(aid),
        events=events,
    )


def _chronological(items: Iterator[tuple[int, str, dict[str, Any]]]) -> list[tuple[int, str, dict[str, Any]]]:
    """The messages by ``created_at`` where every one has it (Letta 0.6's export lists them out of order: a tool
    return before the call it answers); in file order otherwise. The sort is stable: ties keep file order."""
    listed_ = list(items)
    stamps = [m.get("created_at") for _, _, m in listed_]
    if all(isinstance(t, str) and t for t in stamps):
        return sorted(listed_, key=lambda x: str(x[2]["created_at"]))
    return listed_


def _user(texts: list[str], at: Any, mid: str | None, events: list[Event], index: int) -> Turn:
    if len(texts) == 1:
        env = mapping(_json(texts[0]))
        kind = env.get("type")
        if kind == _PERSON_ENVELOPE and isinstance(env.get("message"), str):
            return Turn("user", env["message"], at=at, id=mid, origin="person")
        if isinstance(kind, str) and kind:
            hidden = _HIDDEN.search(env["message"]) if isinstance(env.get("message"), str) else None
            if kind == "system_alert" and hidden:  # Letta's summarizer: the evicted messages' summary
                detail = {"hidden": int(hidden[1]), "total": int(hidden[2])} if hidden[1] else {}
                events.append(Event("compaction", index, trigger="summarize", detail=detail))
            return Turn("user", texts[0], at=at, id=mid, origin="harness")
    own = [t for t in (_REMINDER.sub("\n", t).strip() for t in texts) if t]
    if own:
        return Turn("user", "\n".join(own), at=at, id=mid, origin="person")
    return Turn("user", "\n".join(texts), at=at, id=mid, origin="harness")


def _json(text: Any) -> Any:
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return None
    try:
        return values.loads(text)
    except (orjson.JSONDecodeError, ValueError):
        return None


def _failed(m: dict[str, Any], texts: list[str]) -> bool | None:
    statuses = [mapping(r).get("status") for r in listed(m.get("tool_returns"))]
    if "error" in statuses:
        return True
    envelope = mapping(_json(texts[0])) if len(texts) == 1 else {}
    if envelope.get("status") == "Failed":
        return True
    if "success" in statuses or envelope.get("status") == "OK":
        return False
    return None


def _head(probe: Probe) -> bytes:
    head = probe.head.removeprefix(b"\xef\xbb\xbf").lstrip()[:4096]
    if head[:1] == b'"':  # the document as one JSON string: look at its text
        head = head[1:].replace(b'\\"', b'"').replace(b"\\n", b"\n").replace(b"\\\\", b"\\")
    return head


def _sniff(probe: Probe) -> bool:
    head = _head(probe)
    return bool(_V2_HEAD.match(head) or _V1_HEAD.match(head))


FORMAT = Format(
    "letta",
    "Letta (MemGPT) agent files, .af: each agent's stored messages (the person's, Letta's heartbeats and "
    "alerts, tool calls and their returns, send_message replies)",
    _sniff,
    read=read,
    suffixes=(".af", ".json"),
)
