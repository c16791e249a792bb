"""Outcomes (docs/outcomes.md#where-outcomes-come-from): which runs failed, whether the findings tell them apart, and whether the report's
*Worst conversations* ranking points at the failed runs better than trivial rankings do.

Read from ``conversation_outcomes`` over the selected conversations that have one. Per agent (the format
that read the run) and model: runs and success rate with a 95 % Wilson interval. Per finding kind of the
analyzers that ran before this one: the share of failed and of passed runs with at least one finding of
that kind, and the lift (failed share / passed share) with a 95 % interval (Katz's log method; half a run
added to every cell when one is empty), or where tasks repeat the lift within task (Mantel–Haenszel over the
tasks with both outcomes, ``failures.contrast``); a kind whose interval holds 1 does not separate the runs, and
says so. Per-conversation measures (messages, tool calls, tool errors, repeated calls) get the AUC with which
they rank failed runs above passed ones, and so does the digest's worst-conversation score: beside the
trivial rankings (by length, by tool calls; random is 0.5), a ranking that does not beat them is reported
as such.

Text that reveals the grade to the agent is excluded from all of it, and counted: a run's messages from
the first one on that says the answer or submission was wrong (MINT's "Your answer is wrong.", Inspect's
basic_agent "Your submission was incorrect") are not measured, and a finding citing only such messages is
not counted. Otherwise a finding that spots "wrong" would predict failure for a trivial reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from forensics.analyzers.base import Context, Finding, Section, Table
from forensics.analyzers.declare import Analyzer
from forensics.analyzers.outcomes_work import project_work
from forensics.analyzers.signature import (
    BAD_ENDS,
    GRADE_REVEALING,
    GRADE_REVEALING_ENDS,
    Msg,
    ended,
    errors,
    handed_in,
    messages,
)

NAME = "outcomes"
TITLE = "Outcomes: which runs failed, and what the failed ones did differently"
Z = 1.959964  # 95 %
MEASURES = {
    "messages": "messages",
    "tool_calls": "tool calls",
    "tool_errors": "tool errors",
    "repeated_calls": "repeated calls (same tool and arguments)",
    "assistant_chars": "characters the agent wrote",
}


def wilson(k: int, n: int) -> tuple[float, float]:
    """95 % Wilson score interval of k successes in n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre, half = p + Z * Z / (2 * n), Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + Z * Z / n)), min(1.0, (centre + half) / (1 + Z * Z / n))


def lift(a: int, n1: int, b: int, n2: int) -> tuple[float, float, float]:
    """(ratio, low, high): the share a/n1 over b/n2 with a 95 % log-method interval."""
    if 0 in (a, b) or a == n1 or b == n2:
        a, b, n1, n2 = a + 0.5, b + 0.5, n1 + 1, n2 + 1  # type: ignore[assignment]
    r = (a / n1) / (b / n2)
    se = math.sqrt(1 / a - 1 / n1 + 1 / b - 1 / n2)
    return r, r * math.exp(-Z * se), r * math.exp(Z * se)


def auc(scores: list[float], failed: list[bool]) -> float | None:
    """Probability that a failed run scores above a passed one (ties count half); None without both."""
    pos, neg = sum(failed), len(failed) - sum(failed)
    if not pos or not neg:
        return None
    ranks = pl.Series(scores).rank("average").to_list()
    return float((sum(r for r, f in zip(ranks, failed) if f) - pos * (pos + 1) / 2) / (pos * neg))


def auc_interval(a: float, pos: int, neg: int) -> tuple[float, float]:
    """Hanley and McNeil's 95 % interval of an AUC."""
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    se = math.sqrt(max(0.0, a * (1 - a) + (pos - 1) * (q1 - a * a) + (neg - 1) * (q2 - a * a)) / (pos * neg))
    return max(0.0, a - Z * se), min(1.0, a + Z * se)


def run(ctx: Context) -> Section:
    sec = Section(NAME, TITLE)
    runs = _runs(ctx)
    if runs.is_empty():
        sec.summary = (
            "Not in use: no selected conversation has an outcome. Benchmark logs that record one (tau-bench, "
            "tau2, Inspect, MINT, AgentBench, OpenHands and SWE-bench evaluations) fill it at import; "
            "`forensics outcomes FILE` imports labels kept elsewhere."
        )
        sec.metrics = {"runs": 0}
        return sec
    failed_ids = set(runs.filter(~pl.col("success"))["conversation_id"].to_list())
    outcome = dict(zip(runs["conversation_id"].to_list(), runs["success"].to_list()))
    cutoff = dict(zip(runs["conversation_id"].to_list(), runs["cutoff"].to_list()))
    kept, dropped = _before_grade(ctx.sections, outcome, cutoff)
    n_fail, n_pass = len(failed_ids), len(runs) - len(failed_ids)
    k = int(runs["success"].sum())
    lo, hi = wilson(k, len(runs))
    m: dict[str, Any] = {
        "runs": len(runs),
        "successes": k,
        "success_rate": k / len(runs),
        "success_low": lo,
        "success_high": hi,
        "failed": n_fail,
    }
    m["by_model"], by_agent = _by_model(runs)
    task = dict(zip(runs["conversation_id"].to_list(), runs["task"].to_list()))
    m["kinds"], kinds_df = _kinds(kept, outcome, n_fail, n_pass, task)
    m["ranking"], measures_df = _rankings(runs, kept, ctx)
    m["grade_revealing"] = {
        "messages": int(runs["revealing"].sum()),
        "runs": int((runs["revealing"] > 0).sum()),
        "findings_excluded": dropped,
        "end_states": int(runs["revealing_end"].sum()),
    }
    sec.metrics = m
    sec.tables = [
        Table("by_agent_model", "Runs and success rate per agent and model (95 % Wilson interval)", by_agent),
        Table(
            "finding_kinds",
            "Share of failed and passed runs with at least one finding of each kind, and "
            "the lift (failed / passed; within task where tasks repeat) with its 95 % interval",
            kinds_df,
        ),
        Table(
            "rankings",
            "How well each per-run score ranks failed runs above passed ones (AUC; 0.5 is random)",
            measures_df,
        ),
    ]
    sec.summary = _summary(m, n_fail, n_pass)
    return sec


def _runs(ctx: Context) -> pl.DataFrame:
    """One row per selected run with an outcome: its agent, model, success, the position of its first
    grade-revealing message (cutoff, NULL: none) and its measures on the messages before it."""
    return ctx.df(
        "WITH o AS (SELECT o.conversation_id, o.success FROM conversation_outcomes o JOIN sel_conversations "
        "USING (conversation_id) WHERE o.success IS NOT NULL), "
        "rev AS (SELECT m.conversation_id, min(m.position) AS cutoff, count(*) AS revealing FROM messages m "
        "JOIN o USING (conversation_id) WHERE m.on_main_path AND m.role IN ('user', 'tool') "
        "AND regexp_matches(m.content, ?, 'i') GROUP BY 1), "
        "calls AS (SELECT t.conversation_id, count(*) AS tool_calls, count(*) FILTER (WHERE t.is_error) AS "
        "tool_errors, count(*) - count(DISTINCT (t.name, t.arguments)) AS repeated_calls FROM tool_calls t "
        "JOIN o USING (conversation_id) LEFT JOIN rev USING (conversation_id) WHERE t.position IS NOT NULL "
        "AND (rev.cutoff IS NULL OR t.position < rev.cutoff) GROUP BY 1), "
        "msgs AS (SELECT m.conversation_id, count(*) AS messages, coalesce(sum(m.content_chars) FILTER (WHERE "
        "m.role = 'assistant'), 0) AS assistant_chars FROM messages m JOIN o USING (conversation_id) "
        "LEFT JOIN rev USING (conversation_id) WHERE m.on_main_path AND m.role != 'system' "
        "AND (rev.cutoff IS NULL OR m.position < rev.cutoff) GROUP BY 1), "
        "ends AS (SELECT m.conversation_id, arg_max(m.role = 'assistant' AND EXISTS (SELECT 1 FROM tool_calls t "
        "WHERE t.conversation_id = m.conversation_id AND t.position = m.position AND t.result_position IS NULL "
        "AND NOT regexp_matches(coalesce(t.name, ''), '^(?i)(finish|submit|final_answer|answer|done|terminate|exit)\\b')), "
        "m.position) AS revealing_end FROM messages m JOIN o USING (conversation_id) LEFT JOIN rev "
        "USING (conversation_id) WHERE m.on_main_path AND m.role != 'system' AND (rev.cutoff IS NULL OR "
        "m.position < rev.cutoff) GROUP BY 1) "
        "SELECT o.conversation_id, coalesce(s.format, '?') AS agent, coalesce(c.model, '?') AS model, o.success, "
        "json_extract_string(d.detail, '$.task') AS task, coalesce(ends.revealing_end, false) AS revealing_end, "
        "rev.cutoff, coalesce(rev.revealing, 0) AS revealing, coalesce(msgs.messages, 0) AS messages, "
        "coalesce(msgs.assistant_chars, 0) AS assistant_chars, "
        "coalesce(calls.tool_calls, 0) AS tool_calls, coalesce(calls.tool_errors, 0) AS tool_errors, "
        "coalesce(calls.repeated_calls, 0) AS repeated_calls FROM o JOIN conversations c USING (conversation_id) "
        "LEFT JOIN sources s USING (source_id) LEFT JOIN rev USING (conversation_id) "
        "LEFT JOIN msgs USING (conversation_id) LEFT JOIN calls USING (conversation_id) LEFT JOIN ends "
        "USING (conversation_id) LEFT JOIN conversation_outcomes d USING (conversation_id) ORDER BY 1",
        [GRADE_REVEALING],
    )


def _before_grade(
    sections: list[Section], outcome: dict[str, bool], cutoff: dict[str, int | None]
) -> tuple[list[Section], int]:
    """The sections with only the findings a run could show before its grade was revealed (a finding that cites
    positions only from the first grade-revealing message on is dropped), and how many were dropped."""
    kept, dropped = [], 0
    for s in sections:
        fs: list[Finding] = []
        for f in s.findings:
            cut = cutoff.get(f.conversation_id)
            if f.conversation_id in outcome and cut is not None and f.positions and min(f.positions) >= cut:
                dropped += 1
            else:
                fs.append(f)
        kept.append(replace(s, findings=fs))
    return kept, dropped


def _by_model(runs: pl.DataFrame) -> tuple[dict[str, Any], pl.DataFrame]:
    rows, by_model = [], {}
    for (agent, model), g in sorted(runs.group_by(["agent", "model"]), key=lambda x: (str(x[0][0]), str(x[0][1]))):
        n, k = len(g), int(g["success"].sum())
        lo, hi = wilson(k, n)
        rows.append(
            {"agent": agent, "model": model, "runs": n, "passed": k, "success_rate": k / n, "low": lo, "high": hi}
        )
    for model, g in sorted(runs.group_by("model"), key=lambda x: str(x[0][0])):
        n, k = len(g), int(g["success"].sum())
        lo, hi = wilson(k, n)
        by_model[str(model[0])] = {
            "runs": n,
            "successes": k,
            "success_rate": k / n,
            "success_low": lo,
            "success_high": hi,
        }
    return by_model, pl.DataFrame(rows)


def _kinds(
    sections: list[Section],
    outcome: dict[str, bool],
    n_fail: int,
    n_pass: int,
    task: dict[str, str | None] | None = None,
) -> tuple[dict[str, Any], pl.DataFrame]:
    """Per finding kind, the shares of failed and passed runs with it and the lift with its 95 % interval: within
    task where tasks repeat (``mantel_haenszel``, as ``failures.contrast``: over the tasks with both outcomes, so a kind
    common in hard tasks is not taken for a sign of failure; a kind in no such task gets no lift), else overall."""
    seen: dict[str, set[str]] = {}
    for s in sections:
        for f in s.findings:
            if f.conversation_id in outcome:
                seen.setdefault(f.kind, set()).add(f.conversation_id)
    graded = [
        Graded(c, not ok, (task or {}).get(c), frozenset(k for k, cs in seen.items() if c in cs))
        for c, ok in outcome.items()
        if ok is not None
    ]
    strata = mixed_tasks(graded)
    out, rows = {}, []
    for kind, cids in sorted(seen.items()):
        a = sum(1 for c in cids if not outcome[c])
        b = len(cids) - a
        r, lo, hi = compared(kind, strata, a, n_fail, b, n_pass)
        separates = "yes" if lo is not None and hi is not None and (lo > 1 or hi < 1) else "no"
        out[kind] = {
            "failed": a / n_fail if n_fail else None,
            "passed": b / n_pass if n_pass else None,
            "lift": r,
            "lift_low": lo,
            "lift_high": hi,
            "separates": separates == "yes",
            "within_task": bool(strata),
        }
        rows.append(
            {
                "kind": kind,
                "failed runs": a,
                "failed share": out[kind]["failed"],
                "passed runs": b,
                "passed share": out[kind]["passed"],
                "lift": r,
                "low": lo,
                "high": hi,
                "compared": "within task" if strata else "overall",
                "separates failed from passed": separates,
            }
        )
    return out, pl.DataFrame(
        rows,
        schema={
            "kind": pl.String,
            "failed runs": pl.Int64,
            "failed share": pl.Float64,
            "passed runs": pl.Int64,
            "passed share": pl.Float64,
            "lift": pl.Float64,
            "low": pl.Float64,
            "high": pl.Float64,
            "compared": pl.String,
            "separates failed from passed": pl.String,
        },
    )


@dataclass(frozen=True)
class Graded:
    conversation_id: str
    failed: bool
    task: str | None
    features: frozenset[str]


ZERO_CELL = 0.5  # added to each cell of a task with an empty cell, where the ratio has no estimate without it


def mantel_haenszel(
    feature: str, strata: Iterable[list[Graded]], zero_cell: float = 0.0
) -> tuple[float, float, float] | None:
    """(ratio, low, high): the Mantel–Haenszel ratio of the shares of failed and passed runs with the feature,
    over tasks, with the Greenland–Robins interval; None when a sum is 0 (no estimate). ``zero_cell``: added to
    each of the four cells of a task that holds the feature and has an empty cell (a task without it tells
    nothing of it and is left as it is)."""
    num = den = var_num = 0.0
    for runs in strata:
        n1: float = sum(r.failed for r in runs)
        n2: float = len(runs) - n1
        a: float = sum(r.failed and feature in r.features for r in runs)
        b: float = sum(not r.failed and feature in r.features for r in runs)
        if zero_cell and a + b and 0 in (a, b, n1 - a, n2 - b):
            a, b, n1, n2 = a + zero_cell, b + zero_cell, n1 + 2 * zero_cell, n2 + 2 * zero_cell
        total = n1 + n2
        num += a * n2 / total
        den += b * n1 / total
        var_num += (n1 * n2 * (a + b) - a * b * total) / (total * total)
    if num <= 0 or den <= 0:
        return None
    ratio = num / den
    se = math.sqrt(max(var_num, 0.0) / (num * den))
    return ratio, ratio * math.exp(-Z * se), ratio * math.exp(Z * se)


def compared(
    feature: str, strata: list[list[Graded]], a: int, n_fail: int, b: int, n_pass: int
) -> tuple[float | None, float | None, float | None]:
    """(ratio, low, high) of a feature: within task where tasks repeat (Mantel–Haenszel, with the half-run
    correction where a task has an empty cell), else the ratio of its shares over all runs; all None when there is
    no failed or no passed run, or no task compares it."""
    if not (n_fail and n_pass):
        return None, None, None
    if strata:
        return mantel_haenszel(feature, strata) or mantel_haenszel(feature, strata, ZERO_CELL) or (None, None, None)
    return lift(a, n_fail, b, n_pass)


def mixed_tasks(runs: list[Graded]) -> list[list[Graded]]:
    """The tasks with both a failed and a passed run (the only ones that compare within a task)."""
    by: dict[str, list[Graded]] = {}
    for r in runs:
        if r.task is not None:
            by.setdefault(r.task, []).append(r)
    return [g for g in by.values() if len({r.failed for r in g}) == 2]


def run_scores(
    runs: pl.DataFrame, kinds: dict[str, set[str]], cited: dict[str, RunErrors] | None = None
) -> list[float]:
    """The report's run ranking (docs/definitions.md#failure-analysis): the problems found in a run
    (``problem_kind_sets``), each weighed by how rare it is among the runs ranked (``rarity``; with ``cited``, a
    problem whose every finding cites only errors many runs hit weighs no more than the rarest of those errors:
    ``setting_weight``), added to its length,
    errors breaking ties of length; a run whose agent never replied first (``NEVER_ACTED``). Length is the mean of
    three ranks, each as a share of its runs: by messages among all runs, and by the characters the agent wrote among
    all runs and among the runs of the same model. Messages are the run's steps, the work it did, compared across
    models: a model that flounders until its cost limit fails more (Multi-SWE-bench's SWE-agent runs: ranked among
    the same model's runs, messages fell from 0.734 to 0.627 AUC). Characters are partly the model's style: on MINT
    gpt-3.5 writes half as much again as claude-2 at the same success rate, so raw characters ranked the pairs of
    runs of one task (two models) below the message count (0.550 vs 0.625), and the model's own runs are their norm
    too; where one model also writes more and fails more (MedAgentBench's llama-3.3), the rank among all runs keeps
    that. Length is a share below 1 and a problem found in one run only adds ``PROBLEM_WEIGHT`` (2), so a rare
    problem ranks its run above every run without one; a problem most runs have adds little, and length orders those
    runs (Multi-SWE-bench's cost limit, hit by 51 % of its runs, passed runs among them). Errors only break ties of
    length (mixed in with equal weight they lowered the AUC on MINT). Measured on the messages before any
    grade-revealing text; an end the harness decides is not used."""
    n = len(runs)
    if not n:
        return []
    model = runs["model"] if "model" in runs.columns else pl.Series(["?"] * n)
    ranked = pl.DataFrame(
        {"m": runs["messages"], "k": runs["assistant_chars"], "e": runs["tool_errors"], "model": model}
    ).with_columns(
        pl.col("m").rank("average").alias("m_all") / n,
        pl.col("k").rank("average").alias("k_all") / n,
        (pl.col("k").rank("average").over("model") / pl.len().over("model")).alias("k_own"),
        pl.col("e").rank("average").alias("e_all"),
    )
    # length first, errors only within equal length (the dense rank of length steps by 1, errors add < 1)
    length = (ranked["m_all"] + ranked["k_all"] + ranked["k_own"]).rank("dense")
    key = length.cast(pl.Float64) + ranked["e_all"] / (n + 1)
    order = key.rank("average").to_list()
    ids = runs["conversation_id"].to_list()
    own = {c: kinds.get(c, set()) for c in ids}
    weight = rarity(own)
    setting = setting_weight({c: cited[c] for c in ids if c in cited and NO_REPLY not in own[c]}) if cited else {}
    return [
        (NEVER_ACTED if NO_REPLY in own[c] else 0)
        + PROBLEM_WEIGHT * sum(min(weight[k], setting.get((c, k), 1.0)) for k in counted_kinds(own[c]))
        + (r - 0.5) / n * 0.999
        for c, r in zip(ids, order)
    ]


@dataclass(frozen=True)
class RunErrors:
    """A run's errors before its grade (``cited_errors``): the templates of every error its tool outputs show
    (``signature.errors``), and per problem kind found in it, for each finding of that kind, the templates of the
    errors the finding cites (its positions, and the results of the calls at them; empty: it cites none)."""

    templates: frozenset[str]
    cited: dict[str, tuple[frozenset[str], ...]]


def setting_weight(runs: dict[str, RunErrors]) -> dict[tuple[str, str], float]:
    """Per (run, counted kind) whose every finding cites an error, the largest rarity among the runs given of the
    errors its findings cite (log(runs / runs with the error) / log(runs), as ``rarity``): an error most runs hit is
    the setting's, not the run's. Multi-SWE-bench's environment has no Java toolchain: `javac: command not found`
    retried until the cost limit marks passed and failed runs alike, and a run that loops on it says less of
    its own work than a run that loops on an error of its own. A kind with a finding that cites no error, or an
    error few runs hit, is not capped. The kinds counted once (``counted_kinds``) pool their findings."""
    seen: dict[str, int] = {}
    for e in runs.values():
        for t in e.templates:
            seen[t] = seen.get(t, 0) + 1
    n = len(runs)
    if n < 2:
        return {}
    rare = {t: math.log(n / k) / math.log(n) for t, k in seen.items()}
    out: dict[tuple[str, str], float] = {}
    for c, e in runs.items():
        pooled: dict[str, list[frozenset[str]]] = {}
        for kind, each in e.cited.items():
            for k in counted_kinds({kind}):
                pooled.setdefault(k, []).extend(each)
        for k, findings in pooled.items():
            if findings and all(findings):
                out[(c, k)] = max(rare.get(t, 1.0) for f in findings for t in f)
    return out


def cited_errors(ctx: Context, runs: pl.DataFrame, read: dict[str, list[Msg]] | None = None) -> dict[str, RunErrors]:
    """Per run, its errors before the grade and the errors each problem finding cites (``RunErrors``), read from
    ``problem_findings``; without that table, no finding cites an error. One query joins the findings before their
    run's grade with the calls at their positions (one row a finding: the positions and those calls' results); the
    tool calls stay in DuckDB. ``read``: the runs' messages before the grade when already read
    (``signature.messages``)."""
    cutoff = dict(zip(runs["conversation_id"].to_list(), runs["cutoff"].to_list()))
    if read is None:
        read = messages(ctx.con, list(cutoff), GRADE_REVEALING)
    errs = {cid: errors(msgs) for cid, msgs in read.items()}
    has = ctx.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'problem_findings'"
    ).fetchall()[0]
    found: dict[str, dict[str, list[list[int]]]] = {}
    if has and has[0]:
        # per finding before its run's grade (in the table's order): its positions (the one it names when it lists
        # none) and the results of the calls at them
        for cid, kind, cites in ctx.con.execute(
            "WITH r AS (SELECT unnest(?::VARCHAR[]) AS conversation_id, unnest(?::INTEGER[]) AS cutoff), "
            "f AS (SELECT p.rowid AS fid, p.conversation_id, p.kind, CASE WHEN len(p.positions) > 0 THEN "
            "p.positions WHEN p.position IS NULL THEN [] ELSE [p.position] END AS ps FROM problem_findings p "
            "JOIN sel_conversations USING (conversation_id) JOIN r USING (conversation_id) "
            "WHERE r.cutoff IS NULL OR p.position IS NULL OR p.position < r.cutoff), "
            "q AS (SELECT fid, conversation_id, unnest(ps) AS q_pos FROM f), "
            "cited AS (SELECT fid, q_pos FROM q UNION ALL SELECT q.fid, t.result_position FROM q JOIN tool_calls t "
            "ON t.conversation_id = q.conversation_id AND t.position = q.q_pos WHERE t.result_position IS NOT NULL) "
            "SELECT f.conversation_id, f.kind, coalesce(list(c.q_pos) FILTER (WHERE c.q_pos IS NOT NULL), []) FROM f "
            "LEFT JOIN cited c USING (fid) GROUP BY f.fid, f.conversation_id, f.kind ORDER BY f.fid",
            [list(cutoff), list(cutoff.values())],
        ).fetchall():
            found.setdefault(cid, {}).setdefault(kind, []).append(cites)
    out = {}
    for cid in cutoff:
        at: dict[int, str] = {}
        for p, t in errs.get(cid, []):
            at.setdefault(p, t)
        cited = {
            kind: tuple(frozenset(at[q] for q in qs if q in at) for qs in lists)
            for kind, lists in found.get(cid, {}).items()
        }
        out[cid] = RunErrors(frozenset(at.values()), cited)
    return out


PROBLEM_WEIGHT = 2.0  # a problem in one run only, against a length share below 1 (chosen leave one benchmark out)


def rarity(kinds: dict[str, set[str]]) -> dict[str, float]:
    """Per problem kind, how rare it is among the runs ranked that the agent replied in: log(runs / runs with it) /
    log(runs), 1 for a kind in one run, 0 for a kind in every run (it tells no run from another: Multi-SWE-bench's
    environment has no Java toolchain, and passed and failed runs alike hit the cost limit or submit untested
    fixes). Kinds read off the same evidence count once (``counted_kinds``); with fewer than two such runs, 1."""
    acted = [counted_kinds(ks) for ks in kinds.values() if NO_REPLY not in ks]
    seen: dict[str, int] = {}
    for ks in acted:
        for k in ks:
            seen[k] = seen.get(k, 0) + 1
    every = {k for ks in kinds.values() for k in counted_kinds(ks)}
    if len(acted) < 2:
        return dict.fromkeys(every, 1.0)
    return {k: math.log(len(acted) / seen[k]) / math.log(len(acted)) if seen.get(k) else 1.0 for k in every}


def auc_within(scores: list[float], failed: list[bool], tasks: list[str | None]) -> tuple[float | None, int]:
    """(AUC over the pairs of runs of one task with different outcomes, ties counting one half; pairs)."""
    by: dict[str, list[tuple[float, bool]]] = {}
    for sc, f, t in zip(scores, failed, tasks):
        if t is not None:
            by.setdefault(t, []).append((sc, f))
    wins, pairs = 0.0, 0
    for members in by.values():
        for sf, ff in members:
            if not ff:
                continue
            for sp, fp in members:
                if fp:
                    continue
                pairs += 1
                wins += 1.0 if sf > sp else 0.5 if sf == sp else 0.0
    return (wins / pairs if pairs else None), pairs


def auc_within_interval(
    scores: list[float], failed: list[bool], tasks: list[str | None], resamples: int = 400
) -> tuple[float | None, float | None]:
    """95 % interval of the within-task AUC: a bootstrap over tasks (fixed seed, so a report is reproducible)."""
    import random

    by: dict[str, list[int]] = {}
    for i, t in enumerate(tasks):
        if t is not None:
            by.setdefault(t, []).append(i)
    keys = [k for k, ix in by.items() if len({failed[i] for i in ix}) == 2]
    if len(keys) < 2:
        return None, None
    rng, got = random.Random(20251206), []
    for _ in range(resamples):
        idx, tk = [], []
        for j, k in enumerate(rng.choices(keys, k=len(keys))):
            idx += by[k]
            tk += [f"{j}"] * len(by[k])
        a, _ = auc_within([scores[i] for i in idx], [failed[i] for i in idx], list(tk))
        if a is not None:
            got.append(a)
    got.sort()
    return got[int(0.025 * len(got))], got[min(len(got) - 1, int(0.975 * len(got)))]


# more than a run's problems can add: a run whose agent never replied did nothing of its task and ranks above every run
# that acted (on terminal-bench, 197 of the 205 trials whose agent never started failed; ranked by their length, the
# ranking was inverted, AUC 0.30)
NEVER_ACTED = 100
NO_REPLY = "ended: no_reply"


# kinds read off the same evidence, counted once: a loop is redundant work done three times or more (the same action
# and result, GUIDE.md), and both rules fire on the same calls (tau2: a passed run's three reads of one record were a
# loop and redundant work, two problems, above failed runs that handed the customer off, one)
SAME_EVIDENCE = {"loop": "redundant_work"}


def counted_kinds(kinds: set[str]) -> set[str]:
    """The problems a run's kinds count for in the ranking: kinds read off the same evidence once (``SAME_EVIDENCE``,
    and the kinds an analyzer declares restate another's, ``Analyzer.restates``); a run that never replied is not a
    problem counted but ranks first (``NEVER_ACTED``)."""
    from forensics import analyzers

    same = {**analyzers.restated(), **SAME_EVIDENCE}
    return {same.get(k, k) for k in kinds if k != NO_REPLY}


def problem_kind_sets(
    ctx: Context, runs: pl.DataFrame, sections: list[Section], read: dict[str, list[Msg]] | None = None
) -> dict[str, set[str]]:
    """Per run, the problem kinds found before its grade was revealed: from ``problem_findings`` (docs/definitions.md#problems-a-reviewer-flags) when
    the warehouse has it, else the kinds of the findings of the analyzers that ran before this one; and
    ``ended: <how>`` when the run ended without finishing its task (gave up, hit a limit, ended on an error,
    handed off, never replied: ``signature.BAD_ENDS``; never the ends the harness decides), or ``ended:
    not_handed_in`` when it ended otherwise without the act that hands the work in where its agent's runs mostly end
    on it (``_hands_in``); and what a coding agent's editor work hands in (``outcomes_work``: ``ended:
    no_project_change``, no file of the project changed; ``checked_by_stand_in``, a change "checked" by a script
    in another language that runs nothing of the project)."""
    has = ctx.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'problem_findings'"
    ).fetchall()[0]
    cutoff = dict(zip(runs["conversation_id"].to_list(), runs["cutoff"].to_list()))
    kinds: dict[str, set[str]] = {}
    if has and has[0]:
        for cid, kind, pos in ctx.con.execute(
            "SELECT p.conversation_id, p.kind, p.position FROM problem_findings p JOIN sel_conversations "
            "USING (conversation_id)"
        ).fetchall():
            cut = cutoff.get(cid)
            if cid in cutoff and (cut is None or pos is None or pos < cut):
                kinds.setdefault(cid, set()).add(kind)
    else:
        for sec in sections:
            for f in sec.findings:
                if f.conversation_id in cutoff:
                    kinds.setdefault(f.conversation_id, set()).add(f.kind)
    if read is None:
        read = messages(ctx.con, list(cutoff), GRADE_REVEALING)
    expects = _hands_in(runs, read)
    agent = dict(zip(runs["conversation_id"].to_list(), runs["agent"].to_list()))
    for cid, msgs in read.items():
        end, _ = ended(msgs)
        if end in BAD_ENDS:
            kinds.setdefault(cid, set()).add(f"ended: {end}")
        elif agent.get(cid) in expects and end not in GRADE_REVEALING_ENDS and not handed_in(msgs):
            kinds.setdefault(cid, set()).add(NOT_HANDED_IN)
    for cid, work in project_work(ctx.con, cutoff, agent).items():  # what its editor's edits hand in (outcomes_work)
        kinds.setdefault(cid, set()).update(work)
    return kinds


NOT_HANDED_IN = "ended: not_handed_in"
HANDS_IN_RUNS = 10  # runs of one agent it takes to say how its runs end


def _hands_in(runs: pl.DataFrame, read: dict[str, list[Msg]]) -> set[str]:
    """The agents (the format that read the runs) whose runs mostly end on the act that hands the work in
    (``signature.handed_in``: a ``FINISH`` or submit call, a submission the harness read), of at least
    ``HANDS_IN_RUNS`` runs it replied in (a run with no reply ends ``no_reply`` and says nothing of how runs end).
    There a run that ends otherwise, and not on a limit, an error, a hand-off or a cut, did not hand its work in:
    MedAgentBench's 16 runs that answer in prose or write ``FINISH [...]`` unparsed, where 184 call ``FINISH(...)``.
    Where runs end in words (MINT's ``<solution>``, tau2's reply to the customer), or half of them do not submit
    (Multi-SWE-bench's SWE-agent runs, most stopped by a limit), nothing is said."""
    agent = dict(zip(runs["conversation_id"].to_list(), runs["agent"].to_list()))
    by: dict[str, list[bool]] = {}
    for cid, msgs in read.items():
        if any(m.role == "assistant" for m in msgs):
            by.setdefault(str(agent.get(cid)), []).append(handed_in(msgs))
    return {a for a, hs in by.items() if len(hs) >= HANDS_IN_RUNS and sum(hs) > len(hs) / 2}


def _rankings(runs: pl.DataFrame, sections: list[Section], ctx: Context) -> tuple[dict[str, Any], pl.DataFrame]:
    ids, failed = runs["conversation_id"].to_list(), [not s for s in runs["success"].to_list()]
    tasks = runs["task"].to_list()
    worst = ctx.ranking(sections, ctx.selected) if ctx.ranking and sections else {}
    read = messages(ctx.con, runs["conversation_id"].to_list(), GRADE_REVEALING)
    ranking_scores = run_scores(runs, problem_kind_sets(ctx, runs, sections, read), cited_errors(ctx, runs, read))
    columns = {
        "run ranking (problems weighed by rarity, plus length; errors break ties)": ranking_scores,
        **({"worst-conversation score": [worst.get(c, 0.0) for c in ids]} if sections else {}),
        **{label: [float(v) for v in runs[col].to_list()] for col, label in MEASURES.items()},
    }
    pos, neg = sum(failed), len(failed) - sum(failed)
    rows, aucs, within = [], {}, {}
    for label, scores in columns.items():
        a = auc(scores, failed)
        lo, hi = auc_interval(a, pos, neg) if a is not None else (None, None)
        w, pairs = auc_within(scores, failed, tasks)
        wlo, whi = auc_within_interval(scores, failed, tasks) if w is not None else (None, None)
        aucs[label], within[label] = a, w
        rows.append(
            {
                "ranking": label,
                "auc": a,
                "low": lo,
                "high": hi,
                "auc within task": w,
                "within low": wlo,
                "within high": whi,
                "pairs within task": pairs,
            }
        )
    rows.append(
        {
            "ranking": "random",
            "auc": 0.5 if pos and neg else None,
            "low": None,
            "high": None,
            "auc within task": 0.5 if within[next(iter(columns))] is not None else None,
            "within low": None,
            "within high": None,
            "pairs within task": rows[0]["pairs within task"],
        }
    )
    first = rows[0]
    ranking = {
        "auc": first["auc"],
        "auc_low": first["low"],
        "auc_high": first["high"],
        "auc_within_task": first["auc within task"],
        "auc_within_task_low": first["within low"],
        "auc_within_task_high": first["within high"],
        "pairs_within_task": first["pairs within task"],
        "auc_by_worst_score": aucs.get("worst-conversation score"),
        "auc_by_messages": aucs["messages"],
        "auc_by_tool_calls": aucs["tool calls"],
        "auc_by_tool_errors": aucs["tool errors"],
        "auc_by_repeated_calls": aucs["repeated calls (same tool and arguments)"],
        "auc_random": 0.5,
        "auc_by_assistant_chars": aucs["characters the agent wrote"],
        "auc_within_task_by_messages": within["messages"],
        "scored_by_findings": bool(sections),
    }
    return ranking, pl.DataFrame(
        rows,
        schema={
            "ranking": pl.String,
            "auc": pl.Float64,
            "low": pl.Float64,
            "high": pl.Float64,
            "auc within task": pl.Float64,
            "within low": pl.Float64,
            "within high": pl.Float64,
            "pairs within task": pl.Int64,
        },
    )


def _summary(m: dict[str, Any], n_fail: int, n_pass: int) -> str:
    rk, rev = m["ranking"], m["grade_revealing"]
    seps = sorted(k for k, v in m["kinds"].items() if v["separates"])
    text = (
        f"{m['runs']} runs with an outcome: {m['successes']} passed ({m['success_rate']:.0%}, 95 % "
        f"{m['success_low']:.0%}–{m['success_high']:.0%}), {n_fail} failed. "
    )
    if rk["auc"] is not None:
        best = max(rk["auc_by_messages"] or 0, rk["auc_by_tool_calls"] or 0)
        verdict = "beats" if rk["auc_low"] is not None and rk["auc_low"] > best else "does not beat"
        text += (
            f"The run ranking (problems weighed by rarity, plus length) finds failed runs with AUC {rk['auc']:.2f} (by length "
            f"{rk['auc_by_messages']:.2f}, by tool calls {rk['auc_by_tool_calls']:.2f}, random 0.50): it "
            f"{verdict} the trivial rankings. "
        )
    if rk["auc_within_task"] is not None:
        text += (
            f"Within a task ({rk['pairs_within_task']} pairs of runs of one task with different outcomes) its AUC "
            f"is {rk['auc_within_task']:.2f} (by length {rk['auc_within_task_by_messages']:.2f}). "
        )
    text += (
        f"Finding kinds that separate failed from passed runs: {', '.join(seps) if seps else 'none'} "
        f"(of {len(m['kinds'])}). "
    )
    text += (
        f"Grade-revealing text excluded: {rev['messages']} messages in {rev['runs']} runs "
        f"({rev['findings_excluded']} findings citing only them); {rev['end_states']} runs end on a call nothing "
        "answered, an end the harness decides (it can reveal the grade), not used as a feature."
    )
    return text


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    inputs=("sections", "ranking"),  # the findings before it and the worst-conversation ranking, held against outcomes
)
