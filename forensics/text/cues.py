"""How people say, in so many words, that they move on, stay, or are done: hand-written cue phrases of a language.

A user who opens a new request says so with a verb and an indefinite object ("I'm looking for a hotel",
"can you add a retry", "帮我推荐一家餐馆", "再写一个测试"); one who adds a request says "I also need",
"另外", "还想"; one who stays on the subject refers back to it ("it", "their", "这家", "那个"); an assistant
that has finished offers more ("anything else?", "还有什么需要"). A message made only of social words
("Thank you so much for your help!", "好的谢谢", "Talk soon.") closes or acknowledges and carries no topic at
all. These cues are general phrasings of English and Chinese, not the vocabulary of any corpus: every list is
a config key (``[topic] request_cues`` ...; regexes, case-insensitive, searched anywhere in the message;
``social_words``: whole words), so a harness in another language or style adds its own. The topic analyzer
uses them (``analyzers/topics/signals.py``); they live here, with the stop words, because they are text of a
language, not analysis.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from forensics.text.prose import request_sentences

# A request names what it wants after its verb and an indefinite article. When that object is the booking of the thing
# being discussed ("I need a table for 7", "book a room there", "is there a reference number", "订一间房"; not 票价 or 房价, a price), the person
# acts on the current request, not a new one; a booking whose object is a new thing ("book a taxi", "I need to book a
# train") is one. Searching for or building something is a new request whatever its object ("finding a room",
# "add a table", "create a booking form"), but "make a reservation / booking" books.
IN_PLAY = r"(?:reservations?|bookings?|reference|tables?|rooms?|tickets?|seats?|one)\b"
REQUEST_CUES = [
    r"\b(?:need|want|recommend|suggest|is there|are there|if there (?:is|are)|do you have|do you know|know of|"
    r"help me with|would like|i ?['’]d like|tell me about|interested in|book|reserve)\b"
    rf"(?: me| to (?!be\b)[a-z]+| for)?\s+(?:a|an|some|another|any|new)\b(?!\s+{IN_PLAY})",
    r"\b(?:looking for|look for|search(?:ing)? for|find(?:ing)?|add|write|create|implement|build|set up|design|"
    r"start)\b(?: me| to (?!be\b)[a-z]+| for)?\s+(?:a|an|some|another|any|new)\b",
    r"\bmake\b(?: me| to (?!be\b)[a-z]+| for)?\s+(?:a|an|some|another|any|new)\b(?!\s+(?:reservations?|bookings?)\b)",
    r"\binformation (?:on|about|regarding|for) (?:a|an|the|some)\b",  # "I need information on the corn exchange"
    r"(?:找|推荐|订|预订|预定|叫|安排|有没有|想去|想找|想吃|想住|查一下|查查|帮我查|再来|需要|想要|要|写|加|做|建)"
    r"(?:一个|一家|一间|一辆|一下|个|家|些|一些|一处|一条|一份)(?!房(?!价)|位子|座位|桌位|票(?!价))",
]
ADDITION_CUES = [
    r"\b(?:i also|i'd also|i would also|also need|also looking|also want|also like|also interested|now i|next,? i|"
    r"another thing|one more thing|in addition|additionally|as well as|as for|what about|how about)\b",
    r"另外|还想|还要|还需要|还得|再帮我|接下来|然后帮我|顺便|还有个|还有一个|对了|换个|此外",
]
REFERENCE_CUES = [
    r"^(?:it|its|it's|they|their|them|that|this|those|these|the same|he|she|his|her)\b|"
    r"\b(?:it|its|their|them|that one|this one|the same)\b",
    # booking what is being discussed points back at it: "book me for one", "book that for 5 nights", "reserve a table
    # there", "the reservation", "make (me) a reservation", as REQUEST_CUES reads it (not "book me a taxi": a new thing;
    # nor "I need a reservation at a new hotel": an indefinite reservation not being made is no reference; in Chinese
    # 这家 / 它 above already say it)
    r"\b(?:book|reserve)\s+(?:(?:me|us)\s+(?:for|in|at|into)\b|(?:it|that|this|them|one|for|there)\b|"
    r"a (?:table|room|seat)s?\b)|\b(?:the|make(?: me| us)? a) (?:reservation|booking)\b",
    r"这家|这个|那家|那个|该|它|这里|那里|这些|那些|此",
]
OFFER_CUES = [
    r"anything else|something else|else (?:i|we) can|what else can (?:i|we)|further assist|"
    r"help you with (?:anything|something)",
    r"还有(?:什么|其他|别的)|其他(?:需要|问题)|还需要(?:什么|帮)",
]
# A reply that closes by proposing to do something specific ("If you want more fields, I can expand the schema",
# "Would you like me to add tests?", "需要我帮你预订吗？"): the person who says "yes, please do" takes it up.
PROPOSAL_CUES = [
    r"\b(?:i can|i could|shall i|should i|would you like(?: me)? to|do you want me to|want me to|"
    r"if you(?:'d)? (?:like|want|prefer)|let me know if you(?:'d)? (?:like|want))\b",
    r"需要我|要不要我|要我|我可以(?:帮|为|给|再)|是否需要|如果(?:你|您)?(?:需要|愿意|想)",
]
# A booking act, read as a verb ("can you book", "I'd like to book", "Book rooms ...", "make a reservation", "I'll need
# it booked"), not the noun ("a book for my son"); group 1 / 2: the words after it up to its particulars ("for 7
# people", "on Friday"), its object when it has one ("a expensive hotel", "the one on Regent": "one").
_PARTICULAR = r"(?:for|on|at|in|from|starting|beginning|with|to|and|please|there|now)\b"
_OBJECT = rf"((?!{_PARTICULAR})[\w'’]+(?:\s+(?!{_PARTICULAR})[\w'’]+){{0,2}})?"  # up to its particulars
_BOOKING_ACT = re.compile(
    r"(?:^|[.!?,;]\s*|\b(?:to|please|you|i|we|let'?s|and|then|just)\s+)(?:book|reserve)\b\s*(?:(?:me|us|you)\s+)?"
    rf"(?:(?:a|an|the|one|some)\s+)?{_OBJECT}|"
    rf"\b(?:make|get|have|need|want|like|book)\s+(?:a|the)\s+(?:reservation|booking)s?\b\s*{_OBJECT}|"
    r"\b(?:it|that|them)\s+(?:booked|reserved)\b()",
    re.IGNORECASE,
)
# What a booking act's object can be when it books the thing in play: nothing (straight to its particulars: "book
# for 7 people", "book starting Friday"), a reference back ("book it / that / the one on Regent"), a number.
_NO_OBJECT = frozenset(
    "for on at in from starting beginning just please now it that this them there one of with to and a an the".split()
)
_IN_PLAY_OBJECT = re.compile(IN_PLAY, re.IGNORECASE)
# A reply's closing question that offers a booking ("may I book that for you?", "Would you like to make a booking?",
# "Shall I reserve a room?"), and the words a booking's particulars are said in (English): a party, a stay, a day, a
# time, the booking's reference. A person who accepts the offer with these words alone ("Yes please, for 6 people and
# 2 nights starting Saturday. Could I also get the reference number?") books the thing in play (``signals.accepts_booking``).
BOOKING_OFFER = re.compile(r"\b(?:book|reserve|booking|reservation)", re.IGNORECASE)
BOOKING_PARTICULARS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve people person guest adult child children party "
    "night day week weekend stay staying starting beginning arriving monday tuesday wednesday thursday friday "
    "saturday sunday today tonight tomorrow am pm reference number reservation booking table room ticket seat".split()
)
_IN_PLAY_WORD = re.compile(r"\b" + IN_PLAY, re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def books_in_play(said: str, used: Callable[[str], bool]) -> bool:
    """The person's request words book the thing in play, and nothing new: every booking act's object is absent, a
    reference back, a number, a unit booked ("a table", "rooms", ``IN_PLAY``) or a word the conversation has already
    used, in any form (``used``: "book a stay for eight" after "a place to stay" or "staying"), and no other request
    asks for a new thing (the caller checks the request cues). "Will you book it for a party of 7", "Can you make a reservation for
    Friday at 17:15 for 3 people?": the particulars of the request being served, not a new one; "I need to book a
    train" (a word not used yet) and "book me a taxi" are new requests."""
    acts = list(_BOOKING_ACT.finditer(said))
    if not acts:
        return False
    for a in acts:
        for word in (a.group(1) or a.group(2) or "").lower().split():
            if word not in _NO_OBJECT and not word.isdigit() and not _IN_PLAY_OBJECT.match(word) and not used(word):
                return False
    return True


SOCIAL_WORDS = [
    "thanks",
    "thank",
    "thx",
    "ty",
    "cheers",
    "bye",
    "goodbye",
    "help",
    "helpful",
    "assistance",
    "great",
    "perfect",
    "awesome",
    "wonderful",
    "excellent",
    "fantastic",
    "brilliant",
    "lovely",
    "nice",
    "good",
    "fine",
    "cool",
    "sure",
    "ok",
    "okay",
    "alright",
    "appreciate",
    "appreciated",
    "much",
    "lot",
    "day",
    "today",
    "night",
    "evening",
    "morning",
    "now",
    "everything",
    "anything",
    "nothing",
    "else",
    "talk",
    "soon",
    "later",
    "care",
    "welcome",
    "stop",
    "done",
    "set",
    "time",
    "need",
    "needed",
    "wish",
    "hope",
    "happy",
    "glad",
    "see",
    "sound",
    "sounds",
    "谢谢",
    "多谢",
    "感谢",
    "谢啦",
    "好的",
    "好",
    "行",
    "可以",
    "嗯",
    "恩",
    "哦",
    "噢",
    "再见",
    "拜拜",
    "辛苦",
    "辛苦了",
    "麻烦",
    "帮忙",
    "太好了",
    "不错",
    "知道",
    "明白",
    "收到",
    "没有",
    "没了",
    "不用",
    "暂时",
    "先",
    "这样",
]
REGISTER_WORDS = [
    "sorry",
    "apologize",
    "apologise",
    "apologies",
    "understand",
    "understood",
    "frustrated",
    "frustrating",
    "disappointed",
    "disappointing",
    "unacceptable",
    "upset",
    "annoyed",
    "angry",
    "ridiculous",
    "insist",
    "insisting",
    "urgent",
    "urgently",
    "asap",
    "immediately",
    "kindly",
    "honestly",
    "seriously",
    "definitely",
    "absolutely",
    "certainly",
    "exactly",
    "actually",
    "basically",
    "literally",
    "totally",
    "simply",
    "truly",
    "assist",
    "assistance",
    "help",
    "helpful",
    "hi",
    "hello",
    "hey",
    "dear",
    "sir",
    "madam",
    "mate",
    "pls",
    "plz",
    "thx",
    "thanks",
    "thank",
    "appreciate",
    "appreciated",
    "grateful",
    "ok",
    "okay",
    "sure",
    "yes",
    "yeah",
    "yep",
    "fine",
    "great",
    "awesome",
    "perfect",
    "nice",
    "cool",
    "wow",
    "hmm",
    "um",
    "uh",
    "lol",
    "抱歉",
    "对不起",
    "不好意思",
    "麻烦",
    "请",
    "请问",
    "谢谢",
    "感谢",
    "您好",
    "你好",
    "急",
    "马上",
    "赶紧",
    "真的",
    "确实",
]
OFFER_TAIL_CHARS = 200  # an offer closes a reply: only its end is searched
# A request cue just after a negation asks for nothing ("I don't need a table", "we do not want a new API", "不需要一个"):
# the words between the negation and the cue (at most two: "don't really need a") stay in the same clause; in Chinese
# only a negation right before the cue ("不需要", "不想找": 特别 or 没 inside a word would read as one).
NEGATION_CHARS = 24
_NEGATED = re.compile(
    r"(?:\bn[o']?t|n ?['’]t|\bnever|\bno longer|\bwithout)\s+(?:\w+\s+){0,2}$|(?:不|不用|无需)$",
    re.IGNORECASE,
)


class CueSettings(Protocol):
    """The cue keys of a config section (the topic analyzer's ``TopicSettings``; this layer sits below it)."""

    @property
    def request_cues(self) -> list[str]: ...
    @property
    def addition_cues(self) -> list[str]: ...
    @property
    def reference_cues(self) -> list[str]: ...
    @property
    def offer_cues(self) -> list[str]: ...
    @property
    def social_words(self) -> list[str]: ...
    @property
    def register_words(self) -> list[str]: ...
    @property
    def proposal_cues(self) -> list[str]: ...


@dataclass(frozen=True)
class Cues:
    """The compiled cue sets (built once per config: small and picklable for the workers)."""

    request: tuple[str, ...]
    addition: tuple[str, ...]
    reference: tuple[str, ...]
    offer: tuple[str, ...]
    social: frozenset[str]
    register: frozenset[str] = frozenset()
    proposal: tuple[str, ...] = tuple(PROPOSAL_CUES)

    @classmethod
    def from_settings(cls, s: CueSettings) -> Cues:
        """From the ``[topic]`` cue keys (``forensics.analyzers.topics.settings.TopicSettings``)."""
        return cls(
            tuple(s.request_cues),
            tuple(s.addition_cues),
            tuple(s.reference_cues),
            tuple(s.offer_cues),
            frozenset(w.lower() for w in s.social_words),
            frozenset(w.lower() for w in s.register_words),
            tuple(s.proposal_cues),
        )

    def signals(self, text: str, before: str) -> dict[str, float]:
        """The cue signals of a judged message (``before``: the text of the message before it, any role); the
        message's cues are searched where the person makes a request (``prose.request_sentences``)."""
        said = request_sentences(text)
        return {
            "request": float(_asks(self.request, said)),
            "addition": float(_any(self.addition, said)),
            "reference": float(_any(self.reference, said)),
            "offered": float(self.offers(before)),
        }

    def offers(self, reply: str) -> bool:
        """The reply ends by offering more help ("anything else?")."""
        return _any(self.offer, reply[-OFFER_TAIL_CHARS:])

    def proposes(self, closing: str) -> bool:
        """The closing sentences of a reply propose to do something specific ("I can expand the schema"), not
        just more help in general ("anything else I can do?")."""
        return _any(self.proposal, closing) and not _any(self.offer, closing)

    def books_in_play(self, text: str, used: Callable[[str], bool]) -> bool:
        """The message books the thing in play (``books_in_play``) and asks for no new thing: no request cue beside
        the booking acts ("book a stay" is one when its object is in play), and a
        sentence with an addition cue asks for a unit in play ("I'll also need the reference number"), not for
        something else ("I also need a taxi") nor for another booking ("I'm also looking to book a room at the
        Autumn House")."""
        said = request_sentences(text)
        return (
            books_in_play(said, used)
            and not _asks(self.request, _BOOKING_ACT.sub(" ", said))
            and not any(
                _any(self.addition, x) and (_BOOKING_ACT.search(x) or not _IN_PLAY_WORD.search(x))
                for x in _SENTENCE_END.split(said)
            )
        )

    def topical(self, words: Iterable[str]) -> list[str]:
        """The words that can say what a message is about: social and register words left out."""
        return [w for w in words if w.lower() not in self.social and w.lower() not in self.register]

    def social_only(self, words: Iterable[str]) -> bool:
        """Every content word is a social one (thanks, bye, help, 好的): a closing or an acknowledgment."""
        return all(w.lower() in self.social for w in words)


def _asks(patterns: tuple[str, ...], text: str) -> bool:
    """A request cue that is not negated: "I don't need a table" declines what was offered, it asks for nothing."""
    return any(
        not _NEGATED.search(text[max(0, m.start() - NEGATION_CHARS) : m.start()]) for m in _matches(patterns, text)
    )


def _matches(patterns: tuple[str, ...], text: str) -> list[re.Match[str]]:
    return [m for p in patterns for m in _compiled(p).finditer(text)]


def _any(patterns: tuple[str, ...], text: str) -> bool:
    return any(_compiled(p).search(text) for p in patterns)


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def invalid_regex(patterns: Iterable[str]) -> str | None:
    """Why a configured cue list is unusable (an empty or invalid regex), or None."""
    for p in patterns:
        try:
            if not p or _compiled(p).search(""):
                return f"{p!r} matches the empty string: it would match every message"
        except re.error as e:
            return f"{p!r} is not a valid regex ({e})"
    return None
