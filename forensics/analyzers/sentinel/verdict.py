"""The sentinel line and the verdict on one reply (docs/definitions.md#sentinel-compliance; the seed harness's stripForDisplay and classify).

Only the trailing sentinel counts: the *last* marker in the reply. A model that talks about the protocol
quotes the marker in its body (a closed marker followed by more text, or an unclosed one followed by a
newline and more text); that is not a sentinel, so the reply is Missing and the display keeps the quote.
Trailing whitespace never matters: a stream often ends with a newline or two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from forensics.analyzers.sentinel.settings import SentinelSettings
from forensics.config import Config
from forensics.kernel.errors import ForensicsError

HEALTHY, MUTATED, MISSING = "healthy", "mutated", "missing"
STATUSES = (HEALTHY, MUTATED, MISSING)
TRUNCATED, FORMAT = "(truncated)", "(format)"  # drifted segments when every token is present

MARKER = "[[SS-CHECK"
TOKENS = ("toolsapproved", "untrusteddata", "idsfresh", "batchbulk", "saveauto")
CLOSING = "]]"


class Verdict(NamedTuple):
    """A reply's status and, for Mutated, the drifted segment (a token, ``(truncated)`` or ``(format)``)."""

    status: str
    drifted: str | None = None


@dataclass(frozen=True)
class Sentinel:
    """A team's canary: marker, expected tokens in order, closing; the line is ``marker tok1 tok2...closing``."""

    marker: str = MARKER
    tokens: tuple[str, ...] = TOKENS
    closing: str = CLOSING

    def __post_init__(self) -> None:
        parts = [self.marker, self.closing, *self.tokens]
        if not self.tokens or any(not p or p != p.strip() for p in parts):
            raise ForensicsError(
                "[sentinel] marker, closing and every token must be non-empty with no surrounding "
                f"spaces (got marker {self.marker!r}, tokens {list(self.tokens)!r}, "
                f"closing {self.closing!r})"
            )
        if any(self.marker in t or self.closing in t or any(c.isspace() for c in t) for t in self.tokens):
            raise ForensicsError(
                f"[sentinel] tokens may not contain spaces, the marker or the closing: {list(self.tokens)!r}"
            )

    @property
    def line(self) -> str:
        return f"{self.marker} {' '.join(self.tokens)}{self.closing}"

    @classmethod
    def from_config(cls, cfg: Config) -> Sentinel:
        s = SentinelSettings.of(cfg)
        return cls(s.marker, tuple(s.tokens), s.closing)


def _trailing_marker(body: str, marker: str, closing: str) -> int:
    """Index of the trailing sentinel's marker in ``body`` (already right-stripped), or -1 when none.

    The last marker is a sentinel unless the model quoted it: a complete closing followed by more text,
    or no closing and a line break after it (the seed's lastIndexOf rules, so display and verdict agree).
    """
    i = body.rfind(marker)
    if i < 0:
        return -1
    rest = body[i + len(marker) :]
    j = rest.find(closing)
    if j >= 0:
        return -1 if rest[j + len(closing) :].strip() else i
    return -1 if "\n" in rest else i


@lru_cache(maxsize=64)
def _token_patterns(tokens: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    # whole words: "idsfreshh" or a cut-off "idsfr" is not "idsfresh", but "toolsapproved," still is
    return tuple((t, re.compile(rf"(?<!\w){re.escape(t)}(?!\w)")) for t in tokens)


def classify(
    text: str, marker: str = MARKER, tokens: tuple[str, ...] | list[str] = TOKENS, closing: str = CLOSING
) -> Verdict:
    """Healthy, Mutated (with the drifted segment) or Missing for one final reply."""
    body = text.rstrip()
    i = _trailing_marker(body, marker, closing)
    if i < 0:
        return Verdict(MISSING)
    tokens = tuple(tokens)
    if body[body.rfind("\n") + 1 :] == f"{marker} {' '.join(tokens)}{closing}":
        return Verdict(HEALTHY)
    segment = body[i + len(marker) :]
    j = segment.find(closing)
    inside = segment if j < 0 else segment[:j]
    for token, pattern in _token_patterns(tokens):
        if not pattern.search(inside):
            return Verdict(MUTATED, token)
    return Verdict(MUTATED, TRUNCATED if j < 0 else FORMAT)


def strip_for_display(text: str, marker: str = MARKER, closing: str = CLOSING) -> str:
    """What the user's UI shows: the reply without its trailing sentinel (healthy or not), right-trimmed.

    A quoted marker stays, and a reply without a sentinel comes back unchanged.
    """
    body = text.rstrip()
    i = _trailing_marker(body, marker, closing)
    return text if i < 0 else body[:i].rstrip()
