"""A folder ingest accounts for every file under it: a source (imported, unchanged or failed, each with its
row in import_runs), a side file its format reads with (or keeps beside) a main file, or not recognised;
a file named like a format's files that auto-detection cannot read is told which --format to try."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, SHARED, query, run_cli

REAL = SHARED / "data" / "agent-logs"
STATUSES = {"imported", "unchanged", "failed", "side", "unrecognised"}


def on_disk(root: Path) -> set[str]:
    """Every regular file under ``root``, counted by os.walk (not by the code under test)."""
    return {os.path.join(d, f) for d, _, names in os.walk(root) for f in names}


def accounted(out: dict) -> dict[str, str]:
    return {row["path"]: row["status"] for row in out["sources"] + out["others"]}


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    if not REAL.is_dir():
        pytest.skip(f"{REAL} not found (set FORENSICS_SHARED)")
    db = tmp_path_factory.mktemp("real") / "w.duckdb"
    _, out, _ = run_cli("ingest", str(REAL), "--db", str(db), "--json")
    _, text, _ = run_cli("ingest", str(REAL), "--db", str(tmp_path_factory.mktemp("text") / "w.duckdb"))
    return db, json.loads(out), text


def test_every_file_of_the_real_logs_is_listed_and_counted(real: tuple[Path, dict, str]) -> None:
    _, out, text = real
    files = on_disk(REAL)
    manifest = set()  # family, owner/repository, commit, path in that repository
    for line in (REAL / "manifest.tsv").read_text().splitlines():
        family, repo, _, rel = line.split("\t")
        manifest.add(str(REAL / family / repo.replace("/", "+") / rel))
    assert len(manifest) == 69 and manifest <= files
    status = accounted(out)
    assert set(status) == files and set(status.values()) <= STATUSES
    assert out["totals"]["files"] == len(files)
    total = text.strip().splitlines()[-1]
    assert f" = {len(files)} files: " in total
    t = out["totals"]
    assert t["sources"] + t["side"] + t["unrecognised"] == len(files)
    sides = {Path(p).name for p, s in status.items() if s == "side"}
    assert {"ui_messages.json", "task_metadata.json", "sessions.json", "shared_conversations.json"} <= sides
    assert status[str(REAL / "manifest.tsv")] == "unrecognised"


def test_every_source_of_the_real_logs_has_its_run_row(real: tuple[Path, dict, str]) -> None:
    db, out, _ = real
    runs = dict(query(db, "SELECT path, status FROM import_runs"))
    assert runs == {s["path"]: s["status"] for s in out["sources"]}


def test_re_importing_the_real_logs_adds_nothing(real: tuple[Path, dict, str], tmp_path: Path) -> None:
    db, first, _ = real
    copy = tmp_path / "w.duckdb"
    shutil.copy(db, copy)
    _, out, _ = run_cli("ingest", str(REAL), "--db", str(copy), "--json")
    t = out and json.loads(out)["totals"]
    assert (t["conversations_new"], t["conversations_updated"], t["messages_imported"]) == (0, 0, 0)
    assert accounted(json.loads(out)).keys() == accounted(first).keys()


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("rollout-2025-01-01T00-00-00-abc.jsonl", "codex"),
        ("run.traj", "swe-agent"),
        (".aider.chat.history.md", "aider"),
        ("state.vscdb", "cursor"),
        ("output.jsonl", "openhands"),
    ],
)
def test_a_file_named_like_a_format_that_detection_cannot_read_is_told_which_format_to_try(
    tmp_path: Path, name: str, fmt: str
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / name).write_text("a log in a layout no format knows\n")
    shutil.copy(FIXTURES / "sessions" / "sess_0974a9ce8167.jsonl", folder)
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(folder), "--db", str(db))
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"forensics: {folder / name}: ") and line.endswith(
        f"; it is named like {fmt} files: try --format {fmt}"
    )
    assert query(db, "SELECT status, note FROM import_runs WHERE path = ?", [str(folder / name)]) == [
        ("failed", line.removeprefix("forensics: "))
    ]


def test_a_file_named_like_a_format_but_read_by_a_catch_all_says_so(tmp_path: Path) -> None:
    odd = tmp_path / "rollout-2025-01-01T00-00-00-abc.jsonl"
    shutil.copy(FIXTURES / "sessions" / "sess_0974a9ce8167.jsonl", odd)
    code, out, _ = run_cli("ingest", str(odd), "--db", str(tmp_path / "w.duckdb"), "--json")
    (s,) = json.loads(out)["sources"]
    assert code == 0 and s["format"] == "jsonl"
    assert s["note"].startswith("named like codex files but read as jsonl; if that is wrong, try --format codex")


def test_a_side_file_named_alone_brings_its_main_file(tmp_path: Path) -> None:
    task = next((FIXTURES / "agents" / "cline").rglob("ui_messages.json")).parent
    code, out, err = run_cli("ingest", str(task / "ui_messages.json"), "--db", str(tmp_path / "w.duckdb"), "--json")
    assert code == 0, err
    out = json.loads(out)
    assert [(Path(s["path"]).name, s["status"]) for s in out["sources"]] == [
        ("api_conversation_history.json", "imported")
    ]
    assert [(Path(s["path"]).name, s["status"]) for s in out["others"]] == [("ui_messages.json", "side")]


def test_a_folder_of_nothing_readable_exits_2_and_lists_its_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a log")
    (tmp_path / "settings.json").write_text('{"theme": "dark"}')
    code, out, _ = run_cli("ingest", str(tmp_path), "--db", str(tmp_path / "w.duckdb"))
    assert code == 2 and not (tmp_path / "w.duckdb").exists()
    assert out.strip().splitlines()[-1].startswith("0 sources (0 failed), 2 not recognised = 2 files: ")
