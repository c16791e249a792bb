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
from tests.agent_counts import Tally, crush_file, kimi_context_file, pi_file
from tests.conftest import FIXTURES, query, run_cli
from tests.test_real_logs_2026 import figures

REAL = FIXTURES / "real"
KIMI = "kimi_cli/MoonshotAI+kimi-cli/outputs/scikit-learn__scikit-learn-26323/"
# format -> (its files under fixtures/real, the counter, the figures expected of each file: known by reading it)
CASES: dict[str, tuple[list[str], Callable[[Path], Tally], list[Tally]]] = {
    "pi": (
        ["pi/badlogic+pi-mono/packages/coding-agent/test/fixtures/large-session.jsonl"],
        pi_file,
        [Tally(1, 88, 391, 373, 19, 47_609_906)],
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
