"""What the assistant's replies show (docs/definitions.md#problems-a-reviewer-flags ``loop``): asking the person for input again and again instead of
doing the task. Three or more replies in a row that each ask the person to add, provide, share or paste something,
with no call of the agent and no person turn between (only the harness's turns: confirmations, files added), are
the same action repeated without progress (GUIDE §5 loop): rule ``asked_for_input_N_times``. SQL picks the replies
that ask and the turns that end a chain; Python chains them."""

from __future__ import annotations

import re

import duckdb

from forensics.analyzers.problems.model import Problem, quote_at
from forensics.kernel.selection import SELECTED
from forensics.warehouse.tool_errors import sql_str

# a request for input from the person, read in the reply's last TAIL characters (where a reply asks)
ASKS = (
    r"(?i)\b(?:please|could you|can you|you (?:should|need to|must))\s+(?:also\s+)?(?:add|provide|share|paste|"
    r"upload|send|attach)\b|\brecommend (?:that )?you (?:also )?add\b"
)
ASKS_RE = re.compile(ASKS)
TAIL = 1500
IN_A_ROW = 3


def asked_again(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    rows = con.execute(f"""
        SELECT m.conversation_id, m.position, m.role = 'assistant' AND m.tool_call_count = 0
                 AND regexp_matches(right(m.content, {TAIL}), '{sql_str(ASKS)}') AS asks,
               CASE WHEN m.role = 'assistant' AND m.tool_call_count = 0 THEN right(m.content, {TAIL}) END
        FROM messages m JOIN {SELECTED} USING (conversation_id)
        WHERE m.on_main_path AND (m.origin = 'person' OR (m.role = 'assistant' AND NOT m.blank AND (m.tool_call_count > 0
              OR regexp_matches(right(m.content, {TAIL}), '{sql_str(ASKS)}'))))
        ORDER BY 1, 2""").fetchall()
    out: list[Problem] = []
    chain: list[tuple[int, str]] = []
    last = None
    for cid, pos, asks, text in [*rows, (None, -1, False, None)]:
        if cid != last or not asks:
            if len(chain) >= IN_A_ROW and last is not None:
                first = chain[0][1]
                out.append(
                    Problem(
                        str(last),
                        "loop",
                        [p for p, _ in chain],
                        quote_at(first, ASKS_RE.search(first)),
                        f"asked_for_input_{len(chain)}_times",
                        f"{len(chain)} replies in a row ask the person for more input, with no call and no "
                        f"person turn between (GUIDE §5: 3 or more without progress)",
                    )
                )
            chain = []
        if asks:
            chain.append((int(pos), str(text)))
        last = cid
    return out
