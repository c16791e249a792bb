"""`forensics export --format parquet`: every row lands in the dataset, and SQL over it answers as over the warehouse."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from forensics import ingest
from forensics.analyzers import named_queries
from forensics.commands.export import export, open_export, tables
from tests.conftest import FIXTURES, run_cli

# arg_max(position, tool_call_count) picks among equally wide rounds by scan order, which Parquet's
# partitioned layout changes
TIES = {"tool_turns": "widest_round_position"}
# The baseline (docs/definitions.md#baseline-metrics) per conversation: the shape of query the report and queries/ run.
BASELINE = """
SELECT c.native_id, count(*) FILTER (m.role != 'system') AS messages,
       count(*) FILTER (m.role = 'user') AS "user", count(*) FILTER (m.role = 'tool') AS tool,
       sum(m.tool_call_count) FILTER (m.role = 'assistant') AS tool_calls,
       count(*) FILTER (m.role = 'tool' AND m.content_bytes > 2000) AS tool_results_gt_2kb,
       count(*) FILTER (m.role = 'user' AND length(trim(m.content)) <= 12) AS short_user,
       (SELECT count(*) FROM tool_calls t WHERE t.conversation_id = c.conversation_id AND t.is_error) AS errors
FROM conversations c JOIN messages m USING (conversation_id)
WHERE m.on_main_path GROUP BY ALL ORDER BY ALL
"""


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("wh") / "w.duckdb"
    ingest(
        [
            FIXTURES / "seed" / "seed.db",
            FIXTURES / "sqlite",
            FIXTURES / "anthropic",
            FIXTURES / "sessions",
            FIXTURES / "bad" / "bad_lines.jsonl",
        ],
        db=db,
    )
    code, _, err = run_cli("report", "--db", str(db), "--out", str(db.parent / "reports"), "--format", "json")
    assert code == 0, err  # the report's derived tables (drift findings, topics ...) are exported too
    return db


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


def test_every_table_exports_every_row(warehouse: Path, tmp_path: Path) -> None:
    result = export(warehouse, tmp_path / "lake")
    wh = duckdb.connect(str(warehouse), read_only=True)
    lake = open_export(tmp_path / "lake")
    layout = tables(wh)
    assert {"conversations", "messages", "tool_calls", "quarantine", "drift_findings"} <= set(layout)
    for table in layout:
        n = rows(wh, f"SELECT count(*) FROM {table}")[0][0]
        assert result.rows[table] == n, table
        assert rows(lake, f"SELECT count(*) FROM {table}")[0][0] == n, table
        cols = f"SELECT column_name, column_type FROM (DESCRIBE {table})"
        assert rows(lake, cols) == rows(wh, cols), table  # same columns, order, types
    assert rows(lake, "SELECT count(*) FROM messages")[0][0] > 4000


def test_queries_over_parquet_answer_as_over_the_warehouse(warehouse: Path, tmp_path: Path) -> None:
    export(warehouse, tmp_path / "lake")
    wh = duckdb.connect(str(warehouse), read_only=True)
    lake = open_export(tmp_path / "lake")
    assert rows(lake, BASELINE) == rows(wh, BASELINE)
    for named in named_queries():  # every shipped named query
        sql = named.sql
        if named.name in TIES:  # a column resolved by scan order where values tie: left out of the comparison
            sql = f"SELECT * EXCLUDE ({TIES[named.name]}) FROM ({sql})"
        # same rows; rows that tie on the query's ORDER BY may come in either order
        assert sorted(rows(lake, sql), key=repr) == sorted(rows(wh, sql), key=repr), named.name


def test_partitions_are_source_and_month(warehouse: Path, tmp_path: Path) -> None:
    export(warehouse, tmp_path / "lake")
    parts = {
        p.relative_to(tmp_path / "lake" / "messages").parent.as_posix()
        for p in (tmp_path / "lake" / "messages").rglob("*.parquet")
    }
    assert parts and all(p.split("/")[0].startswith("source=") and p.split("/")[1].startswith("month=") for p in parts)
    assert any(p.startswith("source=sessions-") for p in parts)  # a folder of sessions is one partition
    assert len({p.split("/")[0] for p in parts}) == 5  # seed.db, realistic.db, anthropic.db, sessions/, bad/


def test_cli_refuses_a_non_empty_folder_and_overwrites_only_an_export(warehouse: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    code, out, _ = run_cli("export", "--db", str(warehouse), "--out", str(lake))
    assert code == 0 and "messages" in out and "views.sql" in out
    code, out, err = run_cli("export", "--db", str(warehouse), "--out", str(lake))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "--overwrite" in err
    assert run_cli("export", "--db", str(warehouse), "--out", str(lake), "--overwrite")[0] == 0
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    code, _, err = run_cli("export", "--db", str(warehouse), "--out", str(other), "--overwrite")
    assert code == 2 and "not a forensics export" in err and (other / "notes.txt").exists()
