"""`forensics ingest`: plan each source, parse on both cores, load each source atomically, count everything.

Transactions end only at source boundaries: a SQLite source is one transaction; small JSONL sources are
grouped, whole, into transactions of ~64 MB so thousands of session files do not pay a commit each.
A kill leaves every source either fully imported or not at all; a rerun completes the rest.
"""
from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from forensics.errors import ExitCode, ForensicsError, SourceError
from forensics.importers import claude_code, jsonl, openai_chat, sqlite
from forensics.importers.discover import FORMATS, Source, detect, expand
from forensics.importers.pool import PARALLEL_MIN_BYTES, default_workers, run_ordered
from forensics.importers.records import Parsed, source_key, stable_id
from forensics.warehouse import DEFAULT_DB, Warehouse, open_warehouse
from forensics.warehouse.core import utcnow

CHUNK_BYTES = 8 << 20  # SQLite rows per parse task: about this many bytes of JSON
CHUNK_ROWS = 200
GROUP_BYTES = 64 << 20  # JSONL sources per transaction


@dataclass
class SourceResult:
    """What happened to one source in one run (a row of `import_runs`)."""

    path: str
    format: str | None = None
    status: str = "imported"  # imported | unchanged | failed
    source_id: str | None = None
    rows_read: int = 0
    messages_read: int = 0
    messages_imported: int = 0
    messages_unchanged: int = 0
    quarantined: int = 0
    skipped: int = 0  # records that hold no message: events and line types without one (see note)
    conversations_new: int = 0
    conversations_updated: int = 0
    conversations_unchanged: int = 0
    note: str = ""
    error: str = ""


@dataclass
class IngestResult:
    run_id: str
    db: str
    sources: list[SourceResult] = field(default_factory=list)

    @property
    def exit_code(self) -> ExitCode:
        failed = sum(s.status == "failed" for s in self.sources)
        if failed == 0:
            return ExitCode.OK
        return ExitCode.USAGE if failed == len(self.sources) else ExitCode.PARTIAL

    def totals(self) -> dict[str, int]:
        keys = ("rows_read", "messages_read", "messages_imported", "messages_unchanged", "quarantined", "skipped",
                "conversations_new", "conversations_updated", "conversations_unchanged")
        out = {k: sum(getattr(s, k) for s in self.sources) for k in keys}
        out.update(sources=len(self.sources), failed=sum(s.status == "failed" for s in self.sources))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "db": self.db, "totals": self.totals(),
                "sources": [asdict(s) for s in self.sources]}


@dataclass
class _Plan:
    result: SourceResult
    source: Source | None = None
    size: int = 0
    mtime_ns: int = 0
    options: str = "{}"
    tasks: list[tuple[Callable[..., Parsed], tuple[Any, ...], int]] = field(default_factory=list)
    todo_bytes: int = 0
    stored: dict[str, str] = field(default_factory=dict)  # conversation_id -> fingerprint already stored
    hasher: _Hasher | None = None
    started_at: Any = None
    arrays: int = 0  # SQLite rows that held a message array
    first_bad: str = ""
    sha256: str | None = None  # when the parser hashed the bytes it read (no second read)


class _Hasher(threading.Thread):
    """SHA-256 of a file on a thread (hashlib releases the GIL), overlapping the parse."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.digest = path, ""
        self.start()

    def run(self) -> None:
        h = hashlib.sha256()
        with open(self.path, "rb") as f:
            while chunk := f.read(1 << 22):
                h.update(chunk)
        self.digest = h.hexdigest()

    def result(self) -> str:
        self.join()
        return self.digest


Progress = Callable[[int, int], None]  # (bytes done, bytes total)


def ingest(sources: list[str | os.PathLike[str]], db: str | os.PathLike[str] = DEFAULT_DB, fmt: str = "auto",
           table: str | None = None, column: str | None = None, progress: Progress | None = None,
           workers: int | None = None, messages_key: str | None = None) -> IngestResult:
    """Import SOURCES (files, folders, globs) into the warehouse at ``db``; see `forensics ingest --help`."""
    if fmt not in FORMATS:
        raise ForensicsError(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATS)}")
    paths = expand([str(s) for s in sources], messages_key)
    if not paths:
        raise ForensicsError("no importable files (*.db *.sqlite *.sqlite3 *.jsonl *.json) under "
                             + ", ".join(map(str, sources)))
    existed = Path(db).exists()
    run = IngestResult(uuid.uuid4().hex[:12], str(db))
    wh = open_warehouse(db)
    try:
        plans = [_plan(wh, p, fmt, table, column, messages_key) for p in paths]
        run.sources = [pl.result for pl in plans]
        _execute(wh, run.run_id, plans, progress, workers or default_workers())
        _log_unchanged(wh, run.run_id, plans)
    finally:
        wh.close()
    if not existed and all(s.status == "failed" for s in run.sources):
        for suffix in ("", ".wal"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    return run


def _plan(wh: Warehouse, path: Path, fmt: str, table: str | None, column: str | None,
          messages_key: str | None) -> _Plan:
    res = SourceResult(str(path))
    pl = _Plan(res, started_at=utcnow())
    try:
        src = detect(path, fmt, messages_key)
        st = path.stat()
    except SourceError as e:
        res.status, res.error = "failed", str(e)
        return pl
    except OSError as e:
        res.status, res.error = "failed", f"{path}: cannot read ({e.strerror or e}); check the path"
        return pl
    pl.source, pl.size, pl.mtime_ns, res.format = src, st.st_size, st.st_mtime_ns, src.format
    if src.format == "sqlite" and (table or column):
        pl.options = orjson.dumps({"table": table, "column": column}).decode()
    elif src.messages_key:
        pl.options = orjson.dumps({"messages_key": src.messages_key}).decode()
    resolved = str(path.resolve())
    res.source_id = source_key(src.format, resolved, pl.options)
    row = wh.con.execute("SELECT size, mtime_ns FROM sources WHERE source_id = ?", [res.source_id]).fetchone()
    pl.stored = dict(wh.con.execute("SELECT conversation_id, fingerprint FROM conversations WHERE source_id = ?",
                                    [res.source_id]).fetchall())
    if row and row == (pl.size, pl.mtime_ns):
        res.status = "unchanged"
        res.conversations_unchanged = len(pl.stored)
        return pl
    try:
        if src.format == "sqlite":
            _plan_sqlite(pl, resolved, table, column)
        else:
            pl.tasks.append(_file_task(src, resolved, res.source_id, f"{pl.size}:{pl.mtime_ns}", pl.size))
            pl.todo_bytes = pl.size
            if src.format != "jsonl":  # these parsers hash the bytes they read
                return pl
    except SourceError as e:
        res.status, res.error = "failed", str(e)
        return pl
    except OSError as e:
        res.status, res.error = "failed", f"{path}: cannot read ({e}); check permissions"
        return pl
    pl.hasher = _Hasher(path)
    return pl


def _file_task(src: Source, resolved: str, source_id: str, fingerprint: str,
               size: int) -> tuple[Callable[..., Parsed], tuple[Any, ...], int]:
    """The parse task for a file that is read whole (every format but SQLite)."""
    if src.format == "claude-code":
        return claude_code.parse_file, (resolved, source_id, fingerprint), size
    if src.format in ("openai", "sharegpt"):
        return openai_chat.parse_file, (resolved, source_id, src.messages_key), size
    return jsonl.parse_file, (resolved, source_id, fingerprint), size


def _plan_sqlite(pl: _Plan, resolved: str, table: str | None, column: str | None) -> None:
    res = pl.result
    try:
        con = sqlite.connect_ro(resolved)
    except Exception as e:  # sqlite3 raises several types for unreadable files
        raise SourceError(res.path, f"cannot open as SQLite ({e})", "check the file and its permissions") from None
    try:
        target = sqlite.resolve_target(con, res.path, table, column)
        index = sqlite.read_index(con, res.path, target)
    finally:
        con.close()
    todo = []
    for ix in index:
        if pl.stored.get(stable_id(res.source_id, ix.native_id)) == ix.fingerprint:
            res.conversations_unchanged += 1
        else:
            todo.append(ix)
    chunk: list[sqlite.IndexRow] = []
    nbytes = 0
    for ix in todo:
        chunk.append(ix)
        nbytes += ix.nbytes
        if nbytes >= CHUNK_BYTES or len(chunk) >= CHUNK_ROWS:
            pl.tasks.append((sqlite.parse_rows, (resolved, target, res.source_id, chunk), nbytes))
            pl.todo_bytes += nbytes
            chunk, nbytes = [], 0
    if chunk:
        pl.tasks.append((sqlite.parse_rows, (resolved, target, res.source_id, chunk), nbytes))
        pl.todo_bytes += nbytes
    res.rows_read = len(index)


def _execute(wh: Warehouse, run_id: str, plans: list[_Plan], progress: Progress | None, workers: int) -> None:
    todo = [(i, pl) for i, pl in enumerate(plans) if pl.tasks]
    total = sum(pl.todo_bytes for _, pl in todo)
    tasks = [(fn, args, (i, k == len(pl.tasks) - 1, nbytes)) for i, pl in todo
             for k, (fn, args, nbytes) in enumerate(pl.tasks)]
    loader = _Loader(wh, run_id)
    done = 0
    failed_plan = -1
    for (i, last, nbytes), parsed, err in run_ordered(tasks, workers, total >= PARALLEL_MIN_BYTES):
        pl = plans[i]
        if i == failed_plan:
            continue
        if err is not None or (parsed and parsed.state.get("error")):
            failed_plan = i
            loader.fail(pl, _task_error(pl, err, parsed))
        else:
            loader.apply(pl, parsed)
            if last:
                loader.finish(pl)
        done += nbytes
        if progress:
            progress(done, total)
    loader.flush()
    for pl in plans:  # sources with no row to parse (an empty table, every row unchanged)
        if pl.source and not pl.tasks and pl.result.status == "imported":
            loader.finish(pl)
    loader.flush()


def _task_error(pl: _Plan, err: BaseException | None, parsed: Parsed | None) -> str:
    if parsed is not None and parsed.state.get("error"):
        return f"{pl.result.path}: {parsed.state['error']}; check the file or pass --format"
    if isinstance(err, ForensicsError):
        return str(err)
    return f"{pl.result.path}: cannot read ({type(err).__name__}: {err}); check the file"


class _Loader:
    """Loads parsed batches into the warehouse and decides where transactions end."""

    def __init__(self, wh: Warehouse, run_id: str) -> None:
        self.con, self.run_id = wh.con, run_id
        self.open_bytes = 0
        self.in_tx = False
        self.pending: list[_Plan] = []  # finished sources whose transaction is still open

    def _begin(self, pl: _Plan) -> None:
        if self.in_tx and (pl.source.format == "sqlite" or self.open_bytes >= GROUP_BYTES):
            self.flush()
        if not self.in_tx:
            self.con.execute("BEGIN TRANSACTION")
            self.in_tx, self.open_bytes = True, 0

    def flush(self) -> None:
        if self.in_tx:
            self.con.execute("COMMIT")
            self.in_tx = False
        self.pending.clear()

    def fail(self, pl: _Plan, message: str) -> None:
        if pl.result.format == "sqlite" and self.in_tx:
            self.con.execute("ROLLBACK")  # a SQLite source has its transaction to itself
            self.in_tx = False
        r = pl.result
        r.status, r.error = "failed", message
        for k in ("messages_read", "messages_imported", "messages_unchanged", "quarantined", "skipped",
                  "conversations_new", "conversations_updated"):
            setattr(r, k, 0)

    def apply(self, pl: _Plan, p: Parsed) -> None:
        if pl.result.status == "failed":
            return
        self._begin(pl)
        r, con, t = pl.result, self.con, _complete(p)
        whole_file = pl.source.format != "sqlite"  # a file is re-read whole; SQLite in chunks of rows
        pl.arrays += p.state.get("arrays", 0)
        pl.first_bad = pl.first_bad or p.state.get("first_bad", "")
        pl.sha256 = p.state.get("sha256", pl.sha256)
        self.open_bytes += pl.todo_bytes if whole_file else 0
        if whole_file:
            r.rows_read += p.rows_read
        r.messages_read += p.messages_read
        r.skipped += p.state.get("skipped", 0)
        r.note = "; ".join(dict.fromkeys([*filter(None, [r.note]), *p.notes]))
        convs = t["conv"].select(["conversation_id", "fingerprint"]).to_pylist()
        existing = [c["conversation_id"] for c in convs if c["conversation_id"] in pl.stored]
        same = sum(pl.stored.get(c["conversation_id"]) == c["fingerprint"] for c in convs)
        r.conversations_new += len(convs) - len(existing)
        r.conversations_updated += len(existing) - same
        r.conversations_unchanged += same
        for name in TABLES:
            con.register(f"_b_{name}", t[name])
        try:
            unchanged = 0
            if existing:
                con.execute("CREATE OR REPLACE TEMP TABLE _b_old AS SELECT unnest(?::VARCHAR[]) AS conversation_id",
                            [existing])
                unchanged = con.execute(
                    "SELECT count(*) FROM messages m JOIN _b_msg s ON m.conversation_id = s.conversation_id "
                    "AND m.seq = s.seq AND m.role = s.role AND m.content = s.content "
                    "WHERE m.conversation_id IN (SELECT conversation_id FROM _b_old)").fetchone()[0]
                for tbl in ("messages", "tool_calls", "events", "message_usage", "conversations"):
                    con.execute(f"DELETE FROM {tbl} WHERE conversation_id IN (SELECT conversation_id FROM _b_old)")
            r.messages_unchanged += unchanged
            r.messages_imported += t["msg"].num_rows - unchanged
            r.quarantined += t["quar"].num_rows
            con.execute("INSERT INTO conversations (conversation_id, source_id, native_id, title, provider, model, "
                        "created_at, updated_at, message_count, fingerprint, parent_conversation_id) "
                        "SELECT conversation_id, ?, native_id, title, provider, model, "
                        f"{_ts('created_at')}, {_ts('updated_at')}, message_count, fingerprint, "
                        "parent_conversation_id FROM _b_conv", [r.source_id])
            con.execute("INSERT INTO messages SELECT conversation_id, seq, position, native_id, parent_native_id, "
                        "position IS NOT NULL, role, content, length(content), strlen(content), tool_call_count, "
                        f"{_ts('created_at')}, tool_call_id FROM _b_msg")
            con.execute("INSERT INTO tool_calls SELECT c.conversation_id, c.seq, c.position, c.call_index, c.call_id, "
                        "c.name, c.arguments, c.result_seq, c.result_position, "
                        "coalesce(c.result_bytes, CASE WHEN c.result_seq IS NOT NULL THEN strlen(m.content) END), "
                        "c.is_error FROM _b_call c LEFT JOIN _b_msg m "
                        "ON m.conversation_id = c.conversation_id AND m.seq = c.result_seq")
            for table, name, schema in (("events", "event", claude_code.EVENT_SCHEMA),
                                        ("message_usage", "usage", claude_code.USAGE_SCHEMA)):
                cols = ", ".join(schema.names)
                con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _b_{name}")
            if whole_file:  # the whole file was re-read: its quarantine is replaced
                con.execute("DELETE FROM quarantine WHERE source_id = ?", [r.source_id])
            else:
                con.execute("DELETE FROM quarantine WHERE source_id = ? AND split_part(location, '[', 1) IN "
                            "(SELECT split_part(location, '[', 1) FROM _b_quar)", [r.source_id])
            con.execute("INSERT INTO quarantine SELECT ?, ?, location, reason, raw, raw_bytes FROM _b_quar",
                        [r.source_id, self.run_id])
        finally:
            for name in TABLES:
                con.unregister(f"_b_{name}")

    def finish(self, pl: _Plan) -> None:
        if pl.result.status == "failed":
            return
        if pl.source.format == "sqlite" and pl.tasks and pl.arrays == 0:
            self.fail(pl, f"{pl.result.path}: no row holds a JSON array of messages ({pl.first_bad})"
                          "; pass the right --table/--column")
            return
        self._begin(pl)
        r, con = pl.result, self.con
        con.execute("DELETE FROM sources WHERE source_id = ?", [r.source_id])
        con.execute("INSERT INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [r.source_id, str(Path(r.path).resolve()), r.format, pl.hasher.result() if pl.hasher else pl.sha256,
                     pl.size, pl.mtime_ns, pl.options, utcnow()])
        _log(con, self.run_id, pl)
        if pl.source.format == "sqlite":
            self.flush()


TABLES = ("conv", "msg", "call", "quar", "event", "usage")


def _complete(p: Parsed) -> dict[str, pa.Table]:
    """Every table the loader inserts from, empty where this importer has none (SQLite has no events)."""
    t = dict(p.tables)
    parents = p.state.get("parents", {})
    ids = t["conv"].column("conversation_id").to_pylist()
    t["conv"] = t["conv"].append_column("parent_conversation_id",
                                        pa.array([parents.get(c) for c in ids], pa.string()))
    t.setdefault("event", claude_code.EVENT_SCHEMA.empty_table())
    t.setdefault("usage", claude_code.USAGE_SCHEMA.empty_table())
    return t


def _ts(col: str) -> str:
    return f"CASE WHEN {col} IS NULL THEN NULL ELSE make_timestamp(CAST({col} * 1000000 AS BIGINT)) END"


def _log(con: Any, run_id: str, pl: _Plan) -> None:
    r = pl.result
    con.execute("INSERT INTO import_runs (run_id, source_id, path, format, status, started_at, finished_at, "
                "rows_read, messages_read, messages_imported, messages_unchanged, quarantined, skipped, "
                "conversations_new, conversations_updated, conversations_unchanged, note) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [run_id, r.source_id, r.path, r.format, r.status, pl.started_at, utcnow(), r.rows_read,
                 r.messages_read, r.messages_imported, r.messages_unchanged, r.quarantined, r.skipped,
                 r.conversations_new, r.conversations_updated, r.conversations_unchanged, r.note or None])


def _log_unchanged(wh: Warehouse, run_id: str, plans: list[_Plan]) -> None:
    """Unchanged sources get a run row too, so `import_runs` shows every source every run."""
    quiet = [pl for pl in plans if pl.result.status == "unchanged"]
    if not quiet:
        return
    wh.con.execute("BEGIN TRANSACTION")
    for pl in quiet:
        pl.result.note = "same size and modification time as the last import: not re-read"
        _log(wh.con, run_id, pl)
    wh.con.execute("COMMIT")
