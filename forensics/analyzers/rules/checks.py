"""Which rules a program can check, and how: a rule's words mapped to a ``Check`` (docs/definitions.md#rules-a-run-was-given).

A rule is checkable when its words name something the log records: a command or tool it forbids, a program to use
instead of another (a package manager), a path not to touch, tests before a commit, the reply's language, no emoji,
and the per-request formats of the person's turn (a fenced block of a language, JSON only, a word not to use, one
question at a time). Every other rule is ``unchecked``: listed, never guessed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

NEG = r"(?:never|don'?t|do not|must not|mustn'?t|should not|shouldn'?t|avoid|no longer|under no circumstances)"
NEG_ZH = r"(?:不要|禁止|别|不准|不得|切勿|不许|不能)"
ARG = r"(?:`(?P<tick>[^`\n]{1,80})`|(?P<word>[A-Za-z0-9_](?:[\w.+/-]*[\w+/-])?))"

# package managers, by the ecosystem whose installs they compete for
FAMILIES = (("npm", "yarn", "pnpm", "bun"), ("pip", "pip3", "uv", "poetry", "pipenv", "conda"))
PROGRAMS = frozenset(
    {p for f in FAMILIES for p in f}
    | {
        "rg",
        "grep",
        "find",
        "fd",
        "cat",
        "bat",
        "ls",
        "sed",
        "awk",
        "curl",
        "wget",
        "make",
        "cargo",
        "go",
        "docker",
        "podman",
        "python",
        "python3",
        "node",
        "deno",
        "npx",
        "bunx",
        "pytest",
        "jest",
        "vitest",
        "git",
        "sudo",
        "tsc",
        "eslint",
        "prettier",
        "black",
        "ruff",
        "mypy",
        "kubectl",
        "helm",
        "terraform",
        "just",
        "task",
        "gh",
        "powershell",
        "pwsh",
    }
)
# what a bare word after a prohibition stands for: "never push" is `git push`, "never commit" `git commit`
BARE = {
    "force push": "git push --force",
    "force-push": "git push --force",
    "push": "git push",
    "commit": "git commit",
    "use sudo": "sudo",
    "sudo": "sudo",
    "rm -rf": "rm -rf",
    "git reset --hard": "git reset --hard",
    "reset --hard": "git reset --hard",
    "amend": "git commit --amend",
}

LANGUAGES = {
    "chinese": "zh",
    "mandarin": "zh",
    "english": "en",
    "japanese": "ja",
    "korean": "ko",
    "russian": "ru",
    "french": "fr",
    "german": "de",
    "spanish": "es",
    "portuguese": "pt",
    "italian": "it",
}
LANGUAGE = re.compile(
    r"(?i)\b(?:answer|reply|respond|write|talk|speak|communicate|converse|responses?|replies|answers)"
    r"\w*\b(?:[^.\n]{0,30})\b(?:in|using)\s+(" + "|".join(LANGUAGES) + r")\b"
)
LANGUAGE_ZH = re.compile(
    r"(?:用|使用|以)(中文|英文|日文|日语|英语|汉语)(?:来)?(?:回答|回复|交流|沟通|答复|输出|写)"
    r"|(中文|英文)(?:回答|回复|答复)"
)
ZH_NAMES = {"中文": "zh", "汉语": "zh", "英文": "en", "英语": "en", "日文": "ja", "日语": "ja"}
EMOJI = re.compile(
    r"(?i)\b(?:never|don'?t|do not|no|avoid|without|must not)\b[^.\n]{0,30}\bemojis?\b"
    r"|(?:不要|禁止|别|不准)(?:使用|用|加)?(?:表情|emoji)"
)
TESTS_FIRST = re.compile(
    r"(?i)\btests?\b[^.\n]{0,60}\bbefore\b[^.\n]{0,30}\bcommit"
    r"|\bbefore\b[^.\n]{0,30}\bcommit\w*\b[^.\n]{0,60}\b(?:run|pass)\w*\b[^.\n]{0,30}\btests?\b"
    r"|提交前[^。\n]{0,20}(?:运行|跑)[^。\n]{0,10}测试"
)
INSTEAD = re.compile(
    r"(?i)\b(?:use|run|prefer|always use)\s+"
    + ARG.replace("tick", "a1").replace("word", "a2")
    + r"\s*,?\s*(?:instead of|rather than|not|over|in place of)\s+(?:using\s+)?"
    + ARG.replace("tick", "b1").replace("word", "b2")
)
# the same with anything to use ("use terminal instead of powershell", "use the editor tool rather than `sed`"): only
# the program not to use is checked, so it must be one the calls name (``PROGRAMS``); "not" and "over" are too loose
# here ("use caution, not sudo"), only the explicit connectors
INSTEAD_ANY = re.compile(
    r"(?i)\b(?:use|run|prefer|always use)\s+(?:the\s+|a\s+)?`?(?P<a>[\w.+-]+)`?(?:\s+\w+)?\s*,?\s*"
    r"(?:instead of|rather than|in place of)\s+(?:using\s+|the\s+)?`?(?P<b>[\w.+-]+)`?(?=$|[\s,.;:!)])"
)
INSTEAD_ZH = re.compile(r"(?:用|使用)\s*`?(?P<a>[\w.+-]+)`?\s*(?:而不是|代替|替代|不要用)\s*`?(?P<b>[\w.+-]+)`?")
USE_MANAGER = re.compile(
    r"(?i)\b(?:always\s+|only\s+)?use\s+(?:only\s+)?`?("
    + "|".join(p for f in FAMILIES for p in f)
    + r")`?(?=[\s,.;:)]|$)(?:\s+(?:as|for)\b)?"
)
PATH_RULE = re.compile(
    r"(?i)\b" + NEG + r"\s+(?:ever\s+)?(?:edit|modify|change|touch|delete|remove|overwrite|write to|"
    r"update|rewrite)\w*\s+(?:(?:the|any|anything in|files? (?:in|under|inside))\s+)*"
    r"(?:files?\s+(?:in|under)\s+)?(?:`(?P<tick>[^`\n]{2,120})`|(?P<word>[\w.-]*[/.][\w./*-]+))"
)
COMMAND_RULE = re.compile(
    r"(?i)\b" + NEG + r"\s+(?:ever\s+)?(?:run|use|call|execute|invoke|type)\s+(?:the\s+)?"
    r"`(?P<cmd>[^`\n]{1,80})`"
)
COMMAND_ZH = re.compile(NEG_ZH + r"\s*(?:运行|使用|执行|调用|用)?\s*`(?P<cmd>[^`\n]{1,80})`")
BARE_RULE = re.compile(
    r"(?i)\b" + NEG + r"\s+(?:ever\s+)?(?:(?:run|use)\s+)?(?P<what>force[- ]push|push|commit|"
    r"use sudo|sudo|rm -rf|git reset --hard|reset --hard|amend)\b(?P<rest>[^.\n]{0,60})"
)
# what may follow a bare "never commit"/"never push" for it to mean the action itself ("never commit credentials"
# is about what goes into a commit: unchecked; so is "never commit the embedded database": "the", "any", "your" only
# before the work itself, "the changes", "your code")
BARE_OBJECT = re.compile(
    r"(?i)^\s*(?:$|[.,;:!)]|(?:unless|without|until|yet|before|anything|changes|code|directly|"
    r"(?:any|your|the|a)\s+(?:changes|code|work|commits?|files?|edits?)\b|commits?\b|to\b|on\b|or\b|and\b|--))"
)
PATH_LIST = re.compile(
    r"(?i)\b" + NEG + r"\s+(?:ever\s+)?(?:edit|modify|change|touch|delete|remove|overwrite|write to|"
    r"update|rewrite)\w*\b(?P<rest>.{0,200})"
)
TICKED_PATH = re.compile(r"`([^`\s]*[/.][^`\s]*)`")
CONDITION = re.compile(r"(?i)\b(?:unless|except|without|until|before|if|when)\b")
INSTALL_RULE = re.compile(
    r"(?i)\b" + NEG + r"\s+(?:try to\s+)?install\b[^.\n]{0,40}?\b(?:with|using|via|through)\s+"
    r"(?P<rest>[^.\n]+)"
)
UNLESS = re.compile(
    r"(?i)\bunless\b|\bwithout (?:being |explicit(?:ly)? )?(?:asked|told|permission|approval)"
    r"|\bexplicitly (?:asked|requested|told)|\bwhen (?:asked|told)"
)
TOOL_NAME = re.compile(r"^[A-Z][A-Za-z]+$")

# the per-request formats of a person's (or system) turn, the ``instruction_violated`` kind's first rules
FENCE_ASKED = re.compile(r"(?i)(?:in|use|using) the format of ```(\w+)```|(?:wrapped|enclosed) in (?:a )?```(\w+)")
JSON_ONLY = re.compile(
    r"(?i)\b(?:respond|reply|answer|output|return)(?: with)? only (?:with )?(?:valid )?JSON\b"
    r"|\bonly (?:output|return) (?:valid )?JSON\b"
)
WORD_BANNED = re.compile(
    r"(?i)without (?:using|mentioning|saying) the words? ((?:\"[^\"]{2,40}\"(?:,? (?:or|and) )?"
    r"|“[^”]{2,40}”(?:,? (?:or|and) )?)+)"
)
QUOTED = re.compile(r"\"([^\"]{2,40})\"|“([^”]{2,40})”")
# "Do not use the word 'X' (or its synonyms: 'Y', 'Z') in your reasoning": a word banned from what the model reasons
# (the reasoning a format keeps: ``events.kind = 'reasoning'``), the reply left free
WORD_BANNED_USE = re.compile(
    r"(?i)\b(?:do not|don'?t|never|must not|should not|avoid) (?:use|using|mention|mentioning|say|saying) the words? "
    r"((?:[\"“'‘][^\"”'’\n]{2,40}[\"”'’](?:,? (?:or|and) )?)+)((?:[^.\n]{0,20}\bsynonyms?\b[^\n]{0,200})?)"
)
IN_REASONING = re.compile(r"(?i)^[^.\n]{0,240}\bin (?:your|the) (?:reasoning|thinking|chain[ -]of[ -]thought)")
QUOTED_ANY = re.compile(r"[\"“'‘]([^\"”'’\[\]\n]{2,40})[\"”'’](?!\w)")
ONE_AT_A_TIME = re.compile(r"(?i)\bone(?:[ -]question)?[ -]at[ -]a[ -]time\b")
# "one at a time" is about questions when the turn says so, or is a bare reply to a list of them; "make the changes
# one at a time" is about the work, which no reply's format shows
ABOUT_QUESTIONS = re.compile(r"(?i)\bquestions?\b|\bgo(?:ing)? through them\b|\bask(?:ing)?\b|\banswers?\b")
SHORT_ASK = 40


# a code construct the code must not use, said as a whole item of a requirements list ("No functions or variable
# declarations", "- No f-strings", "Do not use list comprehensions."): the ban ends the item (a scoped ban, "do not
# use loops for output definitions", is not checked); judged in the reply's fenced code only
CONSTRUCTS: dict[str, re.Pattern[str]] = {
    "functions": re.compile(
        r"(?m)^[ \t]*(?:def|function)\s+\w+\s*\(|^[ \t]*(?:void|int|float|double|char|auto)\s+\w+"
        r"\s*\([^;\n]*\)\s*\{"
    ),
    "variable declarations": re.compile(
        r"(?m)^[ \t]*(?:(?:var|let|const|int|float|double|char|auto)\s+)?"
        r"[A-Za-z_][\w.]*\s*(?:,\s*[A-Za-z_]\w*\s*)*=(?!=)[^,\n]*$"
    ),
    "f-strings": re.compile(r"(?<![\w\"'])[fF]\"[^\"\n]*\{|(?<![\w\"'])[fF]'[^'\n]*\{"),
    "list comprehensions": re.compile(r"\[[^\[\]\n]*\bfor\b[^\[\]\n]*\bin\b[^\[\]\n]*\]"),
    "imports": re.compile(r"(?m)^[ \t]*(?:import\s+\w|from\s+[\w.]+\s+import\b|#include\b)"),
    "comments": re.compile(r"(?m)^[ \t]*(?:#(?!!|include)|//)"),
    "loops": re.compile(r"(?m)^[ \t]*(?:for|while)\b[^\n]*[:{]?[ \t]*$"),
}
CONSTRUCT_NAMES = {
    "function": "functions",
    "functions": "functions",
    "variables": "variable declarations",
    "variable declaration": "variable declarations",
    "variable declarations": "variable declarations",
    "f-string": "f-strings",
    "f-strings": "f-strings",
    "list comprehension": "list comprehensions",
    "list comprehensions": "list comprehensions",
    "import": "imports",
    "imports": "imports",
    "comment": "comments",
    "comments": "comments",
    "loop": "loops",
    "loops": "loops",
}
_ONE = r"(?:functions?|variable declarations?|variables|f-strings?|list comprehensions?|imports?|comments|loops?)"
# the verbs of the ban ("do not use / define / write / add / include any functions") and the scope it may name ("... in
# the script", "... in your code"): the code the reply writes, which is what the check reads
_BAN_VERB = r"(?:use|define|write|add|include|create)"
CODE_BANNED = re.compile(
    rf"(?im)(?:^|[.;:]\s+|\s{{2,}}|\s(?=(?-i:No|Do not|Don't|Never) ))[-*•\s]*"
    rf"((?:no|do not {_BAN_VERB}|don'?t {_BAN_VERB}|never {_BAN_VERB}|without(?: using)?)"
    rf" (?:any )?({_ONE}(?:\s*(?:,|/|or|and|,\s*or|,\s*and)\s*{_ONE})*))"
    r"(?=(?:\s+in (?:the|your|this) (?:script|code|answer|response|solution|program|snippet))?"
    r"\s*(?:[.;(]|\r?\n|$|\s{2,}|\s+(?:no|do not)\b))"
)
# the person asks for no change at all ("Do not modify files.", "don't make any changes", "without changing
# anything"): held against the calls that follow, a change breaks it (a change scoped to some files, "don't modify
# the tests", is not this rule)
NO_CHANGES = re.compile(
    r"(?i)\b(?:do not|don'?t|never|without)\s+(?:make\s+any\s+|making\s+any\s+)?(?:modify|modifying|"
    r"change|changing|edit|editing|touch|touching|changes|edits)\s+(?:any\s+)?(?:files?|code|anything|"
    r"the (?:code|files|repo(?:sitory)?|codebase))?\s*(?=[.;,!)\n]|$|yet\b|for now\b)"
)


@dataclass(frozen=True)
class Check:
    """How a rule is checked: the kind and what it names (a command, a path, a language...), and where in the
    rule's words it was read (``span``, for the evidence)."""

    kind: str
    target: tuple[str, ...] = ()
    span: tuple[int, int] = (0, 0)

    @property
    def label(self) -> str:
        return self.kind + (f": {' / '.join(self.target)}" if self.target else "")


def check_of(text: str) -> Check | None:
    """The mechanical check a standing rule's words allow, or None (the rule is listed as unchecked)."""
    for find in (_language, _emoji, _tests_first, _instead, _manager, _install, _path, _command, _bare):
        if found := find(text):
            return found
    return None


def asks_of(text: str) -> list[Check]:
    """The per-request asks of one turn (they hold up to the next person or system turn; one question at a time
    longer): a fenced block of a language, JSON only, words not to use, one question at a time, a code construct
    not to use."""
    out = []
    if m := FENCE_ASKED.search(text):
        out.append(Check("format_fence", (m.group(1) or m.group(2),), m.span()))
    if m := JSON_ONLY.search(text):
        out.append(Check("format_json", (), m.span()))
    if m := WORD_BANNED.search(text):
        rest = text[m.end() :].lower()  # a word the ask goes on to use itself is not banned by it
        words = tuple(w for q in QUOTED.finditer(m.group(1)) if (w := q.group(1) or q.group(2)).lower() not in rest)
        if words:
            out.append(Check("banned_word", words, m.span()))
    if m := WORD_BANNED_USE.search(text):
        words = tuple(dict.fromkeys(q.group(1) for q in QUOTED_ANY.finditer(m.group(1) + " " + m.group(2))))
        if words:
            scoped = IN_REASONING.search(text[m.end(1) :])
            out.append(Check("banned_word_reasoning" if scoped else "banned_word", words, m.span()))
    if (m := ONE_AT_A_TIME.search(text)) and (ABOUT_QUESTIONS.search(text) or len(text.strip()) <= SHORT_ASK):
        out.append(Check("one_question_at_a_time", (), m.span()))
    for m in CODE_BANNED.finditer(text):
        for name in re.split(r"\s*(?:,\s*or|,\s*and|,|/|\bor\b|\band\b)\s*", m.group(2).lower()):
            if (construct := CONSTRUCT_NAMES.get(name.strip())) is not None:
                out.append(Check("code_banned", (construct,), m.span(1)))  # the item itself, not its bullet
    return out


def no_changes(text: str) -> Check | None:
    """ "Do not modify files": a person's ask for no change at all, up to their next turn."""
    return Check("no_changes", (), m.span()) if (m := NO_CHANGES.search(text)) else None


def _language(text: str) -> Check | None:
    if m := LANGUAGE.search(text):
        return Check("reply_language", (LANGUAGES[m.group(1).lower()],), m.span())
    if m := LANGUAGE_ZH.search(text):
        return Check("reply_language", (ZH_NAMES[m.group(1) or m.group(2)],), m.span())
    return None


def _emoji(text: str) -> Check | None:
    return Check("no_emoji", (), m.span()) if (m := EMOJI.search(text)) else None


def _tests_first(text: str) -> Check | None:
    return Check("tests_before_commit", (), m.span()) if (m := TESTS_FIRST.search(text)) else None


def _instead(text: str) -> Check | None:
    if m := INSTEAD.search(text):
        a, b = m.group("a1") or m.group("a2"), m.group("b1") or m.group("b2")
        ticked = m.group("a1") is not None and m.group("b1") is not None
        if ticked or (a.lower() in PROGRAMS and b.lower() in PROGRAMS):
            return Check("command_instead", (a.strip(), b.strip()), m.span())
    if (m := INSTEAD_ANY.search(text)) and m.group("b").lower() in PROGRAMS:
        # "use terminal instead of powershell": what to use is no program the calls name, what not to use is one
        return Check("command_instead", (m.group("a"), m.group("b")), m.span())
    if (m2 := INSTEAD_ZH.search(text)) and m2.group("a").lower() in PROGRAMS and m2.group("b").lower() in PROGRAMS:
        return Check("command_instead", (m2.group("a"), m2.group("b")), m2.span())
    return None


def _manager(text: str) -> Check | None:
    """ "Use pnpm": the other managers of its family are the ones not to use."""
    m = USE_MANAGER.search(text)
    if not m or re.search(r"(?i)\b(?:not|never|don'?t|do not)\s+(?:\w+\s+){0,2}$", text[: m.start()]):
        return None
    use = m.group(1).lower()
    family = next(f for f in FAMILIES if use in f)
    others = tuple(p for p in family if p != use and not (use in ("pip", "pip3") and p in ("pip", "pip3")))
    return Check("command_instead", (use, *others), m.span())


def _install(text: str) -> Check | None:
    """ "Do not install packages with `pip` or `conda`": each named installer's ``install`` is forbidden."""
    m = INSTALL_RULE.search(text)
    if not m:
        return None
    names = [t or w for t, w in re.findall(r"`([\w.+-]+)`|\b([\w.+-]+)\b", m.group("rest"))]
    progs = [n for n in names if n.lower() in PROGRAMS]
    return Check("command_forbidden", tuple(f"{p} install" for p in progs), m.span()) if progs else None


def _path(text: str) -> Check | None:
    m = PATH_RULE.search(text)
    if not m:
        if (m2 := PATH_LIST.search(text)) and (paths := TICKED_PATH.findall(m2.group("rest"))):
            return Check("path_untouched", tuple(p.rstrip(".,;:") for p in paths), m2.span())
        return None
    path = (m.group("tick") or m.group("word")).strip().rstrip(".,;:")
    if " " in path or len(path) < 2:
        return None
    return Check("path_untouched", (path,), m.span())


def _command(text: str) -> Check | None:
    m = COMMAND_RULE.search(text) or COMMAND_ZH.search(text)
    if not m:
        return None
    cmd = m.group("cmd").strip()
    tool = TOOL_NAME.match(cmd) or ("_" in cmd and " " not in cmd) or re.search(r"(?i)\b(?:call|invoke)\s", m.group(0))
    if CONDITION.search(text[m.end() :]) and not UNLESS.search(text):
        return None  # "never call X without loading Y first": a condition no verdict can see
    if tool and cmd.lower() not in PROGRAMS:
        return Check("tool_forbidden", (cmd,), m.span())
    return Check("command_forbidden", (cmd, *(("unless_asked",) if UNLESS.search(text) else ())), m.span())


def _bare(text: str) -> Check | None:
    m = BARE_RULE.search(text)
    if not m:
        return None
    what = BARE[m.group("what").lower()]
    rest = m.group("rest")
    verbs = [v.lower() for v in re.findall(r"(?i)\b" + NEG + r"\s+(\w+)", text)]
    if any(v not in ("push", "commit", "force", "run", "use", "ever", "amend", "sudo") for v in verbs):
        return None  # "do not log, do not store, do not commit": verbs sharing an object the sentence leaves out
    if not BARE_OBJECT.match(rest) or (CONDITION.search(rest) and not UNLESS.search(text)):
        return None
    if what == "git push" and (to := re.match(r"(?i)\s+(?:directly\s+)?to\s+(?:the\s+)?`?([\w./-]+)`?", rest)):
        what = f"git push * {to.group(1)}"
    return Check("command_forbidden", (what, *(("unless_asked",) if UNLESS.search(text) else ())), m.span())


# "don't use powershell", "never run docker for this": a known program named bare (no backticks) after the
# prohibition, where nothing but an end, a purpose or "again"/"anymore" follows ("don't use git blame output as ..."
# says something else)
PROGRAM_RULE = re.compile(
    r"(?i)\b" + NEG + r"\s+(?:ever\s+)?(?:run|use|call|invoke)\s+(?:the\s+)?(?P<prog>[A-Za-z][\w+-]*)"
    r"(?:\s+(?:commands?|cli|anymore|again|here|at all))?(?=\s*(?:$|[.,;:!)]|\s+(?:for|to|unless|anymore|again)\b))"
)


def program_rule(text: str) -> Check | None:
    """A person's "don't use powershell": read in a person's sentences only (an instruction file's bare "NEVER use
    git" often sits under a list heading that conditions it, "UNLESS you are explicitly requested to do so", which
    a line does not carry)."""
    m = PROGRAM_RULE.search(text)
    if not m or m.group("prog").lower() not in PROGRAMS:
        return None
    rest = text[m.end() :]
    if CONDITION.search(rest) and not UNLESS.search(text):
        return None  # "don't use git until the tests pass": a condition no verdict can see
    prog = m.group("prog").lower()
    return Check("command_forbidden", (prog, *(("unless_asked",) if UNLESS.search(text) else ())), m.span())


QUESTION_HEAD = re.compile(r"(?im)^\W*question \d+\b")
NUMBERED_QUESTION = re.compile(r"(?m)^\s*\d+[.)]\s[^\n]*\?")


def is_json(reply: str) -> bool:
    """The reply is JSON (inside one fenced block or bare)."""
    s = reply.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        json.loads(s)
    except ValueError:
        return False
    return True


def questions(reply: str) -> int:
    """Questions a reply asks as separate items: "Question N" headings or numbered items that end in a question."""
    return max(len(QUESTION_HEAD.findall(reply)), len(NUMBERED_QUESTION.findall(reply)))


def word_forms(word: str) -> re.Pattern[str]:
    """The word as a whole word, with its inflections (``-s``, ``-es``, ``-ed``, ``-ing``, ``-er``, ``-ly``; a final
    ``e`` dropped, a final consonant doubled, ``y`` to ``ies``: changing, flipped, capacities), not as the start of another word
    (a banned "tack" is not in "tackle", "base" not in "baseline", "content" not in "contentious")."""
    w = re.escape(word)
    forms = [rf"{w}(?:s|es|d|ed|ing|ings|er|ers|ly)?"]
    if word[-1:].lower() == "e":
        forms.append(rf"{re.escape(word[:-1])}(?:ing|ings|ed|er|ers)")
    if re.search(r"[^aeiou]y$", word.lower()):
        forms.append(rf"{re.escape(word[:-1])}(?:ies|ied)")
    if re.search(r"[^aeiou][aeiou][bdgklmnprt]$", word.lower()):
        forms.append(rf"{w}{re.escape(word[-1])}(?:ed|ing|er|ers)")
    return re.compile(rf"(?i)\b(?:{'|'.join(forms)})\b")
