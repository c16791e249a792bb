"""Each later turn that kept or broke a checkable rule, with its evidence (docs/definitions.md#rules-a-run-was-given).

A rule is judged only where the log records what it is about: a forbidden command against every shell command
run after it, a program to use instead of another against the commands that run either, a path not to touch
against every edit, tests before a commit against each commit, a reply's language or format against every text
reply. A turn it does not bear on gets no verdict. The verdict's rule saying is the latest one before the turn;
``after_compaction``: a compaction was logged between that saying and the turn.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field

from forensics.analyzers.rules.checks import (
    CONSTRUCTS,
    NUMBERED_QUESTION,
    QUESTION_HEAD,
    is_json,
    questions,
    word_forms,
)
from forensics.analyzers.rules.extract import Rule
from forensics.analyzers.rules.language import language_of

SEGMENT = re.compile(r"&&|\|\||[;|\n]|\$\(|`")
ENV = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")
LAUNCHERS = ("sudo ", "env ", "time ", "exec ", "nohup ", "command ")
EDITOR = re.compile(r"(?i)editor|str_replace|_file\b")
EDIT_TOOL = re.compile(r"(?i)edit|write|patch|replace|create|insert|notebook|str_replace|apply_diff|save")
SHELL_CHANGE = re.compile(
    r"(?:^|[\s;&|(])(?:rm|mv|cp|touch|tee|truncate|chmod|unlink|mkdir|rmdir)\s|\bsed\s+-i|\bperl\s+-[a-z]*i"
    r"|(?<![<>=!&\d-])>>?(?![=&>])\s*(?!/dev/null\b)[^\s&|;<>]+|\bgit\s+(?:checkout|restore|rm|mv)\b"
)
QUOTED = re.compile(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"")
TESTS = re.compile(
    r"(?i)\b(?:pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|unittest|go test|"
    r"cargo (?:test|nextest)|(?:npm|pnpm|yarn|bun)(?: run)? test\w*|make (?:test|check)\w*|"
    r"dotnet test|mvn (?:\S+ )*test|gradlew? test|deno test|just test)\b"
)
COMMIT = re.compile(r"(?:^|\s)git\s+(?:-\S+\s+)*commit\b")
EMOJI = re.compile("[\U0001f300-\U0001faff\U0001f000-\U0001f2ff\u2600-\u26ff\u2700-\u27bf]")
CODE_BLOCK = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
QUOTE = 160  # characters of evidence


@dataclass(frozen=True)
class Call:
    position: int
    name: str
    arguments: str
    command: str | None  # the shell command it ran, when it ran one


@dataclass
class Run:
    """What one conversation did, as the checks read it."""

    conversation_id: str
    model: str
    calls: list[Call] = field(default_factory=list)
    replies: list[tuple[int, str]] = field(default_factory=list)  # the assistant's non-blank text replies
    persons: list[tuple[int, str]] = field(default_factory=list)  # the person's turns (their own words)
    compactions: list[int] = field(default_factory=list)
    summaries: dict[int, str] = field(default_factory=dict)  # compaction position -> the harness's text there
    end: int = 0


@dataclass(frozen=True)
class Verdict:
    conversation_id: str
    rule: str  # Rule.key
    position: int
    verdict: str  # kept | broke
    quote: str
    said_at: int  # the saying of the rule it is held to
    after_compaction: bool
    in_context: bool = True  # the rule's words were in the context at the turn: no compaction since its saying
    # dropped them (a summary, or what the harness read back in, that carries them keeps them; a system prompt is
    # sent with every request)


def command_of(name: str, arguments: str) -> str | None:
    """The shell command of a tool call (Claude Code's ``command``, Codex's argv list or ``cmd``, Gemini's
    ``command``), or None for a call that runs none."""
    try:
        args = json.loads(arguments) if arguments else {}
    except ValueError:
        return None
    if not isinstance(args, dict) or EDITOR.search(name):
        return None  # OpenHands' str_replace_editor names its action `command` ("view", "create"): not a shell
    cmd = args.get("command", args.get("cmd", args.get("script")))
    if isinstance(cmd, list):
        argv = [str(a) for a in cmd]
        if (
            len(argv) >= 3
            and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh", "pwsh", "powershell")
            and argv[1] in ("-lc", "-c", "-Command")
        ):
            return argv[-1]
        return " ".join(argv)
    return cmd if isinstance(cmd, str) and cmd.strip() else None


def judge(rules: list[Rule], run: Run) -> list[Verdict]:
    """Every verdict of one run's checkable rules, in rule then position order."""
    out: list[Verdict] = []
    groups: dict[tuple[str, int], list[Rule]] = {}
    for r in rules:
        if r.check is not None:
            groups.setdefault((r.key, -1 if r.standing else r.position), []).append(r)
    for sayings in groups.values():
        sayings.sort(key=lambda r: r.position)
        said = [r.position for r in sayings]
        rule = sayings[0]
        for position, verdict, quote in _turns(rule, run):
            i = bisect_left(said, position) - 1
            if i < 0 or (sayings[i].until is not None and position > sayings[i].until):  # type: ignore[operator]
                continue
            at = said[i]
            between = [c for c in run.compactions if at < c <= position]
            kept = rule.source == "system prompt" or all(carried(rule.text, run.summaries.get(c, "")) for c in between)
            out.append(Verdict(run.conversation_id, rule.key, position, verdict, quote, at, bool(between), kept))
    return out


def carried(rule: str, summary: str) -> bool:
    """A compaction's summary carries a rule when it holds the rule's words (case and spacing aside)."""
    words = " ".join(rule.lower().split())
    return bool(words) and words in " ".join(summary.lower().split())


def dropped_at(rule: Rule, sayings: list[int], run: Run) -> int | None:
    """The first compaction after the rule's last saying whose summary does not carry it (None: it stayed)."""
    if rule.source == "system prompt":
        return None  # a harness sends its system prompt with every request: no compaction summarises it away
    last = max(sayings)
    return next((c for c in run.compactions if c > last and not carried(rule.text, run.summaries.get(c, ""))), None)


def _turns(rule: Rule, run: Run) -> Iterator[tuple[int, str, str]]:
    """(position, kept | broke, evidence) for every turn the rule's check bears on."""
    assert rule.check is not None
    kind, target = rule.check.kind, rule.check.target
    if kind == "command_forbidden":
        cmds = [t for t in target if t != "unless_asked"]
        pattern = re.compile("|".join(_command_pattern(c).pattern for c in cmds))
        verb = cmds[0].split()[-1].strip("*-") or cmds[0]
        for c in run.calls:
            if c.command is None:
                continue
            if "unless_asked" in target and _asked(run.persons, c.position, verb):
                continue
            m = pattern.search(c.command)
            yield c.position, "broke" if m else "kept", _cut(c.command, m.start() if m else 0)
    elif kind == "tool_forbidden":
        for c in run.calls:
            name, want = c.name.lower(), target[0].lower()
            hit = name == want or name.endswith("__" + want)  # an MCP tool: mcp__server__name
            yield c.position, "broke" if hit else "kept", _cut(f"{c.name} {c.arguments}")
    elif kind == "command_instead":
        use, avoid = target[0], target[1:]
        for c in run.calls:
            if c.command is None:
                continue
            progs = [s for s in _segments(c.command)]
            if any(_invokes(s, use) for s in progs):
                yield c.position, "kept", _cut(c.command)
            elif any(_invokes(s, a) for s in progs for a in avoid):
                yield c.position, "broke", _cut(c.command)
    elif kind == "path_untouched":
        pattern = re.compile("|".join(_path_pattern(p).pattern for p in target))
        for c in run.calls:
            text = c.command if c.command is not None else c.arguments
            if c.command is None and not EDIT_TOOL.search(c.name):
                continue
            if c.command is not None and not changes(c.command):
                continue
            m = pattern.search(text)
            yield c.position, "broke" if m else "kept", f"{c.name}: " + _cut(text, m.start() if m else 0)
    elif kind == "no_changes":
        for c in run.calls:
            change = changes(c.command) if c.command is not None else bool(EDIT_TOOL.search(c.name))
            yield c.position, "broke" if change else "kept", f"{c.name}: " + _cut(c.command or c.arguments)
    elif kind == "tests_before_commit":
        yield from _tests_first(run)
    else:
        yield from _replies(kind, target, run)


ASKS = re.compile(r"[?？]")


def _replies(kind: str, target: tuple[str, ...], run: Run) -> Iterator[tuple[int, str, str]]:
    for position, text in run.replies:
        broke: re.Match[str] | None | bool = None
        if kind == "reply_language":
            lang = language_of(text)
            if lang is None:
                continue
            broke = lang != target[0]
        elif kind == "no_emoji":
            broke = EMOJI.search(text)
        elif kind == "format_fence":
            broke = "```" not in text
        elif kind == "format_json":
            broke = not is_json(text)
        elif kind == "banned_word":
            broke = next((m for w in target if (m := word_forms(w).search(text))), None)
        elif kind == "code_banned":
            blocks = list(CODE_BLOCK.finditer(text))
            if not blocks:
                continue  # a reply without a fenced block wrote no code to check
            hit = next(((b, m) for b in blocks if (m := CONSTRUCTS[target[0]].search(b.group(1)))), None)
            broke = bool(hit)
            if hit:
                at = hit[0].start(1) + hit[1].start()
                yield position, "broke", _cut(text, at + QUOTE // 4)
                continue
        elif kind == "one_question_at_a_time":
            if not ASKS.search(text):
                continue  # a reply that asks nothing is no turn the rule bears on (an answer, a report of work)
            if questions(text) >= 2:
                broke = QUESTION_HEAD.search(text) or NUMBERED_QUESTION.search(text) or True
            else:
                broke = False
        else:
            continue
        at = broke.start() if isinstance(broke, re.Match) else 0
        yield position, "broke" if broke else "kept", _cut(text, at)


def _tests_first(run: Run) -> Iterator[tuple[int, str, str]]:
    """Each commit: kept when tests ran after the last change before it."""
    last_change, last_test = -1, -1
    for c in run.calls:
        if c.command is None:
            if EDIT_TOOL.search(c.name):
                last_change = c.position
            continue
        if COMMIT.search(c.command):
            m = COMMIT.search(c.command)
            yield (
                c.position,
                "kept" if last_test > last_change and last_test >= 0 else "broke",
                _cut(c.command, m.start() if m else 0),
            )
        if TESTS.search(c.command):
            last_test = c.position
        elif changes(c.command) and not COMMIT.search(c.command):
            last_change = c.position


def changes(command: str) -> bool:
    """The shell command changes files: a remover, mover or writer, an in-place edit, a redirect into a file (quoted
    text aside: ``rg ">=1.1"`` writes nothing; ``2>&1`` and ``> /dev/null`` neither)."""
    return SHELL_CHANGE.search(QUOTED.sub("''", command)) is not None


def _command_pattern(cmd: str) -> re.Pattern[str]:
    """A command at the start of a command line or after ``&&``, ``;``, ``|``, ``sudo``: its words in order
    (``*``: any words between)."""
    words = [r".*?" if w == "*" else re.escape(w) for w in cmd.split()]
    body = r"\s+".join(words).replace(r"\s+.*?\s+", r"\s+(?:\S+\s+)*?")
    return re.compile(
        r"(?:^|[;&|(`\n]\s*|\bsudo\s+|\benv\s+)(?:[A-Za-z_]\w*=\S*\s+)*(?:python3?\s+-m\s+)?"
        + body
        + r"(?=$|[\s;&|)`'\"])"
    )


def _path_pattern(path: str) -> re.Pattern[str]:
    p = path.strip().rstrip("*").lstrip("./") if path.startswith("./") else path.strip().rstrip("*")
    tail = r"" if p.endswith("/") else r"(?=$|[\s\"'`,;:)\]}]|\\n)"
    return re.compile(r"(?:^|[\s\"'`=:(/\\])" + re.escape(p) + tail)


def _segments(command: str) -> list[str]:
    out = []
    for s in SEGMENT.split(command):
        s = ENV.sub("", s.strip())
        while s.startswith(LAUNCHERS):
            s = s.split(None, 1)[1] if " " in s else ""
        if s:
            out.append(s)
    return out


def _invokes(segment: str, program: str) -> bool:
    """The segment runs ``program`` (its first words, a path's last part for the first)."""
    words, want = segment.split(), program.split()
    if not words or len(words) < len(want):
        return False
    first = words[0].replace("\\", "/").rsplit("/", 1)[-1]
    first = first[:-4] if first.lower().endswith(".exe") else first  # Windows: powershell.exe, git.exe
    if first in ("python", "python3") and want[0] in ("pip", "pip3") and words[1:3] == ["-m", want[0]]:
        return True
    return [first, *words[1 : len(want)]] == want


def _asked(persons: list[tuple[int, str]], position: int, verb: str) -> bool:
    """The person's last turn before ``position`` names the action (a commit asked for)."""
    before = [t for p, t in persons if p < position]
    return bool(before) and re.search(rf"(?i)\b{re.escape(verb)}", before[-1]) is not None


def _cut(text: str, at: int = 0) -> str:
    start = max(0, at - QUOTE // 4)
    return " ".join(text[start : start + QUOTE].split())
