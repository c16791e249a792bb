"""Turn parsed messages of either shape (OpenAI or Anthropic) into columnar batches for the warehouse.

Parsing runs in worker processes, so everything here is plain Python over dicts and lists, and the output
is a set of pyarrow tables that DuckDB ingests without a row loop. Sizes (chars, bytes) are computed by
DuckDB on insert, not here.
"""
from __future__ import annotations

import hashlib
import re
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson
import pyarrow as pa

ROLE_ALIASES = {"system": "system", "developer": "system", "user": "user", "human": "user",
                "assistant": "assistant", "ai": "assistant", "model": "assistant", "tool": "tool",
                "function": "tool", "tool_result": "tool"}
ERROR_START = re.compile(r"\s*(?:error\b|错误|失败|fatal\b|traceback\b)", re.IGNORECASE)
RAW_CAP = 1 << 20  # quarantine keeps at most 1 MiB of a record's raw bytes


class BadRecord(ValueError):
    """A record that cannot become a message; its message is the quarantine reason."""


@dataclass(slots=True)
class Message:
    role: str
    content: str
    calls: list[tuple[str | None, str | None, str]]  # (call id, name, arguments JSON)
    results: list[tuple[str | None, str, bool]]  # Anthropic tool_result blocks: (tool_use_id, text, is_error)
    tool_call_id: str | None
    is_error: bool
    ts: float | None


def split_lines(data: bytes) -> list[bytes]:
    """JSONL lines of a file's bytes; a final newline ends the last line rather than starting an empty one."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def stable_id(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def source_key(fmt: str, resolved_path: str, options: str = "{}") -> str:
    """A source's id: the same file read by another importer or with other options is another source."""
    return stable_id(fmt, resolved_path, options)


def to_epoch(v: Any) -> float | None:
    """Seconds since the epoch from a number (s or ms) or an ISO-8601 string; None when unreadable."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v / 1000.0 if v > 1e11 else float(v)
    if isinstance(v, str) and v:
        try:
            d = datetime.fromisoformat(v.replace("Z", "+00:00").replace(" ", "T", 1))
        except ValueError:
            return None
        return (d if d.tzinfo else d.replace(tzinfo=timezone.utc)).timestamp()  # naive times are UTC
    return None


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content
                         if not isinstance(b, dict) or b.get("type", "text") == "text")
    return "" if content is None else orjson.dumps(content).decode()


def _args(v: Any) -> str:
    if isinstance(v, str):
        return v
    return orjson.dumps(v).decode() if v is not None else ""


def normalize(m: Any) -> Message:
    """One message dict of either shape → Message; raises BadRecord with the reason."""
    if not isinstance(m, dict):
        raise BadRecord(f"message is a JSON {type(m).__name__}, not an object")
    raw_role = m.get("role")
    role = ROLE_ALIASES.get(raw_role) if isinstance(raw_role, str) else None
    if role is None:
        raise BadRecord("message has no role" if raw_role is None else f"unknown role {str(raw_role)[:40]!r}")
    content, calls, results = m.get("content"), [], []
    if isinstance(content, list):
        texts = []
        for b in content:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind == "text":
                texts.append(b.get("text") or "")
            elif kind == "tool_use":
                calls.append((b.get("id"), b.get("name"), _args(b.get("input"))))
            elif kind == "tool_result":
                results.append((b.get("tool_use_id"), _block_text(b.get("content")), bool(b.get("is_error"))))
            elif isinstance(b, str):
                texts.append(b)
        text = "\n".join(texts)
        if results and not texts and role == "user":
            role = "tool"  # Anthropic: a user turn carrying only tool results is the tool's message
        if role == "tool" and results and not texts:
            text = "\n".join(r[1] for r in results)
    elif isinstance(content, str):
        text = content
    elif content is None:
        text = ""
    else:
        text = orjson.dumps(content).decode()
    for c in m.get("tool_calls") or ():
        if isinstance(c, dict):
            f = c.get("function") if isinstance(c.get("function"), dict) else c
            calls.append((c.get("id"), f.get("name"), _args(f.get("arguments"))))
    if role != "assistant":
        calls = []  # only assistant turns call tools
    flag = m.get("is_error")
    is_error = bool(flag) if flag is not None else (role == "tool" and not results and bool(ERROR_START.match(text)))
    tcid = m.get("tool_call_id")
    ts = to_epoch(m.get("timestamp", m.get("created_at", m.get("createdAt"))))
    return Message(role, text, calls, results, tcid if isinstance(tcid, str) else None, is_error, ts)


@dataclass(slots=True)
class Entry:
    """A message placed in its conversation: order in source, main-path position, tree links."""

    seq: int
    native_id: str
    parent_native_id: str | None
    position: int | None
    msg: Message


MSG_SCHEMA = pa.schema([("conversation_id", pa.string()), ("seq", pa.int32()), ("position", pa.int32()),
                        ("native_id", pa.string()), ("parent_native_id", pa.string()),
                        ("role", pa.string()), ("content", pa.string()), ("tool_call_count", pa.int32()),
                        ("created_at", pa.float64()), ("tool_call_id", pa.string())])
CALL_SCHEMA = pa.schema([("conversation_id", pa.string()), ("seq", pa.int32()), ("position", pa.int32()),
                         ("call_index", pa.int32()), ("call_id", pa.string()), ("name", pa.string()),
                         ("arguments", pa.string()), ("result_seq", pa.int32()), ("result_position", pa.int32()),
                         ("result_bytes", pa.int32()), ("is_error", pa.bool_())])
CONV_SCHEMA = pa.schema([("conversation_id", pa.string()), ("native_id", pa.string()), ("title", pa.string()),
                         ("provider", pa.string()), ("model", pa.string()), ("created_at", pa.float64()),
                         ("updated_at", pa.float64()), ("message_count", pa.int32()), ("fingerprint", pa.string())])
QUAR_SCHEMA = pa.schema([("location", pa.string()), ("reason", pa.string()), ("raw", pa.binary()),
                         ("raw_bytes", pa.int64())])


@dataclass
class Batch:
    """Columnar output of one parse task, plus what was read."""

    conv: dict[str, list] = field(default_factory=lambda: {n: [] for n in CONV_SCHEMA.names})
    msg: dict[str, list] = field(default_factory=lambda: {n: [] for n in MSG_SCHEMA.names})
    call: dict[str, list] = field(default_factory=lambda: {n: [] for n in CALL_SCHEMA.names})
    quar: dict[str, list] = field(default_factory=lambda: {n: [] for n in QUAR_SCHEMA.names})
    rows_read: int = 0
    messages_read: int = 0
    notes: list[str] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)

    def quarantine(self, location: str, reason: str, raw: bytes) -> None:
        q = self.quar
        q["location"].append(location)
        q["reason"].append(reason)
        q["raw"].append(raw[:RAW_CAP])
        q["raw_bytes"].append(len(raw))

    def add_conversation(self, cid: str, native_id: str, title: str | None, provider: str | None,
                         model: str | None, created_at: float | None, updated_at: float | None,
                         fingerprint: str, entries: list[Entry]) -> None:
        """Append one conversation: its row, its messages, its tool calls linked to their results."""
        if title is None:
            first = next((e.msg.content for e in entries if e.msg.role == "user" and e.msg.content.strip()), "")
            title = first.strip().split("\n", 1)[0][:80] or None
        stamps = [e.msg.ts for e in entries if e.msg.ts is not None]
        c = self.conv
        for k, v in (("conversation_id", cid), ("native_id", native_id), ("title", title), ("provider", provider),
                     ("model", model), ("created_at", created_at if created_at is not None else min(stamps, default=None)),
                     ("updated_at", updated_at if updated_at is not None else max(stamps, default=None)),
                     ("message_count", len(entries)), ("fingerprint", fingerprint)):
            c[k].append(v)
        m, k = self.msg, self.call
        by_id: dict[str, int] = {}  # call id -> row in self.call
        pending: deque[int] = deque()  # calls not yet answered, in order (for results without ids)
        for e in entries:
            g = e.msg
            for col, v in (("conversation_id", cid), ("seq", e.seq), ("position", e.position),
                           ("native_id", e.native_id), ("parent_native_id", e.parent_native_id), ("role", g.role),
                           ("content", g.content), ("tool_call_count", len(g.calls)), ("created_at", g.ts),
                           ("tool_call_id", g.tool_call_id if g.tool_call_id else (g.results[0][0] if g.results else None))):
                m[col].append(v)
            for i, (call_id, name, args) in enumerate(g.calls):
                row = len(k["seq"])
                for col, v in (("conversation_id", cid), ("seq", e.seq), ("position", e.position), ("call_index", i),
                               ("call_id", call_id), ("name", name), ("arguments", args), ("result_seq", None),
                               ("result_position", None), ("result_bytes", None), ("is_error", None)):
                    k[col].append(v)
                if call_id:
                    by_id[call_id] = row
                pending.append(row)
            if g.role == "tool" and g.results:
                for use_id, text, err in g.results:
                    self._link(by_id, pending, use_id, e, len(text.encode("utf-8")), err)
            elif g.role == "tool":
                self._link(by_id, pending, g.tool_call_id, e, None, g.is_error)

    def _link(self, by_id: dict[str, int], pending: deque[int], call_id: str | None, e: Entry,
              nbytes: int | None, err: bool) -> None:
        k = self.call
        row = by_id.get(call_id) if call_id else None
        if row is None or k["result_seq"][row] is not None:
            while pending and k["result_seq"][pending[0]] is not None:
                pending.popleft()
            if call_id or not pending:
                return  # answers a call we never saw: the message stays, unlinked
            row = pending.popleft()
        k["result_seq"][row], k["result_position"][row] = e.seq, e.position
        k["result_bytes"][row], k["is_error"][row] = nbytes, err

    def tables(self) -> dict[str, pa.Table]:
        return {"conv": pa.table(self.conv, schema=CONV_SCHEMA), "msg": pa.table(self.msg, schema=MSG_SCHEMA),
                "call": pa.table(self.call, schema=CALL_SCHEMA), "quar": pa.table(self.quar, schema=QUAR_SCHEMA)}


@dataclass
class Parsed:
    """What a worker sends back: arrow tables plus counters (pickles cheaply)."""

    tables: dict[str, pa.Table]
    rows_read: int
    messages_read: int
    notes: list[str]
    state: dict[str, Any]

    @classmethod
    def of(cls, b: Batch) -> Parsed:
        return cls(b.tables(), b.rows_read, b.messages_read, b.notes, b.state)
