"""Reading sentences for the memory rules: who names an option, who rejects it, who states a decision.

Cue lists come from the config ([memory]). A cue of Latin letters matches as whole words, case-insensitive,
spaces standing for any whitespace; a Chinese cue matches as a substring, except decision cues, which must
fall on jieba word boundaries (稳定了 and 否定了 hold 定了 but state nothing). In a cue, the word ``X`` stands
for the option being judged (``not X``: "not MongoDB"). Names of options match case-insensitively (Latin
proper names of up to three letters in their own case: Go, not "go ahead") and, at a Latin edge, as whole words
(SQL is not named inside MySQL). Sentences end at 。！？!?；; a newline, or a full stop before whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from forensics.text import engine
from forensics.text.keywords import content_tokens
from forensics.text.tokenizer import HAN

_END = re.compile(r"([。！？!?；;\n]|\.(?=\s|$))")
_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_PLACEHOLDER = re.compile(r"(?<![A-Za-z])X(?![A-Za-z])")
_LATIN_EDGE = re.compile(r"[0-9A-Za-z_]")
_HAN_CHAR = re.compile(f"[{HAN}]")
SHORT_NAME = 3  # Latin proper names this short match in their own case only
# verbs of choosing: a decision's content names its option beside them ("使用 PostgreSQL")
GENERIC = frozenset(
    (
        "使用",
        "采用",
        "选用",
        "选择",
        "决定",
        "改用",
        "继续",
        "用于",
        "作为",
        "方案",
        "最终",
        "统一",
        "use",
        "using",
        "used",
        "adopt",
        "choose",
        "chosen",
        "go",
        "with",
        "switch",
        "keep",
        "stay",
        "move",
        "decided",
        "decision",
        "pick",
        "picked",
        "option",
    )
)


def sentences(text: str) -> list[str]:
    """The text's sentences, each with its closing mark; fenced code blocks are not prose and are left out."""
    parts = _END.split(_FENCE.sub("\n", text))
    out = []
    for i in range(0, len(parts), 2):
        s = (parts[i] + (parts[i + 1] if i + 1 < len(parts) else "")).strip()
        if s:
            out.append(s)
    return out


def name_pattern(name: str) -> re.Pattern[str]:
    """Where ``name`` is named: case-insensitive, whole words at a Latin edge."""
    return _name_pattern(name.strip())


@lru_cache(maxsize=4096)
def _name_pattern(name: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(w) for w in name.split())
    left = r"(?<![0-9A-Za-z_])" if name and _LATIN_EDGE.match(name[0]) else ""
    right = r"(?![0-9A-Za-z_])" if name and _LATIN_EDGE.match(name[-1]) else ""
    # a short proper name in its own case: "Go" is named, "go ahead" is not (a lower-case term, as the tokenizer
    # gives an option's terms, matches any case: "elk" is named by "ELK")
    proper = name.isascii() and len(name) <= SHORT_NAME and not name.islower()
    return re.compile(left + body + right, 0 if proper else re.IGNORECASE)


def names(text: str, name: str) -> bool:
    return bool(name.strip()) and name_pattern(name).search(text) is not None


@dataclass(frozen=True)
class Cues:
    """One cue list, compiled: ``search(text)`` for the plain cues, ``about(text, option)`` with X ones too."""

    plain: re.Pattern[str] | None
    templates: tuple[str, ...]  # cues holding the X placeholder
    aligned: tuple[str, ...] = ()  # Chinese cues that must fall on jieba word boundaries

    @classmethod
    def of(cls, phrases: Iterable[str], align_han: bool = False) -> Cues:
        plain, templates, aligned = [], [], []
        for p in (p.strip() for p in phrases):
            if not p:
                continue
            if _PLACEHOLDER.search(p):
                templates.append(p)
            elif align_han and _HAN_CHAR.search(p):
                aligned.append(p)
            else:
                plain.append(name_pattern(p).pattern)
        return cls(re.compile("|".join(plain), re.IGNORECASE) if plain else None, tuple(templates), tuple(aligned))

    def search(self, text: str) -> bool:
        return self.end(text) is not None

    def end(self, text: str) -> int | None:
        """Where the first cue in ``text`` ends (None: no cue)."""
        span = self.span(text)
        return None if span is None else span[1]

    def span(self, text: str) -> tuple[int, int] | None:
        """Where the cue that ends first in ``text`` starts and ends (None: no cue)."""
        m = self.plain.search(text) if self.plain is not None else None
        spans = [m.span()] if m else []
        spans += [s for cue in self.aligned if cue in text and (s := _on_word_boundaries(text, cue)) is not None]
        return min(spans, key=lambda s: s[1], default=None)

    def about(self, text: str, option: str) -> bool:
        """A cue in ``text``, X-cues counting only with ``option`` in the place of X."""
        return self.search(text) or any(_template(t, option.strip()).search(text) for t in self.templates)


@lru_cache(maxsize=4096)
def _template(cue: str, option: str) -> re.Pattern[str]:
    pieces: list[str] = []
    for i, part in enumerate(_PLACEHOLDER.split(cue)):
        if i:
            pieces.append(name_pattern(option).pattern)
        if part.strip():
            pieces.append(name_pattern(part.strip()).pattern)
    return re.compile(r"\s*".join(pieces), re.IGNORECASE)


def _on_word_boundaries(text: str, cue: str) -> tuple[int, int] | None:
    """The first occurrence of ``cue`` in ``text`` that starts and ends where jieba cuts words."""
    cuts, at = {0}, 0
    for w in engine.cut(text):
        at += len(w)
        cuts.add(at)
    start = text.find(cue)
    while start >= 0:
        if start in cuts and start + len(cue) in cuts:
            return start, start + len(cue)
        start = text.find(cue, start + 1)
    return None


def terms(text: str, mode: str) -> set[str]:
    """The tokenizer's content tokens of ``text`` as a set (what titles and questions are matched on)."""
    return set(content_tokens(text or "", mode))


def option_terms(title: str, content: str, mode: str) -> set[str]:
    """What names a decision's chosen option: its content's terms beyond the title's and the verbs of choosing;
    product names (Latin terms) when there are any."""
    mine = terms(content, mode) - GENERIC
    own = (mine - terms(title, mode)) or mine
    latin = {t for t in own if t.isascii()}
    return latin or own


def mentions_any(text: str, words: Iterable[str]) -> bool:
    return any(names(text, w) for w in words)
