"""What every analyzer receives and returns, so the report can render any of them without knowing it.

An analyzer is a module with ``run(ctx) -> Section`` and its declaration (``forensics.analyzers.declare``). It
may write derived tables into the warehouse (CREATE OR REPLACE, whole warehouse) so `forensics query` and notebooks
see them, and it restricts what it reports to ``sel_conversations``. The report only renders a Section; it never recomputes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers.facts import Facts
from forensics.config import Config
from forensics.kernel.selection import SELECTED, Selection
from forensics.warehouse import frame
from forensics.warehouse.labels import Label, conversation_labels

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
    value: float | None = None  # the figure the rule compared (a lag in messages, distinct targets, an echo rate)
    percentile: float | None = None  # share of the corpus (0-100) less far out than this one, by that figure
    among: str = ""  # what the percentile is taken over, e.g. "450 requests with tool calls"
    # the rule in a reader's words, on the finding's line ("Codex CLI: only 1 conversation (5 needed) to learn the
    # usual width of a request, so the default limit of 10 targets applies"); ``rule`` keeps the rule's own
    # terms (thresholds, fences, rule names), which the report and the explorer show one click away
    said: str = ""


@dataclass
class Table:
    name: str
    caption: str
    df: pl.DataFrame
    # said in place of the table when it has no rows: why it is empty and what would fill it ("No graded runs: ...")
    empty: str = ""


@dataclass
class Chart:
    """What a chart shows (tidy data and its labels); the report layer draws it with the function the analyzer
    declares for ``name`` (``Analyzer.charts``), so the report and the explorer draw the same chart from the same
    data."""

    name: str
    title: str
    data: Any


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
    # finding kind -> one line on what that kind's figure is across the corpus, for when it fires on most
    # conversations: then it is a property of the corpus, said once ("tool calls without text are codex's way of working")
    norms: dict[str, str] = field(default_factory=dict)
    # what had nothing to read: a metric prefix (the section's name for the whole analyzer, or "topics.evaluation"
    # for a part of it) -> why, in one line ("no canary in any system prompt"). The report says it in that line,
    # `forensics check` skips the metrics under the prefix (saying why) and `tune` recommends nothing from them.
    not_in_use: dict[str, str] = field(default_factory=dict)

    @classmethod
    def idle(cls, name: str, title: str, why: str) -> Section:
        """The section of an analyzer whose input is absent: one line, no finding, no metric, no chart."""
        return cls(name, title, f"Not in use: {why}.", not_in_use={name: why})


Ranking = Callable[[list[Section], int], dict[str, float]]


@dataclass
class Context:
    """A warehouse connection with the selection materialised and the config loaded as SQL variables."""

    con: duckdb.DuckDBPyConnection
    cfg: Config
    selection: Selection
    selected: int = 0
    labels: str | None = None  # a labels file (`--labels`), for analyzers that can score themselves
    questions: str | None = None  # a question file (`--questions`): the memory analyzer replays retrieval
    facts: Facts | None = None  # the per-conversation facts (``forensics.analyzers.facts``); default: over ``con``
    _labels: dict[str, Label] | None = field(default=None, repr=False)
    _names: dict[str, str] | None = field(default=None, repr=False)
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)  # what one analyzer computed for another
    # the report's inputs (``declare.INPUTS``), handed to an analyzer that declares them (``Analyzer.inputs``): the
    # sections run before it, and the report's worst-conversation ranking (sections, conversations -> score by id)
    sections: list[Section] = field(default_factory=list, repr=False)
    ranking: Ranking | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.facts is None:
            self.facts = Facts(self.con, self.cfg)

    @classmethod
    def open(
        cls,
        con: duckdb.DuckDBPyConnection,
        cfg: Config,
        selection: Selection,
        labels: str | None = None,
        questions: str | None = None,
        facts: Facts | None = None,
    ) -> Context:
        set_variables(con, cfg)
        return cls(con, cfg, selection, selection.materialize(con), labels, questions, facts)

    def fact(self, name: str) -> pl.DataFrame:
        """The rows of a per-conversation fact (``forensics.analyzers.facts``), in its order."""
        assert self.facts is not None  # set in __post_init__
        return self.facts.get(name)

    @property
    def conversation_labels(self) -> dict[str, Label]:
        """conversation_id -> the label readers see (``forensics.warehouse.labels``), over the whole warehouse."""
        if self._labels is None:
            self._labels = conversation_labels(self.con)
        return self._labels

    @property
    def names(self) -> dict[str, str]:
        """conversation_id -> label text: what tables and charts show in place of a native id."""
        if self._names is None:
            self._names = {cid: lab.text for cid, lab in self.conversation_labels.items()}
        return self._names

    def query(self, name: str, selected_only: bool = True) -> pl.DataFrame:
        """Run a named query; restricted to the selection when it has a conversation_id column."""
        from forensics.analyzers import named_query

        sql = named_query(name).sql
        if selected_only:
            sql = f"SELECT * FROM ({sql}) q WHERE q.conversation_id IN (SELECT conversation_id FROM {SELECTED})"
        return frame(self.con, sql)

    def df(self, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
        return frame(self.con, sql, params)


def set_variables(con: duckdb.DuckDBPyConnection, cfg: Config) -> None:
    """The config as SQL variables (``getvariable('drift_echo_rate_low')``), for the named queries and facts."""
    for path, value in cfg.values.items():
        if "." not in path:  # [prices]: a table of tables, read in Python only
            continue
        name = path.replace(".", "_", 1)
        if isinstance(value, list):  # typed, so an empty list stays an empty list of strings
            con.execute(f"SET VARIABLE {name} = ?::VARCHAR[]", [value])
        elif isinstance(value, (bool, int, float, str)):
            con.execute(f"SET VARIABLE {name} = ?", [value])
