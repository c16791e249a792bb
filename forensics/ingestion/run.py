"""`forensics ingest`: plan each source, parse on both cores, load in bulk, count everything.

Every file the arguments name or hold is accounted for: a source (imported, unchanged or failed, each with
its row in ``import_runs``), a side file read with (or lying beside) its main file, empty (no bytes, or only
blank lines: counted, not a failure) or not recognised. A
file whose path, size and modification time match its last import is not opened. Small files are parsed
many to a task (a task costs a round trip to a worker) and loaded many to a transaction (see `load`); a
format read in parts (a SQLite table, in chunks of rows) has a transaction of its own. A kill leaves every
source either fully imported or not at all; a rerun completes the rest. The orchestrator names no format:
what a format needs is declared on it (``declare.Format``).
"""

from __future__ import annotations

import glob
import hashlib
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson

from forensics.formats.kit import declare, values
from forensics.formats.kit.records import Parsed, source_key
from forensics.ingestion import discover, registry
from forensics.ingestion.catalog import FORMATS
from forensics.ingestion.discover import Found, NotRecognised, Source, detect, expand, fix, real_path, refuse_irregular
from forensics.ingestion.load import Bundle, Loader, bundle, mask_result, tune
from forensics.kernel.errors import ExitCode, ForensicsError, SourceError
from forensics.kernel.workers import default_workers, run_ordered
from forensics.warehouse import DEFAULT_DB, Warehouse, open_warehouse
from forensics.warehouse.core import utcnow

PARALLEL_MIN_BYTES = 32 << 20  # below this much source, parsing inline beats starting worker processes
TASK_BYTES = 4 << 20  # whole files per parse task: about this many bytes, at most TASK_FILES files
TASK_FILES = 64
UNCHANGED = "same size and modification time as the last import: not re-read"
SOURCE = ("imported", "unchanged", "failed")  # the statuses of a source; a side, empty or unrecognised file is none
MASKED_SINCE = (
    "(SELECT coalesce(max(applied_at), TIMESTAMP '1970-01-01') FROM schema_migrations WHERE name = "
    "'m009_secrets_found')"
)
KEPT_SOURCES = (
    "SELECT source_id FROM import_runs WHERE status = 'imported' AND source_id IS NOT NULL GROUP BY 1 "
    "HAVING arg_max(note, finished_at) LIKE '%(--keep-secrets)%'"
)
GENERIC_FIXES = ("; check the file or pass --format", "; check the file, or force one with --format NAME")


@dataclass
class SourceResult:
    """What happened to one source in one run (a row of `import_runs`)."""

    path: str
    format: str | None = None
    status: str = "imported"  # imported | unchanged | failed; a file that is no source: side | empty | unrecognised
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
    """One run: every file it looked at, in order (``sources`` are those of them that are sources)."""

    run_id: str
    db: str
    files: list[SourceResult] = field(default_factory=list)

    @property
    def sources(self) -> list[SourceResult]:
        return [f for f in self.files if f.status in SOURCE]

    @property
    def others(self) -> list[SourceResult]:
        """Side files, empty files and files no format recognised."""
        return [f for f in self.files if f.status not in SOURCE]

    @property
    def exit_code(self) -> ExitCode:
        """OK when no source failed and there was one (or only empty files: nothing to read is no failure)."""
        sources = self.sources
        failed = sum(s.status == "failed" for s in sources)
        if failed == 0 and (sources or any(f.status == "empty" for f in self.files)):
            return ExitCode.OK
        return ExitCode.USAGE if failed == len(sources) else ExitCode.PARTIAL

    def totals(self) -> dict[str, int]:
        keys = (
            "rows_read",
            "messages_read",
            "messages_imported",
            "messages_unchanged",
            "quarantined",
            "skipped",
            "conversations_new",
            "conversations_updated",
            "conversations_unchanged",
        )
        sources = self.sources
        out = {k: sum(getattr(s, k) for s in sources) for k in keys}
        out.update(
            sources=len(sources),
            failed=sum(s.status == "failed" for s in sources),
            files=len(self.files),
            side=sum(f.status == "side" for f in self.files),
            empty=sum(f.status == "empty" for f in self.files),
            unrecognised=sum(f.status == "unrecognised" for f in self.files),
        )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "db": self.db,
            "totals": self.totals(),
            "sources": [asdict(s) for s in self.sources],
            "others": [asdict(s) for s in self.others],
        }


@dataclass
class Plan:
    """One source through the run: identity, work to do, and what parsing learnt about it."""

    result: SourceResult
    source: Source | None = None
    resolved: str = ""
    size: int = 0
    mtime_ns: int = 0
    options: str = "{}"
    chunked: bool = False  # read in parts (Format.chunks): a transaction of its own
    tasks: list[tuple[Callable[..., Parsed], tuple[Any, ...], int]] = field(default_factory=list)
    todo_bytes: int = 0
    stored: dict[str, str] = field(default_factory=dict)  # conversation_id -> fingerprint already stored
    hasher: _Hasher | None = None
    started_at: Any = None
    found: int = 0  # parts of a chunked source that held messages
    if_none_found: str = ""  # its error when none did
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


def ingest(
    sources: list[str | os.PathLike[str]],
    db: str | os.PathLike[str] = DEFAULT_DB,
    fmt: str = "auto",
    table: str | None = None,
    column: str | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    messages_key: str | None = None,
    keep_secrets: bool = False,
) -> IngestResult:
    """Import SOURCES (files, folders, globs) into the warehouse at ``db``; see `forensics ingest --help`.
    Secrets are masked before anything is stored (`forensics.ingestion.mask`) unless ``keep_secrets``."""
    if fmt not in FORMATS:
        raise ForensicsError(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATS)}")
    own = {real_path(Path(str(db) + suffix)) for suffix in ("", ".wal")}  # a warehouse inside a folder it reads
    found = [f for f in expand([str(s) for s in sources]) if real_path(f.path) not in own]
    if not found:
        raise ForensicsError("no files under " + ", ".join(map(str, sources)))
    given = {k: v for k, v in (("table", table), ("column", column), ("messages_key", messages_key)) if v}
    existed = Path(db).exists()
    run = IngestResult(uuid.uuid4().hex[:12], str(db))
    wh = open_warehouse(db)
    try:
        plans = _plan_all(wh, found, fmt, given, keep_secrets)
        run.files = [pl.result for pl in plans]
        _execute(wh, run.run_id, plans, progress, workers or default_workers(), fmt == "auto", keep_secrets)
        if not keep_secrets:  # the summary too: a key in a file name is not printed back
            for f in run.files:
                mask_result(f)
    finally:
        wh.close()
    if not existed and run.exit_code == ExitCode.USAGE:  # nothing could be read: no warehouse of nothing
        for suffix in ("", ".wal"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    return run


def _plan_all(wh: Warehouse, found: list[Found], fmt: str, given: dict[str, str], keep_secrets: bool) -> list[Plan]:
    """A plan per file, with what the warehouse already holds of each source (two queries in all)."""
    known: dict[str, list[tuple[Any, ...]]] = {}
    # a source stored before secrets were masked at ingest (m009) is read again, once, to mask its text: its
    # size and time match nothing, its conversations' fingerprints neither (each is replaced)
    stale = set()
    kept = "" if keep_secrets else f" AND source_id NOT IN ({KEPT_SOURCES})"  # kept before, masked now: read again
    for path, *row, masked in wh.con.execute(
        f"SELECT path, source_id, format, options, size, mtime_ns, imported_at >= {MASKED_SINCE}{kept} FROM sources"
    ).fetchall():
        if not masked:
            stale.add(row[0])
            row[3:] = [None, None]
        known.setdefault(path, []).append(tuple(row))
    plans = [_identify(f, fmt, given, known) for f in found]
    stored = {sid for rows in known.values() for sid, *_ in rows}
    by_id = {pl.result.source_id: pl for pl in plans if pl.result.source_id in stored}
    if by_id:
        for sid, cid, fp in wh.con.execute(
            "SELECT source_id, conversation_id, fingerprint FROM conversations "
            "WHERE source_id IN (SELECT unnest(?::VARCHAR[]))",
            [list(by_id)],
        ).fetchall():
            by_id[sid].stored[cid] = "" if sid in stale else fp
    for pl in plans:
        if pl.result.status == "unchanged":
            pl.result.conversations_unchanged = len(pl.stored)
        elif pl.result.status == "imported":
            _schedule(pl)
    return plans


def _identify(f: Found, fmt: str, given: dict[str, str], known: dict[str, list[tuple[Any, ...]]]) -> Plan:
    """What a file is: a side file, empty, not recognised, or a source (format, options and source id;
    unchanged when its size and mtime match the stored source)."""
    path = f.path
    res = SourceResult(str(path))
    pl = Plan(res, started_at=utcnow())
    try:
        refuse_irregular(path, f.named)  # before the stat: a link loop fails it, a FIFO is never opened
        side = registry.side_of(path)
        if side:
            owner, decl, main = side
            where = (
                f"the {owner.name} files beside it"
                if glob.has_magic(decl.main.replace("{base}", ""))
                else os.path.relpath(main, path.parent)
            )
            res.format, res.status = owner.name, "side"
            res.note = (
                f"read with {where}: {decl.holds}"
                if decl.read
                else f"lies beside {where}, holds no messages: {decl.holds}"
            )
            return pl
        st = path.stat()
        pl.resolved, pl.size, pl.mtime_ns = real_path(path), st.st_size, st.st_mtime_ns
        if st.st_size == 0:  # before the unchanged test: an empty file stored by an older release is empty now
            discover.refuse_empty(path, 0)
        same = [
            row
            for row in known.get(pl.resolved, ())
            if row[3:] == (pl.size, pl.mtime_ns) and fmt in ("auto", row[1]) and _same_options(row[1], row[2], given)
        ]
        if len(same) == 1:  # this very file as last imported (its options given again, or found in its content)
            res.source_id, res.format, pl.options = same[0][:3]
            pl.source = Source(path, res.format, orjson.loads(pl.options))
            res.status, res.note = "unchanged", UNCHANGED
            return pl
        src = detect(path, fmt, given, f.named)
    except NotRecognised as e:
        res.status, res.note = "unrecognised", str(e)
        return pl
    except discover.Empty as e:
        res.status, res.note = "empty", str(e)
        return pl
    except SourceError as e:
        res.status, res.error = "failed", str(e)
        return pl
    except OSError as e:
        res.status, res.error = "failed", f"{path}: cannot read ({e.strerror or e}); check the path"
        return pl
    try:
        form = registry.get(src.format)
    except KeyError:
        res.status, res.error = (
            "failed",
            f"{path}: the format {src.format!r} is not installed; check `forensics formats`",
        )
        return pl
    pl.source, res.format, pl.chunked = src, src.format, form.chunks is not None
    if fmt == "auto" and registry.catch_all(src.format) and (named := registry.suggest(path, src.format)):
        res.note = f"named like {named} files but read as {src.format}; if that is wrong, try --format {named}"
    pl.options = _options(form, src.options)
    res.source_id = source_key(src.format, pl.resolved, pl.options)
    if any(row[0] == res.source_id and row[3:] == (pl.size, pl.mtime_ns) for row in known.get(pl.resolved, ())):
        res.status, res.note = "unchanged", UNCHANGED
    return pl


def _options(form: declare.Format, options: dict[str, Any]) -> str:
    """A source's options as stored (part of its id): every option the format takes, when one is set."""
    if not any(options.get(k) for k in form.options):
        return "{}"
    return orjson.dumps({k: options.get(k) for k in form.options}).decode()


def _same_options(fmt: str, stored: str, given: dict[str, str]) -> bool:
    """A stored source's options are those of this run: the same ones given, or (none given) ones that its
    format found in the file's content."""
    try:
        form = registry.get(fmt)
    except KeyError:  # a plug-in since uninstalled
        return False
    if stored == _options(form, given):
        return True
    return not given and set(orjson.loads(stored)) <= set(form.found_options)


def _schedule(pl: Plan) -> None:
    """The parse tasks of a new or changed source."""
    res, src = pl.result, pl.source
    assert src is not None and res.source_id is not None  # a source to import: identified (see _identify)
    form = registry.get(src.format)
    options = orjson.loads(pl.options)
    try:
        if form.chunks is not None:
            parts = form.chunks(res.path, res.source_id, options, pl.stored)
            pl.tasks, res.rows_read, res.conversations_unchanged = parts.tasks, parts.rows, parts.unchanged
            pl.todo_bytes = sum(n for _, _, n in parts.tasks)
        else:
            fn, args = form.worker(pl.resolved, res.source_id, f"{pl.size}:{pl.mtime_ns}", options)
            pl.tasks.append((fn, args, pl.size))
            pl.todo_bytes = pl.size
    except SourceError as e:
        res.status, res.error = "failed", str(e)
        return
    except OSError as e:
        res.status, res.error = "failed", f"{res.path}: cannot read ({e}); check permissions"
        return
    if not form.hashes:
        pl.hasher = _Hasher(src.path)


def _suggest(r: SourceResult) -> None:
    """A source that failed auto-detection (or was read by the wrong format) and is named like a format's
    files: its error says which --format to try."""
    if r.status != "failed" or "--format " in r.error.replace("--format NAME", ""):
        return
    hint = fix(Path(r.path), r.format)
    if "try --format" not in hint:
        return
    error = r.error
    for generic in GENERIC_FIXES:
        error = error.removesuffix(generic)
    r.error = f"{error}; {hint}"


Tag = list[tuple[Plan, bool, int]]  # per call of a task: (its source, closes the source, bytes)
Call = tuple[Callable[..., Parsed], tuple[Any, ...], str, str]  # (parser, its arguments, path, source id)


def _execute(
    wh: Warehouse,
    run_id: str,
    plans: list[Plan],
    progress: Progress | None,
    workers: int,
    detected: bool,
    keep_secrets: bool,
) -> None:
    todo = [pl for pl in plans if pl.tasks]
    total = sum(pl.todo_bytes for pl in todo)
    tune(wh.con, max((size for pl in todo for _, _, size in pl.tasks), default=0))
    loader = Loader(wh.con, run_id, keep_secrets)
    done = 0
    # the fork server imports the importers once, before forking: their pages are shared by the parse workers
    for tag, b, err in run_ordered(
        _tasks(todo, keep_secrets), workers, total >= PARALLEL_MIN_BYTES, preload=(__name__,)
    ):
        loader.add(b if err is None else Bundle(None, [_error(pl, err) for pl, _, _ in tag]), tag)
        done += sum(n for _, _, n in tag)
        if progress:
            progress(done, total)
    for pl in plans:  # sources with no row to parse (an empty table, every row unchanged)
        if pl.source and not pl.tasks and pl.result.status == "imported":
            loader.add_empty(pl)
    if detected:
        for pl in plans:
            _suggest(pl.result)
    loader.close([pl for pl in plans if pl.result.status in ("unchanged", "failed")])


def _tasks(plans: list[Plan], keep: bool) -> Iterator[tuple[Callable[..., Bundle], tuple[Any, ...], Tag]]:
    """Parse tasks in source order: whole files grouped up to TASK_BYTES or TASK_FILES, a part of a chunked
    source alone."""
    calls: list[Call] = []
    tag: Tag = []
    nbytes = 0
    for pl in plans:
        for k, (fn, args, size) in enumerate(pl.tasks):
            if calls and pl.chunked:
                yield parse_many, (calls, keep), tag
                calls, tag, nbytes = [], [], 0
            calls.append((fn, args, pl.result.path, cast(str, pl.result.source_id)))  # scheduled: identified
            tag.append((pl, k == len(pl.tasks) - 1, size))
            nbytes += size
            if pl.chunked or nbytes >= TASK_BYTES or len(calls) >= TASK_FILES:
                yield parse_many, (calls, keep), tag
                calls, tag, nbytes = [], [], 0
    if calls:
        yield parse_many, (calls, keep), tag


def parse_many(calls: list[Call], keep_secrets: bool = False) -> Bundle:
    """Worker: run each parse; a file that cannot be read becomes its one-line error, the others go on."""
    out: list[tuple[Parsed | str, str]] = []
    for fn, args, path, source_id in calls:
        try:
            with values.counting() as nulled:
                p = fn(*args)
        except Exception as e:  # reported per source; never takes the batch down
            out.append(
                (
                    str(e)
                    if isinstance(e, ForensicsError)
                    else f"{path}: cannot read ({type(e).__name__}: {e}); check the file",
                    source_id,
                )
            )
            continue
        if nulled:
            p.notes.append(values.note(nulled))
        error = p.state.get("error")
        out.append((f"{path}: {error}; check the file or pass --format" if error else p, source_id))
    return bundle(out, keep_secrets)


def _error(pl: Plan, err: BaseException) -> str:
    """A task that died as a whole (a worker process killed, say): its sources fail with this line."""
    return f"{pl.result.path}: parse worker failed ({type(err).__name__}: {err}); rerun to finish"
