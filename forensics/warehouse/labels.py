"""Names people recognise for conversations: one label per conversation, unique over the whole warehouse.

A short native id (what the log calls it, what `forensics show` takes: ``d6614e0b``, ``sess_0974a9ce8167``)
is the label; a long one (a UUID) gives way to the title. When two conversations would share a label (the
same native id imported from two sources), each gets its source's short name; the full ids are the hover
text (``Label.full``). Computed over the whole warehouse so a report of a selection and the explorer agree.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import PurePath

import duckdb

from forensics.kernel.redact import redact

SHORT_ID = 20  # longer native ids (UUIDs, paths) are not what people call a conversation
TITLE_CHARS = 40
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-", re.IGNORECASE)


@dataclass(frozen=True)
class Label:
    text: str  # unique in the warehouse
    full: str  # native id, conversation id and source: the hover text


def _base(native: str | None, title: str | None, cid: str) -> str:
    if native and len(native) <= SHORT_ID and not _UUID.match(native):
        return native
    title = " ".join(redact(title or "").split())
    if title:
        return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
    return (native or cid)[:12] + "…"


def conversation_labels(con: duckdb.DuckDBPyConnection) -> dict[str, Label]:
    """conversation_id -> Label for every conversation in the warehouse."""
    rows = con.execute(
        "SELECT c.conversation_id, c.native_id, c.title, s.path FROM conversations c "
        "LEFT JOIN sources s USING (source_id) ORDER BY c.conversation_id"
    ).fetchall()
    groups: dict[str, list[tuple[str, str | None, str]]] = defaultdict(list)
    for cid, native, title, path in rows:
        groups[_base(native, title, cid)].append((cid, native, path or ""))
    out: dict[str, Label] = {}
    for base, members in groups.items():
        names = {cid: base for cid, _, _ in members}
        if len(members) > 1:
            for depth in (1, 2):  # the file name, then its folder too
                names = {cid: f"{base} · {'/'.join(PurePath(p).parts[-depth:])}" for cid, _, p in members}
                if len(set(names.values())) == len(members):
                    break
            else:
                names = {cid: f"{base} · {cid[:8]}" for cid, _, _ in members}
        for cid, native, path in members:
            out[cid] = Label(names[cid], f"{native or '?'} · conversation {cid} · {path}")
    return out
