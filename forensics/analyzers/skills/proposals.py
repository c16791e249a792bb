"""Trigger phrases for the table's misses: words of the requests before the model's own loads of a skill.

Candidates are cut from the missed requests themselves (a phrase must be a substring of what it should match):
runs of one to three words (jieba's words in Chinese, docs/definitions.md#tokenizer-and-keywords; whole words elsewhere) with nothing but one
space between them, starting and ending on a content word (no stop word, no single Han character or letter,
no number, path or identifier, nothing a secret rule matches). How distinctive a candidate is of the skill:
of the requests holding it (every request of the selection), the share whose turn loaded that skill. The
router is replayed with each candidate added and, one at a time, the one that gains the most hits net of the
false fires it adds is kept, only while it catches more requests than it fires on wrongly (the seed harness's rule: better to
miss than to fire wrongly) and more than one, unless the skill's own words (its id, the body it was loaded
with) hold the phrase: one request alone is an anecdote ("great, now make slides" is no trigger for slides).
Among equals: the skill's own words first, then fewer false fires, the more distinctive, more words (the more
specific phrase: on requests not seen yet, "browser tests" fires wrongly less often than "tests"), the shorter;
last, the phrase itself, so the result does not depend on any order.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

import duckdb
import polars as pl

from forensics.analyzers.skills.replay import MESSAGES, Phrase, Replay, Row
from forensics.kernel.arrow import stream
from forensics.kernel.redact import redact
from forensics.text.keywords import stop_words
from forensics.text.tokenizer import Span, spans

MAX_WORDS = 3
MAX_CHARS = 40
SCAN_CHARS = 2000  # of a long request (a pasted log), only the start is where a person says what they want
POOL = 200  # candidates per skill replayed, those covering the most misses
MIN_SHARE = 0.25  # a candidate most of whose requests loaded nothing else is not replayed
MAX_NEW = 5  # phrases added per skill in one pass: a table stays small enough to audit
MIN_HITS = 2  # requests a phrase must catch, unless the skill's own words hold it
CANDIDATES = "_skill_candidates"  # temp


@dataclass
class Proposal:
    skill: str
    phrase: str
    hits_gained: int  # hits of the whole table, after minus before
    false_fires_added: int  # router-only fires, after minus before
    catches: list[tuple[str, int]] = field(default_factory=list)  # (conversation, request) that become hits
    share: float = 0.0  # of the requests holding the phrase, the share whose turn loaded the skill
    requests: int = 0  # requests holding the phrase


@lru_cache(maxsize=4096)  # a request repeated across conversations is cut once
def candidates(text: str) -> frozenset[str]:
    """The phrases a person would write that ``text`` (lower-cased) holds."""
    stops = stop_words()
    words = [w for w in spans(text[:SCAN_CHARS]) if _plain(w)]
    out: set[str] = set()
    for i, first in enumerate(words):
        for j in range(i, min(i + MAX_WORDS, len(words))):
            if j > i and text[words[j - 1].end : words[j].start] not in ("", " "):
                break
            last = words[j]
            phrase = text[first.start : last.end]
            if (
                _content(first, stops)
                and _content(last, stops)
                and len(phrase) <= MAX_CHARS
                and redact(phrase) == phrase
            ):
                out.add(phrase)
    return frozenset(out)


@lru_cache(maxsize=4096)
def words(phrase: str) -> int:
    """Words of a phrase (jieba's in Chinese: 周会汇报 is two)."""
    return sum(1 for _ in spans(phrase))


def _plain(w: Span) -> bool:
    """A word, not a number, a path or an identifier (report.pdf, src/app.py, v2, snake_case)."""
    return w.han or not any(c.isdigit() or c in "./\\_:" for c in w.word)


def _content(w: Span, stops: frozenset[str]) -> bool:
    return len(w.word) > 1 and w.word not in stops


def propose(con: duckdb.DuckDBPyConnection, rp: Replay, rows: list[Row], skills: list[str]) -> list[Proposal]:
    """New phrases for the misses among ``rows`` (``rp``'s replay), skill by skill (``skills`` in order: the table's,
    then those it lacks); ``rp`` gains them."""
    base: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        base[r.conversation_id].append(r)
    out: list[Proposal] = []
    for s in skills:
        missed = sorted(
            {
                (r.conversation_id, r.position)
                for rows in base.values()
                for r in rows
                if r.verdict == "model_only" and r.model_skill == s and r.position is not None
            }
        )
        if not missed:
            continue
        loaded = {
            (r.conversation_id, r.position)
            for rows in base.values()
            for r in rows
            if r.model_skill == s and r.position is not None
        }
        pool = _pool(con, missed, loaded)
        rank = (skills.index(s), max((p.rank[1] for p in rp.phrases if p.skill == s), default=-1) + 1)
        tried: dict[str, Trial] = {}  # a candidate's replay holds until a kept phrase changes one of its conversations
        for _ in range(MAX_NEW):
            best = _best(rp, base, s, rank, pool, tried)
            if best is None:
                break
            out.append(best.proposal)
            rp.phrases.append(Phrase(s, best.proposal.phrase, best.proposal.phrase, rank))
            for cid, pos in pool.pop(best.proposal.phrase).where:
                rp.matches[cid].setdefault(pos, []).append(len(rp.phrases) - 1)
            base.update(best.changed)
            tried = {k: t for k, t in tried.items() if not set(t.changed) & set(best.changed)}
            rank = (rank[0], rank[1] + 1)
    return out


@dataclass(frozen=True)
class Candidate:
    share: float  # of the requests holding it, the share whose turn loaded the skill
    where: list[tuple[str, int]]  # the requests holding it
    misses: int  # how many of them are misses: no replay can gain it more hits than that


def _pool(
    con: duckdb.DuckDBPyConnection, missed: list[tuple[str, int]], loaded: set[tuple[str, int]]
) -> dict[str, Candidate]:
    """The POOL candidates covering the most misses, those distinctive enough to replay."""
    texts = _texts(con, missed)
    cover: dict[str, int] = defaultdict(int)
    for key in missed:
        for c in candidates(texts.get(key, "")):
            cover[c] += 1
    chosen = sorted(cover, key=lambda c: (-cover[c], words(c), len(c), c))[:POOL]
    if not chosen:
        return {}
    con.register("_skill_candidate_rows", stream(pl.DataFrame({"phrase": chosen})))
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {CANDIDATES} AS SELECT phrase FROM _skill_candidate_rows")
    finally:
        con.unregister("_skill_candidate_rows")
    hold: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for phrase, cid, pos in con.execute(  # no more requests than MIN_SHARE allows: fetch no common word's thousands
        f"SELECT phrase, conversation_id, position FROM (SELECT c.phrase, r.conversation_id, r.position, "
        f"count(*) OVER (PARTITION BY c.phrase) AS n FROM {CANDIDATES} c JOIN {MESSAGES} r "
        f"ON r.kind = 'request' AND contains(r.request, c.phrase)) WHERE n * ? <= ? ORDER BY 1, 2, 3",
        [MIN_SHARE, len(loaded)],
    ).fetchall():
        hold[phrase].append((cid, pos))
    out, misses = {}, set(missed)
    for phrase, where in hold.items():
        share = sum(k in loaded for k in where) / len(where)
        if share >= MIN_SHARE:
            out[phrase] = Candidate(share, where, sum(k in misses for k in where))
    return out


def _texts(con: duckdb.DuckDBPyConnection, keys: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
    con.register(
        "_skill_keys",
        stream(pl.DataFrame(keys, schema={"conversation_id": pl.String, "position": pl.Int32}, orient="row")),
    )
    try:
        rows = con.execute(
            f"SELECT r.conversation_id, r.position, r.request FROM {MESSAGES} r JOIN _skill_keys k "
            "USING (conversation_id, position)"
        ).fetchall()
    finally:
        con.unregister("_skill_keys")
    return {(cid, pos): text for cid, pos, text in rows}


@dataclass
class Trial:
    """What one candidate would do: the proposal it makes, and its conversations replayed with it."""

    proposal: Proposal
    changed: dict[str, list[Row]]
    own: bool


def _best(
    rp: Replay,
    base: dict[str, list[Row]],
    skill: str,
    rank: tuple[int, int],
    pool: dict[str, Candidate],
    tried: dict[str, Trial],
) -> Trial | None:
    """The candidate that gains the most hits net of the false fires it adds, if it catches more than it costs.
    Those that could gain most are replayed first; one that cannot even tie the best so far is not replayed."""
    best, score = None, None
    for key in sorted(pool, key=lambda k: (-pool[k].misses, k)):
        if score is not None and pool[key].misses < score[0]:
            break
        t = tried.get(key) or tried.setdefault(key, _try(rp, base, skill, rank, key, pool[key]))
        p = t.proposal
        if p.hits_gained <= 0 or p.false_fires_added >= p.hits_gained or (p.hits_gained < MIN_HITS and not t.own):
            continue
        mine = (p.hits_gained - p.false_fires_added, t.own, -p.false_fires_added, p.share, words(key), -len(key))
        if score is None or mine > score:
            best, score = t, mine
    return best


def _try(rp: Replay, base: dict[str, list[Row]], skill: str, rank: tuple[int, int], key: str, c: Candidate) -> Trial:
    at: dict[str, set[int]] = defaultdict(set)
    for cid, pos in c.where:
        at[cid].add(pos)
    rp.phrases.append(Phrase(skill, key, key, rank))
    try:
        changed = {cid: rp.run(cid, (len(rp.phrases) - 1, frozenset(ps))) for cid, ps in at.items()}
    finally:
        rp.phrases.pop()
    before = {c: base.get(c, []) for c in changed}
    gained = sum(_count(changed[c], "hit") - _count(before[c], "hit") for c in changed)
    added = sum(_count(changed[c], "router_only") - _count(before[c], "router_only") for c in changed)
    catches = sorted(_hits(changed) - _hits(before))
    return Trial(
        Proposal(skill, key, gained, added, catches, c.share, len(c.where)), changed, key in rp.own.get(skill, "")
    )


def _hits(replayed: dict[str, list[Row]]) -> set[tuple[str, int]]:
    """The requests a phrase fires on that the model loaded the skill for (a hit always has its request)."""
    return {
        (r.conversation_id, r.position)
        for rows in replayed.values()
        for r in rows
        if r.verdict == "hit" and r.position is not None
    }


def _count(rows: list[Row], verdict: str) -> int:
    return sum(r.verdict == verdict for r in rows)
