"""Issue 46: the corpus-level parts of compaction and of *What to change* kept per conversation (the compaction
audit, its not-found-then-search signs, the replay's sweep for the report and for the tuner, the compression
tuner's grid): a report after new conversations computes only theirs, and equals a report from scratch on the same
warehouse, figure for figure, the recommendations' evidence and the float sums of the replay included."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from forensics import ingest
from forensics.analyzers import reuse
from forensics.analyzers.schema import defaults
from forensics.config import HARNESS_FORMATS
from forensics.report.build import build_report
from forensics.report.render import metrics_document
from forensics.tuning import advise
from tests.conftest import FIXTURES

ONLY = ["compression", "compaction", "drift"]
TIMING = ("generated_at", "warehouse", "reused")  # what differs between two runs of the same report
KEPT = ("compaction_audit", "compaction_signs", "compaction_sweep", "compaction_sweep_tuned", "compression_sweep_tuned")


def _report(db: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE IF EXISTS report_cache")  # the per-conversation reuse, not the whole report's
    doc = metrics_document(build_report(db, defaults(), only=ONLY, recommend=advise))
    doc["what_to_change"].pop("command")  # names the warehouse
    # the tuners' too (the report's meta says the analyzers')
    return {k: v for k, v in doc.items() if k not in TIMING}, {k: vars(t) for k, t in reuse.TALLY.items()}


def _scratch(db: Path, tmp: Path) -> Path:
    copy = tmp / "scratch.duckdb"
    shutil.copy(db, copy)
    with duckdb.connect(str(copy)) as con:
        for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'reuse%'").fetchall():
            con.execute(f"DROP TABLE {t}")
    return copy


def _count(db: Path, sql: str) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return int(con.execute(sql).fetchall()[0][0])


LOGGED = "SELECT count(DISTINCT conversation_id) FROM events WHERE kind = 'compaction'"
HARNESS = (  # the conversations the harness's tuners fit on (``tuning._scoped``)
    "SELECT count(*) FROM conversations JOIN sources USING (source_id) "
    f"WHERE format IN ({', '.join(repr(f) for f in HARNESS_FORMATS)})"
)


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("reuse-corpus") / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db", FIXTURES / "compaction" / "-home-dev-notes"], db=db)
    return db


def test_grown_computes_only_the_new_conversations_and_equals_from_scratch(wh: Path, tmp_path: Path) -> None:
    first, made = _report(wh)
    assert all(made[k]["computed"] > 0 for k in KEPT), made
    again, kept = _report(wh)
    assert again == first and all(kept[k]["computed"] == 0 for k in KEPT), kept
    counts = ("SELECT count(*) FROM conversations", LOGGED, HARNESS)
    before, logged, own = (_count(wh, q) for q in counts)
    grow = [FIXTURES / "compaction" / "-home-dev-shop", FIXTURES / "compaction" / "codex"]
    ingest([*grow, FIXTURES / "sqlite" / "realistic.db"], db=wh)
    after, logged_after, own_after = (_count(wh, q) for q in counts)
    assert after > before and logged_after > logged > 0 and own_after > own
    grown, kept = _report(wh)
    # each new one's computed once (drift's type 3 reads the audit of those its kept facts lack: read back then);
    # the tuners' over the harness's own
    new = {k: own_after - own if k.endswith("_tuned") else after - before for k in KEPT}
    assert {k: kept[k]["computed"] for k in KEPT} == new
    scratch, _ = _report(_scratch(wh, tmp_path))
    assert grown == scratch
    told = grown["what_to_change"]
    assert {c["key"] for c in told["changes"] + told["left_alone"]} >= {
        "compaction.keep_recent",
        "tool_result.summarize_bytes",
    }
