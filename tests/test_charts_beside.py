"""The report's charts are drawn in a process beside it while later analyzers run (``report.drawn.Painter``): the
same bytes as drawn in the report's own process, and the process is gone when the report returns."""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver as fs
from pathlib import Path

import duckdb
import pytest

from forensics import ingest
from forensics.draw import svg
from forensics.report.build import build_report
from forensics.report.figures import draw
from tests.conftest import FIXTURES


def test_charts_drawn_beside_equal_the_ones_drawn_here_and_the_side_process_ends(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    report = build_report(db, charts=True)
    here = {f"{s.name}_{c.name}": svg(draw(s.name, c.name, c.data)) for s in report.sections for c in s.charts}
    assert sorted(report.drawn) == sorted(here) and len(here) >= 5
    assert report.drawn == here
    assert multiprocessing.active_children() == []
    assert getattr(fs._forkserver, "_forkserver_pid", None) is None  # its fork server stopped too
    con = duckdb.connect(str(db), read_only=True)
    assert dict(con.execute("SELECT name, svg FROM report_charts").fetchall()) == here  # kept for the next report


def test_charts_are_drawn_here_when_the_side_process_dies(tmp_path: Path) -> None:
    """A side process killed before it answered (the kernel's OOM killer; a Ctrl-C reaches every process of the
    terminal's group): the charts it had not drawn are drawn in the report's process, the same bytes."""
    import os
    import signal

    from forensics.report.drawn import Painter
    from forensics.warehouse import open_warehouse

    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    sections = build_report(db).sections  # no charts drawn, none kept
    with open_warehouse(db) as wh, Painter(wh.con) as painter:
        painter.start()
        painter.add(next(s for s in sections if s.name == "baseline"))
        assert painter._pool is not None
        for pid in list(painter._pool._processes):
            os.kill(pid, signal.SIGKILL)
        for s in sections:
            painter.add(s)
        drawn = painter.finish()
    assert painter.lost
    assert drawn == {f"{s.name}_{c.name}": svg(draw(s.name, c.name, c.data)) for s in sections for c in s.charts}
    assert multiprocessing.active_children() == []


def test_the_side_process_starts_after_the_pools_and_the_analyzer_holding_the_most_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process drawing the charts (matplotlib, 90 MB with its fork server) starts once the analyzers that run
    pools (``Analyzer.workers``) and the one whose own memory is the report's largest after them (``heavy``:
    problems) are done, not beside them: their peak is the report's. Every chart is still drawn beside."""
    from forensics import analyzers
    from forensics.report.drawn import Painter

    added: list[str] = []
    at_start: list[list[str]] = []
    add, start = Painter.add, Painter.start
    monkeypatch.setattr(Painter, "add", lambda self, s: (added.append(s.name), add(self, s))[1])
    monkeypatch.setattr(Painter, "start", lambda self: (at_start.append(list(added)), start(self))[1])
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    report = build_report(db, charts=True)
    names = analyzers.names()
    last = max(i for i, n in enumerate(names) if analyzers.load(n).workers or analyzers.load(n).heavy)
    assert names[last] == "problems" and analyzers.load("topics").workers
    assert at_start[0] == names[: last + 1]  # started right after problems
    assert len(report.drawn) >= 5
