"""A prompt log (the person's prompts with no reply: Gemini CLI's logs.json, Cursor's prompt history) is not judged
for topic switches, and the report says so rather than marking nothing in silence (docs/topics-evaluation.md,
issue 43 round 3: judged by their content alone, a labeled prompt log segmented worse than marking nothing)."""

from __future__ import annotations

import json
from pathlib import Path

from forensics import ingest
from forensics.analyzers.schema import defaults
from forensics.api import report
from forensics.kernel.selection import Selection
from tests.conftest import query


def _prompt(session: str, i: int, text: str) -> dict:
    return {"sessionId": session, "messageId": i, "type": "user", "message": text, "timestamp": f"2026-01-0{i + 1}"}


def test_a_prompt_log_is_counted_as_not_judged_and_gets_no_switch(tmp_path: Path) -> None:
    project = tmp_path / "tmp" / "proj"
    project.mkdir(parents=True)
    (project / "logs.json").write_text(
        json.dumps(
            [
                _prompt("aaaaaaaa-0000", 0, "Add a login page to the dashboard in src/pages/Login.tsx"),
                _prompt("aaaaaaaa-0000", 1, "still fails with a 500 on submit"),
                _prompt("aaaaaaaa-0000", 2, "Now write a migration script for the billing tables in db/migrate.py"),
                _prompt("bbbbbbbb-0000", 0, "what does this regex do"),  # one prompt: nothing to switch from
            ]
        )
    )
    db = tmp_path / "w.duckdb"
    ingest([project], db=db)
    rep, _ = report(db, tmp_path / "out", ["json"], "topics", Selection(), defaults())
    sec = rep.sections[0]
    assert sec.metrics["prompt_logs"] == {"conversations": 1, "prompts": 3}
    assert sec.metrics["judged_messages"] == 0
    assert "Not judged: 1 prompt log(s), 3 prompts with no reply between them" in sec.summary
    assert query(db, "SELECT count(*) FROM topic_switches") == [(0,)]
