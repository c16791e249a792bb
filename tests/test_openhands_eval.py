"""OpenHands evaluation output.jsonl as the Multi-SWE-bench and SWE-bench harnesses write it (EvalOutput,
evaluation/utils/shared.py: ``instance_id``, ``test_result``, a long ``instruction``, ``metadata``, then
``history``, ``metrics``, ``error``, ``instance``), on the real file OpenHands ships
(fixtures/real/openhands, MIT): every line runs past the sniff's 64 KB and names its history after 8 KB, which
was read as "no line is a message entry". Each instance is a run; its outcome comes from the line's own
``report`` (update_output_with_eval.py), ``test_result.report`` or a report beside the file
(``eval_files/dataset/final_report.json``, Multi-SWE-bench's FinalReport with ``org/repo:pr-N`` ids;
``report.json``, SWE-bench's; ``<name>.swebench_eval.jsonl``), never guessed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.agent_counts import Run
from tests.conftest import FIXTURES, query, run_cli

REAL = FIXTURES / "real" / "openhands" / "evaluation" / "benchmarks" / "multi_swe_bench" / "examples" / "output.jsonl"
IDS = ["ponylang__ponyc-4588", "ponylang__ponyc-4593", "ponylang__ponyc-4595"]


def _counts(path: Path) -> Run:
    """Counted from the raw lines: an agent action is a call (messages, the system prompt and recalls are not),
    answered by the observation carrying its tool_call_id; an error is an ``error`` observation or a non-zero
    exit code, except a search that matched nothing (grep's exit code 1 with no output: not an error)."""
    out = Run(0, 0, 0, 0, 0)
    skipped = {"message", "system", "recall", "change_agent_state", "null", "condensation"}
    for line in path.read_text().splitlines():
        events = json.loads(line)["history"]
        calls = [e for e in events if "action" in e and e.get("source") == "agent" and e["action"] not in skipped]
        ids = {e["tool_call_metadata"]["tool_call_id"] for e in calls}
        answers = [
            e for e in events if "observation" in e and (e.get("tool_call_metadata") or {}).get("tool_call_id") in ids
        ]
        person = sum(e.get("action") == "message" and e.get("source") == "user" for e in events)
        errors = 0
        for e in answers:
            code = e["extras"].get("metadata", {}).get("exit_code") if isinstance(e.get("extras"), dict) else None
            no_match = code == 1 and not e["content"] and e["extras"].get("command", "").startswith("grep")
            errors += (e["observation"] == "error" or code not in (None, 0, -1)) and not no_match
        out = Run(
            out.conversations + 1,
            out.person + person,
            out.calls + len(calls),
            out.linked + len({e["tool_call_metadata"]["tool_call_id"] for e in answers}),
            out.errors + errors,
        )
    return out


def _ingest(path: Path, db: Path) -> str:
    code, out, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0 and "Traceback" not in out + err, out + err
    return out


def test_the_multi_swe_bench_output_imports_whole(tmp_path: Path) -> None:
    assert REAL.stat().st_size == 690202 and all(len(line) > 1 << 16 for line in REAL.read_bytes().splitlines())
    db = tmp_path / "w.duckdb"
    out = _ingest(REAL, db)
    assert "openhands" in out and "3 conversations new" in out
    expected = _counts(REAL)
    assert expected == Run(3, 3, 105, 103, 17)
    assert query(
        db,
        "SELECT count(*), sum(person) FROM (SELECT conversation_id, count(*) FILTER "
        "(WHERE origin = 'person') AS person FROM messages GROUP BY 1)",
    ) == [(3, 3)]
    assert query(db, "SELECT count(*), count(result_position), count(*) FILTER (WHERE is_error) FROM tool_calls") == [
        (expected.calls, expected.linked, expected.errors)
    ]
    assert query(db, "SELECT c.native_id, c.message_count, c.model FROM conversations c ORDER BY 1") == [
        ("ponylang__ponyc-4588", 101, "openai/openrouter-llama-4-maverick"),
        ("ponylang__ponyc-4593", 68, "openai/openrouter-llama-4-maverick"),
        ("ponylang__ponyc-4595", 47, "openai/openrouter-llama-4-maverick"),
    ]
    # no report beside the file and none in the lines: no outcome, rather than a guessed one
    assert query(db, "SELECT count(*) FROM conversation_outcomes") == [(0,)]
    assert "0 conversations new, 0 updated, 3 unchanged; 0 messages read" in _ingest(
        REAL, db
    )  # a second ingest adds nothing
    assert query(db, "SELECT count(*) FROM conversations") == [(3,)]


def test_outcomes_from_the_final_report_beside_it(tmp_path: Path) -> None:
    """Multi-SWE-bench's FinalReport (harness/report.py) at eval_files/dataset/final_report.json, where the
    benchmark's update_output_with_eval.py reads it; an instance it does not list has no outcome."""
    run = tmp_path / "run"
    (run / "eval_files" / "dataset").mkdir(parents=True)
    shutil.copy(REAL, run / "output.jsonl")
    report = {
        "total_instances": 2,
        "submitted_instances": 2,
        "completed_instances": 2,
        "incomplete_instances": 0,
        "resolved_instances": 1,
        "unresolved_instances": 1,
        "empty_patch_instances": 0,
        "error_instances": 0,
        "submitted_ids": ["ponylang/ponyc:pr-4595", "ponylang/ponyc:pr-4593"],
        "completed_ids": ["ponylang/ponyc:pr-4595", "ponylang/ponyc:pr-4593"],
        "incomplete_ids": [],
        "resolved_ids": ["ponylang/ponyc:pr-4595"],
        "unresolved_ids": ["ponylang/ponyc:pr-4593"],
        "empty_patch_ids": [],
        "error_ids": [],
    }
    (run / "eval_files" / "dataset" / "final_report.json").write_text(json.dumps(report))
    db = tmp_path / "w.duckdb"
    _ingest(run, db)
    assert query(
        db,
        "SELECT c.native_id, o.success, json_extract_string(o.detail, '$.by') FROM conversations c "
        "LEFT JOIN conversation_outcomes o USING (conversation_id) ORDER BY 1",
    ) == [
        ("ponylang__ponyc-4588", None, None),
        ("ponylang__ponyc-4593", False, "eval_files/dataset/final_report.json resolved_ids"),
        ("ponylang__ponyc-4595", True, "eval_files/dataset/final_report.json resolved_ids"),
    ]
    second = _ingest(run, db)
    assert "0 conversations new, 0 updated" in second and query(db, "SELECT count(*) FROM conversation_outcomes") == [
        (2,)
    ]


def test_the_line_report_and_the_swebench_report(tmp_path: Path) -> None:
    """update_output_with_eval.py writes ``report`` into each line (it wins over a file beside); SWE-bench's
    report.json grades the rest; the remote evaluation's <name>.swebench_eval.jsonl when no report.json."""
    lines = REAL.read_text().splitlines()
    first = json.loads(lines[0])
    first["report"] = {
        "empty_generation": False,
        "resolved": True,
        "failed_apply_patch": False,
        "error_eval": False,
        "test_timeout": False,
    }
    run = tmp_path / "swe"
    run.mkdir()
    (run / "output.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    (run / "report.json").write_text(json.dumps({"resolved_ids": [], "unresolved_ids": IDS, "error_ids": []}))
    db = tmp_path / "w.duckdb"
    _ingest(run / "output.jsonl", db)
    assert query(
        db,
        "SELECT c.native_id, o.success, json_extract_string(o.detail, '$.by') FROM conversations c "
        "JOIN conversation_outcomes o USING (conversation_id) ORDER BY 1",
    ) == [
        ("ponylang__ponyc-4588", False, "report.json resolved_ids"),
        ("ponylang__ponyc-4593", False, "report.json resolved_ids"),
        ("ponylang__ponyc-4595", True, "report.resolved"),
    ]
    remote = tmp_path / "remote"
    remote.mkdir()
    shutil.copy(REAL, remote / "output.jsonl")
    (remote / "output.swebench_eval.jsonl").write_text(
        json.dumps({"instance_id": IDS[1], "test_result": {"report": {"resolved": True}}}) + "\n{broken\n"
    )
    db2 = tmp_path / "w2.duckdb"
    _ingest(remote / "output.jsonl", db2)
    assert query(
        db2,
        "SELECT c.native_id, o.success, json_extract_string(o.detail, '$.by') FROM conversations c "
        "JOIN conversation_outcomes o USING (conversation_id)",
    ) == [("ponylang__ponyc-4593", True, "output.swebench_eval.jsonl resolved_ids")]


def test_a_broken_line_is_quarantined_and_the_others_read(tmp_path: Path) -> None:
    lines = REAL.read_bytes().splitlines()
    bad = tmp_path / "output.jsonl"
    bad.write_bytes(lines[0] + b"\n" + lines[1][: len(lines[1]) // 2] + b"\n" + lines[2] + b"\n")
    db = tmp_path / "w.duckdb"
    out = _ingest(bad, db)
    assert "2 conversations new" in out and "1 quarantined" in out
    ((reason, size),) = query(db, "SELECT reason, raw_bytes FROM quarantine")
    assert size == len(lines[1]) // 2 and reason
