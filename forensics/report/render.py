"""Write a report (or a before/after comparison) as report.md, report.html and metrics.json.

The three formats are renderings of the same sections; nothing here computes a metric. Charts are PNG
files beside report.md and inline data URIs inside report.html (no network needed to read it).
"""
from __future__ import annotations

import base64
import html
import os
import re
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from forensics.analyzers.base import Finding
from forensics.errors import ForensicsError
from forensics.redact import redact
from forensics.report.build import METRICS_SCHEMA_VERSION, Report
from forensics.report.charts import figure, png
from forensics.report.compare import Comparison

FORMATS = ("md", "html", "json")
_NUMERIC = re.compile(r"[-+–]?[\d.,]+%?( / [\d.,]+)*( \(\d+%\))?|[\d/ ]+")  # right-aligned table cells
MAX_TABLE_ROWS = 40


def parse_formats(text: str) -> list[str]:
    fmts = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad or not fmts:
        raise ForensicsError(f"unknown --format {','.join(bad) or text!r}; choose from md,html,json")
    return fmts


def write(result: Report | Comparison, out: str | os.PathLike[str], formats: list[str]) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    charts = _draw(result) if {"md", "html"} & set(formats) else {}  # JSON needs no pictures
    written = []
    if "json" in formats:
        written.append(_write(out / "metrics.json", orjson.dumps(
            metrics_document(result), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode() + "\n"))
    if "md" in formats:
        (out / "charts").mkdir(exist_ok=True)
        for name, (_, data) in charts.items():
            (out / "charts" / f"{name}.png").write_bytes(data)
        written.append(_write(out / "report.md", markdown(result, charts)))
    if "html" in formats:
        written.append(_write(out / "report.html", page(result, charts)))
    return written


def _write(p: Path, text: str) -> Path:
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(p)
    return p


# ------------------------------------------------------------------ data
def metrics_document(result: Report | Comparison) -> dict[str, Any]:
    if isinstance(result, Report):
        return {**result.meta, "sections": {s.name: s.metrics for s in result.sections},
                "findings": [_finding_dict(f, s.name) for s in result.sections for f in s.findings]}
    return {"schema_version": METRICS_SCHEMA_VERSION, "toolkit_version": result.after.meta["toolkit_version"],
            "comparison": True, "before": metrics_document(result.before), "after": metrics_document(result.after),
            "delta": {k: {"before": b, "after": a, "delta": d} for k, b, a, d in result.rows}}


def _finding_dict(f: Finding, section: str) -> dict[str, Any]:
    return {"section": section, "kind": f.kind, "severity": f.severity, "conversation_id": f.conversation_id,
            "native_id": f.native_id, "positions": f.positions, "summary": f.summary, "rule": f.rule}


def _draw(result: Report | Comparison) -> dict[str, tuple[str, bytes]]:
    """name -> (title, PNG bytes), drawn once for both md and html."""
    out: dict[str, tuple[str, bytes]] = {}
    if isinstance(result, Comparison):
        out["before_after"] = ("Before / after", png(_before_after_chart(result)))
        reports = [("before_", result.before), ("after_", result.after)]
    else:
        reports = [("", result)]
    for prefix, rep in reports:
        for s in rep.sections:
            for c in s.charts:
                out[f"{prefix}{s.name}_{c.name}"] = (c.title, png(c.render()))
    return out


BEFORE_AFTER_KEYS = ["baseline.means.empty_assistant_share", "baseline.means.short_user_share",
                     "baseline.means.asst_tool_ratio"]


def _before_after_chart(c: Comparison):  # noqa: ANN202 - matplotlib Figure
    rows = [r for r in c.rows if r[1] is not None and r[2] is not None and (
        r[0] in BEFORE_AFTER_KEYS or r[0].endswith("_share") or r[0].endswith("_rate"))][:12]
    fig = figure(8.0, max(2.5, 0.45 * len(rows) + 1))
    ax = fig.axes[0]
    ys = list(range(len(rows)))
    ax.barh([y + 0.2 for y in ys], [r[1] for r in rows], height=0.4, label=c.before.meta["label"] or "before",
            color="#9e9e9e")
    ax.barh([y - 0.2 for y in ys], [r[2] for r in rows], height=0.4, label=c.after.meta["label"] or "after",
            color="#1f77b4")
    ax.set_yticks(ys, [r[0] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.legend(fontsize=8)
    return fig


def fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def positions_text(pos: list[int]) -> str:
    """[9, 10, 11, 58] -> "[9]–[11], [58]"."""
    if not pos:
        return ""
    pos, runs, start = sorted(set(pos)), [], None
    for i, p in enumerate(pos):
        start = p if start is None else start
        if i + 1 == len(pos) or pos[i + 1] != p + 1:
            runs.append(f"[{start}]" if start == p else f"[{start}]–[{p}]")
            start = None
    return ", ".join(runs)


def _df_rows(df: pl.DataFrame) -> tuple[list[str], list[list[str]], int]:
    rows = [[fmt(v) for v in r] for r in df.head(MAX_TABLE_ROWS).iter_rows()]
    return df.columns, rows, df.height


# ------------------------------------------------------------------ markdown
def markdown(result: Report | Comparison, charts: dict[str, tuple[str, bytes]]) -> str:
    if isinstance(result, Comparison):
        lines = ["# forensics report: before / after", "",
                 f"- before: {result.before.meta['label']} — {result.before.meta['conversations']} conversations",
                 f"- after: {result.after.meta['label']} — {result.after.meta['conversations']} conversations", "",
                 _md_table(["metric", "before", "after", "delta"],
                           [[k, fmt(b), fmt(a), fmt(d)] for k, b, a, d in result.rows]), "",
                 "![Before / after](charts/before_after.png)", ""]
        for prefix, rep in (("before_", result.before), ("after_", result.after)):
            lines += [f"# {rep.meta['label']}", ""] + _md_sections(rep, charts, prefix, level=2)
        return redact("\n".join(lines)) + "\n"
    m = result.meta
    lines = ["# forensics report", "",
             f"{m['conversations']} conversations from `{m['warehouse']}` · selection {_sel(m)} · "
             f"config {m['config'] or 'built-in defaults'} · forensics {m['toolkit_version']} · {m['generated_at']}", ""]
    return redact("\n".join(lines + _md_sections(result, charts, "", level=2))) + "\n"


def _sel(m: dict[str, Any]) -> str:
    sel = m["selection"]
    return "all conversations" if sel.get("all") else ", ".join(f"{k}={v}" for k, v in sel.items())


def _md_sections(rep: Report, charts: dict[str, tuple[str, bytes]], prefix: str, level: int) -> list[str]:
    h = "#" * level
    lines: list[str] = []
    for s in rep.sections:
        lines += [f"{h} {s.title}", ""]
        if s.summary:
            lines += [s.summary, ""]
        if s.grid:
            lines += [_md_table(s.grid[0], s.grid[1:]), ""]
        for t in s.tables:
            cols, rows, n = _df_rows(t.df)
            lines += [f"**{t.caption}**" + (f" (first {MAX_TABLE_ROWS} of {n}; all in metrics.json)" if n > MAX_TABLE_ROWS
                                             else ""), "", _md_table(cols, rows), ""]
        if s.findings:
            lines += [f"{h}# Findings", "", "Open the evidence with `forensics show CONVERSATION --positions P,...`.", ""]
            lines += [f"- **{f.severity}** `{f.kind}` — {f.native_id or f.conversation_id} "
                      f"{positions_text(f.positions)}: {f.summary}" + (f" _(rule: {f.rule})_" if f.rule else "")
                      for f in s.findings]
            lines.append("")
        for c in s.charts:
            name = f"{prefix}{s.name}_{c.name}"
            lines += [f"![{charts[name][0]}](charts/{name}.png)", ""]
    return lines


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    esc = lambda c: str(c).replace("|", "/").replace("\n", " ")  # noqa: E731
    out = ["| " + " | ".join(map(esc, head)) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return "\n".join(out)


# ------------------------------------------------------------------ html
CSS = """body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;color:#222;
padding:0 1rem}h1{font-size:1.6rem}h2{border-bottom:2px solid #eee;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:12.5px;display:block;overflow-x:auto}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;white-space:nowrap}td.n{text-align:right}
th{background:#f6f6f6}td:first-child,th:first-child{text-align:left}.meta{color:#666}
.f-high{color:#b71c1c;font-weight:600}.f-low{color:#e65100}.f-info{color:#555}img{max-width:100%;display:block;
margin:.6rem 0}code{background:#f3f3f3;padding:0 .2rem}li{margin:.2rem 0}"""


def page(result: Report | Comparison, charts: dict[str, tuple[str, bytes]]) -> str:
    e = html.escape
    if isinstance(result, Comparison):
        body = ["<h1>forensics report: before / after</h1>",
                f"<p class=meta>before: {e(result.before.meta['label'])} · after: {e(result.after.meta['label'])}</p>",
                _html_table(["metric", "before", "after", "delta"],
                            [[k, fmt(b), fmt(a), fmt(d)] for k, b, a, d in result.rows]), "@@IMG:before_after@@"]
        for prefix, rep in (("before_", result.before), ("after_", result.after)):
            body += [f"<h1>{e(rep.meta['label'])}</h1>"] + _html_sections(rep, charts, prefix)
        title = "forensics: before / after"
    else:
        m = result.meta
        body = ["<h1>forensics report</h1>",
                f"<p class=meta>{m['conversations']} conversations from <code>{e(m['warehouse'])}</code> · selection "
                f"{e(_sel(m))} · config {e(m['config'] or 'built-in defaults')} · forensics {e(m['toolkit_version'])}"
                f" · {e(m['generated_at'])}</p>"] + _html_sections(result, charts, "")
        title = "forensics report"
    text = redact("\n".join(body))  # masked before the images go in: base64 is never scanned
    for name, (cap, data) in charts.items():
        text = text.replace(f"@@IMG:{name}@@", f'<figure><img alt="{e(cap)}" src="data:image/png;base64,'
                                               f'{base64.b64encode(data).decode()}"><figcaption>{e(cap)}'
                                               "</figcaption></figure>")
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>"
            f"<style>{CSS}</style></head><body>{text}</body></html>\n")


def _html_sections(rep: Report, charts: dict[str, tuple[str, bytes]], prefix: str) -> list[str]:
    e = html.escape
    out: list[str] = []
    for s in rep.sections:
        out.append(f"<section id={e(prefix + s.name)}><h2>{e(s.title)}</h2>")
        if s.summary:
            out.append(f"<p>{e(s.summary)}</p>")
        if s.grid:
            out.append(_html_table(s.grid[0], s.grid[1:]))
        for t in s.tables:
            cols, rows, n = _df_rows(t.df)
            more = f" (first {MAX_TABLE_ROWS} of {n}; all in metrics.json)" if n > MAX_TABLE_ROWS else ""
            out.append(f"<h3>{e(t.caption)}{more}</h3>" + _html_table(cols, rows))
        if s.findings:
            out.append("<h3>Findings</h3><p class=meta>Open the evidence with <code>forensics show CONVERSATION "
                       "--positions P,...</code>.</p><ul>")
            out += [f"<li><span class=f-{e(f.severity)}>{e(f.severity)}</span> <code>{e(f.kind)}</code> — "
                    f"<b>{e(f.native_id or f.conversation_id)}</b> {e(positions_text(f.positions))}: {e(f.summary)}"
                    + (f" <i>(rule: {e(f.rule)})</i>" if f.rule else "") + "</li>" for f in s.findings]
            out.append("</ul>")
        for c in s.charts:
            out.append(f"@@IMG:{prefix}{s.name}_{c.name}@@")
        out.append("</section>")
    return out


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    e = html.escape
    return ("<table><thead><tr>" + "".join(f"<th>{e(str(h))}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td{' class=n' if _NUMERIC.fullmatch(str(c)) else ''}>{e(str(c))}</td>"
                                       for c in r) + "</tr>" for r in rows)
            + "</tbody></table>")
