"""Claude Code transcripts: split responses merged, usage once per response, lineage, events, growth, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from forensics import ingest
from tests.conftest import FIXTURES, load_script, query, run_cli, run_subprocess

PROJECTS = FIXTURES / "claude_code"
MAIN = "144a6dea-b560-5e09-ae81-65ecd1f3a9df"  # everything: split responses, compaction, sub-agent, oddities
OLD = "ea8b7b52-b4d7-5eaf-bf44-aa066aa95e76"  # an older version: the sidechain inside the session file
PLAIN = "429a57e4-6e34-5d68-8372-f06ad41124c5"
MAIN_FILE = PROJECTS / "-home-dev-webapp" / f"{MAIN}.jsonl"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("cc") / "w.duckdb"
    code, out, err = run_cli("ingest", str(PROJECTS), "--db", str(db))
    assert code == 0, err
    return db


def conv(db: Path, native: str) -> str:
    return query(db, "SELECT conversation_id FROM conversations WHERE native_id = ?", [native])[0][0]


def test_projects_folder_imports_without_flags_and_counts_balance(warehouse: Path) -> None:
    assert query(warehouse, "SELECT DISTINCT format FROM sources") == [("claude-code",)]
    runs = query(
        warehouse,
        "SELECT path, rows_read, messages_read, messages_imported, quarantined, skipped FROM import_runs ORDER BY path",
    )
    got = {Path(p).name: rest for p, *rest in runs}
    assert got == {
        f"{PLAIN}.jsonl": [24, 17, 13, 0, 4],
        "agent-fc3d0996.jsonl": [6, 5, 5, 0, 0],
        f"{MAIN}.jsonl": [31, 26, 19, 1, 6],
        f"{OLD}.jsonl": [9, 8, 8, 0, 0],
    }
    for path, lines, read, imported, quarantined, skipped in runs:
        assert lines == len(Path(path).read_bytes().splitlines())
        assert read == imported + quarantined + skipped
    assert query(warehouse, "SELECT count(*), sum(tool_call_count) FROM messages") == [(45, 15)]
    assert query(warehouse, "SELECT count(*), count(result_position) FROM tool_calls") == [(15, 15)]


def test_split_response_is_one_assistant_turn_with_parallel_calls(warehouse: Path) -> None:
    cid = conv(warehouse, MAIN)
    role, content, calls = query(
        warehouse,
        "SELECT role, content, tool_call_count FROM messages WHERE conversation_id = ? AND position = 1",
        [cid],
    )[0]
    assert (role, calls) == ("assistant", 3)  # five lines: thinking, text, three tool_use
    assert content == "I'll look at the test, the auth module and where login is defined."
    links = query(
        warehouse,
        "SELECT call_index, name, result_position, result_bytes, is_error FROM tool_calls "
        "WHERE conversation_id = ? AND position = 1 ORDER BY call_index",
        [cid],
    )
    # the second Read's output was stored beside the session: its 12,000 bytes count, not the inline preview
    assert links == [(0, "Read", 2, 2500, False), (1, "Read", 3, 12000, False), (2, "Grep", 4, 34, True)]
    assert query(
        warehouse, "SELECT content_bytes < 12000 FROM messages WHERE conversation_id = ? AND position = 3", [cid]
    ) == [(True,)]


def test_usage_is_counted_once_per_response(warehouse: Path) -> None:
    kinds = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    seen: dict[tuple, dict[str, int]] = {}
    for f in sorted(PROJECTS.rglob("*.jsonl")):  # once per message.id + requestId, each count the largest of its
        for line in f.read_text().splitlines():  # lines (they are written as the response streams)
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            usage = rec.get("message", {}).get("usage") if isinstance(rec.get("message"), dict) else None
            key = (rec.get("message", {}).get("id"), rec.get("requestId"))
            if usage:
                seen[key] = {k: max(usage[k], seen.get(key, usage)[k]) for k in kinds}
    want = [sum(u[k] for u in seen.values()) for k in kinds]
    got = query(
        warehouse,
        "SELECT count(*), sum(input_tokens), sum(output_tokens), sum(cache_creation_input_tokens), "
        "sum(cache_read_input_tokens) FROM message_usage",
    )[0]
    assert got == (len(seen), *want) == (20, 96, 1738, 9350, 213300)
    assert query(
        warehouse,
        "SELECT count(*) FROM message_usage u JOIN messages m USING (conversation_id, seq) "
        "WHERE m.role != 'assistant' OR u.position IS DISTINCT FROM m.position",
    ) == [(0,)]


def test_main_path_drops_the_edited_prompt_and_crosses_the_compaction(warehouse: Path) -> None:
    cid = conv(warehouse, MAIN)
    positions = [
        p
        for (p,) in query(
            warehouse, "SELECT position FROM messages WHERE conversation_id = ? AND on_main_path ORDER BY seq", [cid]
        )
    ]
    assert positions == list(range(17))
    assert query(
        warehouse, "SELECT content FROM messages WHERE conversation_id = ? AND NOT on_main_path ORDER BY seq", [cid]
    ) == [("also run the whole suite",), ("Running the suite now.",)]
    events = query(
        warehouse,
        "SELECT kind, seq, position, trigger, pre_tokens, post_tokens FROM events "
        "WHERE conversation_id = ? AND kind <> 'reasoning' ORDER BY seq",
        [cid],
    )
    assert events == [("summary", 0, 0, None, None, None), ("compaction", 14, 12, "auto", 155000, 4200)]
    after = query(warehouse, "SELECT role, content FROM messages WHERE conversation_id = ? AND position = 12", [cid])
    assert after[0][0] == "user" and after[0][1].startswith("This session is being continued")
    assert query(warehouse, "SELECT title FROM conversations WHERE conversation_id = ?", [cid]) == [("Fix login test",)]


def test_subagent_file_and_in_file_sidechain_are_conversations_linked_to_their_session(warehouse: Path) -> None:
    links = dict(
        query(
            warehouse,
            "SELECT c.native_id, p.native_id FROM conversations c "
            "JOIN conversations p ON p.conversation_id = c.parent_conversation_id",
        )
    )
    assert links == {"agent-fc3d0996": MAIN, f"{OLD}:sidechain:82115abe-4484-5a3a-a21e-7b6ff904752b": OLD}
    sub = conv(warehouse, "agent-fc3d0996")
    assert query(
        warehouse,
        "SELECT position, role, tool_call_count FROM messages WHERE conversation_id = ? ORDER BY position",
        [sub],
    ) == [(0, "user", 0), (1, "assistant", 2), (2, "tool", 0), (3, "tool", 0), (4, "assistant", 0)]
    assert query(warehouse, "SELECT count(*) FROM messages WHERE conversation_id = ?", [conv(warehouse, OLD)]) == [(4,)]


def test_unknown_types_and_fields_are_skipped_and_counted_in_the_note(warehouse: Path) -> None:
    note = query(warehouse, "SELECT note FROM import_runs WHERE path LIKE ?", [f"%{MAIN}.jsonl"])[0][0]
    assert note == (
        "5 continuation lines of split responses merged; events: compaction x1, summary x1; "
        "skipped line types: file-history-snapshot x1, progress x1, system:turn_duration x1, "
        "x-telemetry x1; unknown fields: futureField x1, payload x1"
    )
    assert query(warehouse, "SELECT location, reason FROM quarantine") == [
        (f"{MAIN}.jsonl:31", "invalid JSON: unexpected end of data: line 1 column 97 (char 96)")
    ]


def test_a_grown_session_adds_only_its_new_messages(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(PROJECTS, projects)
    db = tmp_path / "w.duckdb"
    ingest([projects], db=db)
    session = projects / "-home-dev-api" / f"{PLAIN}.jsonl"
    lines = [json.loads(x) for x in session.read_text().splitlines()]
    tip = lines[-2]  # the last reply (the last line is a turn_duration note)
    base = {k: tip[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")}
    usage = {"input_tokens": 5, "output_tokens": 11, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 7}
    new = [
        dict(
            base,
            type="user",
            uuid="u-new-1",
            parentUuid=lines[-1]["uuid"],
            timestamp="2025-09-03T10:00:00.000Z",
            message={"role": "user", "content": "and the README?"},
        )
    ]
    for i, block in enumerate(
        [
            {"type": "text", "text": "Updating it."},
            {"type": "tool_use", "id": "toolu_new", "name": "Edit", "input": {"file_path": "R"}},
        ]
    ):
        new.append(
            dict(
                base,
                type="assistant",
                uuid=f"a-new-{i}",
                parentUuid=new[-1]["uuid"],
                requestId="req_new",
                timestamp=f"2025-09-03T10:00:0{i + 1}.000Z",
                message={"id": "msg_new", "role": "assistant", "model": "m", "content": [block], "usage": usage},
            )
        )
    new.append(
        dict(
            base,
            type="user",
            uuid="u-new-2",
            parentUuid="a-new-1",
            timestamp="2025-09-03T10:00:05.000Z",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_new", "content": "updated"}],
            },
        )
    )
    with open(session, "a") as f:
        f.write("".join(json.dumps(x) + "\n" for x in new))
    again = {Path(s.path).name: s for s in ingest([projects], db=db).sources}
    grown = again[session.name]
    assert (grown.status, grown.conversations_updated, grown.messages_imported, grown.messages_unchanged) == (
        "imported",
        1,
        3,
        13,
    )
    assert sorted(s.status for s in again.values()) == ["imported", "unchanged", "unchanged", "unchanged"]
    cid = conv(db, PLAIN)
    assert query(
        db,
        "SELECT position, role, tool_call_count FROM messages WHERE conversation_id = ? ORDER BY position DESC LIMIT 3",
        [cid],
    ) == [(15, "tool", 0), (14, "assistant", 1), (13, "user", 0)]
    assert query(db, "SELECT count(*), sum(output_tokens) FROM message_usage WHERE conversation_id = ?", [cid]) == [
        (7, 754)
    ]
    assert all(s.status == "unchanged" for s in ingest([projects], db=db).sources)


def test_a_file_named_anything_is_detected_by_content(tmp_path: Path) -> None:
    odd = tmp_path / "transcript.log"
    shutil.copy(PROJECTS / "-home-dev-api" / f"{PLAIN}.jsonl", odd)
    r = ingest([odd], db=tmp_path / "w.duckdb")
    assert (r.exit_code, r.sources[0].format, r.sources[0].messages_imported) == (0, "claude-code", 13)


def test_lines_that_are_not_claude_code_records_fail_the_file_in_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"role": "user"}\n[1, 2]\nnot json\n')
    r = run_subprocess("ingest", str(junk), "--format", "claude-code", "--db", str(tmp_path / "w.duckdb"))
    assert r.returncode == 2
    assert r.stderr == (
        f"forensics: {junk}: no line is a Claude Code record (type user, assistant, system, "
        "summary...); check the file or pass --format\n"
    )


def test_a_message_line_without_a_message_object_is_quarantined(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    lines = (PROJECTS / "-home-dev-api" / f"{PLAIN}.jsonl").read_text().splitlines()
    broken = json.loads(lines[0])
    broken["message"] = "just a string"
    src.write_text("\n".join([json.dumps(broken), *lines[1:]]) + "\n")
    r = ingest([src], db=tmp_path / "w.duckdb").sources[0]
    assert (r.messages_imported, r.quarantined, r.skipped, r.messages_read) == (12, 1, 4, 17)
    assert query(tmp_path / "w.duckdb", "SELECT location, reason FROM quarantine") == [
        ("s.jsonl:1", "user line without a message object")
    ]


def test_a_folder_over_the_parallel_threshold_loads_the_same_rows_from_both_cores(tmp_path: Path) -> None:
    import random
    import uuid

    from forensics.ingestion.run import PARALLEL_MIN_BYTES

    gen = load_script(FIXTURES / "make_claude_code.py")
    projects, rng = tmp_path / "projects", random.Random(1)
    for i in range(400):
        kind = "main" if i % 10 == 0 else "sidechain" if i % 10 == 1 else "plain"
        gen.write_session(
            projects,
            kind,
            uuid.uuid5(uuid.NAMESPACE_URL, str(i)),
            f"-p{i % 7}",
            gen.T0,
            turns=rng.randint(4, 12),
            size=rng.randint(1000, 3000),
        )
    files = sorted(projects.rglob("*.jsonl"))
    assert sum(f.stat().st_size for f in files) >= PARALLEL_MIN_BYTES
    want_msgs, want_calls, want_out, seen = 0, 0, 0, set()
    for f in files:
        for line in f.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            m = rec.get("message")
            if rec.get("type") not in ("user", "assistant") or not isinstance(m, dict):
                continue
            key = (m.get("id"), rec.get("requestId")) if rec["type"] == "assistant" else rec["uuid"]
            if key not in seen:
                want_msgs += 1
                want_out += m.get("usage", {}).get("output_tokens", 0)
            seen.add(key)
            want_calls += (
                sum(b.get("type") == "tool_use" for b in m["content"] if isinstance(b, dict))
                if rec["type"] == "assistant"
                else 0
            )
    db = tmp_path / "w.duckdb"
    r = ingest([projects], db=db, workers=2)
    assert r.exit_code == 0 and len(r.sources) == len(files)
    assert query(
        db,
        "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM tool_calls), "
        "(SELECT sum(output_tokens) FROM message_usage)",
    ) == [(want_msgs, want_calls, want_out)]
    assert query(db, "SELECT count(*) FROM sources WHERE sha256 IS NULL") == [(0,)]


def test_a_file_of_summary_lines_only_imports_nothing_and_says_so(tmp_path: Path) -> None:
    src = tmp_path / "only-summaries.jsonl"
    src.write_text(
        '{"type":"summary","summary":"Old work","leafUuid":"elsewhere-1"}\n'
        '{"type":"summary","summary":"Older work","leafUuid":"elsewhere-2"}\n'
    )
    r = ingest([src], db=tmp_path / "w.duckdb").sources[0]
    assert (r.status, r.format, r.messages_read, r.skipped, r.conversations_new) == ("imported", "claude-code", 2, 2, 0)
    assert r.note == "skipped line types: summary (no message in this file) x2"
