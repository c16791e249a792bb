"""`forensics ingest`: plan each source, parse on both cores, load each source atomically, count everything.

Transactions end only at source boundaries: a SQLite source is one transaction; small JSONL sources are
grouped, whole, into transactions of ~256 MB so thousands of session files do not pay a commit each (and
are parsed and loaded ~4 MB at a time: see `_tasks`).
A kill leaves every source either fully imported or not at all; a rerun completes the rest.
"""
from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from forensics.errors import ExitCode, ForensicsError, SourceError
from forensics.importers import dialogues, jsonl, sqlite
from forensics.importers.discover import FORMATS, Source, detect, expand
from forensics.importers.load import load_batch, tune, with_source, write_runs, write_sources
from forensics.importers.pool import PARALLEL_MIN_BYTES, default_workers, run_ordered
from forensics.importers.records import Parsed, stable_id
from forensics.warehouse import DEFAULT_DB, Warehouse, open_warehouse
from forensics.warehouse.core import utcnow

CHUNK_BYTES = 4 << 20  # bytes of JSON per parse task (SQLite rows, or whole JSONL files)
CHUNK_ROWS = 200
GROUP_BYTES = 256 << 20  # JSONL sources per transaction: each COMMIT rewrites the table's last row group


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
        keys = ("rows_read", "messages_read", "messages_imported", "messages_unchanged", "quarantined",
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
    sha256: Future[str] | None = None
    started_at: Any = None
    arrays: int = 0  # SQLite rows that held a message array
    first_bad: str = ""


def _sha256(path: Path) -> str:
    """SHA-256 of a file; run on the hashing thread (hashlib releases the GIL), overlapping the parse."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


Progress = Callable[[int, int], None]  # (bytes done, bytes total)


def ingest(sources: list[str | os.PathLike[str]], db: str | os.PathLike[str] = DEFAULT_DB, fmt: str = "auto",
           table: str | None = None, column: str | None = None, progress: Progress | None = None,
           workers: int | None = None) -> IngestResult:
    """Import SOURCES (files, folders, globs) into the warehouse at ``db``; see `forensics ingest --help`."""
    if fmt not in FORMATS:
        raise ForensicsError(f"unknown --format {fmt!r}; choose {', '.join(FORMATS)}")
    paths = expand([str(s) for s in sources])
    if not paths:
        raise ForensicsError("no importable files (*.db *.sqlite *.sqlite3 *.jsonl) under " + ", ".join(map(str, sources)))
    existed = Path(db).exists()
    run = IngestResult(uuid.uuid4().hex[:12], str(db))
    wh = open_warehouse(db)
    try:
        known = _Known.read(wh.con)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sha256") as hasher:
            plans = [_plan(known, hasher, p, fmt, table, column) for p in paths]
            run.sources = [pl.result for pl in plans]
            _execute(wh, run.run_id, plans, progress, workers or default_workers())
            _log_unchanged(wh, run.run_id, plans)
    finally:
        wh.close()
    if not existed and all(s.status == "failed" for s in run.sources):
        for suffix in ("", ".wal"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    return run


@dataclass
class _Known:
    """What the warehouse already holds, read once per run (thousands of session files, one query each)."""

    sources: dict[str, tuple[int, int]]  # source_id -> (size, mtime_ns)
    conversations: dict[str, dict[str, str]]  # source_id -> conversation_id -> fingerprint

    @classmethod
    def read(cls, con: Any) -> _Known:
        convs: dict[str, dict[str, str]] = {}
        for src, cid, fp in con.execute("SELECT source_id, conversation_id, fingerprint FROM conversations").fetchall():
            convs.setdefault(src, {})[cid] = fp
        srcs = {r[0]: (r[1], r[2]) for r in con.execute("SELECT source_id, size, mtime_ns FROM sources").fetchall()}
        return cls(srcs, convs)


def _plan(known: _Known, hasher: ThreadPoolExecutor, path: Path, fmt: str, table: str | None, column: str | None) -> _Plan:
    res = SourceResult(str(path))
    pl = _Plan(res, started_at=utcnow())
    try:
        src = detect(path, fmt)
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
    resolved = str(path.resolve())
    res.source_id = stable_id(src.format, resolved, pl.options)
    row = known.sources.get(res.source_id)
    pl.stored = known.conversations.get(res.source_id, {})
    if row and row == (pl.size, pl.mtime_ns):
        res.status = "unchanged"
        res.conversations_unchanged = len(pl.stored)
        return pl
    try:
        if src.format == "sqlite":
            _plan_sqlite(pl, resolved, table, column)
        else:
            fp = f"{pl.size}:{pl.mtime_ns}"
            parse = dialogues.parse_file if src.format == "dialogues" else jsonl.parse_file
            pl.tasks.append((parse, (resolved, res.source_id, fp), pl.size))
            pl.todo_bytes = pl.size
    except SourceError as e:
        res.status, res.error = "failed", str(e)
        return pl
    except OSError as e:
        res.status, res.error = "failed", f"{path}: cannot read ({e}); check permissions"
        return pl
    pl.sha256 = hasher.submit(_sha256, path)
    return pl


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
    tasks = _tasks(plans, todo)
    tune(wh.con, max((tag[2] for _, _, tag in tasks), default=0))
    loader = _Loader(wh, run_id)
    done = 0
    failed: set[int] = set()
    for (ids, last, nbytes, grouped), out, err in run_ordered(tasks, workers, total >= PARALLEL_MIN_BYTES):
        results = [err] * len(ids) if err is not None else out.parts if grouped else [out]
        ok = []
        for i, res in zip(ids, results):
            if i in failed:
                continue
            parsed = None if isinstance(res, BaseException) else res
            if parsed is None or parsed.state.get("error"):
                failed.add(i)
                loader.fail(plans[i], _task_error(plans[i], res if parsed is None else None, parsed))
            else:
                ok.append((plans[i], parsed))
        loader.apply(ok, out.tables if err is None else {})
        if last:
            for pl, _ in ok:
                loader.finish(pl)
        done += nbytes
        if progress:
            progress(done, total)
    loader.flush()
    for pl in plans:  # sources with no row to parse (an empty table, every row unchanged)
        if pl.source and not pl.tasks and pl.result.status == "imported":
            loader.finish(pl)
    loader.flush()


Tag = tuple[list[int], bool, int, bool]  # (plan indices, last task of those plans, bytes, one result per plan)


def _tasks(plans: list[_Plan], todo: list[tuple[int, _Plan]]) -> list[tuple[Callable[..., Any], tuple[Any, ...], Tag]]:
    """A task per SQLite chunk; consecutive JSONL files grouped into tasks of ~CHUNK_BYTES, so that a folder
    of thousands of small sessions costs a few hundred round trips and DuckDB statements, not thousands."""
    tasks: list[tuple[Callable[..., Any], tuple[Any, ...], Tag]] = []
    group: list[int] = []
    group_bytes = 0

    def close_group() -> None:
        nonlocal group, group_bytes
        if group:
            args = [plans[i].tasks[0][1] for i in group]
            tasks.append((jsonl.parse_files, (args,), (group, True, group_bytes, True)))
            group, group_bytes = [], 0

    for i, pl in todo:
        if pl.source.format == "jsonl":
            group.append(i)
            group_bytes += pl.todo_bytes
            if group_bytes >= CHUNK_BYTES:
                close_group()
            continue
        close_group()
        tasks.extend((fn, args, ([i], k == len(pl.tasks) - 1, nbytes, False))
                     for k, (fn, args, nbytes) in enumerate(pl.tasks))
    close_group()
    return tasks


def _task_error(pl: _Plan, err: BaseException | None, parsed: Parsed | None) -> str:
    if parsed is not None and parsed.state.get("error"):
        return f"{pl.result.path}: {parsed.state['error']}; check the file or pass --format"
    if isinstance(err, ForensicsError):
        return str(err)
    return f"{pl.result.path}: cannot read ({type(err).__name__}: {err}); check the file"


class _Loader:
    """Loads parsed batches into the warehouse and decides where transactions end.

    A SQLite source is one transaction of its own; JSONL sources share transactions of ~GROUP_BYTES. The
    ``sources`` and ``import_runs`` rows of the sources finished in the open transaction are written just
    before it commits, in one statement each.
    """

    def __init__(self, wh: Warehouse, run_id: str) -> None:
        self.con, self.run_id = wh.con, run_id
        self.open_bytes = 0
        self.in_tx = False
        self.owner: _Plan | None = None  # the SQLite source whose transaction is open
        self.sources: list[tuple[object, ...]] = []  # rows to write before COMMIT
        self.runs: list[tuple[object, ...]] = []

    def _begin(self, pl: _Plan) -> None:
        """Before loading ``pl``'s rows: keep the open transaction or start one (a source never spans two)."""
        if self.in_tx and pl is not self.owner and (
                pl.source.format == "sqlite" or self.owner is not None or self.open_bytes >= GROUP_BYTES):
            self.flush()
        if not self.in_tx:
            self.con.execute("BEGIN TRANSACTION")
            self.in_tx, self.open_bytes = True, 0
        self.owner = pl if pl.source.format == "sqlite" else None

    def flush(self) -> None:
        if self.in_tx:
            if self.sources:
                write_sources(self.con, self.sources)
            if self.runs:
                write_runs(self.con, self.runs)
            self.con.execute("COMMIT")
            self.in_tx = False
        self.sources, self.runs, self.owner = [], [], None

    def fail(self, pl: _Plan, message: str) -> None:
        if pl.result.format == "sqlite" and self.in_tx and self.owner is pl:
            self.con.execute("ROLLBACK")  # a SQLite source has its transaction to itself
            self.in_tx, self.sources, self.runs, self.owner = False, [], [], None
        r = pl.result
        r.status, r.error = "failed", message
        for k in ("messages_read", "messages_imported", "messages_unchanged", "quarantined",
                  "conversations_new", "conversations_updated"):
            setattr(r, k, 0)

    def apply(self, batch: list[tuple[_Plan, Parsed]], tables: dict[str, pa.Table]) -> None:
        """Load the parsed rows of one task (a SQLite chunk, or a group of whole JSONL files): ``tables``
        hold the rows of every source in ``batch``, each with its counters."""
        if not any(pl.result.status != "failed" for pl, _ in batch):
            return
        self._begin(batch[0][0])
        existing: list[str] = []
        for pl, p in batch:
            r = pl.result
            pl.arrays += p.state.get("arrays", 0)
            pl.first_bad = pl.first_bad or p.state.get("first_bad", "")
            if pl.source.format != "sqlite":  # whole files: JSONL sessions, dialogues
                self.open_bytes += pl.todo_bytes
                r.rows_read += p.rows_read
            r.messages_read += p.messages_read
            r.note = "; ".join(dict.fromkeys([*filter(None, [r.note]), *p.notes]))
            old = [c for c in p.conversation_ids if c in pl.stored]
            r.conversations_new += len(p.conversation_ids) - len(old)
            r.conversations_updated += len(old)
            existing += old
        if len(batch) == 1:  # an importer may leave the rows' source to us
            tables = {**tables, **{k: with_source(tables[k], batch[0][0].result.source_id) for k in ("conv", "quar")}}
        whole = [pl.result.source_id for pl, _ in batch if pl.source.format != "sqlite"]
        partial = batch[0][0].result.source_id if batch[0][0].source.format == "sqlite" else None
        unchanged = load_batch(self.con, tables, self.run_id, existing, whole, partial)
        for pl, p in batch:
            same = sum(unchanged.get(c, 0) for c in p.conversation_ids)
            pl.result.messages_unchanged += same
            pl.result.messages_imported += p.messages - same
            pl.result.quarantined += p.quarantined

    def finish(self, pl: _Plan) -> None:
        if pl.result.status == "failed":
            return
        if pl.source.format == "sqlite" and pl.tasks and pl.arrays == 0:
            self.fail(pl, f"{pl.result.path}: no row holds a JSON array of messages ({pl.first_bad})"
                          "; pass the right --table/--column")
            return
        if not self.in_tx:
            self.con.execute("BEGIN TRANSACTION")
            self.in_tx, self.open_bytes = True, 0
        r = pl.result
        self.sources.append((r.source_id, str(Path(r.path).resolve()), r.format,
                             pl.sha256.result() if pl.sha256 else None, pl.size, pl.mtime_ns, pl.options, utcnow()))
        self.runs.append(_run_row(self.run_id, pl))
        if pl.source.format == "sqlite":
            self.flush()


def _run_row(run_id: str, pl: _Plan) -> tuple[object, ...]:
    r = pl.result
    return (run_id, r.source_id, r.path, r.format, r.status, pl.started_at, utcnow(), r.rows_read, r.messages_read,
            r.messages_imported, r.messages_unchanged, r.quarantined, r.conversations_new, r.conversations_updated,
            r.conversations_unchanged, r.note or None)


def _log_unchanged(wh: Warehouse, run_id: str, plans: list[_Plan]) -> None:
    """Unchanged sources get a run row too, so `import_runs` shows every source every run."""
    quiet = [pl for pl in plans if pl.result.status == "unchanged"]
    if not quiet:
        return
    for pl in quiet:
        pl.result.note = "same size and modification time as the last import: not re-read"
    wh.con.execute("BEGIN TRANSACTION")
    write_runs(wh.con, [_run_row(run_id, pl) for pl in quiet])
    wh.con.execute("COMMIT")
