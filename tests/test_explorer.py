"""`forensics serve`'s third-round pages: search, agent/model/outcome/tokens columns and filters, source names,
Markdown, folded tool results, tokens per turn, origin, and the run diff (docs/outcomes.md#where-outcomes-come-from, docs/outcomes.md#run-diff, docs/definitions.md#whose-turn-it-is)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from forensics.analyzers.diff import diff
from forensics.serve.app import FOLD_CHARS, create_app
from forensics.serve.data import source_names
from forensics.serve.message_markdown import render
from forensics.warehouse import open_warehouse
from forensics.warehouse.search import literal
from tests.conftest import FIXTURES, query, run_cli

HOSTILE = [  # a session whose text is Markdown and hostile HTML, and a secret split by Markdown emphasis
    {"type": "session", "id": "sess_hostile", "created_at": 1780374922, "model": "gpt-mini", "provider": "openai"},
    {
        "id": 1,
        "parent_id": None,
        "timestamp": 1780375348,
        "role": "user",
        "content": "Find 100% of the `snake_case` names <script>alert(1)</script> please",
    },
    {
        "id": 2,
        "parent_id": 1,
        "timestamp": 1780375349,
        "role": "assistant",
        "content": "**Done.** See [docs](https://example.org/x) and [bad](javascript:alert(2)) "
        "![pixel](https://tracker.example/p.png)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "<img src=x onerror=alert(3)> key: sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4" + " end",
    },
]


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs with outcomes (tau2, MINT, MedAgentBench), Claude Code sessions with token usage, and the hostile
    session: ingested once, no report (the pages work without one)."""
    d = tmp_path_factory.mktemp("explorer")
    (d / "sess").mkdir()
    (d / "sess" / "sess_hostile.jsonl").write_text("\n".join(json.dumps(x) for x in HOSTILE) + "\n")
    code, out, err = run_cli(
        "ingest",
        str(FIXTURES / "outcomes"),
        str(FIXTURES / "claude_code"),
        str(d / "sess"),
        "--db",
        str(d / "w.duckdb"),
        "--keep-secrets",
    )
    if code != 0:  # a branch without --keep-secrets
        code, out, err = run_cli(
            "ingest",
            str(FIXTURES / "outcomes"),
            str(FIXTURES / "claude_code"),
            str(d / "sess"),
            "--db",
            str(d / "w.duckdb"),
        )
    assert code == 0, out + err
    return d / "w.duckdb"


@pytest.fixture(scope="module")
def client(wh: Path) -> TestClient:
    return TestClient(create_app(wh), base_url="http://127.0.0.1")


def _rows(text: str) -> list[list[str]]:
    body = text.split('<table id="conversations">', 1)[1].split("</tbody>", 1)[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S) for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    return [r for r in rows if r]


def test_sources_are_named_by_their_shortest_distinguishing_path() -> None:
    paths = [
        "/a/x/conversations.json",
        "/a/y/conversations.json",
        "/b/y/conversations.json",
        "/c/webui.db",
        "/d/other.jsonl",
    ]
    assert source_names(paths) == {
        "/a/x/conversations.json": "x/conversations.json",
        "/a/y/conversations.json": "a/y/conversations.json",
        "/b/y/conversations.json": "b/y/conversations.json",
        "/c/webui.db": "webui.db",
        "/d/other.jsonl": "other.jsonl",
    }
    assert source_names(["/x/a.db", "/a.db"]) == {"/x/a.db": "x/a.db", "/a.db": "/a.db"}  # a suffix of the other


def test_conversations_show_agent_model_outcome_and_tokens(client: TestClient, wh: Path) -> None:
    rows = _rows(client.get("/conversations?sort=label&dir=asc").text)
    assert len(rows) == query(wh, "SELECT count(*) FROM conversations")[0][0]
    header = client.get("/conversations").text.split("<thead>")[1].split("</thead>")[0]
    assert [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th>(.*?)</th>", header)][:7] == [
        "conversation",
        "agent",
        "model",
        "outcome",
        "tokens in",
        "tokens out",
        "created",
    ]
    expected = {
        (f, m or "–", {True: "passed", False: "failed"}.get(s, "–"))
        for f, m, s in query(
            wh,
            "SELECT s.format, c.model, o.success FROM conversations c JOIN sources s USING (source_id) "
            "LEFT JOIN conversation_outcomes o USING (conversation_id)",
        )
    }
    assert {(r[1], r[2], r[3]) for r in rows} == expected
    # tokens: what message_usage holds, summed (in = sent, cache reads and writes included)
    cid, tin, tout = query(
        wh,
        "SELECT conversation_id, sum(input_tokens + coalesce(cache_read_input_tokens, 0) + "
        "coalesce(cache_creation_input_tokens, 0)), sum(output_tokens) FROM message_usage "
        "GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
    )[0]
    top = _rows(client.get("/conversations?sort=tokens_in&dir=desc").text)[0]
    assert (top[4], top[5]) == (f"{tin:,}", f"{tout:,}") and f'href="/c/{cid}"' in top[0]


@pytest.mark.parametrize(
    "params,sql",
    [
        ("agent=mint", "s.format = 'mint'"),
        ("outcome=failed", "NOT o.success"),
        ("outcome=passed&agent=agentbench", "o.success AND s.format = 'agentbench'"),
        ("outcome=unknown", "o.conversation_id IS NULL"),
        ("model=gpt-4o-mini", "c.model = 'gpt-4o-mini'"),
    ],
)
def test_conversations_filter_by_agent_model_and_outcome(client: TestClient, wh: Path, params: str, sql: str) -> None:
    want = query(
        wh,
        "SELECT count(*) FROM conversations c JOIN sources s USING (source_id) LEFT JOIN "
        f"conversation_outcomes o USING (conversation_id) WHERE {sql}",
    )[0][0]
    text = client.get(f"/conversations?{params}").text
    assert want > 0 and f"{want} conversations" in text and len(_rows(text)) == want


def test_the_source_filter_names_each_source_once(client: TestClient) -> None:
    text = client.get("/conversations").text
    names = re.findall(
        r'<option value="[0-9a-f]+"[^>]*>([^<]+)</option>', text.split('name="source"')[1].split("</select>")[0]
    )
    assert len(names) == len(set(names)) and "gpt-4o-mini/medagentbench-std/overall.json" in names


def test_search_shows_each_hit_in_context_and_links_to_it(client: TestClient, wh: Path) -> None:
    text = client.get("/search?q=birth+year").text
    hits = re.findall(r'<li><div class="hh"><a href="/c/([0-9a-f]+)\?at=(\d+)#m\2">', text)
    want = query(
        wh, "SELECT conversation_id, position FROM messages WHERE on_main_path AND content ILIKE '%birth year%'"
    )
    assert sorted((c, int(p)) for c, p in hits) == sorted(want) and want
    assert all(m.lower() == "birth year" for m in re.findall(r"<mark>(.*?)</mark>", text))
    cid, pos = hits[0]
    page = client.get(f"/c/{cid}?at={pos}").text  # the transcript around the hit, the hit marked
    assert re.search(rf'class="msg [^"]*\bhit\b[^"]*" id="m{pos}"', page)


def test_search_matches_text_literally_and_refuses_a_bad_pattern_on_the_page(client: TestClient) -> None:
    assert literal("100% a_b (x)") == r"100\% a\_b \(x\)"
    text = client.get("/search", params={"q": "100% of the `snake_case`"}).text
    assert text.count("<mark>") == 1 and "<mark>100% of the `snake_case`</mark>" in text
    assert "no message matches" in client.get("/search", params={"q": "1.0%"}).text  # "." is a dot, not any char
    r = client.get("/search", params={"q": "snake_(case", "mode": "regex"})
    assert r.status_code == 400 and "not a regular expression" in r.text
    assert client.get("/search", params={"q": "s"}).status_code == 400  # too short to mean anything
    regex = client.get("/search", params={"q": r"snake_\w+", "mode": "regex"}).text
    assert "<mark>snake_case</mark>" in regex


def test_search_escapes_hostile_text_and_masks_secrets(client: TestClient) -> None:
    text = client.get("/search", params={"q": "script"}).text
    assert "<script>alert" not in text and "&lt;<mark>script</mark>&gt;alert(1)&lt;/script&gt;" in text
    masked = client.get("/search", params={"q": "key:"}).text
    assert "A1b2C3d4E5f6" not in masked and "[REDACTED]" in masked


def test_markdown_is_rendered_without_raw_html_or_unsafe_links() -> None:
    out = str(render(HOSTILE[2]["content"]))
    assert "<strong>Done.</strong>" in out and "<table>" in out
    assert '<a href="https://example.org/x" rel="noopener noreferrer nofollow">docs</a>' in out
    assert "javascript:" not in out.split("[bad]")[0] and "[bad](javascript:alert(2))" in out  # text, not a link
    assert "<img" not in out and "&lt;img src=x onerror=alert(3)&gt;" in out
    assert "[image: pixel]" in out and "sk-proj-" not in out  # an image is a link to follow, never loaded


def test_a_transcript_renders_markdown_folds_long_results_and_shows_tokens_and_origin(
    client: TestClient, wh: Path
) -> None:
    hostile = query(wh, "SELECT conversation_id FROM conversations WHERE native_id = 'sess_hostile'")[0][0]
    page = client.get(f"/c/{hostile}").text
    assert '<div class="md"><p><strong>Done.</strong>' in page and "<script>alert" not in page
    assert "A1b2C3d4E5f6" not in page
    cid, pos, chars = query(
        wh,
        "SELECT conversation_id, position, content_chars FROM messages WHERE role = 'tool' "
        f"AND on_main_path AND content_chars > {FOLD_CHARS} ORDER BY 3 DESC LIMIT 1",
    )[0]
    page = client.get(f"/c/{cid}").text
    folded = re.search(
        rf'id="m{pos}".*?<details class="result"><summary><span class="size">tool result · '
        r"([\d.]+ KB)",
        page,
        re.S,
    )
    assert folded, "a long tool result arrives folded with its size"
    for p, tin, tout in query(
        wh,
        "SELECT position, input_tokens + coalesce(cache_read_input_tokens, 0) + "
        "coalesce(cache_creation_input_tokens, 0), output_tokens FROM message_usage WHERE "
        "conversation_id = ? AND position < 100",
        [cid],
    ):
        head = re.search(rf'id="m{p}".*?<div class="mh">(.*?)</div>', page, re.S).group(1)
        assert f">{tin:,} in" in head and f"· {tout:,} out</span>" in head
    origins = dict(
        query(
            wh,
            "SELECT position, origin FROM messages WHERE conversation_id = ? AND on_main_path "
            "AND origin NOT IN ('assistant', 'tool') AND position < 100",
            [cid],
        )
    )
    shown = {
        int(p): o for p, o in re.findall(r'id="m(\d+)"[^\n]*\n<div class="mh">[^\n]*?class="origin o-(\w+)"', page)
    }
    assert shown == origins and "harness" in origins.values()  # a person's turn told from the harness's


def test_the_run_diff_page_marks_the_first_divergence_of_spec_21(client: TestClient, wh: Path) -> None:
    a, b = (
        r[0]
        for r in query(
            wh,
            "SELECT conversation_id FROM conversations WHERE native_id = '96' AND title = "
            "'medagentbench-std/96' ORDER BY model",
        )
    )
    page = client.get(f"/c/{a}").text  # a run with a sibling of the same task links to the diff
    assert f'href="/diff?a={a}&amp;b={b}"' in page
    with open_warehouse(wh, read_only=True) as w:
        want = diff(w.con, a, b).to_dict()
    text = client.get(f"/diff?a={a}&b={b}").text
    rows = re.findall(r'<div class="dr op-(\w+)[^"]*"', text)
    assert rows == [x["op"] for x in want["aligned"]]
    fd = want["first_divergence"]
    assert f"first diverge at step {fd['index']}" in text
    summary = text.split('id="divergence-summary"')[1].split("</p>")[0]
    assert re.findall(r'class="fd" href="/c/[0-9a-f]+\?at=(\d+)#m\1"', summary) == [
        str(p) for p in (fd["a_position"], fd["b_position"]) if p is not None
    ]
    # the marked row is the first of the alignment that holds step `index` of A or of B
    first = text.split('id="first">')[1].split('<div class="dr ')[0]
    assert any(f"?at={p}#m{p}" in first for p in (fd["a_position"], fd["b_position"]) if p is not None)
    assert text.count('id="first"') == 1


def test_the_diff_page_lists_tasks_and_refuses_unknown_runs_in_a_page(client: TestClient) -> None:
    listing = client.get("/diff").text
    assert re.search(r"<td>agentbench</td><td>medagentbench-std/\d+</td>", listing)
    r = client.get("/diff?a=nosuchrun&b=another")
    assert r.status_code == 404 and "no conversation" in r.text


@pytest.mark.parametrize(
    "path",
    [
        "/c/x?at=-1",
        "/c/x?at=1e3",
        "/c/x?from=abc",
        "/search?q=ab&after=-1",
        "/conversations?outcome=x&page=99999999999",
        "/search?q=ab&after=99999999999999999999999",
    ],
)
def test_malformed_parameters_are_a_400_never_a_500(client: TestClient, path: str) -> None:
    assert client.get(path).status_code in (400, 404)


def test_without_a_report_a_finding_filter_or_sort_filters_nothing(client: TestClient, wh: Path) -> None:
    total = query(wh, "SELECT count(*) FROM conversations")[0][0]
    for path in ("/conversations?kind=no_focus", "/conversations?sort=findings", "/conversations?sort=messages"):
        r = client.get(path)
        assert r.status_code == 200 and f"{total} conversations" in r.text, path


def test_search_goes_on_from_where_a_page_stopped(
    client: TestClient, wh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page holds 50 hits, or what a bounded scan found; its link goes on from the next row, and the pages
    together hold every hit once, in import order."""
    from forensics.warehouse import search

    want = query(
        wh, "SELECT conversation_id, position FROM messages WHERE on_main_path AND content ILIKE '%the%' ORDER BY rowid"
    )
    monkeypatch.setattr(search, "PAGE", 7)
    monkeypatch.setattr(search, "CHUNK", 40)  # a scan of 40 rows per query, a budget of none: one chunk a page
    monkeypatch.setattr(search, "BUDGET", 0.0)
    got, url, pages = [], "/search?q=the", 0
    while url and pages < 200:
        text = client.get(url).text
        got += [(c, int(p)) for c, p in re.findall(r'<div class="hh"><a href="/c/([0-9a-f]+)\?at=(\d+)#', text)]
        nxt = re.search(r'id="next" href="\?([^"]+)"', text)
        url, pages = ("/search?" + nxt.group(1).replace("&amp;", "&")) if nxt else None, pages + 1
    assert got == [(c, p) for c, p in want] and len(want) > 7 and pages > 1
    assert "every message searched" in text


def test_search_goes_on_past_a_million_rows(client: TestClient) -> None:
    r = client.get("/search?q=the&after=2000000")  # a row past this warehouse's end: searched, nothing left
    assert r.status_code == 200 and "no message matches" in r.text
