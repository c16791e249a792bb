"""SQLite importer: the seed table, both message shapes, detection, incremental updates, read-only sources."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import duckdb
import pytest

from forensics import ingest
from forensics.kernel.errors import ForensicsError
from tests.conftest import FIXTURES, copy_fixture, run_cli
from tests.conftest import query as q


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_seed_table_imports_three_conversations_with_every_tool_call_linked(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    r = ingest([FIXTURES / "seed" / "seed.db"], db=db)
    assert r.exit_code == 0
    assert r.totals()["conversations_new"] == 3
    rows = dict(
        q(
            db,
            "SELECT c.native_id, count(*) FILTER (WHERE m.role != 'system') FROM messages m "
            "JOIN conversations c USING (conversation_id) GROUP BY 1",
        )
    )
    assert rows == {"f89d129a": 251, "a95f5d6d": 213, "d6614e0b": 211}
    assert sum(rows.values()) == 675
    total, linked, calls_in_msgs = q(
        db, "SELECT count(*), count(result_position), (SELECT sum(tool_call_count) FROM messages) FROM tool_calls"
    )[0]
    assert (total, linked, calls_in_msgs) == (314, 314, 314)
    # each link points at a tool message answering exactly that call
    bad = q(
        db,
        "SELECT count(*) FROM tool_calls t JOIN messages m ON m.conversation_id = t.conversation_id "
        "AND m.position = t.result_position WHERE m.role != 'tool' OR m.tool_call_id != t.call_id "
        "OR m.content_bytes != t.result_bytes",
    )
    assert bad == [(0,)]


def test_positions_are_json_array_indices_with_system_messages_kept(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "sqlite" / "realistic.db"], db=db)
    src = sqlite3.connect(FIXTURES / "sqlite" / "realistic.db")
    for cid, raw in src.execute("SELECT id, messages FROM ai_conversations"):
        msgs = json.loads(raw)
        got = q(
            db,
            "SELECT position, role, content FROM messages m JOIN conversations c USING (conversation_id) "
            "WHERE c.native_id = ? ORDER BY position",
            [cid],
        )
        assert [(i, m["role"], m["content"]) for i, m in enumerate(msgs)] == got
    assert q(db, "SELECT count(*) FROM messages WHERE role = 'system'")[0][0] > 0


def test_anthropic_blocks_become_tool_messages_and_linked_calls(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "anthropic" / "anthropic.db"], db=db)
    src = sqlite3.connect(FIXTURES / "anthropic" / "anthropic.db")
    n_use = n_result_msgs = 0
    for (raw,) in src.execute("SELECT messages FROM ai_conversations"):
        for m in json.loads(raw):
            if isinstance(m["content"], list):
                n_use += sum(b["type"] == "tool_use" for b in m["content"])
                n_result_msgs += m["role"] == "user" and all(b["type"] == "tool_result" for b in m["content"])
    assert q(db, "SELECT count(*) FROM tool_calls")[0][0] == n_use > 0
    assert q(db, "SELECT count(*) FROM messages WHERE role = 'tool'")[0][0] == n_result_msgs > 0
    assert q(db, "SELECT count(*) FROM tool_calls WHERE result_position IS NULL")[0][0] == 0
    # the result size is that call's block, not the whole merged message
    assert (
        q(
            db,
            "SELECT count(*) FROM tool_calls t JOIN messages m ON m.conversation_id = t.conversation_id "
            "AND m.position = t.result_position WHERE t.result_bytes > m.content_bytes",
        )[0][0]
        == 0
    )


def test_reimport_adds_nothing_and_keeps_ids(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    first = ingest([FIXTURES / "seed" / "seed.db"], db=db)
    ids = q(db, "SELECT conversation_id FROM conversations ORDER BY 1")
    again = ingest([FIXTURES / "seed" / "seed.db"], db=db)
    assert first.totals()["messages_imported"] == 675 + 0  # no system messages in the seed table
    t = again.totals()
    assert (t["messages_imported"], t["conversations_new"], t["conversations_unchanged"]) == (0, 0, 3)
    assert again.sources[0].status == "unchanged"
    assert q(db, "SELECT conversation_id FROM conversations ORDER BY 1") == ids
    assert q(db, "SELECT count(*) FROM messages")[0][0] == 675
    other = tmp_path / "other.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=other)
    assert q(other, "SELECT conversation_id FROM conversations ORDER BY 1") == ids  # stable across warehouses


def test_grown_row_updates_only_that_conversation(tmp_path: Path) -> None:
    src = copy_fixture("sqlite/realistic.db", tmp_path)
    db = tmp_path / "w.duckdb"
    ingest([src], db=db)
    before = q(db, "SELECT count(*) FROM messages")[0][0]
    con = sqlite3.connect(src)
    rid, raw = con.execute("SELECT id, messages FROM ai_conversations ORDER BY rowid LIMIT 1").fetchone()
    msgs = json.loads(raw) + [{"role": "user", "content": "继续"}, {"role": "assistant", "content": "好的，接着说。"}]
    con.execute(
        "UPDATE ai_conversations SET messages = ?, updated_at = '2027-01-01T00:00:00Z' WHERE id = ?",
        (json.dumps(msgs, ensure_ascii=False), rid),
    )
    con.commit()
    con.close()
    r = ingest([src], db=db)
    s = r.sources[0]
    assert (s.conversations_new, s.conversations_updated, s.conversations_unchanged) == (0, 1, 11)
    assert (s.messages_imported, s.messages_unchanged, s.quarantined) == (2, len(msgs) - 2, 0)
    assert q(db, "SELECT count(*) FROM messages")[0][0] == before + 2
    assert (
        q(
            db,
            "SELECT max(position) FROM messages m JOIN conversations c USING (conversation_id) WHERE c.native_id = ?",
            [rid],
        )[0][0]
        == len(msgs) - 1
    )


def test_source_file_is_never_modified(tmp_path: Path) -> None:
    src = copy_fixture("sqlite/realistic.db", tmp_path)
    before, mtime = sha256(src), src.stat().st_mtime_ns
    ingest([src], db=tmp_path / "w.duckdb")
    assert sha256(src) == before and src.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == ["realistic.db", "w.duckdb"]  # no -journal, no -wal
    stored = q(tmp_path / "w.duckdb", "SELECT sha256, size FROM sources")
    assert stored == [(before, src.stat().st_size)]


def _wal_db(path: Path, rows: int) -> sqlite3.Connection:
    """A WAL-mode chats table; the open writer is returned with ``rows`` rows committed to its -wal only."""
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("CREATE TABLE chats (uid TEXT, messages TEXT)")
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for i in range(rows):
        con.execute("INSERT INTO chats VALUES (?, ?)", [f"u{i}", MSGS.replace("#", str(i))])
    con.commit()
    return con


def test_a_wal_mode_store_is_read_without_writing_beside_it(tmp_path: Path) -> None:
    """SQLite writes a -shm and a -wal beside a WAL-mode database it reads, even with mode=ro: a store committed
    without them (Crush's, the eighth round's) must be left as found."""
    src = tmp_path / "s" / "crush.db"
    src.parent.mkdir()
    _wal_db(src, 3).close()  # the last close checkpoints and removes the -wal and -shm
    assert sorted(p.name for p in src.parent.iterdir()) == ["crush.db"]
    before = sha256(src)
    s = ingest([src], db=tmp_path / "w.duckdb").sources[0]
    assert (s.conversations_new, s.messages_imported) == (3, 6)
    assert sorted(p.name for p in src.parent.iterdir()) == ["crush.db"] and sha256(src) == before


def test_a_wal_beside_a_store_is_read_from_a_copy_and_nothing_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A -wal with no -shm (copied from a live store): its committed rows are read, through a copy in a temporary
    folder that goes when the store is closed; nothing is written beside the source."""
    live = tmp_path / "live" / "c.db"
    live.parent.mkdir()
    writer = _wal_db(live, 2)
    src = tmp_path / "s" / "c.db"
    src.parent.mkdir()
    for name in ("c.db", "c.db-wal"):
        (src.parent / name).write_bytes((live.parent / name).read_bytes())
    writer.close()
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    before = {p.name: sha256(p) for p in src.parent.iterdir()}
    s = ingest([src], db=tmp_path / "w.duckdb").sources[0]
    assert (s.conversations_new, s.messages_imported) == (2, 4)  # both rows live only in the -wal
    assert {p.name: sha256(p) for p in src.parent.iterdir()} == before
    assert list(temp.iterdir()) == []


def _chat_db(path: Path, columns: dict[str, str]) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE chats (uid TEXT, " + ", ".join(f"{c} TEXT" for c in columns) + ")")
    for i in range(3):
        con.execute(
            f"INSERT INTO chats VALUES (?, {', '.join('?' for _ in columns)})",
            [f"u{i}", *[v.replace("#", str(i)) for v in columns.values()]],
        )
    con.commit()
    con.close()


MSGS = json.dumps([{"role": "user", "content": "hello #"}, {"role": "assistant", "content": "hi"}])


def test_messages_column_is_auto_detected(tmp_path: Path) -> None:
    _chat_db(tmp_path / "c.db", {"note": "plain text #", "body": MSGS})
    r = ingest([tmp_path / "c.db"], db=tmp_path / "w.duckdb")
    assert r.exit_code == 0 and r.totals()["messages_imported"] == 6


def test_ambiguous_message_columns_are_an_error_listing_both(tmp_path: Path) -> None:
    _chat_db(tmp_path / "c.db", {"body": MSGS, "backup": MSGS})
    r = ingest([tmp_path / "c.db"], db=tmp_path / "w.duckdb")
    assert r.exit_code == 2
    assert "chats.body" in r.sources[0].error and "chats.backup" in r.sources[0].error
    assert not (tmp_path / "w.duckdb").exists()  # a run that read nothing leaves no warehouse behind


def test_table_and_column_override(tmp_path: Path) -> None:
    _chat_db(tmp_path / "c.db", {"body": MSGS, "backup": MSGS})
    code, out, err = run_cli(
        "ingest", str(tmp_path / "c.db"), "--table", "chats", "--column", "backup", "--db", str(tmp_path / "w.duckdb")
    )
    assert (code, err) == (0, "")
    assert "6 added" in out
    code, _, err = run_cli("ingest", str(tmp_path / "c.db"), "--table", "nope", "--db", str(tmp_path / "w.duckdb"))
    assert code == 2 and "no table 'nope'" in err and err.count("\n") == 1


def test_bad_rows_and_elements_are_quarantined_with_location(tmp_path: Path) -> None:
    con = sqlite3.connect(tmp_path / "c.db")
    con.execute("CREATE TABLE ai_conversations (id TEXT, messages TEXT)")
    rows = [
        ("ok", MSGS),
        ("trunc", MSGS[:30]),
        ("deep", "[" * 3000 + "]" * 3000),
        ("mixed", json.dumps([{"role": "user", "content": "x"}, 42, {"content": "no role"}])),
    ]
    con.executemany("INSERT INTO ai_conversations VALUES (?, ?)", rows)
    con.commit()
    con.close()
    r = ingest([tmp_path / "c.db"], db=tmp_path / "w.duckdb")
    s = r.sources[0]
    assert s.status == "imported"
    assert s.messages_read == s.messages_imported + s.messages_unchanged + s.quarantined == 2 + 1 + 1 + 3
    got = q(tmp_path / "w.duckdb", "SELECT location, reason FROM quarantine ORDER BY location")
    assert [g[0] for g in got] == [
        "ai_conversations:2",
        "ai_conversations:3",
        "ai_conversations:4[1]",
        "ai_conversations:4[2]",
    ]
    assert "nested too deeply" in got[1][1] or "depth" in got[1][1]
    assert got[2][1] == "message is a JSON int, not an object" and got[3][1] == "message has no role"


def test_newer_warehouse_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    code, out, err = run_cli("ingest", str(FIXTURES / "seed" / "seed.db"), "--db", str(db))
    assert code == 2 and out == ""
    assert "newer forensics (schema 99" in err and err.count("\n") == 1


def test_unknown_format_option_is_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ForensicsError):
        ingest([FIXTURES / "seed" / "seed.db"], db=tmp_path / "w.duckdb", fmt="csv")


def test_parallel_parse_gives_the_same_warehouse_as_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import forensics.formats.sqlite as sqlite
    import forensics.ingestion.run as run

    ingest([FIXTURES / "sqlite" / "realistic.db", FIXTURES / "sessions"], db=tmp_path / "inline.duckdb", workers=1)
    monkeypatch.setattr(run, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(sqlite, "CHUNK_ROWS", 3)  # several tasks per SQLite source (the format plans its chunks)
    ingest([FIXTURES / "sqlite" / "realistic.db", FIXTURES / "sessions"], db=tmp_path / "pool.duckdb", workers=2)
    sql = "SELECT conversation_id, seq, position, role, md5(content), content_bytes FROM messages ORDER BY ALL"
    assert q(tmp_path / "inline.duckdb", sql) == q(tmp_path / "pool.duckdb", sql)
    sql = "SELECT * FROM tool_calls ORDER BY ALL"
    assert q(tmp_path / "inline.duckdb", sql) == q(tmp_path / "pool.duckdb", sql)


def test_a_message_larger_than_the_memory_limit_still_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import forensics.ingestion.load as load

    monkeypatch.setattr(load, "DEFAULT_MEMORY_MB", 16)  # DuckDB's limit grows with the largest parse task
    src = tmp_path / "big.db"
    con = sqlite3.connect(src)
    con.execute("CREATE TABLE ai_conversations (id TEXT, messages TEXT)")
    big = "日志 line\n" * (3 << 20)  # ~36 MB of UTF-8 in one message
    con.execute(
        "INSERT INTO ai_conversations VALUES ('c1', ?)",
        [
            json.dumps(
                [{"role": "user", "content": "show the log"}, {"role": "tool", "content": big}], ensure_ascii=False
            )
        ],
    )
    con.commit()
    con.close()
    db = tmp_path / "w.duckdb"
    assert ingest([src], db=db).exit_code == 0
    assert q(db, "SELECT content_bytes FROM messages WHERE role = 'tool'") == [(len(big.encode("utf-8")),)]
