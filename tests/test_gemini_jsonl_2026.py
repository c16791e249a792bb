"""Gemini CLI's JSONL chat recordings as the newest source writes them (packages/core/src/services/
chatRecordingService.ts and chatRecordingTypes.ts, 2026): each line built from those types, one behaviour a test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forensics.formats import gemini_cli
from forensics.formats.kit.model import Conversation, Log

META = {
    "sessionId": "5f3c0c1e-aaaa-4bbb-8ccc-000000000001",
    "projectHash": "ab" * 32,
    "startTime": "2026-07-01T10:00:00.000Z",
    "lastUpdated": "2026-07-01T10:00:00.000Z",
}


def _read(tmp_path: Path, lines: list[dict[str, Any]]) -> tuple[Conversation, Log]:
    chats = tmp_path / ".gemini" / "tmp" / "ab" / "chats"
    chats.mkdir(parents=True)
    path = chats / "session-2026-07-01T10-00-5f3c0c1e.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in [META, *lines]), encoding="utf-8")
    log = Log(str(path))
    (conv,) = gemini_cli.read(str(path), log)
    return conv, log


def _user(mid: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-07-01T10:00:01.000Z", "type": "user", "content": content, **extra}


def _gemini(mid: str, text: str) -> dict[str, Any]:
    return {
        "id": mid,
        "timestamp": "2026-07-01T10:00:02.000Z",
        "type": "gemini",
        "content": text,
        "model": "gemini-3-pro-preview",
        "tokens": {"input": 100, "output": 10, "cached": 0, "thoughts": 5, "tool": 0, "total": 115},
    }


def test_display_content_is_what_the_person_typed(tmp_path: Path) -> None:
    """recordMessage({content: the expanded query, displayContent: the raw one}): an @-file reference expanded."""
    expanded = [
        {"text": "explain @src/app.ts"},
        {
            "text": "\n--- Content from referenced files ---\nContent from @src/app.ts:\nexport const x = 1;\n--- End of content ---"
        },
    ]
    conv, _ = _read(
        tmp_path,
        [_user("u1", expanded, displayContent=[{"text": "explain @src/app.ts"}]), _gemini("g1", "It exports x.")],
    )
    assert [(t.role, t.text, t.origin) for t in conv.turns] == [
        ("user", "explain @src/app.ts", "person"),
        ("assistant", "It exports x.", None),
    ]


def test_a_user_message_without_display_content_reads_its_content(tmp_path: Path) -> None:
    conv, _ = _read(tmp_path, [_user("u1", [{"text": "hello"}]), _gemini("g1", "hi")])
    assert conv.turns[0].text == "hello"


def test_rewind_to_an_unknown_id_clears_every_message(tmp_path: Path) -> None:
    """loadConversationRecord: a $rewindTo whose id is not found clears the map (messagesMap.clear())."""
    conv, log = _read(
        tmp_path,
        [_user("u1", "first"), _gemini("g1", "one"), {"$rewindTo": "nope"}, _user("u2", "again"), _gemini("g2", "two")],
    )
    assert [(t.text, t.main) for t in conv.turns] == [("first", False), ("one", False), ("again", True), ("two", True)]
    assert log.skipped["$rewindTo (-> messages off the main path)"] == 1


def test_set_messages_is_the_history_the_cli_now_holds(tmp_path: Path) -> None:
    """updateMessagesFromHistory after a compression: $set.messages keeps what survived and adds the summary turn
    (a synthetic user message): the dropped messages are a compaction."""
    summary = _user("s1", [{"text": "<state_snapshot>\n<overall_goal>fix the build</overall_goal>\n</state_snapshot>"}])
    lines = [
        _user("u1", "fix the build"),
        _gemini("g1", "on it"),
        _user("u2", "and the tests"),
        _gemini("g2", "done"),
        {"$set": {"messages": [summary, _gemini("g2", "done")], "lastUpdated": "2026-07-01T10:05:00.000Z"}},
    ]
    conv, _ = _read(tmp_path, lines)
    (ev,) = conv.events
    assert ev.kind == "compaction" and ev.detail["dropped_messages"] == 3 and ev.detail["kept_messages"] == 1
    assert next(t.origin for t in conv.turns if t.id == "s1") == "harness"  # the CLI's summary, not the person's
