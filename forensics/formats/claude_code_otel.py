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
from forensics.formats.kit.model import Conversation, Event, Log, ToolCall, Turn, Usage, listed, mapping, text_of

PREFIX = "claude_code."
SCOPE = "com.anthropic.claude_code"


def read(path: str, log: Log) -> list[Conversation]:
    data = Path(path).read_bytes()
    docs: list[tuple[str, Any]] = []
    stripped = data.removeprefix(values.BOM).strip()
    try:
        whole = values.loads(stripped, deep=True) if stripped[:1] == b"{" and b"\n{" not in stripped else None
    except (orjson.JSONDecodeError, ValueError):
        whole = None
    if isinstance(whole, dict):
        log.rows += 1
        docs.append((log.name, whole))
    else:
        for n, _raw, obj in log.json_lines(data):
            docs.append((f"{log.name}:{n}", obj))
    sessions: dict[str, list[tuple[tuple[int, int], str, dict[str, Any], dict[str, Any]]]] = {}
    seen: set[bytes] = set()
    for where, doc in docs:
        if not isinstance(doc.get("resourceLogs"), list):
            log.skip("not an OTLP logs export (no resourceLogs)")
            continue
        for loc, rec, attrs in _records(doc, where, log):
            sid = str(attrs.get("session.id") or "")
            key = orjson.dumps(
                [rec.get("timeUnixNano"), _name(rec, attrs), sorted(attrs.items(), key=lambda kv: kv[0])], default=str
            )
            if key in seen:  # the same record exported twice (a retried export, overlapping collector files)
                log.skip("log record exported twice (the same record again)")
                continue
            seen.add(key)
            seq = attrs.get("event.sequence")
            # time first: a session resumed in a new process (the same session.id) counts its sequence from 1 again
            order = (
                _time_ns(rec, attrs),
                int(seq)
                if isinstance(seq, int) or (isinstance(seq, str) and seq.isdigit() and len(seq) <= 20)
                else 1 << 40,
            )
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
        return int(iv) if isinstance(iv, str) and iv.lstrip("-").isdigit() and len(iv) <= 21 else iv
    for k in ("doubleValue", "boolValue", "bytesValue"):
        if k in v:
            return v[k]
    if "arrayValue" in v:
        return [_value(x) for x in mapping(v["arrayValue"]).get("values") or []]
    if "kvlistValue" in v:
        return _attributes(mapping(v["kvlistValue"]).get("values"))
    return None


def _time_ns(rec: dict[str, Any], attrs: dict[str, Any]) -> int:
    ns = rec.get("timeUnixNano")
    if isinstance(ns, int) or (isinstance(ns, str) and ns.isdigit() and len(ns) <= 20):
        return int(ns)
    at = values.epoch(attrs.get("event.timestamp")) if attrs.get("event.timestamp") else None
    return int(at * 1e9) if at is not None else 0


def _name(rec: dict[str, Any], attrs: dict[str, Any]) -> str:
    """The event's name: the ``event.name`` attribute, else the record's ``eventName`` (OTLP 1.5+ log records, as
    newer SDKs write events), else its body."""
    body = mapping(rec.get("body")).get("stringValue")
    given = attrs.get("event.name") if isinstance(attrs.get("event.name"), str) else rec.get("eventName")
    name = given if isinstance(given, str) and given else body
    name = str(name or "")
    return name[len(PREFIX) :] if name.startswith(PREFIX) else name


def _conversation(
    log: Log, sid: str, events: list[tuple[tuple[int, int], str, dict[str, Any], dict[str, Any]]]
) -> Conversation:
    turns: list[Turn] = []
    by_request: dict[str, Turn] = {}
    spent: set[str] = set()  # request ids whose api_request gave their usage
    bodies: dict[str, dict[str, Any]] = {}  # request id -> its response body (the message id, usage)
    calls: dict[str, ToolCall] = {}  # tool_use_id -> a call a response body named
    outputs: dict[str, tuple[str, bool]] = {}  # tool_use_id -> (output, is_error), from the request bodies
    happened: list[Event] = []
    model = created = None
    for _, loc, rec, attrs in events:
        with log.guard(loc, rec):
            name = _name(rec, attrs)
            at = attrs.get("event.timestamp") or _ns(rec.get("timeUnixNano"))
            created = created or at
            rid = _str(attrs.get("request_id"))
            if name == "user_prompt":
                text = attrs.get("prompt")
                if not isinstance(text, str):
                    text = f"[a prompt of {attrs.get('prompt_length', '?')} characters; its text was not exported]"
                bare = isinstance(attrs.get("prompt"), str) and len(text.split()) <= 1 and text.startswith("/")
                # a slash command run with nothing after it (/compact, /model): Claude Code's turn, as in the transcript
                own = "harness" if attrs.get("command_name") and bare else "person"
                turns.append(
                    Turn(
                        "user",
                        text,
                        at=at,
                        id=_str(attrs.get("message.uuid")) or _str(attrs.get("prompt.id")),
                        origin=own,
                    )
                )
            elif name == "api_request":
                model = _str(attrs.get("model")) or model
                t = by_request.get(rid or "")
                if t is None:
                    t = Turn("assistant", "", at=at, id=rid)
                    turns.append(t)
                t.usage.append(
                    Usage(
                        input_tokens=attrs.get("input_tokens"),
                        output_tokens=attrs.get("output_tokens"),
                        cache_read_input_tokens=attrs.get("cache_read_tokens"),
                        cache_creation_input_tokens=attrs.get("cache_creation_tokens"),
                        request_id=rid,
                        model=_str(attrs.get("model")),
                        message_id=_str(bodies.get(rid or "", {}).get("id")),
                    )
                )
                if rid:
                    by_request[rid] = t
                    spent.add(rid)
            elif name == "api_response_body":
                body = _body(log, attrs, "api_response_body")
                if body is None:
                    continue
                t = by_request.get(rid or "")
                if t is None:  # logged before its api_request: the request's usage joins this turn
                    t = Turn("assistant", "", at=at, id=rid or _str(body.get("id")))
                    turns.append(t)
                    if rid:
                        by_request[rid] = t
                _answer(t, body, calls)
                bodies[rid or f"{loc}"] = body
                for u in t.usage:
                    u.message_id = u.message_id or _str(body.get("id"))
                log.skip("api_response_body (-> its response's text and calls)")
            elif name == "api_request_body":
                body = _body(log, attrs, "api_request_body")
                if body is not None:
                    outputs.update(_tool_outputs(body))
                    log.skip("api_request_body (-> tool outputs)")
            elif name == "assistant_response":
                said = attrs.get("response")
                reply = said if isinstance(said, str) else ""
                if rid in by_request:
                    by_request[rid].text = by_request[rid].text or reply
                    log.skip("assistant_response (-> its api_request's message)")
                else:
                    turns.append(Turn("assistant", reply, at=at, id=_str(attrs.get("message.uuid"))))
            elif name == "tool_result":
                _tool(turns, attrs, at, loc, calls)
            elif name == "compaction":
                happened.append(
                    Event(
                        "compaction",
                        len(turns),
                        trigger=_str(attrs.get("trigger")),
                        pre_tokens=attrs.get("pre_tokens"),
                        post_tokens=attrs.get("post_tokens"),
                        detail={k: attrs[k] for k in ("success", "duration_ms", "error") if k in attrs},
                    )
                )
                log.skip("compaction (-> events)")
            else:
                log.skip(f"{name[:60] or 'log record without an event name'}")
    for rid, body in bodies.items():  # a response whose api_request is not in the export: its body's usage
        counts = mapping(body.get("usage"))
        if rid not in spent and rid in by_request and counts:
            by_request[rid].usage.append(
                Usage(
                    input_tokens=counts.get("input_tokens"),
                    output_tokens=counts.get("output_tokens"),
                    cache_read_input_tokens=counts.get("cache_read_input_tokens"),
                    cache_creation_input_tokens=counts.get("cache_creation_input_tokens"),
                    request_id=rid,
                    message_id=_str(body.get("id")),
                    model=_str(body.get("model")),
                )
            )
    for t in turns:
        if t.role == "tool" and t.answers in outputs:
            text, failed = outputs[t.answers]
            t.text = text or t.text
            t.is_error = t.is_error or failed
    return Conversation(sid or log.name, turns, provider="anthropic", model=model, created=created, events=happened)


def _body(log: Log, attrs: dict[str, Any], name: str) -> dict[str, Any] | None:
    """A raw API body (``OTEL_LOG_RAW_API_BODIES=1``): the JSON inline. A body cut at the inline limit
    (``body_truncated``) or kept in a file (``body_ref``, file mode) is not read: skipped and counted."""
    raw = attrs.get("body")
    if not isinstance(raw, str):
        log.skip(f"{name} (in a file, body_ref: not read)" if attrs.get("body_ref") else f"{name} (no body)")
        return None
    if str(attrs.get("body_truncated")).lower() == "true":
        log.skip(f"{name} (cut at the inline limit: not read)")
        return None
    try:
        body = values.loads(raw)
    except (orjson.JSONDecodeError, ValueError):
        log.skip(f"{name} (not JSON: not read)")
        return None
    return body if isinstance(body, dict) else None


def _answer(t: Turn, body: dict[str, Any], calls: dict[str, ToolCall]) -> None:
    """The response's text blocks and ``tool_use`` calls (the Messages API response the body holds)."""
    texts = [
        b["text"]
        for b in listed(body.get("content"))
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    if texts:
        t.text = "\n".join(texts)
    for b in listed(body.get("content")):
        if (
            isinstance(b, dict)
            and b.get("type") == "tool_use"
            and isinstance(b.get("id"), str)
            and b["id"] not in calls
        ):
            call = ToolCall(_str(b.get("name")), b.get("input"), b["id"])
            t.calls.append(call)
            calls[b["id"]] = call


def _tool_outputs(body: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """The tool results a request sends back (its user messages' ``tool_result`` blocks): output and error flag."""
    out: dict[str, tuple[str, bool]] = {}
    for m in listed(body.get("messages")):
        if not isinstance(m, dict) or m.get("role") != "user":
            continue
        for b in listed(m.get("content")):
            if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                out[b["tool_use_id"]] = (text_of(b.get("content")), b.get("is_error") is True)
    return out


def _tool(turns: list[Turn], attrs: dict[str, Any], at: Any, loc: str, calls: dict[str, ToolCall]) -> None:
    """The call on the last assistant turn (one is opened when none came before), then its result; a call a
    response body already named is only answered."""
    cid = _str(attrs.get("tool_use_id")) or f"{loc}:tool"
    if cid not in calls:
        holder = next((t for t in reversed(turns) if t.role == "assistant"), None)
        if holder is None or (turns and turns[-1].role == "user"):
            holder = Turn("assistant", "", at=at, id=f"{loc}:call")
            turns.append(holder)
        params = attrs.get("tool_parameters") if attrs.get("tool_parameters") is not None else attrs.get("tool_input")
        calls[cid] = ToolCall(_str(attrs.get("tool_name")), params, cid)
        holder.calls.append(calls[cid])
    ok = attrs.get("success")
    failed = ok is False or (isinstance(ok, str) and ok.lower() == "false")
    err = attrs.get("error") if attrs.get("error") is not None else attrs.get("error_type")
    turns.append(
        Turn(
            "tool",
            str(err) if failed and err is not None else "",
            answers=cid,
            at=at,
            id=f"{loc}:result",
            is_error=failed if ok is not None else None,
            origin="tool_result",
        )
    )


def _ns(v: Any) -> Any:
    n = values.count(v) if not isinstance(v, str) else (int(v) if v.isdigit() and len(v) <= 20 else None)
    return n / 1e9 if n else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _sniff(probe: Probe) -> bool:
    head = probe.head
    if b'"resourceLogs"' not in head:
        return False
    return (SCOPE.encode() in head or b'"claude_code.' in head) and b'"logRecords"' in head


FORMAT = Format(
    "claude-code-otel",
    "Claude Code's OpenTelemetry events (OTLP/JSON logs: user_prompt, api_request, "
    "assistant_response, tool_result), one conversation per session.id",
    _sniff,
    read=read,
    suffixes=(".json", ".jsonl"),
)
