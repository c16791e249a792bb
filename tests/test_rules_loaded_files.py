"""Instruction files as real logs show them loaded: Claude Code's attachments (``nested_memory``, ``instructions``),
the reminder's newer sections, a forked Codex thread's copied AGENTS.md; and the report's table per loaded file and
rule."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from conftest import SHARED

from forensics import api
from forensics.analyzers.rules import audit
from forensics.analyzers.rules.section import _per_file
from forensics.analyzers.rules.sources import injected

AGENT_LOGS = SHARED / "data" / "agent-logs"
FORKED = "codex_cli/LAF-US+IDAHO-VAULT/.codex/sessions/2026/04/15"


def _line(uid: str, parent: str | None, kind: str, **more: object) -> str:
    base = {
        "uuid": uid,
        "parentUuid": parent,
        "type": kind,
        "sessionId": "s1",
        "timestamp": f"2026-05-01T10:00:{uid[-2:]}Z",
    }
    return json.dumps(base | more)


def _session(tmp: Path) -> Path:
    """A Claude Code 2.1.x session: the files loaded at its start (an ``instructions`` attachment), a nested CLAUDE.md
    read on the way (``nested_memory``), then two pushes, one before and one after the nested file."""
    lines = [
        _line(
            "a-00",
            None,
            "attachment",
            attachment={
                "type": "instructions",
                "reason": "session_start",
                "files": [
                    {"path": "/p/CLAUDE.md", "type": "Project", "content": "# Rules\n\n- Never run `git push`.\n"},
                    {"path": "/home/u/.claude/CLAUDE.md", "type": "User", "content": "- Keep answers short.\n"},
                ],
            },
        ),
        _line("u-01", "a-00", "user", message={"role": "user", "content": "ship it"}),
        _line(
            "x-02",
            "u-01",
            "assistant",
            message={
                "id": "m1",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "git status"}}],
            },
        ),
        _line(
            "r-03",
            "x-02",
            "user",
            message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "clean"}]},
        ),
        _line(
            "n-04",
            "r-03",
            "attachment",
            attachment={
                "type": "nested_memory",
                "path": "/p/web/CLAUDE.md",
                "content": {"path": "/p/web/CLAUDE.md", "type": "Project", "content": "Use pnpm, not npm.\n"},
                "displayPath": "web/CLAUDE.md",
            },
        ),
        _line(
            "x-05",
            "n-04",
            "assistant",
            message={
                "id": "m2",
                "role": "assistant",
                "model": "claude-x",
                "content": [
                    {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "npm install && git push"}}
                ],
            },
        ),
        _line(
            "r-06",
            "x-05",
            "user",
            message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}]},
        ),
        _line("z-07", "r-06", "attachment", attachment={"type": "companion_intro", "name": "Umbra"}),
    ]
    p = tmp / "projects" / "-p" / "s1.jsonl"
    p.parent.mkdir(parents=True)
    p.write_text("\n".join(lines) + "\n")
    return p


def _audit(db: Path) -> tuple[duckdb.DuckDBPyConnection, object]:
    con = duckdb.connect(str(db))
    con.execute("CREATE TEMP TABLE sel_conversations AS SELECT conversation_id FROM conversations")
    return con, audit(con)


def test_claude_code_attachments_load_their_files_at_their_position(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    api.ingest([str(_session(tmp_path).parent)], db=str(db))
    con, found = _audit(db)
    rows = con.execute(
        "SELECT position, role, origin, substr(content, 1, 40) FROM messages WHERE on_main_path ORDER BY position"
    ).fetchall()
    assert rows[0] == (0, "user", "harness", "Contents of /p/CLAUDE.md (project instru")
    assert rows[4] == (4, "user", "harness", "Contents of /p/web/CLAUDE.md:\n\nUse pnpm,")
    assert len(rows) == 7  # the companion attachment stays skipped
    by = {(r.path, r.text): r for r in found.rules}
    push = by[("/p/CLAUDE.md", "Never run `git push`.")]
    pnpm = by[("/p/web/CLAUDE.md", "Use pnpm, not npm.")]
    assert (push.source, push.position, pnpm.source, pnpm.position) == ("CLAUDE.md", 0, "CLAUDE.md", 4)
    assert by[("/home/u/.claude/CLAUDE.md", "Keep answers short.")].check is None
    verdicts = sorted((v.position, v.rule == push.key, v.verdict) for v in found.verdicts)
    assert verdicts == [(2, True, "kept"), (5, False, "broke"), (5, True, "broke")]
    files, per_rule = _per_file(found)
    assert files.df.select("file", "rules", "checkable", "not_checkable", "kept", "broke").rows() == [
        ("CLAUDE.md /home/u/.claude/CLAUDE.md", 1, 0, 1, 0, 0),
        ("CLAUDE.md /p/CLAUDE.md", 1, 1, 0, 1, 1),
        ("CLAUDE.md /p/web/CLAUDE.md", 1, 1, 0, 0, 1),
    ]
    assert per_rule.df.select("rule", "kept", "broke", "adherence").rows() == [
        ("Never run `git push`.", 1, 1, "50%"),
        ("Use pnpm, not npm.", 0, 1, "0%"),
        ("Keep answers short.", None, None, "not checkable"),
    ]


def test_reminder_sections_end_a_file_and_a_bare_path_must_be_a_markdown_path() -> None:
    text = (
        "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\n"
        "Contents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\nNever run `rm -rf`.\n"
        "Contents of /m/MEMORY.md (user's auto-memory, persists across conversations):\n\n- likes tabs\n"
        "# userEmail\nThe user's email address is a@b.c.\n# gitStatus\nCurrent branch: main\n</system-reminder>"
    )
    files = injected(text, False)
    assert [(f.source, f.path, f.body.strip()) for f in files] == [
        ("CLAUDE.md", "/p/CLAUDE.md", "Never run `rm -rf`."),
        ("MEMORY.md", "/m/MEMORY.md", "- likes tabs"),
    ]
    assert [(f.source, f.path) for f in injected("Contents of /r/.claude/rules/testing.md:\n\nRun tests.", False)] == [
        (".claude/rules", "/r/.claude/rules/testing.md")
    ]
    assert injected("Contents of notes.md:\n\nsomething", False) == []  # a person's words, no path
    assert injected("Contents of the file README.md:\nhi", False) == []


@pytest.mark.skipif(not (AGENT_LOGS / FORKED).exists(), reason="needs ../shared/data/agent-logs")
def test_a_forked_codex_threads_copied_agents_md_was_in_its_context(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    api.ingest([str(AGENT_LOGS / FORKED)], db=str(db))
    _, found = _audit(db)
    agents = [r for r in found.rules if r.source == "AGENTS.md"]
    assert {r.position for r in agents} == {0}
    assert {r.path for r in agents} == {"C:\\Users\\loganf\\Documents\\IDAHO-VAULT/AGENTS.md"}
    assert len(agents) == 6
