"""Replay of the harness's compaction rule (the seed harness's, docs/harness-config.md#compaction) over every conversation, and a sweep of its settings.

The rule: the context is estimated at characters / 4 (message text and tool-call arguments; a leading system
prompt always stays); once it exceeds ``max_tokens``, the old messages become one summary of
``summary_tokens`` and the ``keep_recent`` most recent messages stay verbatim. The check runs after every
message, as the seed harness's agent loop does before each model call.

For each pair of ``compaction_pairs`` (a fact mentioned at ``first``, needed again at ``need``) the replay asks:
did a compaction fall between them (*needed after a compaction*), and was ``first`` outside the window the
last such compaction kept (*outside the kept window*: only the summary could have carried it)? Figures are
pooled over the selection; ``mean_context_tokens`` is the estimated context when each message is added,
averaged over messages: what the setting costs per model call.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np

from forensics.analyzers.compaction.load import selected
from forensics.analyzers.compaction.pairs import TABLE as PAIRS

KEEP_RECENT = (0, 5, 10, 20, 50)  # the report's sweep (every point is a pass over the needs)
MAX_TOKENS = (32_000, 64_000, 100_000, 128_000, 200_000)
BATCH = 2000


@dataclass
class Conv:
    conversation_id: str
    native_id: str
    prefix: np.ndarray  # characters before each position (prefix[0] = 0, len = messages + 1)
    start: int  # the index of the first message after the leading system messages
    first: np.ndarray  # indexes (not positions) of each pair's first mention ...
    need: np.ndarray  # ... and of its need
    positions: np.ndarray  # the main path's positions as they are (a gap, no position 0), by index
    cum: np.ndarray = field(init=False)  # cum[i] = prefix[0] + ... + prefix[i - 1]: context sums in one step
    bounds: list[int] = field(init=False)  # prefix as Python ints: a bisect per compaction beats numpy's call cost

    def __post_init__(self) -> None:
        self.cum = np.concatenate(([0.0], np.cumsum(self.prefix, dtype=np.float64)))
        self.bounds = self.prefix.tolist()


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
        return {
            "max_tokens": self.max_tokens,
            "keep_recent": self.keep_recent,
            "conversations": self.conversations,
            "conversations_compacted": self.conversations_compacted,
            "compactions": self.compactions,
            "needed_later": self.needed_later,
            "needed_after_compaction": self.needed_after_compaction,
            "outside_window": self.outside_window,
            "overflows": self.overflows,
            "outside_share": (
                self.outside_window / self.needed_after_compaction if self.needed_after_compaction else None
            ),
            "mean_context_tokens": float(self.context_chars / 4 / self.messages) if self.messages else None,
        }


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


def compactions(prefix: list[int], start: int, limit_chars: int, keep: int, summary_chars: int) -> list[int]:
    """The positions after which the rule compacts (``prefix``: characters before each position)."""
    n = len(prefix) - 1
    base = prefix[start]  # the system prompt: always in the context
    out: list[int] = []
    seg, summary, last = start, 0, start - 1
    while True:
        x = limit_chars - base - summary + prefix[seg]  # compact at the first j with prefix[j + 1] > x
        j = max(bisect_right(prefix, x) - 1, last + 1)
        if j >= n:
            return out
        out.append(j)
        last, seg, summary = j, max(start, j - keep + 1), summary_chars


def _segments(c: Conv, comps: np.ndarray, keep: int, summary_chars: int) -> tuple[np.ndarray, ...]:
    """Per stretch between compactions: first and last message, where its context starts, the summary's size."""
    n = len(c.prefix) - 1
    a = np.concatenate(([c.start], comps + 1))
    b = np.concatenate((comps, [n - 1]))
    seg = np.concatenate(([c.start], np.maximum(c.start, comps - keep + 1)))
    summ = np.concatenate(([0], np.full(len(comps), summary_chars)))
    return a, b, seg, summ


def _context_chars(c: Conv, comps: np.ndarray, keep: int, summary_chars: int) -> float:
    """Sum over messages of the estimated context (characters) when each is added."""
    a, b, seg, summ = _segments(c, comps, keep, summary_chars)
    ok = b >= a
    a, b, seg, summ = a[ok], b[ok], seg[ok], summ[ok]
    base = float(c.prefix[c.start])
    return float(((b - a + 1) * (base + summ - c.prefix[seg]) + (c.cum[b + 2] - c.cum[a + 1])).sum())


def _overflows(c: Conv, comps: np.ndarray, keep: int, limit_chars: int, summary_chars: int) -> int:
    """Compactions after which the kept messages alone (with the system prompt and summary) exceed the limit."""
    kept = c.prefix[comps + 1] - c.prefix[np.maximum(c.start, comps - keep + 1)]
    return int((kept + c.prefix[c.start] + summary_chars > limit_chars).sum())


def _spans(c: Conv, comps: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair: the index of the last compaction before its need (-1: none), spanned, outside the window."""
    if not len(comps) or not len(c.need):
        none = np.zeros(len(c.need), dtype=bool)
        return np.full(len(c.need), -1), none, none
    idx = np.searchsorted(comps, c.need, side="left") - 1
    last = np.where(idx >= 0, comps[np.maximum(idx, 0)], -1)
    spanned = (idx >= 0) & (last >= c.first)
    return idx, spanned, spanned & (last >= c.first + keep)


def load(con: duckdb.DuckDBPyConnection, table: str | None = None) -> Iterable[Conv]:
    """Sizes and pairs of the selected conversations (or those of ``table``), a batch at a time
    (``compaction_pairs`` filled)."""
    ids = [cid for (cid,) in con.execute(f"SELECT conversation_id FROM {table or selected(con)} ORDER BY 1").fetchall()]
    for i in range(0, len(ids), BATCH):
        part = ids[i : i + BATCH]
        pairs = {
            cid: (f, n)
            for cid, f, n in con.execute(
                f"SELECT conversation_id, list(first ORDER BY need, first), list(need ORDER BY need, first) "
                f"FROM {PAIRS} WHERE kind IS NOT NULL AND conversation_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY 1",
                [part],
            ).fetchall()
        }
        for cid, native, sizes, start, positions in con.execute(
            """
                SELECT m.conversation_id, any_value(c.native_id),
                       list(m.content_chars + coalesce(a.chars, 0) ORDER BY m.position),
                       min(m.position) FILTER (WHERE m.role <> 'system'), list(m.position ORDER BY m.position)
                FROM messages m JOIN conversations c USING (conversation_id)
                LEFT JOIN (SELECT conversation_id, position, sum(length(arguments))::BIGINT AS chars
                           FROM tool_calls WHERE position IS NOT NULL GROUP BY ALL) a USING (conversation_id, position)
                WHERE m.on_main_path AND m.conversation_id IN (SELECT unnest(?::VARCHAR[]))
                GROUP BY 1 ORDER BY 1""",
            [part],
        ).fetchall():
            f, n = pairs.get(cid, ([], []))
            pos = np.asarray(positions, dtype=np.int64)  # the replay counts messages; positions are mapped back
            yield Conv(
                cid,
                native,
                np.concatenate(([0], np.cumsum(np.asarray(sizes, dtype=np.int64)))),
                len(pos) if start is None else int(np.searchsorted(pos, start)),
                np.searchsorted(pos, np.asarray(f, dtype=np.int64)),
                np.searchsorted(pos, np.asarray(n, dtype=np.int64)),
                pos,
            )


def sweep(
    con: duckdb.DuckDBPyConnection,
    settings: Sequence[tuple[int, int]],
    summary_tokens: int,
    detail: tuple[int, int] | None = None,
    table: str | None = None,
) -> tuple[list[Point], list[Compacted]]:
    """Every (max_tokens, keep_recent) of ``settings`` over the selection (or the conversations of ``table``);
    ``detail``: the setting whose replayed compactions are listed one by one."""
    points = {s: Point(*s) for s in settings}
    listed: list[Compacted] = []
    summary = summary_tokens * 4
    none = np.zeros(0, dtype=np.int64)
    for c in load(con, table):
        total, messages = int(c.prefix[-1]), len(c.prefix) - 1 - c.start
        plain = _context_chars(c, none, 0, 0)  # never compacted: the same for every setting that does not
        for (m, k), p in points.items():
            p.conversations += 1
            p.needed_later += len(c.need)
            p.messages += messages
            if total <= m * 4:
                p.context_chars += plain
                continue
            comps = np.asarray(compactions(c.bounds, c.start, m * 4, k, summary), dtype=np.int64)
            idx, spanned, outside = _spans(c, comps, k)
            p.conversations_compacted += bool(len(comps))
            p.compactions += len(comps)
            p.needed_after_compaction += int(spanned.sum())
            p.outside_window += int(outside.sum())
            p.overflows += _overflows(c, comps, k, m * 4, summary)
            p.context_chars += _context_chars(c, comps, k, summary)
            if (m, k) == detail:
                listed += _listed(c, comps, k, summary, idx, spanned, outside)
    return list(points.values()), listed


def _listed(
    c: Conv, comps: np.ndarray, keep: int, summary_chars: int, idx: np.ndarray, spanned: np.ndarray, outside: np.ndarray
) -> list[Compacted]:
    out = []
    _, b, seg, summ = _segments(c, comps, keep, summary_chars)
    for i, pos in enumerate(comps.tolist()):  # the stretch that ends at compaction i starts at seg[i]
        ctx = c.bounds[c.start] + int(summ[i]) + c.bounds[pos + 1] - c.bounds[int(seg[i])]
        mine = idx == i
        out.append(
            Compacted(
                c.conversation_id,
                c.native_id,
                int(c.positions[pos]),
                ctx // 4,
                int(c.positions[max(c.start, pos - keep + 1)]),
                int((mine & spanned).sum()),
                int((mine & outside).sum()),
            )
        )
    return out


def grid(
    max_tokens: int, keep_recent: int, keeps: Iterable[int] = KEEP_RECENT, windows: Iterable[int] = MAX_TOKENS
) -> list[tuple[int, int]]:
    """The sweep's settings: ``windows`` × ``keeps`` with the configured values added."""
    return [(m, k) for m in sorted({*windows, max_tokens}) for k in sorted({*keeps, keep_recent})]
