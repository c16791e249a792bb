"""The words a person typed in a message, without what they pasted or what their tool wrapped around it.

A person's message in an agent log often carries more than the person's words: code they paste (fenced or
indented), output they quote (``>`` lines), a stack trace or log lines, a file or a document they paste whole,
and context their tool prepends (Codex's IDE extension writes "# Context from my IDE setup:" before
"## My request for Codex:"; Claude Code's VS Code extension wraps the open file and the selection in
``<ide_opened_file>`` / ``<ide_selection>``; Gemini CLI appends "--- Content from referenced files ---" for an
``@file``). Phrases inside that material are not the person asking for anything: "is there any", "need a",
"add a" in pasted code or a quoted answer are someone else's words. ``own_words`` keeps the rest, and
``request_sentences`` the part of it where a request is made: all of a short message, the opening and the
closing sentences of a long one (a person who pastes a page unmarked asks about it before or after it).
"""

from __future__ import annotations

import re

OPENING_SENTENCES = 2  # sentences at the start of a person's own words that can carry the request
CLOSING_SENTENCES = 1  # and at the end (after a paste: "... why does this fail?")

_FENCED = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
# Context the tools put around the person's words (each names the tool that writes it).
_WRAPPED = re.compile(
    r"<(ide_opened_file|ide_selection|ide_diagnostics|system-reminder|file|document)\b[^>]*>.*?(?:</\1>|\Z)"  # Claude Code (VS Code)
    r"|--- Content from referenced files ---.*?(?:--- End of content ---|\Z)",  # Gemini CLI: @file contents
    re.DOTALL | re.IGNORECASE,
)
_CODEX_IDE = re.compile(
    r"^\s*# Context from my IDE setup:.*?## My request for Codex:\s*", re.DOTALL
)  # Codex IDE extension
_QUOTED = re.compile(r"^[ \t]*>")
_INDENTED = re.compile(r"^(?: {4}|\t)")
# Lines of program output: a traceback and its frames, log lines (timestamp or level first), compiler errors,
# shell prompts.
_OUTPUT_LINE = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|at [\w$.<>]+ ?\(|at .+:\d+:\d+"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\d\d:\d\d:\d\d|\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|FATAL|TRACE)\]?[: ]"
    r"|[\w./-]+\.\w+:\d+(?::\d+)?:|\$ |[\w.-]+@[\w.-]+[:~]|\(\.?venv\)|FAILED |PASSED |E {3})"
)
# A line that reads as code: ends in an opening or closing bracket or a semicolon, or is mostly symbols.
_CODE_LINE = re.compile(
    r"[{};(\[]\s*$|^\s*[})\]]|^\s*(?:import [\w.]+|from [\w.]+ import|def \w+\(|class \w+[(:]|"
    r"function\b|(?:const|let|var) \w+ ?=|return\b.*;|export (?:default|const|function|class)|"
    r"#include|(?:public|private|protected) \w|(?:if|for|while) ?\()"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
LONG_CHARS = 300  # own words longer than this are searched for a request in their opening and closing sentences


def unwrapped(text: str) -> str:
    """The text without the context a tool added around the person's message (what they pasted stays)."""
    return _WRAPPED.sub("\n", _CODEX_IDE.sub("", text)).strip()


def own_words(text: str) -> str:
    """The text without pasted code, quoted output, traces, log lines and tool-added context."""
    text = _FENCED.sub("\n", unwrapped(text))
    lines = text.split("\n")
    quoted = [bool(_QUOTED.match(x)) for x in lines if x.strip()]
    all_quoted = bool(quoted) and all(quoted)  # a message typed after a ">" prompt: the person's own
    keep = []
    for line in lines:
        if not line.strip():
            keep.append("")
            continue
        if _QUOTED.match(line):
            if all_quoted:
                keep.append(line.lstrip(" \t>"))
            continue
        if _INDENTED.match(line) or _OUTPUT_LINE.match(line) or _CODE_LINE.search(line):
            continue
        keep.append(line)
    return "\n".join(keep).strip()


# What own_words keeps of program output pasted without a fence (a browser console, a build log, a crashed CLI, a diff
# from the agent's UI): a console frame ("(anonymous) @ polyfills.js:12"), a line that opens with a file and line
# ("polyfills.js:12 ...") or with a path, a program's own line ("remote: ...", "grep: ..."), a diff line with its line
# number ("+ 8 - ..."), an exception's message ("Error: ...", "ChunkLoadError: ..."), a line with a terminal's glyphs
# (box drawing, prompt arrows, spinners) or padded with spaces to the terminal's width. (Branch pk's ``typed_words``.)
_PASTED_LINE = re.compile(
    r"^\s*(?:\(anonymous\) @|\S+ @ \S+:\d+|[\w./\\-]+\.\w{1,5}:\d+(?::\d+)?\b"
    r"|(?:remote|fatal|error|warning|note|hint|npm ERR!|grep|sed|bash|zsh|sh|cp|mv|rm|cat|ls|git|make|cargo|go|"
    r"python\d?|node|npm|pip)\d*: |(?:/|\./|~/|[A-Za-z]:\\)[\w.@~-]+[/\\]\S*|[+-]\s*\d+\s|\w*(?:Error|Exception)\b:)"
)
_TERMINAL = re.compile(r"[│├└┌┐┘─═▶➜✗✓⠇⠋⠙⠹⠸⠼⠴⠦⠧⠏❯↑↓→]|\S {3,}$")


def typed_words(text: str) -> str:
    """``own_words`` less the program output pasted without a fence (``_PASTED_LINE``, ``_TERMINAL``) and the lines
    the message already holds (a log repeats itself): what the person typed."""
    seen: set[str] = set()
    keep = []
    for line in own_words(text).split("\n"):
        s = line.strip()
        if s and (_PASTED_LINE.match(line) or _TERMINAL.search(line) or s in seen):
            seen.add(s)
            continue
        seen.add(s)
        keep.append(line)
    return "\n".join(keep).strip()


def reads_as_prose(line: str) -> bool:
    """Most of the line's tokens are words (letters, in any script, punctuation around them aside): a sentence,
    not a command line, a progress line or a list of paths."""
    tokens = line.split()
    words = sum(t.strip(_PUNCTUATION).isalpha() for t in tokens)
    return bool(tokens) and words * 2 >= len(tokens)


_PUNCTUATION = "\"'`.,:;!?()[]{}<>«»“”‘’-–—…。，：；！？（）"


def typed_prose(text: str) -> str:
    """The lines of ``typed_words`` that read as sentences (``reads_as_prose``): what the person wrote in their own
    words."""
    return "\n".join(line for line in typed_words(text).split("\n") if reads_as_prose(line)).strip()


def output_chars(text: str) -> int:
    """Characters of the lines of ``text`` that read as program output (a traceback or its frames, log and compiler
    lines, a shell session, a console, a diff from a terminal), fenced or not; not code, not prose."""
    return sum(
        len(line) + 1
        for line in unwrapped(text).split("\n")
        if _OUTPUT_LINE.match(line) or _PASTED_LINE.match(line) or _TERMINAL.search(line)
    )


def request_sentences(text: str) -> str:
    """Where a request is made in a person's message: the opening and closing sentences of its own words."""
    own = own_words(text)
    if len(own) <= LONG_CHARS:
        return own
    sents = [s.strip() for s in _SENTENCE.split(own) if s and s.strip()]
    return "\n".join(sents[:OPENING_SENTENCES] + sents[-CLOSING_SENTENCES:])
