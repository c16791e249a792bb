"""The audit's rules, read once from ``[compaction]``: what makes a sentence a constraint, a decision or a task,
a result line an error, a message a compaction's summary; and the tool names that read, search or run.

Patterns are RE2 (no look-around) matched case-insensitively, so DuckDB can use the same ones to pick
candidate rows and Python finds the sentence in them. ``not_triggers`` are words that hold a trigger without
being one (别人 holds 别); they are blanked out before matching, so 别 in 别人 never fires.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from forensics.analyzers.compaction.settings import CompactionSettings
from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.config import Config, ConfigError

READ_TOOL = re.compile(r"(?i)read|open|view|cat|fetch|get_file|notebook")
SEARCH_TOOL = re.compile(r"(?i)search|grep|glob|find|list|ls\b|dir|lookup|query")
COMMAND_TOOL = re.compile(r"(?i)bash|shell|command|exec|terminal|run|powershell|cmd")
TODO_TOOL = re.compile(r"(?i)todo|update_plan|plan")
# the shell programs whose first argument is what they look for: `grep -rn login app/` searches for login
SEARCH_COMMAND = re.compile(
    r"(?:^|[;&|]\s*)(?:rg|grep|egrep|ag|ack|git grep)\s+(?:-{1,2}[\w=-]+\s+)*"
    r"(?P<q>'[^']+'|\"[^\"]+\"|[^\s|;&]+)"
)
FIND_COMMAND = re.compile(r"(?:^|[;&|]\s*)(?:find|fd)\s+.*?-(?:i?name|path)\s+(?P<q>'[^']+'|\"[^\"]+\"|\S+)")
# user messages a harness wrote (Claude Code's slash commands and their output, system reminders, interruptions,
# the files it reads back into the context after a compaction)
HARNESS_TEXT = re.compile(
    r"^\s*(<[a-z][\w-]*>|\[Request interrupted|Caveat: The messages below|"
    r"Called the \w+ tool with the following input|Result of calling the \w+ tool)"
)


@dataclass(frozen=True)
class Rules:
    constraint: re.Pattern[str]
    opener: re.Pattern[str]  # a word that opens an instruction of its own after a conjunction
    decision: re.Pattern[str]
    task: re.Pattern[str]
    error: re.Pattern[str]
    summary: re.Pattern[str]
    not_triggers: re.Pattern[str] | None
    error_patterns: tuple[str, ...]  # for DuckDB, one at a time with (?im): ^ at line starts
    statement_sql: str  # decision and task patterns as one RE2 alternation (candidate assistant messages)
    user_sql: str  # ... and the constraint patterns (candidate user messages)
    snippet_sql: str  # the sentences around a decision or task trigger (an assistant message's statements)
    carry_share: float
    repeat_share: float
    tokenizer: str

    def blank(self, text: str) -> str:
        """``text`` with the not-trigger words blanked (same length, so positions stay)."""
        return self.not_triggers.sub(lambda m: " " * len(m.group()), text) if self.not_triggers else text


def rules(cfg: Config) -> Rules:
    c = CompactionSettings.of(cfg)
    pats = {
        name: _compile(f"compaction.{name}", getattr(c, name))
        for name in (
            "constraint_patterns",
            "clause_openers",
            "decision_patterns",
            "task_patterns",
            "error_patterns",
            "summary_patterns",
        )
    }
    words = [w for w in c.not_triggers if w.strip()]
    return Rules(
        pats["constraint_patterns"],
        pats["clause_openers"],
        pats["decision_patterns"],
        pats["task_patterns"],
        pats["error_patterns"],
        pats["summary_patterns"],
        re.compile("|".join(map(re.escape, sorted(words, key=len, reverse=True))), re.I) if words else None,
        tuple(c.error_patterns),
        "(?i)" + _alternation(c.decision_patterns + c.task_patterns),
        "(?i)" + _alternation(c.constraint_patterns + c.decision_patterns + c.task_patterns),
        "(?i)[^。！？!?；;\n]*(?:" + _alternation(c.decision_patterns + c.task_patterns) + ")[^。！？!?；;\n]*",
        float(c.carry_share),
        float(c.repeat_share),
        str(KeywordSettings.of(cfg).tokenizer),
    )


def _alternation(patterns: list[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns) if patterns else "$^"


def _compile(key: str, patterns: list[str]) -> re.Pattern[str]:
    for p in patterns:
        if re.search(r"\(\?<?[=!]", p):
            raise ConfigError(f"{key}: {p!r} uses look-around, which DuckDB's RE2 cannot run; use not_triggers")
        try:
            re.compile(p)
        except re.error as e:
            raise ConfigError(f"{key}: {p!r} is not a valid pattern ({e})") from None
    return re.compile(_alternation(patterns), re.I | re.M)
