"""The rules a run was given, from its own log: the one extractor the rules audit and the ``instruction_violated``
problem kind both read (docs/definitions.md#rules-a-run-was-given, docs/definitions.md#problems-a-reviewer-flags).

Three kinds of rule, each with the position where it entered the model's context:

- a line of an instruction file the log shows injected (``sources``) or of a system prompt: it holds to the end;
- a standing instruction of the person ("never…", "always…", "use X, not Y", "answer in …"): to the end, or to
  the person's next turn when it says so ("…for now", "…yet");
- a per-request format ask of a person's or system turn (a fenced block, JSON only, words not to use): to the next
  such turn (one question at a time: ``STANDING`` messages).

Each rule carries its ``Check`` (``checks``) or none: unchecked, listed, never guessed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from forensics.analyzers.rules import checks
from forensics.analyzers.rules.checks import Check
from forensics.analyzers.rules.sources import injected

STANDING = 40  # messages a "one question at a time" holds after the turn that asks for it
RULE_MIN, RULE_MAX = 8, 400  # a rule's length in characters: shorter is a heading, longer a paragraph of prose
DIRECTIVE = re.compile(
    r"(?i)\b(?:never|always|don'?t|do not|must|mustn'?t|should(?:n'?t| not)?|avoid|make sure|ensure|remember to|"
    r"instead of|rather than|prefer|required?|forbidden|prohibited|not allowed)\b"
    r"|^(?:only|use|run|answer|reply|respond|keep|please|write|prefer)\b"
    r"|不要|禁止|必须|务必|一定要|只能|只用|请用|请使用|始终|永远|一律|切勿|不得|不准|不许"
)
PERSON_START = re.compile(
    r"(?i)^(?:(?:please|and|also|so|ok(?:ay)?|from now on|going forward|remember|note|"
    r"important)[,:]?\s+)*(?:never|always|don'?t|do not|stop using|no more|only ever)\b"
    r"|^(?:请|以后|今后|永远|始终|一律|不要|别再|禁止)"
)
FOR_NOW = re.compile(r"(?i)\b(?:yet|for now|right now|this time|until (?:i|we)|at the moment)\b|暂时|先不要|先别")
SENTENCE = re.compile(r"(?<=[.!?。！？])\s+(?=\S)")
BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|>)\s*(?:\[[ xX]\]\s*)?")


@dataclass(frozen=True)
class Rule:
    """One rule of one run: where it came from and entered the context, its words, how it is checked."""

    conversation_id: str
    source: str  # CLAUDE.md | AGENTS.md | GEMINI.md | .clinerules | .cursorrules | rules | system prompt | person
    path: str  # the instruction file's path when the log names it
    position: int  # the message that put it in the context
    text: str
    check: Check | None
    until: int | None = None  # the last position it holds at (None: to the end of the run)
    standing: bool = True  # an instruction file's line or a standing instruction; False: a per-request ask

    @property
    def key(self) -> str:
        """The rule across runs: its source, path and words (the same line of the same file in two runs)."""
        label = self.check.label if self.check else ""
        return hashlib.sha1(f"{self.source}\0{self.path}\0{self.text}\0{label}".encode()).hexdigest()[:12]

    @property
    def kind(self) -> str:
        return self.check.kind if self.check else "unchecked"


@dataclass(frozen=True)
class Message:
    """The columns of a message the extractor reads."""

    position: int
    role: str
    origin: str | None
    content: str
    person_text: str | None = None


def rules_of(cid: str, messages: Iterable[Message]) -> list[Rule]:
    """Every rule of one run in position order (a rule said again keeps each saying: the audit groups them)."""
    msgs = sorted(messages, key=lambda m: m.position)
    asks = [m.position for m in msgs if m.origin == "person" or m.role == "system"]
    persons = [m.position for m in msgs if m.origin == "person"]
    out: list[Rule] = []
    for m in msgs:
        if m.role not in ("user", "system") or m.origin in ("tool", "tool_result"):
            continue
        files = injected(m.content, m.role == "system")
        for f in files:
            out += [Rule(cid, f.source, f.path, m.position, line, checks.check_of(line)) for line in lines_of(f.body)]
        own = m.person_text if m.person_text is not None else m.content
        if m.origin == "person" and files and injected(own, False):
            own = ""  # the context a harness put in the person's turn (Gemini's first message), not their words
        if m.origin == "person" or m.role == "system":
            said = own if m.origin == "person" else m.content
            nxt = next((p for p in asks if p > m.position), None)
            asked = checks.asks_of(said)
            if m.origin == "person" and (c := checks.no_changes(said)):
                asked.append(c)
            out += [
                Rule(
                    cid,
                    "person" if m.origin == "person" else "system prompt",
                    "",
                    m.position,
                    _quote(said, c.span),
                    c,
                    _ask_until(c, m.position, nxt),
                    standing=False,
                )
                for c in asked
            ]
        if m.origin == "person":
            nxt = next((p for p in persons if p > m.position), None)
            for s in sentences_of(own):
                check = checks.check_of(s) or checks.program_rule(s)
                if PERSON_START.search(s) or check:
                    out.append(
                        Rule(
                            cid,
                            "person",
                            "",
                            m.position,
                            s,
                            check,
                            nxt - 1 if nxt is not None and FOR_NOW.search(s) else None,
                        )
                    )
    return _superseded(out)


def _superseded(rules: list[Rule]) -> list[Rule]:
    """A per-request ask holds until the next ask of the same kind and target at the latest (the newer one answers
    for the turns after it)."""
    out = []
    for i, r in enumerate(rules):
        if not r.standing and r.check is not None:
            later = [
                q.position
                for q in rules[i + 1 :]
                if not q.standing
                and q.check is not None
                and (q.check.kind, q.check.target) == (r.check.kind, r.check.target)
                and q.position > r.position
            ]
            if later and (r.until is None or r.until >= later[0]):
                r = replace(r, until=later[0] - 1)
        out.append(r)
    return out


def lines_of(body: str, directive: bool = True) -> list[str]:
    """The rules of an instruction file or system prompt: its sentences that direct (outside code blocks); every
    sentence when not ``directive``."""
    out: list[str] = []
    for line in _paragraphs(body):
        out += [
            s for s in SENTENCE.split(line) if RULE_MIN <= len(s) <= RULE_MAX and (not directive or DIRECTIVE.search(s))
        ]
    return out


def _paragraphs(body: str) -> list[str]:
    """A file's items: each bullet, or the lines of a hard-wrapped paragraph joined; headings, tables, tags and
    code blocks left out."""
    out: list[str] = []
    fenced, open_ = False, False
    for raw in body.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            fenced, open_ = not fenced, False
            continue
        line = raw.strip()
        if fenced or not line or line.startswith(("#", "|", "<", "---")):
            open_ = False
            continue
        item = BULLET.match(raw) is not None
        if open_ and not item and out and not out[-1].endswith(":"):
            out[-1] += " " + line
        else:
            out.append(BULLET.sub("", raw).strip())
        open_ = True
    return out


def sentences_of(text: str) -> list[str]:
    """A person's turn in sentences (lines, then sentence ends), code blocks left out."""
    return lines_of(text, directive=False) if text else []


def _ask_until(c: Check, position: int, nxt: int | None) -> int | None:
    if c.kind == "one_question_at_a_time":
        return position + STANDING
    return nxt - 1 if nxt is not None else None


def _quote(text: str, span: tuple[int, int], width: int = 80) -> str:
    """The words of an ask: the line that holds it, ending at the ask's end, cut to ``width`` characters (the slice
    ``problems.model.quote_at`` takes, so an ask reads the same in both sections)."""
    start, end = span
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    line_start = max(line_start, end - width if end - width > line_start else line_start)
    s = text[line_start:line_end][:width].strip()
    return s if s else text[:width].strip()
