"""Cline and Roo Code tasks: ``…/globalStorage/saoudrizwan.claude-dev/tasks/<task id>/`` (Roo Code:
``rooveterinaryinc.roo-cline``), one conversation per task.

``api_conversation_history.json`` is the task's API history: Anthropic-style messages (``role``, ``content``
as text or blocks; newer versions add ``ts``, ``modelInfo`` and ``metrics``). With native tool calling
``tool_use`` blocks are the calls and ``tool_result`` blocks their results, linked by id. The classic
protocol writes each call as XML in the assistant's text (``<read_file><path>a.py</path></read_file>``) and
its result as user text opening ``[read_file for 'a.py'] Result:`` (``ToolResultUtils.pushToolResult``):
the result is linked to the open call of that name whose arguments hold the echoed argument, never by
order; a result no call matches stays unlinked. A "user" message also carries what Cline adds on its own
(``<environment_details>``, ``[TASK RESUMPTION]``, ``[ERROR] You did not use a tool``): the harness's. The
person's own words are only what Cline wraps in ``<task>``, ``<feedback>``, ``<answer>`` and
``<user_message>`` (the tags its task loop scans for "user generated content"): each becomes a ``person``
turn.

``ui_messages.json`` (``ClineMessage[]``: ``say``/``ask`` records) is a side file of the history: each
``api_req_started`` gives a request's tokens (placed by ``conversationHistoryIndex``), and compactions are
events. Without a history beside it (late-2025 tasks shared alone), the task is read from it: the
person's text (the first ``text``, ``user_feedback``), the model's text, tool asks as calls, and each
request's text (``api_req_started.request``, the user content Cline sent) for the results and notices.
``task_metadata.json`` gives the model when the history has none.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe, Side
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, mapping, read_side, text_of

API_FILE, UI_FILE, META_FILE = "api_conversation_history.json", "ui_messages.json", "task_metadata.json"
CONTEXT_FILE = "context_history.json"
XML_TOOLS = (
    "execute_command",
    "read_file",
    "write_to_file",
    "replace_in_file",
    "apply_diff",
    "insert_content",
    "search_and_replace",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "codebase_search",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "ask_followup_question",
    "attempt_completion",
    "plan_mode_respond",
    "new_task",
    "switch_mode",
    "update_todo_list",
    "fetch_instructions",
    "load_mcp_documentation",
    "web_fetch",
    "condense",
    "summarize_task",
    "new_rule",
    "report_bug",
    "act_mode_respond",
    "focus_chain",
    "generate_explanation",
    "use_skill",
    "web_search",
    "run_slash_command",
    "generate_image",
    "edit_file",
    "search_replace",
    "apply_patch",
    "read_command_output",
)  # Cline's shared/tools.ts and Roo Code's packages/types tool.ts
XML_CALL = re.compile(r"<(" + "|".join(XML_TOOLS) + r")>(.*?)</\1>", re.DOTALL)
XML_PARAM = re.compile(r"<([a-z_]+)>\n?(.*?)\n?</\1>", re.DOTALL)
# What Cline itself puts on the user role, each opening a part of the text (responses.ts, ToolResultUtils.ts).
# A result's header echoes the tool and its main argument, then maybe more: " in '*.py'", " and 2 more files" (Roo).
MARKER = re.compile(
    r"(?:^|\n)(?:\[(?P<tool>[a-z_]+)(?: for '(?P<arg>.*?)'[^\n\]]*)?\] Result:"
    r"|(?P<env><environment_details>)|(?P<resume>\[TASK RESUMPTION\])"
    r"|(?P<notool>\[ERROR\] You did not use a tool))",
    re.DOTALL,
)
PERSON = re.compile(r"<(task|feedback|answer|user_message)>\n?(.*?)\n?</\1>", re.DOTALL)
# A failed tool, as Cline words it (responses.ts toolError, UseMcpToolHandler, executeCommandTool).
FAILED = re.compile(
    r"\s*(?:The tool execution failed|Error executing|Error:\n"
    r"|Command executed(?: \(terminated after \d+s\))? with exit code [1-9])"
)
BLOCKS = ("text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking")
# ui_messages.json: the say/ask kinds that are a call of a tool (ExtensionMessage.ts), by the API tool name.
EDITS = ("replace_in_file", "write_to_file", "apply_diff", "insert_content", "search_and_replace")  # Roo's too
UI_TOOLS: dict[Any, tuple[str, ...]] = {
    "readFile": ("read_file",),
    "listFilesTopLevel": ("list_files",),
    "listFilesRecursive": ("list_files",),
    "listCodeDefinitionNames": ("list_code_definition_names",),
    "searchFiles": ("search_files",),
    "editedExistingFile": EDITS,
    "newFileCreated": ("write_to_file",),
    "fileDeleted": ("delete_file",),
    "webFetch": ("web_fetch",),
    "webSearch": ("web_search",),
    "summarizeTask": ("summarize_task",),
    "useSkill": ("use_skill",),
    "appliedDiff": EDITS,
    "codebaseSearch": ("codebase_search",),
}
UI_ASKED = {
    "followup": ("ask_followup_question", "question"),
    "plan_mode_respond": ("plan_mode_respond", "response"),
    "act_mode_respond": ("act_mode_respond", "response"),
}
UI_CALLS = {
    "command": "execute_command",
    "use_mcp_server": "use_mcp_tool",
    "browser_action_launch": "browser_action",
    "browser_action": "browser_action",
    "load_mcp_documentation": "load_mcp_documentation",
    "new_task": "new_task",
    "condense": "condense",
    "summarize_task": "summarize_task",
    "report_bug": "report_bug",
}
UI_IN_REQUEST = ("command_output", "mcp_server_response", "browser_action_result")  # sent again in the next request


class _Open:
    """The calls of the last response not yet answered. A result names its tool and echoes its main argument:
    it answers the open call of that tool whose arguments hold the echo, else the only open call of that tool
    (the UI shows paths shortened, ``.`` as the folder's name), else none."""

    def __init__(self) -> None:
        self.calls: list[tuple[ToolCall, tuple[str, ...], str]] = []  # (call, names it may be, arguments as text)

    def add(self, call: ToolCall, names: tuple[str, ...] = ()) -> None:
        self.calls.append((call, names or (str(call.name),), _norm(_flat(call.arguments))))

    def clear(self) -> None:
        self.calls.clear()

    def drop(self, call_id: Any) -> None:
        self.calls = [c for c in self.calls if c[0].id != call_id]

    def answer(self, name: str, arg: str | None) -> str | None:
        mine = [c for c in self.calls if name in c[1]]
        want = _norm(arg) if arg and arg != "undefined" else None
        found = next(
            (c for c in mine if want is None or want in c[2] or _under(want, c[2])), mine[0] if len(mine) == 1 else None
        )
        if found is None:
            return None
        self.calls.remove(found)
        found[0].name = name  # an edit the UI shows as "editedExistingFile" is named by its result
        return found[0].id


def read(path: str, log: Log) -> list[Conversation]:
    p = Path(path)
    if p.name == UI_FILE:
        return _read_ui(p, log)
    doc = log.json_list(p.read_bytes(), "a list of messages (api_conversation_history.json holds one)")
    if not doc:
        return []
    folder = p.parent
    turns: list[Turn] = []
    calls = _Open()
    at_index: dict[int, int] = {}  # history index -> index of its turn (assistant messages)
    for i, where, m in log.objects(doc, log.name, "message"):
        with log.guard(where, m):
            if m.get("role") == "assistant":
                at_index[i] = len(turns)
            turns.extend(_api_turns(m, i, log, calls))
    ui = _side(folder / UI_FILE, log)
    events = _usage_and_events(ui, turns, at_index, log)
    meta = _side(folder / META_FILE, log)
    _side(folder / CONTEXT_FILE, log)
    created = next((u.get("ts") for u in ui if isinstance(u, dict)), None) or _task_time(folder.name)
    return [
        Conversation(
            folder.name, turns, model=_model(doc, ui, meta), created=created, provider=_provider(doc, ui), events=events
        )
    ]


def _api_turns(m: dict[str, Any], i: int, log: Log, calls: _Open) -> list[Turn]:
    role, content, at = m.get("role"), m.get("content"), m.get("ts")
    blocks = (
        content
        if isinstance(content, list)
        else [{"type": "text", "text": content}]
        if isinstance(content, str)
        else []
    )
    for b in blocks:
        kind = b.get("type") if isinstance(b, dict) else None
        if kind not in BLOCKS:
            log.ignore(f"{str(kind)[:40]} block")
    texts = [
        t for b in blocks if isinstance(b, dict) and b.get("type") == "text" and isinstance(t := b.get("text"), str)
    ]
    text = "\n\n".join(texts)  # as Cline joins the blocks of a request (formatContentBlockToMarkdown)
    if role == "assistant":
        turn = Turn("assistant", text, at=at, id=m.get("id") or str(i))
        turn.calls = [
            ToolCall(b.get("name"), b.get("input"), b.get("id"))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        turn.calls += [
            ToolCall(name, dict(XML_PARAM.findall(body)), f"xml-{i}-{k}")
            for k, (name, body) in enumerate(XML_CALL.findall(text))
        ]
        calls.clear()  # one response at a time: a result answers a call of the response just before it
        for c in turn.calls:
            calls.add(c)
        metrics = mapping(m.get("metrics"))
        tokens = metrics.get("tokens") if isinstance(metrics.get("tokens"), dict) else None
        if tokens is not None:
            prompt, cached = tokens.get("prompt"), tokens.get("cached")
            turn.usage.append(
                Usage(
                    prompt_tokens=prompt,
                    output_tokens=tokens.get("completion"),
                    cache_read_input_tokens=cached,
                    model=mapping(m.get("modelInfo")).get("modelId"),
                )
            )
        return [turn]
    out = []
    for k, b in enumerate(b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"):
        use_id = b.get("tool_use_id")
        calls.drop(use_id)
        result = text_of(b.get("content"))  # Roo Code puts the person's reply to a tool here, in <user_message>
        said = [(tag, body.strip()) for tag, body in PERSON.findall(result)]
        out.append(
            Turn(
                "tool",
                PERSON.sub("", result).strip() if said else result,
                answers=use_id,
                is_error=bool(b.get("is_error")) or bool(FAILED.match(result)) or None,
                at=at,
                id=f"{i}:r{k}",
            )
        )
        out += [Turn("user", body, at=at, id=f"{i}:r{k}:{tag}", origin="person") for tag, body in said if body]
    return out + _user_parts(text, calls, at, f"{i}")


def _user_parts(text: str, calls: _Open, at: Any, nid: str, person: bool = True) -> list[Turn]:
    """A user message's text cut where Cline's own parts open: tool results (linked by the name and argument
    they echo), notices and environment details (the harness's), and the person's tagged words."""
    out: list[Turn] = []
    marks = list(MARKER.finditer(text))
    cuts = [0] + [mk.start() for mk in marks] + [len(text)]
    for k, (start, end) in enumerate(zip(cuts, cuts[1:])):
        part = text[start:end].strip("\n")
        if not part.strip():
            continue
        mk = marks[k - 1] if k else None
        said = [(tag, body.strip()) for tag, body in PERSON.findall(part)]
        rest = PERSON.sub("", part).strip() if said else part
        where = f"{nid}:{k}"
        if mk is not None and mk.group("tool"):
            header = mk.group(0).strip("\n")
            cid = calls.answer(mk.group("tool"), mk.group("arg"))
            body = rest[len(header) :] if rest.startswith(header) else rest
            out.append(Turn("tool", rest, answers=cid or header, is_error=bool(FAILED.match(body)), at=at, id=where))
        words = (
            [Turn("user", body, at=at, id=f"{where}:{tag}", origin="person") for tag, body in said if body]
            if person
            else []
        )
        if rest and not (mk is not None and mk.group("tool")):
            # a notice, or what Cline wrapped around the person's words; before any marker the classifier decides,
            # unless the person's words come from elsewhere (the UI's records). A notice comes before the words
            # it introduces ("[TASK RESUMPTION] … <user_message>"); the task before the files its mentions added.
            harness = mk is not None or bool(said) or not person
            notice = Turn("user", rest, at=at, id=where, origin="harness" if harness else None)
            words = [notice, *words] if mk is not None else [*words, notice]
        out += words
    return out


def _read_ui(path: Path, log: Log) -> list[Conversation]:
    """A task known only by its ui_messages.json."""
    ui = log.json_list(path.read_bytes(), "a list of Cline UI messages (ui_messages.json holds one)")
    if not ui:
        return []
    log.rows += len(ui) - 1
    turns: list[Turn] = []
    calls = _Open()
    usage: list[Usage] = []
    events: list[Event] = []
    asked = False  # a request was sent: a "text" is the model's from now on
    for i, where, m in log.objects(ui, log.name, "UI message"):
        with log.guard(where, m):
            kind = m.get("say") if m.get("type") == "say" else m.get("ask")
            text, at = given if isinstance(given := m.get("text"), str) else "", m.get("ts")
            if m.get("type") == "say" and (kind == "user_feedback" or kind in ("task", "text") and not asked):
                turns.append(Turn("user", text, at=at, id=str(i), origin="person"))
            elif kind == "api_req_started":
                asked = True
                info = _loads(text)
                info = info if isinstance(info, dict) else {}
                usage += _request_usage(info, m)
                turns += _user_parts(str(info.get("request") or ""), calls, at, str(i), person=False)
                calls.clear()  # a call the request did not answer never will be (taskResumption says so)
            elif kind in ("text", "completion_result") and m.get("type") == "say":
                if not text.strip():
                    log.skip(f"{UI_FILE} {kind} (empty: streaming placeholder)")
                    continue
                turn = _reply(turns, at, i, usage, text)
                if kind == "completion_result":
                    _call(turn, calls, ToolCall("attempt_completion", {"result": text}, f"ui-{i}"))
            elif kind in UI_ASKED and m.get("type") == "ask":
                name, field = UI_ASKED[kind]
                info = _loads(text)
                said = given if isinstance(info, dict) and isinstance(given := info.get(field), str) else text
                turn = _reply(turns, at, i, usage, said)
                _call(turn, calls, ToolCall(name, info if isinstance(info, dict) else text, f"ui-{i}"))
            elif kind == "tool":
                info = _loads(text)
                tool = info.get("tool") if isinstance(info, dict) else None
                names = UI_TOOLS.get(tool) or (_snake(str(tool)),)  # Roo's switchMode is the tool switch_mode
                _call(_reply(turns, at, i, usage), calls, ToolCall(names[0], info, f"ui-{i}"), names)
            elif kind in UI_CALLS:
                info = _loads(text)
                name = (
                    info["type"]
                    if kind == "use_mcp_server"
                    and isinstance(info, dict)
                    and info.get("type") in ("use_mcp_tool", "access_mcp_resource")
                    else UI_CALLS[kind]
                )
                _call(_reply(turns, at, i, usage), calls, ToolCall(name, info or text, f"ui-{i}"))
            elif kind in ("condense", "compaction") and m.get("type") == "say":
                events.append(_compaction(text, len(turns)))
            else:
                log.skip(f"{UI_FILE} {kind}" + (" (its text is in the next request)" if kind in UI_IN_REQUEST else ""))
    if usage:
        log.notes.append(f"{len(usage)} requests' tokens have no reply after them to go on (not kept)")
    model = next(
        (
            mapping(m.get("modelInfo")).get("modelId")
            for m in ui
            if isinstance(m, dict) and mapping(m.get("modelInfo")).get("modelId")
        ),
        None,
    )
    created = next((m.get("ts") for m in ui if isinstance(m, dict)), None)
    return [
        Conversation(path.parent.name, turns, model=model, created=created, provider=_provider([], ui), events=events)
    ]


def _reply(turns: list[Turn], at: Any, i: int, usage: list[Usage], text: str | None = None) -> Turn:
    """The model's turn a UI record belongs to: a new one for a text, else the current one (a tool ask
    follows the text of the same response). The tokens of the requests since the last reply go on a new one."""
    if text is None and turns and turns[-1].role == "assistant":
        return turns[-1]
    turn = Turn("assistant", text or "", at=at, id=f"{i}:reply")
    turn.usage, usage[:] = list(usage), []
    turns.append(turn)
    return turn


def _call(turn: Turn, calls: _Open, call: ToolCall, names: tuple[str, ...] = ()) -> None:
    turn.calls.append(call)
    calls.add(call, names)


def _request_usage(info: dict[str, Any], m: dict[str, Any]) -> list[Usage]:
    if not any(info.get(k) for k in ("tokensIn", "tokensOut", "cacheReads", "cacheWrites")):
        return []
    return [
        Usage(
            input_tokens=info.get("tokensIn"),
            output_tokens=info.get("tokensOut"),
            cache_creation_input_tokens=info.get("cacheWrites"),
            cache_read_input_tokens=info.get("cacheReads"),
            model=mapping(m.get("modelInfo")).get("modelId"),
        )
    ]


def _split_of(usage: list[Usage], ui: Usage) -> bool:
    """Whether the UI's counts of a request are the history's ``metrics`` of its reply, with the cache writes
    told apart from the reads (``cached`` = writes + reads)."""
    if len(usage) != 1 or not _n(ui.cache_creation_input_tokens):
        return False
    one = usage[0]
    cached = _n(ui.cache_creation_input_tokens) + _n(ui.cache_read_input_tokens)
    return (_n(one.prompt_tokens), _n(one.output_tokens), _n(one.cache_read_input_tokens)) == (
        _n(ui.input_tokens),
        _n(ui.output_tokens),
        cached,
    )


def _n(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _side(path: Path, log: Log) -> Any:
    """A side file of the task, read with its history and named in the run's note."""
    doc = _json(path)
    if doc is None:
        return [] if path.name == UI_FILE else None
    log.notes.append(f"read with it: {path.name}" + (f" ({len(doc)} records)" if isinstance(doc, list) else ""))
    if isinstance(doc, list):
        log.rows += len(doc)
    return doc if isinstance(doc, list) or path.name != UI_FILE else []


def _usage_and_events(ui: list[Any], turns: list[Turn], at_index: dict[int, int], log: Log) -> list[Event]:
    """Each API request's tokens onto the reply it produced (by ``conversationHistoryIndex``: a request said
    at index k is answered by history message k + 2; else in order), when the history has no ``metrics``;
    compactions. The other UI records repeat the history and are counted as skipped."""
    replies = [t for t in turns if t.role == "assistant"]
    need = not any(t.usage for t in replies)
    used, events, in_order = 0, [], []
    for u in (u for u in ui if isinstance(u, dict)):
        say = u.get("say") or u.get("ask")
        if say == "api_req_started":
            info = _loads(u.get("text"))
            got = _request_usage(info, u) if isinstance(info, dict) else []
            k = u.get("conversationHistoryIndex")
            target = at_index.get(k + 2) if isinstance(k, int) and not isinstance(k, bool) else None
            if not need:
                # the history's ``metrics.tokens.cached`` is the cache writes and reads together (Cline 3.x of
                # 2026): the UI's record of the same request splits them
                if target is not None and got and _split_of(turns[target].usage, got[0]):
                    turns[target].usage = got
                    used += 1
                continue
            if target is not None:
                turns[target].usage += got
                used += bool(got)
            else:
                in_order += got
        elif say in ("condense", "compaction"):
            events.append(_compaction(u.get("text"), _turn_at(turns, u.get("ts"))))
            used += 1
    placed = 0
    for reply, one in zip((r for r in replies if not r.usage), in_order):
        reply.usage.append(one)
        placed += 1
    log.skip(f"{UI_FILE} api_req_started whose reply is not in the history (tokens not kept)", len(in_order) - placed)
    used += len(in_order)
    log.skip(f"{UI_FILE} records (the UI's copy of the history)", len([u for u in ui if isinstance(u, dict)]) - used)
    log.skip(f"{UI_FILE} records (-> message_usage, events)", used - (len(in_order) - placed))
    return events


def _compaction(text: Any, before: int | None) -> Event:
    info = _loads(text)
    info = info if isinstance(info, dict) else {"summary": text}
    return Event(
        "compaction",
        before,
        trigger=info.get("mode"),
        pre_tokens=info.get("tokensBefore"),
        post_tokens=info.get("tokensAfter"),
        detail=info,
    )


def _turn_at(turns: list[Turn], ts: Any) -> int | None:
    """Index of the first message at or after ``ts`` (ms), when the history has times."""
    when = values.epoch(ts)
    if when is None:
        return None
    return next((i for i, t in enumerate(turns) if (values.epoch(t.at) or 0) >= when), None)


def _model(doc: list[Any], ui: list[Any], meta: Any) -> str | None:
    for m in doc + ui:
        if isinstance(m, dict) and mapping(m.get("modelInfo")).get("modelId"):
            model: str | None = m["modelInfo"]["modelId"]
            return model
    usage = meta.get("model_usage") if isinstance(meta, dict) else None
    if isinstance(usage, list):
        return next((u.get("model_id") for u in usage if isinstance(u, dict) and u.get("model_id")), None)
    return None


def _provider(doc: list[Any], ui: list[Any]) -> str | None:
    return next(
        (
            m["modelInfo"].get("providerId")
            for m in doc + ui
            if isinstance(m, dict) and isinstance(m.get("modelInfo"), dict) and m["modelInfo"].get("providerId")
        ),
        None,
    )


def _task_time(name: str) -> int | None:
    """Task folders are named by their creation time in milliseconds."""
    return int(name) if name.isascii() and name.isdigit() else None


def _json(path: Path) -> Any:
    try:
        return values.loads(read_side(path))
    except (OSError, ValueError):
        return None


def _loads(v: Any) -> Any:
    if not isinstance(v, str):
        return None
    try:
        return values.loads(v)
    except ValueError:
        return None


def _norm(s: str) -> str:
    return s.replace("\\\\", "/").replace("\\", "/").strip()


def _under(echoed: str, arguments: str) -> bool:
    """Whether a result echoes an argument's path in full: Cline's result names the absolute path
    (``[replace_in_file for 'c:\\Users\\…\\src\\server.rs']``) of an edit its UI record names relative to
    the workspace (``src/server.rs``)."""
    return any(echoed.endswith("/" + v) for v in arguments.split("\n") if len(v) > 2 and "/" in v)


def _flat(v: Any) -> str:
    """Arguments as text for the echo match (every value, joined)."""
    if isinstance(v, dict):
        return "\n".join(_flat(x) for x in v.values())
    if isinstance(v, list):
        return "\n".join(_flat(x) for x in v)
    return "" if v is None else str(v)


def _snake(name: str) -> str:
    """A UI tool name (``switchMode``) as the API names the tool (``switch_mode``)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _sniff(probe: Probe) -> bool:
    if probe.head.lstrip()[:1] != b"[":
        return False
    if probe.path.name == API_FILE:
        return True
    # ui_messages.json alone is a task; beside its history it is the history's side file, read with it
    return (
        probe.path.name == UI_FILE
        and not (probe.path.parent / API_FILE).exists()
        and b'"ts"' in probe.head
        and (b'"say"' in probe.head or b'"ask"' in probe.head)
    )


FORMAT = Format(
    "cline",
    "Cline / Roo Code tasks, tasks/<id>/api_conversation_history.json (+ ui_messages.json "
    "beside it), or ui_messages.json alone",
    _sniff,
    read=read,
    suffixes=(),
    names=(API_FILE, UI_FILE),
    claims=(API_FILE, "*/saoudrizwan.claude-dev/tasks/*.json", "*/rooveterinaryinc.roo-cline/tasks/*.json"),
    sides=(
        Side(UI_FILE, API_FILE, "the UI's copy of the task: tokens, compaction markers and times"),
        Side(META_FILE, API_FILE, "the files in context and the model"),
        Side(CONTEXT_FILE, API_FILE, "the edits Cline made to the context"),
    ),
)
