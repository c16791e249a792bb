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
from datetime import datetime
from pathlib import Path
from typing import NamedTuple


class Figures(NamedTuple):
    conversations: int
    users: int  # user messages on the main path
    calls: int
    linked: int  # calls answered by a result


def json_lines(path: Path) -> Iterator[dict]:
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


USAGE_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")


def claude_code_usage(o: dict) -> tuple[tuple, dict[str, int]] | None:
    """A Claude Code assistant line's response key (message.id, requestId) and its usage so far (Anthropic's sense:
    input_tokens without the cache reads and writes); None for any other line. A response's counts are the
    largest its lines give (one content block per line, each repeating the usage)."""
    m = o.get("message")
    if o.get("type") != "assistant" or not isinstance(m, dict) or not isinstance(m.get("usage"), dict):
        return None
    if m.get("model") == "<synthetic>":  # Claude Code's own message (an API error): no model answered
        return None
    return (m.get("id"), o.get("requestId")), {k: m["usage"].get(k) or 0 for k in USAGE_KEYS}


def codex_rollout_spend(f: Path) -> tuple[dict, dict[str, int]]:
    """A Codex rollout's first session_meta and its own spend: the last token_count event's running total
    (total_token_usage, OpenAI's sense: input_tokens holds cached_input_tokens; output_tokens the reasoning), less
    the total a forked thread's file copied from its parent before its own turns (theirs start with a turn_id, a
    UUIDv7, newer than the thread's id). The spend is empty when the rollout has no token count."""
    total, inherited, meta, copied = None, None, None, False
    for o in json_lines(f):
        p = o.get("payload") if isinstance(o.get("payload"), dict) else {}
        if o.get("type") == "session_meta":
            copied = meta is not None and p.get("id") != meta.get("id")
            meta = meta or p
        elif o.get("type") == "turn_context" and copied and isinstance(p.get("turn_id"), str):
            copied = int(p["turn_id"][:8] + p["turn_id"][9:13], 16) < int(meta["id"][:8] + meta["id"][9:13], 16)
        if o.get("type") == "event_msg" and p.get("type") == "token_count" and isinstance(p.get("info"), dict):
            total = p["info"]["total_token_usage"]
            inherited = total if copied else inherited
    if not total:
        return meta or {}, {}
    before = inherited or dict.fromkeys(total, 0)
    return meta or {}, {
        "input": total["input_tokens"] - before["input_tokens"],
        "cached": total["cached_input_tokens"] - before["cached_input_tokens"],
        "output": total["output_tokens"] - before["output_tokens"],
    }


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
            recs = list(json_lines(f))
            items = [
                r["payload"] if "payload" in r else r
                for r in recs
                if r.get("type") == "response_item"
                or (r.get("type") in ("message", "function_call", "function_call_output", "reasoning"))
            ]
            events = [r["payload"] for r in recs if r.get("type") == "event_msg"]
        users = [
            i
            for i in items
            if i.get("type") == "message"
            and i.get("role") == "user"
            and not i["content"][0]["text"].startswith(injected)
        ]
        rolled = sum(e.get("num_turns", 0) for e in events if e.get("type") == "thread_rolled_back")
        calls = [
            i
            for i in items
            if i.get("type") in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
        ]
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
            for r in json_lines(f):
                if "$rewindTo" in r:
                    ids = list(msgs)
                    gone |= set(ids[ids.index(r["$rewindTo"]) :])
                elif "id" in r:
                    msgs[r["id"]] = r
        calls = [c for m in msgs.values() for c in m.get("toolCalls") or []]
        users = [m for i, m in msgs.items() if m["type"] == "user" and i not in gone]
        out.append(
            Figures(
                1,
                len(users),
                len(calls),
                sum(c.get("result") is not None or c.get("resultDisplay") is not None for c in calls),
            )
        )
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
    # the error aider reflects to the model after "did not conform" (or after a yes to fixing lint errors) is a
    # user message of its own, the harness's (base_coder.py reflected_message)
    reflections = len(
        re.findall(
            r"^> (?:The LLM did not conform to the edit format\.|Attempt to fix lint errors\?.*: "
            r"y(?:es)?\s*$)",
            text,
            re.M,
        )
    )
    return Figures(
        text.count("# aider chat started at "), sum(k == "user" for k, _ in groups) + reflections, calls, linked
    )


def openhands(root: Path) -> Figures:
    skipped = {"change_agent_state", "null", "recall", "condensation", "condensation_request", "message", "system"}
    convs: list[list[dict]] = [json.loads(f.read_text()) for f in root.glob("*.json")]
    instructions = 0
    for rec in json_lines(root / "eval" / "output.jsonl"):
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
        answered = {
            (e.get("tool_call_metadata") or {}).get("tool_call_id") or f"event-{e.get('cause')}"
            for e in events
            if "observation" in e and e["observation"] not in ("null", "agent_state_changed")
        }
        out.append(Figures(1, users, len(calls), len(ids & answered)))
    total = _add(*out)
    return total._replace(users=total.users + instructions)


def swe_agent(root: Path) -> Figures:
    out = []
    for f in sorted(root.rglob("*.traj")):
        doc = json.loads(f.read_text())
        runs = [doc] + [a for k, a in enumerate(doc.get("attempts") or []) if k != doc["info"].get("best_attempt_idx")]
        calls = sum(h["role"] == "assistant" and bool(h.get("action")) for r in runs for h in r["history"])
        first = next(i for i, h in enumerate(doc["history"]) if h["role"] == "assistant" and not h.get("is_demo"))
        users = sum(h["role"] == "user" for h in doc["history"][:first])  # demonstrations and the instance
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
    return Figures(
        len(convs),
        sum(m["role"] == "user" for msgs in convs for m in msgs),
        len(calls),
        sum(c["id"] in answered for c in calls),
    )


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
        # on the user role: the person's words (in Cline's tags) and each part Cline adds itself
        said = sum(
            len(re.findall(r"<(?:task|feedback|answer|user_message)>", b.get("text", "")))
            for r, b in blocks
            if r == "user"
        )
        notices = sum(
            b.get("text", "").startswith(("<environment_details>", "[TASK RESUMPTION]"))
            for r, b in blocks
            if r == "user"
        )
        out.append(Figures(1, said + notices, len(uses) + xml, len(results & set(uses)) + xml_results))
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
        out.append(
            Figures(1, sum(m["sender"] == "human" for m in main), uses, sum(b["type"] == "tool_result" for b in blocks))
        )
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
        # a tool call and a code-interpreter run are each a call (done="true" once its result is in)
        details = [
            d
            for m in nodes.values()
            for d in re.findall(r'<details type="(?:tool_calls|code_interpreter)"[^>]*>', m["content"])
        ]
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
    return Figures(
        len(samples), sum(m["role"] == "user" for m in msgs), len(calls), sum(c["id"] in answered for c in calls)
    )


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
        note(
            session.get(span["traceId"], span["traceId"]),
            {p["content"] for r, p in parts if r == "user"},
            {p["id"] for _, p in parts if p["type"] == "tool_call"},
            {p["id"] for _, p in parts if p["type"] == "tool_call_response"},
        )
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
    for row in json_lines(root / "phoenix" / "spans.jsonl"):
        msgs = (row.get("attributes.llm.input_messages") or []) + (row.get("attributes.llm.output_messages") or [])
        calls = {c["tool_call.id"] for m in msgs for c in m.get("message.tool_calls") or []}
        answered = {m["message.tool_call_id"] for m in msgs if "message.tool_call_id" in m}
        if msgs or row.get("attributes.tool_call.id"):
            note(
                row["attributes.session.id"],
                {m["message.content"] for m in msgs if m["message.role"] == "user"},
                calls,
                answered | {row.get("attributes.tool_call.id")} - {None},
            )
    return Figures(
        len(groups),
        sum(len(g["users"]) for g in groups.values()),
        sum(len(g["calls"]) for g in groups.values()),
        sum(len(g["calls"] & g["answered"]) for g in groups.values()),
    )


def continue_dev(root: Path) -> Figures:
    out = []
    for f in sorted((root / "sessions").glob("*.json")):
        if f.name == "sessions.json":
            continue
        items = json.loads(f.read_text())["history"]
        msgs = [i["message"] for i in items]
        states = [s for i in items for s in i.get("toolCallStates") or [i.get("toolCallState")] if s]
        ids = {c["id"] for m in msgs for c in m.get("toolCalls") or []} | {s["toolCallId"] for s in states}
        answered = {m["toolCallId"] for m in msgs if m["role"] == "tool"} | {
            s["toolCallId"] for s in states if "output" in s
        }
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
        bubbles = doc.get("conversation") or [
            json.loads(kv[f"bubbleId:{cid}:{h['bubbleId']}"]) for h in doc["fullConversationHeadersOnly"]
        ]
        tools = [b["toolFormerData"] for b in bubbles if "toolFormerData" in b]
        out.append(Figures(1, sum(b["type"] == 1 for b in bubbles), len(tools), sum("result" in t for t in tools)))
    con = sqlite3.connect(root / "User" / "workspaceStorage" / "a1b2c3" / "state.vscdb")
    (raw,) = con.execute(
        "SELECT value FROM ItemTable WHERE key = 'workbench.panel.aichat.view.aichat.chatdata'"
    ).fetchone()
    con.close()
    for tab in json.loads(raw)["tabs"]:
        out.append(Figures(1, sum(b["type"] == "user" for b in tab["bubbles"]), 0, 0))
    return _add(*out)


def terminal_bench(root: Path) -> Figures:
    """terminal-bench: a run per trial folder (``<task_id>/<trial_name>/results.json`` with ``trial_name``); the
    instruction is the person's; a Terminus episode's ``response.json`` with commands is one call, answered
    when a next episode's ``prompt.txt`` exists."""
    out = []
    for f in sorted(root.rglob("results.json")):
        if "trial_name" not in json.loads(f.read_text()):
            continue  # the run's results.json repeats its trials
        episodes = sorted((f.parent / "agent-logs").glob("episode-*"), key=lambda p: int(p.name.split("-")[1]))
        calls = [i for i, ep in enumerate(episodes) if json.loads((ep / "response.json").read_text())["commands"]]
        out.append(Figures(1, 1, len(calls), sum(i + 1 < len(episodes) for i in calls)))
    return _add(*out)


def copilot_built(root: Path) -> Figures:
    """Copilot CLI: a user.message is the user's turn (the system prompt is a system message)."""
    return _add(
        *(
            Figures(t.conversations, t.person, t.calls, t.linked)
            for t in (copilot_file(f) for f in sorted(root.rglob("events.jsonl")))
        )
    )


def qwen_built(root: Path) -> Figures:
    """Qwen Code: every user record on the main path is a user message (the CLI's notices too, as harness)."""
    out = []
    for f in sorted(root.rglob("*.jsonl")):
        recs = [r for r in json_lines(f) if "uuid" in r]
        parent = {r["uuid"]: r.get("parentUuid") for r in recs}
        main, cur = set(), recs[-1]["uuid"]
        while cur and cur not in main:
            main.add(cur)
            cur = parent.get(cur)
        t = qwen_file(f)
        out.append(Figures(1, sum(r["type"] == "user" and r["uuid"] in main for r in recs), t.calls, t.linked))
    return _add(*out)


def opencode_built(root: Path) -> Figures:
    """OpenCode: a user message is one user turn, two when it holds the person's text (or a file) and text
    OpenCode added itself (synthetic), which is a turn of its own."""
    out = []
    for f in sorted([*root.rglob("opencode.db"), *root.rglob("ses_*.json")]):
        t = opencode_file(f)
        if f.suffix == ".json":
            doc = json.loads(f.read_text(encoding="utf-8"))
            msgs = [(m["info"], m["parts"]) for m in doc["messages"]]
        else:
            con = sqlite3.connect(f"file:{f}?mode=ro", uri=True)
            parts: dict[str, list] = {}
            for mid, d in con.execute("SELECT message_id, data FROM part"):
                parts.setdefault(mid, []).append(json.loads(d))
            msgs = [(json.loads(d), parts.get(mid, [])) for mid, d in con.execute("SELECT id, data FROM message")]
            con.close()
        users = 0
        for info, ps in msgs:
            if info["role"] != "user":
                continue
            own = any((p["type"] == "text" and not p.get("synthetic")) or p["type"] == "file" for p in ps)
            users += 1 + (own and any(p["type"] == "text" and p.get("synthetic") for p in ps))
        out.append(Figures(t.conversations, users, t.calls, t.linked))
    return _add(*out)


COUNTERS: dict[str, tuple[str, Callable[[Path], Figures]]] = {
    "codex": ("codex", codex),
    "gemini": ("gemini-cli", gemini),
    "aider": ("aider", aider),
    "openhands": ("openhands", openhands),
    "swe_agent": ("swe-agent", swe_agent),
    "mini_swe_agent": ("mini-swe-agent", mini_swe_agent),
    "tau_bench": ("openai", tau_bench),
    "cline": ("cline", cline),
    "chatgpt": ("chatgpt", chatgpt),
    "claude_ai": ("claude-ai", claude_ai),
    "open_webui": ("open-webui", open_webui),
    "inspect": ("inspect", inspect),
    "otel": ("otel", otel),
    "continue": ("continue", continue_dev),
    "cursor": ("cursor", cursor),
    "terminal_bench": ("terminal-bench", terminal_bench),
    "copilot_cli": ("copilot-cli", copilot_built),
    "qwen_code": ("qwen-code", qwen_built),
    "opencode": ("opencode", opencode_built),
    "claude_code_otel": (
        "claude-code-otel",
        lambda root: _add(*(Figures(*claude_code_otel_file(f)[:4]) for f in sorted(root.rglob("*.json*")))),
    ),
    "goose": (
        "goose",
        lambda root: _add(
            *(Figures(*goose_file(f)[:4]) for f in sorted([*root.rglob("sessions.db"), *root.rglob("2025*.jsonl")]))
        ),
    ),
    "atif": ("atif", lambda root: _add(*(Figures(*atif_file(f)[:4]) for f in sorted(root.rglob("trajectory.json"))))),
    "kimi_cli": (
        "kimi-cli",
        lambda root: _add(
            *(
                Figures(t.conversations, _kimi_user_turns(f), t.calls, t.linked)
                for f in sorted(root.rglob("wire.jsonl"))
                for t in [kimi_file(f)]
            )
        ),
    ),
}


# Real logs (../shared/data/agent-logs): five figures, the fifth the results that report a failure. Each
# counter reads the raw files with json/sqlite3 and applies the rules the tool's own source states.


class Real(NamedTuple):
    conversations: int
    person: int  # the person's messages on the main path
    calls: int
    linked: int  # calls answered by a result of that call
    errors: int  # answered calls whose result reports a failure


CLINE_TOOLS = (
    "execute_command",
    "read_file",
    "write_to_file",
    "replace_in_file",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "ask_followup_question",
    "attempt_completion",
    "plan_mode_respond",
    "new_task",
    "load_mcp_documentation",
    "web_fetch",
    "condense",
    "summarize_task",
    "new_rule",
    "report_bug",
)
# what the person typed, in the tags Cline's task loop scans for "user generated content" (task/index.ts)
CLINE_PERSON = re.compile(r"<(task|feedback|answer|user_message)>\n?(.*?)\n?</\1>", re.DOTALL)
# toolError, UseMcpToolHandler ("Error:\n" when isError, "Error executing MCP tool"), executeCommandTool
CLINE_FAILED = ("The tool execution failed", "Error executing", "Error:\n", "Command executed with exit code")
CLINE_HEADER = re.compile(r"(?:^|\n)\[([a-z_]+)(?: for '.*?'[^\n\]]*)?\] Result:", re.DOTALL)
# ExtensionMessage.ts: the UI's record of a call, and the API tool it stands for
CLINE_UI = {
    "readFile": {"read_file"},
    "listFilesTopLevel": {"list_files"},
    "listFilesRecursive": {"list_files"},
    "searchFiles": {"search_files"},
    "listCodeDefinitionNames": {"list_code_definition_names"},
    "newFileCreated": {"write_to_file"},
    "editedExistingFile": {"replace_in_file", "write_to_file"},
    "webFetch": {"web_fetch"},
}
CLINE_UI_ASKS = {
    "command": "execute_command",
    "use_mcp_server": "use_mcp_tool",
    "followup": "ask_followup_question",
    "plan_mode_respond": "plan_mode_respond",
    "load_mcp_documentation": "load_mcp_documentation",
    "browser_action_launch": "browser_action",
}


def _cline_results(text: str, open_calls: list[set[str]]) -> tuple[int, int]:
    """(linked, errors) of one request's text against the calls of the response before it."""
    linked = errors = 0
    heads = list(CLINE_HEADER.finditer(text))
    for k, h in enumerate(heads):
        body = text[h.end() : heads[k + 1].start() if k + 1 < len(heads) else len(text)].lstrip()
        match = next((c for c in open_calls if h.group(1) in c), None)
        if match is not None:
            open_calls.remove(match)
            linked += 1
            errors += is_error(body.startswith(CLINE_FAILED), body, h.group(1))  # (the call's XML args are not kept)
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
                # native tool calling: tool_use blocks, answered by a tool_result of their id or, as Cline 3.x
                # of 2026 writes them, by the same "[name for 'x'] Result:" text
                last += [{b["name"], b["id"]} for b in blocks if b["type"] == "tool_use"]
                calls += len(last)
                continue
            person += sum(bool(body.strip()) for _, body in CLINE_PERSON.findall(text))
            for b in blocks:
                if b["type"] == "tool_result" and (hit := next((c for c in last if b["tool_use_id"] in c), None)):
                    last.remove(hit)
                    linked += 1
                    errors += is_error(bool(b.get("is_error")), str(b.get("content")), "")
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
            # the task opens as a `task` record (2026) or as the first `text` (late 2025)
            if m["type"] == "say" and (kind in ("user_feedback", "task") or kind == "text" and not sent):
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
            calls += kind not in ("user_feedback", "task", "text", "api_req_started")
        out.append(Real(1, person, calls, linked, errors))
    return Real(*(sum(x) for x in zip(*out)))


def cline_tokens(root: Path) -> int:
    """Every request's tokens of a task folder: the UI's api_req_started records (tokensIn, tokensOut, cacheWrites,
    cacheReads), or the history's metrics (prompt, completion, cached) when there is no UI file."""
    total = 0
    for f in sorted(root.rglob("api_conversation_history.json")):
        ui = f.parent / "ui_messages.json"
        if ui.exists():
            for m in json.loads(ui.read_text(encoding="utf-8")):
                if m.get("say") == "api_req_started":
                    r = json.loads(m["text"])
                    total += sum(r.get(k) or 0 for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads"))
        else:
            for m in json.loads(f.read_text(encoding="utf-8")):
                t = (m.get("metrics") or {}).get("tokens") or {}
                total += sum(t.get(k) or 0 for k in ("prompt", "completion", "cached"))
    for ui in sorted(root.rglob("ui_messages.json")):  # a task shared without its history
        if not (ui.parent / "api_conversation_history.json").exists():
            for m in json.loads(ui.read_text(encoding="utf-8")):
                if m.get("say") == "api_req_started":
                    r = json.loads(m["text"])
                    total += sum(r.get(k) or 0 for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads"))
    return total


def real_continue(root: Path) -> Real:
    """core/index.d.ts: Session.history of ChatHistoryItem; a call's result is a tool message or, before
    those, its ToolCallState's ``output``; a state ``errored`` or ``canceled`` is a failure."""
    # sessions.json is the index of the sessions, not a session
    out = [continue_file(f) for f in sorted(root.rglob("*.json")) if f.name != "sessions.json"]
    return Real(*(sum(x) for x in zip(*out)))


def continue_file(f: Path) -> Real:
    """One Continue session file, as real_continue counts it."""
    items = json.loads(f.read_text(encoding="utf-8"))["history"]
    msgs = [i["message"] for i in items]
    states = {s["toolCallId"]: s for i in items for s in i.get("toolCallStates") or []}
    ids = {c["id"] for m in msgs for c in m.get("toolCalls") or []} | set(states)
    answered = {m["toolCallId"] for m in msgs if m["role"] == "tool"} | {
        k for k, s in states.items() if isinstance(s.get("output"), list)
    }
    said = {m["toolCallId"]: str(m.get("content") or "") for m in msgs if m["role"] == "tool"}
    said.update(
        (k, "\n".join(str(o.get("content", "")) for o in s["output"] if isinstance(o, dict)))
        for k, s in states.items()
        if isinstance(s.get("output"), list) and k not in said
    )
    fn = {k: s.get("toolCall", {}).get("function") or {} for k, s in states.items()}
    failed = {
        k
        for k in ids & answered
        if is_error(
            states.get(k, {}).get("status") in ("errored", "canceled"),
            said.get(k, ""),
            fn.get(k, {}).get("name", ""),
            str(fn.get(k, {}).get("arguments", "")),
        )
    }
    return Real(1, sum(m["role"] == "user" for m in msgs), len(ids), len(ids & answered), len(failed))


def real_cursor(root: Path) -> Real:
    """Every chat key of every state.vscdb: composers (bubbles inline, in conversationMap or one per key),
    chat-panel tabs, composers inline in the workspace index; the workspace's prompts no conversation holds."""
    out = []
    for f in sorted(root.rglob("*.vscdb")):
        con = sqlite3.connect(f"file:{f}?mode=ro", uri=True)
        kv = (
            dict(con.execute("SELECT key, value FROM cursorDiskKV"))
            if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'cursorDiskKV'").fetchone()
            else {}
        )
        items = dict(
            con.execute(
                "SELECT key, value FROM ItemTable WHERE key IN ('composer.composerData', "
                "'workbench.panel.aichat.view.aichat.chatdata', 'aiService.prompts')"
            )
        )
        con.close()
        convs: dict[str, list[dict]] = {}
        for key, raw in kv.items():
            if key.startswith("composerData:"):
                doc = json.loads(raw)
                cid = key.split(":", 1)[1]
                inline = doc.get("conversationMap") or {}
                convs[cid] = doc.get("conversation") or [
                    json.loads(kv[f"bubbleId:{cid}:{h['bubbleId']}"])
                    if f"bubbleId:{cid}:{h['bubbleId']}" in kv
                    else inline[h["bubbleId"]]
                    for h in doc.get("fullConversationHeadersOnly") or []
                ]
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
            out.append(
                Real(
                    1,
                    sum(b["type"] == 1 for b in bubbles),
                    len(tools),
                    len(done),
                    sum(
                        is_error(
                            t.get("status") == "error",
                            str(t.get("result") or ""),
                            t.get("name", ""),
                            str(t.get("rawArgs") or t.get("params") or ""),
                        )
                        for t in done
                    ),
                )
            )
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
                person += (
                    bool(m)
                    and m["author"]["role"] == "user"
                    and not meta.get("is_visually_hidden_from_conversation")
                    and m["content"]["content_type"] not in ("user_editable_context", "model_editable_context")
                )
                cur = nodes[cur]["parent"]
            msgs = {k: n["message"] for k, n in nodes.items() if n["message"]}
            calls = [
                k
                for k, m in msgs.items()
                if m["author"]["role"] == "assistant" and m.get("recipient") not in (None, "all")
            ]
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
            errors = sum(
                is_error(
                    m["content"]["content_type"] == "system_error"
                    or bool(
                        re.search(
                            "failed|error|exception|cancel",  # a run that never ended is a failed call
                            str((m["metadata"].get("aggregate_result") or {}).get("status")),
                            re.IGNORECASE,
                        )
                    ),
                    "\n".join(str(x) for x in m["content"].get("parts") or []) or str(m["content"].get("text", "")),
                    str(msgs[c].get("recipient")),
                    "",
                )
                for c, m in answered.items()
            )
            out.append(Real(1, person, len(calls), len(answered), errors))
    return Real(*(sum(x) for x in zip(*out)))


REAL: dict[str, tuple[str, Callable[[Path], Real]]] = {
    "cline_roo": ("cline", real_cline),
    "continue_dev": ("continue", real_continue),
    "cursor": ("cursor", real_cursor),
    "chatgpt_export": ("chatgpt", real_chatgpt),
}

# --- Real logs of agent runs and traces (../shared/data/agent-logs): one file at a time, five figures each. ---


class Run(NamedTuple):
    conversations: int
    person: int  # messages a person wrote, on the main path
    calls: int
    linked: int  # calls answered by a result
    errors: int  # calls whose result is an error


def _plus(a: Run, b: Run) -> Run:
    return Run(*(x + y for x, y in zip(a, b)))


def _values(path: Path) -> list:
    """Every top-level JSON value of a file: a document, JSONL, or pretty-printed objects one after another."""
    text, dec, i, out = path.read_text(encoding="utf-8"), json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i >= len(text):
            return out
        v, i = dec.raw_decode(text, i)
        out.extend(v if isinstance(v, list) else [v])


def _otel_spans(path: Path) -> list[dict]:
    """Spans as {trace, span, parent, name, start, attrs, error, service}, each once (repeats merged)."""
    spans: dict[tuple, dict] = {}

    def put(s: dict) -> None:
        key = (s["trace"], s["span"])
        if key in spans:
            spans[key]["attrs"].update(s["attrs"])
        else:
            spans[key] = s

    for rec in _values(path):
        if "data" in rec:  # Jaeger
            for t in rec["data"]:
                for sp in t["spans"]:
                    tags = {x["key"]: x["value"] for x in sp["tags"]}
                    parent = [r["spanID"] for r in sp["references"] if r["refType"] == "CHILD_OF"]
                    put(
                        {
                            "trace": sp["traceID"],
                            "span": sp["spanID"],
                            "parent": parent[0] if parent else None,
                            "name": sp["operationName"],
                            "start": sp["startTime"] / 1e6,
                            "attrs": tags,
                            "error": tags.get("otel.status_code") == "ERROR",
                            "service": t["processes"][sp["processID"]]["serviceName"],
                        }
                    )
        elif "spanContext" in rec:  # JS ReadableSpan
            put(
                {
                    "trace": rec["spanContext"]["traceId"],
                    "span": rec["spanContext"]["spanId"],
                    "parent": rec.get("parentSpanId"),
                    "name": rec["name"],
                    "start": rec["startTime"][0] + rec["startTime"][1] / 1e9,
                    "attrs": dict(rec["attributes"]),
                    "error": rec["status"].get("code") == 2,
                    "service": "",
                }
            )
        else:  # the Python SDK's to_json, or a Phoenix row
            attrs = dict(rec["attributes"])
            if "span_kind" in rec:
                attrs["openinference.span.kind"] = rec["span_kind"]
            status = rec.get("status_code") or rec["status"]["status_code"]
            start = rec["start_time"].replace("Z", "+00:00")
            put(
                {
                    "trace": rec["context"]["trace_id"],
                    "span": rec["context"]["span_id"],
                    "parent": rec["parent_id"],
                    "name": rec["name"],
                    "start": datetime.fromisoformat(start).timestamp(),
                    "attrs": attrs,
                    "error": status == "ERROR",
                    "service": "",
                }
            )
    return list(spans.values())


def otel_run(path: Path) -> Run:
    """A conversation per agent (nearest agent span above a model call) per session (else trace); an agent under
    another agent's spans is its sub-agent (no person turns). Person turns: the distinct user texts of a
    top-level agent's model inputs. Calls: the distinct tool-call ids of its messages and tool spans (a tool
    span without an id is the call of that name in the messages); errors: tool spans with an error status."""
    spans = _otel_spans(path)
    by_id = {(s["trace"], s["span"]): s for s in spans}
    session = {}
    for s in spans:
        sid = s["attrs"].get("gen_ai.conversation.id") or s["attrs"].get("session.id")
        if sid:
            session.setdefault(s["trace"], sid)

    def op(s: dict) -> str:
        return str(s["attrs"].get("gen_ai.operation.name") or "")

    def is_agent(s: dict) -> bool:
        a = s["attrs"]
        return (
            op(s) == "invoke_agent"
            or a.get("openinference.span.kind") == "AGENT"
            or "agent" in (a.get("ioa_observe.span.kind"), a.get("traceloop.span.kind"))
        )

    def up(s: dict) -> dict | None:
        return by_id.get((s["trace"], s["parent"]))

    def agent(s: dict | None) -> tuple:
        while s is not None and not is_agent(s):
            s = up(s)
        return (s["service"], s["attrs"].get("gen_ai.agent.name") or s["name"]) if s else ("", "")

    def kind(s: dict) -> str:
        a = s["attrs"]
        if op(s) == "execute_tool" or a.get("openinference.span.kind") == "TOOL":
            return "tool"
        if (
            op(s) == "chat"
            or a.get("openinference.span.kind") == "LLM"
            or str(a.get("ai.operationId")).endswith((".doGenerate", ".doStream"))
        ):
            return "model"
        return ""

    threads: dict[tuple, dict] = {}
    for s in spans:
        if kind(s):
            key = (session.get(s["trace"], s["trace"]), agent(up(s)))
            t = threads.setdefault(
                key, {"users": set(), "calls": [], "answered": set(), "errors": set(), "tools": [], "first": s}
            )
            t["first"] = min(t["first"], s, key=lambda x: x["start"])
            a = s["attrs"]
            if kind(s) == "tool":
                t["tools"].append(s)
                continue
            msgs = json.loads(a.get("gen_ai.input.messages", "[]")) + json.loads(a.get("gen_ai.output.messages", "[]"))
            for m in msgs:
                for p in m["parts"]:
                    if m["role"] == "user" and p["type"] == "text":
                        t["users"].add(p["content"])
                    if p["type"] == "tool_call" and p["id"] not in t["calls"]:
                        t["calls"].append((p["id"], p["name"]))
                    if p["type"] == "tool_call_response":
                        t["answered"].add(p["id"])
            for k, v in a.items():
                m = re.fullmatch(
                    r"llm\.(input|output)_messages\.(\d+)\.message\.(role|tool_call_id|tool_calls\.\d+"
                    r"\.tool_call\.id)",
                    k,
                )
                if m and m.group(3) == "role" and v == "user":
                    t["users"].add(a[k.replace(".role", ".content")])
                elif m and m.group(3) == "tool_call_id":
                    t["answered"].add(v)
                elif m and m.group(3).endswith("tool_call.id") and v not in [c for c, _ in t["calls"]]:
                    t["calls"].append((v, a[k.replace("tool_call.id", "tool_call.function.name")]))
            for m in json.loads(a.get("ai.prompt.messages", "[]")):
                if m["role"] == "user":
                    t["users"].add(json.dumps(m["content"]))
    out = Run(0, 0, 0, 0, 0)
    for (group, key), t in threads.items():
        claimed: set = set()
        for s in t["tools"]:
            a = s["attrs"]
            cid = (
                a.get("gen_ai.tool.call.id")
                or a.get("tool_call.id")
                or a.get("tool.id")
                or next(
                    (
                        c
                        for c, n in t["calls"]
                        if n == (a.get("gen_ai.tool.name") or a.get("tool.name")) and c not in claimed
                    ),
                    s["span"],
                )
            )
            claimed.add(cid)
            if cid not in [c for c, _ in t["calls"]]:
                t["calls"].append((cid, a.get("gen_ai.tool.name")))
            t["answered"].add(cid)
            said = a.get("gen_ai.tool.call.result") or a.get("output.value") or a.get("gen_ai.tool.output") or ""
            if is_error(
                s["error"],
                str(said),
                str(a.get("gen_ai.tool.name") or a.get("tool.name") or ""),
                str(a.get("gen_ai.tool.call.arguments") or a.get("input.value") or ""),
            ):
                t["errors"].add(cid)
        above, sub = up(t["first"]), False
        while above is not None:
            other = (
                group,
                agent(above)
                if not is_agent(above)
                else (above["service"], above["attrs"].get("gen_ai.agent.name") or above["name"]),
            )
            sub = sub or (other[1] != key and other in threads)
            above = up(above)
        ids = {c for c, _ in t["calls"]}
        out = _plus(
            out, Run(1, 0 if sub else len(t["users"]), len(ids), len(ids & t["answered"]), len(ids & t["errors"]))
        )
    return out


OPENHANDS_SKIPPED = {
    "change_agent_state",
    "null",
    "pause",
    "resume",
    "stop",
    "recall",
    "condensation_request",
    "start",
    "message",
    "system",
    "condensation",
}


def openhands_run(path: Path) -> Run:
    """Resolver/evaluation output.jsonl (V0 events, flattened or not), a V1 events list, or a summary (nothing).
    A V0 result answers the call its tool_call_id or cause names, else the open call of its kind whose command or
    code it echoes; a message without a source is the user's until the agent acts; the fake user's "Please
    continue on whatever approach" is not a person."""
    if path.suffix == ".jsonl":
        runs = [json.loads(line)["history"] for line in path.read_text().splitlines() if line.strip()]
    else:
        doc = json.loads(path.read_text())
        runs = [doc] if isinstance(doc, list) else []
    out = Run(0, 0, 0, 0, 0)
    for events in runs:
        events = [e for pair in events for e in (pair if isinstance(pair, list) else [pair])]
        if any("llm_message" in e or "tool_call_id" in e for e in events):  # V1
            calls = {e["tool_call_id"] for e in events if isinstance(e.get("action"), dict)}
            obs = [e for e in events if isinstance(e.get("observation"), dict) and e["tool_call_id"] in calls]
            person = sum(e["llm_message"]["role"] == "user" for e in events if "llm_message" in e)
            errors = sum(
                e["observation"].get("is_error") is True or e["observation"].get("exit_code") not in (None, 0, -1)
                for e in obs
            )
            out = _plus(out, Run(1, person, len(calls), len(obs), errors))
            continue
        person = calls = linked = errors = 0
        open_calls: list[tuple[int, dict]] = []
        acted = False
        for i, e in enumerate(events):
            if e.get("action") == "message":
                text = (e.get("args") or e).get("content", "")
                user = e.get("source") == "user" or ("source" not in e and not acted)
                person += user and not text.startswith("Please continue on whatever approach")
            elif "action" in e and e["action"] not in OPENHANDS_SKIPPED and e.get("source") != "user":
                acted = True
                calls += 1
                open_calls.append((i, e.get("args") or e))
            elif "observation" in e and e["observation"] not in ("agent_state_changed", "null", "recall", "condense"):
                x = e.get("extras") or e
                match = next(
                    (
                        k
                        for k, (j, a) in enumerate(open_calls)
                        if events[j]["action"] == e["observation"]
                        and any(a.get(f) == x.get(f) is not None for f in ("command", "code", "path"))
                    ),
                    None,
                )
                if match is not None:
                    j, a = open_calls.pop(match)
                    linked += 1
                    errors += is_error(
                        x.get("exit_code") not in (None, 0, -1) or e["observation"] == "error",
                        str(e.get("content", "")),
                        events[j]["action"],
                        str(a.get("command", "")),
                    )
        out = _plus(out, Run(1, person, calls, linked, errors))
    return out


SWE_FAILED = (
    "Your proposed edit has introduced new syntax error",
    "Error",
    "Usage: ",
    "Traceback ",
    "No such file or directory",
)


def swe_agent_run(path: Path) -> Run:
    """One issue, one person turn (the instance template before the first action; demonstrations are not the
    person's); every trajectory step is a call with its observation (the history may stop before the last)."""
    doc = json.loads(path.read_text())
    history = [h for h in doc["history"] if not h.get("is_demo")]
    first_action = next(i for i, h in enumerate(history) if h["role"] == "assistant" and h.get("action"))
    person = int(any(h["role"] == "user" for h in history[:first_action]))
    steps = doc.get("trajectory", [])  # the function-calling demonstrations hold the history alone
    made = [c["id"] for h in history if h["role"] == "assistant" for c in h.get("tool_calls") or []]
    if made:  # function calling: a tool message answers the open calls named in its tool_call_ids (a replayed
        # run repeats ids, so the earliest open call of that id)
        open_ids: list[str] = []
        linked: list[object] = []
        for h in history:
            if h["role"] == "assistant":
                open_ids += [c["id"] for c in h.get("tool_calls") or []]
            elif h["role"] == "tool":
                for i in h.get("tool_call_ids") or []:
                    if i in open_ids:
                        open_ids.remove(i)
                        linked.append(h["content"])
        if open_ids and len(steps) >= len(made):  # the history stops before the last observation
            linked.append(steps[len(made) - 1]["observation"])
        after = [st for st in steps[len(made) :] if st.get("action")]  # steps past the history: a call each
        linked += [st["observation"] for st in after]
        errors = sum(str(o).lstrip().startswith(SWE_FAILED) for o in linked)
        return Run(1, person, len(made) + len(after), len(linked), errors)
    actions = sum(h["role"] == "assistant" and bool(h.get("action")) for h in history)
    calls = max(actions, len(steps))
    errors = sum(
        is_error(
            str(s["observation"]).lstrip().startswith(SWE_FAILED), str(s["observation"]), "", str(s.get("action", ""))
        )
        for s in steps
    )
    return Run(1, person, calls, calls, errors)


MINI_PERSON = (
    "Command not executed. The user rejected your command with the following message:",
    "Commands not executed. The user rejected your commands with the following message:",
    "The user added a new task:",
    "Interrupted by user:",
)
MINI_HARNESS = (
    "Please always provide EXACTLY ONE action",
    "Format error:",
    "Interrupted by user: Temporary interruption caught.",
    "Command not executed. Switching to human mode",
    "Commands not executed. Switching to human mode",
    "Your previous response reached the output",
)


def mini_swe_agent_run(path: Path) -> Run:
    """The first user message is the task; an action (a tool call, an ``extra.actions`` entry or a fenced bash
    block) is answered by the tool message with its id or the next user message, unless the harness wrote that
    one or it carries the person's words (a rejection, an interruption, a new task: the action did not run)."""
    msgs = json.loads(path.read_text())["messages"]
    person = calls = linked = errors = 0
    pending: list = []
    seen_user = False
    for m in msgs:
        text = m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        if m["role"] == "assistant":
            n = (
                len(m.get("tool_calls") or [])
                or len((m.get("extra") or {}).get("actions") or [])
                or len(re.findall(r"```(?:bash|mswea_bash_command)\n", text))
            )
            calls += n
            runs = (
                [json.dumps(c.get("function")) for c in m.get("tool_calls") or []]
                or [json.dumps(a) for a in (m.get("extra") or {}).get("actions") or []]
                or re.findall(r"```(?:bash|mswea_bash_command)\n(.*?)```", text, re.S)
            )
            pending = (runs + [text] * n)[:n]  # what each action runs
        elif m["role"] == "user" and text.lstrip().startswith(MINI_HARNESS):
            pending = []
        elif m["role"] == "user" and text.lstrip().startswith(MINI_PERSON):
            pending, person = [], person + 1
        elif m["role"] in ("user", "tool") and pending:
            action = ("bash", pending.pop(0))
            linked += 1
            code = (m.get("extra") or {}).get("returncode")
            errors += is_error(
                code != 0
                if isinstance(code, int)
                else bool(re.match(r"\s*(<returncode>[1-9-]|The last command <command>)", text)),
                text,
                *action,
            )
        elif m["role"] == "user":
            person += not seen_user
            seen_user = True
    return Run(1, person, calls, linked, errors)


def _inspect_text(m: dict) -> str:
    c = m.get("content")
    return c if isinstance(c, str) else "\n".join(p.get("text", "") for p in c or [] if isinstance(p, dict))


def inspect_run(path: Path) -> Run:
    """One conversation per sample; when the model events hold replies the messages lack, the conversation is
    the events' (each call's new user input, then its reply). Person turns: user messages other than the agents'
    continue prompts; calls and errors from the tool calls and tool messages."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as z:
            samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    else:
        samples = json.loads(path.read_text())["samples"]
    out = Run(0, 0, 0, 0, 0)
    for s in samples:
        msgs = s["messages"]
        texts = {json.dumps(m.get("content")) for m in msgs if m["role"] == "assistant"} | {
            m.get("id") for m in msgs if m["role"] == "assistant"
        }
        replies = [
            e["output"]["choices"][0]["message"]
            for e in s["events"]
            if e["event"] == "model" and e["output"]["choices"]
        ]
        if any(
            (r.get("id") or json.dumps(r.get("content"))) not in texts and (r.get("id") or r.get("content"))
            for r in replies
        ):
            users = {
                json.dumps(m["content"])
                for e in s["events"]
                if e["event"] == "model"
                for m in e["input"]
                if m["role"] == "user"
            }
            out = _plus(out, Run(1, len(users), 0, 0, 0))
            continue
        users = [
            m
            for m in msgs
            if m["role"] == "user"
            and not str(m["content"]).startswith(
                ("Please proceed to the next step using your best judgement", "Your submission was incorrect")
            )
        ]
        calls = [c for m in msgs for c in m.get("tool_calls") or []]
        results = {m["tool_call_id"]: m for m in msgs if m["role"] == "tool"}
        out = _plus(
            out,
            Run(
                1,
                len(users),
                len(calls),
                sum(c["id"] in results for c in calls),
                sum(
                    is_error(
                        results[c["id"]].get("error") is not None,
                        _inspect_text(results[c["id"]]),
                        c.get("function", ""),
                        json.dumps(c.get("arguments")),
                    )
                    for c in calls
                    if c["id"] in results
                ),
            ),
        )
    return out


RUNS: dict[str, tuple[str, Callable[[Path], Run]]] = {
    "otel_genai": ("otel", otel_run),
    "openinference_phoenix": ("otel", otel_run),
    "openhands": ("openhands", openhands_run),
    "swe_agent": ("swe-agent", swe_agent_run),
    "mini_swe_agent": ("mini-swe-agent", mini_swe_agent_run),
    "inspect_ai": ("inspect", inspect_run),
}


# docs/definitions.md#tool-errors, restated from docs/warehouse.md (``error_source``) for the counters, independent of the importer's SQL
# (test_tool_errors checks the names agree): a result is an error when the format flags it, else when one of these
# matches the first and last 2,000 characters of its text; a search (grep, rg, findstr, ...) exiting 1 with no
# output is neither.
ERROR_RULES: tuple[tuple[str, str], ...] = (
    ("traceback", r"(?m)^\s*Traceback \(most recent call last\):"),
    ("shell_error", r"(?m)^(?:/\S*/)?(?:ba|z|da|k)?sh: (?:(?:line )?\d+: )?(?!warning:|line \d)"),
    (
        "command_not_found",
        r"(?m)(?::|^) ?command not found\b|is not recognized as (?:an internal or external command"
        r"|the name of a cmdlet)",
    ),
    ("no_such_file", r"(?m)No such file or directory|cannot find the (?:file|path) specified|^FileNotFoundError: "),
    (
        "exit_code",
        r"(?im)^[ \t]*\[?(?:process exited with code|exit code:?|exit status:?|the command completed with "
        r"exit code|command finished with exit code|command exited with code) ?-?0*[1-9]\d*\b"
        r"|<returncode>-?0*[1-9]\d*</returncode>",
    ),
    (
        "http_status",
        r"(?m)^HTTP/\d(?:\.\d)? [45]\d\d\b|\b[45]\d\d (?:Client|Server) Error\b|returned error: [45]\d\d\b",
    ),
)
_ZERO_EXIT = (
    r"(?im)^[ \t]*\[?(?:process exited with code|exit code:?|exit status:?|the command completed with "
    r"exit code|command finished with exit code|command exited with code) ?0+\b|<returncode>0+</returncode>"
)
_SEARCH = r"\b(?:grep|egrep|fgrep|rg|ag|ack|findstr|Select-String|git grep)\b"
_SEARCH_TOOLS = ("grep", "search_files", "Grep", "grep_search", "search", "ripgrep")
_WRAPPER = (
    # Codex's chunk header and pi's exit line wrap an empty search too (docs/failures-evaluation.md, "Errors read right")
    r"(?im)^[ \t]*(?:exit code:? ?1|(?:process|command) exited with code 1|wall time:.*|output:|chunk id:.*|"
    r"original token count:.*|<returncode>1</returncode>|"
    r"</?output>|\[?command finished with exit code 1\]?)[ \t]*$"
)


def error_rule(text: str) -> str | None:
    """The first of ERROR_RULES that the text's head and tail match (exit_code not when a zero status is there too)."""
    t = text if len(text) <= 4000 else text[:2000] + "\n" + text[-2000:]
    for name, pattern in ERROR_RULES:
        if re.search(pattern, t) and not (name == "exit_code" and re.search(_ZERO_EXIT, t)):
            return name
    return None


def is_error(flagged: bool, text: str | None, name: str = "", arguments: str = "") -> bool:
    """The format's flag, else the content rules; a search that found nothing (empty but for exit-1 lines) is
    never an error."""
    text = text or ""
    empty = (
        len(text.encode()) <= 200
        and not re.search(r"(?i)exit code:? ?[2-9]|<returncode>-?[2-9]", text)
        and not re.sub(_WRAPPER, "", text).strip()
    )
    if empty and (name in _SEARCH_TOOLS or re.search(_SEARCH, arguments or "")):
        return False
    return flagged or error_rule(text) is not None


# Real logs (../shared/data/agent-logs): one counter per file of a family, each applying its tool's documented
# rules to the raw file. ``person`` counts the person's messages on the main path; ``errors`` the answered calls
# whose result says it failed.
class FileFigures(NamedTuple):
    conversations: int
    person: int
    calls: int
    linked: int
    errors: int


# codex-rs core/src/context/contextual_user_message.rs: fragments Codex injects as user messages
CODEX_CONTEXTUAL = (
    "# agents.md instructions",
    "<user_instructions>",
    "<instructions>",
    "<agents_instructions>",
    "<environment_context>",
    "<context_update>",
    "<multiagent_context>",
    "<agent_message_board_notification>",
    "<skill>",
    "<skills_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<codex_internal_context",
    "<goal_context>",
    "<recommended_plugins>",
    "<hook_prompt ",
    "<permissions instructions>",
)
CODEX_FAILURES = (
    "execution error:",
    "apply_patch verification failed",
    "write_stdin failed",
    "failed to parse function arguments",
    "unsupported call",
    "error:",
    "failed in sandbox",
    "err: ",
)


def _uuid7_ms(v: object) -> int | None:
    return int(v[:8] + v[9:13], 16) if isinstance(v, str) and len(v) == 36 and v[14] == "7" else None


def _codex_failed(output: object) -> bool:
    """A tool output's own word on failure: ``success: false``, the JSON wrapper's exit code, the header's, or a
    handler's failure message; anything else succeeded."""
    if isinstance(output, dict):
        return output.get("success") is False or _codex_failed(str(output.get("content", "")))
    if isinstance(output, list):
        return _codex_failed("\n".join(p.get("text", "") for p in output if isinstance(p, dict)))
    if not isinstance(output, str):
        return False
    try:
        wrapped = json.loads(output)
    except json.JSONDecodeError:
        wrapped = None
    if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
        code = (wrapped.get("metadata") or {}).get("exit_code")
        return code != 0 if isinstance(code, int) else _codex_failed(wrapped["output"])
    for line in output.split("\n")[:8]:
        if line.rstrip() == "Output:":
            break
        m = re.match(r"(?:Exit code|Process exited with code):? (-?\d+)", line)
        if m:
            return int(m.group(1)) != 0
    return output.lstrip().lower().startswith(CODEX_FAILURES)


def _codex_text(output: object) -> str:
    """The text a tool output shows: a content list's texts, a ``{"content"}``'s, the JSON wrapper's ``output``."""
    if isinstance(output, dict):
        return _codex_text(output.get("content", ""))
    if isinstance(output, list):
        return "\n".join(p.get("text", "") for p in output if isinstance(p, dict))
    if not isinstance(output, str):
        return ""
    try:
        wrapped = json.loads(output)
    except json.JSONDecodeError:
        return output
    return wrapped["output"] if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str) else output


_CODEX_BARE = ("message", "function_call", "function_call_output", "reasoning", "custom_tool_call", "local_shell_call")


def codex_file(path: Path) -> FileFigures:
    recs = list(json_lines(path))
    meta: dict = {}
    copied = False
    person = 0
    calls: list[str | None] = []
    called: dict[str | None, tuple[str, str]] = {}  # call id -> (tool name, arguments)
    outputs: dict[str, object] = {}
    exits: dict[str, int] = {}
    rolled = 0
    for r in recs:
        kind, p = r.get("type"), r.get("payload") or {}
        if kind in _CODEX_BARE and "payload" not in r:  # the 2025-08/09 layout: items without a response_item wrapper
            kind, p = "response_item", r
        if kind == "session_meta":
            copied = bool(meta) and p.get("id") != meta.get("id")
            meta = meta or p
            continue
        boundary = kind == "turn_context" or (kind == "event_msg" and p.get("type") == "task_started")
        if copied and boundary:
            turn, thread = _uuid7_ms(p.get("turn_id")), _uuid7_ms(meta.get("id"))
            copied = turn < thread if turn is not None and thread is not None else False
        if kind == "event_msg" and p.get("type") in ("exec_command_end", "patch_apply_end"):
            code = p.get("exit_code") if "exit_code" in p else (0 if p.get("success") else 1)
            exits[p["call_id"]] = code
        if kind == "event_msg" and p.get("type") == "thread_rolled_back":
            rolled += p.get("num_turns", 0)
        if kind != "response_item":
            continue
        t = p.get("type")
        if t == "message" and p.get("role") == "user" and not copied:
            texts = [c.get("text", "") for c in p["content"]]
            person += not any(x.lstrip().lower().startswith(CODEX_CONTEXTUAL) for x in texts)
        elif t in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call"):
            calls.append(p.get("call_id") or p.get("id"))
            args = p.get("arguments", p.get("input", p.get("action")))
            called[calls[-1]] = (p.get("name", ""), args if isinstance(args, str) else json.dumps(args))
        elif t in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
            outputs[p["call_id"]] = p.get("output")
    linked = [c for c in calls if c in outputs]
    errors = sum(
        is_error(exits[c] != 0 if c in exits else _codex_failed(outputs[c]), _codex_text(outputs[c]), *called[c])
        for c in linked
    )
    return FileFigures(1, person - rolled, len(calls), len(linked), errors)


# Claude Code's own text on the user role (slash commands and their output, hooks, interruptions, summaries)
CLAUDE_HARNESS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "Caveat: The messages below were generated",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "<system-reminder>",
    "Stop hook feedback:",
    "Operation stopped by hook",
    "[Request interrupted by user",
    "Request interrupted by user",
    "This session is being continued from a previous conversation",
    "<task-notification>",
    "<ci-monitor-event>",  # the desktop app's pull-request watcher
    "Another Claude session sent a message:",  # a peer session's message
)


def claude_code_queued(recs: list[dict]) -> int:
    """Prompts the person typed while a turn ran that reached the model mid-turn and no user line or
    ``queued_command`` attachment holds: a ``remove`` queue operation (its ``content``, else the oldest enqueued)
    followed, before any new prompt, by a reply or a tool result."""
    attached = [
        r["attachment"].get("prompt")
        for r in recs
        if r.get("type") == "attachment"
        and isinstance(r.get("attachment"), dict)
        and r["attachment"].get("type") == "queued_command"
    ]
    queue: list = []
    n = 0
    for i, r in enumerate(recs):
        if r.get("type") != "queue-operation":
            continue
        op, content = r.get("operation"), r.get("content")
        if op == "enqueue":
            queue.append(content)
            continue
        if content is not None and content in queue:
            queue.remove(content)
        elif content is None and queue:
            content = queue.pop(0)
        if op != "remove" or not isinstance(content, str) or not content or content in attached:
            continue
        nxt = next(
            (x for x in recs[i + 1 :] if x.get("type") in ("user", "assistant") and not x.get("isSidechain")), None
        )
        if nxt is None:
            continue
        body = (nxt.get("message") or {}).get("content")
        results = isinstance(body, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in body)
        if nxt.get("type") == "assistant" or results:
            n += not content.lstrip().startswith(CLAUDE_HARNESS)
    return n


def claude_code_main_path(recs: list[dict]) -> set[str]:
    """The uuids on the path from the newest leaf to the root. A line whose parent is in no line of the file (a
    compaction boundary's ``logicalParentUuid``, a hook's progress line naming a response never written), or the
    new root after a plan accepted with a cleared context, continues the line with a uuid written before it (off
    sidechains). A line carrying tool results whose call is on the path
    is on it too (parallel calls: each result hangs from its own call's line)."""
    nodes = {}  # uuid -> (parent, timestamp, line)
    ids = {r["uuid"] for r in recs if isinstance(r.get("uuid"), str)}
    last = None  # the uuid of the line before, off sidechains: what a line whose parent is absent continues
    for n, r in enumerate(recs):
        if isinstance(r.get("uuid"), str):
            parent = r.get("parentUuid") or r.get("logicalParentUuid")
            cleared = parent is None and (  # a plan accepted with a cleared context: the session goes on
                (r.get("data") or {}).get("hookName") == "SessionStart:clear"
                or str((r.get("message") or {}).get("content")).startswith("Implement the following plan:")
            )
            if (cleared or (parent is not None and parent not in ids)) and not r.get("isSidechain") and last:
                parent = last
            nodes[r["uuid"]] = (parent, r.get("timestamp") or "", n)
            last = r["uuid"] if not r.get("isSidechain") else last
    parents = {p for p, _, _ in nodes.values()}
    leaf = max((u for u in nodes if u not in parents), key=lambda u: (nodes[u][1], nodes[u][2]))
    path_ids: set[str] = set()
    while leaf in nodes and leaf not in path_ids:
        path_ids.add(leaf)
        leaf = nodes[leaf][0]
    for r in recs:
        content = (r.get("message") or {}).get("content")
        results = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
        if r.get("type") == "user" and results and r.get("parentUuid") in path_ids:
            path_ids.add(r["uuid"])
    return path_ids


def _claude_text(content: object) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def claude_code_file(path: Path) -> FileFigures:
    if path.name.endswith(".meta.json"):
        return FileFigures(0, 0, 0, 0, 0)  # a sub-agent's type and description: read with its transcript
    recs = list(json_lines(path))
    path_ids = claude_code_main_path(recs)
    # the lines an isMeta user line answers: a prompt command's or a skill's body follows the command the person gave
    expanded = {r.get("parentUuid") for r in recs if r.get("type") == "user" and r.get("isMeta") is True}
    person = 0
    uses: dict[str, tuple[str, str]] = {}  # id -> (tool name, input)
    results: dict[str, bool] = {}
    for r in recs:
        content = (r.get("message") or {}).get("content")
        blocks = content if isinstance(content, list) else []
        if r.get("type") == "assistant":
            uses.update(
                (b["id"], (b.get("name", ""), json.dumps(b.get("input"))))
                for b in blocks
                if b.get("type") == "tool_use"
            )
        att = r.get("attachment") if r.get("type") == "attachment" else None
        if isinstance(att, dict) and att.get("type") == "queued_command":  # a prompt typed while a turn ran
            r = {**r, "type": "user", "message": {"content": att.get("prompt")}, "origin": att.get("origin")}
            r["isMeta"] = att.get("isMeta") is True or (
                not isinstance(att.get("origin"), dict) and att.get("commandMode") == "task-notification"
            )
            content = att.get("prompt")
            blocks = content if isinstance(content, list) else []
        if r.get("type") != "user":
            continue
        results.update(
            (
                b["tool_use_id"],
                is_error(
                    bool(b.get("is_error")), _claude_text(b.get("content")), *uses.get(b["tool_use_id"], ("", ""))
                ),
            )
            for b in blocks
            if b.get("type") == "tool_result"
        )
        texts = [content] if isinstance(content, str) else [b["text"] for b in blocks if b.get("type") == "text"]
        pasted = any(b.get("type") == "image" for b in blocks if isinstance(b, dict))  # a screenshot alone
        if not (texts or pasted) or r.get("uuid") not in path_ids:
            continue
        text = "\n".join(texts).lstrip()
        if text.strip() == "Tool loaded." and any(b.get("type") == "tool_result" for b in blocks):
            continue  # beside a deferred tool's loading: Claude Code's
        kind = (r.get("origin") or {}).get("kind") if isinstance(r.get("origin"), dict) else None
        if kind not in (None, "human") or r.get("promptSource") == "system":  # who sent it, as the line says
            person += kind == "channel"  # a chat bridge's message is the person's; any other sender is not
            continue
        reminded = re.match(r"<system-reminder>.*?</system-reminder>\s*\S", text, re.DOTALL)
        meta = any(r.get(k) is True for k in ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly"))
        args = re.search(r"<command-args>\s*(\S.*?)</command-args>", text, re.DOTALL)  # a command given words
        commanded = text.startswith(("<command-name>", "<command-message>")) and (
            args is not None or r.get("uuid") in expanded
        )
        person += not meta and (bool(reminded) or commanded or not text.startswith(CLAUDE_HARNESS))
    person += claude_code_queued(recs)
    if path.name.startswith(
        "agent-acompact-"
    ):  # a compaction's summary request: the prompt it repeats is the session's
        person = 0
    linked = [u for u in uses if u in results]
    return FileFigures(1, person, len(uses), len(linked), sum(results[u] for u in linked))


GEMINI_NOT_PERSON = (
    "System: Please continue.",
    "<state_snapshot>",  # chat compression's summary
    "[Function Response:",
    "This is the Gemini CLI. We are setting up the context",
    "<session_context>",
)


def _gemini_text(content: object) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content or [] if isinstance(p, dict) and isinstance(p.get("text"), str))


def _gemini_exit(v: object) -> bool:
    """The shell tool's output says the command failed: an ``Exit Code: N`` line, N not 0 (gemini-cli's
    shell.ts writes it), anywhere in the recorded result."""
    if isinstance(v, str):
        return any(int(m) != 0 for m in re.findall(r"(?im)^[ \t]*Exit Code:[ \t]*(-?\d+)[ \t]*$", v))
    if isinstance(v, dict):
        return any(_gemini_exit(x) for x in v.values())
    if isinstance(v, list):
        return any(_gemini_exit(x) for x in v)
    return False


def _gemini_result(call: dict) -> str:
    """The output a call's result carries: its functionResponse's ``output`` or ``error``, else the display."""
    texts = [
        str(v)
        for r in call.get("result") or []
        if isinstance(r, dict)
        for v in ((r.get("functionResponse") or {}).get("response") or {}).values()
    ]
    return "\n".join(texts) or str(call.get("resultDisplay") or "")


def gemini_file(path: Path) -> FileFigures:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(doc, dict) and "messages" in doc:  # a chat recording
        msgs = doc["messages"]
        person = sum(
            m["type"] == "user"
            and not _gemini_text(m.get("displayContent", m["content"])).lstrip().startswith(GEMINI_NOT_PERSON)
            for m in msgs
        )
        calls = [c for m in msgs for c in m.get("toolCalls") or []]
        done = [c for c in calls if c.get("result") is not None or c.get("resultDisplay") is not None]
        return FileFigures(
            1,
            person,
            len(calls),
            len(done),
            sum(
                is_error(
                    c.get("status") == "error" or _gemini_exit(c.get("result")),
                    _gemini_result(c),
                    c.get("name", ""),
                    json.dumps(c.get("args")),
                )
                for c in done
            ),
        )
    if isinstance(doc, list) and doc and "sessionId" in doc[0]:  # logs.json, the prompt log
        chats = path.parent / "chats"
        recorded = {f.stem[-8:] for f in chats.glob("session-*")} if chats.is_dir() else set()
        kept = [e for e in doc if e["sessionId"][:8] not in recorded and e.get("type") == "user"]
        return FileFigures(len({e["sessionId"] for e in kept}), len(kept), 0, 0, 0)
    contents = doc["history"] if isinstance(doc, dict) else doc  # a /chat save checkpoint
    person = calls = linked = errors = 0
    open_names: list[str] = []
    for c in contents:
        parts = c["parts"]
        if c["role"] == "model":
            names = [p["functionCall"]["name"] for p in parts if "functionCall" in p]
            calls += len(names)
            open_names += names
            continue
        text = _gemini_text(parts)
        person += bool(text) and not text.lstrip().startswith(GEMINI_NOT_PERSON)
        for p in parts:
            fr = p.get("functionResponse")
            if fr and fr["name"] in open_names:
                open_names.remove(fr["name"])
                linked += 1
                errors += "error" in (fr.get("response") or {})
    return FileFigures(1, person, calls, linked, errors)


def aider_tokens(path: Path) -> int:
    """aider/coders/base_coder.py: each reply's ``> Tokens: <n> sent[, <n> cache write][, <n> cache hit], <n>
    received`` line, with aider's rounding (``2.4k`` is 2400, ``1.2M`` 1200000); the sum of every count on every line."""

    def count(s: str) -> int:
        s = s.replace(",", "")
        scale = {"k": 1_000, "M": 1_000_000}.get(s[-1])
        return round(float(s[:-1]) * scale) if scale else int(float(s))

    total = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("> Tokens: "):
            total += sum(count(n) for n, _ in re.findall(r"([\d.,]+[kM]?) (sent|received|cache write|cache hit)", line))
    return total


def _stripped(text: str) -> str:
    return "\n".join(ln.rstrip() for ln in text.splitlines())


def aider_file(path: Path) -> FileFigures:
    """aider/io.py and coders/: ``#### `` inputs (a confirmation prompt with its answer, or the architect's reply
    repeated to the editor, is not the person's), ``> `` output, the rest the model's reply; edits are SEARCH/REPLACE
    blocks, fenced diffs, and in the whole format a file name over a fence; an edit is answered when the ``> ``
    output after its reply names its file, and failed when that output says so."""
    text = path.read_text(encoding="utf-8")
    sessions = text.split("# aider chat started at ")[1:]
    person = calls = linked = errors = 0
    fence = r"(?:```+[^\n]*|<source>|<code>|<pre>|<codeblock>|<sourcecode>)"
    for body in sessions:
        groups: list[tuple[str, list[str]]] = []
        reflecting = False
        # io.py tool_output writes a message of several lines as one "> " + text + "  " (the Markdown break): where a
        # session writes the breaks, the reflected failed blocks end on the line with the break, the reply follows
        breaks = any(ln.startswith("> ") and ln.endswith("  ") for ln in body.splitlines())
        for raw in body.splitlines()[1:]:
            line = raw[:-2] if raw.endswith("  ") else raw
            if line.startswith("#### "):
                kind = "confirm" if re.search(r"\(Y\)es/\(N\)o.*\[(?:Yes|No)\]:", line) else "user"
                line, reflecting = line[5:], False
            elif line.startswith("> ") or line == ">":
                kind, line, reflecting = "tool", line[2:], False
            elif not line.strip() and groups and groups[-1][0] == "tool":
                kind = "tool"
            else:  # the failed blocks aider reflects to the model after its "> " report are its own output
                reflecting = reflecting or (
                    bool(groups) and groups[-1][0] == "tool" and line.startswith("## SearchReplaceNo")
                )
                kind = "tool" if reflecting else "reply"
                if reflecting and breaks and raw.endswith("  "):
                    groups[-1][1].append(line)
                    reflecting = False
                    continue
            if groups and groups[-1][0] == kind != "confirm":
                groups[-1][1].append(line)
            else:
                groups.append((kind, [line]))
        groups = [(k, ls) for k, ls in groups if "\n".join(ls).strip()]
        formats = {"main": None, "editor": None}
        for ln in groups[0][1] if groups and groups[0][0] == "tool" else []:
            if m := re.match(r"(?:Main )?[Mm]odel: \S+ with (\S+) edit format", ln):
                formats["main"] = m.group(1)
            if m := re.match(r"Editor model: \S+ with (\S+) edit format", ln):
                formats["editor"] = m.group(1)
        last_reply, handoff = None, False
        asking: str | None = None  # "/ask <msg>" (echoed as "<msg>") or an "AI?" comment: one reply with no edits
        echo: str | None = None  # the "<msg>" aider writes again after "/ask <msg>"
        for i, (kind, lines) in enumerate(groups):
            plain = "\n".join(ln.rstrip() for ln in lines if ln.strip())
            for ln in lines if kind == "tool" and i > 0 else []:  # /architect, /model: announced again
                if m := re.match(r"(?:Main )?[Mm]odel: \S+ with (\S+) edit format", ln):
                    formats = {"main": m.group(1), "editor": None}
                if m := re.match(r"Editor model: \S+ with (\S+) edit format", ln):
                    formats["editor"] = m.group(1)
            if kind == "user":
                handoff = last_reply is not None and plain == last_reply
                # "/ask <msg>" then "<msg>" again: the coder's run(with_message) writes it (base_coder.py 871-874)
                echoed = echo is not None and plain == echo
                person += not (handoff or echoed)
                echo = None
                # commands.py _generic_chat_command; watch_prompts.py watch_ask_prompt (its "/ask" line unwritten)
                if echoed:
                    pass
                elif m := re.match(r"/(?:ask|help|context|architect)\s+(\S.*)", plain, re.S):
                    asking = echo = m.group(1)
                elif plain.startswith('Find the "AI" comments below (marked with \u2588)'):
                    asking = plain
                elif plain != asking:
                    asking = None
            elif kind == "reply":
                # aider parses edits from, and hands the editor, the reply without the thinking a reasoning model
                # wrote into it (reasoning_tags.py: between <thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b> tags)
                body_text = re.sub(r"<(thinking-content-[0-9a-f]{32})>.*?</\1>", "", "\n".join(lines), flags=re.S)
                found = list(
                    re.finditer(
                        r"^([^\n`]+?)\n(?:" + fence + r"\n)?<{5,9} (?:SEARCH|ORIGINAL)\n(.*?)^={5,9}\n(.*?)"
                        r"^>{5,9} (?:REPLACE|UPDATED)",
                        body_text,
                        re.M | re.S,
                    )
                )
                paths = [m.group(1).strip().strip("`*") for m in found]
                blocks = [(_stripped(m.group(2)), _stripped(m.group(3))) for m in found]
                paths += re.findall(r"^```diff\n--- \S+\n\+\+\+ (\S+)\n.*?^```", body_text, re.M | re.S)
                mode = formats["editor"] if handoff else formats["main"]
                if asking is not None or mode in ("ask", "help", "context", "architect"):  # get_edits: []
                    paths = []
                elif mode in ("whole", "editor-whole"):
                    paths += [
                        m.group(1)
                        for m in re.finditer(
                            r"^[*`]*([\w.\-/\\]*[./\\][\w.\-/\\]*)[*`:]*\n"
                            + fence
                            + r"\n.*?^(?:```+|</source>|</code>|"
                            r"</pre>|</codeblock>|</sourcecode>)[ \t]*$",
                            body_text,
                            re.M | re.S,
                        )
                    ]
                out = groups[i + 1][1] if i + 1 < len(groups) and groups[i + 1][0] == "tool" else []
                # linter.py's report, up to "Attempt to fix lint errors? … y": aider sends it to the model (a
                # reflection), it is not what applying the edit said
                cut = [k for k, ln in enumerate(out) if ln.startswith("# Fix any errors below, if possible.")]
                end = [k for k, ln in enumerate(out) if re.match(r"Attempt to fix (?:lint|test) errors\?", ln)]
                if cut and end and end[-1] > cut[0]:
                    out = out[: cut[0]] + out[end[-1] :]
                said: dict[
                    int, list[str]
                ] = {}  # a line goes to the edit whose (longest) file name it holds, else the first
                # base_coder.py run(): show_undo_hint() follows run_one, so what comes after it is the next input's
                hint = [
                    k for k, ln in enumerate(out) if ln == "You can use /undo to undo and discard each aider commit."
                ]
                out = out[: hint[0] + 1] if hint else out
                # editblock_coder.py 41-123: the blocks aider could not apply are repeated in its report under
                # "## SearchReplaceNoExactMatch: ..."; the others were applied (base_coder.py 1580-1584 commits them)
                failed: list[int] = []
                for m in re.finditer(
                    r"^## SearchReplaceNo\w*: [^\n]*\n<{5,9} SEARCH\n(.*?)^={5,9}\n(.*?)^>{5,9} REPLACE",
                    "\n".join(out),
                    re.M | re.S,
                ):
                    pair = (_stripped(m.group(1)), _stripped(m.group(2)))
                    k = next((k for k, b in enumerate(blocks) if b == pair and k not in failed), None)
                    if k is not None:
                        failed.append(k)
                applied = [k for k in range(len(paths)) if k not in failed]
                first = applied[0] if failed and applied else 0
                report, heading = False, -1  # inside the report, and the failed block it is about
                # the report ends with "The SEARCH section must exactly match…", or when some blocks were applied with
                # "# The other N SEARCH/REPLACE blocks were applied successfully. … Just reply with fixed versions…"
                last = (
                    "Just reply with fixed versions"
                    if any(ln.startswith("# The other ") for ln in out)
                    else "The SEARCH"
                )
                for ln in out:
                    if ln.startswith("Tokens: ") or not ln.strip():
                        continue
                    if failed and (ln.startswith("The LLM did not conform") or re.match(r"# \d+ SEARCH/REPLACE", ln)):
                        report = True
                    if report:
                        heading += ln.startswith("## SearchReplaceNo")
                        said.setdefault(failed[min(max(heading, 0), len(failed) - 1)], []).append(ln)
                        report = not ln.startswith(last)
                        continue
                    # on Windows aider names the file with backslashes (os.path.relpath): a\\b.ts is the model's a/b.ts
                    slash = ln.replace("\\", "/")
                    named = [
                        (len(p), k not in failed, k) for k, p in enumerate(paths) if p and p.replace("\\", "/") in slash
                    ]
                    said.setdefault(max(named)[2] if named else first, []).append(ln)
                answered = [k for k in said if k < len(paths)]
                linked += len(answered)
                errors += sum(
                    is_error(
                        bool(
                            re.search(
                                r"(?i)\b(?:error|exception|failed|did not conform|no exact "
                                r"match|unable to|traceback)\b",
                                "\n".join(ln for ln in said[k] if not re.match(r"Commit [0-9a-f]{7,} ", ln)),
                            )
                        ),
                        "\n".join(ln for ln in said[k] if not re.match(r"Commit [0-9a-f]{7,} ", ln)),
                        "edit",
                    )
                    for k in answered
                )
                calls += len(paths)
                last_reply, handoff = "\n".join(ln.rstrip() for ln in body_text.splitlines() if ln.strip()), False
                asking = None
    return FileFigures(len(sessions), person, calls, linked, errors)


# --- Tokens of the real files kept in fixtures/real (fixtures/real/SOURCES.md), each counted from the raw file by
# its tool's documented rules: input (cache reads and writes included) + output. ---


def claude_code_tokens(path: Path) -> int:
    """Claude Code transcript: each response (message id, request id) once, at the largest figures its lines give,
    input + output + cache reads + cache writes; Claude Code's own "<synthetic>" messages answer nothing."""
    got: dict[tuple, dict[str, int]] = {}
    for r in json_lines(path):
        one = claude_code_usage(r)
        if one is not None:
            key, u = one
            got[key] = {k: max(v, got.get(key, {}).get(k, 0)) for k, v in u.items()}
    return sum(sum(u.values()) for u in got.values())


def codex_tokens(path: Path) -> int:
    """Codex rollout: the last token_count event's total_token_usage (input_tokens holds the cached ones), less
    what a forked thread's file copied from its parent (a 0.14x sub-agent's rollout starts with the parent's
    history and running totals; its own totals go on from the parent's)."""
    _, spend = codex_rollout_spend(path)
    return spend["input"] + spend["output"] if spend else 0


def gemini_tokens(path: Path) -> int:
    """Gemini CLI chat recording: each message's tokens, input (the cached included) + output + thoughts."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return sum(
        t.get("input", 0) + t.get("output", 0) + t.get("thoughts", 0)
        for t in (m.get("tokens") for m in doc["messages"])
        if t
    )


def mini_swe_agent_tokens(path: Path) -> int:
    """mini-swe-agent .traj.json: each assistant message's extra.response.usage prompt + completion tokens."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    usages = [((m.get("extra") or {}).get("response") or {}).get("usage") for m in doc["messages"]]
    return sum(u["prompt_tokens"] + u["completion_tokens"] for u in usages if u)


def otel_tokens(path: Path) -> int:
    """An array of spans: gen_ai.usage.input_tokens + output_tokens of each span that has them (the model call's
    span; its parent repeats the figures under ai.usage.* only)."""
    spans = json.loads(path.read_text(encoding="utf-8"))
    return sum(
        int(s["attributes"].get("gen_ai.usage.input_tokens", 0))
        + int(s["attributes"].get("gen_ai.usage.output_tokens", 0))
        for s in spans
    )


def inspect_tokens(path: Path) -> int:
    """Inspect .eval: each sample's model_usage, input + output tokens per model (input holds cache reads)."""
    with zipfile.ZipFile(path) as z:
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    return sum(
        u.get("input_tokens", 0) + u.get("output_tokens", 0)
        for s in samples
        for u in (s.get("model_usage") or {}).values()
    )


# --- The families added for issue 42 (Copilot CLI, Qwen Code, OpenCode, ...): real files, one at a time, six
# figures each, the sixth the tokens the file records (input with the cache's + output), counted from the raw
# file by each tool's documented rules. ---


class Tally(NamedTuple):
    conversations: int
    person: int  # the person's messages on the main path
    calls: int
    linked: int  # calls answered by a result
    errors: int  # answered calls whose result is a failure
    tokens: int  # input (cache reads and writes included) + output


def copilot_file(path: Path) -> Tally:
    """Copilot CLI events.jsonl: person = user.message events with no source of the CLI's own (1.0.72 marks an
    instruction file it found, or a notice, with data.source); calls = assistant.message toolRequests; a call is
    answered by the tool.execution_complete of its toolCallId, failed when its success is false; tokens from
    session.shutdown modelMetrics, each shutdown counting from the session's start (the last one per model), or,
    in a file with no shutdown, each assistant.message's outputTokens."""
    recs = [r for r in json_lines(path) if "type" in r]
    person = sum(r["type"] == "user.message" and r["data"].get("source") in (None, "user") for r in recs)
    calls = [
        q["toolCallId"] for r in recs if r["type"] == "assistant.message" for q in r["data"].get("toolRequests") or []
    ]
    done = {r["data"]["toolCallId"]: r["data"].get("success") for r in recs if r["type"] == "tool.execution_complete"}
    last: dict[str, dict] = {}
    for r in recs:
        if r["type"] == "session.shutdown":
            last.update({m: v["usage"] for m, v in (r["data"].get("modelMetrics") or {}).items()})
    tokens = sum(u.get("inputTokens", 0) + u.get("outputTokens", 0) for u in last.values())
    if not last:
        tokens = sum(r["data"].get("outputTokens", 0) for r in recs if r["type"] == "assistant.message")
    linked = [c for c in calls if c in done]
    return Tally(1, person, len(calls), len(linked), sum(done[c] is False for c in linked), tokens)


def qwen_file(path: Path) -> Tally:
    """Qwen Code ChatRecord JSONL: the main path runs from the last record up its parentUuid chain; the person's
    records are type user with provenance real_user (or, before provenance existed, any subtype but the CLI's own
    notices); calls are functionCall parts, answered by the functionResponse of the same id; tokens are each
    assistant record's promptTokenCount + candidatesTokenCount + thoughtsTokenCount."""
    recs = [r for r in json_lines(path) if "uuid" in r]
    parent = {r["uuid"]: r.get("parentUuid") for r in recs}
    main, cur = set(), recs[-1]["uuid"]
    while cur and cur not in main:
        main.add(cur)
        cur = parent.get(cur)
    own = ("notification", "cron", "background_task_completed", "agent_launch_prompt", "goal_runtime")
    person = sum(
        r["type"] == "user"
        and r["uuid"] in main
        and (r["provenance"] == "real_user" if "provenance" in r else r.get("subtype") not in own)
        for r in recs
    )
    parts = [(r, p) for r in recs for p in (r.get("message") or {}).get("parts", [])]
    calls = [p["functionCall"].get("id") for r, p in parts if r["type"] == "assistant" and "functionCall" in p]
    answers = {
        p["functionResponse"].get("id"): (r.get("toolCallResult") or {}).get("status") == "error"
        or "error" in (p["functionResponse"].get("response") or {})
        for r, p in parts
        if "functionResponse" in p
    }
    linked = [c for c in calls if c in answers]
    tokens = sum(
        sum(
            (r.get("usageMetadata") or {}).get(k, 0)
            for k in ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount")
        )
        for r in recs
        if r["type"] == "assistant"
    )
    return Tally(1, person, len(calls), len(linked), sum(answers[c] for c in linked), tokens)


def opencode_file(path: Path) -> Tally:
    """OpenCode's opencode.db: a conversation per session row; the person's messages are user messages with a text
    part not marked synthetic (or a file part); each tool part is a call, answered when its state.status is
    completed or error (an error then, or when state.metadata.exit is not 0); tokens are each assistant message's input + output + reasoning + cache
    read + cache write."""
    if path.suffix == ".json":  # `opencode export`: one session, its messages with their parts
        doc = json.loads(path.read_text(encoding="utf-8"))
        sessions = 1
        msgs = {m["info"]["id"]: m["info"] for m in doc["messages"]}
        parts = [(m["info"]["id"], p) for m in doc["messages"] for p in m["parts"]]
    else:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        sessions = con.execute("SELECT count(*) FROM session").fetchone()[0]
        msgs = {mid: json.loads(d) for mid, d in con.execute("SELECT id, data FROM message")}
        parts = [(mid, json.loads(d)) for mid, d in con.execute("SELECT message_id, data FROM part")]
        con.close()
    person = sum(
        msgs[mid]["role"] == "user"
        and any((p["type"] == "text" and not p.get("synthetic")) or p["type"] == "file" for m2, p in parts if m2 == mid)
        for mid in msgs
    )
    # a bash part is "completed" whatever the command's exit: state.metadata.exit says whether it failed
    tools = [
        "error"
        if p["state"]["status"] == "completed" and (p["state"].get("metadata") or {}).get("exit") not in (None, 0)
        else p["state"]["status"]
        for _, p in parts
        if p["type"] == "tool"
    ]
    tokens = 0
    for m in msgs.values():
        t = m.get("tokens") or {}
        tokens += sum(t.get(k, 0) for k in ("input", "output", "reasoning")) + sum((t.get("cache") or {}).values())
    return Tally(
        sessions,
        person,
        len(tools),
        sum(s in ("completed", "error") for s in tools),
        sum(s == "error" for s in tools),
        tokens,
    )


def claude_code_otel_file(path: Path) -> Tally:
    """Claude Code's OTLP log export: a conversation per session.id; each user_prompt event is the person's, each
    tool_result a call answered by its result (failed when success is false); tokens are each api_request's
    input + output + cache read + cache creation tokens."""
    text = path.read_text(encoding="utf-8").strip()
    docs = [json.loads(text)] if text.startswith("{") and "\n{" not in text else list(json_lines(path))

    def val(v: dict) -> object:
        x = next(iter(v.values()))
        return int(x) if "intValue" in v else x

    recs = []
    for d in docs:
        for rl in d["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                for r in sl["logRecords"]:
                    a = {x["key"]: val(x["value"]) for x in r["attributes"]}
                    a["_name"] = str(a.get("event.name") or r["body"]["stringValue"]).removeprefix("claude_code.")
                    recs.append(a)
    tools = [r for r in recs if r["_name"] == "tool_result"]
    tokens = sum(
        r.get(k, 0)
        for r in recs
        if r["_name"] == "api_request"
        for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
    )
    return Tally(
        len({r.get("session.id") for r in recs}),
        sum(r["_name"] == "user_prompt" for r in recs),
        len(tools),
        len(tools),
        sum(str(r.get("success")).lower() == "false" for r in tools),
        tokens,
    )


def kimi_file(path: Path) -> Tally:
    """Kimi CLI wire.jsonl: a conversation for the session and one per sub-agent (SubagentEvent task_tool_call_id);
    the person's turns are the session's own TurnBegin events; every ToolCall is a call, answered by the
    ToolResult of its id (failed when return_value.is_error); tokens are each StatusUpdate's token_usage."""
    events = []
    for r in json_lines(path):
        m = r.get("message") or {}
        if m.get("type") == "SubagentEvent":
            events.append((m["payload"]["task_tool_call_id"], m["payload"]["event"]))
        elif "type" in m:
            events.append((None, m))
    subs = {s for s, _ in events if s is not None}
    calls = [(s, e["payload"]["id"]) for s, e in events if e["type"] == "ToolCall"]
    results = {
        (s, e["payload"]["tool_call_id"]): e["payload"]["return_value"].get("is_error") is True
        for s, e in events
        if e["type"] == "ToolResult"
    }
    linked = [c for c in calls if c in results]
    tokens = sum(
        sum((e["payload"].get("token_usage") or {}).values()) for _, e in events if e["type"] == "StatusUpdate"
    )
    return Tally(
        1 + len(subs),
        sum(s is None and e["type"] == "TurnBegin" for s, e in events),
        len(calls),
        len(linked),
        sum(results[c] for c in linked),
        tokens,
    )


def kimi_context_file(path: Path) -> Tally:
    """Kimi CLI 0.58-or-earlier session (its context file, one line a message or marker): the person's turns are
    the user lines with text outside <system> tags; each assistant line's tool_calls are calls, answered by a tool
    line naming the id (failed when its first part starts <system>ERROR:); a response's tokens are the _usage
    line right after it (usage.total: input + output)."""
    recs = list(json_lines(path))
    sub_agent = re.fullmatch(r".+_[a-z]+_[0-9]+", path.stem) is not None  # <session>_sub_<n>: the parent wrote it

    def texts(content: object) -> list[str]:
        parts = content if isinstance(content, list) else [content]
        return [p if isinstance(p, str) else p.get("text", "") for p in parts if p]

    person = sum(
        r["role"] == "user" and not all(t.strip().startswith("<system>") for t in texts(r["content"])) for r in recs
    ) * (not sub_agent)
    calls = [c["id"] for r in recs if r["role"] == "assistant" for c in r.get("tool_calls") or []]
    results = {
        r["tool_call_id"]: texts(r["content"])[0].startswith("<system>ERROR:") for r in recs if r["role"] == "tool"
    }
    tokens = sum(b["token_count"] for a, b in zip(recs, recs[1:]) if a["role"] == "assistant" and b["role"] == "_usage")
    linked = [c for c in calls if c in results]
    return Tally(1, person, len(calls), len(linked), sum(results[c] for c in linked), tokens)


def _kimi_user_turns(path: Path) -> int:
    """Every TurnBegin, the session's and its sub-agents' (a sub-agent's prompt is a user turn the parent wrote)."""
    n = 0
    for r in json_lines(path):
        m = r.get("message") or {}
        e = m["payload"]["event"] if m.get("type") == "SubagentEvent" else m
        n += e.get("type") == "TurnBegin"
    return n


ATIF_HANDOFF = (  # Terminus 2's summarisation prompts on the user role (harbor/agents/terminus_2/terminus_2.py)
    "You are about to hand off your work to another AI agent.",
    "You are picking up work from a previous AI agent on this task",
    "The next agent has a few questions for you, please answer",
    "Here are the answers the other agent provided.",
)


def atif_file(path: Path) -> Tally:
    """ATIF trajectory.json (Harbor RFC 0001, v1.0 to v1.8): one conversation, and one more for each trajectory
    embedded in subagent_trajectories (v1.7, at any depth); steps marked is_copied_context (a continuation's
    copy of what it continues) count for nothing; the person's steps are source user, but Terminus 2's summarisation
    prompts; each tool_call is a call,
    answered by an observation result (on any step) naming it (source_call_id), or by a result without an id when
    its step made exactly one call; tokens are each step's prompt_tokens + completion_tokens."""
    docs = [json.loads(path.read_text(encoding="utf-8"))]
    convs = person = calls = linked = tokens = 0
    while docs:
        doc = docs.pop()
        docs.extend(doc.get("subagent_trajectories") or [])
        convs += 1
        for s in doc["steps"]:
            if s.get("is_copied_context") is True:
                continue
            person += s["source"] == "user" and not str(s["message"]).lstrip().startswith(ATIF_HANDOFF)
            ids = [c["tool_call_id"] for c in s.get("tool_calls") or []] if s["source"] == "agent" else []
            results = (s.get("observation") or {}).get("results") or []
            named = {r["source_call_id"] for r in results if r.get("source_call_id")}
            unnamed = sum(not r.get("source_call_id") for r in results)
            calls += len(ids)
            linked += sum(i in named for i in ids) + (1 if len(ids) == 1 and unnamed and ids[0] not in named else 0)
            m = s.get("metrics") or {} if s["source"] == "agent" else {}
            tokens += (m.get("prompt_tokens") or 0) + (m.get("completion_tokens") or 0)
    return Tally(convs, person, calls, linked, 0, tokens)


def goose_file(path: Path) -> Tally:
    """Goose: a conversation per sessions row (a JSONL file is one); the person's messages are user messages with
    a text block; each toolRequest block is a call, answered by the toolResponse of its id (failed when the
    result's status is error or its value says isError); no per-response tokens."""
    if path.suffix == ".db":
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        convs = con.execute("SELECT count(*) FROM sessions").fetchone()[0]
        msgs = [(role, json.loads(c)) for role, c in con.execute("SELECT role, content_json FROM messages")]
        con.close()
    else:
        recs = list(json_lines(path))
        convs, msgs = 1, [(r["role"], r["content"]) for r in recs if "role" in r]
    blocks = [(role, b) for role, content in msgs for b in content]
    calls = [b["id"] for _, b in blocks if b["type"] == "toolRequest"]
    answers = {
        b["id"]: b["toolResult"].get("status") == "error" or (b["toolResult"].get("value") or {}).get("isError") is True
        for _, b in blocks
        if b["type"] == "toolResponse"
    }
    linked = [c for c in calls if c in answers]
    person = sum(role == "user" and any(b["type"] == "text" for b in content) for role, content in msgs)
    return Tally(convs, person, len(calls), len(linked), sum(answers[c] for c in linked), 0)


def pi_file(path: Path) -> Tally:
    """pi coding agent / OpenClaw session JSONL (the session format pi-mono documents in its session.md): one conversation; the leaf is the last
    entry, the main path its parentId chain (version 1 files have no ids: every entry is on it); the person's
    messages are message entries of role user on it; each toolCall block of an assistant message is a call,
    answered by the toolResult message of its toolCallId (failed when isError); tokens are each assistant
    message's usage input + output + cacheRead + cacheWrite."""
    # the header, and Oh My Pi's title line before it (no id, in no tree)
    recs = [r for r in json_lines(path) if r.get("type") not in ("session", "title")]
    if any("id" in r for r in recs):
        parent = {r["id"]: r.get("parentId") for r in recs}
        main, cur = set(), recs[-1]["id"]
        while cur and cur not in main:
            main.add(cur)
            cur = parent.get(cur)
        on_main = [r.get("id") in main for r in recs]
    else:
        on_main = [True] * len(recs)
    msgs = [(r["message"], m) for r, m in zip(recs, on_main) if r["type"] == "message"]
    person = sum(msg["role"] == "user" and m for msg, m in msgs)
    calls = [
        b["id"] for msg, _ in msgs if msg["role"] == "assistant" for b in msg["content"] if b["type"] == "toolCall"
    ]
    args = {
        b["id"]: (str(b.get("name") or ""), json.dumps(b.get("arguments") or {}))
        for msg, _ in msgs
        if msg["role"] == "assistant"
        for b in msg["content"]
        if b["type"] == "toolCall"
    }
    # failed when isError (the tool's own flag), but a search that matched nothing ("Command exited with code 1"
    # alone) is no failure
    results = {
        msg["toolCallId"]: msg.get("isError") is True
        and is_error(
            True,
            "\n".join(b.get("text") or "" for b in msg.get("content") or [] if isinstance(b, dict)),
            *args.get(msg["toolCallId"], ("", "")),
        )
        for msg, _ in msgs
        if msg["role"] == "toolResult"
    }
    linked = [c for c in calls if c in results]
    tokens = sum(
        sum((msg.get("usage") or {}).get(k, 0) for k in ("input", "output", "cacheRead", "cacheWrite"))
        for msg, _ in msgs
        if msg["role"] == "assistant"
    )
    return Tally(1, person, len(calls), len(linked), sum(results[c] for c in linked), tokens)


def crush_file(path: Path) -> Tally:
    """Crush's crush.db: a conversation per sessions row; the person's messages are messages of role user; each
    tool_call part of an assistant message is a call, answered by the next tool_result part of its id in the same
    session (Kimi K2 through OpenRouter numbers every call ``0``, so an id is not unique; failed when is_error, else
    by the content rules of ``is_error``, as the importer's shared toolkit decides); tokens are only session totals,
    so none per response."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    sessions = con.execute("SELECT count(*) FROM sessions").fetchone()[0]
    msgs = [
        (sid, role, json.loads(parts))
        for sid, role, parts in con.execute("SELECT session_id, role, parts FROM messages ORDER BY created_at, rowid")
    ]
    con.close()
    calls = 0
    pending: dict[tuple[str, str], list[tuple[str, str]]] = {}
    linked = errors = 0
    for sid, role, ps in msgs:
        for p in ps:
            d = p["data"]
            if role == "assistant" and p["type"] == "tool_call":
                calls += 1
                pending.setdefault((sid, d["id"]), []).append((d.get("name", ""), d.get("input", "")))
            elif p["type"] == "tool_result" and pending.get((sid, d["tool_call_id"])):
                name, args = pending[(sid, d["tool_call_id"])].pop(0)
                linked += 1
                errors += is_error(d.get("is_error") is True, d.get("content"), name, args)
    person = sum(role == "user" for _, role, _ in msgs)
    return Tally(sessions, person, calls, linked, errors, 0)


def letta_file(path: Path) -> Tally:
    """A Letta agent file (.af; Letta's AgentFileSchema, or the older one-agent AgentSchema; either possibly
    written as one JSON string): a conversation per agent; the person's messages are user messages whose text
    is Letta's {"type": "user_message"} envelope, or plain text that is not only <system-reminder> blocks (none
    of a sleep-time agent's: its manager's transcripts), and
    approval answers (an approval message with no tool_calls); each tool_calls entry of an assistant message (or
    an approval request) is a call, answered by the tool message of its tool_call_id (failed
    when a tool_returns entry has status error or the result envelope says status Failed); no tokens."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(doc, str):
        doc = json.loads(doc)
    agents = doc["agents"] if "agents" in doc else [doc]
    person, calls, results = 0, [], {}
    for agent in agents:
        sleeptime = str(agent.get("agent_type")).endswith("sleeptime_agent")  # its user messages: the manager's
        for m in agent["messages"]:
            texts = [p["text"] for p in m.get("content") or [] if p.get("type") == "text"]
            if m["role"] == "user":
                try:
                    env = json.loads(texts[0]) if len(texts) == 1 else None
                except json.JSONDecodeError:
                    env = None
                if sleeptime:
                    pass
                elif isinstance(env, dict) and "type" in env:
                    person += env["type"] == "user_message"
                else:
                    person += any(re.sub(r"(?s)<system-reminder>.*?</system-reminder>", "", t).strip() for t in texts)
            elif m["role"] == "approval" and not m.get("tool_calls"):
                person += 1  # the person's answer to an approval request
            elif m["role"] in ("assistant", "approval"):
                calls += [c["id"] for c in m.get("tool_calls") or []]
            elif m["role"] == "tool":
                try:
                    env = json.loads(texts[0]) if len(texts) == 1 else {}
                except json.JSONDecodeError:
                    env = {}
                failed = any(r.get("status") == "error" for r in m.get("tool_returns") or [])
                results[m["tool_call_id"]] = failed or (isinstance(env, dict) and env.get("status") == "Failed")
    linked = [c for c in calls if c in results]
    return Tally(len(agents), person, len(calls), len(linked), sum(results[c] for c in linked), 0)


def nanobot_file(path: Path) -> Tally:
    """A nanobot session JSONL (session/manager.py): one conversation; a metadata line, then chat messages; the
    person's messages are user messages that are not nanobot's own (a sub-agent's "[Subagent '...'" announcement,
    "[System: ...]"-prefixed ones) in a session that is not the heartbeat's or a cron job's; each tool_calls entry
    of an assistant message is a call, answered by the tool message of its tool_call_id, failed when its text opens with "Error" (the tool
    registry's failures) or holds the exec tool's "Exit code: N" line with N not 0; no tokens."""
    lines = list(json_lines(path))
    key = next((o.get("key") or "" for o in lines if o.get("_type") == "metadata"), "")
    scheduled = key == "heartbeat" or key.startswith("cron:")
    msgs = [o for o in lines if "role" in o]
    person = sum(
        m["role"] == "user"
        and not scheduled
        and not re.match(r"\s*(\[System: [^\]]*\]|\[Subagent ')", m["content"] if isinstance(m["content"], str) else "")
        for m in msgs
    )
    calls = [c["id"] for m in msgs if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = {
        m["tool_call_id"]: str(m.get("content")).startswith("Error")
        or bool(re.search(r"(?m)^Exit code: [1-9]\d*$", str(m.get("content"))))
        for m in msgs
        if m["role"] == "tool"
    }
    return Tally(1, person, len(calls), sum(c in answered for c in calls), sum(answered.get(c, 0) for c in calls), 0)


def moatless_file(path: Path) -> Tally:
    """A Moatless Tools trajectory.json (2024, moatless/trajectory.py): one conversation; the person's message
    is initial_message; each action of each transition is a call, answered when it has a response, failed when
    the response's trigger is retry or reject; tokens are each completion's usage prompt_tokens +
    completion_tokens."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    actions = [a for t in doc["transitions"] for a in t.get("actions") or []]
    answered = [a["response"] for a in actions if a.get("response") is not None]
    usage = [(a.get("completion") or {}).get("usage") or {} for a in actions]
    return Tally(
        1,
        int(isinstance(doc.get("initial_message"), str)),
        len(actions),
        len(answered),
        sum(r.get("trigger") in ("retry", "reject") for r in answered),
        sum(u.get("prompt_tokens", 0) + u.get("completion_tokens", 0) for u in usage),
    )


HERMES_OWN = (
    "[System: ",
    "[SYSTEM: ",
    "Review the conversation above and consider saving ",
    "You just executed tool calls but returned an empty response",
    "You've reached the maximum number of tool-calling iterations",
    "[CONTEXT COMPACTION",
    "[CONTEXT SUMMARY]:",
    "[Your active task list was preserved",
)


def hermes_file(path: Path) -> Tally:
    """A Hermes Agent session log (run_agent.py _save_session_log): one conversation; the person's messages are
    user messages that do not open with one of the texts Hermes sends as the user itself (its review prompts,
    nudges, [System: ...] notes, compaction summaries, the preserved task list), a skill the person invoked
    ([SYSTEM: The user has invoked the "..." skill) counting as theirs; each tool_calls entry of an assistant
    message is a call, answered by the tool message of its tool_call_id, failed when that message is a JSON
    object with an error; no tokens."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    msgs = doc["messages"]

    def person(text: str) -> bool:
        t = text.lstrip()
        return t.startswith('[SYSTEM: The user has invoked the "') or not t.startswith(HERMES_OWN)

    def failed(text: str) -> bool:
        try:
            v = json.loads(text)
        except ValueError:
            return False
        return isinstance(v, dict) and bool(v.get("error"))

    users = sum(m["role"] == "user" and person(m["content"] or "") for m in msgs)
    calls = [c["id"] for m in msgs if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    results = {m["tool_call_id"]: failed(m["content"] or "") for m in msgs if m["role"] == "tool"}
    linked = [c for c in calls if c in results]
    return Tally(1, users, len(calls), len(linked), sum(results[c] for c in linked), 0)
