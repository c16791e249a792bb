"""Baseline metrics (docs/definitions.md#baseline-metrics): the seed's table, per conversation and as means, plus three charts; and where the
person said the assistant's work failed them (``user_pushback``: "still cannot drag", "same error", a traceback
pasted back), the visible failure a reviewer opens a conversation for."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, cast

import duckdb
import polars as pl

from forensics.analyzers import quality
from forensics.analyzers.base import Chart, Context, Finding, Section
from forensics.analyzers.baseline import draw
from forensics.analyzers.baseline.settings import BaselineSettings
from forensics.analyzers.declare import Analyzer, CheckRule
from forensics.analyzers.facts import Fact, arrow
from forensics.analyzers.keys import baseline as declared
from forensics.config import Config
from forensics.kernel.selection import SELECTED
from forensics.warehouse.queries import load_query

NAME = "baseline"
TITLE = "Baseline metrics"
FACTS = ("baseline", "baseline_tool_sizes", "baseline_role_chars", "baseline_pushback")  # what run() reads
PUSHBACK_HEAD = 400  # characters of a person's turn read for pushback: what they say, not the log they paste
QUOTE = 80  # characters of a pushback turn quoted in its finding
COUNTS = [
    "messages",
    "user",
    "assistant",
    "tool",
    "tool_calls",
    "parallel_turns",
    "tool_results_gt_2kb",
    "tool_results_gt_10kb",
    "empty_assistant",
    "continue_nags",
    "short_user",
]
SHARES = ["empty_assistant_share", "short_user_share", "asst_tool_ratio"]
METRICS = COUNTS + SHARES
SIZE_BINS = [-1, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 1 << 62]
SEED_LAYOUT_MAX = 8  # up to this many conversations, one column each (the seed's layout)
WIDE_LAYOUT_MAX = 40  # beyond the seed layout: a row per conversation, the largest ones


def per_conversation(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """The named query ``baseline``: one row per selected conversation."""
    return arrow(
        con,
        f"SELECT * FROM ({load_query('baseline', __package__).sql}) q "
        f"WHERE q.conversation_id IN (SELECT conversation_id FROM {SELECTED})",
    )


def tool_sizes(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Per conversation, its tool results in each size bin (``SIZE_BINS``)."""
    bins = ", ".join(
        f"count(*) FILTER (WHERE content_bytes > {lo} AND content_bytes <= {hi})"
        for lo, hi in zip(SIZE_BINS, SIZE_BINS[1:])
    )
    return arrow(
        con,
        f"SELECT conversation_id, [{bins}] AS counts FROM messages m JOIN {SELECTED} "
        "USING (conversation_id) WHERE m.on_main_path AND m.role = 'tool' GROUP BY 1",
    )


def role_chars(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    return arrow(
        con,
        f"SELECT conversation_id, m.role, sum(m.content_chars)::BIGINT AS chars FROM messages m "
        f"JOIN {SELECTED} USING (conversation_id) WHERE m.on_main_path GROUP BY 1, 2",
    )


def pushback(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """The person's turns, after the assistant answered at least once, that say its work failed them
    (``baseline.pushback_patterns`` in their first PUSHBACK_HEAD characters), with the words that did."""
    pattern = re.compile("|".join(f"(?:{p})" for p in BaselineSettings.of(cfg).pushback_patterns), re.I | re.M)
    rows = (
        con.execute(f"""
        SELECT m.conversation_id, m.position, left(m.content, {PUSHBACK_HEAD}) AS head
        FROM messages m JOIN {SELECTED} USING (conversation_id)
        WHERE m.on_main_path AND m.origin = 'person' AND m.position > (
            SELECT min(a.position) FROM messages a WHERE a.conversation_id = m.conversation_id AND a.on_main_path
            AND a.role = 'assistant')""").fetchall()
        if BaselineSettings.of(cfg).pushback_patterns
        else []
    )
    hits = [(cid, pos, _quote(head, m)) for cid, pos, head in rows if (m := pattern.search(head))]
    return pl.DataFrame(
        {
            "conversation_id": pl.Series([h[0] for h in hits], dtype=pl.String),
            "position": pl.Series([h[1] for h in hits], dtype=pl.Int32),
            "quote": pl.Series([h[2] for h in hits], dtype=pl.String),
        }
    )


def _quote(text: str, m: re.Match[str]) -> str:
    """The words around the match, on one line."""
    start = max(0, m.start() - (QUOTE - (m.end() - m.start())) // 2)
    if start and not text[start - 1].isspace():  # from the next whole word
        start = next((i + 1 for i in range(start, m.start()) if text[i].isspace()), m.start())
    return " ".join(text[start : start + QUOTE].split())


def run(ctx: Context) -> Section:
    per = ctx.fact("baseline")
    means = {m: mean(per[m]) for m in METRICS}
    sizes = ctx.fact("baseline_tool_sizes")["counts"].to_list()
    hist = [sum(c[i] for c in sizes) for i in range(len(SIZE_BINS) - 1)]
    chars = ctx.fact("baseline_role_chars").group_by("role").agg(pl.col("chars").sum()).sort("role")
    role_chars = dict(zip(chars["role"].to_list(), [int(x) for x in chars["chars"].to_list()]))
    metrics: dict[str, Any] = {
        "conversation_count": per.height,
        "system_messages": int(per["system_messages"].sum()),
        "conversations": {
            r["conversation_id"]: {
                "native_id": r["native_id"],
                "title": r["title"],
                "model": r["model"],
                **{m: r[m] for m in METRICS},
            }
            for r in per.iter_rows(named=True)
        },
        "means": means,
        "tool_result_bytes_histogram": {"edges": SIZE_BINS[:-1], "counts": hist},
        "context_chars_by_role": role_chars,
    }
    pushed = ctx.fact("baseline_pushback")
    metrics["pushback"] = {"turns": pushed.height, "conversation_count": pushed["conversation_id"].n_unique()}
    sec = Section(NAME, TITLE, metrics=metrics)
    sec.summary = _summary(per, means)
    sec.findings = _pushback_findings(pushed, per)
    sec.grid = seed_table(per, means, ctx.names)
    roles_title = "Messages by role per conversation" + (
        f" (the {WIDE_LAYOUT_MAX} longest of {per.height})" if per.height > WIDE_LAYOUT_MAX else ""
    )
    longest = per.sort("messages", descending=True).head(WIDE_LAYOUT_MAX) if per.height > WIDE_LAYOUT_MAX else per
    sec.charts += [
        Chart(
            "messages_by_role",
            roles_title,  # thousands of bars say nothing and take a minute to draw
            {
                "labels": [ctx.names[c] for c in longest["conversation_id"]],
                **{role: longest[role].to_list() for role in ("user", "assistant", "tool")},
            },
        ),
        Chart(
            "tool_result_sizes", "Tool-result size distribution (UTF-8 bytes)", metrics["tool_result_bytes_histogram"]
        ),
        Chart("context_share", "Share of context by role (characters)", role_chars),
    ]
    return sec


def _pushback_findings(pushed: pl.DataFrame, per: pl.DataFrame) -> list[Finding]:
    """One finding per conversation where the person pushed back: high when they had to say it twice or more."""
    natives = dict(zip(per["conversation_id"].to_list(), per["native_id"].to_list()))
    out = []
    for (cid,), rows in pushed.group_by("conversation_id", maintain_order=True):
        positions, quotes = rows["position"].to_list(), rows["quote"].to_list()
        out.append(
            Finding(
                "user_pushback",
                "high" if len(positions) > 1 else "low",
                str(cid),
                natives.get(cid),
                positions,
                f"the person said the work failed them {len(positions)} "
                f"time{'s' if len(positions) > 1 else ''}: "
                + "; ".join(f"[{p}] “{q}”" for p, q in list(zip(positions, quotes))[:3]),
                "a person's turn after an answer saying it failed (baseline.pushback_patterns; held against no norm: the "
                "person's own words, high when said twice or more)",
                float(len(positions)),
            )
        )
    return out


def mean(col: pl.Series) -> float | None:
    """The mean of a column's values, nulls left out; None when there are none."""
    vals = col.drop_nulls()
    return float(cast(float, vals.mean())) if len(vals) else None


def fmt_half_up(x: float | None, digits: int) -> str:
    if x is None:
        return "–"
    q = Decimal(1).scaleb(-digits) if digits else Decimal(1)
    return str(Decimal(repr(x)).quantize(q, rounding=ROUND_HALF_UP))


def pct(x: float | None) -> str:
    return "–" if x is None else fmt_half_up(x * 100, 0) + "%"


def _cells(r: dict[str, Any]) -> list[str]:
    return [
        str(r["messages"]),
        f"{r['user']} / {r['assistant']} / {r['tool']}",
        str(r["tool_calls"]),
        str(r["parallel_turns"]),
        str(r["tool_results_gt_2kb"]),
        str(r["tool_results_gt_10kb"]),
        f"{r['empty_assistant']}/{r['assistant']} ({pct(r['empty_assistant_share'])})",
        str(r["continue_nags"]),
        f"{r['short_user']}/{r['user']}",
        fmt_half_up(r["asst_tool_ratio"], 2),
    ]


def _mean_cells(m: dict[str, float | None]) -> list[str]:
    def i(k: str) -> str:
        return fmt_half_up(m[k], 0)  # the seed rounds count means to integers

    return [
        i("messages"),
        f"{i('user')} / {i('assistant')} / {i('tool')}",
        i("tool_calls"),
        i("parallel_turns"),
        i("tool_results_gt_2kb"),
        i("tool_results_gt_10kb"),
        pct(m["empty_assistant_share"]),
        fmt_half_up(m["continue_nags"], 1),
        pct(m["short_user_share"]),
        fmt_half_up(m["asst_tool_ratio"], 2),
    ]


ROW_LABELS = [
    "messages",
    "user / assistant / tool",
    "tool_calls",
    "parallel_turns (≥3 calls)",
    "tool_results_gt_2kb",
    "tool_results_gt_10kb",
    "empty_assistant (tool echo)",
    "continue_nags",
    "short_user (≤12 chars)",
    "asst_tool_ratio (chars)",
]


def seed_table(per: pl.DataFrame, means: dict[str, float | None], names: dict[str, str]) -> list[list[str]]:
    """The seed's layout: metrics as rows, one column per conversation (by its label), then the mean; transposed
    when wide."""
    rows = list(per.iter_rows(named=True))
    mean = _mean_cells(means)
    if len(rows) <= SEED_LAYOUT_MAX:
        head = ["metric", *[names[r["conversation_id"]] for r in rows], "mean"]
        body = [[label, *[_cells(r)[i] for r in rows], mean[i]] for i, label in enumerate(ROW_LABELS)]
    else:
        head = ["conversation", *ROW_LABELS]
        top = sorted(rows, key=lambda r: -r["messages"])[:WIDE_LAYOUT_MAX]
        label = "mean" if len(rows) == len(top) else f"mean of all {len(rows)}"
        body = [[names[r["conversation_id"]], *_cells(r)] for r in top] + [[label, *mean]]
    return [head, *body]


def _summary(per: pl.DataFrame, means: dict[str, float | None]) -> str:
    if per.height == 0:
        return "No conversation in the selection."
    ratio = means["asst_tool_ratio"]
    share = None if ratio is None else 1 / (1 + ratio)
    return (
        f"{per.height} conversations, {int(per['messages'].sum())} messages on their main paths "
        f"({int(per['system_messages'].sum())} system messages counted apart). "
        + (
            f"Tool output is about {pct(share)} of the text the assistant and tools produce "
            f"(asst_tool_ratio {fmt_half_up(ratio, 2)}); "
            if share is not None
            else ""
        )
        + f"{pct(means['empty_assistant_share'])} of assistant turns are pure tool echo."
    )


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    sections=declared.SECTIONS,
    keys=declared.KEYS,
    facts=(
        Fact("baseline", per_conversation, ("created_at", "native_id", "conversation_id"), cached=True),
        Fact("baseline_tool_sizes", tool_sizes, ("conversation_id",), cached=True),
        Fact("baseline_role_chars", role_chars, ("conversation_id", "role"), cached=True),
        Fact("baseline_pushback", pushback, ("conversation_id", "position"), cached=True),
        quality.FACT,
    ),
    reads=FACTS,
    checks=(
        CheckRule("baseline.means.asst_tool_ratio", "higher", 0.05, True),
        CheckRule("baseline.means.empty_assistant*", "lower", 0.05, True),
        CheckRule("baseline.means.continue_nags", "lower", 0.10, True),
        CheckRule("baseline.means.short_user*", "lower", 0.05, True),
        CheckRule("baseline.means.tool_results_gt_*", "lower", 0.05, True),
        CheckRule("baseline.means.parallel_turns", "lower", 0.10, True),
    ),
    charts={"messages_by_role": draw.roles, "tool_result_sizes": draw.sizes, "context_share": draw.context_share},
    engines=("duckdb", "spark"),
    compared=("means.empty_assistant_share", "means.short_user_share", "means.asst_tool_ratio"),
    conversation_figures="conversations",
    maps=("conversations",),
    settings=(BaselineSettings,),
)
