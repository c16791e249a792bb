"""A report (or a before/after comparison) as one ``document.Document``: what report.md and report.html say.

Each part of the report is written here once, as blocks: the sections the report leads with (what went wrong,
the runs), the data quality, the digest (what to change, the worst conversations, the strongest findings) and
the other sections. ``PARTS`` is their order; a new report-level part is one function here, added to it
(docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from forensics import draw
from forensics.analyzers import quality
from forensics.analyzers.base import Finding, Section
from forensics.report import digest as digests
from forensics.report.build import Report
from forensics.report.compare import Comparison
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
    Item,
    ItemList,
    Lead,
    Paragraph,
    Part,
    Prose,
    Strong,
    Table,
    Text,
    prose,
)
from forensics.report.text import (
    CHANGE_HEAD,
    KIND_HEAD,
    MAX_TABLE_ROWS,
    change_row,
    df_rows,
    fmt,
    generated_text,
    kept_lines,
    kind_row,
    not_in_use_lines,
    positions_text,
    selection_text,
    show_command,
    source_text,
    standing,
    thresholds_text,
)

Charts = dict[str, tuple[str, str]]  # name -> (title, SVG document): ``render.draw``
DIGEST_PARTS = (
    ("what-to-change", "What to change"),
    ("worst", "Worst conversations"),
    ("strongest", "Strongest findings"),
)


def document(result: Report | Comparison, charts: Charts) -> Document:
    reports = (
        [("before_", result.before), ("after_", result.after)] if isinstance(result, Comparison) else [("", result)]
    )
    toc = [(f"{p}{a}", f"{r.meta['label'] + ': ' if p else ''}{t}") for p, r in reports for a, t in DIGEST_PARTS]
    toc += [(f"{p}{s.name}", s.title) for p, r in reports for s in r.parts()[1]]
    toc = [(f"{p}{s.name}", s.title) for p, r in reports for s in r.parts()[0]] + toc
    evidence = {
        f"{p}{cid}": {pos: msg.as_dict() for pos, msg in msgs.items()}
        for p, r in reports
        for cid, msgs in r.evidence.items()
    }
    if isinstance(result, Comparison):
        blocks = _comparison(result, charts)
        title = "forensics: before / after"
    else:
        blocks = [Heading((Prose("forensics report"),)), _meta(result.meta), *_no_charts(charts)]
        for part in PARTS:
            blocks += part(result, charts)
        title = "forensics report"
    return Document(title, tuple(blocks), tuple(toc), evidence)


def _comparison(result: Comparison, charts: Charts) -> list[Block]:
    blocks: list[Block] = [
        Heading((Prose("forensics report: before / after"),)),
        ItemList(
            tuple(
                Item((Text(f"{side}: {r.meta['label']}"), Prose(f" — {r.meta['conversations']} conversations")))
                for side, r in (("before", result.before), ("after", result.after))
            )
        ),
        Table(("metric", "before", "after", "delta"), tuple((k, fmt(b), fmt(a), fmt(d)) for k, b, a, d in result.rows)),
        *_no_charts(charts),
        *_figures(charts, ["before_after"]),
    ]
    for prefix, rep in (("before_", result.before), ("after_", result.after)):
        blocks += [Heading((Text(str(rep.meta["label"])),)), *digest(rep, prefix), *sections(rep, charts, prefix)]
    return blocks


def _meta(m: dict[str, Any]) -> Paragraph:
    return Paragraph(
        (
            Prose(f"{m['conversations']} conversations from "),
            Code(source_text(m)),
            Prose(" · selection "),
            Text(selection_text(m)),
            Prose(" · config "),
            Text(m["config"] or "built-in defaults"),
            Prose(f" · forensics {m['toolkit_version']} · {generated_text(m)}"),
        ),
        meta=True,
    )


# ------------------------------------------------------------------ the parts of a report, in order
def leading(rep: Report, charts: Charts) -> list[Block]:
    """The sections the report leads with (``Analyzer.lead``)."""
    return sections(rep, charts, "", rep.parts()[0])


def data_quality(rep: Report, charts: Charts) -> list[Block]:
    """What of the sources' text is gone (redacted at the source, empty, truncated)."""
    if "data_quality" not in rep.meta:
        return []
    text, head, rows = quality.lines(rep.meta["data_quality"])
    table = [Table(tuple(head), tuple(map(tuple, rows)))] if rows else []
    return [Part("data-quality", "Data quality", (Paragraph(prose(text)), *table))]


def the_digest(rep: Report, charts: Charts) -> list[Block]:
    return digest(rep, "")


def others(rep: Report, charts: Charts) -> list[Block]:
    return sections(rep, charts, "", rep.parts()[1])


PARTS: tuple[Callable[[Report, Charts], list[Block]], ...] = (leading, data_quality, the_digest, others)


# ------------------------------------------------------------------ the digest
def digest(rep: Report, prefix: str) -> list[Block]:
    d = rep.digest
    out: list[Block] = []
    if d.not_in_use:
        out.append(
            Lead(
                (
                    Prose(
                        "Not in use here (their input is absent: no finding, no gated metric, no recommendation "
                        "from them):"
                    ),
                ),
                ItemList(tuple(Item(prose(t)) for t in not_in_use_lines(rep)), style="norms"),
                meta=True,
            )
        )
    return out + [
        Part(f"{prefix}what-to-change", "What to change", tuple(_changes(d))),
        Part(f"{prefix}worst", "Worst conversations", (_worst(rep, prefix),)),
        Part(f"{prefix}strongest", "Strongest findings", tuple(_strongest(rep, prefix))),
    ]


def what_to_change(stored: dict[str, Any]) -> tuple[Block, ...]:
    """*What to change* from the digest a report stored (``Digest.as_dict``, the warehouse's ``report_runs``): the
    explorer's home shows the same blocks as the report."""
    fields = ("key", "current", "recommended", "evidence", "effect")
    d = digests.Digest(
        changes=[digests.Change(*(c.get(k) for k in fields)) for c in stored.get("changes", [])],
        checked=stored.get("tunables_checked", 0),
        tuned_over=stored.get("tuned_over", ""),
        toml=stored.get("toml", ""),
        toml_drift=stored.get("toml_drift", ""),
        command=stored.get("command", ""),
        skipped=stored.get("skipped", ""),
        kept=[
            digests.Change(c.get("key"), c.get("value"), None, c.get("why", ""), "")
            for c in stored.get("left_alone", [])
        ],
    )
    return tuple(_changes(d))


def _changes(d: digests.Digest) -> list[Block]:
    out: list[Block] = []
    if d.skipped:
        out.append(Paragraph(prose(d.skipped[0].upper() + d.skipped[1:] + "."), meta=True))
    elif not d.changes:
        out.append(
            Paragraph(
                (
                    Code("forensics tune"),
                    Prose(f" recommends no change: the {d.checked} tunables it checked hold on {d.tuned_over}."),
                )
            )
        )
    else:
        harness, thresholds = [c for c in d.changes if c.harness], [c for c in d.changes if not c.harness]
        if harness:
            out += [
                Paragraph(
                    (
                        Prose("What "),
                        Code("forensics tune"),
                        Prose(f" recommends for the harness, from {d.tuned_over} (the whole warehouse):"),
                    )
                ),
                _changes_table(harness),
                Lead((Prose("Paste into the harness config:"),), CodeBlock(d.toml, "toml")),
            ]
        else:
            out.append(Paragraph((Prose("No harness key needs a change."),)))
        if thresholds:
            out.append(
                Details(
                    (Prose(thresholds_text(thresholds)),), (_changes_table(thresholds), CodeBlock(d.toml_drift, "toml"))
                )
            )
        out.append(
            Paragraph((Prose("Or run "), Code(d.command), Prose(" to write them all (comments and layout are kept).")))
        )
    if d.kept:  # the tuners' own words, like a section's summary
        out.append(
            Details(
                (Prose("Left alone"),),
                (ItemList(tuple(Item((Prose(line),)) for line in kept_lines(d.kept)), style="norms"),),
                size=f"{len(d.kept)} keys",
            )
        )
    return out


def _changes_table(changes: list[Any]) -> Table:
    return Table(tuple(CHANGE_HEAD), tuple(tuple(change_row(c)) for c in changes), sortable=False, wrap=True)


def _worst(rep: Report, prefix: str) -> Block:
    d = rep.digest
    if not d.worst:
        return Paragraph((Prose("No finding above info in the selection."),))
    return ItemList(
        tuple(
            Item(
                (_who(rep, w.conversation_id), Text(" — " + "; ".join(w.reasons))),
                tuple(
                    finding(rep, r.finding, prefix, f"{prefix}w{i}" if j == 0 else f"{prefix}w{i}-{j}")
                    for j, r in enumerate(w.findings[:3])
                ),
            )
            for i, w in enumerate(d.worst, 1)
        ),
        ordered=True,
    )


def _strongest(rep: Report, prefix: str) -> list[Block]:
    d = rep.digest
    out: list[Block] = []
    if d.norms:
        out.append(
            Lead(
                (Prose("Across this corpus (said once, not per conversation):"),),
                ItemList(tuple(Item((Text(n.text),)) for n in d.norms), style="norms"),
            )
        )
    out.append(Findings(tuple(finding(rep, r.finding, prefix, f"{prefix}s{i}") for i, r in enumerate(d.strongest, 1))))
    if d.kinds:
        out.append(
            Lead(
                (
                    Prose(
                        "How often each kind fires (the trivial reference: marking every conversation would be right "
                        "this often):"
                    ),
                ),
                Table(tuple(KIND_HEAD), tuple(tuple(kind_row(k)) for k in d.kinds), sortable=False),
            )
        )
    return out


# ------------------------------------------------------------------ an analyzer's section
def sections(rep: Report, charts: Charts, prefix: str, chosen: list[Section] | None = None) -> list[Block]:
    return [section(rep, s, charts, prefix) for s in (rep.sections if chosen is None else chosen)]


def section(rep: Report, s: Section, charts: Charts, prefix: str) -> Part:
    """An analyzer's section: its summary, grid, tables, the findings it lists and its charts."""
    hover = {lab.text: lab.full for lab in rep.labels.values()}
    out: list[Block] = []
    if s.summary:
        out.append(Paragraph(prose(s.summary)))
    if s.grid:
        out.append(Table(tuple(s.grid[0]), tuple(map(tuple, s.grid[1:])), hover=hover))
    for t in s.tables:
        if t.empty and t.df.is_empty():  # a sentence, not a header over no rows
            out.append(Paragraph(prose(f"{t.caption}. {t.empty}")))
            continue
        cols, rows, n = df_rows(t.df)
        more = f" (first {MAX_TABLE_ROWS} of {n}; all in metrics.json)" if n > MAX_TABLE_ROWS else ""
        out.append(Table(tuple(cols), tuple(map(tuple, rows)), title=t.caption, note=more, hover=hover))
    if s.findings:
        shown = rep.shown(s)
        cut = (
            prose(f" (the strongest {len(shown)} of {len(s.findings)}; all in metrics.json and `forensics serve`)")
            if len(shown) < len(s.findings)
            else ()
        )
        out.append(
            Findings(
                tuple(finding(rep, f, prefix, f"{prefix}{s.name}-{i}") for i, f in enumerate(shown, 1)),
                (Prose("Findings"), *cut),
            )
        )
    out += _figures(charts, [f"{prefix}{s.name}_{c.name}" for c in s.charts])
    return Part(prefix + s.name, s.title, tuple(out))


def _figures(charts: Charts, names: list[str]) -> list[Block]:
    """The charts drawn of ``names``: none without matplotlib (``_no_charts`` says so once)."""
    return [Figure(n, *charts[n]) for n in names if n in charts]


def _no_charts(charts: Charts) -> list[Block]:
    """One line when the charts could not be drawn (matplotlib, the ``charts`` extra, is not installed)."""
    return [] if charts or draw.available() else [Paragraph((Prose(draw.MISSING),), meta=True)]


def _who(rep: Report, cid: str, text: str | None = None) -> Strong:
    lab = rep.labels.get(cid)
    return Strong(lab.text, lab.full) if lab else Strong(text or cid)


def finding(rep: Report, f: Finding, prefix: str, anchor: str) -> FindingItem:
    return FindingItem(
        severity=f.severity,
        kind=f.kind,
        who=_who(rep, f.conversation_id, rep.finding_label(f)),
        where=positions_text(f.positions),
        summary=f.summary,
        said=f.said,
        rule=f.rule if f.rule and f.rule != f.summary else "",
        standing=standing(f),
        show=show_command(rep, f),
        anchor=anchor,
        evidence=prefix + f.conversation_id,
        positions=tuple(f.positions),
    )
