"""Before/after: two reports side by side, every numeric summary figure with its delta."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from forensics import analyzers
from forensics.config import Config
from forensics.kernel.errors import ForensicsError
from forensics.kernel.selection import Selection
from forensics.report.build import Report, build_report


@dataclass
class Comparison:
    before: Report
    after: Report
    rows: list[tuple[str, float | None, float | None, float | None]] = field(default_factory=list)


def flatten(metrics: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Summary figures only (the maps the analyzers declare, ``Analyzer.maps``, left out): ``section.key.sub`` ->
    number."""
    out: dict[str, float] = {}
    skip = analyzers.maps()
    for k, v in metrics.items():
        if k in skip:
            continue
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, bool):
            out[key] = float(v)
        elif isinstance(v, (int, float)):
            out[key] = float(v)
        elif isinstance(v, dict):
            out.update(flatten(v, key))
    return out


def report_figures(r: Report) -> dict[str, float]:
    """Every summary figure, none of an analyzer (or part) not in use: there is nothing to gate there."""
    out: dict[str, float] = {}
    for s in r.sections:
        out.update(flatten(s.metrics, s.name))
    return {k: v for k, v in out.items() if not idle_prefix(k, r.not_in_use)}


def idle_prefix(key: str, not_in_use: dict[str, str]) -> str | None:
    """The prefix of ``not_in_use`` a metric key falls under (``sentinel`` for ``sentinel.judged_replies``)."""
    return next((p for p in not_in_use if key == p or key.startswith(p + ".")), None)


def compare(before: Report, after: Report) -> Comparison:
    b, a = report_figures(before), report_figures(after)
    rows = []
    for key in sorted(set(b) | set(a), key=lambda k: (k.split(".")[0], k)):
        bv, av = b.get(key), a.get(key)
        rows.append((key, bv, av, None if bv is None or av is None else av - bv))
    return Comparison(before, after, rows)


def parse_selection(text: str, label: str) -> Selection:
    """``"since=2026-06-01 until=2026-06-10 model=glm-5.2"`` -> Selection (repeat a key for several values)."""
    lists: dict[str, list[str]] = {"conversation": [], "model": [], "source": []}
    single: dict[str, str] = {}
    for part in text.split():
        m = re.fullmatch(r"(conversation|model|source|since|until)=(.+)", part)
        if not m:
            raise ForensicsError(
                f"bad selection {part!r}: use key=value with keys conversation, model, source, since, until"
            )
        k, v = m.groups()
        (lists[k].append(v) if k in lists else single.__setitem__(k, v))
    return Selection(
        tuple(lists["conversation"]),
        single.get("since"),
        single.get("until"),
        tuple(lists["model"]),
        tuple(lists["source"]),
        label=label,
    )


def build_comparison(
    db: str | os.PathLike[str],
    cfg: Config,
    base: Selection,
    only: str | None,
    *,
    other_db: str | None = None,
    split_at: str | None = None,
    before: str | None = None,
    after: str | None = None,
    questions: str | None = None,
) -> Comparison:
    """One of: another warehouse (before) vs ``db`` (after); a split in time; two explicit selections."""
    modes = sum(x is not None for x in (other_db, split_at)) + (before is not None or after is not None)
    if modes != 1 or (before is None) != (after is None):
        raise ForensicsError(
            "compare with exactly one of --compare OTHER.duckdb, --split-at TIMESTAMP, "
            "or --before SELECTION --after SELECTION"
        )

    def run(where: str | os.PathLike[str], sel: Selection) -> Report:
        return build_report(where, cfg, sel, only, questions=questions)

    if other_db is not None:
        if not os.path.exists(other_db):
            raise ForensicsError(f"{other_db}: no warehouse to compare with")
        b = run(other_db, Selection(**{**_fields(base), "label": f"before ({other_db})"}))
        a = run(db, Selection(**{**_fields(base), "label": f"after ({db})"}))
    elif split_at is not None:
        b = run(db, Selection(**{**_fields(base), "until": split_at, "label": f"before {split_at}"}))
        a = run(db, Selection(**{**_fields(base), "since": split_at, "label": f"from {split_at}"}))
    else:
        b = run(db, parse_selection(before or "", "before: " + (before or "")))
        a = run(db, parse_selection(after or "", "after: " + (after or "")))
    return compare(b, a)


def _fields(s: Selection) -> dict[str, Any]:
    return {
        "conversations": s.conversations,
        "since": s.since,
        "until": s.until,
        "models": s.models,
        "sources": s.sources,
    }
