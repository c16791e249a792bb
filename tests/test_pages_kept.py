"""Issue 46: the report after new conversations writes the same report.md, report.html and charts/ as a report from
scratch of the same warehouse, byte for byte (but the report's time); its pages are rendered before the report is
kept whole and kept with it (``render.prerender``), and read back by the next report of the same inputs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb

from forensics import api, ingest
from forensics.analyzers.schema import defaults
from forensics.report import render
from forensics.report.build import build_report
from tests.conftest import FIXTURES

ONLY = "baseline,keywords,compaction,drift,sentinel,problems"
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")
KEPT = re.compile(r" \(kept whole from the report of [^)]*\)")


def _files(out: Path) -> dict[str, str]:
    """report.md, report.html and every chart, the report's time taken out."""
    names = ["report.md", "report.html", *sorted(f"charts/{p.name}" for p in (out / "charts").glob("*.svg"))]
    return {n: KEPT.sub("", TIME.sub("T", (out / n).read_text(encoding="utf-8"))) for n in names}


def _report(db: Path, out: Path) -> dict[str, str]:
    api.report(db, out, ["md", "html", "json"], ONLY, cfg=defaults())
    return _files(out)


def _scratch(db: Path, to: Path) -> Path:
    """A copy of ``db`` holding nothing a report kept: no per-conversation rows, no report, no chart."""
    shutil.copy(db, to)
    with duckdb.connect(str(to)) as con:
        kept = "table_name LIKE 'reuse%' OR table_name IN ('report_cache', 'report_charts')"
        for (t,) in con.execute(f"SELECT table_name FROM duckdb_tables() WHERE {kept}").fetchall():
            con.execute(f"DROP TABLE {t}")
    return to


def test_after_new_conversations_the_pages_and_charts_equal_a_report_from_scratch(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    first = _report(db, tmp_path / "first")
    ingest([FIXTURES / "sqlite" / "realistic.db", FIXTURES / "sessions"], db=db)
    scratch = _scratch(db, tmp_path / "scratch.duckdb")
    grown = _report(db, tmp_path / "grown")
    assert grown != first and any(n.startswith("charts/") for n in grown)
    # the warehouse's path is in the meta line and the `forensics tune` line: the scratch copy is reported under
    # the same name
    same = tmp_path / "same"
    same.mkdir()
    shutil.move(scratch, same / "w.duckdb")
    from_scratch = _report(same / "w.duckdb", tmp_path / "scratch")
    assert grown.keys() == from_scratch.keys()
    for name in grown:
        assert grown[name].replace(str(db), "W") == from_scratch[name].replace(str(same / "w.duckdb"), "W"), name
    # the next report of the same inputs: the pages kept with the report, the same bytes
    again = _report(db, tmp_path / "again")
    assert again == grown


def test_pages_rendered_before_keeping_equal_pages_rendered_when_written(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    shutil.copy(db, tmp_path / "plain.duckdb")
    kept = build_report(
        db, defaults(), only=ONLY, charts=True, pages=lambda r: render.prerender(r, ["md", "html"], "pages")
    )
    assert set(kept.pages) == {"report.md", "report.html"} and all(render.STAMP in p for p in kept.pages.values())
    plain = build_report(tmp_path / "plain.duckdb", defaults(), only=ONLY, charts=True)
    assert plain.pages == {}
    for rep, out in ((kept, "kept"), (plain, "plain")):
        render.write(rep, tmp_path / out, ["md", "html"])
    a, b = _files(tmp_path / "kept"), _files(tmp_path / "plain")
    assert {n: t.replace(str(db), "W") for n, t in a.items()} == {
        n: t.replace(str(tmp_path / "plain.duckdb"), "W") for n, t in b.items()
    }
