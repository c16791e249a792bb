"""What a message says about whether it starts a new topic: a small set of signals any conversation offers.

For each judged message the signals compare it with what came before on the main path (every role's text,
plus the targets of the assistant's tool calls: paths, queries, commands):

- lexical cohesion (TF-IDF cosine, docs/definitions.md#tokenizer-and-keywords) with the previous message and with the recent context;
- novelty: the share of its weighted terms the conversation has not used yet, and whether it names an
  entity or identifier (a title, a name, a file path, an error string) never seen before;
- hand-off: whether it picks up terms or an entity that the previous message just introduced (the other
  party's new subject becoming the topic);
- dialogue structure: a question opens a line of talk, an answer to the previous message's question
  continues it, an acknowledgment followed by a new question is the classic way to change the subject;
- cue phrases at the start: "by the way", "另外", "换个话题" announce a switch; "yes", "also", "那", "这个"
  tie the message to what was just said;
- the user's own line: cohesion and novelty against the earlier judged messages and the tool-call targets
  (in assistant logs the message before a user turn is a long reply that echoes everything), and insisting:
  repeating the previous judged message's subject that the replies in between ignored;
- look-ahead (offline analysis sees the whole conversation): cohesion across the gap between the block
  before a message and the block it opens (TextTiling's idea on messages);
- request cues (``cues.py``): a new request ("I'm looking for a", "帮我推荐一家"), an added one ("I also need",
  "另外"), a reference back ("it", "这家"), and a reply before it that offered more ("anything else?");
- the corpus's recurring topics (``corpus.py``): the probability, under a sticky topic model fitted on the
  corpus itself, that the message's topic differs from the previous judged message's;
- optionally (``[topic] embedding``, the ``embedding`` extra), meaning-level cohesion: the cosine of sentence
  embeddings with the previous message, with the recent context, and with the next message (whether the
  other party takes the new subject up; see ``embedding.py``).

A message made only of social words (thanks, bye, 好的; ``cues.Cues.social_only``) has no signals: like a
content-free one it carries no topic, so it never starts one. No signal needs labels. How they combine into
one switch score lives in ``model.py``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from forensics.analyzers.topics.corpus import CorpusTopics
from forensics.text import engine
from forensics.text.cues import BOOKING_OFFER, BOOKING_PARTICULARS, Cues
from forensics.text.identifiers import ENTITY_IDENTIFIER, ENTITY_PATH
from forensics.text.keywords import content_tokens, content_tokens_modes
from forensics.text.prose import own_words, request_sentences

FEATURES = (
    "cos_prev",
    "cos_ctx",
    "novel",
    "handoff",
    "entity_new",
    "entity_handoff",
    "length",
    "question",
    "answers",
    "ack_then_question",
    "cue_shift",
    "cue_continue",
    "depth",
    "cos_judged",
    "cos_judged_ctx",
    "cos_targets",
    "novel_judged",
    "entity_new_judged",
    "insists",
    "gap",
    "next_departs",
    "request",
    "addition",
    "reference",
    "offered",
    "topic_switch",
    "plain_switch",
)
# cos_judged .. insists compare a message with the earlier *judged* messages and the tool-call targets only. When just the
# user is judged (assistant logs) the previous message is a long assistant reply that echoes every term, so
# cohesion and novelty must be measured against the user's own line of requests and where the tools pointed.
CUE_FEATURES = ("request", "addition", "reference", "offered")
CORPUS_FEATURES = ("topic_switch", "plain_switch")  # corpus.CorpusTopics chains: topic (factorial), plain
EMBEDDING_FEATURES = ("emb_prev", "emb_ctx", "emb_next")  # only when sentence vectors are given (the optional extra)
CONTEXT_MESSAGES = 4  # messages (any role) that make up the recent context
JUDGED_CONTEXT = 3  # earlier judged messages that make up the judged context
TARGET_MESSAGES = 8  # messages back whose tool-call targets count as "where the work currently is"
# gap and next_departs look ahead (the analysis is offline: the whole conversation is there), TextTiling-style: a
# boundary before a message shows as low cohesion between the block before it and the block it opens, and
# as a next message that does not return to the old block either.
BLOCK = 2  # messages per block on each side of the gap
DEPTH_CAP = 5  # judged messages after which the conversation counts as fully under way
FRESH_WORDS, FRESH_SHARE, FRESH_COHESION = 2, 0.5, 0.05  # see _fresh
RARE_SHARE, RARE_MIN = 0.005, 3  # a word in at most this share of the corpus's messages (at least this many) is rare
QUESTION_SENTENCES = 2  # the closing sentences of a reply that make up its question
REPEATS = 0.5  # cosine with the previous judged message from which a request repeats it (insisting)
SIGN_OFF_MIN, SIGN_OFF_SHARE = 3, 0.5  # replies ending with an offer, and their share, that make it a sign-off

_SENT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+")  # "document.title?" is one sentence, "好。那" two
_QUESTION = re.compile(r"[?？]\s*[\"'”）)]*\s*$|[吗呢么嘛][。！!~～]*\s*$")
_TITLE = re.compile(r"《([^》]{1,40})》|【([^】]{1,40})】|「([^」]{1,40})」")
_DOT_NAME = re.compile(r"[\u4e00-\u9fff]{1,4}(?:·[\u4e00-\u9fff]{1,6})+")
_CODE = re.compile(r"`([^`\n]{2,80})`")
_ERROR = re.compile(r"\b\w*(?:Error|Exception)\b|\b(?:panic|traceback|errno|E\d{3,4})\b")
_ENTITY_FILE = re.compile(ENTITY_PATH.pattern.split("|", 1)[1])  # ENTITY_PATH without its first form (a/b)
_NAME = re.compile(r"(?<![.!?。]\s)(?<!^)\b[A-Z][a-z]{2,}(?:\s+[A-Z][a-z]{2,})*")

SHIFT_CUES = (
    "by the way",
    "btw",
    "anyway",
    "another thing",
    "switching topic",
    "on another note",
    "speaking of",
    "let's park",
    "lets park",
    "changing the subject",
    "new topic",
    "unrelated",
    "separately",
    "另外",
    "对了",
    "换个话题",
    "顺便",
    "说到",
    "话说",
    "先放一放",
    "这个先放",
    "题外话",
    "还有个问题",
    "另一个问题",
)
CONTINUE_CUES = (
    "yes",
    "yeah",
    "yep",
    "yup",
    "no",
    "nope",
    "me too",
    "same",
    "also",
    "too",
    "and ",
    "so ",
    "it ",
    "it's",
    "that",
    "this",
    "they",
    "he ",
    "she ",
    "his ",
    "her ",
    "them",
    "thanks",
    "thank you",
    "ok",
    "是的",
    "是啊",
    "对",
    "嗯",
    "哦",
    "噢",
    "啊",
    "确实",
    "没错",
    "那",
    "还",
    "也",
    "这",
    "他",
    "她",
    "它",
    "该",
    "此",
    "再",
    "继续",
    "然后",
    "而且",
    "所以",
    "不过",
    "但",
)
# acknowledgments a reply opens with before it goes on ("OK, and ...", "好的，那..."): what follows them is the reply
_ACK = re.compile(
    r"^(?:[\s,.!，。！、]*(?:ok(?:ay)?|great|thanks|thank you|sure|right|cool|good|yes|yeah|好的|好|嗯|行|"
    r"对|是的|谢谢))+[\s,.!，。！、]*",
    re.IGNORECASE,
)
_CLOSED = re.compile(r"[.!,;:。！，；：~～…]\s*$")  # an opening sentence closed by its punctuation
# A sentence that accepts what was offered or proposed: "yes", "sure", "ok", "please do", "go ahead", "好的".
_ACCEPT = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|sure|ok(?:ay)?|alright|please do|please go ahead|go ahead|do it|"
    r"sounds good|let'?s do (?:it|that)|agreed|好的|好|可以|行|嗯|是的)\b",
    re.IGNORECASE,
)
_DECLINE = re.compile(r"^\W*(?:no|nope|nah|not now|not yet|don'?t|do not|不用|不要|不了|不必|算了)\b", re.IGNORECASE)
# A reply that found nothing and closes by asking for another choice ("There are no matching options for japanese
# restaurants, can I lookup something else?", "Unfortunately there are none. Would you like to try a different
# cuisine?"), not by offering help in general ("Can I help you with something else?", "Is there anything else
# today?"): the person's next request is
# the choice it asks for, the same search retried (see retries).
# "n't" ends a word ("isn't", "don’t"): no word boundary before its "n"; MultiWOZ's tokenized "is n't", "do nt" have one
_FOUND_NOTHING = re.compile(r"(?:\b(?:no|none|nothing|unfortunately|n'?t|not|cannot|unable)|n['’]t)\b", re.IGNORECASE)
_ASKS_OTHER = re.compile(
    r"^(?!.*\b(?:help|assist|anything)\b).*(?:\b(?:something|somewhere) else\b|\b(?:a different|another|other)\s+\w|"
    r"\binstead\b)",
    re.IGNORECASE | re.DOTALL,
)
# a request that asks for a search again: one opening "how about ...", "what about ...", "any ...?", or one asking
# "are there any ...", "is there a ...", "do you have any ..." ("Since there are none, is there any Italian one?")
_SEARCHES_AGAIN = re.compile(
    r"^\W*(?:and\s+)?(?:how|what)\s+about\b|^\W*any\b|\b(?:(?:are|is)\s+there|do\s+you\s+have)\s+(?:a|an|any)\b",
    re.IGNORECASE,
)
CLOSING_CHARS = 400  # the end of a reply where it proposes what to do next ("Would you like me to:" and a list)
_ELLIPSIS = re.compile(r"^\W*(?:and\s+)?(?:what|how)\s+about\b(.*)$", re.IGNORECASE | re.DOTALL)
ELLIPSIS_TERMS = 2  # "what about <this one>?": at most this many content words after the cue
_DEMONSTRATIVE = re.compile(
    r"\b(?:this|these|those)\s+(?!is\b|are\b|was\b|were\b|will\b|would\b|should\b|could\b|"
    r"can\b|may\b|might\b|must\b|has\b|have\b|had\b|does\b|do\b|did\b)[a-z]{3,}|这个|这些|那个|那些",
    re.IGNORECASE,
)  # a demonstrative naming a thing: "this variable", "these files", "这个函数"
ACK_MAX_TOKENS = 3  # an opening sentence this light ("that is nice.", "哈哈，好的。") is an acknowledgment


def stem(tok: str) -> str:
    """Fold English plurals so "pets" meets "pet"; Han tokens pass unchanged."""
    if tok.isascii() and len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss"):
        return tok[:-1]
    return tok


def terms(text: str, mode: str = "jieba+bigram") -> list[str]:
    """Content tokens (the tokenizer, stop words out), English plurals folded."""
    return [stem(t) for t in content_tokens(text, mode)]


def entities(text: str, proper_nouns: bool = True) -> set[str]:
    """Names and identifiers: titles in 《》【】, dotted Chinese names, paths, `code`, identifiers, errors, and
    (``proper_nouns``) the Chinese person/place/organisation names jieba's tagger finds."""
    out: set[str] = set()
    # each pattern run only where the text holds what its every match must (most texts hold no title, dot name, code
    # span or path)
    if "《" in text or "【" in text or "「" in text:
        for m in _TITLE.finditer(text):
            out.add(next(g for g in m.groups() if g).strip().lower())
    if "·" in text:
        out.update(x.lower() for x in _DOT_NAME.findall(text))
    if "/" in text:
        out.update(x.lower() for x in ENTITY_PATH.findall(text))
    elif "." in text:  # a file name alone (ENTITY_PATH's other form needs a /)
        out.update(x.lower() for x in _ENTITY_FILE.findall(text))
    if "`" in text:
        out.update(x.strip().lower() for x in _CODE.findall(text))
    out.update(x.lower() for x in ENTITY_IDENTIFIER.findall(text))
    out.update(x.lower() for x in _ERROR.findall(text))
    out.update(x.lower() for x in _NAME.findall(text) if x.lower() not in _COMMON_CAPS)
    if proper_nouns and _HAN.search(text):
        out.update(tagged_names(text[:POSSEG_CHARS]))
    return {e for e in out if len(e) > 1}


def tagged_names(text: str) -> set[str]:
    """The person, place, organisation and other proper names (of two characters or more) jieba's tagger finds.

    The tagger cuts a text into blocks (runs of Han, letters and digits) and tags each alone, and only a block
    can hold a name, so tagging block by block gives what tagging the whole text gives; blocks recur (a name, a
    phrase people repeat), so the last ones tagged are kept. The tagger's HMM was half of a first report's
    tokenizing."""
    pattern = engine.BLOCK
    return {w for block in pattern.split(text) if pattern.match(block) for w in _block_names(block)}


@lru_cache(maxsize=1 << 12)  # a block is at most POSSEG_CHARS: a few MB kept at most
def _block_names(block: str) -> tuple[str, ...]:
    return tuple(w for w, flag in engine.tag(block) if flag in PROPER_NOUN_TAGS and len(w) > 1)


POSSEG_CHARS = 500  # the tagger is slow (HMM); a message names its subject early
PROPER_NOUN_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})  # jieba: person, place, organisation, other
_HAN = re.compile(r"[\u4e00-\u9fff]")


_NAMES = re.compile(rf"`[^`\n]*`|{ENTITY_PATH.pattern}|{ENTITY_IDENTIFIER.pattern}")  # code spans, paths, identifiers
_NAME_PART = re.compile(r"[^a-z\u00c0-\u024f\u0400-\u04ff]+")  # "extra/kvantum-qt5" -> extra, kvantum, qt
_COMMON_CAPS = frozenset(
    "the this that what when where why how yes yeah well okay also there they then and but "
    "hello thanks thank sure please let can could would will just maybe".split()
)


def is_question(text: str) -> bool:
    sents = sentences(text)
    return bool(sents) and bool(_QUESTION.search(sents[-1]))


def sentences(text: str) -> list[str]:
    return [s for s in _SENT.split(text.strip()) if s and s.strip()]


def starts_with(text: str, cues: Iterable[str]) -> bool:
    s = text.strip().lower().lstrip("\"'“（(")
    return any(s.startswith(c) for c in cues)


@dataclass
class Message:
    """One main-path message as the signals see it."""

    position: int
    role: str
    text: str
    judged: bool
    targets: list[str] = field(default_factory=list)  # tool-call targets, for assistant messages
    native: str | None = None  # the message's id in its source
    tokens: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    target_tokens: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)  # judged: whole jieba words, what a reader is shown as drivers
    keywords: list[str] = field(default_factory=list)  # judged: the text's content tokens, for topic keywords
    opens_lightly: bool = False  # judged: see opens_lightly()
    vector: tuple[Idf, dict[str, float]] | None = field(default=None, repr=False, compare=False)  # message_vector


def prepare(msgs: Sequence[Message], mode: str = "jieba+bigram") -> None:
    """Tokenize in place (text plus tool-call targets) and find entities: every tokenizer call the analysis
    makes per message happens here, so ``pipeline`` can compute it once and keep it in the warehouse."""
    for m in msgs:
        extra = " ".join(m.targets)
        m.target_tokens = terms(extra, mode) if extra else []
        m.names = entities(m.text, proper_nouns=m.judged) | {t.lower() for t in m.targets if t}
        if m.judged:  # the text tokenized once for its terms, keywords and whole words
            tokens = content_tokens_modes(m.text, tuple(dict.fromkeys((mode, "jieba"))))
            m.keywords = tokens[mode]
            m.words = list(dict.fromkeys(stem(t) for t in tokens["jieba"]))
            m.opens_lightly = opens_lightly(m.text)
            text_terms = [stem(t) for t in m.keywords]
        else:
            text_terms = terms(m.text, mode)
        m.tokens = text_terms + m.target_tokens  # the terms of text and targets: no token spans the line between


def opens_lightly(text: str) -> bool:
    """An opening sentence this light ("that is nice.", "哈哈，好的。") followed by more: an acknowledgment first.

    The opening must be a sentence of its own (closed by a stop or a comma) or an acknowledgment word: a line
    break alone does not close one ("what about\n<name>?" is one question; a pasted listing's first line is
    no acknowledgment)."""
    sents = sentences(text)
    if len(sents) < 2 or len(terms(sents[0])) > ACK_MAX_TOKENS or _QUESTION.search(sents[0]):
        return False
    return bool(_CLOSED.search(sents[0])) or _ACK.sub("", sents[0]) == ""


class Idf:
    """Inverse document frequency over messages, smoothed so that a tiny warehouse still ranks terms."""

    def __init__(self, docs: Iterable[Iterable[str]]) -> None:
        df: Counter[str] = Counter()
        n = 0
        for d in docs:
            df.update(set(d))
            n += 1
        self.n, self.df = n, df
        self._memo: dict[str, float] = {}

    @classmethod
    def from_counts(cls, n: int, df: Counter[str]) -> Idf:
        """From document frequencies counted elsewhere (the warehouse, in SQL)."""
        idf = cls(())
        idf.n, idf.df = n, df
        return idf

    def __call__(self, term: str) -> float:
        w = self._memo.get(term)
        if w is None:  # a logarithm per lookup was a tenth of the analysis
            w = self._memo[term] = math.log((self.n + 1) / (self.df.get(term, 0) + 1)) + 1
        return w


def _vector(counts: Counter[str], idf: Idf) -> dict[str, float]:
    # a term said once weighs its IDF: (1 + log 1) * w is w to the bit, and most terms are said once; a weight is read
    # from the memo without a call (an IDF is never 0: at least 1), computed by the call the first time
    memo = idf._memo.get
    return {t: (memo(t) or idf(t)) if c == 1 else (1 + math.log(c)) * (memo(t) or idf(t)) for t, c in counts.items()}


def message_vector(m: Message, idf: Idf) -> dict[str, float]:
    """The message's TF-IDF vector, built once per message and IDF (the signals compare each message with
    its neighbours several times: rebuilding the vector each time was a tenth of the inference)."""
    if m.vector is None or m.vector[0] is not idf:
        m.vector = (idf, _vector(Counter(m.tokens), idf))
    return m.vector[1]


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    num = sum(v * b.get(t, 0.0) for t, v in a.items())
    den = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return num / den if den else 0.0


def features(
    msgs: Sequence[Message],
    idf: Idf,
    cues: Cues,
    corpus: CorpusTopics | None = None,
    vectors: Sequence[Any] | None = None,
) -> list[dict[str, float] | None]:
    """Per message: the signal values if it is judged and carries a topic, else None.

    ``msgs`` are the conversation's user and assistant messages on the main path, in order (tool output is
    left out: its size would drown the talk; the assistant's tool-call targets stand for it). ``corpus``: the
    corpus's topic model (None: no corpus model, its signals are 0). ``vectors``: one unit sentence vector per
    message (None for a message without text) adds ``EMBEDDING_FEATURES``.
    """
    out: list[dict[str, float] | None] = []
    sign_off = _signs_off(msgs, cues)
    first: dict[str, int] = {}  # term -> index of the message that used it first
    first_name: dict[str, int] = {}
    first_root: set[str] = set()  # the words used so far without their endings (_root: "staying" is "stay")
    seen: _Seen = _Seen(set(), set(), [])  # what the judged messages and the tool-call targets have used so far
    judged = 0
    prev: int | None = None
    for i, m in enumerate(msgs):
        topical = m.judged and bool(m.tokens) and not cues.social_only(m.words) and not _names_only(m, cues)
        f = _one(msgs, i, prev, idf, first, first_name, judged) if topical else None
        if f is not None:
            f.update(_judged_signals(msgs, i, idf, seen))
            f.update(cues.signals(m.text, msgs[prev].text if prev is not None else ""))
            _continuing(f, sign_off, cues, m, msgs[prev] if prev is not None else None)
            f["fresh"] = float(prev is not None and not msgs[prev].judged and _fresh(m, f, idf, first, cues))
            f["books_in_play"] = float(
                cues.books_in_play(m.text, lambda w: _root(stem(w)) in first_root)
                or (prev is not None and accepts_booking(m, msgs[prev], cues))
            )
            searched = msgs[seen.judged[-1]] if seen.judged else None
            f["retries"] = float(prev is not None and retries(m, msgs[prev], f, searched))
        out.append(f)
        judged += m.judged
        for t in m.tokens:
            first.setdefault(t, i)
            first_root.add(_root(t))
        for n in m.names:
            first_name.setdefault(n, i)
        if m.text.strip() or m.targets:
            prev = i
        if topical:
            seen.judged.append(i)
            seen.terms.update(m.tokens)
            seen.names.update(m.names)
        seen.terms.update(m.target_tokens)
        seen.names.update(t.lower() for t in m.targets if t)
    _corpus_signals(msgs, out, corpus)
    for i, f in enumerate(out):
        if f is not None:
            f.update(_look_ahead(msgs, i, idf))
            if vectors is not None:
                f.update(_embedding_cohesion(vectors, i))
    return out


def retries(m: Message, before: Message, f: dict[str, float], searched: Message | None = None) -> bool:
    """The message answers a reply that found nothing and asked for another choice (``_ASKS_OTHER`` in its
    closing sentence): its request retries the same search with another value ("Are there any Portuguese
    restaurants?" after "no steakhouses, something else perhaps?"), unless it declines the choice first ("No,
    that's ok. I need a taxi") or adds a request ("I also need ..."). After a reply that found nothing and closed
    otherwise ("Is there anything else I can help with?"), the request retries the search when it asks for one again
    (``_SEARCHES_AGAIN``: "how about ...", "are there any ...") and names a word of ``searched``, the person's last
    turn with a topic, the search that found nothing ("How about college attractions?" after "any multiple sports
    attractions?"); not "Are there any restaurants near it?" after "the entrance fee?"."""
    if before.judged or f["addition"] or not _FOUND_NOTHING.search(before.text):
        return False
    closing = sentences(before.text)[-1:] or [""]
    said = sentences(request_sentences(m.text))
    if not said or _DECLINE.match(said[0]):
        return False
    if _ASKS_OTHER.search(closing[0]):
        return True
    return (
        searched is not None and bool(_SEARCHES_AGAIN.search(said[0])) and not set(m.tokens).isdisjoint(searched.tokens)
    )


def accepts_booking(m: Message, before: Message, cues: Cues) -> bool:
    """The message accepts the booking the reply closed by offering (its last sentence a question naming a booking:
    "may I book that for you?") and says nothing else than the booking's particulars (``cues.BOOKING_PARTICULARS``:
    "Yes please, for 6 people and 2 nights starting Saturday. Could I also get the reference number?"): the
    thing in play booked, not a new request. Not "Yes 5 please. Do you know the Williams Art & Antiques?" (a new
    subject after the acceptance), nor "Yes, and I need a taxi"."""
    closing = sentences(before.text)[-1:]
    if before.judged or not closing or not closing[0].rstrip().endswith("?"):
        return False
    said = request_sentences(m.text)
    accepted = _ACCEPT.match(said)
    if not BOOKING_OFFER.search(closing[0]) or accepted is None:
        return False
    return all(t in BOOKING_PARTICULARS for t in cues.topical(terms(said[accepted.end() :])))


def _names_only(m: Message, cues: Cues) -> bool:
    """The person's own words are nothing but names (a path, an identifier, `code`: "> schemas/index.ts" typed
    after a listing): they point at something, they say nothing about a subject, like "ok" or "继续"."""
    said = own_words(m.text)
    return bool(said) and bool(_NAMES.search(said)) and not cues.topical(terms(_NAMES.sub(" ", said)))


def _signs_off(msgs: Sequence[Message], cues: Cues) -> bool:
    """The other party ends most of its replies with an offer ("let me know if you need further assistance"):
    its sign-off, not a sign that a request is done."""
    replies = [m for m in msgs if not m.judged and m.text.strip()]
    offers = sum(cues.offers(m.text) for m in replies)
    return offers >= SIGN_OFF_MIN and offers >= SIGN_OFF_SHARE * len(replies)


def _continuing(f: dict[str, float], sign_off: bool, cues: Cues, m: Message, before: Message | None) -> None:
    """Cues that cannot mean a new request here, in place:

    - a request that repeats the person's previous one (insisting, pleading: ``cos_judged`` >= REPEATS);
    - a request in an answer to the question the reply closed with (the message takes up the question's words:
      "Which formats first?" "That set looks fine. Top priority: text and JSON; later we'd add a mechanism for
      custom formats"): what it asks for is its answer; only an addition after its first sentence ("Yes to
      all. We will also need Cura generators") adds to it. An answer that does not take the question up keeps
      its cues: "需要预订吗？" "不用了。帮我推荐一家酒店" declines and asks anew;
    - a request in the sentence that accepts what the reply closed by proposing (``Cues.proposes``, in its
      last CLOSING_CHARS; the sentence accepts and takes up its words: "... I can expand the schema." "Yes,
      please do expand and add these"): the proposal taken up; a request in a later sentence stays ("Yes, do
      it. I also need a taxi"), and "好的，..." after a reply that proposed nothing is an acknowledgment, not an
      acceptance. A proposal the person neither accepts, declines nor takes up was not answered: a coding
      agent closes most replies with "Want me to ...?", and the person often moves on (``answers`` off);
    - "what about X?" / "how about X?" with little more than X: the last question asked again of another X;
    - an added request about the thing being worked on: the sentence that adds it points back at it ("this
      variable", "这个函数") and the message uses a word of the person's recent requests ("now I would like this
      variable to be used for the title", after asking for the title): the next step of the same job;
    - an offer that is the other party's sign-off."""
    if sign_off:
        f["offered"] = 0.0
    said = request_sentences(m.text)
    sents = sentences(said)
    if len(sents) > 1 and _ACCEPT.match(sents[0]) and not cues.topical(terms(sents[0])):
        sents = [sents[0] + " " + sents[1], *sents[2:]]  # "Yes. Please make a reservation": one acceptance
    tail = before.text[-CLOSING_CHARS:] if before is not None else ""
    proposal = bool(sents) and cues.proposes(tail)
    takes_up = proposal and _takes_up(terms(sents[0]), tail, cues)
    if proposal and not (_ACCEPT.match(sents[0]) or _DECLINE.match(sents[0]) or takes_up):
        f["answers"] = 0.0  # the reply's question was a proposal, and the person moved on without a word on it
    if not (f["request"] or f["addition"]):
        return
    if f["cos_judged"] >= REPEATS:
        f["request"] = f["addition"] = 0.0
        return
    if sents:
        rest = cues.signals("\n".join(sents[1:]), "")
        if proposal:
            if takes_up and _ACCEPT.match(sents[0]):
                f["request"], f["addition"] = rest["request"], rest["addition"]
        elif (
            before is not None
            and f["answers"]
            and not f["offered"]
            and _takes_up(m.tokens, _closing(before.text), cues)
        ):
            f["request"], f["addition"] = 0.0, rest["addition"]
    ellipsis = _ELLIPSIS.match(said)
    if ellipsis and not f["request"] and len(terms(ellipsis.group(1))) <= ELLIPSIS_TERMS:
        f["addition"] = 0.0
    if (
        f["addition"]
        and not f["request"]
        and f["cos_judged_ctx"] > 0
        and all(_DEMONSTRATIVE.search(x) for x in sents if cues.signals(x, "")["addition"])
    ):
        f["addition"] = 0.0


def _takes_up(tokens: Sequence[str], closing: str, cues: Cues) -> bool:
    """The tokens use a topical word of a reply's closing (its question, its proposal)."""
    said = {_root(t) for t in cues.topical(terms(closing))}
    return any(_root(t) in said for t in tokens)


def _root(token: str) -> str:
    """A word without its -ing / -ed / -ation ending: "booking" takes up "book", "reservation" "reserve"."""
    return re.sub(r"(?:ing|ed|ation|e)$", "", token) if len(token) > 5 else token


def _closing(text: str) -> str:
    """A message's closing sentences: where a reply asks its question."""
    return " ".join(sentences(text)[-QUESTION_SENTENCES:])


def _fresh(m: Message, f: dict[str, float], idf: Idf, first: dict[str, int], cues: Cues) -> bool:
    """A new question found by its content alone, with no cue ("Can you compare godot and unity?" in a talk
    about something else; asked only of a message after the other party's reply, in an assistant log): the person's own words (``prose.own_words``: not what they pasted) ask a question
    whose subject words (code names left out: a follow-up names new functions of the same work) are at least
    FRESH_WORDS and FRESH_SHARE rare topical words (in at most RARE_SHARE of the corpus's messages) the
    conversation never used, and share nothing with the person's recent requests, the reply before, or where
    the tools were working; not an answer to the other party's question, not a reference back, not a reply
    that acknowledges and goes on ("好的，那...", "OK, and ..."). Nor one that names a rare word the
    conversation already used, even inside a name it pastes ("extra/kvantum-qt5 ... which one do I install?"
    after a talk about Kvantum): it asks about what is being talked about."""
    if f["depth"] == 0 or f["reference"] or f["cue_continue"] or (f["answers"] and not f["offered"]):
        return False
    if max(f["cos_judged"], f["cos_judged_ctx"], f["cos_prev"], f["cos_targets"]) > FRESH_COHESION:
        return False
    said = own_words(m.text)
    if not is_question(said) or starts_with(_ACK.sub("", said), CONTINUE_CUES):
        return False
    words = set(cues.topical(terms(_NAMES.sub(" ", said))))  # words of a subject: code names left out
    rare = max(RARE_MIN, RARE_SHARE * idf.n)
    new = {t for t in words if t not in first and idf.df.get(t, 0) <= rare}
    parts = {stem(w) for n in _NAMES.finditer(said) for w in _NAME_PART.split(n.group(0).lower()) if w}
    if any(t in first and idf.df.get(t, 0) <= rare for t in words | parts):
        return False
    return len(new) >= FRESH_WORDS and len(new) >= FRESH_SHARE * len(words)


def _corpus_signals(msgs: Sequence[Message], out: list[dict[str, float] | None], corpus: CorpusTopics | None) -> None:
    """The corpus topic model's switch posteriors over the messages that carry a topic, in order."""
    rows = [i for i, f in enumerate(out) if f is not None]
    posts = corpus.switch_posteriors([msgs[i].words for i in rows]) if corpus else [(0.0, 0.0)] * len(rows)
    for i, p in zip(rows, posts):
        out[i].update(zip(CORPUS_FEATURES, p))  # type: ignore[union-attr]


def _embedding_cohesion(vectors: Sequence[Any], i: int) -> dict[str, float]:
    """Cosine of message i's sentence vector with the previous message's, with the recent context's (the
    normalised sum of the last CONTEXT_MESSAGES vectors) and with the next message's (a new subject is one the
    other party takes up: look-ahead, like ``gap``); messages without text are skipped."""
    v = vectors[i]
    before = [u for u in vectors[max(0, i - CONTEXT_MESSAGES) : i] if u is not None]
    after = next((u for u in vectors[i + 1 :] if u is not None), None)
    nxt = float(v @ after) if v is not None and after is not None else 0.0
    out = {"emb_prev": 0.0, "emb_ctx": 0.0, "emb_next": nxt}
    if v is None or not before:
        return out
    ctx = sum(before[1:], before[0])
    norm = float((ctx @ ctx) ** 0.5)
    out.update(emb_prev=float(v @ before[-1]), emb_ctx=float(v @ ctx) / norm if norm else 0.0)
    return out


def _look_ahead(msgs: Sequence[Message], i: int, idf: Idf) -> dict[str, float]:
    """1 - cohesion across the gap before message i (blocks of BLOCK messages), and whether the message after
    it departs from the block before the gap too (1 - its cosine with that block)."""
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    for j in range(max(0, i - BLOCK), i):
        before.update(msgs[j].tokens)
    for j in range(i, min(len(msgs), i + BLOCK)):
        after.update(msgs[j].tokens)
    if not before:
        return {"gap": 0.0, "next_departs": 0.0}
    vb = _vector(before, idf)
    nxt = msgs[i + 1].tokens if i + 1 < len(msgs) else []
    return {
        "gap": 1.0 - cosine(_vector(after, idf), vb),
        "next_departs": 1.0 - cosine(message_vector(msgs[i + 1], idf), vb) if nxt else 0.0,
    }


@dataclass
class _Seen:
    terms: set[str]
    names: set[str]
    judged: list[int]  # indices of the earlier judged messages with content


def _judged_signals(msgs: Sequence[Message], i: int, idf: Idf, seen: _Seen) -> dict[str, float]:
    """Cohesion and novelty against the earlier judged messages and the tool-call targets (see FEATURES)."""
    m = msgs[i]
    cur = Counter(m.tokens)
    v = message_vector(m, idf)
    mass = sum(idf(t) for t in cur) or 1.0
    last = seen.judged[-1:]
    ctx: Counter[str] = Counter()
    for j in seen.judged[-JUDGED_CONTEXT:]:
        ctx.update(msgs[j].tokens)
    tgt: Counter[str] = Counter()
    for j in range(max(0, i - TARGET_MESSAGES), i):
        tgt.update(msgs[j].target_tokens)
    return {
        "cos_judged": cosine(v, message_vector(msgs[last[0]], idf)) if last else 0.0,
        "cos_judged_ctx": cosine(v, _vector(ctx, idf)),
        "cos_targets": cosine(v, _vector(tgt, idf)),
        "novel_judged": sum(idf(t) for t in cur if t not in seen.terms) / mass,
        "entity_new_judged": float(any(n not in seen.names for n in m.names)),
        "insists": _insists(msgs, i, last[0] if last else None, v, idf),
    }


def _insists(msgs: Sequence[Message], i: int, p: int | None, v: dict[str, float], idf: Idf) -> float:
    """How much the message repeats the previous judged message's subject that the replies in between ignored.

    A user who asks about X, gets an answer about Y, and asks about X again is moving the conversation to X
    (the seed's d6614e0b [136] -> [140]); a follow-up normally coheres with the reply it follows as well. The
    excess of the repeat over the cohesion with the replies counts only as far as the replies left the
    message's words out (their IDF mass, however long the replies and wherever their vectors lean): "nope,
    still cannot drag" after three replies about the drag handle insists on the subject being worked on, it
    does not return to one.
    """
    if p is None or p == i - 1:
        return 0.0
    between: Counter[str] = Counter()
    for j in range(p + 1, i):
        between.update(msgs[j].tokens)
    if not between:
        return 0.0
    cur = dict.fromkeys(msgs[i].tokens)  # in order, not a set's: the sums come out the same in every process
    ignored = sum(idf(t) for t in cur if t not in between) / (sum(idf(t) for t in cur) or 1.0)
    return max(0.0, cosine(v, message_vector(msgs[p], idf)) - cosine(v, _vector(between, idf))) * ignored


def _one(
    msgs: Sequence[Message],
    i: int,
    p: int | None,
    idf: Idf,
    first: dict[str, int],
    first_name: dict[str, int],
    depth: int,
) -> dict[str, float]:
    m = msgs[i]
    prev = msgs[p] if p is not None else None
    cur = Counter(m.tokens)
    v = message_vector(m, idf)
    mass = sum(idf(t) for t in cur) or 1.0
    ctx: Counter[str] = Counter()
    for j in range(max(0, i - CONTEXT_MESSAGES), i):
        ctx.update(msgs[j].tokens)
    question = is_question(m.text)
    return {
        "cos_prev": cosine(v, message_vector(prev, idf)) if prev else 0.0,
        "cos_ctx": cosine(v, _vector(ctx, idf)),
        "novel": sum(idf(t) for t in cur if t not in first) / mass,
        "handoff": sum(idf(t) for t in cur if p is not None and first.get(t) == p) / mass,
        "entity_new": float(any(n not in first_name for n in m.names)),
        "entity_handoff": float(p is not None and any(first_name.get(n) == p for n in m.names)),
        "length": math.log1p(len(m.tokens)),
        "question": float(question),
        "answers": float(prev is not None and is_question(prev.text)),
        "ack_then_question": float(m.opens_lightly and question),
        "cue_shift": float(starts_with(m.text, SHIFT_CUES)),
        "cue_continue": float(starts_with(m.text, CONTINUE_CUES)),
        "depth": min(depth, DEPTH_CAP) / DEPTH_CAP,
    }
