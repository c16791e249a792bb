"""Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``, one session per file.

Three generations are read. Since mid-2025 every line is ``{"timestamp", "type", "payload"}`` with type
``session_meta``, ``turn_context``, ``response_item`` (the model's input and output items), ``event_msg``
(runtime events) or ``compacted``. Before that, the first line was the bare session meta (``id``,
``timestamp``, ``instructions``) and every other line a bare response item or a ``{"record_type": "state"}``
marker. The first TypeScript CLI wrote one JSON document, ``{"session": {...}, "items": [...]}``.

Response items make the messages: the items one model response produced (its text, reasoning and tool
calls) are one assistant message, so parallel calls are one turn; a ``function_call_output`` answers its
call by ``call_id``. ``event_msg`` repeats the messages for the UI (skipped and counted); its
``token_count`` carries the running total of the session's tokens, so each response's usage is its
``last_token_usage`` (or the difference of two totals; a total that went down was reset), and a repeated
total is not a new response.
``thread_rolled_back`` drops the last turns from the model's history: they stay, off the main path. A
sub-agent's meta names its parent thread, to which its conversation is linked; a forked thread's file first
copies its parent's history (a second ``session_meta``), kept off the main path, and its copied
``token_count`` events, which are the parent's spend, are skipped and counted (not this thread's usage).

Whose turn: a user message holding a fragment Codex injects (environment, AGENTS.md, aborted-turn notices...)
is the harness's, any other the person's. A tool result failed when its exit code says so
(``exec_command_end`` or the output's own header or metadata) or a tool handler answered with its failure.
``~/.codex/history.jsonl`` and ``session_index.jsonl`` beside the rollouts: see ``codex_history``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.codex import history as codex_history
from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, listed, mapping, text_of

WRAPPED = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "tool_search_output")
ITEMS = (*CALLS, *OUTPUTS, "message", "reasoning")
# User-role fragments Codex injects itself (codex-rs core/src/context/contextual_user_message.rs and the
# legacy list in rollout_migration): a user message holding any of them is the harness's, never a turn the
# person typed. Matched at the start of a fragment, case-insensitively, as Codex does.
CONTEXTUAL = re.compile(
    r"\s*(?:# AGENTS\.md instructions|<user_instructions>|<INSTRUCTIONS>|<agents_instructions>"
    r"|<environment_context>|<context_update>|<multiagent_context>|<agent_message_board_notification>"
    r"|<skill>|<skills_instructions>|<user_shell_command>|<turn_aborted>|<subagent_notification>"
    r"|<codex_internal_context|<goal_context>|<recommended_plugins>|<hook_prompt "
    r"|<permissions instructions>)",
    re.IGNORECASE,
)
# The header unified exec and shell_command put above a command's output ("Exit code: 1", "Process exited with
# code 2"), read up to the "Output:" line so that a command printing such a line is not mistaken for it.
EXIT = re.compile(r"(?:Exit code|Process exited with code):? (-?\d+)")
# How Codex's tool handlers answer a call that failed before or while running (FunctionCallError::RespondToModel),
# how the older shell tool reported a patch that did not apply ("error: Failed to find expected lines") or a
# command the sandbox stopped ("failed in sandbox LinuxSeccomp with execution error: ..., exit code: 2"), and an
# MCP call that failed (protocol/src/models.rs: "err: {error:?}").
FAILURES = re.compile(
    r"\s*(?:execution error:|apply_patch verification failed|write_stdin failed|failed to parse "
    r"function arguments|unsupported call|error:|failed in sandbox|err: )",
    re.IGNORECASE,
)
ROLES = {"user": "user", "assistant": "assistant", "developer": "system", "system": "system"}
TS_DOC = re.compile(rb'^\s*\{\s*"session"\s*:\s*\{')


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    if TS_DOC.match(data):
        doc = log.json_document(data)
        if not isinstance(doc, dict):
            return []
        session = mapping(doc.get("session"))
        lines = [(0, session, "session_meta")] + [
            (i + 1, it, "response_item") for i, it in enumerate(listed(doc.get("items"))) if isinstance(it, dict)
        ]
        return _build(path, log, lines, f"{log.name}")
    index = codex_history.kind_of(Path(path), _first(data))
    if index is not None:
        return codex_history.read(path, log, index)
    lines = []
    for n, _raw, obj in log.json_lines(data):
        kind = obj.get("type")
        if kind in WRAPPED and "payload" in obj:
            payload = mapping(obj["payload"])
            if kind == "response_item" or kind == "event_msg":
                payload = {**payload, "timestamp": payload.get("timestamp", obj.get("timestamp"))}
            lines.append((n, payload, kind))
        elif obj.get("record_type") is not None:
            log.skip(f"record_type:{obj.get('record_type')}")
        elif kind in ITEMS or (isinstance(kind, str) and "role" in obj):
            lines.append((n, obj, "response_item"))
        elif n == 1 and "id" in obj and "type" not in obj:
            lines.append((n, obj, "session_meta"))  # the older layout's bare meta line
        else:
            log.skip(f"line type {str(kind)[:40]}")
    if not lines:
        log.error = "no line is a Codex rollout record (session_meta, response_item, ...)"
        return []
    return _build(path, log, lines, log.name)


class _State:
    """The conversation being assembled, line by line."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.events: list[Event] = []
        self.model: str | None = None
        self.first_model: str | None = None
        self.open: Turn | None = None  # the assistant message the current response is adding to
        self.last_total: dict[str, Any] | None = None
        self.user_starts: list[int] = []  # index of each real user message on the main path
        self.compacted_lines = 0
        self.merged = 0  # response items added to an assistant message already started
        self.compaction_events: list[Event] = []
        self.ui_messages: list[Turn] = []  # event_msg user/agent messages, used only if no response item is
        self.resume_from: str | None = None  # after a rollback: the message the next one continues from
        self.inherited = False  # inside the history a forked thread copied from the thread it was forked from
        self.copied = 0  # messages of that history
        self.exit_codes: dict[str, int] = {}  # call_id -> exit code, from exec_command_end / patch_apply_end
        self.pending: list[Usage] = []  # usage of responses logged before any assistant message (UI events only)
        self.placed = 0  # ... and how many of them a later assistant message took
        self.prompt: tuple[Turn, str] | None = None  # a user_message event no response item has carried yet
        self.said: list[str] = []  # the person's response-item messages no user_message event has repeated yet
        self.from_events = 0  # the person's turns only a user_message event holds
        self.item_messages = 0  # response-item messages (user or assistant)

    def flush(self) -> None:
        """The user_message event no response item repeated is the person's turn (Codex logged it only there), in
        its place: before whatever came after it."""
        if self.prompt is not None:
            turn, self.prompt = self.prompt[0], None
            self.append(turn)
            self.open = None  # a new input: the next response is a new assistant message
            self.user_starts.append(len(self.turns) - 1)
            self.from_events += 1

    def append(self, turn: Turn) -> Turn:
        if turn.role == "assistant" and self.pending:
            turn.usage, self.placed, self.pending = self.pending + turn.usage, self.placed + len(self.pending), []
        if self.resume_from is not None:
            turn.parent, self.resume_from = self.resume_from, None
        if self.inherited:
            turn.main = False
            self.copied += 1
        self.turns.append(turn)
        return turn


def _build(path: str, log: Log, lines: list[tuple[int, dict[str, Any], str]], name: str) -> list[Conversation]:
    st = _State()
    meta: dict[str, Any] = {}
    for n, obj, kind in lines:
        with log.guard(f"{name}:{n}", obj):
            if kind == "session_meta":
                st.inherited = bool(meta) and obj.get("id") != meta.get("id")
                meta = meta or obj
                log.skip("session_meta (of the thread this one was forked from)" if st.inherited else "session_meta")
                continue
            if st.inherited and _own_turn(obj, kind, meta):
                st.inherited = False
            if kind == "turn_context":
                m = obj.get("model")
                st.model = m if isinstance(m, str) else st.model
                st.first_model = st.first_model or st.model
                log.skip("turn_context")
            elif kind == "compacted":
                st.compacted_lines += 1
                log.skip("compacted (-> events)")
                history = [h for h in listed(obj.get("replacement_history")) if isinstance(h, dict)]
                st.events.append(
                    Event(
                        "compaction",
                        len(st.turns),
                        detail={
                            "summary": obj.get("message"),
                            "replacement_items": len(history),
                            # what the rebuilt context kept, and whether its summary is only an encrypted blob
                            "kept_roles": sorted({str(h.get("role")) for h in history if h.get("type") == "message"}),
                            "encrypted": any("encrypted_content" in h for h in history),
                        },
                    )
                )
                st.open = None
            elif kind == "event_msg" and obj.get("type") == "user_message":
                _user_message(log, st, n, obj)
            elif kind == "event_msg":
                _event(log, st, obj)
            else:
                _item(log, st, n, obj)
    st.flush()
    if not st.item_messages and st.ui_messages:
        st.turns = st.ui_messages  # a rollout whose messages only reached the UI events
        log.skip("event_msg:user_message", st.from_events)
        log.notes.append("messages taken from event_msg (no response_item message in the file)")
    elif st.from_events:
        log.notes.append(
            f"{st.from_events} turns of the person taken from event_msg user_message (no response_item carries them)"
        )
    _place_pending(log, st)
    if not st.compacted_lines:
        st.events.extend(st.compaction_events)
        log.skip("event_msg:context_compacted (-> events)", len(st.compaction_events))
    else:
        log.skip("event_msg:context_compacted (repeats compacted)", len(st.compaction_events))
    if st.merged:
        log.notes.append(f"{st.merged} items of multi-item responses merged into their assistant message")
    for t in st.turns:
        code = st.exit_codes.get(t.answers or "") if t.role == "tool" else None
        if code is not None:
            t.is_error = code != 0
    if st.copied:
        log.notes.append(
            f"{st.copied} messages of the history copied from the thread this one was forked from "
            "kept off the main path"
        )
    instructions = meta.get("instructions")
    base = meta.get("base_instructions")
    text = instructions if isinstance(instructions, str) else text_of(base) if isinstance(base, dict) else ""
    if text.strip():
        st.turns.insert(0, Turn("system", text, id="instructions", at=meta.get("timestamp")))
        for e in st.events:
            e.before = e.before + 1 if isinstance(e.before, int) else e.before
    native = given if isinstance(given := meta.get("id"), str) else _id_from_name(Path(path).name)
    provider = meta.get("model_provider") if isinstance(meta.get("model_provider"), str) else "openai"
    git = mapping(meta.get("git"))
    return [
        Conversation(
            native,
            st.turns,
            provider=provider,
            model=st.first_model or st.model,
            created=meta.get("timestamp"),
            parent=_parent(meta),
            title=_subagent_title(meta),
            events=st.events,
            workdir=_str(meta.get("cwd")),
            branch=_str(git.get("branch")),
        )
    ]


def _item(log: Log, st: _State, n: int, it: dict[str, Any]) -> None:
    kind, at = it.get("type"), it.get("timestamp")
    if kind == "message" or (kind is None and "role" in it):
        role = ROLES.get(given) if isinstance(given := it.get("role"), str) else None
        if role is None:
            log.quarantine(f"{log.name}:{n}", f"message with unknown role {str(it.get('role'))[:40]!r}", it)
            return
        text = text_of(it.get("content"))
        origin = "harness" if role == "system" else "person" if role == "user" else None
        if role == "user" and _contextual(it.get("content")):
            role, origin = "system", "harness"
        st.item_messages += role in ("user", "assistant")
        if role == "user":
            said = _said(it.get("content"))
            if st.prompt is not None and st.prompt[1] == said:  # the event came first: this item is that turn
                st.prompt = None
                log.skip("event_msg:user_message")
            else:
                st.flush()
                st.said.append(said)
        elif role == "assistant":
            st.flush()
        if role == "assistant" and st.open is not None:
            st.open.text = f"{st.open.text}\n{text}" if st.open.text else text
            st.merged += 1
            return
        turn = st.append(Turn(role, text, at=at, id=_nid(it, n), origin=origin))
        st.open = turn if role == "assistant" else None
        if role == "user":
            st.user_starts.append(len(st.turns) - 1)
    elif kind in CALLS:
        st.flush()
        call = _call(it)
        if st.open is None:
            st.open = st.append(Turn("assistant", "", at=at, id=_nid(it, n)))
        else:
            st.merged += 1
        st.open.calls.append(call)
    elif kind in OUTPUTS:
        st.flush()
        text, error = _output(it.get("output") if kind != "tool_search_output" else it.get("tools"))
        st.append(Turn("tool", text, answers=_str(it.get("call_id")), is_error=error, at=at, id=_nid(it, n)))
        st.open = None
    elif kind == "reasoning":
        log.skip("reasoning")  # not a message; its readable summary is kept as a ``reasoning`` event on the next turn
        if thought := _reasoning_text(it):
            st.events.append(Event("reasoning", len(st.turns), detail={"text": thought}))
    elif kind == "agent_message":  # multi-agent v2 (0.14x): one agent's message to another (a sub-agent's task)
        st.flush()
        text = text_of(it.get("content"))  # its payload beyond the header is encrypted
        author = _str(it.get("author"))
        st.append(Turn("user", text, at=at, id=_nid(it, n), origin="harness", speaker=author))
        st.open = None
    elif kind in (
        "compaction",
        "compaction_summary",
        "context_compaction",
    ):  # newer versions: the compacted history, encrypted
        st.compacted_lines += 1
        log.skip(f"response_item:{kind} (-> events)")
        st.events.append(Event("compaction", len(st.turns), detail={"source": f"response_item:{kind}"}))
        st.open = None
    else:
        log.skip(f"response_item:{str(kind)[:40]}")


def _event(log: Log, st: _State, ev: dict[str, Any]) -> None:
    kind = ev.get("type")
    if kind == "token_count":
        _usage(log, st, ev)
    elif kind == "thread_rolled_back":
        _roll_back(log, st, values.count(ev.get("num_turns"), "rolled back turns") or 0)
    elif kind == "context_compacted":
        st.compaction_events.append(Event("compaction", len(st.turns), detail={"source": "event_msg"}))
    elif kind in ("turn_aborted", "error", "stream_error", "warning"):
        st.events.append(
            Event(
                kind,
                len(st.turns),
                trigger=_str(ev.get("reason")) or _str(ev.get("codex_error_info")),
                detail={k: v for k, v in ev.items() if k in ("message", "reason", "turn_id")},
            )
        )
        log.skip(f"event_msg:{kind} (-> events)")
    elif kind in ("exec_command_end", "patch_apply_end") and isinstance(ev.get("call_id"), str):
        code = ev.get("exit_code") if type(ev.get("exit_code")) is int else None
        if code is None and isinstance(ev.get("success"), bool):
            code = 0 if ev["success"] else 1
        if code is not None:
            st.exit_codes[ev["call_id"]] = code
        log.skip(f"event_msg:{kind} (-> tool result errors)")
    elif kind == "agent_message" and isinstance(ev.get("message"), str):
        st.ui_messages.append(Turn("assistant", ev["message"], at=ev.get("timestamp")))
        log.skip(f"event_msg:{kind}")
    else:
        log.skip(f"event_msg:{str(kind)[:40]}")


def _user_message(log: Log, st: _State, n: int, ev: dict[str, Any]) -> None:
    """What the person sent, as the UI event repeats it. Codex writes the response item and this event for every
    turn (the item first in 0.4x-0.7x); a turn whose item is missing (the event alone) is the person's turn from
    the event, in its place, never twice: an event is matched to a response item of the same text in either order."""
    text = ev.get("message")
    if not isinstance(text, str):
        log.skip("event_msg:user_message (no message)")
        return
    at = ev.get("timestamp")
    said = _said(text)
    st.ui_messages.append(Turn("user", text, at=at))
    if said in st.said:  # the item came first (the usual order): the event repeats it
        st.said.remove(said)
        log.skip("event_msg:user_message")
        return
    st.flush()
    contextual = bool(CONTEXTUAL.match(text))
    st.prompt = (
        Turn(
            "system" if contextual else "user",
            text,
            at=at,
            id=f"line:{n}",
            origin="harness" if contextual else "person",
        ),
        said,
    )


def _said(content: Any) -> str:
    """A user message's text as both of its records give it: the item's ``input_text`` parts, the event's
    ``message`` (images aside), white space collapsed."""
    if isinstance(content, str):
        text = content
    else:
        text = "\n".join(
            p["text"]
            for p in listed(content)
            if isinstance(p, dict) and p.get("type") == "input_text" and isinstance(p.get("text"), str)
        )
    return " ".join(text.split())


def _place_pending(log: Log, st: _State) -> None:
    """Usage no later assistant message took: on the last assistant message, else skipped and counted."""
    log.skip("event_msg:token_count (-> message_usage)", st.placed)
    target = next((t for t in reversed(st.turns) if t.role == "assistant"), None)
    if target is None:
        log.skip("event_msg:token_count (no assistant message)", len(st.pending))
    else:
        target.usage.extend(st.pending)
        log.skip("event_msg:token_count (-> message_usage)", len(st.pending))
    st.pending = []


def _usage(log: Log, st: _State, ev: dict[str, Any]) -> None:
    """One usage row per model response. ``info.total_token_usage`` is the session's running total: a
    repeated total (Codex writes one after every rate-limit update) is no new response; a total that went down
    was reset; the totals a forked thread copied from its parent are the parent's responses (not counted)."""
    info = ev.get("info") if isinstance(ev.get("info"), dict) else None
    if info is None:
        if any(k in ev for k in ("input_tokens", "output_tokens")):  # early versions: the response's own usage
            info = {"last_token_usage": ev}
        else:
            log.skip("event_msg:token_count (rate limits only)")
            return
    total = info.get("total_token_usage") if isinstance(info.get("total_token_usage"), dict) else None
    last = info.get("last_token_usage") if isinstance(info.get("last_token_usage"), dict) else None
    if total is not None and total == st.last_total:
        log.skip("event_msg:token_count (repeated total)")
        return
    if st.inherited:  # the parent thread's responses, replayed into a forked thread's file: its spend, not this one's
        st.last_total = total or st.last_total
        log.skip("event_msg:token_count (copied from the thread this one was forked from)")
        return
    gap: dict[str, int] | None = None
    if total is not None:
        prev = st.last_total or {}
        diff = {k: (values.count(total.get(k)) or 0) - (values.count(prev.get(k)) or 0) for k in total}
        if last is None:  # a running total that went down was reset (a new process): the new total is this one's
            last = dict(total) if any(v < 0 for v in diff.values()) else diff
        elif st.last_total is not None and all(v >= 0 for v in diff.values()):
            # the total grew by more than this response: a response whose own count was never written (a turn
            # aborted while it streamed, 0.141) was spent all the same, its usage the rest of the growth
            rest = {k: diff[k] - (values.count(last.get(k)) or 0) for k in ("input_tokens", "output_tokens")}
            if all(v >= 0 for v in rest.values()) and any(v > 0 for v in rest.values()):
                cached = diff.get("cached_input_tokens", 0) - (values.count(last.get("cached_input_tokens")) or 0)
                gap = rest | {"cached_input_tokens": min(max(cached, 0), rest["input_tokens"])}
    st.last_total = total or st.last_total
    if last is None:
        log.skip("event_msg:token_count (before any response)")
        return
    rows = [_one_usage(last, st.model)] + ([_one_usage(gap, st.model)] if gap else [])
    target = next((t for t in reversed(st.turns) if t.role == "assistant"), None)
    if target is None:  # responses that reached only the UI events (agent_message): on the next assistant message
        st.pending.append(rows[0])  # (one row per record waits; no gap arises before a first assistant message)
        return
    log.skip("event_msg:token_count (-> message_usage)")
    target.usage.extend(rows)


def _one_usage(last: dict[str, Any], model: str | None) -> Usage:
    return Usage(
        prompt_tokens=last.get("input_tokens"),
        output_tokens=last.get("output_tokens"),
        cache_read_input_tokens=values.count(last.get("cached_input_tokens")) or 0,
        model=model,
    )


def _roll_back(log: Log, st: _State, n: int) -> None:
    """The last ``n`` user turns and everything after them leave the main path; what comes next continues
    from the message before them."""
    starts = [i for i in st.user_starts if st.turns[i].main]
    if n <= 0 or not starts:
        log.skip("event_msg:thread_rolled_back (nothing to roll back)")
        return
    first = starts[-min(n, len(starts))]
    for t in st.turns[first:]:
        t.main = False
    keep = next((t for t in reversed(st.turns[:first]) if t.main), None)
    st.resume_from = keep.id if keep else ""  # "": the next message starts a new root
    st.open = None
    log.notes.append(f"{min(n, len(starts))} rolled-back turns kept off the main path")


def _call(it: dict[str, Any]) -> ToolCall:
    kind = it.get("type")
    cid = _str(it.get("call_id")) or _str(it.get("id"))
    if kind == "function_call":
        return ToolCall(_str(it.get("name")), it.get("arguments"), cid)
    if kind == "custom_tool_call":
        return ToolCall(_str(it.get("name")), it.get("input"), cid)
    if kind == "local_shell_call":
        return ToolCall("local_shell", it.get("action"), cid)
    if kind == "tool_search_call":
        return ToolCall("tool_search", it.get("arguments"), cid)
    return ToolCall("web_search", it.get("action"), None)  # answered inside the model: no output item


def _output(out: Any) -> tuple[str, bool]:
    """(text, error flag) of a tool output: a string (older shells wrap it as JSON with the exit code), a
    list of content items, or ``{"content", "success"}``. Failed when its exit code, ``success`` or a handler's
    failure message says so; else it succeeded."""
    if isinstance(out, dict):
        text = text_of(out.get("content", out))
        return text, out.get("success") is False or _failed(text)
    if isinstance(out, list):
        text = text_of(out)
        return text, _failed(text)
    text = out if isinstance(out, str) else ""
    if text.startswith("{") and '"output"' in text:
        try:
            wrapped = values.loads(text)
        except ValueError:
            wrapped = None
        if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
            meta = mapping(wrapped.get("metadata"))
            code = meta.get("exit_code")
            return wrapped["output"], (code != 0) if type(code) is int else _failed(wrapped["output"])
    code = _exit_code(text)
    return text, code != 0 if code is not None else _failed(text)


def _failed(text: str) -> bool:
    return bool(FAILURES.match(text))


def _exit_code(text: str) -> int | None:
    """The exit code in the header above a command's output (the lines before ``Output:``)."""
    for line in text.split("\n", 8)[:8]:
        if line.rstrip() == "Output:":
            return None
        m = EXIT.match(line)
        if m:
            return int(m.group(1))
    return None


def _parent(meta: dict[str, Any]) -> str | None:
    src = meta.get("source")
    spawn = src.get("subagent") if isinstance(src, dict) else None
    spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
    if isinstance(spawn, dict) and isinstance(parent := spawn.get("parent_thread_id"), str):
        return parent
    return _str(meta.get("forked_from_id"))


def _subagent_title(meta: dict[str, Any]) -> str | None:
    """A sub-agent thread spawned by another agent (0.14x multi-agent v2: ``agent_path``, ``agent_nickname``) is
    titled by its task's path and nickname: its own first user message is the parent's task message, whose text
    beyond a header is encrypted, and the person's prompts in its file are the parent's, copied."""
    src = meta.get("source")
    spawn = src.get("subagent") if isinstance(src, dict) else None
    spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
    path = _str(meta.get("agent_path")) or (_str(spawn.get("agent_path")) if isinstance(spawn, dict) else None)
    if not path:
        return None
    nick = _str(meta.get("agent_nickname")) or (_str(spawn.get("agent_nickname")) if isinstance(spawn, dict) else None)
    return f"sub-agent {path}" + (f" ({nick})" if nick else "")


def _id_from_name(name: str) -> str:
    m = re.search(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", name)
    return m.group(1) if m else Path(name).stem


def _contextual(content: Any) -> bool:
    """Codex's own test (``is_contextual_user_message``): any text fragment opening with an injected marker."""
    parts = listed(content) if not isinstance(content, str) else [{"text": content}]
    return any(isinstance(p, dict) and isinstance(p.get("text"), str) and CONTEXTUAL.match(p["text"]) for p in parts)


def _own_turn(obj: dict[str, Any], kind: str, meta: dict[str, Any]) -> bool:
    """Whether a turn boundary in a forked thread's file starts a turn of that thread, not one copied from its
    parent: the turn began after the thread was created (``turn_id`` and thread ids are time-ordered UUIDv7;
    ``started_at`` is in seconds). A boundary that says neither ends the copy."""
    if kind not in ("turn_context",) and not (
        kind == "event_msg" and obj.get("type") in ("task_started", "turn_started")
    ):
        return False
    turn, thread = _uuid7_ms(obj.get("turn_id")), _uuid7_ms(meta.get("id"))
    if turn is not None and thread is not None:
        return turn >= thread
    started, created = values.epoch(obj.get("started_at")), values.epoch(meta.get("timestamp"))
    if started is not None and created is not None:
        return started >= created
    return True


def _uuid7_ms(v: Any) -> int | None:
    """The millisecond timestamp of a version-7 UUID, else None."""
    if isinstance(v, str) and len(v) == 36 and v[14] == "7":
        try:
            return int(v[:8] + v[9:13], 16)
        except ValueError:
            return None
    return None


def _nid(it: dict[str, Any], n: int) -> str:
    return it["id"] if isinstance(it.get("id"), str) else f"line:{n}"


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _first(data: bytes) -> object:
    """The first line as JSON (None when it is not)."""
    try:
        return values.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return None


def _sniff(probe: Probe) -> bool:
    if probe.records and codex_history.kind_of(probe.path, probe.records[0]):
        return True
    if TS_DOC.match(probe.head):
        return b'"items"' in probe.head or probe.path.name.startswith("rollout-")
    recs = [r for r in probe.records if isinstance(r, dict)]
    if any(r.get("type") in WRAPPED and "payload" in r for r in recs):
        return True
    if any(r.get("record_type") == "state" for r in recs):
        return True
    return (
        bool(recs)
        and "id" in recs[0]
        and "timestamp" in recs[0]
        and "type" not in recs[0]
        and "role" not in recs[0]
        and any(r.get("type") in ITEMS for r in recs[1:])
    )


FORMAT = Format(
    "codex",
    "Codex CLI rollouts, ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl (and the older layouts), ~/.codex/history.jsonl",
    _sniff,
    read=read,
    claims=("rollout-*.jsonl", "*/.codex/sessions/*.jsonl"),
)


def _reasoning_text(it: dict[str, Any]) -> str:
    """A reasoning item's readable text: its ``summary`` parts and its ``content`` parts (``encrypted_content`` is
    not readable)."""
    parts = [*listed(it.get("summary")), *listed(it.get("content"))]
    return "\n\n".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"].strip()
    )
