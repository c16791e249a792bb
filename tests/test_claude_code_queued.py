"""Claude Code's 2026 lines a reader took for the person's, read from real files of ``fixtures/real`` (their
licences in its SOURCES.md): a prompt typed while a turn ran and delivered mid-turn, known only by its
``queue-operation`` lines (2.1.4x-2.1.6x write no ``queued_command`` attachment for it), now the person's message
where the model read it; ``Tool loaded.`` beside a deferred tool's loading, the desktop app's ``<ci-monitor-event>``
and a peer session's message with no ``origin``, now the harness's. Positions, origins and counts are exact, and
each file's person turns equal tests/agent_counts.py's independent counter."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import agent_counts as ac
from tests.conftest import query, run_cli

REAL = Path(__file__).parent.parent / "fixtures/real/claude_code"


def _ingest(tmp_path: Path, rel: str) -> tuple[Path, Path]:
    path = REAL / rel / "full.jsonl"
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(path), "--db", str(db))
    assert code == 0, err
    return path, db


def _main(db: Path) -> list[tuple[int, str, str]]:
    return query(db, "SELECT position, origin, native_id FROM messages WHERE on_main_path ORDER BY position")


def _persons(db: Path) -> list[int]:
    return [p for p, origin, _ in _main(db) if origin == "person"]


# (file, its main path's length, the person turns' positions, the queued prompt's position, origin and first words)
QUEUED = [
    ("yutakobayashidev+repiq/b4/907d0840f0/0", 48, [0, 8, 16, 32, 44], 16, "person", "todo.mdもけして"),
    ("yutakobayashidev+repiq/24/723c7a3c59/1", 101, [0, 15, 29, 34, 99], 99, "person", "何が問題だったの？"),
    ("PackmindHub+context-evaluator/4c/be888ae82f/0", 83, [3, 28, 36, 67], 67, "person", "Mention that skills"),
    ("MoonshotAI+kimi-cli/3d/feb22da51f/3", 72, [0, 8, 22], 55, "harness", "<task-notification>"),
]


@pytest.mark.parametrize(("rel", "length", "persons", "at", "origin", "words"), QUEUED)
def test_a_prompt_delivered_mid_turn_is_a_message_where_the_model_read_it(
    tmp_path: Path, rel: str, length: int, persons: list[int], at: int, origin: str, words: str
) -> None:
    """The ``remove`` (no content: the oldest enqueued prompt) is written in the millisecond of the tool result it
    rode with: the prompt sits after that result and before the next reply, timed by the remove."""
    path, db = _ingest(tmp_path, rel)
    main = _main(db)
    assert len(main) == length
    assert _persons(db) == persons
    ((got_origin, content, role_before, role_after),) = query(
        db,
        "SELECT m.origin, m.content, (SELECT role FROM messages WHERE on_main_path AND position = m.position - 1), "
        "(SELECT role FROM messages WHERE on_main_path AND position = m.position + 1) "
        "FROM messages m WHERE m.on_main_path AND m.position = ?",
        [at],
    )
    assert (got_origin, content.startswith(words), role_before, role_after) == (origin, True, "tool", "assistant")
    assert main[at][2].startswith("queue-operation:")
    assert ac.claude_code_file(path).person == len(persons)
    (note,) = query(db, "SELECT note FROM import_runs")[0]
    assert "1 prompts read mid-turn, known only by their queue-operation remove, made messages" in note
    ((read, skipped),) = query(db, "SELECT messages_read, skipped FROM import_runs")
    assert read == len(query(db, "SELECT 1 FROM messages")) + skipped  # every line a message or counted


def test_the_queued_prompt_answered_by_the_deletion_is_before_it(tmp_path: Path) -> None:
    """repiq ``b4/…`` (2.1.52): "todo.mdもけして" was typed while the flake was rewritten; the ``tasks/todo.md``
    deletion that answers it (the reply turning to it was at 22 when the prompt was lost) follows it, from 23."""
    _, db = _ingest(tmp_path, "yutakobayashidev+repiq/b4/907d0840f0/0")
    ((text, ts),) = query(db, "SELECT content, strftime(created_at, '%H:%M:%S.%g') FROM messages WHERE position = 16")
    assert (text, ts) == ("todo.mdもけして", "04:20:55.327")
    ((reply,),) = query(db, "SELECT content FROM messages WHERE on_main_path AND position = 23")
    assert reply.startswith("`nix flake check` パスしました。次に `tasks/todo.md` の削除対応をします。")
    assert query(db, "SELECT position FROM tool_calls WHERE arguments LIKE '%git rm tasks/todo.md%'") == [(29,)]


def test_a_remove_after_the_turn_ended_is_counted_not_a_message(tmp_path: Path) -> None:
    """Nomos (2.1.229): a task notice enqueued after the turn's end and removed 30 s later, before the next prompt:
    no request carried it. And the desktop app's three ``<ci-monitor-event>`` prompts (``origin.kind: human``,
    ``promptSource: sdk``) are its watcher's, not the person's: 6 person turns were 3."""
    path, db = _ingest(tmp_path, "Nomos-N4s+nomos/0")
    assert _persons(db) == [0, 99, 149] and ac.claude_code_file(path).person == 3
    assert query(db, "SELECT position FROM messages WHERE content LIKE '<ci-monitor-event>%' ORDER BY 1") == [
        (198,),
        (207,),
        (286,),
    ]
    assert query(db, "SELECT DISTINCT origin FROM messages WHERE content LIKE '<ci-monitor-event>%'") == [("harness",)]
    (note,) = query(db, "SELECT note FROM import_runs")[0]
    assert "queue-operation:remove (no reply read it) x1" in note and "made messages" not in note
    assert "queue-operation:enqueue x10" in note and "queue-operation:dequeue (sent as the next prompt) x9" in note


def test_tool_loaded_beside_a_deferred_tool_is_the_harness(tmp_path: Path) -> None:
    """FitToday ``5a/…`` (2.1.70): the two ToolSearch results carry the text block ``Tool loaded.``; the file has one
    prompt of the person's, not three."""
    path, db = _ingest(tmp_path, "Viniciuscarvalho+FitToday/5a/3bf5984554/1")
    assert _persons(db) == [0] and ac.claude_code_file(path).person == 1
    assert query(db, "SELECT position, origin, role FROM messages WHERE content = 'Tool loaded.' ORDER BY 1") == [
        (2, "harness", "user"),
        (36, "harness", "user"),
    ]
    assert query(db, "SELECT count(*) FROM tool_calls WHERE result_position IN (2, 36)") == [(2,)]


def test_a_peer_sessions_message_with_no_origin_is_the_harness(tmp_path: Path) -> None:
    """teslamint (2.1.232): two of the four peer messages carry no ``origin``; 6 person turns were 4."""
    path, db = _ingest(tmp_path, "teslamint+entirecontext/0")
    assert _persons(db) == [0, 20, 97, 221] and ac.claude_code_file(path).person == 4
    # 73 and 169 say so by ``origin.kind: peer``; 95 and 205 (a ``<teammate-message>``) have no origin
    assert query(
        db, "SELECT position, origin FROM messages WHERE content LIKE 'Another Claude session sent%' ORDER BY 1"
    ) == [(73, "harness"), (95, "harness"), (169, "harness"), (205, "harness")]


@pytest.mark.parametrize(
    ("rel", "length", "persons"),
    [
        ("yutakobayashidev+repiq/75/bad684190c/1", 79, [0, 11, 13, 33, 53, 63, 73]),  # enqueue and dequeue only
        ("tslateman+duet/63/8f582c9071/0", 60, [3, 6, 8, 10, 30, 56]),  # no queue line
    ],
)
def test_a_file_without_such_lines_is_unchanged(tmp_path: Path, rel: str, length: int, persons: list[int]) -> None:
    """The figures these files had before (a dequeued prompt is stored as its own user line: nothing added)."""
    path, db = _ingest(tmp_path, rel)
    assert (len(_main(db)), _persons(db)) == (length, persons)
    assert ac.claude_code_file(path).person == len(persons)
    assert not any(n.startswith("queue-operation:") for _, _, n in _main(db))
