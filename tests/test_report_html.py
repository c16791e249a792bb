"""report.html is one self-contained page: the answer first, every shown finding's messages embedded (and only
those), labels people recognise, charts as SVG text that needs no CJK font on the machine that drew them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.report.evidence import windows
from tests.conftest import FIXTURES, query, run_subprocess


@pytest.fixture(scope="module")
def page(reported_wh: Path) -> str:
    return (reported_wh.parent / "r" / "report.html").read_text()


def test_html_loads_nothing_from_the_network(page: str) -> None:
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"""(src|href)=(?!["']?#)""", page)  # only in-page links: no file, no URL, no data URI
    assert page.count("<svg") >= 8 and "<img" not in page  # every chart inline, as SVG


def test_the_answer_comes_before_any_section(page: str) -> None:
    ids = re.findall(r"<section id=([\w-]+)>", page)
    # the runs first (issue 26, docs/usage.md: tokens, cost, errors per agent and model), then data quality (issue 24):
    # what of the sources' text is gone, before any finding is read; what went wrong (the failed runs' clusters and
    # their decisive steps, issue 41) opens the report when some run failed
    assert ids[:6] == ["failures", "usage", "data-quality", "what-to-change", "worst", "strongest"]
    assert ids[6] == "baseline"
    assert page.index("<pre class=toml>") < page.index("<section id=baseline>")


def test_only_the_cited_messages_and_their_context_are_embedded(page: str, reported_wh: Path) -> None:
    data = json.loads(
        re.search(r'<script type="application/json" id=evidence-data>(.*?)</script>', page, re.S)
        .group(1)
        .replace("<\\/", "</")
    )
    shown = re.findall(r'<details class=finding id="[^"]+" data-c="([0-9a-f]+)" data-p="([\d,]*)">', page)
    want: dict[str, set[int]] = {}
    for cid, ps in shown:
        want.setdefault(cid, set()).update(windows(int(p) for p in ps.split(",") if p))
    got = {cid: {int(p) for p in msgs} for cid, msgs in data.items()}
    main = {
        cid: {
            p
            for (p,) in query(
                reported_wh, "SELECT position FROM messages WHERE conversation_id = ? AND on_main_path", [cid]
            )
        }
        for cid in want
    }
    assert got == {cid: ps & main[cid] for cid, ps in want.items() if ps & main[cid]}
    total = query(reported_wh, "SELECT count(*) FROM messages WHERE on_main_path")[0][0]
    assert sum(map(len, got.values())) < total / 2  # a small part of the corpus, not all of it
    d66 = next(
        cid
        for cid, msgs in data.items()
        if msgs.get("142", {}).get("r") == "tool"
        and query(reported_wh, "SELECT native_id FROM conversations WHERE conversation_id = ?", [cid])[0][0]
        == "d6614e0b"
    )
    m = data[d66]["142"]
    assert (m["b"], m["c"] > len(m["x"]), len(m["x"])) == (4640, True, 600)  # cut, with its full size kept
    assert data[d66]["141"]["k"][0][:3] == ["read_file", '{"path": "src/hooks/useAiSend.ts"}', 142]


def test_labels_are_unique_and_hover_to_the_full_id(page: str, reported_wh: Path) -> None:
    head = re.search(r"<section id=compression>.*?<tbody>(.*?)</tbody>", page, re.S).group(1)
    cells = re.findall(r'<tr><td title="([^"]+)">([^<]+)</td>', head)
    labels = [c[1] for c in cells]
    assert len(labels) == len(set(labels))
    both = {label: full for full, label in cells if label.startswith("aeb4919b")}
    assert set(both) == {"aeb4919b · anthropic.db", "aeb4919b · realistic.db"}
    assert all(f.startswith("aeb4919b · conversation ") for f in both.values())


def test_a_chinese_report_draws_without_a_cjk_font_and_warns_nothing(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert run_subprocess("ingest", str(FIXTURES / "seed" / "seed.db"), "--db", str(db)).returncode == 0
    r = run_subprocess("report", "--db", str(db), "--out", str(tmp_path / "r"), "--only", "baseline,keywords")
    assert (r.returncode, r.stderr) == (0, "")
    svg = (tmp_path / "r" / "charts" / "keywords_distinctive_terms.svg").read_text()
    assert re.search(r"<text[^>]*>[^<]*[\u4e00-\u9fff]", svg)  # Chinese kept as text, for the reader's fonts
    assert "<path" in svg and "font-family" in svg


def test_a_report_killed_half_way_leaves_the_previous_files_whole(tmp_path: Path) -> None:
    db, out = tmp_path / "w.duckdb", tmp_path / "r"
    assert run_subprocess("ingest", str(FIXTURES / "seed" / "seed.db"), "--db", str(db)).returncode == 0
    only = ["--only", "baseline,drift"]
    # the first report has fewer analyzers: the second computes (the same report again would be kept whole, and
    # done before it could be killed)
    assert run_subprocess("report", "--db", str(db), "--out", str(out), "--only", "baseline").returncode == 0
    files = lambda: {p.name: p.read_bytes() for p in out.glob("*.*") if not p.name.startswith(".")}  # noqa: E731
    before = files()
    # killed where a page is staged after the new metrics.json: the pages are rendered before the report is kept
    # (``render.prerender``), so writing them takes a blink and no poll from outside finds that moment
    kill = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from forensics.report import render\n"
        "page = render._page\n"
        "def _page(*a, **k):\n"
        f"    if list(Path({str(out)!r}).glob('.metrics.json.*.tmp')):\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return page(*a, **k)\n"
        "render._page = _page\n"
        "from forensics.cli import main\n"
        "sys.argv[0] = 'forensics'\n"
        "main()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", kill, "report", "--db", str(db), "--out", str(out), *only],
        env={**os.environ, "CI": "true"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert proc.wait(timeout=600) == -signal.SIGKILL  # killed, not finished
    assert files() == before and list(out.glob(".metrics.json.*.tmp"))  # what it staged never replaced them
    assert run_subprocess("report", "--db", str(db), "--out", str(out), *only).returncode == 0
    assert list(out.glob(".*.tmp")) == [] and json.loads((out / "metrics.json").read_text())["conversations"] == 3
