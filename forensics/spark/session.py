"""One SparkSession per process: local mode by default, nothing downloaded, workers on this interpreter.

Local masters (``local``, ``local[2]``, ``local[*]``) bind to 127.0.0.1 and run the Python workers on
``sys.executable`` (the venv that has forensics, DuckDB and pyarrow; the system Python has none of them). On a
cluster master the executors' Python is the cluster's business (``spark.pyspark.python``, a packed venv:
docs/scale.md). No ``spark.jars.packages``: reading an S3 or GCS lake needs the connector jars on the cluster.
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from typing import TYPE_CHECKING

from forensics.kernel.errors import ForensicsError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
LOCAL_SHUFFLE_PARTITIONS = 4  # Spark's 200 are for clusters: on one machine they are 200 tiny tasks


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def session(master: str | None = None) -> SparkSession:
    """The process's SparkSession (created on first use with ``master``; a later call reuses it). No master:
    the one spark-submit was given when it launched us, else ``DEFAULT_MASTER``."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise ForensicsError("--engine spark needs pyspark: pip install 'forensics[spark]'") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit started this process and holds its --master
    master = master or (None if submitted else DEFAULT_MASTER)
    builder = SparkSession.builder if master is None else SparkSession.builder.master(master)
    builder = (
        builder.appName("forensics")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")  # month=2026-06 stays text
        # DuckDB's semantics for the named queries: an index past a list's end is NULL, not an error
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.log.structuredLogging.enabled", "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_log_config()}")
    )
    if master is not None and is_local(master):
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # never bind to the machine's other interfaces
        builder = (
            builder.config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", str(LOCAL_SHUFFLE_PARTITIONS))
        )
    try:
        spark = builder.getOrCreate()
    except Exception as e:  # pyspark's JAVA_GATEWAY_EXITED when there is no Java
        if "JAVA_GATEWAY_EXITED" in str(e) or "JAVA_HOME" in str(e):
            raise ForensicsError(
                "--engine spark needs a Java runtime (17 or later): apt-get install "
                "openjdk-17-jre-headless, or set JAVA_HOME"
            ) from None
        raise
    spark.sparkContext.setLogLevel("OFF")  # a failure reaches the user as one line (forensics.cli), not a log
    from pyspark.logger import PySparkLogger

    PySparkLogger.getLogger("SQLQueryContextLogger").disabled = True  # pyspark's JSON dump of a failed query
    return spark


def _log_config() -> str:
    """A log4j2 configuration that keeps Spark's INFO and WARN lines off the user's terminal."""
    return str(resources.files("forensics.spark") / "log4j2.properties")
