"""Named SQL files, shipped inside the wheel and run read-only: the general ones (``queries/*.sql``) and each
analyzer's own, in its package (``forensics/analyzers/<name>/<query>.sql``), found through the registry
(``forensics.analyzers.named_queries``); an analyzer reads its own with ``load_query(name, __package__)``.

Each file starts with a ``-- description`` line; the rest is plain DuckDB SQL against the warehouse tables,
so any DuckDB client can run it. Tunables appear as ``coalesce(getvariable('name'), default)``.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import NamedTuple

import duckdb

from forensics.kernel.errors import ForensicsError

# The statement kinds a read may be: queries, their plans, and query variables (`SET VARIABLE`). A PRAGMA only
# when it shows the schema. Everything else (SET, CALL, COPY, EXPORT, ATTACH, INSTALL, ...) is refused before it
# runs; the sealed connection (forensics.warehouse.core.SEALED) is the second line.
READ_ONLY_TYPES = {"SELECT", "EXPLAIN"}
VARIABLE = re.compile(r"\s*(?:SET|RESET)\s+VARIABLE\b", re.IGNORECASE)
READ_PRAGMAS = re.compile(
    r"\s*PRAGMA\s+(?:table_info|show_tables|show_tables_expanded|show|database_list|version|"
    r"database_size|storage_info)\b",
    re.IGNORECASE,
)


class NamedQuery(NamedTuple):
    name: str
    description: str
    sql: str


def _root() -> Traversable:
    """Installed: forensics/queries inside the wheel; from a checkout: the top-level queries/ folder."""
    packaged = resources.files("forensics") / "queries"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "queries"


def _files(packages: tuple[str | None, ...]) -> dict[str, Traversable]:
    """name -> file of every named query: the general folder's, then those of ``packages`` (an analyzer's own)."""
    found: dict[str, Traversable] = {}
    for folder in [_root(), *(resources.files(p) for p in dict.fromkeys(packages) if p)]:
        for f in sorted(folder.iterdir(), key=lambda t: t.name):
            if f.name.endswith(".sql"):
                if f.name[:-4] in found:
                    raise ForensicsError(f"named query {f.name[:-4]!r} is defined twice ({found[f.name[:-4]]}, {f})")
                found[f.name[:-4]] = f
    return dict(sorted(found.items()))


def list_queries(*packages: str | None) -> list[NamedQuery]:
    """The general named queries and those of ``packages``, by name."""
    return [_parse(name, f.read_text(encoding="utf-8")) for name, f in _files(packages).items()]


def load_query(name: str, *packages: str | None) -> NamedQuery:
    """The named query ``name``: a general one or one of ``packages``'."""
    f = _files(packages).get(name) if re.fullmatch(r"[A-Za-z0-9_]+", name) else None
    if f is None:
        known = ", ".join(_files(packages))
        raise ForensicsError(f"no named query {name!r} (known: {known}); `forensics query --list` shows them")
    return _parse(name, f.read_text(encoding="utf-8"))


def _parse(name: str, text: str) -> NamedQuery:
    first = text.splitlines()[0] if text else ""
    desc = first[2:].strip() if first.startswith("--") else ""
    return NamedQuery(name, desc, text.strip().rstrip(";"))


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Refuse a statement that would write, before anything runs."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as e:
        raise ForensicsError(f"SQL does not parse: {str(e).splitlines()[0]}") from None
    for st in statements:
        try:
            kind = st.type.name
        except ValueError:  # a statement kind this duckdb module has no name for (UPDATE EXTENSIONS): not a read
            kind = "unknown"
        if (kind == "PRAGMA" and READ_PRAGMAS.match(st.query)) or (kind == "SET" and VARIABLE.match(st.query)):
            continue
        if kind == "EXPLAIN" and not _explains_a_read(con, st.query):
            kind = "EXPLAIN of a write"
        if kind not in READ_ONLY_TYPES:
            raise ForensicsError(
                f"refused: {kind} statements may change the warehouse, its settings or files "
                "beside it; `forensics query` only reads (use a DuckDB client on a copy to "
                "experiment)"
            )


def _explains_a_read(con: duckdb.DuckDBPyConnection, sql: str) -> bool:
    """EXPLAIN [ANALYZE] of a SELECT (EXPLAIN ANALYZE runs its statement: of a COPY it writes the file)."""
    inner = re.sub(r"^\s*EXPLAIN\s+(?:ANALY[SZ]E\s+)?", "", sql, count=1, flags=re.IGNORECASE)
    try:
        return all(st.type.name == "SELECT" for st in con.extract_statements(inner))
    except duckdb.Error:
        return False
