"""Spans out of the JSON encodings that OpenTelemetry GenAI and OpenInference traces are saved in, as one shape.

A trace reaches a disk in several encodings, all read here:

* OTLP JSON (``{"resourceSpans": [{"resource", "scopeSpans": [{"spans": [...]}]}]}``: attributes as
  ``[{"key", "value": {"stringValue": ...}}]``, times in nanoseconds), a document or one per line as the
  collector's file exporter writes it;
* the Python SDK's ``span.to_json()`` as ``ConsoleSpanExporter`` prints it (pretty-printed objects one after
  another, whatever the file's suffix; ``context.trace_id``, ``parent_id``, ISO times, ``resource``), also as
  a JSON list, as JSONL, or wrapped as ``{"spans": [...], ...}`` by agent SDKs that dump their run;
* Zipkin v2 JSON (a list of ``{traceId, id, parentId, name, timestamp (µs), tags, localEndpoint}``);
* the Jaeger UI/API export (``{"data": [{"traceID", "spans": [{"spanID", "operationName", "references",
  "startTime" (µs), "tags": [{"key", "type", "value"}], "logs", "processID"}], "processes"}]}``);
* the JS SDK's ``ReadableSpan`` as Vercel AI SDK tests and exporters save it (``spanContext{traceId,spanId}``,
  ``parentSpanId``, hrtime ``[s, ns]`` start, attributes a flat object);
* Phoenix's span export (``context{trace_id,span_id}``, ``parent_id``, ``span_kind``, attributes nested or
  flattened to ``attributes.llm.input_messages...`` columns, one row per line, a list, or the spans dataframe
  saved column by column).

The console exporter prints a span each time a processor hands it over, so the same span can appear twice:
repeats are merged (the later attributes win) and counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from forensics.formats.kit import values
from forensics.formats.kit.model import Log, listed, mapping


@dataclass
class Span:
    trace: str
    span: str
    parent: str | None
    name: str
    start: float | None  # seconds since the epoch
    error: bool
    status: str
    attrs: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)  # {"name", "attrs"}
    service: str = ""


def decode(data: bytes, log: Log) -> list[Span]:
    """Every span in the file, each once, in the file's order."""
    out: dict[tuple[str, str], Span] = {}
    for rec in _records(data, log):
        for s in _spans(rec, log):
            key = (s.trace, s.span)
            if key in out and s.span != "None":
                old = out[key]
                old.attrs.update(s.attrs)
                old.events = old.events or s.events
                old.error = old.error or s.error
                log.skip("span printed again (merged)")
            else:
                out[key if s.span != "None" else (s.trace, f"#{len(out)}")] = s
    return list(out.values())


def _records(data: bytes, log: Log) -> list[dict[str, Any]]:
    """Top-level JSON objects: a document (object or list), JSONL, or concatenated pretty-printed objects."""
    text = _utf8_lines(data, log)
    dec, i, out = json.JSONDecoder(), 0, []
    while i < len(text):
        while i < len(text) and text[i] in " \t\r\n,\ufeff":
            i += 1
        if i >= len(text):
            break
        try:
            obj, end = dec.raw_decode(text, i)
            if values.surrogate_escapes(text, i, end):
                obj = values.without_surrogates(obj)
        except (ValueError, RecursionError) as e:
            obj, end = _tolerant(text, i, e)
            if end < 0:
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


def _tolerant(text: str, i: int, e: Exception) -> tuple[Any, int]:
    """The object or list at ``i`` that the decoder refused for one value in it (nested too deep, an integer
    too long), read by ``values.tolerant``; (None, -1) when it is not JSON."""
    if isinstance(e, json.JSONDecodeError) or text[i] not in "[{" or (end := values.value_end(text, i)) < 0:
        return None, -1
    try:
        return values.tolerant(text[i:end]), end
    except (ValueError, RecursionError):
        return None, -1


def _utf8_lines(data: bytes, log: Log) -> str:
    """The file as text; a line that is not UTF-8 is quarantined with its bytes as they are (and read as empty),
    never decoded with replacement characters."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    lines = data.split(b"\n")
    for n, line in enumerate(lines):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as e:
            log.rows += 1
            log.quarantine(f"{log.name}:{n + 1}", f"invalid UTF-8 ({e.reason})", line)
            lines[n] = b""
    return b"\n".join(lines).decode("utf-8")


def _spans(rec: dict[str, Any], log: Log) -> list[Span]:
    if isinstance(rec.get("resourceSpans"), list):
        return [
            _otlp_span(sp, _kv(mapping(rs.get("resource")).get("attributes")))
            for rs in rec["resourceSpans"]
            if isinstance(rs, dict)
            for ss in listed(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans"))
            if isinstance(ss, dict)
            for sp in listed(ss.get("spans"))
            if isinstance(sp, dict)
        ]
    if isinstance(rec.get("data"), list) and any(isinstance(t, dict) and "spans" in t for t in rec["data"]):
        return [s for t in rec["data"] if isinstance(t, dict) for s in _jaeger_trace(t)]
    if isinstance(rec.get("spans"), list):  # a trace or an agent run wrapping its spans
        if "traceID" in rec:
            return _jaeger_trace(rec)
        inner = [s for sp in rec["spans"] if isinstance(sp, dict) for s in _spans(sp, log)]
        others = sorted(k for k in rec if k != "spans")
        if others:
            log.ignore(f"fields beside the spans ({', '.join(others)[:60]})")
        return inner
    if isinstance(rec.get("context.span_id"), dict):  # a span table saved column by column (pandas' to_json)
        rows: dict[str, dict[str, Any]] = {}
        for col, cells in rec.items():
            for idx, v in mapping(cells).items():
                rows.setdefault(str(idx), {})[col] = v
        return [s for row in rows.values() for s in _spans(row, log)]
    if "spanContext" in rec:
        return [_js_span(rec)]
    if "traceId" in rec and "id" in rec and isinstance(rec.get("tags"), dict):
        return [_zipkin_span(rec)]
    if "traceId" in rec and "spanId" in rec:
        return [_otlp_span(rec, {})]
    if "context" in rec or "context.span_id" in rec or "span_id" in rec:
        return [_sdk_span(rec)]
    log.skip(f"record without spans ({', '.join(sorted(rec))[:40]})")
    return []


def _otlp_span(sp: dict[str, Any], resource: dict[str, Any]) -> Span:
    status = mapping(sp.get("status"))
    code = status.get("code")
    return Span(
        str(sp.get("traceId")),
        str(sp.get("spanId")),
        _opt(sp.get("parentSpanId")),
        str(sp.get("name")),
        seconds(sp.get("startTimeUnixNano")),
        code in (2, "STATUS_CODE_ERROR", "ERROR"),
        str(status.get("message") or ""),
        _kv(sp.get("attributes")),
        [
            {"name": e.get("name"), "attrs": _kv(e.get("attributes"))}
            for e in listed(sp.get("events"))
            if isinstance(e, dict)
        ],
        str(resource.get("service.name") or ""),
    )


def _kv(items: Any) -> dict[str, Any]:
    return {
        a["key"]: _value(a.get("value")) for a in listed(items) if isinstance(a, dict) and isinstance(a.get("key"), str)
    }


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


def _jaeger_trace(t: dict[str, Any]) -> list[Span]:
    processes: dict[Any, Any] = mapping(t.get("processes"))
    out = []
    for sp in listed(t.get("spans")):
        if not isinstance(sp, dict):
            continue
        tags = {x["key"]: x.get("value") for x in listed(sp.get("tags")) if isinstance(x, dict) and "key" in x}
        parent = next(
            (
                r.get("spanID")
                for r in listed(sp.get("references"))
                if isinstance(r, dict) and r.get("refType") == "CHILD_OF"
            ),
            None,
        )
        events = []
        for lg in listed(sp.get("logs")):
            fields = {
                x["key"]: x.get("value")
                for x in listed(mapping(lg).get("fields"))
                if isinstance(x, dict) and "key" in x
            }
            events.append({"name": fields.pop("event", None), "attrs": fields})
        code = str(tags.get("otel.status_code") or "").upper()
        proc = mapping(processes.get(sp.get("processID"))) or mapping(sp.get("process"))
        out.append(
            Span(
                str(sp.get("traceID") or t.get("traceID")),
                str(sp.get("spanID")),
                _opt(parent),
                str(sp.get("operationName")),
                seconds(sp.get("startTime"), "us"),
                code == "ERROR" or tags.get("error") is True,
                str(tags.get("otel.status_description") or ""),
                tags,
                events,
                str(proc.get("serviceName") or ""),
            )
        )
    return out


def _zipkin_span(rec: dict[str, Any]) -> Span:
    """Zipkin v2 JSON (the OTel Zipkin exporter): ``tags`` are the attributes, ``annotations`` the events."""
    tags = dict(rec["tags"])
    events: list[dict[str, Any]] = [
        {"name": a.get("value"), "attrs": {}} for a in listed(rec.get("annotations")) if isinstance(a, dict)
    ]
    return Span(
        str(rec.get("traceId")),
        str(rec.get("id")),
        _opt(rec.get("parentId")),
        str(rec.get("name")),
        seconds(rec.get("timestamp"), "us"),
        str(tags.get("otel.status_code") or "").upper() == "ERROR" or "error" in tags,
        str(tags.get("error") or ""),
        tags,
        events,
        str(mapping(rec.get("localEndpoint")).get("serviceName") or ""),
    )


def _js_span(rec: dict[str, Any]) -> Span:
    ctx = mapping(rec.get("spanContext"))
    status = mapping(rec.get("status"))
    parent = rec.get("parentSpanId") or mapping(rec.get("parentSpanContext")).get("spanId")
    events = [
        {"name": e.get("name"), "attrs": mapping(e.get("attributes"))}
        for e in listed(rec.get("events"))
        if isinstance(e, dict)
    ]
    service = mapping(mapping(rec.get("resource")).get("attributes")).get("service.name")
    return Span(
        str(ctx.get("traceId")),
        str(ctx.get("spanId")),
        _opt(parent),
        str(rec.get("name")),
        seconds(rec.get("startTime")),
        status.get("code") == 2,
        str(status.get("message") or ""),
        dict(mapping(rec.get("attributes"))),
        events,
        str(service or ""),
    )


def _sdk_span(rec: dict[str, Any]) -> Span:
    """``span.to_json()`` (attributes a flat dict) or a Phoenix row (``context.*``, ``attributes.*`` nested)."""
    ctx = mapping(rec.get("context"))
    attrs: dict[str, Any] = {}
    _flatten("", mapping(rec.get("attributes")), attrs)
    for k, v in rec.items():
        if k.startswith("attributes."):
            _flatten(k[len("attributes.") :], v, attrs)
    if "span_kind" in rec and "openinference.span.kind" not in attrs:
        attrs["openinference.span.kind"] = rec["span_kind"]
    status = mapping(rec.get("status"))
    code = status.get("status_code", rec.get("status_code"))
    events = [
        {"name": e.get("name"), "attrs": mapping(e.get("attributes"))}
        for e in listed(rec.get("events"))
        if isinstance(e, dict)
    ]
    service = mapping(mapping(rec.get("resource")).get("attributes")).get("service.name")
    return Span(
        str(ctx.get("trace_id") or rec.get("context.trace_id") or rec.get("trace_id")),
        str(ctx.get("span_id") or rec.get("context.span_id") or rec.get("span_id")),
        _opt(rec.get("parent_id") if "parent_id" in rec else rec.get("parent_span_id")),
        str(rec.get("name")),
        seconds(rec.get("start_time")),
        str(code).upper() in ("ERROR", "STATUSCODE.ERROR"),
        str(status.get("description") or rec.get("status_message") or ""),
        attrs,
        events,
        str(service or ""),
    )


def _flatten(prefix: str, v: Any, out: dict[str, Any]) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), x, out)
    elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        for i, x in enumerate(v):
            _flatten(f"{prefix}.{i}", x, out)
    else:
        out[prefix] = v


def _opt(v: Any) -> str | None:
    return str(v) if v not in (None, "", 0) else None


def seconds(v: Any, unit: str = "") -> float | None:
    """A span time as seconds: OTLP nanoseconds (a string), Jaeger microseconds, JS hrtime ``[s, ns]``, an ISO
    string or epoch seconds/milliseconds."""
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
        return float(v[0]) + float(v[1]) / 1e9
    if isinstance(v, str) and v.strip().isascii() and v.strip().isdigit():
        v = int(v) if len(v.strip()) <= 20 else float(v)  # longer: past any time (and Python's int limit)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if unit == "us" or 1e14 < v < 1e17:
            return v / 1e6
        if v >= 1e17:
            return v / 1e9
    if isinstance(v, str):
        try:
            d = datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
        except ValueError:
            return values.epoch(v)
        return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()
    return values.epoch(v)
