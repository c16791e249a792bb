"""Tool-result compression replay (docs/definitions.md#tool-result-compression-replay): what the seed harness would cut, and what a threshold sweep does.

The per-result work (context before each result, should_summarize, the size extract_key_info leaves) is the
named query ``compression_replay`` (DuckDB, mirrors ``forensics.text.compress``). It runs once, at the loosest
thresholds asked for: a result summarized under stricter thresholds is summarized under the loosest too, so
one pass gives every point of a sweep, which is then a cheap aggregation. ``replay`` and ``sweep`` are the
API the tuner calls; the analyzer also leaves ``compression_results`` (per result, configured thresholds)
in the warehouse.

Figures: tool share of context = tool characters ÷ all characters on the main paths (chars/4 is the token
estimate, so the share is the same in tokens), pooled over the selection; asst_tool_ratio is the baseline's
(mean over conversations of assistant ÷ tool characters), recomputed with the summarized tool text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers import reuse
from forensics.analyzers.base import Chart, Context, Section, Table
from forensics.analyzers.baseline import mean
from forensics.analyzers.compression import draw, tune
from forensics.analyzers.compression.settings import ToolResultSettings
from forensics.analyzers.declare import Analyzer, Tuner
from forensics.analyzers.facts import Fact
from forensics.analyzers.keys import compression as declared
from forensics.config import Config
from forensics.kernel.arrow import relation_frame, stream
from forensics.kernel.selection import SELECTED
from forensics.warehouse import derived, frame
from forensics.warehouse.queries import load_query

NAME = "compression"
TITLE = "Tool-result compression replay"
FACTS = ("compression",)  # what run() reads (``analyzers.facts``)
SWEEP_BYTES = (1000, 2000, 3000, 5000, 10000)
SWEEP_SHARES = (0.2, 0.4, 0.6, 1.0)
RESULTS_TABLE = "compression_results"
CONV_KEYS = [
    "results",
    "summarized",
    "tool_bytes_before",
    "tool_bytes_after",
    "tool_share_before",
    "tool_share_after",
    "asst_tool_ratio_before",
    "asst_tool_ratio_after",
]
# the loosest thresholds the report or the tuner sweeps (its tune module): the replay runs at these or looser
LOOSEST = (250, 0.2)
_REPLAY = "_compression_replay"  # temp: per result at the loosest thresholds of the last prepare()


def replay(
    con: duckdb.DuckDBPyConnection, summarize_bytes: int = 2000, summarize_share: float = 0.40, head_tail_lines: int = 5
) -> dict[str, Any]:
    """Replay one setting over the selection (``sel_conversations`` when present, else every conversation)."""
    _prepare(con, summarize_bytes, summarize_share, head_tail_lines)
    return _totals(_per_conversation(con, [summarize_bytes], [summarize_share]))[0]


def sweep(
    con: duckdb.DuckDBPyConnection,
    bytes_values: Sequence[int],
    share_values: Sequence[float],
    head_tail_lines: int = 5,
    kept: Config | None = None,
) -> pl.DataFrame:
    """One row per (summarize_bytes, summarize_share) with the figures of ``replay``. ``kept``: the config, to keep
    each conversation's rows of the grid between reports (``reuse_compression_sweep_tuned``, what the tuner sweeps):
    a row is a function of its conversation's rows and the config, so a report after new conversations replays only
    theirs; the pooled figures are then computed from every conversation's rows, in the order one query of all of
    them gives them (by point, then native id), as before."""

    def compute() -> pl.DataFrame:
        _prepare(con, min(bytes_values), min(share_values), head_tail_lines)
        return _per_conversation(con, bytes_values, share_values)

    if kept is None or not _selected(con).endswith(SELECTED):
        return pl.DataFrame(_totals(compute()))
    grid = (tuple(map(int, bytes_values)), tuple(map(float, share_values)), int(head_tail_lines))
    rows = reuse.rows(con, {**kept.values, "compression sweep": grid}, KEPT_TUNED, compute)
    return pl.DataFrame(_totals(rows.sort("summarize_bytes", "summarize_share", "native_id", "conversation_id")))


KEPT_TUNED = "compression_sweep_tuned"  # the tuner's grid per conversation (``sweep``)


def _prepare(
    con: duckdb.DuckDBPyConnection, summarize_bytes: int, summarize_share: float, head_tail_lines: int
) -> None:
    """The replay at ``LOOSEST`` or looser, so the report and the tuner share one, kept per conversation (``reuse``)
    while a selection is materialised."""
    values = {
        "tool_result_summarize_bytes": min(int(summarize_bytes), LOOSEST[0]),
        "tool_result_summarize_share": min(float(summarize_share), LOOSEST[1]),
        "tool_result_head_tail_lines": int(head_tail_lines),
    }

    def compute() -> pl.DataFrame:
        with _variables(con, values), reuse.selected_only(con):
            return relation_frame(
                con.sql(
                    f"SELECT * FROM ({load_query('compression_replay', __package__).sql}) q WHERE q.conversation_id IN "
                    f"({_selected(con)}) ORDER BY q.conversation_id, q.position"
                )
            )

    selected = _selected(con).endswith(SELECTED)
    con.register(
        "_compression_rows", stream(reuse.rows(con, values, "compression_replay", compute) if selected else compute())
    )
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {_REPLAY} AS SELECT * FROM _compression_rows")
    finally:
        con.unregister("_compression_rows")


@contextmanager
def _variables(con: duckdb.DuckDBPyConnection, values: dict[str, Any]) -> Iterator[None]:
    """Set DuckDB variables for one query and put the config's values back afterwards."""
    old = {k: con.execute("SELECT getvariable(?)", [k]).fetchall()[0][0] for k in values}
    try:
        for k, v in values.items():
            con.execute(f"SET VARIABLE {k} = ?", [v])
        yield
    finally:
        for k, v in old.items():
            con.execute(f"SET VARIABLE {k} = ?", [v]) if v is not None else con.execute(f"RESET VARIABLE {k}")


def _selected(con: duckdb.DuckDBPyConnection) -> str:
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = ?", [SELECTED]
    ).fetchall()
    return f"SELECT conversation_id FROM {SELECTED}" if exists[0][0] else "SELECT conversation_id FROM conversations"


def _per_conversation(
    con: duckdb.DuckDBPyConnection, bytes_values: Sequence[int], share_values: Sequence[float]
) -> pl.DataFrame:
    """Per grid point and conversation: results, summarized, tool bytes/chars before and after, context chars."""
    return frame(
        con,
        f"""
        WITH grid AS (
            SELECT b.b, s.s FROM (SELECT unnest(?::BIGINT[]) AS b) b CROSS JOIN (SELECT unnest(?::DOUBLE[]) AS s) s
        ),
        conv AS (
            SELECT m.conversation_id, any_value(c.native_id) AS native_id,
                   sum(m.content_chars)::BIGINT AS all_chars,
                   coalesce(sum(m.content_chars) FILTER (WHERE m.role = 'assistant'), 0)::BIGINT AS assistant_chars
            FROM messages m JOIN conversations c USING (conversation_id)
            WHERE m.on_main_path AND m.conversation_id IN ({_selected(con)})
            GROUP BY m.conversation_id
        ),
        per AS (
            SELECT b, s, conversation_id, count(*) AS results, count(*) FILTER (WHERE summ) AS summarized,
                   sum(result_bytes)::BIGINT AS tool_bytes_before,
                   sum(CASE WHEN summ THEN after_bytes ELSE result_bytes END)::BIGINT AS tool_bytes_after,
                   sum(result_chars)::BIGINT AS tool_chars_before,
                   sum(CASE WHEN summ THEN after_chars ELSE result_chars END)::BIGINT AS tool_chars_after
            FROM (SELECT g.b, g.s, r.*,
                         r.result_bytes > g.b OR (r.context_bytes > 0 AND r.result_bytes > g.s * r.context_bytes) AS summ
                  FROM {_REPLAY} r CROSS JOIN grid g)
            GROUP BY b, s, conversation_id
        )
        SELECT g.b AS summarize_bytes, g.s AS summarize_share, c.conversation_id, c.native_id, c.all_chars,
               c.assistant_chars, coalesce(p.results, 0) AS results, coalesce(p.summarized, 0) AS summarized,
               coalesce(p.tool_bytes_before, 0) AS tool_bytes_before, coalesce(p.tool_bytes_after, 0) AS tool_bytes_after,
               coalesce(p.tool_chars_before, 0) AS tool_chars_before, coalesce(p.tool_chars_after, 0) AS tool_chars_after
        FROM grid g CROSS JOIN conv c
        LEFT JOIN per p ON p.b = g.b AND p.s = g.s AND p.conversation_id = c.conversation_id
        ORDER BY 1, 2, c.native_id
    """,
        [list(map(int, bytes_values)), list(map(float, share_values))],
    )


def _with_shares(per: pl.DataFrame) -> pl.DataFrame:
    after_all = pl.col("all_chars") - pl.col("tool_chars_before") + pl.col("tool_chars_after")

    def ratio(tool: str) -> pl.Expr:
        return pl.when(pl.col(tool) > 0).then(pl.col("assistant_chars") / pl.col(tool))

    return per.with_columns(
        tool_share_before=pl.when(pl.col("all_chars") > 0).then(pl.col("tool_chars_before") / pl.col("all_chars")),
        tool_share_after=pl.when(after_all > 0).then(pl.col("tool_chars_after") / after_all),
        asst_tool_ratio_before=ratio("tool_chars_before"),
        asst_tool_ratio_after=ratio("tool_chars_after"),
    )


def _totals(per: pl.DataFrame) -> list[dict[str, Any]]:
    """Pooled figures per grid point (ratios: mean over conversations with tool text, as the baseline)."""
    per = _with_shares(per)
    out = []
    for (b, s), g in per.group_by(["summarize_bytes", "summarize_share"], maintain_order=True):
        all_before, tb, ta = (
            int(g["all_chars"].sum()),
            int(g["tool_chars_before"].sum()),
            int(g["tool_chars_after"].sum()),
        )
        bb, ba, n, k = (int(g[c].sum()) for c in ("tool_bytes_before", "tool_bytes_after", "results", "summarized"))
        out.append(
            {
                "summarize_bytes": int(b),
                "summarize_share": float(s),
                "results": n,
                "summarized": k,
                "summarized_share": k / n if n else None,
                "tool_bytes_before": bb,
                "tool_bytes_after": ba,
                "tool_bytes_saved_share": (bb - ba) / bb if bb else None,
                "tool_share_before": tb / all_before if all_before else None,
                "tool_share_after": ta / (all_before - tb + ta) if all_before - tb + ta else None,
                "asst_tool_ratio_before": mean(g["asst_tool_ratio_before"]),
                "asst_tool_ratio_after": mean(g["asst_tool_ratio_after"]),
            }
        )
    return out


def _grid(cfg: Config) -> tuple[list[int], list[float]]:
    tr = ToolResultSettings.of(cfg)
    return sorted({*SWEEP_BYTES, int(tr.summarize_bytes)}), sorted({*SWEEP_SHARES, float(tr.summarize_share)})


def replay_grid(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Per point of the report's sweep and selected conversation: the replay's counts (``_per_conversation``)."""
    grid_b, grid_s = _grid(cfg)
    _prepare(con, grid_b[0], grid_s[0], int(ToolResultSettings.of(cfg).head_tail_lines))
    return _per_conversation(con, grid_b, grid_s)


def run(ctx: Context) -> Section:
    tr = ToolResultSettings.of(ctx.cfg)
    b0, s0, ht = int(tr.summarize_bytes), float(tr.summarize_share), int(tr.head_tail_lines)
    per = _with_shares(ctx.fact("compression"))
    points = _totals(per)
    if not points:  # no conversation selected: nothing was replayed
        return Section.idle(NAME, TITLE, "no conversation in the selection")
    here = next(p for p in points if p["summarize_bytes"] == b0 and p["summarize_share"] == s0)
    mine = per.filter((pl.col("summarize_bytes") == b0) & (pl.col("summarize_share") == s0))
    if (
        ctx.facts is not None and ctx.facts.local
    ):  # the per-result table needs the replay the fact left on the warehouse connection
        _write_results(ctx.con, b0, s0)
    metrics = {
        **here,
        "head_tail_lines": ht,
        "compress_enabled": bool(tr.compress_enabled),
        "sweep": points,
        "conversations": {r["conversation_id"]: {k: r[k] for k in CONV_KEYS} for r in mine.iter_rows(named=True)},
    }
    sec = Section(NAME, TITLE, metrics=metrics, summary=_summary(here, ht, bool(tr.compress_enabled)))
    sec.tables += [
        Table(
            "per_conversation",
            f"Replay per conversation (summarize_bytes {b0}, summarize_share {s0})",
            mine.select(pl.col("conversation_id").replace_strict(ctx.names).alias("conversation"), *CONV_KEYS).sort(
                "tool_bytes_before", descending=True
            ),
        ),
        Table(
            "sweep",
            "Threshold sweep (pooled over the selection)",
            pl.DataFrame(points).select(
                "summarize_bytes",
                "summarize_share",
                "summarized",
                "summarized_share",
                "tool_bytes_after",
                "tool_bytes_saved_share",
                "tool_share_after",
                "asst_tool_ratio_after",
            ),
        ),
    ]
    sec.charts.append(
        Chart(
            "sweep",
            "Tool share of context after compression, by threshold",
            {"points": points, "before": here["tool_share_before"]},
        )
    )
    return sec


def _write_results(con: duckdb.DuckDBPyConnection, b0: int, s0: float) -> None:
    """compression_results: per tool result of the selection at the configured thresholds."""
    con.execute(
        f"""
        CREATE OR REPLACE TABLE {RESULTS_TABLE} AS
        SELECT native_id, conversation_id, position, result_bytes, result_chars, context_bytes, context_chars,
               summ AS summarized, CASE WHEN summ THEN after_bytes ELSE result_bytes END AS after_bytes,
               CASE WHEN summ THEN after_chars ELSE result_chars END AS after_chars
        FROM (SELECT *, result_bytes > ? OR (context_bytes > 0 AND result_bytes > ? * context_bytes) AS summ
              FROM {_REPLAY})
        ORDER BY conversation_id, position""",
        [b0, s0],
    )


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def _summary(h: dict[str, Any], ht: int, enabled: bool) -> str:
    if not h["results"]:
        return "No tool results in the selection: nothing to compress."
    return (
        f"Replaying the harness's rule (summarize a result over {h['summarize_bytes']} bytes or over "
        f"{h['summarize_share']:.0%} of the context before it; keep error lines and the first and last {ht} "
        f"lines): {h['summarized']} of {h['results']} tool results ({_pct(h['summarized_share'])}) would be "
        f"summarized, cutting tool bytes {_pct(h['tool_bytes_saved_share'])} ({h['tool_bytes_before']:,} → "
        f"{h['tool_bytes_after']:,}). Tool text would go from {_pct(h['tool_share_before'])} to "
        f"{_pct(h['tool_share_after'])} of the context"
        + (
            f"; asst_tool_ratio from {h['asst_tool_ratio_before']:.2f} to {h['asst_tool_ratio_after']:.2f}."
            if h["asst_tool_ratio_after"] is not None
            else "."
        )
        + ("" if enabled else " (The config has compress_enabled = false: this is what enabling it would do.)")
    )


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    sections=declared.SECTIONS,
    keys=declared.KEYS,
    facts=(Fact("compression", replay_grid, ("summarize_bytes", "summarize_share", "native_id", "conversation_id")),),
    reads=FACTS,
    tuners=(Tuner(tune.compression, ("tool_result.summarize_bytes", "tool_result.summarize_share")),),
    charts={"sweep": draw.sweep},
    engines=("duckdb", "spark"),
    maps=("conversations",),
    tables=(
        derived.Table("compression_results", "whole", "each tool result replayed under the compression rule"),
        reuse.cached_table("compression_replay"),
        reuse.cached_table(KEPT_TUNED),
    ),
    settings=(ToolResultSettings,),
)
