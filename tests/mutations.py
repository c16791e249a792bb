"""The seeded mutation sweep (issue 45, part 5): one bad record in every format's fixtures, each file ingested
alone into a fresh warehouse.

Every fixture of ``tests/hostile_corpus.SOURCES`` (the files ``tests/test_formats_covered.py`` maps to each
format, under fixtures/ and fixtures/real/) gets each mutation class that applies to it. Most classes damage
one record (a line of JSONL, an item of a JSON document's record list, a row of each SQLite table) in the
middle of the file, chosen by a seeded generator: a 5,000-digit number, a 5,000-digit numeric string, a
40-digit integer, a record nulled, its values nulled, a list or an object where a string belongs, a string
where a list belongs, a lone surrogate (a ``\\ud800`` escape, or its raw bytes in a SQLite text cell), a
value nested 10,000 deep, a NUL byte (escaped, or raw), a value of 3 MB, a SQLite row of swapped types; a
few touch the whole file: a byte-order mark, the last line cut, no bytes at all.

Each mutated file must come out as the lossless rule says (``check``): never a failed source for one bad
record (the rest of its records imported), never "imported" with nothing imported, quarantined or skipped,
never fewer messages than the good file without a quarantined or skipped record or a nulled value to say
why, never a traceback. ``python -m bench.mutations`` runs every case and prints the figures per format and
per class; ``tests/test_mutations.py`` runs a fixed seeded sample of them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.hostile_corpus import FIXTURES, SOURCES, _records, copy_fixture

DEPTH = 10_000
BIG = 1 << 20  # a line of 1 MB: past any line buffer; bigger lines only cost the secret scan time
DIGITS = "9" + "1234567890" * 500  # 5,001 digits: past Python's 4,300-digit int limit
INT40 = "1234567890" * 4
MARK = "__MUTATION_{}__"  # json.dumps cannot write these: the text replaces the marker
RAW = {
    "digits": DIGITS,
    "int40": INT40,
    "deep": "[" * DEPTH + "]" * DEPTH,
    "surrogate": '"before \\ud800 after"',
    "nul": '"before \\u0000 after"',
}
WHOLE_FILE = {"bom", "empty", "truncated-last-line"}  # the others damage one record


@dataclass(frozen=True)
class Case:
    fmt: str
    fixture: str  # relative to fixtures/
    mutation: str
    path: Path


# --- one record ----------------------------------------------------------------------------------------------


def _leaves(v: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _leaves(x, (*path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _leaves(x, (*path, i))
    yield path, v


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = root
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    return root


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _pick(rec: Any, rng: random.Random, want: Callable[[Any], bool]) -> tuple[Any, ...] | None:
    found = [p for p, v in _leaves(rec) if p and want(v)]
    return rng.choice(found) if found else None


def _longest_string(rec: Any) -> tuple[Any, ...] | None:
    found = [(len(v), p) for p, v in _leaves(rec) if p and isinstance(v, str)]
    return max(found)[1] if found else None


def _marked(rec: Any, path: tuple[Any, ...] | None, raw: str) -> Any:
    """The record with the value at ``path`` replaced by a marker for the raw JSON text ``raw``."""
    if path is None:
        return None
    return _set(rec, path, MARK.format(raw))


def _nulled(rec: Any) -> Any:
    if isinstance(rec, dict):
        return {k: _nulled(v) if isinstance(v, (dict, list)) else None for k, v in rec.items()}
    if isinstance(rec, list):
        return [_nulled(v) if isinstance(v, (dict, list)) else None for v in rec]
    return None


def _retyped(rec: Any, old: type, new: Any) -> Any:
    """Every value of type ``old`` (below the top) replaced by ``new``."""
    if isinstance(rec, dict):
        return {k: new if isinstance(v, old) and v else _retyped(v, old, new) for k, v in rec.items()}
    if isinstance(rec, list):
        return [new if isinstance(v, old) and v else _retyped(v, old, new) for v in rec]
    return rec


def _text_with(rec: Any, rng: random.Random, extra: str) -> Any:
    """The record with its longest string value grown by ``extra`` (a JSON escape or a few MB)."""
    path = _longest_string(rec)
    if path is None:
        return None
    value = rec
    for k in path:
        value = value[k]
    half = len(value) // 2
    return _set(rec, path, value[:half] + extra + value[half:])


def _record_mutations(rec: Any, rng: random.Random) -> Iterator[tuple[str, Any]]:
    """(class, the record mutated, or None when the class does not apply to it). Strings carry ``MARK``s."""
    copy = lambda: json.loads(json.dumps(rec))  # noqa: E731
    yield "digits-5000", _marked(copy(), _pick(rec, rng, _number), "digits")
    at = _pick(rec, rng, _number)
    yield "digits-5000-string", None if at is None else _set(copy(), at, DIGITS)
    yield "int-40", _marked(copy(), _pick(rec, rng, _number), "int40")
    yield "null-record", MARK.format("null")
    yield "null-values", _nulled(copy()) if isinstance(rec, (dict, list)) else None
    yield "list-for-string", _retyped(copy(), str, ["list"]) if _longest_string(rec) else None
    yield "object-for-string", _retyped(copy(), str, {"$": "object"}) if _longest_string(rec) else None
    has_list = any(isinstance(v, list) and v for p, v in _leaves(rec) if p)
    yield "string-for-list", _retyped(copy(), list, "a string") if has_list else None
    yield "surrogate-escape", _text_with(copy(), rng, MARK.format("surrogate"))
    yield "deep-10000", _marked(copy(), _longest_string(rec), "deep")
    yield "nul-escape", _text_with(copy(), rng, MARK.format("nul"))
    yield "huge-value", _text_with(copy(), rng, "x" * BIG)


def _dump(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    for key, raw in RAW.items():
        text = text.replace(json.dumps(MARK.format(key)), raw)
    text = text.replace(json.dumps(MARK.format("null")), "null")
    # an escape inside a string: the marker sits in the text, its quotes are the string's own
    for key in ("surrogate", "nul"):
        text = text.replace(MARK.format(key), RAW[key][1:-1])
    return text


# --- text files ------------------------------------------------------------------------------------------------


def _lines(data: bytes) -> list[Any] | None:
    """Each line decoded (or None when not JSON), or None for a single JSON document."""
    try:
        json.loads(data)
        return None
    except (ValueError, RecursionError):
        pass
    out: list[Any] = []
    for line in data.split(b"\n"):
        try:
            out.append(json.loads(line))
        except (ValueError, RecursionError):
            out.append(None)
    return out


def text_mutations(data: bytes, rng: random.Random) -> Iterator[tuple[str, bytes | None]]:
    yield "empty", b""
    yield "bom", b"\xef\xbb\xbf" + data
    lines = _lines(data)
    if lines is not None:
        body = data.rstrip(b"\n").split(b"\n")
        cut = body[-1][: len(body[-1]) // 2]
        yield "truncated-last-line", b"\n".join([*body[:-1], cut]) + b"\n"
        records = [i for i, x in enumerate(lines) if isinstance(x, (dict, list))]
        if not records:  # Markdown: raw bytes only
            mid = len(body) // 2
            yield "nul-raw", b"\n".join([*body[:mid], body[mid] + b"\x00\x00", *body[mid + 1 :]])
            yield "surrogate-raw", b"\n".join([*body[:mid], body[mid] + b"\xed\xa0\x80", *body[mid + 1 :]])
            yield "huge-line", b"\n".join([*body[:mid], b"x" * BIG, *body[mid:]]) + b"\n"
            return
        at = records[len(records) // 2] if len(records) < 3 else rng.choice(records[1:-1])
        for name, rec in _record_mutations(lines[at], rng):
            yield (
                name,
                None
                if rec is None
                else b"\n".join([*data.split(b"\n")[:at], _dump(rec).encode(), *data.split(b"\n")[at + 1 :]]),
            )
        line = data.split(b"\n")[at]
        mid = line.find(b'"', len(line) // 2)
        yield "nul-raw", data.replace(line, line[: mid + 1] + b"\x00" + line[mid + 1 :], 1) if mid >= 0 else None
        yield (
            "surrogate-raw",
            data.replace(line, line[: mid + 1] + b"\xed\xa0\x80" + line[mid + 1 :], 1) if mid >= 0 else None,
        )
        return
    doc = json.loads(data)
    records = _records(doc)
    if not records:
        return
    at = rng.randrange(1, len(records) - 1) if len(records) >= 3 else len(records) // 2
    for name, rec in _record_mutations(records[at], rng):
        if rec is None:
            yield name, None
            continue
        records[at], kept = rec, records[at]
        yield name, _dump(doc).encode()
        records[at] = kept


# --- SQLite ----------------------------------------------------------------------------------------------------


def _tables(con: sqlite3.Connection) -> list[tuple[str, list[tuple[str, bool]]]]:
    out = []
    for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
        cols = [(r[1], bool(r[5])) for r in con.execute(f'PRAGMA table_info("{t}")')]
        out.append((t, cols))
    return out


def _row(con: sqlite3.Connection, t: str, rng: random.Random) -> int | None:
    ids = [r[0] for r in con.execute(f'SELECT rowid FROM "{t}" ORDER BY rowid')]
    if not ids:
        return None
    return rng.choice(ids[1:-1]) if len(ids) >= 3 else ids[len(ids) // 2]


def _cells(con: sqlite3.Connection, t: str, cols: list[tuple[str, bool]], rowid: int) -> dict[str, Any]:
    names = [c for c, key in cols if not key]
    if not names:
        return {}
    row = con.execute(
        f'SELECT {", ".join(f"{chr(34)}{c}{chr(34)}" for c in names)} FROM "{t}" WHERE rowid = ?', (rowid,)
    ).fetchone()
    return dict(zip(names, row, strict=True))


def _sql_row(fn: Callable[[dict[str, Any], random.Random], dict[str, Any]]) -> Callable[..., bool]:
    """A mutation of one row (of each table): ``fn`` gives the new values of some of its cells."""

    def apply(con: sqlite3.Connection, rng: random.Random) -> bool:
        changed = False
        for t, cols in _tables(con):
            rowid = _row(con, t, rng)
            if rowid is None:
                continue
            new = fn(_cells(con, t, cols, rowid), rng)
            for c, v in new.items():
                try:
                    if isinstance(v, _Sql):
                        con.execute(f'UPDATE "{t}" SET "{c}" = {v} WHERE rowid = ?', (rowid,))
                    else:
                        con.execute(f'UPDATE "{t}" SET "{c}" = ? WHERE rowid = ?', (v, rowid))
                    changed = True
                except sqlite3.IntegrityError:
                    pass
        return changed

    return apply


class _Sql(str):
    """A SQL expression of the cell (not a value)."""


def _json_cells(cells: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for c, v in cells.items():
        if isinstance(v, str) and v[:1] in "[{":
            try:
                out[c] = json.loads(v)
            except ValueError:
                pass
    return out


def _in_json(name: str) -> Callable[[dict[str, Any], random.Random], dict[str, Any]]:
    """A record mutation applied to the first JSON cell of the row."""

    def fn(cells: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        for c, doc in _json_cells(cells).items():
            inner = _records(doc) or [doc]
            at = len(inner) // 2
            for n, rec in _record_mutations(inner[at], rng):
                if n == name and rec is not None:
                    if inner is doc or inner == [doc]:
                        return {c: _dump(rec)}
                    inner[at] = rec
                    return {c: _dump(doc)}
        return {}

    return fn


def _swapped(cells: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c, v in cells.items():
        if isinstance(v, str):
            out[c] = 12345
        elif isinstance(v, int):
            out[c] = "²" + str(v)
        elif isinstance(v, float):
            out[c] = "soon"
        elif isinstance(v, bytes):
            out[c] = 3.5
    return out


def _first(kind: type, value: Any) -> Callable[[dict[str, Any], random.Random], dict[str, Any]]:
    def fn(cells: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        names = [c for c, v in cells.items() if isinstance(v, kind) and not isinstance(v, bool)]
        return {names[0]: value(cells[names[0]])} if names else {}

    return fn


def _longest_text(cells: dict[str, Any]) -> str | None:
    texts = [(len(v), c) for c, v in cells.items() if isinstance(v, str)]
    return max(texts)[1] if texts else None


def _text_cell(expr: str) -> Callable[[dict[str, Any], random.Random], dict[str, Any]]:
    def fn(cells: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        c = _longest_text(cells)
        return {c: _Sql(expr.format(c=f'"{c}"'))} if c else {}

    return fn


SQLITE_MUTATIONS: dict[str, Callable[..., bool]] = {
    "swapped-types": _sql_row(_swapped),
    "null-record": _sql_row(lambda cells, rng: dict.fromkeys(cells)),
    "digits-5000": _sql_row(_first(int, lambda v: DIGITS)),
    "int-40": _sql_row(_first(int, lambda v: INT40)),
    "digits-5000-json": _sql_row(_in_json("digits-5000")),
    "list-for-string": _sql_row(_text_cell("'[\"list\"]'")),
    "null-values-json": _sql_row(_in_json("null-values")),
    "list-for-string-json": _sql_row(_in_json("list-for-string")),
    "string-for-list-json": _sql_row(_in_json("string-for-list")),
    "surrogate-escape-json": _sql_row(_in_json("surrogate-escape")),
    "surrogate-raw": _sql_row(_text_cell("CAST(CAST({c} AS BLOB) || x'eda080' AS TEXT)")),
    "deep-10000": _sql_row(_in_json("deep-10000")),
    "nul-raw": _sql_row(_text_cell("{c} || char(0) || 'x'")),
    "huge-value": _sql_row(_text_cell(f"{{c}} || hex(zeroblob({BIG // 2}))")),
}


# --- the sweep -------------------------------------------------------------------------------------------------


def build(out: Path, sources: list[tuple[str, str]] | None = None) -> Iterator[Case]:
    """Write each case under ``out`` as it is made (a folder per case, with the files its format reads
    beside the mutated one); yields the cases, then the good files themselves (mutation "none")."""
    for n, (fmt, rel) in enumerate(sources or SOURCES):
        src = FIXTURES / rel
        rng = random.Random(f"mutations:{n}:{rel}")

        def place(name: str, src: Path = src, fmt: str = fmt, n: int = n) -> Path:
            return copy_fixture(out, n, fmt, name, src)

        yield Case(fmt, rel, "none", place("none"))
        if src.suffix in (".db", ".vscdb"):
            for name, fn in SQLITE_MUTATIONS.items():
                target = place(name)
                con = sqlite3.connect(target)
                try:
                    applied = fn(con, rng)
                    con.commit()
                finally:
                    con.close()
                if applied:
                    yield Case(fmt, rel, name, target)
                else:
                    shutil.rmtree(target.parent.parent)
            target = place("empty")
            target.write_bytes(b"")
            yield Case(fmt, rel, "empty", target)
        elif src.suffix == ".eval":  # a zip of JSON members: its empty file only
            target = place("empty")
            target.write_bytes(b"")
            yield Case(fmt, rel, "empty", target)
        else:
            for name, raw in text_mutations(src.read_bytes(), rng):
                if raw is None:
                    continue
                (target := place(name)).write_bytes(raw)
                yield Case(fmt, rel, name, target)


RAW_EXCEPTION = re.compile(r"\b[A-Z][A-Za-z]*(?:Error|Exception)\b|Traceback")


@dataclass
class Outcome:
    case: Case
    how: str  # imported | quarantined | skipped | empty | failed | silent | lost | crashed
    problem: str = ""
    detail: str = ""


def check(case: Case, r: Any, good: Any | None, whole: bool = False) -> Outcome:
    """What happened to a mutated file (``r``: its ``SourceResult``) beside its good file (``good``); ``whole``:
    the file was quarantined as one record."""
    if r.status == "failed":
        tb = " (a raw exception)" if "\n" in r.error or RAW_EXCEPTION.search(r.error) else ""
        return Outcome(case, "failed", f"the whole source failed{tb}: {r.error[:240]}")
    if r.status == "empty":
        ok = case.mutation == "empty"
        return Outcome(case, "empty", "" if ok else f"read as empty: {r.note}")
    if r.status != "imported":
        return Outcome(case, r.status, f"status {r.status}: {r.note or r.error}"[:240])
    accounted = r.messages_imported + r.messages_unchanged + r.quarantined + r.skipped
    if r.messages_read != accounted or not (accounted or r.conversations_new):
        return Outcome(
            case,
            "silent",
            f"imported with {r.messages_read} read, {r.messages_imported} imported, {r.quarantined} quarantined, "
            f"{r.skipped} skipped",
        )
    told = r.quarantined or r.skipped or "set to NULL" in r.note or "replaced by" in r.note
    if good is not None and r.messages_imported < good.messages_imported and not told:
        return Outcome(
            case,
            "lost",
            f"{r.messages_imported} messages imported (the good file: {good.messages_imported}) and nothing "
            "quarantined, skipped or nulled",
        )
    single = r.quarantined and not whole  # the bad record quarantined was the file's only one (a MINT line)
    if (
        good is not None
        and good.messages_imported >= 2
        and r.messages_imported == 0
        and case.mutation not in WHOLE_FILE
        and not single
    ):
        return Outcome(case, "lost", f"nothing imported for one bad record (the good file: {good.messages_imported})")
    how = "quarantined" if r.quarantined else "skipped" if r.skipped else "imported"
    return Outcome(case, how, "", f"{r.messages_imported}/{r.quarantined}/{r.skipped}")


def quarantined_at(db: Path) -> set[str]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return {loc for (loc,) in con.execute("SELECT DISTINCT location FROM quarantine").fetchall()}
    finally:
        con.close()


def quarantine_problems(db: Path) -> list[str]:
    """A quarantined record keeps its raw bytes and a reason."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        bad = con.execute(
            "SELECT location, reason FROM quarantine WHERE raw IS NULL OR coalesce(reason, '') = ''"
        ).fetchall()
    finally:
        con.close()
    return [f"quarantined at {loc} without its bytes or a reason ({why!r})" for loc, why in bad]


def _empty_warehouse(folder: Path) -> Path:
    """A warehouse with every migration run and nothing in it, made once: each case starts from a copy."""
    path = folder / "empty.duckdb"
    if not path.exists():
        from forensics.warehouse.core import open_warehouse

        open_warehouse(path).close()
    return path


def run_case(case: Case, work: Path, good: Any | None = None, masked: bool = True) -> tuple[Outcome, Any]:
    from forensics.ingestion.run import ingest

    db = work / "w.duckdb"
    for suffix in ("", ".wal"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    shutil.copyfile(_empty_warehouse(work.parent), db)
    try:
        result = ingest([case.path], db, fmt=case.fmt, workers=1, keep_secrets=not masked)
    except Exception as e:  # noqa: BLE001 - a crash of the run is what is measured
        return Outcome(case, "crashed", f"the run raised {type(e).__name__}: {str(e)[:200]}"), None
    mine = [f for f in result.files if f.path == str(case.path)]
    if not mine:
        return Outcome(case, "missing", "no import result for the file"), None
    r = mine[0]
    whole = db.exists() and case.path.name in quarantined_at(db)
    out = check(case, r, good, whole)
    if not out.problem and db.exists():
        problems = quarantine_problems(db)
        if problems:
            out.problem, out.how = problems[0], "quarantine"
    return out, r


def first_of_each_format() -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for fmt, rel in SOURCES:
        seen.setdefault(fmt, rel)
    return list(seen.items())


def sweep(
    out: Path, sources: list[tuple[str, str]] | None = None, sample: int | None = None, masked: bool = True
) -> list[Outcome]:
    """Every case (or at most ``sample`` of each fixture's, drawn seeded), each ingested alone into a fresh
    warehouse after its good file (whose result the case is judged beside). ``masked``: secrets masked at
    ingest, as by default (the scan is most of the time a case takes; the test's sample goes without)."""
    outcomes: list[Outcome] = []
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    for _, group in itertools.groupby(build(out / "corpus", sources), key=lambda c: c.fixture):
        good_case, *cases = group  # the good file comes first
        o, good = run_case(good_case, work, masked=masked)
        if o.problem:
            outcomes.append(o)
        if sample is not None:  # the classes drawn for this fixture: the first by a seeded order
            order = sorted(cases, key=lambda c: hashlib.sha256(f"{c.fixture}:{c.mutation}".encode()).digest())
            for c in order[sample:]:
                shutil.rmtree(c.path.parent.parent, ignore_errors=True)
            cases = order[:sample]
        for case in cases:
            o, _ = run_case(case, work, good, masked)
            outcomes.append(o)
            shutil.rmtree(case.path.parent.parent, ignore_errors=True)
    return outcomes
