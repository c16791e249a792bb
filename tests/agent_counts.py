"""Figures counted straight from the agent-log fixtures, without the importer: conversations, user messages
on the main path, tool calls, and tool calls that have a result. Each counter reads its format's files with
json/sqlite3/zipfile and applies the format's rules as its documentation states them, so a test comparing
them with the warehouse checks the importer against the format, not against itself."""
from __future__ import annotations

import json
import re
import sqlite3
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple


class Figures(NamedTuple):
    conversations: int
    users: int  # user messages on the main path
    calls: int
    linked: int  # calls answered by a result


def _lines(path: Path) -> Iterator[dict]:
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def _add(*fs: Figures) -> Figures:
    return Figures(*(sum(x) for x in zip(*fs)))


def codex(root: Path) -> Figures:
    injected = ("<environment_context>", "<user_instructions>")
    out = []
    for f in sorted(root.rglob("rollout-*")):
        if f.suffix == ".json":
            doc = json.loads(f.read_text())
            items = doc["items"]
            events: list[dict] = []
        else:
            recs = list(_lines(f))
            items = [r["payload"] if "payload" in r else r for r in recs
                     if r.get("type") == "response_item" or (r.get("type") in ("message", "function_call",
                                                                                "function_call_output", "reasoning"))]
            events = [r["payload"] for r in recs if r.get("type") == "event_msg"]
        users = [i for i in items if i.get("type") == "message" and i.get("role") == "user"
                 and not i["content"][0]["text"].startswith(injected)]
        rolled = sum(e.get("num_turns", 0) for e in events if e.get("type") == "thread_rolled_back")
        calls = [i for i in items if i.get("type") in ("function_call", "custom_tool_call", "local_shell_call",
                                                       "web_search_call")]
        outputs = {i["call_id"] for i in items if i.get("type") in ("function_call_output", "custom_tool_call_output")}
        out.append(Figures(1, len(users) - rolled, len(calls), sum(c.get("call_id") in outputs for c in calls)))
    return _add(*out)


def gemini(root: Path) -> Figures:
    out = []
    for f in sorted(root.rglob("*.json*")):
        if f.suffix == ".json":
            msgs = {m["id"]: m for m in json.loads(f.read_text())["messages"]}
            gone: set[str] = set()
        else:
            msgs, gone = {}, set()
            for r in _lines(f):
                if "$rewindTo" in r:
                    ids = list(msgs)
                    gone |= set(ids[ids.index(r["$rewindTo"]):])
                elif "id" in r:
                    msgs[r["id"]] = r
        calls = [c for m in msgs.values() for c in m.get("toolCalls") or []]
        users = [m for i, m in msgs.items() if m["type"] == "user" and i not in gone]
        out.append(Figures(1, len(users), len(calls),
                           sum(c.get("result") is not None or c.get("resultDisplay") is not None for c in calls)))
    return _add(*out)


def aider(root: Path) -> Figures:
    """aider/utils.py split_chat_history_markdown: ``#### `` lines are the user's, ``> `` lines aider's output."""
    text = (root / ".aider.chat.history.md").read_text()
    groups: list[tuple[str, list[str]]] = []
    for line in text.split("# aider chat started at ", 1)[1].splitlines():
        kind = "user" if line.startswith("#### ") else "tool" if line.startswith("> ") else "other"
        if groups and groups[-1][0] == kind:
            groups[-1][1].append(line)
        else:
            groups.append((kind, [line]))
    calls = linked = 0
    for (kind, lines), nxt in zip(groups, groups[1:] + [("", [])]):
        edits = sum(ln.startswith("<<<<<<< SEARCH") or ln == "```diff" for ln in lines) if kind == "other" else 0
        calls += edits
        linked += edits if nxt[0] == "tool" else 0
    return Figures(text.count("# aider chat started at "), sum(k == "user" for k, _ in groups), calls, linked)


def openhands(root: Path) -> Figures:
    skipped = {"change_agent_state", "null", "recall", "condensation", "condensation_request", "message", "system"}
    convs: list[list[dict]] = [json.loads(f.read_text()) for f in root.glob("*.json")]
    instructions = 0
    for rec in _lines(root / "eval" / "output.jsonl"):
        if isinstance(rec.get("history"), list):
            convs.append([e for pair in rec["history"] for e in (pair if isinstance(pair, list) else [pair])])
    out = []
    for events in convs:
        if any("kind" in e for e in events):  # the agent SDK's events (V1)
            calls = {e["tool_call_id"] for e in events if e["kind"] == "ActionEvent"}
            answered = {e["tool_call_id"] for e in events if e["kind"] == "ObservationEvent"}
            users = sum(e["kind"] == "MessageEvent" and e["source"] == "user" for e in events)
            out.append(Figures(1, users, len(calls), len(calls & answered)))
            continue
        users = sum(e.get("action") == "message" and e.get("source") == "user" for e in events)
        instructions += users == 0
        calls = [e for e in events if "action" in e and e.get("source") == "agent" and e["action"] not in skipped]
        ids = {(e.get("tool_call_metadata") or {}).get("tool_call_id") or f"event-{e.get('id')}" for e in calls}
        answered = {(e.get("tool_call_metadata") or {}).get("tool_call_id") or f"event-{e.get('cause')}"
                    for e in events if "observation" in e and e["observation"] not in ("null", "agent_state_changed")}
        out.append(Figures(1, users, len(calls), len(ids & answered)))
    total = _add(*out)
    return total._replace(users=total.users + instructions)


def swe_agent(root: Path) -> Figures:
    out = []
    for f in sorted(root.rglob("*.traj")):
        doc = json.loads(f.read_text())
        runs = [doc] + [a for k, a in enumerate(doc.get("attempts") or []) if k != doc["info"].get("best_attempt_idx")]
        calls = sum(h["role"] == "assistant" and bool(h.get("action")) for r in runs for h in r["history"])
        users = sum(h["role"] == "user" and not h.get("is_demo") and h.get("message_type") != "observation"
                    for h in doc["history"]) or 1  # the instance is the one user message (typed "observation")
        out.append(Figures(1, users, calls, calls))  # every step's action has its observation
    return _add(*out)


def mini_swe_agent(root: Path) -> Figures:
    out = []
    for f in sorted(root.rglob("*.traj.json")):
        msgs = json.loads(f.read_text())["messages"]
        calls = [m for m in msgs if m["role"] == "assistant" and ("tool_calls" in m or "```bash" in m["content"])]
        out.append(Figures(1, 1, len(calls), len(calls)))  # one task message; each action's output follows it
    return _add(*out)


def tau_bench(root: Path) -> Figures:
    """tau-bench: a list of runs, messages under traj; tau2-bench: runs under simulations, messages under messages
    (a tool message carries its call's id as id)."""
    convs = []
    for f in sorted(root.rglob("*.json")):
        doc = json.loads(f.read_text())
        convs += [r["traj"] for r in doc] if isinstance(doc, list) else [s["messages"] for s in doc["simulations"]]
    calls = [c for msgs in convs for m in msgs for c in m.get("tool_calls") or []]
    answered = {m.get("tool_call_id", m.get("id")) for msgs in convs for m in msgs if m["role"] == "tool"}
    return Figures(len(convs), sum(m["role"] == "user" for msgs in convs for m in msgs), len(calls),
                   sum(c["id"] in answered for c in calls))


def cline(root: Path) -> Figures:
    tools = re.compile(r"<(read_file|replace_in_file|write_to_file|attempt_completion|execute_command)>")
    out = []
    for f in sorted(root.rglob("api_conversation_history.json")):
        msgs = json.loads(f.read_text())
        blocks = [(m["role"], b) for m in msgs for b in m["content"]]
        uses = [b["id"] for r, b in blocks if b.get("type") == "tool_use"]
        results = {b["tool_use_id"] for r, b in blocks if b.get("type") == "tool_result"}
        xml = sum(len(tools.findall(b.get("text", ""))) for r, b in blocks if r == "assistant")
        xml_results = sum(b.get("text", "").endswith("] Result:") for r, b in blocks if r == "user")
        out.append(Figures(1, 1, len(uses) + xml, len(results & set(uses)) + xml_results))
    return _add(*out)


def chatgpt(root: Path) -> Figures:
    out = []
    for conv in json.loads((root / "export" / "conversations.json").read_text()):
        if not isinstance(conv.get("mapping"), dict):
            continue
        nodes, cur, users = conv["mapping"], conv["current_node"], 0
        while cur:
            m = nodes[cur]["message"]
            users += bool(m) and m["author"]["role"] == "user" and m["content"]["content_type"] == "text"
            cur = nodes[cur]["parent"]
        msgs = [n["message"] for n in nodes.values() if n["message"]]
        calls = [m for m in msgs if m["author"]["role"] == "assistant" and m.get("recipient") not in (None, "all")]
        results = sum(m["author"]["role"] == "tool" for m in msgs)
        out.append(Figures(1, users, len(calls), results))
    return _add(*out)


def claude_ai(root: Path) -> Figures:
    out = []
    for conv in json.loads((root / "export" / "conversations.json").read_text()):
        msgs = [m for m in conv["chat_messages"] if m["sender"] in ("human", "assistant")]
        if any("parent_message_uuid" in m for m in msgs):
            by_id, cur, main = {m["uuid"]: m for m in msgs}, max(msgs, key=lambda m: m["created_at"]), []
            while cur:
                main.append(cur)
                cur = by_id.get(cur["parent_message_uuid"])
        else:
            main = msgs
        blocks = [b for m in msgs for b in m.get("content") or []]
        uses = sum(b["type"] == "tool_use" for b in blocks)
        out.append(Figures(1, sum(m["sender"] == "human" for m in main), uses,
                           sum(b["type"] == "tool_result" for b in blocks)))
    return _add(*out)


def open_webui(root: Path) -> Figures:
    con = sqlite3.connect(next(root.rglob("webui.db")))
    out = []
    for (raw,) in con.execute("SELECT chat FROM chat"):
        try:
            chat = json.loads(raw)
        except json.JSONDecodeError:
            continue
        nodes = (chat.get("history") or {}).get("messages") or {m["id"]: m for m in chat["messages"]}
        cur = (chat.get("history") or {}).get("currentId") or chat["messages"][-1]["id"]
        users = 0
        while cur:
            users += nodes[cur]["role"] == "user"
            cur = nodes[cur].get("parentId") if "history" in chat else None
        users = users if "history" in chat else sum(m["role"] == "user" for m in chat["messages"])
        details = [d for m in nodes.values() for d in re.findall(r'<details type="tool_calls"[^>]*>', m["content"])]
        out.append(Figures(1, users, len(details), sum('done="true"' in d for d in details)))
    con.close()
    return _add(*out)


def inspect(root: Path) -> Figures:
    samples = []
    for f in sorted(root.rglob("*")):
        if f.suffix == ".eval":
            with zipfile.ZipFile(f) as z:
                for name in z.namelist():
                    if name.startswith("samples/"):
                        try:
                            samples.append(json.loads(z.read(name)))
                        except json.JSONDecodeError:
                            continue
        elif f.suffix == ".json":
            samples += json.loads(f.read_text())["samples"]
    msgs = [m for s in samples for m in s["messages"]]
    calls = [c for m in msgs for c in m.get("tool_calls") or []]
    answered = {m["tool_call_id"] for m in msgs if m["role"] == "tool"}
    return Figures(len(samples), sum(m["role"] == "user" for m in msgs), len(calls),
                   sum(c["id"] in answered for c in calls))


def otel(root: Path) -> Figures:
    """Distinct messages across a conversation's model spans (every call repeats the history)."""
    groups: dict[str, dict[str, set]] = {}

    def note(key: str, users: set, calls: set, answered: set) -> None:
        g = groups.setdefault(key, {"users": set(), "calls": set(), "answered": set()})
        g["users"] |= users
        g["calls"] |= calls
        g["answered"] |= answered

    doc = json.loads((root / "otlp" / "traces.json").read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    attrs = [{x["key"]: next(iter(x["value"].values())) for x in span["attributes"]} for span in spans]
    session = {s["traceId"]: a["gen_ai.conversation.id"] for s, a in zip(spans, attrs) if "gen_ai.conversation.id" in a}
    for span, a in zip(spans, attrs):
        msgs = json.loads(a.get("gen_ai.input.messages", "[]")) + json.loads(a.get("gen_ai.output.messages", "[]"))
        parts = [(m["role"], p) for m in msgs for p in m["parts"]]
        note(session.get(span["traceId"], span["traceId"]), {p["content"] for r, p in parts if r == "user"},
             {p["id"] for _, p in parts if p["type"] == "tool_call"},
             {p["id"] for _, p in parts if p["type"] == "tool_call_response"})
    text = (root / "sdk" / "spans.json").read_text()
    dec, i = json.JSONDecoder(), 0
    while i < len(text.rstrip()):
        span, i = dec.raw_decode(text, i)
        while i < len(text) and text[i].isspace():
            i += 1
        a = span["attributes"]
        users = {e["attributes"]["content"] for e in span.get("events", []) if e["name"] == "gen_ai.user.message"}
        users |= {v for k, v in a.items() if k.endswith(".content") and a.get(k.replace("content", "role")) == "user"}
        calls = {v for k, v in a.items() if re.fullmatch(r"gen_ai\.completion\.\d+\.tool_calls\.\d+\.id", k)}
        if users or calls:
            note(span["context"]["trace_id"], users, calls, set())
    for row in _lines(root / "phoenix" / "spans.jsonl"):
        msgs = (row.get("attributes.llm.input_messages") or []) + (row.get("attributes.llm.output_messages") or [])
        calls = {c["tool_call.id"] for m in msgs for c in m.get("message.tool_calls") or []}
        answered = {m["message.tool_call_id"] for m in msgs if "message.tool_call_id" in m}
        if msgs or row.get("attributes.tool_call.id"):
            note(row["attributes.session.id"], {m["message.content"] for m in msgs if m["message.role"] == "user"},
                 calls, answered | {row.get("attributes.tool_call.id")} - {None})
    return Figures(len(groups), sum(len(g["users"]) for g in groups.values()),
                   sum(len(g["calls"]) for g in groups.values()),
                   sum(len(g["calls"] & g["answered"]) for g in groups.values()))


def continue_dev(root: Path) -> Figures:
    out = []
    for f in sorted((root / "sessions").glob("*.json")):
        if f.name == "sessions.json":
            continue
        items = json.loads(f.read_text())["history"]
        msgs = [i["message"] for i in items]
        states = [s for i in items for s in i.get("toolCallStates") or [i.get("toolCallState")] if s]
        ids = {c["id"] for m in msgs for c in m.get("toolCalls") or []} | {s["toolCallId"] for s in states}
        answered = {m["toolCallId"] for m in msgs if m["role"] == "tool"} | {s["toolCallId"] for s in states
                                                                            if "output" in s}
        out.append(Figures(1, sum(m["role"] == "user" for m in msgs), len(ids), len(ids & answered)))
    return _add(*out)


def cursor(root: Path) -> Figures:
    out = []
    con = sqlite3.connect(root / "User" / "globalStorage" / "state.vscdb")
    kv = dict(con.execute("SELECT key, value FROM cursorDiskKV"))
    con.close()
    for key, raw in kv.items():
        if not key.startswith("composerData:"):
            continue
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError:
            continue
        cid = doc["composerId"]
        bubbles = doc.get("conversation") or [json.loads(kv[f"bubbleId:{cid}:{h['bubbleId']}"])
                                              for h in doc["fullConversationHeadersOnly"]]
        tools = [b["toolFormerData"] for b in bubbles if "toolFormerData" in b]
        out.append(Figures(1, sum(b["type"] == 1 for b in bubbles), len(tools),
                           sum("result" in t for t in tools)))
    con = sqlite3.connect(root / "User" / "workspaceStorage" / "a1b2c3" / "state.vscdb")
    (raw,) = con.execute("SELECT value FROM ItemTable WHERE key = 'workbench.panel.aichat.view.aichat.chatdata'").fetchone()
    con.close()
    for tab in json.loads(raw)["tabs"]:
        out.append(Figures(1, sum(b["type"] == "user" for b in tab["bubbles"]), 0, 0))
    return _add(*out)


COUNTERS: dict[str, tuple[str, Callable[[Path], Figures]]] = {
    "codex": ("codex", codex), "gemini": ("gemini-cli", gemini), "aider": ("aider", aider),
    "openhands": ("openhands", openhands), "swe_agent": ("swe-agent", swe_agent),
    "mini_swe_agent": ("mini-swe-agent", mini_swe_agent), "tau_bench": ("openai", tau_bench),
    "cline": ("cline", cline), "chatgpt": ("chatgpt", chatgpt), "claude_ai": ("claude-ai", claude_ai),
    "open_webui": ("open-webui", open_webui), "inspect": ("inspect", inspect), "otel": ("otel", otel),
    "continue": ("continue", continue_dev), "cursor": ("cursor", cursor),
}


# Real logs (../shared/data/agent-logs): five figures, the fifth the results that report a failure. Each
# counter reads the raw files with json/sqlite3 and applies the rules the tool's own source states.

class Real(NamedTuple):
    conversations: int
    person: int  # the person's messages on the main path
    calls: int
    linked: int  # calls answered by a result of that call
    errors: int  # answered calls whose result reports a failure


CLINE_TOOLS = ("execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
               "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource",
               "ask_followup_question", "attempt_completion", "plan_mode_respond", "new_task",
               "load_mcp_documentation", "web_fetch", "condense", "summarize_task", "new_rule", "report_bug")
# what the person typed, in the tags Cline's task loop scans for "user generated content" (task/index.ts)
CLINE_PERSON = re.compile(r"<(task|feedback|answer|user_message)>\n?(.*?)\n?</\1>", re.DOTALL)
# toolError, UseMcpToolHandler ("Error:\n" when isError, "Error executing MCP tool"), executeCommandTool
CLINE_FAILED = ("The tool execution failed", "Error executing", "Error:\n", "Command executed with exit code")
CLINE_HEADER = re.compile(r"(?:^|\n)\[([a-z_]+)(?: for '.*?'[^\n\]]*)?\] Result:", re.DOTALL)
# ExtensionMessage.ts: the UI's record of a call, and the API tool it stands for
CLINE_UI = {"readFile": {"read_file"}, "listFilesTopLevel": {"list_files"}, "listFilesRecursive": {"list_files"},
            "searchFiles": {"search_files"}, "listCodeDefinitionNames": {"list_code_definition_names"},
            "newFileCreated": {"write_to_file"}, "editedExistingFile": {"replace_in_file", "write_to_file"},
            "webFetch": {"web_fetch"}}
CLINE_UI_ASKS = {"command": "execute_command", "use_mcp_server": "use_mcp_tool", "followup": "ask_followup_question",
                 "plan_mode_respond": "plan_mode_respond", "load_mcp_documentation": "load_mcp_documentation",
                 "browser_action_launch": "browser_action"}


def _cline_results(text: str, open_calls: list[set[str]]) -> tuple[int, int]:
    """(linked, errors) of one request's text against the calls of the response before it."""
    linked = errors = 0
    heads = list(CLINE_HEADER.finditer(text))
    for k, h in enumerate(heads):
        body = text[h.end():heads[k + 1].start() if k + 1 < len(heads) else len(text)].lstrip()
        match = next((c for c in open_calls if h.group(1) in c), None)
        if match is not None:
            open_calls.remove(match)
            linked += 1
            errors += body.startswith(CLINE_FAILED)
    return linked, errors


def real_cline(root: Path) -> Real:
    out = []
    for f in sorted(root.rglob("api_conversation_history.json")):
        person = calls = linked = errors = 0
        last: list[set[str]] = []
        for m in json.loads(f.read_text(encoding="utf-8")):
            blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
            text = "\n\n".join(b["text"] for b in blocks if b["type"] == "text")
            if m["role"] == "assistant":
                last = [{name} for name in re.findall(r"<(" + "|".join(CLINE_TOOLS) + r")>", text)]
                calls += len(last)
                continue
            person += sum(bool(body.strip()) for _, body in CLINE_PERSON.findall(text))
            n, e = _cline_results(text, last)
            linked, errors, last = linked + n, errors + e, []
        out.append(Real(1, person, calls, linked, errors))
    for f in sorted(root.rglob("ui_messages.json")):
        if (f.parent / "api_conversation_history.json").exists():
            continue  # the history's side file
        person = calls = linked = errors = 0
        sent, response = False, []
        for m in json.loads(f.read_text(encoding="utf-8")):
            kind = m.get("say") or m.get("ask")
            if m["type"] == "say" and (kind == "user_feedback" or kind == "text" and not sent):
                person += 1
            elif kind == "api_req_started":
                sent = True
                n, e = _cline_results(json.loads(m["text"]).get("request", ""), response)
                linked, errors, response = linked + n, errors + e, []
            elif kind == "tool":
                response.append(CLINE_UI[json.loads(m["text"])["tool"]])
            elif kind == "completion_result" and m["type"] == "say":
                response.append({"attempt_completion"})
            elif kind in CLINE_UI_ASKS and (m["type"] == "ask" or kind not in ("followup", "plan_mode_respond")):
                response.append({CLINE_UI_ASKS[kind]})
            else:
                continue
            calls += kind not in ("user_feedback", "text", "api_req_started")
        out.append(Real(1, person, calls, linked, errors))
    return Real(*(sum(x) for x in zip(*out)))


def real_continue(root: Path) -> Real:
    """core/index.d.ts: Session.history of ChatHistoryItem; a call's result is a tool message or, before
    those, its ToolCallState's ``output``; a state ``errored`` or ``canceled`` is a failure."""
    out = []
    for f in sorted(root.rglob("*.json")):
        if f.name == "sessions.json":
            continue  # the index of the sessions, not a session
        items = json.loads(f.read_text(encoding="utf-8"))["history"]
        msgs = [i["message"] for i in items]
        states = {s["toolCallId"]: s for i in items for s in i.get("toolCallStates") or []}
        ids = {c["id"] for m in msgs for c in m.get("toolCalls") or []} | set(states)
        answered = {m["toolCallId"] for m in msgs if m["role"] == "tool"} | {
            k for k, s in states.items() if isinstance(s.get("output"), list)}
        failed = {k for k in ids & answered if states.get(k, {}).get("status") in ("errored", "canceled")}
        out.append(Real(1, sum(m["role"] == "user" for m in msgs), len(ids), len(ids & answered), len(failed)))
    return Real(*(sum(x) for x in zip(*out)))


def real_cursor(root: Path) -> Real:
    """Every chat key of every state.vscdb: composers (bubbles inline, in conversationMap or one per key),
    chat-panel tabs, composers inline in the workspace index; the workspace's prompts no conversation holds."""
    out = []
    for f in sorted(root.rglob("*.vscdb")):
        con = sqlite3.connect(f"file:{f}?mode=ro", uri=True)
        kv = dict(con.execute("SELECT key, value FROM cursorDiskKV")) if con.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'cursorDiskKV'").fetchone() else {}
        items = dict(con.execute("SELECT key, value FROM ItemTable WHERE key IN ('composer.composerData', "
                                 "'workbench.panel.aichat.view.aichat.chatdata', 'aiService.prompts')"))
        con.close()
        convs: dict[str, list[dict]] = {}
        for key, raw in kv.items():
            if key.startswith("composerData:"):
                doc = json.loads(raw)
                cid = key.split(":", 1)[1]
                inline = doc.get("conversationMap") or {}
                convs[cid] = doc.get("conversation") or [
                    json.loads(kv[f"bubbleId:{cid}:{h['bubbleId']}"]) if f"bubbleId:{cid}:{h['bubbleId']}" in kv
                    else inline[h["bubbleId"]] for h in doc.get("fullConversationHeadersOnly") or []]
        for c in json.loads(items.get("composer.composerData") or "{}").get("allComposers", []):
            if c.get("conversation"):
                convs.setdefault(c["composerId"], c["conversation"])
        for tab in json.loads(items.get("workbench.panel.aichat.view.aichat.chatdata") or "{}").get("tabs", []):
            convs.setdefault(tab["tabId"], [{**b, "type": 1 if b["type"] == "user" else 2} for b in tab["bubbles"]])
        said = {b["text"].strip() for bs in convs.values() for b in bs if b["type"] == 1}
        rest = [p for p in json.loads(items.get("aiService.prompts") or "[]") if p["text"].strip() not in said]
        for bubbles in convs.values():
            if not bubbles:
                continue  # a new tab or a draft composer: no conversation
            tools = [b["toolFormerData"] for b in bubbles if b.get("toolFormerData")]
            done = [t for t in tools if t.get("result") is not None or t.get("status") in ("error", "completed")]
            out.append(Real(1, sum(b["type"] == 1 for b in bubbles), len(tools), len(done),
                            sum(t.get("status") == "error" for t in done)))
        if rest:
            out.append(Real(1, len(rest), 0, 0, 0))
    return Real(*(sum(x) for x in zip(*out)))


def real_chatgpt(root: Path) -> Real:
    """The export's mapping tree: the main path is current_node up to the root; a call is an assistant
    message with a recipient other than ``all``, answered by a ``tool`` message below it (before the next
    person turn) whose author is that tool."""
    out = []
    for f in sorted(root.rglob("conversations.json")):
        for conv in json.loads(f.read_text(encoding="utf-8")):
            nodes, person, cur = conv["mapping"], 0, conv.get("current_node")
            while cur:
                m = nodes[cur]["message"]
                meta = (m or {}).get("metadata") or {}
                person += bool(m) and m["author"]["role"] == "user" and not meta.get(
                    "is_visually_hidden_from_conversation") and m["content"]["content_type"] not in (
                    "user_editable_context", "model_editable_context")
                cur = nodes[cur]["parent"]
            msgs = {k: n["message"] for k, n in nodes.items() if n["message"]}
            calls = [k for k, m in msgs.items() if m["author"]["role"] == "assistant"
                     and m.get("recipient") not in (None, "all")]
            answered: dict[str, dict] = {}
            for k, m in msgs.items():
                if m["author"]["role"] != "tool":
                    continue
                up = nodes[k]["parent"]
                while up and (msgs.get(up) or {}).get("author", {}).get("role") != "user":
                    to = (msgs.get(up) or {}).get("recipient")
                    name = m["author"].get("name") or ""
                    if up in calls and (not name or to.split(".")[0] == name.split(".")[0]):
                        answered.setdefault(up, m)
                        break
                    up = nodes[up]["parent"]
            errors = sum(m["content"]["content_type"] == "system_error" or bool(re.search(
                "failed|error|exception", str((m["metadata"].get("aggregate_result") or {}).get("status")),
                re.IGNORECASE)) for m in answered.values())
            out.append(Real(1, person, len(calls), len(answered), errors))
    return Real(*(sum(x) for x in zip(*out)))


REAL: dict[str, tuple[str, Callable[[Path], Real]]] = {
    "cline_roo": ("cline", real_cline), "continue_dev": ("continue", real_continue),
    "cursor": ("cursor", real_cursor), "chatgpt_export": ("chatgpt", real_chatgpt),
}
