"""report.html: one self-contained page. A contents bar, the answer first, then the sections; every finding
opens to the messages it cites (embedded once each, as JSON, rendered by the inline script), tables sort on
a click and keep their headers in view, charts are inline SVG. Nothing is fetched from the network."""

from __future__ import annotations

import html
import re
from functools import cache
from importlib.resources import files
from typing import Any

import orjson

from forensics.analyzers import quality
from forensics.analyzers.base import Finding, Section
from forensics.draw import inline
from forensics.kernel.redact import redact
from forensics.report.build import Report
from forensics.report.compare import Comparison
from forensics.report.text import (
    CHANGE_HEAD,
    KIND_HEAD,
    MAX_TABLE_ROWS,
    NUMERIC,
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

e = html.escape
DIGEST_PARTS = (
    ("what-to-change", "What to change"),
    ("worst", "Worst conversations"),
    ("strongest", "Strongest findings"),
)


def authored(text: str) -> str:
    """A line the toolkit wrote (not log text) with its Markdown code spans as <code>: "`--triggers FILE`"."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", e(text))


@cache
def asset(name: str) -> str:
    return (files("forensics.report") / "assets" / name).read_text(encoding="utf-8")


def page(result: Report | Comparison, charts: dict[str, tuple[str, str]]) -> str:
    reports = (
        [("before_", result.before), ("after_", result.after)] if isinstance(result, Comparison) else [("", result)]
    )
    toc = [(f"{p}{a}", f"{r.meta['label'] + ': ' if p else ''}{t}") for p, r in reports for a, t in DIGEST_PARTS]
    toc += [(f"{p}{s.name}", s.title) for p, r in reports for s in r.parts()[1]]
    toc = [(f"{p}{s.name}", s.title) for p, r in reports for s in r.parts()[0]] + toc
    if isinstance(result, Comparison):
        body = [
            "<h1>forensics report: before / after</h1>",
            "<ul>"
            + "".join(
                f"<li>{side}: {e(str(r.meta['label']))} — {r.meta['conversations']} conversations</li>"
                for side, r in (("before", result.before), ("after", result.after))
            )
            + "</ul>",
            table(["metric", "before", "after", "delta"], [[k, fmt(b), fmt(a), fmt(d)] for k, b, a, d in result.rows]),
            _figure(charts, "before_after"),
        ]
        for prefix, rep in reports:
            body += [f"<h1>{e(rep.meta['label'])}</h1>"] + _digest(rep, prefix) + _sections(rep, charts, prefix)
        title = "forensics: before / after"
    else:
        m = result.meta
        body = [
            "<h1>forensics report</h1>",
            f"<p class=meta>{m['conversations']} conversations from <code>{e(source_text(m))}</code> · selection "
            f"{e(selection_text(m))} · config {e(m['config'] or 'built-in defaults')} · forensics "
            f"{e(m['toolkit_version'])} · {e(generated_text(m))}</p>",
        ]
        lead, rest = result.parts()
        body += (
            _sections(result, charts, "", lead)
            + _quality(m)
            + _digest(result, "")
            + _sections(result, charts, "", rest)
        )
        title = "forensics report"
    evidence = {
        f"{p}{cid}": {pos: msg.as_dict() for pos, msg in msgs.items()}
        for p, r in reports
        for cid, msgs in r.evidence.items()
    }
    data = orjson.dumps(evidence, option=orjson.OPT_NON_STR_KEYS).decode().replace("</", "<\\/")
    nav = (
        "<nav class=toc>"
        + "".join(f'<a href="#{e(a)}"{" class=first" if i < 3 else ""}>{e(t)}</a>' for i, (a, t) in enumerate(toc))
        + "</nav>"
    )
    text = redact("\n".join([nav, *body]))
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>"
        f'<meta name=viewport content="width=device-width, initial-scale=1"><style>{asset("report.css")}</style>'
        f'</head><body>{text}<script type="application/json" id=evidence-data>{redact(data)}</script>'
        f"<script>{asset('report.js')}</script></body></html>\n"
    )


def _figure(charts: dict[str, tuple[str, str]], name: str) -> str:
    cap, doc = charts[name]
    return f'<figure id="chart-{e(name)}">{inline(doc)}<figcaption>{e(cap)}</figcaption></figure>'


def _label(rep: Report, cid: str, text: str | None = None) -> str:
    lab = rep.labels.get(cid)
    return f'<b title="{e(lab.full)}">{e(lab.text)}</b>' if lab else f"<b>{e(text or cid)}</b>"


def finding(rep: Report, f: Finding, prefix: str, anchor: str) -> str:
    """One finding: its line, and a <details> that opens to its messages in context."""
    where, show, pos = standing(f), show_command(rep, f), positions_text(f.positions)
    line = (
        f"<span class=sev-{e(f.severity)}>{e(f.severity)}</span> <code>{e(f.kind)}</code> — "
        f"{_label(rep, f.conversation_id, rep.finding_label(f))}{' ' + e(pos) if pos else ''}: {e(f.summary)}"
        + (f" <i>(rule: {e(f.rule)})</i>" if f.rule and f.rule != f.summary else "")
        + (f" <span class=standing>· {e(where)}</span>" if where else "")
    )
    return (
        f'<li><details class=finding id="{e(anchor)}" data-c="{e(prefix + f.conversation_id)}" '
        f'data-p="{",".join(map(str, f.positions))}"><summary>{line}</summary><div class=ev></div>'
        + (f"<p class=meta>In a terminal: <code>{e(show)}</code></p>" if show else "")
        + "</details></li>"
    )


def _quality(meta: dict[str, Any]) -> list[str]:
    """Data quality first: what of the sources' text is gone (redacted at the source, empty, truncated)."""
    if "data_quality" not in meta:
        return []
    text, head, rows = quality.lines(meta["data_quality"])
    return [
        "<section id=data-quality><h2>Data quality</h2>",
        f"<p>{e(text)}</p>",
        *([table(head, rows)] if rows else []),
        "</section>",
    ]


def _digest(rep: Report, prefix: str) -> list[str]:
    d = rep.digest
    out = []
    if d.not_in_use:
        out.append(
            "<p class=meta>Not in use here (their input is absent: no finding, no gated metric, no "
            "recommendation from them):</p><ul class=norms>"
            + "".join(f"<li>{authored(t)}</li>" for t in not_in_use_lines(rep))
            + "</ul>"
        )
    out.append(f"<section id={prefix}what-to-change><h2>What to change</h2>")
    if d.skipped:
        out.append(f"<p class=meta>{e(d.skipped[0].upper() + d.skipped[1:])}.</p>")
    elif not d.changes:
        out.append(
            f"<p><code>forensics tune</code> recommends no change: the {d.checked} tunables it checked hold "
            f"on {e(d.tuned_over)}.</p>"
        )
    else:
        harness, thresholds = [c for c in d.changes if c.harness], [c for c in d.changes if not c.harness]
        if harness:
            out += [
                f"<p>What <code>forensics tune</code> recommends for the harness, from {e(d.tuned_over)} (the "
                "whole warehouse):</p>",
                table(CHANGE_HEAD, [change_row(c) for c in harness], sortable=False, wrap=True),
                f"<p>Paste into the harness config:</p><pre class=toml>{e(d.toml)}</pre>",
            ]
        else:
            out.append("<p>No harness key needs a change.</p>")
        if thresholds:
            out.append(
                f"<details><summary>{e(thresholds_text(thresholds))}</summary>"
                + table(CHANGE_HEAD, [change_row(c) for c in thresholds], sortable=False, wrap=True)
                + f"<pre class=toml>{e(d.toml_drift)}</pre></details>"
            )
        out.append(f"<p>Or run <code>{e(d.command)}</code> to write them all (comments and layout are kept).</p>")
    if d.kept:
        out.append(
            f"<details><summary>Left alone ({len(d.kept)} keys)</summary><ul class=norms>"
            + "".join(f"<li>{e(line)}</li>" for line in kept_lines(d.kept))
            + "</ul></details>"
        )
    out.append("</section>")
    out.append(f"<section id={prefix}worst><h2>Worst conversations</h2>")
    if d.worst:
        out.append(
            "<ol>"
            + "".join(
                f'<li>{_label(rep, w.conversation_id)} — {e("; ".join(w.reasons))} <a href="#{prefix}w{i}">evidence</a>'
                f"<ul class=findings>"
                + "".join(
                    finding(rep, r.finding, prefix, f"{prefix}w{i}" if j == 0 else f"{prefix}w{i}-{j}")
                    for j, r in enumerate(w.findings[:3])
                )
                + "</ul></li>"
                for i, w in enumerate(d.worst, 1)
            )
            + "</ol>"
        )
    else:
        out.append("<p>No finding above info in the selection.</p>")
    out += ["</section>", f"<section id={prefix}strongest><h2>Strongest findings</h2>"]
    if d.norms:
        out.append(
            "<p>Across this corpus (said once, not per conversation):</p><ul class=norms>"
            + "".join(f"<li>{e(n.text)}</li>" for n in d.norms)
            + "</ul>"
        )
    out.append(
        "<ul class=findings>"
        + "".join(finding(rep, r.finding, prefix, f"{prefix}s{i}") for i, r in enumerate(d.strongest, 1))
        + "</ul>"
    )
    if d.kinds:
        out.append(
            "<p>How often each kind fires (the trivial reference: marking every conversation would be right "
            "this often):</p>" + table(KIND_HEAD, [kind_row(k) for k in d.kinds], sortable=False)
        )
    out.append("</section>")
    return out


def _sections(
    rep: Report, charts: dict[str, tuple[str, str]], prefix: str, sections: list[Section] | None = None
) -> list[str]:
    hover = {lab.text: lab.full for lab in rep.labels.values()}
    out: list[str] = []
    for s in rep.sections if sections is None else sections:
        out.append(f"<section id={e(prefix + s.name)}><h2>{e(s.title)}</h2>")
        if s.summary:
            out.append(f"<p>{e(s.summary)}</p>")
        if s.grid:
            out.append(table(s.grid[0], s.grid[1:], hover))
        for t in s.tables:
            cols, rows, n = df_rows(t.df)
            more = f" (first {MAX_TABLE_ROWS} of {n}; all in metrics.json)" if n > MAX_TABLE_ROWS else ""
            out.append(f"<h3>{e(t.caption)}{more}</h3>" + table(cols, rows, hover))
        if s.findings:
            shown = rep.shown(s)
            more = (
                f" (the strongest {len(shown)} of {len(s.findings)}; all in metrics.json and "
                "<code>forensics serve</code>)"
                if len(shown) < len(s.findings)
                else ""
            )
            out.append(
                f"<h3>Findings{more}</h3><ul class=findings>"
                + "".join(finding(rep, f, prefix, f"{prefix}{s.name}-{i}") for i, f in enumerate(shown, 1))
                + "</ul>"
            )
        out += [_figure(charts, f"{prefix}{s.name}_{c.name}") for c in s.charts]
        out.append("</section>")
    return out


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
        attrs = (" class=n" if NUMERIC.fullmatch(c) else "") + (f' title="{e(hover[c])}"' if c in hover else "")
        return f"<td{attrs}>{e(c)}</td>"

    def th(h: str) -> str:
        return f'<th title="{e(hover[h])}">{e(h)}</th>' if h in hover else f"<th>{e(h)}</th>"

    head_html = "".join(th(str(h)) for h in head)
    classes = " ".join(c for c, on in (("sortable", sortable), ("wrap", wrap)) if on)
    attr = f' class="{classes}"' if classes else ""
    return (
        f"<div class=tw><table{attr}><thead><tr>{head_html}</tr></thead><tbody>"
        + "".join("<tr>" + "".join(cell(c) for c in r) + "</tr>" for r in rows)
        + "</tbody></table></div>"
    )
