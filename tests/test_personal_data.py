"""Personal data (e-mail addresses, phone numbers, card numbers, IBANs) is masked in report.html by default and in
every output on request (``[redact] personal = "all"``); what only looks like one (dates, versions, IP addresses,
ports, timestamps, hashes) is left alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics import ingest
from forensics.text.personal import mask
from tests.conftest import FIXTURES, query, run_cli

PLANTED = {
    "email": "jane.doe@acme-mail.io",
    "phone": "+44 20 7946 0958",
    "us phone": "(202) 555-0143",
    "cn mobile": "13812345678",
    "card": "4111 1111 1111 1111",
    "iban": "DE89 3704 0044 0532 0130 00",
}


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("write to jane.doe@acme-mail.io.", "write to [EMAIL]."),
        ("Jane_Doe+tag@mail.co.uk", "[EMAIL]"),
        ("call +44 20 7946 0958 or +1-202-555-0143", "call [PHONE] or [PHONE]"),
        ("(202) 555-0143, 202.555.0143, 202 555 0143", "[PHONE], [PHONE], [PHONE]"),
        ("手机 13812345678，或 +8613812345678", "手机 [PHONE]，或 [PHONE]"),
        ("card 4111-1111-1111-1111 / 4111111111111111", "card [CARD] / [CARD]"),
        (
            "IBAN DE89 3704 0044 0532 0130 00, GB82WEST12345698765432, ES91 2100 0418 4502 0005 1332",
            "IBAN [IBAN], [IBAN], [IBAN]",
        ),
    ],
)
def test_personal_data_is_masked(text: str, masked: str) -> None:
    assert mask(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-02 01:39:43+00:00",
        "version 1.2.3 and 10.4.1-rc.2",
        "192.168.1.10:8080 and 10.0.0.255",
        "src/app.py:123:45",
        "uuid 12345678-1234-1234-1234-123456789012",
        '"ts": 1747214112281, "startTime": 1782053770331354',
        "commit 4f2a9c1e and 1733100000 seconds",
        "+1234 -56 lines changed",
        "pi 3.14159265358979",
        "react@18.2.0, @app.route, user@localhost",
        "git@github.com:org/repo.git",
        "Claude <noreply@anthropic.com>",
        "docs: user@example.com",
        "range 100-200-3000 and 2023-10-1234",
        "card 4111 1111 1111 1112 (fails Luhn)",
        "total 1234567890123 bytes",
        "DE89 3704 0044 0532 0130 01 (fails mod 97)",
    ],
)
def test_what_only_looks_personal_is_kept(text: str) -> None:
    assert mask(text) == text


def test_a_text_the_card_pattern_matches_always_holds_what_lets_it_be_scanned() -> None:
    """``mask`` runs the card pattern only over a text holding ``_CARD_NEEDS`` (four groups of four, or 13 digits in
    a run): every text the card pattern matches holds it, on 200,000 random mixes of digits, separators and letters
    and on the shapes of real card numbers, so skipping the others masks exactly what running it on them would."""
    import random

    from forensics.text.personal import _CARD, _CARD_NEEDS

    rnd = random.Random(46)
    alphabet = "0123456789" * 4 + " -.+()/:abAB\u00a0\n"
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(4, 48))) for _ in range(200_000)]
    texts += [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "378282246310005",
        "6011000990139424",
        "x 3566002020360505.",
    ]
    matched = [t for t in texts if _CARD.search(t)]
    assert len(matched) > 1_000  # the mixes reach the pattern, not only the samples
    assert [t for t in matched if not _CARD_NEEDS.search(t)] == []
    assert mask("paid with 4111 1111 1111 1111 today") == "paid with [CARD] today"


def test_a_text_a_pattern_matches_always_holds_its_gate_and_masks_as_every_pattern_run_in_turn() -> None:
    """``mask`` runs the IBAN, card and phone patterns only over a text where their gates find something (each gate
    starts with a literal or a class, which ``re`` skips ahead to): on 100,000 random mixes of the planted shapes,
    digit runs (non-ASCII digits too), separators, brackets, plus signs and letters, every text a pattern matches
    holds its gate, and ``mask`` masks exactly what the three patterns run in turn on every text mask."""
    import random

    from forensics.text import personal as p

    def every_pattern(text: str) -> str:
        """``mask`` as it was before the gates: each pattern over every text with a digit."""
        if "@" in text:
            text = p._EMAIL.sub(lambda m: m.group() if p._NOT_PERSONAL.search(m.group()) else p.EMAIL_MASK, text)
        if not any(c.isdigit() for c in text):
            return text
        text = p._IBAN.sub(lambda m: p.IBAN_MASK if p._iban_ok(m.group()) else m.group(), text)
        text = p._CARD.sub(lambda m: p.CARD_MASK if p._luhn_ok(m.group()) else m.group(), text)
        return p._PHONE.sub(
            lambda m: p.PHONE_MASK if 7 <= sum(c.isdigit() for c in m.group()) <= 15 else m.group(), text
        )

    def phone_gate(text: str) -> bool:
        return bool(p._PHONE_PLUS.search(text) or p._PHONE_AREA.search(text) or p._PHONE_DIGITS.search(text))

    rnd = random.Random(46)
    shapes = [*PLANTED.values(), "+1-202-555-0143", "+8613812345678", "202.555.0143", "4111-1111-1111-1111"]
    shapes += ["378282246310005", "GB82WEST12345698765432", "ES91 2100 0418 4502 0005 1332", "+44 (20) 7946 0958"]
    bits = [
        " ",
        "-",
        ".",
        "\u00a0",
        "/",
        ":",
        "+",
        "(",
        ")",
        "#",
        "=",
        "_",
        "\n",
        "a",
        "Z",
        "DE",
        "中",
        "٣",
        "３",
        "@x.io",
    ]
    mixes = []
    for _ in range(100_000):
        pieces = []
        for _ in range(rnd.randint(1, 8)):
            r = rnd.random()
            if r < 0.15:
                pieces.append(rnd.choice(shapes))
            elif r < 0.55:
                pieces.append("".join(rnd.choice("0123456789") for _ in range(rnd.randint(1, 14))))
            else:
                pieces.append(rnd.choice(bits))
        mixes.append("".join(pieces))
    gates = {"iban": (p._IBAN, p._IBAN_NEEDS.search), "card": (p._CARD, p._CARD_NEEDS.search)}
    gates |= {"card runs": (p._CARD, p._RUNS.search), "phone": (p._PHONE, phone_gate)}
    gates |= {"phone runs": (p._PHONE_DIGITS, p._RUNS.search)}
    reached = dict.fromkeys(gates, 0)
    for text in mixes:
        for name, (rx, gate) in gates.items():
            if rx.search(text):
                reached[name] += 1
                assert gate(text), (name, text)
    assert min(reached.values()) > 1_000, reached  # every pattern is reached, not only its samples
    masked = [mask(t) for t in mixes]
    assert masked == [every_pattern(t) for t in mixes]
    assert sum(m != t for m, t in zip(masked, mixes)) > 10_000


def test_no_term_is_a_piece_of_an_address() -> None:
    from forensics.text.tokenizer import tokenize

    assert tokenize("write to jane.doe@acme-mail.io, or see user@example.com") == [
        "write",
        "to",
        "or",
        "see",
        "user",
        "example.com",
    ]  # the documentation domain is no one's address


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two sessions whose every message carries the planted values, ingested."""
    d = tmp_path_factory.mktemp("personal")
    for src in sorted((FIXTURES / "sessions").glob("*.jsonl"))[:2]:
        lines = []
        for line in src.read_bytes().splitlines():
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):  # the fixtures' planted bad lines stay as they are
                lines.append(line)
                continue
            if isinstance(rec, dict) and isinstance(rec.get("content"), str):
                rec["content"] += " (" + ", ".join(PLANTED.values()) + ")"
            lines.append(json.dumps(rec, ensure_ascii=False).encode())
        (d / src.name).write_bytes(b"\n".join(lines) + b"\n")
    ingest(sorted(d.glob("*.jsonl")), db=d / "w.duckdb")
    return d / "w.duckdb"


def _leaks(text: str) -> list[str]:
    return [name for name, value in PLANTED.items() if value in text]


def _report(db: Path, out: Path, *config: str) -> dict[str, str]:
    code, _, err = run_cli("report", "--db", str(db), "--out", str(out), *config)
    assert code == 0, err
    return {
        p.name: p.read_text(encoding="utf-8") for p in (out / "report.html", out / "report.md", out / "metrics.json")
    }


def test_report_html_masks_personal_data_by_default(planted: Path, tmp_path: Path) -> None:
    files = _report(planted, tmp_path / "r")
    assert _leaks(files["report.md"]), "the planted values should reach report.md (else this test proves nothing)"
    assert not _leaks(files["report.html"])
    assert "[EMAIL]" in files["report.html"] and "[PHONE]" in files["report.html"]
    assert "acme-mail" not in files["report.html"]  # nor a piece of it as a keyword or topic term


def test_every_output_masks_when_the_config_says_all(
    planted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "harness.toml").write_text('[redact]\npersonal = "all"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # query and show read ./harness.toml
    files = _report(planted, tmp_path / "r", "--config", "harness.toml")
    for name, text in files.items():
        assert not _leaks(text) and "acme-mail" not in text, name
    json.loads(files["metrics.json"])  # masked value by value: still JSON
    for svg in (tmp_path / "r" / "charts").glob("*.svg"):
        assert not _leaks(svg.read_text(encoding="utf-8")), svg.name
    code, out, _ = run_cli("query", "SELECT content FROM messages", "--db", str(planted), "--format", "csv")
    assert code == 0 and not _leaks(out) and "[EMAIL]" in out
    nid = run_cli("query", "SELECT native_id FROM conversations LIMIT 1", "--db", str(planted), "--format", "csv")[
        1
    ].splitlines()[1]
    code, out, _ = run_cli("show", nid, "--db", str(planted), "--positions", "0-3")
    assert code == 0 and not _leaks(out) and "[PHONE]" in out


def test_off_masks_nothing_and_a_bad_value_is_a_config_error(planted: Path, tmp_path: Path) -> None:
    (tmp_path / "off.toml").write_text('[redact]\npersonal = "off"\n', encoding="utf-8")
    assert _leaks(_report(planted, tmp_path / "r", "--config", str(tmp_path / "off.toml"))["report.html"])
    (tmp_path / "bad.toml").write_text('[redact]\npersonal = "some"\n', encoding="utf-8")
    code, _, err = run_cli("config", "check", str(tmp_path / "bad.toml"))
    assert code != 0 and "pages, all, off" in err


def test_the_explorers_pages_mask_personal_data_unless_turned_off(planted: Path) -> None:
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    cid = query(planted, "SELECT conversation_id FROM conversations ORDER BY 1 LIMIT 1")[0][0]
    pages = (f"/c/{cid}", "/search?q=acme-mail", f"/c/{cid}/m/1")
    masked = TestClient(create_app(planted), base_url="http://127.0.0.1")
    shown = [masked.get(p) for p in pages]
    assert all(r.status_code == 200 for r in shown)
    assert [p for p, r in zip(pages, shown) if _leaks(r.text)] == []
    assert "[EMAIL]" in shown[0].text
    raw = TestClient(create_app(planted, personal=False), base_url="http://127.0.0.1").get(pages[0])
    assert _leaks(raw.text)  # the planted values are there to mask
