"""The report's outcome section (docs/outcomes.md#where-outcomes-come-from): success rates with intervals, lift per finding kind, and the
worst-conversation ranking's AUC beside trivial rankings, on text before the grade was revealed."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from forensics.analyzers.outcomes import auc, lift, wilson
from tests.conftest import FIXTURES, SHARED, run_cli

OUTCOMES = SHARED / "data" / "outcomes"


def test_interval_arithmetic() -> None:
    lo, hi = wilson(0, 10)
    assert lo == 0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(76, 100)
    assert (lo, hi) == (pytest.approx(0.6677, abs=1e-4), pytest.approx(0.8331, abs=1e-4))
    r, lo, hi = lift(30, 100, 10, 100)  # se = sqrt(1/30 - 1/100 + 1/10 - 1/100) = 0.3367
    assert r == pytest.approx(3.0) and lo == pytest.approx(1.5508, abs=1e-3) and hi == pytest.approx(5.8037, abs=1e-3)
    r, lo, hi = lift(20, 20, 0, 20)  # empty cells: half a run added everywhere, still finite
    assert math.isfinite(r) and lo > 1
    assert auc([3, 2, 1, 0], [True, True, False, False]) == 1.0
    assert auc([1, 1, 1, 1], [True, False, True, False]) == 0.5
    assert auc([0, 1, 2], [True, False, False]) == 0.0 and auc([1, 2], [True, True]) is None


def _report(db: Path, out: Path, only: str) -> dict:
    code, _, err = run_cli("report", "--db", str(db), "--out", str(out), "--format", "json,md", "--only", only)
    assert code == 0, err
    return json.loads((out / "metrics.json").read_text())["sections"]["outcomes"]


def test_not_in_use_without_outcomes(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(FIXTURES / "sessions"), "--db", str(db))[0] == 0
    assert _report(db, tmp_path / "r", "baseline,outcomes") == {"runs": 0}
    assert "Not in use: no selected conversation has an outcome" in (tmp_path / "r" / "report.md").read_text()


def test_section_on_the_excerpts(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(FIXTURES / "outcomes"), "--db", str(db))[0] == 0
    m = _report(db, tmp_path / "r", "baseline,drift,outcomes")
    assert (m["runs"], m["successes"], m["failed"]) == (10, 5, 5)
    assert m["by_model"]["llama-3.3"] == {
        "runs": 2,
        "successes": 0,
        "success_rate": 0.0,
        "success_low": 0.0,
        "success_high": pytest.approx(wilson(0, 2)[1]),
    }
    assert m["grade_revealing"]["messages"] == 3 and m["grade_revealing"]["runs"] == 3  # MINT's verdicts
    assert set(m["ranking"]) >= {"auc", "auc_by_messages", "auc_by_tool_calls"}
    for v in m["kinds"].values():
        assert set(v) >= {"failed", "passed", "lift", "lift_low", "lift_high"}
    text = (tmp_path / "r" / "report.md").read_text()
    assert "Runs and success rate per agent and model" in text and "| agentbench | llama-3.3 | 2 | 0 |" in text


def test_section_on_the_shared_sets(tmp_path: Path) -> None:
    if not (OUTCOMES / "outcomes.jsonl").exists():
        pytest.skip(f"{OUTCOMES} not found (set FORENSICS_SHARED)")
    db = tmp_path / "w.duckdb"
    assert (
        run_cli("ingest", *(str(OUTCOMES / s) for s in ("mint", "medagentbench", "tau2-bench")), "--db", str(db))[0]
        == 0
    )
    labels = [json.loads(line) for line in (OUTCOMES / "outcomes.jsonl").read_text().splitlines() if line.strip()]
    runs, passed = Counter(r["model"] for r in labels), Counter(r["model"] for r in labels if r["success"])
    revealing = 0
    for f in (OUTCOMES / "mint").rglob("results.jsonl"):
        for line in f.read_text().splitlines():
            history = json.loads(line)["state"]["history"]
            revealing += sum(m["role"] == "user" and "your answer is wrong" in m["content"].lower() for m in history)
    m = _report(db, tmp_path / "r", "outcomes")
    assert m["runs"] == len(labels) == 1392 and m["successes"] == sum(passed.values()) == 584
    assert {k: (v["runs"], v["successes"]) for k, v in m["by_model"].items()} == {
        k: (n, passed[k]) for k, n in runs.items()
    }
    assert m["grade_revealing"]["messages"] == revealing == 598
    assert 0.5 < m["ranking"]["auc_by_messages"] < 1 and m["ranking"]["auc_by_worst_score"] is None  # none ran before
    # the run ranking (ends that did not finish the task, then length: messages among all runs, characters among all
    # runs and among the same model's, then errors) beats the length in messages and the characters alone on the
    # three sets pooled; 0.648 before the model's own runs entered the length, 0.652 with messages among them too,
    # 0.659 before MedAgentBench's runs that did not hand their work in (no FINISH call) counted
    rk = m["ranking"]
    assert round(rk["auc"], 3) == 0.666 and rk["auc"] > rk["auc_by_messages"]
    assert rk["auc"] > rk["auc_by_assistant_chars"]  # 0.658
    assert (
        rk["pairs_within_task"] > 0 and rk["auc_within_task_low"] <= rk["auc_within_task"] <= rk["auc_within_task_high"]
    )
    # MedAgentBench's runs that end without a parsed FINISH call, where its other 184 do: all 16 failed (graded
    # "agent invalid action"); MINT's and tau2's runs end in words, so none of theirs
    import duckdb

    from forensics.analyzers import outcomes as oc
    from forensics.analyzers.base import Context
    from forensics.analyzers.schema import load_config
    from forensics.kernel.selection import Selection

    con = duckdb.connect(str(db), read_only=True)
    ctx = Context.open(con, load_config(None), Selection())
    runs = oc._runs(ctx)
    kinds = oc.problem_kind_sets(ctx, runs, [])
    con.close()
    agent = dict(zip(runs["conversation_id"], runs["agent"]))
    success = dict(zip(runs["conversation_id"], runs["success"]))
    marked = [c for c, k in kinds.items() if oc.NOT_HANDED_IN in k]
    assert Counter((agent[c], success[c]) for c in marked) == {("agentbench", False): 16}


def test_a_run_whose_agent_never_replied_ranks_first(tmp_path: Path) -> None:
    """terminal-bench's trials whose agent never started (the log holds only the instruction) failed 197 of 205
    times; ranked by their length they came last and inverted the ranking. A run with no reply ends ``no_reply``
    and ranks above every run that acted."""

    def run(i: int, replies: int) -> dict:
        msgs = [{"role": "user", "content": f"Task {i}: count the log lines in /var/log/app.log"}]
        for k in range(replies):
            msgs += [
                {"role": "assistant", "content": f"Step {k}: I will run wc -l on the file."},
                {"role": "user", "content": f"Output {k}: 42 lines"},
            ]
        return {
            "id": f"run-{i}",
            "messages": msgs + ([{"role": "assistant", "content": "The answer is 42."}] if replies else []),
        }

    runs = [run(0, 0), run(1, 0), run(2, 6), run(3, 5), run(4, 2), run(5, 1)]
    failed = {"run-0", "run-1", "run-4"}
    src = tmp_path / "runs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in runs))
    grades = tmp_path / "grades.csv"
    grades.write_text("id,success\n" + "".join(f"{r['id']},{str(r['id'] not in failed).lower()}\n" for r in runs))
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(src), "--db", str(db))[0] == 0
    assert run_cli("outcomes", str(grades), "--db", str(db))[0] == 0
    rk = _report(db, tmp_path / "r", "outcomes")["ranking"]
    # failed: the two idle runs (above all 3 passed runs) and run-4 (above run-5 only): 7 of 9 pairs
    assert rk["auc"] == pytest.approx(7 / 9) and rk["auc_by_messages"] == pytest.approx(1 / 9)


def test_length_is_held_against_the_runs_of_the_same_model() -> None:
    """MINT's pairs are two models on one task, one of which writes half as much again: a run long for its own model
    ranks above a run short for its own, whatever the other model's style; without a model column all runs are one
    model."""
    import polars as pl

    from forensics.analyzers.outcomes import run_scores

    runs = pl.DataFrame(
        {
            "conversation_id": ["a1", "a2", "a3", "b1", "b2", "b3"],
            "model": ["verbose"] * 3 + ["terse"] * 3,
            "messages": [4] * 6,
            "assistant_chars": [3000, 4000, 5000, 1000, 2000, 2500],
            "tool_errors": [0] * 6,
        }
    )
    score = dict(zip(runs["conversation_id"], run_scores(runs, {})))
    assert score["b3"] > score["a1"]  # the terse model's longest run above the verbose model's shortest
    assert score["a3"] > score["b3"] and score["b3"] > score["b2"]
    one = dict(zip(runs["conversation_id"], run_scores(runs.drop("model"), {})))
    assert one["a1"] > one["b3"]
    assert max(score.values()) < 1 and run_scores(runs, {"b1": {"loop"}})[3] > max(
        score.values()
    )  # a problem outranks length


def test_a_run_that_does_not_hand_its_work_in_where_its_harness_runs_do() -> None:
    """MedAgentBench's runs end on ``FINISH(...)``; 16 of its 200 answer in prose or write ``FINISH [...]`` (no call),
    and the harness fails them all. Where an agent's runs mostly end on a final action, one that ends otherwise did
    not hand its work in; where runs end in words (MINT, tau2), nothing is said. Ten runs make a norm."""
    import polars as pl

    from forensics.analyzers.outcomes import HANDS_IN_RUNS, _hands_in
    from forensics.analyzers.signature import Msg, handed_in

    task = Msg(0, "user", "person", None, "Order an HbA1C test if the last is older than a year.")
    finish = [task, Msg(1, "assistant", "assistant", None, 'FINISH([5.5, "2023-10-14"])', 1, 1, call_names=("FINISH",))]
    prose = [task, Msg(1, "assistant", "assistant", None, 'The last value is 5.5. FINISH [5.5, "2023-10-14"]')]
    submitted = [*prose[:1], Msg(1, "assistant", "assistant", None, "done", stop="submitted")]
    assert handed_in(finish) and handed_in(submitted) and not handed_in(prose) and not handed_in([])

    def runs(agent: str, ends: list[list[Msg]]) -> tuple[pl.DataFrame, dict[str, list[Msg]]]:
        ids = [f"{agent}{i}" for i in range(len(ends))]
        return pl.DataFrame({"conversation_id": ids, "agent": [agent] * len(ids)}), dict(zip(ids, ends))

    assert _hands_in(*runs("medagentbench", [finish] * 8 + [prose] * 2)) == {"medagentbench"}
    assert _hands_in(*runs("mint", [finish] * 5 + [prose] * 5)) == set()  # half is no norm
    assert _hands_in(*runs("few", [finish] * (HANDS_IN_RUNS - 1))) == set()
    # runs whose agent never replied (terminal-bench's trials that never started) say nothing of how runs end
    assert _hands_in(*runs("started", [finish] * 10 + [prose] + [[task]] * 15)) == {"started"}


def test_kinds_read_off_the_same_calls_count_once() -> None:
    """A loop is redundant work done three times: on tau2 a passed run's three reads of one record were both, and
    ranked above failed runs that handed the customer off. They count as one problem."""
    from forensics.analyzers.outcomes import counted_kinds

    assert counted_kinds({"loop", "redundant_work"}) == counted_kinds({"loop"}) == {"redundant_work"}
    assert counted_kinds({"loop", "redundant_work", "ended: handed_off"}) == {"redundant_work", "ended: handed_off"}
    assert counted_kinds({"ended: no_reply"}) == counted_kinds(set()) == set()
