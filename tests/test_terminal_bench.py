"""terminal-bench run folders (SPEC §20): one run per trial, its outcome from the trial's results.json (null
counts as failed), the Terminus agent's episodes as steps, the run's own files skipped and counted. The fixture
is synthetic, written to the layout and models of terminal-bench's harness (terminal_bench/handlers/
trial_handler.py TrialPaths, harness/models.py TrialResults and RunMetadata, the Terminus agents' episode logs)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from forensics import api
from tests.conftest import FIXTURES, query, run_cli

RUN = FIXTURES / "agents" / "terminal_bench"


def test_trials_outcomes_steps_and_tokens(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    code, out, _ = run_cli("ingest", str(RUN), "--db", str(db))
    assert code == 0 and "4 sources (0 failed), 7 side files = 11 files: 2 conversations new" in out
    assert query(db, "SELECT c.native_id, o.success, o.score, json_extract_string(o.detail, '$.task') FROM "
                     "conversation_outcomes o JOIN conversations c USING (conversation_id) ORDER BY 1") == [
        ("fix-permissions.1-of-1.2025-07-01__12-00-00", False, 0.0, "fix-permissions"),  # is_resolved null: failed
        ("hello-world.1-of-1.2025-07-01__12-00-00", True, 1.0, "hello-world")]
    assert query(db, "SELECT position, role, origin, tool_call_count FROM messages m JOIN conversations c "
                     "USING (conversation_id) WHERE c.native_id LIKE 'hello-world%' ORDER BY position") == [
        (0, "user", "person", 0), (1, "assistant", "assistant", 1), (2, "tool", "tool", 0),
        (3, "assistant", "assistant", 0)]
    (args, result_position), = query(db, "SELECT arguments, result_position FROM tool_calls")
    assert result_position == 2 and [c["keystrokes"] for c in json.loads(args)["commands"]] == [
        "echo 'Hello, world!' > hello.txt\n", "cat hello.txt\n"]
    assert query(db, "SELECT DISTINCT model FROM conversations") == [("anthropic/claude-sonnet-4-20250514",)]
    row = api.usage(db, by="agent").row(0, named=True)
    assert (row["agent"], row["input"], row["output"], row["graded"], row["passed"]) == (
        "terminal-bench", 4210, 388, 2, 1)
    notes = " ".join(n for (n,) in query(db, "SELECT note FROM import_runs WHERE note IS NOT NULL"))
    assert "trial result repeated in the run's results.json (read from its folder) x2" in notes
    assert "no Terminus episodes in agent-logs/" in notes


def test_a_truncated_trial_is_quarantined_whole(tmp_path: Path) -> None:
    trial = tmp_path / "t" / "results.json"
    trial.parent.mkdir()
    trial.write_text('{"trial_name": "x", "task_id": "y", "instruction": "z", "is_resolved": tr')
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(trial), "--format", "terminal-bench", "--db", str(db))
    assert "Traceback" not in out + err and "1 quarantined" in out
    (reason, size), = query(db, "SELECT reason, raw_bytes FROM quarantine")
    assert size == trial.stat().st_size and reason


def test_a_trial_without_the_run_around_it(tmp_path: Path) -> None:
    src = next(RUN.glob("*/hello-world/*"))
    shutil.copytree(src, tmp_path / "trial")
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(tmp_path / "trial"), "--db", str(db))[0] == 0
    assert query(db, "SELECT model, message_count FROM conversations") == [(None, 4)]  # no run_metadata.json
