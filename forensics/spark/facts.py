"""The per-conversation facts on Spark: the analyzers' own fact functions, run on the workers over an in-memory
DuckDB holding whole conversations' rows of the lake.

- ``bundle``: the tables a fact reads (``forensics.analyzers.facts.TABLES``), unioned into one DataFrame with
  a tag and one struct column per table, so one ``groupBy(...).applyInArrow`` hands a worker every row of each
  of its conversations (the one shuffle of the message text). The group is a hash of the conversation id, so a
  group is a batch of about ``GROUP_CONVERSATIONS`` whole conversations: a fact's rows are each a function of
  one conversation, and a batch pays DuckDB's per-query cost once, not once per conversation;
- ``conversation_facts``: the worker side: it splits the group back into tables, registers them in DuckDB
  and returns one row per group, each fact a list of its rows;
- ``replayed``: the sentinel's corpus step. A model's judged replies are sorted in time order by Spark
  (repartitioned by compliance key, sorted within the partition) and the state machine runs over each
  partition's stream of batches (``mapInArrow``), never holding a model's history in one batch.

The output types of each fact are found by running it on the driver over empty tables of the lake's schemas.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from forensics.analyzers.base import set_variables
from forensics.analyzers.facts import TABLES, arrow_frame, declared, ordered
from forensics.analyzers.sentinel.settings import SentinelSettings
from forensics.analyzers.sentinel.state import ComplianceTracker
from forensics.analyzers.sentinel.tables import replay
from forensics.config import Config
from forensics.kernel.redact import install_sql
from forensics.kernel.selection import SELECTED

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from forensics.spark.lake import Lake

KEY, TAG = "_group", "_table"
WORKER_MEMORY = "256MB"  # DuckDB's share in each Python worker: it holds one group at a time
WHOLE = ("sources",)  # small tables a fact reads whole (the compaction audit reads each source's format)
GROUP_CONVERSATIONS = 64  # conversations per group, on average (``spark.forensics.groupConversations``)


def bundle(lake: Lake, groups: int) -> DataFrame:
    """Every row of the fact tables, tagged with its table and its conversation's group (of ``groups``): (KEY,
    TAG, one struct column per table)."""
    from pyspark.sql import functions as F

    parts = []
    for name in (t for t in TABLES if lake.has(t)):
        df = lake.table(name).filter(F.col("conversation_id").isNotNull())
        parts.append(
            df.select(
                F.pmod(F.xxhash64("conversation_id"), F.lit(groups)).alias(KEY),
                F.lit(name).alias(TAG),
                F.struct(*df.columns).alias(name),
            )
        )
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p, allowMissingColumns=True)
    return out


def spark_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type Spark's Arrow exchange takes for ``t`` (no large or view layouts)."""
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_list(t):
        return pa.list_(spark_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, spark_type(f.type)) for f in t])
    return t


def spark_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, spark_type(f.type)) for f in schema])


def fact_schemas(
    table_schemas: dict[str, pa.Schema], cfg: Config, names: list[str], whole: dict[str, pa.Table]
) -> dict[str, pa.Schema]:
    """Each fact's output schema: the fact run on the driver over empty tables of the lake's schemas."""
    con = _connect(cfg)
    for t, schema in table_schemas.items():
        con.register(t, schema.empty_table())
    for t, table in whole.items():
        con.register(t, table)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {SELECTED} (conversation_id VARCHAR)")
    return {n: spark_schema(_arrow(declared(n).fn(con, cfg)).schema) for n in names}


def _arrow(rows: pl.DataFrame) -> pa.Table:
    """A fact's rows (a polars frame) as a pyarrow table: the Spark engine's workers trade Arrow (pyspark brings
    pyarrow: the ``spark`` extra)."""
    return rows.to_arrow()


def output_schema(schemas: dict[str, pa.Schema]) -> pa.Schema:
    return pa.schema(
        [pa.field(KEY, pa.int64()), *(pa.field(n, pa.list_(pa.struct(list(s)))) for n, s in schemas.items())]
    )


def conversation_facts(
    cfg: Config,
    names: list[str],
    table_schemas: dict[str, pa.Schema],
    schemas: dict[str, pa.Schema],
    selected: Any,
    whole: dict[str, pa.Table],
) -> Callable[[pa.Table], pa.Table]:
    """The function ``applyInArrow`` calls with one group's bundled rows (whole conversations). ``selected``: a
    broadcast set of the selected conversation ids, or None for every conversation; the others count only for the
    whole-history facts (the sentinel's), as ``sel_conversations`` does on a warehouse. ``whole``: small tables
    without a conversation (``WHOLE``), registered whole in every group."""
    token, out_schema = uuid.uuid4().hex, output_schema(schemas)

    def run(group: pa.Table) -> pa.Table:
        con = _worker(token, cfg)
        for t, schema in table_schemas.items():
            rows = group.filter(pc.equal(group[TAG], t))[t].combine_chunks()
            con.register(t, pa.Table.from_struct_array(rows).cast(schema) if len(rows) else schema.empty_table())
        for t, table in whole.items():
            con.register(t, table)
        ids = [r[0] for r in con.execute("SELECT conversation_id FROM conversations").fetchall()]
        chosen = [c for c in ids if selected is None or c in selected.value]
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {SELECTED} AS SELECT unnest(?::VARCHAR[]) AS conversation_id", [chosen]
        )
        cols: dict[str, pa.Array] = {KEY: pa.array([group[KEY][0].as_py()], pa.int64())}
        for n in names:
            rows = _arrow(declared(n).fn(con, cfg)).cast(schemas[n])
            cols[n] = pa.ListArray.from_arrays(
                pa.array([0, rows.num_rows], pa.int32()), rows.to_struct_array().combine_chunks()
            )
        for t in [*table_schemas, *whole]:
            con.unregister(t)
        return pa.table(cols, schema=out_schema)

    return run


_WORKER: dict[str, duckdb.DuckDBPyConnection] = {}  # one DuckDB per Python worker process and report


def _worker(token: str, cfg: Config) -> duckdb.DuckDBPyConnection:
    if token not in _WORKER:
        for old in _WORKER.values():
            old.close()
        _WORKER.clear()
        _WORKER[token] = _connect(cfg)
    return _WORKER[token]


def _connect(cfg: Config) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET threads = 1")  # Spark runs one task per core already
    con.execute(f"SET memory_limit = '{WORKER_MEMORY}'")
    install_sql(con)  # forensics_scrubbed & co., which facts call
    set_variables(con, cfg)
    return con


def compute(
    lake: Lake,
    cfg: Config,
    names: list[str],
    conversations: int,
    selected_ids: list[str] | None,
    judged: str | None = None,
) -> dict[str, pl.DataFrame]:
    """Every fact in ``names`` over the lake (of ``conversations``), collected to the driver in its order.
    ``judged``: the fact whose rows the sentinel replays in Spark; it comes back replayed (``replayed``), under
    ``REPLAYED``."""
    from pyspark import StorageLevel
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

    from forensics.analyzers.sentinel.tables import REPLAYED

    spark = lake.spark
    per_group = int(
        spark.conf.get("spark.forensics.groupConversations", str(GROUP_CONVERSATIONS)) or GROUP_CONVERSATIONS
    )
    rows = bundle(lake, max(1, -(-conversations // per_group)))
    table_schemas = {
        t: spark_schema(to_arrow_schema(cast("StructType", rows.schema[t].dataType))) for t in TABLES if lake.has(t)
    }
    whole = {t: lake.arrow(t) for t in WHOLE if lake.has(t)}
    schemas = fact_schemas(table_schemas, cfg, names, whole)
    selected = None if selected_ids is None else spark.sparkContext.broadcast(frozenset(selected_ids))
    per = rows.groupBy(KEY).applyInArrow(
        conversation_facts(cfg, names, table_schemas, schemas, selected, whole),
        from_arrow_schema(output_schema(schemas)),
    )
    per = per.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        collected = per.drop(judged).toArrow() if judged else per.toArrow()
        out = {n: _flatten(collected, n, schemas[n]) for n in names if n != judged}
        if judged:
            out[REPLAYED] = replayed(per, judged, schemas[judged], int(SentinelSettings.of(cfg).compliance_window))
    finally:
        per.unpersist()
        if selected is not None:
            selected.unpersist()
    return out


def _flatten(collected: pa.Table, name: str, schema: pa.Schema) -> pl.DataFrame:
    structs = (
        pc.list_flatten(collected[name].combine_chunks())
        if collected.num_rows
        else pa.array([], pa.struct(list(schema)))
    )
    return ordered(name, arrow_frame(pa.Table.from_struct_array(structs).cast(schema)))


def replayed(per: DataFrame, judged: str, schema: pa.Schema, window: int) -> pl.DataFrame:
    """The sentinel's replay over every judged reply: sorted per model in Spark, the state machine per partition."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    from forensics.analyzers.sentinel.tables import REPLY_SCHEMA, STATE_SCHEMA

    out_schema = spark_schema(pl.DataFrame(schema={**REPLY_SCHEMA, **STATE_SCHEMA}).to_arrow().schema)
    replies = per.select(F.explode(judged).alias("r")).select("r.*")
    asking = replies.filter(F.col("asks")).select("scope").distinct()  # ``sentinel.tables.asked``, in Spark
    replies = replies.join(asking, "scope", "left_semi")

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        tracker = ComplianceTracker(window)
        for out in replay((arrow_frame(b) for b in batches), tracker):
            yield from out.to_arrow().cast(out_schema).to_batches()

    order = [F.col(c).asc_nulls_last() for c in declared(judged).order]
    result = (
        replies.repartition("compliance_key")
        .sortWithinPartitions(*order)
        .mapInArrow(run, from_arrow_schema(out_schema))
        .toArrow()
    )
    return arrow_frame(result.cast(out_schema))
