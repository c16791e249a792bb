"""How the signature reads a run (``signature``): its main-path messages from the warehouse, each as a ``Msg``, cut
before the first text that reveals the run's grade, with the harness's logged stop status on the last one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import duckdb

# What environments tell an agent about its grade, on the user or tool role (RE2, case-insensitive)
GRADE_REVEALING = "|".join(
    [
        r"your answer is wrong",  # MINT (mint/datatypes.py StepOutput.to_str)
        r"your submission was incorrect",  # Inspect AI basic_agent's default incorrect_message
        r"your (?:answer|solution|submission) (?:is|was) (?:not correct|incorrect)",  # the same, reworded
    ]
)
MESSAGES_PER_QUERY = 10_000  # stream() reads runs a batch at a time, about this many messages (a run never split)
TEXT_CHARS = 6000  # of each end of a long message (an error line is near the end of a traceback)


@dataclass(frozen=True)
class Msg:
    """One main-path message as the signature reads it."""

    position: int
    role: str  # user, assistant, tool, system
    origin: str | None  # person, harness, tool_result, assistant, tool
    name: str | None  # the speaker (messages.name)
    text: str
    calls: int = 0  # tool calls it makes
    unanswered: int = 0  # of them, without a result
    error: bool = False  # a tool result the warehouse flags as an error
    call_names: tuple[str, ...] = ()
    stop: str | None = None  # on a run's last message: how the harness logged that the run stopped (a ``stop`` event)


def is_output(m: Msg) -> bool:
    """A tool's output: the tool role, or a tool result carried on the user role."""
    return m.role == "tool" or m.origin == "tool_result"


def messages(con: duckdb.DuckDBPyConnection, cids: list[str], revealing: str) -> dict[str, list[Msg]]:
    """The main-path messages of the runs, each cut before its first message matching ``revealing`` (the
    grade-revealing text, ``GRADE_REVEALING``), in conversation id order."""
    return dict(sorted(stream(con, cids, revealing), key=lambda run: run[0]))


def stream(
    con: duckdb.DuckDBPyConnection, cids: list[str], revealing: str, messages: int = MESSAGES_PER_QUERY
) -> Iterator[tuple[str, list[Msg]]]:
    """:func:`messages` one run at a time (runs without a message left out), read in batches of runs of about
    ``messages`` messages per query: Python and DuckDB hold a batch's messages, not every run's text (a
    million-message corpus's failures held them all, and the one query ordering them all ran out of the report's
    DuckDB memory; batches of 250 runs were the first report's peak at a tenth of it). The batches follow the
    warehouse's row order (a run's rows are stored together) and each query reads only its batch's range of rows:
    a query per batch over the whole table would read it once per batch. Runs come in id order inside a batch,
    not across batches."""
    # the harness's logged stop status of each run (few runs have one: read once, not per batch)
    stops: dict[str, str] = dict(
        con.execute(
            'SELECT conversation_id, arg_max("trigger", coalesce(seq, 2147483647)) FROM events '
            "WHERE kind = 'stop' AND \"trigger\" IS NOT NULL AND conversation_id IN (SELECT unnest(?::VARCHAR[])) "
            "GROUP BY 1",
            [sorted(set(cids))],
        ).fetchall()
    )
    for batch, lo, hi in _batches(con, sorted(set(cids)), messages):
        rows = con.execute(
            "WITH sel AS (SELECT unnest($batch::VARCHAR[]) AS conversation_id), "
            "cut AS (SELECT m.conversation_id, min(m.position) AS cutoff FROM messages m JOIN sel USING (conversation_id) "
            "WHERE m.rowid BETWEEN $lo AND $hi AND m.on_main_path AND m.role IN ('user', 'tool') "
            "AND regexp_matches(m.content, $revealing, 'i') GROUP BY 1), "
            "calls AS (SELECT t.conversation_id, t.position, count(*) AS calls, count(*) FILTER (WHERE t.result_position "
            "IS NULL) AS unanswered, list(coalesce(t.name, '') ORDER BY t.call_index) AS names FROM tool_calls t "
            "JOIN sel USING (conversation_id) WHERE t.position IS NOT NULL GROUP BY ALL), "
            "errs AS (SELECT DISTINCT t.conversation_id, t.result_position AS position FROM tool_calls t "
            "JOIN sel USING (conversation_id) WHERE t.is_error AND t.result_position IS NOT NULL) "
            "SELECT m.conversation_id, m.position, m.role, m.origin, m.name, CASE WHEN length(m.content) > 2 * $chars "
            "THEN left(m.content, $chars) || chr(10) || right(m.content, $chars) ELSE m.content END, coalesce(c.calls, 0), "
            "coalesce(c.unanswered, 0), e.position IS NOT NULL, coalesce(c.names, []) "
            "FROM messages m JOIN sel USING (conversation_id) LEFT JOIN cut USING (conversation_id) "
            "LEFT JOIN calls c ON c.conversation_id = m.conversation_id AND c.position = m.position "
            "LEFT JOIN errs e ON e.conversation_id = m.conversation_id AND e.position = m.position "
            "WHERE m.rowid BETWEEN $lo AND $hi AND m.on_main_path AND m.role != 'system' "
            "AND (cut.cutoff IS NULL OR m.position < cut.cutoff) "
            "ORDER BY m.conversation_id, m.position",
            {"batch": batch, "lo": lo, "hi": hi, "revealing": revealing, "chars": TEXT_CHARS},
        ).fetchall()
        run: list[Msg] = []
        at: str | None = None
        for cid, pos, role, origin, name, text, calls, unanswered, err, names in rows:
            if cid != at:
                if run:
                    yield str(at), _with_stop(run, stops.get(str(at)))
                at, run = cid, []
            run.append(
                Msg(int(pos), role, origin, name, text or "", int(calls), int(unanswered), bool(err), tuple(names))
            )
        if run:
            yield str(at), _with_stop(run, stops.get(str(at)))


def _with_stop(run: list[Msg], stop: str | None) -> list[Msg]:
    """The run with the harness's logged stop status on its last message."""
    return run if stop is None else run[:-1] + [replace(run[-1], stop=stop)]


def _batches(con: duckdb.DuckDBPyConnection, ordered: list[str], messages: int) -> Iterator[tuple[list[str], int, int]]:
    """The runs of ``ordered`` cut into batches of about ``messages`` main-path messages together (a run is never
    split: a longer one is a batch of its own), in the order their rows are stored, each with the range of row ids
    its runs' rows lie in."""
    runs = con.execute(
        "SELECT conversation_id, count(*) FILTER (WHERE on_main_path AND role != 'system'), min(rowid), max(rowid) "
        "FROM messages WHERE conversation_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY 1 ORDER BY 3, 1",
        [ordered],
    ).fetchall()
    batch: list[str] = []
    count, lo, hi = 0, 0, 0
    for cid, n, first, last in runs:
        if batch and count + n > messages:
            yield batch, lo, hi
            batch, count = [], 0
        if not batch:
            lo, hi = first, last
        batch.append(cid)
        count += n
        lo, hi = min(lo, first), max(hi, last)
    if batch:
        yield batch, lo, hi
