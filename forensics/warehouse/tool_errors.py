"""When a tool result is an error (docs/definitions.md#tool-errors): the format flags it, or one documented set of content rules does.

``tool_calls.is_error`` is true when the importer read the format's own flag (an ``is_error`` field, an exit
status the format records, a failure the format writes in its own words), ``error_source = 'format'``; else
when one of ``RULES`` matches the result's text, ``error_source`` = that rule's name. The rules run in SQL at
import time on the results the format did not flag (``error_sql``), and migration m010 fills an existing
warehouse the same way. The patterns are RE2 (DuckDB's regex engine; Python's ``re`` reads them alike).

A search that matches nothing is not an error: ``grep``/``rg``/``findstr``... exiting 1 with no output, flagged
by the format or by ``exit_code``, is cleared (``NO_MATCH``), ``is_error`` false and ``error_source`` NULL.
"""

from __future__ import annotations

import re

# (name, RE2 pattern, what it catches), first match names the rule
RULES: tuple[tuple[str, str, str], ...] = (
    ("traceback", r"(?m)^\s*Traceback \(most recent call last\):", "a Python traceback"),
    (
        "shell_error",
        r"(?m)^(?:/\S*/)?(?:ba|z|da|k)?sh: (?:(?:line )?\d+: )?(?:[^wl\d\n]|w[^a\n]|wa[^r\n]|l[^i\n]|li[^n\n])",
        "a shell's own error line (`/bin/bash: line 3: foo: ...`, `sh: 1: ...`); its `warning:` lines are not errors",
    ),
    (
        "command_not_found",
        r"(?m)(?::|^) ?command not found\b|is not recognized as (?:an internal or external "
        r"command|the name of a cmdlet)",
        "`command not found` (sh, bash, zsh), `is not recognized as ...` (cmd, PowerShell)",
    ),
    (
        "no_such_file",
        r"(?m)No such file or directory|cannot find the (?:file|path) specified|^FileNotFoundError: ",
        "`No such file or directory` (and the Windows and Python forms)",
    ),
    (
        "exit_code",
        r"(?im)^[ \t]*\[?(?:process exited with code|exit code:?|exit status:?|the command completed with "
        r"exit code|command finished with exit code|command exited with code) ?-?0*[1-9]\d*\b"
        r"|<returncode>-?0*[1-9]\d*</returncode>",
        "a non-zero exit status written in the output (Codex, Gemini CLI, OpenHands, mini-swe-agent forms), unless "
        "the text also records a zero one (the wrapper's own status; the command's output quoted another)",
    ),
    (
        "http_status",
        r"(?m)^HTTP/\d(?:\.\d)? [45]\d\d\b|\b[45]\d\d (?:Client|Server) Error\b|returned error: [45]\d\d\b",
        "an HTTP status of 400 or more: a status line, `404 Client Error` (requests), `returned error: 404` (curl)",
    ),
)
# a rule does not fire on a text that matches its exception: a zero exit status in one of the same forms is the
# wrapper's own (Codex's `Exit code: 0` header over an output that prints `Process exited with code 9`)
UNLESS: dict[str, str] = {
    "exit_code": r"(?im)^[ \t]*\[?(?:process exited with code|exit code:?|exit status:?|the command completed with "
    r"exit code|command finished with exit code|command exited with code) ?0+\b|<returncode>0+</returncode>",
}
# the lines a harness writes above a command's output, one pattern a line (Claude Code's "Exit code 1"; Codex's exit
# code, wall time, "Output:" and unified-exec chunk headers): the compaction analyzer takes them off before it looks for
# the first error line, the problems analyzer quotes the first line past them
HARNESS_HEADERS = (
    r"Exit code:? -?\d+",
    r"Wall time: [^\n]*",
    r"Output:",
    r"Chunk ID: \S+",
    r"Process exited with code -?\d+",
    r"Original token count: \d+",
    r"Process running with session ID \d+",
)
HARNESS_HEADER = "(?:" + "|".join(HARNESS_HEADERS) + ")"  # one of them (RE2 and Python alike)
# a search tool (its command names one) whose output is empty once the exit-status lines are taken out
SEARCH_COMMAND = r"\b(?:grep|egrep|fgrep|rg|ag|ack|findstr|Select-String|git grep)\b"
WRAPPER_LINES = (
    r"(?im)^[ \t]*(?:exit code:? ?1|(?:process|command) exited with code 1|wall time:.*|output:|chunk id:.*|"
    r"original token count:.*|"
    r"<returncode>1</returncode>|</?output>|\[?command finished with exit code 1\]?)[ \t]*$"
)
EMPTY_MAX = 200  # bytes: a longer result says something
SEARCH_TOOLS = ("grep", "search_files", "Grep", "grep_search", "search", "ripgrep")


# literal pieces one of which every rule's match holds (cheap substring tests decide most results)
MARKERS = (
    "Traceback",
    "sh: ",
    "not found",
    "not recognized",
    "No such file",
    "cannot find",
    "FileNotFound",
    "xit",
    "XIT",
    "returncode>",
    "HTTP/",
    " Error",
    "returned error",
)
# the same test as one pattern of escaped literals, for polars: Rust's regex runs it as a literal search, a sixth of
# the CPU of DuckDB's thirteen contains() over an import's tool outputs (forensics.ingestion.load)
MARKED = "|".join(re.escape(m) for m in MARKERS)
HEAD = TAIL = 2000  # characters of a result the rules read: where errors are written, not a file's body


def rule_sql(text: str) -> str:
    """SQL naming the first rule of ``RULES`` that matches ``text`` (its head and tail), else NULL. A text that
    holds none of ``MARKERS`` (most results) is passed by substring tests (memchr-fast) before any regex runs."""
    gate = " OR ".join(f"contains({text}, '{sql_str(m)}')" for m in MARKERS)
    return f"CASE WHEN {gate} THEN {rules_sql(head_tail_sql(text))} END"


def head_tail_sql(text: str) -> str:
    """SQL of the part of ``text`` the rules read: its first and last characters (``HEAD``, ``TAIL``)."""
    return (
        f"CASE WHEN length({text}) > {HEAD + TAIL} THEN left({text}, {HEAD}) || chr(10) || right({text}, {TAIL}) "
        f"ELSE {text} END"
    )


def rules_sql(head_tail: str) -> str:
    """SQL naming the first rule of ``RULES`` that matches ``head_tail`` (``head_tail_sql`` of a text), else NULL:
    ``rule_sql`` without its gate, for a caller that tested ``MARKERS`` itself (``MARKED``)."""
    t = head_tail
    rules = " ".join(
        f"WHEN regexp_matches({t}, '{sql_str(p)}')"
        + (f" AND NOT regexp_matches({t}, '{sql_str(UNLESS[n])}')" if n in UNLESS else "")
        + f" THEN '{n}'"
        for n, p, _ in RULES
    )
    return f"CASE {rules} END"


def empty_output_sql(text: str) -> str:
    """SQL true when ``text`` says nothing once the exit-status lines (exit 1 at most) are taken out (only short
    texts are read: an empty search result with its wrapper lines is a few dozen characters)."""
    return (
        f"CASE WHEN strlen(coalesce({text}, '')) <= {EMPTY_MAX} "
        f"THEN NOT regexp_matches(coalesce({text}, ''), '(?i)exit code:? ?[2-9]|<returncode>-?[2-9]') "
        f"AND regexp_full_match(regexp_replace(coalesce({text}, ''), '{sql_str(WRAPPER_LINES)}', '', 'g'), '\\s*') "
        "ELSE false END"
    )


def search_sql(name: str, arguments: str) -> str:
    """SQL true when the call is a search: a search tool, or a command that names one."""
    tools = ", ".join(f"'{t}'" for t in SEARCH_TOOLS)
    return f"({name} IN ({tools}) OR regexp_matches(coalesce({arguments}, ''), '{sql_str(SEARCH_COMMAND)}'))"


def result_sql(text: str, role: str) -> tuple[str, str]:
    """SQL of what a result message's text says, computed once per message at import: (the rule that matched
    or NULL, whether it is empty apart from exit-status lines). Only tool and user messages carry results."""
    on = f"{role} IN ('tool', 'user')"
    return f"CASE WHEN {on} THEN {rule_sql(text)} END", f"CASE WHEN {on} THEN {empty_output_sql(text)} END"


def error_source_sql(flagged: str, rule: str, empty: str, name: str, arguments: str) -> str:
    """SQL for ``error_source`` from the format's flag and ``result_sql``'s two values: 'format', a rule's
    name, or NULL (not an error; a search that found nothing included). ``is_error`` is ``error_source IS NOT
    NULL``."""
    return (
        f"CASE WHEN coalesce({empty}, false) AND {search_sql(name, arguments)} THEN NULL "
        f"WHEN coalesce({flagged}, false) THEN 'format' ELSE {rule} END"
    )


def sql_str(s: str) -> str:
    """``s`` inside a single-quoted SQL literal."""
    return s.replace("'", "''")


def documented() -> list[tuple[str, str]]:
    """(rule, what it catches), for docs/warehouse.md and the column's comment."""
    return [("format", "the format flagged it")] + [(n, d) for n, _, d in RULES]
