"""Sessions the Entire CLI stored again at each checkpoint: one conversation per session (docs/formats.md#entire-cli-checkpoints).

The Entire CLI commits the agent's own session file beside each checkpoint (``<checkpoint>/<n>/full.jsonl``, with
``metadata.json`` naming its ``session_id``). From its 0.4 builds on, every checkpoint of a session holds the whole
session file as it was then, so a session with five checkpoints is five copies, each longer than the one before.
Read as they are, one session would be five conversations, its first prompts counted five times.

What a user expects is the session once, whole: of the transcripts of one session, the longest is read; every
other one whose lines the longest holds (at least half of its distinct lines, the first included: a copy written
again differs only where the CLI re-serialised a line) is not read but counted as *superseded*, with a run row
(``import_runs.status``) naming the file kept. A transcript the longest does not hold (the Entire CLI's builds of
January 2026 stored only the part since the previous checkpoint) stays a conversation of its own. A transcript
superseded after it was imported (a later checkpoint arrived) loses its stored conversations in the same run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

TRANSCRIPT = "full.jsonl"  # the agent's session file, as the Entire CLI names it in a checkpoint
METADATA = "metadata.json"  # beside it: session_id, checkpoint_id, created_at, agent
HELD = 0.5  # the share of a transcript's distinct lines the longer one must hold
SHORT = 8  # lines shorter than this (a JSON file's brackets) say nothing about whose they are


@dataclass(frozen=True)
class Transcript:
    """One checkpoint's copy of a session file."""

    path: Path
    session: str
    created: str
    size: int


def transcript_of(path: Path) -> Transcript | None:
    """The checkpoint transcript at ``path``: a ``full.jsonl`` whose ``metadata.json`` beside it names a session and a
    checkpoint; None for any other file."""
    if path.name != TRANSCRIPT:
        return None
    try:
        doc = orjson.loads(path.with_name(METADATA).read_bytes())
        size = path.stat().st_size
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("session_id"), str) or "checkpoint_id" not in doc:
        return None
    created = doc.get("created_at")
    return Transcript(path, doc["session_id"], created if isinstance(created, str) else "", size)


def _lines(path: Path) -> list[bytes]:
    """Its distinct lines of some length, in file order."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    return list(dict.fromkeys(s for line in data.splitlines() if len(s := line.strip()) >= SHORT))


@dataclass(frozen=True)
class Superseded:
    """A transcript not read, and the one read in its place."""

    path: Path
    kept: Path
    held: int  # its distinct lines found in the kept one
    lines: int  # its distinct lines

    def note(self) -> str:
        rel = os.path.relpath(self.kept, os.path.commonpath([self.kept, self.path]))
        rewritten = self.lines - self.held
        how = f"; {rewritten} of its {self.lines} lines written again differently there" if rewritten else ""
        return f"superseded: an earlier checkpoint of this session, which {rel} holds whole{how}"


def supersede(paths: Iterable[Path]) -> list[Superseded]:
    """The checkpoint transcripts among ``paths`` that a longer transcript of the same session holds."""
    sessions: dict[str, list[Transcript]] = {}
    for p in paths:
        t = transcript_of(p)
        if t is not None:
            sessions.setdefault(t.session, []).append(t)
    out: list[Superseded] = []
    for group in sessions.values():
        if len(group) < 2:
            continue
        group.sort(key=lambda t: (t.size, t.created, str(t.path)), reverse=True)  # the longest, then the newest
        kept: list[tuple[Transcript, set[bytes]]] = []
        for t in group:
            lines = _lines(t.path)
            holder = next(((k, held) for k, held in kept if _holds(held, lines)), None)
            if holder is None:
                kept.append((t, set(lines)))
            else:
                out.append(Superseded(t.path, holder[0].path, sum(line in holder[1] for line in lines), len(lines)))
    return out


def _holds(held: set[bytes], lines: list[bytes]) -> bool:
    """A longer transcript holds this one: its first line, and at least half of its lines."""
    if not lines or lines[0] not in held:
        return False
    return sum(line in held for line in lines) >= HELD * len(lines)
