"""SQLite databases with one row per conversation and a column holding a JSON array of messages.

Read through Python's sqlite3 with a ``mode=ro`` URI (DuckDB's sqlite extension cannot be fetched offline).
The parent process reads a cheap index (rowid, id, size, updated_at) to find new or changed rows; worker
processes fetch and parse those rows by rowid range.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from forensics.formats.kit import fastpath, values
from forensics.formats.kit.declare import Chunks, Format, connect_ro
from forensics.formats.kit.records import (
    BadRecord,
    Batch,
    Entry,
    Parsed,
    gc_paused,
    json_text,
    normalize,
    stable_id,
    to_epoch,
)
from forensics.kernel.errors import SourceError

if TYPE_CHECKING:  # imported by the worker (with DuckDB and Arrow), so `forensics formats` stays light (issue 28)
    from forensics.formats.kit import duckparse

DEFAULT_TABLE, DEFAULT_COLUMN = "ai_conversations", "messages"
CHUNK_BYTES = 4 << 20  # rows per parse task: about this many bytes of JSON (memory: see load.tune)
CHUNK_ROWS = 200
META_COLUMNS = ("id", "title", "model", "provider", "created_at", "updated_at")
SAMPLE_ROWS = 5


@dataclass(frozen=True)
class Target:
    """Where the messages live, and which metadata columns exist beside them."""

    table: str
    column: str
    meta: dict[str, str]  # our name -> the column's actual name

    def select(self, what: str) -> str:
        cols = ", ".join(_q(self.meta[k]) if k in self.meta else "NULL" for k in META_COLUMNS)
        return f"SELECT rowid, {cols}, {what} FROM {_q(self.table)}"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def resolve_target(con: sqlite3.Connection, path: str, table: str | None, column: str | None) -> Target:
    """The table/column to read: given, the default, or the single auto-detected candidate."""
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except (sqlite3.DatabaseError, UnicodeDecodeError) as e:  # a damaged schema's message is not always UTF-8
        raise SourceError(path, f"not a readable SQLite database ({e})", "check the file or pass --format") from None
    if table is not None or column is not None:
        t = table or DEFAULT_TABLE
        if t not in tables:
            raise SourceError(
                path, f"no table {t!r} (tables: {', '.join(tables) or 'none'})", "pass an existing --table"
            )
        c = column or DEFAULT_COLUMN
        if c not in _columns(con, t):
            raise SourceError(
                path,
                f"table {t!r} has no column {c!r} (columns: {', '.join(_columns(con, t))})",
                "pass an existing --column",
            )
        return _target(con, t, c)
    if DEFAULT_TABLE in tables and DEFAULT_COLUMN in _columns(con, DEFAULT_TABLE):
        return _target(con, DEFAULT_TABLE, DEFAULT_COLUMN)
    found = [(t, c) for t in tables for c in _text_columns(con, t) if _holds_messages(con, t, c)]
    if not found:
        raise SourceError(
            path,
            f"no column holding JSON message arrays (tables: {', '.join(tables) or 'none'})",
            "pass --table and --column",
        )
    if len(found) > 1:
        raise SourceError(
            path,
            "several columns hold JSON message arrays: " + ", ".join(f"{t}.{c}" for t, c in found),
            "choose one with --table and --column",
        )
    return _target(con, *found[0])


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in con.execute(f"PRAGMA table_info({_q(table)})")]


def _text_columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [
        r[1]
        for r in con.execute(f"PRAGMA table_info({_q(table)})")
        if r[2].upper() in ("", "TEXT", "JSON", "BLOB") or "CHAR" in r[2].upper() or "CLOB" in r[2].upper()
    ]


def _holds_messages(con: sqlite3.Connection, table: str, column: str) -> bool:
    rows = con.execute(f"SELECT {_q(column)} FROM {_q(table)} WHERE {_q(column)} IS NOT NULL LIMIT {SAMPLE_ROWS}")
    seen = False
    for (v,) in rows:
        try:
            data = orjson.loads(v) if isinstance(v, (str, bytes)) else None
        except orjson.JSONDecodeError:
            return False
        if not (isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m for m in data)):
            return False
        seen = True
    return seen


REPEATED = "rows that repeat an earlier row's id are kept as conversations of their own (id#2, id#3...)"


def _target(con: sqlite3.Connection, table: str, column: str) -> Target:
    cols = {c.lower(): c for c in _columns(con, table) if c != column}
    return Target(table, column, {k: cols[k] for k in META_COLUMNS if k in cols})


@dataclass(frozen=True)
class IndexRow:
    rowid: int
    native_id: str
    fingerprint: str
    nbytes: int
    repeat: bool = False  # its id is an earlier row's: kept as a conversation of its own (``id#2``)


def read_index(con: sqlite3.Connection, path: str, target: Target) -> list[IndexRow]:
    """Every row's identity and change fingerprint, without fetching the message text."""
    sql = target.select(f"length(CAST({_q(target.column)} AS BLOB))")
    try:
        rows = con.execute(sql).fetchall()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as e:
        raise SourceError(
            path, f"cannot read {target.table} ({e})", "check the table (WITHOUT ROWID tables are not supported)"
        ) from None
    out = []
    seen: Counter[str] = Counter()  # a table without a key may hold one id twice: later rows get ``id#2``...
    for r in rows:
        rowid, nid, updated, nbytes = r[0], r[1], r[6], r[7]
        native = str(_text(nid)) if nid is not None else str(rowid)
        seen[native] += 1
        k = seen[native]
        out.append(IndexRow(rowid, native if k == 1 else f"{native}#{k}", f"{nbytes}:{updated}", nbytes or 0, k > 1))
    return out


# Message arrays parsed by DuckDB (duckparse) or all in Python (msgspec fast path, then orjson + normalize). Off:
# on bench.db both cost the same CPU (docs/scale.md, issue 28 part 1) and DuckDB in each worker holds ~20 MB more,
# which the ingest's 500 MB bound does not leave. tests/test_duckparse.py checks both give the same warehouse.
IN_DUCKDB = False


def parse_rows(path: str, target: Target, source_id: str, rows: list[IndexRow]) -> Parsed:
    """Worker: fetch the given rows (by rowid range) and parse their message arrays: in DuckDB when ``IN_DUCKDB``
    (``duckparse``; the rows of an unusual shape in Python), else in Python."""
    import polars as pl

    from forensics.formats.kit import duckparse

    want = {r.rowid: r for r in rows}
    lo, hi = min(want), max(want)
    con = connect_ro(path, raw_text=True)
    b = Batch()
    try:
        cur = con.execute(target.select(_q(target.column)) + " WHERE rowid BETWEEN ? AND ?", (lo, hi))
        fetched = [r for r in cur if r[0] in want]
    finally:
        con.close()
    raws = [r[7] for r in fetched]
    read = duckparse.read(duckparse.candidates(raws)) if IN_DUCKDB else duckparse.Read({}, Counter())
    fast = fastpath.valid_utf8([r for r in raws if isinstance(r, bytes)]) if len(read.rows) < len(raws) else False
    cids: dict[int, str] = {}
    with gc_paused():
        for k, (rowid, _nid, title, model, provider, created, updated, raw) in enumerate(fetched):
            ix = want[rowid]
            if k in read.rows:
                cids[k] = _sql_row(b, source_id, ix, read.rows[k], title, model, provider, created, updated)
            else:
                _parse_row(b, target, source_id, ix, raw, title, model, provider, created, updated, fast)
        b.unlinked.update(read.unlinked)
        parsed = Parsed.of(b)
        del b, fetched  # freed before the collector runs again
    if cids:
        msg, call = duckparse.tables(cids)
        parsed.tables["msg"] = pl.concat([parsed.tables["msg"], msg])
        parsed.tables["call"] = pl.concat([parsed.tables["call"], call])
    return parsed


def _sql_row(
    b: Batch,
    source_id: str,
    ix: IndexRow,
    got: duckparse.Summary,
    title: object,
    model: object,
    provider: object,
    created: object,
    updated: object,
) -> str:
    """The conversation row of a row DuckDB read (its messages are in DuckDB); its id."""
    b.rows_read += 1
    b.messages_read += got.messages
    b.state["found"] = b.state.get("found", 0) + 1
    if ix.repeat and REPEATED not in b.notes:
        b.notes.append(REPEATED)
    created_at, updated_at = to_epoch(_text(created)), to_epoch(_text(updated))
    name = _s(title)
    return b.conversation(
        stable_id(source_id, ix.native_id),
        ix.native_id,
        got.first_user or "" if name is None else name,
        name is None,
        _s(provider),
        _s(model),
        got.first_ts if created_at is None else created_at,
        got.last_ts if updated_at is None else updated_at,
        got.messages,
        ix.fingerprint,
    )


def _parse_row(
    b: Batch,
    target: Target,
    source_id: str,
    ix: IndexRow,
    raw: str | bytes | None,
    title: object,
    model: object,
    provider: object,
    created: object,
    updated: object,
    fast: bool = False,
) -> None:
    b.rows_read += 1
    where = f"{target.table}:{ix.rowid}"
    entries = _fast_entries(raw) if fast and isinstance(raw, bytes) else None
    if entries is not None:
        b.messages_read += len(entries)
    else:
        entries = _general_entries(b, target, where, raw)
        if entries is None:
            return
    b.state["found"] = b.state.get("found", 0) + 1
    if ix.repeat and REPEATED not in b.notes:
        b.notes.append(REPEATED)
    b.add_conversation(
        stable_id(source_id, ix.native_id),
        ix.native_id,
        _s(title),
        _s(provider),
        _s(model),
        to_epoch(_text(created)),
        to_epoch(_text(updated)),
        ix.fingerprint,
        entries,
    )


def _fast_entries(raw: bytes) -> list[Entry] | None:
    """Every message of a common-shape array (valid UTF-8 checked by the caller); None: take the general path."""
    no_u = b"\\u" not in raw
    try:
        entries, prev = [], None
        for i, m in enumerate(fastpath.decode_array(raw)):
            msg = fastpath.message(m, no_u)
            mid = fastpath.check_int(m.id)
            nid = str(mid) if isinstance(mid, (str, int)) and not isinstance(mid, bool) else str(i)
            entries.append(Entry(i, nid, prev, i, msg))
            prev = nid
    except fastpath.Unusual:
        return None
    return entries


def _general_entries(b: Batch, target: Target, where: str, raw: str | bytes | None) -> list[Entry] | None:
    """orjson + normalize: any shape, bad messages quarantined; None when the row holds no message array."""
    raw_bytes = raw.encode("utf-8") if isinstance(raw, str) else (raw or b"")
    try:
        data = values.loads(raw_bytes) if raw is not None else None
    except orjson.JSONDecodeError as e:
        b.messages_read += 1
        b.state.setdefault("if_none_found", f"no row holds a JSON array of messages ({where}: {values.json_reason(e)})")
        b.quarantine(where, f"{values.json_reason(e)} in {target.column}", raw_bytes)
        return None
    if not isinstance(data, list):
        b.messages_read += 1
        b.state.setdefault(
            "if_none_found",
            f"no row holds a JSON array of messages ({where} holds {_kind(data)}); pass the right --table/--column",
        )
        b.quarantine(where, f"{target.column} is {_kind(data)}, not an array of messages", raw_bytes)
        return None
    entries, prev = [], None
    for i, m in enumerate(data):
        b.messages_read += 1
        try:
            msg = normalize(m)
        except BadRecord as e:
            b.quarantine(f"{where}[{i}]", str(e), json_text(m).encode())
            continue
        mid = m.get("id")
        nid = str(mid) if isinstance(mid, (str, int)) and not isinstance(mid, bool) else str(i)
        entries.append(Entry(i, nid, prev, i, msg))
        prev = nid
    return entries


def _kind(data: object) -> str:
    names: dict[type, str] = {dict: "object", str: "string"}
    return "NULL" if data is None else "a JSON " + names.get(type(data), type(data).__name__)


def _text(v: object) -> object:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def _s(v: object) -> str | None:
    v = _text(v)
    return None if v is None else str(v)


def chunks(path: str, source_id: str, options: dict[str, Any], stored: dict[str, str]) -> Chunks:
    """The parse tasks of the new and changed rows, about CHUNK_BYTES of JSON or CHUNK_ROWS rows each; a row
    whose conversation is ``stored`` with the same fingerprint is not fetched."""
    try:
        con = connect_ro(path)
    except Exception as e:  # sqlite3 raises several types for unreadable files
        raise SourceError(path, f"cannot open as SQLite ({e})", "check the file and its permissions") from None
    try:
        target = resolve_target(con, path, options.get("table"), options.get("column"))
        index = read_index(con, path, target)
    finally:
        con.close()
    todo = [ix for ix in index if stored.get(stable_id(source_id, ix.native_id)) != ix.fingerprint]
    tasks: list[tuple[Callable[..., Parsed], tuple[Any, ...], int]] = []
    chunk: list[IndexRow] = []
    nbytes = 0
    for k, ix in enumerate(todo, 1):
        chunk.append(ix)
        nbytes += ix.nbytes
        if nbytes >= CHUNK_BYTES or len(chunk) >= CHUNK_ROWS or k == len(todo):
            tasks.append((parse_rows, (path, target, source_id, chunk), nbytes))
            chunk, nbytes = [], 0
    return Chunks(tasks, len(index), len(index) - len(todo))


FORMAT = Format(
    "sqlite",
    "a SQLite table with one row per conversation and a JSON array of messages",
    lambda probe: probe.is_sqlite,
    suffixes=(".db", ".sqlite", ".sqlite3"),
    options=("table", "column"),
    chunks=chunks,
)
