"""Whose turn it is (docs/definitions.md#whose-turn-it-is): the classifier in SQL and in Python agree, and a quoted notice stays the person's."""

from __future__ import annotations

import duckdb
import pytest

from forensics.warehouse.origin import origin_of, origin_sql

CASES = [
    ("user", "Fix the flaky login test, please.", "person"),
    ("user", "  <environment_context>\n  <cwd>/repo</cwd>\n</environment_context>", "harness"),
    ("user", "[TASK RESUMPTION] This task was interrupted 3 minutes ago.", "harness"),
    ("user", "[ERROR] You did not use a tool in your previous response!", "harness"),
    ("user", "Stop hook feedback:\n- lint failed", "harness"),
    ("user", "System: Please continue.", "harness"),
    ("user", "Please proceed to the next step using your best judgement.", "harness"),
    ("user", "[read_file for 'src/app.py'] Result:\nimport os", "tool_result"),
    ("user", "<returncode>0</returncode>\n<output>ok</output>", "tool_result"),
    ("user", "Why did it print <environment_context> at the top?", "person"),  # quoted later: the person's
    ("user", "I saw '[TASK RESUMPTION]' in the log, what is it?", "person"),
    ("system", "You are a helpful assistant.", "harness"),
    ("assistant", "System: Please continue.", "assistant"),
    ("tool", "[read_file] Result: x", "tool"),
]


@pytest.mark.parametrize(("role", "text", "origin"), CASES)
def test_python_and_sql_classify_alike(role: str, text: str, origin: str) -> None:
    assert origin_of(role, text) == origin
    con = duckdb.connect()
    assert con.execute(f"SELECT {origin_sql('t', 'r')} FROM (SELECT ? AS t, ? AS r)", [text, role]).fetchone() == (
        origin,
    )
