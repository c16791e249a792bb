"""Tokenizer modes of SPEC §7: ``bigram``, ``jieba`` and ``jieba+bigram``.

``bigram`` (seed 001, P2): every Han character is a token and so is every adjacent pair of Han characters;
any non-Han character resets the window, so pairs never cross it. Latin words, identifiers and paths stay
whole, lower-cased; numbers are dropped. ``jieba`` segments Han runs with jieba's dictionary (shipped in the
package, loaded once, lazily, log silenced). ``jieba+bigram`` is the bigram tokens plus jieba's words of
three or more characters (the ones pairs cannot represent).
"""
from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache

MODES = ("bigram", "jieba", "jieba+bigram")
HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_RUN = re.compile(rf"[{HAN}]+|[A-Za-z_][A-Za-z0-9_]*(?:[./\-][A-Za-z0-9_]+)*|[0-9][A-Za-z0-9_.]*")
_HAN_RUN = re.compile(rf"[{HAN}]+")
_lock = threading.Lock()


def tokenize(text: str, mode: str = "jieba+bigram") -> list[str]:
    """Tokens of ``text`` in order of appearance (duplicates kept: callers count)."""
    if mode not in MODES:
        raise ValueError(f"unknown tokenizer mode {mode!r}; choose {', '.join(MODES)}")
    out: list[str] = []
    for m in _RUN.finditer(text):
        run = m.group()
        c = run[0]
        if c.isdigit():
            continue  # numbers (and version-like 1.2.3) carry no topic
        if not _HAN_RUN.match(run):
            out.append(run.lower())
            continue
        if mode != "jieba":
            out.extend(run)
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
        if mode == "jieba":
            out.extend(w for w in _jieba().lcut(run, HMM=True) if w.strip())
        elif mode == "jieba+bigram" and len(run) > 2:
            out.extend(w for w in _jieba().lcut(run, HMM=True) if len(w) > 2)
    return out


@lru_cache(maxsize=1)
def _jieba():  # noqa: ANN202 - the jieba module
    """Import and initialise jieba once, quietly, from its bundled dictionary."""
    with _lock:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        return jieba
