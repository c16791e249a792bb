"""`forensics show`: the messages behind a finding, by conversation and position, secrets masked (and personal data
when ./harness.toml says ``[redact] personal = "all"``)."""
from __future__ import annotations

import os
import re

from forensics.analyzers.schema import load_config
from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import redact
from forensics.text.escape import terminal
from forensics.text.personal import applies, mask
from forensics.warehouse import open_warehouse


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


def show_messages(db: str | os.PathLike[str], conversation: str, positions: str | None, width: int = 300) -> str:
    ranges = parse_positions(positions)
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
        where = " OR ".join("m.position BETWEEN ? AND ?" for _ in ranges)
        rows = wh.con.execute(
            f"SELECT m.position, m.role, m.content, m.content_bytes, "
            f"list(t.name || '(' || left(forensics_masked(t.arguments), 80) || ')' ORDER BY t.call_index) "
            f"FILTER (WHERE t.name IS NOT NULL) FROM messages m LEFT JOIN tool_calls t "
            f"ON t.conversation_id = m.conversation_id AND t.seq = m.seq WHERE m.conversation_id = ? AND m.on_main_path "
            f"AND ({where}) GROUP BY ALL ORDER BY m.position", [cid, *[x for r in ranges for x in r]]).fetchall()
    lines = [terminal(f"{nid} ({cid}) · {model or '?'} · {redact(title or '')}")]
    for pos, role, content, nbytes, calls in rows:
        text = terminal(redact(content).replace("\n", " ⏎ "))
        cut = text[:width] + (f" … (+{len(text) - width} chars)" if len(text) > width else "")
        lines.append(f"[{pos}] {role} ({nbytes} B){': ' + cut if cut else ''}")
        for c in calls or []:
            lines.append(f"      → {terminal(redact(c))}")
    if len(lines) == 1:
        lines.append("(no message at those positions)")
    text = "\n".join(lines)
    return mask(text) if applies(load_config()["redact.personal"], page=False) else text
