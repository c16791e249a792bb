"""report.md: the document (``report.compose``) as Markdown, charts as SVG files beside it (charts/NAME.svg).

Text from the logs (``document.Text``: labels, finding texts, table cells; ids in commands as code spans) is
escaped as Markdown here, where it is placed (``forensics.text.escape``); the toolkit's own words
(``document.Prose``) are written as they are. The finished document has its HTML made inert: a viewer that
renders raw HTML shows a message's ``<script>`` as text. What only a page can do is left out: the contents bar,
the messages a finding cites (``forensics show`` prints them), the size of what a ``Details`` folds."""

from __future__ import annotations

from functools import singledispatch

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
from forensics.report.text import kind_words
from forensics.text.escape import inert_html, markdown_code
from forensics.text.escape import markdown as md


def markdown(doc: Document) -> str:
    lines = [line for b in doc.blocks for line in block(b)]
    return inert_html(redact("\n".join(lines))) + "\n"


def inline(run: Inline) -> str:
    match run:
        case Text(text):
            return md(text)
        case Prose(text):
            return text
        case Code(text):
            return markdown_code(text)
        case Strong(text):
            return f"**{md(text)}**"


def runs(rs: Runs) -> str:
    return "".join(map(inline, rs))


@singledispatch
def block(b: Block) -> list[str]:
    raise TypeError(f"no Markdown for {type(b).__name__}")


@block.register
def _(b: Heading) -> list[str]:
    return [f"# {runs(b.runs)}", ""]


@block.register
def _(b: Paragraph) -> list[str]:
    return [runs(b.runs), ""]


@block.register
def _(b: CodeBlock) -> list[str]:
    return [f"```{b.lang}", b.text, "```", ""]


@block.register
def _(b: Table) -> list[str]:
    title = [f"**{b.title}**{b.note}", ""] if b.title else []
    return title + [table(list(b.head), [list(r) for r in b.rows]), ""]


@block.register
def _(b: ItemList) -> list[str]:
    return [f"{f'{i}.' if b.ordered else '-'} {runs(item.runs)}" for i, item in enumerate(b.items, 1)] + [""]


@block.register
def _(b: Findings) -> list[str]:
    title = [f"### {runs(b.title)}", ""] if b.title else []
    return title + [finding(f) for f in b.items] + [""]


@block.register
def _(b: Figure) -> list[str]:
    return [f"![{b.caption}](charts/{b.name}.svg)", ""]


@block.register
def _(b: Lead) -> list[str]:
    return [runs(b.runs), "", *block(b.block)]


@block.register
def _(b: Details) -> list[str]:
    return [f"{runs(b.summary)}:", ""] + [line for c in b.blocks for line in block(c)]


@block.register
def _(b: Part) -> list[str]:
    return [f"## {b.title}", ""] + [line for c in b.blocks for line in block(c)]


def finding(f: FindingItem) -> str:
    who = " ".join(filter(None, [md(f.who.text), f.where]))
    return (
        f"- **{f.severity}** {kind_words(f.kind)} — {who}: {md(f.summary)}"
        + (f" — {md(f.said)}" if f.said else "")
        + (f" · {md(f.standing)}" if f.standing else "")
        + (f" · {markdown_code(f.show)}" if f.show else "")
        # how it was decided, in the rule's own terms: a line under the finding (the HTML opens it in place)
        + f"\n  - how it was decided: `{f.kind}`"
        + (f": {md(f.rule)}" if f.rule else "")
    )


def table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(md(str(c)) for c in head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(md(str(c)) for c in r) + " |" for r in rows]
    return "\n".join(out)
