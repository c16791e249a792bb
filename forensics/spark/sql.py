"""The named queries (and read-only SQL) on Spark: DuckDB's dialect translated by sqlglot, over the lake's tables.

``queries/*.sql`` stay the one source. sqlglot turns DuckDB's ``count(*) FILTER``, ``list``, ``arg_max``,
``regexp_matches`` ... into Spark's spellings; ``getvariable('x')`` (a tunable) becomes NULL, so the query's own
default applies (``coalesce(getvariable('x'), default)``), as in a `forensics query` over a warehouse. Each table
the query names is a temporary view over the lake. A query Spark cannot run is named in ``UNSUPPORTED`` with the
reason, and asking for it fails with that reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from forensics.analyzers.facts import arrow_frame
from forensics.kernel.errors import ForensicsError

if TYPE_CHECKING:
    from forensics.spark.lake import Lake

UNSUPPORTED = {  # named query -> why Spark cannot run it (and where its figures come from there instead)
    "compression_replay": "it re-implements extract_key_info with DuckDB list slices (1-based, inclusive), lambdas "
    "over (element, index) and MATERIALIZED CTEs, which have no faithful Spark spelling; "
    "`forensics report --engine spark` replays compression with the same SQL on DuckDB inside "
    "the Spark workers",
    "skill_loads": "it reads skill names with DuckDB's regexp_extract into a struct of named groups and tests "
    "json_valid, which sqlglot does not translate to Spark yet; run it on a warehouse (--db)",
    "tool_turns": "it tells a command given as an argv list from one given as a string with DuckDB's json_type, "
    "which Spark has no spelling of (get_json_object returns a string's value and an array's JSON "
    "alike); `forensics report --engine spark` computes the same turns with this SQL on DuckDB inside "
    "the Spark workers",
    "skill_messages": "it reads skill names with DuckDB's regexp_extract into a struct of named groups, which "
    "sqlglot does not translate to Spark yet; run it on a warehouse (--db)",
    "memory_findings": "not yet checked on Spark against the warehouse (the suite's lake has no decision memory); "
    "run it on a warehouse (--db)",
}


def spark_sql(sql: str) -> tuple[str, set[str]]:
    """``sql`` (DuckDB's dialect) in Spark's, and the tables it reads."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError as e:
        raise ForensicsError(f"SQL does not parse: {str(e).splitlines()[0]}") from None
    if not isinstance(tree, exp.Query):
        raise ForensicsError(
            f"refused: {tree.key.upper()} statements would change the lake; `forensics query` only reads"
        )

    def variable_to_null(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.lower() == "getvariable":
            return exp.Null()
        return node

    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    tables = {t.name for t in tree.find_all(exp.Table)} - ctes
    return tree.transform(variable_to_null).sql(dialect="spark"), tables


def run(lake: Lake, sql: str, name: str | None = None) -> pl.DataFrame:
    """Rows of ``sql`` over the lake (``name``: the named query it came from)."""
    if name in UNSUPPORTED:
        raise ForensicsError(f"the named query {name} does not run on Spark: {UNSUPPORTED[name]}")
    text, tables = spark_sql(sql)
    for t in sorted(tables):
        lake.table(t).createOrReplaceTempView(t)
    try:
        return arrow_frame(lake.spark.sql(text).toArrow())
    except Exception as e:  # Spark's AnalysisException & co.: the first line says what went wrong
        if type(e).__module__.startswith("pyspark"):
            raise ForensicsError(f"query failed on Spark: {str(e).splitlines()[0]}") from None
        raise
