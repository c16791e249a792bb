"""Keyword summaries (docs/definitions.md#tokenizer-and-keywords): the top content tokens of a set of messages.

Stop words (Chinese and English lists shipped as files) are removed; single Han characters and one-letter
tokens are tokens for matching but too ambiguous to stand as keywords, so summaries skip them. A token that
only ever occurs inside a longer keyword (下文 inside 上下文) adds nothing and is folded into it.
All-stop-word input gives an empty summary, never an error.

``keyword_summary`` is the one function every summary uses: per conversation (user messages, the seed harness's
fallback), per topic segment (the topic analyzer passes a segment's texts), per selection.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from functools import lru_cache
from importlib import resources

from forensics.text.tokenizer import SHORT_CHUNK, check_mode, han_tokens, runs


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    words: set[str] = set()
    for name in ("zh.txt", "en.txt"):
        text = (resources.files("forensics.text") / "stopwords" / name).read_text(encoding="utf-8")
        words.update(w.strip().lower() for w in text.splitlines() if w.strip() and not w.startswith("#"))
    return frozenset(words)


def content_tokens(text: str, mode: str = "jieba+bigram") -> list[str]:
    """Tokens that can be keywords: no stop words, no single Han characters, no one-letter words."""
    return list(iter_content_tokens(text, mode))


def iter_content_tokens(text: str, mode: str = "jieba+bigram") -> Iterator[str]:
    check_mode(mode)
    for run, han in _kept_runs(text):
        if han:
            yield from _han_content(run, mode)
        else:
            yield run


def content_tokens_modes(text: str, modes: tuple[str, ...]) -> dict[str, list[str]]:
    """``content_tokens(text, mode)`` for each of ``modes``, the text scanned once."""
    for mode in modes:
        check_mode(mode)
    out: dict[str, list[str]] = {mode: [] for mode in modes}
    for run, han in _kept_runs(text):
        for mode, tokens in out.items():
            if han:
                tokens.extend(_han_content(run, mode))
            else:
                tokens.append(run)
    return out


def _kept_runs(text: str) -> Iterator[tuple[str, bool]]:
    """The tokenizer's runs (``tokenize.runs``), words of other scripts only when they can be keywords."""
    stops = stop_words()
    return ((run, han) for run, han in runs(text) if han or _keeps(run, stops))


def _han_content(run: str, mode: str) -> tuple[str, ...]:
    """The content tokens of a Han run. A clause's are kept for the runs seen last: clauses recur across messages
    (a first report tokenized and filtered them token by token, a fifth of the topic analysis); a long run is not
    kept, so that text without punctuation cannot fill memory."""
    return _short_han_content(run, mode) if len(run) <= SHORT_CHUNK else _filtered(run, mode)


@lru_cache(maxsize=1 << 13)
def _short_han_content(run: str, mode: str) -> tuple[str, ...]:
    return _filtered(run, mode)


def _filtered(run: str, mode: str) -> tuple[str, ...]:
    stops = stop_words()
    return tuple(t for t in han_tokens(run, mode) if _keeps(t, stops))


def _keeps(tok: str, stops: frozenset[str]) -> bool:
    return len(tok) > 1 and tok not in stops and not _has_stop_char_pair(tok, stops)


def _has_stop_char_pair(tok: str, stops: frozenset[str]) -> bool:
    """A Han pair that straddles a function character (的, 了, 是 ...) is noise: 代码的, 的问."""
    return len(tok) == 2 and tok.isalpha() and not tok.isascii() and (tok[0] in stops or tok[1] in stops)


def keyword_counts(texts: Iterable[str], mode: str = "jieba+bigram") -> Counter[str]:
    """Content-token counts over ``texts`` (first-seen order kept for ties)."""
    counts: Counter[str] = Counter()
    for t in texts:
        if t:
            counts.update(iter_content_tokens(t, mode))
    return counts


def keyword_summary(texts: Iterable[str], top_k: int = 10, mode: str = "jieba+bigram") -> list[tuple[str, int]]:
    """The ``top_k`` most frequent content tokens with their counts (ties: first seen first)."""
    return top_keywords(keyword_counts(texts, mode), top_k)


def top_keywords(counts: Counter[str], top_k: int) -> list[tuple[str, int]]:
    """Most frequent first, skipping tokens subsumed by a longer keyword at least as frequent."""
    if top_k <= 0:
        return []
    out: list[tuple[str, int]] = []
    ranked = counts.most_common()
    longer = [t for t, _ in ranked if len(t) > 2 and not t.isascii()]
    for tok, n in ranked:
        if len(out) == top_k:
            break
        if tok.isascii() or not any(tok in w and w != tok and counts[w] >= n for w in longer):
            out.append((tok, n))
    return out
