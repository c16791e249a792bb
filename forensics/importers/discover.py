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

import orjson

from forensics.errors import ForensicsError, SourceError
from forensics.importers import decision_memory, openai_chat
from forensics.importers.formats import FORMATS
from forensics.importers.claude_code import looks_like_claude_code
from forensics.importers.dialogues import looks_like_dialogues
from forensics.importers.jsonl import looks_like_jsonl

EXTENSIONS = {".db": "sqlite", ".sqlite": "sqlite", ".sqlite3": "sqlite", ".jsonl": "jsonl", ".json": "json"}
SQLITE_MAGIC = b"SQLite format 3\x00"
SNIFF_BYTES = 1 << 16
SNIFF_LINES = 5


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
                out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in EXTENSIONS
                                  and (f.suffix.lower() != ".json" or _is_chat_log(f, messages_key))))
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
    """The importer for one file: by its first bytes and records, then its extension; unknown is an error."""
    if fmt != "auto":
        return Source(path, fmt, messages_key)
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError as e:
        raise SourceError(str(path), f"cannot read ({e.strerror or e})", "check the path and permissions") from None
    if head.startswith(SQLITE_MAGIC):
        return Source(path, decision_memory.FORMAT if decision_memory.looks_like(path) else "sqlite")
    by_ext = EXTENSIONS.get(path.suffix.lower())
    if by_ext == "sqlite":
        raise SourceError(str(path), "not a SQLite database (no SQLite header)", "check the file or pass --format")
    if looks_like_dialogues(head):  # before the chat sniff: labeled turns also carry a role
        return Source(path, "dialogues")
    if any(isinstance(r, dict) and looks_like_claude_code(r) for r in _first_records(head)):
        return Source(path, "claude-code")
    chat = openai_chat.sniff(head, messages_key)
    if chat:
        return Source(path, chat[0], chat[1])
    if by_ext == "jsonl" or looks_like_jsonl(head):
        return Source(path, "jsonl")
    raise SourceError(str(path), "format not recognised (not SQLite, Claude Code, OpenAI/ShareGPT chat, JSONL "
                      "sessions or labeled dialogues)", "pass --format " + "|".join(FORMATS[1:]))


def _is_chat_log(path: Path, messages_key: str | None) -> bool:
    try:
        return detect(path, "auto", messages_key).format in ("claude-code", "openai", "sharegpt")
    except SourceError:
        return False


def _first_records(head: bytes) -> list[object]:
    out = []
    for line in head.split(b"\n")[:SNIFF_LINES]:
        try:
            out.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue
    return out
