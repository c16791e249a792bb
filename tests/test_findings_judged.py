"""Findings judged by hand on the shared real logs (docs/findings-evaluation.md): the report must keep firing where
a reviewer agreed and stay silent where nothing can be said. Skipped when the shared logs are absent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from forensics import ingest
from forensics.api import report
from tests.conftest import ROOT, SHARED, query

REAL = SHARED / "data" / "agent-logs"
JUDGED = ROOT / "tests" / "data" / "judged"
SILENT = ("sentinel", "memory", "skills", "compaction", "compression")  # no finding on these logs (the doc says why)


def judged(kind: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (JUDGED / f"{kind}.jsonl").read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not REAL.is_dir():
        pytest.skip(f"{REAL} not found (set FORENSICS_SHARED to the shared folder)")
    d = tmp_path_factory.mktemp("real")
    ingest([REAL], db=d / "w.duckdb")
    mp = pytest.MonkeyPatch()
    mp.setenv("FORENSICS_DUCKDB_MEMORY", "1GB")  # the compaction audit of the whole folder needs more than 192MB
    try:
        report(d / "w.duckdb", d / "r", ["json"])
    finally:
        mp.undo()
    where = {
        cid: (path.removeprefix(str(REAL.resolve()) + "/"), native)
        for cid, path, native in query(
            d / "w.duckdb",
            "SELECT c.conversation_id, s.path, c.native_id FROM conversations c JOIN sources s USING (source_id)",
        )
    }
    return {"doc": json.loads((d / "r" / "metrics.json").read_text()), "where": where, "db": d / "w.duckdb"}


def test_user_pushback_fires_where_it_was_judged_true(real: dict[str, Any]) -> None:
    sample = judged("user_pushback")
    found = {
        real["where"][f["conversation_id"]]: f["positions"]
        for f in real["doc"]["findings"]
        if f["kind"] == "user_pushback"
    }
    assert found == {(s["source"], s["native_id"]): s["positions"] for s in sample}  # judged: all of them
    assert sum(s["verdict"] for s in sample) / len(sample) >= 0.8


def test_analyzers_with_nothing_to_read_stay_silent_on_the_real_logs(real: dict[str, Any]) -> None:
    doc = real["doc"]
    assert not [f for f in doc["findings"] if f["section"] in SILENT]
    assert {"sentinel", "memory", "skills", "compaction.replay"} <= set(doc["not_in_use"])
    assert not [c for c in doc["what_to_change"]["changes"] if c["harness"]]


def test_the_worst_conversations_are_judged_and_beat_ranking_by_length(real: dict[str, Any]) -> None:
    verdicts = {(j["source"], j["native_id"]): j["verdict"] for j in judged("worst_conversations")}
    ours = [real["where"][w["conversation_id"]] for w in real["doc"]["worst_conversations"]]
    unjudged = [k for k in ours if k not in verdicts]
    assert not unjudged, f"judge these in tests/data/judged/worst_conversations.jsonl: {unjudged}"
    longest = [
        real["where"][cid]
        for (cid,) in query(
            real["db"],
            """
        SELECT conversation_id FROM messages WHERE on_main_path GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 5""",
        )
    ]
    assert all(k in verdicts for k in longest)
    assert sum(verdicts[k] for k in ours) >= sum(verdicts[k] for k in longest) >= 2
