"""Which turns of a run wait on a process the agent started (``signature``): a sub-agent or a worker it spawned, a
long command it runs in the background, polled again and again until it reports. Such a turn is the coordinator's
waiting, not its work: a measurement of its shape (the old topic's files named while a worker does the new task, a
wide or crowded turn) says nothing of how the run went (``report.build.done``)."""

from __future__ import annotations

import duckdb

# a call that only waits on a process it started (Codex's ``write_stdin`` sending nothing, Claude Code's
# ``BashOutput`` and ``TaskOutput``), over a row with the call's ``name`` and ``args``: polled again with the same
# output is waiting, not work done twice (a reviewer read such a finding as false: the agent polling a worker it
# spawned)
POLL = (
    "(name = 'write_stdin' AND coalesce(json_extract_string(TRY_CAST(args AS JSON), '$.chars'), 'x') = '') "
    "OR name IN ('BashOutput', 'TaskOutput')"
)
WAITING_SHARE = 0.5  # of a turn's calls, at least this share polls (``POLL``): the turn waits


def waiting(con: duckdb.DuckDBPyConnection, at: list[tuple[str, int]]) -> set[tuple[str, int]]:
    """Of ``at`` (conversation id, position), those whose turn waits on a process the run started: of the main-path
    calls of the turn that holds the position (from the person's message at or before it to the person's next one),
    ``WAITING_SHARE`` or more poll it (``POLL``). A Codex coordinator that spawned a worktree agent and then polled its
    session 36 times between 15 status checks, for 100 messages, waited (one of the shared real logs)."""
    if not at:
        return set()
    rows = con.execute(
        f"""
        WITH a AS (SELECT unnest($cids::VARCHAR[]) AS cid, unnest($pos::INTEGER[]) AS pos),
        person AS (SELECT m.conversation_id AS cid, m.position FROM messages m
                   WHERE m.on_main_path AND m.origin = 'person' AND m.conversation_id IN (SELECT cid FROM a)),
        turn AS (SELECT a.cid, a.pos,
                        coalesce((SELECT max(p.position) FROM person p WHERE p.cid = a.cid AND p.position <= a.pos), -1)
                          AS lo,
                        coalesce((SELECT min(p.position) FROM person p WHERE p.cid = a.cid AND p.position > a.pos),
                                 2147483647) AS hi
                 FROM a),
        calls AS (SELECT c.conversation_id AS cid, c.position, c.name, c.arguments AS args FROM tool_calls c
                  JOIN messages m ON m.conversation_id = c.conversation_id AND m.position = c.position AND m.on_main_path
                  WHERE c.conversation_id IN (SELECT cid FROM a))
        SELECT t.cid, t.pos FROM turn t JOIN calls c ON c.cid = t.cid AND c.position > t.lo AND c.position < t.hi
        GROUP BY t.cid, t.pos
        HAVING count(*) FILTER (WHERE {POLL}) >= {WAITING_SHARE} * count(*)
        """,
        {"cids": [c for c, _ in at], "pos": [p for _, p in at]},
    ).fetchall()
    return {(str(cid), int(pos)) for cid, pos in rows}
