"""What a message points at: the paths and identifiers in tool-call arguments and assistant text.

Topic evidence for the drift rules must be specific. Plain words (src, cargo, test, build) occur in every
topic, so only tokens that name something are kept: paths (with their parent folder and file name),
identifiers with ``_`` or ``.`` (send_message, stream_recv.rs) and camelCase names (useAiSend). All lower-cased.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

_TOKEN = re.compile(r"[\w\-.]+(?:/[\w\-.]+)*")
# The _TOKEN matches that can yield a target: those holding /, _, . or a camelCase hump. Skipping plain words
# in the regex engine instead of testing each in Python makes target_tokens ~5x faster on prose.
_CANDIDATE = re.compile(r"(?<![\w\-.])(?=[\w\-./]*?(?:[_./]|[a-z][A-Z]))" + _TOKEN.pattern)
_CAMEL = re.compile(r"[a-z][A-Z]")


def is_specific(word: str) -> bool:
    """An identifier that names something: has _ or an inner dot, or is camelCase."""
    w = word.strip(".-_")
    return len(w) > 2 and ("_" in w or "." in w or _CAMEL.search(w) is not None)


def target_tokens(text: str, folders: bool = True) -> set[str]:
    """Paths (whole, file name, specific stem; with ``folders`` the parent folder of a nested path too) and
    specific identifiers. A folder is weak evidence: two topics often share one (src/ai), so a message's own
    targets are taken without folders and matched against vocabularies that have them."""
    out: set[str] = set()
    for m in _CANDIDATE.finditer(text or ""):
        tok = m.group().strip(".-")
        if "/" in tok:
            parts = [p for p in tok.split("/") if p]
            if not parts:
                continue
            out.add("/".join(parts).lower())
            if folders and len(parts) > 2:
                out.add("/".join(parts[:-1]).lower())
            base = parts[-1]
            if "." in base.strip("."):
                out.add(base.lower())
            stem = base.split(".")[0]
            if is_specific(stem):
                out.add(stem.lower())
        elif is_specific(tok):
            out.add(tok.lower())
            stem = tok.split(".")[0]
            if "." in tok and is_specific(stem):
                out.add(stem.lower())
    return out


def union(texts: Iterable[str], folders: bool = True) -> set[str]:
    out: set[str] = set()
    for t in texts:
        out |= target_tokens(t, folders)
    return out
