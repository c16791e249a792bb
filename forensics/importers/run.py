"""`forensics ingest`: plan each source, parse on both cores, load in bulk, count everything.

A file whose path, size and modification time match its last import is not opened. Small files are parsed
many to a task (a task costs a round trip to a worker) and loaded many to a transaction (see `load`);
a SQLite source is read in chunks of rows inside one transaction. A kill leaves every source either fully
imported or not at all; a rerun completes the rest.
"""
from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from forensics.errors import ExitCode, ForensicsError, SourceError
from forensics.importers import registry, sqlite, values
from forensics.importers.discover import Source, detect, expand, real_path
from forensics.importers.formats import FORMATS
from forensics.importers.load import Bundle, Loader, bundle, tune
from forensics.importers.records import Parsed, source_key, stable_id
from forensics.warehouse import DEFAULT_DB, Warehouse, open_warehouse
from forensics.warehouse.core import utcnow
from forensics.workers import default_workers, run_ordered

PARALLEL_MIN_BYTES = 32 << 20  # below this much source, parsing inline beats starting worker processes
CHUNK_BYTES = 4 << 20  # SQLite rows per parse task: about this many bytes of JSON (memory: see load.tune)
CHUNK_ROWS = 200
TASK_BYTES = 4 << 20  # whole files per parse task: about this many bytes, at most TASK_FILES files
TASK_FILES = 64
HASHED_BY_PARSER = ("claude-code", "openai", "sharegpt")  # the others get a hashing thread
UNCHANGED = "same size and modification time as the last import: not re-read"


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
class Plan:
    """One source through the run: identity, work to do, and what parsing learnt about it."""

    result: SourceResult
    source: Source | None = None
    resolved: str = ""
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
        plans = _plan_all(wh, paths, fmt, table, column, messages_key)
        run.sources = [pl.result for pl in plans]
        _execute(wh, run.run_id, plans, progress, workers or default_workers())
    finally:
        wh.close()
    if not existed and all(s.status == "failed" for s in run.sources):
        for suffix in ("", ".wal"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    return run


def _plan_all(wh: Warehouse, paths: list[Path], fmt: str, table: str | None, column: str | None,
              messages_key: str | None) -> list[Plan]:
    """A plan per path, with what the warehouse already holds of each source (two queries in all)."""
    known: dict[str, list[tuple]] = {}
    for path, *row in wh.con.execute("SELECT path, source_id, format, options, size, mtime_ns FROM sources").fetchall():
        known.setdefault(path, []).append(tuple(row))
    plans = [_identify(p, fmt, table, column, messages_key, known) for p in paths]
    stored = {sid for rows in known.values() for sid, *_ in rows}
    by_id = {pl.result.source_id: pl for pl in plans if pl.result.source_id in stored}
    if by_id:
        for sid, cid, fp in wh.con.execute("SELECT source_id, conversation_id, fingerprint FROM conversations "
                                           "WHERE source_id IN (SELECT unnest(?::VARCHAR[]))", [list(by_id)]).fetchall():
            by_id[sid].stored[cid] = fp
    for pl in plans:
        if pl.result.status == "unchanged":
            pl.result.conversations_unchanged = len(pl.stored)
        elif pl.result.status == "imported":
            _schedule(pl, table, column)
    return plans


def _identify(path: Path, fmt: str, table: str | None, column: str | None, messages_key: str | None,
              known: dict[str, list[tuple]]) -> Plan:
    """Format, options and source id; unchanged when size and mtime match the stored source."""
    res = SourceResult(str(path))
    pl = Plan(res, started_at=utcnow())
    wanted = _options(table, column, messages_key)
    try:
        st = path.stat()
        pl.resolved, pl.size, pl.mtime_ns = real_path(path), st.st_size, st.st_mtime_ns
        same = [row for row in known.get(pl.resolved, ()) if row[3:] == (pl.size, pl.mtime_ns)
                and fmt in ("auto", row[1]) and (row[2] == wanted or (wanted == "{}" and row[1] == "openai"))]
        if len(same) == 1:  # this very file as last imported (its options given again, or found in its content)
            res.source_id, res.format, pl.options = same[0][:3]
            pl.source = Source(path, res.format, orjson.loads(pl.options).get("messages_key"))
            res.status, res.note = "unchanged", UNCHANGED
            return pl
        src = detect(path, fmt, messages_key)
    except SourceError as e:
        res.status, res.error = "failed", str(e)
        return pl
    except OSError as e:
        res.status, res.error = "failed", f"{path}: cannot read ({e.strerror or e}); check the path"
        return pl
    pl.source, res.format = src, src.format
    if src.format == "sqlite" and (table or column):
        pl.options = _options(table, column, None)
    elif src.messages_key:
        pl.options = _options(None, None, src.messages_key)
    res.source_id = source_key(src.format, pl.resolved, pl.options)
    if any(row[0] == res.source_id and row[3:] == (pl.size, pl.mtime_ns) for row in known.get(pl.resolved, ())):
        res.status, res.note = "unchanged", UNCHANGED
    return pl


def _options(table: str | None, column: str | None, messages_key: str | None) -> str:
    if table or column:
        return orjson.dumps({"table": table, "column": column}).decode()
    return orjson.dumps({"messages_key": messages_key}).decode() if messages_key else "{}"


def _schedule(pl: Plan, table: str | None, column: str | None) -> None:
    """The parse tasks of a new or changed source."""
    res, src = pl.result, pl.source
    try:
        if src.format == "sqlite":
            _plan_sqlite(pl, table, column)
        else:
            pl.tasks.append(_file_task(src, pl.resolved, res.source_id, f"{pl.size}:{pl.mtime_ns}", pl.size))
            pl.todo_bytes = pl.size
    except SourceError as e:
        res.status, res.error = "failed", str(e)
        return
    except OSError as e:
        res.status, res.error = "failed", f"{res.path}: cannot read ({e}); check permissions"
        return
    if src.format not in HASHED_BY_PARSER:
        pl.hasher = _Hasher(src.path)


def _file_task(src: Source, resolved: str, source_id: str, fingerprint: str,
               size: int) -> tuple[Callable[..., Parsed], tuple[Any, ...], int]:
    """The parse task for a file that is read whole (every format but SQLite JSON-message tables)."""
    options = {"messages_key": src.messages_key} if src.messages_key else {}
    fn, args = registry.get(src.format).worker(resolved, source_id, fingerprint, options)
    return fn, args, size


def _plan_sqlite(pl: Plan, table: str | None, column: str | None) -> None:
    res, resolved = pl.result, pl.resolved
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


Tag = list[tuple[Plan, bool, int]]  # per call of a task: (its source, closes the source, bytes)
Call = tuple[Callable[..., Parsed], tuple[Any, ...], str, str]  # (parser, its arguments, path, source id)


def _execute(wh: Warehouse, run_id: str, plans: list[Plan], progress: Progress | None, workers: int) -> None:
    todo = [pl for pl in plans if pl.tasks]
    total = sum(pl.todo_bytes for pl in todo)
    tune(wh.con, max((size for pl in todo for _, _, size in pl.tasks), default=0))
    loader = Loader(wh.con, run_id)
    done = 0
    for tag, b, err in run_ordered(_tasks(todo), workers, total >= PARALLEL_MIN_BYTES):
        loader.add(b if err is None else Bundle(None, [_error(pl, err) for pl, _, _ in tag]), tag)
        done += sum(n for _, _, n in tag)
        if progress:
            progress(done, total)
    for pl in plans:  # sources with no row to parse (an empty table, every row unchanged)
        if pl.source and not pl.tasks and pl.result.status == "imported":
            loader.add_empty(pl)
    loader.close([pl for pl in plans if pl.result.status == "unchanged"])


def _tasks(plans: list[Plan]) -> Iterator[tuple[Callable[..., Bundle], tuple[Any, ...], Tag]]:
    """Parse tasks in source order: whole files grouped up to TASK_BYTES or TASK_FILES, a SQLite chunk alone."""
    calls: list[Call] = []
    tag: Tag = []
    nbytes = 0
    for pl in plans:
        for k, (fn, args, size) in enumerate(pl.tasks):
            if calls and pl.source.format == "sqlite":
                yield parse_many, (calls,), tag
                calls, tag, nbytes = [], [], 0
            calls.append((fn, args, pl.result.path, pl.result.source_id))
            tag.append((pl, k == len(pl.tasks) - 1, size))
            nbytes += size
            if pl.source.format == "sqlite" or nbytes >= TASK_BYTES or len(calls) >= TASK_FILES:
                yield parse_many, (calls,), tag
                calls, tag, nbytes = [], [], 0
    if calls:
        yield parse_many, (calls,), tag


def parse_many(calls: list[Call]) -> Bundle:
    """Worker: run each parse; a file that cannot be read becomes its one-line error, the others go on."""
    out: list[tuple[Parsed | str, str]] = []
    for fn, args, path, source_id in calls:
        try:
            with values.counting() as nulled:
                p = fn(*args)
        except Exception as e:  # reported per source; never takes the batch down
            out.append((str(e) if isinstance(e, ForensicsError) else
                        f"{path}: cannot read ({type(e).__name__}: {e}); check the file", source_id))
            continue
        if nulled:
            p.notes.append(values.note(nulled))
        error = p.state.get("error")
        out.append((f"{path}: {error}; check the file or pass --format" if error else p, source_id))
    return bundle(out)


def _error(pl: Plan, err: BaseException) -> str:
    """A task that died as a whole (a worker process killed, say): its sources fail with this line."""
    return f"{pl.result.path}: parse worker failed ({type(err).__name__}: {err}); rerun to finish"
