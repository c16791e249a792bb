"""One document model (issue 40, item 5): a report part is written once, as blocks (``report.compose``), and
report.md and report.html each render every block, escaping in their one place."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from forensics.analyzers.base import Finding, Section
from forensics.report import compose, document, html, markdown, render
from forensics.report.build import Report
from forensics.report.document import Code, Details, Item, ItemList, Paragraph, Part, Prose, Table, Text


def _report() -> Report:
    meta = {
        "label": "toy",
        "conversations": 2,
        "warehouse": "w.duckdb",
        "selection": {"all": True},
        "config": None,
        "toolkit_version": "0",
        "generated_at": "2026-01-01T00:00:00+00:00",
    }
    finding = Finding(
        "toy_kind", "high", "c1", None, [3, 4, 9], "a `tick` *and* <b>bold</b>", rule="n > 2", said="more than <2>"
    )
    return Report(meta, sections=[Section("toyan", "Toy analyzer", summary="Said `once`.", findings=[finding])])


def toy_part(rep: Report, charts: compose.Charts) -> list[document.Block]:
    """A new report-level part, written once: a paragraph of the toolkit's words, log text and code, a table, and
    a fold."""
    return [
        Part(
            "toy-part",
            "Toy part",
            (
                Paragraph((Prose("Toy says "), Text("a|b*c"), Prose(" to "), Code("forensics toy"))),
                Table(("key", "value"), (("<i>", "1"),), sortable=False),
                Details((Prose("More"),), (ItemList((Item((Text("x~y"),)),), style="norms"),), size="1 line"),
            ),
        )
    ]


def test_a_toy_report_part_appears_in_markdown_and_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compose, "PARTS", (*compose.PARTS, toy_part))
    render.write(_report(), tmp_path, ["md", "html"])
    md = (tmp_path / "report.md").read_text()
    page = (tmp_path / "report.html").read_text()
    assert (
        "## Toy part\n\nToy says a\\|b\\*c to `forensics toy`\n\n| key | value |\n|---|---|\n| &lt;i&gt; | 1 |\n\n"
        "More:\n\n- x\\~y\n" in md
    )
    assert "<section id=toy-part><h2>Toy part</h2>\n<p>Toy says a|b*c to <code>forensics toy</code></p>\n" in page
    assert "<tr><td>&lt;i&gt;</td><td class=n>1</td></tr>" in page
    assert "<details><summary>More (1 line)</summary><ul class=norms><li>x~y</li></ul></details>\n</section>" in page
    assert md.index("## Toy part") > md.index("## Toy analyzer")  # after the others, as PARTS orders it
    assert '<a href="#toy-part"' not in page  # the contents list the digest and the analyzers' sections only


def test_a_section_is_written_once_and_each_medium_escapes_it(tmp_path: Path) -> None:
    render.write(_report(), tmp_path, ["md", "html"])
    md = (tmp_path / "report.md").read_text()
    page = (tmp_path / "report.html").read_text()
    # the analyzer's summary is its Markdown (written as is in report.md); the finding's summary is log text
    assert "## Toy analyzer\n\nSaid `once`.\n\n### Findings\n\n" in md
    # the line says the kind and the rule in a reader's words; the kind's identifier and the rule's own terms are
    # one click away (a line under it in Markdown, inside the opened finding in HTML)
    assert (
        "- **high** toy kind — c1 [3]–[4], [9]: a \\`tick\\` \\*and\\* &lt;b&gt;bold&lt;/b&gt; — more than &lt;2&gt; · "
        "`forensics show c1 --positions 3-4,9`\n  - how it was decided: `toy_kind`: n &gt; 2\n" in md
    )
    assert (
        "<section id=toyan><h2>Toy analyzer</h2>\n<p>Said <code>once</code>.</p>\n<h3>Findings</h3><ul class=findings>"
        in page
    )
    assert (
        '<li><details class=finding id="toyan-1" data-c="c1" data-p="3,4,9"><summary><span class=sev-high>high</span> '
        '<span class=kind title="toy_kind">toy kind</span> — <b>c1</b> [3]–[4], [9]: a `tick` *and* '
        "&lt;b&gt;bold&lt;/b&gt; <span class=held>— more than &lt;2&gt;</span></summary>"
        "<p class=rule>How it was decided: <code>toy_kind</code>: n &gt; 2</p><div class=ev></div>"
        "<p class=meta>In a terminal: <code>forensics show c1 --positions 3-4,9</code></p></details></li>" in page
    )


def test_every_block_has_a_rendering_in_each_medium() -> None:
    """A new kind of block fails here until report.md and report.html both render it."""
    kinds = typing.get_args(document.Block)
    assert len(kinds) == 10
    for medium in (markdown.block, html.block):
        assert all(medium.dispatch(k) is not medium.dispatch(object) for k in kinds), medium


def test_the_model_is_frozen_plain_text() -> None:
    p = Paragraph((Text("a"),))
    with pytest.raises(AttributeError):
        p.meta = True  # type: ignore[misc]
    assert document.prose("no table (`[skills] triggers`, or `--triggers FILE`).") == (
        Prose("no table ("),
        Code("[skills] triggers"),
        Prose(", or "),
        Code("--triggers FILE"),
        Prose(")."),
    )
