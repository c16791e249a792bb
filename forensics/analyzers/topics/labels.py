"""Reading topic labels: the uniform dialogue JSONL of shared/data, or just ids and topic-starting indices.

Accepted lines (one object per conversation):
- ``{"dialogue_id": ..., "turns": [{"idx": 0, "shift": false, ...}, ...]}`` (shared/data);
- ``{"dialogue_id": ..., "shifts": [8, 13]}`` (``topic_shifts`` and ``id`` are accepted too, so the
  gen_corpus labels files work as they are).
The id is matched against conversations' native ids; indices are main-path positions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from forensics.analyzers.input_jsonl import json_lines
from forensics.kernel.errors import ForensicsError


@dataclass(frozen=True)
class Labels:
    path: Path
    shifts: dict[str, list[int]]  # dialogue id -> positions that start a topic
    has_turns: bool  # the file carries the dialogues themselves (importable with --format dialogues)


def read_labels(path: str | os.PathLike[str]) -> Labels:
    p = Path(path)
    shifts: dict[str, list[int]] = {}
    has_turns = False
    for lineno, obj in json_lines(p, "labels", "labels are JSONL, one dialogue per line"):
        key = obj.get("dialogue_id", obj.get("id")) if isinstance(obj, dict) else None
        if key is None:
            raise ForensicsError(f"{p}:{lineno}: a labels line needs dialogue_id (or id)")
        if isinstance(obj.get("turns"), list):
            has_turns = True
            try:
                shifts[str(key)] = sorted(int(t["idx"]) for t in obj["turns"] if t.get("shift"))
            except (KeyError, TypeError, ValueError, AttributeError):
                raise ForensicsError(f"{p}:{lineno}: every turn needs an integer idx") from None
            continue
        marks = obj.get("shifts", obj.get("topic_shifts"))
        if not isinstance(marks, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in marks):
            raise ForensicsError(f"{p}:{lineno}: needs turns, or shifts: a list of topic-starting positions")
        shifts[str(key)] = sorted(marks)
    if not shifts:
        raise ForensicsError(f"{p}: no labeled dialogue in this file")
    return Labels(p, shifts, has_turns)
