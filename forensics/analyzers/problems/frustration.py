"""``frustration`` (docs/definitions.md#problems-a-reviewer-flags): a person turn that shows exasperation with the
assistant or the interaction, not with the person's own situation: its words (``FRUSTRATED``), swearing aimed at
the assistant, a line shouted in capitals."""

from __future__ import annotations

import re

from forensics.analyzers.problems.model import Problem, quote_at
from forensics.analyzers.problems.turns import Turn, incidents

# exasperation with the assistant or the interaction (GUIDE §5 frustration), not with the person's own situation
FRUSTRATED = re.compile(
    "|".join(
        [
            r"\?{4,}",
            r"\?!\?|!\?!",  # runs of question marks; not of exclamation marks ("thanks!!!!")
            r"\byou should know\b",
            r"\bare you (?:\w+ )?(?:kidding|serious|stupid|dumb|even|blind|insane|crazy)\b",
            r"\b(?:you(?:['’]re| are)|this is|that['’]?s|so) (?:pathetic|useless|ridiculous|stupid|incompetent)\b",
            r"\bidiot\b",
            r"\bhow many times\b",
            r"\bfor the (?:third|fourth|fifth|tenth|\d+(?:rd|th)) time\b",
            r"\bI suspect you are not\b",
            r"\byou (?:wasted|ruined)\b",
            r"\bseriously[?!]",
            r"\bI['’]?m (?:so )?(?:tired|sick) of\b",
            "이해(?:를)? ?못",
            "도대체",
            "왜 자꾸",
            "내말을",
            r"\bты (?:что-ли |что ли )?(?:тупой|тупая|идиот|дебил)\b",
            "到底",
            "你怎么又",
            "垃圾",
            "废物",
        ]
    ),
    re.IGNORECASE,
)


# shouting (GUIDE §5 frustration): a line in capitals, SHOUT_WORDS words or more of 3+ letters in capitals and
# SHOUT_SHARE of its cased letters upper case, in any cased script ("ПОСМОТРИ БЛЯТЬ СПИСОК ПАПОК ..."); a short line in
# capitals is a heading or an emphasis ("DELETE THE FINAL FUNCTION")
SHOUT_WORDS = 5
SHOUT_SHARE = 0.7
CASED_WORD = re.compile(r"(?<!\w)[^\W\d_]{3,}(?!\w)")


def _shouting(text: str) -> re.Match[str] | None:
    """The first line of ``text`` in capitals (its match), if it is shouted."""
    for m in re.finditer(r"[^\n]+", text):
        line = m.group()
        caps = [w for w in CASED_WORD.findall(line) if w.isupper()]
        cased = [c for c in line if c.isupper() or c.islower()]
        if len(caps) >= SHOUT_WORDS and sum(c.isupper() for c in cased) >= SHOUT_SHARE * len(cased):
            return m
    return None


# swearing (GUIDE §5 frustration: "with the assistant or the interaction", not the person's situation): a swear word
# or curse, in the languages people write to agents in, counts only where it is aimed at the assistant: a second person
# in its sentence or one beside it ("you fucked that up", "are you fucking stupid?", "ты свой gemini.md изучи блять"),
# or a turn that opens by rejecting the reply ("no, that's not it ... fucking hell"). "the OCR shit", "fuck that
# language", "wtf" at a terminal's rendering are the person's situation.
SWEAR = re.compile(
    r"(?<!\w)(?:fuck\w*|f+u+c+k+\w*|shit\w*|bullshit|crap|crappy|damn\w*|goddamn\w*|dammit|wtf|omfg|ffs|"
    r"what the (?:hell|fuck|heck)|"
    r"блят\w*|бля|хуй\w*|хуе\w*|хуё\w*|нахуй|нехуя|пизд\w*|ёб\w*|еба\w*|заеб\w*|выбляд\w*|сука|"
    r"scheiß\w*|scheiss\w*|verdammt\w*|putain|merde|bordel|joder|mierda|coño|carajo|porra|caralho|cazzo|vaffanculo)"
    r"(?!\w)|卧槽|我操|妈的|他妈|你妈|씨발|시발|ㅅㅂ|존나|개같|クソ|くそ|ふざけ",
    re.IGNORECASE,
)
# the assistant addressed: a second-person pronoun (English, Russian, German, French, Spanish, Portuguese, Italian,
# Chinese, Korean, Japanese; German "du" only before its verb in -st, French "du" is "of the")
ADDRESSED = re.compile(
    r"(?<!\w)(?:you|your|you['’]?re|yours|u|ты|тебя|тебе|тобой|твой|твоя|твоё|твое|твои|твою|вы|вас|вам|ваш\w*|du\s+\w+st|"
    r"dich|dir|dein\w*|tu|toi|ton|ta|tes|vous|votre|tú|ti|usted|você|voce|vc)(?!\w)|你|너|니가|네가|당신|お前|おまえ|あなた|君",
    re.IGNORECASE,
)
# a turn that opens by rejecting the reply
REJECTS = re.compile(
    r"^\W*(?:no|nope|wrong|that['’]?s not (?:it|right|what)|нет|не то|nein|non|não|不是|不对|아니|違う)(?!\w)",
    re.IGNORECASE,
)
SENTENCE = re.compile(r"[^.!?\n。！？]+[.!?\n。！？]*")


def _swearing(text: str) -> re.Match[str] | None:
    """The first swear word of ``text`` aimed at the assistant (``SWEAR``)."""
    sentences = list(SENTENCE.finditer(text))
    rejects = REJECTS.search(text) is not None
    for i, s in enumerate(sentences):
        if (m := SWEAR.search(text, s.start(), s.end())) is None:
            continue
        if rejects or any(ADDRESSED.search(text, x.start(), x.end()) for x in sentences[max(0, i - 1) : i + 2]):
            return m
    return None


def frustration(turns: list[Turn]) -> list[Problem]:
    """A person turn that shows exasperation with the assistant: runs of ?/!, insults, "you should know", swearing
    aimed at the assistant (``swore_at_assistant``), or a line shouted in capitals (``shouting``)."""
    hits = []
    for t in turns:
        if t.index == 0:
            continue
        said, swore, shout = FRUSTRATED.search(t.text), _swearing(t.text), _shouting(t.text)
        rules = [r for r, x in (("exasperated", said), ("swore_at_assistant", swore), ("shouting", shout)) if x]
        if rules:
            hits.append((t, "+".join(rules), quote_at(t.text, said or swore or shout)))
    return incidents(hits, "frustration", "the person's own words (no corpus norm)")
