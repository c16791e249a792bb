"""Facts a conversation's context holds, and every place each one is mentioned: deterministic, offline.

Kinds and where they come from (``Mention.channel``):

- ``file``        a path a tool call touched (its path argument; a path in a command), a path the user
                  wrote, a path the assistant wrote in backticks;
- ``search``      what a search looked for (a search tool's pattern or query; ``grep``/``rg``/``find`` in a
                  command);
- ``identifier``  a name that names something (``send_message``, ``useAiSend``, ``LicenseState``) the user
                  wrote, or the assistant in backticks; found again inside a later tool call's target;
- ``command``     a command run through a shell tool that is not only a read, a listing or a search (those are
                  the ``file`` and ``search`` facts of the same call): ``pytest tests/test_x.py -q``, ``cargo build``,
                  normalised (a ``cd DIR &&`` prefix and a ``bash -lc`` wrapper taken off, spaces folded);
- ``number``      a figure the person wrote (a number with a unit, a decimal, or of three digits or more:
                  ``250ms``, ``1024 bytes``, ``0.12s``, ``8080``), found again in a later person's message or call;
- ``error``       the first error line of an error result or of a command's output (``[compaction]
                  error_patterns``), digits folded so the same error matches when it recurs;
- ``constraint``  a user sentence matching ``constraint_patterns`` (don't touch X, use Y, 必须, 不要);
- ``decision``    a user or assistant sentence matching ``decision_patterns``;
- ``task``        a sentence matching ``task_patterns``, and every todo-list item (TodoWrite, update_plan)
                  that is not completed.

Stated facts (constraint, decision, task) are sets of terms (the tokenizer's content tokens, docs/definitions.md#tokenizer-and-keywords; the trigger
words left out); two statements are the same fact when they share ``repeat_share`` of the shorter one's
terms and at least two of them, or one name (a path, an identifier, a code such as E0425). A question (a
sentence ending in ? or ？) that matches a stated fact the same way is a mention of it on channel
``question``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from forensics.analyzers.compaction.rules import (
    COMMAND_TOOL,
    FIND_COMMAND,
    SEARCH_COMMAND,
    SEARCH_TOOL,
    TODO_TOOL,
    Rules,
)
from forensics.text.identifiers import IDENTIFIER, PATH, is_specific
from forensics.text.keywords import content_tokens

TEXT_KINDS = ("constraint", "decision", "task")
KINDS = ("file", "search", "command", "identifier", "number", "error", *TEXT_KINDS)
# the categories (docs/metrics.md#compaction), each made of kinds: files and paths, commands (a search is one), errors seen, the
# person's instructions (constraints and open tasks), decisions, numbers and identifiers
CATEGORIES = {
    "path": ("file",),
    "command": ("command", "search"),
    "error": ("error",),
    "instruction": ("constraint", "task"),
    "decision": ("decision",),
    "number": ("number", "identifier"),
}
CATEGORY = {k: c for c, kinds in CATEGORIES.items() for k in kinds}
# the channels on which a later mention is a need, per kind; and the channels that state a fact
NEEDS = {
    "file": {"call", "user"},
    "search": {"call"},
    "command": {"call"},
    "identifier": {"call", "user"},
    "number": {"call", "user"},
    "error": {"result"},
    "constraint": {"user", "question"},
    "decision": {"user", "question"},
    "task": {"user", "question"},
}
SOURCES = {"call", "user", "assistant", "result", "todo"}  # a question needs a fact, it does not state one
PATH_ARGS = (
    "file_path",
    "path",
    "notebook_path",
    "filename",
    "file",
    "target_file",
    "filePath",
    "absolute_path",
    "relative_workspace_path",
    "dir_path",
    "directory",
)
PATTERN_ARGS = ("pattern", "query", "regex", "search", "q", "glob", "search_term", "name_pattern")
_LINE_SUFFIX = re.compile(r"(?::\d+(?::\d+)?|#L\d+(?:-L?\d+)?)$")
_WORD = re.compile(r"[A-Za-z_][\w.]*[\w]|[A-Za-z_]")
_DIGITS = re.compile(r"0x[0-9a-f]+|\d+")
_BOUND = re.compile(r"[。！？!?；;\n]|\.(?=\s)")  # sentence ends (a dot only before a space: not in app/auth.py)
_ASK = re.compile(r"[?？](?=\s|$)")
# a conjunction that ends right where an opener starts a clause (and is trimmed off the clause before it)
_JOIN_WORDS = (
    r"(?:[,，、]\s*(?:and|but|also|then|并且|而且|同时|另外|并|但)?|\s(?:and|but|also|then)|并且|而且|同时|另外)\s*"
)
_JOIN = re.compile(_JOIN_WORDS + r"$", re.I)
SENTENCE_MAX = 300  # characters kept around a trigger in a long run without sentence ends
RESTATED = 0.75  # a user sentence with no trigger asks for a task again when it holds this share of its terms
_CAMEL = re.compile(r"[a-z][A-Z]|[a-z]{2,}[A-Z]")
# a figure worth keeping: a number with a unit, a decimal, or three digits or more (not a year-like date part, a
# version's or a path's piece: the look-arounds keep 1.2.3, v2, 2025-07-15 and file_42 out)
NUMBER = re.compile(
    r"(?<![\w.\-/:#$])(\d+(?:\.\d+)?)(?:\s?(ms|sec|secs|seconds|s|minutes|mins|min|hours|h|kb|mb|gb|tb|"
    r"bytes|px|%|tokens|rpm|qps|fps|ghz|mhz|hz|x|k))?(?![\w.\-/]*\w)",
    re.I,
)
# a shell program that only reads, lists or searches: such a command is the file or search fact of its call
READ_PROGRAMS = frozenset(
    {
        "cat",
        "head",
        "tail",
        "sed",
        "nl",
        "wc",
        "ls",
        "pwd",
        "echo",
        "grep",
        "egrep",
        "rg",
        "ag",
        "ack",
        "find",
        "fd",
        "tree",
        "file",
        "stat",
        "which",
        "less",
        "more",
        "awk",
        "cut",
        "sort",
        "uniq",
        "true",
        "jq",
        "printf",
        "du",
        "diff",
        "type",
        "realpath",
        "dirname",
        "basename",
        "git-show",
        "git-log",
        "git-diff",
        "git-status",
        "git-grep",
        "git-ls-files",
        "git-blame",
    }
)
_SHELL_WRAP = re.compile(r"^(?:/\S*/)?(?:ba|z|da)?sh\s+-l?c\s+")
_CD = re.compile(r"^cd\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s*(?:&&|;)\s*")
_QUOTED = re.compile(r"'[^']*'" + r'|"(?:[^"\\]|\\.)*"')
_SEGMENT = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_CODE = re.compile(r"^[a-z]+\d+[a-z\d]*$|^\d+[a-z]+[a-z\d]*$")  # E0425, ts2304, 404a


@dataclass(slots=True)
class Mention:
    position: int
    channel: str  # call | user | assistant | result | todo | question
    how: str = ""  # the tool's name, or what the mention was ("Read", "Grep", "todo completed", ...)


@dataclass
class Fact:
    kind: str
    key: str
    text: str
    names: frozenset[str] = frozenset()  # paths, identifiers, codes: one of them shared is enough
    terms: frozenset[str] = frozenset()  # stated facts and errors: their content tokens
    mentions: list[Mention] = field(default_factory=list)
    closed_at: int | None = None  # a task: where a todo list marked it completed


@dataclass
class Call:
    position: int
    name: str
    path: str | None
    pattern: str | None
    command: str | None
    todo: str | None  # the arguments of a todo-list call
    is_error: bool
    result: int | None = None  # its result's position


@dataclass
class Messages:
    """What extraction reads from one conversation (``forensics.analyzers.compaction.load`` fills it)."""

    calls: list[Call] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (result position, first error line)
    users: list[tuple[int, str, bool]] = field(default_factory=list)  # (position, text, may state something)
    assistant: list[tuple[int, list[str], str | None]] = field(default_factory=list)  # (position, spans, text)
    skip: frozenset[int] = frozenset()  # positions that are compaction summaries: never a mention


# ------------------------------------------------------------------ names
@lru_cache(maxsize=1 << 16)  # the same paths come back call after call
def norm_path(raw: str) -> str | None:
    """A path as written, tidied (quotes, a :line suffix, backslashes, ./); None when it names nothing."""
    p = raw.strip().strip("'\"`()[]<>,;").replace("\\", "/")
    p = _LINE_SUFFIX.sub("", p).rstrip("/.:")
    while p.startswith("./"):
        p = p[2:]
    if "//" in p:
        p = re.sub(r"/{2,}", "/", p)
    if len(p) < 3 or "://" in raw or p.startswith("..") and len(p) < 5 or not any(ch.isalpha() for ch in p):
        return None
    return p


@lru_cache(maxsize=1 << 16)
def path_key(p: str) -> str:
    """The last two components, lower-cased: the absolute path a tool used and the relative one the user wrote
    are one file."""
    parts = [x for x in p.lower().split("/") if x and x != "~"]
    return "/".join(parts[-2:])


def path_forms(key: str) -> tuple[str, ...]:
    """The forms a text may name a file by: the key, and the file name when it has an extension."""
    base = key.rsplit("/", 1)[-1]
    return (key, base) if base != key and "." in base.strip(".") and len(base) >= 4 else (key,)


MODULE_FILES = (".ex", ".exs", ".rb")  # languages where a file holds the module its name spells (pane_list_live.ex)


def mentions_path(text_lower: str, key: str) -> bool:
    """``text`` names the file: its key or file name standing alone, or, for a snake_case file of a language where
    a file holds one module, that module's CamelCase name (``PaneListLive`` is ``pane_list_live.ex``)."""
    base = key.rsplit("/", 1)[-1]
    stem, dot, ext = base.rpartition(".")
    if dot and f".{ext}" in MODULE_FILES and stem.count("_") >= 1 and mentions_word(text_lower, stem.replace("_", "")):
        return True
    for form in path_forms(key):
        for m in re.finditer(re.escape(form), text_lower):
            before = text_lower[m.start() - 1] if m.start() else " "
            after = text_lower[m.end()] if m.end() < len(text_lower) else " "
            if (before == "/" or not (before.isalnum() or before in "_-.")) and not (after.isalnum() or after == "_"):
                return True
    return False


def mentions_word(text_lower: str, word: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text_lower) is not None


def is_identifier(w: str) -> bool:
    """A specific identifier that is not a path: ``send_message``, ``useAiSend``, ``os.path`` (not e.g, v1.2)."""
    if not is_specific(w) or "/" in w or len(w) > 80 or PATH.fullmatch(w):
        return False
    if "_" not in w and _CAMEL.search(w) is None:  # dotted only: every part a word
        parts = w.split(".")
        return all(len(p) >= 2 and not p.isdigit() for p in parts) and max(map(len, parts)) >= 3
    return True


@lru_cache(maxsize=1 << 16)
def text_path(raw: str) -> str | None:
    """A path written in prose, when it surely is one: a file name with an extension, or a rooted or deeper
    path (src/ai/compact.rs, ./run.sh, ~/x); 前端/后端 and and/or are not."""
    p = norm_path(raw)
    if p is None:
        return None
    last = p.rsplit("/", 1)[-1]
    if re.search(r"\.[A-Za-z][A-Za-z0-9]{0,9}$", last) or raw.lstrip("'\"`(").startswith(("/", "./", "~/")):
        return p
    return p if p.count("/") >= 2 and p.isascii() else None


def number_of(raw: str, unit: str | None) -> str | None:
    """A figure's key (``250ms``, ``1024bytes``, ``0.12s``, ``8080``) when it is worth keeping: with a unit, a decimal
    or three digits and more, and not a bare year."""
    if not unit and "." not in raw and (len(raw) < 3 or len(raw) == 4 and raw[:2] in ("19", "20")):
        return None
    return raw + (unit or "").lower()


def mentions_number(text_lower: str, key: str, code: bool = False) -> bool:
    """``text`` holds the figure: its digits standing alone, with its unit when it has one (``250 ms`` is ``250ms``).
    In a command or a path (``code``) a bare number next to a comma, a colon or a dash is a range or a line
    (``sed -n 1,128p``, ``app.py:128``), not the figure."""
    digits = key.rstrip("abcdefghijklmnopqrstuvwxyz%")
    unit = key[len(digits) :]
    if unit:
        tail = rf"\s?{re.escape(unit)}(?![a-z])"
    else:
        tail = r"(?![\d,:\-]|\.\d)" if code else r"(?!\d|\.\d)"
    head = r"(?<![\w.,:\-])" if code and not unit else r"(?<![\w.])"
    return re.search(f"{head}{re.escape(digits)}{tail}", text_lower) is not None


@lru_cache(maxsize=1 << 14)
def command_key(cmd: str) -> str | None:
    """A command as the fact: a shell wrapper and ``cd DIR &&`` taken off, spaces folded, cut to 200 characters;
    None when every program it runs only reads, lists or searches (the call's file and search facts say those)."""
    c = " ".join(cmd.split())
    wrapped = _SHELL_WRAP.match(c)
    if wrapped:
        c = c[wrapped.end() :].strip()
        if len(c) >= 2 and c[0] == c[-1] and c[0] in "'\"":
            c = c[1:-1].strip()
    while (cd := _CD.match(c)) is not None:
        c = c[cd.end() :]
    if not c:
        return None
    programs = []
    for seg in _SEGMENT.split(_QUOTED.sub("''", c)):  # a | inside a quoted pattern parts nothing
        words = [w for w in seg.split() if "=" not in w.split("/")[0] or w.startswith("-")]
        if not words:
            continue
        prog = words[0].rsplit("/", 1)[-1]
        if prog in ("git", "sudo", "env", "time", "npx", "uv") and len(words) > 1:
            prog = f"{prog}-{words[1]}" if prog == "git" else words[1].rsplit("/", 1)[-1]
        programs.append("sed-i" if prog == "sed" and re.search(r"\s-i", seg) else prog)
    if all(p in READ_PROGRAMS for p in programs):
        return None
    return c[:200]


# an option's quoted argument of three words or more (a commit or close message), to its closing quote or to the end
# of a command cut short
_MESSAGE_ARG = re.compile(
    r"""\s+(?:-m|--[a-z][\w-]*)(?:=|\s+)(?:"[^"]*\s[^"]*\s[^"]*(?:"|$)|'[^']*\s[^']*\s[^']*(?:'|$))"""
)


def mentions_command(text_lower: str, key: str) -> bool:
    """``text`` holds the command; or, for one that carries a message (``--reason="…"``, ``-m '…'``: a quoted
    argument of three words or more), the command without its messages, standing alone (``bd close x-1``)."""
    text = " ".join(text_lower.replace("`", " ").split())
    cmd = " ".join(key.lower().split())
    if cmd in text:
        return True
    head = " ".join(_MESSAGE_ARG.sub(" ", cmd).split())
    if head == cmd or len(head.split()) < 2:
        return False
    return re.search(rf"(?<![\w.-]){re.escape(head)}(?![\w.-])", text) is not None


def is_name(t: str) -> bool:
    """A term specific enough that one shared is evidence: a path, an identifier, a code such as E0425."""
    return "/" in t or is_specific(t) or _CODE.match(t) is not None


def is_strong(t: str) -> bool:
    """A term that, found in a summary, shows it speaks of the fact: a name, a long word, a Han word of 3+."""
    return is_name(t) or (t.isascii() and t.isalpha() and len(t) >= 6) or (not t.isascii() and len(t) >= 3)


def terms_of(text: str, mode: str, drop: str = "") -> frozenset[str]:
    """Content tokens of ``text`` (stop words out), less those of ``drop`` (the trigger that matched)."""
    gone = set(content_tokens(drop, mode)) if drop else set()
    return frozenset(t for t in content_tokens(text, mode) if t not in gone)


def overlap(a: frozenset[str], b: frozenset[str], share: float) -> bool:
    """Two statements are one fact: ``share`` of the shorter's terms shared, and at least two, or one name."""
    if not a or not b:
        return False
    both = a & b
    return len(both) >= share * min(len(a), len(b)) and (len(both) >= 2 or any(is_name(t) for t in both))


# ------------------------------------------------------------------ extraction
class Extractor:
    """Builds the facts of one conversation, mention by mention, in position order."""

    def __init__(self, rules: Rules) -> None:
        self.r = rules
        self.facts: dict[tuple[str, str], Fact] = {}
        self.stated: dict[str, list[Fact]] = {k: [] for k in TEXT_KINDS}
        self.idents: set[str] = set()
        self.todos = False  # a todo list has named tasks
        self.figures: set[str] = set()  # the keys of the number facts so far

    def add(
        self,
        kind: str,
        key: str,
        text: str,
        m: Mention,
        names: frozenset[str] = frozenset(),
        terms: frozenset[str] = frozenset(),
    ) -> Fact:
        f = self.facts.get((kind, key))
        if f is None:
            f = self.facts[(kind, key)] = Fact(kind, key, text, names, terms)
        elif len(text) > len(f.text) and kind == "file":
            f.text = text  # show the fullest path seen
        if not f.mentions or f.mentions[-1].position != m.position or f.mentions[-1].channel != m.channel:
            f.mentions.append(m)
        return f

    def file(self, raw: str, m: Mention, prose: bool = False) -> None:
        p = text_path(raw) if prose else norm_path(raw)
        if p and p not in (".", "/", "~"):
            self.add("file", path_key(p), p, m, frozenset({path_key(p)}))

    def identifier(self, word: str, m: Mention) -> None:
        word = word.strip("()`'\".,:;")
        if is_identifier(word):
            w = word.lower()
            self.add("identifier", w, word, m, frozenset({w}))
            self.idents.add(w)

    def numbers(self, text: str, m: Mention) -> None:
        for raw in NUMBER.finditer(text):
            key = number_of(raw.group(1), raw.group(2))
            if key is not None:
                self.add("number", key, raw.group().strip(), m, frozenset({key}))
                self.figures.add(key)

    def search(self, pattern: str, m: Mention) -> None:
        q = " ".join(pattern.strip().strip("'\"").split())
        if len(q) >= 2:
            names = frozenset(w.lower() for w in _WORD.findall(q) if is_specific(w.lower()))
            self.add("search", q.lower(), q, m, names)

    def stated_fact(self, kind: str, sentence: str, trigger: str, m: Mention) -> None:
        idents = {w.lower() for w in IDENTIFIER.findall(sentence) if is_identifier(w)}  # camelCase, before lower-casing
        terms = terms_of(sentence, self.r.tokenizer, trigger) | idents
        if not terms:
            return
        names = frozenset(t for t in terms if is_name(t) or t in idents)
        for f in self.stated[kind]:
            if overlap(f.terms, terms, self.r.repeat_share):
                if f.mentions[-1].position != m.position:
                    f.mentions.append(m)
                return
        f = Fact(kind, f"{kind}:{len(self.stated[kind])}", sentence.strip()[:200], names, terms, [m])
        self.stated[kind].append(f)

    def question(self, sentence: str, position: int) -> None:
        terms = terms_of(sentence, self.r.tokenizer)
        todos = [f for f in self.facts.values() if f.kind == "task"]
        for f in [*(f for k in TEXT_KINDS for f in self.stated[k]), *todos]:
            if f.mentions[0].position < position and overlap(f.terms, terms, self.r.repeat_share):
                f.mentions.append(Mention(position, "question", sentence.strip()[:120]))

    def sentences(self, text: str, position: int, channel: str) -> None:
        """Stated facts and questions in one message's text (user or assistant): the sentence around each
        trigger (a constraint before a decision before a task), and each sentence that ends in a question mark."""
        blanked = self.r.blank(text)
        kinds: tuple[tuple[str, re.Pattern[str]], ...] = (
            (("constraint", self.r.constraint),) if channel == "user" else ()
        )
        kinds += (("decision", self.r.decision), ("task", self.r.task))
        hits = sorted(
            (h.start(), rank, kind, h.group()) for rank, (kind, pat) in enumerate(kinds) for h in pat.finditer(blanked)
        )
        asks = [q.start() for q in _ASK.finditer(blanked)]
        if not hits and not asks:
            return
        bounds = [b.end() for b in _BOUND.finditer(blanked)]
        done: set[int] = set()
        for at, _, kind, trigger in sorted(hits, key=lambda h: (_sentence_of(bounds, h[0]), h[1])):
            start, end = _span(bounds, at, len(text))
            if kind == "constraint":  # one instruction per clause: "…before committing and never push to main"
                start, end = self._clause(blanked, start, end, at, [h[0] for h in hits if h[2] == "constraint"])
            if start not in done:
                done.add(start)
                self.stated_fact(kind, text[start:end], trigger, Mention(position, channel))
        for q in asks:
            start, end = _span(bounds, q, len(text))
            if start not in done:
                done.add(start)
                self.question(text[start:end], position)

    def _clause(self, blanked: str, start: int, end: int, at: int, triggers: list[int]) -> tuple[int, int]:
        """The clause of sentence [start, end) that holds the trigger at ``at``: the sentence is cut before an
        opener (never, always, 必须, …) that follows a conjunction, when the part before holds a trigger too and
        what follows names at least two things of its own."""
        cuts = [start]
        for m in self.r.opener.finditer(blanked, start, end):
            join = _JOIN.search(blanked, cuts[-1], m.start())
            if (
                join is not None
                and any(cuts[-1] <= t < join.start() for t in triggers)
                and len(terms_of(blanked[m.start() : end], self.r.tokenizer, m.group())) >= 2
            ):
                cuts.append(m.start())  # (a clause of one word, 别改, only repeats the one before)
        i = bisect_right(cuts, at) - 1
        stop = cuts[i + 1] if i + 1 < len(cuts) else end
        piece = blanked[cuts[i] : stop]
        trimmed = _JOIN.search(piece)
        return cuts[i], cuts[i] + (trimmed.start() if trimmed else len(piece))

    def restated(self, text: str, position: int) -> None:
        """A user sentence that asks again for an open task without a trigger word: most of the task's terms."""
        tasks = [
            f
            for f in (*self.stated["task"], *(f for f in self.facts.values() if f.kind == "task"))
            if f.mentions[0].position < position and f.mentions[-1].position != position and f.terms
        ]
        start = 0
        for b in [*(x.end() for x in _BOUND.finditer(text)), len(text)]:
            sentence, start = text[start:b], b
            if not tasks or len(sentence.strip()) < 4 or len(sentence) > SENTENCE_MAX:
                continue
            low = sentence.lower()
            need = {id(f): max(2, RESTATED * len(f.terms)) for f in tasks}
            maybe = [f for f in tasks if sum(t in low for t in f.terms) >= need[id(f)]]  # a term is a substring
            if not maybe:
                continue
            terms = terms_of(sentence, self.r.tokenizer)
            for f in maybe:
                if len(f.terms & terms) >= need[id(f)]:
                    f.mentions.append(Mention(position, "user"))
                    tasks.remove(f)

    def todo(self, args: str, m: Mention) -> None:
        try:
            obj = orjson.loads(args)
        except orjson.JSONDecodeError:
            return
        items = obj.get("todos") or obj.get("plan") if isinstance(obj, dict) else None
        for it in items if isinstance(items, list) else []:
            if not isinstance(it, dict):
                continue
            text = it.get("content") or it.get("step") or it.get("title")
            if not isinstance(text, str) or not text.strip():
                continue
            key = "todo:" + " ".join(text.lower().split())
            f = self.add(
                "task",
                key,
                text.strip()[:200],
                Mention(m.position, "todo", "todo list"),
                terms=terms_of(text, self.r.tokenizer),
            )
            self.todos = True
            if it.get("status") == "completed" and f.closed_at is None:
                f.closed_at = m.position


def _sentence_of(bounds: list[int], at: int) -> int:
    return bisect_right(bounds, at)


def _span(bounds: list[int], at: int, n: int) -> tuple[int, int]:
    """The sentence holding offset ``at`` (cut to SENTENCE_MAX characters around it)."""
    i = bisect_right(bounds, at)
    start = bounds[i - 1] if i else 0
    end = bounds[i] if i < len(bounds) else n
    return max(start, at - SENTENCE_MAX // 2), min(end, max(start, at - SENTENCE_MAX // 2) + SENTENCE_MAX)


def command_text(cmd: str) -> str:
    """A command as one string (Codex logs it as an argv list)."""
    if cmd.startswith("["):
        try:
            argv = orjson.loads(cmd)
            if isinstance(argv, list):
                return " ".join(str(a) for a in argv)
        except orjson.JSONDecodeError:
            pass
    return cmd


def extract(msgs: Messages, rules: Rules) -> list[Fact]:
    """Every fact of one conversation with its mentions in position order."""
    x = Extractor(rules)
    events: list[tuple[int, int, Any]] = []  # (position, order, item): stated facts need position order
    events += [(c.position, 1, c) for c in msgs.calls]
    # a command that only reads (cat, sed -n, rg) and did not fail shows a file's text: an "Error(" in it is code
    reads = {
        c.result
        for c in msgs.calls
        if c.result is not None
        and not c.is_error
        and c.command
        and _tool(c.name)[2]
        and command_key(command_text(c.command)) is None
    }
    events += [(p, 2, ("error", line)) for p, line in msgs.errors if p not in reads]
    events += [(p, 0, ("user", t, stated)) for p, t, stated in msgs.users if p not in msgs.skip]
    events += [(p, 0, ("assistant", spans, t)) for p, spans, t in msgs.assistant if p not in msgs.skip]
    for position, _, item in sorted(events, key=lambda e: (e[0], e[1])):
        if isinstance(item, Call):
            _call(x, item)
        elif item[0] == "error":
            _error(x, item[1], position)
        elif item[0] == "user":
            _, text, stated = item
            for w in PATH.findall(text):
                x.file(w, Mention(position, "user"), prose=True)
            for w in IDENTIFIER.findall(text):
                x.identifier(w, Mention(position, "user"))
            x.numbers(text, Mention(position, "user"))
            if stated:
                x.sentences(text, position, "user")
            if x.stated["task"] or x.todos:
                x.restated(text, position)
        else:
            _, spans, text = item
            for span in spans:
                if PATH.fullmatch(span.strip()):
                    x.file(span, Mention(position, "assistant"), prose=True)
                elif _WORD.fullmatch(span.strip().rstrip("()")):
                    x.identifier(span, Mention(position, "assistant"))
            if text:
                x.sentences(text, position, "assistant")
    facts = list(x.facts.values()) + [f for k in TEXT_KINDS for f in x.stated[k]]
    searched = {f.key for f in facts if f.kind == "search"}
    return [f for f in facts if not (f.kind == "identifier" and f.key in searched)]  # the search covers it


@lru_cache(maxsize=1024)
def _tool(name: str) -> tuple[bool, bool, bool]:
    """(keeps a todo list, searches, runs commands)."""
    return (
        TODO_TOOL.search(name) is not None,
        SEARCH_TOOL.search(name) is not None,
        COMMAND_TOOL.search(name) is not None,
    )


def _call(x: Extractor, c: Call) -> None:
    m = Mention(c.position, "call", c.name)
    todo, searching, running = _tool(c.name)
    if c.todo is not None and todo:
        x.todo(c.todo, m)
        return
    if c.pattern and searching:
        x.search(c.pattern, m)
    elif c.path:  # a search's path is only its scope
        x.file(c.path, m)
    cmd = command_text(c.command) if c.command and running else ""
    if cmd:
        for rx in (SEARCH_COMMAND, FIND_COMMAND):
            for s in rx.finditer(cmd):
                x.search(s.group("q"), m)
        if "/" in cmd or "." in cmd:
            code = _MESSAGE_ARG.sub(" ", cmd)  # a commit or close message is prose: its paths are read as prose
            for w in PATH.findall(code):
                x.file(w, m)
            for msg in _MESSAGE_ARG.findall(cmd):
                for w in PATH.findall(msg):
                    x.file(w, m, prose=True)
        key = command_key(cmd)
        if key is not None:
            x.add("command", key.lower(), key, m)
    target = " ".join(t for t in (c.pattern, c.path, cmd) if t)
    if x.figures and target:
        low = target.lower()
        for f in [x.facts[("number", k)] for k in x.figures]:
            if f.mentions[0].position < c.position and mentions_number(low, f.key, code=True):
                x.add("number", f.key, f.text, m)
    if not x.idents:
        return
    for w in {w.lower() for w in _WORD.findall(target)} & x.idents:  # an identifier known before, in this target
        f = x.facts[("identifier", w)]
        if f.mentions[0].position < c.position:
            x.add("identifier", w, f.text, m)


def _error(x: Extractor, line: str, position: int) -> None:
    """An error line; its terms are left for the audit to compute (``error_terms``): only a judged one needs them."""
    text = " ".join(line.split())[:200]
    if text:
        x.add("error", _DIGITS.sub("#", text.lower())[:160], text, Mention(position, "result"))


def error_terms(f: Fact, mode: str) -> Fact:
    """An error fact with its terms and names (digits out)."""
    if f.kind == "error" and not f.terms:
        f.terms = terms_of(_DIGITS.sub(" ", f.text), mode)
        f.names = frozenset(t for t in f.terms if is_name(t))
    return f
