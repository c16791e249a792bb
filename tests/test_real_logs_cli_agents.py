"""Real logs of Codex CLI, Claude Code, Gemini CLI and aider (../shared/data/agent-logs, SOURCES.md): every file,
pointed at alone with no flags, imports and its figures (conversations, the person's messages on the main path,
tool calls, answered calls, failed calls) equal those counted from the raw file by tests/agent_counts.py; a
re-import of the folder adds nothing; the report runs on each family's warehouse."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.agent_counts import FileFigures, aider_file, claude_code_file, codex_file, gemini_file
from tests.conftest import SHARED, query, run_cli

REAL = SHARED / "data" / "agent-logs"
FAMILIES: dict[str, tuple[str, Callable[[Path], FileFigures]]] = {
    "codex_cli": ("codex", codex_file),
    "claude_code": ("claude-code", claude_code_file),
    "gemini_cli": ("gemini-cli", gemini_file),
    "aider": ("aider", aider_file),
}


def files(family: str) -> list[Path]:
    return sorted(p for p in (REAL / family).rglob("*") if p.is_file())


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    name = request.param
    if not files(name):
        pytest.skip(f"{REAL / name} not found (set FORENSICS_SHARED)")
    db = tmp_path_factory.mktemp(name) / "w.duckdb"
    for f in files(name):
        code, _, err = run_cli("ingest", str(f), "--db", str(db))
        assert code == 0, f"{f}: {err}"
    return name, db


def warehouse_figures(db: Path, path: Path) -> FileFigures:
    rows = query(db, "SELECT source_id FROM sources WHERE path = ?", [str(path.resolve())])
    if not rows:  # a side file (a sub-agent's .meta.json): read with its main file, no source of its own
        return FileFigures(0, 0, 0, 0, 0)
    (src,) = rows[0]
    convs = "SELECT conversation_id FROM conversations WHERE source_id = ?"
    (n,) = query(db, f"SELECT count(*) FROM ({convs})", [src])[0]
    (person,) = query(
        db,
        f"SELECT count(*) FROM messages WHERE origin = 'person' AND on_main_path AND conversation_id IN ({convs})",
        [src],
    )[0]
    calls, linked, errors = query(
        db,
        f"SELECT count(*), count(result_seq), count(*) FILTER (WHERE is_error AND "
        f"result_seq IS NOT NULL) FROM tool_calls WHERE conversation_id IN ({convs})",
        [src],
    )[0]
    return FileFigures(n, person, calls, linked, errors)


def test_each_file_imports_alone_and_its_figures_match_the_raw_file(family: tuple[str, Path]) -> None:
    name, db = family
    fmt, count = FAMILIES[name]
    assert {f for (f,) in query(db, "SELECT DISTINCT format FROM sources")} == {fmt}
    for f in files(name):
        assert warehouse_figures(db, f) == count(f), f
    (failed,) = query(db, "SELECT count(*) FROM import_runs WHERE status = 'failed'")[0]
    assert failed == 0
    for read, imported, quarantined, skipped in query(
        db, "SELECT messages_read, messages_imported, quarantined, skipped FROM import_runs"
    ):
        assert read == imported + quarantined + skipped


def test_re_importing_the_folder_adds_nothing(family: tuple[str, Path], tmp_path: Path) -> None:
    name, db = family
    copy = tmp_path / "w.duckdb"
    shutil.copy(db, copy)
    code, out, err = run_cli("ingest", str(REAL / name), "--db", str(copy), "--json")
    assert code == 0, err
    totals = json.loads(out)["totals"]
    assert (totals["conversations_new"], totals["conversations_updated"], totals["messages_imported"]) == (0, 0, 0)


def test_the_report_runs_on_each_family(family: tuple[str, Path], tmp_path: Path) -> None:
    name, db = family
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path), "--format", "json")
    assert code == 0, f"{name}: {err}"
    assert (tmp_path / "metrics.json").exists()
