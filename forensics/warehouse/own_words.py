"""The person's own words in a person's message (``messages.person_text``): its text, less what the tool wrapped
around them. A slash command or a prompt template the person invoked is the person's turn (docs/definitions.md#whose-turn-it-is, the
labeling guide §3), but its expanded body is the tool's text: titles, keywords, topic cues and the findings
read these words, never the body.

What is taken off, each as the tool writes it:

- Claude Code runs a slash command as ``<command-message>…</command-message> <command-name>/name</command-name>
  <command-args>args</command-args>`` (the expansion follows on a line of its own, ``isMeta``): the words are
  ``/name args``.
- Claude Code's IDE extensions and reminders put context before the prompt: ``<ide_opened_file>``,
  ``<ide_selection>``, ``<ide_diagnostics>``, ``<system-reminder>`` blocks; the words are what follows them.
- Codex's IDE extensions put the editor's state first: ``# Context from my IDE setup:`` (active file, open tabs,
  selections) then ``## My request for Codex:`` and what the person typed: the words are what follows that heading.
- A prompt template expanded in place (Codex custom prompts, spec-kit's ``/speckit.*`` commands in any agent):
  ``## User Input`` then a fenced ``text`` block holding what the person typed after the command, then the
  template's body (``You **MUST** consider the user input before proceeding``): the words are the fenced block.
- A field marker an evaluation harness puts above its prompt (``[[ ## user_query ## ]]``, DSPy's form): the words
  are what follows the line.
- Claude Code's plan handover (``Implement the following plan:`` then the plan the person accepted when they
  cleared the context) and Codex's (``A previous agent produced the plan below to accomplish the user's task.
  Implement the plan in a fresh context. …`` then the plan, 0.14x): the plan is the model's text, so no words; a
  session with no other words is titled by the plan's first line (``handed_over``).

- A benchmark harness's prompt template holding the task it was given (Harbor's Terminus 2: ``You are an AI
  assistant tasked with solving command-line tasks…``, then ``Task Description:`` and the task, then ``Current
  terminal state:``; OpenHands without function calling: its worked example, then the task between
  ``--- NEW TASK DESCRIPTION ---`` and ``--- END OF NEW TASK DESCRIPTION ---`` rules): the words are the task.

- Hermes Agent runs a skill the person invoked as ``[SYSTEM: The user has invoked the "<skill>" skill, ...]``, the
  skill's body, then ``The user has provided the following instruction alongside the skill invocation: <words>``
  (and, on some platforms, ``[Runtime note: ...]``): the words are ``/<skill> <words>``.

A message with no words of the person left (a bare command, a template invoked with nothing after it, an IDE
selection sent alone) gets ``""``: still the person's turn, no title or keyword comes from it. The patterns are
RE2 (DuckDB) and Python ``re`` alike, so the Python function and the SQL expression agree.
"""

from __future__ import annotations

import re

# Context blocks a tool puts before what the person typed (Claude Code 2.x, its VS Code and JetBrains extensions)
CONTEXT = (
    r"(?:<ide_opened_file>.*?</ide_opened_file>|<ide_selection>.*?</ide_selection>"
    r"|<ide_diagnostics>.*?</ide_diagnostics>|<system-reminder>.*?</system-reminder>)"
)
LEADING_CONTEXT = rf"^(?:\s*{CONTEXT})+\s*"
COMMAND = r"^\s*(?:<command-message>.*?</command-message>\s*)?<command-name>\s*(.*?)\s*</command-name>"
COMMAND_ARGS = r"<command-args>(.*?)</command-args>"
TEMPLATE = r"^\s*## User Input\s*\n\s*```(?:text)?[ \t]*\n(.*?)```"
IDE_REQUEST = r"^\s*# Context from my IDE setup:.*?\n## My request for Codex:[ \t]*\n(.*)$"
SKILL = r'^\s*\[SYSTEM: The user has invoked the "([^"\n]*)" skill'
SKILL_ARGS = r"\nThe user has provided the following instruction alongside the skill invocation: (.*?)(?:\n\n\[Runtime note: .*)?$"
# A DSPy-style field marker an evaluation harness puts above the prompt it sends (AgentV: ``[[ ## user_query ## ]]``)
FIELD_MARKER = r"^\s*\[\[ ## \w+ ## \]\][ \t]*\n(.*)$"
# Claude Code's prompt when the person accepts a plan and clears the context (2.1.x), and Codex's when the person
# implements a plan in a fresh context (0.14x, codex-rs ``PLAN_IMPLEMENTATION_CLEAR_CONTEXT_PREFIX``): the plan (the
# model's text) follows; the person's turn, with no words of theirs
HANDOVER = (
    r"^\s*(?:Implement the following plan:|A previous agent produced the plan below to accomplish the user['’]s "
    r"task\. Implement the plan in a fresh context\.[^\n]*)[ \t]*\n(.*)$"
)
# A benchmark harness's task template (Harbor's Terminus 2; OpenHands' prompt without function calling): the task
TASK = (
    r"^\s*(?:You are an AI assistant tasked with solving command-line tasks in a Linux environment\..*?"
    r"\nTask Description:[ \t]*\n(.*?)\n[ \t]*\nCurrent [Tt]erminal [Ss]tate:"
    r"|Here's a running example of how to perform a task with the provided tools\..*?"
    r"\n-+ NEW TASK DESCRIPTION -+[ \t]*\n(.*?)\n\s*-+ END OF NEW TASK DESCRIPTION -+)"
)

_LEADING = re.compile(LEADING_CONTEXT, re.DOTALL)
_COMMAND = re.compile(COMMAND, re.DOTALL)
_ARGS = re.compile(COMMAND_ARGS, re.DOTALL)
_TEMPLATE = re.compile(TEMPLATE, re.DOTALL)
_IDE_REQUEST = re.compile(IDE_REQUEST, re.DOTALL)
_SKILL = re.compile(SKILL, re.DOTALL)
_SKILL_ARGS = re.compile(SKILL_ARGS, re.DOTALL)
_FIELD_MARKER = re.compile(FIELD_MARKER, re.DOTALL)
_HANDOVER = re.compile(HANDOVER, re.DOTALL)
_TASK = re.compile(TASK, re.DOTALL)
WS = " \t\r\n"


def own_words(text: str) -> str:
    """The person's own words in ``text`` (a person's message)."""
    m = _COMMAND.match(text)
    if m:
        args = _ARGS.search(text)
        return f"{m.group(1)} {args.group(1).strip(WS) if args else ''}".strip(WS)
    m = _SKILL.match(text)
    if m:
        args = _SKILL_ARGS.search(text)
        return f"/{m.group(1)} {args.group(1).strip(WS) if args else ''}".strip(WS)
    if _HANDOVER.match(text):
        return ""
    m = _TASK.match(text)
    if m:
        return (m.group(1) if m.group(1) is not None else m.group(2)).strip(WS)
    m = _TEMPLATE.match(text) or _IDE_REQUEST.match(text) or _FIELD_MARKER.match(text)
    if m:
        return m.group(1).strip(WS)
    return _LEADING.sub("", text, count=1).strip(WS)


def _trim(expr: str) -> str:
    return f"trim({expr}, ' ' || chr(9) || chr(10) || chr(13))"


def _q(pattern: str) -> str:
    return "'(?s)" + pattern.replace("'", "''") + "'"


def own_words_sql(text: str) -> str:
    """The same as a DuckDB expression over a text expression."""
    command = f"regexp_extract({text}, {_q(COMMAND)}, 1)"
    args = _trim(f"regexp_extract({text}, {_q(COMMAND_ARGS)}, 1)")
    regexp = f"regexp_extract({text}, {_q(TEMPLATE)}, 1)"
    ide = f"regexp_extract({text}, {_q(IDE_REQUEST)}, 1)"
    skill = f"'/' || regexp_extract({text}, {_q(SKILL)}, 1)"
    skill_args = _trim(f"regexp_extract({text}, {_q(SKILL_ARGS)}, 1)")
    marked = f"regexp_extract({text}, {_q(FIELD_MARKER)}, 1)"
    task = f"regexp_extract({text}, {_q(TASK)}, 1) || regexp_extract({text}, {_q(TASK)}, 2)"
    return (
        f"CASE WHEN regexp_matches({text}, {_q(COMMAND)}) THEN {_trim(f'{command} || {chr(39)} {chr(39)} || {args}')} "
        f"WHEN regexp_matches({text}, {_q(SKILL)}) THEN {_trim(f'{skill} || {chr(39)} {chr(39)} || {skill_args}')} "
        f"WHEN regexp_matches({text}, {_q(TEMPLATE)}) THEN {_trim(regexp)} "
        f"WHEN regexp_matches({text}, {_q(IDE_REQUEST)}) THEN {_trim(ide)} "
        f"WHEN regexp_matches({text}, {_q(HANDOVER)}) THEN '' "
        f"WHEN regexp_matches({text}, {_q(TASK)}) THEN {_trim(task)} "
        f"WHEN regexp_matches({text}, {_q(FIELD_MARKER)}) THEN {_trim(marked)} "
        f"ELSE {_trim(f'regexp_replace({text}, {_q(LEADING_CONTEXT)}, {chr(39)}{chr(39)})')} END"
    )


def handed_over(text: str) -> str | None:
    """The plan in Claude Code's or Codex's plan handover, else None: a title when the person wrote nothing else."""
    m = _HANDOVER.match(text)
    return m.group(1).strip(WS) if m else None


def is_command(text: str) -> bool:
    """Claude Code's record of a slash command (``<command-name>``, with or without words after it)."""
    return _COMMAND.match(text) is not None


def has_command_args(text: str) -> bool:
    """A slash command the person gave words to (``<command-args>`` not empty): the person's turn, not the
    tool's notice of a command run with none (``/model``, ``/clear``)."""
    if not _COMMAND.match(text):
        return False
    args = _ARGS.search(text)
    return bool(args and args.group(1).strip())
