"""[compaction] as a typed value, ``CompactionSettings.of(cfg)``: one field per key of the section the analyzer's declaration
lists (the registry checks they agree), so mypy rejects a misspelled key."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class CompactionSettings(Settings):
    section = "compaction"

    max_tokens: int
    keep_recent: int
    summary_tokens: int
    constraint_patterns: list[str]
    clause_openers: list[str]
    decision_patterns: list[str]
    task_patterns: list[str]
    error_patterns: list[str]
    not_triggers: list[str]
    summary_patterns: list[str]
    carry_share: float
    repeat_share: float
