"""Outcomes kept outside the logs (a CI job's verdicts, a grader's spreadsheet), imported into
``conversation_outcomes`` by ``forensics outcomes FILE`` (docs/outcomes.md#where-outcomes-come-from).

A labels file is CSV with a header or JSONL: ``id`` (a conversation's native id or its conversation id),
``success`` (true/false, 1/0, pass/fail, as :func:`grades.verdict` reads them) and optionally ``score``. A file
that is not of that shape, or a row whose values cannot be read, fails whole with a one-line error naming the
line: half a labels file is worse than none. Each label replaces the conversation's outcome (from its log
or an earlier file), and its ``source`` is the file's path; the same file imported twice changes nothing.
An id that names no conversation, or several (the same native id in two sources), is counted and listed.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import orjson

from forensics.formats.kit import values
from forensics.formats.kit.grades import verdict
from forensics.kernel.errors import ForensicsError

ID_COLUMNS = ("id", "conversation_id", "native_id")


@dataclass(frozen=True)
class Label:
    id: str
    success: bool
    score: float | None
    raw: Any  # the success value as written


@dataclass
class LabelImport:
    """What importing one labels file did."""

    path: str
    rows: int = 0
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    unmatched: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)  # native ids held by several conversations


def read_labels(path: str | os.PathLike[str]) -> list[Label]:
    """The labels of a CSV or JSONL file; ForensicsError (one line) when the file or a row cannot be read."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ForensicsError(f"{p}: cannot read ({e.strerror or e})") from None
    text = data.decode("utf-8-sig", "replace")
    first = text.lstrip()[:1]
    rows = _jsonl(p, text) if first in ("{", "") else _csv(p, text)
    return [_label(p, n, row) for n, row in rows]


def _jsonl(p: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = values.loads(line)
        except orjson.JSONDecodeError as e:
            raise ForensicsError(
                f"{p}:{n}: {values.json_reason(e)}; a labels file is CSV with a header or JSONL"
            ) from None
        if not isinstance(rec, dict):
            raise ForensicsError(f"{p}:{n}: not a JSON object; each line holds id, success and optionally score")
        out.append((n, rec))
    return out


def _csv(p: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    try:
        dialect: Any = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.DictReader(io.StringIO(text), dialect=dialect)
    header = [h.strip().lower() for h in reader.fieldnames or []]
    if not any(h in ID_COLUMNS for h in header) or "success" not in header:
        raise ForensicsError(
            f"{p}: no header with id and success columns (found {', '.join(header) or 'none'}); "
            "a labels file is CSV with a header or JSONL"
        )
    return [(reader.line_num, {k.strip().lower(): v for k, v in row.items() if isinstance(k, str)}) for row in reader]


def _label(p: Path, n: int, row: dict[str, Any]) -> Label:
    key = next((row[k] for k in ID_COLUMNS if row.get(k) not in (None, "")), None)
    if key is None or isinstance(key, (dict, list, bool)):
        raise ForensicsError(f"{p}:{n}: no id (a conversation's native id or conversation id)")
    ok = verdict(row.get("success"))
    if ok is None:
        raise ForensicsError(f"{p}:{n}: success {str(row.get('success'))[:40]!r} is not true/false, 1/0 or pass/fail")
    score = row.get("score")
    number = values.number(score) if score not in (None, "") else None
    if score not in (None, "") and number is None:
        raise ForensicsError(f"{p}:{n}: score {str(score)[:40]!r} is not a number")
    return Label(str(key).strip(), ok, number, row.get("success"))


def store(con: duckdb.DuckDBPyConnection, labels: list[Label], source: str) -> LabelImport:
    """Write the labels as outcomes of the conversations they name, in one transaction."""
    result = LabelImport(source, rows=len(labels))
    wanted = sorted({lab.id for lab in labels})
    found: dict[str, list[str]] = {}
    for key, cid in con.execute(
        "SELECT k, c.conversation_id FROM (SELECT unnest(?::VARCHAR[]) AS k) JOIN conversations c "
        "ON c.conversation_id = k OR c.native_id = k",
        [wanted],
    ).fetchall():
        found.setdefault(key, []).append(cid)
    old = {
        r[0]: r[1:]
        for r in con.execute(
            "SELECT conversation_id, success, score, source, detail FROM conversation_outcomes WHERE conversation_id IN "
            "(SELECT unnest(?::VARCHAR[]))",
            [[c for cids in found.values() for c in cids]],
        ).fetchall()
    }
    rows: dict[str, tuple[bool, float | None, str, str]] = {}
    for lab in labels:
        cids = sorted(set(found.get(lab.id, [])))
        if not cids:
            result.unmatched.append(lab.id)
            continue
        if len(cids) > 1:
            result.ambiguous.append(lab.id)
            continue
        prev = old.get(cids[0])
        task = json.loads(prev[3]).get("task") if prev and prev[3] else None
        detail = {k: v for k, v in (("by", "success"), ("value", lab.raw), ("task", task)) if v is not None}
        rows[cids[0]] = (lab.success, lab.score, source, orjson.dumps(detail).decode())
    for cid, row in rows.items():
        prev = old.get(cid)
        if prev is None:
            result.added += 1
        elif tuple(prev) == row:
            result.unchanged += 1
        else:
            result.changed += 1
    result.unmatched, result.ambiguous = sorted(set(result.unmatched)), sorted(set(result.ambiguous))
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            "DELETE FROM conversation_outcomes WHERE conversation_id IN (SELECT unnest(?::VARCHAR[]))", [list(rows)]
        )
        if rows:
            con.executemany(
                "INSERT INTO conversation_outcomes VALUES (?, ?, ?, ?, ?)", [(cid, *row) for cid, row in rows.items()]
            )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return result
