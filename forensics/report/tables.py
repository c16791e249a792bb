"""Every derived table of the warehouse: the report's own (its findings, runs, charts and the whole-report cache)
and those the analyzers declare (``forensics.analyzers.derived_tables``). docs/warehouse.md lists them, `forensics
export` leaves out the caches: tables that only hold what a report reuses.

    python -m forensics.report.tables > docs/warehouse.md     (a test fails when the file is stale)
"""

from __future__ import annotations

from forensics import analyzers
from forensics.warehouse import docs
from forensics.warehouse.derived import REPORT_CACHE, Table

REPORT = (
    Table("report_findings", "selection", "every finding of the report's analyzers, with its positions"),
    Table("report_conversations", "selection", "per conversation: its label and the baseline figures"),
    Table("report_runs", "log", "one row per report: time, selection, analyzers, the digest as JSON"),
    Table(
        "report_charts", "cache", "per chart: the SVG last drawn and the hash of its data and drawing code", reuse=True
    ),
    Table(
        REPORT_CACHE,
        "cache",
        "the last report whole, under a digest of all it read; dead after any other writer "
        "opens the warehouse (``forensics.report.cache``)",
        reuse=True,
    ),
)


def every() -> list[tuple[str, Table]]:
    """(writer, table) of every derived table, by name: ``report`` or the analyzer that declares it."""
    return sorted([*(("report", t) for t in REPORT), *analyzers.derived_tables()], key=lambda wt: wt[1].name)


def cache_only() -> set[str]:
    """The caches: tables that hold only what a report reuses, no data of their own."""
    return {t.name for _, t in every() if t.reuse}


if __name__ == "__main__":
    print(docs.render(every()), end="")
