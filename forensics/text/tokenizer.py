"""Tokenizer modes (docs/definitions.md#tokenizer-and-keywords): ``bigram``, ``jieba`` and ``jieba+bigram``.

Text is NFKC-normalised first, so full-width letters and digits (ＡＢＣ１２) read as their ASCII forms.

``bigram``: every Han character is a token and so is every adjacent pair of Han characters
(压缩架构 → 压 缩 架 构 压缩 缩架 架构); any non-Han character resets the window, so pairs never cross it.
Words of other scripts, identifiers and paths (``useAiSend.ts``, ``src/ai/compact.rs``) stay whole,
lower-cased; numbers (tokens without a letter: 42, 2025-07-15, 1.2.3) are dropped.

``jieba`` segments each Han run with jieba's dictionary (``engine.py``: rjieba, jieba's compiled port, when
installed, else jieba; loaded once, lazily). ``jieba+bigram`` (the default) keeps the bigram mode's recall for unknown two-character terms
but lets jieba veto the pairs that straddle a word boundary it is sure of: 上下文压缩 is 上下文/压缩, so 文压
is dropped. A boundary is "sure" when a word of two or more characters touches it; between two single
characters jieba did not recognise, the pair stays (that pair is often exactly the unknown term). Inside a
word of three or more characters only the pairs that are dictionary words stay (数据库 keeps 数据, not 据库).
jieba's words of three or more characters, which pairs cannot represent, are added.

``iter_tokens`` yields lazily so a caller can count a 10 MB text without holding its token list.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

from forensics.text import engine
from forensics.text.personal import blank_addresses

MODES = ("bigram", "jieba", "jieba+bigram")
SEGMENTER = "forensics.text.segmenter"  # the module a pool of segmenting workers preloads (``segmenter.py``)
HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_WORD = rf"[^\W{HAN}]+"  # word characters of any script except Han (Latin, digits, _, Cyrillic, ...)
_RUN = re.compile(rf"(?P<han>[{HAN}]+)|{_WORD}(?:[./\-]{_WORD})*")
_LETTER = re.compile(r"[^\W\d_]")
PIECE = 1 << 16  # characters normalised and scanned at a time
JIEBA_CHUNK = 512
WORD_FREQ = 100  # jieba dictionary frequency from which a pair counts as a word (its list has junk below: 据库 5)  # Han characters per jieba call: bounds its DAG on a pathological run; real runs are short


def tokenize(text: str, mode: str = "jieba+bigram") -> list[str]:
    """Tokens of ``text`` in order of appearance (duplicates kept: callers count)."""
    return list(iter_tokens(text, mode))


def iter_tokens(text: str, mode: str = "jieba+bigram") -> Iterator[str]:
    """The tokens of ``tokenize``, yielded one run at a time (memory bounded by the longest run)."""
    check_mode(mode)
    for run, han in runs(text):
        if han:
            yield from han_tokens(run, mode)
        else:
            yield run


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown tokenizer mode {mode!r}; choose {', '.join(MODES)}")


def runs(text: str) -> Iterator[tuple[str, bool]]:
    """The runs of ``text`` that give tokens, normalised: (a Han run, True) or (a word of other scripts,
    lower-cased, False); numbers left out."""
    for piece in map(blank_addresses, _pieces(text)):  # pieces are cut at whitespace: no address spans two
        if not piece.isascii():
            piece = unicodedata.normalize("NFKC", piece)
        for m in _RUN.finditer(piece):
            run = m.group()
            if m.lastgroup == "han":
                yield run, True
            elif _LETTER.search(run):
                yield run.lower(), False


class Span(NamedTuple):
    """A word of a text and where it is: ``text[start:end]`` (``word`` lower-cased)."""

    start: int
    end: int
    word: str
    han: bool


def spans(text: str) -> Iterator[Span]:
    """The words of ``text`` in order, with their offsets: jieba's words in a Han run, other words whole; numbers
    skipped. For phrases cut from a text itself (a trigger phrase must be a substring of the text it should
    match), so nothing is normalised here: the offsets stay the text's own."""
    for m in _RUN.finditer(text):
        run = m.group()
        if m.lastgroup == "han":
            for start in range(0, len(run), JIEBA_CHUNK):
                for w, a, b in engine.spans(run[start : start + JIEBA_CHUNK]):
                    yield Span(m.start() + start + a, m.start() + start + b, w, True)
        elif _LETTER.search(run):
            yield Span(m.start(), m.end(), run.lower(), False)


def _pieces(text: str) -> Iterator[str]:
    """Slices of at most PIECE characters cut at whitespace (no token spans whitespace), so normalising
    a 10 MB text never copies it whole; a run longer than a piece is cut, which only a pathological input has."""
    start, n = 0, len(text)
    while start < n:
        end = min(start + PIECE, n)
        if end < n:
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            end = cut + 1 if cut > start else end
        yield text[start:end]
        start = end


def han_tokens(run: str, mode: str) -> Iterator[str]:
    if mode == "bigram":
        yield from run
        yield from (run[i : i + 2] for i in range(len(run) - 1))
        return
    for start in range(0, len(run), JIEBA_CHUNK):
        chunk = run[start : start + JIEBA_CHUNK]
        words = _words(chunk)
        if mode == "jieba":
            yield from words
            continue
        yield from chunk
        yield from _agreed_pairs(chunk, words, engine.pair_words(WORD_FREQ))
        yield from (w for w in words if len(w) > 2)
        if start + JIEBA_CHUNK < len(run):  # the pair across a chunk edge: no jieba opinion there
            yield run[start + JIEBA_CHUNK - 1 : start + JIEBA_CHUNK + 1]


def _words(chunk: str) -> tuple[str, ...]:
    """jieba's words of a Han chunk, kept for the chunks seen last: a text is tokenized in more than one mode (the
    topic analysis asks for its terms, its words and its keywords), and short runs recur across messages. Few
    long chunks are kept, so that text without punctuation cannot fill memory with them."""
    return _short_words(chunk) if len(chunk) <= SHORT_CHUNK else _long_words(chunk)


SHORT_CHUNK = 64  # characters: a clause; kept by the thousand (a few MB), longer chunks by the dozen


@lru_cache(maxsize=1 << 12)
def _short_words(chunk: str) -> tuple[str, ...]:
    return _segment(chunk)


@lru_cache(maxsize=64)
def _long_words(chunk: str) -> tuple[str, ...]:
    return _segment(chunk)


def _segment(chunk: str) -> tuple[str, ...]:
    return tuple(w for w in engine.cut(chunk) if w)


def _agreed_pairs(chunk: str, words: tuple[str, ...], lexicon: frozenset[str]) -> Iterator[str]:
    """Adjacent pairs jieba does not contradict: none across a boundary next to a multi-character word, and
    inside a word of three or more characters only the pairs that are words themselves (上下文: 上下 and 下文
    stay; 数据库: 数据 stays, 据库 goes)."""
    word_of: list[int] = []  # character index -> index of the jieba word holding it
    for k, w in enumerate(words):
        word_of += [k] * len(w)
    for i in range(len(chunk) - 1):
        a, b = word_of[i], word_of[i + 1]
        if a != b and (len(words[a]) > 1 or len(words[b]) > 1):
            continue  # straddles a word boundary jieba is sure of
        if a == b and len(words[a]) > 2 and chunk[i : i + 2] not in lexicon:
            continue  # the inside of a long word that is no word by itself
        yield chunk[i : i + 2]
