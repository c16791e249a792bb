"""The word segmenter behind every Chinese tokenizer mode: rjieba (jieba-rs, compiled) when installed, jieba else.

rjieba cuts the same words as jieba from the same dictionary (bench/tokenizer.py measures it on the shared
dialogue sets and the bench corpus) in a fraction of the time, and it needs no 200 MB of Python dictionaries:
the pair lexicon the ``jieba+bigram`` mode asks for is ``pair_words.txt`` (jieba's dictionary's two-character
words from frequency 100, 265 KB), so jieba (42 MB) is only the extra ``forensics[jieba]``. Its tagger differs from jieba.posseg on a few messages (its HMM does not tag unknown words the same way);
bench/topics.py and the judged findings tests were run with both (docs/scale.md, "Issue 46").

``FORENSICS_TOKENIZER=jieba`` forces the Python segmenter (for a comparison, or if a platform lacks rjieba's wheel;
it needs ``pip install 'forensics[jieba]'``).
``ENGINE`` names the one in use; cached terms are keyed by it, so switching recomputes them.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import threading
from functools import lru_cache
from importlib import resources
from typing import Any

from forensics.kernel.errors import ForensicsError

_lock = threading.Lock()


def _choose() -> str:
    if os.environ.get("FORENSICS_TOKENIZER", "").strip().lower() == "jieba":
        return "jieba"
    # found, not imported: loading rjieba costs 0.1 CPU s, which a report kept whole (``report.cache``) never uses;
    # a platform without rjieba's wheel: jieba, when the extra is installed
    if importlib.util.find_spec("rjieba") is None:
        return "jieba"
    return "rjieba"


NAME = _choose()
ENGINE = f"{NAME}-1"  # bump the number when what the segmenter returns changes
# The blocks jieba's tagger tags one at a time (jieba.posseg.re_han_internal): runs of Han, letters, digits and +#&._
BLOCK = re.compile(r"([\u4E00-\u9FD5a-zA-Z0-9+#&\._]+)")


def cut(text: str) -> list[str]:
    """The words of ``text`` (the HMM guesses unknown words), in order: their concatenation is ``text``."""
    if NAME == "rjieba":
        return _rjieba().cut(text, True)  # type: ignore[no-any-return]
    return _jieba().lcut(text, HMM=True)  # type: ignore[no-any-return]


def spans(text: str) -> list[tuple[str, int, int]]:
    """The words of ``text`` with their offsets (``text[start:end] == word``)."""
    if NAME == "rjieba":
        return _rjieba().tokenize(text, "default", True)  # type: ignore[no-any-return]
    return list(_jieba().tokenize(text, HMM=True))


def tag(text: str) -> list[tuple[str, str]]:
    """The words of ``text`` with their part-of-speech tags (jieba's tag set: nr person, ns place, ...)."""
    if NAME == "rjieba":
        return _rjieba().tag(text, True)  # type: ignore[no-any-return]
    return [(p.word, p.flag) for p in _posseg().lcut(text)]


PAIR_FLOOR = 100  # the lowest frequency pair_words.txt keeps


@lru_cache(maxsize=4)
def pair_words(min_freq: int) -> frozenset[str]:
    """The two-character words of jieba's dictionary with a frequency of at least ``min_freq`` (at least
    ``PAIR_FLOOR``): read from ``pair_words.txt``, the dictionary's two-character words from that frequency up, which
    ships in the package so that rjieba alone does the segmenting (jieba is an extra)."""
    if min_freq < PAIR_FLOOR:
        raise ValueError(f"pair_words.txt keeps the words from frequency {PAIR_FLOOR}, not {min_freq}")
    out = set()
    for line in resources.files("forensics.text").joinpath("pair_words.txt").read_text("utf-8").splitlines():
        if not line.startswith("#"):
            word, freq = line.split(" ")
            if int(freq) >= min_freq:
                out.add(word)
    return frozenset(out)


def preload() -> None:
    """Load the segmenter and tagger now (a fork server does, before forking its workers)."""
    if NAME == "rjieba":
        _rjieba().cut("预热", True)
        _rjieba().tag("预热", True)
    else:
        _posseg()


@lru_cache(maxsize=1)
def _rjieba() -> Any:  # noqa: ANN401 - the rjieba module
    with _lock:
        import rjieba

        return rjieba


@lru_cache(maxsize=1)
def _jieba() -> Any:  # noqa: ANN401 - the jieba module
    """Import and initialise jieba once, quietly, from its bundled dictionary."""
    with _lock:
        try:
            import jieba
        except ImportError:
            raise ForensicsError(
                "the Python segmenter jieba is not installed (FORENSICS_TOKENIZER=jieba, or no rjieba for this "
                "platform): pip install 'forensics[jieba]'"
            ) from None
        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        return jieba


@lru_cache(maxsize=1)
def _posseg() -> Any:  # noqa: ANN401 - jieba.posseg
    _jieba()
    import jieba.posseg

    return jieba.posseg
