"""The audit of each logged compaction: the facts the context held before it, which ones the summary or the kept
messages still carry, and which dropped ones the conversation needed again.

Held before a compaction: facts mentioned since the previous compaction (any channel but a question), and
facts the previous compaction kept; a task a todo list marked completed is no longer open.

Kept, per fact: *kept messages* when the harness kept a message that mentions it (Claude Code keeps none: the
summary replaces everything; Codex keeps the recent user messages; any other format is assumed to keep the
last ``[compaction] keep_recent`` messages, the conservative reading); *summary* when the summary carries it
(a file by its path or file name, an identifier or a search by name, an error or a stated fact by
``carry_share`` of its terms or one strong term). **Unjudged** when no summary is logged, or a stated fact is
in one language and the summary in another: then nobody can say lexically whether it was carried.

**Opaque** when the log holds a summary that cannot be read (Codex's encrypted replacement history, an empty
summary field): never reported as dropped.

Dropped and needed again: the first mention after the compaction is a need for its kind (a file re-read or
used again, the same search repeated, an identifier looked up again, the error recurring, the user repeating a
constraint or asking for a task again, a question the fact answers). When the assistant names it first (in its
own text, or a todo list brings the task back), it still knew it: re-entered, not a loss. A not-found path
followed by a search between the compaction and the need is attached as evidence (``signs``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from forensics.analyzers.compaction.facts import (
    CATEGORY,
    NEEDS,
    SOURCES,
    TEXT_KINDS,
    Fact,
    Mention,
    error_terms,
    is_name,
    is_strong,
    mentions_command,
    mentions_number,
    mentions_path,
    mentions_word,
    overlap,
    terms_of,
)
from forensics.analyzers.compaction.load import Compaction, Conversation
from forensics.analyzers.compaction.rules import HARNESS_TEXT, READ_TOOL, SEARCH_TOOL, Rules

HAN = re.compile(r"[\u3400-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")
KEEPS_NOTHING = {"claude-code"}  # formats whose compaction replaces everything with the summary


@dataclass
class Row:
    """One fact at one compaction: a row of ``compaction_facts``."""

    conversation_id: str
    native_id: str
    event: int  # 1-based, in position order within the conversation
    event_position: int
    kind: str
    fact: str
    fact_position: int  # its last mention before the compaction
    first_position: int
    status: str  # kept | dropped | unjudged | opaque (the summary is encrypted or empty: nobody can say)
    carried_by: str | None = None  # summary | kept messages
    needed_at: int | None = None
    need: str | None = None  # how it was needed: "re-read (Read)", "the user repeated it", ...
    re_entered_at: int | None = None  # named again without a need (the assistant still knew it)
    evidence: list[int] = field(default_factory=list)  # rediscovery positions between the compaction and the need
    severity: str | None = None  # a loss: high when the user had to repeat, an error recurred or it was rediscovered

    @property
    def lost(self) -> bool:
        return self.needed_at is not None

    @property
    def category(self) -> str:
        """The category (docs/metrics.md#compaction): path, command, error, instruction, decision, number."""
        return CATEGORY[self.kind]


COLUMNS = {
    "conversation_id": pl.String,
    "native_id": pl.String,
    "event": pl.Int32,
    "event_position": pl.Int32,
    "category": pl.String,
    "kind": pl.String,
    "fact": pl.String,
    "fact_position": pl.Int32,
    "first_position": pl.Int32,
    "status": pl.String,
    "carried_by": pl.String,
    "needed_at": pl.Int32,
    "need": pl.String,
    "re_entered_at": pl.Int32,
    "evidence": pl.List(pl.Int32),
    "severity": pl.String,
}


@dataclass
class Text:
    """A text a fact may be carried by, tokenized once."""

    lower: str
    han: float  # share of its letters that are Han
    terms: frozenset[str] | None = None

    @classmethod
    def of(cls, text: str) -> Text:
        han, latin = len(HAN.findall(text)), len(LATIN.findall(text))
        return cls(text.lower(), han / (han + latin) if han + latin else 0.0)


def carries(f: Fact, t: Text, r: Rules) -> bool:
    if f.kind == "file":
        return mentions_path(t.lower, f.key)
    if f.kind == "identifier":
        return mentions_word(t.lower, f.key)
    if f.kind == "command":
        return mentions_command(t.lower, f.key)
    if f.kind == "number":
        return mentions_number(t.lower, f.key)
    if f.kind == "search":
        return f.key in t.lower or any(mentions_word(t.lower, n) for n in f.names)
    if any(mentions_word(t.lower, n) for n in f.names):
        return True
    if t.terms is None:
        t.terms = terms_of(t.lower, r.tokenizer)
    shared = f.terms & t.terms
    # a share of its terms, a name of it, or two long words: one long word ("rounding") names a topic, not the fact
    return bool(shared) and (
        len(shared) >= r.carry_share * len(f.terms)
        or any(is_name(x) for x in shared)
        or sum(is_strong(x) for x in shared) >= 2
    )


def restates(f: Fact, t: Text, r: Rules) -> bool:
    """The assistant names the fact itself: a name of it, or (a stated fact, an error) most of its terms."""
    if f.kind in ("file", "identifier", "search", "command", "number"):
        return carries(f, t, r)
    if any(mentions_word(t.lower, n) for n in f.names):
        return True
    if t.terms is None:
        t.terms = terms_of(t.lower, r.tokenizer)
    return overlap(f.terms, t.terms, r.repeat_share)


def comparable(f: Fact, t: Text) -> bool:
    """Can a lexical match tell whether ``t`` carries ``f``? Not for a Chinese statement and an English summary,
    nor the other way round (names such as paths and identifiers survive translation; prose does not)."""
    if f.kind not in TEXT_KINDS and f.kind != "error":
        return True
    words = [w for w in f.terms if w not in f.names]
    if not words:
        return True
    han = sum(not w.isascii() for w in words) / len(words)
    return not (han >= 0.5 and t.han < 0.05) and not (han < 0.5 and t.han > 0.95)


def audit(
    c: Conversation, facts: list[Fact], r: Rules, keep_recent: int, signs: list[tuple[int, list[int], str]]
) -> list[Row]:
    """The rows of one conversation's logged compactions, from its ``facts`` (``signs``: its not-found-then-search
    signs as (position, positions, failed target))."""
    if not c.compactions:
        return []
    comps = sorted(c.compactions, key=lambda k: k.position)
    assistant = sorted((p, Text.of(t)) for p, (role, t) in c.texts.items() if role == "assistant")
    rows: list[Row] = []
    carried: set[int] = set()
    prev = -1
    for i, k in enumerate(comps, 1):
        summary = Text.of(k.summary) if k.summary else None
        restored = _restored(c, k)
        kept = Text.of(k.kept_text) if k.kept_text else None
        later = [Text.of(x.summary) for x in comps if x.position > k.position and x.summary]
        next_carried: set[int] = set()
        for f in facts:
            before = [m for m in f.mentions if m.position < k.position and m.channel in SOURCES]
            if not before or (f.closed_at is not None and f.closed_at < k.position):
                continue
            if id(f) not in carried and before[-1].position < prev:
                continue  # not mentioned since the previous compaction, which dropped it
            row = Row(
                c.conversation_id,
                c.native_id,
                i,
                k.position,
                f.kind,
                f.text,
                before[-1].position,
                f.mentions[0].position,
                "dropped",
            )
            error_terms(f, r.tokenizer)
            if (
                _kept_by_messages(f, before, k, c, keep_recent)
                or any(carries(f, t, r) for t in restored)
                or kept is not None
                and _named_in(f, kept, r)
            ):
                row.status, row.carried_by = "kept", "kept messages"
            elif summary is None:
                row.status = "opaque" if k.opaque else "unjudged"
            elif not comparable(f, summary):
                row.status = "unjudged"
            elif carries(f, summary, r):
                row.status, row.carried_by = "kept", "summary"
            if row.status == "dropped":
                _need(row, f, k, assistant, later, r, signs)
            else:
                next_carried.add(id(f))
            rows.append(row)
        carried, prev = next_carried, k.position
    return rows


def _named_in(f: Fact, t: Text, r: Rules) -> bool:
    """The messages a compaction keeps (a long text: every kept message) name the fact: by its name for a path,
    a command, a search, an identifier or a figure; an error by its line. A stated fact is judged by where it was
    said (``_kept_by_messages``): a share of its words found somewhere in so long a text says nothing."""
    if f.kind in ("file", "identifier", "search", "command", "number"):
        return carries(f, t, r)
    return f.kind == "error" and " ".join(f.text.lower().split()) in t.lower


def _restored(c: Conversation, k: Compaction) -> list[Text]:
    """What the harness put back into the context right after the compaction, besides the summary: Claude Code
    reads recent files back in ("Called the Read tool with the following input ..."), reminders, command output;
    up to the first assistant message."""
    out = []
    for p in sorted(x for x in c.texts if x >= k.position):
        role, text = c.texts[p]
        if role == "assistant":
            break
        if p != k.summary_position and HARNESS_TEXT.match(text):
            out.append(Text.of(text))
    return out


def _kept_by_messages(f: Fact, before: list[Mention], k: Compaction, c: Conversation, keep_recent: int) -> bool:
    if k.kept_users:
        return any(m.channel == "user" or m.channel == "assistant" and m.position in k.answers for m in before)
    if k.window is not None:  # the log counts the messages it kept
        return before[-1].position >= k.window
    if c.format in KEEPS_NOTHING:
        return False
    return before[-1].position >= k.position - keep_recent


def _need(
    row: Row,
    f: Fact,
    k: Compaction,
    assistant: list[tuple[int, Text]],
    later: list[Text],
    r: Rules,
    signs: list[tuple[int, list[int], str]],
) -> None:
    after = [m for m in f.mentions if m.position >= k.position and (m.channel in NEEDS[f.kind] or m.channel in SOURCES)]
    first = after[0] if after else None
    recall = next(
        (p for p, t in assistant if p >= k.position and (first is None or p < first.position) and restates(f, t, r)),
        None,
    )
    if first is None or recall is not None or first.channel not in NEEDS[f.kind]:
        row.re_entered_at = recall if recall is not None else first.position if first else None
        return
    if any(carries(f, t, r) for t in later if t):  # a later summary names it: it was not gone
        return
    row.needed_at, row.need = first.position, _how(f.kind, first)
    row.evidence = [
        p
        for at, pos, target in signs
        if k.position <= at <= first.position and f.kind == "file" and _same_folder(f.key, target)
        for p in pos
    ]
    rediscovered = bool(row.evidence)
    if rediscovered:
        row.need += ", after a not-found path and a search"
    row.severity = (
        "high"
        if rediscovered
        or first.channel in ("user", "question")
        and f.kind in (*TEXT_KINDS, "number")
        or f.kind == "error"
        else "low"
    )


def _same_folder(key: str, target: str) -> bool:
    """The failed path was in the fact's folder: the assistant reached for it under an old name."""
    parts = [p for p in target.lower().replace("\\", "/").split("/") if p]
    return "/" in key and len(parts) >= 2 and parts[-2] == key.split("/")[0]


def _how(kind: str, m: Mention) -> str:
    if m.channel == "question":
        return f"asked about again: “{m.how}”"
    if m.channel == "user":
        return {
            "constraint": "the user repeated it",
            "decision": "the user restated it",
            "task": "the user asked for it again",
        }.get(kind, "named again by the user")
    if kind == "error":
        return "the error recurred"
    if kind == "search":
        return f"the same search repeated ({m.how})"
    if kind == "identifier":
        return f"looked up again ({m.how})"
    if kind == "command":
        return f"the same command re-run ({m.how})"
    if kind == "number":
        return f"the figure used again ({m.how})"
    verb = "re-read" if READ_TOOL.search(m.how) else "searched for again" if SEARCH_TOOL.search(m.how) else "used again"
    return f"{verb} ({m.how})"
