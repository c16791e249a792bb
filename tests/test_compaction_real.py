"""The compaction audit on real compactions: the Claude Code session built from the format (fixtures/built, issue
42) and the Codex session of the shared agent logs whose summary is encrypted (skipped without the shared data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, SHARED, query, run_cli

CODEX = (
    SHARED
    / "data"
    / "agent-logs"
    / "codex_cli"
    / "Quelklef+shell-ws"
    / ".codex"
    / "sessions"
    / "2026"
    / "03"
    / "18"
    / "rollout-2026-03-18T11-04-43-019d021f-1244-77d2-b5aa-ba1d70f11e87.jsonl"
)


def _audit(src: Path, tmp: Path) -> tuple[Path, dict, str]:
    db = tmp / "w.duckdb"
    code, _, err = run_cli("ingest", str(src), "--db", str(db))
    assert code == 0, err
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp / "r"), "--only", "compaction")
    assert code == 0, err
    doc = json.loads((tmp / "r" / "metrics.json").read_text())["sections"]["compaction"]
    return db, doc, (tmp / "r" / "report.md").read_text()


def test_a_compacted_claude_code_session_shows_what_its_summary_kept_and_lost(tmp_path: Path) -> None:
    db, doc, md = _audit(FIXTURES / "built" / "claude_code", tmp_path)
    rows = query(
        db,
        "SELECT category, fact, fact_position, status, carried_by FROM compaction_facts "
        "ORDER BY fact_position, category",
    )
    assert [(c, f if c == "error" else f.rsplit("/", 1)[-1], p, s, b) for c, f, p, s, b in rows] == [
        ("path", "devcontainer.json", 2, "kept", "summary"),
        ("path", "devcontainer.json", 3, "kept", "summary"),
        ("command", "npm test", 9, "dropped", None),
        ("error", "FAIL src/app.test.ts", 10, "dropped", None),
    ]  # under Claude Code's "Exit code 1" header
    (event,) = doc["logged"]["events"]
    assert (
        event["position"],
        event["summary"],
        event["pre_tokens"],
        event["by_category"]["path"]["kept"],
        event["by_category"]["command"]["dropped"],
    ) == (15, "text", 48213, 2, 1)
    assert query(db, "SELECT position, compaction_note FROM compaction_marks") == [
        (
            15,
            "compaction audit: summary logged; 4 facts held; kept path 2/2, command 0/1, error 0/1; dropped, not needed "
            "again: command “npm test”, error “FAIL src/app.test.ts”; nothing lost",
        )
    ]
    assert "| 15 | auto | 48213 | 391 | text | 4 | 2 | 2 | 0 | 0 | 0 | 0 | path 2/2, command 0/1, error 0/1 |  |" in md


@pytest.mark.skipif(not CODEX.exists(), reason="the shared agent logs are not here (set FORENSICS_SHARED)")
def test_an_encrypted_codex_summary_is_reported_opaque_and_what_it_kept_is_what_its_history_names(
    tmp_path: Path,
) -> None:
    """Codex 0.11x: ``compacted.message`` empty, the replacement history the person's 53 messages, 46 answers and an
    ``encrypted_content`` item. Nothing is called dropped; a fact is kept when a kept message names it."""
    db, doc, md = _audit(CODEX, tmp_path)
    (event,) = doc["logged"]["events"]
    assert (event["summary"], event["dropped"], event["lost"]) == ("opaque (encrypted)", 0, 0)
    assert event["kept"] + event["opaque"] == event["held"] and event["kept"] > 50 and event["opaque"] > 50
    history = json.loads(CODEX.read_text(encoding="utf-8").splitlines()[1820])["payload"]["replacement_history"]
    kept = "\n".join(c.get("text", "") for h in history for c in h.get("content") or [] if isinstance(c, dict)).lower()
    rows = query(db, "SELECT kind, fact, status FROM compaction_facts WHERE kind IN ('command', 'search', 'error')")
    assert rows and all((f.lower() in kept) == (s == "kept") for _, f, s in rows)  # named in the history: kept
    assert "1 compaction logged its summary encrypted or empty" in md


def _g(mid: str, kind: str, text: str, t: int, calls: list | None = None) -> dict:
    rec = {"id": mid, "timestamp": f"2026-02-10T14:{t:02d}:00.000Z", "type": kind, "content": [{"text": text}]}
    if calls:
        rec["toolCalls"] = [
            {
                "id": f"{mid}-c",
                "name": name,
                "args": args,
                "status": "success",
                "timestamp": rec["timestamp"],
                "result": [{"functionResponse": {"id": f"{mid}-c", "name": name, "response": {"output": out}}}],
            }
            for name, args, out in calls
        ]
    return rec


def test_a_gemini_chat_compression_is_audited_by_its_state_snapshot(tmp_path: Path) -> None:
    """Gemini CLI compresses by rewriting the history (``$set.messages``): the old messages go, a
    ``<state_snapshot>`` user message and the model's acknowledgement come in. The snapshot is the summary."""
    u1 = _g("u1", "user", "Cap the cache at 512MB in src/cache/store.py.", 0)
    a1 = _g(
        "a1",
        "gemini",
        "Reading both.",
        1,
        [
            ("read_file", {"absolute_path": "src/cache/store.py"}, "CAP = 0"),
            ("read_file", {"absolute_path": "src/cache/evict.py"}, "def evict(): ..."),
        ],
    )
    snap = _g(
        "s1",
        "user",
        "<state_snapshot>\n<overall_goal>Cap the cache in src/cache/store.py.</overall_goal>\n</state_snapshot>",
        2,
    )
    ack = _g("s2", "gemini", "Got it. Thanks for the additional context!", 2)
    u2 = _g("u2", "user", "go on", 3)
    a2 = _g("a2", "gemini", "Reading the eviction.", 4, [("read_file", {"absolute_path": "src/cache/evict.py"}, "…")])
    lines = [
        {
            "sessionId": "9e1d6c2b-4a5f-4c3e-8d7a-1b2c3d4e5f60",
            "projectHash": "ab12",
            "startTime": u1["timestamp"],
            "lastUpdated": u1["timestamp"],
            "kind": "main",
        },
        u1,
        a1,
        {"$set": {"messages": [snap, ack]}},
        u2,
        a2,
    ]
    chats = tmp_path / "src" / "tmp" / "ab12" / "chats"
    chats.mkdir(parents=True)
    (chats / "session-2026-02-10T14-00-9e1d6c2b.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    db, doc, _ = _audit(tmp_path / "src", tmp_path)
    (event,) = doc["logged"]["events"]
    assert event["summary"] == "text"
    rows = query(db, "SELECT category, fact, status, carried_by, needed_at, need FROM compaction_facts ORDER BY fact")
    assert rows == [
        ("number", "512MB", "dropped", None, None, None),
        ("path", "src/cache/evict.py", "dropped", None, 7, "re-read (read_file)"),
        ("path", "src/cache/store.py", "kept", "summary", None, None),
    ]
