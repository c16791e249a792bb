"""Secret recall measured (issue 45): the planted corpus of bench/secrets_corpus.py (the providers' documented
shapes in eight contexts, near-misses beside them) scanned as ingest scans a cell, on each half; and the three
new ways a key hides (percent-encoded, base64 in a data URL, wrapped by a terminal) masked through a real ingest
without swallowing the line after a key."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from bench.secret_recall import SCANNERS, report, score
from bench.secrets_corpus import corpus, held_out
from forensics.kernel import secret_rules
from tests.conftest import query, run_cli


@pytest.mark.parametrize("half", ["dev", "held-out"])
def test_recall_and_precision_on_the_planted_corpus(half: str) -> None:
    samples = [s for s in corpus() if held_out(s) == (half == "held-out")]
    fams, flagged, missed, falsely = score(samples, SCANNERS["ours"])
    planted = sum(t.planted for t in fams.values())
    found = sum(t.found for t in fams.values())
    masked = sum(t.masked for t in fams.values())
    assert found / planted >= 0.95 and masked / planted >= 0.95, missed
    assert falsely == [] and not flagged  # no near-miss flagged, no find beside a planted secret
    # what is missed is a value with no name and no prefix (a bare password or random string in prose)
    assert all(
        m.split("/")[0] in ("aws-secret", "azure-storage", "client-secret", "password", "api-key-generic")
        for m in missed
    ), missed


def test_the_bench_prints_every_scanner_and_the_references(capsys: pytest.CaptureFixture[str]) -> None:
    totals = report(corpus()[:40] + corpus()[-20:], "a slice")
    out = capsys.readouterr().out
    for name in ("ours", "detect-secrets", "gitleaks", "every long token", "nothing"):
        assert name in out
    assert totals["nothing"] == (0.0, None) and totals["gitleaks"][0] is not None


KEY = "ghp_" + "Zq8" * 12  # 40 characters
PLAIN = f"# config\nGITHUB_TOKEN={KEY}\n"
TEXTS = {
    "data-url": f"see ![cfg](data:text/plain;base64,{base64.b64encode(PLAIN.encode()).decode()}) attached",
    "percent": "open https://login.example.com/?next=" + quote(f"https://api.example.com/cb?token={KEY}&s=1", safe=""),
    "wrapped": "$ tail -1 deploy.log\n"
    + ("[10:00:06] INFO loaded GITHUB_TOKEN=" + KEY)[:60]
    + "\n"
    + ("[10:00:06] INFO loaded GITHUB_TOKEN=" + KEY)[60:]
    + " ok\n$ ",
}


def _pieces(encoded: str) -> list[str]:
    return [encoded[i : i + 12] for i in range(len(encoded) - 11)]


def test_encoded_and_wrapped_keys_are_masked_at_ingest(tmp_path: Path) -> None:
    lines = [json.dumps({"type": "session", "id": "s1", "created_at": 1780374922, "model": "m"})]
    for i, text in enumerate(TEXTS.values()):
        lines.append(json.dumps({"id": i + 1, "parent_id": i or None, "role": "user", "content": text}))
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(tmp_path / "s.jsonl"), "--db", str(db))[0] == 0
    stored = "\n".join(r[0] for r in query(db, "SELECT content FROM messages ORDER BY seq"))
    wrapped_tail = ("[10:00:06] INFO loaded GITHUB_TOKEN=" + KEY)[60:]
    at = PLAIN.index(KEY)  # the base64 characters that encode the key alone
    b64 = base64.b64encode(PLAIN.encode()).decode()[4 * (at // 3 + 1) : 4 * ((at + len(KEY)) // 3)]
    encoded = [b64, quote(KEY, safe=""), wrapped_tail]
    assert not [p for e in encoded for p in _pieces(e) if p in stored]
    assert " ok\n" in stored and "attached" in stored  # what follows a key stays
    # one secret, one fingerprint, whatever encoded it
    assert query(db, "SELECT count(*), count(DISTINCT fingerprint) FROM secrets_found") == [(3, 1)]


def test_a_key_at_the_end_of_the_longest_line_keeps_the_next_line() -> None:
    text = "$ cat .env\nOPENAI_API_KEY=sk-proj-" + "aB3" * 30 + "\nREGION=eu-west-1\nPORT=3000\n"
    masked = secret_rules.mask(text)
    assert masked.endswith("=[REDACTED]\nREGION=eu-west-1\nPORT=3000\n")


def test_examples_and_placeholders_are_not_secrets() -> None:
    for text in (
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "SLACK_BOT_TOKEN=xoxb-your-bot-token-here",
        "api_key: sk-1234567890abcdef1234567890abcdef",
        'stripe.api_key = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"',
    ):
        assert secret_rules.scan(text) == [], text
