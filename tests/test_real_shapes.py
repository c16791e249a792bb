"""Shapes the agents write in 2026, each on a real file (fixtures/real, SOURCES.md) or, where the real file's
licence does not let it into the repository, on a file built from the agent's format (fixtures/built, SOURCES.md)
with the real file's record types, fields and links: the file imports alone and its figures equal those counted
from the raw file by tests/agent_counts.py, then what that shape must get right, in exact counts. The same tests
run on the real file when it is here: $FORENSICS_REAL_SHAPES (a folder laid out like fixtures/real) or the
shared agent logs ($FORENSICS_SHARED/data/agent-logs/<family>/<owner+repo>/<path>); they skip otherwise."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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
from tests.conftest import FIXTURES, SHARED, query, run_cli

REAL = FIXTURES / "real"
BUILT = FIXTURES / "built"
FAMILIES: dict[str, tuple[str, Callable[[Path], FileFigures | Run]]] = {
    "claude_code": ("claude-code", claude_code_file),
    "codex": ("codex", codex_file),
    "swe_agent": ("swe-agent", swe_agent_run),
}
SHARED_FAMILY = {"claude_code": "claude_code", "codex": "codex_cli", "swe_agent": "swe_agent"}


def real_file(family: str, repo: str, path: str) -> Path | None:
    """A real file not in the repository (its licence does not allow it), where a developer has it."""
    places = [SHARED / "data" / "agent-logs" / SHARED_FAMILY[family] / repo.replace("/", "+") / path]
    if os.environ.get("FORENSICS_REAL_SHAPES"):
        places.insert(0, Path(os.environ["FORENSICS_REAL_SHAPES"]) / family / path)
    return next((p for p in places if p.is_file()), None)


class Compacted(NamedTuple):
    """A Claude Code 2.1.68 session with one auto-compaction, its compaction sub-agent and what it must show."""

    session: Path | None
    compactor: Path | None
    responses: int  # responses (message ids) on the main path
    calls: int  # their tool calls
    pre_tokens: int  # compactMetadata.preTokens
    before: int  # the person's turns on the main path before the compaction
    title: str
    ide: int  # person's turns that open with IDE context blocks
    ide_alone: int  # of them, IDE context sent with nothing typed after it


FABIEN = "fabien-lessirard/dotfiles"
FABIEN_DIR = ".claude/projects/C--Users-acodu-dev-dashboard-mictlan"
BUILT_DIR = BUILT / "claude_code" / ".claude" / "projects" / "C--Users-dev-project-atlas"
BUILT_SESSION = "5b1e0c2a-7d3f-4e8a-9c61-2f4b8d0a1e77"
COMPACTED = {
    "built": Compacted(
        BUILT_DIR / f"{BUILT_SESSION}.jsonl",
        BUILT_DIR / BUILT_SESSION / "subagents" / "agent-acompact-4d2e9b7a1c0f3856.jsonl",
        12,
        5,
        48213,
        6,
        "is the dev container extension useful for me?",
        2,
        1,
    ),
    "real": Compacted(
        real_file("claude_code", FABIEN, f"{FABIEN_DIR}/e739b244-acba-4c61-bb7c-897bf3a86747.jsonl"),
        real_file(
            "claude_code",
            FABIEN,
            f"{FABIEN_DIR}/e739b244-acba-4c61-bb7c-897bf3a86747/subagents/agent-acompact-870cd0c7b9931190.jsonl",
        ),
        158,
        131,
        167602,
        33,
        "is dev container extension useful for me?",
        10,
        0,
    ),
}


class Templated(NamedTuple):
    """A Codex 0.77 rollout with spec-kit prompt templates invoked with nothing typed after the command."""

    rollout: Path | None
    person: int  # the person's turns (user_message events)
    templates: int  # of them, templates


OHM = "OhmChannachot/spec-kit-ohm"
TEMPLATED = {
    "built": Templated(
        BUILT
        / "codex"
        / ".codex"
        / "sessions"
        / "2025"
        / "12"
        / "25"
        / "rollout-2025-12-25T10-00-03-019b6a2e-1f00-7c3a-9d2e-5a7b3c9e1f20.jsonl",
        6,
        3,
    ),
    "real": Templated(
        real_file(
            "codex",
            OHM,
            ".codex/sessions/2025/12/25/rollout-2025-12-25T17-36-59-019b5515-53c1-7e42-b72d-b402ee644d32.jsonl",
        ),
        16,
        6,
    ),
}


# conversations, the person's turns on the main path, tool calls, linked to a result, errors among them
BUILT_FIGURES = {
    COMPACTED["built"].session: (1, 7, 5, 5, 1),
    COMPACTED["built"].compactor: (1, 0, 0, 0, 0),
    TEMPLATED["built"].rollout: (1, 6, 9, 9, 1),
}


def files(family: str) -> list[Path]:
    here = [
        p
        for root in (REAL, BUILT)
        for p in (root / family).rglob("*")
        if p.is_file() and p.suffix != ".py" and p.name not in ("LICENSE", "metadata.json")
    ]  # a repository's licence, kept beside its files; an Entire checkpoint's metadata, read with its transcript
    extra = {
        "claude_code": [p for c in COMPACTED.values() for p in (c.session, c.compactor)],
        "codex": [t.rollout for t in TEMPLATED.values()],
    }.get(family, [])
    return sorted({*here, *(p for p in extra if p is not None)} - superseded(here))


def superseded(paths: list[Path]) -> set[Path]:
    """Entire's earlier checkpoints of a session: the longest copy is read, the others are counted as superseded
    (tests/test_entire_checkpoints.py), so they have no figures of their own."""
    from forensics.ingestion.checkpoints import supersede

    return {s.path for s in supersede(paths)}


def compacted(case: str) -> Compacted:
    c = COMPACTED[case]
    if c.session is None or c.compactor is None:
        pytest.skip(
            f"the real compacted session of {FABIEN} is not here (set FORENSICS_REAL_SHAPES or FORENSICS_SHARED)"
        )
    return c


def templated(case: str) -> Templated:
    t = TEMPLATED[case]
    if t.rollout is None:
        pytest.skip(f"the real Codex 0.77 rollout of {OHM} is not here (set FORENSICS_REAL_SHAPES or FORENSICS_SHARED)")
    return t


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
    (person,) = query(
        db,
        f"SELECT count(*) FROM messages WHERE origin = 'person' AND on_main_path AND conversation_id IN ({convs})",
        [src],
    )[0]
    calls, linked, errors = query(
        db,
        f"SELECT count(*), count(result_seq), count(*) FILTER (WHERE is_error AND "
        f"result_seq IS NOT NULL) FROM tool_calls WHERE conversation_id IN ({convs})",
        [src],
    )[0]
    return FileFigures(n, person, calls, linked, errors)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_real_file_imports_alone_and_its_figures_match_the_raw_file(
    warehouses: dict[str, Path], family: str
) -> None:
    fmt, count = FAMILIES[family]
    db = warehouses[family]
    assert {f for (f,) in query(db, "SELECT DISTINCT format FROM sources")} == {fmt}
    for f in files(family):
        assert tuple(figures(db, f)) == tuple(count(f)), f
    for f, expected in BUILT_FIGURES.items():  # the built files' figures, as they were built
        if f.is_relative_to(BUILT / family):
            assert tuple(figures(db, f)) == expected, f
    for read, imported, quarantined, skipped in query(
        db, "SELECT messages_read, messages_imported, quarantined, skipped FROM import_runs"
    ):
        assert read == imported + quarantined + skipped


CASES = ["built", "real"]


@pytest.mark.parametrize("case", CASES)
def test_a_compacted_claude_code_session_runs_through_the_compaction_to_its_first_prompt(
    warehouses: dict[str, Path], case: str
) -> None:
    """Claude Code 2.1.68, one auto-compaction whose logicalParentUuid names a uuid no line of the file has: the
    main path still starts at the session's first prompt, and every response and call is on it."""
    c = compacted(case)
    assert c.session is not None
    db = warehouses["claude_code"]
    cid = conversation(db, c.session)
    recs = list(json_lines(c.session))
    boundary = next(r for r in recs if r.get("subtype") == "compact_boundary")
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] not in {r.get("uuid") for r in recs}
    first_prompt = next(r["uuid"] for r in recs if r.get("type") == "user")
    on_path = claude_code_main_path(recs)
    responses = {r["message"]["id"] for r in recs if r.get("type") == "assistant" and r["uuid"] in on_path}
    calls = sum(
        b.get("type") == "tool_use"
        for r in recs  # a response is on the path when any of its lines is
        if r.get("type") == "assistant" and r["message"]["id"] in responses
        for b in r["message"]["content"]
    )
    assert query(
        db,
        "SELECT native_id, origin FROM messages WHERE conversation_id = ? AND on_main_path ORDER BY position LIMIT 1",
        [cid],
    ) == [(first_prompt, "person")]
    assert (len(responses), calls) == (c.responses, c.calls)
    assert query(
        db, "SELECT count(*) FROM messages WHERE conversation_id = ? AND on_main_path AND role = 'assistant'", [cid]
    ) == [(len(responses),)]
    assert query(
        db,
        "SELECT count(*) FROM tool_calls t JOIN messages m ON m.conversation_id = t.conversation_id "
        "AND m.position = t.position WHERE t.conversation_id = ? AND m.on_main_path",
        [cid],
    ) == [(calls,)]
    # the boundary is an event on the main path, at the summary that opens the second half
    summary = next(r["uuid"] for r in recs if r.get("isCompactSummary"))
    assert query(
        db,
        "SELECT e.kind, e.trigger, e.pre_tokens, m.native_id, m.origin FROM events e JOIN messages m "
        "ON m.conversation_id = e.conversation_id AND m.position = e.position "
        "WHERE e.conversation_id = ? AND e.kind <> 'reasoning'",
        [cid],
    ) == [("compaction", "auto", c.pre_tokens, summary, "harness")]
    before = query(
        db,
        "SELECT count(*) FROM messages m WHERE conversation_id = ? AND on_main_path AND origin = 'person' "
        "AND position < (SELECT position FROM events WHERE conversation_id = m.conversation_id AND kind = 'compaction')",
        [cid],
    )
    assert before == [(c.before,)]  # the person's turns before the compaction are reachable


@pytest.mark.parametrize("case", CASES)
def test_the_compaction_sub_agent_is_titled_for_what_it_is_and_holds_no_turn_of_the_person(
    warehouses: dict[str, Path], case: str
) -> None:
    c = compacted(case)
    assert c.session is not None and c.compactor is not None
    db = warehouses["claude_code"]
    cid = conversation(db, c.compactor)
    ((title, parent),) = query(
        db, "SELECT title, parent_conversation_id FROM conversations WHERE conversation_id = ?", [cid]
    )
    assert title == "compaction: the summary of the conversation so far"
    assert parent == conversation(db, c.session)
    assert query(
        db, "SELECT origin, count(*) FROM messages WHERE conversation_id = ? GROUP BY 1 ORDER BY 1", [cid]
    ) == [("assistant", 1), ("harness", 2)]
    # the request it answers is Claude Code's summary prompt, not anything the person typed
    text = json.loads(c.compactor.read_text().splitlines()[1])["message"]["content"]
    assert text.startswith("Your task is to create a detailed summary of the conversation so far")


@pytest.mark.parametrize("case", CASES)
def test_the_transcript_shows_the_compaction_where_it_happened(warehouses: dict[str, Path], case: str) -> None:
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    c = compacted(case)
    assert c.session is not None
    db = warehouses["claude_code"]
    cid = conversation(db, c.session)
    ((at,),) = query(db, "SELECT position FROM events WHERE conversation_id = ? AND kind = 'compaction'", [cid])
    client = TestClient(create_app(db), base_url="http://127.0.0.1")
    first = client.get(f"/c/{cid}").text
    assert 'data-position="0"' in first
    if at >= 100:  # past the first window of the transcript
        assert "context compacted" not in first  # it opens at the first prompt
    page = client.get(f"/c/{cid}?at={at}").text
    marker = page.index(f'id="e{at}-1"')
    assert marker < page.index(f'id="m{at}"')
    assert (
        f'⋯ context compacted (auto) <span class="meta">{c.pre_tokens:,} tokens before</span>'
        in page[marker : marker + 300]
    )


TEMPLATE = "\n## User Input\n\n```text\n\n```\n\nYou **MUST** consider the user input before proceeding"


@pytest.mark.parametrize("case", CASES)
def test_a_prompt_template_is_the_persons_turn_but_its_body_gives_no_title_and_no_words(
    warehouses: dict[str, Path], case: str
) -> None:
    """Codex 0.77 with spec-kit's prompts: templates invoked with nothing typed after the command stay the person's
    turns; their words are empty, so the title is the first thing the person wrote, not "## User Input"."""
    t = templated(case)
    assert t.rollout is not None
    db = warehouses["codex"]
    cid = conversation(db, t.rollout)
    raw = [
        p["payload"]["message"]
        for p in json_lines(t.rollout)
        if p.get("type") == "event_msg" and p["payload"].get("type") == "user_message"
    ]
    templates = sum(m.startswith(TEMPLATE) for m in raw)
    assert (len(raw), templates) == (t.person, t.templates)
    assert raw[0].startswith(TEMPLATE)  # the session opens with a template: a title from its body would be wrong
    rows = query(
        db,
        "SELECT content, person_text FROM messages WHERE conversation_id = ? AND origin = 'person' "
        "AND on_main_path ORDER BY position",
        [cid],
    )
    assert len(rows) == t.person
    assert [words for content, words in rows if content.startswith(TEMPLATE)] == [""] * templates
    assert all(words == content.strip() for content, words in rows if not content.startswith(TEMPLATE))
    # AGENTS.md and the environment context are injected as user messages: neither is the person's
    assert not any(c.startswith(("# AGENTS.md", "<environment_context>")) for c, _ in rows)
    first = next(m for m in raw if not m.startswith(TEMPLATE))
    assert query(db, "SELECT title FROM conversations WHERE conversation_id = ?", [cid]) == [(first.split("\n")[0],)]


@pytest.mark.parametrize("case", CASES)
def test_keywords_come_from_the_persons_own_words(warehouses: dict[str, Path], tmp_path: Path, case: str) -> None:
    import shutil

    t = templated(case)
    assert t.rollout is not None
    db = tmp_path / "w.duckdb"
    shutil.copy(warehouses["codex"], db)
    code, _, err = run_cli("report", "--db", str(db), "--out", str(tmp_path / "r"), "--format", "json")
    assert code == 0, err
    cid = conversation(db, t.rollout)
    words = " ".join(
        t
        for (t,) in query(db, "SELECT person_text FROM messages WHERE conversation_id = ? AND origin = 'person'", [cid])
    ).lower()
    terms = [
        t
        for (t,) in query(
            db, "SELECT term FROM conversation_keywords WHERE conversation_id = ? AND kind = 'keyword'", [cid]
        )
    ]
    assert len(terms) == 10
    assert [t for t in terms if t not in words] == []


@pytest.mark.parametrize("case", CASES)
def test_claude_code_titles_and_words_skip_the_ide_context_before_the_prompt(
    warehouses: dict[str, Path], case: str
) -> None:
    """Claude Code in VS Code puts <ide_opened_file>/<ide_selection> blocks before the prompt: the person's turn,
    but the words are what follows (a selection sent alone leaves none)."""
    c = compacted(case)
    assert c.session is not None
    db = warehouses["claude_code"]
    cid = conversation(db, c.session)
    ((title,),) = query(db, "SELECT title FROM conversations WHERE conversation_id = ?", [cid])
    assert title == c.title
    rows = query(
        db,
        "SELECT content, person_text FROM messages WHERE conversation_id = ? AND origin = 'person' "
        "AND on_main_path AND starts_with(content, '<ide_') ORDER BY position",
        [cid],
    )
    assert len(rows) == c.ide
    assert all(not words.startswith("<ide_") and words in content for content, words in rows)
    assert [words for _, words in rows].count("") == c.ide_alone  # a selection sent alone


def test_a_model_switch_inside_a_gemini_session_is_not_hidden_under_its_first_model(tmp_path: Path) -> None:
    """Gemini CLI writes the model on every reply: a session that began on gemini-2.5-flash (2 replies) and went
    on with gemini-2.5-pro (8) is a run of both, each reply priced at its own model."""
    path = (
        SHARED
        / "data"
        / "agent-logs"
        / "gemini_cli"
        / "KuantumQuest+MyDotFiles-HyDE"
        / ".gemini"
        / "tmp"
        / "5dd181630c95c1112a25e5ca68b4816c9472a887284f756197a289e8e7a2d910"
        / "chats"
        / "session-2025-09-28T10-42-50228c11.json"
    )
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
        ("gemini-2.5-flash", 2),
        ("gemini-2.5-pro", 8),
    ]
    # the transcript names each response's model where it changes
    from starlette.testclient import TestClient

    from forensics.serve.app import create_app

    ((cid,),) = query(db, "SELECT conversation_id FROM conversations")
    page = TestClient(create_app(db), base_url="http://127.0.0.1").get(f"/c/{cid}").text
    shown = re.findall(r'<span class="model[^"]*" title="[^"]*">(⇄ )?([\w.\-]+)</span>', page)
    changes = [m for i, m in enumerate(replies) if i == 0 or m != replies[i - 1]]
    assert (
        [m for _, m in shown] == changes == ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-pro"]
    )
    assert [bool(arrow) for arrow, _ in shown] == [False, True, True, True]


# Cline 3.x of 2026 (native tool calling; the history's metrics lump the cache writes with the reads)
CLINE_REAL = ("gmfstu/Online-Card-Architecture", "exported_conversation_1769053680585/api_conversation_history.json")
CLINE_CASES = {
    # name: (history file, figures (conversations, person, calls, linked, errors), (input, output, cache read, write))
    "built": (
        BUILT / "cline" / "1767000000000" / "api_conversation_history.json",
        (1, 1, 3, 2, 1),
        (30, 694, 18466, 9768),
    ),
    "real": (
        Path(os.environ["FORENSICS_REAL_SHAPES"]) / "cline" / CLINE_REAL[1]
        if os.environ.get("FORENSICS_REAL_SHAPES")
        else SHARED / "data" / "agent-logs" / "cline_roo" / CLINE_REAL[0].replace("/", "+") / CLINE_REAL[1],
        (1, 1, 47, 46, 1),
        (470, 23389, 1514932, 66105),
    ),
}


@pytest.mark.parametrize("case", sorted(CLINE_CASES))
def test_cline_2026_native_calls_and_the_cache_writes_apart_from_the_reads(case: str, tmp_path: Path) -> None:
    """gmfstu/Online-Card-Architecture's exported Cline task (2026-01, claude-sonnet-4-5; no licence, so its shape
    is built in fixtures/built/cline): every response one ``tool_use`` block, its result user text
    ``[name for '…'] Result:`` (no ``tool_result`` block), ``metrics.tokens.cached`` = the request's cache writes
    + reads (47 of 47 requests), which the UI's ``api_req_started`` gives apart. Read as cache reads alone, the
    66,105 tokens written were priced at a tenth of their price."""
    from tests.agent_counts import cline_tokens, real_cline

    history, figures, usage = CLINE_CASES[case]
    if not history.is_file():
        pytest.skip(f"the real Cline task is not here ({history})")
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(history.parent), "--db", str(db))
    assert code == 0, err
    got = _cline_figures(db)
    assert got == figures == tuple(real_cline(history.parent))
    tokens = query(
        db,
        "SELECT sum(input_tokens), sum(output_tokens), sum(cache_read_input_tokens), "
        "sum(cache_creation_input_tokens) FROM message_usage",
    )[0]
    assert tokens == usage and sum(tokens) == cline_tokens(history.parent)


def _cline_figures(db: Path) -> tuple[int, ...]:
    """Conversations, person turns on the main path, calls, linked calls, linked calls whose result is an error."""
    return tuple(
        query(
            db,
            "SELECT (SELECT count(*) FROM conversations), (SELECT count(*) FROM messages WHERE origin = 'person' "
            "AND on_main_path), count(*), count(result_seq), count(*) FILTER (WHERE result_seq IS NOT NULL AND "
            "is_error) FROM tool_calls",
        )[0]
    )


CLINE_UI_REAL = ("CoreGems/Cline-Xray", "task_sample/ui_messages.json")
CLINE_UI_CASES = {
    # name: (ui_messages.json, figures (conversations, person, calls, linked, errors), tokens)
    "built": (BUILT / "cline_ui" / "1770500000000" / "ui_messages.json", (1, 2, 5, 4, 0), 23120),
    "real": (
        Path(os.environ["FORENSICS_REAL_SHAPES"]) / "cline" / CLINE_UI_REAL[1]
        if os.environ.get("FORENSICS_REAL_SHAPES")
        else SHARED / "data" / "agent-logs" / "cline_roo" / CLINE_UI_REAL[0].replace("/", "+") / CLINE_UI_REAL[1],
        (1, 7, 73, 71, 0),
        6748422,
    ),
}


@pytest.mark.parametrize("case", sorted(CLINE_UI_CASES))
def test_cline_ui_alone_links_results_that_name_the_edited_file_in_full(case: str, tmp_path: Path) -> None:
    """CoreGems/Cline-Xray's sample task (a Cline viewer's `task_sample/ui_messages.json` of 2026-02, Windows; no
    licence, so its shape is built in fixtures/built/cline_ui): the task opens with a `say: task` record (the
    person's), and a response that made two edits (`editedExistingFile`, the path relative to the workspace) is
    answered by results naming each file absolute with backslashes: matched by neither the echo nor "the only
    open call of that tool", both stayed unlinked (69 of 73 answered, the counter 71)."""
    from tests.agent_counts import cline_tokens, real_cline

    ui, figures, tokens = CLINE_UI_CASES[case]
    if not ui.is_file():
        pytest.skip(f"the real Cline task is not here ({ui})")
    db = tmp_path / "w.duckdb"
    code, _, err = run_cli("ingest", str(ui), "--db", str(db))
    assert code == 0, err
    got = _cline_figures(db)
    assert got == figures == tuple(real_cline(ui.parent))
    (total,) = query(
        db,
        "SELECT sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0) + coalesce(cache_read_input_tokens, 0) "
        "+ coalesce(cache_creation_input_tokens, 0)) FROM message_usage",
    )[0]
    assert total == tokens == cline_tokens(ui.parent)
