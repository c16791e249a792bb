"""Retrieval replay (docs/memory.md#retrieval-replay---questions-file): the seed's ``retrieve_decisions`` ranking, question by question.

For a question of project P at time ``at``, every decision of P scores
``similarity / (1 + time_decay * age_days) + importance_weight * importance_score``; those with
similarity ≥ ``similarity_threshold`` are ranked (ties: the newer first, as the seed's ``ORDER BY created_at
DESC`` then a stable sort) and the ``top_k`` best are injected. ``age_days`` is whole days, as the seed's
``(now - created_at).days``, never negative. similarity is the cosine of the stored embeddings when the
question carries one and the decision has one of the same length, else the TF-IDF cosine of the tokenizer's content
tokens of the question and the decision's title + content (scikit-learn: raw counts, smoothed idf
``ln((1 + n) / (1 + df)) + 1`` over the n decisions of the project, l2 norm).

Similarities and ages are computed once; any setting, and the whole sweep, ranks from them. The injected
size is the length of the block the seed's ``build_decision_context`` writes for the injected decisions.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import product
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl

from forensics.analyzers.input_jsonl import json_lines
from forensics.kernel.errors import ForensicsError
from forensics.text.keywords import content_tokens
from forensics.text.tfidf import Tfidf, cosines

DAY = 86400.0
EPS = 1e-12  # a cosine computed as 0.29999999999 still meets a threshold of 0.3
HEADER = "历史决策记录(以下决策优先级最高。除非用户明确表示要变更决策,否则回答必须与以下决策保持一致):"
KEYS = ("top_k", "similarity_threshold", "time_decay", "importance_weight")
GRID = {
    "top_k": (1, 2, 3, 5, 10),
    "similarity_threshold": (0.2, 0.3, 0.4, 0.5, 0.6),
    "time_decay": (0.0, 0.01, 0.02, 0.05, 0.1, 0.2),
    "importance_weight": (0.0, 0.1, 0.2, 0.3, 0.5),
}


@dataclass(frozen=True)
class Question:
    line: int
    project: str
    text: str
    at: float  # epoch seconds
    expected: tuple[str, ...]
    embedding: tuple[float, ...] | None


@dataclass(frozen=True)
class Params:
    top_k: int
    similarity_threshold: float
    time_decay: float
    importance_weight: float

    @classmethod
    def of(cls, memory: Any) -> Params:
        return cls(
            int(memory.top_k),
            float(memory.similarity_threshold),
            float(memory.time_decay),
            float(memory.importance_weight),
        )


def read_questions(path: str | os.PathLike[str]) -> list[Question]:
    """The question file: JSONL ``{"project_id", "question", "at", "expected": [ids], "embedding"?: [...]}``."""
    p = Path(path)
    out = []
    for n, q in json_lines(p, "the questions", "the question file is JSONL, one question per line"):
        if not isinstance(q, dict):
            raise ForensicsError(f"{p}:{n}: a question is a JSON object")
        out.append(_question(p, n, q))
    if not out:
        raise ForensicsError(f"{p}: no question in this file")
    return out


def _question(p: Path, n: int, q: dict[str, Any]) -> Question:
    def bad(what: str) -> ForensicsError:
        return ForensicsError(
            f'{p}:{n}: {what} (a line is {{"project_id", "question", "at", "expected": '
            '[decision ids], "embedding"?: [numbers]}})'
        )

    project, text, at, expected = q.get("project_id"), q.get("question"), _epoch(q.get("at")), q.get("expected")
    if not isinstance(project, (str, int)) or isinstance(project, bool):
        raise bad("project_id missing")
    if not isinstance(text, str) or not text.strip():
        raise bad("question missing or empty")
    if at is None:
        raise bad(f"at {q.get('at')!r} is not an ISO time or epoch seconds")
    if not isinstance(expected, list) or not all(
        isinstance(x, (str, int)) and not isinstance(x, bool) for x in expected
    ):
        raise bad("expected must be a list of decision ids")
    emb = q.get("embedding")
    if emb is not None and not (
        isinstance(emb, list)
        and emb
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in emb)
    ):
        raise bad("embedding must be a non-empty list of numbers")
    return Question(
        n,
        str(project),
        text,
        at,
        tuple(dict.fromkeys(str(x) for x in expected)),
        tuple(float(x) for x in emb) if emb else None,
    )


def _epoch(v: Any) -> float | None:
    """A question's ``at``: epoch seconds (or milliseconds), or ISO text, naive meaning UTC as in the warehouse."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v / 1000.0 if v > 1e11 else float(v)
    if not isinstance(v, str):
        return None
    try:
        d = datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()


@dataclass
class _Project:
    """One project's decisions (newest first: ties rank the newer first, as the seed's ORDER BY created_at DESC
    and stable sort) and its questions' similarity and age to each, as matrices (question × decision)."""

    ids: list[str]
    created: np.ndarray  # epoch seconds, NaN when unknown
    importance: np.ndarray
    line_chars: np.ndarray  # characters of each decision's line in the injected block
    rows: list[int]  # the questions of this project (indices into Replay.questions)
    sim: np.ndarray
    age: np.ndarray  # whole days, never negative
    expected: np.ndarray  # bool: the decision is one the question expects


class Replay:
    """The questions against the warehouse's decisions: similarity and age per (question, decision), once."""

    def __init__(self, con: duckdb.DuckDBPyConnection, questions: list[Question], mode: str) -> None:
        self.questions = questions
        rows = con.execute("""
            SELECT project, decision_id, title, decision_content, reason, alternative_rejected, decision_type,
                   importance_score, epoch(created_at), created_at, embedding
            FROM decisions ORDER BY project, created_at DESC NULLS LAST, source_id, decision_id""").fetchall()
        docs: dict[str, list[tuple[Any, ...]]] = {}
        for r in rows:
            docs.setdefault(r[0] or "", []).append(r)
        asked: dict[str, list[int]] = {}
        for i, q in enumerate(questions):
            asked.setdefault(q.project, []).append(i)
        self.projects = {
            k: _project(docs[k], [questions[i] for i in v], v, mode) for k, v in asked.items() if k in docs
        }
        self.where = {i: (p, n) for p in self.projects.values() for n, i in enumerate(p.rows)}
        self.scored = [i for i, q in enumerate(questions) if q.expected]

    def ranking(self, i: int, p: Params) -> np.ndarray:
        """Decision indices (into the question's project) in injection order, all that pass the threshold."""
        if i not in self.where:
            return np.zeros(0, dtype=int)
        proj, n = self.where[i]
        sim = proj.sim[n]
        order = np.argsort(
            -(sim / (1.0 + p.time_decay * proj.age[n]) + p.importance_weight * proj.importance), kind="stable"
        )
        picked: np.ndarray = order[sim[order] >= p.similarity_threshold - EPS]
        return picked

    def per_question(self, p: Params) -> list[dict[str, Any]]:
        out = []
        for i, q in enumerate(self.questions):
            picked = self.ranking(i, p)[: p.top_k]
            proj = self.where[i][0] if i in self.where else None
            out.append(_judge(q, [proj.ids[j] for j in picked] if proj else [], _chars(proj, picked)))
        return out

    def summary(self, p: Params) -> dict[str, Any]:
        """recall@k, MRR and mean injected characters over the questions that expect something."""
        rows = self.per_question(p)
        scored = [rows[i] for i in self.scored]
        base = [_judge(self.questions[i], self._recent(i, p.top_k), 0) for i in self.scored]
        known = {d for proj in self.projects.values() for d in proj.ids}
        return {
            **_params_dict(p),
            "questions": len(scored),
            "unscored_questions": len(rows) - len(scored),
            "unknown_projects": sum(q.project not in self.projects for q in self.questions),
            "unknown_expected_ids": sum(e not in known for q in self.questions for e in q.expected),
            "recall_at_k": _mean([r["recall"] for r in scored]),
            "mrr": _mean([r["reciprocal_rank"] for r in scored]),
            "injected_chars": _mean([r["injected_chars"] for r in scored]),
            "recent_baseline": {
                "recall_at_k": _mean([r["recall"] for r in base]),
                "mrr": _mean([r["reciprocal_rank"] for r in base]),
            },
            "per_question": rows,
        }

    def _recent(self, i: int, k: int) -> list[str]:
        """The trivial baseline: the k decisions of the project recorded last before the question."""
        if i not in self.where:
            return []
        proj = self.where[i][0]
        return [d for d, t in zip(proj.ids, proj.created) if t <= self.questions[i].at][:k]

    def sweep(self, current: Params) -> pl.DataFrame:
        """recall@k, MRR and injected characters at every point of GRID (and the current values). The scored
        questions of every project are stacked into one matrix (decisions padded to the largest project, the
        padding never passing a threshold): one sort per (time_decay, importance_weight), thresholds and top_k
        read prefixes of it."""
        grid = {k: sorted({*GRID[k], getattr(current, k)}) for k in KEYS}
        sim, age, importance, want, chars = self._stacked()
        need = np.maximum(want.sum(axis=1), 1)
        n = len(self.scored) or 1
        out = []
        for decay, weight in product(grid["time_decay"], grid["importance_weight"]):
            order = np.argsort(-(sim / (1.0 + decay * age) + weight * importance), axis=1, kind="stable")
            s_sorted, hit, c_sorted = (np.take_along_axis(m, order, 1) for m in (sim, want, chars))
            for thr in grid["similarity_threshold"]:
                passed = s_sorted >= thr - EPS
                rank = np.cumsum(passed, axis=1)  # 1-based rank among the decisions passing the threshold
                for k in grid["top_k"]:
                    take = passed & (rank <= k)
                    got = hit & take
                    first = np.where(got.any(axis=1), np.where(got, rank, k + 1).min(axis=1), 0)
                    n_in = take.sum(axis=1)
                    out.append(
                        {
                            "time_decay": decay,
                            "importance_weight": weight,
                            "top_k": k,
                            "similarity_threshold": thr,
                            "recall_at_k": float((got.sum(axis=1) / need).sum() / n),
                            "mrr": float(np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0).sum() / n),
                            "injected_chars": float(
                                np.where(n_in > 0, len(HEADER) + (c_sorted * take).sum(axis=1) + n_in, 0).sum() / n
                            ),
                        }
                    )
        return pl.DataFrame(out)

    def _stacked(self) -> tuple[np.ndarray, ...]:
        """(similarity, age, importance, expected, line characters) for the scored questions, question × decision."""
        rows = [self.where[i] for i in self.scored if i in self.where]
        width = max((len(p.ids) for p, _ in rows), default=1)  # at least one (padding) column to reduce over
        sim = np.full((len(rows), width), -np.inf)
        age, importance, chars = (np.zeros((len(rows), width)) for _ in range(3))
        want = np.zeros((len(rows), width), dtype=bool)
        for r, (p, n) in enumerate(rows):
            d = len(p.ids)
            sim[r, :d], age[r, :d], importance[r, :d] = p.sim[n], p.age[n], p.importance
            want[r, :d], chars[r, :d] = p.expected[n], p.line_chars
        return sim, age, importance, want, chars


def _project(docs: list[tuple[Any, ...]], questions: list[Question], rows: list[int], mode: str) -> _Project:
    created = np.array([np.nan if r[8] is None else float(r[8]) for r in docs])
    ids = [str(r[1]) for r in docs]
    sim = _tfidf(docs, mode)([q.text for q in questions])
    for n, q in enumerate(questions):
        if q.embedding is not None:
            for j, r in enumerate(docs):
                if r[10] is not None and len(r[10]) == len(q.embedding):
                    sim[n, j] = _cosine(q.embedding, r[10])
    at = np.array([q.at for q in questions])[:, None]
    age = np.maximum(np.nan_to_num(np.floor((at - created[None, :]) / DAY), nan=0.0), 0.0)
    expected = np.array([[d in q.expected for d in ids] for q in questions], dtype=bool).reshape(len(questions), -1)
    return _Project(
        ids,
        created,
        np.array([float(r[7]) if r[7] is not None else 1.0 for r in docs]),
        np.array([len(_line(r)) for r in docs]),
        rows,
        sim,
        age,
        expected,
    )


def _params_dict(p: Params) -> dict[str, Any]:
    return {k: getattr(p, k) for k in KEYS}


def _judge(q: Question, injected: list[str], chars: int) -> dict[str, Any]:
    first = next((n for n, d in enumerate(injected, 1) if d in q.expected), None)
    hits = sum(e in injected for e in q.expected)
    return {
        "line": q.line,
        "project_id": q.project,
        "question": q.text,
        "expected": list(q.expected),
        "injected": injected,
        "first_rank": first,
        "recall": hits / len(q.expected) if q.expected else None,
        "reciprocal_rank": 1.0 / first if first else 0.0,
        "injected_chars": chars,
    }


def _chars(proj: _Project | None, picked: np.ndarray) -> int:
    """Length of the seed's block: the header and one line per decision, newline-joined; nothing when empty."""
    if proj is None or len(picked) == 0:
        return 0
    return len(HEADER) + int(proj.line_chars[picked].sum()) + len(picked)


def _line(r: tuple[Any, ...]) -> str:
    """One decision as the seed's build_decision_context writes it."""
    _, _, title, content, reason, rejected, dtype, _, _, created, _ = r
    stamp = created.isoformat() if created is not None else ""
    return (
        f"- [{stamp}] [{dtype or ''}] {title or ''}。结论:{content or ''}。理由:{reason or '未记录'}。"
        f"被否决方案:{rejected or '无'}。"
    )


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _cosine(a: tuple[float, ...], b: list[float]) -> float:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm else 0.0


def _tfidf(rows: list[tuple[Any, ...]], mode: str) -> Callable[[list[str]], np.ndarray]:
    """A function question texts -> TF-IDF cosine of each with each decision of the project (title + content)."""
    docs = [content_tokens(f"{r[2] or ''} {r[3] or ''}", mode) for r in rows]
    if not any(docs):
        return lambda texts: np.zeros((len(texts), len(rows)))
    fit = Tfidf(docs)  # raw counts, smooth idf, l2 norm

    def similarity(texts: list[str]) -> np.ndarray:
        return cosines(fit.transform([content_tokens(t, mode) for t in texts]), fit.rows)

    return similarity
