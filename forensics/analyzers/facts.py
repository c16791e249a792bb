"""Per-conversation facts: what an analyzer computes from one conversation's rows, written once for two engines.

A fact is a function of a DuckDB connection whose tables ``messages``, ``tool_calls``, ``conversations`` and
``events`` (``topic_switches`` too, once a topic report ran) hold one or more *whole* conversations and whose
``sel_conversations`` lists the ones a report covers. It returns Arrow rows keyed by ``conversation_id``, each a
function of its own conversation's rows alone. Locally the connection is the warehouse and a fact runs once over
the whole selection (DuckDB is the batch); on Spark (``forensics.spark``) it runs on the workers over an
in-memory DuckDB holding a group of whole conversations' rows of the lake. What needs the whole corpus (percentiles, means,
the sentinel's per-model replay in time order) is no fact: the analyzers do it from the facts' rows.

An analyzer declares the facts it defines (``Analyzer.facts``). A fact that joins ``sel_conversations`` covers the
selection; one that does not (the sentinel's) covers every conversation. Each fact declares the total order of its
rows, applied on both engines, so what an analyzer iterates over (and how it breaks ties) does not depend on where
the rows were computed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers import reuse
from forensics.config import Config
from forensics.kernel.arrow import sql_frame

TABLES = ("conversations", "messages", "tool_calls", "events", "topic_switches")  # what a fact may read


@dataclass(frozen=True)
class Fact:
    name: str
    fn: Callable[..., pl.DataFrame]  # (con, cfg) -> rows; may take ``ids`` (restrict to these conversations)
    order: tuple[str, ...]  # a total order of the rows (nulls last, as DuckDB's ORDER BY)
    cached: bool = False  # its rows are cached between reports, per conversation (``reuse``)
    also_reads: str | None = None  # cached: a table another analyzer writes that feeds it (drift's lags read the
    # topic switches): a conversation's rows of it join what its cached rows are valid for
    shadows: tuple[str, ...] = ()  # cached, covering every conversation (not the selection: the sentinel replays the
    # whole history): the tables it reads, narrowed to the conversations to compute

    @property
    def by_ids(self) -> bool:
        return "ids" in inspect.signature(self.fn).parameters


def declared(name: str) -> Fact:
    """The fact ``name`` as an analyzer declares it (``Analyzer.facts``, gathered by ``forensics.analyzers``)."""
    from forensics.analyzers import all_facts  # the registry imports this module: read it when asked

    return all_facts()[name]


def arrow(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
    """The rows of ``sql`` as a polars frame (DuckDB's Arrow stream, no pyarrow)."""
    return sql_frame(con, sql, params)


def arrow_frame(table: Any) -> pl.DataFrame:
    """A fact's rows as a polars frame: a frame as it is; an Arrow table or batch (the Spark engine's, which has
    pyarrow) through ``pl.from_arrow``, which is typed to return a Series too."""
    if isinstance(table, pl.DataFrame):
        return table
    df = pl.from_arrow(table)
    assert isinstance(df, pl.DataFrame)
    return df


def ordered(name: str, df: pl.DataFrame) -> pl.DataFrame:
    return df.sort(list(declared(name).order), nulls_last=True, maintain_order=True) if df.height else df


@dataclass
class Facts:
    """The facts one report reads: computed on demand over ``con`` (the warehouse), or handed over by another
    engine (``given``: fact name -> rows of every conversation it covers)."""

    con: duckdb.DuckDBPyConnection
    cfg: Config
    given: dict[str, pl.DataFrame] | None = None
    _cache: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)

    @property
    def local(self) -> bool:
        """Whether the facts come from ``con`` itself (the warehouse), so an analyzer may also write its tables."""
        return self.given is None

    def get(self, name: str, ids: list[str] | None = None) -> pl.DataFrame:
        """The rows of fact ``name`` in its order; ``ids`` restricts them to those conversations. Rows an engine
        derived from facts (the sentinel's replay) are handed over by name too."""
        if self.given is not None:
            df = self.given[name]
            return df.filter(pl.col("conversation_id").is_in(ids)) if ids is not None else df
        f = declared(name)
        if ids is not None and f.by_ids:
            return ordered(name, arrow_frame(f.fn(self.con, self.cfg, ids=ids)))
        if name not in self._cache:  # a cached fact computes only the conversations that changed (``reuse``)
            rows = (
                reuse.rows(self.con, self.cfg, name, lambda: f.fn(self.con, self.cfg), f.also_reads, f.shadows)
                if f.cached
                else f.fn(self.con, self.cfg)
            )
            self._cache[name] = ordered(name, arrow_frame(rows))
        df = self._cache[name]
        return df.filter(pl.col("conversation_id").is_in(ids)) if ids is not None else df
