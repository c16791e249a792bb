"""[keyword] as a typed value, ``KeywordSettings.of(cfg)``: one field per key of the section the analyzer's declaration
lists (the registry checks they agree), so mypy rejects a misspelled key."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class KeywordSettings(Settings):
    section = "keyword"

    fallback_enabled: bool
    top_k: int
    tokenizer: str
