"""The report's charts (``report.drawn.Painter``): a report that reuses kept results draws them in a process beside
it while later analyzers run, a first report in its own process at its end; the same bytes either way, and no
process is left when the report returns."""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver as fs
import shutil
from pathlib import Path

import duckdb
import pytest

from forensics import ingest
from forensics.draw import svg
from forensics.report.build import build_report
from forensics.report.figures import draw
from tests.conftest import FIXTURES


def _sides(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the side processes the painter starts (``workers.side_process``)."""
    from forensics.kernel import workers

    started: list[int] = []
    side = workers.side_process

    def counted(preload: tuple[str, ...]):  # type: ignore[no-untyped-def]
        started.append(1)
        return side(preload)

    monkeypatch.setattr(workers, "side_process", counted)
    return started


def test_a_first_report_draws_its_charts_in_its_own_process_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing reused: no side process (matplotlib and its fork server beside the report were the top of a first
    report's peak memory); the charts are drawn at the end, the same bytes as drawn in the test's process."""
    sides = _sides(monkeypatch)
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    report = build_report(db, charts=True)
    here = {f"{s.name}_{c.name}": svg(draw(s.name, c.name, c.data)) for s in report.sections for c in s.charts}
    assert sorted(report.drawn) == sorted(here) and len(here) >= 5
    assert report.drawn == here
    assert sides == []
    assert multiprocessing.active_children() == []
    con = duckdb.connect(str(db), read_only=True)
    assert dict(con.execute("SELECT name, svg FROM report_charts").fetchall()) == here  # kept for the next report


def test_a_report_that_reuses_draws_beside_the_same_bytes_and_the_side_process_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After new conversations (kept results reused): the charts whose data moved are drawn in the side process
    while the later analyzers run, the same bytes, and the process and its fork server are gone after."""
    db, sessions = tmp_path / "w.duckdb", tmp_path / "sessions"
    files = sorted((FIXTURES / "sessions").glob("*.jsonl"))
    sessions.mkdir()
    for f in files[1:]:
        shutil.copy(f, sessions)
    ingest([FIXTURES / "seed" / "seed.db", sessions], db=db)
    build_report(db, charts=True)
    shutil.copy(files[0], sessions)  # one new conversation of 11
    ingest([sessions], db=db)
    sides = _sides(monkeypatch)
    report = build_report(db, charts=True)
    reused = report.meta["reused"].values()
    assert sum(t["reused"] for t in reused) > sum(t["computed"] for t in reused)
    here = {f"{s.name}_{c.name}": svg(draw(s.name, c.name, c.data)) for s in report.sections for c in s.charts}
    assert report.drawn == here
    assert sides == [1]  # charts whose data moved were drawn beside
    assert multiprocessing.active_children() == []
    assert getattr(fs._forkserver, "_forkserver_pid", None) is None  # its fork server stopped too


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
        problems) are done, not beside them: their peak is the report's (and a first report, reusing nothing, draws here
    at its end: ``test_a_first_report_draws_its_charts_in_its_own_process_the_same_bytes``)."""
    from forensics import analyzers
    from forensics.report.drawn import Painter

    added: list[str] = []
    at_start: list[list[str]] = []
    add, start = Painter.add, Painter.start
    monkeypatch.setattr(Painter, "add", lambda self, s: (added.append(s.name), add(self, s))[1])
    monkeypatch.setattr(Painter, "start", lambda self, **kw: (at_start.append(list(added)), start(self, **kw))[1])
    db = tmp_path / "w.duckdb"
    ingest([FIXTURES / "seed" / "seed.db"], db=db)
    report = build_report(db, charts=True)
    names = analyzers.names()
    last = max(i for i, n in enumerate(names) if analyzers.load(n).workers or analyzers.load(n).heavy)
    assert names[last] == "problems" and analyzers.load("topics").workers
    assert at_start[0] == names[: last + 1]  # started right after problems
    assert len(report.drawn) >= 5
