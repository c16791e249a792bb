"""The decisions of the warehouse as the memory rules see them: when each was made, until when it held, what
names its option, and which later decision of the same matter followed it.

A decision is *made* when its source message was written (else when it was recorded) and *holds* until a
later decision of its project and type with a matching title (``[memory] conflict_title_match``) follows it:
after that, naming its rejected options is the new decision's business, not a relitigation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from forensics.analyzers.keywords.settings import KeywordSettings
from forensics.analyzers.memory.cues import Cues, mentions_any, option_terms, terms
from forensics.analyzers.memory.settings import MemorySettings
from forensics.config import Config

# the name an alternative goes by in text: without a parenthesised remark ("MongoDB（运维成本高）")
NAME_SQL = "trim(regexp_replace(alternative, '[（(][^）)]*[）)]', '', 'g'))"


@dataclass
class Decision:
    source_id: str
    decision_id: str
    project: str
    conversation_id: str | None
    position: int | None  # of its source message in conversation_id
    turn_end: int | None  # position of the next user message after the source (its turn ends there)
    decision_type: str
    title: str
    content: str
    reason: str
    source_text: str
    importance: float
    created_at: datetime | None
    made_at: datetime | None
    alternatives: list[tuple[str, str]] = field(default_factory=list)  # (as recorded, the name to look for)
    title_terms: set[str] = field(default_factory=set)
    options: set[str] = field(default_factory=set)
    successor: Decision | None = None
    predecessor: Decision | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.source_id, self.decision_id)

    def holds_at(self, conversation_id: str, position: int, at: datetime | None) -> bool:
        """A message at (conversation, position, time) comes after this decision's turn and before its successor."""
        if self.conversation_id == conversation_id and self.position is not None:
            after = self.turn_end is not None and position >= self.turn_end
        else:
            after = at is not None and self.made_at is not None and at > self.made_at
        return after and not (
            self.successor is not None
            and self.successor.made_at is not None
            and at is not None
            and at >= self.successor.made_at
        )

    def recalled_by(self, text: str) -> bool:
        """``text`` names the decided option or the decision's title."""
        title = "".join(self.title.lower().split())
        return (bool(title) and title in "".join(text.lower().split())) or mentions_any(text, self.options)


def load(con: duckdb.DuckDBPyConnection, cfg: Config) -> list[Decision]:
    """Every decision, ordered as made (then by id), linked to the one that followed it on the same matter."""
    mode = KeywordSettings.of(cfg).tokenizer
    rows = con.execute("""
        SELECT d.source_id, d.decision_id, coalesce(d.project, ''), d.conversation_id, d.source_position,
               (SELECT min(n.position) FROM messages n WHERE n.conversation_id = d.conversation_id AND n.on_main_path
                AND n.role = 'user' AND n.position > d.source_position),
               coalesce(d.decision_type, ''), coalesce(d.title, ''), coalesce(d.decision_content, ''),
               coalesce(d.reason, ''), coalesce(m.content, ''), d.importance_score, d.created_at,
               coalesce(m.created_at, d.created_at)
        FROM decisions d LEFT JOIN messages m
          ON m.conversation_id = d.conversation_id AND m.position = d.source_position AND m.on_main_path
        ORDER BY 14 NULLS LAST, 13 NULLS LAST, d.source_id, TRY_CAST(d.decision_id AS BIGINT) NULLS LAST, d.decision_id
    """).fetchall()
    out = [Decision(*r) for r in rows]
    by_key = {d.key: d for d in out}
    for sid, did, alt, name in con.execute(
        f"SELECT source_id, decision_id, alternative, {NAME_SQL} FROM decision_alternatives ORDER BY ALL"
    ).fetchall():
        if (sid, did) in by_key and name:
            by_key[(sid, did)].alternatives.append((alt, name))
    for d in out:
        d.title_terms = terms(d.title, mode)
        rejected = set().union(*(terms(name, mode) for _, name in d.alternatives))
        d.options = option_terms(d.title, d.content, mode) - rejected  # "改用 Loki 取代 ELK" chooses Loki only
    _link(out, MemorySettings.of(cfg).conflict_title_match)
    return out


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _link(decisions: list[Decision], threshold: float) -> None:
    """Each decision's predecessor: the latest earlier one of its project and type on the same matter."""
    seen: dict[tuple[str, str], list[Decision]] = {}
    for d in decisions:
        same = seen.setdefault((d.project, d.decision_type), [])
        prev = next(
            (p for p in reversed(same) if p.successor is None and jaccard(p.title_terms, d.title_terms) >= threshold),
            None,
        )
        if prev is not None:
            prev.successor, d.predecessor = d, prev
        same.append(d)


def supersedes(later: Decision, earlier: Decision, cues: Cues) -> bool:
    """The later decision says it replaces the earlier: a supersede cue in what it recorded or was said in,
    or it lists the earlier decision's option among those it rejects."""
    said = "\n".join((later.title, later.content, later.reason, later.source_text))
    return cues.search(said) or any(mentions_any(name, earlier.options) for _, name in later.alternatives)


def conflicts(later: Decision, earlier: Decision) -> bool:
    """Different content: the later decision gives the matter other figures (a date moved, a cap raised) or does
    not keep the earlier one's option."""
    if "".join(later.content.lower().split()) == "".join(earlier.content.lower().split()):
        return False
    before, after = quantities(earlier.content, earlier.title), quantities(later.content, later.title)
    if before and after and before != after:
        return True
    return bool(earlier.options) and not all(mentions_any(later.content, [o]) for o in earlier.options)


_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")


def quantities(content: str, title: str) -> set[str]:
    """The figures a decision's content sets (dates, amounts, counts), beyond those its title names: the tokenizer
    drops numbers, so "发布日期定为 2025-09-01" and "… 2025-09-15" name the same terms and differ only here."""
    return set(_NUMBER.findall(content)) - set(_NUMBER.findall(title))
