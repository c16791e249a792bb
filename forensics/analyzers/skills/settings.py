"""[skills] as a typed value, ``SkillsSettings.of(cfg)``: one field per key of the section the analyzer's declaration
lists (the registry checks they agree), so mypy rejects a misspelled key."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class SkillsSettings(Settings):
    section = "skills"

    triggers: str
    tools: list[str]
    argument_keys: list[str]
