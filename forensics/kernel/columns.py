"""Aligned text tables that fit a terminal: long values keep their start and end with the middle elided (issue 47)."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Collection, Sequence

GAP = "  "
NARROWEST = 6  # an elided column keeps at least this many characters (its start, "…", its end)


UNBOUNDED = 1_000_000  # a pipe, a file or a CI log: whole values, greppable


def terminal_width() -> int:
    """The columns to fit: $COLUMNS when set, else the terminal's; ``UNBOUNDED`` when the output is no terminal
    or a CI job's ($CI set)."""
    if "COLUMNS" not in os.environ and (not sys.stdout.isatty() or os.environ.get("CI")):
        return UNBOUNDED  # a CI job may run under a pseudo-terminal: its log keeps whole values too
    return shutil.get_terminal_size((120, 24)).columns


def middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: its start and its end around "…" (a path keeps its file name)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def aligned(rows: Sequence[Sequence[str]], width: int | None = None, elide: Collection[int] = ()) -> str:
    """``rows`` (the header first) as left-aligned columns in at most ``width`` characters a line: the widest of the
    ``elide`` columns lose their middles first, down to ``NARROWEST`` or their header's width (a header is never cut);
    the others are never cut, so a line may still be wider when the kept columns alone are."""
    width = terminal_width() if width is None else width
    widths = [max((len(r[i]) for r in rows), default=0) for i in range(len(rows[0]))] if rows else []
    over = sum(widths) + len(GAP) * (len(widths) - 1) - width
    while over > 0:
        shrinkable = [i for i in elide if widths[i] > max(NARROWEST, len(rows[0][i]))]
        if not shrinkable:
            break
        i = max(shrinkable, key=lambda j: widths[j])
        widths[i] -= 1
        over -= 1
    return "\n".join(GAP.join(middle(v, w).ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows)


def described(name: str, description: str, indent: int, width: int | None = None) -> str:
    """One ``name`` (padded to ``indent``) and its ``description`` wrapped under itself within ``width``."""
    width = terminal_width() if width is None else width
    return textwrap.fill(
        description,
        width=max(width, indent + 20),
        initial_indent=name.ljust(indent),
        subsequent_indent=" " * indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
