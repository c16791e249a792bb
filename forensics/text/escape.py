"""Text from the logs escaped for the medium it lands in: a terminal, a Markdown file.

Log text is hostile by default (a message, a tool argument, a model name, a file name can hold anything): on a
terminal an ESC or a bidi override rewrites what the reader sees; in report.md raw HTML runs in a viewer that
allows it and Markdown syntax restyles or links (chart labels are kept from mathtext by ``text.parse_math`` in
``forensics.draw``). Each function keeps the text readable and makes it inert.
"""

from __future__ import annotations

import re

# Controls and invisible formatting that reorder or hide text: C0/C1 controls (but tab and newline), DEL, and
# the bidi embeddings, overrides and isolates, marks, and zero-width characters (Unicode category Cf).
_TERMINAL_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
# Inline Markdown that acts: code spans, emphasis with *, strikethrough, table cells, and the "](" that makes a
# link or an image of a bracket (a bare [20] or an intraword _ stays as written: they render as themselves)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*|~])|\](?=\()")


def terminal(text: str) -> str:
    """Every control, bidi or invisible formatting character shown as its escape (``\\x1b``, ``\\u202e``)."""
    return _TERMINAL_UNSAFE.sub(_escape_char, text)


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def markdown(text: str) -> str:
    """Inline Markdown that renders as the text itself: code, emphasis, link and table syntax backslashed,
    line breaks as spaces, terminal-unsafe characters escaped (HTML is made inert for the whole document by
    ``inert_html``)."""
    text = terminal(text).replace("\r", " ").replace("\n", " ")
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(1) if m.group(1) else "]\\", text)


def inert_html(doc: str) -> str:
    """A Markdown document in which no raw HTML can render: ``& < >`` outside fenced blocks become entities.
    Inside a fenced block CommonMark shows them literally already; inside a code span they show as entities (a
    rare, cosmetic cost: telling a real code span from escaped backticks is where sanitizers go wrong)."""
    out, fenced = [], False
    for line in doc.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append(line)
            continue
        out.append(line if fenced else line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    return "\n".join(out)


def markdown_code(text: str) -> str:
    """A Markdown code span that holds ``text`` literally whatever backticks it has (CommonMark: a fence of one
    more backtick than the longest run inside, padded with a space when the text touches a backtick)."""
    text = terminal(text).replace("\r", " ").replace("\n", " ")
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"
