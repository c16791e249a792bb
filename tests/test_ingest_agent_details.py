"""What each agent format must get right beyond the counts: usage once per response, branches and retries
off the main path, compactions as events, sub-agents linked, errors flagged, secrets never read; and
`ingest --from` finding each agent's folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, query, run_cli

AGENTS = FIXTURES / "agents"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("details") / "w.duckdb"
    code, _, err = run_cli("ingest", str(AGENTS), "--db", str(path))
    assert code == 0, err
    return path


def conv(db: Path, native: str) -> str:
    return query(db, "SELECT conversation_id FROM conversations WHERE native_id = ?", [native])[0][0]


def msgs(db: Path, native: str) -> list[tuple]:
    return query(
        db,
        "SELECT position, role, on_main_path, content FROM messages WHERE conversation_id = ? ORDER BY seq",
        [conv(db, native)],
    )


CODEX_MAIN = "8a7e6413-a5cd-5d80-80f8-cc1428270d13"


def test_codex_usage_is_once_per_response_from_the_running_totals(db: Path) -> None:
    path = next((AGENTS / "codex" / "sessions" / "2025" / "10" / "29").glob(f"*{CODEX_MAIN}.jsonl"))
    last, outputs = None, []
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        info = rec.get("payload", {}).get("info") if rec.get("type") == "event_msg" else None
        if info and info["total_token_usage"] != last:  # a repeated total is no new response
            outputs.append(info["last_token_usage"]["output_tokens"])
            last = info["total_token_usage"]
    got = query(
        db,
        "SELECT count(*), sum(output_tokens), sum(input_tokens + cache_read_input_tokens) FROM "
        "message_usage WHERE conversation_id = ?",
        [conv(db, CODEX_MAIN)],
    )[0]
    assert got == (len(outputs), sum(outputs), 5200 + 5900 + 6100 + 6300 + 6500 + 6800) == (6, 497, 36800)


def test_codex_rollback_environment_context_compaction_and_sub_agent(db: Path) -> None:
    rows = msgs(db, CODEX_MAIN)
    assert rows[0][1:3] == ("system", True) and rows[0][3].startswith("<environment_context>")
    off = [(r, c) for p, r, main, c in rows if not main]
    assert off == [("user", "再加一个空购物车的测试。"), ("assistant", "我会用 parametrize 写，稍等。")]
    cid = conv(db, CODEX_MAIN)
    assert query(
        db,
        "SELECT kind, position, json_extract_string(detail, '$.summary') FROM events WHERE conversation_id = ? AND kind <> 'reasoning'",
        [cid],
    ) == [("compaction", None, "用户要求修复结账测试；已将合计改为两位小数，测试通过。")]
    assert query(
        db, "SELECT parent_conversation_id FROM conversations WHERE native_id = '9faa281b-6dcc-590b-93b8-a9144005eff3'"
    ) == [(cid,)]
    assert query(
        db,
        "SELECT name, is_error FROM tool_calls WHERE conversation_id = ? AND result_seq IS NOT NULL "
        "ORDER BY seq, call_index",
        [cid],
    ) == [("shell", True), ("shell", False), ("apply_patch", False), ("local_shell", False), ("shell", False)]
    ((reason, raw),) = query(
        db,
        "SELECT q.reason, q.raw FROM quarantine q JOIN sources s USING (source_id) WHERE s.path LIKE ?",
        [f"%{CODEX_MAIN}.jsonl"],
    )
    assert reason.startswith("invalid JSON") and raw.startswith(b'{"timestamp": "2025-10-29T09:01:00.000Z"')


def test_gemini_updates_rewinds_usage_and_sub_agent(db: Path) -> None:
    main = "59ed9645-619f-551b-aa52-eb8301f6c89d"
    rows = msgs(db, main)
    assert [(r, m) for _, r, m, _ in rows].count(("assistant", True)) == 3  # a1 written twice is one message
    assert [c for _, r, m, c in rows if not m] == [
        "Show me its SQL.",
        "Reading it now.",
        "File not found: migrations/003_orders.sql",
    ]
    assert query(
        db,
        "SELECT input_tokens, output_tokens, cache_read_input_tokens FROM message_usage WHERE "
        "conversation_id = ? ORDER BY seq LIMIT 2",
        [conv(db, main)],
    ) == [(12000, 240, 0), (600, 45, 11800)]
    assert query(
        db, "SELECT parent_conversation_id FROM conversations WHERE native_id = '857608e4-a5ff-5a52-8b71-db26111a7795'"
    ) == [(conv(db, main),)]
    assert query(db, "SELECT title FROM conversations WHERE conversation_id = ?", [conv(db, main)]) == [
        ("Find the migration that adds orders",)
    ]


def test_aider_sessions_edits_usage_and_retries(db: Path) -> None:
    first = "2025-03-10 09:12:44"
    cid = conv(db, first)
    assert query(db, "SELECT model FROM conversations WHERE conversation_id = ?", [cid]) == [
        ("anthropic/claude-3-7-sonnet-20250219",)
    ]
    assert query(
        db,
        "SELECT json_extract_string(arguments, '$.path'), is_error FROM tool_calls WHERE "
        "conversation_id = ? ORDER BY seq",
        [cid],
    ) == [("app/models.py", False), ("tests/test_models.py", True), ("tests/test_models.py", False)]
    assert query(
        db,
        "SELECT input_tokens, output_tokens, cache_read_input_tokens FROM message_usage WHERE "
        "conversation_id = ? ORDER BY seq",
        [cid],
    ) == [(2400, 181, None), (1100, 95, 2000), (500, 70, 2900)]
    # aider's "sent" holds the cache hits (base_coder: litellm's prompt_tokens), input_tokens does not (docs/usage.md)
    (note,) = query(db, "SELECT note FROM import_runs WHERE format = 'aider'")[0]
    assert "lines before the first session header x2" in note  # a note and a blank line


def test_openhands_parallel_calls_condensation_and_usage_per_response(db: Path) -> None:
    cid = conv(db, "trajectory-calc")
    assert query(
        db, "SELECT position, count(*) FROM tool_calls WHERE conversation_id = ? GROUP BY 1 ORDER BY 1", [cid]
    ) == [(2, 2), (5, 1), (7, 1), (8, 1)]
    assert query(
        db,
        "SELECT message_id, input_tokens, cache_read_input_tokens FROM message_usage WHERE "
        "conversation_id = ? ORDER BY seq",
        [cid],
    ) == [("resp-1", 2104, 4096), ("resp-2", 956, 6144)]
    assert query(
        db,
        "SELECT kind, json_extract_string(detail, '$.summary') FROM events WHERE conversation_id = ? AND kind <> 'reasoning'",
        [cid],
    ) == [("compaction", "Listed the repository and read setup.py.")]
    assert query(db, "SELECT reason FROM quarantine WHERE location = 'output.jsonl:5'") == [
        ("no history list (an OpenHands evaluation output line holds one)",)
    ]


def test_swe_agent_attempts_and_named_instances(db: Path) -> None:
    rows = msgs(db, "marshmallow-code__marshmallow-1867")
    assert sum(m for _, _, m, _ in rows) == 9 and sum(not m for _, _, m, _ in rows) == 7  # the discarded attempt
    # (the demonstration is kept, as the harness's, on both)
    assert query(db, "SELECT count(*) FROM conversations WHERE native_id LIKE '#%'") == [(0,)]
    assert query(db, "SELECT native_id FROM conversations WHERE native_id LIKE 'task %' ORDER BY 1") == [
        ("task 0 trial 0",),
        ("task 0 trial 1",),
        ("task 1 trial 0",),
        ("task 1 trial 1",),
        ("task 7 trial 0",),
        ("task 7 trial 1",),
    ]  # tau-bench and tau2-bench runs
    assert query(
        db,
        "SELECT name, is_error FROM tool_calls WHERE conversation_id = ? ORDER BY seq",
        [conv(db, "swe-agent__test-repo-i1")],
    ) == [("find_file", False), ("open", False), ("edit", True), ("edit", False), ("submit", False)]


def test_chatgpt_and_claude_ai_branches_and_errors(db: Path) -> None:
    gpt = query(db, "SELECT native_id FROM conversations WHERE title = '2 的 100 次方'")[0][0]
    rows = msgs(db, gpt)
    assert [c for _, _, m, c in rows if not m] == ["2^100 = 1267650600228229401496703205376"]  # the regenerated answer
    assert query(
        db, "SELECT name, arguments, is_error FROM tool_calls WHERE conversation_id = ? ORDER BY seq", [conv(db, gpt)]
    ) == [("python", '"print(2**100)"', False), ("python", '"1/0"', True)]
    tokyo = query(db, "SELECT native_id FROM conversations WHERE title = '东京天气'")[0][0]
    assert [c for _, _, m, c in msgs(db, tokyo) if not m] == [
        "And Osaka?",
        "The search timed out.",
        "Search failed: timeout",
    ]


def test_secret_tables_and_keys_are_never_read(db: Path) -> None:
    for secret in ("sk-not-a-real-key", "not-a-real-token", "notarealhash"):  # Open WebUI auth, Cursor token
        assert query(db, "SELECT count(*) FROM messages WHERE contains(content, ?)", [secret]) == [(0,)]
        assert query(db, "SELECT count(*) FROM quarantine WHERE contains(decode(raw), ?)", [secret]) == [(0,)]
    ((where, reason, raw),) = query(
        db, "SELECT location, reason, raw FROM quarantine JOIN sources USING (source_id) WHERE format = 'open-webui'"
    )
    assert (where, raw) == ("chat:3", b"{not json") and reason.startswith("chat is not JSON")


def test_inspect_otel_continue_cursor(db: Path) -> None:
    assert query(db, "SELECT count(*) FROM message_usage WHERE conversation_id = ?", [conv(db, "1 epoch 2")]) == [(2,)]
    assert [r for _, r, _, _ in msgs(db, "sess-7")] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]  # two traces of one session
    assert query(db, "SELECT name, is_error FROM tool_calls WHERE conversation_id = ?", [conv(db, "trip-42")]) == [
        ("search_trains", True)
    ]  # the tool span failed
    assert query(
        db,
        "SELECT name, result_position, is_error FROM tool_calls t JOIN conversations c "
        "USING (conversation_id) WHERE c.title = 'List files'",
    ) == [("builtin_ls", 2, False)]
    assert query(
        db,
        "SELECT name, is_error FROM tool_calls t JOIN conversations c USING (conversation_id) "
        "WHERE c.title = 'Typed utils' ORDER BY t.seq",
    ) == [("read_file", False), ("run_terminal_cmd", True)]


@pytest.mark.parametrize(
    "agent,variable,folder",
    [
        ("codex", "CODEX_HOME", "codex"),
        ("gemini", "GEMINI_CLI_HOME", None),
        ("continue", "CONTINUE_GLOBAL_DIR", "continue"),
        ("claude-code", "FORENSICS_CLAUDE_CODE_PATH", "claude_code"),
    ],
)
def test_from_reads_the_agents_folder_and_says_which(
    agent: str, variable: str, folder: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if agent == "gemini":  # GEMINI_CLI_HOME stands for the home folder: logs in $GEMINI_CLI_HOME/.gemini/tmp
        (tmp_path / ".gemini").mkdir()
        (tmp_path / ".gemini" / "tmp").symlink_to(AGENTS / "gemini" / "tmp")
        monkeypatch.setenv(variable, str(tmp_path))
    else:
        monkeypatch.setenv(variable, str(AGENTS / folder) if folder != "claude_code" else str(FIXTURES / folder))
    code, out, err = run_cli("ingest", "--from", agent, "--db", str(tmp_path / "w.duckdb"))
    assert code == 0, err
    assert err.startswith("reading ") and " logs from " in err
    assert "0 failed" in out.splitlines()[-1]


def test_from_a_missing_folder_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("FORENSICS_CODEX_PATH", raising=False)
    code, out, err = run_cli("ingest", "--from", "codex", "--db", str(tmp_path / "w.duckdb"))
    assert (code, out) == (2, "")
    assert err == (
        f"forensics: no Codex CLI logs at {tmp_path}/.codex/sessions (set CODEX_HOME, set "
        "FORENSICS_CODEX_PATH, pass --path)\n"
    )
    code, _, err = run_cli(
        "ingest",
        "--from",
        "aider",
        "--path",
        str(AGENTS / "aider" / ".aider.chat.history.md"),
        "--db",
        str(tmp_path / "w.duckdb"),
    )
    assert code == 0 and err.startswith("reading aider logs from ")
    assert not (tmp_path / "w2.duckdb").exists()
    code, _, err = run_cli("ingest", "--path", str(tmp_path), "--db", str(tmp_path / "w2.duckdb"))
    assert code == 2 and "--path goes with --from AGENT" in err
    assert os.environ["HOME"] == str(tmp_path)
