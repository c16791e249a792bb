"""The fast decoder: message arrays and JSONL entries of the common shapes, without a dict per message and
without a Python string per message text.

msgspec decodes straight into typed structs, skipping fields nobody reads, and keeps a string ``content``
as its raw JSON literal (``JsonText``): polars unescapes a batch of them (``duckparse.unescape``). This cuts the per-message cost of a
million-message import by about three (see docs/scale.md). Anything unusual (an unknown role, a field of an
unexpected type, a huge integer) raises ``Unusual`` and the caller re-reads that record with orjson and
``normalize``, so both paths give the same rows and quarantine reasons.

The caller must have checked that the bytes are valid UTF-8 (``valid_utf8``): msgspec does not check the
strings it skips, where orjson rejects the record.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
from msgspec import UNSET, Raw, Struct, UnsetType

from forensics.formats.kit.records import ROLE_ALIASES, JsonText, Message, answered, finish, interpret_content

INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1  # orjson reads integers outside this range as floats


class Unusual(Exception):
    """This record needs the general path (orjson + normalize)."""


class _Fn(Struct, gc=False):
    name: str | None = None
    arguments: str | None = None


class _Call(Struct, gc=False):
    id: str | None = None
    function: _Fn | None = None
    name: str | None = None  # a flat call: name and arguments beside the id
    arguments: str | None = None


class _Msg(Struct, gc=False):
    role: str | None | UnsetType = UNSET
    content: Raw = Raw(b"null")
    tool_calls: list[_Call] | None = None
    tool_call_id: Any = None
    is_error: Any = None
    timestamp: Any = UNSET
    created_at: Any = UNSET
    createdAt: Any = UNSET  # noqa: N815  (the field's name in the source)
    id: Any = None
    parent_id: Any = None
    name: Any = None  # a tool message's tool (linked by it when the message has no tool_call_id)


_array = msgspec.json.Decoder(list[_Msg])
_entry = msgspec.json.Decoder(_Msg)


def valid_utf8(chunks: list[bytes]) -> bool:
    """All of ``chunks`` are valid UTF-8, checked by polars in Rust (no Python strings built)."""
    import polars as pl

    try:
        pl.Series([b"".join(chunks)], dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.ComputeError:
        return False
    return True


def decode_array(raw: bytes) -> list[_Msg]:
    """A JSON array of messages; raises Unusual when it is anything else or not of the common shape."""
    try:
        return _array.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        raise Unusual from None


def decode_entry(raw: bytes) -> _Msg:
    """One JSONL entry line."""
    try:
        return _entry.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        raise Unusual from None


def check_int(v: Any) -> Any:
    """Integers orjson would read as floats take the general path."""
    if type(v) is int and not INT_MIN <= v <= INT_MAX:
        raise Unusual
    return v


def message(m: _Msg, no_u_escapes: bool = False) -> Message:
    """The Message ``normalize`` would build from the same JSON object. ``no_u_escapes``: the caller knows
    the record holds no ``\\u`` escape, so a string content needs no check."""
    raw_role = m.role
    role = ROLE_ALIASES.get(raw_role) if type(raw_role) is str else None
    if role is None:
        raise Unusual  # normalize words the quarantine reason
    raw = JsonText(m.content)  # the one copy out of the source buffer
    results: list[tuple[str | None, str, bool]] = []
    calls: list[tuple[str | None, str | None, str]] = []
    if raw[:1] == b'"':
        text = raw if no_u_escapes or raw.find(b"\\u") < 0 else orjson.loads(bytes(raw))
    elif raw == b"null":
        text = ""
    else:
        text, calls, results, role = interpret_content(orjson.loads(bytes(raw)), role)
    if role == "assistant" and m.tool_calls:
        for c in m.tool_calls:
            f = c.function if c.function is not None else c
            calls.append((c.id, f.name, f.arguments if f.arguments is not None else ""))
    ts = (
        m.timestamp
        if m.timestamp is not UNSET
        else m.created_at
        if m.created_at is not UNSET
        else (m.createdAt if m.createdAt is not UNSET else None)
    )
    return finish(
        role,
        text,
        calls,
        results,
        check_int(m.is_error),
        answered(role, m.tool_call_id, m.id),
        check_int(ts),
        name=check_int(m.name),
        speaker=check_int(m.name),
    )
