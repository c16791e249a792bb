"""The reviewer's problem labels of ``../shared/data/problems/problems.jsonl``, matched to a warehouse of the
shared agent logs by source + native id, and split into a dev half and a held-out half by a stable hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

KINDS = (
    "lost_focus",
    "context_crowded",
    "user_repeated",
    "instruction_violated",
    "redundant_work",
    "loop",
    "gave_up_or_false_success",
    "frustration",
)


def half(source: str, native_id: str) -> str:
    """'dev' or 'held': the first byte of sha256(source NUL native id), even or odd. Fixed: never tune it."""
    return "dev" if hashlib.sha256(f"{source}\0{native_id}".encode()).digest()[0] % 2 == 0 else "held"


@dataclass
class Labeled:
    source: str
    native_id: str
    family: str
    conversation_id: str  # in the warehouse at hand
    half: str
    problems: list[dict[str, Any]] = field(default_factory=list)
    last_person: int | None = None  # main-path position of the last person turn


def load(
    labels: Path, con: duckdb.DuckDBPyConnection, root: Path, roots: dict[str, Path] | None = None
) -> list[Labeled]:
    """Every labeled conversation found in the warehouse (``root``: the agent-logs folder it was ingested
    from); positions checked against ``text_prefix``. A conversation not found is an error. With ``roots`` (the
    fresh labels, ``bench.fresh_labels``), each line's ``root`` field names its folder and every conversation is
    in the half ``fresh``."""
    bases: dict[str | None, Path] = dict(roots) if roots else {None: root}
    where = {}
    for cid, p, n in con.execute(
        "SELECT c.conversation_id, s.path, c.native_id FROM conversations c JOIN sources s USING (source_id)"
    ).fetchall():
        for key, base in bases.items():
            prefix = str(base.resolve()) + "/"
            if p.startswith(prefix):
                where[(key, p[len(prefix) :], n)] = cid
    out = []
    for line in labels.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        key = d.get("root") if roots else None
        cid = where.get((key, d["source"], d["native_id"]))
        if cid is None:
            raise SystemExit(
                f"{d['source']} {d['native_id']}: not in the warehouse (ingest {bases.get(key, key)} into it)"
            )
        moved = relocate(d["user_turns"], main_path_prefixes(con, cid))
        if isinstance(moved, list):
            raise SystemExit(f"{d['source']}: positions {moved[:5]} do not hold their text_prefix")
        problems = [dict(p, positions=[shifted(x, moved) for x in p["positions"]]) for p in d["problems"]]
        persons = [moved[t["position"]] for t in d["user_turns"] if t["origin"] == "person"]
        out.append(
            Labeled(
                d["source"],
                d["native_id"],
                d["family"],
                cid,
                "fresh" if roots else half(d["source"], d["native_id"]),
                problems,
                max(persons) if persons else None,
            )
        )
    return out


REACH = 20  # how far a reader's change may have moved a labeled turn (messages it now adds or no longer makes)


def main_path_prefixes(con: duckdb.DuckDBPyConnection, conversation_id: str) -> dict[int, str]:
    """The first 80 characters of each main-path message of a conversation, by position: what a label's
    ``text_prefix`` is held against (``relocate``)."""
    rows = con.execute(
        "SELECT position, left(content, 80) FROM messages WHERE conversation_id = ? AND on_main_path", [conversation_id]
    ).fetchall()
    return dict(rows)


def relocate(turns: list[dict[str, Any]], text: dict[int, str]) -> dict[int, int] | list[int]:
    """Each labeled turn's position in this warehouse: where it was labeled when that position still holds its
    ``text_prefix``, else the nearest position that does, in order, within REACH (a reader now keeps a message it
    did not, such as aider's reflections); the positions found nowhere, when some are not."""
    out: dict[int, int] = {}
    floor, missing = -1, []
    for t in sorted(turns, key=lambda t: t["position"]):
        old = t["position"]
        near = sorted(range(max(floor + 1, old - REACH), old + REACH + 1), key=lambda q: (abs(q - old), q))
        new = next((q for q in near if text.get(q) == t["text_prefix"]), None)
        if new is None:
            missing.append(old)
            continue
        out[old], floor = new, new
    return missing or out


def shifted(position: int, moved: dict[int, int]) -> int:
    """A labeled position moved as the labeled turn at or before it moved."""
    before = [old for old in moved if old <= position]
    return position + (moved[max(before)] - max(before) if before else 0)
