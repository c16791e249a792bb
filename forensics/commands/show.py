"""`forensics show`: the messages behind a finding, by conversation and position, secrets masked (and personal data
when ./harness.toml says ``[redact] personal = "all"``).

A failed run the last report signed (the failures analyzer's ``decisive_step`` view, docs/definitions.md#failure-analysis) opens at its
decisive step when no positions are asked for (``--decisive`` asks for it explicitly): one line says which step,
who took it and by which rule, then the messages from BEFORE before it to AFTER after it."""

from __future__ import annotations

import os
import re
from textwrap import fill

from forensics import analyzers
from forensics.analyzers.schema import load_config
from forensics.kernel.columns import middle, terminal_width
from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import redact
from forensics.text.escape import terminal
from forensics.text.personal import applies, mask
from forensics.warehouse import open_warehouse

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


def show_messages(
    db: str | os.PathLike[str], conversation: str, positions: str | None, width: int = 300, decisive: bool = False
) -> str:
    if decisive and positions:
        raise ForensicsError("--decisive opens the run at its decisive step; leave out --positions")
    ranges = parse_positions(positions)
    head = ""
    with open_warehouse(db, read_only=True) as wh:
        conv = wh.con.execute(
            "SELECT conversation_id, native_id, title, model FROM conversations "
            "WHERE conversation_id = ? OR native_id = ?",
            [conversation, conversation],
        ).fetchall()
        if not conv:
            raise ForensicsError(
                f'no conversation {conversation!r} in {db}; `forensics query "SELECT native_id, '
                'title FROM conversations"` lists them'
            )
        if len(conv) > 1:
            raise ForensicsError(
                f"{conversation!r} matches {len(conv)} conversations; use a conversation_id: "
                + ", ".join(c[0] for c in conv)
            )
        cid, nid, title, model = conv[0]
        read = analyzers.view("decisive_step")  # the failures analyzer's (docs/definitions.md#failure-analysis)
        step = read(wh.con, cid) if read is not None and (decisive or not positions) else None
        if decisive and step is None:
            raise ForensicsError(
                f"{conversation!r} has no decisive step: `forensics report` finds one for a failed "
                "run (by its outcome) and keeps it"
            )
        if step is not None:
            at, agent, rule, why = step
            ranges = [(max(0, at - BEFORE), at + AFTER)]
            last = wh.con.execute(
                "SELECT max(position) FROM messages WHERE conversation_id = ? AND on_main_path", [cid]
            ).fetchall()[0][0]
            head = (
                f"decisive step {at} (agent {redact(agent) if agent else '?'})"
                + (f": {rule} ({why})" if why else f": {rule}" if rule else "")
                + f" · positions {ranges[0][0]}-{min(ranges[0][1], last if last is not None else at)} shown; "
                f"--positions 0-{last} for the whole run"
            )
        where = " OR ".join("m.position BETWEEN ? AND ?" for _ in ranges)
        rows = wh.con.execute(
            f"SELECT m.position, m.role, m.content, m.content_bytes, "
            f"list(t.name || '(' || left(forensics_masked(t.arguments), 80) || ')' ORDER BY t.call_index) "
            f"FILTER (WHERE t.name IS NOT NULL) FROM messages m LEFT JOIN tool_calls t "
            f"ON t.conversation_id = m.conversation_id AND t.seq = m.seq WHERE m.conversation_id = ? AND m.on_main_path "
            f"AND ({where}) GROUP BY ALL ORDER BY m.position",
            [cid, *[x for r in ranges for x in r]],
        ).fetchall()
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
    cols = terminal_width()  # each line wrapped under its position, a header cut in its middle: nothing wraps by itself
    text = "\n".join(
        middle(ln, cols) if i == 0 else fill(ln, cols, subsequent_indent="    ", break_on_hyphens=False)
        for i, ln in enumerate(lines)
    )
    return mask(text) if applies(load_config()["redact.personal"], page=False) else text
