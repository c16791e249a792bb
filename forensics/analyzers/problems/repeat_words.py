"""The person's words of repeating (docs/definitions.md#problems-a-reviewer-flags ``user_repeated``): that the
work failed them or that they said it before (``REPEATED``), a standing directive (``DIRECTIVES``), "it doesn't
work" (``NOT_WORK``). Read by ``repeated`` and by the claim rules (``endings``: a report that contradicts a claim)."""

from __future__ import annotations

import re

# the turn opens by correcting what the reply took the request to be ("i mean specific to content not policy", "I meant
# the Continue shortcuts"): the request said again, with what the reply missed; no report that work done failed
MEANT = r"\A\W*(?:no[,.]?\s*|sorry[,.]?\s*)?(?:I mean(?:t)?|what I meant)\b"
MEANT_RE = re.compile(MEANT, re.IGNORECASE)

# the person says the assistant's work failed them or that they said it before (GUIDE §5 user_repeated; the
# baseline's user_pushback patterns are its English core)
REPEATED = re.compile(
    "|".join(
        [
            r"\bstill (?:doesn['’]?t|does not|isn['’]?t|is not|not|no|cannot|can['’]?t|won['’]?t|getting|get|fails?|failing|broken|the "
            r"same|seeing|see|laggy|there|missing|happening)\b",
            # "same error", not a consequence weighed ("single quotes is then the same issue if someone uses them",
            # "that would be the same problem"): a reviewer read that as no report of the work failing
            r"(?<!\bthen the )(?<!\bbe the )\bsame (?:error|issue|problem|exception|result|thing)\b",
            r"\bit['’]?s the same\b",
            r"\byou (?:forgot|missed|ignored|didn['’]?t|did not|haven['’]?t|have not)\b",
            r"^\W*(?:nope|no)\b[,.!]",
            # a thing forbidden with an exclamation, the turn's opening ("no conosle logs! setTheme should return an
            # error"): the person takes back what the reply just did; not a courtesy ("no worries!", "no rush!")
            r"\A\W*no (?!(?:worries|worry|problem|problems|prob|probs|rush|hurry|stress|pressure|biggie|need)\b)"
            r"[\w.-]+(?: [\w.-]+){0,2}\s*!",
            r"^\W*nope\b",
            r"\bno go\b",
            r"\bI (?:said|told you|already told you|already said|asked (?:you )?(?:to|for))\b",
            r"\bas I said\b",
            MEANT,  # the request said again, with what the reply missed
            r"\bwhy did you\b",
            r"\bis still (?:there|here|happening|broken|not)\b",
            r"\bstill (?:seems?|appears?) to\b",
            # "I don't see the change", not "I don't see the point of it" / "why we need it" (an opinion, a question)
            r"\bI (?:didn['’]?t|did not|don['’]?t|do not|can['’]?t|cannot|never) (?:see|saw)\b(?! (?:the (?:point|need|reason|"
            r"value|benefit|use|harm|problem with)|any (?:point|need|reason|benefit|harm|problem)|a (?:reason|need|"
            r"problem)|much (?:point|value|difference)|why|how|what)\b)",
            r"\b(?:again|once more)[,:]? (?:it|the|this|that|same)\b",
            r"(?<!please )\btry (?:it |that |this )?again\b(?! later)",  # the person asks for the last request again
            # French, German, Spanish
            r"\btoujours (?:pas|le même|la même|les mêmes|rien)\b",
            r"\bje ne vois (?:pas|rien)\b",
            r"\bne (?:marche|fonctionne) (?:pas|toujours pas)\b",
            r"\bimmer noch\b",
            r"\bfunktioniert (?:nicht|immer)\b",
            r"\bsigue sin\b",
            r"\bno funciona\b",
            r"\btodavía no (?:funciona|aparece|sale|va)\b",
            r"\b(?:ya )?te (?:lo )?dije\b",
            r"\bich habe (?:doch |dir )?(?:gesagt|geschrieben)\b",
            r"\b(?:geht|klappt) (?:immer )?noch nicht\b",
            # Portuguese, Italian, Russian
            r"\bainda não (?:funciona|está|aparece|deu)\b",
            r"\bnão funciona\b",
            r"\beu (?:já )?(?:disse|pedi)\b",
            r"\bancora non\b",
            r"\bnon funziona\b",
            r"\bte l['’]ho (?:già )?detto\b",
            r"\bвс[её] ещё не\b|\bпо-прежнему не\b|\b(?:опять|снова) (?:не|ничего|нечего)\b|\bне работает\b",
            r"\b(?:опять|снова|вс[её]) (?:то ?же самое|тоже самое)\b|\bничего не изменилось\b",
            r"\bя (?:же |уже )(?:сказал|говорил|просил)\b",
            r"\bпопробуй (?:ещё|еще) раз\b",
            # Chinese, Korean: "still wrong", "I said", "again doesn't work", "I told you to ..."
            "还是不[行对]",
            "(?:还是|仍然|依然)(?:没|不)",
            "还是报错",
            "不对",
            "错了",
            "没有用",
            "不起作用",
            "你忘了",
            "又错",
            "我说了",
            "我已经说",
            "再试一次",
            "(?:자|라)니까",
            "했잖아",
            "하라고",
            "또 안",
            "안되(?:네|는데|잖아)",
            "여전히",
            "똑같이 안",
            # Japanese: "still doesn't work", "not fixed", "I said (it) earlier"
            "まだ(?:動かない|直って|エラー|同じ)|動きません|動かない|直ってない|さっき(?:も)?言った|言ったのに",
        ]
    ),
    re.IGNORECASE | re.MULTILINE,
)

# "one at a time", and the unit it names, in the phrase ("one question at a time") or just before it ("make the
# changes one at a time"); "them", "it" or nothing name no unit
UNITS = r"questions|steps|changes|files|edits|fixes|tasks|tests|commands|issues|items"  # plural: "fix" is a verb
ONE_AT_A_TIME = (
    rf"(?:\b(?P<before>{UNITS})\s+)?\bone(?:[ -](?P<unit>question|step|thing|change|file|edit|fix|task|test|command|"
    r"issue|item))?[ -]at[ -]a[ -]time\b"
)


def unit(m: re.Match[str]) -> str | None:
    """The unit a directive's match names (``ONE_AT_A_TIME``'s: "question" for "one question at a time" and for "the
    questions one at a time"), singular; None when it names none. A directive that names its unit is the same
    constraint only as one naming the same unit: "make the changes one at a time" is not "one question at a time"
    said again (a reviewer read that finding as false); a bare one is about the unit of the nearest one naming its
    unit (``repeated._directives``)."""
    groups = m.re.groupindex
    if "unit" not in groups:
        return None
    word = m.group("unit") or m.group("before")
    if not word or word.lower() == "thing":  # "one thing at a time" names no unit
        return None
    word = word.lower()
    return word[:-2] if word.endswith("xes") else word[:-1] if word.endswith("s") else word


# a standing directive; said again anywhere later in the conversation (GUIDE §5: "within this conversation"), it is
# a repeat: the person re-states a constraint (each pattern one constraint, in its languages)
DIRECTIVES = [
    re.compile(p, re.IGNORECASE)
    for p in (
        ONE_AT_A_TIME,
        r"\bstep[ -]by[ -]step\b",
        r"\b(?:don['’]?t|do not|never) (?:change|modify|touch|edit|delete)\b",
        r"\bonly (?:propose|suggest|show)\b",
        r"\b(?:be )?(?:more )?concise\b",
        # "don't change / modify it" and "only suggest" in the other languages people write to agents in
        "(?:변경|수정)\\s*하지\\s*말|(?:변경|수정)하면\\s*안",
        "제안만",
        "一个一个",
        "不要(?:改|修改|动)",
        "(?:変更|修正)しないで|触らないで",
        r"\bne (?:modifie|change|touche)[sz]? (?:pas|rien)\b",
        r"\b(?:nicht (?:ändern|verändern|anfassen)|ändere nichts)\b",
        r"\bno (?:modifiques|cambies|toques)\b",
    )
]

# "it doesn't work": the person's first report that the work failed them is a report (user_pushback), not a repeat;
# said again after an earlier report in the conversation, it is the person repeating that the work is not done (a
# reviewer read a first "it does not work" counted as a repeat as false)
NOT_WORK = re.compile(
    r"\b(?:doesn['’]?t|does not|didn['’]?t|did not|isn['’]?t|is not|not) work(?:ing|s|ed)?\b", re.IGNORECASE
)
