"""report.html and `forensics serve` in a real browser: Debian's chromium driven by Playwright.

Skipped only on a developer machine without chromium; in CI (CI=true, set by .ci/run, which installs it) a
missing browser fails. No request may leave the machine: every URL a page asks for is recorded and checked.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import query

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
IN_CI = bool(os.environ.get("CI"))  # read at import: the autouse fixture sets CI=true for every test
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if CHROMIUM is None:
        if IN_CI:
            pytest.fail("chromium is not installed; .ci/run installs Debian's chromium for these tests")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def explorer(reported_wh: Path) -> Iterator[str]:
    """The explorer on a free loopback port, in this process."""
    import uvicorn

    from forensics.serve.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(reported_wh), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(400):  # bounded wait for the socket
        if server.started:
            break
        threading.Event().wait(0.025)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)


def _page(browser: object) -> tuple[object, list[str]]:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    return page, seen


def _local(urls: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [u for u in urls if not u.startswith(prefixes)]


def test_report_opens_with_the_answer_and_a_finding_expands_to_its_messages(browser: object, reported_wh: Path,
                                                                          tmp_path: Path) -> None:
    report = reported_wh.parent / "r" / "report.html"
    page, seen = _page(browser)
    page.goto(report.as_uri())
    order = page.evaluate("() => [...document.querySelectorAll('body > section')].map(s => s.id)")
    assert order[:5] == ["data-quality", "what-to-change", "worst", "strongest", "baseline"]  # data quality first
    interleave = page.locator("details.finding", has=page.locator("code", has_text="topic_interleave")).first
    assert interleave.locator(".ev .msg").count() == 0  # nothing drawn until it is opened
    interleave.locator("summary").click()
    cited = interleave.locator(".ev .msg.cited")
    assert cited.first.locator(".mh").inner_text().startswith("[141] assistant")
    positions = [int(p) for p in interleave.locator(".ev .msg").evaluate_all("ms => ms.map(m => m.dataset.position)")]
    assert positions == sorted({q for p in (141, 147, 149, 151) for q in range(p - 2, p + 3)})  # two each side
    assert interleave.locator(".ev .msg.cited details.calls summary").first.inner_text() == "1 tool call"
    page.screenshot(path=str(tmp_path / "report.png"), full_page=False)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert _local(seen, ("file://",)) == []


def test_report_tables_sort_on_a_click_and_keep_their_headers_in_view(browser: object, reported_wh: Path) -> None:
    page, seen = _page(browser)
    page.goto((reported_wh.parent / "r" / "report.html").as_uri())
    table = page.locator("#keywords table.sortable").first
    table.locator("th", has_text="user_messages").click()
    counts = [int(x) for x in table.locator("tbody tr td:nth-child(2)").all_inner_texts()]
    assert counts == sorted(counts) and len(counts) == 22
    table.locator("th", has_text="user_messages").click()
    assert [int(x) for x in table.locator("tbody tr td:nth-child(2)").all_inner_texts()] == sorted(counts, reverse=True)
    wrap = page.locator("#keywords .tw").first
    wrap.evaluate("w => { w.style.maxHeight = '200px'; w.scrollTop = 300; }")
    top = wrap.evaluate("w => w.getBoundingClientRect().top")
    assert abs(table.locator("th").first.evaluate("h => h.getBoundingClientRect().top") - top) <= 2
    # Chinese stays text inside the charts: the browser's fonts draw it, no CJK font needed where it was drawn
    chart_text = page.locator("#chart-keywords_distinctive_terms svg text").evaluate_all(
        "ts => ts.map(t => t.textContent)")
    assert any(CJK.search(t) for t in chart_text)
    assert _local(seen, ("file://",)) == []


def test_explorer_finding_link_scrolls_to_its_evidence(browser: object, explorer: str, reported_wh: Path,
                                                       tmp_path: Path) -> None:
    page, seen = _page(browser)
    page.goto(explorer + "/")
    assert page.locator("#what-to-change h2").inner_text() == "What to change"
    page.screenshot(path=str(tmp_path / "overview.png"))
    page.goto(explorer + "/conversations?kind=topic_interleave&sort=label&dir=asc")
    page.locator("#conversations a", has_text="d6614e0b").click()
    page.wait_for_url(re.compile(r"/c/[0-9a-f]+$"))
    item = page.locator("ol.findings li", has=page.locator("code", has_text="topic_interleave"))
    item.locator("a.goto").click()
    page.wait_for_url(re.compile(r"#m141$"))
    target = page.locator("#m141")
    assert "target" in target.get_attribute("class")
    assert target.evaluate("m => { const r = m.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }")
    assert page.locator(".msg.target").count() == 4  # the finding's four cited messages are marked
    page.screenshot(path=str(tmp_path / "transcript.png"))
    assert (tmp_path / "transcript.png").stat().st_size > 10_000
    assert _local(seen, (explorer + "/",)) == []
    assert query(reported_wh, "SELECT count(*) FROM report_findings WHERE kind = 'topic_interleave'")[0][0] >= 1
