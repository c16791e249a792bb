"""What an ingest run accounts for: one ``SourceResult`` per file it looked at (a row of ``import_runs`` for each
source), and the run's ``IngestResult``. The counters are changed only through ``SourceResult``'s methods: the
planner (``ingestion.plan``) says what a file is, the loader (``ingestion.load``) what parsing and loading found,
and both keep the rule "rows read = messages imported + records quarantined + records skipped" in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from forensics.kernel import secret_rules
from forensics.kernel.errors import ExitCode

SOURCE = ("imported", "unchanged", "failed")  # the statuses of a source; a side, empty or unrecognised file is none
# the counters a source that fails loses (what it read before failing is not in the warehouse)
COUNTS = (
    "messages_read",
    "messages_imported",
    "messages_unchanged",
    "quarantined",
    "skipped",
    "conversations_new",
    "conversations_updated",
)
TOTALS = (
    "rows_read",
    "messages_read",
    "messages_imported",
    "messages_unchanged",
    "quarantined",
    "skipped",
    "conversations_new",
    "conversations_updated",
    "conversations_unchanged",
)


@dataclass
class SourceResult:
    """What happened to one source in one run (a row of `import_runs`)."""

    path: str
    format: str | None = None
    status: str = "imported"  # imported | unchanged | failed | superseded; no source: side | empty | unrecognised
    source_id: str | None = None
    rows_read: int = 0
    messages_read: int = 0
    messages_imported: int = 0
    messages_unchanged: int = 0
    quarantined: int = 0
    skipped: int = 0  # records that hold no message: events and line types without one (see note)
    conversations_new: int = 0
    conversations_updated: int = 0
    conversations_unchanged: int = 0
    note: str = ""
    error: str = ""

    # what the planner found the file to be

    def identified(self, fmt: str, source_id: str | None = None) -> None:
        """The format it is read as and, once its options are known, its source id."""
        self.format = fmt
        if source_id is not None:
            self.source_id = source_id

    def advise(self, note: str) -> None:
        """A note for the person who ran the import (a file named like another format's, say)."""
        self.note = note

    def superseded(self, note: str) -> None:
        """Not read: a later copy of the same session, read in its place, holds it (``ingestion.checkpoints``)."""
        self.status, self.note = "superseded", note
        for k in COUNTS:
            setattr(self, k, 0)

    def retired(self, n: int) -> None:
        """Superseded after an earlier run stored it: its ``n`` stored conversations were removed."""
        if n:
            self.note += f"; its {n} conversation{'s' * (n > 1)} stored by an earlier run removed"

    def not_a_source(self, status: str, note: str, fmt: str | None = None) -> None:
        """A side file, an empty file or one no format recognised: counted, never a failure."""
        self.status, self.note = status, note
        if fmt is not None:
            self.format = fmt

    def unchanged(self, note: str) -> None:
        """The source as last imported: not re-read."""
        self.status, self.note = "unchanged", note

    def planned(self, rows_read: int, conversations_unchanged: int) -> None:
        """A source read in parts counts its rows, and the conversations it will not re-read, when it plans them."""
        self.rows_read, self.conversations_unchanged = rows_read, conversations_unchanged

    def stored_conversations(self, n: int) -> None:
        """An unchanged source's conversations, all of them left as stored."""
        self.conversations_unchanged = n

    def fail(self, error: str) -> None:
        """The source fails with this one-line error; what it had counted is not in the warehouse."""
        self.status, self.error = "failed", error
        for k in COUNTS:
            setattr(self, k, 0)

    def hint(self, error: str) -> None:
        """A failed source's error, re-worded with the --format to try."""
        self.error = error

    # what parsing and loading found

    def parsed(
        self,
        rows_read: int | None,
        messages_read: int,
        skipped: int,
        notes: Iterable[str],
        quarantined: int,
        imported: int,
    ) -> None:
        """One parse of the source (a file, or a part of a source read in parts: ``rows_read`` None, counted when
        planned): its counts added, its notes after the earlier ones, each once."""
        if rows_read is not None:
            self.rows_read += rows_read
        self.messages_read += messages_read
        self.skipped += skipped
        self.note = "; ".join(dict.fromkeys([*filter(None, [self.note]), *notes]))
        self.quarantined += quarantined
        self.messages_imported += imported

    def conversation(self, stored: str | None, fingerprint: str) -> None:
        """One conversation parsed: new, or as stored (``stored``: its stored fingerprint), or updated."""
        if stored is None:
            self.conversations_new += 1
        elif stored == fingerprint:
            self.conversations_unchanged += 1
        else:
            self.conversations_updated += 1

    def same_messages(self, n: int) -> None:
        """``n`` messages of a re-imported conversation equal the stored ones: unchanged, not imported."""
        self.messages_unchanged += n
        self.messages_imported -= n

    def secrets_kept(self, note: str) -> None:
        """Imported with --keep-secrets: the run's row says so."""
        self.note = "; ".join(filter(None, [self.note, note]))

    def mask(self) -> None:
        """Path, note and error masked, for the run's row and the ingest summary (a key in a file name)."""
        self.path, self.note, self.error = (
            secret_rules.mask(self.path),
            secret_rules.mask(self.note),
            secret_rules.mask(self.error),
        )

    def row(self) -> tuple[Any, ...]:
        """source_id, path, format, status, the counters in ``TOTALS`` order, and the note (or the error)."""
        return (
            self.source_id,
            self.path,
            self.format,
            self.status,
            *(getattr(self, k) for k in TOTALS),
            (self.error if self.status == "failed" else self.note) or None,
        )


@dataclass
class IngestResult:
    """One run: every file it looked at, in order (``sources`` are those of them that are sources)."""

    run_id: str
    db: str
    files: list[SourceResult] = field(default_factory=list)

    @property
    def sources(self) -> list[SourceResult]:
        return [f for f in self.files if f.status in SOURCE]

    @property
    def others(self) -> list[SourceResult]:
        """Side files, empty files and files no format recognised."""
        return [f for f in self.files if f.status not in SOURCE]

    @property
    def exit_code(self) -> ExitCode:
        """OK when no source failed and there was one (or only empty files, or only earlier checkpoints of a session
        the warehouse holds whole: nothing to read is no failure)."""
        sources = self.sources
        failed = sum(s.status == "failed" for s in sources)
        if failed == 0 and (sources or any(f.status in ("empty", "superseded") for f in self.files)):
            return ExitCode.OK
        return ExitCode.USAGE if failed == len(sources) else ExitCode.PARTIAL

    def totals(self) -> dict[str, int]:
        sources = self.sources
        out = {k: sum(getattr(s, k) for s in sources) for k in TOTALS}
        out.update(
            sources=len(sources),
            failed=sum(s.status == "failed" for s in sources),
            files=len(self.files),
            side=sum(f.status == "side" for f in self.files),
            superseded=sum(f.status == "superseded" for f in self.files),
            empty=sum(f.status == "empty" for f in self.files),
            unrecognised=sum(f.status == "unrecognised" for f in self.files),
        )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "db": self.db,
            "totals": self.totals(),
            "sources": [asdict(s) for s in self.sources],
            "others": [asdict(s) for s in self.others],
        }
