"""``user_repeated``'s ``asked_again`` (docs/definitions.md#problems-a-reviewer-flags): a person turn that asks
again, nearly word for word, what one of their earlier answered turns asked: a short turn by its character trigrams,
a long one only when it is the same text sent again (``resent``)."""

from __future__ import annotations

import functools

from forensics.analyzers.problems.restated import terms
from forensics.analyzers.problems.templates import OPENING, WORD, opening
from forensics.analyzers.problems.turns import HEAD, Turn

MIN_WORDS = 5  # shorter turns ("yes please", "OK, continue", "????") repeat without asking anything again
SIMILAR = 0.6  # share of character trigrams two turns share (Jaccard) to be the same request re-asked
RESENT = 0.9  # share of word trigrams a long turn shares with an earlier one (Jaccard) to be the same text sent again
GROWN = 2.0  # ... or opens with its words, holds RESENT of its trigrams and is at most this many times as long: the
# request sent again with more said
LONG_WORDS = 20  # word trigrams a long turn needs to be compared at all


def asked_before(t: Turn, earlier: list[Turn], templates: frozenset[tuple[str, ...]] = frozenset()) -> Turn | None:
    """The latest of ``earlier`` (turns the assistant answered) whose text is nearly ``t``'s. Short turns of one
    or two lines by their character trigrams; a long one (a pasted log or script, a harness's templated prompt:
    benchmark steps share most of their words and ask something new each time) only when it is the same text
    again, word for word but for a few words (``resent``)."""
    if len(t.text.split()) < MIN_WORDS:
        return None
    if t.chars > HEAD or t.text.strip().count("\n") > 1:
        return resent(t, earlier, templates)
    mine = norm(t.text)
    for e in reversed(earlier):
        if e.chars > HEAD:
            continue
        theirs = norm(e.text)
        if mine == theirs and e.index == t.index - 1:
            return None  # the same text twice in a row: a re-delivery, not a repeat after an answer
        if _similar(mine, theirs) and not _narrows(mine, theirs):
            return e
    return None


def _narrows(mine: str, theirs: str) -> bool:
    """``mine`` holds all of ``theirs`` and adds a content term of its own ("example of how to do a crashing schedule"
    after "how to do a crashing schedule"): a follow-up that asks for something more about the answer, not the
    request asked again (which adds nothing but its courtesy and its urgency: "please", "now", "!!!")."""
    if theirs not in mine or mine == theirs:
        return False
    added = mine.replace(theirs, " ", 1)
    return any(len(w) > 3 for w in terms(added))


def resent(t: Turn, earlier: list[Turn], templates: frozenset[tuple[str, ...]] = frozenset()) -> Turn | None:
    """The latest of ``earlier`` that ``t`` sends again: their word trigrams agree on ``RESENT`` of their union, or
    ``t`` opens with the earlier one's ``OPENING`` words (not a template's), holds ``RESENT`` of its trigrams and is
    at most ``GROWN`` times as many (a request pasted again, maybe with more said, after an answer that did not do
    it; a turn that only attaches the same file again opens otherwise). Not the turn just before it sent twice in a
    row (a re-delivery)."""
    mine = _words(t.full or t.text)
    start = opening(t.text)
    for e in reversed(earlier):
        theirs = _words(e.full or e.text)
        if len(mine) < LONG_WORDS or len(theirs) < LONG_WORDS:
            continue
        shared = len(mine & theirs)
        if shared / len(mine | theirs) >= RESENT or (
            shared / len(theirs) >= RESENT
            and len(mine) <= GROWN * len(theirs)
            and len(start) == OPENING
            and start == opening(e.text)
            and start not in templates
        ):
            return None if e.index == t.index - 1 and mine == theirs else e
    return None


def _words(text: str) -> frozenset[tuple[str, ...]]:
    w = WORD.findall(text.lower())
    return frozenset(tuple(w[k : k + 3]) for k in range(len(w) - 2))


@functools.lru_cache(maxsize=4096)
def norm(text: str) -> str:
    return " ".join(text.lower().split())


@functools.lru_cache(maxsize=4096)
def _grams(text: str) -> frozenset[str]:
    return frozenset(text[k : k + 3] for k in range(len(text) - 2))


def _similar(a: str, b: str) -> bool:
    ga, gb = _grams(a), _grams(b)
    return bool(ga and gb) and len(ga & gb) / len(ga | gb) >= SIMILAR
