"""Numbers and dates as logs write them, checked before they reach the warehouse.

Logs of every format carry timestamps and token counts that are out of range (``1e308``, ``-1``), malformed
(``"2026-13-45"``) or of the wrong type (a string where a number belongs). None of them may abort a
source: such a value becomes NULL and is counted, and the count ends up in the import run's note
(``parse_many`` opens a :func:`counting` scope around every parse). A JSON number too large for a double
(``1e400``) makes orjson refuse the whole record; :func:`loads` then reads it with the standard library,
so the record is kept and the number is dropped like any other out-of-range value.
"""

from __future__ import annotations

import json
import math
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
    if not c:
        return ""
    return f"{sum(c.values())} out-of-range or malformed values set to NULL: " + ", ".join(
        f"{k} x{n}" for k, n in sorted(c.items())
    )


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
        v = int(v.strip())
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


def loads(raw: bytes | str) -> Any:
    """orjson, except that a number beyond a double (``1e400``) is read as infinity instead of failing the
    record; raises ``orjson.JSONDecodeError`` for anything else that is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        if "infinity" not in str(e):
            raise
        try:
            return json.loads(raw, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            raise e from None


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
