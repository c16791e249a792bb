"""Where a log shows an instruction file was put into the model's context, and its text (docs/definitions.md#rules-a-run-was-given).

Each harness injects its instruction files in its own words, and those words are what a transcript keeps:

- Claude Code: a ``<system-reminder>`` on the first prompt, ``Contents of /path/CLAUDE.md (project instructions,
  checked into the codebase):`` then the file, up to the next ``Contents of``, the next section of the reminder
  (``# currentDate``, ``# userEmail``, ``# gitStatus``) or the reminder's end; a file read on the way (a
  ``nested_memory`` attachment, which the importer turns into Claude Code's own message) as ``Contents of PATH:``
  with no parenthesis, taken only when PATH is a path to a ``.md`` file;
- Codex: ``# AGENTS.md instructions for DIR`` then ``<INSTRUCTIONS>…</INSTRUCTIONS>`` (2026), or
  ``<user_instructions>…</user_instructions>`` (2025) in the first user message; ``--- project-doc ---`` parts the
  person's own instructions from the repository's AGENTS.md;
- Gemini CLI: ``--- Context from: path ---`` … ``--- End of Context from: path ---``;
- Cline: a ``# .clinerules`` heading in the system prompt (its section ends at the next ``====``);
- Cursor and Continue: ``<user_rules>``, ``<project_rules>``, ``<cursor_rules>`` or ``<rules>`` blocks.

A system prompt holding none of these is itself a source (``system prompt``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Injected:
    """An instruction file (or a system prompt) as the log shows it: what it is, its path when named, its text."""

    source: str  # CLAUDE.md | .claude/rules | MEMORY.md | AGENTS.md | GEMINI.md | .clinerules | .cursorrules | rules | system prompt
    path: str
    body: str


CLAUDE_FILE = re.compile(
    r"Contents of (?:(?P<path>[^\n]+?) \((?P<what>[^)\n]*)\)|(?P<md>[^\s(]*[\\/][^\s\\/]+\.md)):[ \t]*\n"
)
CLAUDE_END = re.compile(
    r"\nContents of (?:[^\n]+? \([^)\n]*\)|[^\s(]*[\\/][^\s\\/]+\.md):[ \t]*\n|</system-reminder>"
    r"|\n# [a-z]+[A-Z][A-Za-z]*[ \t]*\n|\n\s*IMPORTANT: this context may or may not be relevant"
)
CODEX_AGENTS = re.compile(
    r"# AGENTS\.md instructions for (?P<dir>[^\n]+)\s*<INSTRUCTIONS>\n?(?P<body>.*?)"
    r"(?:</INSTRUCTIONS>|\Z)",
    re.DOTALL,
)
CODEX_USER = re.compile(r"<user_instructions>\n?(?P<body>.*?)(?:</user_instructions>|\Z)", re.DOTALL)
PROJECT_DOC = "--- project-doc ---"
GEMINI = re.compile(
    r"--- Context from: (?P<path>[^\n]+?) ---\n(?P<body>.*?)(?:--- End of Context from: [^\n]*---|\Z)", re.DOTALL
)
CLINE = re.compile(
    r"^# (?P<name>\.clinerules/?|\.cursorrules|\.windsurfrules)[^\n]*\n(?P<body>.*?)(?=\n={4,}|\Z)",
    re.DOTALL | re.MULTILINE,
)
TAGGED = re.compile(r"<(?P<tag>user_rules|project_rules|cursor_rules|rules)>\n?(?P<body>.*?)</(?P=tag)>", re.DOTALL)
TAG_SOURCE = {"user_rules": "rules", "project_rules": "rules", "cursor_rules": ".cursorrules", "rules": "rules"}


def injected(text: str, system: bool) -> list[Injected]:
    """The instruction files one message injects, in the order they appear; a system message with none is a
    ``system prompt`` source of its own (``system``: the message is the harness's system prompt)."""
    out: list[Injected] = []
    for m in CLAUDE_FILE.finditer(text):
        end = CLAUDE_END.search(text, m.end())
        path = (m.group("path") or m.group("md")).strip()
        out.append(Injected(_name(path, "CLAUDE.md"), path, text[m.end() : end.start() if end else len(text)]))
    for m in CODEX_AGENTS.finditer(text):
        out += _codex(m.group("body"), m.group("dir").strip())
    if not out:
        for m in CODEX_USER.finditer(text):
            out += _codex(m.group("body"), "")
    for m in GEMINI.finditer(text):
        path = m.group("path").strip()
        out.append(Injected(_name(path, "GEMINI.md"), path, m.group("body")))
    for m in CLINE.finditer(text):
        out.append(Injected(m.group("name").rstrip("/"), m.group("name"), m.group("body")))
    for m in TAGGED.finditer(text):
        out.append(Injected(TAG_SOURCE[m.group("tag")], m.group("tag"), m.group("body")))
    if not out and system and text.strip():
        out.append(Injected("system prompt", "", text))
    return out


def _codex(body: str, where: str) -> list[Injected]:
    """Codex's instructions: the person's own (config or ``~/.codex/AGENTS.md``) before ``--- project-doc ---``,
    the repository's AGENTS.md after it."""
    own, sep, doc = body.partition(PROJECT_DOC)
    path = f"{where.rstrip('/')}/AGENTS.md" if where else "AGENTS.md"
    if not sep:
        return [Injected("AGENTS.md", path, body)]
    return [Injected("AGENTS.md", "~/.codex/AGENTS.md", own), Injected("AGENTS.md", path, doc)]


def _name(path: str, default: str) -> str:
    """The file's name as the rule's source (GEMINI.md for a ``gemini.md``; the harness's own name otherwise)."""
    parts = re.split(r"[\\/]", path)
    base = parts[-1].upper()
    if len(parts) > 2 and parts[-3:-1] == [".claude", "rules"]:
        return ".claude/rules"
    return {
        "MEMORY.MD": "MEMORY.md",
        "CLAUDE.MD": "CLAUDE.md",
        "CLAUDE.LOCAL.MD": "CLAUDE.local.md",
        "AGENTS.MD": "AGENTS.md",
        "GEMINI.MD": "GEMINI.md",
    }.get(base, default)
