"""terminal-bench run folders (docs/outcomes.md#where-outcomes-come-from): one run per trial, its outcome from the trial's results.json (null
counts as failed), the Terminus agent's episodes as steps, the run's own files skipped and counted. The fixture
is synthetic, written to the layout and models of terminal-bench's harness (terminal_bench/handlers/
trial_handler.py TrialPaths, harness/models.py TrialResults and RunMetadata, the Terminus agents' episode logs)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path

import pytest

from forensics import api
from tests.conftest import FIXTURES, query, run_cli

RUN = FIXTURES / "agents" / "terminal_bench"


def test_trials_outcomes_steps_and_tokens(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    code, out, _ = run_cli("ingest", str(RUN), "--db", str(db))
    assert code == 0 and "4 sources (0 failed), 7 side files = 11 files: 2 conversations new" in out
    assert query(
        db,
        "SELECT c.native_id, o.success, o.score, json_extract_string(o.detail, '$.task') FROM "
        "conversation_outcomes o JOIN conversations c USING (conversation_id) ORDER BY 1",
    ) == [
        ("fix-permissions.1-of-1.2025-07-01__12-00-00", False, 0.0, "fix-permissions"),  # is_resolved null: failed
        ("hello-world.1-of-1.2025-07-01__12-00-00", True, 1.0, "hello-world"),
    ]
    assert query(
        db,
        "SELECT position, role, origin, tool_call_count FROM messages m JOIN conversations c "
        "USING (conversation_id) WHERE c.native_id LIKE 'hello-world%' ORDER BY position",
    ) == [
        (0, "user", "person", 0),
        (1, "assistant", "assistant", 1),
        (2, "tool", "tool", 0),
        (3, "assistant", "assistant", 0),
    ]
    ((args, result_position),) = query(db, "SELECT arguments, result_position FROM tool_calls")
    assert result_position == 2 and [c["keystrokes"] for c in json.loads(args)["commands"]] == [
        "echo 'Hello, world!' > hello.txt\n",
        "cat hello.txt\n",
    ]
    assert query(db, "SELECT DISTINCT model FROM conversations") == [("anthropic/claude-sonnet-4-20250514",)]
    row = api.usage(db, by="agent").row(0, named=True)
    assert (row["agent"], row["input"], row["output"], row["graded"], row["passed"]) == (
        "terminal-bench",
        4210,
        388,
        2,
        1,
    )
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
    ((reason, size),) = query(db, "SELECT reason, raw_bytes FROM quarantine")
    assert size == trial.stat().st_size and reason


def test_a_trial_without_the_run_around_it(tmp_path: Path) -> None:
    src = next(RUN.glob("*/hello-world/*"))
    shutil.copytree(src, tmp_path / "trial")
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(tmp_path / "trial"), "--db", str(db))[0] == 0
    assert query(db, "SELECT model, message_count FROM conversations") == [(None, 4)]  # no run_metadata.json


# --- an installed agent's printed conversation: sessions/agent.log (issue 42, issue 41 item 6) ---------------------

BUILT = FIXTURES / "built" / "terminal_bench" / "2025-08-07__20-46-16"
COUNTED = BUILT / "count-log-lines" / "count-log-lines.1-of-1.2025-08-07__20-46-16"
CSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]")


def printed_counts(agent_log: Path) -> tuple[int, int, int]:
    """(answers, results, failed results) counted from the raw bytes, apart from the reader: the colour codes
    dropped, a ``mini-swe-agent (step N, $C):`` line is an answer, a ``<returncode>N</returncode>`` line a
    command's result, failed when N is not 0; a timeout notice (``The last command <command>…``) a failed result;
    the submission (the last message after the last answer, before ``Saved trajectory``, when it is neither) a
    result too. On the 176 trials of the leaderboard's mini-swe-agent run that printed a conversation, this and
    the reader agree on every figure (3,485 answers, 3,461 results, 583 failed)."""
    lines = CSI.sub(b"", agent_log.read_bytes()).decode("utf-8", "replace").replace("\r", "").split("\n")
    answers = sum(bool(re.match(r"^mini-swe-agent \(step \d+, \$[\d.]+\):$", line)) for line in lines)
    codes = [re.match(r"^<returncode>(-?\d+)</returncode>$", line) for line in lines]
    timeouts = sum(line.startswith("The last command <command>") for line in lines)  # rich wraps a long one
    # the submission: the last message after the last answer, before "Saved trajectory", unless it is a result
    # or a harness notice counted above
    steps = [i for i, line in enumerate(lines) if line.startswith("mini-swe-agent (step ")]
    saved = next((i for i, line in enumerate(lines) if line.startswith("Saved trajectory to ")), None)
    tail = lines[steps[-1] : saved] if steps and saved is not None else []
    user = max((i for i, line in enumerate(tail) if line == "User:"), default=None)
    submits = user is not None and not any(
        line.startswith(("<returncode>", "The last command <command>", "Please always provide")) for line in tail[user:]
    )
    results = sum(c is not None for c in codes) + timeouts + submits
    return answers, results, sum(c is not None and c.group(1) != "0" for c in codes) + timeouts


def test_the_printed_mini_swe_agent_conversation_is_the_runs_transcript(tmp_path: Path) -> None:
    """Built from the format (fixtures/built/SOURCES.md): the real trials of the leaderboard's repository have no
    licence. The instruction stays the person's turn; the printed system prompt and the task as the template
    wraps it are the harness's; each answer's one bash block is a call whose printed output is its result; an
    answer with two blocks runs nothing and the format error after it is the harness's."""
    db = tmp_path / "w.duckdb"
    code, out, _ = run_cli("ingest", str(BUILT), "--db", str(db))
    assert code == 0 and "4 sources (0 failed), 4 side files = 8 files: 2 conversations new" in out
    assert query(
        db,
        "SELECT m.position, m.role, m.origin, m.tool_call_count FROM messages m JOIN conversations c "
        "USING (conversation_id) WHERE c.native_id LIKE 'count%' ORDER BY 1",
    ) == [
        (0, "user", "person", 0),
        (1, "system", "harness", 0),
        (2, "user", "harness", 0),
        (3, "assistant", "assistant", 1),
        (4, "tool", "tool", 0),
        (5, "assistant", "assistant", 0),
        (6, "user", "harness", 0),
        (7, "assistant", "assistant", 1),
        (8, "tool", "tool", 0),
        (9, "assistant", "assistant", 1),
        (10, "tool", "tool", 0),
        (11, "assistant", "assistant", 1),
        (12, "tool", "tool", 0),
    ]
    answers, results, failed = printed_counts(COUNTED / "sessions" / "agent.log")
    assert (answers, results, failed) == (5, 4, 1)
    assert query(db, "SELECT count(*), count(result_position), count(*) FILTER (WHERE is_error) FROM tool_calls") == [
        (results, results, failed)
    ]
    assert query(db, "SELECT count(*) FROM messages WHERE role = 'assistant'") == [(answers,)]
    assert query(db, "SELECT arguments FROM tool_calls WHERE is_error") == [('{"command":"python3 /app/count.py"}',)]
    texts = " ".join(t for (t,) in query(db, "SELECT content FROM messages"))
    assert "LiteLLM" not in texts and "Waiting for the LM" not in texts and "\x1b" not in texts and "\r" not in texts
    assert query(
        db,
        "SELECT c.native_id, o.success FROM conversation_outcomes o JOIN conversations c "
        "USING (conversation_id) ORDER BY 1",
    ) == [("build-tcc-qemu.1-of-1.2025-08-07__20-46-16", False), ("count-log-lines.1-of-1.2025-08-07__20-46-16", True)]
    notes = " ".join(n for (n,) in query(db, "SELECT note FROM import_runs WHERE note IS NOT NULL"))
    assert (
        "sessions/agent.log: mini-swe-agent 1.7.0, 5 steps, $0.07 as printed; left out: 36 lines of other "
        "programs' log records, 12 terminal lines between messages" in notes
    )
    assert "sessions/agent.log holds no conversation this reader knows" in notes  # mini: command not found
    again = run_cli("ingest", str(BUILT), "--db", str(db))[1]
    assert "0 conversations new, 0 updated, 2 unchanged; 0 messages read" in again


def test_a_cut_or_broken_agent_log_keeps_what_was_printed(tmp_path: Path) -> None:
    """The log stops inside the run (the harness killed the agent): what was printed is read, said in the note.
    Every hostile mutation of the log (cut, flipped bytes, invalid UTF-8, a 3 MB line, empty...) imports the
    trial, never fails it."""
    from tests.hostile_corpus import _text_mutations

    raw = (COUNTED / "sessions" / "agent.log").read_bytes()
    cut = raw[: raw.index(b"python3 /app/count.py") + 40]
    cases = [("cut-in-step-3", cut), *_text_mutations(raw, random.Random(42))]
    for name, data in cases:
        trial = tmp_path / name / COUNTED.name
        shutil.copytree(COUNTED, trial)
        (trial / "sessions" / "agent.log").write_bytes(data)
        db = tmp_path / f"{name}.duckdb"
        code, out, err = run_cli("ingest", str(trial), "--db", str(db))
        assert code == 0 and "Traceback" not in out + err and "1 conversations new" in out, (name, out + err)
        if name == "cut-in-step-3":
            assert query(db, "SELECT role FROM messages ORDER BY position")[-1] == ("assistant",)
            assert query(db, "SELECT count(*), count(result_position) FROM tool_calls") == [(2, 1)]
            (note,) = query(db, "SELECT note FROM import_runs WHERE note LIKE '%agent.log%'")[0]
            assert note.endswith("the log stops inside the run") or "the log stops inside the run;" in note


REAL_TRIAL = (
    "20250825_swe-agent-mini_claude-4-sonnet/2025-08-07__20-46-16/blind-maze-explorer-5x5/"
    "blind-maze-explorer-5x5.1-of-1.2025-08-07__20-46-16"
)


def test_the_real_leaderboard_trial_where_a_developer_has_it(tmp_path: Path) -> None:
    """laude-institute/terminal-bench-leaderboard @ 8e1925a3 (no licence: not in the repository), results/
    terminal-bench-core@0.1.1/<REAL_TRIAL>: mini-swe-agent 1.7.0 with claude-sonnet-4, 19 steps, a LiteLLM
    traceback after nearly every step. $FORENSICS_REAL_SHAPES/terminal_bench/<REAL_TRIAL>."""
    base = os.environ.get("FORENSICS_REAL_SHAPES")
    trial = Path(base) / "terminal_bench" / REAL_TRIAL if base else None
    if trial is None or not (trial / "sessions" / "agent.log").is_file():
        pytest.skip("the real trial is not here (its repository has no licence)")
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(trial), "--db", str(db))[0] == 0
    answers, results, failed = printed_counts(trial / "sessions" / "agent.log")
    assert (answers, results) == (19, 19)
    assert query(db, "SELECT count(*) FROM messages WHERE role = 'assistant'") == [(answers,)]
    assert query(db, "SELECT count(*), count(result_position), count(*) FILTER (WHERE is_error) FROM tool_calls") == [
        (results, results, failed)
    ]
    assert "LiteLLM" not in " ".join(t for (t,) in query(db, "SELECT content FROM messages"))


def test_terminus_2_episodes_with_response_txt(tmp_path: Path) -> None:
    """Terminus 2 (terminal_bench/agents/terminus_2/terminus_2.py ``_setup_episode_logging``) writes
    ``episode-<n>/{debug.json, prompt.txt, response.txt}``: the answer as the model sent it, a JSON object of
    ``analysis``, ``plan``, ``commands`` (``keystrokes``, ``duration``) and ``task_complete``, which its parser
    finds inside surrounding text; an answer with no such object stays the assistant's text."""
    trial = tmp_path / "run" / "fix-git" / "fix-git.1-of-1.2026-01-05__10-00-00"
    (trial / "agent-logs").mkdir(parents=True)
    (trial / "results.json").write_text(
        json.dumps(
            {
                "trial_name": trial.name,
                "task_id": "fix-git",
                "instruction": "Recover the lost commit.",
                "is_resolved": False,
                "total_input_tokens": None,
                "total_output_tokens": None,
            }
        )
    )
    answers = [
        'Here is my answer:\n{"analysis": "A detached HEAD.", "plan": "Look at the reflog.", "commands": '
        '[{"keystrokes": "git reflog\\n", "duration": 1.0}], "task_complete": false}',
        '{"analysis": "The commit is abc123.", "plan": "Merge it.", "commands": [{"keystrokes": "git merge abc123\\n",'
        ' "duration": 2.0}, {"keystrokes": "git log --oneline -3\\n", "duration": 0.5}], "task_complete": true}',
        "<response><analysis>Done.</analysis>",
    ]
    for n, answer in enumerate(answers):
        ep = trial / "agent-logs" / f"episode-{n}"
        ep.mkdir()
        (ep / "prompt.txt").write_text("Recover the lost commit." if n == 0 else f"screen after episode {n - 1}")
        (ep / "response.txt").write_text(answer)
        (ep / "debug.json").write_text("{}")
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(tmp_path / "run"), "--db", str(db))
    assert code == 0 and "Traceback" not in out + err
    assert query(db, "SELECT position, role, origin, tool_call_count, content FROM messages ORDER BY position") == [
        (0, "user", "person", 0, "Recover the lost commit."),
        (1, "assistant", "assistant", 1, "A detached HEAD.\n\nLook at the reflog."),
        (2, "tool", "tool", 0, "screen after episode 0"),
        (3, "assistant", "assistant", 1, "The commit is abc123.\n\nMerge it."),
        (4, "tool", "tool", 0, "screen after episode 1"),
        (5, "assistant", "assistant", 0, "<response><analysis>Done.</analysis>"),
    ]
    assert [
        json.loads(a)["is_task_complete"] for (a,) in query(db, "SELECT arguments FROM tool_calls ORDER BY seq")
    ] == [False, True]
