"""`forensics tune`: a recommended value per tunable the data can speak to, each with its evidence.

A tuner is a function ``(TuneContext) -> list[Recommendation]`` (the kit: ``forensics.analyzers.tuner``) in its
analyzer's package, which declares it with the keys it fits (``Analyzer.tuners``); this layer runs the declared ones
and names no analyzer. A tuner computes by sweeping the warehouse through its analyzer's own functions (never a second
copy of a metric). Nothing is written
unless the user asks (`--write`, see tuning.write).

A key is fitted only on the logs of a harness that has it (``config.formats_of``): the seed harness's constants
on its own SQLite, JSONL and decision-memory logs, this tool's detector thresholds on any. A tuner runs with
``sel_conversations`` narrowed to those conversations; with none, each of its keys is left alone with one line
saying why (and what the warehouse holds instead). A recommendation never comes from an agent without the knob.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import duckdb

from forensics import analyzers as registry
from forensics.analyzers import harness
from forensics.analyzers.tuner import Recommendation, TuneContext, TunerFn
from forensics.config import HARNESS_FORMATS, Config
from forensics.kernel.selection import Selection
from forensics.report.digest import Advice, Change
from forensics.warehouse import open_warehouse


@dataclass
class TuneResult:
    recommendations: list[Recommendation] = field(default_factory=list)
    conversations: int = 0
    messages: int = 0

    def values(self, cfg: Config) -> dict[str, Any]:
        """Every config value with the recommendations applied."""
        vals = {path: v for path, v in cfg.values.items() if "." in path}  # every key, no [prices]
        vals.update({r.key: r.recommended for r in self.recommendations})
        return vals


__all__ = ["Recommendation", "TuneContext", "TuneResult", "advise", "declared_tuners", "tune", "tune_connection"]


def declared_tuners(analyzers: list[str] | None = None) -> list[tuple[TunerFn, tuple[str, ...]]]:
    """The declared tuners with the harness keys each fits: those of ``analyzers`` (None: every analyzer's), in
    report order."""
    return [
        (t.run, t.keys) for a in registry.declarations() if analyzers is None or a.name in analyzers for t in a.tuners
    ]


def tune(db: str | os.PathLike[str], cfg: Config, **options: Any) -> TuneResult:
    """Run every tuner over the warehouse at ``db`` (opened writable: analyzers refresh derived tables)."""
    with open_warehouse(db) as wh:
        return tune_connection(wh.con, cfg, **options)


def tune_connection(
    con: duckdb.DuckDBPyConnection, cfg: Config, analyzers: list[str] | None = None, **options: Any
) -> TuneResult:
    """The tuners over the whole warehouse on an open, writable ``con``; with ``analyzers``, only the tuners
    of those analyzers."""
    from forensics.analyzers.base import Context

    ctx = TuneContext(con, cfg, Context.open(con, cfg, Selection()), **options)
    result = TuneResult()
    result.conversations, result.messages = con.execute(
        "SELECT count(DISTINCT conversation_id), count(*) FROM messages WHERE on_main_path"
    ).fetchall()[0]
    formats = harness.by_format(con, "conversations")
    own = {f: n for f, n in formats.items() if f in HARNESS_FORMATS}
    try:
        for fn, keys in declared_tuners(analyzers):
            result.recommendations.extend(_scoped(fn, keys, ctx, formats, own))
    finally:
        Selection().materialize(con)
    return result


def _scoped(
    fn: TunerFn, keys: tuple[str, ...], ctx: TuneContext, formats: dict[str, int], own: dict[str, int]
) -> list[Recommendation]:
    """Run ``fn`` over the conversations its keys govern: a harness tuner over the harness's own logs (every key left
    alone when there are none), a detector's over all."""
    if not keys:
        Selection().materialize(ctx.con)
        return fn(ctx)
    if not own:
        return [
            Recommendation(
                k,
                ctx.cfg[k],
                ctx.cfg[k],
                f"no conversation from the harness this setting belongs to ({harness.elsewhere(formats)})",
            )
            for k in keys
        ]
    Selection(formats=HARNESS_FORMATS).materialize(ctx.con)
    recs = fn(ctx)
    others = {f: n for f, n in formats.items() if f not in own}
    if others:  # say what the fit left out
        where = (
            f"; fitted on the harness's own {sum(own.values())} conversations ({harness.elsewhere(own, ())}), "
            f"not the {sum(others.values())} of other agents ({harness.elsewhere(others)})"
        )
        recs = [
            r
            if r.recommended == r.current and r.evidence.startswith("no ")
            else Recommendation(r.key, r.current, r.recommended, r.evidence + where, r.effect)
            for r in recs
        ]
    return recs


def advise(con: duckdb.DuckDBPyConnection, cfg: Config, analyzers: list[str], questions: str | None) -> Advice:
    """The report's *What to change* (a ``forensics.report.digest.Recommender``): the tuners of the analyzers
    the report ran, on its connection, as the digest's data (the tables those analyzers wrote are fresh)."""
    result = tune_connection(con, cfg, analyzers, fresh=tuple(analyzers), questions=questions)
    return Advice(
        [Change(r.key, r.current, r.recommended, r.evidence, r.effect) for r in result.recommendations if r.changed],
        len(result.recommendations),
        f"{result.conversations} conversations, {result.messages} messages",
        [
            Change(r.key, r.current, r.recommended, r.evidence, r.effect)
            for r in result.recommendations
            if not r.changed
        ],
    )
