"""Drift's tuner (the fitting is ``forensics.analyzers.drift.fit``): ``(TuneContext) -> [Recommendation]``, named by the declaration (``Analyzer.tuners``)."""

from __future__ import annotations

from forensics.analyzers.drift.settings import DriftSettings
from forensics.analyzers.tuner import Recommendation, TuneContext


def drift(t: TuneContext) -> list[Recommendation]:
    """[drift] thresholds fitted on one kind of agent (``forensics.analyzers.drift.fit``), on facts read afresh over every
    conversation (a harness tuner before may have read them over its own logs only)."""
    from dataclasses import replace

    from forensics.analyzers.drift.fit import fit

    return [
        Recommendation(f"drift.{r.key}", r.current, r.recommended, r.evidence, r.effect)
        for r in fit(replace(t.analysis, facts=None, memo={}), DriftSettings.of(t.cfg), t.worst_pct / 100)
    ]
