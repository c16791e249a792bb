"""Message arrays parsed inside DuckDB (issue 28) give the warehouse rows the Python path gives: messages, tool
calls, conversations, quarantine and secrets found, on the fixtures, the hostile corpus and a generated corpus
of the shapes the SQL must hand back to Python (keys written twice, NaN, trailing commas, string timestamps,
float ids, tool results named by tool, calls answered twice or never, error outputs...)."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest

from forensics import ingest
from forensics.formats import sqlite as sqlite_importer
from forensics.formats.kit import duckparse
from tests.conftest import FIXTURES
from tests.hostile_corpus import build

TABLES = (
    ("conversations", "conversation_id"),
    ("messages", "conversation_id"),
    ("tool_calls", "conversation_id"),
    ("quarantine", "run_id, source_id"),
    ("secrets_found", "source_id, conversation_id"),
)


def _dump(db: Path) -> dict[str, Any]:
    if not db.exists():  # the source failed: no warehouse written
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        out: dict[str, Any] = {
            t: con.execute(f"SELECT * EXCLUDE ({skip}) FROM {t} ORDER BY ALL").fetchall() for t, skip in TABLES
        }
        out["runs"] = con.execute(
            "SELECT status, rows_read, messages_read, messages_imported, quarantined, skipped, "
            "conversations_new, note FROM import_runs ORDER BY ALL"
        ).fetchall()
        return out
    finally:
        con.close()


def _both(source: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The warehouse and the ingest's outcome, read in DuckDB where it can, and all in Python."""
    out = []
    tmp.mkdir(exist_ok=True)
    for in_duckdb in (True, False):
        monkeypatch.setattr(sqlite_importer, "IN_DUCKDB", in_duckdb)
        db = tmp / f"{in_duckdb}.duckdb"
        files = ingest([source], db=db, workers=1).files
        out.append((_dump(db), [(f.status, f.error, f.note, f.messages_read, f.quarantined) for f in files]))
    return out[0], out[1]


@pytest.mark.parametrize("source", ["seed/seed.db", "sqlite/realistic.db"])
def test_fixtures_give_the_same_warehouse_either_way(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sql, python = _both(FIXTURES / source, tmp_path, monkeypatch)
    assert sql[0]["messages"] and sql == python


def test_hostile_sqlite_cases_give_the_same_warehouse_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [
        c
        for c in build(tmp_path / "corpus", [("sqlite", "sqlite/realistic.db"), ("sqlite", "seed/seed.db")])
        if not c.special
    ]
    assert len(cases) > 10
    for n, case in enumerate(cases):
        sql, python = _both(case.path, tmp_path / str(n), monkeypatch)
        assert sql == python, case.name


# --- a generated corpus of the shapes SQL reads and the ones it hands back ------------------------------------

TEXTS = [
    "hello",
    "",
    " ",
    "\n\t",
    "\u3000",
    "继续",
    "Error: it broke",
    "  traceback (most recent call last)",
    "错误：文件不存在",
    "Process exited with code 2",
    "ok\nExit code: 0",
    "Exit status: 1",
    "exıt code: 3",
    "fatal: not a git repository",
    "errors are fine",
    'a\\b"c/d',
    "é\u0301",
    "\x00nul",
    "emoji 🎉",
    "api_key = 'sk-abcdefghijklmnopqrstuvwx1234'",
    "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
    "line one\nline two",
    "[The command completed with exit code 1.]",
    "\u212aelvin",
]
ROLES = ["user", "assistant", "tool", "system", "human", "ai", "model", "function", "developer", "tool_result"]


def _message(rng: random.Random, i: int, calls: list[str]) -> dict[str, Any]:
    role = rng.choice(ROLES) if rng.random() < 0.97 else rng.choice(["robot", 5, None])
    m: dict[str, Any] = {"role": role}
    r = rng.random()
    if r < 0.85:
        m["content"] = rng.choice(TEXTS)
    elif r < 0.9:
        m["content"] = None
    elif r < 0.95:
        m["content"] = [{"type": "text", "text": rng.choice(TEXTS)}]
    if role in ("assistant", "ai", "model") and rng.random() < 0.5:
        m["tool_calls"] = []
        for _ in range(rng.randint(1, 3)):
            cid = rng.choice([f"call_{rng.randint(0, 6)}", "", None])
            call: dict[str, Any] = {"id": cid, "type": "function"}
            if rng.random() < 0.9:
                call["function"] = {
                    "name": rng.choice(["bash", "read", None]),
                    "arguments": rng.choice(['{"cmd": "ls"}', "", None, "not json"]),
                }
            else:
                call["name"], call["arguments"] = "flat", "{}"
            m["tool_calls"].append(call)
            if cid:
                calls.append(cid)
    if role in ("tool", "function", "tool_result"):
        r = rng.random()
        if r < 0.8 and calls:
            m["tool_call_id"] = rng.choice(calls)
        elif r < 0.85:
            m["tool_call_id"] = f"call_{rng.randint(7, 9)}"
        elif r < 0.9:
            m["name"] = "bash"
        elif r < 0.95:
            m["id"] = rng.choice(calls) if calls else "call_x"
        if rng.random() < 0.3:
            m["is_error"] = rng.choice([True, False, None, 1])
    r = rng.random()
    if r < 0.2:
        m["id"] = rng.choice([i + 100, f"m{i}", str(i), 1.5, True, -0, 2**64 + 1])
    r = rng.random()
    if r < 0.15:
        m[rng.choice(["timestamp", "created_at", "createdAt"])] = rng.choice(
            [1735689600, 1735689600.25, 1735689600123, "2026-01-01T00:00:00Z", "", None, -5, True]
        )
    return m


def _raw(rng: random.Random, messages: list[dict[str, Any]]) -> str | bytes:
    text = json.dumps(messages, ensure_ascii=rng.random() < 0.3)
    r = rng.random()
    if r < 0.03:
        return text.replace('{"role": ', '{"role": "user", "role": ', 1)  # a key twice: orjson keeps the last
    if r < 0.05:
        return text[:-1] + ",]"
    if r < 0.07:
        return text.replace("[", "[NaN, ", 1)
    if r < 0.08:
        return text.encode()[:-3] + b"\xff]"
    if r < 0.09:
        return '{"not": "an array"}'
    if r < 0.1:
        return text.replace('"content": "', '"content": "\\ud800', 1)
    return text


def test_a_generated_corpus_gives_the_same_warehouse_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(28)
    db = tmp_path / "gen.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE ai_conversations (id TEXT, title TEXT, messages TEXT, created_at TEXT, updated_at TEXT)")
    for n in range(400):
        calls: list[str] = []
        messages = [_message(rng, i, calls) for i in range(rng.randint(0, 12))]
        con.execute(
            "INSERT INTO ai_conversations VALUES (?, ?, ?, ?, ?)",
            (
                f"c{n % 390}",
                rng.choice([None, "", "a title"]),
                _raw(rng, messages),
                rng.choice([None, "2026-06-01T00:12:00Z"]),
                None,
            ),
        )
    con.commit()
    con.close()
    sql, python = _both(db, tmp_path, monkeypatch)
    assert sql[0]["messages"] and sql == python
    raws: list[object] = [
        r for (r,) in sqlite3.connect(db).execute("SELECT CAST(messages AS BLOB) FROM ai_conversations")
    ]
    got = duckparse.read(duckparse.candidates(raws))
    assert 50 < len(got.rows) < 390  # both paths taken (the shapes above make many rows unusual)


def test_speaker_names_are_kept_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """messages.name (docs/definitions.md#failure-analysis): a string name kept by both paths; a number or an object sends the row to Python."""
    db = tmp_path / "names.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE ai_conversations (id TEXT, title TEXT, messages TEXT, created_at TEXT, updated_at TEXT)")
    rows = [
        [
            {"role": "user", "content": "plan it"},
            {"role": "assistant", "name": "Planner_Expert", "content": "ok"},
            {"role": "assistant", "name": "Coder", "content": "done"},
        ],
        [{"role": "assistant", "name": 7, "content": "a number"}, {"role": "user", "name": None, "content": "x"}],
        [{"role": "assistant", "name": {"first": "A"}, "content": "an object"}],
    ]
    for n, msgs in enumerate(rows):
        con.execute("INSERT INTO ai_conversations VALUES (?, NULL, ?, NULL, NULL)", (f"c{n}", json.dumps(msgs)))
    con.commit()
    con.close()
    sql, python = _both(db, tmp_path, monkeypatch)
    assert sql == python
    names = (
        duckdb.connect(str(tmp_path / "True.duckdb"), read_only=True)
        .execute(
            "SELECT c.native_id, m.position, m.name FROM messages m JOIN conversations c USING (conversation_id) "
            "ORDER BY 1, 2"
        )
        .fetchall()
    )
    assert names == [
        ("c0", 0, None),
        ("c0", 1, "Planner_Expert"),
        ("c0", 2, "Coder"),
        ("c1", 0, "7"),
        ("c1", 1, None),
        ("c2", 0, None),
    ]
