"""Derived tables have one home (forensics.warehouse.derived, issue 23): rows go in by name, and a warehouse whose
derived tables were written by another version (a column fewer, one more, another order or type) reports again,
its tables recreated with the current columns."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from forensics import ingest
from forensics.report.tables import every
from forensics.warehouse import derived
from tests.conftest import FIXTURES, query, run_cli

TABLES = ("drift_findings", "conversation_keywords", "report_findings", "report_runs", "compaction_facts")


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("derived") / "w.duckdb"
    ingest([FIXTURES / "claude_code", FIXTURES / "sessions"], db=db)
    code, _, err = run_cli("report", "--db", str(db), "--out", str(db.parent / "r"), "--format", "json")
    assert code == 0, err
    return db


def _columns(db: Path) -> dict[str, list[tuple[str, str]]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: sorted(derived.columns(con, t)) for t in TABLES}
    finally:
        con.close()


def test_a_warehouse_of_another_version_reports_and_its_derived_tables_take_the_new_columns(
    reported: Path, tmp_path: Path
) -> None:
    db = tmp_path / "old.duckdb"
    shutil.copy(reported, db)
    now = _columns(reported)
    assert all(now[t] for t in TABLES)
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE drift_findings DROP COLUMN follows_compaction")  # a column the old release lacked
    con.execute("ALTER TABLE conversation_keywords ADD COLUMN retired INTEGER")  # one it had and we dropped
    con.execute("ALTER TABLE report_runs ALTER generated_at TYPE TIMESTAMP")  # another type
    con.execute(
        "CREATE OR REPLACE TABLE report_findings AS SELECT kind, section, * EXCLUDE (kind, section) "
        "FROM report_findings"
    )  # another order
    con.close()
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--format", "json")
    assert code == 0, err
    assert _columns(db) == now
    assert query(db, "SELECT count(*) FROM drift_findings") == query(reported, "SELECT count(*) FROM drift_findings")


def test_rows_go_in_by_name_and_replace_only_what_the_filter_holds(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    derived.replace_rows(con, "t", pl.DataFrame({"conversation_id": ["a", "b"], "n": [1, 2]}), "true")
    derived.replace_rows(con, "t", pl.DataFrame({"conversation_id": ["b"], "n": [3]}), "conversation_id = 'b'")
    assert con.execute("SELECT * FROM t ORDER BY 1").fetchall() == [("a", 1), ("b", 3)]
    derived.append_rows(con, "t", pl.DataFrame({"n": [4], "conversation_id": ["c"]}))  # another order: same columns
    assert con.execute("SELECT * FROM t ORDER BY 1").fetchall() == [("a", 1), ("b", 3), ("c", 4)]
    derived.replace_rows(con, "t", pl.DataFrame({"conversation_id": ["d"], "n": [5], "m": ["x"]}), "true")
    assert derived.columns(con, "t") == [("conversation_id", "VARCHAR"), ("n", "BIGINT"), ("m", "VARCHAR")]
    assert con.execute("SELECT * FROM t").fetchall() == [("d", 5, "x")]


def test_every_table_a_report_writes_is_declared(reported: Path) -> None:
    made = {
        t
        for (t,) in query(
            reported,
            "SELECT table_name FROM duckdb_tables() WHERE comment IS NULL AND table_name <> 'schema_migrations'",
        )
    }
    assert made - {t.name for _, t in every()} == set()
    assert len(made) >= 12
