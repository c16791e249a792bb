"""What a run's file edits hand in, read for the run ranking (``outcomes.problem_kind_sets``;
docs/failures-evaluation.md, branch `rank12`): two shapes a reviewer names on a coding agent's failed runs that no
problem rule reads.

- ``NO_PROJECT_CHANGE``: the run's agent mostly changes the project through a file editor (``project_work``) and
  the run changed no file it had not created itself: its only edits went into its own reproduction or scratch files, or it
  edited nothing. The work handed in changes nothing of the project.
- ``STAND_IN``: the run "checked" its change by running a script it wrote in another language than the project
  files it changed, a script that runs no other program and writes no file: a stand-in that imitates the project's
  code (a Python function re-implementing the Java method it edited) instead of running it.

Both are read off the calls of an editor whose calls name their file: SWE-agent's commands (``open PATH``, ``create
PATH``, ``edit N:M`` on the file open; 1.x's ``open``/``create``/``edit``/``insert`` with ``path``/``filename``) and
the ``str_replace_editor`` of SWE-agent 1.x and OpenHands (``command`` ``view``/``create``/``str_replace``/``insert``
with ``path``). A run whose agent has no such editor (a shell only, no tools) is never read: which file a shell
command created is not known, and a run without one says nothing here.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

import duckdb

NO_PROJECT_CHANGE = "ended: no_project_change"
STAND_IN = "checked_by_stand_in"

OPENS = {"open", "view", "goto"}  # an editor call that shows a file
CREATES = {"create"}
CHANGES = {"edit", "insert", "append", "str_replace", "replace", "undo_edit"}
EDITOR_NAME = re.compile(r"(?i)str_replace_editor|str_replace_based_edit_tool|^editor$")
LANGUAGES = {
    "py": "python",
    "java": "java",
    "kt": "kotlin",
    "scala": "scala",
    "groovy": "groovy",
    "sh": "shell",
    "bash": "shell",
    "js": "javascript",
    "mjs": "javascript",
    "ts": "typescript",
    "go": "go",
    "rs": "rust",
    "c": "c",
    "h": "c",
    "cc": "c++",
    "cpp": "c++",
    "hpp": "c++",
    "rb": "ruby",
    "php": "php",
    "cs": "c#",
}
RUNNERS = {
    "python": "python",
    "python3": "python",
    "bash": "shell",
    "sh": "shell",
    "node": "javascript",
    "ruby": "ruby",
    "php": "php",
}
# a script that runs another program or writes a file is no stand-in: it drives the project's toolchain (a shell
# wrapper around `javac`, a Python `subprocess` call) or changes the project (a script rewriting references)
DRIVES = re.compile(
    r"subprocess|os\.system|os\.popen|os\.exec|\bexecSync\b|child_process|\bjavac\b|(?:^|[\s;&|'\"(\[])java(?=[\s'\",])|"
    r"\bmvnw?\b|\bgradlew?\b|\bdocker\b|\bmake\b|\bcargo\b|\bgo\s+(?:run|test|build)\b|\bnpm\b|"
    r"\bopen\([^)]*['\"][wax]|\.write(?:_text)?\("
)
# in a shell script also a redirect into a file or a command that changes one
DRIVES_SHELL = re.compile(r"(?<![>&\d-])>{1,2}\s*[\w./'\"$-]|\bsed\b|\bmv\b|\bcp\b|\btee\b")
# a shell command that changes a file (judge.SHELL_CHANGE's verbs, in-place edits, a redirect into a file)
SHELL_CHANGE = re.compile(
    r"(?:^|[\s;&|(])(?:rm|mv|cp|touch|tee|truncate|unlink|patch|git\s+(?:apply|checkout|restore|am))\s|\bsed\s+(?:-\w+\s+)*-i|"
    r"\bperl\s+-[a-z]*i|(?<![>&\d-])>{1,2}\s*['\"]?[\w./-]+"
)
MOVES = {"mv", "cp"}
OUTSIDE = re.compile(r"^(?:/(?:etc|usr|tmp|var|opt|root|home|dev|proc)\b|~)")  # the machine's files, not the project's
EDITING_RUNS = 10  # runs of one agent that used the editor it takes to say its runs mostly change the project
CALL_CHARS = 20_000  # of a call's arguments read: a script's text


@dataclass
class Work:
    """One run's editor work: the files it showed, created and changed (base names), the project files' languages,
    and the scripts it ran (runner's language, the script's base name)."""

    editor: bool = False
    created: set[str] = field(default_factory=set)
    changed: set[str] = field(default_factory=set)  # files changed by the editor, created ones among them
    shell_changed: bool = False  # a shell command changed a file other than the run's own
    text: dict[str, str] = field(default_factory=dict)  # per created file, the text written into it
    ran: list[tuple[str, str]] = field(default_factory=list)

    @property
    def project(self) -> set[str]:
        """The files the run changed that it had not created."""
        return self.changed - self.created

    @property
    def changes(self) -> bool:
        """It changed a file of the project (through the editor or a shell command)."""
        return bool(self.project) or self.shell_changed

    def kinds(self, edits: bool | None = None) -> set[str]:
        """The kinds it shows; ``edits``: the run's agent mostly changes the project through a file editor
        (``project_work``; None: this run used one)."""
        out = set()
        if (self.editor if edits is None else edits) and not self.changes:
            out.add(NO_PROJECT_CHANGE)
        langs = {language(f) for f in self.project} - {None}
        if langs and any(
            lang not in langs and script in self.created and not drives(lang, self.text.get(script, ""))
            for lang, script in self.ran
        ):
            out.add(STAND_IN)
        return out


def drives(lang: str, text: str) -> bool:
    """A script's text runs another program or writes a file (``DRIVES``; in a shell script also a redirect,
    ``DRIVES_SHELL``)."""
    return bool(DRIVES.search(text) or (lang == "shell" and DRIVES_SHELL.search(text)))


def language(path: str) -> str | None:
    m = re.search(r"\.(\w+)$", path)
    return LANGUAGES.get(m.group(1).lower()) if m else None


def _base(path: str) -> str:
    return path.strip().strip("'\"").rstrip("/").rsplit("/", 1)[-1]


def _args(arguments: str) -> dict[str, object]:
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def read_call(work: Work, current: str | None, name: str, arguments: str, failed: bool) -> str | None:
    """Add one call to ``work``; returns the editor's open file after it."""
    args = _args(arguments)
    command = args.get("command")
    said = command if isinstance(command, str) else ""
    path = next(
        (v for k in ("path", "filename", "file_name", "file_path", "filePath") if isinstance(v := args.get(k), str)),
        None,
    )
    body = next(
        (v for k in ("file_text", "new_str", "text", "replace", "content") if isinstance(v := args.get(k), str)), ""
    )
    if (
        EDITOR_NAME.search(name) and path
    ):  # str_replace_editor: the action in `command` (none: a view), the file in `path`
        verb = {"view": "open", "": "open"}.get(said, said)
    else:
        first = said.split("\n", 1)[0].strip()
        words = _words(first) if first else []
        verb = name if name in OPENS | CREATES | CHANGES else (words[0] if words else "")
        if verb in OPENS | CREATES and path is None and len(words) > 1 and words[0] == verb:
            path = words[1]
        if verb in CHANGES and not body:
            body = said.split("\n", 1)[1] if "\n" in said else ""
    if verb in OPENS | CREATES | CHANGES:
        work.editor = True
        if failed:
            return current
        if verb == "goto":
            return current
        target = _base(path) if path else current
        if verb in CREATES and target:
            work.created.add(target)
            work.text[target] = body
            return target
        if verb in OPENS:
            return target
        if target:
            work.changed.add(target)
            if target in work.created:
                work.text[target] = work.text.get(target, "") + "\n" + body
        return target
    shell = said or (arguments if not args else "")
    for line in shell.split("\n"):
        words = _words(line.strip())
        if len(words) > 1 and _base(words[0]) in RUNNERS:
            script = next((w for w in words[1:] if not w.startswith("-")), None)
            if script:
                work.ran.append((RUNNERS[_base(words[0])], _base(script)))
        elif words and re.fullmatch(r"\./[\w.-]+", words[0]) and language(words[0]):
            work.ran.append((str(language(words[0])), _base(words[0])))
        if not failed:
            for part in re.split(r"&&|\|\||;|\|", line):
                _shell_change(work, part)
    return current


def _shell_change(work: Work, command: str) -> None:
    """A shell command that changes a file other than the run's own (``Work.created``) or the machine's
    (``OUTSIDE``); a move or copy of the run's own files makes the copies its own."""
    if not SHELL_CHANGE.search(command):
        return
    words = [w for w in _words(command.strip()) if w not in ("sudo", ">", ">>")]
    paths = [
        w for w in words[1:] if re.fullmatch(r"[\w.~/+-]*[./][\w.~/+-]*", w) and w[0] != "-" and not OUTSIDE.match(w)
    ]
    if words and words[0] in MOVES and len(paths) >= 2 and {_base(p) for p in paths[:-1]} <= work.created:
        if not paths[-1].endswith("/"):
            work.created.add(_base(paths[-1]))
        return
    if not paths and any(OUTSIDE.match(w) for w in words[1:]):
        return
    if not paths or not {_base(p) for p in paths} <= work.created:
        work.shell_changed = True


def project_work(
    con: duckdb.DuckDBPyConnection, cutoff: dict[str, int | None], agent: dict[str, str] | None = None
) -> dict[str, set[str]]:
    """Per run of ``cutoff`` that made a call (its calls before the position given, the grade's), the kinds its
    editor work shows (``Work.kinds``). ``no_project_change`` is read only where the run's agent (``agent``: per run,
    the format that read it; without it, one agent) mostly changes the project: of at least ``EDITING_RUNS`` of its
    runs that used the editor, more than half changed a project file (Multi-SWE-bench's SWE-agent runs: 291 of the
    426 that used it). There a run that never opened the editor hands in no change either (one that only searched
    until its limit); an agent whose sessions mostly read and answer (crush's in fixtures/real) is not read."""
    rows = con.execute(
        "SELECT conversation_id, position, coalesce(name, ''), left(coalesce(arguments, ''), ?), "
        "coalesce(is_error, false) FROM tool_calls WHERE position IS NOT NULL "
        "AND conversation_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY conversation_id, position, call_index",
        [CALL_CHARS, sorted(cutoff)],
    ).fetchall()
    works: dict[str, Work] = {}
    current: dict[str, str | None] = {}
    for cid, pos, name, args, err in rows:
        cut = cutoff.get(cid)
        if cut is not None and pos >= cut:
            continue
        work = works.setdefault(cid, Work())
        current[cid] = read_call(work, current.get(cid), str(name), str(args), bool(err))
    by: dict[str | None, list[bool]] = {}  # per agent, whether each run that used the editor changed the project
    for c, w in works.items():
        if w.editor:
            by.setdefault((agent or {}).get(c), []).append(w.changes)
    edits = {a for a, got in by.items() if len(got) >= EDITING_RUNS and sum(got) > len(got) / 2}
    return {cid: ks for cid, w in works.items() if (ks := w.kinds((agent or {}).get(cid) in edits))}
