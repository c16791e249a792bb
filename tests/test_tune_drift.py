"""The [drift] detector thresholds are fitted on one kind of agent or not at all (issue 24: norms per agent,
``forensics.analyzers.drift.fit``): a warehouse of several kinds gets no recommendation and one line why, a kind with too
few conversations keeps the documented defaults, and a count never drops to one event."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from forensics import ingest
from forensics.api import report
from tests.conftest import FIXTURES, SHARED, run_cli

REAL = SHARED / "data" / "agent-logs"
AGENTS = ("claude_code", "codex_cli", "aider")  # issue 24's folder of Claude Code, Codex and aider logs
MIXED = (
    "5 kinds of agent here (aider 48, codex 6, claude-code sub-agent 5, claude-code 3, codex sub-agent 1), and "
    "one [drift] value for all of them cannot fit them all (each kind is judged against its own runs); tune a "
    "warehouse of one kind to fit them"
)


def _drift(db: Path, *args: str) -> dict[str, dict]:
    code, out, err = run_cli("tune", "--db", str(db), "--json", *args)
    assert code == 0, err
    return {r["key"].removeprefix("drift."): r for r in json.loads(out) if r["key"].startswith("drift.")}


def _real(tmp: Path, *folders: str) -> Path:
    missing = [f for f in folders if not (REAL / f).exists()]
    if missing:
        pytest.skip(f"{REAL / missing[0]} not found (set FORENSICS_SHARED to the shared folder)")
    for f in folders:
        shutil.copytree(REAL / f, tmp / "logs" / f)
    ingest([tmp / "logs"], db=tmp / "w.duckdb")
    return tmp / "w.duckdb"


def test_several_kinds_of_agent_get_no_drift_recommendation_and_one_line_why(tmp_path: Path) -> None:
    db = _real(tmp_path, *AGENTS)
    recs = _drift(db)
    assert len(recs) == 10 and all(r["recommended"] == r["current"] and r["evidence"] == MIXED for r in recs.values())
    report(db, tmp_path / "r", ["md", "json"])  # no harness config
    md = (tmp_path / "r" / "report.md").read_text()
    assert "detector thresholds ([drift]" not in md and "[drift]\n" not in md  # no table, no TOML
    assert md.count(MIXED) == 1  # the ten keys on one line
    assert (
        "- [drift] continue_nags_high (4), continue_nags_low (2), crowding_ratio_high (0.1), crowding_ratio_low "
        "(0.25), dispersion_parallel_high (10), dispersion_parallel_low (6), dispersion_targets_high (10), "
        f"dispersion_targets_low (8), echo_rate_high (0.5), echo_rate_low (0.3): {MIXED}"
    ) in md
    w = json.loads((tmp_path / "r" / "metrics.json").read_text())["what_to_change"]
    assert w["changes"] == [] and w["toml_drift"] == ""
    assert {k["key"] for k in w["left_alone"] if k["why"] == MIXED} == {f"drift.{k}" for k in recs}


def test_one_kind_with_too_few_conversations_keeps_the_documented_defaults(tmp_path: Path) -> None:
    """aider alone: 48 conversations, but only 7 with tool output (its edits) and 14 with an echo rate; none with a
    continue-nag, so the worst 20 % by nags (a threshold of 1, a single "continue") is never recommended."""
    recs = _drift(_real(tmp_path, "aider"))
    assert all(r["recommended"] == r["current"] for r in recs.values())
    assert recs["crowding_ratio_high"]["evidence"] == (
        "only 7 conversations of aider carry a figure for what the assistant wrote / the tools' output, fewer than "
        "20: the documented default is kept"
    )
    assert recs["echo_rate_low"]["evidence"].startswith("only 14 conversations of aider carry a figure for echo rate")
    assert recs["continue_nags_high"]["evidence"] == (
        "neither the fitted 3 nor the current value flags any of 48 aider conversations by continue-nags from the "
        "person: no evidence to move it, kept"
    )


def test_the_seed_fixture_is_too_small_a_kind(tmp_path: Path) -> None:
    ingest([FIXTURES / "seed" / "seed.db"], db=tmp_path / "w.duckdb")
    recs = _drift(tmp_path / "w.duckdb")
    assert recs["echo_rate_high"]["recommended"] == 0.5
    assert recs["echo_rate_high"]["evidence"] == (
        "only 3 conversations of sqlite carry a figure for echo rate, fewer than 20: the documented default is kept"
    )


def test_the_seed_harness_two_stores_are_two_kinds(tmp_path: Path) -> None:
    """realistic.db (the chat database) and the JSONL sessions: the drift analyzer holds each against its own."""
    ingest([FIXTURES / "sqlite" / "realistic.db", FIXTURES / "sessions"], db=tmp_path / "w.duckdb")
    recs = _drift(tmp_path / "w.duckdb")
    assert all(
        r["recommended"] == r["current"]
        and r["evidence"].startswith("2 kinds of agent here (sqlite 12, jsonl 8), and one [drift] value")
        for r in recs.values()
    )


def test_one_kind_with_enough_conversations_is_fitted_with_floors(tmp_path: Path) -> None:
    """Three copies of the JSONL sessions: 24 conversations of one kind. High flags at most the worst 10 %, low
    20 %; each recommendation says how many it flags and against how many now."""
    for i in range(3):
        shutil.copytree(FIXTURES / "sessions", tmp_path / "logs" / f"s{i}")
    ingest([tmp_path / "logs"], db=tmp_path / "w.duckdb")
    recs = _drift(tmp_path / "w.duckdb", "--worst-pct", "10")
    got = {k: (r["current"], r["recommended"]) for k, r in recs.items()}
    assert got == {
        "crowding_ratio_low": (0.25, 0.016),
        "crowding_ratio_high": (0.1, 0.015),
        "echo_rate_low": (0.3, 0.5),
        "echo_rate_high": (0.5, 0.501),
        "continue_nags_low": (2, 6),
        "continue_nags_high": (4, 7),
        "dispersion_targets_low": (8, 13),
        "dispersion_targets_high": (10, 14),
        "dispersion_parallel_low": (6, 6),
        "dispersion_parallel_high": (10, 10),
    }
    assert recs["continue_nags_low"]["evidence"] == (
        "flags 3 of 24 jsonl conversations (low: at most the worst 20%, by highest continue-nags from the person)"
    )
    assert recs["continue_nags_low"]["effect"] == "continue nags crosses low in 3 conversations, not 12"
    for k, r in recs.items():  # never more than the share, never a count threshold of one event
        if r["evidence"].startswith("flags "):
            n, of = (int(x) for x in r["evidence"].split()[1:4:2])
            assert n <= (0.1 if k.endswith("high") else 0.2) * of
        assert isinstance(r["recommended"], float) or r["recommended"] >= 2
