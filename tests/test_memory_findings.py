"""The memory analyzer's findings (docs/memory.md#the-four-findings) on the planted fixture: every label found at its position, no trap
flagged, and the cue lists of the config doing what they say."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from forensics import ingest
from forensics.analyzers.memory.cues import Cues, names, option_terms, sentences
from forensics.analyzers.memory.settings import MemorySettings
from forensics.analyzers.schema import defaults
from tests.conftest import FIXTURES, query, run_cli

LABELS = json.loads((FIXTURES / "labels" / "memory.labels.json").read_text(encoding="utf-8"))
Row = tuple[str, str, str, int, str | None, str | None]  # kind, severity, conversation, position, decision, alternative


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("memory") / "w.duckdb"
    ingest([FIXTURES / "memory"], db=db)
    code, _, err = run_cli(
        "report", "--db", str(db), "--only", "memory", "--out", str(db.parent / "r"), "--format", "json"
    )
    assert code == 0, err
    return db


def _found(db: Path) -> set[Row]:
    return set(
        query(
            db,
            "SELECT f.kind, f.severity, c.native_id, f.position, f.decision_id, f.alternative "
            "FROM memory_findings f LEFT JOIN conversations c USING (conversation_id)",
        )
    )


def _planted() -> set[Row]:
    return {
        (f["kind"], f["severity"], f["conversation"], f["position"], f["decision_id"], f["alternative"])
        for f in LABELS["findings"]
    }


def test_every_planted_finding_is_found_at_its_position_and_nothing_else(wh: Path) -> None:
    assert len(_planted()) == 17
    assert _found(wh) == _planted()


def test_no_trap_is_flagged(wh: Path) -> None:
    flagged = {(c, p) for _, _, c, p, _, _ in _found(wh)}
    assert len(LABELS["traps"]) == 22
    assert [t for t in LABELS["traps"] if (t["conversation"], t["position"]) in flagged] == []


def test_the_report_counts_findings_and_cites_their_evidence(wh: Path) -> None:
    m = json.loads((wh.parent / "r" / "metrics.json").read_text(encoding="utf-8"))
    sec = m["sections"]["memory"]
    assert sec["findings"] == {
        "relitigation": 9,
        "decision_not_recalled": 4,
        "decision_conflict": 1,
        "decision_unrecorded": 3,
    }
    assert sec["findings_high"] == {
        "relitigation": 7,
        "decision_not_recalled": 3,
        "decision_conflict": 1,
        "decision_unrecorded": 0,
    }
    assert (sec["decisions"], sec["projects"], sec["conversation_count"], sec["alternatives"]) == (13, 4, 17, 12)
    forgotten = [f for f in m["findings"] if f["kind"] == "decision_not_recalled" and f["native_id"] == "kb/c3"]
    assert forgotten[0]["positions"] == [2, 3]  # the question and the answer that forgot the decision
    assert "weighs rejected 'MongoDB', 'MySQL'" in forgotten[0]["summary"]
    assert "retrieval" not in sec  # no --questions: no replay


def test_findings_follow_the_selection(wh: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(wh, db)
    code, _, err = run_cli(
        "report",
        "--db",
        str(db),
        "--only",
        "memory",
        "--out",
        str(tmp_path),
        "--format",
        "json",
        "--conversation",
        "kb/c3",
    )
    assert code == 0, err
    found = _found(db)
    assert {c for _, _, c, _, _, _ in found} == {"kb/c3"}
    assert found == {r for r in _planted() if r[2] == "kb/c3"}


def _without(key: str, cue: str) -> str:
    return f"{key} = {json.dumps([c for c in getattr(MemorySettings.of(defaults()), key) if c != cue], ensure_ascii=False)}"


@pytest.mark.parametrize(
    ("toml", "added", "removed"),
    [
        # without 或者 the JSONB sentence no longer weighs options: the same finding, low
        (
            _without("weighing_cues", "或者"),
            {("relitigation", "low", "kb/c1", 7, "1", "MongoDB")},
            {("relitigation", "high", "kb/c1", 7, "1", "MongoDB")},
        ),
        # without 否决 "MongoDB 已被否决" is no rejection any more
        (_without("negation_cues", "否决"), {("relitigation", "low", "kb/c4", 1, "1", "MongoDB")}, set()),
        # the fixture's replies state no decision with a cue: judging users only changes nothing
        ('decision_roles = ["user"]', set(), set()),
    ],
)
def test_cue_lists_come_from_the_config(wh: Path, tmp_path: Path, toml: str, added: set, removed: set) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(wh, db)
    cfg = tmp_path / "harness.toml"
    cfg.write_text(f"[memory]\n{toml}\n", encoding="utf-8")
    code, _, err = run_cli(
        "report",
        "--db",
        str(db),
        "--only",
        "memory",
        "--out",
        str(tmp_path / "r"),
        "--format",
        "json",
        "--config",
        str(cfg),
    )
    assert code == 0, err
    assert _found(db) == (_planted() - removed) | added


def _harness_with(tmp_path: Path, conversation: str, messages: list[tuple[str, str, str]]) -> Path:
    """The fixture harness with one more conversation of project kb, ingested into a fresh warehouse."""
    import sqlite3

    src = tmp_path / "h.db"
    shutil.copy(FIXTURES / "memory" / "harness.db", src)
    con = sqlite3.connect(src)
    con.executemany(
        "INSERT INTO conversation_messages (message_hash, project_id, conversation_id, role, content, "
        "created_at) VALUES (?, 'kb', ?, ?, ?, ?)",
        [(f"{conversation}-{i}", conversation, *m) for i, m in enumerate(messages)],
    )
    con.commit()
    con.close()
    db = tmp_path / "w.duckdb"
    ingest([src], db=db)
    return db


def _report(db: Path, out: Path, *args: str) -> None:
    code, _, err = run_cli("report", "--db", str(db), "--only", "memory", "--out", str(out), "--format", "json", *args)
    assert code == 0, err


def test_an_unsourced_decision_statement_in_a_reply_counts_when_assistants_are_judged(tmp_path: Path) -> None:
    """c2's reply "好的，缓存层用 Redis" states nothing with a cue; a reply that does, answering the user's question
    in a turn nothing was recorded from, and that the user builds on, is found when the assistant role is judged
    (the default; one finding per turn: the first statement)."""
    db = _harness_with(
        tmp_path,
        "c10",
        [
            ("user", "前端框架怎么选？", "2025-07-01T10:00:00"),
            ("assistant", "那我们决定用 Vue 3 做前端。", "2025-07-01T10:01:00"),
            ("user", "好，先搭脚手架。", "2025-07-01T10:02:00"),
        ],
    )
    cfg = tmp_path / "harness.toml"
    for roles, want in (
        ('["user"]', set()),
        ('["user", "assistant"]', {("decision_unrecorded", "low", "kb/c10", 1, None, None)}),
    ):
        cfg.write_text(f"[memory]\ndecision_roles = {roles}\n", encoding="utf-8")
        _report(db, tmp_path / "r", "--config", str(cfg))
        assert {r for r in _found(db) if r[2] == "kb/c10"} == want


def test_a_warehouse_without_decision_memory_says_so(seed_wh: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(seed_wh, db)
    code, _, err = run_cli("report", "--db", str(db), "--only", "memory", "--out", str(tmp_path), "--format", "md,json")
    assert code == 0, err
    assert "Not in use: no decision records (a decision-memory SQLite file with decision_events) in the warehouse." in (
        tmp_path / "report.md"
    ).read_text(encoding="utf-8")
    doc = json.loads((tmp_path / "metrics.json").read_text())
    assert doc["sections"]["memory"] == {} and "memory" in doc["not_in_use"]  # no figure for `check` to gate
    assert query(db, "SELECT count(*) FROM memory_findings") == [(0,)]


def test_the_answer_first_parts_rank_memory_findings_and_take_its_tuner(wh: Path, tmp_path: Path) -> None:
    """With --questions the digest's *What to change* carries the [memory] retrieval keys fitted on them, and
    the memory findings rank with the others and are kept for the explorer."""
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    db = tmp_path / "w.duckdb"
    shutil.copy(wh, db)
    questions = FIXTURES / "labels" / "memory.questions.jsonl"
    _report(db, tmp_path / "r", "--questions", str(questions))
    m = json.loads((tmp_path / "r" / "metrics.json").read_text(encoding="utf-8"))
    change = m["what_to_change"]
    assert {c["key"]: (c["current"], c["recommended"]) for c in change["changes"]} == {
        "memory.importance_weight": (0.1, 0.3),
        "memory.similarity_threshold": (0.3, 0.2),
    }
    assert change["changes"][0]["effect"] == (
        "recall@5 0.88 → 1.00, MRR 0.72 → 0.84 on 8 questions, injected 314 → 361 chars"
    )
    assert change["tunables_checked"] == 4 and change["command"].endswith(f"--questions {questions} --write")
    strongest = [(f["kind"], f["native_id"]) for f in m["strongest_findings"]]
    assert strongest[0] == ("decision_conflict", "kb/c6")  # high; ties by kind, then conversation
    assert len(strongest) == 10 and max(Counter(k for k, _ in strongest).values()) <= 3
    assert m["worst_conversations"][0]["label"] == "billing/e2"  # two high findings and a low one
    assert query(db, "SELECT count(*) FROM report_findings WHERE section = 'memory'") == [(17,)]
    page = TestClient(create_app(db), base_url="http://127.0.0.1").get("/findings?kind=decision_conflict").text
    assert "1 findings from every analyzer" in page and "contradicts decision 1" in page


def test_a_conflict_without_its_conversation_is_ranked_by_its_decision_and_kept_once(tmp_path: Path) -> None:
    """Decision 6's conversation (kb/c6) missing from the source: the conflict has no conversation, so it is no
    worst conversation, reads as its decision, offers no `forensics show`, and a second report replaces it."""
    import sqlite3

    src = tmp_path / "h.db"
    shutil.copy(FIXTURES / "memory" / "harness.db", src)
    con = sqlite3.connect(src)
    con.execute("DELETE FROM conversation_messages WHERE project_id = 'kb' AND conversation_id = 'c6'")
    con.commit()
    con.close()
    db = tmp_path / "w.duckdb"
    ingest([src], db=db)
    for _ in range(2):
        code, _, err = run_cli("report", "--db", str(db), "--only", "memory", "--out", str(tmp_path / "r"))
        assert code == 0, err
    assert query(
        db, "SELECT conversation_id, native_id, positions FROM report_findings WHERE kind = 'decision_conflict'"
    ) == [("", "decision 6", [])]
    m = json.loads((tmp_path / "r" / "metrics.json").read_text(encoding="utf-8"))
    assert "" not in [w["conversation_id"] for w in m["worst_conversations"]]
    assert ("decision_conflict", "decision 6") in [(f["kind"], f["native_id"]) for f in m["strongest_findings"]]
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    lines = md.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("- **high** ") and "decision 6: decision 6" in x)
    line = lines[at]  # the kind in words; its identifier and rule on the line below ("how it was decided")
    assert line.startswith("- **high** decision conflict — decision 6: decision 6 (用户服务数据库选型: 使用 MySQL"), (
        line
    )
    assert lines[at + 1].startswith("  - how it was decided: `decision_conflict`: same project and type")
    assert "forensics show" not in line


# ------------------------------------------------------------------ reading sentences
CFG = MemorySettings.of(defaults())


@pytest.mark.parametrize(
    ("sentence", "rejects"),
    [
        ("MongoDB 已被否决。", True),
        ("不再考虑 MongoDB。", True),
        ("用 PostgreSQL 而不是 MongoDB。", True),
        ("We chose PostgreSQL, not MongoDB.", True),
        ("We picked PostgreSQL over MongoDB.", True),
        ("MongoDB is not bad for logs.", False),
        ("MongoDB 的文档模型更灵活。", False),
        ("Consider MongoDB.", False),
    ],
)
def test_negation_cues_and_the_x_placeholder(sentence: str, rejects: bool) -> None:
    assert Cues.of(CFG.negation_cues).about(sentence, "MongoDB") is rejects


@pytest.mark.parametrize(
    ("text", "states"),
    [
        ("就用 Redis 吧。", True),
        ("定了，用 ELK。", True),
        ("We decided to use Stripe.", True),
        ("服务稳定了。", False),
        ("否定了 MongoDB。", False),
        ("决定性的因素是成本。", False),
        ("那就这样。", False),
    ],
)
def test_decision_cues_fall_on_word_boundaries(text: str, states: bool) -> None:
    assert Cues.of(CFG.decision_cues, align_han=True).search(text) is states


@pytest.mark.parametrize(
    ("sentence", "states"),
    [
        ("缓存就用 Redis 吧。", True),
        ("我们决定先不做缓存。", True),
        ("For the site, let's use Next.js.", True),
        ("日志系统还没决定。", False),
        ("CI 用什么还没定。", False),
        ("这个决定很重要。", False),
        ("由你决定吧。", False),
        ("We decided on Kafka, right?", False),
        ("Not decided yet: we'll go with it later.", False),
        ("如果就用 MySQL 呢", False),
        ("就用它。", False),  # names nothing the extractor could record
        ("性能主要由数据量决定。", False),
        ("日志系统定了，用 ELK。", True),
    ],
)
def test_a_decision_statement_is_not_a_question_not_pending_and_about_something(sentence: str, states: bool) -> None:
    from forensics.analyzers.memory.rules import Readers, _states

    assert _states(sentence, Readers.of(defaults()), "jieba+bigram") is states


def test_names_match_whole_words_at_latin_edges() -> None:
    assert names("用 Go 写服务", "Go") and not names("Let's go ahead.", "Go")  # short proper names: their own case
    assert names("日志系统使用 ELK。", "elk")  # an option's terms come lower-cased from the tokenizer
    assert not names("We run MySQL and PostgreSQL.", "SQL")
    assert (
        names("用MongoDB吧", "MongoDB")
        and names("mongodb, then", "MongoDB")
        and names("选 Docker  Swarm", "Docker Swarm")
    )
    assert not names("MongoDBX", "MongoDB")


def test_sentences_end_at_chinese_and_latin_marks_but_not_inside_names() -> None:
    assert sentences("用 Next.js 做官网。好吗？ ok; fine\nnext. done") == [
        "用 Next.js 做官网。",
        "好吗？",
        "ok;",
        "fine",
        "next.",
        "done",
    ]


def test_the_decided_option_is_the_content_beyond_the_title_and_the_verbs_of_choosing() -> None:
    assert option_terms("用户服务数据库选型", "使用 PostgreSQL", "jieba+bigram") == {"postgresql"}
    assert option_terms("Payment provider", "Use Stripe with Stripe Tax", "jieba+bigram") == {"stripe", "tax"}
    assert option_terms("日志系统选型", "日志系统", "jieba+bigram") == {"日志", "系统"}  # nothing beyond: the content


def test_the_named_query_lists_the_findings_with_their_evidence(wh: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(wh, db)
    code, _, err = run_cli("report", "--db", str(db), "--only", "memory", "--out", str(tmp_path), "--format", "json")
    assert code == 0, err
    code, out, err = run_cli("query", "memory_findings", "--db", str(db), "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == [
        "native_id",
        "conversation_id",
        "kind",
        "severity",
        "decision_id",
        "alternative",
        "positions",
        "detail",
        "project",
    ]
    assert len(rows) == 17
    forgotten = [(r["native_id"], r["positions"]) for r in rows if r["kind"] == "decision_not_recalled"]
    assert forgotten[0] == ("billing/e2", "0,1")  # high first: the question and the answer


def test_the_committed_fixture_is_what_the_generator_writes(tmp_path: Path) -> None:
    import subprocess
    import sys

    subprocess.run([sys.executable, str(FIXTURES / "make_memory.py"), str(tmp_path), str(tmp_path)], check=True)
    for made, committed in (
        ("harness.db", "memory/harness.db"),
        ("variant.db", "memory/variant.db"),
        ("memory.labels.json", "labels/memory.labels.json"),
        ("memory.questions.jsonl", "labels/memory.questions.jsonl"),
    ):
        assert (tmp_path / made).read_bytes() == (FIXTURES / committed).read_bytes(), committed


def test_a_request_is_asking_too(tmp_path: Path) -> None:
    """Not only questions: "介绍一下…" asks about the matter; a reply naming only a rejected option forgot it."""
    db = _harness_with(
        tmp_path,
        "c11",
        [
            ("user", "介绍一下用户服务的数据库选型", "2025-06-12T10:00:00"),
            ("assistant", "可以考虑 MySQL，生态成熟。", "2025-06-12T10:01:00"),
        ],
    )
    _report(db, tmp_path / "r")
    assert {r for r in _found(db) if r[2] == "kb/c11"} == {
        ("decision_not_recalled", "high", "kb/c11", 1, "1", None),
        ("relitigation", "low", "kb/c11", 1, "1", "MySQL"),
    }
