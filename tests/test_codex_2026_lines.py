"""Codex 0.145-0.146 rollouts of 2026 (the Entire CLI's checkpoint refs of Standard-Syntax/basic, 170 rollouts,
July-August 2026; no licence, so these shapes are built from codex-rs and every text and id is invented): a plan
implemented in a fresh context, and a sub-agent thread of multi-agent v2 (forked from its parent, its task an
``agent_message`` from the parent agent). Each is checked against tests/agent_counts.py's counter too."""

from __future__ import annotations

import json
from pathlib import Path

from tests import agent_counts as ac
from tests.conftest import query, run_cli

PARENT = "019fa6e3-2df0-7000-8000-000000000001"
CHILD = "019fa6e6-4f2e-7000-8000-000000000002"  # created after the parent's turn below began
COPIED_TURN = "019fa6e6-1650-7000-8000-000000000003"  # the parent's turn, copied into the child's file
OWN_TURN = "019fa6e6-4f5f-7000-8000-000000000004"
# codex-rs PLAN_IMPLEMENTATION_CLEAR_CONTEXT_PREFIX: what Codex sends when the person implements a plan afresh
HANDOVER = (
    "A previous agent produced the plan below to accomplish the user's task. Implement the plan in a fresh "
    "context. Treat the plan as the source of user intent, re-read files as needed, and carry the work through "
    "implementation and verification."
)


def _rec(kind: str, payload: dict, second: int) -> dict:
    return {"timestamp": f"2026-07-28T04:05:{second:02d}.000Z", "type": kind, "payload": payload}


def _meta(thread: str, **extra: object) -> dict:
    payload = {"id": thread, "session_id": PARENT, "timestamp": "2026-07-28T04:02:14.000Z", "cwd": "/work/app"}
    return _rec("session_meta", {**payload, "originator": "codex-tui", "cli_version": "0.145.0", **extra}, 0)


def _user(text: str, second: int) -> list[dict]:
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return [_rec("response_item", item, second), _rec("event_msg", {"type": "user_message", "message": text}, second)]


def _reply(text: str, second: int) -> dict:
    item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    return _rec("response_item", item, second)


def _total(inp: int, cached: int, out: int, second: int) -> dict:
    usage = {"input_tokens": inp, "cached_input_tokens": cached, "cache_write_input_tokens": 0, "output_tokens": out}
    return _rec("event_msg", {"type": "token_count", "info": {"total_token_usage": usage}}, second)


def _ingest(tmp_path: Path, name: str, lines: list[dict]) -> tuple[Path, Path]:
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    db = tmp_path / f"{path.stem}.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    return path, db


def test_a_plan_implemented_in_a_fresh_context_is_titled_by_the_plan(tmp_path: Path) -> None:
    """The handover's prefix titled 102 of 170 real rollouts ("A previous agent produced the plan below…"), and
    its plan (the model's text) gave keywords and topic cues: the person's turn, with no words of theirs."""
    lines = [
        _meta(PARENT, source="cli"),
        _rec("turn_context", {"turn_id": OWN_TURN, "model": "gpt-5.6-sol"}, 1),
        *_user(f"{HANDOVER}\n\n# Slice 5: Canary publication\n\n## Summary\nPublish one canary.", 2),
        _reply("Published.", 3),
        _total(100, 0, 10, 4),
        *_user("now open the pull request", 5),
        _reply("Opened.", 6),
        _total(250, 90, 20, 7),
    ]
    path, db = _ingest(tmp_path, f"rollout-2026-07-28T04-02-14-{PARENT}.jsonl", lines)
    assert query(db, "SELECT origin, person_text FROM messages WHERE role = 'user' ORDER BY position") == [
        ("person", ""),
        ("person", "now open the pull request"),
    ]
    # the person's first words title it; a session with no other words is titled by the plan's first line
    assert query(db, "SELECT title FROM conversations") == [("now open the pull request",)]
    alone, db2 = _ingest(tmp_path, "alone.jsonl", lines[:5])
    assert query(db2, "SELECT title FROM conversations") == [("# Slice 5: Canary publication",)]
    assert ac.codex_file(path).person == 2 and ac.codex_tokens(path) == 270


def test_a_sub_agent_thread_reads_its_task_and_only_its_own_spend(tmp_path: Path) -> None:
    """A multi-agent v2 sub-agent's rollout starts with its own session_meta, then the parent's with the parent's
    history and running totals; its task arrives as a ``response_item`` ``agent_message`` (author ``/root``,
    the payload encrypted after a header). The task was skipped (the thread began with no user message) and the
    thread was titled by the parent's copied prompt; its spend is its totals less the parent's."""
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": PARENT, "depth": 1, "agent_path": "/root/ci_audit"}}}
    task = {
        "type": "agent_message",
        "author": "/root",
        "recipient": "/root/ci_audit",
        "content": [
            {"type": "input_text", "text": "Message Type: NEW_TASK\nTask name: /root/ci_audit\nSender: /root\n"},
            {"type": "encrypted_content", "encrypted_content": "gAAAA"},
        ],
    }
    lines = [
        _meta(CHILD, forked_from_id=PARENT, source=spawn, agent_nickname="Kepler", agent_path="/root/ci_audit"),
        _meta(PARENT, source="cli"),
        _rec("turn_context", {"turn_id": COPIED_TURN, "model": "gpt-5.6-sol"}, 1),
        *_user("audit the CI with a sub-agent", 2),
        _total(1000, 0, 50, 3),
        _rec("turn_context", {"turn_id": OWN_TURN, "model": "gpt-5.6-terra"}, 4),
        _rec("inter_agent_communication_metadata", {"trigger_turn": True}, 4),
        _rec("response_item", task, 4),
        _reply("Audit complete.", 5),
        _total(1500, 200, 80, 6),
    ]
    path, db = _ingest(tmp_path, f"rollout-2026-07-28T04-05-39-{CHILD}.jsonl", lines)
    got = query(db, "SELECT role, origin, name, left(content, 22) FROM messages WHERE on_main_path ORDER BY position")
    assert got == [
        ("user", "harness", "/root", "Message Type: NEW_TASK"),
        ("assistant", "assistant", None, "Audit complete."),
    ]
    assert query(db, "SELECT title FROM conversations") == [("sub-agent /root/ci_audit (Kepler)",)]
    assert query(db, "SELECT sum(input_tokens + output_tokens + cache_read_input_tokens) FROM message_usage") == [
        (530,)
    ]
    assert ac.codex_tokens(path) == 530  # (1500 + 80) - (1000 + 50): the parent's 1,050 are the parent's
    assert ac.codex_file(path).person == 0
