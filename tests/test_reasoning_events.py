"""What a model reasoned before it replied, kept as ``reasoning`` events (docs/formats.md): Claude Code's
``thinking`` blocks (not ``redacted_thinking``), Codex's reasoning items' readable ``summary`` and ``content``
(not ``encrypted_content``), Inspect's ``reasoning`` parts (tests/test_problems.py). Each sits on the assistant
message it came before; the messages, their counts and the import's accounting do not change."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FIXTURES, query, run_cli

CODEX = (
    FIXTURES
    / "built"
    / "codex"
    / ".codex"
    / "sessions"
    / "2025"
    / "12"
    / "25"
    / "rollout-2025-12-25T10-00-03-019b6a2e-1f00-7c3a-9d2e-5a7b3c9e1f20.jsonl"
)
CLAUDE = FIXTURES / "claude_code" / "-home-dev-webapp" / "144a6dea-b560-5e09-ae81-65ecd1f3a9df.jsonl"
ON_REPLY = (
    "SELECT e.position, m.role, json_extract_string(e.detail, '$.text') FROM events e "
    "JOIN messages m USING (conversation_id, position) WHERE e.kind = 'reasoning' ORDER BY 1"
)


def _ingest(path: Path, db: Path) -> str:
    code, out, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    return out


def test_claude_codes_thinking_block_is_a_reasoning_event_on_its_reply(tmp_path: Path) -> None:
    out = _ingest(CLAUDE, tmp_path / "w.duckdb")
    assert query(tmp_path / "w.duckdb", ON_REPLY) == [(1, "assistant", "The test probably uses the old token.")]
    assert "reasoning" not in out  # the import's line accounting is the lines', not the blocks'


def test_codexs_reasoning_summary_is_a_reasoning_event_on_the_next_reply(tmp_path: Path) -> None:
    _ingest(CODEX, tmp_path / "w.duckdb")
    got = query(tmp_path / "w.duckdb", ON_REPLY)
    assert [p for p, _, _ in got] == [4, 10, 14, 20, 24, 30]
    assert {(r, t) for _, r, t in got} == {("assistant", "**Looking at the project**")}
    # the encrypted part is never stored
    assert query(tmp_path / "w.duckdb", "SELECT count(*) FROM events WHERE detail LIKE '%gAAAA%'") == [(0,)]


def test_a_secret_in_the_reasoning_is_masked_like_any_stored_text(tmp_path: Path) -> None:
    import json

    key = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    reply = [
        {"type": "reasoning", "reasoning": f"the token is {key} ok", "signature": "x", "redacted": False},
        {"type": "text", "text": "hello"},
    ]
    doc = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "model": "m", "created": "2025-08-28T13:56:08-04:00"},
        "samples": [
            {
                "id": "s",
                "epoch": 1,
                "input": "hi",
                "messages": [
                    {"role": "user", "content": "hi", "id": "u"},
                    {"role": "assistant", "id": "a", "content": reply},
                ],
            }
        ],
    }
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "eval.json").write_text(json.dumps(doc), encoding="utf-8")
    _ingest(tmp_path / "logs", tmp_path / "w.duckdb")
    db = tmp_path / "w.duckdb"
    assert query(db, "SELECT detail FROM events WHERE kind = 'reasoning'") == [
        ('{"text":"the token is [REDACTED] ok"}',)
    ]
    assert query(db, "SELECT count(*) FROM secrets_found") == [(1,)]
    assert Path(db).read_bytes().find(key.encode()) == -1
