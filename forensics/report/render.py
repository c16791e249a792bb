"""Write a report (or a before/after comparison) as report.md, report.html and metrics.json.

The three formats are renderings of the same sections and digest; nothing here computes a metric. Charts
are SVG files beside report.md and inline SVG inside report.html (no network needed to read it). Every file
is written under a temporary name and renamed into place once all are written: a report killed half-way
leaves the previous report's files whole.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from forensics.analyzers.base import Finding
from forensics.errors import ForensicsError
from forensics.redact import redact
from forensics.report import figures
from forensics.report.build import METRICS_SCHEMA_VERSION, Report
from forensics.report.charts import svg
from forensics.report.compare import Comparison

FORMATS = ("md", "html", "json")
MAX_TABLE_ROWS = 40


def parse_formats(text: str) -> list[str]:
    fmts = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad or not fmts:
        raise ForensicsError(f"unknown --format {','.join(bad) or text!r}; choose from md,html,json")
    return fmts


def write(result: Report | Comparison, out: str | os.PathLike[str], formats: list[str]) -> list[Path]:
    from forensics.report.html import page

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _sweep(out)
    staged: list[tuple[Path, Path]] = []  # (temporary, final)

    def stage(p: Path, data: str) -> None:
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        tmp.write_text(data, encoding="utf-8")
        staged.append((tmp, p))

    try:
        if "json" in formats:
            stage(out / "metrics.json", orjson.dumps(metrics_document(result), option=orjson.OPT_INDENT_2
                                                     | orjson.OPT_NON_STR_KEYS).decode() + "\n")
        charts = draw(result) if {"md", "html"} & set(formats) else {}  # JSON needs no pictures
        if "md" in formats:
            (out / "charts").mkdir(exist_ok=True)
            for name, (_, doc) in charts.items():
                stage(out / "charts" / f"{name}.svg", doc)
            stage(out / "report.md", markdown(result, charts))
        if "html" in formats:
            stage(out / "report.html", page(result, charts))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, final in staged:
        tmp.replace(final)
    return [final for _, final in staged if final.parent == out]


def _sweep(out: Path) -> None:
    """Remove what a killed report left staged (its process is gone)."""
    for tmp in [*out.glob(".*.tmp"), *out.glob("charts/.*.tmp")]:
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ------------------------------------------------------------------ data
def metrics_document(result: Report | Comparison) -> dict[str, Any]:
    if isinstance(result, Report):
        labels = {cid: lab.text for cid, lab in result.labels.items()}
        return {**result.meta, **result.digest.as_dict(labels),
                "sections": {s.name: s.metrics for s in result.sections},
                "findings": [_finding_dict(f, s.name, labels) for s in result.sections for f in s.findings]}
    return {"schema_version": METRICS_SCHEMA_VERSION, "toolkit_version": result.after.meta["toolkit_version"],
            "comparison": True, "before": metrics_document(result.before), "after": metrics_document(result.after),
            "delta": {k: {"before": b, "after": a, "delta": d} for k, b, a, d in result.rows}}


def _finding_dict(f: Finding, section: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"section": section, "kind": f.kind, "severity": f.severity, "conversation_id": f.conversation_id,
            "native_id": f.native_id, "label": labels.get(f.conversation_id), "positions": f.positions,
            "summary": f.summary, "rule": f.rule, "value": f.value, "percentile": f.percentile, "among": f.among}


def draw(result: Report | Comparison) -> dict[str, tuple[str, str]]:
    """name -> (title, SVG document), drawn once for both md and html."""
    out: dict[str, tuple[str, str]] = {}
    if isinstance(result, Comparison):
        out["before_after"] = ("Before / after", svg(figures.before_after(
            result.rows, result.before.meta["label"] or "before", result.after.meta["label"] or "after")))
        reports = [("before_", result.before), ("after_", result.after)]
    else:
        reports = [("", result)]
    for prefix, rep in reports:
        for s in rep.sections:
            for c in s.charts:
                out[f"{prefix}{s.name}_{c.name}"] = (c.title, svg(figures.draw(s.name, c.name, c.data)))
    return out


def fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def positions_text(pos: list[int]) -> str:
    """[9, 10, 11, 58] -> "[9]–[11], [58]"."""
    return ", ".join(f"[{a}]" if a == b else f"[{a}]–[{b}]" for a, b in runs(pos))


def runs(pos: list[int]) -> list[tuple[int, int]]:
    """[9, 10, 11, 58] -> [(9, 11), (58, 58)]."""
    out: list[tuple[int, int]] = []
    for p in sorted(set(pos)):
        if out and p == out[-1][1] + 1:
            out[-1] = (out[-1][0], p)
        else:
            out.append((p, p))
    return out


def standing(f: Finding) -> str:
    """Where the finding lies in its corpus: "further out than 99% of 450 requests with tool calls"."""
    if f.percentile is None:
        return ""
    return f"further out than {int(f.percentile)}% of {f.among or 'the corpus'}"


def show_command(rep: Report, f: Finding) -> str:
    """The `forensics show` line that prints a finding's messages in a terminal ("" without a conversation)."""
    if not f.conversation_id:
        return ""
    who = f.native_id if f.native_id and rep.label(f.conversation_id) == f.native_id else f.conversation_id
    spans = ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs(f.positions))
    return f"forensics show {who} --positions {spans}" if spans else f"forensics show {who}"


def df_rows(df: pl.DataFrame) -> tuple[list[str], list[list[str]], int]:
    rows = [[fmt(v) for v in r] for r in df.head(MAX_TABLE_ROWS).iter_rows()]
    return df.columns, rows, df.height


def selection_text(m: dict[str, Any]) -> str:
    sel = m["selection"]
    return "all conversations" if sel.get("all") else ", ".join(f"{k}={v}" for k, v in sel.items())


# ------------------------------------------------------------------ markdown
def markdown(result: Report | Comparison, charts: dict[str, tuple[str, str]]) -> str:
    if isinstance(result, Comparison):
        lines = ["# forensics report: before / after", "",
                 f"- before: {result.before.meta['label']} — {result.before.meta['conversations']} conversations",
                 f"- after: {result.after.meta['label']} — {result.after.meta['conversations']} conversations", "",
                 _md_table(["metric", "before", "after", "delta"],
                           [[k, fmt(b), fmt(a), fmt(d)] for k, b, a, d in result.rows]), "",
                 "![Before / after](charts/before_after.svg)", ""]
        for prefix, rep in (("before_", result.before), ("after_", result.after)):
            lines += [f"# {rep.meta['label']}", ""] + _md_digest(rep, level=2) + _md_sections(rep, charts, prefix, 2)
        return redact("\n".join(lines)) + "\n"
    m = result.meta
    lines = ["# forensics report", "",
             f"{m['conversations']} conversations from `{m['warehouse']}` · selection {selection_text(m)} · "
             f"config {m['config'] or 'built-in defaults'} · forensics {m['toolkit_version']} · {m['generated_at']}", ""]
    return redact("\n".join(lines + _md_digest(result, 2) + _md_sections(result, charts, "", level=2))) + "\n"


CHANGE_HEAD = ["key", "now", "recommended", "evidence", "expected effect"]


def change_row(c: Any) -> list[str]:
    return [c.key, repr(c.current), repr(c.recommended), c.evidence, c.effect or "–"]


def drift_text(drift: list[Any]) -> str:
    return (f"And {len(drift)} detector thresholds ([drift]: what forensics flags, not what the harness does) "
            "fitted to this corpus so that high flags its worst 10 %")


def _md_finding(rep: Report, f: Finding) -> str:
    where = standing(f)
    show, who = show_command(rep, f), " ".join(filter(None, [rep.finding_label(f), positions_text(f.positions)]))
    return (f"- **{f.severity}** `{f.kind}` — {who}: "
            f"{f.summary}" + (f" _(rule: {f.rule})_" if f.rule and f.rule != f.summary else "")
            + (f" · {where}" if where else "") + (f" · `{show}`" if show else ""))


def _md_digest(rep: Report, level: int) -> list[str]:
    h, d = "#" * level, rep.digest
    lines = [f"{h} What to change", ""]
    if d.skipped:
        lines += [d.skipped[0].upper() + d.skipped[1:] + ".", ""]
    elif not d.changes:
        lines += [f"`forensics tune` recommends no change: the {d.checked} tunables it checked hold on "
                  f"{d.tuned_over}.", ""]
    else:
        harness, drift = [c for c in d.changes if c.harness], [c for c in d.changes if not c.harness]
        lines += [f"What `forensics tune` recommends, from {d.tuned_over} (the whole warehouse):", "",
                  _md_table(CHANGE_HEAD, [change_row(c) for c in harness]), ""] if harness else [
                      "No harness key needs a change.", ""]
        if harness:
            lines += ["Paste into the harness config:", "", "```toml", d.toml, "```", ""]
        if drift:
            lines += [f"{drift_text(drift)}:", "", _md_table(CHANGE_HEAD, [change_row(c) for c in drift]), "",
                      "```toml", d.toml_drift, "```", ""]
        lines += [f"Or run `{d.command}` to write them all (comments and layout are kept).", ""]
    lines += [f"{h} Worst conversations", ""]
    lines += [f"{i}. **{rep.label(w.conversation_id)}** — " + "; ".join(w.reasons) for i, w in enumerate(d.worst, 1)]
    lines += ([""] if d.worst else ["No finding above info in the selection.", ""]) + [f"{h} Strongest findings", ""]
    if d.norms:
        lines += ["Across this corpus (said once, not per conversation):", ""]
        lines += [f"- {n.text}" for n in d.norms] + [""]
    lines += [_md_finding(rep, r.finding) for r in d.strongest] + [""]
    return lines


def _md_sections(rep: Report, charts: dict[str, tuple[str, str]], prefix: str, level: int) -> list[str]:
    h = "#" * level
    lines: list[str] = []
    for s in rep.sections:
        lines += [f"{h} {s.title}", ""]
        if s.summary:
            lines += [s.summary, ""]
        if s.grid:
            lines += [_md_table(s.grid[0], s.grid[1:]), ""]
        for t in s.tables:
            cols, rows, n = df_rows(t.df)
            lines += [f"**{t.caption}**" + (f" (first {MAX_TABLE_ROWS} of {n}; all in metrics.json)" if n > MAX_TABLE_ROWS
                                             else ""), "", _md_table(cols, rows), ""]
        if s.findings:
            shown = rep.shown(s)
            more = f" (the strongest {len(shown)} of {len(s.findings)}; all in metrics.json)" if len(shown) < len(
                s.findings) else ""
            lines += [f"{h}# Findings{more}", ""] + [_md_finding(rep, f) for f in shown] + [""]
        for c in s.charts:
            name = f"{prefix}{s.name}_{c.name}"
            lines += [f"![{charts[name][0]}](charts/{name}.svg)", ""]
    return lines


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    esc = lambda c: str(c).replace("|", "/").replace("\n", " ")  # noqa: E731
    out = ["| " + " | ".join(map(esc, head)) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return "\n".join(out)


NUMERIC = re.compile(r"[-+–]?[\d.,]+%?( / [\d.,]+)*( \(\d+%\))?|[\d/ ]+")  # right-aligned table cells
