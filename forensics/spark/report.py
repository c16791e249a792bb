"""`forensics report --engine spark`: the per-conversation analyzers over the lake, the report a warehouse gives.

The workers compute the analyzers' facts (``forensics.spark.facts``); the driver holds what a report is made of
anyway (one row per conversation, per request with tool calls, per judged reply, without the text) in an
in-memory DuckDB beside the lake's conversations and sources, and runs the analyzers' own section code there:
the same percentiles, means and rankings as a local report. The messages the shown findings cite are read from
the lake by Spark, and nothing is written back to the lake.
"""

from __future__ import annotations

import duckdb

from forensics import analyzers
from forensics.analyzers.base import Context
from forensics.analyzers.facts import Facts
from forensics.config import Config
from forensics.kernel.errors import ForensicsError
from forensics.kernel.redact import install_sql
from forensics.kernel.selection import SELECTED, Selection
from forensics.report import evidence
from forensics.report.build import Report, analyze, cited
from forensics.spark.facts import compute
from forensics.spark.lake import Lake
from forensics.spark.session import session

SMALL = ("conversations", "sources", "topic_switches")  # collected to the driver whole
JUDGED = "sentinel_judged"  # replayed per model in Spark


def names(only: str | list[str] | None) -> list[str]:
    """The analyzers ``only`` names (default: those declared to run on Spark, ``engines``), in report order."""
    spark = analyzers.on("spark")
    picked = analyzers.parse_only(",".join(only) if isinstance(only, list) else only) if only else spark
    other = [n for n in picked if n not in spark]
    if other:
        raise ForensicsError(
            f"--engine spark runs {', '.join(spark)}; {', '.join(other)} run on a warehouse "
            "only (forensics report --db)"
        )
    return [n for n in analyzers.names() if n in picked]


def build_spark_report(
    lake_root: str,
    cfg: Config,
    selection: Selection | None = None,
    only: str | list[str] | None = None,
    master: str | None = None,
) -> Report:
    """The report of the analyzers ``only`` (default: every one declared for Spark) over the lake at ``lake_root``."""
    selection = selection or Selection()
    chosen = names(only)
    declared = [analyzers.load(n) for n in chosen]
    lake = Lake.open(session(master), lake_root)
    meta = duckdb.connect()
    install_sql(meta)
    for t in SMALL:
        if lake.has(t):
            meta.register(f"_{t}", lake.arrow(t))
            meta.execute(f"CREATE TABLE {t} AS SELECT * FROM _{t}")
            meta.unregister(f"_{t}")
    selection.materialize(meta)
    ids = None if selection == Selection() else [r[0] for r in meta.execute(f"SELECT * FROM {SELECTED}").fetchall()]
    wanted = list(dict.fromkeys(f for a in declared for f in a.reads))
    total = meta.execute("SELECT count(*) FROM conversations").fetchall()[0][0]
    given = compute(lake, cfg, wanted, total, ids, judged=JUDGED if JUDGED in wanted else None)
    ctx = Context.open(meta, cfg, selection, facts=Facts(meta, cfg, given))
    running = lake.spark.sparkContext.master  # a session already running keeps its master
    report = analyze(
        ctx,
        chosen,
        {"lake": lake.root, "engine": "spark", "spark_master": running},
        runs=lambda cids: copy_runs(lake, meta, cids),
    )
    report.evidence = fetch_evidence(lake, meta, cited(report))
    report.digest.skipped = (
        "not computed on Spark: `forensics tune` fits the thresholds on a warehouse (forensics tune --db)"
    )
    return report


def copy_runs(lake: Lake, meta: duckdb.DuckDBPyConnection, cids: list[str]) -> None:
    """The runs ``cids``' messages, tool calls and events, read from the lake by Spark into ``meta`` (the worst list
    reads how these runs ended, as a local report does from the warehouse). ``export`` writes every warehouse table, and
    a lake without one of them cannot be opened, so each is there."""
    from pyspark.sql import functions as F

    wanted = F.broadcast(lake.spark.createDataFrame([(c,) for c in cids], "conversation_id string"))
    for t in ("messages", "tool_calls", "events"):
        rows = lake.table(t).join(wanted, ["conversation_id"], "left_semi").toArrow()
        meta.register(f"_{t}", rows)
        meta.execute(f"CREATE OR REPLACE TABLE {t} AS SELECT * FROM _{t}")
        meta.unregister(f"_{t}")


def fetch_evidence(
    lake: Lake, meta: duckdb.DuckDBPyConnection, cited: dict[str, set[int]]
) -> dict[str, dict[int, evidence.Message]]:
    """The cited messages and their context, read from the lake by Spark, shaped as a local report's."""
    pairs = [(cid, p) for cid, ps in cited.items() for p in evidence.windows(ps)]
    if not pairs:
        return {}
    from pyspark.sql import functions as F

    wanted = F.broadcast(lake.spark.createDataFrame(pairs, "conversation_id string, position int"))
    for t in ("messages", "tool_calls"):
        rows = lake.table(t).join(wanted, ["conversation_id", "position"], "left_semi").toArrow()
        meta.register(f"_{t}", rows)
        meta.execute(f"CREATE OR REPLACE TABLE {t} AS SELECT * FROM _{t}")
        meta.unregister(f"_{t}")
    return evidence.fetch(meta, cited)
