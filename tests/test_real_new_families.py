"""Real files of the agent families added for issue 42 item 4 (fixtures/real/<family>, SOURCES.md there): each
file, pointed at alone with no flags, is detected as its family and imports with the figures (conversations,
the person's messages on the main path, tool calls, answered calls, calls the format flags as failed, tokens)
counted from the raw file by tests/agent_counts.py; every record read is imported, skipped or quarantined."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from forensics.formats.kit.declare import Probe
from forensics.ingestion import registry
from tests.agent_counts import (
    Tally,
    crush_file,
    hermes_file,
    kimi_context_file,
    letta_file,
    moatless_file,
    nanobot_file,
    pi_file,
)
from tests.conftest import FIXTURES, query, run_cli
from tests.test_real_logs_2026 import figures

REAL = FIXTURES / "real"
KIMI = "kimi_cli/MoonshotAI+kimi-cli/outputs/scikit-learn__scikit-learn-26323/"
# format -> (its files under fixtures/real, the counter, the figures expected of each file: known by reading it)
CASES: dict[str, tuple[list[str], Callable[[Path], Tally], list[Tally]]] = {
    "pi": (
        ["pi/badlogic+pi-mono/packages/coding-agent/test/fixtures/large-session.jsonl"],
        pi_file,
        # errors 19 -> 8 on purpose (branch ending2): 11 greps that matched nothing ("Command exited with code 1")
        # are no failure, whoever flagged them
        [Tally(1, 88, 391, 373, 8, 47_609_906)],
    ),
    "openclaw": (
        ["openclaw/Gracula-bot+Gracula/.openclaw/agents/main/sessions/model-test-kilocode.jsonl"],
        pi_file,
        [Tally(1, 1, 0, 0, 0, 0)],
    ),
    "crush": (["crush/dbos-inc+dbos-transact-golang/.crush/crush.db"], crush_file, [Tally(2, 13, 41, 41, 8, 0)]),
    # Kimi CLI 0.42: a session is its context file alone (before 0.59's session folder and wire.jsonl)
    "kimi-cli": (
        [
            KIMI + "20251030-164452/00d5060aaec3fda180930ea52304b87b/531d195b-6436-426e-b010-4bf723a992de.jsonl",
            KIMI
            + "20251030-165708/sessions/00d5060aaec3fda180930ea52304b87b/d8447fa8-9d8e-41af-9fc6-a12e4a196b6c.jsonl",
            # the first session's ReadContext sub-agent, beside it
            KIMI + "20251030-164452/00d5060aaec3fda180930ea52304b87b/531d195b-6436-426e-b010-4bf723a992de_read_2.jsonl",
        ],
        kimi_context_file,
        [Tally(1, 1, 27, 27, 0, 330_240), Tally(1, 1, 46, 46, 0, 874_596), Tally(1, 0, 17, 17, 0, 274_338)],
    ),
    "letta": (
        [
            "letta/letta-ai+agent-file/memgpt_agent/memgpt_agent_with_convo.af",
            "letta/letta-ai+agent-file/customer_service_agent/customer_service.af",
            "letta/letta-ai+agent-file/agents/@letta-ai/loop/loop.af",
            "letta/letta-ai+agent-file/workflow_agent/outreach_workflow_agent.af",
        ],
        letta_file,
        [Tally(1, 23, 28, 28, 0, 0), Tally(1, 2, 4, 4, 0, 0), Tally(1, 0, 1, 1, 0, 0), Tally(1, 0, 0, 0, 0, 0)],
    ),
    "nanobot": (
        ["nanobot/niancpu+nanobot/.nanobot/workspace/sessions/cli_direct.jsonl"],
        nanobot_file,
        [Tally(1, 8, 0, 0, 0, 0)],
    ),
    "moatless": (
        [
            "moatless/aorwall+moatless-tools/tests/trajectories/django__django-9296/trajectory.json",
            "moatless/aorwall+moatless-tools/tests/trajectories/psf__requests-1724/trajectory.json",
        ],
        moatless_file,
        [Tally(1, 1, 7, 7, 3, 16_931), Tally(1, 1, 10, 10, 1, 46_235)],
    ),
    "hermes": (
        ["hermes/foodoaiprojects+hermes-agent/.hermes/sessions/session_20260421_163501_b244f5.json"],
        hermes_file,
        [Tally(1, 1, 11, 11, 2, 0)],
    ),
}


@pytest.mark.parametrize("fmt", CASES)
def test_each_real_file_is_detected_and_imports_as_counted(fmt: str, tmp_path: Path) -> None:
    files, count, expected = CASES[fmt]
    db = tmp_path / "w.duckdb"
    for name, want in zip(files, expected):
        f = REAL / name
        found = registry.sniff(Probe(f))
        assert found is not None and found[0].name == fmt, f"{name}: detected as {found and found[0].name}"
        code, _, err = run_cli("ingest", str(f), "--db", str(db))
        assert code == 0, err
        raw = count(f)
        assert raw == want, f"{name}: the raw counter says {raw}"
        assert figures(db, f) == raw, name
    for read, imported, quarantined, skipped in query(
        db, "SELECT messages_read, messages_imported, quarantined, skipped FROM import_runs"
    ):
        assert read == imported + quarantined + skipped


def test_from_pi_reads_pis_own_folder_and_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    home = tmp_path / "home"
    folder = home / ".pi" / "agent" / "sessions" / "--Users-badlogic-workspaces-pi-mono--"
    folder.mkdir(parents=True)
    shutil.copy(REAL / CASES["pi"][0][0], folder / "2025-11-20T23-33-50-805Z_d703a1a9.jsonl")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", "--from", "pi", "--db", str(db))
    assert code == 0, err
    assert query(db, "SELECT format, count(*) FROM sources GROUP BY 1") == [("pi", 1)]
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "nowhere"))
    code, _, err = run_cli("ingest", "--from", "pi", "--db", str(db))
    assert code == 2 and "no pi coding agent logs at" in err and len(err.strip().splitlines()) == 1


def test_a_version_3_tree_keeps_the_branch_left_behind_off_the_main_path(tmp_path: Path) -> None:
    """pi's /tree: a second user message under an earlier entry; the leaf (the last entry) decides the main path, a
    model change between two messages does not break the chain, the compaction is an event and harness text."""
    lines = [
        {"type": "session", "version": 3, "id": "s3", "timestamp": "2026-01-02T10:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "user", "content": "a"},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "t",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x"}}],
                "model": "m1",
                "usage": {"input": 5, "output": 2, "cacheRead": 3, "cacheWrite": 1},
            },
        },
        {
            "type": "message",
            "id": "r1",
            "parentId": "a1",
            "timestamp": "t",
            "message": {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": "no"}],
                "isError": True,
            },
        },
        {
            "type": "message",
            "id": "u2",
            "parentId": "r1",
            "timestamp": "t",
            "message": {"role": "user", "content": "b"},
        },
        {"type": "model_change", "id": "m", "parentId": "r1", "timestamp": "t", "provider": "p", "modelId": "m2"},
        {
            "type": "compaction",
            "id": "k",
            "parentId": "m",
            "timestamp": "t",
            "summary": "so far",
            "tokensBefore": 900,
            "firstKeptEntryId": "r1",
        },
        {"type": "message", "id": "u3", "parentId": "k", "timestamp": "t", "message": {"role": "user", "content": "c"}},
        {"type": "session_info", "id": "n", "parentId": "u3", "timestamp": "t", "name": "Named"},
    ]
    f = tmp_path / "2026-01-02T10-00-00-000Z_s3.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert registry.sniff(Probe(f))[0].name == "pi"  # type: ignore[index]
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(f), "--db", str(db))[0] == 0
    assert figures(db, f) == pi_file(f) == Tally(1, 2, 1, 1, 1, 11)
    rows = query(db, "SELECT content, role, origin, on_main_path FROM messages ORDER BY seq")
    assert rows == [
        ("a", "user", "person", True),
        ("", "assistant", "assistant", True),
        ("no", "tool", "tool_result", True),
        ("b", "user", "person", False),
        ("so far", "user", "harness", True),
        ("c", "user", "person", True),
    ]
    assert query(db, "SELECT title FROM conversations") == [("Named",)]
    assert query(db, "SELECT kind, pre_tokens FROM events") == [("compaction", 900)]


def test_a_kimi_cli_context_file_tells_the_person_from_kimi_cli_and_pairs_each_steps_usage(tmp_path: Path) -> None:
    """Kimi CLI up to 0.58 wrote a session as its context (``<dir hash>/<session id>.jsonl``): it was read as plain
    JSONL and every line quarantined. A user line of <system> text only (CHECKPOINT, D-Mail) is Kimi CLI's; a
    tool line starting <system>ERROR: failed; a step's usage is the _usage before its response (input) and the one
    after (input + output); a _usage after a compaction, with no response, is no spend."""
    lines = [
        {"role": "_system_prompt", "content": "You are Kimi CLI."},
        {"role": "_checkpoint", "id": 0},
        {"role": "user", "content": "fix the build"},
        {"role": "_checkpoint", "id": 1},
        {"role": "user", "content": [{"type": "text", "text": "<system>CHECKPOINT 1</system>"}]},
        {"role": "_usage", "token_count": 100},
        {
            "role": "assistant",
            "content": [{"type": "think", "think": "hm"}, {"type": "text", "text": "Running it."}],
            "tool_calls": [{"type": "function", "id": "Bash:0", "function": {"name": "Bash", "arguments": "{}"}}],
        },
        {"role": "_usage", "token_count": 130},
        {
            "role": "tool",
            "content": [{"type": "text", "text": "<system>ERROR: Command failed with exit code: 2.</system>"}],
            "tool_call_id": "Bash:0",
        },
        {"role": "_usage", "token_count": 40},
        {"role": "user", "content": "and now?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
    f = tmp_path / "0a1b" / "3f0c9d2e-0000-4000-8000-000000000000.jsonl"
    f.parent.mkdir()
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert registry.sniff(Probe(f))[0].name == "kimi-cli"  # type: ignore[index]
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(f), "--db", str(db))[0] == 0
    assert figures(db, f) == kimi_context_file(f) == Tally(1, 2, 1, 1, 1, 130)
    assert query(db, "SELECT role, origin, content FROM messages ORDER BY seq") == [
        ("system", "harness", "You are Kimi CLI."),
        ("user", "person", "fix the build"),
        ("user", "harness", "<system>CHECKPOINT 1</system>"),
        ("assistant", "assistant", "Running it."),
        ("tool", "tool_result", "<system>ERROR: Command failed with exit code: 2.</system>"),
        ("user", "person", "and now?"),
        ("assistant", "assistant", "Done."),
    ]
    assert query(db, "SELECT input_tokens, output_tokens FROM message_usage") == [(100, 30)]
    assert query(db, "SELECT title FROM conversations") == [("fix the build",)]
    assert query(db, "SELECT messages_read, messages_imported, quarantined, skipped FROM import_runs") == [
        (12, 7, 0, 5)
    ]


def test_a_plain_chat_jsonl_with_roles_is_not_taken_for_a_kimi_context(tmp_path: Path) -> None:
    f = tmp_path / "chat.jsonl"
    f.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n')
    found = registry.sniff(Probe(f))
    assert found is None or found[0].name != "kimi-cli"


def test_a_kimi_cli_sub_agents_file_is_its_sessions_child_and_its_prompt_the_parent_models(tmp_path: Path) -> None:
    """The real session's ReadContext sub-agent (``<session>_read_2.jsonl`` beside ``<session>.jsonl``): its one
    prompt was written by the main agent, so it is harness, and the conversation is linked to the session."""
    folder = REAL / KIMI / "20251030-164452/00d5060aaec3fda180930ea52304b87b"
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(folder), "--db", str(db))[0] == 0
    rows = query(
        db,
        "SELECT c.native_id, p.native_id, m.origin, left(m.content, 40) FROM conversations c "
        "LEFT JOIN conversations p ON p.conversation_id = c.parent_conversation_id "
        "JOIN messages m ON m.conversation_id = c.conversation_id AND m.role = 'user' ORDER BY 1",
    )
    assert rows == [
        ("531d195b-6436-426e-b010-4bf723a992de", None, "person", "You will be provided with a partial code"),
        (
            "531d195b-6436-426e-b010-4bf723a992de_read_2",
            "531d195b-6436-426e-b010-4bf723a992de",
            "harness",
            "You are assisting the main agent by gath",
        ),
    ]
    assert query(db, "SELECT title FROM conversations WHERE native_id LIKE '%_read_2'")[0][0].startswith(
        "You are assisting the main agent"
    )


def test_letta_reads_the_persons_words_out_of_lettas_envelopes(tmp_path: Path) -> None:
    """The real 0.6.47 file: the person's words are the user_message envelope's message, Letta's login and
    heartbeats are harness, the reply is send_message's argument (the inner monologue left out, counted), the
    agent's name is the speaker."""
    f = REAL / CASES["letta"][0][0]
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(f), "--db", str(db))
    assert code == 0, err
    assert "inner monologue (the agent speaks through send_message) x28" in out + err
    rows = query(db, "SELECT content, role, origin, name FROM messages ORDER BY seq LIMIT 6")
    assert rows[3][1:3] == ("user", "harness") and rows[3][0].startswith('{\n  "type": "login"')
    assert rows[4] == ("hi my name is actually sarah not chad ", "user", "person", None)
    assert rows[5] == ("", "assistant", "assistant", "memgpt_agent")  # core_memory_replace: nothing said
    heartbeats = "SELECT count(*) FROM messages WHERE origin = 'harness' AND content LIKE '{%\"type\": \"heartbeat\"%'"
    assert query(db, heartbeats) == [(4,)]  # and a login, a system_alert: 6 harness user messages
    assert query(db, "SELECT title, provider, model FROM conversations") == [("memgpt_agent", "letta", "gpt-4-0613")]
    # Letta's summarizer hid 69 of 80 messages: a compaction before the summary (messages[81] of the file)
    events = query(db, "SELECT kind, trigger, position, detail FROM events")
    assert [e[:3] for e in events] == [("compaction", "summarize", 81)]
    assert json.loads(events[0][3]) == {"hidden": 69, "total": 80}


def test_a_letta_agent_file_of_a_group_with_reminders_approvals_and_a_summary(tmp_path: Path) -> None:
    """AgentFileSchema's shape as Letta Code writes it: a user message of <system-reminder> parts beside the
    person's text keeps only the text; one of reminders alone is harness; a failed tool return; an approval;
    the evicted-messages summary is a compaction; the sleep-time agent is the manager's sub-agent."""

    def msg(mid: str, role: str, *texts: str, **kw: object) -> dict:
        content = [{"type": "text", "text": t} for t in texts]
        return {
            "type": "message",
            "role": role,
            "content": content,
            "id": mid,
            "created_at": "2026-02-01T10:00:00Z",
            **kw,
        }

    call = {"id": "c1", "type": "function", "function": {"name": "Bash", "arguments": '{"command": "ls"}'}}
    doc = {
        "agents": [
            {
                "name": "coder",
                "memory_blocks": [],
                "agent_type": "letta_v1_agent",
                "llm_config": {"model": "claude-opus-4-6"},
                "id": "agent-0",
                "messages": [
                    msg("m0", "system", "You are a coding agent."),
                    msg("m1", "user", "<system-reminder>\nDevice: macOS\n</system-reminder>", "fix the tests"),
                    msg("m2", "assistant", "Running them.", tool_calls=[call], model="claude-opus-4-6", name="coder"),
                    msg(
                        "m3",
                        "tool",
                        "exit 1",
                        tool_call_id="c1",
                        tool_returns=[{"tool_call_id": "c1", "status": "error"}],
                    ),
                    msg("m4", "approval", approve=False, denial_reason="not now"),
                    msg(
                        "m5",
                        "user",
                        '{"type": "system_alert", "message": "Note: prior messages have been hidden from view. The summary: ..."}',
                    ),
                    msg("m6", "user", "<system-reminder>only context</system-reminder>"),
                ],
            },
            {
                "name": "coder-sleeptime",
                "memory_blocks": [],
                "agent_type": "sleeptime_agent",
                "id": "agent-1",
                "messages": [
                    msg(
                        "s1",
                        "user",
                        "<system-reminder>You are a sleeptime agent.</system-reminder>\n\nMessages:\nuser: hi",
                    )
                ],
            },
        ],
        "groups": [
            {
                "id": "group-0",
                "agent_ids": ["agent-1"],
                "manager_config": {"manager_type": "sleeptime", "manager_agent_id": "agent-0"},
            }
        ],
    }
    f = tmp_path / "coder.af"
    f.write_text(json.dumps(json.dumps(doc)))  # written as one JSON string, as some exports are
    assert registry.sniff(Probe(f))[0].name == "letta"  # type: ignore[index]
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(f), "--db", str(db))[0] == 0
    assert figures(db, f) == letta_file(f) == Tally(2, 2, 1, 1, 1, 0)
    users = "SELECT content, origin FROM messages m JOIN conversations c USING (conversation_id) WHERE role = 'user'"
    # the sleep-time agent's user message is its manager's transcript, reminder or not
    assert query(db, users + " AND title = 'coder-sleeptime'") == [
        ("<system-reminder>You are a sleeptime agent.</system-reminder>\n\nMessages:\nuser: hi", "harness")
    ]
    assert query(db, users + " AND title = 'coder' ORDER BY seq") == [
        ("fix the tests", "person"),
        ("denied: not now", "person"),
        (
            '{"type": "system_alert", "message": "Note: prior messages have been hidden from view. The summary: ..."}',
            "harness",
        ),
        ("<system-reminder>only context</system-reminder>", "harness"),
    ]
    assert query(db, "SELECT kind, trigger FROM events") == [("compaction", "summarize")]
    assert query(db, "SELECT title, parent_native_id FROM conversations ORDER BY title") == [
        ("coder", None),
        ("coder-sleeptime", "agent-0"),
    ]


@pytest.mark.parametrize("fmt", ["letta", "nanobot", "moatless", "hermes"])
def test_the_new_sniff_claims_no_other_fixture(fmt: str) -> None:
    """Detection reads as the family its own files and nothing else of fixtures/ (the other formats' real and
    built files, JSON documents, lists and JSONL among them)."""
    claimed = set()
    for p in FIXTURES.rglob("*"):
        if p.is_file() and p.stat().st_size < 20_000_000:
            found = registry.sniff(Probe(p))
            if found is not None and found[0].name == fmt:
                claimed.add(p.relative_to(REAL).as_posix())
    assert claimed == set(CASES[fmt][0])


def test_nanobot_the_real_session_once_failed_as_jsonl_and_reads_whole(tmp_path: Path) -> None:
    """nanobot 2026-03/04: a metadata line (key cli:direct), two prompts in a row with no reply between them (the
    first got none), replies with reasoning_content (left out, counted)."""
    f = REAL / CASES["nanobot"][0][0]
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(f), "--db", str(db))
    assert code == 0, err
    assert "ignored: reasoning_content x3" in out + err
    assert query(db, "SELECT native_id, provider, message_count FROM conversations") == [("cli:direct", "nanobot", 15)]
    roles = [r for (r,) in query(db, "SELECT role FROM messages ORDER BY seq")]
    assert roles[8:11] == ["user", "user", "assistant"]


def test_a_nanobot_session_with_tools_a_subagent_and_a_cron_job(tmp_path: Path) -> None:
    """The writer's later shape (tool_calls, tool messages cut at its limit, a sub-agent's announcement as a user
    message, a runtime-context block before a prompt) and a cron session whose prompts are the scheduler's."""
    call = {"id": "call_1", "type": "function", "function": {"name": "exec", "arguments": '{"command": "ls"}'}}
    lines = [
        {
            "_type": "metadata",
            "key": "telegram:42",
            "created_at": "2026-04-01T10:00:00",
            "updated_at": "2026-04-01T10:05:00",
            "metadata": {},
            "last_consolidated": 0,
        },
        {
            "role": "user",
            "content": "[Runtime Context — metadata only, not instructions]\nCurrent Time: x\n\nlist my files",
            "timestamp": "2026-04-01T10:00:01",
        },
        {"role": "assistant", "content": "", "tool_calls": [call], "timestamp": "2026-04-01T10:00:02"},
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "exec",
            "content": "Error: permission denied",
            "timestamp": "2026-04-01T10:00:03",
        },
        {"role": "assistant", "content": "I could not list them.", "timestamp": "2026-04-01T10:00:04"},
        {
            "role": "user",
            "content": "[System: subagent] [Subagent 'scan' completed successfully]\n\nTask: scan",
            "timestamp": "2026-04-01T10:01:00",
        },
        {"role": "assistant", "content": "The scan is done.", "timestamp": "2026-04-01T10:01:01"},
    ]
    f = tmp_path / "telegram_42.jsonl"
    f.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    cron = tmp_path / "cron_abc.jsonl"
    cron.write_text(
        json.dumps({"_type": "metadata", "key": "cron:abc", "created_at": "2026-04-01T09:00:00"})
        + "\n"
        + json.dumps({"role": "user", "content": "Check-in time!", "timestamp": "2026-04-01T09:00:00"})
        + "\n"
    )
    for p in (f, cron):
        assert registry.sniff(Probe(p))[0].name == "nanobot"  # type: ignore[index]
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(f), str(cron), "--db", str(db))[0] == 0
    assert figures(db, f) == nanobot_file(f) == Tally(1, 1, 1, 1, 1, 0)
    assert figures(db, cron) == nanobot_file(cron) == Tally(1, 0, 0, 0, 0, 0)
    users = "SELECT content, origin FROM messages m JOIN conversations c USING (conversation_id) WHERE role = 'user'"
    assert query(db, users + " AND c.native_id = 'telegram:42' ORDER BY seq") == [
        ("list my files", "person"),
        ("[System: subagent] [Subagent 'scan' completed successfully]\n\nTask: scan", "harness"),
    ]
    assert query(db, users + " AND c.native_id = 'cron:abc'") == [("Check-in time!", "harness")]
    assert query(db, "SELECT is_error FROM tool_calls") == [(True,)]  # the shared rule reads the error text


def test_moatless_a_rejected_run_keeps_its_retries_as_failed_outcomes(tmp_path: Path) -> None:
    """The real 2024-08 run of django__django-9296: the issue is the person's turn, each state's request a call
    named after the state (its scratch_pad the reply's text), the three EditCode retries failed results holding
    the loop's retry_message, the two states without action skipped and counted."""
    f = REAL / CASES["moatless"][0][0]
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(f), "--db", str(db))
    assert code == 0, err
    assert "state without action (Pending) x1, state without action (Rejected) x1" in out + err
    assert query(db, "SELECT native_id, title, provider, model FROM conversations") == [
        ("coder_django__django-9296_20240816-185824", "django__django-9296", "moatless", "claude-3-5-sonnet-20240620")
    ]
    calls = query(db, "SELECT name, is_error FROM tool_calls ORDER BY seq, call_index")
    assert [c[0] for c in calls] == ["SearchCode", "IdentifyCode", "DecideRelevance", "PlanToCode", *["EditCode"] * 3]
    assert [c[1] for c in calls] == [False] * 4 + [True] * 3
    (first,) = query(db, "SELECT content FROM messages WHERE origin = 'person'")[0]
    assert first.startswith("Paginator just implement the __iter__ function")


def test_hermes_its_own_review_prompt_is_harness_and_json_errors_fail(tmp_path: Path) -> None:
    """The real 2026-04 session (gemini-2.5-flash through OpenRouter): the system prompt first, one prompt of the
    person, then Hermes' background skill review sent as the user (harness); two tools answered {"error": ...}."""
    f = REAL / CASES["hermes"][0][0]
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(f), "--db", str(db))[0] == 0
    rows = query(
        db,
        "SELECT role, origin, left(content, 40) FROM messages WHERE role <> 'assistant' AND role <> 'tool' ORDER BY seq",
    )
    assert rows == [
        ("system", "harness", "You are Hermes Agent, an intelligent AI "),
        ("user", "person", "drive engagement for a new pasta launch "),
        ("user", "harness", "Review the conversation above and consid"),
    ]
    assert query(db, "SELECT title, model FROM conversations") == [
        ("drive engagement for a new pasta launch next week", "google/gemini-2.5-flash")
    ]
    errors = query(db, "SELECT name FROM tool_calls WHERE is_error ORDER BY seq")
    assert errors == [("pg_schemas",), ("pg_query",)]


def test_a_hermes_skill_invocation_is_the_persons_and_a_compaction_is_an_event(tmp_path: Path) -> None:
    """Hermes' other texts as the user, from its source: a skill the person invoked stays theirs; the
    compression's flush note, its summary (also a compaction event) and the empty-response nudge are harness."""
    skill = (
        '[SYSTEM: The user has invoked the "plan" skill, indicating they want you to follow its instructions. '
        "The full skill content is loaded below.]\n\n---\nname: plan\n---\nWrite a plan.\n\n"
        "The user has provided the following instruction alongside the skill invocation: list the tables"
    )
    doc = {
        "session_id": "s1",
        "model": "m",
        "base_url": "u",
        "platform": "cli",
        "session_start": "2026-04-20T13:00:00",
        "last_updated": "2026-04-20T13:10:00",
        "system_prompt": "You are Hermes Agent.",
        "tools": [],
        "message_count": 5,
        "messages": [
            {"role": "user", "content": skill},
            {"role": "user", "content": "[System: The session is being compressed. Save anything worth remembering.]"},
            {"role": "user", "content": "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted."},
            {"role": "user", "content": "You just executed tool calls but returned an empty response. Please go on."},
            {"role": "assistant", "content": "Done."},
        ],
    }
    f = tmp_path / "session_20260420_130000_abcdef.json"
    f.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    assert registry.sniff(Probe(f))[0].name == "hermes"  # type: ignore[index]
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(f), "--db", str(db))[0] == 0
    assert figures(db, f) == hermes_file(f) == Tally(1, 1, 0, 0, 0, 0)
    assert [o for (o,) in query(db, "SELECT origin FROM messages WHERE role = 'user' ORDER BY seq")] == [
        "person",
        "harness",
        "harness",
        "harness",
    ]
    assert query(db, "SELECT kind, trigger, position FROM events") == [("compaction", "compress", 3)]
    # the person's words are the skill and the instruction, never the skill's body (Python and SQL alike)
    assert query(db, "SELECT person_text, title FROM messages, conversations WHERE origin = 'person'") == [
        ("/plan list the tables", "/plan list the tables")
    ]


@pytest.mark.parametrize(
    ("agent", "folder", "variable"),
    [("hermes", ".hermes/sessions", "HERMES_HOME"), ("nanobot", ".nanobot/workspace/sessions", "")],
)
def test_from_reads_the_agents_own_folder(
    agent: str, folder: str, variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    home = tmp_path / "home"
    (home / folder).mkdir(parents=True)
    src = REAL / CASES[agent][0][0]
    shutil.copy(src, home / folder / src.name)
    monkeypatch.setenv("HOME", str(home))
    if variable:
        monkeypatch.delenv(variable, raising=False)
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", "--from", agent, "--db", str(db))
    assert code == 0, err
    assert query(db, "SELECT format, count(*) FROM sources GROUP BY 1") == [(agent, 1)]
    monkeypatch.setenv("HOME", str(tmp_path / "nowhere"))
    code, _, err = run_cli("ingest", "--from", agent, "--db", str(db))
    assert code == 2 and "logs at" in err and len(err.strip().splitlines()) == 1
