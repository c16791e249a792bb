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


def request_sentences(text: str) -> str:
    """Where a request is made in a person's message: the opening and closing sentences of its own words."""
    own = own_words(text)
    if len(own) <= LONG_CHARS:
        return own
    sents = [s.strip() for s in _SENTENCE.split(own) if s and s.strip()]
    return "\n".join(sents[:OPENING_SENTENCES] + sents[-CLOSING_SENTENCES:])
