"""Replay of the harness's compaction rule (seed 004) over every conversation, and a sweep of its settings.

The rule: the context is estimated at characters / 4 (message text and tool-call arguments; a leading system
prompt always stays); once it exceeds ``max_tokens``, the old messages become one summary of
``summary_tokens`` and the ``keep_recent`` most recent messages stay verbatim. The check runs after every
message, as the seed's agent loop does before each model call.

For each pair of ``compaction_pairs`` (a fact mentioned at ``first``, needed again at ``need``) the replay asks:
did a compaction fall between them (*needed after a compaction*), and was ``first`` outside the window the
last such compaction kept (*outside the kept window*: only the summary could have carried it)? Figures are
pooled over the selection; ``mean_context_tokens`` is the estimated context when each message is added,
averaged over messages: what the setting costs per model call.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np

from forensics.compaction.load import selected
from forensics.compaction.pairs import TABLE as PAIRS

KEEP_RECENT = (0, 2, 5, 10, 15, 20, 30, 50, 80)
MAX_TOKENS = (8_000, 16_000, 32_000, 64_000, 100_000, 128_000, 200_000)
BATCH = 2000


@dataclass
class Conv:
    conversation_id: str
    native_id: str
    prefix: np.ndarray  # characters before each position (prefix[0] = 0, len = messages + 1)
    start: int  # the first position after the leading system messages
    first: np.ndarray
    need: np.ndarray
    kind: np.ndarray


@dataclass
class Point:
    max_tokens: int
    keep_recent: int
    conversations: int = 0
    conversations_compacted: int = 0
    compactions: int = 0
    needed_later: int = 0  # needs of facts mentioned earlier (with or without a compaction between)
    needed_after_compaction: int = 0
    outside_window: int = 0
    overflows: int = 0  # compactions after which the kept messages alone exceed max_tokens: the rule thrashes
    context_chars: float = 0.0
    messages: int = 0

    def figures(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "keep_recent": self.keep_recent, "conversations": self.conversations,
                "conversations_compacted": self.conversations_compacted, "compactions": self.compactions,
                "needed_later": self.needed_later, "needed_after_compaction": self.needed_after_compaction,
                "outside_window": self.outside_window, "overflows": self.overflows,
                "outside_share": (self.outside_window / self.needed_after_compaction
                                  if self.needed_after_compaction else None),
                "mean_context_tokens": float(self.context_chars / 4 / self.messages) if self.messages else None}


@dataclass
class Compacted:
    """One replayed compaction at the configured setting: a row of ``compaction_replay``."""

    conversation_id: str
    native_id: str
    position: int  # compacted after this message
    context_tokens: int  # the estimate that crossed max_tokens
    kept_from: int  # the first position kept verbatim
    needed_after: int = 0  # pairs whose need follows it (it is the last compaction before the need)
    outside_window: int = 0
    outside_by_kind: dict[str, int] = field(default_factory=dict)


def compactions(prefix: np.ndarray, start: int, limit_chars: int, keep: int, summary_chars: int) -> list[int]:
    """The positions after which the rule compacts."""
    n = len(prefix) - 1
    base = int(prefix[start])  # the system prompt: always in the context
    out: list[int] = []
    seg, summary, last = start, 0, start - 1
    while True:
        x = limit_chars - base - summary + int(prefix[seg])  # compact at the first j with prefix[j + 1] > x
        j = max(int(np.searchsorted(prefix, x, side="right")) - 1, last + 1)
        if j >= n:
            return out
        out.append(j)
        last, seg, summary = j, max(start, j - keep + 1), summary_chars


def _context_chars(prefix: np.ndarray, start: int, comps: list[int], keep: int, summary_chars: int) -> float:
    """Sum over messages of the estimated context (characters) when each is added."""
    n = len(prefix) - 1
    pp = np.concatenate(([0.0], np.cumsum(prefix, dtype=np.float64)))
    base, total, a, seg, summary = float(prefix[start]), 0.0, start, start, 0
    for b in [*comps, n - 1]:
        if b >= a:
            total += (b - a + 1) * (base + summary - float(prefix[seg])) + (pp[b + 2] - pp[a + 1])
        a, seg, summary = b + 1, max(start, b - keep + 1), summary_chars
    return total


def _spans(c: Conv, comps: list[int], keep: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair: the index of the last compaction before its need (-1: none), spanned, outside the window."""
    if not comps or not len(c.need):
        none = np.zeros(len(c.need), dtype=bool)
        return np.full(len(c.need), -1), none, none
    cs = np.asarray(comps)
    idx = np.searchsorted(cs, c.need, side="left") - 1
    last = np.where(idx >= 0, cs[np.maximum(idx, 0)], -1)
    spanned = (idx >= 0) & (last >= c.first)
    return idx, spanned, spanned & (last >= c.first + keep)


def load(con: duckdb.DuckDBPyConnection) -> Iterable[Conv]:
    """Sizes and pairs of the selected conversations, a batch at a time (``compaction_pairs`` filled)."""
    ids = [cid for (cid,) in con.execute(f"SELECT conversation_id FROM {selected(con)} ORDER BY 1").fetchall()]
    for i in range(0, len(ids), BATCH):
        part = ids[i:i + BATCH]
        pairs = {cid: (f, n, k) for cid, f, n, k in con.execute(
            f"SELECT conversation_id, list(first ORDER BY need, first), list(need ORDER BY need, first), "
            f"list(kind ORDER BY need, first) FROM {PAIRS} WHERE kind IS NOT NULL AND conversation_id IN "
            "(SELECT unnest(?::VARCHAR[])) GROUP BY 1", [part]).fetchall()}
        for cid, native, sizes, start in con.execute("""
                SELECT m.conversation_id, any_value(c.native_id),
                       list(m.content_chars + coalesce(a.chars, 0) ORDER BY m.position),
                       coalesce(min(m.position) FILTER (WHERE m.role <> 'system'), count(*))
                FROM messages m JOIN conversations c USING (conversation_id)
                LEFT JOIN (SELECT conversation_id, position, sum(length(arguments))::BIGINT AS chars
                           FROM tool_calls WHERE position IS NOT NULL GROUP BY ALL) a USING (conversation_id, position)
                WHERE m.on_main_path AND m.conversation_id IN (SELECT unnest(?::VARCHAR[]))
                GROUP BY 1 ORDER BY 1""", [part]).fetchall():
            f, n, k = pairs.get(cid, ([], [], []))
            yield Conv(cid, native, np.concatenate(([0], np.cumsum(np.asarray(sizes, dtype=np.int64)))), int(start),
                       np.asarray(f, dtype=np.int64), np.asarray(n, dtype=np.int64), np.asarray(k, dtype=object))


def sweep(con: duckdb.DuckDBPyConnection, settings: Sequence[tuple[int, int]], summary_tokens: int,
          detail: tuple[int, int] | None = None) -> tuple[list[Point], list[Compacted]]:
    """Every (max_tokens, keep_recent) of ``settings`` over the selection; ``detail``: the setting whose replayed
    compactions are listed one by one."""
    points = {s: Point(*s) for s in settings}
    listed: list[Compacted] = []
    for c in load(con):
        total = int(c.prefix[-1])
        for (m, k), p in points.items():
            comps = compactions(c.prefix, c.start, m * 4, k, summary_tokens * 4) if total > m * 4 else []
            idx, spanned, outside = _spans(c, comps, k)
            p.conversations += 1
            p.conversations_compacted += bool(comps)
            p.compactions += len(comps)
            p.needed_later += len(c.need)
            p.needed_after_compaction += int(spanned.sum())
            p.outside_window += int(outside.sum())
            p.overflows += sum(int(c.prefix[j + 1] - c.prefix[max(c.start, j - k + 1)] + c.prefix[c.start])
                               + summary_tokens * 4 > m * 4 for j in comps)
            p.context_chars += float(_context_chars(c.prefix, c.start, comps, k, summary_tokens * 4))
            p.messages += len(c.prefix) - 1 - c.start
            if (m, k) == detail:
                listed += _listed(c, comps, k, summary_tokens * 4, idx, spanned, outside)
    return list(points.values()), listed


def _listed(c: Conv, comps: list[int], keep: int, summary_chars: int, idx: np.ndarray, spanned: np.ndarray,
            outside: np.ndarray) -> list[Compacted]:
    out, seg, summary = [], c.start, 0
    for i, pos in enumerate(comps):
        ctx = int(c.prefix[c.start]) + summary + int(c.prefix[pos + 1] - c.prefix[seg])
        row = Compacted(c.conversation_id, c.native_id, pos, ctx // 4, max(c.start, pos - keep + 1))
        mine = idx == i
        row.needed_after, row.outside_window = int((mine & spanned).sum()), int((mine & outside).sum())
        for kind in c.kind[mine & outside]:
            row.outside_by_kind[kind] = row.outside_by_kind.get(kind, 0) + 1
        out.append(row)
        seg, summary = max(c.start, pos - keep + 1), summary_chars
    return out


def grid(max_tokens: int, keep_recent: int) -> list[tuple[int, int]]:
    """The sweep's settings: the defaults' grid with the configured values added."""
    return [(m, k) for m in sorted({*MAX_TOKENS, max_tokens}) for k in sorted({*KEEP_RECENT, keep_recent})]
