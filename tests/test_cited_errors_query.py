"""``outcomes.cited_errors`` reads the errors each problem finding cites in one DuckDB query: per finding, its
positions and the results of the calls at them (a join of ``problem_findings`` with ``tool_calls``), one row a
finding. It had fetched every tool call of the selection into a Python dict first (the result positions by call
position), then the findings. Pinned on the real excerpts of fixtures/outcomes (AgentBench, MINT, tau2) before the
change; on the shared outcome sets (1,392 runs, 203 findings, 139 before the grade, 74 citing an error, 76 error
templates, 41 setting caps) the results were the same before and after, up to the order of a kind's findings
(now the table's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from forensics.analyzers import outcomes as oc
from forensics.analyzers.base import Context
from forensics.analyzers.schema import load_config
from forensics.kernel.selection import Selection
from tests.conftest import FIXTURES, run_cli


class _Counted:
    """A connection that counts the rows each query hands to Python."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.rows = con, []

    def execute(self, sql: str, params: Any = None) -> Any:
        con = self.con.execute(sql, params) if params is not None else self.con.execute(sql)
        outer = self

        class _Result:
            def fetchall(self) -> list[Any]:
                rows = con.fetchall()
                outer.rows.append((sql, len(rows)))
                return rows

            def __getattr__(self, name: str) -> Any:
                return getattr(con, name)

        return _Result()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("cited") / "w.duckdb"
    assert run_cli("ingest", str(FIXTURES / "outcomes"), "--db", str(db))[0] == 0
    out = db.parent / "report"
    assert run_cli("report", "--db", str(db), "--format", "json", "--out", str(out))[0] == 0
    return db


def test_the_errors_cited_on_real_runs(warehouse: Path) -> None:
    con = duckdb.connect(str(warehouse), read_only=True)
    ctx = Context.open(con, load_config(None), Selection())
    runs = oc._runs(ctx)
    cited = oc.cited_errors(ctx, runs)
    # per run and kind, one entry a finding before the grade (the problem rules may move: read them from the table)
    cutoff = dict(zip(runs["conversation_id"].to_list(), runs["cutoff"].to_list()))
    want: dict[tuple[str, str], int] = {}
    for cid, kind, pos in con.execute("SELECT conversation_id, kind, position FROM problem_findings").fetchall():
        if cid in cutoff and (cutoff[cid] is None or pos is None or pos < cutoff[cid]):
            want[(cid, kind)] = want.get((cid, kind), 0) + 1
    con.close()
    assert len(cited) == 10
    assert {(c, k): len(fs) for c, e in cited.items() for k, fs in e.cited.items()} == want
    assert sum(want.values()) == 3  # at the change (2026-12-07): a user_repeated run (2) and a gave-up one (1)
    assert sum(1 for e in cited.values() if e.templates) == 4
    assert len({t for e in cited.values() for t in e.templates}) == 3
    # none of those findings cites an error
    assert not any(f for e in cited.values() for fs in e.cited.values() for f in fs)
    assert oc.setting_weight(cited) == {}


def test_one_row_a_finding_reaches_python(warehouse: Path) -> None:
    """The tool calls stay in DuckDB: the query that reads the findings hands Python one row a finding."""
    con = duckdb.connect(str(warehouse), read_only=True)
    ctx = Context.open(con, load_config(None), Selection())
    runs = oc._runs(ctx)
    read = {c: [] for c in runs["conversation_id"].to_list()}
    counted = _Counted(con)
    ctx.con = counted  # type: ignore[assignment]
    oc.cited_errors(ctx, runs, read)
    calls = con.execute("SELECT count(*) FROM tool_calls WHERE result_position IS NOT NULL").fetchall()[0][0]
    con.close()
    assert calls > 3
    assert [n for sql, n in counted.rows if "tool_calls" in sql or "problem_findings" in sql] == [1, 3]
