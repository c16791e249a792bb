"""Codex rollouts whose person turns are, for some turns, only an ``event_msg`` ``user_message`` (issue 42, item 3):
each turn of the person imported once, in its place, whether its response item is there or not. A 0.58 rollout
built from the format (fixtures/built, SOURCES.md) with ``turn_context``, ``ghost_snapshot``, a ``compacted`` record
holding its replacement history (the earlier prompts again) and the ``context_compacted`` event; figures counted here
from the raw lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.agent_counts import json_lines
from tests.conftest import FIXTURES, query, run_cli

ROLLOUT = (
    FIXTURES
    / "built"
    / "codex_events"
    / ".codex"
    / "sessions"
    / "2025"
    / "11"
    / "20"
    / "rollout-2025-11-20T10-00-03-019a1f3c-8e2d-7b41-a5c6-3d9e0f1a2b4c.jsonl"
)


def ingest(path: Path, db: Path) -> str:
    code, out, err = run_cli("ingest", str(path), "--db", str(db), "--verbose")
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("codex_events") / "w.duckdb"
    ingest(ROLLOUT, out)
    return out


def test_each_turn_of_the_person_is_imported_once_in_its_place(db: Path) -> None:
    recs = list(json_lines(ROLLOUT))
    events = [
        r["payload"]["message"] for r in recs if r["type"] == "event_msg" and r["payload"]["type"] == "user_message"
    ]
    items = [
        r["payload"]["content"][0]["text"]
        for r in recs
        if r["type"] == "response_item"
        and r["payload"].get("role") == "user"
        and not r["payload"]["content"][0]["text"].startswith("<")
    ]
    assert (len(events), len(items)) == (5, 3)  # two turns only in the event; the first prompt sent twice
    replaced = [r for r in recs if r["type"] == "compacted"][0]["payload"]["replacement_history"]
    assert len(replaced) == 4  # the compaction's history repeats three prompts: never turns
    person = query(db, "SELECT content FROM messages WHERE origin = 'person' AND on_main_path ORDER BY position")
    assert [t for (t,) in person] == events
    # each prompt opens its turn: the model's call and answer come after it, not folded into the turn before
    order = [r for (r,) in query(db, "SELECT role FROM messages ORDER BY position")]
    assert order == ["system"] + ["user", "assistant", "tool", "assistant"] * 5
    calls = sum(1 for r in recs if r["type"] == "response_item" and r["payload"]["type"] == "function_call")
    assert query(db, "SELECT count(*), count(result_seq) FROM tool_calls") == [(calls, calls)] == [(5, 5)]
    assert query(db, "SELECT kind, position FROM events WHERE kind <> 'reasoning'") == [
        ("compaction", 13)
    ]  # before the 4th prompt
    tokens = [
        r["payload"]["info"]["last_token_usage"]
        for r in recs
        if r["type"] == "event_msg" and r["payload"]["type"] == "token_count"
    ]
    assert (
        query(
            db,
            "SELECT count(*), sum(input_tokens), sum(cache_read_input_tokens), sum(output_tokens) FROM message_usage",
        )
        == [
            (
                len(tokens),
                sum(t["input_tokens"] - t["cached_input_tokens"] for t in tokens),
                sum(t["cached_input_tokens"] for t in tokens),
                sum(t["output_tokens"] for t in tokens),
            )
        ]
        == [(5, 15000, 5000, 250)]
    )


def test_the_note_says_where_the_turns_came_from_and_a_second_ingest_adds_nothing(tmp_path: Path) -> None:
    copy = tmp_path / ROLLOUT.name
    shutil.copy(ROLLOUT, copy)
    db = tmp_path / "w.duckdb"
    out = ingest(copy, db)
    assert "2 turns of the person taken from event_msg user_message (no response_item carries them)" in out
    assert "event_msg:user_message x3" in out  # the three the response items already hold
    copy.touch()
    out = ingest(copy, db)
    assert "0 added + 21 unchanged" in out
    assert query(db, "SELECT count(*) FROM messages") == [(21,)]


def _rollout(tmp_path: Path, records: list[tuple[str, dict]]) -> Path:
    path = tmp_path / "rollout-2025-11-20T10-00-00-019a1f3c-0000-7000-8000-000000000001.jsonl"
    meta = {"id": "019a1f3c-0000-7000-8000-000000000001", "timestamp": "2025-11-20T10:00:00Z", "cli_version": "0.58.0"}
    lines = [{"timestamp": "2025-11-20T10:00:00Z", "type": "session_meta", "payload": meta}]
    lines += [
        {"timestamp": f"2025-11-20T10:00:{i + 1:02d}Z", "type": k, "payload": p} for i, (k, p) in enumerate(records)
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _user(text: str) -> tuple[str, dict]:
    return "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _event(text: str) -> tuple[str, dict]:
    return "event_msg", {"type": "user_message", "message": text, "images": []}


def _reply(text: str) -> tuple[str, dict]:
    return "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def test_the_event_before_its_item_is_one_turn_and_an_injected_fragment_is_codexs(tmp_path: Path) -> None:
    path = _rollout(
        tmp_path,
        [
            _event("fix the bug"),
            ("turn_context", {"model": "gpt-5-codex"}),
            _user("fix the bug"),
            _reply("done"),
            _event("<user_shell_command>\nls\n</user_shell_command>"),
            _reply("listed"),
            _event("and  the docs"),
            _user("and the docs"),
            _reply("ok"),
        ],
    )  # white space as the item collapses it
    db = tmp_path / "w.duckdb"
    ingest(path, db)
    assert query(db, "SELECT role, origin, content FROM messages ORDER BY position") == [
        ("user", "person", "fix the bug"),
        ("assistant", "assistant", "done"),
        ("system", "harness", "<user_shell_command>\nls\n</user_shell_command>"),
        ("assistant", "assistant", "listed"),
        ("user", "person", "and the docs"),
        ("assistant", "assistant", "ok"),
    ]


def test_a_rollout_of_only_ui_events_still_reads_them(tmp_path: Path) -> None:
    path = _rollout(tmp_path, [_event("hello"), ("event_msg", {"type": "agent_message", "message": "hi"})])
    db = tmp_path / "w.duckdb"
    out = ingest(path, db)
    assert "messages taken from event_msg (no response_item message in the file)" in out
    assert query(db, "SELECT role, content FROM messages ORDER BY position") == [("user", "hello"), ("assistant", "hi")]
