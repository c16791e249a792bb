"""Drift type 4, multi-topic interleave: after a topic switch, how long the assistant keeps working the old topic.

It needs the switches, from the topic analyzer's ``topic_switches`` table (conversation_id, position, ...);
without that table the type is "not computed": guessing switches here would duplicate the topic analyzer
badly. For each switch at position s (a user message):

- the old segment is everything from the previous switch (or the start) to s-1; its vocabulary is the
  specific targets (``targets.target_tokens``) of its tool-call arguments and of its user and assistant text;
- the new topic's vocabulary is the user message at s (targets and content tokens) plus the targets of its
  segment after this turn (a file the new topic keeps using is no evidence of the old one: topics share
  files, e.g. src/ai/agentic.rs);
- each assistant message of the turn that follows s (until the next user message) is *old* when its own
  targets (tool-call arguments and text, folders left out) meet the old vocabulary and not the new one,
  *new* when they meet the new one, else neutral (a file neither side named).

The lag starts only when the first tool round after s is old; it runs to the last old round before the
first new one (neutral rounds in between count: 'ai_tools' in the seed's example is no file of either
side) and includes that round's tool results. Lag = messages from s+1 to that end, evidence = the old rounds.
"""
from __future__ import annotations

from dataclasses import dataclass

import duckdb

from forensics.drift.targets import target_tokens, union
from forensics.text.keywords import content_tokens

SWITCHES = "topic_switches"


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


def available(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [SWITCHES]).fetchall()[0][0] > 0


def lags(con: duckdb.DuckDBPyConnection) -> list[Lag]:
    """Every switch of the selected conversations with a lag of at least one round."""
    switches = con.execute(f"SELECT DISTINCT s.conversation_id, s.position FROM {SWITCHES} s JOIN sel_conversations "
                           "USING (conversation_id) ORDER BY 1, 2").fetchall()
    by_conv: dict[str, list[int]] = {}
    for cid, pos in switches:
        by_conv.setdefault(cid, []).append(int(pos))
    out: list[Lag] = []
    for cid, positions in by_conv.items():
        msgs = con.execute(
            "SELECT m.position, m.role, m.content, coalesce(list(t.arguments ORDER BY t.call_index) "
            "FILTER (WHERE t.arguments IS NOT NULL), []) FROM messages m LEFT JOIN tool_calls t "
            "ON t.conversation_id = m.conversation_id AND t.position = m.position "
            "WHERE m.conversation_id = ? AND m.on_main_path GROUP BY ALL ORDER BY m.position", [cid]).fetchall()
        starts, ends = [0, *positions], [*positions[1:], msgs[-1][0] + 1 if msgs else 0]
        for prev, s, nxt in zip(starts, positions, ends):
            lag = _lag(cid, msgs, prev, s, nxt)
            if lag:
                out.append(lag)
    return out


def _lag(cid: str, msgs: list[tuple], prev: int, s: int, nxt: int) -> Lag | None:
    at = {m[0]: m for m in msgs}
    if s not in at or at[s][1] != "user":
        return None
    old_vocab = union(c or "" for p, role, c, _ in msgs if prev <= p < s and role != "tool")
    old_vocab |= union(a for p, _, _, args in msgs if prev <= p < s for a in args)
    new_text = at[s][2] or ""
    end_of_turn = next((p for p, role, _, _ in msgs if p > s and role == "user"), msgs[-1][0] + 1)
    # the new topic's own vocabulary: the new request, and what its segment uses once this turn is over
    new_vocab = target_tokens(new_text) | set(content_tokens(new_text))
    new_vocab |= union(c or "" for p, role, c, _ in msgs if end_of_turn <= p < nxt and role != "tool")
    new_vocab |= union(a for p, _, _, args in msgs if end_of_turn <= p < nxt for a in args)
    rounds: list[tuple[int, str, set[str]]] = []  # (position, verdict, old targets)
    for p, role, content, args in msgs:
        if not s < p < end_of_turn or role != "assistant" or not args:
            continue
        mine = union(args, folders=False) | target_tokens(content or "", folders=False)
        old = (mine & old_vocab) - new_vocab
        verdict = "new" if mine & new_vocab else "old" if old else "neutral"
        rounds.append((p, verdict, old))
    if not rounds or rounds[0][1] != "old":
        return None
    first_new = next((i for i, r in enumerate(rounds) if r[1] == "new"), len(rounds))
    olds = [r for r in rounds[:first_new] if r[1] == "old"]
    last_round = olds[-1][0]
    last = max(p for p, role, _, _ in msgs if last_round <= p < end_of_turn
               and (p == last_round or (role == "tool" and p < _next_assistant(msgs, last_round, end_of_turn))))
    return Lag(cid, s, s + 1, last, [r[0] for r in olds], sorted(set().union(*(r[2] for r in olds))))


def _next_assistant(msgs: list[tuple], after: int, end: int) -> int:
    return next((p for p, role, _, _ in msgs if after < p < end and role == "assistant"), end)
