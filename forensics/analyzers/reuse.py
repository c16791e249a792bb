"""The per-conversation cache of facts between reports (issue 28): a report recomputes only the conversations that changed.

A fact (``forensics.analyzers.facts``) is a function of one conversation's rows and the config, so its rows can be
cached: each fact declared ``cached`` (and results that are no fact: the compression replay of every tool result, the
problem detectors' findings, the rules audit, the failure signatures' reading of a run) has a warehouse table ``reuse_<fact>`` (its own columns, written through
``forensics.warehouse.derived``) and ``reuse_done`` says which conversations' rows it holds, under which *stamp*
and *key*:

- the stamp is the conversation's ``fingerprint`` (what incremental ingest compares) and its ``message_count``,
  plus, for a fact that reads a table another analyzer writes (``also_reads``: drift's lags read ``topic_switches``),
  a hash of that conversation's rows of it. A conversation without a fingerprint is recomputed every time;
- the key hashes the fact's name, the whole config (any key may feed a fact through SQL variables: a config change
  recomputes, never misreads), the warehouse's schema version and the source of the package (a new release, or
  an edited analyzer, recomputes).

The conversations of the selection whose (stamp, key) is not in ``reuse_done`` are computed with
``sel_conversations`` narrowed to them, their rows replaced; the fact's rows are then read back for the whole
selection, so a first report and a later one hand the analyzer the same rows. What needs the whole corpus
(percentiles, fences, TF-IDF) is no fact and is recomputed from the rows every time: it costs a few ms per 1,000
conversations (docs/scale.md). Dropping any of these tables is always safe.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import duckdb
import orjson
import polars as pl

from forensics.config import Config
from forensics.kernel.arrow import sql_frame
from forensics.kernel.selection import SELECTED
from forensics.warehouse import SCHEMA_VERSION, derived

DONE = "reuse_done"
CORPUS = "reuse_corpus"
PREFIX = "reuse_"
# the tables of the reuse itself (the cached rows of each fact are ``cached_table(fact)``, listed by the registry)
TABLES = (
    derived.Table(
        DONE, "cache", "per cached fact and conversation: the fingerprint and config key its rows hold", reuse=True
    ),
    derived.Table(CORPUS, "cache", "corpus-level results (TF-IDF) cached under a digest of their inputs", reuse=True),
)
_STALE = "_reuse_stale"


def cached_table(name: str) -> derived.Table:
    """The table the cached rows of ``name`` (a cached fact, ``Fact(cached=True)``, or a cached result) live in."""
    return derived.Table(PREFIX + name, "cache", f"the cached rows of the fact {name}", reuse=True)


@dataclass
class Tally:
    """Conversations whose rows of a fact were read back (reused) or computed in one report."""

    reused: int = 0
    computed: int = 0


# per cached result, since the report began (``forensics.report.build`` clears it and reports it in its meta)
TALLY: dict[str, Tally] = {}
# per cached result, the conversations computed uncounted since the report began (``rows(counted=False)``): read back
# by a counted call, they are counted computed, as they would have been without the uncounted call before it
LENT: dict[str, set[str]] = {}


def clear_tally() -> None:
    """A report begins: nothing reused or computed yet."""
    TALLY.clear()
    LENT.clear()


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A hash of every file of the package (code, templates, assets) and the named queries: another release (or an
    edited analyzer) recomputes; the whole-report cache is keyed by it too (``report.cache``)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha1()
    for folder in (root, root.parent / "queries"):
        for p in sorted(folder.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(p.relative_to(folder).as_posix().encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def key(name: str, settings: Config | dict[str, Any]) -> str:
    """What the rows of ``name`` are valid for: the config (or the settings a result depends on), the code, the schema."""
    values = settings.values if isinstance(settings, Config) else settings
    text = repr((name, SCHEMA_VERSION, code_digest(), sorted((k, repr(v)) for k, v in values.items())))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def rows(
    con: duckdb.DuckDBPyConnection,
    settings: Config | dict[str, Any],
    name: str,
    compute: Callable[[], pl.DataFrame],
    also_reads: str | None = None,
    shadows: tuple[str, ...] = (),
    counted: bool = True,
    batch: int | None = None,
) -> pl.DataFrame:
    """The rows of ``name`` (a cached fact, or another per-conversation result) for the selection, computing only the
    conversations without valid cached rows. ``also_reads``: a table another analyzer writes that feeds the rows;
    ``shadows``: the rows cover every conversation, not the selection, and these tables are narrowed to the ones
    to compute (``forensics.analyzers.facts.Fact`` says both). ``counted``: the conversations go into ``TALLY`` (the
    report's meta); not for rows read for another purpose than the result's own (the worst list's ends: those
    it computes are counted computed by the result's own call after it, ``LENT``). ``batch``: the conversations to
    compute go to ``compute`` in batches of whole conversations of at most this many messages (a larger conversation
    alone), so what it holds at once is bounded by the batch, not the corpus (``batches``); only for rows each
    conversation's of which depend on its own rows alone, as every cached result's do."""
    scope = "conversations" if shadows else SELECTED
    if con.execute("SELECT current_setting('access_mode')").fetchall()[0][0] == "read_only" or (
        scope == SELECTED and not _exists(con, SELECTED)
    ):
        return compute()  # nothing can be cached (a notebook's read-only warehouse), or nothing is selected
    k, table = key(name, settings), PREFIX + name
    tally = TALLY.setdefault(name, Tally()) if counted else Tally()
    if not derived.columns(con, table) and derived.columns(con, DONE):  # its rows were dropped: none is held
        con.execute(f"DELETE FROM {DONE} WHERE fact = ?", [name])
    extra = ""
    if also_reads and derived.columns(con, also_reads):
        extra = (
            f"SELECT conversation_id, md5(string_agg(t::VARCHAR, '|' ORDER BY t::VARCHAR)) AS extra "
            f"FROM {also_reads} t GROUP BY 1"
        )
    stamp = "c.fingerprint || ':' || c.message_count" + (" || ':' || coalesce(e.extra, '')" if extra else "")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {_STALE} AS
        SELECT s.conversation_id, CASE WHEN c.fingerprint IS NOT NULL THEN {stamp} END AS stamp, c.message_count
        FROM {scope} s JOIN conversations c USING (conversation_id)
        {f"LEFT JOIN ({extra}) e USING (conversation_id)" if extra else ""}""")
    selected = con.execute(f"SELECT count(*) FROM {_STALE}").fetchall()[0][0]
    if derived.columns(con, DONE):
        con.execute(
            f"DELETE FROM {_STALE} s USING {DONE} d WHERE d.fact = ? AND d.key = ? AND "
            "d.conversation_id = s.conversation_id AND d.stamp = s.stamp",
            [name, k],
        )
    stale = con.execute(f"SELECT conversation_id, stamp, message_count FROM {_STALE} ORDER BY 1").fetchall()
    ids = [cid for cid, _, _ in stale]
    lent = LENT.get(name, set())
    if counted and lent:
        scoped = {c for (c,) in con.execute(f"SELECT conversation_id FROM {scope}").fetchall()} - set(ids)
        lent_here = scoped & lent
        lent -= lent_here
    else:
        lent_here = set()
    if counted:
        tally.reused += selected - len(stale) - len(lent_here)
        tally.computed += len(stale) + len(lent_here)
    else:
        LENT.setdefault(name, set()).update(ids)
    if stale:
        parts = []
        for part in batches([(cid, n) for cid, _, n in stale], batch):
            with narrowed(con, part, shadows):
                parts.append(compute().filter(pl.col("conversation_id").is_in(part)))  # a fact may read more
        fresh = parts[0] if len(parts) == 1 else pl.concat(parts)
        del parts
        # (a fact computed inside ``compute`` used _STALE too: the ids again)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {_STALE} AS SELECT unnest(?::VARCHAR[]) AS conversation_id", [ids])
        where = (
            f"conversation_id IN (SELECT conversation_id FROM {_STALE}) OR conversation_id NOT IN "
            "(SELECT conversation_id FROM conversations)"
        )
        derived.replace_rows(con, table, fresh, where)
        done = pl.DataFrame(
            {
                "fact": [name] * len(stale),
                "conversation_id": ids,
                "stamp": [s for _, s, _ in stale],
                "key": [k] * len(stale),
            }
        )
        derived.replace_rows(con, DONE, done, f"fact = ? AND ({where})", [name])
    if not derived.columns(con, table):  # nothing selected, nothing cached yet: the fact's own (empty) rows
        return compute()
    return sql_frame(con, f"SELECT r.* FROM {table} r JOIN {scope} USING (conversation_id)")


def batches(sizes: list[tuple[str, int]], most: int | None) -> list[list[str]]:
    """The conversations ``sizes`` ((id, messages), in order) cut in order into batches of at most ``most`` messages,
    a conversation larger than ``most`` a batch of its own; one batch when ``most`` is None."""
    if most is None:
        return [[cid for cid, _ in sizes]]
    out: list[list[str]] = []
    held = most
    for cid, n in sizes:
        if not out or held + (n or 0) > most:
            out.append([])
            held = 0
        out[-1].append(cid)
        held += n or 0
    return out


def inputs(con: duckdb.DuckDBPyConnection, cfg: Config, name: str) -> str | None:
    """A digest of the selection's cached rows of fact ``name`` (each conversation's stamp, and the key), read after
    the fact: the same digest, the same rows. None when a selected conversation's rows are not cached (no fingerprint)."""
    if not derived.columns(con, DONE):
        return None
    whole, digest = con.execute(
        f"SELECT count(*) = count(d.stamp), md5(string_agg(s.conversation_id || ':' || d.stamp, ',' ORDER BY "
        f"s.conversation_id)) FROM {SELECTED} s LEFT JOIN {DONE} d ON d.conversation_id = s.conversation_id AND "
        "d.fact = ? AND d.key = ?",
        [name, key(name, cfg)],
    ).fetchall()[0]
    return f"{key(name, cfg)}:{digest}" if whole and digest else None


def corpus(con: duckdb.DuckDBPyConnection, part: str, digest: str | None, compute: Callable[[], Any]) -> Any:
    """A corpus-level result (JSON) cached under the digest of its inputs (``inputs``): computed again only when
    they moved. One row per part; ``digest`` None always computes."""
    tally = TALLY.setdefault(part, Tally())
    if con.execute("SELECT current_setting('access_mode')").fetchall()[0][0] == "read_only":
        digest = None
    if digest is not None and derived.columns(con, CORPUS):
        got = con.execute(f"SELECT value FROM {CORPUS} WHERE part = ? AND inputs = ?", [part, digest]).fetchall()
        if got:
            tally.reused += 1
            return orjson.loads(got[0][0])
    value = compute()
    tally.computed += 1
    if digest is not None:
        derived.replace_rows(
            con,
            CORPUS,
            pl.DataFrame({"part": [part], "inputs": [digest or ""], "value": [orjson.dumps(value).decode()]}),
            "part = ?",
            [part],
        )
    return value


@contextmanager
def narrowed(con: duckdb.DuckDBPyConnection, ids: list[str], shadow: tuple[str, ...] = ()) -> Iterator[None]:
    """``sel_conversations`` holds only ``ids`` for the block (a fact computed inside another nests), and so do the
    tables ``shadow`` names (temporary views over the warehouse's tables: only a fact that writes nothing reads them)."""
    depth = con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchall()[0][0]
    keep, only = f"_reuse_keep_{depth}", f"_reuse_ids_{depth}"
    selected = _exists(con, SELECTED)  # the sentinel's facts run without a selection too
    if selected:
        con.execute(f"CREATE TEMP TABLE {keep} AS SELECT * FROM {SELECTED}")
    con.execute(f"CREATE TEMP TABLE {only} AS SELECT unnest(?::VARCHAR[]) AS conversation_id", [ids])
    try:
        if selected:
            con.execute(f"DELETE FROM {SELECTED} WHERE conversation_id NOT IN (SELECT conversation_id FROM {only})")
        with _shadowed(con, shadow, only):
            yield
    finally:
        if selected:
            con.execute(f"DELETE FROM {SELECTED}")
            con.execute(f"INSERT INTO {SELECTED} SELECT * FROM {keep}")
            con.execute(f"DROP TABLE {keep}")
        con.execute(f"DROP TABLE {only}")


@contextmanager
def selected_only(
    con: duckdb.DuckDBPyConnection, tables: tuple[str, ...] = ("messages",), copied: bool = False
) -> Iterator[None]:
    """``tables`` hold only the selected conversations' rows for the block (temporary views over the warehouse's
    tables, when a selection is materialised and no view shadows them already). For a query whose parts run over
    every conversation before its last filter (a materialised CTE, a window): a report after 1 % new
    conversations replayed the compression of every tool result to keep those of ten conversations (1.5 s; 0.07 s
    so). A query of one conversation at a time gives the same rows either way. ``copied``: temporary tables holding
    those rows instead, read from the warehouse once for every query of the block (a batch of ``rows``)."""
    shadow = tuple(
        t
        for t in tables
        if not con.execute(
            "SELECT count(*) FROM (SELECT view_name FROM duckdb_views() WHERE temporary UNION ALL "
            "SELECT table_name FROM duckdb_tables() WHERE temporary) WHERE view_name = ?",
            [t],
        ).fetchall()[0][0]
    )
    with _shadowed(con, shadow if _exists(con, SELECTED) else (), SELECTED, copied):
        yield


@contextmanager
def _shadowed(
    con: duckdb.DuckDBPyConnection, tables: tuple[str, ...], ids: str, copied: bool = False
) -> Iterator[None]:
    """``tables`` shadowed for the block by temporary views of the warehouse's rows of the conversations in the
    table ``ids`` (``copied``: temporary tables holding those rows, read once)."""
    db = con.execute("SELECT current_database()").fetchall()[0][0]
    kind = "TABLE" if copied else "VIEW"
    try:
        for t in tables:
            con.execute(
                f'CREATE TEMP {kind} {t} AS SELECT * FROM "{db}".main.{t} WHERE conversation_id IN '
                f"(SELECT conversation_id FROM {ids})"
            )
        yield
    finally:
        for t in tables:
            con.execute(f"DROP {kind} IF EXISTS temp.{t}")


def _exists(con: duckdb.DuckDBPyConnection, temp: str) -> bool:
    return bool(
        con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = ?", [temp]).fetchall()[0][0]
    )
