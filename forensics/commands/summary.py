"""Plain-text run summaries: stable, greppable, the same on a terminal and in CI logs."""

from __future__ import annotations

import os
from textwrap import fill

from forensics.ingestion.accounting import IngestResult, SourceResult
from forensics.kernel.columns import UNBOUNDED, middle, terminal_width

ROWS_MAX = 20  # more files than this: only the failed sources and those imported with a note get a row
STATUS = {"side": "side file", "empty": "empty", "unrecognised": "not recognised", "superseded": "superseded"}
SHORT = {"conversations new/upd/same": "conv. new/upd/same", "messages added": "msgs added"}  # on a narrow terminal


def format_ingest(r: IngestResult, verbose: bool = False) -> str:
    """One row per file the run looked at (more than ROWS_MAX: only the failed sources and those imported with
    a note, unless ``verbose``), the notes, then the totals: every file counted as a source (imported,
    unchanged or failed), a side file read with its main file, empty, or not recognised."""
    t = r.totals()
    listed = r.files if verbose or len(r.files) <= ROWS_MAX else [f for f in r.files if _noted(f)]
    skipped = t["skipped"] > 0  # the column appears only for formats that skip records
    head = (
        "source",
        "format",
        "status",
        "conversations new/upd/same",
        "messages added",
        "unchanged",
        "quarantined",
        *(("skipped",) if skipped else ()),
    )
    cols = terminal_width()  # on a terminal the source gives way (relative, its middle elided) so a row fits it
    base = _base([s.path for s in listed]) if cols < UNBOUNDED else ""  # a pipe or a CI log: whole paths
    rows = [head] + [_row(s, skipped, base) for s in listed]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    room = cols - sum(widths[1:]) - 2 * (len(widths) - 1)  # what the other columns leave the source
    if room < widths[0]:  # the source would lose its middle: two long headers give way first (their figures are short)
        rows[0] = head = tuple(SHORT.get(h, h) for h in head)
        widths[1:] = [max(len(row[i]) for row in rows) for i in range(1, len(head))]
        room = cols - sum(widths[1:]) - 2 * (len(widths) - 1)
    widths[0] = max(len(head[0]), min(widths[0], room))
    lines = (
        [
            "  ".join(
                middle(c, w).ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
            ).rstrip()
            for row in rows
        ]
        if listed
        else []
    )
    if base:
        lines.append(f"(sources under {base}{os.sep})")
    notes = [
        fill(f"note: {_shown(s.path, base)}: {s.note}", cols, subsequent_indent="      ", break_on_hyphens=False)
        for s in listed
        if s.note and s.status not in ("unchanged", "failed")
    ]
    if len(listed) < len(r.files):
        notes.append(
            fill(
                f"({len(r.files) - len(listed)} files imported or unchanged without a note, side files or "
                "files not recognised not listed; --verbose lists every file)",
                cols,
            )
        )
    others = "".join(
        f", {t[k]} {label}"
        for k, label in (
            ("side", "side file" if t["side"] == 1 else "side files"),
            ("superseded", "superseded"),
            ("empty", "empty"),
            ("unrecognised", "not recognised"),
        )
        if t[k]
    )
    total = (
        f"{t['sources']} sources ({t['failed']} failed){others}"
        + (f" = {t['files']} files" if others else "")
        + f": {t['conversations_new']} conversations new, "
        f"{t['conversations_updated']} updated, {t['conversations_unchanged']} unchanged; "
        f"{t['messages_read']} messages read = {t['messages_imported']} added + {t['messages_unchanged']} unchanged"
        f" + {t['quarantined']} quarantined" + (f" + {t['skipped']} skipped" if skipped else "") + f" -> {r.db}"
    )
    # on a terminal the totals wrap at its width like the notes (issue 47: a 120-column terminal); a pipe: one line
    return "\n".join(lines + notes + [fill(total, cols, subsequent_indent="  ", break_on_hyphens=False)])


def _noted(f: SourceResult) -> bool:
    return f.status == "failed" or (f.status == "imported" and bool(f.note))


def _base(paths: list[str]) -> str:
    """The folder every path of the run is under (the argument), shown once; "" when they share none (or mix
    absolute and relative paths)."""
    absolute = {os.path.isabs(p) for p in paths}
    if len(absolute) != 1:
        return ""
    return os.path.commonpath([os.path.dirname(p) for p in paths])


def _shown(path: str, base: str) -> str:
    return os.path.relpath(path, base) if base else path


def _row(s: SourceResult, skipped: bool, base: str = "") -> tuple[str, ...]:
    if s.status not in STATUS:
        counts = (
            f"{s.conversations_new}/{s.conversations_updated}/{s.conversations_unchanged}",
            str(s.messages_imported),
            str(s.messages_unchanged),
            str(s.quarantined),
            *((str(s.skipped),) if skipped else ()),
        )
    else:
        counts = ("", "", "", "", *(("",) if skipped else ()))
    return (_shown(s.path, base), s.format or "?", STATUS.get(s.status, s.status), *counts)
