"""Outcomes read from benchmark logs (docs/outcomes.md#where-outcomes-come-from): MINT, AgentBench and tau2 runs, each with its grade.

The real sets (SHARED/data/outcomes, 1,392 runs) are checked against the labels counted from the raw
files in outcomes.jsonl; the committed excerpts (fixtures/outcomes) check how runs become messages.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, SHARED, query, run_cli

OUTCOMES = SHARED / "data" / "outcomes"
SETS = ("mint", "medagentbench", "tau2-bench")


def _ingest(db: Path, *paths: Path) -> None:
    code, out, err = run_cli("ingest", *map(str, paths), "--db", str(db))
    assert code == 0, out + err


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (OUTCOMES / "outcomes.jsonl").exists():
        pytest.skip(f"{OUTCOMES} not found (set FORENSICS_SHARED)")
    db = tmp_path_factory.mktemp("outcomes") / "w.duckdb"
    _ingest(db, *(OUTCOMES / s for s in SETS))
    return db


@pytest.fixture(scope="module")
def excerpts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("excerpts") / "w.duckdb"
    _ingest(db, FIXTURES / "outcomes")
    return db


def _labels() -> list[dict]:
    return [json.loads(line) for line in (OUTCOMES / "outcomes.jsonl").read_text().splitlines() if line.strip()]


def test_every_run_has_the_outcome_its_benchmark_gave_it(real: Path) -> None:
    stored = {
        (path, native): ok
        for path, native, ok in query(
            real,
            (
                "SELECT s.path, c.native_id, o.success FROM conversations c JOIN sources s USING (source_id) "
                "JOIN conversation_outcomes o USING (conversation_id)"
            ),
        )
    }
    labels = _labels()
    assert len(stored) == len(labels) == 1392
    for rec in labels:
        path = str((OUTCOMES / rec["set"] / rec["file"]).resolve())
        native = {
            "mint": str(rec.get("task_id")),  # MINT's id is <category>/<dataset>/<task id>
            "tau2-bench": f"task {rec.get('task_id')} trial {rec.get('trial')}",
        }.get(rec["set"], str(rec["id"]))
        assert stored[(path, native)] is rec["success"], rec


def test_counts_per_set_and_model_are_exact(real: Path) -> None:
    fmt = {"mint": "mint", "medagentbench": "agentbench", "tau2-bench": "tau2"}
    want: Counter = Counter()
    for rec in _labels():
        want[(fmt[rec["set"]], rec["model"], rec["success"])] += 1
    got = {
        (f, m, ok): n
        for f, m, ok, n in query(
            real,
            (
                "SELECT s.format, c.model, o.success, count(*) FROM conversations c JOIN sources s USING (source_id) "
                "JOIN conversation_outcomes o USING (conversation_id) GROUP BY ALL"
            ),
        )
    }
    assert got == dict(want)
    assert want[("mint", "claude-2", True)] == 234 and want[("agentbench", "llama-3.3", False)] == 52
    assert query(real, "SELECT DISTINCT source FROM conversation_outcomes") == [("log",)]


def test_re_import_replaces_outcomes_and_never_duplicates(excerpts: Path, tmp_path: Path) -> None:
    folder = shutil.copytree(FIXTURES / "outcomes", tmp_path / "outcomes")
    db = tmp_path / "w.duckdb"
    _ingest(db, folder)
    before = query(db, "SELECT conversation_id, success, score, detail FROM conversation_outcomes ORDER BY 1")
    assert len(before) == 10
    _ingest(db, folder)  # unchanged files: nothing re-read
    overall = folder / "agentbench" / "llama-3.3" / "medagentbench-std" / "overall.json"
    doc = json.loads(overall.read_text())
    doc["custom"]["raw_results"][0]["status"] = "completedCorrect"  # a re-graded run
    overall.write_text(json.dumps(doc, indent=4))
    _ingest(db, folder)
    after = query(db, "SELECT conversation_id, success, score, detail FROM conversation_outcomes ORDER BY 1")
    assert len(after) == 10 and len({r[0] for r in after}) == 10
    assert [r for r in after if r not in before] == [
        next(
            (
                r[0],
                True,
                1.0,
                r[3]
                .replace("completedIncorrect", "completedCorrect")
                .replace("agent invalid action", "completedCorrect"),
            )
            for r in before
            if r not in after
        )
    ]


def test_mint_code_is_a_tool_call_and_the_verdict_is_the_harness(excerpts: Path) -> None:
    rows = query(
        excerpts,
        "SELECT m.position, m.role, m.origin, m.tool_call_count FROM messages m JOIN conversations c "
        "USING (conversation_id) WHERE c.title = 'math/97' ORDER BY m.position",
    )
    assert [r[1:] for r in rows] == [
        ("user", "person", 0),
        ("assistant", "assistant", 0),
        ("user", "harness", 0),  # "I don't understand your input": an <execute> MINT could not parse
        ("assistant", "assistant", 1),
        ("tool", "tool", 0),  # the code and its traceback
        ("assistant", "assistant", 0),  # <execute> beside <solution>: MINT grades the solution, runs nothing
        ("user", "harness", 0),  # "Your answer is wrong."
        ("assistant", "assistant", 0),
    ]
    call = query(
        excerpts,
        "SELECT t.name, t.result_position, t.is_error, json_extract_string(t.arguments, '$.code') "
        "FROM tool_calls t JOIN conversations c USING (conversation_id) WHERE c.title = 'math/97'",
    )
    assert [r[:3] for r in call] == [("execute", 4, True)] and call[0][3].startswith("import sympy as sp")
    detail = query(
        excerpts,
        "SELECT o.success, o.detail FROM conversation_outcomes o JOIN conversations c "
        "USING (conversation_id) WHERE c.title = 'math/97'",
    )
    assert detail[0][0] is True and json.loads(detail[0][1]) == {
        "by": "state.success",
        "value": {"success": True, "terminate_reason": "task_success"},
        "task": "math/97",
    }
    assert query(
        excerpts, "SELECT DISTINCT model FROM conversations c JOIN sources s USING (source_id) WHERE s.format = 'mint'"
    ) == [("claude-2",)]


def test_agentbench_actions_are_calls_and_statuses_are_outcomes(excerpts: Path) -> None:
    rows = query(
        excerpts,
        "SELECT c.model, c.native_id, t.name, t.arguments, t.is_error FROM tool_calls t "
        "JOIN conversations c USING (conversation_id) JOIN sources s USING (source_id) "
        "WHERE s.format = 'agentbench' AND c.native_id = '96' ORDER BY c.model, t.position",
    )
    assert [(r[0], r[2], r[4]) for r in rows] == [
        ("gpt-4o-mini", "GET", False),
        ("gpt-4o-mini", "FINISH", None),
        ("llama-3.3", "GET", False),
        ("llama-3.3", "POST", True),
        ("llama-3.3", "FINISH", None),
    ]
    post = json.loads(rows[3][3])
    assert post["url"].endswith("/fhir/ServiceRequest") and isinstance(post["payload"], str)  # FINISH followed it
    assert json.loads(rows[0][3]) == {"url": "http://34.170.56.151:8080/fhir/Observation?code=A1C&patient=S1891852"}
    got = query(
        excerpts,
        "SELECT c.model, c.native_id, o.success, json_extract_string(o.detail, '$.value') "
        "FROM conversation_outcomes o JOIN conversations c USING (conversation_id) JOIN sources s "
        "USING (source_id) WHERE s.format = 'agentbench' ORDER BY 1, 2",
    )
    assert got == [
        ("gpt-4o-mini", "77", True, "completedCorrect"),
        ("gpt-4o-mini", "96", True, "completedCorrect"),
        ("llama-3.3", "77", False, "agent invalid action"),
        ("llama-3.3", "96", False, "completedIncorrect"),
    ]


def test_tau2_user_is_the_person_and_device_calls_are_tool_results(excerpts: Path) -> None:
    origins = dict(
        query(
            excerpts,
            "SELECT m.origin, count(*) FROM messages m JOIN conversations c USING "
            "(conversation_id) JOIN sources s USING (source_id) WHERE s.format = 'tau2' "
            "AND m.role = 'user' GROUP BY 1",
        )
    )
    assert set(origins) == {"person", "tool_result"} and origins["tool_result"] > 0
    device = query(
        excerpts,
        "SELECT m.content FROM messages m JOIN conversations c USING (conversation_id) WHERE "
        "m.origin = 'tool_result' ORDER BY c.native_id, m.position LIMIT 1",
    )[0][0]  # not by the
    # conversation_id: a hash of the checkout's path
    assert device.split("\n", 1)[0].split(" ", 1)[0] in {
        "check_status_bar",
        "check_network_status",
        "check_network_mode_preference",
        "toggle_airplane_mode",
    }
    got = query(
        excerpts,
        "SELECT o.success, o.score, json_extract_string(o.detail, '$.task') IS NOT NULL "
        "FROM conversation_outcomes o JOIN conversations c USING (conversation_id) "
        "JOIN sources s USING (source_id) WHERE s.format = 'tau2' ORDER BY 1",
    )
    assert got == [(False, 0.0, True), (False, 0.0, True), (True, 1.0, True)]
    usage = query(
        excerpts,
        "SELECT count(*), sum(input_tokens) > 0 FROM message_usage u JOIN conversations c "
        "USING (conversation_id) JOIN sources s USING (source_id) WHERE s.format = 'tau2'",
    )
    assert usage[0][0] > 0 and usage[0][1]


def test_formats_read_before_record_their_outcomes(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _ingest(db, FIXTURES / "agents" / "tau_bench", FIXTURES / "agents" / "inspect")
    got = query(
        db,
        "SELECT c.native_id, o.success, o.score, json_extract_string(o.detail, '$.by') FROM "
        "conversation_outcomes o JOIN conversations c USING (conversation_id) ORDER BY 1",
    )
    assert got == [
        ("1 epoch 1", True, 1.0, "scores.match.value"),
        ("1 epoch 2", False, 0.0, "scores.match.value"),
        ("7 epoch 1", True, 1.0, "scores.match.value"),
        ("q-2 epoch 1", True, 1.0, "scores.match.value"),
        ("task 0 trial 0", True, 1.0, "reward"),
        ("task 0 trial 1", False, 0.0, "reward"),
        ("task 1 trial 0", False, 0.0, "reward"),
        ("task 1 trial 1", True, 1.0, "reward"),
    ]


def test_openhands_and_swe_bench_resolved(tmp_path: Path) -> None:
    lines = (FIXTURES / "agents" / "openhands" / "eval" / "output.jsonl").read_text().splitlines()
    recs = [json.loads(line) for line in lines]
    recs[0]["test_result"] = {"git_patch": "", "report": {"resolved": True}}
    recs[1]["test_result"] = {"report": {"resolved": False, "empty_generation": True}}
    (tmp_path / "oh").mkdir()
    (tmp_path / "oh" / "output.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    run = shutil.copytree(FIXTURES / "agents" / "swe_agent" / "trajectories" / "dev", tmp_path / "swe")
    (run / "default__claude-sonnet-4__t-0.00" / "results.json").write_text(
        json.dumps(
            {
                "applied": ["swe-agent__test-repo-i1", "marshmallow-code__marshmallow-1867"],
                "resolved": ["swe-agent__test-repo-i1"],
            }
        )
    )
    db = tmp_path / "w.duckdb"
    _ingest(db, tmp_path / "oh", run)
    got = query(
        db,
        "SELECT c.native_id, o.success, json_extract_string(o.detail, '$.by') FROM conversation_outcomes o "
        "JOIN conversations c USING (conversation_id) ORDER BY 1",
    )
    assert got == [
        (recs[0]["instance_id"], True, "test_result.report.resolved"),
        (recs[1]["instance_id"], False, "test_result.report.resolved"),
        ("marshmallow-code__marshmallow-1867", False, "default__claude-sonnet-4__t-0.00/results.json resolved"),
        ("swe-agent__test-repo-i1", True, "default__claude-sonnet-4__t-0.00/results.json resolved"),
    ]


def test_inspect_scores_of_a_real_eval(tmp_path: Path) -> None:
    import zipfile

    logs = SHARED / "data" / "agent-logs" / "inspect_ai" / "Raheemrana+scicode-bench" / "logs"
    evals = sorted(logs.glob("*.eval")) if logs.exists() else []
    if not evals:
        pytest.skip(f"{logs} not found (set FORENSICS_SHARED)")
    with zipfile.ZipFile(evals[0]) as z:
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    want = Counter(s["scores"]["scicode_scorer"]["value"]["Problem Correctness"] == 1 for s in samples)
    db = tmp_path / "w.duckdb"
    _ingest(db, evals[0])
    assert dict(query(db, "SELECT success, count(*) FROM conversation_outcomes GROUP BY 1")) == dict(want)


def test_outcomes_command_imports_a_labels_file_once(tmp_path: Path) -> None:
    folder = shutil.copytree(FIXTURES / "outcomes", tmp_path / "outcomes")
    db = tmp_path / "w.duckdb"
    _ingest(db, folder)
    (llama_96,) = query(db, "SELECT conversation_id FROM conversations WHERE native_id = '96' AND model = 'llama-3.3'")[
        0
    ]
    labels = tmp_path / "verdicts.csv"
    labels.write_text(f"id,success,score\n97,fail,0.25\n{llama_96},pass,\nghost-run,1,\n96,0,\n")
    snapshot = "SELECT conversation_id, success, score, source, detail FROM conversation_outcomes ORDER BY 1"
    code, out, err = run_cli("outcomes", str(labels), "--db", str(db))
    assert code == 0, err
    assert out.splitlines() == [
        f"{labels}: 4 labels; 2 conversations: 0 new, 2 changed, 0 unchanged",
        "1 ids match no conversation: ghost-run",
        "1 ids match several conversations (use the conversation id): 96",
    ]
    once = query(db, snapshot)
    assert len(once) == 10
    mine = {r[0]: r[1:] for r in once if r[3] == str(labels.resolve())}
    assert mine[llama_96][:2] == (True, None) and json.loads(mine[llama_96][3]) == {
        "by": "success",
        "value": "pass",
        "task": "medagentbench-std/96",
    }  # the log's task key is kept
    code, out, _ = run_cli("outcomes", str(labels), "--db", str(db))
    assert code == 0 and "0 new, 0 changed, 2 unchanged" in out.splitlines()[0]
    assert query(db, snapshot) == once
    overall = folder / "agentbench" / "llama-3.3" / "medagentbench-std" / "overall.json"
    overall.write_text(overall.read_text().replace('"completedIncorrect"', '"agent invalid action"'))
    _ingest(db, folder)  # the log re-read: the labels file still decides
    assert query(db, snapshot) == once


def test_outcomes_jsonl_and_bad_files(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _ingest(db, FIXTURES / "outcomes")
    good = tmp_path / "l.jsonl"
    good.write_text('{"id": "97", "success": false}\n\n{"id": 2, "success": "PASS", "score": 1}\n')
    code, out, _ = run_cli("outcomes", str(good), "--db", str(db))
    assert code == 0 and out.startswith(f"{good}: 2 labels; 2 conversations: 0 new, 2 changed")
    before = query(db, "SELECT * FROM conversation_outcomes ORDER BY 1")
    for name, text, says in (
        ("a.csv", "run,verdict\nx,1\n", "no header with id and success columns (found run, verdict)"),
        ("b.csv", "id,success\n97,1\n2,maybe\n", "b.csv:3: success 'maybe' is not true/false, 1/0 or pass/fail"),
        ("c.csv", "id,success,score\n97,1,high\n", "c.csv:2: score 'high' is not a number"),
        ("d.jsonl", '{"id": "97", "success": true}\n[1]\n', "d.jsonl:2: not a JSON object"),
        ("e.jsonl", '{"id": "97", "success": tru\n', "e.jsonl:1: invalid JSON"),
    ):
        (tmp_path / name).write_text(text)
        code, out, err = run_cli("outcomes", str(tmp_path / name), "--db", str(db))
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and says in err, err
    code, _, err = run_cli("outcomes", str(good), "--db", str(tmp_path / "none.duckdb"))
    assert code == 2 and "no warehouse here" in err
    assert query(db, "SELECT * FROM conversation_outcomes ORDER BY 1") == before


def test_agentbench_runs_jsonl_text_and_function_calling_agents(tmp_path: Path) -> None:
    """runs.jsonl as AgentBench's assigner writes it: an OS-interaction text agent (Act: bash) and a
    function-calling DBBench run, with the tasks' own verdicts in result."""
    folder = tmp_path / "outputs" / "run1" / "gpt-4" / "os-std"
    folder.mkdir(parents=True)
    os_run = {
        "index": 3,
        "error": None,
        "info": None,
        "output": {
            "index": 3,
            "status": "completed",
            "result": {"result": False},
            "history": [
                {"role": "user", "content": "How many files are in /etc?"},
                {"role": "agent", "content": "Think: count them.\n\nAct: bash\n\n```bash\nls /etc | wc -l\n```"},
                {"role": "user", "content": "The output of the OS:\n\n212"},
                {"role": "agent", "content": "Think: done.\n\nAct: answer(212)"},
            ],
        },
        "time": {"timestamp": 1700000000000, "str": "2023-11-14 22:13:20"},
    }
    db_run = {
        "index": "7",
        "error": None,
        "info": None,
        "output": {
            "index": "7",
            "status": "task limit reached",
            "result": {"is_correct": True, "answer": "4"},
            "history": [
                {"role": "user", "content": "Which city has most stores?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "execute_sql", "arguments": '{"sql": "SELECT 1"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "[(1,)]"},
            ],
        },
        "time": {"timestamp": 1700000000000, "str": "2023-11-14 22:13:20"},
    }
    (folder / "runs.jsonl").write_text(json.dumps(os_run) + "\n" + json.dumps(db_run) + "\n")
    db = tmp_path / "w.duckdb"
    _ingest(db, folder / "runs.jsonl")
    calls = query(
        db,
        "SELECT c.native_id, t.name, t.arguments, t.result_position FROM tool_calls t JOIN conversations c "
        "USING (conversation_id) ORDER BY 1, t.position",
    )
    assert calls == [
        ("3", "bash", '{"command":"ls /etc | wc -l"}', 2),
        ("3", "answer", '{"answer":"212"}', None),
        ("7", "execute_sql", '{"sql": "SELECT 1"}', 2),
    ]
    got = query(
        db,
        "SELECT c.native_id, c.model, o.success, json_extract_string(o.detail, '$.by'), "
        "json_extract_string(o.detail, '$.task') FROM conversation_outcomes o JOIN conversations c "
        "USING (conversation_id) ORDER BY 1",
    )
    assert got == [
        ("3", "gpt-4", False, "result.result", "os-std/3"),
        ("7", "gpt-4", True, "result.is_correct", "os-std/7"),
    ]
    assert query(db, "SELECT DISTINCT format FROM sources") == [("agentbench",)]


def test_bad_records_are_quarantined_and_nothing_is_guessed(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "outputs" / "m1" / "F=None" / "s" / "reasoning" / "gsm8k"
    folder.mkdir(parents=True)
    good = (
        (
            FIXTURES
            / "outcomes"
            / "mint"
            / "claude-2"
            / "F=None"
            / "max5_p2+tool+cd"
            / "reasoning"
            / "gsm8k"
            / "results.jsonl"
        )
        .read_text()
        .splitlines()[0]
    )
    (folder / "results.jsonl").write_text(
        good + '\n{"state": {"history": 5}, "task": {}}\n{bad json\n[1, 2]\n'
        '{"state": {"history": [{"role": "user", "content": "hi"}, "oops"], '
        '"success": "maybe"}, "task": {"task_id": 9}}\n'
    )
    (tmp_path / "tau2.json").write_text(
        json.dumps(
            {
                "info": {"user_info": {}, "agent_info": {"llm": "m"}},
                "simulations": [
                    5,
                    {
                        "id": "a",
                        "task_id": "t",
                        "trial": 0,
                        "reward_info": {"reward": "high"},
                        "messages": [{"role": "user", "content": "hi"}, 7],
                    },
                ],
            }
        )
    )
    (tmp_path / "overall.json").write_text(
        json.dumps(
            {
                "total": 2,
                "validation": {},
                "custom": {
                    "raw_results": [
                        {"index": 1, "status": "running", "history": []},
                        "x",
                        {"index": 2, "status": "completedIncorrect", "history": [{"role": "user", "content": "q"}]},
                    ]
                },
            }
        )
    )
    db = tmp_path / "w.duckdb"
    _ingest(db, tmp_path)
    assert sorted(r[0] for r in query(db, "SELECT reason FROM quarantine")) == [
        "history item is not a JSON object",
        "invalid JSON: unexpected character, expected a string key: line 1 column 2 (char 1)",
        "message is not a JSON object",
        "no state.history list (not a MINT run)",
        "not a JSON object (a JSON array)",
        "run is not a JSON object",
        "simulation is not a JSON object",
    ]
    for read, imported, quarantined, skipped in query(
        db, "SELECT messages_read, messages_imported, quarantined, skipped FROM import_runs"
    ):
        assert read == imported + quarantined + skipped
    # "maybe", a running run and a reward of "high" are no grades: those runs have no outcome
    assert sorted(query(db, "SELECT json_extract_string(detail, '$.task'), success FROM conversation_outcomes")) == [
        ("gsm8k/0", True),
        (f"{tmp_path.name}/2", False),
    ]  # the task is the folder holding overall.json


def test_tau2_dir_format_reads_each_run_file(tmp_path: Path, excerpts: Path) -> None:
    """tau2's "dir" format: results.json (metadata, simulation_index) beside simulations/<id>.json."""
    doc = json.loads(next((FIXTURES / "outcomes" / "tau2").glob("*.json")).read_text())
    sims = doc.pop("simulations")
    doc["simulation_index"] = [
        {"id": s["id"], "task_id": s["task_id"], "trial": s["trial"], "reward": s["reward_info"]["reward"]}
        for s in sims
    ]
    run = tmp_path / "telecom-run"
    (run / "simulations").mkdir(parents=True)
    (run / "results.json").write_text(json.dumps(doc, indent=2))
    for s in sims:
        (run / "simulations" / f"{s['id']}.json").write_text(json.dumps(s, indent=2))
    db = tmp_path / "w.duckdb"
    _ingest(db, run)
    outcomes = (
        "SELECT c.native_id, c.model, o.success, o.score, o.detail FROM conversation_outcomes o "
        "JOIN conversations c USING (conversation_id) JOIN sources s USING (source_id) WHERE s.format = 'tau2' "
        "ORDER BY 1"
    )
    assert query(db, outcomes) == query(excerpts, outcomes) and len(query(db, outcomes)) == 3
    assert query(db, "SELECT format, count(*) FROM sources GROUP BY 1") == [("tau2", 4)]
    same = (
        "SELECT c.native_id, m.position, m.role, m.origin, m.content FROM messages m JOIN conversations c "
        "USING (conversation_id) JOIN sources s USING (source_id) WHERE s.format = 'tau2' ORDER BY 1, 2"
    )
    assert query(db, same) == query(excerpts, same)


def test_swe_bench_results_in_a_sibling_results_folder(tmp_path: Path) -> None:
    """Multi-SWE-bench's shape: ``<run>/trajs/<instance>/<instance>.traj`` beside ``<run>/results/results.json``."""
    run = tmp_path / "20250329_MSWE-agent_Claude-3.7-Sonnet"
    shutil.copytree(
        FIXTURES / "agents" / "swe_agent" / "trajectories" / "dev" / "default__claude-sonnet-4__t-0.00", run / "trajs"
    )
    (run / "results").mkdir()
    (run / "results" / "results.json").write_text(
        json.dumps(
            {
                "total_instances": 2,
                "resolved_ids": ["marshmallow-code__marshmallow-1867"],
                "unresolved_ids": ["swe-agent__test-repo-i1"],
                "error_ids": [],
            }
        )
    )
    db = tmp_path / "w.duckdb"
    _ingest(db, run / "trajs")
    got = query(
        db,
        "SELECT c.native_id, o.success, json_extract_string(o.detail, '$.by') FROM conversation_outcomes o "
        "JOIN conversations c USING (conversation_id) ORDER BY 1",
    )
    where = f"{run.name}/results/results.json resolved"
    assert got == [("marshmallow-code__marshmallow-1867", True, where), ("swe-agent__test-repo-i1", False, where)]


def test_swe_bench_predictions_name_the_model_of_an_older_trajectory(tmp_path: Path) -> None:
    """The SWE-bench experiments layout (``<run>/trajs/<instance>.traj``, ``<run>/all_preds.jsonl``,
    ``<run>/results/results.json``, as Multi-SWE-bench's SWE-agent runs of 2024): an older trajectory names no
    model; the predictions give SWE-agent's run name, whose first part is the model. The predictions file is a
    side file of the run, not a failed source; a line that is not a prediction is passed over."""
    run = tmp_path / "20240825_SWE-agent_gpt-4o-2024-05-13"
    (run / "trajs").mkdir(parents=True)
    real = FIXTURES / "real" / "swe_agent" / "trajectories" / "demonstrations" / "function_calling_simple.traj"
    assert "replay_config" not in real.read_text()
    for inst in ("apache__dubbo-7041", "google__gson-1093"):
        shutil.copy(real, run / "trajs" / f"{inst}.traj")
    name = "gpt-4o-2024-05-13__swe-bench-java__default__t-0.00__p-0.95__c-1.50__install-0__swe-bench-java"
    (run / "all_preds.jsonl").write_text(
        json.dumps({"model_name_or_path": name, "instance_id": "apache__dubbo-7041", "model_patch": "diff"})
        + "\nnot json\n"
        + json.dumps({"instance_id": "google__gson-1093", "model_patch": None})
        + "\n"
    )
    (run / "results").mkdir()
    (run / "results" / "results.json").write_text(
        json.dumps({"resolved_ids": ["apache__dubbo-7041"], "unresolved_ids": ["google__gson-1093"]})
    )
    db = tmp_path / "w.duckdb"
    _ingest(db, run)
    got = query(
        db,
        "SELECT c.native_id, c.model, o.success FROM conversations c JOIN conversation_outcomes o "
        "USING (conversation_id) ORDER BY 1",
    )
    assert got == [("apache__dubbo-7041", "gpt-4o-2024-05-13", True), ("google__gson-1093", None, False)]
    assert query(db, "SELECT format, count(*) FROM sources GROUP BY 1") == [("swe-agent", 2)]
