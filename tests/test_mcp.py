"""`forensics mcp` (issue 47): the MCP SDK's own client starts `forensics mcp` as a real subprocess over stdio, lists
the tools and calls each; every answer is masked (the warehouse keeps the planted secrets as they were read,
`--keep-secrets`, so the masks of the output are what is tested), a writing query is refused, bad input is one
line without a traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from forensics.api import report
from tests.conftest import FIXTURES, ROOT, query, run_cli
from tests.test_secrets import _claude_code, leaks

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

TOOLS = {"search_messages", "list_runs", "show_run", "what_went_wrong", "run_findings", "usage", "query"}
SID = "5f0c7a52-0c55-4c8e-9b1a-3d2f1e0a9b77"  # the planted Claude Code session


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("mcp")
    db = d / "w.duckdb"
    code, _, err = run_cli(
        "ingest", str(_claude_code(d)), str(FIXTURES / "outcomes" / "tau2"), "--db", str(db), "--keep-secrets"
    )
    assert code == 0, err
    report(db, d / "r", ["json"])
    return db


def _calls(db: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[set[str], list[tuple[bool, str]]]:
    """(the tools listed, (is_error, text) of each call), through a real `forensics mcp` subprocess."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "forensics", "mcp", "--db", str(db)],
        env={"PYTHONPATH": str(ROOT), "CI": "true"},
        cwd=str(db.parent),
    )
    answers: list[tuple[bool, str]] = []
    names: set[str] = set()

    async def session() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            listed = await client.list_tools()
            names.update(t.name for t in listed.tools)
            assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)
            for name, args in calls:
                r = await client.call_tool(name, args)
                answers.append((bool(r.is_error), "".join(getattr(c, "text", "") for c in r.content)))

    anyio.run(session)
    return names, answers


def test_the_client_lists_the_tools_and_each_answers_masked(wh: Path) -> None:
    failed = query(
        wh,
        "SELECT c.native_id FROM conversation_outcomes o JOIN conversations c USING (conversation_id) "
        "WHERE NOT o.success ORDER BY 1",
    )
    assert query(wh, "SELECT count(*) FROM messages WHERE content LIKE '%keep it safe%'")[0][0] >= 1
    kept = query(wh, "SELECT string_agg(content, ' ') FROM messages")[0][0]
    assert leaks(kept), "the warehouse keeps the secrets (--keep-secrets): the output's masks are under test"
    names, answers = _calls(
        wh,
        [
            ("search_messages", {"text": "keep it safe"}),
            ("list_runs", {"agent": "claude-code", "project": "dev/APP", "branch": "mai"}),
            ("list_runs", {"outcome": "failed", "limit": 500}),
            ("show_run", {"run": SID, "position": 24, "before": 3, "after": 3}),
            ("what_went_wrong", {}),
            ("run_findings", {"run": failed[0][0]}),
            ("usage", {"by": "agent"}),
            (
                "query",
                {
                    "sql": "SELECT c.native_id, content FROM messages m JOIN conversations c USING (conversation_id) "
                    "WHERE c.native_id = '" + SID + "' ORDER BY seq"
                },
            ),
        ],
    )
    assert names == TOOLS
    assert [t for e, t in answers if e] == []
    for _, text in answers:
        assert leaks(text) == [], text[:400]
    search, cc, failed_runs, shown, clusters, found, usage, rows = [t for _, t in answers]
    hits = orjson.loads(search)["hits"]
    assert {h["native_id"] for h in hits} == {SID} and "[keep it safe]" in hits[0]["text"]
    assert "sk-proj-" not in hits[0]["text"] or "***" in hits[0]["text"] or "REDACTED" in hits[0]["text"].upper()
    assert [r["native_id"] for r in orjson.loads(cc)["rows"]] == [SID]
    assert (orjson.loads(cc)["rows"][0]["project"], orjson.loads(cc)["rows"][0]["branch"]) == ("/home/dev/app", "main")
    assert sorted(r["native_id"] for r in orjson.loads(failed_runs)["rows"]) == [f[0] for f in failed]
    assert "[24]" in shown and "[21]" in shown and "[27]" in shown and "[20]" not in shown and "[28]" not in shown
    assert orjson.loads(clusters)["clusters"], clusters[:300]
    assert orjson.loads(found)["decisive_step"]["position"] >= 0
    assert {r["agent"] for r in orjson.loads(usage)["rows"]} == {"claude-code", "tau2"}
    assert (
        len(orjson.loads(rows)["rows"])
        == query(
            wh,
            "SELECT count(*) FROM messages m JOIN conversations c USING (conversation_id) WHERE c.native_id = ?",
            [SID],
        )[0][0]
    )


def test_writing_and_bad_requests_are_refused_in_one_line(wh: Path) -> None:
    before = query(wh, "SELECT count(*) FROM messages")[0][0]
    outside = wh.parent / "out.csv"
    _, answers = _calls(
        wh,
        [
            ("query", {"sql": "DELETE FROM messages"}),
            ("query", {"sql": f"COPY messages TO '{outside}'"}),
            ("query", {"sql": "SELECT * FROM read_csv('/etc/passwd')"}),
            ("query", {"sql": "SELECT 1; DROP TABLE messages"}),
            ("query", {"sql": "SELEC nothing"}),
            ("show_run", {"run": "no-such-run"}),
            ("list_runs", {"outcome": "maybe"}),
            ("search_messages", {"text": "(", "regex": True}),
            ("usage", {"by": "planet"}),
        ],
    )
    assert [e for e, _ in answers] == [True] * len(answers), answers
    for _, text in answers:
        assert "Traceback" not in text and "\n" not in text.strip(), text
    assert "refused" in answers[0][1] and "DELETE" in answers[0][1]
    assert not outside.exists()
    assert query(wh, "SELECT count(*) FROM messages")[0][0] == before
    assert "no conversation 'no-such-run'" in answers[5][1]
    assert "passed, failed or unknown" in answers[6][1]


def test_without_a_warehouse_each_tool_says_so(tmp_path: Path) -> None:
    _, answers = _calls(tmp_path / "none.duckdb", [("list_runs", {}), ("query", {"sql": "SELECT 1"})])
    assert all(e and "no warehouse here" in t for e, t in answers), answers
    assert not (tmp_path / "none.duckdb").exists()


def test_the_extra_is_declared_in_pyproject() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'mcp = ["mcp>=' in text
    assert os.path.exists(ROOT / "docs" / "mcp.md")
