"""JSONL session files: a header line, then entries linked by ``parent_id`` into a tree.

The conversation is the path from the root to the newest leaf; entries on other branches are kept with
``on_main_path = false``. Every line is either imported or quarantined with its raw bytes and a reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import fastpath, values
from forensics.formats.kit.declare import Format, Probe
from forensics.formats.kit.records import (
    BadRecord,
    Batch,
    Entry,
    Message,
    Parsed,
    chain,
    leaves,
    normalize,
    read_object,
    split_lines,
    stable_id,
    to_epoch,
)

SNIFF_LINES = 5
Nodes = dict[str, tuple[int, str | None, Message, float | None]]  # entry id -> (order, parent, message, time)


def parse_file(path: str, source_id: str, fingerprint: str) -> Parsed:
    """Worker: parse one session file completely (files are one conversation each)."""
    data = Path(path).read_bytes()
    lines = split_lines(data)
    b = Batch()
    b.rows_read = len(lines)
    name = Path(path).name
    header, objects, start = None, 0, 0
    first = _loads(lines[0]) if lines else None
    if isinstance(first, dict) and _is_header(first):
        header, objects, start = first, 1, 1
    else:
        b.notes.append("no header line: session id taken from the file name")
        header = {}
    b.messages_read = len(lines) - start
    nodes, order, objects, entries_seen = _read_entries(b, lines, start, name, fastpath.valid_utf8([data]), objects)
    if lines and objects == 0:
        b.state["error"] = "no line is a JSON object; not a JSONL session file"
        return Parsed.of(b)
    if objects > start and entries_seen == 0:
        b.state["error"] = "no line is a message entry (an object with role); not a JSONL session file"
        return Parsed.of(b)
    main = _main_path(nodes, order)
    entries = [Entry(seq, eid, parent, main.get(eid), msg) for eid in order for seq, parent, msg, _ in (nodes[eid],)]
    native = str(header.get("id") or Path(path).stem)
    b.add_conversation(
        stable_id(source_id, native),
        native,
        _opt(header.get("title")),
        _opt(header.get("provider")),
        _opt(header.get("model")),
        to_epoch(header.get("created_at")),
        None,
        fingerprint,
        entries,
    )
    return Parsed.of(b)


def _read_entries(
    b: Batch, lines: list[bytes], start: int, name: str, fast: bool, objects: int
) -> tuple[Nodes, list[str], int, int]:
    """Every entry line → nodes in file order, or quarantined; also counts JSON objects and message entries."""
    entries_seen = 0
    nodes: Nodes = {}
    order: list[str] = []
    for lineno in range(start + 1, len(lines) + 1):
        raw = lines[lineno - 1].rstrip(b"\r")
        where = f"{name}:{lineno}"
        if not raw.strip():
            b.quarantine(where, "empty line", raw)
            continue
        entry = _fast_entry(raw) if fast else None
        if entry is not None:
            objects += 1
            eid, parent, msg = entry
            if eid in nodes:
                b.quarantine(where, f"duplicate entry id {eid[:40]}", raw)
                continue
            entries_seen += 1
            nodes[eid] = (len(order), parent, msg, msg.ts)
            order.append(eid)
            continue
        obj, reason = read_object(raw)
        if reason:
            b.quarantine(where, reason, raw)
            continue
        objects += 1
        eid = obj.get("id")
        if eid is None or isinstance(eid, (bool, dict, list)):
            b.quarantine(where, "entry has no id", raw)
            continue
        eid = str(eid)
        if eid in nodes:
            b.quarantine(where, f"duplicate entry id {eid[:40]}", raw)
            continue
        entries_seen += "role" in obj
        try:
            msg = normalize(obj)
        except BadRecord as e:
            b.quarantine(where, str(e), raw)
            continue
        parent = obj.get("parent_id")
        nodes[eid] = (len(order), None if parent is None else str(parent), msg, msg.ts)
        order.append(eid)
    return nodes, order, objects, entries_seen


def _fast_entry(raw: bytes) -> tuple[str, str | None, Message] | None:
    """(entry id, parent id, message) of a common-shape entry line; None: take the general path."""
    try:
        e = fastpath.decode_entry(raw)
        eid = fastpath.check_int(e.id)
        if eid is None or isinstance(eid, (bool, dict, list)):
            return None
        parent = fastpath.check_int(e.parent_id)
        return str(eid), None if parent is None else str(parent), fastpath.message(e)
    except fastpath.Unusual:
        return None


def _main_path(nodes: Nodes, order: list[str]) -> dict[str, int]:
    """entry id -> position on the path root -> newest leaf (newest by timestamp, then by file order)."""
    parent_of = {e: nodes[e][1] for e in order}
    leaf = max(
        leaves(parent_of),
        key=lambda e: (nodes[e][3] if nodes[e][3] is not None else float("-inf"), nodes[e][0]),
        default=None,
    )
    return {eid: i for i, eid in enumerate(chain(leaf, parent_of))}


def _is_header(obj: dict[str, Any]) -> bool:
    return obj.get("type") == "session" or ("role" not in obj and "parent_id" not in obj and "content" not in obj)


def _loads(raw: bytes) -> object:
    try:
        return values.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _opt(v: object) -> str | None:
    return None if v is None else str(v)


def looks_like_jsonl(head: bytes) -> bool:
    """Sniff: one of the first lines parses as a JSON object."""
    for line in head.split(b"\n")[:SNIFF_LINES]:
        if isinstance(_loads(line), dict):
            return True
    return False


def _sniff(probe: Probe) -> bool:
    return not (probe.is_sqlite or probe.is_zip) and (
        probe.path.suffix.lower() == ".jsonl" or looks_like_jsonl(probe.head)
    )


FORMAT = Format(
    "jsonl",
    "JSONL session trees: a header line, then entries linked by id/parent_id",
    _sniff,
    task=parse_file,
    suffixes=(".jsonl",),
)
