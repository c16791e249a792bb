"""What a format declares: its name, a content sniff over a ``Probe`` (a file's first bytes), a reader or
a columnar task, and its side files (``Side``). The registry (``forensics.ingestion.registry``) lists the
formats and detects with these; a format imports only this and the rest of the kit."""

from __future__ import annotations

import fnmatch
import functools
import glob
import re
import shutil
import sqlite3
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from forensics.formats.kit import model, values
from forensics.formats.kit.records import Parsed, split_lines
from forensics.kernel.errors import SourceError

SNIFF_BYTES = 1 << 16
SNIFF_LINES = 5
SQLITE_MAGIC = b"SQLite format 3\x00"
ZIP_MAGIC = b"PK\x03\x04"
Sniff = Callable[["Probe"], "bool | dict[str, Any] | None"]
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[][{}:]', re.DOTALL)  # a JSON string, or a bracket, brace or colon


@dataclass(frozen=True)
class Side:
    """A file that belongs to another one of its format and is no source of its own: a file named like
    ``name`` (a glob of the file name, or with ``/`` of the path's last parts) is a side file when ``main``
    (a glob relative to its folder, ``..`` allowed; ``{base}`` is the side file's name up to its first dot,
    ``{parent}`` the name of the folder above its own) names another file that exists. ``read``: the
    importer reads it with the main file (else it only lies beside it, holding no messages); ``holds``: what
    it holds, for the listing."""

    name: str
    main: str
    holds: str
    read: bool = True

    def main_of(self, path: Path) -> Path | None:
        """The main file this file is a side file of, or None."""
        if not fnmatch.fnmatchcase("/".join(path.parts[-(self.name.count("/") + 1) :]), self.name):
            return None
        pattern = self.main.format(
            base=glob.escape(path.name.split(".", 1)[0]), parent=glob.escape(path.parent.parent.name)
        )
        return next((m for m in sorted(path.parent.glob(pattern)) if m != path and m.is_file()), None)


@dataclass(frozen=True)
class Chunks:
    """A source read in parts (rows of a database): the parse tasks of what changed, how many rows the
    source holds, and how many of its conversations are unchanged (not re-read)."""

    tasks: list[tuple[Callable[..., Parsed], tuple[Any, ...], int]]  # (worker, its arguments, bytes)
    rows: int
    unchanged: int


Chunker = Callable[[str, str, dict[str, Any], dict[str, str]], Chunks]  # (path, source id, options, stored)


@dataclass(frozen=True)
class Format:
    """A log format: its name (``--format``), a content sniff and a reader.

    ``sniff(probe)`` answers from a file's first bytes and records whether the file is of this format
    (True, or a dict of source options such as ``{"messages_key": "traj"}``). ``read(path, log)`` yields its
    conversations (module level, so that worker processes can run it). A folder walk offers a file to the
    sniffs when its suffix is in ``suffixes`` or its name in ``names``.

    What the orchestrator needs to know, declared here so that it names no format: ``sides``, the files
    read with a main file (or lying beside it) that are no source of their own; ``claims``, globs of the
    names (or, with a ``/``, of the whole paths) this format's files have, so that a file that fails
    auto-detection is told to try ``--format NAME``; ``options``, the ingest options it takes (``table``,
    ``column``, ``messages_key``), and of them ``found_options``, those its sniff may find in the content;
    ``chunks``, a reader of a source in parts (rows) whose unchanged parts are not re-read, in its own
    transaction; ``hashes``, the task hands back the SHA-256 of the bytes it read (``state["sha256"]``).
    """

    name: str
    summary: str
    sniff: Sniff
    read: model.Reader | None = None
    task: Callable[..., Parsed] | None = None  # (path, source id, fingerprint, *option values) -> Parsed
    suffixes: tuple[str, ...] = (".json", ".jsonl")
    names: tuple[str, ...] = ()
    sides: tuple[Side, ...] = ()
    claims: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    found_options: tuple[str, ...] = ()
    chunks: Chunker | None = None
    hashes: bool = False

    def claimed(self, path: Path) -> bool:
        """The path is named like a file of this format (see ``claims``)."""
        full = path.as_posix()
        return any(fnmatch.fnmatchcase(full if "/" in c else path.name, c) for c in self.claims)

    def worker(
        self, path: str, source_id: str, fingerprint: str, options: dict[str, Any]
    ) -> tuple[Callable[..., Parsed], tuple[Any, ...]]:
        """The parse task for one file: a function and its (picklable) arguments."""
        if self.task is not None:
            return self.task, (path, source_id, fingerprint, *(options.get(k) for k in self.options))
        if self.read is None:
            raise TypeError(f"format {self.name!r} has neither read nor task")
        return model.parse, (self.read, path, source_id)  # conversations are fingerprinted by their content


class Probe:
    """A file as the sniffs see it: its first bytes, and lazily its first records, its whole JSON document
    when small, its SQLite tables or its zip members. Never writes; reads at most SNIFF_BYTES of text."""

    def __init__(self, path: Path, messages_key: str | None = None) -> None:
        self.path, self.messages_key = path, messages_key
        try:
            with open(path, "rb") as f:
                self.head = f.read(SNIFF_BYTES).removeprefix(values.BOM)  # a byte-order mark tells no format
                self.complete = not f.read(1)  # the head is the whole file
        except OSError as e:
            raise SourceError(str(path), f"cannot read ({e.strerror or e})", "check the path and permissions") from None

    @property
    def is_sqlite(self) -> bool:
        return self.head.startswith(SQLITE_MAGIC)

    @property
    def is_zip(self) -> bool:
        return self.head.startswith(ZIP_MAGIC)

    @functools.cached_property
    def records(self) -> list[Any]:
        """The JSON values of the first lines that parse (JSONL)."""
        out = []
        for line in split_lines(self.head)[:SNIFF_LINES]:
            try:
                out.append(values.loads(line))
            except (orjson.JSONDecodeError, ValueError):
                continue
        return out

    @functools.cached_property
    def document(self) -> Any:
        """The whole file as one JSON value when it fits in the head, else None."""
        if not self.complete or self.head.lstrip()[:1] not in (b"{", b"["):
            return None
        try:
            return values.loads(self.head, deep=True)
        except (orjson.JSONDecodeError, ValueError):
            return None

    @functools.cached_property
    def first_keys(self) -> tuple[tuple[str, ...], bool]:
        """The keys of the first object of a JSON array file in the order written, as far as the head holds
        them, and whether the object ends in the head: the start of an export cut short (or whose first item
        runs past the head) still tells its format."""
        head = self.head.removeprefix(b"\xef\xbb\xbf").lstrip()
        if head[:1] != b"[" or head[1:].lstrip()[:1] != b"{":
            return (), False
        keys: list[str] = []
        depth, last = 0, b""
        for m in _TOKEN.finditer(head):
            tok = m.group()
            if tok in (b"[", b"{"):
                depth += 1
            elif tok in (b"]", b"}"):
                depth -= 1
                if depth < 2:
                    return tuple(keys), True
            elif tok == b":" and depth == 2 and last[:1] == b'"':
                keys.append(last[1:-1].decode("utf-8", "replace"))
            last = tok
        return tuple(keys), False

    @functools.cached_property
    def tables(self) -> dict[str, list[str]]:
        """SQLite: table name -> column names (opened read-only; empty when unreadable)."""
        if not self.is_sqlite:
            return {}
        try:
            con = connect_ro(self.path)
            try:
                names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
                return {
                    t: [r[1] for r in con.execute(f'PRAGMA table_info("{t.replace(chr(34), chr(34) * 2)}")')]
                    for t in names
                }
            finally:
                con.close()
        except sqlite3.Error:
            return {}

    @functools.cached_property
    def members(self) -> list[str]:
        """Zip: the member names (empty when not a readable zip)."""
        if not self.is_zip:
            return []
        try:
            with zipfile.ZipFile(self.path) as z:
                return z.namelist()
        except (zipfile.BadZipFile, OSError, ValueError):
            return []


def connect_ro(path: str | Path, raw_text: bool = False) -> sqlite3.Connection:
    """Open read-only; the source is never written, nor anything beside it. ``raw_text`` returns TEXT as bytes (no
    decode copy).

    SQLite writes a ``-shm`` (and an empty ``-wal``) beside a WAL-mode database whenever it reads one, even with
    ``mode=ro``. So a WAL-mode file with no ``-wal`` beside it (nothing uncheckpointed to read) is opened
    ``immutable``; one whose ``-wal`` lies beside it with no ``-shm`` is copied with its ``-wal`` to a temporary folder
    and read there (removed on close); one with both (a live store) is read in place, as SQLite shares them.
    """
    src = Path(path).resolve()
    wal, shm = src.with_name(src.name + "-wal"), src.with_name(src.name + "-shm")
    flags, factory, target = "?mode=ro", sqlite3.Connection, src
    if _wal_mode(src) and not shm.exists():
        if not wal.exists():
            flags = "?mode=ro&immutable=1"
        else:
            factory, target = _Copied, _copy_with_wal(src, wal)
    uri = "file:" + quote(str(target)) + flags
    try:
        con = sqlite3.connect(uri, uri=True, check_same_thread=False, factory=factory)
    except sqlite3.Error:
        if target != src:
            shutil.rmtree(target.parent, ignore_errors=True)
        raise
    con.text_factory = bytes if raw_text else _text
    if isinstance(con, _Copied):
        con.folder = target.parent
    return con


def _wal_mode(path: Path) -> bool:
    """The database header says WAL (bytes 18 and 19, the file format's read and write versions, are 2)."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return False
    return len(head) == 20 and head[:16] == b"SQLite format 3\x00" and head[18] == 2


def _copy_with_wal(src: Path, wal: Path) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="forensics-sqlite-"))
    shutil.copyfile(src, folder / src.name)
    shutil.copyfile(wal, folder / wal.name)
    return folder / src.name


class _Copied(sqlite3.Connection):
    """A connection to a temporary copy: its folder goes with it."""

    folder: Path | None = None

    def close(self) -> None:
        super().close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _text(b: bytes) -> str:
    """A TEXT cell as a string: bytes that are not UTF-8 (a lone surrogate's, a cut character) replaced by
    U+FFFD and counted (``values``), never failing the row."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        values.bad("invalid UTF-8 text")
        return b.decode("utf-8", "replace")
