"""``bench.ranking_lobo.untested_edits`` (issue 41, a reading the run ranking was offered and did not take): a run whose last change to a file no later call ran anything
that succeeded. Shapes of real runs: terminal-bench's mini-swe-agent (one ``bash`` tool: a here-document writes the
script, ``python3 x.py`` runs it), Multi-SWE-bench's SWE-agent (``edit 20:24``, ``create Repro.java``, then ``javac``
failing for want of a JDK), and runs that edit nothing (MINT's ``execute``, tau2's API calls)."""

from __future__ import annotations

import json

import duckdb
import pytest

from bench.ranking_lobo import untested_edits


def _calls(*calls: tuple[str, str, bool]) -> duckdb.DuckDBPyConnection:
    """One run ``r`` of these calls (tool name, command, failed), one per message."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE tool_calls (conversation_id VARCHAR, position INTEGER, call_index INTEGER, name VARCHAR, "
        "arguments VARCHAR, is_error BOOLEAN, result_position INTEGER)"
    )
    for i, (name, command, err) in enumerate(calls):
        con.execute(
            "INSERT INTO tool_calls VALUES ('r', ?, 0, ?, ?, ?, ?)",
            [2 * i + 1, name, json.dumps({"command": command}), err, 2 * i + 2],
        )
    return con


HEREDOC = "cat <<'EOF' > solve.py\nprint(42)\nEOF"


@pytest.mark.parametrize(
    ("calls", "untested"),
    [
        ([("bash", HEREDOC, False), ("bash", "python3 solve.py", False)], False),
        ([("bash", HEREDOC, False), ("bash", "cat solve.py", False)], True),  # read back, never run
        ([("bash", HEREDOC, False), ("bash", "python3 solve.py", True)], True),  # ran, and failed
        ([("bash", "sed -i 's/a/b/' main.c", False), ("bash", "make && ./main", False)], False),
        ([("bash", "python3 solve.py", False), ("bash", HEREDOC, False)], True),  # run before the last change only
        ([("edit", "edit 20:24\n    return x;\nend_of_edit", False), ("javac", "javac Repro.java", True)], True),
        ([("create", "create Repro.java", False), ("python", "python Repro.py", False)], False),
        ([("str_replace_editor", "view /repo/a.py", False), ("submit", "submit", False)], False),  # no change made
        ([("execute", "print(sum([1, 2]))", False)], False),  # MINT: code run, no file changed
        ([("get_details_by_id", "L1001", False)], False),
    ],
)
def test_a_last_change_never_run_after(calls: list[tuple[str, str, bool]], untested: bool) -> None:
    assert untested_edits(_calls(*calls), {"r": None}) == ({"r"} if untested else set())


def test_calls_after_the_grade_was_revealed_are_not_read() -> None:
    con = _calls(("bash", HEREDOC, False), ("bash", "python3 solve.py", False))
    assert untested_edits(con, {"r": 3}) == {"r"}  # the run at position 3 is past the cut
