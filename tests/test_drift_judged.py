"""Drift findings judged by hand on the shared real logs (docs/findings-evaluation.md, ## Drift) still hold: the
ones judged true still fire, the false ones no longer do (tests/data/judged/drift.jsonl)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SHARED

LOGS = SHARED / "data" / "agent-logs"
JUDGED = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "judged" / "drift.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[duckdb.DuckDBPyConnection, dict]:
    if not LOGS.is_dir():
        pytest.skip(f"{LOGS} is absent: the real logs are not on this machine")
    from forensics import ingest
    from forensics.api import report

    d = tmp_path_factory.mktemp("judged")
    ingest([LOGS], db=d / "w.duckdb")
    before = os.environ.get("FORENSICS_DUCKDB_MEMORY")
    os.environ["FORENSICS_DUCKDB_MEMORY"] = before or "1GB"  # the compaction audit of the Codex logs needs more
    try:
        report(d / "w.duckdb", d / "r", formats=["json"])
    finally:
        if before is None:
            del os.environ["FORENSICS_DUCKDB_MEMORY"]
    return duckdb.connect(str(d / "w.duckdb"), read_only=True), json.loads((d / "r" / "metrics.json").read_text())


def _fired(con: duckdb.DuckDBPyConnection, native: str, kind: str) -> list[list[int]]:
    return [
        p
        for (p,) in con.execute(
            "SELECT positions FROM drift_findings WHERE native_id = ? AND kind = ? AND severity IN ('low', 'high')",
            [native, kind],
        ).fetchall()
    ]


@pytest.mark.parametrize("j", JUDGED, ids=lambda j: f"{j['kind']}-{j['native_id'][:12]}-{j['expect']}")
def test_judged_findings(real: tuple[duckdb.DuckDBPyConnection, dict], j: dict) -> None:
    con, doc = real
    fired = _fired(con, j["native_id"], j["kind"])
    if j["expect"] == "fires":
        assert any(set(j["positions"]) & set(p) for p in fired), j["reason"]
    elif j["expect"] == "silent":
        assert not any(set(j["positions"]) & set(p) for p in fired), j["reason"]
    else:  # said once as the agent's way of working, not per conversation
        assert not fired and any(n["kind"].startswith(j["kind"] + ":") for n in doc["corpus_norms"]), j["reason"]


def test_no_drift_kind_fires_on_most_conversations_of_one_agent(real: tuple[duckdb.DuckDBPyConnection, dict]) -> None:
    con, _ = real
    rows = con.execute("""
        SELECT s.format, f.kind, count(DISTINCT f.conversation_id) FILTER (WHERE f.severity IN ('low', 'high')),
               count(DISTINCT f.conversation_id)
        FROM drift_findings f JOIN conversations c USING (conversation_id) JOIN sources s USING (source_id)
        GROUP BY 1, 2""").fetchall()
    assert not [r for r in rows if r[3] >= 5 and r[2] > r[3] / 2]


def test_no_finding_kind_fires_on_most_conversations_of_one_agent(real: tuple[duckdb.DuckDBPyConnection, dict]) -> None:
    """Every kind the report gives, per agent (its log format): none fires on more than half of an agent's
    conversations (an agent with at least 5); measured 2026-12-02: the most is codex, 3 of 7 (topic_switch).
    topic_switch is left out since issue 43: a switch is an event, not a problem, and the labels say where it is:
    every SciCode sample's next-step prompt is a new request (50 of Inspect's 70 conversations; labeled shifts in
    problems.jsonl) and long Codex sessions move from request to request (4 of 7)."""
    con, doc = real
    fmt = dict(
        con.execute("SELECT conversation_id, s.format FROM conversations JOIN sources s USING (source_id)").fetchall()
    )
    sizes: dict[str, int] = {}
    for f in fmt.values():
        sizes[f] = sizes.get(f, 0) + 1
    fired: dict[tuple[str, str], set[str]] = {}
    for f in doc["findings"]:
        if f["conversation_id"] and f["kind"] != "topic_switch":
            fired.setdefault((f["kind"], fmt[f["conversation_id"]]), set()).add(f["conversation_id"])
    most = {k: (len(c), sizes[k[1]]) for k, c in fired.items() if sizes[k[1]] >= 5 and len(c) > sizes[k[1]] / 2}
    assert not most


@pytest.mark.parametrize(
    "kind",
    [
        "tool_result_crowding",
        "tool_dispersion",
        "no_focus",
        "topic_interleave",
        "compaction_topic_loss",
        "user_pushback",
    ],
)
def test_every_finding_says_which_norm_it_was_held_against(
    real: tuple[duckdb.DuckDBPyConnection, dict], kind: str
) -> None:
    _, doc = real
    for f in (f for f in doc["findings"] if f["kind"] == kind):
        assert "norm" in f["rule"] or "the seed's lag thresholds" in f["rule"], f["rule"]
