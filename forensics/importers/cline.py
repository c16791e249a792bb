"""Cline and Roo Code task folders: ``…/globalStorage/saoudrizwan.claude-dev/tasks/<task id>/`` (Roo Code:
``rooveterinaryinc.roo-cline``), one conversation per task, read from ``api_conversation_history.json``.

That file is the task's API history: Anthropic-style messages (``role``, ``content`` as text or blocks),
newer versions adding ``ts``, ``modelInfo`` and ``metrics`` (tokens of the response). With native tool
calling, ``tool_use`` blocks are the calls and ``tool_result`` blocks their results. The classic protocol
writes the calls as XML in the assistant's text (``<read_file><path>a.py</path></read_file>``) and each
result as a user message opening with ``[read_file for 'a.py'] Result:``: both are read, the XML as a
call and such a message as the tool message answering it. ``ui_messages.json`` beside it (the UI's copy
of the task) gives each API request's tokens (``say: api_req_started``) when the history has no
``metrics``, compaction markers, and the task's times; its other records are skipped and counted.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from forensics.importers import values
from forensics.importers.model import Conversation, Event, Log, ToolCall, Turn, Usage, mapping, text_of
from forensics.importers.registry import Format, Probe, Side

API_FILE, UI_FILE, META_FILE = "api_conversation_history.json", "ui_messages.json", "task_metadata.json"
XML_TOOLS = ("execute_command", "read_file", "write_to_file", "replace_in_file", "apply_diff", "insert_content",
             "search_and_replace", "search_files", "list_files", "list_code_definition_names", "codebase_search",
             "browser_action", "use_mcp_tool", "access_mcp_resource", "ask_followup_question", "attempt_completion",
             "plan_mode_respond", "new_task", "switch_mode", "update_todo_list", "fetch_instructions",
             "load_mcp_documentation", "web_fetch", "condense", "summarize_task", "new_rule", "report_bug")
XML_CALL = re.compile(r"<(" + "|".join(XML_TOOLS) + r")>(.*?)</\1>", re.DOTALL)
XML_PARAM = re.compile(r"<([a-z_]+)>\n?(.*?)\n?</\1>", re.DOTALL)
RESULT = re.compile(r"\[(" + "|".join(XML_TOOLS) + r")(?: for '([^\n]*?)'| for [^\]]*)?\] Result:")
BLOCKS = ("text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking")
FAILED = re.compile(r"\s*(?:\[ERROR\]|The tool execution failed|Error executing|Command failed|<error>)")


def read(path: str, log: Log) -> list[Conversation]:
    doc = log.json_list(Path(path).read_bytes(), "a list of messages (api_conversation_history.json holds one)")
    if not doc:
        return []
    folder = Path(path).parent
    turns: list[Turn] = []
    for i, where, m in log.objects(doc, log.name, "message"):
        with log.guard(where, m):
            turns.extend(_turns(m, i, log))
    ui = _ui_messages(folder, log)
    events = _usage_and_events(ui, turns, log)
    meta = _json(folder / META_FILE)
    model = _model(doc, meta)
    created = next((u.get("ts") for u in ui if isinstance(u, dict)), None) or _task_time(folder.name)
    return [Conversation(folder.name, turns, model=model, created=created,
                         provider=next((m["modelInfo"].get("providerId") for m in doc if isinstance(m, dict)
                                        and isinstance(m.get("modelInfo"), dict)), None), events=events)]


def _turns(m: dict, i: int, log: Log) -> list[Turn]:
    role, content, at = m.get("role"), m.get("content"), m.get("ts")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}] if isinstance(content, str) else []
    for b in blocks:
        kind = b.get("type") if isinstance(b, dict) else None
        if kind not in BLOCKS:
            log.ignore(f"{str(kind)[:40]} block")
    texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    if role == "assistant":
        calls = [ToolCall(b.get("name"), b.get("input"), b.get("id")) for b in blocks
                 if isinstance(b, dict) and b.get("type") == "tool_use"]
        text = "\n".join(texts)
        calls += [ToolCall(name, {k: v for k, v in XML_PARAM.findall(body)}, f"xml-{i}-{k}")
                  for k, (name, body) in enumerate(XML_CALL.findall(text))]
        turn = Turn("assistant", text, calls=calls, at=at, id=m.get("id") or str(i))
        metrics = m.get("metrics") if isinstance(m.get("metrics"), dict) else {}
        tokens = metrics.get("tokens") if isinstance(metrics.get("tokens"), dict) else None
        if tokens is not None:
            prompt, cached = tokens.get("prompt"), tokens.get("cached")
            turn.usage.append(Usage(
                prompt_tokens=prompt,
                output_tokens=tokens.get("completion"), cache_read_input_tokens=cached,
                model=mapping(m.get("modelInfo")).get("modelId") if isinstance(m.get("modelInfo"), dict) else None))
        return [turn]
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:  # native tool calling: one tool message per result
        rest = "\n".join(texts)
        out = [Turn("tool", text_of(b.get("content")), answers=b.get("tool_use_id"),
                    is_error=bool(b.get("is_error")) or None, at=at, id=f"{i}:{k}") for k, b in enumerate(results)]
        out[-1].text = "\n".join(filter(None, [out[-1].text, rest]))
        return out
    text = "\n".join(texts)
    if named := RESULT.match(text):  # the classic protocol's result of an XML call: its tool and (often) its path
        return [Turn("tool", text, is_error=bool(FAILED.match(RESULT.sub("", text, 1))), at=at, id=str(i),
                     tool=named.group(1), about=named.group(2) if named.group(2) != "undefined" else None)]
    return [Turn(role if isinstance(role, str) else "?", text, at=at, id=str(i))]


def _ui_messages(folder: Path, log: Log) -> list:
    ui = _json(folder / UI_FILE)
    ui = ui if isinstance(ui, list) else []
    log.rows += len(ui)
    return ui


def _usage_and_events(ui: list, turns: list[Turn], log: Log) -> list[Event]:
    """Per API request tokens, in order onto the assistant messages that lack ``metrics``; compactions."""
    replies = [t for t in turns if t.role == "assistant"]
    need = not any(t.usage for t in replies)
    requests = []
    events: list[Event] = []
    for u in ui:
        say = u.get("say") if isinstance(u, dict) else None
        if say == "api_req_started":
            info = _loads(u.get("text"))
            if isinstance(info, dict) and not info.get("cancelReason") and not info.get("streamingFailedMessage"):
                requests.append(info)
        elif say in ("condense", "compaction") or (isinstance(u, dict) and u.get("ask") == "condense"):
            info = _loads(u.get("text"))
            info = info if isinstance(info, dict) else {"summary": u.get("text")}
            events.append(Event("compaction", _turn_at(turns, u.get("ts")), trigger=info.get("mode"),
                                pre_tokens=info.get("tokensBefore"), post_tokens=info.get("tokensAfter"), detail=info))
    if need:
        for reply, info in zip(replies, requests):
            cache_reads = info.get("cacheReads")
            reply.usage.append(Usage(input_tokens=info.get("tokensIn"), output_tokens=info.get("tokensOut"),
                                     cache_creation_input_tokens=info.get("cacheWrites"),
                                     cache_read_input_tokens=cache_reads))
    used = len(events) + (min(len(replies), len(requests)) if need else 0)
    log.skip(f"{UI_FILE} records (the UI's copy of the task)", len(ui) - used)
    log.skip(f"{UI_FILE} records (-> message_usage, events)", used)
    return events


def _turn_at(turns: list[Turn], ts: Any) -> int | None:
    """Index of the first message at or after ``ts`` (ms), when the history has times."""
    when = values.epoch(ts)
    if when is None:
        return None
    return next((i for i, t in enumerate(turns) if (values.epoch(t.at) or 0) >= when), None)


def _model(doc: list, meta: Any) -> str | None:
    for m in doc:
        if isinstance(m, dict) and isinstance(m.get("modelInfo"), dict) and m["modelInfo"].get("modelId"):
            return m["modelInfo"]["modelId"]
    usage = meta.get("model_usage") if isinstance(meta, dict) else None
    if isinstance(usage, list):
        return next((u.get("model_id") for u in usage if isinstance(u, dict) and u.get("model_id")), None)
    return None


def _task_time(name: str) -> int | None:
    """Task folders are named by their creation time in milliseconds."""
    return int(name) if name.isdigit() else None


def _json(path: Path) -> Any:
    try:
        return values.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _loads(v: Any) -> Any:
    if not isinstance(v, str):
        return None
    try:
        return values.loads(v)
    except ValueError:
        return None


def _sniff(probe: Probe) -> bool:
    return probe.path.name == API_FILE and probe.head.lstrip()[:1] == b"["


FORMAT = Format("cline", "Cline / Roo Code task folders, tasks/<id>/api_conversation_history.json (+ ui_messages.json)",
                _sniff, read=read, suffixes=(), names=(API_FILE,),
                claims=(API_FILE, "*/saoudrizwan.claude-dev/tasks/*.json", "*/rooveterinaryinc.roo-cline/tasks/*.json"),
                sides=(Side(UI_FILE, API_FILE, "the UI's copy of the task: tokens, compaction markers and times"),
                       Side(META_FILE, API_FILE, "the files in context and the model"),
                       Side("context_history.json", API_FILE, "the edits Cline made to the context", read=False)))
