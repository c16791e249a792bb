"""Topic inference per judged message, and the conservative switch marker (docs/definitions.md#topic-switches).

Walking a conversation in order, each judged message either continues the current topic or starts one:
a new topic (T1, T2, ... in order of appearance) or a return to an earlier topic it resembles. A message
with no content token (继续, ok, why?) or only social words (thanks, bye, 好的谢谢) gets no topic at all. A topic-lexicon phrase in the message
(config ``[topic] lexicon``) names its topic outright.

The marker (the seed harness's ``pending_topic_marker``) is set on a judged message only when it and
the previous judged message both have a topic with confidence >= ``min_confidence`` and the topics differ;
if either has none, there is no marker, so a short follow-up never causes or carries a false alarm. In the user
mode (a person asking an assistant, at work or booking) the turn after a content-free one is read against the last
turn that had a topic (``mark``'s ``across_empty``): the content-free turn itself is still never marked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from forensics.analyzers.topics import work
from forensics.analyzers.topics.corpus import CorpusTopics
from forensics.analyzers.topics.model import Model
from forensics.analyzers.topics.signals import Idf, Message, _vector, cosine, features
from forensics.text.cues import Cues
from forensics.text.keywords import top_keywords

RETURN_SIMILARITY = 0.35  # cosine with an earlier topic's profile above which a switch is a return to it
LEXICON_CONFIDENCE = 0.9  # a configured phrase names the topic: as sure as an explicit trigger gets
KEYWORDS = 5
LABEL_TERMS = 3  # words in a segment's label


@dataclass
class Judged:
    """What the inference says about one judged message."""

    position: int
    topic: str | None
    confidence: float | None
    score: float | None  # the raw switch score in [0, 1] (None for a content-free message)
    marker: bool = False
    drivers: list[str] = field(default_factory=list)  # the message's terms that the topic before lacked


def infer(
    msgs: Sequence[Message],
    idf: Idf,
    model: Model,
    cues: Cues,
    corpus: CorpusTopics | None = None,
    lexicon: Mapping[str, Sequence[str]] | None = None,
    min_confidence: float = 0.7,
    vectors: Sequence[Any] | None = None,
    work_model: Model | None = None,
) -> list[Judged]:
    """One entry per judged message, in order (``msgs``: user/assistant messages of one main path; ``corpus``:
    the corpus's topic model; ``vectors``: their sentence vectors when the model uses the embedding signals;
    ``work_model``: the request scorer of ``work.py``, which judges beside ``model`` when the assistant works in
    the conversation: a turn switches when either says so, and the one further past its operating point gives
    the confidence)."""
    feats = features(msgs, idf, cues, corpus, vectors)
    working = work_model is not None and work.is_work(msgs)
    if working:
        work.signals(msgs, feats, idf)
    same = work.follows_up(msgs) if working else set()  # the turns after which the tools touch the same things
    bar = work.SHORT_MARGIN if working and sum(m.judged for m in msgs) <= work.SHORT_TURNS else 0.0
    topic_model = model
    lex = {k: [p.lower() for p in v] for k, v in (lexicon or {}).items()}
    profiles: dict[str, Counter[str]] = {}
    current: str | None = None
    out: list[Judged] = []
    for m, f in zip(msgs, feats):
        if not m.judged:
            if current is not None:
                profiles[current].update(m.tokens)
            continue
        if f is None:
            out.append(Judged(m.position, None, None, None))
            continue
        model = topic_model
        s = model.score(f)
        if f.get("fresh"):  # a new subject by content alone: a switch at the operating point's confidence
            s = max(s, model.anchor)
        if working and work_model is not None:
            w = work_model.score(f)
            if work_model.margin(w) > model.margin(s):  # the request scorer is the surer that a switch happens
                model, s = work_model, w
            if any(f.get(k) for k in work.CONTINUES):
                # pasted output with a line typed around it, a short request to run or check what is there, a result
                # of the last step not seen, the reply's own lines pasted back: it continues the work at hand
                model, s = work_model, min(w, _below(work_model))
            if m.position in same and model.switches(s) and model.margin(s) < work.UNSURE:
                # the tool calls after it touch only what the calls before it touched, and the judge is unsure: the
                # work goes on (work.follows_up)
                s = _below(model)
        if f.get("books_in_play") and work_model is not None and not working:
            # the user mode off work (a person booking with an assistant): booking the thing in play, with only its
            # particulars ("book it for a party of 7"), serves the request being made (signals: books_in_play)
            s = min(s, _below(model))
        if f.get("retries") and work_model is not None and not working:
            # a request that answers "nothing found; something else?" retries the search asked for: neither a new
            # request nor one the reply's offer opened (signals.retries)
            s = min(s, model.score({**f, "request": 0.0, "offered": 0.0}))
        named = _lexicon_topic(m.text, lex)
        if named:
            topic, conf = named, LEXICON_CONFIDENCE
        elif current is None:
            topic, conf = f"T{len(profiles) + 1}", model.confidence(s)
        elif model.switches(s) and model.margin(s) >= bar:
            topic, conf = _new_or_return(m, profiles, current, idf), model.confidence(s)
        else:
            topic, conf = current, model.confidence(s)
        drivers = _drivers(m, profiles.get(current) if current else None, idf)
        profiles.setdefault(topic, Counter()).update(m.tokens)
        current = topic
        out.append(Judged(m.position, topic, conf, s, drivers=drivers))
    # a person asking an assistant (the user mode: working, or booking off work) moves on after a content-free turn
    # too ("Thank you so much!", "how about 15:00 then?"); open-domain talk (the dialogue mode) keeps the seed's rule
    mark(out, min_confidence, across_empty=work_model is not None)
    if work_model is not None and not working and work.declines(msgs):
        for j in out:  # open chat: not judged, no marker (work.declines)
            j.marker = False
    return out


def _below(model: Model) -> float:
    """A score just under the model's operating point: the turn continues the topic."""
    return model.anchor * 0.999


def mark(judged: list[Judged], min_confidence: float, across_empty: bool = False) -> None:
    """The conservative rule, in place: both confident, topics differ; either none -> no marker.

    ``across_empty`` (the user mode): a content-free turn ("yes please", "continue", "Thank you so much!") between two
    requests carries no topic, and the turn after it is compared with the last turn that had one; the content-free
    turn itself is never marked. In work with an agent "yes please" is followed by a stretch of work, and the next
    request can be new (a new deliverable after the assent is S1); in a booking dialogue "Thank you, that's all" or
    "how about 15:00 then?" closes one request and the next turn opens the next ("I also need a taxi"): on MultiWOZ's
    dev half 19 of the 23 markers this adds are labeled shifts (issue 43)."""
    last: Judged | None = None
    for prev, cur in zip(judged, judged[1:]):
        if prev.topic is not None:
            last = prev
        if across_empty and prev.topic is None and last is not None:
            prev = last
        cur.marker = (
            prev.topic is not None
            and cur.topic is not None
            and prev.topic != cur.topic
            and prev.confidence is not None
            and cur.confidence is not None
            and prev.confidence >= min_confidence
            and cur.confidence >= min_confidence
        )


def _lexicon_topic(text: str, lex: Mapping[str, list[str]]) -> str | None:
    """The lexicon topic with the most phrases in ``text`` (ties: the first in the table)."""
    low = text.lower()
    best, hits = None, 0
    for name, phrases in lex.items():
        n = sum(p in low for p in phrases)
        if n > hits:
            best, hits = name, n
    return best


def _new_or_return(m: Message, profiles: dict[str, Counter[str]], current: str, idf: Idf) -> str:
    v = _vector(Counter(m.tokens), idf)
    best, sim = None, RETURN_SIMILARITY
    for name, prof in profiles.items():
        if name != current:
            c = cosine(v, _vector(prof, idf))
            if c >= sim:
                best, sim = name, c
    return best or f"T{sum(1 for k in profiles if k.startswith('T') and k[1:].isdigit()) + 1}"


def _drivers(m: Message, before: Counter[str] | None, idf: Idf) -> list[str]:
    """The message's heaviest words that the topic before it never used: what made it look new.

    Whole words (jieba), not Han pairs, so a reader sees 交付 rather than 送交; rarer and longer first.
    """
    cands = [t for t in m.words if not before or t not in before]
    return sorted(cands, key=lambda t: (-idf(t), -len(t)))[:KEYWORDS]


def segment_labels(msgs: Sequence[Message], judged: Sequence[Judged], idf: Idf) -> dict[int, list[str]]:
    """A short label per segment (a run of judged messages with one topic), for every judged message with a
    topic: the segment's ``LABEL_TERMS`` most distinctive words against the whole corpus (count in the segment x
    the warehouse's IDF, class-TF-IDF style), so "hotel · parking" names a segment where the conversation's own
    keywords would repeat what every segment says."""
    by_pos = {m.position: m for m in msgs}
    runs: list[list[Judged]] = []
    for j in judged:
        if j.topic is None:
            continue
        if runs and runs[-1][-1].topic == j.topic:
            runs[-1].append(j)
        else:
            runs.append([j])
    out: dict[int, list[str]] = {}
    for run in runs:
        counts: Counter[str] = Counter()
        for j in run:
            counts.update(by_pos[j.position].words)
        order = {w: i for i, w in enumerate(counts)}
        label = sorted(counts, key=lambda w: (-counts[w] * idf(w), order[w]))[:LABEL_TERMS]
        out.update((j.position, label) for j in run)
    return out


def topic_keywords(msgs: Sequence[Message], judged: Sequence[Judged]) -> dict[str, list[str]]:
    """Top keywords per topic, from the judged messages assigned to it (their content tokens, see prepare)."""
    counts: dict[str, Counter[str]] = {}
    by_pos = {m.position: m for m in msgs}
    for j in judged:
        if j.topic is not None:
            counts.setdefault(j.topic, Counter()).update(by_pos[j.position].keywords)
    return {t: [w for w, _ in top_keywords(c, KEYWORDS)] for t, c in counts.items()}
