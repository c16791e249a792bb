"""The baseline report reproduces the seed's table to the digit, and counts boundaries exactly."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import duckdb
import pytest

from forensics import ingest
from forensics.api import baseline, report
from tests.conftest import FIXTURES, query, run_cli

EXPECTED = json.loads((FIXTURES / "seed" / "seed.db.expected.json").read_text())


@pytest.fixture(scope="module")
def seed_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("seed")
    ingest([FIXTURES / "seed" / "seed.db"], db=out / "w.duckdb")
    code, stdout, err = run_cli("report", "--db", str(out / "w.duckdb"), "--out", str(out / "r"), "--only", "baseline")
    assert code == 0, err
    assert stdout.split() == [str(out / "r" / f) for f in ("metrics.json", "report.md", "report.html")]
    return out / "r"


def test_every_per_conversation_figure_matches_the_seed(seed_report: Path) -> None:
    metrics = json.loads((seed_report / "metrics.json").read_text())["sections"]["baseline"]
    got = {v["native_id"]: v for v in metrics["conversations"].values()}
    assert set(got) == set(EXPECTED["conversations"])
    for cid, want in EXPECTED["conversations"].items():
        for key, value in want.items():
            have = got[cid][key]
            assert (round(have, 2) if isinstance(value, float) else have) == value, (cid, key)


def test_means_row_matches_published_and_exact_means(seed_report: Path) -> None:
    means = json.loads((seed_report / "metrics.json").read_text())["sections"]["baseline"]["means"]
    for key, value in EXPECTED["means_exact"].items():
        assert round(means[key], 4) == value, key
    md = (seed_report / "report.md").read_text()
    rows = {
        line.split(" | ")[0].lstrip("| "): line.rstrip(" |").split(" | ")[-1]
        for line in md.splitlines()
        if line.startswith("| ") and " | " in line
    }
    pub = EXPECTED["means"]
    assert rows["messages"] == str(pub["messages"])
    assert rows["user / assistant / tool"] == f"{pub['user']} / {pub['assistant']} / {pub['tool']}"
    assert rows["tool_calls"] == str(pub["tool_calls"])
    assert rows["parallel_turns (≥3 calls)"] == str(pub["parallel_turns"])
    assert rows["tool_results_gt_2kb"] == str(pub["tool_results_gt_2kb"])
    assert rows["tool_results_gt_10kb"] == str(pub["tool_results_gt_10kb"])
    assert rows["empty_assistant (tool echo)"] == f"{round(pub['empty_assistant_share'] * 100)}%"
    assert rows["continue_nags"] == str(pub["continue_nags"])
    assert rows["short_user (≤12 chars)"] == f"{round(pub['short_user_share'] * 100)}%"
    assert rows["asst_tool_ratio (chars)"] == f"{pub['asst_tool_ratio']:.2f}"


def test_seed_layout_has_a_column_per_conversation(seed_report: Path) -> None:
    md = (seed_report / "report.md").read_text()
    assert "| metric | f89d129a | a95f5d6d | d6614e0b | mean |" in md
    assert "| empty_assistant (tool echo) | 69/111 (62%) | 32/88 (36%) | 41/96 (43%) | 47% |" in md
    assert "| short_user (≤12 chars) | 14/22 | 7/22 | 13/22 | 52% |" in md


def _boundary_db(path: Path) -> None:
    """One conversation whose every message sits on a boundary of docs/definitions.md#baseline-metrics."""

    def call(i: int) -> dict:
        return {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}

    sizes = [2000, 2001, 10000, 10001]
    msgs: list[dict] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": " 继续\n"},
        {"role": "assistant", "content": " \n", "tool_calls": [call(i) for i in range(4)]},
    ]
    msgs += [
        {"role": "tool", "tool_call_id": f"c{i}", "content": "é" * (n // 2) + "x" * (n % 2)}
        for i, n in enumerate(sizes)
    ]
    msgs += [
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "一二三四五六七八九十一二"},  # 12 characters: short
        {"role": "user", "content": "一二三四五六七八九十一二三"},  # 13: not short
        {"role": "user", "content": "😀😀😀😀😀😀😀😀😀😀😀😀"},  # 12 emoji: short
        {"role": "user", "content": "continue please"},  # not exactly a continue word
        {"role": "user", "content": "\u3000go on\u3000"},  # ideographic spaces strip
        {"role": "user", "content": " " * 500 + "继续" + "\n" * 500},  # long only in its padding: a nag
        {"role": "user", "content": "继" * 65},
    ]  # 65 characters: kept as no trimmed text
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE ai_conversations (id TEXT, messages TEXT)")
    con.execute("INSERT INTO ai_conversations VALUES ('edge', ?)", (json.dumps(msgs, ensure_ascii=False),))
    con.commit()
    con.close()


def test_boundaries_are_exact(tmp_path: Path) -> None:
    _boundary_db(tmp_path / "edge.db")
    ingest([tmp_path / "edge.db"], db=tmp_path / "w.duckdb")
    row = baseline(tmp_path / "w.duckdb").row(0, named=True)
    assert (row["tool_results_gt_2kb"], row["tool_results_gt_10kb"]) == (3, 1)  # 2001, 10000, 10001 / 10001
    assert row["continue_nags"] == 3
    assert (
        row["short_user"] == 5
    )  # " 继续\n", 12 CJK, 12 emoji, "　go on　", padded 继续 (13 and "continue please" not)
    assert (row["messages"], row["user"], row["assistant"], row["tool"]) == (14, 8, 2, 4)
    assert row["empty_assistant"] == 1 and row["parallel_turns"] == 1 and row["tool_calls"] == 4


def test_selection_filters_by_native_id_and_model(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db", FIXTURES / "sqlite" / "realistic.db"], db=db)
    from forensics.kernel.selection import Selection

    assert baseline(db, Selection(conversations=("f89d129a",)))["native_id"].to_list() == ["f89d129a"]
    models = set(baseline(db, Selection(models=("gpt-mini",)))["model"].to_list())
    assert models == {"gpt-mini"}
    assert baseline(db, Selection(sources=("seed.db",))).height == 3
    assert baseline(db, Selection(sources=("seed.db",), since="2026-06-04", until="2026-06-07"))[
        "native_id"
    ].to_list() == ["a95f5d6d"]


def test_split_at_compares_before_and_after_with_deltas(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    result, written = report(db, tmp_path / "cmp", only="baseline", split_at="2026-06-05")
    doc = json.loads((tmp_path / "cmp" / "metrics.json").read_text())
    assert doc["comparison"] is True
    assert doc["before"]["conversations"] == 2 and doc["after"]["conversations"] == 1
    d = doc["delta"]["baseline.means.messages"]
    assert (d["before"], d["after"], d["delta"]) == (232.0, 211.0, -21.0)  # (251+213)/2 -> 211
    md = (tmp_path / "cmp" / "report.md").read_text()
    assert "| baseline.means.messages | 232 | 211 | -21 |" in md
    assert (tmp_path / "cmp" / "charts" / "before_after.svg").stat().st_size > 1000


def test_compare_with_other_warehouse(tmp_path: Path) -> None:
    ingest([FIXTURES / "seed" / "seed.db"], db=tmp_path / "before.duckdb")
    ingest([FIXTURES / "sqlite" / "realistic.db"], db=tmp_path / "after.duckdb")
    code, _, err = run_cli(
        "report",
        "--db",
        str(tmp_path / "after.duckdb"),
        "--compare",
        str(tmp_path / "before.duckdb"),
        "--only",
        "baseline",
        "--out",
        str(tmp_path / "r"),
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert (doc["before"]["conversations"], doc["after"]["conversations"]) == (3, 12)


def test_report_usage_errors_are_one_line(tmp_path: Path) -> None:
    code, out, err = run_cli("report", "--db", str(tmp_path / "none.duckdb"), "--out", str(tmp_path / "r"))
    assert code == 2 and out == "" and "no warehouse here" in err and err.count("\n") == 1
    assert not (tmp_path / "none.duckdb").exists()
    ingest([FIXTURES / "seed" / "seed.db"], db=tmp_path / "w.duckdb")
    code, _, err = run_cli("report", "--db", str(tmp_path / "w.duckdb"), "--only", "nope")
    assert code == 2 and "unknown analyzer 'nope'" in err
    code, _, err = run_cli("report", "--db", str(tmp_path / "w.duckdb"), "--format", "pdf")
    assert code == 2 and "unknown --format" in err
    code, _, err = run_cli(
        "report",
        "--db",
        str(tmp_path / "w.duckdb"),
        "--split-at",
        "2026-06-05",
        "--compare",
        str(tmp_path / "w.duckdb"),
    )
    assert code == 2 and "exactly one of" in err


def test_before_and_after_selections(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    code, _, err = run_cli(
        "report",
        "--db",
        str(db),
        "--only",
        "baseline",
        "--out",
        str(tmp_path / "r"),
        "--format",
        "json",
        "--before",
        "conversation=f89d129a",
        "--after",
        "conversation=a95f5d6d conversation=d6614e0b",
    )
    assert code == 0, err
    d = json.loads((tmp_path / "r" / "metrics.json").read_text())["delta"]["baseline.means.empty_assistant_share"]
    assert d["before"] == pytest.approx(69 / 111) and d["after"] == pytest.approx((32 / 88 + 41 / 96) / 2)
    code, _, err = run_cli("report", "--db", str(db), "--before", "colour=blue", "--after", "model=x")
    assert code == 2 and "bad selection 'colour=blue'" in err


def test_an_older_warehouse_gets_the_import_time_text_columns_filled_by_its_migration(tmp_path: Path) -> None:
    """m004 on a file written before it: the values equal what an import computes today."""
    _boundary_db(tmp_path / "edge.db")
    db = tmp_path / "w.duckdb"
    ingest([tmp_path / "edge.db"], db=db)
    cols = "blank, trimmed_chars, trimmed_text"
    con = duckdb.connect(str(db))
    fresh = con.execute(f"SELECT seq, {cols} FROM messages ORDER BY seq").fetchall()
    for c in cols.split(", "):
        con.execute(f"ALTER TABLE messages DROP COLUMN {c}")
    con.execute("DELETE FROM schema_migrations WHERE name = 'm004_trimmed_text'")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.close()
    row = baseline(db).row(0, named=True)  # opening the file migrates it
    assert query(db, f"SELECT seq, {cols} FROM messages ORDER BY seq") == fresh
    assert (row["continue_nags"], row["short_user"], row["empty_assistant"]) == (3, 5, 1)
    assert fresh[1][1:] == (False, 2, "继续") and fresh[-1][1:] == (False, 65, None)
