"""The language a reply is written in, from its scripts and its commonest words, or None when the reply is too
short or too mixed to say (a reply-language rule then has no verdict on it: never guessed)."""

from __future__ import annotations

import re

CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`|https?://\S+|\S*[/\\]\S*", re.DOTALL)
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
KANA = re.compile(r"[\u3040-\u30ff]")
HANGUL = re.compile(r"[\uac00-\ud7af]")
CYRILLIC_WORD = re.compile(r"[\u0400-\u04ff]{2,}")
LATIN_WORD = re.compile(r"[A-Za-zÀ-ÿ']{2,}")
STOPWORDS = {
    "en": frozenset("the and is are to of in that it for with this you be on not was have what will can".split()),
    "fr": frozenset("le la les et est des une un que pour dans pas qui sur avec vous ce sont il".split()),
    "de": frozenset("der die das und ist nicht ein eine zu den mit für auf sie ich es wir dem".split()),
    "es": frozenset("el la los las y es que de en un una para con por no se su del al".split()),
    "pt": frozenset("o os as e é que de em um uma para com não se do da dos no na".split()),
    "it": frozenset("il lo la gli le e è che di un una per con non si del della sono".split()),
}
MIN_UNITS = 6  # words (or Han characters) a reply needs before its language is said
MIN_SHARE = 0.6  # the share of its words a script needs to be the reply's


def language_of(text: str) -> str | None:
    """``zh``, ``ja``, ``ko``, ``ru`` or a Latin-script language by its stopwords, else None."""
    prose = CODE.sub(" ", text)
    han, kana, hangul = len(HAN.findall(prose)), len(KANA.findall(prose)), len(HANGUL.findall(prose))
    cyr = len(CYRILLIC_WORD.findall(prose))
    latin = LATIN_WORD.findall(prose)
    units = han + kana + hangul + cyr + len(latin)
    if units < MIN_UNITS:
        return None
    if kana and (kana + han) / units >= MIN_SHARE / 2 and kana >= han / 4:
        return "ja"
    for lang, n in (("zh", han), ("ko", hangul), ("ru", cyr)):
        if n / units >= MIN_SHARE / 2 and n >= len(latin):
            return lang
    if len(latin) / units < MIN_SHARE:
        return None
    words = [w.lower() for w in latin]
    counts = {lang: sum(w in stop for w in words) for lang, stop in STOPWORDS.items()}
    best = max(counts, key=lambda k: counts[k])
    return best if counts[best] >= 2 and sorted(counts.values())[-2] < counts[best] else None
