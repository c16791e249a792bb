"""Baseline metrics (SPEC §4): the seed's table, per conversation and as means, plus three charts."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import polars as pl

from forensics.analyzers.base import Chart, Context, Section

NAME = "baseline"
TITLE = "Baseline metrics"
COUNTS = ["messages", "user", "assistant", "tool", "tool_calls", "parallel_turns", "tool_results_gt_2kb",
          "tool_results_gt_10kb", "empty_assistant", "continue_nags", "short_user"]
SHARES = ["empty_assistant_share", "short_user_share", "asst_tool_ratio"]
METRICS = COUNTS + SHARES
SIZE_BINS = [-1, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 1 << 62]
SEED_LAYOUT_MAX = 8  # up to this many conversations, one column each (the seed's layout)
WIDE_LAYOUT_MAX = 40  # beyond the seed layout: a row per conversation, the largest ones


def run(ctx: Context) -> Section:
    per = ctx.query("baseline")
    means = {m: _mean(per[m]) for m in METRICS}
    bins = ", ".join(f"count(*) FILTER (WHERE content_bytes > {lo} AND content_bytes <= {hi})"
                     for lo, hi in zip(SIZE_BINS, SIZE_BINS[1:]))
    hist = [int(x) for x in ctx.con.execute(
        f"SELECT {bins} FROM messages m JOIN sel_conversations USING (conversation_id) "
        "WHERE m.on_main_path AND m.role = 'tool'").fetchall()[0]]
    chars = ctx.df("SELECT m.role, sum(m.content_chars)::BIGINT AS chars FROM messages m JOIN sel_conversations "
                   "USING (conversation_id) WHERE m.on_main_path GROUP BY 1 ORDER BY 1")
    role_chars = dict(zip(chars["role"].to_list(), [int(x) for x in chars["chars"].to_list()]))
    metrics: dict[str, Any] = {
        "conversation_count": per.height,
        "system_messages": int(per["system_messages"].sum()),
        "conversations": {r["conversation_id"]: {"native_id": r["native_id"], "title": r["title"], "model": r["model"],
                                                  **{m: r[m] for m in METRICS}} for r in per.iter_rows(named=True)},
        "means": means,
        "tool_result_bytes_histogram": {"edges": SIZE_BINS[:-1], "counts": hist},
        "context_chars_by_role": role_chars,
    }
    sec = Section(NAME, TITLE, metrics=metrics)
    sec.summary = _summary(per, means)
    sec.grid = seed_table(per, means, ctx.names)
    roles_title = "Messages by role per conversation" + (
        f" (the {WIDE_LAYOUT_MAX} longest of {per.height})" if per.height > WIDE_LAYOUT_MAX else "")
    longest = per.sort("messages", descending=True).head(WIDE_LAYOUT_MAX) if per.height > WIDE_LAYOUT_MAX else per
    sec.charts += [Chart("messages_by_role", roles_title,  # thousands of bars say nothing and take a minute to draw
                         {"labels": [ctx.names[c] for c in longest["conversation_id"]],
                          **{role: longest[role].to_list() for role in ("user", "assistant", "tool")}}),
                   Chart("tool_result_sizes", "Tool-result size distribution (UTF-8 bytes)",
                         metrics["tool_result_bytes_histogram"]),
                   Chart("context_share", "Share of context by role (characters)", role_chars)]
    return sec


def _mean(col: pl.Series) -> float | None:
    vals = col.drop_nulls()
    return float(vals.mean()) if len(vals) else None


def fmt_half_up(x: float | None, digits: int) -> str:
    if x is None:
        return "–"
    q = Decimal(1).scaleb(-digits) if digits else Decimal(1)
    return str(Decimal(repr(x)).quantize(q, rounding=ROUND_HALF_UP))


def pct(x: float | None) -> str:
    return "–" if x is None else fmt_half_up(x * 100, 0) + "%"


def _cells(r: dict[str, Any]) -> list[str]:
    return [str(r["messages"]), f"{r['user']} / {r['assistant']} / {r['tool']}", str(r["tool_calls"]),
            str(r["parallel_turns"]), str(r["tool_results_gt_2kb"]), str(r["tool_results_gt_10kb"]),
            f"{r['empty_assistant']}/{r['assistant']} ({pct(r['empty_assistant_share'])})", str(r["continue_nags"]),
            f"{r['short_user']}/{r['user']}", fmt_half_up(r["asst_tool_ratio"], 2)]


def _mean_cells(m: dict[str, float | None]) -> list[str]:
    i = lambda k: fmt_half_up(m[k], 0)  # noqa: E731 - the seed rounds count means to integers
    return [i("messages"), f"{i('user')} / {i('assistant')} / {i('tool')}", i("tool_calls"), i("parallel_turns"),
            i("tool_results_gt_2kb"), i("tool_results_gt_10kb"), pct(m["empty_assistant_share"]),
            fmt_half_up(m["continue_nags"], 1), pct(m["short_user_share"]), fmt_half_up(m["asst_tool_ratio"], 2)]


ROW_LABELS = ["messages", "user / assistant / tool", "tool_calls", "parallel_turns (≥3 calls)", "tool_results_gt_2kb",
              "tool_results_gt_10kb", "empty_assistant (tool echo)", "continue_nags", "short_user (≤12 chars)",
              "asst_tool_ratio (chars)"]


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
    return (f"{per.height} conversations, {int(per['messages'].sum())} messages on their main paths "
            f"({int(per['system_messages'].sum())} system messages counted apart). "
            + (f"Tool output is about {pct(share)} of the text the assistant and tools produce "
               f"(asst_tool_ratio {fmt_half_up(ratio, 2)}); " if share is not None else "")
            + f"{pct(means['empty_assistant_share'])} of assistant turns are pure tool echo.")
