"""Ingest's prefilter narrows the keyword rule's texts to where ``_keep`` may keep a match
(``secret_rules.keyword_kept``): the scan of the cells it flags finds exactly what a scan of every cell finds, on
200,000 random mixes of names, assignments and values (code, types, counts, credentials, passwords, non-ASCII
digits, letters and spaces, the Kelvin sign and the long s), the other rules' secrets and the hostile texts."""

from __future__ import annotations

import random
import string

import polars as pl

from forensics.ingestion.mask import _hits
from forensics.kernel import secret_rules

NAMES = [
    "token",
    "TOKEN",
    "api_key",
    "apiKey",
    "AWS_SECRET_ACCESS_KEY",
    "password",
    "PASSWD",
    "db_pwd",
    "contrasena",
    "pass",
    "passphrase",
    "max_tokens",
    "setToken",
    "auth",
    "client_secret",
    "token_password",
    "pass_rate",
    "\u212auser_key",  # the Kelvin sign, lower-cased to k
    "\u017fecret",  # the long s
    "my.private-key",
    "x",
    "secret_key_base",
    "authorization",
]
CLOSERS = ["", '"', '\\"', "'", "]", "`", '"]']
ASSIGNS = [":", "=", ":=", "=>", "==", " = ", ": ", "\t:\t", " "]
QUOTES = ["", '"', "'", '\\"', "`"]


def _value(rng: random.Random) -> str:
    kind = rng.randrange(12)
    alnum = string.ascii_letters + string.digits
    if kind == 0:
        return "".join(rng.choice(alnum) for _ in range(rng.randint(14, 40)))
    if kind == 1:
        return "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(10, 30)))  # no digit
    if kind == 2:
        return rng.choice(["string", "&str", "Option<u64>,", "impl Into<String>", "state.queue.lock().await;"])
    if kind == 3:
        return str(rng.randint(0, 100000))
    if kind == 4:
        return "".join(rng.choice(alnum + "()[]{},;=&?.") for _ in range(rng.randint(4, 30)))
    if kind == 5:  # non-ASCII digits and letters, a wide space inside
        return "".join(rng.choice(alnum + "٣３éЖ\u3000\u00a0") for _ in range(rng.randint(10, 24)))
    if kind == 6:
        return rng.choice(["Tr0ub4dor&3", "hunter2", "pw9", "abcd", "a.b.", "os.environ", "changeme"])
    if kind == 7:
        return "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice([16, 31, 32, 40])))
    if kind == 8:
        return "".join(rng.choice(alnum) for _ in range(rng.randint(12, 20))) + rng.choice(
            [",", ");", "}", "]>", "&x=1"]
        )
    if kind == 9:
        return "abcd" + "=" * rng.randint(1, 14)
    if kind == 10:
        return "".join(rng.choice(alnum + "-_/+") for _ in range(rng.randint(15, 18)))
    return ""


def _mixes(n: int) -> list[str]:
    rng = random.Random(46)
    others = [
        "sk-proj-" + "a1B2c3D4" * 4,
        "ghp_" + "Zx9" * 12,
        "AKIAABCDEFGHIJKLMNOP",
        "https://u:p4ss!word@host/x",
        "%3D" + "q" * 14,
        "data:text/plain;base64,dG9rZW49YWJjZGVmMTIzNDU2Nzg5MDEyMzQ1Ng==",
        "x" * 44 + "abcdefgh\nijklmnop",
        "Bearer " + "t0k3n" * 5,
        "\n",
        "中文",
        "?",
        "&",
        "let ",
        "pub ",
    ]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.75:
                name = rng.choice(NAMES)
                if rng.random() < 0.2:
                    name = "".join(c.upper() if rng.random() < 0.5 else c for c in name)
                parts.append(name + rng.choice(CLOSERS) + rng.choice(ASSIGNS) + rng.choice(QUOTES) + _value(rng))
            else:
                parts.append(rng.choice(others))
        out.append("".join(rng.choice(["", " ", "\n", ", ", "?", "&", "(", '{"']) + p for p in parts))
    return out


def test_the_narrowed_prefilter_loses_no_find() -> None:
    """Every text the narrowing drops from the keyword rule's group is one where that rule keeps nothing (the other
    groups are flagged as before), so the scan of what is flagged finds what a scan of every text finds."""
    texts = _mixes(200_000)
    series = pl.Series(texts, dtype=pl.String)
    flagged = series.str.contains(secret_rules.prefilter()[0]).arg_true().to_list()
    hits = _hits(series, secret_rules.prefilter())
    dropped = [i for i in flagged if 0 not in hits.get(i, [])]
    assert [i for i in dropped if secret_rules._spans(texts[i], [0])] == []
    # the mixes reach both halves of _keep and what it drops: kept finds of each kind; a quarter of the flagged texts dropped
    kept = [i for i in flagged if 0 in hits.get(i, [])]
    kinds = {s[2] for i in kept for s in secret_rules._spans(texts[i], [0])}
    assert kinds == {"secret-keyword", "password", "aws-secret-key"}
    assert (len(dropped), len(kept)) == (39_120, 122_838)
