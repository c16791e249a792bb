"""Secrets masked in a parse task's tables before the loader writes them (issue 27: never stored).

Every text column of every table a parser hands over (message text, tool arguments, titles, model names,
native ids, event details, a harness's side tables) and the quarantined raw bytes pass here, in the worker,
so the one place that feeds the warehouse is covered whatever the format. One regex pass per pattern over every column
(``forensics.kernel.secret_rules.prefilter``, polars' Rust regex) picks the few cells that may hold a secret; only those
are scanned in Python. Each find becomes a ``secrets_found`` row: where it was and what kind, never the value.
"""

from __future__ import annotations

import bisect
from typing import Any

import polars as pl

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
FINDS_SCHEMA = pl.Schema(
    {
        "source_id": pl.String(),
        "conversation_id": pl.String(),
        "seq": pl.Int32(),
        "position": pl.Int32(),
        "field": pl.String(),
        "location": pl.String(),
        "kind": pl.String(),
        "fingerprint": pl.String(),
        "call_index": pl.Int32(),
    }
)


class Finds:
    """The rows of ``secrets_found`` one task collects."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {n: [] for n in FINDS_SCHEMA}

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
                FINDS_SCHEMA,
                (source_id, conversation_id, seq, position, field, location, f.kind, f.fingerprint, call_index),
            ):
                self.cols[col].append(v)

    def table(self) -> pl.DataFrame:
        return pl.DataFrame(self.cols, schema=FINDS_SCHEMA)


def mask_tables(
    tables: dict[str, pl.DataFrame],
    finds: Finds,
    source_of: dict[str, str],
    default_source: str = "",
    names: dict[str, str] | None = None,
) -> dict[str, pl.DataFrame]:
    """``tables`` with every secret in their text and byte columns masked; the finds added to ``finds``.
    ``source_of`` maps conversation ids to their sources (rows without one take ``default_source``).
    Every text cell of every table goes through one regex call per rule group: a call costs milliseconds
    (the pattern is compiled each time), a cell microseconds."""
    names = WAREHOUSE if names is None else names
    cols = [
        (key, name)
        for key, t in tables.items()
        for name, kind in t.schema.items()
        if name not in KEYS and kind == pl.String
    ]
    # one series, not one per column: the pattern is compiled once per call (10 ms each)
    cells = pl.concat([tables[key][name] for key, name in cols]).rechunk() if cols else pl.Series([], dtype=pl.String)
    starts, n = [], 0
    for key, _ in cols:
        starts.append(n)
        n += tables[key].height
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
        out[key] = t.with_columns(pl.Series(name, v, dtype=t.schema[name]))
    for key, t in out.items():
        for name, kind in t.schema.items():
            if kind == pl.Binary and t.height:
                out[key] = _mask_bytes(
                    out[key], name, f"{names.get(key, key)}.{name}", finds, source_of, default_source
                )
    return out


def _mask_cell(
    t: pl.DataFrame,
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
    text = t[name][row]
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
        values[key, name] = t[name].to_list()
    values[key, name][row] = masked


def _hits(col: pl.Series, patterns: tuple[str, ...]) -> dict[int, list[int]]:
    """The rows where any of ``patterns`` matches (Rust's regex, linear-time), each with the indices of those that
    do; the keyword rule's pattern (the first) narrowed by ``secret_rules.keyword_kept``."""
    hits: dict[int, list[int]] = {}
    if col.null_count() == len(col):
        return hits
    for k, p in enumerate(patterns):
        rows = col.str.contains(p).arg_true()
        if k == 0 and len(rows):  # the keyword rule's: only where a match may be kept (most are code: token: str)
            a, b, c = secret_rules.keyword_kept()
            got = col.gather(rows)
            rows = rows.filter((got.str.contains(a) & got.str.contains(b)) | got.str.contains(c))
        for r in rows.to_list():
            hits.setdefault(r, []).append(k)
    return hits


def _where(t: pl.DataFrame, row: int) -> dict[str, Any]:
    """The source, conversation, seq and position of a row, as far as its table has them."""
    return {
        k: t[k][row]
        for k in ("source_id", "conversation_id", "seq", "position", "location", "call_index")
        if k in t.columns
    }


def _mask_bytes(
    t: pl.DataFrame, name: str, field: str, finds: Finds, source_of: dict[str, str], default_source: str
) -> pl.DataFrame:
    """Raw bytes (quarantined lines, maybe not UTF-8): masked as text, every other byte kept."""
    values = t[name].to_list()
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
    return t.with_columns(pl.Series(name, values, dtype=pl.Binary)) if changed else t
