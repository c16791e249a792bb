"""Instructions checked against the replies that follow them, where a check is mechanical (SPEC §24
``instruction_violated``): a format asked for (a fenced code block of a language, JSON only), a word not to be
used, one question at a time, a code construct banned ("No functions or variable declarations", "No f-strings"),
no change at all ("Do not modify files": held against the calls that follow).

Two steps, kept apart so that another extractor (the rules of a run, SPEC §27) can hand its own list in:

- ``extract(con)`` lists the explicit instructions (``Instruction``: where it was given, what it asks, the
  positions it holds over), read from person turns and system prompts;
- ``violated(con, instructions)`` holds each against the assistant's text replies in its span, one check function
  per instruction kind (``CHECKS``), or against its calls (``CALL_CHECKS``).

An instruction counts from the turn that gives it to the next person turn (``one_at_a_time`` for ``STANDING``
messages); instructions no program can check are left alone, never guessed."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from forensics.analyzers.problems.actions import args_quote, calls_sql
from forensics.analyzers.problems.model import Problem, quote_at
from forensics.kernel.selection import SELECTED

FENCE_ASKED = re.compile(r"(?i)(?:in|use|using) the format of ```(\w+)```|(?:wrapped|enclosed) in (?:a )?```(\w+)")
JSON_ONLY = re.compile(r"(?i)\b(?:respond|reply|answer|output|return)(?: with)? only (?:with )?(?:valid )?JSON\b"
                       r"|\bonly (?:output|return) (?:valid )?JSON\b")
WORD_BANNED = re.compile(r"(?i)without (?:using|mentioning|saying) the words? ((?:\"[^\"]{2,40}\"(?:,? (?:or|and) )?"
                         r"|“[^”]{2,40}”(?:,? (?:or|and) )?)+)")
QUOTED = re.compile(r"\"([^\"]{2,40})\"|“([^”]{2,40})”")
ONE_AT_A_TIME = re.compile(r"(?i)\bone(?:[ -]question)?[ -]at[ -]a[ -]time\b")
QUESTION_HEAD = re.compile(r"(?im)^\W*question \d+\b")
NUMBERED_QUESTION = re.compile(r"(?m)^\s*\d+[.)]\s[^\n]*\?")
STANDING = 40  # messages a "one at a time" asked for holds after the person's last turn that says it

# a code construct the code must not use, said as a whole item of a requirements list ("No functions or variable
# declarations", "- No f-strings", "Do not use list comprehensions."; an item starts a line or a sentence, or is a
# capitalised "No ..." run on after the last): the ban ends the item (a scoped ban, "do not use loops for output
# definitions", is not checked)
CONSTRUCTS: dict[str, re.Pattern[str]] = {
    "functions": re.compile(r"(?m)^[ \t]*(?:def|function)\s+\w+\s*\(|^[ \t]*(?:void|int|float|double|char|auto)\s+\w+"
                            r"\s*\([^;\n]*\)\s*\{"),
    "variable declarations": re.compile(r"(?m)^[ \t]*(?:(?:var|let|const|int|float|double|char|auto)\s+)?"
                                        r"[A-Za-z_][\w.]*\s*(?:,\s*[A-Za-z_]\w*\s*)*=(?!=)[^,\n]*$"),
    "f-strings": re.compile(r"(?<![\w\"'])[fF]\"[^\"\n]*\{|(?<![\w\"'])[fF]'[^'\n]*\{"),
    "list comprehensions": re.compile(r"\[[^\[\]\n]*\bfor\b[^\[\]\n]*\bin\b[^\[\]\n]*\]"),
    "imports": re.compile(r"(?m)^[ \t]*(?:import\s+\w|from\s+[\w.]+\s+import\b|#include\b)"),
    "comments": re.compile(r"(?m)^[ \t]*(?:#(?!!|include)|//)"),
    "loops": re.compile(r"(?m)^[ \t]*(?:for|while)\b[^\n]*[:{]?[ \t]*$"),
}
_NAMES = {"function": "functions", "functions": "functions", "variables": "variable declarations",
          "variable declaration": "variable declarations", "variable declarations": "variable declarations",
          "f-string": "f-strings", "f-strings": "f-strings", "list comprehension": "list comprehensions",
          "list comprehensions": "list comprehensions", "import": "imports", "imports": "imports",
          "comment": "comments", "comments": "comments", "loop": "loops", "loops": "loops"}
_ONE = r"(?:functions?|variable declarations?|variables|f-strings?|list comprehensions?|imports?|comments|loops?)"
CODE_BANNED = re.compile(rf"(?im)(?:^|[.;:]\s+|\s{{2,}}|\s(?=(?-i:No|Do not|Don't|Never) ))[-*•\s]*"
                         rf"((?:no|do not use|don'?t use|never use|without(?: using)?)"
                         rf" (?:any )?({_ONE}(?:\s*(?:,|/|or|and|,\s*or|,\s*and)\s*{_ONE})*))"
                         r"(?=\s*(?:[.;(]|\r?\n|$|\s{2,}|\s+(?:no|do not)\b))")
CODE_BLOCK = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
# the person asks for no change at all ("Do not modify files.", "don't make any changes", "without changing
# anything"): checked against the calls that follow, a successful editing or writing call breaks it (a change
# scoped to some files, "don't modify the tests", is not checked)
NO_CHANGES = re.compile(r"(?i)\b(?:do not|don'?t|never|without)\s+(?:make\s+any\s+|making\s+any\s+)?(?:modify|modifying|"
                        r"change|changing|edit|editing|touch|touching|changes|edits)\s+(?:any\s+)?(?:files?|code|anything|"
                        r"the (?:code|files|repo(?:sitory)?|codebase))?\s*(?=[.;,!)\n]|$|yet\b|for now\b)")


@dataclass(frozen=True)
class Instruction:
    """One explicit instruction: given at ``position`` of ``conversation_id``, holding over the replies in
    ``(position, until)``; ``kind`` names its check (``CHECKS``), ``value`` what it names (a language, a word, a
    construct), ``quote`` is verbatim from the turn that gives it."""

    conversation_id: str
    position: int
    until: int
    kind: str
    value: str
    quote: str


def extract(con: duckdb.DuckDBPyConnection) -> list[Instruction]:
    """Every checkable instruction in the person turns and system prompts of the selected conversations. SQL
    preselects the turns that name ``` or JSON, "without", "at a time" or a "no ..." ban."""
    rows = con.execute(f"""
        WITH t AS (
            SELECT m.conversation_id AS cid, m.position AS pos, coalesce(m.person_text, m.content) AS text,
                   m.origin = 'person' AS person,
                   coalesce(lead(m.position) OVER (PARTITION BY m.conversation_id ORDER BY m.position), 2147483647) AS upto
            FROM messages m JOIN {SELECTED} USING (conversation_id)
            WHERE m.on_main_path AND (m.origin = 'person' OR m.role = 'system'))
        SELECT cid, pos, upto, text, person FROM t
        WHERE contains(text, '```') OR contains(text, 'JSON') OR contains(text, 'without ') OR contains(text, ' at a time')
           OR contains(text, '-at-a-time') OR regexp_matches(text, '(?i)\\b(?:no|use) (?:any )?{_ONE}\\b')
           OR regexp_matches(text, '(?i)\\b(?:not|n''t|never|without) (?:make any |making any )?(?:modif|chang|edit|touch)')
        ORDER BY 1, 2""").fetchall()
    out: list[Instruction] = []
    for cid, pos, upto, text, person in rows:
        cid, pos, upto = str(cid), int(pos), int(upto)
        for f in FENCE_ASKED.finditer(text):
            out.append(Instruction(cid, pos, upto, "fence", f.group(1) or f.group(2), quote_at(text, f, 80)))
        if j := JSON_ONLY.search(text):
            out.append(Instruction(cid, pos, upto, "json_only", "JSON", quote_at(text, j, 80)))
        if b := WORD_BANNED.search(text):
            words = [q.group(1) or q.group(2) for q in QUOTED.finditer(b.group(1))]
            for w in words:
                if w.lower() not in text[b.end():].lower():  # a word the prompt itself goes on to use is no ban
                    out.append(Instruction(cid, pos, upto, "banned_word", w, quote_at(text, b, 80)))
        if person and (o := ONE_AT_A_TIME.search(text)):
            out.append(Instruction(cid, pos, pos + STANDING + 1, "one_at_a_time", "one question", quote_at(text, o, 80)))
        if person and (n := NO_CHANGES.search(text)):
            out.append(Instruction(cid, pos, upto, "no_changes", "no change", quote_at(text, n, 80)))
        for m in CODE_BANNED.finditer(text):
            item = re.compile(re.escape(m.group(1))).search(text, m.start(1))  # the item itself, not its bullet
            for name in re.split(r"\s*(?:,\s*or|,\s*and|,|/|\bor\b|\band\b)\s*", m.group(2).lower()):
                if (construct := _NAMES.get(name.strip())) is not None:
                    out.append(Instruction(cid, pos, upto, "code_banned", construct, quote_at(text, item, 80)))
    return out


def violated(con: duckdb.DuckDBPyConnection, instructions: list[Instruction] | None = None) -> list[Problem]:
    """Each instruction (``extract``'s by default) against the assistant's text replies in its span: one finding per
    reply and rule, citing the reply and the instruction."""
    given = extract(con) if instructions is None else instructions
    if unknown := sorted({i.kind for i in given} - set(CHECKS) - set(CALL_CHECKS)):
        raise ValueError(f"instruction kinds with no check: {', '.join(unknown)} "
                         f"(known: {', '.join([*CHECKS, *CALL_CHECKS])})")
    if not given:
        return []
    con.execute("CREATE OR REPLACE TEMP TABLE _instructions (k INTEGER, cid VARCHAR, pos INTEGER, upto INTEGER)")
    con.executemany("INSERT INTO _instructions VALUES (?, ?, ?, ?)",
                    [[k, i.conversation_id, i.position, i.until] for k, i in enumerate(given)])
    rows = con.execute("""
        SELECT i.k, r.position, r.content FROM _instructions i
        JOIN messages r ON r.conversation_id = i.cid AND r.on_main_path AND r.role = 'assistant' AND NOT r.blank
             AND r.position > i.pos AND r.position < i.upto
        ORDER BY i.cid, r.position, i.pos DESC, i.k""").fetchall()
    # the instructions checked against calls: the first successful change in the span, with its arguments
    changed = con.execute(f"""
        SELECT i.k, arg_min(c.pos, c.pos * 100000 + c.k), arg_min(c.args, c.pos * 100000 + c.k)
        FROM _instructions i JOIN ({calls_sql()}) c ON c.cid = i.cid AND c.mut AND c.pos > i.pos AND c.pos < i.upto
        GROUP BY i.k""").fetchall() if any(i.kind in CALL_CHECKS for i in given) else []
    con.execute("DROP TABLE _instructions")
    out: list[Problem] = []
    seen: set[tuple[str, int, str]] = set()
    for k, cpos, args in changed:
        ins = given[k]
        if ins.kind in CALL_CHECKS:
            out.append(Problem(ins.conversation_id, "instruction_violated", [int(cpos), ins.position],
                               args_quote(str(args or "")), CALL_CHECKS[ins.kind],
                               f"the instruction at [{ins.position}]: “{ins.quote}”"))
    for k, rpos, reply in rows:
        ins = given[k]
        if ins.kind in CALL_CHECKS:
            continue
        hit = CHECKS[ins.kind](ins, str(reply))
        if hit is None:
            continue
        rule, broke = hit
        if (ins.conversation_id, rpos, rule) in seen:
            continue
        seen.add((ins.conversation_id, rpos, rule))
        out.append(Problem(ins.conversation_id, "instruction_violated", [int(rpos), ins.position], broke, rule,
                           f"the instruction at [{ins.position}]: “{ins.quote}”"))
    return out


def _fence(ins: Instruction, reply: str) -> tuple[str, str] | None:
    return ("format_fence_missing", quote_at(reply)) if "```" not in reply else None


def _json_only(ins: Instruction, reply: str) -> tuple[str, str] | None:
    return None if _is_json(reply) else ("format_json_missing", quote_at(reply))


def _one_at_a_time(ins: Instruction, reply: str) -> tuple[str, str] | None:
    if _questions(reply) < 2:
        return None
    return "several_questions_at_once", quote_at(reply, QUESTION_HEAD.search(reply) or NUMBERED_QUESTION.search(reply))


def _banned_word(ins: Instruction, reply: str) -> tuple[str, str] | None:
    w = re.search(rf"(?i)\b{re.escape(ins.value)}", reply)
    return ("banned_word_used", quote_at(reply, w)) if w else None


def _code_banned(ins: Instruction, reply: str) -> tuple[str, str] | None:
    """The construct in the reply's code (its fenced blocks; a reply without one wrote no code to check)."""
    for block in CODE_BLOCK.finditer(reply):
        if m := CONSTRUCTS[ins.value].search(block.group(1)):
            at = block.start(1) + m.start()
            return f"code_construct_banned ({ins.value})", quote_at(reply, re.compile(r"\S").search(reply, at))
    return None


CHECKS: dict[str, Callable[[Instruction, str], tuple[str, str] | None]] = {
    "fence": _fence, "json_only": _json_only, "one_at_a_time": _one_at_a_time, "banned_word": _banned_word,
    "code_banned": _code_banned}
# instructions held against the calls in their span (``actions.prepare`` first): the kind, and the rule when a
# successful change breaks it
CALL_CHECKS: dict[str, str] = {"no_changes": "changed_when_told_not_to"}


def _is_json(reply: str) -> bool:
    s = reply.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        json.loads(s)
    except ValueError:
        return False
    return True


def _questions(reply: str) -> int:
    """Questions a reply asks as separate items: "Question N" headings or numbered items that end in a question."""
    return max(len(QUESTION_HEAD.findall(reply)), len(NUMBERED_QUESTION.findall(reply)))
