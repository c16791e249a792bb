"""Claude Code 2.1.x and Codex 0.141 sessions of 2026 (fixtures/real, SOURCES.md there: the Entire CLI's checkpoint
branches of entireio/cli and EntityProcess/agentv, MIT), each the smallest real file that showed a reader defect
when 2026's sessions were counted against the raw files. Every figure here was read off the raw file; the reader
got each wrong before (the comment says what it said)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import agent_counts as ac
from tests.conftest import FIXTURES, query, run_cli

CC = FIXTURES / "real" / "claude_code" / "entireio+cli"
BLOCKED = CC / "00/c9e2351016/3/full.jsonl"  # 2.1.29: a hook's progress line names a uuid no line has
COMMAND = CC / "8e/0a64736bc7/0/full.jsonl"  # 2.1.12: /pr, a prompt command given no words
TYPED = CC / "d6/5f53d0e8e2/0/full.jsonl"  # 2.1.36: a prompt typed while parallel tools ran
SYNTHETIC = CC / "b1/5d3b4e29e9/0/full.jsonl"  # 2.1.17: Claude Code's own "<synthetic>" message
CLEARED = CC / "37/995ebed6e4/3/full.jsonl"  # 2.1.12: a plan accepted with a cleared context
CODEX = FIXTURES / "real" / "codex" / "EntityProcess+agentv" / "3c/162d1d8ad4/1/full.jsonl"  # 0.141.0, aborted turn


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cc2026") / "w.duckdb"
    code, _, err = run_cli("ingest", str(CC), str(CODEX), "--db", str(out))
    assert code == 0, err
    return out


def _cid(db: Path, path: Path) -> str:
    return query(
        db,
        "SELECT conversation_id FROM conversations JOIN sources USING (source_id) WHERE path = ?",
        [str(path.resolve())],
    )[0][0]


def _person(db: Path, path: Path) -> list[tuple]:
    return query(
        db,
        "SELECT position, person_text FROM messages WHERE conversation_id = ? AND origin = 'person' ORDER BY seq",
        [_cid(db, path)],
    )


def test_a_progress_line_whose_parent_is_in_no_line_does_not_cut_the_session(db: Path) -> None:
    # line 6's hook stopped the first prompt; a later Stop hook's progress line names a response no line holds:
    # the main path ended there and none of the person's turns was on it (was: 0 of 3 on the main path)
    assert _person(db, BLOCKED) == [(0, "fix tests"), (2, "fix tests"), (12, "fix the test, the code is right")]
    assert ac.claude_code_file(BLOCKED).person == 3


def test_a_hook_that_stopped_the_turn_is_the_harness(db: Path) -> None:
    # Claude Code writes "Operation stopped by hook: <stopReason>" on the user role (was: the person's)
    got = query(
        db,
        "SELECT position, origin FROM messages WHERE conversation_id = ? AND content LIKE 'Operation stopped by hook%'",
        [_cid(db, BLOCKED)],
    )
    assert got == [(1, "harness")]


def test_a_prompt_command_given_no_words_is_the_persons_turn_and_a_local_one_is_not(db: Path) -> None:
    # /pr's body follows it (isMeta): the person asked for it (was: harness); /mcp is answered by its local output
    person = _person(db, COMMAND)
    assert person[-1] == (53, "/pr") and len(person) == 5
    origins = query(
        db,
        "SELECT position, origin FROM messages WHERE conversation_id = ? AND content LIKE '%<command-name>%' "
        "ORDER BY seq",
        [_cid(db, COMMAND)],
    )
    assert origins == [(1, "harness"), (53, "person")]
    title = query(db, "SELECT title FROM conversations WHERE conversation_id = ?", [_cid(db, COMMAND)])
    assert title == [("I'm working on linear ENT-98. keep our working documentation in linear.",)]


def test_a_prompt_typed_while_tools_ran_is_on_the_main_path_and_its_result_linked(db: Path) -> None:
    # line 56 holds a tool's result and the person's words: the call was unanswered (59 of 60) and the words off
    # the main path (4 of 5 person turns on it)
    cid = _cid(db, TYPED)
    assert _person(db, TYPED)[1] == (22, "do we need to fix up the downstream uses of LastInteractionAt?")
    calls, linked = query(db, "SELECT count(*), count(result_seq) FROM tool_calls WHERE conversation_id = ?", [cid])[0]
    assert (calls, linked) == (60, 60) == ac.claude_code_file(TYPED)[2:4]
    assert query(
        db,
        "SELECT m.position FROM tool_calls t JOIN messages m ON m.conversation_id = t.conversation_id "
        "AND m.seq = t.result_seq WHERE t.conversation_id = ? AND t.call_id = 'toolu_01S13G7bwysrzFABcSuaQUnJ'",
        [cid],
    ) == [(22,)]


def test_synthetic_messages_are_no_model(db: Path) -> None:
    # an API error Claude Code wrote itself: model "<synthetic>", usage all 0 (was: a usage row, a second model)
    cid = _cid(db, SYNTHETIC)
    assert query(db, "SELECT DISTINCT model FROM message_usage WHERE conversation_id = ?", [cid]) == [
        ("claude-opus-4-5-20251101",)
    ]
    assert query(db, "SELECT count(*) FROM message_usage WHERE conversation_id = ?", [cid]) == [(18,)]
    assert query(db, "SELECT count(*) FROM messages WHERE conversation_id = ? AND role = 'assistant'", [cid]) == [(19,)]


def test_codex_spend_of_a_turn_aborted_while_it_streamed_is_counted(db: Path) -> None:
    # the total grew by 177,139 where the response's own count said 88,735: the aborted response's 88,404 were
    # spent (was: 9,747,041 of the rollout's 9,835,445)
    cid = _cid(db, CODEX)
    (tokens,) = query(
        db,
        "SELECT sum(input_tokens + cache_read_input_tokens + output_tokens) FROM message_usage WHERE conversation_id = ?",
        [cid],
    )[0]
    assert tokens == ac.codex_tokens(CODEX) == 9_835_445


def test_a_plan_accepted_with_a_cleared_context_keeps_the_turns_before_it(db: Path) -> None:
    # line 109's SessionStart:clear progress starts a new root in the same file: the two prompts before it were off
    # the main path (1 of 3 person turns on it)
    assert [p for p, _ in _person(db, CLEARED)] == [0, 13, 58]
    assert _person(db, CLEARED)[0][1].startswith("I do want to use my goreleaser pro")
    assert ac.claude_code_file(CLEARED).person == 3


def test_a_plan_handover_is_the_persons_turn_with_no_words_of_theirs(db: Path) -> None:
    # Claude Code's "Implement the following plan:" titled 48 of 357 sessions of 2026 and its plan (the model's
    # text) gave their keywords and topic cues; the person accepted it: their turn, no words
    cid = _cid(db, CLEARED)
    got = query(db, "SELECT origin, person_text FROM messages WHERE conversation_id = ? AND position = 58", [cid])
    assert got == [("person", "")]
    assert query(db, "SELECT title FROM conversations WHERE conversation_id = ?", [cid]) == [
        ("I do want to use my goreleaser pro to release this go project, I do have already",)
    ]


def test_a_session_that_starts_with_a_plan_handover_is_titled_by_the_plan(tmp_path: Path) -> None:
    lines = CLEARED.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, x in enumerate(lines) if "SessionStart:clear" in x)
    one = tmp_path / "after-clear.jsonl"
    one.write_text("".join(lines[start:]), encoding="utf-8")  # the file as it would be had the session begun there
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(one), "--db", str(db))[0] == 0
    assert query(db, "SELECT title FROM conversations") == [("# Plan: Configure GoReleaser Pro for Homebrew Tap",)]


def test_copilot_titles_are_the_first_line_of_the_persons_words(tmp_path: Path) -> None:
    # an evaluation harness's field marker above the prompt; the title was the whole message, marker and all
    real = FIXTURES / "real" / "copilot_cli"
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(real), "--db", str(db))[0] == 0
    titles = sorted(t for (t,) in query(db, "SELECT title FROM conversations"))
    assert titles == [
        "# Task: Brainstorm a no-force-push merge-conflict resolution workflow for AgentV",  # fifth labelling round
        "Can you, without using gh cli or ado tools, on best effort basis, improve these ",
        'Write FizzBuzz in Python. Use lowercase output strings "fizz", "buzz", and "fizz',
    ]


def test_a_record_appended_to_a_line_with_no_newline_is_read(tmp_path: Path) -> None:
    # 7 of 357 sessions of 2026 have a line holding an assistant or progress record and, right after it with no
    # newline, a summary or file-history-snapshot (entireio/cli 37/995ebed6e4/2, line 128): the line was
    # quarantined whole and the response lost. Built from the real file: one such join where it has both kinds.
    lines = CLEARED.read_text(encoding="utf-8").splitlines(keepends=True)
    k = next(
        i
        for i in range(len(lines) - 1)
        if '"type":"assistant"' in lines[i] and lines[i + 1].startswith('{"type":"file-history-snapshot"')
    )
    joined = tmp_path / "joined.jsonl"
    joined.write_text("".join(lines[:k] + [lines[k].rstrip("\n") + lines[k + 1]] + lines[k + 2 :]), encoding="utf-8")
    counts = {}
    for f in (CLEARED, joined):
        db = tmp_path / f"{f.stem}-{len(counts)}.duckdb"
        assert run_cli("ingest", str(f), "--db", str(db))[0] == 0
        counts[f.name] = query(
            db,
            "SELECT (SELECT count(*) FROM quarantine), (SELECT count(*) FROM messages), "
            "(SELECT count(*) FROM messages WHERE on_main_path), (SELECT count(*) FROM tool_calls)",
        )[0]
    assert counts[joined.name] == counts[CLEARED.name]
    assert counts[joined.name][0] == 0
