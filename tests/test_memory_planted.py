"""The decision-memory audit on the seeded planted set of issue 44 (fixtures/make_memory_planted.py): decisions
stated but never recorded in the three forms it used to miss (the assistant states it, Chinese phrasing, two
turns), dev and held-out, each beside a trap; the generator is run here, into a temporary folder."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from forensics import ingest
from forensics.analyzers.memory.rules import Readers, _picked, _states
from forensics.analyzers.schema import defaults
from tests.conftest import FIXTURES, query, run_cli


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_memory_planted", FIXTURES / "make_memory_planted.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("planted")
    _generator().make(out, out)
    return out, json.loads((out / "memory-planted.labels.json").read_text(encoding="utf-8"))


def test_the_committed_set_is_the_generators(planted: tuple[Path, dict]) -> None:
    out, labels = planted
    assert labels == json.loads((FIXTURES / "labels" / "memory-planted.labels.json").read_text(encoding="utf-8"))
    assert {s: (len(v["findings"]), len(v["traps"])) for s, v in labels.items()} == {
        "dev": (18, 21),
        "heldout": (12, 11),
    }


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_every_planted_decision_is_found_at_its_position_and_no_trap(planted: tuple[Path, dict], split: str) -> None:
    out, labels = planted
    db = out / f"{split}.duckdb"
    ingest([out / f"{split}.db"], db=db)
    code, _, err = run_cli("report", "--db", str(db), "--only", "memory", "--out", str(out / split), "--format", "json")
    assert code == 0, err
    found = set(
        query(
            db,
            "SELECT c.native_id, f.position FROM memory_findings f JOIN conversations c "
            "USING (conversation_id) WHERE f.kind = 'decision_unrecorded'",
        )
    )
    assert found == {(f["conversation"], f["position"]) for f in labels[split]["findings"]}
    assert not found & {(t["conversation"], t["position"]) for t in labels[split]["traps"]}


@pytest.mark.parametrize(
    ("sentence", "agreed", "states"),
    [
        ("I'll use Terraform instead of Pulumi for the job queue.", False, True),  # a weak cue beside a contrast
        ("We'll use pnpm for the database.", True, True),  # ratified by the user's agreement
        ("We'll use pnpm for the database.", False, False),  # alone it narrates
        ("I'll use grep to find the callers.", False, False),
        ("消息队列改用 Kafka。", False, True),
        ("缓存还是用 Redis 吧。", False, True),
        ("那数据库就 Kafka 吧。", False, True),
        ("日志不用 Elasticsearch 了。", False, True),
        ("前端就选 Vue 吧。", False, True),
        ("缓存要不要改用 npm？", False, False),  # a question
        ("如果前端换成 React 会怎样？", False, False),  # hypothetical
        ("这和我们刚才敲定的机制配合。", False, False),  # speaks of a decision made before
        ("那就帮我找一个票价是150-200元的景点吧。", False, False),  # 就…吧 around no product name
        ("也就玩2-3小时吧。", False, False),
    ],
)
def test_each_form_beside_its_trap(sentence: str, agreed: bool, states: bool) -> None:
    assert _states(sentence, Readers.of(defaults()), "jieba+bigram", agreed) is states


@pytest.mark.parametrize(
    ("reply", "answer", "picked"),
    [
        ("Redis", "Both work.", "Redis"),
        ("行，Memcached", "Both work.", "Memcached"),
        ("the second one", "Both work.", "Memcached"),
        ("用第一个吧", "Both work.", "Redis"),
        ("好", "我建议用 Memcached。", "Memcached"),
        ("ok", "I recommend Redis: less to operate.", "Redis"),
        ("ok", "Both have trade-offs: Redis is faster, Memcached simpler.", None),  # nothing recommended
        ("我再想想。", "推荐 Redis。", None),
        ("都不要。", "推荐 Redis。", None),
        ("Redis or Memcached?", "", None),
        ("Redis and Memcached both", "", None),
    ],
)
def test_the_answer_to_x_or_y(reply: str, answer: str, picked: str | None) -> None:
    assert _picked(reply, ["Redis", "Memcached"], [answer], Readers.of(defaults())) == picked
