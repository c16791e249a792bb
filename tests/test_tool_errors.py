"""Errors read right (docs/definitions.md#tool-errors): the format's flag, else one documented set of content rules; a search that
matched nothing is no error. The rules run in SQL at ingest; migration m010 reads an older warehouse alike."""

from __future__ import annotations

import json

import duckdb
import pytest

from forensics.warehouse import tool_errors

CASES = [
    ("Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'", "traceback"),
    ("/bin/bash: line 1: pytest: command not found", "shell_error"),
    ("/bin/bash: line 3: cd: /nope: No such file or directory", "shell_error"),
    ("sh: 1: make: not found", "shell_error"),
    ("bash: line 29: warning: here-document at line 1 delimited by end-of-file (wanted `PATCH')", None),
    ("zsh: command not found: pnpm", "shell_error"),
    ("'npx' is not recognized as an internal or external command,", "command_not_found"),
    ("cat: missing.txt: No such file or directory", "no_such_file"),
    ("Exit code: 2\nWall time: 0.1 seconds\nOutput:\nboom", "exit_code"),
    ("Exit code: 0\nOutput:\nfine", None),
    ("Exit code: 0\nWall time: 1 seconds\nOutput:\nProcess exited with code 9", None),  # the wrapper's status wins
    ("<returncode>127</returncode>\n<output>\n</output>", "exit_code"),
    ("[The command completed with exit code 1.]", "exit_code"),
    ("HTTP/1.1 404 Not Found\nContent-Type: text/html", "http_status"),
    ("requests.exceptions.HTTPError: 503 Server Error: Service Unavailable", "http_status"),
    ("HTTP/1.1 200 OK", None),
    ("      status: 500,\n      message: 'oops'", None),  # a file's body that names a status is no error
    ("all 12 tests passed", None),
]


def _rule(con: duckdb.DuckDBPyConnection, text: str) -> str | None:
    con.execute("CREATE OR REPLACE TABLE r AS SELECT ?::VARCHAR AS t", [text])
    return con.execute(f"SELECT {tool_errors.rule_sql('t')} FROM r").fetchone()[0]  # type: ignore[index]


@pytest.mark.parametrize(("text", "rule"), CASES)
def test_each_rule_names_itself(text: str, rule: str | None) -> None:
    assert _rule(duckdb.connect(), text) == rule


def test_error_beyond_the_read_window_of_a_long_file_is_not_read() -> None:
    """The rules read a result's head and tail: a file's body quoting an error in its middle stays no error."""
    body = "x\n" * 3000 + "Traceback (most recent call last):\n" + "y\n" * 3000
    assert _rule(duckdb.connect(), body) is None
    assert _rule(duckdb.connect(), "x\n" * 3000 + "Traceback (most recent call last):\nValueError") == "traceback"


def _source(flag: bool | None, text: str, name: str, args: dict[str, object]) -> str | None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE c AS SELECT ?::BOOLEAN AS flag, ?::VARCHAR AS t, ?::VARCHAR AS name, ?::VARCHAR AS a",
        [flag, text, name, json.dumps(args)],
    )
    rule, empty = tool_errors.result_sql("t", "'tool'")
    sql = tool_errors.error_source_sql("flag", "rule", "empty", "name", "a")
    return con.execute(f"SELECT {sql} FROM (SELECT *, {rule} AS rule, {empty} AS empty FROM c)").fetchone()[0]  # type: ignore[index]


def test_a_search_that_matched_nothing_is_no_error() -> None:
    assert (
        _source(
            True,
            "Exit code: 1\nWall time: 2.6 seconds\nOutput:\n",
            "shell_command",
            {"command": 'rg -n "crewai" uv.lock'},
        )
        is None
    )
    assert (
        _source(None, "<returncode>1</returncode>\n<output>\n</output>", "bash", {"command": "grep -n foo x.py"})
        is None
    )
    assert _source(True, "", "Grep", {"pattern": "foo"}) is None


def test_a_search_that_failed_stays_an_error() -> None:
    assert (
        _source(
            True,
            "rg: nope: No such file or directory (os error 2)",
            "shell",
            {"command": ["bash", "-lc", "rg foo nope"]},
        )
        == "format"
    )
    assert (
        _source(None, "Exit code: 2\nOutput:\ngrep: x: No such file", "shell", {"command": "grep foo x"}) == "exit_code"
    )


def test_the_format_flag_comes_first_and_says_so() -> None:
    assert _source(True, "Traceback (most recent call last):", "bash", {"command": "python x.py"}) == "format"
    assert (
        _source(False, "Traceback (most recent call last):\nValueError", "bash", {"command": "python x.py"})
        == "traceback"
    )
    assert _source(None, "ok", "bash", {"command": "ls"}) is None


def test_every_rule_is_documented() -> None:
    names = [n for n, _ in tool_errors.documented()]
    assert names == [
        "format",
        "traceback",
        "shell_error",
        "command_not_found",
        "no_such_file",
        "exit_code",
        "http_status",
    ]


def test_the_independent_counter_restates_the_same_rules() -> None:
    """tests/agent_counts.py re-states docs/definitions.md#tool-errors in plain Python; the two lists name the same rules in one order, and
    classify every case above alike."""
    from tests.agent_counts import ERROR_RULES, error_rule, is_error

    assert [n for n, _ in ERROR_RULES] == [n for n, _, _ in tool_errors.RULES]
    assert [error_rule(text) for text, _ in CASES] == [rule for _, rule in CASES]
    assert not is_error(True, "Exit code: 1\nWall time: 0.2 seconds\nOutput:\n", "shell", '{"command": "rg foo"}')
    assert is_error(True, "Exit code: 1\nOutput:\nrg: x: Access is denied.", "shell", '{"command": "rg foo"}')
    assert is_error(False, "cat: x: No such file or directory", "bash", "cat x")


def test_the_importers_reading_equals_the_rules_in_sql() -> None:
    """At import the gate is polars' (``MARKED``) and each text's head and tail are cut once (``load.RESULTS``): the
    same rule and emptiness as ``result_sql`` for every role, on the cases and on random mixes of the markers, the
    rules' words, whitespace, non-ASCII text and lengths around the read window and the emptiness bound."""
    import random

    import polars as pl

    from forensics.ingestion import load
    from forensics.kernel.arrow import relation_frame, stream

    rng = random.Random(46)
    pieces = [
        *tool_errors.MARKERS,
        *(t for t, _ in CASES),
        "Exit code: 1",
        "exit code 0",
        "<returncode>0</returncode>",
        "Wall time: 1s",
        "Output:",
        "\n",
        " ",
        "\t",
        "错误",
        "İ",
        "x" * 1990,
        "é" * 700,
        "sh:",
        "XIT",
        "returncode>",
    ]
    texts: list[str | None] = [None, "", *(t for t, _ in CASES)]
    for _ in range(3000):
        texts.append("".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))))
    roles = [rng.choice(["tool", "user", "assistant", "system"]) for _ in texts]
    msg = pl.DataFrame(
        {"conversation_id": ["c"] * len(texts), "seq": range(len(texts)), "role": roles, "content": texts},
        schema={"conversation_id": pl.String, "seq": pl.Int32, "role": pl.String, "content": pl.String},
    )
    con = duckdb.connect()
    _b_res = stream(msg.with_columns(marked=msg["content"].str.contains(tool_errors.MARKED)))  # noqa: F841
    got = relation_frame(con.sql(load.RESULTS)).sort("seq")
    rule, empty = tool_errors.result_sql("content", "role")
    _b_old = stream(msg)  # noqa: F841
    want = relation_frame(
        con.sql(
            f"SELECT conversation_id, seq, strlen(content) AS content_bytes, {rule} AS rule, {empty} AS empty FROM _b_old"
        )
    ).sort("seq")
    assert got.rows() == want.rows()
    assert want["rule"].n_unique() == len(tool_errors.RULES) + 1  # every rule named, and none
    assert want["empty"].sum() > 20
