"""Instructions checked against the replies that follow them, where a check is mechanical (docs/definitions.md#problems-a-reviewer-flags
``instruction_violated``): a format asked for (a fenced code block of a language, JSON only), a word not to be
used, one question at a time, a code construct banned ("No functions or variable declarations", "No f-strings"),
no change at all ("Do not modify files": held against the calls that follow).

Two steps; the instructions come from the one extractor of the rules of a run (``forensics.analyzers.rules``,
docs/definitions.md#rules-a-run-was-given), which the rules audit reads too:

- ``extract(con)`` lists the explicit instructions (``Instruction``: where it was given, what it asks, the
  positions it holds over): the per-request asks of person turns and system prompts among the rules;
- ``violated(con, instructions)`` holds each against the assistant's text replies in its span, one check function
  per instruction kind (``CHECKS``), or against its calls (``CALL_CHECKS``).

An instruction counts from the turn that gives it to the next person turn (``one_at_a_time`` for ``STANDING``
messages); instructions no program can check are left alone, never guessed."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from forensics.analyzers.problems.actions import args_quote, calls_sql
from forensics.analyzers.problems.model import Problem, quote_at
from forensics.analyzers.rules import Audit, Rule, audit, rules
from forensics.analyzers.rules.checks import (
    CONSTRUCTS,
    NUMBERED_QUESTION,
    QUESTION_HEAD,
    is_json,
    questions,
    word_forms,
)

CODE_BLOCK = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
# the rules extractor's per-request ask kinds -> this kind's instruction kinds (``CHECKS``, ``CALL_CHECKS``)
KINDS = {
    "format_fence": "fence",
    "format_json": "json_only",
    "banned_word": "banned_word",
    "banned_word_reasoning": "banned_word_reasoning",
    "one_question_at_a_time": "one_at_a_time",
    "code_banned": "code_banned",
    "no_changes": "no_changes",
}
OPEN = 2147483647  # an instruction that holds to the end of the run


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


def extract(con: duckdb.DuckDBPyConnection, given: list[Rule] | None = None) -> list[Instruction]:
    """Every checkable per-request instruction of the selected conversations: the rules extractor's asks (a word
    list asked for is one instruction per word)."""
    out: list[Instruction] = []
    for r in rules(con) if given is None else given:
        if r.standing or r.check is None or r.check.kind not in KINDS:
            continue
        until = OPEN if r.until is None else r.until + 1
        values = r.check.target or {
            "format_json": ("JSON",),
            "one_question_at_a_time": ("one question",),
            "no_changes": ("no change",),
        }.get(r.check.kind, ("",))
        out += [Instruction(r.conversation_id, r.position, until, KINDS[r.check.kind], v, r.text) for v in values]
    return out


def violated(
    con: duckdb.DuckDBPyConnection, instructions: list[Instruction] | None = None, found: Audit | None = None
) -> list[Problem]:
    """Each instruction (``extract``'s by default) against the assistant's text replies in its span: one finding per
    reply and rule, citing the reply and the instruction. By default also each turn that broke a standing rule of
    an instruction file or of the person (the rules audit's verdicts: a command forbidden, a path not to touch, a
    package manager, tests before a commit, a reply's language, no emoji); ``found``: that audit, when the
    report has it already."""
    if instructions is None:
        found = audit(con) if found is None else found
        return _given(con, extract(con, found.rules)) + standing(found)
    return _given(con, instructions)


def standing(found: Audit) -> list[Problem]:
    """A finding per turn that broke a standing rule (a harness's own system prompt aside: not the person's)."""
    by_key = {r.key: r for r in found.rules}
    out: list[Problem] = []
    for v in sorted(found.verdicts, key=lambda v: (v.conversation_id, v.position, v.said_at)):
        r = by_key[v.rule]
        if v.verdict == "broke" and r.standing and r.check is not None and r.source != "system prompt":
            where = f"{r.source} {r.path}".strip() if r.source != "person" else "the instruction"
            out.append(
                Problem(
                    v.conversation_id,
                    "instruction_violated",
                    [v.position, v.said_at],
                    v.quote[:100],
                    r.check.kind,
                    f"{where} at [{v.said_at}]: “{r.text[:80]}”",
                )
            )
    return out


def _given(con: duckdb.DuckDBPyConnection, given: list[Instruction]) -> list[Problem]:
    if unknown := sorted({i.kind for i in given} - set(CHECKS) - set(CALL_CHECKS) - set(REASONING_CHECKS)):
        raise ValueError(
            f"instruction kinds with no check: {', '.join(unknown)} (known: {', '.join([*CHECKS, *CALL_CHECKS])})"
        )
    if not given:
        return []
    con.execute("CREATE OR REPLACE TEMP TABLE _instructions (k INTEGER, cid VARCHAR, pos INTEGER, upto INTEGER)")
    con.execute(  # one INSERT of four lists, not a statement per row (executemany)
        "INSERT INTO _instructions SELECT unnest(?::INTEGER[]), unnest(?::VARCHAR[]), unnest(?::INTEGER[]), "
        "unnest(?::INTEGER[])",
        [
            list(range(len(given))),
            [i.conversation_id for i in given],
            [i.position for i in given],
            [i.until for i in given],
        ],
    )
    rows = con.execute("""
        SELECT i.k, r.position, r.content FROM _instructions i
        JOIN messages r ON r.conversation_id = i.cid AND r.on_main_path AND r.role = 'assistant' AND NOT r.blank
             AND r.position > i.pos AND r.position < i.upto
        ORDER BY i.cid, r.position, i.pos DESC, i.k""").fetchall()
    # what the model reasoned before a reply (a format's ``reasoning`` events) is held to a word not to be used
    thought = con.execute("""
        SELECT i.k, e.position, json_extract_string(e.detail, '$.text') FROM _instructions i
        JOIN events e ON e.conversation_id = i.cid AND e.kind = 'reasoning' AND e.position > i.pos
             AND e.position < i.upto
        ORDER BY i.cid, e.position, i.pos DESC, i.k""").fetchall()
    # the instructions checked against calls: the first successful change in the span, with its arguments
    changed = (
        con.execute(f"""
        SELECT i.k, arg_min(c.pos, c.pos * 100000 + c.k), arg_min(c.args, c.pos * 100000 + c.k)
        FROM _instructions i JOIN ({calls_sql()}) c ON c.cid = i.cid AND c.mut AND c.pos > i.pos AND c.pos < i.upto
        GROUP BY i.k""").fetchall()
        if any(i.kind in CALL_CHECKS for i in given)
        else []
    )
    con.execute("DROP TABLE _instructions")
    out: list[Problem] = []
    seen: set[tuple[str, int, str]] = set()
    for k, cpos, args in changed:
        ins = given[k]
        if ins.kind in CALL_CHECKS:
            out.append(
                Problem(
                    ins.conversation_id,
                    "instruction_violated",
                    [int(cpos), ins.position],
                    args_quote(str(args or "")),
                    CALL_CHECKS[ins.kind],
                    f"the instruction at [{ins.position}]: “{ins.quote}”",
                )
            )
    read = [(k, p, r, CHECKS.get(given[k].kind)) for k, p, r in rows] + [
        (k, p, r, REASONING_CHECKS[given[k].kind]) for k, p, r in thought if given[k].kind in REASONING_CHECKS
    ]
    for k, rpos, reply, check in read:
        ins = given[k]
        if check is None:
            continue
        hit = check(ins, str(reply or ""))
        if hit is None:
            continue
        rule, broke = hit
        if (ins.conversation_id, rpos, rule) in seen:
            continue
        seen.add((ins.conversation_id, rpos, rule))
        out.append(
            Problem(
                ins.conversation_id,
                "instruction_violated",
                [int(rpos), ins.position],
                broke,
                rule,
                f"the instruction at [{ins.position}]: “{ins.quote}”",
            )
        )
    return out


def _fence(ins: Instruction, reply: str) -> tuple[str, str] | None:
    return ("format_fence_missing", quote_at(reply)) if "```" not in reply else None


def _json_only(ins: Instruction, reply: str) -> tuple[str, str] | None:
    return None if is_json(reply) else ("format_json_missing", quote_at(reply))


def _one_at_a_time(ins: Instruction, reply: str) -> tuple[str, str] | None:
    if questions(reply) < 2:
        return None
    return "several_questions_at_once", quote_at(reply, QUESTION_HEAD.search(reply) or NUMBERED_QUESTION.search(reply))


def _banned_word(ins: Instruction, reply: str) -> tuple[str, str] | None:
    w = word_forms(ins.value).search(reply)
    return ("banned_word_used", quote_at(reply, w)) if w else None


def _banned_word_reasoning(ins: Instruction, reasoning: str) -> tuple[str, str] | None:
    w = word_forms(ins.value).search(reasoning)
    return ("banned_word_in_reasoning", quote_at(reasoning, w)) if w else None


def _code_banned(ins: Instruction, reply: str) -> tuple[str, str] | None:
    """The construct in the reply's code (its fenced blocks; a reply without one wrote no code to check)."""
    for block in CODE_BLOCK.finditer(reply):
        if m := CONSTRUCTS[ins.value].search(block.group(1)):
            at = block.start(1) + m.start()
            return f"code_construct_banned ({ins.value})", quote_at(reply, re.compile(r"\S").search(reply, at))
    return None


CHECKS: dict[str, Callable[[Instruction, str], tuple[str, str] | None]] = {
    "fence": _fence,
    "json_only": _json_only,
    "one_at_a_time": _one_at_a_time,
    "banned_word": _banned_word,
    "code_banned": _code_banned,
}
# instructions also held against the model's reasoning before a reply (``events.kind = 'reasoning'``, where the format
# keeps it): a word not to be used is not to be used in the reasoning either
REASONING_CHECKS: dict[str, Callable[[Instruction, str], tuple[str, str] | None]] = {
    "banned_word": _banned_word_reasoning,
    "banned_word_reasoning": _banned_word_reasoning,
}
# instructions held against the calls in their span (``actions.prepare`` first): the kind, and the rule when a
# successful change breaks it
CALL_CHECKS: dict[str, str] = {"no_changes": "changed_when_told_not_to"}
