"""What a path or an identifier is: the one definition the drift rules, the compaction audit and the topic signals
read (each picks the recogniser its evidence needs; none keeps a copy of its own).

Evidence must be specific. Plain words (src, cargo, test, build) occur in every topic, so only tokens that name
something are kept: paths (with their parent folder and file name), identifiers with ``_`` or ``.``
(send_message, stream_recv.rs) and camelCase names (useAiSend). ``target_tokens`` lower-cases them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_TOKEN = re.compile(r"[\w\-.]+(?:/[\w\-.]+)*")
# The _TOKEN matches that can yield a target: those holding /, _, . or a camelCase hump. Skipping plain words
# in the regex engine instead of testing each in Python makes target_tokens ~5x faster on prose.
_CANDIDATE = re.compile(r"(?<![\w\-.])(?=[\w\-./]*?(?:[_./]|[a-z][A-Z]))" + _TOKEN.pattern)
_CAMEL = re.compile(r"[a-z][A-Z]")

EXTENSIONS = (
    "py|pyi|ipynb|rs|go|java|kt|kts|scala|rb|php|c|h|cc|cpp|hpp|cs|swift|m|mm|js|jsx|ts|tsx|mjs|cjs|vue|"
    "svelte|sh|bash|zsh|ps1|md|mdx|rst|txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|env|xml|html|htm|css|scss|"
    "less|sql|lock|gradle|proto|tf|csv|tsv|log|pdf|zig|lua|ex|exs|erl|dart|r|jl|vim"
)
_SEG = r"[\w\-.\u4e00-\u9fff@+]+"
# a path with a folder (a/b, ./a/b.py) or a file name with a known extension; never inside a URL's host part
PATH = re.compile(
    rf"(?<![\w/.\-:])(?:~|\.{{1,2}})?/?(?:{_SEG}/)+{_SEG}|(?<![\w/.\-])[\w\-\u4e00-\u9fff]+\.(?:{EXTENSIONS})\b"
)
# words that may be identifiers (has _, an inner dot or a camelCase hump); ``is_specific`` decides
IDENTIFIER = re.compile(r"(?<![\w.])(?=[\w.]*?(?:_|\w\.\w|[a-z][A-Z]))[A-Za-z_][\w.]*\w")
# the looser forms a topic signal takes as a named entity in chat: any a/b, a file of a common source extension,
# snake_case, camelCase and PascalCase words
ENTITY_PATH = re.compile(
    r"(?:[\w.\-]+/)+[\w.\-]+|\b[\w\-]+\.(?:rs|py|ts|tsx|js|jsx|go|java|md|json|toml|ya?ml|sql|c|h|cpp|"
    r"txt|log|sh|html|css|vue|kt|swift|rb|php|db)\b"
)
ENTITY_IDENTIFIER = re.compile(r"\b(?:[a-z]+_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b")


def is_specific(word: str) -> bool:
    """An identifier that names something: has _ or an inner dot, or is camelCase."""
    w = word.strip(".-_")
    return len(w) > 2 and ("_" in w or "." in w or _CAMEL.search(w) is not None)


_WORDISH = re.compile(r"[A-Za-z\u4e00-\u9fff]{2}")
_ID_RUN = re.compile(r"\d{4,}|[0-9a-f]{8,}|^[A-Z0-9]{5,10}$")
_ABBREVIATIONS = {"e.g", "i.e", "etc", "vs", "a.k.a", "n.b", "cf"}


def names_something(token: str) -> bool:
    """Whether a target token can be evidence of a topic: it holds a word (not 0.4, 250.0), is no abbreviation
    (e.g) and no bare id (mia_li_3668, a hash, a session or reservation number: one entity's label that both
    topics of a conversation about that entity use; a path or file name with an id in it still names a file)."""
    t = token.strip(".-_")
    if t.lower() in _ABBREVIATIONS or not _WORDISH.search(t):
        return False
    return "/" in t or PATH.fullmatch(t) is not None or not _ID_RUN.search(t)


def values_text(arguments: str | None) -> str:
    """A tool call's argument values as one text, without the keys: a key (reservation_id, file_path) is the
    tool's vocabulary, shared by every call of it, not something the call names."""
    import json

    try:
        doc = json.loads(arguments or "")
    except ValueError:
        return arguments or ""
    out: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(doc)
    return "\n".join(out)


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
