"""The secret exposure ledger (docs/secrets.md#the-exposure-ledger-which-secret-where-seen-by-whom, issue 45): one key copied into a Claude Code session (read from .env by
a tool), typed again by the person, and printed by a command in its sub-agent's transcript is one secret with 3
copies, each with its arrival, the models it was sent to and the rotation line; in the terminal, the JSON, the
report and the explorer, and no output holds the key or a piece of it."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from forensics.serve.app import create_app
from tests.conftest import FIXTURES, SHARED, run_cli

_rng = random.Random(45)
KEY = "sk-proj-" + "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(48))
SID = "7d1c2b3a-0c55-4c8e-9b1a-3d2f1e0a9b45"
AGENT = "ab12cd34"
PIECE = 12


def leaks(text: str) -> bool:
    return any(KEY[i : i + PIECE] in text for i in range(len(KEY) - PIECE + 1))


def _lines(rows: list[dict[str, Any]], sidechain: bool) -> str:
    base = {
        "isSidechain": sidechain,
        "userType": "external",
        "cwd": "/home/dev/app",
        "sessionId": SID,
        "version": "1.0.98",
        "gitBranch": "main",
        **({"agentId": AGENT} if sidechain else {}),
    }
    out, parent = [], None
    for i, (kind, message, ts) in enumerate(rows):
        uuid = f"{'1' if sidechain else '0'}0000000-0000-4000-8000-{i:012d}"
        out.append({**base, "parentUuid": parent, "type": kind, "uuid": uuid, "timestamp": ts, "message": message})
        parent = uuid
    return "\n".join(json.dumps(r) for r in out) + "\n"


def _assistant(i: int, model: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"msg_{i}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": tool, "input": args}],
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }


def _result(i: int, text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": text}]}


def session(folder: Path) -> Path:
    """A Claude Code project: the session reads .env (copy 1, a tool result of Read), the person pastes the key
    (copy 2), a sub-agent runs `printenv` (copy 3, a tool result of Bash in the sub-agent's transcript)."""
    project = folder / "projects" / "-home-dev-app"
    (project / SID / "subagents").mkdir(parents=True)
    main = [
        ("user", {"role": "user", "content": "deploy the app"}, "2026-03-01T10:00:00.000Z"),
        (
            "assistant",
            _assistant(1, "claude-sonnet-4-5", "Read", {"file_path": "/home/dev/app/.env"}),
            "2026-03-01T10:00:05.000Z",
        ),
        ("user", _result(1, f"OPENAI_API_KEY={KEY}\nREGION=eu-west-1\n"), "2026-03-01T10:00:06.000Z"),
        (
            "assistant",
            {
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Which key should the deploy use?"}],
                "usage": {"input_tokens": 5, "output_tokens": 3},
            },
            "2026-03-01T10:00:09.000Z",
        ),
        ("user", {"role": "user", "content": f"use this one: {KEY}"}, "2026-03-01T10:01:00.000Z"),
        (
            "assistant",
            _assistant(
                3,
                "claude-sonnet-4-5",
                "Task",
                {"description": "check env", "subagent_type": "Explore", "prompt": "Check the deploy environment"},
            ),
            "2026-03-01T10:01:05.000Z",
        ),
        ("user", _result(3, "The environment is set."), "2026-03-01T10:03:00.000Z"),
    ]
    sub = [
        ("user", {"role": "user", "content": "Check the deploy environment"}, "2026-03-01T10:01:06.000Z"),
        (
            "assistant",
            _assistant(11, "claude-haiku-4-5", "Bash", {"command": "printenv | grep KEY"}),
            "2026-03-01T10:01:10.000Z",
        ),
        ("user", _result(11, f"OPENAI_API_KEY={KEY}"), "2026-03-01T10:01:12.000Z"),
        (
            "assistant",
            {
                "id": "msg_12",
                "type": "message",
                "role": "assistant",
                "model": "claude-haiku-4-5",
                "content": [{"type": "text", "text": "The environment is set."}],
                "usage": {"input_tokens": 5, "output_tokens": 3},
            },
            "2026-03-01T10:01:20.000Z",
        ),
    ]
    (project / f"{SID}.jsonl").write_text(_lines(main, False))
    (project / SID / "subagents" / f"agent-{AGENT}.jsonl").write_text(_lines(sub, True))
    return folder / "projects"


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ledger")
    db = d / "w.duckdb"
    code, out, err = run_cli("ingest", str(session(d)), "--db", str(db))
    assert code == 0, err
    assert not leaks(out + err)
    return db


def test_one_key_three_copies_their_arrival_model_and_rotation(wh: Path) -> None:
    code, out, err = run_cli("secrets", "--db", str(wh), "--format", "json")
    assert code == 0, err
    assert not leaks(out)
    found = json.loads(out)
    assert found["found"] == 3 and found["distinct_secrets"] == 1
    [s] = found["secrets"]
    assert (s["kind"], s["copies"], len(s["conversations"]), len(s["subagents"])) == ("openai-key", 3, 2, 1)
    assert len(s["fingerprint"]) == 12 and s["fingerprint"] not in KEY
    how = sorted((a["how"], a["tool"], a["subagent_of"] is not None, a["position"]) for a in s["arrivals"])
    assert how == [("person", None, False, 4), ("tool_result", "Bash", True, 2), ("tool_result", "Read", False, 2)]
    assert s["arrivals"][0]["at"] == "2026-03-01 10:00:06"  # the Read result first
    assert (s["first_seen"], s["last_seen"]) == ("2026-03-01 10:00:06", "2026-03-01 10:01:12")
    # sent on with every later request: the session's sonnet, the sub-agent's haiku
    assert s["models"] == [
        {"model": "claude-sonnet-4-5", "provider": "anthropic"},
        {"model": "claude-haiku-4-5", "provider": "anthropic"},
    ]
    [rot] = found["rotation"]
    assert rot["provider"] == "OpenAI" and "revoke" in rot["action"]
    assert rot["secrets"] == [
        {"kind": "openai-key", "fingerprint": s["fingerprint"], "copies": 3, "last_seen": "2026-03-01 10:01:12"}
    ]


def test_the_terminal_ledger_names_copies_arrival_model_rotation(wh: Path) -> None:
    code, out, err = run_cli("secrets", "--db", str(wh))
    assert code == 0, err
    assert not leaks(out)
    assert "openai-key  fingerprint " in out and "3 copies in 2 conversations, 1 of them sub-agent transcripts" in out
    assert ": tool_result of Read (2026-03-01 10:00:06)" in out
    assert ": tool_result of Bash (2026-03-01 10:01:12)" in out and "sub-agent transcript " in out
    assert ": person (2026-03-01 10:01:00)" in out
    assert "sent to: anthropic claude-sonnet-4-5, anthropic claude-haiku-4-5" in out
    assert "[ ] OpenAI: platform.openai.com → API keys: revoke the key, create a new one" in out


def test_the_report_has_a_ledger_section(wh: Path, tmp_path: Path) -> None:
    code, _, err = run_cli("report", "--db", str(wh), "--out", str(tmp_path), "--format", "md,html,json")
    assert code == 0, err
    md = (tmp_path / "report.md").read_text()
    assert "Secret exposure ledger" in md and "tool_result of Read" in md and "Rotate, by provider" in md
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert not leaks(p.read_text(errors="replace")), p


def test_the_explorer_page_links_each_copy_to_its_position(wh: Path) -> None:
    client = TestClient(create_app(str(wh)), base_url="http://127.0.0.1")
    r = client.get("/secrets")
    assert r.status_code == 200
    assert not leaks(r.text)
    assert r.text.count('href="/c/') >= 3 and "?at=4#m4" in r.text and "?at=2#m2" in r.text
    assert "tool_result of <b>Bash</b>" in r.text and "<b>OpenAI</b>" in r.text
    for cid_at in [x.split('"')[0] for x in r.text.split('href="/c/')[1:]]:
        page = client.get("/c/" + cid_at.split("#")[0].replace("&amp;", "&"))
        assert page.status_code == 200 and "[REDACTED]" in page.text and not leaks(page.text)


def test_no_secret_explorer_page_says_so(tmp_path: Path) -> None:
    db = tmp_path / "empty.duckdb"
    assert run_cli("ingest", str(FIXTURES / "claude_code" / "-home-dev-api"), "--db", str(db))[0] == 0
    r = TestClient(create_app(str(db)), base_url="http://127.0.0.1").get("/secrets")
    assert r.status_code == 200 and "No secret was found" in r.text
    code, out, _ = run_cli("secrets", "--db", str(db), "--format", "json")
    assert json.loads(out)["secrets"] == [] and json.loads(out)["rotation"] == []


def _counts(db: Path) -> tuple[int, int, int]:
    from tests.conftest import query

    return query(
        db,
        "SELECT (SELECT count(*) FROM conversations), (SELECT count(*) FROM messages), "
        "(SELECT count(*) FROM secrets_found)",
    )[0]


def test_the_redacted_copy_reimports_whole_with_no_secret(wh: Path, tmp_path: Path) -> None:
    src = wh.parent / "projects"
    before = {p: p.read_bytes() for p in src.rglob("*") if p.is_file()}
    code, out, err = run_cli("secrets", "--db", str(wh), "--export-redacted", str(tmp_path / "out"))
    assert code == 0, err
    assert "2 files copied" in out and "3 secrets masked" in out and not leaks(out)
    assert {p: p.read_bytes() for p in src.rglob("*") if p.is_file()} == before  # sources untouched
    copied = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    for p in copied:
        text = p.read_text()
        assert not leaks(text)
        assert all(json.loads(line) for line in text.splitlines())  # JSONL stays JSONL
    db = tmp_path / "again.duckdb"
    assert run_cli("ingest", str(tmp_path / "out"), "--db", str(db))[0] == 0
    assert _counts(db) == (_counts(wh)[0], _counts(wh)[1], 0)
    # into a folder that is not empty, or inside the sources: refused in one line, nothing written
    code, _, err = run_cli("secrets", "--db", str(wh), "--export-redacted", str(tmp_path / "out"))
    assert code == 2 and "not an empty folder" in err


def test_a_sqlite_source_stays_sqlite(tmp_path: Path) -> None:
    import sqlite3

    (tmp_path / "src").mkdir()
    con = sqlite3.connect(tmp_path / "src" / "app.db")
    con.execute("CREATE TABLE ai_conversations (id TEXT PRIMARY KEY, title TEXT, messages TEXT, created_at TEXT)")
    con.execute(
        "INSERT INTO ai_conversations VALUES (?,?,?,?)",
        (
            "c1",
            f"deploy {KEY}",
            json.dumps([{"role": "user", "content": f"key {KEY}"}, {"role": "assistant", "content": "ok"}]),
            "2026-03-01T10:00:00Z",
        ),
    )
    con.commit()
    con.close()
    db, again = tmp_path / "w.duckdb", tmp_path / "again.duckdb"
    assert run_cli("ingest", str(tmp_path / "src"), "--db", str(db))[0] == 0
    assert run_cli("secrets", "--db", str(db), "--export-redacted", str(tmp_path / "out"))[0] == 0
    raw = (tmp_path / "out" / "app.db").read_bytes()
    assert raw.startswith(b"SQLite format 3\x00") and not leaks(raw.decode("latin-1"))
    assert run_cli("ingest", str(tmp_path / "out"), "--db", str(again))[0] == 0
    assert _counts(again) == (1, 2, 0) and _counts(db) == (1, 2, 2)


REAL = SHARED / "data" / "agent-logs"


@pytest.mark.skipif(not REAL.exists(), reason="the shared agent logs are not here")
def test_the_shared_agent_logs_export_reimports_to_the_same_counts(tmp_path: Path) -> None:
    db, again = tmp_path / "w.duckdb", tmp_path / "again.duckdb"
    assert run_cli("ingest", str(REAL), "--db", str(db))[0] == 0
    assert run_cli("secrets", "--db", str(db), "--export-redacted", str(tmp_path / "out"))[0] == 0
    assert run_cli("ingest", str(tmp_path / "out"), "--db", str(again))[0] == 0
    assert _counts(again) == (_counts(db)[0], _counts(db)[1], 0)
