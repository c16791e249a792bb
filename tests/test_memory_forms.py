"""The decision-memory audit on forms its own fixture never used (issue 30): decisions the assistant settles in
answer to the user and the user accepts, every Chinese form of a user's choice, and decisions recorded twice on
one matter with different figures; each beside a trap (fixtures/make_memory_forms.py writes both)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics import ingest
from forensics.analyzers.memory.rules import Readers, _states
from forensics.analyzers.schema import defaults
from tests.conftest import FIXTURES, query, run_cli

LABELS = json.loads((FIXTURES / "labels" / "memory-forms.labels.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("forms") / "w.duckdb"
    ingest([FIXTURES / "memory-forms"], db=db)
    code, _, err = run_cli(
        "report", "--db", str(db), "--only", "memory", "--out", str(db.parent / "r"), "--format", "json"
    )
    assert code == 0, err
    return db


def _found(db: Path) -> set[tuple]:
    return set(
        query(
            db,
            "SELECT f.kind, f.severity, c.native_id, f.position, f.decision_id "
            "FROM memory_findings f LEFT JOIN conversations c USING (conversation_id)",
        )
    )


def test_every_form_is_found_at_its_position_and_no_trap(wh: Path) -> None:
    planted = {
        (f["kind"], f["severity"], f["conversation"], f["position"], f["decision_id"]) for f in LABELS["findings"]
    }
    assert len(planted) == 14 and len(LABELS["traps"]) == 10
    assert _found(wh) == planted
    flagged = {(c, p) for _, _, c, p, _ in _found(wh)}
    assert [t for t in LABELS["traps"] if (t["conversation"], t["position"]) in flagged] == []


def test_the_assistant_decides_only_what_the_user_asked_and_did_not_turn_down(wh: Path) -> None:
    by_role = dict(
        query(
            wh,
            "SELECT m.role, count(*) FROM memory_findings f JOIN messages m "
            "ON m.conversation_id = f.conversation_id AND m.position = f.position GROUP BY 1",
        )
    )
    assert by_role == {"assistant": 3, "user": 11}


@pytest.mark.parametrize(
    ("sentence", "states"),
    [
        ("消息队列决定用 Kafka。", True),
        ("缓存层确定用 Redis。", True),
        ("前端框架选定 Vue 3。", True),
        ("定时任务选用 Airflow。", True),
        ("监控采用 Prometheus。", True),
        ("接口风格定为 GraphQL。", True),
        ("那部署就用 Helm 吧。", True),
        ("日志存储 Loki 定了。", True),
        ("Let's go with Fastly for images.", True),
        ("消息队列确定用 Kafka 吗？", False),  # a question
        ("我们不采用 MongoDB。", False),
        ("没选定 Vue。", False),  # negated
        ("可以采用 Flink 或者 Spark 来做流处理。", False),
        ("We could use Kafka, Pulsar or NATS.", False),  # listed
        ("我确定这个问题已经修好了。", False),  # 确定 meaning sure
        ("时间定了。", False),  # a postfix cue with no option named before it
        ("数据库还没决定，下周再定。", False),  # pending
    ],
)
def test_each_form_beside_its_trap(sentence: str, states: bool) -> None:
    assert _states(sentence, Readers.of(defaults()), "jieba+bigram") is states
