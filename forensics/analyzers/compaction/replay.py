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
import orjson
import polars as pl

from forensics.analyzers import reuse
from forensics.analyzers.compaction.load import selected
from forensics.analyzers.compaction.pairs import TABLE as PAIRS
from forensics.config import Config
from forensics.kernel.selection import SELECTED

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
    kept: tuple[str, Config] | None = None,
) -> tuple[list[Point], list[Compacted]]:
    """Every (max_tokens, keep_recent) of ``settings`` over the selection (or the conversations of ``table``);
    ``detail``: the setting whose replayed compactions are listed one by one. ``kept``: (name, config) to keep each
    conversation's share of every point between reports (``reuse``, the table ``reuse_<name>``): a point is a sum
    over conversations, each share a function of that conversation's rows, its pairs and the config, so a report
    after new conversations replays only theirs; the shares are added up in the order a replay of all of them adds
    them (by conversation id), so every figure, the float sum of the context too, is what it would be."""
    settings = list(dict.fromkeys(settings))  # a point per setting, as a dict of them kept
    if kept is None or selected(con) != SELECTED:
        return _merged(settings, _shares(con, settings, summary_tokens, detail, table))
    name, cfg = kept
    scope = table or SELECTED

    def compute() -> pl.DataFrame:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_TODO} AS SELECT conversation_id FROM {scope} "
            f"WHERE conversation_id IN (SELECT conversation_id FROM {SELECTED})"
        )
        return _shares(con, settings, summary_tokens, detail, _TODO)

    values = {**cfg.values, "compaction sweep": (tuple(settings), summary_tokens, detail)}
    rows = reuse.rows(con, values, name, compute)
    if table:
        ids = [cid for (cid,) in con.execute(f"SELECT conversation_id FROM {table}").fetchall()]
        rows = rows.filter(pl.col("conversation_id").is_in(ids))
    return _merged(settings, rows.sort("conversation_id", "setting"))


_TODO = "_compaction_sweep_todo"
KEPT = "compaction_sweep"  # the report's sweep, kept per conversation (``sweep``)
KEPT_TUNED = "compaction_sweep_tuned"  # the tuner's
SHARES = {  # per conversation and point of the sweep: its share of the point (``sweep``)
    "conversation_id": pl.String,
    "setting": pl.Int32,  # the index of the point in the sweep's settings
    "needed_later": pl.Int64,
    "messages": pl.Int64,
    "compacted": pl.Boolean,
    "compactions": pl.Int64,
    "needed_after_compaction": pl.Int64,
    "outside_window": pl.Int64,
    "overflows": pl.Int64,
    "context_chars": pl.Float64,
    "listed": pl.String,  # the detail setting's replayed compactions (``Compacted``), as JSON; else null
}


def _shares(
    con: duckdb.DuckDBPyConnection,
    settings: Sequence[tuple[int, int]],
    summary_tokens: int,
    detail: tuple[int, int] | None,
    table: str | None,
) -> pl.DataFrame:
    """Each conversation's share of each point (``SHARES``), in conversation order."""
    out: dict[str, list[Any]] = {k: [] for k in SHARES}
    summary = summary_tokens * 4
    none = np.zeros(0, dtype=np.int64)
    for c in load(con, table):
        total, messages = int(c.prefix[-1]), len(c.prefix) - 1 - c.start
        plain = _context_chars(c, none, 0, 0)  # never compacted: the same for every setting that does not
        for i, (m, k) in enumerate(settings):
            share: dict[str, Any] = {
                "conversation_id": c.conversation_id,
                "setting": i,
                "needed_later": len(c.need),
                "messages": messages,
                "compacted": False,
                "compactions": 0,
                "needed_after_compaction": 0,
                "outside_window": 0,
                "overflows": 0,
                "context_chars": plain,
                "listed": None,
            }
            if total > m * 4:
                comps = np.asarray(compactions(c.bounds, c.start, m * 4, k, summary), dtype=np.int64)
                idx, spanned, outside = _spans(c, comps, k)
                share |= {
                    "compacted": bool(len(comps)),
                    "compactions": len(comps),
                    "needed_after_compaction": int(spanned.sum()),
                    "outside_window": int(outside.sum()),
                    "overflows": _overflows(c, comps, k, m * 4, summary),
                    "context_chars": _context_chars(c, comps, k, summary),
                }
                if (m, k) == detail:
                    share["listed"] = orjson.dumps(
                        [vars(x) for x in _listed(c, comps, k, summary, idx, spanned, outside)]
                    ).decode()
            for key, v in share.items():
                out[key].append(v)
    return pl.DataFrame(out, schema=SHARES)


def _merged(settings: Sequence[tuple[int, int]], shares: pl.DataFrame) -> tuple[list[Point], list[Compacted]]:
    """The points: each conversation's shares added in conversation order (as one replay of all adds them)."""
    points = [Point(*s) for s in settings]
    listed: list[Compacted] = []
    for r in shares.iter_rows(named=True):
        p = points[r["setting"]]
        p.conversations += 1
        p.needed_later += r["needed_later"]
        p.messages += r["messages"]
        p.conversations_compacted += r["compacted"]
        p.compactions += r["compactions"]
        p.needed_after_compaction += r["needed_after_compaction"]
        p.outside_window += r["outside_window"]
        p.overflows += r["overflows"]
        p.context_chars += r["context_chars"]
        if r["listed"] is not None:
            listed += [Compacted(**x) for x in orjson.loads(r["listed"])]
    return points, listed


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
