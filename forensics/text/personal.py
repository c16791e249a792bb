"""Personal data masked in what a reader sees: e-mail addresses, phone numbers, payment card numbers and IBANs.

Secrets (``forensics.kernel.redact``) are masked everywhere because they open doors; personal data is the user's own
and often what a log is about, so it is masked where a page is likely to be shared (report.html and the
explorer, by default) or everywhere on request (``[redact] personal = "all"``). The warehouse keeps the raw text.

Logs are full of things shaped like numbers, so a phone number needs a phone's shape: an international ``+``
prefix, a bracketed area code, the 3-3-4 grouping of North American numbers, or a mainland Chinese mobile
number (11 digits from 13-19) standing alone. Dates, times, versions, IP addresses, ports, line numbers and
hashes have none of these shapes; a card number must pass the Luhn check and an IBAN its mod-97 check.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

MODES = ("pages", "all", "off")  # [redact] personal: report.html and the explorer only / every output / nowhere

EMAIL_MASK, PHONE_MASK, CARD_MASK, IBAN_MASK = "[EMAIL]", "[PHONE]", "[CARD]", "[IBAN]"
# addresses that name no person: SSH remotes (git@github.com:...), bots' no-reply senders, the documentation domains
_NOT_PERSONAL = re.compile(r"(?i:git|noreply|no-reply|donotreply|do-not-reply)@|@example\.(?:com|org|net)$")
_EMAIL = re.compile(
    r"(?<![\w.%+\\-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])"
)
_SEP = r"[ .\-\u00a0]"
_PHONE = re.compile(
    r"(?<![\w+\-.:/#=])(?:"
    # +44 20 7946 0958, +1-202-555-0143, +86 138 1234 5678, +8613812345678: a country code, then 7-12 digits
    rf"\+[1-9]\d{{0,2}}(?:{_SEP}?\(\d{{1,4}}\))?(?:{_SEP}?\d{{2,4}}){{2,5}}"
    # (202) 555-0143, 202-555-0143, 202.555.0143: North American grouping (area code and exchange from 2), one separator
    rf"|\([2-9]\d{{2}}\){_SEP}?[2-9]\d{{2}}[ .\-]\d{{4}}|[2-9]\d{{2}}(?P<s>[ .\-])[2-9]\d{{2}}(?P=s)\d{{4}}"
    # 13812345678: a mainland Chinese mobile number, alone (not inside a longer run of digits)
    r"|1[3-9]\d{9}"
    r")(?![\w\-.:/]\d|\w)"
)
# grouped in fours, or a bare run from an issuer's first digit (3-6): a bare run from 1 is a Unix time in ms or µs
_CARD = re.compile(r"(?<![\w\-.+])(?:\d{4}[ \-]){3}\d{1,7}(?![\w\-.])|(?<![\w\-.+])[3-6]\d{12,18}(?![\w\-.])")
# Gates: what every match of a pattern contains, written to start with a literal or a character class, which Python's
# ``re`` skips ahead to (a pattern that starts with a look-behind or ``\b`` is tried at every position of a text). A
# text where a pattern's gate finds nothing is not scanned by it. Over a report page (17,000 texts, 2.9 M characters,
# digits in most) the three patterns' scans were three quarters of ``mask_markup``; tests/test_personal_data.py holds
# each gate to its pattern on random mixes and ``mask`` to the patterns run in turn.
# every card number: four groups of four, or 13 digits in a run
_CARD_NEEDS = re.compile(r"\d\d\d\d(?:[ \-]\d{4}[ \-]\d{4}[ \-]\d|\d{9})")
# every IBAN: its country code and check digits, then a group's first four characters
_IBAN_NEEDS = re.compile(r"[A-Z][A-Z]\d\d ?[A-Z0-9]{4}")
# every phone number: a ``+`` and its country code's first digit, a bracketed area code, or digits in the 3-3-4
# grouping (a North American number) or 11 in a run (a mainland Chinese mobile number)
_PHONE_PLUS, _PHONE_AREA = re.compile(r"\+[1-9]"), re.compile(r"\([2-9]\d\d\)")
_PHONE_DIGITS = re.compile(r"\d\d\d(?:[ .\-][2-9]\d\d[ .\-]\d{4}|\d{8})")
# what both ``_CARD_NEEDS`` and ``_PHONE_DIGITS`` match hold, one pass for the two (most texts hold neither)
_RUNS = re.compile(r"\d\d\d(?:[ .\-][2-9]\d\d[ .\-]\d{4}|\d[ \-]\d{4}[ \-]\d{4}[ \-]\d|\d{8})")
_TEXT_NODE = re.compile(r">([^<]+)<")
_TITLE = re.compile(r'(\stitle=")([^"]*)"')
_NUMBER = re.compile(r"\s*\d+(?:\.\d+)?\s*")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")


def mask(text: str) -> str:
    """``text`` with every e-mail address, phone number, card number and IBAN found in it replaced by a mask."""
    if not text:
        return text
    if "@" in text:
        text = _EMAIL.sub(lambda m: m.group() if _NOT_PERSONAL.search(m.group()) else EMAIL_MASK, text)
    if _IBAN_NEEDS.search(text):
        text = _IBAN.sub(lambda m: IBAN_MASK if _iban_ok(m.group()) else m.group(), text)
    runs = _RUNS.search(text) is not None  # else no card, and the text stays as it is for the phone's gate
    if runs and _CARD_NEEDS.search(text):
        text = _CARD.sub(lambda m: CARD_MASK if _luhn_ok(m.group()) else m.group(), text)
    if (runs and _PHONE_DIGITS.search(text)) or _PHONE_PLUS.search(text) or _PHONE_AREA.search(text):
        text = _PHONE.sub(lambda m: PHONE_MASK if 7 <= sum(c.isdigit() for c in m.group()) <= 15 else m.group(), text)
    return text


def blank_addresses(text: str) -> str:
    """``text`` with each e-mail address that ``mask`` would mask blanked to spaces of its length (offsets kept):
    what the tokenizer reads, so no keyword or topic term is a piece of an address ("jane.doe", "acme-mail.io")."""
    if "@" not in text:
        return text
    return _EMAIL.sub(lambda m: m.group() if _NOT_PERSONAL.search(m.group()) else " " * len(m.group()), text)


def applies(mode: str, page: bool) -> bool:
    """Whether ``[redact] personal = mode`` masks an output: a page (report.html, the explorer) or any other."""
    return mode == "all" or (page and mode == "pages")


def mask_markup(doc: str) -> str:
    """``mask`` over an HTML or SVG document's text and ``title`` attributes, never its tags, styles' numbers or
    path data; a text that is one plain number (a count in a table cell, 13000000000 bytes) is left as it is."""
    doc = _TEXT_NODE.sub(lambda m: m.group() if _NUMBER.fullmatch(m.group(1)) else f">{mask(m.group(1))}<", doc)
    return _TITLE.sub(lambda m: f'{m.group(1)}{mask(m.group(2))}"', doc)


def mask_value(v: Any) -> Any:
    """``mask`` through any value a query returns: text, and lists and structs (dicts) of it."""
    if isinstance(v, str):
        return mask(v)
    if isinstance(v, dict):
        return {k: mask_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(mask_value(x) for x in v)
    return v


def mask_frame(df: pl.DataFrame) -> pl.DataFrame:
    """Every text cell of ``df`` masked, inside lists and structs too."""
    import polars as pl

    def texts(t: Any) -> bool:
        return (
            t == pl.String
            or (isinstance(t, (pl.List, pl.Array)) and texts(t.inner))
            or (isinstance(t, pl.Struct) and any(texts(f.dtype) for f in t.fields))
        )

    cols = [
        pl.col(c).map_elements(mask if t == pl.String else mask_value, return_dtype=t)
        for c, t in df.schema.items()
        if texts(t)
    ]
    return df.with_columns(cols) if cols else df


def _luhn_ok(s: str) -> bool:
    digits = [int(c) for c in s if c.isdigit()]
    if not 13 <= len(digits) <= 19 or len(set(digits)) < 2:  # 0000 0000 0000 0000 passes Luhn and is no card
        return False
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(reversed(digits)))
    return total % 10 == 0


def _iban_ok(s: str) -> bool:
    s = s.replace(" ", "")
    if not 15 <= len(s) <= 34:
        return False
    n = "".join(str(int(c, 36)) for c in s[4:] + s[:4])
    return int(n) % 97 == 1
