"""OpenAI-style chat logs and ShareGPT: detection by content, messages keys, quarantine, growth, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics import ingest
from forensics.formats.openai_chat import parse_file
from tests.conftest import FIXTURES, query, run_cli, run_subprocess

OPENAI = FIXTURES / "openai"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("oa") / "w.duckdb"
    code, out, err = run_cli("ingest", str(OPENAI), "--db", str(db))
    assert code == 0, err
    assert [line.split()[:2] for line in out.splitlines()[1:4]] == [
        [str(OPENAI / "sharegpt.json"), "sharegpt"],
        [str(OPENAI / "traces.jsonl"), "openai"],
        [str(OPENAI / "trajectories.json"), "openai"],
    ]
    return db


def messages(db: Path, native: str) -> list[tuple]:
    return query(
        db,
        "SELECT position, role, content, tool_call_count FROM messages JOIN conversations c "
        "USING (conversation_id) WHERE c.native_id = ? ORDER BY position",
        [native],
    )


def test_traces_jsonl_one_conversation_per_line_with_bad_records_quarantined(warehouse: Path) -> None:
    convs = query(
        warehouse,
        "SELECT native_id, model, message_count, created_at IS NOT NULL FROM conversations c "
        "JOIN sources s USING (source_id) WHERE s.path LIKE '%traces.jsonl' ORDER BY native_id",
    )
    assert convs == [
        ("line 6", None, 2, False),
        ("trace-001", "gpt-4o-2024-08-06", 6, True),
        ("trace-002", "gpt-4o-mini", 8, False),
        ("trace-003", None, 2, False),
    ]
    assert query(warehouse, "SELECT location, reason FROM quarantine ORDER BY location") == [
        ("traces.jsonl:3", "invalid JSON: unexpected end of data: line 1 column 80 (char 79)"),
        ("traces.jsonl:4[1]", "unknown role 'narrator'"),
        ("traces.jsonl:5", "no list of messages under 'messages'"),
    ]
    run = query(
        warehouse,
        "SELECT rows_read, messages_read, messages_imported, quarantined FROM import_runs "
        "WHERE path LIKE '%traces.jsonl'",
    )
    assert run == [(6, 21, 18, 3)]
    assert query(
        warehouse,
        "SELECT position, call_index, name, result_position, result_bytes, is_error "
        "FROM tool_calls JOIN conversations c USING (conversation_id) WHERE c.native_id = "
        "'trace-001' ORDER BY call_index",
    ) == [(2, 0, "read_file", 3, 1080, False), (2, 1, "search", 4, 22, True)]
    # the unknown role was quarantined; positions stay the indices in the record's array
    assert [(p, r) for p, r, _, _ in messages(warehouse, "trace-003")] == [(0, "user"), (2, "assistant")]


def test_trajectories_are_found_under_their_own_key(warehouse: Path, tmp_path: Path) -> None:
    assert query(warehouse, "SELECT options FROM sources WHERE path LIKE '%trajectories.json'") == [
        ('{"messages_key":"traj"}',)
    ]
    assert [(p, r, n) for p, r, _, n in messages(warehouse, "demo__repo-101")] == [
        (0, "system", 0),
        (1, "user", 0),
        (2, "assistant", 1),
        (3, "tool", 0),
        (4, "assistant", 0),
    ]
    copy = tmp_path / "t.json"
    shutil.copy(OPENAI / "trajectories.json", copy)
    db = tmp_path / "w.duckdb"
    assert ingest([copy], db=db).sources[0].messages_imported == 7
    again = ingest([copy], db=db, messages_key="traj").sources[0]  # naming the key found is the same source
    assert again.status == "unchanged"


def test_sharegpt_roles_system_prompt_and_function_calls(warehouse: Path) -> None:
    assert [(p, r, n) for p, r, _, n in messages(warehouse, "sg-2")] == [
        (0, "system", 0),
        (1, "user", 0),
        (2, "assistant", 1),
        (3, "tool", 0),
        (4, "assistant", 0),
    ]
    assert query(
        warehouse,
        "SELECT name, arguments, result_position, result_bytes FROM tool_calls JOIN "
        "conversations c USING (conversation_id) WHERE c.native_id = 'sg-2'",
    ) == [("weather", '{"city":"Paris"}', 3, 14)]
    assert [r for _, r, _, _ in messages(warehouse, "sg-1")] == ["user", "assistant", "user", "assistant"]


def test_appended_records_are_new_and_old_ones_unchanged(tmp_path: Path) -> None:
    src = tmp_path / "traces.jsonl"
    shutil.copy(OPENAI / "traces.jsonl", src)
    db = tmp_path / "w.duckdb"
    ingest([src], db=db)
    with open(src, "a") as f:
        f.write(json.dumps({"id": "trace-005", "messages": [{"role": "user", "content": "one more"}]}) + "\n")
    r = ingest([src], db=db).sources[0]
    assert (r.conversations_new, r.conversations_updated, r.conversations_unchanged) == (1, 0, 4)
    assert (r.messages_imported, r.messages_unchanged, r.quarantined) == (1, 18, 3)
    assert query(db, "SELECT count(*) FROM quarantine") == [(3,)]
    assert query(db, "SELECT count(*) FROM conversations") == [(5,)]


def test_a_json_file_that_is_no_chat_log_is_reported_when_named_and_passed_over_in_a_folder(tmp_path: Path) -> None:
    other = tmp_path / "logs" / "package.json"
    other.parent.mkdir()
    other.write_text(json.dumps({"name": "app", "dependencies": {"x": "1"}}, indent=2))
    shutil.copy(OPENAI / "sharegpt.json", tmp_path / "logs")
    r = run_subprocess("ingest", str(other), "--db", str(tmp_path / "w.duckdb"))
    assert r.returncode == 2
    assert r.stderr.startswith(f"forensics: {other}: format not recognised (by any of the ")
    assert r.stderr.endswith(" formats `forensics formats` lists); check the file, or force one with --format NAME\n")
    folder = ingest([tmp_path / "logs"], db=tmp_path / "w.duckdb")
    assert [(Path(s.path).name, s.format) for s in folder.sources] == [("sharegpt.json", "sharegpt")]


def test_a_wrong_messages_key_or_a_cut_document_fails_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    r = run_subprocess(
        "ingest", str(OPENAI / "traces.jsonl"), "--format", "openai", "--messages-key", "traj", "--db", str(db)
    )
    assert r.returncode == 2
    assert (
        r.stderr.endswith(
            "traces.jsonl: no record holds a list of messages under 'traj'; check the file or pass --format\n"
        )
        and r.stderr.count("\n") == 1
    )
    cut = tmp_path / "cut.json"
    cut.write_bytes((OPENAI / "sharegpt.json").read_bytes()[:300])
    r = run_subprocess("ingest", str(cut), "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.binary(max_size=300))
def test_any_bytes_as_a_record_never_crash_the_parser(tmp_path: Path, line: bytes) -> None:
    src = tmp_path / "p.jsonl"
    good = b'{"id": "a", "messages": [{"role": "user", "content": "hi"}]}\n'
    src.write_bytes(good + line.replace(b"\n", b" ") + b"\n")
    p = parse_file(str(src), "sid", None)
    assert p.rows_read == 2
    assert p.messages_read == p.tables["msg"].height + p.tables["quar"].height
