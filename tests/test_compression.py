"""Tool-result compression (docs/definitions.md#tool-result-compression-replay): the seed's unit cases, the SQL replay against the Python functions, and a
replay small enough to check by hand, cut from the seed fixture."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import duckdb
import pytest

from forensics.analyzers import named_query
from forensics.analyzers.compression import replay, sweep
from forensics.text.compress import MAX_KEY_LINES, MAX_LINE_CHARS, extract_key_info, omission_marker, should_summarize
from tests.conftest import FIXTURES, run_cli


@pytest.mark.parametrize(("size", "want"), [(1999, False), (2000, False), (2001, True), (10001, True)])
def test_should_summarize_the_2000_byte_boundary(size: int, want: bool) -> None:
    assert should_summarize(size, 10**9) is want  # a huge context: only the byte rule can fire


@pytest.mark.parametrize(
    ("size", "context", "want"),
    [(800, 2000, False), (801, 2000, True), (500, 0, False), (1, 1, True), (400, 1000, False)],
)
def test_should_summarize_the_40_percent_share_rule(size: int, context: int, want: bool) -> None:
    assert should_summarize(size, context) is want


def test_extract_key_info_keeps_errors_head_and_tail_with_markers() -> None:
    lines = [f"line {i}" for i in range(30)]
    lines[12], lines[20] = "Error: boom", "thread panicked (PANIC)"
    lines[15] = "写入失败"
    out = extract_key_info("\n".join(lines), 5).split("\n")
    assert out == [
        "line 0",
        "line 1",
        "line 2",
        "line 3",
        "line 4",
        omission_marker(7),
        "Error: boom",
        omission_marker(2),
        "写入失败",
        omission_marker(4),
        "thread panicked (PANIC)",
        omission_marker(4),
        "line 25",
        "line 26",
        "line 27",
        "line 28",
        "line 29",
    ]


@pytest.mark.parametrize("text", ["", "one line", "\n".join(f"l{i}" for i in range(10)), "a\nb\n"])
def test_empty_or_short_input_comes_back_unchanged(text: str) -> None:
    assert extract_key_info(text, 5) is text


def test_all_error_lines_stay_bounded() -> None:
    text = "\n".join(f"error {i}: " + "x" * 2000 for i in range(5000))  # 10 MB, every line an error
    out = extract_key_info(text, 5).split("\n")
    assert len(out) == 5 + MAX_KEY_LINES + 1 + 5  # head, 20 key lines, one marker, tail
    assert out[5 + MAX_KEY_LINES] == omission_marker(5000 - 10 - MAX_KEY_LINES)
    assert max(len(x) for x in out) == MAX_LINE_CHARS + 1  # cut lines end in "…"


def test_the_sql_replay_matches_the_python_functions_on_every_seed_result(seed_wh: Path) -> None:
    con = duckdb.connect(str(seed_wh), read_only=True)
    contents = dict(
        ((c, p), x)
        for c, p, x in con.execute(
            "SELECT conversation_id, position, content FROM messages WHERE role = 'tool' AND on_main_path"
        ).fetchall()
    )
    for ht, b, s in ((5, 2000, 0.4), (0, 500, 0.1), (2, 0, 0.0)):
        for k, v in (("head_tail_lines", ht), ("summarize_bytes", b), ("summarize_share", s)):
            con.execute(f"SET VARIABLE tool_result_{k} = ?", [v])
        rows = con.execute(named_query("compression_replay").sql).fetchall()
        assert len(rows) == 314
        for r in rows:
            text = contents[(r[1], r[2])]
            summarized = should_summarize(len(text.encode()), r[5], b, s)
            out = extract_key_info(text, ht) if summarized else text
            assert (r[7], r[9], r[10]) == (summarized, len(out.encode()), len(out)), r[:3]


@pytest.fixture(scope="module")
def tiny_wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """d6614e0b's messages [140]..[153] (the topic-interleave turn) as a conversation of their own."""
    tmp = tmp_path_factory.mktemp("tiny")
    src = sqlite3.connect(f"file:{FIXTURES / 'seed' / 'seed.db'}?mode=ro", uri=True)
    (blob,) = src.execute("SELECT messages FROM ai_conversations WHERE id = 'd6614e0b'").fetchone()
    src.close()
    out = sqlite3.connect(tmp / "tiny.db")
    out.execute(
        "CREATE TABLE ai_conversations (id TEXT PRIMARY KEY, title TEXT, model TEXT, provider TEXT, "
        "messages TEXT, created_at TEXT, updated_at TEXT)"
    )
    out.execute(
        "INSERT INTO ai_conversations VALUES ('tiny', 't', 'glm-5.2', 'zhipu', ?, '2026-06-01T00:00:00Z', "
        "'2026-06-01T00:00:00Z')",
        [json.dumps(json.loads(blob)[140:154], ensure_ascii=False)],
    )
    out.commit()
    out.close()
    code, _, err = run_cli("ingest", str(tmp / "tiny.db"), "--db", str(tmp / "w.duckdb"))
    assert code == 0, err
    return tmp / "w.duckdb"


def test_replay_by_hand_on_a_real_turn(tiny_wh: Path) -> None:
    """Positions 0..13 = seed [140]..[153]. Tool results (bytes / chars, context bytes before, after summary):
    [2] 4640/4432 ctx 36 → 1851/1757   [4] 2852/2762 ctx 4676 → 1713/1653   [6] 1658/1606 ctx 7528 kept
    [8] 6230/6056 ctx 9186 → 2571/2439  [10] 142/142 kept                    [12] 4132/3864 ctx 15607 → 2056/1984
    All messages: 20024 chars; assistant 27 + 1123 = 1150 chars."""
    con = duckdb.connect(str(tiny_wh))
    r = replay(con, 2000, 0.40, 5)
    assert (r["results"], r["summarized"]) == (6, 4)
    assert (r["tool_bytes_before"], r["tool_bytes_after"]) == (19654, 9991)
    assert r["tool_share_before"] == 18862 / 20024
    assert r["tool_share_after"] == 9581 / (20024 - 18862 + 9581)
    assert r["asst_tool_ratio_before"] == 1150 / 18862 and r["asst_tool_ratio_after"] == 1150 / 9581
    # at 5000 bytes only the share rule catches [2] (4640 > 0.4·36) and [4] (2852 > 0.4·4676); [8] is over 5000
    r5 = replay(con, 5000, 0.40, 5)
    assert (r5["summarized"], r5["tool_bytes_after"]) == (3, 1851 + 1713 + 1658 + 2571 + 142 + 4132)
    grid = sweep(con, [2000, 5000], [0.4])
    assert grid["summarized"].to_list() == [4, 3]
    assert grid["tool_bytes_after"].to_list() == [9991, r5["tool_bytes_after"]]


def test_report_section_and_results_table(seed_wh: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copy(seed_wh, db)
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--only", "compression")
    assert code == 0, err
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["compression"]
    assert (m["results"], m["summarize_bytes"], m["summarize_share"]) == (314, 2000, 0.4)
    assert len(m["sweep"]) == 5 * 4
    con = duckdb.connect(str(db), read_only=True)
    # the seed's exact-size results: 2001 bytes is always summarized, 2000 only when the share rule fires
    assert (
        con.execute("SELECT count(*) FROM compression_results WHERE result_bytes = 2001 AND NOT summarized").fetchall()[
            0
        ][0]
        == 0
    )
    assert (
        con.execute(
            "SELECT count(*) FROM compression_results WHERE result_bytes = 2000 AND summarized "
            "AND result_bytes <= 0.4 * context_bytes"
        ).fetchall()[0][0]
        == 0
    )
