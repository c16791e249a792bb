"""Trigger phrases for the table's misses: words of the requests before the model's own loads of a skill.

Candidates are cut from the missed requests themselves (a phrase must be a substring of what it should match):
runs of one to three words (jieba's words in Chinese, SPEC §7; whole words elsewhere) with nothing but one
space between them, starting and ending on a content word (no stop word, no single Han character or letter,
no number, path or identifier, nothing a secret rule matches). Each is ranked by how distinctive it is of the skill: of the requests that
contain it, the share whose turn loaded that skill (against every request of the selection). The router is
replayed with each candidate added and, one at a time, the one that gains the most hits net of the false fires
it adds is kept, only while it catches more requests than it fires on wrongly (seed 000: better to miss than to
fire wrongly) and on more than one request, unless the skill's own words (its id, the body it was loaded with)
hold the phrase: one request alone is an anecdote ("great, now make slides" is no trigger for slides). Among
equals, the skill's own words first, then the more distinctive, the fewer words, the shorter; last, the phrase
itself, so the result does not depend on any order.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

import duckdb
import polars as pl

from forensics.analyzers.skills.replay import MESSAGES, Phrase, Replay, Row
from forensics.redact import redact
from forensics.text.keywords import stop_words
from forensics.text.tokenize import Span, spans

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
            if j > i and text[words[j - 1].end:words[j].start] not in ("", " "):
                break
            last = words[j]
            phrase = text[first.start:last.end]
            if _content(first, stops) and _content(last, stops) and len(phrase) <= MAX_CHARS and redact(phrase) == phrase:
                out.add(phrase)
    return frozenset(out)


def _plain(w: Span) -> bool:
    """A word, not a number, a path or an identifier (report.pdf, src/app.py, v2, snake_case)."""
    return w.han or not any(c.isdigit() or c in "./\\_:" for c in w.word)


def _content(w: Span, stops: frozenset[str]) -> bool:
    return len(w.word) > 1 and w.word not in stops


def propose(con: duckdb.DuckDBPyConnection, rp: Replay, skills: list[str]) -> list[Proposal]:
    """New phrases, skill by skill (``skills`` in order: the table's, then those it lacks); ``rp`` gains them."""
    base = {cid: rp.run(cid) for cid in sorted(set(rp.matches) | set(rp.turns))}
    out: list[Proposal] = []
    for s in skills:
        missed = sorted({(r.conversation_id, r.position) for rows in base.values() for r in rows
                         if r.verdict == "model_only" and r.model_skill == s})
        if not missed:
            continue
        loaded = {(r.conversation_id, r.position) for rows in base.values() for r in rows
                  if r.model_skill == s and r.position is not None}
        pool = _pool(con, missed, loaded)
        rank = max((p.rank[1] for p in rp.phrases if p.skill == s), default=-1) + 1
        for _ in range(MAX_NEW):
            best = _best(rp, base, s, (skills.index(s), rank), pool)
            if best is None:
                break
            prop, phrase, changed = best
            out.append(prop)
            rp.phrases.append(phrase)
            for cid, pos in pool.pop(phrase.key)[1]:
                rp.matches[cid].setdefault(pos, []).append(len(rp.phrases) - 1)
            base.update(changed)
            rank += 1
    return out


def _pool(con: duckdb.DuckDBPyConnection, missed: list[tuple[str, int]],
          loaded: set[tuple[str, int]]) -> dict[str, tuple[float, list[tuple[str, int]]]]:
    """phrase -> (share of its requests whose turn loaded the skill, the requests holding it), for the POOL
    candidates covering the most misses that are distinctive enough to replay."""
    texts = _texts(con, missed)
    cover: dict[str, int] = defaultdict(int)
    for key in missed:
        for c in candidates(texts.get(key, "")):
            cover[c] += 1
    chosen = sorted(cover, key=lambda c: (-cover[c], len(c.split()), len(c), c))[:POOL]
    if not chosen:
        return {}
    con.register("_skill_candidate_rows", pl.DataFrame({"phrase": chosen}).to_arrow())
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {CANDIDATES} AS SELECT phrase FROM _skill_candidate_rows")
    finally:
        con.unregister("_skill_candidate_rows")
    hold: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for phrase, cid, pos in con.execute(  # no more requests than MIN_SHARE allows: fetch no common word's thousands
            f"SELECT phrase, conversation_id, position FROM (SELECT c.phrase, r.conversation_id, r.position, "
            f"count(*) OVER (PARTITION BY c.phrase) AS n FROM {CANDIDATES} c JOIN {MESSAGES} r "
            f"ON r.kind = 'request' AND contains(r.request, c.phrase)) WHERE n * ? <= ? ORDER BY 1, 2, 3",
            [MIN_SHARE, len(loaded)]).fetchall():
        hold[phrase].append((cid, pos))
    out = {}
    for phrase, where in hold.items():
        share = sum(k in loaded for k in where) / len(where)
        if share >= MIN_SHARE:
            out[phrase] = (share, where)
    return out


def _texts(con: duckdb.DuckDBPyConnection, keys: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
    con.register("_skill_keys", pl.DataFrame(keys, schema={"conversation_id": pl.String, "position": pl.Int32},
                                             orient="row").to_arrow())
    try:
        rows = con.execute(f"SELECT r.conversation_id, r.position, r.request FROM {MESSAGES} r JOIN _skill_keys k "
                           "USING (conversation_id, position)").fetchall()
    finally:
        con.unregister("_skill_keys")
    return {(cid, pos): text for cid, pos, text in rows}


def _best(rp: Replay, base: dict[str, list[Row]], skill: str, rank: tuple[int, int],
          pool: dict[str, tuple[float, list[tuple[str, int]]]]) -> tuple[Proposal, Phrase, dict[str, list[Row]]] | None:
    """The candidate that gains the most hits net of the false fires it adds, if it catches more than it costs."""
    best = None
    index = len(rp.phrases)
    for key in sorted(pool):
        share, where = pool[key]
        phrase = Phrase(skill, key, key, rank)
        rp.phrases.append(phrase)
        try:
            at: dict[str, set[int]] = defaultdict(set)
            for cid, pos in where:
                at[cid].add(pos)
            changed = {cid: rp.run(cid, (index, frozenset(ps))) for cid, ps in at.items()}
        finally:
            rp.phrases.pop()
        gained = sum(_count(changed[c], "hit") - _count(base.get(c, []), "hit") for c in changed)
        added = sum(_count(changed[c], "router_only") - _count(base.get(c, []), "router_only") for c in changed)
        if gained <= 0 or added >= gained:
            continue
        own = key in rp.own.get(skill, "")
        if gained < MIN_HITS and not own:
            continue
        score = (gained - added, own, -added, share, -len(key.split()), -len(key))
        if best is None or score > best[0]:
            catches = sorted({(r.conversation_id, r.position) for c in changed for r in changed[c]
                              if r.verdict == "hit"} - {(r.conversation_id, r.position) for c in changed
                                                       for r in base.get(c, []) if r.verdict == "hit"})
            best = (score, Proposal(skill, key, gained, added, catches, share, len(where)), phrase, changed)
    return None if best is None else best[1:]


def _count(rows: list[Row], verdict: str) -> int:
    return sum(r.verdict == verdict for r in rows)

