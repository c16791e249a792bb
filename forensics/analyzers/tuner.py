"""The kit a tuner is written with: what it is handed (``TuneContext``), what it returns (``Recommendation``) and
the few words and bounds several tuners share. A tuner is a function ``(TuneContext) -> list[Recommendation]`` in its
analyzer's package (``tune.py`` beside the analyzer), named by the analyzer's declaration (``Analyzer.tuners``);
`forensics tune` and the report's *What to change* (``forensics.tuning``) run the declared ones. It computes by
sweeping the warehouse through its analyzer's own functions (never a second copy of a metric)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb

from forensics.analyzers.base import Context
from forensics.config import Config


@dataclass
class Recommendation:
    key: str  # section.name
    current: Any
    recommended: Any
    evidence: str
    effect: str = ""  # what applying it is expected to change, where the tuner can say (shown by the report)

    @property
    def changed(self) -> bool:
        return bool(self.recommended != self.current)


@dataclass
class TuneContext:
    con: duckdb.DuckDBPyConnection
    cfg: Config
    analysis: Context  # the analyzers' Context over every conversation (to run an analyzer a tuner sweeps)
    labels: str | None = None
    target_tool_share: float = 0.6
    min_precision: float = 0.7
    worst_pct: float = 10.0
    marker_rate: float = 0.05
    max_outside_share: float = 0.25  # compaction: needs after a compaction that may concern a fact outside the window
    questions: str | None = None  # a decision-memory question file: the [memory] retrieval keys are fitted on it
    fresh: tuple[str, ...] = ()  # the analyzers whose tables the report just wrote: tuners read those as they are


TunerFn = Callable[[TuneContext], list[Recommendation]]


def pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def lower_bound(p: float, n: int, z: float = 1.645) -> float:
    """Wilson's one-sided 95 % lower bound of a precision ``p`` measured on ``n`` markers (0 with none)."""
    if n == 0:
        return 0.0
    return (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
