"""What a run's failure signature is made of (docs/definitions.md#failure-analysis): how it ended and its recurring error as a template
(the step where it went wrong is ``failures.decisive``'s). A package of its own, read by the failures analyzer
and by the outcome analyzer's run ranking (which runs before it).

Its modules, by what they do:

- ``reading``: a run's main-path messages read from the warehouse (``Msg``, ``stream``, ``messages``), cut before
  the first text that reveals the grade (``GRADE_REVEALING``);
- ``error_lines``: a run's errors and its recurring one (``errors``, ``recurring``), each the template of the line
  that names the error of a tool output (``error_line``, ``template``: the one reader of error lines,
  ``forensics.text.error_lines``, whose names this package gives too);
- ``ends``: how the run ended (``ended``, ``ENDINGS``; ``done``: the runs that handed their work over);
- ``waiting``: the turns that wait on a process the run started, a sub-agent or a worker it polls (``waiting``);
- ``asked``: the turns whose request asks for breadth, all of something or many things named (``asked``).

The names the rest of the toolkit reads are this package's too (``__all__``), as callers import them.
"""

from __future__ import annotations

from forensics.analyzers.signature.asked import asked, asks_wide
from forensics.analyzers.signature.ends import BAD_ENDS, DONE_ENDS, GRADE_REVEALING_ENDS, done, ended, handed_in
from forensics.analyzers.signature.error_lines import errors, occurrences, recurring
from forensics.analyzers.signature.reading import GRADE_REVEALING, TEXT_CHARS, Msg, is_output, messages, stream
from forensics.analyzers.signature.waiting import POLL, waiting
from forensics.text.error_lines import (
    CODE_LINE,
    ERROR_LINE,
    ERROR_WORDS,
    EXCEPTION_LINE,
    FAILED_EXIT,
    PREAMBLE,
    TEMPLATE_CHARS,
    error_line,
    is_code_line,
    is_error_line,
    template,
)

__all__ = [
    "BAD_ENDS",
    "DONE_ENDS",
    "CODE_LINE",
    "ERROR_LINE",
    "ERROR_WORDS",
    "EXCEPTION_LINE",
    "FAILED_EXIT",
    "GRADE_REVEALING",
    "GRADE_REVEALING_ENDS",
    "Msg",
    "POLL",
    "PREAMBLE",
    "TEMPLATE_CHARS",
    "TEXT_CHARS",
    "asked",
    "asks_wide",
    "done",
    "ended",
    "error_line",
    "errors",
    "handed_in",
    "is_code_line",
    "is_error_line",
    "is_output",
    "messages",
    "occurrences",
    "recurring",
    "stream",
    "template",
    "waiting",
]
