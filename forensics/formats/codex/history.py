"""Codex's own indexes beside its rollouts in ``~/.codex``.

``history.jsonl`` (codex-rs ``message_history.rs``): every message the person submitted, one line each,
``{"session_id", "ts" (seconds), "text"}``. A prompt whose session has a rollout under ``sessions/`` or
``archived_sessions/`` beside it is read there (skipped and counted); the others become one conversation
of the person's messages per session. ``session_index.jsonl`` (``{"id", "thread_name", "updated_at"}``) names
threads: a side file, counted, no conversation.
"""

from __future__ import annotations

import re
from pathlib import Path

from forensics.formats.kit.model import Conversation, Log, Turn

HISTORY, INDEX = "history.jsonl", "session_index.jsonl"
UUID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl?$")


def kind_of(path: Path, first: object) -> str | None:
    """``history`` or ``index`` when the file is one of these, else None."""
    if not isinstance(first, dict):
        return None
    if path.name == HISTORY and "session_id" in first and "text" in first:
        return "history"
    if path.name == INDEX and "id" in first and "thread_name" in first:
        return "index"
    return None


def read(path: str, log: Log, kind: str) -> list[Conversation]:
    data = Path(path).read_bytes()
    if kind == "index":
        rows = sum(1 for _ in log.json_lines(data))
        log.skip("thread names (side file of the rollouts)", rows)
        log.notes.append("side file: thread names of the rollouts in sessions/")
        return []
    home = Path(path).parent
    recorded = {
        m.group(1)
        for folder in ("sessions", "archived_sessions")
        if (home / folder).is_dir()
        for f in (home / folder).rglob("rollout-*")
        if (m := UUID.search(f.name))
    }
    prompts: dict[str, list[Turn]] = {}
    for n, _raw, obj in log.json_lines(data):
        sid, text = obj.get("session_id"), obj.get("text")
        if not isinstance(sid, str) or not isinstance(text, str):
            log.quarantine(f"{log.name}:{n}", "history line without a session_id or text", obj)
        elif sid in recorded:
            log.skip("prompts whose session has a rollout beside it (read there)")
        else:
            prompts.setdefault(sid, []).append(Turn("user", text, at=obj.get("ts"), origin="person"))
    if prompts:
        log.notes.append("message history: the person's messages only (no replies in this file)")
    return [
        Conversation(sid, turns, title="Codex message history", provider="openai", created=turns[0].at)
        for sid, turns in prompts.items()
    ]
