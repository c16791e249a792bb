"""Every derived table of the warehouse: the report's own (its findings, runs, charts and the report it keeps whole)
and those the analyzers declare (``forensics.analyzers.derived_tables``). docs/warehouse.md lists them, `forensics
export` leaves out the ones that only hold what a report keeps to reuse.

    python -m forensics.report.tables > docs/warehouse.md     (a test fails when the file is stale)
"""

from __future__ import annotations

from forensics import analyzers
from forensics.warehouse import docs
from forensics.warehouse.derived import KEPT_TABLE, Table

REPORT = (
    Table("report_findings", "selection", "every finding of the report's analyzers, with its positions"),
    Table("report_conversations", "selection", "per conversation: its label and the baseline figures"),
    Table("report_runs", "log", "one row per report: time, selection, analyzers, the digest as JSON"),
    Table(
        "report_charts", "cache", "per chart: the SVG last drawn and the hash of its data and drawing code", reuse=True
    ),
    Table(
        KEPT_TABLE,
        "cache",
        "the last report whole, under a digest of all it read; dead after any other writer "
        "opens the warehouse (``forensics.report.kept``)",
        reuse=True,
    ),
)


def every() -> list[tuple[str, Table]]:
    """(writer, table) of every derived table, by name: ``report`` or the analyzer that declares it."""
    return sorted([*(("report", t) for t in REPORT), *analyzers.derived_tables()], key=lambda wt: wt[1].name)


def kept_only() -> set[str]:
    """The tables that hold only what a report keeps to reuse: no data of their own."""
    return {t.name for _, t in every() if t.reuse}


if __name__ == "__main__":
    print(docs.render(every()), end="")
