"""The chart cache: charts stored in the warehouse by a hash of what they show (issue 28): a report whose chart data did not move
reuses the SVG the previous report drew instead of starting matplotlib (its import and ``savefig`` were most of
an unchanged report's drawing time).

The charts not cached are drawn in a process beside the report while its later analyzers run when the report mostly
reuses kept results, and in the report's own process at its end when it mostly computes (a first report: ``Painter``).

The key hashes the chart's data (its ``repr``: plain lists, dicts, numbers and strings), its section and name, the
package's source (``reuse.code_digest``: the drawers) and matplotlib's version; the SVG of the same key is the same bytes
(``charts.svg``: no date, a fixed hash salt). ``report_charts`` keeps one row per chart name, the last drawn.
"""

from __future__ import annotations

import hashlib
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from types import TracebackType

import duckdb
import polars as pl

from forensics import draw as charts
from forensics.analyzers import reuse
from forensics.analyzers.base import Chart, Section
from forensics.kernel import workers
from forensics.report import figures
from forensics.warehouse import derived

TABLE = "report_charts"
# what the process drawing beside the report loads before its first chart: matplotlib and the kit (each drawer's
# module, loaded from its file alone, with the first chart it draws: no analyzer)
PRELOAD = ("forensics.draw", "matplotlib.figure", "matplotlib.backends.backend_svg")


@lru_cache(maxsize=1)
def _code() -> str:
    try:
        mpl = version("matplotlib")
    except PackageNotFoundError:
        mpl = ""
    return mpl + reuse.code_digest()  # the drawers an analyzer declares may live anywhere in the package


def key(section: str, chart: Chart) -> str:
    return hashlib.sha1(repr((_code(), section, chart.name, chart.data)).encode()).hexdigest()


def _where(drawer: charts.Drawer) -> tuple[str, str]:
    """The file of a drawer's module and its name: the side process loads that module alone (``charts.drawn_at``)."""
    return str(sys.modules[drawer.__module__].__file__), drawer.__name__


# how a side process that died shows: its fork server's pipe closed while starting a worker, or the pool broken
_LOST = (EOFError, ConnectionError, BrokenProcessPool)


class Painter:
    """The charts of a report: the warehouse's SVG of a chart whose key it holds, the others drawn in a process
    beside the report (``workers.side_process``) from when ``start(beside=True)`` is called, as their sections come
    in, while the analyzers after them run. Drawing took 4 s of the 15 s of a report after 1 % new conversations,
    on one core while the other sat idle. The report starts it after the last analyzer that runs pools: their
    workers use both cores, and a third process would add to the report's peak memory. A report that computed more
    than it reused (a first report) draws in its own process at ``finish`` instead (``start(beside=False)``): the
    side process and its fork server (matplotlib, ~90 MB) were the top of its peak memory, while its drawing is ~5
    of its ~75 CPU seconds (docs/scale.md, issue 46 mem11). The same data draws the same bytes in either process
    (``charts.svg``)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.charts: dict[str, tuple[str, Chart, str]] = {}  # section_chart -> (section, chart, key)
        self.cached: dict[str, str] = {}  # key -> SVG, read from the warehouse
        self.drawing: dict[str, Future[str]] = {}  # key -> SVG being drawn beside
        self.started = False
        self.beside = True  # draw in the side process once started (``start``), else here at ``finish``
        # the side process is gone (a Ctrl-C reaches every process of the terminal's group; the kernel's OOM killer):
        # what it had not drawn is drawn here, the same bytes
        self.lost = False
        self._pool: ProcessPoolExecutor | None = None
        self._side = ExitStack()

    def __enter__(self) -> Painter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._side.__exit__(kind, error, tb)  # cut short: the drawings queued are dropped, not waited for

    def add(self, section: Section) -> None:
        """A finished section's charts, drawn beside from now on once started."""
        self.charts.update(
            {f"{section.name}_{c.name}": (section.name, c, key(section.name, c)) for c in section.charts}
        )
        if self.started:
            self._submit()

    def start(self, beside: bool = True) -> None:
        """Draw from now on: beside (what is added later as it comes in), or here at ``finish`` (``beside=False``)."""
        self.started, self.beside = True, beside
        self._submit()

    def finish(self) -> dict[str, str]:
        """Chart name -> SVG of every chart added: cached ones read back, the others drawn (waited for) and cached."""
        if not self.started:
            self.start(beside=False)  # nothing left to overlap: drawn here
        out, new = {}, []
        for name, (section, chart, k) in self.charts.items():
            if k not in self.cached:
                self.cached[k] = self._drawn(section, chart, k)
                new.append((name, k, self.cached[k]))
            out[name] = self.cached[k]
        self._side.close()  # the side process and its fork server end here, not idle through the rest
        if new:
            derived.replace_rows(
                self.con,
                TABLE,
                pl.DataFrame(
                    {"name": [n for n, _, _ in new], "key": [k for _, k, _ in new], "svg": [d for _, _, d in new]}
                ),
                "name IN (SELECT unnest(?::VARCHAR[]))",
                [[n for n, _, _ in new]],
            )
        return out

    def _drawn(self, section: str, chart: Chart, k: str) -> str:
        if k in self.drawing and not self.lost:
            try:
                return self.drawing[k].result()
            except _LOST:
                self.lost = True
        return charts.drawn(figures.drawer(section, chart.name), chart.data)

    def _submit(self) -> None:
        todo = {k: (s, c) for s, c, k in self.charts.values() if k not in self.cached and k not in self.drawing}
        if todo and derived.columns(self.con, TABLE):
            self.cached.update(
                self.con.execute(
                    f"SELECT key, svg FROM {TABLE} WHERE key IN (SELECT unnest(?::VARCHAR[]))", [list(todo)]
                ).fetchall()
            )
        for k, (section, chart) in todo.items():
            if k in self.cached or self.lost or not self.beside:
                continue
            try:
                if self._pool is None:
                    self._pool = self._side.enter_context(workers.side_process(PRELOAD))
                self.drawing[k] = self._pool.submit(
                    charts.drawn_at, *_where(figures.drawer(section, chart.name)), chart.data
                )
            except _LOST:
                self.lost = True
