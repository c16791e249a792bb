"""Tables fit a 120-column terminal (issue 47 item 5): the ingest summary, `forensics usage` (by agent and model, by
project and branch, by day), `secrets`, `formats` and `show` print no line over 120 characters on the shared agent logs, long values keep their
start and end around "…", and the figures are never cut."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.kernel.columns import aligned, middle
from tests.conftest import SHARED

LOGS = SHARED / "data" / "agent-logs"


def cli(*args: str) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "forensics", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "true", "COLUMNS": "120"},
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not LOGS.exists():
        pytest.skip("shared agent logs not present")
    out = tmp_path_factory.mktemp("w") / "w.duckdb"
    lines = cli(
        "ingest",
        str(LOGS / "claude_code"),
        str(LOGS / "codex_cli"),
        str(LOGS / "aider"),
        str(LOGS / "inspect_ai"),
        "--db",
        str(out),
    ).splitlines()
    # the ingest summary: rows and notes within 120 (the totals line stays one greppable line), paths relative
    assert f"(sources under {LOGS}/)" in lines and lines[0].startswith("source ")
    assert max(map(len, lines[:-1])) <= 120, max(lines[:-1], key=len)
    assert not any(str(LOGS) in ln for ln in lines[1:-1] if not ln.startswith("(sources under"))
    return out


@pytest.mark.parametrize(
    "args", [["usage"], ["usage", "--by", "project,branch"], ["usage", "--by", "day"], ["secrets"]]
)
def test_usage_tables_fit_120_columns(db: Path, args: list[str]) -> None:
    text = cli(*args, "--db", str(db))
    lines = text.splitlines()
    assert len(lines) > (0 if args == ["secrets"] else 3)
    assert max(map(len, lines)) <= 120, max(lines, key=len)
    if args[0] == "usage":
        assert lines[0].split()[-5:] == ["USD", "tool", "errors", "compact.", "success"]


def test_usage_keeps_figures_and_elides_keys_in_the_middle(db: Path) -> None:
    lines = cli("usage", "--by", "project,branch", "--db", str(db)).splitlines()
    assert any("…" in ln.split("  ")[0] for ln in lines[1:])  # the shared logs' long working folders
    wide = cli("usage", "--by", "project,branch", "--db", str(db), "--format", "json")
    assert '"input"' in wide  # json keeps the whole values


def test_formats_and_show_fit_120_columns(db: Path) -> None:
    lines = cli("formats").splitlines()
    assert max(map(len, lines)) <= 120
    assert any(ln.startswith(" " * 27) for ln in lines)  # a long description wraps under itself
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        cid = con.execute(
            "SELECT conversation_id FROM messages GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
        ).fetchone()
    assert cid is not None
    lines = cli("show", cid[0], "--db", str(db), "--positions", "0-30").splitlines()
    assert len(lines) > 5 and max(map(len, lines)) <= 120, max(lines, key=len)


def test_middle_and_aligned_edges() -> None:
    assert middle("abcdefghij", 10) == "abcdefghij"
    assert middle("/home/me/src/project/file.jsonl", 12) == "/home…jsonl"[:5] + "…" + "e.jsonl"[-6:]
    assert len(middle("x" * 300, 7)) == 7 and middle("abc", 0) == ""
    rows = [["key", "n"], ["a" * 50, "123456"], ["b", "7"]]
    out = aligned(rows, width=20, elide=[0]).splitlines()
    assert max(map(len, out)) <= 20 and out[1].endswith("123456")  # the figure whole, the key cut
    assert aligned(rows, width=200, elide=[0]).splitlines()[1].startswith("a" * 50)  # room: nothing cut


def test_ingest_of_relative_paths_with_a_wide_status_fits_120_columns(tmp_path: Path) -> None:
    """fixtures/outcomes given as a relative path: a file not recognised widens the status column, and the source
    (relative to the common folder, its middle elided) gives way so no row passes 120 (it was 121)."""
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run(
        [sys.executable, "-m", "forensics", "ingest", "fixtures/outcomes", "--db", str(tmp_path / "o.duckdb")],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "CI": "true", "COLUMNS": "120", "PYTHONPATH": str(root)},
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "(sources under fixtures/outcomes/)" in lines
    assert any(ln.startswith("README.md ") and "not recognised" in ln for ln in lines)
    assert max(map(len, lines[:-1])) <= 120, max(lines[:-1], key=len)
    assert not any(ln.startswith("fixtures/") for ln in lines[1:-1])
    assert lines[0].split()[3:6] == ["conv.", "new/upd/same", "msgs"]  # two long headers gave way to the source
    assert any(ln.startswith("agentbench/") for ln in lines)  # its folder kept: 20 characters of source, not 16


def test_check_table_fits_120_columns_and_keeps_every_figure(db: Path) -> None:
    """`forensics check`: the metric's name loses its middle (74 characters for a model's tool error rate), never
    a figure or the verdict."""
    base = db.parent / "baseline.json"
    cli("report", "--db", str(db), "--out", str(db.parent / "r"), "--format", "json", "--write-baseline", str(base))
    out = cli("check", "--db", str(db), "--baseline", str(base)).splitlines()
    table = [ln for ln in out if ln.endswith((" ok", " better", " REGRESSED", " verdict"))]
    assert len(table) > 50 and max(map(len, table)) <= 120, max(table, key=len)
    assert any("…" in ln.split()[0] for ln in table)
    verdicts = {ln.split()[-1] for ln in table}
    assert "verdict" in verdicts and not verdicts & {"REGRESSED"}, verdicts  # the same warehouse: nothing moved
