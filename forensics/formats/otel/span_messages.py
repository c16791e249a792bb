"""The messages of one model-call span, whichever convention wrote them (see ``otel`` for the list): typed
parts (``gen_ai.input.messages``, 1.37+), span events (1.28-1.36, and before them ``gen_ai.content.*``),
indexed attributes (OpenLLMetry ``gen_ai.prompt.N.*``, OpenInference ``llm.input_messages.N.message.*``),
the request/response JSON OpenInference keeps in ``input.value``/``output.value``, and the Vercel AI SDK's
``ai.*`` attributes; with the usage of the response.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.model import ToolCall, Usage, listed, mapping, text_of
from forensics.formats.otel.spans import Span

INDEX = re.compile(r"^(\d+)\.(.+)$")
DETAILS_EVENT = "gen_ai.client.inference.operation.details"


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


def messages(s: Span) -> tuple[list[Msg], list[Msg]]:
    a = s.attrs
    details = next((e.get("attrs") or {} for e in s.events if e.get("name") == DETAILS_EVENT), None)
    if details is not None and "gen_ai.input.messages" not in a and "gen_ai.output.messages" not in a:
        a = {**a, **details}  # 1.37+: the messages recorded as an event instead of span attributes
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        system = json_value(a.get("gen_ai.system_instructions"))
        inputs = (
            [Msg("system", text_of([{"text": p.get("content")} for p in system if isinstance(p, dict)]))]
            if isinstance(system, list) and system
            else []
        )
        return inputs + _parts_messages(json_value(a.get("gen_ai.input.messages"))), _parts_messages(
            json_value(a.get("gen_ai.output.messages"))
        )
    if any(k.startswith("llm.input_messages.") or k.startswith("llm.output_messages.") for k in a):
        return _indexed_messages(a, "llm.input_messages", "message."), _indexed_messages(
            a, "llm.output_messages", "message."
        )
    if any(k.startswith("gen_ai.prompt.") or k.startswith("gen_ai.completion.") for k in a):
        return _indexed_messages(a, "gen_ai.prompt", ""), _indexed_messages(a, "gen_ai.completion", "")
    if "ai.prompt.messages" in a:
        return _vercel_messages(json_value(a["ai.prompt.messages"])), _vercel_output(a)
    if isinstance(json_value(a.get("gen_ai.prompt")), list) or isinstance(json_value(a.get("gen_ai.completion")), list):
        return _plain_messages(json_value(a.get("gen_ai.prompt"))), _plain_messages(
            json_value(a.get("gen_ai.completion"))
        )
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
        calls = [
            ToolCall(p.get("name"), p.get("arguments"), p.get("id")) for p in parts if p.get("type") == "tool_call"
        ]
        responses = [p for p in parts if p.get("type") == "tool_call_response"]
        if responses:
            out.extend(Msg("tool", text_of(p.get("response")), answers=opt_str(p.get("id"))) for p in responses)
        else:
            out.append(Msg(str(m.get("role")), "\n".join(texts), calls))
    return out


def _indexed_messages(a: dict[str, Any], prefix: str, inner: str) -> list[Msg]:
    """``prefix.N.<inner>role`` style attributes (OpenInference, OpenLLMetry) as messages in order."""
    rows: dict[int, dict[str, Any]] = defaultdict(dict)
    for k, v in a.items():
        if k.startswith(prefix + "."):
            m = INDEX.match(k[len(prefix) + 1 :])
            if m:
                rows[int(m.group(1))][m.group(2)[len(inner) :] if m.group(2).startswith(inner) else m.group(2)] = v
    out = []
    for _, r in sorted(rows.items()):
        text = r.get("content")
        if text is None:
            text = "\n".join(str(v) for k, v in sorted(r.items()) if k.startswith("contents.") and k.endswith(".text"))
        out.append(Msg(str(r.get("role")), text_of(text), _indexed_calls(r), opt_str(r.get("tool_call_id"))))
    return out


def _indexed_calls(r: dict[str, Any]) -> list[ToolCall]:
    calls: dict[int, dict[str, Any]] = defaultdict(dict)
    for k, v in r.items():
        m = INDEX.match(k[len("tool_calls.") :]) if k.startswith("tool_calls.") else None
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
            out.extend(
                Msg(
                    "tool",
                    text_of(_result_value(p.get("output", p.get("result")))),
                    answers=opt_str(p.get("toolCallId")),
                    error=True if mapping(p.get("output")).get("type") in ("error-text", "error-json") else None,
                )
                for p in results
            )
            continue
        calls = [
            ToolCall(p.get("toolName"), p.get("input", p.get("args")), p.get("toolCallId"))
            for p in parts
            if p.get("type") == "tool-call"
        ]
        out.append(Msg(role, content if isinstance(content, str) else text_of(parts), calls))
    return out


def _result_value(v: Any) -> Any:
    """AI SDK 5+ wraps a tool output as ``{"type": "text"|"json"|..., "value"}``."""
    return v.get("value") if isinstance(v, dict) and "type" in v and "value" in v else v


def _vercel_output(a: dict[str, Any]) -> list[Msg]:
    text = a.get("ai.response.text")
    if text is None:
        text = a.get("ai.response.object")
    calls = [
        ToolCall(c.get("toolName"), c.get("input", c.get("args")), c.get("toolCallId"))
        for c in listed(json_value(a.get("ai.response.toolCalls")))
        if isinstance(c, dict)
    ]
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
            out.extend(
                Msg(
                    "tool",
                    text_of(b.get("content"), None),
                    answers=opt_str(b.get("tool_use_id")),
                    error=b.get("is_error") is True or None,
                )
                for b in results
            )
            continue
        calls = _plain_calls(m.get("tool_calls")) + [
            ToolCall(b.get("name"), b.get("input"), b.get("id")) for b in blocks if b.get("type") == "tool_use"
        ]
        out.append(Msg(str(m.get("role") or "assistant"), text_of(content), calls, opt_str(m.get("tool_call_id"))))
    return out


def _request_messages(a: dict[str, Any]) -> tuple[list[Msg], list[Msg]]:
    """An OpenInference LLM span without message attributes: the request and response it logged as
    ``input.value``/``output.value`` (JSON with ``messages``/``choices``, or plain text)."""
    req, resp = json_value(a.get("input.value")), json_value(a.get("output.value"))
    inputs = _plain_messages(req.get("messages")) if isinstance(req, dict) else []
    if isinstance(req, dict) and isinstance(req.get("system"), str):
        inputs.insert(0, Msg("system", req["system"]))
    if isinstance(resp, dict):
        choices = [c for c in listed(resp.get("choices")) if isinstance(c, dict)]
        outputs = _plain_messages(
            [mapping(choices[0].get("message"))] if choices else [resp] if "content" in resp else []
        )
    else:
        outputs = []
    return inputs, outputs


def _event_messages(s: Span) -> tuple[list[Msg], list[Msg]]:
    """Semantic conventions 1.28-1.36: one span event per message (or, as Pydantic AI writes them, the same
    events as one ``events`` JSON attribute); before them, the prompt and completion as JSON in the
    ``gen_ai.content.prompt``/``gen_ai.content.completion`` events."""
    inputs, outputs = [], []
    listed_events = [
        {"name": e.get("event.name"), "attrs": e}
        for e in listed(json_value(s.attrs.get("events")))
        if isinstance(e, dict)
    ]  # Pydantic AI / Logfire keep the events as one JSON attribute
    for e in s.events + listed_events:
        name, a = str(e.get("name")), e.get("attrs") or {}
        if name == "gen_ai.choice":
            m = mapping(json_value(a.get("message")))
            outputs.append(Msg("assistant", text_of(m.get("content")), _plain_calls(m.get("tool_calls"))))
        elif name == "gen_ai.content.prompt":
            inputs.extend(_plain_messages(json_value(a.get("gen_ai.prompt"))))
        elif name == "gen_ai.content.completion":
            outputs.extend(_plain_messages(json_value(a.get("gen_ai.completion"))))
        elif name.startswith("gen_ai.") and name.endswith(".message"):
            role = name[len("gen_ai.") : -len(".message")]
            inputs.append(
                Msg(
                    role,
                    text_of(json_value(a.get("content"))),
                    _plain_calls(a.get("tool_calls")),
                    opt_str(a.get("id")) if role == "tool" else None,
                )
            )
    return inputs, outputs


def _plain_calls(v: Any) -> list[ToolCall]:
    """OpenAI-style calls: ``{"id", "function": {"name", "arguments"}}`` or flat."""
    out = []
    for c in listed(json_value(v)):
        if isinstance(c, dict):
            f = mapping(c.get("function")) or c
            out.append(ToolCall(f.get("name"), f.get("arguments"), c.get("id")))
    return out


def usage(s: Span) -> Usage:
    a = s.attrs
    inp = values.count(
        first(
            a,
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
            "ai.usage.inputTokens",
            "ai.usage.promptTokens",
        )
    )
    cached = values.count(
        first(
            a,
            "gen_ai.usage.cache_read.input_tokens",
            "gen_ai.usage.cache_read_input_tokens",
            "llm.token_count.prompt_details.cache_read",
            "ai.usage.cachedInputTokens",
        )
    )
    return Usage(
        prompt_tokens=inp,
        output_tokens=first(
            a,
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
            "ai.usage.outputTokens",
            "ai.usage.completionTokens",
        ),
        cache_read_input_tokens=cached,
        cache_creation_input_tokens=first(
            a, "gen_ai.usage.cache_creation.input_tokens", "llm.token_count.prompt_details.cache_write"
        ),
        message_id=first(a, "gen_ai.response.id", "ai.response.id"),
        model=first(
            a, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.response.model", "ai.model.id"
        ),
    )


def first(a: dict[str, Any], *keys: str) -> Any:
    return next((a[k] for k in keys if a.get(k) not in (None, "")), None)


def opt_str(v: Any) -> str | None:
    return None if v is None else str(v)


def json_value(v: Any) -> Any:
    if isinstance(v, str) and v[:1] in ("[", "{", '"'):
        try:
            return values.loads(v)
        except ValueError:
            return v
    return v
