"""Decision-memory harness databases (docs/formats.md#decision-memory-harness-databases-decision-memory): recognised by their tables, every row accounted for, sources
untouched, and the shapes other harnesses give the same tables."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import struct
from pathlib import Path

import pytest

from forensics import ingest, open_warehouse
from forensics.formats.decision_memory import split_alternatives, vector
from forensics.formats.kit.records import BadRecord
from tests.conftest import FIXTURES, query, run_cli

HARNESS, VARIANT = FIXTURES / "memory" / "harness.db", FIXTURES / "memory" / "variant.db"


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("dm") / "w.duckdb"
    code, out, err = run_cli("ingest", str(FIXTURES / "memory"), "--db", str(db))
    assert code == 0, err
    return db


def test_harness_tables_are_recognised_and_every_row_is_counted(wh: Path) -> None:
    runs = query(
        wh,
        "SELECT path, format, rows_read, messages_read, messages_imported, quarantined, skipped, note "
        "FROM import_runs ORDER BY path",
    )
    harness, variant = runs
    # harness.db: 66 messages + 11 decisions + 10 embeddings; the decision rows and vectors are stored beside
    assert harness[1:7] == ("decision-memory", 87, 87, 66, 0, 21)
    assert harness[7] == "decision memory: 11 decisions in `decisions` (10 rejected options, 10 with an embedding)"
    # variant.db: 15 message rows (1 repeated hash, 1 unknown role, 1 NULL content) + 3 decisions (1 empty),
    # and one inline vector that is broken: a record of its own, quarantined
    assert variant[1:7] == ("decision-memory", 18, 19, 12, 4, 3)
    assert variant[7].startswith("1 messages repeat a message_hash already read: skipped")


def test_conversations_are_keyed_by_project_and_conversation(wh: Path) -> None:
    rows = query(wh, "SELECT native_id, project, message_count FROM conversations ORDER BY native_id")
    assert [r[0] for r in rows] == [
        "billing/e1",
        "billing/e2",
        "billing/e3",
        "billing/e4",
        "kb/c1",
        "kb/c2",
        "kb/c3",
        "kb/c4",
        "kb/c5",
        "kb/c6",
        "kb/c7",
        "kb/c8",
        "kb/c9",
        "mobile/m1",
        "ops/v1",
        "ops/v2",
        "ops/v3",
    ]
    assert {r[0]: r[1] for r in rows}["kb/c3"] == "kb"
    assert {r[0]: r[2] for r in rows}["kb/c1"] == 8
    assert query(wh, "SELECT title FROM conversations WHERE native_id = 'billing/e1'") == [
        ("Should we build invoices on Stripe or Adyen?",)
    ]


def test_messages_are_ordered_by_created_at_then_id(wh: Path) -> None:
    """variant.db stores its rows newest first, two in the same second: positions follow time, then id."""
    rows = query(
        wh,
        "SELECT m.position, m.native_id, m.role FROM messages m JOIN conversations c USING "
        "(conversation_id) WHERE c.native_id = 'ops/v1' ORDER BY m.position",
    )
    assert rows == [
        (0, "m-0001", "user"),
        (1, "m-0002", "assistant"),
        (2, "m-0003", "user"),
        (3, "m-0004", "assistant"),
    ]
    assert query(
        wh,
        "SELECT count(*) FROM messages m JOIN conversations c USING (conversation_id) "
        "WHERE c.native_id = 'ops/v1' AND m.native_id = 'm-9001'",
    ) == [(0,)]  # the repeated hash


def test_decisions_keep_their_fields_source_position_and_rejected_options(wh: Path) -> None:
    rows = query(
        wh,
        "SELECT d.decision_id, c.native_id, d.source_position, d.decision_type, d.title, d.importance_score, "
        "strftime(d.created_at, '%Y-%m-%dT%H:%M:%S') FROM decisions d LEFT JOIN conversations c "
        "USING (conversation_id) WHERE d.decision_id IN ('1', '11', 'dec-k8s') ORDER BY 1",
    )
    assert rows == [
        ("1", "kb/c1", 2, "tool_selection", "用户服务数据库选型", 1.5, "2025-06-02T10:02:30"),
        ("11", "billing/e4", 0, "vendor", "Payment provider", 1.0, "2025-07-20T10:00:30"),
        # epoch milliseconds, no type or importance columns: NULL and the harness's default 1.0
        ("dec-k8s", "ops/v1", 0, None, "部署平台", 1.0, "2025-08-01T09:00:20"),
    ]
    alts = query(
        wh,
        "SELECT decision_id, list(alternative ORDER BY alternative) FROM decision_alternatives GROUP BY 1 ORDER BY 1",
    )
    assert alts == [
        ("1", ["MongoDB", "MySQL"]),
        ("11", ["Adyen", "Braintree"]),
        ("2", ["Loki"]),
        ("3", ["Zabbix"]),
        ("5", ["ELK"]),
        ("7", ["MySQL 分库分表"]),
        ("9", ["Adyen", "Braintree"]),
        ("dec-k8s", ["Docker Swarm", "Nomad"]),
    ]  # "、", ", ", " | " and " / " all split


def test_embeddings_are_read_from_blobs_and_json(wh: Path) -> None:
    con = sqlite3.connect(HARNESS)
    blob = con.execute("SELECT embedding FROM decision_embeddings WHERE decision_id = 11").fetchone()[0]
    con.close()
    (vec,) = query(wh, "SELECT embedding FROM decisions WHERE decision_id = '11'")[0]
    assert vec == pytest.approx(list(struct.unpack("<6f", blob)))
    assert query(wh, "SELECT embedding FROM decisions WHERE decision_id = 'dec-k8s'")[0][0] == pytest.approx(
        [0.1, 0.9, 0]
    )
    # harness.db's decision 10 (RabbitMQ) has no row in decision_embeddings; dec-ci's inline vector is broken
    assert query(wh, "SELECT decision_id FROM decisions WHERE embedding IS NULL ORDER BY 1") == [("10",), ("dec-ci",)]


def test_bad_rows_are_quarantined_with_their_raw_values(wh: Path) -> None:
    rows = query(wh, "SELECT location, reason, decode(raw) FROM quarantine ORDER BY location")
    assert [(r[0], r[1]) for r in rows] == [
        ("conversation_messages:14", "unknown role 'bot'"),
        ("conversation_messages:15", "content is NULL"),
        ("decision_events:2.embedding", "embedding text is not a JSON array"),
        ("decision_events:3", "decision has neither a title nor a decision_content"),
    ]
    assert '"tokens":0' in rows[0][2] and '"content":"机器人消息"' in rows[0][2]  # the whole row, extra columns too
    assert rows[2][2] == "[0.1, 0.9"


def test_sources_are_not_written_and_a_second_ingest_adds_nothing(tmp_path: Path) -> None:
    src = tmp_path / "harness.db"
    shutil.copy2(HARNESS, src)
    before = (hashlib.sha256(src.read_bytes()).hexdigest(), src.stat().st_mtime_ns)
    db = tmp_path / "w.duckdb"
    ingest([src], db=db)
    again = ingest([src], db=db)
    assert (hashlib.sha256(src.read_bytes()).hexdigest(), src.stat().st_mtime_ns) == before
    assert not (tmp_path / "harness.db-journal").exists() and not (tmp_path / "harness.db-wal").exists()
    assert again.sources[0].status == "unchanged" and again.totals()["messages_imported"] == 0


def test_a_grown_harness_adds_only_what_is_new_and_replaces_its_decisions(tmp_path: Path) -> None:
    src = tmp_path / "harness.db"
    shutil.copy2(HARNESS, src)
    db = tmp_path / "w.duckdb"
    ingest([src], db=db)
    con = sqlite3.connect(src)
    mid = con.execute(
        "INSERT INTO conversation_messages (message_hash, project_id, conversation_id, role, content, "
        "created_at) VALUES ('new', 'kb', 'c9', 'user', '连接池改成 80。', '2025-06-27T09:00:00')"
    ).lastrowid
    con.execute(
        "INSERT INTO decision_events (project_id, conversation_id, source_message_id, decision_type, title, "
        "decision_content, importance_score, created_at, updated_at) VALUES ('kb', 'c9', ?, 'architecture', "
        "'数据库连接池配置', '最大连接数 80', 1.0, '2025-06-27T09:00:30', '2025-06-27T09:00:30')",
        (mid,),
    )
    con.commit()
    con.close()
    run = ingest([src], db=db)
    s = run.sources[0]
    # the file is re-read whole: one new message, the other 66 identical; one conversation grew
    assert (s.messages_imported, s.messages_unchanged, s.conversations_updated, s.conversations_unchanged) == (
        1,
        66,
        1,
        13,
    )
    assert query(db, "SELECT count(*), count(DISTINCT decision_id) FROM decisions") == [(12, 12)]
    assert query(db, "SELECT count(*) FROM decision_alternatives") == [(10,)]
    assert query(db, "SELECT source_position FROM decisions WHERE decision_id = '12'") == [(2,)]


def test_a_table_without_a_required_column_fails_in_one_line_and_changes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "broken.db"
    con = sqlite3.connect(src)
    con.executescript(
        "CREATE TABLE conversation_messages (id INTEGER, conversation_id TEXT, content TEXT);"
        "CREATE TABLE decision_events (id INTEGER, title TEXT);"
    )
    con.close()
    code, out, err = run_cli("ingest", str(src), "--db", str(tmp_path / "w.duckdb"))
    assert code == 2
    assert err.splitlines()[0] == (
        f"forensics: {src}: conversation_messages has no role/speaker column; check the table or pass --format sqlite"
    )
    assert not (tmp_path / "w.duckdb").exists()


def test_forensics_formats_lists_decision_memory_before_the_sqlite_catch_all() -> None:
    code, out, _ = run_cli("formats")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()]
    assert names.index("open-webui") < names.index("decision-memory") < names.index("sqlite")


def test_a_sqlite_file_with_only_one_of_the_tables_is_not_taken_for_decision_memory(tmp_path: Path) -> None:
    src = tmp_path / "half.db"
    con = sqlite3.connect(src)
    con.execute("CREATE TABLE decision_events (id INTEGER, title TEXT)")
    con.close()
    code, _, err = run_cli("ingest", str(src), "--db", str(tmp_path / "w.duckdb"))
    assert code == 2 and "no column holding JSON message arrays" in err  # read as a JSON-message database
    code, _, err = run_cli("ingest", str(src), "--format", "decision-memory", "--db", str(tmp_path / "w.duckdb"))
    assert code == 2
    assert err.splitlines()[-1] == (
        f"forensics: {src}: no conversation_messages table: not a decision-memory "
        "harness database; check the file or pass --format sqlite"
    )


def test_an_older_warehouse_gains_the_project_column(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    with open_warehouse(db) as w:  # back to schema 5, as a warehouse written before decision memory
        w.con.execute(
            "DROP TABLE decisions; DROP TABLE decision_alternatives; ALTER TABLE conversations DROP COLUMN project"
        )
        w.con.execute("DELETE FROM schema_migrations WHERE name = 'm006_decision_memory'")
        w.con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    ingest([HARNESS], db=db)
    assert query(db, "SELECT count(*) FILTER (WHERE project IS NULL), count(project) FROM conversations") == [(3, 14)]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("MongoDB、MySQL", ["MongoDB", "MySQL"]),
        ("Adyen, Braintree ; Square", ["Adyen", "Braintree", "Square"]),
        ("甲，乙；丙/丁|戊", ["甲", "乙", "丙", "丁", "戊"]),
        ('["Redis", "Memcached"]', ["Redis", "Memcached"]),
        ("null", []),
        ("无", []),
        (" , ,", []),
        (None, []),
        ("Loki, Loki", ["Loki"]),
        ("[not json", ["[not json"]),
    ],
)
def test_rejected_options_split_on_the_separators_of_both_scripts(text: str | None, want: list[str]) -> None:
    assert split_alternatives(text) == want


def test_vectors_from_blobs_and_json_and_what_is_refused() -> None:
    assert vector(struct.pack("<3f", 1, 0.5, -2)) == [1.0, 0.5, -2.0]
    assert vector("[1, 2.5]") == [1.0, 2.5] and vector(b"[3, 4]") == [3.0, 4.0]
    for bad in (b"\x00\x01\x02", b"", "[]", "[1, true]", "{}", 7, struct.pack("<2f", float("nan"), 1)):
        with pytest.raises(BadRecord):
            vector(bad)


def test_epochs_as_text_digit_ids_and_tables_without_rowid(tmp_path: Path) -> None:
    """Another harness: times written as epoch text, ids as digit strings (9 before 10), WITHOUT ROWID tables."""
    src = tmp_path / "h.db"
    con = sqlite3.connect(src)
    con.executescript("""
        CREATE TABLE conversation_messages (id TEXT PRIMARY KEY, conversation_id TEXT, role TEXT, content TEXT,
                                            created_at TEXT) WITHOUT ROWID;
        CREATE TABLE decision_events (id TEXT PRIMARY KEY, conversation_id TEXT, source_message_id TEXT, title TEXT,
                                      decision_content TEXT, importance_score TEXT, created_at TEXT) WITHOUT ROWID;
        INSERT INTO conversation_messages VALUES ('10', 'c', 'assistant', '好的', '1754470920'),
            ('9', 'c', 'user', '就用 Redis', '1754470920'), ('11', 'c', 'bot', '?', '1754470980'),
            ('12', 'c', 'user', 'later', 'not a time');
        INSERT INTO decision_events VALUES ('1', 'c', '9', '缓存', 'Redis', 'high', '1754470930000');
    """)
    con.close()
    db = tmp_path / "w.duckdb"
    run = ingest([src], db=db)
    s = run.sources[0]
    assert (s.messages_read, s.messages_imported, s.quarantined, s.skipped) == (5, 3, 1, 1)
    assert "1 decisions with an importance_score that is not a number: 1.0 used" in s.note
    assert "1 messages without a readable created_at" in s.note
    assert query(db, "SELECT position, native_id, strftime(created_at, '%H:%M:%S') FROM messages ORDER BY 1") == [
        (0, "9", "09:02:00"),
        (1, "10", "09:02:00"),
        (2, "12", None),
    ]  # no project column: native id "c"
    assert query(db, "SELECT location FROM quarantine") == [("conversation_messages:2",)]  # index in key order
    assert query(
        db,
        "SELECT d.source_position, c.native_id, d.importance_score, strftime(d.created_at, '%S') "
        "FROM decisions d JOIN conversations c USING (conversation_id)",
    ) == [(0, "c", 1.0, "10")]
