"""Secrets never leave through a report, a query result or an export (docs/definitions.md#masking).

The warehouse keeps the raw text (it is the user's own data); everything rendered from it passes here, and
the terms analyzers derive (keywords, topic terms) are cut from text with the secrets taken out. A snippet
that is nothing but a secret is dropped rather than shown as a mask.

The rules are written once, in the regex syntax Python's ``re`` (with ``re.ASCII``) and DuckDB's RE2 read
alike, so an export masks a million messages inside DuckDB at C++ speed and a test holds both engines to the
same output: scoped flags, no ``\\Z``, explicit whitespace classes, ASCII ``\\b`` (which also catches a key
written straight after Chinese text, ``密钥是sk-...``, where Unicode ``\\b`` sees no boundary). Only keywords
are case-insensitive: RE2 folds 'ſ' into 's' and the Kelvin sign into 'k' there, so SQL masks a few odd
spellings of a keyword that Python does not; a value's characters are matched case-sensitively in both.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb
    import polars as pl

MASK = "[REDACTED]"
_WS = r"[ \t\n\r\f\v]"
_Q = r"""\\?["']?"""  # an optional quote, maybe escaped: secrets sit inside JSON strings too (tool arguments)
_SNIPPET_EDGE = " \t\r\n\"'`:=,;()[]{}"  # what may surround the masks of a snippet that is dropped
_TOK = r"[A-Za-z0-9_\-]"
_NAME = r"[A-Za-z0-9_.\-]*"  # the rest of a variable's name around a keyword: DB_PASSWORD, aws_secret_access_key
_KEEP, _KEEP_BOTH = r"\1" + MASK, r"\1" + MASK + r"\2"
# (pattern, replacement), applied in this order: the same shapes as ingest's rules (forensics.kernel.secret_rules), in the
# syntax both engines read; a token's prefix with 8 characters after it is masked (a key cut short by a title)
_RULES: tuple[tuple[str, str], ...] = (
    # an unterminated key runs to the end of the text, or of the JSON string it sits in
    (
        r"""(?s:-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"""
        r"""|[^"]*))""",
        MASK,
    ),
    (rf"\bsk-(?:proj|ant|svcacct|admin)-{_TOK}{{8,}}", MASK),
    (r"\bsk-(?:live-|test-)?[A-Za-z0-9_\-]{20,}", MASK),
    (r"\b(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{8,}", MASK),
    (r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{12,}", MASK),
    (r"\bgh[pousr]_[A-Za-z0-9_]{8,}", MASK),
    (r"\bgithub_pat_[A-Za-z0-9_]{8,}", MASK),
    (rf"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-{_TOK}{{8,}}", MASK),
    (r"\bxox[abposr]-[A-Za-z0-9\-]{8,}", MASK),
    (r"\bAIza[0-9A-Za-z_\-]{12,}", MASK),
    (rf"\beyJ{_TOK}{{8,}}\.{_TOK}*(?:\.{_TOK}*)?|\beyJ(?:hbGci|0eXAi){_TOK}*", MASK),  # a JWT, or its head
    (rf"\b((?i:bearer){_WS}+)[A-Za-z0-9._~+/\-]{{16,}}=*", _KEEP),
    (r"""((?i:authorization)["']?[ \t]*[:=][ \t]*["']?(?i:basic)[ \t]+)[A-Za-z0-9+/]{8,}=*""", _KEEP),
    # a password in a URL (scheme://user:password@host), the slashes maybe JSON-escaped
    (
        r"""\b([A-Za-z][A-Za-z0-9+.\-]*:(?:\\?/){2}[^ \t\n\r\f\v/?#:@"'<>\\]*:)[^ \t\n\r\f\v/?#"'<>\\]+(@[A-Za-z0-9\[])""",
        _KEEP_BOTH,
    ),
    (
        rf"\b({_NAME}(?i:key|secret|token|credential){_NAME}{_Q}{_WS}*[=:]{_WS}*{_Q})"
        rf"([A-Fa-f0-9]{{32,}}|[A-Za-z0-9+/_\-]{{24,}}={{0,2}})",
        _KEEP,
    ),
    (
        rf"""\b({_NAME}(?i:password|passwd|pwd|passphrase){_NAME}{_Q}{_WS}*[=:]{_WS}*{_Q})"""
        r"""([^ \t\n\r\f\v"',;\\　，；]+)""",
        _KEEP,
    ),
)
# per rule, text one of which any match contains (in the text folded to lower case when ``True``): a rule whose
# text is absent cannot match, so it is not run. Python's ``re`` finds no literal to skip ahead to in a pattern
# that starts with ``\b`` and scans every position instead: 17 such scans were 1.9 s of a 16 s report.
# tests/test_redaction_and_query.py holds this to the rules run one by one, on real and hostile text.
_NEEDS: tuple[tuple[tuple[str, ...], bool], ...] = (
    (("PRIVATE KEY",), False),
    (("sk-",), False),
    (("sk-",), False),
    (("k_live_", "k_test_"), False),
    (("AKIA", "ASIA", "ABIA", "ACCA"), False),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), False),
    (("github_pat_",), False),
    (("gl",), False),
    (("xox",), False),
    (("AIza",), False),
    (("eyJ",), False),
    (("bearer",), True),
    (("authorization",), True),
    ((":/", ":\\/"), False),
    (("key", "secret", "token", "credential"), True),
    (("pass", "pwd"), True),
)


def _either(*words: str) -> str:
    """``(?i:w1|w2|...)`` as alternatives that each start with a literal letter (``re`` finds those fast)."""
    return "(?:" + "|".join(f"{c}(?i:{w[1:]})" for w in words for c in (w[0], w[0].upper())) + ")"


# per rule, a pattern every match of it holds (the rule from its keyword or the scheme's colon on): a text where it
# finds nothing is not scanned by the rule. Python's ``re`` tries a pattern that starts with ``\b`` and a name, or with a
# case-insensitive group, at every position of a text (and backtracks over the name); a gate starts with a literal,
# or with alternatives that each start with one (a keyword's first letter, either case: ``re.ASCII`` folds no other
# letter into it), which ``re`` skips ahead to. Over a report page, which holds every rule's words and colons, the four
# rules' scans were 0.56 CPU s and their gates are some 0.08. tests/test_redaction_and_query.py holds them to the rules.
_GATES: tuple[str | None, ...] = (
    *(None,) * 7,
    rf"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-{_TOK}{{8}}",
    *(None,) * 5,
    r""":(?:\\?/){2}[^ \t\n\r\f\v/?#:@"'<>\\]*:[^ \t\n\r\f\v/?#"'<>\\]+@[A-Za-z0-9\[]""",
    rf"{_either('key', 'secret', 'token', 'credential')}{_NAME}{_Q}{_WS}*[=:]{_WS}*{_Q}[A-Za-z0-9+/_\-]{{24}}",
    rf"""{_either("password", "passwd", "pwd", "passphrase")}{_NAME}{_Q}{_WS}*[=:]{_WS}*{_Q}[^ \t\n\r\f\v"',;\\　，；]""",
)
_COMPILED = [
    (re.compile(p, re.ASCII), r, *need, re.compile(g, re.ASCII).search if g else None)
    for (p, r), need, g in zip(_RULES, _NEEDS, _GATES, strict=True)
]
ANY_SECRET = "|".join(f"(?:{p})" for p, _ in _RULES)  # one pass that tells whether any rule applies
# any rule's needed text (``_NEEDS``), in the text and in the text folded to lower case: one search each, so that a
# short text holding none (most of a report's strings: its metrics' values, its tables' cells) is given back without
# a check per rule (the 16 checks were 0.43 CPU s over the 37,158 strings of a report's metrics.json; these two,
# 0.05-0.07). Over a long text the substring checks cost less than the two searches: only a text shorter than
# ``_SHORT`` is searched first.
_SHORT = 500
_ANY_NEED = re.compile("|".join(re.escape(n) for needs, fold in _NEEDS if not fold for n in needs))
_ANY_NEED_FOLDED = re.compile("|".join(re.escape(n) for needs, fold in _NEEDS if fold for n in needs))
# What a source wrote where it redacted text before we saw it: log sanitizers' [REDACTED_TEXT len=3021 sha=...],
# [redacted_text len=.. sha256=..], [REDACTED_ARGUMENTS], [REDACTED_BATCH], bare [REDACTED] (this module's own mask
# too) and the <redacted> form. The text is gone: it is never a term, a keyword or evidence.
PLACEHOLDER = r"\[(?i:redacted)\w*(?:[ :=][^\]\n]{0,200})?\]|<(?i:redacted)\w*(?:[ :=][^>\n]{0,200})?>"


def redact(text: str) -> str:
    """Mask every secret found in ``text``."""
    if not text:
        return text
    folded = text.lower()
    if len(text) < _SHORT and _ANY_NEED.search(text) is None and _ANY_NEED_FOLDED.search(folded) is None:
        return text  # no rule's needed text: no rule is run (below), the text is as it was
    for rx, mask, needs, fold, gate in _COMPILED:
        hay = folded if fold else text
        for n in needs:  # (a loop, not ``any`` over a generator: 16 rules a text)
            if n in hay:
                break
        else:
            continue
        if gate is None or gate(text):
            masked = rx.sub(mask, text)
            if masked != text:
                text, folded = masked, masked.lower()
    return text


def redact_snippet(text: str) -> str:
    """Like redact, but a snippet that held nothing except secrets becomes empty (dropped)."""
    out = redact(text)
    if out != text and not out.replace(MASK, "").strip(_SNIPPET_EDGE):
        return ""
    return out


def redact_bytes(raw: bytes | None) -> bytes | None:
    """Mask secrets in raw bytes that may not be UTF-8 (quarantined lines); every other byte is kept."""
    if raw is None:
        return None
    return redact(raw.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def redact_value(v: Any) -> Any:
    """``redact_snippet`` through any value a query returns: text, bytes, lists and structs (dicts) of them."""
    if isinstance(v, str):
        return redact_snippet(v)
    if isinstance(v, (bytes, bytearray)):
        return redact_bytes(bytes(v))
    if isinstance(v, dict):
        return {k: redact_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [redact_value(x) for x in v]
    if hasattr(v, "to_list"):  # polars hands a list cell to map_elements as a Series
        return redact_value(v.to_list())
    return v


def mask_frame(df: pl.DataFrame) -> pl.DataFrame:
    """Every text and byte cell of ``df`` masked, inside lists and structs too (term lists hold identifiers)."""
    import polars as pl

    cols = [
        pl.col(c).map_elements(redact_snippet, return_dtype=pl.String)
        if t == pl.String
        else pl.col(c).map_elements(redact_value, return_dtype=t)
        for c, t in df.schema.items()
        if holds(t, (pl.String, pl.Binary))
    ]
    return df.with_columns(cols) if cols else df


def holds(t: Any, leaves: tuple[Any, ...]) -> bool:
    """Whether values of polars type ``t`` hold one of ``leaves`` anywhere, inside lists and structs too."""
    import polars as pl

    if t in leaves:
        return True
    if isinstance(t, (pl.List, pl.Array)):
        return holds(t.inner, leaves)
    return isinstance(t, pl.Struct) and any(holds(f.dtype, leaves) for f in t.fields)


def install_sql(con: duckdb.DuckDBPyConnection) -> None:
    """Define the masking macros on ``con``, for whole tables, where a Python call per row would cost minutes:

    - ``forensics_masked(text)``: ``redact`` (each secret replaced by the mask, nothing else touched: JSON
      stays JSON); what an export writes;
    - ``forensics_scrubbed(text)``: secrets and the placeholders of text a source redacted (``PLACEHOLDER``)
      taken out (a space each); what analyzers cut terms from, so neither becomes a term of its own;
    - ``forensics_redact(text)``: ``redact_snippet``; for a user's SQL.
    A text no rule matches (one RE2 pass decides) comes back as it was."""
    chain = "s"
    for pattern, replacement in _RULES:
        chain = f"regexp_replace({chain}, {_literal(pattern)}, {_literal(replacement)}, 'g')"
    any_secret = _literal(ANY_SECRET)
    con.execute(
        f"CREATE OR REPLACE TEMP MACRO forensics_masked(s) AS "
        f"CASE WHEN regexp_matches(s, {any_secret}) THEN {chain} ELSE s END"
    )
    # no lambda binding the masked text once: DuckDB runs a lambda per row, and that cost 15 us a row, ten times the
    # rest of a macro on short texts (tool calls' targets). So the chain is written out where its result is needed:
    # it runs only on a text a rule matches. Such a text comes out of the chain holding the mask, so the
    # placeholders' pass is due exactly when a rule matches or the text says "redacted".
    placeholder = _literal(PLACEHOLDER)
    con.execute(
        f"CREATE OR REPLACE TEMP MACRO forensics_scrubbed(s) AS "
        f"CASE WHEN regexp_matches(s, {any_secret}) THEN regexp_replace({chain}, {placeholder}, ' ', 'g') "
        f"WHEN contains(lower(s), 'redacted') THEN regexp_replace(s, {placeholder}, ' ', 'g') ELSE s END"
    )
    mask, edge = _literal(MASK), _literal(_SNIPPET_EDGE)
    con.execute(
        f"CREATE OR REPLACE TEMP MACRO forensics_redact(s) AS "
        f"CASE WHEN regexp_matches(s, {any_secret}) THEN (CASE WHEN {chain} <> s AND "
        f"trim(replace({chain}, {mask}, ''), {edge}) = '' THEN '' ELSE {chain} END) ELSE s END"
    )


def _literal(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"
