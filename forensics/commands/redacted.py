"""`forensics secrets --export-redacted OUT` (docs/secrets.md#the-exposure-ledger-which-secret-where-seen-by-whom): a copy of a warehouse's sources with every secret
replaced by the mask, each file still valid in its format, for sharing logs. The sources are only read.

What is copied: every file under the folder the sources share (so the side files a format reads beside its main
file come too: sub-agent transcripts, tool results, Cline's ui_messages.json), each to the same relative path
under OUT (a secret in a file name masked there too):

- a SQLite database is copied, then every text cell of every table is masked in the copy (a cell holding JSON
  as JSON, below);
- a JSON or JSONL file is masked record by record: its strings are read as ingest reads them (escapes undone, so a
  key written with \\u escapes is found), and a record holding a secret is written again with it masked (a record
  without one is left byte for byte); a line that is no JSON is masked as text;
- any other text file is masked as text;
- a zip archive (Inspect AI's .eval) is rebuilt with each member masked as a file of its own;
- a file that is none of these (an image) is not copied, and listed.

Line breaks inside a secret are kept (each line's part is masked), so line-based formats keep their lines.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from forensics.formats.kit.declare import connect_ro
from forensics.kernel import secret_rules
from forensics.kernel.errors import ForensicsError

SQLITE = b"SQLite format 3\x00"


@dataclass
class Redacted:
    root: str  # the folder the sources share
    out: str
    files: int = 0  # files written
    masked: int = 0  # secrets replaced
    skipped: list[str] = field(default_factory=list)  # files not copied (not text, not SQLite), relative
    missing: list[str] = field(
        default_factory=list
    )  # sources no longer where the warehouse says (or named by a masked path)


def _maybe(texts: list[str]) -> list[bool]:
    """Which texts may hold a secret: the prefilter ingest runs (polars, Rust's regex), one call per pattern."""
    import polars as pl

    cells = pl.Series(texts, dtype=pl.String)
    hit = [False] * len(texts)
    for p in secret_rules.prefilter():
        for i in cells.str.contains(p).arg_true().to_list():
            hit[i] = True
    return hit


def _scan(text: str) -> list[secret_rules.Find]:
    return secret_rules.scan(text) if _maybe([text])[0] else []


def mask_lines(text: str) -> tuple[str, int]:
    """``text`` with each secret masked, each line break inside one kept; and how many were masked."""
    finds = _scan(text)
    return (_apply(text, finds), len(finds)) if finds else (text, 0)


def _apply(text: str, finds: list[secret_rules.Find]) -> str:
    out, last = [], 0
    for f in finds:
        out.append(text[last : f.start])
        out.append("\n".join(secret_rules.MASK if part else "" for part in text[f.start : f.end].split("\n")))
        last = f.end
    out.append(text[last:])
    return "".join(out)


def _strings(value: Any, out: list[str]) -> list[str]:
    """Every string of a parsed JSON value, keys included."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(k)
            _strings(v, out)
    return out


def _replace(value: Any, masked: dict[str, str]) -> Any:
    if isinstance(value, str):
        return masked.get(value, value)
    if isinstance(value, list):
        return [_replace(v, masked) for v in value]
    if isinstance(value, dict):
        return {masked.get(k, k): _replace(v, masked) for k, v in value.items()}
    return value


def _masked_strings(strings: list[str]) -> tuple[dict[str, str], int]:
    """The strings that hold a secret, masked (the prefilter over all of them at once, then the scan of the few
    it picks); and how many secrets."""
    masked, n = {}, 0
    for text, maybe in zip(strings, _maybe(strings) if strings else []):
        if maybe and text not in masked:
            finds = secret_rules.scan(text)
            if finds:
                masked[text] = _apply(text, finds)
                n += len(finds)
    return masked, n


def mask_json(text: str) -> tuple[str, int]:
    """One JSON document or record, masked and still valid: its strings are read as ingest reads them (escapes
    undone), and when one holds a secret the value is written again with it masked; a document with no secret is
    left byte for byte. Text that is no JSON is masked as text."""
    try:
        value = json.loads(text)
    except ValueError:
        return mask_lines(text)
    masked, n = _masked_strings(_strings(value, []))
    if not n:
        return text, 0
    compact = '":' in text and '": ' not in text
    return json.dumps(
        _replace(value, masked),
        ensure_ascii=False,
        indent=2 if "\n" in text.strip() else None,
        separators=(",", ":") if compact else None,
    ), n


def _zip_file(src: Path, dest: Path) -> int | None:
    """An archive of logs (an Inspect AI .eval): each member masked as a file of its own, the archive rebuilt."""
    import zipfile

    n = 0
    try:
        with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                data = zin.read(info)
                masked = _text(data)
                if masked is None:
                    continue  # a member that is not text: left out, as a file would be
                zout.writestr(info, masked[0].encode("utf-8"))
                n += masked[1]
    except zipfile.BadZipFile:
        dest.unlink(missing_ok=True)
        return None
    return n


def _text_file(src: Path, dest: Path) -> int | None:
    got = _text(src.read_bytes())
    if got is None:
        return None
    dest.write_text(got[0], encoding="utf-8")
    return got[1]


def _text(raw: bytes) -> tuple[str, int] | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            json.loads(text)
            masked, n = mask_json(text)
        except ValueError:  # JSONL: record by record
            masked, n = _jsonl(text)
    else:
        masked, n = mask_lines(text)
    return masked, n


def _jsonl(text: str) -> tuple[str, int]:
    """JSONL, record by record, with one prefilter pass over every string of every record."""
    lines = text.split("\n")
    values: list[Any] = []
    for line in lines:
        try:
            values.append(json.loads(line) if line.strip() else None)
        except ValueError:
            values.append(ValueError)  # no JSON: masked as text
    masked, n = _masked_strings([x for v in values if v is not ValueError for x in _strings(v, [])])
    out = []
    for line, v in zip(lines, values):
        if v is ValueError:
            line, k = mask_lines(line)
            n += k
        elif masked and any(x in masked for x in _strings(v, [])):
            compact = '":' in line and '": ' not in line
            line = json.dumps(_replace(v, masked), ensure_ascii=False, separators=(",", ":") if compact else None)
        out.append(line)
    return "\n".join(out), n


def _sqlite_file(src: Path, dest: Path) -> int:
    """The database copied (through SQLite's backup, so a database in WAL mode comes whole), its text cells masked."""
    source = connect_ro(src)
    try:
        with sqlite3.connect(dest) as copy:
            source.backup(copy)
    finally:
        source.close()
    n = 0
    con = sqlite3.connect(dest)
    try:
        tables = [
            r[0]
            for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        ]
        for table in tables:
            q = '"' + table.replace('"', '""') + '"'
            try:
                rows = con.execute(f"SELECT rowid, * FROM {q}").fetchall()
            except sqlite3.OperationalError:  # WITHOUT ROWID or virtual: read whole, masked by key below
                continue
            cols = [d[1] for d in con.execute(f"PRAGMA table_info({q})")]
            cells = []  # (rowid, column, text)
            for row in rows:
                for col, v in zip(cols, row[1:]):
                    if isinstance(v, bytes):
                        try:
                            v = v.decode("utf-8")
                        except UnicodeDecodeError:
                            continue
                    if isinstance(v, str) and v:
                        cells.append((row[0], col, v))
            for (rowid, col, v), maybe in zip(cells, _maybe([c[2] for c in cells]) if cells else []):
                if not maybe:
                    continue
                masked, k = mask_json(v) if v.lstrip().startswith(("{", "[")) else mask_lines(v)
                if k:
                    c = '"' + col.replace('"', '""') + '"'
                    con.execute(f"UPDATE {q} SET {c} = ? WHERE rowid = ?", [masked, rowid])
                    n += k
        con.commit()
        con.execute("VACUUM")  # no old page keeps a value
    finally:
        con.close()
    return n


def export_redacted(con: duckdb.DuckDBPyConnection, out: str | os.PathLike[str]) -> Redacted:
    """Write the redacted copy of the warehouse's sources under ``out`` (a new or empty folder)."""
    paths = [r[0] for r in con.execute("SELECT DISTINCT path FROM sources ORDER BY 1").fetchall()]
    here = [Path(p) for p in paths if Path(p).is_file()]
    if not here:
        raise ForensicsError("no source of this warehouse is where it was read; nothing to copy")
    root = Path(os.path.commonpath([p.parent for p in here]))
    dest_root = Path(out).resolve()
    if dest_root == root or root in dest_root.parents:
        raise ForensicsError(f"{out}: inside the sources' folder {root}; write the copy elsewhere")
    if dest_root.exists() and (not dest_root.is_dir() or any(dest_root.iterdir())):
        raise ForensicsError(f"{out}: exists and is not an empty folder")
    if root == Path(root.anchor):
        raise ForensicsError(
            "the sources share no folder but the file system's root; export them one warehouse per folder"
        )
    result = Redacted(str(root), str(dest_root), missing=[secret_rules.mask(p) for p in paths if not Path(p).is_file()])
    for src in sorted(root.rglob("*")):
        if not src.is_file() or src.is_symlink():
            continue
        rel = str(src.relative_to(root))
        masked_rel = secret_rules.mask(rel)
        dest = dest_root / masked_rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        with src.open("rb") as fh:
            head = fh.read(16)
        if head == SQLITE:
            result.masked += _sqlite_file(src, dest)
        else:
            n = _zip_file(src, dest) if head.startswith(b"PK\x03\x04") else _text_file(src, dest)
            if n is None:
                result.skipped.append(masked_rel)
                continue
            result.masked += n
        shutil.copystat(src, dest)
        result.files += 1
    return result
