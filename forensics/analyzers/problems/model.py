"""A problem a reviewer flags (docs/definitions.md#problems-a-reviewer-flags): its kind, where it shows, a verbatim quote, the rule and the norm."""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = (
    "lost_focus",
    "context_crowded",
    "user_repeated",
    "instruction_violated",
    "redundant_work",
    "loop",
    "gave_up_or_false_success",
    "frustration",
)
QUOTE = 100  # characters of a quote at most


@dataclass
class Problem:
    conversation_id: str
    kind: str
    positions: list[int]  # main-path positions that show it, in order; the first is the finding's position
    quote: str  # verbatim from the message (or the call's arguments) at one of the positions
    rule: str  # the rule that fired, by name
    norm: str  # what it was held against

    @property
    def position(self) -> int:
        return self.positions[0]


def quote_at(text: str, m: re.Match[str] | None = None, width: int = QUOTE) -> str:
    """A verbatim slice of ``text`` around the match (else its start), on one line where the text allows: the
    line that holds the match, cut to ``width`` characters."""
    if not text:
        return ""
    start, end = (m.start(), m.end()) if m else (0, 0)
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    line_start = max(line_start, end - width if end - width > line_start else line_start)
    if 0 < line_start < start and text[line_start - 1].isalnum() and text[line_start].isalnum():
        # cut inside a word: begin at the next word ("lument. J'ai …" reads as "J'ai …")
        line_start = next((k + 1 for k in range(line_start, start) if text[k].isspace()), line_start)
    s = text[line_start:line_end]
    if len(s) > width:
        cut = s[:width]
        space = cut.rfind(" ")
        # cut inside a word: end at the word before, where the match is still whole
        s = cut[:space] if cut[-1].isalnum() and s[width].isalnum() and space >= end - line_start else cut
    s = s.strip()
    return s if s else text[:width].strip()
