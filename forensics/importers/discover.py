"""From the SOURCE arguments of `forensics ingest` to a list of files and the importer for each."""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from forensics.errors import ForensicsError, SourceError
from forensics.importers.dialogues import looks_like_dialogues
from forensics.importers.jsonl import looks_like_jsonl

FORMATS = ("auto", "sqlite", "jsonl", "dialogues")
EXTENSIONS = {".db": "sqlite", ".sqlite": "sqlite", ".sqlite3": "sqlite", ".jsonl": "jsonl"}
SQLITE_MAGIC = b"SQLite format 3\x00"
SNIFF_BYTES = 1 << 16


@dataclass(frozen=True)
class Source:
    path: Path
    format: str  # sqlite | jsonl | dialogues


def expand(args: list[str]) -> list[Path]:
    """Files, folders (recursive, known extensions only) and globs, in a stable order, each once."""
    out: list[Path] = []
    for a in args:
        matches = sorted(glob.glob(a, recursive=True)) if glob.has_magic(a) else [a]
        if not matches:
            raise ForensicsError(f"{a}: no file matches this pattern")
        for m in matches:
            p = Path(m)
            if p.is_dir():
                out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in EXTENSIONS))
            elif p.exists():
                out.append(p)
            else:
                raise ForensicsError(f"{a}: no such file or folder")
    seen, unique = set(), []
    for p in out:
        key = os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def detect(path: Path, fmt: str = "auto") -> Source:
    """The importer for one file: by its first bytes, then by its extension; an unknown file is an error."""
    if fmt != "auto":
        return Source(path, fmt)
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError as e:
        raise SourceError(str(path), f"cannot read ({e.strerror or e})", "check the path and permissions") from None
    if head.startswith(SQLITE_MAGIC):
        return Source(path, "sqlite")
    by_ext = EXTENSIONS.get(path.suffix.lower())
    if by_ext == "sqlite":
        raise SourceError(str(path), "not a SQLite database (no SQLite header)", "check the file or pass --format")
    if looks_like_dialogues(head):
        return Source(path, "dialogues")
    if by_ext == "jsonl" or looks_like_jsonl(head):
        return Source(path, "jsonl")
    raise SourceError(str(path), "format not recognised (neither SQLite nor JSONL)", "pass --format sqlite|jsonl|dialogues")
