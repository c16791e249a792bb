"""The word segmenter behind every Chinese tokenizer mode: rjieba (jieba-rs, compiled) when installed, jieba else.

rjieba cuts the same words as jieba from the same dictionary (bench/tokenizer.py measures it on the shared
dialogue sets and the bench corpus) in a fraction of the time, and it needs no 200 MB of Python dictionaries:
the pair lexicon the ``jieba+bigram`` mode asks for is read from jieba's dictionary file once, two-character words
only. Its tagger differs from jieba.posseg on a few messages (its HMM does not tag unknown words the same way);
bench/topics.py and the judged findings tests were run with both (docs/scale.md, "Issue 46").

``FORENSICS_TOKENIZER=jieba`` forces the Python segmenter (for a comparison, or if a platform lacks rjieba's wheel).
``ENGINE`` names the one in use; cached terms are keyed by it, so switching recomputes them.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from functools import lru_cache
from importlib import resources
from typing import Any

_lock = threading.Lock()


def _choose() -> str:
    if os.environ.get("FORENSICS_TOKENIZER", "").strip().lower() == "jieba":
        return "jieba"
    try:
        import rjieba  # noqa: F401
    except ImportError:
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


@lru_cache(maxsize=4)
def pair_words(min_freq: int) -> frozenset[str]:
    """The two-character words of jieba's dictionary with a frequency of at least ``min_freq``."""
    if NAME == "jieba":
        return frozenset(w for w, f in _jieba().dt.FREQ.items() if len(w) == 2 and f >= min_freq)
    out = set()
    with resources.files("jieba").joinpath("dict.txt").open("rb") as fh:
        for raw in fh:
            parts = raw.split(b" ", 2)
            if len(parts) >= 2 and int(parts[1]) >= min_freq:
                word = parts[0].decode("utf-8")
                if len(word) == 2:
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
        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        return jieba


@lru_cache(maxsize=1)
def _posseg() -> Any:  # noqa: ANN401 - jieba.posseg
    _jieba()
    import jieba.posseg

    return jieba.posseg
