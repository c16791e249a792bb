"""Secrets never leave through a report, a query result or an export (seed 000's Redactor rule).

The warehouse keeps the raw text (it is the user's own data); everything rendered from it passes here.
A snippet that is nothing but a secret is dropped rather than shown as a mask.

The rules are written once, in the regex syntax Python's ``re`` (with ``re.ASCII``) and DuckDB's RE2 read
alike: scoped flags, no ``\\Z``, explicit whitespace classes, ASCII ``\\b``. So an export masks a million
messages inside DuckDB at C++ speed, and a test holds both engines to the same output. ASCII word boundaries
also catch a key written straight after Chinese text (``密钥是sk-...``), which Unicode ``\\b`` misses.
"""
from __future__ import annotations

import re

import duckdb
import polars as pl

MASK = "[REDACTED]"
_WS = r"[ \t\n\r\f\v]"
_SNIPPET_EDGE = " \t\r\n\"'`:=,;()[]{}"  # what may surround the masks of a snippet that is dropped
_RULES: tuple[tuple[str, bool], ...] = (  # (pattern, the mask keeps group 1), applied in this order
    (r"(?s:-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*))", False),
    (r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{20,}", False),
    (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", False),
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", False),
    (r"\bgithub_pat_[A-Za-z0-9_]{30,}\b", False),
    (r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", False),
    (r"\bAIza[0-9A-Za-z_\-]{35}\b", False),
    (rf"(?i:\b(bearer{_WS}+)[A-Za-z0-9._~+/\-]{{16,}}=*)", True),
    (r"(?i:\b((?:api[_-]?key|access[_-]?key|secret[_-]?key|key|token|access[_-]?token|auth[_-]?token|secret"
     rf"""|client[_-]?secret)["']?{_WS}*[=:]{_WS}*["']?)([A-Fa-f0-9]{{32,}}|[A-Za-z0-9+/_\-]{{32,}}={{0,2}}))""", True),
    (rf"""(?i:\b((?:password|passwd|pwd)["']?{_WS}*[=:]{_WS}*["']?)([^ \t\n\r\f\v"',;　，；]+))""", True),
)
_COMPILED = [(re.compile(p, re.ASCII), r"\1" + MASK if keep else MASK) for p, keep in _RULES]
ANY_SECRET = "|".join(f"(?:{p})" for p, _ in _RULES)  # one pass that tells whether any rule applies


def redact(text: str) -> str:
    """Mask every secret found in ``text``."""
    if not text:
        return text
    for rx, mask in _COMPILED:
        text = rx.sub(mask, text)
    return text


def redact_snippet(text: str) -> str:
    """Like redact, but a snippet that held nothing except secrets becomes empty (dropped)."""
    out = redact(text)
    if out != text and not out.replace(MASK, "").strip(_SNIPPET_EDGE):
        return ""
    return out


def mask_frame(df: pl.DataFrame) -> pl.DataFrame:
    """``redact_snippet`` over every text cell of ``df``, inside lists too (term lists can hold an identifier)."""
    cols = [pl.col(c).map_elements(redact_snippet, return_dtype=pl.String) if t == pl.String
            else pl.col(c).list.eval(pl.element().map_elements(redact_snippet, return_dtype=pl.String))
            for c, t in df.schema.items() if t == pl.String or t == pl.List(pl.String)]
    return df.with_columns(cols) if cols else df


def install_sql(con: duckdb.DuckDBPyConnection) -> None:
    """Define the macro ``forensics_redact(text)`` on ``con``: ``redact_snippet`` in DuckDB SQL (RE2), for
    masking whole tables where a Python call per row would cost minutes."""
    masked = "s"
    for pattern, keep in _RULES:
        masked = f"regexp_replace({masked}, {_literal(pattern)}, {_literal(chr(92) + '1' + MASK if keep else MASK)}, 'g')"
    con.execute(f"CREATE OR REPLACE TEMP MACRO forensics_masked(s) AS {masked}")
    con.execute(f"CREATE OR REPLACE TEMP MACRO forensics_redact(s) AS CASE "
                f"WHEN s IS NULL OR NOT regexp_matches(s, {_literal(ANY_SECRET)}) THEN s "
                f"WHEN trim(replace(forensics_masked(s), {_literal(MASK)}, ''), {_literal(_SNIPPET_EDGE)}) = '' "
                f"THEN '' ELSE forensics_masked(s) END")


def redact_bytes(raw: bytes | None) -> bytes | None:
    """Mask secrets in raw bytes that may not be UTF-8 (quarantined lines); every other byte is kept."""
    if raw is None:
        return None
    return redact_snippet(raw.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def _literal(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"
