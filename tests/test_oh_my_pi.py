"""Oh My Pi (a fork of the pi coding agent, 2026) writes pi's session file (version 3) with lines of its own: a
title line before the header (padded, so it can be rewritten in place), ``session_init`` (the system prompt),
``title_change``, ``credential_pin`` (a credential's hash), ``ttsr_injection``, ``developer`` messages (its
reminders), and a ``model_change`` with ``role: temporary``. 344 real sessions of 2026 (the Entire CLI's checkpoint
refs of preloopdev/preloop, MIT; not copied: they hold a credential hash and a home folder) were 246 "not a JSONL
session file" and 10 generic JSONL with every line quarantined. Built from those files' shapes (Oh My Pi's source
is not in the index), every text and id invented; checked against tests/agent_counts.py's counter."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent_counts import pi_file
from tests.conftest import query, run_cli


def _entry(kind: str, nid: str, parent: str | None, second: int, **extra: object) -> dict:
    return {"type": kind, "id": nid, "parentId": parent, "timestamp": f"2026-08-20T03:21:{second:02d}.000Z", **extra}


def _msg(nid: str, parent: str, second: int, **message: object) -> dict:
    return _entry("message", nid, parent, second, message=message)


LINES = [
    {"type": "title", "v": 1, "title": "", "updatedAt": "2026-08-20T03:21:26.307Z", "pad": " " * 40},
    {
        "type": "session",
        "version": 3,
        "id": "01a01d30-1823-7000-b6cd-000000000001",
        "timestamp": "2026-08-20T03:21:26.307Z",
        "cwd": "/work/app",
    },
    _entry("model_change", "m1", None, 1, model="anthropic/claude-opus-4-8", resolvedModelIsFallback=False),
    _entry("model_change", "m2", "m1", 2, model="opencode-go/muse-spark-1.2", role="temporary"),
    _entry("session_init", "s1", "m2", 3, systemPrompt="You are a careful coding agent."),
    _msg("u1", "s1", 4, role="user", content=[{"type": "text", "text": "list the blog posts"}]),
    _msg(
        "a1",
        "u1",
        5,
        role="assistant",
        content=[{"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls posts"}}],
        provider="anthropic",
        model="claude-opus-4-8",
        usage={"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 0},
    ),
    _entry("credential_pin", "c1", "a1", 6, provider="anthropic", hash="0" * 64),
    _msg(
        "r1",
        "c1",
        7,
        role="toolResult",
        toolCallId="call_1",
        toolName="bash",
        content=[{"type": "text", "text": "a.md\nb.md"}],
        isError=False,
    ),
    _msg(
        "d1",
        "r1",
        8,
        role="developer",
        content=[
            {"type": "text", "text": "<system-reminder>\nEvery turn MUST end with a tool call.\n</system-reminder>"}
        ],
    ),
    _entry("ttsr_injection", "t1", "d1", 9, injectedRules=["submit-before-push"]),
    _msg(
        "a2",
        "t1",
        10,
        role="assistant",
        content=[{"type": "text", "text": "Two posts: a.md and b.md."}],
        usage={"input": 20, "output": 8, "cacheRead": 110, "cacheWrite": 0},
    ),
    _entry("title_change", "tc", "a2", 11, title="Blog post listing", source="auto"),
]


def test_an_oh_my_pi_session_is_read_as_pi(tmp_path: Path) -> None:
    path = tmp_path / "full.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in LINES), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    assert query(db, "SELECT format, status, quarantined FROM import_runs") == [("pi", "imported", 0)]
    assert query(db, "SELECT title, model FROM conversations") == [("Blog post listing", "claude-opus-4-8")]
    got = query(db, "SELECT role, origin, left(content, 20) FROM messages WHERE on_main_path ORDER BY position")
    assert got == [
        ("system", "harness", "You are a careful co"),
        ("user", "person", "list the blog posts"),
        ("assistant", "assistant", ""),
        ("tool", "tool_result", "a.md\nb.md"),
        ("system", "harness", "<system-reminder>\nEv"),
        ("assistant", "assistant", "Two posts: a.md and "),
    ]
    calls = query(db, "SELECT count(*), count(result_seq), count(*) FILTER (WHERE is_error) FROM tool_calls")
    usage = query(db, "SELECT sum(input_tokens + output_tokens + cache_read_input_tokens) FROM message_usage")
    assert tuple(pi_file(path)) == (1, 1, 1, 1, 0, 253)
    assert calls == [(1, 1, 0)] and usage == [(253,)]
