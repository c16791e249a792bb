"""Sentinel compliance (docs/definitions.md#sentinel-compliance): classify every final reply, replay the per-model compliance
state machine over history, find each degraded conversation's onset and whether it led visible failure.

The analyzer entry point is ``run``; ``classify``, ``strip_for_display``, ``ComplianceTracker`` and
``window_sweep`` are the library twins a notebook or `forensics tune` calls directly.
"""

from forensics.analyzers.declare import Analyzer, Mark, Tuner
from forensics.analyzers.facts import Fact
from forensics.analyzers.keys import sentinel as declared
from forensics.analyzers.sentinel import draw, tune
from forensics.analyzers.sentinel.section import FACTS, NAME, TITLE, run
from forensics.analyzers.sentinel.settings import SentinelSettings
from forensics.analyzers.sentinel.state import ComplianceTracker, compliance_key
from forensics.analyzers.sentinel.sweep import window_sweep
from forensics.analyzers.sentinel.tables import build_tables, failures, judged, turns
from forensics.analyzers.sentinel.verdict import Sentinel, Verdict, classify, strip_for_display
from forensics.warehouse import derived

__all__ = [
    "ANALYZER",
    "FACTS",
    "NAME",
    "TITLE",
    "ComplianceTracker",
    "Sentinel",
    "Verdict",
    "build_tables",
    "classify",
    "compliance_key",
    "run",
    "strip_for_display",
    "window_sweep",
]


ANALYZER = Analyzer(
    NAME,
    TITLE,
    run,
    sections=declared.SECTIONS,
    keys=declared.KEYS,
    facts=(
        Fact(
            "sentinel_judged",
            judged,
            ("created_at", "native_id", "conversation_id", "position"),
            cached=True,
            shadows=("conversations", "messages", "tool_calls"),
        ),
        Fact("sentinel_turns", turns, ("conversation_id",)),
        Fact("sentinel_failures", failures, ("conversation_id", "position", "kind")),
    ),
    reads=FACTS,
    tuners=(Tuner(tune.sentinel_window, ("sentinel.compliance_window",)),),
    marks=(Mark("sentinel_replies", ("status", "drifted")),),
    charts={"status_over_turns": draw.status_over_turns, "onset_by_context": draw.onset_by_context},
    engines=("duckdb", "spark"),
    maps=("models", "degraded"),
    tables=(
        derived.Table("sentinel_replies", "whole", "each judged reply and its compliance state"),
        derived.Table("sentinel_models", "whole", "per model: replies, compliance, state"),
        derived.Table("sentinel_conversations", "whole", "per conversation: the sentinel's verdict"),
    ),
    settings=(SentinelSettings,),
)
