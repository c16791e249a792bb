"""What every analyzer receives and returns, so the report can render any of them without knowing it.

An analyzer is a module with ``NAME``, ``TITLE`` and ``run(ctx) -> Section``. It may write derived tables
into the warehouse (CREATE OR REPLACE, whole warehouse) so `forensics query` and notebooks see them, and it
restricts what it reports to ``sel_conversations``. The report only renders a Section; it never recomputes.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from forensics.config import SCHEMA, Config
from forensics.queries import load_query
from forensics.selection import SELECTED, Selection
from forensics.warehouse import frame

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SEVERITIES = ("info", "low", "high")


@dataclass
class Finding:
    """One thing a reader should look at, with the positions that prove it."""

    kind: str  # e.g. tool_result_crowding
    severity: str  # info | low | high
    conversation_id: str
    native_id: str | None
    positions: list[int]
    summary: str
    rule: str = ""  # the threshold or rule that fired


@dataclass
class Table:
    name: str
    caption: str
    df: pl.DataFrame


@dataclass
class Chart:
    """A figure drawn only from data the section already holds."""

    name: str
    title: str
    render: Callable[[], Figure]


@dataclass
class Section:
    name: str
    title: str
    summary: str = ""  # a short paragraph (Markdown)
    metrics: dict[str, Any] = field(default_factory=dict)  # JSON-able, unrounded, stable keys
    tables: list[Table] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    grid: list[list[str]] = field(default_factory=list)  # a pre-formatted table, first row the header


@dataclass
class Context:
    """A warehouse connection with the selection materialised and the config loaded as SQL variables."""

    con: duckdb.DuckDBPyConnection
    cfg: Config
    selection: Selection
    selected: int = 0
    labels: str | None = None  # a labels file (`--labels`), for analyzers that can score themselves
    questions: str | None = None  # a question file (`--questions`): the memory analyzer replays retrieval

    @classmethod
    def open(cls, con: duckdb.DuckDBPyConnection, cfg: Config, selection: Selection,
             labels: str | None = None, questions: str | None = None) -> Context:
        for key in SCHEMA:
            value = cfg[key.path]
            if isinstance(value, list):  # typed, so an empty list stays an empty list of strings
                con.execute(f"SET VARIABLE {key.section}_{key.name} = ?::VARCHAR[]", [value])
            elif isinstance(value, (bool, int, float, str)):
                con.execute(f"SET VARIABLE {key.section}_{key.name} = ?", [value])
        return cls(con, cfg, selection, selection.materialize(con), labels, questions)

    def query(self, name: str, selected_only: bool = True) -> pl.DataFrame:
        """Run a named query; restricted to the selection when it has a conversation_id column."""
        sql = load_query(name).sql
        if selected_only:
            sql = f"SELECT * FROM ({sql}) q WHERE q.conversation_id IN (SELECT conversation_id FROM {SELECTED})"
        return frame(self.con, sql)

    def df(self, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
        return frame(self.con, sql, params)
