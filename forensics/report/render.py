"""Write a report (or a before/after comparison) as report.md, report.html and metrics.json.

The three formats are renderings of the same sections and digest; nothing here computes a metric. Charts
are SVG files beside report.md and inline SVG inside report.html (no network needed to read it). Every file
is written under a temporary name and renamed into place once all are written: a report killed half-way
leaves the previous report's files whole.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from forensics.analyzers.base import Finding
from forensics.draw import available as charts_available
from forensics.draw import svg
from forensics.kernel.errors import ForensicsError
from forensics.report import figures
from forensics.report.build import METRICS_SCHEMA_VERSION, Report
from forensics.report.compare import Comparison
from forensics.report.text import generated_text
from forensics.text.personal import applies, mask, mask_markup, mask_value

FORMATS = ("md", "html", "json")


def parse_formats(text: str) -> list[str]:
    """The report formats of a comma-separated ``--format`` (md, html, json); a one-line error for any other."""
    fmts = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad or not fmts:
        raise ForensicsError(f"unknown --format {','.join(bad) or text!r}; choose from md,html,json")
    return fmts


def write(
    result: Report | Comparison, out: str | os.PathLike[str], formats: list[str], personal: str = "pages"
) -> list[Path]:
    """The chosen formats under ``out``; personal data masked in report.html unless ``personal`` is "off", and in
    every file when it is "all" (``[redact] personal``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _sweep(out)
    staged: list[tuple[Path, Path]] = []  # (temporary, final)
    everywhere = applies(personal, page=False)

    def stage(p: Path, data: str) -> None:
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        tmp.write_text(data, encoding="utf-8")
        staged.append((tmp, p))

    try:
        if "json" in formats:
            metrics = metrics_document(result)
            stage(
                out / "metrics.json",
                orjson.dumps(
                    mask_value(metrics) if everywhere else metrics, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
                ).decode()
                + "\n",
            )
        charts = draw(result) if {"md", "html"} & set(formats) else {}  # JSON needs no pictures
        if "md" in formats:
            (out / "charts").mkdir(exist_ok=True)
            for name, (_, doc) in charts.items():
                stage(out / "charts" / f"{name}.svg", mask_markup(doc) if everywhere else doc)
        for name, (render, masked) in _renderings(formats, personal, charts).items():
            stage(out / name, _page(result, name, render, masked))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, final in staged:
        tmp.replace(final)
    return [final for _, final in staged if final.parent == out]


def prerender(report: Report, formats: list[str], personal: str = "pages") -> None:
    """The pages ``write`` renders of ``report`` (report.md, report.html, as ``formats`` asks), rendered now and kept in
    ``report.pages`` with the time left as STAMP: ``build_report`` calls this before it keeps the report whole, so the
    pages are kept with it in one write, not by a second open of the warehouse after the files are written
    (``build.cache_pages``). ``write`` then puts the time in; the files are the same bytes."""
    charts = draw(report) if {"md", "html"} & set(formats) else {}
    for name, (render, masked) in _renderings(formats, personal, charts).items():
        _page(report, name, render, masked)


def _renderings(
    formats: list[str], personal: str, charts: dict[str, tuple[str, str]]
) -> dict[str, tuple[Callable[[Any], str], Callable[[str], str] | None]]:
    """File name -> (what renders it of a report, the mask its text goes through, if any), for the pages of
    ``formats``, in the order they are written."""
    from forensics.report.compose import document
    from forensics.report.html import page
    from forensics.report.markdown import markdown

    out: dict[str, tuple[Callable[[Any], str], Callable[[str], str] | None]] = {}
    if "md" in formats:
        out["report.md"] = (lambda r: markdown(document(r, charts)), mask if applies(personal, page=False) else None)
    if "html" in formats:
        out["report.html"] = (
            lambda r: page(document(r, charts)),
            mask_markup if applies(personal, page=True) else None,
        )
    return out


# stands for the report's time in a rendered page, which is kept with the report (``report.kept``) and written
# again by the next report of the same inputs with that report's time in its place: none of the masks changes it
STAMP = "FORENSICS-GENERATED-AT-7f3a9c"
_TIME = re.compile(r"[0-9A-Za-z:+\-(). ]*")  # what ``generated_text`` writes: no markup, nothing to mask


def _page(
    result: Report | Comparison, name: str, render: Callable[[Any], str], masked: Callable[[str], str] | None
) -> str:
    """The file ``name`` of ``result``: its kept page with this time put in, or rendered (and, for a report,
    kept in ``result.pages`` with the time left as STAMP)."""

    def finished(r: Any) -> str:
        text = render(r)
        return masked(text) if masked else text

    now = generated_text(result.meta) if isinstance(result, Report) else ""
    if not isinstance(result, Report) or not _TIME.fullmatch(now):
        return finished(result)
    page = result.pages.get(name)
    if page is None or page.count(STAMP) != 1:
        page = finished(replace(result, meta={**result.meta, "generated_at": STAMP, "kept_from": None}))
        if page.count(STAMP) != 1:  # the stamp did not come through as it went in
            return finished(result)
        result.pages[name] = page
    return page.replace(STAMP, now)


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
        return {
            **result.meta,
            "not_in_use": result.not_in_use,
            **result.digest.as_dict(labels),
            "sections": {s.name: s.metrics for s in result.sections},
            "findings": [_finding_dict(f, s.name, labels) for s in result.sections for f in s.findings],
        }
    return {
        "schema_version": METRICS_SCHEMA_VERSION,
        "toolkit_version": result.after.meta["toolkit_version"],
        "comparison": True,
        "before": metrics_document(result.before),
        "after": metrics_document(result.after),
        "delta": {k: {"before": b, "after": a, "delta": d} for k, b, a, d in result.rows},
    }


def _finding_dict(f: Finding, section: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "section": section,
        "kind": f.kind,
        "severity": f.severity,
        "conversation_id": f.conversation_id,
        "native_id": f.native_id,
        "label": labels.get(f.conversation_id),
        "positions": f.positions,
        "summary": f.summary,
        "rule": f.rule,
        "value": f.value,
        "percentile": f.percentile,
        "among": f.among,
        "said": f.said,
    }


def draw(result: Report | Comparison) -> dict[str, tuple[str, str]]:
    """name -> (title, SVG document), drawn once for both md and html; none without matplotlib (the ``charts``
    extra): the report then says so in one line (``compose.document``)."""
    out: dict[str, tuple[str, str]] = {}
    if not charts_available():
        return out
    if isinstance(result, Comparison):
        out["before_after"] = (
            "Before / after",
            svg(
                figures.before_after(
                    result.rows, result.before.meta["label"] or "before", result.after.meta["label"] or "after"
                )
            ),
        )
        reports = [("before_", result.before), ("after_", result.after)]
    else:
        reports = [("", result)]
    for prefix, rep in reports:
        for s in rep.sections:
            for c in s.charts:
                doc = rep.drawn.get(f"{s.name}_{c.name}")  # drawn already, with the warehouse's kept charts
                out[f"{prefix}{s.name}_{c.name}"] = (c.title, doc or svg(figures.draw(s.name, c.name, c.data)))
    return out
