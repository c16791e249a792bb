"""Which turns of a run the person asked to be wide (``signature``): their request names many things (files, issues,
items of a list) or asks for all of something ("fix all of them", "each one", "every test"). There a measurement of
the run's breadth (many targets read, a context filled with their output) is what was asked for, not a sign that the
work went astray (``report.build.done``)."""

from __future__ import annotations

import re

import duckdb

# a request for all of a kind: "all of them", "all the tests", "all their runs", "every file", "each one of them",
# "each finding" (not "all right", "that's all", "all good": "all" counts before a determiner or "of" only)
ALL = re.compile(
    r"\b(?:all\s+(?:of\s+)?(?:the|these|those|them|its|their|our|my|your)\b"
    r"|(?:every|each)\s+(?!other\b|time\b|day\b|week\b|now\b)[a-z]+)",
    re.IGNORECASE,
)
# an item of a list the person wrote: a line opening with a bullet or a number ("- x", "* x", "3. x", "2) x")
ITEM = re.compile(r"^[ \t]*(?:[-*•]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE)
# a thing the request names: a path or a file name with an extension, or an issue or pull request number
NAMED = re.compile(r"(?<![\w/.])(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.[a-z]{1,5}\b(?![\w(])|(?<![\w&])#\d{1,6}\b")
ITEMS = 5  # list items or distinct things named at least this many: the request names its breadth


def asks_wide(text: str) -> bool:
    """Whether a person's request asks for breadth: all or each of something (``ALL``), or ``ITEMS`` or more items of
    a list (``ITEM``) or distinct files, paths and issue numbers (``NAMED``)."""
    if ALL.search(text):
        return True
    if len(ITEM.findall(text)) >= ITEMS:
        return True
    return len({m.group(0).lower() for m in NAMED.finditer(text)}) >= ITEMS


def asked(con: duckdb.DuckDBPyConnection, at: list[tuple[str, int]]) -> set[tuple[str, int]]:
    """Of ``at`` (conversation id, position), those whose turn's request asks for breadth (``asks_wide``): the words
    of the person's main-path message at or before the position. A Claude Code session handed a hostile audit of
    dozens of findings, "turn each one of them into github issues ... and fix all of them", read 60 targets for that
    request (one of the shared real logs)."""
    if not at:
        return set()
    rows = con.execute(
        """
        WITH a AS (SELECT unnest($cids::VARCHAR[]) AS cid, unnest($pos::INTEGER[]) AS pos)
        SELECT a.cid, a.pos,
               (SELECT coalesce(m.person_text, m.content) FROM messages m
                WHERE m.conversation_id = a.cid AND m.on_main_path AND m.origin = 'person' AND m.position <= a.pos
                ORDER BY m.position DESC LIMIT 1) AS request
        FROM a
        """,
        {"cids": [c for c, _ in at], "pos": [p for _, p in at]},
    ).fetchall()
    return {(str(cid), int(pos)) for cid, pos, request in rows if request and asks_wide(request)}
