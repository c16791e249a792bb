"""Decision-memory harness databases (docs/formats.md#decision-memory-harness-databases-decision-memory): ``conversation_messages`` + ``decision_events``
(+ ``decision_embeddings``) in one SQLite file, recognised by those tables.

Messages become conversations keyed by project_id + conversation_id (native id ``project/conversation``),
ordered by created_at then id; a ``message_hash`` already seen is the same message (the harness's
``INSERT OR IGNORE``) and is skipped and counted. Decisions, their rejected options and their vectors go to
the ``decisions`` and ``decision_alternatives`` tables, which the source owns: a re-read replaces them.
Decision and embedding rows hold no message, so they count as skipped (stored elsewhere), like Claude Code
events; a row that cannot be used is quarantined with its raw values. Column names vary between harnesses:
each field takes the first of a few names that exists, and only conversation_id, role and content (and a
title or a content for decisions) are required. The file is read through ``sqlite.connect_ro``: read-only.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from forensics.formats.kit.declare import Format, Probe, connect_ro
from forensics.formats.kit.records import ROLE_ALIASES, BadRecord, Batch, Entry, Parsed, finish, stable_id, to_epoch
from forensics.kernel.errors import SourceError

NAME = "decision-memory"
MESSAGES, DECISIONS, EMBEDDINGS = "conversation_messages", "decision_events", "decision_embeddings"
# our field -> the column names harnesses use for it, first match wins (case-insensitive)
MESSAGE_FIELDS = {
    "id": ("id", "message_id"),
    "hash": ("message_hash", "hash"),
    "project": ("project_id", "project"),
    "conversation": ("conversation_id", "session_id"),
    "role": ("role", "speaker"),
    "content": ("content", "text", "message"),
    "created_at": ("created_at", "timestamp", "created"),
}
DECISION_FIELDS = {
    "id": ("id", "decision_id"),
    "project": ("project_id", "project"),
    "conversation": ("conversation_id", "session_id"),
    "source": ("source_message_id", "message_id"),
    "type": ("decision_type", "type", "category"),
    "title": ("title", "summary"),
    "content": ("decision_content", "content", "decision", "conclusion"),
    "reason": ("reason",),
    "rejected": ("alternative_rejected", "alternatives_rejected", "rejected_alternatives", "rejected"),
    "importance": ("importance_score", "importance"),
    "created_at": ("created_at", "timestamp"),
    "updated_at": ("updated_at",),
    "embedding": ("embedding", "vector"),
    "embedding_model": ("embedding_model",),
}
EMBEDDING_FIELDS = {
    "decision": ("decision_id", "id"),
    "model": ("embedding_model", "model"),
    "embedding": ("embedding", "vector"),
    "updated_at": ("updated_at", "created_at"),
}
SPLIT = re.compile(r"[,，、;；/|]")
NONE_WORDS = {"", "null", "none", "n/a", "na", "无", "没有", "-", "—"}  # an extractor's way of saying "no option"
DEFAULT_IMPORTANCE = 1.0  # the harness's column default


def _sniff(probe: Probe) -> bool:
    """A SQLite file holding both a conversation_messages and a decision_events table."""
    return {MESSAGES, DECISIONS} <= {t.lower() for t in probe.tables}


def _tables(con: sqlite3.Connection) -> dict[str, str]:
    return {r[0].lower(): r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def split_alternatives(text: str | None) -> list[str]:
    """``"MySQL、MongoDB"`` -> ``["MySQL", "MongoDB"]``; a JSON list of strings is taken as it is; "null",
    "无" and empty pieces are no option."""
    if text is None:
        return []
    parts: list[Any] | None = None
    if text.lstrip().startswith("["):
        try:
            data = orjson.loads(text)
            parts = data if isinstance(data, list) and all(isinstance(x, str) for x in data) else None
        except orjson.JSONDecodeError:
            parts = None
    out = []
    for p in parts if parts is not None else SPLIT.split(text):
        p = p.strip()
        if p.lower() not in NONE_WORDS and p not in out:
            out.append(p)
    return out


def vector(value: Any) -> list[float]:
    """An embedding stored as little-endian float32 bytes or as a JSON array of numbers."""
    import numpy as np  # here, not at the top: `forensics formats` imports every importer

    if isinstance(value, (bytes, memoryview)):
        raw = bytes(value)
        if raw.lstrip().startswith(b"["):
            try:
                return vector(raw.decode("utf-8"))
            except (BadRecord, UnicodeDecodeError):
                pass  # bytes that merely start like JSON: read them as floats
        if not raw or len(raw) % 4:
            raise BadRecord(f"embedding BLOB of {len(raw)} bytes is not little-endian float32")
        arr = np.frombuffer(raw, "<f4")
    elif isinstance(value, str):
        try:
            data = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise BadRecord("embedding text is not a JSON array") from None
        if not (
            isinstance(data, list)
            and data
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in data)
        ):
            raise BadRecord("embedding JSON is not a non-empty array of numbers")
        arr = np.asarray(data, np.float32)
    else:
        raise BadRecord(f"embedding is {type(value).__name__}, not a BLOB or JSON text")
    if not np.isfinite(arr).all():
        raise BadRecord("embedding holds NaN or infinite values")
    out: list[float] = arr.tolist()
    return out


class _Reader:
    """One table's rows: by our field names (absent columns read as None), and whole, for the quarantine."""

    def __init__(self, con: sqlite3.Connection, table: str, fields: Mapping[str, tuple[str, ...]]) -> None:
        self.columns = [r[1] for r in con.execute(f"PRAGMA table_info({_q(table)})")]
        lower = {c.lower(): c for c in self.columns}
        self.table, self.con, self.fields = table, con, list(fields)
        self.have = {
            f: next(lower[n] for n in names if n in lower)
            for f, names in fields.items()
            if any(n in lower for n in names)
        }

    def rows(self) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
        """(rowid, fields, whole row) in the table's order; WITHOUT ROWID tables have no rowid: the 1-based index."""
        cols = ", ".join(_q(c) for c in self.columns)
        try:
            cur, numbered = self.con.execute(f"SELECT rowid, {cols} FROM {_q(self.table)}"), True
        except sqlite3.OperationalError:
            cur, numbered = self.con.execute(f"SELECT {cols} FROM {_q(self.table)}"), False
        for i, r in enumerate(cur, 1):
            whole = dict(zip(self.columns, r[1:] if numbered else r))
            yield (r[0] if numbered else i), {f: whole.get(self.have.get(f, "")) for f in self.fields}, whole


def _raw(whole: dict[str, Any]) -> bytes:
    """A row as read, by the source's column names (BLOBs as hex), for the quarantine."""
    return orjson.dumps(
        {k: bytes(v).hex() if isinstance(v, (bytes, memoryview)) else v for k, v in whole.items()}, default=str
    )


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _blob(v: Any) -> bytes:
    return bytes(v) if isinstance(v, (bytes, memoryview)) else str(v).encode("utf-8")


def _text(v: Any) -> str | None:
    return None if v is None else _str(v)


def _str(v: Any) -> str:
    return bytes(v).decode("utf-8", "replace") if isinstance(v, (bytes, memoryview)) else str(v)


def _id_key(v: Any) -> tuple[int, float, str]:
    """Ids sort as numbers when they are numbers (or digits in a TEXT column), else as text (uuids), numbers first."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, float(v), "")
    text = _text(v) or ""
    return (0, float(text), "") if text.isascii() and text.isdigit() else (1, 0.0, text)


def _stamp(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).replace(tzinfo=None)


def parse_file(path: str, source_id: str, fingerprint: str = "") -> Parsed:
    """Worker: the whole database; messages into the batch, decisions into the state's side tables. (Each
    conversation is fingerprinted by its messages, not by the file's ``fingerprint``.)"""
    b = Batch()
    try:
        con = connect_ro(path)
    except sqlite3.Error as e:
        raise SourceError(path, f"cannot open as SQLite ({e})", "check the file and its permissions") from None
    try:
        tables = _tables(con)
        absent = [t for t in (MESSAGES, DECISIONS) if t not in tables]
        if absent:
            raise SourceError(
                path,
                f"no {absent[0]} table: not a decision-memory harness database",
                "check the file or pass --format sqlite",
            )
        msgs = _Reader(con, tables[MESSAGES], MESSAGE_FIELDS)
        missing = [f for f in ("conversation", "role", "content") if f not in msgs.have]
        if missing:
            raise SourceError(
                path,
                f"{MESSAGES} has no {'/'.join(MESSAGE_FIELDS[missing[0]])} column",
                "check the table or pass --format sqlite",
            )
        where = _read_messages(b, msgs, source_id)
        decs = _Reader(con, tables[DECISIONS], DECISION_FIELDS)
        if "title" not in decs.have and "content" not in decs.have:
            raise SourceError(path, f"{DECISIONS} has neither a title nor a decision_content column", "check the table")
        decisions = _read_decisions(b, decs, source_id, where)
        if EMBEDDINGS in tables:
            _read_embeddings(b, _Reader(con, tables[EMBEDDINGS], EMBEDDING_FIELDS), decisions)
    except sqlite3.DatabaseError as e:
        raise SourceError(path, f"cannot read the decision-memory tables ({e})", "check the file") from None
    finally:
        con.close()
    _store(b, source_id, decisions)
    return Parsed.of(b)


def _read_messages(b: Batch, reader: _Reader, source_id: str) -> dict[str, tuple[str, int]]:
    """Conversations into the batch; returns message id -> (conversation id, position), repeats included."""
    groups: dict[tuple[str, str], list[tuple[tuple[Any, ...], str, float | None, str, str, str | None]]] = {}
    for rowid, r, whole in reader.rows():
        b.rows_read += 1
        b.messages_read += 1
        loc = f"{reader.table}:{rowid}"
        role = ROLE_ALIASES.get(str(r["role"]).strip().lower()) if r["role"] is not None else None
        conv, content = _text(r["conversation"]), _text(r["content"])
        reason = (
            "no conversation_id"
            if conv is None
            else f"unknown role {str(r['role'])[:40]!r}"
            if role is None
            else "content is NULL"
            if content is None
            else None
        )
        if reason:
            b.quarantine(loc, reason, _raw(whole))
            continue
        assert conv is not None and role is not None and content is not None  # else a reason above
        ts = _epoch(r["created_at"])
        native = str(r["id"]) if r["id"] is not None else str(rowid)
        key = (_text(r["project"]) or "", conv)
        groups.setdefault(key, []).append(
            (
                (ts is None, ts or 0.0, _id_key(r["id"] if r["id"] is not None else rowid)),
                native,
                ts,
                role,
                content,
                _text(r["hash"]),
            )
        )
    seen: dict[str, str] = {}  # message_hash -> the id kept
    where: dict[str, tuple[str, int]] = {}
    repeats = undated = 0
    projects: dict[str, str] = {}
    for (project, conv), rows in sorted(groups.items()):
        rows.sort(key=lambda x: x[0])
        native_conv = f"{project}/{conv}" if project else conv
        cid = stable_id(source_id, native_conv)
        entries: list[Entry] = []
        later: list[tuple[str, str]] = []
        digest, prev = hashlib.sha1(), None
        for _, native, ts, role, content, h in rows:
            if h is not None and h in seen:
                later.append((native, seen[h]))
                repeats += 1
                continue
            if h is not None:
                seen[h] = native
            undated += ts is None
            where[native] = (cid, len(entries))
            msg = finish(role, content, [], [], None, None, ts)
            entries.append(Entry(len(entries), native, prev, len(entries), msg))
            digest.update(f"{native}\x1f{ts}\x1f{role}\x1f{content}\x1e".encode("utf-8", "replace"))
            prev = native
        for native, kept in later:  # a decision may name the repeat's id
            if kept in where:
                where.setdefault(native, where[kept])
        if entries:
            projects[cid] = project
            b.add_conversation(cid, native_conv, None, None, None, None, None, digest.hexdigest()[:16], entries)
    b.state["projects"] = projects
    b.state["skipped"] = repeats
    if repeats:
        b.notes.append(f"{repeats} messages repeat a message_hash already read: skipped (the harness stores them once)")
    if undated:
        b.notes.append(f"{undated} messages without a readable created_at: ordered after the dated ones, by id")
    return where


def _read_decisions(
    b: Batch, reader: _Reader, source_id: str, where: dict[str, tuple[str, int]]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    imported = {cid for cid, _ in where.values()}
    bad_importance = 0
    for rowid, r, whole in reader.rows():
        b.rows_read += 1
        b.messages_read += 1
        loc = f"{reader.table}:{rowid}"
        did = _str(r["id"]) if r["id"] is not None else str(rowid)
        title, content = (_text(r["title"]) or "").strip(), (_text(r["content"]) or "").strip()
        if not title and not content:
            b.quarantine(loc, "decision has neither a title nor a decision_content", _raw(whole))
            continue
        if did in out:
            b.quarantine(loc, f"repeats decision id {did}", _raw(whole))
            continue
        embedding = None
        if r["embedding"] is not None:
            try:
                embedding = vector(r["embedding"])
            except BadRecord as e:  # the decision stays; its vector is a second record, quarantined
                b.messages_read += 1
                b.quarantine(f"{loc}.embedding", str(e), _blob(r["embedding"]))
        try:
            importance = DEFAULT_IMPORTANCE if r["importance"] is None else float(r["importance"])
        except (TypeError, ValueError):
            importance = math.nan
        if not math.isfinite(importance):
            importance, bad_importance = DEFAULT_IMPORTANCE, bad_importance + 1
        project, conv, src = _text(r["project"]) or "", _text(r["conversation"]), _text(r["source"])
        cid, pos = where.get(src, (None, None)) if src is not None else (None, None)
        if cid is None and conv is not None:  # its source message is not here: the conversation, if imported
            cid = stable_id(source_id, f"{project}/{conv}" if project else conv)
            cid = cid if cid in imported else None
        out[did] = {
            "source_id": source_id,
            "decision_id": did,
            "project": project,
            "conversation_id": cid,
            "native_conversation_id": conv,
            "source_message_id": src,
            "source_position": pos,
            "decision_type": _text(r["type"]),
            "title": title,
            "decision_content": content,
            "reason": _text(r["reason"]),
            "alternative_rejected": _text(r["rejected"]),
            "importance_score": importance,
            "created_at": _stamp(_epoch(r["created_at"])),
            "updated_at": _stamp(_epoch(r["updated_at"])),
            "embedding": embedding,
            "embedding_model": _text(r["embedding_model"]),
        }
    if bad_importance:
        b.notes.append(
            f"{bad_importance} decisions with an importance_score that is not a number: {DEFAULT_IMPORTANCE} used"
        )
    return out


def _epoch(v: Any) -> float | None:
    """A stored time: ISO text, or epoch seconds or milliseconds (numbers, or digits in a TEXT or BLOB column)."""
    return to_epoch(_text(v) if isinstance(v, (bytes, memoryview)) else v)


def _read_embeddings(b: Batch, reader: _Reader, decisions: dict[str, dict[str, Any]]) -> None:
    """decision_embeddings: the newest row per decision wins; older ones are skipped and counted."""
    newest: dict[str | None, float] = {}
    superseded = 0
    for rowid, r, whole in reader.rows():
        b.rows_read += 1
        b.messages_read += 1
        loc = f"{reader.table}:{rowid}"
        did = _text(r["decision"])
        d = decisions.get(did) if did is not None else None
        if d is None:
            b.quarantine(loc, f"no decision with id {did}" if did is not None else "no decision_id", _raw(whole))
            continue
        try:
            vec = vector(r["embedding"])
        except BadRecord as e:
            b.quarantine(loc, str(e), _blob(r["embedding"]) if r["embedding"] is not None else _raw(whole))
            continue
        stamp = _epoch(r["updated_at"]) or 0.0
        if did in newest and newest[did] > stamp:
            superseded += 1
            continue
        superseded += did in newest
        newest[did] = stamp
        d["embedding"], d["embedding_model"] = vec, _text(r["model"])
    b.state["skipped"] += len(newest) + superseded
    if superseded:
        b.notes.append(f"{superseded} older embeddings of a decision skipped (the newest is kept)")


def _store(b: Batch, source_id: str, decisions: dict[str, dict[str, Any]]) -> None:
    """The source's side tables (replaced whole on a re-read) and the counts in the run's note."""
    import polars as pl

    decision_schema = pl.Schema(
        {
            "source_id": pl.String(),
            "decision_id": pl.String(),
            "project": pl.String(),
            "conversation_id": pl.String(),
            "native_conversation_id": pl.String(),
            "source_message_id": pl.String(),
            "source_position": pl.Int32(),
            "decision_type": pl.String(),
            "title": pl.String(),
            "decision_content": pl.String(),
            "reason": pl.String(),
            "alternative_rejected": pl.String(),
            "importance_score": pl.Float64(),
            "created_at": pl.Datetime("us"),
            "updated_at": pl.Datetime("us"),
            "embedding": pl.List(pl.Float32()),
            "embedding_model": pl.String(),
        }
    )
    alternative_schema = pl.Schema({"source_id": pl.String(), "decision_id": pl.String(), "alternative": pl.String()})
    rows = list(decisions.values())
    alts = [(d["decision_id"], a) for d in rows for a in split_alternatives(d["alternative_rejected"])]
    b.state["tables"] = {
        "decisions": pl.DataFrame(rows, schema=decision_schema),
        "decision_alternatives": pl.DataFrame(
            {
                "source_id": [source_id] * len(alts),
                "decision_id": [a[0] for a in alts],
                "alternative": [a[1] for a in alts],
            },
            schema=alternative_schema,
        ),
    }
    b.state["skipped"] = b.state.get("skipped", 0) + len(rows)
    vectors = sum(d["embedding"] is not None for d in rows)
    b.notes.append(
        f"decision memory: {len(rows)} decisions in `decisions` ({len(alts)} rejected options, "
        f"{vectors} with an embedding)"
    )


FORMAT = Format(
    NAME,
    "a decision-memory harness database (conversation_messages + decision_events)",
    _sniff,
    task=parse_file,
    suffixes=(".db", ".sqlite", ".sqlite3"),
)
