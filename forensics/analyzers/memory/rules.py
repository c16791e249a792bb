"""The four findings (docs/memory.md#the-four-findings) over the selected conversations of decision-memory sources.

DuckDB narrows the messages to candidates (an assistant message holding a rejected option's name, a user
message holding a question cue, a message holding a decision cue); Python reads their sentences. Each rule
leans to silence where the text is ambiguous: a false finding costs more than a missed one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.analyzers.memory.cues import GENERIC, Cues, mentions_any, names, sentences, terms
from forensics.analyzers.memory.decisions import NAME_SQL, Decision, conflicts, supersedes
from forensics.analyzers.memory.settings import MemorySettings
from forensics.config import Config
from forensics.kernel.selection import SELECTED

KINDS = ("relitigation", "decision_not_recalled", "decision_conflict", "decision_unrecorded")
QUOTE = 160  # characters of the evidence sentence kept in a finding's detail


@dataclass
class Hit:
    """One row of memory_findings, with the positions a reader opens."""

    kind: str
    severity: str
    decision_id: str | None
    conversation_id: str | None
    native_id: str | None
    position: int | None
    alternative: str | None
    detail: str
    positions: list[int] = field(default_factory=list)
    project: str = ""


@dataclass(frozen=True)
class Readers:
    negation: Cues
    weighing: Cues
    decision: Cues  # the chosen option follows the cue: 就用 Redis
    decided_after: Cues  # decision cues written "X cue": the option comes before it (Loki 定了)
    undecided: Cues
    supersede: Cues
    question: Cues
    declined: Cues
    weak: Cues  # a decision only beside a contrast or with the user's agreement: "I'll use X instead of Y"
    contrast: Cues
    agreement: Cues
    recommend: Cues
    wrapped: tuple[re.Pattern[str], ...] = ()  # decision cues written "A X B": 就 Kafka 吧, 不用 MySQL 了

    @classmethod
    def of(cls, cfg: Config) -> Readers:
        m = MemorySettings.of(cfg)
        after = [c.strip()[1:] for c in m.decision_cues if _AFTER.match(c.strip())]
        wrapped = [c.strip() for c in m.decision_cues if _WRAPPED.match(c.strip())]
        before = [c for c in m.decision_cues if not _AFTER.match(c.strip()) and c.strip() not in wrapped]
        return cls(
            Cues.of(m.negation_cues),
            Cues.of(m.weighing_cues),
            Cues.of(before, align_han=True),
            Cues.of(after, align_han=True),
            Cues.of(m.undecided_cues),
            Cues.of(m.supersede_cues),
            Cues.of(m.question_cues),
            Cues.of(m.declined_cues, align_han=True),
            Cues.of(m.weak_decision_cues),
            Cues.of(m.contrast_cues),
            Cues.of(m.agreement_cues, align_han=True),
            Cues.of(m.recommend_cues),
            tuple(_wrapped(c) for c in wrapped),
        )


def _wrapped(cue: str) -> re.Pattern[str]:
    """ "就 X 吧" as a pattern: the cue's ends around nothing but a product's name (Latin, up to three words): 就玩
    2-3 小时吧 and 就帮我找一个…的景点吧 name none."""
    head, tail = (p.strip() for p in _PLACEHOLDER.split(cue, maxsplit=1))
    return re.compile(re.escape(head) + r"\s*([A-Za-z][\w.+#-]*(?:\s+[A-Za-z0-9][\w.+#-]*){0,2})\s*" + re.escape(tail))


def candidates(cues: list[str]) -> list[str]:
    """What a message must contain (lower case) to be read for a decision: each cue, its fixed part for X cues."""
    return [
        p.strip().lower()
        for c in cues
        for p in _PLACEHOLDER.split(c)[: 1 if _AFTER.match(c.strip()) is None else 2][-1:]
        if p.strip()
    ]


_AFTER = re.compile(r"X(?![A-Za-z])\s*\S")  # a cue written "X 定了"
_WRAPPED = re.compile(r"[^X\s]+\s*X(?![A-Za-z])\s*\S")  # a cue written "就 X 吧"
_PLACEHOLDER = re.compile(r"(?<![A-Za-z])X(?![A-Za-z])")
_NEGATED = "不没未别非"  # a Chinese cue right after one of these is negated: 不采用 MongoDB
_CLAUSE = re.compile(r"[，,、：:]")
_NAMED = re.compile(r"[A-Za-z0-9]")  # what a clause before a postfix cue must name: a product, a version, a date


def find(con: duckdb.DuckDBPyConnection, cfg: Config, decisions: list[Decision]) -> list[Hit]:
    r = Readers.of(cfg)
    stated = list(unrecorded(con, cfg, decisions, r))
    hits = [
        *relitigation(con, decisions, r),
        *not_recalled(con, cfg, decisions, r),
        *conflict(con, decisions, r),
        *stated,
        *chosen_over_two_turns(con, cfg, decisions, r, stated),
    ]
    return sorted(hits, key=lambda h: (KINDS.index(h.kind), h.native_id or "", h.position or -1, h.decision_id or ""))


def _when(d: Decision) -> str:
    return f"{d.made_at:%Y-%m-%d}" if d.made_at else "an unknown date"


def _quote(s: str) -> str:
    s = " ".join(s.split())
    return f"“{s[:QUOTE]}{'…' if len(s) > QUOTE else ''}”"


def relitigation(con: duckdb.DuckDBPyConnection, decisions: list[Decision], r: Readers) -> Iterator[Hit]:
    """An assistant message, while a decision holds, naming one of its rejected options outside a rejection."""
    by_key = {d.key: d for d in decisions}
    rows = con.execute(f"""
        SELECT m.conversation_id, c.native_id, m.position, m.created_at, m.content, a.source_id, a.decision_id,
               a.alternative, {NAME_SQL.replace("alternative", "a.alternative")}
        FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
        JOIN decisions d ON d.project = c.project
        JOIN decision_alternatives a ON a.source_id = d.source_id AND a.decision_id = d.decision_id
        WHERE m.on_main_path AND m.role = 'assistant' AND c.project IS NOT NULL
          AND m.conversation_id IN (SELECT conversation_id FROM {SELECTED})
          AND contains(lower(m.content), lower({NAME_SQL.replace("alternative", "a.alternative")}))
        ORDER BY 1, 3, 6, 7, 8""").fetchall()
    for cid, native, pos, at, text, sid, did, alt, name in rows:
        d = by_key.get((sid, did))
        if d is None or not name or not d.holds_at(cid, pos, at):
            continue
        naming = [s for s in sentences(text) if names(s, name)]
        open_ = [s for s in naming if not r.negation.about(s, name)]
        if not open_:
            continue  # not named as a word, or only ever in a sentence that rejects it
        weighs = r.weighing.search(text)
        yield Hit(
            "relitigation",
            "high" if weighs else "low",
            did,
            cid,
            native,
            pos,
            alt,
            f"{'weighs' if weighs else 'names'} {alt!r}, rejected by decision {did} ({d.title}) on {_when(d)}: "
            f"{_quote(open_[0])}",
            [pos],
            d.project,
        )


def not_recalled(con: duckdb.DuckDBPyConnection, cfg: Config, decisions: list[Decision], r: Readers) -> Iterator[Hit]:
    """A user question about a decided matter whose answer names neither the decided option nor the decision."""
    mode, need = KeywordSettings.of(cfg).tokenizer, MemorySettings.of(cfg).question_match
    by_project: dict[str, list[Decision]] = {}
    for d in decisions:
        if len(d.title_terms) >= 2 and d.options:  # without an option to name, a reply cannot be judged
            by_project.setdefault(d.project, []).append(d)
    rows = con.execute(
        f"""
        WITH u AS (
            SELECT m.conversation_id, c.native_id, c.project, m.position, m.created_at, m.content,
                   lead(m.position) OVER (PARTITION BY m.conversation_id ORDER BY m.position) AS next_user
            FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
            WHERE m.on_main_path AND m.role = 'user' AND c.project IN (SELECT project FROM decisions)
              AND m.conversation_id IN (SELECT conversation_id FROM {SELECTED}))
        SELECT u.conversation_id, u.native_id, u.project, u.position, u.created_at, u.content,
               string_agg(a.content, '\n' ORDER BY a.position) FILTER (WHERE NOT a.blank),
               min(a.position) FILTER (WHERE NOT a.blank)
        FROM u LEFT JOIN messages a ON a.conversation_id = u.conversation_id AND a.on_main_path
             AND a.role = 'assistant' AND a.position > u.position AND (u.next_user IS NULL OR a.position < u.next_user)
        WHERE len(list_filter(?::VARCHAR[], lambda x: contains(lower(u.content), x))) > 0
        GROUP BY ALL ORDER BY 1, 4""",
        [[c.lower() for c in MemorySettings.of(cfg).question_cues]],
    ).fetchall()
    for cid, native, project, pos, at, text, reply, reply_pos in rows:
        if reply is None or not r.question.search(text):
            continue
        asked = terms(text, mode)
        best: tuple[float, datetime, Decision] | None = None
        for d in by_project.get(project, ()):
            shared = len(d.title_terms & asked)
            cover = shared / len(d.title_terms)
            if shared >= 2 and cover >= need and d.holds_at(cid, pos, at):
                key = (cover, d.made_at or datetime.min, d)
                best = key if best is None or key[:2] > best[:2] else best
        if best is None:
            continue
        d = best[2]
        if mentions_any(text, d.options) or d.recalled_by(reply):
            continue  # the question names the option itself, or the answer recalls the decision
        rejected = [alt for alt, name in d.alternatives if names(reply, name)]
        yield Hit(
            "decision_not_recalled",
            "high" if rejected else "low",
            d.decision_id,
            cid,
            native,
            reply_pos,
            None,
            f"asks about decision {d.decision_id} ({d.title}: {d.content}, {_when(d)}); the answer names "
            f"neither"
            + (f" and weighs rejected {', '.join(map(repr, rejected))}" if rejected else "")
            + f": {_quote(reply)}",
            [pos, reply_pos],
            project,
        )


def conflict(con: duckdb.DuckDBPyConnection, decisions: list[Decision], r: Readers) -> Iterator[Hit]:
    """A decision contradicting the one before it on the same matter without saying it replaces it."""
    selected = {c for (c,) in con.execute(f"SELECT conversation_id FROM {SELECTED}").fetchall()}
    natives = dict(
        con.execute("SELECT conversation_id, native_id FROM conversations WHERE project IS NOT NULL").fetchall()
    )
    for d in decisions:
        p = d.predecessor
        if p is None or (d.conversation_id is not None and d.conversation_id not in selected):
            continue
        if conflicts(d, p) and not supersedes(d, p, r.supersede):
            yield Hit(
                "decision_conflict",
                "high",
                d.decision_id,
                d.conversation_id,
                natives.get(d.conversation_id),
                d.position,
                None,
                f"decision {d.decision_id} ({d.title}: {d.content}, {_when(d)}) contradicts "
                f"decision {p.decision_id} ({p.title}: {p.content}, {_when(p)}) and does not say it replaces it",
                [d.position] if d.position is not None else [],
                d.project,
            )


def unrecorded(con: duckdb.DuckDBPyConnection, cfg: Config, decisions: list[Decision], r: Readers) -> Iterator[Hit]:
    """A message stating a decision that no decision was recorded from (first such statement of a turn). The user
    decides by stating it; the assistant by answering the user's question with it, when the user's next message
    accepts or builds on it rather than turns it down."""
    mode = KeywordSettings.of(cfg).tokenizer
    sourced: dict[str, list[int]] = {}
    for d in decisions:
        if d.conversation_id is not None and d.position is not None:
            sourced.setdefault(d.conversation_id, []).append(d.position)
    by_project: dict[str, list[Decision]] = {}
    for d in decisions:
        by_project.setdefault(d.project, []).append(d)
    cues = [c.strip() for c in MemorySettings.of(cfg).decision_cues if c.strip()]
    rows = con.execute(
        f"""
        WITH t AS (
            SELECT m.conversation_id, c.native_id, c.project, m.position, m.role, m.content,
                   max(CASE WHEN m.role = 'user' THEN m.position END) OVER w AS turn_start,
                   min(CASE WHEN m.role = 'user' THEN m.position END) OVER (PARTITION BY m.conversation_id
                       ORDER BY m.position ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS turn_end
            FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
            WHERE m.on_main_path AND c.project IS NOT NULL
              AND m.conversation_id IN (SELECT conversation_id FROM {SELECTED})
            WINDOW w AS (PARTITION BY m.conversation_id ORDER BY m.position ROWS UNBOUNDED PRECEDING))
        SELECT t.conversation_id, t.native_id, t.project, t.position, t.role, t.content, t.turn_start, t.turn_end,
               asked.content, answer.content
        FROM t LEFT JOIN messages asked ON asked.conversation_id = t.conversation_id AND asked.on_main_path
                    AND asked.position = t.turn_start
               LEFT JOIN messages answer ON answer.conversation_id = t.conversation_id AND answer.on_main_path
                    AND answer.position = t.turn_end
        WHERE t.role IN (SELECT unnest(?::VARCHAR[]))
          AND len(list_filter(?::VARCHAR[], lambda x: contains(lower(t.content), x))) > 0
        ORDER BY 1, 4""",
        [
            list(MemorySettings.of(cfg).decision_roles),
            candidates(cues + list(MemorySettings.of(cfg).weak_decision_cues)),
        ],
    ).fetchall()
    done: set[tuple[str, int | None]] = set()
    for cid, native, project, pos, role, text, start, end, asked, answer in rows:
        turn = (cid, start if start is not None else pos)
        if turn in done:
            continue
        if any(
            (start is None or p >= start) and (end is None or p < end) for p in sourced.get(cid, ())
        ) or pos in sourced.get(cid, ()):
            continue  # a decision was recorded from this turn
        agreed = role != "user" and _agreed(answer, r)
        if role != "user" and not (agreed or _accepted(asked, answer, r)):
            continue  # an assistant's proposal nobody asked for, nobody answered, or the user turned down
        # a weak cue ("switch to") is ratified by agreement only in answer to the user's question
        ratified = agreed and bool(asked) and r.question.search(asked or "")
        statement = next((s for s in sentences(text) if _states(s, r, mode, ratified)), None)
        if statement is None:
            continue
        known = by_project.get(project, ())
        if any(d.recalled_by(statement) or mentions_any(statement, [n for _, n in d.alternatives]) for d in known):
            continue  # restates a recorded decision (or one of its rejections)
        done.add(turn)
        yield Hit(
            "decision_unrecorded",
            "low",
            None,
            cid,
            native,
            pos,
            None,
            f"states a decision no decision_events row was recorded from: {_quote(statement)}",
            [pos],
            project,
        )


def _accepted(asked: str | None, answer: str | None, r: Readers) -> bool:
    """The assistant answered the user's question and the user's next message does not turn the answer down."""
    if not asked or not answer or not r.question.search(asked):
        return False
    first = next(iter(sentences(answer)), "")
    return not r.declined.search(first)


def _agreed(answer: str | None, r: Readers) -> bool:
    """The user's reply agrees in its first sentence and does not turn anything down."""
    first = next(iter(sentences(answer or "")), "")
    return r.agreement.search(first) and not r.declined.search(first)


def _states(sentence: str, r: Readers, mode: str, agreed: bool = False) -> bool:
    """A sentence stating a decision: a decision cue and the option chosen, not a question, not pending, not a
    list of options (主要由性能决定 names nothing after its cue: it states no decision; 不采用 X chooses nothing).
    A weak cue ("I'll use") states one only beside a contrast (instead of Y) or with the user's agreement."""
    if r.question.search(sentence) or r.undecided.search(sentence):
        return False
    if any(p.search(sentence) for p in r.wrapped):
        return True
    span = r.weak.span(sentence)
    if span is not None and (agreed or r.contrast.search(sentence)) and terms(sentence[span[1] :], mode) - GENERIC:
        return True
    span = r.decision.span(sentence)
    if (
        span is not None
        and not _negated(sentence, span[0])
        and not sentence[span[1] :].startswith("的")
        and terms(sentence[span[1] :], mode) - GENERIC
    ):
        return True
    span = r.decided_after.span(sentence)
    if span is None or _negated(sentence, span[0]):
        return False
    clause = _CLAUSE.split(sentence[: span[0]])[-1]
    return bool(_NAMED.search(clause)) and bool(terms(clause, mode) - GENERIC)


def _negated(sentence: str, start: int) -> bool:
    return start > 0 and sentence[start - 1] in _NEGATED


_NAME = r"[A-Za-z][\w.+#-]*"
_EITHER = re.compile(rf"({_NAME})\s*(?:,?\s*or|还是|或者|或是|vs\.?|versus)\s*({_NAME})", re.IGNORECASE)
_ORDINALS = (
    (re.compile(r"(?i)\b(first|former)\b|第一|前者|前一个"), 0),
    (re.compile(r"(?i)\b(second|latter)\b|第二|后者|后一个"), 1),
)
SHORT_ANSWER = 40  # characters: a longer reply is more than an answer to "X or Y?"


def chosen_over_two_turns(
    con: duckdb.DuckDBPyConnection, cfg: Config, decisions: list[Decision], r: Readers, stated: list[Hit]
) -> Iterator[Hit]:
    """A decision spread over two turns: the user asks "X or Y?", the assistant answers, and the user's next
    message picks one (names only it, "the second", or agrees — 好, ok — with the one the assistant recommended).
    Silent when a decision was recorded from either turn, when the assistant's answer already stated it, or when
    the reply is a question, pending or turns both down."""
    mode = KeywordSettings.of(cfg).tokenizer
    sourced: dict[str, set[int]] = {}
    for d in decisions:
        if d.conversation_id is not None and d.position is not None:
            sourced.setdefault(d.conversation_id, set()).add(d.position)
    by_project: dict[str, list[Decision]] = {}
    for d in decisions:
        by_project.setdefault(d.project, []).append(d)
    flagged = {(h.conversation_id, h.position) for h in stated}
    rows = con.execute(f"""
        SELECT m.conversation_id, c.native_id, c.project, m.position, m.role, m.content
        FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
        WHERE m.on_main_path AND c.project IS NOT NULL AND m.role IN ('user', 'assistant') AND NOT m.blank
          AND m.conversation_id IN (SELECT conversation_id FROM {SELECTED})
        ORDER BY 1, 4""").fetchall()
    asked: tuple[int, str, list[str]] | None = None  # the open "X or Y?": position, text, options
    between: list[tuple[int, str]] = []
    cid_now = None
    for cid, native, project, pos, role, text in rows:
        if cid != cid_now:
            cid_now, asked, between = cid, None, []
        if role == "assistant":
            between.append((pos, text))
            continue
        if asked is not None and between:
            chosen = _picked(text, asked[2], [t for _, t in between], r)
            turn = {asked[0], pos, *(p for p, _ in between)}
            if (
                chosen is not None
                and not (turn & sourced.get(cid, set()))
                and not any((cid, p) in flagged for p in turn)
                and not any(d.recalled_by(chosen) for d in by_project.get(project, ()))
            ):
                yield Hit(
                    "decision_unrecorded",
                    "low",
                    None,
                    cid,
                    native,
                    pos,
                    None,
                    f"chooses {chosen!r} of {_quote(asked[1])} and no decision_events row was recorded "
                    f"from it: {_quote(text)}",
                    [asked[0], pos],
                    project,
                )
        options = _options(text, r, mode)
        asked, between = ((pos, text, options) if options else None), []


def _options(text: str, r: Readers, mode: str) -> list[str]:
    """The two options of a question "X or Y?" (X 还是 Y？), when the message asks one."""
    for s in sentences(text):
        if not r.question.search(s):
            continue
        m = _EITHER.search(s)
        if m and m.group(1).lower() != m.group(2).lower() and all(terms(o, mode) - GENERIC for o in m.groups()):
            return [m.group(1), m.group(2)]
    return []


def _picked(reply: str, options: list[str], answer: list[str], r: Readers) -> str | None:
    """The option a short reply picks: the only one it names, the one its ordinal points at, or the one the
    assistant recommended when the reply agrees."""
    reply = reply.strip()
    if len(reply) > SHORT_ANSWER or r.question.search(reply) or r.undecided.search(reply) or r.declined.search(reply):
        return None
    named = [o for o in options if names(reply, o)]
    if len(named) == 1:
        return named[0]
    if named:
        return None
    for pattern, i in _ORDINALS:
        if pattern.search(reply):
            return options[i]
    if not r.agreement.search(reply):
        return None
    recommended = {o for t in answer for s in sentences(t) if r.recommend.search(s) for o in options if names(s, o)}
    return recommended.pop() if len(recommended) == 1 else None
