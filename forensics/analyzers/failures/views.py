"""What the layers above read of the failures analyzer's tables, by name (``Analyzer.views``, ``analyzers.view``):
the explorer's home page (``what_went_wrong``) and `forensics show` (``decisive_step``). A table of another
build's shape (another version's columns, a hand-made one) is not read: the caller says there is nothing."""

from __future__ import annotations

from typing import Any

import duckdb

from forensics.analyzers.failures.decisive import RULES
from forensics.warehouse import frame
from forensics.warehouse.derived import columns

# said in place of the tables that need graded runs where none is graded: the report's ``Table.empty``, the explorer's
# home page under the clusters (``ungraded``)
NO_GRADES = (
    "No graded runs: which runs failed, and what they did differently, needs their outcomes (`forensics outcomes "
    "FILE`, or a benchmark log that records its grade; see docs/outcomes.md)."
)
CLUSTER_COLUMNS = ("cluster", "runs", "failed", "passed", "lift", "lift_low", "lift_high", "harness_end")
RUN_COLUMNS = {"conversation_id", "cluster", "decisive_position", "decisive_agent"}


def what_went_wrong(
    con: duckdb.DuckDBPyConnection, clusters: int = 15, runs: int = 15, chars: int = 800
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The last report's clusters (``failure_clusters``, largest first, ``clusters`` of them) and its failed runs
    with a decisive step (``run_failures``: most common failed signature first, ``runs`` of them), each with the
    step's text masked (``forensics_masked``) and cut to ``chars``."""
    held = {c for c, _ in columns(con, "failure_clusters")}
    found = (
        frame(
            con,
            f"SELECT {', '.join(CLUSTER_COLUMNS)} FROM failure_clusters ORDER BY runs DESC, "
            f"failed DESC, cluster LIMIT {int(clusters)}",
        ).to_dicts()
        if held >= set(CLUSTER_COLUMNS)
        else []
    )
    held = {c for c, _ in columns(con, "run_failures")}
    if not held >= RUN_COLUMNS:
        return found, []
    rule = "f.decisive_rule" if "decisive_rule" in held else "NULL"
    worst = frame(
        con,
        f"""
        WITH failed AS (
            SELECT f.*, {rule} AS rule FROM run_failures f JOIN conversation_outcomes o USING (conversation_id)
            WHERE o.success = false AND f.decisive_position IS NOT NULL
        )
        SELECT f.conversation_id, f.cluster, f.decisive_position AS position, f.decisive_agent AS agent, f.rule,
               left(forensics_masked(m.content), {int(chars)}) AS text
        FROM failed f LEFT JOIN messages m ON m.conversation_id = f.conversation_id
             AND m.position = f.decisive_position AND m.on_main_path
        ORDER BY count(*) OVER (PARTITION BY f.cluster) DESC, f.conversation_id LIMIT {int(runs)}""",
    ).to_dicts()
    return found, worst


def ungraded(con: duckdb.DuckDBPyConnection) -> str:
    """The report's sentence in place of its failed runs (``NO_GRADES``) when no run of the warehouse has a grade
    (``conversation_outcomes.success``; so none of the report's selection has), else "": the explorer says it under
    clusters whose failed and passed runs are all 0."""
    if "success" not in {c for c, _ in columns(con, "conversation_outcomes")}:
        return NO_GRADES
    graded = con.execute("SELECT count(*) FROM conversation_outcomes WHERE success IS NOT NULL").fetchall()[0][0]
    return "" if graded else NO_GRADES


def decisive_step(con: duckdb.DuckDBPyConnection, cid: str) -> tuple[int, str | None, str | None, str | None] | None:
    """(position, agent, rule, the rule in words) of a run's decisive step as the last report kept it
    (``run_failures``), or None (no report wrote the table, the run did not fail, or no step was found)."""
    held = {c for c, _ in columns(con, "run_failures")}
    if not held >= RUN_COLUMNS:
        return None
    rule = "decisive_rule" if "decisive_rule" in held else "NULL"
    row = con.execute(
        f"SELECT decisive_position, decisive_agent, {rule} FROM run_failures WHERE conversation_id = ? "
        "AND decisive_position IS NOT NULL",
        [cid],
    ).fetchall()
    if not row:
        return None
    at, agent, why = row[0]
    return int(at), agent, why, RULES.get(why) if why else None
