"""The report's and the explorer's words say what a reader would (issue 47, item 5): a finding's line says its rule in
plain words ("Codex CLI: only 1 conversation (5 needed) to learn ..."), the rule's own terms (its fence, the seed's
threshold, its identifier) one click away, and every word from the logs escaped on the way."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from forensics.analyzers.drift.norms import Norm, fit
from forensics.serve.app import create_app
from forensics.text.agents import agent_name


def test_a_kind_of_agent_is_said_by_its_name() -> None:
    assert agent_name("codex") == "Codex CLI"
    assert agent_name("claude-code sub-agent") == "Claude Code's sub-agents"
    assert agent_name("codex gpt-5-codex") == "Codex CLI with gpt-5-codex"
    assert agent_name("claude-code sub-agent claude-opus-4") == "Claude Code's sub-agents with claude-opus-4"
    assert agent_name("sqlite") == "the SQLite harness"
    assert agent_name("someformat") == "someformat"  # a format without a name: its identifier


def test_no_norm_too_few_conversations_says_so_and_the_default_that_applies() -> None:
    """The issue's own case: 52 requests of one Codex conversation are no norm; the detail keeps the rule's terms."""
    norm = fit([("codex", None, "c1", float(v % 7)) for v in range(52)], "requests with tool calls")[("codex", None)]
    assert norm.fence is None and (norm.values, norm.conversations) == (52, 1)
    assert norm.said("the usual width of a request", "the default limit of 8 targets applies") == (
        "Codex CLI: only 1 conversation (5 needed) to learn the usual width of a request, so the default limit of 8 "
        "targets applies"
    )
    assert norm.text("the seed's high threshold for the seed harness's logs") == (
        "no norm for codex (52 requests with tool calls of 1 conversations, fewer than 20 of 5): the seed's high "
        "threshold for the seed harness's logs"
    )  # the detail, one click away: unchanged


def test_no_norm_too_few_values_and_too_few_conversations_of_a_whole_conversation_figure() -> None:
    few = Norm("cline", "requests with tool calls", None, 12, 6)
    assert few.said("the usual width of a request", "the default limit of 10 targets applies") == (
        "Cline / Roo Code: only 12 requests (20 needed) to learn the usual width of a request, so the default limit of "
        "10 targets applies"
    )
    one = Norm("claude-code sub-agent", "conversations", None, 1, 1)
    assert one.said("the usual share of tool output", "the default limit applies") == (
        "Claude Code's sub-agents: only 1 conversation (20 needed) to learn the usual share of tool output, so the "
        "default limit applies"
    )


def test_a_learned_norm_says_where_it_was_learned() -> None:
    rows = [("codex", "gpt-5", f"c{i % 6}", float(i % 9)) for i in range(60)]
    norm = fit(rows, "requests with tool calls")[("codex", "gpt-5")]
    assert norm.fence is not None and norm.kind == "codex gpt-5"
    assert norm.said("the usual width of a request", "unused") == (
        "judged against the runs of Codex CLI with gpt-5 (learned from its 60 requests in 6 conversations)"
    )
    assert norm.text("unused").startswith("codex gpt-5's norm: fence ")
    whole = Norm("gemini-cli", "conversations", 2.5, 40, 40)
    assert whole.learned() == "learned from its 40 conversations"


@pytest.fixture(scope="module")
def doc(reported_wh: Path) -> dict:
    return json.loads((reported_wh.parent / "r" / "metrics.json").read_text())


def test_a_drift_finding_says_its_rule_plainly_and_keeps_its_detail(doc: dict, reported_wh: Path) -> None:
    """On the fixtures: a wide request of the seed harness, beyond its own fence. Its line in
    report.md says it plainly, the rule's terms on the line under it; report.html opens to them."""
    f = next(
        f for f in doc["findings"] if f["kind"] == "tool_dispersion" and "wider than the usual request" in f["said"]
    )
    assert re.fullmatch(
        r"\d+ distinct targets for the request at \[\d+\]: wider than the usual request of the SQLite harness"
        r"( with gpt-mini)? \(learned from its \d+ requests in \d+ conversations: at most 9\.5 targets\)(; the "
        r"person stepped in after it at \[\d+\] \(.+\))?",
        f["said"],
    ), f["said"]
    assert "'s norm: fence 9.5 over " in f["rule"]  # the rule's own terms, kept
    assert not re.search(r"\bnorm\b|\bseed\b|fence", f["said"])  # none of the toolkit's own words on the line
    md = (reported_wh.parent / "r" / "report.md").read_text()
    line = next(x for x in md.splitlines() if f["said"].replace("[", "\\[") in x or f["said"] in x)
    assert line.startswith("- **") and " tool dispersion — " in line and "`tool_dispersion`" not in line
    after = md.splitlines()[md.splitlines().index(line) + 1]
    assert after.startswith("  - how it was decided: `tool_dispersion`: ") and "9.5" in after
    page = (reported_wh.parent / "r" / "report.html").read_text()
    assert f"<span class=held>— {html.escape(f['said'])}</span>" in page
    assert f"<p class=rule>How it was decided: <code>tool_dispersion</code>: {html.escape(f['rule'])}</p>" in page


def test_the_explorer_says_the_kind_and_rule_in_words_with_the_detail_a_click_away(
    doc: dict, reported_wh: Path
) -> None:
    client = TestClient(create_app(reported_wh), base_url="http://127.0.0.1")
    page = client.get("/findings?kind=tool_dispersion").text
    said = next(f["said"] for f in doc["findings"] if f["kind"] == "tool_dispersion")
    assert '<span class="kind" title="tool_dispersion">tool dispersion</span>' in page
    assert f'<span class="held">— {html.escape(said, quote=True).replace("&#x27;", "&#39;")}</span>' in page
    assert '<details class="rule"><summary>how it was decided</summary><code>tool_dispersion</code>: ' in page
    assert "<i>(rule:" not in page  # the old inline rule jargon is gone from the line
    # the figures by name, the identifiers on hover; the kind filter by name, its value the identifier
    rows = client.get("/conversations").text
    assert '<span class="kv" title="empty_assistant_share">share of replies without text <b>' in rows
    assert '<option value="tool_dispersion">tool dispersion</option>' in rows


def test_a_finding_quoting_markup_is_escaped_in_the_explorer(reported_wh: Path, tmp_path: Path) -> None:
    """A finding's words come from the logs (its summary, and a rule or plain words that quote them): escaped on every
    page, never markup."""
    import shutil

    import duckdb

    db = tmp_path / "w.duckdb"
    shutil.copy(reported_wh, db)
    con = duckdb.connect(str(db))
    con.execute(
        "UPDATE report_findings SET said = '<script>x</script> said', rule = '<b>rule</b>' "
        "WHERE kind = 'tool_dispersion'"
    )
    con.close()
    page = TestClient(create_app(db), base_url="http://127.0.0.1").get("/findings?kind=tool_dispersion").text
    assert "<script>x</script>" not in page and "<b>rule</b>" not in page
    assert "&lt;script&gt;x&lt;/script&gt; said" in page and "&lt;b&gt;rule&lt;/b&gt;" in page
