"""Find credentials in text with a maintained rule set, so ingest can mask them before anything is stored.

The rules are detect-secrets' (Yelp; its plugins' regular expressions: AWS, GitHub, GitLab, Stripe, Slack,
JWT, private keys, basic-auth URLs, SendGrid, Twilio, npm, PyPI, ...), widened where a log differs from a
repository: a match runs on over the token's characters (a Stripe key is longer today than the plugin's 24
characters), a private key block is masked whole (the plugin sees its BEGIN line), and a few shapes are added
that the plugins miss or only see whole (OpenAI and Anthropic keys, a token cut short by a title or a length
limit, a bearer token, a password in any URL). Entropy is used with care: only the value of an assignment
whose name says credential (``api_key = ...``, ``AWS_SECRET_ACCESS_KEY=...``, ``"token": "..."``) is judged by
it, so hashes, UUIDs, git SHAs and base64 images in ordinary text are left alone.

detect-secrets is imported on the first scan, not with this module (it costs half a second).
Every rule also has an RE2 form (a superset: lookarounds dropped, back-references widened) so that a column
of a million messages is filtered in Rust (``prefilter``: four patterns, run by polars; the keyword rule's texts
narrowed by ``keyword_kept`` to those where a value it keeps can be) and only the texts that may hold a secret are
scanned here, by the rules whose pattern matched; a rule is not run over a text holding none of the strings one of
which every match of it holds (``required``, read from its parsed pattern). A find is reported by its span, its
kind and a fingerprint: a slow, salted hash of the value (PBKDF2), short enough to say "the same secret again" and
never the value.
"""

from __future__ import annotations

import bisect
import hashlib
import importlib
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MASK = "[REDACTED]"  # the output mask's (forensics.kernel.redact): a masked text reads the same wherever it was masked
SKIP_PLUGINS = {"IPPublicDetector"}  # a public IP address is no credential (and logs are full of them)
VALUE_GROUP = {
    "BasicAuthDetector",
    "CloudantDetector",
    "IbmCosHmacDetector",
    "IbmCloudIamDetector",
    "SoftlayerDetector",
    "NpmDetector",
    "AWSKeyDetector",
}  # their group 1 is the secret itself
KIND_OF = {"AWSKeyDetector": ("aws-access-key", "aws-secret-key")}  # one kind per regex where they differ
TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-+/=]*")  # what a token match runs on over (a key longer than the rule)
SALT = b"forensics secrets_found v1"
FIXED_START = re.compile(r"\(\?:(?:[A-Za-z0-9\-:]|\\\.)")
ROUNDS = 20_000  # a fingerprint costs ~5 ms: a guessed password is slow to confirm (secrets are few)


@dataclass(frozen=True)
class Rule:
    kind: str
    rx: re.Pattern[str]
    re2: str  # an RE2 superset of rx, for the column filter
    group: int = 0  # the group that is the secret (0: the whole match)
    extend: bool = True  # run the match on over token characters
    check: str = ""  # "password" | "credential": the value is judged (see _keep)


@dataclass(frozen=True, slots=True)
class Find:
    start: int
    end: int
    kind: str
    fingerprint: str


LEADING = re.compile(
    r"""\\b|\\[dws](?:\{\d+(?:,\d*)?\}|[*+?])?|\[(?:[^\]\\]|\\.)*\](?:\{\d+(?:,\d*)?\}|[*+?])?"""
    r"""|\((?:\?:)?(?:[^()\\]|\\.)*\|\)|\(\?:\\s\|[^()]*\^\)"""
)


def _re2(pattern: str, flags: int) -> str:
    """An RE2 pattern matching wherever the Python one does: lookarounds dropped, back-references widened,
    repeats capped at RE2's 1000, and what may open a match without a fixed character (``\\b``, a character
    class, an optional group) cut off the front, so that RE2 can skip to a literal: ten times faster."""
    p = re.sub(r"\(\?<?[=!](?:[^()\\]|\\.|\([^()]*\))*\)", "", pattern)
    p = re.sub(r"\(\\\d\)|\\[1-9]", "(?s:.*)", p)
    p = re.sub(r"\{(\d+),(\d{4,})\}", lambda m: "{" + m.group(1) + ",1000}", p)
    while (m := LEADING.match(p)) and m.end() < len(p):
        p = p[m.end() :]
    return f"(?i:{p})" if flags & re.IGNORECASE else f"(?:{p})"


def _rule(kind: str, pattern: str, flags: int = 0, **kw: object) -> Rule:
    """An own rule; ASCII ``\\b``, as RE2's: a key straight after Chinese text (密钥是sk-...) is at a boundary."""
    return Rule(kind, re.compile(pattern, flags | re.ASCII), _re2(pattern, flags), **kw)  # type: ignore[arg-type]


def _slug(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def _plugin_rules() -> list[Rule]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    out = []
    mapping: dict[str, type] = get_mapping_from_secret_type_to_class()
    for secret_type, cls in sorted(mapping.items()):
        if not issubclass(cls, RegexBasedDetector) or cls.__name__ in SKIP_PLUGINS:
            continue
        kinds = KIND_OF.get(cls.__name__, ())
        denylist: list[re.Pattern[str]] = list(getattr(cls, "denylist"))  # noqa: B009 - a property on the class
        for i, rx in enumerate(denylist):
            kind = kinds[i] if i < len(kinds) else _slug(secret_type)
            group = 1 if cls.__name__ in VALUE_GROUP and rx.groups else 0
            if kind == "private-key":
                continue  # the whole block, below
            out.append(Rule(kind, rx, _re2(rx.pattern, rx.flags), group, extend=not group))
    return out


_W = r"[ \t]*"


@lru_cache(maxsize=1)
def keyword_rule() -> Rule:
    """detect-secrets' keyword detector, as one rule: a name holding one of its words (and token, credential,
    access key, pass, auth), its closing quote (maybe JSON-escaped), an assignment, an opening quote, the
    value up to a quote or a space. The match starts at the word: the rest of the name is read back in
    _keep. It is matched on the text lower-cased (Python's case-insensitive alternation is ten times slower)."""
    from detect_secrets.plugins.keyword import DENYLIST

    key = (
        "(?P<key>(?:" + "|".join(DENYLIST) + r"|token|credential|access_?key|api-key|storage_?key|pass|auth)"
        r"[A-Za-z0-9_.\-]*)"
    )
    pattern = key + ASSIGNED + r"""(?P<value>[^\s"'`\\]{1,200})"""
    return Rule("secret-keyword", re.compile(pattern), _re2(pattern, re.IGNORECASE), extend=False, check="keyword")


ASSIGNED = r"""(?:\\?["'`\]]){0,2}""" + _W + r"(?::=|=>|==?|:)" + _W + r"""(?P<q>\\?["'`])?"""  # after the name
PLAIN = r"""[^\s"'`\\(),;{}\[\]]"""  # what a kept credential value is made of (``_high_entropy``'s CODE aside from =)
DIGIT = r"(?-i:[0-9\x{80}-\x{10FFFF}])"  # what str.isdigit may call a digit, and more
LETTER = r"(?-i:[A-Za-z\x{80}-\x{10FFFF}])"  # what str.isalpha may call a letter, and more


@lru_cache(maxsize=1)
def keyword_kept() -> tuple[str, str, str]:
    """Three patterns (Rust's regex) that say more narrowly where the keyword rule may keep a match (``_keep``), for
    the texts its prefilter pattern flagged: a text where ``(a and b) or c`` holds. A kept credential's value
    (``_high_entropy``) starts with 16 characters free of code (a), and holds a digit and a letter before any code
    (b); a kept password's (``_password_like``) has 4 characters at least, under a name holding a password word
    (c). Each one matches wherever its half of ``_keep`` can keep something, whatever else the text holds: a
    superset, so the scan finds the same."""
    key = keyword_rule().rx.pattern[: keyword_rule().rx.pattern.index(ASSIGNED)]
    name = "[A-Za-z0-9_.\\-]*"
    mixed = f"(?:{PLAIN}*{DIGIT}{PLAIN}*{LETTER}|{PLAIN}*{LETTER}{PLAIN}*{DIGIT})"
    a, b, c = (
        rust_classes(_re2(p, re.IGNORECASE))
        for p in (
            key + ASSIGNED + PLAIN + "{16}",
            key + ASSIGNED + mixed,
            name + "(?:pass|pwd|contrase)" + name + ASSIGNED + r"""[^\s"'`\\]{4}""",
        )
    )
    return a, b, c


NAME_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _own_rules() -> list[Rule]:
    tok = r"[A-Za-z0-9_\-]"
    return [
        _rule(
            "private-key",
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?-----END[A-Z0-9 ]*PRIVATE KEY"
            r"(?: BLOCK)?-----|[^\"]*)",
            extend=False,
        ),
        _rule("private-key", r"PuTTY-User-Key-File-\d(?s:.*?Private-MAC: *[0-9a-fA-F]+|[^\"]*)", extend=False),
        # the vendors' key prefixes, also cut short (8 characters after a prefix are enough to mask)
        _rule("openai-key", rf"\bsk-(?:proj|svcacct|admin|None)-{tok}{{8,}}"),
        _rule("anthropic-key", rf"\bsk-ant-(?:api|admin|oat|ort)\d\d-{tok}{{8,}}|\bsk-ant-{tok}{{12,}}"),
        _rule("openai-key", r"\bsk-[A-Za-z0-9]{20,}"),
        _rule("stripe-access-key", r"\b(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{8,}"),
        _rule("github-token", r"\bgh[pousr]_[A-Za-z0-9_]{8,}|\bgithub_pat_[A-Za-z0-9_]{8,}"),
        _rule("gitlab-token", rf"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-{tok}{{8,}}"),
        _rule("aws-access-key", r"\b(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{8,}"),
        _rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{8,}"),
        _rule("google-api-key", r"\bAIza[0-9A-Za-z_\-]{12,}"),
        _rule("hugging-face-token", r"\bhf_[A-Za-z]{30,}"),
        # the providers' documented prefixes the plugins lack (issue 45; bench/secret_recall.py measures each)
        _rule("openai-key", r"\bsk-or-v1-[0-9a-f]{16,}"),  # OpenRouter
        _rule("groq-key", r"\bgsk_[A-Za-z0-9]{20,}"),
        _rule("replicate-token", r"\br8_[A-Za-z0-9]{20,}"),
        _rule("perplexity-key", r"\bpplx-[A-Za-z0-9]{20,}"),
        _rule("xai-key", r"\bxai-[A-Za-z0-9]{20,}"),
        _rule("google-oauth-secret", r"\bGOCSPX-[A-Za-z0-9_\-]{16,}"),
        _rule("alibaba-access-key", r"\bLTAI[A-Za-z0-9]{12,}"),
        _rule("digitalocean-token", r"\bdo[por]_v1_[a-f0-9]{16,}"),
        _rule("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?"),
        _rule("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
        _rule("terraform-token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{20,}"),
        _rule("pulumi-token", r"\bpul-[a-f0-9]{40}"),
        _rule("doppler-token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{20,}"),
        _rule("flyio-token", r"\bfo1_[A-Za-z0-9_\-]{20,}|\bfm[12][ar]?_[A-Za-z0-9+/]{40,}"),
        _rule("atlassian-token", r"\bATATT3[A-Za-z0-9_\-=]{20,}"),
        _rule("postman-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
        _rule("mailgun-key", r"\bkey-[a-f0-9]{32}\b"),
        _rule("notion-token", r"\bntn_[0-9]{11}[A-Za-z0-9]{20,}|\bsecret_[A-Za-z0-9]{43}\b"),
        _rule("age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{20,}"),
        _rule("npm-tokens", r"\bnpm_[A-Za-z0-9]{20,}"),
        _rule("linear-key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{20,}"),
        _rule("sentry-token", r"\bsntry[us]_[A-Za-z0-9_=+/]{20,}"),
        _rule("stripe-access-key", r"\bwhsec_[A-Za-z0-9+/]{20,}"),
        _rule(
            "square-oauth-secret", r"(?<![A-Za-z0-9+/])(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_\-]{22,}(?![A-Za-z0-9+/=])"
        ),
        _rule("shopify-token", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
        # a JWT, or what is left of one: its header is base64 of {"alg" or {"typ"
        _rule(
            "json-web-token",
            r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]*)?"
            r"|\beyJ(?:hbGci|0eXAi)[A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]*){0,2}",
        ),
        _rule("bearer-token", r"\b(?i:bearer)[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)", group=1),
        _rule(
            "basic-auth-credentials",
            r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:basic)[ \t]+"
            r"([A-Za-z0-9+/]{8,}=*)",
            group=1,
        ),
        # a password in any URL (the plugin's stops at reserved characters: p@ss!word is one password here)
        _rule(
            "basic-auth-credentials",
            r"\b[A-Za-z][A-Za-z0-9+.\-]*:(?:\\?/){2}[^\s/?#:@\"'<>\\]*:"
            r"([^\s/?#\"'<>\\]+)@[A-Za-z0-9\[]",
            group=1,
            extend=False,
            check="password",
        ),
        keyword_rule(),
    ]


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    return tuple(_own_rules() + _plugin_rules())


@lru_cache(maxsize=1)
def groups() -> tuple[tuple[Rule, ...], ...]:
    """The rules in three groups: the keyword rule (it matches often), the rules whose RE2 form opens with a
    fixed character (RE2 skips to it: a big alternation of them is still fast), and the others."""
    rest = [r for r in rules() if r is not keyword_rule()]
    literal = tuple(r for r in rest if FIXED_START.match(r.re2))
    return (keyword_rule(),), literal, tuple(r for r in rest if r not in literal)


@lru_cache(maxsize=1)
def prefilter() -> tuple[str, ...]:
    """A pattern per group of rules, matching every text a rule of the group may find something in (all rules in
    one pattern, the counted repeats of some blow up the automaton and it runs 6 times slower). Written for RE2,
    run by polars (Rust's regex, linear-time too) with RE2's meaning kept: ``rust_classes``."""
    return tuple(rust_classes(p) for p in (*("|".join(dict.fromkeys(r.re2 for r in g)) for g in groups()), DECODER_RE2))


# RE2's Perl classes are ASCII; Rust's are Unicode, and a Unicode \b stops its lazy DFA on the first non-ASCII
# character of a text (the slow fallback took 43 s where RE2 took 0.2 on 15,000 texts of the shared agent logs)
_CLASSES = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\f\\r "}


def rust_classes(pattern: str) -> str:
    """``pattern`` (RE2 syntax) for Rust's regex with RE2's meaning: ``\\d \\w \\s`` spelled as their ASCII sets
    (inside a class too), ``\\b \\B`` as ASCII word boundaries."""
    out, i, depth = [], 0, 0  # depth: inside a character class
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            if e.lower() in _CLASSES:
                ascii_set = _CLASSES[e.lower()]
                if depth:
                    if e.isupper():
                        raise ValueError(f"a negated class inside a class: {pattern!r}")
                    out.append(ascii_set)
                else:
                    out.append(f"[{'^' if e.isupper() else ''}{ascii_set}]")
            elif e in "bB" and not depth:
                out.append(f"(?-u:\\{e})")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[" and not depth:
            depth = 1
            out.append(c)
            i += 1
            if pattern[i : i + 1] == "^":
                out.append("^")
                i += 1
            if pattern[i : i + 1] == "]":  # a literal ] first in a class
                out.append("\\]")
                i += 1
            continue
        if c == "]" and depth:
            depth = 0
        out.append(c)
        i += 1
    return "".join(out)


PASSWORD_KEY = re.compile(r"pass(?:word|wd|phrase|wort|e)?(?![a-z])|pwd|contrase", re.I)
CREDENTIAL_KEY = re.compile(
    r"secret|token|credential|(?:api|auth|service|account|db|database|priv|private|client|storage"
    r"|access|signing|encryption|master)[_\-.]?key|apikey|auth(?![a-z])",
    re.I,
)
COUNT_KEY = re.compile(r"tokens|tokeni[sz]|_count|_len|max_|num_|count$|usage|limit|budget|bypass", re.I)
PLACEHOLDERS = {
    "none",
    "null",
    "nil",
    "true",
    "false",
    "str",
    "string",
    "bytes",
    "int",
    "required",
    "optional",
    "undefined",
    "password",
    "passwd",
    "secret",
    "token",
    "hidden",
    "redacted",
    "changeme",
    "example",
    "xxx",
    "dummy",
    "test",
    "value",
    "your_password",
    "empty",
    "unset",
    "env",
    "default",
}


def _keep(rule: Rule, m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """The span and kind to mask for a judged rule's match, or None when its value is no credential."""
    if rule.check == "password":  # a password in a URL: unless a placeholder
        value = m.group(rule.group)
        return (m.start(rule.group), m.end(rule.group), rule.kind) if _password_like(value, strict=False) else None
    begin = m.start()
    while begin and text[begin - 1] in NAME_CHARS:
        begin -= 1
    key, value = text[begin : m.end("key")], text[m.start("value") : m.end("value")]  # matched lower-cased
    if m.group("q") is None:
        value = value.rstrip(",;)}]>")
    if begin and text[begin - 1] in "?&":
        value = value.split("&", 1)[0]  # a URL's query parameter ends at the next one
    start = m.start("value")
    if COUNT_KEY.search(key) or not value or text[max(0, begin - 3) : begin].endswith(("/", "@")):
        return None  # a count, not a credential; or a URL's user name (the URL rule judges its password)
    if PASSWORD_KEY.search(key) and not CREDENTIAL_KEY.search(key):
        if not _password_like(value, strict=True):
            return None
        return start, start + len(value), "password"
    if not CREDENTIAL_KEY.search(key) or not _high_entropy(value):
        return None
    from detect_secrets.filters.heuristic import is_indirect_reference

    line_start = text.rfind("\n", 0, m.start()) + 1
    if is_indirect_reference(text[line_start : m.end()]):
        return None
    return start, start + len(value), "aws-secret-key" if "aws" in key.lower() else "secret-keyword"


DECIMAL = re.compile(r"\d+\.\d+")
# letters only, like the identifier rule below: words joined by a hyphen or a slash (assertion/expectation), or an
# English contraction, its apostrophe typographic (I’ll, don’t: the value stops at an ASCII quote, not at ’)
WORDS = re.compile(r"[A-Za-z]+(?:[/-][A-Za-z]+)+|[A-Za-z]+(?:['’ʼ][A-Za-z]+)+")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\)?)?")


def _password_like(value: str, strict: bool) -> bool:
    """A literal password, not a placeholder, a variable, a type or a path."""
    from detect_secrets.filters.heuristic import is_templated_secret

    v = value.strip(".")
    if (
        len(v) < 4
        or v.lower() in PLACEHOLDERS
        or is_templated_secret(v)
        or v[0] in "$%{<*/~#("
        or set(v) <= set("*xX.-_")
    ):
        return False
    if not strict:
        return True
    if DECIMAL.fullmatch(v) or WORDS.fullmatch(v):
        return False  # a rate (pass_rate: 0.6) or words (pass_rate = assertion/expectation ..., "a docs-only pass: I’ll
        # locate"): a PIN stays one
    if "(" in v or "[" in v or v.startswith(("os.", "self.", "env.", "process.", "config.", "settings.")):
        return False
    if IDENTIFIER.fullmatch(v) and (not any(c.isdigit() for c in v) or "_" in v.strip("_")):
        return False  # a variable (password: newPassword, PASS: test_case_3), or a password of letters only: kept
    return any(c.isalnum() for c in v)


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


CODE = re.compile(r"[(),;{}\[\]]|=(?!=*$)")  # a call or an assignment in the value: code, not a key (base64 ends in =)
PATH = re.compile(r"(?:~|\.{1,2})?(?:/[\w.\-@~]+)+/?")  # /usr/local/bin, ./src/app.py (base64 has + or =)


def _high_entropy(value: str) -> bool:
    """A random-looking value: long, letters and digits, not a sequence; hex needs less per character."""
    from detect_secrets.filters.heuristic import is_potential_uuid, is_sequential_string

    if (
        len(value) < 16
        or is_sequential_string(value)
        or PATH.fullmatch(value)
        or value.count(".") > 2
        or CODE.search(value)
    ):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    if re.fullmatch(r"[0-9a-fA-F\-]+", value):
        return len(value) >= 32 or is_potential_uuid(value)
    return entropy(value) >= 3.5


@lru_cache(maxsize=4096)
def fingerprint(value: str) -> str:
    """A short, slow, salted hash of a secret: equal for the same secret anywhere, never the value."""
    return hashlib.pbkdf2_hmac("sha256", value.encode("utf-8", "surrogateescape"), SALT, ROUNDS)[:6].hex()


WORD = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def scan(text: str, only: list[int] | None = None) -> list[Find]:
    """The secrets in ``text``: non-overlapping spans in order, each with its kind and fingerprint. ``only``:
    the indices of the groups (``groups``, then the decoders' group) whose prefilter matched, when the caller
    ran it. Besides the text as it stands, the secrets are looked for in what it encodes (a percent-encoded
    URL, base64 in a data URL) and across a line a terminal wrapped (``_views``): a find there masks the
    characters that encode it, and its fingerprint is the decoded value's (one secret, one fingerprint)."""
    spans = _spans(text, only)
    if only is None or DECODERS in only:
        for view, where in _views(text):
            for start, end, kind, _ in _spans(view, None):
                lo, hi = where(start, end)
                if hi > lo:
                    spans.append((lo, hi, kind, view[start:end]))
    spans.sort(key=lambda s: (s[0], -s[1]))
    merged: list[tuple[int, int, str, str | None]] = []
    for span in spans:
        if merged and span[0] < merged[-1][1]:
            s, e, k, v = merged[-1]
            merged[-1] = (s, max(e, span[1]), k, v if v is not None or span[3] is None else span[3])
        else:
            merged.append(span)
    return [Find(s, e, k, fingerprint(v if v is not None else text[s:e])) for s, e, k, v in merged]


def lowered(text: str) -> str:
    """What the keyword rule runs on: ``text`` lower-cased, each character where it was (ASCII only when a
    character's lower case is longer, İ)."""
    subject = text.lower()
    return subject if len(subject) == len(text) else text.translate(ASCII_LOWER)


def _spans(text: str, only: list[int] | None) -> list[tuple[int, int, str, str | None]]:
    """The rules' finds in ``text`` as it stands: (start, end, kind, None); overlapping, unordered."""
    spans: list[tuple[int, int, str, str | None]] = []
    keyword = keyword_rule()
    for rule, needs in _plan(None if only is None else tuple(only)):
        subject = text if rule is not keyword else lowered(text)
        if needs is not None and not any(n in subject for n in needs):
            continue  # no match can be without one of them (looked for where the pattern runs): nothing to scan
        for m in rule.rx.finditer(subject):
            if rule.check:
                got = _keep(rule, m, text)
                if got is None:
                    continue
                start, end, kind = got
            else:
                start, end, kind = m.start(rule.group), m.end(rule.group), rule.kind
                if rule.extend:
                    end = TOKEN_CHARS.match(text, end).end()  # type: ignore[union-attr]
                start, end = _trim(text, start, end)
                if start and text[start - 1] in WORD:
                    continue  # inside a longer word or id (a plugin's regex is not anchored): not a token
                if start and text[start - 1] in "-_+" and _inside_blob(text, start - 1):
                    continue  # a prefix met by chance inside a random base64url blob (an encrypted reasoning item)
            if end - start >= 4 and not _example(text[start:end]):
                spans.append((start, end, kind, None))
    return spans


@lru_cache(maxsize=64)
def _plan(only: tuple[int, ...] | None) -> tuple[tuple[Rule, tuple[str, ...] | None], ...]:
    """The rules of the chosen groups in the order ``_spans`` runs them (a named kind first, the keyword rule last),
    each with its ``required`` strings: read once, not per text (a pattern's hash is not kept: 4 µs a call)."""
    chosen = [g for i, g in enumerate(groups()) if only is None or i in only]
    keyword = keyword_rule()
    return tuple((r, required(r.rx)) for r in sorted((r for g in chosen for r in g), key=lambda r: r is keyword))


@lru_cache(maxsize=256)
def required(rx: re.Pattern[str]) -> tuple[str, ...] | None:
    """Strings of which every match of ``rx`` holds one (None: none found): a text holding none of them has no
    match, and ``str.__contains__`` tells so far faster than ``finditer`` (most rules open with ``\\b``, so Python's
    engine tries every position). Read from the parsed pattern: a run of literal characters that every match
    passes through, or one from each branch of an alternation every match takes. Read as nothing (no string
    from there): a pattern matched without regard to case, a group with flags of its own (``(?i:...)``, ``(?s:...)``),
    a character class, a repeat that may be absent (``?``, ``*``, ``{0,n}``), a lookaround (not in the match),
    a back-reference, a conditional, an atomic group or a possessive repeat."""
    if rx.flags & re.IGNORECASE:
        return None
    parser: Any = importlib.import_module("re._parser")  # the standard library's own parser (no stub: Any)
    try:
        return _needs(list(parser.parse(rx.pattern, rx.flags)), parser)
    except Exception:  # a pattern this Python compiled but parses otherwise: scanned as before
        return None


def _needs(items: list[tuple[Any, Any]], c: Any) -> tuple[str, ...] | None:
    """``required`` of a sequence of parsed items (``re._parser``'s (op, argument) pairs): of the candidates every
    match must hold (each run of literals; a group, a branch or a repeat of at least one), the one whose shortest
    string is longest."""
    if len(items) == 1 and items[0][0] is c.BRANCH:
        alts = [_needs(list(a), c) for a in items[0][1][1]]
        return None if any(a is None for a in alts) else tuple(dict.fromkeys(x for a in alts for x in a or ()))
    found: list[tuple[str, ...]] = []
    run: list[str] = []
    for op, av in [*items, (None, None)]:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            found.append(("".join(run),))
            run = []
        got = None
        if op is c.SUBPATTERN and not av[1] and not av[2]:  # a group with no flags of its own
            got = _needs(list(av[3]), c)
        elif op is c.BRANCH:
            got = _needs([(op, av)], c)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1:
            got = _needs(list(av[2]), c)
        if got:
            found.append(got)
    return max(found, key=lambda f: min(map(len, f)), default=None)


BLOB_RUN = re.compile(r"[A-Za-z0-9_\-+]{16,}$")


def _inside_blob(text: str, end: int) -> bool:
    """The 16 or more characters before ``end`` are a random-looking run of base64url: digits and both cases
    (a file name's words before a key, ``backup-ghp_...``, are not)."""
    m = BLOB_RUN.search(text, max(0, end - 64), end)
    if not m:
        return False
    run = m.group()
    return any(c.isdigit() for c in run) and any(c.isupper() for c in run) and any(c.islower() for c in run)


# what no real key holds: the providers' documentation examples and placeholders (AKIAIOSFODNN7EXAMPLE,
# sk-proj-xxxx..., ghp_1234567890abcdef..., xoxb-your-bot-token-here), each judged on the find's value
EXAMPLE = re.compile(
    r"example|your[_\-]|[_\-]here\b|dummy|placeholder|redacted|changeme|(.)\1{7}"
    r"|0123456|1234567|2345678|3456789|abcdefgh|bcdefghi|cdefghij",
    re.I,
)
KNOWN_EXAMPLES = (
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",  # jwt.io's HS256 example signature
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",  # and its claims
    "4eC39HqLyjWDarjtT1zdp7dc",
)  # Stripe's documented test key


def _example(value: str) -> bool:
    return bool(EXAMPLE.search(value)) or any(k in value for k in KNOWN_EXAMPLES)


DECODERS = 3  # the index of the decoders' group in ``prefilter()``, after the rules' three
# a percent-encoded token long enough to hold a key; base64 in a data URL; a long line a terminal wrapped in a token
# a run of URL characters (matched whole, in linear time: a pattern with ``%XX`` between two starred classes tried
# every start of a long run without one, quadratic on a hostile file) that holds a percent-escape
URL_RUN = re.compile(r"[A-Za-z0-9_\-.~%+/=:&?]{16,}")
ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
DATA_URL = re.compile(r"data:[\w/+.\-]*(?:;[\w=.\-]+)*;base64,([A-Za-z0-9+/]{16,}={0,2})")
DECODER_RE2 = (
    r"(?i:%3D[A-Za-z0-9_\-.]{12}|[A-Za-z0-9_\-.]{12}%2[6BF]|%2[BF][A-Za-z0-9]{12}"
    r"|;base64,[A-Za-z0-9+/]{16}|[^\n]{40}[A-Za-z0-9_\-+/=.]{7}[A-Za-z0-9_\-+/=]\n[A-Za-z0-9_\-+/=]{4})"
)
WRAP_MIN = 48  # the text's longest line, this long at least, ending in 8 token characters, the next starting with
# 4 and no assignment: maybe a line a terminal wrapped inside a key
DATA_MAX = 1 << 20  # base64 characters of one data URL decoded at most
TOKEN_END = re.compile(r"[A-Za-z0-9_\-+/=.]{7}[A-Za-z0-9_\-+/=]$")  # a JWT's dot inside, not a sentence's
TOKEN_START = re.compile(r"[A-Za-z0-9_\-+/=]{4}")
ASSIGNMENT = re.compile(
    r"[A-Za-z_][\w.\-]*[ \t]*(?::|=(?![=\s]|$))"
)  # the next line of an .env or a config: no continuation
Where = Callable[[int, int], tuple[int, int]]


def _views(text: str) -> list[tuple[str, Where]]:
    """What ``text`` encodes, each with the map from a span of it back to the characters of ``text`` that
    encode that span."""
    out: list[tuple[str, Where]] = []
    if "%" in text:
        for m in URL_RUN.finditer(text):
            if ESCAPE.search(m.group()):
                out.append(_percent(m.group(), m.start()))
    if ";base64," in text:
        for m in DATA_URL.finditer(text):
            got = _base64(m.group(1)[:DATA_MAX], m.start(1))
            if got:
                out.append(got)
    if "\n" in text:
        got = _unwrapped(text)
        if got:
            out.append(got)
    return out


def _percent(token: str, at: int) -> tuple[str, Where]:
    chars, starts = [], []
    i = 0
    while i < len(token):
        if token[i] == "%" and i + 2 < len(token) and re.fullmatch(r"[0-9A-Fa-f]{2}", token[i + 1 : i + 3]):
            chars.append(chr(int(token[i + 1 : i + 3], 16)))
            starts.append(i)
            i += 3
        else:
            chars.append(token[i])
            starts.append(i)
            i += 1
    starts.append(len(token))
    return "".join(chars), lambda s, e: (at + starts[s], at + starts[e])


def _base64(payload: str, at: int) -> tuple[str, Where] | None:
    """Base64 that decodes to text (a config, a script); an image or other bytes are no view."""
    import base64
    import binascii

    try:
        raw = base64.b64decode(payload[: len(payload) - len(payload) % 4] or "", validate=False)
        decoded = raw.decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if not decoded.isprintable() and not all(c.isprintable() or c in "\n\r\t" for c in decoded):
        return None
    return decoded, lambda s, e: (at + 4 * (s // 3), at + min(len(payload), 4 * ((e - 1) // 3 + 1)))


def _unwrapped(text: str) -> tuple[str, Where] | None:
    """The text with each line break a terminal may have put inside a token taken out (a long line ending in
    token characters, the next starting with them); None when there is none."""
    joins, pos = [], 0
    lines = text.split("\n")
    width = max(map(len, lines))  # a terminal wraps at its width: the wrapped line is the longest
    for i, line in enumerate(lines[:-1]):
        pos += len(line) + 1
        if (
            len(line) == width >= WRAP_MIN
            and TOKEN_END.search(line)
            and TOKEN_START.match(lines[i + 1])
            and not ASSIGNMENT.match(lines[i + 1])
        ):
            joins.append(pos - 1)  # the index of the break
    if not joins:
        return None
    view = "".join(text[a + 1 if n else 0 : b] for n, (a, b) in enumerate(zip([-1, *joins], [*joins, len(text)])))
    cuts = [j - n for n, j in enumerate(joins)]  # where a break was, in the view

    def where(s: int, e: int) -> tuple[int, int]:
        if not any(s < c < e for c in cuts):
            return 0, 0  # found in the text as it stands already
        return s + bisect.bisect_right(cuts, s), e - 1 + bisect.bisect_right(cuts, e - 1) + 1

    return view, where


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """A plugin's match without the separators some of them include (a leading space, a closing quote)."""
    while start < end and text[start] in " \t\r\n=:\"'":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'":
        end -= 1
    return start, end


def mask(text: str, finds: list[Find] | None = None) -> str:
    """``text`` with each find replaced by the mask."""
    finds = scan(text) if finds is None else finds
    if not finds:
        return text
    out, last = [], 0
    for f in finds:
        out += [text[last : f.start], MASK]
        last = f.end
    out.append(text[last:])
    return "".join(out)
