"""Labeled dialogue JSONL (the uniform format of shared/data): one dialogue per line, turns with ``idx``.

Each line is ``{"dialogue_id", "language", "turns": [{"idx", "role", "text", "topic", "shift"}]}``. A
dialogue becomes a conversation whose native id is ``dialogue_id`` and whose message positions are the
turns' ``idx``, so a topic switch found at a position can be checked against the label of that turn.
The labels themselves are not imported: `forensics report --labels FILE` reads them from the file.
A bad line is quarantined with its raw bytes, like any other importer; a bad turn alone (its JSON), leaving a
gap in the positions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forensics.formats.kit.declare import Format
from forensics.formats.kit.records import (
    Batch,
    Entry,
    Message,
    Parsed,
    json_text,
    kind,
    read_object,
    split_lines,
    stable_id,
)

ROLES = {"user": "user", "assistant": "assistant", "system": "system"}
POSITION_MAX = (1 << 31) - 1  # positions are 32-bit in the warehouse


def looks_like_dialogues(head: bytes) -> bool:
    """Sniff: the first line is an object with ``dialogue_id`` and a ``turns`` list."""
    first = head.split(b"\n", 1)[0]
    return b'"dialogue_id"' in first and b'"turns"' in first


def parse_file(path: str, source_id: str, fingerprint: str) -> Parsed:
    """Worker: every line one conversation; positions are the turns' ``idx``. A line that is no dialogue is
    quarantined whole; a turn that cannot be used (no integer idx, a role that is not user/assistant/system,
    a text that is not text, an idx already taken) is quarantined alone and leaves a gap in the positions."""
    lines = split_lines(Path(path).read_bytes())
    b = Batch()
    b.rows_read = len(lines)
    name = Path(path).name
    for lineno, raw in enumerate(lines, 1):
        where = f"{name}:{lineno}"
        obj, problem = read_object(raw)
        if not problem and not (isinstance(obj.get("turns"), list) and _scalar(obj.get("dialogue_id"))):
            problem = "not a labeled dialogue (needs dialogue_id and a turns list)"
        if problem:
            b.messages_read += 1
            b.quarantine(where, problem, raw)
            continue
        turns = _turns(b, obj["turns"], where)
        entries = [
            Entry(
                i,
                str(t["idx"]),
                str(turns[i - 1]["idx"]) if i else None,
                t["idx"],
                Message(ROLES[t["role"]], t["text"], [], [], None, False, None),
            )
            for i, t in enumerate(turns)
        ]
        did = str(obj["dialogue_id"])
        if not entries:  # every turn quarantined: no conversation of nothing
            continue
        b.add_conversation(
            stable_id(source_id, did), did, None, None, None, None, None, f"{fingerprint}:{lineno}", entries
        )
    if lines and not b.conv["conversation_id"]:
        b.state["error"] = "no line is a labeled dialogue (dialogue_id + turns)"
    return Parsed.of(b)


def _turns(b: Batch, turns: list[Any], where: str) -> list[dict[str, Any]]:
    """The usable turns sorted by idx (each counted as a message read); the others quarantined."""
    ok: dict[int, dict[str, Any]] = {}
    for k, t in enumerate(turns):
        b.messages_read += 1
        problem = _problem(t)
        if not problem and t["idx"] in ok:
            problem = f"duplicate turn idx {t['idx']}"
        if problem:
            b.quarantine(f"{where}[{k}]", problem, json_text(t).encode())
            continue
        ok[t["idx"]] = t
    return [ok[i] for i in sorted(ok)]


def _problem(t: object) -> str:
    if not isinstance(t, dict):
        return f"turn is not a JSON object (a {kind(t)})"
    idx, role = t.get("idx"), t.get("role")
    if type(idx) is not int or not 0 <= idx <= POSITION_MAX:
        return "turn has no integer idx (0 to 2^31 - 1)"
    if not (isinstance(role, str) and role in ROLES):
        return f"turn has no role user/assistant/system (it has {str(role)[:40]!r})"
    return "" if isinstance(t.get("text"), str) else "turn has no text"


def _scalar(v: object) -> bool:
    return isinstance(v, (str, int)) and not isinstance(v, bool)


FORMAT = Format(
    "dialogues",
    "labeled dialogue JSONL (dialogue_id + turns with idx, role, text, topic, shift)",
    lambda probe: looks_like_dialogues(probe.head),
    task=parse_file,
    suffixes=(".jsonl",),
)
