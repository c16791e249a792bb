"""OpenTelemetry GenAI spans and OpenInference (Arize Phoenix) span exports, whatever encoding saved them
(``otel_spans``: OTLP JSON, SDK and console dumps, Jaeger exports, JS spans, Phoenix rows).

**Conversations.** Spans are grouped by session (``gen_ai.conversation.id``, ``session.id``, Vercel's
``ai.telemetry.metadata.sessionId``), else by trace, and ordered by start time. Within a group, each agent is
a conversation of its own: a model call belongs to the nearest agent span above it (``invoke_agent``,
OpenInference ``AGENT``, Traceloop/AGNTCY ``agent`` kinds; matched by agent name and service, so the turns of
one agent in several traces of a session join up). An agent whose span sits below another agent's spans (a
tool that runs a sub-agent, an agent service another one calls) is that agent's sub-agent: its conversation
names the caller as parent and its user turns are the caller's words (origin ``harness``), not a person's.
A top-level agent whose first call opens with an earlier agent's first request was handed the history (a
handoff) and continues that agent's conversation.

**Messages**, from the model-call spans, whichever convention wrote them: ``gen_ai.input.messages`` /
``gen_ai.output.messages`` / ``gen_ai.system_instructions`` (semantic conventions 1.37+, typed parts; as span
attributes or on a ``gen_ai.client.inference.operation.details`` event),
the ``gen_ai.*.message`` and ``gen_ai.choice`` events (1.28-1.36; Pydantic AI keeps them as one ``events``
JSON attribute), the ``gen_ai.content.prompt`` /
``gen_ai.content.completion`` events (``gen_ai.prompt``/``gen_ai.completion`` JSON, before 1.28),
OpenLLMetry's ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``, OpenInference's
``llm.input_messages.N.message.*`` / ``llm.output_messages.N.message.*`` (else the request and response JSON
in ``input.value``/``output.value``), and the Vercel AI SDK's ``ai.prompt.messages`` / ``ai.response.text`` /
``ai.response.toolCalls`` on its ``doGenerate``/``doStream`` spans (the enclosing ``ai.generateText`` span
repeats them and is skipped). Every call repeats the history so far: the conversation is the first call's
input, then what each later call adds, then its output, whose usage (``gen_ai.usage.*``,
``llm.token_count.*``, ``ai.usage.*``) is that response's. A model call recorded without its content
(capture off, the default of most instrumentations) is an assistant message with no text and its usage.

**Tool spans** (``execute_tool``, OpenInference ``TOOL``, Vercel ``ai.toolCall``) answer the call they name
(``gen_ai.tool.call.id``, ``tool_call.id``, ``tool.id``, ``ai.toolCall.id``) when no message carried the result,
and mark it failed when the span's status is an error; a tool span whose call no message holds is a call
of the model response before it. A session whose spans carry no model messages at all is read from its
top spans' ``input.value``/``output.value`` (OpenInference chains and agents). Other spans are skipped and
counted.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.importers import values
from forensics.importers.model import Conversation, Log, ToolCall, Turn, Usage, listed, mapping, text_of
from forensics.importers.otel_spans import Span, decode
from forensics.importers.registry import Format, Probe

INDEX = re.compile(r"^(\d+)\.(.+)$")
MARKERS = (b'"gen_ai.', b"openinference.span.kind", b'"llm.', b'"ai.operationId"', b'"span_kind"', b".llm.")
SESSION_KEYS = ("gen_ai.conversation.id", "session.id", "gen_ai.session.id", "ai.telemetry.metadata.sessionId",
                "ai.telemetry.metadata.session_id", "ai.telemetry.metadata.conversationId")
MODEL_OPS = ("chat", "text_completion", "generate_content", "completion", "llm")
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
VERCEL_CALL = re.compile(r"^ai\.\w+\.do(?:Generate|Stream)$")
VERCEL_OUTER = re.compile(r"^ai\.(?:generate|stream)(?:Text|Object)$")


@dataclass
class Msg:
    role: str
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    answers: str | None = None
    error: bool | None = None
    usage: list[Usage] = field(default_factory=list)
    at: float | None = None

    def key(self) -> tuple[Any, ...]:
        return (self.role, self.answers) if self.role == "tool" else (self.role, self.text.strip())


@dataclass
class Thread:
    key: tuple[str, str]  # (service, agent name)
    model: list[Span] = field(default_factory=list)
    tools: list[Span] = field(default_factory=list)
    parent: tuple[str, str] | None = None


def read(path: str, log: Log) -> list[Conversation]:
    spans = decode(Path(path).read_bytes(), log)
    by_id = {(s.trace, s.span): s for s in spans}
    session_of: dict[str, str] = {}
    for s in spans:
        sid = _first(s.attrs, *SESSION_KEYS)
        if sid is not None:
            session_of.setdefault(s.trace, str(sid))
    groups: dict[str, list[Span]] = defaultdict(list)
    for s in spans:
        groups[session_of.get(s.trace, s.trace)].append(s)
    out: list[Conversation] = []
    kinds: Counter[str] = Counter()
    for native, group in groups.items():
        group.sort(key=_when)
        out.extend(_group(log, native, group, by_id, kinds))
    if spans and not out:
        log.notes.append(f"{len(spans)} spans, none a model call, a tool call or a top span with input/output "
                         f"(operations: {', '.join(f'{k} x{n}' for k, n in kinds.most_common(5))})")
    return out


def _group(log: Log, native: str, group: list[Span], by_id: dict[tuple[str, str], Span],
           kinds: Counter[str]) -> list[Conversation]:
    threads: dict[tuple[str, str], Thread] = {}
    agents_with_messages: list[Span] = []
    for s in group:
        kind = _kind(s)
        if kind in ("model", "tool"):
            key = _agent_key(s, by_id, inclusive=False)
            t = threads.setdefault(key, Thread(key))
            (t.model if kind == "model" else t.tools).append(s)
            log.skip(f"{kind} span (-> messages)")
        elif kind == "agent" and any(_messages(s)):
            agents_with_messages.append(s)
            log.skip("agent span (-> messages when no model span)")
        else:
            kinds[_op(s) or s.name[:40]] += 1
            log.skip(f"span without messages ({_op(s) or s.attrs.get('openinference.span.kind') or 'no kind'})")
    stand_ins: dict[tuple[str, str], list[Span]] = defaultdict(list)
    for s in agents_with_messages:  # an agent span's own messages stand in for model calls nobody recorded
        stand_ins[_agent_key(s, by_id, inclusive=True)].append(s)
    for key, agent_spans in stand_ins.items():
        t = threads.setdefault(key, Thread(key))
        if not t.model:
            t.model.extend(agent_spans)
    for t in threads.values():
        t.parent = _parent_thread(t, threads, by_id)
    _handoffs(threads)
    if not any(t.model for t in threads.values()):
        fallback = _io_fallback(group, by_id)
        if fallback:
            threads = {("", ""): Thread(("", ""), fallback, [s for t in threads.values() for s in t.tools])}
    names = _natives(native, threads)
    out = []
    for key, t in threads.items():
        if not t.model and not t.tools:
            continue
        conv = _conversation(names[key], t, sub=t.parent is not None)
        if conv.turns:
            conv.parent = names.get(t.parent) if t.parent else None
            out.append(conv)
    return out


def _handoffs(threads: dict[tuple[str, str], Thread]) -> None:
    """A top-level agent whose first call opens with an earlier agent's first request continues that agent's
    conversation (a handoff passes the history on): its calls join the earlier agent's."""
    opened: dict[tuple[Any, ...], tuple[str, str]] = {}
    for key, t in sorted(threads.items(), key=lambda kv: _when((kv[1].model or kv[1].tools)[0])):
        if t.parent is not None or not t.model:
            continue
        inputs = [m for m in _messages(t.model[0])[0] if m.role != "system"]
        if not inputs:
            continue
        owner = opened.setdefault(inputs[0].key(), key)
        if owner != key:
            threads[owner].model = sorted(threads[owner].model + t.model, key=_when)
            threads[owner].tools = sorted(threads[owner].tools + t.tools, key=_when)
            del threads[key]
            for other in threads.values():
                other.parent = owner if other.parent == key else other.parent


def _when(s: Span) -> float:
    return s.start if s.start is not None else float("inf")


def _natives(group: str, threads: dict[tuple[str, str], Thread]) -> dict[tuple[str, str], str]:
    """The first top-level agent is the session itself; the others are named after their agent."""
    out: dict[tuple[str, str], str] = {}
    for key, t in threads.items():
        if t.parent is None and group not in out.values():
            out[key] = group
        else:
            out[key] = f"{group} / {key[1] or key[0] or 'agent'}" + (f" @{key[0]}" if key[1] and key[0] else "")
    return out


def _kind(s: Span) -> str:
    op = _op(s)
    if op == "execute_tool" or s.attrs.get("openinference.span.kind") in ("TOOL", "tool") \
            or s.name.startswith("execute_tool") or s.attrs.get("ai.operationId") == "ai.toolCall":
        return "tool"
    if _is_agent(s):
        return "agent"
    if VERCEL_OUTER.match(str(s.attrs.get("ai.operationId") or "")):
        return "other"
    if op in MODEL_OPS or str(s.attrs.get("openinference.span.kind")).upper() == "LLM" \
            or VERCEL_CALL.match(str(s.attrs.get("ai.operationId") or "")) or any(_messages(s)):
        return "model"
    return "other"


def _op(s: Span) -> str:
    return str(_first(s.attrs, "gen_ai.operation.name") or "").lower()


def _is_agent(s: Span) -> bool:
    a = s.attrs
    return _op(s) in ("invoke_agent", "create_agent") or str(a.get("openinference.span.kind")).upper() == "AGENT" \
        or "agent" in (a.get("traceloop.span.kind"), a.get("ioa_observe.span.kind")) or s.name.startswith("invoke_agent")


def _agent_key(s: Span, by_id: dict[tuple[str, str], Span], inclusive: bool) -> tuple[str, str]:
    cur: Span | None = s if inclusive else _up(s, by_id)
    seen = 0
    while cur is not None and seen < 1000:
        if _is_agent(cur):
            return (cur.service, str(_first(cur.attrs, "gen_ai.agent.name", "gen_ai.agent.id") or cur.name))
        cur, seen = _up(cur, by_id), seen + 1
    return (s.service, "")


def _up(s: Span, by_id: dict[tuple[str, str], Span]) -> Span | None:
    return by_id.get((s.trace, s.parent)) if s.parent else None


def _parent_thread(t: Thread, threads: dict[tuple[str, str], Thread],
                   by_id: dict[tuple[str, str], Span]) -> tuple[str, str] | None:
    """The agent whose spans this one's first call sits under (a caller with model calls of its own)."""
    first = (t.model or t.tools)[0]
    cur = _up(first, by_id)
    seen = 0
    while cur is not None and seen < 1000:
        key = _agent_key(cur, by_id, inclusive=True)
        if key != t.key and key in threads and threads[key].model:
            return key
        cur, seen = _up(cur, by_id), seen + 1
    return None


def _io_fallback(group: list[Span], by_id: dict[tuple[str, str], Span]) -> list[Span]:
    """Top spans (no parent among the spans) that carry ``input.value``/``output.value``."""
    return [s for s in group if _up(s, by_id) is None and ("input.value" in s.attrs or "output.value" in s.attrs)]


def _conversation(native: str, t: Thread, sub: bool) -> Conversation:
    conv: list[Msg] = []
    anchors: list[Msg] = []  # the assistant message of each model call, in time order
    model = provider = None
    for s in t.model:
        inputs, outputs = _messages(s)
        if not inputs and not outputs and "input.value" in s.attrs and not VERCEL_CALL.match(
                str(s.attrs.get("ai.operationId") or "")):
            inputs = [Msg("user", text_of(s.attrs.get("input.value")))]
            outputs = [Msg("assistant", text_of(s.attrs.get("output.value")))] if "output.value" in s.attrs else []
        _merge(conv, inputs)
        if not outputs:
            outputs = [Msg("assistant")]  # a call recorded without its content
        outputs[0].usage.append(_usage(s))
        for m in outputs:
            m.at = s.start
        conv.extend(outputs)
        anchors.append(outputs[-1] if outputs[-1].role == "assistant" else outputs[0])
        model = model or _first(s.attrs, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name",
                                "ai.model.id")
        provider = provider or _first(s.attrs, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system",
                                      "ai.model.provider")
    _tool_results(conv, anchors, t.tools)
    turns = [Turn(m.role, m.text, calls=m.calls, answers=m.answers, is_error=m.error, usage=m.usage, at=m.at,
                  origin="harness" if sub and m.role == "user" else None) for m in conv]
    spans = t.model or t.tools
    return Conversation(native, turns, model=model, provider=provider, created=spans[0].start,
                        updated=spans[-1].start)


def _merge(conv: list[Msg], inputs: list[Msg]) -> None:
    """Add what this call's input has beyond the conversation so far (its history repeats it)."""
    n = len(conv)
    if [m.key() for m in inputs[:n]] == [m.key() for m in conv]:
        conv.extend(inputs[n:])
        return
    last = max((i for i, m in enumerate(inputs) if m.role == "assistant"), default=-1)
    known = {m.answers for m in conv if m.role == "tool"}
    conv.extend(m for m in inputs[last + 1:] if not (m.role == "tool" and m.answers in known)
                and not (m.role == "system" and any(c.role == "system" for c in conv)))


def _tool_results(conv: list[Msg], anchors: list[Msg], tool_spans: list[Span]) -> None:
    """A tool span answers its call when no tool message did (frameworks that record only the tool span), and
    flags the message that did when it failed; a call no message holds belongs to the model call before it."""
    answered = {m.answers: m for m in conv if m.role == "tool"}
    claimed: set[str] = set()
    for s in tool_spans:
        a = s.attrs
        cid = _first(a, "gen_ai.tool.call.id", "tool_call.id", "tool.call.id", "tool.id", "ai.toolCall.id")
        if cid is None:  # no id: the first call of that tool no span has claimed yet
            name = _first(a, "gen_ai.tool.name", "tool.name", "ai.toolCall.name")
            cid = next((c.id for m in conv for c in m.calls if c.name == name and c.id not in claimed
                        and c.id is not None), None) if name is not None else None
        cid = str(cid) if cid is not None else f"span-{s.span}"
        claimed.add(cid)
        if cid in answered:  # the message has the text, the span whether it failed
            answered[cid].error = answered[cid].error or s.error or None
            continue
        at = next((i for i, m in enumerate(conv) if any(c.id == cid for c in m.calls)), None)
        if at is None:
            owner = next((m for m in reversed(anchors) if m.at is None or s.start is None or m.at <= s.start), None)
            if owner is None:
                owner = Msg("assistant", at=s.start)
                conv.append(owner)
                anchors.append(owner)
            owner.calls.append(ToolCall(_first(a, "gen_ai.tool.name", "tool.name", "ai.toolCall.name") or s.name,
                                        _first(a, "gen_ai.tool.call.arguments", "input.value",
                                               "ai.toolCall.args", "ai.toolCall.input"), cid))
            at = conv.index(owner)
        result = _first(a, "gen_ai.tool.call.result", "output.value", "ai.toolCall.result", "ai.toolCall.output")
        msg = Msg("tool", text_of(result) if result is not None else s.status, answers=cid, error=s.error, at=s.start)
        j = at + 1
        while j < len(conv) and conv[j].role == "tool":
            j += 1
        conv.insert(j, msg)
        answered[cid] = msg


def _messages(s: Span) -> tuple[list[Msg], list[Msg]]:
    a = s.attrs
    details = next((e.get("attrs") or {} for e in s.events if e.get("name") == DETAILS_EVENT), None)
    if details is not None and "gen_ai.input.messages" not in a and "gen_ai.output.messages" not in a:
        a = {**a, **details}  # 1.37+: the messages recorded as an event instead of span attributes
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        system = _json(a.get("gen_ai.system_instructions"))
        inputs = [Msg("system", text_of([{"text": p.get("content")} for p in system if isinstance(p, dict)]))] \
            if isinstance(system, list) and system else []
        return inputs + _parts_messages(_json(a.get("gen_ai.input.messages"))), \
            _parts_messages(_json(a.get("gen_ai.output.messages")))
    if any(k.startswith("llm.input_messages.") or k.startswith("llm.output_messages.") for k in a):
        return _indexed_messages(a, "llm.input_messages", "message."), _indexed_messages(a, "llm.output_messages",
                                                                                         "message.")
    if any(k.startswith("gen_ai.prompt.") or k.startswith("gen_ai.completion.") for k in a):
        return _indexed_messages(a, "gen_ai.prompt", ""), _indexed_messages(a, "gen_ai.completion", "")
    if "ai.prompt.messages" in a:
        return _vercel_messages(_json(a["ai.prompt.messages"])), _vercel_output(a)
    if isinstance(_json(a.get("gen_ai.prompt")), list) or isinstance(_json(a.get("gen_ai.completion")), list):
        return _plain_messages(_json(a.get("gen_ai.prompt"))), _plain_messages(_json(a.get("gen_ai.completion")))
    inputs, outputs = _event_messages(s)
    if inputs or outputs or str(a.get("openinference.span.kind")).upper() != "LLM":
        return inputs, outputs
    return _request_messages(a)


def _parts_messages(msgs: Any) -> list[Msg]:
    out: list[Msg] = []
    for m in listed(msgs):
        if not isinstance(m, dict):
            continue
        parts = [p for p in listed(m.get("parts")) if isinstance(p, dict)]
        texts = [text_of(p.get("content")) for p in parts if p.get("type") == "text"]
        calls = [ToolCall(p.get("name"), p.get("arguments"), p.get("id")) for p in parts if p.get("type") == "tool_call"]
        responses = [p for p in parts if p.get("type") == "tool_call_response"]
        if responses:
            out.extend(Msg("tool", text_of(p.get("response")), answers=_str(p.get("id"))) for p in responses)
        else:
            out.append(Msg(str(m.get("role")), "\n".join(texts), calls))
    return out


def _indexed_messages(a: dict[str, Any], prefix: str, inner: str) -> list[Msg]:
    """``prefix.N.<inner>role`` style attributes (OpenInference, OpenLLMetry) as messages in order."""
    rows: dict[int, dict[str, Any]] = defaultdict(dict)
    for k, v in a.items():
        if k.startswith(prefix + "."):
            m = INDEX.match(k[len(prefix) + 1:])
            if m:
                rows[int(m.group(1))][m.group(2)[len(inner):] if m.group(2).startswith(inner) else m.group(2)] = v
    out = []
    for _, r in sorted(rows.items()):
        text = r.get("content")
        if text is None:
            text = "\n".join(str(v) for k, v in sorted(r.items()) if k.startswith("contents.") and k.endswith(".text"))
        out.append(Msg(str(r.get("role")), text_of(text), _indexed_calls(r), _str(r.get("tool_call_id"))))
    return out


def _indexed_calls(r: dict[str, Any]) -> list[ToolCall]:
    calls: dict[int, dict[str, Any]] = defaultdict(dict)
    for k, v in r.items():
        m = INDEX.match(k[len("tool_calls."):]) if k.startswith("tool_calls.") else None
        if m:
            calls[int(m.group(1))][m.group(2).replace("tool_call.", "").replace("function.", "")] = v
    return [ToolCall(c.get("name"), c.get("arguments"), c.get("id")) for _, c in sorted(calls.items())]


def _vercel_messages(msgs: Any) -> list[Msg]:
    """The AI SDK's model messages: content a string or parts (text, tool-call, tool-result, reasoning...)."""
    out: list[Msg] = []
    for m in listed(msgs):
        if not isinstance(m, dict):
            continue
        role, content = str(m.get("role")), m.get("content")
        parts = [p for p in listed(content) if isinstance(p, dict)]
        results = [p for p in parts if p.get("type") == "tool-result"]
        if results:
            out.extend(Msg("tool", text_of(_result_value(p.get("output", p.get("result")))),
                           answers=_str(p.get("toolCallId")),
                           error=True if mapping(p.get("output")).get("type") in ("error-text", "error-json") else None)
                       for p in results)
            continue
        calls = [ToolCall(p.get("toolName"), p.get("input", p.get("args")), p.get("toolCallId")) for p in parts
                 if p.get("type") == "tool-call"]
        out.append(Msg(role, content if isinstance(content, str) else text_of(parts), calls))
    return out


def _result_value(v: Any) -> Any:
    """AI SDK 5+ wraps a tool output as ``{"type": "text"|"json"|..., "value"}``."""
    return v.get("value") if isinstance(v, dict) and "type" in v and "value" in v else v


def _vercel_output(a: dict[str, Any]) -> list[Msg]:
    text = a.get("ai.response.text")
    if text is None:
        text = a.get("ai.response.object")
    calls = [ToolCall(c.get("toolName"), c.get("input", c.get("args")), c.get("toolCallId"))
             for c in listed(_json(a.get("ai.response.toolCalls"))) if isinstance(c, dict)]
    return [Msg("assistant", text_of(text), calls)] if text is not None or calls else []


def _plain_messages(msgs: Any) -> list[Msg]:
    """OpenAI-style messages (``role``, ``content``, ``tool_calls``, ``tool_call_id``) or Anthropic-style blocks."""
    out: list[Msg] = []
    for m in listed(msgs):
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        blocks = [b for b in listed(content) if isinstance(b, dict)]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results:
            out.extend(Msg("tool", text_of(b.get("content"), None), answers=_str(b.get("tool_use_id")),
                           error=b.get("is_error") is True or None) for b in results)
            continue
        calls = _plain_calls(m.get("tool_calls")) + [ToolCall(b.get("name"), b.get("input"), b.get("id"))
                                                     for b in blocks if b.get("type") == "tool_use"]
        out.append(Msg(str(m.get("role") or "assistant"), text_of(content), calls, _str(m.get("tool_call_id"))))
    return out


def _request_messages(a: dict[str, Any]) -> tuple[list[Msg], list[Msg]]:
    """An OpenInference LLM span without message attributes: the request and response it logged as
    ``input.value``/``output.value`` (JSON with ``messages``/``choices``, or plain text)."""
    req, resp = _json(a.get("input.value")), _json(a.get("output.value"))
    inputs = _plain_messages(req.get("messages")) if isinstance(req, dict) else []
    if isinstance(req, dict) and isinstance(req.get("system"), str):
        inputs.insert(0, Msg("system", req["system"]))
    if isinstance(resp, dict):
        choices = [c for c in listed(resp.get("choices")) if isinstance(c, dict)]
        outputs = _plain_messages([mapping(choices[0].get("message"))] if choices else [resp] if "content" in resp
                                  else [])
    else:
        outputs = []
    return inputs, outputs


def _event_messages(s: Span) -> tuple[list[Msg], list[Msg]]:
    """Semantic conventions 1.28-1.36: one span event per message (or, as Pydantic AI writes them, the same
    events as one ``events`` JSON attribute); before them, the prompt and completion as JSON in the
    ``gen_ai.content.prompt``/``gen_ai.content.completion`` events."""
    inputs, outputs = [], []
    listed_events = [{"name": e.get("event.name"), "attrs": e} for e in listed(_json(s.attrs.get("events")))
                     if isinstance(e, dict)]  # Pydantic AI / Logfire keep the events as one JSON attribute
    for e in s.events + listed_events:
        name, a = str(e.get("name")), e.get("attrs") or {}
        if name == "gen_ai.choice":
            m = mapping(_json(a.get("message")))
            outputs.append(Msg("assistant", text_of(m.get("content")), _plain_calls(m.get("tool_calls"))))
        elif name == "gen_ai.content.prompt":
            inputs.extend(_plain_messages(_json(a.get("gen_ai.prompt"))))
        elif name == "gen_ai.content.completion":
            outputs.extend(_plain_messages(_json(a.get("gen_ai.completion"))))
        elif name.startswith("gen_ai.") and name.endswith(".message"):
            role = name[len("gen_ai."):-len(".message")]
            inputs.append(Msg(role, text_of(_json(a.get("content"))), _plain_calls(a.get("tool_calls")),
                              _str(a.get("id")) if role == "tool" else None))
    return inputs, outputs


def _plain_calls(v: Any) -> list[ToolCall]:
    """OpenAI-style calls: ``{"id", "function": {"name", "arguments"}}`` or flat."""
    out = []
    for c in listed(_json(v)):
        if isinstance(c, dict):
            f = mapping(c.get("function")) or c
            out.append(ToolCall(f.get("name"), f.get("arguments"), c.get("id")))
    return out


def _usage(s: Span) -> Usage:
    a = s.attrs
    inp = values.count(_first(a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt",
                              "ai.usage.inputTokens", "ai.usage.promptTokens"))
    cached = values.count(_first(a, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                                 "llm.token_count.prompt_details.cache_read", "ai.usage.cachedInputTokens"))
    return Usage(input_tokens=inp - cached if inp is not None and cached is not None and inp >= cached else inp,
                 output_tokens=_first(a, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                                      "llm.token_count.completion", "ai.usage.outputTokens", "ai.usage.completionTokens"),
                 cache_read_input_tokens=cached,
                 cache_creation_input_tokens=_first(a, "gen_ai.usage.cache_creation.input_tokens",
                                                    "llm.token_count.prompt_details.cache_write"),
                 message_id=_first(a, "gen_ai.response.id", "ai.response.id"),
                 model=_first(a, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.response.model",
                              "ai.model.id"))


def _first(a: dict[str, Any], *keys: str) -> Any:
    return next((a[k] for k in keys if a.get(k) not in (None, "")), None)


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def _json(v: Any) -> Any:
    if isinstance(v, str) and v[:1] in ("[", "{", '"'):
        try:
            return values.loads(v)
        except ValueError:
            return v
    return v


def _sniff(probe: Probe) -> bool:
    if probe.is_sqlite or probe.is_zip:
        return False
    head = probe.head
    if b'"resourceSpans"' in head[:4096]:
        return True
    jaeger = b'"traceID"' in head and b'"spanID"' in head and b'"operationName"' in head
    spanlike = (b'span_id"' in head and b'trace_id"' in head) or (b'"spanContext"' in head and b'"traceId"' in head) \
        or (b'"traceId"' in head and b'"localEndpoint"' in head)  # Zipkin
    return (jaeger or spanlike) and any(m in head for m in MARKERS) or jaeger and b'"spans"' in head[:4096]


FORMAT = Format("otel", "OpenTelemetry GenAI spans (OTLP JSON, SDK/console dumps, Jaeger exports) and "
                "OpenInference/Phoenix span exports", _sniff, read=read)
