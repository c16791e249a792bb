"""report.html: the document (``report.compose``) as one self-contained page. A contents bar, the answer first,
then the sections; every finding opens to the messages it cites (embedded once each, as JSON, rendered by the
inline script), tables sort on a click and keep their headers in view, charts are inline SVG. Nothing is fetched
from the network. Every text of the document is escaped here (``html.escape``)."""

from __future__ import annotations

import html
import re
from functools import cache, singledispatch
from importlib.resources import files

import orjson

from forensics.draw import inline as inline_svg
from forensics.kernel.redact import redact
from forensics.report.document import (
    Block,
    Code,
    CodeBlock,
    Details,
    Document,
    Figure,
    FindingItem,
    Findings,
    Heading,
    Inline,
    ItemList,
    Lead,
    Paragraph,
    Part,
    Prose,
    Runs,
    Strong,
    Table,
    Text,
)
from forensics.report.text import NUMERIC, kind_words

e = html.escape


@cache
def asset(name: str) -> str:
    return (files("forensics.report") / "assets" / name).read_text(encoding="utf-8")


def page(doc: Document) -> str:
    data = orjson.dumps(doc.evidence, option=orjson.OPT_NON_STR_KEYS).decode().replace("</", "<\\/")
    nav = (
        "<nav class=toc>"
        + "".join(
            f'<a href="#{e(a)}"{" class=first" if i < 3 else ""}>{e(t)}</a>' for i, (a, t) in enumerate(doc.contents)
        )
        + "</nav>"
    )
    text = redact("\n".join([nav, *(line for b in doc.blocks for line in block(b))]))
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{e(doc.title)}</title>"
        f'<meta name=viewport content="width=device-width, initial-scale=1"><style>{asset("report.css")}</style>'
        f'</head><body>{text}<script type="application/json" id=evidence-data>{redact(data)}</script>'
        f"<script>{asset('report.js')}</script></body></html>\n"
    )


def inline(run: Inline) -> str:
    match run:
        case Text(text) | Prose(text):
            return e(text)
        case Code(text):
            return f"<code>{e(text)}</code>"
        case Strong(text, title):
            return f'<b title="{e(title)}">{e(text)}</b>' if title else f"<b>{e(text)}</b>"


def runs(rs: Runs) -> str:
    return "".join(map(inline, rs))


def one(b: Block) -> str:
    """A block as one string, its lines glued (inside a fold, after its lead-in, in the explorer's page)."""
    return "".join(block(b))


@singledispatch
def block(b: Block) -> list[str]:
    """The page's lines of ``b`` (joined by newlines)."""
    raise TypeError(f"no HTML for {type(b).__name__}")


@block.register
def _(b: Heading) -> list[str]:
    return [f"<h1>{runs(b.runs)}</h1>"]


@block.register
def _(b: Paragraph) -> list[str]:
    return [f"<p{' class=meta' if b.meta else ''}>{runs(b.runs)}</p>"]


@block.register
def _(b: CodeBlock) -> list[str]:
    return [f"<pre{f' class={b.lang}' if b.lang else ''}>{e(b.text)}</pre>"]


@block.register
def _(b: Table) -> list[str]:
    title = f"<h3>{e(b.title)}{e(b.note)}</h3>" if b.title else ""
    return [title + table(list(b.head), [list(r) for r in b.rows], dict(b.hover), b.sortable, b.wrap)]


@block.register
def _(b: ItemList) -> list[str]:
    tag = "ol" if b.ordered else "ul"
    items = "".join(
        f"<li>{runs(i.runs)}"
        + (
            f' <a href="#{i.findings[0].anchor}">evidence</a><ul class=findings>'
            + "".join(map(finding, i.findings))
            + "</ul>"
            if i.findings
            else ""
        )
        + "</li>"
        for i in b.items
    )
    return [f"<{tag}{f' class={b.style}' if b.style else ''}>{items}</{tag}>"]


@block.register
def _(b: Findings) -> list[str]:
    title = f"<h3>{runs(b.title)}</h3>" if b.title else ""
    return [title + "<ul class=findings>" + "".join(map(finding, b.items)) + "</ul>"]


@block.register
def _(b: Figure) -> list[str]:
    return [f'<figure id="chart-{e(b.name)}">{inline_svg(b.svg)}<figcaption>{e(b.caption)}</figcaption></figure>']


@block.register
def _(b: Lead) -> list[str]:
    return [f"<p{' class=meta' if b.meta else ''}>{runs(b.runs)}</p>" + one(b.block)]


@block.register
def _(b: Details) -> list[str]:
    size = f" ({e(b.size)})" if b.size else ""
    return [f"<details><summary>{runs(b.summary)}{size}</summary>" + "".join(map(one, b.blocks)) + "</details>"]


@block.register
def _(b: Part) -> list[str]:
    return [
        f"<section id={e(b.anchor)}><h2>{e(b.title)}</h2>",
        *(line for c in b.blocks for line in block(c)),
        "</section>",
    ]


def finding(f: FindingItem) -> str:
    """One finding: its line, and a <details> that opens to its messages in context."""
    line = (
        f"<span class=sev-{e(f.severity)}>{e(f.severity)}</span> "
        f'<span class=kind title="{e(f.kind)}">{e(kind_words(f.kind))}</span> — '
        f"{inline(f.who)}{' ' + e(f.where) if f.where else ''}: {e(f.summary)}"
        + (f" <span class=held>— {e(f.said)}</span>" if f.said else "")
        + (f" <span class=standing>· {e(f.standing)}</span>" if f.standing else "")
    )
    return (
        f'<li><details class=finding id="{e(f.anchor)}" data-c="{e(f.evidence)}" '
        f'data-p="{",".join(map(str, f.positions))}"><summary>{line}</summary>{rule_line(f.kind, f.rule)}'
        "<div class=ev></div>"
        + (f"<p class=meta>In a terminal: <code>{e(f.show)}</code></p>" if f.show else "")
        + "</details></li>"
    )


def rule_line(kind: str, rule: str) -> str:
    """How a finding was decided, in the rule's own terms, shown when the finding is opened: its kind's identifier
    (what ``--kind`` and metrics.json take) and the rule with its thresholds and norm."""
    return f"<p class=rule>How it was decided: <code>{e(kind)}</code>{': ' + e(rule) if rule else ''}</p>"


# a word long enough to widen its column past the page (an id, a path, a hash): the cell may break it anywhere
LONG_TOKEN = re.compile(r"\S{17,}")


def breakable(h: str) -> str:
    """``h`` escaped, with a line-break opportunity after each ``_`` and ``/``: a column name such as
    ``tool_results_gt_10kb`` wraps at its parts instead of widening its column (the text stays the same)."""
    return re.sub(r"([_/])(?=\w)", r"\1<wbr>", e(h))


def table(
    head: list[str],
    rows: list[list[str]],
    hover: dict[str, str] | None = None,
    sortable: bool = True,
    wrap: bool = False,
) -> str:
    """A table whose headers stay in view while it scrolls and sort it on a click; a cell holding a conversation's
    label shows its full ids on hover."""
    hover = hover or {}

    def cell(c: str) -> str:
        c = str(c)
        kind = "n" if NUMERIC.fullmatch(c) else ("id" if LONG_TOKEN.search(c) else "")
        attrs = (f" class={kind}" if kind else "") + (f' title="{e(hover[c])}"' if c in hover else "")
        return f"<td{attrs}>{e(c)}</td>"

    def th(h: str) -> str:
        return f'<th title="{e(hover[h])}">{breakable(h)}</th>' if h in hover else f"<th>{breakable(h)}</th>"

    head_html = "".join(th(str(h)) for h in head)
    classes = " ".join(c for c, on in (("sortable", sortable), ("wrap", wrap)) if on)
    attr = f' class="{classes}"' if classes else ""
    return (
        f"<div class=tw><table{attr}><thead><tr>{head_html}</tr></thead><tbody>"
        + "".join("<tr>" + "".join(cell(c) for c in r) + "</tr>" for r in rows)
        + "</tbody></table></div>"
    )
