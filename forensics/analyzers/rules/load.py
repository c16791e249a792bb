"""The rules of the selected runs and what each run did, read from the warehouse: the one place both the rules
audit and the ``instruction_violated`` problem kind get their rules and verdicts from."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import duckdb
import orjson
import polars as pl

from forensics.analyzers import reuse
from forensics.analyzers.base import Context
from forensics.analyzers.rules.checks import Check
from forensics.analyzers.rules.extract import Message, Rule, rules_of
from forensics.analyzers.rules.judge import Call, Run, Verdict, command_of, judge
from forensics.kernel.selection import SELECTED

SUMMARY_SLACK = 3  # the harness's lines at a compaction or just after it: its summary, what it reads back in


@dataclass
class Audit:
    """Every selected run's rules, its verdicts, and per run its model and length (the last main-path position)."""

    rules: list[Rule]
    verdicts: list[Verdict]
    runs: dict[str, Run]


def rules(con: duckdb.DuckDBPyConnection) -> list[Rule]:
    """The rules of every selected conversation, read from its person, system and harness turns. The harness's
    turns off the main path before the person's first turn on it (the history a forked thread copies from the thread
    it was forked from) were in the context too: an instruction file there is the run's from its start (position
    0)."""
    rows = con.execute(f"""
        WITH first AS (SELECT conversation_id, min(seq) AS seq FROM messages WHERE on_main_path AND origin = 'person'
                       GROUP BY 1)
        SELECT m.conversation_id, coalesce(m.position, 0), m.role, m.origin, m.content, m.person_text
        FROM messages m JOIN {SELECTED} USING (conversation_id) LEFT JOIN first f USING (conversation_id)
        WHERE m.role IN ('user', 'system') AND coalesce(m.origin, '') NOT IN ('tool', 'tool_result')
          AND (m.on_main_path AND m.position IS NOT NULL OR NOT m.on_main_path AND m.seq < f.seq
               AND m.origin = 'harness')
        ORDER BY 1, 2, m.seq""").fetchall()
    by: dict[str, list[Message]] = defaultdict(list)
    for cid, pos, role, origin, content, own in rows:
        by[cid].append(Message(pos, role, origin, content or "", own))
    return [r for cid, msgs in by.items() for r in rules_of(cid, msgs)]


def audit(con: duckdb.DuckDBPyConnection) -> Audit:
    """Extract the rules of every selected conversation, then judge the checkable ones against what the
    conversations with any did."""
    found = rules(con)
    mine: dict[str, list[Rule]] = defaultdict(list)
    for r in found:
        mine[r.conversation_id].append(r)
    runs = _runs(con, sorted(mine))
    verdicts = [v for cid, rs in mine.items() if any(r.check is not None for r in rs) for v in judge(rs, runs[cid])]
    return Audit(found, verdicts, runs)


def audit_of(ctx: Context) -> Audit:
    """The selection's audit, computed once per report: the rules section and the ``instruction_violated``
    problem kind read the same one (each computed it: the rules of every run extracted twice). A run's rules and
    verdicts depend on its own rows only: an unchanged run's are read back from the warehouse (``reuse.rows``)."""
    key = ("rules", "audit")
    if key not in ctx.memo:
        kept = reuse.rows(ctx.con, ctx.cfg, CACHED, lambda: _encoded(audit(ctx.con)))
        ctx.memo[key] = _decoded(kept)
    found: Audit = ctx.memo[key]
    return found


CACHED = "rules_audit"  # per run with a rule: its rules, verdicts and what the section reads of the run, as JSON
CACHED_COLUMNS: dict[str, Any] = {"conversation_id": pl.String, "audit": pl.String}


def _encoded(found: Audit) -> pl.DataFrame:
    """One row per run with a rule: its rules, its verdicts and of the run what is read after judging (its model,
    end, compactions and their summaries), in their order."""
    per: dict[str, dict[str, Any]] = {}
    for r in found.rules:
        run = found.runs[r.conversation_id]
        mine = per.setdefault(
            r.conversation_id,
            {
                "rules": [],
                "verdicts": [],
                "run": [run.model, run.end, run.compactions, [[p, t] for p, t in run.summaries.items()]],
            },
        )
        check = [r.check.kind, list(r.check.target), list(r.check.span)] if r.check else None
        mine["rules"].append([r.source, r.path, r.position, r.text, check, r.until, r.standing])
    for v in found.verdicts:
        per[v.conversation_id]["verdicts"].append(
            [v.rule, v.position, v.verdict, v.quote, v.said_at, v.after_compaction, v.in_context]
        )
    return pl.DataFrame(
        [(cid, orjson.dumps(a).decode()) for cid, a in per.items()], schema=CACHED_COLUMNS, orient="row"
    )


def _decoded(kept: pl.DataFrame) -> Audit:
    """``_encoded``'s rows as the audit ``audit`` computed: runs in id order, each run's rules and verdicts in theirs."""
    found = Audit([], [], {})
    for cid, raw in sorted(kept.select(list(CACHED_COLUMNS)).iter_rows()):
        a = orjson.loads(raw)
        model, end, compactions, summaries = a["run"]
        found.runs[cid] = Run(cid, model, compactions=compactions, summaries={int(p): t for p, t in summaries}, end=end)
        for source, path, position, text, check, until, standing in a["rules"]:
            c = Check(check[0], tuple(check[1]), (check[2][0], check[2][1])) if check is not None else None
            found.rules.append(Rule(cid, source, path, position, text, c, until, standing))
        found.verdicts += [Verdict(cid, *v) for v in a["verdicts"]]
    return found


def _runs(con: duckdb.DuckDBPyConnection, cids: list[str]) -> dict[str, Run]:
    """What each of ``cids`` did: its tool calls, text replies, person turns and compactions."""
    runs = {cid: Run(cid, "") for cid in cids}
    if not cids:
        return runs
    con.execute("CREATE OR REPLACE TEMP TABLE _rules_runs AS SELECT unnest(?::VARCHAR[]) AS conversation_id", [cids])
    try:
        for cid, model, end in con.execute("""
                SELECT c.conversation_id, coalesce(c.model, ''), max(m.position) FROM conversations c
                JOIN _rules_runs USING (conversation_id) LEFT JOIN messages m ON m.conversation_id = c.conversation_id
                     AND m.on_main_path GROUP BY 1, 2""").fetchall():
            runs[cid].model, runs[cid].end = model, int(end or 0)
        for cid, pos, name, args in con.execute("""
                SELECT t.conversation_id, t.position, coalesce(t.name, ''), coalesce(t.arguments, '')
                FROM tool_calls t JOIN _rules_runs USING (conversation_id)
                JOIN messages m ON m.conversation_id = t.conversation_id AND m.seq = t.seq AND m.on_main_path
                WHERE t.position IS NOT NULL ORDER BY 1, 2, t.call_index""").fetchall():
            runs[cid].calls.append(Call(pos, name, args, command_of(name, args)))
        for cid, pos, role, text in con.execute("""
                SELECT m.conversation_id, m.position, m.role, coalesce(m.person_text, m.content)
                FROM messages m JOIN _rules_runs USING (conversation_id)
                WHERE m.on_main_path AND m.position IS NOT NULL AND NOT coalesce(m.blank, false)
                  AND (m.role = 'assistant' OR m.origin = 'person') ORDER BY 1, 2""").fetchall():
            (runs[cid].replies if role == "assistant" else runs[cid].persons).append((pos, text or ""))
        for cid, pos, summary in con.execute(f"""
                SELECT e.conversation_id, e.position, (
                    SELECT string_agg(m.content, chr(10) ORDER BY m.position) FROM messages m
                    WHERE m.conversation_id = e.conversation_id AND m.on_main_path AND m.origin = 'harness'
                      AND m.position BETWEEN e.position AND e.position + {SUMMARY_SLACK})
                FROM events e JOIN _rules_runs USING (conversation_id)
                WHERE e.kind = 'compaction' AND e.position IS NOT NULL ORDER BY 1, 2""").fetchall():
            runs[cid].compactions.append(pos)
            runs[cid].summaries[pos] = summary or ""
    finally:
        con.execute("DROP TABLE IF EXISTS _rules_runs")
    return runs
