"""The words and numbers every rendering of a report shares (report.md, report.html and `forensics serve`): how a
value, a run of positions, a finding's standing and its `forensics show` line are written. No markup here: each
medium escapes what it takes from these."""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from forensics.analyzers.base import Finding
from forensics.kernel.columns import aligned
from forensics.report.build import Report

MAX_TABLE_ROWS = 40


def fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def kind_words(kind: str) -> str:
    """A finding kind as a reader says it (``tool_result_crowding`` -> "tool result crowding"); the identifier
    itself (what ``--kind`` and metrics.json take) stays one click away, beside the rule."""
    return kind.replace("_", " ")


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


def source_text(m: dict[str, Any]) -> str:
    """What the report read: the warehouse, or the lake and the engine that read it."""
    return m["warehouse"] if "warehouse" in m else f"{m['lake']} (on Spark, {m['spark_master']})"


def generated_text(m: dict[str, Any]) -> str:
    """When the report was written, and, for a report kept whole (``report.kept``), when it was computed."""
    kept = m.get("kept_from")
    return str(m["generated_at"]) + (
        f" (kept whole from the report of {kept}: nothing it reads changed)" if kept else ""
    )


CHANGE_HEAD = ["key", "now", "recommended", "evidence", "expected effect"]


def change_row(c: Any) -> list[str]:
    return [c.key, repr(c.current), repr(c.recommended), c.evidence, c.effect or "–"]


def thresholds_text(changes: list[Any]) -> str:
    """The line before the changes of this tool's own detector thresholds (``Analyzer.detector_sections``)."""
    from forensics import analyzers

    how = analyzers.detector_sections()
    sections = list(dict.fromkeys(c.key.partition(".")[0] for c in changes))
    return (
        f"And {len(changes)} detector thresholds ({', '.join(f'[{s}]' for s in sections)}: what forensics flags, "
        f"not what the harness does) {'; '.join(how[s] for s in sections)}"
    )


NUMERIC = re.compile(r"[-+–]?[\d.,]+%?( / [\d.,]+)*( \(\d+%\))?|[\d/ ]+")  # right-aligned table cells


def not_in_use_lines(rep: Report) -> list[str]:
    """One line per analyzer (or part of one) that had nothing to read: "Sentinel compliance: no canary ..."."""
    titles = {s.name: s.title for s in rep.sections}
    parts: dict[tuple[str, str], list[str]] = {}  # (analyzer, why) -> its parts not in use for that reason
    for key, why in rep.digest.not_in_use.items():
        name, _, part = key.partition(".")
        parts.setdefault((name, why), []).extend([part] if part else [])
    out = []
    for (name, why), ps in parts.items():
        which = f" ({', '.join(ps)})" if ps else ""
        out.append(f"{titles.get(name, name)}{which}: {why}")
    return out


def kept_line(c: Any) -> str:
    """A key tune left alone: "compaction.keep_recent (10): no conversation from the harness this setting belongs to"."""
    return f"{c.key} ({c.current!r}): {c.evidence}"


def kept_lines(kept: list[Any]) -> list[str]:
    """The keys tune left alone, one line each, except a section of detector thresholds left alone for one reason
    (a warehouse of several kinds of agent): one line for them all."""
    out: list[str] = []
    grouped: dict[tuple[str, str], list[Any]] = {}
    for c in kept:
        if c.harness:
            out.append(kept_line(c))
        else:
            grouped.setdefault((c.key.partition(".")[0], c.evidence), []).append(c)
    for (section, why), cs in grouped.items():
        keys = ", ".join(f"{c.key.removeprefix(section + '.')} ({c.current!r})" for c in cs)
        out.append(kept_line(cs[0]) if len(cs) == 1 else f"[{section}] {keys}: {why}")
    return out


KIND_HEAD = ["kind", "analyzer", "findings", "conversations it fires on", "share of conversations"]


def kind_row(k: Any) -> list[str]:
    return [k.kind, k.section, str(k.findings), str(k.conversations), "–" if k.share is None else f"{k.share:.0%}"]


def usage_text(shown: pl.DataFrame, width: int | None = None) -> str:
    """`forensics usage` in the terminal: the usage analyzer's display rows as aligned columns within ``width``
    (the terminal's): the grouping columns (model, project, ...) lose their middles, the figures never."""
    if shown.is_empty():
        return "no conversation"
    figures = {"runs", "input", "cached", "cache write", "output", "cost USD", "tool errors", "compactions", "success"}
    short = {
        "cost USD": "USD",
        "cache write": "cache wr.",
        "compactions": "compact.",
    }  # headers no wider than their figures, for the keys' room
    empty = [c for c in ("compactions", "success") if shown[c].cast(pl.Utf8).is_in(["0", "–"]).all()]
    shown = shown.drop(empty)  # a figure no row has (no compaction, no graded run) leaves the keys its room
    rows = [[short.get(c, c) for c in shown.columns]] + [[str(v) for v in r] for r in shown.iter_rows()]
    return aligned(rows, width, elide=[i for i, c in enumerate(shown.columns) if c not in figures])  # keys give way
