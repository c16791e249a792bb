"""Where a failed run went wrong (SPEC §25): the decisive step and the agent that took it.

1. **Against a passed run of the same task** (``outcomes.detail.task``): the first divergence of the run diff
   (SPEC §21, ``forensics.analyzers.diff``), at the failed run's step (its assistant message), when both runs
   have tool-call steps and the failed one has a step there.
2. **Else from the run itself**, the earliest reply (an assistant message after the task, with something to
   say) that does one of the things a failed run's decisive step does:

   - ``assumption``: it works from something it does not have: "assume", "hypothetical", "simulate",
     "placeholder", "mock", "example data", "manually", "approximate", "likely", "typically", "guess";
   - ``after_error``: it goes on without code right after a tool output that shows an error (an answer or
     plan built on a failed step);
   - ``unsupported_claim``: it states figures as found or verified ("based on", "we found", "here are the",
     "is confirmed") when no tool output came before it;
   - ``failed_code``: it runs code whose output is an error, is empty, or says almost nothing;
   - else the first step of the signature: the first occurrence of the run's recurring error (the reply that
     caused it), the false claim of a ``claimed_success`` end, else the first reply after the task.

The agent is the speaker of that message (``messages.name``), None where messages carry none. Judged on the
labeled failures of ``../shared/data/failures`` by ``bench/failures.py`` (docs/failures-evaluation.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from forensics.analyzers.signature import Msg, error_line, is_output

ASSUMPTION = re.compile(r"\b(?:assum(?:e|es|ed|ing|ption)|hypothetical(?:ly)?|simulat(?:e|ed|ing|ion)|placeholder|"
                        r"mock|dummy|sample data|example data|for demonstration|let'?s say|approximat\w*|"
                        r"without (?:direct )?access|manually|estimated?|typical(?:ly)?|likely|fictional|"
                        r"illustrat\w*|plausible|hard-?cod\w*|guess\w*)\b", re.I)
CLAIMS = re.compile(r"\b(?:based on|according to|the (?:result|answer|output)s? (?:is|are|shows?)|we (?:have )?"
                    r"(?:found|identified|confirmed|verified|obtained)|here (?:is|are) the|has been (?:verified|"
                    r"confirmed)|is confirmed|correct(?:ly)?)\b", re.I)
CODE = re.compile(r"```|<execute>|^\s*(?:GET|POST) ", re.M)
EMPTY_OUTPUT = re.compile(r"code output:\s*$", re.I)
SAYS_LITTLE = 40  # characters: an output this short after code says almost nothing
SUBSTANCE = 20  # a reply shorter than this (TERMINATE, "ok") is no step


@dataclass(frozen=True)
class Decisive:
    position: int | None
    agent: str | None
    rule: str  # divergence, assumption, after_error, unsupported_claim, failed_code, recurring_error, false_claim, first_reply


def from_run(msgs: list[Msg], recurring_at: int | None = None, claim_at: int | None = None) -> Decisive:
    """The decisive step of a failed run read from its own messages (rule 2 of the module docstring).
    ``recurring_at``: the position of the first occurrence of its recurring error; ``claim_at``: of its false
    claim (a ``claimed_success`` end)."""
    replies = [m for m in msgs if m.role == "assistant" and len(m.text.strip()) >= SUBSTANCE]
    if not msgs:
        return Decisive(None, None, "first_reply")
    task_at = next((m.position for m in msgs if m.origin == "person"), msgs[0].position)
    after_task = [m for m in replies if m.position > task_at]
    output_after: dict[int, Msg] = {}
    output_before: dict[int, Msg | None] = {}
    last_output: Msg | None = None
    for i, m in enumerate(msgs):
        if is_output(m):
            if i and msgs[i - 1].role == "assistant":
                output_after[msgs[i - 1].position] = m
            last_output = m
        else:
            output_before[m.position] = last_output
    for m in after_task:
        code = CODE.search(m.text) is not None
        prev, res = output_before.get(m.position), output_after.get(m.position)
        if ASSUMPTION.search(m.text):
            return _at(m, "assumption")
        if not code and prev is not None and error_line(prev.text, prev.error) is not None:
            return _at(m, "after_error")
        if not code and prev is None and re.search(r"\d", m.text) and CLAIMS.search(m.text):
            return _at(m, "unsupported_claim")
        if code and res is not None and (error_line(res.text, res.error) is not None
                                         or EMPTY_OUTPUT.search(res.text.strip() + "\n")
                                         or len(res.text.strip()) < SAYS_LITTLE):
            return _at(m, "failed_code")
    by_pos = {m.position: m for m in msgs}
    if recurring_at is not None:
        author = next((m for m in reversed(msgs) if m.role == "assistant" and m.position < recurring_at), None)
        if author is not None:
            return _at(author, "recurring_error")
    if claim_at is not None and claim_at in by_pos:
        return _at(by_pos[claim_at], "false_claim")
    first = after_task[0] if after_task else (replies[0] if replies else msgs[0])
    return _at(first, "first_reply")


def _at(m: Msg, rule: str) -> Decisive:
    return Decisive(m.position, m.name, rule)
