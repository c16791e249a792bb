"""Real logs of agent runs and traces (OpenTelemetry GenAI, OpenInference/Phoenix, OpenHands, SWE-agent,
mini-swe-agent, Inspect AI) from ../shared/data/agent-logs: each file imports with no flags, and its figures
(conversations, person messages on the main path, tool calls, linked results, error results) equal those
counted from the raw file by tests/agent_counts.py; a re-import adds nothing; `forensics report` runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.agent_counts import RUNS, Run
from tests.conftest import SHARED, query, run_cli

LOGS = SHARED / "data" / "agent-logs"
FILES = (
    sorted((family, f) for family in RUNS for f in (LOGS / family).rglob("*") if f.is_file()) if LOGS.is_dir() else []
)
needs_logs = pytest.mark.skipif(not FILES, reason=f"{LOGS} not found (set FORENSICS_SHARED)")


def figures(db: Path) -> Run:
    return Run(
        *query(
            db,
            "SELECT (SELECT count(*) FROM conversations), (SELECT count(*) FROM messages WHERE "
            "origin = 'person' AND on_main_path), (SELECT count(*) FROM tool_calls), "
            "(SELECT count(result_seq) FROM tool_calls), (SELECT count(*) FROM tool_calls WHERE "
            "is_error)",
        )[0]
    )


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for k, (_, f) in enumerate(FILES):
        db = root / f"{k}.duckdb"
        code, _, err = run_cli("ingest", str(f), "--db", str(db))
        assert code == 0, f"{f}: {err}"
        out[f] = db
    return out


@needs_logs
@pytest.mark.parametrize("family,path", FILES, ids=[f"{fam}/{p.name}" for fam, p in FILES])
def test_each_real_file_imports_with_no_flags_and_its_figures_match_the_file(
    warehouses: dict[Path, Path], family: str, path: Path
) -> None:
    fmt, count = RUNS[family]
    db = warehouses[path]
    assert query(db, "SELECT format, status FROM import_runs") == [(fmt, "imported")]
    assert figures(db) == count(path)


@needs_logs
@pytest.mark.parametrize("family,path", FILES, ids=[f"{fam}/{p.name}" for fam, p in FILES])
def test_re_importing_a_real_file_adds_nothing(
    warehouses: dict[Path, Path], family: str, path: Path, tmp_path: Path
) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(warehouses[path], db)
    before = figures(db)
    code, out, err = run_cli("ingest", str(path), "--db", str(db), "--json")
    assert code == 0, err
    totals = json.loads(out)["totals"]
    assert (totals["conversations_new"], totals["conversations_updated"], totals["messages_imported"]) == (0, 0, 0)
    assert figures(db) == before


@needs_logs
@pytest.mark.parametrize("family", sorted(RUNS))
def test_report_runs_on_each_familys_warehouse(family: str, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(LOGS / family), "--db", str(db))
    assert code == 0, err
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "rep"), "--format", "json")
    assert code == 0, f"{family}: {err}"
