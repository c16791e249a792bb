"""Rules of the Codex, Claude Code, Gemini CLI and aider importers that the real logs in ../shared do not all
exercise: whose turn a message is, error results, side files, and the layouts of other versions."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import query, run_cli


def ingest(path: Path, db: Path) -> str:
    code, out, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    return out + err


def jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def origins(db: Path) -> list[tuple[str, str, str]]:
    return query(
        db,
        "SELECT role, origin, left(content, 30) FROM messages WHERE role IN ('user', 'system') "
        "ORDER BY conversation_id, seq",
    )


def codex_line(kind: str, payload: dict, ts: str = "2026-01-01T00:00:00Z") -> dict:
    return {"timestamp": ts, "type": kind, "payload": payload}


def msg(role: str, text: str) -> dict:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def test_codex_contextual_fragments_exit_codes_and_events(tmp_path: Path) -> None:
    out = lambda cid, text: {"type": "function_call_output", "call_id": cid, "output": text}  # noqa: E731
    call = lambda cid: {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": cid}  # noqa: E731
    f = jsonl(
        tmp_path / "rollout-2026-01-01T00-00-00-019b0000-0000-7000-8000-000000000000.jsonl",
        [
            codex_line("session_meta", {"id": "019b0000-0000-7000-8000-000000000000", "cli_version": "0.120.0"}),
            codex_line(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {
                            "type": "input_text",
                            "text": "# AGENTS.md instructions for /x\n<INSTRUCTIONS>be brief</INSTRUCTIONS>",
                        },
                        {"type": "input_text", "text": "<environment_context><cwd>/x</cwd></environment_context>"},
                    ],
                },
            ),
            codex_line("response_item", msg("user", "<user_shell_command>ls</user_shell_command>")),
            codex_line("response_item", msg("user", "Fix the build")),
            codex_line("response_item", call("a")),
            codex_line("response_item", call("b")),
            codex_line("response_item", call("c")),
            codex_line("response_item", call("d")),
            codex_line(
                "response_item",
                out("a", "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 2\nOutput:\nboom"),
            ),
            codex_line(
                "response_item", out("b", "Exit code: 0\nWall time: 1 seconds\nOutput:\nProcess exited with code 9")
            ),
            codex_line("response_item", out("c", "ok")),
            codex_line("event_msg", {"type": "exec_command_end", "call_id": "c", "exit_code": 1}),
            codex_line("response_item", out("d", "apply_patch verification failed: no such file")),
            codex_line("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
            codex_line("event_msg", {"type": "error", "message": "stream disconnected"}),
        ],
    )
    db = tmp_path / "w.duckdb"
    ingest(f, db)
    assert [(r, o) for r, o, _ in origins(db)] == [("system", "harness"), ("system", "harness"), ("user", "person")]
    # b: the header's exit 0 is the command's status; the output quoting "Process exited with code 9" is no error
    # (the exit_code rule of docs/definitions.md#tool-errors yields to a zero status in the text). d: a failed patch is an error, flagged by the
    # format (its handler's failure words) before the content rules (no_such_file would name it too).
    assert query(db, "SELECT call_id, is_error, error_source FROM tool_calls ORDER BY call_id") == [
        ("a", True, "format"),
        ("b", False, None),
        ("c", True, "format"),
        ("d", True, "format"),
    ]
    assert query(db, "SELECT kind, trigger FROM events ORDER BY kind") == [
        ("error", None),
        ("turn_aborted", "interrupted"),
    ]


def test_codex_fork_keeps_the_parent_history_off_the_main_path(tmp_path: Path) -> None:
    child, parent = "019d924b-6bc1-7fa2-aa36-5e5a0e068c59", "019d9249-e0ee-7020-a305-b6369cd02251"
    f = jsonl(
        tmp_path / f"rollout-2026-04-15T11-58-29-{child}.jsonl",
        [
            codex_line("session_meta", {"id": child, "forked_from_id": parent, "timestamp": "2026-04-15T17:58:29Z"}),
            codex_line("session_meta", {"id": parent, "timestamp": "2026-04-15T17:56:48Z"}),
            codex_line("event_msg", {"type": "task_started", "turn_id": "019d924a-361e-7a82-8f76-6b8406143f52"}),
            codex_line("response_item", msg("user", "Set up the project")),
            codex_line("event_msg", {"type": "task_started", "turn_id": "019d924b-8323-77b1-a26d-d65630532b7c"}),
            codex_line("response_item", msg("user", "Inspect the package")),
        ],
    )
    db = tmp_path / "w.duckdb"
    ingest(f, db)
    assert query(db, "SELECT content, on_main_path FROM messages ORDER BY seq") == [
        ("Set up the project", False),
        ("Inspect the package", True),
    ]
    assert query(db, "SELECT parent_native_id FROM conversations") == [(parent,)]


def test_claude_code_flags_and_hook_lines_are_the_harness(tmp_path: Path) -> None:
    def line(i: int, content: str, **extra: object) -> dict:
        return {
            "type": "user",
            "uuid": f"u{i}",
            "parentUuid": f"u{i - 1}" if i else None,
            "sessionId": "s",
            "timestamp": f"2026-01-01T00:00:0{i}Z",
            "message": {"role": "user", "content": content},
            **extra,
        }

    f = jsonl(
        tmp_path / "s.jsonl",
        [
            line(0, "Make the tests pass"),
            line(1, "This session is being continued from a previous conversation...", isCompactSummary=True),
            line(2, "Stop hook feedback:\nrun the linter"),
            line(3, "<system-reminder>This is a side question from the user.</system-reminder>\n\nwhat is X?"),
            line(4, "<local-command-caveat>Caveat: ...</local-command-caveat>", isMeta=True),
        ],
    )
    db = tmp_path / "w.duckdb"
    ingest(f, db)
    assert [o for _, o, _ in origins(db)] == ["person", "harness", "harness", "person", "harness"]


def test_gemini_checkpoint_object_and_a_prompt_log_beside_recordings(tmp_path: Path) -> None:
    project = tmp_path / "tmp" / "proj"
    (project / "chats").mkdir(parents=True)
    (project / "chats" / "session-2026-01-01T00-00-aaaaaaaa.json").write_text(
        json.dumps(
            {
                "sessionId": "aaaaaaaa-0000",
                "projectHash": "p",
                "messages": [{"id": "1", "type": "user", "content": "System: Please continue."}],
            }
        )
    )
    (project / "logs.json").write_text(
        json.dumps(
            [
                {
                    "sessionId": "aaaaaaaa-0000",
                    "messageId": 0,
                    "type": "user",
                    "message": "hi",
                    "timestamp": "2026-01-01",
                },
                {
                    "sessionId": "bbbbbbbb-0000",
                    "messageId": 0,
                    "type": "user",
                    "message": "hello",
                    "timestamp": "2026-01-02",
                },
            ]
        )
    )
    (project / "checkpoint-x.json").write_text(
        json.dumps(
            {
                "history": [
                    {
                        "role": "user",
                        "parts": [{"text": "This is the Gemini CLI. We are setting up the context for our chat."}],
                    },
                    {
                        "role": "model",
                        "parts": [{"text": "Reading.", "thought": True}, {"functionCall": {"name": "ls", "args": {}}}],
                    },
                    {
                        "role": "user",
                        "parts": [{"functionResponse": {"id": "ls-1", "name": "ls", "response": {"error": "denied"}}}],
                    },
                    {"role": "user", "parts": [{"text": "try again"}]},
                ]
            }
        )
    )
    db = tmp_path / "w.duckdb"
    out = ingest(project, db)
    assert "prompts of sessions recorded in chats/" in out
    assert sorted(o for _, o, _ in origins(db)) == ["harness", "harness", "person", "person"]
    assert query(db, "SELECT call_id, is_error, result_seq IS NOT NULL FROM tool_calls") == [("ls-1", True, True)]
    assert query(db, "SELECT count(*) FROM conversations") == [(3,)]


def test_aider_input_history_alone_or_beside_a_chat_history(tmp_path: Path) -> None:
    history = "\n# 2025-01-01 10:00:00.123456\n+/add a.py\n\n# 2025-01-01 10:01:00.000001\n+fix it\n+please\n"
    alone = tmp_path / "alone" / ".aider.input.history"
    alone.parent.mkdir()
    alone.write_text(history)
    db = tmp_path / "a.duckdb"
    ingest(alone, db)
    assert query(db, "SELECT origin, content FROM messages ORDER BY seq") == [
        ("person", "/add a.py"),
        ("person", "fix it\nplease"),
    ]
    beside = tmp_path / "repo"
    beside.mkdir()
    (beside / ".aider.input.history").write_text(history)
    (beside / ".aider.chat.history.md").write_text(
        "\n# aider chat started at 2025-01-01 10:00:00\n\n> Model: gpt-4o with diff edit format\n\n"
        "#### fix it  \n#### please  \n\na.py\n```\n<<<<<<< ORIGINAL\nx\n=======\ny\n>>>>>>> UPDATED\n```\n\n"
        "> Applied edit to a.py  \n\n#### Add file to the chat? (Y)es/(N)o [Yes]: y  \n"
    )
    db = tmp_path / "b.duckdb"
    out = ingest(beside, db)
    assert "side file" in out
    assert [o for _, o, _ in origins(db)] == ["person", "harness"]
    assert query(db, "SELECT name, result_seq IS NOT NULL FROM tool_calls") == [("edit", True)]


def test_claude_code_prompt_history_skips_prompts_whose_transcript_is_beside_it(tmp_path: Path) -> None:
    home = tmp_path / ".claude"
    jsonl(
        home / "projects" / "-home-x-proj" / "s1.jsonl",
        [
            {
                "type": "user",
                "uuid": "u0",
                "parentUuid": None,
                "sessionId": "s1",
                "timestamp": "2026-01-01T00:00:00Z",
                "message": {"role": "user", "content": "fix the bug"},
            }
        ],
    )
    jsonl(
        home / "history.jsonl",
        [
            {
                "display": "fix the bug",
                "pastedContents": {},
                "timestamp": 1767225600000,
                "project": "/home/x/proj",
                "sessionId": "s1",
            },
            {"display": "old prompt", "pastedContents": {}, "timestamp": 1700000000000, "project": "/home/x/proj"},
            {
                "display": "/model",
                "pastedContents": {},
                "timestamp": 1767225601000,
                "project": "/srv/app",
                "sessionId": "s9",
            },
        ],
    )
    db = tmp_path / "w.duckdb"
    out = ingest(home / "history.jsonl", db)
    assert "prompts whose session has a transcript in projects/ (read there) x2" in out
    assert query(
        db, "SELECT c.native_id, m.origin, m.content FROM messages m JOIN conversations c USING (conversation_id)"
    ) == [("s9", "person", "/model")]


def test_codex_message_history_and_session_index(tmp_path: Path) -> None:
    home = tmp_path / ".codex"
    recorded, other = "019b0000-0000-7000-8000-000000000001", "019b0000-0000-7000-8000-000000000002"
    jsonl(
        home / "sessions" / "2026" / "01" / "01" / f"rollout-2026-01-01T00-00-00-{recorded}.jsonl",
        [codex_line("session_meta", {"id": recorded}), codex_line("response_item", msg("user", "fix it"))],
    )
    jsonl(
        home / "history.jsonl",
        [
            {"session_id": recorded, "ts": 1767225600, "text": "fix it"},
            {"session_id": other, "ts": 1767225700, "text": "and the docs"},
        ],
    )
    jsonl(home / "session_index.jsonl", [{"id": recorded, "thread_name": "Fix", "updated_at": "2026-01-01"}])
    db = tmp_path / "w.duckdb"
    out = ingest(home, db)
    assert "side file: thread names" in out and "read there) x1" in out
    assert query(
        db,
        "SELECT c.native_id, m.origin, m.content FROM messages m JOIN conversations c "
        "USING (conversation_id) ORDER BY 1",
    ) == [(recorded, "person", "fix it"), (other, "person", "and the docs")]
