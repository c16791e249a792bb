"""Numbers and dates as logs write them, checked before they reach the warehouse.

Logs of every format carry timestamps and token counts that are out of range (``1e308``, ``-1``), malformed
(``"2026-13-45"``) or of the wrong type (a string where a number belongs). None of them may abort a
source: such a value becomes NULL and is counted, and the count ends up in the import run's note
(``parse_many`` opens a :func:`counting` scope around every parse). A JSON number too large for a double
(``1e400``) makes orjson refuse the whole record; :func:`loads` then reads it with the standard library,
so the record is kept and the number is dropped like any other out-of-range value. The same fallback takes
what else orjson refuses in one value and would cost the whole record (or the whole file, for a reader of one
JSON document): an integer of thousands of digits (past Python's 4,300-digit limit it becomes infinity, like
``1e400``), a lone surrogate escape (``"\\ud800"``: replaced by U+FFFD, counted) and a value nested deeper than
:data:`DEPTH_MAX` (set to NULL, counted) — :func:`tolerant`.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import orjson

EPOCH_MAX = 253402300800.0  # 10000-01-01: later instants are not dates but noise (or 1e308)
MS_FROM, US_FROM, NS_FROM = 1e11, 1e14, 1e17  # above these a number is ms, µs, ns (1e11 s is the year 5138)
INT64_MAX = (1 << 63) - 1
BOM = b"\xef\xbb\xbf"
DEPTH_MAX = 100  # deeper JSON values are set to NULL where orjson refused past 1,024 (readers walk values recursively)
INT_DIGITS = 300  # longer integers are read as floats (past 308 digits, infinity): Python refuses int() past 4,300
REPLACED = {
    "lone surrogate": "U+FFFD",
    "invalid UTF-8 text": "U+FFFD",
}  # kinds of bad value replaced (not NULLed): what replaces them
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')

_tally: ContextVar[Counter[str] | None] = ContextVar("forensics_bad_values", default=None)


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Count the values set to NULL while the block runs (per parsed source)."""
    c: Counter[str] = Counter()
    token = _tally.set(c)
    try:
        yield c
    finally:
        _tally.reset(token)


def bad(what: str) -> None:
    """One value of kind ``what`` could not be used and became NULL."""
    c = _tally.get()
    if c is not None:
        c[what] += 1


def note(c: Counter[str]) -> str:
    """The import-run note for what :func:`counting` saw ("" when nothing)."""
    nulled = {k: n for k, n in c.items() if k not in REPLACED}
    out = []
    if nulled:
        out.append(
            f"{sum(nulled.values())} out-of-range or malformed values set to NULL: "
            + ", ".join(f"{k} x{n}" for k, n in sorted(nulled.items()))
        )
    for k, by in REPLACED.items():
        if c[k]:
            out.append(f"{c[k]} values of {k} replaced by {by}")
    return "; ".join(out)


def epoch(v: Any, what: str = "timestamp") -> float | None:
    """Seconds since the epoch from a number (s, ms, µs or ns), a numeric string, or an ISO-8601 string.

    Missing (None, "") is None silently; anything else that is not a date between 1970 and 9999 is None
    and counted.
    """
    t = type(v)
    if (t is float or t is int) and 0 < v < MS_FROM:
        return float(v)  # seconds: the usual case, first
    if v is None or v == "":
        return None
    if t is str:
        s = v.strip()
        try:
            if "-" in s[1:] or ":" in s:  # a date; "1735689600" and "1.7e9" are numbers
                raise ValueError
            v = float(s)
        except ValueError:
            try:
                d = datetime.fromisoformat(s.replace("Z", "+00:00").replace(" ", "T", 1))
            except ValueError:
                bad(what)
                return None
            try:
                out = (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()  # naive times are UTC
            except (OverflowError, OSError, ValueError):
                bad(what)
                return None
            return out if 0 < out < EPOCH_MAX else _bad(what)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        bad(what)
        return None
    if not math.isfinite(v):
        return _bad(what)
    s = v / 1e9 if v > NS_FROM else v / 1e6 if v > US_FROM else v / 1000.0 if v > MS_FROM else float(v)
    return s if 0 < s < EPOCH_MAX else _bad(what)


def count(v: Any, what: str = "token count") -> int | None:
    """A non-negative integer that fits a BIGINT (token counts, sizes); None (counted) for anything else.

    Whole floats (``12.0``) and digit strings (``"12"``) are accepted: both are common in exported logs.
    """
    if v is None:
        return None
    if isinstance(v, str) and v.strip().isascii() and v.strip().isdigit():  # "²" is a digit to isdigit
        v = int(v.strip()) if len(v.strip()) <= 20 else -1  # longer is past a BIGINT (and 4,300 digits, int())
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= INT64_MAX:
        return _bad(what)
    return v


def number(v: Any, what: str = "score") -> float | None:
    """A finite number (a score, a reward) from a number or a numeric string; None (counted) otherwise."""
    if v is None or v == "":
        return None
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            return _bad(what)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return _bad(what)
    return float(v)


def _bad(what: str) -> int | None:
    """None, the bad value counted (typed as the checkers return: an int fits a float too)."""
    bad(what)
    return None


def loads(raw: bytes | str, deep: bool = False) -> Any:
    """orjson, except that what it refuses in one value is read by :func:`tolerant` instead of failing the
    record: a number beyond a double (``1e400``) or an integer of thousands of digits (infinity), a lone
    surrogate escape (U+FFFD); with ``deep`` (a file that is one JSON document, where the record is the whole
    file) a value nested too deep (NULL). Raises ``orjson.JSONDecodeError`` for anything else that is not JSON
    (a line nested 10,000 deep among them: the line is quarantined), and for a value that is no text at all (a
    SQLite cell of another type)."""
    if not isinstance(raw, (bytes, str, bytearray, memoryview)):
        raise orjson.JSONDecodeError(f"not JSON text but {type(raw).__name__}", "", 0)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        if raw[:3] == BOM or raw[:1] == "\ufeff":  # a byte-order mark before the JSON (Windows editors write it)
            return loads(raw[3:] if isinstance(raw, bytes) else raw[1:], deep)
        msg = str(e)
        if not ("infinity" in msg or "surrogate" in msg or deep and "depth limit" in msg):
            raise
        try:
            return tolerant(raw, deep)
        except (ValueError, RecursionError):
            raise e from None


def bounded_int(s: str) -> int | float:
    """An integer literal as the JSON decoder reads it: a float (infinity) past :data:`INT_DIGITS` digits."""
    return int(s) if len(s) <= INT_DIGITS else float(s)


def tolerant(raw: bytes | str, deep: bool = True) -> Any:
    """JSON read by the standard library, with a value nested deeper than :data:`DEPTH_MAX` set to NULL, an
    integer too long for Python read as infinity and a lone surrogate replaced by U+FFFD (each counted);
    raises ValueError when it is not JSON (invalid UTF-8 included), RecursionError when it is too deep and
    ``deep`` is False."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if deep:
        text = shallow(text)
    doc = json.loads(text, parse_constant=_no_constant, parse_int=bounded_int)
    return without_surrogates(doc) if _SURROGATE_ESCAPE.search(text) else doc


def shallow(text: str, limit: int = DEPTH_MAX) -> str:
    """``text`` with each JSON value that opens deeper than ``limit`` replaced by ``null`` (counted); a
    value left open (a cut file) is kept as it is."""
    if text.count("[") + text.count("{") <= limit:  # cannot be that deep: no scan
        return text
    depth, cut, last, out = 0, -1, 0, []
    for m in _TOKENS.finditer(text):
        t = m.group()
        if t[0] == '"':
            continue
        if t in "[{":
            depth += 1
            if depth == limit + 1:
                cut = m.start()
        elif depth > 0:
            if depth == limit + 1 and cut >= 0:
                out += [text[last:cut], "null"]
                last, cut = m.end(), -1
                bad("value nested too deeply")
            depth -= 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def value_end(text: str, pos: int) -> int:
    """Where the JSON array or object opening at ``pos`` ends (past its closing bracket); -1 when ``text``
    ends first. No recursion: for a value too deep to decode."""
    depth = 0
    for m in _TOKENS.finditer(text, pos):
        t = m.group()
        if t[0] == '"':
            continue
        depth += 1 if t in "[{" else -1
        if depth == 0:
            return m.end()
    return -1


def surrogate_escapes(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``text`` (from ``start`` to ``end``) holds a surrogate's escape (a lone one among them)."""
    return _SURROGATE_ESCAPE.search(text, start, len(text) if end is None else end) is not None


def without_surrogates(v: Any) -> Any:
    """``v`` with every lone surrogate of its strings (keys too) replaced by U+FFFD, each counted: text that
    cannot be written as UTF-8. Lists and objects are changed in place, without recursion (a value may be
    hundreds deep)."""
    if isinstance(v, str):
        return _clean(v)
    stack = [v]
    while stack:
        x = stack.pop()
        items = list(x.items()) if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
        for k, y in items:
            if isinstance(y, str):
                if _SURROGATE.search(y):
                    x[k] = _clean(y)
            elif isinstance(y, (dict, list)):
                stack.append(y)
            if isinstance(k, str) and _SURROGATE.search(k):
                x[_clean(k)] = x.pop(k)
    return v


def _clean(s: str) -> str:
    if not _SURROGATE.search(s):
        return s
    bad("lone surrogate")
    return _SURROGATE.sub("\ufffd", s)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_reason(e: ValueError) -> str:
    """A quarantine reason for a record that is not JSON."""
    msg = str(e)
    if "recursion" in msg.lower() or "depth" in msg.lower():
        return "JSON nested too deeply"
    if "utf-8" in msg.lower() or "surrogate" in msg.lower():
        return "invalid UTF-8"
    return "invalid JSON: " + msg.splitlines()[0][:120]
