"""The person's own turns, as the problem rules read them (docs/definitions.md#problems-a-reviewer-flags): only
``messages.origin = 'person'`` turns, in the person's own words (``messages.person_text``: not a slash command's
expansion, a template's body or the IDE's context); SQL picks them, the rules read each one's first ``HEAD``
characters (what they say, not the log they paste). Flagged turns that follow one another are one incident
(``incidents``)."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from forensics.analyzers.problems.model import Problem
from forensics.kernel.selection import SELECTED

HEAD = 400
LONG_CHARS = 20_000  # characters of a long turn compared


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


def by_conversation(turns: list[Turn]) -> dict[str, list[Turn]]:
    """``turns`` per conversation, in their order."""
    by_conv: dict[str, list[Turn]] = {}
    for t in turns:
        by_conv.setdefault(t.conversation_id, []).append(t)
    return by_conv


def incidents(
    hits: list[tuple[Turn, str, str]], kind: str, norm: str, norms: dict[tuple[str, int], str] | None = None
) -> list[Problem]:
    """The findings of kind ``kind`` of ``hits`` (a flagged turn, its rule, its quote; in conversation and turn
    order): flagged turns that follow one another are one incident, its rules joined; ``norm`` unless ``norms`` says
    the turn's own."""
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
