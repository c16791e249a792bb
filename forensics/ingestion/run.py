"""`forensics ingest`: plan each source (``plan``), parse on both cores, load in bulk (``load``), count everything
(``accounting``).

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

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

from forensics.formats.kit import values
from forensics.formats.kit.records import Parsed
from forensics.ingestion.accounting import IngestResult, SourceResult
from forensics.ingestion.catalog import FORMATS
from forensics.ingestion.discover import expand, fix, real_path
from forensics.ingestion.load import Bundle, Loader, bundle, tune
from forensics.ingestion.plan import Plan, plan_all
from forensics.kernel.errors import ExitCode, ForensicsError
from forensics.kernel.workers import default_workers, run_ordered
from forensics.warehouse import DEFAULT_DB, Warehouse, open_warehouse

PARALLEL_MIN_BYTES = 32 << 20  # below this much source, parsing inline beats starting worker processes
TASK_BYTES = 4 << 20  # whole files per parse task: about this many bytes, at most TASK_FILES files
TASK_FILES = 64
GENERIC_FIXES = ("; check the file or pass --format", "; check the file, or force one with --format NAME")


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
        plans = plan_all(wh, found, fmt, given, keep_secrets)
        run.files = [pl.result for pl in plans]
        _execute(wh, run.run_id, plans, progress, workers or default_workers(), fmt == "auto", keep_secrets)
        if not keep_secrets:  # the summary too: a key in a file name is not printed back
            for f in run.files:
                f.mask()
    finally:
        wh.close()
    if not existed and run.exit_code == ExitCode.USAGE:  # nothing could be read: no warehouse of nothing
        for suffix in ("", ".wal"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    return run


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
    r.hint(f"{error}; {hint}")


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
    # the fork server imports the importers (and compiles the secret rules) once, before forking: their pages are
    # shared by the parse workers
    preload = (__name__,) if keep_secrets else (__name__, "forensics.ingestion.warm")
    for tag, b, err in run_ordered(_tasks(todo, keep_secrets), workers, total >= PARALLEL_MIN_BYTES, preload=preload):
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
    loader.close([pl for pl in plans if pl.result.status in ("unchanged", "failed", "superseded")])


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
