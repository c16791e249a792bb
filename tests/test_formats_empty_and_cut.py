"""Two kinds of bad input a user meets: an empty file (0 bytes, or only blank lines) and a data export cut
off mid-way (a download or a copy that stopped). An empty file is no source and no conversation: counted
and listed as empty, exit 0. A cut ChatGPT or Claude.ai ``conversations.json`` is known by how it starts,
its complete conversations are imported and the rest quarantined with the byte it ends at; when none is
complete the source fails in one line, exit 2. Every byte here is a fixture's, or a fixture cut."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, SHARED, query, run_cli

CHATGPT = FIXTURES / "agents" / "chatgpt" / "export" / "conversations.json"  # 3 items, 8566 bytes
CLAUDE_AI = FIXTURES / "agents" / "claude_ai" / "export" / "conversations.json"  # 2 items, 4112 bytes
REAL_CHATGPT = (
    SHARED
    / "data"
    / "agent-logs"
    / "chatgpt_export"
    / "RainChinChao+Chatgpt-Aided-veRIPY-CARIPY-"
    / "conversations.json"
)

# a file named as each line-based (and JSON) format names its logs, so that auto-detection would try that format
NAMED = [
    ("jsonl", "notes.jsonl"),
    ("codex", "sessions/2025/10/29/rollout-2025-10-29T09-00-00-8a7e6413-a5cd-5d80-80f8-cc1428270d13.jsonl"),
    ("claude-code", "projects/-home-dev-api/429a57e4-6e34-5d68-8372-f06ad41124c5.jsonl"),
    ("gemini-cli", "tmp/9f3c1b7a2e/chats/session-2026-02-10T14-30-59ed9645.jsonl"),
    ("gemini-cli", "tmp/9f3c1b7a2e/chats/session-2025-09-01T10-00-8e2ea8b2.json"),
    ("chatgpt", "export/conversations.json"),
    ("claude-ai", "claude/conversations.json"),
    ("openai", "chat.json"),
]
BLANK = [
    (b"", "0 bytes"),
    (b"\n", "only blank lines, 1 byte"),
    (b"\n\n  \r\n\t\n", "only blank lines, 8 bytes"),
    (b"\xef\xbb\xbf\n", "only blank lines, 4 bytes"),
]


def cut(src: Path, n: int, dest: Path) -> Path:
    """The first ``n`` bytes of ``src``, under its own name in ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / src.name
    out.write_bytes(src.read_bytes()[:n])
    return out


@pytest.mark.parametrize("data, held", BLANK)
@pytest.mark.parametrize("fmt, rel", NAMED)
@pytest.mark.parametrize("forced", [False, True])
def test_an_empty_file_is_counted_as_empty_not_a_conversation_nor_a_failure(
    tmp_path: Path, fmt: str, rel: str, data: bytes, held: str, forced: bool
) -> None:
    f = tmp_path / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_bytes(data)
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(f), "--db", str(db), *(("--format", fmt) if forced else ()))
    assert (code, err) == (0, "")
    assert f"note: {f}: empty file ({held}): no conversation, skipped\n" in out
    assert out.rstrip().endswith(
        f"0 sources (0 failed), 1 empty = 1 files: 0 conversations new, 0 updated, "
        f"0 unchanged; 0 messages read = 0 added + 0 unchanged + 0 quarantined -> {db}"
    )
    assert query(db, "SELECT count(*) FROM conversations") == [(0,)]
    assert query(db, "SELECT count(*) FROM import_runs") == [(0,)]


def test_an_empty_file_beside_real_sessions_is_counted_and_the_rest_imported(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(FIXTURES / "sessions", folder)
    n = len(list(folder.iterdir()))
    (folder / "sess_000000000000.jsonl").write_bytes(b"")
    (folder / "sess_000000000001.jsonl").write_bytes(b"\n\n")
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(folder), "--db", str(db))
    assert (code, err) == (0, "")
    assert f"{n} sources (0 failed), 2 empty = {n + 2} files: {n} conversations new" in out
    assert query(db, "SELECT count(*) FROM conversations") == [(n,)]
    code, out, _ = run_cli("ingest", str(folder), "--db", str(db), "--json")

    totals = json.loads(out)["totals"]
    assert (code, totals["empty"], totals["sources"], totals["conversations_unchanged"]) == (0, 2, n, n)


def test_an_empty_source_stored_by_an_older_release_is_reported_empty_not_unchanged(tmp_path: Path) -> None:
    """Before this change a 0-byte JSONL file was imported as one conversation with no message; a rerun over
    that warehouse says the file is empty instead of matching the stored source by size and time."""
    f = tmp_path / "empty.jsonl"
    f.write_bytes(b"")
    db = tmp_path / "w.duckdb"
    run_cli("ingest", str(FIXTURES / "sessions" / "sess_0974a9ce8167.jsonl"), "--db", str(db))
    import duckdb

    con = duckdb.connect(str(db))
    con.execute(
        "INSERT INTO sources (source_id, path, format, sha256, size, mtime_ns, options, imported_at) "
        "VALUES ('old', ?, 'jsonl', '', 0, ?, '{}', now())",
        [str(f.resolve()), f.stat().st_mtime_ns],
    )
    con.close()
    code, out, _ = run_cli("ingest", str(f), "--db", str(db))
    assert code == 0
    assert f"note: {f}: empty file (0 bytes): no conversation, skipped" in out


@pytest.mark.parametrize(
    "src, n, fmt",
    [
        (CHATGPT, 60, "chatgpt"),
        (CHATGPT, 100, "chatgpt"),
        (CHATGPT, 500, "chatgpt"),
        (CHATGPT, 4283, "chatgpt"),
        (CLAUDE_AI, 180, "claude-ai"),
        (CLAUDE_AI, 1000, "claude-ai"),
    ],
)
def test_an_export_cut_inside_its_first_conversation_fails_with_the_byte_it_ends_at(
    tmp_path: Path, src: Path, n: int, fmt: str
) -> None:
    """Cut before the first conversation ends: its format is told from its first keys (``title``,
    ``create_time`` for ChatGPT; ``uuid``, ``name``, ``created_at`` for Claude.ai), and nothing is complete."""
    f = cut(src, n, tmp_path / "export")
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(f), "--db", str(db))
    assert code == 2
    assert (
        err
        == f"forensics: {f}: truncated at byte {n} (the file ends inside an item); check the file or pass --format\n"
    )
    assert f"{f}  {fmt}  failed" in out
    assert not db.exists()


def test_an_export_cut_before_its_first_keys_say_what_it_is_is_not_recognised(tmp_path: Path) -> None:
    f = cut(CHATGPT, 20, tmp_path / "export")  # '[\n {\n  "title": "2 ': one key, shared by many formats
    code, _, err = run_cli("ingest", str(f), "--db", str(tmp_path / "w.duckdb"))
    assert code == 2
    assert "format not recognised" in err


@pytest.mark.parametrize(
    "src, n, where, reason, counts",
    [
        # the third ChatGPT item (one with "mapping": null, quarantined whole when complete) is cut: 2 conversations
        (
            CHATGPT,
            8563,
            "conversations.json[2:]",
            "truncated at byte 8563 (the file ends inside an item)",
            (2, 13, 1, 1, 15),
        ),
        # every item complete, the closing bracket missing: the null-mapping item and the empty tail quarantined
        (
            CHATGPT,
            8565,
            "conversations.json[3:]",
            "truncated at byte 8565 (the file ends before the array's closing bracket)",
            (2, 13, 2, 1, 16),
        ),
        # the second Claude.ai conversation cut: the first one's 8 messages kept
        (
            CLAUDE_AI,
            4000,
            "conversations.json[1:]",
            "truncated at byte 4000 (the file ends inside an item)",
            (1, 8, 1, 0, 9),
        ),
    ],
)
def test_an_export_cut_after_whole_conversations_keeps_them_and_quarantines_the_rest(
    tmp_path: Path, src: Path, n: int, where: str, reason: str, counts: tuple[int, ...]
) -> None:
    f = cut(src, n, tmp_path / "export")
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(f), "--db", str(db), "--json")
    assert (code, err) == (0, "")

    s = json.loads(out)["sources"][0]
    assert s["status"] == "imported"
    assert (
        s["conversations_new"],
        s["messages_imported"],
        s["quarantined"],
        s["skipped"],
        s["messages_read"],
    ) == counts
    assert f"{reason}: the {where.split('[')[1].split(':')[0]} items before it read, the rest quarantined" in s["note"]
    rows = query(db, "SELECT location, reason, raw FROM quarantine WHERE location = ?", [where])
    assert [(loc, why) for loc, why, _ in rows] == [(where, f"{reason} (the rest of the file from this item on)")]
    raw = bytes(rows[0][2])  # the cut item's own bytes, to the end of the file (none when only "]" is missing)
    assert f.read_bytes().endswith(raw) and bool(raw) == ("inside an item" in reason)


def test_a_real_chatgpt_export_cut_mid_way_keeps_the_conversations_before_the_cut(tmp_path: Path) -> None:
    """A real 2025-layout export (264,053 bytes, 25 conversations, 159 messages) cut at byte 150,000."""
    if not REAL_CHATGPT.exists():
        pytest.skip(f"{REAL_CHATGPT} not found (set FORENSICS_SHARED)")
    f = cut(REAL_CHATGPT, 150_000, tmp_path / "export")
    db = tmp_path / "w.duckdb"
    code, out, err = run_cli("ingest", str(f), "--db", str(db))
    assert (code, err) == (0, "")
    assert "11 conversations new" in out and "78 messages read = 77 added + 0 unchanged + 1 quarantined" in out
    assert "truncated at byte 150000 (the file ends inside an item): the 11 items before it read" in out
    for n in (60, 120):  # inside the first conversation's first keys, then inside its mapping
        g = cut(REAL_CHATGPT, n, tmp_path / f"cut{n}")
        code, _, err = run_cli("ingest", str(g), "--db", str(tmp_path / f"w{n}.duckdb"))
        assert (code, err) == (
            2,
            f"forensics: {g}: truncated at byte {n} (the file ends inside an item); check the file or pass --format\n",
        )
