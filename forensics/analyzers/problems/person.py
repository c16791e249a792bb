"""What the person's own turns show (docs/definitions.md#problems-a-reviewer-flags): they had to repeat or correct (``user_repeated``), they are
exasperated with the assistant (``frustration``). Only ``messages.origin = 'person'`` turns are read, in the
person's own words (``messages.person_text``: not a slash command's expansion, a template's body or the IDE's
context); SQL picks them, the rules read each one's first ``HEAD`` characters (what they say, not the log they
paste)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import duckdb

from forensics.analyzers.problems import pasted, restated
from forensics.analyzers.problems.model import Problem, quote_at
from forensics.kernel.selection import SELECTED

HEAD = 400

# the person says the assistant's work failed them or that they said it before (GUIDE §5 user_repeated; the
# baseline's user_pushback patterns are its English core)
REPEATED = re.compile(
    "|".join(
        [
            r"\bstill (?:doesn'?t|does not|isn'?t|is not|not|no|cannot|can'?t|won'?t|getting|get|fails?|failing|broken|the "
            r"same|seeing|see|laggy|there|missing|happening)\b",
            r"\bsame (?:error|issue|problem|exception|result|thing)\b",
            r"\bit'?s the same\b",
            r"\byou (?:forgot|missed|ignored|didn'?t|did not|haven'?t|have not)\b",
            r"^\W*(?:nope|no)\b[,.!]",
            r"^\W*nope\b",
            r"\bno go\b",
            r"\bI (?:said|told you|already told you|already said|asked (?:you )?(?:to|for))\b",
            r"\bas I said\b",
            r"\bwhy did you\b",
            r"\bis still (?:there|here|happening|broken|not)\b",
            r"\bstill (?:seems?|appears?) to\b",
            r"\bI (?:didn'?t|did not|don'?t|do not|can'?t|cannot|never) (?:see|saw)\b",
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
            r"\bte l'ho (?:già )?detto\b",
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

# a standing directive; said again anywhere later in the conversation (GUIDE §5: "within this conversation"), it is
# a repeat: the person re-states a constraint (each pattern one constraint, in its languages)
DIRECTIVES = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bone(?:[ -](?:question|step|thing|change|file))?[ -]at[ -]a[ -]time\b",
        r"\bstep[ -]by[ -]step\b",
        r"\b(?:don'?t|do not|never) (?:change|modify|touch|edit|delete)\b",
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
NOT_WORK = re.compile(r"\b(?:doesn'?t|does not|didn'?t|did not|isn'?t|is not|not) work(?:ing|s|ed)?\b", re.IGNORECASE)


# exasperation with the assistant or the interaction (GUIDE §5 frustration), not with the person's own situation
FRUSTRATED = re.compile(
    "|".join(
        [
            r"\?{4,}",
            r"\?!\?|!\?!",  # runs of question marks; not of exclamation marks ("thanks!!!!")
            r"\byou should know\b",
            r"\bare you (?:\w+ )?(?:kidding|serious|stupid|dumb|even|blind|insane|crazy)\b",
            r"\b(?:you(?:'re| are)|this is|that'?s|so) (?:pathetic|useless|ridiculous|stupid|incompetent)\b",
            r"\bidiot\b",
            r"\bhow many times\b",
            r"\bfor the (?:third|fourth|fifth|tenth|\d+(?:rd|th)) time\b",
            r"\bI suspect you are not\b",
            r"\byou (?:wasted|ruined)\b",
            r"\bseriously[?!]",
            r"\bI'?m (?:so )?(?:tired|sick) of\b",
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


@dataclass
class Turn:
    conversation_id: str
    position: int
    text: str  # the first HEAD characters
    replied: bool  # an assistant message came before it (or the log keeps no reply at all)
    answered: bool  # the conversation holds assistant messages (a prompt log such as Cursor's keeps none)
    answered_next: bool  # an assistant message follows it before the next person turn
    index: int  # 0-based among the conversation's person turns
    chars: int  # the whole turn's length
    full: str = ""  # the whole turn (its first LONG_CHARS) when it is longer than HEAD, else ""


def person_turns(con: duckdb.DuckDBPyConnection) -> list[Turn]:
    """Every selected conversation's person turns on the main path, with whether an answer preceded it."""
    rows = con.execute(f"""
        WITH a AS (SELECT conversation_id, min(position) AS first_reply FROM messages
                   WHERE on_main_path AND role = 'assistant' AND conversation_id IN (SELECT conversation_id FROM {SELECTED})
                   GROUP BY 1)
        SELECT m.conversation_id, m.position, left(coalesce(m.person_text, m.content), {HEAD}),
               a.first_reply IS NULL OR m.position > a.first_reply,
               row_number() OVER (PARTITION BY m.conversation_id ORDER BY m.position) - 1,
               length(coalesce(m.person_text, m.content)),
               CASE WHEN length(coalesce(m.person_text, m.content)) > {HEAD}
                    THEN left(coalesce(m.person_text, m.content), {LONG_CHARS}) ELSE '' END,
               a.first_reply IS NOT NULL,
               EXISTS (SELECT 1 FROM messages r WHERE r.conversation_id = m.conversation_id AND r.on_main_path
                       AND r.role = 'assistant' AND r.position > m.position
                       AND r.position < coalesce(m.next_person, 2147483647))
        FROM (SELECT conversation_id, position, on_main_path, origin, blank, person_text, content,
                     lead(position) OVER (PARTITION BY conversation_id ORDER BY position) AS next_person FROM messages
              WHERE on_main_path AND origin = 'person'
                AND conversation_id IN (SELECT conversation_id FROM {SELECTED})) m
        LEFT JOIN a USING (conversation_id)
        WHERE m.on_main_path AND m.origin = 'person' AND NOT m.blank AND coalesce(m.person_text, m.content) <> ''
        ORDER BY 1, 2""").fetchall()
    return [
        Turn(str(c), int(p), str(t), bool(r), bool(a), bool(x), int(i), int(n), str(f))
        for c, p, t, r, i, n, f, a, x in rows
    ]


def user_repeated(
    turns: list[Turn],
    con: duckdb.DuckDBPyConnection | None = None,
    templates: frozenset[tuple[str, ...]] | None = None,
) -> list[Problem]:
    """A person turn after an answer that says the work failed them or that they said it before (``said_again``),
    or that asks again, nearly word for word, what one of their last turns asked (``asked_again``); with the
    warehouse (``con``), one that pastes back an error the assistant's change did not remove (``error_again``) or
    sends the same message again after it got no reply (``sent_again``, ``pasted``), or restates a request in new
    words (``asked_again_reworded``, ``asked_again_undone``: ``restated``). Turns that follow one
    another, each flagged, are one incident: one finding. ``templates``: the prompt templates' openings (``templates``;
    default: of ``turns``)."""
    hits: list[tuple[Turn, str, str]] = []
    norms: dict[tuple[str, int], str] = {}
    by_conv: dict[str, list[Turn]] = {}
    for t in turns:
        by_conv.setdefault(t.conversation_id, []).append(t)
    templates = _templates(turns) if templates is None else templates
    resent = _resent_after_silence(con, by_conv) if con is not None else {}
    # what the replies did, for the conversations where a turn may restate an earlier one (two person turns or more)
    replies_of = restated.replies(con, [c for c, v in by_conv.items() if len(v) > 1]) if con is not None else None
    for cid, conv in by_conv.items():
        again = pasted.errors_again(con, conv, lambda t: _opening(t.text) in templates) if con is not None else {}
        prompts = {k: o for k, t in enumerate(conv) if (o := _opening(t.text)) in templates}
        reworded = restated.restated(replies_of.get(cid, []) if replies_of is not None else None, conv, prompts)
        for k, t in enumerate(conv):
            if t.index == 0 or not t.replied:
                if k in resent.get(cid, {}):
                    hits.append((t, "sent_again", quote_at(t.text)))
                continue
            said = REPEATED.search(t.text) or (
                NOT_WORK.search(t.text)
                if any(NOT_WORK.search(e.text) or REPEATED.search(e.text) for e in conv[:k])
                else None
            )
            directive = _directive_again(t, conv[:k])
            asked = _asked_before(t, [e for e in conv[max(0, k - 6) : k] if e.answered_next], templates)
            error = again.get(k)
            other = reworded.get(k)
            if other and asked and other[0] == "asked_again_reworded":
                other = None  # the same request asked again word for word: asked_again's reading
            rules = [
                r
                for r, x in (
                    ("said_again", said),
                    ("directive_again", directive),
                    ("asked_again", asked),
                    ("error_again", error),
                    ("sent_again", k in resent.get(cid, {})),
                    (other[0] if other else "", other),
                )
                if x
            ]
            if rules:  # every rule that reads the turn is named; the quote is the first one's
                if said or directive or not error:
                    quote = quote_at(t.text, said or directive)
                else:
                    quote = quote_at(t.full or t.text, error[1])
                hits.append((t, "+".join(rules), quote))
                if error and not (said or directive or asked):
                    norms[(cid, t.position)] = error[2]
                if other and not (said or directive or asked or error):
                    norms[(cid, t.position)] = other[1]
    return _incidents(
        hits,
        by_conv,
        "user_repeated",
        "the person's own earlier turns in this conversation (no corpus norm: their words)",
        norms,
    )


def pasted_loops(
    turns: list[Turn], con: duckdb.DuckDBPyConnection, templates: frozenset[tuple[str, ...]] | None = None
) -> list[Problem]:
    """``loop`` where the agent's changes never touch the error (GUIDE §5: the same action repeated without
    progress; "the same error recurring while the changes do not touch it"), read from the person's side: one error
    pasted back two or more times (``pasted.errors_again``, each after a reply that changed something or proposed a
    change), so it showed three times or more, each proposal leaving it as it was (rule
    ``same_error_pasted_N_times``). The tool-less counterpart of ``actions.recurring_errors``: the person runs
    what the assistant proposes and brings the output back."""
    by_conv: dict[str, list[Turn]] = {}
    for t in turns:
        by_conv.setdefault(t.conversation_id, []).append(t)
    templates = _templates(turns) if templates is None else templates  # (``templates``: of the whole selection)
    out = []
    for cid, conv in by_conv.items():
        again = pasted.errors_again(con, conv, lambda t: _opening(t.text) in templates)
        first: dict[int, list[int]] = {}
        for k in sorted(again):
            first.setdefault(again[k][3], []).append(k)
        for at, ks in first.items():
            if len(ks) < 2:
                continue
            last = conv[ks[-1]]
            n = len(ks) + 1
            out.append(
                Problem(
                    cid,
                    "loop",
                    [at] + [conv[k].position for k in ks],
                    quote_at(last.full or last.text, again[ks[-1]][1]),
                    f"same_error_pasted_{n}_times",
                    f"the error first shown at [{at}] came back {n - 1} times, each after the assistant changed or "
                    "proposed a change (GUIDE §5: 3 or more without progress)",
                )
            )
    return out


def _resent_after_silence(con: duckdb.DuckDBPyConnection, by_conv: dict[str, list[Turn]]) -> dict[str, dict[int, str]]:
    """``pasted.sent_again`` over the conversations whose log keeps replies and where a person turn is the one
    before it again with no reply between (their times read only there)."""
    cands = [
        cid
        for cid, conv in by_conv.items()
        if conv[0].answered
        and any(
            not conv[k - 1].answered_next and _norm(conv[k - 1].text) == _norm(conv[k].text)
            for k in range(1, len(conv))
        )
    ]
    if not cands:
        return {}
    when = pasted.times(con, cands)
    return {cid: found for cid in cands if (found := pasted.sent_again(by_conv[cid], when.get(cid, {})))}


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
    r"(?<!\w)(?:you|your|you'?re|yours|u|ты|тебя|тебе|тобой|твой|твоя|твоё|твое|твои|твою|вы|вас|вам|ваш\w*|du\s+\w+st|"
    r"dich|dir|dein\w*|tu|toi|ton|ta|tes|vous|votre|tú|ti|usted|você|voce|vc)(?!\w)|你|너|니가|네가|당신|お前|おまえ|あなた|君",
    re.IGNORECASE,
)
# a turn that opens by rejecting the reply
REJECTS = re.compile(
    r"^\W*(?:no|nope|wrong|that'?s not (?:it|right|what)|нет|не то|nein|non|não|不是|不对|아니|違う)(?!\w)",
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
    by_conv: dict[str, list[Turn]] = {}
    for t in turns:
        by_conv.setdefault(t.conversation_id, []).append(t)
    return _incidents(hits, by_conv, "frustration", "the person's own words (no corpus norm)")


def _incidents(
    hits: list[tuple[Turn, str, str]],
    by_conv: dict[str, list[Turn]],
    kind: str,
    norm: str,
    norms: dict[tuple[str, int], str] | None = None,
) -> list[Problem]:
    out: list[Problem] = []
    last: dict[str, int] = {}  # conversation -> index of the last flagged person turn
    for t, rule, quote in hits:
        prev = last.get(t.conversation_id)
        if prev is not None and t.index - prev <= 1 and out and out[-1].conversation_id == t.conversation_id:
            out[-1].positions.append(t.position)
            out[-1].rule = "+".join(dict.fromkeys(out[-1].rule.split("+") + rule.split("+")))
        else:
            out.append(
                Problem(
                    t.conversation_id,
                    kind,
                    [t.position],
                    quote,
                    rule,
                    (norms or {}).get((t.conversation_id, t.position), norm),
                )
            )
        last[t.conversation_id] = t.index
    return out


MIN_WORDS = 5  # shorter turns ("yes please", "OK, continue", "????") repeat without asking anything again
SIMILAR = 0.6  # share of character trigrams two turns share (Jaccard) to be the same request re-asked
RESENT = 0.9  # share of word trigrams a long turn shares with an earlier one (Jaccard) to be the same text sent again
GROWN = 2.0  # ... or opens with its words, holds RESENT of its trigrams and is at most this many times as long: the
# request sent again with more said
OPENING = 12  # the words a turn opens with; an opening that person turns of TEMPLATE or more conversations share is a
TEMPLATE = 3  # harness's or a benchmark's prompt template, not one person's request
LONG_WORDS = 20  # word trigrams a long turn needs to be compared at all
LONG_CHARS = 20_000  # characters of a long turn compared
WORD = re.compile(r"\w+")


def _directive_again(t: Turn, earlier: list[Turn]) -> re.Match[str] | None:
    for d in DIRECTIVES:
        if (m := d.search(t.text)) and any(d.search(e.text) for e in earlier):
            return m
    return None


def _opening(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(text.lower())[:OPENING])


def templates(con: duckdb.DuckDBPyConnection) -> tuple[frozenset[tuple[str, ...]], list[tuple[str, str]]]:
    """The openings that person turns of ``TEMPLATE`` or more selected conversations share, and per conversation
    the ones of them its turns open with (conversation_id, the opening's words): what a conversation's
    ``user_repeated`` findings read from the others."""
    turns = person_turns(con)
    shared = _templates(turns)
    return shared, sorted({(t.conversation_id, "\x1f".join(o)) for t in turns if (o := _opening(t.text)) in shared})


def _templates(turns: list[Turn]) -> frozenset[tuple[str, ...]]:
    """The openings that person turns of ``TEMPLATE`` or more conversations share (a prompt template)."""
    seen: dict[tuple[str, ...], set[str]] = {}
    for t in turns:
        if len(o := _opening(t.text)) == OPENING:
            seen.setdefault(o, set()).add(t.conversation_id)
    return frozenset(o for o, c in seen.items() if len(c) >= TEMPLATE)


def _asked_before(t: Turn, earlier: list[Turn], templates: frozenset[tuple[str, ...]] = frozenset()) -> Turn | None:
    """The latest of ``earlier`` (turns the assistant answered) whose text is nearly ``t``'s. Short turns of one
    or two lines by their character trigrams; a long one (a pasted log or script, a harness's templated prompt:
    benchmark steps share most of their words and ask something new each time) only when it is the same text
    again, word for word but for a few words (``_resent``)."""
    if len(t.text.split()) < MIN_WORDS:
        return None
    if t.chars > HEAD or t.text.strip().count("\n") > 1:
        return _resent(t, earlier, templates)
    mine = _norm(t.text)
    for e in reversed(earlier):
        if e.chars > HEAD:
            continue
        theirs = _norm(e.text)
        if mine == theirs and e.index == t.index - 1:
            return None  # the same text twice in a row: a re-delivery, not a repeat after an answer
        if _similar(mine, theirs):
            return e
    return None


def _resent(t: Turn, earlier: list[Turn], templates: frozenset[tuple[str, ...]] = frozenset()) -> Turn | None:
    """The latest of ``earlier`` that ``t`` sends again: their word trigrams agree on ``RESENT`` of their union, or
    ``t`` opens with the earlier one's ``OPENING`` words (not a template's), holds ``RESENT`` of its trigrams and is
    at most ``GROWN`` times as many (a request pasted again, maybe with more said, after an answer that did not do
    it; a turn that only attaches the same file again opens otherwise). Not the turn just before it sent twice in a
    row (a re-delivery)."""
    mine = _words(t.full or t.text)
    opening = _opening(t.text)
    for e in reversed(earlier):
        theirs = _words(e.full or e.text)
        if len(mine) < LONG_WORDS or len(theirs) < LONG_WORDS:
            continue
        shared = len(mine & theirs)
        if shared / len(mine | theirs) >= RESENT or (
            shared / len(theirs) >= RESENT
            and len(mine) <= GROWN * len(theirs)
            and len(opening) == OPENING
            and opening == _opening(e.text)
            and opening not in templates
        ):
            return None if e.index == t.index - 1 and mine == theirs else e
    return None


def _words(text: str) -> frozenset[tuple[str, ...]]:
    w = WORD.findall(text.lower())
    return frozenset(tuple(w[k : k + 3]) for k in range(len(w) - 2))


@functools.lru_cache(maxsize=4096)
def _norm(text: str) -> str:
    return " ".join(text.lower().split())


@functools.lru_cache(maxsize=4096)
def _grams(text: str) -> frozenset[str]:
    return frozenset(text[k : k + 3] for k in range(len(text) - 2))


def _similar(a: str, b: str) -> bool:
    ga, gb = _grams(a), _grams(b)
    return bool(ga and gb) and len(ga & gb) / len(ga | gb) >= SIMILAR
