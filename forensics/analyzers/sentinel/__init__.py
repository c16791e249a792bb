"""Sentinel compliance (SPEC §9, seed 000 §三): classify every final reply, replay the per-model compliance
state machine over history, find each degraded conversation's onset and whether it led visible failure.

The analyzer entry point is ``run``; ``classify``, ``strip_for_display``, ``ComplianceTracker`` and
``window_sweep`` are the library twins a notebook or `forensics tune` calls directly.
"""
from forensics.analyzers.sentinel.classify import Sentinel, Verdict, classify, strip_for_display
from forensics.analyzers.sentinel.section import FACTS, NAME, TITLE, run
from forensics.analyzers.sentinel.state import ComplianceTracker, compliance_key
from forensics.analyzers.sentinel.sweep import window_sweep
from forensics.analyzers.sentinel.tables import build_tables

__all__ = ["FACTS", "NAME", "TITLE", "ComplianceTracker", "Sentinel", "Verdict", "build_tables", "classify",
           "compliance_key", "run", "strip_for_display", "window_sweep"]
