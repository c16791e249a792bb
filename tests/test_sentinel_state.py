"""The compliance state machine over history, onset and lead, the window sweep and the report section."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from forensics import ingest
from forensics.analyzers.schema import defaults
from forensics.analyzers.sentinel import ComplianceTracker, build_tables, compliance_key, window_sweep
from forensics.analyzers.sentinel.settings import SentinelSettings
from forensics.kernel.errors import ForensicsError
from forensics.warehouse import open_warehouse
from tests.conftest import FIXTURES, run_cli

LINE = "[[SS-CHECK toolsapproved untrusteddata idsfresh batchbulk saveauto]]"
OK = "Done.\n\n" + LINE
MISS = "Done."
MUT = "Done.\n\n[[SS-CHECK toolsapproved untrusteddata batchbulk saveauto]]"


# ------------------------------------------------------------------ the tracker alone
def test_a_model_muted_after_three_misses_never_alarms_again_even_in_a_new_conversation() -> None:
    t = ComplianceTracker(window=3)
    assert [t.observe("m", "c1", p, "missing") for p in (1, 3, 5)] == ["unknown"] * 3
    assert t.models["m"].muted and t.models["m"].muted_at == 2
    assert [t.observe("m", "c2", p, s) for p, s in ((1, "healthy"), (3, "missing"), (5, "mutated"))] == ["muted"] * 3
    assert t.onsets == {} and t.models["m"].healthy_after_mute == 1


def test_a_model_healthy_once_then_missing_degrades() -> None:
    t = ComplianceTracker(window=3)
    assert t.observe("m", "c1", 1, "missing") == "unknown"
    assert t.observe("m", "c1", 3, "healthy") == "healthy"
    assert t.observe("m", "c1", 5, "missing") == "alarm"
    assert t.onsets == {"c1": 5}
    assert t.models["m"].known_compliant and not t.models["m"].muted


def test_degraded_latches_until_the_next_conversation() -> None:
    t = ComplianceTracker(window=3)
    t.observe("m", "c1", 1, "healthy")
    assert [t.observe("m", "c1", p, s) for p, s in ((3, "mutated"), (5, "healthy"), (7, "missing"))] == [
        "alarm",
        "healthy",
        "degraded",
    ]
    assert t.onsets == {"c1": 3}  # the first miss is the onset; later ones do not move it
    assert [t.observe("m", "c2", p, s) for p, s in ((1, "healthy"), (3, "healthy"))] == ["healthy", "healthy"]
    assert "c2" not in t.onsets
    assert t.observe("m", "c2", 5, "missing") == "alarm"
    assert t.onsets == {"c1": 3, "c2": 5}


def test_models_are_tracked_apart_and_the_window_is_configurable() -> None:
    t = ComplianceTracker(window=1)
    assert t.observe("a", "c1", 1, "missing") == "unknown"
    assert t.observe("a", "c1", 3, "healthy") == "muted"
    assert t.observe("b", "c2", 1, "healthy") == "healthy"
    assert t.observe("b", "c2", 3, "missing") == "alarm"
    with pytest.raises(ForensicsError, match="compliance_window must be at least 1"):
        ComplianceTracker(window=0)


@pytest.mark.parametrize(
    ("provider", "model", "key"),
    [
        ("openrouter", "anthropic/claude", "openrouter_anthropic_claude"),
        ("local", "models\\qwen", "local_models_qwen"),
        ("anthropic", "claude-sonnet", "anthropic_claude-sonnet"),
        (None, "glm-5.2", "unknown_glm-5.2"),
    ],
)
def test_compliance_key_sanitisation(provider: str | None, model: str, key: str) -> None:
    assert compliance_key(provider, model) == key


# ------------------------------------------------------------------ a crafted history, through the warehouse
def _u(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _a(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    }


def _result(cid: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": text, **extra}


A = [
    _u("fix the parser"),
    _a(OK),
    _u("now the CRC"),
    _call("c1", "read_file", {"path": "crc.rs"}),
    _result("c1", "fn crc() {}"),
    _a(MISS),
    _u("继续"),
    _a(OK),
    _u("不对，你忘了 CRC"),
    _a(MUT),
]
B = [
    _u("hello"),
    _a(OK),
    _u("wrong file, I said parser.rs"),
    _a(MISS),
    _u("run the tests"),
    _call("c2", "run_command", {"command": "cargo test"}),
    _result("c2", "$ cargo test\ntest result: ok\n[exit code: 101]"),
    _a(OK),
]
G1 = [_u("start"), _a(OK)]
G2 = [
    _u("next"),
    _a(MISS),
    _u("read it"),
    _call("c3", "read_file", {"path": "x"}),
    _result("c3", "fine", is_error=True),
    _a(MISS),
]
C = [_u("a"), _a(MISS), _u("b"), _a(MISS), _u("c"), _a(MISS)]
D = [_u("d"), _a(MISS), _u("e"), _a(OK), _u("f"), _a(MISS)]
TINY = [_u("x"), _a(MISS), _u("y"), _a(MISS)]
# (id, provider, model, created_at, messages), in table order: G2 is stored first but happened last
HISTORY = [
    ("G2", "zhipu", "glm-5.2", "2026-06-01T05:00:00Z", G2),
    ("C", "openai", "gpt-mini", "2026-06-01T00:00:00Z", C),
    ("A", "openrouter", "anthropic/claude", "2026-06-01T01:00:00Z", A),
    ("G1", "zhipu", "glm-5.2", "2026-06-01T02:00:00Z", G1),
    ("TINY", "local", "tiny", "2026-06-01T02:30:00Z", TINY),
    ("B", "openrouter", "anthropic/claude", "2026-06-01T03:00:00Z", B),
    ("D", "openai", "gpt-mini", "2026-06-01T04:00:00Z", D),
]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("history")
    src = sqlite3.connect(d / "app.db")
    src.execute(
        "CREATE TABLE ai_conversations (id TEXT PRIMARY KEY, title TEXT, model TEXT, provider TEXT, "
        "messages TEXT, created_at TEXT, updated_at TEXT)"
    )
    src.executemany(
        "INSERT INTO ai_conversations VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(i, i, m, p, json.dumps(msgs, ensure_ascii=False), t, t) for i, p, m, t, msgs in HISTORY],
    )
    src.commit()
    src.close()
    ingest([d / "app.db"], db=d / "w.duckdb")
    with open_warehouse(d / "w.duckdb") as wh:
        build_tables(wh.con, defaults())
    return d / "w.duckdb"


def _rows(db: Path, sql: str) -> list[dict[str, Any]]:
    with open_warehouse(db, read_only=True) as wh:
        cur = wh.con.execute(sql)
        names = [c[0] for c in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def test_only_final_replies_are_judged_with_outcomes_in_time_order(history: Path) -> None:
    rows = _rows(
        history,
        "SELECT native_id, position, compliance_key, model_ordinal, status, outcome, degraded "
        "FROM sentinel_replies WHERE native_id IN ('A', 'G2') ORDER BY native_id, position",
    )
    assert [(r["native_id"], r["position"], r["status"], r["outcome"], r["degraded"]) for r in rows] == [
        ("A", 1, "healthy", "healthy", False),
        ("A", 5, "missing", "alarm", True),
        ("A", 7, "healthy", "healthy", True),
        ("A", 9, "mutated", "degraded", True),
        # G2 is stored first but created last: glm-5.2 is already known compliant from G1
        ("G2", 1, "missing", "alarm", True),
        ("G2", 5, "missing", "degraded", True),
    ]
    assert {r["compliance_key"] for r in rows} == {"openrouter_anthropic_claude", "zhipu_glm-5.2"}
    assert [r["model_ordinal"] for r in rows if r["native_id"] == "G2"] == [1, 2]


def test_onset_context_and_lead_over_visible_failure(history: Path) -> None:
    rows = {r["native_id"]: r for r in _rows(history, "SELECT * FROM sentinel_conversations")}
    a = rows["A"]
    before = sum(len(m["content"]) for m in A[:5]) + len(A[3]["tool_calls"][0]["function"]["arguments"])
    assert (a["onset_position"], a["onset_turn"], a["onset_context_chars"], a["onset_context_tokens"]) == (
        5,
        2,
        before,
        before // 4,
    )
    assert (a["failure_position"], a["failure_kind"], a["failure_turn"], a["lead_turns"], a["lead_messages"]) == (
        6,
        "continue_nag",
        3,
        1,
        1,
    )
    assert (a["failures_before"], a["failures_after"], a["sentinel_first"]) == (0, 2, True)
    b = rows["B"]  # a correction came before the onset; the failing test run (exit code text) after it
    assert (b["onset_position"], b["failure_before_position"], b["failure_before_kind"], b["sentinel_first"]) == (
        3,
        2,
        "correction",
        False,
    )
    assert (b["failure_position"], b["failure_kind"], b["failure_detail"], b["lead_turns"]) == (
        6,
        "tool_error",
        "run_command",
        1,
    )
    g2 = rows["G2"]  # the error flag alone marks a tool error
    assert (g2["onset_position"], g2["failure_position"], g2["failure_kind"], g2["lead_turns"]) == (
        1,
        4,
        "tool_error",
        1,
    )
    assert {n for n, r in rows.items() if r["degraded"]} == {"A", "B", "G2"}
    assert all(rows[n]["onset_position"] is None and rows[n]["lead_turns"] is None for n in ("C", "D", "G1", "TINY"))


def test_models_table_knows_who_complies_and_who_is_muted_since_when(history: Path) -> None:
    rows = {r["compliance_key"]: r for r in _rows(history, "SELECT * FROM sentinel_models")}
    mini = rows["openai_gpt-mini"]
    assert (mini["muted"], mini["muted_native_id"], mini["muted_position"], str(mini["muted_since"])) == (
        True,
        "C",
        5,
        "2026-06-01 00:00:00",
    )
    assert (mini["judged"], mini["healthy"], mini["healthy_after_mute"], mini["false_mute"]) == (6, 1, 1, True)
    claude = rows["openrouter_anthropic_claude"]
    assert (claude["known_compliant"], claude["muted"], claude["degraded_conversations"]) == (True, False, 2)
    assert (claude["healthy"], claude["mutated"], claude["missing"]) == (4, 1, 2)
    assert claude["drifted_ranked"] == "idsfresh 1"
    assert rows["local_tiny"]["muted"] is False  # two replies: the window is not spent yet


def test_window_sweep_over_the_history(history: Path) -> None:
    with open_warehouse(history) as wh:
        sweep = window_sweep(wh.con, defaults())
    assert sweep.rows() == [
        # window, muted_models, false_mutes, noise_models, noise_replies, degraded_conversations
        (1, 2, 1, 0, 1, 3),
        (2, 2, 1, 0, 2, 3),
        (3, 1, 1, 1, 2, 3),
        (4, 1, 1, 1, 2, 3),
        *[(w, 0, 0, 1, 2, 4) for w in range(5, 11)],
    ]


def test_the_sweep_agrees_with_a_replay_at_each_window(history: Path) -> None:
    with open_warehouse(history) as wh:
        sweep = {r[0]: r for r in window_sweep(wh.con, defaults(), rebuild=False).rows()}
        for w in (1, 3, 5):
            tracker = build_tables(
                wh.con, defaults().with_settings(replace(SentinelSettings.of(defaults()), compliance_window=w))
            )
            assert sum(m.muted for m in tracker.models.values()) == sweep[w][1]
            assert len(tracker.onsets) == sweep[w][5]
        build_tables(wh.con, defaults())


def test_named_queries_read_the_sentinel_tables(history: Path) -> None:
    code, out, err = run_cli("query", "sentinel_conversations", "--db", str(history), "--format", "csv")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("conversation_id,native_id,compliance_key,turns,judged,onset_position")
    assert [line.split(",")[1] for line in lines[1:]] == ["A", "B", "G2"]
    code, out, _ = run_cli("query", "sentinel_models", "--db", str(history), "--format", "csv")
    assert [line.split(",")[0] for line in out.splitlines()[1:]] == [
        "openrouter_anthropic_claude",
        "openai_gpt-mini",
        "zhipu_glm-5.2",
        "local_tiny",
    ]


# ------------------------------------------------------------------ the report section
def test_report_section_and_metrics_on_the_realistic_fixture(tmp_path: Path) -> None:
    ingest([FIXTURES / "sqlite" / "realistic.db"], db=tmp_path / "w.duckdb")
    code, _, err = run_cli(
        "report", "--db", str(tmp_path / "w.duckdb"), "--out", str(tmp_path / "r"), "--only", "sentinel"
    )
    assert code == 0, err
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["sentinel"]
    assert (m["judged_replies"], m["status_counts"]) == (197, {"healthy": 97, "mutated": 16, "missing": 84})
    assert m["outcome_counts"] == {"healthy": 97, "unknown": 3, "alarm": 4, "degraded": 29, "muted": 64}
    assert (m["degraded_conversations"], m["conversations_compliant"], m["degraded_share"]) == (4, 8, 0.5)
    assert m["models"]["openai_gpt-mini"]["muted"] and m["models"]["openai_gpt-mini"]["muted_at"]["position"] == 20
    assert list(m["models"]["anthropic_claude-sonnet"]["drifted"].items()) == [  # ranked, ties by name
        ("idsfresh", 4),
        ("(truncated)", 3),
        ("batchbulk", 2),
        ("saveauto", 2),
        ("untrusteddata", 2),
        ("(format)", 1),
        ("toolsapproved", 1),
    ]
    assert {v["native_id"]: v["onset_position"] for v in m["degraded"].values()} == {
        "2e4215f0": 34,
        "2894055c": 134,
        "a9ce8167": 8,
        "ab75b91d": 14,
    }
    assert m["lead"]["degraded"] == 4 and m["lead"]["median_lead_turns_all"] == 1.0
    assert [r["window"] for r in m["window_sweep"]] == list(range(1, 11))
    md = (tmp_path / "r" / "report.md").read_text()
    assert "197 final replies judged" in md and "muted since 2026-06-01 (2cd71dda [20])" in md
    assert (tmp_path / "r" / "charts" / "sentinel_status_over_turns.svg").stat().st_size > 0
    assert (tmp_path / "r" / "charts" / "sentinel_onset_by_context.svg").stat().st_size > 0


def test_report_counts_follow_the_selection_but_states_come_from_history(history: Path, tmp_path: Path) -> None:
    code, _, err = run_cli(
        "report",
        "--db",
        str(history),
        "--out",
        str(tmp_path / "r"),
        "--only",
        "sentinel",
        "--conversation",
        "D",
        "--format",
        "json",
    )
    assert code == 0, err
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["sentinel"]
    assert list(m["models"]) == ["openai_gpt-mini"]
    mini = m["models"]["openai_gpt-mini"]
    assert (mini["judged"], mini["healthy"], mini["muted"], mini["muted_at"]["native_id"]) == (3, 1, True, "C")
    assert m["degraded_conversations"] == 0 and m["outcome_counts"]["muted"] == 3


def test_a_selection_without_judged_replies_says_so(history: Path, tmp_path: Path) -> None:
    code, _, err = run_cli(
        "report", "--db", str(history), "--out", str(tmp_path / "r"), "--only", "sentinel", "--model", "no-such-model"
    )
    assert code == 0, err
    doc = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert doc["sections"]["sentinel"] == {}  # nothing for `check` to gate
    assert doc["not_in_use"] == {"sentinel": "no conversation of the selection asks for the sentinel"}
    assert (
        "Not in use: no conversation of the selection asks for the sentinel."
        in (tmp_path / "r" / "report.md").read_text()
    )
    assert not (tmp_path / "r" / "charts").exists() or not list((tmp_path / "r" / "charts").glob("sentinel_*"))


def test_sentinel_can_be_switched_off(history: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "harness.toml"
    cfg.write_text("[sentinel]\nenabled = false\n")
    code, _, err = run_cli(
        "report",
        "--db",
        str(history),
        "--out",
        str(tmp_path / "r"),
        "--only",
        "sentinel",
        "--config",
        str(cfg),
        "--format",
        "json",
    )
    assert code == 0, err
    assert json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["sentinel"] == {"enabled": False}
