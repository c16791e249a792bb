"""Issue 46: the problem findings, the rules audit and the failure readings of an unchanged conversation are read back
from the warehouse (``reuse.rows``), and a report that reads them back equals one computed from scratch: again on
the same warehouse, after new conversations were ingested, and when what a conversation's findings read from the
others (the agent families that change things with their tools) moves."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bench import rules as _rules  # noqa: F401  (puts fixtures/ on the path, for make_rules)
from forensics import ingest
from forensics.analyzers import reuse, signature
from forensics.analyzers.failures import READ, handed_over
from forensics.analyzers.problems import CACHED as FOUND
from forensics.analyzers.rules.load import CACHED as AUDIT
from forensics.analyzers.schema import defaults
from forensics.kernel.selection import Selection
from forensics.report.build import build_report
from forensics.report.render import metrics_document
from tests.conftest import FIXTURES

ONLY = ["rules", "problems", "outcomes", "failures"]
TIMING = ("generated_at", "warehouse", "reused")  # what differs between two runs of the same report
KEPT = (FOUND, AUDIT, READ)
TABLES = ("problem_findings", "run_failures", "run_rules", "rule_verdicts")


def _report(
    db: Path, only: list[str] = ONLY
) -> tuple[dict[str, Any], dict[str, Any], dict[str, list[tuple[Any, ...]]]]:
    """The report's figures, what it reused per kept result, and the derived tables it wrote (the whole-report
    cache dropped first: these tests see the per-conversation reuse)."""
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE IF EXISTS report_cache")
    doc = metrics_document(build_report(db, defaults(), only=only))
    with duckdb.connect(str(db), read_only=True) as con:
        there = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        tables = {t: sorted(map(repr, con.execute(f"SELECT * FROM {t}").fetchall())) for t in TABLES if t in there}
    return {k: v for k, v in doc.items() if k not in TIMING}, doc["reused"], tables


def _scratch(db: Path, tmp: Path) -> Path:
    copy = tmp / f"scratch-{len(list(tmp.iterdir()))}.duckdb"
    shutil.copy(db, copy)
    with duckdb.connect(str(copy)) as con:
        for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'reuse%'").fetchall():
            con.execute(f"DROP TABLE {t}")
    return copy


def _count(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM conversations").fetchall()[0][0])


@pytest.fixture()
def wh(tmp_path: Path) -> Path:
    """The seed, Claude Code and OpenAI fixtures and fixtures/make_rules.py's Codex runs (their rules planted); its
    Claude Code runs are left for a later ingest (``RULES / "claude"``)."""
    import make_rules

    make_rules.main(tmp_path / "rules", 44, 12)
    db = tmp_path / "w.duckdb"
    ingest(
        [FIXTURES / "seed" / "seed.db", FIXTURES / "claude_code", FIXTURES / "openai", tmp_path / "rules" / "codex"],
        db=db,
    )
    return db


def test_again_reads_every_finding_back_and_equals_the_first(wh: Path) -> None:
    first, made, wrote = _report(wh)
    again, kept, rewrote = _report(wh)
    assert again == first and rewrote == wrote
    assert first["sections"]["problems"]["kinds"]["user_repeated"]["findings"] > 0  # something to keep
    assert wrote["run_failures"] and wrote["run_rules"] and wrote["rule_verdicts"]
    for name in KEPT:
        assert made[name]["computed"] > 0 and made[name]["reused"] == 0, (name, made[name])
        assert kept[name] == {"reused": made[name]["computed"], "computed": 0}, (name, kept[name])


def test_grown_judges_only_the_new_conversations_and_equals_from_scratch(wh: Path, tmp_path: Path) -> None:
    _report(wh)
    before = _count(wh)
    ingest([FIXTURES / "sessions", FIXTURES / "anthropic" / "anthropic.db", tmp_path / "rules" / "claude"], db=wh)
    after = _count(wh)
    grown, kept, wrote = _report(wh)
    assert after > before
    assert kept[FOUND] == {"reused": before, "computed": after - before}
    assert kept[AUDIT] == {"reused": before, "computed": after - before}
    assert kept[READ]["reused"] > 0
    scratch, _, scratch_wrote = _report(_scratch(wh, tmp_path))
    assert grown == scratch and wrote == scratch_wrote


def test_the_families_that_act_are_part_of_the_key(wh: Path, tmp_path: Path) -> None:
    """A conversation's ``declined_doable`` findings read whether its agent family changes things in another run:
    when the families that do move, every conversation's findings are judged again (the calls are edited in place
    here, which no import does: so only the problems are compared, the other kept results hold the old calls)."""
    only = ["problems"]
    _report(wh, only)
    with duckdb.connect(str(wh)) as con:  # no call changes anything any more: no family acts
        con.execute("UPDATE tool_calls SET is_error = true")
    changed, kept, wrote = _report(wh, only)
    assert kept[FOUND]["reused"] == 0
    scratch, _, scratch_wrote = _report(_scratch(wh, tmp_path), only)
    assert changed == scratch and wrote == scratch_wrote


def test_the_worst_lists_ends_are_read_from_the_kept_readings(wh: Path) -> None:
    """*Worst conversations* leaves out of the measurement ranking the runs that handed their work over: read from
    the runs' kept readings (``failures.handed_over``), the same runs as from their messages (``signature.done``),
    and an unchanged run's reading is not computed again (nor counted as the failures analyzer's)."""
    with duckdb.connect(str(wh)) as con:  # every fixture run hands its work over: one cut before any reply
        cids = sorted(c for (c,) in con.execute("SELECT conversation_id FROM conversations").fetchall())
        con.execute("DELETE FROM messages WHERE conversation_id = ? AND role = 'assistant'", [cids[0]])
    _report(wh)
    with duckdb.connect(str(wh)) as con:
        Selection().materialize(con)
        want = signature.done(con, cids, signature.GRADE_REVEALING)
        assert 0 < len(want) < len(cids)
        reuse.TALLY.clear()
        assert handed_over(con, defaults(), cids) == want  # some computed here: the failures analyzer read fewer
        stamps = con.execute("SELECT * FROM reuse_done WHERE fact = ? ORDER BY ALL", [READ]).fetchall()
        assert len(stamps) == len(cids)
        assert handed_over(con, defaults(), cids[::2]) == {c for c in cids[::2] if c in want}
        assert con.execute("SELECT * FROM reuse_done WHERE fact = ? ORDER BY ALL", [READ]).fetchall() == stamps
        assert READ not in reuse.TALLY
