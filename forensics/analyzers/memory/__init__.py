"""Decision memory (docs/memory.md): settled decisions re-opened, forgotten, contradicted or never recorded,
and a replay of the harness's retrieval on a fixed question set.

The findings come from ``rules`` over the conversations of decision-memory sources (``conversations.project``)
and land in ``memory_findings``. With a question file (``--questions``) the section also replays the seed's
ranking (``retrieval``) at the config's ``[memory]`` values and over the sweep of docs/memory.md#retrieval-replay---questions-file; its ``retrieval_sweep``
chart carries the one-key-at-a-time rows (the report layer draws it). ``replay`` is what the tuner calls.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers.base import Chart, Context, Finding, Section, Table
from forensics.analyzers.declare import Analyzer, CheckRule, Tuner
from forensics.analyzers.keys import memory as declared
from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.analyzers.memory import decisions as decisions_mod
from forensics.analyzers.memory import draw, tune
from forensics.analyzers.memory.retrieval import KEYS, Params, Replay, read_questions
from forensics.analyzers.memory.rules import KINDS, Hit, find
from forensics.analyzers.memory.settings import MemorySettings
from forensics.config import Config
from forensics.kernel.arrow import stream
from forensics.kernel.selection import SELECTED
from forensics.warehouse import derived

NAME = "memory"
TITLE = "Decision memory"
FINDINGS_TABLE = "memory_findings"
RULES = {
    "relitigation": "an assistant message names a rejected option while the decision holds, outside a sentence "
    "with a negation cue; high when it weighs options",
    "decision_not_recalled": "a user question holds ≥ {m} of the decision title's terms; the answer names neither "
    "the decided option nor the decision",
    "decision_conflict": "same project and type, titles' terms overlap ≥ {c} (Jaccard), other option, no supersede cue",
    "decision_unrecorded": "a decision cue in a sentence that is neither a question nor pending, and no decision "
    "recorded from its turn",
}


def replay(con: duckdb.DuckDBPyConnection, cfg: Config, questions: str) -> tuple[Replay, Params]:
    """The question file against the warehouse's decisions, and the config's retrieval setting."""
    return Replay(con, read_questions(questions), KeywordSettings.of(cfg).tokenizer), Params.of(MemorySettings.of(cfg))


def run(ctx: Context) -> Section:
    con, cfg = ctx.con, ctx.cfg
    decisions = decisions_mod.load(con, cfg)
    conversations = con.execute(
        f"SELECT count(*), count(DISTINCT project) FROM conversations WHERE project IS NOT "
        f"NULL AND conversation_id IN (SELECT conversation_id FROM {SELECTED})"
    ).fetchall()[0]
    if not decisions:  # nothing was decided here, so nothing can be relitigated, forgotten or in conflict
        _write(con, [])  # the table stays queryable, empty
        return Section.idle(
            NAME,
            TITLE,
            "no decision records (a decision-memory SQLite file with decision_events) "
            "in the warehouse"
            + (f"; the {conversations[0]} conversations of its projects are not judged" if conversations[0] else ""),
        )
    hits = find(con, cfg, decisions)
    _write(con, hits)
    kinds, high = Counter(h.kind for h in hits), Counter(h.kind for h in hits if h.severity == "high")
    metrics: dict[str, Any] = {
        "decisions": len(decisions),
        "projects": conversations[1],
        "conversation_count": conversations[0],
        "alternatives": sum(len(d.alternatives) for d in decisions),
        "findings": {k: kinds[k] for k in KINDS},
        "findings_high": {k: high[k] for k in KINDS},
    }
    sec = Section(NAME, TITLE, metrics=metrics)
    rules = {
        k: v.format(m=f"{MemorySettings.of(cfg).question_match:.0%}", c=MemorySettings.of(cfg).conflict_title_match)
        for k, v in RULES.items()
    }
    sec.findings = [
        Finding(
            h.kind,
            h.severity,
            h.conversation_id or "",
            h.native_id or f"decision {h.decision_id}",
            h.positions,
            h.detail,
            rules[h.kind],
        )
        for h in hits
    ]
    if decisions:
        sec.tables.append(
            Table(
                "decisions",
                "Recorded decisions, as made (follows: the earlier decision on the same matter)",
                _decision_table(decisions),
            )
        )
    if ctx.questions:
        rep, here = replay(con, cfg, ctx.questions)
        summary = rep.summary(here)
        grid = rep.sweep(here)
        metrics["retrieval"] = {**summary, "sweep": grid.to_dicts()}
        one = _one_at_a_time(grid, here)
        sec.tables += [
            Table(
                "retrieval",
                f"Retrieval replay per question ({_setting(here)})",
                _question_table(summary["per_question"]),
            ),
            Table("sweep", "Retrieval sweep: one key varied, the others at the config's values", one),
        ]
        if not one.is_empty():
            sec.charts.append(
                Chart(
                    "retrieval_sweep",
                    f"Retrieval sweep: recall@{here.top_k} and MRR, one key varied at a time",
                    one.to_dicts(),
                )
            )
    sec.summary = _summary(metrics)
    return sec


def _one_at_a_time(grid: pl.DataFrame, here: Params) -> pl.DataFrame:
    """The sweep's rows where three keys keep the config's values: (key, value, figures, current)."""
    parts = []
    for key in KEYS:
        others = pl.all_horizontal([pl.col(k) == getattr(here, k) for k in KEYS if k != key])
        part = grid.filter(others).sort(key)
        parts.append(
            part.select(
                pl.lit(key).alias("key"),
                pl.col(key).cast(pl.Float64).alias("value"),
                "recall_at_k",
                "mrr",
                "injected_chars",
                (pl.col(key) == getattr(here, key)).alias("current"),
            )
        )
    return pl.concat(parts)


def _setting(p: Params) -> str:
    return ", ".join(f"{k} {getattr(p, k):g}" for k in KEYS)


def _write(con: duckdb.DuckDBPyConnection, hits: list[Hit]) -> None:
    cols = ("kind", "severity", "decision_id", "conversation_id", "position", "alternative", "detail", "project")
    data = {c: [getattr(h, c) for h in hits] for c in cols}
    _hits = stream(  # noqa: F841 - read by the scan below
        pl.DataFrame(
            {**data, "positions": [h.positions for h in hits]},
            {**{c: pl.Int32 if c == "position" else pl.String for c in cols}, "positions": pl.List(pl.Int32)},
        )
    )
    con.execute(f"CREATE OR REPLACE TABLE {FINDINGS_TABLE} AS SELECT * FROM _hits")


def _decision_table(decisions: list[decisions_mod.Decision]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "decision_id": d.decision_id,
                "project": d.project,
                "type": d.decision_type,
                "title": d.title,
                "content": d.content,
                "rejected": ", ".join(a for a, _ in d.alternatives),
                "importance": d.importance,
                "made_at": d.made_at,
                "follows": d.predecessor.decision_id if d.predecessor else None,
            }
            for d in decisions
        ],
        infer_schema_length=None,
    )  # a column empty for the first rows must not fix its type


def _question_table(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "line": r["line"],
                "project_id": r["project_id"],
                "question": r["question"],
                "expected": ", ".join(r["expected"]),
                "injected": ", ".join(r["injected"]),
                "first_rank": r["first_rank"],
                "recall": r["recall"],
                "reciprocal_rank": r["reciprocal_rank"],
                "injected_chars": r["injected_chars"],
            }
            for r in rows
        ],
        schema_overrides={"first_rank": pl.Int64, "recall": pl.Float64},
        infer_schema_length=None,
    )


def _summary(m: dict[str, Any]) -> str:
    f, hi = m["findings"], m["findings_high"]
    text = (
        f"{m['decisions']} recorded decisions ({m['alternatives']} rejected options) over "
        f"{m['conversation_count']} conversations in {m['projects']} projects: {f['relitigation']} "
        f"relitigations ({hi['relitigation']} weighing the options again), {f['decision_not_recalled']} "
        f"questions answered without the decision ({hi['decision_not_recalled']} weighing rejected options), "
        f"{f['decision_conflict']} conflicting decisions, {f['decision_unrecorded']} decisions stated but never "
        "recorded."
    )
    r = m.get("retrieval")
    if r is None:
        return text + " Pass `--questions FILE` to replay the harness's retrieval on a fixed question set."
    if not r["questions"]:
        return text + " The question file expects no decision: nothing to score."
    base = r["recent_baseline"]
    return text + (
        f" Retrieval replay on {r['questions']} questions ({_setting(Params(*[r[k] for k in KEYS]))}): "
        f"recall@{r['top_k']} {r['recall_at_k']:.2f}, MRR {r['mrr']:.2f}, {r['injected_chars']:,.0f} "
        f"characters injected per question; injecting the {r['top_k']} most recent decisions instead "
        f"scores recall@{r['top_k']} {base['recall_at_k']:.2f}, MRR {base['mrr']:.2f}."
        + (
            f" {r['unknown_expected_ids']} expected ids name no decision in the warehouse."
            if r["unknown_expected_ids"]
            else ""
        )
        + (f" {r['unknown_projects']} questions name a project without decisions." if r["unknown_projects"] else "")
    )


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    sections=declared.SECTIONS,
    keys=declared.KEYS,
    checks=(
        CheckRule("memory.retrieval.recall_at_k", "higher", 0.02, False),
        CheckRule("memory.retrieval.mrr", "higher", 0.02, False),
        CheckRule("memory.retrieval.injected_chars", "lower", 0.10, True),
        CheckRule("memory.findings*", "lower", 0.0, False),
    ),
    tuners=(
        Tuner(
            tune.memory_retrieval,
            ("memory.top_k", "memory.similarity_threshold", "memory.time_decay", "memory.importance_weight"),
        ),
    ),
    charts={"retrieval_sweep": draw.retrieval_sweep},
    tables=(derived.Table("memory_findings", "whole", "the decision-memory audit's findings"),),
    settings=(MemorySettings,),
)
