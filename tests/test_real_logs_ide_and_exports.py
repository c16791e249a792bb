"""The real logs of Cline, Continue, Cursor and ChatGPT exports (../shared/data/agent-logs, not copied here:
no permissive license): each family's folder imports with no flags, side files named as read with their
main file, and its figures equal those counted from the raw files by the tools' own rules
(tests/agent_counts.py); a re-import adds nothing and the report runs."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.agent_counts import REAL, Real
from tests.conftest import SHARED, query, run_cli

LOGS = SHARED / "data" / "agent-logs"


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:
    if not LOGS.is_dir():
        pytest.skip(f"{LOGS} not found (the shared real logs; set FORENSICS_SHARED)")
    root = tmp_path_factory.mktemp("real")
    out = {}
    for family in REAL:
        db = root / f"{family}.duckdb"
        code, stdout, err = run_cli("ingest", str(LOGS / family), "--db", str(db), "--json")
        assert code == 0, err
        out[family] = (db, json.loads(stdout))
    return out


def figures(db: Path) -> Real:
    (convs,) = query(db, "SELECT count(*) FROM conversations")[0]
    (person,) = query(db, "SELECT count(*) FROM messages WHERE origin = 'person' AND on_main_path")[0]
    calls, linked, errors = query(db, "SELECT count(*), count(result_seq), count(*) FILTER (WHERE result_seq IS "
                                      "NOT NULL AND is_error) FROM tool_calls")[0]
    return Real(convs, person, calls, linked, errors)


@pytest.mark.parametrize("family", list(REAL))
def test_each_family_imports_and_its_figures_match_the_raw_files(warehouses: dict, family: str) -> None:
    fmt, count = REAL[family]
    db, run = warehouses[family]
    assert query(db, "SELECT DISTINCT format FROM sources") == [(fmt,)]
    assert all(s["status"] != "failed" for s in run["sources"])
    assert figures(db) == count(LOGS / family)


def test_the_figures_are_the_ones_read_by_hand(warehouses: dict) -> None:
    """Read against the files: Cline's two full tasks hold 9 of the person's messages among 39 on the user
    role, its two ui_messages.json alone 19; Cursor's workspace database has no chat bodies, only the
    person's 284 prompts; 6 ChatGPT tool messages (a custom GPT's action) answer no call."""
    assert figures(warehouses["cline_roo"][0]) == Real(4, 28, 107, 101, 4)
    assert figures(warehouses["cursor"][0]) == Real(1, 284, 0, 0, 0)
    assert figures(warehouses["chatgpt_export"][0]) == Real(30, 47, 7, 7, 0)
    assert figures(warehouses["continue_dev"][0]) == Real(6, 33, 40, 39, 2)


def test_side_files_are_named_with_their_main_file(warehouses: dict) -> None:
    notes = {family: " ".join(n for s in run["sources"] for n in s.get("notes") or [s.get("note") or ""])
             for family, (_, run) in warehouses.items()}
    assert "read with it: ui_messages.json" in notes["cline_roo"] and "task_metadata.json" in notes["cline_roo"]
    assert "read with it: sessions.json" in notes["continue_dev"]
    assert "read with it: shared_conversations.json (1 shared links, not conversations)" in notes["chatgpt_export"]
    assert "keep their messages in the global database" in notes["cursor"]


@pytest.mark.parametrize("family", list(REAL))
def test_re_importing_adds_nothing_and_the_report_runs(warehouses: dict, family: str, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(warehouses[family][0], db)
    before = figures(db)
    code, out, err = run_cli("ingest", str(LOGS / family), "--db", str(db), "--json")
    assert code == 0, err
    totals = json.loads(out)["totals"]
    assert (totals["conversations_new"], totals["conversations_updated"], totals["messages_imported"]) == (0, 0, 0)
    assert figures(db) == before
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--format", "json")
    assert code == 0, f"{family}: {err}"
