"""The ingest command as a user meets it: exit codes, one-line errors, nothing changed on failure."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, query, run_subprocess

BAD = ["bad/binary.jsonl", "bad/not_sqlite.db", "bad/no_messages_table.db", "bad/object_column.db"]


def contents(db: Path) -> dict[str, list[tuple]]:
    """Every table but import_runs, whole (a failed source adds its row there and changes nothing else)."""
    tables = [t for (t,) in query(db, "SELECT table_name FROM information_schema.tables") if t != "import_runs"]
    return {t: sorted(query(db, f'SELECT * FROM "{t}"'), key=repr) for t in tables}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("wh") / "w.duckdb"
    r = run_subprocess("ingest", str(FIXTURES / "seed" / "seed.db"), "--db", str(db))
    assert r.returncode == 0, r.stderr
    return db


@pytest.mark.parametrize("bad", BAD)
def test_bad_source_fails_in_one_line_and_leaves_the_warehouse_unchanged(bad: str, warehouse: Path) -> None:
    before = contents(warehouse)
    r = run_subprocess("ingest", str(FIXTURES / bad), "--db", str(warehouse))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and str(FIXTURES / bad) in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert contents(warehouse) == before
    (run,) = query(warehouse, "SELECT status, note FROM import_runs WHERE path = ?", [str(FIXTURES / bad)])
    assert run == ("failed", r.stderr.removeprefix("forensics: ").rstrip("\n"))


def test_a_bad_source_alone_leaves_no_warehouse(tmp_path: Path) -> None:
    r = run_subprocess("ingest", str(FIXTURES / "bad" / "binary.jsonl"), "--db", str(tmp_path / "w.duckdb"))
    assert r.returncode == 2 and not (tmp_path / "w.duckdb").exists()


def test_one_bad_source_among_good_exits_1_and_imports_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    r = run_subprocess(
        "ingest", str(FIXTURES / "bad" / "binary.jsonl"), str(FIXTURES / "sessions"), "--db", str(db), "--json"
    )
    assert r.returncode == 1, r.stderr
    import json

    out = json.loads(r.stdout)
    assert out["totals"]["failed"] == 1 and out["totals"]["conversations_new"] == 8
    assert [s["status"] for s in out["sources"]].count("imported") == 8


def test_missing_path_is_usage_error(tmp_path: Path) -> None:
    r = run_subprocess("ingest", str(tmp_path / "nope.db"), "--db", str(tmp_path / "w.duckdb"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f"forensics: {tmp_path / 'nope.db'}: no such file or folder"


def test_folder_ingest_prints_summary_line(tmp_path: Path) -> None:
    r = run_subprocess("ingest", str(FIXTURES / "sessions"), str(FIXTURES / "seed"), "--db", str(tmp_path / "w.duckdb"))
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith(
        "9 sources (0 failed), 1 not recognised = 10 files: 11 conversations new, 0 updated, 0 unchanged; "
        "2360 messages read = 2282 added + 0 unchanged + 78 quarantined -> "
    )


def test_help_shows_an_example() -> None:
    r = run_subprocess("ingest", "--help")
    assert r.returncode == 0 and "Example:" in r.stdout


def test_warehouse_docs_are_current() -> None:
    from forensics.report.tables import every
    from forensics.warehouse.docs import render

    assert (FIXTURES.parent / "docs" / "warehouse.md").read_text() == render(every())


def test_past_twenty_sources_only_the_failed_and_noted_get_a_row(tmp_path: Path) -> None:
    for i in range(3):  # 24 session files, and one that is no session at all
        shutil.copytree(FIXTURES / "sessions", tmp_path / "src" / f"copy{i}")
    shutil.copy(FIXTURES / "bad" / "binary.jsonl", tmp_path / "src" / "binary.jsonl")
    shutil.copytree(FIXTURES / "claude_code" / "-home-dev-webapp", tmp_path / "src" / "webapp")  # notes merges
    r = run_subprocess("ingest", str(tmp_path / "src"), "--db", str(tmp_path / "w.duckdb"))
    rows = r.stdout.splitlines()
    assert r.returncode == 1 and rows[0].startswith("source ")
    listed = [line.split()[0] for line in rows[1:] if not line.startswith(("note:", "("))][:-1]
    noted = [line.split(": ")[1] for line in rows if line.startswith("note:")]
    assert sorted(listed) == sorted([str(tmp_path / "src" / "binary.jsonl"), *noted]) and len(noted) == 3
    total = len(list((tmp_path / "src").rglob("*.jsonl")))
    files = len([f for f in (tmp_path / "src").rglob("*") if f.is_file()])  # a tool output stored beside a session
    assert files == total + 1
    assert (
        f"({files - len(listed)} files imported or unchanged without a note, side files or files not recognised "
        "not listed; --verbose lists every file)" in rows
    )
    assert rows[-1].startswith(f"{total} sources (1 failed), 1 side file = {files} files: ")
    verbose = run_subprocess("ingest", str(tmp_path / "src"), "--db", str(tmp_path / "w.duckdb"), "--verbose")
    assert len([line for line in verbose.stdout.splitlines() if line.startswith(str(tmp_path))]) == files
