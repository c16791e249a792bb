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
from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.analyzers.memory import decisions as decisions_mod
from forensics.analyzers.memory import draw, tune
from forensics.analyzers.memory.retrieval import KEYS, Params, Replay, read_questions
from forensics.analyzers.memory.rules import KINDS, Hit, find
from forensics.analyzers.memory.settings import MemorySettings
from forensics.config import Config, Key
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
    sections={
        "memory": "Decision memory (docs/memory.md): the harness's retrieval and the cues the memory analyzer reads."
    },
    keys=(
        Key("memory", "top_k", 5, "decisions injected into the prompt per question", "decisions", "MEMORY_TOP_K"),
        Key(
            "memory",
            "similarity_threshold",
            0.3,
            "decisions less similar to the question than this are not injected",
            "cosine",
            "MEMORY_SIMILARITY_THRESHOLD",
        ),
        Key(
            "memory",
            "time_decay",
            0.05,
            "score = similarity / (1 + time_decay * age_days) + importance_weight * importance_score",
            "per day",
            "MEMORY_TIME_DECAY",
        ),
        Key(
            "memory",
            "importance_weight",
            0.1,
            "weight of a decision's importance_score in its score",
            "",
            "MEMORY_IMPORTANCE_WEIGHT",
        ),
        Key(
            "memory",
            "negation_cues",
            [
                "不再考虑",
                "已否决",
                "否决",
                "放弃",
                "不用",
                "不选",
                "而不是",
                "而非",
                "不是",
                "不考虑",
                "排除",
                "不采用",
                "不使用",
                "弃用",
                "淘汰",
                "别用",
                "没选",
                "未选",
                "不推荐",
                "不建议",
                "不需要",
                "无需",
                "不必",
                "ruled out",
                "rejected",
                "instead of",
                "rather than",
                "not X",
                "over X",
                "decided against",
                "no longer",
                "dropped",
                "won't use",
                "abandoned",
                "avoid",
                "no need",
                "don't need",
            ],
            "a sentence with one of these rejects the options it names, so naming a rejected option there is no "
            "relitigation; X stands for the option (not X: 'not MongoDB')",
            "phrases",
        ),
        Key(
            "memory",
            "weighing_cues",
            [
                "对比",
                "比较",
                "还是",
                "或者",
                "优缺点",
                "权衡",
                "相比",
                "vs",
                "versus",
                "compare",
                "comparison",
                "pros and cons",
                "trade-off",
                "or",
            ],
            "a relitigating message with one of these weighs the options again: severity high",
            "phrases",
        ),
        Key(
            "memory",
            "decision_cues",
            [
                "决定",
                "X 定了",
                "定了",
                "就用",
                "确定用",
                "确定为",
                "确定采用",
                "确定选用",
                "选定",
                "选用",
                "采用",
                "定为",
                "敲定",
                "拍板",
                "改用",
                "还是用",
                "统一用",
                "换成",
                "就选",
                "定成",
                "定下来用",
                "就 X 吧",
                "不用 X 了",
                "不再用 X 了",
                "we decided",
                "we'll go with",
                "we will go with",
                "let's use",
                "let's go with",
                "decided to",
            ],
            "a sentence with one of these states a decision when it names the chosen option after the cue (or, for a cue "
            "written X cue, before it: 'Loki 定了'; for one written A X B, a product, version or date between: 就 Kafka 吧, 不用 MySQL 了); Chinese cues must fall on jieba word boundaries (稳定了 is no 定了) "
            "and a cue right after 不/没/未/别 is negated (不采用 MongoDB chooses nothing)",
            "phrases",
        ),
        Key(
            "memory",
            "undecided_cues",
            [
                "还没",
                "没决定",
                "没有决定",
                "未决定",
                "尚未",
                "没定",
                "待定",
                "不确定",
                "再决定",
                "再说",
                "如果",
                "假如",
                "要是",
                "是否",
                "考虑中",
                "决定不了",
                "难以决定",
                "决定之前",
                "这个决定",
                "那个决定",
                "的决定",
                "该决定",
                "你决定",
                "你来定",
                "由你",
                "not decided",
                "haven't decided",
                "have not decided",
                "undecided",
                "not yet",
                "yet to",
                "if we",
                "whether",
                "before we decide",
                "still deciding",
                "to be decided",
                "tbd",
                "up to you",
                "your call",
                "或者",
                "或是",
                "可以用",
                "可以采用",
                "可以选",
                "we could",
                "could use",
                "想想",
                "think about",
                "let me think",
            ],
            "a decision-cue sentence with one of these is pending or negated (还没决定, not decided yet), speaks of a "
            "decision rather than makes one (这个决定, 由你决定) or only lists or proposes options (可以采用 A 或者 B): "
            "not a decision",
            "phrases",
        ),
        Key(
            "memory",
            "supersede_cues",
            [
                "改为",
                "改用",
                "改成",
                "替代",
                "取代",
                "代替",
                "替换",
                "变更",
                "推翻",
                "撤销",
                "作废",
                "不再使用",
                "之前的决定",
                "原决定",
                "supersede",
                "supersedes",
                "replaces",
                "replace",
                "switch to",
                "switching to",
                "changed to",
                "instead of the",
                "overrides",
                "reverses",
                "no longer",
            ],
            "a later decision whose title, content, reason or source message has one of these supersedes an earlier "
            "one: no decision_conflict",
            "phrases",
        ),
        Key(
            "memory",
            "question_cues",
            [
                "?",
                "？",
                "吗",
                "什么",
                "哪",
                "怎么",
                "如何",
                "是否",
                "呢",
                "为什么",
                "请问",
                "介绍",
                "说说",
                "讲讲",
                "告诉我",
                "推荐",
                "建议",
                "what",
                "which",
                "how",
                "should we",
                "do we",
                "did we",
                "are we",
                "have we",
                "is it",
                "tell me",
                "remind me",
                "recommend",
                "suggest",
            ],
            "a user message with one of these asks or requests (decision_not_recalled); a decision-cue sentence with "
            "one of these is a question or a suggestion, not a decision",
            "phrases",
        ),
        Key(
            "memory",
            "decision_roles",
            ["user", "assistant"],
            "roles whose messages can state an unrecorded decision: "
            "the user's statement, or the assistant's answer to the user's question that the user's next message "
            "accepts or builds on (an assistant's 'let's use' nobody answered, or the user turned down, is a proposal)",
            "roles",
            choices=("user", "assistant"),
        ),
        Key(
            "memory",
            "declined_cues",
            [
                "no",
                "nope",
                "not",
                "don't",
                "do not",
                "rather not",
                "instead",
                "不",
                "不要",
                "不行",
                "不用",
                "算了",
                "别",
                "换一个",
            ],
            "a user reply whose first sentence has one of these turns the assistant's proposed decision down (Chinese "
            "cues on jieba word boundaries: 不错 is no 不)",
            "phrases",
        ),
        Key(
            "memory",
            "weak_decision_cues",
            [
                "我们用",
                "我用",
                "I'll use",
                "we'll use",
                "we will use",
                "I'm going with",
                "going with",
                "I'll go with",
                "I'd go with",
                "I'll switch",
                "let's switch",
                "we'll switch",
                "switch to",
                "I'll stick with",
                "let's stick with",
            ],
            "these state a decision only beside a contrast cue in the sentence (I'll use X instead of Y) or, said by the "
            "assistant, when the user's next message agrees (an agreement cue): alone they narrate ('I'll use grep')",
            "phrases",
        ),
        Key(
            "memory",
            "contrast_cues",
            [
                "instead of",
                "instead",
                "rather than",
                ", not",
                "over",
                "and drop",
                "not use",
                "不用",
                "而不是",
                "而非",
                "替掉",
                "取代",
                "代替",
                "太重",
                "有问题",
            ],
            "a weak decision cue's sentence with one of these sets the option against another: a decision",
            "phrases",
        ),
        Key(
            "memory",
            "agreement_cues",
            [
                "ok",
                "okay",
                "yes",
                "sure",
                "sounds good",
                "great",
                "perfect",
                "fine",
                "agreed",
                "go ahead",
                "do it",
                "lgtm",
                "好",
                "好的",
                "行",
                "可以",
                "同意",
                "嗯",
                "没问题",
                "就这样",
            ],
            "a user reply whose first sentence has one of these agrees: it ratifies the assistant's weak decision cue, "
            "or its recommendation of one option of the user's 'X or Y?' (Chinese cues on jieba word boundaries)",
            "phrases",
        ),
        Key(
            "memory",
            "recommend_cues",
            ["suggest", "recommend", "I'd go with", "I'd pick", "I'd use", "prefer", "建议", "推荐", "倾向"],
            "an assistant sentence with one of these naming exactly one option of the user's 'X or Y?' recommends it",
            "phrases",
        ),
        Key(
            "memory",
            "question_match",
            0.5,
            "a user question is about a decision when it holds this share of the "
            "decision title's terms (and at least two of them)",
            "share",
        ),
        Key(
            "memory",
            "conflict_title_match",
            0.8,
            "two decisions of one project and type are about the same matter "
            "when their titles' terms overlap this much (Jaccard): 用户服务 and 订单服务 数据库选型 are two matters",
            "Jaccard",
        ),
    ),
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
