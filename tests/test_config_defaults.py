"""One source of truth for the config's defaults (issue 23): every default written into SQL as
``coalesce(getvariable('section_key'), DEFAULT)`` (the named queries, the analyzers' SQL) equals the schema's, and
a value the report would reject is rejected by `forensics config check` with its line."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from forensics.analyzers.schema import keys
from tests.conftest import ROOT, run_cli

_SQL_TYPE = {float: "DOUBLE", int: "BIGINT", list: "VARCHAR[]", str: "VARCHAR", bool: "BOOLEAN"}
_CALL = re.compile(r"coalesce\(getvariable\('([a-z_]+)'\),\s*")


def _written() -> list[tuple[str, str, str]]:
    """(file, variable, the default expression) for every coalesce(getvariable(...), ...) in SQL and Python."""
    out = []
    for path in [
        *sorted((ROOT / "queries").glob("*.sql")),
        *sorted((ROOT / "forensics").rglob("*.sql")),
        *sorted((ROOT / "forensics").rglob("*.py")),
    ]:
        text = path.read_text(encoding="utf-8")
        for m in _CALL.finditer(text):
            depth, i = 1, m.end()
            while depth:  # the default runs to the parenthesis that closes coalesce(
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            out.append((str(path.relative_to(ROOT)), m.group(1), text[m.end() : i - 1]))
    return out


def test_every_default_written_in_sql_is_the_schemas() -> None:
    by_variable = {k.path.replace(".", "_"): k for k in keys()}
    written = [(f, name, expr) for f, name, expr in _written() if name in by_variable]
    assert len(written) >= 8  # the named queries and drift's corpus SQL
    con = duckdb.connect()
    for f, name, expr in written:
        want = by_variable[name].default
        got = con.execute(f"SELECT ({expr})::{_SQL_TYPE[type(want)]}").fetchall()[0][0]
        assert got == pytest.approx(want) if isinstance(want, float) else got == want, (f, name, got, want)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[keyword]\ntokenizer = "foo"\n', "2: keyword.tokenizer: 'foo' is not one of bigram, jieba, jieba+bigram"),
        ('[topic]\nroles = ["usr"]\n', "2: topic.roles: 'usr' is not one of user, assistant, system, tool"),
        ("[memory]\n\nquestion_match = 1.5\n", "3: memory.question_match must be between 0 and 1 (share), got 1.5"),
        (
            "[tool_result]\nsummarize_bytes = -1\n",
            "2: tool_result.summarize_bytes must be at least 0 (UTF-8 bytes), got -1",
        ),
    ],
)
def test_config_check_rejects_what_the_report_would_with_the_line(tmp_path: Path, toml: str, message: str) -> None:
    cfg = tmp_path / "harness.toml"
    cfg.write_text(toml, encoding="utf-8")
    code, out, err = run_cli("config", "check", str(cfg))
    assert code == 2 and err.strip() == f"forensics: {cfg}:{message}", err
