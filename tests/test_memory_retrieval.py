"""Decision-memory retrieval replay (docs/memory.md#retrieval-replay---questions-file): recall@k, MRR and injected size against a hand computation.

The expectation is computed here, from the seed's formula and the fixture's own SQLite files (read with
sqlite3, not through the warehouse): cosine of the stored float32 vectors, else TF-IDF written out with
math.log, whole-day ages, the threshold on similarity, ties to the newer decision, the seed's prompt block.
"""

from __future__ import annotations

import functools
import json
import math
import re
import shutil
import sqlite3
import struct
from collections import Counter
from datetime import datetime
from itertools import product
from pathlib import Path

import pytest

from forensics import api, ingest
from forensics.text.keywords import content_tokens
from tests.conftest import FIXTURES, run_cli

QUESTIONS = FIXTURES / "labels" / "memory.questions.jsonl"
HARNESS = FIXTURES / "memory" / "harness.db"
HEADER = "历史决策记录(以下决策优先级最高。除非用户明确表示要变更决策,否则回答必须与以下决策保持一致):"
DEFAULTS = {"top_k": 5, "similarity_threshold": 0.3, "time_decay": 0.05, "importance_weight": 0.1}


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("memret") / "w.duckdb"
    ingest([FIXTURES / "memory"], db=db)
    return db


# ------------------------------------------------------------------ the hand computation
def _decisions() -> dict[str, list[dict]]:
    con = sqlite3.connect(HARNESS)
    vec = {
        str(i): struct.unpack(f"<{len(b) // 4}f", b)
        for i, b in con.execute("SELECT decision_id, embedding FROM decision_embeddings")
    }
    out: dict[str, list[dict]] = {}
    for did, project, dtype, title, body, reason, rejected, imp, created in con.execute(
        "SELECT id, project_id, decision_type, title, decision_content, reason, alternative_rejected, "
        "importance_score, created_at FROM decision_events"
    ):
        out.setdefault(project, []).append(
            {
                "id": str(did),
                "type": dtype,
                "title": title,
                "content": body,
                "reason": reason,
                "rejected": rejected,
                "importance": imp,
                "created": datetime.fromisoformat(created),
                "vec": vec.get(str(did)),
            }
        )
    return out


def _tfidf(docs: list[list[str]], query: list[str]) -> list[float]:
    """TF-IDF cosine: raw counts, idf = ln((1 + n) / (1 + df)) + 1, l2 norm."""
    n, df = len(docs), Counter(t for d in docs for t in set(d))
    idf = {t: math.log((1 + n) / (1 + c)) + 1 for t, c in df.items()}

    def unit(tokens: list[str]) -> dict[str, float]:
        v = {t: c * idf[t] for t, c in Counter(tokens).items() if t in idf}
        norm = math.sqrt(sum(x * x for x in v.values()))
        return {t: x / norm for t, x in v.items()} if norm else {}

    q = unit(query)
    return [sum(w * unit(d).get(t, 0.0) for t, w in q.items()) for d in docs]


def _cos(a: tuple | list, b: tuple | list) -> float:
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _similarities(questions: list[dict], decisions: dict[str, list[dict]]) -> list[list[float]]:
    out = []
    for q in questions:
        ds = decisions[q["project_id"]]
        tf = _tfidf([content_tokens(f"{d['title']} {d['content']}") for d in ds], content_tokens(q["question"]))
        out.append([_cos(q["embedding"], d["vec"]) if q.get("embedding") and d["vec"] else s for d, s in zip(ds, tf)])
    return out


def _ranked(q: dict, ds: list[dict], sims: list[float], p: dict) -> list[dict]:
    at = datetime.fromisoformat(q["at"])
    scored = []
    for d, s in zip(ds, sims):
        if s >= p["similarity_threshold"] - 1e-12:
            age = max((at - d["created"]).days, 0)
            scored.append((s / (1 + p["time_decay"] * age) + p["importance_weight"] * d["importance"], d["created"], d))
    scored.sort(key=lambda x: (-x[0], -x[1].timestamp()))
    return [d for _, _, d in scored[: p["top_k"]]]


def _block(ds: list[dict]) -> str:
    if not ds:
        return ""
    return "\n".join(
        [HEADER]
        + [
            f"- [{d['created'].isoformat()}] [{d['type']}] {d['title']}。结论:{d['content']}。"
            f"理由:{d['reason'] or '未记录'}。被否决方案:{d['rejected'] or '无'}。"
            for d in ds
        ]
    )


@functools.lru_cache(maxsize=1)
def _setup() -> tuple[list[dict], dict[str, list[dict]], list[list[float]]]:
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    decisions = _decisions()
    return questions, decisions, _similarities(questions, decisions)


def _by_hand(p: dict) -> tuple[float, float, float, list[list[str]]]:
    questions, decisions, similarities = _setup()
    recall = rr = chars = 0.0
    injected = []
    for q, sims in zip(questions, similarities):
        picked = _ranked(q, decisions[q["project_id"]], sims, p)
        ids = [d["id"] for d in picked]
        want = [str(e) for e in q["expected"]]
        recall += sum(e in ids for e in want) / len(want)
        rr += next((1 / (i + 1) for i, d in enumerate(ids) if d in want), 0.0)
        chars += len(_block(picked))
        injected.append(ids)
    n = len(questions)
    return recall / n, rr / n, chars / n, injected


# ------------------------------------------------------------------ the tests
def test_recall_mrr_and_injected_size_at_the_defaults_equal_the_hand_computation(wh: Path, tmp_path: Path) -> None:
    recall, mrr, chars, injected = _by_hand(DEFAULTS)
    assert (recall, mrr) == (0.875, 0.71875)  # 7 of 8 found; ranks 1, 4, 1, 1, -, 1+1, 1, 2
    code, out, err = run_cli(
        "report",
        "--db",
        str(wh),
        "--only",
        "memory",
        "--out",
        str(tmp_path),
        "--format",
        "json",
        "--questions",
        str(QUESTIONS),
    )
    assert code == 0, err
    r = json.loads((tmp_path / "metrics.json").read_text())["sections"]["memory"]["retrieval"]
    assert (r["recall_at_k"], r["mrr"]) == (recall, mrr)
    assert r["injected_chars"] == pytest.approx(chars, abs=1e-9)
    assert [q["injected"] for q in r["per_question"]] == injected
    assert injected[4] == ["4", "8", "1"]  # TiDB (similarity 0.276) is under the 0.3 threshold
    assert (r["questions"], r["unknown_expected_ids"], r["unknown_projects"]) == (8, 0, 0)
    assert r["recent_baseline"] == pytest.approx(_recent_by_hand(5))  # printed beside, as a floor


def _recent_by_hand(k: int) -> dict[str, float]:
    """The trivial baseline: the k decisions of the project recorded last before the question."""
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    decisions = _decisions()
    recall = rr = 0.0
    for q in questions:
        at = datetime.fromisoformat(q["at"])
        ids = [
            d["id"]
            for d in sorted(decisions[q["project_id"]], key=lambda d: d["created"], reverse=True)
            if d["created"] <= at
        ][:k]
        want = [str(e) for e in q["expected"]]
        recall += sum(e in ids for e in want) / len(want)
        rr += next((1 / (i + 1) for i, d in enumerate(ids) if d in want), 0.0)
    return {"recall_at_k": recall / len(questions), "mrr": rr / len(questions)}


@pytest.mark.parametrize(
    ("change", "line", "rank_before", "rank_after"),
    [
        ({"time_decay": 0.0}, 1, 1, 2),  # without decay the older, a little more similar ELK decision outranks Loki
        ({"importance_weight": 0.3}, 2, 4, 1),  # the important backup policy overtakes the more similar pool settings
    ],
)
def test_questions_whose_answer_depends_on_decay_and_importance(
    wh: Path, change: dict, line: int, rank_before: int, rank_after: int
) -> None:
    from forensics.analyzers.memory.retrieval import Params, Replay, read_questions
    from forensics.warehouse import open_warehouse

    with open_warehouse(wh, read_only=True) as w:
        rep = Replay(w.con, read_questions(QUESTIONS), "jieba+bigram")
        before = rep.per_question(Params(**DEFAULTS))[line - 1]["first_rank"]
        after = rep.per_question(Params(**{**DEFAULTS, **change}))[line - 1]["first_rank"]
    assert (before, after) == (rank_before, rank_after)
    hand = _by_hand({**DEFAULTS, **change})[3][line - 1]
    expected = json.loads(QUESTIONS.read_text(encoding="utf-8").splitlines()[line - 1])["expected"]
    assert hand.index(str(expected[0])) + 1 == rank_after


def test_the_api_twin_replays_the_same_questions(wh: Path, tmp_path: Path) -> None:
    result, files = api.report(wh, tmp_path, ["md"], only="memory", questions=str(QUESTIONS))
    sec = result.section("memory")
    assert sec.metrics["retrieval"]["mrr"] == 0.71875
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "recall@5 0.88, MRR 0.72" in md and "injecting the 5 most recent decisions instead scores" in md
    sweep = next(t.df for t in sec.tables if t.name == "sweep")
    assert sweep.filter(sweep["current"]).height == 4  # one row per key at the config's value
    chart = next(c for c in sec.charts if c.name == "retrieval_sweep")
    assert chart.data == sweep.to_dicts()  # the analyzer hands over data; the report layer draws it
    svg = (tmp_path / "charts" / "memory_retrieval_sweep.svg").read_text(encoding="utf-8")
    assert all(re.search(rf"<text[^>]*>{k}</text>", svg) for k in DEFAULTS)  # one panel per key, labels as text
    assert "![Retrieval sweep: recall@5 and MRR, one key varied at a time](charts/memory_retrieval_sweep.svg)" in md


def test_tune_recommends_the_best_point_of_the_sweep_and_writes_it(wh: Path, tmp_path: Path) -> None:
    grid = {
        "top_k": (1, 2, 3, 5, 10),
        "similarity_threshold": (0.2, 0.3, 0.4, 0.5, 0.6),
        "time_decay": (0.0, 0.01, 0.02, 0.05, 0.1, 0.2),
        "importance_weight": (0.0, 0.1, 0.2, 0.3, 0.5),
    }
    points = [dict(zip(grid, v)) for v in product(*grid.values())]
    best = max(
        points,
        key=lambda p: (
            lambda r: (round(r[0], 9), round(r[1], 9), -round(r[2], 6), -sum(p[k] != DEFAULTS[k] for k in p))
        )(_by_hand(p)),
    )
    assert {k: best[k] for k in ("similarity_threshold", "importance_weight")} == {
        "similarity_threshold": 0.2,
        "importance_weight": 0.3,
    }
    cfg = tmp_path / "harness.toml"
    code, out, err = run_cli("tune", "--db", str(wh), "--config", str(cfg), "--questions", str(QUESTIONS), "--json")
    assert code == 0, err
    recs = {r["key"]: r for r in json.loads(out) if r["key"].startswith("memory.")}
    assert {k.split(".")[1]: r["recommended"] for k, r in recs.items()} == best
    (r0, m0, c0, _), (r1, m1, c1, _) = _by_hand(DEFAULTS), _by_hand(best)
    assert recs["memory.similarity_threshold"]["evidence"] == (
        f"similarity_threshold 0.3 → 0.2, importance_weight 0.1 → 0.3: recall@5 {r0:.2f} → {r1:.2f}, MRR {m0:.2f} → "
        f"{m1:.2f} on 8 questions, injected {c0:.0f} → {c1:.0f} chars"
    )
    assert (r0, r1) == (0.875, 1.0)
    code, _, err = run_cli("tune", "--db", str(wh), "--config", str(cfg), "--questions", str(QUESTIONS), "--write")
    assert code == 0, err
    text = cfg.read_text(encoding="utf-8")
    assert "similarity_threshold = 0.2" in text and "importance_weight = 0.3" in text
    code, out, err = run_cli("tune", "--db", str(wh), "--config", str(cfg), "--questions", str(QUESTIONS), "--json")
    again = {r["key"]: r for r in json.loads(out) if r["key"].startswith("memory.")}
    assert all(not r["recommended"] != r["current"] for r in again.values())
    assert again["memory.top_k"]["evidence"].startswith("the current values score best of")


def test_without_a_question_file_tune_keeps_the_memory_keys_and_says_why(wh: Path, tmp_path: Path) -> None:
    code, out, err = run_cli("tune", "--db", str(wh), "--config", str(tmp_path / "h.toml"), "--json")
    assert code == 0, err
    recs = [r for r in json.loads(out) if r["key"].startswith("memory.")]
    assert [r["key"] for r in recs] == [
        "memory.top_k",
        "memory.similarity_threshold",
        "memory.time_decay",
        "memory.importance_weight",
    ]
    assert all(r["recommended"] == r["current"] and "no question set" in r["evidence"] for r in recs)


def test_check_fails_on_a_recall_or_mrr_regression(wh: Path, tmp_path: Path) -> None:
    base = tmp_path / "baseline.json"
    code, _, err = run_cli(
        "report",
        "--db",
        str(wh),
        "--only",
        "memory",
        "--out",
        str(tmp_path / "r"),
        "--format",
        "json",
        "--questions",
        str(QUESTIONS),
        "--write-baseline",
        str(base),
    )
    assert code == 0, err
    rules = json.loads(base.read_text())["metrics"]
    assert rules["memory.retrieval.recall_at_k"]["better"] == "higher"
    assert rules["memory.retrieval.mrr"]["better"] == "higher"
    code, out, _ = run_cli("check", "--db", str(wh), "--baseline", str(base), "--questions", str(QUESTIONS))
    assert code == 0, out
    worse = tmp_path / "worse.toml"
    worse.write_text("[memory]\nsimilarity_threshold = 0.6\n", encoding="utf-8")  # recall 0.875 -> 0.75
    code, out, _ = run_cli(
        "check", "--db", str(wh), "--baseline", str(base), "--questions", str(QUESTIONS), "--config", str(worse)
    )
    assert code == 1
    lines = {ln.split()[0]: ln.split()[-1] for ln in out.splitlines()[1:-1]}
    assert lines["memory.retrieval.recall_at_k"] == "REGRESSED" and lines["memory.retrieval.mrr"] == "REGRESSED"
    code, out, _ = run_cli("check", "--db", str(wh), "--baseline", str(base))  # the question set left out
    assert code == 1 and "memory.retrieval.recall_at_k" in out and "MISSING" in out


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "q.jsonl:2: not JSON; the question file is JSONL"),
        ('{"project_id": "kb", "question": "x", "expected": [1]}', "q.jsonl:2: at None is not an ISO time"),
        (
            '{"project_id": "kb", "question": "x", "at": "2025-06-01", "expected": 3}',
            "q.jsonl:2: expected must be a list",
        ),
        ('{"project_id": "kb", "question": "", "at": "2025-06-01", "expected": []}', "q.jsonl:2: question missing"),
        (
            '{"project_id": "kb", "question": "x", "at": 1750000000, "expected": [1], "embedding": [1, "a"]}',
            "q.jsonl:2: embedding must be a non-empty list of numbers",
        ),
    ],
)
def test_a_bad_question_line_is_a_one_line_error_naming_the_line(
    wh: Path, tmp_path: Path, line: str, message: str
) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(
        '{"project_id": "kb", "question": "告警用什么？", "at": "2025-06-30", "expected": [3]}\n' + line + "\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(
        "report", "--db", str(wh), "--only", "memory", "--out", str(tmp_path / "r"), "--questions", str(q)
    )
    assert code == 2 and out == ""
    assert err.startswith("forensics: ") and message in err and len(err.strip().splitlines()) == 1


def test_unknown_projects_and_ids_are_counted_and_questions_without_expectations_not_scored(
    wh: Path, tmp_path: Path
) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(
        "\n".join(
            json.dumps(x, ensure_ascii=False)
            for x in [
                {"project_id": "kb", "question": "告警用什么？", "at": 1751277600, "expected": [3, 999]},
                {"project_id": "nowhere", "question": "what?", "at": "2025-06-30T10:00:00Z", "expected": [1]},
                {"project_id": "kb", "question": "随便问问", "at": "2025-06-30", "expected": []},
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    result, _ = api.report(wh, tmp_path / "r", ["json"], only="memory", questions=str(q))
    r = result.section("memory").metrics["retrieval"]
    assert (r["questions"], r["unscored_questions"], r["unknown_projects"], r["unknown_expected_ids"]) == (2, 1, 1, 1)
    assert (r["recall_at_k"], r["mrr"]) == (0.25, 0.5)  # (1/2 + 0) / 2; (1 + 0) / 2


def test_a_comparison_replays_the_questions_on_both_sides(wh: Path, tmp_path: Path) -> None:
    other = tmp_path / "before.duckdb"
    ingest([FIXTURES / "memory" / "harness.db"], db=other)  # the variant's ops project is not on this side
    result, _ = api.report(wh, tmp_path, ["json"], only="memory", compare_db=str(other), questions=str(QUESTIONS))
    rows = {k: (b, a) for k, b, a, _ in result.rows}
    assert rows["memory.retrieval.mrr"] == (0.71875, 0.71875)  # the questions ask kb and billing only
    assert rows["memory.decisions"] == (11.0, 13.0)


def test_questions_on_a_warehouse_without_decisions_are_not_in_use_and_tune_keeps(
    seed_wh: Path, tmp_path: Path
) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(seed_wh, db)
    result, _ = api.report(db, tmp_path / "r", ["json"], only="memory", questions=str(QUESTIONS))
    assert result.section("memory").metrics == {}  # nothing is retrieved: no recall for `check` to gate
    assert result.not_in_use["memory"].startswith("no decision records")
    code, out, err = run_cli(
        "tune", "--db", str(db), "--config", str(tmp_path / "h.toml"), "--questions", str(QUESTIONS), "--json"
    )
    assert code == 0, err
    recs = [r for r in json.loads(out) if r["key"].startswith("memory.")]
    assert len(recs) == 4 and all(
        r["evidence"] == "no decision records in the warehouse: nothing is retrieved" for r in recs
    )
