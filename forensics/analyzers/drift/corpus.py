"""Judging a conversation against its own corpus, not only against the seed's thresholds.

Rules written for a chat assistant flag an autonomous agent's normal work: an API agent's tool calls without
text, a coding agent's thirty reads for one task. So a figure that crossed a seed threshold also says where it
lies in the corpus it came from (``Distribution``), and tool-set dispersion counts only when the request is an
outlier among the corpus's requests (``Distribution.fence``) or when the user had to step in afterwards
(``interventions``): a continue-nag, a correction, an interruption.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import duckdb
import polars as pl

from forensics.warehouse import frame

MIN_POPULATION = 20  # fewer requests than this and no outlier fence means anything
INTERRUPTED = r"^\[?Request interrupted by user"  # what Claude Code writes when the user stops a run


class Distribution:
    """A corpus's values of one figure, sorted once: where does a value stand among them?"""

    def __init__(self, values: Sequence[float | None]) -> None:
        self.values = sorted(x for x in values if x is not None)

    def standing(self, v: float | None, below: bool = False) -> float | None:
        """Percent of the values less far out than ``v`` (higher is further out: the tail where findings lie;
        ``below``: small values are the bad end, as for asst_tool_ratio)."""
        if v is None or not self.values:
            return None
        n = len(self.values)
        less = n - bisect_right(self.values, v) if below else bisect_left(self.values, v)
        return 100 * less / n

    def fence(self) -> float | None:
        """Tukey's outlier fence, Q3 + 1.5 IQR; None with fewer than MIN_POPULATION values."""
        vals = self.values
        if len(vals) < MIN_POPULATION:
            return None

        def q(p: float) -> float:  # linear interpolation, numpy's default
            k = (len(vals) - 1) * p
            lo = int(k)
            return vals[lo] + (vals[min(lo + 1, len(vals) - 1)] - vals[lo]) * (k - lo)

        return q(0.75) + 1.5 * (q(0.75) - q(0.25))


def interventions(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """(conversation_id, position of a person's message, next_position, why) where the person's next message steps
    in: a continue-nag, a correction (``[sentinel] correction_words``) or an interruption (which Claude Code writes
    on the user role when the person stops a run: the harness's text, the person's act)."""
    return frame(
        con,
        f"""
        WITH u AS (
            SELECT conversation_id, position, origin, trimmed_text, content,
                   lead(position) OVER w AS next_position, lead(trimmed_text) OVER w AS next_trimmed,
                   lead(content) OVER w AS next_content, lead(person_text) OVER w AS next_words
            FROM messages JOIN sel_conversations USING (conversation_id)
            WHERE on_main_path AND role = 'user' AND (origin = 'person' OR regexp_matches(content, '{INTERRUPTED}'))
            WINDOW w AS (PARTITION BY conversation_id ORDER BY position)
        ),
        v AS (
            SELECT conversation_id, position, next_position,
                   CASE WHEN list_contains(coalesce(getvariable('baseline_continue_words'), ['继续', 'continue', 'go on', '继续吧']),
                                           next_trimmed) THEN 'a continue-nag'
                        WHEN regexp_matches(next_content, '{INTERRUPTED}') THEN 'an interruption'
                        WHEN len(list_filter(coalesce(getvariable('sentinel_correction_words'),
                                                      ['不对', '错了', '不是这个', '你忘了', 'wrong', 'that''s not',
                                                       'you forgot', 'I said']),
                                             lambda w: contains(lower(next_words), lower(w)))) > 0 THEN 'a correction'
                   END AS why
            FROM u WHERE next_position IS NOT NULL AND origin = 'person'
        )
        SELECT * FROM v WHERE why IS NOT NULL""",
    )
