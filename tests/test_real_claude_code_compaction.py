"""A real compacted Claude Code 2.1.39 session, in the repository (fixtures/real/claude_code/marot+spotter, MIT,
SOURCES.md): the Opus 4.6 session of issue 42 (1,512 lines, one auto-compaction) and its compaction sub-agent,
copied byte for byte. Every figure here was counted from the raw file, most of them again by the test itself."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from tests.agent_counts import claude_code_file, claude_code_main_path, json_lines
from tests.conftest import FIXTURES, query, run_cli

ROOT = FIXTURES / "real" / "claude_code" / "marot+spotter" / "test" / "fixtures" / "transcripts"
SESSION = ROOT / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
COMPACTOR = ROOT / "4d5611e5-241a-462a-8d15-5122611a9569" / "subagents" / "agent-acompact-e1f845.jsonl"
TITLE = "Work on bead spotter-dov. Run bd show spotter-dov to see the issue details and b"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spotter") / "w.duckdb"
    code, _, err = run_cli("ingest", str(SESSION), str(COMPACTOR), "--db", str(out))
    assert code == 0, err
    return out


def conversation(db: Path, path: Path) -> str:
    return query(
        db,
        "SELECT c.conversation_id FROM conversations c JOIN sources s USING (source_id) WHERE s.path = ?",
        [str(path.resolve())],
    )[0][0]


def test_the_files_are_the_real_ones() -> None:
    """Byte for byte: git's blob ids of the files at marot/spotter@8cc42b0 (SOURCES.md)."""
    import hashlib

    def blob(p: Path) -> str:
        data = p.read_bytes()
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()

    assert (blob(SESSION), blob(COMPACTOR)) == (
        "e24d4f8b2da934a819dbc0448c33dad9445b2d45",
        "3274599cd074304fcf5b693eb232fbbaf054bd27",
    )


def test_two_conversations_whose_figures_equal_the_raw_files(db: Path) -> None:
    assert query(db, "SELECT count(*) FROM conversations") == [(2,)]
    for path, expected in ((SESSION, (1, 2, 150, 150, 5)), (COMPACTOR, (1, 0, 0, 0, 0))):
        cid = conversation(db, path)
        person = query(
            db, "SELECT count(*) FROM messages WHERE conversation_id = ? AND on_main_path AND origin = 'person'", [cid]
        )[0][0]
        calls = query(
            db,
            "SELECT count(*), count(result_seq), count(*) FILTER (WHERE is_error AND result_seq IS NOT "
            "NULL) FROM tool_calls WHERE conversation_id = ?",
            [cid],
        )[0]
        assert (1, person, *calls) == tuple(claude_code_file(path)) == expected, path


def test_the_main_path_runs_through_the_compaction_to_the_first_prompt(db: Path) -> None:
    recs = list(json_lines(SESSION))
    boundary = next(r for r in recs if r.get("subtype") == "compact_boundary")
    assert boundary["parentUuid"] is None and boundary["compactMetadata"] == {"trigger": "auto", "preTokens": 170251}
    assert boundary["logicalParentUuid"] not in {r.get("uuid") for r in recs}  # as in 2.1.68: the line before continues
    on_path = claude_code_main_path(recs)
    responses = {r["message"]["id"] for r in recs if r.get("type") == "assistant" and r["uuid"] in on_path}
    calls = {
        b["id"]
        for r in recs
        if r.get("type") == "assistant" and r["message"]["id"] in responses
        for b in r["message"]["content"]
        if b.get("type") == "tool_use"
    }
    assert (len(responses), len(calls)) == (139, 150)  # every response and call of the file
    cid = conversation(db, SESSION)
    first_prompt = next(r["uuid"] for r in recs if r.get("type") == "user")
    assert query(
        db,
        "SELECT native_id, origin FROM messages WHERE conversation_id = ? AND on_main_path ORDER BY position LIMIT 1",
        [cid],
    ) == [(first_prompt, "person")]
    assert query(
        db,
        "SELECT origin, count(*) FROM messages WHERE conversation_id = ? AND on_main_path GROUP BY 1 ORDER BY 1",
        [cid],
    ) == [("assistant", 139), ("harness", 2), ("person", 2), ("tool", 150)]
    assert query(db, "SELECT count(*) FROM messages WHERE conversation_id = ? AND NOT on_main_path", [cid]) == [(0,)]
    # both turns the person typed, the second before the compaction
    assert query(
        db,
        "SELECT position, content FROM messages WHERE conversation_id = ? AND origin = 'person' ORDER BY position",
        [cid],
    ) == [(0, next(r["message"]["content"] for r in recs if r.get("uuid") == first_prompt)), (41, "continue")]
    summary = next(r["uuid"] for r in recs if r.get("isCompactSummary"))
    assert query(
        db,
        "SELECT e.position, e.kind, e.trigger, e.pre_tokens, m.native_id, m.origin, m.on_main_path "
        "FROM events e JOIN messages m ON m.conversation_id = e.conversation_id AND m.position = e.position "
        "WHERE e.conversation_id = ? AND e.kind <> 'reasoning'",
        [cid],
    ) == [(132, "compaction", "auto", 170251, summary, "harness", True)]
    assert query(
        db,
        "SELECT count(*) FROM tool_calls t JOIN messages m ON m.conversation_id = t.conversation_id "
        "AND m.position = t.position WHERE t.conversation_id = ? AND m.on_main_path "
        "AND t.position < 132",
        [cid],
    ) == [(69,)]  # the calls before the compaction are on the path too


def raw_usage(path: Path) -> tuple[int, int, int, int, int]:
    """Per response (message id), the usage of its last line: Claude Code repeats a response's usage on each line
    of it, output_tokens growing as it streams."""
    last: dict[str, dict] = {}
    for r in json_lines(path):
        if r.get("type") == "assistant":
            last[r["message"]["id"]] = r["message"]["usage"]
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return (len(last), *(sum(u.get(k, 0) for u in last.values()) for k in keys))  # type: ignore[return-value]


def test_usage_tokens_count_each_response_once_at_its_last_figure(db: Path) -> None:
    for path, expected in ((SESSION, (139, 177, 28755, 479537, 11618567)), (COMPACTOR, (1, 3, 8, 8681, 164830))):
        cid = conversation(db, path)
        assert (
            query(
                db,
                "SELECT count(DISTINCT message_id), sum(input_tokens), sum(output_tokens), "
                "sum(cache_creation_input_tokens), sum(cache_read_input_tokens) FROM message_usage "
                "WHERE conversation_id = ?",
                [cid],
            )
            == [raw_usage(path)]
            == [expected]
        ), path
        assert query(db, "SELECT DISTINCT model FROM message_usage WHERE conversation_id = ?", [cid]) == [
            ("claude-opus-4-6",)
        ]


def test_titles_and_the_compaction_sub_agent(db: Path) -> None:
    cid, sub = conversation(db, SESSION), conversation(db, COMPACTOR)
    assert query(db, "SELECT title FROM conversations WHERE conversation_id = ?", [cid]) == [(TITLE,)]
    assert query(db, "SELECT title, parent_conversation_id FROM conversations WHERE conversation_id = ?", [sub]) == [
        ("compaction: the summary of the conversation so far", cid)
    ]
    # 2.1.39 writes three hook reminders of the session before the summary request, no prompt of the person; two of
    # them hang from lines of the session (in no line of this file): each continues the line before it, so the
    # path to the summary runs through all of them, as the summarizer was sent them
    assert query(
        db,
        "SELECT origin, on_main_path, count(*) FROM messages WHERE conversation_id = ? GROUP BY ALL ORDER BY ALL",
        [sub],
    ) == [("assistant", True, 1), ("harness", True, 4)]
    lines = [json.loads(x) for x in COMPACTOR.read_text().splitlines()]
    assert [x["message"]["content"][:40] for x in lines if x["type"] == "user"][
        3
    ] == "Your task is to create a detailed summary"[:40]


def test_a_second_ingest_adds_nothing(db: Path) -> None:
    before = query(db, "SELECT count(*) FROM messages")
    code, out, err = run_cli("ingest", str(SESSION), str(COMPACTOR), "--db", str(db))
    assert code == 0, err
    assert "0 conversations new, 0 updated, 2 unchanged" in out + err
    assert "0 added" in out + err
    assert query(db, "SELECT count(*) FROM messages") == before == [(298,)]


def test_the_compaction_audit_per_category(db: Path, tmp_path: Path) -> None:
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--only", "compaction")
    assert code == 0, err
    doc = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["compaction"]
    (event,) = doc["logged"]["events"]
    assert (
        event["native_id"],
        event["position"],
        event["trigger"],
        event["pre_tokens"],
        event["summary"],
        event["summary_chars"],
    ) == (SESSION.stem, 132, "auto", 170251, "text", 15743)
    by = {k: (v["held"], v["kept"], v["dropped"], v["lost"]) for k, v in event["by_category"].items() if v["held"]}
    # the module names the summary gives (PaneListLive, AshComputer.LiveView) name their Elixir files; the closing
    # command is kept without its --reason message ("Closed with `bd close spotter-dov.1`")
    assert by == {"path": (15, 12, 3, 1), "command": (24, 9, 15, 1), "number": (14, 12, 2, 0)}
    assert (event["held"], event["kept"], event["dropped"], event["lost"], event["lost_high"]) == (53, 33, 20, 2, 0)
    summary = next(r for r in json_lines(SESSION) if r.get("isCompactSummary"))["message"]["content"]
    assert len(summary) == 15743
    lost = query(
        db,
        "SELECT category, fact, fact_position FROM compaction_facts WHERE status = 'dropped' "
        "AND fact_position IN (17, 66, 111) ORDER BY fact_position",
    )
    # the two lost facts: dropped by the summary (not in its text) and needed again after it; live_view.ex (17) is
    # kept: the summary names its module, AshComputer.LiveView, and the re-read at 153 is of its text
    assert [(c, p) for c, _, p in lost] == [("path", 66), ("command", 111)]
    assert not any(f in summary for _, f, _ in lost)
    assert lost[1][1] == "mix credo --strict 2>&1 | tail -10"
    # needed again where the raw file re-runs credo (191), re-reads the task output (290)
    assert [p for (p,) in query(db, "SELECT position FROM compaction_marks ORDER BY position")] == [132, 191, 290]
    dropped = defaultdict(int)
    for (c,) in query(db, "SELECT category FROM compaction_facts WHERE status = 'dropped'"):
        dropped[c] += 1
    assert dict(dropped) == {"path": 3, "command": 15, "number": 2}


def test_the_transcript_opens_at_the_first_prompt_and_shows_the_compaction_at_132(db: Path) -> None:
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    cid = conversation(db, SESSION)
    client = TestClient(create_app(db), base_url="http://127.0.0.1")
    first = client.get(f"/c/{cid}").text
    assert 'data-position="0"' in first and "Work on bead spotter-dov" in first
    assert "context compacted" not in first and "This session is being continued" not in first
    page = client.get(f"/c/{cid}?at=132").text
    marker = page.index('id="e132-1"')
    assert marker < page.index('id="m132"')
    assert '⋯ context compacted (auto) <span class="meta">170,251 tokens before</span>' in page[marker : marker + 300]
