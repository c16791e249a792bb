"""[baseline] as a typed value, ``BaselineSettings.of(cfg)``: one field per key of the section the analyzer's declaration
lists (the registry checks they agree), so mypy rejects a misspelled key."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class BaselineSettings(Settings):
    section = "baseline"

    continue_words: list[str]
    short_user_chars: int
    pushback_patterns: list[str]
    parallel_calls: int
