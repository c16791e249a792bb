"""[tool_result] as a typed value, ``ToolResultSettings.of(cfg)``: one field per key of the section the analyzer's declaration
lists (the registry checks they agree), so mypy rejects a misspelled key."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.config import Settings


@dataclass(frozen=True)
class ToolResultSettings(Settings):
    section = "tool_result"

    compress_enabled: bool
    summarize_bytes: int
    summarize_share: float
    head_tail_lines: int
