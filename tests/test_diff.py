"""`forensics diff` (docs/outcomes.md#run-diff): steps, first divergence and a minimal-edit alignment of two runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.analyzers.diff import Step, align, canonical, first_divergence
from tests.conftest import FIXTURES, query, run_cli


def _steps(*pairs: tuple[str, str]) -> list[Step]:
    return [Step(n, a, 2 * i + 1) for i, (n, a) in enumerate(pairs)]


def test_alignment_is_minimal_and_deterministic() -> None:
    a = _steps(("read", "1"), ("edit", "1"), ("test", "1"), ("submit", "1"))
    b = _steps(("read", "1"), ("edit", "2"), ("grep", "1"), ("submit", "1"), ("exit", "0"))
    assert [(x.a, x.b, x.op) for x in align(a, b)] == [
        (0, 0, "same"),
        (1, 1, "changed"),
        (2, None, "only_a"),
        (None, 2, "only_b"),
        (3, 3, "same"),
        (None, 4, "only_b"),
    ]
    assert first_divergence(a, b) == 1
    assert first_divergence(a[:2], a) == 2 and first_divergence(a, a) == 4  # a prefix: the index after it
    assert [x.op for x in align([], b[:2])] == ["only_b", "only_b"]


def test_arguments_compare_as_canonical_json() -> None:
    assert canonical('{"b": 1, "a": [1, 2]}') == canonical('{"a":[1,2],"b":1}') == '{"a":[1,2],"b":1}'
    assert canonical("ls -la") == '"ls -la"' and canonical(None) == "null"
    assert canonical('{"q": "日本"}') == '{"q":"日本"}'


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("diff") / "w.duckdb"
    code, out, err = run_cli("ingest", str(FIXTURES / "outcomes"), "--db", str(path))
    assert code == 0, out + err
    return path


def _actions(model: str, index: int) -> list[tuple[int, str, str]]:
    """(history index, verb, the rest) of each action of one MedAgentBench run, read from the raw file."""
    doc = json.loads((FIXTURES / "outcomes" / "agentbench" / model / "medagentbench-std" / "overall.json").read_text())
    run = next(r for r in doc["custom"]["raw_results"] if r["index"] == index)
    out = []
    for i, turn in enumerate(run["history"]):
        text = turn["content"].strip()
        verb = text.split("(", 1)[0] if text.startswith("FINISH(") else text.split(" ", 1)[0]
        if turn["role"] == "agent" and verb in ("GET", "POST", "FINISH"):
            out.append((i, verb, text[len(verb) :].strip()))
    return out


def test_two_models_on_one_medagentbench_task(db: Path) -> None:
    ids = dict(
        query(
            db,
            "SELECT model, conversation_id FROM conversations WHERE native_id = '96' AND title = "
            "'medagentbench-std/96'",
        )
    )
    a, b = _actions("gpt-4o-mini", 96), _actions("llama-3.3", 96)
    first = next(i for i in range(min(len(a), len(b)) + 1) if i == min(len(a), len(b)) or a[i][1:] != b[i][1:])
    code, out, err = run_cli("diff", ids["gpt-4o-mini"], ids["llama-3.3"], "--db", str(db), "--format", "json")
    assert code == 0, err
    got = json.loads(out)
    assert got["a"] == ids["gpt-4o-mini"] and got["b"] == ids["llama-3.3"]
    assert got["steps"] == [len(a), len(b)] == [2, 3]
    assert (
        got["first_divergence"]
        == {"index": first, "a_position": a[first][0], "b_position": b[first][0]}
        == {"index": 1, "a_position": 3, "b_position": 3}
    )  # gpt-4o-mini finished; llama-3.3 POSTed an order first
    assert got["aligned"] == [
        {"a": a[0][0], "b": b[0][0], "op": "same"},
        {"a": None, "b": b[1][0], "op": "only_b"},
        {"a": a[1][0], "b": b[2][0], "op": "same"},
    ]
    code, text, _ = run_cli("diff", ids["gpt-4o-mini"], ids["llama-3.3"], "--db", str(db))
    lines = text.splitlines()
    assert lines[2].startswith("first divergence at step 1: A [3] FINISH") and "B [3] POST" in lines[3]
    assert lines[4] == "  A wrote beside it: FINISH([-1])" and lines[5].startswith("  B wrote beside it: POST http")
    assert lines[6].startswith("aligned: 2 same, 0 changed, 0 only_a, 1 only_b")
    assert [line[:15] for line in lines[7:]] == [" =    [1]    [1", " >           [3", " =    [3]    [5"]


def test_task_lists_runs_and_diffs_a_passed_against_a_failed_one(db: Path) -> None:
    code, out, err = run_cli("diff", "--task", "medagentbench-std/77", "--db", str(db), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert [(r["model"], r["success"]) for r in doc["runs"]] == [("gpt-4o-mini", True), ("llama-3.3", False)]
    assert doc["diff"]["a"] == doc["runs"][0]["id"] and doc["diff"]["b"] == doc["runs"][1]["id"]
    code, out, _ = run_cli("diff", "--task", "medagentbench-std/77", "--db", str(db))
    assert out.splitlines()[:3] == [
        "task medagentbench-std/77: 2 runs",
        f"  passed     77  gpt-4o-mini  2 steps  {doc['runs'][0]['id']}",
        f"  failed     77  llama-3.3  1 steps  {doc['runs'][1]['id']}",
    ]
    code, out, _ = run_cli("diff", "--task", "math/97", "--db", str(db))
    assert code == 0 and out.splitlines()[-1] == "no pair of a passed and a failed run to diff"


def test_diff_errors_are_one_line(db: Path) -> None:
    for args, says in (
        (("96", "97"), "'96' names 2 conversations; use a conversation id"),
        (("nope", "97"), "no conversation 'nope'"),
        (("--task", "nope"), "no run of task 'nope' has an outcome"),
    ):
        code, out, err = run_cli("diff", *args, "--db", str(db))
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    code, _, err = run_cli("diff", "97", "--db", str(db))
    assert code == 2 and "Error: name two runs A B, or --task KEY" in err  # click's usage error
