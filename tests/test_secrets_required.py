"""The scan skips a rule on a text that holds none of the strings every match of the rule holds
(``secret_rules.required``, read from the parsed pattern): on texts made from every rule's own pattern (random
strings each pattern matches, set in random context) every match holds one of them, and the scan finds what it
finds without the skip, find for find."""

from __future__ import annotations

import hashlib
import importlib
import random
import re
import string
from typing import Any

import polars as pl
import pytest

from forensics.kernel import secret_rules

P: Any = importlib.import_module("re._parser")
C: Any = importlib.import_module("re._constants")
CATEGORY = {
    C.CATEGORY_DIGIT: string.digits + "٣",
    C.CATEGORY_WORD: string.ascii_letters + string.digits + "_é",
    C.CATEGORY_SPACE: " \t\n",
    C.CATEGORY_NOT_SPACE: string.ascii_letters + "-./:",
    C.CATEGORY_NOT_DIGIT: string.ascii_letters + "-_.",
    C.CATEGORY_NOT_WORD: " -./:\n",
}
POOL = string.ascii_letters + string.digits + "-_./:=+@ \n\"'"


def _in(items: list[tuple[Any, Any]], rng: random.Random) -> str:
    negate = any(op is C.NEGATE for op, _ in items)
    chars = []
    for op, av in items:
        if op is C.LITERAL:
            chars.append(chr(av))
        elif op is C.RANGE:
            chars.extend(chr(c) for c in range(av[0], min(av[1], av[0] + 200) + 1))
        elif op is C.CATEGORY:
            chars.extend(CATEGORY.get(av, "x"))
    if negate:
        return rng.choice([c for c in POOL if c not in chars] or ["\x00"])
    return rng.choice(chars)


def _sample(items: Any, rng: random.Random) -> str:
    """A random string the parsed pattern ``items`` may match (assertions are left to the search that checks it)."""
    out = []
    for op, av in items:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(rng.choice([c for c in POOL if ord(c) != av]))
        elif op is C.ANY:
            out.append(rng.choice(POOL.replace("\n", "")))
        elif op is C.IN:
            out.append(_in(av, rng))
        elif op is C.BRANCH:
            out.append(_sample(rng.choice(av[1]), rng))
        elif op is C.SUBPATTERN:
            out.append(_sample(av[3], rng))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi = av[0], av[1]
            n = rng.randint(lo, min(hi, lo + 4) if hi != C.MAXREPEAT else lo + 4)
            out.extend(_sample(av[2], rng) for _ in range(n))
    return "".join(out)


def _texts(rule: secret_rules.Rule, n: int, rng: random.Random) -> list[str]:
    parsed = P.parse(rule.rx.pattern, rule.rx.flags)
    around = ["", " ", "\n", "key: ", '{"a": "', "x", "é", "ghp_", "sk-"]
    return [rng.choice(around) + _sample(parsed, rng) + rng.choice(around) for _ in range(n)]


@pytest.mark.parametrize(
    ("pattern", "flags", "needs"),
    [
        (r"\bxai-[A-Za-z0-9]{20,}", 0, ("xai-",)),
        (r"\bsk-(?:proj|svcacct)-[a-z]{8,}", 0, ("proj", "svcacct")),  # the branch's shortest is longer than sk-
        (r"(?:ab|cd)ef", 0, ("ab", "cd")),  # a tie: the first
        (r"x(?:ab|cd)+", 0, ("ab", "cd")),
        (r"(?:ab)?cd", 0, ("cd",)),
        (r"a(?:bc)*", 0, ("a",)),
        (r"[a-z]{3}", 0, None),
        (r"\bxai-", re.IGNORECASE, None),  # matched without regard to case: nothing to look for
        (r"(?i:xai)-", 0, ("-",)),  # the scoped group read as nothing; the literal after it still counts
        (r"(?i:xai)", 0, None),
        (r"ab|[cd]", 0, None),  # a branch without a literal
        (r"a|", 0, None),  # an empty branch
        (r"(?:ab|)cd", 0, ("cd",)),
        (r"(?:ab|c)d", 0, ("ab", "c")),
        # flags: global (inline too), scoped (a plain group inside one read as nothing), verbose, a scoped
        # case-sensitive group inside a case-insensitive pattern (still nothing)
        (r"(?i)xai-", 0, None),
        (r"xai", re.IGNORECASE | re.ASCII, None),
        (r"(?-i:xai)-", re.IGNORECASE, None),
        (r"a(?i:x(?:cdef))g", 0, ("a",)),
        (r"(?s:.*?-----END)x", 0, ("x",)),  # any scoped flag: the group is read as nothing
        (r"(?x) a b c", 0, ("abc",)),
        # repeats: at least once counts, at most (min 0) does not; possessive and atomic groups are read as nothing
        (r"(?:abc){0,2}d", 0, ("d",)),
        (r"(?:abc)*?d", 0, ("d",)),
        (r"(?:abc)?", 0, None),
        (r"(?:abc){2}d", 0, ("abc",)),
        (r"(?:abcde){1,}?f", 0, ("abcde",)),
        (r"(?:abcd)++e", 0, ("e",)),
        (r"(?>abcd)e", 0, ("e",)),
        (r"[a]bc", 0, ("abc",)),  # a one-character class is a literal
        # lookarounds are not in the match: never what it must hold
        (r"(?<=abc)def", 0, ("def",)),
        (r"(?<!abcdef)de", 0, ("de",)),
        (r"de(?=abcdef)", 0, ("de",)),
        (r"de(?!abcdef)", 0, ("de",)),
        (r"(?=abc)", 0, None),
        # back-references and conditionals are read as nothing (the group they name still counts)
        (r"(ab)c\1", 0, ("ab",)),
        (r"(\w+)\1", 0, None),
        (r"(a)?(?(1)bcde|fghi)j", 0, ("j",)),
        # Unicode literals, astral too
        ("密钥是sk-", 0, ("密钥是sk-",)),
        ("contraseña", 0, ("contraseña",)),
        ("\U0001f511key", 0, ("\U0001f511key",)),
    ],
)
def test_required_reads_what_every_match_holds(pattern: str, flags: int, needs: tuple[str, ...] | None) -> None:
    assert secret_rules.required(re.compile(pattern, flags)) == needs


def test_every_match_of_every_rule_holds_what_it_requires() -> None:
    rng = random.Random(46)
    rules = [r for g in secret_rules.groups() for r in g]
    matched = dict.fromkeys(range(len(rules)), 0)
    for i, rule in enumerate(rules):
        needs = secret_rules.required(rule.rx)
        assert needs is None or all(needs), rule.kind
        for text in _texts(rule, 300, rng):
            for m in rule.rx.finditer(_subject(rule, text)):
                matched[i] += 1
                assert needs is None or any(n in m.group(0) for n in needs), (rule.kind, m.group(0), needs)
    assert len(rules) == 79 and sum(secret_rules.required(r.rx) is not None for r in rules) == 66  # 13 have none
    assert min(matched.values()) >= 100  # every rule reached by its own texts


def _cheap_fingerprints(monkeypatch: pytest.MonkeyPatch) -> None:
    """A find's fingerprint costs 5 ms (PBKDF2): the comparisons below key the value by a plain hash instead."""
    monkeypatch.setattr(
        secret_rules, "fingerprint", lambda v: hashlib.sha256(v.encode("utf-8", "surrogatepass")).hexdigest()
    )


def _skip_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_spans`` without the skip: every chosen rule runs on every text, as before."""
    plan = secret_rules._plan
    monkeypatch.setattr(secret_rules, "_plan", lambda only: tuple((r, None) for r, _ in plan(only)))


def test_the_skip_changes_no_find(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan with the skip and without it (``_skip_off``): the same finds, on texts made from
    every rule's pattern and mixes of several secrets, keywords and words."""
    _cheap_fingerprints(monkeypatch)
    rng = random.Random(7)
    rules = [r for g in secret_rules.groups() for r in g]
    texts = [t for r in rules for t in _texts(r, 40, rng)]
    texts += [" ".join(rng.sample(texts, 3)) for _ in range(2_000)]
    texts += ["token = " + t for t in texts[:500]] + ["", "中文 sk-", "task-1 ghp_x", "a:b.c"]
    fast = [secret_rules.scan(t) for t in texts]
    assert sum(map(len, fast)) > 1_000  # the texts hold finds of many kinds
    assert len({f.kind for found in fast for f in found}) >= 40
    _skip_off(monkeypatch)
    assert [secret_rules.scan(t) for t in texts] == fast


def _real_texts() -> list[str]:
    """The repository's secret corpora: bench/secrets_corpus.py's planted samples and near-misses (what
    bench/secret_recall.py scores), tests/test_secrets.py's shapes, the fixtures' planted secrets and the redaction
    tests' edges, the prefilter test's mixes of names, assignments and values; each also upper-cased, swapped in
    case, after a character whose lower case is longer (İ: the keyword rule's subject is then ASCII-lowered) and
    with the Kelvin sign and the long s for k and s (lower-cased to k; left as it is)."""
    from bench.secrets_corpus import corpus
    from tests import test_mask_prefilter, test_redaction_and_query, test_secrets

    texts = [s.text for s in corpus()] + test_secrets.TEXTS + test_secrets.ALL
    texts += list(test_redaction_and_query.SECRETS.values()) + test_redaction_and_query.EDGES
    texts += test_mask_prefilter._mixes(6_000)
    variants = [t.upper() for t in texts] + [t.swapcase() for t in texts] + ["İ " + t for t in texts]
    variants += [t.replace("k", "\u212a").replace("s", "\u017f") for t in texts]
    return texts + variants


def _subject(rule: secret_rules.Rule, text: str) -> str:
    """The string ``_spans`` runs ``rule`` on (and looks for its needed strings in)."""
    return secret_rules.lowered(text) if rule is secret_rules.keyword_rule() else text


def test_every_rule_on_the_secret_corpora() -> None:
    """Every rule of the rule set, on every text of the secret corpora (as ``_spans`` runs it: the keyword rule on
    the lower-cased text): wherever the rule matches, each match holds one of its needed strings, so a text without
    them has no match to skip. The corpora reach most rules."""
    texts = _real_texts()
    rules = secret_rules.rules()
    matched: dict[str, int] = {}
    for rule in rules:
        needs = secret_rules.required(rule.rx)
        for text in texts:
            subject = _subject(rule, text)
            for m in rule.rx.finditer(subject):
                matched[rule.rx.pattern] = matched.get(rule.rx.pattern, 0) + 1
                assert needs is None or any(n in m.group(0) for n in needs), (rule.kind, m.group(0), needs)
    assert len(texts) == 33_215
    assert len(matched) == 56  # of the 79 patterns (the test above reaches every one with texts made from it)


def test_the_skip_changes_no_find_on_the_secret_corpora(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan (every rule, the decoded views too) with the skip and without it, find for find, on the secret
    corpora, and as ingest calls it (the groups its prefilter picked) on the planted corpus."""
    _cheap_fingerprints(monkeypatch)
    texts = _real_texts()
    fast = [secret_rules.scan(t) for t in texts]
    ingested = texts[: len(texts) // 5]  # the planted corpus, the shapes, the edges and the mixes as they stand
    cells = pl.Series(ingested, dtype=pl.String)
    flags = [cells.str.contains(p).to_list() for p in secret_rules.prefilter()]
    picked = [[k for k, f in enumerate(flags) if f[i]] for i in range(len(ingested))]
    fast_picked = [secret_rules.scan(t, only) for t, only in zip(ingested, picked, strict=True)]
    _skip_off(monkeypatch)
    assert [secret_rules.scan(t) for t in texts] == fast
    assert [secret_rules.scan(t, only) for t, only in zip(ingested, picked, strict=True)] == fast_picked
    # 15,530 finds of 46 kinds in 13,460 of the 33,215 texts
    assert (sum(map(len, fast)), len({f.kind for found in fast for f in found}), sum(map(bool, fast))) == (
        15_530,
        46,
        13_460,
    )


def test_the_keyword_rule_looks_for_its_strings_in_the_lowered_text() -> None:
    """The keyword rule runs on the text lower-cased: its needed strings are looked for there, not in the text (an
    upper-case name holds none of them as it stands), also where lower-casing lengthens a character (İ)."""
    value = "Zq8vR2mX7kP4wL9nB3tY6hJ1cF5sD0gA"
    for text in (f"AWS_SECRET_ACCESS_KEY={value}", f"İ DB_PASSWORD='{value}'", f"\u212aEY_TOKEN={value}"):
        needs = secret_rules.required(secret_rules.keyword_rule().rx)
        assert needs and not any(n in text for n in needs) and any(n in secret_rules.lowered(text) for n in needs)
        assert [text[f.start : f.end] for f in secret_rules.scan(text)] == [value], text
