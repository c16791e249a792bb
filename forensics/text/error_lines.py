"""The error lines of a text and their templates: the one reader of error lines, for the failure signature
(``analyzers.signature``: a run's errors and its recurring one), the problems analyzer (``problems.actions``: how a
failed call failed; ``problems.pasted``: the errors a person pastes back) and the topics' reading of a pasted log
(``topics.work.pasted_log``). ``error_line``: the line that names the error of a tool output; ``error_lines``: every
line of a text that names one (a person's paste, which may hold many); ``lint_errors``: the errors a linter lists
under "ERRORS:" (a refused edit's, read by ``problems.actions`` only: the failure signature does not read them).

**The error template**: of each error text (a tool result the warehouse flags as an error, or whose text holds
an error line), the line that names the error: the last exception line (``KeyError: 'x'``), else an
``error:``/``fatal:`` line that is no line of code mentioning an error (``is_code_line``: a source file a tool
shows holds ``console.debug('init failed:', error.code);``, comments, throws), a shell error (``/bin/bash: line 3: foo: command not found``), ``No such file``,
``Permission denied``, ``command not found``, a timeout; a preamble (``Traceback (most recent call last):``,
``exitcode: 1 (execution failed)``, ``Code output:``) is never the template, so three causes behind one preamble
stay three. Then masked, so one cause phrased with other values is one template: quoted values ``'<q>'``, paths
``<path>``, URLs ``<url>``, UUIDs and hex ``<hex>``, numbers ``<n>``, whitespace collapsed, lower case.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

PREAMBLE = re.compile(
    r"^\s*(?:traceback \(most recent call last\):|exitcode: ?-?\d+.*|code output:\s*|"
    r"stderr:?\s*|stdout:?\s*|output:\s*|observation:\s*|during handling of the above exception.*|"
    r"the above exception was the direct cause.*)\s*$",
    re.I,
)
EXCEPTION_LINE = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Warning)\b.*$")
ERROR_LINE = re.compile(
    r"^\s*(?:/bin/(?:ba)?sh: .*|.*\b(?:error|fatal|failed|failure)\b\s*[:!].*|.*command not found.*|"
    r".*no such file or directory.*|.*permission denied.*|.*\btimed? ?out\b.*|.*\bnot found\b.*|"
    r"\s*timeout\s*)$",
    re.I,
)
# what a line must hold for EXCEPTION_LINE (case as written) or ERROR_LINE (in any case, as re.I reads it) to match:
# looked for first, so that the patterns run only on lines that can match
EXCEPTION_WORDS = ("Error", "Exception", "Exit", "Interrupt", "Failure", "Warning")
ERROR_WORDS = ("error", "fatal", "fail", "not found", "no such file", "permission denied", "time", "/bin/")
_ERROR_WORDS = re.compile("|".join(map(re.escape, ERROR_WORDS)), re.I)
_EXCEPTION_WORDS = re.compile("|".join(map(re.escape, EXCEPTION_WORDS)))
# the characters other than ASCII that re.I matches to an ASCII letter (İ, ı, ſ, K), or whose case mapping holds one
# (ß, the ligatures ...): a text without them holds a word of ERROR_WORDS in any case, as re.I reads it, exactly where
# its ``str.lower()`` holds it (tests/test_failures.py derives the set from every code point): ß İ ı ŉ ſ ǰ ẖ ẗ ẘ ẙ ẚ,
# the Kelvin sign and the ligatures ﬀ to ﬆ
FOLDS_TO_ASCII = (
    "\u00df\u0130\u0131\u0149\u017f\u01f0\u1e96\u1e97\u1e98\u1e99\u1e9a\u212a\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06"
)
_FOLDS_TO_ASCII = re.compile(f"[{FOLDS_TO_ASCII}]")
_NO_ERRORS = re.compile(r"\b(?:0|no) (?:errors?|failures?)\b", re.I)
# ERROR_LINE as Python's re runs it fast (its ``.*`` before each alternative backtracks over every position):
# a shell's error at the start, or one of the other alternatives anywhere (tests/test_failures.py holds it to
# ERROR_LINE line for line)
_SHELL_ERROR = re.compile(r"\s*/bin/(?:ba)?sh: ", re.I)
_ERROR_IN = re.compile(
    r"\b(?:error|fatal|failed|failure)\b\s*[:!]|command not found|no such file or directory|permission denied|"
    r"\btimed? ?out\b|\bnot found\b",
    re.I,
)
_ERROR_IN_LOW = re.compile(_ERROR_IN.pattern)  # over a lower-cased line that reads as re.I does (``_folded``)
# a line of code that names an error without being one (``is_code_line``): a comment, a throw or raise, a call that
# builds or prints one, a catch clause, a read of an error's property, a statement ("throw new Error(`... not found`)", "-- Avoid showing the error if ... not found",
# 'vim.notify("Error: " .. result)')
CODE_LINE = re.compile(
    r"^\s*(?:#|//|--|/?\*|<!--)|\b(?:throw|raise|echo|printf?|return)\b|\b(?:console|log|logger|fmt|t)\.\w+\(|"
    r"\w(?:Error|Exception)\(|=>|[;{]\s*$|\w\s*\([^)\n]*[\"'][^\"'\n]*(?i:error|fail|not found)|"
    # a catch clause, an error built with ``new``, an error's property read (``error.code``, ``err?.message``)
    r"\bcatch\s*\(|\bnew\s+[\w.]*(?:Error|Exception)\(|\b(?:err|error|\w+Error)\??\.(?:code|message|stack|status|response)\b"
)
FAILED_EXIT = re.compile(r"(?:exit ?code|exit status|returncode|return code)[\s:=]+(-?\d+)", re.I)

MASKS = [
    (re.compile(r"https?://\S+"), "<url>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<hex>"),
    (re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`|‘[^’\n]{0,200}’|“[^”\n]{0,200}”"), "'<q>'"),
    (re.compile(r"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?|(?:[\w.-]+/)+[\w.-]+\.\w+"), "<path>"),
    (re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", re.I), "<hex>"),
    (re.compile(r"\b[A-Za-z]+[-_]?\d[\w-]*\b"), "<id>"),  # ids that mix letters and digits: task-42, run_7a
    (re.compile(r"-?\b\d+(?:\.\d+)?\b"), "<n>"),
]
TEMPLATE_CHARS = 160
LEAD_IN = re.compile(r"^(?:code output|output|stderr|stdout|observation|result)\s*:\s*", re.I)


def error_line(text: str, flagged: bool = False) -> str | None:
    """The line that names the error of a tool output, or None when it shows none (see the module docstring).
    ``flagged``: the warehouse already says it is an error (then the first line that is no preamble will do)."""
    head = text[:400]
    # a text without FOLDS_TO_ASCII holds an ASCII word in any case (as re.I reads it) exactly where its lower case
    # holds it, and so does every part of it: looked for once, not in the head, the text and its lines each
    plain = text.isascii() or _FOLDS_TO_ASCII.search(text) is None
    folded = head.lower() if plain else None  # FAILED_EXIT needs "exit" or "return" (in any case): looked for first
    exits = FAILED_EXIT.search(head) if folded is None or "exit" in folded or "return" in folded else None
    failed_exit = exits is not None and int(exits.group(1)) not in (0, -1)
    if not (flagged or failed_exit or _may_be_exception(text) or _may_be_error(text, plain)):
        return None
    lines = [ln for ln in text.splitlines()[:400] if ln.strip()]
    # the lines that hold a word the patterns need, found over the lines joined by line breaks (no word spans one)
    # instead of by a test per line: the per-line loops were most of the failures analyzer
    joined = "\n".join(lines)
    for i in reversed(_exception_word_lines(joined)):
        ln = lines[i]
        if EXCEPTION_LINE.match(ln) and not PREAMBLE.match(ln):
            return ln.strip()
    for i, low in _error_word_lines(lines, joined, plain):
        ln = lines[i]
        if (
            (_shell_error(ln, low) or (_error_in(ln, low) and not is_code_line(ln)))
            and not PREAMBLE.match(ln)
            and not _NO_ERRORS.search(ln)
        ):
            return ln.strip()
    if flagged or failed_exit:
        rest = [ln for ln in lines if not PREAMBLE.match(ln)]
        return rest[0].strip() if rest else (lines[0].strip() if lines else "(empty error)")
    return None


def _shell_error(line: str, low: str | None) -> bool:
    """``_SHELL_ERROR.match(line)``; ``low``: the line's lower case where it reads as re.I does (``_folded``), or
    None. Every match holds "/bin/" in any case: a line whose lower case lacks it is not matched."""
    return (low is None or "/bin/" in low) and _SHELL_ERROR.match(line) is not None


def _error_in(line: str, low: str | None) -> bool:
    """``_ERROR_IN.search(line)``, searched without re.I in the line's lower case ``low`` when there is one (the
    case-folding search costs half as much again)."""
    return (_ERROR_IN.search(line) if low is None else _ERROR_IN_LOW.search(low)) is not None


def _exception_word_lines(joined: str) -> list[int]:
    """The indexes, ascending, of the lines of ``joined`` (lines joined by line breaks) holding one of
    EXCEPTION_WORDS (as written)."""
    out: list[int] = []
    line = last = 0
    for m in _EXCEPTION_WORDS.finditer(joined):
        line += joined.count("\n", last, m.start())
        last = m.start()
        if not out or out[-1] != line:
            out.append(line)
    return out


def _error_word_lines(lines: list[str], joined: str, plain: bool = True) -> Iterator[tuple[int, str | None]]:
    """The indexes, ascending, of the ``lines`` (``joined`` by line breaks) holding one of ERROR_WORDS in any
    case (``_may_be_error``'s answer for each line), each with the line's lower case where it reads as re.I does
    (else None), found as they are asked for: on text without FOLDS_TO_ASCII (``plain``: ASCII text, Chinese text
    ...), the next occurrence of each word in the text folded to lower case (re.I's search over the whole text costs
    three times the per-line test; a test per line was a tenth of the failures analyzer's reading on the bench
    corpus, two thirds of whose outputs hold Chinese)."""
    low = joined.lower() if plain else None
    if low is None:
        yield from ((i, None) for i, ln in enumerate(lines) if _may_be_error(ln))
        return
    at = {w: low.find(w) for w in ERROR_WORDS}
    line = last = 0
    while True:
        pos = min((p for p in at.values() if p >= 0), default=-1)
        if pos < 0:
            return
        line += low.count("\n", last, pos)
        last = pos
        end = low.find("\n", pos)
        yield line, low[low.rfind("\n", 0, pos) + 1 : end if end >= 0 else len(low)]
        if end < 0:
            return
        for w, p in at.items():
            if 0 <= p < end:
                at[w] = low.find(w, end + 1)


def _may_be_exception(text: str) -> bool:
    return any(w in text for w in EXCEPTION_WORDS)


def _may_be_error(text: str, plain: bool | None = None) -> bool:
    """Whether ``text`` holds one of ERROR_WORDS in any case (re.I's: on text ``_folded`` reads, ``str.lower`` is the
    same); ``plain``: whether it does read it (None: found here)."""
    low = _folded(text) if plain is None else text.lower() if plain else None
    if low is not None:
        return any(w in low for w in ERROR_WORDS)
    return _ERROR_WORDS.search(text) is not None


def _folded(text: str) -> str | None:
    """``text.lower()`` where an ASCII word is in it in any case (as re.I reads it) exactly where it is in its lower
    case (ASCII text, or text without FOLDS_TO_ASCII; line breaks stay where they were); None otherwise."""
    if text.isascii() or _FOLDS_TO_ASCII.search(text) is None:
        return text.lower()
    return None


def _may_name_error(text: str) -> bool:
    """Whether some line of ``text`` may match EXCEPTION_LINE or ERROR_LINE (False: none does)."""
    return _may_be_exception(text) or _may_be_error(text)


def is_error_line(line: str) -> bool:
    """``ERROR_LINE.match(line)`` for a line of ``str.splitlines`` (no line break in it), without its backtracking."""
    return _may_be_error(line) and (_SHELL_ERROR.match(line) is not None or _ERROR_IN.search(line) is not None)


def is_code_line(line: str) -> bool:
    """Whether ``line`` is a line of code that names an error without being one (``CODE_LINE``: a comment, a throw, a
    ``console.*(`` call, a statement ending in ``;`` or ``{``...): a source file shown by a tool, code pasted by a
    person. A shell's own error line (``/bin/sh: 1: echo: not found``) is output, never code."""
    return CODE_LINE.search(line) is not None and _SHELL_ERROR.match(line) is None


def template(line: str) -> str:
    """An error line with its values masked (see the module docstring)."""
    t = LEAD_IN.sub("", line.strip())
    for pattern, mask in MASKS:
        t = pattern.sub(mask, t)
    return re.sub(r"\s+", " ", t).lower()[:TEMPLATE_CHARS]


# a compiler's or a server's error that ``error_line`` does not read as one: a code between "error" and the colon
# (tsc, Angular, rustc, C#), an HTTP status of 400 or more
COMPILER_ERROR = re.compile(r"\berror\s*(?:\[[A-Z]{0,3}\d{3,5}\]|[A-Z]{1,4}\d{3,5})\s*:", re.I)
HTTP_ERROR = re.compile(r"\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?: code)?:?)\s*[45]\d\d\b", re.I)
# an exception line as a runtime prints it: the exception's name then a colon, or the name alone ("ValueError for any
# invalid input" is a task's prose)
EXCEPTION_PRINTED = re.compile(r"(?:Error|Exception|Failure)(?::|\s*$)")
LINES = 400  # lines of a text read for error lines (``error_line`` reads as many)


# what a line must hold for any of ``error_lines``' tests to read it (``is_error_line``'s ERROR_WORDS, an exception's
# name, COMPILER_ERROR's "error", HTTP_ERROR's "http" or "status"), in any case as re.I reads it (ı, İ as i, ſ as s):
# found first over the whole text, so that the tests run only on the lines that hold one
_ERRORISH_WORDS = (*ERROR_WORDS, "exception", "http", "status")
_ERRORISH = re.compile("|".join(map(re.escape, _ERRORISH_WORDS)))  # on ASCII text folded by ``str.lower``
_ERRORISH_I = re.compile(_ERRORISH.pattern, re.I)


def names_error(s: str) -> bool:
    """Whether the stripped line ``s`` is one ``error_lines`` yields."""
    return (
        (
            is_error_line(s)
            or (EXCEPTION_LINE.match(s) is not None and EXCEPTION_PRINTED.search(s) is not None)
            or COMPILER_ERROR.search(s) is not None
            or HTTP_ERROR.search(s) is not None
        )
        and not PREAMBLE.match(s)
        and not is_code_line(s)
    )


# a linter's list under a header line ending "ERRORS:" or "Errors:": an editing tool that refused an edit which would
# break the file names each error the edit brought (SWE-agent's ``edit``: "ERRORS:" then ``- E999 SyntaxError: invalid
# syntax``, flake8's problem without its place, or ``- 3:5 F821 undefined name 'x'`` with it; OpenHands' ``edit_file``:
# ``hello.py:1:3: E999 IndentationError: unexpected indent``); its items are the lines right under the header that read
# as a list's item, a linter's line (``path:line:col: ...``) or a linter's code (``F821 ...``), up to the first other
LINT_HEADER = re.compile(r"(?im)^[^\n]*\berrors:[ \t]*$")
LINT_ITEM = re.compile(r"\s*(?:[-*] \S.*|[^\s:]+:\d+:(?:\d+:)?\s*\S.*|[A-Z]{1,3}\d{2,4}\b.*)")
LINT_ITEMS = 20  # items read at most


def lint_errors(text: str) -> list[str]:
    """The errors a linter lists under the first "ERRORS:" header of ``text`` (``LINT_HEADER``, ``LINT_ITEM``),
    stripped, in order, at most ``LINT_ITEMS``; [] without one. ``error_line`` reads the line above (SWE-agent's "Your
    proposed edit has introduced new syntax error(s)"), the same for every refusal: these say which error it was."""
    m = LINT_HEADER.search(text)
    if m is None:
        return []
    out: list[str] = []
    for ln in text[m.end() :].split("\n")[1 : LINT_ITEMS + 1]:
        if not LINT_ITEM.fullmatch(ln):
            break
        out.append(ln.strip())
    return out


def error_lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, line) of every line of ``text`` that names an error, in order (of its first ``LINES`` lines): an
    ``error_line`` (``is_error_line``, an exception as a runtime prints it) and compiler errors with a code, ``error
    TS2307:``, ``error[E0308]:``, and an HTTP status of 400 or more. Only the lines holding one of ``_ERRORISH_WORDS``
    are tested (every test needs one: the others were most of the problems analyzer's time);
    ``tests/test_problems_pasted.py`` holds it to the test of every line."""
    found = _ERRORISH.finditer(text.lower()) if text.isascii() else _ERRORISH_I.finditer(text)
    n = last = 0  # the line number of offset ``last``
    after = -1  # the end of the last line tested: later words on it are skipped
    for m in found:
        if m.start() <= after:
            continue
        at = text.rfind("\n", 0, m.start()) + 1
        n += text.count("\n", last, at)
        last = at
        if n >= LINES:
            return
        end = text.find("\n", m.start())
        after = len(text) if end < 0 else end
        line = text[at:after]
        s = line.strip()
        if s and names_error(s):
            yield at, line
