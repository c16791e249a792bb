"""Keyword summaries (seed 001, improvement 3): the top content tokens of a set of messages.

Stop words (Chinese and English lists shipped as files) are removed; single Han characters and one-letter
Latin tokens are tokens for matching but too ambiguous to stand as keywords, so summaries skip them.
All-stop-word input gives an empty summary, never an error.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

from forensics.text.tokenize import tokenize


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    words: set[str] = set()
    for name in ("zh.txt", "en.txt"):
        text = (resources.files("forensics.text") / "stopwords" / name).read_text(encoding="utf-8")
        words.update(w.strip().lower() for w in text.splitlines() if w.strip() and not w.startswith("#"))
    return frozenset(words)


def content_tokens(text: str, mode: str = "jieba+bigram") -> list[str]:
    """Tokens that can be keywords: no stop words, no single Han characters, no one-letter words."""
    stops = stop_words()
    return [t for t in tokenize(text, mode) if len(t) > 1 and t not in stops and not _has_stop_char_pair(t, stops)]


def _has_stop_char_pair(tok: str, stops: frozenset[str]) -> bool:
    """A Han pair that straddles a function character (的, 了, 是 ...) is noise: 代码的, 的问."""
    return len(tok) == 2 and tok.isalpha() and not tok.isascii() and (tok[0] in stops or tok[1] in stops)


def keyword_summary(texts: Iterable[str], top_k: int = 10, mode: str = "jieba+bigram") -> list[tuple[str, int]]:
    """The ``top_k`` most frequent content tokens with their counts (ties: first seen first)."""
    counts: Counter[str] = Counter()
    for t in texts:
        counts.update(content_tokens(t, mode))
    return counts.most_common(top_k) if top_k > 0 else []
