"""The seed harness's SkillRouter replayed over the user's requests, held against the skills the model loaded itself.

The router (docs/metrics.md#skills): a user message is matched against every phrase of the table, case-insensitive; of
the skills not yet loaded in the conversation, the one with the longest matching phrase is injected (ties: the
table's order), at most one per message. A skill counts as loaded once the replayed router or the model has
loaded it. Requests and harness text are told apart by the named query ``skill_messages``; the model's loads
are the tool calls of ``skill_loads`` and the skill bodies Claude Code writes on the user role.

A request's *turn* runs to the next request. Verdicts, one row per judged event:

- ``hit``: the router fires a skill on a request and that skill is loaded in its turn;
- ``router_only``: it fires and the skill is not loaded in the turn (a false fire: tokens a small model pays);
- ``model_only``: the model loads a skill the router did not fire on that turn's request, and no one had loaded
  it yet (a miss the table could have caught);
- not judged: ``already_loaded`` (the skill was loaded earlier in the conversation: the router could not fire
  it), ``command`` (the user loaded it by name, a slash command), ``no_request`` (loaded before any request of
  the conversation, as a session resumed after a compaction does).

SQL finds the matches and the loads (a cross join of requests and phrases, ASOF joins for the turns); only
the sparse events run through Python, whose order the loaded-state needs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

import duckdb
import polars as pl

from forensics.analyzers.skills.table import TriggerTable
from forensics.kernel.arrow import stream
from forensics.kernel.selection import SELECTED
from forensics.warehouse.queries import load_query

MESSAGES = "_skill_messages"  # temp: the selection's user messages as skill_messages classifies them
PHRASES = "_skill_phrases"  # temp: the phrases being replayed, lower-cased as DuckDB lowers the requests
JUDGED = ("hit", "router_only", "model_only")
ROW_SCHEMA = {
    "conversation_id": pl.String,
    "position": pl.Int32,
    "router_skill": pl.String,
    "model_skill": pl.String,
    "verdict": pl.String,
    "phrase": pl.String,
    "load_position": pl.Int32,
    "via": pl.String,
}


@dataclass(frozen=True)
class Phrase:
    skill: str
    text: str  # as the table writes it
    key: str  # lower-cased: what a request must contain
    rank: tuple[int, int]  # (skill's place, phrase's place) in the table: breaks ties between equal lengths


@dataclass(frozen=True)
class Load:
    position: int  # the assistant message calling the tool, or the user message carrying the body
    skill: str
    via: str  # tool | injected (a skill body with no call before it) | command (a slash command)


@dataclass(frozen=True)
class Row:
    conversation_id: str
    position: int | None  # the request whose turn it is (None: before any request)
    router_skill: str | None
    model_skill: str | None
    verdict: str
    phrase: str | None
    load_position: int | None
    via: str | None


@dataclass
class Replay:
    """Everything the router needs, gathered once; ``run`` replays a conversation (with a phrase more, to see
    what that phrase would change)."""

    phrases: list[Phrase]
    matches: dict[str, dict[int, list[int]]]  # conversation -> request position -> indices into phrases
    turns: dict[str, dict[int | None, list[Load]]]  # conversation -> turn (request position) -> loads
    kinds: dict[str, int] = field(default_factory=dict)  # user messages by skill_messages kind
    requests: int = 0
    conversations: int = 0  # selected conversations with at least one request
    skipped: dict[str, int] = field(default_factory=dict)  # load calls that load nothing: failed, synthetic, unnamed
    own: dict[str, str] = field(default_factory=dict)  # skill -> its own words: id, names, texts it was loaded with

    def run(self, cid: str, extra: tuple[int, frozenset[int]] | None = None) -> list[Row]:
        matched, turns = self.matches.get(cid, {}), self.turns.get(cid, {})
        positions = set(matched) | {t for t in turns if t is not None} | (set(extra[1]) if extra else set())
        loaded: set[str] = set()
        rows: list[Row] = []
        for q in [None, *sorted(positions)]:
            idx = matched.get(q, []) if q is not None else []
            if extra and q in extra[1]:
                idx = [*idx, extra[0]]
            live = [self.phrases[i] for i in idx if self.phrases[i].skill not in loaded]
            fire = min(live, key=lambda p: (-len(p.key), p.rank)) if live else None
            here = turns.get(q, [])
            for ld in here:
                verdict = (
                    "hit"
                    if fire and ld.skill == fire.skill
                    else "already_loaded"
                    if ld.skill in loaded
                    else "command"
                    if ld.via == "command"
                    else "no_request"
                    if q is None
                    else "model_only"
                )
                rows.append(
                    Row(
                        cid,
                        q,
                        ld.skill if verdict == "hit" else None,
                        ld.skill,
                        verdict,
                        fire.text if verdict == "hit" and fire else None,
                        ld.position,
                        ld.via,
                    )
                )
            if fire and all(ld.skill != fire.skill for ld in here):
                rows.append(Row(cid, q, fire.skill, None, "router_only", fire.text, None, None))
            loaded.update(ld.skill for ld in here)
            if fire:
                loaded.add(fire.skill)
        return rows

    def rows(self) -> list[Row]:
        return [r for cid in sorted(set(self.matches) | set(self.turns)) for r in self.run(cid)]


def canonical(name: str, ids: dict[str, str]) -> str:
    """A loaded skill's name as the table spells it: ``/pdf``, ``PDF`` and a plugin's ``document-skills:pdf`` are
    the table's ``pdf``; a skill the table lacks keeps its bare name (``document-skills:pdf`` -> ``pdf``, the
    name its body's folder has)."""
    n = name.strip().lstrip("/")
    bare = n.rsplit(":", 1)[-1]
    return ids.get(n.lower()) or ids.get(bare.lower()) or bare


def gather(con: duckdb.DuckDBPyConnection, table: TriggerTable | None) -> Replay:
    """Classify the selection's user messages, match the table, find the loads (needs ``sel_conversations``)."""
    sel = f"conversation_id IN (SELECT conversation_id FROM {SELECTED})"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {MESSAGES} AS SELECT * FROM ({load_query('skill_messages', __package__).sql}) q "
        f"WHERE q.{sel}"
    )
    skills = table.skills if table else {}
    ids = {s.lower(): s for s in reversed(list(skills))}  # the first spelling wins, as the first skill wins ties
    phrases = [Phrase(s, text, "", (i, j)) for i, (s, ps) in enumerate(skills.items()) for j, text in enumerate(ps)]
    phrases = _set_phrases(con, phrases)
    rp = Replay(phrases, defaultdict(dict), defaultdict(lambda: defaultdict(list)))
    rp.kinds = dict(con.execute(f"SELECT kind, count(*) FROM {MESSAGES} GROUP BY 1 ORDER BY 1").fetchall())
    rp.requests = rp.kinds.get("request", 0)
    rp.conversations = con.execute(
        f"SELECT count(DISTINCT conversation_id) FROM {MESSAGES} WHERE kind = 'request'"
    ).fetchall()[0][0]
    for cid, pos, idx in con.execute(
        f"SELECT r.conversation_id, r.position, list(p.i ORDER BY p.i) FROM {MESSAGES} r JOIN {PHRASES} p "
        f"ON r.kind = 'request' AND contains(r.request, p.key) GROUP BY 1, 2"
    ).fetchall():
        rp.matches[cid][pos] = idx
    _loads(con, rp, ids)
    return rp


def _set_phrases(con: duckdb.DuckDBPyConnection, phrases: list[Phrase]) -> list[Phrase]:
    """Put ``phrases`` in the temp table the matching joins, lower-cased by DuckDB (as the requests are, so
    a phrase matches exactly what it should); returns them with their keys."""
    df = pl.DataFrame(
        {"i": list(range(len(phrases))), "text": [p.text for p in phrases]}, schema={"i": pl.Int32, "text": pl.String}
    )
    con.register("_skill_phrase_rows", stream(df))
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {PHRASES} AS SELECT i, lower(text) AS key FROM _skill_phrase_rows")
    finally:
        con.unregister("_skill_phrase_rows")
    keys = dict(con.execute(f"SELECT i, key FROM {PHRASES}").fetchall())
    return [Phrase(p.skill, p.text, keys[i], p.rank) for i, p in enumerate(phrases)]


OWN_CHARS = 20000  # of each text a skill was loaded with
OWN_TEXTS = 3  # distinct texts per skill


def _loads(con: duckdb.DuckDBPyConnection, rp: Replay, ids: dict[str, str]) -> None:
    """The loads of every turn: the model's calls, and the skill bodies on the user role that no call explains (a
    body after a call of the turn is that call's; one right after a slash command, the user's). On the way, each
    skill's own words (``Replay.own``): its id, the names it was loaded under and the text it was loaded with (the
    body, the call's result)."""
    rows = con.execute(f"""
        WITH calls AS (
            SELECT q.conversation_id, q.position, q.call_index AS k, q.skill,
                   CASE WHEN q.synthetic THEN 'synthetic' WHEN q.failed THEN 'failed'
                        WHEN q.skill IS NULL THEN 'unnamed' ELSE 'tool' END AS via, q.result_position AS text_at
            FROM ({load_query("skill_loads", __package__).sql}) q
            WHERE q.conversation_id IN (SELECT conversation_id FROM {SELECTED})
        ),
        events AS (
            SELECT * FROM calls
            UNION ALL
            SELECT conversation_id, position, 0, skill, kind, position FROM {MESSAGES}
            WHERE kind IN ('skill_body', 'command') AND skill IS NOT NULL
        ),
        requests AS (SELECT conversation_id, position FROM {MESSAGES} WHERE kind = 'request')
        SELECT e.conversation_id, r.position AS turn, e.position, e.via, e.skill, lower(left(m.content, {OWN_CHARS}))
        FROM events e ASOF LEFT JOIN requests r ON e.conversation_id = r.conversation_id AND e.position > r.position
        LEFT JOIN messages m ON m.conversation_id = e.conversation_id AND m.position = e.text_at
             AND e.via IN ('tool', 'skill_body') AND m.on_main_path
        ORDER BY e.conversation_id, e.position, e.k""").fetchall()
    skipped: dict[str, int] = defaultdict(int)
    waiting: dict[tuple[str, int | None], list[str]] = defaultdict(list)  # calls of the turn awaiting their body
    command: tuple[str, int, str] | None = None  # the last slash command: conversation, position, skill
    own: dict[str, list[str]] = defaultdict(list)
    names: dict[str, set[str]] = defaultdict(set)  # skill -> the names it was loaded under (a body's folder too)
    for cid, turn, pos, via, name, text in rows:
        if via in ("synthetic", "failed", "unnamed"):
            skipped[via] += 1
            continue
        skill = canonical(name, ids)
        if via == "command":
            command = (cid, pos, skill)
            continue
        if via == "tool":
            waiting[(cid, turn)].append(skill)
            kind = "tool"
        elif waiting[(cid, turn)]:  # Claude Code writes a call's body right after its result, named by its folder
            skill = waiting[(cid, turn)].pop(0)  # (which may differ from the name the call used): that call's load
            kind = ""  # its load is the call's, counted already
        elif command and command[:2] == (cid, pos - 1):  # the body right after /skill: the user's own load,
            skill, kind = command[2], "command"  # named as the user typed it
        else:
            kind = "injected"  # a body no call or command explains: a load all the same
        names[skill].add(name.strip().lstrip("/").lower())
        if text and text not in own[skill] and len(own[skill]) < OWN_TEXTS:
            own[skill].append(text)
        here = rp.turns[cid][turn]
        if kind and all(ld.skill != skill for ld in here):  # one load per skill and turn
            here.append(Load(pos, skill, kind))
    rp.skipped = dict(skipped)
    for skill in {*ids.values(), *own, *names}:
        words = sorted({" ".join(re.split(r"[-_:./]+", n)) for n in {skill.lower(), *names[skill]}})
        rp.own[skill] = " ".join([*own[skill], *words])


def frame_of(rows: list[Row]) -> pl.DataFrame:
    return (
        pl.DataFrame([r.__dict__ for r in rows], schema=ROW_SCHEMA, orient="row")
        if rows
        else pl.DataFrame(schema=ROW_SCHEMA)
    )


def tally(rows: list[Row], skills: list[str]) -> dict[str, dict[str, int]]:
    """Per skill (the table's first, in order, then the others by name): router, model, hits, router_only,
    model_only and the loads not judged."""
    out: dict[str, dict[str, int]] = {}
    extra = sorted({r.model_skill for r in rows if r.model_skill} - set(skills))
    for s in [*skills, *extra]:
        c: defaultdict[str, int] = defaultdict(int)
        for r in rows:
            if s in (r.router_skill, r.model_skill):
                c[r.verdict] += 1
        out[s] = {
            "router": c["hit"] + c["router_only"],
            "model": c["hit"] + c["model_only"],
            "hits": c["hit"],
            "router_only": c["router_only"],
            "model_only": c["model_only"],
            "already_loaded": c["already_loaded"],
            "command": c["command"],
            "no_request": c["no_request"],
        }
    return out
