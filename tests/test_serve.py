"""`forensics serve`: every page answers from the warehouse read-only, masks secrets, refuses writes."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from forensics.serve.app import create_app
from forensics.serve.data import CONTEXT, PAGE, TRANSCRIPT_PAGE
from tests.conftest import FIXTURES, load_script, query, run_cli

SECRETS = load_script(FIXTURES / "make_fixtures.py").SECRETS


@pytest.fixture(scope="module")
def client(reported_wh: Path) -> TestClient:
    return TestClient(create_app(reported_wh), base_url="http://127.0.0.1")


def _cid(db: Path, native: str, source: str = "") -> str:
    return query(
        db,
        "SELECT conversation_id FROM conversations JOIN sources USING (source_id) WHERE native_id = ? AND path LIKE ?",
        [native, f"%{source}%"],
    )[0][0]


def test_overview_shows_the_reports_answer_first(client: TestClient, reported_wh: Path) -> None:
    doc = json.loads((reported_wh.parent / "r" / "metrics.json").read_text())
    text = client.get("/").text
    assert text.index("What to change") < text.index("Worst conversations") < text.index("Strongest findings")
    worst = [w["label"] for w in doc["worst_conversations"]]
    assert re.findall(r'<li><a href="/c/[0-9a-f]+">([^<]+)</a> —', text) == worst


def test_the_overviews_what_to_change_is_the_reports_own_blocks(client: TestClient, reported_wh: Path) -> None:
    """One document model (issue 40): the explorer renders *What to change* from the blocks report.html renders."""
    page = (reported_wh.parent / "r" / "report.html").read_text()
    inner = re.compile(r'<section id="?what-to-change"?><h2>What to change</h2>\n(.*?)\n</section>', re.S)
    ours, theirs = inner.search(client.get("/").text), inner.search(page)
    assert ours and theirs and "<code>forensics tune</code>" in theirs[1]
    assert ours[1] == theirs[1]


def test_conversations_carry_unique_labels_and_every_finding_of_the_report(
    client: TestClient, reported_wh: Path
) -> None:
    rows = client.get("/conversations?sort=label&dir=asc").text
    labels = re.findall(r'<td[^>]*><a href="/c/[0-9a-f]+" title="[^"]*">([^<]+)</a></td>', rows)
    assert len(labels) == len(set(labels)) == min(PAGE, query(reported_wh, "SELECT count(*) FROM conversations")[0][0])
    assert {"aeb4919b · anthropic.db", "aeb4919b · realistic.db", "d6614e0b"} <= set(labels)
    doc = json.loads((reported_wh.parent / "r" / "metrics.json").read_text())
    total = int(re.search(r"(\d+) findings from every analyzer", client.get("/findings").text).group(1))
    assert total == len(doc["findings"])


def test_conversations_filter_by_finding_kind_and_sort_by_a_metric(client: TestClient, reported_wh: Path) -> None:
    text = client.get("/conversations?kind=compaction_topic_loss").text
    assert re.findall(r'title="[^"]*">([^<]+)</a></td>', text) == ["d6614e0b"]
    by_size = client.get("/conversations?sort=messages&dir=desc").text
    first = re.search(r'title="[^"]*">([^<]+)</a></td>', by_size).group(1)
    biggest = query(
        reported_wh,
        "SELECT c.native_id FROM conversations c JOIN messages m USING (conversation_id) "
        "WHERE on_main_path AND role <> 'system' GROUP BY ALL ORDER BY count(*) DESC LIMIT 1",
    )
    assert first.split(" · ")[0] == biggest[0][0]


def _positions(text: str) -> list[int]:
    return [int(p) for p in re.findall(r'<div class="msg role-[^"]*" id="m\d+" data-position="(\d+)"', text)]


def test_a_transcript_marks_findings_topics_and_sentinel_verdicts(client: TestClient, reported_wh: Path) -> None:
    cid = _cid(reported_wh, "d6614e0b")
    first = client.get(f"/c/{cid}").text
    assert _positions(first) == list(range(TRANSCRIPT_PAGE))  # one window of the 211 main-path messages
    windows = [_positions(client.get(f"/c/{cid}?from={w}").text) for w in range(0, 211, TRANSCRIPT_PAGE)]
    assert sum(windows, []) == list(range(211))  # the windows together: every message once, by position
    assert re.findall(r'<a href="\?from=(\d+)#transcript">\1</a>', first) == ["100", "200"] * 2  # above and below
    items = re.findall(r'<li id="f(\d+)">(.*?)</li>', first, re.S)
    n, item = next((n, i) for n, i in items if "<code>topic_interleave</code>" in i)
    # the evidence is in another window: the link opens the window around it and marks the finding there
    assert re.search(r'class="goto" href="([^"]*)"', item).group(1) == f"?at=141&amp;f={n}#m141"
    text = client.get(f"/c/{cid}?at=141&f={n}").text
    assert _positions(text)[0] == 141 - CONTEXT and 141 in _positions(text)
    cited = re.search(r'id="m141" data-position="141" data-findings="([\d,]+)"', text).group(1).split(",")
    assert n in cited
    items = re.findall(r'<li id="f(\d+)">(.*?)</li>', text, re.S)
    assert re.search(r'class="goto" href="([^"]*)"', dict(items)[n]).group(1) == "#m141"  # now on this page
    assert 'class="segment switch">⇄ topic switch' in text
    assert "sentinel missing" not in text  # the DevFlow seed never asked for the sentinel: its replies are not judged
    assert "sentinel missing" in client.get(f"/c/{_cid(reported_wh, 'a9ce8167')}").text  # realistic.db asks
    assert 'result of <a href="#m175">[175] read_file</a>' in text  # the tool result beside its call


def test_named_queries_run_read_only(client: TestClient) -> None:
    text = client.get("/queries/baseline").text
    assert text.count("<tr>") == 1 + 22  # header and one row per conversation
    assert client.get("/queries/no_such_query").status_code == 404


def test_writes_are_refused(client: TestClient, reported_wh: Path) -> None:
    cid = _cid(reported_wh, "d6614e0b")
    for method, url in (
        ("POST", "/conversations"),
        ("PUT", f"/c/{cid}"),
        ("DELETE", "/findings"),
        ("PATCH", "/queries/baseline"),
    ):
        assert client.request(method, url).status_code == 405


def test_no_page_shows_a_planted_secret(client: TestClient, reported_wh: Path) -> None:
    pages = ["/", "/conversations", "/findings", "/queries/messages_by_position", "/queries/tool_results"]
    for (cid,) in query(
        reported_wh,
        "SELECT conversation_id FROM conversations JOIN sources USING (source_id) WHERE path LIKE '%secrets.db'",
    ):
        pages.append(f"/c/{cid}")
        pages += [
            f"/c/{cid}/m/{p}"
            for (p,) in query(
                reported_wh, "SELECT position FROM messages WHERE conversation_id = ? AND on_main_path", [cid]
            )
        ]
    text = "\n".join(client.get(p).text for p in pages).lower()
    assert "[redacted]" in text
    assert [n for n, s in [*SECRETS.items(), ("password part", "hunter2")] if s.lower() in text] == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_listens_on_loopback_and_says_where(reported_wh: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "forensics", "serve", "--db", str(reported_wh), "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert (
            proc.stderr.readline().strip() == f"forensics serve: http://127.0.0.1:{port}/ (read-only; Ctrl-C stops it)"
        )
        for _ in range(200):  # the line comes before uvicorn binds: poll for it, bounded
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/conversations", timeout=5) as r:
                    status, body = r.status, r.read().decode()
                break
            except urllib.error.URLError:
                time.sleep(0.05)
        assert status == 200 and "d6614e0b" in body
        code, _, err = run_cli("serve", "--db", str(reported_wh), "--port", str(port))
        assert code == 2 and err == f"forensics: port {port} on 127.0.0.1 is in use; pass --port\n"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_without_a_warehouse_is_a_usage_error(tmp_path: Path) -> None:
    code, out, err = run_cli("serve", "--db", str(tmp_path / "none.duckdb"))
    assert (code, out) == (2, "")
    assert err.startswith(f"forensics: {tmp_path / 'none.duckdb'}: no warehouse here")


def test_a_foreign_host_is_refused(client: TestClient) -> None:
    """DNS rebinding: a page of another site that resolves its name to 127.0.0.1 sends its own Host."""
    assert client.get("/", headers={"Host": "attacker.example"}).status_code == 400
    assert client.get("/", headers={"Host": "localhost:8765"}).status_code == 200


def test_every_response_carries_the_security_headers(client: TestClient) -> None:
    for path in ("/", "/conversations", "/static/app.js", "/nosuchpage"):
        h = client.get(path).headers
        assert (
            "frame-ancestors 'none'" in h["content-security-policy"]
            and "script-src 'self'" in h["content-security-policy"]
        )
        assert h["x-frame-options"] == "DENY" and h["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("query", ["page=9223372036854775807", "page=-1", "page=abc", "page=0", "page=1e3"])
def test_a_malformed_or_huge_page_is_a_400_not_a_500(client: TestClient, query: str) -> None:
    for path in ("/conversations", "/findings"):
        r = client.get(f"{path}?{query}")
        assert r.status_code == 400, (path, query, r.status_code)


def test_a_named_query_that_would_write_is_refused_on_its_page(
    client: TestClient, reported_wh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forensics.serve import app
    from forensics.warehouse.queries import NamedQuery

    before = query(reported_wh, "SELECT count(*) FROM messages")
    monkeypatch.setattr(app.analyzers, "named_query", lambda name: NamedQuery(name, "drops", "DELETE FROM messages"))
    r = client.get("/queries/evil")
    assert r.status_code == 200 and "refused: DELETE statements" in r.text
    assert query(reported_wh, "SELECT count(*) FROM messages") == before
