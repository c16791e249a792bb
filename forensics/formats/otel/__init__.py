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

from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, text_of
from forensics.formats.otel.span_messages import Msg, first, messages, usage
from forensics.formats.otel.spans import Span, decode

MARKERS = (b'"gen_ai.', b"openinference.span.kind", b'"llm.', b'"ai.operationId"', b'"span_kind"', b".llm.")
SESSION_KEYS = (
    "gen_ai.conversation.id",
    "session.id",
    "gen_ai.session.id",
    "ai.telemetry.metadata.sessionId",
    "ai.telemetry.metadata.session_id",
    "ai.telemetry.metadata.conversationId",
)
MODEL_OPS = ("chat", "text_completion", "generate_content", "completion", "llm")
VERCEL_CALL = re.compile(r"^ai\.\w+\.do(?:Generate|Stream)$")
VERCEL_OUTER = re.compile(r"^ai\.(?:generate|stream)(?:Text|Object)$")


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
        sid = first(s.attrs, *SESSION_KEYS)
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
        log.notes.append(
            f"{len(spans)} spans, none a model call, a tool call or a top span with input/output "
            f"(operations: {', '.join(f'{k} x{n}' for k, n in kinds.most_common(5))})"
        )
    return out


def _group(
    log: Log, native: str, group: list[Span], by_id: dict[tuple[str, str], Span], kinds: Counter[str]
) -> list[Conversation]:
    threads: dict[tuple[str, str], Thread] = {}
    agents_with_messages: list[Span] = []
    for s in group:
        kind = _kind(s)
        if kind in ("model", "tool"):
            key = _agent_key(s, by_id, inclusive=False)
            t = threads.setdefault(key, Thread(key))
            (t.model if kind == "model" else t.tools).append(s)
            log.skip(f"{kind} span (-> messages)")
        elif kind == "agent" and any(messages(s)):
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
        inputs = [m for m in messages(t.model[0])[0] if m.role != "system"]
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
    if (
        op == "execute_tool"
        or s.attrs.get("openinference.span.kind") in ("TOOL", "tool")
        or s.name.startswith("execute_tool")
        or s.attrs.get("ai.operationId") == "ai.toolCall"
    ):
        return "tool"
    if _is_agent(s):
        return "agent"
    if VERCEL_OUTER.match(str(s.attrs.get("ai.operationId") or "")):
        return "other"
    if (
        op in MODEL_OPS
        or str(s.attrs.get("openinference.span.kind")).upper() == "LLM"
        or VERCEL_CALL.match(str(s.attrs.get("ai.operationId") or ""))
        or any(messages(s))
    ):
        return "model"
    return "other"


def _op(s: Span) -> str:
    return str(first(s.attrs, "gen_ai.operation.name") or "").lower()


def _is_agent(s: Span) -> bool:
    a = s.attrs
    return (
        _op(s) in ("invoke_agent", "create_agent")
        or str(a.get("openinference.span.kind")).upper() == "AGENT"
        or "agent" in (a.get("traceloop.span.kind"), a.get("ioa_observe.span.kind"))
        or s.name.startswith("invoke_agent")
    )


def _agent_key(s: Span, by_id: dict[tuple[str, str], Span], inclusive: bool) -> tuple[str, str]:
    cur: Span | None = s if inclusive else _up(s, by_id)
    seen = 0
    while cur is not None and seen < 1000:
        if _is_agent(cur):
            return (cur.service, str(first(cur.attrs, "gen_ai.agent.name", "gen_ai.agent.id") or cur.name))
        cur, seen = _up(cur, by_id), seen + 1
    return (s.service, "")


def _up(s: Span, by_id: dict[tuple[str, str], Span]) -> Span | None:
    return by_id.get((s.trace, s.parent)) if s.parent else None


def _parent_thread(
    t: Thread, threads: dict[tuple[str, str], Thread], by_id: dict[tuple[str, str], Span]
) -> tuple[str, str] | None:
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
        inputs, outputs = messages(s)
        if (
            not inputs
            and not outputs
            and "input.value" in s.attrs
            and not VERCEL_CALL.match(str(s.attrs.get("ai.operationId") or ""))
        ):
            inputs = [Msg("user", text_of(s.attrs.get("input.value")))]
            outputs = [Msg("assistant", text_of(s.attrs.get("output.value")))] if "output.value" in s.attrs else []
        _merge(conv, inputs)
        if not outputs:
            outputs = [Msg("assistant")]  # a call recorded without its content
        outputs[0].usage.append(usage(s))
        for m in outputs:
            m.at = s.start
        conv.extend(outputs)
        anchors.append(outputs[-1] if outputs[-1].role == "assistant" else outputs[0])
        model = model or first(
            s.attrs, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.model.id"
        )
        provider = provider or first(
            s.attrs, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system", "ai.model.provider"
        )
    _tool_results(conv, anchors, t.tools)
    turns = [
        Turn(
            m.role,
            m.text,
            calls=m.calls,
            answers=m.answers,
            is_error=m.error,
            usage=m.usage,
            at=m.at,
            origin="harness" if sub and m.role == "user" else None,
        )
        for m in conv
    ]
    spans = t.model or t.tools
    return Conversation(native, turns, model=model, provider=provider, created=spans[0].start, updated=spans[-1].start)


def _merge(conv: list[Msg], inputs: list[Msg]) -> None:
    """Add what this call's input has beyond the conversation so far (its history repeats it)."""
    n = len(conv)
    if [m.key() for m in inputs[:n]] == [m.key() for m in conv]:
        conv.extend(inputs[n:])
        return
    last = max((i for i, m in enumerate(inputs) if m.role == "assistant"), default=-1)
    known = {m.answers for m in conv if m.role == "tool"}
    conv.extend(
        m
        for m in inputs[last + 1 :]
        if not (m.role == "tool" and m.answers in known)
        and not (m.role == "system" and any(c.role == "system" for c in conv))
    )


def _tool_results(conv: list[Msg], anchors: list[Msg], tool_spans: list[Span]) -> None:
    """A tool span answers its call when no tool message did (frameworks that record only the tool span), and
    flags the message that did when it failed; a call no message holds belongs to the model call before it."""
    answered = {m.answers: m for m in conv if m.role == "tool"}
    claimed: set[str] = set()
    for s in tool_spans:
        a = s.attrs
        cid = first(a, "gen_ai.tool.call.id", "tool_call.id", "tool.call.id", "tool.id", "ai.toolCall.id")
        if cid is None:  # no id: the first call of that tool no span has claimed yet
            name = first(a, "gen_ai.tool.name", "tool.name", "ai.toolCall.name")
            cid = (
                next(
                    (
                        c.id
                        for m in conv
                        for c in m.calls
                        if c.name == name and c.id not in claimed and c.id is not None
                    ),
                    None,
                )
                if name is not None
                else None
            )
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
            owner.calls.append(
                ToolCall(
                    first(a, "gen_ai.tool.name", "tool.name", "ai.toolCall.name") or s.name,
                    first(a, "gen_ai.tool.call.arguments", "input.value", "ai.toolCall.args", "ai.toolCall.input"),
                    cid,
                )
            )
            at = conv.index(owner)
        result = first(a, "gen_ai.tool.call.result", "output.value", "ai.toolCall.result", "ai.toolCall.output")
        msg = Msg("tool", text_of(result) if result is not None else s.status, answers=cid, error=s.error, at=s.start)
        j = at + 1
        while j < len(conv) and conv[j].role == "tool":
            j += 1
        conv.insert(j, msg)
        answered[cid] = msg


def _sniff(probe: Probe) -> bool:
    if probe.is_sqlite or probe.is_zip:
        return False
    head = probe.head
    if b'"resourceSpans"' in head[:4096]:
        return True
    jaeger = b'"traceID"' in head and b'"spanID"' in head and b'"operationName"' in head
    spanlike = (
        (b'span_id"' in head and b'trace_id"' in head)
        or (b'"spanContext"' in head and b'"traceId"' in head)
        or (b'"traceId"' in head and b'"localEndpoint"' in head)
    )  # Zipkin
    return (jaeger or spanlike) and any(m in head for m in MARKERS) or jaeger and b'"spans"' in head[:4096]


FORMAT = Format(
    "otel",
    "OpenTelemetry GenAI spans (OTLP JSON, SDK/console dumps, Jaeger exports) and OpenInference/Phoenix span exports",
    _sniff,
    read=read,
)
