"""What a new user reaches for in the first minutes: `-V`, shell completion, query results as Markdown or JSON Lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forensics import ingest
from tests.conftest import FIXTURES, run_cli


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("first-hour")
    ingest([FIXTURES / "sessions"], db=d / "w.duckdb")
    return d / "w.duckdb"


def test_dash_v_is_the_version() -> None:
    short, long_ = run_cli("-V"), run_cli("--version")
    assert short[0] == 0 and short[1] == long_[1] and ", version 0." in short[1]


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nosort -F _forensics_completion forensics"),
        ("zsh", "#compdef forensics"),
        ("fish", "complete --no-files --command forensics"),
    ],
)
def test_completion_prints_the_shells_script(shell: str, marker: str) -> None:
    code, out, _ = run_cli("completion", shell)
    assert code == 0 and marker in out and "_FORENSICS_COMPLETE" in out


def test_the_completion_script_completes_commands_and_choices() -> None:
    """What the printed bash script asks the installed command: the commands, then an option's choices."""

    def complete(words: str, cword: int) -> list[str]:
        env = {**os.environ, "COMP_WORDS": words, "COMP_CWORD": str(cword), "_FORENSICS_COMPLETE": "bash_complete"}
        done = subprocess.run([sys.executable, "-m", "forensics"], capture_output=True, text=True, env=env)
        return done.stdout.split()

    assert "plain,query" in complete("forensics qu", 1)
    assert {"plain,markdown", "plain,jsonl"} <= set(complete("forensics query --format ", 3))


def test_an_unknown_shell_is_a_usage_error() -> None:
    code, _, err = run_cli("completion", "powershell")
    assert code == 2 and "powershell" in err


def test_query_as_markdown_is_a_table_whose_cells_render_as_text(db: Path) -> None:
    sql = (
        "SELECT 'a|b' AS pipe, '<img src=x onerror=alert(1)>' AS html, '*bold* `code` [x](http://e.x)' AS md, "
        "NULL AS nothing, [1, 2] AS list, 'two\nlines' AS nl"
    )
    code, out, err = run_cli("query", sql, "--db", str(db), "--format", "markdown")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:2] == ["| pipe | html | md | nothing | list | nl |", "| --- | --- | --- | --- | --- | --- |"]
    assert lines[2] == (
        r"| a\|b | &lt;img src=x onerror=alert(1)&gt; | \*bold\* \`code\` [x]\(http://e.x) |  "
        "| [1, 2] | two lines |"
    )
    assert len(lines) == 3


def test_query_as_jsonl_is_one_object_a_row(db: Path) -> None:
    code, out, err = run_cli(
        "query", "SELECT role, count(*) AS n FROM messages GROUP BY 1 ORDER BY 1", "--db", str(db), "--format", "jsonl"
    )
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    csv = run_cli(
        "query", "SELECT role, count(*) AS n FROM messages GROUP BY 1 ORDER BY 1", "--db", str(db), "--format", "csv"
    )[1].splitlines()[1:]
    assert [f"{r['role']},{r['n']}" for r in rows] == csv and len(rows) >= 2
