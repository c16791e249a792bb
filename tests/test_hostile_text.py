"""Text from the logs is escaped for the medium it lands in (issue 27): report.md renders no HTML from a message,
a model name or a title; `forensics show` and `query` print control and bidi characters as escapes; a table cell
is never rich markup; a model name of the form ``$\\undefinedmacro$`` draws as text."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from forensics.text.escape import inert_html, markdown, markdown_code, terminal
from tests.conftest import run_cli

SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
ESC = "\x1b[31mred\x1b[0m\x07"
BIDI = "user\u202egnp.exe"
MATH = r"$\undefinedmacro$"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite log whose title, model and messages carry the payloads (two conversations, so models compare)."""
    d = tmp_path_factory.mktemp("hostile")
    src = d / "hostile.db"
    con = sqlite3.connect(src)
    con.execute(
        "CREATE TABLE ai_conversations (id TEXT PRIMARY KEY, title TEXT, model TEXT, provider TEXT, "
        "created_at TEXT, updated_at TEXT, messages TEXT)"
    )
    for i, model in enumerate((MATH, f"gpt{SCRIPT}")):
        msgs = [
            {"role": "user", "content": f"Fix {IMG} and [/INST] now {ESC} {BIDI}"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/{SCRIPT}.py"})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": f"Error: {SCRIPT} not found"},
            {"role": "user", "content": f"again {SCRIPT} " * 3},
            {"role": "assistant", "content": f"Done `{SCRIPT}` **{IMG}**"},
        ]
        con.execute(
            "INSERT INTO ai_conversations VALUES (?,?,?,?,?,?,?)",
            [f"h{i}`x", f"{SCRIPT} title {ESC}", model, "openai", "2025-01-01", "2025-01-02", json.dumps(msgs)],
        )
    con.commit()
    con.close()
    code, _, err = run_cli("ingest", str(src), "--db", str(d / "w.duckdb"))
    assert code == 0, err
    return d / "w.duckdb"


def test_report_md_renders_no_html_and_the_report_survives_mathtext(hostile: Path, tmp_path: Path) -> None:
    code, _, err = run_cli("report", "--db", str(hostile), "--out", str(tmp_path / "r"))
    assert code == 0, err
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    fenced = False
    for line in md.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            assert "<" not in line and ">" not in line, line
    assert "\x1b" not in md and "\u202e" not in md
    svg = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "r" / "charts").glob("*.svg"))
    assert "<script" not in svg


def test_show_and_query_print_controls_as_escapes_and_cells_as_text(hostile: Path) -> None:
    code, out, err = run_cli("show", "h0`x", "--db", str(hostile))
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b[31mred" in out and "\\u202e" in out
    code, out, err = run_cli(
        "query", "SELECT content FROM messages WHERE content LIKE '%INST%'", "--db", str(hostile), "--format", "table"
    )
    assert code == 0, err
    assert "[/INST]" in out and "\x1b" not in out and "\u202e" not in out


def test_the_escapes_themselves() -> None:
    assert terminal("a\x1bb\u202ec\td\ne") == "a\\x1bb\\u202ec\td\ne"
    assert markdown("a_b *c* [x](y) `z` | [20]") == r"a_b \*c\* [x]\(y) \`z\` \| [20]"
    assert markdown_code("ls `pwd`") == "`` ls `pwd` ``" and markdown_code("plain") == "`plain`"
    assert inert_html("a <b> & c\n```\n<kept>\n```\n<i>") == "a &lt;b&gt; &amp; c\n```\n<kept>\n```\n&lt;i&gt;"
