"""A run's errors (``signature``): the error template of each of its tool outputs that shows one, and its recurring
error. Each output's error line and template are the one reader's, ``forensics.text.error_lines`` (its docstring
says what the line and the template are); a run's recurring error is its most frequent template (the earliest among
equals).
"""

from __future__ import annotations

from forensics.analyzers.signature.reading import Msg, is_output
from forensics.text.error_lines import error_line, template


def errors(msgs: list[Msg]) -> list[tuple[int, str]]:
    """(position, template) of every error a tool output of the run shows, in order."""
    out = []
    for m in msgs:
        if is_output(m):
            line = error_line(m.text, m.error)
            if line is not None:
                out.append((m.position, template(line)))
    return out


def occurrences(errs: list[tuple[int, str]]) -> dict[str, list[int]]:
    """The positions of each error template, in order, templates by first occurrence: what "the same error
    again" means for the signature here and for the problems' ``same_error_N_times`` loop."""
    out: dict[str, list[int]] = {}
    for p, t in errs:
        out.setdefault(t, []).append(p)
    return out


def recurring(errs: list[tuple[int, str]]) -> tuple[str | None, int | None, int]:
    """(template, first position, count) of the run's most frequent error; (None, None, 0) without errors."""
    if not errs:
        return None, None, 0
    seen = occurrences(errs)
    best = max(seen, key=lambda t: (len(seen[t]), -seen[t][0]))
    return best, seen[best][0], len(seen[best])
