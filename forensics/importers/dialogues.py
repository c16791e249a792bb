"""Labeled dialogue JSONL (the uniform format of shared/data): one dialogue per line, turns with ``idx``.

Each line is ``{"dialogue_id", "language", "turns": [{"idx", "role", "text", "topic", "shift"}]}``. A
dialogue becomes a conversation whose native id is ``dialogue_id`` and whose message positions are the
turns' ``idx``, so a topic switch found at a position can be checked against the label of that turn.
The labels themselves are not imported: `forensics report --labels FILE` reads them from the file.
A bad line is quarantined with its raw bytes, like any other importer.
"""
from __future__ import annotations

from pathlib import Path

import orjson

from forensics.importers.records import Batch, Entry, Message, Parsed, split_lines, stable_id
from forensics.importers.registry import Format

ROLES = {"user": "user", "assistant": "assistant", "system": "system"}


def looks_like_dialogues(head: bytes) -> bool:
    """Sniff: the first line is an object with ``dialogue_id`` and a ``turns`` list."""
    first = head.split(b"\n", 1)[0]
    return b'"dialogue_id"' in first and b'"turns"' in first


def parse_file(path: str, source_id: str, fingerprint: str) -> Parsed:
    """Worker: every line one conversation; positions are the turns' ``idx``."""
    lines = split_lines(Path(path).read_bytes())
    b = Batch()
    b.rows_read = len(lines)
    name = Path(path).name
    for lineno, raw in enumerate(lines, 1):
        problem, turns, did = _read(raw)
        if problem:
            b.messages_read += 1
            b.quarantine(f"{name}:{lineno}", problem, raw)
            continue
        entries = [Entry(i, str(t["idx"]), str(turns[i - 1]["idx"]) if i else None, t["idx"],
                         Message(ROLES[t["role"]], t["text"], [], [], None, False, None))
                   for i, t in enumerate(turns)]
        b.messages_read += len(turns)
        b.add_conversation(stable_id(source_id, did), did, None, None, None, None, None,
                           f"{fingerprint}:{lineno}", entries)
    if lines and not b.conv["conversation_id"]:
        b.state["error"] = "no line is a labeled dialogue (dialogue_id + turns)"
    return Parsed.of(b)


def _read(raw: bytes) -> tuple[str, list[dict], str]:
    """(problem or "", turns sorted by idx, dialogue id)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        return "invalid JSON: " + str(e).splitlines()[0][:120], [], ""
    if not isinstance(obj, dict) or not isinstance(obj.get("turns"), list) or obj.get("dialogue_id") is None:
        return "not a labeled dialogue (needs dialogue_id and a turns list)", [], ""
    turns = obj["turns"]
    for t in turns:
        if not (isinstance(t, dict) and isinstance(t.get("idx"), int) and not isinstance(t.get("idx"), bool)
                and t.get("role") in ROLES and isinstance(t.get("text"), str)):
            return "a turn lacks an integer idx, a role (user/assistant/system) or a text", [], ""
    turns = sorted(turns, key=lambda t: t["idx"])
    if len({t["idx"] for t in turns}) != len(turns):
        return "duplicate turn idx", [], ""
    return "", turns, str(obj["dialogue_id"])


FORMAT = Format("dialogues", "labeled dialogue JSONL (dialogue_id + turns with idx, role, text, topic, shift)",
                lambda probe: looks_like_dialogues(probe.head), task=parse_file, suffixes=(".jsonl",))
