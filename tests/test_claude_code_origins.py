"""Who sent a Claude Code user line, as 2.1.2xx writes it (``origin.kind``, ``promptSource``), and the prompts typed
while a turn ran (``queued_command`` attachments), each read as the problems guide's origin rules say
(../shared/data/problems/GUIDE.md §3). The values are those of 826 real sessions of 2026 (the Entire CLI's checkpoints
of ten repositories, docs/formats.md) and of the Agent SDK's list of kinds; every text and id here is invented, and
every figure is checked against tests/agent_counts.py's independent counter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import agent_counts as ac
from tests.conftest import query, run_cli

SID = "0f0e0d0c-0000-4000-8000-0000000000aa"


def _line(kind: str, uid: str, parent: str | None, n: int, **extra: object) -> dict:
    base = {"parentUuid": parent, "isSidechain": False, "type": kind, "sessionId": SID, "version": "2.1.232"}
    return {**base, "uuid": uid, "timestamp": f"2026-08-20T10:{n:02d}:00.000Z", "cwd": "/work/app", **extra}


def _user(uid: str, parent: str | None, n: int, text: object, **extra: object) -> dict:
    return _line("user", uid, parent, n, message={"role": "user", "content": text}, **{"entrypoint": "cli", **extra})


def _reply(uid: str, parent: str, n: int) -> dict:
    msg = {
        "id": f"msg_{uid}",
        "role": "assistant",
        "model": "claude-opus-4-7",
        "content": [{"type": "text", "text": "ok"}],
    }
    return _line("assistant", uid, parent, n, message={**msg, "usage": {"input_tokens": 3, "output_tokens": 2}})


def _queued(uid: str, parent: str, n: int, prompt: object, **att: object) -> dict:
    return _line("attachment", uid, parent, n, attachment={"type": "queued_command", "prompt": prompt, **att})


HUMAN = {"kind": "human"}
# (line, the origin it must get, the name it must carry)
LINES: list[tuple[dict, str, str | None]] = [
    (_user("u1", None, 1, "rename the loader", origin=HUMAN, promptSource="typed"), "person", None),
    (_reply("a1", "u1", 2), "assistant", None),
    # typed while the turn ran, delivered mid-turn: no user line repeats it
    (_queued("q1", "a1", 3, "and keep the old name as an alias", commandMode="prompt", origin=HUMAN), "person", None),
    (_reply("a2", "q1", 4), "assistant", None),
    (_user("u2", "a2", 5, "ship it", origin=HUMAN, promptSource="suggestion_accepted"), "person", None),
    (_reply("a3", "u2", 6), "assistant", None),
    (
        _user(
            "u3",
            "a3",
            7,
            "<task-notification>\n<task-id>t1</task-id>\n<status>completed</status>\n</task-notification>",
            origin={"kind": "task-notification"},
            promptSource="system",
        ),
        "harness",
        None,
    ),
    (_reply("a4", "u3", 8), "assistant", None),
    # another session's message, on a user line and queued mid-turn (2.1.232 writes both)
    (
        _user(
            "u4",
            "a4",
            9,
            'Another Claude session sent a message:\n<agent-message from="design-review">\nVERDICT: REVISE\n</agent-message>',
            origin={"kind": "peer", "from": "uds:/tmp/s.sock", "name": "design-review"},
            promptSource="system",
            isMeta=True,
        ),
        "harness",
        "design-review",
    ),
    (_reply("a5", "u4", 10), "assistant", None),
    (
        _queued(
            "q2",
            "a5",
            11,
            '<agent-message from="retro">\nall answered\n</agent-message>',
            commandMode="prompt",
            origin={"kind": "peer", "name": "retro"},
            isMeta=True,
        ),
        "harness",
        "retro",
    ),
    (_reply("a6", "q2", 12), "assistant", None),
    # a peer's words with no isMeta flag and a plain text: the origin alone says whose they are
    (_user("u5", "a6", 13, "Run the tests", origin={"kind": "peer"}, promptSource="system"), "harness", None),
    (_reply("a7", "u5", 14), "assistant", None),
    (
        _queued(
            "q3",
            "a7",
            15,
            "<task-notification>\n<task-id>t2</task-id>\n</task-notification>",
            commandMode="task-notification",
        ),
        "harness",
        None,
    ),
    (_reply("a8", "q3", 16), "assistant", None),
    (
        _user(
            "u6",
            "a8",
            17,
            "You can continue now.",
            origin={"kind": "auto-continuation"},
            promptSource="system",
            isMeta=True,
        ),
        "harness",
        None,
    ),
    (_reply("a9", "u6", 18), "assistant", None),
    (_user("u7", "a9", 19, "Poll the deploy", promptSource="system"), "harness", None),  # a scheduled task's prompt
    (_reply("b1", "u7", 20), "assistant", None),
    (_user("u8", "b1", 21, "a kind no release has written yet", origin={"kind": "observer-activity"}), "harness", None),
    (_reply("b2", "u8", 22), "assistant", None),
    # a chat bridge (an MCP channel) delivering what the person wrote there: the person's, named by the server
    (
        _user(
            "u9",
            "b2",
            23,
            '<channel source="telegram" chat_id="1">is the build green?</channel>',
            origin={"kind": "channel", "server": "plugin:telegram"},
            isMeta=True,
        ),
        "person",
        "plugin:telegram",
    ),
    (_reply("b3", "u9", 24), "assistant", None),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("cc")
    path = folder / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line, _, _ in LINES), encoding="utf-8")
    db = folder / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    return path, db


def test_each_sender_gets_the_origin_the_guide_gives_it(built: tuple[Path, Path]) -> None:
    _, db = built
    rows = query(db, "SELECT native_id, origin, name FROM messages WHERE position IS NOT NULL ORDER BY position")
    assert [(o, n) for _, o, n in rows] == [(o, n) for _, o, n in LINES]
    assert [r[0] for r in rows] == [line["uuid"] for line, _, _ in LINES]


def test_the_counter_counts_the_same_persons_turns(built: tuple[Path, Path]) -> None:
    path, db = built
    ((person,),) = query(db, "SELECT count(*) FROM messages WHERE origin = 'person' AND on_main_path")
    assert person == 4 == ac.claude_code_file(path)[1]


def test_the_title_is_the_persons_first_prompt(built: tuple[Path, Path]) -> None:
    _, db = built
    assert query(db, "SELECT title FROM conversations") == [("rename the loader",)]


def test_an_sdk_prompt_is_the_request_the_run_answers(tmp_path: Path) -> None:
    """``promptSource: sdk`` is how the desktop app, the IDE extensions and ``claude -p`` send what the person typed,
    and how a program sends its task (entrypoint ``sdk-cli``/``sdk-py``): the request the run answers, the person's
    turn as the guide's autonomous-run rule says. What Claude Code itself sends through the SDK carries its own
    ``origin.kind`` (a task notification) and is not."""
    lines = [
        _user("s1", None, 1, "Review this change for security issues.", promptSource="sdk", entrypoint="sdk-py"),
        _reply("s2", "s1", 2),
        _user(
            "s3",
            "s2",
            3,
            "<task-notification>\n<task-id>t9</task-id>\n</task-notification>",
            origin={"kind": "task-notification"},
            promptSource="sdk",
            entrypoint="claude-desktop",
        ),
        _reply("s4", "s3", 4),
    ]
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    origins = query(db, "SELECT origin FROM messages WHERE role = 'user' ORDER BY seq")
    assert [o for (o,) in origins] == ["person", "harness"]
    assert ac.claude_code_file(path)[1] == 1


REAL = Path(__file__).parent.parent / "fixtures/real/claude_code/JanDeDobbeleer+oh-my-posh/1c/fa5e2d5f1f/0/full.jsonl"


def test_a_real_desktop_session_reads_its_queued_prompt_and_its_notices(tmp_path: Path) -> None:
    """Claude Code 2.1.218 through the desktop app (2026-07, JanDeDobbeleer/oh-my-posh's Entire checkpoint, MIT):
    every prompt is ``promptSource: sdk`` with ``origin.kind: human`` (the person's), four background-task notices
    are ``sdk``/``task-notification`` (Claude Code's), and one prompt typed while a turn ran is only a
    ``queued_command`` attachment: it was missing, now the person's eighth turn. Every figure equals the counter's."""
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(REAL), "--db", str(db))
    assert code == 0, err
    ((person, notices),) = query(
        db,
        "SELECT count(*) FILTER (WHERE origin = 'person'), count(*) FILTER (WHERE origin = 'harness' AND "
        "content LIKE '<task-notification>%') FROM messages WHERE on_main_path",
    )
    assert (person, notices) == (8, 4)
    assert query(
        db, "SELECT position, left(content, 40) FROM messages WHERE native_id = '5632e611-7047-45d8-b166-c14f81a384ef'"
    ) == [(135, "how does the SVG handle the correct font")]
    calls = query(
        db,
        "SELECT count(*), count(result_seq), count(*) FILTER (WHERE is_error AND error_source = 'format' "
        "AND result_seq IS NOT NULL) FROM tool_calls",
    )[0]
    ((tokens,),) = query(
        db,
        "SELECT sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0) + coalesce(cache_read_input_tokens, 0) "
        "+ coalesce(cache_creation_input_tokens, 0)) FROM message_usage",
    )
    assert (1, person, *calls) == tuple(ac.claude_code_file(REAL)) == (1, 8, 84, 84, 2)
    assert tokens == ac.claude_code_tokens(REAL) == 11_320_792
