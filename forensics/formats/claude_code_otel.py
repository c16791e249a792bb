"""Claude Code's own OpenTelemetry events: the OTLP logs it exports (``CLAUDE_CODE_ENABLE_TELEMETRY=1``,
``OTEL_LOGS_EXPORTER=otlp``) as a collector or a receiver saves them: OTLP/JSON ``{"resourceLogs": [...]}``, one
export request per file or one per line (the collector's file exporter).

Each log record is one event; its body is ``claude_code.<event>`` and its attributes name it again
(``event.name``), the session (``session.id``), the order (``event.sequence``, ``event.timestamp``) and the
prompt it belongs to (``prompt.id``). Documented at code.claude.com/docs/en/monitoring-usage; what becomes what:

* ``user_prompt``: the person's turn. The text is in ``prompt`` only when ``OTEL_LOG_USER_PROMPTS=1``; otherwise
  the turn says how long it was (``prompt_length``).
* ``api_request``: one model response, an assistant turn with its usage: ``input_tokens`` (without the cache),
  ``output_tokens``, ``cache_read_tokens``, ``cache_creation_tokens``, ``model``, ``request_id``.
* ``assistant_response`` (2.1.2xx and later): the response's text (``response``), put on the turn of its
  ``request_id``.
* ``tool_result``: a tool call (``tool_name``, ``tool_parameters``, ``tool_use_id`` when logged) on the assistant
  turn before it, and its result: ``success`` false is an error, with ``error``; the output itself is not exported.
* everything else (``tool_decision``, ``api_error``, ``hook_*``, ``mcp_server_connection``, ...) holds no
  message: skipped and counted by name. Metrics (``resourceMetrics``) are not read.

One conversation per ``session.id``, in ``event.sequence`` order. Seen on a real export of Claude Code 2.1.294
(2026-10, prompts and responses redacted by whoever captured it); docs/formats.md.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.model import Conversation, Log, ToolCall, Turn, Usage, mapping

PREFIX = "claude_code."
SCOPE = "com.anthropic.claude_code"


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    docs: list[tuple[str, Any]] = []
    stripped = data.strip()
    try:
        whole = values.loads(stripped) if stripped[:1] == b"{" and b"\n{" not in stripped else None
    except (orjson.JSONDecodeError, ValueError):
        whole = None
    if isinstance(whole, dict):
        log.rows += 1
        docs.append((log.name, whole))
    else:
        for n, _raw, obj in log.json_lines(data):
            docs.append((f"{log.name}:{n}", obj))
    sessions: dict[str, list[tuple[tuple[int, int], str, dict[str, Any], dict[str, Any]]]] = {}
    for where, doc in docs:
        if not isinstance(doc.get("resourceLogs"), list):
            log.skip("not an OTLP logs export (no resourceLogs)")
            continue
        for loc, rec, attrs in _records(doc, where, log):
            sid = str(attrs.get("session.id") or "")
            seq = attrs.get("event.sequence")
            order = (int(seq) if isinstance(seq, int) or (isinstance(seq, str) and seq.isdigit()) else 1 << 40,
                     int(rec.get("timeUnixNano") or 0) if str(rec.get("timeUnixNano") or "0").isdigit() else 0)
            sessions.setdefault(sid, []).append((order, loc, rec, attrs))
    if not sessions and not any(log.skipped.values()):
        log.error = "no OTLP log record of Claude Code (claude_code.* events)"
        return []
    return [_conversation(log, sid, sorted(evs, key=lambda e: e[0])) for sid, evs in sessions.items()]


def _records(doc: dict[str, Any], where: str, log: Log) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    for i, rl in enumerate(doc["resourceLogs"]):
        res = _attributes(mapping(mapping(rl).get("resource")).get("attributes"))
        for j, sl in enumerate(mapping(rl).get("scopeLogs") or []):
            for k, rec in enumerate(mapping(sl).get("logRecords") or []):
                loc = f"{where}.resourceLogs[{i}].scopeLogs[{j}].logRecords[{k}]"
                if not isinstance(rec, dict):
                    log.quarantine(loc, "log record is not a JSON object", rec)
                    continue
                log.rows += 1
                attrs = {**res, **_attributes(rec.get("attributes"))}
                yield loc, rec, attrs


def _attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in items if isinstance(items, list) else []:
        if isinstance(a, dict) and isinstance(a.get("key"), str):
            out[a["key"]] = _value(a.get("value"))
    return out


def _value(v: Any) -> Any:
    """An OTLP AnyValue as a Python value (64-bit integers arrive as strings in OTLP/JSON)."""
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        iv = v["intValue"]
        return int(iv) if isinstance(iv, str) and iv.lstrip("-").isdigit() else iv
    for k in ("doubleValue", "boolValue", "bytesValue"):
        if k in v:
            return v[k]
    if "arrayValue" in v:
        return [_value(x) for x in mapping(v["arrayValue"]).get("values") or []]
    if "kvlistValue" in v:
        return _attributes(mapping(v["kvlistValue"]).get("values"))
    return None


def _name(rec: dict[str, Any], attrs: dict[str, Any]) -> str:
    body = mapping(rec.get("body")).get("stringValue")
    name = attrs.get("event.name") if isinstance(attrs.get("event.name"), str) else body
    name = str(name or "")
    return name[len(PREFIX):] if name.startswith(PREFIX) else name


def _conversation(log: Log, sid: str, events: list[tuple[tuple[int, int], str, dict[str, Any], dict[str, Any]]]
                  ) -> Conversation:
    turns: list[Turn] = []
    by_request: dict[str, Turn] = {}
    model = created = None
    for _, loc, rec, attrs in events:
        with log.guard(loc, rec):
            name = _name(rec, attrs)
            at = attrs.get("event.timestamp") or _ns(rec.get("timeUnixNano"))
            created = created or at
            if name == "user_prompt":
                text = attrs.get("prompt")
                if not isinstance(text, str):
                    text = f"[a prompt of {attrs.get('prompt_length', '?')} characters; its text was not exported]"
                turns.append(Turn("user", text, at=at, id=_str(attrs.get("message.uuid")) or _str(attrs.get("prompt.id")),
                                  origin="person"))
            elif name == "api_request":
                model = _str(attrs.get("model")) or model
                t = Turn("assistant", "", at=at, id=_str(attrs.get("request_id")))
                t.usage.append(Usage(input_tokens=attrs.get("input_tokens"), output_tokens=attrs.get("output_tokens"),
                                     cache_read_input_tokens=attrs.get("cache_read_tokens"),
                                     cache_creation_input_tokens=attrs.get("cache_creation_tokens"),
                                     request_id=_str(attrs.get("request_id")), model=_str(attrs.get("model"))))
                turns.append(t)
                if t.id:
                    by_request[t.id] = t
            elif name == "assistant_response":
                rid = _str(attrs.get("request_id"))
                said = attrs.get("response")
                reply = said if isinstance(said, str) else ""
                if rid in by_request:
                    by_request[rid].text = reply
                    log.skip("assistant_response (-> its api_request's message)")
                else:
                    turns.append(Turn("assistant", reply, at=at, id=_str(attrs.get("message.uuid"))))
            elif name == "tool_result":
                _tool(turns, attrs, at, loc)
            else:
                log.skip(f"{name[:60] or 'log record without an event name'}")
    return Conversation(sid or log.name, turns, provider="anthropic", model=model, created=created)


def _tool(turns: list[Turn], attrs: dict[str, Any], at: Any, loc: str) -> None:
    """The call on the last assistant turn (one is opened when none came before), then its result."""
    holder = next((t for t in reversed(turns) if t.role == "assistant"), None)
    if holder is None or (turns and turns[-1].role == "user"):
        holder = Turn("assistant", "", at=at, id=f"{loc}:call")
        turns.append(holder)
    cid = _str(attrs.get("tool_use_id")) or f"{loc}:tool"
    params = attrs.get("tool_parameters")
    holder.calls.append(ToolCall(_str(attrs.get("tool_name")), params, cid))
    ok = attrs.get("success")
    failed = ok is False or (isinstance(ok, str) and ok.lower() == "false")
    err = attrs.get("error")
    turns.append(Turn("tool", str(err) if failed and err is not None else "", answers=cid, at=at, id=f"{loc}:result",
                      is_error=failed if ok is not None else None, origin="tool_result"))


def _ns(v: Any) -> Any:
    n = values.count(v) if not isinstance(v, str) else (int(v) if v.isdigit() else None)
    return n / 1e9 if n else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _sniff(probe: Probe) -> bool:
    head = probe.head
    if b'"resourceLogs"' not in head:
        return False
    return (SCOPE.encode() in head or b'"claude_code.' in head) and b'"logRecords"' in head


FORMAT = Format("claude-code-otel", "Claude Code's OpenTelemetry events (OTLP/JSON logs: user_prompt, api_request, "
                                    "assistant_response, tool_result), one conversation per session.id",
                _sniff, read=read, suffixes=(".json", ".jsonl"))
