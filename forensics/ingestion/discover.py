"""From the SOURCE arguments of `forensics ingest` to the files they name, and what each file is.

Formats are told apart by content (first bytes, first records), the extension only breaking ties, so a
folder such as ``~/.claude/projects`` or a mixed folder of traces imports with no flags. A file that matches
no known shape is reported as such, never guessed. Every file of a folder is accounted for: a source, a
side file of one (declared by its format, see ``declare.Side``), or not recognised.
"""

from __future__ import annotations

import errno
import functools
import glob
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.formats.kit import declare
from forensics.ingestion import registry
from forensics.kernel.errors import ForensicsError, SourceError

ALWAYS = (".db", ".sqlite", ".sqlite3", ".jsonl")  # in a folder, reported as failed when no format reads them
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Source:
    path: Path
    format: str  # one of FORMATS except auto
    options: dict[str, Any] = field(default_factory=dict)  # the format's options (declare.Format.options)


@dataclass(frozen=True)
class Found:
    """A file the SOURCE arguments name: ``named`` itself on the command line, else found in a folder."""

    path: Path
    named: bool


def expand(args: list[str]) -> list[Found]:
    """Files, folders (every file under them) and globs, in a stable order, each once. A side file named
    on the command line brings its main file (the one its format reads it with)."""
    out: list[Found] = []
    for a in args:
        matches = sorted(glob.glob(a, recursive=True)) if glob.has_magic(a) else [a]
        if not matches:
            raise ForensicsError(f"{a}: no file matches this pattern")
        for m in matches:
            p = Path(m)
            if p.is_dir():  # every entry but folders: a FIFO or a link loop in it is listed as not read
                out.extend(Found(f, False) for f in sorted(p.rglob("*")) if not f.is_dir())
            elif p.exists():
                side = registry.side_of(p)
                out.extend([Found(p, True)] + ([Found(side[2], True)] if side else []))
            elif p.is_symlink():  # a link loop or a dangling link: refused as a source, in one line
                out.append(Found(p, True))
            else:
                raise ForensicsError(f"{a}: no such file or folder")
    seen, unique = set(), []
    for f in out:
        key = real_path(f.path)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


@functools.lru_cache(maxsize=1 << 16)
def real_path(path: Path) -> str:
    """The resolved path, each folder resolved once (thousands of session files share a few folders)."""
    s = os.path.abspath(path)
    if os.path.islink(s):
        return os.path.realpath(s)
    folder, name = os.path.split(s)
    return os.path.join(_real_folder(folder), name)


@functools.lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


class NotRecognised(Exception):
    """A file found in a folder that no format reads: counted and listed, not a failure (settings, notes
    and manifests live beside logs). Its message says what it was tested against."""


class Empty(Exception):
    """A file that holds nothing: no bytes, or only blank lines. No source and no conversation; counted and
    listed as empty, not a failure (a session file created and never written, an export of nothing). Its
    message says what it holds."""


def refuse_empty(path: Path, size: int) -> None:
    """Raise Empty when the file holds no bytes or only blank ones (white space, line ends, a UTF-8 byte-order
    mark). Reads only while what it has read is blank: one small read for a log."""
    if size:
        with open(path, "rb") as f:
            if f.read(4096).removeprefix(BOM).strip():
                return
            while chunk := f.read(1 << 20):
                if chunk.strip():
                    return
    held = f"only blank lines, {size} byte{'s' * (size > 1)}" if size else "0 bytes"
    raise Empty(f"empty file ({held}): no conversation, skipped")


def not_regular(path: Path) -> str | None:
    """What a path is when it is no regular file (a FIFO, a socket, a device, a link loop or a dangling link),
    else None. Such a path is never opened: a FIFO would block every reader for ever, a device never ends."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a symbolic link loop"
        if e.errno == errno.ENOENT and os.path.islink(path):
            return f"a dangling symbolic link (to {os.readlink(path)})"
        return None  # the reader's open says what is wrong, in its words
    for test, what in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else f"a file of mode {stat.filemode(mode)}"


def refuse_irregular(path: Path, named: bool) -> None:
    """Refuse a path that is no regular file, before anything opens it: a source named on the command line
    fails in one line (SourceError); one found in a folder is listed as not read (NotRecognised)."""
    what = not_regular(path)
    if what is None:
        return
    if named:
        raise SourceError(str(path), f"not a regular file but {what}; not read", "name the log file itself")
    raise NotRecognised(f"not read: not a regular file but {what}")


def detect(path: Path, fmt: str = "auto", options: dict[str, Any] | None = None, named: bool = True) -> Source:
    """The format of one file: by its content (first bytes and records), the extension only breaking ties.

    An empty file raises Empty, whatever the format. Unknown is an error (SourceError) for a file named on the
    command line, one with a database or JSONL suffix, or one named like a format's files (then the error says
    which ``--format`` to try); any other file of a folder raises NotRecognised."""
    options = dict(options or {})
    refuse_irregular(path, named)
    refuse_empty(path, path.stat().st_size)
    if fmt != "auto":
        return Source(path, fmt, options)
    claimed = registry.suggest(path)
    strict = named or path.suffix.lower() in ALWAYS or claimed is not None
    if not (strict or registry.offered(path)):
        raise NotRecognised(f"not read: no format reads {_kind(path)} files")
    probe = declare.Probe(path, options.get("messages_key"))
    if path.suffix.lower() in (".db", ".sqlite", ".sqlite3") and not probe.is_sqlite:
        raise SourceError(str(path), "not a SQLite database (no SQLite header)", fix(path, None))
    found = registry.sniff(probe)
    tested = f"by any of the {len(registry.ordered())} formats `forensics formats` lists"
    if found is None:
        if strict:
            raise SourceError(str(path), f"format not recognised ({tested})", fix(path, None))
        raise NotRecognised(f"not recognised {tested}")
    fmt_, found_options = found
    if not named and fmt_.name == "jsonl" and not strict:  # the generic JSONL sniff takes any .json of objects
        raise NotRecognised(f"not recognised {tested} (only by the generic jsonl one, which reads *.jsonl files alone)")
    return Source(path, fmt_.name, {**options, **found_options})


def fix(path: Path, tried: str | None) -> str:
    """What to do about a file that no format (or not ``tried``) could read: the format it is named like."""
    name = registry.suggest(path, tried)
    if name:
        return f"it is named like {name} files: try --format {name}"
    return "check the file, or force one with --format NAME"


def _kind(path: Path) -> str:
    return f"*{path.suffix}" if path.suffix else f"{path.name!r}"
