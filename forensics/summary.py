"""Plain-text run summaries: stable, greppable, the same on a terminal and in CI logs."""
from __future__ import annotations

from forensics.importers.run import IngestResult

ROWS_MAX = 20  # more sources than this: only the failed and noted ones get a row


def format_ingest(r: IngestResult, verbose: bool = False) -> str:
    """One row per source (more than ROWS_MAX: only those that failed or carry a note, unless ``verbose``),
    the notes, then the totals."""
    t = r.totals()
    listed = r.sources if verbose or len(r.sources) <= ROWS_MAX else [
        s for s in r.sources if s.status == "failed" or s.note]
    skipped = t["skipped"] > 0  # the column appears only for formats that skip records (Claude Code)
    head = ("source", "format", "status", "conversations new/upd/same", "messages added", "unchanged", "quarantined",
            *(("skipped",) if skipped else ()))
    rows = [head] + [(s.path, s.format or "?", s.status,
                      f"{s.conversations_new}/{s.conversations_updated}/{s.conversations_unchanged}",
                      str(s.messages_imported), str(s.messages_unchanged), str(s.quarantined),
                      *((str(s.skipped),) if skipped else ())) for s in listed]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in rows]
    notes = [f"note: {s.path}: {s.note}" for s in r.sources if s.note and s.status == "imported"]
    if len(listed) < len(r.sources):
        notes.append(f"({len(r.sources) - len(listed)} sources imported or unchanged without a note not listed; "
                     "--verbose lists every source)")
    total = (f"{t['sources']} sources ({t['failed']} failed): {t['conversations_new']} conversations new, "
             f"{t['conversations_updated']} updated, {t['conversations_unchanged']} unchanged; "
             f"{t['messages_read']} messages read = {t['messages_imported']} added + {t['messages_unchanged']} unchanged"
             f" + {t['quarantined']} quarantined" + (f" + {t['skipped']} skipped" if skipped else "") + f" -> {r.db}")
    return "\n".join(lines + notes + [total])
