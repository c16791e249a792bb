"""Claude Code's prompt history, ``~/.claude/history.jsonl``: every prompt the person typed, for the up-arrow.

One line per prompt: ``display`` (the text as typed, ``/commands`` and ``!`` shell input included),
``pastedContents``, ``timestamp`` (ms), ``project`` (the working directory) and, in later versions,
``sessionId``. The transcripts in ``projects/`` beside it hold the same prompts with the replies, so a prompt
whose session (by ``sessionId``, else by project folder) has a transcript there is read there: skipped and
counted. The others (transcripts Claude Code has since cleaned up) become one conversation of the person's
messages per session, or per project when the line names no session.
"""

from __future__ import annotations

import re
from pathlib import Path

from forensics.formats.kit.model import Conversation, Log, Turn

NAME = "history.jsonl"


def is_prompt_history(path: Path, first: object) -> bool:
    return path.name == NAME and isinstance(first, dict) and "display" in first


def read(path: str, log: Log) -> list[Conversation]:
    projects = Path(path).parent / "projects"
    transcripts = {f.stem for f in projects.glob("*/*.jsonl")} if projects.is_dir() else set()
    folders = {d.name for d in projects.iterdir() if d.is_dir()} if projects.is_dir() else set()
    prompts: dict[str, list[Turn]] = {}
    for n, _raw, obj in log.json_lines(Path(path).read_bytes()):
        text, sid, project = obj.get("display"), obj.get("sessionId"), obj.get("project")
        if not isinstance(text, str):
            log.quarantine(f"{log.name}:{n}", "prompt-history line without a display text", obj)
            continue
        if (sid in transcripts) if isinstance(sid, str) else (_folder(project) in folders):
            log.skip("prompts whose session has a transcript in projects/ (read there)")
            continue
        key = sid if isinstance(sid, str) else f"project:{project}"
        prompts.setdefault(key, []).append(Turn("user", text, at=obj.get("timestamp"), origin="person"))
    if prompts:
        log.notes.append("prompt history: the person's prompts only (no replies in this file)")
    return [
        Conversation(key, turns, title="Claude Code prompt history", provider="anthropic", created=turns[0].at)
        for key, turns in prompts.items()
    ]


def _folder(project: object) -> str | None:
    """The folder name Claude Code gives a project's transcripts: its path with every other character a dash."""
    return re.sub(r"[^A-Za-z0-9-]", "-", project) if isinstance(project, str) else None
