"""From the SOURCE arguments of `forensics ingest` to a list of files and the importer for each.

Formats are told apart by content (first bytes, first records), the extension only breaking ties, so a
folder such as ``~/.claude/projects`` or a mixed folder of traces imports with no flags. A file that matches
no known shape is reported as such, never guessed.
"""
from __future__ import annotations

import functools
import glob
import os
from dataclasses import dataclass
from pathlib import Path

from forensics.errors import ForensicsError, SourceError
from forensics.importers import registry

ALWAYS = (".db", ".sqlite", ".sqlite3", ".jsonl")  # taken from a folder, and reported when unreadable


@dataclass(frozen=True)
class Source:
    path: Path
    format: str  # one of FORMATS except auto
    messages_key: str | None = None  # openai: the record key holding the messages, when not "messages"


def expand(args: list[str], messages_key: str | None = None) -> list[Path]:
    """Files, folders (recursive, known extensions only) and globs, in a stable order, each once.

    In a folder, a ``*.json`` file is taken only when its content is a chat log (settings, package manifests
    and other JSON files live beside logs); a file named on the command line is always taken and reported.
    """
    out: list[Path] = []
    for a in args:
        matches = sorted(glob.glob(a, recursive=True)) if glob.has_magic(a) else [a]
        if not matches:
            raise ForensicsError(f"{a}: no file matches this pattern")
        for m in matches:
            p = Path(m)
            if p.is_dir():
                out.extend(sorted(f for f in p.rglob("*") if f.is_file() and _wanted(f, messages_key)))
            elif p.exists():
                out.append(p)
            else:
                raise ForensicsError(f"{a}: no such file or folder")
    seen, unique = set(), []
    for p in out:
        key = real_path(p)
        if key not in seen:
            seen.add(key)
            unique.append(p)
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


def detect(path: Path, fmt: str = "auto", messages_key: str | None = None) -> Source:
    """The format of one file: by its content (first bytes and records), the extension only breaking ties;
    unknown is an error."""
    if fmt != "auto":
        return Source(path, fmt, messages_key)
    probe = registry.Probe(path, messages_key)
    if path.suffix.lower() in (".db", ".sqlite", ".sqlite3") and not probe.is_sqlite:
        raise SourceError(str(path), "not a SQLite database (no SQLite header)", "check the file or pass --format")
    found = registry.sniff(probe)
    if found is None:
        raise SourceError(str(path), f"format not recognised (by any of the {len(registry.ordered())} formats "
                          "`forensics formats` lists)", "check the file, or force one with --format NAME")
    fmt_, options = found
    return Source(path, fmt_.name, options.get("messages_key", messages_key))


def _wanted(path: Path, messages_key: str | None) -> bool:
    """In a folder: database and JSONL files always (an unreadable one is reported); other files a format
    offers to read (``*.json``, ``*.md``, ``*.eval``, ...) only when their content is of a format other than
    the generic JSONL one: settings, notes and manifests live beside logs."""
    suffix = path.suffix.lower()
    if suffix in ALWAYS:
        return True
    if not registry.offered(path):
        return False
    try:
        return detect(path, "auto", messages_key).format != "jsonl"
    except SourceError:
        return False
