"""Issue 28 part 2: a report that reuses the cached per-conversation facts equals one computed from scratch, again on
the same warehouse, after new conversations were ingested, and after a config change."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest

from forensics import ingest
from forensics.analyzers import all_facts, reuse
from forensics.analyzers.drift.settings import DriftSettings
from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.analyzers.schema import defaults
from forensics.kernel.selection import SELECTED, Selection
from forensics.report.build import build_report
from forensics.report.render import metrics_document
from forensics.report.tables import every
from tests.conftest import FIXTURES

ONLY = ["baseline", "keywords", "compression", "compaction", "drift", "sentinel"]
TIMING = ("generated_at", "warehouse", "reused")  # what differs between two runs of the same report


def _report(db: Path, cfg: Any = None, selection: Selection | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report's figures and what it reused per cached fact; the whole-report cache is dropped first, so
    that these tests see the per-conversation reuse (tests/test_report_cache.py tests the whole report's)."""
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE IF EXISTS report_cache")
    doc = metrics_document(build_report(db, cfg or defaults(), selection, only=ONLY))
    return {k: v for k, v in doc.items() if k not in TIMING}, doc["reused"]


def _scratch(db: Path, tmp: Path) -> Path:
    """A copy of ``db`` without any cached result."""
    copy = tmp / f"scratch-{len(list(tmp.iterdir()))}.duckdb"
    shutil.copy(db, copy)
    con = duckdb.connect(str(copy))
    for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'reuse%'").fetchall():
        con.execute(f"DROP TABLE {t}")
    con.close()
    return copy


def _from_scratch(db: Path, tmp: Path, cfg: Any = None) -> dict[str, Any]:
    """The same report on a copy of ``db`` without any cached result."""
    return _report(_scratch(db, tmp), cfg)[0]


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("reuse") / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db", FIXTURES / "sqlite" / "realistic.db"], db=db)
    return db


def test_again_reuses_every_fact_and_equals_the_first(wh: Path) -> None:
    first, made = _report(wh)
    again, kept = _report(wh)
    assert again == first
    assert all(t["computed"] > 0 for t in made.values())
    assert all(t["computed"] == 0 and t["reused"] > 0 for t in kept.values()), kept


def test_a_selection_keeps_its_conversations_for_the_whole_report(wh: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(wh))
    con.execute("DROP TABLE IF EXISTS reuse_done")  # nothing kept: the selection's report computes its own
    one = con.execute("SELECT native_id FROM conversations ORDER BY native_id LIMIT 1").fetchall()[0][0]
    con.close()
    part, kept = _report(wh, selection=Selection(conversations=(one,)))
    assert kept["baseline"] == {"reused": 0, "computed": 1}
    assert kept["sentinel_judged"]["computed"] > 1  # the sentinel replays every conversation's history
    whole, kept = _report(wh)
    assert kept["baseline"]["reused"] == 1
    assert whole == _from_scratch(wh, tmp_path)


def test_grown_computes_only_the_new_conversations(wh: Path, tmp_path: Path) -> None:
    _report(wh)
    before = duckdb.connect(str(wh), read_only=True).execute("SELECT count(*) FROM conversations").fetchall()[0][0]
    ingest([FIXTURES / "anthropic" / "anthropic.db"], db=wh)
    after = duckdb.connect(str(wh), read_only=True).execute("SELECT count(*) FROM conversations").fetchall()[0][0]
    grown, kept = _report(wh)
    assert kept["baseline"] == {"reused": before, "computed": after - before}
    assert kept["keywords.distinctive"]["computed"] == 1  # TF-IDF weighs every conversation against the new ones
    assert grown == _from_scratch(wh, tmp_path)


def test_a_config_change_recomputes_and_equals_from_scratch(wh: Path, tmp_path: Path) -> None:
    _report(wh)
    cfg = defaults().with_settings(
        replace(DriftSettings.of(defaults()), dispersion_targets_low=3),
        replace(KeywordSettings.of(defaults()), top_k=4),
    )
    changed, kept = _report(wh, cfg)
    assert kept["baseline"]["reused"] == 0  # the key hashes the whole config: a change never misreads
    assert changed == _from_scratch(wh, tmp_path, cfg)
    assert _report(wh, cfg)[1]["drift_context"] == {"reused": kept["drift_context"]["computed"], "computed": 0}
    assert changed["sections"]["keywords"] != _report(wh)[0]["sections"]["keywords"]


def test_an_empty_selection_with_nothing_kept(wh: Path, tmp_path: Path) -> None:
    report = build_report(_scratch(wh, tmp_path), defaults(), Selection(models=("no-such-model",)))
    doc = metrics_document(report)
    assert doc["conversations"] == 0 and all(t["reused"] == 0 for t in doc["reused"].values())
    # every analyzer runs on an empty selection (compression stopped on it, StopIteration); it says why it is idle
    assert report.not_in_use["compression"] == "no conversation in the selection"


def test_every_kept_fact_has_a_declared_table() -> None:
    kept = {n for n, f in all_facts().items() if f.cached}
    assert len(kept) == 15 and "drift_lags" in kept and "sentinel_turns" not in kept
    assert {reuse.PREFIX + n for n in kept | {"compression_replay"}} | {reuse.DONE, reuse.CORPUS} <= {
        t.name for _, t in every()
    }


def test_key_moves_with_the_config(wh: Path) -> None:
    cfg = defaults().with_settings(replace(KeywordSettings.of(defaults()), top_k=4))
    assert reuse.key("keyword_counts", cfg) != reuse.key("keyword_counts", defaults())


def test_rows_computed_uncounted_are_counted_computed_by_the_next_counted_call(wh: Path, tmp_path: Path) -> None:
    """``reuse.rows(counted=False)`` (the worst list's ends) keeps what it computes, but the result's own call after
    it counts those conversations computed, not reused: the report's ``meta.reused`` is what it was without it."""
    import polars as pl

    db = tmp_path / "lent.duckdb"
    shutil.copy(wh, db)
    with duckdb.connect(str(db)) as con:
        n = Selection().materialize(con)
        ids = sorted(c for (c,) in con.execute("SELECT conversation_id FROM conversations").fetchall())

        def compute() -> pl.DataFrame:
            sel = [c for (c,) in con.execute(f"SELECT conversation_id FROM {SELECTED} ORDER BY 1").fetchall()]
            return pl.DataFrame({"conversation_id": sel, "n": [len(c) for c in sel]})

        reuse.clear_tally()
        with reuse.narrowed(con, ids[:2]):
            reuse.rows(con, defaults(), "lent_test", compute, counted=False)
        assert "lent_test" not in reuse.TALLY
        got = reuse.rows(con, defaults(), "lent_test", compute)
        assert sorted(got["conversation_id"].to_list()) == ids
        assert reuse.TALLY["lent_test"] == reuse.Tally(reused=0, computed=n)
        reuse.rows(con, defaults(), "lent_test", compute)  # lent once: read back now, counted reused
        assert reuse.TALLY["lent_test"] == reuse.Tally(reused=n, computed=n)


def test_batches_are_whole_conversations_of_at_most_so_many_messages() -> None:
    sizes = [("a", 3), ("b", 4), ("c", 9), ("d", 1), ("e", 2), ("f", 0)]
    assert reuse.batches(sizes, None) == [["a", "b", "c", "d", "e", "f"]]
    assert reuse.batches(sizes, 7) == [["a", "b"], ["c"], ["d", "e", "f"]]  # c, larger than 7, is a batch alone
    assert reuse.batches(sizes, 1) == [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]
    assert reuse.batches([], 5) == []


def test_problems_found_in_batches_equal_those_found_at_once(
    wh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The problem detectors run on batches of conversations (``problems.BATCH`` messages, each batch's messages and
    calls copied): one conversation a batch finds what every conversation at once finds, in the same order."""
    from forensics.analyzers import problems

    def found(batch: int | None) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
        monkeypatch.setattr(problems, "BATCH", batch)
        db = _scratch(wh, tmp_path)
        report = build_report(db, defaults(), only=["rules", "problems"])
        with duckdb.connect(str(db), read_only=True) as con:
            rows = con.execute(f"SELECT * FROM {problems.TABLE} ORDER BY ALL").fetchall()
        sec = report.section("problems")
        assert sec is not None
        return rows, {"findings": [repr(f) for f in sec.findings], "metrics": sec.metrics, "summary": sec.summary}

    whole, one_by_one = found(None), found(1)
    assert len(whole[0]) >= 10 and whole == one_by_one
