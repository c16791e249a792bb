"""Regenerate the README's screenshots of report.html and `forensics serve` from the demo fixtures.

    .venv/bin/python docs/screenshots.py          # needs Debian's chromium (and a CJK font for the Chinese)

Ingests what `make demo` ingests into a temporary warehouse, writes the report, serves the explorer on a free
loopback port and photographs both with Playwright driving /usr/bin/chromium.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["seed/seed.db", "sqlite", "sessions", "anthropic", "claude_code", "openai"]  # as the Makefile's demo
RUNS = ["outcomes"]  # and runs with outcomes, for the explorer's outcome column and run diff
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def main() -> None:
    import uvicorn
    from playwright.sync_api import sync_playwright

    from forensics import ingest
    from forensics.api import report
    from forensics.serve.app import create_app

    chromium = shutil.which("chromium") or sys.exit("chromium is not installed (apt-get install chromium)")
    work = Path(tempfile.mkdtemp())
    os.chdir(work)  # the pages name the warehouse as `make demo` does: reports/demo.duckdb
    db = Path("reports") / "demo.duckdb"
    db.parent.mkdir()
    ingest([ROOT / "fixtures" / s for s in SOURCES + RUNS], db=db)
    report(db, "reports")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        threading.Event().wait(0.05)
    url = f"http://127.0.0.1:{port}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto((work / "reports" / "report.html").as_uri())
        page.screenshot(path=str(ROOT / "docs" / "report-html.png"))
        finding = page.locator("#s1")
        finding.locator("summary").click()
        finding.scroll_into_view_if_needed()
        page.evaluate("() => window.scrollBy(0, -60)")
        page.screenshot(path=str(ROOT / "docs" / "report-evidence.png"))
        page.goto(url + "/")
        page.screenshot(path=str(ROOT / "docs" / "serve-overview.png"))
        page.goto(url + "/conversations?kind=topic_interleave")
        page.locator("#conversations a", has_text="d6614e0b").click()
        page.locator("ol.findings li", has=page.locator("code", has_text="topic_interleave")).locator("a.goto").click()
        page.wait_for_url("**#m141")
        page.evaluate("() => window.scrollBy(0, -120)")
        page.screenshot(path=str(ROOT / "docs" / "serve-transcript.png"))
        wide = browser.new_page(viewport={"width": 1280, "height": 900})
        wide.goto(url + "/conversations?sort=tokens_in&dir=desc")
        wide.screenshot(path=str(ROOT / "docs" / "serve-conversations.png"))
        wide.goto(url + "/search?q=compaction")
        wide.screenshot(path=str(ROOT / "docs" / "serve-search.png"))
        wide.goto(url + "/diff")
        wide.locator("#pairs tr", has=wide.locator("td", has_text="medagentbench-std/96")).locator("a").click()
        wide.wait_for_url("**/diff?a=*")
        wide.screenshot(path=str(ROOT / "docs" / "serve-diff.png"))
        narrow = browser.new_page(viewport={"width": 400, "height": 860})
        narrow.goto(url + "/conversations?agent=claude-code&sort=tokens_in&dir=desc")
        narrow.locator("#conversations tbody a").first.click()
        narrow.locator("#transcript").scroll_into_view_if_needed()
        narrow.screenshot(path=str(ROOT / "docs" / "serve-narrow.png"))
        browser.close()
    server.should_exit = True
    os.chdir(ROOT)
    shutil.rmtree(work)
    print(
        "docs/report-html.png docs/report-evidence.png docs/serve-overview.png docs/serve-transcript.png "
        "docs/serve-conversations.png docs/serve-search.png docs/serve-diff.png docs/serve-narrow.png"
    )


if __name__ == "__main__":
    main()
