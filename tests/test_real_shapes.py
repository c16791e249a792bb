"""Shapes the agents write in 2026, each on a real file (fixtures/real, SOURCES.md): the file imports alone and
its figures equal those counted from the raw file by tests/agent_counts.py, then what that shape must get right."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.agent_counts import (
    FileFigures,
    Run,
    claude_code_file,
    claude_code_main_path,
    codex_file,
    json_lines,
    swe_agent_run,
)
from tests.conftest import FIXTURES, query, run_cli

REAL = FIXTURES / "real"
CLAUDE = REAL / "claude_code" / ".claude" / "projects" / "C--Users-acodu-dev-dashboard-mictlan"
COMPACTED = CLAUDE / "e739b244-acba-4c61-bb7c-897bf3a86747.jsonl"
COMPACTOR = CLAUDE / "e739b244-acba-4c61-bb7c-897bf3a86747" / "subagents" / "agent-acompact-870cd0c7b9931190.jsonl"
FAMILIES: dict[str, tuple[str, Callable[[Path], FileFigures | Run]]] = {
    "claude_code": ("claude-code", claude_code_file), "codex": ("codex", codex_file),
    "swe_agent": ("swe-agent", swe_agent_run),
}


def files(family: str) -> list[Path]:
    return sorted(p for p in (REAL / family).rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for family in FAMILIES:
        db = tmp_path_factory.mktemp(family) / "w.duckdb"
        for f in files(family):
            code, _, err = run_cli("ingest", str(f), "--db", str(db))
            assert code == 0, f"{f}: {err}"
        out[family] = db
    return out


def source(db: Path, path: Path) -> str:
    return query(db, "SELECT source_id FROM sources WHERE path = ?", [str(path.resolve())])[0][0]


def conversation(db: Path, path: Path) -> str:
    return query(db, "SELECT conversation_id FROM conversations WHERE source_id = ?", [source(db, path)])[0][0]


def figures(db: Path, path: Path) -> FileFigures:
    convs = "SELECT conversation_id FROM conversations WHERE source_id = ?"
    src = source(db, path)
    (n,) = query(db, f"SELECT count(*) FROM ({convs})", [src])[0]
    (person,) = query(db, f"SELECT count(*) FROM messages WHERE origin = 'person' AND on_main_path AND "
                          f"conversation_id IN ({convs})", [src])[0]
    calls, linked, errors = query(db, f"SELECT count(*), count(result_seq), count(*) FILTER (WHERE is_error AND "
                                      f"result_seq IS NOT NULL) FROM tool_calls WHERE conversation_id IN ({convs})",
                                  [src])[0]
    return FileFigures(n, person, calls, linked, errors)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_real_file_imports_alone_and_its_figures_match_the_raw_file(
        warehouses: dict[str, Path], family: str) -> None:
    fmt, count = FAMILIES[family]
    db = warehouses[family]
    assert {f for (f,) in query(db, "SELECT DISTINCT format FROM sources")} == {fmt}
    for f in files(family):
        assert tuple(figures(db, f)) == tuple(count(f)), f
    for read, imported, quarantined, skipped in query(db, "SELECT messages_read, messages_imported, quarantined, "
                                                          "skipped FROM import_runs"):
        assert read == imported + quarantined + skipped


def test_a_compacted_claude_code_session_runs_through_the_compaction_to_its_first_prompt(
        warehouses: dict[str, Path]) -> None:
    """Claude Code 2.1.68, one auto-compaction whose logicalParentUuid names a uuid no line of the file has: the
    main path still starts at the session's first prompt, and every response and call is on it."""
    db = warehouses["claude_code"]
    cid = conversation(db, COMPACTED)
    recs = list(json_lines(COMPACTED))
    first_prompt = next(r["uuid"] for r in recs if r.get("type") == "user")
    on_path = claude_code_main_path(recs)
    responses = {r["message"]["id"] for r in recs if r.get("type") == "assistant" and r["uuid"] in on_path}
    calls = sum(b.get("type") == "tool_use" for r in recs  # a response is on the path when any of its lines is
                if r.get("type") == "assistant" and r["message"]["id"] in responses for b in r["message"]["content"])
    assert query(db, "SELECT native_id, origin FROM messages WHERE conversation_id = ? AND on_main_path "
                     "ORDER BY position LIMIT 1", [cid]) == [(first_prompt, "person")]
    assert (len(responses), calls) == (158, 131)
    assert query(db, "SELECT count(*) FROM messages WHERE conversation_id = ? AND on_main_path AND role = 'assistant'",
                 [cid]) == [(len(responses),)]
    assert query(db, "SELECT count(*) FROM tool_calls t JOIN messages m ON m.conversation_id = t.conversation_id "
                     "AND m.position = t.position WHERE t.conversation_id = ? AND m.on_main_path", [cid]) == [(calls,)]
    # the boundary is an event on the main path, at the summary that opens the second half
    summary = next(r["uuid"] for r in recs if r.get("isCompactSummary"))
    assert query(db, "SELECT e.kind, e.trigger, e.pre_tokens, m.native_id, m.origin FROM events e JOIN messages m "
                     "ON m.conversation_id = e.conversation_id AND m.position = e.position "
                     "WHERE e.conversation_id = ?", [cid]) == [("compaction", "auto", 167602, summary, "harness")]
    before = query(db, "SELECT count(*) FROM messages m WHERE conversation_id = ? AND on_main_path AND origin = 'person' "
                       "AND position < (SELECT position FROM events WHERE conversation_id = m.conversation_id)", [cid])
    assert before == [(33,)]  # the person's turns before the compaction are reachable


def test_the_compaction_sub_agent_is_titled_for_what_it_is_and_holds_no_turn_of_the_person(
        warehouses: dict[str, Path]) -> None:
    db = warehouses["claude_code"]
    cid = conversation(db, COMPACTOR)
    (title, parent), = query(db, "SELECT title, parent_conversation_id FROM conversations WHERE conversation_id = ?",
                             [cid])
    assert title == "compaction: the summary of the conversation so far"
    assert parent == conversation(db, COMPACTED)
    assert query(db, "SELECT origin, count(*) FROM messages WHERE conversation_id = ? GROUP BY 1 ORDER BY 1", [cid]) == [
        ("assistant", 1), ("harness", 2)]
    # the request it answers is Claude Code's summary prompt, not anything the person typed
    text = json.loads(COMPACTOR.read_text().splitlines()[1])["message"]["content"]
    assert text.startswith("Your task is to create a detailed summary of the conversation so far")


def test_the_transcript_shows_the_compaction_where_it_happened(warehouses: dict[str, Path]) -> None:
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    db = warehouses["claude_code"]
    cid = conversation(db, COMPACTED)
    ((at,),) = query(db, "SELECT position FROM events WHERE conversation_id = ?", [cid])
    client = TestClient(create_app(db), base_url="http://127.0.0.1")
    first = client.get(f"/c/{cid}").text
    assert 'data-position="0"' in first and "context compacted" not in first  # it opens at the first prompt
    page = client.get(f"/c/{cid}?at={at}").text
    marker = page.index(f'id="e{at}-1"')
    assert marker < page.index(f'id="m{at}"')
    assert '⋯ context compacted (auto) <span class="meta">167,602 tokens before</span>' in page[marker:marker + 300]


CODEX_077 = REAL / "codex" / ".codex" / "sessions" / "2025" / "12" / "25" / \
    "rollout-2025-12-25T17-36-59-019b5515-53c1-7e42-b72d-b402ee644d32.jsonl"
TEMPLATE = "\n## User Input\n\n```text\n\n```\n\nYou **MUST** consider the user input before proceeding"


def test_a_prompt_template_is_the_persons_turn_but_its_body_gives_no_title_and_no_words(
        warehouses: dict[str, Path]) -> None:
    """Codex 0.77 with spec-kit's prompts: 6 of the 16 person turns are templates invoked with nothing typed after
    the command. They stay the person's turns; their words are empty, so the title is the first thing the person
    wrote, not "## User Input"."""
    db = warehouses["codex"]
    cid = conversation(db, CODEX_077)
    raw = [p["payload"]["message"] for p in json_lines(CODEX_077)
           if p.get("type") == "event_msg" and p["payload"].get("type") == "user_message"]
    templates = sum(m.startswith(TEMPLATE) for m in raw)
    assert (len(raw), templates) == (16, 6)
    rows = query(db, "SELECT content, person_text FROM messages WHERE conversation_id = ? AND origin = 'person' "
                     "AND on_main_path ORDER BY position", [cid])
    assert len(rows) == 16
    assert [words for content, words in rows if content.startswith(TEMPLATE)] == [""] * templates
    assert all(words == content.strip() for content, words in rows if not content.startswith(TEMPLATE))
    first = next(m for m in raw if not m.startswith(TEMPLATE))
    assert query(db, "SELECT title FROM conversations WHERE conversation_id = ?", [cid]) == [(first.split("\n")[0],)]


def test_keywords_come_from_the_persons_own_words(warehouses: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    db = tmp_path / "w.duckdb"
    shutil.copy(warehouses["codex"], db)
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--format", "json")
    assert code == 0, err
    cid = conversation(db, CODEX_077)
    words = " ".join(t for (t,) in query(db, "SELECT person_text FROM messages WHERE conversation_id = ? AND "
                                            "origin = 'person'", [cid])).lower()
    terms = [t for (t,) in query(db, "SELECT term FROM conversation_keywords WHERE conversation_id = ? AND "
                                     "kind = 'keyword'", [cid])]
    assert len(terms) == 10
    assert [t for t in terms if t not in words] == []


def test_claude_code_titles_and_words_skip_the_ide_context_before_the_prompt(warehouses: dict[str, Path]) -> None:
    """Claude Code in VS Code puts <ide_opened_file>/<ide_selection> blocks before the prompt: the person's turn,
    but the words are what follows (a selection sent alone leaves none)."""
    db = warehouses["claude_code"]
    cid = conversation(db, COMPACTED)
    ((title,),) = query(db, "SELECT title FROM conversations WHERE conversation_id = ?", [cid])
    assert title == "is dev container extension useful for me?"
    rows = query(db, "SELECT content, person_text FROM messages WHERE conversation_id = ? AND origin = 'person' "
                     "AND on_main_path AND starts_with(content, '<ide_') ORDER BY position", [cid])
    assert len(rows) == 10
    assert all(not words.startswith("<ide_") and words in content for content, words in rows)


def test_a_model_switch_inside_a_gemini_session_is_not_hidden_under_its_first_model(tmp_path: Path) -> None:
    """Gemini CLI writes the model on every reply: a session that began on gemini-2.5-flash (2 replies) and went
    on with gemini-2.5-pro (8) is a run of both, each reply priced at its own model."""
    from tests.conftest import SHARED

    path = SHARED / "data" / "agent-logs" / "gemini_cli" / "KuantumQuest+MyDotFiles-HyDE" / ".gemini" / "tmp" / \
        "5dd181630c95c1112a25e5ca68b4816c9472a887284f756197a289e8e7a2d910" / "chats" / \
        "session-2025-09-28T10-42-50228c11.json"
    if not path.exists():
        pytest.skip(f"{path} not found (set FORENSICS_SHARED)")
    replies = [m["model"] for m in json.loads(path.read_text())["messages"] if m.get("model")]
    assert (replies.count("gemini-2.5-flash"), replies.count("gemini-2.5-pro")) == (2, 8)
    db = tmp_path / "w.duckdb"
    assert run_cli("ingest", str(path), "--db", str(db))[0] == 0
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--format", "json")
    assert code == 0, err
    usage = json.loads((tmp_path / "r" / "metrics.json").read_text())["sections"]["usage"]
    assert list(usage["by_agent_model"]) == ["gemini-cli/gemini-2.5-flash + gemini-2.5-pro"]
    assert query(db, "SELECT model, count(*) FROM message_usage GROUP BY 1 ORDER BY 1") == [
        ("gemini-2.5-flash", 2), ("gemini-2.5-pro", 8)]
    # the transcript names each response's model where it changes
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    ((cid,),) = query(db, "SELECT conversation_id FROM conversations")
    page = TestClient(create_app(db), base_url="http://127.0.0.1").get(f"/c/{cid}").text
    shown = re.findall(r'<span class="model[^"]*" title="[^"]*">(⇄ )?([\w.\-]+)</span>', page)
    changes = [m for i, m in enumerate(replies) if i == 0 or m != replies[i - 1]]
    assert [m for _, m in shown] == changes == ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash",
                                                "gemini-2.5-pro"]
    assert [bool(arrow) for arrow, _ in shown] == [False, True, True, True]
