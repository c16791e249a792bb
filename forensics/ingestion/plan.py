"""The plan of an ingest run: what each file is (a source with its format, options and id, unchanged since its
last import, a side file, empty, or not recognised), what the warehouse already holds of it, and the parse tasks
of each source to read. ``ingestion.run`` carries the plans out; what each file comes to is its
``accounting.SourceResult``.
"""

from __future__ import annotations

import glob
import hashlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from forensics.formats.kit import declare
from forensics.formats.kit.records import Parsed, source_key
from forensics.ingestion import checkpoints, discover, registry
from forensics.ingestion.accounting import SourceResult
from forensics.ingestion.discover import Found, NotRecognised, Source, detect, real_path, refuse_irregular
from forensics.kernel.errors import SourceError
from forensics.warehouse import Warehouse
from forensics.warehouse.core import utcnow

UNCHANGED = "same size and modification time as the last import: not re-read"
MASKED_SINCE = (
    "(SELECT coalesce(max(applied_at), TIMESTAMP '1970-01-01') FROM schema_migrations WHERE name = "
    "'m009_secrets_found')"
)
KEPT_SOURCES = (
    "SELECT source_id FROM import_runs WHERE status = 'imported' AND source_id IS NOT NULL GROUP BY 1 "
    "HAVING arg_max(note, finished_at) LIKE '%(--keep-secrets)%'"
)


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
    retire: bool = False  # superseded (``checkpoints``) after an earlier run stored it: its conversations go


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


def plan_all(wh: Warehouse, found: list[Found], fmt: str, given: dict[str, str], keep_secrets: bool) -> list[Plan]:
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
    plans += _supersede(plans, known)
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
            pl.result.stored_conversations(len(pl.stored))
        elif pl.result.status == "imported":
            _schedule(pl)
    return plans


def _supersede(plans: list[Plan], known: dict[str, list[tuple[Any, ...]]]) -> list[Plan]:
    """The Entire CLI's earlier checkpoints of a session whose later checkpoint holds them whole (``checkpoints``):
    not read, counted as superseded. One stored by an earlier run is retired (its conversations removed); one
    stored but not among this run's files gets a plan of its own. Returns those extra plans."""
    run = {pl.resolved: pl for pl in plans if pl.resolved and pl.result.status in ("imported", "unchanged")}
    stored = [p for p in known if p not in run and os.path.basename(p) == checkpoints.TRANSCRIPT]
    extra = []
    for s in checkpoints.supersede(Path(p) for p in [*run, *stored]):
        key = str(s.path)
        pl = run.get(key)
        if pl is None:
            pl = Plan(SourceResult(key), resolved=key, started_at=utcnow())
            pl.result.identified(known[key][0][1], known[key][0][0])
            extra.append(pl)
        pl.retire = key in known
        pl.result.superseded(s.note())
    return extra


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
            res.not_a_source(
                "side",
                f"read with {where}: {decl.holds}"
                if decl.read
                else f"lies beside {where}, holds no messages: {decl.holds}",
                owner.name,
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
            source_id, fmt_stored, pl.options = same[0][:3]
            res.identified(fmt_stored, source_id)
            pl.source = Source(path, fmt_stored, orjson.loads(pl.options))
            res.unchanged(UNCHANGED)
            return pl
        src = detect(path, fmt, given, f.named)
    except NotRecognised as e:
        res.not_a_source("unrecognised", str(e))
        return pl
    except discover.Empty as e:
        res.not_a_source("empty", str(e))
        return pl
    except SourceError as e:
        res.fail(str(e))
        return pl
    except OSError as e:
        res.fail(f"{path}: cannot read ({e.strerror or e}); check the path")
        return pl
    try:
        form = registry.get(src.format)
    except KeyError:
        res.fail(f"{path}: the format {src.format!r} is not installed; check `forensics formats`")
        return pl
    pl.source, pl.chunked = src, form.chunks is not None
    res.identified(src.format)
    if fmt == "auto" and registry.catch_all(src.format) and (named := registry.suggest(path, src.format)):
        res.advise(f"named like {named} files but read as {src.format}; if that is wrong, try --format {named}")
    pl.options = _options(form, src.options)
    res.identified(src.format, source_key(src.format, pl.resolved, pl.options))
    if any(row[0] == res.source_id and row[3:] == (pl.size, pl.mtime_ns) for row in known.get(pl.resolved, ())):
        res.unchanged(UNCHANGED)
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
            pl.tasks = parts.tasks
            res.planned(parts.rows, parts.unchanged)
            pl.todo_bytes = sum(n for _, _, n in parts.tasks)
        else:
            fn, args = form.worker(pl.resolved, res.source_id, f"{pl.size}:{pl.mtime_ns}", options)
            pl.tasks.append((fn, args, pl.size))
            pl.todo_bytes = pl.size
    except SourceError as e:
        res.fail(str(e))
        return
    except OSError as e:
        res.fail(f"{res.path}: cannot read ({e}); check permissions")
        return
    if not form.hashes:
        pl.hasher = _Hasher(src.path)
