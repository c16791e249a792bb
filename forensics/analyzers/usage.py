"""The runs first (docs/usage.md, issue 26): per agent and model, and per day, how many runs, the tokens they used,
what that cost, how often their tool calls failed, how often the context was compacted, and, where outcomes
exist, how often they succeeded (95 % Wilson interval).

Tokens have one meaning for every format (docs/usage.md): ``input`` is every token sent, the cache's included
(``message_usage`` keeps the uncached part: input = input_tokens + cache reads + cache writes), ``cached`` the
part read from the prompt cache (``cached_share`` = cached / input), ``cache_write`` the part written to it,
``output`` everything generated (reasoning included). A response logged in two transcripts (a Claude Code
side question or a resumed session copies its parent's messages, with their ids) is counted once, in the
top-level, earliest conversation, with the largest counts any copy gives. A run belongs to its conversation's model (the logged one, else the model
of most of its responses); each response is priced by its own model (``forensics.analyzers.prices``), and a
run's cost is shown only when every response with tokens has a price (a run without token counts has none,
and leaves its group's cost alone).
"""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from forensics.analyzers.base import Context, Section, Table
from forensics.analyzers.declare import Analyzer
from forensics.analyzers.outcomes import wilson
from forensics.analyzers.prices import PriceTable, table
from forensics.kernel.arrow import stream
from forensics.kernel.selection import SELECTED
from forensics.warehouse import derived, frame

NAME = "usage"
TITLE = "Runs: tokens, cost, tool errors and outcomes per agent and model"
GROUPS = ("agent", "model", "project", "branch", "day")
PROJECT_CHARS = 40  # a project (a working folder) as a table shows it: its start and its end, the middle elided
TOKENS = ("input", "cached", "cache_write", "output")


def runs(con: duckdb.DuckDBPyConnection, prices: PriceTable, selected: bool = False) -> pl.DataFrame:
    """One row per conversation (of the selection when ``selected``): its agent, model, day, tokens, cost (None:
    a response without a price), tool calls and errors on the main path, compactions and outcome. A run whose
    responses name several models (a switch inside a session) is listed under all of them, ``a + b``, never
    under its first model alone; its cost prices each response at its own model."""
    where = f"WHERE c.conversation_id IN (SELECT conversation_id FROM {SELECTED})" if selected else ""
    conv = frame(con, _RUNS_SQL.format(where=where))
    per_model = frame(con, _RESPONSES_SQL.format(where=where))
    cost = _costs(per_model, prices)
    return (
        conv.join(cost, on="conversation_id", how="left")
        .with_columns(pl.col("unpriced").fill_null(0))
        .sort("conversation_id")
    )


def summarize(rows: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The runs of ``runs`` grouped by ``by`` (among agent, model, project, branch, day), their figures summed and
    rated; a run whose log names no project or branch is in the group of none (shown as –)."""
    for key in by:
        if key not in GROUPS:
            raise ValueError(f"unknown grouping {key!r} (choose among {', '.join(GROUPS)})")
    out = (
        rows.group_by(by)
        .agg(
            pl.len().alias("runs"),
            pl.col("responses").sum(),
            *(pl.col(t).sum() for t in TOKENS),
            pl.when((pl.col("unpriced").sum() == 0) & (pl.col("responses").sum() > 0))
            .then(pl.col("cost").sum())
            .alias("cost"),
            (pl.col("unpriced") > 0).sum().alias("unpriced_runs"),
            pl.col("tool_calls").sum(),
            pl.col("tool_errors").sum(),
            pl.col("compactions").sum(),
            pl.col("success").count().alias("graded"),
            pl.col("success").sum().alias("passed"),
        )
        .sort(by, nulls_last=True)
    )
    rates = [wilson(int(k or 0), int(n)) if n else (None, None) for k, n in zip(out["passed"], out["graded"])]
    return out.with_columns(
        pl.when(pl.col("input") > 0).then(pl.col("cached") / pl.col("input")).alias("cached_share"),
        pl.when(pl.col("tool_calls") > 0).then(pl.col("tool_errors") / pl.col("tool_calls")).alias("tool_error_rate"),
        pl.when(pl.col("graded") > 0).then(pl.col("passed") / pl.col("graded")).alias("success_rate"),
        pl.Series("success_low", [r[0] for r in rates], dtype=pl.Float64),
        pl.Series("success_high", [r[1] for r in rates], dtype=pl.Float64),
    ).select(
        *by,
        "runs",
        "responses",
        "input",
        "cached",
        "cached_share",
        "cache_write",
        "output",
        "cost",
        "unpriced_runs",
        "tool_calls",
        "tool_errors",
        "tool_error_rate",
        "compactions",
        "graded",
        "passed",
        "success_rate",
        "success_low",
        "success_high",
    )


def display(df: pl.DataFrame) -> pl.DataFrame:
    """What a reader scans, from ``summarize``: the grouping, runs, tokens, cached share, cost, error rate,
    compactions and success rate with its interval, as text."""
    keys = [c for c in ("conversation_id", "native_id", *GROUPS) if c in df.columns]
    rows = []
    for r in df.iter_rows(named=True):
        graded = r.get("graded", 1 if r.get("success") is not None else 0)
        if "success_rate" in r:
            ok = (
                f"{r['success_rate']:.0%} ({r['success_low']:.0%}–{r['success_high']:.0%}) of {graded}"
                if graded
                else "–"
            )
        else:
            ok = {True: "passed", False: "failed"}.get(r.get("success"), "–")  # type: ignore[arg-type]
        rate = (
            r["tool_error_rate"]
            if "tool_error_rate" in r
            else (r["tool_errors"] / r["tool_calls"] if r["tool_calls"] else None)
        )
        share = r["cached_share"] if "cached_share" in r else (r["cached"] / r["input"] if r["input"] else None)
        rows.append(
            {
                **{k: _shown(k, r[k]) for k in keys},
                "runs": str(r.get("runs", 1)),
                "input": f"{r['input']:,}",
                "cached": "–" if share is None else f"{share:.0%}",
                "cache write": f"{r['cache_write']:,}",
                "output": f"{r['output']:,}",
                "cost USD": "–" if r["cost"] is None else f"{r['cost']:,.2f}",
                "tool errors": "–" if rate is None else f"{rate:.1%} of {r['tool_calls']:,}",
                "compactions": str(r["compactions"]),
                "success": ok,
            }
        )
    return pl.DataFrame(rows) if rows else pl.DataFrame()


def _shown(key: str, value: Any) -> str:
    if value is None:
        return "–"
    text = str(value)
    if key == "project" and len(text) > PROJECT_CHARS:  # the start says whose, the end which repository
        head = PROJECT_CHARS // 4
        return text[:head] + "…" + text[len(text) - (PROJECT_CHARS - head - 1) :]
    return text


def models(con: duckdb.DuckDBPyConnection, prices: PriceTable, selected: bool = False) -> pl.DataFrame:
    """Each model the responses name, the price it matched (the table's name and whether the config or the shipped
    table gave it) and its tokens: what a reader checks before trusting a cost."""
    where = f"WHERE c.conversation_id IN (SELECT conversation_id FROM {SELECTED})" if selected else ""
    df = (
        frame(con, _RESPONSES_SQL.format(where=where))
        .group_by("model")
        .agg(
            pl.col("responses").sum(),
            *(pl.col(t).sum() for t in ("uncached", "cached", "cache_write", "cache_write_1h", "output")),
        )
    )
    hits = [prices.match(m) for m in df["model"]]
    return df.with_columns(
        pl.Series("priced_as", [h[0] if h else None for h in hits], dtype=pl.String),
        pl.Series("price_from", [h[1] if h else None for h in hits], dtype=pl.String),
    ).sort("model", nulls_last=True)


def run(ctx: Context) -> Section:
    prices = table(ctx.cfg.prices)
    rows = runs(ctx.con, prices, selected=True)
    if rows.is_empty():
        return Section.idle(NAME, TITLE, "no conversation selected")
    ctx.con.register("_usage_runs", stream(rows))
    ctx.con.execute("CREATE OR REPLACE TABLE usage_runs AS SELECT * FROM _usage_runs")
    ctx.con.unregister("_usage_runs")
    by_model, by_day = summarize(rows, ["agent", "model"]), summarize(rows, ["day"])
    priced = models(ctx.con, prices, selected=True)
    sec = Section(NAME, TITLE)
    where = f"WHERE c.conversation_id IN (SELECT conversation_id FROM {SELECTED})"
    sec.metrics = _metrics(rows, by_model, prices, unpriced(frame(ctx.con, _RESPONSES_SQL.format(where=where)), prices))
    sec.tables = [
        Table(
            "by_agent_model",
            "Runs per agent and model: tokens (input = all sent; cached = the share "
            "read from the prompt cache), cost in USD, tool errors, compactions, "
            "success rate (95 % Wilson interval)",
            display(by_model),
        ),
        Table("by_day", "Runs per day (UTC, the day a run started)", display(by_day)),
        *(
            [
                Table(
                    "by_project_branch",
                    "Runs per project (the working folder the session ran in, or a "
                    "decision-memory harness's project) and git branch, as the logs name "
                    "them; – where a log names none",
                    display(summarize(rows, ["project", "branch"])),
                )
            ]
            if rows["project"].is_not_null().any() or rows["branch"].is_not_null().any()
            else []
        ),
        Table(
            "prices",
            f"The price each model matched (shipped table of {prices.date}, or [prices] in "
            "the config); a model without one has tokens and no cost",
            priced,
        ),
    ]
    sec.summary = _summary(sec.metrics, prices)
    return sec


def _metrics(
    rows: pl.DataFrame, by_model: pl.DataFrame, prices: PriceTable, missing: list[tuple[str, int]]
) -> dict[str, Any]:
    total = summarize(rows.with_columns(pl.lit("all").alias("agent")), ["agent"]).row(0, named=True)
    m = {
        k: total[k]
        for k in (
            "runs",
            "responses",
            *TOKENS,
            "cached_share",
            "cost",
            "unpriced_runs",
            "tool_calls",
            "tool_errors",
            "tool_error_rate",
            "compactions",
            "graded",
            "success_rate",
        )
    }
    priced = rows.filter((pl.col("responses") > 0) & (pl.col("unpriced") == 0))
    m["priced_runs"], m["priced_cost"] = priced.height, float(priced["cost"].sum())  # the runs with a cost, and theirs
    m["counted_runs"] = rows.filter(pl.col("responses") > 0).height  # the runs whose log records token counts
    m["prices_date"] = prices.date
    m["unpriced_tokens"] = sum(n for _, n in missing)  # the tokens of responses with no cost, and their models
    m["unpriced_models"] = ", ".join(name for name, _ in missing)
    m["by_agent_model"] = {
        f"{r['agent']}/{r['model']}": {
            k: r[k]
            for k in (
                "runs",
                *TOKENS,
                "cost",
                "tool_error_rate",
                "compactions",
                "success_rate",
                "success_low",
                "success_high",
            )
        }
        for r in by_model.iter_rows(named=True)
    }
    return m


def _summary(m: dict[str, Any], prices: PriceTable) -> str:
    at = f"at the prices of {prices.date} (or the config's [prices])"
    runs = "1 run" if m["unpriced_runs"] == 1 else f"{m['unpriced_runs']} runs"
    missing = (
        f"{millions(m['unpriced_tokens'])} tokens of {m['unpriced_models']} unpriced ({runs}: their tokens "
        f"are counted, their cost is not)"
    )
    cost = (
        f"cost ${m['cost']:,.2f} {at}"
        if m["cost"] is not None
        else f"${m['priced_cost']:,.2f} priced {at}; {missing}"
        if m["priced_runs"]
        else f"no cost: {missing}"
    )
    share = (
        f"{m['cached_share']:.0%} of it read from the prompt cache"
        if m["cached_share"] is not None
        else "no cache figure"
    )
    errors = (
        f"{m['tool_errors']:,} of {m['tool_calls']:,} tool calls failed ({m['tool_error_rate']:.1%})"
        if m["tool_calls"]
        else "no tool call"
    )
    graded = f"; {m['graded']} runs have an outcome, {m['success_rate']:.0%} succeeded" if m["graded"] else ""
    if not m["counted_runs"]:
        tokens = "no log records token counts, so no cost"
    else:
        tokens = (
            f"{m['counted_runs']:,} of them with token counts ({m['responses']:,} model responses): "
            f"{m['input']:,} input tokens ({share}), {m['output']:,} output tokens; {cost}"
        )
    compactions = f"{m['compactions']:,} compaction{'' if m['compactions'] == 1 else 's'}"
    return f"{m['runs']:,} runs, {tokens}. {errors}; {compactions}{graded}."


def millions(n: int) -> str:
    """A token count as a reader scans it: 40.9 M, 812 k, 950."""
    return f"{n / 1e6:,.1f} M" if n >= 1_000_000 else f"{n / 1e3:,.0f} k" if n >= 10_000 else f"{n:,}"


def _costs(per_model: pl.DataFrame, prices: PriceTable) -> pl.DataFrame:
    """conversation_id -> cost (None when a response with tokens has no price) and how many such responses."""
    costs = [prices.cost(r["model"], kinds(r)) for r in per_model.iter_rows(named=True)]
    df = per_model.select("conversation_id", "responses").with_columns(pl.Series("cost", costs, dtype=pl.Float64))
    return df.group_by("conversation_id").agg(
        pl.when(pl.col("cost").null_count() == 0).then(pl.col("cost").sum()).alias("cost"),
        pl.col("responses").filter(pl.col("cost").is_null()).sum().alias("unpriced"),
    )


def kinds(r: dict[str, Any]) -> dict[str, int]:
    """The tokens of a row of responses by price kind: the cache writes kept an hour apart from the others."""
    return {
        "input": r["uncached"],
        "cache_read": r["cached"],
        "cache_write": r["cache_write"] - r["cache_write_1h"],
        "cache_write_1h": r["cache_write_1h"],
        "output": r["output"],
    }


def unpriced(per_model: pl.DataFrame, prices: PriceTable) -> list[tuple[str, int]]:
    """(model, tokens) of the responses that have no cost (a model without a price, or a kind of token its price
    lacks), most tokens first: what the headline names."""
    out: dict[str, int] = {}
    for r in per_model.iter_rows(named=True):
        if prices.cost(r["model"], kinds(r)) is None:
            name = r["model"] or "(unnamed model)"
            out[name] = out.get(name, 0) + sum(r[k] for k in ("uncached", "cached", "cache_write", "output"))
    return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))


# A response logged twice (same provider id) is kept in one conversation, the top-level, earliest one, with the
# largest count of each kind any copy gives (a copy may stop at a line written while the response streamed). The
# provider's id is the API request id where the log has one, else the message id: a response its transcript logs
# with both and an OTel export with the request id alone (no raw bodies) is one response
_DEDUP = """
resp AS (
  SELECT u.conversation_id, u.seq, coalesce(u.model, c.model) AS rmodel,
         CASE WHEN coalesce(u.request_id, u.message_id) IS NULL THEN 1 ELSE row_number() OVER w END AS k,
         CASE WHEN coalesce(u.request_id, u.message_id) IS NULL THEN u.input_tokens ELSE max(u.input_tokens) OVER w END AS input_tokens,
         CASE WHEN coalesce(u.request_id, u.message_id) IS NULL THEN u.output_tokens ELSE max(u.output_tokens) OVER w END AS output_tokens,
         CASE WHEN coalesce(u.request_id, u.message_id) IS NULL THEN u.cache_read_input_tokens
              ELSE max(u.cache_read_input_tokens) OVER w END AS cache_read_input_tokens,
         CASE WHEN coalesce(u.request_id, u.message_id) IS NULL THEN u.cache_creation_input_tokens
              ELSE max(u.cache_creation_input_tokens) OVER w END AS cache_creation_input_tokens,
         CASE WHEN coalesce(u.request_id, u.message_id) IS NULL THEN u.cache_creation_1h_input_tokens
              ELSE max(u.cache_creation_1h_input_tokens) OVER w END AS cache_creation_1h_input_tokens
  FROM message_usage u JOIN conversations c USING (conversation_id)
  WINDOW w AS (PARTITION BY coalesce(u.request_id, u.message_id)
               ORDER BY c.parent_conversation_id IS NOT NULL, c.created_at NULLS LAST, u.conversation_id, u.seq
               ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)),
kept AS (SELECT * FROM resp WHERE k = 1)"""

_RESPONSES_SQL = (
    "WITH "
    + _DEDUP
    + """
SELECT u.conversation_id, u.rmodel AS model, count(*) AS responses,
       coalesce(sum(u.input_tokens), 0)::BIGINT AS uncached,
       coalesce(sum(u.cache_read_input_tokens), 0)::BIGINT AS cached,
       coalesce(sum(u.cache_creation_input_tokens), 0)::BIGINT AS cache_write,
       coalesce(sum(least(coalesce(u.cache_creation_1h_input_tokens, 0), coalesce(u.cache_creation_input_tokens, 0))), 0)::BIGINT
         AS cache_write_1h,
       coalesce(sum(u.output_tokens), 0)::BIGINT AS output
FROM kept u JOIN conversations c USING (conversation_id) {where}
GROUP BY ALL ORDER BY 1, 2 NULLS LAST"""
)

_RUNS_SQL = (
    "WITH "
    + _DEDUP
    + """,
tok AS (SELECT conversation_id, count(*) AS responses,
               (coalesce(sum(input_tokens), 0) + coalesce(sum(cache_read_input_tokens), 0)
                + coalesce(sum(cache_creation_input_tokens), 0))::BIGINT AS input,
               coalesce(sum(cache_read_input_tokens), 0)::BIGINT AS cached,
               coalesce(sum(cache_creation_input_tokens), 0)::BIGINT AS cache_write,
               coalesce(sum(output_tokens), 0)::BIGINT AS output,
               mode(rmodel ORDER BY rmodel) AS usage_model,
               list(DISTINCT rmodel) FILTER (WHERE rmodel IS NOT NULL) AS models
        FROM kept GROUP BY 1),
calls AS (SELECT conversation_id, count(*) AS tool_calls, count(*) FILTER (WHERE is_error) AS tool_errors
          FROM tool_calls WHERE position IS NOT NULL GROUP BY 1),
comp AS (SELECT conversation_id, count(*) AS compactions FROM events WHERE kind = 'compaction' GROUP BY 1),
firsts AS (SELECT conversation_id, min(created_at) AS first_at FROM messages GROUP BY 1),
outc AS (SELECT conversation_id, bool_and(success) AS success FROM conversation_outcomes
         WHERE success IS NOT NULL GROUP BY 1)
SELECT c.conversation_id, c.native_id, coalesce(s.format, '?') AS agent,
       CASE WHEN len(tok.models) > 1 THEN array_to_string(list_sort(tok.models), ' + ')
            ELSE coalesce(c.model, tok.usage_model, '?') END AS model,
       coalesce(c.working_dir, c.project) AS project, c.git_branch AS branch,
       CAST(coalesce(c.created_at, firsts.first_at) AS DATE) AS day,
       coalesce(tok.responses, 0)::BIGINT AS responses, coalesce(tok.input, 0)::BIGINT AS input,
       coalesce(tok.cached, 0)::BIGINT AS cached, coalesce(tok.cache_write, 0)::BIGINT AS cache_write,
       coalesce(tok.output, 0)::BIGINT AS output,
       coalesce(calls.tool_calls, 0)::BIGINT AS tool_calls, coalesce(calls.tool_errors, 0)::BIGINT AS tool_errors,
       coalesce(comp.compactions, 0)::BIGINT AS compactions, outc.success
FROM conversations c LEFT JOIN sources s USING (source_id) LEFT JOIN tok USING (conversation_id)
LEFT JOIN calls USING (conversation_id) LEFT JOIN comp USING (conversation_id)
LEFT JOIN firsts USING (conversation_id) LEFT JOIN outc USING (conversation_id)
{where}"""
)


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    lead=2,  # the report leads with what went wrong (failures), then the runs: before the data quality and the digest
    tables=(
        derived.Table(
            "usage_runs", "whole", "per run: agent, model, tokens (input with the cache, cached, output), cost"
        ),
    ),
)
