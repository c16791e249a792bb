"""The messages a finding cites, with two messages of context on each side, ready to show in place.

One query for every finding of a report: only the cited windows are read, so a report of a million-message
warehouse embeds a few hundred messages, not the corpus. Text is masked once, in the query (``forensics_masked``:
``forensics.kernel.redact``'s rules in RE2), and cut at ``TEXT_MAX`` characters with its full size kept; an assistant message's tool calls come folded with the size
of each result. The report (report.html) and the explorer (`forensics serve`) both show these.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import duckdb
import polars as pl

from forensics.kernel.arrow import stream
from forensics.warehouse import frame

CONTEXT = 2  # messages shown before and after each cited one
TEXT_MAX = 600  # characters of a message's text shown in place
ARGS_MAX = 160  # characters of a tool call's arguments


@dataclass
class Call:
    name: str
    arguments: str  # masked, cut at ARGS_MAX
    result_position: int | None
    result_bytes: int | None
    is_error: bool


@dataclass
class Message:
    position: int
    role: str
    created_at: str | None
    text: str  # masked, cut at TEXT_MAX characters
    chars: int  # the full text's length
    bytes: int
    calls: list[Call] = field(default_factory=list)

    @property
    def cut(self) -> bool:
        return len(self.text) < self.chars

    def as_dict(self) -> dict[str, object]:
        return {
            "p": self.position,
            "r": self.role,
            "t": self.created_at,
            "x": self.text,
            "c": self.chars,
            "b": self.bytes,
            "k": [[c.name, c.arguments, c.result_position, c.result_bytes, c.is_error] for c in self.calls],
        }


def windows(positions: Iterable[int]) -> list[int]:
    """The positions a finding shows: each cited one and CONTEXT on each side."""
    return sorted({q for p in positions for q in range(max(0, p - CONTEXT), p + CONTEXT + 1)})


def fetch(
    con: duckdb.DuckDBPyConnection, cited: dict[str, set[int]], text_max: int = TEXT_MAX
) -> dict[str, dict[int, Message]]:
    """conversation_id -> position -> Message for the cited positions of each conversation and their context."""
    pairs = [(cid, p) for cid, ps in cited.items() for p in windows(ps)]
    if not pairs:
        return {}
    want = pl.DataFrame(pairs, schema={"conversation_id": pl.String, "position": pl.Int32}, orient="row")
    con.register("_evidence_wanted", stream(want))
    try:
        msgs = frame(
            con,
            """
            SELECT m.conversation_id, m.position, m.role, strftime(m.created_at, '%Y-%m-%d %H:%M:%S') AS created_at,
                   left(forensics_masked(m.content), ?) AS text, m.content_chars AS chars, m.content_bytes AS bytes
            FROM messages m JOIN _evidence_wanted w USING (conversation_id, position)
            WHERE m.on_main_path ORDER BY 1, 2""",
            [text_max],
        )  # masked before it is cut: a secret across the cut is masked whole
        calls = frame(
            con,
            """
            SELECT t.conversation_id, t.position, t.name, left(forensics_masked(t.arguments), ?) AS arguments,
                   t.result_position, t.result_bytes, coalesce(t.is_error, false) AS is_error
            FROM tool_calls t JOIN _evidence_wanted w USING (conversation_id, position)
            ORDER BY t.conversation_id, t.position, t.call_index""",
            [ARGS_MAX],
        )
    finally:
        con.unregister("_evidence_wanted")
    out: dict[str, dict[int, Message]] = {}
    for r in msgs.iter_rows(named=True):
        out.setdefault(r["conversation_id"], {})[r["position"]] = Message(
            r["position"], r["role"], r["created_at"], r["text"] or "", r["chars"] or 0, r["bytes"] or 0
        )
    for r in calls.iter_rows(named=True):
        msg = out.get(r["conversation_id"], {}).get(r["position"])
        if msg is not None:
            msg.calls.append(
                Call(
                    r["name"] or "?",
                    r["arguments"] or "",
                    r["result_position"],
                    r["result_bytes"],
                    bool(r["is_error"]),
                )
            )
    return out
