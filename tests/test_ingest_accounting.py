"""A source's counters belong to its ``accounting.SourceResult``: the planner and the loader change them only
through its methods, and the methods keep the run's row exactly as it was written before the split."""

import ast
from dataclasses import fields

from forensics.ingestion.accounting import COUNTS, TOTALS, SourceResult
from forensics.ingestion.load import RUN_COLUMNS
from tests.conftest import ROOT

FIELDS = {f.name for f in fields(SourceResult)}


def test_no_module_of_the_pipeline_writes_a_result_field() -> None:
    """No ``x.result.<field> = ...`` or ``r.<field> += ...`` on a SourceResult field outside accounting.py."""
    writes = []
    for path in sorted((ROOT / "forensics" / "ingestion").glob("*.py")):
        if path.name == "accounting.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AugAssign | ast.AnnAssign)
                else []
            )
            for t in targets:
                for leaf in t.elts if isinstance(t, ast.Tuple) else [t]:
                    if isinstance(leaf, ast.Attribute) and leaf.attr in FIELDS - {"path"}:
                        writes.append(f"{path.name}:{leaf.lineno} .{leaf.attr}")
    assert writes == []


def test_a_failed_source_loses_what_it_counted_but_its_rows_read() -> None:
    r = SourceResult("a.db", "sqlite", source_id="s")
    r.planned(rows_read=10, conversations_unchanged=2)
    r.parsed(None, 8, 1, ["n1"], 1, 7)
    r.conversation(None, "f")
    r.fail("a.db: broken; check the file")
    assert (r.status, r.error, r.rows_read, r.conversations_unchanged) == (
        "failed",
        "a.db: broken; check the file",
        10,
        2,
    )
    assert all(getattr(r, k) == 0 for k in COUNTS)
    assert r.row()[-1] == "a.db: broken; check the file"  # a failed source's row carries its error, not its note


def test_counts_and_notes_add_up_in_the_order_of_the_run_row() -> None:
    r = SourceResult("s.jsonl", "jsonl", source_id="s")
    r.parsed(5, 4, 0, ["skipped 1 line"], 1, 3)
    r.parsed(2, 2, 1, ["skipped 1 line", "b"], 0, 2)  # the note so far is not said twice
    for stored, fp in ((None, "x"), ("x", "x"), ("x", "y")):
        r.conversation(stored, fp)
    r.same_messages(2)
    r.secrets_kept("secrets kept")
    assert r.note == "skipped 1 line; b; secrets kept"
    assert r.row() == (
        "s",
        "s.jsonl",
        "jsonl",
        "imported",
        7,
        6,
        3,
        2,
        1,
        1,
        1,
        1,
        1,
        "skipped 1 line; b; secrets kept",
    )
    # the run row is run_id, the four identity columns, started_at, finished_at, the counters, the note
    assert RUN_COLUMNS == (
        "run_id",
        "source_id",
        "path",
        "format",
        "status",
        "started_at",
        "finished_at",
        *TOTALS,
        "note",
    )


def test_a_chunked_source_counts_its_rows_when_planned_only() -> None:
    r = SourceResult("t.db")
    r.planned(rows_read=100, conversations_unchanged=0)
    r.parsed(None, 50, 0, [], 0, 50)
    assert (r.rows_read, r.messages_read) == (100, 50)
