"""JSONL session trees: main path = generator labels, corrupt lines quarantined by line number, growth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics import ingest
from forensics.formats.jsonl import parse_file
from tests.conftest import FIXTURES, copy_fixture, gen_corpus
from tests.conftest import query as q


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("jsonl") / "sessions"
    gen_corpus("jsonl", str(out), "--sessions", "12", "--seed", "11", "--corrupt-rate", "0.05", "--branch-rate", "0.3")
    (out / "labels.jsonl").rename(out.parent / "labels.jsonl")
    return out


def test_main_paths_and_quarantine_match_generator_labels(corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    r = ingest([corpus], db=db)
    assert r.exit_code == 0
    labels = [json.loads(line) for line in (corpus.parent / "labels.jsonl").read_text().splitlines()]
    assert any(lab["branches"] for lab in labels) and any(lab["corrupt_lines"] for lab in labels)
    for lab in labels:
        cid = q(db, "SELECT conversation_id FROM conversations WHERE native_id = ?", [lab["id"]])[0][0]
        off = {
            int(n)
            for (n,) in q(db, "SELECT native_id FROM messages WHERE conversation_id = ? AND NOT on_main_path", [cid])
        }
        want_off = set()
        for br in lab["branches"]:
            want_off |= set(range(br["abandoned_ids"][0], br["abandoned_ids"][1] + 1))
        assert off == want_off, lab["id"]
        # every labelled final reply sits at its position on the main path, and is a final assistant reply
        for s in lab["sentinel"]:
            role, calls = q(
                db,
                "SELECT role, tool_call_count FROM messages WHERE conversation_id = ? AND position = ?",
                [cid, s["index"]],
            )[0]
            assert (role, calls) == ("assistant", 0)
        for shift in lab["topic_shifts"]:
            assert (
                q(db, "SELECT role FROM messages WHERE conversation_id = ? AND position = ?", [cid, shift])[0][0]
                == "user"
            )
        positions = [
            p
            for (p,) in q(
                db, "SELECT position FROM messages WHERE conversation_id = ? AND on_main_path ORDER BY position", [cid]
            )
        ]
        assert positions == list(range(len(positions)))
        lines = sorted(
            int(loc.rsplit(":", 1)[1])
            for (loc,) in q(db, "SELECT location FROM quarantine WHERE location LIKE ?", [lab["file"] + ":%"])
        )
        assert lines == [c["line"] for c in lab["corrupt_lines"]], lab["id"]
    for s in r.sources:
        assert s.messages_read == s.messages_imported + s.messages_unchanged + s.quarantined
        assert s.rows_read == s.messages_read + 1  # + the header line
    raw_empty = q(db, "SELECT count(*) FROM quarantine WHERE reason = 'empty line' AND raw_bytes = 0")[0][0]
    assert raw_empty == sum(c["kind"] == "empty" for lab in labels for c in lab["corrupt_lines"])


def test_appended_lines_add_only_new_messages(tmp_path: Path) -> None:
    src = copy_fixture("sessions/sess_bd062cd71dda.jsonl", tmp_path)
    db = tmp_path / "w.duckdb"
    first = ingest([src], db=db).sources[0]
    last_id = max(int(n) for (n,) in q(db, "SELECT native_id FROM messages"))
    leaf = q(db, "SELECT native_id, epoch(created_at) FROM messages ORDER BY position DESC LIMIT 1")[0]
    new = [
        {"id": last_id + 1, "parent_id": int(leaf[0]), "timestamp": leaf[1] + 60, "role": "user", "content": "继续"},
        {
            "id": last_id + 2,
            "parent_id": last_id + 1,
            "timestamp": leaf[1] + 90,
            "role": "assistant",
            "content": "好的。",
        },
    ]
    with open(src, "a", encoding="utf-8") as f:
        f.write("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in new))
    again = ingest([src], db=db).sources[0]
    assert (again.conversations_updated, again.messages_imported) == (1, 2)
    assert again.messages_unchanged == first.messages_imported
    assert again.quarantined == first.quarantined  # old junk lines re-read, stored once
    assert q(db, "SELECT count(*) FROM quarantine")[0][0] == first.quarantined
    assert q(db, "SELECT role, content FROM messages ORDER BY position DESC LIMIT 1") == [("assistant", "好的。")]
    assert ingest([src], db=db).sources[0].status == "unchanged"


def test_file_without_header_is_imported_under_its_file_name(tmp_path: Path) -> None:
    src = copy_fixture("sessions/sess_bd062cd71dda.jsonl", tmp_path)
    lines = src.read_bytes().split(b"\n")
    nohead = tmp_path / "no_header.jsonl"
    nohead.write_bytes(b"\n".join(lines[1:]))
    r = ingest([nohead], db=tmp_path / "w.duckdb")
    assert r.exit_code == 0 and "no header line" in r.sources[0].note
    assert q(tmp_path / "w.duckdb", "SELECT native_id, model FROM conversations") == [("no_header", None)]


def test_bad_lines_fixture_quarantines_each_line_with_reason(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    r = ingest([FIXTURES / "bad" / "bad_lines.jsonl"], db=db)
    assert r.exit_code == 0
    got = q(db, "SELECT location, reason FROM quarantine ORDER BY raw_bytes, location")
    assert dict(got) == {
        "bad_lines.jsonl:7": "empty line",
        "bad_lines.jsonl:5": "invalid UTF-8",
        "bad_lines.jsonl:3": got[2][1],
        "bad_lines.jsonl:6": "entry has no id",
        "bad_lines.jsonl:4": "JSON nested too deeply",
    }
    assert got[2][1].startswith("invalid JSON")
    assert q(db, "SELECT raw FROM quarantine WHERE location = 'bad_lines.jsonl:5'")[0][0] == b"\xff\xfe not utf-8 \x80"


def test_fifty_megabyte_line_imports(tmp_path: Path) -> None:
    big = "x" * (50 << 20)
    src = tmp_path / "big.jsonl"
    with open(src, "w") as f:
        f.write(json.dumps({"type": "session", "id": "big"}) + "\n")
        f.write(json.dumps({"id": 1, "parent_id": None, "timestamp": 1, "role": "tool", "content": big}) + "\n")
    r = ingest([src], db=tmp_path / "w.duckdb")
    assert r.exit_code == 0
    assert q(tmp_path / "w.duckdb", "SELECT content_bytes FROM messages") == [(50 << 20,)]


HEADER = b'{"type":"session","id":"prop"}\n{"id":1,"parent_id":null,"timestamp":1,"role":"user","content":"hi"}\n'


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.binary(max_size=300))
def test_any_bytes_as_a_line_never_crash_the_parser(tmp_path: Path, line: bytes) -> None:
    src = tmp_path / "prop.jsonl"
    src.write_bytes(HEADER + line + b"\n")
    p = parse_file(str(src), "sid", "fp")
    n_lines = len((HEADER + line + b"\n").split(b"\n")) - 1
    assert p.rows_read == n_lines
    assert p.messages_read == p.tables["msg"].height + p.tables["quar"].height
