"""Replay the probe over the whole warehouse and keep the result as three tables anyone can query.

``sentinel_replies`` (one row per judged reply), ``sentinel_conversations`` (degradation onset and its lead
over visible failure) and ``sentinel_models`` (compliance per key). The state machine needs every model's
whole history in time order, so these always cover the whole warehouse; the report filters them.

Time order is the conversation's ``created_at`` (then its native id), then the reply's position: message
timestamps are often missing (SQLite message arrays carry none), and a conversation's replies stay together,
as in the seed where a compliance record is read when a chat starts.

Classifying a reply needs only its conversation (the fact ``sentinel_judged``); the state machine needs every
reply of a model in time order (``replay``), which the Spark engine runs per model after a sort in Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers import reuse
from forensics.analyzers.facts import Facts, arrow, ordered
from forensics.analyzers.sentinel.settings import SentinelSettings
from forensics.analyzers.sentinel.state import ComplianceTracker, compliance_key
from forensics.analyzers.sentinel.verdict import Sentinel, classify
from forensics.config import Config
from forensics.kernel.arrow import stream
from forensics.warehouse import frame
from forensics.warehouse.queries import load_query

# Judged replies: assistant messages with no tool calls on the main path, with their turn (user messages
# so far) and context size (characters of every earlier message, tool-call arguments included), and whether
# their conversation asks for the sentinel (``asks``: a message of it carries the marker) and where it was kept
# (``scope``: the folder of its source, one harness installation); ``asked`` keeps the replies of scopes that ask.
JUDGED_SQL = """
WITH asks AS (
    SELECT conversation_id, bool_or(contains(content, ?)) AS asks FROM messages GROUP BY 1
),
args AS (
    SELECT conversation_id, position, sum(length(arguments))::BIGINT AS arg_chars
    FROM tool_calls WHERE position IS NOT NULL GROUP BY ALL
),
path AS (
    SELECT m.conversation_id, m.position, m.role, m.tool_call_count,
           m.content_chars + coalesce(a.arg_chars, 0) AS chars
    FROM messages m LEFT JOIN args a USING (conversation_id, position)
    WHERE m.on_main_path
),
walk AS (
    SELECT *, coalesce(sum(chars) OVER earlier, 0)::BIGINT AS context_chars,
           (sum((role = 'user')::INTEGER) OVER so_far)::INTEGER AS turn
    FROM path
    WINDOW so_far AS (PARTITION BY conversation_id ORDER BY position ROWS UNBOUNDED PRECEDING),
           earlier AS (PARTITION BY conversation_id ORDER BY position ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
)
SELECT w.conversation_id, c.native_id, c.provider, c.model, c.created_at, w.position, w.turn, w.context_chars,
       m.content, coalesce(a.asks, false) AS asks,
       coalesce(regexp_replace(s.path, '[/\\\\][^/\\\\]*$', ''), c.source_id) AS scope
FROM walk w
JOIN conversations c USING (conversation_id)
LEFT JOIN sources s USING (source_id)
LEFT JOIN asks a USING (conversation_id)
JOIN messages m ON m.conversation_id = w.conversation_id AND m.position = w.position AND m.on_main_path
WHERE w.role = 'assistant' AND w.tool_call_count = 0
ORDER BY c.created_at NULLS LAST, c.native_id, c.conversation_id, w.position
"""

REPLY_SCHEMA: dict[str, Any] = {
    "conversation_id": pl.String,
    "native_id": pl.String,
    "position": pl.Int32,
    "turn": pl.Int32,
    "context_chars": pl.Int64,
    "context_tokens": pl.Int64,
    "compliance_key": pl.String,
    "provider": pl.String,
    "model": pl.String,
    "model_ordinal": pl.Int32,
    "status": pl.String,
    "drifted": pl.String,
    "outcome": pl.String,
    "degraded": pl.Boolean,
}
# what ``replay`` adds to each reply: its conversation's time (the replay's order) and the model's state after
# the reply (its last reply's is the model's state at the end of the history)
STATE_SCHEMA: dict[str, Any] = {
    "created_at": pl.Datetime("us"),
    "known_compliant": pl.Boolean,
    "muted": pl.Boolean,
    "muted_ordinal": pl.Int32,
    "healthy_after_mute": pl.Int32,
}
REPLAYED = "sentinel_replayed"  # what an engine hands over when it ran ``replay`` itself
BUILT = "_sentinel_built"  # temp: the config key of the last ``build_tables`` on this connection


def judged(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Every final reply with its verdict and compliance key, without its text (one tight loop over the text)."""
    s = Sentinel.from_config(cfg)
    rows = frame(con, JUDGED_SQL, [s.marker])
    verdicts = [classify(t, s.marker, s.tokens, s.closing) for t in rows["content"].to_list()]
    keys = [compliance_key(p, m) for p, m in zip(rows["provider"].to_list(), rows["model"].to_list())]
    return rows.drop("content").with_columns(
        pl.Series("compliance_key", keys, pl.String),
        pl.Series("status", [v.status for v in verdicts], pl.String),
        pl.Series("drifted", [v.drifted for v in verdicts], pl.String),
    )


def turns(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    return arrow(
        con,
        "SELECT conversation_id, count(*)::INTEGER AS turns FROM messages "
        "WHERE on_main_path AND role = 'user' GROUP BY 1",
    )


def failures(con: duckdb.DuckDBPyConnection, cfg: Config, ids: list[str] | None = None) -> pl.DataFrame:
    """The named query ``sentinel_failures`` with each failure's turn (user messages up to it), of ``ids`` only
    when given: a bound id list (not a subquery) lets DuckDB push the filter under the query's CTEs, so the error
    regex reads only the tool results of those conversations."""
    where = "" if ids is None else "WHERE q.conversation_id IN (SELECT unnest(?::VARCHAR[]))"
    return arrow(
        con,
        f"""
        WITH f AS (SELECT q.* FROM ({load_query("sentinel_failures", __package__).sql}) q {where}),
        users AS (SELECT conversation_id, position FROM messages
                  WHERE on_main_path AND role = 'user' AND conversation_id IN (SELECT conversation_id FROM f))
        SELECT f.*, (SELECT count(*) FROM users u WHERE u.conversation_id = f.conversation_id
                     AND u.position <= f.position)::INTEGER AS turn
        FROM f""",
        None if ids is None else [ids],
    )


def asked(judged: pl.DataFrame) -> pl.DataFrame:
    """The judged replies of the harness installations that ask for the sentinel: a reply is judged when some
    conversation kept in its folder carries the marker (a system prompt or injected text asking for it, or a reply
    writing it: no model writes it unasked). A model never asked is not Missing; it is not judged (docs/definitions.md#sentinel-compliance)."""
    scopes = judged.filter(pl.col("asks"))["scope"].unique()
    return judged.filter(pl.col("scope").is_in(scopes.implode()))


def replay(batches: Iterable[pl.DataFrame], tracker: ComplianceTracker) -> Iterator[pl.DataFrame]:
    """Run the state machine over judged replies (``sentinel_judged``) in time order; a model's replies may span
    batches. Each reply comes back with the probe's outcome and its model's state after it."""
    observe, onsets, models = tracker.observe, tracker.onsets, tracker.models
    for judged in batches:
        ordinals, outcomes, degraded, states = [], [], [], []
        for key, conv, pos, status in zip(
            judged["compliance_key"].to_list(),
            judged["conversation_id"].to_list(),
            judged["position"].to_list(),
            judged["status"].to_list(),
        ):
            ordinals.append(models[key].judged if key in models else 0)
            outcomes.append(observe(key, conv, pos, status))
            degraded.append(conv in onsets)  # latched at this reply or earlier
            m = models[key]
            states.append((m.known_compliant, m.muted, m.muted_at, m.healthy_after_mute))
        state = pl.DataFrame(
            states, schema={k: v for k, v in STATE_SCHEMA.items() if k != "created_at"}, orient="row"
        ).insert_column(0, judged["created_at"].cast(pl.Datetime("us")))
        yield pl.DataFrame(
            {
                "conversation_id": judged["conversation_id"],
                "native_id": judged["native_id"],
                "position": judged["position"],
                "turn": judged["turn"],
                "context_chars": judged["context_chars"],
                "context_tokens": judged["context_chars"] // 4,
                "compliance_key": judged["compliance_key"],
                "provider": judged["provider"],
                "model": judged["model"],
                "model_ordinal": ordinals,
                "status": judged["status"],
                "drifted": judged["drifted"],
                "outcome": outcomes,
                "degraded": degraded,
            },
            schema=REPLY_SCHEMA,
        ).hstack(state)


def build_tables(con: duckdb.DuckDBPyConnection, cfg: Config, facts: Facts | None = None) -> ComplianceTracker | None:
    """(Re)create the three sentinel tables for the whole history; returns the replayed tracker (None when an
    engine handed the replay over in ``facts``)."""
    facts = facts or Facts(con, cfg)
    tracker = ComplianceTracker(SentinelSettings.of(cfg).compliance_window) if facts.local else None
    if tracker is not None:
        replayed = pl.concat(
            [
                *replay([asked(facts.get("sentinel_judged"))], tracker),
                pl.DataFrame(schema={**REPLY_SCHEMA, **STATE_SCHEMA}),
            ]
        )
    else:
        replayed = ordered("sentinel_judged", facts.get(REPLAYED))
    replies = replayed.select(list(REPLY_SCHEMA))
    con.register("_sentinel_replies", stream(replies))
    try:
        con.execute("CREATE OR REPLACE TABLE sentinel_replies AS SELECT * FROM _sentinel_replies")
    finally:
        con.unregister("_sentinel_replies")
    _models(con, replayed)
    _conversations(con, facts)
    if tracker is not None:  # what the tables reflect, for ``built`` (the tuner's sweep after the report's)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {BUILT} AS SELECT ? AS key", [reuse.key("sentinel", cfg)])
    return tracker


def built(con: duckdb.DuckDBPyConnection, cfg: Config) -> bool:
    """Whether ``build_tables`` ran on this connection with this config (its tables reflect the warehouse, which a
    report does not change between its analyzers and its tuners)."""
    have = con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = ?", [BUILT]).fetchall()
    return bool(have[0][0]) and con.execute(f"SELECT key FROM {BUILT}").fetchall()[0][0] == reuse.key("sentinel", cfg)


def _models(con: duckdb.DuckDBPyConnection, replayed: pl.DataFrame) -> None:
    states = (
        replayed.sort("model_ordinal")
        .group_by("compliance_key", maintain_order=True)
        .last()
        .select("compliance_key", *[c for c in STATE_SCHEMA if c != "created_at"])
    )
    con.register("_sentinel_states", stream(states))
    try:
        con.execute("""
        CREATE OR REPLACE TABLE sentinel_models AS
        WITH per AS (
            SELECT compliance_key, any_value(provider) AS provider, any_value(model) AS model,
                   count(DISTINCT conversation_id) AS conversations,
                   count(*) AS judged,
                   count(*) FILTER (WHERE status = 'healthy') AS healthy,
                   count(*) FILTER (WHERE status = 'mutated') AS mutated,
                   count(*) FILTER (WHERE status = 'missing') AS missing,
                   count(DISTINCT conversation_id) FILTER (WHERE outcome = 'alarm') AS degraded_conversations,
                   min(model_ordinal) FILTER (WHERE status = 'healthy') AS first_healthy_ordinal
            FROM sentinel_replies GROUP BY 1
        ),
        drift AS (
            SELECT compliance_key, string_agg(drifted || ' ' || n, ', ' ORDER BY n DESC, drifted) AS drifted_ranked
            FROM (SELECT compliance_key, drifted, count(*) AS n FROM sentinel_replies
                  WHERE drifted IS NOT NULL GROUP BY ALL)
            GROUP BY 1
        )
        SELECT p.compliance_key, p.provider, p.model, p.conversations, p.judged, p.healthy, p.mutated, p.missing,
               p.healthy / p.judged AS healthy_share, d.drifted_ranked, s.known_compliant, p.first_healthy_ordinal,
               s.muted, s.muted_ordinal, c.created_at AS muted_since, r.conversation_id AS muted_conversation_id,
               r.native_id AS muted_native_id, r.position AS muted_position, s.healthy_after_mute,
               s.muted AND s.healthy_after_mute > 0 AS false_mute, p.degraded_conversations
        FROM per p
        JOIN _sentinel_states s USING (compliance_key)
        LEFT JOIN drift d USING (compliance_key)
        LEFT JOIN sentinel_replies r ON r.compliance_key = p.compliance_key AND r.model_ordinal = s.muted_ordinal
        LEFT JOIN conversations c ON c.conversation_id = r.conversation_id
        ORDER BY p.judged DESC, p.compliance_key
        """)
    finally:
        con.unregister("_sentinel_states")


def _conversations(con: duckdb.DuckDBPyConnection, facts: Facts) -> None:
    """Per conversation: onset, and the first visible failure before and after it (failures of degraded ones only)."""
    degraded = [
        r[0]
        for r in con.execute("SELECT DISTINCT conversation_id FROM sentinel_replies WHERE outcome = 'alarm'").fetchall()
    ]
    con.register("_sentinel_failures", stream(facts.get("sentinel_failures", degraded)))
    con.register("_sentinel_turns", stream(facts.get("sentinel_turns")))
    try:
        _conversations_table(con)
    finally:
        con.unregister("_sentinel_failures")
        con.unregister("_sentinel_turns")


def _conversations_table(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("""
    CREATE OR REPLACE TABLE sentinel_conversations AS
    WITH per AS (
        SELECT conversation_id, any_value(compliance_key) AS compliance_key, count(*) AS judged,
               count(*) FILTER (WHERE status = 'healthy') AS healthy,
               count(*) FILTER (WHERE status = 'mutated') AS mutated,
               count(*) FILTER (WHERE status = 'missing') AS missing,
               min(position) FILTER (WHERE outcome = 'alarm') AS onset_position
        FROM sentinel_replies GROUP BY 1
    ),
    onset AS (
        SELECT p.*, r.status AS onset_status, r.drifted AS onset_drifted, r.turn AS onset_turn,
               r.context_chars AS onset_context_chars, r.context_tokens AS onset_context_tokens
        FROM per p
        LEFT JOIN sentinel_replies r ON r.conversation_id = p.conversation_id AND r.position = p.onset_position
    ),
    f AS (SELECT * FROM _sentinel_failures),
    around AS (
        SELECT o.conversation_id,
               count(*) FILTER (WHERE f.position < o.onset_position) AS failures_before,
               count(*) FILTER (WHERE f.position > o.onset_position) AS failures_after,
               min(f.position) FILTER (WHERE f.position < o.onset_position) AS failure_before_position,
               arg_min(f.kind, (f.position, f.kind)) FILTER (WHERE f.position < o.onset_position)
                   AS failure_before_kind,
               min(f.position) FILTER (WHERE f.position > o.onset_position) AS failure_position,
               arg_min(f.kind, (f.position, f.kind)) FILTER (WHERE f.position > o.onset_position) AS failure_kind,
               arg_min(f.detail, (f.position, f.kind)) FILTER (WHERE f.position > o.onset_position) AS failure_detail,
               arg_min(f.turn, (f.position, f.kind)) FILTER (WHERE f.position > o.onset_position) AS upto_failure
        FROM onset o JOIN f USING (conversation_id)
        GROUP BY 1
    ),
    users AS (SELECT * FROM _sentinel_turns)
    SELECT c.conversation_id, c.native_id, o.compliance_key, coalesce(u.turns, 0) AS turns,
           coalesce(o.judged, 0) AS judged, coalesce(o.healthy, 0) AS healthy, coalesce(o.mutated, 0) AS mutated,
           coalesce(o.missing, 0) AS missing, o.onset_position IS NOT NULL AS degraded, o.onset_position,
           o.onset_status, o.onset_drifted, o.onset_turn, o.onset_context_chars, o.onset_context_tokens,
           CASE WHEN o.onset_position IS NOT NULL THEN coalesce(a.failures_before, 0) END AS failures_before,
           CASE WHEN o.onset_position IS NOT NULL THEN coalesce(a.failures_after, 0) END AS failures_after,
           a.failure_before_position, a.failure_before_kind, a.failure_position, a.failure_kind, a.failure_detail,
           CASE WHEN a.failure_position IS NOT NULL THEN a.upto_failure END AS failure_turn,
           CASE WHEN a.failure_position IS NOT NULL THEN a.upto_failure - o.onset_turn END AS lead_turns,
           a.failure_position - o.onset_position AS lead_messages,
           CASE WHEN o.onset_position IS NOT NULL THEN a.failure_before_position IS NULL END AS sentinel_first
    FROM conversations c
    LEFT JOIN onset o USING (conversation_id)
    LEFT JOIN around a USING (conversation_id)
    LEFT JOIN users u USING (conversation_id)
    ORDER BY c.created_at NULLS LAST, c.native_id, c.conversation_id
    """)
