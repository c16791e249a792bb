"""Claude Code 2.1.x lines of 2026 that broke the reading of whole sessions, each built from the format as real
sessions of 2026 write it (the Entire CLI's checkpoint branches of JanDeDobbeleer/oh-my-posh, 2.1.205-2.1.219, and
PackmindHub/context-evaluator, 2.1.39-2.1.63: 8 of 460 sessions read with no person turn at all; docs/formats.md).
Every text and id here is invented; each test checks the warehouse against tests/agent_counts.py's counter."""

from __future__ import annotations

import json
from pathlib import Path

from tests import agent_counts as ac
from tests.conftest import query, run_cli

SID = "0f0e0d0c-0000-4000-8000-000000000001"


def _line(kind: str, uid: str | None, parent: str | None, ts: str, **extra: object) -> dict:
    line: dict = {"parentUuid": parent, "isSidechain": False, "type": kind, "sessionId": SID, "version": "2.1.219"}
    if uid is not None:
        line["uuid"] = uid
    return {**line, "timestamp": f"2026-07-24T09:{ts}Z", "cwd": "/work/app", **extra}


def _write(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _ingest(path: Path) -> Path:
    db = path.parent / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    return db


def _reply(uid: str, parent: str, ts: str, text: str) -> dict:
    msg = {
        "id": f"msg_{uid}",
        "role": "assistant",
        "model": "claude-opus-4-6",
        "content": [{"type": "text", "text": text}],
    }
    return _line("assistant", uid, parent, ts, message={**msg, "usage": {"input_tokens": 3, "output_tokens": 7}})


def test_a_queue_operation_written_after_the_last_turn_is_not_the_newest_leaf(tmp_path: Path) -> None:
    """A queue operation has no uuid and no parent; 2.1.4x-2.1.2xx write one (``remove``, or an ``enqueue`` of a
    prompt typed while the turn ran) after the turn's last line, so its timestamp is the file's latest. Read as a
    tree of its own it was the newest leaf: the main path held no message and none of the person's turns was on it
    (8 of 460 real sessions of 2026)."""
    lines = [
        {"type": "queue-operation", "operation": "dequeue", "timestamp": "2026-07-24T09:00:00.000Z", "sessionId": SID},
        _line("user", "u1", None, "00:01.000", message={"role": "user", "content": "rename the config loader"}),
        _reply("a1", "u1", "00:05.000", "Renamed it."),
        _line("user", "u2", "a1", "01:00.000", message={"role": "user", "content": "and its tests"}),
        _reply("a2", "u2", "01:09.000", "Done."),
        _line("system", "s1", "a2", "01:09.500", subtype="turn_duration", durationMs=9000),
        {"type": "queue-operation", "operation": "remove", "timestamp": "2026-07-24T09:01:09.600Z", "sessionId": SID},
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "timestamp": "2026-07-24T09:01:10.000Z",
            "sessionId": SID,
            "content": "then open a PR",
        },
    ]
    path = _write(tmp_path, lines)
    db = _ingest(path)
    got = query(db, "SELECT content FROM messages WHERE origin = 'person' AND on_main_path ORDER BY position")
    assert got == [("rename the config loader",), ("and its tests",)]
    assert query(db, "SELECT count(*) FROM messages WHERE on_main_path") == [(4,)]
    assert ac.claude_code_file(path).person == 2
