"""`forensics tune --triggers FILE`: the trigger table's misses turned into phrases, old -> new per skill, each
with the hits it gains and the false fires it adds over the whole warehouse; ``write_triggers`` adds them to the
file, keeping its skills' order, their phrases and every other key (``schema`` too)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forensics.analyzers.base import Context
from forensics.analyzers.skills import Proposal, TriggerTable, analyse, excerpts, read_table
from forensics.analyzers.skills.replay import tally
from forensics.config import Config
from forensics.draw import short_label
from forensics.kernel.selection import Selection
from forensics.warehouse import open_warehouse
from forensics.warehouse.labels import conversation_labels

SHOWN = 3  # requests shown per phrase
TEXT = 60  # characters of each
LABEL = 24  # characters of its conversation's label


@dataclass
class TriggerTune:
    table: TriggerTable
    proposals: list[Proposal]
    before: dict[str, dict[str, int]]  # per skill: router, model, hits, router_only, model_only, ...
    after: dict[str, dict[str, int]]  # the same with the proposals added
    requests: int
    conversations: int
    labels: dict[str, str]  # conversation_id -> the label reports show
    texts: dict[tuple[str, int], str]  # (conversation_id, position) -> the start of each request a phrase catches

    def phrases(self, skill: str) -> list[str]:
        return [p.phrase for p in self.proposals if p.skill == skill]


def tune_triggers(db: str | os.PathLike[str], cfg: Config, path: str | os.PathLike[str]) -> TriggerTune:
    """Replay the table at ``path`` over every conversation of ``db`` (read-only) and propose phrases."""
    table = read_table(path)
    with open_warehouse(db, read_only=True) as wh:
        ctx = Context.open(wh.con, cfg, Selection())
        rp, rows, proposals = analyse(ctx, table)
        before = tally(rows, list(table.skills))
        after = tally(rp.rows(), list(before))
        labels = {cid: lab.text for cid, lab in conversation_labels(wh.con).items()}
        texts = excerpts(wh.con, [k for p in proposals for k in p.catches[:SHOWN]], TEXT)
    return TriggerTune(table, proposals, before, after, rp.requests, rp.conversations, labels, texts)


def render(t: TriggerTune, writing: bool = False) -> str:
    """Per skill its phrases old -> new, then one line per new phrase: hits gained, false fires added, where."""
    lines = []
    for skill, c in t.after.items():
        old, new = t.table.skills.get(skill, []), t.phrases(skill)
        b = t.before[skill]
        if not old and not new:
            continue
        state = "new skill" if skill not in t.table.skills else "kept" if not new else f"{len(new)} new"
        lines.append(f"{skill} ({state}): {_json(old)} -> {_json(old + new)}")
        lines.append(
            f"    hits {b['hits']} -> {c['hits']}, false fires {b['router_only']} -> {c['router_only']}, "
            f"misses {b['model_only']} -> {c['model_only']}"
        )
        for p in (p for p in t.proposals if p.skill == skill):
            lines.append(
                f"  + {_json(p.phrase)}: {p.hits_gained} hits gained, "
                f"{p.false_fires_added} false fires added ({round(p.share * p.requests)} of the "
                f"{p.requests} requests holding it loaded {skill})"
            )
            lines += [
                f"      {short_label(t.labels.get(cid, cid), LABEL)} [{pos}]: {t.texts.get((cid, pos), '')}"
                for cid, pos in p.catches[:SHOWN]
            ]
            if len(p.catches) > SHOWN:
                lines.append(f"      ... and {len(p.catches) - SHOWN} more")
    tb, ta = _total(t.before), _total(t.after)
    lines.append(
        f"{len(t.proposals)} phrases for {len({p.skill for p in t.proposals})} skills over {t.requests} "
        f"requests in {t.conversations} conversations: hits {tb['hits']} -> {ta['hits']}, false fires "
        f"{tb['router_only']} -> {ta['router_only']}, misses {tb['model_only']} -> {ta['model_only']}"
        + ("" if writing else "; nothing written without --write")
    )
    return "\n".join(lines)


def _total(counts: dict[str, dict[str, int]]) -> dict[str, int]:
    return {k: sum(c[k] for c in counts.values()) for k in ("hits", "router_only", "model_only")}


def write_triggers(t: TriggerTune) -> int:
    """Add the proposed phrases to the table file in place (a skill the table lacks goes last), in the file's own
    indentation, each skill's phrases on one line when the file has them so; returns how many were added."""
    if not t.proposals:
        return 0  # nothing to add: the file stays byte for byte
    path = Path(t.table.path)
    text = path.read_text(encoding="utf-8")
    doc = t.table.doc
    for p in t.proposals:
        doc["skills"].setdefault(p.skill, []).append(p.phrase)
    first = re.search(r"^([ \t]+)\S", text, re.MULTILINE)  # the file's indentation step: its first indented line
    indent = first.group(1) if first else "  "
    inline = bool(t.table.skills) and not re.search(r'"\s*:\s*\[\s*\n', text)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(dumps(doc, indent, inline), encoding="utf-8")
    tmp.replace(path)
    return len(t.proposals)


def dumps(doc: dict[str, Any], indent: str, inline: bool) -> str:
    """The table as JSON, top-level keys in their order; with ``inline``, one line per skill."""
    items = []
    for key, value in doc.items():
        if key == "skills" and inline and value:
            body = ",\n".join(f"{indent * 2}{_json(s)}: {_json(ps)}" for s, ps in value.items())
            items.append(f"{indent}{_json(key)}: {{\n{body}\n{indent}}}")
        else:
            items.append(
                f"{indent}{_json(key)}: "
                + json.dumps(value, ensure_ascii=False, indent=indent).replace("\n", "\n" + indent)
            )
    return "{\n" + ",\n".join(items) + "\n}\n"


def _json(v: object) -> str:
    return json.dumps(v, ensure_ascii=False)
