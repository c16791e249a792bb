"""OpenTelemetry GenAI spans and OpenInference (Arize Phoenix) span exports.

Spans arrive as OTLP JSON (``{"resourceSpans": [...]}``, a document or one per line as the collector's file
exporter writes them), as SDK span dumps (``span.to_json()``: the console exporter's concatenated objects,
JSONL or a JSON list) or as Phoenix's spans table (rows with ``context.span_id`` and ``attributes.*``).
They are grouped into conversations by session (``gen_ai.conversation.id``, ``session.id``), else by trace.

Messages come from the model-call spans, whichever convention wrote them: ``gen_ai.input.messages`` /
``gen_ai.output.messages`` (semantic conventions 1.37+, messages of typed parts), the ``gen_ai.*.message``
and ``gen_ai.choice`` events (1.36 and before), OpenLLMetry's ``gen_ai.prompt.N.*`` /
``gen_ai.completion.N.*``, or OpenInference's ``llm.input_messages.N.message.*`` /
``llm.output_messages.N.message.*``. Every call repeats the history so far: the conversation is the first
call's input, then what each later call adds, then its output, whose usage (``gen_ai.usage.*``,
``llm.token_count.*``) is that response's. Tool spans (``execute_tool``, OpenInference ``TOOL``) are the
results of the calls they name when no message carries them. Other spans are skipped and counted.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.importers import values
from forensics.importers.model import Conversation, Log, ToolCall, Turn, Usage, listed, mapping, text_of
from forensics.importers.registry import Format, Probe

INDEX = re.compile(r"^(\d+)\.(.+)$")
MARKERS = (b'"gen_ai.', b"openinference.span.kind", b'"llm.', b"gen_ai.", b'"resourceSpans"')


@dataclass
class Span:
    trace: str
    span: str
    name: str
    start: Any
    error: bool
    status: str
    attrs: dict[str, Any]
    events: list[dict] = field(default_factory=list)


@dataclass
class Msg:
    role: str
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    answers: str | None = None
    error: bool | None = None

    def key(self) -> tuple:
        return (self.role, self.answers) if self.role == "tool" else (self.role, self.text.strip())


def read(path: str, log: Log) -> list[Conversation]:
    spans = [s for rec in _records(Path(path).read_bytes(), log) for s in _spans(rec, log)]
    groups: dict[str, list[Span]] = defaultdict(list)
    session_of: dict[str, str] = {}
    for s in spans:
        sid = _first(s.attrs, "gen_ai.conversation.id", "session.id", "gen_ai.session.id")
        if sid is not None:
            session_of.setdefault(s.trace, str(sid))
    for s in spans:
        groups[session_of.get(s.trace, s.trace)].append(s)
    out = []
    for native, group in groups.items():
        conv = _conversation(log, native, sorted(group, key=lambda s: (values.epoch(s.start) or 0)))
        if conv.turns:
            out.append(conv)
    if spans and not out:
        log.notes.append("no span carries GenAI messages")
    return out


def _records(data: bytes, log: Log) -> list[dict]:
    """Top-level JSON objects: a document (object or list), JSONL, or concatenated pretty-printed objects."""
    text = data.decode("utf-8", "replace")
    dec, i, out = json.JSONDecoder(), 0, []
    while i < len(text):
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text):
            break
        try:
            obj, end = dec.raw_decode(text, i)
        except (ValueError, RecursionError) as e:
            rest = text[i:].split("\n", 1)
            log.rows += 1
            log.quarantine(f"{log.name}@{i}", f"invalid JSON: {str(e)[:100]}", rest[0])
            i += len(rest[0]) + 1
            continue
        i = end
        for rec in obj if isinstance(obj, list) else [obj]:
            log.rows += 1
            if isinstance(rec, dict):
                out.append(rec)
            else:
                log.quarantine(f"{log.name}#{log.rows}", "not a JSON object", json.dumps(rec)[:1000])
    return out


def _spans(rec: dict, log: Log) -> list[Span]:
    if isinstance(rec.get("resourceSpans"), list):
        return [_otlp_span(sp) for rs in rec["resourceSpans"] if isinstance(rs, dict)
                for ss in listed(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")) if isinstance(ss, dict)
                for sp in listed(ss.get("spans")) if isinstance(sp, dict)]
    if "context.span_id" in rec or "context" in rec or "span_id" in rec:
        return [_sdk_span(rec)]
    log.skip(f"record without spans ({', '.join(sorted(rec))[:40]})")
    return []


def _otlp_span(sp: dict) -> Span:
    status = sp.get("status") if isinstance(sp.get("status"), dict) else {}
    code = status.get("code")
    return Span(str(sp.get("traceId")), str(sp.get("spanId")), str(sp.get("name")), sp.get("startTimeUnixNano"),
                code in (2, "STATUS_CODE_ERROR", "ERROR"), str(status.get("message") or ""),
                _kv(sp.get("attributes")),
                [{"name": e.get("name"), "attrs": _kv(e.get("attributes"))} for e in listed(sp.get("events"))
                 if isinstance(e, dict)])


def _kv(items: Any) -> dict[str, Any]:
    return {a["key"]: _value(a.get("value")) for a in listed(items) if isinstance(a, dict) and isinstance(a.get("key"), str)}


def _value(v: Any) -> Any:
    """An OTLP AnyValue as a plain value."""
    if not isinstance(v, dict):
        return v
    for k in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if k in v:
            return v[k]
    if "intValue" in v:  # a string in OTLP JSON (int64)
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            values.bad("integer attribute")
            return None
    if "arrayValue" in v:
        return [_value(x) for x in listed(mapping(v["arrayValue"]).get("values"))]
    if "kvlistValue" in v:
        return _kv(mapping(v["kvlistValue"]).get("values"))
    return None


def _sdk_span(rec: dict) -> Span:
    """``span.to_json()`` (attributes a flat dict) or a Phoenix row (``context.*``, ``attributes.*`` nested)."""
    ctx = rec.get("context") if isinstance(rec.get("context"), dict) else {}
    attrs: dict[str, Any] = {}
    _flatten("", rec.get("attributes") if isinstance(rec.get("attributes"), dict) else {}, attrs)
    for k, v in rec.items():
        if k.startswith("attributes."):
            _flatten(k[len("attributes."):], v, attrs)
    if "span_kind" in rec and "openinference.span.kind" not in attrs:
        attrs["openinference.span.kind"] = rec["span_kind"]
    status = rec.get("status") if isinstance(rec.get("status"), dict) else {}
    code = status.get("status_code", rec.get("status_code"))
    events = [{"name": e.get("name"), "attrs": e.get("attributes") if isinstance(e.get("attributes"), dict) else {}}
              for e in listed(rec.get("events")) if isinstance(e, dict)]
    return Span(str(ctx.get("trace_id") or rec.get("context.trace_id") or rec.get("trace_id")),
                str(ctx.get("span_id") or rec.get("context.span_id") or rec.get("span_id")), str(rec.get("name")),
                rec.get("start_time"), str(code).upper() in ("ERROR", "STATUSCODE.ERROR"),
                str(status.get("description") or rec.get("status_message") or ""), attrs, events)


def _flatten(prefix: str, v: Any, out: dict[str, Any]) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), x, out)
    elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        for i, x in enumerate(v):
            _flatten(f"{prefix}.{i}", x, out)
    else:
        out[prefix] = v


def _conversation(log: Log, native: str, spans: list[Span]) -> Conversation:
    conv: list[Msg] = []
    usage_of: dict[int, Usage] = {}
    tool_spans: list[Span] = []
    model = None
    for s in spans:
        op = str(_first(s.attrs, "gen_ai.operation.name", "openinference.span.kind") or "").lower()
        inputs, outputs = _messages(s)
        if op in ("execute_tool", "tool"):
            tool_spans.append(s)
            log.skip("tool span")
        elif inputs or outputs:
            log.skip("model span (-> messages)")
            _merge(conv, inputs)
            if outputs:
                usage_of[len(conv)] = _usage(s)
            conv.extend(outputs)
            model = model or _first(s.attrs, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
        else:
            log.skip(f"span without messages ({op or 'no kind'})")
    _tool_results(conv, tool_spans)
    turns = []
    for i, m in enumerate(conv):
        t = Turn(m.role, m.text, calls=m.calls, answers=m.answers, is_error=m.error)
        if i in usage_of:
            t.usage.append(usage_of[i])
        turns.append(t)
    return Conversation(native, turns, model=model, created=spans[0].start if spans else None,
                        provider=_first(spans[0].attrs, "gen_ai.provider.name", "gen_ai.system", "llm.provider",
                                        "llm.system") if spans else None)


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


def _tool_results(conv: list[Msg], tool_spans: list[Span]) -> None:
    """A tool span answers its call when no tool message did (frameworks that record only the tool span), and
    flags the message that did when it failed."""
    answered = {m.answers: m for m in conv if m.role == "tool"}
    for s in tool_spans:
        cid = _first(s.attrs, "gen_ai.tool.call.id", "tool_call.id", "tool.call.id")
        if cid in answered:  # the message has the text, the span whether it failed
            answered[cid].error = answered[cid].error or s.error or None
            continue
        if cid is None:
            continue
        at = next((i for i, m in enumerate(conv) if any(c.id == cid for c in m.calls)), None)
        if at is None:
            continue
        result = _first(s.attrs, "gen_ai.tool.call.result", "output.value") or s.status
        msg = Msg("tool", text_of(result), answers=str(cid), error=s.error)
        j = at + 1
        while j < len(conv) and conv[j].role == "tool":
            j += 1
        conv.insert(j, msg)
        answered[cid] = msg


def _messages(s: Span) -> tuple[list[Msg], list[Msg]]:
    a = s.attrs
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
    return _event_messages(s)


def _parts_messages(msgs: Any) -> list[Msg]:
    out = []
    for m in msgs if isinstance(msgs, list) else []:
        if not isinstance(m, dict):
            continue
        parts = [p for p in listed(m.get("parts")) if isinstance(p, dict)]
        texts = [text_of(p.get("content")) for p in parts if p.get("type") == "text"]
        calls = [ToolCall(p.get("name"), p.get("arguments"), p.get("id")) for p in parts if p.get("type") == "tool_call"]
        responses = [p for p in parts if p.get("type") == "tool_call_response"]
        role = str(m.get("role"))
        if responses:
            out.extend(Msg("tool", text_of(p.get("response")), answers=p.get("id")) for p in responses)
        else:
            out.append(Msg(role, "\n".join(texts), calls))
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
        calls = _indexed_calls(r)
        tcid = r.get("tool_call_id")
        out.append(Msg(str(r.get("role")), text_of(text), calls, str(tcid) if tcid is not None else None))
    return out


def _indexed_calls(r: dict[str, Any]) -> list[ToolCall]:
    calls: dict[int, dict[str, Any]] = defaultdict(dict)
    for k, v in r.items():
        m = INDEX.match(k[len("tool_calls."):]) if k.startswith("tool_calls.") else None
        if m:
            calls[int(m.group(1))][m.group(2).replace("tool_call.", "").replace("function.", "")] = v
    return [ToolCall(c.get("name"), c.get("arguments"), c.get("id")) for _, c in sorted(calls.items())]


def _event_messages(s: Span) -> tuple[list[Msg], list[Msg]]:
    """Semantic conventions 1.36 and before: one span event per message."""
    inputs, outputs = [], []
    for e in s.events:
        name, a = str(e.get("name")), e.get("attrs") or {}
        if name == "gen_ai.choice":
            m = _json(a.get("message"))
            m = m if isinstance(m, dict) else {}
            outputs.append(Msg("assistant", text_of(m.get("content")), _plain_calls(m.get("tool_calls"))))
        elif name.startswith("gen_ai.") and name.endswith(".message"):
            role = name[len("gen_ai."):-len(".message")]
            inputs.append(Msg(role, text_of(_json(a.get("content"))), _plain_calls(a.get("tool_calls")),
                              a.get("id") if role == "tool" else None))
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
    inp = _first(a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
    cached = _first(a, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                    "llm.token_count.prompt_details.cache_read")
    return Usage(prompt_tokens=inp,
                 output_tokens=_first(a, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                                      "llm.token_count.completion"),
                 cache_read_input_tokens=cached,
                 cache_creation_input_tokens=_first(a, "gen_ai.usage.cache_creation.input_tokens",
                                                    "llm.token_count.prompt_details.cache_write"),
                 message_id=_first(a, "gen_ai.response.id"),
                 model=_first(a, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name"))


def _first(a: dict[str, Any], *keys: str) -> Any:
    return next((a[k] for k in keys if a.get(k) not in (None, "")), None)


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
    spanlike = b'span_id"' in head and b'trace_id"' in head
    return spanlike and any(m in head for m in MARKERS[:4])


FORMAT = Format("otel", "OpenTelemetry GenAI spans (OTLP JSON, SDK span dumps) and OpenInference/Phoenix span exports",
                _sniff, read=read)
