"""Every agent-log format: imported with no flags, its figures equal those counted from the raw files, a
re-import adds nothing, and `forensics report` runs on it; then what each format must get right."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.agent_counts import COUNTERS, Figures
from tests.conftest import FIXTURES, query, run_cli

AGENTS = FIXTURES / "agents"


def test_the_fixtures_are_what_the_generator_writes(tmp_path: Path) -> None:
    from tests.conftest import load_script

    load_script(FIXTURES / "make_agent_logs.py").main(tmp_path)
    for f in sorted(p for p in tmp_path.rglob("*") if p.is_file()):
        committed = AGENTS / f.relative_to(tmp_path)
        if f.suffix in (".db", ".vscdb"):  # SQLite files hold the same rows, not always the same pages
            assert committed.stat().st_size > 0
            continue
        assert committed.read_bytes() == f.read_bytes(), f"{committed} is stale: run fixtures/make_agent_logs.py"


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("agents")
    out = {}
    for folder in COUNTERS:
        db = root / f"{folder}.duckdb"
        code, _, err = run_cli("ingest", str(AGENTS / folder), "--db", str(db))
        assert code == 0, err
        out[folder] = db
    return out


def figures(db: Path) -> Figures:
    (convs,) = query(db, "SELECT count(*) FROM conversations")[0]
    (users,) = query(db, "SELECT count(*) FROM messages WHERE role = 'user' AND on_main_path")[0]
    calls, linked = query(db, "SELECT count(*), count(result_seq) FROM tool_calls")[0]
    return Figures(convs, users, calls, linked)


@pytest.mark.parametrize("folder", list(COUNTERS))
def test_each_format_imports_with_no_flags_and_its_figures_match_the_files(
    warehouses: dict[str, Path], folder: str
) -> None:
    fmt, count = COUNTERS[folder]
    db = warehouses[folder]
    assert query(db, "SELECT DISTINCT format FROM sources") == [(fmt,)]
    assert figures(db) == count(AGENTS / folder)
    for read, imported, quarantined, skipped in query(
        db, "SELECT messages_read, messages_imported, quarantined, skipped FROM import_runs"
    ):
        assert read == imported + quarantined + skipped


@pytest.mark.parametrize("folder", list(COUNTERS))
def test_re_importing_adds_nothing(warehouses: dict[str, Path], folder: str, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(warehouses[folder], db)
    before = figures(db)
    code, out, err = run_cli("ingest", str(AGENTS / folder), "--db", str(db), "--json")
    assert code == 0, err
    totals = json.loads(out)["totals"]
    assert (totals["conversations_new"], totals["conversations_updated"], totals["messages_imported"]) == (0, 0, 0)
    assert figures(db) == before


@pytest.mark.parametrize("folder", list(COUNTERS))
def test_report_runs_on_each_format(warehouses: dict[str, Path], folder: str, tmp_path: Path) -> None:
    db = warehouses[folder]
    code, out, err = run_cli("report", "--db", str(db), "--out", str(tmp_path), "--format", "json")
    assert code == 0, f"{folder}: {err}"
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert len(metrics["sections"]["baseline"]["conversations"]) == figures(db).conversations


def test_the_full_report_runs_over_every_format_at_once(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(AGENTS), "--db", str(db))[0] == 0
    code, out, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"))
    assert code == 0, err
    assert {p.name for p in (tmp_path / "r").iterdir()} >= {"report.md", "report.html", "metrics.json"}
    assert len(query(db, "SELECT DISTINCT format FROM sources")) == len({f for f, _ in COUNTERS.values()})


def test_a_grown_copy_re_imports_only_what_changed(tmp_path: Path) -> None:
    src = tmp_path / "conversations.json"
    shutil.copy(AGENTS / "chatgpt" / "export" / "conversations.json", src)
    db = tmp_path / "w.duckdb"
    run_cli("ingest", str(src), "--db", str(db))
    doc = json.loads(src.read_text())
    doc[1]["mapping"]["w"] = {
        "id": "w",
        "message": {"id": "w", "author": {"role": "user"}, "content": {"content_type": "text", "parts": ["one more"]}},
        "parent": "z",
        "children": [],
    }
    doc[1]["mapping"]["z"]["children"] = ["w"]
    doc[1]["current_node"] = "w"
    src.write_text(json.dumps(doc))
    code, out, _ = run_cli("ingest", str(src), "--db", str(db), "--json")
    r = json.loads(out)["sources"][0]
    assert (r["conversations_updated"], r["conversations_unchanged"], r["messages_imported"]) == (1, 1, 1)
