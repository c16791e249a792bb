"""The Entire CLI's checkpoints store a growing session again at each checkpoint (``<checkpoint>/<n>/full.jsonl`` with
``metadata.json`` naming the session): one session is read as one conversation, from its longest copy, and every
earlier copy it holds is counted as superseded, with a run row naming the file kept (forensics/ingestion/checkpoints.py,
docs/formats.md#entire-cli-checkpoints). Real files: two checkpoints of a Claude Code 2.1.x session and three of a
Gemini CLI 0.23 session from entireio/cli's checkpoint branch (MIT, fixtures/real/SOURCES.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests import agent_counts as ac
from tests.conftest import FIXTURES, query, run_cli

REAL = FIXTURES / "real"
CLAUDE = REAL / "claude_code/entireio+cli"
GEMINI = REAL / "gemini_cli/entireio+cli"
KEPT = CLAUDE / "9b/3838281539/0/full.jsonl"  # 2026-02-06 06:52, 31 lines
EARLIER = CLAUDE / "9f/e3cfdef74d/0/full.jsonl"  # 06:44, its first 23 lines
GEMINI_KEPT = GEMINI / "ab/2b9748b105/0/full.jsonl"  # the last of three checkpoints, a fresh-labeled conversation
LABELS = FIXTURES.parent / "bench/data/problems-fresh.jsonl"


def _ingest(db: Path, *paths: Path) -> str:
    code, out, err = run_cli("ingest", *map(str, paths), "--db", str(db))
    assert code == 0, err
    return out


def test_a_session_stored_at_two_checkpoints_is_one_conversation_from_the_longer_copy(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    out = _ingest(db, CLAUDE / "9b", CLAUDE / "9f")
    assert "1 sources (0 failed), 1 superseded, 2 not recognised = 4 files: 1 conversations new" in out
    ((path, title),) = query(db, "SELECT s.path, c.title FROM conversations c JOIN sources s USING (source_id)")
    assert (Path(path), title) == (KEPT.resolve(), "hello")
    person = query(
        db, "SELECT position, content FROM messages WHERE origin = 'person' AND position IS NOT NULL ORDER BY seq"
    )
    assert person == [(0, "hello"), (2, "write a file about geese in docs"), (8, "delete that file")]
    assert ac.claude_code_file(KEPT)[:2] == (1, 3)  # the independent counter, on the file kept
    ((status, note, read),) = query(db, "SELECT status, note, rows_read FROM import_runs WHERE status <> 'imported'")
    assert (status, read) == ("superseded", 0)
    assert note == "superseded: an earlier checkpoint of this session, which 9b/3838281539/0/full.jsonl holds whole"


def test_the_fresh_label_on_a_checkpointed_gemini_session_keeps_its_source_id_and_positions(tmp_path: Path) -> None:
    """Three checkpoints of one Gemini CLI session (15, 33 and 3.8 KB, each a whole JSON recording): the longest is
    the fresh-labeled one, and stays where the label says; the two others are superseded (each differs from it in
    ``lastUpdated`` only, besides the turns it lacks)."""
    db = tmp_path / "w.duckdb"
    out = _ingest(db, GEMINI)
    assert "1 sources (0 failed), 2 superseded" in out
    (label,) = [
        json.loads(x)
        for x in LABELS.read_text(encoding="utf-8").splitlines()
        if json.loads(x)["source"] == "gemini_cli/entireio+cli/ab/2b9748b105/0/full.jsonl"
    ]
    ((cid, native, path),) = query(
        db, "SELECT c.conversation_id, c.native_id, s.path FROM conversations c JOIN sources s USING (source_id)"
    )
    assert (native, Path(path)) == (label["native_id"], GEMINI_KEPT.resolve())
    turns = query(
        db,
        "SELECT position, left(content, 80), origin FROM messages WHERE conversation_id = ? AND role = 'user' "
        "AND position IS NOT NULL ORDER BY position",
        [cid],
    )
    assert turns == [(t["position"], t["text_prefix"], t["origin"]) for t in label["user_turns"]]
    notes = [n for (n,) in query(db, "SELECT note FROM import_runs WHERE status = 'superseded' ORDER BY path")]
    assert notes == [
        "superseded: an earlier checkpoint of this session, which ab/2b9748b105/0/full.jsonl holds whole; "
        f"1 of its {n} lines written again differently there"
        for n in (124, 55)
    ]


def test_an_earlier_checkpoint_imported_before_its_later_one_arrived_is_retired(tmp_path: Path) -> None:
    """``ingest`` run as checkpoints accumulate (a hook, ``--watch``): the copy imported first is superseded when the
    longer one comes, and its conversation goes, counted in the run's row; nothing is counted twice."""
    db = tmp_path / "w.duckdb"
    _ingest(db, CLAUDE / "9f")
    assert query(db, "SELECT count(*) FROM conversations") == [(1,)]
    out = _ingest(db, CLAUDE / "9b", CLAUDE / "9f")
    assert "1 superseded" in out
    assert query(db, "SELECT count(*), count(DISTINCT source_id) FROM conversations") == [(1, 1)]
    ((note,),) = query(db, "SELECT note FROM import_runs WHERE status = 'superseded'")
    assert note.endswith("; its 1 conversation stored by an earlier run removed")
    assert query(db, "SELECT count(*) FROM sources") == [(1,)]
    assert query(
        db, "SELECT count(*) FROM messages WHERE conversation_id NOT IN (SELECT conversation_id FROM conversations)"
    ) == [(0,)]
    # the later checkpoint alone, next run: the earlier one stays retired, the kept one unchanged
    out = _ingest(db, CLAUDE / "9b")
    assert "1 unchanged" in out and query(db, "SELECT count(*) FROM conversations") == [(1,)]


def test_checkpoints_that_hold_different_parts_of_a_session_stay_apart(tmp_path: Path) -> None:
    """The Entire CLI's builds of January 2026 stored only the part since the previous checkpoint: two slices of a
    session share no line, neither holds the other, and both are read (a slice is never dropped)."""
    for name, lines in (("a", range(0, 9)), ("b", range(9, 23))):
        folder = tmp_path / "cp" / name / "0"
        folder.mkdir(parents=True)
        shutil.copy(EARLIER, folder / "full.jsonl")
        kept = EARLIER.read_text(encoding="utf-8").splitlines()
        (folder / "full.jsonl").write_text("".join(kept[i] + "\n" for i in lines), encoding="utf-8")
        (folder / "metadata.json").write_text(
            json.dumps({"checkpoint_id": name * 12, "session_id": "2026-02-06-s"}), encoding="utf-8"
        )
    db = tmp_path / "w.duckdb"
    out = _ingest(db, tmp_path / "cp")
    assert "superseded" not in out
    assert query(db, "SELECT count(*) FROM conversations") == [(2,)]


def test_copies_without_the_checkpoint_metadata_are_not_grouped(tmp_path: Path) -> None:
    """Only the Entire CLI's own metadata says two files are one session: without it, each file is read."""
    for name, src in (("a", KEPT), ("b", EARLIER)):
        (tmp_path / name).mkdir()
        shutil.copy(src, tmp_path / name / "full.jsonl")
    db = tmp_path / "w.duckdb"
    assert "superseded" not in _ingest(db, tmp_path / "a", tmp_path / "b")
    assert query(db, "SELECT count(*) FROM conversations") == [(2,)]


def test_an_earlier_checkpoint_named_after_its_later_one_is_stored_exits_0(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _ingest(db, KEPT)
    code, out, err = run_cli("ingest", str(EARLIER), "--db", str(db))  # nothing to read is no failure
    assert (code, err) == (0, "")
    assert "0 sources (0 failed), 1 superseded = 1 files" in out
    assert query(db, "SELECT count(*) FROM conversations") == [(1,)]
