"""Prompt templates (docs/definitions.md#problems-a-reviewer-flags ``user_repeated``): an opening that person turns
of ``TEMPLATE`` or more conversations share is a harness's or a benchmark's prompt template, not one person's
request; the repeat rules never compare two turns by it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import duckdb

from forensics.analyzers.problems.turns import person_turns

if TYPE_CHECKING:
    from forensics.analyzers.problems.turns import Turn

OPENING = 12  # the words a turn opens with; an opening that person turns of TEMPLATE or more conversations share is a
TEMPLATE = 3  # harness's or a benchmark's prompt template, not one person's request
WORD = re.compile(r"\w+")


def opening(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(text.lower())[:OPENING])


def read(con: duckdb.DuckDBPyConnection) -> tuple[frozenset[tuple[str, ...]], list[tuple[str, str]]]:
    """The openings that person turns of ``TEMPLATE`` or more selected conversations share, and per conversation
    the ones of them its turns open with (conversation_id, the opening's words): what a conversation's
    ``user_repeated`` findings read from the others."""
    turns = person_turns(con)
    found = shared(turns)
    return found, sorted({(t.conversation_id, "\x1f".join(o)) for t in turns if (o := opening(t.text)) in found})


def shared(turns: list[Turn]) -> frozenset[tuple[str, ...]]:
    """The openings that person turns of ``TEMPLATE`` or more conversations share (a prompt template)."""
    seen: dict[tuple[str, ...], set[str]] = {}
    for t in turns:
        if len(o := opening(t.text)) == OPENING:
            seen.setdefault(o, set()).add(t.conversation_id)
    return frozenset(o for o, c in seen.items() if len(c) >= TEMPLATE)
