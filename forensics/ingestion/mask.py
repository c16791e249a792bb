"""Secrets masked in a parse task's tables before the loader writes them (issue 27: never stored).

Every text column of every table a parser hands over (message text, tool arguments, titles, model names,
native ids, event details, a harness's side tables) and the quarantined raw bytes pass here, in the worker,
so the one place that feeds the warehouse is covered whatever the format. One RE2 pass per column
(``forensics.kernel.secret_rules.prefilter``, in pyarrow's C++) picks the few cells that may hold a secret; only those
are scanned in Python. Each find becomes a ``secrets_found`` row: where it was and what kind, never the value.
"""

from __future__ import annotations

import bisect
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from forensics.kernel import secret_rules

WAREHOUSE = {
    "conv": "conversations",
    "msg": "messages",
    "call": "tool_calls",
    "quar": "quarantine",
    "event": "events",
    "usage": "message_usage",
    "outcome": "conversation_outcomes",
}
KEYS = {"conversation_id", "source_id", "fingerprint", "role", "origin"}  # our own hashes and enumerations
FINDS_SCHEMA = pa.schema(
    [
        ("source_id", pa.string()),
        ("conversation_id", pa.string()),
        ("seq", pa.int32()),
        ("position", pa.int32()),
        ("field", pa.string()),
        ("location", pa.string()),
        ("kind", pa.string()),
        ("fingerprint", pa.string()),
        ("call_index", pa.int32()),
    ]
)


class Finds:
    """The rows of ``secrets_found`` one task collects."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {n: [] for n in FINDS_SCHEMA.names}

    def add(
        self,
        source_id: str,
        field: str,
        found: list[secret_rules.Find],
        conversation_id: str | None = None,
        seq: int | None = None,
        position: int | None = None,
        location: str | None = None,
        call_index: int | None = None,
    ) -> None:
        location = secret_rules.mask(location) if location else location  # a file name that holds a key, say
        for f in found:
            for col, v in zip(
                FINDS_SCHEMA.names,
                (source_id, conversation_id, seq, position, field, location, f.kind, f.fingerprint, call_index),
            ):
                self.cols[col].append(v)

    def table(self) -> pa.Table:
        return pa.table(self.cols, schema=FINDS_SCHEMA)


def mask_tables(
    tables: dict[str, pa.Table],
    finds: Finds,
    source_of: dict[str, str],
    default_source: str = "",
    names: dict[str, str] | None = None,
) -> dict[str, pa.Table]:
    """``tables`` with every secret in their text and byte columns masked; the finds added to ``finds``.
    ``source_of`` maps conversation ids to their sources (rows without one take ``default_source``).
    Every text cell of every table goes through one RE2 call per rule group: a call costs milliseconds
    (the pattern is compiled each time), a cell microseconds."""
    names = WAREHOUSE if names is None else names
    cols = [
        (key, name)
        for key, t in tables.items()
        for name, kind in zip(t.column_names, t.schema.types)
        if name not in KEYS and (pa.types.is_string(kind) or pa.types.is_large_string(kind))
    ]
    # one array, not a chunk per column: pyarrow compiles the pattern again for every chunk (10 ms each)
    cells = pa.chunked_array(
        [
            pa.concat_arrays(
                [c.cast(pa.large_string()) for key, name in cols for c in tables[key].column(name).chunks]
                or [pa.array([], pa.large_string())]
            )
        ]
    )
    starts, n = [], 0
    for key, _ in cols:
        starts.append(n)
        n += tables[key].num_rows
    hits = _hits(cells, secret_rules.prefilter())
    values: dict[tuple[str, str], list[Any]] = {}
    for cell in sorted(hits):
        c = bisect.bisect_right(starts, cell) - 1
        key, name = cols[c]
        _mask_cell(
            tables[key], key, name, cell - starts[c], hits[cell], values, finds, source_of, default_source, names
        )
    out = dict(tables)
    for (key, name), v in values.items():
        t = out[key]
        i = t.column_names.index(name)
        out[key] = t.set_column(i, t.field(i), pa.array(v, t.field(i).type))
    for key, t in out.items():
        for i, (name, kind) in enumerate(zip(t.column_names, t.schema.types)):
            if pa.types.is_binary(kind) and t.num_rows:
                out[key] = _mask_bytes(out[key], i, f"{names.get(key, key)}.{name}", finds, source_of, default_source)
    return out


def _mask_cell(
    t: pa.Table,
    key: str,
    name: str,
    row: int,
    only: list[int],
    values: dict[tuple[str, str], list[Any]],
    finds: Finds,
    source_of: dict[str, str],
    default_source: str,
    names: dict[str, str],
) -> None:
    """One cell that may hold a secret: scanned, and masked in ``values`` (its column as a list) when it does.
    Message text arrives plain (``duckparse.unescape``), so the filter's groups are the ones to scan."""
    text = t.column(name)[row].as_py()
    field = f"{names.get(key, key)}.{name}"
    found = secret_rules.scan(text, only)
    if not found:
        return
    where = _where(t, row)
    finds.add(
        source_of.get(where.get("conversation_id") or "", where.pop("source_id", default_source)), field, found, **where
    )
    masked = secret_rules.mask(text, found)
    if (key, name) not in values:  # the column as a list, once
        values[key, name] = t.column(name).to_pylist()
    values[key, name][row] = masked


def _hits(col: pa.ChunkedArray, patterns: tuple[str, ...]) -> dict[int, list[int]]:
    """The rows where any of ``patterns`` matches (RE2, in C++), each with the indices of those that do."""
    hits: dict[int, list[int]] = {}
    if col.null_count == len(col):
        return hits
    for k, p in enumerate(patterns):
        for r in pc.indices_nonzero(pc.fill_null(pc.match_substring_regex(col, p), False)).to_pylist():
            hits.setdefault(r, []).append(k)
    return hits


def _where(t: pa.Table, row: int) -> dict[str, Any]:
    """The source, conversation, seq and position of a row, as far as its table has them."""
    return {
        k: t.column(k)[row].as_py()
        for k in ("source_id", "conversation_id", "seq", "position", "location", "call_index")
        if k in t.column_names
    }


def _mask_bytes(
    t: pa.Table, i: int, field: str, finds: Finds, source_of: dict[str, str], default_source: str
) -> pa.Table:
    """Raw bytes (quarantined lines, maybe not UTF-8): masked as text, every other byte kept."""
    values = t.column(i).to_pylist()
    changed = False
    for r, raw in enumerate(values):
        if not raw:
            continue
        text = raw.decode("utf-8", "surrogateescape")
        found = secret_rules.scan(text)
        if found:
            where = _where(t, r)
            finds.add(
                source_of.get(where.get("conversation_id") or "", where.pop("source_id", default_source)),
                field,
                found,
                **where,
            )
            values[r] = secret_rules.mask(text, found).encode("utf-8", "surrogateescape")
            changed = True
    return t.set_column(i, t.field(i), pa.array(values, t.field(i).type)) if changed else t
