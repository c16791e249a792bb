"""Full-text search over messages for the explorer, in DuckDB alone (no extension to download).

Both a phrase and a regular expression are matched case-insensitively by ``regexp_matches(content, ?, 'i')``
(RE2: linear time, no catastrophic backtracking), the user's text a bound parameter; a phrase has its
punctuation escaped so that it matches itself. RE2 scans about twice as fast as ``ILIKE`` and three times as
fast as ``contains(lower(content), ?)`` here (docs/serve.md has the figures). The scan keeps only the keys of the
matches, ordered and cut to one page, and only that page's messages are masked and cut into snippets, so
a word found in most messages costs no more than a rare one; how the scan is bounded is ``search``'s docstring
(timings in docs/serve.md).
"""

from __future__ import annotations

import re
import string
import time
from dataclasses import dataclass
from typing import Any

import duckdb

from forensics.kernel.redact import redact
from forensics.warehouse import frame

PAGE = 50  # hits per page
CHUNK = 100_000  # messages scanned by one query (a range of rowids: DuckDB prunes the rest)
BUDGET = 0.4  # seconds of scanning per request, after which the page shows what it found and how far it got
AROUND = 100  # characters of context shown on each side of a hit
MIN_CHARS = 2  # a one-character search matches nearly every message: asked for two


class BadSearch(ValueError):
    """A search the user should rewrite (an invalid regular expression, too short): said on the page."""


@dataclass(frozen=True)
class Search:
    q: str = ""
    regex: bool = False
    role: str = ""  # a messages.role, or "" for any
    agent: str = ""  # a sources.format, or "" for any

    def where(self) -> tuple[str, list[Any]]:
        if len(self.q.strip()) < MIN_CHARS:
            raise BadSearch(f"search for at least {MIN_CHARS} characters")
        parts = ["m.on_main_path", "regexp_matches(m.content, ?, 'i')"]
        params: list[Any] = [self.q if self.regex else literal(self.q)]
        if self.role:
            parts.append("m.role = ?")
            params.append(self.role)
        if self.agent:
            parts.append(
                "m.conversation_id IN (SELECT conversation_id FROM conversations JOIN sources "
                "USING (source_id) WHERE format = ?)"
            )
            params.append(self.agent)
        return " AND ".join(parts), params


def literal(text: str) -> str:
    """``text`` as an RE2 pattern that matches exactly it (ASCII punctuation escaped; RE2 reads ``\\`` before
    any punctuation as that character)."""
    return "".join("\\" + c if c in string.punctuation else c for c in text)


@dataclass(frozen=True)
class Result:
    hits: list[dict[str, Any]]
    next: int | None  # the row to go on from (a "next" link), None when every message has been searched
    scanned: int  # messages (rows) searched up to, of
    total: int


def search(con: duckdb.DuckDBPyConnection, s: Search, after: int = 0) -> Result:
    """Hits in the order the messages were imported, from row ``after`` on: chunks of CHUNK rows are scanned
    until a page of hits is found or BUDGET seconds have gone, so that a page answers in about a second however
    large the warehouse (a rare word on a million messages is searched over a few requests, each saying how far
    it got); ``ORDER BY rowid LIMIT`` stops a chunk's scan at the page's last hit."""
    where, params = s.where()
    total = int(con.execute("SELECT count(*) FROM messages").fetchall()[0][0])
    found: list[tuple[int, str, int]] = []
    lo, began = after, time.perf_counter()
    try:
        while lo < total and len(found) <= PAGE:
            found += con.execute(
                f"SELECT m.rowid, m.conversation_id, m.position FROM messages m WHERE m.rowid >= ? AND m.rowid < ? "
                f"AND {where} ORDER BY m.rowid LIMIT {PAGE + 1 - len(found)}",
                [lo, lo + CHUNK, *params],
            ).fetchall()
            lo += CHUNK
            if time.perf_counter() - began > BUDGET:
                break
    except duckdb.InvalidInputException as e:  # RE2 refused the pattern: say why, in its words
        raise BadSearch(f"not a regular expression RE2 reads: {str(e).splitlines()[-1][:200]}") from None
    following = found[PAGE][0] if len(found) > PAGE else (min(lo, total) if lo < total else None)
    keys = found[:PAGE]
    ids = [k[0] for k in keys]  # rows by rowid, inside their range (DuckDB prunes the rest of the table)
    rows = (
        frame(
            con,
            """
        SELECT m.rowid AS i, m.conversation_id, m.position, m.role, m.origin, m.content_chars, c.native_id, c.model,
               src.format AS agent, forensics_masked(m.content) AS text
        FROM messages m JOIN conversations c USING (conversation_id) LEFT JOIN sources src USING (source_id)
        WHERE m.rowid BETWEEN ? AND ? AND list_contains(?::BIGINT[], m.rowid)
        ORDER BY m.rowid""",
            [min(ids), max(ids), ids],
        ).to_dicts()
        if ids
        else []
    )
    finder = _finder(s)
    for r in rows:
        r["before"], r["hit"], r["after"] = snippet(redact(r.pop("text") or ""), finder)
    scanned = found[PAGE][0] if len(found) > PAGE else min(lo, total)
    return Result(rows, following, scanned, total)


def _finder(s: Search) -> re.Pattern[str] | None:
    try:
        return re.compile(s.q if s.regex else re.escape(s.q), re.IGNORECASE)
    except re.error:  # RE2 syntax Python does not read: the snippet starts at the top, unmarked
        return None


def snippet(text: str, finder: re.Pattern[str] | None) -> tuple[str, str, str]:
    """(before, hit, after) around the first hit in the masked text, whitespace folded, cut to AROUND
    characters each side; the start of the text when the hit is not in it (it was inside a masked secret)."""
    m = finder.search(text) if finder else None
    if m is None or m.end() == m.start():
        return "", "", _fold(text[: 2 * AROUND]) + ("…" if len(text) > 2 * AROUND else "")
    before, after = text[max(0, m.start() - AROUND) : m.start()], text[m.end() : m.end() + AROUND]
    return (
        ("…" if m.start() > AROUND else "") + _fold(before),
        _fold(m.group(0)),
        _fold(after) + ("…" if m.end() + AROUND < len(text) else ""),
    )


def _fold(text: str) -> str:
    """Runs of whitespace as one space, the ends kept (a space beside the hit stays a space)."""
    return re.sub(r"\s+", " ", text)
