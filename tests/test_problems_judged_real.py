"""Problem findings on ``fixtures/real`` read against their conversations as a reviewer would (docs/failures-evaluation.md,
"Round 10"): the judged-true ones still fire, the ones a fix stopped (``"fires": false``, false or unclear) stay stopped,
and each kind's read sample holds the 80 % bar. Verdicts: true, false, or null (unclear), in
``tests/data/judged/problems-real.jsonl``; the shared logs' verdicts are ``problems-<kind>.jsonl``
(tests/test_problems_judged.py)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import duckdb
import pytest

from bench import problems as bench
from forensics import ingest
from tests.conftest import ROOT

REAL = ROOT / "fixtures" / "real"
JUDGED = ROOT / "tests" / "data" / "judged" / "problems-real.jsonl"


def judged() -> list[dict[str, Any]]:
    return [json.loads(x) for x in JUDGED.read_text(encoding="utf-8").splitlines() if x]


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], list[set[int]]]:
    db = tmp_path_factory.mktemp("real") / "w.duckdb"
    ingest([REAL], db=db)
    con = duckdb.connect(str(db))
    where = {
        cid: (p.removeprefix(str(REAL.resolve()) + "/"), n)
        for cid, p, n in con.execute(
            "SELECT c.conversation_id, s.path, c.native_id FROM conversations c JOIN sources s USING (source_id)"
        ).fetchall()
    }
    con.close()
    out: dict[tuple[str, str, str], list[set[int]]] = defaultdict(list)
    for f in bench.findings(db):  # the report's findings, a family's norm applied
        out[(f["kind"], *where[f["conversation_id"]])].append(set(f["positions"]))
    return out


def test_judged_findings_fire_or_stay_stopped(found: dict[tuple[str, str, str], list[set[int]]]) -> None:
    rows = judged()
    assert {r["verdict"] for r in rows} <= {True, False, None}
    missing = [
        (r["kind"], r["native_id"], r["positions"])
        for r in rows
        if r["fires"] and set(r["positions"]) not in found[(r["kind"], r["source"], r["native_id"])]
    ]
    back = [
        (r["kind"], r["native_id"], r["positions"])
        for r in rows
        if not r["fires"] and any(set(r["positions"]) <= p for p in found[(r["kind"], r["source"], r["native_id"])])
    ]
    assert not missing, f"judged findings no longer fire: {missing}"
    assert not back, f"findings a fix stopped fire again: {back}"


@pytest.mark.parametrize("kind", ["redundant_work", "gave_up_or_false_success", "user_repeated"])
def test_what_fires_of_the_read_sample_is_mostly_true(kind: str) -> None:
    firing = [r for r in judged() if r["kind"] == kind and r["fires"]]
    assert firing and sum(r["verdict"] is True for r in firing) / len(firing) >= 0.8
