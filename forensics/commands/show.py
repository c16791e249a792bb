"""`forensics show`: the messages behind a finding, by conversation and position, secrets masked (and personal data
when ./harness.toml says ``[redact] personal = "all"``).

A failed run the last report signed (``run_failures``, SPEC §25) opens at its decisive step when no positions are
asked for (``--decisive`` asks for it explicitly): one line says which step, who took it and by which rule, then
the messages from BEFORE before it to AFTER after it."""
from __future__ import annotations

import os
import re
from typing import Any

from forensics.analyzers.failures.decisive import RULES
from forensics.analyzers.schema import load_config
from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import redact
from forensics.text.escape import terminal
from forensics.text.personal import applies, mask
from forensics.warehouse import open_warehouse
from forensics.warehouse.derived import columns

BEFORE, AFTER = 2, 8  # messages shown around a decisive step


def parse_positions(text: str | None) -> list[tuple[int, int]]:
    if not text:
        return [(0, 1 << 30)]
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:[-–]\s*(\d+))?\s*", part)
        if not m:
            raise ForensicsError(f"bad --positions {part!r}: use numbers and ranges like 8,58,141-152")
        a = int(m.group(1))
        out.append((a, int(m.group(2) or a)))
    return out


def decisive_step(con: Any, cid: str) -> tuple[int, str | None, str | None] | None:
    """(position, agent, rule) of a run's decisive step as the last report kept it (``run_failures``), or None
    (no report wrote the table, the run did not fail, or no step was found)."""
    have = {c for c, _ in columns(con, "run_failures")}
    if not have >= {"conversation_id", "decisive_position", "decisive_agent"}:  # no report, or another build's
        return None
    rule = "decisive_rule" if "decisive_rule" in have else "NULL"
    row = con.execute(f"SELECT decisive_position, decisive_agent, {rule} FROM run_failures WHERE conversation_id = ? "
                      "AND decisive_position IS NOT NULL", [cid]).fetchall()
    return (int(row[0][0]), row[0][1], row[0][2]) if row else None


def show_messages(db: str | os.PathLike[str], conversation: str, positions: str | None, width: int = 300,
                  decisive: bool = False) -> str:
    if decisive and positions:
        raise ForensicsError("--decisive opens the run at its decisive step; leave out --positions")
    ranges = parse_positions(positions)
    head = ""
    with open_warehouse(db, read_only=True) as wh:
        conv = wh.con.execute("SELECT conversation_id, native_id, title, model FROM conversations "
                              "WHERE conversation_id = ? OR native_id = ?", [conversation, conversation]).fetchall()
        if not conv:
            raise ForensicsError(f"no conversation {conversation!r} in {db}; `forensics query \"SELECT native_id, "
                                 "title FROM conversations\"` lists them")
        if len(conv) > 1:
            raise ForensicsError(f"{conversation!r} matches {len(conv)} conversations; use a conversation_id: "
                                 + ", ".join(c[0] for c in conv))
        cid, nid, title, model = conv[0]
        step = decisive_step(wh.con, cid) if decisive or not positions else None
        if decisive and step is None:
            raise ForensicsError(f"{conversation!r} has no decisive step: `forensics report` finds one for a failed "
                                 "run (by its outcome) and keeps it in run_failures")
        if step is not None:
            at, agent, rule = step
            ranges = [(max(0, at - BEFORE), at + AFTER)]
            last = wh.con.execute("SELECT max(position) FROM messages WHERE conversation_id = ? AND on_main_path",
                                  [cid]).fetchall()[0][0]
            head = (f"decisive step {at} (agent {redact(agent) if agent else '?'})"
                    + (f": {rule} ({RULES[rule]})" if rule in RULES else f": {rule}" if rule else "")
                    + f" · positions {ranges[0][0]}-{min(ranges[0][1], last if last is not None else at)} shown; "
                    f"--positions 0-{last} for the whole run")
        where = " OR ".join("m.position BETWEEN ? AND ?" for _ in ranges)
        rows = wh.con.execute(
            f"SELECT m.position, m.role, m.content, m.content_bytes, "
            f"list(t.name || '(' || left(forensics_masked(t.arguments), 80) || ')' ORDER BY t.call_index) "
            f"FILTER (WHERE t.name IS NOT NULL) FROM messages m LEFT JOIN tool_calls t "
            f"ON t.conversation_id = m.conversation_id AND t.seq = m.seq WHERE m.conversation_id = ? AND m.on_main_path "
            f"AND ({where}) GROUP BY ALL ORDER BY m.position", [cid, *[x for r in ranges for x in r]]).fetchall()
    lines = [terminal(f"{nid} ({cid}) · {model or '?'} · {redact(title or '')}")]
    if head:
        lines.append(terminal(head))
    for pos, role, content, nbytes, calls in rows:
        text = terminal(redact(content).replace("\n", " ⏎ "))
        cut = text[:width] + (f" … (+{len(text) - width} chars)" if len(text) > width else "")
        mark = " ◀ decisive step" if step is not None and pos == step[0] else ""
        lines.append(f"[{pos}] {role} ({nbytes} B){mark}{': ' + cut if cut else ''}")
        for c in calls or []:
            lines.append(f"      → {terminal(redact(c))}")
    if not rows:
        lines.append("(no message at those positions)")
    text = "\n".join(lines)
    return mask(text) if applies(load_config()["redact.personal"], page=False) else text
