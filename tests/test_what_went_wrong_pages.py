"""What went wrong where a reader looks (issue 41 item 7, docs/definitions.md#failure-analysis): the explorer's home page opens with the
last report's failure clusters and the failed runs at their decisive step, and `forensics show` opens a failed
run there. On the graded fixture runs (tau2, MINT, MedAgentBench), with the report really run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb
import pytest
from starlette.testclient import TestClient

from forensics.serve.app import create_app
from tests.conftest import FIXTURES, run_cli

ROAMING = "task [mobile_data_issue]user_abroad_roaming_disabled_on[PERSONA:Easy] trial 0"  # failed, handed off
PASSED = "task [mobile_data_issue]data_mode_off[PERSONA:None] trial 0"
SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
HOSTILE = f"<script>alert(1)</script> <img src=x onerror=alert(2)> \x1b[31mred\x1b[0m key {SECRET} mail bob.smith@acme-corp.io"


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("wrong")
    db = d / "w.duckdb"
    code, out, err = run_cli("ingest", str(FIXTURES / "outcomes"), "--db", str(db))
    assert code == 0, out + err
    code, out, err = run_cli(
        "report", "--db", str(db), "--out", str(d / "r"), "--format", "md", "--only", "usage,outcomes,failures"
    )
    assert code == 0, out + err
    return db


def _cid(db: Path, native_id: str) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return str(
            con.execute("SELECT conversation_id FROM conversations WHERE native_id = ?", [native_id]).fetchall()[0][0]
        )
    finally:
        con.close()


def _home(db: Path) -> str:
    r = TestClient(create_app(db), base_url="http://127.0.0.1").get("/")
    assert r.status_code == 200, r.text
    return r.text


def _section(page: str) -> str:
    return page.split('<section id="what-went-wrong">', 1)[1].split("</section>", 1)[0]


def test_home_opens_with_the_clusters_and_the_failed_runs_at_their_decisive_step(reported: Path) -> None:
    page = _home(reported)
    assert page.index('id="what-went-wrong"') < page.index('id="what-to-change"') < page.index('id="worst"')
    body = _section(page)
    rows = [re.findall(r"<td>(.*?)</td>", tr, re.S) for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    # the report's clusters: 5 failed, 5 passed runs graded; tasks repeat, so each cluster is compared within task
    # (Mantel–Haenszel, half a run added to a task with an empty cell); "handed off" is in no task with both outcomes,
    # so it is not compared ("–") rather than pooled over all runs
    assert [r for r in rows if r] == [
        ["answered, no error", "4", "2", "2", "3.00 (0.24–37.67)"],
        ["handed off: speed test failed: no connection.", "2", "2", "0", "–"],
        ["claimed success: invalid post request", "1", "1", "0", "3.00 (0.24–37.67)"],
    ]
    links = re.findall(r'<li><a href="/c/(\w+)\?at=(\d+)#m\d+">', body)
    assert len(links) == 5  # every failed run has a decisive step
    cid = _cid(reported, ROAMING)
    assert (cid, "20") in links
    item = next(li for li in re.findall(r"<li>(.*?)</li>", body, re.S) if f"/c/{cid}?" in li)
    assert (
        "step 20, after error · handed off: speed test failed: no connection.: <q>Let&#39;s start by "
        "checking the status of your mobile data" in item
    )
    # the link opens the transcript with that step in view and marked
    r = TestClient(create_app(reported), base_url="http://127.0.0.1").get(f"/c/{cid}?at=20")
    assert r.status_code == 200 and 'hit" id="m20"' in r.text


def test_home_says_the_reports_sentence_where_no_run_is_graded(reported: Path, tmp_path: Path) -> None:
    """Clusters of problem-bearing runs and no grade: the report says why it lists no failed run in one sentence
    (``Table.empty``); the home page says the same, escaped as the report's HTML is, its command as code."""
    from forensics.analyzers.failures import NO_GRADES

    db = tmp_path / "ungraded.duckdb"
    assert run_cli("ingest", str(FIXTURES / "claude_code"), "--db", str(db))[0] == 0
    out = tmp_path / "r"
    code, _, err = run_cli(
        "report", "--db", str(db), "--out", str(out), "--format", "md", "--only", "problems,usage,outcomes,failures"
    )
    assert code == 0, err
    assert (out / "report.md").read_text().count(NO_GRADES) == 2  # failed runs, what they did differently
    body = _section(_home(db))
    rows = [re.findall(r"<td>(.*?)</td>", tr, re.S) for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    assert [r for r in rows if r] == [
        ["answered, no error", "1", "0", "0", "–"],
        ["answered: error: ripgrep timed out after 30s", "1", "0", "0", "–"],
    ]
    assert body.rstrip().endswith(
        "</table></div><p>No graded runs: which runs failed, and what they did differently, needs their outcomes "
        "(<code>forensics outcomes FILE</code>, or a benchmark log that records its grade; see docs/outcomes.md).</p>"
    )
    assert "`" not in body and "<ol" not in body
    assert "No graded runs" not in _section(_home(reported))  # graded runs: their failed runs, no sentence


def test_home_says_so_in_one_line_when_the_tables_are_absent_or_empty(reported: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.duckdb"  # ingested, never reported
    assert run_cli("ingest", str(FIXTURES / "outcomes"), "--db", str(bare))[0] == 0
    body = _section(_home(bare))
    assert body.count("<p") == 1 and "No failure signatures yet" in body and "<table" not in body
    empty = tmp_path / "empty.duckdb"  # reported, but nothing failed: both tables written empty
    assert run_cli("ingest", str(FIXTURES / "claude_code"), "--db", str(empty))[0] == 0
    code, _, err = run_cli(
        "report",
        "--db",
        str(empty),
        "--out",
        str(tmp_path / "r"),
        "--format",
        "md",
        "--only",
        "usage,outcomes,failures",
    )
    assert code == 0, err
    con = duckdb.connect(str(empty), read_only=True)
    assert con.execute(
        "SELECT (SELECT count(*) FROM run_failures), (SELECT count(*) FROM failure_clusters)"
    ).fetchall() == [(0, 0)]
    con.close()
    assert "No failure signatures yet" in _section(_home(empty))
    # a warehouse an earlier release reported on: run_failures without the rule, no failure_clusters
    old = tmp_path / "old.duckdb"
    shutil.copy(reported, old)
    con = duckdb.connect(str(old))
    con.execute("DROP TABLE failure_clusters")
    con.execute("ALTER TABLE run_failures DROP COLUMN decisive_rule")
    con.close()
    body = _section(_home(old))
    assert "<table" not in body and body.count("<li>") == 5 and "step 20 · handed off" in body
    # tables of another shape (a later build's, a hand-made one): not read, and still no 500
    con = duckdb.connect(str(old))
    con.execute("CREATE TABLE failure_clusters (cluster VARCHAR, runs VARCHAR)")
    con.execute("INSERT INTO failure_clusters VALUES ('x', 'many')")
    con.execute("DROP TABLE run_failures")
    con.execute("CREATE TABLE run_failures (conversation_id VARCHAR)")
    con.close()
    assert "No failure signatures yet" in _section(_home(old))


def test_hostile_text_in_a_decisive_step_is_escaped_and_masked(reported: Path, tmp_path: Path) -> None:
    db = tmp_path / "hostile.duckdb"
    shutil.copy(reported, db)
    cid = _cid(db, ROAMING)
    con = duckdb.connect(str(db))
    con.execute("UPDATE messages SET content = ? WHERE conversation_id = ? AND position = 20", [HOSTILE, cid])
    con.close()
    body = _section(_home(db))
    item = next(li for li in re.findall(r"<li>(.*?)</li>", body, re.S) if f"/c/{cid}?" in li)
    assert "<script" not in body and "<img" not in body and "\x1b" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in item and "&lt;img src=x onerror=alert(2)&gt;" in item
    assert SECRET not in body and "key [REDACTED] mail [EMAIL]" in item  # secrets and personal data masked
    assert "\\x1b[31mred\\x1b[0m" in item  # a control character shown as its escape
    code, out, err = run_cli("show", cid, "--db", str(db))
    assert code == 0, err
    assert (
        "\x1b" not in out and SECRET not in out and "<script>alert(1)</script>" in out
    )  # a terminal needs no HTML escape
    assert out.splitlines()[4].startswith("[20] assistant (") and "\\x1b[31mred" in out.splitlines()[4]


def test_show_opens_a_failed_run_at_its_decisive_step(reported: Path) -> None:
    cid = _cid(reported, ROAMING)
    code, out, err = run_cli("show", cid, "--db", str(reported), "--width", "40")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == (
        "decisive step 20 (agent ?): after_error (it goes on without code right after a tool output "
        "that shows an error) · positions 18-28 shown; --positions 0-40 for the whole run"
    )
    assert [int(re.match(r"\[(\d+)\]", x).group(1)) for x in lines[2:] if re.match(r"\[\d+\]", x)] == list(
        range(18, 29)
    )
    assert lines[4].startswith("[20] assistant (507 B) ◀ decisive step: Let's start by checking the status")
    assert run_cli("show", cid, "--db", str(reported), "--width", "40", "--decisive")[1] == out
    # positions asked for: those, and no decisive line
    code, out, _ = run_cli("show", cid, "--db", str(reported), "--positions", "0-1")
    assert code == 0 and len(out.splitlines()) == 3 and "decisive" not in out


def test_show_decisive_is_an_error_when_the_run_has_none(reported: Path, tmp_path: Path) -> None:
    code, out, err = run_cli("show", _cid(reported, PASSED), "--db", str(reported), "--decisive")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "has no decisive step" in err
    code, _, err = run_cli("show", _cid(reported, ROAMING), "--db", str(reported), "--decisive", "--positions", "3")
    assert code == 2 and "leave out --positions" in err and "Traceback" not in err
    # the passed run opens at its start, as before
    code, out, _ = run_cli("show", _cid(reported, PASSED), "--db", str(reported))
    assert code == 0 and out.splitlines()[1].startswith("[0] ")
    bare = tmp_path / "bare.duckdb"  # no report: no run_failures table
    assert run_cli("ingest", str(FIXTURES / "outcomes"), "--db", str(bare))[0] == 0
    code, out, _ = run_cli("show", _cid(bare, ROAMING), "--db", str(bare))
    assert code == 0 and out.splitlines()[1].startswith("[0] ") and "decisive" not in out
    code, _, err = run_cli("show", _cid(bare, ROAMING), "--db", str(bare), "--decisive")
    assert code == 2 and "has no decisive step" in err
