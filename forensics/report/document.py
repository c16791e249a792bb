"""The document model: what a report says, once, as typed blocks of plain text that each medium renders.

``report.compose`` builds one ``Document`` from a report (or a before/after comparison); ``report.markdown``
writes it as report.md and ``report.html`` as report.html. Text in the model holds no markup and is escaped by
the renderer, in one place each (``forensics.text.escape`` for Markdown, ``html.escape`` for HTML). The inline
runs say whose words they are, because Markdown treats the two differently:

- ``Text``: words from the logs or computed from them (a label, a finding's summary, a table cell, a path):
  hostile, so Markdown backslashes its syntax;
- ``Prose``: the toolkit's own sentence (a section's summary, a title, a line of `forensics tune`), which the
  Markdown writes as it is (a summary is Markdown by contract: ``Section.summary``);
- ``Code``: a command, a key or a path shown as code;
- ``Strong``: a conversation's label, with its full ids for where the medium can show them on hover.

A block that only one medium can show is carried whole and left out by the other, never written twice: a
finding's ``forensics show`` line is in both, its messages (``Document.evidence``) only in HTML; ``Details``
folds in HTML and is a lead-in line in Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Text:
    """Words from the logs, or figures: each medium escapes them."""

    text: str


@dataclass(frozen=True)
class Prose:
    """The toolkit's own words (Markdown writes them as they are; HTML escapes them)."""

    text: str


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Strong:
    """A conversation's label, ``title`` its full ids (shown on hover where the medium can)."""

    text: str
    title: str = ""


Inline = Text | Prose | Code | Strong
Runs = tuple[Inline, ...]


def prose(text: str) -> Runs:
    """The toolkit's sentence with its `code spans` as ``Code``: "no trigger table (`[skills] triggers`)"."""
    parts = re.split(r"`([^`]+)`", text)
    return tuple(Code(p) if i % 2 else Prose(p) for i, p in enumerate(parts) if p or i % 2)


@dataclass(frozen=True)
class Heading:
    """The document's title (or, in a comparison, each report's): the top level."""

    runs: Runs


@dataclass(frozen=True)
class Paragraph:
    runs: Runs
    meta: bool = False  # a line about the report rather than its findings (set smaller where the medium can)


@dataclass(frozen=True)
class CodeBlock:
    text: str
    lang: str = ""


@dataclass(frozen=True)
class Table:
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    title: str = ""  # the toolkit's caption, if any
    note: str = ""  # after the title: "(first 40 of 120; all in metrics.json)"
    hover: Mapping[str, str] = field(default_factory=dict)  # a cell's text -> its longer form (a label's ids)
    sortable: bool = True
    wrap: bool = False  # long cells wrap rather than widen the table


@dataclass(frozen=True)
class FindingItem:
    """One finding: its line, the messages it cites (``evidence`` key and ``positions``) and where to see them in a
    terminal (``show``)."""

    severity: str
    kind: str
    who: Strong  # whom it is about (its conversation's label)
    where: str  # its positions, "[9]–[11], [58]"
    summary: str
    said: str  # the rule in a reader's words, on the line ("" when the analyzer has none)
    rule: str  # the rule in its own terms, one click away ("" when the summary says it already)
    standing: str  # "further out than 99% of ..."
    show: str  # the `forensics show` line ("" without a conversation)
    anchor: str  # its id in the document
    evidence: str  # the key of its conversation's messages in ``Document.evidence``
    positions: tuple[int, ...]


@dataclass(frozen=True)
class Item:
    """A list item; ``findings``: the findings that prove it, where the medium can open them."""

    runs: Runs
    findings: tuple[FindingItem, ...] = ()


@dataclass(frozen=True)
class ItemList:
    items: tuple[Item, ...]
    ordered: bool = False
    style: str = ""  # "norms": short lines said once


@dataclass(frozen=True)
class Findings:
    """A list of findings, under ``title`` ("Findings (the strongest 100 of 101; ...)") when it has one."""

    items: tuple[FindingItem, ...]
    title: Runs = ()


@dataclass(frozen=True)
class Figure:
    name: str  # the chart's file name, without .svg
    caption: str
    svg: str


@dataclass(frozen=True)
class Lead:
    """A sentence that introduces the block after it ("Paste into the harness config:")."""

    runs: Runs
    block: Block
    meta: bool = False


@dataclass(frozen=True)
class Details:
    """Blocks a reader opens when they want them, under ``summary``; ``size`` says how much is folded."""

    summary: Runs
    blocks: tuple[Block, ...]
    size: str = ""


@dataclass(frozen=True)
class Part:
    """A section of the report: its anchor (for the contents and links) and title."""

    anchor: str
    title: str
    blocks: tuple[Block, ...]


Block = Heading | Paragraph | CodeBlock | Table | Findings | ItemList | Figure | Lead | Details | Part


@dataclass(frozen=True)
class Document:
    title: str
    blocks: tuple[Block, ...]
    contents: tuple[tuple[str, str], ...] = ()  # (anchor, text): the parts a reader jumps to, in that order
    evidence: Mapping[str, Mapping[int, Any]] = field(default_factory=dict)  # key -> position -> cited message
