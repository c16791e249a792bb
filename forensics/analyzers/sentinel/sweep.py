"""What each ``compliance_window`` would have done over this history, so `forensics tune` can pick one.

A model whose first Healthy reply is its k-th judged reply (0-based) is muted by any window w <= k and known
compliant under any w > k; a model that never produced one is muted once it has w judged replies. So one
pass over ``sentinel_replies`` answers every window:

- muted_models: models muted under w;
- false_mutes: muted models that later produced a Healthy reply (the window was too short for them);
- noise_models: never-compliant models that w leaves unmuted (fewer than w judged replies): the probe is still
  judging them, so their misses surface as Missing/Mutated instead of Muted (too long a window);
- noise_replies: misses of never-compliant models judged before their mute (``min(judged, w)`` each);
- degraded_conversations: conversations latched degraded under w (alarms raised).
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb
import polars as pl

from forensics.analyzers.schema import defaults
from forensics.analyzers.sentinel.tables import build_tables, built
from forensics.config import Config
from forensics.warehouse import frame

WINDOWS = range(1, 11)

SWEEP_SQL = """
WITH replies AS (SELECT * FROM sentinel_replies WHERE {only}),
per AS (
    SELECT compliance_key, count(*) AS judged,
           min(model_ordinal) FILTER (WHERE status = 'healthy') AS first_healthy
    FROM replies GROUP BY 1
),
alarms AS (  -- conversations with a miss after the model's first Healthy: latched whenever it is not muted
    SELECT r.compliance_key, count(DISTINCT r.conversation_id) AS conversations
    FROM replies r JOIN per p USING (compliance_key)
    WHERE r.status <> 'healthy' AND r.model_ordinal > p.first_healthy
    GROUP BY 1
),
w AS (SELECT unnest(?::INTEGER[]) AS window)
SELECT w.window,
       count(p.compliance_key) FILTER (WHERE p.first_healthy >= w.window
                                       OR (p.first_healthy IS NULL AND p.judged >= w.window)) AS muted_models,
       count(p.compliance_key) FILTER (WHERE p.first_healthy >= w.window) AS false_mutes,
       count(p.compliance_key) FILTER (WHERE p.first_healthy IS NULL AND p.judged < w.window) AS noise_models,
       coalesce(sum(least(p.judged, w.window)) FILTER (WHERE p.first_healthy IS NULL), 0)::BIGINT AS noise_replies,
       coalesce(sum(a.conversations) FILTER (WHERE p.first_healthy < w.window), 0)::BIGINT AS degraded_conversations
FROM w LEFT JOIN per p ON TRUE LEFT JOIN alarms a USING (compliance_key)
GROUP BY w.window
ORDER BY w.window
"""


def window_sweep(
    con: duckdb.DuckDBPyConnection,
    cfg: Config | None = None,
    windows: Iterable[int] = WINDOWS,
    rebuild: bool = True,
    conversations: str | None = None,
) -> pl.DataFrame:
    """One row per candidate window. ``rebuild`` replays the probe first (the tables reflect the warehouse
    and ``cfg``'s marker and tokens) unless ``build_tables`` ran on ``con`` with ``cfg``; pass False when it just ran. ``conversations``: a table whose
    conversations' replies are counted (default all; a model's ordinals still come from its whole history)."""
    if rebuild and not built(con, cfg or defaults()):
        build_tables(con, cfg or defaults())
    only = f"conversation_id IN (SELECT conversation_id FROM {conversations})" if conversations else "TRUE"
    return frame(con, SWEEP_SQL.format(only=only), [list(windows)])
