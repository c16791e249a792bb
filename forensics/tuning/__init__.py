"""`forensics tune`: a recommended value per tunable the data can speak to, each with its evidence.

A tuner is a function ``(TuneContext) -> list[Recommendation]`` listed in TUNERS; it computes by sweeping
the warehouse through the analyzers' own functions (never a second copy of a metric). Nothing is written
unless the user asks (`--write`, see tuning.write).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb

from forensics.config import SCHEMA, Config
from forensics.selection import Selection
from forensics.warehouse import open_warehouse


@dataclass
class Recommendation:
    key: str  # section.name
    current: Any
    recommended: Any
    evidence: str

    @property
    def changed(self) -> bool:
        return self.recommended != self.current


@dataclass
class TuneContext:
    con: duckdb.DuckDBPyConnection
    cfg: Config
    analysis: Any  # the analyzers' Context over every conversation (to run an analyzer a tuner sweeps)
    labels: str | None = None
    target_tool_share: float = 0.6
    min_precision: float = 0.7
    worst_pct: float = 10.0
    marker_rate: float = 0.05
    questions: str | None = None  # a decision-memory question file: the [memory] retrieval keys are fitted on it


@dataclass
class TuneResult:
    recommendations: list[Recommendation] = field(default_factory=list)
    conversations: int = 0
    messages: int = 0

    def values(self, cfg: Config) -> dict[str, Any]:
        """Every config value with the recommendations applied."""
        vals = {k.path: cfg[k.path] for k in SCHEMA}
        vals.update({r.key: r.recommended for r in self.recommendations})
        return vals


Tuner = Callable[[TuneContext], list[Recommendation]]
TUNERS: list[Tuner] = []


def tuner(fn: Tuner) -> Tuner:
    TUNERS.append(fn)
    return fn


def tune(db: str | os.PathLike[str], cfg: Config, **options: Any) -> TuneResult:
    """Run every tuner over the warehouse at ``db`` (opened writable: analyzers refresh derived tables)."""
    from forensics.tuning import tuners  # noqa: F401 - registers the tuners

    with open_warehouse(db) as wh:
        from forensics.analyzers.base import Context

        ctx = TuneContext(wh.con, cfg, Context.open(wh.con, cfg, Selection()), **options)
        result = TuneResult()
        result.conversations, result.messages = wh.con.execute(
            "SELECT count(DISTINCT conversation_id), count(*) FROM messages WHERE on_main_path").fetchall()[0]
        for fn in TUNERS:
            result.recommendations.extend(fn(ctx))
    return result
