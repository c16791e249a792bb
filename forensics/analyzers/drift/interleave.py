"""Drift type 4, multi-topic interleave: after a topic switch, how long the assistant keeps working the old topic.

It needs the switches, from the topic analyzer's ``topic_switches`` table (conversation_id, position, ...);
without that table the type is "not computed": guessing switches here would duplicate the topic analyzer
badly. For each switch at position s (a user message):

- the old segment is everything from the previous switch (or the start) to s-1; its vocabulary is the
  specific targets (``identifiers.target_tokens``) of its tool-call argument values (not their keys: every call of
  a tool shares those) and of the person's and the assistant's text (not the harness's, not tool output); a
  number, an abbreviation or a bare id (a user or reservation id both topics use) is no evidence
  (``identifiers.names_something``); requests start at the person's turns (``messages.origin``, docs/definitions.md#whose-turn-it-is);
- the new topic's vocabulary is the user message at s (targets and content tokens) plus the targets of its
  segment after this turn, at most ``NEW_WINDOW`` messages of it (a file the new topic keeps using is no
  evidence of the old one: topics share files, e.g. src/ai/agentic.rs; but further on the segment may hold a
  later topic whose switch the detector missed, and its files say nothing of this one), and what the assistant's
  answer that ends the turn names (a follow-up on the same feature works on its files by right);
- each assistant message of the turn that follows s (until the next user message) is *old* when its own
  targets (tool-call arguments and text, folders left out) meet the old vocabulary and not the new one,
  *new* when they meet the new one, else neutral (a file neither side named).

The lag starts only when the first tool round after s is old; it runs to the last old round before the
first new one (neutral rounds in between count: 'ai_tools' in the seed's example is no file of either
side) and includes that round's tool results. Lag = messages from s+1 to that end, evidence = the old rounds.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl

from forensics.text.identifiers import names_something, target_tokens, union, values_text
from forensics.text.keywords import content_tokens

SWITCHES = "topic_switches"
NEW_WINDOW = 20  # messages after the switch's first turn whose targets are the new topic's own
LAG_SCHEMA = pl.Schema(
    {
        "conversation_id": pl.String(),
        "switch": pl.Int32(),
        "first": pl.Int32(),
        "last": pl.Int32(),
        "old_rounds": pl.List(pl.Int32),
        "old_targets": pl.List(pl.String),
    }
)  # a Lag as a row


@dataclass
class Lag:
    conversation_id: str
    switch: int
    first: int  # first message of the lag (s+1)
    last: int  # last message of the lag (the last old round's last tool result)
    old_rounds: list[int]
    old_targets: list[str]

    @property
    def messages(self) -> int:
        return self.last - self.first + 1


def _args(args: list[str], folders: bool = True) -> set[str]:
    """What calls name: their argument values (``values_text``), not the keys every call of a tool shares."""
    return union((values_text(a) for a in args), folders)


def _named(tokens: set[str]) -> set[str]:
    """Tokens that can be topic evidence (``names_something``): no number, abbreviation or bare id."""
    return {t for t in tokens if names_something(t)}


def available(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the switches are there: a warehouse table, or a view over another engine's rows."""
    n: int = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [SWITCHES]).fetchall()[
        0
    ][0]
    return n > 0


def lags(con: duckdb.DuckDBPyConnection) -> list[Lag]:
    """Every switch of the selected conversations with a lag of at least one round.

    One query streams the main paths of the conversations that have switches (tool output left out: no rule
    reads it), a conversation at a time; each message's targets are extracted once, so the work is linear in
    the conversation however many switches it has (a query and a rescan per switch took 35 s on a million
    messages)."""
    cur = con.execute(f"""
        WITH sw AS (SELECT s.conversation_id, list(DISTINCT s.position ORDER BY s.position) AS switches
                    FROM {SWITCHES} s JOIN sel_conversations USING (conversation_id) GROUP BY 1),
        calls AS (SELECT conversation_id, position, list(forensics_scrubbed(arguments) ORDER BY call_index) AS args
                  FROM tool_calls
                  WHERE arguments IS NOT NULL AND position IS NOT NULL
                    AND conversation_id IN (SELECT conversation_id FROM sw) GROUP BY 1, 2)
        SELECT m.conversation_id, sw.switches, m.position,
               CASE WHEN m.role = 'user' AND m.origin <> 'person' THEN m.origin ELSE m.role END,
               CASE WHEN m.role <> 'tool' AND m.origin <> 'tool_result' THEN forensics_scrubbed(m.content) END,
               coalesce(c.args, [])
        FROM messages m JOIN sw USING (conversation_id) LEFT JOIN calls c USING (conversation_id, position)
        WHERE m.on_main_path ORDER BY m.conversation_id, m.position""")
    out: list[Lag] = []
    cid, switches = None, []
    msgs: list[tuple[Any, ...]] = []
    while rows := cur.fetchmany(5_000):
        for c, sw, pos, role, content, args in rows:
            if c != cid:
                out += _conversation(cid, switches, msgs) if cid else []
                cid, switches, msgs = c, [int(x) for x in sw], []
            msgs.append((int(pos), role, content, args))
    out += _conversation(cid, switches, msgs) if cid else []
    return out


def _conversation(cid: str, positions: list[int], msgs: list[tuple[Any, ...]]) -> list[Lag]:
    conv = _Conversation(msgs)
    starts, ends = [0, *positions], [*positions[1:], msgs[-1][0] + 1 if msgs else 0]
    return [lag for prev, s, nxt in zip(starts, positions, ends) if (lag := _lag(cid, conv, prev, s, nxt))]


class _Conversation:
    """One main path and its messages' targets, each computed once (``p`` is a position, ``i`` an index)."""

    def __init__(self, msgs: list[tuple[Any, ...]]) -> None:
        self.msgs = msgs
        self.index = {m[0]: i for i, m in enumerate(msgs)}
        self.positions = [m[0] for m in msgs]
        self._vocab: dict[int, set[str]] = {}

    def vocab(self, i: int) -> set[str]:
        """What message i contributes to a segment's vocabulary: its text's targets (not tool output's) and
        its calls' arguments, folders included."""
        if i not in self._vocab:
            _, role, content, args = self.msgs[i]
            text = content if role in ("user", "assistant") else ""  # the harness's context is no topic's
            self._vocab[i] = _named(target_tokens(text or "") | _args(args))
        return self._vocab[i]

    def span(self, lo: int, hi: int) -> range:
        """Indices of the messages with lo <= position < hi."""
        return range(bisect_left(self.positions, lo), bisect_left(self.positions, hi))


def _lag(cid: str, conv: _Conversation, prev: int, s: int, nxt: int) -> Lag | None:
    msgs = conv.msgs
    si = conv.index.get(s)
    if si is None or msgs[si][1] != "user":  # a person's request: harness text and tool output have other roles
        return None
    old_vocab: set[str] = set().union(*(conv.vocab(i) for i in conv.span(prev, s)))
    new_text = msgs[si][2] or ""
    end_i = next((i for i in range(si + 1, len(msgs)) if msgs[i][1] == "user"), len(msgs))
    end_of_turn = msgs[end_i][0] if end_i < len(msgs) else msgs[-1][0] + 1
    # the new topic's own vocabulary: the new request, and what its segment uses once this turn is over
    new_vocab = _named(target_tokens(new_text)) | set(content_tokens(new_text))
    new_vocab |= set().union(*(conv.vocab(i) for i in conv.span(end_of_turn, min(nxt, end_of_turn + NEW_WINDOW))))
    # what the assistant's answer to the new request names is the new request's too: a follow-up on the same
    # feature (duplicated fields across two tabs of one editor) works on the old files by right
    answer = next((msgs[i][2] for i in range(end_i - 1, si, -1) if msgs[i][1] == "assistant" and msgs[i][2]), "")
    new_vocab |= _named(target_tokens(answer or ""))
    rounds: list[tuple[int, int, str, set[str]]] = []  # (index, position, verdict, old targets)
    for i in range(si + 1, end_i):
        p, role, content, args = msgs[i]
        if role != "assistant" or not args:
            continue
        mine = _named(_args(args, folders=False) | target_tokens(content or "", folders=False))
        old = (mine & old_vocab) - new_vocab
        verdict = "new" if mine & new_vocab else "old" if old else "neutral"
        rounds.append((i, p, verdict, old))
    if not rounds or rounds[0][2] != "old":
        return None
    first_new = next((k for k, r in enumerate(rounds) if r[2] == "new"), len(rounds))
    olds = [r for r in rounds[:first_new] if r[2] == "old"]
    last_i = olds[-1][0]
    # the last old round and the tool results that follow it, up to the next assistant message of the turn
    na = next((i for i in range(last_i + 1, end_i) if msgs[i][1] == "assistant"), end_i)
    last = max([msgs[last_i][0]] + [msgs[i][0] for i in range(last_i + 1, na) if msgs[i][1] == "tool"])
    return Lag(cid, s, s + 1, last, [r[1] for r in olds], sorted(set().union(*(r[3] for r in olds))))
