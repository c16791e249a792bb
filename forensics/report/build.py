"""Run the selected analyzers over a warehouse and collect their sections (secrets already masked)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any


from forensics import analyzers
from forensics.analyzers.base import Context, Finding, Section, Table
from forensics.config import Config, load_config
from forensics.errors import WarehouseError
from forensics.redact import mask_frame, redact, redact_value
from forensics.report import memory_charts
from forensics.selection import Selection
from forensics.warehouse import open_warehouse, set_memory_limit

METRICS_SCHEMA_VERSION = 1
DRAWERS = {"memory": memory_charts.charts}
REPORT_MEMORY = "192MB"  # DuckDB's share of a report's memory (bench: the whole tree of a million-message report < 1 GB)


def toolkit_version() -> str:
    try:
        return version("forensics")
    except PackageNotFoundError:
        return "0+unknown"


@dataclass
class Report:
    meta: dict[str, Any]
    sections: list[Section] = field(default_factory=list)

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)


def build_report(db: str | os.PathLike[str], cfg: Config | None = None, selection: Selection | None = None,
                 only: str | list[str] | None = None, labels: str | None = None,
                 questions: str | None = None) -> Report:
    """Analyze the warehouse at ``db``; ``only`` names analyzers (default: all registered); ``labels`` a labels
    file analyzers may score themselves against; ``questions`` a question file the memory analyzer replays."""
    cfg = cfg or load_config()
    selection = selection or Selection()
    names = analyzers.parse_only(",".join(only) if isinstance(only, list) else only)
    if not Path(db).exists():
        raise WarehouseError(f"{db}: no warehouse here; run `forensics ingest SOURCE --db {db}` first")
    with open_warehouse(db) as wh:  # writable: analyzers keep their derived tables in the warehouse
        # DuckDB would otherwise keep up to 80 % of RAM as cache across the analyzers; beyond this it spills
        set_memory_limit(wh.con, REPORT_MEMORY)
        ctx = Context.open(wh.con, cfg, selection, labels, questions)
        meta = {"schema_version": METRICS_SCHEMA_VERSION, "toolkit_version": toolkit_version(),
                "generated_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
                "warehouse": str(db), "config": str(cfg.path) if cfg.path else None,
                "selection": selection.describe(), "label": selection.label, "conversations": ctx.selected,
                "analyzers": names, "labels": labels, "questions": questions}
        report = Report(meta)
        for name in names:
            report.sections.append(_masked(_drawn(analyzers.load(name).run(ctx))))
    return report


def _drawn(sec: Section) -> Section:
    """The charts the report layer draws from a section's tidy tables (analyzers that return data, not figures)."""
    draw = DRAWERS.get(sec.name)
    if draw is not None:
        sec.charts += draw(sec)
    return sec


def _masked(sec: Section) -> Section:
    """Mask secrets in every string a section carries (tables, findings, grids, metrics)."""
    sec.summary = redact(sec.summary)
    sec.grid = [[redact(c) for c in row] for row in sec.grid]
    sec.tables = [Table(t.name, t.caption, mask_frame(t.df)) for t in sec.tables]
    sec.findings = [Finding(f.kind, f.severity, f.conversation_id, f.native_id, f.positions, redact(f.summary), f.rule)
                    for f in sec.findings]
    sec.metrics = redact_value(sec.metrics)
    return sec
