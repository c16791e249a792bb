"""[sentinel] as a typed value, ``SentinelSettings.of(cfg)``: one field per key of the section the analyzer's declaration
lists (the registry checks they agree), so mypy rejects a misspelled key."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class SentinelSettings(Settings):
    section = "sentinel"

    enabled: bool
    marker: str
    tokens: list[str]
    compliance_window: int
    correction_words: list[str]
    closing: str
    tool_error_patterns: list[str]
