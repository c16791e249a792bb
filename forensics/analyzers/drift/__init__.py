"""Drift phenomena (SPEC §5, seed 001 §三): the `drift` analyzer (``section``) and the rules behind it, one module
per kind of evidence: ``corpus`` (a request's targets against its agent's norm), ``interleave`` (the lag after a
topic switch), ``rediscovery`` (what compaction dropped and the conversation needed again), ``targets`` (what a
request reads)."""
from forensics.analyzers.drift.section import FACTS, KINDS, NAME, TITLE, run

__all__ = ["FACTS", "KINDS", "NAME", "TITLE", "run"]
