"""report.md: the digest first, then each section's summary, tables, findings and charts (SVG files beside it).

Text from the logs (labels, finding texts, table cells, ids in commands) is escaped as Markdown where it is
placed (``forensics.text.escape``), and the finished document has its HTML made inert: a viewer that renders
raw HTML shows a message's ``<script>`` as text."""

from __future__ import annotations

from typing import Any

from forensics.analyzers import quality
from forensics.analyzers.base import Finding, Section
from forensics.kernel.redact import redact
from forensics.report.build import Report
from forensics.report.compare import Comparison
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
from forensics.text.escape import inert_html, markdown_code
from forensics.text.escape import markdown as md


def markdown(result: Report | Comparison, charts: dict[str, tuple[str, str]]) -> str:
    if isinstance(result, Comparison):
        lines = [
            "# forensics report: before / after",
            "",
            f"- before: {md(str(result.before.meta['label']))} — {result.before.meta['conversations']} conversations",
            f"- after: {md(str(result.after.meta['label']))} — {result.after.meta['conversations']} conversations",
            "",
            _md_table(
                ["metric", "before", "after", "delta"], [[k, fmt(b), fmt(a), fmt(d)] for k, b, a, d in result.rows]
            ),
            "",
            "![Before / after](charts/before_after.svg)",
            "",
        ]
        for prefix, rep in (("before_", result.before), ("after_", result.after)):
            lines += (
                [f"# {md(str(rep.meta['label']))}", ""]
                + _md_digest(rep, level=2)
                + _md_sections(rep, charts, prefix, 2)
            )
        return inert_html(redact("\n".join(lines))) + "\n"
    m = result.meta
    lines = [
        "# forensics report",
        "",
        f"{m['conversations']} conversations from {markdown_code(source_text(m))} · selection "
        f"{md(selection_text(m))} · config {md(m['config'] or 'built-in defaults')} · forensics "
        f"{m['toolkit_version']} · {generated_text(m)}",
        "",
    ]
    lead, rest = result.parts()
    lines += _md_sections(result, charts, "", 2, lead) + _md_quality(m)
    return (
        inert_html(redact("\n".join(lines + _md_digest(result, 2) + _md_sections(result, charts, "", 2, rest)))) + "\n"
    )


def _md_quality(meta: dict[str, Any]) -> list[str]:
    """Data quality first: what of the sources' text is gone (redacted at the source, empty, truncated)."""
    if "data_quality" not in meta:
        return []
    text, head, rows = quality.lines(meta["data_quality"])
    return ["## Data quality", "", text, ""] + ([_md_table(head, rows), ""] if rows else [])


def _md_finding(rep: Report, f: Finding) -> str:
    where = standing(f)
    show, who = show_command(rep, f), " ".join(filter(None, [md(rep.finding_label(f)), positions_text(f.positions)]))
    return (
        f"- **{f.severity}** `{f.kind}` — {who}: "
        f"{md(f.summary)}"
        + (f" _(rule: {md(f.rule)})_" if f.rule and f.rule != f.summary else "")
        + (f" · {md(where)}" if where else "")
        + (f" · {markdown_code(show)}" if show else "")
    )


def _md_digest(rep: Report, level: int) -> list[str]:
    h, d = "#" * level, rep.digest
    lines = []
    if d.not_in_use:
        lines += (
            ["Not in use here (their input is absent: no finding, no gated metric, no recommendation from them):", ""]
            + [f"- {t}" for t in not_in_use_lines(rep)]
            + [""]
        )
    lines += [f"{h} What to change", ""]
    if d.skipped:
        lines += [d.skipped[0].upper() + d.skipped[1:] + ".", ""]
    elif not d.changes:
        lines += [
            f"`forensics tune` recommends no change: the {d.checked} tunables it checked hold on {d.tuned_over}.",
            "",
        ]
    else:
        harness, thresholds = [c for c in d.changes if c.harness], [c for c in d.changes if not c.harness]
        lines += (
            [
                f"What `forensics tune` recommends for the harness, from {d.tuned_over} (the whole warehouse):",
                "",
                _md_table(CHANGE_HEAD, [change_row(c) for c in harness]),
                "",
            ]
            if harness
            else ["No harness key needs a change.", ""]
        )
        if harness:
            lines += ["Paste into the harness config:", "", "```toml", d.toml, "```", ""]
        if thresholds:
            lines += [
                f"{thresholds_text(thresholds)}:",
                "",
                _md_table(CHANGE_HEAD, [change_row(c) for c in thresholds]),
                "",
                "```toml",
                d.toml_drift,
                "```",
                "",
            ]
        lines += [f"Or run {markdown_code(d.command)} to write them all (comments and layout are kept).", ""]
    if d.kept:  # the tuners' own words, like a section's summary
        lines += ["Left alone:", ""] + [f"- {line}" for line in kept_lines(d.kept)] + [""]
    lines += [f"{h} Worst conversations", ""]
    lines += [
        f"{i}. **{md(rep.label(w.conversation_id))}** — " + "; ".join(map(md, w.reasons))
        for i, w in enumerate(d.worst, 1)
    ]
    lines += ([""] if d.worst else ["No finding above info in the selection.", ""]) + [f"{h} Strongest findings", ""]
    if d.norms:
        lines += ["Across this corpus (said once, not per conversation):", ""]
        lines += [f"- {md(n.text)}" for n in d.norms] + [""]
    lines += [_md_finding(rep, r.finding) for r in d.strongest] + [""]
    if d.kinds:
        lines += [
            "How often each kind fires (the trivial reference: marking every conversation would be right this often):",
            "",
            _md_table(KIND_HEAD, [kind_row(k) for k in d.kinds]),
            "",
        ]
    return lines


def _md_sections(
    rep: Report, charts: dict[str, tuple[str, str]], prefix: str, level: int, sections: list[Section] | None = None
) -> list[str]:
    h = "#" * level
    lines: list[str] = []
    for s in rep.sections if sections is None else sections:
        lines += [f"{h} {s.title}", ""]
        if s.summary:
            lines += [s.summary, ""]
        if s.grid:
            lines += [_md_table(s.grid[0], s.grid[1:]), ""]
        for t in s.tables:
            cols, rows, n = df_rows(t.df)
            lines += [
                f"**{t.caption}**"
                + (f" (first {MAX_TABLE_ROWS} of {n}; all in metrics.json)" if n > MAX_TABLE_ROWS else ""),
                "",
                _md_table(cols, rows),
                "",
            ]
        if s.findings:
            shown = rep.shown(s)
            more = (
                f" (the strongest {len(shown)} of {len(s.findings)}; all in metrics.json and `forensics serve`)"
                if len(shown) < len(s.findings)
                else ""
            )
            lines += [f"{h}# Findings{more}", ""] + [_md_finding(rep, f) for f in shown] + [""]
        for c in s.charts:
            name = f"{prefix}{s.name}_{c.name}"
            lines += [f"![{charts[name][0]}](charts/{name}.svg)", ""]
    return lines


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(md(str(c)) for c in head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(md(str(c)) for c in r) + " |" for r in rows]
    return "\n".join(out)
