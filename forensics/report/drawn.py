"""Charts kept in the warehouse by a hash of what they show (issue 28): a report whose chart data did not move
reuses the SVG the previous report drew instead of starting matplotlib (its import and ``savefig`` were most of
an unchanged report's drawing time).

The key hashes the chart's data (its ``repr``: plain lists, dicts, numbers and strings), its section and name, the
package's source (``reuse.code_digest``: the drawers) and matplotlib's version; the SVG of the same key is the same bytes
(``charts.svg``: no date, a fixed hash salt). ``report_charts`` keeps one row per chart name, the last drawn.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

import duckdb
import pyarrow as pa

from forensics.analyzers import reuse
from forensics.analyzers.base import Chart, Section
from forensics.warehouse import derived

TABLE = "report_charts"


@lru_cache(maxsize=1)
def _code() -> str:
    try:
        mpl = version("matplotlib")
    except PackageNotFoundError:
        mpl = ""
    return mpl + reuse.code_digest()  # the drawers an analyzer declares may live anywhere in the package


def key(section: str, chart: Chart) -> str:
    return hashlib.sha1(repr((_code(), section, chart.name, chart.data)).encode()).hexdigest()


def draw(con: duckdb.DuckDBPyConnection, sections: list[Section]) -> dict[str, str]:
    """Chart name (``section_chart``) -> SVG of every chart of ``sections``: kept ones read back, the others drawn
    and kept."""
    from forensics.report import figures
    from forensics.report.charts import svg

    want = {f"{s.name}_{c.name}": (s.name, c, key(s.name, c)) for s in sections for c in s.charts}
    have: dict[str, str] = {}
    if want and derived.columns(con, TABLE):
        have = dict(con.execute(f"SELECT key, svg FROM {TABLE} WHERE key IN (SELECT unnest(?::VARCHAR[]))",
                                [[k for _, _, k in want.values()]]).fetchall())
    out, new = {}, []
    for name, (section, chart, k) in want.items():
        if k not in have:
            have[k] = svg(figures.draw(section, chart.name, chart.data))
            new.append((name, k, have[k]))
        out[name] = have[k]
    if new:
        derived.replace_rows(con, TABLE, pa.table({"name": [n for n, _, _ in new], "key": [k for _, k, _ in new],
                                                   "svg": [d for _, _, d in new]}),
                             "name IN (SELECT unnest(?::VARCHAR[]))", [[n for n, _, _ in new]])
    return out
