"""Drift phenomena (docs/definitions.md#drift-phenomena): the five ways long conversations lose the thread, with evidence.

Per conversation each type gets a severity (none / low / high, thresholds in ``[drift]``), the rule that
fired and the positions that prove it; type 4 says "not computed" until the topic analyzer's
``topic_switches`` table exists. Every episode lands in the warehouse table ``drift_findings`` (one row per
episode, plus a 'none' row per conversation and type so a query sees all five), and the worst episode of
each type becomes a report finding. Secondary signals: echo rate and continue-fatigue.

1 tool_result_crowding  asst_tool_ratio low while a result exceeds tool_result.summarize_bytes; evidence:
                        the largest results
2 tool_dispersion       one user request reading many distinct targets, or one very wide round, when that
                        request is an outlier among the corpus's requests or the user stepped in after it
                        (``forensics.analyzers.drift.corpus``): a long run after one request is an agent's normal work
3 compaction_topic_loss the compaction audit's losses and rediscovery signs (``forensics.analyzers.drift.rediscovery``)
4 topic_interleave      the lag after a topic switch (``forensics.analyzers.drift.interleave``)
5 no_focus              pure tool echo *and* continue-nags, as the seed describes it: an API agent's tool
                        calls without text are its normal way of working, not a lack of focus

Every finding also says where its figure lies in the corpus (percentile), and a kind that fires on most
conversations is reported once as a property of the corpus (``Section.norms``).
"""

from __future__ import annotations

import math
from typing import Any, cast

import duckdb
import polars as pl

from forensics.analyzers import reuse
from forensics.analyzers.base import Chart, Context, Finding, Section, Table
from forensics.analyzers.compaction.settings import CompactionSettings
from forensics.analyzers.compression.settings import ToolResultSettings
from forensics.analyzers.drift import interleave, norms, rediscovery
from forensics.analyzers.drift.corpus import Distribution, interventions
from forensics.analyzers.drift.settings import DriftSettings
from forensics.analyzers.facts import arrow
from forensics.config import Config
from forensics.kernel.selection import SELECTED, Selection
from forensics.text.agents import agent_name
from forensics.warehouse import derived
from forensics.warehouse.queries import load_query

NAME = "drift"
TITLE = "Drift phenomena"
FACTS = (
    "baseline",
    "drift_context",
    "tool_turns",
    "drift_interventions",
    "drift_rediscovery",
    "drift_lags",
    "drift_nags",
    "drift_echo",
    "drift_kinds",
)  # what run() reads (``analyzers.facts``)
KINDS = ["tool_result_crowding", "tool_dispersion", "compaction_topic_loss", "topic_interleave", "no_focus"]
RANK = {"none": 0, "low": 1, "high": 2}
EPISODE_SCHEMA = pl.Schema(
    {
        "conversation_id": pl.String(),
        "sign": pl.String(),
        "severity": pl.String(),
        "at": pl.Int32(),
        "positions": pl.List(pl.Int32),
        "detail": pl.String(),
        "compaction_position": pl.Int32(),
        "compaction_logged": pl.Boolean(),
    }
)  # type 3's rows
EVIDENCE_MAX = 12
CHART_ROWS = 30
MIN_CORPUS = 10  # fewer conversations than this are no corpus to call a kind its norm
LARGEST = 5
CROWDING_MIN_TOKENS = 16_000  # a context smaller than this (chars / 4) holds room to spare: nothing is crowded out
TOOL_TEXT = "(role = 'tool' OR origin = 'tool_result')"  # a tool's output, on the tool role or carried on the user's
TABLE = "drift_findings"
COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    "conversation_id": pl.String(),
    "native_id": pl.String(),
    "drift_type": pl.Int32(),
    "kind": pl.String(),
    "severity": pl.String(),
    "rule": pl.String(),
    "value": pl.Float64(),
    "positions": pl.List(pl.Int32),
    "detail": pl.String(),
    "follows_compaction": pl.Boolean(),
}


def _sev(value: float | None, low: float, high: float, below: bool = False) -> str:
    if value is None:
        return "none"
    if below:
        return "high" if value <= high else "low" if value <= low else "none"
    return "high" if value >= high else "low" if value >= low else "none"


def run(ctx: Context) -> Section:
    d, big = DriftSettings.of(ctx.cfg), int(ToolResultSettings.of(ctx.cfg).summarize_bytes)
    base = ctx.fact("baseline")
    natives = dict(zip(base["conversation_id"].to_list(), base["native_id"].to_list()))
    kinds = {
        r["conversation_id"]: norms.kind_of(r["format"], r["sub_agent"])
        for r in ctx.fact("drift_kinds").iter_rows(named=True)
    }
    eps: list[dict[str, Any]] = []
    eps += _crowding(ctx, kinds, d, big)
    eps += _dispersion(ctx, d)
    eps += _rediscovery(ctx, natives)
    computed = interleave.available(ctx.con)
    if computed:
        eps += _interleave(ctx, d, natives, kinds)
    signals = _signals(ctx, base)
    eps += _no_focus(signals, kinds, d)
    eps, ways = _ways_of_working(eps, kinds)
    worst = _worst(eps)
    _store(ctx, eps, worst, natives, computed)
    sec = _section(ctx, base, eps, worst, signals, computed)
    sec.norms = {**_norms(base, worst, d, big, kinds), **ways}
    return sec


def _ep(
    cid: str,
    native: str | None,
    kind: str,
    severity: str,
    rule: str,
    value: float | None,
    positions: list[int],
    detail: str = "",
    follows: bool | None = None,
    percentile: float | None = None,
    among: str = "",
    said: str = "",
) -> dict[str, Any]:
    """An episode: ``rule`` in the rule's own terms (kept in drift_findings, one click away in the report), ``said``
    the same in a reader's words (the finding's line), ``detail`` what the episode shows (the finding's summary)."""
    return {
        "conversation_id": cid,
        "native_id": native,
        "drift_type": KINDS.index(kind) + 1,
        "kind": kind,
        "severity": severity,
        "rule": rule,
        "value": value,
        "positions": sorted(set(positions))[:EVIDENCE_MAX],
        "detail": detail,
        "follows_compaction": follows,
        "percentile": percentile,
        "among": among,
        "said": said,
    }


def context(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Per conversation, what its context held: the assistant's text and what it wrote through tool arguments
    (a file written with Write, an Edit's new text, a patch: its output too), the tools' output (tool messages
    and tool output carried on the user role), everything (chars), its largest tool outputs and how many exceed
    tool_result.summarize_bytes."""
    return arrow(
        con,
        f"""
        WITH args AS (SELECT conversation_id, sum(length(arguments))::BIGINT AS chars FROM tool_calls
                      JOIN {SELECTED} USING (conversation_id) WHERE position IS NOT NULL GROUP BY 1)
        SELECT conversation_id,
               (coalesce(sum(content_chars) FILTER (WHERE role = 'assistant'), 0) + coalesce(any_value(a.chars), 0))
                   ::BIGINT AS written_chars,
               coalesce(sum(content_chars) FILTER (WHERE {TOOL_TEXT}), 0)::BIGINT AS tool_chars,
               (coalesce(sum(content_chars), 0) + coalesce(any_value(a.chars), 0))::BIGINT AS context_chars,
               list(position ORDER BY content_bytes DESC, position) FILTER (WHERE {TOOL_TEXT})[1:?] AS top,
               count(*) FILTER (WHERE {TOOL_TEXT} AND content_bytes > ?) AS oversized
        FROM messages JOIN {SELECTED} USING (conversation_id) LEFT JOIN args a USING (conversation_id)
        WHERE on_main_path GROUP BY 1""",
        [LARGEST, int(ToolResultSettings.of(cfg).summarize_bytes)],
    )


def agent_kinds(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Per conversation, the kind of agent whose norms it is held against (``norms.kind_of``)."""
    return arrow(
        con,
        f"""
        SELECT c.conversation_id, s.format, c.model,
               c.parent_conversation_id IS NOT NULL OR c.parent_native_id IS NOT NULL AS sub_agent
        FROM conversations c JOIN {SELECTED} USING (conversation_id) LEFT JOIN sources s USING (source_id)""",
    )


def tool_turns(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """The named query ``tool_turns`` for the selected conversations."""
    with reuse.selected_only(con, ("messages", "tool_calls")):
        return arrow(
            con,
            f"SELECT * FROM ({load_query('tool_turns', __package__).sql}) q "
            f"WHERE q.conversation_id IN (SELECT conversation_id FROM {SELECTED})",
        )


def stepped_in(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    return interventions(con)


def rediscovered(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Type 3's episodes, read from the compaction audit of the conversations on ``con`` (sel_conversations)."""
    return pl.DataFrame(rediscovery.episodes(Context(con, cfg, Selection())), schema=EPISODE_SCHEMA)


def lags(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Type 4's lags (``forensics.analyzers.drift.interleave``); none until the topic analyzer wrote topic_switches."""
    found = interleave.lags(con) if interleave.available(con) else []
    return pl.DataFrame([vars(lag) for lag in found], schema=interleave.LAG_SCHEMA)


def _crowding(ctx: Context, kinds: dict[str, str], d: Any, big: int) -> list[dict[str, Any]]:
    """Tool output dominates a context of real size: (what the assistant wrote, in text and through tool arguments)
    / (tool output) at or below the seed's ratios, with results over tool_result.summarize_bytes, in a context of
    at least CROWDING_MIN_TOKENS; where the agent's kind has a norm, only beyond its fence (by -log10 ratio)."""
    rows = [
        r | {"ratio": r["written_chars"] / r["tool_chars"] if r["tool_chars"] else None}
        for r in ctx.fact("drift_context").iter_rows(named=True)
    ]
    model = {r["conversation_id"]: r["model"] for r in ctx.fact("drift_kinds").iter_rows(named=True)}

    def far(r: dict[str, Any]) -> float | None:
        return -math.log10(max(r["ratio"], 1e-6)) if r["ratio"] is not None else None

    fences = norms.fit(
        [
            (kinds.get(r["conversation_id"], ""), model.get(r["conversation_id"]), r["conversation_id"], far(r))
            for r in rows
        ],
        "conversations",
    )
    natives = dict(zip(ctx.fact("baseline")["conversation_id"], ctx.fact("baseline")["native_id"]))
    spread = _within([r | {"far": far(r)} for r in rows], lambda r: kinds.get(r["conversation_id"], ""), "far")
    out = []
    for r in rows:
        ratio, cid = r["ratio"], r["conversation_id"]
        sev = _sev(ratio, d.crowding_ratio_low, d.crowding_ratio_high, below=True) if r["oversized"] else "none"
        tokens = r["context_chars"] // 4
        if sev == "none" or tokens < CROWDING_MIN_TOKENS:
            continue
        norm = fences[(kinds.get(cid, ""), model.get(cid))]
        f = far(r)  # set: a ratio was graded above
        usual = (
            norm.fence is not None and f is not None and f <= norm.fence
        )  # as crowded as this kind of agent usually is
        held = norm.text("the seed's ratios apply")
        limit = d.crowding_ratio_high if sev == "high" else d.crowding_ratio_low
        said = (
            f"more tool output than {norm.agent} usually has ({norm.learned()})"
            if norm.fence is not None
            else norm.said(
                "the usual share of tool output",
                f"the default limit applies (tool output at {1 / (1 + limit):.0%} or more, in a context of "
                f"~{tokens:,} tokens)",
            )
        )
        out.append(
            _ep(
                cid,
                natives.get(cid),
                "tool_result_crowding",
                sev,
                f"output/tool ratio {ratio:.2f} ≤ {d.crowding_ratio_high if sev == 'high' else d.crowding_ratio_low}"
                f" with {r['oversized']} results > {big} bytes in a context of ~{tokens:,} tokens ({held})",
                ratio,
                r["top"],
                f"tool output is {1 / (1 + ratio):.0%} of the assistant's writing (text and tool arguments) and "
                "tool output; largest results first",
                percentile=spread[kinds.get(cid, "")].standing(far(r)),
                among=f"{len(spread[kinds.get(cid, '')].values)} conversations with tool output of "
                f"{agent_name(kinds.get(cid, ''))}",
                said=said,
            )
            | {"usual": usual}
        )
    return out


def _dispersion(ctx: Context, d: Any) -> list[dict[str, Any]]:
    """A wide request crossing the seed's thresholds counts when it is an outlier among the requests of its own
    kind of agent (Tukey's fence, ``norms.fit``) or when the person stepped in after it; a kind with too few
    requests has no fence, and then only a step-in counts."""
    turns = ctx.fact("tool_turns")
    rows = list(turns.iter_rows(named=True))

    def kind(r: dict[str, Any]) -> str:
        return norms.kind_of(r["format"], r["sub_agent"])

    fences = {
        "targets": norms.fit(
            [(kind(r), r["model"], r["conversation_id"], r["distinct_targets"]) for r in rows],
            "requests with tool calls",
        ),
        "widest": norms.fit(
            [(kind(r), r["model"], r["conversation_id"], r["widest_round"]) for r in rows], "requests with tool calls"
        ),
    }
    spread = {col: _within(rows, kind, col) for col in ("distinct_targets", "widest_round")}
    stepped = {
        (r["conversation_id"], r["position"]): (r["next_position"], r["why"])
        for r in ctx.fact("drift_interventions").iter_rows(named=True)
    }
    out = []
    for r in rows:
        st = _sev(r["distinct_targets"], d.dispersion_targets_low, d.dispersion_targets_high)
        sp = _sev(r["widest_round"], d.dispersion_parallel_low, d.dispersion_parallel_high)
        by_targets = RANK[st] >= RANK[sp]
        sev = st if by_targets else sp
        if sev == "none":
            continue
        value = r["distinct_targets"] if by_targets else r["widest_round"]
        norm = fences["targets" if by_targets else "widest"][(kind(r), r["model"])]
        step = stepped.get((r["conversation_id"], r["user_position"]))
        seed = norm.fence is None and r["format"] in norms.SEED_FORMATS and sev == "high"
        outlier = norm.fence is not None and value > norm.fence
        if not (outlier or seed or step):
            continue  # within what this kind of agent's requests usually take: its normal work
        rule = (
            f"{r['distinct_targets']} distinct targets for the request at [{r['user_position']}]"
            if by_targets
            else f"{r['widest_round']} parallel calls in one message"
        )
        why = [f"above {norm.kind}'s outlier fence {norm.fence:g}"] if outlier else []
        why += ["at the seed's high threshold for the seed harness"] if seed else []
        why += [f"the person stepped in at [{step[0]}] ({step[1]})"] if step else []
        held = norm.text(
            "the seed's high threshold for the seed harness's logs; for other agents only a request "
            "the person stepped in after counts"
        )
        said = _dispersion_said(r, by_targets, sev, d, norm, seed, outlier, step)
        mine = spread["distinct_targets" if by_targets else "widest_round"][kind(r)]
        positions = (
            [int(x) for x in r["round_positions"].split(",")]
            if by_targets and r["round_positions"]
            else [r["widest_round_position"]]
        )
        out.append(
            _ep(
                r["conversation_id"],
                r["native_id"],
                "tool_dispersion",
                sev,
                f"{rule}: {' and '.join(why)} ({held})",
                float(value),
                positions + ([step[0]] if step else []),
                f"{r['calls']} calls in {r['rounds']} rounds before the answer",
                percentile=mine.standing(value),
                among=f"{len(mine.values)} requests with tool calls of {agent_name(kind(r))}",
                said=said,
            )
        )
    return out


STEPPED = {"a continue-nag": "the person had to say “continue”"}  # why -> how a reader says it


def _dispersion_said(
    r: dict[str, Any], by_targets: bool, sev: str, d: Any, norm: norms.Norm, seed: bool, outlier: bool, step: Any
) -> str:
    """A wide request in a reader's words: how wide, and why it counts (its agent's own runs, the default limit, or
    the person stepping in), e.g. "14 distinct targets for the request at [25]: Codex CLI: only 1 conversation
    (5 needed) to learn the usual width of a request, so the default limit of 10 targets applies"."""
    if by_targets:
        what = f"{r['distinct_targets']} distinct targets for the request at [{r['user_position']}]"
        limit, unit = (d.dispersion_targets_high if sev == "high" else d.dispersion_targets_low), "targets"
    else:
        what = f"{r['widest_round']} parallel calls in one message"
        limit, unit = (d.dispersion_parallel_high if sev == "high" else d.dispersion_parallel_low), "parallel calls"
    stepped = ""
    if step:
        stepped = f"the person stepped in after it at [{step[0]}] ({STEPPED.get(step[1], step[1])})"
    why = []
    if outlier:
        why.append(f"wider than the usual request of {norm.agent} ({norm.learned()}: at most {norm.fence:g} {unit})")
    elif seed:
        why.append(norm.said("the usual width of a request", f"the default limit of {limit:g} {unit} applies"))
    elif norm.fence is None:
        why.append(norm.said("the usual width of a request", f"it counts only because {stepped}"))
        stepped = ""
    if stepped:
        why.append(stepped)
    return f"{what}: {'; '.join(why)}"


def _within(rows: list[dict[str, Any]], kind: Any, col: str) -> dict[str, Distribution]:
    """Per kind of agent, the distribution of ``col`` over its rows: where a finding stands among its own kind."""
    by: dict[str, list[float | None]] = {}
    for r in rows:
        by.setdefault(kind(r), []).append(r[col])
    return {k: Distribution(v) for k, v in by.items()}


def _rediscovery(ctx: Context, natives: dict[str, str]) -> list[dict[str, Any]]:
    rules = {
        "not_found_then_search": "a call failed on a missing path, then a search looked for it",
        "dropped_then_needed": "a logged compaction dropped it (summary and kept messages), then it was needed",
        "reread_after_compaction_budget": f"re-read after > {CompactionSettings.of(ctx.cfg).max_tokens} estimated tokens, the "
        "budget at which the seed harness compacts without logging it",
    }
    said_rules = {
        "not_found_then_search": "a call failed on a missing path, then the agent searched for it",
        "dropped_then_needed": "the log's context compaction dropped it, then the agent needed it again",
        "reread_after_compaction_budget": "read again after the context grew past the size at which the harness "
        f"compacts it (~{CompactionSettings.of(ctx.cfg).max_tokens:,} tokens) without logging it",
    }
    out = []
    for r in ctx.fact("drift_rediscovery").iter_rows(named=True):
        follows = None if not r["compaction_logged"] else r["compaction_position"] is not None
        where = (
            "no compaction is marked in this log"
            if follows is None
            else f"after the compaction at [{r['compaction_position']}]"
            if follows
            else "before any logged compaction"
        )
        out.append(
            _ep(
                r["conversation_id"],
                natives.get(r["conversation_id"]),
                "compaction_topic_loss",
                r["severity"],
                f"{rules[r['sign']]} (an event, held against no norm)",
                None,
                r["positions"],
                f"{r['detail']}; {where}",
                follows,
                said=said_rules[r["sign"]],
            )
        )
    return out


def _interleave(ctx: Context, d: Any, natives: dict[str, str], kinds: dict[str, str]) -> list[dict[str, Any]]:
    """The lag after a switch, at the seed's lag thresholds (messages on the old topic mean the same for every
    agent); where it stands is said among the switches of its own kind of agent (no lag: 0), never a pool."""
    out = []
    lags = [interleave.Lag(**r) for r in ctx.fact("drift_lags").iter_rows(named=True)]
    switched = ctx.con.execute(
        f"SELECT conversation_id, count(*) FROM {interleave.SWITCHES} JOIN sel_conversations "
        "USING (conversation_id) GROUP BY 1"
    ).fetchall()
    switches: dict[str, int] = {}
    for cid, n in switched:
        switches[kinds.get(cid, "")] = switches.get(kinds.get(cid, ""), 0) + n
    lagged: dict[str, list[float]] = {}
    for lag in lags:
        lagged.setdefault(kinds.get(lag.conversation_id, ""), []).append(float(lag.messages))
    population = {k: Distribution(v + [0.0] * max(0, switches.get(k, 0) - len(v))) for k, v in lagged.items()}
    for lag in lags:
        sev = _sev(lag.messages, d.interleave_lag_low, d.interleave_lag_high)
        kind = kinds.get(lag.conversation_id, "")
        if sev != "none":
            out.append(
                _ep(
                    lag.conversation_id,
                    natives.get(lag.conversation_id),
                    "topic_interleave",
                    sev,
                    f"{lag.messages} messages ([{lag.first}]–[{lag.last}]) on the old topic after the switch at "
                    f"[{lag.switch}] (the seed's lag thresholds: a lag in messages means the same for every agent)",
                    float(lag.messages),
                    lag.old_rounds,
                    "old-topic targets: " + ", ".join(lag.old_targets[:6]),
                    percentile=population[kind].standing(lag.messages),
                    among=f"{switches.get(kind, 0)} topic switches of {agent_name(kind)}",
                    said=f"{lag.messages} messages stayed on the old topic after the switch at [{lag.switch}] (the "
                    f"limit, {d.interleave_lag_high if sev == 'high' else d.interleave_lag_low:g} messages, is the "
                    "same for every agent)",
                )
            )
    return out


def nags(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """The person's continue-nags (docs/definitions.md#whose-turn-it-is: a harness's "Please continue" is none) with their positions, and the
    tool calls in the turn before each (mean)."""
    return arrow(
        con,
        f"""
        WITH m AS (
            SELECT conversation_id, position, role, tool_call_count,
                   role = 'user' AND origin = 'person' AND list_contains(coalesce(getvariable(
                       'baseline_continue_words'), ['继续', 'continue', 'go on', '继续吧']), trimmed_text) AS nag,
                   -- the person's messages strictly before this one (a running sum: linear, unlike a filtered frame)
                   sum((role = 'user' AND origin = 'person')::INTEGER) OVER (PARTITION BY conversation_id ORDER BY
                       position ROWS UNBOUNDED PRECEDING) - (role = 'user' AND origin = 'person')::INTEGER AS turn
            FROM messages JOIN {SELECTED} USING (conversation_id) WHERE on_main_path
        ),
        calls AS (SELECT conversation_id, turn, sum(tool_call_count) AS calls FROM m GROUP BY 1, 2)
        SELECT m.conversation_id, list(m.position ORDER BY m.position) AS nag_positions, avg(coalesce(c.calls, 0))
               AS calls_before_nag
        FROM m LEFT JOIN calls c ON c.conversation_id = m.conversation_id AND c.turn = m.turn
        WHERE m.nag GROUP BY 1""",
    )


def echo(con: duckdb.DuckDBPyConnection, cfg: Config) -> pl.DataFrame:
    """Positions of the pure tool-echo messages (assistant, blank, with tool calls)."""
    return arrow(
        con,
        "SELECT conversation_id, list(position ORDER BY position) AS echo_positions FROM messages "
        f"JOIN {SELECTED} USING (conversation_id) WHERE on_main_path AND role = 'assistant' "
        "AND blank AND tool_call_count >= 1 GROUP BY 1",
    )


def _signals(ctx: Context, base: pl.DataFrame) -> pl.DataFrame:
    """Echo rate, continue-nags with their positions, continue-fatigue, tool calls in the turn before a nag."""
    return (
        base.select("conversation_id", "native_id", "user", pl.col("empty_assistant_share").alias("echo_rate"))
        .join(ctx.fact("drift_nags"), on="conversation_id", how="left")
        .join(ctx.fact("drift_echo"), on="conversation_id", how="left")
        .with_columns(continue_nags=pl.col("nag_positions").list.len().fill_null(0).cast(pl.Int64))
        .with_columns(continue_fatigue=pl.when(pl.col("user") > 0).then(pl.col("continue_nags") / pl.col("user")))
    )


def _no_focus(signals: pl.DataFrame, kinds: dict[str, str], d: Any) -> list[dict[str, Any]]:
    """Echo *and* nagging (the seed's type 5): the lower of the two severities. The echo rate is held against its
    kind of agent where that kind has a norm (an API agent's calls without text are its way of working)."""
    rows = list(signals.iter_rows(named=True))
    fences = norms.fit(
        [(kinds.get(r["conversation_id"], ""), None, r["conversation_id"], r["echo_rate"]) for r in rows],
        "conversations",
    )
    spread = _within(rows, lambda r: kinds.get(r["conversation_id"], ""), "echo_rate")
    out = []
    for r in rows:
        k = kinds.get(r["conversation_id"], "")
        norm = fences.get((k, None))
        se = _sev(r["echo_rate"], d.echo_rate_low, d.echo_rate_high)
        if norm is not None and norm.fence is not None and r["echo_rate"] is not None and r["echo_rate"] <= norm.fence:
            se = "none"  # this kind of agent echoes as much as a rule
        sn = _sev(r["continue_nags"], d.continue_nags_low, d.continue_nags_high)
        sev = min(se, sn, key=RANK.__getitem__)
        if sev == "none":
            continue
        rate = "–" if r["echo_rate"] is None else f"{r['echo_rate']:.0%}"
        held = norm.text("the seed's echo rates apply") if norm else "no echo rate"
        nagged = f"the person said “continue” {_times(r['continue_nags'])}"
        limit = d.echo_rate_high if se == "high" else d.echo_rate_low
        quiet = (
            "tool calls without a word"
            if r["echo_rate"] is None
            else f"{rate} of its replies were tool calls without a word"
        )
        said = f"{quiet} and {nagged}" + (
            ""
            if norm is None
            else f"; more than {norm.agent} usually has ({norm.learned()})"
            if norm.fence is not None
            else "; "
            + norm.said("the usual share of tool calls without a word", f"the default limit of {limit:.0%} applies")
        )
        out.append(
            _ep(
                r["conversation_id"],
                r["native_id"],
                "no_focus",
                sev,
                f"echo rate {rate}, {r['continue_nags']} continue-nags from the person ({held})",
                r["echo_rate"],
                (r["nag_positions"] or []) + (r["echo_positions"] or [])[: EVIDENCE_MAX // 2],
                "the person's “continue” turns first, then the first replies that were tool calls without a word",
                percentile=spread[k].standing(r["echo_rate"]),
                among=f"{len(spread[k].values)} conversations of {agent_name(k)} by their share of replies without a word",
                said=said,
            )
        )
    return out


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def _ways_of_working(eps: list[dict[str, Any]], kinds: dict[str, str]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """A drift kind flagged in most conversations of one agent is how that agent works: one norm line each
    (``<drift kind>:<agent>``), and its episodes leave the findings (``norms.agents_where_most``). An episode within
    its agent's norm (``usual``) counts towards that and is never a finding itself."""
    flagged: dict[str, dict[str, set[str]]] = {}
    for e in eps:
        if e["severity"] != "none":
            flagged.setdefault(e["kind"], {}).setdefault(kinds.get(e["conversation_id"], ""), set()).add(
                e["conversation_id"]
            )
    lines, dropped = {}, set()
    for kind, by_agent in flagged.items():
        for agent, (n, of) in norms.agents_where_most(by_agent, kinds).items():
            lines[f"{kind}:{agent}"] = (
                f"{kind.replace('_', ' ')} in {n} of {of} conversations of {agent_name(agent)}: this agent's "
                "way of working, not a finding per conversation"
            )
            dropped.add((kind, agent))
    return [
        e for e in eps if (e["kind"], kinds.get(e["conversation_id"], "")) not in dropped and not e.get("usual")
    ], lines


def _worst(eps: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (conversation, kind) the episode to show: highest severity, then largest value, then earliest."""
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for e in eps:
        key = (e["conversation_id"], e["kind"])
        cur = best.get(key)
        rank = (RANK[e["severity"]], e["value"] or 0, -(e["positions"][0] if e["positions"] else 0))
        if cur is None or rank > (
            RANK[cur["severity"]],
            cur["value"] or 0,
            -(cur["positions"][0] if cur["positions"] else 0),
        ):
            best[key] = e
    return best


def _store(
    ctx: Context,
    eps: list[dict[str, Any]],
    worst: dict[tuple[str, str], dict[str, Any]],
    natives: dict[str, str],
    computed: bool,
) -> None:
    rows = list(eps)
    for cid, native in natives.items():
        for kind in KINDS:
            if (cid, kind) not in worst:
                sev = "not computed" if kind == "topic_interleave" and not computed else "none"
                rows.append(_ep(cid, native, kind, sev, "", None, []))
    derived.replace_rows(ctx.con, TABLE, pl.DataFrame([{k: r[k] for k in COLUMNS} for r in rows], schema=COLUMNS))


def _section(
    ctx: Context,
    base: pl.DataFrame,
    eps: list[dict[str, Any]],
    worst: dict[tuple[str, str], dict[str, Any]],
    signals: pl.DataFrame,
    computed: bool,
) -> Section:
    def sev(cid: str, kind: str) -> str:
        if kind == "topic_interleave" and not computed:
            return "not computed"
        return worst[(cid, kind)]["severity"] if (cid, kind) in worst else "none"

    sig = {r["conversation_id"]: r for r in signals.iter_rows(named=True)}
    convs = {}
    for cid in base["conversation_id"].to_list():
        s = sig[cid]
        convs[cid] = {
            "native_id": s["native_id"],
            **{k: sev(cid, k) for k in KINDS},
            "echo_rate": s["echo_rate"],
            "continue_nags": s["continue_nags"],
            "continue_fatigue": s["continue_fatigue"],
            "calls_before_nag": s["calls_before_nag"],
        }
    counts = {k: {lvl: sum(1 for c in convs.values() if c[k] == lvl) for lvl in ("low", "high")} for k in KINDS}

    def mean(col: str) -> float | None:
        return float(cast(float, signals[col].drop_nulls().mean())) if signals[col].drop_nulls().len() else None

    metrics = {
        "interleave_computed": computed,
        "episodes": len(eps),
        "conversations_flagged": {k: counts[k]["low"] + counts[k]["high"] for k in KINDS},
        "conversations_high": {k: counts[k]["high"] for k in KINDS},
        "means": {
            "echo_rate": mean("echo_rate"),
            "continue_fatigue": mean("continue_fatigue"),
            "continue_nags": mean("continue_nags"),
        },
        "conversations": convs,
    }
    grid = pl.DataFrame(
        [
            {
                "conversation": ctx.names[cid],
                **{k: c[k] for k in KINDS},
                "echo_rate": c["echo_rate"],
                "continue_nags": c["continue_nags"],
            }
            for cid, c in convs.items()
        ],
        schema={
            "conversation": pl.String(),
            **{k: pl.String for k in KINDS},
            "echo_rate": pl.Float64(),
            "continue_nags": pl.Int64(),
        },
    )
    grid = grid.sort(pl.sum_horizontal([pl.col(k).replace_strict(RANK, default=0) for k in KINDS]), descending=True)
    findings = [
        Finding(
            e["kind"],
            e["severity"],
            e["conversation_id"],
            e["native_id"],
            e["positions"],
            (e["detail"] or e["rule"]),
            e["rule"],
            e["value"],
            e["percentile"],
            e["among"],
            e["said"],
        )
        for e in sorted(worst.values(), key=lambda e: (-RANK[e["severity"]], e["native_id"] or "", e["kind"]))
    ]
    sec = Section(
        NAME,
        TITLE,
        metrics=metrics,
        findings=findings,
        tables=[Table("severity", "Severity per conversation and drift type", grid)],
    )
    flagged = {k: counts[k]["low"] + counts[k]["high"] for k in KINDS}
    sec.summary = (
        f"{base.height} conversations: "
        + ", ".join(
            f"{k.replace('_', ' ')} in {n}"
            for k, n in flagged.items()
            if not (k == "topic_interleave" and not computed)
        )
        + "."
        + (
            ""
            if computed
            else " Multi-topic interleave is not computed: it needs the topic analyzer's topic_switches table."
        )
    )
    if findings:
        sec.charts.append(
            Chart(
                "severity",
                "Drift severity per conversation",
                {"kinds": KINDS, "rows": grid.head(CHART_ROWS).select("conversation", *KINDS).to_dicts()},
            )
        )
    return sec


def _norms(
    base: pl.DataFrame, worst: dict[tuple[str, str], dict[str, Any]], d: Any, big: int, kinds: dict[str, str]
) -> dict[str, str]:
    """What is true of this corpus as a whole, one line each: a kind flagged in most conversations, and per kind of
    agent an echo rate that is its own way of working: over its assistant turns and in most of its conversations (the
    seed's chat assistant had 36-62 %; an API agent more; never a rate pooled over unlike agents)."""
    n = base.height
    flagged = {k: sum(1 for (_, kind), e in worst.items() if kind == k and e["severity"] != "none") for k in KINDS}
    out: dict[str, str] = {}
    per = base.with_columns(agent=pl.col("conversation_id").replace_strict(kinds, default=""))
    for agent, rows in sorted(per.group_by("agent"), key=lambda g: str(g[0][0])):
        assistant = int(rows["assistant"].sum() or 0)
        echo = int(rows["empty_assistant"].sum() or 0) / assistant if assistant else None
        rated = rows["empty_assistant_share"].drop_nulls()
        at = int((rated >= d.echo_rate_low).sum())
        if (
            rated.len() >= norms.MIN_AGENT_CONVERSATIONS
            and echo is not None
            and echo >= d.echo_rate_low
            and at > rated.len() / 2
        ):  # most of its conversations, too
            out[f"echo_rate:{agent[0]}"] = (
                f"{agent_name(str(agent[0]))}: {echo:.0%} of the replies are tool calls without a word ({at} of "
                f"{rated.len()} conversations at {d.echo_rate_low:.0%} or more), the way this agent works"
            )
    if n < MIN_CORPUS:
        return out
    most = {k for k, c in flagged.items() if c > n / 2}
    ratio = base["asst_tool_ratio"].drop_nulls()
    texts = {
        "tool_result_crowding": lambda c: (
            f"tool output crowds the context in most conversations here: in {c} of {n} the assistant wrote at most "
            f"{d.crowding_ratio_low:g} times as much as its tools returned, with results over {big:,} bytes (median "
            f"{cast(float, ratio.median()) if ratio.len() else float('nan'):.2f})"
        ),
        "tool_dispersion": lambda c: f"wide tool runs are this corpus's way of working: {c} of {n} conversations",
        "no_focus": lambda c: f"echo with continue-nags in {c} of {n} conversations",
        "compaction_topic_loss": lambda c: f"re-discovery after compaction in {c} of {n} conversations",
        "topic_interleave": lambda c: f"the old topic lingers after a switch in {c} of {n} conversations",
    }
    out.update({k: texts[k](flagged[k]) for k in KINDS if k in most})
    return out
