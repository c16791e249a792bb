"""Sessions that continue other sessions (issue 42, item 1): one conversation per real path, the copied turns counted
once, the link recorded and shown. Claude Code 2.1.1xx, built from the format (fixtures/built, SOURCES.md): a
session; its fork (``claude --resume <id> --fork-session``: the parent's lines copied with the same ``uuid``,
``message.id`` and ``requestId``, the fork's ``sessionId`` and ``forkedFrom``); and a continuation ``--resume`` wrote
to a new file while the session was open elsewhere (anthropics/claude-code#30606: the lines carry the original's
``sessionId``, its first part the original's lines again). Every figure is counted here from the raw lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from forensics import api
from tests.agent_counts import json_lines
from tests.conftest import FIXTURES, query, run_cli

LEDGER = FIXTURES / "built" / "claude_code_resumed" / ".claude" / "projects" / "-home-dev-ledger"
ORIGINAL, FORK, CONTINUED = (
    "0a87c1d2-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
    "d26b3e4f-6a7b-4c8d-9e0f-1a2b3c4d5e6f",
    "3240e317-05c7-4101-9375-18a3544dd18e",
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("links") / "w.duckdb"
    code, _, err = run_cli("ingest", str(LEDGER), "--db", str(out))
    assert code == 0, err
    return out


def cid(db: Path, native: str) -> str:
    return query(db, "SELECT conversation_id FROM conversations WHERE native_id = ?", [native])[0][0]


def test_the_raw_files_are_the_shapes_they_stand_for() -> None:
    original = list(json_lines(LEDGER / f"{ORIGINAL}.jsonl"))
    fork = list(json_lines(LEDGER / f"{FORK}.jsonl"))
    continued = list(json_lines(LEDGER / f"{CONTINUED}.jsonl"))
    mine = {r["uuid"] for r in original if "uuid" in r}
    copies = [r for r in fork if "forkedFrom" in r]
    assert {r["uuid"] for r in copies} == mine and all(r["forkedFrom"]["messageUuid"] == r["uuid"] for r in copies)
    assert {r["sessionId"] for r in fork if "uuid" in r} == {FORK}
    assert continued[: len(original)] == original and {r.get("sessionId") for r in continued if "uuid" in r} == {
        ORIGINAL
    }


def test_each_session_is_its_own_turns_and_the_copies_stay_off_its_main_path(db: Path) -> None:
    # (main-path messages, the person's turns on it, copied messages off it, assistant messages on it)
    got = {
        n: tuple(r)
        for n, *r in query(
            db,
            """
        SELECT c.native_id, count(*) FILTER (WHERE on_main_path), count(*) FILTER (WHERE on_main_path AND origin = 'person'),
               count(*) FILTER (WHERE NOT on_main_path), count(*) FILTER (WHERE on_main_path AND role = 'assistant')
        FROM messages m JOIN conversations c USING (conversation_id) GROUP BY 1""",
        )
    }
    assert got == {ORIGINAL: (6, 2, 0, 3), FORK: (2, 1, 6, 1), CONTINUED: (4, 1, 6, 2)}
    titles = dict(query(db, "SELECT native_id, title FROM conversations"))
    assert titles == {
        ORIGINAL: "why does the ledger total drift after an import?",
        FORK: "no: reject an import that repeats an id instead",  # its own words, not the copied ones
        CONTINUED: "go ahead and write the dedupe",
    }
    # the fork's first own prompt continues the copied history: its parent is the original's last message
    ((first, parent),) = query(
        db,
        "SELECT native_id, parent_native_id FROM messages WHERE conversation_id = ? AND on_main_path AND position = 0",
        [cid(db, FORK)],
    )
    last = [r["uuid"] for r in json_lines(LEDGER / f"{ORIGINAL}.jsonl") if "uuid" in r][-1]
    assert parent == last and first != last


def test_the_link_is_recorded_and_the_transcript_shows_it(db: Path) -> None:
    parents = dict(query(db, "SELECT native_id, parent_conversation_id FROM conversations"))
    assert parents == {ORIGINAL: None, FORK: cid(db, ORIGINAL), CONTINUED: cid(db, ORIGINAL)}
    events = query(
        db,
        "SELECT c.native_id, e.kind, e.trigger, e.position, m.origin, "
        "json_extract(e.detail, '$.copied_messages')::INT FROM events e "
        "JOIN conversations c USING (conversation_id) JOIN messages m ON m.conversation_id = "
        "e.conversation_id AND m.position = e.position WHERE e.kind <> 'reasoning' ORDER BY 1",
    )
    assert events == [(CONTINUED, "resume", ORIGINAL, 0, "person", 6), (FORK, "fork", ORIGINAL, 0, "person", 6)]
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    page = TestClient(create_app(db), base_url="http://127.0.0.1").get(f"/c/{cid(db, FORK)}").text
    assert "⋯ fork" in page and ORIGINAL in page
    assert "no: reject an import that repeats an id instead" in page
    assert "why does the ledger total drift" not in page  # the copied turns are the original's page


def test_tokens_are_counted_once_across_the_three_files(db: Path) -> None:
    responses: dict[tuple[str, str], tuple[int, int, int, int]] = {}
    lines = 0
    for f in LEDGER.glob("*.jsonl"):
        for r in json_lines(f):
            if r.get("type") == "assistant":
                lines += 1
                u = r["message"]["usage"]
                key = (r["message"]["id"], r["requestId"])
                now = (
                    u["input_tokens"],
                    u["cache_read_input_tokens"],
                    u["cache_creation_input_tokens"],
                    u["output_tokens"],
                )
                responses[key] = tuple(max(a, b) for a, b in zip(responses.get(key, now), now))  # type: ignore[assignment]
    assert (lines, len(responses)) == (15, 6)  # 6 responses, their lines copied into the fork and the continuation
    run = api.usage(db, by="agent").row(0, named=True)
    assert run["responses"] == 6
    assert run["input"] == sum(i + r + w for i, r, w, _ in responses.values()) == 115_236
    assert run["output"] == sum(o for *_, o in responses.values()) == 615
    per = {
        n: (r, o)
        for n, r, o in query(
            db,
            "SELECT c.native_id, count(*), sum(output_tokens) FROM message_usage "
            "JOIN conversations c USING (conversation_id) GROUP BY 1",
        )
    }
    assert per == {ORIGINAL: (3, 315), FORK: (4, 375), CONTINUED: (5, 555)}  # each file keeps its copy, summed once
    by_run = {
        r["native_id"]: (r["responses"], r["output"]) for r in api.usage(db, by="conversation").iter_rows(named=True)
    }
    assert by_run == {ORIGINAL: (3, 315), FORK: (1, 60), CONTINUED: (2, 240)}  # the copies count in the original


def test_a_second_ingest_adds_nothing(db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ledger"
    shutil.copytree(LEDGER, folder)
    out = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(folder), "--db", str(out))[0] == 0
    for f in folder.glob("*.jsonl"):  # re-read, not skipped as unchanged
        f.touch()
    code, text, _ = run_cli("ingest", str(folder), "--db", str(out))
    assert code == 0 and "0 conversations new" in text and " 0 added + 24 unchanged" in text
    assert query(out, "SELECT count(*) FROM messages") == [(24,)]
    assert query(out, "SELECT kind, count(*) FROM events GROUP BY 1 ORDER BY 1") == [
        ("fork", 1),
        ("reasoning", 3),
        ("resume", 1),
    ]


def test_a_fork_read_without_its_parent_keeps_the_copies_and_names_the_parent(tmp_path: Path) -> None:
    """The parent's file gone (deleted, or not copied): the copies are the only record of those turns. They are kept,
    off the fork's main path, and counted in usage once (nothing else holds them)."""
    shutil.copy(LEDGER / f"{FORK}.jsonl", tmp_path / f"{FORK}.jsonl")
    out = tmp_path / "w.duckdb"
    code, text, _ = run_cli("ingest", str(tmp_path / f"{FORK}.jsonl"), "--db", str(out))
    assert code == 0 and f"6 messages copied from session {ORIGINAL} (forked from it) kept off the main path" in text
    assert query(out, "SELECT count(*) FILTER (WHERE on_main_path), count(*) FROM messages") == [(2, 8)]
    assert api.usage(out, by="agent").row(0, named=True)["responses"] == 4


def test_the_built_files_are_what_their_generator_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """fixtures/built/make.py writes every built file byte for byte as committed (deterministic: fixed ids and times)."""
    from tests.conftest import load_script

    made: dict[Path, str] = {}
    mod = load_script(FIXTURES / "built" / "make.py")
    monkeypatch.setattr(
        mod,
        "write",
        lambda path, lines: made.__setitem__(
            path, "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in lines)
        ),
    )
    for build in (
        mod.claude_code,
        mod.codex,
        mod.claude_code_resumed,
        mod.codex_events_only,
        mod.claude_code_otel_2026,
    ):
        build()
    assert len(made) == 9
    for path, text in made.items():
        assert path.read_text() == text, f"{path} is stale: run python fixtures/built/make.py"


def test_a_continuation_whose_copies_carry_its_own_session_id(tmp_path: Path) -> None:
    """The continuation's lines rewritten to its own sessionId (so no line names the earlier session): it begins with
    the earlier file's first line and holds every line of it, and more. The earlier file is not taken for a copy of
    it, nor is a file that only begins the same way and then goes its own way."""
    folder = tmp_path / "-home-dev-ledger"
    folder.mkdir()
    original = [json.loads(x) for x in (LEDGER / f"{ORIGINAL}.jsonl").read_text().splitlines()]
    (folder / f"{ORIGINAL}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in original))
    again, other = "9b0c1d2e-3f40-4152-8637-48596a7b8c9d", "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9"
    own = [json.loads(x) for x in (LEDGER / f"{CONTINUED}.jsonl").read_text().splitlines()][len(original) :]
    (folder / f"{again}.jsonl").write_text(
        "".join(json.dumps({**x, "sessionId": again} if "sessionId" in x else x) + "\n" for x in original + own)
    )
    # the same first line, then turns of its own (the earlier file's later lines missing): not a continuation of it
    mine = {x["uuid"] for x in own if "uuid" in x}

    def fresh(x: dict) -> dict:
        return {
            **x,
            **{k: x[k][:-4] + "ffff" for k in ("uuid", "parentUuid") if x.get(k) in mine},
            **({"sessionId": other} if "sessionId" in x else {}),
        }

    turns = [fresh(x) for x in own]
    turns[1]["parentUuid"] = original[1]["uuid"]  # its first prompt answers the shared first prompt's line
    start = [{**x, "sessionId": other} if "sessionId" in x else x for x in original[:2]]
    (folder / f"{other}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in start + turns))
    db = tmp_path / "w.duckdb"
    code, text, _ = run_cli("ingest", str(folder), "--db", str(db))
    assert code == 0 and text.count("messages copied from session") == 1
    got = {
        n: (main, off, parent)
        for n, main, off, parent in query(
            db,
            """
        SELECT c.native_id, count(*) FILTER (WHERE on_main_path), count(*) FILTER (WHERE NOT on_main_path),
               p.native_id FROM messages m JOIN conversations c USING (conversation_id)
        LEFT JOIN conversations p ON p.conversation_id = c.parent_conversation_id GROUP BY 1, 4""",
        )
    }
    assert got == {ORIGINAL: (6, 0, None), again: (4, 6, ORIGINAL), other: (5, 0, None)}
    assert (
        api.usage(db, by="agent").row(0, named=True)["responses"] == 5
    )  # r1..r3, and r5, r6 once (both files hold them)
