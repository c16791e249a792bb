"""The Parquet lake of `forensics export` as Spark DataFrames, with the warehouse's columns in its order.

``views.sql`` at the lake's root names every exported table and its columns (the partition columns ``source``
and ``month`` live in the paths and are left out, as DuckDB's views leave them out). The root may be a local
folder or an object-store URL Spark reads (``s3a://bucket/lake``); a ``*`` in it reads every host's export
below it (``s3a://bucket/lake/*``), with ``views.sql`` taken from the first one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from forensics.kernel.errors import ForensicsError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

_VIEW = re.compile(r"CREATE OR REPLACE VIEW (\w+) AS SELECT (.*?) FROM read_parquet\(")


def _unquoted(name: str) -> str:
    """A column of views.sql as Spark names it: the export quotes each (``"check"``), older exports did not."""
    return name[1:-1].replace('""', '"') if len(name) > 1 and name[0] == name[-1] == '"' else name


@dataclass
class Lake:
    spark: SparkSession
    root: str
    columns: dict[str, list[str]] = field(default_factory=dict)  # table -> its columns, from views.sql
    _read: dict[str, DataFrame] = field(default_factory=dict, repr=False)  # each table's schema merged once

    @classmethod
    def open(cls, spark: SparkSession, root: str) -> Lake:
        text = _views_sql(spark, root.rstrip("/"))
        columns = {m.group(1): [_unquoted(c) for c in m.group(2).split(", ")] for m in _VIEW.finditer(text)}
        if "messages" not in columns:
            raise ForensicsError(f"{root}/views.sql names no messages table; is this a `forensics export` lake?")
        return cls(spark, root.rstrip("/"), columns)

    def has(self, table: str) -> bool:
        return table in self.columns

    def table(self, name: str) -> DataFrame:
        if not self.has(name):
            raise ForensicsError(
                f"the lake at {self.root} has no {name} table; export a warehouse that has it "
                "(derived tables appear after `forensics report`)"
            )
        if name not in self._read:  # mergeSchema: exports of older toolkits may lack a newer column
            self._read[name] = (
                self.spark.read.option("mergeSchema", "true").parquet(f"{self.root}/{name}").select(*self.columns[name])
            )
        return self._read[name]

    def arrow(self, name: str) -> pa.Table:
        """A small table (conversations, sources) collected whole."""
        return self.table(name).toArrow()


def _views_sql(spark: SparkSession, root: str) -> str:
    """views.sql: read here from a local folder, else through Spark's file system layer (an object store)."""
    if (Path(root) / "views.sql").is_file():
        return (Path(root) / "views.sql").read_text(encoding="utf-8")
    try:
        rows = spark.read.text(f"{root}/views.sql", wholetext=True).collect()
    except Exception as e:  # Spark's AnalysisException: PATH_NOT_FOUND
        if "PATH_NOT_FOUND" in str(e) or "does not exist" in str(e):
            raise ForensicsError(
                f"{root}: no views.sql; --lake takes the folder `forensics export --format parquet --out DIR` wrote"
            ) from None
        raise
    return rows[0][0] if rows else ""
