"""Tool results are linked to their calls by identity, never by order: by the call id the format carries,
else by the tool name (and an argument value) the result echoes; a result that matches no open call, or
several, stays unlinked and is counted in the source's note. A non-zero exit status in the output marks
the result an error, whatever the format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.formats.kit.fastpath import decode_array, message
from forensics.formats.kit.records import JsonText, Message, failed_exit, normalize
from forensics.ingestion.run import ingest
from tests.conftest import query


def call(cid: str | None, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def links(tmp_path: Path, messages: list[dict]) -> tuple[list[tuple], str]:
    """(call id, name, result position, is_error) of each call, and the source's note."""
    src = tmp_path / "log.jsonl"
    src.write_text(json.dumps({"id": "c1", "messages": messages}, ensure_ascii=False) + "\n")
    db = tmp_path / "w.duckdb"
    (s,) = ingest([src], db=db).sources
    rows = query(db, "SELECT call_id, name, result_position, is_error FROM tool_calls ORDER BY position, call_index")
    assert query(db, "SELECT note FROM import_runs") == [(s.note or None,)]
    return rows, s.note


def test_results_with_ids_link_to_their_calls_whatever_the_order(tmp_path: Path) -> None:
    rows, note = links(
        tmp_path,
        [
            {"role": "user", "content": "read both"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("a", "read", {"path": "x"}), call("b", "read", {"path": "y"})],
            },
            {"role": "tool", "tool_call_id": "b", "content": "y's text"},
            {"role": "tool", "tool_call_id": "a", "content": "x's text"},
            {"role": "tool", "tool_call_id": "zzz", "content": "answers a call never made"},
        ],
    )
    assert rows == [("a", "read", 3, False), ("b", "read", 2, False)]
    assert note == "1 tool results linked to no call (they carry an id no call has x1)"


def test_a_result_without_an_id_links_by_the_tool_it_names_and_never_to_the_oldest_open_call(tmp_path: Path) -> None:
    rows, note = links(
        tmp_path,
        [
            {"role": "user", "content": "weather, then time"},
            {"role": "assistant", "content": "", "tool_calls": [call(None, "weather", {"city": "Paris"})]},
            {"role": "assistant", "content": "", "tool_calls": [call(None, "clock", {"tz": "CET"})]},
            {"role": "function", "name": "clock", "content": "10:00"},  # the legacy function-calling shape
            {"role": "tool", "content": "a result naming no tool"},
        ],
    )
    assert rows == [(None, "weather", None, None), (None, "clock", 3, False)]
    assert note == "1 tool results linked to no call (they carry neither a call id nor a tool name x1)"


def test_a_result_naming_a_tool_with_several_open_calls_stays_unlinked(tmp_path: Path) -> None:
    rows, note = links(
        tmp_path,
        [
            {"role": "user", "content": "two searches"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call(None, "search", {"q": "a"}), call(None, "search", {"q": "b"})],
            },
            {"role": "tool", "name": "search", "content": "which one?"},
        ],
    )
    assert [r[2] for r in rows] == [None, None]
    assert note == "1 tool results linked to no call (they carry a tool name several open calls have x1)"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Chunk ID: c26e1e\nWall time: 0.0513 seconds\nProcess exited with code 128\nOutput:\nfatal: not a repo", True),
        ("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nFAILED", True),
        ("Command: ls\nOutput: (empty)\nError: (none)\nExit Code: 2\nSignal: (none)", True),  # Gemini CLI's shell tool
        ("a\n[The command completed with exit code 1.]", True),  # OpenHands
        ("built\nProcess exited with code 0\n", False),
        ("[Command finished with exit code -1]", False),  # OpenHands: no exit status yet
        ("the docs say: Exit code: 1 means failure", False),  # not a line of its own
        ("日志 测试失败\n[exit code: 101]", True),
    ],
)
def test_a_non_zero_exit_status_in_the_output_marks_an_error(text: str, error: bool) -> None:
    assert failed_exit(text) is error
    assert failed_exit(JsonText(json.dumps(text, ensure_ascii=False).encode())) is error
    raw = json.dumps([{"role": "tool", "tool_call_id": "a", "content": text}], ensure_ascii=False).encode()
    slow: Message = normalize(json.loads(raw)[0])
    fast = message(decode_array(raw)[0], no_u_escapes=True)
    assert slow.is_error is fast.is_error is error


def test_the_format_s_own_success_flag_does_not_hide_a_failed_exit(tmp_path: Path) -> None:
    rows, _ = links(
        tmp_path,
        [
            {"role": "user", "content": "run it"},
            {"role": "assistant", "content": "", "tool_calls": [call("a", "shell", {"cmd": "make"})]},
            {
                "role": "tool",
                "tool_call_id": "a",
                "is_error": False,
                "content": "Exit code: 2\nOutput:\nmake: *** Error",
            },
        ],
    )
    assert rows == [("a", "shell", 2, True)]
