"""Claude Code session transcripts: ``~/.claude/projects/<project>/<session>.jsonl`` and sub-agent files.

Every line is one record. ``user`` and ``assistant`` lines are messages, but Claude Code writes one API
response one content block per line, every line repeating ``message.id``, ``requestId`` and the usage: the
lines are merged back into one assistant message, so parallel tool calls are one turn and tokens are
counted once: each count is the largest any line of the response gives (the lines are written as the response
streams, so an early line's ``output_tokens`` is a partial count, 0 or 3 where the last line says 592). Lines link by ``uuid``/``parentUuid`` into a tree (``logicalParentUuid`` bridges a compaction)
and the conversation is the path from the root to the newest leaf, as for JSONL sessions. Compaction
boundaries and ``summary`` lines become events; an ``attachment`` line that loads an instruction file
(``nested_memory``, ``instructions``) becomes Claude Code's own user message, in the words the model read; a prompt
typed while a turn ran and read mid-turn is a user message where the model read it (its ``queued_command``
attachment, or with none, 2.1.4x-2.1.6x, its ``queue-operation`` ``remove``: ``_queue_line``). The format drifts between versions, so any other line type
is skipped and counted, and unknown fields and content blocks are counted in the run's note, never fatal.

Whose turn a user line is: Claude Code flags its own (``isMeta``, ``isCompactSummary``); command wrappers,
hook feedback and interruptions are recognised by their opening; the rest is the person's. A sub-agent's
``.meta.json`` is a side file (its title comes from it); ``~/.claude/history.jsonl``: see
``claude_code_history``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from forensics.formats.claude_code import history as claude_code_history
from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import MAP_ERRORS, Columns, arrow_schemas, mapping, parse, read_side
from forensics.formats.kit.records import (
    Batch,
    Entry,
    Parsed,
    normalize,
    read_object,
    source_key,
    split_lines,
    stable_id,
)
from forensics.warehouse.origin import origin_of
from forensics.warehouse.own_words import has_command_args, is_command

if TYPE_CHECKING:
    import polars as pl

NAME = "claude-code"
LINE_TYPES = {
    "user",
    "assistant",
    "system",
    "summary",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "attachment",
    "permission-mode",
    "last-prompt",
    "ai-title",
    "custom-title",
}
TITLES = {"custom-title": "customTitle", "ai-title": "aiTitle"}  # a title the person set beats the generated one
KNOWN_FIELDS = frozenset(
    (
        "parentUuid",
        "logicalParentUuid",
        "isSidechain",
        "userType",
        "cwd",
        "sessionId",
        "version",
        "gitBranch",
        "slug",
        "type",
        "uuid",
        "timestamp",
        "message",
        "requestId",
        "toolUseResult",
        "isMeta",
        "isCompactSummary",
        "isVisibleInTranscriptOnly",
        "agentId",
        "subtype",
        "content",
        "level",
        "compactMetadata",
        "summary",
        "leafUuid",
        "isApiErrorMessage",
        "thinkingMetadata",
        "todos",
        "data",
        "messageId",
        "snapshot",
        "isSnapshotUpdate",
        "toolUseID",
        "parentToolUseID",
        "durationMs",
        "operation",
        # 2.1.x: entry point, prompt ids, hook summaries, permission modes, titles, attachments
        "entrypoint",
        "promptId",
        "sourceToolAssistantUUID",
        "permissionMode",
        "attachment",
        "error",
        "hasOutput",
        "hookCount",
        "hookErrors",
        "hookInfos",
        "lastPrompt",
        "messageCount",
        "preventedContinuation",
        "stopReason",
        "aiTitle",
        "customTitle",
        # 2.1.x: a forked session's copies of its parent's lines (--fork-session, /branch)
        "forkedFrom",
        # 2.1.2xx: who sent a user line (``origin.kind``) and how the prompt came in (``promptSource``)
        "origin",
        "promptSource",
    )
)
KNOWN_BLOCKS = frozenset(("text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"))
# Flags on a user line that Claude Code wrote itself: the caveat before a local command's output, the
# "Continue from where you left off." nudge, skill and command expansions (isMeta), compaction summaries.
PLAN_HANDOVER = "Implement the following plan:"  # the prompt a plan accepted with a cleared context starts with
SYNTHETIC = "<synthetic>"  # the model Claude Code names on the assistant lines it writes itself
META_FLAGS = ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")
# /aside (2.1.9x) and prompts carrying reminders: a <system-reminder> block Claude Code puts before the text the
# person typed; text after the block is the person's.
TODO_LIST = re.compile(r"[0-9a-f-]{36}-agent-[0-9a-f-]{36}\.json")  # ~/.claude/todos/<session>-agent-<agent>.json
# A user line (string content, not isMeta) Claude Code writes when a background task or sub-agent finishes (2.0.6x+);
# the desktop app's pull-request watcher's event (2.1.2xx, ``origin.kind: human`` though no one typed it: "Please
# address the feedback and push a fix"); another session's message on a line with no ``origin`` (2.1.232)
INJECTED = ("<task-notification>", "<ci-monitor-event>", "Another Claude session sent a message:")
# The text Claude Code puts beside a tool result that loaded deferred tools (``tool_reference`` blocks: a ToolSearch
# call, 2.1.x), so that the request does not end on the tool list (its TOOL_REFERENCE_TURN_BOUNDARY): not the person's
TOOL_LOADED = "Tool loaded."
REMINDED = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*\S", re.DOTALL)
# 2.1.x: the sub-agent that writes a compaction's summary (subagents/agent-acompact-<id>.jsonl): its user lines are
# the session's last prompt, repeated, and Claude Code's request for the summary, never a new turn of the person
COMPACTION_AGENT = "agent-acompact-"
COMPACTION_TITLE = "compaction: the summary of the conversation so far"
# What each kind of instruction file is, in the words Claude Code puts after its path (``Contents of PATH (...):``)
MEMORY_KINDS = {
    "Project": "project instructions, checked into the codebase",
    "Local": "user's private project instructions, not checked in",
    "User": "user's private global instructions for all projects",
    "Managed": "managed instructions",
    "AutoMem": "user's auto-memory, persists across conversations",
}
UUID_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@dataclass(slots=True)
class _Msg:
    """One message being assembled from one line, or from the several lines of a split response."""

    line: int
    uuid: str
    parent: str | None
    role: str
    content: Any
    ts: str | None
    part: str
    usage: dict[str, Any] | None = None
    model: str | None = None
    ids: tuple[str | None, str | None] = (None, None)  # (message.id, requestId)
    meta: bool = False  # a line Claude Code marks as its own (isMeta, isCompactSummary, ...)
    declared: str | None = None  # the origin the line's ``origin.kind`` / ``promptSource`` gives (``_declared``)
    speaker: str | None = None  # who sent it, where the line names them (a peer session, a channel's server)


def _one_hour(u: dict[str, Any]) -> int | None:
    """The cache writes kept an hour (``usage.cache_creation.ephemeral_1h_input_tokens``, Claude Code 1.0.8x and
    later), or None when the usage does not split its writes by duration."""
    split = u.get("cache_creation")
    return _int(split.get("ephemeral_1h_input_tokens")) if isinstance(split, dict) else None


def _latest_usage(seen: dict[str, Any] | None, line: Any) -> dict[str, Any] | None:
    """A response's usage over its lines: per count the largest (the counts only grow as the response streams)."""
    if not isinstance(line, dict):
        return seen
    if seen is None:
        return line
    merged = dict(seen)
    for k in USAGE_KEYS:
        a, b = _int(seen.get(k)), _int(line.get(k))
        merged[k] = b if a is None else a if b is None else max(a, b)
    hours = [h for h in (_one_hour(seen), _one_hour(line)) if h is not None]
    if hours:
        merged["cache_creation"] = {"ephemeral_1h_input_tokens": max(hours)}
    return merged


@dataclass(slots=True)
class _Event:
    line: int
    part: str
    kind: str
    trigger: str | None
    pre: int | None
    post: int | None
    attach: str | None  # uuid of the message it belongs to, when the line names one
    detail: dict[str, Any]


@dataclass
class _File:
    """What one pass over the lines collected."""

    msgs: list[_Msg] = field(default_factory=list)
    events: list[_Event] = field(default_factory=list)
    thoughts: list[_Event] = field(default_factory=list)  # ``reasoning`` events: the thinking blocks of replies
    nodes: dict[str, tuple[str | None, str, int]] = field(default_factory=dict)  # uuid -> (parent, ts, line)
    owner: dict[str, _Msg] = field(default_factory=dict)  # line uuid -> the message it belongs to
    part_of: dict[str | None, str] = field(default_factory=dict)  # line uuid -> conversation part ("" = main)
    skipped: Counter[str] = field(default_factory=Counter)
    fields: Counter[str] = field(default_factory=Counter)
    blocks: Counter[str] = field(default_factory=Counter)
    merged: int = 0  # continuation lines of split responses
    bad: int = 0  # lines quarantined
    known: int = 0  # lines of a Claude Code line type
    session_id: str | None = None
    titles: dict[str, str] = field(default_factory=dict)  # line type -> the latest title of that kind
    agent: str | None = None  # a sub-agent's type and task, from the .meta.json beside its transcript
    copied: dict[str, str] = field(default_factory=dict)  # line uuid -> the session it is a copy of
    copy_kind: dict[str, str] = field(default_factory=dict)  # that session -> "fork" (forkedFrom) or "resume"
    line_sessions: set[str] = field(default_factory=set)  # the sessionId values the lines carry
    cwd: str | None = None  # the working folder of the first line naming one (the session's project)
    branches: Counter[str] = field(default_factory=Counter)  # gitBranch -> lines naming it
    expanded: set[str] = field(default_factory=set)  # uuids of the lines an isMeta user line (an expansion) answers
    cleared: set[str] = field(default_factory=set)  # root lines that start again after the context was cleared
    queue: list[tuple[int, Any, str | None]] = field(default_factory=list)  # prompts enqueued, not yet taken out
    removed: list[tuple[int, Any, str | None]] = field(default_factory=list)  # (line, prompt, time) of each remove
    queued: list[_Msg] = field(default_factory=list)  # prompts delivered mid-turn, known only by their queue lines
    attached: set[str] = field(default_factory=set)  # uuids of the queued_command attachment lines


def parse_file(path: str, source_id: str, fingerprint: str) -> Parsed:
    """Worker: one transcript file → its conversation (plus one per in-file sidechain), events and usage."""
    data = Path(path).read_bytes()
    lines = split_lines(data)
    b = Batch()
    b.rows_read = len(lines)
    b.state["sha256"] = hashlib.sha256(data).hexdigest()
    p = Path(path)
    if _is_agent_meta(p) or _is_todo_list(p):
        return _side_file(b, p)
    if lines and claude_code_history.is_prompt_history(p, _load(lines[0])[1]):
        return parse(claude_code_history.read, path, source_id)
    subagent = p.parent.name == "subagents"
    f = _read_lines(b, lines, p.name, subagent)
    f.agent = _agent_title(p.with_suffix(".meta.json")) if subagent else None
    if not subagent:
        _find_resumed(f, p)
    if subagent and p.name.startswith(COMPACTION_AGENT):
        f.agent = f.agent or COMPACTION_TITLE
        for m in f.msgs:  # the prompt it repeats is counted in the session; the rest is the summary request
            m.meta = True
    if lines and not f.known:
        b.state["error"] = "no line is a Claude Code record (type user, assistant, system, summary...)"
        return Parsed.of(b)
    parts = dict.fromkeys(m.part for m in f.msgs)
    for e in f.events:  # e.g. a file of summary lines only: an event needs a conversation to belong to
        if e.part not in parts:
            f.skipped[f"{e.kind} (no message in this file)"] += 1
    f.events = [e for e in f.events if e.part in parts]
    b.messages_read = len(f.msgs) + f.bad + len(f.events) + sum(f.skipped.values())
    b.state["skipped"] = len(f.events) + sum(f.skipped.values())
    f.events.extend(_copy_events(f) if f.msgs else [])
    f.events.extend(t for t in f.thoughts if t.part in parts)  # blocks of lines counted as messages already
    main_cid = stable_id(source_id, p.stem)
    parent_cid = _parent_conversation(p, f.session_id, subagent)
    if f.copy_kind:  # a fork or a continuation: its parent is the session whose lines it copied (the first one)
        came_from = next(iter(f.copy_kind))
        parent_cid = stable_id(source_key(NAME, str(p.parent / f"{came_from}.jsonl")), came_from)
    schemas = arrow_schemas()
    events, usage = Columns(schemas["EVENT_SCHEMA"]), Columns(schemas["USAGE_SCHEMA"])
    for part in parts:
        native = p.stem if not part else f"{p.stem}:sidechain:{part}"
        cid = stable_id(source_id, native)
        _add_part(b, f, part, cid, native, main_cid if part else parent_cid, fingerprint, events, usage)
    parsed = Parsed.of(b)
    for name, rows in (("event", events), ("usage", usage)):
        if rows.cols[0]:  # an absent table is an empty one to the loader
            parsed.tables[name] = rows.table()
    parsed.tables["call"] = _stored_results(parsed.tables["call"], _stored_sizes(path, subagent))
    parsed.notes.extend(_notes(f))
    return parsed


def _read_lines(b: Batch, lines: list[bytes], name: str, subagent: bool) -> _File:
    f = _File()
    groups: dict[tuple[str, str | None], _Msg] = {}
    for lineno, raw, reason, obj in _records(lines):
        if reason:
            b.quarantine(f"{name}:{lineno}", reason, raw)
            f.bad += 1
            continue
        try:  # a value of an unexpected type anywhere in the line: the line is quarantined, the file goes on
            if not KNOWN_FIELDS.issuperset(obj):  # no set built for the usual line
                f.fields.update(obj.keys() - KNOWN_FIELDS)
            kind, uid = obj.get("type"), obj.get("uuid")
            f.known += kind in LINE_TYPES
            if f.cwd is None and isinstance(obj.get("cwd"), str) and obj["cwd"].strip():
                f.cwd = obj["cwd"]
            if isinstance(obj.get("gitBranch"), str) and obj["gitBranch"].strip():
                f.branches[obj["gitBranch"]] += 1
            if not isinstance(uid, str):
                uid = f"line:{lineno}"
            parent = obj.get("parentUuid") or obj.get("logicalParentUuid")
            parent = parent if isinstance(parent, str) else None
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
            part = f.part_of.get(parent, uid) if obj.get("isSidechain") is True and not subagent else ""
            if parent is None and f.nodes and _starts_after_clear(obj):
                f.cleared.add(uid)
            forked = obj.get("forkedFrom")
            if isinstance(forked, dict) and isinstance(forked.get("sessionId"), str) and not part:
                f.copied[uid] = forked["sessionId"]
                f.copy_kind.setdefault(forked["sessionId"], "fork")
            if isinstance(obj.get("sessionId"), str) and not part:
                f.line_sessions.add(obj["sessionId"])
            if kind == "user" or kind == "assistant":
                m = obj.get("message")
                if not isinstance(m, dict) or "content" not in m:
                    b.quarantine(f"{name}:{lineno}", f"{kind} line without a message object", raw)
                    f.bad += 1
                    continue
                f.session_id = f.session_id or _str(obj.get("sessionId"))
                if kind == "assistant" and isinstance(m.get("id"), str):
                    key = (m["id"], obj.get("requestId"))
                    g = groups.get(key)
                    if g is not None:  # another block of a response already seen
                        g.content.extend(_blocks(m.get("content")))
                        f.thoughts += _thoughts(m.get("content"), lineno, g.part, uid)
                        g.usage = _latest_usage(g.usage, m.get("usage"))
                        f.merged += 1
                        f.owner[uid] = g
                        f.nodes[uid] = (parent, ts or "", lineno)
                        f.part_of[uid] = g.part
                        continue
                msg = _Msg(
                    lineno,
                    uid,
                    parent,
                    kind,
                    m.get("content"),
                    ts,
                    part,
                    meta=any(obj.get(k) is True for k in META_FLAGS),
                )
                if kind == "assistant":
                    msg.content = _blocks(msg.content)
                    f.thoughts += _thoughts(msg.content, lineno, part, uid)
                    msg.usage = m.get("usage") if isinstance(m.get("usage"), dict) else None
                    msg.model = m.get("model") if isinstance(m.get("model"), str) else None
                    msg.ids = (m.get("id") if isinstance(m.get("id"), str) else None, _str(obj.get("requestId")))
                    if msg.ids[0] is not None:
                        groups[(msg.ids[0], msg.ids[1])] = msg
                if kind == "user":
                    msg.declared, msg.speaker = _declared(obj.get("origin"), obj.get("promptSource"))
                    if obj.get("isMeta") is True and parent is not None:
                        f.expanded.add(parent)  # a prompt command's or skill's body, sent to the model after it
                f.msgs.append(msg)
                f.owner[uid] = msg
            elif kind == "attachment" and (queued := _queued(obj.get("attachment"))) is not None:
                # a prompt that came in while a turn ran (2.1.2xx): the model read it mid-turn; no user line repeats it
                msg = _Msg(lineno, uid, parent, "user", queued[0], ts, part, meta=queued[1])
                msg.declared, msg.speaker = queued[2], queued[3]
                f.attached.add(uid)
                f.msgs.append(msg)
                f.owner[uid] = msg
            elif kind == "attachment" and (text := _memory_text(obj.get("attachment"))):
                # an instruction file Claude Code put into the context: the text the model read, Claude Code's
                # own line (isMeta), so the rules audit finds the file where it entered the context
                msg = _Msg(lineno, uid, parent, "user", text, ts, part, meta=True)
                f.msgs.append(msg)
                f.owner[uid] = msg
            elif kind == "system" and obj.get("subtype") == "compact_boundary":
                meta = mapping(obj.get("compactMetadata"))
                f.events.append(
                    _Event(
                        lineno,
                        part,
                        "compaction",
                        _str(meta.get("trigger")),
                        _int(meta.get("preTokens")),
                        _int(meta.get("postTokens")),
                        None,
                        _detail(obj, ("uuid", "logicalParentUuid", "content", "timestamp")),
                    )
                )
            elif kind == "queue-operation":
                _queue_line(f, lineno, obj, ts)
            elif kind in TITLES and isinstance(obj.get(TITLES[kind]), str):
                f.titles[kind] = obj[TITLES[kind]]
                f.skipped[f"{kind} (-> title)"] += 1
            elif kind == "summary":
                f.events.append(
                    _Event(
                        lineno,
                        "",
                        "summary",
                        None,
                        None,
                        None,
                        _str(obj.get("leafUuid")),
                        _detail(obj, ("summary", "leafUuid")),
                    )
                )
            else:
                f.skipped[f"system:{obj.get('subtype')}" if kind == "system" else str(kind)] += 1
            f.nodes[uid] = (parent, ts or "", lineno)
            f.part_of[uid] = part
        except MAP_ERRORS as e:
            b.quarantine(f"{name}:{lineno}", f"cannot map this line ({type(e).__name__}: {str(e)[:120]})", raw)
            f.bad += 1
    _bridge_missing_parents(f)
    _delivered_mid_turn(f)
    return f


def _queue_line(f: _File, lineno: int, obj: dict[str, Any], ts: str | None) -> None:
    """A ``queue-operation`` line: Claude Code's queue of prompts typed (or notices come in) while a turn runs.
    ``enqueue`` holds the prompt; ``dequeue`` takes the oldest out to send as the next turn's prompt (its ``user``
    line follows); ``popAll`` takes them all back into the input box to edit; ``remove`` takes the named ones out
    to put before the model mid-turn, as a ``queued_command`` attachment to the next request (2.1.4x-2.1.6x write
    no attachment line and no content on the remove: the remove is the only trace; the oldest queued prompt is the
    one taken, as the queue is first in, first out). Each line is counted by what it did."""
    op = obj.get("operation")
    content = obj.get("content")
    if op == "enqueue":
        f.queue.append((lineno, content, ts))
        f.skipped["queue-operation:enqueue"] += 1
        return
    if op in ("dequeue", "remove", "popAll"):
        if content is not None:  # the prompt it names (2.0.4x, 2.1.2xx), else the oldest
            taken = next((q for q in f.queue if q[1] == content), None)
        else:
            taken = f.queue[0] if f.queue else None
        if op == "popAll" and content is None:
            f.queue.clear()
        elif taken is not None:
            f.queue.remove(taken)
        if op == "remove":
            prompt = content if content is not None else taken[1] if taken is not None else None
            f.removed.append((lineno, prompt, ts))
            return
        f.skipped[
            "queue-operation:dequeue (sent as the next prompt)"
            if op == "dequeue"
            else "queue-operation:popAll (taken back to edit)"
        ] += 1
        return
    f.skipped[f"queue-operation:{str(op)[:40]}"] += 1


def _delivered_mid_turn(f: _File) -> None:
    """Each ``remove`` of a prompt the model read mid-turn becomes that prompt's ``user`` message, placed before
    the first reply written after the remove (``_add_queued``), timed by the remove. Not when a ``queued_command``
    attachment line carries the prompt already (2.1.2xx), nor when no reply follows before the next prompt (the
    turn had ended: taken out with no request to carry it); those removes are counted."""
    if not f.removed:
        return
    attached = {_key(m.content) for m in f.msgs if m.uuid in f.attached}
    main = sorted((m for m in f.msgs if not m.part), key=lambda m: m.line)
    for lineno, prompt, ts in f.removed:
        if not isinstance(prompt, str | list) or not prompt:
            f.skipped["queue-operation:remove (no prompt queued)"] += 1
            continue
        if _key(prompt) in attached:
            f.skipped["queue-operation:remove (its queued_command attachment)"] += 1
            continue
        after = next((m for m in main if m.line > lineno), None)
        if after is None or not (after.role == "assistant" or _carries_results(after)):
            f.skipped["queue-operation:remove (no reply read it)"] += 1
            continue
        msg = _Msg(lineno, f"queue-operation:{lineno}", None, "user", prompt, ts, "")
        f.queued.append(msg)
        f.owner[msg.uuid] = msg
        k = next((i for i, m in enumerate(f.msgs) if m.line > lineno), len(f.msgs))
        f.msgs.insert(k, msg)  # file order: a message's seq


def _key(prompt: Any) -> str:
    return prompt if isinstance(prompt, str) else json.dumps(prompt, sort_keys=True, default=str)


def _add_queued(f: _File, part: str, order: list[_Msg]) -> None:
    """A prompt delivered mid-turn joins the main path where the model read it: after the tool results of the
    request it rode with, before the first reply written after its ``remove`` line."""
    for m in f.queued:
        if m.part != part:
            continue
        k = next((i for i, o in enumerate(order) if o.role == "assistant" and o.line > m.line), len(order))
        m.parent = order[k - 1].uuid if k else None
        order.insert(k, m)


# ``origin.kind`` (2.1.2xx) names who sent a user line: the person (``human``), or Claude Code's others: another
# session (``peer``), a background task (``task-notification``), the coordinator of a team, an observer, the
# continuation after a usage limit (``auto-continuation``), ``unclassified``. ``channel``: an MCP channel (a chat
# bridge such as Telegram or Discord) delivering what a person wrote there.
PERSON_KINDS = ("human",)
CHANNEL = "channel"
# ``promptSource`` says how the prompt came in: typed, queued (typed while a turn ran), suggestion_accepted (the
# person took the suggested prompt), sdk (through the Agent SDK: the desktop and IDE apps, ``claude -p``, a program's
# task), system (Claude Code's own: notifications, scheduled tasks, peer messages)
SYSTEM_SOURCE = "system"


def _declared(origin: Any, source: Any) -> tuple[str | None, str | None]:
    """(the origin a line declares, who sent it): ``None`` when it declares none, or declares the person's kind
    (``human``: then its text decides, as for every older line). Any other ``origin.kind`` is Claude Code's own
    message (``harness``), named by its sender where the line gives one; an MCP channel's is the person's words,
    named by the server that delivered them; a line with no ``origin`` but ``promptSource: system`` is Claude
    Code's."""
    kind = origin.get("kind") if isinstance(origin, dict) else None
    if isinstance(kind, str):
        if kind in PERSON_KINDS:
            return None, None
        who = origin.get("server") if kind == CHANNEL else origin.get("name") or origin.get("from")
        return ("person" if kind == CHANNEL else "harness"), str(who)[:200] if isinstance(who, str) and who else None
    if source == SYSTEM_SOURCE:
        return "harness", None
    return None, None


def _queued(att: Any) -> tuple[Any, bool, str | None, str | None] | None:
    """A ``queued_command`` attachment: (its prompt, whether it is Claude Code's own line, its declared origin, who
    sent it); None for any other attachment. A prompt queued with no ``origin`` but ``commandMode:
    task-notification`` is a background task's notice."""
    if not isinstance(att, dict) or att.get("type") != "queued_command":
        return None
    prompt = att.get("prompt")
    if not isinstance(prompt, str | list) or not prompt:
        return None
    declared, who = _declared(att.get("origin"), None)
    if declared is None and att.get("commandMode") == "task-notification":
        declared = "harness"
    return prompt, att.get("isMeta") is True, declared, who


def _memory_text(att: Any) -> str | None:
    """The text an instruction-file attachment puts before the model, as Claude Code renders it
    (``normalizeAttachmentForAPI``): ``nested_memory`` (a CLAUDE.md or ``.claude/rules`` file read on the way, 2.0.x+)
    as ``Contents of PATH:`` then the file; ``instructions`` (the files loaded at a session's start, newer 2.1.x) as
    one ``Contents of PATH (what it is):`` per file. None for any other attachment."""
    if not isinstance(att, dict):
        return None
    if att.get("type") == "nested_memory":
        body = att.get("content")
        path = att.get("path")
        if isinstance(body, dict):
            path = path if isinstance(path, str) else body.get("path")
            body = body.get("content")
        if isinstance(path, str) and isinstance(body, str) and body.strip():
            return f"Contents of {path}:\n\n{body}"
        return None
    if att.get("type") == "instructions" and isinstance(att.get("files"), list):
        parts = [
            f"Contents of {x['path']} ({MEMORY_KINDS.get(str(x.get('type')), 'instructions')}):\n\n{x['content']}"
            for x in att["files"]
            if isinstance(x, dict) and isinstance(x.get("path"), str) and isinstance(x.get("content"), str)
        ]
        return "\n\n".join(parts) or None
    return None


def _bridge_missing_parents(f: _File) -> None:
    """A line whose parent is in no line of the file continues the line written just before it in the same part,
    so the main path runs on to the session's first prompt. Claude Code writes such lines: a compaction boundary
    starts a new root (``parentUuid`` null) and names the last message before it in ``logicalParentUuid``, which is
    not always in the file (2.1.68: an auto-compaction right after a prompt names a uuid no line has, the prompt is
    the line before the boundary); and a hook's ``progress`` line names the message it ran after, which is not
    always written (2.1.x: the ``SessionStart:compact`` hook's line before a boundary names the compacted
    conversation's last uuid; a ``Stop`` hook's line names a response no line holds, 1 file in 20 of 2026's). Each
    would end the path there, and every turn before it would be off the main path. So does a root written when
    the person accepted a plan and cleared the context (``_starts_after_clear``)."""
    by_line = sorted((v[2], u) for u, v in f.nodes.items())
    before: dict[str, str] = {}  # part -> the uuid of the last line written so far that has one
    bridged: dict[str, str] = {}
    for line, u in by_line:
        part = f.part_of.get(u, "")
        parent, ts, _ = f.nodes[u]
        if ((parent is not None and parent not in f.nodes) or u in f.cleared) and part in before:
            f.nodes[u] = (before[part], ts, line)
            bridged[u] = before[part]
        if not u.startswith("line:"):  # a line with no uuid (a file snapshot, a queue operation) is in no tree
            before[part] = u
    for ev in f.events:
        uid = ev.detail.get("uuid") if ev.kind == "compaction" else None
        if isinstance(uid, str) and uid in bridged:
            ev.detail["bridged_to"] = bridged[uid]


def _starts_after_clear(obj: dict[str, Any]) -> bool:
    """A root line Claude Code writes when the person accepts a plan and clears the context (2.1.x): the
    ``SessionStart:clear`` hook's progress line, or, with no hook, the prompt that hands the plan over. The session
    goes on in the same file from a new root; its turns before the clear stay the session's."""
    data = obj.get("data")
    if obj.get("type") == "progress" and isinstance(data, dict) and data.get("hookName") == "SessionStart:clear":
        return True
    m = obj.get("message")
    content = m.get("content") if isinstance(m, dict) else None
    return obj.get("type") == "user" and isinstance(content, str) and content.startswith(PLAN_HANDOVER)


def _find_resumed(f: _File, p: Path) -> None:
    """A session file that begins with another session's lines again (same ``uuid``), that session's file beside it:
    a continuation ``--resume`` wrote to a new file (2.0.x, and 2.1.x when the resumed session was still open
    elsewhere). Its lines carry the earlier session's id (anthropics/claude-code#30606), or their ids were rewritten
    and the file holds every line of the earlier one and more (the same first line). Those lines are copies of the
    session they came from. A sub-agent file of the older layout (``agent-<id>.jsonl`` beside the sessions, the
    parent's ``sessionId``, its own uuids) repeats none and is not one; ``forkedFrom`` copies are marked while
    reading."""
    if not UUID_NAME.fullmatch(p.stem):
        return
    named = {sid for sid in f.line_sessions - {p.stem} if UUID_NAME.fullmatch(sid)}
    first = next((m.uuid for m in f.msgs if not m.part), None)
    size = p.stat().st_size
    # with the ids rewritten, a continuation is a larger file than the one it continues: the few largest smaller
    # files that begin with the same line (copies of one file, of the same size, are never read against each other)
    smaller = (
        sorted(((n, s) for s, (u, n) in _first_uuids(p.parent).items() if u == first and n < size), reverse=True)[:4]
        if first
        else []
    )
    for sid in sorted(named | {s for _, s in smaller}):
        sibling = p.parent / f"{sid}.jsonl"
        if sid in f.copy_kind or not sibling.is_file():
            continue
        theirs = _uuids(sibling)
        shared = [u for u in f.nodes if u in theirs and u not in f.copied and f.part_of.get(u) == ""]
        if not shared or (sid not in named and not (theirs < f.nodes.keys())):
            continue  # the ids rewritten: only a file holding every line of the other, and more, is its continuation
        f.copied.update(dict.fromkeys(shared, sid))
        f.copy_kind[sid] = "resume"


_FIRST: dict[str, tuple[int, dict[str, tuple[str, int]]]] = {}  # folder -> (mtime, stem -> (first line's uuid, size))


def _first_uuids(folder: Path) -> dict[str, tuple[str, int]]:
    """The uuid of each session file's first message line in a folder (read once per folder and process: a
    continuation in a new file starts with the same line)."""
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        return {}
    seen = _FIRST.get(str(folder))
    if seen is not None and seen[0] == stamp:
        return seen[1]
    out: dict[str, tuple[str, int]] = {}
    for path in folder.glob("*.jsonl"):
        if not UUID_NAME.fullmatch(path.stem):
            continue
        try:
            with path.open("rb") as fh:  # the first lines: a few KB, a long first prompt up to 64 KB
                head = fh.read(1 << 13)
                if b'"uuid"' not in head:
                    head += fh.read((1 << 16) - len(head))
        except OSError:
            continue
        for raw in head.split(b"\n")[:-1]:
            _, obj = _load(raw)
            if (
                isinstance(obj, dict)
                and obj.get("type") in ("user", "assistant")
                and isinstance(obj.get("uuid"), str)
                and obj.get("isSidechain") is not True
            ):
                out[path.stem] = (obj["uuid"], path.stat().st_size)
                break
    _FIRST[str(folder)] = (stamp, out)
    return out


_UUIDS: dict[tuple[str, int, int], set[str]] = {}  # (path, size, mtime) -> its line uuids, the last few read


def _uuids(path: Path) -> set[str]:
    """The line uuids of a session file beside this one (read only to tell its lines from this file's own)."""
    out: set[str] = set()
    try:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns)
        if key in _UUIDS:
            return _UUIDS[key]
        data = path.read_bytes()
    except OSError:
        return out
    for raw in split_lines(data):
        if b'"uuid"' not in raw:
            continue
        _, obj = _load(raw)
        if isinstance(obj, dict) and isinstance(obj.get("uuid"), str):
            out.add(obj["uuid"])
    if len(_UUIDS) >= 8:
        _UUIDS.pop(next(iter(_UUIDS)))
    _UUIDS[key] = out
    return out


def _copy_events(f: _File) -> list[_Event]:
    """A ``fork`` or ``resume`` event per session this file copied lines from, on the first message of its own: the
    copies stay in the file's conversation, off its main path (they are the other session's turns, counted there),
    and the transcript shows where this session took over. No line holds the event: it is not counted as read."""
    out = []
    for sid, kind in f.copy_kind.items():
        copies = [m for m in f.msgs if f.copied.get(m.uuid) == sid]
        last = max((f.nodes[u][2] for u, s in f.copied.items() if s == sid and u in f.nodes), default=0)
        own = next((m for m in f.msgs if not m.part and m.uuid not in f.copied and m.line > last), None)
        out.append(
            _Event(
                last,
                "",
                kind,
                sid,
                None,
                None,
                own.uuid if own else None,
                {
                    "from_session": sid,
                    "copied_messages": len(copies),
                    "from_message": copies[-1].uuid if copies else None,
                },
            )
        )
    return out


def _add_part(
    b: Batch,
    f: _File,
    part: str,
    cid: str,
    native: str,
    parent_cid: str | None,
    fingerprint: str,
    events: Columns,
    usage: Columns,
) -> None:
    """One conversation: the main transcript (part "") or one in-file sidechain (part = its root uuid)."""
    msgs = [m for m in f.msgs if m.part == part]
    position = _main_path(f, part)
    seq_of = {id(m): i for i, m in enumerate(msgs)}
    entries = []
    for i, m in enumerate(msgs):
        msg = normalize({"role": m.role, "content": m.content, "timestamp": m.ts, "name": m.speaker})  # valid roles
        if msg.role == "user":
            msg.origin = _origin(m, msg.content if isinstance(msg.content, str) else msg.content.text(), f.expanded)
        if isinstance(m.content, list):
            for blk in m.content:
                kind = blk.get("type") if isinstance(blk, dict) else None
                if str(kind) not in KNOWN_BLOCKS:  # a type of any JSON kind is counted, never hashed
                    f.blocks[str(kind)] += 1
        entries.append(Entry(i, m.uuid, _parent_message(f, m), position.get(id(m)), msg))
        # "<synthetic>": a message Claude Code wrote itself (an API error, "No response requested."), usage all 0:
        # no model answered, so no usage row (it would show as a model beside the session's own)
        if m.role == "assistant" and m.usage is not None and m.model != SYNTHETIC:
            u = m.usage
            usage.add(
                cid,
                i,
                position.get(id(m)),
                m.ids[0],
                m.ids[1],
                m.model,
                *(_int(u.get(k)) for k in USAGE_KEYS),
                _one_hour(u),
            )
    for ev in f.events:
        if ev.part != part:
            continue
        target = f.owner.get(ev.attach) if ev.attach else next((m for m in msgs if m.line > ev.line), None)
        seq = seq_of.get(id(target)) if target is not None else None
        events.add(
            cid,
            seq,
            position.get(id(target)) if seq is not None else None,
            ev.kind,
            ev.trigger,
            ev.pre,
            ev.post,
            orjson.dumps(ev.detail).decode(),
        )
    title = next(
        (
            e.detail.get("summary")
            for e in f.events
            if e.kind == "summary" and e.attach in f.owner and f.owner[e.attach].part == part
        ),
        None,
    )
    if not part:
        title = f.titles.get("custom-title") or f.titles.get("ai-title") or f.agent or title
    model = next((m.model for m in msgs if m.model and not m.model.startswith("<")), None)
    own = [e for e, m in zip(entries, msgs) if m.uuid not in f.copied] if f.copied else None  # a fork: its own words
    b.add_conversation(cid, native, _str(title), "anthropic", model, None, None, fingerprint, entries, own)
    b.state.setdefault("parents", {})[cid] = parent_cid
    if f.cwd is not None:
        b.state.setdefault("workdirs", {})[cid] = f.cwd
    if f.branches:  # the branch most of its lines name (the first named on a tie): a session rarely switches
        b.state.setdefault("branches", {})[cid] = f.branches.most_common(1)[0][0]


def _main_path(f: _File, part: str) -> dict[int, int]:
    """id(message) -> 0-based position on the path from the root to the newest leaf of this part."""
    nodes = {u: v for u, v in f.nodes.items() if f.part_of.get(u) == part}
    has_child = {p for p, _, _ in nodes.values() if p is not None}
    # a line with no uuid and no message (a queue operation, a file snapshot) is in no tree: never the newest leaf
    # (2.1.4x writes a queue operation's ``remove`` after the last turn's end, the file's latest timestamp)
    leaves = (u for u in nodes if u not in has_child and (not u.startswith("line:") or u in f.owner))
    leaf = max(leaves, key=lambda u: (nodes[u][1], nodes[u][2]), default=None)
    path, seen = [], set()
    while leaf is not None and leaf in nodes and leaf not in seen:
        seen.add(leaf)
        path.append(leaf)
        leaf = nodes[leaf][0]
    order: list[_Msg] = []
    placed: set[int] = set()
    for u in reversed(path):
        m = f.owner.get(u)
        if m is not None and id(m) not in placed and m.uuid not in f.copied:
            placed.add(id(m))
            order.append(m)
    _add_parallel_results(f, part, order)
    _add_queued(f, part, order)
    return {id(m): i for i, m in enumerate(order)}


def _add_parallel_results(f: _File, part: str, order: list[_Msg]) -> None:
    """Claude Code writes the calls of one response one per line, each line the child of the one before, and
    the result of an earlier call as a child of its call's line: a branch off the path to the newest leaf,
    yet part of the same turn. Such a tool-result line joins the main path right after the message it
    answers (in file order among the results there). So does a result line that also carries what the person
    typed while the tools ran (2.1.x): the model read it with the results."""
    on_path = {id(m) for m in order}
    for m in sorted(
        (m for m in f.msgs if m.part == part and id(m) not in on_path and _carries_results(m)), key=lambda m: m.line
    ):
        parent = f.owner.get(m.parent) if m.parent else None
        if parent is None or id(parent) not in on_path:
            continue
        k = next(i for i, o in enumerate(order) if o is parent) + 1
        while k < len(order) and order[k].line < m.line and _carries_results(order[k]):
            k += 1
        order.insert(k, m)
        on_path.add(id(m))


def _carries_results(m: _Msg) -> bool:
    return (
        m.role == "user"
        and isinstance(m.content, list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in m.content)
    )


def _parent_message(f: _File, m: _Msg) -> str | None:
    """The native id of the nearest message above ``m``, stepping over non-message lines."""
    seen, cur = set(), m.parent
    while cur is not None and cur not in seen:
        owner = f.owner.get(cur)
        if owner is not None and owner is not m:
            return owner.uuid
        seen.add(cur)
        node = f.nodes.get(cur)
        cur = node[0] if node else None
    return None


def _parent_conversation(p: Path, session_id: str | None, subagent: bool) -> str | None:
    """For a sub-agent transcript: the id the parent session's conversation gets when imported from its file
    (``p`` is resolved already, and so is the folder they share)."""
    if not session_id or session_id == p.stem:
        return None
    folder = p.parent.parent.parent if subagent else p.parent
    return stable_id(source_key(NAME, str(folder / f"{session_id}.jsonl")), session_id)


def _stored_sizes(path: str, subagent: bool) -> dict[str, int]:
    """Sizes of outputs Claude Code stored beside the session as ``tool-results/<tool_use_id>.txt``."""
    session = os.path.dirname(os.path.dirname(path)) if subagent else os.path.splitext(path)[0]
    try:
        with os.scandir(os.path.join(session, "tool-results")) as it:
            return {e.name.rsplit(".", 1)[0]: e.stat().st_size for e in it if e.name.startswith("toolu_")}
    except OSError:
        return {}


def _stored_results(calls: pl.DataFrame, sizes: dict[str, int]) -> pl.DataFrame:
    """A call answered by a stored output counts the whole output (the inline text is only its preview)."""
    import polars as pl

    if not sizes or not calls.height:
        return calls
    ids = calls["call_id"].to_list()
    answered = calls["result_seq"].is_not_null().to_list()
    old = calls["result_bytes"].to_list()
    new = [sizes.get(c, o) if a else o for c, a, o in zip(ids, answered, old)]
    return calls.with_columns(pl.Series("result_bytes", new, dtype=pl.Int32))


def _origin(m: _Msg, text: str, expanded: set[str]) -> str:
    """Whose a user message is: as the line declares it (``_declared``); Claude Code's own lines by their flags; a prompt after a reminder block is the
    person's; a slash command the person gave words to, or one whose body Claude Code sent the model next (a prompt
    command or a skill: ``/review``, ``/superpowers:write-plan``, the body an ``isMeta`` line answering it), is the
    person's turn; a local command run with no words (``/exit``, ``/compact``, ``/model``: ``<local-command-stdout>``
    answers it) is not; else the shared classifier (command wrappers, hook feedback, interruptions, summaries)."""
    if m.declared is not None:  # who sent it, as the line says (origin.kind, promptSource: system)
        return m.declared
    if m.meta:
        return "harness"
    if text.strip() == TOOL_LOADED and _carries_results(m):
        return "harness"
    if REMINDED.match(text):
        return "person"
    if text.lstrip().startswith(INJECTED):
        return "harness"
    if has_command_args(text) or (m.uuid in expanded and is_command(text)):
        return "person"
    return origin_of("user", text)


def _is_agent_meta(p: Path) -> bool:
    """``subagents/agent-<id>.meta.json`` (2.1.9x): a sub-agent's type and description, read with its transcript."""
    return p.parent.name == "subagents" and p.name.startswith("agent-") and p.name.endswith(".meta.json")


def _agent_title(meta: Path) -> str | None:
    try:
        doc = values.loads(read_side(meta))
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(doc, dict):
        return None
    parts = [v for v in (doc.get("agentType"), doc.get("description")) if isinstance(v, str) and v.strip()]
    return ": ".join(parts) or None


def _side_file(b: Batch, p: Path) -> Parsed:
    """A file Claude Code keeps beside its transcripts that holds no messages: a sub-agent's .meta.json, a
    session's todo list (``todos/<session>-agent-<agent>.json``, what its TodoWrite calls wrote). Accounted for
    as read with the transcript it belongs to."""
    b.rows_read = 1
    parsed = Parsed.of(b)
    if _is_agent_meta(p):
        transcript = p.name[: -len(".meta.json")] + ".jsonl"
        found = "" if (p.parent / transcript).exists() else " (not found)"
        parsed.notes.append(f"side file: sub-agent type and description, read with {transcript}{found}")
    else:
        parsed.notes.append(f"side file: the todo list of session {p.name[:36]} (its TodoWrite calls hold it)")
    return parsed


def _is_todo_list(p: Path) -> bool:
    return p.parent.name == "todos" and TODO_LIST.fullmatch(p.name) is not None


def _notes(f: _File) -> list[str]:
    out = []
    for sid, kind in f.copy_kind.items():
        n = sum(1 for m in f.msgs if f.copied.get(m.uuid) == sid)
        how = "forked from" if kind == "fork" else "continued from"
        out.append(f"{n} messages copied from session {sid} ({how} it) kept off the main path")
    if f.merged:
        out.append(f"{f.merged} continuation lines of split responses merged")
    if f.queued:
        out.append(f"{len(f.queued)} prompts read mid-turn, known only by their queue-operation remove, made messages")
    shown = Counter(e.kind for e in f.events if e.kind != "reasoning")  # reasoning is no event a reader counts
    if shown:
        out.append("events: " + _counts(shown))
    if f.skipped:
        out.append("skipped line types: " + _counts(f.skipped))
    if f.fields:
        out.append("unknown fields: " + _counts(f.fields))
    if f.blocks:
        out.append("unknown content blocks: " + _counts(f.blocks))
    return out


def _counts(c: Counter[str]) -> str:
    return ", ".join(f"{k} x{n}" for k, n in sorted(c.items()))


def _records(lines: list[bytes]) -> Iterator[tuple[int, bytes, str, Any]]:
    """(line number, raw line, quarantine reason or "", the parsed record) of each record. Claude Code sometimes
    appends a record to a line that has no newline yet (2.1.x: a ``summary`` or ``file-history-snapshot`` written
    right after an ``assistant`` or ``progress`` line; 7 of 357 sessions of 2026): each object of such a line is a
    record of its own, read with that line's number."""
    for lineno, raw in enumerate(lines, 1):
        reason, obj = _load(raw)
        joined = _joined(raw) if reason else None
        if joined:
            for one in joined:
                yield lineno, raw, "", one
        else:
            yield lineno, raw, reason, obj


def _joined(raw: bytes) -> list[dict[str, Any]] | None:
    """The JSON objects a line holds one after another, when it holds two or more and nothing else."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder, out, i = json.JSONDecoder(), [], 0
    while i < len(text):
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i == len(text):
            break
        try:
            obj, i = decoder.raw_decode(text, i)
        except (json.JSONDecodeError, RecursionError):
            return None
        if not isinstance(obj, dict):
            return None
        out.append(obj)
    return out if len(out) > 1 else None


def _load(raw: bytes) -> tuple[str, Any]:
    """(quarantine reason or "", the parsed line)."""
    obj, reason = read_object(raw)
    return reason, obj


def _thoughts(content: Any, line: int, part: str, uid: str) -> list[_Event]:
    """A reply's ``thinking`` blocks (not ``redacted_thinking``) as one ``reasoning`` event on its message, the text
    in ``detail.text``: what the model reasoned before it answered, which an instruction may govern."""
    text = (
        "\n\n".join(
            b["thinking"]
            for b in content or []
            if isinstance(b, dict)
            and b.get("type") == "thinking"
            and isinstance(b.get("thinking"), str)
            and b["thinking"].strip()
        )
        if isinstance(content, list)
        else ""
    )
    return [_Event(line, part, "reasoning", None, None, None, uid, {"text": text})] if text else []


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}] if isinstance(content, str) else []


def _detail(obj: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: obj[k] for k in keys if obj.get(k) is not None}


def _int(v: Any) -> int | None:
    return values.count(v)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def looks_like_claude_code(obj: dict[str, Any]) -> bool:
    """Sniff: a record with a Claude Code line type and its identifying fields."""
    return obj.get("type") in LINE_TYPES and ("sessionId" in obj or "leafUuid" in obj or "parentUuid" in obj)


def _sniff(probe: Probe) -> bool:
    if _is_agent_meta(probe.path) or _is_todo_list(probe.path):
        return True
    if probe.records and claude_code_history.is_prompt_history(probe.path, probe.records[0]):
        return True
    return any(isinstance(r, dict) and looks_like_claude_code(r) for r in probe.records)


FORMAT = Format(
    NAME,
    "Claude Code transcripts, ~/.claude/projects/<project>/<session>.jsonl (and sub-agents), ~/.claude/history.jsonl",
    _sniff,
    task=parse_file,
    suffixes=(".jsonl",),
    hashes=True,
    claims=("*/.claude/projects/*.jsonl",),
    sides=(
        Side("tool-results/*", "../../{parent}.jsonl", "a tool's output stored beside the session"),
        Side("*.meta.json", "{base}.jsonl", "the sub-agent's type and description", read=False),
    ),
)
