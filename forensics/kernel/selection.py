"""Which conversations a report, check or query looks at, as one temp table every analyzer joins."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb

SELECTED = "sel_conversations"


@dataclass(frozen=True)
class Selection:
    """Filters combined with AND; an empty Selection is every conversation."""

    conversations: tuple[str, ...] = ()  # conversation_id or native_id
    since: str | None = None  # ISO date/time, inclusive, on created_at
    until: str | None = None  # ISO date/time, exclusive
    models: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()  # source_id, or a substring of the source path
    formats: tuple[str, ...] = ()  # the sources' formats (``forensics formats``): the logs of one kind of harness
    label: str = field(default="", compare=False)

    def where(self) -> tuple[str, list[Any]]:
        parts, params = ["TRUE"], list[Any]()
        if self.conversations:
            parts.append(
                "(c.conversation_id IN (SELECT unnest(?::VARCHAR[])) OR c.native_id IN (SELECT unnest(?::VARCHAR[])))"
            )
            params += [list(self.conversations)] * 2
        if self.since:
            parts.append("c.created_at >= CAST(? AS TIMESTAMP)")
            params.append(self.since)
        if self.until:
            parts.append("c.created_at < CAST(? AS TIMESTAMP)")
            params.append(self.until)
        if self.models:
            parts.append("c.model IN (SELECT unnest(?::VARCHAR[]))")
            params.append(list(self.models))
        if self.sources:
            parts.append(
                "(c.source_id IN (SELECT unnest(?::VARCHAR[])) OR EXISTS (SELECT 1 FROM sources s WHERE "
                "s.source_id = c.source_id AND list_bool_or([contains(s.path, x) FOR x IN ?::VARCHAR[]])))"
            )
            params += [list(self.sources)] * 2
        if self.formats:
            parts.append("c.source_id IN (SELECT source_id FROM sources WHERE format IN (SELECT unnest(?::VARCHAR[])))")
            params.append(list(self.formats))
        return " AND ".join(parts), params

    def materialize(self, con: duckdb.DuckDBPyConnection, name: str = SELECTED) -> int:
        """Create TEMP TABLE ``name`` (conversation_id) for this selection; returns its size."""
        where, params = self.where()
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT c.conversation_id FROM conversations c WHERE {where}",
            params,
        )
        return int(con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0])

    def describe(self) -> dict[str, Any]:
        d = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items() if v and k != "label"}
        return d or {"all": True}
